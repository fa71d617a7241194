//! cuBLAS GEMM: FP32, TF32, FP16 and BF16 over square sizes, checked against a CPU reference.

use std::ffi::{c_int, c_void};

use cudarc::cublas::result::{self as blas, CublasError};
use cudarc::cublas::sys::{
    cublasComputeType_t as Compute, cublasGemmAlgo_t, cublasHandle_t, cublasOperation_t, cublasStatus_t,
    cudaDataType_t as DataType,
};
use cudarc::driver::CudaStream;
use gpu_doctor_kb::{GpuTable, Kb};
use gpu_doctor_model::ComputeCapability;
use half::{bf16, f16};

use super::buffers::{copy_dtoh, copy_htod};
use super::{DeviceBuffer, Emit, Enqueue, Gpu, cublas_library, cuda_failure, time_reps, warm_up};
use crate::cpu::{naive_gemm, random_matrix};
use gpu_doctor_model::bench::plan::{BenchPlan, Precision, TestKind};
use gpu_doctor_model::bench::protocol::{
    BenchEvent, Check, Failure, FailureKind, Measurement, Metric, Point, TestResult,
};
use gpu_doctor_model::bench::stats::Stats;
use gpu_doctor_model::bench::unit::Unit;

/// The largest size checked against the CPU reference (the naive loop takes n³ steps).
const MAX_CHECKED_N: u32 = 1024;

/// A cuBLAS handle bound to the test stream, destroyed on drop.
pub(crate) struct Blas {
    handle: cublasHandle_t,
}

fn blas_failure(e: CublasError, during: &str) -> Failure {
    let kind = match e.0 {
        cublasStatus_t::CUBLAS_STATUS_ALLOC_FAILED => FailureKind::OutOfMemory,
        cublasStatus_t::CUBLAS_STATUS_NOT_SUPPORTED | cublasStatus_t::CUBLAS_STATUS_ARCH_MISMATCH => {
            FailureKind::Unsupported
        }
        _ => FailureKind::CudaError,
    };
    Failure::new(kind, format!("{during}: cuBLAS returned {:?}", e.0))
}

impl Blas {
    /// Creates a handle (cuBLAS must have been checked present) and binds it to `stream`.
    pub fn new(stream: &CudaStream) -> Result<Self, Failure> {
        let handle = blas::create_handle().map_err(|e| blas_failure(e, "creating a cuBLAS handle"))?;
        let this = Self { handle };
        // SAFETY: `handle` was just created and `stream` is a live stream of the current context.
        #[allow(unsafe_code)]
        unsafe { blas::set_stream(this.handle, stream.cu_stream().cast()) }
            .map_err(|e| blas_failure(e, "binding cuBLAS to the stream"))?;
        Ok(this)
    }

