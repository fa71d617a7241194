//! GPU benchmarks judged against the hardware, run in an isolated worker process.
//!
//! The benchmark's data (the plan, the worker's events, the judged run with its verdicts) is the
//! probes crate's `bench` model, so that a `Report` can carry a run as typed data; it is
//! re-exported here under the same names (`plan`, `protocol`, `run`, `verdict`, `throttle`,
//! `stats`, `format`, `p2p`). This crate does the measuring:
//!
//! - [`worker`]: the worker's main loop (`gpu-doctor bench-worker`); the only code that loads CUDA,
//!   through the private `gpu` module (cudarc: driver, cuBLAS, NVRTC).
//! - [`runner`]: the parent side: starts the worker with a prepared library path ([`libs`]),
//!   enforces a time limit and cancellation, samples NVML telemetry, runs the CPU baselines ([`cpu`]),
//!   and binds the worker to the GPU's NUMA node ([`numa`]).
//! - [`facts`]: what the numbers are judged against, from the snapshot and CUDA's description.
//! - [`timing`]: how long to warm up and how many operations one pair of timing events spans.
//!
//! `unsafe` is denied in the workspace; this crate allows it block by block (`#[allow(unsafe_code)]`)
//! around FFI calls, each with a `// SAFETY:` comment, which clippy enforces here.
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod cpu;
mod device;
pub mod facts;
mod gpu;
pub mod libs;
pub mod numa;
pub mod patterns;
pub mod rng;
pub mod runner;
pub mod timing;
pub mod worker;

pub use runner::{EccSource, RunOptions, RunTelemetry, WorkerSpec};
pub use worker::worker_main;
