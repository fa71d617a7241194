//! End-to-end tests of gpu-doctor over recorded machines and the real binary; see `tests/`.
//!
//! Scenario fixtures live in `tests/fixtures/<name>/host.json` (the `record-fixture` format).

use std::path::PathBuf;

/// The folder holding the replay scenarios.
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// `cargo metadata --no-deps` of the workspace, for the tests that check its layout.
///
/// # Panics
/// When cargo cannot be run or answers with an error (a test helper: the test fails there).
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub fn workspace_metadata() -> serde_json::Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."))
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

pub mod fleet;
