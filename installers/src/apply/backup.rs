//! An environment's package list saved before a plan changes it, and what putting it back takes.
//!
//! The file is a requirements file a person can use by hand (`pip install --no-deps -r FILE`):
//! comment lines naming the environment's interpreter and the tool, the source's option lines
//! (`--no-index`, `--find-links DIR` with DIR absolute, `--index-url URL`), the freeze output
//! (`name==version`, `name @ URL` and `-e TARGET` lines), and last an end line with the count
//! (`# gpu-doctor-end: N packages`). [`Backup::parse`] takes nothing else: a list without its end
//! line (cut by a full disk or a copy), an option line among the packages, any line that is not a
//! pin, or a header with more than one interpreter is refused, since undo removes what the list
//! lacks and installs what it names.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use gpu_doctor_probes::host::MAX_FILE_BYTES;
use gpu_doctor_probes::parse::wheel::normalize_name;
use gpu_doctor_probes::write::{self, WriteError};

use crate::envtool::{Source, Tool};

/// The comment line that names the tool.
const TOOL_LINE: &str = "# gpu-doctor-tool: ";
/// The comment line that names the environment's interpreter (its path escaped, [`escape`]).
const PYTHON_LINE: &str = "# gpu-doctor-python: ";
/// The last line: how many package lines come before it.
const END_LINE: &str = "# gpu-doctor-end: ";
/// A comment line naming the index one package came from, where it is not the list's source
/// (`# gpu-doctor-origin: torch https://download.pytorch.org/whl/cpu`).
const ORIGIN_LINE: &str = "# gpu-doctor-origin: ";
/// A comment line naming a distribution whose files were not as its `RECORD` lists them when the
/// list was saved (`# gpu-doctor-not-whole: torch==2.5.1`): undo does not take it for damage of
/// the run and does not reinstall it. Lists without these lines (saved before them) are read as
/// lists of whole distributions.
const NOT_WHOLE_LINE: &str = "# gpu-doctor-not-whole: ";

/// The interpreter of the environment a saved package list belongs to; `None` when the text is no
/// gpu-doctor backup (or names no interpreter, or more than one).
pub fn python_of(text: &str) -> Option<PathBuf> {
    let mut named = text.lines().filter_map(|l| l.strip_prefix(PYTHON_LINE));
    match (named.next(), named.next()) {
        (Some(one), None) => unescape(one.trim_end_matches('\r')).map(PathBuf::from),
        _ => None,
    }
}

/// A path as one line of text: `%` as `%25`, a line feed as `%0A`, a carriage return as `%0D`.
fn escape(text: &str) -> String {
    text.replace('%', "%25").replace('\n', "%0A").replace('\r', "%0D")
}

/// [`escape`] undone; `None` for a `%` that starts no known escape.
fn unescape(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let code = rest.get(at + 1..at + 3)?;
        out.push(match code {
            "25" => '%',
            "0A" => '\n',
            "0D" => '\r',
            _ => return None,
        });
        rest = &rest[at + 3..];
    }
    out.push_str(rest);
    Some(out)
}

/// Reads a saved package list: a regular file (not a FIFO, a device or a folder) of at most
/// [`MAX_FILE_BYTES`], in UTF-8.
pub fn read(path: &Path) -> Result<String, String> {
    let shown = path.display();
    let regular = |meta: &std::fs::Metadata| {
        if meta.is_file() { Ok(()) } else { Err(format!("{shown} is not a regular file; a package list is one")) }
    };
    // Looked at before it is opened: opening a FIFO for reading waits for a writer.
    regular(&std::fs::metadata(path).map_err(|e| format!("could not read {shown}: {e}"))?)?;
    let file = std::fs::File::open(path).map_err(|e| format!("could not read {shown}: {e}"))?;
    regular(&file.metadata().map_err(|e| format!("could not read {shown}: {e}"))?)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES as u64 + 1).read_to_end(&mut bytes).map_err(|e| format!("could not read {shown}: {e}"))?;
    if bytes.len() > MAX_FILE_BYTES {
        return Err(format!("{shown} is larger than {MAX_FILE_BYTES} bytes: no package list gpu-doctor saved"));
    }
    String::from_utf8(bytes).map_err(|_| format!("{shown} is not UTF-8 text: no package list gpu-doctor saved"))
}

/// A saved package list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Backup {
    pub(crate) tool: Tool,
    pub(crate) source: Source,
    /// The freeze lines, in their order.
    pub(crate) pins: Vec<String>,
    /// The index each of some packages came from (normalized name, https URL), where that is not
    /// `source`: undo installs them from there.
    pub(crate) origins: Vec<(String, String)>,
}

