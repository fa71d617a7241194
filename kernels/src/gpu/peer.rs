//! GPU-to-GPU copies (`TestKind::P2p`): for every ordered pair of GPUs, `cuMemcpyPeerAsync` with
//! peer access enabled (`cuCtxEnablePeerAccess` both ways, disabled again after) and without it
//! (the driver stages the copy through host memory), and a copy staged by hand through pinned host
//! memory (device to host, then host to device); then every GPU sending to every other at once
//! through pinned memory. The result is a `P2pMatrix`, which the parent judges pair by pair.
//!
//! Timing follows nvbandwidth's copy-engine tests (NVIDIA/nvbandwidth README): the stream is held
//! while the copies are enqueued, a start event, the copies and an end event between, and the
//! median of the samples. The plan's `p2p_bytes` is 64 MiB, nvbandwidth's default buffer up to
//! v0.6; since v0.7 its default is 512 MiB (`defaultBufferSize = 512` in common.h at v0.7,
//! 64d6837, and v0.8; README: `--bufferSize arg (=512)`). Here each sample
//! is a window of copies (`time_reps`) after a warm-up (`warm_up`), as in the other copy tests.
//! A copy without peer access may wait for itself inside the call, so it is timed without a hold.
//!
//! A CUDA error in one pair is that mode's `skipped` reason; a sticky error (the context is lost)
//! fails the whole test, as elsewhere.

use std::ffi::c_int;
use std::time::Instant;

use cudarc::driver::result::DriverError;
use cudarc::driver::sys::{self, CUresult};
use cudarc::driver::{CudaContext, result};

use super::buffers::{copy_dtoh, copy_htod};
use super::{DeviceBuffer, Emit, Enqueue, Gpu, PinnedBuffer, cuda_failure, time_reps, warm_up};
use gpu_doctor_model::bench::p2p::{P2pGpu, P2pMatrix, P2pMeasure, P2pMode, P2pPair};
use gpu_doctor_model::bench::plan::{BenchPlan, TestKind};
use gpu_doctor_model::bench::protocol::{BenchEvent, Failure, FailureKind, Measurement, Metric, TestResult};
use gpu_doctor_model::bench::stats::Stats;
use gpu_doctor_model::bench::unit::Unit;

/// One end of the copies: a context on one GPU, its stream, and its two buffers (the bandwidth
/// copy's and the latency copy's), freed with the context current.
struct End {
    gpu: Gpu,
    big: Option<DeviceBuffer>,
    small: Option<DeviceBuffer>,
}

impl End {
    /// Opens GPU `ordinal`'s primary context (`own_context`: a context of its own, for the
    /// loopback) with a stream and allocates its buffers.
    fn open(ordinal: u32, own_context: bool, plan: &BenchPlan) -> Result<Self, Failure> {
        let during = format!("opening GPU {ordinal} for the GPU-to-GPU copies");
        let ctx = if own_context {
            CudaContext::new_non_primary(ordinal as usize, 0)
        } else {
            CudaContext::new(ordinal as usize)
        }
        .map_err(|e| cuda_failure(e, &during))?;
        ctx.bind_to_thread().map_err(|e| cuda_failure(e, &during))?;
        let gpu = super::ready(ctx, ordinal)?;
        let big = DeviceBuffer::new(usize::try_from(plan.p2p_bytes).unwrap_or(usize::MAX))?;
        let small = DeviceBuffer::new(usize::try_from(plan.p2p_latency_bytes).unwrap_or(usize::MAX))?;
        // SAFETY: `big` holds `bytes()` bytes; the fill is ordered before every copy on this stream.
        #[allow(unsafe_code)]
        unsafe { result::memset_d8_async(big.ptr(), 0x5a, big.bytes(), gpu.stream.cu_stream()) }
            .map_err(|e| cuda_failure(e, "filling GPU memory"))?;
        Ok(Self { gpu, big: Some(big), small: Some(small) })
    }

    fn bind(&self) -> Result<(), Failure> {
        self.gpu.ctx.bind_to_thread().map_err(|e| cuda_failure(e, "making a GPU's context current"))
    }

    fn sync(&self) -> Result<(), Failure> {
        self.gpu.stream.synchronize().map_err(|e| cuda_failure(e, "waiting for the copies"))
    }

    fn big(&self) -> &DeviceBuffer {
        self.big.as_ref().unwrap_or_else(|| unreachable!("freed only on drop"))
    }

    fn small(&self) -> &DeviceBuffer {
        self.small.as_ref().unwrap_or_else(|| unreachable!("freed only on drop"))
    }

