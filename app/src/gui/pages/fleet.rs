//! Fleet: a folder of reports from many machines (what `gpu-doctor fleet` collects, or any folder
//! of `gpu-doctor report --format json` files), compared. The fleet findings on top, then the node
//! table (one row per node, the cells where a node differs from the majority and the slow figures
//! coloured and marked, sortable, filterable, drawn only for the rows in view), then a per-node bar
//! chart of one benchmark figure with the fleet median. A row opens as another machine in every page.
//!
//! The folder is read and compared on a `Task`, through the page's one seam, [`Loader`]
//! ([`compare_folder`] unless a test swaps it), never on the UI thread.

mod chart;
mod table;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use egui::{RichText, Ui};
use gpu_doctor_judge::fleet::compare::ReadProgress;
use gpu_doctor_model::fleet::{Comparison, NodeOutcome};

use crate::gui::Action;
use crate::gui::task::Task;
use crate::gui::theme::{Tone, badge_ui, toned};
use crate::render::findings::severity_word;

pub use table::View;

/// How far a load has got: reports read, of how many. Both stay 0 for a loader that does not count.
#[derive(Debug, Default)]
pub struct Progress {
    done: AtomicUsize,
    total: AtomicUsize,
    /// Asked to repaint at each step, so the count on screen moves (egui folds repeated requests).
    repaint: Option<egui::Context>,
}

impl Progress {
    /// A count that repaints `ctx` as it moves.
    fn repainting(ctx: &egui::Context) -> Self {
        Self { repaint: Some(ctx.clone()), ..Self::default() }
    }

    /// Read so far, and in all.
    pub fn get(&self) -> (usize, usize) {
        (self.done.load(Ordering::Relaxed), self.total.load(Ordering::Relaxed))
    }

    fn ask_repaint(&self) {
        if let Some(ctx) = &self.repaint {
            ctx.request_repaint();
        }
    }
}

/// Reads a folder of reports into a comparison, counting what it read into the `Progress`; runs on
/// a worker thread. The page's one way to a `Comparison` (tests give their own).
pub type Loader = fn(&Path, &Progress) -> Result<Comparison, String>;

/// The loader the window uses.
///
/// The window's loader: `compare`'s own reading (the manifest, else every `*.json`; parsed on a few
/// threads, each report counted into `progress`) and comparison.
pub fn compare_folder(dir: &Path, progress: &Progress) -> Result<Comparison, String> {
    gpu_doctor_judge::fleet::compare::read_folder_counted(dir, progress, &crate::ops::read_report_file)
        .map(gpu_doctor_judge::fleet::compare::compare)
}

impl ReadProgress for Progress {
    /// The folder holds `files` reports to read.
    fn total(&self, files: usize) {
        self.total.store(files, Ordering::Relaxed);
        self.ask_repaint();
    }

    /// One more report read.
    fn parsed(&self) {
        self.done.fetch_add(1, Ordering::Relaxed);
        self.ask_repaint();
    }
}

/// A compared folder.
#[derive(Debug)]
pub struct Loaded {
    /// The folder; a node's report file is relative to it.
    pub dir: PathBuf,
    /// What the loader made of it.
    pub comparison: Comparison,
}

/// What the user does with a loaded fleet: filter, sort, selection, the figure charted.
#[derive(Debug, Default)]
pub struct Browse {
    /// Filter, toggle and sort of the node table.
    pub view: View,
    /// The selected node, by host name (stable across sorting and filtering).
    pub selected: Option<String>,
    /// The benchmark figure the chart shows, an index into `Comparison::metrics`.
    pub metric: usize,
    /// Scroll the table to this node on the next frame.
    scroll_to: Option<String>,
    /// The rows to draw, as indices into `Comparison::nodes`, in table order.
    rows: Vec<usize>,
    /// The view `rows` were chosen for; `None` until they are (a new fleet resets it).
    rows_for: Option<View>,
}

