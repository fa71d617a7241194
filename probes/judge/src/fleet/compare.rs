//! `gpu-doctor compare`: which node is not like the others. [`compare`] turns one input per node
//! (its outcome, and its report when it gave one) into a [`Comparison`]: one [`FactColumn`] per
//! compared fact (`facts.rs` says which), one [`MetricColumn`] per benchmark headline
//! (`metrics.rs`), the value of every node, the cells where a node differs from the majority, the
//! groups of identical nodes and the fleet findings. `read.rs` reads a fleet folder or a list of
//! files into those inputs, in parallel. Pure apart from `read.rs`: the same inputs give the same
//! comparison.
//!
//! The majority rule: per column, the most common value among the reported nodes (a missing value
//! counts as a value of its own; a tie goes to the value of the first node by host name) is the
//! reference, and every node with another value differs. [`FactColumn::majority`] names it only when
//! more than half of the reported nodes hold it.

mod facts;
mod metrics;
mod read;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap};

pub use metrics::SLOW_THRESHOLD;
pub use read::{
    MAX_TOTAL_BYTES, Named, ReadFile, ReadProgress, read_files, read_folder, read_folder_counted, read_paths,
};

use gpu_doctor_model::fleet::{
    Comparison, FactColumn, FleetFinding, MetricColumn, NodeCertificate, NodeGroup, NodeOutcome, NodeRow,
};
use gpu_doctor_model::{Report, SCHEMA_VERSION, Severity};

/// Finding id: a fact where some nodes differ from the majority (one finding per fact).
pub const FACT_DIFFERS: &str = "fleet.fact_differs";
/// Finding id: nodes that gave no report (unreachable, timed out, not a report).
pub const NODE_FAILED: &str = "fleet.node_failed";
/// Finding id: nodes whose own report has error-level findings.
pub const NODE_ERRORS: &str = "fleet.node_errors";
/// Finding id: nodes slower than the fleet median on a benchmark figure (one finding per figure).
pub const BENCH_SLOW: &str = "fleet.bench_slow";
/// Finding id: nodes whose certificate failed (FAIL, altered, or unreadable).
pub const CERTIFICATE_FAILED: &str = "fleet.certificate_failed";
/// Finding id: nodes whose certificate is INCOMPLETE (a part could not run), or that were to be
/// certified but gave no certificate.
pub const CERTIFICATE_INCOMPLETE: &str = "fleet.certificate_incomplete";
/// Finding id: nodes whose report a newer gpu-doctor wrote (a `schema_version` above this one's).
pub const NEWER_SCHEMA: &str = "fleet.newer_schema";

/// How many host names a finding's sentence lists before "and N more" (its `hosts` has them all).
const HOSTS_IN_SUMMARY: usize = 5;

/// One node to compare: what the engine (or the folder) says about it, and its report if it gave one.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeInput {
    /// Host name: the report's, else the engine's or the file's.
    pub host: String,
    /// The engine's own name for it, when it came from a fleet run's manifest.
    pub engine_name: Option<String>,
    /// Whether it reported. A node whose outcome is `Reported` but has no `report` is treated as
    /// failed.
    pub outcome: NodeOutcome,
    /// Its report.
    pub report: Option<Report>,
    /// Its certificate's verdict (`fleet … --certify`), when it has one.
    pub certificate: Option<NodeCertificate>,
}

/// A compared column's identity: display rank, then key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ColumnId {
    /// Display order: the fact's family, then its index within the family (a GPU's index).
    pub rank: (u8, u32),
    /// Stable key.
    pub key: String,
}

