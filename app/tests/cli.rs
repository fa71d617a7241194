//! The binary itself on the test machine, which has no NVIDIA GPU.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use assert_cmd::Command;
use serde_json::Value;

mod support;
use support::fixture;

/// The binary without a display and without colour, as a plain `std` command (for what
/// `assert_cmd` cannot set up, such as a standard output of the test's own).
fn bin() -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_gpu-doctor"));
    cmd.env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY").env("NO_COLOR", "1");
    cmd
}

/// `bin()` as an `assert_cmd` command.
fn gpu_doctor() -> Command {
    Command::from_std(bin())
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
    comparable_output(cmd.args(["check", "--json"]))
}

/// `comparable_snapshot` of a command line that already says `check --json`.
fn comparable_output(cmd: &mut Command) -> Value {
    let out = cmd.output().unwrap();
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
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/paste").join(name)
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
    // PyPI's torch 2.9.1 is the cu128 build: installed from PyPI (or the user's own index).
    assert!(f["fix"].as_str().unwrap().contains("pip install torch==2.9.1 torchvision==0.24.1"), "{f}");
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

/// Kernel lines of the host alone (the IOMMU's, pastebin XuGtDmSm): the topology section says the
/// IOMMU's mode and that no GPU was listed, not "0 GPUs" and "no GPU visible" to CUDA.
#[test]
fn diagnose_of_the_hosts_iommu_lines_alone_says_the_gpus_were_not_listed() {
    let paste = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../probes/tests/data/paste/depth/dmesg_grep_dmar_iommu_enabled_pastebin_xugtdmsm.txt");
    let out = gpu_doctor().args(["diagnose", "--color", "never", "--from"]).arg(paste).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("GPUs not listed") && stdout.contains("IOMMU: translates"), "{stdout}");
    assert!(!stdout.contains("0 GPUs") && !stdout.contains("no GPU visible"), "{stdout}");
}

#[test]
fn diagnose_exits_3_for_unreadable_or_unrecognised_input() {
    let missing = gpu_doctor().args(["diagnose", "--from", "/nonexistent/paste.txt"]).output().unwrap();
    assert_eq!(missing.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("could not read"));
    // Readable text is answered: nothing recognised, and what to paste next; only empty or
    // binary input is refused.
    let prose = gpu_doctor()
        .args(["diagnose", "--from", "-", "--color", "never"])
        .write_stdin("Hi all, my training is slow, any ideas? Thanks!")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&prose.stdout);
    assert_eq!(prose.status.code(), Some(0), "{out}");
    assert!(out.contains("Note: nothing gpu-doctor recognises in these 1 line(s)"), "{out}");
    assert!(out.contains("paste the output of this command too: python -m torch.utils.collect_env"), "{out}");
    for refused in ["", "  \n\n", "\u{0}\u{0}binary\u{0}"] {
        let r = gpu_doctor().args(["diagnose", "--from", "-"]).write_stdin(refused).output().unwrap();
        assert_eq!(r.status.code(), Some(3), "{refused:?}");
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(err.contains("the text is empty") || err.contains("the text is binary"), "{refused:?}: {err}");
    }
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
    // gpu-doctor's own warning, not only the paste reader's note in the error that follows.
    assert!(
        stderr.contains("warning: /dev/zero is longer than 8 MiB; only its first 8388608 bytes were read"),
        "{stderr}"
    );
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

// --- Files, exit codes and fixtures on hostile ground (issue 10) ---

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn record_fixture_does_not_replace_a_fixture_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let host_json = dir.path().join("host.json");
    std::fs::write(&host_json, "{\"the\": \"previous fixture\"}\n").unwrap();
    let out = gpu_doctor().arg("record-fixture").arg(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("--force"), "{}", stderr_of(&out));
    assert_eq!(std::fs::read_to_string(&host_json).unwrap(), "{\"the\": \"previous fixture\"}\n");

    gpu_doctor().args(["record-fixture", "--force"]).arg(dir.path()).assert().code(0);
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(&host_json).unwrap()).unwrap();
    assert_eq!(fixture["format"], 1);
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["host.json"], "a temporary file was left behind");
}

