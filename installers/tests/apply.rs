//! Applying plans for real, offline: the tests' wheelhouse (tiny real wheels whose modules answer
//! the deep probe like torch does), installed with `--no-index --find-links` by pip and by uv into
//! real environments; then the deep probe, the package-list backup and undo.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use gpu_doctor_installers::apply::{self, Event, StepStatus};
use gpu_doctor_installers::choose::{Candidate, Choice, Framework};
use gpu_doctor_installers::envtool::{self, Source, Tool};
use gpu_doctor_installers::plan::{Plan, Step, StepKind};
use gpu_doctor_installers::planners::setup::{SetupRequest, setup_plan_with};
use support::*;

fn torch_choice(variant: &str) -> Choice {
    let torchvision = format!("torchvision==0.20.1+{variant}");
    Choice {
        framework: "torch".into(),
        chosen: Some(Candidate {
            label: format!("2.5.1+{variant}"),
            requirements: vec![format!("torch==2.5.1+{variant}"), torchvision],
            index_url: None,
            why: "the test's choice".into(),
            beyond_kb: String::new(),
        }),
        rejected: Vec::new(),
    }
}

fn plan(env: Option<&Path>, steps: Vec<Step>) -> Plan {
    Plan {
        id: "test".into(),
        goal: "a test".into(),
        answers: Vec::new(),
        env: env.map(Path::to_owned),
        steps,
        choice: None,
    }
}

fn verify(python: &Path) -> Step {
    Step {
        kind: StepKind::Verify { python: python.to_owned(), frameworks: vec!["torch".into()] },
        ..Step::manual("", "")
    }
}

fn install(tool: &Tool, python: &Path, wheels: &Path, requirements: &[&str]) -> Step {
    let source = Source { index_url: None, find_links: Some(wheels.to_owned()) };
    let requirements: Vec<String> = requirements.iter().map(|r| (*r).to_owned()).collect();
    Step::run(envtool::install(tool, python, &requirements, &source), "test", "test", "undo")
}

/// An existing environment: a venv with torch 2.5.1+cu121 from the wheelhouse, and its package list.
struct Existing {
    dir: tempfile::TempDir,
    wheels: PathBuf,
    env: PathBuf,
    python: PathBuf,
    before: Vec<String>,
}

/// [`Existing`], or `None` (the test skipped) without a python3 that can make it.
fn existing_env() -> Option<Existing> {
    let Some(base) = base_python() else {
        skip("python3 with venv and ensurepip");
        return None;
    };
    let dir = tempfile::tempdir().unwrap();
    let wheels = wheelhouse(&dir.path().join("wheels"));
    let env = dir.path().join("env");
    let python = venv_with(&base, &env, &wheels, &["torch==2.5.1+cu121"]);
    let before = freeze(&Tool::Pip, &python);
    Some(Existing { dir, wheels, env, python, before })
}

