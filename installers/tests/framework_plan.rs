//! The framework planner over the replay scenarios: the findings whose fix is another framework
//! build get a plan (install the chosen build with its companions, then verify), and the fix
//! prose is that plan's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use gpu_doctor_installers::envtool::Tool;
use gpu_doctor_installers::planners::framework::{self, Options};
use gpu_doctor_installers::{Plan, StepKind, UserAction, attach, plans};
use gpu_doctor_judge::diagnose::diagnose;
use gpu_doctor_kb::Kb;
use gpu_doctor_model::shell::Shell;
use gpu_doctor_model::{Finding, Origin, Probed, Report, Snapshot};
use gpu_doctor_model::{Framework, FrameworkBuild, PythonEnv};
use gpu_doctor_probes::host::ReplayHost;
use gpu_doctor_probes::probe::{Options as ProbeOptions, collect};

fn kb() -> &'static Kb {
    Kb::get().unwrap()
}

fn scenario(name: &str) -> Snapshot {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(name);
    collect(&ReplayHost::load(&dir).unwrap(), &ProbeOptions::default())
}

fn venv(s: &mut Snapshot) -> &mut PythonEnv {
    let Probed::Found { value, .. } = &mut s.python_envs else { panic!("no environments") };
    value.iter_mut().find(|e| e.name.starts_with("venv:")).unwrap()
}

/// `name` in the scenario's venv, replacing what is there.
fn with_framework(mut s: Snapshot, name: &str, version: &str, build: FrameworkBuild) -> Snapshot {
    let env = venv(&mut s);
    let site = env.site_packages.first().cloned().unwrap_or_default();
    env.frameworks = vec![Framework {
        name: name.into(),
        version: version.into(),
        build,
        cudnn_build: None,
        source: "test".into(),
        site_packages: site,
    }];
    s
}

fn judged(s: Snapshot) -> Report {
    let findings = diagnose(&s, kb());
    let mut report = Report::new(s, findings);
    attach(&mut report, kb());
    report
}

fn finding<'r>(r: &'r Report, id: &str) -> &'r Finding {
    r.findings.iter().find(|f| f.id == id).unwrap_or_else(|| panic!("no {id}: {:#?}", r.findings))
}

fn argv(plan: &Plan, i: usize) -> Vec<String> {
    match &plan.steps[i].kind {
        StepKind::User { action: UserAction::Run { argv } } => argv.clone(),
        other => panic!("step {i} is {other:?}"),
    }
}

const PY: &str = "/home/user/proj/.venv/bin/python3";

/// An arch finding's planned fix says which GPUs the chosen build covers (the chooser's reason), so the
/// reader sees why that build and not the installed one: a Tesla P100 (sm_60) under torch 2.10.0+cu128,
/// whose wheels start at sm_70 (pytorch.toml), in collect_env's fields. A driver finding's plan says no such thing.
#[test]
fn an_arch_findings_fix_says_which_gpus_the_chosen_build_covers() {
    let text = "PyTorch version: 2.10.0+cu128\nIs debug build: False\nCUDA used to build PyTorch: 12.8\n\
                GPU models and configuration: GPU 0: Tesla P100-PCIE-16GB\nNvidia driver version: 570.133.20\n";
    let s = gpu_doctor_probes::parse::paste::read_pasted(text, kb()).unwrap();
    let r = judged(s);
    let f = finding(&r, "arch.not_in_build");
    let fix = f.fix.as_deref().unwrap();
    assert!(fix.contains("covers sm_60"), "{fix}");
    let r = judged(scenario("torch-cu130-on-r550"));
    let driver = finding(&r, "driver.too_old_for_runtime");
    assert!(!driver.fix.as_deref().unwrap().contains("covers"), "{driver:#?}");
}

