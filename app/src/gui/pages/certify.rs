//! Certify: pick a level, start, watch each step, cancel, read the verdict and every check, save
//! the certificate (`ops::certify`, the same run as `gpu-doctor certify`). The run and the saving
//! happen on threads of their own; the page only draws and polls.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Result;
use egui::{RichText, Ui};
use gpu_doctor_model::certify::{Certificate, CheckVerdict, Level, Verdict};

use super::Page;
use crate::gui::task::Task;
use crate::gui::theme::{Tone, toned};
use crate::gui::{Action, Shown};
use crate::ops::certify::{Certify, Machine};

/// What runs a certification: `ops::certify::run`; tests hand in one that waits to be cancelled.
pub(crate) type Runner = fn(&Machine<'_>, &Certify, &mut dyn FnMut(&str)) -> Result<Certificate>;

/// The page's state.
#[derive(Debug)]
pub struct CertifyPage {
    level: Level,
    job: Task<Certificate>,
    cancel: Arc<AtomicBool>,
    steps: Arc<Mutex<Vec<String>>>,
    saved: Task<PathBuf>,
    /// The folder Save writes a certificate folder into (the data folder's `certificates`).
    pub(crate) save_dir: Option<PathBuf>,
    pub(crate) runner: Runner,
}

impl Default for CertifyPage {
    fn default() -> Self {
        Self {
            level: Level::Quick,
            job: Task::default(),
            cancel: Arc::default(),
            steps: Arc::default(),
            saved: Task::default(),
            save_dir: None,
            runner: crate::ops::certify::run,
        }
    }
}

/// How long a level takes, for the level list.
fn expected(level: Level) -> &'static str {
    match level {
        Level::Software => "seconds",
        Level::Quick => "about 2 minutes a GPU",
        Level::Stress => "about 15 minutes",
        Level::Soak => "an hour",
    }
}

fn tone(v: Verdict) -> Tone {
    match v {
        Verdict::Pass => Tone::Good,
        Verdict::PassWithWarnings => Tone::Warn,
        Verdict::Fail => Tone::Bad,
        Verdict::Incomplete => Tone::Muted,
    }
}

fn check_tone(v: CheckVerdict) -> Tone {
    match v {
        CheckVerdict::Pass => Tone::Good,
        CheckVerdict::Info => Tone::Info,
        CheckVerdict::Warn => Tone::Warn,
        CheckVerdict::Fail => Tone::Bad,
        CheckVerdict::NotRun => Tone::Muted,
    }
}

impl CertifyPage {
    /// Whether a run or a save is under way.
    pub fn busy(&self) -> bool {
        self.job.is_running() || self.saved.is_running()
    }

    /// Takes in what the run and the save gave.
    pub fn logic(&mut self) {
        self.job.poll();
        self.saved.poll();
    }

    /// The last certificate, once a run finished.
    #[cfg(test)]
    pub fn certificate(&self) -> Option<&Certificate> {
        self.job.value()
    }

    /// Whether the last run was asked to stop.
    #[cfg(test)]
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    fn start(&mut self, ctx: &egui::Context, shown: &Shown<'_>) {
        let host = Arc::clone(shown.host);
        let options = shown.options.clone();
        let live = shown.live;
        self.cancel = Arc::default();
        let how = Certify {
            level: self.level,
            duration: None,
            pythons: Vec::new(),
            kept: None,
            redact: false,
            cancel: Arc::clone(&self.cancel),
        };
        let steps = Arc::clone(&self.steps);
        if let Ok(mut s) = steps.lock() {
            s.clear();
        }
        let runner = self.runner;
        self.saved.clear();
        self.job.spawn("certify", ctx, move || {
            let machine = Machine {
                host: host.as_ref(),
                recorded: Some(&options),
                replay: (!live).then_some(Path::new("the recording on screen")),
            };
            runner(&machine, &how, &mut |step| {
                if let Ok(mut s) = steps.lock() {
                    s.push(step.to_owned());
                }
            })
            .map_err(|e| format!("{e:#}"))
        });
    }

