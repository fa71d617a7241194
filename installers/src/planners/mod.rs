//! From findings to plans: each [`PlanTarget`] has a planner, and [`attach`] gives every planned
//! finding its plan's id and prose.

use std::path::{Path, PathBuf};

use gpu_doctor_kb::Kb;
use gpu_doctor_model::PythonEnv;
use gpu_doctor_model::shell::Shell;
use gpu_doctor_model::{Category, PlanTarget, Report};

use crate::plan::Plan;

mod change;
mod driver;
pub mod framework;
pub mod setup;

/// The plan for one finding's target on the machine of `report`; `None` when no plan can be
/// made there (the finding gets the words its rule wrote, or [`unplanned_driver`]'s).
fn plan_for(
    report: &Report,
    kb: &Kb,
    target: &PlanTarget,
    finding_id: &str,
    options: &framework::Options,
) -> Option<Plan> {
    let mut plan = match target {
        PlanTarget::FrameworkBuild { env, framework, or_driver } => {
            framework::plan(report, kb, env, framework, options).or_else(|| {
                let driver = PlanTarget::Driver { min_branch: Some((*or_driver)?) };
                driver::plan(report, kb, &driver, finding_id)
            })
        }
        PlanTarget::Driver { .. } | PlanTarget::DriverLoad { .. } | PlanTarget::Thunderbolt => {
            driver::plan(report, kb, target, finding_id)
        }
        PlanTarget::Change { env, goal, changes } => {
            change::plan(report, env.as_deref(), goal, changes, options, shell_of(report))
        }
    }?;
    plan.answers = vec![finding_id.to_owned()];
    Some(plan)
}

/// The interpreter of an environment as a plan runs it: its own, else the one in its prefix, else
/// (pasted text: the other machine's environment) the `python` on that machine's PATH.
pub(crate) fn python_of(env: &PythonEnv) -> PathBuf {
    match &env.interpreter {
        Some(p) => PathBuf::from(p),
        None if Path::new(&env.prefix).is_absolute() => crate::envtool::python_in(Path::new(&env.prefix)),
        None => PathBuf::from("python"),
    }
}

/// The shell commands are shown for: PowerShell on Windows, POSIX sh elsewhere.
pub fn shell_of(report: &Report) -> Shell {
    Shell::for_os(report.snapshot.platform.platform.os)
}

/// The plan of each finding of `report` (`None` where it has none), ids given.
fn plan_each(report: &Report, kb: &Kb, options: &framework::Options) -> Vec<Option<Plan>> {
    let mut out: Vec<Option<Plan>> = Vec::new();
    for f in &report.findings {
        let plan = f.plan.as_ref().and_then(|r| plan_for(report, kb, &r.target, &f.id, options)).map(|mut plan| {
            let same = out.iter().flatten().filter(|p| p.answers.first() == Some(&f.id)).count();
            plan.id = if same == 0 { f.id.clone() } else { format!("{}-{}", f.id, same + 1) };
            plan
        });
        out.push(plan);
    }
    out
}

/// Every plan for the findings of `report`, in finding order, with their ids.
pub fn plans(report: &Report, kb: &Kb) -> Vec<Plan> {
    plans_with(report, kb, &framework::Options::default())
}

/// [`plans`] with another tool or a wheelhouse (`fix --tool`, `fix --find-links DIR`): framework
/// builds are then chosen among the wheels of that folder and installed from it, offline.
pub fn plans_with(report: &Report, kb: &Kb, options: &framework::Options) -> Vec<Plan> {
    plan_each(report, kb, options).into_iter().flatten().collect()
}

/// Plans every finding of `report` that has a target: sets its plan id and writes its `fix` from
/// the plan, the one writer of a planned finding's fix. A finding whose plan cannot be made loses
/// its plan ref and gets its rule's words ([`gpu_doctor_model::PlanRef::unplanned`]), or, where the
/// rule left the fix to a driver plan, the driver update in words.
pub fn attach(report: &mut Report, kb: &Kb) {
    let shell = shell_of(report);
    let foreign = !report.snapshot.origin.is_this_machine();
    let each = plan_each(report, kb, &framework::Options::default());
    for (f, plan) in report.findings.iter_mut().zip(each) {
        match (plan, &mut f.plan) {
            (Some(plan), Some(r)) => {
                r.id = plan.id.clone();
                r.unplanned = None;
                let mut prose = plan.prose(shell);
                // For a GPU the installed build has no code for: which GPUs the chosen build covers.
                if f.category == Category::ArchNotInBuild
                    && let Some(alt) = plan.choice.as_ref().and_then(|c| c.chosen.as_ref())
                    && let Some(covers) = alt.why.split("; ").next().filter(|w| w.starts_with("covers "))
                {
                    let covers = covers.trim_end_matches('.').replace(" (", ", ").replace(')', "");
                    prose.push_str(&format!(" ({} {covers})", alt.label));
                }
                // As the probes say of their own fixes for pasted text: the paths are that machine's
                // (a fix that only sets or unsets a variable to a value shows none).
                let shows_path = prose.contains('/') || prose.contains('\\');
                if foreign && shows_path && (plan.env.is_some() || matches!(r.target, PlanTarget::Change { .. })) {
                    prose.push_str(
                        "   (The paths in this fix come from another machine, read from pasted text: check them \
                         before running anything.)",
                    );
                }
                f.fix = Some(prose);
            }
            (None, Some(r)) => {
                // No plan for this machine (an OS pasted text did not name, macOS): the rule's words;
                // a driver update, which the rules leave wholly to the driver planner, is said here.
                f.fix = r.unplanned.take().or_else(|| unplanned_driver(&r.target));
                f.plan = None;
            }
            (_, None) => {}
        }
    }
}

/// The fix in words for a target that asks for a newer driver where no driver plan can be made:
/// the one place besides the driver planner that says how to get a driver, and without commands.
fn unplanned_driver(target: &PlanTarget) -> Option<String> {
    let branch = match target {
        PlanTarget::Driver { min_branch } => *min_branch,
        PlanTarget::FrameworkBuild { or_driver, .. } => *or_driver,
        PlanTarget::DriverLoad { .. } | PlanTarget::Thunderbolt | PlanTarget::Change { .. } => None,
    }?;
    Some(format!(
        "Update the NVIDIA driver to R{branch} or newer (your distribution's driver packages, or \
         https://www.nvidia.com/drivers), then reboot."
    ))
}
