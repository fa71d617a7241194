//! `compare` over a synthetic 64-node fleet (`gpu_doctor_tests::fleet`): one node of each
//! perturbation; every perturbation is flagged, on exactly its node, and nothing else is.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use gpu_doctor_judge::fleet::compare::{Named, compare, read_folder};
use gpu_doctor_model::Severity;
use gpu_doctor_tests::fleet::{Perturbation, base_snapshot, fleet, host, write};

const NODES: usize = 64;

/// The binary's reader: the probes' capped reader of regular files (no symlink inside a folder).
fn read(path: &std::path::Path, named: Named) -> Result<Vec<u8>, String> {
    use gpu_doctor_probes::host::{Links, MAX_FILE_BYTES, read_regular_file};
    let links = if named == Named::ByUser { Links::Follow } else { Links::Refuse };
    read_regular_file(path, MAX_FILE_BYTES, links).map_err(|e| e.to_string())
}

fn perturbed() -> Vec<(usize, Perturbation)> {
    Perturbation::ALL.iter().enumerate().map(|(k, p)| (k * 9 + 4, *p)).collect()
}

fn at(p: Perturbation) -> String {
    host(perturbed().iter().find(|(_, q)| *q == p).unwrap().0)
}

#[test]
fn every_perturbation_is_flagged_on_its_node_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &fleet(&base_snapshot(), NODES, &perturbed())).unwrap();
    // Through the folder and its manifest, as `gpu-doctor compare DIR` reads it.
    let c = compare(read_folder(dir.path(), &read).unwrap());
    let got: Vec<(&str, Option<&str>, Vec<&str>, Severity)> = c
        .findings
        .iter()
        .map(|f| (f.id.as_str(), f.key.as_deref(), f.hosts.iter().map(String::as_str).collect(), f.severity))
        .collect();
    use Perturbation::*;
    use Severity::{Error, Warning};
    let want: Vec<(&str, Option<&str>, Vec<String>, Severity)> = vec![
        // The CPU-only torch is an error of that node's own (framework.cpu_only_build).
        ("fleet.node_errors", None, vec![at(CpuTorch)], Error),
        ("fleet.node_failed", None, vec![at(Failed)], Error),
        ("fleet.bench_slow", Some("bench.h2d"), vec![at(SlowBench)], Warning),
        ("fleet.fact_differs", Some("driver.cuda"), vec![at(OldDriver)], Warning),
        ("fleet.fact_differs", Some("driver.version"), vec![at(OldDriver)], Warning),
        ("fleet.fact_differs", Some("env./home/user/proj/.venv"), vec![at(CpuTorch)], Warning),
        ("fleet.fact_differs", Some("findings.error"), vec![at(CpuTorch)], Warning),
        ("fleet.fact_differs", Some("gpu.memory_errors"), vec![at(EccErrors)], Warning),
        ("fleet.fact_differs", Some("gpu0.link"), vec![at(LinkX8)], Warning),
        ("fleet.fact_differs", Some("toolkits"), vec![at(NoToolkit)], Warning),
    ];
    let got: Vec<(&str, Option<&str>, Vec<String>, Severity)> = got
        .into_iter()
        .map(|(id, key, hosts, sev)| (id, key, hosts.into_iter().map(str::to_owned).collect(), sev))
        .collect();
    assert_eq!(got, want);
    let summary = |key: &str| c.findings.iter().find(|f| f.key.as_deref() == Some(key)).unwrap().summary.clone();
    assert_eq!(
        summary("driver.version"),
        format!("1 of 63 nodes have driver 535.104.05 while the rest have 550.54.14: {}", at(OldDriver))
    );
    assert_eq!(
        summary("gpu0.link"),
        format!(
            "1 of 63 nodes have GPU0 link x8 of x16, gen 4 max while the rest have x16 of x16, gen 4 max: {}",
            at(LinkX8)
        )
    );
    // The untouched nodes are one group; each perturbed node that reported is a group of its own
    // (the slow one only differs in a figure, so it stays in the big group).
    assert_eq!(c.groups.len(), 6, "{:?}", c.groups.iter().map(|g| g.hosts.len()).collect::<Vec<_>>());
    assert_eq!(c.groups[0].hosts.len(), 58);
    assert!(c.groups[0].hosts.contains(&at(SlowBench)));
    assert_eq!(c.nodes.len(), NODES);
}
