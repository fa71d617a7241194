//! Checks: the findings grouped by severity, each expandable to its evidence and fix.

use std::collections::BTreeSet;

use egui::{RichText, Ui};
use gpu_doctor_model::{Category, Finding, Severity};

use crate::gui::theme::{Tone, badge_ui, toned};
use crate::gui::{Action, Shown};
use crate::render::facts::label;
use crate::render::findings::{severity_word, tally};

/// The Checks page's state.
#[derive(Debug, Default)]
pub struct ChecksPage {
    /// Ids of the findings shown open.
    pub expanded: BTreeSet<String>,
    /// Only this category; `None` for all.
    pub category: Option<Category>,
    /// The last fix copied to the clipboard (its finding's id), for the "copied" mark.
    pub copied: Option<String>,
    /// The report the errors were last opened for (when it was taken, and whether it is another
    /// machine's): errors open by themselves once per report, so their fix is in view.
    opened_for: Option<(u64, bool)>,
}

const SEVERITIES: [(Severity, &str); 3] =
    [(Severity::Error, "Errors"), (Severity::Warning, "Warnings"), (Severity::Info, "Notes")];

impl ChecksPage {
    /// Draws the page.
    pub fn checks_ui(&mut self, ui: &mut Ui, shown: &Shown<'_>, actions: &mut Vec<Action>) {
        let Some(report) = shown.report else {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("The checks run once the probes are done…");
            });
            return;
        };
        let key = (report.snapshot.taken_at_unix_secs, shown.other);
        if self.opened_for != Some(key) {
            self.opened_for = Some(key);
            let errors = report.findings.iter().filter(|f| f.severity == Severity::Error);
            self.expanded.extend(errors.map(|f| f.id.clone()));
        }
        ui.horizontal(|ui| {
            ui.heading(format!("Checks: {}", tally(&report.findings)));
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                if !shown.other && ui.button("Run the checks again").clicked() {
                    actions.push(Action::Rerun);
                }
                self.filter_ui(ui, &report.findings);
            });
        });
        if report.findings.is_empty() {
            ui.label(toned(ui, Tone::Good, "Nothing to fix: every rule passed."));
        }
        if !shown.pending.is_empty() {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Checking again; these are the last results.");
            });
        }
        for (severity, title) in SEVERITIES {
            let group: Vec<&Finding> = report
                .findings
                .iter()
                .filter(|f| f.severity == severity && self.category.is_none_or(|c| c == f.category))
                .collect();
            if group.is_empty() {
                continue;
            }
            ui.add_space(8.0);
            ui.label(toned(ui, Tone::of(severity), format!("{title} ({})", group.len())).strong().size(16.0));
            for f in group {
                self.finding_ui(ui, f, actions);
            }
        }
    }

    fn filter_ui(&mut self, ui: &mut Ui, findings: &[Finding]) {
        let present: BTreeSet<String> = findings.iter().map(|f| label(&f.category)).collect();
        let current = self.category.map_or_else(|| "all categories".to_owned(), |c| label(&c));
        egui::ComboBox::new("category", "Category").selected_text(current).show_ui(ui, |ui| {
            ui.selectable_value(&mut self.category, None, "all categories");
            for c in ALL_CATEGORIES {
                let name = label(&c);
                if present.contains(&name) {
                    ui.selectable_value(&mut self.category, Some(c), name);
                }
            }
        });
    }

    fn finding_ui(&mut self, ui: &mut Ui, f: &Finding, actions: &mut Vec<Action>) {
        let open = self.expanded.contains(&f.id);
        let tone = Tone::of(f.severity);
        egui::Frame::new()
            .stroke(egui::Stroke::new(1.0, ui.visuals().widgets.noninteractive.bg_stroke.color))
            .corner_radius(4.0)
            .inner_margin(8)
            .show(ui, |ui| {
                ui.set_width(ui.available_width());
                ui.horizontal(|ui| {
                    badge_ui(ui, tone, severity_word(f.severity));
                    let arrow = if open { "−" } else { "+" };
                    let header = ui
                        .add(egui::Button::new(RichText::new(format!("{arrow} {}", f.summary)).strong()).frame(false));
                    if header.on_hover_text(format!("{} · {}", f.id, label(&f.category))).clicked() {
                        if open {
                            self.expanded.remove(&f.id);
                        } else {
                            self.expanded.insert(f.id.clone());
                        }
                    }
                    fix_button_ui(ui, f, actions);
                });
                if open {
                    ui.add_space(4.0);
                    ui.label(&f.detail);
                    if !f.evidence.is_empty() {
                        ui.label(RichText::new("Evidence").strong());
                        for e in &f.evidence {
                            ui.label(format!("• {e}"));
                        }
                    }
                    if let Some(fix) = &f.fix {
                        ui.horizontal(|ui| {
                            ui.label(RichText::new("Fix").strong());
                            let copied = self.copied.as_deref() == Some(f.id.as_str());
                            if ui
                                .small_button(if copied { "Copied" } else { "Copy" })
                                .on_hover_text("Copy the fix")
                                .clicked()
                            {
                                ui.ctx().copy_text(fix.clone());
                                self.copied = Some(f.id.clone());
                            }
                        });
                        egui::Frame::new().fill(ui.visuals().extreme_bg_color).inner_margin(6).show(ui, |ui| {
                            ui.set_width(ui.available_width());
                            ui.add(egui::Label::new(RichText::new(fix).monospace()).wrap());
                        });
                    }
                    ui.label(toned(ui, Tone::Muted, format!("{} · {}", f.id, label(&f.category))).small());
                }
            });
    }
}

/// "Fix…" on a finding that has a plan: opens the plan on the Setup page.
pub fn fix_button_ui(ui: &mut Ui, f: &Finding, actions: &mut Vec<Action>) {
    let Some(plan) = f.plan.as_ref().filter(|p| !p.id.is_empty()) else { return };
    if ui.button("Fix…").on_hover_text(format!("Open plan {} on the Setup page", plan.id)).clicked() {
        actions.push(Action::OpenPlan(plan.id.clone()));
    }
}

/// Every category, in the order the filter lists them.
const ALL_CATEGORIES: [Category; 12] = [
    Category::DriverTooOldForRuntime,
    Category::ArchNotInBuild,
    Category::CpuOnlyBuild,
    Category::CudnnMissingOrMismatch,
    Category::ToolkitVsFrameworkMismatchHarmless,
    Category::MultipleToolkitsConflict,
    Category::EnvVarMisconfig,
    Category::NoDriverOrGpuNotVisible,
    Category::WslSpecific,
    Category::PcieLinkDegraded,
    Category::Benchmark,
    Category::Other,
];
