//! Kernels compiled at run time with NVRTC: a 16-byte copy, an FMA-throughput loop and an empty
//! kernel for launch latency. Without NVRTC these report why and the other tests still run.

use std::ffi::c_int;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaFunction, CudaModule, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::result as nvrtc_result;
use cudarc::nvrtc::{CompileOptions, Ptx, compile_ptx_with_opts};
use gpu_doctor_model::{ComputeCapability, CudaVersion};

use super::{DeviceBuffer, Emit, Enqueue, Gpu, Timer, cuda_failure, nvrtc_library, time_reps, warm_up};
use gpu_doctor_model::bench::plan::{BenchPlan, TestKind};
use gpu_doctor_model::bench::protocol::{BenchEvent, Failure, FailureKind, Measurement, Metric, Point, TestResult};
use gpu_doctor_model::bench::stats::Stats;
use gpu_doctor_model::bench::unit::Unit;

/// The CUDA C++ source of every run-time kernel.
pub(crate) const SOURCE: &str = r#"
struct alignas(16) V4 { unsigned int x, y, z, w; };

// Copy of n 16-byte words, one per thread where the grid covers them all (launched so: on an H200,
// 2026-11-30, that reached the driver's memcpy, 4286 against 4266 GB/s, where a grid filling each
// SM once reached 3930); the stride loop covers a grid cut at its limit.
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

/// The kernels in `SOURCE`, by the names they are loaded with.
pub(crate) const COPY_KERNEL: &str = "copy16";
pub(crate) const FMA_KERNEL: &str = "fma_peak";
pub(crate) const EMPTY_KERNEL: &str = "empty_kernel";
/// Every entry point of `SOURCE`; the NVRTC check (tests below) finds each one in the PTX.
#[cfg(test)]
pub(crate) const ENTRY_POINTS: [&str; 3] = [COPY_KERNEL, FMA_KERNEL, EMPTY_KERNEL];

/// Why a driver refuses PTX (`CUDA_ERROR_UNSUPPORTED_PTX_VERSION`, 222), in plain words.
pub(crate) const PTX_TOO_NEW: &str = "; the kernels were compiled to PTX by an NVRTC newer than this driver: a driver \
     compiles PTX only from its own CUDA version or older. Update the NVIDIA driver, or put an NVRTC no newer than the \
     driver's CUDA version (nvidia-smi shows it) first on the library path";

/// What NVRTC writes for the driver to load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// Machine code for exactly this architecture (`sm_XY`).
    Cubin(ComputeCapability),
    /// PTX for `compute_XY`, or NVRTC's default architecture, which the driver compiles further.
    Ptx(Option<ComputeCapability>),
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Cubin(cc) => write!(f, "CUBIN for {}", cc.sm()),
            Self::Ptx(Some(cc)) => write!(f, "PTX for compute_{}{}", cc.major, cc.minor),
            Self::Ptx(None) => f.write_str("PTX for NVRTC's default architecture"),
        }
    }
}

/// Whether a driver of CUDA version `driver` loads PTX that NVRTC `nvrtc` wrote: only when NVRTC
/// is no newer (by major.minor; NVRTC 12.8 writes PTX ISA 8.7, which a 535 driver, CUDA 12.2,
/// refuses with error 222). Unknown versions are given the benefit of the doubt.
pub(crate) fn ptx_loads(nvrtc: Option<CudaVersion>, driver: Option<CudaVersion>) -> bool {
    match (nvrtc, driver) {
        (Some(n), Some(d)) => n.major_minor() <= d.major_minor(),
        _ => true,
    }
}

/// Whether a driver of CUDA version `driver` loads a CUBIN that NVRTC `nvrtc` wrote: any driver of
/// NVRTC's major or newer (CUDA's minor-version compatibility covers machine code, not PTX).
pub(crate) fn cubin_loads(nvrtc: Option<CudaVersion>, driver: Option<CudaVersion>) -> bool {
    match (nvrtc, driver) {
        (Some(n), Some(d)) => n.major <= d.major,
        _ => true,
    }
}