    /// cuBLAS's version as `major.minor.patch`.
    pub fn version(&self) -> Option<String> {
        let mut v: c_int = 0;
        // SAFETY: the handle is live and cublasGetVersion writes one int to a live local.
        #[allow(unsafe_code)]
        let r = unsafe { cudarc::cublas::sys::cublasGetVersion_v2(self.handle, &raw mut v) };
        (r == cublasStatus_t::CUBLAS_STATUS_SUCCESS).then(|| {
            let v = v.max(0);
            // cuBLAS encodes major × 10000 + minor × 100 + patch since 11.0.
            format!("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100)
        })
    }

    /// Enqueues `C = A·B` for column-major n×n matrices of `p`'s element type.
    pub fn gemm(
        &self,
        p: Precision,
        n: usize,
        a: &DeviceBuffer,
        b: &DeviceBuffer,
        c: &DeviceBuffer,
    ) -> Result<(), Failure> {
        let need = n * n * p.element_bytes() as usize;
        assert!(a.bytes() >= need && b.bytes() >= need && c.bytes() >= need, "matrices smaller than {n}×{n}");
        let (data, compute) = types(p);
        let dim = c_int::try_from(n).unwrap_or(c_int::MAX);
        let (alpha, beta) = (1.0f32, 0.0f32);
        // SAFETY: the three buffers hold n×n elements of `data` (asserted above) and stay alive
        // until the caller synchronizes; alpha and beta are f32 host values, as COMPUTE_32F* needs.
        #[allow(unsafe_code)]
        unsafe {
            blas::gemm_ex(
                self.handle,
                cublasOperation_t::CUBLAS_OP_N,
                cublasOperation_t::CUBLAS_OP_N,
                dim,
                dim,
                dim,
                (&raw const alpha).cast::<c_void>(),
                a.ptr() as *const c_void,
                data,
                dim,
                b.ptr() as *const c_void,
                data,
                dim,
                (&raw const beta).cast::<c_void>(),
                c.ptr() as *mut c_void,
                data,
                dim,
                compute,
                cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .map_err(|e| blas_failure(e, &format!("{} GEMM {n}³", p.label())))
    }
}

impl Drop for Blas {
    fn drop(&mut self) {
        // SAFETY: the handle was created by `new` and is destroyed once.
        #[allow(unsafe_code)]
        if let Err(e) = unsafe { blas::destroy_handle(self.handle) } {
            tracing::warn!("could not destroy the cuBLAS handle: {e}");
        }
    }
}

/// Element type and compute type per precision (FP32 accumulation throughout, as PyTorch does).
fn types(p: Precision) -> (DataType, Compute) {
    match p {
        Precision::Fp32 => (DataType::CUDA_R_32F, Compute::CUBLAS_COMPUTE_32F),
        Precision::Tf32 => (DataType::CUDA_R_32F, Compute::CUBLAS_COMPUTE_32F_FAST_TF32),
        Precision::Fp16 => (DataType::CUDA_R_16F, Compute::CUBLAS_COMPUTE_32F),
        Precision::Bf16 => (DataType::CUDA_R_16BF, Compute::CUBLAS_COMPUTE_32F),
    }
}

/// `values` in `p`'s element type, as little-endian bytes.
pub(crate) fn encode(p: Precision, values: &[f32]) -> Vec<u8> {
    match p {
        Precision::Fp32 | Precision::Tf32 => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        Precision::Fp16 => values.iter().flat_map(|v| f16::from_f32(*v).to_le_bytes()).collect(),
        Precision::Bf16 => values.iter().flat_map(|v| bf16::from_f32(*v).to_le_bytes()).collect(),
    }
}

/// Little-endian bytes of `p`'s element type back to f32.
pub(crate) fn decode(p: Precision, bytes: &[u8]) -> Vec<f32> {
    match p {
        Precision::Fp32 | Precision::Tf32 => {
            bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
        }
        Precision::Fp16 => bytes.chunks_exact(2).map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32()).collect(),
        Precision::Bf16 => bytes.chunks_exact(2).map(|c| bf16::from_le_bytes([c[0], c[1]]).to_f32()).collect(),
    }
}

/// The largest error allowed against the CPU reference, per √k: rounding of the inputs (TF32 and
/// the 16-bit types) and of the output, far below what a wrong result gives (errors near the
/// values themselves, ≈ √k / 3).
pub(crate) fn tolerance_per_sqrt_k(p: Precision) -> f32 {
    match p {
        Precision::Fp32 => 1e-4,
        Precision::Tf32 | Precision::Fp16 => 5e-3,
        Precision::Bf16 => 3e-2,
    }
}

/// The lowest compute capability whose tensor cores take `p`, by `table`'s `[[tensor]]` rows
/// (`gpus.toml`); `None` for FP32, which has no tensor-core row, or a precision the table lacks.
pub(crate) fn tensor_min_cc(table: &GpuTable, p: Precision) -> Option<ComputeCapability> {
    let key = match p {
        Precision::Fp32 => return None,
        Precision::Tf32 => "tf32",
        Precision::Fp16 => "fp16",
        Precision::Bf16 => "bf16",
    };
    table.tensor_min_cc(key)
}

/// Whether this compute capability runs the precision on the hardware it is meant for, by the
/// embedded knowledge base (see [`supported_in`]); nothing is refused when it did not load.
pub(crate) fn supported(p: Precision, cc: Option<(u32, u32)>) -> Result<(), String> {
    match Kb::get() {
        Ok(kb) => supported_in(&kb.gpus, p, cc),
        Err(_) => Ok(()),
    }
}

/// TF32 and BF16 exist only on tensor cores, so they are refused below the capability whose tensor
/// cores take them (`gpus.toml` `[[tensor]]`); FP32 and FP16 run on CUDA cores anywhere.
pub(crate) fn supported_in(table: &GpuTable, p: Precision, cc: Option<(u32, u32)>) -> Result<(), String> {
    let Some((major, minor)) = cc else { return Ok(()) };
    if !matches!(p, Precision::Tf32 | Precision::Bf16) {
        return Ok(());
    }
    let Some(min) = tensor_min_cc(table, p) else { return Ok(()) };
    if (ComputeCapability { major, minor }) < min {
        return Err(format!("{} tensor cores need compute capability {min} or newer", p.label()));
    }
    Ok(())
}

/// 2n³ / seconds in TFLOP/s.
pub(crate) fn tflops(n: usize, secs: f64) -> f64 {
    let flop = 2.0 * (n as f64).powi(3);
    flop / secs / 1e12
}

/// Matrices A and B (`p`'s type) and C on the device, A and B filled from seeds.
pub(crate) struct Operands {
    pub a: DeviceBuffer,
    pub b: DeviceBuffer,
    pub c: DeviceBuffer,
}

impl Operands {
    /// Allocates n×n matrices and uploads `a` and `b` (f32, column-major) in `p`'s type.
    pub fn upload(gpu: &Gpu, p: Precision, n: usize, a: &[f32], b: &[f32]) -> Result<Self, Failure> {
        let bytes = n * n * p.element_bytes() as usize;
        let ops = Self { a: DeviceBuffer::new(bytes)?, b: DeviceBuffer::new(bytes)?, c: DeviceBuffer::new(bytes)? };
        let (ha, hb) = (encode(p, &a[..n * n]), encode(p, &b[..n * n]));
        let stream = gpu.stream.cu_stream();
        copy_htod(&ops.a, &ha, stream)?;
        copy_htod(&ops.b, &hb, stream)?;
        // The host vectors are pageable, so the copies are done when they return; synchronize anyway
        // before they drop.
        gpu.stream.synchronize().map_err(|e| cuda_failure(e, "uploading matrices"))?;
        Ok(ops)
    }
}

/// The GEMM sweep.
pub(crate) fn sweep(gpu: &mut Gpu, plan: &BenchPlan, emit: Emit<'_>) -> Result<TestResult, Failure> {
    cublas_library()?;
    let blas = Blas::new(&gpu.stream)?;
    gpu.info.cublas_version = blas.version();
    let gpu = &*gpu;
    let mut result = TestResult::default();
    let free = gpu.ctx.mem_get_info().map_err(|e| cuda_failure(e, "asking for free memory"))?.0 as u64;
    // Three FP32 matrices of the largest size must fit in 80 % of free memory.
    let fits = |n: u32| 3 * u64::from(n) * u64::from(n) * 4 <= free / 10 * 8;
    let sizes: Vec<u32> = plan.gemm_sizes.iter().copied().filter(|n| fits(*n)).collect();
    let skipped: Vec<String> = plan.gemm_sizes.iter().filter(|n| !fits(**n)).map(u32::to_string).collect();
    if !skipped.is_empty() {
        result.notes.push(format!(
            "sizes {} skipped: three matrices would not fit in the {} of free GPU memory",
            skipped.join(", "),
            gpu_doctor_model::bench::format::bytes(free)
        ));
    }
    let Some(&largest) = sizes.last() else {
        return Err(Failure::new(FailureKind::OutOfMemory, "not even the smallest GEMM size fits in free GPU memory"));
    };
    let max_n = largest as usize;
    let (a, b) = (random_matrix(max_n, 0xA), random_matrix(max_n, 0xB));
    let cc = gpu.info.compute_capability.map(|c| (c.major, c.minor));
    let mut uploaded: Option<(Precision, Operands)> = None;
    let mut warmed = false;
    let time = |p: Precision, n: usize| -> Result<Vec<f64>, Failure> {
        let ops = match &mut uploaded {
            Some((q, ops)) if *q == p => ops,
            slot => {
                // Free the last precision's matrices before uploading this one's: both at once
                // would not fit where the largest size only just does.
                *slot = None;
                &slot.insert((p, Operands::upload(gpu, p, max_n, &a, &b)?)).1
            }
        };
        if !warmed {
            // The largest product for `WARMUP_MIN`, so the first sizes are not measured at idle
            // clocks; a precision cuBLAS refuses leaves it to the next one.
            warm_up(gpu, || blas.gemm(p, max_n, &ops.a, &ops.b, &ops.c))?;
            warmed = true;
        }
        // cuBLAS calls may wait for the GPU (workspace, kernel loading), so the stream is not held.
        time_reps(gpu, Enqueue::Plain, plan.warmup, plan.repetitions, || blas.gemm(p, n, &ops.a, &ops.b, &ops.c))
    };
    let check = |p: Precision, n: usize| check(gpu, &blas, p, n, &a, &b);
    measure_precisions(&plan.gemm_precisions, &sizes, cc, &mut result, emit, time, check)?;
    Ok(result)
}

/// Times every precision at every size through `time`, keeping the best size of each, and checks
/// the smallest size of each through `check`. A precision the GPU or cuBLAS refuses
/// (`FailureKind::Unsupported`) becomes a note and the sweep goes on with the next precision: the
/// precisions already measured, and the sizes of this one measured before the refusal, are kept.
/// Any other failure ends the sweep.
fn measure_precisions(
    precisions: &[Precision],
    sizes: &[u32],
    cc: Option<(u32, u32)>,
    result: &mut TestResult,
    emit: Emit<'_>,
    mut time: impl FnMut(Precision, usize) -> Result<Vec<f64>, Failure>,
    mut check: impl FnMut(Precision, usize) -> Result<Check, Failure>,
) -> Result<(), Failure> {
    let test = TestKind::Gemm;
    let total = u32::try_from(sizes.len() * precisions.len()).unwrap_or(u32::MAX);
    let mut done = 0;
    for &p in precisions {
        if let Err(why) = supported(p, cc) {
            result.notes.push(format!("{} not run: {why}", p.label()));
            done += u32::try_from(sizes.len()).unwrap_or(0);
            continue;
        }
        let mut best: Option<(u32, Stats)> = None;
        let mut refused = false;
        for &n in sizes {
            let nn = n as usize;
            let times = match time(p, nn) {
                Ok(t) => t,
                Err(f) if f.kind == FailureKind::Unsupported => {
                    result.notes.push(format!("{} not run from {n}³ on: {}", p.label(), f.reason));
                    refused = true;
                    break;
                }
                Err(f) => return Err(f),
            };
            done += 1;
            let Some(t) = Stats::from_samples(&times) else { continue };
            let tf = t.map_decreasing(|secs| tflops(nn, secs));
            emit(BenchEvent::Sample {
                test,
                point: Point {
                    series: p.label().to_owned(),
                    x: f64::from(n),
                    x_unit: Unit::MatrixN,
                    value: tf,
                    unit: Unit::TflopPerS,
                    time_us: Some(t.scale(1e6)),
                },
            });
            emit(BenchEvent::Progress { test, done, total, what: format!("{} {n}³", p.label()) });
            if best.is_none_or(|(_, s)| tf.median > s.median) {
                best = Some((n, tf));
            }
        }
        if let Some((n, s)) = best {
            result.measurements.push(Measurement::median(
                Metric::Gemm { precision: p, n },
                format!("{} {n}³ (best size)", p.label()),
                s,
                Unit::TflopPerS,
            ));
        }
        if refused {
            continue;
        }
        if let Some(&n) = sizes.first() {
            if n <= MAX_CHECKED_N {
                match check(p, n as usize) {
                    Ok(c) => result.checks.push(c),
                    Err(f) if f.kind == FailureKind::Unsupported => {
                        result.notes.push(format!("{}: not checked against the CPU: {}", p.label(), f.reason));
                    }
                    Err(f) => return Err(f),
                }
            } else {
                result
                    .notes
                    .push(format!("{}: no size of {MAX_CHECKED_N} or less to check against the CPU", p.label()));
            }
        }
    }
    Ok(())
}

/// Runs one n×n product on fresh matrices (the first n² elements of `a`, `b`) and compares it with
/// the naive CPU loop over the same values as the GPU saw them.
fn check(gpu: &Gpu, blas: &Blas, p: Precision, n: usize, a: &[f32], b: &[f32]) -> Result<Check, Failure> {
    let ops = Operands::upload(gpu, p, n, a, b)?;
    blas.gemm(p, n, &ops.a, &ops.b, &ops.c)?;
    let mut out = vec![0u8; n * n * p.element_bytes() as usize];
    copy_dtoh(&mut out, &ops.c, gpu.stream.cu_stream())?;
    gpu.stream.synchronize().map_err(|e| cuda_failure(e, "reading the GEMM result"))?;
    let got = decode(p, &out);
    let (ra, rb) = (decode(p, &encode(p, &a[..n * n])), decode(p, &encode(p, &b[..n * n])));
    let mut want = vec![0.0f32; n * n];
    naive_gemm(n, &ra, &rb, &mut want);
    let err = crate::cpu::max_abs_diff(&got, &want);
    let allowed = tolerance_per_sqrt_k(p) * (n as f32).sqrt();
    Ok(Check {
        name: format!("{} GEMM {n}³ against a CPU reference", p.label()),
        passed: err.is_finite() && err <= allowed,
        detail: format!("largest difference {err:.3e}, allowed {allowed:.3e}"),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn encode_decode_round_trips_representable_values() {
        let values = [0.0f32, 1.0, -2.5, 0.125, 1024.0];
        for p in Precision::ALL {
            assert_eq!(decode(p, &encode(p, &values)), values, "{p:?}");
            assert_eq!(encode(p, &values).len(), values.len() * p.element_bytes() as usize);
        }
        let rounded = decode(Precision::Bf16, &encode(Precision::Bf16, &[1.0 + 1.0 / 512.0]));
        assert_eq!(rounded, [1.0], "bf16 keeps 8 significant bits");
    }

    #[test]
    fn tolerances_separate_rounding_from_wrong_answers() {
        // The CPU reference over bf16-rounded inputs against itself in f32 and in bf16 output.
        let n = 256;
        let (a, b) = (random_matrix(n, 1), random_matrix(n, 2));
        for p in Precision::ALL {
            let (ra, rb) = (decode(p, &encode(p, &a)), decode(p, &encode(p, &b)));
            let mut exact = vec![0.0f32; n * n];
            naive_gemm(n, &ra, &rb, &mut exact);
            let stored = decode(p, &encode(p, &exact));
            let allowed = tolerance_per_sqrt_k(p) * (n as f32).sqrt();
            assert!(crate::cpu::max_abs_diff(&stored, &exact) <= allowed, "{p:?}: output rounding must pass");
            let mut wrong = vec![0.0f32; n * n];
            naive_gemm(n, &rb, &ra, &mut wrong); // B·A instead of A·B
            assert!(crate::cpu::max_abs_diff(&wrong, &exact) > allowed * 4.0, "{p:?}: a wrong product must fail");
        }
    }

    #[test]
    fn precision_support_by_capability() {
        assert!(supported(Precision::Bf16, Some((7, 5))).is_err());
        assert!(supported(Precision::Tf32, Some((8, 0))).is_ok());
        assert!(supported(Precision::Fp16, Some((6, 1))).is_ok());
        assert!(supported(Precision::Bf16, None).is_ok());
    }

    /// cuBLAS refusing one precision part-way (CUBLAS_STATUS_NOT_SUPPORTED) keeps what was measured
    /// before and after it; before, the sweep re-ran the refused GEMM for its check and lost every
    /// precision.
    #[test]
    fn one_refused_precision_keeps_the_others() {
        let mut result = TestResult::default();
        let mut events = Vec::new();
        let mut checked = Vec::new();
        let time = |p: Precision, n: usize| {
            if p == Precision::Tf32 && n == 512 {
                Err(Failure::new(FailureKind::Unsupported, "CUBLAS_STATUS_NOT_SUPPORTED"))
            } else {
                Ok(vec![1e-3; 5])
            }
        };
        let check = |p: Precision, n: usize| {
            checked.push(p);
            if p == Precision::Tf32 {
                Err(Failure::new(FailureKind::Unsupported, "refused again"))
            } else {
                Ok(Check { name: format!("{p:?} {n}"), passed: true, detail: String::new() })
            }
        };
        let precisions = [Precision::Fp32, Precision::Tf32, Precision::Bf16];
        let outcome = measure_precisions(
            &precisions,
            &[256, 512],
            Some((9, 0)),
            &mut result,
            &mut |e| events.push(e),
            time,
            check,
        );
        assert!(outcome.is_ok(), "{outcome:?}");
        let measured: Vec<Precision> = result
            .measurements
            .iter()
            .filter_map(|m| match m.metric {
                Metric::Gemm { precision, .. } => Some(precision),
                _ => None,
            })
            .collect();
        assert_eq!(measured, precisions, "TF32 keeps its 256³ result; FP32 and BF16 are kept");
        assert_eq!(checked, [Precision::Fp32, Precision::Bf16], "the refused precision is not run again");
        assert_eq!(result.checks.len(), 2);
        assert!(result.notes.iter().any(|n| n.contains("TF32") && n.contains("NOT_SUPPORTED")), "{:?}", result.notes);
        // 2 sizes × FP32, 1 × TF32, 2 × BF16.
        assert_eq!(events.iter().filter(|e| matches!(e, BenchEvent::Sample { .. })).count(), 5);
    }

    #[test]
    fn precision_support_comes_from_the_tensor_rows() {
        let kb = Kb::get().unwrap();
        for p in [Precision::Tf32, Precision::Bf16] {
            let min = tensor_min_cc(&kb.gpus, p).unwrap();
            assert!(supported(p, Some((min.major, min.minor))).is_ok(), "{p:?} at {min}");
            let below = if min.minor > 0 { (min.major, min.minor - 1) } else { (min.major - 1, 9) };
            let why = supported(p, Some(below)).unwrap_err();
            assert!(why.contains(&min.to_string()), "{why}");
        }
        // Changing nothing but a row changes the answer.
        let mut table = kb.gpus.clone();
        table.tensor.iter_mut().filter(|t| t.precision == "bf16").for_each(|t| t.min_cc = "9.0".parse().unwrap());
        assert!(supported_in(&table, Precision::Bf16, Some((8, 6))).unwrap_err().contains("9.0"));
        assert!(supported_in(&table, Precision::Tf32, Some((8, 6))).is_ok());
    }

    #[test]
    fn tflops_arithmetic() {
        assert!((tflops(8192, 1.0) - 1.0995).abs() < 1e-3);
    }
}
