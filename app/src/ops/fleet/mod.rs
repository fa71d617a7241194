//! `gpu-doctor fleet`: run the check on many nodes through the engine the cluster already has
//! (SSH, SLURM, Kubernetes) and collect one JSON report per node into a folder, beside a
//! `fleet.json` manifest ([`Manifest`]) with a row for every node asked, reported or not.
//!
//! The engines (`ssh`, `slurm`, `k8s`) start programs only through a [`Runner`] (in production
//! `SystemHost::run`: own process group, deadline, output cap), so tests give them recorded
//! answers. Everything that touches the folder is [`Folder`]: it names each report after the host
//! the report itself names (made safe as a file name; a new file, never one it does not own nor a
//! symlink), keeps the engine's name for the node, writes the manifest as nodes finish, and on a
//! re-run with `missing_only` replaces only the rows of nodes that had no report.

pub mod k8s;
pub mod slurm;
pub mod ssh;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use gpu_doctor_model::Report;
use gpu_doctor_model::certify::Certificate;
use gpu_doctor_model::fleet::CERTIFICATE_SUFFIX;
use gpu_doctor_model::fleet::{MANIFEST_FILE, Manifest, NodeEntry, NodeOutcome};
use gpu_doctor_probes::host::{Cmd, CmdOutput, HostError, Links, MAX_FILE_BYTES, read_regular_file};
use gpu_doctor_probes::write::{self, WriteError};

use crate::files;

/// Starts one program and waits for it (argv, no shell; the `Cmd`'s timeout is its deadline).
pub type Runner<'a> = dyn Fn(&Cmd) -> Result<CmdOutput, HostError> + Sync + 'a;

/// What a node's run gave, before it is written down.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeResult {
    /// The node printed a report (the text as printed, and the host name it names), and with
    /// `--certify` its certificate after it (the text as printed).
    Report { text: String, host: Option<String>, certificate: Option<String> },
    /// No report, and why.
    Outcome(NodeOutcome),
}

/// Reads what a node printed: a report when standard output holds one (its own JSON object, so a
/// login banner before it, braces in the banner included, and text after it do not matter), else
/// why not from the exit code and standard error.
pub fn judge(out: &CmdOutput) -> NodeResult {
    if let Some((report, text)) = find_report(&out.stdout) {
        let host = report.snapshot.system.value().and_then(|s| s.host_name.clone());
        // After the report (whose own lines would use up the places tried).
        let rest = out.stdout.find(text).map_or("", |at| &out.stdout[at + text.len()..]);
        let certificate = find_json::<Certificate>(rest).map(|(_, c)| c.trim_end().to_owned() + "\n");
        return NodeResult::Report { text: text.trim_end().to_owned() + "\n", host, certificate };
    }
    let said = last_line(&out.stderr);
    // 127 is the shell's "no such command"; without an exit code (SLURM's files), its words.
    let no_command = said.contains("command not found")
        || (said.contains("exec: ") && (said.ends_with(": not found") || said.ends_with("No such file or directory")));
    let outcome = if out.status == Some(127) || no_command {
        NodeOutcome::NoGpuDoctor { reason: or_exit(said, out.status) }
    } else {
        let why = if said.is_empty() && out.status == Some(0) {
            "the output is not a gpu-doctor report".to_owned()
        } else {
            or_exit(said, out.status)
        };
        NodeOutcome::Failed { reason: why }
    };
    NodeResult::Outcome(outcome)
}

/// A gpu-doctor report in `text` (see [`find_report`]).
pub fn parse_report(text: &str) -> Option<Report> {
    find_report(text).map(|(report, _)| report)
}

/// The report in `text` and its own JSON text: the first `{` that starts a line (after blanks)
/// and opens a whole report, whatever comes before it (a banner, with braces or not) or after it.
/// At most [`MAX_REPORT_STARTS`] places are tried, so a hostile banner cannot make this slow.
pub fn find_report(text: &str) -> Option<(Report, &str)> {
    find_json(text)
}

