//! Memory: the largest single allocation that succeeds, then a pattern test over a share of free
//! memory. The test writes each pattern over the whole region through pinned host buffers, then
//! reads everything back and checks it on the host (in parallel), so it needs no compiled kernel;
//! its speed is bounded by the host link.

use std::thread;

use cudarc::driver::sys::CUresult;

use super::buffers::{copy_dtoh, copy_htod, human_bytes};
use super::{DeviceBuffer, Emit, Gpu, PinnedBuffer, cuda_failure};
use crate::patterns::{ErrorLog, Pattern, verify};
use gpu_doctor_model::bench::plan::{BenchPlan, MIB, TestKind};
use gpu_doctor_model::bench::protocol::{BenchEvent, Check, Failure, Measurement, MemtestReport, Metric, TestResult};
use gpu_doctor_model::bench::unit::Unit;

/// Allocation granularity of the largest-allocation search and of the tested region.
const STEP: u64 = 64 * MIB;
/// Bytes per chunk of the tested region (one allocation each) and per host staging buffer.
const CHUNK: u64 = 256 * MIB;

/// Binary search for the largest `alloc(bytes)` that succeeds, in `STEP` units, between 0 and
/// `limit`. `alloc` says whether an allocation of that size worked (and frees it).
pub(crate) fn largest_allocation(limit: u64, mut alloc: impl FnMut(u64) -> bool) -> u64 {
    let (mut lo, mut hi) = (0u64, limit / STEP);
    if hi > 0 && alloc(hi * STEP) {
        return hi * STEP;
    }
    // Invariant: lo steps succeed (0 trivially), hi steps fail.
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if alloc(mid * STEP) { lo = mid } else { hi = mid }
    }
    lo * STEP
}

/// Both parts of the memory test.
pub(crate) fn run(gpu: &Gpu, plan: &BenchPlan, emit: Emit<'_>) -> Result<TestResult, Failure> {
    let test = TestKind::Memtest;
    let mut result = TestResult::default();
    let (free, total) = gpu.ctx.mem_get_info().map_err(|e| cuda_failure(e, "asking for free memory"))?;
    let (free, total) = (free as u64, total as u64);

    let mut oom_error = None;
    let largest = largest_allocation(free, |bytes| match DeviceBuffer::try_new(bytes as usize) {
        Ok(_) => true,
        Err(e) => {
            if e.0 != CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                oom_error.get_or_insert(e);
            }
            false
        }
    });
    if let Some(e) = oom_error {
        return Err(cuda_failure(e, "searching for the largest allocation"));
    }
    result.measurements.push(Measurement {
        metric: Metric::LargestAllocation,
        label: format!(
            "largest single allocation ({} steps; {} free of {})",
            human_bytes(STEP as usize),
            human_bytes(free as usize),
            human_bytes(total as usize)
        ),
        value: largest as f64,
        unit: Unit::Bytes,
        stats: None,
    });
    emit(BenchEvent::Progress {
        test,
        done: 1,
        total: 2,
        what: format!("largest allocation {}", human_bytes(largest as usize)),
    });

    let report = memtest(gpu, plan, free, emit)?;
    {
        result.measurements.push(Measurement {
            metric: Metric::MemtestBytes,
            label: format!("tested with {} patterns", report.patterns.len()),
            value: report.bytes_tested as f64,
            unit: Unit::Bytes,
            stats: None,
        });
        result.measurements.push(Measurement {
            metric: Metric::MemtestErrors,
            label: "words that read back wrong".into(),
            value: report.errors_total as f64,
            unit: Unit::Count,
            stats: None,
        });
    }
    result.checks.push(Check {
        name: format!("memory test over {}", human_bytes(report.bytes_tested as usize)),
        passed: report.errors_total == 0,
        detail: if report.errors_total == 0 {
            format!("{} patterns, no errors", report.patterns.len())
        } else {
            format!(
                "{} wrong words; first at {:#x}",
                report.errors_total,
                report.errors.first().map_or(0, |e| e.address)
            )
        },
    });
    result.memtest = Some(report);
    Ok(result)
}

