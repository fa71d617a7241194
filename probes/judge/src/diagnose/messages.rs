//! Known error lines from pasted text that no fact-based finding already explains.

use super::Ctx;
use gpu_doctor_kb::KnownMessage;
use gpu_doctor_model::{Category, Finding, Severity};

/// The finding id of a known message: `observed.<message id>`.
pub(super) fn finding_id(message_id: &str) -> String {
    format!("observed.{message_id}")
}

/// An observed message is an error unless its category is the harmless one.
pub(super) fn severity(category: Category) -> Severity {
    match category {
        Category::ToolkitVsFrameworkMismatchHarmless => Severity::Info,
        _ => Severity::Error,
    }
}

/// False when the message has a known range of releases that print it and every version of that
/// package in the snapshot is outside it: the line then came from somewhere else (another
/// environment, an old log), so its explanation would not fit this machine.
fn printed_here(cx: &Ctx<'_>, known: &KnownMessage) -> bool {
    let Some(range) = &known.printed_by else { return true };
    let versions: Vec<&str> =
        cx.frameworks().filter(|(_, f)| f.name == range.package).map(|(_, f)| f.version.as_str()).collect();
    versions.is_empty() || versions.iter().any(|v| range.contains(v) != Some(false))
}

/// Whether the finding `id` of `category` explains the known message: a rule the row names in
/// `explained_by`, or any finding of its category outside the catch-all `other`, whose findings
/// (a GPU's health, a companion package, NVLink) have nothing to do with each other's lines.
fn explains(id: &str, category: Category, known: &KnownMessage) -> bool {
    known.explained_by.iter().any(|rule| rule == id) || (category == known.category && category != Category::Other)
}

/// One finding per known message no other finding explains, citing every line of it.
pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let explaining: Vec<(String, Category)> = out.iter().map(|f| (f.id.clone(), f.category)).collect();
    for known in &cx.kb.errors.message {
        if explaining.iter().any(|(id, category)| explains(id, *category, known)) || !printed_here(cx, known) {
            continue;
        }
        let lines: Vec<String> =
            cx.s.messages.iter().filter(|m| m.id == known.id).map(|m| format!("pasted line: {}", m.line)).collect();
        if lines.is_empty() {
            continue;
        }
        out.push(Finding {
            id: finding_id(&known.id),
            category: known.category,
            severity: severity(known.category),
            summary: format!("{} reported: {}", known.emitter, known.meaning),
            detail: format!(
                "{} The facts that would say why were not in the text; paste `python -m torch.utils.collect_env` and \
                 `nvidia-smi` output from that machine, or run gpu-doctor there.",
                known.meaning
            ),
            evidence: lines,
            fix: None,
            plan: None,
        });
    }
}

/// Adds to each finding, as evidence, the pasted error lines it explains (at most three), so a
/// finding drawn from facts also shows the symptom the user saw.
pub(super) fn cite(cx: &Ctx<'_>, out: &mut [Finding]) {
    for f in out.iter_mut().filter(|f| !f.id.starts_with("observed.")) {
        let lines =
            cx.s.messages
                .iter()
                .filter(|m| {
                    cx.kb
                        .errors
                        .message
                        .iter()
                        .any(|k| k.id == m.id && explains(&f.id, f.category, k) && printed_here(cx, k))
                })
                .map(|m| format!("pasted line: {}", m.line))
                .take(3);
        f.evidence.extend(lines);
    }
}
