//! What the commands do, callable from the command line and the window alike: probe and judge a
//! machine (`check`), judge another machine's text (`diagnose`), measure one (`bench`), collect
//! the reports of many (`fleet`) and compare them (`compare`). The exported document (`report`) is
//! `render::document`. Nothing here prints or knows the command line; `main.rs`, `bench.rs` and
//! `fleet.rs` wrap these in commands, the window in its tasks.

pub mod bench;
pub mod certify;
pub mod fleet;

use anyhow::Result;
use gpu_doctor_kb::Kb;
use gpu_doctor_model::{Report, Snapshot};
use gpu_doctor_probes::host::Host;
use gpu_doctor_probes::probe::{self, Options};

use crate::cli::args::ProbeArgs;
use crate::exit::InputError;

/// The knowledge base, or why it did not load (a bug in shipped data).
pub fn kb() -> Result<&'static Kb> {
    Kb::get().map_err(|e| anyhow::anyhow!("the knowledge base did not load: {e}"))
}

/// Probes the machine; a `--python` that is not there, or is no Python, is an `InputError`.
pub fn snapshot(host: &dyn Host, opts: &Options) -> Result<Snapshot> {
    let snap = probe::collect(host, opts);
    if let Some(unused) = snap.unused_pythons.first() {
        return Err(InputError(format!("--python: {}", unused.reason)).into());
    }
    Ok(snap)
}

/// A snapshot with the findings of every rule, each planned finding with its plan's id and prose.
pub fn judged(snap: Snapshot) -> Result<Report> {
    let kb = kb()?;
    let findings = gpu_doctor_judge::diagnose::diagnose(&snap, kb);
    let mut report = Report::new(snap, findings);
    report.kb_date = kb.date().map(str::to_owned);
    gpu_doctor_installers::attach(&mut report, kb);
    Ok(report)
}

/// `check`: the machine behind `host`, probed and judged.
pub fn check(host: &dyn Host, opts: &Options) -> Result<Report> {
    judged(snapshot(host, opts)?)
}

/// `diagnose`: another machine read from pasted text (or a saved report) and judged; text in
/// which nothing is recognised is an `InputError`.
pub fn diagnose(text: &str) -> Result<Report> {
    let snap = gpu_doctor_probes::parse::paste::read_pasted(text, kb()?).map_err(|e| InputError(e.to_string()))?;
    judged(snap)
}

/// `compare`: the nodes in the given folders and files, compared. A path that is not there, a
/// folder that cannot be listed, a broken `fleet.json`, or no readable report at all is an
/// `InputError`; a file that is not a report is a node with the reason.
pub fn compare(paths: &[std::path::PathBuf]) -> Result<gpu_doctor_model::fleet::Comparison> {
    use gpu_doctor_judge::fleet::compare;
    let nodes = compare::read_paths(paths, &read_report_file).map_err(InputError)?;
    if !nodes.iter().any(|n| n.report.is_some()) {
        let why = nodes.first().map_or_else(|| "no *.json file in it".to_owned(), |n| n.outcome.describe());
        return Err(InputError(format!("no report could be read ({} node(s); first: {why})", nodes.len())).into());
    }
    Ok(compare::compare(nodes))
}

/// The reader of `compare`'s files (the command's and the window's): the probes' capped reader
/// of regular files, following a symlink only at a path the user named.
pub(crate) fn read_report_file(
    path: &std::path::Path,
    named: gpu_doctor_judge::fleet::compare::Named,
) -> Result<Vec<u8>, String> {
    use gpu_doctor_probes::host::{Links, MAX_FILE_BYTES, read_regular_file};
    let links = match named {
        gpu_doctor_judge::fleet::compare::Named::ByUser => Links::Follow,
        gpu_doctor_judge::fleet::compare::Named::ByFolder => Links::Refuse,
    };
    read_regular_file(path, MAX_FILE_BYTES, links).map_err(|e| e.to_string())
}

/// What to probe. On this machine: the command line's options, in the current folder. On a
/// replay (`recorded`): the options the fixture was recorded with, its working folder rather than
/// this one, plus what this command line adds.
pub(crate) fn options(args: &ProbeArgs, recorded: Option<&Options>) -> Options {
    match recorded {
        None => Options {
            deep: args.deep,
            extra_pythons: args.pythons.iter().map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone())).collect(),
            cwd: std::env::current_dir().ok(),
        },
        Some(recorded) => {
            let mut extra_pythons = recorded.extra_pythons.clone();
            extra_pythons.extend(args.pythons.iter().filter(|p| !recorded.extra_pythons.contains(p)).cloned());
            Options { deep: args.deep || recorded.deep, extra_pythons, cwd: recorded.cwd.clone() }
        }
    }
}