/// A saved package list read back: the interpreter it was saved for, and the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Saved {
    pub(crate) python: PathBuf,
    /// The saved tool is `uv`: undo runs the uv on PATH (never a path the file names).
    pub(crate) uv: bool,
    pub(crate) source: Source,
    pub(crate) pins: Vec<String>,
    /// The index of a package (by normalized name) that does not come from `source`.
    pub(crate) origins: HashMap<String, String>,
    /// The `name==version` lines (name normalized) whose files were not whole when it was saved.
    pub(crate) not_whole: HashSet<String>,
}

impl Backup {
    /// The file's text for the environment of `python`; `Err` for what one line cannot hold (a
    /// `--find-links` folder with a line break, a path that is not UTF-8).
    #[cfg(test)]
    pub(crate) fn to_text(&self, python: &Path) -> Result<String, String> {
        self.to_text_with(python, &[])
    }

    /// [`Backup::to_text`], with a line for each of `not_whole` (`name==version` pins of
    /// distributions whose files were not as their `RECORD` lists them).
    pub(crate) fn to_text_with(&self, python: &Path, not_whole: &[String]) -> Result<String, String> {
        let python = python.to_str().ok_or_else(|| format!("{}: a path that is not UTF-8", python.display()))?;
        let tool = match &self.tool {
            Tool::Uv { .. } => "uv",
            Tool::Pip | Tool::Conda { .. } => "pip",
        };
        let mut out = format!(
            "# gpu-doctor: the packages of {} before a plan changed them.\n\
             # Put back with `gpu-doctor fix --undo THIS_FILE`, or by hand: pip install --no-deps -r THIS_FILE\n\
             {PYTHON_LINE}{}\n{TOOL_LINE}{tool}\n",
            escape(python),
            escape(python)
        );
        if let Some(dir) = &self.source.find_links {
            let dir = std::path::absolute(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let text = dir.to_str().ok_or_else(|| format!("{}: a path that is not UTF-8", dir.display()))?;
            if text.contains(['\n', '\r']) {
                return Err(format!("the wheel folder {text:?} has a line break in its name"));
            }
            out.push_str(&format!("--no-index\n--find-links {text}\n"));
        } else if let Some(url) = &self.source.index_url {
            if url.contains(char::is_whitespace) {
                return Err(format!("the index {url:?} has white space in it"));
            }
            out.push_str(&format!("--index-url {url}\n"));
        }
        for (name, url) in &self.origins {
            if !is_origin(name, url) {
                return Err(format!("the origin {url:?} of {name:?} cannot be saved"));
            }
            out.push_str(&format!("{ORIGIN_LINE}{name} {url}\n"));
        }
        // One that is no plain pin is left out rather than the whole list: undo then takes it for
        // whole, and at worst reinstalls it.
        for pin in not_whole.iter().filter(|p| is_name_version(p)) {
            out.push_str(&format!("{NOT_WHOLE_LINE}{pin}\n"));
        }
        for pin in &self.pins {
            if let Err(why) = check_pin(pin) {
                return Err(format!("the installed package line {pin:?} cannot be saved: {why}"));
            }
            out.push_str(pin);
            out.push('\n');
        }
        out.push_str(&format!("{END_LINE}{} packages\n", self.pins.len()));
        Ok(out)
    }
}

impl Saved {
    /// Reads the text of a saved list; `Err` says which line is refused and why.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let mut python: Option<PathBuf> = None;
        let mut uv = None;
        let mut source = Source::default();
        let mut no_index = false;
        let mut pins: Vec<String> = Vec::new();
        let mut origins = HashMap::new();
        let mut not_whole = HashSet::new();
        let mut end: Option<usize> = None;
        for (number, line) in (1..).zip(text.split('\n')) {
            let line = line.strip_suffix('\r').unwrap_or(line);
            let refuse = |why: String| Err(format!("line {number}: {why}"));
            if line.trim().is_empty() {
                continue;
            }
            if end.is_some() {
                return refuse("a line after the end line: not a list gpu-doctor saved".into());
            }
            if let Some(path) = line.strip_prefix(PYTHON_LINE) {
                if python.is_some() {
                    return refuse("a second interpreter line".into());
                }
                let Some(path) = unescape(path).filter(|p| Path::new(p).is_absolute()) else {
                    return refuse(format!("the interpreter {path:?} is no absolute path"));
                };
                python = Some(PathBuf::from(path));
            } else if let Some(tool) = line.strip_prefix(TOOL_LINE) {
                if uv.is_some() {
                    return refuse("a second tool line".into());
                }
                // Lists saved before the end line named uv's path too: it is never run.
                uv = Some(match tool.split_whitespace().next() {
                    Some("pip") => false,
                    Some("uv") => true,
                    _ => return refuse(format!("an unknown tool {tool:?}")),
                });
            } else if let Some(origin) = line.strip_prefix(ORIGIN_LINE) {
                match origin.split_once(' ') {
                    Some((name, url)) if is_origin(name, url) && !origins.contains_key(name) => {
                        origins.insert(name.to_owned(), url.to_owned());
                    }
                    _ => return refuse(format!("{origin:?} is not one package's https index")),
                }
            } else if let Some(pin) = line.strip_prefix(NOT_WHOLE_LINE) {
                if !is_name_version(pin) {
                    return refuse(format!("{pin:?} is no name==version pin"));
                }
                let (key, rest) = key_of(pin);
                not_whole.insert(format!("{key}{rest}"));
            } else if let Some(count) = line.strip_prefix(END_LINE) {
                let count = count.strip_suffix(" packages").and_then(|n| n.parse::<usize>().ok());
                match count {
                    Some(n) if n == pins.len() => end = Some(n),
                    Some(n) => return refuse(format!("the end line counts {n} packages, the list has {}", pins.len())),
                    None => return refuse("an end line without its count".into()),
                }
            } else if line.starts_with('#') {
            } else if line.starts_with("--") && !line.starts_with("--editable ") {
                if !pins.is_empty() {
                    return refuse(format!("an option line among the packages: {line:?}"));
                }
                match line.split_once(' ') {
                    None if line == "--no-index" && !no_index => no_index = true,
                    Some(("--find-links", dir)) if source.find_links.is_none() && Path::new(dir).is_absolute() => {
                        source.find_links = Some(PathBuf::from(dir));
                    }
                    Some(("--index-url", url))
                        if source.index_url.is_none()
                            && (url.starts_with("https://") || url.starts_with("http://"))
                            && !url.contains(char::is_whitespace) =>
                    {
                        source.index_url = Some(url.to_owned());
                    }
                    _ => {
                        return refuse(format!(
                            "{line:?} is not an option gpu-doctor saves (--no-index, --find-links with an absolute \
                             folder, --index-url with an http(s) URL), so it is not passed to pip"
                        ));
                    }
                }
            } else {
                check_pin(line).map_err(|why| format!("line {number}: {line:?} {why}"))?;
                pins.push(line.to_owned());
            }
        }
        let python = python.ok_or("no interpreter line: not a package list gpu-doctor saved")?;
        if end.is_none() {
            return Err("no end line: the list is incomplete (cut by a full disk or a copy) or was not saved by \
                        this version of gpu-doctor, and undo would remove every package it lacks"
                .into());
        }
        if source.find_links.is_some() != no_index || (source.find_links.is_some() && source.index_url.is_some()) {
            return Err("--find-links and --no-index come together, and without --index-url".into());
        }
        let mut seen = HashSet::new();
        if let Some(twice) = pins.iter().find(|pin| !seen.insert(name_of(pin))) {
            return Err(format!("{} is in the list twice", name_of(twice)));
        }
        if let Some(name) = origins.keys().find(|name| !seen.contains(*name)) {
            return Err(format!("an origin for {name}, which the list does not have"));
        }
        Ok(Saved { python, uv: uv.unwrap_or(false), source, pins, origins, not_whole })
    }
}

