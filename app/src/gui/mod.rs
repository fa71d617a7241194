//! The desktop window (eframe/egui on OpenGL).
//!
//! The shape follows the design: `logic` takes in what worker threads sent, `ui` only draws and
//! records what the user asked for as `Action`s, which `logic` carries out on the next frame. The UI
//! thread never probes, spawns processes or touches files; every such job is a `Task` or a
//! streaming job on a named thread that asks for a repaint when it has news. With nothing running,
//! egui repaints only on input, so an idle window costs almost nothing.

mod bench;
mod machine;
mod pages;
mod screenshot;
mod settings;
mod storage;
mod task;
mod telemetry;
#[cfg(test)]
mod tests;
mod theme;
mod topo_matrix;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use egui::{Key, KeyboardShortcut, Modifiers, Ui};
use gpu_doctor_model::{Report, Snapshot};
use gpu_doctor_probes::host::Host;
use gpu_doctor_probes::host::telemetry::{Detail, TelemetrySource};
use gpu_doctor_probes::probe::Options;

pub use pages::Page;

use machine::{MachineProbe, OtherMachine};
use task::Task;

/// F5: probe again.
const RERUN: KeyboardShortcut = KeyboardShortcut::new(Modifiers::NONE, Key::F5);
/// Ctrl+S (Cmd+S on macOS): export the report.
const EXPORT: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::S);

/// How the window starts.
pub struct Launch {
    /// The machine to probe: this one, or a replayed recording.
    pub host: Arc<dyn Host>,
    /// The replay folder, when replaying (shown in the title bar; benchmarks and live telemetry
    /// are off, since they would measure this machine instead).
    pub replay: Option<PathBuf>,
    /// What the probes look at.
    pub options: Options,
    /// `--screenshot`: save this page as a PNG once the probes are done, then close.
    pub screenshot: Option<screenshot::Request>,
    /// When the process started, for the first-frame time.
    pub started: Instant,
    /// Keep settings and past runs in this folder instead of the user's config and data folders
    /// (tests); `None` for the usual places.
    pub storage: Option<PathBuf>,
    /// Where live telemetry comes from, for the Overview, the Telemetry page and benchmark runs
    /// alike: NVML (`NvmlSource`), a fake in tests.
    pub telemetry: Arc<dyn TelemetrySource>,
}

pub use screenshot::Request as ScreenshotRequest;

/// What a page asks the app to do; carried out in the next `logic` step.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Probe this machine again.
    Rerun,
    /// Show a page.
    Goto(Page),
    /// Leave the other machine and show this one again.
    BackToThisMachine,
    /// Probe with these extra interpreters from now on.
    SetPythons(Vec<PathBuf>),
    /// Open a report or text file from another machine.
    OpenOther(PathBuf),
    /// Diagnose pasted text from another machine.
    Paste(String),
    /// Show a finding's fix plan (by plan id) on the Setup page.
    OpenPlan(String),
}

/// What the pages read: the machine on screen and how it may be measured.
#[derive(Clone, Copy)]
pub struct Shown<'a> {
    /// The diagnosed report, once there is one.
    pub report: Option<&'a Report>,
    /// The snapshot to draw (partial while the first probe runs).
    pub snapshot: &'a Snapshot,
    /// This machine, live: benchmarks and telemetry measure it. False under `--replay` and for
    /// another machine's report.
    pub live: bool,
    /// Another machine's report is on screen.
    pub other: bool,
    /// The probe groups still running (empty when done, and for another machine).
    pub pending: &'a std::collections::BTreeSet<&'static str>,
    /// The host the probes use, for pages that probe on demand.
    pub host: &'a Arc<dyn Host>,
    /// The probe options in force.
    pub options: &'a Options,
}

