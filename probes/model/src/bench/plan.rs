//! What to measure: `BenchPlan`, its presets, and its validation.
//!
//! The parent builds a plan, the worker receives it as JSON on standard input and checks it again
//! (a plan is an input like any other), so neither side trusts the other's arithmetic.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Version of the plan and event JSON; the worker refuses a plan of another version.
pub const PROTOCOL_VERSION: u32 = 1;

/// Bytes in a KiB, MiB, GiB.
pub const KIB: u64 = 1024;
/// Bytes in a MiB.
pub const MIB: u64 = 1024 * KIB;
/// Bytes in a GiB.
pub const GIB: u64 = 1024 * MIB;

/// Smallest and largest transfer size a plan may ask for.
pub const TRANSFER_SIZE_RANGE: (u64, u64) = (4 * KIB, GIB);
/// Smallest and largest square GEMM size.
pub const GEMM_SIZE_RANGE: (u32, u32) = (16, 16384);
/// Longest sustained-load run, seconds.
pub const MAX_SUSTAINED_SECS: u32 = 3600;
/// The largest share of free memory the memory test may take (the rest is left for the driver).
pub const MAX_MEMTEST_SHARE: f64 = 0.9;

/// One benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestKind {
    /// Host to device copies, pageable and pinned, over a size sweep.
    H2d,
    /// Device to host copies, pageable and pinned, over a size sweep.
    D2h,
    /// Host to device and device to host at the same time (pinned).
    Bidir,
    /// Device to device copies: the driver's memcpy and a copy kernel.
    D2d,
    /// cuBLAS GEMM in FP32, TF32, FP16 and BF16 over square sizes.
    Gemm,
    /// FP32 FMA throughput of a kernel compiled at run time (NVRTC).
    Fma,
    /// Kernel launch latency of an empty kernel (NVRTC).
    Latency,
    /// Largest single allocation, and a pattern test over a share of free memory.
    Memtest,
    /// CPU baselines: multithreaded SGEMM and host memcpy bandwidth.
    Cpu,
    /// A GEMM loop for a chosen time while clocks, temperature and power are sampled (opt-in).
    Sustained,
    /// GPU-to-GPU copies between every ordered pair of GPUs, with and without peer access and
    /// staged through host memory (`p2p::P2pMatrix`); on one GPU a finished test with a note.
    P2p,
}

impl TestKind {
    /// Every test, in the order a plan runs them.
    pub const ALL: [Self; 11] = [
        Self::H2d,
        Self::D2h,
        Self::Bidir,
        Self::D2d,
        Self::P2p,
        Self::Gemm,
        Self::Fma,
        Self::Latency,
        Self::Memtest,
        Self::Sustained,
        Self::Cpu,
    ];

    /// The name used on the command line and in JSON, e.g. `h2d`.
    pub fn name(self) -> &'static str {
        match self {
            Self::H2d => "h2d",
            Self::D2h => "d2h",
            Self::Bidir => "bidir",
            Self::D2d => "d2d",
            Self::Gemm => "gemm",
            Self::Fma => "fma",
            Self::Latency => "latency",
            Self::Memtest => "memtest",
            Self::Cpu => "cpu",
            Self::Sustained => "sustained",
            Self::P2p => "p2p",
        }
    }

    /// What it measures, for people.
    pub fn label(self) -> &'static str {
        match self {
            Self::H2d => "host → device copy",
            Self::D2h => "device → host copy",
            Self::Bidir => "bidirectional copy",
            Self::D2d => "device memory bandwidth",
            Self::Gemm => "GEMM (cuBLAS)",
            Self::Fma => "FP32 FMA peak",
            Self::Latency => "kernel launch latency",
            Self::Memtest => "memory allocation and test",
            Self::Cpu => "CPU baselines",
            Self::Sustained => "sustained load",
            Self::P2p => "GPU-to-GPU copies",
        }
    }

    /// Whether it needs a GPU (everything but the CPU baselines), and so runs in the worker.
    pub fn needs_gpu(self) -> bool {
        self != Self::Cpu
    }

    /// The tests run when none are named: everything except the opt-in sustained load.
    pub fn default_set() -> Vec<Self> {
        Self::ALL.into_iter().filter(|t| *t != Self::Sustained).collect()
    }

    /// Parses a comma-separated list such as `h2d,gemm,cpu` (spaces allowed), in the order given.
    pub fn parse_list(text: &str) -> Result<Vec<Self>, PlanError> {
        let mut out = Vec::new();
        for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let test = Self::ALL.into_iter().find(|t| t.name().eq_ignore_ascii_case(word)).ok_or_else(|| {
                PlanError::UnknownTest { name: word.to_owned(), known: Self::ALL.map(Self::name).join(",") }
            })?;
            if out.contains(&test) {
                return Err(PlanError::DuplicateTest { name: test.name() });
            }
            out.push(test);
        }
        if out.is_empty() {
            return Err(PlanError::NoTests);
        }
        Ok(out)
    }
}

