//! `gpu-doctor fleet`: run the check on many nodes through the engine the cluster already has
//! (SSH, SLURM, Kubernetes) and collect one JSON report per node into a folder, beside a
//! `fleet.json` manifest ([`Manifest`]) with a row for every node asked, reported or not.
//!
//! The engines (`ssh`, `slurm`, `k8s`) start programs only through a [`Runner`] (in production
//! `SystemHost::run`: own process group, deadline, output cap), so tests give them recorded
//! answers. Everything that touches the folder is [`Folder`]: it names each report after the host
//! the report itself names (made safe as a file name), keeps the engine's name for the node, and
//! on a re-run with `missing_only` replaces only the rows of nodes that had no report.

pub mod k8s;
pub mod slurm;
pub mod ssh;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use gpu_doctor_model::Report;
use gpu_doctor_model::fleet::{MANIFEST_FILE, Manifest, NodeEntry, NodeOutcome};
use gpu_doctor_probes::host::{Cmd, CmdOutput, HostError};

use crate::files;

/// Starts one program and waits for it (argv, no shell; the `Cmd`'s timeout is its deadline).
pub type Runner<'a> = dyn Fn(&Cmd) -> Result<CmdOutput, HostError> + Sync + 'a;

/// What a node's run gave, before it is written down.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeResult {
    /// The node printed a report (the text as printed, and the host name it names).
    Report { text: String, host: Option<String> },
    /// No report, and why.
    Outcome(NodeOutcome),
}

/// Reads what a node printed: a report when standard output holds one (the first `{` to the end,
/// so a login banner before it does not matter), else why not from the exit code and standard error.
pub fn judge(out: &CmdOutput) -> NodeResult {
    if let Some(report) = parse_report(&out.stdout) {
        let host = report.snapshot.system.value().and_then(|s| s.host_name.clone());
        let start = out.stdout.find('{').unwrap_or(0);
        return NodeResult::Report { text: out.stdout[start..].trim_end().to_owned() + "\n", host };
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

/// A gpu-doctor report in `text`, from its first `{`.
pub fn parse_report(text: &str) -> Option<Report> {
    let start = text.find('{')?;
    serde_json::from_str(&text[start..]).ok()
}

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
/// hidden, or the manifest's own name.
pub fn file_stem(host: &str) -> String {
    let mut stem: String = host
        .chars()
        .take(100)
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
        .collect();
    if stem.starts_with('.') {
        stem.replace_range(..1, "_");
    }
    let manifest_stem = MANIFEST_FILE.trim_end_matches(".json");
    if stem.is_empty() || stem == manifest_stem {
        stem.insert_str(0, "node-");
    }
    stem
}

/// A fleet folder being filled: the reports and the manifest.
#[derive(Debug)]
pub struct Folder {
    dir: PathBuf,
    manifest: Manifest,
}

impl Folder {
    /// Opens `dir` (created if missing) for a run of `engine` started at `started` (RFC 3339).
    /// With `missing_only` the folder's manifest is kept (it must be there) and only nodes
    /// without a report are replaced; otherwise the manifest starts empty.
    pub fn open(dir: &Path, engine: &str, started: String, missing_only: bool) -> Result<Self> {
        std::fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
        let manifest = if missing_only {
            let path = dir.join(MANIFEST_FILE);
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("--missing-only needs the manifest of an earlier run: {}", path.display()))?;
            let manifest: Manifest =
                serde_json::from_str(&text).with_context(|| format!("{} is not a fleet manifest", path.display()))?;
            Manifest { engine: engine.to_owned(), started, ..manifest }
        } else {
            Manifest { engine: engine.to_owned(), started, nodes: Vec::new() }
        };
        Ok(Self { dir: dir.to_path_buf(), manifest })
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The manifest so far.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Whether the node the engine calls `engine_name` already has a report here.
    pub fn has_report(&self, engine_name: &str) -> bool {
        self.manifest
            .nodes
            .iter()
            .any(|n| n.engine_name == engine_name && matches!(n.outcome, NodeOutcome::Reported { .. }))
    }

    /// The manifest's nodes without a report, by the engine's names, in manifest order.
    pub fn missing(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for node in &self.manifest.nodes {
            if !self.has_report(&node.engine_name) && !names.contains(&node.engine_name) {
                names.push(node.engine_name.clone());
            }
        }
        names
    }

    /// Writes down what node `engine_name` gave: its report as `<host>.json` (another node's file
    /// is never overwritten: a second node naming the same host gets `<host>-2.json`), and its row,
    /// which replaces an earlier row of the same node. Returns the row.
    pub fn add(&mut self, engine_name: &str, result: NodeResult, seconds: Option<f64>) -> Result<NodeEntry> {
        let (host, outcome) = match result {
            NodeResult::Report { text, host } => {
                let host = host.filter(|h| !h.trim().is_empty()).unwrap_or_else(|| engine_name.to_owned());
                let file = self.free_file(&host, engine_name);
                files::write_file(&self.dir.join(&file), text)?;
                (host, NodeOutcome::Reported { file })
            }
            NodeResult::Outcome(outcome) => (engine_name.to_owned(), outcome),
        };
        let entry = NodeEntry { host, engine_name: engine_name.to_owned(), outcome, seconds };
        match self.manifest.nodes.iter_mut().find(|n| n.engine_name == engine_name) {
            Some(row) => *row = entry.clone(),
            None => self.manifest.nodes.push(entry.clone()),
        }
        Ok(entry)
    }

    /// A report file name for `host` that no other node of the manifest holds.
    fn free_file(&self, host: &str, engine_name: &str) -> String {
        let stem = file_stem(host);
        let taken = |file: &str| {
            self.manifest.nodes.iter().any(|n| {
                n.engine_name != engine_name && matches!(&n.outcome, NodeOutcome::Reported { file: f } if f == file)
            })
        };
        let mut file = format!("{stem}.json");
        let mut n = 2;
        while taken(&file) {
            file = format!("{stem}-{n}.json");
            n += 1;
        }
        file
    }

    /// Writes `fleet.json`.
    pub fn finish(&self) -> Result<()> {
        let text = serde_json::to_string_pretty(&self.manifest).context("could not write the manifest as JSON")?;
        files::write_file(&self.dir.join(MANIFEST_FILE), text + "\n")
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
