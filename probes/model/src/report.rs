//! `Report`: what every export serializes.

use serde::{Deserialize, Serialize};

use crate::bench::run::BenchRun;
use crate::finding::Finding;
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
    /// A saved benchmark run (`gpu-doctor bench -o FILE`, then `report --bench FILE`); `None` when
    /// no run was included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bench: Option<BenchRun>,
}

impl Report {
    /// A report of a snapshot with the given findings. Its environment's credentials are already
    /// masked where snapshots are made: by the env probe, and where a pasted one is read.
    pub fn new(snapshot: Snapshot, findings: Vec<Finding>) -> Self {
        Self { schema_version: SCHEMA_VERSION, tool_version: TOOL_VERSION.to_owned(), snapshot, findings, bench: None }
    }
}
