//! Where the window keeps what outlives a run: settings in the config folder, past benchmark runs
//! in the data folder. Only worker threads call the file functions here.

use std::path::{Path, PathBuf};

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

/// Writes a file through a temporary sibling (`crate::files::write_file`), creating its folder first.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("could not create {}: {e}", dir.display()))?;
    }
    crate::files::write_file(path, bytes).map_err(|e| format!("{e:#}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn atomic_write_creates_the_folder_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/settings.json");
        write_atomic(&path, b"{}").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{}");
        assert!(!path.with_extension("tmp-gpu-doctor").exists());
    }
}
