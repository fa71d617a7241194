//! Plans name paths of the machine, which may be hostile: every command a plan shows must hand its
//! program exactly the words meant, whatever the paths hold; and the fix prose written from a plan
//! holds the machine's text only inside those commands. The machines are the probes' own
//! (`gpu_doctor_judge::testing::hostile_machines`), each holding a folder name that runs commands
//! when pasted unquoted, inside single quotes, or inside double quotes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use gpu_doctor_installers::{Plan, StepKind, UserAction, attach, plans};
use gpu_doctor_judge::diagnose::diagnose;
use gpu_doctor_judge::testing::{MARK, Machine, hostile_machines, outside_powershell_quotes};
use gpu_doctor_kb::Kb;
use gpu_doctor_model::shell::Shell;
use gpu_doctor_model::{Change, PlanTarget, Report};
use gpu_doctor_model::{FrameworkBuild, OsFamily};

fn kb() -> &'static Kb {
    Kb::get().unwrap()
}

fn judged(m: &Machine) -> Report {
    let mut report = Report::new(m.0.clone(), diagnose(&m.0, kb()));
    attach(&mut report, kb());
    report
}

/// The one case whose fix stays the rule's prose: the probes' `diagnose/tests/quoting.rs` checks it.
const PROSE: &str = "a Linux driver inside WSL2";

/// What some fix of each case shows, so each case is known to reach the plan it is there for.
const REACHED: &[(&str, &str)] = &[
    ("tensorflow without cuDNN", "pip install 'tensorflow[and-cuda]==2.18.0'"),
    ("jax without cuDNN", "pip install -U 'jax[cuda12]'"),
    ("tensorflow with an old cuDNN on the loader path", "export LD_LIBRARY_PATH=/opt/x"),
    ("torch loads another cuDNN major", "--force-reinstall nvidia-cudnn-cu12==9.1.0.70"),
    ("torch loads another cuDNN minor", "nvidia-cudnn-cu12==9.1.0.70"),
    ("torch and jax of two majors", "jax-cuda13-pjrt"),
    ("torch and cupy of two majors", "cupy-cuda12x"),
    ("tensorflow and torch of two majors", "'torch==2.9.*'"),
    ("duplicate wheels", "--force-reinstall --no-deps nvidia-cublas-cu12==12.4.5.8"),
    ("toolkits disagree, framework major", "as root: ln -sfn"),
    ("toolkits disagree, newest", "export PATH="),
    ("stale library path", "export LD_LIBRARY_PATH="),
    ("extensions need another toolkit", "export CUDA_HOME="),
    ("WSL1", "In PowerShell on Windows: wsl --set-version"),
    ("a cuDNN release that dropped the GPU", "'nvidia-cudnn-cu12==9.10.*'"),
];

/// The words a POSIX shell must make of the line written for `change`; `None` for a change whose
/// line is not for that shell.
fn words(change: &Change) -> Option<Vec<String>> {
    Some(match change {
        Change::SetVar { name, value } => vec!["export".into(), format!("{name}={value}")],
        Change::UnsetVar { name } => vec!["unset".into(), name.clone()],
        Change::PrependPath { dir } => vec!["export".into(), format!("PATH={dir}:$PATH")],
        Change::Root { argv } => argv.clone(),
        _ => return None,
    })
}

/// Every step of `plan` against the changes it was made from: user commands and shell lines read
/// back as the words meant (POSIX), or keep the machine's text inside literals (PowerShell). Returns
/// each step's line as shown.
fn check_plan(name: &str, plan: &Plan, changes: &[Change], shell: Shell) -> Vec<String> {
    let mut shown = Vec::new();
    for (i, step) in plan.steps.iter().enumerate() {
        let line = step.render(shell).unwrap_or_else(|e| panic!("{name}: step {i} left out: {e}"));
        match (shell, &step.kind) {
            (Shell::Posix, StepKind::User { action: UserAction::Run { argv } }) => {
                assert_eq!(shlex::split(&line).as_ref(), Some(argv), "{name}: {line:?} does not read back");
            }
            (Shell::Posix, StepKind::Manual { text } | StepKind::Root { command: text }) => {
                if let Some(want) = changes.get(i).and_then(words) {
                    assert_eq!(shlex::split(text), Some(want), "{name}: {text:?} does not read back");
                }
            }
            (_, StepKind::Verify { .. }) => {}
            (_, _) => {
                // PowerShell (the only other shell plans use): the machine text only inside literals.
                let bare = outside_powershell_quotes(&line);
                assert!(!bare.contains(MARK), "{name}: PowerShell would run part of {line:?}: {bare}");
            }
        }
        if let (Shell::Posix, StepKind::Manual { text }) = (shell, &step.kind)
            && let Some(command) = text.strip_prefix("In PowerShell on Windows: ")
        {
            let bare = outside_powershell_quotes(command);
            assert!(!bare.contains(MARK), "{name}: PowerShell would run part of {command:?}: {bare}");
        }
        shown.push(line);
    }
    shown
}