/// The `RECORD` hash field of `data`: `sha256=` and the digest in URL-safe base64 without padding.
fn record_hash(data: &[u8]) -> String {
    use sha2::Digest;
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let digest = sha2::Sha256::digest(data);
    let mut out = String::from("sha256=");
    for chunk in digest.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

/// Each installed distribution's `RECORD` in the environment `env`, with the files it lists that
/// are missing or whose sha256 is not the one it lists (every file read): what `pip freeze`
/// cannot show (wheels that share folders can delete or overwrite each other's files while the
/// package list stays the same).
fn records(env: &Path) -> BTreeSet<(String, String, Vec<String>)> {
    let mut out = BTreeSet::new();
    let lib = env.join("lib");
    let Ok(pythons) = std::fs::read_dir(&lib) else { return out };
    for site in pythons.flatten().map(|p| p.path().join("site-packages")).filter(|p| p.is_dir()) {
        for info in std::fs::read_dir(&site).unwrap().flatten().filter(|e| e.path().join("RECORD").is_file()) {
            let record = std::fs::read_to_string(info.path().join("RECORD")).unwrap();
            let damaged = record
                .lines()
                .filter_map(|l| {
                    let mut fields = l.split(',');
                    Some((fields.next()?, fields.next().unwrap_or("")))
                })
                .filter(|(f, hash)| match std::fs::read(site.join(f)) {
                    Err(_) => !f.is_empty(),
                    Ok(data) => !hash.is_empty() && record_hash(&data) != *hash,
                })
                .map(|(f, _)| f.to_owned())
                .collect();
            out.insert((info.file_name().to_string_lossy().into_owned(), record, damaged));
        }
    }
    out
}

fn progress_reached_the_end(events: &[Event]) -> bool {
    events.iter().any(|e| matches!(e, Event::Progress { fraction, .. } if (*fraction - 1.0).abs() < 1e-6))
}

/// setup's plan for a new environment from the wheelhouse, applied; the deep probe sees the
/// build; a second plan swaps the build in the now existing environment (its package list saved
/// first); undo puts the first build back, package for package.
fn end_to_end(tool: &Tool, base: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let wheels = wheelhouse(&dir.path().join("wheels"));
    let opts = options(&dir.path().join("logs"));
    let env = dir.path().join("env");
    let python = envtool::python_in(&env);
    let req = SetupRequest {
        framework: Framework::Torch,
        env,
        tool: tool.clone(),
        python: base.to_owned(),
        find_links: Some(wheels.clone()),
        wheelhouse: gpu_doctor_installers::planners::setup::wheel_files(&wheels).unwrap(),
        python_version: None,
    };
    let first = setup_plan_with(&req, torch_choice("cu121")).unwrap();
    let (outcome, events) = apply_all(&first, &opts);
    // The verify step runs the smoke test: no GPU here, so GPU use is not proven, and it says what it checked.
    assert_eq!(outcome.steps[..2], [StepStatus::Done, StepStatus::Done], "{events:#?}");
    match &outcome.steps[2] {
        StepStatus::Unproven { summary } => {
            assert!(summary.contains("torch 2.5.1+cu121 imports") && summary.contains("CPU matmul ok"), "{summary}");
        }
        other => panic!("verify: {other:?}"),
    }
    assert_eq!(outcome.backup, None, "a new environment has nothing to back up");
    assert!(progress_reached_the_end(&events), "{events:#?}");
    let log = std::fs::read_to_string(outcome.log.unwrap()).unwrap();
    // The installer's own lines are logged, not only the command line (the `== step` lines name the pins).
    assert!(
        log.lines()
            .any(|l| !l.starts_with("== ") && (l.contains("torch-2.5.1+cu121") || l.contains("torch==2.5.1+cu121"))),
        "{log}"
    );
    let torch = deep_torch(&python);
    assert_eq!(torch.version.as_deref(), Some("2.5.1+cu121"));
    assert_eq!(torch.cuda.as_deref(), Some("12.1"));
    assert!(torch.arch_list.unwrap().contains(&"sm_90".to_owned()));
    assert_eq!(torch.cuda_available, Some(false));

    let before = freeze(tool, &python);
    let files_before = records(&env_of(&python));
    let second = setup_plan_with(&req, torch_choice("cpu")).unwrap();
    assert_eq!(second.steps.len(), 2, "an existing environment is not created again");
    let (outcome, events) = apply_all(&second, &opts);
    assert_eq!(outcome.steps[0], StepStatus::Done, "{events:#?}");
    assert!(matches!(outcome.steps[1], StepStatus::Unproven { .. }), "{events:#?}");
    let torch = deep_torch(&python);
    assert_eq!((torch.version.as_deref(), torch.cuda), (Some("2.5.1+cpu"), None));
    assert!(freeze(tool, &python).contains(&"torchvision==0.20.1+cpu".to_owned()));

    let backup = outcome.backup.expect("the existing environment's package list was saved");
    let (undone, events) = undo_all(&python, &backup, &opts);
    assert_eq!(undone.steps, [const { StepStatus::Done }; 4], "{events:#?}");
    assert_eq!(freeze(tool, &python), before);
    assert_eq!(deep_torch(&python).version.as_deref(), Some("2.5.1+cu121"));
    // Not only the list: every RECORD and every file it lists, with its hash.
    assert_eq!(records(&env_of(&python)), files_before);
    assert!(matches!(undone.files, Some(apply::FilesState::Whole { .. })), "{:?}", undone.files);
}

/// The distributions of [`records`] with files missing or changed, and those files.
fn damage(records: &BTreeSet<(String, String, Vec<String>)>) -> Vec<(&str, &[String])> {
    records.iter().filter(|(_, _, d)| !d.is_empty()).map(|(folder, _, d)| (folder.as_str(), d.as_slice())).collect()
}

/// The environment of the interpreter `ENV/bin/python`.
fn env_of(python: &Path) -> PathBuf {
    python.parent().unwrap().parent().unwrap().to_owned()
}

#[test]
fn pip_builds_an_environment_the_deep_probe_sees_and_undo_restores_it() {
    let Some(base) = base_python() else { return skip("python3 with venv and ensurepip") };
    end_to_end(&Tool::Pip, &base);
}

#[test]
fn uv_builds_an_environment_the_deep_probe_sees_and_undo_restores_it() {
    let Some(base) = base_python() else { return skip("python3 with venv and ensurepip") };
    let Ok(tool) = envtool::detect(Some("uv")) else { return skip("uv on PATH (.ci/run installs it)") };
    end_to_end(&tool, &base);
}

#[test]
fn a_failing_step_stops_the_plan_and_undo_restores_the_exact_package_list() {
    let Some(Existing { dir, wheels, env, python, before }) = existing_env() else { return };
    let files_before = records(&env);
    let steps = vec![
        install(&Tool::Pip, &python, &wheels, &["torch==2.5.1+cpu", "torchvision==0.20.1+cpu"]),
        install(&Tool::Pip, &python, &wheels, &["broken==1.0"]),
        Step::root("touch /should-never-exist", "test", "test", "test"),
        verify(&python),
    ];
    let opts = options(&dir.path().join("logs"));
    let (outcome, events) = apply_all(&plan(Some(&env), steps), &opts);
    let [done, StepStatus::Failed { reason }, StepStatus::NotRun, StepStatus::NotRun] = outcome.steps.as_slice() else {
        panic!("{:?}", outcome.steps)
    };
    assert_eq!(done, &StepStatus::Done);
    assert!(reason.contains("exited with status 1") && reason.contains("gpu-doctor-test-missing"), "{reason}");
    assert!(events.iter().any(|e| matches!(e, Event::Ended { index: 1, status: StepStatus::Failed { .. } })));
    assert_ne!(freeze(&Tool::Pip, &python), before, "the first step changed the environment");

    let backup = outcome.backup.expect("backup taken");
    let saved = std::fs::read_to_string(&backup).unwrap();
    assert!(saved.contains("torch==2.5.1+cu121\n") && saved.contains(&format!("--find-links {}", wheels.display())));
    let (undone, events) = undo_all(&python, &backup, &opts);
    assert_eq!(undone.steps, [const { StepStatus::Done }; 4], "{events:#?}");
    assert_eq!(freeze(&Tool::Pip, &python), before);
    assert_eq!(records(&env), files_before);
}

#[test]
fn cancel_mid_install_leaves_the_environment_as_the_undo_list_describes() {
    let Some(Existing { dir, wheels, env, python, before }) = existing_env() else { return };
    let steps =
        vec![install(&Tool::Pip, &python, &wheels, &["torch==2.5.1+cpu", "torchvision==0.20.1+cpu"]), verify(&python)];
    let opts = options(&dir.path().join("logs"));
    let cancel = AtomicBool::new(false);
    // Cancel as soon as pip says it is working on a wheel: pip is still running then.
    let outcome = apply::apply(&plan(Some(&env), steps), &opts, &cancel, &mut |e| {
        if matches!(&e, Event::Line { text, .. } if text.starts_with("Processing ")) {
            cancel.store(true, Ordering::SeqCst);
        }
    });
    assert_eq!(outcome.steps, [StepStatus::Cancelled, StepStatus::NotRun]);
    let backup = outcome.backup.expect("backup taken before the install started");
    let (undone, events) = undo_all(&python, &backup, &opts);
    assert!(undone.steps.iter().all(|s| *s == StepStatus::Done), "{events:#?}");
    assert_eq!(freeze(&Tool::Pip, &python), before);
}

/// Freeze lines as a set, each its normalized name (`apply::name_of`) and the rest as written
/// (`==2.5.1+cu121`, ` @ file:///….whl#sha256=…`).
fn normalized(lines: &[String]) -> BTreeSet<String> {
    lines
        .iter()
        .map(|line| format!("{}{}", apply::name_of(line), &line.trim()[envtool::package_name(line.trim()).len()..]))
        .collect()
}

/// The lines of a saved package list that are packages (not its comments and option lines).
fn saved_pins(backup: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(backup).unwrap();
    text.lines().filter(|l| !l.starts_with('#') && !l.starts_with("--")).map(str::to_owned).collect()
}

/// Applies a plan whose one step changes nothing (an install of what is there) to the environment
/// `env` and returns the lines of the package list it saved and its log.
fn backup_of(tool: &Tool, env: &Path, wheels: &Path) -> (Vec<String>, String) {
    let python = envtool::python_in(env);
    let steps = vec![install(tool, &python, wheels, &["jaxlib==0.4.35"])];
    let logs = env.parent().unwrap().join("logs");
    let (outcome, events) = apply_all(&plan(Some(env), steps), &options(&logs));
    assert_eq!(outcome.steps, [StepStatus::Done], "{events:#?}");
    let log = std::fs::read_to_string(outcome.log.unwrap()).unwrap();
    (saved_pins(&outcome.backup.expect("a backup")), log)
}

/// A venv of the wheelhouse's torch, jax and its CUDA plugin made by `tool`, and torchvision
/// installed from its wheel's path (a PEP 610 `direct_url.json`: `name @ file://…`).
fn tool_venv(tool: &Tool, base: &Path, env: &Path, wheels: &Path) {
    let status = match tool {
        Tool::Uv { uv } => Command::new(uv).args(["venv", "-q", "--python"]).arg(base).arg(env).status(),
        _ => Command::new(base).args(["-m", "venv"]).arg(env).status(),
    };
    assert!(status.unwrap().success(), "the venv could not be made");
    let python = envtool::python_in(env);
    let reqs = ["torch==2.5.1+cu121", "jax==0.4.35", "jax_cuda12_plugin==0.4.35"].map(str::to_owned);
    let wheel = wheels.join("torchvision-0.20.1+cpu-py3-none-any.whl").display().to_string();
    let installs = [
        envtool::install(tool, &python, &reqs, &Source { index_url: None, find_links: Some(wheels.into()) }),
        envtool::install(tool, &python, &["--no-deps".into(), wheel], &Source::default()),
    ];
    for argv in installs {
        let out = Command::new(&argv[0]).args(&argv[1..]).env("PIP_DISABLE_PIP_VERSION_CHECK", "1").output().unwrap();
        assert!(out.status.success(), "{argv:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// The list saved before a plan touches an existing venv is read from its `*.dist-info` folders
/// (the log says so) and is what the tool's own freeze prints, `@ file://` install included.
fn the_saved_list_is_what_the_tool_prints(tool: &Tool, base: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let wheels = wheelhouse(&dir.path().join("wheels"));
    let env = dir.path().join("env");
    tool_venv(tool, base, &env, &wheels);
    let frozen = freeze(tool, &envtool::python_in(&env));
    assert!(frozen.iter().any(|l| l.starts_with("torchvision @ file://")), "{frozen:?}");
    let (saved, log) = backup_of(tool, &env, &wheels);
    assert!(log.contains("the package list: read from the *.dist-info folders in "), "{log}");
    assert_eq!(normalized(&saved), normalized(&frozen), "{log}");
    assert_eq!(saved.len(), frozen.len());
    // uv prints normalized names in its own order on every version, so its lines match exactly;
    // pip's spelling of a name depends on its metadata backend (`jax-cuda12-plugin` before 3.11).
    if let Tool::Uv { .. } = tool {
        assert_eq!(saved, frozen, "{log}");
    }
}

#[test]
fn pip_s_freeze_is_read_from_disk() {
    let Some(base) = base_python() else { return skip("python3 with venv and ensurepip") };
    the_saved_list_is_what_the_tool_prints(&Tool::Pip, &base);
}

#[test]
fn uv_s_freeze_is_read_from_disk() {
    let Some(base) = base_python() else { return skip("python3 with venv and ensurepip") };
    let Ok(tool) = envtool::detect(Some("uv")) else { return skip("uv on PATH (.ci/run installs it)") };
    the_saved_list_is_what_the_tool_prints(&tool, &base);
}

/// A venv that sees the system site-packages is listed by pip itself, and the log says why.
#[test]
fn a_venv_with_system_site_packages_is_frozen_by_the_tool() {
    let Some(base) = base_python() else { return skip("python3 with venv and ensurepip") };
    let dir = tempfile::tempdir().unwrap();
    let wheels = wheelhouse(&dir.path().join("wheels"));
    let env = dir.path().join("env");
    let status = Command::new(&base).args(["-m", "venv", "--system-site-packages"]).arg(&env).status().unwrap();
    assert!(status.success());
    let frozen = freeze(&Tool::Pip, &envtool::python_in(&env));
    let (saved, log) = backup_of(&Tool::Pip, &env, &wheels);
    assert!(log.contains(" -m pip freeze --all (the venv sees the system site-packages: the tool lists it)"), "{log}");
    assert_eq!(saved, frozen);
}

#[test]
fn cancel_stops_a_running_step_at_once_and_nothing_after_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("after");
    // A loop: `sh -c` acts on SIGINT between commands (one that came just before its last command
    // would be lost with the exec).
    let script = "echo sleeping; while :; do sleep 0.1; done";
    let sleep = Step::run(vec!["/bin/sh".into(), "-c".into(), script.into()], "t", "t", "t");
    let after = Step::run(vec!["/bin/sh".into(), "-c".into(), format!("touch '{}'", marker.display())], "t", "t", "t");
    let cancel = AtomicBool::new(false);
    let started = Instant::now();
    let outcome = apply::apply(&plan(None, vec![sleep, after]), &options(dir.path()), &cancel, &mut |e| {
        if matches!(&e, Event::Line { text, .. } if text == "sleeping") {
            cancel.store(true, Ordering::SeqCst);
        }
    });
    assert_eq!(outcome.steps, [StepStatus::Cancelled, StepStatus::NotRun]);
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert!(!marker.exists());
    let log = std::fs::read_to_string(outcome.log.unwrap()).unwrap();
    // The line the step printed, not only the command line that contains the word.
    assert!(log.lines().any(|l| l == "sleeping") && log.contains("cancelled"), "{log}");
}

#[test]
fn a_step_past_its_time_limit_fails_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let sleep = Step::run(vec!["/bin/sh".into(), "-c".into(), "sleep 30".into()], "t", "t", "t");
    let mut opts = options(dir.path());
    opts.step_timeout = Duration::from_millis(300);
    let (outcome, _) = apply_all(&plan(None, vec![sleep]), &opts);
    let [StepStatus::Failed { reason }] = outcome.steps.as_slice() else { panic!("{:?}", outcome.steps) };
    assert!(reason.contains("time limit"), "{reason}");
}

/// pip against a port where nothing listens (a real connection error, no network needed).
#[test]
fn an_unreachable_index_is_named_with_the_offline_route() {
    let Some(base) = base_python() else { return skip("python3 with venv and ensurepip") };
    let dir = tempfile::tempdir().unwrap();
    let python = venv_with(&base, &dir.path().join("env"), dir.path(), &[]);
    let index = "http://127.0.0.1:9/simple";
    let mut argv = envtool::install(
        &Tool::Pip,
        &python,
        &["gpu-doctor-test-absent".into()],
        &Source { index_url: Some(index.into()), find_links: None },
    );
    argv.extend(["--retries".into(), "1".into()]);
    let (outcome, _) = apply_all(&plan(None, vec![Step::run(argv, "t", "t", "t")]), &options(dir.path()));
    let [StepStatus::Failed { reason }] = outcome.steps.as_slice() else { panic!("{:?}", outcome.steps) };
    assert!(reason.starts_with(&format!("could not reach {index} (")), "{reason}");
    assert!(reason.contains("--find-links DIR"), "{reason}");
}

#[test]
fn a_log_folder_that_cannot_be_made_fails_the_first_step_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    let marker = dir.path().join("ran");
    let touch = Step::run(vec!["/bin/sh".into(), "-c".into(), format!("touch '{}'", marker.display())], "t", "t", "t");
    let (outcome, _) = apply_all(&plan(None, vec![Step::manual("reboot", "t"), touch]), &options(&file.join("logs")));
    assert!(matches!(outcome.steps.as_slice(), [StepStatus::NotRun, StepStatus::Failed { .. }]), "{:?}", outcome.steps);
    assert!(!marker.exists());
}

/// A fake environment at `dir/env` whose only interpreter is `bin/python3` (as a Debian system
/// prefix has it): a shell script that answers `-m pip freeze|install|uninstall` from and into
/// `state.txt` (`name==version` lines); with a file `broken` beside it, install and uninstall
/// change nothing and succeed.
fn fake_env(dir: &Path, pins: &[&str]) -> (PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let env = dir.join("env");
    std::fs::create_dir_all(env.join("bin")).unwrap();
    let python = env.join("bin/python3");
    let script = r#"#!/bin/sh
here="$(dirname "$0")/.."
state="$here/state.txt"
[ "$1 $2" = "-m pip" ] || exit 9
shift 2
cmd=$1; shift
[ -e "$here/broken" ] && [ "$cmd" != freeze ] && exit 0
case "$cmd" in
  freeze) cat "$state" ;;
  install) for a in "$@"; do case "$a" in *==*)
      grep -v "^${a%%==*}==" "$state" > "$state.t"; echo "$a" >> "$state.t"; mv "$state.t" "$state" ;;
    esac; done ;;
  uninstall) for a in "$@"; do case "$a" in -*) ;; *)
      grep -v "^$a==" "$state" > "$state.t"; mv "$state.t" "$state" ;;
    esac; done ;;
  *) exit 9 ;;
