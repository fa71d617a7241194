//! The worker side of the protocol: `gpu-doctor bench-worker` reads a plan on standard input and
//! writes one event per line on standard output. Every test ends with `finished` or `failed`, even
//! when CUDA is missing or a test panics.

use std::any::Any;
use std::io::{Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::AtomicBool;

use crate::gpu::{self, Gpu};
use crate::plan::{BenchPlan, TestKind};
use crate::protocol::{BenchEvent, Failure, FailureKind};

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
    let mut device: Option<Result<Gpu, Failure>> = None;
    for &test in &plan.tests {
        if test == TestKind::Cpu {
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| crate::cpu::run(plan, &AtomicBool::new(false), emit)))
            {
                emit(BenchEvent::Failed { test, failure: panic_failure(panic.as_ref(), "the CPU baselines") });
            }
            continue;
        }
        let opened = device.get_or_insert_with(|| {
            catch_unwind(AssertUnwindSafe(|| gpu::open(plan.gpu, plan.gpu_pci_bus_id.as_deref())))
                .unwrap_or_else(|panic| Err(panic_failure(panic.as_ref(), "opening the GPU")))
        });
        let gpu = match opened {
            Ok(gpu) => gpu,
            Err(failure) => {
                emit(BenchEvent::Started { test, device: None });
                emit(BenchEvent::Failed { test, failure: failure.clone() });
                continue;
            }
        };
        emit(BenchEvent::Started { test, device: Some(gpu.info.clone()) });
        let outcome = catch_unwind(AssertUnwindSafe(|| gpu::run_test(gpu, test, plan, emit)));
        let event = match outcome {
            Ok(Ok(result)) => BenchEvent::Finished { test, result },
            Ok(Err(failure)) => BenchEvent::Failed { test, failure },
            Err(panic) => BenchEvent::Failed { test, failure: panic_failure(panic.as_ref(), test.label()) },
        };
        emit(event);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

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

    #[test]
    fn panic_payloads_become_text() {
        let p = catch_unwind(|| panic!("boom {}", 1)).unwrap_err();
        assert_eq!(panic_message(p.as_ref()), "boom 1");
        let p = catch_unwind(|| panic!("static")).unwrap_err();
        assert_eq!(panic_message(p.as_ref()), "static");
    }
}
