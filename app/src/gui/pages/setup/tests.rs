//! The Setup page driven through egui_kittest on replayed machines, with plans handed in (the
//! planners are being written) and fake runners that send the runner's events.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use gpu_doctor_installers::apply::{ApplyOptions, Event, Outcome, StepStatus};
use gpu_doctor_installers::choose::{Candidate, Choice, Rejected};
use gpu_doctor_installers::{Plan, Step, StepKind};
use gpu_doctor_model::{PlanRef, PlanTarget, Report, Severity};
use gpu_doctor_probes::host::telemetry::TelemetrySource;

use super::{RunState, SetupRequest};
use crate::gui::tests::{Gated, harness, launch, settle};
use crate::gui::{App, Page};

const VENV: &str = "/home/user/proj/.venv";

fn sample_plan(id: &str) -> Plan {
    let python = format!("{VENV}/bin/python");
    let install = ["-m", "pip", "install", "torch==2.8.0+cu128"].map(String::from);
    Plan {
        id: id.into(),
        goal: format!("PyTorch runs on this GPU in {VENV}"),
        answers: vec![id.into()],
        env: Some(VENV.into()),
        steps: vec![
            Step::run(
                [vec![python.clone()], install.to_vec()].concat(),
                "the cu130 build needs driver 580",
                "the torch package in the venv",
                "reinstall the saved package list",
            ),
            Step::root(
                "apt-get install nvidia-driver-580",
                "a newer driver also runs cu130",
                "the NVIDIA driver",
                "apt-get install nvidia-driver-550",
            ),
            Step::manual("Reboot", "the new driver loads at boot"),
            Step {
                kind: StepKind::Verify { python: python.into(), frameworks: vec!["torch".into()] },
                why: "prove the GPU runs a matrix multiply".into(),
                changes: String::new(),
                undo: String::new(),
            },
        ],
        choice: Some(Choice {
            framework: "torch".into(),
            chosen: Some(Candidate {
                label: "2.8.0+cu128".into(),
                requirements: vec!["torch==2.8.0+cu128".into()],
                index_url: Some("https://download.pytorch.org/whl/cu128".into()),
                why: "runs on driver 550 with minor-version compatibility; has sm_86".into(),
                beyond_kb: String::new(),
            }),
            rejected: vec![
                Rejected { label: "2.9.0+cu130".into(), reason: "driver 550 < 580".into(), fits: false },
                Rejected { label: "2.8.0+cu118".into(), reason: "no sm_120".into(), fits: false },
            ],
        }),
    }
}

fn two_plans(_: &Report) -> Result<Vec<Plan>, String> {
    Ok(vec![sample_plan("other.finding"), sample_plan(&first_error_id())])
}

fn one_plan(_: &Report, request: &SetupRequest) -> Result<Vec<Plan>, String> {
    assert_eq!(request.frameworks, [gpu_doctor_installers::choose::Framework::Torch], "torch is ticked by default");
    Ok(vec![sample_plan("setup")])
}

/// The first error of the torch-cu130-on-r550 fixture, which the Overview's verdict names.
fn first_error_id() -> String {
    "driver.too_old_for_runtime".into()
}

/// Gives a finding of the report on screen a plan ref, as a rule and `attach` would.
fn tag(h: &mut Harness<'static, App>, id: &str) {
    let report = h.state_mut().machine.report.as_mut().unwrap();
    let f = report.findings.iter_mut().find(|f| f.id == id).unwrap();
    let target = PlanTarget::FrameworkBuild { env: VENV.into(), framework: "torch".into(), or_driver: None };
    f.plan = Some(PlanRef { id: id.into(), target, unplanned: None });
}

fn step_until(h: &mut Harness<'static, App>, what: &str, done: impl Fn(&App) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done(h.state()) {
        assert!(Instant::now() < deadline, "never: {what}");
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    h.run_steps(2);
}

#[test]
fn fix_on_a_finding_opens_its_plan_on_the_setup_page() {
    let (mut h, _home) = harness("torch-cu130-on-r550");
    settle(&mut h);
    let first = h.state().machine.report.as_ref().unwrap().findings.iter().find(|f| f.severity == Severity::Error);
    assert_eq!(first.map(|f| f.id.clone()), Some(first_error_id()));
    assert!(h.query_by_label("Fix…").is_some(), "the installers planned the finding");
    tag(&mut h, &first_error_id());
    h.state_mut().pages.setup.provider = two_plans;
    // The page would open the first finding's plan by itself when drawn: only Fix… may here.
    h.state_mut().pages.setup.opened_first = true;

    for page in ["Checks", "Overview"] {
        h.get_by_label(page).click();
        h.run_steps(2);
        // The first finding's button: findings come errors first, and this one is the first error.
        h.get_all_by_label("Fix…").next().expect("a Fix… button").click();
        settle(&mut h);
        assert_eq!(h.state().page, Page::Setup, "from the {page} page");
        let task = &h.state().pages.setup.planned;
        let planned = task.value().unwrap_or_else(|| panic!("no plan: {:?}", task.error()));
        assert_eq!(planned.plans.iter().map(|p| p.id.clone()).collect::<Vec<_>>(), [first_error_id()]);
        h.get_by_label(&format!("PyTorch runs on this GPU in {VENV}"));
        h.state_mut().pages.setup.planned.clear();
    }
}

