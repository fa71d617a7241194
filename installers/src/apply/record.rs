//! Each installed distribution's files checked against its `RECORD` (the wheel spec's list of
//! every file an install wrote, with its sha256 and size): what `pip freeze` cannot show. Wheels
//! of two CUDA majors (`nvidia-cudnn-cu12` and `-cu13`) write the same files, so installing one
//! changes the other's files and removing one deletes them, while the package list stays the same.
//!
//! The cost is bounded: every listed file is looked at (exists, and has the size `RECORD` gives:
//! one `stat` each, about 20,000 in a torch environment), and only the files named in
//! [`check`]'s `hash` set are read and hashed (streaming): the files two distributions list, and
//! those of the distributions a run installed or removed. Those are the only files another
//! install can have written over with content of the same size; hashing every `.so` of a torch
//! environment (several GB) on every run would cost seconds to minutes.
//!
//! As pip does, `.pyc` files, `__pycache__` folders and `RECORD` itself (and its signatures) are
//! not checked. A path that leaves the environment (absolute, or `..` past its prefix) is not
//! followed and is reported; one that leaves site-packages into the environment (pip's
//! `../../../bin/SCRIPT`) is checked.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use gpu_doctor_probes::host::MAX_FILE_BYTES;
use gpu_doctor_probes::parse::wheel::normalize_name;
use sha2::{Digest, Sha256};

/// The most lines read from all `RECORD` files of one environment together.
const ENTRIES_CAP: usize = 1_000_000;
/// The bytes read at a time when a file is hashed.
const CHUNK_BYTES: usize = 1 << 20;

/// One file a `RECORD` lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Where it is: site-packages joined with the line's path, `..` resolved.
    pub(crate) path: PathBuf,
    /// The path as the line writes it.
    pub(crate) shown: String,
    /// Its sha256, where the line gives one.
    pub(crate) sha256: Option<[u8; 32]>,
    /// Its size, where the line gives one.
    pub(crate) size_bytes: Option<u64>,
}

/// One installed distribution's `RECORD`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    /// The `*.dist-info` folder's name.
    pub(crate) folder: String,
    /// The normalized name and the version (`METADATA`'s, else the folder's).
    pub(crate) name: String,
    pub(crate) version: String,
    /// The files it lists that are checked.
    pub(crate) entries: Vec<Entry>,
    /// Lines not followed: a path that leaves the environment, or a line that cannot be read.
    pub(crate) refused: Vec<String>,
}

/// Every `RECORD` of one environment's site-packages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Site {
    pub(crate) site: PathBuf,
    pub(crate) records: Vec<Record>,
}

/// What the files of one distribution look like now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DistFiles {
    pub(crate) name: String,
    pub(crate) version: String,
    /// How many files were checked.
    pub(crate) files: usize,
    /// Listed files that are not there (as the lines write them).
    pub(crate) missing: Vec<String>,
    /// Listed files of another size, or (where hashed) another sha256.
    pub(crate) changed: Vec<String>,
    /// Lines not followed ([`Record::refused`]).
    pub(crate) refused: Vec<String>,
}

impl DistFiles {
    /// Every file it lists is there as listed, and no line was refused.
    pub(crate) fn intact(&self) -> bool {
        self.missing.is_empty() && self.changed.is_empty() && self.refused.is_empty()
    }
}

impl Site {
    /// The `RECORD` files of the environment at `prefix` (its one site-packages); `Err` says why
    /// they cannot be read (no site-packages, more than one, a folder that cannot be listed, more
    /// than [`ENTRIES_CAP`] lines).
    pub(crate) fn read(prefix: &Path) -> Result<Self, String> {
        let site = super::installed::site_packages(prefix)?;
        let root = prefix.canonicalize().map_err(|e| format!("{}: {e}", prefix.display()))?;
        let listing = std::fs::read_dir(&site).map_err(|e| format!("could not list {}: {e}", site.display()))?;
        let mut folders: Vec<String> = Vec::new();
        for entry in listing {
            let entry = entry.map_err(|e| format!("could not list {}: {e}", site.display()))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.to_ascii_lowercase().ends_with(".dist-info") && entry.path().join("RECORD").is_file() {
                folders.push(name);
            }
        }
        folders.sort();
        let mut records = Vec::new();
        let mut lines = 0;
        for folder in folders {
            let record = read_record(&site, &root, &folder)?;
            lines += record.entries.len() + record.refused.len();
            if lines > ENTRIES_CAP {
                return Err(format!("the RECORD files of {} list more than {ENTRIES_CAP} files", site.display()));
            }
            records.push(record);
        }
        Ok(Site { site, records })
    }

