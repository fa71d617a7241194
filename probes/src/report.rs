//! `Report`: what every export serializes, and the `Finding` shape diagnosis fills.

use serde::{Deserialize, Serialize};

use crate::{SCHEMA_VERSION, Snapshot, TOOL_VERSION};

/// A snapshot with what was concluded from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// `SCHEMA_VERSION` of the program that wrote it.
    pub schema_version: u32,
    /// Version of gpu-doctor that wrote it.
    pub tool_version: String,
    /// What the probes found.
    pub snapshot: Snapshot,
    /// Problems and explanations; empty until diagnosis rules run.
    pub findings: Vec<Finding>,
    /// A saved benchmark run (`gpu-doctor bench -o FILE`, then `report --bench FILE`), kept as the
    /// JSON the bench command wrote: its type lives in the kernels crate, which depends on this one.
    /// `None` when no run was included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bench: Option<serde_json::Value>,
}

impl Report {
    /// A report of a snapshot with the given findings. Its environment's credentials are already
    /// masked where snapshots are made: by the env probe, and where a pasted one is read.
    pub fn new(snapshot: Snapshot, findings: Vec<Finding>) -> Self {
        Self { schema_version: SCHEMA_VERSION, tool_version: TOOL_VERSION.to_owned(), snapshot, findings, bench: None }
    }
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

/// The fixed list of finding categories shared by every export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    DriverTooOldForRuntime,
    ArchNotInBuild,
    CpuOnlyBuild,
    CudnnMissingOrMismatch,
    ToolkitVsFrameworkMismatchHarmless,
    MultipleToolkitsConflict,
    EnvVarMisconfig,
    NoDriverOrGpuNotVisible,
    WslSpecific,
    PcieLinkDegraded,
    /// A benchmark measured less (or more) than the hardware should give, or a result was wrong.
    Benchmark,
    Other,
}

/// One conclusion about the machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable dotted id, e.g. `driver.too_old_for_runtime`.
    pub id: String,
    /// Category from the fixed list.
    pub category: Category,
    /// Error, warning or info.
    pub severity: Severity,
    /// One line.
    pub summary: String,
    /// Why it matters.
    pub detail: String,
    /// The facts it rests on.
    pub evidence: Vec<String>,
    /// The exact step to take on this machine.
    pub fix: Option<String>,
}