/// Whether `pin` is a plain `name==version` line.
fn is_name_version(pin: &str) -> bool {
    pin.contains("==") && !pin.contains(" @ ") && !pin.starts_with('-') && check_pin(pin).is_ok()
}

/// Whether `name` (normalized) and `url` (an https URL without white space) make an origin line.
fn is_origin(name: &str, url: &str) -> bool {
    !name.is_empty()
        && normalize_name(name) == name
        && url.starts_with("https://")
        && url.len() > "https://".len()
        && !url.contains(char::is_whitespace)
}

/// `Ok` for a line pip's freeze prints for one distribution: `name==version`, `name @ URL` or an
/// editable `-e TARGET`; `Err` says why not.
fn check_pin(line: &str) -> Result<(), String> {
    let plain = |s: &str| !s.is_empty() && !s.starts_with('-') && !s.contains(char::is_whitespace);
    if let Some(target) = line.strip_prefix("-e ").or_else(|| line.strip_prefix("--editable ")) {
        return if plain(target) { Ok(()) } else { Err("is an editable line without one plain target".into()) };
    }
    let name_ok = |n: &str| {
        !n.is_empty()
            && n.starts_with(|c: char| c.is_ascii_alphanumeric())
            && n.ends_with(|c: char| c.is_ascii_alphanumeric())
            && n.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    };
    if let Some((name, version)) = line.split_once("==") {
        let version_ok = !version.is_empty()
            && version.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '!' | '_' | '-'));
        return if name_ok(name) && version_ok { Ok(()) } else { Err("is not a name==version pin".into()) };
    }
    if let Some((name, url)) = line.split_once(" @ ") {
        let url_ok = plain(url) && url.contains("://");
        return if name_ok(name) && url_ok { Ok(()) } else { Err("is not a name @ URL line".into()) };
    }
    Err("is not a package pin (name==version, name @ URL, -e TARGET)".into())
}

