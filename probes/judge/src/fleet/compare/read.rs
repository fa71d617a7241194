//! Reading the nodes to compare: a fleet folder (its `fleet.json` manifest when there is one, else
//! every `*.json` regular file in it) or a list of report files. A file that cannot be read or is
//! not a report is a node with the reason, never an error; only a folder that cannot be listed or a
//! manifest that cannot be read is. Reports are parsed on a few threads, since a fleet has hundreds.
//!
//! The bytes come through the caller's [`ReadFile`] (the binary's is the probes' capped reader:
//! a regular file, opened without blocking, at most its cap): this crate does no I/O of its own
//! beyond listing a folder. A file named inside a folder (by the manifest or the listing) is read
//! without following a symlink; each file is read once (a second row naming it is a node with the
//! reason), and all reports together at most [`MAX_TOTAL_BYTES`]. A reason never quotes the
//! file's content: a parse error says where, not what.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::NodeInput;
use gpu_doctor_model::Report;
use gpu_doctor_model::certify::{Certificate, Measured, Stage};
use gpu_doctor_model::fleet::{CERTIFICATE_SUFFIX, MANIFEST_FILE, Manifest, NodeCertificate, NodeOutcome};

/// All the reports of one comparison together, at most (gpu-doctor's own are well under 1 MiB
/// each; the reader caps each file); the files after that are nodes with the reason.
pub const MAX_TOTAL_BYTES: u64 = 512 << 20;

/// Whether a file may be a symlink to follow: a path the user named, yes; a file a folder or its
/// manifest names, no (a planted link would send the comparison to a private file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    /// On the command line (or picked in the window).
    ByUser,
    /// By a fleet folder's manifest or listing.
    ByFolder,
}

/// Reads one file's bytes (or says why not, in one line naming the file): the caller's capped
/// reader of regular files.
pub type ReadFile<'a> = dyn Fn(&Path, Named) -> Result<Vec<u8>, String> + Sync + 'a;
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
pub fn read_paths(paths: &[PathBuf], read: &ReadFile<'_>) -> Result<Vec<NodeInput>, String> {
    let mut nodes = Vec::new();
    let mut files = Vec::new();
    let total = AtomicU64::new(0);
    for p in paths {
        if p.is_dir() {
            nodes.extend(folder(p, &(), read, &total)?);
        } else if p.exists() {
            files.push(p.clone());
        } else {
            return Err(format!("{}: no such file or folder", p.display()));
        }
    }
    nodes.extend(nodes_of(&files, parse_all(&files, &(), read, Named::ByUser, &total)));
    Ok(nodes)
}

/// A fleet folder: the manifest's nodes when `fleet.json` is there (each `Reported` file read,
/// every other outcome kept), else one node per `*.json` regular file, in name order.
pub fn read_folder(dir: &Path, read: &ReadFile<'_>) -> Result<Vec<NodeInput>, String> {
    read_folder_counted(dir, &(), read)
}

/// [`read_folder`], telling `progress` what it parses.
pub fn read_folder_counted(
    dir: &Path,
    progress: &dyn ReadProgress,
    read: &ReadFile<'_>,
) -> Result<Vec<NodeInput>, String> {
    folder(dir, progress, read, &AtomicU64::new(0))
}

