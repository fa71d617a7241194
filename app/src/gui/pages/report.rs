//! Report: preview, export (JSON, Markdown, HTML) through the native save dialog or a fallback
//! path, copy to the clipboard, redaction; and reading another machine from a file or pasted text.

use std::path::PathBuf;

use egui::{RichText, Ui};
use gpu_doctor_model::Report;
use gpu_doctor_model::bench::run::BenchRun;

use crate::gui::storage::write_atomic;
use crate::gui::task::Task;
use crate::gui::theme::{Tone, toned};
use crate::gui::{Action, Shown};
use crate::render::document::Format;

/// The Report page's state.
#[derive(Debug)]
pub struct ReportPage {
    /// The export format.
    pub format: Format,
    /// Remove user and host names, home paths, serial numbers and UUIDs before export or copy.
    pub redact: bool,
    /// Where "Save to this path" writes; prefilled with a file in the home folder.
    pub fallback_path: String,
    /// Text pasted from another machine.
    pub paste: String,
    /// The last export: the path written.
    pub export: Task<PathBuf>,
    /// The native save dialog: the path picked, or `None` when cancelled.
    dialog: Task<Option<PathBuf>>,
    /// The native open dialog for another machine's report.
    open_dialog: Task<Option<PathBuf>>,
    /// Ctrl+S was pressed; handled in the next `logic` step.
    export_requested: bool,
    /// The document for the preview and the clipboard, and what it was made from.
    preview: Option<(PreviewKey, Result<String, String>)>,
    /// Whether a native dialog can be shown (an XDG desktop portal needs a session bus).
    dialogs: bool,
}

/// What a preview depends on.
#[derive(Debug, Clone, PartialEq)]
struct PreviewKey {
    taken_at: u64,
    findings: usize,
    other: bool,
    format: Format,
    redact: bool,
    bench_started: Option<u64>,
}

impl Default for ReportPage {
    fn default() -> Self {
        let home = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE")).map(PathBuf::from);
        let fallback = home.unwrap_or_else(std::env::temp_dir).join("gpu-doctor-report.md");
        Self {
            format: Format::Md,
            redact: false,
            fallback_path: fallback.display().to_string(),
            paste: String::new(),
            export: Task::default(),
            dialog: Task::default(),
            open_dialog: Task::default(),
            export_requested: false,
            preview: None,
            dialogs: crate::gui::native_dialogs(),
        }
    }
}

/// The file extension of a format.
fn extension(format: Format) -> &'static str {
    match format {
        Format::Json => "json",
        Format::Md => "md",
        Format::Html => "html",
    }
}

/// The document to export (shared with `gpu-doctor report`).
fn document(report: &Report, bench: Option<&BenchRun>, format: Format, redact: bool) -> Result<String, String> {
    crate::render::document::document(report, bench, format, redact).map_err(|e| format!("{e:#}"))
}

impl ReportPage {
    /// Whether the native dialogs are used (tests turn them off to use the fallback path).
    #[cfg(test)]
    pub fn set_dialogs(&mut self, on: bool) {
        self.dialogs = on;
    }

    /// Ctrl+S: export with the current settings.
    pub fn request_export(&mut self) {
        self.export_requested = true;
    }

    /// Whether an export or a dialog is under way.
    pub fn busy(&self) -> bool {
        self.export.is_running() || self.dialog.is_running() || self.open_dialog.is_running()
    }

    /// Polls the dialogs and the export; starts a requested export.
    pub fn logic(
        &mut self,
        ctx: &egui::Context,
        shown: &Shown<'_>,
        bench: Option<&BenchRun>,
        actions: &mut Vec<Action>,
    ) {
        self.export.poll();
        if self.open_dialog.poll()
            && let Some(Some(path)) = self.open_dialog.value()
        {
            actions.push(Action::OpenOther(path.clone()));
            self.open_dialog.clear();
        }
        if self.dialog.poll()
            && let Some(Some(path)) = self.dialog.value().cloned()
        {
            self.fallback_path = path.display().to_string();
            self.save(ctx, shown, bench, path);
        }
        if std::mem::take(&mut self.export_requested) {
            if self.dialogs {
                self.open_save_dialog(ctx);
            } else {
                let path = PathBuf::from(&self.fallback_path);
                self.save(ctx, shown, bench, path);
            }
        }
    }

    fn open_save_dialog(&mut self, ctx: &egui::Context) {
        let name = format!("gpu-doctor-report.{}", extension(self.format));
        self.dialog.spawn("save-dialog", ctx, move || {
            Ok(rfd::FileDialog::new().set_title("Export the gpu-doctor report").set_file_name(name).save_file())
        });
    }

    /// Renders and writes the document on a worker thread.
    fn save(&mut self, ctx: &egui::Context, shown: &Shown<'_>, bench: Option<&BenchRun>, path: PathBuf) {
        let Some(report) = shown.report.cloned() else { return };
        let (bench, format, redact) = (bench.cloned(), self.format, self.redact);
        self.export.spawn("export", ctx, move || {
            let text = document(&report, bench.as_ref(), format, redact)?;
            write_atomic(&path, text.as_bytes())?;
            Ok(path)
        });
    }