esac
"#;
    std::fs::write(&python, script).unwrap();
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(env.join("state.txt"), pins.iter().map(|p| format!("{p}\n")).collect::<String>()).unwrap();
    (env, python)
}

fn fake_state(env: &Path) -> BTreeSet<String> {
    std::fs::read_to_string(env.join("state.txt")).unwrap().lines().map(str::to_owned).collect()
}

fn fake_install(python: &Path, pin: &str) -> Step {
    Step::run(
        vec![python.display().to_string(), "-m".into(), "pip".into(), "install".into(), pin.into()],
        "t",
        "t",
        "t",
    )
}

fn undo_with(
    env: &Path,
    backup: &Path,
    opts: &apply::ApplyOptions,
    answer: bool,
) -> (apply::Outcome, Vec<apply::UndoPreview>) {
    let mut previews = Vec::new();
    let outcome = apply::undo(env, backup, opts, &AtomicBool::new(false), &mut |_| {}, &mut |p| {
        previews.push(p.clone());
        answer
    });
    (outcome, previews)
}

/// An environment with `bin/python3` and no `bin/python` is backed up with the plan's own
/// interpreter; undo shows what it removes, changes nothing unless confirmed, and then puts the
/// list back and says so after reading it again.
#[cfg(unix)]
#[test]
fn undo_shows_what_it_removes_and_changes_nothing_unless_confirmed() {
    let dir = tempfile::tempdir().unwrap();
    let (env, python) = fake_env(dir.path(), &["a==1", "b==1"]);
    let opts = options(&dir.path().join("logs"));
    let (outcome, events) = apply_all(&plan(Some(&env), vec![fake_install(&python, "c==1")]), &opts);
    assert_eq!(outcome.steps, [StepStatus::Done], "{events:#?}");
    let backup = outcome.backup.expect("the plan's interpreter python3 is there: a backup");
    assert!(
        std::fs::read_to_string(&backup).unwrap().contains(&format!("# gpu-doctor-python: {}\n", python.display()))
    );
    assert_eq!(
        outcome.state,
        Some(apply::EnvState::Changed { changes: vec!["c: not installed before, ==1 now".into()], planned: true })
    );
    let (declined, previews) = undo_with(&env, &backup, &opts, false);
    assert_eq!(previews.len(), 1);
    assert_eq!((previews[0].remove.as_slice(), previews[0].install.len()), (["c".to_owned()].as_slice(), 0));
    assert!(previews[0].commands[0].contains("uninstall --yes c"), "{:?}", previews[0].commands);
    assert_eq!(declined.steps[1..], [StepStatus::NotRun, StepStatus::NotRun, StepStatus::NotRun]);
    assert!(fake_state(&env).contains("c==1"), "declined: nothing removed");
    let (undone, _) = undo_with(&env, &backup, &opts, true);
    assert_eq!(undone.steps, [const { StepStatus::Done }; 4]);
    assert_eq!(undone.state, Some(apply::EnvState::AsBefore));
    assert_eq!(fake_state(&env), BTreeSet::from(["a==1".to_owned(), "b==1".to_owned()]));
}