/// Checks every change plan of `m` for `shell`; returns the fixes written from them.
fn check(name: &str, m: &Machine, shell: Shell) -> Vec<String> {
    let report = judged(m);
    let plans = plans(&report, kb());
    let mut fixes = Vec::new();
    for f in &report.findings {
        let (Some(r), Some(fix)) = (&f.plan, &f.fix) else { continue };
        let PlanTarget::Change { changes, .. } = &r.target else { continue };
        let plan = plans.iter().find(|p| p.id == r.id).unwrap_or_else(|| panic!("{name}: no plan {}", r.id));
        let shown = check_plan(name, plan, changes, shell);
        // What is left of the fix without its commands is prose and fixed syntax.
        let mut rest = fix.clone();
        let mut by_length = shown.clone();
        by_length.sort_by_key(|t| std::cmp::Reverse(t.len()));
        for line in &by_length {
            rest = rest.replace(line.as_str(), "<cmd>");
        }
        assert!(!rest.contains(MARK), "{name}: machine text outside a quoted command:\n{fix}\nleft: {rest}");
        fixes.push(fix.clone());
    }
    fixes
}

#[test]
fn every_plan_quotes_hostile_paths_for_posix_sh() {
    for (name, m) in hostile_machines().into_iter().filter(|(n, _)| *n != PROSE) {
        let (_, want) = REACHED.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("{name} has no REACHED"));
        let fixes = check(name, &m, Shell::Posix);
        assert!(fixes.iter().any(|f| f.contains(MARK)), "{name}: no plan shows the hostile path: {fixes:#?}");
        assert!(fixes.iter().any(|f| f.contains(want)), "{name}: no plan shows {want}: {fixes:#?}");
    }
}

#[test]
fn every_plan_quotes_hostile_paths_for_powershell_on_windows() {
    for (name, mut m) in hostile_machines() {
        m.0.platform.platform.os = OsFamily::Windows;
        let fixes = check(name, &m, Shell::PowerShell);
        // Every case but the prose one reaches a plan on Windows too (the WSL rules read the WSL facts).
        let shown = fixes.iter().any(|f| f.contains(MARK));
        assert!(shown || name == PROSE, "{name}: no Windows plan shows the hostile path: {fixes:#?}");
    }
}

#[test]
fn a_fix_for_pasted_text_says_its_paths_came_from_another_machine() {
    let ld = |m: Machine| {
        m.framework("tensorflow", "2.18.0", Some(FrameworkBuild::Cuda { version: Some("12.5.1".into()) }))
            .wheel("nvidia-cudnn-cu12", "9.1.0.70")
            .framework("cupy-cuda13x", "14.0.0", Some(FrameworkBuild::Cuda { version: Some("13".into()) }))
    };
    let pasted = ld(Machine::pasted().gpu("NVIDIA GeForce RTX 4090", "8.9").driver("570.124.06", "12.8"))
        .env_prefix("/home/them/.venv");
    let report = judged(&pasted);
    let f = report.findings.iter().find(|f| f.id == "wheels.mixed_cuda_majors").unwrap();
    let fix = f.fix.clone().unwrap();
    assert!(fix.contains("/home/them/.venv/bin/python -m pip uninstall --yes cupy-cuda13x"), "{fix}");
    assert!(fix.contains("another machine"), "{fix}");
    // This machine's own fixes say nothing of the kind.
    let here = ld(Machine::linux().gpu("NVIDIA GeForce RTX 4090", "8.9").driver("570.124.06", "12.8"));
    let report = judged(&here);
    let fix = report.findings.iter().find(|f| f.id == "wheels.mixed_cuda_majors").unwrap().fix.clone().unwrap();
    assert!(fix.contains("/home/u/proj/.venv/bin/python -m pip uninstall --yes cupy-cuda13x"), "{fix}");
    assert!(!fix.contains("another machine"), "{fix}");
}

#[test]
fn a_fix_for_pasted_text_that_shows_no_path_says_nothing_of_paths() {
    // https://github.com/TencentARC/MotionCtrl/issues/4: the fix unsets a variable; nothing in it is
    // a path of the other machine.
    let text = "in demo script configs/inference/run.sh, CUDA_VISIBLE_DEVICES=7 was used causing \"No CUDA GPUs are \
                available\" for those who doesn't have 8 or more gpus, please consider to remove it.\n";
    let snap = gpu_doctor_probes::parse::paste::read_pasted(text, kb()).unwrap();
    let mut report = Report::new(snap.clone(), diagnose(&snap, kb()));
    attach(&mut report, kb());
    let f = report.findings.iter().find(|f| f.id == "env.cuda_visible_devices_hides_all").unwrap();
    let fix = f.fix.clone().unwrap();
    assert!(fix.contains("unset CUDA_VISIBLE_DEVICES"), "{fix}");
    assert!(!fix.contains("another machine"), "{fix}");
}
