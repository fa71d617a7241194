//! Resolving a plan before it is applied, for real: tiny wheels served from a local folder
//! (`--no-index --find-links`, PyPI-like metadata: each wheel's METADATA with its Requires-Dist),
//! real pip and uv asked what the install would do, then the plan applied and undone.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use gpu_doctor_installers::envtool::{self, Source, Tool};
use gpu_doctor_installers::plan::{Plan, Step};
use gpu_doctor_installers::resolve::{self, ChangeKind, Resolution};
use support::*;

const WHEELS: [&str; 12] = [
    "numpy==1.26.4",
    "numpy==2.4.0",
    "oldlib==1.0",
    "oldlib==0.9",
    "cupy-cuda13x==13.6.0:numpy>=2",
    "jax==0.7.2:jaxlib==0.7.2,jax-cuda12-plugin==0.7.2; extra == \"cuda12\"",
    "jaxlib==0.7.2",
    "jax-cuda12-plugin==0.7.2:jax-cuda12-pjrt==0.7.2,nvidia-cudnn-cu12>=9",
    "jax-cuda12-pjrt==0.7.2",
    "jax-cuda13-plugin==0.7.2:jax-cuda13-pjrt==0.7.2,nvidia-cudnn-cu13>=9",
    "jax-cuda13-pjrt==0.7.2",
    "nvidia-cudnn-cu12==9.8.0.87",
];
const MORE: [&str; 2] = ["nvidia-cudnn-cu13==9.13.0.50", "torch==2.5.1+cu121:nvidia-cudnn-cu12>=9"];

/// A wheel folder of every wheel above, and a venv with `pins` from it; `None` (said) without a
/// python3 that makes venvs.
fn setup(dir: &Path, pins: &[&str]) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let Some(base) = base_python() else {
        skip("python3 with venv and ensurepip");
        return None;
    };
    let wheels = tiny_wheels(&dir.join("wheels"), &WHEELS);
    tiny_wheels(&wheels, &MORE);
    let env = dir.join("env");
    venv_with(&base, &env, &wheels, pins);
    Some((env, wheels))
}

fn install_plan(tool: &Tool, env: &Path, wheels: &Path, requirements: &[&str]) -> Plan {
    let source = Source { index_url: None, find_links: Some(wheels.to_owned()) };
    let requirements: Vec<String> = requirements.iter().map(|r| (*r).to_owned()).collect();
    let argv = envtool::install(tool, &envtool::python_in(env), &requirements, &source);
    Plan {
        id: "test".into(),
        goal: "a test".into(),
        answers: Vec::new(),
        env: Some(env.to_owned()),
        steps: vec![Step::run(argv, "test", "test", "undo")],
        choice: None,
    }
}

fn resolved(plan: &Plan) -> Resolution {
    resolve::resolve(plan, Duration::from_secs(120), &AtomicBool::new(false)).unwrap().unwrap()
}

fn kinds(r: &Resolution) -> Vec<(String, ChangeKind, Option<String>, Option<String>)> {
    r.changes.iter().map(|c| (c.name.clone(), c.kind, c.before.clone(), c.after.clone())).collect()
}

/// The package list as pip prints it, names normalized (the tiny wheels spell them with `_`).
fn frozen(python: &Path) -> Vec<String> {
    freeze(&Tool::Pip, python)
        .iter()
        .map(|pin| match pin.split_once("==") {
            Some((name, version)) => format!("{}=={version}", name.replace('_', "-").to_lowercase()),
            None => pin.clone(),
        })
        .collect()
}

fn s(text: &str) -> Option<String> {
    Some(text.to_owned())
}

