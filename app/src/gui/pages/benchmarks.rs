//! Benchmarks: choose tests, run them with progress and cancel, plot and judge the results.

use egui::Ui;
use gpu_doctor_kernels::run::BenchRun;

use crate::gui::Shown;

/// The Benchmarks page's state.
#[derive(Debug, Default)]
pub struct BenchPage {}

impl BenchPage {
    /// Starts loading past runs.
    pub fn start(&mut self, ctx: &egui::Context) {
        let _ = ctx;
    }

    /// Whether a run or a load is under way.
    pub fn busy(&self) -> bool {
        false
    }

    /// Polls the running benchmark.
    pub fn logic(&mut self, ctx: &egui::Context, shown: &Shown<'_>) {
        let _ = (ctx, shown);
    }

    /// The newest finished run, for the report.
    pub fn latest_run(&self) -> Option<&BenchRun> {
        None
    }

    /// Draws the page.
    pub fn benchmarks_ui(&mut self, ui: &mut Ui, shown: &Shown<'_>) {
        let _ = shown;
        ui.label("Benchmarks: not built yet.");
    }
}
