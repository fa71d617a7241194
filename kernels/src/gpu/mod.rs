//! The CUDA side of the benchmarks. Runs only inside the `bench-worker` child process.
//!
//! cudarc loads the CUDA libraries at run time and panics when one or one of its symbols is
//! missing, so every library is checked with its `is_culib_present` before its first use, and the
//! worker runs each test inside `catch_unwind`. Raw driver calls (`result`, `sys`) are used for
//! the timed work so that nothing but the measured operation sits between two events.

#![expect(
    clippy::cast_possible_truncation,
    reason = "CUDA runs on 64-bit hosts only, where its u64 sizes and usize are the same width"
)]

mod buffers;
mod compiled;
mod copies;
mod gemm;
mod hold;
mod memory;
mod peer;
mod sustained;

use std::ffi::c_int;
use std::sync::Arc;

use cudarc::driver::result::DriverError;
use cudarc::driver::sys::{self, CUdevice_attribute as Attr, CUresult};
use cudarc::driver::{CudaContext, CudaEvent, CudaStream};
use gpu_doctor_model::{ComputeCapability, CudaVersion};

use crate::timing::{self, WARMUP_MAX_OPS, WARMUP_MIN, WarmUp};
use gpu_doctor_model::bench::plan::{BenchPlan, TestKind};
use gpu_doctor_model::bench::protocol::{BenchEvent, DeviceInfo, Failure, FailureKind, TestResult};

pub(crate) use buffers::{DeviceBuffer, PinnedBuffer};

/// Sends one event to the parent.
pub(crate) type Emit<'a> = &'a mut dyn FnMut(BenchEvent);

/// An open device: its context, the stream the tests use, and what CUDA said about it.
pub(crate) struct Gpu {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub info: DeviceInfo,
    /// The run-time kernels once compiled and loaded (`compiled::module`), kept for the later tests.
    pub kernels: Option<Arc<cudarc::driver::CudaModule>>,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu").field("info", &self.info).finish_non_exhaustive()
    }
}