    /// The files two or more distributions list.
    pub(crate) fn shared(&self) -> HashSet<PathBuf> {
        let mut seen = HashSet::new();
        let mut twice = HashSet::new();
        for record in &self.records {
            let own: HashSet<&PathBuf> = record.entries.iter().map(|e| &e.path).collect();
            for path in own {
                if !seen.insert(path) {
                    twice.insert(path.clone());
                }
            }
        }
        twice
    }

    /// The files of the distributions in one of `self` and `other` and not in the other (by
    /// folder and `RECORD`): what a run installed, removed or replaced.
    pub(crate) fn touched(&self, other: &Site) -> HashSet<PathBuf> {
        fn index(site: &Site) -> HashMap<&str, &[Entry]> {
            site.records.iter().map(|r| (r.folder.as_str(), r.entries.as_slice())).collect()
        }
        let (mine, theirs) = (index(self), index(other));
        let differ = |a: &HashMap<&str, &[Entry]>, b: &HashMap<&str, &[Entry]>| {
            a.iter()
                .filter(|(k, v)| b.get(*k) != Some(*v))
                .flat_map(|(_, v)| v.iter().map(|e| e.path.clone()))
                .collect()
        };
        let mut out: HashSet<PathBuf> = differ(&mine, &theirs);
        out.extend(differ(&theirs, &mine));
        out
    }

    /// The distributions other than `folder` that list `path`, by name.
    pub(crate) fn owners(&self, path: &Path, folder: &str) -> Vec<String> {
        self.records
            .iter()
            .filter(|r| r.folder != folder && r.entries.iter().any(|e| e.path == path))
            .map(|r| r.name.clone())
            .collect()
    }
}

/// The files now of each distribution `only` takes, by folder: every listed file looked at (exists,
/// its size), and those in `hash` read and hashed too; with `look_at`, only the listed files in it
/// (after a run of pip or uv, which write and remove only the files of the distributions they
/// install or remove: the files of the others that they can have changed are those).
pub(crate) fn check(
    site: &Site,
    hash: &HashSet<PathBuf>,
    only: &dyn Fn(&Record) -> bool,
    look_at: Option<&HashSet<PathBuf>>,
) -> BTreeMap<String, DistFiles> {
    let records: Vec<&Record> = site.records.iter().filter(|record| only(record)).collect();
    // A stat is most of the cost (20,000 in a torch environment): the records are shared out
    // among a few threads, each checking whole records.
    let threads = std::thread::available_parallelism().map_or(1, usize::from).clamp(1, 4);
    let per = records.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let run = move |chunk: &[&Record]| chunk.iter().map(|r| check_one(r, hash, look_at)).collect::<Vec<_>>();
        let workers: Vec<_> = records.chunks(per).map(|chunk| (chunk, scope.spawn(move || run(chunk)))).collect();
        // A worker that panicked has its records checked again here: none is left out.
        workers.into_iter().flat_map(|(chunk, w)| w.join().unwrap_or_else(|_| run(chunk))).collect()
    })
}

/// [`check`] of one record: its folder and what its files look like.
fn check_one(record: &Record, hash: &HashSet<PathBuf>, look_at: Option<&HashSet<PathBuf>>) -> (String, DistFiles) {
    let mut files = DistFiles {
        name: record.name.clone(),
        version: record.version.clone(),
        files: record.entries.len(),
        missing: Vec::new(),
        changed: Vec::new(),
        refused: record.refused.clone(),
    };
    for entry in record.entries.iter().filter(|e| look_at.is_none_or(|set| set.contains(&e.path))) {
        match std::fs::metadata(&entry.path) {
            Err(_) => files.missing.push(entry.shown.clone()),
            Ok(meta) if !meta.is_file() => files.changed.push(entry.shown.clone()),
            Ok(meta) if entry.size_bytes.is_some_and(|size| size != meta.len()) => {
                files.changed.push(entry.shown.clone());
            }
            Ok(_) => {
                let differs = match entry.sha256 {
                    Some(want) if hash.contains(&entry.path) => sha256_of(&entry.path).ok() != Some(want),
                    _ => false,
                };
                if differs {
                    files.changed.push(entry.shown.clone());
                }
            }
        }
    }
    (record.folder.clone(), files)
}