/// The Fleet page's state.
#[derive(Debug)]
pub struct FleetPage {
    /// The folder typed (or picked) to open.
    pub folder: String,
    /// The comparison on screen, and the load under way.
    pub fleet: Task<Loaded>,
    /// How a folder becomes a comparison.
    pub loader: Loader,
    /// Filter, sort, selection.
    pub browse: Browse,
    /// The load under way counts here.
    progress: Arc<Progress>,
    /// The native folder dialog: the folder picked, or `None` when cancelled.
    dialog: Task<Option<PathBuf>>,
    /// Whether a native dialog can be shown (an XDG desktop portal needs a session bus).
    dialogs: bool,
}

impl Default for FleetPage {
    fn default() -> Self {
        Self {
            folder: String::new(),
            fleet: Task::default(),
            loader: compare_folder,
            browse: Browse::default(),
            progress: Arc::default(),
            dialog: Task::default(),
            dialogs: crate::gui::native_dialogs(),
        }
    }
}

impl FleetPage {
    /// Whether a load or the dialog is under way.
    pub fn busy(&self) -> bool {
        self.fleet.is_running() || self.dialog.is_running()
    }

    /// The hosts of the rows the table drew last frame, in table order (tests).
    #[cfg(test)]
    pub fn shown_hosts(&self) -> Vec<String> {
        let nodes = self.fleet.value().map_or(&[][..], |l| l.comparison.nodes.as_slice());
        self.browse.rows.iter().filter_map(|&i| nodes.get(i)).map(|n| n.host.clone()).collect()
    }

    /// Polls the dialog and the load.
    pub fn logic(&mut self, ctx: &egui::Context) {
        if self.dialog.poll()
            && let Some(Some(dir)) = self.dialog.value().cloned()
        {
            self.folder = dir.display().to_string();
            self.dialog.clear();
            self.open(ctx, dir);
        }
        if self.fleet.poll() && self.fleet.error().is_none() {
            // A new fleet: the old selection and figure may not exist in it; filter and sort stay,
            // except that a certified fleet opens with its failed nodes first.
            let mut view = std::mem::take(&mut self.browse.view);
            let certified =
                self.fleet.value().is_some_and(|l| l.comparison.nodes.iter().any(|n| n.certificate.is_some()));
            if certified && view.sort == table::SortKey::Host {
                view.sort = table::SortKey::Certificate;
                view.descending = false;
            }
            self.browse = Browse { view, ..Browse::default() };
        }
    }

    /// Reads and compares `dir` on a worker thread.
    fn open(&mut self, ctx: &egui::Context, dir: PathBuf) {
        if self.fleet.is_running() {
            return;
        }
        let progress = Arc::new(Progress::repainting(ctx));
        self.progress = Arc::clone(&progress);
        let loader = self.loader;
        self.fleet.spawn("fleet-load", ctx, move || {
            let comparison = loader(&dir, &progress)?;
            Ok(Loaded { dir, comparison })
        });
    }

    /// Draws the page. It fills the window without the page scroll (the table scrolls itself).
    pub fn fleet_ui(&mut self, ui: &mut Ui, actions: &mut Vec<Action>) {
        ui.heading("Fleet");
        self.open_ui(ui);
        let Some(loaded) = self.fleet.value() else {
            ui.label(toned(
                ui,
                Tone::Muted,
                "Open a folder of gpu-doctor JSON reports, one per machine, to compare the machines.",
            ));
            collect_hint_ui(ui);
            return;
        };
        let browse = &mut self.browse;
        let cmp = &loaded.comparison;
        findings_ui(ui, cmp, browse);
        ui.separator();
        // Filtering and sorting a thousand rows every frame would cost more than drawing the few in view.
        if browse.rows_for.as_ref() != Some(&browse.view) {
            browse.rows = table::visible_rows(cmp, &browse.view);
            browse.rows_for = Some(browse.view.clone());
        }
        table::controls_ui(ui, cmp, browse, &loaded.dir, actions);
        let chart_height = if cmp.metrics.is_empty() { 0.0 } else { chart::HEIGHT + 40.0 };
        let table_height = (ui.available_height() - chart_height).max(120.0);
        table::table_ui(ui, cmp, browse, &loaded.dir, table_height, actions);
        if !cmp.metrics.is_empty() {
            ui.separator();
            chart::chart_ui(ui, cmp, browse);
        }
    }