/// What to ask NVRTC for, in the order to try, for a GPU of capability `cc`: a CUBIN for the GPU's
/// own architecture, then PTX for it, then PTX for NVRTC's default (an NVRTC too old to know the
/// GPU); each only where the driver would load it.
pub(crate) fn targets(
    nvrtc: Option<CudaVersion>,
    driver: Option<CudaVersion>,
    cc: Option<ComputeCapability>,
) -> Vec<Target> {
    let mut out = Vec::new();
    if let Some(cc) = cc
        && cubin_loads(nvrtc, driver)
    {
        out.push(Target::Cubin(cc));
    }
    if ptx_loads(nvrtc, driver) {
        out.extend(cc.map(|cc| Target::Ptx(Some(cc))));
        out.push(Target::Ptx(None));
    }
    out
}

/// Why `targets` left out CUBINs or PTX for this NVRTC and driver, with what to do about it.
fn not_tried(nvrtc: Option<CudaVersion>, driver: Option<CudaVersion>) -> Vec<String> {
    let (Some(n), Some(d)) = (nvrtc, driver) else { return Vec::new() };
    let mut out = Vec::new();
    if !cubin_loads(nvrtc, driver) {
        out.push(format!(
            "no CUBIN was tried: NVRTC {n} is of a newer CUDA major than this driver (CUDA {d}), which loads none of \
             its output"
        ));
    }
    if !ptx_loads(nvrtc, driver) {
        out.push(format!(
            "PTX was not tried: NVRTC {n} writes PTX that this driver (CUDA {d}) refuses, since a driver compiles PTX \
             only from its own CUDA version or older; update the NVIDIA driver, or put an NVRTC no newer than CUDA {d} \
             first on the library path"
        ));
    }
    out
}

/// Compiles `SOURCE` for `target`: the CUBIN, or the PTX text with its closing NUL, either of
/// which `cuModuleLoadData` takes.
pub(crate) fn compile(target: Target) -> Result<Vec<u8>, Failure> {
    nvrtc_library()?;
    let failed = |e: String| {
        Failure::new(FailureKind::CudaError, format!("NVRTC could not compile the benchmark kernels ({target}): {e}"))
    };
    match target {
        // cudarc panics on a missing symbol: nvrtcGetCUBIN is there from NVRTC 11.1 on.
        Target::Cubin(cc) => std::panic::catch_unwind(|| cubin(&format!("--gpu-architecture={}", cc.sm())))
            .unwrap_or_else(|_| Err("this NVRTC has no nvrtcGetCUBIN (it is older than 11.1)".to_owned()))
            .map_err(failed),
        Target::Ptx(arch) => {
            let options = arch.map(|cc| format!("--gpu-architecture=compute_{}{}", cc.major, cc.minor));
            let ptx = compile_ptx_with_opts(
                SOURCE,
                CompileOptions {
                    options: options.into_iter().collect(),
                    name: Some("gpu_doctor.cu".into()),
                    ..Default::default()
                },
            )
            .map_err(|e| failed(e.to_string()))?;
            ptx.as_bytes().map(<[u8]>::to_vec).ok_or_else(|| failed("NVRTC returned no PTX".to_owned()))
        }
    }
}

/// An NVRTC program, destroyed on drop.
struct Program(cudarc::nvrtc::sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the program came from nvrtcCreateProgram and is destroyed only here.
        #[allow(unsafe_code)]
        let _ = unsafe { nvrtc_result::destroy_program(self.0) };
    }
}