/// Undo reads the list again and says what still differs, rather than that all is well.
#[cfg(unix)]
#[test]
fn undo_says_truly_when_the_packages_still_differ() {
    let dir = tempfile::tempdir().unwrap();
    let (env, python) = fake_env(dir.path(), &["a==1"]);
    let opts = options(&dir.path().join("logs"));
    let (outcome, _) = apply_all(&plan(Some(&env), vec![fake_install(&python, "a==2")]), &opts);
    std::fs::write(env.join("broken"), "").unwrap();
    let (undone, _) = undo_with(&env, &outcome.backup.unwrap(), &opts, true);
    let StepStatus::Failed { reason } = &undone.steps[3] else { panic!("{:?}", undone.steps) };
    assert!(reason.contains("still differ") && reason.contains("a: ==1 before, ==2 now"), "{reason}");
    assert!(matches!(undone.state, Some(apply::EnvState::Changed { .. })), "{:?}", undone.state);
}

/// A list that names another interpreter, or carries options for pip, runs nothing.
#[cfg(unix)]
#[test]
fn a_hostile_list_runs_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let (env, _) = fake_env(dir.path(), &["a==1", "b==1"]);
    let opts = options(&dir.path().join("logs"));
    let marker = dir.path().join("ran");
    let evil = dir.path().join("evil.sh");
    std::fs::write(&evil, format!("#!/bin/sh\ntouch '{}'\n", marker.display())).unwrap();
    std::fs::set_permissions(&evil, std::fs::Permissions::from_mode(0o755)).unwrap();
    let lists = [
        (
            format!(
                "# gpu-doctor-python: {}\n# gpu-doctor-tool: pip\na==1\n# gpu-doctor-end: 1 packages\n",
                evil.display()
            ),
            "not the interpreter of",
        ),
        (
            format!(
                "# gpu-doctor-python: {}/bin/python3\n# gpu-doctor-tool: pip\n--target=/tmp/x\na==1\n# gpu-doctor-end: 1 packages\n",
                env.display()
            ),
            "not an option",
        ),
        (format!("# gpu-doctor-python: {}/bin/python3\n# gpu-doctor-tool: pip\na==1\n", env.display()), "no end line"),
    ];
    for (n, (text, why)) in lists.iter().enumerate() {
        let backup = dir.path().join(format!("list-{n}.txt"));
        std::fs::write(&backup, text).unwrap();
        let (outcome, previews) = undo_with(&env, &backup, &opts, true);
        let StepStatus::Failed { reason } = &outcome.steps[0] else { panic!("{:?}", outcome.steps) };
        assert!(reason.contains(why), "{reason}");
        assert!(previews.is_empty());
    }
    assert!(!marker.exists(), "the interpreter the list names was run");
    assert_eq!(fake_state(&env), BTreeSet::from(["a==1".to_owned(), "b==1".to_owned()]));
}

