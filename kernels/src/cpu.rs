//! CPU baselines: a multithreaded SGEMM (matrixmultiply) and host memcpy bandwidth, so a report
//! can say how many times faster the GPU is; a naive triple loop shows what the library buys.
//!
//! Runs in the parent process: it needs no CUDA, so it still runs where the GPU tests cannot.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::rng::SplitMix64;
use gpu_doctor_model::bench::plan::{BenchPlan, MIB, TestKind};
use gpu_doctor_model::bench::protocol::{
    BenchEvent, Check, Failure, FailureKind, Measurement, Metric, Point, TestResult,
};
use gpu_doctor_model::bench::stats::Stats;
use gpu_doctor_model::bench::unit::Unit;

/// Square matrices with values in [-1, 1), column-major, from a fixed seed.
pub fn random_matrix(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = SplitMix64::new(seed);
    (0..n * n).map(|_| rng.next_f32_signed()).collect()
}

/// `C = A·B` for column-major n×n matrices with matrixmultiply's packed, multithreaded SGEMM.
pub fn sgemm(n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    assert!(a.len() >= n * n && b.len() >= n * n && c.len() >= n * n, "matrices smaller than {n}×{n}");
    let stride = isize::try_from(n).unwrap_or(isize::MAX);
    // SAFETY: the three slices hold at least n×n elements (checked above) and are laid out
    // column-major with row stride 1 and column stride n, so every index matrixmultiply forms,
    // i + j·n for i, j < n, is in bounds; `c` is borrowed mutably, so it aliases neither input.
    #[allow(unsafe_code)]
    unsafe {
        matrixmultiply::sgemm(
            n,
            n,
            n,
            1.0,
            a.as_ptr(),
            1,
            stride,
            b.as_ptr(),
            1,
            stride,
            0.0,
            c.as_mut_ptr(),
            1,
            stride,
        );
    }
}

/// `C = A·B` with the textbook i-j-k loop, one thread: the baseline a library is measured against,
/// and the reference its results are checked with.
pub fn naive_gemm(n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    for i in 0..n {
        for j in 0..n {
            let mut sum = 0.0f32;
            for k in 0..n {
                sum += a[i + k * n] * b[k + j * n];
            }
            c[i + j * n] = sum;
        }
    }
}

/// The largest absolute difference between two equally long slices.
pub fn max_abs_diff(x: &[f32], y: &[f32]) -> f32 {
    x.iter().zip(y).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max)
}

/// GFLOP/s of an n³ product done in `secs`.
pub fn gemm_gflops(n: usize, secs: f64) -> f64 {
    let flops = 2.0 * (n as f64).powi(3);
    flops / secs / 1e9
}

/// Times `f` `reps` times after `warmup` untimed runs; seconds per run.
fn time_runs(warmup: u32, reps: u32, mut f: impl FnMut()) -> Vec<f64> {
    for _ in 0..warmup {
        f();
    }
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect()
}

/// Host memcpy bandwidth, GB/s counting bytes read plus bytes written (as the device copy counts).
pub fn memcpy_gbps(bytes: usize, warmup: u32, reps: u32) -> Option<Stats> {
    #[expect(clippy::cast_possible_truncation, reason = "i % 251 fits a u8")]
    let src: Vec<u8> = (0..bytes).map(|i| (i % 251) as u8).collect();
    let mut dst = vec![0u8; bytes];
    copy_gbps(&src, &mut dst, warmup, reps).map(|s| s.scale(2.0))
}

/// Copies `src` into `dst` `reps` times after `warmup` untimed copies; GB/s counting each byte
/// once, as a host↔device transfer counts it. The transfer tests time this between their pageable
/// and pinned buffers: it is the step the driver adds to a pageable copy (staging through pinned
/// memory), so it bounds the pageable bandwidth. `None` when the lengths differ or `reps` is 0.
pub fn copy_gbps(src: &[u8], dst: &mut [u8], warmup: u32, reps: u32) -> Option<Stats> {
    copy_gbps_timed(src, dst, |copy| time_runs(warmup, reps, copy))
}

/// `copy_gbps` with the timing loop given: `time` runs the copy and returns seconds per run.
fn copy_gbps_timed(src: &[u8], dst: &mut [u8], time: impl FnOnce(&mut dyn FnMut()) -> Vec<f64>) -> Option<Stats> {
    if src.len() != dst.len() {
        return None;
    }
    let times = time(&mut || {
        dst.copy_from_slice(black_box(src));
        black_box(&mut *dst);
    });
    let moved = src.len() as f64;
    Stats::from_samples(&times).map(|t| t.map_decreasing(|secs| moved / secs / 1e9))
}

