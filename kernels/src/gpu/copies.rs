//! Copies: host↔device over a size sweep (pageable and pinned), both directions at once, and
//! device-to-device (the driver's memcpy and a copy kernel).

use cudarc::driver::result;
use cudarc::driver::sys;

use super::buffers::{copy_dtoh, copy_htod, human_bytes};
use super::{DeviceBuffer, Emit, Enqueue, Gpu, PinnedBuffer, Timer, compiled, cuda_failure, time_reps, warm_up};
use crate::cpu;
use gpu_doctor_model::bench::plan::{BenchPlan, MIB, TestKind};
use gpu_doctor_model::bench::protocol::{
    BenchEvent, Check, CopyMethod, Failure, Measurement, Metric, Point, TestResult,
};
use gpu_doctor_model::bench::stats::Stats;
use gpu_doctor_model::bench::unit::Unit;

/// Sizes from which a transfer counts toward the plateau.
const PLATEAU_FROM: u64 = 16 * MIB;
/// Each device-copy buffer holds at least this many times the L2 cache, so the copy streams from
/// memory rather than from cache (2 × 64 MiB nearly fits the 72 MB L2 of an RTX 4090).
pub(crate) const L2_MULTIPLE: u64 = 4;

/// Bytes per second as GB/s.
fn gbps(bytes: f64, secs: f64) -> f64 {
    bytes / secs / 1e9
}

/// Repetitions for a transfer size: small copies are quick and noisier, so they get more.
fn reps_for(plan: &BenchPlan, size: u64) -> u32 {
    if size <= MIB { plan.repetitions.saturating_mul(3).min(1000) } else { plan.repetitions }
}

/// Host→device (`h2d`) or device→host copies of every plan size, pinned and pageable.
pub(crate) fn host_device(gpu: &Gpu, plan: &BenchPlan, h2d: bool, emit: Emit<'_>) -> Result<TestResult, Failure> {
    let test = if h2d { TestKind::H2d } else { TestKind::D2h };
    let sizes = &plan.transfer_sizes_bytes;
    let largest = usize::try_from(sizes.last().copied().unwrap_or(MIB)).unwrap_or(usize::MAX);
    let device = DeviceBuffer::new(largest)?;
    let mut result = TestResult::default();
    // Pageable memory, every page touched so first-touch faults do not land in the timing.
    #[expect(clippy::cast_possible_truncation, reason = "i % 251 fits a u8")]
    let mut pageable: Vec<u8> = (0..largest).map(|i| (i % 251) as u8).collect();
    // Page-locking a large buffer can fail where the locked-memory limit is low (some
    // containers); the pageable series still runs then.
    let mut pinned = match PinnedBuffer::new(largest) {
        Ok(mut p) => {
            p.as_bytes_mut().copy_from_slice(&pageable);
            Some(p)
        }
        Err(f) => {
            result.notes.push(format!("the pinned series did not run: {}", f.reason));
            None
        }
    };
    let stream = gpu.stream.cu_stream();
    let total = u32::try_from(sizes.len() * if pinned.is_some() { 2 } else { 1 }).unwrap_or(u32::MAX);
    // The largest copy for `WARMUP_MIN`, so the first (smallest) sizes are not measured at idle clocks.
    {
        let host: &mut [u8] = match pinned.as_mut() {
            Some(p) => p.as_bytes_mut(),
            None => &mut pageable,
        };
        warm_up(gpu, || if h2d { copy_htod(&device, host, stream) } else { copy_dtoh(host, &device, stream) })?;
    }
    let mut done = 0;

    for is_pinned in [true, false] {
        let series = if is_pinned { "pinned" } else { "pageable" };
        let host: &mut [u8] = match (is_pinned, pinned.as_mut()) {
            (true, Some(p)) => p.as_bytes_mut(),
            (true, None) => continue,
            (false, _) => &mut pageable,
        };
        let mut points: Vec<(u64, Stats)> = Vec::new();
        let mut first_time: Option<(u64, Stats)> = None;
        for &size in sizes {
            let n = usize::try_from(size).unwrap_or(usize::MAX);
            let enqueue = if is_pinned { Enqueue::Held } else { Enqueue::Plain };
            let times = time_reps(gpu, enqueue, plan.warmup, reps_for(plan, size), || {
                if h2d { copy_htod(&device, &host[..n], stream) } else { copy_dtoh(&mut host[..n], &device, stream) }
            })?;
            let Some(t) = Stats::from_samples(&times) else { continue };
            let bw = t.map_decreasing(|secs| gbps(size as f64, secs));
            emit(BenchEvent::Sample {
                test,
                point: Point {
                    series: series.to_owned(),
                    x: size as f64,
                    x_unit: Unit::Bytes,
                    value: bw,
                    unit: Unit::GbPerS,
                    time_us: Some(t.scale(1e6)),
                },
            });
            done += 1;
            emit(BenchEvent::Progress { test, done, total, what: format!("{series} {}", human_bytes(n)) });
            points.push((size, bw));
            first_time.get_or_insert((size, t.scale(1e6)));
        }
        if !is_pinned {
            result.measurements.extend(staging_copy(&mut pageable, pinned.as_mut(), plan, h2d));
        }
        if let Some((size, s)) = plateau(&points) {
            result.measurements.push(Measurement {
                metric: if h2d {
                    Metric::HostToDevice { pinned: is_pinned }
                } else {
                    Metric::DeviceToHost { pinned: is_pinned }
                },
                label: format!(
                    "{series}, plateau (best size from {}: {})",
                    gpu_doctor_model::bench::format::bytes(PLATEAU_FROM.min(size)),
                    gpu_doctor_model::bench::format::bytes(size)
                ),
                value: s.median,
                unit: Unit::GbPerS,
                stats: Some(s),
            });
        }
        if is_pinned && let Some((size, us)) = first_time {
            result.measurements.push(small_copy_time(h2d, size, us));
        }
    }
    Ok(result)
}

