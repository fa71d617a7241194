//! `gpu-doctor setup`: a new environment for this machine, with the framework build the chooser
//! picks, then verified.

use std::path::{Path, PathBuf};

use gpu_doctor_kb::Kb;
use gpu_doctor_model::Snapshot;

use crate::choose::{self, Choice, Framework, Machine, Want};
use crate::envtool::{self, Source, Tool};
use crate::plan::{Plan, Step, StepKind};

/// What the user asked `setup` for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupRequest {
    /// The framework to install.
    pub framework: Framework,
    /// Where the environment goes: a folder that does not exist yet, an empty one, or an existing
    /// environment (then nothing is created and the install goes into it).
    pub env: PathBuf,
    /// The tool that creates it and installs into it.
    pub tool: Tool,
    /// The interpreter to base the environment on.
    pub python: PathBuf,
    /// Install from this folder of wheels and no index (`--find-links DIR`, the offline route).
    pub find_links: Option<PathBuf>,
    /// The file names of the wheels in `find_links` ([`wheel_files`]), among which the chooser picks.
    pub wheelhouse: Vec<String>,
    /// The version of `python` where the snapshot does not know it (a launcher shim such as
    /// pyenv's is listed without one): asked of the interpreter itself ([`envtool::python_version`]).
    pub python_version: Option<(u32, u32)>,
}

impl SetupRequest {
    /// A request for `framework` in `env`: the environment based on `python` (else `python3` on
    /// PATH), the build chosen among the wheels of `find_links` when given. `Err` says which of
    /// the two could not be found.
    pub fn new(
        framework: Framework,
        env: PathBuf,
        tool: Tool,
        python: Option<PathBuf>,
        find_links: Option<PathBuf>,
    ) -> Result<Self, String> {
        let python = match python {
            Some(p) => p,
            None => envtool::base_python()?,
        };
        let wheelhouse = match &find_links {
            Some(dir) => wheel_files(dir)?,
            None => Vec::new(),
        };
        Ok(Self { framework, env, tool, python, find_links, wheelhouse, python_version: None })
    }
}

/// The plan for `req` on the machine of `snapshot`: the build is the chooser's. `Err` says why no
/// plan can be made (the folder is not usable, or no build fits, with each candidate's reason).
pub fn setup_plan(snapshot: &Snapshot, kb: &Kb, req: &SetupRequest) -> Result<Plan, String> {
    let create = !is_environment(&req.env)?;
    plan_or_driver(snapshot, kb, req, choice_for(snapshot, kb, req), create)
}

/// [`plan`], or where the driver is what turns every build down, the plan that updates it.
fn plan_or_driver(
    snapshot: &Snapshot,
    kb: &Kb,
    req: &SetupRequest,
    choice: Choice,
    create: bool,
) -> Result<Plan, String> {
    if choice.chosen.is_none()
        && let Some(needed) = driver_needed(&choice)
        && let Some(plan) = driver_plan(snapshot, kb, req, choice.clone(), needed)
    {
        return Ok(plan);
    }
    // The environment's Python turned every build down before the driver was looked at: judged
    // for any Python, the driver may turn them all down too (R418 with Python 3.6), or one fits.
    let python_only =
        !choice.rejected.is_empty() && choice.rejected.iter().all(|r| r.reason.starts_with("no wheel for Python"));
    if choice.chosen.is_none() && python_only {
        let any = choose::choose(kb, &Machine { python: None, ..request_machine(snapshot, kb, req) }, &want_of(req));
        if any.chosen.is_none()
            && let Some(needed) = driver_needed(&any)
            && let Some(plan) = driver_plan(snapshot, kb, req, choice.clone(), needed)
        {
            return Ok(plan);
        }
        if let Some(fits) = &any.chosen {
            let why = choice.rejected.first().map(|r| r.reason.as_str()).unwrap_or_default();
            return Err(format!(
                "no {} build has a wheel for this environment's Python ({why}); base the environment on a Python \
                 it supports (--base-python PATH): then {} fits this machine",
                req.framework.name(),
                fits.label
            ));
        }
    }
    plan(req, choice, create)
}

