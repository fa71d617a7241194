//! Helpers shared by the app's test binaries.
#![allow(clippy::unwrap_used, dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// A recorded machine of the shared fixtures (`tests/fixtures/NAME`), for `--replay`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(name)
}

/// Says why a test did nothing; under CI (`CI` set) that fails it: CI must have what it needs.
pub fn skip(why: &str) {
    assert!(std::env::var_os("CI").is_none_or(|v| v.is_empty()), "CI must have this: {why}");
    eprintln!("skipped: {why}");
}

/// Writes an executable script. Linux refuses to exec a file that any process holds open for
/// writing (ETXTBSY), and a file written by this process stays open in every child another test
/// thread forks at that moment until that child execs. So the bytes go to a side file and
/// `install` (a child of its own) writes the script: no process that can fork holds it open.
pub fn write_executable(path: &Path, text: &str) {
    let side = path.with_extension("text");
    std::fs::write(&side, text).unwrap();
    let status = Command::new("install").arg("-m").arg("0755").arg(&side).arg(path).status().unwrap();
    assert!(status.success(), "install {} failed", path.display());
    std::fs::remove_file(&side).unwrap();
}
