//! A benchmark run in words: the rows of measured against expected values, the tests that did
//! not run, the headline, the terminal table and the Markdown section. The HTML report
//! (`html.rs`) and the window build on the same rows.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use gpu_doctor_kernels::protocol::Unit;
use gpu_doctor_kernels::run::TestStatus;
use gpu_doctor_kernels::verdict::Verdict;
use gpu_doctor_kernels::{BenchRun, TestKind, format};

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
    out.push_str(&after_the_table(run));
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
mod tests {
    use gpu_doctor_kernels::BenchPlan;
    use gpu_doctor_kernels::protocol::{BenchEvent, Failure, FailureKind, Measurement, Metric, TestResult};
    use gpu_doctor_kernels::runner::{RunRecord, TimedEvent};
    use gpu_doctor_kernels::verdict::Facts;

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
        BenchRun::assemble(&plan, record, |_| Facts {
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
        let run = BenchRun::assemble(&plan, record, |_| Facts::default());
        let line = headline(&run);
        assert!(line.starts_with("no GPU reached (GPU 0 was asked for)"), "{line}");
        assert!(table(&run).contains(&line));
        // A GPU test that ran: the GPU is named as before.
        assert!(headline(&sample_run()).starts_with("GPU 0, quick preset"), "{}", headline(&sample_run()));
        let cpu = BenchRun::assemble(&BenchPlan::preset(0, vec![TestKind::Cpu], true), RunRecord::default(), |_| {
            Facts::default()
        });
        assert!(headline(&cpu).starts_with("CPU baselines only"), "{}", headline(&cpu));
    }

    #[test]
    fn the_table_says_where_the_worker_ran() {
        let mut run = sample_run();
        assert!(!table(&run).contains("Worker:"));
        run.worker.numa = Some("bound to the GPU's NUMA node 1: CPUs 16-31".into());
        assert!(table(&run).contains("\nWorker: bound to the GPU's NUMA node 1: CPUs 16-31\n"), "{}", table(&run));
    }

    #[test]
    fn sizes_show_in_binary_units() {
        assert_eq!(show(1_073_741_824.0, Unit::Bytes), "1 GiB");
        assert_eq!(show(790.4, Unit::TflopPerS), "790 TFLOP/s");
    }
}