#[cfg(unix)]
#[test]
fn record_fixture_never_writes_through_a_symlinked_host_json() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("precious.txt");
    std::fs::write(&victim, "precious").unwrap();
    let fixture_dir = dir.path().join("fixture");
    std::fs::create_dir(&fixture_dir).unwrap();
    std::os::unix::fs::symlink(&victim, fixture_dir.join("host.json")).unwrap();
    for force in [false, true] {
        let mut cmd = gpu_doctor();
        cmd.arg("record-fixture");
        if force {
            cmd.arg("--force");
        }
        let out = cmd.arg(&fixture_dir).output().unwrap();
        assert_ne!(out.status.code(), Some(0), "force {force}");
        assert!(stderr_of(&out).contains("symbolic link"), "force {force}: {}", stderr_of(&out));
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "precious",
            "force {force}: the link's target was written"
        );
        assert!(std::fs::symlink_metadata(fixture_dir.join("host.json")).unwrap().file_type().is_symlink());
    }
}

#[cfg(unix)]
#[test]
fn report_output_keeps_a_private_mode_and_writes_through_a_symlink() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let private = dir.path().join("private.md");
    std::fs::write(&private, "old").unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
    gpu_doctor().args(["report", "-o"]).arg(&private).assert().code(0);
    assert!(std::fs::read_to_string(&private).unwrap().starts_with("## gpu-doctor report"));
    assert_eq!(std::fs::metadata(&private).unwrap().permissions().mode() & 0o777, 0o600);

    let link = dir.path().join("link.md");
    std::os::unix::fs::symlink("private.md", &link).unwrap();
    gpu_doctor().args(["report", "--format", "json", "-o"]).arg(&link).assert().code(0);
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the symlink was replaced");
    assert!(std::fs::read_to_string(&private).unwrap().starts_with('{'));
}

/// `-o /dev/stdout` inside a shell's `>> build.log` adds the report to the log (the writer used to
/// rename a new file over build.log, losing what was there); into a pipe it works too, and `-o -`
/// is standard output, not a file named `-`.
#[cfg(target_os = "linux")]
#[test]
fn output_to_dev_stdout_or_dash_is_the_stream_not_a_file_renamed_over() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("build.log");
    std::fs::write(&log, "earlier\n").unwrap();
    let bin = env!("CARGO_BIN_EXE_gpu-doctor");
    for output in ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", "-"] {
        let script = format!(
            "{{ echo before; '{bin}' report --format json -o {output}; echo after; }} >> build.log; \
             '{bin}' report --format json -o {output} | wc -c"
        );
        let out = std::process::Command::new("sh")
            .args(["-c", &script])
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .output()
            .unwrap();
        let stderr = stderr_of(&out);
        assert!(out.status.success(), "{output}: {stderr}");
        let text = std::fs::read_to_string(&log).unwrap();
        let tail = text.rsplit_once("before\n").unwrap_or_else(|| panic!("{output}: {text}")).1;
        assert!(tail.starts_with('{') && tail.ends_with("}\nafter\n"), "{output}: {tail}");
        assert!(text.starts_with("earlier\n"), "{output}: what the log had was lost");
        let piped: usize = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        assert!(piped > 100, "{output}: into a pipe: {piped} bytes; {stderr}");
        assert!(!stderr.contains("wrote"), "{output}: {stderr}");
        assert!(!dir.path().join("-").exists(), "{output}: a file named - was written");
    }
}