#[test]
fn the_setup_page_shows_the_steps_and_why_not_of_a_plan_and_copies_and_saves_root_steps() {
    let (mut h, home) = harness("egpu-thunderbolt");
    settle(&mut h);
    h.state_mut().pages.setup.planner = one_plan;
    h.state_mut().pages.setup.set_dialogs(false);
    h.get_by_label("Set up an environment").click();
    // The page's search for the tools first (see `live`), then the plan.
    settle(&mut h);
    assert_eq!(h.state().page, Page::Setup);
    h.get_by_label("Make the plan").click();
    settle(&mut h);
    for badge in ["RUN", "ROOT: YOU RUN IT", "BY HAND", "VERIFY"] {
        h.get_by_label(badge);
    }
    h.get_by_label("the cu130 build needs driver 580");
    h.get_by_label("reinstall the saved package list");
    h.get_by_label("✔ torch 2.8.0+cu128");
    h.get_by_label("runs on driver 550 with minor-version compatibility; has sm_86");
    h.get_by_label("• 2.9.0+cu130: driver 550 < 580");
    h.get_by_label("• 2.8.0+cu118: no sm_120");
    // A recorded machine: shown, not applied.
    assert!(h.query_by_label_contains("not offered for a recorded").is_some());

    // Only the root step has Copy.
    assert_eq!(h.query_all_by_label("Copy").count(), 1);
    h.get_by_label("Copy").click();
    h.run_steps(2);
    assert_eq!(h.state().pages.setup.copied.as_deref(), Some("apt-get install nvidia-driver-580"));
    h.get_by_label("Copied");

    h.get_by_label("Save root script…").click();
    settle(&mut h);
    let path = home.path().join("installs/gpu-doctor-setup-root.sh");
    assert_eq!(h.state().pages.setup.script.value(), Some(&Some(path.clone())));
    let script = std::fs::read_to_string(&path).unwrap();
    assert!(script.starts_with("#!/bin/sh") && script.contains("\napt-get install nvidia-driver-580\n"), "{script}");
    assert!(!script.contains("pip"), "only the root steps: {script}");
}

/// Holds the scripted runner's first step until the test has seen it running.
static RELEASE: AtomicBool = AtomicBool::new(false);

fn wait_for(flag: &AtomicBool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !flag.load(Ordering::Relaxed) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    true
}

/// A runner that does what the real one reports: user steps start, print, progress and end;
/// root and manual steps are left to the person.
fn scripted(plan: &Plan, _: &ApplyOptions, _: &AtomicBool, events: &mut dyn FnMut(Event)) -> Outcome {
    let total = plan.steps.len();
    let mut steps = Vec::new();
    for (index, step) in plan.steps.iter().enumerate() {
        let status = if step.is_run_by_gpu_doctor() {
            events(Event::Started { index, total, line: format!("step {index}") });
            events(Event::Line { index, text: format!("Downloading torch for step {index}") });
            events(Event::Progress { index, fraction: 0.5, what: "downloading torch".into() });
            if index == 0 && !wait_for(&RELEASE) {
                StepStatus::Failed { reason: "the test never released the step".into() }
            } else {
                StepStatus::Done
            }
        } else {
            StepStatus::LeftToYou
        };
        events(Event::Ended { index, status: status.clone() });
        steps.push(status);
    }
    Outcome {
        steps,
        backup: None,
        log: Some("/data/installs/setup.log".into()),
        state: None,
        deleted_env: None,
        files: None,
    }
}

fn live(name: &str) -> (Harness<'static, App>, tempfile::TempDir) {
    let (mut h, home) = launch(name, Some(Gated::opened() as Arc<dyn TelemetrySource>));
    settle(&mut h);
    h.state_mut().pages.setup.planner = one_plan;
    h.state_mut().page = Page::Setup;
    // The page looks for uv, pip and conda on PATH when it first shows; the plan is made from what
    // it found, so "Make the plan" stays disabled until the search ends (a fixed number of frames
    // was not always enough on a loaded machine, and no Apply button appeared).
    settle(&mut h);
    step_until(&mut h, "the tool search", |app| !app.pages.setup.form.busy());
    // The page also plans the first finding when it first shows; a click while that plan is being
    // made is ignored (the button is disabled then), so click until the new environment's plan is
    // the one shown.
    let made = |app: &App| app.pages.setup.planned.value().is_some_and(|p| p.plans.iter().any(|p| p.id == "setup"));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !made(h.state()) {
        assert!(Instant::now() < deadline, "the new environment's plan was never made");
        settle(&mut h);
        h.get_by_label("Make the plan").click();
        settle(&mut h);
    }
    (h, home)
}

