//! A plan as the page shows it: its goal, the chooser's why and why not, and each step with its
//! kind, why, what it changes and how it is undone; root steps with Copy; the step's state while
//! and after it is applied.

use egui::{RichText, Ui};
use gpu_doctor_installers::apply::StepStatus;
use gpu_doctor_installers::choose::Choice;
use gpu_doctor_installers::{Plan, Step, StepKind, UserAction};
use gpu_doctor_model::shell::Shell;

use super::run::StepView;
use crate::gui::theme::{Tone, badge_ui, toned};

/// The kind of a step as a badge: its tone and label.
pub fn kind_badge(step: &Step) -> (Tone, &'static str) {
    match &step.kind {
        StepKind::User { action: UserAction::Run { .. } } => (Tone::Info, "RUN"),
        StepKind::User { action: UserAction::Write { .. } } => (Tone::Info, "WRITE"),
        StepKind::Root { .. } => (Tone::Warn, "ROOT: YOU RUN IT"),
        StepKind::Manual { .. } => (Tone::Warn, "BY HAND"),
        StepKind::Verify { .. } => (Tone::Good, "VERIFY"),
    }
}

/// How a step's state is worded.
pub fn status_text(status: &StepStatus) -> (Tone, String) {
    match status {
        StepStatus::Done => (Tone::Good, "✔ Done".into()),
        StepStatus::Failed { reason } => (Tone::Bad, format!("✖ Failed: {reason}")),
        StepStatus::LeftToYou => (Tone::Warn, "Left to you".into()),
        StepStatus::NotRun => (Tone::Muted, "Not run".into()),
        StepStatus::Cancelled => (Tone::Warn, "Cancelled".into()),
        StepStatus::Unproven { summary } => (Tone::Warn, format!("Not proven: {summary}")),
    }
}

/// What a plan view may change on the page.
pub struct ViewState<'a> {
    /// The last command copied (for the "Copied" mark).
    pub copied: &'a mut Option<String>,
    /// The steps' states while or after applying; `None` before.
    pub progress: Option<&'a [StepView]>,
}

/// Draws one plan.
pub fn plan_ui(ui: &mut Ui, plan: &Plan, shell: Shell, state: &mut ViewState<'_>) {
    egui::Frame::group(ui.style()).inner_margin(10).corner_radius(6.0).show(ui, |ui| {
        ui.set_width(ui.available_width());
        ui.label(RichText::new(&plan.goal).strong().size(16.0));
        let mut about = vec![format!("plan {}", plan.id)];
        if !plan.answers.is_empty() {
            about.push(format!("answers {}", plan.answers.join(", ")));
        }
        if let Some(env) = &plan.env {
            about.push(format!("environment {}", env.display()));
        }
        ui.label(toned(ui, Tone::Muted, about.join(" · ")).small());
        if let Some(choice) = &plan.choice {
            choice_ui(ui, choice);
        }
        for (i, step) in plan.steps.iter().enumerate() {
            let view = state.progress.and_then(|p| p.get(i));
            step_ui(ui, i, step, shell, view, state.copied);
        }
    });
}

/// The chooser's answer: the build chosen and why, and every candidate turned down with its reason.
fn choice_ui(ui: &mut Ui, choice: &Choice) {
    ui.add_space(4.0);
    match &choice.chosen {
        Some(c) => {
            ui.horizontal_wrapped(|ui| {
                ui.label(toned(ui, Tone::Good, format!("✔ {} {}", choice.framework, c.label)).strong());
                ui.label(&c.why);
            });
            if !c.beyond_kb.is_empty() {
                ui.label(toned(ui, Tone::Warn, format!("⚠ {}", c.beyond_kb)));
            }
        }
        None => {
            ui.label(toned(ui, Tone::Bad, format!("✖ No build of {} fits this machine.", choice.framework)));
        }
    }
    let (fit, not_fit): (Vec<_>, Vec<_>) = choice.rejected.iter().partition(|r| r.fits);
    if !not_fit.is_empty() {
        ui.label(RichText::new("Why not the others").strong());
        for r in &not_fit {
            ui.label(format!("• {}: {}", r.label, r.reason));
        }
    }
    if !fit.is_empty() {
        let title = format!("{} other build(s) would run here too; the chosen one is the smallest change", fit.len());
        egui::CollapsingHeader::new(title)
            .id_salt(("fits", &choice.framework, choice.chosen.as_ref().map(|c| &c.label)))
            .default_open(false)
            .show(ui, |ui| {
                for r in &fit {
                    ui.label(format!("• {}: {}", r.label, r.reason));
                }
            });
    }
}

fn step_ui(ui: &mut Ui, i: usize, step: &Step, shell: Shell, view: Option<&StepView>, copied: &mut Option<String>) {
    ui.separator();
    let line = step.render(shell).unwrap_or_else(|e| format!("(cannot be shown: {e})"));
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new(format!("{}.", i + 1)).strong());
        let (tone, kind) = kind_badge(step);
        badge_ui(ui, tone, kind);
        if let Some(v) = view {
            step_state_ui(ui, v);
        }
    });
    ui.horizontal_wrapped(|ui| {
        ui.add(egui::Label::new(RichText::new(&line).monospace()).wrap());
        if matches!(step.kind, StepKind::Root { .. }) {
            let is_copied = copied.as_deref() == Some(line.as_str());
            if ui.small_button(if is_copied { "Copied" } else { "Copy" }).on_hover_text("Copy the command").clicked() {
                ui.ctx().copy_text(line.clone());
                *copied = Some(line.clone());
            }
        }
    });
    let muted = |ui: &mut Ui, k: &str, v: &str| {
        if !v.is_empty() {
            ui.horizontal_wrapped(|ui| {
                ui.label(toned(ui, Tone::Muted, k));
                ui.label(v);
            });
        }
    };
    muted(ui, "Why", &step.why);
    muted(ui, "Changes", &step.changes);
    muted(ui, "Undo", &step.undo);
}

fn step_state_ui(ui: &mut Ui, v: &StepView) {
    if v.running {
        ui.spinner();
    }
    match (&v.status, &v.progress) {
        (Some(status), _) => {
            let (tone, text) = status_text(status);
            ui.label(toned(ui, tone, text));
        }
        (None, Some((fraction, what))) => {
            ui.add(egui::ProgressBar::new(*fraction).desired_width(220.0).show_percentage());
            ui.label(what);
        }
        (None, None) if v.running => {
            ui.label("running…");
        }
        (None, None) => {}
    }
}
