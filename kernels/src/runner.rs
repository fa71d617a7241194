//! The parent side: starts the worker, feeds it the plan, reads its events, samples telemetry
//! (the probes' `Sampler`) while it runs, enforces the time limit and cancellation, and turns every way the worker can die
//! into a `failed` event with a plain reason. Every planned test ends with exactly one `finished`
//! or `failed` event in the record.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use gpu_doctor_model::{EccChange, EccCounters};
use gpu_doctor_probes::host::process;
use gpu_doctor_probes::host::telemetry::{Detail, Reading, Sampler, Target, TelemetrySource};

use crate::numa::{self, Placement};
use gpu_doctor_model::bench::plan::{BenchPlan, TestKind};
use gpu_doctor_model::bench::protocol::{BenchEvent, Failure, FailureKind};
use gpu_doctor_model::bench::record::{RunRecord, TelemetryPoint, TimedEvent, WorkerOutcome};

/// Sees each telemetry sample of a run as it is taken.
pub type OnSample = Box<dyn FnMut(&TelemetryPoint) + Send>;

/// What to sample while the worker runs.
pub struct RunTelemetry {
    /// Where samples come from (NVML in the app, a fake in tests).
    pub source: Arc<dyn TelemetrySource>,
    /// The benchmarked GPU.
    pub gpu: Target,
    /// Sees each sample as it is taken (the window shows them live); `None`: nobody watches.
    pub on_sample: Option<OnSample>,
}

impl std::fmt::Debug for RunTelemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunTelemetry")
            .field("gpu", &self.gpu)
            .field("on_sample", &self.on_sample.is_some())
            .finish_non_exhaustive()
    }
}

/// Where the GPU's memory-error counters come from (NVML through the probes in the app; a fake in
/// tests). Read when the memory test starts and when it ends.
pub trait EccSource: Send {
    /// The counters of the benchmarked GPU now, or why they could not be read.
    fn read(&self) -> Result<EccCounters, String>;
}

/// How to start the worker.
#[derive(Debug, Clone)]
pub struct WorkerSpec {
    /// The program (normally `std::env::current_exe()`).
    pub program: PathBuf,
    /// Its arguments (normally `["bench-worker"]`).
    pub args: Vec<OsString>,
    /// Variables to set for it, e.g. `LD_LIBRARY_PATH`.
    pub env: Vec<(OsString, OsString)>,
}

/// Options of one run.
pub struct RunOptions {
    /// Longest the worker may take.
    pub timeout: Duration,
    /// Set to stop the run.
    pub cancel: Arc<AtomicBool>,
    /// Telemetry of the benchmarked GPU (every detail), sampled while the worker runs.
    pub telemetry: Option<RunTelemetry>,
    /// Time between telemetry samples (100 ms gives 10 Hz).
    pub telemetry_interval: Duration,
    /// Longest the worker may send no event before it is stopped as hung; `None`: each test's own
    /// limit (`BenchPlan::stall_limit`).
    pub stall_limit: Option<Duration>,
    /// The GPU's NUMA node to bind the worker to (`numa::placement`), or why there is none;
    /// `None`: the worker runs where the system puts it, and the run does not mention it.
    pub numa: Option<Result<Placement, String>>,
    /// The GPU's memory-error counters, read around the memory test; `None`: not read.
    pub ecc: Option<Box<dyn EccSource>>,
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("timeout", &self.timeout)
            .field("telemetry", &self.telemetry.is_some())
            .field("telemetry_interval", &self.telemetry_interval)
            .field("stall_limit", &self.stall_limit)
            .field("numa", &self.numa)
            .field("ecc", &self.ecc.is_some())
            .finish_non_exhaustive()
    }
}

const STDERR_TAIL: usize = 4096;
/// How often Cancel and the watchdog are looked at while the worker prints nothing.
const CHECK_TICK: Duration = Duration::from_millis(50);
const MAX_NOISE: usize = 20;

fn unix_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn ms_since(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Runs `plan`: its GPU tests in a worker process, then its CPU baselines in this process.
/// `on_event` sees every event as it arrives (for progress display).
pub fn run(
    plan: &BenchPlan,
    worker: &WorkerSpec,
    mut opts: RunOptions,
    on_event: &mut dyn FnMut(&BenchEvent),
) -> RunRecord {
    let start = Instant::now();
    let mut record = RunRecord { started_at_unix_secs: unix_secs(), ..RunRecord::default() };
    let gpu_tests = plan.gpu_tests();
    if !gpu_tests.is_empty() {
        let mut gpu_plan = plan.clone();
        gpu_plan.tests.clone_from(&gpu_tests);
        record.worker.library_path = worker
            .env
            .iter()
            .find(|(k, _)| k == "LD_LIBRARY_PATH" || k == "PATH")
            .map(|(_, v)| v.to_string_lossy().into_owned());
        let telemetry = opts.telemetry.take().map(|source| Telemetry::start(source, opts.telemetry_interval, start));
        run_worker(&gpu_plan, worker, &opts, start, &mut record, on_event);
        if let Some(t) = telemetry {
            let (points, note) = t.stop();
            record.telemetry = points;
            record.telemetry_note = note;
        } else {
            record.telemetry_note = Some("no telemetry source (NVML) was available".to_owned());
        }
    }
    if plan.tests.contains(&TestKind::Cpu) {
        let mut push = |event: BenchEvent| {
            on_event(&event);
            record.events.push(TimedEvent { t_ms: ms_since(start), event });
        };
        if opts.cancel.load(Ordering::Relaxed) {
            push(BenchEvent::Failed {
                test: TestKind::Cpu,
                failure: Failure::new(FailureKind::Cancelled, "cancelled before the CPU baselines"),
            });
        } else {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                crate::cpu::run(plan, &opts.cancel, &mut push)
            }));
            if let Err(panic) = outcome {
                let reason = format!("the CPU baselines panicked: {}", crate::worker::panic_message(panic.as_ref()));
                push(BenchEvent::Failed { test: TestKind::Cpu, failure: Failure::new(FailureKind::Panic, reason) });
            }
        }
    }
    record.duration_secs = start.elapsed().as_secs_f64();
    record
}

