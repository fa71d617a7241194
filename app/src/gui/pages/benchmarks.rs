//! Benchmarks: choose a GPU and tests, run them with a bar per test and a cancel button, plot and
//! judge the results, and keep every finished run in the data folder to lay over later ones.
//!
//! `logic` takes in what the bench thread and the file jobs sent; `benchmarks_ui` only draws and
//! records what the user asked for, which `logic` carries out on the next frame.

use std::collections::{BTreeSet, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use egui::{RichText, Ui};
use gpu_doctor_model::bench::plan::{BenchPlan, TestKind};
use gpu_doctor_model::bench::run::BenchRun;
use gpu_doctor_model::{Probed, Snapshot};
use gpu_doctor_probes::host::telemetry::TelemetrySource;

use crate::gui::Shown;
use crate::gui::bench::history::{self, Entry, Saved};
use crate::gui::bench::job::BenchJob;
use crate::gui::bench::p2p_ui::{self, P2pView};
use crate::gui::bench::progress::RunProgress;
use crate::gui::bench::{RunState, plots_ui, results_ui};
use crate::gui::storage;
use crate::gui::task::Task;
use crate::gui::telemetry::RunSamples;
use crate::gui::theme::{Tone, badge_ui, toned};
use crate::plots::PlotSpec;

/// How often the live plots are rebuilt from the streamed events while a run goes on.
const LIVE_REBUILD: Duration = Duration::from_millis(250);

/// What the user picked.
#[derive(Debug, Clone, PartialEq)]
struct Choice {
    /// The GPU, by nvidia-smi index; `None` until the probes list one.
    gpu: Option<u32>,
    /// The tests ticked (GPU tests that cannot run stay ticked but are left out of the plan).
    tests: BTreeSet<TestKind>,
    /// The quick preset (else the full one).
    quick: bool,
}

impl Default for Choice {
    fn default() -> Self {
        Self { gpu: None, tests: TestKind::default_set().into_iter().collect(), quick: true }
    }
}

/// What the user asked for in the last frame, carried out in `logic`.
#[derive(Debug, Clone, PartialEq)]
enum Request {
    Run(Box<BenchPlan>, Box<Option<Snapshot>>),
    Cancel,
    Delete(PathBuf),
}

/// A file job: one at a time, on a named thread.
#[derive(Debug)]
enum IoJob {
    Save(PathBuf, Box<BenchRun>),
    Delete(PathBuf),
}

/// What a file job did.
#[derive(Debug, Clone)]
enum IoDone {
    Saved(Box<Entry>),
    Deleted,
}

/// The live plots of the run under way.
#[derive(Debug, Default)]
struct Live {
    generation: u64,
    built: Option<Instant>,
    plots: Vec<PlotSpec>,
}

/// The Benchmarks page's state.
#[derive(Debug)]
pub struct BenchPage {
    choice: Choice,
    requests: Vec<Request>,
    state: RunState,
    job: Option<BenchJob>,
    /// The snapshot the run under way is judged against (for the live plots' reference lines).
    job_snapshot: Option<Snapshot>,
    live: Live,
    /// The last run's final progress and how long it took.
    last_progress: Option<(RunProgress, Duration)>,
    /// This session's last run, finished or cancelled.
    last: Option<Saved>,
    /// Why the last run could not be carried out.
    error: Option<String>,
    /// `<data dir>/runs`; `None` when no home folder is known.
    runs_dir: Option<PathBuf>,
    /// Listing the runs folder: the folder and what is in it.
    loading: Task<(PathBuf, Vec<Entry>)>,
    /// The runs folder changed while a listing was under way: list it again after.
    reload_pending: bool,
    history: Vec<Entry>,
    history_error: Option<String>,
    io_queue: VecDeque<IoJob>,
    io: Task<IoDone>,
    io_error: Option<String>,
    /// What the GPU-to-GPU copy heat map shows.
    p2p_view: P2pView,
}

impl Default for BenchPage {
    fn default() -> Self {
        Self {
            choice: Choice::default(),
            requests: Vec::new(),
            state: RunState::Idle,
            job: None,
            job_snapshot: None,
            live: Live::default(),
            last_progress: None,
            last: None,
            error: None,
            runs_dir: None,
            loading: Task::default(),
            reload_pending: false,
            history: Vec::new(),
            history_error: None,
            io_queue: VecDeque::new(),
            io: Task::default(),
            io_error: None,
            p2p_view: P2pView::default(),
        }
    }
}

impl BenchPage {
    /// Starts loading past runs from `<data dir>/runs`.
    pub fn start(&mut self, ctx: &egui::Context) {
        self.set_runs_dir(ctx, storage::data_dir().map(|d| d.join("runs")));
    }

    /// Keeps runs in `dir` from now on (`None`: nowhere) and lists the runs there; UI tests point
    /// it at a temporary folder. The runs listed before are forgotten.
    pub fn set_runs_dir(&mut self, ctx: &egui::Context, dir: Option<PathBuf>) {
        self.history.clear();
        self.history_error = None;
        self.runs_dir = dir;
        self.reload_pending = self.runs_dir.is_some();
        self.load_history(ctx);
    }

    /// Lists the runs folder on a worker thread, once the listing under way (if any) has landed.
    fn load_history(&mut self, ctx: &egui::Context) {
        let Some(dir) = self.runs_dir.clone().filter(|_| self.reload_pending && !self.loading.is_running()) else {
            return;
        };
        self.reload_pending = false;
        self.loading.spawn("bench-history", ctx, move || history::load_all(&dir).map(|entries| (dir, entries)));
    }

    /// Whether a run, a load or a file job is under way.
    pub fn busy(&self) -> bool {
        self.job.is_some()
            || !self.requests.is_empty()
            || self.loading.is_running()
            || self.reload_pending
            || self.io.is_running()
            || !self.io_queue.is_empty()
    }

    /// Where the benchmark stands (for UI tests: start, cancel, wait for `Cancelled`).
    #[cfg_attr(not(test), allow(dead_code))] // read by the UI tests only
    pub fn run_state(&self) -> RunState {
        self.state
    }

    /// Takes in the bench thread's events and the file jobs' results; carries out requests. A run
    /// samples the benchmarked GPU's telemetry from `telemetry`.
    pub fn logic(&mut self, ctx: &egui::Context, shown: &Shown<'_>, telemetry: &Arc<dyn TelemetrySource>) {
        let _ = shown;
        self.step(ctx, telemetry);
    }

    /// The run's telemetry while its GPU tests go on (see `BenchJob::telemetry`).
    pub fn run_telemetry(&self) -> Option<RunSamples<'_>> {
        self.job.as_ref().and_then(BenchJob::telemetry)
    }

    fn step(&mut self, ctx: &egui::Context, telemetry: &Arc<dyn TelemetrySource>) {
        for request in std::mem::take(&mut self.requests) {
            match request {
                Request::Run(plan, snapshot) => self.start_run(ctx, *plan, *snapshot, telemetry),
                Request::Cancel => {
                    if let Some(job) = &self.job {
                        job.cancel();
                        self.state = RunState::Cancelling;
                    }
                }
                Request::Delete(path) => {
                    self.history.retain(|e| e.path != path);
                    self.io_queue.push_back(IoJob::Delete(path));
                }
            }
        }
        self.poll_job(ctx);
        self.poll_history(ctx);
        self.poll_io(ctx);
    }

    fn start_run(
        &mut self,
        ctx: &egui::Context,
        plan: BenchPlan,
        snapshot: Option<Snapshot>,
        telemetry: &Arc<dyn TelemetrySource>,
    ) {
        if self.job.is_some() {
            return;
        }
        if let Err(e) = plan.validate() {
            self.error = Some(e.to_string());
            self.state = RunState::Failed;
            return;
        }
        self.error = None;
        match BenchJob::start(ctx, plan, snapshot.clone(), Arc::clone(telemetry)) {
            Ok(job) => {
                self.job = Some(job);
                self.job_snapshot = snapshot;
                self.live = Live::default();
                self.state = RunState::Running;
            }
            Err(e) => {
                self.error = Some(e);
                self.state = RunState::Failed;
            }
        }
    }

    fn poll_job(&mut self, ctx: &egui::Context) {
        let Some(job) = &mut self.job else { return };
        let outcome = job.poll();
        // The elapsed time ticks on screen.
        ctx.request_repaint_after(Duration::from_millis(500));
        let Some(outcome) = outcome else {
            self.rebuild_live();
            return;
        };
        let Some(job) = self.job.take() else { return };
        let cancelled = job.cancelled();
        let took = job.elapsed();
        self.last_progress = Some((job.progress, took));
        self.live = Live::default();
        self.job_snapshot = None;
        match outcome {
            Ok(run) => {
                self.state = if cancelled { RunState::Cancelled } else { RunState::Finished };
                if !cancelled {
                    match &self.runs_dir {
                        Some(dir) => self.io_queue.push_back(IoJob::Save(dir.clone(), Box::new(run.clone()))),
                        None => {
                            self.io_error =
                                Some("no home folder is known, so this run is not kept (set GPU_DOCTOR_HOME)".into());
                        }
                    }
                }
                self.last = Some(Saved::new(run));
            }
            Err(e) if cancelled => {
                self.state = RunState::Cancelled;
                self.error = Some(e);
            }
            Err(e) => {
                self.state = RunState::Failed;
                self.error = Some(e);
            }
        }
    }

    /// Rebuilds the live plots from the events so far, a few times a second at most.
    fn rebuild_live(&mut self) {
        let Some(job) = &self.job else { return };
        let p = &job.progress;
        let due = self.live.built.is_none_or(|t| t.elapsed() >= LIVE_REBUILD);
        if p.generation == self.live.generation || !due {
            return;
        }
        let kb = gpu_doctor_kb::Kb::get().ok();
        let (snapshot, gpu) = (self.job_snapshot.as_ref(), p.plan.gpu);
        let run = p.snapshot_run(|device| gpu_doctor_kernels::facts::gather(snapshot, gpu, device, kb));
        self.live =
            Live { generation: p.generation, built: Some(Instant::now()), plots: crate::plots::run_plots(&run) };
    }

    fn poll_history(&mut self, ctx: &egui::Context) {
        if !self.loading.poll() {
            return;
        }
        if let Some(e) = self.loading.error() {
            self.history_error = Some(e.to_owned());
        }
        // A listing of a folder no longer in use (the runs folder changed meanwhile) is dropped.
        if let Some((_, loaded)) = self.loading.value().filter(|(dir, _)| Some(dir) == self.runs_dir.as_ref()) {
            for e in loaded {
                if !self.history.iter().any(|h| h.path == e.path) {
                    self.history.push(e.clone());
                }
            }
            sort_newest_first(&mut self.history);
        }
        self.loading.clear();
        self.load_history(ctx);
    }

    fn poll_io(&mut self, ctx: &egui::Context) {
        if self.io.poll() {
            if let Some(e) = self.io.error() {
                self.io_error = Some(e.to_owned());
            } else if let Some(IoDone::Saved(entry)) = self.io.value() {
                let entry = Entry::clone(entry);
                if !self.history.iter().any(|h| h.path == entry.path) {
                    self.history.push(entry);
                    sort_newest_first(&mut self.history);
                }
            }
            self.io.clear();
        }
        if self.io.is_running() {
            return;
        }
        let Some(job) = self.io_queue.pop_front() else { return };
        self.io.spawn("bench-runs", ctx, move || match job {
            IoJob::Save(dir, run) => history::save(&dir, *run).map(|e| IoDone::Saved(Box::new(e))),
            IoJob::Delete(path) => history::delete(&path).map(|()| IoDone::Deleted),
        });
    }

    /// The newest finished run, for the report: this session's, else the newest saved one.
    pub fn latest_run(&self) -> Option<&BenchRun> {
        self.last
            .as_ref()
            .filter(|_| self.state == RunState::Finished)
            .map(|s| &s.run)
            .or_else(|| self.history.iter().find_map(|e| e.loaded.as_ref().ok()).map(|s| &s.run))
    }

    /// The run on screen: this session's last, else the newest saved one (with its date).
    fn shown_run(&self) -> Option<(&Saved, Option<&str>)> {
        match &self.last {
            Some(s) => Some((s, None)),
            None => self.history.iter().find_map(|e| e.loaded.as_ref().ok()).map(|s| (s, Some(s.date.as_str()))),
        }
    }

    /// Draws the page.
    pub fn benchmarks_ui(&mut self, ui: &mut Ui, shown: &Shown<'_>) {
        self.controls_ui(ui, shown);
        ui.add_space(8.0);
        if let Some(e) = &self.error {
            ui.label(toned(ui, Tone::Bad, format!("The benchmark could not run: {e}")));
        }
        if let Some(job) = &self.job {
            results_ui::progress_ui(ui, &job.progress, self.state, job.elapsed());
            ui.add_space(8.0);
            let overlays = self.overlays(None);
            if self.live.plots.is_empty() {
                ui.label(toned(ui, Tone::Muted, "Plots appear here as the transfer, GEMM and GPU tests report."));
            } else {
                plots_section_ui(ui, &self.live.plots, &overlays);
            }
        } else {
            if let Some((p, took)) = &self.last_progress {
                egui::CollapsingHeader::new("Progress of the last run")
                    .id_salt("bench-last-progress")
                    .default_open(self.state != RunState::Finished)
                    .show(ui, |ui| results_ui::progress_ui(ui, p, self.state, *took));
            }
            let mut view = self.p2p_view;
            self.results_ui(ui, &mut view);
            self.p2p_view = view;
        }
        ui.add_space(12.0);
        self.history_ui(ui);
    }

    fn controls_ui(&mut self, ui: &mut Ui, shown: &Shown<'_>) {
        let gpus = gpu_list(shown.snapshot);
        if self.choice.gpu.is_none_or(|g| !gpus.iter().any(|(i, _)| *i == g)) {
            self.choice.gpu = gpus.first().map(|(i, _)| *i);
        }
        let blocked = gpu_block(shown);
        let running = self.job.is_some();
        egui::Frame::group(ui.style()).inner_margin(10).corner_radius(6.0).show(ui, |ui| {
            ui.set_width(ui.available_width());
            ui.horizontal(|ui| {
                let gpu_label = ui.label(RichText::new("GPU").strong());
                let selected = gpus
                    .iter()
                    .find(|(i, _)| Some(*i) == self.choice.gpu)
                    .map_or_else(|| "none".to_owned(), |(_, n)| n.clone());
                if gpus.is_empty() {
                    ui.label(toned(ui, Tone::Muted, "none found"));
                } else {
                    ui.add_enabled_ui(blocked.is_none() && !running && gpus.len() > 1, |ui| {
                        let combo = egui::ComboBox::from_id_salt("bench-gpu").selected_text(selected).width(320.0);
                        let shown = combo.show_ui(ui, |ui| {
                            for (i, name) in &gpus {
                                ui.selectable_value(&mut self.choice.gpu, Some(*i), name);
                            }
                        });
                        shown.response.labelled_by(gpu_label.id);
                    });
                }
                ui.separator();
                ui.label(RichText::new("Preset").strong());
                ui.add_enabled_ui(!running, |ui| {
                    ui.radio_value(&mut self.choice.quick, true, "Quick")
                        .on_hover_text("Fewer sizes and repetitions: about a minute on a GPU");
                    ui.radio_value(&mut self.choice.quick, false, "Full")
                        .on_hover_text("Every size, more repetitions: several minutes");
                });
                ui.separator();
                let plan = self.plan(blocked.is_none());
                if running {
                    let cancelling = self.state == RunState::Cancelling;
                    let label = if cancelling { "Cancelling…" } else { "Cancel" };
                    if ui.add_enabled(!cancelling, egui::Button::new(label)).clicked() {
                        self.requests.push(Request::Cancel);
                    }
                } else {
                    let button = ui
                        .add_enabled(plan.is_some(), egui::Button::new(RichText::new("Run benchmarks").strong()))
                        .on_disabled_hover_text("Tick at least one test that can run here");
                    if button.clicked()
                        && let Some(plan) = plan
                    {
                        let snapshot = (!plan.gpu_tests().is_empty()).then(|| shown.snapshot.clone());
                        self.requests.push(Request::Run(Box::new(plan), Box::new(snapshot)));
                    }
                }
            });
            ui.add_space(4.0);
            ui.horizontal_wrapped(|ui| {
                ui.label(RichText::new("Tests").strong());
                for t in TestKind::ALL {
                    let can = !t.needs_gpu() || blocked.is_none();
                    let mut on = self.choice.tests.contains(&t) && can;
                    let r = ui.add_enabled(can && !running, egui::Checkbox::new(&mut on, results_ui::test_label(t)));
                    if r.changed() {
                        if on {
                            self.choice.tests.insert(t);
                        } else {
                            self.choice.tests.remove(&t);
                        }
                    }
                    r.on_hover_text(test_hint(t));
                }
            });
            if let Some(why) = &blocked {
                ui.add_space(4.0);
                ui.horizontal_wrapped(|ui| {
                    badge_ui(ui, Tone::Warn, "GPU TESTS OFF");
                    ui.label(why.as_str());
                });
                ui.label(toned(
                    ui,
                    Tone::Muted,
                    "The CPU baselines can still run: they measure this computer's processor and memory.",
                ));
            }
        });
    }

    /// The plan for what is ticked and can run; `None` when nothing can.
    fn plan(&self, gpu_ok: bool) -> Option<BenchPlan> {
        let tests: Vec<TestKind> =
            TestKind::ALL.into_iter().filter(|t| self.choice.tests.contains(t) && (gpu_ok || !t.needs_gpu())).collect();
        if tests.is_empty() {
            return None;
        }
        Some(BenchPlan::preset(self.choice.gpu.unwrap_or(0), tests, self.choice.quick))
    }

    /// The past runs ticked for overlay, labelled by date, except the run on screen itself.
    fn overlays(&self, on_screen: Option<&BenchRun>) -> Vec<(&str, &[PlotSpec])> {
        self.history
            .iter()
            .filter(|e| e.overlay)
            .filter_map(|e| e.loaded.as_ref().ok())
            .filter(|s| on_screen.is_none_or(|r| !same_run(r, &s.run)))
            .map(|s| (s.date.trim_end_matches(" UTC"), s.plots.as_slice()))
            .collect()
    }

    fn results_ui(&self, ui: &mut Ui, p2p_view: &mut P2pView) {
        let Some((saved, from)) = self.shown_run() else {
            if self.last_progress.is_none() {
                ui.label(toned(ui, Tone::Muted, "No run yet. Pick the tests above and press Run benchmarks."));
            }
            return;
        };
        ui.horizontal_wrapped(|ui| {
            ui.heading("Results");
            match (from, self.state) {
                (Some(date), _) => {
                    badge_ui(ui, Tone::Info, "SAVED RUN");
                    ui.label(format!("the newest saved run, from {date}"));
                }
                (None, RunState::Cancelled) => {
                    badge_ui(ui, Tone::Muted, "CANCELLED");
                    ui.label("what ran before the cancel; not saved");
                }
                (None, _) => {
                    ui.label(toned(ui, Tone::Muted, saved.date.as_str()));
                }
            }
        });
        ui.label(&saved.summary);
        ui.add_space(4.0);
        results_ui::results_ui(ui, &saved.run);
        for matrix in saved.run.tests.iter().filter_map(|t| t.result.as_ref()?.p2p.as_ref()) {
            ui.add_space(8.0);
            p2p_ui::p2p_ui(ui, matrix, p2p_view);
        }
        ui.add_space(8.0);
        let overlays = self.overlays(Some(&saved.run));
        if saved.plots.is_empty() {
            ui.label(toned(
                ui,
                Tone::Muted,
                "No plots: they show the transfer, GEMM and sustained-load sweeps and GPU telemetry.",
            ));
        } else {
            plots_section_ui(ui, &saved.plots, &overlays);
        }
    }

    fn history_ui(&mut self, ui: &mut Ui) {
        ui.horizontal(|ui| {
            ui.heading("Past runs");
            if self.loading.is_running() {
                ui.spinner();
            }
            if let Some(dir) = &self.runs_dir {
                ui.label(toned(ui, Tone::Muted, dir.display().to_string()).small());
            }
        });
        for e in [&self.history_error, &self.io_error].into_iter().flatten() {
            ui.label(toned(ui, Tone::Bad, e));
        }
        if self.runs_dir.is_none() {
            ui.label(toned(ui, Tone::Warn, "No home folder is known, so runs are not kept (set GPU_DOCTOR_HOME)."));
            return;
        }
        if self.history.is_empty() && !self.loading.is_running() {
            ui.label(toned(ui, Tone::Muted, "None yet: every finished run is kept here to compare with later ones."));
            return;
        }
        if !self.history.is_empty() {
            ui.label(toned(ui, Tone::Muted, "Tick a run to lay it over the plots (dashed, faded)."));
        }
        let mut delete = None;
        egui::Grid::new("bench-history").num_columns(3).spacing([12.0, 4.0]).striped(true).show(ui, |ui| {
            for e in &mut self.history {
                match &e.loaded {
                    Ok(saved) => {
                        ui.checkbox(&mut e.overlay, saved.date.as_str()).on_hover_text("Overlay on the plots");
                        ui.label(&saved.summary).on_hover_text(e.path.display().to_string());
                    }
                    Err(err) => {
                        ui.label(toned(ui, Tone::Bad, format!("⚠ {}", e.file_name())));
                        ui.label(toned(ui, Tone::Bad, err));
                    }
                }
                if ui.small_button("Delete").on_hover_text(format!("Delete {}", e.path.display())).clicked() {
                    delete = Some(e.path.clone());
                }
                ui.end_row();
            }
        });
        if let Some(path) = delete {
            self.requests.push(Request::Delete(path));
        }
    }
}

