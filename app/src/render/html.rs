//! The HTML report: one self-contained file that opens offline in any browser (no scripts, no
//! external styles, fonts or images), light or dark with the reader's system. It says what the
//! Markdown report says, from the same `facts` sections, plus the benchmark run's plots as SVG.

use std::fmt::Write;

use gpu_doctor_model::bench::judgement::Verdict;
use gpu_doctor_model::bench::run::BenchRun;
use gpu_doctor_model::bench::run::TestStatus;
use gpu_doctor_model::{Finding, Origin, Outcome, Report, Severity};

use super::bench;
use super::facts::{Tone, label, sections, serde_name};
use super::findings::{severity_word, tally};
use super::svg::{self, escape};
use crate::plots;

/// The page's styles: one severity palette (error red, warning amber, info blue), light and dark.
pub(super) const STYLE: &str = r"
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1f2328; --muted: #59636e; --border: #d1d9e0;
  --code-bg: #f6f8fa; --good: #1a7f37; --error: #cf222e; --error-bg: #ffebe9; --warning: #9a6700;
  --warning-bg: #fff8c5; --info: #0969da; --info-bg: #ddf4ff; }
@media (prefers-color-scheme: dark) { :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1;
  --border: #3d444d; --code-bg: #151b23; --good: #3fb950; --error: #f85149; --error-bg: #2d1517;
  --warning: #d29922; --warning-bg: #2b2111; --info: #4493f8; --info-bg: #121d2f; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; }
main { max-width: 60rem; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 .75rem; padding-bottom: .25rem; border-bottom: 1px solid var(--border); }
h3 { font-size: 1.05rem; margin: 1.25rem 0 .5rem; }
.meta, .muted { color: var(--muted); }
code, pre { font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { background: var(--code-bg); border: 1px solid var(--border); border-radius: 6px; padding: .6rem .8rem;
  overflow-x: auto; white-space: pre-wrap; word-break: break-word; margin: .4rem 0 0; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0; }
th, td { text-align: left; vertical-align: top; padding: .3rem .6rem; border-bottom: 1px solid var(--border); }
td.num { text-align: right; white-space: nowrap; }
table.facts th { width: 8rem; }
.banner { border: 1px solid var(--warning); background: var(--warning-bg); border-radius: 6px;
  padding: .6rem .9rem; margin: 1rem 0; }
.tone-good { color: var(--good); } .tone-warn { color: var(--warning); }
.finding { border: 1px solid var(--border); border-left: 4px solid var(--info); border-radius: 6px;
  padding: .6rem .9rem; margin: .6rem 0; }
.finding.error { border-left-color: var(--error); } .finding.warning { border-left-color: var(--warning); }
.finding h4 { margin: 0 0 .3rem; font-size: 1rem; }
.finding p { margin: .3rem 0; } .finding ul { margin: .3rem 0; padding-left: 1.25rem; }
.badge { display: inline-block; font-size: .75rem; font-weight: 600; text-transform: uppercase;
  letter-spacing: .03em; border-radius: 1rem; padding: 0 .5rem; margin-right: .4rem; vertical-align: .1em; }
.badge.error { color: var(--error); background: var(--error-bg); }
.badge.warning { color: var(--warning); background: var(--warning-bg); }
.badge.info { color: var(--info); background: var(--info-bg); }
.verdict-error { color: var(--error); font-weight: 600; } .verdict-warning { color: var(--warning); font-weight: 600; }
.verdict-info { color: var(--info); }
.outcome-error { color: var(--error); } .outcome-miss { color: var(--muted); }
details { margin: .4rem 0; } summary { cursor: pointer; }
figure { margin: 1rem 0; } svg.plot { max-width: 100%; height: auto; color: var(--fg); }
footer { margin-top: 3rem; color: var(--muted); font-size: .85rem; }
";

/// The whole report as one HTML5 document.
pub fn report(report: &Report) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let machine = report.snapshot.system.value().and_then(|s| s.host_name.as_deref()).unwrap_or("");
    let title =
        if machine.is_empty() { "gpu-doctor report".to_owned() } else { format!("gpu-doctor report: {machine}") };
    let _ = writeln!(out, "<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>", escape(&title));
    let _ = writeln!(out, "<h1>gpu-doctor report</h1>");
    let _ = writeln!(
        out,
        "<p class=\"meta\">{}, report schema {}</p>",
        escape(&report.version_line()),
        report.schema_version
    );
    if let Origin::Pasted { formats } = &report.snapshot.origin {
        let _ = writeln!(
            out,
            "<div class=\"banner\" role=\"note\"><strong>Another machine</strong>, read from pasted text ({}); \
             parts the text did not show are unknown.</div>",
            escape(&formats.join(", "))
        );
    }
    facts(&mut out, report);
    findings(&mut out, report);
    if let Some(run) = &report.bench {
        bench_run(&mut out, run);
    }
    trace(&mut out, report);
    let _ = writeln!(
        out,
        "<footer>Written by gpu-doctor {}. This file is self-contained: it loads nothing from the network.</footer>",
        escape(&report.tool_version)
    );
    out.push_str("</main>\n</body>\n</html>\n");
    out
}

/// The facts: a table of headlines, then each section's details folded.
fn facts(out: &mut String, report: &Report) {
    let secs = sections(report);
    let _ = writeln!(out, "<h2 id=\"summary\">Summary</h2>\n<table class=\"facts\">");
    for sec in &secs {
        let tone = match sec.tone {
            Tone::Good => " class=\"tone-good\"",
            Tone::Plain => "",
            Tone::Warn => " class=\"tone-warn\"",
        };
        let _ = writeln!(out, "<tr><th>{}</th><td{tone}>{}</td></tr>", escape(sec.label), escape(&sec.headline));
    }
    out.push_str("</table>\n");
    for sec in secs.iter().filter(|s| !s.details.is_empty() || !s.pre.is_empty()) {
        let _ = writeln!(
            out,
            "<details><summary><strong>{}</strong>: {}</summary>",
            escape(sec.label),
            escape(&sec.headline)
        );
        if !sec.pre.is_empty() {
            let lines: Vec<String> = sec.pre.iter().map(|l| escape(l)).collect();
            let _ = writeln!(out, "<pre>{}</pre>", lines.join("\n"));
        }
        out.push_str("<ul>\n");
        for d in &sec.details {
            let _ = writeln!(out, "<li>{}</li>", escape(d));
        }
        out.push_str("</ul>\n</details>\n");
    }
}

/// CSS class of a severity.
pub(super) fn severity_class(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "info",
    }
}