/// The smallest pinned copy's GPU time per copy (µs), named for what it is: each sample is a
/// window of up to `MAX_OPS_PER_WINDOW` copies queued back to back behind the stream hold
/// (`time_reps`), so it is an inverse throughput, not the latency of one copy on its own.
fn small_copy_time(h2d: bool, size: u64, us: Stats) -> Measurement {
    Measurement::median(
        Metric::SmallCopyTime { h2d },
        format!(
            "pinned {} copies, up to {} queued back to back: GPU time per copy (not one copy's latency)",
            gpu_doctor_model::bench::format::bytes(size),
            crate::timing::MAX_OPS_PER_WINDOW
        ),
        us,
        Unit::Micros,
    )
}

/// Host memcpy between the pageable buffer and the pinned one (a fresh pageable buffer where
/// page-locking failed), in the direction of the test, at the largest transfer size: the step the
/// driver adds to a pageable copy, so the pageable result is judged against it. Runs in this
/// worker, which the runner bound to the GPU's NUMA node, as the driver's copy runs.
fn staging_copy(
    pageable: &mut [u8],
    pinned: Option<&mut PinnedBuffer>,
    plan: &BenchPlan,
    h2d: bool,
) -> Option<Measurement> {
    let mut fallback;
    let (staging, into): (&mut [u8], &str) = match pinned {
        Some(p) => (p.as_bytes_mut(), "pinned"),
        None => {
            fallback = vec![0u8; pageable.len()];
            (&mut fallback, "pageable")
        }
    };
    let reps = plan.repetitions.clamp(3, 10);
    let stats =
        if h2d { cpu::copy_gbps(pageable, staging, 1, reps) } else { cpu::copy_gbps(staging, pageable, 1, reps) }?;
    let (from, to) = if h2d { ("pageable", into) } else { (into, "pageable") };
    Some(Measurement::median(
        Metric::StagingCopy { h2d },
        format!("host memcpy {from} → {to}, {} (the driver's staging step)", human_bytes(pageable.len())),
        stats,
        Unit::GbPerS,
    ))
}

/// The plateau of a sweep: the best median among sizes of `PLATEAU_FROM` or more (the largest
/// size when the sweep stops below that).
pub(crate) fn plateau(points: &[(u64, Stats)]) -> Option<(u64, Stats)> {
    let from = points.last()?.0.min(PLATEAU_FROM);
    points.iter().filter(|(size, _)| *size >= from).max_by(|a, b| a.1.median.total_cmp(&b.1.median)).copied()
}

