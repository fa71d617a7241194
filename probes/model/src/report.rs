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
    /// The date of the knowledge base it was judged with (`2026-10-28`: the newest release it
    /// records); `None` in reports written before it was recorded, or not judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kb_date: Option<String>,
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
    /// "gpu-doctor 0.1.0 · knowledge base of 2026-10-28": the version line every report shows
    /// (without the date for a report that does not carry one).
    pub fn version_line(&self) -> String {
        match &self.kb_date {
            Some(d) => format!("gpu-doctor {} · knowledge base of {d}", self.tool_version),
            None => format!("gpu-doctor {}", self.tool_version),
        }
    }

    /// A report of a snapshot with the given findings. Its environment's credentials are already
    /// masked where snapshots are made: by the env probe, and where a pasted one is read.
    pub fn new(snapshot: Snapshot, findings: Vec<Finding>) -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            tool_version: TOOL_VERSION.to_owned(),
            kb_date: None,
            snapshot,
            findings,
            bench: None,
        }
    }
}