#[expect(clippy::too_many_lines, reason = "the worker's whole life in one place; split it when it grows")]
fn run_worker(
    plan: &BenchPlan,
    spec: &WorkerSpec,
    opts: &RunOptions,
    start: Instant,
    record: &mut RunRecord,
    on_event: &mut dyn FnMut(&BenchEvent),
) {
    let mut ended: BTreeSet<TestKind> = BTreeSet::new();
    let mut current: Option<TestKind> = None;
    let mut emit = |event: BenchEvent, record: &mut RunRecord| {
        on_event(&event);
        record.events.push(TimedEvent { t_ms: ms_since(start), event });
    };
    let plan_json = match serde_json::to_string(plan) {
        Ok(j) => j,
        Err(e) => {
            fail_rest(
                plan,
                &ended,
                None,
                &Failure::new(FailureKind::Internal, format!("could not write the plan: {e}")),
                &mut |ev| emit(ev, record),
            );
            return;
        }
    };
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    cmd.env(crate::worker::PARENT_PID_VAR, std::process::id().to_string());
    // Its own process group: a stop ends whatever the worker started too.
    let mut group = match process::spawn(&mut cmd) {
        Ok(c) => c,
        Err(e) => {
            let f = Failure::new(
                FailureKind::Internal,
                format!("could not start the benchmark worker {}: {e}", spec.program.display()),
            );
            fail_rest(plan, &ended, None, &f, &mut |ev| emit(ev, record));
            return;
        }
    };
    record.worker.started = true;
    // Bound before it reads the plan, so everything it allocates is placed by the bound CPUs.
    record.worker.numa = opts.numa.as_ref().map(|placement| bind_worker(&group, placement));
    // The plan is one line. Standard input then stays open until the run ends: the worker exits
    // when it closes, so it cannot outlive this process.
    let mut stdin = group.child().stdin.take();
    if let Some(pipe) = &mut stdin
        && let Err(e) = pipe.write_all(format!("{plan_json}\n").as_bytes()).and_then(|()| pipe.flush())
    {
        tracing::warn!("could not send the plan to the worker: {e}");
    }

    let mut watchdog = Watchdog::new(opts.stall_limit);
    let mut ecc = EccWindow::default();
    let mut stop_reason: Option<Failure> = None;
    let mut stderr_tail = String::new();
    let limits = process::Limits {
        deadline: start + opts.timeout,
        output_cap_bytes: usize::MAX,
        stdout: process::Reading::Lines { line_cap_bytes: usize::MAX },
        stderr: process::Reading::Chunks,
        tick: Some(CHECK_TICK),
    };
    let outcome = group.supervise(&limits, &mut |piece| {
        match piece {
            process::Event::Output(process::Output::Line(_, line)) => match BenchEvent::from_line(&line) {
                Some(event) => {
                    watchdog.saw(&event);
                    match &event {
                        BenchEvent::Started { test, .. } => current = Some(*test),
                        BenchEvent::Finished { test, .. } | BenchEvent::Failed { test, .. } => {
                            ended.insert(*test);
                            current = None;
                        }
                        BenchEvent::Sample { .. } | BenchEvent::Progress { .. } => {}
                    }
                    ecc.observe(&event, opts.ecc.as_deref());
                    emit(event, record);
                }
                None => {
                    if record.worker.noise.len() < MAX_NOISE {
                        record.worker.noise.push(line);
                    }
                }
            },
            process::Event::Output(process::Output::Chunk(_, bytes)) => keep_tail(&mut stderr_tail, &bytes),
            process::Event::Tick => {}
        }
        if stop_reason.is_none() {
            if opts.cancel.load(Ordering::Relaxed) {
                stop_reason = Some(Failure::new(FailureKind::Cancelled, "cancelled by the user"));
            } else {
                stop_reason = watchdog.check(plan, current, &ended);
            }
            if stop_reason.is_some() {
                return process::Flow::Stop;
            }
        }
        process::Flow::Go
    });
    if outcome.ending == process::Ending::TimedOut {
        stop_reason = Some(Failure::new(
            FailureKind::Timeout,
            format!("the benchmark worker ran past its time limit of {} s and was stopped", opts.timeout.as_secs()),
        ));
    }
    record.worker.stopped_by_parent = outcome.ending != process::Ending::Exited;
    // A worker stuck in the kernel past the grace is waited for a while longer.
    let status = outcome.status.or_else(|| group.wait_or_kill(Duration::from_secs(5)));
    record.memtest_ecc = opts.ecc.as_deref().and_then(|source| ecc.change(source));
    drop(stdin);
    record.worker.stderr_tail = stderr_tail;
    if let Some(status) = status {
        record.worker.exit_code = status.code();
        record.worker.signal = signal_of(&status);
    }
    if ended.len() < plan.tests.len() {
        let failure = stop_reason.unwrap_or_else(|| died(&record.worker));
        fail_rest(plan, &ended, current, &failure, &mut |ev| emit(ev, record));
    }
}

