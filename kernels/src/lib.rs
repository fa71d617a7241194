//! GPU benchmarks judged against the hardware, run in an isolated worker process.
//!
//! - [`plan`]: what to measure (`BenchPlan`, presets, validation).
//! - [`protocol`]: the worker's JSON-lines events (`BenchEvent`).
//! - [`worker`]: the worker's main loop (`gpu-doctor bench-worker`); the only code that loads CUDA,
//!   through the private `gpu` module (cudarc: driver, cuBLAS, NVRTC).
//! - [`runner`]: the parent side: starts the worker with a prepared library path ([`libs`]),
//!   enforces a time limit and cancellation, samples NVML telemetry, runs the CPU baselines ([`cpu`]),
//!   and binds the worker to the GPU's NUMA node ([`numa`]).
//! - [`run`]: the saved `BenchRun`, each measurement judged ([`verdict`], [`facts`]) and clocks under
//!   load analysed ([`throttle`]).
//! - [`stats`]: median and spread of repetitions.
//!
//! `unsafe` is denied in the workspace; this crate allows it block by block (`#[allow(unsafe_code)]`)
//! around FFI calls, each with a `// SAFETY:` comment, which clippy enforces here.
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod cpu;
pub mod facts;
pub mod format;
mod gpu;
pub mod libs;
pub mod numa;
pub mod patterns;
pub mod plan;
pub mod protocol;
pub mod rng;
pub mod run;
pub mod runner;
pub mod stats;
pub mod throttle;
pub mod verdict;
pub mod worker;

pub use plan::{BenchPlan, PlanError, Precision, TestKind};
pub use protocol::{BenchEvent, Failure, FailureKind};
pub use run::{BenchRun, TestStatus};
pub use runner::{EccSource, RunOptions, RunRecord, TelemetrySource, WorkerSpec};
pub use worker::worker_main;
