//! The binary itself on the test machine, which has no NVIDIA GPU.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use assert_cmd::Command;
use serde_json::Value;

fn gpu_doctor() -> Command {
    let mut cmd = Command::cargo_bin("gpu-doctor").unwrap();
    cmd.env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY").env("NO_COLOR", "1");
    cmd
}

fn python_on_path() -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("python3").is_file() || d.join("python").is_file()))
}

#[test]
fn check_json_runs_without_a_gpu_and_says_why() {
    let out = gpu_doctor().args(["check", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in ["schema_version", "tool_version", "snapshot", "findings"] {
        assert!(report.get(key).is_some(), "missing top-level key {key}");
    }
    let snap = &report["snapshot"];
    if snap["driver"]["status"] == "found" {
        eprintln!("this machine has an NVIDIA driver; the no-driver assertions do not apply");
        return;
    }
    assert_eq!(snap["driver"]["status"], "absent", "{}", snap["driver"]);
    let reason = snap["driver"]["reason"].as_str().unwrap();
    assert!(reason.contains("NVML"), "the reason should say NVML could not be used: {reason}");
    assert!(reason.contains("nvidia-smi"), "the reason should say nvidia-smi was looked for: {reason}");
    assert_ne!(snap["gpus"]["status"], "found");
    let trace = snap["trace"].as_array().unwrap();
    assert!(
        trace.iter().any(|t| t["probe"] == "driver" && t["method"] == "nvml"),
        "the trace should show the NVML attempt"
    );
    if python_on_path() {
        assert_eq!(snap["python_envs"]["status"], "found", "{}", snap["python_envs"]);
        assert!(!snap["python_envs"]["value"].as_array().unwrap().is_empty(), "the machine's Python should be listed");
    }
}

#[test]
fn check_summary_is_readable_text() {
    let out = gpu_doctor().arg("check").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    for label in ["Machine", "Driver", "GPUs", "Python"] {
        assert!(text.lines().any(|l| l.starts_with(label)), "no {label} line in:\n{text}");
    }
    assert!(!text.contains('\x1b'), "NO_COLOR must turn colours off");
}

#[test]
fn no_arguments_without_a_display_prints_the_summary_and_a_hint() {
    let out = gpu_doctor().output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Driver"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no display"));
}

#[test]
fn a_display_that_cannot_be_opened_falls_back_to_the_summary() {
    // No X server answers on display 987: the window cannot open, and that is said, not fatal.
    let out = gpu_doctor().env("DISPLAY", ":987").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Driver"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("could not open the window"));
    // A screenshot cannot fall back: it fails with the reason.
    let out = gpu_doctor().env("DISPLAY", ":987").args(["--screenshot", "/tmp/never.png"]).output().unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&out.stderr).contains("could not open the window"));
}

#[test]
fn markdown_report_is_written_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.md");
    gpu_doctor().args(["report", "--format", "md", "-o"]).arg(&path).assert().code(0);
    let md = std::fs::read_to_string(&path).unwrap();
    assert!(md.starts_with("## gpu-doctor report"));
    assert!(md.contains("| **Driver** |"));
    assert!(md.contains("<details><summary>Probe trace"));
}

#[test]
fn usage_errors_exit_2_and_unreadable_replays_exit_3() {
    gpu_doctor().args(["check", "--no-such-flag"]).assert().code(2);
    let out = gpu_doctor().args(["--replay", "/no/such/fixture", "check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/no/such/fixture"));
}

#[test]
fn every_command_has_help() {
    for args in [&["--help"][..], &["check", "--help"], &["report", "--help"], &["record-fixture", "--help"]] {
        let out = gpu_doctor().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(out.stdout.len() > 200, "{args:?} help is too thin");
    }
}

