//! The worker protocol: one `BenchEvent` JSON object per line on the worker's standard output.
//!
//! For every test the worker writes `started`, then any number of `sample` and `progress` lines,
//! then exactly one of `finished` or `failed`. Lines that are not events (a library printing to
//! standard output) are kept by the parent as noise, never parsed as results.

use std::fmt;

use crate::{ComputeCapability, CudaVersion};
use serde::{Deserialize, Serialize};

use super::p2p::{P2pMatrix, P2pMode};
use super::plan::{Precision, TestKind};
use super::stats::Stats;
use super::unit::Unit;

/// One line of the worker's output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum BenchEvent {
    /// A test began. GPU tests carry what CUDA says about the device.
    Started {
        /// The test.
        test: TestKind,
        /// The device as CUDA sees it; `None` for the CPU baselines.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        device: Option<DeviceInfo>,
    },
    /// One measured point of a series (a transfer size, a matrix size, a second of load).
    Sample {
        /// The test.
        test: TestKind,
        /// The point.
        point: Point,
    },
    /// How far a test has got.
    Progress {
        /// The test.
        test: TestKind,
        /// Steps done.
        done: u32,
        /// Steps in all.
        total: u32,
        /// The step just done, e.g. `pinned 64 MiB`.
        what: String,
    },
    /// A test ended with results.
    Finished {
        /// The test.
        test: TestKind,
        /// Its results.
        result: TestResult,
    },
    /// A test did not run or broke off.
    Failed {
        /// The test.
        test: TestKind,
        /// Why.
        failure: Failure,
    },
}

impl BenchEvent {
    /// The test the event belongs to.
    pub fn test(&self) -> TestKind {
        match self {
            Self::Started { test, .. }
            | Self::Sample { test, .. }
            | Self::Progress { test, .. }
            | Self::Finished { test, .. }
            | Self::Failed { test, .. } => *test,
        }
    }

    /// The event as one JSON line without the newline.
    pub fn to_line(&self) -> String {
        // Serializing these plain structs cannot fail: every map key is a string.
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(
                "{{\"event\":\"failed\",\"test\":\"{}\",\"failure\":{{\"kind\":\"internal\",\"reason\":\"{}\"}}}}",
                self.test(),
                e.to_string().replace('"', "'")
            )
        })
    }

    /// Parses one line; `None` for a line that is not an event.
    pub fn from_line(line: &str) -> Option<Self> {
        serde_json::from_str(line.trim()).ok()
    }
}

/// What CUDA reports about the benchmarked device.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// CUDA device ordinal.
    pub ordinal: u32,
    /// Product name.
    pub name: Option<String>,
    /// Compute capability.
    pub compute_capability: Option<ComputeCapability>,
    /// Streaming multiprocessors (`CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`).
    pub sm_count: Option<u32>,
    /// Rated boost SM clock, MHz (`CU_DEVICE_ATTRIBUTE_CLOCK_RATE`: 2520 on an RTX 4090, not the
    /// 3105 NVML gives as its highest; deprecated in CUDA 13, may be absent).
    pub clock_sm_max_mhz: Option<u32>,
    /// Peak memory clock, MHz (`CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE`; may be absent).
    pub clock_mem_max_mhz: Option<u32>,
    /// Memory bus width, bits.
    pub memory_bus_width_bits: Option<u32>,
    /// Total memory, bytes.
    pub memory_total_bytes: Option<u64>,
    /// Free memory when the worker started, bytes.
    pub memory_free_bytes: Option<u64>,
    /// `default`, `exclusive_process` or `prohibited`.
    pub compute_mode: Option<String>,
    /// CUDA version the driver supports (`cuDriverGetVersion`).
    pub driver_cuda_version: Option<CudaVersion>,
    /// PCI bus id as CUDA reports it, e.g. `0000:01:00.0`.
    pub pci_bus_id: Option<String>,
    /// cuBLAS version loaded, e.g. `12.8.4`; `None` when cuBLAS was not loaded.
    pub cublas_version: Option<String>,
    /// NVRTC version loaded, e.g. `12.8`; `None` when NVRTC was not loaded.
    pub nvrtc_version: Option<String>,
}