impl fmt::Display for TestKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A GEMM precision: the element type and how cuBLAS computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    /// FP32 in and out, FP32 compute on CUDA cores (`CUBLAS_COMPUTE_32F`, no TF32).
    Fp32,
    /// FP32 in and out, TF32 tensor cores (`CUBLAS_COMPUTE_32F_FAST_TF32`).
    Tf32,
    /// FP16 in and out, FP32 accumulation (what `torch.matmul` does for half).
    Fp16,
    /// BF16 in and out, FP32 accumulation.
    Bf16,
}

impl Precision {
    /// Every precision, in report order.
    pub const ALL: [Self; 4] = [Self::Fp32, Self::Tf32, Self::Fp16, Self::Bf16];

    /// Display name, e.g. `BF16`.
    pub fn label(self) -> &'static str {
        match self {
            Self::Fp32 => "FP32",
            Self::Tf32 => "TF32",
            Self::Fp16 => "FP16",
            Self::Bf16 => "BF16",
        }
    }

    /// Bytes per element of the matrices.
    pub fn element_bytes(self) -> u64 {
        match self {
            Self::Fp32 | Self::Tf32 => 4,
            Self::Fp16 | Self::Bf16 => 2,
        }
    }
}

/// Everything the worker needs to run a set of benchmarks on one GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchPlan {
    /// `PROTOCOL_VERSION` of the program that wrote it.
    pub protocol: u32,
    /// CUDA device ordinal. CUDA orders devices fastest first unless `CUDA_DEVICE_ORDER=PCI_BUS_ID`
    /// is set, which the parent sets so that this matches NVML's (and `nvidia-smi`'s) index, as
    /// long as `CUDA_VISIBLE_DEVICES` hides no GPU.
    pub gpu: u32,
    /// The PCI bus id of the GPU meant (from the probes). When set, the worker opens the device at
    /// this bus id whatever its ordinal: under `CUDA_VISIBLE_DEVICES` (set by SLURM and Kubernetes)
    /// the ordinal `gpu` would name another GPU, or none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_pci_bus_id: Option<String>,
    /// The tests, in the order they run.
    pub tests: Vec<TestKind>,
    /// Whether this is the quick preset (fewer sizes, fewer repetitions).
    pub quick: bool,
    /// Untimed runs before the timed ones.
    pub warmup: u32,
    /// Timed repetitions per point.
    pub repetitions: u32,
    /// Host↔device transfer sizes, bytes, ascending powers of two.
    pub transfer_sizes_bytes: Vec<u64>,
    /// Bytes per device-to-device copy.
    pub d2d_bytes: u64,
    /// Square GEMM sizes (m = n = k), ascending.
    pub gemm_sizes: Vec<u32>,
    /// GEMM precisions.
    pub gemm_precisions: Vec<Precision>,
    /// Share of free GPU memory the memory test writes and verifies, 0–`MAX_MEMTEST_SHARE`.
    pub memtest_share: f64,
    /// Length of the sustained-load test, seconds.
    pub sustained_secs: u32,
    /// Square size of the CPU SGEMM baseline.
    pub cpu_gemm_size: u32,
    /// Square size of the naive-loop CPU GEMM it is compared with (small: it is slow).
    pub cpu_naive_size: u32,
    /// Bytes per host memcpy in the CPU baseline.
    pub cpu_memcpy_bytes: u64,
    /// Bytes per GPU-to-GPU bandwidth copy (`P2P_BYTES` by default). Written only
    /// when not the default, so a run saved before the field existed writes back the same text.
    #[serde(default = "default_p2p_bytes", skip_serializing_if = "is_default_p2p_bytes")]
    pub p2p_bytes: u64,
    /// Bytes per GPU-to-GPU latency copy (written only when not the default).
    #[serde(default = "default_p2p_latency_bytes", skip_serializing_if = "is_default_p2p_latency_bytes")]
    pub p2p_latency_bytes: u64,
    /// The GPUs the GPU-to-GPU test copies between, by PCI bus id (each opened at its bus id, as
    /// `gpu_pci_bus_id` is); empty: every GPU CUDA sees.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub p2p_gpus: Vec<String>,
}