/// Compiles `SOURCE` with `option` (a real architecture) and returns the CUBIN (`nvrtcGetCUBIN`).
fn cubin(option: &str) -> Result<Vec<u8>, String> {
    use cudarc::nvrtc::sys::{nvrtcGetCUBIN, nvrtcGetCUBINSize};
    let src = std::ffi::CString::new(SOURCE).map_err(|e| e.to_string())?;
    let prog = Program(nvrtc_result::create_program(&src, Some(c"gpu_doctor.cu")).map_err(|e| format!("{e:?}"))?);
    // SAFETY: `prog.0` is a live program from create_program (destroyed when `prog` drops).
    #[allow(unsafe_code)]
    if let Err(e) = unsafe { nvrtc_result::compile_program(prog.0, &[option]) } {
        // SAFETY: as above.
        #[allow(unsafe_code)]
        let log = unsafe { nvrtc_result::get_program_log(prog.0) }.unwrap_or_default();
        let log: Vec<u8> = log.iter().map(|c| u8::from_ne_bytes(c.to_ne_bytes())).take_while(|&b| b != 0).collect();
        return Err(format!("{e:?} {}", String::from_utf8_lossy(&log).trim()));
    }
    let mut size = 0usize;
    // SAFETY: as above; `size` is a live local for the one value written.
    #[allow(unsafe_code)]
    unsafe { nvrtcGetCUBINSize(prog.0, &raw mut size) }.result().map_err(|e| format!("{e:?}"))?;
    let mut image = vec![0u8; size];
    // SAFETY: as above; `image` holds the `size` bytes nvrtcGetCUBINSize asked for.
    #[allow(unsafe_code)]
    unsafe { nvrtcGetCUBIN(prog.0, image.as_mut_ptr().cast()) }.result().map_err(|e| format!("{e:?}"))?;
    Ok(image)
}

/// Compiles `SOURCE` for this GPU and loads it, once per run: each of `targets` in turn until one
/// compiles and loads (a load can fail where the compile did not: PTX newer than the driver, error
/// 222). The loaded module is kept on `gpu` for the tests after the first.
fn module(gpu: &mut Gpu) -> Result<Arc<CudaModule>, Failure> {
    if let Some(m) = &gpu.kernels {
        return Ok(Arc::clone(m));
    }
    let m = compile_and_load(gpu)?;
    gpu.kernels = Some(Arc::clone(&m));
    Ok(m)
}

fn compile_and_load(gpu: &mut Gpu) -> Result<Arc<CudaModule>, Failure> {
    nvrtc_library()?;
    let nvrtc = nvrtc_version();
    gpu.info.nvrtc_version = nvrtc.map(|v| v.to_string());
    let driver = gpu.info.driver_cuda_version;
    let mut tried = Vec::new();
    for target in targets(nvrtc, driver, gpu.info.compute_capability) {
        let image = match compile(target) {
            Ok(image) => image,
            Err(f) => {
                tried.push(f.reason);
                continue;
            }
        };
        match gpu.ctx.load_module(Ptx::from_binary(image)) {
            Ok(m) => return Ok(m),
            Err(e) => {
                let f = cuda_failure(e, &format!("loading the kernels compiled as {target} (cuModuleLoadData)"));
                if f.kind == FailureKind::ContextLost {
                    return Err(f);
                }
                tried.push(f.reason);
            }
        }
    }
    tried.extend(not_tried(nvrtc, driver));
    Err(Failure::new(FailureKind::CudaError, tried.join("; ")))
}

fn function(module: &Arc<CudaModule>, name: &str) -> Result<CudaFunction, Failure> {
    module.load_function(name).map_err(|e| cuda_failure(e, &format!("finding kernel {name}")))
}

/// NVRTC's version, e.g. `12.8`.
fn nvrtc_version() -> Option<CudaVersion> {
    let (mut major, mut minor): (c_int, c_int) = (0, 0);
    // SAFETY: nvrtcVersion writes two ints through pointers to live locals.
    #[allow(unsafe_code)]
    let r = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&raw mut major, &raw mut minor) };
    if r != cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
        return None;
    }
    Some(CudaVersion::new(u32::try_from(major).ok()?, u32::try_from(minor).ok()?))
}

/// Blocks that fill every SM once for `f`, from the occupancy calculator (4 per SM if it fails).
fn full_grid(gpu: &Gpu, f: &CudaFunction) -> u32 {
    let per_sm = f.occupancy_max_active_blocks_per_multiprocessor(BLOCK, 0, None).unwrap_or(4).max(1);
    gpu.info.sm_count.unwrap_or(16).saturating_mul(per_sm)
}

