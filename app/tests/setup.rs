//! `gpu-doctor setup` end to end, offline: a wheelhouse of tiny real wheels
//! (`installers/tests/support/wheelhouse.py`), a new venv made with pip, the chosen build
//! installed from it, the smoke test run in it, and the honest answer on a machine without a GPU.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_gpu-doctor");

/// Under CI a missing tool is a failure; elsewhere the test says why it skips.
fn skip(why: &str) {
    assert!(std::env::var_os("CI").is_none_or(|v| v.is_empty()), "CI must have this: {why}");
    eprintln!("skipped: {why}");
}

fn wheelhouse(dir: &Path) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../installers/tests/support/wheelhouse.py");
    let made = Command::new("python3").arg(script).arg(dir).status().unwrap();
    assert!(made.success());
}

#[test]
fn setup_builds_a_working_venv_from_a_wheelhouse_and_says_gpu_use_is_not_proven_here() {
    let venv_ok = Command::new("python3").args(["-c", "import ensurepip, venv"]).status().is_ok_and(|s| s.success());
    if !venv_ok {
        return skip("python3 with venv and ensurepip (python3-venv)");
    }
    let tmp = tempfile::tempdir().unwrap();
    let (wheels, env, home) = (tmp.path().join("wheels"), tmp.path().join("env"), tmp.path().join("home"));
    wheelhouse(&wheels);
    let run = |extra: &[&str]| {
        Command::new(BIN)
            .args(["setup", "--framework", "torch", "--tool", "pip", "--env"])
            .arg(&env)
            .arg("--find-links")
            .arg(&wheels)
            .args(extra)
            .env("GPU_DOCTOR_HOME", &home)
            .env_remove("PIP_FIND_LINKS")
            .env_remove("PIP_INDEX_URL")
            .output()
            .unwrap()
    };
    // The dry run changes nothing and names the choice.
    let shown = run(&[]);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.status.success(), "{text}{}", String::from_utf8_lossy(&shown.stderr));
    assert!(text.contains("chosen: 2.5.1+") && text.contains("not 2.5.1+"), "{text}");
    assert!(!env.exists());
    // Applied: the venv has the chosen build, the smoke test ran in it, and without a GPU the
    // answer is "not proven" (exit 1), with what it did check.
    let applied = run(&["--apply", "--yes"]);
    let out = String::from_utf8_lossy(&applied.stdout);
    let err = String::from_utf8_lossy(&applied.stderr);
    assert_eq!(applied.status.code(), Some(1), "{out}{err}");
    assert!(out.contains("GPU use could not be proven here") && out.contains("CPU matmul ok"), "{out}{err}");
    let chosen = text.lines().find_map(|l| l.strip_prefix("chosen: ")).unwrap().split(':').next().unwrap().to_owned();
    let version =
        Command::new(env.join("bin/python")).args(["-c", "import torch; print(torch.__version__)"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), chosen);
    // The log of the run is kept in the data folder.
    let logs: Vec<_> = std::fs::read_dir(home.join("installs")).unwrap().collect();
    assert!(!logs.is_empty());

    // Into the environment that now exists: its package list is saved first, and `fix --undo`
    // puts it back, removing what was installed after it.
    let again = run(&["--apply", "--yes"]);
    let err = String::from_utf8_lossy(&again.stderr);
    let backup = err
        .lines()
        .find_map(|l| l.strip_prefix("the environment's package list before: "))
        .unwrap_or_else(|| panic!("no backup named: {err}"))
        .to_owned();
    let python = env.join("bin/python");
    let extra = Command::new(&python)
        .args(["-m", "pip", "install", "--no-index", "--find-links"])
        .arg(&wheels)
        .arg("jax==0.4.35")
        .env_remove("PIP_FIND_LINKS")
        .output()
        .unwrap();
    assert!(extra.status.success(), "{}", String::from_utf8_lossy(&extra.stderr));
    let freeze = || {
        let out = Command::new(&python).args(["-m", "pip", "freeze", "--all"]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(freeze().contains("jax=="));
    let undone = Command::new(BIN).args(["fix", "--undo", &backup]).env("GPU_DOCTOR_HOME", &home).output().unwrap();
    assert!(undone.status.success(), "{}", String::from_utf8_lossy(&undone.stderr));
    let after = freeze();
    assert!(!after.contains("jax==") && after.contains(&format!("torch=={chosen}")), "{after}");
}