/// The no-progress watchdog: a worker that sends no event (a progress step, a sample) for longer
/// than the test's limit is stopped, so a hung GPU is reported within minutes rather than at the
/// whole run's time limit.
struct Watchdog {
    last_event: Instant,
    last_step: Option<String>,
    limit: Option<Duration>,
}

impl Watchdog {
    fn new(limit: Option<Duration>) -> Self {
        Self { last_event: Instant::now(), last_step: None, limit }
    }

    fn saw(&mut self, event: &BenchEvent) {
        self.last_event = Instant::now();
        match event {
            BenchEvent::Progress { what, .. } => self.last_step = Some(what.clone()),
            BenchEvent::Started { .. } => self.last_step = None,
            _ => {}
        }
    }

    /// The failure when the worker has been silent too long in the test it is on: `running`, or,
    /// between tests and while the GPU opens, the next one not ended.
    fn check(&self, plan: &BenchPlan, running: Option<TestKind>, ended: &BTreeSet<TestKind>) -> Option<Failure> {
        let test = running.or_else(|| plan.tests.iter().copied().find(|t| !ended.contains(t)))?;
        let limit = self.limit.unwrap_or_else(|| plan.stall_limit(test));
        if self.last_event.elapsed() <= limit {
            return None;
        }
        let step = match (&self.last_step, running) {
            (Some(step), _) => format!(" after \"{step}\""),
            (None, Some(_)) => " after it started".to_owned(),
            (None, None) => " (it had not started: the worker was opening the GPU)".to_owned(),
        };
        Some(Failure::new(
            FailureKind::Timeout,
            format!(
                "the {} test made no progress for {} s{step} and the worker was stopped; the GPU may be hung: see \
                 the kernel log for Xid (sudo dmesg | grep -i xid) and nvidia-smi",
                test.label(),
                limit.as_secs_f64()
            ),
        ))
    }
}

/// The memory-error counters when the memory test started and when it ended.
#[derive(Default)]
struct EccWindow {
    before: Option<Result<EccCounters, String>>,
    after: Option<Result<EccCounters, String>>,
}

impl EccWindow {
    /// Reads the counters when `event` starts or ends the memory test.
    fn observe(&mut self, event: &BenchEvent, source: Option<&dyn EccSource>) {
        let Some(source) = source else { return };
        match event {
            BenchEvent::Started { test: TestKind::Memtest, .. } if self.before.is_none() => {
                self.before = Some(source.read());
            }
            BenchEvent::Finished { test: TestKind::Memtest, .. }
            | BenchEvent::Failed { test: TestKind::Memtest, .. }
                if self.before.is_some() && self.after.is_none() =>
            {
                self.after = Some(source.read());
            }
            _ => {}
        }
    }

    /// The change over the memory test; read the end now when the worker died inside it.
    fn change(self, source: &dyn EccSource) -> Option<EccChange> {
        let before = self.before?;
        let after = self.after.unwrap_or_else(|| source.read());
        Some(match (before, after) {
            (Ok(b), Ok(a)) => EccChange::between(&b, &a),
            (Err(why), _) | (_, Err(why)) => EccChange::unread(&why),
        })
    }
}

/// Binds the started worker to the CPUs of the GPU's NUMA node that this process may use; the
/// words for the run either way.
fn bind_worker(group: &process::GroupChild, placement: &Result<Placement, String>) -> String {
    let bound = placement.clone().and_then(|p| {
        let allowed = process::allowed_cpus().ok();
        let cpus = numa::cpus_to_bind(&p, allowed.as_deref())?;
        group.set_cpu_affinity(&cpus).map_err(|e| format!("the system refused the CPU affinity: {e}"))?;
        Ok(format!(
            "bound to the GPU's NUMA node {}: CPUs {}",
            p.node,
            gpu_doctor_model::cpu_list(cpus.iter().copied())
        ))
    });
    bound.unwrap_or_else(|why| format!("not bound to the GPU's NUMA node: {why}"))
}

#[cfg(unix)]
fn signal_of(status: &ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(status)
}

#[cfg(not(unix))]
fn signal_of(_: &ExitStatus) -> Option<i32> {
    None
}

