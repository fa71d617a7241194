//! The benchmark model: what a run asks for, what the worker reports, how each number is judged,
//! and the saved run (`BenchRun`) that a [`Report`](crate::Report) carries as `bench`. It lives
//! here, beside the report, so that the report is typed; the measuring itself (the worker, CUDA,
//! the runner, the CPU baselines) is in the `kernels` crate, which re-exports these modules under
//! its own root. Findings about a run come from the `bench.*` rules in `diagnose`.
//!
//! - [`plan`]: what to measure (`BenchPlan`, presets, validation).
//! - [`protocol`]: the worker's JSON-lines events (`BenchEvent`) and their results.
//! - [`record`]: what the runner collected (events with their times, telemetry, the worker's end).
//! - [`run`]: the saved `BenchRun`, each measurement judged ([`verdict`]) and clocks under load
//!   analysed ([`throttle`]).
//! - [`p2p`]: the GPU-to-GPU copy matrix.
//! - [`stats`]: median and spread of repetitions; [`format`]: numbers and sizes for people.

pub mod format;
pub mod p2p;
pub mod plan;
pub mod protocol;
pub mod record;
pub mod run;
pub mod stats;
pub mod throttle;
pub mod verdict;
