//! Environments: Python environments × frameworks against the GPUs.
//!
//! A card per environment with a row per framework: version, build, cuDNN, compiled architectures,
//! and a cell per GPU coloured by whether the build runs on it (the diagnosis's own judgement,
//! `gpu_fit`). Interpreters the user adds are remembered in `settings.json` and probed as
//! `--python`; the deep probe of one environment runs on demand. Files, dialogs and probes all run
//! on worker threads (`Task`s); `ui` only records what was asked and `logic` starts it.

mod cells;
mod deep;
mod table;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use egui::{RichText, Ui};
use gpu_doctor_judge::diagnose::{GpuView, gpu_views};
use gpu_doctor_kb::Kb;
use gpu_doctor_model::{DeepFacts, EnvKind, PythonEnv};
use gpu_doctor_model::{Probed, Snapshot, Trace};
use gpu_doctor_probes::probe::python::deep_probe;

use crate::gui::settings::{self, Settings};
use crate::gui::task::Task;
use crate::gui::theme::{Tone, badge_ui, toned};
use crate::gui::{Action, Shown};

/// The label of the button that adds an interpreter.
pub const ADD_LABEL: &str = "Add interpreter…";
/// The label of the button that runs the deep probe of one environment.
pub const DEEP_LABEL: &str = "Deep probe";

/// The Environments page's state.
#[derive(Debug, Default)]
pub struct EnvPage {
    /// Where `settings.json` lives; `None` before `start` and when no home folder is known.
    settings_dir: Option<PathBuf>,
    /// Loading the settings at start.
    load: Task<Settings>,
    /// The settings as loaded and changed since; `None` until loaded.
    settings: Option<Settings>,
    /// Why the settings could not be read or will not be remembered.
    pub settings_note: Option<String>,
    /// Writing the settings.
    save: Task<()>,
    /// The settings changed and are to be written once the running write ends.
    save_queued: bool,
    /// The interpreters given with `--python`, kept in front of the remembered ones.
    cli_pythons: Option<Vec<PathBuf>>,
    /// The interpreter list changed and the app is to probe with it.
    send_pythons: bool,
    /// The open-file dialog, on its own thread; `None` inside means nothing was chosen.
    dialog: Task<Option<PathBuf>>,
    /// "Add interpreter…" was clicked.
    dialog_asked: bool,
    /// Whether a desktop portal may show a file dialog (a D-Bus session exists).
    portal: bool,
    /// The text field for a path is shown (no dialog could be shown, or none was chosen).
    pub typing: bool,
    /// The path typed into it.
    pub typed: String,
    /// Deep probes by environment name.
    deep: BTreeMap<String, Task<Probed<DeepFacts>>>,
    /// Environments whose deep probe was asked for this frame.
    deep_asked: Vec<String>,
}

impl EnvPage {
    /// Starts loading the remembered interpreters from the config folder.
    pub fn start(&mut self, ctx: &egui::Context) {
        self.start_with_dir(ctx, settings::dir());
    }

    /// Starts loading the remembered interpreters from `dir` (tests pass a temporary folder).
    pub fn start_with_dir(&mut self, ctx: &egui::Context, dir: Result<PathBuf, String>) {
        self.portal = crate::gui::native_dialogs();
        match dir {
            Ok(dir) => {
                self.settings_dir = Some(dir.clone());
                self.load.spawn("load-settings", ctx, move || settings::load(&dir));
            }
            Err(e) => {
                self.settings_note = Some(e);
                self.settings = Some(Settings::default());
            }
        }
    }

    /// Whether a job of this page is under way: loading or saving settings, a deep probe.
    pub fn busy(&self) -> bool {
        self.load.is_running()
            || self.save.is_running()
            || self.save_queued
            || !self.deep_asked.is_empty()
            || self.deep.values().any(Task::is_running)
    }

    /// The interpreters the user added, as remembered; empty until the settings are loaded.
    pub fn remembered(&self) -> &[PathBuf] {
        self.settings.as_ref().map_or(&[], |s| s.extra_pythons.as_slice())
    }

    /// Whether the deep probe of environment `name` is running.
    pub fn deep_running(&self, name: &str) -> bool {
        self.deep.get(name).is_some_and(Task::is_running)
    }

    /// The deep probe's answer for environment `name`, once there is one.
    pub fn deep_result(&self, name: &str) -> Option<&Probed<DeepFacts>> {
        self.deep.get(name).and_then(Task::value)
    }

