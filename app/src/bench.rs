//! `gpu-doctor bench` and the hidden `bench-worker`: runs a plan in a worker process, shows a
//! progress bar per test on standard error, then a table of measured against expected values.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use gpu_doctor_kernels::libs::PreparedLibraries;
use gpu_doctor_kernels::protocol::{BenchEvent, Unit};
use gpu_doctor_kernels::run::{BENCH_SCHEMA_VERSION, TestStatus};
use gpu_doctor_kernels::verdict::Verdict;
use gpu_doctor_kernels::{BenchPlan, BenchRun, RunOptions, TelemetrySource, TestKind, WorkerSpec, facts, format};
use gpu_doctor_probes::Snapshot;
use gpu_doctor_probes::compat::Kb;
use gpu_doctor_probes::host::Host;
use gpu_doctor_probes::host::telemetry::{self, GpuTelemetry};
use gpu_doctor_probes::probe::{self, Options};

/// Exit code: every requested test ran and passed its checks.
pub const EXIT_ALL_RAN: u8 = 0;
/// Exit code: some test did not run, failed, or failed a check.
pub const EXIT_INCOMPLETE: u8 = 1;
/// Exit code: the command line was wrong.
pub const EXIT_USAGE: u8 = crate::cli::EXIT_USAGE;
/// Exit code: something went wrong inside gpu-doctor (the worker could not be found, the output
/// could not be written).
pub const EXIT_INTERNAL: u8 = crate::cli::EXIT_INTERNAL;

/// `bench --help` text after the options.
pub const AFTER_HELP: &str = "\
Tests (--tests, comma-separated; default: all but sustained):
  h2d, d2h   host↔device copies, pageable and pinned, 4 KiB–1 GiB, against the
             link's bandwidth
  bidir      both directions at once (pinned)
  d2d        device memory bandwidth: the driver's memcpy and a copy kernel
  gemm       cuBLAS FP32/TF32/FP16/BF16, 256–8192, against the GPU's peak;
             checked on the CPU
  fma        FP32 FMA peak (needs NVRTC)
  latency    kernel launch latency (needs NVRTC)
  memtest    largest allocation; a pattern test over --memtest-share of free
             memory
  cpu        CPU baselines: multithreaded SGEMM and host memcpy, for GPU-vs-CPU
             ratios
  sustained  a GEMM loop for --sustained-secs; clocks, temperature and power
             sampled

CUDA runs only in a separate worker process, so a crash, a missing library or an out-of-memory \
error fails one test with a reason instead of crashing gpu-doctor. --gpu is the nvidia-smi index \
(the worker sets CUDA_DEVICE_ORDER=PCI_BUS_ID so that CUDA counts the same way). bench always \
measures this machine, so it takes no --replay.

Examples:
  gpu-doctor bench --quick
      every default test, fewer sizes (about a minute)
  gpu-doctor bench --tests h2d,d2h,bidir
      is this eGPU's link as fast as it should be?
  gpu-doctor bench --tests sustained --sustained-secs 300
  gpu-doctor bench -o run.json && gpu-doctor report --bench run.json -o r.md

Exit codes: 0 every requested test ran; 1 some test did not run or failed (the table says why); \
2 the command line was wrong; 3 an input could not be read; 4 an internal error.";

/// `bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The GPU to measure, by nvidia-smi index.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub gpu: u32,
    /// The tests to run, comma-separated (see below).
    #[arg(long, value_name = "LIST", value_parser = parse_tests)]
    pub tests: Option<TestList>,
    /// Fewer sizes and repetitions: about a minute instead of several.
    #[arg(long)]
    pub quick: bool,
    /// Print the run as JSON on standard output instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also save the run as JSON to FILE (for `gpu-doctor report --bench FILE`).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Length of the sustained-load test, seconds (default 60, 15 with --quick).
    #[arg(long, value_name = "SECS")]
    pub sustained_secs: Option<u32>,
    /// Share of free GPU memory the memory test writes and verifies, above 0 and at most 0.9
    /// (default 0.1, 0.02 with --quick).
    #[arg(long, value_name = "SHARE")]
    pub memtest_share: Option<f64>,
    /// Stop the GPU tests after this many seconds (default: a budget per test).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,
}

/// A parsed `--tests` list.
#[derive(Debug, Clone)]
pub struct TestList(pub Vec<TestKind>);

fn parse_tests(text: &str) -> Result<TestList, String> {
    TestKind::parse_list(text).map(TestList).map_err(|e| e.to_string())
}

/// The hidden `bench-worker` subcommand.
pub fn worker() -> u8 {
    let code = gpu_doctor_kernels::worker_main(std::io::stdin(), &mut std::io::stdout().lock());
    u8::try_from(code).unwrap_or(EXIT_INTERNAL)
}

/// NVML telemetry of one GPU through the probes, shown to `tap` as it is taken.
struct NvmlTelemetry {
    index: u32,
    tap: Option<TelemetryTap>,
}