/// Writes and verifies every pattern over `plan.memtest_share` of `free` bytes.
fn memtest(gpu: &Gpu, plan: &BenchPlan, free: u64, emit: Emit<'_>) -> Result<MemtestReport, Failure> {
    let test = TestKind::Memtest;
    #[expect(clippy::cast_sign_loss, reason = "a non-negative share of the free memory")]
    let target = ((free as f64 * plan.memtest_share) as u64 / STEP).max(1) * STEP;
    let mut chunks: Vec<DeviceBuffer> = Vec::new();
    let mut allocated = 0u64;
    while allocated < target {
        let bytes = CHUNK.min(target - allocated);
        chunks.push(DeviceBuffer::new(bytes as usize)?);
        allocated += bytes;
    }
    let mut staging = PinnedBuffer::new(CHUNK as usize)?;
    let patterns = Pattern::sequence(if plan.quick { 2 } else { 8 }, 0x0067_7075_5f64_6f63);
    let stream = gpu.stream.cu_stream();
    let steps = u32::try_from(patterns.len() * 2).unwrap_or(u32::MAX);
    let mut log = ErrorLog::default();
    for (i, pattern) in patterns.iter().enumerate() {
        let mut index = 0u64;
        for chunk in &chunks {
            let words = chunk.bytes() / 8;
            fill_parallel(pattern, index, chunk.ptr(), &mut staging.as_words_mut()[..words]);
            copy_htod(chunk, &staging.as_bytes()[..chunk.bytes()], stream)?;
            gpu.stream.synchronize().map_err(|e| cuda_failure(e, "writing a memory pattern"))?;
            index += words as u64;
        }
        let step = u32::try_from(2 * i + 1).unwrap_or(u32::MAX);
        emit(BenchEvent::Progress { test, done: step, total: steps, what: format!("wrote {}", pattern.name()) });
        let mut index = 0u64;
        for chunk in &chunks {
            let words = chunk.bytes() / 8;
            copy_dtoh(&mut staging.as_bytes_mut()[..chunk.bytes()], chunk, stream)?;
            gpu.stream.synchronize().map_err(|e| cuda_failure(e, "reading a memory pattern back"))?;
            log.merge(verify_parallel(pattern, index, chunk.ptr(), &staging.as_words()[..words]));
            index += words as u64;
        }
        emit(BenchEvent::Progress { test, done: step + 1, total: steps, what: format!("checked {}", pattern.name()) });
    }
    Ok(MemtestReport {
        bytes_tested: allocated,
        patterns: patterns.iter().map(Pattern::name).collect(),
        errors_total: log.total,
        errors: log.first,
    })
}

fn threads() -> usize {
    thread::available_parallelism().map_or(1, usize::from).min(16)
}

/// `Pattern::fill` split over the CPU's threads.
fn fill_parallel(p: &Pattern, first_index: u64, base: u64, out: &mut [u64]) {
    let per = out.len().div_ceil(threads()).max(1);
    thread::scope(|s| {
        for (k, part) in out.chunks_mut(per).enumerate() {
            let offset = (k * per) as u64;
            s.spawn(move || p.fill(first_index + offset, base + 8 * offset, part));
        }
    });
}

/// `verify` split over the CPU's threads, logs merged in address order.
fn verify_parallel(p: &Pattern, first_index: u64, base: u64, data: &[u64]) -> ErrorLog {
    let per = data.len().div_ceil(threads()).max(1);
    thread::scope(|s| {
        let handles: Vec<_> = data
            .chunks(per)
            .enumerate()
            .map(|(k, part)| {
                let offset = (k * per) as u64;
                s.spawn(move || verify(p, first_index + offset, base + 8 * offset, part))
            })
            .collect();
        let mut log = ErrorLog::default();
        for h in handles {
            // A verifying thread only compares integers; if it panicked anyway, propagate it to the
            // test's catch_unwind.
            match h.join() {
                Ok(part) => log.merge(part),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        log
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn largest_allocation_search() {
        let limit = 80 * 1024 * MIB;
        for capacity in [0, STEP - 1, STEP, 5 * STEP + 3, 40 * 1024 * MIB, limit] {
            let mut calls = 0;
            let got = largest_allocation(limit, |b| {
                calls += 1;
                b <= capacity
            });
            assert_eq!(got, capacity / STEP * STEP, "capacity {capacity}");
            assert!(calls <= 13, "{calls} allocations for capacity {capacity}");
        }
    }

    #[test]
    fn parallel_fill_and_verify_agree_with_serial() {
        let p = Pattern::Random { seed: 3 };
        let mut par = vec![0u64; 10_007];
        fill_parallel(&p, 11, 0x1000, &mut par);
        let mut ser = vec![0u64; 10_007];
        p.fill(11, 0x1000, &mut ser);
        assert_eq!(par, ser);
        par[5000] ^= 4;
        par[10_006] ^= 1;
        let log = verify_parallel(&p, 11, 0x1000, &par);
        assert_eq!(log.total, 2);
        assert_eq!(log.first[0].address, 0x1000 + 5000 * 8);
        assert_eq!(log.first[1].address, 0x1000 + 10_006 * 8);
    }
}