/// The first JSON document of type `T` in `text`, as [`find_report`] finds a report.
fn find_json<T: serde::de::DeserializeOwned>(text: &str) -> Option<(T, &str)> {
    let starts = text
        .match_indices('{')
        .map(|(i, _)| i)
        .filter(|&i| text[..i].rsplit('\n').next().is_some_and(|before| before.trim().is_empty()))
        .take(MAX_REPORT_STARTS);
    starts.into_iter().find_map(|start| {
        let mut values = serde_json::Deserializer::from_str(&text[start..]).into_iter::<T>();
        let report = values.next()?.ok()?;
        Some((report, &text[start..start + values.byte_offset()]))
    })
}

/// The sh text a node runs: `BIN report --format json`, and with `certify` (a level, 1 to 4)
/// `BIN -q certify --level N --json` after it, its files into a temporary folder removed
/// afterwards, its JSON on standard output after the report's. `bin` is sh text already (a quoted
/// path, or `"$1"`). The exit status is the last command's.
pub fn node_script(bin: &str, certify: Option<u8>) -> String {
    let report = format!("{bin} report --format json");
    match certify {
        None => report,
        Some(level) => format!(
            "{report}; d=$(mktemp -d) && {bin} -q certify --level {level} --json --out \"$d\"; s=$?; rm -rf \"$d\"; exit $s"
        ),
    }
}

/// How many line-starting `{` [`find_report`] tries.
const MAX_REPORT_STARTS: usize = 64;

/// The last non-empty line of `text`, cleaned for a table cell.
pub fn last_line(text: &str) -> String {
    let line = text.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or("");
    crate::render::text::clean(line).chars().take(300).collect()
}

fn or_exit(said: String, status: Option<i32>) -> String {
    match (said.is_empty(), status) {
        (false, _) => said,
        (true, Some(code)) => format!("exit code {code}"),
        (true, None) => "ended by a signal".to_owned(),
    }
}

/// `host` as a file name: letters, digits, `.`, `_` and `-` kept, anything else `_`; never empty,
/// hidden, starting with `-` (an option to the next tool), or the manifest's own name.
pub fn file_stem(host: &str) -> String {
    let mut stem: String = host
        .chars()
        .take(100)
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
        .collect();
    if stem.starts_with(['.', '-']) {
        stem.replace_range(..1, "_");
    }
    let manifest_stem = MANIFEST_FILE.trim_end_matches(".json");
    if stem.is_empty() || stem == manifest_stem {
        stem.insert_str(0, "node-");
    }
    stem
}

/// A fleet folder being filled: the reports and the manifest, written as nodes finish.
#[derive(Debug)]
pub struct Folder {
    dir: PathBuf,
    manifest: Manifest,
    /// The manifest's row of each engine name.
    rows: HashMap<String, usize>,
    /// The report files the manifest's rows hold.
    files: HashSet<String>,
    /// Per file stem, the next `-N` to try: nodes that all name one host stay linear.
    next_suffix: HashMap<String, u32>,
    /// The report files of the folder's earlier manifest: the only existing files a run replaces.
    owned: HashSet<String>,
    /// The engine names of the folder's earlier manifest, when that run used the same engine.
    earlier_nodes: Vec<String>,
    /// When the manifest was last written.
    saved: Option<Instant>,
}

/// How often, at most, the manifest is written while nodes finish (and once more at the end).
const SAVE_EVERY: Duration = Duration::from_secs(1);

/// How many names [`Folder`] tries for one report before it gives up.
const MAX_NAME_TRIES: u32 = 10_000;

