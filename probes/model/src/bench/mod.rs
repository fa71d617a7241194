//! The benchmark's data: what a run asks for, what the worker reports, each number judged, and the
//! saved run (`BenchRun`) that a [`Report`](crate::Report) carries as `bench`. The measuring (the
//! worker, CUDA, the runner, the CPU baselines) is the `kernels` crate; the judging (verdicts,
//! the assembled run, the `bench.*` findings) is `gpu-doctor-judge`.
//!
//! - [`plan`]: what to measure (`BenchPlan`, presets, validation).
//! - [`protocol`]: the worker's JSON-lines events (`BenchEvent`) and their results.
//! - [`record`]: what the runner collected (events with their times, telemetry, the worker's end).
//! - [`run`]: the saved `BenchRun`; [`verdict`]: the facts a number is judged against;
//!   [`judgement`]: the verdict it got; [`throttle`]: the clocks under load.
//! - [`p2p`]: the GPU-to-GPU copy matrix.
//! - [`stats`]: median and spread of repetitions; [`unit`]: units; [`format`]: numbers and sizes for people.

pub mod format;
pub mod judgement;
pub mod p2p;
pub mod plan;
pub mod protocol;
pub mod record;
pub mod run;
pub mod stats;
pub mod throttle;
pub mod unit;
pub mod verdict;