    fn describe(&self) -> P2pGpu {
        P2pGpu {
            ordinal: self.gpu.info.ordinal,
            name: self.gpu.info.name.clone(),
            pci_bus_id: self.gpu.info.pci_bus_id.clone(),
        }
    }
}

impl Drop for End {
    fn drop(&mut self) {
        // Buffers are freed in the context that allocated them (a non-primary one is destroyed
        // when its last handle drops, right after).
        if self.gpu.ctx.bind_to_thread().is_ok() {
            let _ = self.gpu.stream.synchronize();
        }
        self.big.take();
        self.small.take();
    }
}

/// The CUDA ordinals the test copies between: the plan's bus ids, else every GPU CUDA sees.
fn ordinals(plan: &BenchPlan) -> Result<Vec<u32>, Failure> {
    if !plan.p2p_gpus.is_empty() {
        return plan.p2p_gpus.iter().zip(0u32..).map(|(bus, i)| super::ordinal_at_bus(bus, i)).collect();
    }
    let count = CudaContext::device_count().map_err(|e| cuda_failure(e, "counting CUDA devices"))?;
    Ok((0..u32::try_from(count).unwrap_or(0)).collect())
}

/// The test on every GPU the plan names (or CUDA sees); with fewer than two, a finished test with
/// a note saying why nothing was measured.
pub(crate) fn run(plan: &BenchPlan, emit: Emit<'_>) -> Result<TestResult, Failure> {
    let ordinals = ordinals(plan)?;
    if ordinals.len() < 2 {
        return Ok(TestResult { notes: vec![one_gpu_note(ordinals.len())], ..TestResult::default() });
    }
    let ends = ordinals.iter().map(|&o| End::open(o, false, plan)).collect::<Result<Vec<_>, _>>()?;
    measure(&ends, plan, false, emit)
}

/// Why the test measured nothing with `visible` GPUs.
pub(crate) fn one_gpu_note(visible: usize) -> String {
    format!(
        "not measured: CUDA sees {visible} GPU{} here (CUDA_VISIBLE_DEVICES may hide others); GPU-to-GPU copies \
         need two or more",
        if visible == 1 { "" } else { "s" }
    )
}

/// The loopback used by the GPU verification on a machine with one GPU: the same copies from the
/// GPU's primary context to a second context of its own on the same GPU (drivers of CUDA 12.5 or
/// newer, which have `cuCtxCreate_v4`; else the primary context twice), so every CUDA call of the
/// test runs. Peer access between two contexts of one device is refused by the driver, which the
/// pair records as its reason.
pub(crate) fn loopback(gpu: &Gpu, plan: &BenchPlan, emit: Emit<'_>) -> Result<TestResult, Failure> {
    let ordinal = gpu.info.ordinal;
    let own = gpu.info.driver_cuda_version.is_some_and(|v| (v.major, v.minor) >= (12, 5));
    let ends = vec![End::open(ordinal, false, plan)?, End::open(ordinal, own, plan)?];
    let mut result = measure(&ends, plan, true, emit)?;
    if !own {
        result.notes.push("loopback between the primary context and itself: the driver is older than CUDA 12.5".into());
    }
    Ok(result)
}

/// The ordered pairs of `n` ends (indices), source first; a loopback has the one pair 0 → 1.
pub(crate) fn pairs_of(n: usize, loopback: bool) -> Vec<(usize, usize)> {
    if loopback {
        return vec![(0, 1)];
    }
    (0..n).flat_map(|s| (0..n).filter(move |&d| d != s).map(move |d| (s, d))).collect()
}

fn measure(ends: &[End], plan: &BenchPlan, loopback: bool, emit: Emit<'_>) -> Result<TestResult, Failure> {
    let test = TestKind::P2p;
    let n = usize::try_from(plan.p2p_bytes).unwrap_or(usize::MAX);
    let mut pinned = ends.iter().map(|_| PinnedBuffer::new(n)).collect::<Result<Vec<_>, _>>()?;
    let pairs = pairs_of(ends.len(), loopback);
    let total = u32::try_from(pairs.len() + 1).unwrap_or(u32::MAX);
    let mut matrix = P2pMatrix {
        bytes: plan.p2p_bytes,
        latency_bytes: plan.p2p_latency_bytes,
        gpus: ends.iter().map(End::describe).collect(),
        pairs: Vec::new(),
        staged_all_to_all_gbps: None,
        loopback,
    };
    for (done, &(s, d)) in (1u32..).zip(&pairs) {
        let pair = measure_pair(&ends[s], &ends[d], &mut pinned[s], plan, loopback)?;
        matrix.pairs.push(pair);
        let what = format!("GPU {} → GPU {}", ends[s].gpu.info.ordinal, ends[d].gpu.info.ordinal);
        emit(BenchEvent::Progress { test, done, total, what });
    }
    let mut result = TestResult::default();
    if loopback {
        result.notes.push("loopback: two contexts of one GPU, to exercise the CUDA calls; not judged".into());
    } else {
        match all_to_all(ends, &mut pinned, plan) {
            Ok(stats) => matrix.staged_all_to_all_gbps = Some(stats),
            Err(f) if f.kind == FailureKind::ContextLost => return Err(f),
            Err(f) => result.notes.push(format!("the all-to-all host-staged copy did not run: {}", f.reason)),
        }
    }
    emit(BenchEvent::Progress { test, done: total, total, what: "all to all, host-staged".into() });
    for mode in [P2pMode::PeerEnabled, P2pMode::PeerDisabled] {
        result.measurements.extend(slowest(&matrix, mode));
    }
    result.p2p = Some(matrix);
    Ok(result)
}