/// The window's state. Plain data owned by the UI thread.
pub struct App {
    /// The page on screen.
    pub page: Page,
    host: Arc<dyn Host>,
    replay: Option<PathBuf>,
    options: Options,
    /// This machine's probe runs.
    pub machine: MachineProbe,
    /// Another machine being read or on screen.
    pub other: Task<OtherMachine>,
    /// Whether the other machine is on screen (it stays loaded after "back to this machine").
    pub showing_other: bool,
    /// The pages' own state.
    pub pages: pages::Pages,
    /// Live NVML samples (this machine only).
    pub telemetry: telemetry::TelemetryFeed,
    actions: Vec<Action>,
    screenshot: Option<screenshot::Shooter>,
    started: Instant,
    first_frame_logged: bool,
}

impl App {
    /// A window state that starts probing at once.
    pub fn new(ctx: &egui::Context, launch: Launch) -> Self {
        let storage = launch.storage;
        theme::install_fonts(ctx);
        let mut app = Self {
            page: launch.screenshot.as_ref().map_or(Page::Overview, |s| s.page),
            host: launch.host,
            replay: launch.replay,
            options: launch.options,
            machine: MachineProbe::default(),
            other: Task::default(),
            showing_other: false,
            pages: pages::Pages::new(),
            telemetry: telemetry::TelemetryFeed::new(launch.telemetry, telemetry::INTERVAL),
            actions: vec![Action::Rerun],
            screenshot: launch.screenshot.map(screenshot::Shooter::new),
            started: launch.started,
            first_frame_logged: false,
        };
        app.pages.start(ctx, storage.as_deref());
        app
    }

