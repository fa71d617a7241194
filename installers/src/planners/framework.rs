//! The plan for [`PlanTarget::FrameworkBuild`](gpu_doctor_model::PlanTarget): reinstall a
//! framework in an existing environment with the build the chooser picks for this machine, its
//! companions pinned with it, then verify. Pure: the tool and the wheelhouse come from the caller.

use std::path::PathBuf;

use gpu_doctor_judge::diagnose::gpu_views;
use gpu_doctor_kb::{Kb, PyVersion, families};
use gpu_doctor_model::{CudaVersion, PythonEnv, ToolkitKind};
use gpu_doctor_model::{Report, Snapshot};
use gpu_doctor_probes::parse::wheel::normalize_name;

use crate::choose::{Candidate, Framework, Machine, Want, choose, python_version};
use crate::envtool::{self, Source, Tool};
use crate::plan::{Plan, Step, StepKind};

/// How to plan: the tool that installs, and an offline wheelhouse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The tool ([`Tool::Pip`] with the environment's own interpreter for `attach`).
    pub tool: Tool,
    /// A folder of wheels (`--find-links DIR`) and the file names in it: the choice is made among them.
    pub wheelhouse: Option<(PathBuf, Vec<String>)>,
}

impl Default for Options {
    fn default() -> Self {
        Self { tool: Tool::Pip, wheelhouse: None }
    }
}

/// What undoes an install into an existing environment: the runner saved its package list first.
pub const UNDO: &str = "reinstall the saved package list with gpu-doctor fix --undo LIST --env ENV";

/// The machine of `snapshot` as the chooser needs it, for the environment `env` (its Python).
pub fn machine(snapshot: &Snapshot, kb: &Kb, env: Option<&PythonEnv>) -> Machine {
    let os = snapshot.platform.platform.os;
    let driver = snapshot.driver.value();
    Machine {
        gpus: gpu_views(snapshot, kb).iter().filter_map(|g| g.cc).collect(),
        driver_cuda: driver.and_then(|d| d.cuda_version),
        driver_version: driver.map(|d| d.version.to_string()),
        python: env.and_then(|e| e.python_version.as_deref()).and_then(python_version),
        os,
        cpu: snapshot.platform.platform.arch.clone(),
        toolkits: machine_toolkits(snapshot),
    }
}

/// The versions of the CUDA toolkits installed on the machine itself: not an environment's pip
/// wheels or conda packages, which another environment does not see.
fn machine_toolkits(snapshot: &Snapshot) -> Vec<CudaVersion> {
    let installs = snapshot.toolkits.value().map(|t| t.installs.as_slice()).unwrap_or_default();
    installs
        .iter()
        .filter(|i| !matches!(i.kind, ToolkitKind::Pip | ToolkitKind::Conda | ToolkitKind::Unknown))
        .filter_map(|i| i.version)
        .collect()
}