/// The headline of a mode: its slowest pair's bandwidth.
pub(crate) fn slowest(matrix: &P2pMatrix, mode: P2pMode) -> Option<Measurement> {
    let (pair, stats) = matrix
        .pairs
        .iter()
        .filter_map(|p| Some((p, p.measure(mode)?.bandwidth_gbps?)))
        .min_by(|a, b| a.1.median.total_cmp(&b.1.median))?;
    Some(Measurement::median(
        Metric::PeerCopy { mode },
        format!(
            "{}, slowest pair (GPU {} → GPU {}), {}",
            mode.label(),
            pair.src,
            pair.dst,
            gpu_doctor_model::bench::format::bytes(matrix.bytes)
        ),
        stats,
        Unit::GbPerS,
    ))
}

/// A mode's measurement, or the reason it was skipped; a lost context stops the test.
fn settle(mode: P2pMode, outcome: Result<P2pMeasure, Failure>) -> Result<P2pMeasure, Failure> {
    match outcome {
        Ok(m) => Ok(m),
        Err(f) if f.kind == FailureKind::ContextLost => Err(f),
        Err(f) => Ok(P2pMeasure { mode, bandwidth_gbps: None, latency_us: None, skipped: Some(f.reason) }),
    }
}

fn measure_pair(
    src: &End,
    dst: &End,
    pinned: &mut PinnedBuffer,
    plan: &BenchPlan,
    loopback: bool,
) -> Result<P2pPair, Failure> {
    let can = can_access_peer(src, dst)?;
    let mut measures = Vec::new();
    // The loopback tries peer access anyway, so the calls run and the driver's answer is recorded.
    let on = if can || loopback {
        with_peer_access(src, dst, || peer_copies(src, dst, plan, P2pMode::PeerEnabled))
    } else {
        Err(Failure::new(FailureKind::Unsupported, "peer access is not offered (cuDeviceCanAccessPeer = 0)"))
    };
    measures.push(settle(P2pMode::PeerEnabled, on)?);
    measures.push(settle(P2pMode::PeerDisabled, peer_copies(src, dst, plan, P2pMode::PeerDisabled))?);
    measures.push(settle(P2pMode::HostStaged, host_staged(src, dst, pinned, plan))?);
    Ok(P2pPair {
        src: src.gpu.info.ordinal,
        dst: dst.gpu.info.ordinal,
        can_access_peer: can,
        measures,
        judgement: None,
        judged_mode: None,
    })
}

fn can_access_peer(src: &End, dst: &End) -> Result<bool, Failure> {
    let mut can: c_int = 0;
    // SAFETY: `can` is a live local for the one int written; both devices come from open contexts.
    #[allow(unsafe_code)]
    let r = unsafe { sys::cuDeviceCanAccessPeer(&raw mut can, src.gpu.ctx.cu_device(), dst.gpu.ctx.cu_device()) };
    match r.result() {
        Ok(()) => Ok(can != 0),
        Err(e) => {
            let f = cuda_failure(e, "asking whether peer access is offered (cuDeviceCanAccessPeer)");
            if f.kind == FailureKind::ContextLost { Err(f) } else { Ok(false) }
        }
    }
}

