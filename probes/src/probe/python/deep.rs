//! The deep tier: run `assets/python/probe.py` in each interpreter, in parallel, and parse its JSON.
//! The same script, with `--smoke`, is the installers' smoke test (`gpu_doctor_installers::verify`):
//! one reader of what the frameworks say, one schema ([`DeepFacts`]).

use std::time::Duration;

use std::path::{Path, PathBuf};

use super::PythonEnv;
use crate::host::paths::real_path;
use crate::host::{Cmd, Host, home_dir};
use crate::probe::Options;
use gpu_doctor_model::{DeepFacts, OsFamily};
use gpu_doctor_model::{Probed, Trace};

/// The framework probe script, run as `python -I -` with this text on standard input (`python -I -
/// --smoke MODULE...` for the smoke test).
pub const PROBE_SCRIPT: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/python/probe.py"));

/// How long one interpreter may take to import its frameworks.
const DEEP_TIMEOUT: Duration = Duration::from_secs(60);

/// Parses `probe.py`'s output: the whole of stdout, or else its last line that is a JSON object.
pub(super) fn parse_output(stdout: &str) -> Result<DeepFacts, String> {
    let whole = serde_json::from_str::<DeepFacts>(stdout.trim());
    whole.or_else(|e| {
        stdout
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| l.starts_with('{'))
            .and_then(|l| serde_json::from_str::<DeepFacts>(l).ok())
            .ok_or_else(|| format!("the output is not probe.py's JSON ({e})"))
    })
}

/// The last few lines of a program's standard error, for a reason.
fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    all[all.len().saturating_sub(lines)..].join(" | ")
}

/// Runs the probe in one interpreter.
pub(super) fn run_one(host: &dyn Host, interpreter: &str, trace: &mut Trace) -> Probed<DeepFacts> {
    let cmd = Cmd::new([interpreter, "-I", "-"]).stdin(PROBE_SCRIPT).timeout(DEEP_TIMEOUT);
    let method = format!("{interpreter} -I - < probe.py");
    match host.run(&cmd) {
        Ok(out) => match parse_output(&out.stdout) {
            Ok(facts) => {
                trace.ok(&method, format!("exit status {:?}", out.status));
                Probed::found(facts, "probe.py")
            }
            Err(e) => {
                let stderr = tail(&out.stderr, 5);
                let error = format!("{e}; exit status {:?}; stderr: {stderr}", out.status);
                trace.error(&method, &error);
                Probed::Failed { error }
            }
        },
        Err(e) => {
            trace.error(&method, e.to_string());
            Probed::Failed { error: e.to_string() }
        }
    }
}

/// Runs the probe in one environment's interpreter; an environment without one, or with Python 2,
/// gets the reason instead.
pub(super) fn run_env(host: &dyn Host, env: &PythonEnv, trace: &mut Trace) -> Probed<DeepFacts> {
    let python2 = env.python_version.as_deref().is_some_and(|v| v.starts_with("2."));
    match &env.interpreter {
        _ if python2 => {
            trace.miss("probe.py", "Python 2 cannot run the deep probe");
            Probed::Unsupported { reason: "the deep probe needs Python 3".into() }
        }
        Some(i) => run_one(host, i, trace),
        None => Probed::absent("no interpreter in this environment"),
    }
}

/// The working folder whose environments the deep tier leaves alone: starting one's Python runs
/// code from that folder (its `.pth` files, its packages), which in a checkout made by someone
/// else is theirs. `None` when there is none, or when it is the home folder or above it, where
/// every environment of the user's lies and none came with a checkout.
fn guarded_folder(host: &dyn Host, opts: &Options) -> Option<(PathBuf, PathBuf)> {
    let cwd = opts.cwd.as_ref()?;
    let home = home_dir(host);
    if home.as_ref().is_some_and(|h| h.starts_with(cwd) || real_path(host, h).starts_with(real_path(host, cwd))) {
        return None;
    }
    Some((cwd.clone(), real_path(host, cwd)))
}

/// Why the deep tier must not start this environment's Python: it lies in the working folder
/// (its prefix or interpreter, as written or with links followed) and was not named with
/// `--python`.
fn inside_working_folder(host: &dyn Host, env: &PythonEnv, folder: &(PathBuf, PathBuf)) -> Option<String> {
    if env.found_by.iter().any(|how| how == "--python") {
        return None;
    }
    let windows = host.platform().os == OsFamily::Windows;
    let paths = std::iter::once(env.prefix.as_str()).chain(env.interpreter.as_deref());
    let inside = paths.map(Path::new).any(|p| {
        // A relative path (from a relative PATH entry such as `.`) is relative to the working folder.
        (!windows && p.is_relative())
            || [p.to_path_buf(), real_path(host, p)]
                .iter()
                .any(|q| q.starts_with(&folder.0) || q.starts_with(&folder.1))
    });
    inside.then(|| {
        format!(
            "not started: it is inside the working folder {}, and starting its Python would run code from \
             that folder; name it with --python to import its frameworks",
            folder.0.display()
        )
    })
}

/// Runs the probe in every environment with an interpreter, all at once, except those inside the
/// working folder that the user did not name (`guarded_folder`).
pub(super) fn run_all(host: &dyn Host, envs: &mut [PythonEnv], opts: &Options, trace: &mut Trace) {
    let folder = guarded_folder(host, opts);
    let results: Vec<(Probed<DeepFacts>, Trace)> = std::thread::scope(|s| {
        let handles: Vec<_> = envs
            .iter()
            .map(|env| {
                let folder = folder.as_ref();
                std::thread::Builder::new().name("python-deep".into()).spawn_scoped(s, move || {
                    let mut t = Trace::new("python");
                    if let Some(reason) = folder.and_then(|f| inside_working_folder(host, env, f)) {
                        t.miss("probe.py", format!("{}: {reason}", env.name));
                        return (Probed::Unsupported { reason }, t);
                    }
                    let r = run_env(host, env, &mut t);
                    (r, t)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h {
                Ok(handle) => handle.join().unwrap_or_else(|_| {
                    (Probed::Failed { error: "the deep probe thread panicked".into() }, Trace::new("python"))
                }),
                Err(e) => (Probed::Failed { error: format!("could not start a thread: {e}") }, Trace::new("python")),
            })
            .collect()
    });
    for (env, (result, t)) in envs.iter_mut().zip(results) {
        for entry in t.into_entries() {
            trace.push(entry.method, entry.outcome, entry.detail);
        }
        env.deep = Some(result);
    }
}
