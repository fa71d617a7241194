//! What is on this machine: the `Snapshot` model (`model`), the `Host` trait, the probes and the text parsers.
//!
//! Probes never touch the OS directly; they ask a [`host::Host`]. [`probe::collect`] runs them all
//! (concurrently where they do not depend on each other) and returns a [`Snapshot`].

pub mod bench;
pub mod compat;
pub mod diagnose;
pub mod fleet;
pub mod host;
pub mod model;
pub mod parse;
pub mod probe;
mod report;
pub mod rewrite;
pub mod shell;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod test_util;
#[cfg(any(test, feature = "test-support"))]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::missing_panics_doc)]
pub mod testing;
pub mod time;

pub use model::{
    ComputeCapability, CudaVersion, CudnnVersion, DriverVersion, ObservedMessage, Origin, Outcome, Probed,
    SCHEMA_VERSION, Snapshot, Trace, TraceEntry, VersionError,
};
pub use report::{Category, Change, DriverLoadProblem, Finding, InstallFlag, PlanRef, PlanTarget, Report, Severity};

/// This build's version, written into every snapshot and report.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");
