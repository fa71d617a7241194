//! Setup: from a finding's plan, or a new environment described in a form, to an applied plan and
//! the re-check. The plans are made on a `Task` (the planners are pure but not free), applied on
//! the `gpu-doctor-apply` thread with a live log, per-step progress and Cancel, and the window's own
//! probe runs again afterwards, its findings shown beside the ones before.
//!
//! Seams, for tests and for the planners still being written: `provider` gives the plans of a
//! report's findings (`installers::plans`), `planner` the plans of a new environment
//! ([`new_environment_plans`]), `runner` carries a plan out (`installers::resolve::resolve_then_apply`:
//! resolved first and the change said in the log, an unasked major version change refused, then
//! `installers::apply::apply`).

mod form;
mod plan_view;
mod preview;
mod recheck;
mod run;
#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::time::Duration;

use egui::{RichText, Ui};
use gpu_doctor_installers::Plan;
use gpu_doctor_installers::apply::ApplyOptions;
use gpu_doctor_model::Report;

pub use form::SetupRequest;
pub use run::{RunState, Runner};

use self::recheck::Recheck;
use self::run::ApplyRun;
use crate::gui::storage::write_atomic;
use crate::gui::task::Task;
use crate::gui::theme::{Tone, toned};
use crate::gui::{Action, Shown};

/// The plans of a report's findings, each with its id (`installers::plans`).
pub type PlanProvider = fn(&Report) -> Result<Vec<Plan>, String>;
/// The plans that make a new environment for the machine of a report, one per framework, in order.
pub type NewEnvPlanner = fn(&Report, &SetupRequest) -> Result<Vec<Plan>, String>;

/// The longest one step may run: a CUDA build of a framework is gigabytes to download.
const STEP_TIMEOUT: Duration = Duration::from_secs(60 * 60);

/// The window's plan provider: the installers' planners over the knowledge base.
pub fn finding_plans(report: &Report) -> Result<Vec<Plan>, String> {
    let kb = gpu_doctor_kb::Kb::get().map_err(|e| e.to_string())?;
    Ok(gpu_doctor_installers::plans(report, kb))
}

/// The window's new-environment planner: one `installers::planners::setup` plan per framework,
/// in order; only the first creates the environment, the others install into it.
pub fn new_environment_plans(report: &Report, request: &SetupRequest) -> Result<Vec<Plan>, String> {
    use gpu_doctor_installers::planners::setup;
    let kb = gpu_doctor_kb::Kb::get().map_err(|e| e.to_string())?;
    let Some(first) = request.frameworks.first() else { return Ok(Vec::new()) };
    let mut base =
        setup::SetupRequest::new(*first, request.env.clone(), request.tool.clone(), None, request.find_links.clone())?;
    // The environment is made on this machine, from its python3: its version, asked of it, where the
    // report does not list one for it (a launcher shim such as pyenv's).
    base.python_version = gpu_doctor_installers::envtool::python_version(&base.python);
    setup::setup_plans(&report.snapshot, kb, &base, &request.frameworks)
}

/// What plans the page was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Want {
    /// The plan of a finding, by plan id.
    Finding(String),
    /// A new environment.
    NewEnv(SetupRequest),
}

/// Plans on screen, and the report they were made from.
#[derive(Debug)]
pub struct Planned {
    /// The plans, in the order they are applied.
    pub plans: Vec<Plan>,
    /// The report they were made from: the "before" of the re-check.
    pub report: Report,
    /// It was another machine's report: the plans are shown, never applied here.
    pub other: bool,
}

/// The Setup page's state.
#[derive(Debug)]
pub struct SetupPage {
    /// The new-environment form.
    pub form: form::Form,
    /// Where a finding's plan comes from.
    pub provider: PlanProvider,
    /// Where a new environment's plans come from.
    pub planner: NewEnvPlanner,
    /// What applies a plan.
    pub runner: Runner,
    /// The plans on screen.
    pub planned: Task<Planned>,
    /// The apply run, while and after it runs.
    pub run: Option<ApplyRun>,
    /// The re-check after the run.
    pub recheck: Option<Recheck>,
    /// The last root command copied.
    pub copied: Option<String>,
    /// The last root script saved: its path (`None` when the dialog was cancelled).
    pub script: Task<Option<PathBuf>>,
    /// Where the runner's logs and backups go (the data folder's `installs/`); `None` without one.
    install_dir: Option<PathBuf>,
    wanted: Option<Want>,
    /// The first finding's plan was opened by itself (once per page, on the first report with one).
    opened_first: bool,
    form_error: Option<String>,
    dialogs: bool,
    /// What a new environment would get, and the report it was chosen for (its address and time).
    preview: Option<((usize, u64), Vec<preview::Line>)>,
}

