//! STAND-IN for `gpu_doctor_probes::fleet::compare` (task F1), which is not on this branch: the
//! smallest comparison the page can draw from a real folder. It compares the driver version and the
//! GPU models only and has no benchmark figures. Deleted when `fleet::compare_folder` calls the real
//! `compare`; nothing else uses it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gpu_doctor_probes::fleet::{
    Comparison, FactColumn, FleetFinding, MANIFEST_FILE, Manifest, NodeGroup, NodeOutcome, NodeRow,
};
use gpu_doctor_probes::{Report, Severity};

use super::Progress;

/// The folder's reports (and its manifest's nodes without one) compared on two facts.
pub fn compare(dir: &Path, progress: &Progress) -> Result<Comparison, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("could not read {}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json") && p.file_name().is_some_and(|n| n != MANIFEST_FILE))
        .collect();
    files.sort();
    progress.set_total(files.len());
    let mut nodes: Vec<NodeRow> = files
        .iter()
        .map(|f| {
            let row = node(f);
            progress.add_done();
            row
        })
        .collect();
    let manifest = std::fs::read_to_string(dir.join(MANIFEST_FILE)).ok();
    for entry in manifest.and_then(|t| serde_json::from_str::<Manifest>(&t).ok()).map(|m| m.nodes).unwrap_or_default() {
        match nodes.iter_mut().find(|n| n.host == entry.host) {
            Some(n) => n.engine_name = Some(entry.engine_name),
            None => {
                // The manifest may name a report that is not (or no longer) in the folder.
                let outcome = match entry.outcome {
                    NodeOutcome::Reported { file } => NodeOutcome::Failed { reason: format!("{file} is missing") },
                    other => other,
                };
                nodes.push(row(entry.host, Some(entry.engine_name), outcome, Vec::new(), [0; 3]));
            }
        }
    }
    if nodes.is_empty() {
        return Err(format!("no reports (*.json) in {}", dir.display()));
    }
    nodes.sort_by(|a, b| a.host.cmp(&b.host));
    Ok(judge(nodes))
}

fn row(
    host: String,
    engine: Option<String>,
    outcome: NodeOutcome,
    values: Vec<Option<String>>,
    findings: [usize; 3],
) -> NodeRow {
    let differs = vec![false; values.len()];
    NodeRow {
        host,
        engine_name: engine,
        outcome,
        values,
        differs,
        metrics: Vec::new(),
        slow: Vec::new(),
        findings,
        group: None,
    }
}

/// One report file `<host>.json`: its driver version and GPU models, or why it is not a report.
fn node(path: &Path) -> NodeRow {
    let stem = path.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let file = path.file_name().map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let text =
        std::fs::File::open(path).and_then(crate::input::read_capped).map(|(b, _)| crate::input::decode_text(&b));
    let report =
        text.map_err(|e| e.to_string()).and_then(|t| serde_json::from_str::<Report>(&t).map_err(|e| e.to_string()));
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            return row(
                stem,
                None,
                NodeOutcome::Failed { reason: format!("not a gpu-doctor report: {e}") },
                Vec::new(),
                [0; 3],
            );
        }
    };
    let s = &report.snapshot;
    // A fleet folder names each report by its host (`<host>.json`); recorded machines all carry
    // the same placeholder host name, so the file's name is the one to trust.
    let host = stem;
    let driver = s.driver.value().map(|d| d.version.to_string());
    let models = s.gpus.value().filter(|g| !g.is_empty()).map(|gpus| {
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for g in gpus {
            *count.entry(g.name.as_deref().unwrap_or("unnamed GPU")).or_default() += 1;
        }
        count.iter().map(|(name, n)| format!("{n} × {name}")).collect::<Vec<_>>().join(", ")
    });
    let by = |sev: Severity| report.findings.iter().filter(|f| f.severity == sev).count();
    let findings = [by(Severity::Error), by(Severity::Warning), by(Severity::Info)];
    row(host, None, NodeOutcome::Reported { file }, vec![driver, models], findings)
}

/// Majorities, the cells off them, groups of identical nodes, and one finding per fact that differs
/// and one for the nodes without a report.
fn judge(mut nodes: Vec<NodeRow>) -> Comparison {
    let labels = [("driver.version", "Driver"), ("gpu.models", "GPUs")];
    let reported = |n: &NodeRow| matches!(n.outcome, NodeOutcome::Reported { .. });
    let total = nodes.iter().filter(|n| reported(n)).count();
    let mut facts = Vec::new();
    let mut findings = Vec::new();
    for (i, (key, label)) in labels.into_iter().enumerate() {
        let mut count: BTreeMap<Option<&str>, usize> = BTreeMap::new();
        for n in nodes.iter().filter(|n| reported(n)) {
            *count.entry(n.values[i].as_deref()).or_default() += 1;
        }
        let common = count.iter().max_by_key(|(_, c)| **c).map(|(v, c)| (v.map(str::to_owned), *c));
        let (common, held) = common.unwrap_or((None, 0));
        let mut minority = Vec::new();
        for n in nodes.iter_mut().filter(|n| reported(n)) {
            n.differs[i] = n.values[i] != common;
            if n.differs[i] {
                minority.push(n.host.clone());
            }
        }
        let majority = common.clone().filter(|_| held * 2 > total);
        if !minority.is_empty() {
            let rest = common.unwrap_or_else(|| "none".to_owned());
            let summary = format!("{} of {total} nodes differ in {label} from the rest ({rest})", minority.len());
            findings.push(FleetFinding {
                id: format!("fleet.{key}_differs"),
                severity: Severity::Warning,
                summary,
                key: Some(key.to_owned()),
                hosts: minority,
            });
        }
        facts.push(FactColumn { key: key.to_owned(), label: label.to_owned(), majority });
    }
    let failed: Vec<String> = nodes.iter().filter(|n| !reported(n)).map(|n| n.host.clone()).collect();
    if !failed.is_empty() {
        let summary = format!("{} node(s) gave no report", failed.len());
        findings.insert(
            0,
            FleetFinding {
                id: "fleet.node_failed".into(),
                severity: Severity::Error,
                summary,
                key: None,
                hosts: failed,
            },
        );
    }
    let mut by_values: BTreeMap<Vec<Option<String>>, Vec<String>> = BTreeMap::new();
    for n in nodes.iter().filter(|n| reported(n)) {
        by_values.entry(n.values.clone()).or_default().push(n.host.clone());
    }
    let mut groups: Vec<NodeGroup> = by_values.into_values().map(|hosts| NodeGroup { hosts }).collect();
    groups.sort_by_key(|g| std::cmp::Reverse(g.hosts.len()));
    for n in &mut nodes {
        n.group = groups.iter().position(|g| g.hosts.contains(&n.host));
    }
    Comparison { facts, metrics: Vec::new(), nodes, groups, findings }
}