    /// What the pages draw.
    #[cfg(test)]
    pub fn shown(&self) -> Shown<'_> {
        shown_from(&self.machine, &self.other, self.showing_other, self.replay.is_some(), &self.host, &self.options)
    }

    /// Whether any job is still under way, or live telemetry has not answered yet (the screenshot
    /// waits for none).
    pub fn busy(&self) -> bool {
        self.machine.is_running()
            || self.other.is_running()
            || !self.actions.is_empty()
            || self.pages.busy()
            || self.telemetry.is_waiting()
    }

    /// Queues an action, as a click would.
    pub fn act(&mut self, action: Action) {
        self.actions.push(action);
    }

    /// Takes in workers' results and carries out queued actions.
    pub fn logic_step(&mut self, ctx: &egui::Context) {
        self.machine.poll();
        if self.other.poll() && self.other.value().is_some() && self.other.error().is_none() {
            self.showing_other = true;
            self.page = Page::Checks;
        }
        for action in std::mem::take(&mut self.actions) {
            match action {
                Action::Rerun => {
                    self.showing_other = false;
                    self.machine.start(&self.host, &self.options, ctx);
                }
                Action::Goto(p) => self.page = p,
                Action::BackToThisMachine => self.showing_other = false,
                // One probe at a time: wait for the run under way, then probe with the new list.
                Action::SetPythons(p) if self.machine.is_running() => self.actions.push(Action::SetPythons(p)),
                Action::SetPythons(p) => {
                    self.options.extra_pythons = p;
                    self.machine.start(&self.host, &self.options, ctx);
                }
                Action::OpenOther(path) => {
                    machine::open_file(&mut self.other, ctx, path);
                }
                Action::Paste(text) => {
                    machine::read_paste(&mut self.other, ctx, text);
                }
                Action::OpenPlan(id) => {
                    self.page = Page::Setup;
                    self.pages.setup.open_plan(id);
                }
            }
        }
        let (shown, pages, feed, actions) = self.parts();
        pages.logic(ctx, &shown, feed.source(), actions);
        // Only the pages that show live values sample, and only the GPUs they show: the Overview
        // has a card per GPU, the Telemetry page plots each. A benchmark run samples its GPU itself.
        self.telemetry.follow_run(self.pages.bench.run_telemetry());
        let wants_live = self.replay.is_none()
            && !self.showing_other
            && match self.page {
                Page::Overview => true,
                Page::Telemetry => !self.telemetry.paused,
                _ => false,
            };
        // The Overview's cards show no PCIe throughput: skip the counters (20 ms each) there.
        let detail = if self.page == Page::Telemetry { Detail::Full } else { Detail::Card };
        let gpus = self.machine.snapshot().gpus.value().map_or(&[][..], Vec::as_slice);
        // Only the Telemetry page lists the processes on each GPU.
        self.telemetry.want_processes(self.page == Page::Telemetry);
        self.telemetry.set_wanted(wants_live, gpus, detail, ctx);
        self.telemetry.poll();
    }

    /// The machine on screen, borrowed beside the parts of the app a page may change.
    fn parts(&mut self) -> (Shown<'_>, &mut pages::Pages, &mut telemetry::TelemetryFeed, &mut Vec<Action>) {
        let shown = shown_from(
            &self.machine,
            &self.other,
            self.showing_other,
            self.replay.is_some(),
            &self.host,
            &self.options,
        );
        (shown, &mut self.pages, &mut self.telemetry, &mut self.actions)
    }

    /// Draws the whole window.
    pub fn ui_frame(&mut self, ui: &mut Ui) {
        if !self.first_frame_logged {
            self.first_frame_logged = true;
            tracing::info!(target: "gpu_doctor::timing", "first frame {} ms after launch", self.started.elapsed().as_millis());
        }
        if ui.input_mut(|i| i.consume_shortcut(&RERUN)) {
            self.act(Action::Rerun);
        }
        if ui.input_mut(|i| i.consume_shortcut(&EXPORT)) {
            self.page = Page::Report;
            self.pages.report.request_export();
        }
        let mut actions = Vec::new();
        egui::Panel::top("top").show(ui, |ui| self.top_bar_ui(ui, &mut actions));
        self.actions.extend(actions);
        let page = self.page;
        egui::CentralPanel::default().show(ui, |ui| {
            let (shown, pages, feed, actions) = self.parts();
            if page.scrolls() {
                egui::ScrollArea::vertical()
                    .auto_shrink(false)
                    .show(ui, |ui| pages.page_ui(page, ui, &shown, feed, actions));
            } else {
                pages.page_ui(page, ui, &shown, feed, actions);
            }
        });
        {
            let busy = self.busy();
            if let Some(shooter) = &mut self.screenshot {
                shooter.step(ui.ctx(), busy);
            }
        }
    }

    fn top_bar_ui(&mut self, ui: &mut Ui, actions: &mut Vec<Action>) {
        ui.horizontal(|ui| {
            ui.heading("gpu-doctor");
            ui.separator();
            for page in Page::ALL {
                if ui.selectable_label(self.page == page, page.title()).clicked() {
                    self.page = page;
                }
            }
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                theme_ui(ui);
                ui.separator();
                let running = self.machine.is_running();
                let label = if running { "Checking…" } else { "Re-run (F5)" };
                if ui
                    .add_enabled(!running, egui::Button::new(label))
                    .on_hover_text("Probe this machine again")
                    .clicked()
                {
                    actions.push(Action::Rerun);
                }
                if running {
                    ui.spinner();
                }
            });
        });
        self.subject_ui(ui, actions);
    }

    /// Which machine is on screen, always visible: this one, a replay, or another one.
    fn subject_ui(&mut self, ui: &mut Ui, actions: &mut Vec<Action>) {
        ui.horizontal(|ui| {
            if let Some(o) = self.other.value().filter(|_| self.showing_other) {
                theme::badge_ui(ui, theme::Tone::Warn, "NOT THIS MACHINE");
                ui.label(format!("Showing another machine, read from {}.", o.source.label()));
                if ui.button("Back to this machine").clicked() {
                    actions.push(Action::BackToThisMachine);
                }
            } else if let Some(dir) = &self.replay {
                theme::badge_ui(ui, theme::Tone::Info, "REPLAY");
                ui.label(format!("A recorded machine: {}", dir.display()));
            } else {
                ui.label(theme::toned(ui, theme::Tone::Muted, "This machine"));
            }
            if let Some(e) = self.machine.error.as_deref().or(self.other.error()) {
                ui.label(theme::toned(ui, theme::Tone::Bad, e));
            }
            if self.other.is_running() {
                ui.spinner();
                ui.label("Reading the other machine…");
            }
        });
    }
}

