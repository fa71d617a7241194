//! `gpu-doctor certify` end to end on recorded machines: level 1's verdict and files, level 2
//! without a GPU (INCOMPLETE, saying why), the exit codes `certify --help` documents, and
//! `--verify` catching a changed byte and another machine.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::Output;

use serde_json::Value;
use support::fixture;

fn certify(replay: Option<&str>, args: &[&str], out: &Path) -> Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_gpu-doctor"));
    if let Some(name) = replay {
        cmd.arg("--replay").arg(fixture(name));
    }
    // This machine's probes look in the working folder: an empty one.
    cmd.current_dir(out).args(["-q", "certify"]).args(args).arg("--out").arg(out).output().unwrap()
}

fn certificate(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("certificate.json")).unwrap()).unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn level_1_on_a_failing_machine_says_fail_first_in_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = certify(Some("a10-row-remap-pending-xid79"), &["--level", "1"], dir.path());
    assert_eq!(out.status.code(), Some(1), "FAIL is 1: {}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout(&out).starts_with("FAIL — gpu-doctor certify, level 1"), "{}", stdout(&out));
    let cert = certificate(dir.path());
    assert_eq!(cert["verdict"], "FAIL");
    assert_eq!(cert["level"], "software");
    assert_eq!(cert["sha256"].as_str().unwrap().len(), 64);
    let failed: Vec<&str> = cert["stages"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] == "fail")
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert!(failed.iter().any(|id| id.starts_with("finding.health.")), "the Xid 79 / pending remap: {failed:?}");
    let md = std::fs::read_to_string(dir.path().join("certificate.md")).unwrap();
    assert!(md.starts_with("# FAIL — "), "{md}");
    let html = std::fs::read_to_string(dir.path().join("certificate.html")).unwrap();
    let verdict_at = html.find("class=\"verdict v-FAIL\"").expect("the verdict banner");
    assert!(verdict_at < html.find("<h2>").unwrap(), "the verdict comes before the checks");
}

#[test]
fn level_1_on_a_healthy_machine_passes_with_exit_0() {
    let dir = tempfile::tempdir().unwrap();
    let out = certify(Some("hgx-h100-nvlink"), &["--level", "1"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let cert = certificate(dir.path());
    assert_eq!(cert["verdict"], "PASS");
    assert_eq!(cert["machine"]["gpus"].as_array().unwrap().len(), 8);
    assert_eq!(cert["machine"]["gpus"][0]["name"], "NVIDIA H100 80GB HBM3");
}

#[test]
fn level_2_on_a_replay_is_incomplete_and_says_what_was_not_measured() {
    let dir = tempfile::tempdir().unwrap();
    // Level 2 is the default.
    let out = certify(Some("hgx-h100-nvlink"), &[], dir.path());
    assert_eq!(out.status.code(), Some(6), "INCOMPLETE is 6: {}", stdout(&out));
    assert!(stdout(&out).starts_with("INCOMPLETE — gpu-doctor certify, level 2"));
    let cert = certificate(dir.path());
    assert_eq!(cert["verdict"], "INCOMPLETE");
    let bench = cert["stages"].as_array().unwrap().iter().find(|s| s["stage"] == "benchmark").unwrap();
    assert!(bench["not_run"].as_str().unwrap().contains("replay"), "{bench}");
    assert_eq!(bench["checks"][0]["verdict"], "not_run");
}

#[test]
fn level_2_on_this_machine_without_a_gpu_is_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    let out = certify(None, &["--level", "2", "--json"], dir.path());
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed, certificate(dir.path()), "--json prints the certificate it writes");
    if !printed["machine"]["gpus"].as_array().unwrap().is_empty() {
        return support::skip("this machine has a GPU");
    }
    assert_eq!(printed["verdict"], "INCOMPLETE", "{printed:#}");
    assert_eq!(out.status.code(), Some(6));
    let bench = printed["stages"].as_array().unwrap().iter().find(|s| s["stage"] == "benchmark").unwrap();
    assert!(bench["not_run"].as_str().unwrap().starts_with("no GPU to measure"), "{bench}");
}

fn verify(replay: &str, file: &Path) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_gpu-doctor"))
        .arg("--replay")
        .arg(fixture(replay))
        .args(["certify", "--verify"])
        .arg(file)
        .output()
        .unwrap()
}