impl Default for SetupPage {
    fn default() -> Self {
        Self {
            form: form::Form::default(),
            provider: finding_plans,
            planner: new_environment_plans,
            runner: gpu_doctor_installers::resolve::resolve_then_apply,
            planned: Task::default(),
            run: None,
            recheck: None,
            copied: None,
            script: Task::default(),
            install_dir: None,
            wanted: None,
            opened_first: false,
            form_error: None,
            dialogs: crate::gui::native_dialogs(),
            preview: None,
        }
    }
}

impl SetupPage {
    /// Looks for the tools on PATH; the runner keeps its logs and backups in `install_dir`.
    pub fn start(&mut self, ctx: &egui::Context, install_dir: Option<PathBuf>) {
        self.install_dir = install_dir;
        self.form.start(ctx);
    }

    /// Whether the native dialogs are used (tests turn them off).
    #[cfg(test)]
    pub fn set_dialogs(&mut self, on: bool) {
        self.dialogs = on;
    }

    /// Shows the plan `id` of a finding (made in the next `logic` step).
    pub fn open_plan(&mut self, id: String) {
        self.wanted = Some(Want::Finding(id));
    }

    /// Whether a job of the page is under way.
    pub fn busy(&self) -> bool {
        self.form.busy()
            // Plans asked for start in the next `logic` step: under way already.
            || self.wanted.is_some()
            || self.planned.is_running()
            || self.run.as_ref().is_some_and(ApplyRun::is_running)
            || self.script.is_running()
    }

    /// Takes in the jobs' results; makes the plans asked for; asks for the re-check after a run.
    pub fn logic(&mut self, ctx: &egui::Context, shown: &Shown<'_>, actions: &mut Vec<Action>) {
        self.form.logic();
        self.script.poll();
        if self.planned.poll() {
            // New plans: the last run and re-check were about the old ones.
            self.run = None;
            self.recheck = None;
        }
        // One plan at a time, and never new plans under a run: they would replace the ones it applies.
        let running = self.planned.is_running() || self.run.as_ref().is_some_and(ApplyRun::is_running);
        if !running
            && let Some(report) = shown.report
            && let Some(want) = self.wanted.take()
        {
            self.make_plans(ctx, report.clone(), shown.other, want);
        }
        if let Some(run) = &mut self.run
            && run.poll()
            && let Some(planned) = self.planned.value()
        {
            self.recheck = Some(Recheck::new(planned.report.clone()));
            actions.push(Action::Rerun);
        }
        if let Some(r) = &mut self.recheck {
            r.logic(shown);
        }
    }

    fn make_plans(&mut self, ctx: &egui::Context, report: Report, other: bool, want: Want) {
        let (provider, planner) = (self.provider, self.planner);
        self.planned.spawn("plan", ctx, move || {
            let plans = match want {
                Want::Finding(id) => {
                    let plan = provider(&report)?.into_iter().find(|p| p.id == id);
                    vec![plan.ok_or_else(|| format!("No plan {id} for this machine's findings."))?]
                }
                Want::NewEnv(request) => planner(&report, &request)?,
            };
            Ok(Planned { plans, report, other })
        });
    }

