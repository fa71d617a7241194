//! `BenchRun`: one finished run as saved with `-o FILE` and included in reports: the plan, what
//! every test gave, each number judged against the hardware, telemetry, and findings.

use serde::{Deserialize, Serialize};

use super::p2p::P2pMatrix;
use super::plan::{BenchPlan, TestKind};
use super::protocol::{DeviceInfo, Failure, Metric, Point, TestResult};
use super::record::{TelemetryPoint, WorkerOutcome};
use super::throttle::ClockAnalysis;
use super::unit::Unit;
use super::verdict::{Facts, Judged};
use crate::{EccChange, Finding};

/// Version of the saved run's JSON; bumped on any breaking change.
pub const BENCH_SCHEMA_VERSION: u32 = 1;

/// How a test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestStatus {
    /// It ran and every check passed.
    Passed,
    /// It ran, but a check failed (a wrong GEMM result, memory errors).
    ChecksFailed,
    /// It did not run, or broke off.
    Failed,
}

/// One test of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestRun {
    /// The test.
    pub test: TestKind,
    /// How it ended.
    pub status: TestStatus,
    /// Milliseconds from the run's start to the test's start; `None` if it never started.
    pub started_ms: Option<u64>,
    /// Milliseconds from the run's start to its end.
    pub ended_ms: Option<u64>,
    /// Every measured point, for plots.
    pub points: Vec<Point>,
    /// Its results, when it finished.
    pub result: Option<TestResult>,
    /// Why it failed, when it did.
    pub failure: Option<Failure>,
    /// Its measurements, judged.
    pub judged: Vec<Judged>,
}

/// The GPU against the CPU baseline for one kind of work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// What is compared, e.g. `FP32 GEMM: GPU (cuBLAS) vs CPU (matrixmultiply)`.
    pub label: String,
    /// The GPU's value in `unit`.
    pub gpu: f64,
    /// The CPU's value in `unit`.
    pub cpu: f64,
    /// The unit of both.
    pub unit: Unit,
    /// `gpu / cpu`.
    pub times: f64,
}

/// A whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchRun {
    /// `BENCH_SCHEMA_VERSION` of the program that wrote it.
    pub schema_version: u32,
    /// gpu-doctor's version.
    pub tool_version: String,
    /// Unix seconds when it started.
    pub started_at_unix_secs: u64,
    /// How long it took, seconds.
    pub duration_secs: f64,
    /// What was asked.
    pub plan: BenchPlan,
    /// The device as CUDA described it (the last description the worker sent).
    pub device: Option<DeviceInfo>,
    /// What the numbers were judged against.
    pub facts: Facts,
    /// Each test, in plan order.
    pub tests: Vec<TestRun>,
    /// GPU against CPU.
    pub comparisons: Vec<Comparison>,
    /// Clocks under the sustained load; `None` when it did not run or no telemetry covered it.
    pub clocks_under_load: Option<ClockAnalysis>,
    /// What a reader should act on.
    pub findings: Vec<Finding>,
    /// NVML samples over the run (memory, clocks, temperature, power, utilization, PCIe).
    pub telemetry: Vec<TelemetryPoint>,
    /// Why telemetry is missing or stopped early.
    pub telemetry_note: Option<String>,
    /// The worker process.
    pub worker: WorkerOutcome,
    /// How the worker's libraries were picked.
    pub library_notes: Vec<String>,
    /// How the GPU's memory-error counters (ECC, retired pages, remapped rows) changed over the
    /// memory test; `None` when it did not run or they were not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memtest_ecc: Option<EccChange>,
}

impl BenchRun {
    /// Whether every requested test ran and passed its checks (exit code 0 of `bench`).
    pub fn all_ran(&self) -> bool {
        self.tests.iter().all(|t| t.status == TestStatus::Passed)
    }

    /// The GPU-to-GPU matrix of the run's p2p test, where it measured one (pairs judged).
    pub fn p2p(&self) -> Option<&P2pMatrix> {
        self.tests.iter().filter(|t| t.test == TestKind::P2p).find_map(|t| t.result.as_ref()?.p2p.as_ref())
    }

    /// The judged measurement of a metric, if any test produced it.
    pub fn find_metric(&self, pred: impl Fn(&Metric) -> bool) -> Option<&Judged> {
        self.tests.iter().flat_map(|t| &t.judged).find(|j| pred(&j.measurement.metric))
    }
}