/// Runs `script` (POSIX sh) in a mount namespace of its own, where it may mount a tmpfs; `None`
/// when this machine allows neither `unshare -m` (root) nor `unshare -rm` (user namespaces).
#[cfg(target_os = "linux")]
fn in_own_mount_namespace(script: &str, envs: &[(&str, &std::path::Path)]) -> Option<std::process::Output> {
    for flags in ["-m", "-rm"] {
        let mut cmd = std::process::Command::new("unshare");
        cmd.args([flags, "sh", "-c", script]);
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let out = cmd.output().ok()?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if stdout.contains("MOUNTED") {
            return Some(out);
        }
        eprintln!("unshare {flags} could not mount a tmpfs: {}", String::from_utf8_lossy(&out.stderr));
    }
    None
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_filesystem_keeps_the_previous_report_and_fixture_and_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let script = r#"
        mount -t tmpfs -o size=256k tmpfs "$D" || exit 0
        echo MOUNTED
        printf 'previous report\n' > "$D/r.md"
        mkdir "$D/fx" && printf '{"previous": true}\n' > "$D/fx/host.json"
        dd if=/dev/zero of="$D/fill" bs=4096 2>/dev/null
        "$BIN" report --format md -o "$D/r.md" 2>"$D/../report.err"; echo "report=$?"
        "$BIN" record-fixture --force "$D/fx" 2>"$D/../record.err"; echo "record=$?"
        echo "r.md=$(cat "$D/r.md")"
        echo "host.json=$(cat "$D/fx/host.json")"
        echo "files=$(ls -A "$D" | tr '\n' ' ')|$(ls -A "$D/fx" | tr '\n' ' ')"
    "#;
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_gpu-doctor"));
    let Some(out) = in_own_mount_namespace(script, &[("D", &mnt), ("BIN", &bin)]) else {
        assert!(
            std::env::var_os("GPU_DOCTOR_TESTS_NO_MOUNT").is_some(),
            "this test needs a tmpfs it can fill (root, or user namespaces for `unshare -rm`); \
             set GPU_DOCTOR_TESTS_NO_MOUNT=1 to skip it knowingly (files::tests covers a failing writer)"
        );
        eprintln!("SKIPPED: no tmpfs could be mounted and GPU_DOCTOR_TESTS_NO_MOUNT is set");
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let report_err = std::fs::read_to_string(dir.path().join("report.err")).unwrap_or_default();
    let record_err = std::fs::read_to_string(dir.path().join("record.err")).unwrap_or_default();
    let all = format!("{stdout}\nreport: {report_err}\nrecord: {record_err}");
    assert!(stdout.contains("report=4"), "{all}");
    assert!(stdout.contains("record=4"), "{all}");
    assert!(report_err.contains("No space left"), "{all}");
    assert!(stdout.contains("r.md=previous report"), "the previous report was lost: {all}");
    assert!(stdout.contains(r#"host.json={"previous": true}"#), "the previous fixture was lost: {all}");
    assert!(record_err.contains("No space left"), "{all}");
    assert!(stdout.contains("files=fill fx r.md |host.json \n"), "a temporary file was left behind: {all}");
}

#[test]
fn replay_with_record_fixture_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out =
        gpu_doctor().arg("--replay").arg(fixture("no-driver")).arg("record-fixture").arg(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("--replay"));
}

#[test]
fn screenshot_without_a_display_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("shot.png");
    let out = gpu_doctor().arg("--screenshot").arg(&shot).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("needs a display"));
    assert!(!shot.exists());
}

#[cfg(unix)]
#[test]
fn output_into_a_closed_pipe_ends_quietly() {
    let bench = ["bench", "--tests", "cpu", "--quick", "--json"];
    for args in [&["check"][..], &["check", "--json"], &["report", "--format", "html"], &bench] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = bin().args(args).stdout(writer).output().unwrap();
        let stderr = stderr_of(&out);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        // bench shows its progress on standard error; nothing else may be there.
        let errors: Vec<&str> = stderr.lines().filter(|l| !l.trim_start().starts_with("cpu ")).collect();
        assert!(errors.is_empty(), "{args:?} should end quietly: {stderr}");
    }
}

#[test]
fn a_python_that_is_not_there_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nonexistent/bin/python3");
    let out = gpu_doctor().args(["check", "--python"]).arg(&missing).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains(&*missing.to_string_lossy()), "{}", stderr_of(&out));
    // A folder without an interpreter is not an environment either.
    let out = gpu_doctor().args(["check", "--python"]).arg(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr_of(&out));
    // Nor is a file that is no Python.
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "not a program").unwrap();
    let out = gpu_doctor().args(["check", "--python"]).arg(&notes).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("is not a Python interpreter"), "{}", stderr_of(&out));
}

/// A venv made of files only (nothing here is ever run): torch for CUDA 12.1, cuDNN and cuBLAS wheels.
fn fake_venv(prefix: &std::path::Path) {
    let sp = prefix.join("lib/python3.11/site-packages");
    std::fs::create_dir_all(prefix.join("bin")).unwrap();
    std::fs::write(
        prefix.join("pyvenv.cfg"),
        "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.4\n",
    )
    .unwrap();
    std::fs::write(prefix.join("bin/python3"), "").unwrap();
    for (folder, name, version) in [
        ("torch-2.3.0+cu121.dist-info", "torch", "2.3.0+cu121"),
        ("nvidia_cudnn_cu12-8.9.2.26.dist-info", "nvidia-cudnn-cu12", "8.9.2.26"),
        ("nvidia_cublas_cu12-12.1.3.1.dist-info", "nvidia-cublas-cu12", "12.1.3.1"),
    ] {
        std::fs::create_dir_all(sp.join(folder)).unwrap();
        std::fs::write(
            sp.join(folder).join("METADATA"),
            format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"),
        )
        .unwrap();
    }
}

