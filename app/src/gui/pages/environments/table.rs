//! The parts of an environment's card: the line of GPUs judged against, the frameworks table and
//! the findings about the environment.

use egui::{RichText, Ui};
use gpu_doctor_judge::diagnose::GpuView;
use gpu_doctor_kb::Kb;
use gpu_doctor_model::PythonEnv;
use gpu_doctor_model::{Finding, Probed, Report, Severity, Snapshot};

use super::cells;
use crate::gui::theme::{Tone, badge_ui, toned};
use crate::gui::{Action, Page};
use crate::render::findings::severity_word;

/// Which GPUs the builds are judged against, and what the marks mean.
pub fn gpus_line_ui(ui: &mut Ui, snap: &Snapshot, gpus: &[GpuView]) {
    ui.horizontal_wrapped(|ui| {
        if gpus.is_empty() {
            let why = match &snap.gpus {
                Probed::Found { .. } => "the driver lists none".to_owned(),
                other => other.why_not().unwrap_or("unknown").to_owned(),
            };
            ui.label(toned(ui, Tone::Muted, format!("No NVIDIA GPU to judge the builds against ({why}).")));
            return;
        }
        ui.label("Judged against");
        for g in gpus {
            let cc = g.cc.map_or_else(|| "capability unknown".to_owned(), |c| c.to_string());
            let by_name = if g.cc_by_name { ", by its name" } else { "" };
            ui.label(RichText::new(format!("GPU {} {} ({cc}{by_name})", g.index, g.name)).strong());
        }
        ui.label(toned(
            ui,
            Tone::Muted,
            "· ✔ machine code · ⚠ PTX only, compiled at first use · ✖ cannot run · ? not known",
        ));
    });
}

/// The companion packages of an environment (numpy, torchvision, triton, …) on one line, the one
/// the reports show; `None` when it has none.
pub fn companions_line(env: &PythonEnv) -> Option<String> {
    let list: Vec<String> = env.companions.iter().map(|p| format!("{} {}", p.name, p.version)).collect();
    (!list.is_empty()).then(|| format!("Companions: {}", list.join(" · ")))
}

/// The frameworks of one environment: a row each, a column per GPU; a framework a finding names
/// shows that finding's severity.
pub fn frameworks_grid_ui(
    ui: &mut Ui,
    kb: &Kb,
    snap: &Snapshot,
    env: &PythonEnv,
    gpus: &[GpuView],
    findings: &[&Finding],
) {
    let cudnn_copies = snap.cudnn.value().map_or(&[][..], Vec::as_slice);
    egui::Grid::new(("frameworks", env.name.as_str())).striped(true).spacing([14.0, 4.0]).show(ui, |ui| {
        for h in ["Framework", "Version", "Build", "cuDNN", "Compiled for"] {
            ui.label(toned(ui, Tone::Muted, h).strong());
        }
        for g in gpus {
            let cc = g.cc.map_or_else(|| "?".to_owned(), |c| c.to_string());
            ui.label(toned(ui, Tone::Muted, format!("GPU {} ({cc})", g.index)).strong()).on_hover_text(&g.name);
        }
        ui.end_row();
        for fw in &env.frameworks {
            let about = format!("{} {}", fw.name, fw.version);
            let own: Vec<&&Finding> = findings.iter().filter(|f| f.summary.contains(&about)).collect();
            let mut hover = format!("{}\n{}", fw.source, fw.site_packages);
            let name = match own.iter().map(|f| f.severity).min() {
                Some(worst) => {
                    for f in &own {
                        hover.push_str(&format!("\n{}: {}", severity_word(f.severity), f.summary));
                    }
                    toned(ui, Tone::of(worst), format!("{} ({})", fw.name, severity_word(worst))).strong()
                }
                None => RichText::new(&fw.name).strong(),
            };
            ui.label(name).on_hover_text(hover);
            ui.label(&fw.version);
            cell_ui(ui, &cells::build_cell(fw));
            cell_ui(ui, &cells::cudnn_cell(kb, env, fw, cudnn_copies));
            cell_ui(ui, &cells::arch_cell(kb, env, fw));
            for g in gpus {
                cell_ui(ui, &cells::gpu_cell(kb, env, fw, g));
            }
            ui.end_row();
        }
    });
}

/// One cell: its text in its tone (plain for information), its meaning on hover.
fn cell_ui(ui: &mut Ui, cell: &cells::Cell) {
    let text = if cell.tone == Tone::Info { RichText::new(&cell.text) } else { toned(ui, cell.tone, &cell.text) };
    ui.label(text).on_hover_text(&cell.hover);
}

/// The report's findings about this environment: errors and warnings that name it in their summary
/// or evidence, notes that name it in their summary (a note that merely cites it is about more).
pub fn env_findings<'r>(report: &'r Report, env: &PythonEnv) -> Vec<&'r Finding> {
    let in_summary = |f: &Finding| cells::mentions(&f.summary, &env.name);
    let in_evidence = |f: &Finding| f.evidence.iter().any(|e| cells::mentions(e, &env.name));
    report.findings.iter().filter(|f| in_summary(f) || (f.severity != Severity::Info && in_evidence(f))).collect()
}

/// The findings about an environment, each a link to the Checks page.
pub fn findings_ui(ui: &mut Ui, found: &[&Finding], actions: &mut Vec<Action>) {
    if found.is_empty() {
        return;
    }
    ui.add_space(4.0);
    for f in found.iter().copied() {
        ui.horizontal(|ui| {
            badge_ui(ui, Tone::of(f.severity), severity_word(f.severity));
            if ui.link(&f.summary).on_hover_text("See it on the Checks page").clicked() {
                actions.push(Action::Goto(Page::Checks));
            }
        });
    }
}