/// One point of a measured series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// The series, e.g. `pinned`, `pageable`, `BF16`, `memcpy`.
    pub series: String,
    /// Where on the x axis: a size in bytes, a matrix size, seconds since the test started.
    pub x: f64,
    /// The x unit.
    pub x_unit: Unit,
    /// The measured values at this point.
    pub value: Stats,
    /// Their unit.
    pub unit: Unit,
    /// Time per operation in microseconds (for transfers: the latency of one copy); `None` when
    /// not meaningful.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_us: Option<Stats>,
}

/// Which copy a device-to-device bandwidth comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CopyMethod {
    /// `cuMemcpyDtoDAsync`.
    Memcpy,
    /// A grid-stride 16-byte copy kernel compiled with NVRTC.
    Kernel,
}

/// What a measurement is, which decides what it is judged against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Metric {
    /// Host-to-device bandwidth at the plateau (the largest sizes).
    HostToDevice {
        /// Pinned (page-locked) host memory, or pageable.
        pinned: bool,
    },
    /// Device-to-host bandwidth at the plateau.
    DeviceToHost {
        /// Pinned or pageable.
        pinned: bool,
    },
    /// Both directions at once, pinned: the sum of both directions.
    Bidirectional,
    /// GPU time per small pinned copy (the smallest size, 4 KiB by default), µs: each sample is a
    /// window of up to 128 copies queued back to back behind the stream hold, so it is an inverse
    /// throughput, not the latency of one copy on its own. Saved as `transfer_latency` before.
    #[serde(alias = "transfer_latency")]
    SmallCopyTime {
        /// Host to device (or device to host).
        h2d: bool,
    },
    /// Device memory bandwidth, bytes read plus bytes written per second.
    DeviceCopy {
        /// Which copy.
        method: CopyMethod,
    },
    /// GEMM throughput at the best size for a precision.
    Gemm {
        /// The precision.
        precision: Precision,
        /// The matrix size it was reached at.
        n: u32,
    },
    /// FP32 FMA throughput.
    FmaPeak,
    /// One empty-kernel launch plus synchronize, measured on the host, µs.
    LaunchLatency,
    /// The host's time per launch of an empty kernel over 1000 launches in a row, µs: timed with GPU
    /// events around the burst, not behind a stream hold, so the host's launch rate, not a gap
    /// between kernels on the GPU.
    LaunchInterval,
    /// The largest single allocation that succeeded, bytes.
    LargestAllocation,
    /// Bytes the memory test wrote and verified.
    MemtestBytes,
    /// Words that read back wrong in the memory test.
    MemtestErrors,
    /// Multithreaded CPU SGEMM.
    CpuGemm,
    /// A naive triple loop on the CPU, single thread.
    CpuNaiveGemm,
    /// Host memcpy bandwidth, bytes read plus written per second.
    HostMemcpy,
    /// Host memcpy between the pageable and the pinned buffer of a transfer test, bytes copied per
    /// second (counted once, as a transfer counts them): the step the driver adds to a pageable
    /// copy, which goes through a pinned staging buffer.
    StagingCopy {
        /// Pageable into pinned (the host-to-device test), or pinned into pageable.
        h2d: bool,
    },
    /// GEMM throughput over the sustained-load run.
    SustainedGemm {
        /// The precision used.
        precision: Precision,
    },
    /// The slowest ordered pair's GPU-to-GPU copy bandwidth in one mode (each pair is judged in
    /// the test's `P2pMatrix`, against its own link).
    PeerCopy {
        /// How the copies were made.
        mode: P2pMode,
    },
}

