//! The worker side of the protocol: `gpu-doctor bench-worker` reads a plan on standard input and
//! writes one event per line on standard output. Every test ends with `finished` or `failed`, even
//! when CUDA is missing or a test panics.

use std::any::Any;
use std::io::{Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::AtomicBool;

use crate::device::TestDevice;
use crate::gpu;
use gpu_doctor_model::bench::plan::{BenchPlan, TestKind};
use gpu_doctor_model::bench::protocol::{BenchEvent, Failure, FailureKind, TestResult};

/// Exit code: the plan ran (each test's outcome is in its events).
pub const WORKER_EXIT_OK: i32 = 0;
/// Exit code: the plan could not be read or was refused (the reason is on standard error).
pub const WORKER_EXIT_BAD_PLAN: i32 = 3;
/// Exit code: standard output was closed (the parent went away).
pub const WORKER_EXIT_OUTPUT: i32 = 4;
/// Exit code: the parent closed standard input after the plan, or died: the worker stops at once.
pub const WORKER_EXIT_PARENT_GONE: i32 = gpu_doctor_probes::host::process::PARENT_GONE;
/// The variable through which the runner tells the worker its pid, so the worker can tell whether
/// its parent died before it armed the parent-death signal.
pub const PARENT_PID_VAR: &str = "GPU_DOCTOR_PARENT_PID";

/// Largest plan accepted on standard input.
const MAX_PLAN_BYTES: u64 = 1024 * 1024;

/// The text of a panic payload.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

fn panic_failure(payload: &(dyn Any + Send), during: &str) -> Failure {
    Failure::new(FailureKind::Panic, format!("{during} panicked: {}", panic_message(payload)))
}

/// The worker process's main: the plan from standard input, the events on standard output, which
/// is set aside for them first (`event_output`).
pub fn worker_process() -> i32 {
    match event_output() {
        Ok(mut out) => worker_main(std::io::stdin(), &mut out),
        Err(e) => {
            eprintln!(
                "gpu-doctor bench-worker: could not set standard output aside for the events ({e}); \
                 anything else printed there may break an event"
            );
            worker_main(std::io::stdin(), &mut std::io::stdout().lock())
        }
    }
}

/// Standard output for the events alone. File descriptor 1 is duplicated for the events and then
/// pointed at standard error, so whatever else in the process writes to standard output (cuBLAS
/// logging, a library's `printf`, a stray `println!`) lands on standard error and cannot split an
/// event line or glue itself to one. Elsewhere than Unix: standard output itself.
#[cfg(unix)]
pub fn event_output() -> std::io::Result<std::io::BufWriter<std::fs::File>> {
    use std::os::fd::AsFd;
    let stdout = std::io::stdout();
    stdout.lock().flush()?;
    let events = stdout.as_fd().try_clone_to_owned()?;
    rustix::stdio::dup2_stdout(std::io::stderr().as_fd())?;
    Ok(std::io::BufWriter::new(std::fs::File::from(events)))
}

/// Standard output for the events alone; elsewhere than Unix, standard output itself.
#[cfg(not(unix))]
pub fn event_output() -> std::io::Result<std::io::Stdout> {
    Ok(std::io::stdout())
}

/// Reads the plan: one line, or everything up to the end of input. True in the second place when
/// the line ended with a newline, i.e. the parent keeps the pipe open while the worker runs.
fn read_plan(input: &mut dyn Read) -> std::io::Result<(String, bool)> {
    let mut bytes = Vec::new();
    let mut byte = [0u8; 1];
    while (bytes.len() as u64) < MAX_PLAN_BYTES {
        match input.read(&mut byte) {
            Ok(0) => return Ok((String::from_utf8_lossy(&bytes).into_owned(), false)),
            Ok(_) if byte[0] == b'\n' => return Ok((String::from_utf8_lossy(&bytes).into_owned(), true)),
            Ok(_) => bytes.push(byte[0]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok((String::from_utf8_lossy(&bytes).into_owned(), false))
}

/// Runs the worker: reads the plan from `input`, runs it, writes events to `output`. Returns the
/// process exit code.
///
/// The parent writes the plan as one line and keeps standard input open while the worker runs;
/// when it closes (the parent was killed, or it stopped the run), the worker exits at once with
/// `WORKER_EXIT_PARENT_GONE`, so a GPU load never runs on with nobody watching. A plan that ends
/// at the end of input (no newline) is run without that watch. On Linux the worker also asks to
/// be killed when its parent dies.
pub fn worker_main(mut input: impl Read + Send + 'static, output: &mut dyn Write) -> i32 {
    let parent = std::env::var(PARENT_PID_VAR).ok().and_then(|p| p.parse().ok());
    gpu_doctor_probes::host::process::die_with_parent(parent);
    let (text, watched) = match read_plan(&mut input) {
        Ok(read) => read,
        Err(e) => {
            eprintln!("gpu-doctor bench-worker: could not read the plan from standard input: {e}");
            return WORKER_EXIT_BAD_PLAN;
        }
    };
    if watched && let Err(e) = gpu_doctor_probes::host::process::exit_when_closed(input) {
        eprintln!("gpu-doctor bench-worker: could not watch standard input: {e}");
        return WORKER_EXIT_BAD_PLAN;
    }
    let plan = match BenchPlan::from_json(&text) {
        Ok(plan) => plan,
        Err(e) => {
            eprintln!("gpu-doctor bench-worker: {e}");
            return WORKER_EXIT_BAD_PLAN;
        }
    };
    let mut broken_pipe = false;
    let mut emit = |event: BenchEvent| {
        if broken_pipe {
            return;
        }
        let line = event.to_line();
        if writeln!(output, "{line}").and_then(|()| output.flush()).is_err() {
            broken_pipe = true;
        }
    };
    run_plan(&plan, &mut emit);
    if broken_pipe { WORKER_EXIT_OUTPUT } else { WORKER_EXIT_OK }
}

/// Runs every test of `plan` in order, GPU tests on one device opened at the first of them.
pub fn run_plan(plan: &BenchPlan, emit: &mut dyn FnMut(BenchEvent)) {
    run_plan_on(plan, emit, || gpu::open(plan.gpu, plan.gpu_pci_bus_id.as_deref()));
}

/// The GPU-to-GPU copy test in loopback on the plan's one GPU: from its primary context to a second
/// context of the same GPU, so that every CUDA call of the test runs where only one GPU is. Only
/// the ignored GPU tests (and through them `scripts/gpu-verify`) call it; no plan asks for it.
#[doc(hidden)]
pub fn run_p2p_loopback(plan: &BenchPlan, emit: &mut dyn FnMut(BenchEvent)) {
    let test = TestKind::P2p;
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut gpu = gpu::open(plan.gpu, plan.gpu_pci_bus_id.as_deref())?;
        emit(BenchEvent::Started { test, device: Some(gpu.info.clone()) });
        gpu::p2p_loopback(&mut gpu, plan, emit)
    }));
    emit(end_event(test, outcome, "the P2P loopback"));
}

/// The event that ends `test`: finished with its result, failed with its failure, or failed by a
/// panic while `what` ran.
fn end_event(test: TestKind, outcome: std::thread::Result<Result<TestResult, Failure>>, what: &str) -> BenchEvent {
    match outcome {
        Ok(Ok(result)) => BenchEvent::Finished { test, result },
        Ok(Err(failure)) => BenchEvent::Failed { test, failure },
        Err(panic) => BenchEvent::Failed { test, failure: panic_failure(panic.as_ref(), what) },
    }
}

/// `run_plan` on the device `open` gives. After a sticky error (the failure's kind is
/// `ContextLost`, or the context fails when asked after a failure) every later GPU test fails as
/// not run: in that context each would only report the same error.
fn run_plan_on<D: TestDevice>(
    plan: &BenchPlan,
    emit: &mut dyn FnMut(BenchEvent),
    open: impl FnOnce() -> Result<D, Failure>,
) {
    let mut open = Some(open);
    let mut device: Option<Result<D, Failure>> = None;
    let mut lost: Option<TestKind> = None;
    for &test in &plan.tests {
        if test == TestKind::Cpu {
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| crate::cpu::run(plan, &AtomicBool::new(false), emit)))
            {
                emit(BenchEvent::Failed { test, failure: panic_failure(panic.as_ref(), "the CPU baselines") });
            }
            continue;
        }
        if let Some(cause) = lost {
            emit(BenchEvent::Started { test, device: None });
            emit(BenchEvent::Failed { test, failure: not_run_after_lost_context(cause) });
            continue;
        }
        let opened = device.get_or_insert_with(|| match open.take() {
            Some(open) => catch_unwind(AssertUnwindSafe(open))
                .unwrap_or_else(|panic| Err(panic_failure(panic.as_ref(), "opening the GPU"))),
            None => Err(Failure::new(FailureKind::Internal, "the GPU was opened twice")),
        });
        let gpu = match opened {
            Ok(gpu) => gpu,
            Err(failure) => {
                emit(BenchEvent::Started { test, device: None });
                emit(BenchEvent::Failed { test, failure: failure.clone() });
                continue;
            }
        };
        emit(BenchEvent::Started { test, device: Some(gpu.info()) });
        let outcome = catch_unwind(AssertUnwindSafe(|| gpu.run(test, plan, emit)));
        let event = end_event(test, outcome, test.label());
        if let BenchEvent::Failed { failure, .. } = &event
            && context_lost(gpu, failure)
        {
            lost = Some(test);
        }
        emit(event);
    }
}

