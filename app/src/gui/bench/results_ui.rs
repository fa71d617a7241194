//! Drawing a run's progress (a bar per planned test) and its results (the judged table, tests that
//! did not run, GPU-against-CPU ratios, clocks under load, findings). Words come from `bench`, so
//! the window says what the terminal table says.

use std::time::Duration;

use egui::{ProgressBar, RichText, Ui};
use gpu_doctor_model::bench::judgement::Verdict;
use gpu_doctor_model::bench::protocol::FailureKind;
use gpu_doctor_model::bench::run::{BenchRun, TestStatus};

use super::job::RunState;
use super::progress::{RunProgress, TestState};
use crate::gui::theme::{Tone, toned};
use crate::render::bench::{judged_rows, not_run, show};

/// A test's label for the window, e.g. `host → device copy`.
pub fn test_label(t: gpu_doctor_model::bench::plan::TestKind) -> String {
    t.label().to_owned()
}

/// The colour of a verdict.
pub fn verdict_tone(v: Verdict) -> Tone {
    match v {
        Verdict::Normal => Tone::Good,
        Verdict::Low => Tone::Warn,
        Verdict::Failed => Tone::Bad,
        Verdict::AboveTheory => Tone::Info,
        Verdict::NoReference => Tone::Muted,
    }
}

/// The colour of a test's state.
fn state_tone(s: &TestState) -> Option<Tone> {
    match s {
        TestState::Waiting | TestState::Running { .. } => None,
        TestState::Done { checks_failed: false, .. } => Some(Tone::Good),
        TestState::Done { checks_failed: true, .. } => Some(Tone::Bad),
        TestState::Failed { kind: FailureKind::Cancelled, .. } => Some(Tone::Muted),
        TestState::Failed { .. } => Some(Tone::Bad),
    }
}

/// The first `max` characters of `text`, with `…` when cut.
fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// Seconds as `42 s` or `3 min 05 s`.
pub fn elapsed_text(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 { format!("{s} s") } else { format!("{} min {:02} s", s / 60, s % 60) }
}

/// The overall line and a bar per planned test. `elapsed` is the run's time so far (or in all).
pub fn progress_ui(ui: &mut Ui, progress: &RunProgress, state: RunState, elapsed: Duration) {
    ui.horizontal(|ui| {
        let running = matches!(state, RunState::Running | RunState::Cancelling);
        if running {
            ui.spinner();
        }
        let what = match state {
            RunState::Running => "Running",
            RunState::Cancelling => "Cancelling",
            RunState::Cancelled => "Cancelled after",
            RunState::Failed => "Stopped after",
            RunState::Finished | RunState::Idle => "Took",
        };
        let mut line = format!("{what} {}", elapsed_text(elapsed));
        if let Some(name) = progress.device().and_then(|d| d.name.as_deref()) {
            line.push_str(&format!(" · {name}"));
        }
        if let Some(t) = progress.current().filter(|_| running) {
            line.push_str(&format!(" · now: {}", test_label(t)));
        }
        ui.label(RichText::new(line).strong());
        if running {
            ui.add(ProgressBar::new(progress.overall()).desired_width(200.0).show_percentage());
        }
    });
    egui::Grid::new("bench-progress").num_columns(3).spacing([12.0, 4.0]).show(ui, |ui| {
        for t in &progress.tests {
            ui.label(test_label(t.test)).on_hover_text(format!("--tests {}", t.test.name()));
            let mut bar = ProgressBar::new(t.state.fraction()).desired_width(300.0).text(t.state.text());
            if let Some(tone) = state_tone(&t.state) {
                bar = bar.fill(tone.fill(ui).gamma_multiply(3.0));
            }
            if matches!(t.state, TestState::Running { .. }) {
                bar = bar.animate(true);
            }
            ui.add(bar);
            match &t.state {
                TestState::Failed { kind, reason } if *kind != FailureKind::Cancelled => {
                    ui.label(toned(ui, Tone::Bad, shorten(reason, 90))).on_hover_text(reason);
                }
                _ => {
                    ui.label("");
                }
            }
            ui.end_row();
        }
    });
}