/// [`read_folder_counted`] with the bytes read so far in this comparison.
fn folder(
    dir: &Path,
    progress: &dyn ReadProgress,
    read: &ReadFile<'_>,
    total: &AtomicU64,
) -> Result<Vec<NodeInput>, String> {
    let manifest_path = dir.join(MANIFEST_FILE);
    if std::fs::symlink_metadata(&manifest_path).is_ok() {
        let bytes = read(&manifest_path, Named::ByFolder)?;
        let manifest: Manifest = serde_json::from_slice(&bytes)
            .map_err(|e| format!("{}: not a fleet manifest ({})", manifest_path.display(), where_(&e)))?;
        return Ok(from_manifest(dir, manifest, progress, read, total));
    }
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter(|p| !p.to_string_lossy().ends_with(CERTIFICATE_SUFFIX))
        .collect();
    files.sort();
    let mut nodes = nodes_of(&files, parse_all(&files, progress, read, Named::ByFolder, total));
    // Each report's certificate beside it, `<stem>.certificate.json`, where there is one.
    for n in &mut nodes {
        let NodeOutcome::Reported { file } = &n.outcome else { continue };
        let Some(stem) = file.strip_suffix(".json") else { continue };
        let cert = format!("{stem}{CERTIFICATE_SUFFIX}");
        if std::fs::symlink_metadata(dir.join(&cert)).is_ok_and(|m| m.is_file()) {
            n.certificate = Some(certificate(dir, &cert, read));
        }
    }
    Ok(nodes)
}

/// A node's certificate file inside `dir` (a bare file name only, never followed through a
/// symlink), read and judged: its verdict, level, whether its SHA-256 holds, its first reason; or
/// why it could not be read.
pub fn certificate(dir: &Path, file: &str, read: &ReadFile<'_>) -> NodeCertificate {
    let unreadable = |why: String| NodeCertificate {
        verdict: None,
        level: None,
        intact: false,
        note: Some(why),
        figures: Vec::new(),
    };
    let name = Path::new(file);
    if name.file_name() != Some(name.as_os_str()) {
        return unreadable(format!("{file} is not a file name inside the folder"));
    }
    match read(&dir.join(name), Named::ByFolder) {
        Err(why) => unreadable(why),
        Ok(bytes) => match serde_json::from_slice::<Certificate>(&bytes) {
            Err(e) => unreadable(format!("{file}: not a certificate ({})", where_(&e))),
            Ok(c) => NodeCertificate {
                verdict: Some(c.verdict),
                level: Some(c.level.number()),
                intact: c.intact().unwrap_or(false),
                note: c.reasons.first().cloned(),
                figures: c
                    .checks()
                    .filter(|k| matches!(k.stage, Stage::Benchmark | Stage::Stress | Stage::Soak))
                    .filter(|k| matches!(k.measured, Measured::Value { .. }))
                    .map(|k| format!("{} on {}: {}", k.id, k.subject, k.measured.describe()))
                    .collect(),
            },
        },
    }
}

/// The manifest's nodes, with the reports it names read from `dir`, each file once.
fn from_manifest(
    dir: &Path,
    manifest: Manifest,
    progress: &dyn ReadProgress,
    read: &ReadFile<'_>,
    total: &AtomicU64,
) -> Vec<NodeInput> {
    // The first row naming a file reads it; a later one is a node with the reason.
    let mut first_row: HashMap<PathBuf, usize> = HashMap::new();
    let mut files = Vec::new();
    for (i, n) in manifest.nodes.iter().enumerate() {
        if let Some(path) = n.outcome.report_path(dir)
            && !first_row.contains_key(&path)
        {
            first_row.insert(path.clone(), i);
            files.push(path);
        }
    }
    let mut reports = parse_all(&files, progress, read, Named::ByFolder, total).into_iter();
    let hosts: Vec<String> = manifest.nodes.iter().map(|n| n.host.clone()).collect();
    manifest
        .nodes
        .into_iter()
        .enumerate()
        .map(|(i, n)| {
            let path = n.outcome.report_path(dir);
            let (outcome, report) = match (path, n.outcome) {
                (Some(path), NodeOutcome::Reported { file }) if first_row.get(&path) != Some(&i) => {
                    let other = first_row.get(&path).and_then(|&j| hosts.get(j)).map_or("", String::as_str);
                    (NodeOutcome::Failed { reason: format!("{file} is the report of {other} already") }, None)
                }
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
            let certificate = n.certificate.as_deref().map(|file| certificate(dir, file, read));
            NodeInput {
                host: n.host,
                engine_name: Some(n.engine_name),
                outcome,
                report: report.map(|r| *r),
                certificate,
            }
        })
        .collect()
}

/// One node per file (read as named by the user), named by the report's host name, else (no host
/// name, or one that another file has too) by the file's name.
pub fn read_files(files: &[PathBuf], read: &ReadFile<'_>) -> Vec<NodeInput> {
    nodes_of(files, parse_all(files, &(), read, Named::ByUser, &AtomicU64::new(0)))
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
                    certificate: None,
                },
                Err(reason) => NodeInput {
                    host,
                    engine_name: None,
                    outcome: NodeOutcome::Failed { reason },
                    report: None,
                    certificate: None,
                },
            }
        })
        .collect()
}