#[test]
fn apply_shows_the_live_log_and_progress_then_checks_again() {
    let (mut h, _home) = live("egpu-thunderbolt");
    h.state_mut().pages.setup.runner = scripted;
    let probes_before = h.state().machine.runs_finished;
    h.get_by_label("Apply").click();
    step_until(&mut h, "the first step's progress", |app| {
        app.pages.setup.run.as_ref().is_some_and(|r| r.steps[0][0].progress.is_some())
    });
    {
        let run = h.state().pages.setup.run.as_ref().unwrap();
        assert_eq!(run.state, RunState::Running);
        assert!(run.steps[0][0].running && run.steps[0][0].status.is_none());
        assert_eq!(run.steps[0][0].progress, Some((0.5, "downloading torch".into())));
    }
    h.get_by_label("downloading torch");
    h.get_by_label("Downloading torch for step 0");
    h.get_by_label("Cancel");
    RELEASE.store(true, Ordering::Relaxed);
    settle(&mut h);

    let run = h.state().pages.setup.run.as_ref().unwrap();
    assert_eq!(run.state, RunState::Finished);
    let statuses: Vec<_> = run.steps[0].iter().map(|s| s.status.clone().unwrap()).collect();
    assert_eq!(statuses, [StepStatus::Done, StepStatus::LeftToYou, StepStatus::LeftToYou, StepStatus::Done]);
    h.get_by_label("Applied.");
    h.get_by_label("The full log: /data/installs/setup.log");
    assert_eq!(h.query_all_by_label("✔ Done").count(), 2);
    // The re-check: the window probed again, before and after side by side.
    assert_eq!(h.state().machine.runs_finished, probes_before + 1, "the checks ran again");
    let recheck = h.state().pages.setup.recheck.as_ref().expect("a re-check");
    assert!(recheck.after.is_some());
    h.get_by_label("Before");
    h.get_by_label("After");
    assert!(h.query_by_label_contains(" gone, ").is_some());
    assert!(h.query_by_label_contains("setup: gone").is_none(), "a new environment's plan answers no finding");
}

/// Set when the cancelling runner saw the flag.
static SAW_CANCEL: AtomicBool = AtomicBool::new(false);

/// A runner whose first step runs until Cancel.
fn until_cancelled(plan: &Plan, _: &ApplyOptions, cancel: &AtomicBool, events: &mut dyn FnMut(Event)) -> Outcome {
    events(Event::Started { index: 0, total: plan.steps.len(), line: "pip install torch".into() });
    events(Event::Line { index: 0, text: "Collecting torch==2.8.0+cu128".into() });
    let saw = wait_for(cancel);
    SAW_CANCEL.store(saw, Ordering::Relaxed);
    let first = if saw { StepStatus::Cancelled } else { StepStatus::Done };
    events(Event::Ended { index: 0, status: first.clone() });
    let mut steps = vec![StepStatus::NotRun; plan.steps.len()];
    steps[0] = first;
    Outcome { steps, ..Outcome::default() }
}

#[test]
fn cancel_sets_the_runners_flag_and_the_page_marks_the_steps() {
    let (mut h, _home) = live("egpu-thunderbolt");
    h.state_mut().pages.setup.runner = until_cancelled;
    h.get_by_label("Apply").click();
    step_until(&mut h, "the first output line", |app| {
        app.pages.setup.run.as_ref().is_some_and(|r| r.log.iter().any(|l| l.starts_with("Collecting")))
    });
    h.get_by_label("Cancel").click();
    settle(&mut h);
    assert!(SAW_CANCEL.load(Ordering::Relaxed), "the runner saw the flag");
    assert_eq!(h.state().pages.setup.run.as_ref().unwrap().state, RunState::Cancelled);
    h.get_by_label("Cancelled");
    assert_eq!(h.query_all_by_label("Not run").count(), 3);
    assert!(h.query_by_label("Cancel").is_none(), "nothing left to cancel");
}