#[test]
fn a_cu130_torch_on_r550_gets_a_plan_for_its_line_built_for_this_driver() {
    let r = judged(scenario("torch-cu130-on-r550"));
    // Issue 29 item 6: the note that the CUDA versions differ "which is normal" carries no fix (it
    // planned CUDA toolkit 13.0 on a driver for CUDA 12.4).
    let note = finding(&r, "toolkits.versions_explained");
    assert!(note.fix.is_none() && note.plan.is_none(), "{note:#?}");
    let f = finding(&r, "driver.too_old_for_runtime");
    assert_eq!(f.plan.as_ref().map(|p| p.id.as_str()), Some("driver.too_old_for_runtime"));
    let fix = f.fix.as_deref().unwrap();
    assert_eq!(
        fix,
        format!(
            "{PY} -m pip install torch==2.9.1 torchvision==0.24.1 torchaudio==2.9.1; then check: gpu-doctor check \
             --deep --python {PY}"
        )
    );
    // PyPI's torch 2.9.1 is the cu128 build: no --index-url, so the user's own index or mirror applies.
    assert!(kb().pytorch.release("2.9").is_some_and(|r| r.pypi_linux == "cu128"));
    let all = plans(&r, kb());
    let plan = all.iter().find(|p| p.id == "driver.too_old_for_runtime").unwrap();
    assert_eq!(plan.answers, ["driver.too_old_for_runtime"]);
    assert_eq!(plan.env.as_deref(), Some(std::path::Path::new("/home/user/proj/.venv")));
    assert_eq!(plan.steps.len(), 2);
    assert!(plan.steps.iter().all(|s| s.is_run_by_gpu_doctor()), "no root or manual step for a framework build");
    assert!(plan.steps[0].undo.contains("gpu-doctor fix --undo") && plan.steps[0].why.contains("sm_89"));
    assert!(plan.steps[0].changes.contains("torch, torchvision, torchaudio"), "{}", plan.steps[0].changes);
    assert!(matches!(&plan.steps[1].kind, StepKind::Verify { frameworks, .. } if frameworks == &["torch"]));
    let choice = plan.choice.as_ref().unwrap();
    assert!(choice.rejected.iter().any(|r| r.label == "2.9.1+cu130" && r.reason == "driver 550 < 580"));
    assert_eq!(plan.prose(Shell::Posix), fix, "the fix is the plan's prose");
}

#[test]
fn a_cpu_only_torch_gets_the_cuda_build_of_its_release_with_its_companions() {
    let s = with_framework(scenario("consumer-gpu-torch-venv"), "torch", "2.3.0+cpu", FrameworkBuild::Cpu);
    let r = judged(s);
    let fix = finding(&r, "framework.cpu_only_build").fix.clone().unwrap();
    // 2.3.1 from PyPI is cu121, and 2.3.0+cpu does not satisfy torch==2.3.1: PyPI, no index.
    assert!(
        fix.starts_with(&format!("{PY} -m pip install torch==2.3.1 torchvision==0.18.1 torchaudio==2.3.1;")),
        "{fix}"
    );
    assert!(!fix.contains("--force-reinstall"), "the exact build replaces +cpu without reinstall flags: {fix}");
}

/// An installed `2.3.1+cpu` satisfies `torch==2.3.1` for pip (PEP 440 ignores a candidate's local
/// label against a public pin), so PyPI's unlabelled pins would change nothing: the labelled build
/// comes from PyTorch's index, and the why says so.
#[test]
fn the_same_version_with_another_label_is_replaced_from_pytorchs_index() {
    let s = with_framework(scenario("consumer-gpu-torch-venv"), "torch", "2.3.1+cpu", FrameworkBuild::Cpu);
    let r = judged(s);
    let plan = plans(&r, kb()).into_iter().find(|p| p.answers == ["framework.cpu_only_build"]).unwrap();
    assert_eq!(
        argv(&plan, 0),
        [
            PY,
            "-m",
            "pip",
            "install",
            "--index-url",
            "https://download.pytorch.org/whl/cu121",
            "torch==2.3.1+cu121",
            "torchvision==0.18.1+cu121",
            "torchaudio==2.3.1+cu121"
        ]
    );
    assert!(plan.steps[0].why.contains("which pip counts as 2.3.1 already"), "{}", plan.steps[0].why);
    assert!(!plan.steps[0].why.contains("PyPI serves"), "{}", plan.steps[0].why);
}