impl std::fmt::Debug for Launch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launch")
            .field("replay", &self.replay)
            .field("screenshot", &self.screenshot)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Shown<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shown").field("live", &self.live).field("other", &self.other).finish_non_exhaustive()
    }
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App").field("page", &self.page).field("replay", &self.replay).finish_non_exhaustive()
    }
}

/// Whether a native open/save dialog can be shown: always on Windows and macOS; on Linux the XDG
/// desktop portal needs a session bus. Where not, the pages offer a typed path instead.
pub fn native_dialogs() -> bool {
    cfg!(any(windows, target_os = "macos"))
        || std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some_and(|v| !v.is_empty())
}

/// Theme: follow the system (the default), or dark or light.
fn theme_ui(ui: &mut Ui) {
    let mut pref = ui.ctx().options(|o| o.theme_preference);
    let text = match pref {
        egui::ThemePreference::System => "system",
        egui::ThemePreference::Dark => "dark",
        egui::ThemePreference::Light => "light",
    };
    egui::ComboBox::new("theme", "Theme").selected_text(text).show_ui(ui, |ui| {
        ui.selectable_value(&mut pref, egui::ThemePreference::System, "Follow the system");
        ui.selectable_value(&mut pref, egui::ThemePreference::Dark, "Dark");
        ui.selectable_value(&mut pref, egui::ThemePreference::Light, "Light");
    });
    ui.ctx().set_theme(pref);
}

/// The probe groups of another machine's report: none pending.
static NOTHING_PENDING: std::collections::BTreeSet<&'static str> = std::collections::BTreeSet::new();

fn shown_from<'a>(
    machine: &'a MachineProbe,
    other: &'a Task<OtherMachine>,
    showing_other: bool,
    replay: bool,
    host: &'a Arc<dyn Host>,
    options: &'a Options,
) -> Shown<'a> {
    match other.value().filter(|_| showing_other) {
        Some(o) => Shown {
            report: Some(&o.report),
            snapshot: &o.report.snapshot,
            live: false,
            other: true,
            pending: &NOTHING_PENDING,
            host,
            options,
        },
        None => Shown {
            report: machine.report.as_ref(),
            snapshot: machine.snapshot(),
            live: !replay,
            other: false,
            pending: &machine.pending,
            host,
            options,
        },
    }
}

impl eframe::App for App {
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        self.logic_step(ctx);
    }

    fn ui(&mut self, ui: &mut Ui, _frame: &mut eframe::Frame) {
        self.ui_frame(ui);
    }
}

/// Opens the window and runs it until it is closed; returns the exit code.
pub fn run(launch: Launch) -> Result<u8> {
    run_with(launch, None)
}

/// `run` with eframe's hook on the event loop's builder (a test opens the window off the main
/// thread with it).
fn run_with(launch: Launch, event_loop_builder: Option<eframe::EventLoopBuilderHook>) -> Result<u8> {
    let outcome = launch.screenshot.as_ref().map(|s| Arc::clone(&s.outcome));
    let options = eframe::NativeOptions {
        event_loop_builder,
        viewport: egui::ViewportBuilder::default()
            .with_title(format!("gpu-doctor {}", crate::cli::version_line()))
            // The desktop entry's name (assets/linux/gpu-doctor.desktop), so the menu's icon is the window's.
            .with_app_id("gpu-doctor")
            .with_inner_size([1280.0, 800.0])
            .with_min_inner_size([800.0, 500.0]),
        renderer: eframe::Renderer::Glow,
        ..Default::default()
    };
    eframe::run_native("gpu-doctor", options, Box::new(|cc| Ok(Box::new(App::new(&cc.egui_ctx, launch)))))
        .map_err(|e| anyhow::anyhow!("could not open the window: {e}"))?;
    match outcome.map(|o| o.lock().map(|g| g.clone()).unwrap_or(None)) {
        None | Some(Some(Ok(_))) => Ok(crate::exit::OK),
        Some(Some(Err(e))) => Err(anyhow::anyhow!("{e}")),
        Some(None) => Err(anyhow::anyhow!("the window closed before the screenshot was taken")),
    }
}
