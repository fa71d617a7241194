//! A benchmark run in words: the rows of measured against expected values, the tests that did
//! not run, the headline, the terminal table and the Markdown section. The HTML report
//! (`html.rs`) and the window build on the same rows.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use gpu_doctor_model::bench::format;
use gpu_doctor_model::bench::judgement::Verdict;
use gpu_doctor_model::bench::plan::TestKind;
use gpu_doctor_model::bench::run::BenchRun;
use gpu_doctor_model::bench::run::TestStatus;
use gpu_doctor_model::bench::unit::Unit;

/// A value with its unit, sizes in binary units.
pub fn show(value: f64, unit: Unit) -> String {
    match unit {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Unit::Bytes => format::bytes(value.max(0.0) as u64),
        Unit::Count => format::value(value),
        _ => format!("{} {}", format::value(value), unit.symbol()),
    }
}

/// One judged measurement as words, shared by the terminal table, Markdown and the window.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The test it came from.
    pub test: TestKind,
    /// What was measured, e.g. `pinned, 256 MiB and larger`.
    pub measurement: String,
    /// The measured value with its unit.
    pub measured: String,
    /// The expected value with its unit; `—` without one.
    pub expected: String,
    /// Measured as a share of expected, e.g. `84 %`; `—` without an expectation.
    pub percent: String,
    /// The verdict.
    pub verdict: Verdict,
    /// The verdict in words; `—` when there was nothing to compare with.
    pub verdict_text: String,
    /// Why, in one sentence.
    pub comment: String,
}

impl Row {
    /// The six cells of the terminal, Markdown and HTML tables.
    pub fn cells(&self) -> [String; 6] {
        [
            self.test.name().to_owned(),
            self.measurement.clone(),
            self.measured.clone(),
            self.expected.clone(),
            self.percent.clone(),
            self.verdict_text.clone(),
        ]
    }
}

/// One row per judged measurement as cells: test, measurement, measured, expected, %, verdict.
pub fn rows(run: &BenchRun) -> Vec<[String; 6]> {
    judged_rows(run).iter().map(Row::cells).collect()
}

/// One row per judged measurement, in test order.
pub fn judged_rows(run: &BenchRun) -> Vec<Row> {
    let mut rows = Vec::new();
    for t in &run.tests {
        for j in &t.judged {
            let m = &j.measurement;
            let verdict_text = match j.judgement.verdict {
                Verdict::NoReference => "—".to_owned(),
                v => v.label().to_owned(),
            };
            rows.push(Row {
                test: t.test,
                measurement: m.label.clone(),
                measured: show(m.value, m.unit),
                expected: j.judgement.expected.as_ref().map_or_else(|| "—".to_owned(), |e| show(e.value, e.unit)),
                percent: j.judgement.percent_of_expected.map_or_else(|| "—".to_owned(), |p| format!("{p:.0} %")),
                verdict: j.judgement.verdict,
                verdict_text,
                comment: j.judgement.comment.clone(),
            });
        }
    }
    rows
}