#[test]
fn tensorflow_cpu_is_removed_before_the_cuda_build_goes_in() {
    let s = with_framework(scenario("consumer-gpu-torch-venv"), "tensorflow-cpu", "2.17.0", FrameworkBuild::Cpu);
    let r = judged(s);
    let plan = plans(&r, kb()).into_iter().find(|p| p.answers == ["framework.cpu_only_build"]).unwrap();
    assert_eq!(argv(&plan, 0), [PY, "-m", "pip", "uninstall", "--yes", "tensorflow-cpu"]);
    assert_eq!(argv(&plan, 1), [PY, "-m", "pip", "install", "tensorflow[and-cuda]==2.17.1"]);
}

#[test]
fn a_jax_plugin_of_a_major_the_driver_lacks_moves_to_the_other_plugin() {
    let build = FrameworkBuild::Cuda { version: Some("13".into()) };
    let s = with_framework(scenario("torch-cu130-on-r550"), "jax-cuda13-plugin", "0.7.2", build);
    let r = judged(s);
    let plan = plans(&r, kb()).into_iter().find(|p| p.answers == ["driver.too_old_for_runtime"]).unwrap();
    // Python 3.10 here: jax 0.7 needs 3.11, so the newest jax for it, with its CUDA 12 plugin.
    assert_eq!(argv(&plan, 0), [PY, "-m", "pip", "uninstall", "--yes", "jax-cuda13-plugin"]);
    assert_eq!(argv(&plan, 1), [PY, "-m", "pip", "install", "jax[cuda12]==0.6.2"]);
}

/// A build that already fits needs no plan: the finding keeps its rule's prose and loses its ref.
#[test]
fn no_plan_when_the_chosen_build_is_the_installed_one() {
    let s = scenario("consumer-gpu-torch-venv");
    let r = Report::new(s, Vec::new());
    assert_eq!(framework::plan(&r, kb(), "/home/user/proj/.venv", "torch", &Options::default()), None);
    // The same environment with another build of torch does get a plan: the None above is the
    // installed build fitting, not the environment or the framework going unfound.
    let cpu = with_framework(scenario("consumer-gpu-torch-venv"), "torch", "2.3.0+cpu", FrameworkBuild::Cpu);
    let r = Report::new(cpu, Vec::new());
    assert!(framework::plan(&r, kb(), "/home/user/proj/.venv", "torch", &Options::default()).is_some());
}