/// Why the worker's output ended early, in words.
fn died(w: &WorkerOutcome) -> Failure {
    let how = match (w.signal, w.exit_code) {
        (Some(9), _) => "was killed (signal 9: the system ran out of memory, or another program stopped it)".to_owned(),
        (Some(11), _) => "crashed (signal 11, segmentation fault)".to_owned(),
        (Some(6), _) => "aborted (signal 6)".to_owned(),
        (Some(s), _) => format!("was ended by signal {s}"),
        (None, Some(crate::worker::WORKER_EXIT_BAD_PLAN)) => "refused the plan".to_owned(),
        (None, Some(c)) => format!("exited with code {c}"),
        (None, None) => "ended without an exit status".to_owned(),
    };
    let tail = w.stderr_tail.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    let mut reason = format!("the benchmark worker {how} before finishing");
    if !tail.is_empty() {
        reason.push_str(&format!("; its last error line: {tail}"));
    }
    Failure::new(FailureKind::Crash, reason)
}

/// Ends every test of `plan` that has no terminal event: the running one with `failure`, the ones
/// not started with "not run" and the same reason.
fn fail_rest(
    plan: &BenchPlan,
    ended: &BTreeSet<TestKind>,
    running: Option<TestKind>,
    failure: &Failure,
    emit: &mut dyn FnMut(BenchEvent),
) {
    for &test in &plan.tests {
        if ended.contains(&test) {
            continue;
        }
        let f = if Some(test) == running || running.is_none() && failure.kind != FailureKind::Crash {
            failure.clone()
        } else {
            Failure::new(failure.kind, format!("not run: {}", failure.reason))
        };
        if Some(test) != running {
            emit(BenchEvent::Started { test, device: None });
        }
        emit(BenchEvent::Failed { test, failure: f });
    }
}

/// Adds `bytes` to `tail`, keeping only its last `STDERR_TAIL` bytes.
fn keep_tail(tail: &mut String, bytes: &[u8]) {
    tail.push_str(&String::from_utf8_lossy(bytes));
    if tail.len() > STDERR_TAIL {
        let mut cut = tail.len() - STDERR_TAIL;
        while !tail.is_char_boundary(cut) {
            cut += 1;
        }
        tail.drain(..cut);
    }
}

/// Telemetry while the worker runs: the samples so far and why sampling stopped early.
type Taken = Arc<Mutex<(Vec<TelemetryPoint>, Option<String>)>>;

/// The telemetry sampler of one run.
struct Telemetry {
    sampler: std::io::Result<Sampler>,
    taken: Taken,
}

impl Telemetry {
    fn start(telemetry: RunTelemetry, interval: Duration, t0: Instant) -> Self {
        let taken = Taken::default();
        let into = Arc::clone(&taken);
        let RunTelemetry { source, gpu, mut on_sample } = telemetry;
        let sampler = Sampler::start("bench-telemetry", source, vec![gpu], Detail::Full, interval, move |reading| {
            let Ok(mut taken) = into.lock() else { return false };
            match reading {
                Reading::Sample { sample, .. } => {
                    let point = TelemetryPoint { t_ms: ms_since(t0), sample };
                    if let Some(see) = &mut on_sample {
                        see(&point);
                    }
                    taken.0.push(point);
                }
                Reading::Asleep { .. } | Reading::Processes { .. } => {}
                Reading::Stopped(why) => taken.1 = Some(format!("telemetry stopped: {why}")),
            }
            true
        });
        Self { sampler, taken }
    }