/// One headline number of a test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// What it is.
    pub metric: Metric,
    /// For people, e.g. `pinned, 256 MiB and larger`.
    pub label: String,
    /// The value (the median where there were repetitions).
    pub value: f64,
    /// Its unit.
    pub unit: Unit,
    /// The repetitions behind it; `None` for a single value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<Stats>,
}

impl Measurement {
    /// A measurement whose value is the median of its repetitions.
    pub fn median(metric: Metric, label: impl Into<String>, stats: Stats, unit: Unit) -> Self {
        Self { metric, label: label.into(), value: stats.median, unit, stats: Some(stats) }
    }

    /// A measurement of a single value, without repetitions.
    pub fn single(metric: Metric, label: impl Into<String>, value: f64, unit: Unit) -> Self {
        Self { metric, label: label.into(), value, unit, stats: None }
    }
}

/// A correctness check inside a test (a GEMM against a CPU reference, a memory pattern).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// What was checked, e.g. `BF16 GEMM 256³ against a CPU reference`.
    pub name: String,
    /// Whether it passed.
    pub passed: bool,
    /// The numbers behind it.
    pub detail: String,
}

/// What a finished test produced.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TestResult {
    /// Headline numbers, judged by the parent.
    pub measurements: Vec<Measurement>,
    /// Correctness checks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<Check>,
    /// The memory test's findings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memtest: Option<MemtestReport>,
    /// The GPU-to-GPU copy test's matrix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p2p: Option<P2pMatrix>,
    /// Anything a reader should know (a size skipped for lack of memory, a fallback taken).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// What the memory test found.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MemtestReport {
    /// Bytes written and verified with every pattern.
    pub bytes_tested: u64,
    /// Patterns run, in order.
    pub patterns: Vec<String>,
    /// Words that read back wrong, over all patterns.
    pub errors_total: u64,
    /// The first wrong words (at most `MAX_REPORTED_ERRORS`).
    pub errors: Vec<MemError>,
}

/// How many wrong words a memory test report lists one by one.
pub const MAX_REPORTED_ERRORS: usize = 64;

/// One word that read back wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemError {
    /// Device virtual address of the word.
    pub address: u64,
    /// The pattern, e.g. `walking ones 3`.
    pub pattern: String,
    /// What was written.
    pub expected: u64,
    /// What was read.
    pub found: u64,
}

/// Why a test did not give results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// A library it needs could not be loaded.
    MissingLibrary,
    /// No usable GPU (no device, the ordinal does not exist, the driver is too old).
    NoDevice,
    /// The GPU is in exclusive-process or prohibited compute mode and cannot be used.
    ComputeMode,
    /// The GPU ran out of memory.
    OutOfMemory,
    /// A CUDA, cuBLAS or NVRTC call failed.
    CudaError,
    /// A sticky CUDA error (an illegal address, a failed launch, an uncorrectable ECC error, a GPU
    /// that fell off the bus) left the GPU context unusable: this test failed with it, and the
    /// tests after it did not run.
    ContextLost,
    /// The test panicked (caught in the worker).
    Panic,
    /// The worker process died (a crash, a signal) or stopped answering.
    Crash,
    /// The time limit ran out.
    Timeout,
    /// The user cancelled.
    Cancelled,
    /// The plan was refused, or the worker could not be started.
    Internal,
    /// The test is not available on this platform or device.
    Unsupported,
}

impl FailureKind {
    /// Short words for a table, e.g. `missing library`.
    pub fn label(self) -> &'static str {
        match self {
            Self::MissingLibrary => "missing library",
            Self::NoDevice => "no GPU",
            Self::ComputeMode => "compute mode",
            Self::OutOfMemory => "out of memory",
            Self::CudaError => "CUDA error",
            Self::ContextLost => "GPU context lost",
            Self::Panic => "panic",
            Self::Crash => "worker crashed",
            Self::Timeout => "timed out",
            Self::Cancelled => "cancelled",
            Self::Internal => "internal error",
            Self::Unsupported => "not supported",
        }
    }
}