/// Whether the context is unusable after `failure`: the failure says so, or the context fails
/// when asked (a cuBLAS status or a panic can hide the sticky error underneath).
fn context_lost(device: &mut impl TestDevice, failure: &Failure) -> bool {
    failure.kind == FailureKind::ContextLost
        || matches!(
            catch_unwind(AssertUnwindSafe(|| device.check_context())),
            Ok(Err(f)) if f.kind == FailureKind::ContextLost
        )
}

/// The failure of a test not run because the context was lost while `cause` ran.
fn not_run_after_lost_context(cause: TestKind) -> Failure {
    Failure::new(
        FailureKind::ContextLost,
        format!(
            "not run: GPU context lost: see the kernel log for Xid (sudo dmesg | grep -i xid); the {} test \
             left the GPU context unusable",
            cause.label()
        ),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use gpu_doctor_model::bench::protocol::DeviceInfo;

    #[test]
    fn a_bad_plan_is_refused_with_exit_3() {
        let mut out = Vec::new();
        assert_eq!(worker_main("not json".as_bytes(), &mut out), WORKER_EXIT_BAD_PLAN);
        assert!(out.is_empty());
        let mut plan = BenchPlan::preset(0, vec![TestKind::Cpu], true);
        plan.protocol = 42;
        let text = serde_json::to_string(&plan).unwrap();
        assert_eq!(worker_main(std::io::Cursor::new(text), &mut out), WORKER_EXIT_BAD_PLAN);
    }

    #[test]
    fn without_cuda_gpu_tests_fail_cleanly_and_the_cpu_still_runs() {
        if crate::gpu::driver_library().is_ok() {
            eprintln!("this machine has a CUDA driver library; the no-CUDA assertions do not apply");
            return;
        }
        let mut plan = BenchPlan::preset(0, vec![TestKind::H2d, TestKind::Gemm, TestKind::Cpu], true);
        plan.cpu_gemm_size = 64;
        plan.cpu_naive_size = 32;
        plan.cpu_memcpy_bytes = 1 << 20;
        let text = serde_json::to_string(&plan).unwrap();
        let mut out = Vec::new();
        assert_eq!(worker_main(std::io::Cursor::new(text), &mut out), WORKER_EXIT_OK);
        let events: Vec<BenchEvent> =
            String::from_utf8(out).unwrap().lines().map(|l| BenchEvent::from_line(l).unwrap()).collect();
        for test in [TestKind::H2d, TestKind::Gemm] {
            let failure = events
                .iter()
                .find_map(|e| match e {
                    BenchEvent::Failed { test: t, failure } if *t == test => Some(failure),
                    _ => None,
                })
                .unwrap();
            assert_eq!(failure.kind, FailureKind::MissingLibrary);
            assert!(failure.reason.contains("libcuda.so"), "{}", failure.reason);
        }
        assert!(events.iter().any(|e| matches!(e, BenchEvent::Finished { test: TestKind::Cpu, .. })));
    }

    /// A device that records what it ran, fails the tests in `fails`, and answers `context` when
    /// asked after a failure.
    struct FakeDevice {
        fails: Vec<(TestKind, Failure)>,
        context: Result<(), Failure>,
        ran: Vec<TestKind>,
    }

    impl TestDevice for &mut FakeDevice {
        fn info(&self) -> DeviceInfo {
            DeviceInfo { name: Some("fake".into()), ..DeviceInfo::default() }
        }

        fn run(&mut self, test: TestKind, _: &BenchPlan, _: &mut dyn FnMut(BenchEvent)) -> Result<TestResult, Failure> {
            self.ran.push(test);
            match self.fails.iter().find(|(t, _)| *t == test) {
                Some((_, f)) => Err(f.clone()),
                None => Ok(TestResult::default()),
            }
        }

        fn check_context(&mut self) -> Result<(), Failure> {
            self.context.clone()
        }
    }

    fn run_fake(tests: &[TestKind], device: &mut FakeDevice) -> Vec<BenchEvent> {
        let plan = BenchPlan::preset(0, tests.to_vec(), true);
        let mut events = Vec::new();
        run_plan_on(&plan, &mut |e| events.push(e), || Ok(device));
        events
    }

    fn failure_of(events: &[BenchEvent], test: TestKind) -> Option<&Failure> {
        events.iter().find_map(|e| match e {
            BenchEvent::Failed { test: t, failure } if *t == test => Some(failure),
            _ => None,
        })
    }

    const TESTS: [TestKind; 4] = [TestKind::H2d, TestKind::Gemm, TestKind::Fma, TestKind::Latency];

    #[test]
    fn after_a_sticky_error_the_later_tests_are_not_run() {
        let sticky = Failure::new(FailureKind::ContextLost, "launching the GEMM: CUDA_ERROR_ILLEGAL_ADDRESS");
        let mut device = FakeDevice { fails: vec![(TestKind::Gemm, sticky.clone())], context: Ok(()), ran: vec![] };
        let events = run_fake(&TESTS, &mut device);
        assert_eq!(device.ran, [TestKind::H2d, TestKind::Gemm]);
        assert_eq!(failure_of(&events, TestKind::Gemm), Some(&sticky));
        for test in [TestKind::Fma, TestKind::Latency] {
            let f = failure_of(&events, test).unwrap();
            assert_eq!(f.kind, FailureKind::ContextLost);
            assert!(f.reason.starts_with("not run: GPU context lost: see the kernel log for Xid"), "{}", f.reason);
            assert!(f.reason.contains(TestKind::Gemm.label()), "{}", f.reason);
            assert_eq!(events.iter().filter(|e| e.test() == test).count(), 2, "started and failed: {events:?}");
        }
    }

    #[test]
    fn a_failure_that_hides_a_lost_context_is_found_by_asking_the_context() {
        // cuBLAS reports EXECUTION_FAILED; the context, asked, answers the sticky error beneath.
        let lost = Failure::new(FailureKind::ContextLost, "checking the GPU context: CUDA_ERROR_LAUNCH_FAILED");
        let mut device = FakeDevice {
            fails: vec![(TestKind::H2d, Failure::new(FailureKind::CudaError, "CUBLAS_STATUS_EXECUTION_FAILED"))],
            context: Err(lost),
            ran: vec![],
        };
        let events = run_fake(&TESTS, &mut device);
        assert_eq!(device.ran, [TestKind::H2d]);
        assert_eq!(failure_of(&events, TestKind::Latency).unwrap().kind, FailureKind::ContextLost);
    }

    #[test]
    fn a_test_ends_finished_failed_or_failed_by_its_panic() {
        let test = TestKind::P2p;
        let done = end_event(test, Ok(Ok(TestResult::default())), "x");
        assert_eq!(done, BenchEvent::Finished { test, result: TestResult::default() });
        let failure = Failure::new(FailureKind::CudaError, "no");
        assert_eq!(end_event(test, Ok(Err(failure.clone())), "x"), BenchEvent::Failed { test, failure });
        let BenchEvent::Failed { failure, .. } = end_event(test, Err(Box::new("boom")), "the P2P loopback") else {
            panic!("a panic ends the test as failed");
        };
        assert_eq!((failure.kind, failure.reason.as_str()), (FailureKind::Panic, "the P2P loopback panicked: boom"));
    }

    #[test]
    fn an_ordinary_failure_leaves_the_later_tests_running() {
        let mut device = FakeDevice {
            fails: vec![(TestKind::H2d, Failure::new(FailureKind::OutOfMemory, "out of memory"))],
            context: Err(Failure::new(FailureKind::CudaError, "not sticky")),
            ran: vec![],
        };
        let events = run_fake(&TESTS, &mut device);
        assert_eq!(device.ran, TESTS);
        assert!(failure_of(&events, TestKind::Latency).is_none());
    }

    const FD_CHILD: &str = "GPU_DOCTOR_FD_CHILD";
    const FD_CHILD_TEST: &str = "worker::tests::child_writes_events_between_stray_output";
    const STRAY: &str = "cuBLAS log line without its newline ";

    /// Runs only as the child of the test below (it returns at once otherwise): each event written
    /// after a partial line on standard output, as a native library's logging would leave it,
    /// through `event_output` or, with `plain`, through standard output itself.
    #[test]
    fn child_writes_events_between_stray_output() {
        let Ok(mode) = std::env::var(FD_CHILD) else { return };
        let mut out: Box<dyn Write> =
            if mode == "plain" { Box::new(std::io::stdout()) } else { Box::new(event_output().unwrap()) };
        for test in [TestKind::H2d, TestKind::D2h] {
            for event in [
                BenchEvent::Started { test, device: None },
                BenchEvent::Finished { test, result: TestResult::default() },
            ] {
                let mut stdout = std::io::stdout();
                stdout.write_all(STRAY.as_bytes()).and_then(|()| stdout.flush()).unwrap();
                writeln!(out, "{}", event.to_line()).and_then(|()| out.flush()).unwrap();
            }
        }
    }

    /// The child above as the benchmark worker, through the runner; the record.
    fn run_fd_child(mode: &str) -> gpu_doctor_model::bench::record::RunRecord {
        let spec = crate::runner::WorkerSpec {
            program: std::env::current_exe().unwrap(),
            args: ["--exact", FD_CHILD_TEST, "--nocapture", "--test-threads=1", "-q"].map(Into::into).to_vec(),
            env: vec![(FD_CHILD.into(), mode.into())],
        };
        let opts = crate::runner::RunOptions {
            timeout: std::time::Duration::from_secs(60),
            cancel: std::sync::Arc::default(),
            telemetry: None,
            telemetry_interval: std::time::Duration::from_millis(100),
            stall_limit: None,
            numa: None,
            ecc: None,
        };
        let plan = BenchPlan::preset(0, vec![TestKind::H2d, TestKind::D2h], true);
        crate::runner::run(&plan, &spec, opts, &mut |_| {})
    }

    fn finished(record: &gpu_doctor_model::bench::record::RunRecord) -> Vec<TestKind> {
        record
            .events
            .iter()
            .filter_map(|e| match e.event {
                BenchEvent::Finished { test, .. } => Some(test),
                _ => None,
            })
            .collect()
    }

    #[cfg(unix)]
    #[test]
    fn what_else_writes_to_standard_output_cannot_break_an_event() {
        let record = run_fd_child("events");
        assert_eq!(finished(&record), [TestKind::H2d, TestKind::D2h], "{:?}", record.worker);
        assert!(record.worker.noise.iter().all(|n| !n.contains(STRAY)), "{:?}", record.worker.noise);
        assert!(record.worker.stderr_tail.contains(STRAY), "{:?}", record.worker.stderr_tail);
        // Without setting standard output aside, the stray text glues itself to the events.
        let plain = run_fd_child("plain");
        assert!(finished(&plain).is_empty(), "{:?}", plain.events);
        assert!(plain.worker.noise.iter().any(|n| n.contains(STRAY)), "{:?}", plain.worker.noise);
    }

    #[test]
    fn panic_payloads_become_text() {
        let p = catch_unwind(|| panic!("boom {}", 1)).unwrap_err();
        assert_eq!(panic_message(p.as_ref()), "boom 1");
        let p = catch_unwind(|| panic!("static")).unwrap_err();
        assert_eq!(panic_message(p.as_ref()), "static");
    }
}