/// `check --json`'s snapshot, without what legitimately differs between a live run and its
/// replay: the moment it was taken and the host name, which a recording replaces.
fn comparable_snapshot(cmd: &mut Command) -> Value {
    let out = cmd.args(["check", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let mut report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut snap = report["snapshot"].take();
    snap["taken_at_unix_secs"] = Value::Null;
    if let Some(system) = snap["system"].get_mut("value") {
        system["host_name"] = Value::Null;
    }
    snap
}

#[test]
fn a_recording_replays_to_the_same_snapshot_as_the_live_machine() {
    let dir = tempfile::tempdir().unwrap();
    gpu_doctor().arg("record-fixture").arg(dir.path()).assert().code(0);
    assert!(dir.path().join("host.json").is_file());
    let live = comparable_snapshot(&mut gpu_doctor());
    let replayed = comparable_snapshot(gpu_doctor().arg("--replay").arg(dir.path()));
    let trace = replayed["trace"].as_array().unwrap();
    let unrecorded: Vec<_> =
        trace.iter().filter(|t| t["detail"].as_str().unwrap_or("").contains("not recorded")).collect();
    assert!(unrecorded.is_empty(), "the recording missed answers: {unrecorded:?}");
    assert_eq!(live, replayed, "replaying the recording must see what the live run saw");
}

fn sample(name: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../probes/src/parse/paste/samples").join(name)
}

#[test]
fn diagnose_a_support_thread_finds_the_driver_error_and_exits_1() {
    let out = gpu_doctor().args(["diagnose", "--json", "--from"]).arg(sample("support_thread.md")).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["snapshot"]["origin"]["kind"], "pasted");
    let findings = report["findings"].as_array().unwrap();
    let f = findings.iter().find(|f| f["id"] == "driver.too_old_for_runtime").expect("driver finding");
    for key in ["id", "category", "severity", "summary", "evidence", "fix"] {
        assert!(f.get(key).is_some_and(|v| !v.is_null()), "finding lacks {key}: {f}");
    }
    assert_eq!(f["category"], "driver_too_old_for_runtime");
    assert_eq!(f["severity"], "error");
    assert!(f["fix"].as_str().unwrap().contains("download.pytorch.org/whl/cu128"), "{f}");
}

#[test]
fn diagnose_a_healthy_paste_exits_0_from_standard_input() {
    let text = std::fs::read_to_string(sample("healthy.txt")).unwrap();
    let out = gpu_doctor().args(["diagnose", "--from", "-"]).write_stdin(text).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "stdout: {stdout}\nstderr: {}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("Another machine, from pasted text"), "{stdout}");
    assert!(stdout.contains("no problems found"), "{stdout}");
}

#[test]
fn diagnose_exits_3_for_unreadable_or_unrecognised_input() {
    let missing = gpu_doctor().args(["diagnose", "--from", "/nonexistent/paste.txt"]).output().unwrap();
    assert_eq!(missing.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("could not read"));
    let prose = gpu_doctor()
        .args(["diagnose", "--from", "-"])
        .write_stdin("Hi all, my training is slow, any ideas? Thanks!")
        .output()
        .unwrap();
    assert_eq!(prose.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&prose.stderr).contains("nothing gpu-doctor recognises"));
}

/// Endless input stops at the size limit, promptly, with a message that says how much was read.
#[test]
fn diagnose_from_dev_zero_stops_at_the_limit_and_says_how_much_was_read() {
    if !std::path::Path::new("/dev/zero").exists() {
        return;
    }
    let out = gpu_doctor()
        .args(["diagnose", "--from", "/dev/zero"])
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "stderr: {stderr}");
    assert!(stderr.contains("/dev/zero") && stderr.contains("8 MiB") && stderr.contains("read"), "{stderr}");
}

/// PowerShell's `>` writes UTF-16 with a byte-order mark; it reads like the same text in UTF-8.
#[test]
fn diagnose_reads_utf16_as_powershell_writes_it() {
    let text = std::fs::read_to_string(sample("healthy.txt")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut want = None;
    for (name, bom, unit) in [
        ("le.txt", [0xFF, 0xFE], u16::to_le_bytes as fn(u16) -> [u8; 2]),
        ("be.txt", [0xFE, 0xFF], u16::to_be_bytes as fn(u16) -> [u8; 2]),
    ] {
        let mut bytes = bom.to_vec();
        bytes.extend(text.replace('\n', "\r\n").encode_utf16().flat_map(unit));
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = gpu_doctor().args(["diagnose", "--json", "--from"]).arg(&path).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let formats = report["snapshot"]["origin"]["formats"].clone();
        assert!(formats.as_array().is_some_and(|f| !f.is_empty()), "{name}: {formats}");
        assert_eq!(*want.get_or_insert_with(|| formats.clone()), formats, "{name}");
    }
}

#[test]
fn diagnose_without_from_is_a_usage_error() {
    let out = gpu_doctor().args(["diagnose"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(name)
}

#[test]
fn a_redacted_html_report_has_the_findings_and_no_home_paths_or_uuids() {
    let machine = fixture("torch-cu130-on-r550");
    let out = gpu_doctor().arg("--replay").arg(&machine).args(["report", "--format", "json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let plain = String::from_utf8(out.stdout).unwrap();
    let uuid = regex::Regex::new(r"GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}").unwrap();
    let uuid = uuid.find(&plain).expect("the fixture names its GPU by UUID").as_str().to_owned();
    assert!(plain.contains("/home/"), "the fixture has home paths to hide");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.html");
    gpu_doctor()
        .arg("--replay")
        .arg(&machine)
        .args(["report", "--format", "html", "--redact", "-o"])
        .arg(&path)
        .assert()
        .code(0);
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(!html.contains("/home/"), "a home path survived");
    assert!(!html.contains(&uuid), "the GPU's UUID survived");
    assert!(!html.to_ascii_lowercase().contains("<script"));
    let report: Value = serde_json::from_str(&plain).unwrap();
    let findings = report["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    for f in findings {
        let id = f["id"].as_str().unwrap();
        assert!(html.contains(&format!("id=\"finding-{id}\"")), "finding {id} missing");
    }
}