/// The change a CuPy install makes to an environment with numpy 1.26.4, resolved by `tool`: CuPy
/// added, numpy upgraded across a major that nobody asked for (the one `unasked_majors` names),
/// oldlib downgraded as asked, and nothing else touched.
fn the_change_list_names_each_change(tool: impl Fn() -> Option<Tool>) {
    let dir = tempfile::tempdir().unwrap();
    let Some((env, wheels)) = setup(dir.path(), &["numpy==1.26.4", "oldlib==1.0", "jaxlib==0.7.2"]) else { return };
    let Some(tool) = tool() else { return };
    let before = freeze(&tool, &envtool::python_in(&env));
    let plan = install_plan(&tool, &env, &wheels, &["cupy-cuda13x==13.6.0", "oldlib==0.9"]);
    let r = resolved(&plan);
    assert_eq!(
        kinds(&r),
        [
            ("cupy-cuda13x".into(), ChangeKind::Added, None, s("13.6.0")),
            ("numpy".into(), ChangeKind::Upgraded, s("1.26.4"), s("2.4.0")),
            ("oldlib".into(), ChangeKind::Downgraded, s("1.0"), s("0.9")),
        ],
        "{}",
        r.describe()
    );
    assert!(r.unchanged.iter().any(|p| p == "jaxlib==0.7.2"), "{:?}", r.unchanged);
    let majors: Vec<&str> = r.unasked_majors().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(majors, ["numpy"]);
    assert!(r.planned_removals().is_empty());
    // Resolving changed nothing.
    assert_eq!(freeze(&tool, &envtool::python_in(&env)), before);
}

#[test]
fn pip_s_report_gives_the_whole_change() {
    the_change_list_names_each_change(|| Some(Tool::Pip));
}

#[test]
fn uv_s_dry_run_gives_the_whole_change() {
    the_change_list_names_each_change(|| match envtool::detect(Some("uv")) {
        Ok(tool) => Some(tool),
        Err(why) => {
            skip(&format!("uv: {why}"));
            None
        }
    });
}

/// Issue 29 item 3: `jax-cuda13-plugin` added where `jax[cuda12]` is: the CUDA 12 plugin and its
/// PJRT are planned for removal (the cu12 cuDNN stays: torch still requires it), shown before the
/// install, removed by the plan, and undo puts them back.
#[test]
fn the_other_cuda_major_s_plugin_is_removed_and_undo_restores_it() {
    let dir = tempfile::tempdir().unwrap();
    let pins = ["jax==0.7.2", "jax-cuda12-plugin==0.7.2", "torch==2.5.1+cu121"];
    let Some((env, wheels)) = setup(dir.path(), &pins) else { return };
    let python = envtool::python_in(&env);
    let before = frozen(&python);
    assert!(before.contains(&"jax-cuda12-pjrt==0.7.2".to_owned()), "{before:?}");
    let plan = install_plan(&Tool::Pip, &env, &wheels, &["jax-cuda13-plugin==0.7.2"]);
    let r = resolved(&plan);
    let removed: Vec<(&str, Option<&str>)> =
        r.planned_removals().iter().map(|c| (c.name.as_str(), c.before.as_deref())).collect();
    assert_eq!(removed, [("jax-cuda12-pjrt", Some("0.7.2")), ("jax-cuda12-plugin", Some("0.7.2"))], "{}", r.describe());
    let text = r.describe();
    assert!(
        text.contains("REMOVE    jax-cuda12-plugin 0.7.2: a CUDA 12 package beside the new CUDA 13 build"),
        "{text}"
    );
    assert!(text.contains("add       nvidia-cudnn-cu13 9.13.0.50"), "{text}");
    assert!(r.unchanged.iter().any(|p| p == "nvidia-cudnn-cu12==9.8.0.87"), "{text}");

    let full = resolve::with_removals(&plan, &r);
    assert_eq!(full.steps.len(), 2);
    assert!(full.steps[0].changes.contains("removes jax-cuda12-pjrt 0.7.2, jax-cuda12-plugin 0.7.2"));
    let opts = options(&dir.path().join("logs"));
    let (outcome, _) = apply_all(&full, &opts);
    assert!(outcome.steps.iter().all(|s| *s == apply::StepStatus::Done), "{outcome:?}");
    let after = frozen(&python);
    assert!(!after.iter().any(|p| p.starts_with("jax-cuda12")), "{after:?}");
    assert!(after.contains(&"jax-cuda13-plugin==0.7.2".to_owned()), "{after:?}");
    assert!(after.contains(&"nvidia-cudnn-cu12==9.8.0.87".to_owned()), "{after:?}");
    // Without the planned removals the same install leaves both majors' plugins side by side.
    let (undone, _) = undo_all(&python, outcome.backup.as_deref().unwrap(), &opts);
    assert_eq!(undone.state, Some(apply::EnvState::AsBefore), "{undone:?}");
    assert_eq!(frozen(&python), before);
    let (plain, _) = apply_all(&plan, &opts);
    assert!(plain.steps.iter().all(|s| *s == apply::StepStatus::Done));
    let mixed = frozen(&python);
    assert!(
        mixed.contains(&"jax-cuda12-plugin==0.7.2".to_owned())
            && mixed.contains(&"jax-cuda13-plugin==0.7.2".to_owned())
    );
}