/// A second apply started while the first runs is refused before it saves or changes anything.
#[cfg(unix)]
#[test]
fn a_second_apply_on_one_environment_is_refused_while_the_first_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (env, python) = fake_env(dir.path(), &["a==1"]);
    let opts = options(&dir.path().join("logs"));
    let slow = Step::run(vec!["/bin/sh".into(), "-c".into(), "echo started; sleep 2".into()], "t", "t", "t");
    let (started_tx, started_rx) = std::sync::mpsc::sync_channel(1);
    std::thread::scope(|s| {
        let first = s.spawn(|| {
            apply::apply(&plan(Some(&env), vec![slow]), &opts, &AtomicBool::new(false), &mut |e| {
                if matches!(&e, Event::Line { text, .. } if text == "started") {
                    started_tx.send(()).unwrap();
                }
            })
        });
        started_rx.recv_timeout(Duration::from_secs(30)).unwrap();
        let (second, _) = apply_all(&plan(Some(&env), vec![fake_install(&python, "a==2")]), &opts);
        let [StepStatus::Failed { reason }] = second.steps.as_slice() else { panic!("{:?}", second.steps) };
        assert!(reason.contains("another gpu-doctor run") && reason.contains("nothing was changed"), "{reason}");
        assert_eq!(second.backup, None);
        assert_eq!(fake_state(&env), BTreeSet::from(["a==1".to_owned()]));
        assert_eq!(first.join().unwrap().steps, [StepStatus::Done]);
    });
    // Released at the end: the next run goes ahead.
    let (third, _) = apply_all(&plan(Some(&env), vec![fake_install(&python, "a==2")]), &opts);
    assert_eq!(third.steps, [StepStatus::Done]);
}