/// One finding: badge and summary, id and category, why, evidence, and the fix as code.
fn finding(out: &mut String, f: &Finding) {
    let class = severity_class(f.severity);
    let _ = writeln!(
        out,
        "<article class=\"finding {class}\" id=\"finding-{}\">\n<h4><span class=\"badge {class}\">{}</span>{}</h4>",
        escape(&f.id),
        severity_word(f.severity),
        escape(&f.summary)
    );
    let _ = writeln!(
        out,
        "<p class=\"muted\"><code>{}</code> · {}</p>\n<p>{}</p>",
        escape(&f.id),
        escape(&serde_name(&f.category)),
        escape(&f.detail)
    );
    if !f.evidence.is_empty() {
        out.push_str("<ul class=\"evidence\">\n");
        for e in &f.evidence {
            let _ = writeln!(out, "<li>{}</li>", escape(e));
        }
        out.push_str("</ul>\n");
    }
    if !f.explains.is_empty() {
        let ids: Vec<String> = f.explains.iter().map(|id| format!("<code>{}</code>", escape(id))).collect();
        let _ = writeln!(out, "<p class=\"muted\">Explains the known messages {}</p>", ids.join(", "));
    }
    if let Some(fix) = &f.fix {
        let _ = writeln!(out, "<p><strong>Fix</strong></p>\n<pre><code>{}</code></pre>", escape(fix));
    }
    out.push_str("</article>\n");
}

/// Findings grouped by severity, errors first.
fn findings(out: &mut String, report: &Report) {
    let _ = writeln!(out, "<h2 id=\"findings\">Findings: {}</h2>", escape(&tally(&report.findings)));
    for (severity, heading) in [(Severity::Error, "Errors"), (Severity::Warning, "Warnings"), (Severity::Info, "Notes")]
    {
        let group: Vec<&Finding> = report.findings.iter().filter(|f| f.severity == severity).collect();
        if group.is_empty() {
            continue;
        }
        let _ = writeln!(out, "<h3>{heading} ({})</h3>", group.len());
        for f in group {
            finding(out, f);
        }
    }
}

/// CSS class of a verdict as the bench table words it.
fn verdict_class(word: &str) -> &'static str {
    if word == Verdict::Failed.label() {
        " class=\"verdict-error\""
    } else if word == Verdict::Low.label() {
        " class=\"verdict-warning\""
    } else if word == Verdict::AboveTheory.label() {
        " class=\"verdict-info\""
    } else {
        ""
    }
}