/// A failure and its plain reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// The kind.
    pub kind: FailureKind,
    /// One or two sentences for people, naming the library, call or limit involved.
    pub reason: String,
}

impl Failure {
    /// A failure of `kind` for `reason`.
    pub fn new(kind: FailureKind, reason: impl Into<String>) -> Self {
        Self { kind, reason: reason.into() }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.label(), self.reason)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn stats(v: f64) -> Stats {
        Stats::from_samples(&[v]).unwrap()
    }

    fn every_event() -> Vec<BenchEvent> {
        vec![
            BenchEvent::Started {
                test: TestKind::H2d,
                device: Some(DeviceInfo {
                    ordinal: 0,
                    name: Some("NVIDIA H200".into()),
                    compute_capability: Some(ComputeCapability { major: 9, minor: 0 }),
                    sm_count: Some(132),
                    ..DeviceInfo::default()
                }),
            },
            BenchEvent::Started { test: TestKind::Cpu, device: None },
            BenchEvent::Sample {
                test: TestKind::H2d,
                point: Point {
                    series: "pinned".into(),
                    x: 4096.0,
                    x_unit: Unit::Bytes,
                    value: stats(0.5),
                    unit: Unit::GbPerS,
                    time_us: Some(stats(8.2)),
                },
            },
            BenchEvent::Progress { test: TestKind::H2d, done: 1, total: 38, what: "pinned 4 KiB".into() },
            BenchEvent::Finished {
                test: TestKind::Gemm,
                result: TestResult {
                    measurements: vec![Measurement {
                        metric: Metric::Gemm { precision: Precision::Bf16, n: 8192 },
                        label: "BF16 8192³".into(),
                        value: 790.0,
                        unit: Unit::TflopPerS,
                        stats: Some(stats(790.0)),
                    }],
                    checks: vec![Check { name: "BF16 256³".into(), passed: true, detail: "max error 0.01".into() }],
                    memtest: None,
                    p2p: None,
                    notes: vec![],
                },
            },
            BenchEvent::Finished {
                test: TestKind::Memtest,
                result: TestResult {
                    memtest: Some(MemtestReport {
                        bytes_tested: 1 << 30,
                        patterns: vec!["own address".into()],
                        errors_total: 1,
                        errors: vec![MemError {
                            address: 0x7f00_0000_0000,
                            pattern: "own address".into(),
                            expected: 1,
                            found: 3,
                        }],
                    }),
                    ..TestResult::default()
                },
            },
            BenchEvent::Failed {
                test: TestKind::Fma,
                failure: Failure::new(FailureKind::MissingLibrary, "NVRTC (libnvrtc.so) could not be loaded"),
            },
        ]
    }

    #[test]
    fn every_event_round_trips_through_one_line() {
        for event in every_event() {
            let line = event.to_line();
            assert!(!line.contains('\n'));
            assert_eq!(BenchEvent::from_line(&line).as_ref(), Some(&event), "{line}");
        }
    }

    #[test]
    fn the_wire_format_is_stable() {
        let line = BenchEvent::Failed {
            test: TestKind::H2d,
            failure: Failure::new(FailureKind::MissingLibrary, "libcuda.so.1 is missing"),
        }
        .to_line();
        assert_eq!(
            line,
            r#"{"event":"failed","test":"h2d","failure":{"kind":"missing_library","reason":"libcuda.so.1 is missing"}}"#
        );
        let m = serde_json::to_string(&Metric::HostToDevice { pinned: true }).unwrap();
        assert_eq!(m, r#"{"kind":"host_to_device","pinned":true}"#);
        assert_eq!(serde_json::to_string(&Unit::GbPerS).unwrap(), "\"GB/s\"");
    }

    #[test]
    fn noise_is_not_an_event() {
        for line in ["", "cuBLAS warning: something", "{\"event\":\"exploded\"}", "[1,2]"] {
            assert_eq!(BenchEvent::from_line(line), None, "{line:?}");
        }
    }
}