#[test]
fn a_recording_carries_its_options_and_replays_from_any_folder() {
    let root = tempfile::tempdir().unwrap();
    let work = root.path().join("work");
    let elsewhere = root.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    fake_venv(&work.join(".venv"));
    let named = root.path().join("named-venv");
    fake_venv(&named);
    let fx = root.path().join("fx");

    let out =
        gpu_doctor().current_dir(&work).arg("record-fixture").arg(&fx).arg("--python").arg(&named).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let live = comparable_output(gpu_doctor().current_dir(&work).args(["check", "--json", "--python"]).arg(&named));
    let replayed = comparable_snapshot(gpu_doctor().current_dir(&elsewhere).arg("--replay").arg(&fx));
    let names = |snap: &Value| -> Vec<String> {
        snap["python_envs"]["value"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let live_names = names(&live);
    assert!(live_names.iter().any(|n| n.ends_with("/work/.venv")), "{live_names:?}");
    assert!(live_names.iter().any(|n| n.ends_with("/named-venv")), "{live_names:?}");
    assert!(stderr_of(&out).contains(&format!("{} Python environment(s)", live_names.len())), "{}", stderr_of(&out));
    assert_eq!(live_names, names(&replayed), "the replay lost environments the recording said it had");
    assert_eq!(live["python_envs"], replayed["python_envs"]);
    assert_eq!(live, replayed, "replaying from another folder must see what the live run saw");
}

/// Credential-like variables a CUDA user may well have set, and a proxy URL with a password.
const SECRET_ENV: &[(&str, &str)] = &[
    ("NVIDIA_API_KEY", "nvapi-s3cr3t-1"),
    ("CUDA_AUTH_TOKEN", "s3cr3t-2"),
    ("TORCH_HUB_PASSWORD", "s3cr3t-3"),
    ("CUDA_PROXY", "http://alice:s3cr3t-4@proxy.example:3128"),
];

#[test]
fn credentials_in_the_environment_are_never_recorded_or_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut record = gpu_doctor();
    record.arg("record-fixture").arg(dir.path());
    for (k, v) in SECRET_ENV {
        record.env(k, v);
    }
    record.assert().code(0);
    let host_json = std::fs::read_to_string(dir.path().join("host.json")).unwrap();
    assert!(!host_json.contains("s3cr3t"), "record-fixture wrote a credential: {host_json}");
    let fixture: Value = serde_json::from_str(&host_json).unwrap();
    assert!(fixture["env"].get("NVIDIA_API_KEY").is_some(), "the variable is still listed, masked");

    // A recording made before masking (or by hand) still holds the secrets: reports hide them too.
    let mut fixture = fixture;
    for (k, v) in SECRET_ENV {
        fixture["env"][k] = Value::String((*v).to_owned());
    }
    std::fs::write(dir.path().join("host.json"), serde_json::to_string(&fixture).unwrap()).unwrap();
    let replay = |args: &[&str]| {
        let out = gpu_doctor().arg("--replay").arg(dir.path()).args(args).output().unwrap();
        assert!(matches!(out.status.code(), Some(0 | 1)), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    for args in [
        &["check", "--json"][..],
        &["report", "--format", "json"],
        &["report", "--format", "json", "--redact"],
        &["report"],
        &["report", "--redact"],
    ] {
        let text = replay(args);
        assert!(text.contains("NVIDIA_API_KEY") || !args.contains(&"json"), "{args:?} should list the variable");
        assert!(!text.contains("s3cr3t"), "{args:?} shows a credential:\n{text}");
    }
    // The live machine, probed with the same environment.
    let mut check = gpu_doctor();
    check.args(["check", "--json"]);
    for (k, v) in SECRET_ENV {
        check.env(k, v);
    }
    let out = check.output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("s3cr3t"));
}

#[test]
fn a_pasted_report_says_its_fix_paths_are_another_machines_and_hides_its_credentials() {
    let out =
        gpu_doctor().arg("--replay").arg(fixture("torch-cu130-on-r550")).args(["check", "--json"]).output().unwrap();
    let mut report: Value = serde_json::from_slice(&out.stdout).unwrap();
    // An older gpu-doctor recorded credentials as they were.
    report["snapshot"]["env"]["vars"]["NVIDIA_API_KEY"] = Value::String("nvapi-s3cr3t-9".into());
    let live_fix = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["fix"].as_str())
        .find(|f| f.contains("/bin/python"));
    let live_fix = live_fix.expect("the replayed machine has a fix with its interpreter").to_owned();
    assert!(!live_fix.contains("another machine"), "{live_fix}");

    let out = gpu_doctor()
        .args(["diagnose", "--json", "--from", "-"])
        .write_stdin(serde_json::to_string_pretty(&report).unwrap())
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("s3cr3t"), "a pasted credential is shown: {text}");
    let pasted: Value = serde_json::from_str(&text).unwrap();
    let fix = pasted["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["fix"].as_str())
        .find(|f| f.contains("/bin/python"));
    let fix = fix.expect("the pasted report keeps the fix");
    assert!(fix.contains("another machine"), "{fix}");
}

/// The replay line `record-fixture` prints is for pasting into a shell: a folder with `;`, `$(…)`,
/// a quote and a space reads back as one word.
#[test]
fn the_replay_line_record_fixture_prints_is_quoted() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("my fx; touch PWNED $(id) 'q'");
    let out = gpu_doctor().arg("record-fixture").arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let stderr = stderr_of(&out);
    let line = stderr.lines().find_map(|l| l.strip_prefix("replay it with: ")).expect("a replay line");
    let argv = shlex::split(line).expect("a line sh can parse");
    assert_eq!(argv, ["gpu-doctor", "--replay", &dir.to_string_lossy(), "check"], "{line}");
}

