//! The window's settings, `settings.json` in the config folder: what the user chose that outlives a
//! run (the interpreters they added). Read and written only on worker threads; the folder is a
//! parameter so tests use a temporary one.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::storage;

/// The settings file's name inside the config folder.
pub const FILE_NAME: &str = "settings.json";

/// What the window remembers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Interpreters (or environment folders) added with "Add interpreter…", probed as `--python`.
    pub extra_pythons: Vec<PathBuf>,
    /// Fields this version does not know (written by a newer one), kept as they were.
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

/// Reads `dir/settings.json`. A missing file is the defaults; an unreadable or invalid one is an
/// error that says which file and why (the caller reports it and goes on with the defaults).
pub fn load(dir: &Path) -> Result<Settings, String> {
    let path = dir.join(FILE_NAME);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Settings::default()),
        Err(e) => return Err(format!("could not read {}: {e}", path.display())),
    };
    serde_json::from_slice(&bytes)
        .map_err(|e| format!("{} is not valid settings ({e}); it was ignored", path.display()))
}

/// Writes `dir/settings.json` atomically (a failed write leaves the old file whole).
pub fn save(dir: &Path, settings: &Settings) -> Result<(), String> {
    let text = serde_json::to_vec_pretty(settings).map_err(|e| format!("could not encode the settings: {e}"))?;
    storage::write_atomic(&dir.join(FILE_NAME), &text)
}

/// The config folder, or why there is none.
pub fn dir() -> Result<PathBuf, String> {
    storage::config_dir().ok_or_else(|| "no home folder is known, so settings are not remembered".to_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_missing_file_is_the_defaults_and_a_saved_one_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path()).unwrap(), Settings::default());
        let s = Settings { extra_pythons: vec!["/opt/py/bin/python3".into()], ..Settings::default() };
        save(&dir.path().join("nested"), &s).unwrap();
        assert_eq!(load(&dir.path().join("nested")).unwrap(), s);
    }

    #[test]
    fn a_corrupt_file_is_an_error_naming_it_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        for bad in [&b"{\"extra_pythons\": [1, 2"[..], b"\xff\xfe", b"[]", b"{\"extra_pythons\": \"/usr/bin\"}"] {
            std::fs::write(dir.path().join(FILE_NAME), bad).unwrap();
            let err = load(dir.path()).unwrap_err();
            assert!(err.contains(FILE_NAME) && err.contains("ignored"), "{err}");
        }
    }

    #[test]
    fn unknown_fields_survive_a_save() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE_NAME), r#"{"extra_pythons": [], "theme": "dark"}"#).unwrap();
        let mut s = load(dir.path()).unwrap();
        s.extra_pythons.push("/usr/bin/python3.12".into());
        save(dir.path(), &s).unwrap();
        let text = std::fs::read_to_string(dir.path().join(FILE_NAME)).unwrap();
        assert!(text.contains("\"theme\": \"dark\"") && text.contains("python3.12"), "{text}");
    }
}