    fn stop(self) -> (Vec<TelemetryPoint>, Option<String>) {
        match self.sampler.map(Sampler::finish) {
            Ok(true) => self.taken.lock().map(|mut t| std::mem::take(&mut *t)).unwrap_or_default(),
            Ok(false) => (Vec::new(), Some("the telemetry thread panicked".to_owned())),
            Err(_) => (Vec::new(), Some("the telemetry thread could not be started".to_owned())),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use gpu_doctor_model::telemetry::GpuTelemetry;

    /// Counts the times it was asked.
    #[derive(Default)]
    struct Fake(std::sync::atomic::AtomicU32);

    impl TelemetrySource for Fake {
        fn sample(&self, _: &Target, _: Detail) -> Result<GpuTelemetry, String> {
            let n = self.0.fetch_add(1, Ordering::Relaxed) + 1;
            Ok(GpuTelemetry { clock_sm_mhz: Some(n), ..GpuTelemetry::default() })
        }
        fn is_asleep(&self, _: &Target) -> bool {
            false
        }
    }

    fn terminal(record: &RunRecord, test: TestKind) -> Vec<&BenchEvent> {
        record
            .events
            .iter()
            .map(|e| &e.event)
            .filter(|e| e.test() == test && matches!(e, BenchEvent::Finished { .. } | BenchEvent::Failed { .. }))
            .collect()
    }

    fn opts(timeout: Duration) -> RunOptions {
        opts_with(timeout, Arc::new(Fake::default()))
    }

    fn opts_with(timeout: Duration, source: Arc<Fake>) -> RunOptions {
        RunOptions {
            timeout,
            cancel: Arc::new(AtomicBool::new(false)),
            telemetry: Some(RunTelemetry { source, gpu: Target { index: 0, bus_id: None }, on_sample: None }),
            telemetry_interval: Duration::from_millis(20),
            stall_limit: None,
            numa: None,
            ecc: None,
        }
    }

    /// A fake worker: a shell script that prints `lines`, then does `then`.
    #[cfg(unix)]
    fn sh(script: &str) -> WorkerSpec {
        WorkerSpec {
            program: PathBuf::from("/bin/sh"),
            args: vec!["-c".into(), script.into()],
            env: vec![("LD_LIBRARY_PATH".into(), "/nowhere".into())],
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_crashing_worker_fails_the_running_test_and_skips_the_rest() {
        let plan = BenchPlan::preset(0, vec![TestKind::H2d, TestKind::D2h], true);
        let script = r#"head -n 1 >/dev/null; echo '{"event":"started","test":"h2d"}'; echo 'stray output'; echo 'segfault here' >&2; kill -SEGV $$"#;
        let record = run(&plan, &sh(script), opts(Duration::from_secs(20)), &mut |_| {});
        let h2d = terminal(&record, TestKind::H2d);
        assert_eq!(h2d.len(), 1);
        let BenchEvent::Failed { failure, .. } = h2d[0] else { panic!("{h2d:?}") };
        assert_eq!(failure.kind, FailureKind::Crash);
        assert!(failure.reason.contains("signal 11"), "{}", failure.reason);
        assert!(failure.reason.contains("segfault here"), "{}", failure.reason);
        let BenchEvent::Failed { failure, .. } = terminal(&record, TestKind::D2h)[0] else { panic!() };
        assert!(failure.reason.starts_with("not run:"), "{}", failure.reason);
        assert_eq!(record.worker.signal, Some(11));
        assert_eq!(record.worker.noise, ["stray output"]);
        assert_eq!(record.worker.library_path.as_deref(), Some("/nowhere"));
        assert!(!record.telemetry.is_empty() || record.telemetry_note.is_some());
    }

    #[cfg(unix)]
    #[test]
    fn a_hanging_worker_is_stopped_at_the_time_limit() {
        let plan = BenchPlan::preset(0, vec![TestKind::Gemm], true);
        let script = r#"head -n 1 >/dev/null; echo '{"event":"started","test":"gemm"}'; sleep 30"#;
        let t = Instant::now();
        let source = Arc::new(Fake::default());
        let record = run(&plan, &sh(script), opts_with(Duration::from_millis(500), Arc::clone(&source)), &mut |_| {});
        let took = t.elapsed();
        assert!(took < Duration::from_secs(10));
        let BenchEvent::Failed { failure, .. } = terminal(&record, TestKind::Gemm)[0] else { panic!() };
        assert_eq!(failure.kind, FailureKind::Timeout);
        assert!(record.worker.stopped_by_parent);
        // 500 ms at one sample per 20 ms: telemetry ran at well over 10 Hz.
        assert!(record.telemetry.len() >= 5, "{} samples", record.telemetry.len());
        assert!(record.telemetry.windows(2).all(|w| w[0].t_ms <= w[1].t_ms));
        // Asked once per interval, and every answer is in the record.
        let asked = source.0.load(Ordering::Relaxed);
        assert_eq!(usize::try_from(asked).unwrap(), record.telemetry.len());
        assert!(u128::from(asked) <= took.as_millis() / 20 + 1, "{asked} samples in {took:?}");
    }

    #[cfg(unix)]
    #[test]
    fn a_worker_silent_past_the_stall_limit_is_stopped_long_before_the_time_limit() {
        let plan = BenchPlan::preset(0, vec![TestKind::H2d, TestKind::D2h], true);
        let script = r#"head -n 1 >/dev/null
            echo '{"event":"started","test":"h2d"}'
            echo '{"event":"progress","test":"h2d","done":1,"total":10,"what":"pinned 4 KiB"}'
            sleep 30"#;
        let mut o = opts(Duration::from_secs(60));
        o.stall_limit = Some(Duration::from_millis(500));
        let t = Instant::now();
        let record = run(&plan, &sh(script), o, &mut |_| {});
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        assert!(record.worker.stopped_by_parent);
        let BenchEvent::Failed { failure, .. } = terminal(&record, TestKind::H2d)[0] else { panic!() };
        assert_eq!(failure.kind, FailureKind::Timeout);
        assert!(
            failure.reason.starts_with("the host → device copy test made no progress for 0.5 s after \"pinned 4 KiB\""),
            "{}",
            failure.reason
        );
        assert!(failure.reason.contains("Xid"), "{}", failure.reason);
        let BenchEvent::Failed { failure, .. } = terminal(&record, TestKind::D2h)[0] else { panic!() };
        assert!(
            failure.reason.starts_with("not run: the host → device copy test made no progress"),
            "{}",
            failure.reason
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_worker_that_hangs_opening_the_gpu_is_stopped_naming_the_first_test() {
        let plan = BenchPlan::preset(0, vec![TestKind::Gemm], true);
        let mut o = opts(Duration::from_secs(60));
        o.stall_limit = Some(Duration::from_millis(300));
        let t = Instant::now();
        let record = run(&plan, &sh("head -n 1 >/dev/null; sleep 30"), o, &mut |_| {});
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        let BenchEvent::Failed { failure, .. } = terminal(&record, TestKind::Gemm)[0] else { panic!() };
        assert_eq!(failure.kind, FailureKind::Timeout);
        assert!(failure.reason.contains("GEMM (cuBLAS) test made no progress"), "{}", failure.reason);
        assert!(failure.reason.contains("opening the GPU"), "{}", failure.reason);
    }

    #[cfg(unix)]
    #[test]
    fn a_worker_that_keeps_reporting_progress_is_not_stopped() {
        let plan = BenchPlan::preset(0, vec![TestKind::Gemm], true);
        // 1.5 s of work with an event every 100 ms, against a 500 ms stall limit.
        let script = r#"head -n 1 >/dev/null
            echo '{"event":"started","test":"gemm"}'
            for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
                sleep 0.1
                echo '{"event":"progress","test":"gemm","done":1,"total":2,"what":"FP32 256³"}'
            done
            echo '{"event":"finished","test":"gemm","result":{"measurements":[]}}'"#;
        let mut o = opts(Duration::from_secs(60));
        o.stall_limit = Some(Duration::from_millis(500));
        let record = run(&plan, &sh(script), o, &mut |_| {});
        assert!(!record.worker.stopped_by_parent);
        assert!(matches!(terminal(&record, TestKind::Gemm)[..], [BenchEvent::Finished { .. }]), "{:?}", record.events);
    }

    #[cfg(unix)]
    #[test]
    fn a_line_of_invalid_utf8_from_the_worker_is_noise_and_its_later_events_still_count() {
        // A driver or library message in another encoding must not end the reading of the events.
        let plan = BenchPlan::preset(0, vec![TestKind::Gemm], true);
        let script = r#"head -n 1 >/dev/null
            echo '{"event":"started","test":"gemm"}'
            printf 'caf\351 au lait\n'
            echo '{"event":"finished","test":"gemm","result":{"measurements":[]}}'"#;
        let record = run(&plan, &sh(script), opts(Duration::from_secs(60)), &mut |_| {});
        assert!(matches!(terminal(&record, TestKind::Gemm)[..], [BenchEvent::Finished { .. }]), "{:?}", record.events);
        assert_eq!(record.worker.noise, ["caf\u{fffd} au lait"]);
        assert!(!record.worker.stopped_by_parent);
    }

    #[test]
    fn every_test_has_a_stall_limit_far_below_the_run_budget() {
        let plan = BenchPlan::preset(0, TestKind::ALL.to_vec(), false);
        for test in plan.gpu_tests() {
            let limit = plan.stall_limit(test);
            assert!(limit >= Duration::from_secs(60) && limit <= Duration::from_secs(300), "{test}: {limit:?}");
            assert!(limit * 10 < plan.time_limit(), "{test}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn cancelling_stops_the_worker() {
        let plan = BenchPlan::preset(0, vec![TestKind::Gemm], true);
        let o = opts(Duration::from_secs(60));
        let cancel = Arc::clone(&o.cancel);
        let mut seen = 0;
        let record = run(
            &plan,
            &sh(r#"head -n 1 >/dev/null; echo '{"event":"started","test":"gemm"}'; sleep 30"#),
            o,
            &mut |_| {
                seen += 1;
                cancel.store(true, Ordering::Relaxed);
            },
        );
        assert!(seen >= 2);
        let BenchEvent::Failed { failure, .. } = terminal(&record, TestKind::Gemm)[0] else { panic!() };
        assert_eq!(failure.kind, FailureKind::Cancelled);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_stopped_worker_takes_what_it_started_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let plan = BenchPlan::preset(0, vec![TestKind::Gemm], true);
        let script = format!(
            r#"head -n 1 >/dev/null; sleep 30 & echo $! > '{}'; echo '{{"event":"started","test":"gemm"}}'; sleep 30"#,
            pidfile.display()
        );
        let record = run(&plan, &sh(&script), opts(Duration::from_millis(500)), &mut |_| {});
        assert!(record.worker.stopped_by_parent);
        let pid = std::fs::read_to_string(&pidfile).unwrap();
        let pid: u32 = pid.trim().parse().unwrap();
        let running = || process::is_running(pid).unwrap();
        let until = Instant::now() + Duration::from_secs(2);
        while running() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!running(), "the worker's child {} outlived the stopped worker", pid);
    }

    #[cfg(unix)]
    #[test]
    fn the_worker_gets_the_plan_as_one_line_and_its_input_stays_open_while_it_runs() {
        let plan = BenchPlan::preset(0, vec![TestKind::Gemm], true);
        // Reads the plan line, then checks that nothing more comes and the pipe is still open.
        let script = r#"head -n 1 >/dev/null
            if timeout 0.3 cat >/dev/null; then echo closed-early >&2; exit 9; fi
            echo '{"event":"started","test":"gemm"}'
            echo '{"event":"failed","test":"gemm","failure":{"kind":"internal","reason":"fine"}}'"#;
        let record = run(&plan, &sh(script), opts(Duration::from_secs(20)), &mut |_| {});
        assert_eq!(record.worker.exit_code, Some(0), "{:?}", record.worker);
        let BenchEvent::Failed { failure, .. } = terminal(&record, TestKind::Gemm)[0] else { panic!() };
        assert_eq!(failure.reason, "fine");
    }

    /// A GPU-to-GPU matrix from a (fake) worker's event line reaches the saved run, each pair judged
    /// there against the link between its GPUs and the slow one a finding.
    #[cfg(unix)]
    #[test]
    fn a_p2p_matrix_travels_from_the_worker_into_the_judged_run() {
        use gpu_doctor_model::LinkKind;
        use gpu_doctor_model::bench::judgement::Verdict;
        use gpu_doctor_model::bench::p2p::{P2pEnd, P2pGpu, P2pLinkFact, P2pMatrix, P2pMeasure, P2pMode, P2pPair};
        use gpu_doctor_model::bench::protocol::TestResult;
        use gpu_doctor_model::bench::stats::Stats;
        use gpu_doctor_model::bench::verdict::Facts;

        let on = |src, dst, gbps: f64| P2pPair {
            src,
            dst,
            can_access_peer: true,
            measures: vec![P2pMeasure {
                mode: P2pMode::PeerEnabled,
                bandwidth_gbps: Stats::from_samples(&[gbps, gbps * 1.01, gbps * 0.99]),
                latency_us: Stats::from_samples(&[2.5]),
                skipped: None,
            }],
            judgement: None,
            judged_mode: None,
        };
        let bus = ["0000:18:00.0", "0000:2a:00.0"];
        let matrix = P2pMatrix {
            bytes: 64 << 20,
            latency_bytes: 4096,
            gpus: (0..2)
                .map(|i| P2pGpu {
                    ordinal: i,
                    name: Some("NVIDIA H100 80GB HBM3".into()),
                    pci_bus_id: Some(bus[i as usize].into()),
                })
                .collect(),
            pairs: vec![on(0, 1, 380.0), on(1, 0, 100.0)],
            ..P2pMatrix::default()
        };
        let result = TestResult { p2p: Some(matrix), ..TestResult::default() };
        let finished = BenchEvent::Finished { test: TestKind::P2p, result }.to_line();
        let script =
            format!("head -n 1 >/dev/null; echo '{{\"event\":\"started\",\"test\":\"p2p\"}}'; echo '{finished}'");
        let plan = BenchPlan::preset(0, vec![TestKind::P2p], true);
        let record = run(&plan, &sh(&script), opts(Duration::from_secs(20)), &mut |_| {});
        // NVML writes the bus ids with eight domain digits: they still tie the pair to the matrix.
        let end = |index: u32, b: &str| P2pEnd { index, bus_id: Some(format!("0000{b}")), cuda_ordinal: Some(index) };
        let link = P2pLinkFact {
            gpus: [end(0, bus[0]), end(1, bus[1])],
            link: LinkKind::Nvlink { links: 18 },
            p2p_ok: Some(true),
            p2p_status: None,
            peer: Some((450.0, "NV18: 18 NVLinks × 25 GB/s per direction (NVLink 4) = 450 GB/s".into())),
            host: None,
        };
        let facts = Facts { p2p_links: vec![link], ..Facts::default() };
        let run = gpu_doctor_judge::bench::run::assemble(&plan, record, |_| facts);
        let test = &run.tests[0];
        assert_eq!(test.status, gpu_doctor_model::bench::run::TestStatus::Passed, "{:?}", test.failure);
        let m = test.result.as_ref().unwrap().p2p.as_ref().unwrap();
        let verdict = |src, dst| m.pair(src, dst).unwrap().judgement.as_ref().unwrap();
        assert_eq!(verdict(0, 1).verdict, Verdict::Normal, "{:?}", verdict(0, 1));
        assert!(
            verdict(0, 1).comment.starts_with("P2P on, judged against NV18: 84 % of expected"),
            "{:?}",
            verdict(0, 1)
        );
        assert_eq!(verdict(1, 0).verdict, Verdict::Low);
        let finding = run.findings.iter().find(|f| f.id == "bench.peer_copy.below_expected").unwrap();
        assert_eq!(finding.evidence.len(), 1, "{:?}", finding.evidence);
        assert!(
            finding.evidence[0].starts_with("GPU 1 → GPU 0: P2P on, judged against NV18: 22 %"),
            "{:?}",
            finding.evidence
        );
    }

    #[test]
    fn a_missing_worker_program_fails_the_gpu_tests_and_the_cpu_still_runs() {
        let mut plan = BenchPlan::preset(0, vec![TestKind::D2d, TestKind::Cpu], true);
        plan.cpu_gemm_size = 64;
        plan.cpu_naive_size = 32;
        plan.cpu_memcpy_bytes = 1 << 20;
        let spec = WorkerSpec { program: PathBuf::from("/no/such/gpu-doctor"), args: vec![], env: vec![] };
        let record = run(&plan, &spec, opts(Duration::from_secs(5)), &mut |_| {});
        let BenchEvent::Failed { failure, .. } = terminal(&record, TestKind::D2d)[0] else { panic!() };
        assert_eq!(failure.kind, FailureKind::Internal);
        assert!(failure.reason.contains("/no/such/gpu-doctor"));
        assert!(matches!(terminal(&record, TestKind::Cpu)[0], BenchEvent::Finished { .. }));
    }

    /// The worker is bound to the GPU's node before it reads the plan: a fake worker reports the
    /// CPUs it may use, and a placement that cannot be had is a reason, not an error.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_worker_runs_on_the_cpus_of_the_gpus_node() {
        let plan = BenchPlan::preset(0, vec![TestKind::H2d], true);
        let script = r#"head -n 1 >/dev/null; grep Cpus_allowed_list /proc/self/status"#;
        let allowed = process::allowed_cpus().unwrap();
        if allowed.len() < 2 {
            // Bound and unbound would be the same single CPU: the binding could not be seen.
            assert!(std::env::var_os("CI").is_none(), "CI needs at least two CPUs for this test");
            eprintln!("SKIPPED: this process may use one CPU only ({allowed:?})");
            return;
        }
        let cpu = *allowed.last().unwrap();
        let mut o = opts(Duration::from_secs(20));
        o.numa = Some(Ok(Placement { node: 1, cpus: vec![cpu] }));
        let record = run(&plan, &sh(script), o, &mut |_| {});
        assert_eq!(record.worker.numa, Some(format!("bound to the GPU's NUMA node 1: CPUs {cpu}")));
        let line = record.worker.noise.iter().find(|l| l.starts_with("Cpus_allowed_list")).unwrap();
        assert_eq!(line.split_whitespace().last(), Some(cpu.to_string().as_str()), "{line}");
        // This process is not bound by it.
        assert_eq!(process::allowed_cpus().unwrap(), allowed);

        let mut o = opts(Duration::from_secs(20));
        o.numa = Some(Err("numa_node is -1".to_owned()));
        let record = run(&plan, &sh(script), o, &mut |_| {});
        assert_eq!(record.worker.numa.as_deref(), Some("not bound to the GPU's NUMA node: numa_node is -1"));
        let line = record.worker.noise.iter().find(|l| l.starts_with("Cpus_allowed_list")).unwrap();
        assert!(line.ends_with(&gpu_doctor_model::cpu_list(allowed.iter().copied())), "unbound: {line}");
    }

    /// Recorded NVML answers, one per read, and how many reads there were.
    struct RecordedEcc(Mutex<Vec<EccCounters>>);

    impl EccSource for RecordedEcc {
        fn read(&self) -> Result<EccCounters, String> {
            let mut answers = self.0.lock().unwrap();
            if answers.is_empty() { Err("no more recorded answers".to_owned()) } else { Ok(answers.remove(0)) }
        }
    }

    fn counters(corrected: u64, uncorrected: u64) -> EccCounters {
        EccCounters {
            corrected_volatile: Some(corrected),
            uncorrected_volatile: Some(uncorrected),
            ..EccCounters::default()
        }
    }

    /// The counters are read when the memory test starts and when it ends (also when the worker
    /// dies inside it), and only around it.
    #[cfg(unix)]
    #[test]
    fn memory_error_counters_are_read_around_the_memory_test() {
        let plan = BenchPlan::preset(0, vec![TestKind::H2d, TestKind::Memtest], true);
        let finished = r#"head -n 1 >/dev/null
            echo '{"event":"started","test":"h2d"}'
            echo '{"event":"failed","test":"h2d","failure":{"kind":"internal","reason":"x"}}'
            echo '{"event":"started","test":"memtest"}'
            echo '{"event":"finished","test":"memtest","result":{"measurements":[]}}'"#;
        let mut o = opts(Duration::from_secs(20));
        o.ecc = Some(Box::new(RecordedEcc(Mutex::new(vec![counters(5, 0), counters(9, 1), counters(99, 99)]))));
        let record = run(&plan, &sh(finished), o, &mut |_| {});
        let change = record.memtest_ecc.unwrap();
        assert_eq!((change.corrected, change.uncorrected), (Some(4), Some(1)), "{change:?}");

        let crashed = r#"head -n 1 >/dev/null; echo '{"event":"started","test":"memtest"}'; kill -KILL $$"#;
        let mut o = opts(Duration::from_secs(20));
        o.ecc = Some(Box::new(RecordedEcc(Mutex::new(vec![counters(5, 0), counters(5, 2)]))));
        let plan = BenchPlan::preset(0, vec![TestKind::Memtest], true);
        assert!(run(&plan, &sh(crashed), o, &mut |_| {}).memtest_ecc.unwrap().failed());

        let mut o = opts(Duration::from_secs(20));
        o.ecc = Some(Box::new(RecordedEcc(Mutex::new(vec![counters(5, 0)]))));
        let plan = BenchPlan::preset(0, vec![TestKind::H2d], true);
        let no_memtest = r#"head -n 1 >/dev/null; echo '{"event":"started","test":"h2d"}'"#;
        assert_eq!(run(&plan, &sh(no_memtest), o, &mut |_| {}).memtest_ecc, None);
    }

    #[test]
    fn stderr_keeps_only_its_tail() {
        let text = "x".repeat(10_000) + "last line";
        let mut t = String::new();
        for piece in text.as_bytes().chunks(4096) {
            keep_tail(&mut t, piece);
        }
        assert!(t.len() <= STDERR_TAIL && t.ends_with("last line"));
    }
}
