//! The pages. Each draws from `Shown` and asks for app-level changes through `Action`s; a page's own
//! background jobs live in its state and are polled in `logic`.

mod benchmarks;
mod certify;
mod checks;
mod environments;
mod fleet;
mod overview;
mod report;
mod setup;
mod telemetry;

use std::sync::Arc;

use egui::Ui;
use gpu_doctor_probes::host::telemetry::TelemetrySource;

use super::telemetry::TelemetryFeed;
use super::{Action, Shown};

/// A page of the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Page {
    /// The verdict, the machine and a card per GPU.
    Overview,
    /// Findings by severity, with evidence and fixes.
    Checks,
    /// Python environments and their frameworks against the GPUs.
    Environments,
    /// Plans: a finding's fix or a new environment, applied and checked again.
    Setup,
    /// One run from the checks to a verdict, kept as a certificate.
    Certify,
    /// Run benchmarks and plot them.
    Benchmarks,
    /// Live GPU telemetry.
    Telemetry,
    /// Preview, export and copy the report; read another machine.
    Report,
    /// Compare a folder of reports from many machines.
    Fleet,
}

impl Page {
    /// Every page, in tab order.
    pub const ALL: [Page; 9] = [
        Page::Overview,
        Page::Checks,
        Page::Environments,
        Page::Setup,
        Page::Certify,
        Page::Benchmarks,
        Page::Telemetry,
        Page::Report,
        Page::Fleet,
    ];

    /// The tab's title.
    pub fn title(self) -> &'static str {
        match self {
            Page::Overview => "Overview",
            Page::Checks => "Checks",
            Page::Environments => "Environments",
            Page::Setup => "Setup",
            Page::Certify => "Certify",
            Page::Benchmarks => "Benchmarks",
            Page::Telemetry => "Telemetry",
            Page::Report => "Report",
            Page::Fleet => "Fleet",
        }
    }

    /// Whether the window scrolls the page; the Fleet page fills the window and scrolls its table
    /// itself, drawing only the rows in view.
    pub fn scrolls(self) -> bool {
        self != Page::Fleet
    }
}

/// Every page's own state.
#[derive(Debug, Default)]
pub struct Pages {
    /// Checks: expanded findings, filters.
    pub checks: checks::ChecksPage,
    /// Environments: the interpreter list, deep probes.
    pub envs: environments::EnvPage,
    /// Setup: the plans on screen, the apply run, the re-check.
    pub setup: setup::SetupPage,
    /// Certify: the level, the run, the certificate.
    pub certify: certify::CertifyPage,
    /// Benchmarks: runs, past runs, plots.
    pub bench: benchmarks::BenchPage,
    /// Telemetry: pause, window.
    pub telemetry: telemetry::TelemetryPage,
    /// Report: format, redaction, export, paste.
    pub report: report::ReportPage,
    /// Fleet: a folder of reports compared.
    pub fleet: fleet::FleetPage,
}

impl Pages {
    /// Fresh page state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts the pages' startup jobs (loading settings and past runs, off the UI thread);
    /// `storage` replaces the user's config and data folders (tests pass a temporary folder).
    pub fn start(&mut self, ctx: &egui::Context, storage: Option<&std::path::Path>) {
        match storage {
            Some(dir) => {
                self.envs.start_with_dir(ctx, Ok(dir.join("config")));
                self.bench.set_runs_dir(ctx, Some(dir.join("runs")));
                self.setup.start(ctx, Some(dir.join("installs")));
                self.certify.save_dir = Some(dir.join("certificates"));
            }
            None => {
                self.envs.start(ctx);
                self.bench.start(ctx);
                self.setup.start(ctx, super::storage::data_dir().map(|d| d.join("installs")));
                self.certify.save_dir = super::storage::data_dir().map(|d| d.join("certificates"));
            }
        }
    }

    /// Whether a page job is under way.
    pub fn busy(&self) -> bool {
        self.envs.busy()
            || self.bench.busy()
            || self.report.busy()
            || self.fleet.busy()
            || self.setup.busy()
            || self.certify.busy()
    }

    /// Polls the pages' jobs; a benchmark run samples telemetry from `telemetry`.
    pub fn logic(
        &mut self,
        ctx: &egui::Context,
        shown: &Shown<'_>,
        telemetry: &Arc<dyn TelemetrySource>,
        actions: &mut Vec<Action>,
    ) {
        self.envs.logic(ctx, shown, actions);
        self.setup.logic(ctx, shown, actions);
        self.bench.logic(ctx, shown, telemetry);
        self.report.logic(ctx, shown, self.bench.latest_run(), actions);
        self.fleet.logic(ctx);
        self.certify.logic();
    }

    /// Draws one page.
    pub fn page_ui(
        &mut self,
        page: Page,
        ui: &mut Ui,
        shown: &Shown<'_>,
        feed: &mut TelemetryFeed,
        actions: &mut Vec<Action>,
    ) {
        match page {
            Page::Overview => overview::overview_ui(ui, shown, feed, actions),
            Page::Checks => self.checks.checks_ui(ui, shown, actions),
            Page::Environments => self.envs.environments_ui(ui, shown, actions),
            Page::Setup => self.setup.setup_ui(ui, shown),
            Page::Certify => self.certify.certify_ui(ui, shown, actions),
            Page::Benchmarks => self.bench.benchmarks_ui(ui, shown),
            Page::Telemetry => self.telemetry.telemetry_ui(ui, shown, feed),
            Page::Report => self.report.report_ui(ui, shown, self.bench.latest_run(), actions),
            Page::Fleet => self.fleet.fleet_ui(ui, actions),
        }
    }
}