#[test]
fn a_hostile_prefix_reads_back_as_the_same_argv() {
    const H: &str = "/home/u/p;touch${IFS}PWNED;#'$(touch PWNED) x\n`touch PWNED`/.venv";
    let mut s = with_framework(scenario("consumer-gpu-torch-venv"), "torch", "2.3.0+cpu", FrameworkBuild::Cpu);
    let env = venv(&mut s);
    env.prefix = H.into();
    env.interpreter = Some(format!("{H}/bin/python"));
    let r = judged(s);
    let plan = plans(&r, kb()).into_iter().next().unwrap();
    for step in &plan.steps {
        let line = step.render(Shell::Posix).unwrap();
        let want = match &step.kind {
            StepKind::User { action: UserAction::Run { argv } } => argv.clone(),
            StepKind::Verify { python, .. } => {
                vec![
                    "gpu-doctor".into(),
                    "check".into(),
                    "--deep".into(),
                    "--python".into(),
                    python.display().to_string(),
                ]
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(shlex::split(&line), Some(want), "{line}");
    }
}

#[test]
fn a_plan_for_pasted_text_says_its_paths_came_from_another_machine() {
    let mut s = with_framework(scenario("consumer-gpu-torch-venv"), "torch", "2.3.0+cpu", FrameworkBuild::Cpu);
    s.origin = Origin::Pasted { formats: vec!["collect_env".into()] };
    let r = judged(s);
    let fix = finding(&r, "framework.cpu_only_build").fix.clone().unwrap();
    assert!(fix.contains("another machine"), "{fix}");
}

#[test]
fn uv_and_a_wheelhouse_install_offline_from_the_folder() {
    let s = with_framework(scenario("consumer-gpu-torch-venv"), "torch", "2.3.0+cpu", FrameworkBuild::Cpu);
    let r = Report::new(s, Vec::new());
    let files = vec![
        "torch-2.5.1+cu121-cp310-cp310-linux_x86_64.whl".to_owned(),
        "torch-2.5.1+cpu-cp310-cp310-linux_x86_64.whl".to_owned(),
    ];
    let options = Options { tool: Tool::Uv { uv: "/usr/bin/uv".into() }, wheelhouse: Some(("/wh".into(), files)) };
    let plan = framework::plan(&r, kb(), "/home/user/proj/.venv", "torch", &options).unwrap();
    assert_eq!(
        argv(&plan, 0),
        ["/usr/bin/uv", "pip", "install", "--python", PY, "--no-index", "--find-links", "/wh", "torch==2.5.1+cu121"]
    );
}

/// A pasted support thread (a cu130 nightly on R570): the plan keeps the 2.9 line with PyPI's
/// cu128 build; it shows no path of the other machine, so it says nothing of paths.
#[test]
fn a_pasted_support_thread_gets_a_plan_for_its_driver() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/paste");
    let text = std::fs::read_to_string(dir.join("support_thread.md")).unwrap();
    let s = gpu_doctor_probes::parse::paste::read_pasted(&text, kb()).unwrap();
    let r = judged(s);
    let f = finding(&r, "driver.too_old_for_runtime");
    let fix = f.fix.as_deref().unwrap();
    assert!(f.plan.is_some(), "{f:#?}");
    assert!(fix.contains("pip install torch==2.9.1 torchvision==0.24.1 torchaudio==2.9.1;"), "{fix}");
    assert!(!fix.contains("another machine"), "{fix}");
    // The pasted environment has no interpreter: the person runs their own `python`, not a made-up path.
    assert!(fix.starts_with("python -m pip install"), "{fix}");
}

/// Every planned finding of every replay scenario (and of the CPU-only and support-thread variants)
/// shows its plan's prose as its fix, and every plan id is unique: the fix text and the plan cannot
/// disagree.
#[test]
fn every_planned_fix_is_its_plans_prose() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let mut reports: Vec<Report> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| judged(collect(&ReplayHost::load(&e.unwrap().path()).unwrap(), &ProbeOptions::default())))
        .collect();
    let cpu = with_framework(scenario("consumer-gpu-torch-venv"), "torch", "2.3.0+cpu", FrameworkBuild::Cpu);
    reports.push(judged(cpu));
    let mut planned = 0;
    for r in &reports {
        let all = plans(r, kb());
        let mut ids: Vec<&str> = all.iter().map(|p| p.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), all.len(), "plan ids are unique");
        for f in r.findings.iter().filter(|f| f.plan.is_some()) {
            let id = &f.plan.as_ref().unwrap().id;
            let plan = all.iter().find(|p| &p.id == id).unwrap_or_else(|| panic!("{id}: no such plan"));
            assert_eq!(
                f.fix.as_deref(),
                Some(plan.prose(gpu_doctor_installers::planners::shell_of(r)).as_str()),
                "{id}"
            );
            assert_eq!(plan.answers, std::slice::from_ref(&f.id));
            planned += 1;
        }
    }
    assert!(planned >= 3, "the scenarios have planned findings: {planned}");
}