/// Compares the nodes. Nodes are sorted by host name; a node without a report is a row with its
/// outcome and takes part in no column. When any node has a certificate (`fleet … --certify`),
/// the rows are sorted by its verdict, the failed nodes first (FAIL, altered or unreadable, and
/// nodes that gave no report), then INCOMPLETE (or no certificate), PASS WITH WARNINGS, PASS; by
/// host name within each.
pub fn compare(mut nodes: Vec<NodeInput>) -> Comparison {
    nodes.sort_by(|a, b| a.host.cmp(&b.host));
    for n in &mut nodes {
        if n.report.is_none() && matches!(n.outcome, NodeOutcome::Reported { .. }) {
            n.outcome = NodeOutcome::Failed { reason: "the report is missing".to_owned() };
        }
    }
    // Every node's facts and metrics, keyed by column.
    let node_facts: Vec<Option<facts::Facts>> = nodes.iter().map(|n| n.report.as_ref().map(facts::facts)).collect();
    let node_metrics: Vec<Option<metrics::Figures>> =
        nodes.iter().map(|n| n.report.as_ref().map(metrics::metrics)).collect();

    let mut fact_ids: BTreeMap<ColumnId, String> = BTreeMap::new();
    for (id, (label, _)) in node_facts.iter().flatten().flat_map(|m| m.iter()) {
        fact_ids.entry(id.clone()).or_insert_with(|| label.clone());
    }
    let mut metric_ids: BTreeMap<ColumnId, metrics::MetricDef> = BTreeMap::new();
    for (id, (def, _)) in node_metrics.iter().flatten().flat_map(|m| m.iter()) {
        metric_ids.entry(id.clone()).or_insert_with(|| def.clone());
    }

    let mut rows: Vec<NodeRow> = nodes
        .iter()
        .zip(&node_facts)
        .zip(&node_metrics)
        .map(|((n, f), m)| NodeRow {
            host: n.host.clone(),
            engine_name: n.engine_name.clone(),
            outcome: n.outcome.clone(),
            values: f
                .as_ref()
                .map_or_else(Vec::new, |f| fact_ids.keys().map(|id| f.get(id).and_then(|v| v.1.clone())).collect()),
            differs: Vec::new(),
            metrics: m.as_ref().map_or_else(Vec::new, |m| metric_ids.keys().map(|id| m.get(id).map(|v| v.1)).collect()),
            slow: Vec::new(),
            findings: n.report.as_ref().map_or([0; 3], tally),
            group: None,
            certificate: n.certificate.clone(),
        })
        .collect();

    let mut findings = Vec::new();
    let facts = fact_columns(&fact_ids, &mut rows, &mut findings);
    let metrics = metric_columns(&metric_ids, &mut rows, &mut findings);
    node_findings(&nodes, &rows, &mut findings);
    let groups = group(&mut rows);
    if rows.iter().any(|r| r.certificate.is_some()) {
        certificate_findings(&rows, &mut findings);
        // Stable: by host name within one rank.
        rows.sort_by_key(certified_rank);
    }
    findings.sort_by(|a, b| (a.severity, &a.id, &a.key).cmp(&(b.severity, &b.id, &b.key)));
    Comparison { facts, metrics, nodes: rows, groups, findings }
}

/// Where a row sorts among certified nodes: failed certificates and nodes that gave no report
/// first, then INCOMPLETE or no certificate, PASS WITH WARNINGS, PASS.
fn certified_rank(row: &NodeRow) -> u8 {
    match (&row.certificate, &row.outcome) {
        (_, outcome) if !matches!(outcome, NodeOutcome::Reported { .. }) => 0,
        (Some(c), _) => c.rank(),
        (None, _) => 1,
    }
}

/// The fleet findings of certified nodes: failed certificates (an error) and incomplete or missing
/// ones (a warning), each naming its nodes.
fn certificate_findings(rows: &[NodeRow], findings: &mut Vec<FleetFinding>) {
    let reported = |r: &&NodeRow| matches!(r.outcome, NodeOutcome::Reported { .. });
    let failed: Vec<String> = rows
        .iter()
        .filter(reported)
        .filter(|r| r.certificate.as_ref().is_some_and(NodeCertificate::failed))
        .map(|r| r.host.clone())
        .collect();
    let incomplete: Vec<String> = rows
        .iter()
        .filter(reported)
        .filter(|r| r.certificate.as_ref().is_none_or(|c| c.rank() == 1))
        .map(|r| r.host.clone())
        .collect();
    if !failed.is_empty() {
        findings.push(FleetFinding {
            id: CERTIFICATE_FAILED.to_owned(),
            severity: Severity::Error,
            summary: format!(
                "{} of {} certified nodes failed their certificate (FAIL, altered or unreadable): {}",
                failed.len(),
                rows.iter().filter(|r| r.certificate.is_some()).count(),
                host_list(&failed)
            ),
            key: None,
            hosts: failed,
        });
    }
    if !incomplete.is_empty() {
        findings.push(FleetFinding {
            id: CERTIFICATE_INCOMPLETE.to_owned(),
            severity: Severity::Warning,
            summary: format!(
                "{} node(s) have an INCOMPLETE certificate or none (a part could not run): {}",
                incomplete.len(),
                host_list(&incomplete)
            ),
            key: None,
            hosts: incomplete,
        });
    }
}

/// Errors, warnings and infos among a report's findings.
fn tally(report: &Report) -> [usize; 3] {
    let mut counts = [0; 3];
    for f in &report.findings {
        counts[match f.severity {
            Severity::Error => 0,
            Severity::Warning => 1,
            Severity::Info => 2,
        }] += 1;
    }
    counts
}

/// The reported rows.
fn reported(rows: &[NodeRow]) -> impl Iterator<Item = (usize, &NodeRow)> {
    rows.iter().enumerate().filter(|(_, r)| matches!(r.outcome, NodeOutcome::Reported { .. }))
}