/// The lowest and the highest driver branch the builds need, when the driver is what turns them
/// down: at least one was turned down for the driver (`driver 418 < 525`), and none for the GPUs
/// (a build without a wheel for this Python or OS, or one whose only code for a GPU is PTX the
/// driver is too old to compile, may be among them). `None` otherwise.
fn driver_needed(choice: &Choice) -> Option<(u32, u32)> {
    let mut need = None::<(u32, u32)>;
    for r in &choice.rejected {
        if let Some((_, after)) = r.reason.split_once(" < ").filter(|_| r.reason.contains("driver")) {
            let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
            let branch = digits.parse::<u32>().ok()?;
            need = Some(need.map_or((branch, branch), |(lo, hi)| (lo.min(branch), hi.max(branch))));
        } else if r.reason.ends_with("cannot compile (minor-version compatibility)") {
            // Only PTX of a newer CUDA than the driver's: a newer driver compiles it (no branch named).
            continue;
        } else if !r.reason.starts_with("no wheel for") && !r.reason.starts_with("no GPU wheel for") {
            return None;
        }
    }
    need
}

/// The plan that updates the driver (the driver planner's steps for this machine's GPUs and
/// distribution: the distribution's own choice of branch, its newest for these GPUs, rather than
/// the oldest that runs anything), then says to run setup again: one clear step instead of every
/// build's "driver 418 < N". `(oldest, newest)`: the branches the oldest and newest builds need.
fn driver_plan(
    snapshot: &Snapshot,
    kb: &Kb,
    req: &SetupRequest,
    choice: Choice,
    (oldest, newest): (u32, u32),
) -> Option<Plan> {
    let report = gpu_doctor_model::Report::new(snapshot.clone(), Vec::new());
    let target = gpu_doctor_model::PlanTarget::Driver { min_branch: None };
    let mut plan = super::driver::plan(&report, kb, &target, "setup")?;
    let framework = req.framework.name();
    let have = snapshot.driver.value().map_or_else(|| "this driver".to_owned(), |d| format!("driver {}", d.version));
    let python = choice.rejected.iter().find(|r| r.reason.starts_with("no wheel for Python")).map(|r| {
        format!(" Also, {}: {}; base the environment on a supported Python (--base-python).", r.label, r.reason)
    });
    plan.steps.push(Step::manual(
        format!(
            "Then run gpu-doctor setup --framework {framework} --env {} again.{}",
            req.env.display(),
            python.unwrap_or_default()
        ),
        format!("with a newer driver a {framework} build fits this machine"),
    ));
    plan.id = format!("setup-{framework}-driver");
    plan.goal = format!(
        "update the driver: {have} runs no {framework} build gpu-doctor knows (the oldest needs driver {oldest}, the \
         newest {newest})"
    );
    plan.answers = Vec::new();
    plan.choice = Some(choice);
    Some(plan)
}

/// The plans that put each of `frameworks` into the environment of `req`, in order: only the
/// first creates the environment when it is not one yet.
pub fn setup_plans(
    snapshot: &Snapshot,
    kb: &Kb,
    req: &SetupRequest,
    frameworks: &[Framework],
) -> Result<Vec<Plan>, String> {
    let create = !is_environment(&req.env)?;
    let mut plans = Vec::new();
    for (i, framework) in frameworks.iter().enumerate() {
        let req = SetupRequest { framework: *framework, ..req.clone() };
        plans.push(plan_or_driver(snapshot, kb, &req, choice_for(snapshot, kb, &req), create && i == 0)?);
    }
    Ok(plans)
}

/// The chooser's build for `req` on the machine of `snapshot`.
fn choice_for(snapshot: &Snapshot, kb: &Kb, req: &SetupRequest) -> Choice {
    choose::choose(kb, &request_machine(snapshot, kb, req), &want_of(req))
}

/// The machine of `snapshot` for `req`: the snapshot's version of its Python, else the one the
/// request carries.
fn request_machine(snapshot: &Snapshot, kb: &Kb, req: &SetupRequest) -> Machine {
    let m = machine(snapshot, kb, &req.python);
    Machine { python: m.python.or(req.python_version), ..m }
}

/// What a new environment for `req` asks the chooser for.
fn want_of(req: &SetupRequest) -> Want {
    Want {
        framework: req.framework,
        keep_line: None,
        wheelhouse: req.find_links.is_some().then(|| req.wheelhouse.clone()),
    }
}