/// Issue 29 item 8: a root step is shown as root (`as root:`, "root (you run it)", the root script
/// run as root), so its command never carries its own `sudo`, and it always says how to undo it.
#[test]
fn every_root_step_of_every_scenario_is_plain_and_says_its_undo() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let mut bad = Vec::new();
    let mut roots = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let r = judged(collect(&ReplayHost::load(&path).unwrap(), &ProbeOptions::default()));
        for plan in plans(&r, kb()) {
            for step in &plan.steps {
                let StepKind::Root { command } = &step.kind else { continue };
                roots += 1;
                let sudo =
                    command.split(|c: char| c.is_whitespace() || c == ';' || c == '&' || c == '|').any(|w| w == "sudo");
                if sudo || step.undo.trim().is_empty() {
                    bad.push(format!("{}: {}: {command:?} undo {:?}", path.display(), plan.id, step.undo));
                }
            }
        }
    }
    assert!(roots >= 5, "the scenarios have root steps: {roots}");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

fn setup_request(
    framework: gpu_doctor_installers::choose::Framework,
) -> gpu_doctor_installers::planners::setup::SetupRequest {
    gpu_doctor_installers::planners::setup::SetupRequest {
        framework,
        env: "/nonexistent/gpu-doctor-test/env".into(),
        tool: Tool::Pip,
        python: "/nonexistent/python3".into(),
        find_links: None,
        wheelhouse: Vec::new(),
        python_version: None,
    }
}

/// Issue 29 item 7: an R418 machine gets, for every framework, one plan that updates the driver
/// (the driver planner's root steps, then "run setup again") instead of an error listing every
/// build's "driver 418 < N".
#[test]
fn setup_on_r418_plans_the_driver_update_for_every_framework() {
    use gpu_doctor_installers::choose::Framework as Fw;
    let s = scenario("old-driver-nvml-gaps");
    for fw in Fw::ALL {
        let plan = gpu_doctor_installers::planners::setup::setup_plan(&s, kb(), &setup_request(fw))
            .unwrap_or_else(|e| panic!("{}: {e}", fw.name()));
        assert_eq!(plan.id, format!("setup-{}-driver", fw.name()));
        assert!(
            plan.goal.starts_with("update the driver: driver 418.43 runs no ")
                && plan.goal.contains("(the oldest needs driver "),
            "{}",
            plan.goal
        );
        assert!(plan.steps.iter().any(|s| matches!(s.kind, StepKind::Root { .. })), "{plan:#?}");
        assert!(!plan.steps.iter().any(|s| s.is_run_by_gpu_doctor()), "{plan:#?}");
        let last = plan.steps.last().unwrap();
        assert!(
            matches!(&last.kind, StepKind::Manual { text } if text.starts_with(&format!("Then run gpu-doctor setup --framework {}", fw.name()))),
            "{last:?}"
        );
        assert!(plan.choice.as_ref().is_some_and(|c| c.chosen.is_none() && !c.rejected.is_empty()));
    }
}

/// Issue 29 item 7: JAX and TensorFlow on native Windows point at WSL2 instead of listing every
/// build's "no GPU wheel for Windows".
#[test]
fn jax_and_tensorflow_on_native_windows_point_at_wsl2() {
    use gpu_doctor_installers::choose::Framework as Fw;
    let mut s = scenario("consumer-gpu-torch-venv");
    s.platform.platform.os = gpu_doctor_model::OsFamily::Windows;
    for fw in [Fw::Jax, Fw::Tensorflow] {
        let err = gpu_doctor_installers::planners::setup::setup_plan(&s, kb(), &setup_request(fw)).unwrap_err();
        assert!(err.contains("no CUDA build for native Windows: it runs on the GPU under WSL2"), "{err}");
        assert!(!err.contains("no GPU wheel for Windows"), "{err}");
    }
    assert!(gpu_doctor_installers::planners::setup::setup_plan(&s, kb(), &setup_request(Fw::Torch)).is_ok());
}

const FIXTURES_START: &str = "<!-- fixture-choices:start (generated by installers/tests/framework_plan.rs) -->";
const FIXTURES_END: &str = "<!-- fixture-choices:end -->";