/// The most common value of column `col` among the reported rows (ties: the first row's) and how
/// many rows hold it.
fn mode(rows: &[NodeRow], col: usize) -> (Option<String>, usize) {
    let mut counts: HashMap<Option<&str>, (usize, usize)> = HashMap::new();
    for (i, r) in reported(rows) {
        let e = counts.entry(r.values[col].as_deref()).or_insert((0, i));
        e.0 += 1;
    }
    counts
        .into_iter()
        .max_by(|a, b| a.1.0.cmp(&b.1.0).then(b.1.1.cmp(&a.1.1)))
        .map_or((None, 0), |(v, (count, _))| (v.map(str::to_owned), count))
}

/// The fact columns: majority, `differs` per cell, and a `fleet.fact_differs` finding per column
/// where some node differs.
fn fact_columns(
    ids: &BTreeMap<ColumnId, String>,
    rows: &mut [NodeRow],
    findings: &mut Vec<FleetFinding>,
) -> Vec<FactColumn> {
    let total = reported(rows).count();
    let mut columns = Vec::with_capacity(ids.len());
    for (col, (id, label)) in ids.iter().enumerate() {
        let (reference, count) = mode(rows, col);
        let mut minority: BTreeMap<Option<String>, Vec<String>> = BTreeMap::new();
        for r in rows.iter_mut() {
            if !matches!(r.outcome, NodeOutcome::Reported { .. }) {
                continue;
            }
            let differs = r.values[col] != reference;
            r.differs.push(differs);
            if differs {
                minority.entry(r.values[col].clone()).or_default().push(r.host.clone());
            }
        }
        let majority = if count * 2 > total { reference.clone() } else { None };
        if !minority.is_empty() {
            findings.push(fact_differs(&id.key, label, &minority, (reference.as_deref(), count), total));
        }
        columns.push(FactColumn { key: id.key.clone(), label: label.clone(), majority });
    }
    columns
}

/// A value for a sentence.
fn shown(value: Option<&str>) -> &str {
    value.unwrap_or("not reported")
}

/// The first [`HOSTS_IN_SUMMARY`] items, each written by `each`, then `and N more`:
/// `a, b, c, d, e and 4 more`.
fn listed<T>(items: &[T], each: impl Fn(&T) -> String) -> String {
    let mut text = items.iter().take(HOSTS_IN_SUMMARY).map(each).collect::<Vec<_>>().join(", ");
    if items.len() > HOSTS_IN_SUMMARY {
        text.push_str(&format!(" and {} more", items.len() - HOSTS_IN_SUMMARY));
    }
    text
}

/// `a, b, c, d, e and 4 more`.
fn host_list(hosts: &[String]) -> String {
    listed(hosts, String::clone)
}

/// "3 of 64 nodes have driver 535.104.05 while the rest have 570.124.06".
fn fact_differs(
    key: &str,
    label: &str,
    minority: &BTreeMap<Option<String>, Vec<String>>,
    (reference, count): (Option<&str>, usize),
    total: usize,
) -> FleetFinding {
    let hosts: Vec<String> = {
        let mut h: Vec<String> = minority.values().flatten().cloned().collect();
        h.sort();
        h
    };
    // `Driver` reads `driver` in a sentence; `GPU0 link` and `CUDA toolkits` stay as they are.
    let mut chars = label.chars();
    let what = match (chars.next(), chars.next()) {
        (Some(first), Some(second)) if second.is_lowercase() => {
            format!("{}{}", first.to_lowercase(), &label[first.len_utf8()..])
        }
        _ => label.to_owned(),
    };
    let rest = if count * 2 > total {
        reference.map_or_else(|| "the rest report none".to_owned(), |r| format!("the rest have {r}"))
    } else {
        format!("the most common is {} ({count} nodes)", shown(reference))
    };
    let summary = match minority.iter().next() {
        Some((value, on)) if minority.len() == 1 => {
            let have = value.as_ref().map_or_else(|| format!("report no {what}"), |v| format!("have {what} {v}"));
            format!("{} of {total} nodes {have} while {rest}: {}", on.len(), host_list(on))
        }
        _ => {
            let each: Vec<String> =
                minority.iter().map(|(v, on)| format!("{} on {}", shown(v.as_deref()), host_list(on))).collect();
            format!("{} of {total} nodes differ in {what} ({}) while {rest}", hosts.len(), each.join("; "))
        }
    };
    FleetFinding { id: FACT_DIFFERS.to_owned(), severity: Severity::Warning, summary, key: Some(key.to_owned()), hosts }
}