/// Opened on a machine whose findings have plans, the page lists them and shows the first one,
/// made by the real planners: the torch build for this driver, with the builds turned down.
#[test]
fn the_page_lists_the_findings_plans_and_opens_the_first() {
    let (mut h, _home) = harness("torch-cu130-on-r550");
    settle(&mut h);
    assert!(h.state().pages.setup.planned.value().is_none(), "nothing is planned before the page is shown");
    h.get_by_label("Setup").click();
    settle(&mut h);
    h.get_by_label("Fixes for this machine's findings");
    let planned = h.state().pages.setup.planned.value().expect("the first finding's plan");
    assert_eq!(planned.plans.iter().map(|p| p.id.as_str()).collect::<Vec<_>>(), [first_error_id()]);
    let choice = planned.plans[0].choice.as_ref().expect("a framework plan has the chooser's choice");
    assert!(choice.chosen.as_ref().is_some_and(|c| c.label.contains("+cu12")), "{choice:?}");
    assert!(choice.rejected.iter().any(|r| r.reason.contains("driver 550 < 580")), "{choice:?}");
}

/// The real planner and runner on the tests' wheelhouse: Make the plan, Apply, and the page runs
/// pip into a new venv, the smoke test in it (no GPU here: "Not proven", with what it checked),
/// then the re-check, before and after.
#[test]
fn apply_on_the_wheelhouse_builds_the_environment_and_runs_to_the_recheck() {
    if std::process::Command::new("python3")
        .args(["-c", "import ensurepip, venv"])
        .status()
        .map_or(true, |s| !s.success())
    {
        assert!(std::env::var_os("CI").is_none_or(|v| v.is_empty()), "CI must have python3-venv");
        return eprintln!("skipped: python3 with venv and ensurepip (python3-venv)");
    }
    let tmp = tempfile::tempdir().unwrap();
    let (wheels, env) = (tmp.path().join("wheels"), tmp.path().join("env"));
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../installers/tests/support/wheelhouse.py");
    assert!(std::process::Command::new("python3").arg(script).arg(&wheels).status().unwrap().success());
    let (mut h, _home) = launch("egpu-thunderbolt", Some(Gated::opened() as Arc<dyn TelemetrySource>));
    settle(&mut h);
    h.state_mut().page = Page::Setup;
    // As in `live`: the page's first frames start its search for the tools; fill the form after it.
    settle(&mut h);
    {
        let form = &mut h.state_mut().pages.setup.form;
        form.env = env.display().to_string();
        form.find_links = wheels.display().to_string();
        form.pick_tool(super::form::ToolPick::Pip);
    }
    h.get_by_label("Make the plan").click();
    settle(&mut h);
    let task = &h.state().pages.setup.planned;
    let planned = task.value().unwrap_or_else(|| panic!("no plan: {:?}", task.error()));
    assert_eq!(planned.plans.len(), 1);
    h.get_by_label("Apply").click();
    settle(&mut h);
    let run = h.state().pages.setup.run.as_ref().unwrap();
    assert_eq!(run.state, RunState::Finished, "{:?}", run.log);
    let statuses: Vec<_> = run.steps[0].iter().map(|s| s.status.clone().unwrap()).collect();
    assert_eq!(statuses[..2], [StepStatus::Done, StepStatus::Done], "{:?}", run.log);
    assert!(
        matches!(&statuses[2], StepStatus::Unproven { summary } if summary.contains("CPU matmul ok")),
        "{statuses:?}"
    );
    assert!(h.query_by_label_contains("Not proven: GPU use could not be proven here").is_some());
    assert!(env.join("bin/python").exists());
    let recheck = h.state().pages.setup.recheck.as_ref().expect("a re-check");
    assert!(recheck.after.is_some());
    h.get_by_label("After");
}

/// Issue 29: on a machine without a GPU the page was a bare form with nothing about what it would
/// choose. Before any plan it now says, per framework, the build a new environment would get and why.
#[test]
fn before_a_plan_the_page_says_what_a_new_environment_would_get() {
    let (mut h, _home) = harness("container-without-gpu");
    settle(&mut h);
    h.get_by_label("Setup").click();
    settle(&mut h);
    assert_eq!(h.state().page, Page::Setup);
    assert!(h.state().pages.setup.planned.value().is_none(), "no plan was made");
    h.get_by_label("What a new environment would get here");
    let lines = super::preview::lines(h.state().machine.report.as_ref().unwrap());
    assert_eq!(lines.iter().map(|l| l.framework).collect::<Vec<_>>(), ["torch", "jax", "tensorflow", "cupy"]);
    let torch = &lines[0];
    assert!(torch.chosen, "{torch:?}");
    // No GPU here: the why says so, and what a GPU machine would need to run it.
    assert!(torch.why.contains("no NVIDIA GPU or driver is seen here"), "{}", torch.why);
    h.get_by_label(&torch.build);
}