    /// Draws the page.
    pub fn report_ui(&mut self, ui: &mut Ui, shown: &Shown<'_>, bench: Option<&BenchRun>, actions: &mut Vec<Action>) {
        ui.heading("Report");
        let Some(report) = shown.report else {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("The report is ready once the probes are done…");
            });
            self.other_machine_ui(ui, actions);
            return;
        };
        self.export_ui(ui, shown, bench);
        ui.add_space(8.0);
        self.other_machine_ui(ui, actions);
        ui.add_space(8.0);
        self.preview_ui(ui, report, shown.other, bench);
    }

    fn export_ui(&mut self, ui: &mut Ui, shown: &Shown<'_>, bench: Option<&BenchRun>) {
        ui.horizontal(|ui| {
            ui.label("Format:");
            let before = self.format;
            ui.radio_value(&mut self.format, Format::Md, "Markdown");
            ui.radio_value(&mut self.format, Format::Json, "JSON");
            ui.radio_value(&mut self.format, Format::Html, "HTML")
                .on_hover_text("One self-contained page with the plots inline; opens offline in any browser");
            if self.format != before {
                let path = PathBuf::from(&self.fallback_path).with_extension(extension(self.format));
                self.fallback_path = path.display().to_string();
            }
            ui.separator();
            ui.checkbox(&mut self.redact, "Redact personal data")
                .on_hover_text("Replace the user name, host name, home folders, serial numbers and UUIDs");
        });
        ui.horizontal(|ui| {
            let save = ui
                .add_enabled(self.dialogs && !self.busy(), egui::Button::new("Save as… (Ctrl+S)"))
                .on_disabled_hover_text("No file dialog here (no desktop portal); use the path below");
            if save.clicked() {
                self.open_save_dialog(ui.ctx());
            }
            if ui.button("Copy to clipboard").clicked()
                && let Some((_, Ok(text))) = &self.preview
            {
                ui.ctx().copy_text(text.clone());
            }
            if let Some(run) = bench {
                ui.label(toned(ui, Tone::Muted, format!("includes the benchmark run of {} test(s)", run.tests.len())));
            }
        });
        ui.horizontal(|ui| {
            ui.label("Or save to:");
            ui.add(egui::TextEdit::singleline(&mut self.fallback_path).desired_width(420.0));
            if ui.add_enabled(!self.busy(), egui::Button::new("Save to this path")).clicked() {
                let path = PathBuf::from(&self.fallback_path);
                self.save(ui.ctx(), shown, bench, path);
            }
        });
        if self.export.is_running() {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Writing…");
            });
        } else if let Some(e) = self.export.error() {
            ui.label(toned(ui, Tone::Bad, format!("Not saved: {e}")));
        } else if let Some(path) = self.export.value() {
            ui.label(toned(ui, Tone::Good, format!("Saved {}", path.display())));
        }
    }

    fn other_machine_ui(&mut self, ui: &mut Ui, actions: &mut Vec<Action>) {
        egui::CollapsingHeader::new("Diagnose another machine").default_open(false).show(ui, |ui| {
            ui.label(
                "Open a gpu-doctor report or paste text from another machine (collect_env, nvidia-smi, nvcc --version, \
                 pip list, conda list, tracebacks). It is shown in these pages, marked as not this machine.",
            );
            ui.horizontal(|ui| {
                if ui.add_enabled(self.dialogs, egui::Button::new("Open report…")).clicked() {
                    self.open_dialog.spawn("open-dialog", ui.ctx(), || {
                        Ok(rfd::FileDialog::new().set_title("Open a report or text from another machine").pick_file())
                    });
                }
                if !self.dialogs {
                    ui.label(toned(ui, Tone::Muted, "(no file dialog here: paste the text below)"));
                }
            });
            ui.add(
                egui::TextEdit::multiline(&mut self.paste)
                    .hint_text("Paste collect_env, nvidia-smi, pip list, error lines…")
                    .desired_rows(6)
                    .desired_width(f32::INFINITY)
                    .code_editor(),
            );
            if ui.add_enabled(!self.paste.trim().is_empty(), egui::Button::new("Diagnose pasted text")).clicked() {
                actions.push(Action::Paste(self.paste.clone()));
            }
        });
    }

    fn preview_ui(&mut self, ui: &mut Ui, report: &Report, other: bool, bench: Option<&BenchRun>) {
        let key = PreviewKey {
            taken_at: report.snapshot.taken_at_unix_secs,
            findings: report.findings.len(),
            other,
            format: self.format,
            redact: self.redact,
            bench_started: bench.map(|b| b.started_at_unix_secs),
        };
        if self.preview.as_ref().is_none_or(|(k, _)| *k != key) {
            self.preview = Some((key, document(report, bench, self.format, self.redact)));
        }
        ui.label(RichText::new("Preview").strong());
        match self.preview.as_ref().map(|(_, d)| d) {
            Some(Ok(text)) => {
                egui::Frame::new().fill(ui.visuals().extreme_bg_color).inner_margin(8).show(ui, |ui| {
                    ui.set_width(ui.available_width());
                    ui.add(egui::Label::new(RichText::new(text.as_str()).monospace().size(12.0)).wrap());
                });
            }
            Some(Err(e)) => {
                ui.label(toned(ui, Tone::Bad, e));
            }
            None => {}
        }
    }
}
