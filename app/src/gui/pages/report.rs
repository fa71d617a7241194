//! Report: preview, export (JSON, Markdown, HTML), copy, and read another machine.

use egui::Ui;
use gpu_doctor_kernels::run::BenchRun;

use crate::gui::{Action, Shown};

/// The Report page's state.
#[derive(Debug, Default)]
pub struct ReportPage {
    export_requested: bool,
}

impl ReportPage {
    /// Ctrl+S: export with the current settings.
    pub fn request_export(&mut self) {
        self.export_requested = true;
    }

    /// Whether an export is under way.
    pub fn busy(&self) -> bool {
        false
    }

    /// Polls the export.
    pub fn logic(&mut self, ctx: &egui::Context, shown: &Shown<'_>, bench: Option<&BenchRun>) {
        let _ = (ctx, shown, bench);
    }

    /// Draws the page.
    pub fn report_ui(&mut self, ui: &mut Ui, shown: &Shown<'_>, bench: Option<&BenchRun>, actions: &mut Vec<Action>) {
        let _ = (shown, bench, actions);
        ui.label("Report: not built yet.");
    }
}