/// Why no build fits, short: each distinct reason once (without the Python range), with how many
/// candidates it turned down.
fn short_reasons(choice: &gpu_doctor_installers::choose::Choice) -> String {
    let mut seen: Vec<(String, usize)> = Vec::new();
    for r in &choice.rejected {
        let reason = r.reason.split(" (it supports").next().unwrap_or_default().to_owned();
        match seen.iter_mut().find(|(s, _)| *s == reason) {
            Some((_, n)) => *n += 1,
            None => seen.push((reason, 1)),
        }
    }
    seen.iter().map(|(r, n)| if *n > 1 { format!("{r} (×{n})") } else { r.clone() }).collect::<Vec<_>>().join("; ")
}

/// What `setup` plans for a new environment of `fw` on the machine of `s`, in a few words: the
/// chosen build with its companions and where it comes from, or the short reason none fits.
fn setup_cell(s: &Snapshot, python: &str, fw: gpu_doctor_installers::choose::Framework) -> String {
    let req = gpu_doctor_installers::planners::setup::SetupRequest { python: python.into(), ..setup_request(fw) };
    let env = s.python_envs.value().and_then(|envs| envs.iter().find(|e| e.interpreter.as_deref() == Some(python)));
    let want = gpu_doctor_installers::choose::Want { framework: fw, keep_line: None, wheelhouse: None };
    let choice = gpu_doctor_installers::choose::choose(kb(), &framework::machine(s, kb(), env), &want);
    let cell = match gpu_doctor_installers::planners::setup::setup_plan(s, kb(), &req) {
        Ok(plan) if plan.id.ends_with("-driver") => format!("none: {}", plan.goal),
        Ok(plan) => {
            let c = plan.choice.as_ref().and_then(|c| c.chosen.as_ref()).unwrap();
            assert_eq!(plan.choice.as_ref(), Some(&choice), "setup plans what the chooser chose");
            let from = c.index_url.as_deref().map_or_else(
                || "PyPI".to_owned(),
                |u| u.trim_start_matches("https://download.pytorch.org/whl/").to_owned() + " index",
            );
            format!("`{}` ({from})", c.requirements.join(" "))
        }
        Err(e) if e.contains("WSL2") => "none: no CUDA build for native Windows; WSL2".to_owned(),
        Err(_) => format!("none: {}", short_reasons(&choice)),
    };
    cell.replace('|', "\\|")
}

/// The table of `docs/installing.md`: per replay fixture, its GPUs, driver and Python, and what a
/// new environment of each framework gets there.
fn fixture_table() -> String {
    use gpu_doctor_installers::choose::Framework as Fw;
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().join("host.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut out = String::from(
        "| fixture | GPUs | driver | Python | torch | jax | tensorflow | cupy |\n|---|---|---|---|---|---|---|---|\n",
    );
    for name in names {
        let s = scenario(&name);
        let mut gpus: Vec<String> = gpu_doctor_judge::diagnose::gpu_views(&s, kb())
            .iter()
            .map(|g| format!("{} ({})", g.name, g.cc.map_or_else(|| "?".to_owned(), |c| c.sm())))
            .collect();
        gpus.dedup();
        let n = gpu_doctor_judge::diagnose::gpu_views(&s, kb()).len();
        let gpus = match (gpus.len(), n) {
            (0, _) => "none seen".to_owned(),
            (1, n) if n > 1 => format!("{n}× {}", gpus[0]),
            _ => gpus.join(", "),
        };
        let driver = s.driver.value().map_or_else(
            || "none".to_owned(),
            |d| format!("{}{}", d.version, d.cuda_version.map_or_else(String::new, |c| format!(" (CUDA {c})"))),
        );
        // The base Python: the first environment's interpreter with a known version, as `setup
        // --python` would take it; else not known.
        let envs = s.python_envs.value().cloned().unwrap_or_default();
        let base = envs.iter().find(|e| e.interpreter.is_some() && e.python_version.is_some());
        let (python, version) = match base {
            Some(e) => (e.interpreter.clone().unwrap_or_default(), e.python_version.clone().unwrap_or_default()),
            None => ("/nonexistent/python3".to_owned(), "not known".to_owned()),
        };
        let cells: Vec<String> = Fw::ALL.iter().map(|fw| setup_cell(&s, &python, *fw)).collect();
        out.push_str(&format!("| `{name}` | {gpus} | {driver} | {version} | {} |\n", cells.join(" | ")));
    }
    out
}

