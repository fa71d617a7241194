//! The Markdown report, for pasting into a GitHub issue: a summary table, then details folded.
//!
//! Every piece of text that comes from the machine, a paste or a file goes through [`escape`]
//! (or [`code`] for a command), where it is written.

use std::fmt::Write;

use gpu_doctor_model::Report;

use super::facts::{label, sections, serde_name};
use super::findings::{severity_word, tally};

/// Text made inert for any place in the Markdown report: a table cell, a list item, a heading or
/// the HTML of a `<details>` fold. HTML and the characters that start Markdown structure or
/// formatting (`|`, `#`, `` ` ``, `*`, the `]` of `](`, a backslash before punctuation) become HTML
/// character references, which Markdown and HTML both read back as the character itself; line
/// breaks become spaces, so nothing can start a heading or a block; other control characters and
/// bidirectional overrides are shown as their escape (`\u{1b}`). `_` and `~` stay, as paths and
/// variable names are full of them and they cannot open markup on their own here.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' => out.push_str("&#124;"),
            '#' => out.push_str("&#35;"),
            '`' => out.push_str("&#96;"),
            '*' => out.push_str("&#42;"),
            // A link or image needs `](` (a reference definition would have to start a line).
            ']' if chars.peek() == Some(&'(') => out.push_str("&#93;"),
            '\\' if chars.peek().is_none_or(char::is_ascii_punctuation) => out.push_str("&#92;"),
            c => out.push_str(&super::text::clean(c.encode_utf8(&mut [0; 4]))),
        }
    }
    out
}

/// Lines as a fenced code block (each line cleaned like the terminal's, the fence longer than any
/// backtick run inside).
pub fn fenced(lines: &[String]) -> String {
    let lines: Vec<String> = lines.iter().map(|l| super::text::clean(l)).collect();
    let longest = lines.iter().flat_map(|l| l.split(|c| c != '`')).map(str::len).max().unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    format!("{fence}\n{}\n{fence}", lines.join("\n"))
}

/// A command as an inline code span, kept exactly as it is (backticks included) except that line
/// breaks become spaces: the span is fenced with more backticks than any run inside it.
pub fn code(text: &str) -> String {
    let text = super::text::clean(text);
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with(['`', ' ']) || text.ends_with(['`', ' ']) { " " } else { "" };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// The whole report.
pub fn report(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## gpu-doctor report\n");
    let _ = writeln!(out, "{}, schema {}\n", escape(&report.version_line()), report.schema_version);
    if let gpu_doctor_model::Origin::Pasted { formats } = &report.snapshot.origin {
        let _ = writeln!(
            out,
            "**Another machine**, read from pasted text ({}); parts it did not show are unknown.\n",
            escape(&formats.join(", "))
        );
    }
    let secs = sections(report);
    let _ = writeln!(out, "| | |\n|---|---|");
    for sec in &secs {
        let _ = writeln!(out, "| **{}** | {} |", sec.label, escape(&sec.headline));
    }
    for sec in secs.iter().filter(|s| !s.details.is_empty() || !s.pre.is_empty()) {
        let _ = writeln!(out, "\n<details><summary>{}: {}</summary>\n", sec.label, escape(&sec.headline));
        if !sec.pre.is_empty() {
            let _ = writeln!(out, "{}\n", fenced(&sec.pre));
        }
        for d in &sec.details {
            let _ = writeln!(out, "- {}", escape(d));
        }
        let _ = writeln!(out, "\n</details>");
    }
    let _ = writeln!(out, "\n### Findings: {}\n", tally(&report.findings));
    for f in &report.findings {
        let _ = writeln!(
            out,
            "- **{}** {} ({}, {})",
            severity_word(f.severity),
            escape(&f.summary),
            code(&f.id),
            serde_name(&f.category)
        );
        let _ = writeln!(out, "  - {}", escape(&f.detail));
        for e in &f.evidence {
            let _ = writeln!(out, "  - evidence: {}", escape(e));
        }
        if !f.explains.is_empty() {
            let ids: Vec<String> = f.explains.iter().map(|id| code(id)).collect();
            let _ = writeln!(out, "  - explains the known messages {}", ids.join(", "));
        }
        if let Some(fix) = &f.fix {
            let _ = writeln!(out, "  - fix: {}", code(fix));
        }
    }
    let _ = writeln!(out, "\n<details><summary>Probe trace ({} attempts)</summary>\n", report.snapshot.trace.len());
    let _ = writeln!(out, "| probe | method | outcome | answer |\n|---|---|---|---|");
    for t in &report.snapshot.trace {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            escape(&t.probe),
            escape(&t.method),
            label(&t.outcome),
            escape(&t.detail)
        );
    }
    let _ = writeln!(out, "\n</details>");
    out
}
