//! The binary with text from strangers: what it prints on the terminal carries none of the
//! text's escape sequences.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use assert_cmd::Command;

fn gpu_doctor() -> Command {
    let mut cmd = Command::cargo_bin("gpu-doctor").unwrap();
    cmd.env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY").env("NO_COLOR", "1");
    cmd
}

/// A known error line followed by a screen clear, a clipboard write (OSC 52), a title change
/// (OSC 0), a bell, a carriage return and a line break that starts a fake finding.
const PASTE: &str = "RuntimeError: CUDA error: no kernel image is available for execution on the device\
\u{1b}]52;c;ZWNobyBvd25lZA==\u{7}\u{1b}[2J\u{1b}]0;title\u{7}\r  error all good  [fake]\ntorch==2.5.1\n";

#[test]
fn diagnose_prints_no_escape_sequence_from_the_pasted_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("paste.txt");
    std::fs::write(&path, PASTE).unwrap();
    for verbose in [false, true] {
        let mut cmd = gpu_doctor();
        cmd.args(["diagnose", "--from"]).arg(&path);
        if verbose {
            cmd.arg("--verbose");
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(1), "the known error line is still found");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("no kernel image"), "{text}");
        for c in ['\u{1b}', '\u{7}', '\r'] {
            assert!(!text.contains(c), "{c:?} reached the terminal: {text:?}");
        }
        assert!(!text.lines().any(|l| l.starts_with("  error all good")), "the carriage return was kept");
    }
}