/// The tests that did not run, grouped by reason (`kind: reason`), so that tests that failed for
/// the same reason (no CUDA driver, say) share one line.
pub fn not_run(run: &BenchRun) -> Vec<(String, Vec<&'static str>)> {
    let mut failed: Vec<(String, Vec<&'static str>)> = Vec::new();
    for t in run.tests.iter().filter(|t| t.status == TestStatus::Failed) {
        if let Some(f) = &t.failure {
            let why = format!("{}: {}", f.kind.label(), f.reason);
            match failed.iter_mut().find(|(w, _)| *w == why) {
                Some((_, tests)) => tests.push(t.test.name()),
                None => failed.push((why, vec![t.test.name()])),
            }
        }
    }
    failed
}

/// One line saying what was measured: the device, the preset and how long it took; on a machine
/// where no GPU test got to a GPU, that no GPU was reached.
pub fn headline(run: &BenchRun) -> String {
    let d = run.device.as_ref();
    let mut parts = vec![format!("GPU {}", run.plan.gpu)];
    if let Some(cc) = d.and_then(|d| d.compute_capability) {
        parts.push(format!("compute capability {cc}"));
    }
    if let Some(sms) = d.and_then(|d| d.sm_count) {
        parts.push(format!("{sms} SMs"));
    }
    let preset = if run.plan.quick { "quick" } else { "full" };
    // Reached: the worker named the device, or some GPU test got past starting.
    let reached = d.is_some() || run.tests.iter().any(|t| t.test.needs_gpu() && t.status != TestStatus::Failed);
    let what = match d.and_then(|d| d.name.as_deref()) {
        Some(name) => format!("{name} ({})", parts.join(", ")),
        None if run.plan.gpu_tests().is_empty() => "CPU baselines only".to_owned(),
        None if !reached => format!("no GPU reached (GPU {} was asked for)", run.plan.gpu),
        None => parts.join(", "),
    };
    format!("{what}, {preset} preset, {:.0} s", run.duration_secs)
}

/// The terminal table and what follows it. The run's texts come from the worker, the GPU's driver
/// or a saved file, so each goes through `render::text::clean` first (one line, no control
/// characters), and so does every line printed.
pub fn table(run: &BenchRun) -> String {
    let cleaned = serde_json::to_value(run).ok().and_then(|mut v| {
        gpu_doctor_probes::rewrite::strings(&mut v, &mut |_, s| super::text::clean(s));
        serde_json::from_value::<BenchRun>(v).ok()
    });
    let mut out = String::new();
    for line in table_lines(cleaned.as_ref().unwrap_or(run)).lines() {
        out.push_str(&super::text::clean(line));
        out.push('\n');
    }
    out
}

fn table_lines(run: &BenchRun) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\ngpu-doctor bench · {}\n", headline(run));
    out.push_str(&measurement_table(run));
    out.push_str(&p2p_text(run));
    out.push_str(&after_the_table(run));
    out
}

/// One cell of the GPU-to-GPU matrix: the number, and the pair's verdict where this is the
/// cell that was judged.
#[derive(Debug, Clone, PartialEq)]
pub struct P2pCell {
    /// The value (`—` on the diagonal and where not measured).
    pub text: String,
    /// The pair's verdict, on the judged cell only.
    pub verdict: Option<Verdict>,
}

impl P2pCell {
    /// The value with its verdict's mark: `390.1`, `120.0 LOW`, `12.0 ?` (no reference).
    pub fn marked(&self) -> String {
        match self.verdict {
            None | Some(Verdict::Normal) => self.text.clone(),
            Some(Verdict::NoReference) => format!("{} ?", self.text),
            Some(v) => format!("{} {}", self.text, v.label()),
        }
    }
}

/// One table of the GPU-to-GPU matrix, as nvbandwidth prints them: rows copy from, columns copy to.
#[derive(Debug, Clone, PartialEq)]
pub struct P2pTable {
    /// What it shows, e.g. `P2P on, GB/s`.
    pub caption: String,
    /// The GPUs, as column and row labels.
    pub gpus: Vec<String>,
    /// `rows[src][dst]`.
    pub rows: Vec<Vec<P2pCell>>,
}