/// Parses every file, in order, on up to [`MAX_THREADS`] named threads; a file named twice is
/// read once (its later places get the reason).
fn parse_all(
    files: &[PathBuf],
    progress: &dyn ReadProgress,
    read: &ReadFile<'_>,
    named: Named,
    total: &AtomicU64,
) -> Vec<Result<Box<Report>, String>> {
    progress.total(files.len());
    let mut seen = std::collections::HashSet::new();
    let repeated: Vec<bool> = files.iter().map(|f| !seen.insert(f)).collect();
    let parse = |(f, again): (&PathBuf, &bool)| {
        let report = if *again {
            Err(format!("{} is named twice; it was read once", f.display()))
        } else {
            parse(f, read, named, total)
        };
        progress.parsed();
        report
    };
    let files_again: Vec<(&PathBuf, &bool)> = files.iter().zip(&repeated).collect();
    let files = &files_again[..];
    let threads = std::thread::available_parallelism().map_or(1, usize::from).min(MAX_THREADS);
    let threads = threads.min(files.len().div_ceil(FILES_PER_THREAD)).max(1);
    if threads == 1 {
        return files.iter().copied().map(parse).collect();
    }
    let chunk = files.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .enumerate()
            .map(|(i, part)| {
                let work = move || part.iter().copied().map(parse).collect::<Vec<_>>();
                (part, std::thread::Builder::new().name(format!("fleet-read-{i}")).spawn_scoped(scope, work))
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|(part, h)| match h.map(|h| h.join()) {
                Ok(Ok(reports)) => reports,
                // A thread that could not start: its share is read here. One that panicked: its files
                // are nodes with the reason.
                Err(_) => part.iter().copied().map(parse).collect(),
                Ok(Err(_)) => part.iter().map(|(f, _)| Err(format!("reading {} failed", f.display()))).collect(),
            })
            .collect()
    })
}

/// One report file; the reason, in one line, when it cannot be read or is not a report (where the
/// JSON went wrong, never what it holds), or when the comparison has read [`MAX_TOTAL_BYTES`].
fn parse(path: &Path, read: &ReadFile<'_>, named: Named, total: &AtomicU64) -> Result<Box<Report>, String> {
    if total.load(Ordering::Relaxed) >= MAX_TOTAL_BYTES {
        return Err(too_much(path));
    }
    let bytes = read(path, named)?;
    let len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if total.fetch_add(len, Ordering::Relaxed).saturating_add(len) > MAX_TOTAL_BYTES {
        return Err(too_much(path));
    }
    serde_json::from_slice::<Report>(&bytes)
        .map(Box::new)
        .map_err(|e| format!("{} is not a gpu-doctor report ({})", path.display(), where_(&e)))
}

fn too_much(path: &Path) -> String {
    format!("{} was not read: the reports together pass {} MiB", path.display(), MAX_TOTAL_BYTES >> 20)
}

/// Where and what kind of JSON error, without serde's words, which quote the file's values.
fn where_(e: &serde_json::Error) -> String {
    let kind = match e.classify() {
        serde_json::error::Category::Io => "unreadable",
        serde_json::error::Category::Syntax => "not JSON",
        serde_json::error::Category::Data => "JSON of another shape",
        serde_json::error::Category::Eof => "cut short",
    };
    format!("{kind} at line {} column {}", e.line(), e.column())
}
