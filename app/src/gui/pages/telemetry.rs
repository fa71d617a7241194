//! Telemetry: live plots per GPU over a rolling window, with pause.

use egui::Ui;

use crate::gui::Shown;
use crate::gui::telemetry::TelemetryFeed;

/// The Telemetry page's state.
#[derive(Debug, Default)]
pub struct TelemetryPage {}

impl TelemetryPage {
    /// Draws the page.
    pub fn telemetry_ui(&mut self, ui: &mut Ui, shown: &Shown<'_>, feed: &TelemetryFeed) {
        let _ = (shown, feed);
        ui.label("Telemetry: not built yet.");
    }
}