/// The GPU-to-GPU matrix in words: its tables (bandwidth P2P on, off, host-staged; latency P2P on
/// and off), then the lines under them (the all-to-all total, each judged pair's verdict).
pub fn p2p_tables(run: &BenchRun) -> Option<(Vec<P2pTable>, Vec<String>)> {
    use gpu_doctor_model::bench::p2p::P2pMode;
    let m = run.p2p()?;
    if m.pairs.is_empty() {
        return None;
    }
    let gpus: Vec<String> = m.gpus.iter().map(|g| g.ordinal.to_string()).collect();
    let table = |caption: String,
                 value: &dyn Fn(&gpu_doctor_model::bench::p2p::P2pPair) -> Option<f64>,
                 mode: Option<P2pMode>| {
        let rows = m
            .gpus
            .iter()
            .map(|src| {
                m.gpus
                    .iter()
                    .map(|dst| match m.pair(src.ordinal, dst.ordinal) {
                        Some(p) if src.ordinal != dst.ordinal || m.loopback => P2pCell {
                            text: value(p).map_or_else(|| "—".to_owned(), format::value),
                            verdict: p
                                .judgement
                                .as_ref()
                                .filter(|_| mode.is_some() && p.judged_mode == mode)
                                .map(|j| j.verdict),
                        },
                        _ => P2pCell { text: "—".to_owned(), verdict: None },
                    })
                    .collect()
            })
            .collect();
        P2pTable { caption, gpus: gpus.clone(), rows }
    };
    let size = format::bytes(m.bytes);
    let mut tables: Vec<P2pTable> = P2pMode::ALL
        .into_iter()
        .map(|mode| table(format!("{}, GB/s ({size} copies)", mode.label()), &|p| p.bandwidth(mode), Some(mode)))
        .collect();
    for mode in [P2pMode::PeerEnabled, P2pMode::PeerDisabled] {
        let caption = format!("latency, {}, µs ({} copies)", mode.label(), format::bytes(m.latency_bytes));
        tables.push(table(caption, &|p| p.latency(mode), None));
    }
    tables.retain(|t| t.rows.iter().flatten().any(|c| c.text != "—"));
    let mut lines = Vec::new();
    if let Some(s) = &m.staged_all_to_all_gbps {
        lines.push(format!(
            "all to all at once, host-staged: {} GB/s in all ({} GPUs)",
            format::value(s.median),
            m.gpus.len()
        ));
    }
    for p in &m.pairs {
        if let Some(j) = &p.judgement {
            lines.push(format!("GPU {} → GPU {}: {} — {}", p.src, p.dst, j.verdict.label(), j.comment));
        }
    }
    Some((tables, lines))
}

/// The GPU-to-GPU matrix for the terminal: each table aligned, then the lines under it.
fn p2p_text(run: &BenchRun) -> String {
    let Some((tables, lines)) = p2p_tables(run) else { return String::new() };
    let mut out = String::from(
        "\nGPU-to-GPU copies (rows: from GPU, columns: to GPU; the cell each pair was judged on says LOW, ? (no \
         reference) or above theory?):\n",
    );
    for t in &tables {
        let cells: Vec<Vec<String>> = t.rows.iter().map(|r| r.iter().map(P2pCell::marked).collect()).collect();
        let width = cells.iter().flatten().chain(&t.gpus).map(|c| c.chars().count()).max().unwrap_or(1).max(5);
        let _ = writeln!(out, "  {}", t.caption);
        let _ = writeln!(
            out,
            "  {:>4}  {}",
            "",
            t.gpus.iter().map(|g| format!("{g:>width$}")).collect::<Vec<_>>().join("  ")
        );
        for (g, row) in t.gpus.iter().zip(&cells) {
            let _ = writeln!(
                out,
                "  {g:>4}  {}",
                row.iter().map(|c| format!("{c:>width$}")).collect::<Vec<_>>().join("  ")
            );
        }
    }
    for l in lines {
        let _ = writeln!(out, "  {l}");
    }
    out
}

/// The GPU-to-GPU matrix as Markdown tables.
fn p2p_markdown(run: &BenchRun) -> String {
    use super::markdown::escape as cell;
    let Some((tables, lines)) = p2p_tables(run) else { return String::new() };
    let mut out = String::from(
        "
**GPU-to-GPU copies** (rows: from GPU, columns: to GPU)
",
    );
    for t in &tables {
        let _ = writeln!(
            out,
            "
{}
",
            cell(&t.caption)
        );
        let _ = writeln!(out, "| from ↓ to → | {} |", t.gpus.join(" | "));
        let _ = writeln!(out, "|---|{}", "--:|".repeat(t.gpus.len()));
        for (g, row) in t.gpus.iter().zip(&t.rows) {
            let _ =
                writeln!(out, "| {g} | {} |", row.iter().map(|c| cell(&c.marked())).collect::<Vec<_>>().join(" | "));
        }
    }
    if !lines.is_empty() {
        out.push('\n');
        for l in lines {
            let _ = writeln!(out, "- {}", cell(&l));
        }
    }
    out
}