/// Host→device and device→host at the same time, pinned, each on its own stream.
pub(crate) fn bidirectional(gpu: &Gpu, plan: &BenchPlan, emit: Emit<'_>) -> Result<TestResult, Failure> {
    let test = TestKind::Bidir;
    let size = plan.transfer_sizes_bytes.last().copied().unwrap_or(MIB).min(256 * MIB);
    let n = usize::try_from(size).unwrap_or(usize::MAX);
    let (to_device, from_device) = (DeviceBuffer::new(n)?, DeviceBuffer::new(n)?);
    let (src, mut dst) = (PinnedBuffer::new(n)?, PinnedBuffer::new(n)?);
    let other = gpu.ctx.new_stream().map_err(|e| cuda_failure(e, "creating a second stream"))?;
    let joined = gpu
        .ctx
        .new_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
        .map_err(|e| cuda_failure(e, "creating an event"))?;
    let timer = Timer::new(gpu)?;
    let main = &gpu.stream;
    let mut once = || -> Result<f64, Failure> {
        timer.start().record(main).map_err(|e| cuda_failure(e, "recording an event"))?;
        other.wait(timer.start()).map_err(|e| cuda_failure(e, "ordering two streams"))?;
        copy_htod(&to_device, src.as_bytes(), main.cu_stream())?;
        copy_dtoh(dst.as_bytes_mut(), &from_device, other.cu_stream())?;
        joined.record(&other).map_err(|e| cuda_failure(e, "recording an event"))?;
        main.wait(&joined).map_err(|e| cuda_failure(e, "joining two streams"))?;
        timer.end().record(main).map_err(|e| cuda_failure(e, "recording an event"))?;
        let ms = timer.start().elapsed_ms(timer.end()).map_err(|e| cuda_failure(e, "reading a timing event"))?;
        Ok(f64::from(ms) / 1e3)
    };
    warm_up(gpu, || once().map(|_| ()))?;
    let times = (0..plan.repetitions).map(|_| once()).collect::<Result<Vec<f64>, Failure>>()?;
    other.synchronize().map_err(|e| cuda_failure(e, "synchronizing the second stream"))?;
    let mut result = TestResult::default();
    if let Some(t) = Stats::from_samples(&times) {
        let bw = t.map_decreasing(|secs| gbps(2.0 * size as f64, secs));
        emit(BenchEvent::Sample {
            test,
            point: Point {
                series: "both directions".into(),
                x: size as f64,
                x_unit: Unit::Bytes,
                value: bw,
                unit: Unit::GbPerS,
                time_us: None,
            },
        });
        result.measurements.push(Measurement::median(
            Metric::Bidirectional,
            format!("pinned, {} each way at once (sum of both directions)", human_bytes(n)),
            bw,
            Unit::GbPerS,
        ));
    }
    emit(BenchEvent::Progress { test, done: 1, total: 1, what: human_bytes(n) });
    Ok(result)
}

/// Device-to-device copies with the driver's memcpy and with a copy kernel; bandwidth counts bytes
/// read plus bytes written.
pub(crate) fn device_copy(gpu: &mut Gpu, plan: &BenchPlan, emit: Emit<'_>) -> Result<TestResult, Failure> {
    let test = TestKind::D2d;
    let mut result = TestResult::default();
    let free = gpu.ctx.mem_get_info().map_err(|e| cuda_failure(e, "asking for free memory"))?.0 as u64;
    let l2 = super::attr(&gpu.ctx, sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE).filter(|b| *b > 0);
    let (size, notes) = device_copy_bytes(plan.d2d_bytes, l2.map(u64::from), free);
    result.notes.extend(notes);
    let n = usize::try_from(size).unwrap_or(usize::MAX);
    let (src, dst) = (DeviceBuffer::new(n)?, DeviceBuffer::new(n)?);
    let stream = gpu.stream.cu_stream();
    // SAFETY: `src` holds `n` bytes; the memset is ordered before the copies on the same stream.
    #[allow(unsafe_code)]
    unsafe { result::memset_d8_async(src.ptr(), FILL, n, stream) }
        .map_err(|e| cuda_failure(e, "filling GPU memory"))?;
    let memcpy = || {
        // SAFETY: both buffers hold `n` bytes and live until after the timer synchronizes.
        #[allow(unsafe_code)]
        unsafe { result::memcpy_dtod_async(dst.ptr(), src.ptr(), n, stream) }
            .map_err(|e| cuda_failure(e, "copying device to device"))
    };
    warm_up(gpu, memcpy)?;
    let times = time_reps(gpu, Enqueue::Held, plan.warmup, plan.repetitions, memcpy)?;
    result.measurements.extend(device_copy_measurement(CopyMethod::Memcpy, &times, n, emit));
    emit(BenchEvent::Progress { test, done: 1, total: 2, what: "driver memcpy".into() });

    match compiled::CopyKernel::load(gpu) {
        Ok(kernel) => {
            let gpu = &*gpu;
            let times =
                time_reps(gpu, Enqueue::Held, plan.warmup, plan.repetitions, || kernel.launch(gpu, &src, &dst, n))?;
            result.measurements.extend(device_copy_measurement(CopyMethod::Kernel, &times, n, emit));
            result.checks.push(check_copy_kernel(gpu, &kernel, &src, &dst, FILL)?);
        }
        Err(f) => result.notes.push(format!("the copy kernel did not run: {}", f.reason)),
    }
    emit(BenchEvent::Progress { test, done: 2, total: 2, what: "copy kernel".into() });
    Ok(result)
}