    /// Polls the page's jobs and starts what the user asked for.
    pub fn logic(&mut self, ctx: &egui::Context, shown: &Shown<'_>, actions: &mut Vec<Action>) {
        if self.cli_pythons.is_none() && !shown.other {
            self.cli_pythons = Some(shown.options.extra_pythons.clone());
        }
        self.settings_logic(ctx);
        self.dialog_logic(ctx);
        self.deep_logic(ctx, shown);
        if self.send_pythons && !shown.other {
            // The remembered interpreters are this machine's; a recorded machine does not have them.
            if shown.live {
                let mut list = self.cli_pythons.clone().unwrap_or_default();
                for p in self.remembered() {
                    if !list.contains(p) {
                        list.push(p.clone());
                    }
                }
                actions.push(Action::SetPythons(list));
            }
            self.send_pythons = false;
        }
    }

    fn settings_logic(&mut self, ctx: &egui::Context) {
        if self.load.poll() {
            if let Some(e) = self.load.error() {
                self.settings_note = Some(e.to_owned());
            }
            let mut loaded = self.load.value().cloned().unwrap_or_default();
            // Anything added before the file was read stays (and is saved with the rest).
            for p in self.settings.take().map(|s| s.extra_pythons).unwrap_or_default() {
                if !loaded.extra_pythons.contains(&p) {
                    loaded.extra_pythons.push(p);
                    self.save_queued = true;
                }
            }
            self.send_pythons |= !loaded.extra_pythons.is_empty();
            self.settings = Some(loaded);
        }
        if self.save.poll() {
            self.settings_note = self.save.error().map(|e| format!("The interpreters could not be remembered: {e}"));
        }
        if self.save_queued && !self.save.is_running() {
            self.save_queued = false;
            if let (Some(dir), Some(s)) = (self.settings_dir.clone(), self.settings.clone()) {
                self.save.spawn("save-settings", ctx, move || settings::save(&dir, &s));
            }
        }
    }

    fn dialog_logic(&mut self, ctx: &egui::Context) {
        if self.dialog.poll() {
            match self.dialog.value() {
                Some(Some(path)) => {
                    let path = path.clone();
                    self.add(path);
                }
                // Cancelled, or no dialog could be shown (rfd says neither apart): offer the field.
                _ => self.typing = true,
            }
            self.dialog.clear();
        }
        if std::mem::take(&mut self.dialog_asked) && !self.dialog.is_running() {
            if self.portal {
                self.dialog.spawn("file-dialog", ctx, || {
                    Ok(rfd::FileDialog::new().set_title("Choose a Python interpreter").pick_file())
                });
            } else {
                self.typing = true;
            }
        }
    }

    fn deep_logic(&mut self, ctx: &egui::Context, shown: &Shown<'_>) {
        for task in self.deep.values_mut() {
            task.poll();
        }
        for name in std::mem::take(&mut self.deep_asked) {
            if shown.other {
                continue;
            }
            let Some(env) = envs(shown.snapshot).iter().find(|e| e.name == name).cloned() else { continue };
            let host = Arc::clone(shown.host);
            self.deep
                .entry(name)
                .or_default()
                .spawn("deep-probe", ctx, move || Ok(deep_probe(host.as_ref(), &env, &mut Trace::new("python"))));
        }
    }

    /// Remembers an interpreter (once) and asks for a probe with it.
    pub fn add(&mut self, path: PathBuf) {
        let settings = self.settings.get_or_insert_with(Settings::default);
        if !settings.extra_pythons.contains(&path) {
            settings.extra_pythons.push(path);
            self.save_queued = true;
            self.send_pythons = true;
        }
        self.typing = false;
        self.typed.clear();
    }

    /// Forgets an interpreter the user added and asks for a probe without it.
    pub fn remove(&mut self, path: &PathBuf) {
        if let Some(s) = &mut self.settings
            && let Some(i) = s.extra_pythons.iter().position(|p| p == path)
        {
            s.extra_pythons.remove(i);
            self.save_queued = true;
            self.send_pythons = true;
        }
    }