/// The commands `--help` lists (without `help`): what completions and man pages must name.
fn listed_commands() -> Vec<String> {
    let out = gpu_doctor().arg("--help").output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let commands: Vec<String> = help
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect();
    assert!(commands.len() >= 5 && commands.iter().any(|c| c == "record-fixture"), "{help}");
    commands
}

#[test]
fn completions_and_man_pages_name_every_command() {
    let commands = listed_commands();
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let out = gpu_doctor().args(["completions", shell]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr_of(&out));
        let script = String::from_utf8(out.stdout).unwrap();
        for command in &commands {
            assert!(script.contains(command.as_str()), "the {shell} completions do not name {command}");
        }
        for option in ["color", "quiet"] {
            // fish spells a long option `-l NAME`.
            let spelled = if shell == "fish" { format!("-l {option}") } else { format!("--{option}") };
            assert!(script.contains(&spelled), "the {shell} completions do not offer --{option}");
        }
    }
    // roff writes a hyphen as `\-`.
    let out = gpu_doctor().arg("man").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let page = String::from_utf8(out.stdout).unwrap().replace("\\-", "-");
    assert!(page.starts_with(".ie") && page.contains(".TH gpu-doctor 1"), "{page}");
    for command in &commands {
        assert!(page.contains(&format!("gpu-doctor-{command}(1)")), "the man page does not name {command}");
    }
    // Packaging writes every page: the one above and one per command it points to.
    let dir = tempfile::tempdir().unwrap();
    let out = gpu_doctor().args(["--quiet", "man", "--dir"]).arg(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(out.stderr.is_empty(), "{}", stderr_of(&out));
    let main = std::fs::read_to_string(dir.path().join("gpu-doctor.1")).unwrap().replace("\\-", "-");
    assert_eq!(main, page);
    for command in &commands {
        let sub = std::fs::read_to_string(dir.path().join(format!("gpu-doctor-{command}.1"))).unwrap();
        assert!(sub.replace("\\-", "-").contains(&format!(".TH gpu-doctor-{command} 1")), "{sub}");
    }
    let pages = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(pages, commands.len() + 1, "one page per command and gpu-doctor.1");
}

fn has_escape(bytes: &[u8]) -> bool {
    bytes.contains(&0x1b)
}

