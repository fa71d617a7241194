//! Children of gpu-doctor cannot hang it or outlive it: a tool that leaves a process holding its
//! output, a parent killed with SIGTERM, a benchmark worker whose parent goes away.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

mod support;

use gpu_doctor_model::bench::plan::{BenchPlan, TestKind};
use gpu_doctor_probes::host::process::{self, is_running};

const BIN: &str = env!("CARGO_BIN_EXE_gpu-doctor");

/// True while process `pid` runs (a zombie waiting to be reaped has ended).
fn running(pid: &str) -> bool {
    is_running(pid.trim().parse().unwrap()).unwrap()
}

/// PIDs of running processes whose command line contains `marker`.
fn running_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(pid) = name.parse::<u32>() else { continue };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(marker) && running(&name) {
            found.push(pid);
        }
    }
    found
}

/// Waits up to `limit` for `done`; true when it came.
fn within(limit: Duration, done: impl Fn() -> bool) -> bool {
    let until = Instant::now() + limit;
    while !done() && Instant::now() < until {
        thread::sleep(Duration::from_millis(20));
    }
    done()
}

/// A folder with an executable `nvidia-smi` that runs `body`.
fn fake_smi(body: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nvidia-smi");
    support::write_executable(&path, &format!("#!/bin/sh\n{body}\n"));
    dir
}

fn check_with_path(dir: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default());
    cmd.args(["check", "--json"]).env("PATH", path).env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY");
    cmd.stdout(Stdio::null()).stderr(Stdio::null()).process_group(0);
    cmd
}

#[test]
fn a_tool_that_leaves_a_child_holding_its_output_does_not_hang_check() {
    let marker = "4242.0101";
    let ran = tempfile::tempdir().unwrap();
    let ran_file = ran.path().join("ran");
    let tools = fake_smi(&format!(
        "touch '{}'\nsleep {marker} &\necho 'Failed to initialize NVML: Driver/library version mismatch'\nexit 9",
        ran_file.display()
    ));
    let started = Instant::now();
    let mut child = check_with_path(tools.path()).spawn().unwrap();
    let until = started + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < until, "check hung on a tool whose child kept its output open");
        thread::sleep(Duration::from_millis(50));
    };
    let took = started.elapsed();
    let left = running_with(marker);
    for pid in &left {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    assert!(ran_file.exists(), "check never ran the fake nvidia-smi, so this proves nothing");
    assert!(status.code().is_some(), "{status:?}");
    assert!(took < Duration::from_secs(30), "check took {took:?}");
    assert!(left.is_empty(), "the tool's child {left:?} outlived check");
}

#[test]
fn sigterm_to_gpu_doctor_ends_the_tool_it_is_waiting_for() {
    let marker = "4242.0202";
    let tools = tempfile::tempdir().unwrap();
    let started_file = tools.path().join("started");
    let smi = fake_smi(&format!("touch '{}'\nexec sleep {marker}", started_file.display()));
    let mut child = check_with_path(smi.path()).spawn().unwrap();
    let until = Instant::now() + Duration::from_secs(30);
    while !started_file.exists() {
        assert!(Instant::now() < until, "the fake nvidia-smi never started");
        assert!(child.try_wait().unwrap().is_none(), "check ended before running nvidia-smi");
        thread::sleep(Duration::from_millis(20));
    }
    // SIGTERM to gpu-doctor alone, as a service manager or `kill PID` sends it.
    assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
    let status = child.wait().unwrap();
    let gone = within(Duration::from_secs(3), || running_with(marker).is_empty());
    for pid in running_with(marker) {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    assert_eq!(status.code(), Some(128 + 15), "{status:?}");
    assert!(gone, "nvidia-smi outlived gpu-doctor after SIGTERM");
}

#[test]
fn the_benchmark_worker_dies_with_its_parent() {
    // A parent shell starts the worker as the runner does (its pid in GPU_DOCTOR_PARENT_PID) with a
    // pipe on standard input that stays open (the worker waits for its plan), prints the worker's
    // pid, and is then killed, perhaps before the worker got to arm its parent-death signal.
    let mut parent = Command::new("sh")
        .args(["-c", r#"sleep 4242.0303 | GPU_DOCTOR_PARENT_PID=$$ "$0" bench-worker & echo $!; wait"#, BIN])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(parent.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let worker = line.trim().to_owned();
    let started = within(Duration::from_secs(10), || {
        std::fs::read_to_string(format!("/proc/{worker}/cmdline")).unwrap_or_default().contains("bench-worker")
    });
    assert!(started, "the worker {worker} never started");
    assert!(Command::new("kill").args(["-TERM", &parent.id().to_string()]).status().unwrap().success());
    let _ = parent.wait();
    let survived = !within(Duration::from_secs(3), || !running(&worker));
    // Clean up the shell's group (the `sleep`, and the worker if it survived).
    let _ = Command::new("kill").args(["-9", "--", &format!("-{}", parent.id())]).status();
    assert!(!survived, "the benchmark worker {worker} outlived its parent");
}

#[test]
fn the_benchmark_worker_stops_when_its_parent_closes_the_pipe() {
    let mut command = Command::new(BIN);
    command.arg("bench-worker").stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::null());
    let mut worker = process::spawn(&mut command).unwrap();
    let mut stdin = worker.child().stdin.take().unwrap();
    // A CPU plan long enough to still be running when the pipe closes, as one line.
    let mut plan = BenchPlan::preset(0, vec![TestKind::Cpu], false);
    plan.cpu_gemm_size = 4096;
    let text = format!("{}\n", serde_json::to_string(&plan).unwrap());
    stdin.write_all(text.as_bytes()).unwrap();
    thread::sleep(Duration::from_millis(500));
    assert!(worker.child().try_wait().unwrap().is_none(), "the worker ended before the pipe closed");
    drop(stdin);
    // Killed (no exit code) if it runs on past 5 s.
    let status = worker.wait_or_kill(Duration::from_secs(5));
    assert_eq!(status.and_then(|s| s.code()), Some(5), "the worker did not stop when the pipe closed: {status:?}");
}