/// The plan for `req` installing the build `choice` chose (the chooser's, or one the user picked
/// from its candidates).
pub fn setup_plan_with(req: &SetupRequest, choice: Choice) -> Result<Plan, String> {
    let create = !is_environment(&req.env)?;
    plan(req, choice, create)
}

/// The plan: the create step when `create`, the install of the chosen build, the verify step.
fn plan(req: &SetupRequest, choice: Choice, create: bool) -> Result<Plan, String> {
    let framework = req.framework.name();
    let Some(chosen) = &choice.chosen else {
        if let Some(wsl) = windows_only_through_wsl(req.framework, &choice) {
            return Err(wsl);
        }
        let reasons: Vec<String> = choice.rejected.iter().map(|r| format!("{}: {}", r.label, r.reason)).collect();
        return Err(format!("no {framework} build fits this machine ({})", reasons.join("; ")));
    };
    let env = &req.env;
    let shown = env.display();
    let python = envtool::python_in(env);
    let mut steps = Vec::new();
    if create {
        steps.push(Step::run(
            envtool::create(&req.tool, &req.python, env),
            format!("{framework} goes into an environment of its own, apart from the system's packages"),
            format!("creates the folder {shown}"),
            format!("delete the folder {shown}"),
        ));
    }
    let source = Source { index_url: chosen.index_url.clone(), find_links: req.find_links.clone() };
    steps.push(Step::run(
        envtool::install(&req.tool, &python, &chosen.requirements, &source),
        chosen.why.clone(),
        format!("installs {} into {shown}", chosen.requirements.join(", ")),
        if create {
            // apply deletes the new environment when a step fails; after a success it is yours.
            format!("delete the folder {shown} (the environment is new; gpu-doctor deletes it only if this run fails)")
        } else {
            format!("gpu-doctor fix --undo LIST --env {shown}: the package list --apply saves first (LIST) put back")
        },
    ));
    steps.push(Step {
        kind: StepKind::Verify { python, frameworks: vec![framework.to_owned()] },
        why: format!("proves that {framework} imports and sees the GPU"),
        changes: String::new(),
        undo: String::new(),
    });
    Ok(Plan {
        id: format!("setup-{framework}"),
        goal: format!("{shown} runs {framework} {}", chosen.label),
        answers: Vec::new(),
        env: Some(env.clone()),
        steps,
        choice: Some(choice),
    })
}

/// For JAX and TensorFlow turned down for native Windows: where their CUDA builds run instead.
/// JAX: "CUDA … on Windows: via WSL2" (https://docs.jax.dev/en/latest/installation.html, the
/// supported-platforms table); TensorFlow: "TensorFlow 2.10 was the last TensorFlow release that
/// supported GPU on native-Windows. Starting with TensorFlow 2.11, you will need to install
/// TensorFlow in WSL2" (https://www.tensorflow.org/install/pip#windows-native).
fn windows_only_through_wsl(framework: Framework, choice: &Choice) -> Option<String> {
    let name = match framework {
        Framework::Jax => "JAX",
        Framework::Tensorflow => "TensorFlow (2.11 and newer)",
        Framework::Torch | Framework::Cupy => return None,
    };
    choice.rejected.iter().any(|r| r.reason.starts_with("no GPU wheel for Windows")).then(|| {
        format!(
            "{name} has no CUDA build for native Windows: it runs on the GPU under WSL2. Install WSL2 (`wsl \
             --install` in PowerShell, NVIDIA's Windows driver stays as it is), then run gpu-doctor setup inside \
             it"
        )
    })
}

