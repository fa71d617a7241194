//! `gpu-doctor compare` for people: a [`Comparison`] as a terminal table, Markdown or an HTML page
//! (JSON is the comparison itself). All three say the same: what every node shares, one row per
//! group of identical nodes with the facts where some node differs (a differing value coloured, or
//! marked `*` without colour), the nodes without a report, the benchmark medians with the slow
//! nodes, and the fleet findings. Node text comes from the reports, so it is cleaned or escaped
//! where it is written, as in the single-machine renderers.

use std::fmt::Write;

use gpu_doctor_judge::fleet::compare::SLOW_THRESHOLD;
use gpu_doctor_model::Severity;
use gpu_doctor_model::bench::format::value as number;
use gpu_doctor_model::fleet::{Comparison, MetricColumn, NodeOutcome, NodeRow};

use super::findings::severity_word;
use super::markdown::{code, escape as md};
use super::svg::escape as html;
use super::text::clean;

/// `compare --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareFormat {
    /// A table for the terminal.
    Text,
    /// The comparison as JSON.
    Json,
    /// Markdown for an issue or a wiki.
    #[value(alias = "md")]
    Markdown,
    /// One self-contained HTML page.
    Html,
}

/// A cell in the terminal table is cut to this many characters.
const CELL_CHARS: usize = 40;
/// Hosts named in a group's cell before `+N`.
const GROUP_HOSTS: usize = 3;

/// The comparison in `format`; `color` applies to text only.
pub fn document(c: &Comparison, format: CompareFormat, color: bool) -> serde_json::Result<String> {
    Ok(match format {
        CompareFormat::Text => text(c, color),
        CompareFormat::Json => serde_json::to_string_pretty(c)? + "\n",
        CompareFormat::Markdown => markdown(c),
        CompareFormat::Html => page(c),
    })
}

/// The fact columns in which some node differs, and the rest (the same on every reported node).
fn columns(c: &Comparison) -> (Vec<usize>, Vec<usize>) {
    (0..c.facts.len()).partition(|&i| c.nodes.iter().any(|r| r.differs.get(i).copied().unwrap_or(false)))
}

/// `64 nodes: 63 reported, 1 without a report; 5 groups`.
fn headline(c: &Comparison) -> String {
    let reported = c.nodes.iter().filter(|r| matches!(r.outcome, NodeOutcome::Reported { .. })).count();
    let failed = c.nodes.len() - reported;
    let groups = c.groups.len();
    format!(
        "{} nodes: {reported} reported, {failed} without a report; {groups} group{} of identical nodes",
        c.nodes.len(),
        if groups == 1 { "" } else { "s" }
    )
}

/// The first member of each group, with the group's size and hosts.
fn group_rows(c: &Comparison) -> Vec<(&NodeRow, usize, String)> {
    c.groups
        .iter()
        .enumerate()
        .filter_map(|(i, g)| {
            // By the row's group, not its host name: two folders can each have a node of that name.
            let first = c.nodes.iter().find(|r| r.group == Some(i))?;
            let mut hosts = g.hosts.iter().take(GROUP_HOSTS).cloned().collect::<Vec<_>>().join(", ");
            if g.hosts.len() > GROUP_HOSTS {
                let _ = write!(hosts, " +{}", g.hosts.len() - GROUP_HOSTS);
            }
            Some((first, g.hosts.len(), hosts))
        })
        .collect()
}

fn value(v: Option<&String>) -> &str {
    v.map_or("not reported", String::as_str)
}

fn failed(c: &Comparison) -> impl Iterator<Item = &NodeRow> {
    c.nodes.iter().filter(|r| !matches!(r.outcome, NodeOutcome::Reported { .. }))
}

/// The slow nodes of metric `i`, `host value` each.
fn slow_nodes(c: &Comparison, i: usize) -> Vec<String> {
    c.nodes
        .iter()
        .filter(|r| r.slow.get(i).copied().unwrap_or(false))
        .filter_map(|r| Some(format!("{} {}", r.host, number(r.metrics.get(i).copied().flatten()?))))
        .collect()
}

/// The median of metric `m` with its unit; `-` when no node measured it.
fn median(m: &MetricColumn) -> String {
    m.median.map_or_else(|| "-".to_owned(), |v| format!("{} {}", number(v), m.unit))
}

