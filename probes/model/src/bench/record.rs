//! What a benchmark run collected before it is judged: the worker's events with their arrival
//! times, the telemetry samples and how the worker ended (`kernels`' runner fills a [`RunRecord`]).

use serde::{Deserialize, Serialize};

use super::protocol::BenchEvent;
use crate::telemetry::GpuTelemetry;

/// One telemetry sample with its time since the run started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TelemetryPoint {
    /// Milliseconds since the run started.
    pub t_ms: u64,
    /// What NVML said.
    #[serde(flatten)]
    pub sample: GpuTelemetry,
}

/// An event with its arrival time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimedEvent {
    /// Milliseconds since the run started.
    pub t_ms: u64,
    /// The event.
    #[serde(flatten)]
    pub event: BenchEvent,
}

/// How the worker process ended.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WorkerOutcome {
    /// Whether a worker was started (false when no test needed the GPU or it could not start).
    pub started: bool,
    /// Its exit code; `None` when killed by a signal or not started.
    pub exit_code: Option<i32>,
    /// The signal that killed it (Unix); `None` otherwise.
    pub signal: Option<i32>,
    /// Whether the parent stopped it (time limit or cancellation).
    pub stopped_by_parent: bool,
    /// The end of its standard error (at most 4 KiB).
    pub stderr_tail: String,
    /// Output lines that were not events (at most 20).
    pub noise: Vec<String>,
    /// The library search path it was given.
    pub library_path: Option<String>,
    /// Where it ran: bound to the GPU's NUMA node (which CPUs), or why not; `None` when no
    /// placement was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa: Option<String>,
}

/// Everything the runner collected.
#[derive(Debug, Clone, Default)]
pub struct RunRecord {
    /// Unix seconds when the run started.
    pub started_at_unix_secs: u64,
    /// How long it took, seconds.
    pub duration_secs: f64,
    /// Every event, GPU and CPU tests, in arrival order.
    pub events: Vec<TimedEvent>,
    /// Telemetry samples.
    pub telemetry: Vec<TelemetryPoint>,
    /// Why there is no telemetry (or why it stopped); `None` when it ran.
    pub telemetry_note: Option<String>,
    /// The worker process.
    pub worker: WorkerOutcome,
    /// How the GPU's memory-error counters changed over the memory test; `None` when it did not
    /// start or no source was given.
    pub memtest_ecc: Option<crate::EccChange>,
}