/// Issue 29 item 5: the table in `docs/installing.md` is what `setup` chooses for a new environment
/// of each framework on every replay fixture. To regenerate it:
/// `UPDATE_DOCS=1 cargo test -p gpu-doctor-installers --test framework_plan`.
#[test]
fn the_per_fixture_table_in_docs_is_what_setup_chooses() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/installing.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let (head, rest) =
        doc.split_once(FIXTURES_START).expect("docs/installing.md lacks the fixture-choices:start marker");
    let (_, tail) = rest.split_once(FIXTURES_END).expect("docs/installing.md lacks the fixture-choices:end marker");
    let fresh = format!("{head}{FIXTURES_START}\n{}{FIXTURES_END}{tail}", fixture_table());
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
    }
    assert!(
        doc == fresh,
        "docs/installing.md's per-fixture table is stale; run UPDATE_DOCS=1 cargo test -p gpu-doctor-installers \
         --test framework_plan"
    );
}

/// The request for a new environment based on the fixture's first environment's interpreter.
fn on_first_python(
    s: &gpu_doctor_model::Snapshot,
    fw: gpu_doctor_installers::choose::Framework,
) -> gpu_doctor_installers::planners::setup::SetupRequest {
    let envs = s.python_envs.value().unwrap();
    let python = envs.iter().find_map(|e| e.interpreter.clone()).unwrap();
    gpu_doctor_installers::planners::setup::SetupRequest { python: python.into(), ..setup_request(fw) }
}

/// Issue 29 item 7: on `old-driver-nvml-gaps` (R418, Python 3.6) every build was turned down for
/// Python 3.6 before the driver was looked at, so setup listed "no wheel for Python 3.6" and planned
/// no driver update. Judged for any Python, the driver turns them all down too: the driver plan,
/// which also says to base the environment on a supported Python.
#[test]
fn r418_with_python_3_6_still_gets_the_driver_update() {
    use gpu_doctor_installers::choose::Framework as Fw;
    let s = scenario("old-driver-nvml-gaps");
    for fw in Fw::ALL {
        let plan = gpu_doctor_installers::planners::setup::setup_plan(&s, kb(), &on_first_python(&s, fw))
            .unwrap_or_else(|e| panic!("{}: {e}", fw.name()));
        assert_eq!(plan.id, format!("setup-{}-driver", fw.name()));
        let last = plan.steps.last().unwrap();
        assert!(
            matches!(&last.kind, StepKind::Manual { text } if text.contains("no wheel for Python 3.6") && text.contains("--base-python")),
            "{last:?}"
        );
    }
    // A driver that runs builds, a Python that has none: the error names the Python and what fits.
    let mut s = scenario("consumer-gpu-torch-venv");
    if let gpu_doctor_model::Probed::Found { value, .. } = &mut s.python_envs {
        value[0].python_version = Some("3.6.9".into());
    }
    let err =
        gpu_doctor_installers::planners::setup::setup_plan(&s, kb(), &on_first_python(&s, Fw::Torch)).unwrap_err();
    assert!(err.contains("--base-python") && err.contains("then 2.14.1+cu126 fits"), "{err}");
}

/// Issue 29 item 7: an A100 on R510 for TensorFlow: 2.15+ need R525 and 2.14 carries sm_80 only as
/// CUDA 11.8 PTX, which R510 cannot compile. Both are the driver's doing: the driver update, not a
/// list of reasons.
#[test]
fn ptx_the_driver_cannot_compile_counts_as_the_driver() {
    use gpu_doctor_installers::choose::Framework as Fw;
    let s = scenario("a100-ecc-row-remap-xid63");
    let plan = gpu_doctor_installers::planners::setup::setup_plan(&s, kb(), &setup_request(Fw::Tensorflow))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(plan.id, "setup-tensorflow-driver");
    assert!(plan.goal.contains("the oldest needs driver 525"), "{}", plan.goal);
}
