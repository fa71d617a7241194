//! `gpu-doctor compare` end to end: reports written by the binary itself from a replayed machine,
//! a few of them changed, compared in every format, with the exit codes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

fn bin() -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_gpu-doctor"));
    cmd.env_remove("NO_COLOR");
    cmd
}

/// A report of the replayed `consumer-gpu-torch-venv` machine, as JSON.
fn base_report() -> Value {
    report_with(&[])
}

/// [`base_report`] with more `report` arguments.
fn report_with(args: &[&str]) -> Value {
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/consumer-gpu-torch-venv");
    let out = bin().arg("--replay").arg(fixture).args(["report", "--format", "json"]).args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Writes `host.json` with the host name set and `edit` applied.
fn write(dir: &Path, base: &Value, host: &str, edit: impl FnOnce(&mut Value)) {
    let mut r = base.clone();
    r["snapshot"]["system"]["value"]["host_name"] = Value::from(host);
    edit(&mut r);
    std::fs::write(dir.join(format!("{host}.json")), serde_json::to_string(&r).unwrap()).unwrap();
}

fn compare(args: &[&str]) -> Output {
    bin().arg("compare").args(args).output().unwrap()
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn compare_marks_the_odd_node_in_every_format_and_exits_by_its_findings() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let base = base_report();
    for h in ["a1", "a2", "a3"] {
        write(d, &base, h, |_| {});
    }
    // Host text from outside, with markup and an escape sequence.
    write(d, &base, "odd<b>|\u{1b}[2J", |r| r["snapshot"]["driver"]["value"]["version"] = Value::from("535.104.05"));
    let dir_arg = d.to_str().unwrap();

    let json = compare(&[dir_arg, "--format", "json"]);
    assert_eq!(json.status.code(), Some(0), "a differing driver is a warning: {}", text(&json));
    let c: Value = serde_json::from_str(&text(&json)).unwrap();
    let ids: Vec<(&str, &str)> = c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["id"].as_str().unwrap(), f["key"].as_str().unwrap()))
        .collect();
    assert_eq!(ids, [("fleet.fact_differs", "driver.version")]);

    let plain = text(&compare(&[dir_arg, "--color", "never"]));
    assert!(plain.contains("*535.104.05"), "{plain}");
    assert!(!plain.contains('\u{1b}'), "no escape sequence, not even the node's: {plain}");
    let coloured = text(&compare(&[dir_arg, "--color", "always"]));
    assert!(coloured.contains("\u{1b}[33m535.104.05"), "{coloured}");
    assert!(!coloured.contains("\u{1b}[2J"), "the node's own escape is shown, not sent: {coloured}");

    let md = text(&compare(&[dir_arg, "--format", "markdown"]));
    assert!(md.contains("odd&lt;b&gt;&#124;"), "{md}");
    assert!(md.contains("**535.104.05**"), "{md}");
    let html = text(&compare(&[dir_arg, "--format", "html"]));
    assert!(html.contains("odd&lt;b&gt;|"), "{html}");
    assert!(html.contains("<td class=\"differs\">535.104.05</td>"), "{html}");
    assert!(!html.contains("<b>"), "{html}");

    // A file that is not a report is a node without a report: an error-level fleet finding.
    std::fs::write(d.join("broken.json"), "{").unwrap();
    let out = compare(&[dir_arg, "--format", "json", "-o", d.join("out.txt").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let written = std::fs::read_to_string(d.join("out.txt")).unwrap();
    assert!(written.contains("fleet.node_failed") && written.contains("broken.json"), "{written}");
}

#[test]
fn compare_exits_3_when_nothing_can_be_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("x.json"), "not json").unwrap();
    for args in [vec![dir.path().to_str().unwrap()], vec!["/nonexistent/fleet"]] {
        let out = compare(&args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn compare_shows_the_benchmark_median_and_the_slow_node_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The app's saved CPU run: its headline is CPU SGEMM, 0.9247… GFLOP/s.
    let run = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/bench-run-0.1.0.json");
    let base = report_with(&["--bench", run.to_str().unwrap()]);
    for h in ["b1", "b2", "b3"] {
        write(d, &base, h, |_| {});
    }
    // Half the others' figure: more than 15 % below the median.
    write(d, &base, "slow", |r| r["bench"]["tests"][0]["result"]["measurements"][0]["value"] = Value::from(0.46));
    let dir_arg = d.to_str().unwrap();

    let json = compare(&[dir_arg, "--format", "json"]);
    assert_eq!(json.status.code(), Some(0), "a slow node is a warning: {}", text(&json));
    let c: Value = serde_json::from_str(&text(&json)).unwrap();
    assert_eq!(c["metrics"][0]["key"], "bench.cpu", "{c}");
    let slow: Vec<(&str, &str, Vec<&str>)> = c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let hosts = f["hosts"].as_array().unwrap().iter().map(|h| h.as_str().unwrap()).collect();
            (f["id"].as_str().unwrap(), f["key"].as_str().unwrap(), hosts)
        })
        .collect();
    assert_eq!(slow, [("fleet.bench_slow", "bench.cpu", vec!["slow"])]);

    let plain = text(&compare(&[dir_arg, "--color", "never"]));
    assert!(plain.contains("  CPU SGEMM         0.925 GFLOP/s  slow: slow 0.460\n"), "{plain}");
    let md = text(&compare(&[dir_arg, "--format", "markdown"]));
    assert!(md.contains("| CPU SGEMM | 0.925 GFLOP/s | slow 0.460 |"), "{md}");
    let html = text(&compare(&[dir_arg, "--format", "html"]));
    assert!(
        html.contains("<tr><td>CPU SGEMM</td><td class=\"num\">0.925 GFLOP/s</td><td>slow 0.460</td></tr>"),
        "{html}"
    );

    // Without the slow node, every format says none is slow.
    let files: Vec<String> =
        ["b1", "b2", "b3"].iter().map(|h| d.join(format!("{h}.json")).to_str().unwrap().to_owned()).collect();
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    let args = |format: &'static str| [files.as_slice(), &["--color", "never", "--format", format]].concat();
    assert!(text(&compare(&args("text"))).contains("  CPU SGEMM         0.925 GFLOP/s  none slow\n"));
    assert!(text(&compare(&args("markdown"))).contains("| CPU SGEMM | 0.925 GFLOP/s | none |"));
    assert!(text(&compare(&args("html"))).contains("<td class=\"num\">0.925 GFLOP/s</td><td>none</td></tr>"));
}