/// Cancel once pip has started to replace torch: pip is left to finish (killing it there leaves
/// the environment without torch), nothing after it runs, and undo puts the list back exactly.
#[test]
fn cancel_while_pip_replaces_a_package_lets_it_finish_and_undo_restores_it() {
    let Some(Existing { dir, wheels, env, python, before }) = existing_env() else { return };
    let files_before = records(&env);
    assert!(!files_before.is_empty() && files_before.iter().all(|(_, _, missing)| missing.is_empty()));
    let steps =
        vec![install(&Tool::Pip, &python, &wheels, &["torch==2.5.1+cpu", "torchvision==0.20.1+cpu"]), verify(&python)];
    let opts = options(&dir.path().join("logs"));
    let cancel = AtomicBool::new(false);
    let outcome = apply::apply(&plan(Some(&env), steps), &opts, &cancel, &mut |e| {
        if matches!(&e, Event::Line { text, .. } if text.trim_start().starts_with("Attempting uninstall")) {
            cancel.store(true, Ordering::SeqCst);
        }
    });
    assert!(cancel.load(Ordering::SeqCst), "pip replaced torch");
    assert_eq!(outcome.steps, [StepStatus::Done, StepStatus::Cancelled]);
    assert!(freeze(&Tool::Pip, &python).contains(&"torch==2.5.1+cpu".to_owned()));
    assert!(matches!(outcome.state, Some(apply::EnvState::Changed { planned: true, .. })), "{:?}", outcome.state);
    let (undone, events) = undo_all(&python, &outcome.backup.unwrap(), &opts);
    assert_eq!(undone.steps, [const { StepStatus::Done }; 4], "{events:#?}");
    assert_eq!(freeze(&Tool::Pip, &python), before);
    // Not only the list: every distribution's RECORD as before, and every file it lists there.
    assert_eq!(records(&env), files_before);
}

/// setup's plan into an empty folder made before: uv makes the venv there (it refuses a folder with
/// a file in it, so nothing is put there first), and the new environment is locked once it is made.
#[test]
fn a_new_environment_in_an_empty_folder_is_made_by_uv_then_locked() {
    let Some(base) = base_python() else { return skip("python3 with venv and ensurepip") };
    let Ok(tool) = envtool::detect(Some("uv")) else { return skip("uv on PATH (.ci/run installs it)") };
    let dir = tempfile::tempdir().unwrap();
    let wheels = wheelhouse(&dir.path().join("wheels"));
    let env = dir.path().join("env");
    std::fs::create_dir(&env).unwrap();
    let req = SetupRequest {
        framework: Framework::Torch,
        env: env.clone(),
        tool,
        python: base,
        find_links: Some(wheels.clone()),
        wheelhouse: gpu_doctor_installers::planners::setup::wheel_files(&wheels).unwrap(),
        python_version: None,
    };
    let plan = setup_plan_with(&req, torch_choice("cpu")).unwrap();
    let mut events = Vec::new();
    let mut lock_seen = false;
    let lock = env.join(".gpu-doctor.lock");
    let outcome = apply::apply(&plan, &options(&dir.path().join("logs")), &AtomicBool::new(false), &mut |e| {
        // While the install step runs, the environment the first step made is locked.
        lock_seen |= matches!(&e, Event::Started { index: 1, .. }) && lock.exists();
        events.push(e);
    });
    assert_eq!(outcome.steps[..2], [StepStatus::Done, StepStatus::Done], "{events:#?}");
    assert!(lock_seen, "{events:#?}");
}

/// A CPU → CUDA switch from PyTorch's cu121 index: the list saves that the replaced `+cpu` build
/// comes from PyTorch's cpu index, and undo installs it from there (asking the cu121 index for
/// `torch==2.5.1+cpu` could never work).
#[cfg(unix)]
#[test]
fn undo_takes_a_replaced_pytorch_build_back_from_its_own_index() {
    let dir = tempfile::tempdir().unwrap();
    let (env, python) = fake_env(dir.path(), &["torch==2.5.1+cpu", "numpy==2.1.0"]);
    let opts = options(&dir.path().join("logs"));
    let cu121 = "https://download.pytorch.org/whl/cu121";
    let install = Step::run(
        [python.display().to_string(), "-m".into(), "pip".into(), "install".into(), "--index-url".into(), cu121.into()]
            .into_iter()
            .chain(["torch==2.5.1+cu121".to_owned()])
            .collect(),
        "t",
        "t",
        "t",
    );
    let (outcome, events) = apply_all(&plan(Some(&env), vec![install]), &opts);
    assert_eq!(outcome.steps, [StepStatus::Done], "{events:#?}");
    // Nothing is said to be lost: its index is known.
    assert!(!events.iter().any(|e| matches!(e, Event::Line { text, .. } if text.contains("will not be able"))));
    let backup = outcome.backup.unwrap();
    let saved = std::fs::read_to_string(&backup).unwrap();
    assert!(saved.contains("# gpu-doctor-origin: torch https://download.pytorch.org/whl/cpu\n"), "{saved}");
    let (undone, previews) = undo_with(&env, &backup, &opts, true);
    assert_eq!(undone.steps, [const { StepStatus::Done }; 4], "{previews:?}");
    let [command] = previews[0].commands.as_slice() else { panic!("{previews:?}") };
    assert!(
        command.contains("--index-url https://download.pytorch.org/whl/cpu --no-deps torch==2.5.1+cpu"),
        "{command}"
    );
    assert_eq!(fake_state(&env), BTreeSet::from(["numpy==2.1.0".to_owned(), "torch==2.5.1+cpu".to_owned()]));
}

