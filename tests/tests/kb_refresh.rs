//! `scripts/kb-refresh` (issue 28) derives knowledge-base rows from PyPI's metadata and the wheels'
//! own files. Its parsers run here on the stored real samples under `tests/kb-refresh/` (trimmed PyPI
//! JSON, wheel METADATA, TensorFlow's build_info.py, CuPy's _wheel.json, torch's build script), with
//! no network: a change to PyPI's formats or to the parsers that breaks a derivation fails CI.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_refresh_parsers_read_the_stored_samples() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new("python3")
        .arg(root.join("scripts/kb-refresh"))
        .arg("selftest")
        .output()
        .expect("python3 runs (CI installs it)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "kb-refresh selftest failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("checks passed"), "{stdout}");
}
