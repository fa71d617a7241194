//! What a new environment would get on this machine, shown before any plan is made: per framework,
//! the build the chooser picks (or why none fits) and its one-sentence why. A machine without a GPU
//! sees what would be installed and why, not a bare form.

use egui::{RichText, Ui};
use gpu_doctor_installers::choose::{self, Framework, Want};
use gpu_doctor_installers::planners::framework;
use gpu_doctor_model::Report;

use crate::gui::theme::{Tone, toned};

/// One framework's line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// `torch`.
    pub framework: &'static str,
    /// `torch 2.15.0+cu132`, or `none fits`.
    pub build: String,
    /// Why that one, or why none (the first reasons).
    pub why: String,
    /// A build was found.
    pub chosen: bool,
}

/// The choices of a new environment for the machine of `report` (its Python not known yet).
pub fn lines(report: &Report) -> Vec<Line> {
    let Ok(kb) = gpu_doctor_kb::Kb::get() else { return Vec::new() };
    let machine = framework::machine(&report.snapshot, kb, None);
    Framework::ALL
        .iter()
        .map(|fw| {
            let want = Want { framework: *fw, keep_line: None, wheelhouse: None };
            let choice = choose::choose(kb, &machine, &want);
            match choice.chosen {
                Some(c) => Line { framework: fw.name(), build: c.label, why: c.why, chosen: true },
                None => {
                    let reasons: Vec<String> =
                        choice.rejected.iter().take(3).map(|r| format!("{}: {}", r.label, r.reason)).collect();
                    let more = choice.rejected.len().saturating_sub(3);
                    let tail = if more > 0 { format!(" (and {more} more)") } else { String::new() };
                    Line {
                        framework: fw.name(),
                        build: "none fits".into(),
                        why: reasons.join("; ") + &tail,
                        chosen: false,
                    }
                }
            }
        })
        .collect()
}

/// Draws the lines under a heading that says what they are.
pub fn preview_ui(ui: &mut Ui, lines: &[Line]) {
    if lines.is_empty() {
        return;
    }
    ui.add_space(6.0);
    ui.label(RichText::new("What a new environment would get here").strong());
    ui.label(toned(
        ui,
        Tone::Muted,
        "Chosen from the knowledge base for this machine's GPUs and driver; Make the plan shows every step.",
    ));
    egui::Grid::new("setup-preview").num_columns(3).spacing([12.0, 6.0]).striped(true).show(ui, |ui| {
        for line in lines {
            let tone = if line.chosen { Tone::Good } else { Tone::Warn };
            ui.label(RichText::new(line.framework).strong());
            ui.label(toned(ui, tone, &line.build));
            ui.add(egui::Label::new(toned(ui, Tone::Muted, &line.why)).wrap());
            ui.end_row();
        }
    });
}
