//! `gpu-doctor bench` on the test machine, which has no NVIDIA GPU: the GPU tests fail with a
//! reason naming the missing library, the CPU baselines still run, and the exit code says that
//! not everything ran.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use assert_cmd::Command;
use serde_json::Value;

fn gpu_doctor() -> Command {
    let mut cmd = Command::cargo_bin("gpu-doctor").unwrap();
    cmd.env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY").env("NO_COLOR", "1");
    cmd
}

fn test<'a>(run: &'a Value, name: &str) -> &'a Value {
    run["tests"].as_array().unwrap().iter().find(|t| t["test"] == name).unwrap()
}

#[test]
fn without_cuda_the_gpu_test_fails_with_a_reason_and_the_cpu_baseline_runs() {
    let out = gpu_doctor().args(["bench", "--tests", "cpu,h2d", "--quick", "--json"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let run: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}; stderr: {stderr}"));
    let h2d = test(&run, "h2d");
    if h2d["status"] == "passed" {
        eprintln!("this machine has a working GPU; the no-CUDA assertions do not apply");
        assert_eq!(out.status.code(), Some(0));
        return;
    }
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert_eq!(h2d["status"], "failed");
    assert_eq!(h2d["failure"]["kind"], "missing_library", "{h2d}");
    let reason = h2d["failure"]["reason"].as_str().unwrap();
    assert!(reason.contains("CUDA driver library") && reason.contains("libcuda.so"), "{reason}");

    let cpu = test(&run, "cpu");
    assert_eq!(cpu["status"], "passed", "{cpu}");
    let judged = cpu["judged"].as_array().unwrap();
    assert!(judged.len() >= 3, "{cpu}");
    for j in judged {
        assert!(j["measurement"]["value"].as_f64().unwrap() > 0.0, "{j}");
    }
    assert!(run["worker"]["started"].as_bool().unwrap(), "the GPU test ran in a worker process");
    assert!(stderr.contains("h2d"), "progress goes to standard error: {stderr}");
}

#[test]
fn a_saved_run_goes_into_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("run.json");
    let out = gpu_doctor().args(["bench", "--tests", "cpu", "--quick", "-o"]).arg(&saved).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8(out.stdout).unwrap();
    for word in ["Measurement", "Expected", "Verdict", "GFLOP/s"] {
        assert!(table.contains(word), "no {word} in:\n{table}");
    }

    let md = dir.path().join("report.md");
    gpu_doctor().args(["report", "--format", "md", "--bench"]).arg(&saved).arg("-o").arg(&md).assert().code(0);
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("### Benchmarks") && md.contains("GFLOP/s"), "{md}");

    let out = gpu_doctor().args(["report", "--format", "json", "--bench"]).arg(&saved).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(test(&report["bench"], "cpu")["status"], "passed");
}

/// `--json` with `-o`: the file and standard output carry the same run.
#[test]
fn json_and_output_write_the_same_run() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("run.json");
    let out = gpu_doctor().args(["bench", "--tests", "cpu", "--quick", "--json", "-o"]).arg(&saved).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let file = std::fs::read_to_string(&saved).unwrap();
    assert!(file.starts_with('{') && file.ends_with("}\n"), "{file}");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), file);
}

/// `-o -` is standard output: the run's JSON once, not a file named `-` and not the table too.
#[test]
fn output_dash_is_the_json_on_standard_output_once() {
    let dir = tempfile::tempdir().unwrap();
    let out =
        gpu_doctor().current_dir(dir.path()).args(["bench", "--tests", "cpu", "--quick", "-o", "-"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(test(&run, "cpu")["status"], "passed");
    assert!(!dir.path().join("-").exists(), "a file named - was written");
}

#[test]
fn bad_input_exits_2_or_3() {
    gpu_doctor().args(["bench", "--tests", "h2d,warp"]).assert().code(2);
    gpu_doctor().args(["bench", "--tests", "cpu", "--memtest-share", "2"]).assert().code(2);
    // bench measures this machine: it takes no --replay (a usage error); a bad folder before the
    // command is still an input error.
    gpu_doctor().args(["bench", "--replay", "/nonexistent", "--tests", "cpu"]).assert().code(2);
    gpu_doctor().args(["--replay", "/nonexistent", "bench", "--tests", "cpu"]).assert().code(3);
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"not\": \"a run\"}").unwrap();
    gpu_doctor().args(["report", "--bench"]).arg(&bad).assert().code(3);
    gpu_doctor().args(["report", "--bench"]).arg(dir.path().join("missing.json")).assert().code(3);
}

#[test]
fn the_worker_refuses_a_bad_plan() {
    gpu_doctor().arg("bench-worker").write_stdin("not a plan").assert().code(3);
    let help = gpu_doctor().arg("--help").output().unwrap();
    assert!(!String::from_utf8_lossy(&help.stdout).contains("bench-worker"), "the worker command is hidden");
}