/// Runs `work` with peer access enabled both ways between the two contexts, and disables it again
/// whatever happened (a later pair, and the P2P-off copies, must not find it on).
fn with_peer_access(
    src: &End,
    dst: &End,
    work: impl FnOnce() -> Result<P2pMeasure, Failure>,
) -> Result<P2pMeasure, Failure> {
    let enable = |from: &End, to: &End| -> Result<bool, Failure> {
        from.bind()?;
        // SAFETY: both contexts are alive; flags must be 0.
        #[allow(unsafe_code)]
        let r = unsafe { sys::cuCtxEnablePeerAccess(to.gpu.ctx.cu_ctx(), 0) };
        match r {
            CUresult::CUDA_SUCCESS => Ok(true),
            CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => Ok(false),
            other => Err(cuda_failure(DriverError(other), "enabling peer access (cuCtxEnablePeerAccess)")),
        }
    };
    let disable = |from: &End, to: &End| {
        if from.bind().is_ok() {
            // SAFETY: both contexts are alive; peer access from `from` to `to` was enabled above.
            #[allow(unsafe_code)]
            let _ = unsafe { sys::cuCtxDisablePeerAccess(to.gpu.ctx.cu_ctx()) };
        }
    };
    let forward = enable(src, dst)?;
    let back = match enable(dst, src) {
        Ok(b) => b,
        Err(f) => {
            if forward {
                disable(src, dst);
            }
            return Err(f);
        }
    };
    let outcome = work();
    if forward {
        disable(src, dst);
    }
    if back {
        disable(dst, src);
    }
    outcome
}

/// `cuMemcpyPeerAsync` from `src` to `dst` on the source's stream: bandwidth and small-copy latency.
fn peer_copies(src: &End, dst: &End, plan: &BenchPlan, mode: P2pMode) -> Result<P2pMeasure, Failure> {
    src.bind()?;
    let stream = src.gpu.stream.cu_stream();
    let copy = |to: &DeviceBuffer, from: &DeviceBuffer| {
        // SAFETY: both buffers hold at least `from.bytes()` bytes (the same plan sizes on both
        // ends) and live until the stream is synchronized, which `time_reps` does.
        #[allow(unsafe_code)]
        unsafe {
            result::memcpy_peer_async(
                dst.gpu.ctx.cu_ctx(),
                to.ptr(),
                src.gpu.ctx.cu_ctx(),
                from.ptr(),
                from.bytes(),
                stream,
            )
        }
        .map_err(|e| cuda_failure(e, "copying GPU to GPU (cuMemcpyPeerAsync)"))
    };
    // Without peer access the driver stages the copy and may return only when it is done: never
    // enqueue that behind a hold.
    let enqueue = if mode == P2pMode::PeerEnabled { Enqueue::Held } else { Enqueue::Plain };
    warm_up(&src.gpu, || copy(dst.big(), src.big()))?;
    let times = time_reps(&src.gpu, enqueue, plan.warmup, plan.repetitions, || copy(dst.big(), src.big()))?;
    let small = time_reps(&src.gpu, enqueue, plan.warmup, plan.repetitions, || copy(dst.small(), src.small()))?;
    src.sync()?;
    Ok(P2pMeasure {
        mode,
        bandwidth_gbps: bandwidth(plan.p2p_bytes, &times),
        latency_us: Stats::from_samples(&small).map(|t| t.scale(1e6)),
        skipped: None,
    })
}

/// Bandwidth in GB/s from seconds per copy of `bytes`.
fn bandwidth(bytes: u64, secs: &[f64]) -> Option<Stats> {
    Stats::from_samples(secs).map(|t| t.map_decreasing(|s| bytes as f64 / s / 1e9))
}

/// Bandwidth of copies staged by hand, sample by sample: `bytes` over the device-to-host time plus
/// the host-to-device time.
pub(crate) fn staged_gbps(bytes: u64, d2h_secs: &[f64], h2d_secs: &[f64]) -> Option<Stats> {
    let sums: Vec<f64> = d2h_secs.iter().zip(h2d_secs).map(|(a, b)| a + b).collect();
    bandwidth(bytes, &sums)
}

/// Device to pinned host memory on the source's stream, then host to device on the destination's.
fn host_staged(src: &End, dst: &End, pinned: &mut PinnedBuffer, plan: &BenchPlan) -> Result<P2pMeasure, Failure> {
    let n = src.big().bytes();
    src.bind()?;
    let down = time_reps(&src.gpu, Enqueue::Held, plan.warmup, plan.repetitions, || {
        copy_dtoh(&mut pinned.as_bytes_mut()[..n], src.big(), src.gpu.stream.cu_stream())
    })?;
    dst.bind()?;
    let up = time_reps(&dst.gpu, Enqueue::Held, plan.warmup, plan.repetitions, || {
        copy_htod(dst.big(), &pinned.as_bytes()[..n], dst.gpu.stream.cu_stream())
    })?;
    dst.sync()?;
    Ok(P2pMeasure {
        mode: P2pMode::HostStaged,
        bandwidth_gbps: staged_gbps(plan.p2p_bytes, &down, &up),
        latency_us: None,
        skipped: None,
    })
}