#[test]
fn color_always_colours_a_pipe_and_never_or_no_color_do_not() {
    // `bin()` sets NO_COLOR=1: `always` overrides it.
    let always = gpu_doctor().args(["check", "--color", "always"]).output().unwrap();
    assert_eq!(always.status.code(), Some(0), "{}", stderr_of(&always));
    assert!(has_escape(&always.stdout), "--color always must colour a pipe");
    let help = gpu_doctor().args(["--color=always", "--help"]).output().unwrap();
    assert!(has_escape(&help.stdout), "--color always must colour clap's help too");
    for args in [&["--color", "never", "check"][..], &["check"], &["--color", "auto", "check"]] {
        let out = gpu_doctor().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr_of(&out));
        assert!(!has_escape(&out.stdout) && !has_escape(&out.stderr), "{args:?} must not colour");
    }
    let piped = gpu_doctor().env_remove("NO_COLOR").arg("check").output().unwrap();
    assert!(!has_escape(&piped.stdout), "auto must not colour a pipe");
}

/// `gpu-doctor ARGS` under a terminal (util-linux `script`), with NO_COLOR as given; None where
/// `script` is missing.
fn under_a_terminal(args: &[&str], no_color: Option<&str>) -> Option<Vec<u8>> {
    let command = std::iter::once(env!("CARGO_BIN_EXE_gpu-doctor")).chain(args.iter().copied());
    let command = shlex::try_join(command).unwrap();
    let mut script = std::process::Command::new("script");
    script.args(["-qec", &command, "/dev/null"]).env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY");
    match no_color {
        Some(v) => script.env("NO_COLOR", v),
        None => script.env_remove("NO_COLOR"),
    };
    let out = script.output().ok()?;
    assert!(out.status.success(), "{args:?} under script: {}", stderr_of(&out));
    Some(out.stdout)
}

#[test]
fn color_never_and_no_color_keep_a_terminal_plain() {
    let Some(auto) = under_a_terminal(&["check"], None) else {
        eprintln!("SKIPPED: no util-linux `script` to make a terminal");
        return;
    };
    assert!(has_escape(&auto), "auto on a terminal should colour (or `script` made no terminal)");
    let empty = under_a_terminal(&["check"], Some("")).unwrap();
    assert!(has_escape(&empty), "an empty NO_COLOR does not turn colours off");
    let bench = under_a_terminal(&["bench", "--tests", "cpu", "--quick", "--json"], None).unwrap();
    assert!(has_escape(&bench), "bench redraws its progress bar on a terminal");
    for (args, no_color) in [
        (&["--color", "never", "check"][..], None),
        (&["check", "--color=never"], None),
        (&["check"], Some("1")),
        (&["--color", "never", "--help"], None),
        // Nor do bench's progress bars redraw with escape sequences (the terminal shows standard error too).
        (&["--color", "never", "bench", "--tests", "cpu", "--quick"], None),
        (&["--help"], Some("1")),
    ] {
        let out = under_a_terminal(args, no_color).unwrap();
        assert!(!has_escape(&out), "{args:?} with NO_COLOR={no_color:?} wrote an escape on a terminal");
    }
}

#[test]
fn quiet_keeps_standard_error_for_errors() {
    let out = gpu_doctor().args(["--quiet", "bench", "--tests", "cpu", "--quick"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(!out.stdout.is_empty(), "the table still goes to standard output");
    assert!(out.stderr.is_empty(), "--quiet bench wrote to standard error: {}", stderr_of(&out));

    // No hint without a display, no `wrote FILE`, no replay line.
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r.md");
    let fixture_dir = dir.path().join("fx");
    let mut report_cmd = gpu_doctor();
    report_cmd.args(["report", "-q", "-o"]).arg(&report);
    let mut record_cmd = gpu_doctor();
    record_cmd.args(["record-fixture", "--quiet"]).arg(&fixture_dir);
    let mut window_cmd = gpu_doctor();
    window_cmd.arg("-q");
    for mut cmd in [window_cmd, report_cmd, record_cmd] {
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{cmd:?}: {}", stderr_of(&out));
        assert!(out.stderr.is_empty(), "{cmd:?} wrote to standard error: {}", stderr_of(&out));
    }
    assert!(report.is_file() && fixture_dir.join("host.json").is_file());

    let out = gpu_doctor().args(["--quiet", "--replay", "/no/such/fixture", "check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr_of(&out).contains("/no/such/fixture"), "errors are still printed");
}

/// `processes` lists this machine's GPU processes: a replay cannot answer it.
#[test]
fn processes_refuses_a_replay() {
    let out = gpu_doctor().args(["--replay", "/no/such/fixture", "processes"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "the replay folder is read first");
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/consumer-gpu-torch-venv");
    let out = gpu_doctor().args(["--replay", fixture, "processes"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--replay"));
}