/// The judged measurements as an aligned table, then the tests that did not run.
fn measurement_table(run: &BenchRun) -> String {
    let mut out = String::new();
    let header = ["Test", "Measurement", "Measured", "Expected", "%", "Verdict"].map(str::to_owned);
    let rows = rows(run);
    let mut widths = header.clone().map(|h| h.chars().count());
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    widths[1] = widths[1].min(60);
    let line = |cells: &[String; 6]| {
        let mut s = String::new();
        for (i, (c, w)) in cells.iter().zip(widths).enumerate() {
            let c: String =
                if c.chars().count() > w { c.chars().take(w - 1).chain(['…']).collect() } else { c.clone() };
            let pad = w.saturating_sub(c.chars().count());
            if (2..=4).contains(&i) {
                let _ = write!(s, "{}{c}  ", " ".repeat(pad));
            } else {
                let _ = write!(s, "{c}{}  ", " ".repeat(pad));
            }
        }
        s.trim_end().to_owned()
    };
    if rows.is_empty() {
        let _ = writeln!(out, "No test produced a measurement.");
    } else {
        let _ = writeln!(out, "{}", line(&header));
        for r in &rows {
            let _ = writeln!(out, "{}", line(r));
        }
    }
    let failed = not_run(run);
    if !failed.is_empty() {
        let _ = writeln!(out, "\nDid not run:");
        for (why, tests) in failed {
            let _ = writeln!(out, "  {}\n      {why}", tests.join(", "));
        }
    }
    out
}

/// Checks, GPU-against-CPU comparisons, clocks, findings, notes, bases and telemetry.
fn after_the_table(run: &BenchRun) -> String {
    let mut out = String::new();
    let checks: Vec<_> = run.tests.iter().filter_map(|t| t.result.as_ref()).flat_map(|r| &r.checks).collect();
    if !checks.is_empty() {
        let _ = writeln!(out, "\nChecks:");
        for c in checks {
            let _ = writeln!(out, "  {} {} ({})", if c.passed { "ok    " } else { "FAILED" }, c.name, c.detail);
        }
    }
    if !run.comparisons.is_empty() {
        let _ = writeln!(out, "\nGPU against CPU:");
        for c in &run.comparisons {
            let _ = writeln!(
                out,
                "  {:.0}× — {}: {} against {}",
                c.times,
                c.label,
                show(c.gpu, c.unit),
                show(c.cpu, c.unit)
            );
        }
    }
    if let Some(c) = &run.clocks_under_load {
        let _ = writeln!(out, "\nClocks under load: {}", c.summary);
    }
    if !run.findings.is_empty() {
        let _ = writeln!(out, "\nFindings:");
        for f in &run.findings {
            let _ = writeln!(out, "  [{:?}] {}", f.severity, f.summary);
            if let Some(fix) = &f.fix {
                let _ = writeln!(out, "      fix: {fix}");
            }
        }
    }
    let notes: Vec<String> = run
        .tests
        .iter()
        .filter_map(|t| t.result.as_ref().map(|r| (t.test, r)))
        .flat_map(|(test, r)| r.notes.iter().map(move |n| format!("{}: {n}", test.name())))
        .collect();
    if !notes.is_empty() {
        let _ = writeln!(out, "\nNotes:");
        for n in notes {
            let _ = writeln!(out, "  {n}");
        }
    }
    let bases: BTreeSet<String> = run
        .tests
        .iter()
        .flat_map(|t| &t.judged)
        .filter_map(|j| j.judgement.expected.as_ref().map(|e| e.basis.clone()))
        .filter(|b| !b.is_empty())
        .collect();
    if !bases.is_empty() {
        let _ = writeln!(out, "\nExpected values:");
        for b in bases {
            let _ = writeln!(out, "  {b}");
        }
    }
    if let Some(numa) = &run.worker.numa {
        let _ = writeln!(out, "\nWorker: {numa}");
    }
    if let Some(note) = &run.telemetry_note {
        let _ = writeln!(out, "\nTelemetry: {note}");
    } else if !run.telemetry.is_empty() {
        let _ = writeln!(out, "\nTelemetry: {} NVML samples (in the JSON: --json or -o FILE)", run.telemetry.len());
    }
    out
}

