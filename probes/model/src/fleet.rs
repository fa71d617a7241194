//! The fleet data model, shared by the engines (which write a folder of reports), `compare` (which
//! reads it) and the window (which draws the comparison). Every type serializes: `compare --json`
//! prints a [`Comparison`], and the folder's `fleet.json` is a [`Manifest`].

use serde::{Deserialize, Serialize};

use crate::Severity;
use crate::certify::Verdict;

/// The name of the manifest inside a fleet folder; every other `*.json` there is one node's report.
pub const MANIFEST_FILE: &str = "fleet.json";

/// What one `gpu-doctor fleet` run did, written beside the reports as `fleet.json`. A node that
/// failed is an entry with its reason, so no node is ever silently missing from a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Manifest {
    /// `slurm`, `k8s` or `ssh`.
    pub engine: String,
    /// When the run started, RFC 3339 in UTC.
    pub started: String,
    /// One entry per node asked, in the order the engine listed them.
    pub nodes: Vec<NodeEntry>,
}

/// One node of a fleet run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeEntry {
    /// The host name, as the node reports it (or as the engine named it when there is no report);
    /// also the report's file name, `<host>.json`.
    pub host: String,
    /// The engine's own name for the node (SLURM node name, Kubernetes node and pod, the SSH
    /// destination as the user wrote it), kept because it is what the user types next.
    pub engine_name: String,
    /// What became of it.
    pub outcome: NodeOutcome,
    /// How long the node took, in seconds; `None` when it was never started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// With `--certify`: the node's certificate file inside the fleet folder,
    /// `<report stem>.certificate.json`; `None` when none was asked for or none came back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate: Option<String>,
}

/// The suffix of a node's certificate file in a fleet folder (beside its report `<stem>.json`).
pub const CERTIFICATE_SUFFIX: &str = ".certificate.json";

/// Whether a node gave a report, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum NodeOutcome {
    /// A report was written to `file` (relative to the fleet folder).
    Reported { file: String },
    /// The node did not answer within the per-node timeout.
    TimedOut,
    /// The node could not be reached or refused (ssh's or the engine's message, cleaned for display).
    Unreachable { reason: String },
    /// The node answered but has no `gpu-doctor` on its PATH (or at the path given).
    NoGpuDoctor { reason: String },
    /// gpu-doctor ran but failed, or printed something that is not a report.
    Failed { reason: String },
}

impl NodeOutcome {
    /// The report's path inside the fleet folder `dir`: only for `Reported`, and only when `file` is
    /// a bare file name, so a manifest cannot point a reader outside its folder (`../x.json`).
    pub fn report_path(&self, dir: &std::path::Path) -> Option<std::path::PathBuf> {
        let Self::Reported { file } = self else { return None };
        let name = std::path::Path::new(file);
        (name.file_name() == Some(name.as_os_str())).then(|| dir.join(name))
    }

    /// One line for a table cell: `ok`, `timed out`, or the reason.
    pub fn describe(&self) -> String {
        match self {
            Self::Reported { .. } => "ok".to_owned(),
            Self::TimedOut => "timed out".to_owned(),
            Self::Unreachable { reason } => format!("unreachable: {reason}"),
            Self::NoGpuDoctor { reason } => format!("no gpu-doctor: {reason}"),
            Self::Failed { reason } => format!("failed: {reason}"),
        }
    }
}

/// The comparison of a fleet's nodes: a table of nodes × facts, the groups of identical nodes,
/// the cells where a node differs from the majority, and the fleet-level findings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Comparison {
    /// The compared facts, in display order (driver, CUDA level, GPUs, links, ECC, toolkits, cuDNN,
    /// each environment's framework builds, findings by severity).
    pub facts: Vec<FactColumn>,
    /// Benchmark figures compared across nodes (one slow node is the case people miss).
    pub metrics: Vec<MetricColumn>,
    /// One row per node, reported or not, sorted by host name.
    pub nodes: Vec<NodeRow>,
    /// Nodes whose fact values are all equal, largest group first.
    pub groups: Vec<NodeGroup>,
    /// Fleet-level conclusions, errors first.
    pub findings: Vec<FleetFinding>,
}