/// Every GPU to every other at once through pinned host memory: each GPU copies its buffer into its
/// own pinned buffer, then every GPU reads every other's; GB/s summed over the pairs (each pair's
/// bytes counted once), timed on the host from the first copy to the last.
fn all_to_all(ends: &[End], pinned: &mut [PinnedBuffer], plan: &BenchPlan) -> Result<Stats, Failure> {
    let n = usize::try_from(plan.p2p_bytes).unwrap_or(usize::MAX);
    let once = |pinned: &mut [PinnedBuffer]| -> Result<f64, Failure> {
        let t0 = Instant::now();
        for (end, host) in ends.iter().zip(pinned.iter_mut()) {
            end.bind()?;
            copy_dtoh(&mut host.as_bytes_mut()[..n], end.big(), end.gpu.stream.cu_stream())?;
        }
        ends.iter().try_for_each(|e| e.bind().and_then(|()| e.sync()))?;
        for (d, end) in ends.iter().enumerate() {
            end.bind()?;
            for (_, host) in pinned.iter().enumerate().filter(|(s, _)| *s != d) {
                copy_htod(end.big(), &host.as_bytes()[..n], end.gpu.stream.cu_stream())?;
            }
        }
        ends.iter().try_for_each(|e| e.bind().and_then(|()| e.sync()))?;
        Ok(t0.elapsed().as_secs_f64())
    };
    once(pinned)?;
    let secs = (0..plan.repetitions.max(1)).map(|_| once(pinned)).collect::<Result<Vec<_>, _>>()?;
    let pairs = ends.len() * ends.len().saturating_sub(1);
    Stats::from_samples(&secs)
        .map(|t| t.map_decreasing(|s| (pairs * n) as f64 / s / 1e9))
        .ok_or_else(|| Failure::new(FailureKind::Internal, "no sample of the all-to-all copy"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn stats(v: f64) -> Option<Stats> {
        Stats::from_samples(&[v])
    }

    #[test]
    fn every_ordered_pair_once_and_the_loopback_one() {
        assert_eq!(pairs_of(3, false), [(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]);
        assert_eq!(pairs_of(8, false).len(), 56);
        assert!(pairs_of(1, false).is_empty());
        assert_eq!(pairs_of(2, true), [(0, 1)]);
    }

    #[test]
    fn a_staged_copy_counts_both_hops() {
        // 1 GB down in 40 ms and up in 60 ms: 10 GB/s end to end.
        let s = staged_gbps(1_000_000_000, &[0.040, 0.040], &[0.060, 0.060]).unwrap();
        assert!((s.median - 10.0).abs() < 1e-9, "{s:?}");
        assert!(staged_gbps(1, &[], &[]).is_none());
    }

    #[test]
    fn the_headline_is_the_slowest_measured_pair() {
        let pair = |src, dst, on: Option<f64>| P2pPair {
            src,
            dst,
            can_access_peer: on.is_some(),
            measures: vec![P2pMeasure {
                mode: P2pMode::PeerEnabled,
                bandwidth_gbps: on.and_then(stats),
                latency_us: None,
                skipped: on.is_none().then(|| "not offered".into()),
            }],
            judgement: None,
            judged_mode: None,
        };
        let matrix = P2pMatrix {
            bytes: 64 << 20,
            pairs: vec![pair(0, 1, Some(390.0)), pair(1, 0, Some(120.0)), pair(0, 2, None)],
            ..P2pMatrix::default()
        };
        let m = slowest(&matrix, P2pMode::PeerEnabled).unwrap();
        assert_eq!((m.metric, m.value), (Metric::PeerCopy { mode: P2pMode::PeerEnabled }, 120.0));
        assert_eq!(m.label, "P2P on, slowest pair (GPU 1 → GPU 0), 64 MiB");
        assert!(slowest(&matrix, P2pMode::PeerDisabled).is_none());
    }

    #[test]
    fn a_skipped_mode_keeps_its_reason_and_a_lost_context_stops_the_test() {
        let m = settle(P2pMode::PeerEnabled, Err(Failure::new(FailureKind::CudaError, "enabling: 217"))).unwrap();
        assert_eq!((m.skipped.as_deref(), m.bandwidth_gbps), (Some("enabling: 217"), None));
        let lost = Failure::new(FailureKind::ContextLost, "illegal address");
        assert_eq!(settle(P2pMode::HostStaged, Err(lost.clone())), Err(lost));
        assert!(one_gpu_note(1).starts_with("not measured: CUDA sees 1 GPU here"));
    }
}