    /// Draws the page.
    pub fn setup_ui(&mut self, ui: &mut Ui, shown: &Shown<'_>) {
        // A page opened on a machine whose findings have plans shows the first one: asked for
        // when the page is first drawn, so a window that never shows it plans nothing.
        if !self.opened_first
            && self.wanted.is_none()
            && self.planned.value().is_none()
            && let Some(id) =
                shown.report.and_then(|r| r.findings.iter().find_map(|f| f.plan.as_ref())).map(|p| p.id.clone())
        {
            self.opened_first = true;
            self.wanted = Some(Want::Finding(id));
            ui.ctx().request_repaint();
        }
        ui.heading("Set up an environment");
        ui.label(toned(
            ui,
            Tone::Muted,
            "gpu-doctor runs only the steps marked RUN, WRITE and VERIFY, as you; root steps are shown for you to run.",
        ));
        ui.add_space(6.0);
        self.findings_ui(ui, shown);
        self.form_ui(ui, shown);
        ui.add_space(8.0);
        if self.planned.is_running() {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Making the plan…");
            });
        }
        if let Some(e) = self.planned.error() {
            ui.label(toned(ui, Tone::Bad, e));
        }
        if self.planned.value().is_none() {
            return;
        }
        // What to do comes first, then the plans it acts on.
        self.apply_ui(ui, shown);
        self.root_script_ui(ui);
        if let (Some(recheck), Some(planned)) = (&self.recheck, self.planned.value()) {
            ui.add_space(8.0);
            let answers: Vec<String> = planned.plans.iter().flat_map(|p| p.answers.iter().cloned()).collect();
            recheck::recheck_ui(ui, recheck, &answers);
        }
        ui.add_space(8.0);
        let Some(planned) = self.planned.value() else { return };
        let shell = gpu_doctor_installers::planners::shell_of(&planned.report);
        for (i, plan) in planned.plans.iter().enumerate() {
            let progress = self.run.as_ref().and_then(|r| r.steps.get(i)).map(Vec::as_slice);
            let mut state = plan_view::ViewState { copied: &mut self.copied, progress };
            plan_view::plan_ui(ui, plan, shell, &mut state);
        }
    }

    /// The findings that have a plan, each with a button that shows it.
    fn findings_ui(&mut self, ui: &mut Ui, shown: &Shown<'_>) {
        let Some(report) = shown.report else { return };
        let planned: Vec<(&str, &str)> = report
            .findings
            .iter()
            .filter_map(|f| f.plan.as_ref().map(|p| (p.id.as_str(), f.summary.as_str())))
            .filter(|(id, _)| !id.is_empty())
            .collect();
        if planned.is_empty() {
            return;
        }
        egui::CollapsingHeader::new(RichText::new("Fixes for this machine's findings").strong())
            .default_open(true)
            .show(ui, |ui| {
                for (id, summary) in planned {
                    ui.horizontal(|ui| {
                        let busy = self.planned.is_running() || self.run.as_ref().is_some_and(ApplyRun::is_running);
                        if ui.add_enabled(!busy, egui::Button::new("Show plan")).clicked() {
                            self.wanted = Some(Want::Finding(id.to_owned()));
                        }
                        ui.label(summary);
                    });
                }
            });
    }

    fn form_ui(&mut self, ui: &mut Ui, shown: &Shown<'_>) {
        egui::CollapsingHeader::new(RichText::new("A new environment").strong()).default_open(true).show(ui, |ui| {
            self.form.form_ui(ui);
            ui.horizontal(|ui| {
                let running = self.run.as_ref().is_some_and(ApplyRun::is_running);
                // Not while the tool search runs: the plan is made for the tools it finds.
                let ready = shown.report.is_some() && !self.planned.is_running() && !running && !self.form.busy();
                if ui.add_enabled(ready, egui::Button::new("Make the plan")).clicked() {
                    match self.form.request() {
                        Ok(request) => {
                            self.form_error = None;
                            self.wanted = Some(Want::NewEnv(request));
                        }
                        Err(e) => self.form_error = Some(e),
                    }
                }
                if let Some(e) = &self.form_error {
                    ui.label(toned(ui, Tone::Bad, e));
                }
            });
            // Until a plan is on screen: what each framework would get here.
            if let (Some(report), None) = (shown.report, self.planned.value()) {
                let key = (std::ptr::from_ref(report) as usize, report.snapshot.taken_at_unix_secs);
                if self.preview.as_ref().is_none_or(|(k, _)| *k != key) {
                    self.preview = Some((key, preview::lines(report)));
                }
                if let Some((_, lines)) = &self.preview {
                    preview::preview_ui(ui, lines);
                }
            }
        });
    }

    /// Apply and Cancel, the run's state and its log.
    fn apply_ui(&mut self, ui: &mut Ui, shown: &Shown<'_>) {
        let running = self.run.as_ref().is_some_and(ApplyRun::is_running);
        let planned_other = self.planned.value().is_some_and(|p| p.other);
        let why_not = if !shown.live || shown.other || planned_other {
            Some("Apply changes this machine: not offered for a recorded or another machine's report.")
        } else if self.install_dir.is_none() {
            Some("No data folder for the install log and the package-list backup.")
        } else {
            None
        };
        ui.horizontal(|ui| {
            let apply = egui::Button::new(RichText::new("Apply").strong());
            let checking = !shown.pending.is_empty();
            let r = ui.add_enabled(why_not.is_none() && !running && !checking, apply);
            if r.on_disabled_hover_text(why_not.unwrap_or("A run or a check is under way.")).clicked() {
                self.start_run(ui.ctx());
            }
            if running
                && ui.button("Cancel").clicked()
                && let Some(run) = &mut self.run
            {
                run.cancel();
            }
            if let Some(run) = &self.run {
                let (tone, text) = match run.state {
                    RunState::Running => (Tone::Info, "Applying…"),
                    RunState::Cancelling => (Tone::Warn, "Cancelling…"),
                    RunState::Finished => (Tone::Good, "Applied."),
                    RunState::Failed => (Tone::Bad, "Stopped at a failed step: see the log and each step's undo."),
                    RunState::Cancelled => (Tone::Warn, "Cancelled: the steps not run are marked."),
                };
                if running {
                    ui.spinner();
                }
                ui.label(toned(ui, tone, text));
            }
        });
        if let Some(why) = why_not {
            ui.label(toned(ui, Tone::Muted, why));
        }
        if let Some(run) = self.run.as_ref().filter(|r| !r.log.is_empty()) {
            egui::Frame::new().fill(ui.visuals().extreme_bg_color).inner_margin(6).show(ui, |ui| {
                egui::ScrollArea::vertical().id_salt("apply-log").max_height(220.0).stick_to_bottom(true).show(
                    ui,
                    |ui| {
                        ui.set_width(ui.available_width());
                        for line in &run.log {
                            ui.label(RichText::new(line).monospace());
                        }
                    },
                );
            });
        }
    }

    fn start_run(&mut self, ctx: &egui::Context) {
        let (Some(planned), Some(dir)) = (self.planned.value(), &self.install_dir) else { return };
        let opts = ApplyOptions { log_dir: dir.clone(), step_timeout: STEP_TIMEOUT };
        self.recheck = None;
        self.run = match ApplyRun::start(ctx, planned.plans.clone(), opts, self.runner) {
            Ok(run) => Some(run),
            Err(e) => {
                self.form_error = Some(e);
                None
            }
        };
    }

    /// "Save root script…" for each plan with root steps.
    fn root_script_ui(&mut self, ui: &mut Ui) {
        let Some(planned) = self.planned.value() else { return };
        let scripts: Vec<(String, String)> =
            planned.plans.iter().filter_map(|p| p.root_script().map(|s| (p.id.clone(), s))).collect();
        for (id, script) in scripts {
            ui.horizontal(|ui| {
                let running = self.script.is_running();
                if ui.add_enabled(!running, egui::Button::new("Save root script…")).clicked() {
                    self.save_script(ui.ctx(), &id, script);
                }
                match (self.script.value(), self.script.error()) {
                    (_, Some(e)) => ui.label(toned(ui, Tone::Bad, e)),
                    (Some(Some(path)), None) => {
                        ui.label(format!("Saved {}: review it, then run it as root.", path.display()))
                    }
                    _ => ui.label(toned(ui, Tone::Muted, "the root steps as a script to review and run as root")),
                };
            });
        }
    }

    /// Writes a plan's root script: where the save dialog says, or without a dialog into the
    /// data folder's `installs/`.
    fn save_script(&mut self, ctx: &egui::Context, id: &str, script: String) {
        let name = format!("gpu-doctor-{id}-root.sh");
        let fallback = self.install_dir.as_ref().map(|d| d.join(&name));
        let dialogs = self.dialogs;
        self.script.spawn("save-root-script", ctx, move || {
            let path = if dialogs {
                match rfd::FileDialog::new().set_title("Save the root steps").set_file_name(name).save_file() {
                    Some(p) => p,
                    None => return Ok(None),
                }
            } else {
                fallback.ok_or("No data folder to save the script in.")?
            };
            write_atomic(&path, script.as_bytes())?;
            Ok(Some(path))
        });
    }
}
