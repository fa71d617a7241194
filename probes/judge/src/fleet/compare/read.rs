//! Reading the nodes to compare: a fleet folder (its `fleet.json` manifest when there is one, else
//! every `*.json` in it) or a list of report files. A file that cannot be read or is not a report
//! is a node with the reason, never an error; only a folder that cannot be listed or a manifest
//! that cannot be read is. Reports are parsed on a few threads, since a fleet has hundreds.

use std::path::{Path, PathBuf};

use super::NodeInput;
use gpu_doctor_model::Report;
use gpu_doctor_model::fleet::{MANIFEST_FILE, Manifest, NodeOutcome};

/// A report larger than this is not read (gpu-doctor's own are well under 1 MiB).
const MAX_REPORT_BYTES: u64 = 64 << 20;
/// Files per reading thread, at least.
const FILES_PER_THREAD: usize = 16;
/// Reading threads, at most.
const MAX_THREADS: usize = 16;

/// Told how many reports a read will parse, then once per report parsed (from the reading threads):
/// the window's progress. `()` counts nothing.
pub trait ReadProgress: Sync {
    /// `files` reports are to be parsed.
    fn total(&self, files: usize);
    /// One more was parsed (or failed to be).
    fn parsed(&self);
}

impl ReadProgress for () {
    fn total(&self, _files: usize) {}
    fn parsed(&self) {}
}

/// Each path a folder (read with [`read_folder`]) or a report file; the nodes of all of them.
pub fn read_paths(paths: &[PathBuf]) -> Result<Vec<NodeInput>, String> {
    let mut nodes = Vec::new();
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            nodes.extend(read_folder(p)?);
        } else if p.exists() {
            files.push(p.clone());
        } else {
            return Err(format!("{}: no such file or folder", p.display()));
        }
    }
    nodes.extend(read_files(&files));
    Ok(nodes)
}

/// A fleet folder: the manifest's nodes when `fleet.json` is there (each `Reported` file read,
/// every other outcome kept), else one node per `*.json` file, in name order.
pub fn read_folder(dir: &Path) -> Result<Vec<NodeInput>, String> {
    read_folder_counted(dir, &())
}

/// [`read_folder`], telling `progress` what it parses.
pub fn read_folder_counted(dir: &Path, progress: &dyn ReadProgress) -> Result<Vec<NodeInput>, String> {
    let manifest_path = dir.join(MANIFEST_FILE);
    if manifest_path.is_file() {
        let text = std::fs::read_to_string(&manifest_path).map_err(|e| format!("{}: {e}", manifest_path.display()))?;
        let manifest: Manifest = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a fleet manifest: {e}", manifest_path.display()))?;
        return Ok(from_manifest(dir, manifest, progress));
    }
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json") && p.is_file())
        .collect();
    files.sort();
    Ok(nodes_of(&files, parse_all(&files, progress)))
}

/// The manifest's nodes, with the reports it names read from `dir`.
fn from_manifest(dir: &Path, manifest: Manifest, progress: &dyn ReadProgress) -> Vec<NodeInput> {
    let files: Vec<PathBuf> = manifest.nodes.iter().filter_map(|n| n.outcome.report_path(dir)).collect();
    let mut reports = parse_all(&files, progress).into_iter();
    manifest
        .nodes
        .into_iter()
        .map(|n| {
            let (outcome, report) = match (n.outcome.report_path(dir), n.outcome) {
                (Some(_), NodeOutcome::Reported { file }) => match reports.next() {
                    Some(Ok(report)) => (NodeOutcome::Reported { file }, Some(report)),
                    Some(Err(reason)) => (NodeOutcome::Failed { reason }, None),
                    None => (NodeOutcome::Failed { reason: format!("{file} was not read") }, None),
                },
                (None, NodeOutcome::Reported { file }) => {
                    (NodeOutcome::Failed { reason: format!("{file} is not a file name inside the folder") }, None)
                }
                (_, other) => (other, None),
            };
            NodeInput { host: n.host, engine_name: Some(n.engine_name), outcome, report: report.map(|r| *r) }
        })
        .collect()
}

/// One node per file, named by the report's host name, else (no host name, or one that another file
/// has too) by the file's name.
pub fn read_files(files: &[PathBuf]) -> Vec<NodeInput> {
    nodes_of(files, parse_all(files, &()))
}

/// The nodes of `files`, parsed into `parsed` (same order).
fn nodes_of(files: &[PathBuf], parsed: Vec<Result<Box<Report>, String>>) -> Vec<NodeInput> {
    let host_of = |r: &Result<Box<Report>, String>| {
        r.as_ref().ok().and_then(|r| r.snapshot.system.value()).and_then(|s| s.host_name.clone())
    };
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for h in parsed.iter().filter_map(host_of) {
        *seen.entry(h).or_default() += 1;
    }
    files
        .iter()
        .zip(parsed)
        .map(|(path, result)| {
            let name =
                path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
            let host = host_of(&result).filter(|h| seen.get(h) == Some(&1)).unwrap_or_else(|| name.clone());
            match result {
                Ok(report) => NodeInput {
                    host,
                    engine_name: None,
                    outcome: NodeOutcome::Reported { file: name },
                    report: Some(*report),
                },
                Err(reason) => {
                    NodeInput { host, engine_name: None, outcome: NodeOutcome::Failed { reason }, report: None }
                }
            }
        })
        .collect()
}

/// Parses every file, in order, on up to [`MAX_THREADS`] named threads.
fn parse_all(files: &[PathBuf], progress: &dyn ReadProgress) -> Vec<Result<Box<Report>, String>> {
    progress.total(files.len());
    let parse = |f: &PathBuf| {
        let report = parse(f);
        progress.parsed();
        report
    };
    let threads = std::thread::available_parallelism().map_or(1, usize::from).min(MAX_THREADS);
    let threads = threads.min(files.len().div_ceil(FILES_PER_THREAD)).max(1);
    if threads == 1 {
        return files.iter().map(parse).collect();
    }
    let chunk = files.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .enumerate()
            .map(|(i, part)| {
                let work = move || part.iter().map(parse).collect::<Vec<_>>();
                (part, std::thread::Builder::new().name(format!("fleet-read-{i}")).spawn_scoped(scope, work))
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|(part, h)| match h.map(|h| h.join()) {
                Ok(Ok(reports)) => reports,
                // A thread that could not start: its share is read here. One that panicked: its files
                // are nodes with the reason.
                Err(_) => part.iter().map(parse).collect(),
                Ok(Err(_)) => part.iter().map(|f| Err(format!("reading {} failed", f.display()))).collect(),
            })
            .collect()
    })
}

/// One report file; the reason, in one line, when it cannot be read or is not a report.
fn parse(path: &Path) -> Result<Box<Report>, String> {
    let size = std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?.len();
    if size > MAX_REPORT_BYTES {
        return Err(format!("{} is {size} bytes, more than a report can be", path.display()));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str::<Report>(&text)
        .map(Box::new)
        .map_err(|e| format!("{} is not a gpu-doctor report: {e}", path.display()))
}