impl TelemetrySource for NvmlTelemetry {
    fn sample(&mut self) -> Result<GpuTelemetry, String> {
        let sample = telemetry::sample(self.index).map_err(|e| e.to_string())?;
        if let Some(tap) = &mut self.tap {
            tap(&sample);
        }
        Ok(sample)
    }
}

/// `bench`: returns the exit code.
pub fn bench(host: &dyn Host, args: &BenchArgs, this_machine: bool) -> u8 {
    if !this_machine {
        eprintln!("gpu-doctor: bench measures this machine; it cannot be combined with --replay");
        return EXIT_USAGE;
    }
    let tests = args.tests.as_ref().map_or_else(TestKind::default_set, |t| t.0.clone());
    let mut plan = BenchPlan::preset(args.gpu, tests, args.quick);
    if let Some(s) = args.sustained_secs {
        plan.sustained_secs = s;
    }
    if let Some(s) = args.memtest_share {
        plan.memtest_share = s;
    }
    if let Err(e) = plan.validate() {
        eprintln!("gpu-doctor: {e}");
        return EXIT_USAGE;
    }
    match run(host, args, &plan) {
        Ok(run) => {
            if run.all_ran() {
                EXIT_ALL_RAN
            } else {
                EXIT_INCOMPLETE
            }
        }
        Err(e) => {
            eprintln!("gpu-doctor: {e:#}");
            EXIT_INTERNAL
        }
    }
}

fn run(host: &dyn Host, args: &BenchArgs, plan: &BenchPlan) -> Result<BenchRun> {
    let needs_gpu = !plan.gpu_tests().is_empty();
    let snapshot = needs_gpu.then(|| {
        probe::collect(host, &Options { deep: false, extra_pythons: Vec::new(), cwd: std::env::current_dir().ok() })
    });
    let mut progress = Progress::new(std::io::stderr().is_terminal());
    let how = Measure { timeout: args.timeout.map(Duration::from_secs), ..Measure::default() };
    let run = measure(snapshot.as_ref(), plan, how, &mut |e| progress.show(e))?;

    if let Some(path) = &args.output {
        let json = serde_json::to_string_pretty(&run).context("could not serialize the run")? + "\n";
        crate::files::write_file(path, &json)?;
        eprintln!("wrote {}", path.display());
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &run).context("could not write the JSON")?;
        writeln!(out)?;
    } else {
        out.write_all(table(&run).as_bytes())?;
    }
    Ok(run)
}

/// Sees each telemetry sample as it is taken (the window plots them live).
pub type TelemetryTap = Box<dyn FnMut(&GpuTelemetry) + Send>;

/// How `measure` runs a plan.
#[derive(Default)]
pub struct Measure {
    /// Set to stop the run; the tests not yet ended fail as cancelled.
    pub cancel: Arc<AtomicBool>,
    /// Longest the GPU tests may take; `None`: the plan's own budget (`BenchPlan::time_limit`).
    pub timeout: Option<Duration>,
    /// Called with every telemetry sample of the benchmarked GPU; `None`: nobody watches.
    pub telemetry_tap: Option<TelemetryTap>,
}

impl std::fmt::Debug for Measure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Measure")
            .field("timeout", &self.timeout)
            .field("telemetry_tap", &self.telemetry_tap.is_some())
            .finish_non_exhaustive()
    }
}

/// Runs a validated plan on this machine and assembles the judged run: prepares the CUDA library
/// path, starts the worker for the GPU tests (none is started when no test needs the GPU), samples
/// telemetry while it runs, runs the CPU baselines here, and judges every number against the
/// facts of `snapshot` (this machine's probe; `None` when no GPU test runs). `on_event` sees every
/// event as it arrives. Shared by `gpu-doctor bench` and the window; it blocks until the run ends.
pub fn measure(
    snapshot: Option<&Snapshot>,
    plan: &BenchPlan,
    how: Measure,
    on_event: &mut dyn FnMut(&BenchEvent),
) -> Result<BenchRun> {
    let needs_gpu = !plan.gpu_tests().is_empty();
    let libraries = PreparedLibraries::prepare(snapshot);
    let spec = if needs_gpu {
        worker_spec(&libraries)?
    } else {
        // Never started: the runner starts a worker only for GPU tests.
        WorkerSpec { program: PathBuf::new(), args: Vec::new(), env: Vec::new() }
    };
    let telemetry = needs_gpu
        .then(|| Box::new(NvmlTelemetry { index: plan.gpu, tap: how.telemetry_tap }) as Box<dyn TelemetrySource>);
    let opts = RunOptions {
        timeout: how.timeout.unwrap_or_else(|| plan.time_limit()),
        cancel: how.cancel,
        telemetry,
        telemetry_interval: Duration::from_millis(100),
    };
    let record = gpu_doctor_kernels::runner::run(plan, &spec, opts, on_event);
    let kb = Kb::get().ok();
    let mut run = BenchRun::assemble(plan, record, |device| facts::gather(snapshot, plan.gpu, device, kb));
    run.library_notes.clone_from(&libraries.plan.notes);
    Ok(run)
}

