//! An environment's package list read from its `*.dist-info` folders, where that gives exactly
//! the lines `pip freeze --all` or `uv pip freeze` would print: saving the list before a plan
//! touches the environment then needs no second run of the tool.
//!
//! Only a venv qualifies (a `pyvenv.cfg` with the system site-packages off) whose one
//! site-packages holds its distributions as `*.dist-info` folders, each with a canonical PEP 440
//! version and a name and version its `METADATA` header and its folder name agree on. A PEP 610
//! `direct_url.json` of a local archive or folder (`file:` URL, not editable, no subdirectory)
//! gives `name @ URL` (pip adds the archive's `#sha256=…`, uv does not). Anything else (a conda
//! environment, `*.egg-info`, `*.egg-link`, a `.pth` file that adds a folder, an editable or VCS
//! install, a file that cannot be read or parsed) is an `Err` saying why, and the tool lists it.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use gpu_doctor_probes::parse::wheel::{normalize_name, parse_metadata};

use crate::envtool::Tool;

/// The most of a `METADATA` file read looking for the end of its header.
const HEADER_CAP: u64 = 64 * 1024;
/// Names pip leaves out of `freeze` even with `--all` (its `stdlib_pkgs`).
const PIP_SKIPS: [&str; 3] = ["python", "wsgiref", "argparse"];

/// A package list read from disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Listed {
    /// The site-packages folder read.
    pub(crate) site: PathBuf,
    /// The freeze lines, in the tool's order.
    pub(crate) pins: Vec<String>,
}

/// One installed distribution.
#[derive(Debug)]
struct Dist {
    /// The name as its `METADATA` spells it.
    name: String,
    version: String,
    /// Its PEP 610 origin, when it has one: the URL and, for an archive pip installed, its hash.
    direct: Option<(String, Option<String>)>,
}

/// The freeze lines `tool` would print for the venv at `prefix`, read from its site-packages;
/// `Err` says why they cannot be read exactly (then the tool must list them).
pub(crate) fn freeze_from_disk(prefix: &Path, tool: &Tool) -> Result<Listed, String> {
    if let Tool::Conda { .. } = tool {
        return Err("a conda tool lists the environment".into());
    }
    if prefix.join("conda-meta").is_dir() {
        return Err("a conda environment".into());
    }
    let cfg = std::fs::read_to_string(prefix.join("pyvenv.cfg"))
        .map_err(|e| format!("no readable pyvenv.cfg, so not a venv ({e})"))?;
    if sees_system_site(&cfg) {
        return Err("the venv sees the system site-packages".into());
    }
    let site = site_packages(prefix)?;
    let mut dists = Vec::new();
    let entries = std::fs::read_dir(&site).map_err(|e| format!("could not list {}: {e}", site.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("could not list {}: {e}", site.display()))?;
        let file_name = entry.file_name();
        let Some(name) = file_name.to_str() else {
            return Err(format!("{}: a name that is not UTF-8", entry.path().display()));
        };
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".dist-info") {
            dists.push(read_dist(&entry.path(), name)?);
        } else if [".egg-info", ".egg", ".egg-link"].iter().any(|end| lower.ends_with(end)) {
            return Err(format!("{name}: not a *.dist-info folder"));
        } else if lower.ends_with(".pth") && adds_a_folder(&entry.path())? {
            return Err(format!("{name} adds a folder to the path"));
        }
    }
    Ok(Listed { site, pins: freeze_lines(dists, tool)? })
}

/// Whether a `pyvenv.cfg` lets the venv see the system site-packages: as Python's `site` reads
/// it, on unless `include-system-site-packages` says otherwise.
fn sees_system_site(cfg: &str) -> bool {
    let value = cfg.lines().filter_map(|line| line.split_once('=')).find_map(|(key, value)| {
        key.trim().eq_ignore_ascii_case("include-system-site-packages").then(|| value.trim().to_ascii_lowercase())
    });
    value.is_none_or(|v| v == "true")
}

