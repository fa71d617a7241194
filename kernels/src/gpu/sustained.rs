//! Sustained load: one GEMM size in a loop for the planned time, throughput reported each second.
//! The parent samples clocks, temperature, power and throttle reasons meanwhile and judges them.

use std::time::{Duration, Instant};

use gpu_doctor_kb::GpuTable;
use gpu_doctor_model::ComputeCapability;

use super::gemm::{Blas, Operands, tensor_min_cc, tflops};
use super::{Emit, Gpu, Timer, cublas_library, cuda_failure};
use crate::cpu::random_matrix;
use gpu_doctor_model::bench::plan::{BenchPlan, Precision, TestKind};
use gpu_doctor_model::bench::protocol::{BenchEvent, Failure, Measurement, Metric, Point, TestResult};
use gpu_doctor_model::bench::stats::Stats;
use gpu_doctor_model::bench::unit::Unit;

/// The precision that loads the GPU hardest: BF16 where its tensor cores take it, else FP16 where
/// they take that, else FP32 (by `gpus.toml` `[[tensor]]`); FP16 when the capability is unknown.
pub(crate) fn load_precision(cc: Option<(u32, u32)>) -> Precision {
    match gpu_doctor_kb::Kb::get() {
        Ok(kb) => load_precision_in(&kb.gpus, cc),
        Err(_) => Precision::Fp16,
    }
}

/// [`load_precision`] against a given table.
pub(crate) fn load_precision_in(table: &GpuTable, cc: Option<(u32, u32)>) -> Precision {
    let Some((major, minor)) = cc else { return Precision::Fp16 };
    let cc = ComputeCapability { major, minor };
    [Precision::Bf16, Precision::Fp16]
        .into_iter()
        .find(|p| tensor_min_cc(table, *p).is_some_and(|min| cc >= min))
        .unwrap_or(Precision::Fp32)
}

/// The sustained-load loop.
pub(crate) fn run(gpu: &mut Gpu, plan: &BenchPlan, emit: Emit<'_>) -> Result<TestResult, Failure> {
    let test = TestKind::Sustained;
    cublas_library()?;
    let blas = Blas::new(&gpu.stream)?;
    gpu.info.cublas_version = blas.version();
    let gpu = &*gpu;
    let p = load_precision(gpu.info.compute_capability.map(|c| (c.major, c.minor)));
    let free = gpu.ctx.mem_get_info().map_err(|e| cuda_failure(e, "asking for free memory"))?.0 as u64;
    let n: usize = if 3 * 8192 * 8192 * p.element_bytes() <= free / 2 { 8192 } else { 4096 };
    let (a, b) = (random_matrix(n, 0xa), random_matrix(n, 0xb));
    let ops = Operands::upload(gpu, p, n, &a, &b)?;
    let timer = Timer::new(gpu)?;
    // Batches of GEMMs between events; the batch grows until it takes about 100 ms.
    let mut batch = 1u32;
    let start = Instant::now();
    let deadline = Duration::from_secs(u64::from(plan.sustained_secs));
    let mut per_second: Vec<f64> = Vec::new();
    let mut window: Vec<f64> = Vec::new();
    let mut window_start = Instant::now();
    while start.elapsed() < deadline {
        let secs = timer.time(&gpu.stream, || (0..batch).try_for_each(|_| blas.gemm(p, n, &ops.a, &ops.b, &ops.c)))?;
        window.push(tflops(n, secs / f64::from(batch)));
        if secs < 0.1 {
            batch = batch.saturating_mul(2).min(1 << 16);
        }
        if window_start.elapsed() >= Duration::from_secs(1) {
            if let Some(s) = Stats::from_samples(&window) {
                emit(BenchEvent::Sample {
                    test,
                    point: Point {
                        series: p.label().to_owned(),
                        x: start.elapsed().as_secs_f64(),
                        x_unit: Unit::Secs,
                        value: s,
                        unit: Unit::TflopPerS,
                        time_us: None,
                    },
                });
                per_second.push(s.median);
            }
            let done = u32::try_from(start.elapsed().as_secs()).unwrap_or(u32::MAX).min(plan.sustained_secs);
            emit(BenchEvent::Progress { test, done, total: plan.sustained_secs, what: format!("{done} s") });
            window.clear();
            window_start = Instant::now();
        }
    }
    let mut result = TestResult::default();
    if let Some(s) = Stats::from_samples(&per_second) {
        result.measurements.push(Measurement::median(
            Metric::SustainedGemm { precision: p },
            format!("{} {n}³ for {} s (median of per-second throughput)", p.label(), plan.sustained_secs),
            s,
            Unit::TflopPerS,
        ));
        let tenth = (per_second.len() / 10).max(1);
        let first = per_second[..tenth].iter().sum::<f64>() / tenth as f64;
        let last = per_second[per_second.len() - tenth..].iter().sum::<f64>() / tenth as f64;
        if first > 0.0 {
            result.notes.push(format!(
                "throughput in the last tenth of the run was {:.0} % of the first tenth ({:.1} → {:.1} TFLOP/s)",
                last / first * 100.0,
                first,
                last
            ));
        }
    }
    Ok(result)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_hardest_precision_per_generation() {
        assert_eq!(load_precision(Some((9, 0))), Precision::Bf16);
        assert_eq!(load_precision(Some((7, 5))), Precision::Fp16);
        assert_eq!(load_precision(Some((6, 1))), Precision::Fp32);
    }

    #[test]
    fn the_load_precision_follows_the_tensor_rows() {
        let kb = gpu_doctor_kb::Kb::get().unwrap();
        let mut table = kb.gpus.clone();
        assert_eq!(load_precision_in(&table, Some((8, 0))), Precision::Bf16);
        table.tensor.iter_mut().filter(|t| t.precision == "bf16").for_each(|t| t.min_cc = "9.0".parse().unwrap());
        assert_eq!(load_precision_in(&table, Some((8, 0))), Precision::Fp16);
        table.tensor.iter_mut().filter(|t| t.precision == "fp16").for_each(|t| t.min_cc = "8.0".parse().unwrap());
        assert_eq!(load_precision_in(&table, Some((7, 5))), Precision::Fp32);
    }
}