/// The byte the device copies' source holds.
const FILL: u8 = 0x5a;

/// Bytes the copy kernel's check copies: 16 MiB and three 16-byte words, a word count that is not a
/// multiple of the block, so the last block's threads past the end must stop at the kernel's bound.
const KERNEL_CHECK_BYTES: usize = 16 * MIB as usize + 48;

/// The copy kernel against its source: `dst` zeroed, [`KERNEL_CHECK_BYTES`] copied from `src`
/// (each byte `fill`), then read back with the 16 bytes after them, which must still be 0.
fn check_copy_kernel(
    gpu: &Gpu,
    kernel: &compiled::CopyKernel,
    src: &DeviceBuffer,
    dst: &DeviceBuffer,
    fill: u8,
) -> Result<Check, Failure> {
    let bytes = KERNEL_CHECK_BYTES.min(dst.bytes().saturating_sub(16)) / 16 * 16;
    let stream = gpu.stream.cu_stream();
    // SAFETY: `dst` holds `dst.bytes()` bytes; the memset is ordered before the copy on the stream.
    #[allow(unsafe_code)]
    unsafe { result::memset_d8_async(dst.ptr(), 0, dst.bytes(), stream) }
        .map_err(|e| cuda_failure(e, "clearing GPU memory"))?;
    kernel.launch(gpu, src, dst, bytes)?;
    let mut back = vec![0u8; bytes + 16];
    copy_dtoh(&mut back, dst, stream)?;
    gpu.stream.synchronize().map_err(|e| cuda_failure(e, "reading the copy kernel's result"))?;
    Ok(copy_check(&back, bytes, fill))
}

/// The check of `back`: its first `copied` bytes must be `fill`, the rest 0.
fn copy_check(back: &[u8], copied: usize, fill: u8) -> Check {
    let wrong = back[..copied].iter().filter(|b| **b != fill).count();
    let overrun = back[copied..].iter().filter(|b| **b != 0).count();
    Check {
        name: format!("copy kernel, {} against its source", human_bytes(copied)),
        passed: wrong == 0 && overrun == 0,
        detail: format!(
            "{wrong} of {copied} bytes differ from the source; {overrun} of the {} bytes after them were written",
            back.len() - copied
        ),
    }
}

/// Bytes per device-copy buffer, and notes on why it is not the planned size: at least
/// `L2_MULTIPLE` × the L2 cache (`l2`, bytes; rounded up to a power of two), then halved until two
/// buffers fit in half the free memory.
pub(crate) fn device_copy_bytes(planned: u64, l2: Option<u64>, free: u64) -> (u64, Vec<String>) {
    let bytes = gpu_doctor_model::bench::format::bytes;
    let floor = l2.map_or(0, |l| l.saturating_mul(L2_MULTIPLE).next_power_of_two());
    let mut size = planned.max(floor);
    while size > MIB && 2 * size > free / 2 {
        size /= 2;
    }
    let mut notes = Vec::new();
    if let Some(l2) = l2.filter(|_| size > planned) {
        notes.push(format!(
            "copied {} instead of the planned {}: each buffer holds at least {L2_MULTIPLE} × the {} L2 cache, so \
             the copy runs from memory, not from cache",
            bytes(size),
            bytes(planned),
            bytes(l2)
        ));
    }
    if size < planned.max(floor) {
        notes.push(format!(
            "copied {} instead of {}: only {} of GPU memory was free",
            bytes(size),
            bytes(planned.max(floor)),
            bytes(free)
        ));
    }
    if let Some(l2) = l2.filter(|_| size < floor) {
        notes.push(format!(
            "the buffers are smaller than {L2_MULTIPLE} × the {} L2 cache: part of the copy may run from cache and read \
             above the memory's bandwidth",
            bytes(l2)
        ));
    }
    (size, notes)
}