/// The library file names cudarc tries for `name` (e.g. `cuda` → `libcuda.so`, `libcuda.so.1`,
/// …), the plain ones first.
fn candidates(name: &str) -> Vec<String> {
    let plain = format!("{}{name}{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX);
    let mut names: Vec<String> =
        cudarc::get_lib_name_candidates(name).into_iter().filter(|n| n.starts_with(&plain)).collect();
    names.dedup();
    names
}

fn loader_path() -> String {
    let var = if cfg!(windows) { "PATH" } else { "LD_LIBRARY_PATH" };
    match std::env::var(var) {
        Ok(v) if !v.is_empty() => format!("{var}={v}"),
        _ => format!("{var} is empty"),
    }
}

fn missing(what: &str, name: &str, hint: &str) -> Failure {
    Failure::new(
        FailureKind::MissingLibrary,
        format!(
            "{what} could not be loaded: none of {} was found on the loader path ({}); {hint}",
            candidates(name).join(", "),
            loader_path()
        ),
    )
}

/// The CUDA driver library (`libcuda.so.1`, `nvcuda.dll`) can be loaded.
pub(crate) fn driver_library() -> Result<(), Failure> {
    // SAFETY: `is_culib_present` only asks the dynamic loader to open and close candidate names.
    #[allow(unsafe_code)]
    let present = unsafe { sys::is_culib_present() };
    if present {
        Ok(())
    } else {
        Err(missing(
            "the CUDA driver library",
            "cuda",
            "it is installed with the NVIDIA driver, so the driver is missing or not on this path",
        ))
    }
}

/// The parent's reason for not loading `wanted` (`libs::refusal`) as the failure of the tests
/// that need it.
fn not_refused(wanted: &crate::libs::Wanted) -> Result<(), Failure> {
    match crate::libs::refusal(wanted) {
        Some(reason) => Err(Failure::new(FailureKind::MissingLibrary, reason)),
        None => Ok(()),
    }
}

/// cuBLAS can be loaded, and the parent did not refuse it (`libs::LibraryPlan::refusals`).
pub(crate) fn cublas_library() -> Result<(), Failure> {
    not_refused(&crate::libs::CUBLAS)?;
    // SAFETY: as for the driver library: open and close only.
    #[allow(unsafe_code)]
    let present = unsafe { cudarc::cublas::sys::is_culib_present() };
    if present {
        Ok(())
    } else {
        Err(missing(
            "cuBLAS",
            "cublas",
            "it comes with a CUDA toolkit or the nvidia-cublas-cu12 / nvidia-cublas pip wheels",
        ))
    }
}

/// NVRTC can be loaded, and the parent did not refuse it.
pub(crate) fn nvrtc_library() -> Result<(), Failure> {
    not_refused(&crate::libs::NVRTC)?;
    // SAFETY: as for the driver library: open and close only.
    #[allow(unsafe_code)]
    let present = unsafe { cudarc::nvrtc::sys::is_culib_present() };
    if present {
        Ok(())
    } else {
        Err(missing(
            "NVRTC, the CUDA runtime compiler,",
            "nvrtc",
            "it comes with a CUDA toolkit or the nvidia-cuda-nvrtc-cu12 / nvidia-cuda-nvrtc pip wheels",
        ))
    }
}

/// The error's name (e.g. `CUDA_ERROR_UNKNOWN`) and CUDA's description of it.
fn error_words(e: &DriverError) -> (String, String) {
    let name = e.error_name().map_or_else(|_| format!("{:?}", e.0), |s| s.to_string_lossy().into_owned());
    let text = e.error_string().map_or_else(|_| String::new(), |s| s.to_string_lossy().into_owned());
    (name, text)
}

/// A plain reason for a failed driver call made while `during`.
pub(crate) fn cuda_failure(e: DriverError, during: &str) -> Failure {
    let (name, text) = error_words(&e);
    explain(e.0, &name, &text, during)
}

/// A plain reason for a driver call that failed while `during` opening the device (`open`).
fn opening_failure(e: DriverError, during: &str) -> Failure {
    let (name, text) = error_words(&e);
    explain_opening(e.0, &name, &text, during)
}

/// Why `CUDA_ERROR_UNKNOWN` comes back before any context exists, most often from cuInit.
const UNKNOWN_WHILE_OPENING: &str = "; before any GPU work this usually means the nvidia-uvm kernel module is \
     not loaded or /dev/nvidia-uvm is missing (sudo modprobe nvidia-uvm; in a container, the NVIDIA container \
     toolkit provides it), the machine was suspended and resumed, or the driver was updated without a reboot; a GPU \
     that fell off the bus answers it too: see the kernel log for an Xid (sudo dmesg | grep -i xid)";

/// As `explain`, for an error while opening the device: no context exists yet, so none was lost,
/// whatever the code (cuInit answers `CUDA_ERROR_UNKNOWN` where nvidia-uvm is missing).
fn explain_opening(code: CUresult, name: &str, text: &str, during: &str) -> Failure {
    if !is_sticky(code) {
        return explain(code, name, text, during);
    }
    let hint = if code == CUresult::CUDA_ERROR_UNKNOWN { UNKNOWN_WHILE_OPENING } else { "" };
    Failure::new(FailureKind::CudaError, format!("{during}: {name} ({text}){hint}"))
}

/// Errors after which the context is unusable: every later call in this process returns the same
/// error ("the process must be terminated and relaunched", CUDA's documentation of each), and
/// `CUDA_ERROR_UNKNOWN`, which is what a GPU that fell off the bus (Xid 79) answers.
pub(crate) fn is_sticky(code: CUresult) -> bool {
    matches!(
        code,
        CUresult::CUDA_ERROR_ECC_UNCORRECTABLE
            | CUresult::CUDA_ERROR_ILLEGAL_ADDRESS
            | CUresult::CUDA_ERROR_LAUNCH_TIMEOUT
            | CUresult::CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUresult::CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUresult::CUDA_ERROR_MISALIGNED_ADDRESS
            | CUresult::CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUresult::CUDA_ERROR_INVALID_PC
            | CUresult::CUDA_ERROR_LAUNCH_FAILED
            | CUresult::CUDA_ERROR_UNKNOWN
    )
}

/// The failure for driver error `code` (named `name`, described `text`) while `during`: its kind
/// and a hint where the error has a plain cause.
fn explain(code: CUresult, name: &str, text: &str, during: &str) -> Failure {
    let (kind, hint) = match code {
        CUresult::CUDA_ERROR_OUT_OF_MEMORY => {
            (FailureKind::OutOfMemory, "; other processes may hold GPU memory (see nvidia-smi)")
        }
        CUresult::CUDA_ERROR_NO_DEVICE | CUresult::CUDA_ERROR_INVALID_DEVICE => {
            (FailureKind::NoDevice, "; check CUDA_VISIBLE_DEVICES and that the driver sees the GPU (nvidia-smi)")
        }
        CUresult::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH => {
            (FailureKind::NoDevice, "; the driver library and the loaded kernel module are different versions")
        }
        CUresult::CUDA_ERROR_STUB_LIBRARY => (
            FailureKind::MissingLibrary,
            "; the libcuda.so found is a CUDA toolkit's stub (lib64/stubs), not the driver's: remove the stubs \
             folder from LD_LIBRARY_PATH",
        ),
        CUresult::CUDA_ERROR_DEVICE_UNAVAILABLE => (
            FailureKind::ComputeMode,
            "; the GPU is in exclusive-process compute mode and another process holds it \
             (nvidia-smi -q -d COMPUTE shows the mode; nvidia-smi -c DEFAULT resets it)",
        ),
        CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION => (FailureKind::CudaError, compiled::PTX_TOO_NEW),
        c if is_sticky(c) => (
            FailureKind::ContextLost,
            "; after this error the GPU context is unusable and every later CUDA call fails the same way, \
             so the remaining tests do not run: see the kernel log for an Xid (sudo dmesg | grep -i xid)",
        ),
        _ => (FailureKind::CudaError, ""),
    };
    Failure::new(kind, format!("{during}: {name} ({text}){hint}"))
}

pub(crate) fn attr(ctx: &CudaContext, a: Attr) -> Option<u32> {
    ctx.attribute(a).ok().and_then(|v| u32::try_from(v).ok())
}

fn compute_mode_name(mode: u32) -> String {
    match mode {
        0 => "default".to_owned(),
        2 => "prohibited".to_owned(),
        3 => "exclusive_process".to_owned(),
        other => format!("mode {other}"),
    }
}

fn driver_cuda_version() -> Option<CudaVersion> {
    let mut v: c_int = 0;
    // SAFETY: cuDriverGetVersion writes one int through the pointer, which points to a live local.
    #[allow(unsafe_code)]
    let r = unsafe { sys::cuDriverGetVersion(&raw mut v) };
    (r == CUresult::CUDA_SUCCESS).then(|| CudaVersion::from_api_int(v)).flatten()
}

/// The CUDA ordinal, among the devices this process sees, of the GPU at PCI bus id `bus`
/// (`cuDeviceGetByPCIBusId`). `nvml_index` is only for the message when CUDA does not see it.
fn ordinal_at_bus(bus: &str, nvml_index: u32) -> Result<u32, Failure> {
    let text = std::ffi::CString::new(bus)
        .map_err(|_| Failure::new(FailureKind::Internal, format!("the PCI bus id {bus:?} holds a NUL byte")))?;
    let mut dev: cudarc::driver::sys::CUdevice = 0;
    // SAFETY: `dev` is a valid place for one CUdevice, `text` is NUL-terminated and outlives the
    // call, and cuInit succeeded above (the function exists in every driver that has cuInit).
    #[allow(unsafe_code)]
    let found = unsafe { cudarc::driver::sys::cuDeviceGetByPCIBusId(&raw mut dev, text.as_ptr()) }.result();
    match found {
        // A CUdevice is the device's ordinal among the visible ones.
        Ok(()) => u32::try_from(dev)
            .map_err(|_| Failure::new(FailureKind::Internal, format!("CUDA named the GPU at {bus} device {dev}"))),
        Err(e) => {
            let visible = std::env::var("CUDA_VISIBLE_DEVICES").ok();
            let mut f = opening_failure(e, "finding the GPU by its PCI bus id");
            f.kind = FailureKind::NoDevice;
            f.reason = match visible {
                Some(v) => format!(
                    "GPU {nvml_index} (PCI {bus}) is not visible to CUDA in this process: CUDA_VISIBLE_DEVICES={v} hides \
                     it (under SLURM or Kubernetes, ask the scheduler for that GPU); {}",
                    f.reason
                ),
                None => format!("GPU {nvml_index} (PCI {bus}) is not visible to CUDA: {}", f.reason),
            };
            Err(f)
        }
    }
}

/// Loads the driver, checks the ordinal and the compute mode, and opens the device's primary
/// context with one stream.
pub(crate) fn open(ordinal: u32, bus_id: Option<&str>) -> Result<Gpu, Failure> {
    driver_library()?;
    cudarc::driver::result::init().map_err(|e| opening_failure(e, "cuInit (starting the CUDA driver)"))?;
    let ordinal = match bus_id {
        Some(bus) => ordinal_at_bus(bus, ordinal)?,
        None => ordinal,
    };
    let count = CudaContext::device_count().map_err(|e| opening_failure(e, "counting CUDA devices"))?;
    if i64::from(ordinal) >= i64::from(count) {
        return Err(Failure::new(
            FailureKind::NoDevice,
            format!("GPU {ordinal} does not exist: CUDA sees {count} device(s) (CUDA_VISIBLE_DEVICES may hide some)"),
        ));
    }
    let index = c_int::try_from(ordinal).unwrap_or(c_int::MAX);
    let dev = cudarc::driver::result::device::get(index).map_err(|e| opening_failure(e, "cuDeviceGet"))?;
    // SAFETY: `dev` is a valid device handle from cuDeviceGet, and the attribute is a plain int.
    #[allow(unsafe_code)]
    let mode = unsafe { cudarc::driver::result::device::get_attribute(dev, Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_MODE) };
    if mode == Ok(2) {
        return Err(Failure::new(
            FailureKind::ComputeMode,
            format!(
                "GPU {ordinal} is in prohibited compute mode: no process may use it for CUDA \
                 (nvidia-smi -i {ordinal} -c DEFAULT allows it again)"
            ),
        ));
    }
    let ctx = CudaContext::new(ordinal as usize).map_err(|e| {
        let mut f = opening_failure(e, "creating a CUDA context");
        if mode == Ok(3) {
            f.kind = FailureKind::ComputeMode;
        }
        f
    })?;
    ready(ctx, ordinal)
}

/// A new context of GPU `ordinal`, before any allocation in it, made ready for the tests: cudarc's
/// event tracking off, a stream, and what CUDA says about the device.
pub(crate) fn ready(ctx: Arc<CudaContext>, ordinal: u32) -> Result<Gpu, Failure> {
    // SAFETY: called before any allocation in this context; the benchmarks order their work on
    // explicit streams and synchronize before reading or freeing buffers, so cudarc's per-buffer
    // event tracking (which would add calls between the timed events) is not needed.
    #[allow(unsafe_code)]
    unsafe {
        ctx.disable_event_tracking();
    }
    let stream = ctx.new_stream().map_err(|e| cuda_failure(e, "creating a CUDA stream"))?;
    let info = device_info(&ctx, ordinal);
    Ok(Gpu { ctx, stream, info, kernels: None })
}

fn device_info(ctx: &CudaContext, ordinal: u32) -> DeviceInfo {
    let cc = ctx.compute_capability().ok().and_then(|(major, minor)| {
        Some(ComputeCapability { major: u32::try_from(major).ok()?, minor: u32::try_from(minor).ok()? })
    });
    let (free, total) = ctx.mem_get_info().map_or((None, None), |(f, t)| (Some(f as u64), Some(t as u64)));
    let pci = (
        attr(ctx, Attr::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
        attr(ctx, Attr::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
        attr(ctx, Attr::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID),
    );
    DeviceInfo {
        ordinal,
        name: ctx.name().ok(),
        compute_capability: cc,
        sm_count: attr(ctx, Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
        clock_sm_max_mhz: attr(ctx, Attr::CU_DEVICE_ATTRIBUTE_CLOCK_RATE).map(|khz| khz / 1000).filter(|m| *m > 0),
        clock_mem_max_mhz: attr(ctx, Attr::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
            .map(|khz| khz / 1000)
            .filter(|m| *m > 0),
        memory_bus_width_bits: attr(ctx, Attr::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH).filter(|b| *b > 0),
        memory_total_bytes: total,
        memory_free_bytes: free,
        compute_mode: attr(ctx, Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_MODE).map(compute_mode_name),
        driver_cuda_version: driver_cuda_version(),
        pci_bus_id: match pci {
            (Some(d), Some(b), Some(dev)) => Some(format!("{d:04x}:{b:02x}:{dev:02x}.0")),
            _ => None,
        },
        cublas_version: None,
        nvrtc_version: None,
    }
}

/// A pair of timing events (created with timing enabled) on one stream, and, where the work
/// allows it, a hold that keeps the stream waiting while the work is enqueued.
pub(crate) struct Timer {
    start: CudaEvent,
    end: CudaEvent,
    hold: Option<hold::StreamHold>,
}

/// How timed work may be enqueued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Enqueue {
    /// Behind a stream hold: the work's enqueuing never waits for the GPU (pinned and device
    /// copies, kernels).
    Held,
    /// Without one: enqueuing can wait for the GPU (pageable copies, library calls).
    Plain,
}

impl Timer {
    /// Two events with timing enabled, without a hold.
    pub fn new(gpu: &Gpu) -> Result<Self, Failure> {
        let make = || {
            gpu.ctx
                .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(|e| cuda_failure(e, "creating a timing event"))
        };
        Ok(Self { start: make()?, end: make()?, hold: None })
    }

    /// Two events, with a hold when `enqueue` allows one and the driver has stream waits.
    pub fn for_work(gpu: &Gpu, enqueue: Enqueue) -> Result<Self, Failure> {
        let mut timer = Self::new(gpu)?;
        if enqueue == Enqueue::Held {
            timer.hold = hold::StreamHold::new(gpu.info.driver_cuda_version)?;
        }
        Ok(timer)
    }

    /// Seconds the GPU spent on what `work` enqueued on `stream`, between two events.
    pub fn time(&self, stream: &CudaStream, work: impl FnOnce() -> Result<(), Failure>) -> Result<f64, Failure> {
        let held = match &self.hold {
            Some(h) if h.hold(stream.cu_stream()) => Some(h),
            _ => None,
        };
        let enqueued = (|| {
            self.start.record(stream).map_err(|e| cuda_failure(e, "recording a timing event"))?;
            work()?;
            self.end.record(stream).map_err(|e| cuda_failure(e, "recording a timing event"))
        })();
        // Released whatever happened, so the stream never waits forever.
        if let Some(h) = held {
            h.release();
        }
        enqueued?;
        let ms = self.start.elapsed_ms(&self.end).map_err(|e| cuda_failure(e, "reading a timing event"))?;
        Ok(f64::from(ms) / 1e3)
    }

    /// The start event, for work spread over two streams.
    pub fn start(&self) -> &CudaEvent {
        &self.start
    }

    /// The end event.
    pub fn end(&self) -> &CudaEvent {
        &self.end
    }
}

/// Runs `work` for at least `WARMUP_MIN` of GPU time (batches enqueued, then waited for), so the
/// clocks have left idle before anything is measured.
pub(crate) fn warm_up(gpu: &Gpu, mut work: impl FnMut() -> Result<(), Failure>) -> Result<WarmUp, Failure> {
    let t0 = std::time::Instant::now();
    timing::warm_up(
        WARMUP_MIN,
        WARMUP_MAX_OPS,
        || t0.elapsed(),
        |k| {
            (0..k).try_for_each(|_| work())?;
            gpu.stream.synchronize().map_err(|e| cuda_failure(e, "synchronizing during the warm-up"))
        },
    )
}

/// Seconds per repetition of `work`, `reps` samples. One untimed run first (kernels that load
/// lazily load then, outside any hold), then `warmup` runs between one pair of events, which say
/// how long one takes; each sample then times as many runs between one pair of events as fill
/// `timing::MIN_WINDOW_SECS`, behind a stream hold when `enqueue` allows.
pub(crate) fn time_reps(
    gpu: &Gpu,
    enqueue: Enqueue,
    warmup: u32,
    reps: u32,
    mut work: impl FnMut() -> Result<(), Failure>,
) -> Result<Vec<f64>, Failure> {
    work()?;
    gpu.stream.synchronize().map_err(|e| cuda_failure(e, "synchronizing after the warm-up"))?;
    let timer = Timer::for_work(gpu, enqueue)?;
    let warmup = warmup.max(1);
    let warm_secs = timer.time(&gpu.stream, || (0..warmup).try_for_each(|_| work()))?;
    let per_window = timing::ops_per_window(Some(warm_secs / f64::from(warmup)));
    (0..reps)
        .map(|_| {
            let secs = timer.time(&gpu.stream, || (0..per_window).try_for_each(|_| work()))?;
            Ok(secs / f64::from(per_window))
        })
        .collect()
}

impl crate::device::TestDevice for Gpu {
    fn info(&self) -> DeviceInfo {
        self.info.clone()
    }

    fn run(&mut self, test: TestKind, plan: &BenchPlan, emit: Emit<'_>) -> Result<TestResult, Failure> {
        run_test(self, test, plan, emit)
    }

    fn check_context(&mut self) -> Result<(), Failure> {
        self.ctx.synchronize().map_err(|e| cuda_failure(e, "checking the GPU context after the failure"))
    }
}

/// The GPU-to-GPU copies in loopback on the plan's GPU (`peer::loopback`), for the GPU
/// verification on a machine with one GPU.
pub(crate) fn p2p_loopback(gpu: &mut Gpu, plan: &BenchPlan, emit: Emit<'_>) -> Result<TestResult, Failure> {
    gpu.ctx.bind_to_thread().map_err(|e| cuda_failure(e, "making the CUDA context current"))?;
    peer::loopback(gpu, plan, emit)
}

/// Runs one GPU test on an open device.
pub(crate) fn run_test(gpu: &mut Gpu, test: TestKind, plan: &BenchPlan, emit: Emit<'_>) -> Result<TestResult, Failure> {
    gpu.ctx.bind_to_thread().map_err(|e| cuda_failure(e, "making the CUDA context current"))?;
    let result = match test {
        TestKind::H2d => copies::host_device(gpu, plan, true, emit),
        TestKind::D2h => copies::host_device(gpu, plan, false, emit),
        TestKind::Bidir => copies::bidirectional(gpu, plan, emit),
        TestKind::D2d => copies::device_copy(gpu, plan, emit),
        TestKind::Gemm => gemm::sweep(gpu, plan, emit),
        TestKind::Fma => compiled::fma(gpu, plan, emit),
        TestKind::Latency => compiled::latency(gpu, plan, emit),
        TestKind::Memtest => memory::run(gpu, plan, emit),
        TestKind::Sustained => sustained::run(gpu, plan, emit),
        TestKind::P2p => peer::run(plan, emit),
        TestKind::Cpu => {
            return Err(Failure::new(FailureKind::Internal, "the CPU baselines do not run on the GPU path"));
        }
    }?;
    // A failure inside the kernels surfaces at the next synchronize; catch it here, in this test.
    gpu.stream.synchronize().map_err(|e| cuda_failure(e, "finishing the test's GPU work"))?;
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sticky_errors_lose_the_context_and_others_do_not() {
        for code in [
            CUresult::CUDA_ERROR_ILLEGAL_ADDRESS,
            CUresult::CUDA_ERROR_LAUNCH_FAILED,
            CUresult::CUDA_ERROR_ECC_UNCORRECTABLE,
            CUresult::CUDA_ERROR_UNKNOWN,
        ] {
            assert!(is_sticky(code), "{code:?}");
            let f = explain(code, &format!("{code:?}"), "text", "launching the FMA kernel");
            assert_eq!(f.kind, FailureKind::ContextLost, "{code:?}");
            assert!(f.reason.starts_with(&format!("launching the FMA kernel: {code:?} (text)")), "{}", f.reason);
            assert!(f.reason.contains("kernel log for an Xid"), "{}", f.reason);
        }
        for code in [
            CUresult::CUDA_ERROR_OUT_OF_MEMORY,
            CUresult::CUDA_ERROR_INVALID_VALUE,
            CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
            CUresult::CUDA_ERROR_NOT_SUPPORTED,
        ] {
            assert!(!is_sticky(code), "{code:?}");
            assert_ne!(explain(code, "E", "t", "x").kind, FailureKind::ContextLost, "{code:?}");
        }
    }

    /// cuInit answers CUDA_ERROR_UNKNOWN where nvidia-uvm is not loaded (a container without
    /// /dev/nvidia-uvm, a driver updated without a reboot): no context exists then, so the failure
    /// must not say one was lost, and it names the usual causes.
    #[test]
    fn an_unknown_error_while_opening_is_not_a_lost_context() {
        let code = CUresult::CUDA_ERROR_UNKNOWN;
        let f = explain_opening(code, "CUDA_ERROR_UNKNOWN", "unknown error", "cuInit (starting the CUDA driver)");
        assert_eq!(f.kind, FailureKind::CudaError, "{f:?}");
        assert!(f.reason.starts_with("cuInit (starting the CUDA driver): CUDA_ERROR_UNKNOWN (unknown error)"));
        assert!(f.reason.contains("nvidia-uvm") && !f.reason.contains("context is unusable"), "{}", f.reason);
        let lost = explain_opening(CUresult::CUDA_ERROR_ECC_UNCORRECTABLE, "E", "t", "creating a CUDA context");
        assert_eq!(lost.kind, FailureKind::CudaError);
        // Anything else reads as it does after the device is open.
        let oom = CUresult::CUDA_ERROR_OUT_OF_MEMORY;
        assert_eq!(explain_opening(oom, "E", "t", "x"), explain(oom, "E", "t", "x"));
    }

    #[test]
    fn error_222_says_the_ptx_is_newer_than_the_driver() {
        let f = explain(
            CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
            "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
            "the provided PTX was compiled with an unsupported toolchain.",
            "loading the kernels compiled as PTX for compute_90 (cuModuleLoadData)",
        );
        assert_eq!(f.kind, FailureKind::CudaError);
        assert!(f.reason.contains("compiled to PTX by an NVRTC newer than this driver"), "{}", f.reason);
        assert!(f.reason.contains("Update the NVIDIA driver"), "{}", f.reason);
    }
}
