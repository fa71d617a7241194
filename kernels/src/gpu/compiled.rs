//! Kernels compiled at run time with NVRTC: a 16-byte copy, an FMA-throughput loop and an empty
//! kernel for launch latency. Without NVRTC these report why and the other tests still run.

use std::ffi::c_int;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaFunction, CudaModule, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::{CompileOptions, compile_ptx_with_opts};

use super::{DeviceBuffer, Emit, Gpu, Timer, cuda_failure, nvrtc_library, time_reps};
use crate::plan::{BenchPlan, TestKind};
use crate::protocol::{BenchEvent, Failure, FailureKind, Measurement, Metric, Point, TestResult, Unit};
use crate::stats::Stats;

/// The CUDA C++ source of every run-time kernel.
pub(crate) const SOURCE: &str = r#"
struct alignas(16) V4 { unsigned int x, y, z, w; };

// Grid-stride copy of n 16-byte words.
extern "C" __global__ void copy16(const V4* __restrict__ src, V4* __restrict__ dst, unsigned long long n) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        dst[i] = src[i];
    }
}

// Eight independent FMA chains, 16 steps each per iteration: 256 FLOP per thread per iteration.
// a = a*b + c with |b| < 1 stays finite; the sum is stored so nothing is optimised away.
extern "C" __global__ void fma_peak(float* out, float b, float c, int iters) {
    float a0 = threadIdx.x * 1e-3f, a1 = a0 + 0.1f, a2 = a0 + 0.2f, a3 = a0 + 0.3f;
    float a4 = a0 + 0.4f, a5 = a0 + 0.5f, a6 = a0 + 0.6f, a7 = a0 + 0.7f;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < 16; ++j) {
            a0 = fmaf(a0, b, c); a1 = fmaf(a1, b, c); a2 = fmaf(a2, b, c); a3 = fmaf(a3, b, c);
            a4 = fmaf(a4, b, c); a5 = fmaf(a5, b, c); a6 = fmaf(a6, b, c); a7 = fmaf(a7, b, c);
        }
    }
    out[(unsigned long long)blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}

extern "C" __global__ void empty_kernel() {}
"#;

/// Floating-point operations per thread per `fma_peak` iteration.
pub(crate) const FMA_FLOP_PER_ITER: f64 = 256.0;
/// Threads per block for the compiled kernels.
const BLOCK: u32 = 256;

/// Compiles `SOURCE` for this GPU (or, when NVRTC does not know its architecture, for NVRTC's
/// default, which the driver then compiles further) and loads it.
fn module(gpu: &mut Gpu) -> Result<Arc<CudaModule>, Failure> {
    nvrtc_library()?;
    gpu.info.nvrtc_version = nvrtc_version();
    let arch = gpu.info.compute_capability.map(|cc| format!("--gpu-architecture=compute_{}{}", cc.major, cc.minor));
    let compile = |options: Vec<String>| {
        compile_ptx_with_opts(
            SOURCE,
            CompileOptions { options, name: Some("gpu_doctor.cu".into()), ..Default::default() },
        )
    };
    let ptx = match arch {
        Some(a) => compile(vec![a]).or_else(|_| compile(Vec::new())),
        None => compile(Vec::new()),
    }
    .map_err(|e| Failure::new(FailureKind::CudaError, format!("NVRTC could not compile the benchmark kernels: {e}")))?;
    gpu.ctx.load_module(ptx).map_err(|e| cuda_failure(e, "loading the compiled kernels (cuModuleLoadData)"))
}

fn function(module: &Arc<CudaModule>, name: &str) -> Result<CudaFunction, Failure> {
    module.load_function(name).map_err(|e| cuda_failure(e, &format!("finding kernel {name}")))
}

/// NVRTC's version, e.g. `12.8`.
fn nvrtc_version() -> Option<String> {
    let (mut major, mut minor): (c_int, c_int) = (0, 0);
    // SAFETY: nvrtcVersion writes two ints through pointers to live locals.
    #[allow(unsafe_code)]
    let r = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&raw mut major, &raw mut minor) };
    (r == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS).then(|| format!("{major}.{minor}"))
}

/// Blocks that fill every SM once for `f`, from the occupancy calculator (4 per SM if it fails).
fn full_grid(gpu: &Gpu, f: &CudaFunction) -> u32 {
    let per_sm = f.occupancy_max_active_blocks_per_multiprocessor(BLOCK, 0, None).unwrap_or(4).max(1);
    gpu.info.sm_count.unwrap_or(16).saturating_mul(per_sm)
}

/// The copy kernel, loaded.
pub(crate) struct CopyKernel {
    func: CudaFunction,
    grid: u32,
}

impl CopyKernel {
    /// Compiles and loads it.
    pub fn load(gpu: &mut Gpu) -> Result<Self, Failure> {
        let m = module(gpu)?;
        let func = function(&m, "copy16")?;
        let grid = full_grid(gpu, &func);
        Ok(Self { func, grid })
    }