/// The copy kernel, loaded.
pub(crate) struct CopyKernel {
    func: CudaFunction,
}

impl CopyKernel {
    /// Compiles and loads it.
    pub fn load(gpu: &mut Gpu) -> Result<Self, Failure> {
        let m = module(gpu)?;
        Ok(Self { func: function(&m, COPY_KERNEL)? })
    }

    /// Enqueues a copy of `bytes` (a multiple of 16) from `src` to `dst` on the test stream: a
    /// thread per 16-byte word ([`copy_grid`]).
    pub fn launch(&self, gpu: &Gpu, src: &DeviceBuffer, dst: &DeviceBuffer, bytes: usize) -> Result<(), Failure> {
        assert!(bytes <= src.bytes() && bytes <= dst.bytes(), "copy larger than its buffers");
        let words = (bytes / 16) as u64;
        let (s, d) = (src.ptr(), dst.ptr());
        let cfg = LaunchConfig { grid_dim: (copy_grid(words), 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 };
        let mut b = gpu.stream.launch_builder(&self.func);
        b.arg(&s).arg(&d).arg(&words);
        // SAFETY: copy16 takes (const V4*, V4*, unsigned long long); both pointers hold at least
        // `words` × 16 bytes (asserted above) and live until the caller synchronizes.
        #[allow(unsafe_code)]
        unsafe { b.launch(cfg) }.map(|_| ()).map_err(|e| cuda_failure(e, "launching the copy kernel"))
    }
}

/// Blocks of [`BLOCK`] threads for a thread per word of `words`, at least one, cut at CUDA's
/// largest x dimension of a grid (2³¹ − 1), past which the kernel's stride loop copies the rest.
fn copy_grid(words: u64) -> u32 {
    const MAX_GRID_X: u64 = (1 << 31) - 1;
    u32::try_from(words.div_ceil(u64::from(BLOCK)).clamp(1, MAX_GRID_X)).unwrap_or(u32::MAX >> 1)
}

/// FP32 FMA throughput: a calibration launch picks the iteration count for about 50 ms per launch.
pub(crate) fn fma(gpu: &mut Gpu, plan: &BenchPlan, emit: Emit<'_>) -> Result<TestResult, Failure> {
    let test = TestKind::Fma;
    let m = module(gpu)?;
    let func = function(&m, FMA_KERNEL)?;
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
    // Calibrated at idle clocks, the launches would run far longer than planned.
    warm_up(gpu, || launch(probe_iters))?;
    let probe_secs = timer.time(&gpu.stream, || launch(probe_iters))?.max(1e-6);
    #[expect(clippy::cast_possible_truncation, reason = "clamped to 1024..=1e7")]
    let iters = ((0.05 / probe_secs) * f64::from(probe_iters)).clamp(1024.0, 1e7) as c_int;
    emit(BenchEvent::Progress { test, done: 1, total: 2, what: format!("calibrated: {iters} iterations") });
    let times = time_reps(gpu, Enqueue::Held, plan.warmup, plan.repetitions.clamp(3, 20), || launch(iters))?;
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

/// Launch latency: an empty kernel launched and waited for (host clock), and the host's launch rate:
/// 1000 launches in a row between two GPU events. Those events are not behind the stream hold, and
/// an empty kernel ends before the next launch arrives, so their window is the host's time to issue
/// the launches, not a gap between kernels on the GPU; the label says so (`launch_results`).
pub(crate) fn latency(gpu: &mut Gpu, plan: &BenchPlan, emit: Emit<'_>) -> Result<TestResult, Failure> {
    let test = TestKind::Latency;
    let m = module(gpu)?;
    let func = function(&m, EMPTY_KERNEL)?;
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
    emit(BenchEvent::Progress { test, done: 2, total: 2, what: "the host's launch rate".into() });

    let (points, result) = launch_results(&round_trips, &intervals, burst);
    for point in points {
        emit(BenchEvent::Sample { test, point });
    }
    Ok(result)
}

/// The launch test's chart points and measurements from its launch-and-wait round trips and its
/// per-launch times over bursts of `burst` launches (µs each), named for what they measure.
fn launch_results(round_trips: &[f64], per_launch: &[f64], burst: u32) -> (Vec<Point>, TestResult) {
    let mut points = Vec::new();
    let mut result = TestResult::default();
    for (values, metric, series, label) in [
        (
            round_trips,
            Metric::LaunchLatency,
            "launch + synchronize".to_owned(),
            "empty kernel, launch and wait (host clock)".to_owned(),
        ),
        (
            per_launch,
            Metric::LaunchInterval,
            "host launch rate".to_owned(),
            format!(
                "empty kernel, the host's time per launch over {burst} in a row (GPU events around them, not \
                 held: not a gap between kernels on the GPU)"
            ),
        ),
    ] {
        if let Some(s) = Stats::from_samples(values) {
            let unit = Unit::Micros;
            points.push(Point { series, x: 0.0, x_unit: Unit::Count, value: s, unit, time_us: None });
            result.measurements.push(Measurement { metric, label, value: s.median, unit, stats: Some(s) });
        }
    }
    (points, result)
}

/// NVRTC needs no driver and no GPU, so these run on every machine with NVIDIA's pip wheels:
/// `.ci/run` installs `nvidia-cuda-nvrtc` and `nvidia-cublas` into a folder and names it in
/// `GPU_DOCTOR_CUDA_WHEELS`. The parent test finds the libraries there with the worker's own code
/// (`libs::wheel_lib_dirs`, `PreparedLibraries`: the private folder of `libnvrtc.so` /
/// `libcublas.so` links and the search path), then runs the child test in a fresh process with that
/// `LD_LIBRARY_PATH`, as the runner starts the worker, since the loader reads it only at start.
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use std::io::Read;
    use std::path::Path;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use gpu_doctor_probes::host::process;

    use super::*;
    use crate::gpu::cublas_library;
    use crate::libs::{PreparedLibraries, wheel_lib_dirs};

    const WHEELS: &str = "GPU_DOCTOR_CUDA_WHEELS";
    const CHILD: &str = "GPU_DOCTOR_NVRTC_CHILD";
    const CHILD_TEST: &str = "gpu::compiled::tests::child_compiles_every_entry_point";
    const CHILD_OK: &str = "nvrtc check passed:";
    const CHILD_LIMIT: Duration = Duration::from_secs(180);

    /// Reads all of `pipe` on a thread named `name`.
    fn read_all(name: &str, mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
        std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                let mut s = String::new();
                let _ = pipe.read_to_string(&mut s);
                s
            })
            .unwrap()
    }

    const fn cuda(major: u32, minor: u32) -> Option<CudaVersion> {
        Some(CudaVersion::new(major, minor))
    }

    #[test]
    fn the_copy_grid_has_a_thread_per_word_up_to_cuda_s_limit() {
        assert_eq!(copy_grid((1 << 30) / 16), 262_144, "1 GiB of 16-byte words in blocks of 256");
        assert_eq!(copy_grid(0), 1);
        assert_eq!(copy_grid(257), 2);
        assert_eq!(copy_grid(u64::MAX), (1 << 31) - 1, "the stride loop copies past the largest grid");
    }

    #[test]
    fn a_535_driver_gets_a_cubin_where_the_ptx_of_nvrtc_12_8_would_be_refused() {
        let h100 = ComputeCapability { major: 9, minor: 0 };
        // Driver 535 supports CUDA 12.2; NVRTC 12.8 writes PTX ISA 8.7, which it refuses (222).
        assert!(!ptx_loads(cuda(12, 8), cuda(12, 2)));
        assert!(cubin_loads(cuda(12, 8), cuda(12, 2)));
        assert_eq!(targets(cuda(12, 8), cuda(12, 2), Some(h100)), [Target::Cubin(h100)]);
        // An NVRTC no newer than the driver may also write PTX, the fallback for an architecture
        // it does not know.
        for (nvrtc, driver) in [(cuda(12, 2), cuda(12, 2)), (cuda(12, 8), cuda(12, 8)), (cuda(12, 4), cuda(13, 0))] {
            assert_eq!(
                targets(nvrtc, driver, Some(h100)),
                [Target::Cubin(h100), Target::Ptx(Some(h100)), Target::Ptx(None)],
                "{nvrtc:?} on {driver:?}"
            );
        }
        assert_eq!(targets(cuda(12, 2), cuda(12, 2), None), [Target::Ptx(None)]);
        assert_eq!(targets(None, None, None), [Target::Ptx(None)]);
        // Another major: not even a CUBIN loads.
        assert!(targets(cuda(13, 0), cuda(12, 9), Some(h100)).is_empty());
        assert_eq!(Target::Cubin(h100).to_string(), "CUBIN for sm_90");
        // What the failure says when the CUBIN did not work either.
        let why = not_tried(cuda(12, 8), cuda(12, 2));
        assert!(
            matches!(&why[..], [ptx] if ptx.starts_with("PTX was not tried: NVRTC 12.8 writes PTX that this driver (CUDA 12.2) refuses")),
            "{why:?}"
        );
        assert_eq!(not_tried(cuda(13, 0), cuda(12, 9)).len(), 2);
        assert!(not_tried(cuda(12, 2), cuda(12, 8)).is_empty());
    }

    /// The burst of launches is timed with GPU events but not behind the stream hold, so what it
    /// gives is the host's time per launch: the label and the chart's series say that, not "GPU
    /// events" alone as if the GPU's gap between kernels had been measured.
    #[test]
    fn the_launch_burst_is_named_the_hosts_launch_rate() {
        let (points, result) = launch_results(&[8.0, 9.0, 10.0], &[3.0, 3.5, 4.0], 1000);
        let series: Vec<&str> = points.iter().map(|p| p.series.as_str()).collect();
        assert_eq!(series, ["launch + synchronize", "host launch rate"]);
        let [latency, rate] = &result.measurements[..] else { panic!("{result:?}") };
        assert_eq!((latency.metric, latency.value), (Metric::LaunchLatency, 9.0));
        assert_eq!(latency.label, "empty kernel, launch and wait (host clock)");
        assert_eq!((rate.metric, rate.value, rate.unit), (Metric::LaunchInterval, 3.5, Unit::Micros));
        assert_eq!(
            rate.label,
            "empty kernel, the host's time per launch over 1000 in a row (GPU events around them, not held: not a \
             gap between kernels on the GPU)"
        );
        assert!(launch_results(&[], &[], 1000).1.measurements.is_empty());
    }

    #[test]
    fn entry_points_name_every_kernel_in_the_source() {
        let mut in_source: Vec<&str> = SOURCE
            .split("extern \"C\" __global__ void ")
            .skip(1)
            .map(|rest| rest.split('(').next().unwrap().trim())
            .collect();
        in_source.sort_unstable();
        let mut listed = ENTRY_POINTS.to_vec();
        listed.sort_unstable();
        assert_eq!(in_source, listed);
    }

    #[test]
    fn kernel_source_compiles_with_the_nvrtc_wheel() {
        let Some(dir) = std::env::var_os(WHEELS).filter(|v| !v.is_empty()) else {
            let why = format!(
                "{WHEELS} is not set: install the wheels with `pip install --target DIR nvidia-cuda-nvrtc \
                 nvidia-cublas` and set {WHEELS}=DIR (.ci/run does)"
            );
            assert!(std::env::var("CI").as_deref() != Ok("true"), "CI must run the NVRTC check: {why}");
            eprintln!("SKIPPED kernel_source_compiles_with_the_nvrtc_wheel: {why}");
            return;
        };
        let libs = PreparedLibraries::from_dirs(wheel_lib_dirs(Path::new(&dir)), None);
        let linked: Vec<&str> = libs.plan.links.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(linked, ["libcublas.so", "libnvrtc.so"], "in {}: {:?}", Path::new(&dir).display(), libs.plan.notes);
        let search_path = libs.search_path(None).unwrap();

        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args(["--exact", CHILD_TEST, "--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .env("LD_LIBRARY_PATH", &search_path)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut group = process::spawn(&mut command).unwrap();
        let child = group.child();
        let out = read_all("nvrtc-child-stdout", child.stdout.take().unwrap());
        let err = read_all("nvrtc-child-stderr", child.stderr.take().unwrap());
        let started = Instant::now();
        let status = group.wait_or_kill(CHILD_LIMIT).unwrap();
        assert!(started.elapsed() < CHILD_LIMIT, "the NVRTC child did not finish within {CHILD_LIMIT:?}");
        let (out, err) = (out.join().unwrap(), err.join().unwrap());
        assert!(status.success() && out.contains(CHILD_OK), "{status}\n{out}\n{err}\nnotes: {:?}", libs.plan.notes);
        let line = out.lines().find(|l| l.contains(CHILD_OK)).unwrap_or_default();
        eprintln!("{line} (libraries: {})", libs.plan.notes.join("; "));
    }

    /// Runs only as the child of the test above (it returns at once otherwise).
    #[test]
    fn child_compiles_every_entry_point() {
        if std::env::var_os(CHILD).is_none() {
            return;
        }
        cublas_library().unwrap();
        let mut cublas = [0; 3];
        for (prop, v) in [
            cudarc::cublas::sys::libraryPropertyType::MAJOR_VERSION,
            cudarc::cublas::sys::libraryPropertyType::MINOR_VERSION,
            cudarc::cublas::sys::libraryPropertyType::PATCH_LEVEL,
        ]
        .into_iter()
        .zip(cublas.iter_mut())
        {
            // SAFETY: cublasGetProperty writes one int through a pointer to a live local; it needs
            // no handle and no GPU.
            #[allow(unsafe_code)]
            let r = unsafe { cudarc::cublas::sys::cublasGetProperty(prop, v) };
            assert_eq!(r, cudarc::cublas::sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS);
        }
        assert!(cublas[0] >= 12, "cuBLAS {cublas:?}");
        let nvrtc = nvrtc_version().expect("NVRTC loaded but nvrtcVersion failed");
        // No architecture (NVRTC's default), and the data-centre GPUs the benchmarks target, as PTX
        // and as CUBINs (which need no driver to compile).
        let cc = |major, minor| ComputeCapability { major, minor };
        for target in [
            Target::Ptx(None),
            Target::Ptx(Some(cc(8, 0))),
            Target::Ptx(Some(cc(9, 0))),
            Target::Cubin(cc(8, 0)),
            Target::Cubin(cc(9, 0)),
        ] {
            let image = compile(target).unwrap();
            let text = String::from_utf8_lossy(&image);
            match target {
                Target::Ptx(arch) => {
                    if let Some(cc) = arch {
                        assert!(text.contains(&format!(".target {}", cc.sm())), "{target} was not honoured:\n{text}");
                    }
                    for name in ENTRY_POINTS {
                        assert!(text.contains(&format!(".entry {name}(")), "{name} is not in the {target}:\n{text}");
                    }
                }
                Target::Cubin(_) => {
                    assert!(image.starts_with(b"\x7fELF"), "{target} is not an ELF image");
                    for name in ENTRY_POINTS {
                        assert!(text.contains(name), "{name} is not in the {target}");
                    }
                }
            }
        }
        println!(
            "{CHILD_OK} NVRTC {nvrtc} compiled {} to PTX for the default, compute_80 and compute_90 and to CUBINs for sm_80 and sm_90; cuBLAS {}.{}.{} loaded",
            ENTRY_POINTS.join(", "),
            cublas[0],
            cublas[1],
            cublas[2]
        );
    }
}
