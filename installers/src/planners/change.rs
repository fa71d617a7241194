//! The plan for [`PlanTarget::Change`](gpu_doctor_model::PlanTarget): the changes a rule names
//! (packages to remove or install in one environment, variables of the shell, a root command, a
//! step only a person can take), each written as the command for that environment's tool and the
//! machine's shell. Package changes are user steps `apply` runs (the package list saved first, so
//! they can be undone) and end with a verify step; the rest is shown.

use std::path::PathBuf;

use gpu_doctor_model::shell::{self, Shell, ShellCommand, Unquotable};
use gpu_doctor_model::{Change, Report};

use super::framework::{Options, UNDO};
use super::python_of;
use crate::choose::Framework;
use crate::envtool::{self, Source};
use crate::plan::{Plan, Step, StepKind};

/// The plan that makes `changes` to the environment whose prefix is `env` (when any) on the machine
/// of `report`, its commands for `shell`. `None` when a package change names an environment the
/// report does not hold, or there is nothing to change.
pub(super) fn plan(
    report: &Report,
    env: Option<&str>,
    goal: &str,
    changes: &[Change],
    options: &Options,
    shell: Shell,
) -> Option<Plan> {
    let pyenv = match env {
        Some(prefix) => Some(report.snapshot.python_envs.value()?.iter().find(|e| e.prefix == prefix)?),
        None => None,
    };
    let python = pyenv.map(python_of);
    let place = env.unwrap_or("the environment");
    let mut steps = Vec::new();
    for change in changes {
        steps.push(match change {
            Change::Uninstall { packages } => Step::run(
                envtool::uninstall(&options.tool, python.as_deref()?, packages),
                format!("{} must go before the new packages are installed", packages.join(", ")),
                format!("removes {} from {place}", packages.join(", ")),
                UNDO,
            ),
            Change::Install { requirements, flags, index_url } => {
                let source = Source {
                    index_url: index_url.clone(),
                    find_links: options.wheelhouse.as_ref().map(|(dir, _)| dir.clone()),
                };
                let names: Vec<&str> = requirements.iter().map(|r| envtool::package_name(r)).collect();
                Step::run(
                    envtool::install_with(&options.tool, python.as_deref()?, requirements, &source, flags),
                    goal,
                    format!("{} in {place}", names.join(", ")),
                    UNDO,
                )
            }
            Change::SetVar { name, value } => shell_step(
                shell::set_var(shell, name, value),
                format!("{name} is read by the programs started from that shell"),
                format!("unset {name}, or set it back to what it was"),
            ),
            Change::UnsetVar { name } => shell_step(
                shell::unset_var(shell, name),
                format!("{name} as it is set now is the problem"),
                format!("set {name} again"),
            ),
            Change::PrependPath { dir } => shell_step(
                shell::prepend_var(shell, "PATH", dir),
                "the first folder on PATH with the program wins".to_owned(),
                "take the folder out of PATH again".to_owned(),
            ),
            Change::Root { argv } => Step::root(
                rendered(command(argv).render(shell)),
                goal,
                "the system outside any environment (root)",
                "undo the same change as root",
            ),
            Change::Windows { argv } => Step::manual(
                format!("In PowerShell on Windows: {}", rendered(command(argv).render(Shell::PowerShell))),
                goal,
            ),
            Change::Manual { text } => Step::manual(text.clone(), goal),
        });
    }
    let installs = changes.iter().any(|c| matches!(c, Change::Install { .. } | Change::Uninstall { .. }));
    if let (true, Some(pyenv), Some(python)) = (installs, pyenv, python) {
        let mut frameworks: Vec<String> = pyenv
            .frameworks
            .iter()
            .filter_map(|f| Framework::of_package(&f.name))
            .map(|f| f.name().to_owned())
            .collect();
        frameworks.dedup();
        steps.push(Step {
            kind: StepKind::Verify { python, frameworks },
            why: format!("proves the change: the frameworks of {} import and run on the GPU", pyenv.name),
            changes: "nothing".into(),
            undo: String::new(),
        });
    }
    if steps.is_empty() {
        return None;
    }
    Some(Plan {
        id: String::new(),
        goal: goal.to_owned(),
        answers: Vec::new(),
        env: installs.then(|| env.map(PathBuf::from)).flatten(),
        steps,
        choice: None,
    })
}