/// Issue 29: a new environment whose install fails is deleted again (a bare venv was left behind),
/// while a folder the person had made empty stays, empty.
#[test]
fn a_new_environment_whose_install_fails_is_deleted_again() {
    let Some(base) = base_python() else { return skip("python3 with venv and ensurepip") };
    let Ok(tool) = envtool::detect(Some("uv")) else { return skip("uv on PATH (.ci/run installs it)") };
    let dir = tempfile::tempdir().unwrap();
    let wheels = wheelhouse(&dir.path().join("wheels"));
    for made_before in [false, true] {
        let env = dir.path().join(format!("env-{made_before}"));
        if made_before {
            std::fs::create_dir(&env).unwrap();
        }
        let req = SetupRequest {
            framework: Framework::Torch,
            env: env.clone(),
            tool: tool.clone(),
            python: base.clone(),
            find_links: Some(wheels.clone()),
            wheelhouse: gpu_doctor_installers::planners::setup::wheel_files(&wheels).unwrap(),
            python_version: None,
        };
        // No cu999 build is in the wheelhouse: the install fails after the venv was made.
        let plan = setup_plan_with(&req, torch_choice("cu999")).unwrap();
        let (outcome, events) = apply_all(&plan, &options(&dir.path().join("logs")));
        assert!(matches!(outcome.steps[..2], [StepStatus::Done, StepStatus::Failed { .. }]), "{events:#?}");
        assert_eq!(outcome.deleted_env.as_deref(), Some(env.as_path()));
        assert_eq!(env.exists(), made_before, "{events:#?}");
        if made_before {
            assert_eq!(std::fs::read_dir(&env).unwrap().count(), 0);
        }
        let said = events.iter().any(|e| matches!(e, Event::Line { text, .. } if text.starts_with("deleted ")));
        assert!(said, "{events:#?}");
    }
}

/// How the run that installs the CUDA 13 cuDNN wheel beside the CUDA 12 one ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SharedEnd {
    /// It succeeds.
    Done,
    /// Its next step fails.
    Failed,
    /// Cancel is pressed once the wheel is in; the next step is not run.
    Cancelled,
    /// It succeeds, and the CUDA 12 wheel is no longer in the wheel folder when undo runs.
    NoWheelForUndo,
}

/// Issue 29 item 4: wheels of two CUDA majors write the same files. An environment with the CUDA
/// 12 cuDNN wheel gets the CUDA 13 one beside it: the run's outcome says the CUDA 12 wheel's
/// file was overwritten (same size, other bytes: found by its hash). Undo removes the CUDA 13
/// wheel, which deletes the files the two share; the package list is as before, and the files are
/// checked and the CUDA 12 wheel reinstalled, so every RECORD and every file it lists is as
/// before, with its hash, and the outcome says so. Where the wheel to reinstall is gone, undo
/// fails and names what is missing. On the code before this check, the files stayed missing and
/// undo said all was well.
fn shared_files_come_back_after_undo(tool: &Tool, end: SharedEnd) {
    let Some(Existing { dir, wheels, env, python, .. }) = existing_env() else { return };
    // Installed by the tool that reinstalls it: its RECORD (which names the installer) is the same.
    let source = Source { index_url: None, find_links: Some(wheels.clone()) };
    let argv = envtool::install(tool, &python, &["nvidia_cudnn_cu12==9.1.0.70".into()], &source);
    let setup = Command::new(&argv[0]).args(&argv[1..]).output().unwrap();
    assert!(setup.status.success(), "{}", String::from_utf8_lossy(&setup.stderr));
    let before = freeze(&Tool::Pip, &python);
    let files_before = records(&env);
    assert!(files_before.iter().all(|(_, _, damaged)| damaged.is_empty()), "{files_before:?}");
    let mut steps = vec![install(tool, &python, &wheels, &["nvidia_cudnn_cu13==9.13.0.50"])];
    match end {
        SharedEnd::Failed => steps.push(install(tool, &python, &wheels, &["broken==1.0"])),
        SharedEnd::Cancelled => steps.push(install(tool, &python, &wheels, &["torch==2.5.1+cpu"])),
        SharedEnd::Done | SharedEnd::NoWheelForUndo => {}
    }
    let opts = options(&dir.path().join("logs"));
    let cancel = AtomicBool::new(false);
    let mut events = Vec::new();
    let outcome = apply::apply(&plan(Some(&env), steps), &opts, &cancel, &mut |e| {
        if end == SharedEnd::Cancelled
            && matches!(&e, Event::Line { text, .. } if text.starts_with("Successfully installed nvidia"))
        {
            cancel.store(true, Ordering::SeqCst);
        }
        events.push(e);
    });
    match end {
        SharedEnd::Done | SharedEnd::NoWheelForUndo => assert_eq!(outcome.steps, [StepStatus::Done], "{events:#?}"),
        SharedEnd::Failed => {
            assert!(matches!(outcome.steps[..], [StepStatus::Done, StepStatus::Failed { .. }]), "{events:#?}");
        }
        SharedEnd::Cancelled => assert_eq!(outcome.steps, [StepStatus::Done, StepStatus::Cancelled], "{events:#?}"),
    }
    // The apply's outcome says the CUDA 12 wheel's files are no longer its own, and why.
    let Some(apply::FilesState::Broken { broken, repaired }) = &outcome.files else { panic!("{:?}", outcome.files) };
    assert!(repaired.is_empty(), "reinstalling one of two wheels that share files breaks the other");
    let [hit] = broken.as_slice() else { panic!("{broken:?}") };
    assert_eq!(
        (hit.name.as_str(), hit.version.as_str(), hit.missing, hit.changed),
        ("nvidia-cudnn-cu12", "9.1.0.70", 0, 1)
    );
    assert_eq!(hit.examples, ["nvidia/cudnn/lib/libcudnn.so.9"]);
    assert_eq!(hit.shared_with, ["nvidia-cudnn-cu13"]);
    if end == SharedEnd::NoWheelForUndo {
        std::fs::remove_file(wheels.join("nvidia_cudnn_cu12-9.1.0.70-py3-none-any.whl")).unwrap();
    }

    let (undone, events) = undo_all(&python, &outcome.backup.unwrap(), &opts);
    assert_eq!(freeze(&Tool::Pip, &python), before, "the package list is as before either way");
    if end == SharedEnd::NoWheelForUndo {
        let StepStatus::Failed { reason } = &undone.steps[3] else { panic!("{events:#?}") };
        assert!(reason.contains("nvidia-cudnn-cu12==9.1.0.70: 2 file(s) missing"), "{reason}");
        let Some(apply::FilesState::Broken { broken, .. }) = &undone.files else { panic!("{:?}", undone.files) };
        assert_eq!(broken.iter().map(|b| (b.name.as_str(), b.missing)).collect::<Vec<_>>(), [("nvidia-cudnn-cu12", 2)]);
        assert_ne!(records(&env), files_before);
        return;
    }
    let files_after = records(&env);
    // Every RECORD and every file it lists, with its hash, as before (the files that are not, shown).
    assert!(files_after == files_before, "{:?}", damage(&files_after));
    assert_eq!(undone.steps, [const { StepStatus::Done }; 4], "{events:#?}");
    let Some(apply::FilesState::Whole { repaired, .. }) = &undone.files else { panic!("{:?}", undone.files) };
    assert_eq!(repaired, &["nvidia-cudnn-cu12==9.1.0.70"]);
    let flags = if let Tool::Uv { .. } = tool { "--reinstall --no-deps" } else { "--force-reinstall --no-deps" };
    let said = events.iter().any(|e| {
        matches!(e, Event::Line { text, .. } if text.contains(flags) && text.contains("nvidia-cudnn-cu12==9.1.0.70"))
    });
    assert!(said, "{events:#?}");
}