#[test]
fn a_host_name_in_two_folders_shows_each_group_with_its_own_values() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let base = base_report();
    for h in ["n1", "n2", "n3"] {
        write(a.path(), &base, h, |_| {});
    }
    // Another node called n1 in another folder, with another driver: a group of its own.
    write(b.path(), &base, "n1", |r| r["snapshot"]["driver"]["value"]["version"] = Value::from("535.104.05"));
    let plain = text(&compare(&[a.path().to_str().unwrap(), b.path().to_str().unwrap(), "--color", "never"]));
    assert!(plain.contains("*535.104.05"), "the second group's row is its own node's: {plain}");
}

/// `/dev/zero` and a fifo on the command line, and a manifest naming one report 64 times, under a
/// 1 GiB memory limit: each is a node with its reason, promptly (the old reader read /dev/zero until
/// memory ran out, hung on the fifo, and read the one report 64 times).
#[cfg(target_os = "linux")]
#[test]
fn compare_refuses_devices_and_fifos_and_reads_a_report_once_within_a_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = d.join("fleet");
    std::fs::create_dir(&fleet).unwrap();
    write(&fleet, &base_report(), "a1", |_| {});
    let rows: Vec<Value> = (0..64)
        .map(|i| serde_json::json!({"host": format!("n{i}"), "engine_name": format!("n{i}"), "outcome": {"state": "reported", "file": "a1.json"}}))
        .collect();
    let manifest = serde_json::json!({"engine": "ssh", "started": "2026-11-28T00:00:00Z", "nodes": rows});
    std::fs::write(fleet.join("fleet.json"), manifest.to_string()).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(d.join("pipe.json")).status().unwrap().success());
    let script = format!(
        "ulimit -v 1048576; exec timeout 60 '{}' compare --format json /dev/zero {} {}",
        env!("CARGO_BIN_EXE_gpu-doctor"),
        d.join("pipe.json").display(),
        fleet.display()
    );
    let out = std::process::Command::new("sh").args(["-c", &script]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let failed = c["findings"].as_array().unwrap().iter().find(|f| f["id"] == "fleet.node_failed").unwrap();
    let summary = failed["summary"].as_str().unwrap();
    assert!(summary.starts_with("65 of 66 nodes gave no report"), "{summary}");
    let refused =
        c["nodes"].as_array().unwrap().iter().filter(|n| n.to_string().contains("not a regular file")).count();
    assert_eq!(refused, 2, "{}", c["nodes"]);
}