/// The sha256 of the file at `path`, read in chunks.
pub(crate) fn sha256_of(path: &Path) -> std::io::Result<[u8; 32]> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; CHUNK_BYTES];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hasher.finalize().into())
}

/// The `RECORD` of `site/folder`; paths resolved against `site` and kept inside `root` (the
/// environment's prefix, links resolved).
fn read_record(site: &Path, root: &Path, folder: &str) -> Result<Record, String> {
    let dir = site.join(folder);
    let path = dir.join("RECORD");
    let file = std::fs::File::open(&path).map_err(|e| format!("could not read {}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("could not read {}: {e}", path.display()))?;
    let (name, version) = match super::installed::read_header(&dir.join("METADATA")) {
        Ok((name, version)) => (normalize_name(&name), version),
        Err(_) => {
            let stem = folder.get(..folder.len() - ".dist-info".len()).unwrap_or(folder);
            let (name, version) = stem.rsplit_once('-').unwrap_or((stem, ""));
            (normalize_name(name), version.to_owned())
        }
    };
    let mut record = Record { folder: folder.to_owned(), name, version, entries: Vec::new(), refused: Vec::new() };
    if bytes.len() > MAX_FILE_BYTES {
        record.refused.push(format!("RECORD is larger than {MAX_FILE_BYTES} bytes: not read"));
        return Ok(record);
    }
    let text = String::from_utf8_lossy(&bytes);
    for line in text.lines().map(|l| l.trim_end_matches('\r')).filter(|l| !l.trim().is_empty()) {
        let Some(fields) = csv_fields(line) else {
            record.refused.push(format!("{line:?}: not a RECORD line"));
            continue;
        };
        let shown = fields.first().cloned().unwrap_or_default();
        if skipped(&shown) {
            continue;
        }
        let Some(path) = inside(site, root, &shown) else {
            record.refused.push(format!("{shown}: outside the environment, not followed"));
            continue;
        };
        let sha256 = fields.get(1).and_then(|h| h.strip_prefix("sha256=")).and_then(decode_digest);
        let size_bytes = fields.get(2).and_then(|s| s.trim().parse::<u64>().ok());
        record.entries.push(Entry { path, shown, sha256, size_bytes });
    }
    Ok(record)
}

/// Whether a `RECORD` path is left out of the check, as pip leaves it: compiled bytecode, and
/// `RECORD` itself with its signatures.
fn skipped(path: &str) -> bool {
    let last = path.rsplit('/').next().unwrap_or(path);
    path.ends_with(".pyc")
        || path.split('/').any(|part| part == "__pycache__")
        || (path.contains(".dist-info/") && matches!(last, "RECORD" | "RECORD.jws" | "RECORD.p7s"))
}

/// `site` joined with the `RECORD` path `written` and its `..` resolved, when that stays inside
/// `root`; `None` for an absolute path, a Windows prefix, or one that leaves `root`.
fn inside(site: &Path, root: &Path, written: &str) -> Option<PathBuf> {
    let relative = Path::new(written);
    if written.is_empty() || written.starts_with(['/', '\\']) {
        return None;
    }
    let mut out = site.to_path_buf();
    for component in relative.components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (out.starts_with(root) && out != root).then_some(out)
}

/// The fields of one CSV line: comma-separated, a field in double quotes may hold commas and
/// doubled quotes (Python's `csv` writes a path with a comma so). `None` for an unclosed quote.
fn csv_fields(line: &str) -> Option<Vec<String>> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => fields.push(std::mem::take(&mut field)),
            (_, c) => field.push(c),
        }
    }
    if quoted {
        return None;
    }
    fields.push(field);
    Some(fields)
}

/// A `RECORD` digest (URL-safe base64 without padding, the wheel spec's form) as 32 bytes.
fn decode_digest(text: &str) -> Option<[u8; 32]> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            _ => return None,
        } as u32)
    };
    let text = text.trim().trim_end_matches('=');
    let mut out = Vec::with_capacity(33);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in text.as_bytes() {
        acc = (acc << 6) | value(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(u8::try_from(acc >> bits).ok()?);
            acc &= (1 << bits) - 1;
        }
    }
    out.try_into().ok()
}

#[cfg(test)]
mod tests;