fn command(argv: &[String]) -> ShellCommand {
    let (program, args) = argv.split_first().map_or(("", &[][..]), |(p, a)| (p.as_str(), a));
    ShellCommand::new(program).args(args.iter().cloned())
}

/// A rendered command, or what says it was left out.
fn rendered(text: Result<String, Unquotable>) -> String {
    text.unwrap_or_else(|e| format!("(a command is left out: {e})"))
}

/// A line for the shell that starts the programs: shown, because gpu-doctor cannot change the
/// environment of the shell it was started from.
fn shell_step(line: Result<String, Unquotable>, why: String, undo: String) -> Step {
    Step {
        kind: StepKind::Manual { text: rendered(line) },
        why,
        changes: "this shell; put the same line where the variable is set (~/.bashrc, the job script) to keep it"
            .into(),
        undo,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use gpu_doctor_judge::testing::Machine;
    use gpu_doctor_model::{InstallFlag, Report};

    use super::*;

    const ENV: &str = "/home/u/proj/.venv";

    fn report() -> Report {
        Report::new(Machine::linux().gpu("NVIDIA GeForce RTX 4090", "8.9").torch("2.5.1+cu124").0, Vec::new())
    }

    fn plan_of(env: Option<&str>, changes: &[Change]) -> Option<Plan> {
        plan(&report(), env, "goal", changes, &Options::default(), Shell::Posix)
    }

    #[test]
    fn package_changes_run_in_the_environment_and_end_with_a_check() {
        let changes = [
            Change::Uninstall { packages: vec!["cupy-cuda13x".into()] },
            Change::Install {
                requirements: vec!["cupy-cuda12x".into()],
                flags: vec![InstallFlag::Upgrade],
                index_url: None,
            },
        ];
        let p = plan_of(Some(ENV), &changes).unwrap();
        assert_eq!(p.env.as_deref(), Some(std::path::Path::new(ENV)), "apply saves this environment's packages first");
        assert_eq!(
            p.prose(Shell::Posix),
            format!(
                "{ENV}/bin/python -m pip uninstall --yes cupy-cuda13x; {ENV}/bin/python -m pip install -U cupy-cuda12x; \
                 then check: gpu-doctor check --deep --python {ENV}/bin/python"
            )
        );
        assert!(matches!(&p.steps[2].kind, StepKind::Verify { frameworks, .. } if frameworks == &["torch"]));
    }

    #[test]
    fn shell_and_root_changes_are_shown_and_change_no_environment() {
        let changes = [
            Change::SetVar { name: "CUDA_HOME".into(), value: "/usr/local/cuda-12.4".into() },
            Change::Root {
                argv: vec!["ln".into(), "-sfn".into(), "/usr/local/cuda-12.4".into(), "/usr/local/cuda".into()],
            },
        ];
        let p = plan_of(None, &changes).unwrap();
        assert_eq!(p.env, None, "nothing for apply to back up");
        assert!(p.steps.iter().all(|s| !s.is_run_by_gpu_doctor()), "{:?}", p.steps);
        assert_eq!(
            p.prose(Shell::Posix),
            "export CUDA_HOME=/usr/local/cuda-12.4; as root: ln -sfn /usr/local/cuda-12.4 /usr/local/cuda"
        );
    }

    #[test]
    fn no_plan_for_an_environment_the_report_lacks_or_for_nothing() {
        let install = [Change::Install { requirements: vec!["x".into()], flags: vec![], index_url: None }];
        assert!(plan_of(Some("/elsewhere/.venv"), &install).is_none());
        assert!(plan_of(None, &install).is_none(), "a package change needs an environment");
        assert!(plan_of(Some(ENV), &[]).is_none());
    }
}