    fn save(&mut self, ctx: &egui::Context) {
        let (Some(cert), Some(dir)) = (self.job.value().cloned(), self.save_dir.clone()) else { return };
        self.saved.spawn("certificate", ctx, move || {
            let dir = dir.join(format!("certificate-{}", cert.started_at_unix_secs));
            for (name, text) in crate::render::certificate::files(&cert).map_err(|e| format!("{e:#}"))? {
                crate::gui::storage::write_atomic(&dir.join(name), text.as_bytes())?;
            }
            Ok(dir)
        });
    }

    /// Draws the page.
    pub fn certify_ui(&mut self, ui: &mut Ui, shown: &Shown<'_>, actions: &mut Vec<Action>) {
        ui.heading("Certify");
        ui.label(
            "One run from the checks to a verdict, kept as a certificate with every check's measurement, \
             threshold and source. Certify changes nothing on this machine.",
        );
        if shown.other {
            ui.label("Certify measures this machine (or its recording), not a report from another machine.");
            return;
        }
        let running = self.job.is_running();
        ui.add_enabled_ui(!running, |ui| {
            for level in Level::ALL {
                let text = format!("{} {} ({})", level.number(), level.name(), expected(level));
                ui.radio_value(&mut self.level, level, text);
            }
        });
        if self.level >= Level::Quick {
            let why = if shown.live {
                "Levels 2–4 have never run on a GPU; without one they end INCOMPLETE and say why."
            } else {
                "A recording cannot be measured: levels 2–4 end INCOMPLETE here."
            };
            ui.label(toned(ui, Tone::Muted, why));
        }
        ui.horizontal(|ui| {
            let again = if self.job.value().is_some() { "Certify again" } else { "Start certify" };
            let ready = shown.report.is_some() && !running;
            if ui.add_enabled(ready, egui::Button::new(again)).clicked() {
                self.start(ui.ctx(), shown);
            }
            if running {
                ui.spinner();
                if ui.button("Cancel").clicked() {
                    self.cancel.store(true, Ordering::Relaxed);
                }
            }
        });
        if running && let Ok(steps) = self.steps.lock() {
            for step in steps.iter() {
                ui.label(step);
            }
        }
        if let Some(e) = self.job.error() {
            ui.label(toned(ui, Tone::Bad, format!("The run failed: {e}")));
        }
        let Some(cert) = self.job.value().cloned() else { return };
        ui.separator();
        self.result_ui(ui, &cert, actions);
    }

    fn result_ui(&mut self, ui: &mut Ui, cert: &Certificate, actions: &mut Vec<Action>) {
        ui.label(toned(ui, tone(cert.verdict), crate::render::certificate::headline(cert)).size(20.0).strong());
        for r in &cert.reasons {
            ui.label(r);
        }
        ui.horizontal(|ui| {
            if self.save_dir.is_some()
                && ui.add_enabled(!self.saved.is_running(), egui::Button::new("Save certificate")).clicked()
            {
                self.save(ui.ctx());
            }
            if cert.verdict == Verdict::Fail && ui.button("Fix it").clicked() {
                actions.push(Action::Goto(Page::Setup));
            }
        });
        if let Some(dir) = self.saved.value() {
            ui.label(format!("Saved certificate.json, .md and .html in {}", dir.display()));
        }
        if let Some(e) = self.saved.error() {
            ui.label(toned(ui, Tone::Bad, e));
        }
        for stage in &cert.stages {
            ui.label(RichText::new(format!("{} ({:.1} s)", stage.stage.label(), stage.duration_secs)).strong());
            egui::Grid::new(("certify-stage", stage.stage.label())).striped(true).show(ui, |ui| {
                for c in &stage.checks {
                    ui.label(toned(ui, check_tone(c.verdict), c.verdict.label()));
                    ui.label(&c.subject);
                    ui.label(c.measured.describe());
                    ui.end_row();
                }
            });
        }
    }
}

#[cfg(test)]
mod tests;