/// The worker threads matrixmultiply uses (it reads `MATMUL_NUM_THREADS`, else the CPU count).
pub fn gemm_threads() -> usize {
    std::env::var("MATMUL_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// Runs the CPU baselines of `plan`, reporting events through `emit`.
pub fn run(plan: &BenchPlan, cancel: &AtomicBool, emit: &mut dyn FnMut(BenchEvent)) {
    let test = TestKind::Cpu;
    emit(BenchEvent::Started { test, device: None });
    // Checked between the three parts (each takes at most a few seconds).
    let cancelled = |emit: &mut dyn FnMut(BenchEvent)| {
        let stop = cancel.load(Ordering::Relaxed);
        if stop {
            emit(BenchEvent::Failed { test, failure: Failure::new(FailureKind::Cancelled, "cancelled by the user") });
        }
        stop
    };
    let total = 3;
    let mut result = TestResult::default();

    // The optimised SGEMM.
    let n = plan.cpu_gemm_size as usize;
    let (a, b) = (random_matrix(n, 1), random_matrix(n, 2));
    let mut c = vec![0.0f32; n * n];
    let reps = plan.repetitions.clamp(3, 10);
    let times = time_runs(1, reps, || sgemm(n, black_box(&a), black_box(&b), &mut c));
    let fast = Stats::from_samples(&times).map(|t| t.map_decreasing(|s| gemm_gflops(n, s)));
    if let Some(s) = fast {
        emit(BenchEvent::Sample {
            test,
            point: point("matrixmultiply", f64::from(plan.cpu_gemm_size), Unit::MatrixN, s, Unit::GflopPerS),
        });
        result.measurements.push(Measurement::median(
            Metric::CpuGemm,
            format!("SGEMM {n}³, matrixmultiply, {} threads", gemm_threads()),
            s,
            Unit::GflopPerS,
        ));
    }
    emit(BenchEvent::Progress { test, done: 1, total, what: format!("SGEMM {n}³") });
    if cancelled(emit) {
        return;
    }

    // The naive loop at a smaller size, which also checks the library's answer.
    let m = plan.cpu_naive_size as usize;
    let (a, b) = (random_matrix(m, 3), random_matrix(m, 4));
    let mut reference = vec![0.0f32; m * m];
    let times = time_runs(0, 3, || naive_gemm(m, black_box(&a), black_box(&b), &mut reference));
    let naive = Stats::from_samples(&times).map(|t| t.map_decreasing(|s| gemm_gflops(m, s)));
    if let Some(s) = naive {
        emit(BenchEvent::Sample {
            test,
            point: point("naive loop", f64::from(plan.cpu_naive_size), Unit::MatrixN, s, Unit::GflopPerS),
        });
        result.measurements.push(Measurement::median(
            Metric::CpuNaiveGemm,
            format!("naive i-j-k loop {m}³, one thread"),
            s,
            Unit::GflopPerS,
        ));
    }
    let mut c = vec![0.0f32; m * m];
    sgemm(m, &a, &b, &mut c);
    let err = max_abs_diff(&c, &reference);
    let tolerance = 1e-5 * m as f32;
    result.checks.push(Check {
        name: format!("SGEMM {m}³ against the naive loop"),
        passed: err <= tolerance,
        detail: format!("largest difference {err:.2e}, allowed {tolerance:.2e}"),
    });
    if let (Some(f), Some(s)) = (fast, naive) {
        result.notes.push(format!(
            "matrixmultiply reached {:.0}× the naive loop's GFLOP/s (different sizes: {n}³ and {m}³)",
            f.median / s.median
        ));
    }
    emit(BenchEvent::Progress { test, done: 2, total, what: format!("naive GEMM {m}³") });
    if cancelled(emit) {
        return;
    }

    // Host memcpy.
    let bytes = usize::try_from(plan.cpu_memcpy_bytes).unwrap_or(usize::MAX);
    if let Some(s) = memcpy_gbps(bytes, 2, plan.repetitions.clamp(3, 20)) {
        let x = bytes as f64;
        emit(BenchEvent::Sample { test, point: point("memcpy", x, Unit::Bytes, s, Unit::GbPerS) });
        result.measurements.push(Measurement::median(
            Metric::HostMemcpy,
            format!("host memcpy {} MiB (read + write)", plan.cpu_memcpy_bytes / MIB),
            s,
            Unit::GbPerS,
        ));
    }
    emit(BenchEvent::Progress { test, done: 3, total, what: "host memcpy".into() });
    emit(BenchEvent::Finished { test, result });
}

fn point(series: &str, x: f64, x_unit: Unit, value: Stats, unit: Unit) -> Point {
    Point { series: series.to_owned(), x, x_unit, value, unit, time_us: None }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn sgemm_matches_the_naive_loop() {
        for n in [1, 7, 64, 100] {
            let (a, b) = (random_matrix(n, 10), random_matrix(n, 11));
            let (mut fast, mut slow) = (vec![0.0; n * n], vec![0.0; n * n]);
            sgemm(n, &a, &b, &mut fast);
            naive_gemm(n, &a, &b, &mut slow);
            let tol = 1e-5 * n as f32;
            assert!(max_abs_diff(&fast, &slow) <= tol, "n={n}");
        }
    }

    #[test]
    fn naive_gemm_is_column_major() {
        // A = [[1, 2], [3, 4]] and B = I, stored column-major.
        let a = [1.0, 3.0, 2.0, 4.0];
        let b = [1.0, 0.0, 0.0, 1.0];
        let mut c = [0.0; 4];
        naive_gemm(2, &a, &b, &mut c);
        assert_eq!(c, a);
        let b = [0.0, 1.0, 1.0, 0.0]; // swaps columns
        naive_gemm(2, &a, &b, &mut c);
        assert_eq!(c, [2.0, 4.0, 1.0, 3.0]);
    }

    #[test]
    fn baselines_give_sane_numbers() {
        let mut plan = BenchPlan::preset(0, vec![TestKind::Cpu], true);
        plan.cpu_gemm_size = 256;
        plan.cpu_naive_size = 64;
        plan.cpu_memcpy_bytes = 8 * MIB;
        plan.repetitions = 3;
        let mut events = Vec::new();
        run(&plan, &AtomicBool::new(false), &mut |e| events.push(e));
        assert!(matches!(events.first(), Some(BenchEvent::Started { test: TestKind::Cpu, device: None })));
        let Some(BenchEvent::Finished { result, .. }) = events.last() else { panic!("no finished event") };
        let value = |metric: Metric| result.measurements.iter().find(|m| m.metric == metric).unwrap().value;
        let (fast, naive, memcpy) = (value(Metric::CpuGemm), value(Metric::CpuNaiveGemm), value(Metric::HostMemcpy));
        // Loose bounds that hold on any machine this runs on, including a busy 2-core CI box.
        assert!(fast > 0.1 && fast < 100_000.0, "{fast} GFLOP/s");
        assert!(naive > 0.01 && naive < fast * 10.0, "{naive} GFLOP/s");
        assert!(memcpy > 0.1 && memcpy < 10_000.0, "{memcpy} GB/s");
        assert!(result.checks.iter().all(|c| c.passed), "{:?}", result.checks);
    }

    #[test]
    fn a_cancel_stops_after_the_part_under_way() {
        let mut plan = BenchPlan::preset(0, vec![TestKind::Cpu], true);
        (plan.cpu_gemm_size, plan.cpu_naive_size, plan.cpu_memcpy_bytes, plan.repetitions) = (64, 32, MIB, 3);
        let mut events = Vec::new();
        run(&plan, &AtomicBool::new(true), &mut |e| events.push(e));
        let progress = events.iter().filter(|e| matches!(e, BenchEvent::Progress { .. })).count();
        assert_eq!(progress, 1, "only the first part ran: {events:?}");
        assert!(
            matches!(events.last(), Some(BenchEvent::Failed { failure, .. }) if failure.kind == FailureKind::Cancelled),
            "{events:?}"
        );
        assert!(!events.iter().any(|e| matches!(e, BenchEvent::Finished { .. })));
    }

    #[test]
    fn copy_gbps_copies_and_counts_each_byte_once() {
        #[expect(clippy::cast_possible_truncation, reason = "i % 251 fits a u8")]
        let src: Vec<u8> = (0..MIB as usize).map(|i| (i % 251) as u8).collect();
        let mut dst = vec![0u8; src.len()];
        let s = copy_gbps(&src, &mut dst, 1, 3).unwrap();
        assert_eq!(dst, src);
        assert_eq!(s.n, 3);
        assert!(s.median > 0.0 && s.median.is_finite(), "{s:?}");
        // 1 MiB in a median of 2 ms is 0.524 GB/s with each byte counted once (1.049 if counted twice).
        let mut fresh = vec![0u8; src.len()];
        let timed = copy_gbps_timed(&src, &mut fresh, |copy| {
            copy();
            vec![0.002, 0.001, 0.004]
        })
        .unwrap();
        assert_eq!(fresh, src, "the timed closure is the copy");
        assert!((timed.median - 1_048_576.0 / 0.002 / 1e9).abs() < 1e-9, "{timed:?}");
        assert!(copy_gbps(&src, &mut dst[1..], 0, 3).is_none(), "lengths differ");
        assert!(copy_gbps(&src, &mut dst, 0, 0).is_none(), "no repetitions");
    }

    #[test]
    fn gflops_arithmetic() {
        assert!((gemm_gflops(1000, 1.0) - 2.0).abs() < 1e-12);
    }
}
