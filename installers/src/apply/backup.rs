//! An environment's package list saved before a plan changes it, and what putting it back takes.
//!
//! The file is a requirements file a person can use by hand (`pip install --no-deps -r FILE`):
//! comment lines naming the environment and the tool, the source's option lines (`--no-index`,
//! `--find-links DIR`, `--index-url URL`), then the freeze output (`name==version` lines).

use std::path::{Path, PathBuf};

use gpu_doctor_probes::parse::wheel::normalize_name;
use gpu_doctor_probes::write::{self, WriteError};

use crate::envtool::{Source, Tool};

/// The comment line that names the tool.
const TOOL_LINE: &str = "# gpu-doctor-tool: ";
/// The comment line that names the environment's interpreter.
const PYTHON_LINE: &str = "# gpu-doctor-python: ";

/// The interpreter of the environment a saved package list belongs to; `None` when the text is no
/// gpu-doctor backup.
pub fn python_of(text: &str) -> Option<PathBuf> {
    text.lines().find_map(|l| l.strip_prefix(PYTHON_LINE)).map(|p| PathBuf::from(p.trim_end_matches(['\r', '\n'])))
}

/// A saved package list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Backup {
    pub(crate) tool: Tool,
    pub(crate) source: Source,
    /// The freeze lines, in their order.
    pub(crate) pins: Vec<String>,
}

impl Backup {
    pub(crate) fn to_text(&self, python: &Path) -> String {
        let tool = match &self.tool {
            Tool::Uv { uv } => format!("uv {}", uv.display()),
            Tool::Pip | Tool::Conda { .. } => "pip".to_owned(),
        };
        let mut out = format!(
            "# gpu-doctor: the packages of {} before a plan changed them.\n\
             # Put back with `gpu-doctor fix --undo THIS_FILE`, or by hand: pip install --no-deps -r THIS_FILE\n\
             {PYTHON_LINE}{}\n{TOOL_LINE}{tool}\n",
            python.display(),
            python.display()
        );
        let mut args = self.source.args().into_iter().peekable();
        while let Some(arg) = args.next() {
            match args.peek() {
                Some(value) if arg.starts_with("--") && !value.starts_with("--") => {
                    out.push_str(&format!("{arg} {value}\n"));
                    args.next();
                }
                _ => out.push_str(&format!("{arg}\n")),
            }
        }
        for pin in &self.pins {
            out.push_str(pin);
            out.push('\n');
        }
        out
    }

    pub(crate) fn parse(text: &str) -> Self {
        let mut backup = Backup { tool: Tool::Pip, source: Source::default(), pins: Vec::new() };
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if let Some(tool) = line.strip_prefix(TOOL_LINE) {
                if let Some(uv) = tool.strip_prefix("uv ") {
                    backup.tool = Tool::Uv { uv: PathBuf::from(uv) };
                }
            } else if line.starts_with('#') || line == "--no-index" {
            } else if let Some(dir) = line.strip_prefix("--find-links ") {
                backup.source.find_links = Some(PathBuf::from(dir.trim()));
            } else if let Some(url) = line.strip_prefix("--index-url ") {
                backup.source.index_url = Some(url.trim().to_owned());
            } else {
                backup.pins.push(line.to_owned());
            }
        }
        backup
    }
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