fn default_p2p_bytes() -> u64 {
    P2P_BYTES
}

fn default_p2p_latency_bytes() -> u64 {
    P2P_LATENCY_BYTES
}

fn is_default_p2p_bytes(bytes: &u64) -> bool {
    *bytes == P2P_BYTES
}

fn is_default_p2p_latency_bytes(bytes: &u64) -> bool {
    *bytes == P2P_LATENCY_BYTES
}

/// Bytes per GPU-to-GPU bandwidth copy in both presets: nvbandwidth's default `--bufferSize` up to
/// v0.6 (64 MiB, NVIDIA/nvbandwidth README at 04bf286; 512 MiB since v0.7, common.h at 64d6837),
/// large enough for an NVLink copy to reach its plateau.
pub const P2P_BYTES: u64 = 64 * MIB;
/// Bytes per GPU-to-GPU latency copy.
pub const P2P_LATENCY_BYTES: u64 = 4 * KIB;
/// The most GPUs `p2p_gpus` may name (an HGX board has 8; NVL72 racks expose more per node
/// only through the fabric).
pub const MAX_P2P_GPUS: usize = 16;

/// A plan that cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// The JSON did not parse.
    #[error("the plan is not valid JSON for this version: {message}")]
    Json { message: String },
    /// Written by another version.
    #[error("the plan is protocol version {found}; this worker speaks version {expected}")]
    Version { found: u32, expected: u32 },
    /// No test named.
    #[error("no test to run")]
    NoTests,
    /// A test named twice.
    #[error("test {name} is named twice")]
    DuplicateTest { name: &'static str },
    /// An unknown test name.
    #[error("unknown test {name:?}; the tests are {known}")]
    UnknownTest { name: String, known: String },
    /// A number outside its range.
    #[error("{what} is {value}, but {rule}")]
    OutOfRange { what: &'static str, value: String, rule: String },
}

fn out_of_range(what: &'static str, value: impl fmt::Display, rule: impl Into<String>) -> PlanError {
    PlanError::OutOfRange { what, value: value.to_string(), rule: rule.into() }
}

impl BenchPlan {
    /// The preset for `tests` on GPU `gpu`: the full sweep, or with `quick` fewer points and
    /// repetitions (seconds instead of minutes).
    pub fn preset(gpu: u32, tests: Vec<TestKind>, quick: bool) -> Self {
        let transfer_sizes_bytes = if quick {
            vec![4 * KIB, 64 * KIB, MIB, 16 * MIB, 256 * MIB]
        } else {
            (12..=30).map(|shift| 1u64 << shift).collect()
        };
        Self {
            protocol: PROTOCOL_VERSION,
            gpu,
            gpu_pci_bus_id: None,
            tests,
            quick,
            warmup: if quick { 2 } else { 3 },
            repetitions: if quick { 5 } else { 20 },
            transfer_sizes_bytes,
            d2d_bytes: if quick { 256 * MIB } else { GIB },
            gemm_sizes: if quick { vec![256, 1024, 4096] } else { vec![256, 512, 1024, 2048, 4096, 8192] },
            gemm_precisions: Precision::ALL.to_vec(),
            memtest_share: if quick { 0.02 } else { 0.1 },
            sustained_secs: if quick { 15 } else { 60 },
            cpu_gemm_size: if quick { 512 } else { 1024 },
            cpu_naive_size: if quick { 192 } else { 256 },
            cpu_memcpy_bytes: if quick { 64 * MIB } else { 256 * MIB },
            p2p_bytes: P2P_BYTES,
            p2p_latency_bytes: P2P_LATENCY_BYTES,
            p2p_gpus: Vec::new(),
        }
    }

    /// Parses a plan from the worker's standard input and validates it.
    pub fn from_json(text: &str) -> Result<Self, PlanError> {
        let plan: Self = serde_json::from_str(text).map_err(|e| PlanError::Json { message: e.to_string() })?;
        plan.validate()?;
        Ok(plan)
    }

    /// Checks every field against its rule.
    pub fn validate(&self) -> Result<(), PlanError> {
        if self.protocol != PROTOCOL_VERSION {
            return Err(PlanError::Version { found: self.protocol, expected: PROTOCOL_VERSION });
        }
        if self.tests.is_empty() {
            return Err(PlanError::NoTests);
        }
        for (i, t) in self.tests.iter().enumerate() {
            if self.tests[..i].contains(t) {
                return Err(PlanError::DuplicateTest { name: t.name() });
            }
        }
        if !(1..=1000).contains(&self.repetitions) {
            return Err(out_of_range("repetitions", self.repetitions, "it must be 1 to 1000"));
        }
        if self.warmup > 100 {
            return Err(out_of_range("warmup", self.warmup, "it must be at most 100"));
        }
        let (lo, hi) = TRANSFER_SIZE_RANGE;
        if self.transfer_sizes_bytes.is_empty() {
            return Err(out_of_range("transfer_sizes_bytes", "[]", "at least one size is needed"));
        }
        for (i, &size) in self.transfer_sizes_bytes.iter().enumerate() {
            if !size.is_power_of_two() || !(lo..=hi).contains(&size) {
                return Err(out_of_range("a transfer size", size, "sizes are powers of two from 4 KiB to 1 GiB"));
            }
            if i > 0 && self.transfer_sizes_bytes[i - 1] >= size {
                return Err(out_of_range("a transfer size", size, "sizes must be ascending without repeats"));
            }
        }
        if !self.d2d_bytes.is_power_of_two() || !(MIB..=4 * GIB).contains(&self.d2d_bytes) {
            return Err(out_of_range("d2d_bytes", self.d2d_bytes, "it must be a power of two from 1 MiB to 4 GiB"));
        }
        let (glo, ghi) = GEMM_SIZE_RANGE;
        if self.gemm_sizes.is_empty() {
            return Err(out_of_range("gemm_sizes", "[]", "at least one size is needed"));
        }
        for (i, &n) in self.gemm_sizes.iter().enumerate() {
            if !(glo..=ghi).contains(&n) || n % 16 != 0 {
                return Err(out_of_range("a GEMM size", n, "sizes must be multiples of 16 from 16 to 16384"));
            }
            if i > 0 && self.gemm_sizes[i - 1] >= n {
                return Err(out_of_range("a GEMM size", n, "sizes must be ascending without repeats"));
            }
        }
        if self.gemm_precisions.is_empty() {
            return Err(out_of_range("gemm_precisions", "[]", "at least one precision is needed"));
        }
        if !(self.memtest_share > 0.0 && self.memtest_share <= MAX_MEMTEST_SHARE) {
            return Err(out_of_range(
                "memtest_share",
                self.memtest_share,
                format!("it must be above 0 and at most {MAX_MEMTEST_SHARE}"),
            ));
        }
        if !(1..=MAX_SUSTAINED_SECS).contains(&self.sustained_secs) {
            return Err(out_of_range("sustained_secs", self.sustained_secs, "it must be 1 to 3600 seconds"));
        }
        if !(16..=8192).contains(&self.cpu_gemm_size) {
            return Err(out_of_range("cpu_gemm_size", self.cpu_gemm_size, "it must be 16 to 8192"));
        }
        if !(16..=1024).contains(&self.cpu_naive_size) {
            return Err(out_of_range("cpu_naive_size", self.cpu_naive_size, "it must be 16 to 1024"));
        }
        if !(KIB..=4 * GIB).contains(&self.cpu_memcpy_bytes) {
            return Err(out_of_range("cpu_memcpy_bytes", self.cpu_memcpy_bytes, "it must be 1 KiB to 4 GiB"));
        }
        self.validate_p2p()
    }

    fn validate_p2p(&self) -> Result<(), PlanError> {
        if !self.p2p_bytes.is_power_of_two() || !(MIB..=GIB).contains(&self.p2p_bytes) {
            return Err(out_of_range("p2p_bytes", self.p2p_bytes, "it must be a power of two from 1 MiB to 1 GiB"));
        }
        let (lo, _) = TRANSFER_SIZE_RANGE;
        if !self.p2p_latency_bytes.is_power_of_two() || !(lo..=MIB).contains(&self.p2p_latency_bytes) {
            return Err(out_of_range(
                "p2p_latency_bytes",
                self.p2p_latency_bytes,
                "it must be a power of two from 4 KiB to 1 MiB",
            ));
        }
        if self.p2p_gpus.len() == 1 || self.p2p_gpus.len() > MAX_P2P_GPUS {
            return Err(out_of_range(
                "p2p_gpus",
                self.p2p_gpus.len(),
                format!("it names 2 to {MAX_P2P_GPUS} GPUs, or none for every GPU CUDA sees"),
            ));
        }
        for (i, bus) in self.p2p_gpus.iter().enumerate() {
            if crate::PciBusId::parse(bus).is_err() {
                return Err(out_of_range("a p2p_gpus entry", format!("{bus:?}"), "it must be a PCI bus id"));
            }
            if self.p2p_gpus[..i].iter().any(|b| crate::PciBusId::same(b, bus)) {
                return Err(out_of_range("a p2p_gpus entry", bus, "each GPU may be named once"));
            }
        }
        Ok(())
    }

    /// The tests that need the GPU, in plan order.
    pub fn gpu_tests(&self) -> Vec<TestKind> {
        self.tests.iter().copied().filter(|t| t.needs_gpu()).collect()
    }

    /// A generous limit on how long the worker may take for this plan's GPU tests: a minute to
    /// start, plus a budget per test (a slow eGPU link takes far longer than a datacenter GPU).
    pub fn time_limit(&self) -> Duration {
        let per_test: u64 = self
            .gpu_tests()
            .iter()
            .map(|t| match (t, self.quick) {
                (TestKind::H2d | TestKind::D2h, true) => 60,
                (TestKind::H2d | TestKind::D2h, false) => 300,
                (TestKind::Bidir | TestKind::D2d, _) => 120,
                (TestKind::Gemm, true) => 120,
                (TestKind::Gemm, false) => 600,
                (TestKind::Fma | TestKind::Latency, _) => 60,
                (TestKind::Memtest, true) => 300,
                (TestKind::Memtest, false) => 1800,
                (TestKind::Sustained, _) => 120 + u64::from(self.sustained_secs),
                (TestKind::Cpu, _) => 120,
                // 56 ordered pairs on 8 GPUs, three modes each, a second or two per mode.
                (TestKind::P2p, _) => 600,
            })
            .sum();
        Duration::from_secs(60 + per_test)
    }

    /// Longest `test` may go without sending an event (a progress step, a sample; opening the GPU
    /// counts towards the first test) before the runner's watchdog stops the worker as hung. A
    /// healthy test sends one every few seconds; GEMM and sustained load may wait on cuBLAS
    /// compiling kernels for a GPU newer than it, and the memory test writes the whole region per
    /// pattern between events.
    pub fn stall_limit(&self, test: TestKind) -> Duration {
        match test {
            TestKind::Gemm | TestKind::Sustained | TestKind::Memtest => Duration::from_secs(300),
            _ => Duration::from_secs(120),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn test_lists_parse_in_order_and_reject_mistakes() {
        assert_eq!(TestKind::parse_list("cpu, h2d").unwrap(), [TestKind::Cpu, TestKind::H2d]);
        assert_eq!(TestKind::parse_list("GEMM").unwrap(), [TestKind::Gemm]);
        assert!(matches!(TestKind::parse_list("h2d,h2d"), Err(PlanError::DuplicateTest { name: "h2d" })));
        let err = TestKind::parse_list("h2d,warp").unwrap_err();
        assert!(err.to_string().contains("\"warp\"") && err.to_string().contains("sustained"), "{err}");
        assert_eq!(TestKind::parse_list(" , "), Err(PlanError::NoTests));
    }

    #[test]
    fn default_set_leaves_out_sustained() {
        let d = TestKind::default_set();
        assert!(!d.contains(&TestKind::Sustained));
        assert_eq!(d.len(), TestKind::ALL.len() - 1);
    }

    #[test]
    fn presets_are_valid_and_quick_is_smaller() {
        let full = BenchPlan::preset(0, TestKind::ALL.to_vec(), false);
        let quick = BenchPlan::preset(0, TestKind::ALL.to_vec(), true);
        full.validate().unwrap();
        quick.validate().unwrap();
        assert_eq!(full.transfer_sizes_bytes.first(), Some(&(4 * KIB)));
        assert_eq!(full.transfer_sizes_bytes.last(), Some(&GIB));
        assert_eq!(full.transfer_sizes_bytes.len(), 19);
        assert_eq!(full.gemm_sizes, [256, 512, 1024, 2048, 4096, 8192]);
        assert!(quick.transfer_sizes_bytes.len() < full.transfer_sizes_bytes.len());
        assert!(quick.gemm_sizes.len() < full.gemm_sizes.len());
        assert!(quick.time_limit() < full.time_limit());
    }

    type Change = Box<dyn Fn(&mut BenchPlan)>;

    /// Each change makes `plan`, valid as it is, invalid.
    fn assert_each_rejected(plan: &BenchPlan, cases: Vec<(&str, Change)>) {
        plan.validate().unwrap();
        for (what, change) in cases {
            let mut p = plan.clone();
            change(&mut p);
            assert!(p.validate().is_err(), "{what} should be rejected");
        }
    }

    #[test]
    fn json_round_trip_and_validation() {
        let plan = BenchPlan::preset(1, vec![TestKind::H2d, TestKind::Cpu], true);
        let text = serde_json::to_string(&plan).unwrap();
        assert!(text.contains("\"tests\":[\"h2d\",\"cpu\"]"), "{text}");
        assert_eq!(BenchPlan::from_json(&text).unwrap(), plan);

        assert!(matches!(BenchPlan::from_json("{"), Err(PlanError::Json { .. })));
        let mut bad = plan.clone();
        bad.protocol = 99;
        assert!(matches!(bad.validate(), Err(PlanError::Version { found: 99, .. })));

        let cases: Vec<(&str, Change)> = vec![
            ("no tests", Box::new(|p| p.tests.clear())),
            ("duplicate", Box::new(|p| p.tests.push(TestKind::H2d))),
            ("not a power of two", Box::new(|p| p.transfer_sizes_bytes = vec![5000])),
            ("too large", Box::new(|p| p.transfer_sizes_bytes = vec![2 * GIB])),
            ("descending", Box::new(|p| p.transfer_sizes_bytes = vec![MIB, 4 * KIB])),
            ("gemm not multiple of 16", Box::new(|p| p.gemm_sizes = vec![100])),
            ("gemm too large", Box::new(|p| p.gemm_sizes = vec![32768])),
            ("no precision", Box::new(|p| p.gemm_precisions.clear())),
            ("share zero", Box::new(|p| p.memtest_share = 0.0)),
            ("share all", Box::new(|p| p.memtest_share = 1.0)),
            ("share NaN", Box::new(|p| p.memtest_share = f64::NAN)),
            ("sustained zero", Box::new(|p| p.sustained_secs = 0)),
            ("no repetitions", Box::new(|p| p.repetitions = 0)),
            ("d2d odd", Box::new(|p| p.d2d_bytes = 3 * MIB)),
        ];
        assert_each_rejected(&plan, cases);
    }

    #[test]
    fn the_p2p_test_runs_by_default_and_its_fields_are_validated() {
        assert!(TestKind::default_set().contains(&TestKind::P2p));
        assert_eq!(TestKind::parse_list("p2p").unwrap(), [TestKind::P2p]);
        assert!(TestKind::P2p.needs_gpu());
        let plan = BenchPlan::preset(0, vec![TestKind::P2p], true);
        assert_eq!((plan.p2p_bytes, plan.p2p_latency_bytes), (64 * MIB, 4 * KIB));
        assert!(plan.p2p_gpus.is_empty(), "every GPU CUDA sees unless named");
        plan.validate().unwrap();
        let mut named = plan.clone();
        named.p2p_gpus = vec!["00000000:18:00.0".into(), "0000:2a:00.0".into()];
        named.p2p_bytes = 16 * MIB;
        named.validate().unwrap();
        assert_eq!(BenchPlan::from_json(&serde_json::to_string(&named).unwrap()).unwrap(), named);

        let cases: Vec<(&str, Change)> = vec![
            ("p2p size odd", Box::new(|p| p.p2p_bytes = 3 * MIB)),
            ("p2p size too small", Box::new(|p| p.p2p_bytes = 64 * KIB)),
            ("p2p size too large", Box::new(|p| p.p2p_bytes = 2 * GIB)),
            ("latency size too large", Box::new(|p| p.p2p_latency_bytes = 2 * MIB)),
            ("latency size odd", Box::new(|p| p.p2p_latency_bytes = 5000)),
            ("one GPU named", Box::new(|p| p.p2p_gpus = vec!["0000:18:00.0".into()])),
            ("not a bus id", Box::new(|p| p.p2p_gpus = vec!["0000:18:00.0".into(), "GPU 1".into()])),
            ("the same GPU twice", Box::new(|p| p.p2p_gpus = vec!["0000:18:00.0".into(), "00000000:18:00.0".into()])),
        ];
        assert_each_rejected(&plan, cases);
    }

    /// A plan written before the GPU-to-GPU test existed still reads, with its defaults.
    #[test]
    fn a_plan_without_the_p2p_fields_reads_with_the_defaults() {
        let plan = BenchPlan::preset(0, vec![TestKind::H2d], true);
        let mut value = serde_json::to_value(&plan).unwrap();
        let map = value.as_object_mut().unwrap();
        for key in ["p2p_bytes", "p2p_latency_bytes", "p2p_gpus"] {
            map.remove(key);
        }
        assert_eq!(BenchPlan::from_json(&value.to_string()).unwrap(), plan);
    }

    #[test]
    fn gpu_tests_leave_out_cpu() {
        let plan = BenchPlan::preset(0, vec![TestKind::Cpu, TestKind::Gemm], true);
        assert_eq!(plan.gpu_tests(), [TestKind::Gemm]);
    }
}