#[test]
fn verify_catches_one_changed_byte_and_another_machine() {
    let dir = tempfile::tempdir().unwrap();
    // A recording whose GPU has its UUID (several fixtures' are redacted).
    certify(Some("a10-row-remap-pending-xid79"), &["--level", "1"], dir.path());
    let file = dir.path().join("certificate.json");

    let same = verify("a10-row-remap-pending-xid79", &file);
    assert_eq!(same.status.code(), Some(0), "{}", stdout(&same));
    assert!(stdout(&same).starts_with("intact: the SHA-256 matches"), "{}", stdout(&same));
    assert!(stdout(&same).contains("this machine: yes (the same 1 GPU(s) by UUID)"), "{}", stdout(&same));
    assert!(stdout(&same).contains("it says: FAIL"), "{}", stdout(&same));

    let other = verify("mig-a100", &file);
    assert_eq!(other.status.code(), Some(7), "intact, another machine: {}", stdout(&other));
    assert!(stdout(&other).contains("this machine: NO (GPUs differ"), "{}", stdout(&other));

    // One byte: a digit of the first GPU's name.
    let text = std::fs::read_to_string(&file).unwrap();
    let at = text.find("NVIDIA A10").unwrap() + 8;
    let mut bytes = text.into_bytes();
    assert_eq!(bytes[at], b'1');
    bytes[at] = b'2';
    let changed = dir.path().join("changed.json");
    std::fs::write(&changed, bytes).unwrap();
    let altered = verify("a10-row-remap-pending-xid79", &changed);
    assert_eq!(altered.status.code(), Some(1), "{}", stdout(&altered));
    assert!(stdout(&altered).starts_with("ALTERED"), "{}", stdout(&altered));
    assert!(stdout(&altered).contains("this machine: yes"), "both are said");

    std::fs::write(&changed, "{\"not\": \"a certificate\"}").unwrap();
    assert_eq!(verify("a10-row-remap-pending-xid79", &changed).status.code(), Some(3), "an unreadable input is 3");
}

#[test]
fn a_level_outside_1_to_4_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(certify(Some("hgx-h100-nvlink"), &["--level", "5"], dir.path()).status.code(), Some(2));
    let duration = certify(Some("hgx-h100-nvlink"), &["--level", "2", "--duration", "60"], dir.path());
    assert_eq!(duration.status.code(), Some(2), "--duration belongs to level 4");
    let soak = certify(Some("hgx-h100-nvlink"), &["--level", "4", "--duration", "60"], dir.path());
    assert_eq!(soak.status.code(), Some(6), "level 4 on a recording is INCOMPLETE");
    assert_eq!(
        certificate(dir.path())["stages"].as_array().unwrap().len(),
        5,
        "software, benchmark, health, stress, soak"
    );
}