/// Emits the sample of one device-copy method and returns its measurement (read + write bytes).
fn device_copy_measurement(method: CopyMethod, times: &[f64], n: usize, emit: Emit<'_>) -> Option<Measurement> {
    let t = Stats::from_samples(times)?;
    let bw = t.map_decreasing(|secs| gbps(2.0 * n as f64, secs));
    let series = gpu_doctor_model::bench::verdict::copy_method_label(method);
    emit(BenchEvent::Sample {
        test: TestKind::D2d,
        point: Point {
            series: series.to_owned(),
            x: n as f64,
            x_unit: Unit::Bytes,
            value: bw,
            unit: Unit::GbPerS,
            time_us: Some(t.scale(1e6)),
        },
    });
    Some(Measurement::median(
        Metric::DeviceCopy { method },
        format!("{series}, {} (read + write)", human_bytes(n)),
        bw,
        Unit::GbPerS,
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_copy_check_fails_on_a_byte_not_copied_and_on_one_written_past_the_end() {
        let mut back = vec![FILL; 64];
        back[48..].fill(0);
        assert!(copy_check(&back, 48, FILL).passed);
        let mut skipped = back.clone();
        skipped[17] = 0;
        let check = copy_check(&skipped, 48, FILL);
        assert!(!check.passed && check.detail.starts_with("1 of 48 bytes differ"), "{check:?}");
        let mut overrun = back;
        overrun[50] = FILL;
        let check = copy_check(&overrun, 48, FILL);
        assert!(!check.passed && check.detail.contains("1 of the 16 bytes after them"), "{check:?}");
    }

    fn s(v: f64) -> Stats {
        Stats::from_samples(&[v]).unwrap()
    }

    /// The small pinned copies are timed 128 to a window: the label and the saved kind say it is a
    /// time per copy among many, and a run saved with the old kind (`transfer_latency`) still reads.
    #[test]
    fn the_small_copy_time_says_it_is_per_copy_among_many_queued() {
        let m = small_copy_time(true, 4096, s(2.25));
        assert_eq!(
            m.label,
            "pinned 4 KiB copies, up to 128 queued back to back: GPU time per copy (not one copy's latency)"
        );
        assert_eq!((m.value, m.unit), (2.25, Unit::Micros));
        let json = serde_json::to_value(m.metric).unwrap();
        assert_eq!(json, serde_json::json!({ "kind": "small_copy_time", "h2d": true }));
        let old: Metric = serde_json::from_str(r#"{"kind":"transfer_latency","h2d":false}"#).unwrap();
        assert_eq!(old, Metric::SmallCopyTime { h2d: false });
    }

    #[test]
    fn plateau_takes_the_best_large_size() {
        let pts = vec![(4096, s(0.5)), (16 * MIB, s(24.0)), (64 * MIB, s(25.1)), (256 * MIB, s(24.9))];
        assert_eq!(plateau(&pts).unwrap().0, 64 * MIB);
        let small = vec![(4096, s(0.5)), (MIB, s(9.0))];
        assert_eq!(plateau(&small).unwrap().0, MIB, "a sweep ending below 16 MiB uses its largest size");
        assert!(plateau(&[]).is_none());
    }

    /// The GPU test's 64 MiB buffers nearly fit an RTX 4090's 72 MB L2 (and exceed an H100's 50 MB
    /// only just); each buffer now holds at least four times the L2.
    #[test]
    fn device_copy_buffers_are_sized_from_the_l2_cache() {
        let (gib, l2_4090, l2_h100) = (1024 * MIB, 72 * 1000 * 1000, 50 * MIB);
        let (size, notes) = device_copy_bytes(64 * MIB, Some(l2_4090), 24 * gib);
        assert_eq!(size, 512 * MIB, "4 × 72 MB = 288 MB, rounded up to a power of two");
        assert!(notes.len() == 1 && notes[0].contains("4 × the 68.7 MiB L2"), "{notes:?}");
        assert_eq!(device_copy_bytes(64 * MIB, Some(l2_h100), 80 * gib).0, 256 * MIB);
        // The plan's size stands when it is already large enough, and without an L2 figure.
        assert_eq!(device_copy_bytes(gib, Some(l2_h100), 80 * gib), (gib, Vec::new()));
        assert_eq!(device_copy_bytes(64 * MIB, None, 80 * gib), (64 * MIB, Vec::new()));
        // Little free memory wins over the L2 floor, and says what that costs.
        let (size, notes) = device_copy_bytes(64 * MIB, Some(l2_h100), 512 * MIB);
        assert_eq!(size, 128 * MIB);
        assert!(notes.iter().any(|n| n.contains("only 512 MiB of GPU memory was free")), "{notes:?}");
        assert!(notes.iter().any(|n| n.contains("may run from cache")), "{notes:?}");
    }
}