/// The metric columns: median, `slow` per cell, and a `fleet.bench_slow` finding per metric where
/// some node is slow.
fn metric_columns(
    ids: &BTreeMap<ColumnId, metrics::MetricDef>,
    rows: &mut [NodeRow],
    findings: &mut Vec<FleetFinding>,
) -> Vec<MetricColumn> {
    let mut columns = Vec::with_capacity(ids.len());
    for (col, (id, def)) in ids.iter().enumerate() {
        let values: Vec<f64> = reported(rows).filter_map(|(_, r)| r.metrics[col]).collect();
        let median = metrics::median(&values);
        let mut slow = Vec::new();
        for r in rows.iter_mut().filter(|r| matches!(r.outcome, NodeOutcome::Reported { .. })) {
            let is_slow = match (r.metrics[col], median) {
                (Some(v), Some(m)) => values.len() >= metrics::MIN_NODES && metrics::is_slow(v, m, def.lower_is_better),
                _ => false,
            };
            r.slow.push(is_slow);
            if let (true, Some(v)) = (is_slow, r.metrics[col]) {
                slow.push((r.host.clone(), v));
            }
        }
        if let (false, Some(m)) = (slow.is_empty(), median) {
            findings.push(metrics::slow_finding(&id.key, def, &slow, m, values.len()));
        }
        columns.push(MetricColumn {
            key: id.key.clone(),
            label: def.label.clone(),
            unit: def.unit.clone(),
            lower_is_better: def.lower_is_better,
            median,
        });
    }
    columns
}

/// `fleet.node_failed` (nodes without a report) and `fleet.node_errors` (nodes with error findings).
fn node_findings(nodes: &[NodeInput], rows: &[NodeRow], findings: &mut Vec<FleetFinding>) {
    let failed: Vec<&NodeRow> = rows.iter().filter(|r| !matches!(r.outcome, NodeOutcome::Reported { .. })).collect();
    if !failed.is_empty() {
        let each = listed(&failed, |r| format!("{} ({})", r.host, r.outcome.describe()));
        findings.push(FleetFinding {
            id: NODE_FAILED.to_owned(),
            severity: Severity::Error,
            summary: format!("{} of {} nodes gave no report: {each}", failed.len(), rows.len()),
            key: None,
            hosts: failed.iter().map(|r| r.host.clone()).collect(),
        });
    }
    let newer: Vec<(&str, u32)> = nodes
        .iter()
        .filter_map(|n| Some((n.host.as_str(), n.report.as_ref()?.schema_version)))
        .filter(|(_, v)| *v > SCHEMA_VERSION)
        .collect();
    if !newer.is_empty() {
        let each = listed(&newer, |(host, v)| format!("{host} ({v})"));
        findings.push(FleetFinding {
            id: NEWER_SCHEMA.to_owned(),
            severity: Severity::Warning,
            summary: format!(
                "{} reports were written by a newer gpu-doctor (schema version above {SCHEMA_VERSION}); what this \
                 one does not know of them is left out of the comparison: {each}",
                newer.len()
            ),
            key: None,
            hosts: newer.iter().map(|(h, _)| (*h).to_owned()).collect(),
        });
    }
    let total = reported(rows).count();
    let mut ids: Vec<&str> = Vec::new();
    let mut hosts = Vec::new();
    for n in nodes {
        let errors: Vec<&str> = n
            .report
            .iter()
            .flat_map(|r| &r.findings)
            .filter(|f| f.severity == Severity::Error)
            .map(|f| f.id.as_str())
            .collect();
        if !errors.is_empty() {
            hosts.push(n.host.clone());
            ids.extend(errors);
        }
    }
    if !hosts.is_empty() {
        ids.sort_unstable();
        ids.dedup();
        findings.push(FleetFinding {
            id: NODE_ERRORS.to_owned(),
            severity: Severity::Error,
            summary: format!(
                "{} of {total} nodes have error-level findings of their own ({}): {}",
                hosts.len(),
                ids.join(", "),
                host_list(&hosts)
            ),
            key: None,
            hosts,
        });
    }
}

/// Groups the reported rows by identical fact values, largest group first (ties: first host).
fn group(rows: &mut [NodeRow]) -> Vec<NodeGroup> {
    let mut by_values: HashMap<Vec<Option<String>>, Vec<usize>> = HashMap::new();
    for (i, r) in reported(rows) {
        by_values.entry(r.values.clone()).or_default().push(i);
    }
    let mut members: Vec<Vec<usize>> = by_values.into_values().collect();
    members.sort_by(|a, b| b.len().cmp(&a.len()).then(a[0].cmp(&b[0])));
    members
        .into_iter()
        .enumerate()
        .map(|(g, idx)| {
            for &i in &idx {
                rows[i].group = Some(g);
            }
            NodeGroup { hosts: idx.iter().map(|&i| rows[i].host.clone()).collect() }
        })
        .collect()
}