/// The judged table and what follows it.
pub fn results_ui(ui: &mut Ui, run: &BenchRun) {
    let rows = judged_rows(run);
    let failed: Vec<_> = run.tests.iter().filter(|t| t.status == TestStatus::Failed && t.failure.is_some()).collect();
    if rows.is_empty() && failed.is_empty() {
        ui.label(toned(ui, Tone::Muted, "No test produced a measurement."));
    }
    if !rows.is_empty() || !failed.is_empty() {
        egui::Grid::new("bench-results").num_columns(6).striped(true).spacing([14.0, 4.0]).show(ui, |ui| {
            for h in ["Test", "Measurement", "Measured", "Expected", "%", "Verdict"] {
                ui.label(RichText::new(h).strong());
            }
            ui.end_row();
            for r in &rows {
                ui.label(r.test.name()).on_hover_text(test_label(r.test));
                ui.label(&r.measurement);
                ui.label(RichText::new(&r.measured).monospace());
                ui.label(RichText::new(&r.expected).monospace());
                ui.label(RichText::new(&r.percent).monospace());
                ui.label(toned(ui, verdict_tone(r.verdict), &r.verdict_text).strong()).on_hover_text(&r.comment);
                ui.end_row();
            }
            for t in &failed {
                let Some(f) = &t.failure else { continue };
                let tone = if f.kind == FailureKind::Cancelled { Tone::Muted } else { Tone::Bad };
                ui.label(t.test.name()).on_hover_text(test_label(t.test));
                ui.label(toned(ui, Tone::Muted, shorten(&f.reason, 70))).on_hover_text(&f.reason);
                ui.label("—");
                ui.label("—");
                ui.label("");
                ui.label(toned(ui, tone, format!("not run: {}", f.kind.label())).strong());
                ui.end_row();
            }
        });
    }
    details_ui(ui, run);
}

/// Checks, comparisons, clocks, findings and notes under the table.
fn details_ui(ui: &mut Ui, run: &BenchRun) {
    let checks: Vec<_> = run.tests.iter().filter_map(|t| t.result.as_ref()).flat_map(|r| &r.checks).collect();
    if !checks.is_empty() {
        ui.add_space(6.0);
        for c in checks {
            let (tone, word) = if c.passed { (Tone::Good, "✔ passed") } else { (Tone::Bad, "⚠ FAILED") };
            ui.horizontal_wrapped(|ui| {
                ui.label(toned(ui, tone, word));
                ui.label(&c.name);
                ui.label(toned(ui, Tone::Muted, &c.detail));
            });
        }
    }
    if !run.comparisons.is_empty() {
        ui.add_space(6.0);
        ui.label(RichText::new("GPU against CPU").strong());
        for c in &run.comparisons {
            let what = &c.label;
            ui.label(format!("{:.0}× — {what}: {} against {}", c.times, show(c.gpu, c.unit), show(c.cpu, c.unit)));
        }
    }
    if let Some(c) = &run.clocks_under_load {
        let tone = if c.throttled { Tone::Warn } else { Tone::Good };
        ui.add_space(6.0);
        ui.label(toned(ui, tone, format!("Clocks under load: {}", &c.summary)));
    }
    if !run.findings.is_empty() {
        ui.add_space(6.0);
        ui.label(RichText::new("Findings").strong());
        for f in &run.findings {
            ui.horizontal_wrapped(|ui| {
                crate::gui::theme::badge_ui(ui, Tone::of(f.severity), &format!("{:?}", f.severity).to_lowercase());
                ui.label(&f.summary).on_hover_text(f.evidence.join("\n"));
            });
            if let Some(fix) = &f.fix {
                ui.label(toned(ui, Tone::Muted, format!("    fix: {}", fix)));
            }
        }
    }
    let not_run = not_run(run);
    let notes: Vec<String> = run
        .tests
        .iter()
        .filter_map(|t| t.result.as_ref().map(|r| (t.test, r)))
        .flat_map(|(test, r)| r.notes.iter().map(move |n| format!("{}: {n}", test.name())))
        .chain(run.telemetry_note.iter().map(|n| format!("telemetry: {n}")))
        .chain(run.library_notes.iter().map(|n| format!("libraries: {n}")))
        .collect();
    if !notes.is_empty() || !not_run.is_empty() {
        egui::CollapsingHeader::new(format!("Notes ({})", notes.len() + not_run.len())).id_salt("bench-notes").show(
            ui,
            |ui| {
                for (why, tests) in &not_run {
                    ui.label(format!("{} did not run — {}", tests.join(", "), why));
                }
                for n in &notes {
                    ui.label(toned(ui, Tone::Muted, n));
                }
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elapsed_reads_as_minutes_and_seconds() {
        assert_eq!(elapsed_text(Duration::from_millis(42_900)), "42 s");
        assert_eq!(elapsed_text(Duration::from_secs(185)), "3 min 05 s");
    }

    #[test]
    fn text_is_shortened_on_a_character_boundary() {
        assert_eq!(shorten("ééééé", 3), "ééé…");
        assert_eq!(shorten("abc", 3), "abc");
    }

    #[test]
    fn verdicts_have_tones() {
        assert_eq!(verdict_tone(Verdict::Low), Tone::Warn);
        assert_eq!(verdict_tone(Verdict::NoReference), Tone::Muted);
    }
}