/// What undoing takes: the distributions to remove (installed now, not in the backup) and the
/// backup's lines to install again (missing now, or installed at another version).
pub(crate) fn differences(backup: &[String], now: &[String]) -> (Vec<String>, Vec<String>) {
    // The same distribution at the same version: names compared as pip does, the rest as written.
    let same = |a: &str, b: &str| {
        let rest = |l: &str| l.trim()[crate::envtool::package_name(l.trim()).len()..].trim().to_owned();
        name_of(a) == name_of(b) && rest(a) == rest(b)
    };
    let remove = now
        .iter()
        .filter(|line| !backup.iter().any(|b| name_of(b) == name_of(line)))
        .map(|line| name_of(line))
        .collect();
    let reinstall = backup.iter().filter(|b| !now.iter().any(|line| same(b, line))).cloned().collect();
    (remove, reinstall)
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
mod tests {
    use super::*;

    #[test]
    fn the_file_reads_back_as_written() {
        let backup = Backup {
            tool: Tool::Uv { uv: "/usr/bin/uv".into() },
            source: Source { index_url: None, find_links: Some("/w h".into()) },
            pins: vec!["pip==23.2.1".into(), "torch==2.5.1+cu121".into(), "x @ file:///tmp/x.whl".into()],
        };
        let text = backup.to_text(Path::new("/e/bin/python"));
        assert!(text.contains("\n--no-index\n--find-links /w h\n"), "{text}");
        assert_eq!(Backup::parse(&text), backup);
        assert_eq!(python_of(&text), Some(PathBuf::from("/e/bin/python")));
        assert_eq!(python_of("torch==2.5.1\n"), None);
        let pip = Backup {
            tool: Tool::Pip,
            source: Source { index_url: Some("https://download.pytorch.org/whl/cu124".into()), find_links: None },
            pins: vec!["torch==2.5.1".into()],
        };
        assert_eq!(Backup::parse(&pip.to_text(Path::new("/e/bin/python"))), pip);
    }

    /// What a full disk does: part of the bytes go in, then ENOSPC.
    fn full_disk(file: &mut std::fs::File, bytes: &[u8]) -> std::io::Result<()> {
        use std::io::Write;
        file.write_all(&bytes[..bytes.len() / 2])?;
        Err(std::io::Error::from(std::io::ErrorKind::StorageFull))
    }

    #[test]
    fn a_full_disk_leaves_no_backup_that_looks_valid() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("apply.backup.txt");
        let backup = Backup {
            tool: Tool::Pip,
            source: Source::default(),
            pins: (0..500).map(|i| format!("package-{i}==1.0")).collect(),
        };
        let text = backup.to_text(Path::new("/e/bin/python"));
        let err = save_with(&path, &text, &mut full_disk).unwrap_err();
        assert!(err.to_string().contains("could not write"), "{err}");
        // No file under the backup's name (a truncated one would parse as a shorter, valid list),
        // and no temporary left beside it.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        // A backup already there is never replaced, whole or in part.
        std::fs::write(&path, "# gpu-doctor-python: /e/bin/python\ntorch==2.5.1\n").unwrap();
        assert!(save_with(&path, &text, &mut full_disk).is_err());
        assert!(save(&path, &text).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "# gpu-doctor-python: /e/bin/python\ntorch==2.5.1\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // With room, the whole list is there.
        let fresh = dir.path().join("other.backup.txt");
        save(&fresh, &text).unwrap();
        assert_eq!(Backup::parse(&std::fs::read_to_string(&fresh).unwrap()), backup);
    }

    #[cfg(unix)]
    #[test]
    fn a_backup_is_never_written_through_a_planted_link() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let path = dir.path().join("apply.backup.txt");
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        assert!(save(&path, "torch==2.5.1\n").is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    }

    #[test]
    fn undoing_removes_what_is_new_and_reinstalls_what_changed() {
        let backup: Vec<String> = ["pip==23.2.1", "torch==2.5.1+cu121", "Torch_Vision==0.20.1+cu121", "numpy==2.1.0"]
            .map(str::to_owned)
            .into();
        let now: Vec<String> =
            ["pip==23.2.1", "torch==2.5.1+cpu", "torch-vision==0.20.1+cu121", "jax==0.4.35"].map(str::to_owned).into();
        let (remove, reinstall) = differences(&backup, &now);
        assert_eq!(remove, ["jax"]);
        assert_eq!(reinstall, ["torch==2.5.1+cu121", "numpy==2.1.0"]);
        assert_eq!(differences(&backup, &backup), (vec![], vec![]));
    }

    #[test]
    fn names_are_compared_as_pip_does() {
        assert_eq!(name_of("Jax_CUDA12.plugin==0.4.35"), "jax-cuda12-plugin");
        assert_eq!(name_of("mypkg @ file:///tmp/mypkg-1.0-py3-none-any.whl"), "mypkg");
        assert_eq!(name_of("-e git+https://x/y.git@abc#egg=My_Pkg"), "my-pkg");
        assert_eq!(pin_args("-e /src/pkg"), ["-e", "/src/pkg"]);
        assert_eq!(pin_args("torch==2.5.1"), ["torch==2.5.1"]);
    }
}