/// Whether `dir` is already a Python environment (a venv's `pyvenv.cfg` or conda's `conda-meta/`);
/// `Err` for a file, or a folder with files in it that is not one.
fn is_environment(dir: &Path) -> Result<bool, String> {
    if dir.join("pyvenv.cfg").is_file() || dir.join("conda-meta").is_dir() {
        return Ok(true);
    }
    match std::fs::read_dir(dir).map(|mut entries| entries.next().is_none()) {
        Ok(true) => Ok(false),
        Ok(false) => {
            Err(format!("{} has files in it and is not a Python environment: choose another folder", dir.display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(format!("{} cannot be used: {e}", dir.display())),
    }
}

/// The machine of `snapshot` for an environment based on `python`: its Python version is known
/// when the probes saw that interpreter.
fn machine(snapshot: &Snapshot, kb: &Kb, python: &Path) -> Machine {
    let envs = snapshot.python_envs.value();
    let env =
        envs.and_then(|envs| envs.iter().find(|e| e.interpreter.as_deref().is_some_and(|i| Path::new(i) == python)));
    super::framework::machine(snapshot, kb, env)
}

/// The file names of the wheels in `dir`, sorted.
pub fn wheel_files(dir: &Path) -> Result<Vec<String>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".whl"))
        .collect();
    names.sort();
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choose::Candidate;

    fn request(env: &Path, wheelhouse: &[&str]) -> SetupRequest {
        SetupRequest {
            framework: Framework::Torch,
            env: env.to_owned(),
            tool: Tool::Uv { uv: "/usr/bin/uv".into() },
            python: "/usr/bin/python3".into(),
            find_links: Some("/wheels".into()),
            wheelhouse: wheelhouse.iter().map(|s| (*s).to_owned()).collect(),
            python_version: None,
        }
    }

    /// Several frameworks into one new environment: only the first plan creates it.
    #[test]
    fn only_the_first_of_several_plans_creates_the_environment() {
        let kb = Kb::load().unwrap();
        let wheels = [
            "torch-2.5.1+cu121-py3-none-any.whl",
            "jax-0.4.35-py3-none-any.whl",
            "jaxlib-0.4.35-py3-none-any.whl",
            "jax_cuda12_plugin-0.4.35-py3-none-any.whl",
        ];
        let req = request(Path::new("/nonexistent/env"), &wheels);
        let snapshot = Snapshot::unknown(Vec::new());
        let plans = setup_plans(&snapshot, &kb, &req, &[Framework::Torch, Framework::Jax]).unwrap();
        let creates = |p: &Plan| p.steps.iter().any(|s| format!("{:?}", s.kind).contains("\"venv\""));
        assert_eq!(
            plans.iter().map(|p| (p.id.as_str(), creates(p))).collect::<Vec<_>>(),
            [("setup-torch", true), ("setup-jax", false)]
        );
    }

    fn cpu_choice() -> Choice {
        Choice {
            framework: "torch".into(),
            chosen: Some(Candidate {
                label: "2.5.1+cpu".into(),
                requirements: vec!["torch==2.5.1+cpu".into(), "torchvision==0.20.1+cpu".into()],
                index_url: Some("https://download.pytorch.org/whl/cpu".into()),
                why: "no GPU here".into(),
                beyond_kb: String::new(),
            }),
            rejected: Vec::new(),
        }
    }

    #[test]
    fn a_new_environment_is_created_then_gets_the_chosen_build_then_is_verified() {
        let dir = tempfile::tempdir().unwrap();
        let env = dir.path().join("venv");
        let plan = setup_plan_with(&request(&env, &[]), cpu_choice()).unwrap();
        let argv = |i: usize| match &plan.steps[i].kind {
            StepKind::User { action: crate::UserAction::Run { argv } } => argv.clone(),
            other => panic!("{other:?}"),
        };
        let python = env.join("bin/python").display().to_string();
        assert_eq!(argv(0), ["/usr/bin/uv", "venv", "--python", "/usr/bin/python3", &env.display().to_string()]);
        assert_eq!(
            argv(1),
            [
                "/usr/bin/uv",
                "pip",
                "install",
                "--python",
                &python,
                "--no-index",
                "--find-links",
                "/wheels",
                "torch==2.5.1+cpu",
                "torchvision==0.20.1+cpu"
            ]
        );
        assert_eq!(
            plan.steps[2].kind,
            StepKind::Verify { python: env.join("bin/python"), frameworks: vec!["torch".into()] }
        );
        assert_eq!(plan.choice, Some(cpu_choice()));
        assert_eq!(plan.env.as_deref(), Some(env.as_path()));
        // Undo says what the person does: apply deletes a new environment only when the run fails.
        assert!(!plan.steps[1].undo.contains("is deleted"), "{}", plan.steps[1].undo);
        let undo = &plan.steps[1].undo;
        assert!(undo.starts_with("delete the folder ") && undo.contains("only if this run fails"), "{undo}");
    }

    #[test]
    fn an_existing_environment_is_installed_into_and_a_folder_with_other_files_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        let plan = setup_plan_with(&request(dir.path(), &[]), cpu_choice()).unwrap();
        assert_eq!(plan.steps.len(), 2, "{plan:#?}");
        assert!(format!("{:?}", plan.steps[0].kind).contains("install"));
        assert!(plan.steps[0].undo.starts_with("gpu-doctor fix --undo LIST --env "), "{}", plan.steps[0].undo);
        let other = tempfile::tempdir().unwrap();
        std::fs::write(other.path().join("notes.txt"), "mine").unwrap();
        let err = setup_plan_with(&request(other.path(), &[]), cpu_choice()).unwrap_err();
        assert!(err.contains("is not a Python environment"), "{err}");
    }

    #[test]
    fn without_a_fitting_build_no_plan_is_made_and_every_reason_is_said() {
        let choice = Choice {
            framework: "torch".into(),
            chosen: None,
            rejected: vec![choose::Rejected { label: "2.5.1+cu121".into(), reason: "no sm_120".into(), fits: false }],
        };
        let err = setup_plan_with(&request(Path::new("/nonexistent/env"), &[]), choice).unwrap_err();
        assert_eq!(err, "no torch build fits this machine (2.5.1+cu121: no sm_120)");
    }

    /// Whatever the chooser decides for a machine without a GPU and a wheelhouse whose only torch is
    /// `+cpu`, the plan installs exactly that, or says each reason why not.
    #[test]
    fn the_plan_installs_what_the_chooser_chose() {
        let kb = Kb::load().unwrap();
        let snapshot = Snapshot::unknown(Vec::new());
        let wheels = ["torch-2.5.1+cpu-py3-none-any.whl", "torchvision-0.20.1+cpu-py3-none-any.whl"];
        let req = request(Path::new("/nonexistent/env"), &wheels);
        let want =
            Want { framework: Framework::Torch, keep_line: None, wheelhouse: Some(wheels.map(str::to_owned).to_vec()) };
        let choice = choose::choose(&kb, &machine(&snapshot, &kb, &req.python), &want);
        match (setup_plan(&snapshot, &kb, &req), &choice.chosen) {
            (Ok(plan), Some(chosen)) => {
                let install = format!("{:?}", plan.steps[1].kind);
                assert!(chosen.requirements.iter().all(|r| install.contains(r.as_str())), "{install}");
                assert_eq!(plan.choice.as_ref(), Some(&choice));
            }
            (Err(e), None) => assert!(choice.rejected.iter().all(|r| e.contains(&r.reason)), "{e}"),
            (plan, _) => panic!("the plan disagrees with the choice {choice:?}: {plan:?}"),
        }
    }

    #[test]
    fn the_python_version_is_the_snapshots_for_that_interpreter() {
        let text = r#"{"name":"system:/usr/bin/python3","kind":"system","prefix":"/usr","interpreter":"/usr/bin/python3","python_version":"3.12.4","site_packages":[]}"#;
        let env: gpu_doctor_model::PythonEnv = serde_json::from_str(text).unwrap();
        let mut snapshot = Snapshot::unknown(Vec::new());
        snapshot.python_envs = gpu_doctor_model::Probed::found(vec![env], "test");
        let kb = Kb::load().unwrap();
        assert_eq!(machine(&snapshot, &kb, Path::new("/usr/bin/python3")).python, Some((3, 12)));
        assert_eq!(machine(&snapshot, &kb, Path::new("/opt/python3")).python, None);
        // A Python the snapshot has no version for (pyenv's shim): the request's own, asked of it.
        let mut req = request(Path::new("/tmp/env"), &[]);
        req.python = "/root/.pyenv/shims/python3".into();
        req.python_version = Some((3, 11));
        assert_eq!(request_machine(&snapshot, &kb, &req).python, Some((3, 11)));
        req.python = "/usr/bin/python3".into();
        assert_eq!(request_machine(&snapshot, &kb, &req).python, Some((3, 12)), "the snapshot's comes first");
    }

    #[test]
    fn wheel_files_lists_only_wheels_sorted() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["b-1-py3-none-any.whl", "notes.txt", "a-1-py3-none-any.whl"] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        assert_eq!(wheel_files(dir.path()).unwrap(), ["a-1-py3-none-any.whl", "b-1-py3-none-any.whl"]);
    }
}