/// A new environment: everything the install brings is added, resolved with the interpreter the
/// plan bases the environment on, and the folder is still not there.
#[test]
fn a_new_environment_s_change_is_all_additions() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_, wheels)) = setup(dir.path(), &[]) else { return };
    let base = base_python().unwrap();
    let env = dir.path().join("new");
    for tool in [Some(Tool::Pip), envtool::detect(Some("uv")).ok()].into_iter().flatten() {
        let mut plan = install_plan(&tool, &env, &wheels, &["cupy-cuda13x==13.6.0"]);
        plan.steps.insert(0, Step::run(envtool::create(&tool, &base, &env), "t", "t", "t"));
        let r = resolved(&plan);
        assert_eq!(
            kinds(&r),
            [
                ("cupy-cuda13x".into(), ChangeKind::Added, None, s("13.6.0")),
                ("numpy".into(), ChangeKind::Added, None, s("2.4.0")),
            ],
            "{tool:?}: {}",
            r.describe()
        );
        assert!(!env.exists());
    }
}

use gpu_doctor_installers::apply;

/// The window's runner: the change is said in the install step's lines; an unasked major upgrade
/// is refused there (nothing runs, the reason names --allow-major); a plan that needs the other
/// CUDA major's plugin removed gets it removed, with the outcome and events of its own steps.
#[test]
fn the_window_s_runner_shows_the_change_refuses_a_major_and_removes_the_other_major() {
    let dir = tempfile::tempdir().unwrap();
    let pins = ["numpy==1.26.4", "jax==0.7.2", "jax-cuda12-plugin==0.7.2"];
    let Some((env, wheels)) = setup(dir.path(), &pins) else { return };
    let python = envtool::python_in(&env);
    let before = frozen(&python);
    let opts = options(&dir.path().join("logs"));
    let run = |plan: &Plan| {
        let mut events = Vec::new();
        let outcome = resolve::resolve_then_apply(plan, &opts, &AtomicBool::new(false), &mut |e| events.push(e));
        (outcome, events)
    };
    let lines = |events: &[apply::Event]| -> String {
        events
            .iter()
            .filter_map(|e| if let apply::Event::Line { text, .. } = e { Some(format!("{text}\n")) } else { None })
            .collect()
    };
    let mut cupy = install_plan(&Tool::Pip, &env, &wheels, &["cupy-cuda13x==13.6.0"]);
    cupy.steps.push(Step::manual("then", "t"));
    let (outcome, events) = run(&cupy);
    assert_eq!(outcome.steps.len(), 2);
    match &outcome.steps[0] {
        apply::StepStatus::Failed { reason } => {
            assert!(reason.contains("numpy 1.26.4 -> 2.4.0") && reason.contains("--allow-major"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    assert!(lines(&events).contains("upgrade   numpy 1.26.4 -> 2.4.0"), "{}", lines(&events));
    assert_eq!(frozen(&python), before);

    let mut jax = install_plan(&Tool::Pip, &env, &wheels, &["jax-cuda13-plugin==0.7.2"]);
    jax.steps.push(Step::manual("then", "t"));
    let (outcome, events) = run(&jax);
    assert_eq!(outcome.steps, [apply::StepStatus::Done, apply::StepStatus::LeftToYou], "{}", lines(&events));
    assert!(events.iter().all(|e| match e {
        apply::Event::Started { index, total, .. } => *index < 2 && *total == 2,
        apply::Event::Ended { index, .. } | apply::Event::Line { index, .. } => *index < 2,
        apply::Event::Progress { index, .. } => *index < 2,
    }));
    assert!(lines(&events).contains("REMOVE    jax-cuda12-plugin 0.7.2"), "{}", lines(&events));
    let after = frozen(&python);
    assert!(
        !after.iter().any(|p| p.starts_with("jax-cuda12")) && after.contains(&"jax-cuda13-plugin==0.7.2".to_owned()),
        "{after:?}"
    );
}
