//! What the installers' tests share: a base Python, the wheelhouse, freezing and deep-probing an
//! environment, and skipping what this machine lacks (never under CI).
#![allow(clippy::unwrap_used, dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use gpu_doctor_installers::apply::{self, ApplyOptions, Event, Outcome};
use gpu_doctor_installers::envtool::{self, Tool};
use gpu_doctor_installers::plan::Plan;
use gpu_doctor_model::{DeepTorch, PythonEnv};
use gpu_doctor_model::{Probed, Trace};
use gpu_doctor_probes::host::SystemHost;

/// Says why a test did nothing; under CI (`CI` set) that fails it: CI must have what it needs.
pub fn skip(why: &str) {
    assert!(std::env::var_os("CI").is_none_or(|v| v.is_empty()), "CI must have this: {why}");
    eprintln!("skipped: {why}");
}

/// The real interpreter behind `python3` (not a pyenv shim), when it can make a venv.
pub fn base_python() -> Option<PathBuf> {
    let out = Command::new("python3")
        .args(["-c", "import sys, venv, ensurepip; print(sys.executable)"])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    Some(PathBuf::from(String::from_utf8(out.stdout).unwrap().trim()))
}

/// The tests' wheelhouse (tests/support/wheelhouse.py) built into `dir`.
pub fn wheelhouse(dir: &Path) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/wheelhouse.py");
    let status = Command::new("python3").arg(script).arg(dir).status().unwrap();
    assert!(status.success(), "the wheelhouse could not be built");
    dir.to_owned()
}

/// A venv at `env` made with `python -m venv`, with `requirements` from `wheels` in it.
pub fn venv_with(python: &Path, env: &Path, wheels: &Path, requirements: &[&str]) -> PathBuf {
    let status = Command::new(python).arg("-m").arg("venv").arg(env).status().unwrap();
    assert!(status.success(), "python -m venv failed");
    let inner = envtool::python_in(env);
    if !requirements.is_empty() {
        let status = Command::new(&inner)
            .args(["-m", "pip", "install", "-q", "--no-index", "--find-links"])
            .arg(wheels)
            .args(requirements)
            .status()
            .unwrap();
        assert!(status.success(), "pip install failed");
    }
    inner
}

/// The environment's package list, as `tool` prints it.
pub fn freeze(tool: &Tool, python: &Path) -> Vec<String> {
    let argv = envtool::freeze(tool, python);
    let out = Command::new(&argv[0]).args(&argv[1..]).output().unwrap();
    assert!(out.status.success(), "{argv:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(str::to_owned).collect()
}

/// What the deep probe (assets/python/probe.py) says of torch in the environment of `python`.
pub fn deep_torch(python: &Path) -> DeepTorch {
    let text = format!(
        r#"{{"name":"venv:test","kind":"venv","prefix":"{}","interpreter":"{}","site_packages":[]}}"#,
        python.parent().unwrap().parent().unwrap().display(),
        python.display()
    );
    let env: PythonEnv = serde_json::from_str(&text).unwrap();
    let mut trace = Trace::default();
    match gpu_doctor_probes::probe::python::deep_probe(&SystemHost::new(), &env, &mut trace) {
        Probed::Found { value, .. } => value.torch.expect("the deep probe found no torch"),
        other => panic!("the deep probe failed: {other:?} {trace:?}"),
    }
}

/// Options whose logs go to `dir`.
pub fn options(dir: &Path) -> ApplyOptions {
    ApplyOptions { log_dir: dir.to_owned(), step_timeout: Duration::from_secs(300) }
}

/// Applies `plan`, keeping every event.
pub fn apply_all(plan: &Plan, opts: &ApplyOptions) -> (Outcome, Vec<Event>) {
    let mut events = Vec::new();
    let outcome = apply::apply(plan, opts, &AtomicBool::new(false), &mut |e| events.push(e));
    (outcome, events)
}

/// Undoes from `backup` into the environment of `python` (`ENV/bin/python`), keeping every
/// event, confirming what it shows.
pub fn undo_all(python: &Path, backup: &Path, opts: &ApplyOptions) -> (Outcome, Vec<Event>) {
    let mut events = Vec::new();
    let env = python.parent().unwrap().parent().unwrap();
    let outcome = apply::undo(env, backup, opts, &AtomicBool::new(false), &mut |e| events.push(e), &mut |_| true);
    (outcome, events)
}

/// Tiny wheels in `dir` (tests/support/tiny_wheels.py): each spec `name==version` with its
/// requirements after a colon, comma-separated (`cupy-cuda13x==13.6.0:numpy>=2`).
pub fn tiny_wheels(dir: &Path, specs: &[&str]) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/tiny_wheels.py");
    let status = Command::new("python3").arg(script).arg(dir).args(specs).status().unwrap();
    assert!(status.success(), "the tiny wheels could not be written");
    dir.to_owned()
}