/// One compared fact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FactColumn {
    /// Stable key, e.g. `driver.version`, `gpu.models`, `env./opt/venv.torch`.
    pub key: String,
    /// Column heading for people.
    pub label: String,
    /// The value most nodes have; `None` when no value is held by more than half of the reported
    /// nodes (then every node that differs from the most common value is still marked).
    pub majority: Option<String>,
}

/// One compared benchmark figure (higher is better unless `lower_is_better`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricColumn {
    /// Stable key, e.g. `bench.d2d.gbps`.
    pub key: String,
    /// Column heading for people.
    pub label: String,
    /// Unit shown after the value (`GB/s`, `TFLOP/s`, `µs`).
    pub unit: String,
    /// Whether a smaller value is the better one (latency).
    pub lower_is_better: bool,
    /// Median over the nodes that measured it.
    pub median: Option<f64>,
}

/// One node's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeRow {
    /// Host name (the report's, else the engine's).
    pub host: String,
    /// The engine's name for it, when it came from a fleet run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_name: Option<String>,
    /// Whether it reported; a node without a report has empty `values`.
    pub outcome: NodeOutcome,
    /// One value per entry of [`Comparison::facts`], same order; `None` when the report lacks it.
    pub values: Vec<Option<String>>,
    /// `differs[i]` is true where `values[i]` is not the column's majority value.
    pub differs: Vec<bool>,
    /// One value per entry of [`Comparison::metrics`].
    pub metrics: Vec<Option<f64>>,
    /// `slow[i]` is true where `metrics[i]` is an outlier on the bad side of the median.
    pub slow: Vec<bool>,
    /// The node's own findings: errors, warnings, infos.
    pub findings: [usize; 3],
    /// Index into [`Comparison::groups`]; `None` for a node without a report.
    pub group: Option<usize>,
    /// Its certificate's verdict (`fleet … --certify`); `None` when it has no certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate: Option<NodeCertificate>,
}

/// What a node's certificate says, as `compare` shows it beside the node's figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeCertificate {
    /// The verdict; `None` when the file could not be read as a certificate.
    pub verdict: Option<Verdict>,
    /// The level run (1 to 4).
    pub level: Option<u8>,
    /// Whether its SHA-256 holds (an altered certificate is shown as such, and sorted with the failed).
    pub intact: bool,
    /// Its first reason, or why it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Its measured figures (the benchmark's and the stress test's), each `check on subject: value unit`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<String>,
}

impl NodeCertificate {
    /// Short words for a table cell: `FAIL (level 2)`, `ALTERED`, `unreadable`.
    pub fn label(&self) -> String {
        match (self.verdict, self.intact) {
            (None, _) => "unreadable".to_owned(),
            (Some(_), false) => "ALTERED".to_owned(),
            (Some(v), true) => match self.level {
                Some(l) => format!("{} (level {l})", v.label()),
                None => v.label().to_owned(),
            },
        }
    }

    /// Whether the node failed its certification: FAIL, an altered file, or one that cannot be read.
    pub fn failed(&self) -> bool {
        !self.intact || matches!(self.verdict, None | Some(Verdict::Fail))
    }

    /// Where the node sorts in a comparison of certified nodes: failed first, then INCOMPLETE,
    /// PASS WITH WARNINGS, PASS.
    pub fn rank(&self) -> u8 {
        match self.verdict {
            _ if self.failed() => 0,
            Some(Verdict::Incomplete) => 1,
            Some(Verdict::PassWithWarnings) => 2,
            _ => 3,
        }
    }
}

/// Nodes with identical fact values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeGroup {
    /// Host names, sorted.
    pub hosts: Vec<String>,
}

/// A conclusion about the fleet as a whole, e.g. "3 of 64 nodes run driver 535 while the rest run 570".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FleetFinding {
    /// Stable dotted id, e.g. `fleet.driver_differs`, `fleet.node_failed`, `fleet.bench_slow`.
    pub id: String,
    /// Error, warning or info.
    pub severity: Severity,
    /// One line.
    pub summary: String,
    /// The fact or metric key it is about, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The nodes it names (the minority, the failed, the slow).
    pub hosts: Vec<String>,
}