impl Folder {
    /// Opens `dir` (created if missing) for a run of `engine` started at `started` (RFC 3339).
    /// With `missing_only` the folder's manifest is kept (it must be there) and only nodes
    /// without a report are replaced; otherwise the manifest starts empty. Either way the earlier
    /// manifest says which existing report files this run may replace: no other file is.
    pub fn open(dir: &Path, engine: &str, started: String, missing_only: bool) -> Result<Self> {
        std::fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
        let path = dir.join(MANIFEST_FILE);
        let earlier =
            match read_regular_file(&path, MAX_FILE_BYTES, Links::Refuse) {
                // Where the JSON went wrong, not serde's words, which quote the file's values.
                Ok(bytes) => Some(serde_json::from_slice::<Manifest>(&bytes).map_err(|e| {
                    let (line, column) = (e.line(), e.column());
                    anyhow::anyhow!("{} is not a fleet manifest (line {line} column {column})", path.display())
                })),
                Err(HostError::NotFound { .. }) if !missing_only => None,
                Err(e) => Some(Err(anyhow::anyhow!("{e}")).with_context(|| {
                    format!("--missing-only needs the manifest of an earlier run: {}", path.display())
                })),
            };
        let earlier = match earlier {
            Some(Ok(m)) => Some(m),
            Some(Err(e)) if missing_only => return Err(e),
            // A broken manifest of an earlier run owns nothing; this run writes a new one.
            Some(Err(_)) | None => None,
        };
        let owned: HashSet<String> = earlier
            .iter()
            .flat_map(|m| &m.nodes)
            .flat_map(|n| {
                let report = match &n.outcome {
                    NodeOutcome::Reported { file } => Some(file.clone()),
                    _ => None,
                };
                report.into_iter().chain(n.certificate.clone())
            })
            .collect();
        let earlier_nodes = earlier
            .iter()
            .filter(|m| m.engine == engine)
            .flat_map(|m| &m.nodes)
            .map(|n| n.engine_name.clone())
            .collect();
        let manifest = match earlier {
            Some(m) if missing_only => Manifest { engine: engine.to_owned(), started, ..m },
            _ => Manifest { engine: engine.to_owned(), started, nodes: Vec::new() },
        };
        let mut folder = Self {
            dir: dir.to_path_buf(),
            manifest,
            rows: HashMap::new(),
            files: HashSet::new(),
            next_suffix: HashMap::new(),
            owned,
            earlier_nodes,
            saved: None,
        };
        for (i, node) in folder.manifest.nodes.iter().enumerate() {
            folder.rows.entry(node.engine_name.clone()).or_insert(i);
            if let NodeOutcome::Reported { file } = &node.outcome {
                folder.files.insert(file.clone());
            }
        }
        Ok(folder)
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The manifest so far.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The nodes of the folder's earlier manifest when it was written by the same engine (whose
    /// raw output this run may clean up), by the engine's names.
    pub fn earlier_nodes(&self) -> &[String] {
        &self.earlier_nodes
    }

    /// Whether the node the engine calls `engine_name` already has a report here.
    pub fn has_report(&self, engine_name: &str) -> bool {
        self.rows
            .get(engine_name)
            .is_some_and(|&i| matches!(self.manifest.nodes[i].outcome, NodeOutcome::Reported { .. }))
    }

    /// The manifest's nodes without a report, by the engine's names, in manifest order.
    pub fn missing(&self) -> Vec<String> {
        let mut seen = HashSet::new();
        self.manifest
            .nodes
            .iter()
            .filter(|n| !self.has_report(&n.engine_name) && seen.insert(n.engine_name.as_str()))
            .map(|n| n.engine_name.clone())
            .collect()
    }

    /// Writes down what node `engine_name` gave: its report as a new `<host>.json` (never over a
    /// file the folder's manifests do not own, nor through a symlink: the next free `<host>-N.json`
    /// instead), and its row, which replaces an earlier row of the same node. The manifest is
    /// written as nodes finish (at most every [`SAVE_EVERY`]), so an interrupted run leaves one.
    /// Returns the row.
    pub fn add(&mut self, engine_name: &str, result: NodeResult, seconds: Option<f64>) -> Result<NodeEntry> {
        let row = self.rows.get(engine_name).copied();
        // The node's own earlier file is free for it again.
        let own_file = row.and_then(|i| match &self.manifest.nodes[i].outcome {
            NodeOutcome::Reported { file } => Some(file.clone()),
            _ => None,
        });
        if let Some(file) = &own_file {
            self.files.remove(file);
            self.owned.insert(file.clone());
        }
        let (host, outcome, certificate) = match result {
            NodeResult::Report { text, host, certificate } => {
                let host = host.filter(|h| !h.trim().is_empty()).unwrap_or_else(|| engine_name.to_owned());
                let file = self.write_report(&host, own_file.as_deref(), &text)?;
                let certificate = match certificate {
                    Some(c) => self.write_certificate(&file, &c)?,
                    None => None,
                };
                (host, NodeOutcome::Reported { file }, certificate)
            }
            NodeResult::Outcome(outcome) => (engine_name.to_owned(), outcome, None),
        };
        let entry = NodeEntry { host, engine_name: engine_name.to_owned(), outcome, seconds, certificate };
        match row {
            Some(i) => self.manifest.nodes[i] = entry.clone(),
            None => {
                self.rows.insert(engine_name.to_owned(), self.manifest.nodes.len());
                self.manifest.nodes.push(entry.clone());
            }
        }
        if self.saved.is_none_or(|at| at.elapsed() >= SAVE_EVERY) {
            self.finish()?;
        }
        Ok(entry)
    }

    /// Writes `text` as the first free report file for `host` (`own`, the node's earlier file,
    /// first when it is one of the host's names) and returns its name.
    fn write_report(&mut self, host: &str, own: Option<&str>, text: &str) -> Result<String> {
        let stem = file_stem(host);
        let name = |n: u32| if n == 1 { format!("{stem}.json") } else { format!("{stem}-{n}.json") };
        let suffix = |file: &str| -> Option<u32> {
            let rest = file.strip_prefix(stem.as_str())?.strip_suffix(".json")?;
            if rest.is_empty() { Some(1) } else { rest.strip_prefix('-')?.parse().ok().filter(|&n| n >= 2) }
        };
        let first = self.next_suffix.get(&stem).copied().unwrap_or(1);
        // The node's own earlier file first (when it is one of this host's names), then the
        // stem's next free suffixes.
        let own = own.and_then(suffix);
        for n in own.into_iter().chain(first..first.saturating_add(MAX_NAME_TRIES)) {
            let file = name(n);
            if self.files.contains(&file) || file == MANIFEST_FILE {
                continue;
            }
            let replace = self.owned.contains(&file);
            match write::write_own_file(&self.dir.join(&file), text, replace) {
                Ok(()) => {
                    if Some(n) != own {
                        self.next_suffix.insert(stem.clone(), n.saturating_add(1));
                    }
                    self.files.insert(file.clone());
                    return Ok(file);
                }
                // Someone else's file, a symlink or a folder: the next name.
                Err(WriteError::AlreadyThere(_) | WriteError::Refused(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        anyhow::bail!("no free file name for host {} in {}", crate::render::text::clean(host), self.dir.display())
    }

    /// Writes a node's certificate beside its report `report_file` (`<stem>.json`) as
    /// `<stem>.certificate.json`, replacing only a file the folder's manifests own; `None` (no
    /// certificate in the row) when that name is someone else's file, a symlink or a folder.
    fn write_certificate(&mut self, report_file: &str, text: &str) -> Result<Option<String>> {
        let stem = report_file.strip_suffix(".json").unwrap_or(report_file);
        let file = format!("{stem}{CERTIFICATE_SUFFIX}");
        match write::write_own_file(&self.dir.join(&file), text, self.owned.contains(&file)) {
            Ok(()) => {
                self.owned.insert(file.clone());
                Ok(Some(file))
            }
            Err(WriteError::AlreadyThere(_) | WriteError::Refused(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Writes `fleet.json` (never through a symlink).
    pub fn finish(&mut self) -> Result<()> {
        let text = serde_json::to_string_pretty(&self.manifest).context("could not write the manifest as JSON")?;
        files::write_own_file(&self.dir.join(MANIFEST_FILE), text + "\n", true)?;
        self.saved = Some(Instant::now());
        Ok(())
    }
}

/// How many nodes of a manifest reported, and how many did not.
pub fn counts(manifest: &Manifest) -> (usize, usize) {
    let ok = manifest.nodes.iter().filter(|n| matches!(n.outcome, NodeOutcome::Reported { .. })).count();
    (ok, manifest.nodes.len() - ok)
}

/// Now, as RFC 3339 in UTC (`2026-11-23T21:53:35Z`).
pub fn now_rfc3339() -> String {
    rfc3339(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()))
}

/// Unix seconds as RFC 3339 in UTC.
fn rfc3339(unix_secs: u64) -> String {
    let (y, mo, d, h, mi, s) = gpu_doctor_model::time::utc(unix_secs);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

#[cfg(test)]
mod tests;