/// The slow nodes of metric `i` for a table cell: `host value, …`, or `none`.
fn slow_cell(c: &Comparison, i: usize) -> String {
    let slow = slow_nodes(c, i);
    if slow.is_empty() { "none".to_owned() } else { slow.join(", ") }
}

fn cut(text: &str) -> String {
    let text = clean(text);
    if text.chars().count() <= CELL_CHARS {
        return text;
    }
    let mut cut: String = text.chars().take(CELL_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// With `--certify`: each node's certificate verdict beside its figures, in the comparison's order
/// (failed nodes first), as (host, verdict, figures, note).
fn certified(c: &Comparison) -> Vec<(String, String, String, String)> {
    if c.nodes.iter().all(|r| r.certificate.is_none()) {
        return Vec::new();
    }
    c.nodes
        .iter()
        .map(|r| {
            let verdict = match (&r.certificate, &r.outcome) {
                (Some(cert), _) => cert.label(),
                (None, NodeOutcome::Reported { .. }) => "no certificate".to_owned(),
                (None, outcome) => format!("no report: {}", outcome.describe()),
            };
            let mut figures: Vec<String> = c
                .metrics
                .iter()
                .zip(&r.metrics)
                .filter_map(|(m, v)| v.map(|v| format!("{}: {v:.1} {}", m.label, m.unit)))
                .collect();
            figures.extend(r.certificate.iter().flat_map(|cert| cert.figures.iter().cloned()));
            let note: String =
                r.certificate.as_ref().and_then(|cert| cert.note.as_deref()).unwrap_or("").chars().take(200).collect();
            (r.host.clone(), verdict, figures.join("; "), note)
        })
        .collect()
}

/// The terminal table.
pub fn text(c: &Comparison, color: bool) -> String {
    let paint = |text: String, code: &str| if color { format!("\x1b[{code}m{text}\x1b[0m") } else { text };
    let mut out = String::new();
    let _ = writeln!(out, "gpu-doctor compare · {}\n", headline(c));
    let (cols, same) = columns(c);
    if !same.is_empty() {
        let _ = writeln!(out, "Same on every reported node:");
        let width = same.iter().map(|&i| clean(&c.facts[i].label).chars().count()).max().unwrap_or(0);
        for &i in &same {
            let f = &c.facts[i];
            let _ = writeln!(out, "  {:<width$}  {}", clean(&f.label), clean(value(f.majority.as_ref())));
        }
    }
    if !cols.is_empty() {
        let mark = if color { "coloured" } else { "marked *" };
        let _ = writeln!(
            out,
            "\nWhere nodes differ (one row per group of identical nodes; a value unlike the majority is {mark}):"
        );
        let mut table: Vec<Vec<(String, bool)>> = vec![
            [("nodes".to_owned(), false), ("hosts".to_owned(), false)]
                .into_iter()
                .chain(cols.iter().map(|&i| (cut(&c.facts[i].label), false)))
                .collect(),
        ];
        for (row, count, hosts) in group_rows(c) {
            let mut cells = vec![(count.to_string(), false), (cut(&hosts), false)];
            for &i in &cols {
                let differs = row.differs.get(i).copied().unwrap_or(false);
                let v = cut(value(row.values.get(i).and_then(Option::as_ref)));
                cells.push((if differs && !color { format!("*{v}") } else { v }, differs));
            }
            table.push(cells);
        }
        let widths: Vec<usize> =
            (0..table[0].len()).map(|j| table.iter().map(|r| r[j].0.chars().count()).max().unwrap_or(0)).collect();
        for row in &table {
            let line: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|((cell, differs), &w)| {
                    let padded = format!("{cell:<w$}");
                    if *differs { paint(padded, "33") } else { padded }
                })
                .collect();
            let _ = writeln!(out, "  {}", line.join("  ").trim_end());
        }
    }
    let certified = certified(c);
    if !certified.is_empty() {
        let _ = writeln!(out, "\nCertificates (the failed nodes first):");
        let width = certified.iter().map(|(h, ..)| clean(h).chars().count()).max().unwrap_or(0);
        for (host, verdict, figures, note) in &certified {
            let shown = if verdict.starts_with("PASS") { verdict.clone() } else { paint(verdict.clone(), "31") };
            let _ = writeln!(out, "  {:<width$}  {}", clean(host), clean(&shown));
            for line in [figures, note].into_iter().filter(|l| !l.is_empty()) {
                let _ = writeln!(out, "  {:<width$}    {}", "", clean(line));
            }
        }
    }
    let failed: Vec<&NodeRow> = failed(c).collect();
    if !failed.is_empty() {
        let _ = writeln!(out, "\nNodes without a report:");
        for r in failed {
            let _ = writeln!(out, "  {}  {}", paint(clean(&r.host), "31"), clean(&r.outcome.describe()));
        }
    }
    if !c.metrics.is_empty() {
        let _ = writeln!(
            out,
            "\nBenchmarks (median over the nodes; slow: more than {:.0} % worse than it):",
            SLOW_THRESHOLD * 100.0
        );
        for (i, m) in c.metrics.iter().enumerate() {
            let slow = slow_nodes(c, i);
            let slow = if slow.is_empty() {
                "none slow".to_owned()
            } else {
                paint(clean(&format!("slow: {}", slow.join(", "))), "33")
            };
            let _ = writeln!(out, "  {:<16} {:>14}  {slow}", clean(&m.label), clean(&median(m)));
        }
    }
    let _ = writeln!(out, "\nFleet findings: {}", tally(c));
    for f in &c.findings {
        let word = severity_word(f.severity).to_uppercase();
        let word = match f.severity {
            Severity::Error => paint(word, "31"),
            Severity::Warning => paint(word, "33"),
            Severity::Info => word,
        };
        let _ = writeln!(out, "  {word} {}  [{}]", clean(&f.summary), clean(&f.id));
    }
    out
}

/// `1 error, 6 warnings` or `none: every node is like the others`.
fn tally(c: &Comparison) -> String {
    let count = |s: Severity| c.findings.iter().filter(|f| f.severity == s).count();
    let (e, w) = (count(Severity::Error), count(Severity::Warning));
    if e + w == 0 {
        return "none: every node is like the others".to_owned();
    }
    let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    format!("{}, {}", plural(e, "error"), plural(w, "warning"))
}

/// The Markdown document.
pub fn markdown(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## gpu-doctor compare\n\n{}\n", md(&headline(c)));
    let _ = writeln!(out, "### Fleet findings: {}\n", tally(c));
    for f in &c.findings {
        let _ = writeln!(out, "- **{}** {} ({})", severity_word(f.severity), md(&f.summary), code(&f.id));
    }
    let (cols, same) = columns(c);
    if !same.is_empty() {
        let _ = writeln!(out, "\n### Same on every reported node\n\n| fact | value |\n|---|---|");
        for &i in &same {
            let f = &c.facts[i];
            let _ = writeln!(out, "| {} | {} |", md(&f.label), md(value(f.majority.as_ref())));
        }
    }
    if !cols.is_empty() {
        let _ = writeln!(
            out,
            "\n### Where nodes differ\n\nOne row per group of identical nodes; a value unlike the majority is **bold**.\n"
        );
        let heads: Vec<String> = cols.iter().map(|&i| md(&c.facts[i].label)).collect();
        let _ = writeln!(out, "| nodes | hosts | {} |", heads.join(" | "));
        let _ = writeln!(out, "|---|---|{}", "---|".repeat(cols.len()));
        for (row, count, hosts) in group_rows(c) {
            let cells: Vec<String> = cols
                .iter()
                .map(|&i| {
                    let v = md(value(row.values.get(i).and_then(Option::as_ref)));
                    if row.differs.get(i).copied().unwrap_or(false) { format!("**{v}**") } else { v }
                })
                .collect();
            let _ = writeln!(out, "| {count} | {} | {} |", md(&hosts), cells.join(" | "));
        }
    }
    let certified = certified(c);
    if !certified.is_empty() {
        let _ = writeln!(
            out,
            "\n### Certificates\n\nThe failed nodes first.\n\n| host | verdict | figures | first reason |\n|---|---|---|---|"
        );
        for (host, verdict, figures, note) in &certified {
            let _ = writeln!(out, "| {} | {} | {} | {} |", md(host), md(verdict), md(figures), md(note));
        }
    }
    let failed: Vec<&NodeRow> = failed(c).collect();
    if !failed.is_empty() {
        let _ = writeln!(out, "\n### Nodes without a report\n");
        for r in failed {
            let _ = writeln!(out, "- {}: {}", md(&r.host), md(&r.outcome.describe()));
        }
    }
    if !c.metrics.is_empty() {
        let _ = writeln!(
            out,
            "\n### Benchmarks\n\nSlow: more than {:.0} % worse than the median.\n\n| figure | median | slow nodes |\n|---|---|---|",
            SLOW_THRESHOLD * 100.0
        );
        for (i, m) in c.metrics.iter().enumerate() {
            let _ = writeln!(out, "| {} | {} | {} |", md(&m.label), md(&median(m)), md(&slow_cell(c, i)));
        }
    }
    out
}

/// The HTML page: the summary and findings, the group table, then every node in a folded table.
pub fn page(c: &Comparison) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(
        out,
        "<title>gpu-doctor compare</title>\n<style>{}\ntd.differs {{ color: var(--warning); background: var(--warning-bg); font-weight: 600; }}\nmain {{ max-width: none; }}\n</style>\n</head>\n<body>\n<main>",
        super::html::STYLE
    );
    let _ = writeln!(out, "<h1>gpu-doctor compare</h1>\n<p class=\"meta\">{}</p>", html(&headline(c)));
    let _ = writeln!(out, "<h2>Fleet findings: {}</h2>", html(&tally(c)));
    for f in &c.findings {
        let class = super::html::severity_class(f.severity);
        let _ = writeln!(
            out,
            "<div class=\"finding {class}\"><span class=\"badge {class}\">{}</span>{} <code>{}</code></div>",
            severity_word(f.severity),
            html(&f.summary),
            html(&f.id)
        );
    }
    let certified = certified(c);
    if !certified.is_empty() {
        out.push_str("<h2>Certificates</h2>\n<p class=\"muted\">The failed nodes first.</p>\n<table>\n<tr><th>host</th><th>verdict</th><th>figures</th><th>first reason</th></tr>\n");
        for (host, verdict, figures, note) in &certified {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                html(host),
                html(verdict),
                html(figures),
                html(note)
            );
        }
        out.push_str("</table>\n");
    }
    let (cols, _) = columns(c);
    let _ = writeln!(
        out,
        "<h2>Where nodes differ</h2>\n<p class=\"muted\">One row per group of identical nodes; a value unlike the majority is highlighted.</p>"
    );
    let _ = writeln!(out, "<table>\n<tr><th>nodes</th><th>hosts</th>{}</tr>", header(c, &cols));
    for (row, count, _) in group_rows(c) {
        let hosts = c.groups.get(row.group.unwrap_or(usize::MAX)).map_or_else(String::new, |g| g.hosts.join(", "));
        let _ = writeln!(out, "<tr><td class=\"num\">{count}</td><td>{}</td>{}</tr>", html(&hosts), cells(row, &cols));
    }
    out.push_str("</table>\n");
    let all: Vec<usize> = (0..c.facts.len()).collect();
    let _ = writeln!(
        out,
        "<details><summary>Every node ({})</summary>\n<table>\n<tr><th>host</th><th>outcome</th>{}</tr>",
        c.nodes.len(),
        header(c, &all)
    );
    for r in &c.nodes {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td>{}</tr>",
            html(&r.host),
            html(&r.outcome.describe()),
            cells(r, &all)
        );
    }
    out.push_str("</table>\n</details>\n");
    if !c.metrics.is_empty() {
        let _ = writeln!(
            out,
            "<h2>Benchmarks</h2>\n<p class=\"muted\">Slow: more than {:.0} % worse than the median.</p>\n<table>\n<tr><th>figure</th><th>median</th><th>slow nodes</th></tr>",
            SLOW_THRESHOLD * 100.0
        );
        for (i, m) in c.metrics.iter().enumerate() {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                html(&m.label),
                html(&median(m)),
                html(&slow_cell(c, i))
            );
        }
        out.push_str("</table>\n");
    }
    out.push_str("<footer>Written by gpu-doctor compare. This file is self-contained: it loads nothing from the network.</footer>\n</main>\n</body>\n</html>\n");
    out
}

fn header(c: &Comparison, cols: &[usize]) -> String {
    cols.iter().map(|&i| format!("<th>{}</th>", html(&c.facts[i].label))).collect()
}

fn cells(row: &NodeRow, cols: &[usize]) -> String {
    cols.iter()
        .map(|&i| {
            let class = if row.differs.get(i).copied().unwrap_or(false) { " class=\"differs\"" } else { "" };
            let v = if row.values.is_empty() { "" } else { value(row.values.get(i).and_then(Option::as_ref)) };
            format!("<td{class}>{}</td>", html(v))
        })
        .collect()
}