    /// Draws the page.
    pub fn environments_ui(&mut self, ui: &mut Ui, shown: &Shown<'_>, actions: &mut Vec<Action>) {
        let asked_before = (self.dialog_asked, self.deep_asked.len(), self.save_queued);
        let snap = shown.snapshot;
        ui.horizontal(|ui| {
            let count = envs(snap).len();
            ui.heading(if count > 0 { format!("Python environments ({count})") } else { "Python environments".into() });
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| self.add_button_ui(ui, shown));
        });
        self.interpreters_ui(ui, shown);
        let kb = match Kb::get() {
            Ok(kb) => kb,
            Err(e) => {
                ui.label(toned(ui, Tone::Bad, format!("The knowledge base did not load: {e}")));
                return;
            }
        };
        let gpus = gpu_views(snap, kb);
        table::gpus_line_ui(ui, snap, &gpus);
        ui.add_space(6.0);
        match &snap.python_envs {
            Probed::Found { value, .. } if !value.is_empty() => {
                for env in value {
                    self.env_card_ui(ui, shown, kb, env, &gpus, actions);
                    ui.add_space(8.0);
                }
            }
            Probed::Found { .. } => {
                ui.label(toned(ui, Tone::Warn, "No Python environment found."));
            }
            _ if shown.pending.contains("python") => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("Looking for Python environments…");
                });
            }
            other => {
                let why = other.why_not().unwrap_or("unknown");
                ui.label(toned(ui, Tone::Warn, format!("No Python environment: {why}")));
            }
        }
        if (self.dialog_asked, self.deep_asked.len(), self.save_queued) != asked_before {
            ui.ctx().request_repaint();
        }
    }

    fn add_button_ui(&mut self, ui: &mut Ui, shown: &Shown<'_>) {
        let picking = self.dialog.is_running();
        let enabled = shown.live && !picking && self.settings.is_some();
        let hover = if !shown.live {
            "Added interpreters are probed on this machine; this is not it"
        } else if picking {
            "The file dialog is open"
        } else {
            "Pick a Python interpreter (or an environment folder) for the probes to include, now and next time"
        };
        if picking {
            ui.spinner();
        }
        if ui.add_enabled(enabled, egui::Button::new(ADD_LABEL)).on_hover_text(hover).clicked() {
            self.dialog_asked = true;
        }
    }

    /// The interpreters the user added, the path field and the settings note.
    fn interpreters_ui(&mut self, ui: &mut Ui, shown: &Shown<'_>) {
        if self.typing {
            ui.horizontal(|ui| {
                let label = ui.label("Interpreter path:");
                let field = ui
                    .add(
                        egui::TextEdit::singleline(&mut self.typed)
                            .hint_text("/path/to/venv/bin/python3")
                            .desired_width(420.0),
                    )
                    .labelled_by(label.id);
                let entered = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                let path = self.typed.trim().to_owned();
                if (ui.add_enabled(!path.is_empty(), egui::Button::new("Add")).clicked() || entered) && !path.is_empty()
                {
                    self.add(PathBuf::from(path));
                }
                if ui.button("Cancel").clicked() {
                    self.typing = false;
                }
            });
            if !self.portal {
                ui.label(
                    toned(ui, Tone::Muted, "No file dialog here (no desktop session bus): type the path.").small(),
                );
            }
        }
        let mut remove = None;
        if !self.remembered().is_empty() {
            ui.label(RichText::new("Interpreters you added").strong());
            for path in self.remembered() {
                ui.horizontal(|ui| {
                    if ui.small_button("Remove").on_hover_text(format!("Forget {}", path.display())).clicked() {
                        remove = Some(path.clone());
                    }
                    ui.label(RichText::new(path.display().to_string()).monospace());
                    let (tone, status) = added_status(shown, path);
                    ui.label(toned(ui, tone, status));
                });
            }
        }
        if let Some(p) = remove {
            self.remove(&p);
        }
        if let Some(note) = &self.settings_note {
            ui.label(toned(ui, Tone::Warn, note));
        }
    }

    fn env_card_ui(
        &mut self,
        ui: &mut Ui,
        shown: &Shown<'_>,
        kb: &Kb,
        env: &PythonEnv,
        gpus: &[GpuView],
        actions: &mut Vec<Action>,
    ) {
        // A deep probe run here stands in for the snapshot's own deep facts (this machine only).
        let ours = self.deep.get(&env.name).filter(|_| !shown.other);
        let merged;
        let env = match ours.and_then(Task::value) {
            Some(facts) => {
                merged = PythonEnv { deep: Some(facts.clone()), ..env.clone() };
                &merged
            }
            None => env,
        };
        let mut deep_clicked = false;
        egui::Frame::group(ui.style()).inner_margin(10).corner_radius(6.0).show(ui, |ui| {
            ui.set_width(ui.available_width());
            deep_clicked = self.env_header_ui(ui, shown, env);
            ui.add_space(4.0);
            let findings = shown.report.map(|r| table::env_findings(r, env)).unwrap_or_default();
            if env.frameworks.is_empty() {
                ui.label(toned(ui, Tone::Muted, "No GPU framework installed here."));
            } else {
                table::frameworks_grid_ui(ui, kb, shown.snapshot, env, gpus, &findings);
            }
            if let Some(line) = table::companions_line(env) {
                ui.add(egui::Label::new(toned(ui, Tone::Muted, line)).wrap());
            }
            if ours.is_some_and(Task::is_running) {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label(format!("Importing the frameworks in {}…", env.interpreter.as_deref().unwrap_or("?")));
                });
            }
            if let Some(e) = ours.and_then(Task::error) {
                ui.label(toned(ui, Tone::Bad, format!("The deep probe did not run: {e}")));
            }
            if let Some(d) = &env.deep {
                ui.add_space(4.0);
                let from = if ours.and_then(Task::value).is_some() {
                    "Import results"
                } else {
                    "Import results (at probe time)"
                };
                ui.label(RichText::new(from).strong());
                for (tone, line) in deep::deep_lines(d) {
                    ui.add(egui::Label::new(toned(ui, tone, line)).wrap());
                }
            }
            table::findings_ui(ui, &findings, actions);
        });
        if deep_clicked {
            self.deep_asked.push(env.name.clone());
        }
    }

    /// The environment's name, kind and Python, and its deep-probe button; true when it was clicked.
    fn env_header_ui(&self, ui: &mut Ui, shown: &Shown<'_>, env: &PythonEnv) -> bool {
        let mut clicked = false;
        ui.horizontal(|ui| {
            let name = ui.label(RichText::new(&env.name).size(15.0).strong());
            let mut about = vec![format!("Prefix: {}", env.prefix)];
            if let Some(i) = &env.interpreter {
                about.push(format!("Interpreter: {i}"));
            }
            if !env.found_by.is_empty() {
                about.push(format!("Found by: {}", env.found_by.join(", ")));
            }
            name.on_hover_text(about.join("\n"));
            badge_ui(ui, Tone::Info, kind_word(env.kind));
            if env.found_by.iter().any(|f| f == "--python") {
                badge_ui(ui, Tone::Info, "added");
            }
            if let Some(v) = &env.python_version {
                ui.label(toned(ui, Tone::Muted, format!("Python {v}")));
            }
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                let running = self.deep_running(&env.name);
                let (enabled, hover) = if shown.other {
                    (false, "The deep probe runs Python on this machine; this report is from another one")
                } else if env.interpreter.is_none() {
                    (false, "This environment has no interpreter to run")
                } else if running {
                    (false, "Running…")
                } else {
                    (true, "Import the frameworks in this interpreter and ask them what they see (may take a minute)")
                };
                let label =
                    if self.deep_result(&env.name).is_some() && !shown.other { "Deep probe again" } else { DEEP_LABEL };
                clicked = ui.add_enabled(enabled, egui::Button::new(label)).on_hover_text(hover).clicked();
                if running {
                    ui.spinner();
                }
            });
        });
        clicked
    }
}