    /// Enqueues a copy of `bytes` (a multiple of 16) from `src` to `dst` on the test stream.
    pub fn launch(&self, gpu: &Gpu, src: &DeviceBuffer, dst: &DeviceBuffer, bytes: usize) -> Result<(), Failure> {
        assert!(bytes <= src.bytes() && bytes <= dst.bytes(), "copy larger than its buffers");
        let words = (bytes / 16) as u64;
        let (s, d) = (src.ptr(), dst.ptr());
        let cfg = LaunchConfig { grid_dim: (self.grid, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 };
        let mut b = gpu.stream.launch_builder(&self.func);
        b.arg(&s).arg(&d).arg(&words);
        // SAFETY: copy16 takes (const V4*, V4*, unsigned long long); both pointers hold at least
        // `words` × 16 bytes (asserted above) and live until the caller synchronizes.
        #[allow(unsafe_code)]
        unsafe { b.launch(cfg) }.map(|_| ()).map_err(|e| cuda_failure(e, "launching the copy kernel"))
    }
}

/// FP32 FMA throughput: a calibration launch picks the iteration count for about 50 ms per launch.
pub(crate) fn fma(gpu: &mut Gpu, plan: &BenchPlan, emit: Emit<'_>) -> Result<TestResult, Failure> {
    let test = TestKind::Fma;
    let m = module(gpu)?;
    let func = function(&m, "fma_peak")?;
    let grid = full_grid(gpu, &func);
    let threads = u64::from(grid) * u64::from(BLOCK);
    let out = DeviceBuffer::new(usize::try_from(threads * 4).unwrap_or(usize::MAX))?;
    let out_ptr = out.ptr();
    let (b, c) = (0.999_f32, 0.001_f32);
    let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 };
    let launch = |iters: c_int| -> Result<(), Failure> {
        let mut l = gpu.stream.launch_builder(&func);
        l.arg(&out_ptr).arg(&b).arg(&c).arg(&iters);
        // SAFETY: fma_peak takes (float*, float, float, int); `out` holds one float per thread of
        // the grid and lives until the timer synchronizes.
        #[allow(unsafe_code)]
        unsafe { l.launch(cfg) }.map(|_| ()).map_err(|e| cuda_failure(e, "launching the FMA kernel"))
    };
    let timer = Timer::new(gpu)?;
    let probe_iters: c_int = 1024;
    let probe_secs = timer.time(&gpu.stream, || launch(probe_iters))?.max(1e-6);
    #[expect(clippy::cast_possible_truncation, reason = "clamped to 1024..=1e7")]
    let iters = ((0.05 / probe_secs) * f64::from(probe_iters)).clamp(1024.0, 1e7) as c_int;
    emit(BenchEvent::Progress { test, done: 1, total: 2, what: format!("calibrated: {iters} iterations") });
    let times = time_reps(gpu, plan.warmup, plan.repetitions.clamp(3, 20), || launch(iters))?;
    let flop = threads as f64 * f64::from(iters) * FMA_FLOP_PER_ITER;
    let mut result = TestResult::default();
    if let Some(t) = Stats::from_samples(&times) {
        let tflops = t.map_decreasing(|secs| flop / secs / 1e12);
        emit(BenchEvent::Sample {
            test,
            point: Point {
                series: "FP32 FMA".into(),
                x: f64::from(iters),
                x_unit: Unit::Count,
                value: tflops,
                unit: Unit::TflopPerS,
                time_us: Some(t.scale(1e6)),
            },
        });
        result.measurements.push(Measurement::median(
            Metric::FmaPeak,
            format!("FP32 FMA, {grid} blocks × {BLOCK} threads"),
            tflops,
            Unit::TflopPerS,
        ));
    }
    emit(BenchEvent::Progress { test, done: 2, total: 2, what: "measured".into() });
    Ok(result)
}

/// Launch latency: an empty kernel launched and waited for (host clock), and launched back to back
/// (GPU events).
pub(crate) fn latency(gpu: &mut Gpu, plan: &BenchPlan, emit: Emit<'_>) -> Result<TestResult, Failure> {
    let test = TestKind::Latency;
    let m = module(gpu)?;
    let func = function(&m, "empty_kernel")?;
    let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
    let launch = || -> Result<(), Failure> {
        let mut l = gpu.stream.launch_builder(&func);
        // SAFETY: empty_kernel takes no arguments and touches no memory.
        #[allow(unsafe_code)]
        unsafe { l.launch(cfg) }.map(|_| ()).map_err(|e| cuda_failure(e, "launching the empty kernel"))
    };
    let sync = || gpu.stream.synchronize().map_err(|e| cuda_failure(e, "synchronizing"));
    let rounds = if plan.quick { 200 } else { 2000 };
    for _ in 0..plan.warmup.max(1) * 10 {
        launch()?;
        sync()?;
    }
    let mut round_trips = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        launch()?;
        sync()?;
        round_trips.push(t.elapsed().as_secs_f64() * 1e6);
    }
    emit(BenchEvent::Progress { test, done: 1, total: 2, what: "launch + synchronize".into() });

    let burst: u32 = 1000;
    let timer = Timer::new(gpu)?;
    let intervals = (0..plan.repetitions.clamp(3, 20))
        .map(|_| {
            timer.time(&gpu.stream, || (0..burst).try_for_each(|_| launch())).map(|secs| secs * 1e6 / f64::from(burst))
        })
        .collect::<Result<Vec<f64>, Failure>>()?;
    emit(BenchEvent::Progress { test, done: 2, total: 2, what: "back-to-back launches".into() });

    let mut result = TestResult::default();
    for (values, metric, series, label) in [
        (&round_trips, Metric::LaunchLatency, "launch + synchronize", "empty kernel, launch and wait (host clock)"),
        (&intervals, Metric::LaunchInterval, "back to back", "empty kernel, 1000 launches back to back (GPU events)"),
    ] {
        if let Some(s) = Stats::from_samples(values) {
            emit(BenchEvent::Sample {
                test,
                point: Point {
                    series: series.into(),
                    x: 0.0,
                    x_unit: Unit::Count,
                    value: s,
                    unit: Unit::Micros,
                    time_us: None,
                },
            });
            result.measurements.push(Measurement {
                metric,
                label: label.into(),
                value: s.median,
                unit: Unit::Micros,
                stats: Some(s),
            });
        }
    }
    Ok(result)
}