/// The plan that reinstalls `framework` (a package name: `torch`, `tensorflow-cpu`,
/// `jax-cuda12-plugin`) in the environment whose prefix is `env`. `None` when that environment is
/// not in the report, the package is not a framework the chooser knows, no build fits, or the
/// build that fits is the one installed.
pub fn plan(report: &Report, kb: &Kb, env: &str, framework: &str, options: &Options) -> Option<Plan> {
    let envs = report.snapshot.python_envs.value()?;
    let pyenv = envs.iter().find(|e| e.prefix == env)?;
    let fw = Framework::of_package(framework)?;
    let installed = pyenv.framework(framework);
    let want = Want {
        framework: fw,
        keep_line: installed.and_then(|f| PyVersion::new(&f.version).line()),
        wheelhouse: options.wheelhouse.as_ref().map(|(_, files)| files.clone()),
    };
    let machine = machine(&report.snapshot, kb, Some(pyenv));
    let choice = choose(kb, &machine, &want);
    let chosen = choice.chosen.as_ref()?;
    let replaced = replaced(pyenv, fw, &chosen.requirements);
    // A torch label (`2.3.1+cu121`) names the build even where its requirements are PyPI's, unlabelled.
    let pinned = if fw == Framework::Torch { Some(chosen.label.as_str()) } else { None };
    if let Some(f) = installed
        && pinned
            .or_else(|| chosen.requirements.first().and_then(|r| r.split_once("==")).map(|(_, v)| v))
            .is_some_and(|v| same_build(v, &f.version))
        && !replaced.contains(&normalize_name(&f.name))
    {
        // The installed build is the one that fits (a newer patch of it is no fix).
        return None;
    }
    let (requirements, index_url, why) = match installed.zip(pinned) {
        Some((f, label)) => labelled_if_satisfied(kb, &f.version, label, chosen),
        None => (chosen.requirements.clone(), chosen.index_url.clone(), chosen.why.clone()),
    };
    let python = super::python_of(pyenv);
    let source = Source { index_url, find_links: options.wheelhouse.as_ref().map(|(dir, _)| dir.clone()) };
    let mut steps = Vec::new();
    // A distribution that the new one replaces but does not upgrade (tensorflow-cpu, cupy-cuda11x,
    // the other CUDA major's jax plugin) is removed first, or both stay and clash.
    for old in replaced {
        steps.push(Step::run(
            envtool::uninstall(&options.tool, &python, std::slice::from_ref(&old)),
            format!("{old} provides the same module as {} and would stay beside it", chosen.label),
            format!("removes {old} from {env}"),
            UNDO,
        ));
    }
    let names: Vec<&str> = requirements.iter().map(|r| envtool::package_name(r)).collect();
    steps.push(Step::run(
        envtool::install(&options.tool, &python, &requirements, &source),
        why,
        format!("{} in {env}", names.join(", ")),
        UNDO,
    ));
    steps.push(Step {
        kind: StepKind::Verify { python, frameworks: vec![fw.name().to_owned()] },
        why: format!("proves {} imports and runs on the GPU here", chosen.label),
        changes: "nothing".into(),
        undo: String::new(),
    });
    Some(Plan {
        id: String::new(),
        goal: format!("{} in {}, built for this machine's GPUs and driver", chosen.label, pyenv.name),
        answers: Vec::new(),
        env: Some(PathBuf::from(env)),
        steps,
        choice: Some(choice),
    })
}

/// The requirements, index and why that install the torch build `label` over the installed
/// version `installed`: the chooser's, unless they are PyPI's unlabelled pins (`torch==2.3.1`) and
/// the installed build has that very version with another label (`2.3.1+cpu`), which pip counts
/// as satisfying them (PEP 440 ignores the local label of a candidate against a public pin): then
/// the labelled pins from PyTorch's index of that variant.
fn labelled_if_satisfied(
    kb: &Kb,
    installed: &str,
    label: &str,
    chosen: &Candidate,
) -> (Vec<String>, Option<String>, String) {
    let (want, have) = (PyVersion::new(label), PyVersion::new(installed));
    let tag = want.local().filter(|_| chosen.index_url.is_none() && want.public() == have.public());
    let cuda = tag.filter(|t| have.local() != Some(*t)).and_then(families::cuda_tag);
    let (Some(tag), Some(cuda)) = (tag, cuda) else {
        return (chosen.requirements.clone(), chosen.index_url.clone(), chosen.why.clone());
    };
    let requirements = chosen
        .requirements
        .iter()
        .map(|r| if r.contains("==") && !r.contains('+') { format!("{r}+{tag}") } else { r.clone() })
        .collect();
    let index = kb.pytorch.index_url(cuda);
    let kept = chosen.why.split("; PyPI serves").next().unwrap_or_default().trim_end_matches('.');
    let why = format!(
        "{kept}; torch {installed} is installed, which pip counts as {} already, so the labelled build comes from \
         {index}.",
        want.public()
    );
    (requirements, Some(index), why)
}

/// Whether `pinned` (a version, `2.3.1+cu121`) has the release line and local label (`+cu124`)
/// of `installed`.
fn same_build(pinned: &str, installed: &str) -> bool {
    let (pinned, installed) = (PyVersion::new(pinned), PyVersion::new(installed));
    pinned.line() == installed.line() && pinned.local() == installed.local()
}

/// The installed distributions of framework `fw` that the chosen `requirements` neither name nor
/// pin through an extra (`jax[cuda12]` pins jaxlib and the cuda12 plugin and pjrt).
fn replaced(env: &PythonEnv, fw: Framework, requirements: &[String]) -> Vec<String> {
    let mut kept: Vec<String> = requirements.iter().map(|r| normalize_name(envtool::package_name(r))).collect();
    for r in requirements {
        if let Some(extra) = r.split_once('[').and_then(|(_, rest)| rest.split_once(']')).map(|(e, _)| e) {
            kept.extend(["jaxlib".to_owned(), format!("jax-{extra}-plugin"), format!("jax-{extra}-pjrt")]);
        }
    }
    env.frameworks
        .iter()
        .map(|f| normalize_name(&f.name))
        .filter(|n| Framework::of_package(n) == Some(fw) && !kept.contains(n))
        .collect()
}
