//! A fix plan as text for the terminal: its goal, the findings it answers, the build chosen and
//! every candidate turned down, then each step with why, what it changes and how it is undone.

use std::fmt::Write;

use gpu_doctor_installers::{Plan, StepKind, UserAction};
use gpu_doctor_model::shell::Shell;

use super::text::clean;

/// How many turned-down builds the text names.
const REJECTED_SHOWN: usize = 12;

/// What kind of step, as a person reads it.
pub fn step_label(kind: &StepKind) -> &'static str {
    match kind {
        StepKind::User { action: UserAction::Run { .. } } => "run",
        StepKind::User { action: UserAction::Write { .. } } => "write",
        StepKind::Root { .. } => "root (you run it)",
        StepKind::Manual { .. } => "by hand",
        StepKind::Verify { .. } => "verify",
    }
}

/// One line per plan: id, goal, and how many steps gpu-doctor would run and how many are left to you.
pub fn list(plans: &[Plan]) -> String {
    let mut out = String::new();
    if plans.is_empty() {
        out.push_str("No finding here has a fix plan.\n");
        return out;
    }
    let width = plans.iter().map(|p| p.id.len()).max().unwrap_or(0);
    for p in plans {
        let ours = p.steps.iter().filter(|s| s.is_run_by_gpu_doctor()).count();
        let yours = p.steps.len() - ours;
        let _ = writeln!(
            out,
            "{:width$}  {}  ({} step(s) gpu-doctor runs, {} left to you)",
            p.id,
            clean(&p.goal),
            ours,
            yours
        );
    }
    out.push_str("\nShow one with `gpu-doctor fix ID`; carry it out with `gpu-doctor fix ID --apply`.\n");
    out
}

/// The whole plan.
pub fn plan(p: &Plan, shell: Shell) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Plan {}: {}", p.id, clean(&p.goal));
    if !p.answers.is_empty() {
        let _ = writeln!(out, "answers: {}", p.answers.join(", "));
    }
    if let Some(env) = &p.env {
        let _ = writeln!(out, "environment: {}", clean(&env.display().to_string()));
    }
    if let Some(choice) = &p.choice {
        match &choice.chosen {
            Some(c) => {
                let _ = writeln!(out, "\nchosen: {}: {}", clean(&c.label), clean(&c.why));
                if !c.beyond_kb.is_empty() {
                    let _ = writeln!(out, "  note: {}", clean(&c.beyond_kb));
                }
            }
            None => {
                let _ = writeln!(out, "\nno build of {} fits this machine", clean(&choice.framework));
            }
        }
        // The builds that do not run here, each with its reason; the ones that would run but lost
        // to the chosen one (an older line, another CUDA) only counted: `--json` lists them all.
        let (fit, not_fit): (Vec<_>, Vec<_>) = choice.rejected.iter().partition(|r| r.fits);
        for r in not_fit.iter().take(REJECTED_SHOWN) {
            let _ = writeln!(out, "  not {}: {}", clean(&r.label), clean(&r.reason));
        }
        if not_fit.len() > REJECTED_SHOWN {
            let _ = writeln!(
                out,
                "  … and {} more that do not run here (--json lists them)",
                not_fit.len() - REJECTED_SHOWN
            );
        }
        if !fit.is_empty() {
            let _ = writeln!(
                out,
                "  {} other build(s) would run here too; the chosen one is the smallest change",
                fit.len()
            );
        }
    }
    out.push('\n');
    for (i, step) in p.steps.iter().enumerate() {
        let line = step.render(shell).unwrap_or_else(|e| format!("(cannot be shown safely: {e})"));
        let _ = writeln!(out, "{}. [{}] {}", i + 1, step_label(&step.kind), clean(&line));
        if !step.why.is_empty() {
            let _ = writeln!(out, "   why: {}", clean(&step.why));
        }
        if !step.changes.is_empty() {
            let _ = writeln!(out, "   changes: {}", clean(&step.changes));
        }
        if !step.undo.is_empty() {
            let _ = writeln!(out, "   undo: {}", clean(&step.undo));
        }
    }
    out
}
