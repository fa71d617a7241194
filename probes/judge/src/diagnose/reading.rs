//! What reading another machine's text could not take in whole: the text cut at its size limit, an
//! nvidia-smi XML report cut short, a report from a newer gpu-doctor, values this version does not
//! know. Findings of a pasted snapshot rest on what was read, so the reader is told what was not.

use super::{Ctx, Rule};
use gpu_doctor_model::{Category, Finding, NOTHING_RECOGNISED, Severity};

pub(super) const PARTLY_READ: Rule = Rule {
    id: "pasted.partly_read",
    category: Category::Other,
    severity: Severity::Warning,
    trigger: "Reading the pasted text left something out: text past the 8 MiB limit, an nvidia-smi XML report cut \
              short, a gpu-doctor report of a newer schema, or values this version does not know (read as unknown).",
    source: "gpu-doctor's reader of pasted text (the snapshot's notes)",
};

pub(super) const RULES: &[Rule] = &[PARTLY_READ];

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    // Text in which nothing was recognised was not partly read: the reader's note says so, and what
    // to paste next is asked for beside the findings; a warning would call healthy prose a problem.
    let notes: Vec<String> = cx.s.notes.iter().filter(|n| !n.starts_with(NOTHING_RECOGNISED)).cloned().collect();
    let Some(first) = notes.first() else { return };
    let summary = match notes.len() {
        1 => format!("Not all of the pasted text was read: {first}"),
        n => format!("Not all of the pasted text was read ({n} notes)"),
    };
    out.push(PARTLY_READ.finding(
        summary,
        "The facts and findings here come from what was read. Whatever was in the part left out is unknown, not \
         absent; paste it again whole (or run gpu-doctor on that machine) to have it checked.",
        notes,
        None,
    ));
}
