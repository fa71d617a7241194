//! Findings for people: a headline per finding with its evidence, why, and the fix.

use gpu_doctor_model::{Finding, Severity};

/// The word and the count line for a set of findings, e.g. `2 errors, 1 warning, 3 notes`.
pub fn tally(findings: &[Finding]) -> String {
    let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let (e, w, i) = (count(Severity::Error), count(Severity::Warning), count(Severity::Info));
    if e + w == 0 {
        return format!("no problems found ({})", plural(i, "note", "notes"));
    }
    format!("{}, {}, {}", plural(e, "error", "errors"), plural(w, "warning", "warnings"), plural(i, "note", "notes"))
}

/// `error`, `warning` or `note`.
pub fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}