/// The GPU-to-GPU matrix (`bench::p2p_tables`): a table per mode, the judged cell of each pair
/// coloured by its verdict, then the all-to-all total and the verdicts in words.
fn bench_p2p(out: &mut String, run: &BenchRun) {
    let Some((tables, lines)) = bench::p2p_tables(run) else { return };
    out.push_str("<h3>GPU-to-GPU copies</h3>\n<p class=\"muted\">Rows: from GPU; columns: to GPU.</p>\n");
    for t in &tables {
        let _ =
            write!(out, "<table class=\"results\">\n<caption>{}</caption>\n<thead><tr><th></th>", escape(&t.caption));
        for g in &t.gpus {
            let _ = write!(out, "<th>{}</th>", escape(g));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for (g, row) in t.gpus.iter().zip(&t.rows) {
            let _ = write!(out, "<tr><th>{}</th>", escape(g));
            for c in row {
                let class = c.verdict.map_or("", |v| verdict_class(v.label()));
                let _ = write!(out, "<td class=\"num\"><span{class}>{}</span></td>", escape(&c.marked()));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n");
    }
    if !lines.is_empty() {
        out.push_str("<ul>\n");
        for l in &lines {
            let _ = writeln!(out, "<li>{}</li>", escape(l));
        }
        out.push_str("</ul>\n");
    }
}

/// The benchmark run: results, tests that did not run, comparisons, findings and plots.
fn bench_run(out: &mut String, run: &BenchRun) {
    let _ = writeln!(out, "<h2 id=\"bench\">Benchmarks</h2>\n<p>{}</p>", escape(&bench::headline(run)));
    let rows = bench::rows(run);
    if rows.is_empty() {
        out.push_str("<p class=\"muted\">No test produced a measurement.</p>\n");
    } else {
        out.push_str(
            "<table class=\"results\">\n<thead><tr><th>Test</th><th>Measurement</th><th>Measured</th>\
             <th>Expected</th><th>%</th><th>Verdict</th></tr></thead>\n<tbody>\n",
        );
        for [test, what, measured, expected, pct, verdict] in &rows {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td{}>{}</td></tr>",
                escape(test),
                escape(what),
                escape(measured),
                escape(expected),
                escape(pct),
                verdict_class(verdict),
                escape(verdict)
            );
        }
        out.push_str("</tbody>\n</table>\n");
    }
    let failed: Vec<_> = run.tests.iter().filter(|t| t.status == TestStatus::Failed).collect();
    if !failed.is_empty() {
        out.push_str("<h3>Did not run</h3>\n<ul>\n");
        for t in failed {
            let why = t.failure.as_ref().map(|f| format!("{}: {}", f.kind.label(), f.reason)).unwrap_or_default();
            let _ = writeln!(out, "<li><strong>{}</strong>: {}</li>", escape(t.test.name()), escape(&why));
        }
        out.push_str("</ul>\n");
    }
    bench_p2p(out, run);
    let checks: Vec<_> = run.tests.iter().filter_map(|t| t.result.as_ref()).flat_map(|r| &r.checks).collect();
    if !checks.is_empty() {
        out.push_str("<h3>Checks</h3>\n<ul>\n");
        for c in checks {
            let (class, word) = if c.passed { ("", "ok") } else { (" class=\"verdict-error\"", "FAILED") };
            let _ = writeln!(out, "<li><span{class}>{word}</span> {} ({})</li>", escape(&c.name), escape(&c.detail));
        }
        out.push_str("</ul>\n");
    }
    if !run.comparisons.is_empty() {
        out.push_str("<h3>GPU against CPU</h3>\n<ul>\n");
        for c in &run.comparisons {
            let _ = writeln!(out, "<li><strong>{:.0}×</strong>: {}</li>", c.times, escape(&c.label));
        }
        out.push_str("</ul>\n");
    }
    if let Some(c) = &run.clocks_under_load {
        let _ = writeln!(out, "<p><strong>Clocks under load</strong>: {}</p>", escape(&c.summary));
    }
    if !run.findings.is_empty() {
        let _ = writeln!(out, "<h3>Benchmark findings: {}</h3>", escape(&tally(&run.findings)));
        for f in &run.findings {
            finding(out, f);
        }
    }
    let plots = plots::run_plots(run);
    if !plots.is_empty() {
        out.push_str("<h3>Plots</h3>\n");
        for p in &plots {
            let _ = writeln!(out, "<figure>\n{}\n</figure>", svg::plot(p));
        }
    }
    if let Some(note) = &run.telemetry_note {
        let _ = writeln!(out, "<p class=\"muted\">Telemetry: {}</p>", escape(note));
    }
}

/// The probe trace, folded.
fn trace(out: &mut String, report: &Report) {
    let trace = &report.snapshot.trace;
    let _ = writeln!(
        out,
        "<h2 id=\"trace\">Probe trace</h2>\n<details><summary>Every method the probes tried ({} attempts)</summary>",
        trace.len()
    );
    out.push_str(
        "<table>\n<thead><tr><th>Probe</th><th>Method</th><th>Outcome</th><th>Answer</th></tr></thead>\n<tbody>\n",
    );
    for t in trace {
        let class = match t.outcome {
            Outcome::Ok | Outcome::Unknown => "",
            Outcome::Miss => " class=\"outcome-miss\"",
            Outcome::Error => " class=\"outcome-error\"",
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td><code>{}</code></td><td{class}>{}</td><td>{}</td></tr>",
            escape(&t.probe),
            escape(&t.method),
            escape(&label(&t.outcome)),
            escape(&t.detail)
        );
    }
    out.push_str("</tbody>\n</table>\n</details>\n");
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use std::path::Path;

    use gpu_doctor_judge::diagnose::diagnose;
    use gpu_doctor_kb::Kb;
    use gpu_doctor_probes::host::ReplayHost;
    use gpu_doctor_probes::probe::{self, Options};

    use super::*;

    /// The report of a replayed fixture from `tests/fixtures/`.
    pub(crate) fn fixture_report(name: &str) -> Report {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(name);
        let host = ReplayHost::load(&dir).unwrap();
        let snap = probe::collect(&host, &Options { deep: false, extra_pythons: Vec::new(), cwd: None });
        let findings = diagnose(&snap, Kb::get().unwrap());
        Report::new(snap, findings)
    }

    /// Every output of a judged report names the knowledge base's date (issue 28): the JSON, the
    /// text summary, Markdown and HTML; a report saved before the date was recorded still reads,
    /// without it.
    #[test]
    fn every_output_names_the_knowledge_base_date() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/no-driver");
        let host = ReplayHost::load(&dir).unwrap();
        let snap = probe::collect(&host, &Options { deep: false, extra_pythons: Vec::new(), cwd: None });
        let report = crate::ops::judged(snap).unwrap();
        let date = Kb::get().unwrap().date().unwrap();
        assert_eq!(report.kb_date.as_deref(), Some(date));
        let line = format!("knowledge base of {date}");
        let json = serde_json::to_string(&report).unwrap();
        assert!(json.contains(&format!("\"kb_date\":\"{date}\"")), "JSON");
        assert!(crate::render::text::summary(&report, false, false).contains(&line), "text");
        assert!(crate::render::markdown::report(&report).contains(&line), "Markdown");
        assert!(super::report(&report).contains(&line), "HTML");
        assert!(crate::cli::version_line().ends_with(&line), "--version and the window title");
        // A report of an earlier version has no kb_date: it reads, and says no date.
        let mut old: serde_json::Value = serde_json::from_str(&json).unwrap();
        old.as_object_mut().unwrap().remove("kb_date");
        let old: Report = serde_json::from_value(old).unwrap();
        assert_eq!(old.kb_date, None);
        assert!(!crate::render::markdown::report(&old).contains("knowledge base of"));
    }

    /// Checks what every report must be: one document, no scripts, nothing loaded from elsewhere,
    /// every `<svg>` closed.
    fn assert_self_contained(html: &str) {
        assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..80]);
        assert_eq!(html.matches("<html").count(), 1);
        assert!(html.trim_end().ends_with("</html>"));
        // Text is escaped, so a `<` or a `"` here is markup, never text.
        let lower = html.to_ascii_lowercase();
        for banned in ["<script", "<link", "<img", "<iframe", "<object", "<embed", "@import", "src=\"", "href=\""] {
            assert!(!lower.contains(banned), "{banned} found");
        }
        // Addresses may appear in text (a fix's wheel index); the only one in markup is the SVG
        // namespace, which loads nothing.
        let in_markup = lower.matches("=\"http").count() + lower.matches("url(").count();
        assert_eq!(in_markup, lower.matches("xmlns=\"http://www.w3.org/2000/svg\"").count(), "an address in markup");
        assert_eq!(html.matches("<svg").count(), html.matches("</svg>").count());
        for (open, close) in [("<details", "</details>"), ("<table", "</table>"), ("<article", "</article>")] {
            assert_eq!(html.matches(open).count(), html.matches(close).count(), "{open}");
        }
    }

    #[test]
    fn a_replayed_machine_has_its_facts_findings_and_fixes() {
        let report = fixture_report("torch-cu130-on-r550");
        assert!(!report.findings.is_empty());
        let html = super::report(&report);
        assert_self_contained(&html);
        for f in &report.findings {
            assert!(html.contains(&format!("id=\"finding-{}\"", escape(&f.id))), "{} missing", f.id);
            assert!(html.contains(&escape(&f.summary)), "{} missing", f.summary);
            if let Some(fix) = &f.fix {
                assert!(html.contains(&format!("<pre><code>{}</code></pre>", escape(fix))), "fix of {}", f.id);
            }
        }
        for label in ["<th>Driver</th>", "<th>GPUs</th>", "Probe trace", "<h3>Errors ("] {
            assert!(html.contains(label), "{label} missing");
        }
        assert!(!html.contains("Another machine"));
        assert!(!html.contains("id=\"bench\""), "no bench section without a run");
        // Errors come before notes.
        let (e, n) = (html.find("<h3>Errors").unwrap(), html.find("<h3>Notes").unwrap_or(usize::MAX));
        assert!(e < n);
    }

    #[test]
    fn a_pasted_report_says_it_is_another_machine() {
        let text = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/support_thread.md"));
        let snap = gpu_doctor_probes::parse::paste::read_pasted(text, Kb::get().unwrap()).unwrap();
        let findings = diagnose(&snap, Kb::get().unwrap());
        let html = super::report(&Report::new(snap, findings));
        assert_self_contained(&html);
        assert!(html.contains("<strong>Another machine</strong>"));
    }

    #[test]
    fn every_string_is_escaped() {
        let mut report = fixture_report("no-driver");
        report.findings.push(Finding {
            id: "x.<evil>".into(),
            category: gpu_doctor_model::Category::Other,
            severity: Severity::Warning,
            summary: "<script>alert('x')</script>".into(),
            detail: "a & b".into(),
            evidence: vec!["\"quoted\" <b>".into()],
            explains: vec!["observed.<row>".into()],
            fix: Some("echo '<a href=\"https://example.com\">'".into()),
            plan: None,
        });
        let html = super::report(&report);
        assert_self_contained(&html);
        assert!(html.contains("Explains the known messages <code>observed.&lt;row&gt;</code>"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
        assert!(html.contains("a &amp; b") && html.contains("&quot;quoted&quot; &lt;b&gt;"));
    }

    #[test]
    fn a_bench_run_shows_the_gpu_to_gpu_matrix_with_the_low_cell_coloured() {
        let mut report = fixture_report("egpu-thunderbolt");
        report.bench = Some(crate::render::bench::tests::p2p_run());
        let html = super::report(&report);
        assert_self_contained(&html);
        assert!(html.contains("<h3>GPU-to-GPU copies</h3>"), "{html}");
        assert!(html.contains("<caption>P2P on, GB/s (64 MiB copies)</caption>"), "{html}");
        assert!(
            html.contains("<tr><th>1</th><td class=\"num\"><span class=\"verdict-warning\">100 LOW</span></td>"),
            "{html}"
        );
        assert!(html.contains("<td class=\"num\"><span>390</span></td>"), "{html}");
        assert!(html.contains("<li>GPU 1 → GPU 0: LOW — P2P on, judged against NV18"), "{html}");
    }

    #[test]
    fn a_bench_run_brings_its_table_and_plots() {
        let mut report = fixture_report("egpu-thunderbolt");
        let run = crate::plots::tests::full_run(crate::plots::tests::known_facts());
        report.bench = Some(run.clone());
        let html = super::report(&report);
        assert_self_contained(&html);
        assert!(html.contains("<h2 id=\"bench\">Benchmarks</h2>"));
        assert!(html.contains("<th>Verdict</th>"));
        let plots = crate::plots::run_plots(&run).len();
        assert_eq!(html.matches("<svg").count(), plots);
        assert!(html.contains("id=\"plot-transfer\"") && html.contains("id=\"plot-gemm\""));
        // Each plot is well-formed XML on its own.
        for part in html.split("<svg").skip(1) {
            let end = part.find("</svg>").unwrap();
            let svg = format!("<svg{}</svg>", &part[..end]);
            roxmltree::Document::parse(&svg).unwrap();
        }
    }
}