/// The measured plots two to a row, then the telemetry plots, smaller.
fn plots_section_ui(ui: &mut Ui, plots: &[PlotSpec], overlays: &[(&str, &[PlotSpec])]) {
    let (telemetry, main): (Vec<&PlotSpec>, Vec<&PlotSpec>) =
        plots.iter().partition(|p| p.id.starts_with("telemetry."));
    plots_ui::plot_grid_ui(ui, &main, overlays, 2, 260.0);
    if !telemetry.is_empty() {
        ui.label(RichText::new("GPU telemetry during the run").strong());
        plots_ui::plot_grid_ui(ui, &telemetry, overlays, 2, 160.0);
    }
}

/// Whether two runs are the same one (the run on screen and its saved copy).
fn same_run(a: &BenchRun, b: &BenchRun) -> bool {
    a.started_at_unix_secs == b.started_at_unix_secs && a.plan == b.plan
}

fn sort_newest_first(entries: &mut [Entry]) {
    entries.sort_by_key(|e| std::cmp::Reverse(e.file_name()));
}

/// The GPUs to choose from: (index, `0 · name`).
fn gpu_list(snapshot: &Snapshot) -> Vec<(u32, String)> {
    snapshot
        .gpus
        .value()
        .into_iter()
        .flatten()
        .map(|g| (g.index, format!("{} · {}", g.index, g.name.as_deref().unwrap_or("unnamed GPU"))))
        .collect()
}

/// Why the GPU tests cannot run for what is on screen; `None` when they can.
fn gpu_block(shown: &Shown<'_>) -> Option<String> {
    if shown.other {
        return Some("Another machine's report is on screen; benchmarks measure this computer.".to_owned());
    }
    if !shown.live {
        return Some("A recorded machine is replayed; GPU tests would measure this computer instead.".to_owned());
    }
    if !shown.pending.is_empty() {
        return Some("Waiting for the checks of this machine to finish…".to_owned());
    }
    match &shown.snapshot.gpus {
        Probed::Found { value, .. } if !value.is_empty() => None,
        Probed::Found { .. } => Some("The driver lists no GPU.".to_owned()),
        other => Some(format!("No GPU to measure: {}", other.why_not().unwrap_or("not found"))),
    }
}

/// A test's hover text: its name on the command line and what it needs.
fn test_hint(t: TestKind) -> String {
    let needs =
        if t.needs_gpu() { "runs on the GPU in a separate worker process" } else { "runs on this computer's CPU" };
    format!("--tests {}: {needs}", t.name())
}

#[cfg(test)]
mod tests;
