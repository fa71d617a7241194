//! End-to-end tests of gpu-doctor over recorded machines and the real binary; see `tests/`.
//!
//! Scenario fixtures live in `tests/fixtures/<name>/host.json` (the `record-fixture` format).

use std::path::PathBuf;

/// The folder holding the replay scenarios.
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

pub mod fleet;
