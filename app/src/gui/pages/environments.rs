//! Environments: Python environments × frameworks against the GPUs.

use egui::Ui;

use crate::gui::{Action, Shown};

/// The Environments page's state.
#[derive(Debug, Default)]
pub struct EnvPage {}

impl EnvPage {
    /// Starts loading the remembered interpreters.
    pub fn start(&mut self, ctx: &egui::Context) {
        let _ = ctx;
    }

    /// Whether a job of this page is under way.
    pub fn busy(&self) -> bool {
        false
    }

    /// Polls the page's jobs.
    pub fn logic(&mut self, ctx: &egui::Context, shown: &Shown<'_>, actions: &mut Vec<Action>) {
        let _ = (ctx, shown, actions);
    }

    /// Draws the page.
    pub fn environments_ui(&mut self, ui: &mut Ui, shown: &Shown<'_>, actions: &mut Vec<Action>) {
        let _ = (shown, actions);
        ui.label("Environments: not built yet.");
    }
}
