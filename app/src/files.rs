//! The one writer of every file gpu-doctor makes: reports (`report -o`), benchmark runs
//! (`bench -o`), fixtures (`record-fixture`), and the window's settings, history and screenshots.
//!
//! The writing itself is `gpu_doctor_probes::write` (shared with the installers' backups): a
//! regular file is replaced atomically, anything else written through; `record-fixture` is
//! stricter (`write_own_file`). Here: the binary's folders, its errors as `anyhow`, standard output.

use std::fs::Metadata;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use gpu_doctor_probes::write::{self, WriteError};

/// The file is already there and the caller did not ask to replace it.
#[derive(Debug, thiserror::Error)]
#[error("{} already exists; add --force to replace it", .0.display())]
pub struct AlreadyThere(pub PathBuf);

/// `$XDG_CONFIG_HOME/gpu-doctor` (or `~/.config/gpu-doctor`; `%APPDATA%\gpu-doctor` on Windows);
/// `None` when no home folder is known.
pub fn config_dir() -> Option<PathBuf> {
    base_dir("XDG_CONFIG_HOME", ".config", "APPDATA")
}

/// `$XDG_DATA_HOME/gpu-doctor` (or `~/.local/share/gpu-doctor`; `%LOCALAPPDATA%\gpu-doctor` on
/// Windows); `None` when no home folder is known.
pub fn data_dir() -> Option<PathBuf> {
    base_dir("XDG_DATA_HOME", ".local/share", "LOCALAPPDATA")
}

fn base_dir(xdg: &str, home_rel: &str, windows: &str) -> Option<PathBuf> {
    // `GPU_DOCTOR_HOME` puts everything in one folder: for tests, and for portable use.
    if let Some(dir) = std::env::var_os("GPU_DOCTOR_HOME").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let base = if cfg!(windows) {
        std::env::var_os(windows).map(PathBuf::from)
    } else {
        std::env::var_os(xdg)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(home_rel)))
    };
    base.map(|b| b.join("gpu-doctor"))
}

/// Writes `bytes` to `path` through the one writer (`gpu_doctor_probes::write`): a regular file is
/// replaced atomically and keeps its permissions, a symlink's target is written in place, a device
/// or fifo is written into, `-` and `/dev/stdout`, `/dev/fd/N` are the streams they name.
pub fn write_file(path: &Path, bytes: impl AsRef<[u8]>) -> Result<()> {
    Ok(write::write_file(path, bytes)?)
}

/// Writes a file gpu-doctor owns (a fixture's `host.json`): never through a symlink or into
/// anything but a regular file, and an existing file only when `replace` (else `AlreadyThere`).
pub fn write_own_file(path: &Path, bytes: impl AsRef<[u8]>, replace: bool) -> Result<()> {
    write::write_own_file(path, bytes, replace).map_err(own)
}

/// Whether `write_own_file` may write `path`: the metadata of the file it would replace, or the
/// reason it may not (an `AlreadyThere` when only `replace` is missing).
pub fn check_own_file(path: &Path, replace: bool) -> Result<Option<Metadata>> {
    write::check_own_file(path, replace).map_err(own)
}

/// The writer's error, with `AlreadyThere` as the type `exit.rs` looks for.
fn own(e: WriteError) -> anyhow::Error {
    match e {
        WriteError::AlreadyThere(path) => AlreadyThere(path).into(),
        e => e.into(),
    }
}

/// Writes to standard output. A reader that stopped reading (`gpu-doctor check | head`) is not an
/// error: the output ends there, quietly.
pub(crate) fn to_stdout(bytes: &[u8]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        result => result.context("could not write to standard output"),
    }
}

/// Writes `bytes` to `output` (saying so unless quiet, or when it names a stream: `-` and
/// `/dev/stdout` are standard output, see `write::stream_of`), or to standard output.
pub(crate) fn emit(output: Option<&std::path::Path>, bytes: impl AsRef<[u8]>, quiet: bool) -> Result<()> {
    match output {
        Some(path) => {
            write_file(path, bytes)?;
            if !quiet && write::stream_of(path).is_none() {
                eprintln!("wrote {}", crate::render::text::clean(&path.display().to_string()));
            }
        }
        None => to_stdout(bytes.as_ref())?,
    }
    Ok(())
}