    /// The folder row: the dialog, a typed path, the load's progress or error.
    fn open_ui(&mut self, ui: &mut Ui) {
        ui.horizontal(|ui| {
            let running = self.busy();
            if ui
                .add_enabled(self.dialogs && !running, egui::Button::new("Open folder…"))
                .on_disabled_hover_text("No folder dialog here (no desktop portal): type the folder")
                .clicked()
            {
                self.dialog.spawn("fleet-dialog", ui.ctx(), || {
                    Ok(rfd::FileDialog::new().set_title("Open a folder of gpu-doctor reports").pick_folder())
                });
            }
            ui.label("or the folder");
            ui.add(egui::TextEdit::singleline(&mut self.folder).hint_text("/path/to/reports").desired_width(360.0));
            let typed = !self.folder.trim().is_empty();
            if ui.add_enabled(typed && !running, egui::Button::new("Open this folder")).clicked() {
                let dir = PathBuf::from(self.folder.trim());
                self.open(ui.ctx(), dir);
            }
        });
        if self.fleet.is_running() {
            ui.horizontal(|ui| {
                ui.spinner();
                match self.progress.get() {
                    (_, 0) => ui.label("Reading the reports…"),
                    (done, total) => ui.label(format!("Read {done} of {total} reports…")),
                };
            });
        } else if let Some(e) = self.fleet.error() {
            ui.label(toned(ui, Tone::Bad, format!("Could not compare the folder: {e}")));
        }
    }
}

/// Collecting a folder is `gpu-doctor fleet`'s job (the engines need a terminal and the cluster's
/// own tools); the page says which command to run.
fn collect_hint_ui(ui: &mut Ui) {
    ui.add_space(6.0);
    ui.label("To collect one, run gpu-doctor fleet where the cluster's tools are (see gpu-doctor fleet --help):");
    ui.label(
        RichText::new("gpu-doctor fleet slurm …  |  gpu-doctor fleet ssh HOST…  |  gpu-doctor fleet k8s …").monospace(),
    );
}

/// The fleet findings, errors first, each coloured by severity; a click selects the first node it
/// names and scrolls the table to it.
fn findings_ui(ui: &mut Ui, cmp: &Comparison, browse: &mut Browse) {
    let reported = cmp.nodes.iter().filter(|n| matches!(n.outcome, NodeOutcome::Reported { .. })).count();
    ui.label(format!(
        "{} nodes, {reported} reported, {} group(s) of identical nodes",
        cmp.nodes.len(),
        cmp.groups.len()
    ));
    if cmp.findings.is_empty() {
        ui.label(toned(ui, Tone::Good, "The nodes agree: no fleet findings."));
        return;
    }
    egui::ScrollArea::vertical().id_salt("fleet-findings").max_height(110.0).show(ui, |ui| {
        for f in &cmp.findings {
            ui.horizontal(|ui| {
                badge_ui(ui, Tone::of(f.severity), severity_word(f.severity));
                let text = toned(ui, Tone::of(f.severity), f.summary.as_str());
                let first = f.hosts.first();
                let clicked = ui
                    .add(egui::Label::new(text).truncate().sense(egui::Sense::click()))
                    .on_hover_text(f.hosts.join(", "))
                    .clicked();
                if clicked && let Some(host) = first {
                    browse.selected = Some(host.clone());
                    browse.scroll_to = Some(host.clone());
                }
            });
        }
    });
}
