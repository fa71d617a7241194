//! Replay scenarios: each `tests/fixtures/<name>/host.json` is a recorded (or hand-written) machine;
//! its snapshot is compared with the stored JSON snapshot in `tests/snapshots/`.
//!
//! To accept a changed snapshot after reviewing it: `INSTA_UPDATE=always cargo test -p gpu-doctor-tests`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use gpu_doctor_probes::host::ReplayHost;
use gpu_doctor_probes::probe::{Options, collect};
use gpu_doctor_probes::{Probed, Snapshot};
use gpu_doctor_tests::fixtures_dir;

#[allow(dead_code)] // until the scenarios land
fn scenario(name: &str) -> Snapshot {
    let host = ReplayHost::load(&fixtures_dir().join(name)).unwrap();
    let snap = collect(&host, &Options::default());
    let unrecorded: Vec<_> = snap.trace.iter().filter(|t| t.detail.contains("not recorded")).collect();
    assert!(unrecorded.is_empty(), "{name}: the fixture misses answers the probes asked for: {unrecorded:#?}");
    snap
}

#[allow(dead_code)]
fn check(name: &str) -> Snapshot {
    let snap = scenario(name);
    insta::assert_json_snapshot!(name, snap, { ".tool_version" => "[version]" });
    snap
}

#[test]
fn every_fixture_folder_has_a_test() {
    let mut names: Vec<String> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("host.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, SCENARIOS, "add a #[test] for each fixture folder (and list it in SCENARIOS)");
}

const SCENARIOS: &[&str] = &[];

fn _unused(_: Probed<()>) {}