/// Writes a backup's `text` to `path` (a new file beside the apply log) atomically: all of it, or
/// nothing under that name. Never through a symlink, never over a file already there.
pub(crate) fn save(path: &Path, text: &str) -> Result<(), WriteError> {
    save_with(path, text, &mut write::write_all)
}

fn save_with(path: &Path, text: &str, writer: &mut write::Writer<'_>) -> Result<(), WriteError> {
    write::write_own_file_with(path, text.as_bytes(), false, writer)
}

/// The normalized name of a freeze line (`Torch_Vision==0.2` → `torch-vision`; `x @ file:…` → `x`;
/// an editable `-e …#egg=x` → `x`).
pub fn name_of(line: &str) -> String {
    let line = line.trim();
    if let Some(spec) = line.strip_prefix("-e ").or_else(|| line.strip_prefix("--editable ")) {
        let egg = spec.rsplit_once("#egg=").map_or(spec, |(_, egg)| egg);
        return normalize_name(crate::envtool::package_name(egg.trim()));
    }
    normalize_name(crate::envtool::package_name(line))
}

/// A freeze line as its normalized name and the rest as written (`==2.5.1+cu121`).
pub(crate) fn key_of(line: &str) -> (String, String) {
    let line = line.trim();
    let rest = line[crate::envtool::package_name(line).len()..].trim();
    // A requirement's extras (`jax[cuda12]==0.7.2`) are not part of what is installed.
    let rest = match rest.strip_prefix('[').and_then(|r| r.split_once(']')) {
        Some((_, after)) => after.trim(),
        None => rest,
    };
    (name_of(line), rest.to_owned())
}

/// What undoing takes: the distributions to remove (installed now, not in the backup) and the
/// backup's lines to install again (missing now, or installed at another version). Linear in the
/// number of lines.
pub(crate) fn differences(backup: &[String], now: &[String]) -> (Vec<String>, Vec<String>) {
    let saved: HashSet<String> = backup.iter().map(|b| name_of(b)).collect();
    let installed: HashMap<String, String> = now.iter().map(|line| key_of(line)).collect();
    let remove = now.iter().map(|line| name_of(line)).filter(|name| !saved.contains(name)).collect();
    let reinstall = backup
        .iter()
        .filter(|b| {
            let (name, rest) = key_of(b);
            installed.get(&name) != Some(&rest)
        })
        .cloned()
        .collect();
    (remove, reinstall)
}

/// How the package list `now` differs from `before`, one line per distribution (`torch:
/// ==2.5.1+cu121 before, ==2.5.1+cpu now`), in `before`'s order then `now`'s; empty when they
/// are the same.
pub(crate) fn changes(before: &[String], now: &[String]) -> Vec<String> {
    let was: HashMap<String, String> = before.iter().map(|l| key_of(l)).collect();
    let is: HashMap<String, String> = now.iter().map(|l| key_of(l)).collect();
    let mut out = Vec::new();
    for line in before {
        let (name, rest) = key_of(line);
        match is.get(&name) {
            None => out.push(format!("{name}: {rest} before, not installed now")),
            Some(now) if *now != rest => out.push(format!("{name}: {rest} before, {now} now")),
            Some(_) => {}
        }
    }
    for line in now {
        let (name, rest) = key_of(line);
        if !was.contains_key(&name) {
            out.push(format!("{name}: not installed before, {rest} now"));
        }
    }
    out
}

/// Whether every line of `pins` is in `now` (names compared as pip does, the rest as written).
pub(crate) fn has_all(now: &[String], pins: &[String]) -> bool {
    let installed: HashSet<(String, String)> = now.iter().map(|l| key_of(l)).collect();
    pins.iter().all(|pin| installed.contains(&key_of(pin)))
}

/// The freeze lines of a freeze command's standard output (no comments, no blank lines).
pub(crate) fn freeze_lines(lines: &[String]) -> Vec<String> {
    lines.iter().map(|l| l.trim()).filter(|l| !l.is_empty() && !l.starts_with('#')).map(str::to_owned).collect()
}

/// A pin as arguments: an editable line is two (`-e`, its target).
pub(crate) fn pin_args(pin: &str) -> Vec<String> {
    match pin.split_once(' ') {
        Some((flag @ ("-e" | "--editable"), target)) => vec![flag.to_owned(), target.trim().to_owned()],
        _ => vec![pin.to_owned()],
    }
}

#[cfg(test)]
mod tests;
