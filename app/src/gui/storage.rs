//! Where the window keeps what outlives a run: settings in the config folder, past benchmark runs
//! in the data folder. Only worker threads call the file functions here.

use std::path::Path;

pub use crate::files::{config_dir, data_dir};

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