/// The environments of a snapshot; empty when not known.
fn envs(snap: &Snapshot) -> &[PythonEnv] {
    snap.python_envs.value().map_or(&[], Vec::as_slice)
}

fn kind_word(kind: EnvKind) -> &'static str {
    match kind {
        EnvKind::Conda => "conda",
        EnvKind::Venv => "venv",
        EnvKind::Pyenv => "pyenv",
        EnvKind::System => "system",
        EnvKind::Unknown => "unknown kind",
    }
}

/// Whether the last probe found an interpreter the user added, and if not why.
fn added_status(shown: &Shown<'_>, path: &std::path::Path) -> (Tone, String) {
    let text = path.to_string_lossy().replace('\\', "/");
    let found = envs(shown.snapshot).iter().find(|e| {
        e.found_by.iter().any(|f| f == "--python")
            && (e.interpreter.as_deref() == Some(text.as_str()) || text.starts_with(e.prefix.as_str()))
    });
    if let Some(env) = found {
        return (Tone::Good, format!("found: {}", env.name));
    }
    if !shown.pending.is_empty() {
        return (Tone::Muted, "probing…".to_owned());
    }
    match shown.snapshot.unused_pythons.iter().find(|u| u.path == text) {
        Some(unused) => (Tone::Warn, format!("not used: {}", unused.reason)),
        None if !shown.live => (Tone::Muted, "used on this machine only".to_owned()),
        None => (Tone::Muted, "not probed yet".to_owned()),
    }
}
