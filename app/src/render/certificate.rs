//! A certificate (`gpu-doctor certify`) as text for people: the terminal summary, the Markdown
//! file and the one printable HTML page. Each begins with the verdict, then every check with what
//! was measured, its threshold, its source and its verdict, then the machine.

use std::fmt::Write;

use gpu_doctor_model::certify::{Certificate, CheckVerdict, Verdict};
use gpu_doctor_model::time::utc;

use super::markdown::escape as md;
use super::svg::escape as html;
use super::text::clean;

/// `2026-11-28 12:00:00 UTC`.
fn when(unix_secs: u64) -> String {
    let (y, mo, d, h, mi, s) = utc(unix_secs);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02} UTC")
}

/// The three files of a certificate, by name: `certificate.json`, `certificate.md`, `certificate.html`.
pub fn files(c: &Certificate) -> Result<[(&'static str, String); 3], serde_json::Error> {
    let json = serde_json::to_string_pretty(c)? + "\n";
    Ok([("certificate.json", json), ("certificate.md", markdown(c)), ("certificate.html", html_page(c))])
}

/// The first line: the verdict and the level.
pub fn headline(c: &Certificate) -> String {
    format!("{} — gpu-doctor certify, level {} ({})", c.verdict.label(), c.level.number(), c.level.name())
}

/// The identity lines, as (label, value).
fn identity(c: &Certificate) -> Vec<(String, String)> {
    let m = &c.machine;
    let or = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".to_owned());
    let mut rows = vec![
        ("Host".to_owned(), or(&m.host_name)),
        ("CPU".to_owned(), format!("{} ({})", or(&m.cpu_model), m.arch)),
        ("OS".to_owned(), or(&m.os)),
        ("Kernel".to_owned(), or(&m.kernel)),
        ("Driver".to_owned(), or(&m.driver_version)),
    ];
    let joined = |parts: &[&Option<String>]| {
        let words: Vec<&str> = parts.iter().filter_map(|p| p.as_deref()).collect();
        (!words.is_empty()).then(|| words.join(" "))
    };
    let dmi = m.dmi.clone().unwrap_or_default();
    let system = joined(&[&dmi.sys_vendor, &dmi.product_name]).map(|s| match &dmi.product_serial {
        Some(serial) => format!("{s}; serial {serial}"),
        None => s,
    });
    let bios = joined(&[&dmi.bios_vendor, &dmi.bios_version]).map(|b| match &dmi.bios_date {
        Some(date) => format!("{b} ({date})"),
        None => b,
    });
    let not_read = || "not read (no DMI on this machine or in its recording)".to_owned();
    rows.insert(1, ("System".to_owned(), system.unwrap_or_else(not_read)));
    rows.insert(2, ("Board".to_owned(), joined(&[&dmi.board_vendor, &dmi.board_name]).unwrap_or_else(not_read)));
    rows.insert(3, ("BIOS".to_owned(), bios.unwrap_or_else(not_read)));
    if m.gpus.is_empty() {
        rows.push(("GPUs".to_owned(), format!("none ({})", m.gpus_note.as_deref().unwrap_or("none listed"))));
    }
    for g in &m.gpus {
        rows.push((
            format!("GPU {}", g.index),
            format!(
                "{}; UUID {}; VBIOS {}; bus {}{}",
                or(&g.name),
                or(&g.uuid),
                or(&g.vbios_version),
                or(&g.pci_bus_id),
                g.serial.as_ref().map_or_else(String::new, |s| format!("; serial {s}"))
            ),
        ));
    }
    for e in &m.environments {
        let frameworks = if e.frameworks.is_empty() { "no GPU framework".to_owned() } else { e.frameworks.join(", ") };
        rows.push((
            format!("Python {}", e.python_version.as_deref().unwrap_or("")),
            format!("{}: {frameworks}", e.name),
        ));
    }
    rows.push(("Run".to_owned(), format!("{}, {:.1} s, {}", when(c.started_at_unix_secs), c.duration_secs, c.origin)));
    rows.push(("gpu-doctor".to_owned(), format!("{}; knowledge base {}", c.tool_version, c.kb_version)));
    rows.push(("SHA-256".to_owned(), c.sha256.clone()));
    rows
}

/// The terminal summary: the verdict first, then why, then where the files are.
pub fn summary(c: &Certificate) -> String {
    let mut out = format!("{}\n", headline(c));
    for r in &c.reasons {
        let _ = writeln!(out, "  {}", clean(r));
    }
    let counted = |v: CheckVerdict| c.checks().filter(|k| k.verdict == v).count();
    let _ = writeln!(
        out,
        "{} checks: {} pass, {} warn, {} fail, {} not run, {} info",
        c.checks().count(),
        counted(CheckVerdict::Pass),
        counted(CheckVerdict::Warn),
        counted(CheckVerdict::Fail),
        counted(CheckVerdict::NotRun),
        counted(CheckVerdict::Info)
    );
    if c.verdict == Verdict::Fail {
        out.push_str("`gpu-doctor fix` shows the plan for each finding that has one; certify changes nothing.\n");
    }
    out
}

/// The Markdown certificate.
pub fn markdown(c: &Certificate) -> String {
    let mut out = format!("# {}\n\n", md(&headline(c)));
    for r in &c.reasons {
        let _ = writeln!(out, "- {}", md(r));
    }
    // A blank line after the reasons' list; the headline has its own, and a PASS has no reasons.
    out.push_str(if c.reasons.is_empty() { "## Checks\n" } else { "\n## Checks\n" });
    for stage in &c.stages {
        let _ = writeln!(out, "\n### {} ({:.1} s)\n", stage.stage.label(), stage.duration_secs);
        if let Some(why) = &stage.not_run {
            let _ = writeln!(out, "Not run: {}\n", md(why));
        }
        out.push_str("| verdict | check | measured | threshold | source |\n|---|---|---|---|---|\n");
        for k in &stage.checks {
            let _ = writeln!(
                out,
                "| {} | {} (`{}`) | {} | {} | {} |",
                k.verdict.label(),
                md(&k.subject),
                md(&k.id),
                md(&k.measured.describe()),
                md(&k.threshold),
                md(&k.source)
            );
        }
    }
    out.push_str("\n## Machine\n\n| | |\n|---|---|\n");
    for (label, value) in identity(c) {
        let _ = writeln!(out, "| {} | {} |", md(&label), md(&value));
    }
    out.push_str("\nThe SHA-256 is over the certificate's JSON with this field empty: `gpu-doctor certify --verify certificate.json` checks it.\n");
    out
}

const STYLE: &str = r"
body { font: 14px/1.45 system-ui, sans-serif; color: #1f2328; margin: 0; }
main { max-width: 62rem; margin: 0 auto; padding: 1.2rem; }
.verdict { font-size: 1.7rem; font-weight: 700; padding: .6rem 1rem; border-radius: 6px; margin: 0 0 .6rem; }
.v-PASS { background: #dafbe1; color: #1a7f37; } .v-PASS_WITH_WARNINGS { background: #fff8c5; color: #9a6700; }
.v-FAIL { background: #ffebe9; color: #cf222e; } .v-INCOMPLETE { background: #eaeef2; color: #59636e; }
table { border-collapse: collapse; width: 100%; margin: .4rem 0 1rem; }
table.checks { table-layout: fixed; } table.checks col.v { width: 5.5rem; } table.checks col.k { width: 22%; }
table.checks col.m { width: 24%; } table.checks col.t { width: 25%; }
th, td { text-align: left; vertical-align: top; padding: .25rem .5rem; border-bottom: 1px solid #d1d9e0; }
td, td code { overflow-wrap: anywhere; } td.src { color: #59636e; font-size: .85em; } code { font-size: .9em; }
.c-pass { color: #1a7f37; } .c-warn { color: #9a6700; font-weight: 600; } .c-fail { color: #cf222e; font-weight: 700; }
.c-not_run { color: #59636e; font-weight: 600; } .c-info { color: #0969da; }
@media print { main { max-width: none; } }
";

fn class(v: CheckVerdict) -> &'static str {
    match v {
        CheckVerdict::Pass => "c-pass",
        CheckVerdict::Info => "c-info",
        CheckVerdict::Warn => "c-warn",
        CheckVerdict::Fail => "c-fail",
        CheckVerdict::NotRun => "c-not_run",
    }
}

fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "v-PASS",
        Verdict::PassWithWarnings => "v-PASS_WITH_WARNINGS",
        Verdict::Fail => "v-FAIL",
        Verdict::Incomplete => "v-INCOMPLETE",
    }
}

/// The HTML certificate: one self-contained printable page (no scripts, no external files).
pub fn html_page(c: &Certificate) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head>\n<body><main>\n",
        html(&headline(c))
    );
    let _ = writeln!(out, "<p class=\"verdict {}\">{}</p>", verdict_class(c.verdict), html(&headline(c)));
    if !c.reasons.is_empty() {
        out.push_str("<ul>\n");
        for r in &c.reasons {
            let _ = writeln!(out, "<li>{}</li>", html(r));
        }
        out.push_str("</ul>\n");
    }
    for stage in &c.stages {
        let _ = writeln!(out, "<h2>{} <small>({:.1} s)</small></h2>", html(stage.stage.label()), stage.duration_secs);
        if let Some(why) = &stage.not_run {
            let _ = writeln!(out, "<p>Not run: {}</p>", html(why));
        }
        out.push_str(
            "<table class=\"checks\"><colgroup><col class=\"v\"><col class=\"k\"><col class=\"m\"><col class=\"t\"><col></colgroup>\n<tr><th>verdict</th><th>check</th><th>measured</th><th>threshold</th><th>source</th></tr>\n",
        );
        for k in &stage.checks {
            let _ = writeln!(
                out,
                "<tr><td class=\"{}\">{}</td><td>{}<br><code>{}</code></td><td>{}</td><td>{}</td><td class=\"src\">{}</td></tr>",
                class(k.verdict),
                html(k.verdict.label()),
                html(&k.subject),
                html(&k.id),
                html(&k.measured.describe()),
                html(&k.threshold),
                html(&k.source)
            );
        }
        out.push_str("</table>\n");
    }
    out.push_str("<h2>Machine</h2>\n<table>\n");
    for (label, value) in identity(c) {
        let _ = writeln!(out, "<tr><th>{}</th><td>{}</td></tr>", html(&label), html(&value));
    }
    out.push_str(
        "</table>\n<p>The SHA-256 is over the certificate's JSON with that field empty: \
         <code>gpu-doctor certify --verify certificate.json</code> checks it.</p>\n</main></body></html>\n",
    );
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use gpu_doctor_model::certify::{Check, Level, Measured, Stage, StageRecord};

    use super::*;

    fn hostile() -> Certificate {
        let check = Check {
            id: "finding.x".into(),
            stage: Stage::Software,
            subject: "<script>alert(1)</script> | pipe".into(),
            measured: Measured::text("a\nb <b>bold</b>"),
            threshold: "t".into(),
            source: "s".into(),
            verdict: CheckVerdict::Fail,
        };
        Certificate {
            schema_version: 1,
            verdict: Verdict::Fail,
            reasons: vec!["FAIL: <img src=x onerror=alert(1)>".into()],
            level: Level::Software,
            started_at_unix_secs: 1_764_331_200,
            duration_secs: 1.0,
            tool_version: "0".into(),
            kb_version: "0".into(),
            origin: "this machine".into(),
            machine: gpu_doctor_model::certify::MachineIdentity::default(),
            stages: vec![StageRecord {
                stage: Stage::Software,
                not_run: None,
                duration_secs: 1.0,
                checks: vec![check],
            }],
            sha256: "0".repeat(64),
        }
    }

    #[test]
    fn text_from_the_machine_cannot_become_markup() {
        let c = hostile();
        let html = html_page(&c);
        assert!(!html.contains("<script>") && !html.contains("<img") && !html.contains("<b>bold"), "{html}");
        assert!(html.contains("&lt;script&gt;"));
        let md = markdown(&c);
        assert!(!md.contains("<script>") && !md.contains(" | pipe"), "{md}");
        assert!(
            md.lines().filter(|l| l.starts_with("| FAIL |")).count() == 1,
            "one table row, not broken by a line break"
        );
        assert!(summary(&c).starts_with("FAIL — gpu-doctor certify, level 1 (software)\n"));
        assert!(md.contains("2025-11-28 12:00:00 UTC"), "the start in UTC");
    }

    /// One blank line between the headline (or the reasons) and the checks: a lent H200's PASS
    /// certificate had two where it has no reasons.
    #[test]
    fn the_markdown_has_no_double_blank_line_with_or_without_reasons() {
        let mut c = hostile();
        assert!(!c.reasons.is_empty());
        for _ in 0..2 {
            let md = markdown(&c);
            assert!(!md.contains("\n\n\n"), "{md}");
            assert!(md.contains("\n\n## Checks\n"), "{md}");
            c.reasons.clear();
        }
    }
}