/// How to start `gpu-doctor bench-worker`: this executable, with the prepared library path and
/// `CUDA_DEVICE_ORDER=PCI_BUS_ID` so that CUDA counts GPUs as NVML does.
fn worker_spec(libraries: &PreparedLibraries) -> Result<WorkerSpec> {
    let program = std::env::current_exe().context("could not find gpu-doctor's own executable to start the worker")?;
    let path_var = if cfg!(windows) { "PATH" } else { "LD_LIBRARY_PATH" };
    let mut env: Vec<(OsString, OsString)> = vec![("CUDA_DEVICE_ORDER".into(), "PCI_BUS_ID".into())];
    if let Some(path) = libraries.search_path(std::env::var_os(path_var).as_deref()) {
        env.push((path_var.into(), path));
    }
    Ok(WorkerSpec { program, args: vec!["bench-worker".into()], env })
}

/// Reads a run saved with `bench -o FILE`.
pub fn load(path: &Path) -> Result<BenchRun> {
    let text = std::fs::read_to_string(path).with_context(|| format!("could not read {}", path.display()))?;
    let run: BenchRun = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a run saved by `gpu-doctor bench -o`", path.display()))?;
    anyhow::ensure!(
        run.schema_version == BENCH_SCHEMA_VERSION,
        "{} has bench schema {}, this gpu-doctor reads schema {BENCH_SCHEMA_VERSION}",
        path.display(),
        run.schema_version
    );
    Ok(run)
}

/// A progress bar per test on standard error (one line per test when it is not a terminal).
struct Progress {
    tty: bool,
    started: Option<Instant>,
    last_draw: Option<Instant>,
}

const BAR: usize = 24;

impl Progress {
    fn new(tty: bool) -> Self {
        Self { tty, started: None, last_draw: None }
    }

    fn show(&mut self, event: &BenchEvent) {
        let mut err = std::io::stderr().lock();
        let name = event.test().name();
        match event {
            BenchEvent::Started { .. } => {
                self.started = Some(Instant::now());
                if self.tty {
                    let _ = write!(err, "\r\x1b[2K  {name:<10}[{}] starting", " ".repeat(BAR));
                }
            }
            BenchEvent::Progress { done, total, what, .. } => {
                let due = self.last_draw.is_none_or(|t| t.elapsed() >= Duration::from_millis(50));
                if self.tty && due && *total > 0 {
                    let filled = (*done as usize * BAR / *total as usize).min(BAR);
                    let _ = write!(
                        err,
                        "\r\x1b[2K  {name:<10}[{}{}] {done}/{total} {}",
                        "#".repeat(filled),
                        " ".repeat(BAR - filled),
                        crate::render::text::clean(what)
                    );
                    self.last_draw = Some(Instant::now());
                }
            }
            BenchEvent::Sample { .. } => {}
            BenchEvent::Finished { .. } => {
                let secs = self.started.map_or(0.0, |s| s.elapsed().as_secs_f64());
                let clear = if self.tty { "\r\x1b[2K" } else { "" };
                let _ = writeln!(err, "{clear}  {name:<10}[{}] done in {secs:.1} s", "#".repeat(BAR));
            }
            BenchEvent::Failed { failure, .. } => {
                let clear = if self.tty { "\r\x1b[2K" } else { "" };
                let _ = writeln!(err, "{clear}  {name:<10}not run: {}", failure.kind.label());
            }
        }
        let _ = err.flush();
    }
}

/// A value with its unit, sizes in binary units.
pub fn show(value: f64, unit: Unit) -> String {
    match unit {
        #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "non-negative; `as` saturates")]
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
        gpu_doctor_probes::rewrite::strings(&mut v, &mut |_, s| crate::render::text::clean(s));
        serde_json::from_value::<BenchRun>(v).ok()
    });
    let mut out = String::new();
    for line in table_lines(cleaned.as_ref().unwrap_or(run)).lines() {
        out.push_str(&crate::render::text::clean(line));
        out.push('\n');
    }
    out
}

#[expect(clippy::too_many_lines, reason = "to be split with the rest of bench.rs")]
fn table_lines(run: &BenchRun) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\ngpu-doctor bench · {}\n", headline(run));
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
    use crate::render::markdown::escape as cell;
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
    use gpu_doctor_kernels::protocol::{Failure, FailureKind, Measurement, Metric, TestResult};
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
    fn sizes_show_in_binary_units() {
        assert_eq!(show(1_073_741_824.0, Unit::Bytes), "1 GiB");
        assert_eq!(show(790.4, Unit::TflopPerS), "790 TFLOP/s");
    }
}
