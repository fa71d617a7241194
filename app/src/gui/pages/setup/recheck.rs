//! After applying: the checks run again (the window's own probe, `Action::Rerun`) and the findings
//! before and after are shown side by side: gone, still there, new.

use egui::{RichText, Ui};
use gpu_doctor_model::{Finding, Report};

use crate::gui::Shown;
use crate::gui::theme::{Tone, badge_ui, toned};
use crate::render::findings::severity_word;

/// The re-check after an apply run.
#[derive(Debug)]
pub struct Recheck {
    /// The report the plans were made from.
    pub before: Report,
    /// The report of the probe that ran after applying; `None` while it runs.
    pub after: Option<Report>,
    /// The window's probe was seen running (the `Rerun` asked for has started).
    seen_running: bool,
}

impl Recheck {
    /// Waits for the probe the page asked for, from `before`.
    pub fn new(before: Report) -> Self {
        Self { before, after: None, seen_running: false }
    }

    /// Follows the window's probe: it starts (probe groups pending), then ends with a new report.
    pub fn logic(&mut self, shown: &Shown<'_>) {
        if self.after.is_some() || shown.other {
            return;
        }
        if !shown.pending.is_empty() {
            self.seen_running = true;
        } else if self.seen_running {
            self.after = shown.report.cloned();
        }
    }
}

/// The findings of two reports, matched by id and summary.
#[derive(Debug, Default, PartialEq)]
pub struct Diff<'a> {
    /// Before, not after: fixed.
    pub gone: Vec<&'a Finding>,
    /// In both.
    pub still: Vec<&'a Finding>,
    /// After, not before.
    pub new: Vec<&'a Finding>,
}

/// What changed from `before` to `after`. A finding is the same when its rule and summary are (a
/// summary names the environment, package and versions it is about).
pub fn diff<'a>(before: &'a [Finding], after: &'a [Finding]) -> Diff<'a> {
    let same = |a: &Finding, b: &Finding| a.id == b.id && a.summary == b.summary;
    let mut out = Diff::default();
    for f in before {
        if after.iter().any(|a| same(a, f)) {
            out.still.push(f);
        } else {
            out.gone.push(f);
        }
    }
    out.new = after.iter().filter(|a| !before.iter().any(|b| same(a, b))).collect();
    out
}

/// Before and after, side by side; `answers` are the ids of the findings the plans were for (a
/// new environment's plans answer none).
pub fn recheck_ui(ui: &mut Ui, recheck: &Recheck, answers: &[String]) {
    ui.heading("Re-check");
    let Some(after) = &recheck.after else {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label("Running the checks again…");
        });
        return;
    };
    let d = diff(&recheck.before.findings, &after.findings);
    ui.label(format!("{} gone, {} still there, {} new.", d.gone.len(), d.still.len(), d.new.len()));
    for id in answers.iter().filter(|id| recheck.before.findings.iter().any(|f| &f.id == *id)) {
        let left = d.still.iter().chain(&d.new).find(|f| &f.id == id);
        match left {
            None => ui.label(toned(ui, Tone::Good, format!("✔ {id}: gone"))),
            Some(f) => ui.label(toned(ui, Tone::Bad, format!("✖ {id}: still there: {}", f.summary))),
        };
    }
    ui.columns(2, |cols| {
        cols[0].label(RichText::new("Before").strong());
        for f in &recheck.before.findings {
            let gone = d.gone.iter().any(|g| std::ptr::eq(*g, f));
            row_ui(&mut cols[0], f, if gone { (Tone::Good, "gone") } else { (Tone::Warn, "still there") });
        }
        cols[1].label(RichText::new("After").strong());
        for f in &after.findings {
            let new = d.new.iter().any(|n| std::ptr::eq(*n, f));
            row_ui(&mut cols[1], f, if new { (Tone::Bad, "new") } else { (Tone::Warn, "still there") });
        }
        if after.findings.is_empty() {
            cols[1].label(toned(&cols[1], Tone::Good, "Nothing to fix: every rule passed."));
        }
    });
}

fn row_ui(ui: &mut Ui, f: &Finding, (tone, mark): (Tone, &str)) {
    ui.horizontal_wrapped(|ui| {
        badge_ui(ui, tone, mark);
        ui.label(toned(ui, Tone::of(f.severity), severity_word(f.severity)));
        ui.label(&f.summary).on_hover_text(&f.id);
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_doctor_model::{Category, Severity};

    fn finding(id: &str, summary: &str) -> Finding {
        Finding {
            id: id.into(),
            category: Category::Other,
            severity: Severity::Error,
            summary: summary.into(),
            detail: String::new(),
            evidence: Vec::new(),
            explains: Vec::new(),
            fix: None,
            plan: None,
        }
    }

    #[test]
    fn findings_are_gone_still_there_or_new_by_rule_and_summary() {
        let before = [finding("a", "torch 2.9.0+cu130 needs driver 580"), finding("b", "x")];
        let after = [finding("b", "x"), finding("a", "torch 2.8.0+cu128 needs driver 570")];
        let d = diff(&before, &after);
        let ids = |v: &[&Finding]| v.iter().map(|f| f.summary.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&d.gone), ["torch 2.9.0+cu130 needs driver 580"]);
        assert_eq!(ids(&d.still), ["x"]);
        assert_eq!(ids(&d.new), ["torch 2.8.0+cu128 needs driver 570"], "another build's problem is new");
    }
}