#[test]
fn against_a_kept_certificate_names_each_new_finding() {
    let kept = tempfile::tempdir().unwrap();
    certify(Some("hgx-h100-nvlink"), &["--level", "1"], kept.path());
    let kept_file = kept.path().join("certificate.json");
    let dir = tempfile::tempdir().unwrap();
    let args = ["--level", "1", "--against", kept_file.to_str().unwrap()];
    let out = certify(Some("a10-row-remap-pending-xid79"), &args, dir.path());
    assert_eq!(out.status.code(), Some(1), "still FAIL: {}", stdout(&out));
    let cert = certificate(dir.path());
    let against = cert["stages"].as_array().unwrap().iter().find(|s| s["stage"] == "against").unwrap();
    let named: Vec<&str> = against["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["id"] == "against.new_finding")
        .map(|c| c["measured"]["text"].as_str().unwrap())
        .collect();
    assert!(named.iter().any(|t| t.contains("finding.health.xid_error")), "{named:?}");
    let missing = certify(Some("hgx-h100-nvlink"), &["--level", "1", "--against", "/nonexistent.json"], dir.path());
    assert_eq!(missing.status.code(), Some(3), "an unreadable kept certificate is an input error");
}

#[test]
fn redact_hides_the_gpu_uuids_so_verify_cannot_tell_the_machine() {
    let dir = tempfile::tempdir().unwrap();
    let out = certify(Some("a10-row-remap-pending-xid79"), &["--level", "1", "--redact"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let text = std::fs::read_to_string(dir.path().join("certificate.json")).unwrap();
    assert!(!text.contains("GPU-73d12ef7"), "the UUID is gone");
    let cert = certificate(dir.path());
    assert!(cert["machine"]["gpus"][0]["uuid"].as_str().unwrap().starts_with("GPU-redacted"), "{cert:#}");
    assert_eq!(cert["origin"], "replay of a recording", "the fixture's path is not named");
    let checked = verify("a10-row-remap-pending-xid79", &dir.path().join("certificate.json"));
    assert_eq!(checked.status.code(), Some(7), "intact, but the machine cannot be told: {}", stdout(&checked));
    assert!(stdout(&checked).starts_with("intact"));
    assert!(
        stdout(&checked).contains("cannot tell: the certificate was written with --redact"),
        "{}",
        stdout(&checked)
    );
}

/// docs/certify.md's table of level 1 on every recorded machine says what the binary says: each
/// fixture's verdict and exit code (regenerate the table when a rule changes a verdict).
#[test]
fn the_docs_table_of_level_1_verdicts_is_what_the_binary_says() {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/certify.md")).unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let mut names: Vec<String> = std::fs::read_dir(&fixtures)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| fixtures.join(n).join("host.json").is_file())
        .collect();
    names.sort();
    assert!(names.len() > 10, "{names:?}");
    for name in names {
        let dir = tempfile::tempdir().unwrap();
        let out = certify(Some(&name), &["--level", "1"], dir.path());
        let verdict = certificate(dir.path())["verdict"].as_str().unwrap().replace('_', " ");
        let row = format!("| `{name}` | {verdict} | {} |", out.status.code().unwrap());
        assert!(docs.contains(&row), "docs/certify.md has no row starting {row:?}");
    }
}

/// A copy of a recording with its one GPU's serial number (as NVML answers `nvmlDeviceGetSerial`)
/// and DMI files added, in a folder of its own.
fn with_serial_and_dmi(fixture_name: &str, serial: &str, dir: &Path) {
    let mut host: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture(fixture_name).join("host.json")).unwrap()).unwrap();
    host["nvml"]["report"]["devices"][0]["serial"] = Value::from(serial);
    let files = host["files"].as_object_mut().unwrap();
    for (name, text) in [
        ("sys_vendor", "Supermicro\n"),
        ("product_name", "SYS-420GP-TNR\n"),
        ("board_vendor", "Supermicro\n"),
        ("board_name", "X12DPG-OA6\n"),
        ("bios_vendor", "American Megatrends International, LLC.\n"),
        ("bios_version", "1.4a\n"),
        ("bios_date", "08/03/2023\n"),
    ] {
        files.insert(format!("/sys/class/dmi/id/{name}"), Value::from(text));
    }
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("host.json"), serde_json::to_string(&host).unwrap()).unwrap();
}

fn verify_on(recording: &Path, file: &Path) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_gpu-doctor"))
        .arg("--replay")
        .arg(recording)
        .args(["certify", "--verify"])
        .arg(file)
        .output()
        .unwrap()
}

#[test]
fn the_gpus_serial_and_the_boards_dmi_are_in_the_certificate_and_verify_matches_the_serial() {
    let tmp = tempfile::tempdir().unwrap();
    let (here, other) = (tmp.path().join("here"), tmp.path().join("other"));
    with_serial_and_dmi("mig-a100", "1324021012345", &here);
    // The same GPU UUID with another serial: another board (or a UUID copied into a forged file).
    with_serial_and_dmi("mig-a100", "1324021099999", &other);
    let out = tmp.path().join("cert");
    std::fs::create_dir_all(&out).unwrap();
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_gpu-doctor"))
        .arg("--replay")
        .arg(&here)
        .args(["-q", "certify", "--level", "1", "--out"])
        .arg(&out)
        .current_dir(&out)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0), "{}", stdout(&run));
    let cert = certificate(&out);
    assert_eq!(cert["machine"]["gpus"][0]["serial"], "1324021012345");
    assert_eq!(cert["machine"]["dmi"]["board_name"], "X12DPG-OA6");
    assert_eq!(cert["machine"]["dmi"]["bios_version"], "1.4a");
    let md = std::fs::read_to_string(out.join("certificate.md")).unwrap();
    assert!(md.contains("Supermicro X12DPG-OA6"), "{md}");
    assert!(md.contains("American Megatrends International, LLC. 1.4a (08/03/2023)"), "{md}");
    assert!(md.contains("serial 1324021012345"), "{md}");

    let file = out.join("certificate.json");
    let same = verify_on(&here, &file);
    assert_eq!(same.status.code(), Some(0), "{}", stdout(&same));
    assert!(stdout(&same).contains("by UUID, and serial for 1"), "{}", stdout(&same));
    let swapped = verify_on(&other, &file);
    assert_eq!(swapped.status.code(), Some(7), "the same UUID with another serial: {}", stdout(&swapped));
    assert!(stdout(&swapped).contains("serial 1324021099999"), "{}", stdout(&swapped));
}