#[test]
fn undo_after_success_brings_back_the_files_two_wheels_share() {
    shared_files_come_back_after_undo(&Tool::Pip, SharedEnd::Done);
}

#[test]
fn uv_s_undo_after_success_brings_back_the_files_two_wheels_share() {
    let Ok(tool) = envtool::detect(Some("uv")) else { return skip("uv on PATH (.ci/run installs it)") };
    shared_files_come_back_after_undo(&tool, SharedEnd::Done);
}

#[test]
fn undo_after_a_failed_step_brings_back_the_files_two_wheels_share() {
    shared_files_come_back_after_undo(&Tool::Pip, SharedEnd::Failed);
}

#[test]
fn undo_after_cancel_brings_back_the_files_two_wheels_share() {
    shared_files_come_back_after_undo(&Tool::Pip, SharedEnd::Cancelled);
}

#[test]
fn undo_that_cannot_bring_back_the_files_fails_and_names_them() {
    shared_files_come_back_after_undo(&Tool::Pip, SharedEnd::NoWheelForUndo);
}

/// A distribution whose files were not whole before the run (a file deleted by hand) is said and
/// saved as such (`# gpu-doctor-not-whole:`): neither the run nor its undo is blamed for it or
/// reinstalls it, and the others are checked as usual.
#[test]
fn a_distribution_broken_before_the_run_is_named_and_left_alone() {
    let Some(Existing { dir, wheels, env, python, .. }) = existing_env() else { return };
    let site = std::fs::read_dir(env.join("lib")).unwrap().next().unwrap().unwrap().path().join("site-packages");
    std::fs::remove_file(site.join("torch/version.py")).unwrap();
    let opts = options(&dir.path().join("logs"));
    let steps = vec![install(&Tool::Pip, &python, &wheels, &["jaxlib==0.4.35"])];
    let (outcome, events) = apply_all(&plan(Some(&env), steps), &opts);
    assert_eq!(outcome.steps, [StepStatus::Done], "{events:#?}");
    let said = events.iter().any(|e| {
        matches!(e, Event::Line { text, .. }
            if text.starts_with("not whole before the run: torch==2.5.1+cu121: 1 file(s) missing, 0 changed (e.g. torch/version.py)"))
    });
    assert!(said, "{events:#?}");
    assert!(
        matches!(&outcome.files, Some(apply::FilesState::Whole { repaired, .. }) if repaired.is_empty()),
        "{:?}",
        outcome.files
    );
    let backup = outcome.backup.unwrap();
    assert!(std::fs::read_to_string(&backup).unwrap().contains("\n# gpu-doctor-not-whole: torch==2.5.1+cu121\n"));
    let (undone, events) = undo_all(&python, &backup, &opts);
    assert_eq!(undone.steps, [const { StepStatus::Done }; 4], "{events:#?}");
    assert!(
        matches!(&undone.files, Some(apply::FilesState::Whole { repaired, .. }) if repaired.is_empty()),
        "{:?}",
        undone.files
    );
    assert!(!site.join("torch/version.py").exists(), "not reinstalled by undo");
}