/// The venv's one site-packages (`lib*/python*/site-packages`, `Lib/site-packages` on Windows);
/// `Err` when there is none or more than one (a `lib64` link to `lib` is the same folder).
pub(crate) fn site_packages(prefix: &Path) -> Result<PathBuf, String> {
    let mut candidates = Vec::new();
    if cfg!(windows) {
        candidates.push(prefix.join("Lib").join("site-packages"));
    } else {
        for lib in ["lib", "lib64"] {
            let Ok(entries) = std::fs::read_dir(prefix.join(lib)) else { continue };
            for entry in entries.flatten() {
                if entry.file_name().to_string_lossy().starts_with("python") {
                    candidates.extend(["site-packages", "dist-packages"].map(|site| entry.path().join(site)));
                }
            }
        }
    }
    let mut found: Vec<PathBuf> =
        candidates.iter().filter_map(|c| c.canonicalize().ok()).filter(|c| c.is_dir()).collect();
    found.sort();
    found.dedup();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!("no site-packages folder in {}", prefix.display())),
        more => Err(format!("{} site-packages folders in {}", more.len(), prefix.display())),
    }
}

/// Whether a `.pth` file names a folder for the path (its other lines are comments, blanks and
/// `import` lines, which add none).
fn adds_a_folder(pth: &Path) -> Result<bool, String> {
    let bytes = std::fs::read(pth).map_err(|e| format!("could not read {}: {e}", pth.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    Ok(text.lines().map(str::trim_end).any(|line| {
        !(line.trim().is_empty()
            || line.starts_with('#')
            || line.starts_with("import ")
            || line.starts_with("import\t"))
    }))
}

/// The distribution of the folder `dir` named `folder` (`name-version.dist-info`).
fn read_dist(dir: &Path, folder: &str) -> Result<Dist, String> {
    let (name, version) = read_header(&dir.join("METADATA"))?;
    if !is_valid_name(&name) {
        return Err(format!("{folder}: the name {name:?} is not a valid distribution name"));
    }
    if !is_canonical_version(&version) {
        return Err(format!("{folder}: the version {version:?} is not in its normalized form"));
    }
    let stem = folder.strip_suffix(".dist-info").unwrap_or(folder);
    let agrees = stem
        .rsplit_once('-')
        .is_some_and(|(n, v)| normalize_name(n) == normalize_name(&name) && v == version && !n.contains('-'));
    if !agrees {
        return Err(format!("{folder}: its METADATA says {name} {version}"));
    }
    if PIP_SKIPS.contains(&normalize_name(&name).as_str()) {
        return Err(format!("{folder}: pip leaves {name} out of its list"));
    }
    let direct = match std::fs::read(dir.join("direct_url.json")) {
        Ok(bytes) => Some(direct_url(&bytes).map_err(|why| format!("{folder}: direct_url.json {why}"))?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("{folder}: could not read direct_url.json: {e}")),
    };
    Ok(Dist { name, version, direct })
}

/// `Name` and `Version` from the header of the `METADATA` file at `path`, reading only the header
/// (up to the first blank line, at most [`HEADER_CAP`] bytes).
pub(crate) fn read_header(path: &Path) -> Result<(String, String), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("could not read {}: {e}", path.display()))?;
    let mut reader = BufReader::new(file.take(HEADER_CAP));
    let mut header = Vec::new();
    loop {
        let start = header.len();
        match reader.read_until(b'\n', &mut header) {
            Ok(0) => break,
            Ok(_) if header[start..].iter().all(u8::is_ascii_whitespace) => break,
            Ok(_) => {}
            Err(e) => return Err(format!("could not read {}: {e}", path.display())),
        }
    }
    let capped = reader.get_ref().limit() == 0;
    // A character cut at the cap ends the text read; anything else that is not UTF-8 is an error.
    let text = match std::str::from_utf8(&header) {
        Ok(text) => text,
        Err(e) if capped && e.error_len().is_none() => {
            std::str::from_utf8(&header[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => return Err(format!("{}: a header that is not UTF-8", path.display())),
    };
    parse_metadata(text).ok_or_else(|| format!("{}: no Name and Version in its header", path.display()))
}

/// The origin a `direct_url.json` records, when the freeze line is known for it: a `file:` URL of
/// an archive (with its `hash`, which pip prints) or of a folder not installed editable.
fn direct_url(bytes: &[u8]) -> Result<(String, Option<String>), String> {
    let json: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| format!("is not JSON: {e}"))?;
    let url = json.get("url").and_then(serde_json::Value::as_str).ok_or("has no url")?;
    if !url.starts_with("file:") {
        return Err(format!("names {url}, not a local file"));
    }
    if json.get("subdirectory").is_some() {
        return Err("names a subdirectory".into());
    }
    let infos = ["archive_info", "dir_info", "vcs_info"].map(|key| json.get(key).filter(|v| v.is_object()));
    match infos {
        [Some(archive), None, None] => match archive.get("hash") {
            None => Ok((url.to_owned(), None)),
            Some(serde_json::Value::String(hash)) if hash.contains('=') => Ok((url.to_owned(), Some(hash.clone()))),
            Some(other) => Err(format!("has the hash {other}, which pip rejects")),
        },
        [None, Some(dir), None] => match dir.get("editable").map(serde_json::Value::as_bool) {
            None | Some(Some(false)) => Ok((url.to_owned(), None)),
            Some(Some(true)) => Err("says an editable install".into()),
            Some(None) => Err("has an editable flag that is not true or false".into()),
        },
        _ => Err("records no archive or folder, or more than one".into()),
    }
}

/// The lines `tool` prints for `dists`: pip sorts by name ignoring case and writes the name as
/// `METADATA` spells it, uv sorts and writes normalized names; two folders of one name are an `Err`.
fn freeze_lines(mut dists: Vec<Dist>, tool: &Tool) -> Result<Vec<String>, String> {
    let uv = matches!(tool, Tool::Uv { .. });
    let mut seen = std::collections::HashSet::new();
    if let Some(twice) = dists.iter().find(|d| !seen.insert(normalize_name(&d.name))) {
        return Err(format!("{} is installed twice", twice.name));
    }
    let shown = |d: &Dist| if uv { normalize_name(&d.name) } else { d.name.clone() };
    dists.sort_by_key(|d| if uv { normalize_name(&d.name) } else { d.name.to_lowercase() });
    Ok(dists
        .iter()
        .map(|d| match &d.direct {
            None => format!("{}=={}", shown(d), d.version),
            Some((url, Some(hash))) if !uv => format!("{} @ {url}#{hash}", shown(d)),
            Some((url, _)) => format!("{} @ {url}", shown(d)),
        })
        .collect())
}

/// A PEP 508 distribution name: ASCII letters and digits, with `.`, `_` and `-` inside.
fn is_valid_name(name: &str) -> bool {
    let ends_ok =
        name.starts_with(|c: char| c.is_ascii_alphanumeric()) && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    ends_ok && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// Whether `version` is a PEP 440 version in the form `packaging` and uv print it (release
/// numbers without leading zeros, `aN`/`bN`/`rcN`, `.postN`, `.devN`, a lowercase `+local` label
/// whose numeric parts have no leading zeros; no epoch), so the text read is the text printed.
fn is_canonical_version(version: &str) -> bool {
    let (public, local) = match version.split_once('+') {
        Some((public, local)) => (public, Some(local)),
        None => (version, None),
    };
    let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    let local_ok = local.is_none_or(|local| {
        local.split('.').all(|part| {
            !part.is_empty()
                && part.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
                && (number(part) || !part.bytes().all(|b| b.is_ascii_digit()))
        })
    });
    let mut rest = public;
    // The suffixes from the end: `.devN`, then `.postN`, then a pre-release on the last number.
    for suffix in [".dev", ".post"] {
        if let Some((head, n)) = rest.rsplit_once(suffix) {
            if !number(n) {
                return false;
            }
            rest = head;
        }
    }
    let mut parts: Vec<&str> = rest.split('.').collect();
    let Some(last) = parts.pop() else { return false };
    let last_ok = ["rc", "a", "b"]
        .iter()
        .find_map(|pre| last.split_once(pre))
        .map_or(number(last), |(n, pre)| number(n) && number(pre));
    local_ok && last_ok && parts.iter().all(|p| number(p))
}

#[cfg(test)]
mod tests;