/// The run as a Markdown section for `report --bench FILE --format md`; every text from the run
/// (which may come from another machine's file) through `markdown::escape`.
pub fn markdown(run: &BenchRun) -> String {
    use super::markdown::escape as cell;
    let mut out = String::new();
    let _ = writeln!(out, "\n### Benchmarks\n\n{}\n", cell(&headline(run)));
    let _ = writeln!(out, "| test | measurement | measured | expected | % | verdict |\n|---|---|--:|--:|--:|---|");
    for r in rows(run) {
        let _ = writeln!(out, "| {} |", r.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | "));
    }
    for t in run.tests.iter().filter(|t| t.status == TestStatus::Failed) {
        if let Some(f) = &t.failure {
            let _ = writeln!(out, "| {} | not run | | | | {}: {} |", t.test.name(), f.kind.label(), cell(&f.reason));
        }
    }
    out.push_str(&p2p_markdown(run));
    if !run.comparisons.is_empty() {
        let _ = writeln!(out);
        for c in &run.comparisons {
            let _ = writeln!(out, "- GPU against CPU, {}: **{:.0}×**", cell(&c.label), c.times);
        }
    }
    if !run.findings.is_empty() {
        let _ = writeln!(out, "\n**Findings**\n");
        for f in &run.findings {
            let _ = writeln!(out, "- {:?}: {}", f.severity, cell(&f.summary));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use gpu_doctor_model::bench::plan::BenchPlan;
    use gpu_doctor_model::bench::protocol::{BenchEvent, Failure, FailureKind, Measurement, Metric, TestResult};
    use gpu_doctor_model::bench::record::{RunRecord, TimedEvent};
    use gpu_doctor_model::bench::verdict::Facts;

    use super::*;

    fn sample_run() -> BenchRun {
        let plan = BenchPlan::preset(0, vec![TestKind::H2d, TestKind::D2h, TestKind::Fma], true);
        let finished = |test, metric, value| TimedEvent {
            t_ms: 1,
            event: BenchEvent::Finished {
                test,
                result: TestResult {
                    measurements: vec![Measurement {
                        metric,
                        label: format!("{test} plateau"),
                        value,
                        unit: Unit::GbPerS,
                        stats: None,
                    }],
                    ..TestResult::default()
                },
            },
        };
        let record = RunRecord {
            events: vec![
                finished(TestKind::H2d, Metric::HostToDevice { pinned: true }, 2.3),
                finished(TestKind::D2h, Metric::DeviceToHost { pinned: true }, 0.8),
                TimedEvent {
                    t_ms: 2,
                    event: BenchEvent::Failed {
                        test: TestKind::Fma,
                        failure: Failure::new(FailureKind::MissingLibrary, "NVRTC could not be loaded"),
                    },
                },
            ],
            ..RunRecord::default()
        };
        gpu_doctor_judge::bench::run::assemble(&plan, record, |_| Facts {
            link_gbytes_per_s: Some(2.75),
            link_basis: Some("Thunderbolt 3 ≈ 2.75 GB/s".into()),
            ..Facts::default()
        })
    }

    #[test]
    fn the_table_shows_measured_expected_percent_and_verdict() {
        let text = table(&sample_run());
        let h2d = text.lines().find(|l| l.starts_with("h2d")).unwrap();
        for part in ["2.30 GB/s", "2.75 GB/s", "84 %", "normal"] {
            assert!(h2d.contains(part), "{part} missing in {h2d:?}");
        }
        let d2h = text.lines().find(|l| l.starts_with("d2h")).unwrap();
        assert!(d2h.contains("LOW") && d2h.contains("29 %"), "{d2h}");
        assert!(text.contains("fma\n      missing library: NVRTC could not be loaded"), "{text}");
        assert!(text.contains("Thunderbolt 3 ≈ 2.75 GB/s"), "the basis of the expectation is listed");
        assert!(text.contains("Findings:") && text.contains("fix:"), "{text}");
    }

    #[test]
    fn the_markdown_section_has_a_row_per_measurement_and_failure() {
        let md = markdown(&sample_run());
        assert!(md.starts_with("\n### Benchmarks"));
        assert!(md.contains("| h2d | h2d plateau | 2.30 GB/s | 2.75 GB/s | 84 % | normal |"), "{md}");
        assert!(md.contains("| fma | not run |"), "{md}");
    }

    #[test]
    fn the_headline_says_when_no_gpu_was_reached() {
        let plan = BenchPlan::preset(0, vec![TestKind::H2d, TestKind::Cpu], true);
        let record = RunRecord {
            events: vec![TimedEvent {
                t_ms: 1,
                event: BenchEvent::Failed {
                    test: TestKind::H2d,
                    failure: Failure::new(FailureKind::MissingLibrary, "libcuda.so not found"),
                },
            }],
            ..RunRecord::default()
        };
        let run = gpu_doctor_judge::bench::run::assemble(&plan, record, |_| Facts::default());
        let line = headline(&run);
        assert!(line.starts_with("no GPU reached (GPU 0 was asked for)"), "{line}");
        assert!(table(&run).contains(&line));
        // A GPU test that ran: the GPU is named as before.
        assert!(headline(&sample_run()).starts_with("GPU 0, quick preset"), "{}", headline(&sample_run()));
        let cpu = gpu_doctor_judge::bench::run::assemble(
            &BenchPlan::preset(0, vec![TestKind::Cpu], true),
            RunRecord::default(),
            |_| Facts::default(),
        );
        assert!(headline(&cpu).starts_with("CPU baselines only"), "{}", headline(&cpu));
    }

    #[test]
    fn the_table_says_where_the_worker_ran() {
        let mut run = sample_run();
        assert!(!table(&run).contains("Worker:"));
        run.worker.numa = Some("bound to the GPU's NUMA node 1: CPUs 16-31".into());
        assert!(table(&run).contains("\nWorker: bound to the GPU's NUMA node 1: CPUs 16-31\n"), "{}", table(&run));
    }

    /// A two-GPU NVLink run from a fake worker: one pair normal, the other LOW.
    pub(crate) fn p2p_run() -> BenchRun {
        use gpu_doctor_model::LinkKind;
        use gpu_doctor_model::bench::p2p::{P2pEnd, P2pGpu, P2pLinkFact, P2pMatrix, P2pMeasure, P2pMode, P2pPair};
        use gpu_doctor_model::bench::stats::Stats;
        let measure = |mode, gbps: f64, us: Option<f64>| P2pMeasure {
            mode,
            bandwidth_gbps: Stats::from_samples(&[gbps]),
            latency_us: us.and_then(|u| Stats::from_samples(&[u])),
            skipped: None,
        };
        let pair = |src, dst, on| P2pPair {
            src,
            dst,
            can_access_peer: true,
            measures: vec![
                measure(P2pMode::PeerEnabled, on, Some(2.4)),
                measure(P2pMode::PeerDisabled, 20.5, Some(11.0)),
                measure(P2pMode::HostStaged, 12.25, None),
            ],
            judgement: None,
            judged_mode: None,
        };
        let matrix = P2pMatrix {
            bytes: 64 << 20,
            latency_bytes: 4096,
            gpus: (0..2).map(|ordinal| P2pGpu { ordinal, ..P2pGpu::default() }).collect(),
            pairs: vec![pair(0, 1, 390.0), pair(1, 0, 100.0)],
            staged_all_to_all_gbps: Stats::from_samples(&[23.0]),
            loopback: false,
        };
        let plan = BenchPlan::preset(0, vec![TestKind::P2p], true);
        let record = RunRecord {
            events: vec![TimedEvent {
                t_ms: 1,
                event: BenchEvent::Finished {
                    test: TestKind::P2p,
                    result: TestResult { p2p: Some(matrix), ..TestResult::default() },
                },
            }],
            ..RunRecord::default()
        };
        let end = |index| P2pEnd { index, bus_id: None, cuda_ordinal: Some(index) };
        let link = P2pLinkFact {
            gpus: [end(0), end(1)],
            link: LinkKind::Nvlink { links: 18 },
            p2p_ok: Some(true),
            p2p_status: None,
            peer: Some((450.0, "NV18: 18 NVLinks × 25 GB/s per direction (NVLink 4) = 450 GB/s".into())),
            host: None,
        };
        gpu_doctor_judge::bench::run::assemble(&plan, record, |_| Facts { p2p_links: vec![link], ..Facts::default() })
    }

    #[test]
    fn the_p2p_matrix_shows_like_nvbandwidth_with_the_judged_cells_marked() {
        let run = p2p_run();
        let text = table(&run);
        let at = text.find("GPU-to-GPU copies (rows: from GPU, columns: to GPU").unwrap();
        let lines: Vec<&str> = text[at..].lines().collect();
        assert_eq!(lines[1].trim(), "P2P on, GB/s (64 MiB copies)");
        assert_eq!(lines[2].split_whitespace().collect::<Vec<_>>(), ["0", "1"]);
        assert_eq!(lines[3].split_whitespace().collect::<Vec<_>>(), ["0", "—", "390"]);
        assert_eq!(lines[4].split_whitespace().collect::<Vec<_>>(), ["1", "100", "LOW", "—"]);
        assert_eq!(lines[5].trim(), "P2P off, GB/s (64 MiB copies)");
        assert_eq!(lines[7].split_whitespace().collect::<Vec<_>>(), ["0", "—", "20.5"], "P2P off was not judged here");
        assert!(text.contains("  latency, P2P on, µs (4 KiB copies)\n"), "{text}");
        assert!(text.contains("  latency, P2P off, µs (4 KiB copies)\n"), "{text}");
        assert!(!text.contains("latency, host-staged"), "host-staged has no latency: {text}");
        assert!(text.contains("  all to all at once, host-staged: 23.0 GB/s in all (2 GPUs)\n"), "{text}");
        assert!(text.contains("  GPU 1 → GPU 0: LOW — P2P on, judged against NV18: 22 % of expected"), "{text}");
        assert!(text.contains("[Warning] GPU-to-GPU copies are slower than the link"), "{text}");
        // The headline rows of the measurement table: the slowest pair per mode, judged in the matrix.
        assert_eq!(run.tests[0].judged.len(), 0, "the fake worker sent no headline");

        let md = markdown(&run);
        assert!(md.contains("| from ↓ to → | 0 | 1 |\n|---|--:|--:|\n| 0 | — | 390 |\n| 1 | 100 LOW | — |"), "{md}");
        assert!(md.contains("- GPU 0 → GPU 1: normal — P2P on, judged against NV18: 87 % of expected"), "{md}");
    }

    #[test]
    fn sizes_show_in_binary_units() {
        assert_eq!(show(1_073_741_824.0, Unit::Bytes), "1 GiB");
        assert_eq!(show(790.4, Unit::TflopPerS), "790 TFLOP/s");
    }
}
