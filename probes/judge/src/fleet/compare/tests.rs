use super::*;
use gpu_doctor_model::bench::plan::{BenchPlan, TestKind};
use gpu_doctor_model::bench::protocol::{BenchEvent, Metric, TestResult};
use gpu_doctor_model::bench::record::{RunRecord, TimedEvent};
use gpu_doctor_model::bench::run::BenchRun;
use gpu_doctor_model::bench::unit::Unit;
use gpu_doctor_model::bench::verdict::Facts;
use gpu_doctor_model::{Category, Finding, Probed, Snapshot};
use gpu_doctor_model::{DriverFacts, Gpu, SystemInfo};
use std::path::{Path, PathBuf};

/// The binary's reader: the probes' capped reader of regular files, following a symlink only at a
/// path the user named.
fn read(path: &Path, named: Named) -> Result<Vec<u8>, String> {
    use gpu_doctor_probes::host::{Links, MAX_FILE_BYTES, read_regular_file};
    let links = if named == Named::ByUser { Links::Follow } else { Links::Refuse };
    read_regular_file(path, MAX_FILE_BYTES, links).map_err(|e| e.to_string())
}

/// A report of a node with one GPU, the given driver, and an optional H2D figure.
fn report(host: &str, driver: &str, h2d: Option<f64>) -> Report {
    let mut s = Snapshot::unknown(vec![]);
    s.system = Probed::found(SystemInfo { host_name: Some(host.to_owned()), ..SystemInfo::default() }, "test");
    s.driver =
        Probed::found(DriverFacts::reported(driver.parse().unwrap(), Some("12.8".parse().unwrap()), None), "test");
    let gpu = Gpu {
        name: Some("NVIDIA H100".into()),
        pcie_width_current: Some(16),
        pcie_width_max: Some(16),
        pcie_gen_max: Some(5),
        ..Gpu::default()
    };
    s.gpus = Probed::found(vec![gpu], "test");
    let mut r = Report::new(s, vec![]);
    r.bench = h2d.map(bench);
    r
}

/// A quick run of the H2D test alone that measured `h2d` GB/s, assembled as the runner's record
/// gives it.
fn bench(h2d: f64) -> BenchRun {
    let plan = BenchPlan::preset(0, vec![TestKind::H2d], true);
    let m = gpu_doctor_model::bench::protocol::Measurement::single(
        Metric::HostToDevice { pinned: true },
        "pinned",
        h2d,
        Unit::GbPerS,
    );
    let result = TestResult { measurements: vec![m], ..TestResult::default() };
    let record = RunRecord {
        events: vec![
            TimedEvent { t_ms: 0, event: BenchEvent::Started { test: TestKind::H2d, device: None } },
            TimedEvent { t_ms: 1, event: BenchEvent::Finished { test: TestKind::H2d, result } },
        ],
        ..RunRecord::default()
    };
    crate::bench::run::assemble(&plan, record, |_| Facts::default())
}

fn node(r: Report) -> NodeInput {
    let host = r.snapshot.system.value().and_then(|s| s.host_name.clone()).unwrap();
    NodeInput {
        host: host.clone(),
        engine_name: None,
        outcome: NodeOutcome::Reported { file: format!("{host}.json") },
        report: Some(r),
        certificate: None,
    }
}

fn column(c: &Comparison, key: &str) -> usize {
    c.facts.iter().position(|f| f.key == key).unwrap()
}

fn ids(c: &Comparison) -> Vec<(&str, Option<&str>, Vec<&str>)> {
    c.findings.iter().map(|f| (f.id.as_str(), f.key.as_deref(), f.hosts.iter().map(String::as_str).collect())).collect()
}

#[test]
fn the_minority_driver_differs_and_is_named() {
    let mut nodes: Vec<NodeInput> = (0..4).map(|i| node(report(&format!("n{i}"), "570.124.06", None))).collect();
    nodes.push(node(report("n9", "535.104.05", None)));
    let c = compare(nodes);
    let col = column(&c, "driver.version");
    assert_eq!(c.facts[col].majority.as_deref(), Some("570.124.06"));
    let differs: Vec<&str> = c.nodes.iter().filter(|r| r.differs[col]).map(|r| r.host.as_str()).collect();
    assert_eq!(differs, ["n9"]);
    assert_eq!(ids(&c), [("fleet.fact_differs", Some("driver.version"), vec!["n9"])]);
    assert_eq!(c.findings[0].summary, "1 of 5 nodes have driver 535.104.05 while the rest have 570.124.06: n9");
    assert_eq!(c.groups.len(), 2);
    assert_eq!(c.groups[0].hosts, ["n0", "n1", "n2", "n3"]);
    assert_eq!(c.nodes.iter().find(|r| r.host == "n9").unwrap().group, Some(1));
}

#[test]
fn without_a_majority_the_most_common_value_is_the_reference() {
    let drivers = ["1.0", "1.0", "2.0", "3.0"];
    let nodes = drivers.iter().enumerate().map(|(i, d)| node(report(&format!("n{i}"), d, None))).collect();
    let c = compare(nodes);
    let col = column(&c, "driver.version");
    assert_eq!(c.facts[col].majority, None, "2 of 4 is not more than half");
    let differs: Vec<bool> = c.nodes.iter().map(|r| r.differs[col]).collect();
    assert_eq!(differs, [false, false, true, true]);
    assert!(c.findings[0].summary.contains("the most common is 1.0 (2 nodes)"), "{}", c.findings[0].summary);
}

#[test]
fn a_node_without_a_report_is_a_failed_row_and_an_error() {
    let mut nodes: Vec<NodeInput> = (0..2).map(|i| node(report(&format!("n{i}"), "570.1", None))).collect();
    nodes.push(NodeInput {
        host: "dead".into(),
        engine_name: Some("gpu07".into()),
        outcome: NodeOutcome::TimedOut,
        report: None,
        certificate: None,
    });
    let c = compare(nodes);
    assert_eq!(ids(&c), [("fleet.node_failed", None, vec!["dead"])]);
    assert_eq!(c.findings[0].severity, Severity::Error);
    assert_eq!(c.findings[0].summary, "1 of 3 nodes gave no report: dead (timed out)");
    let dead = &c.nodes[0];
    assert_eq!((dead.host.as_str(), dead.group, dead.values.len()), ("dead", None, 0));
}

#[test]
fn error_findings_of_a_node_are_a_fleet_error() {
    let mut bad = report("n1", "570.1", None);
    bad.findings.push(Finding {
        id: "driver.too_old_for_runtime".into(),
        category: Category::DriverTooOldForRuntime,
        severity: Severity::Error,
        summary: String::new(),
        detail: String::new(),
        evidence: vec![],
        explains: Vec::new(),
        fix: None,
        plan: None,
    });
    let nodes = vec![node(report("n0", "570.1", None)), node(bad), node(report("n2", "570.1", None))];
    let c = compare(nodes);
    assert_eq!(
        ids(&c),
        [("fleet.node_errors", None, vec!["n1"]), ("fleet.fact_differs", Some("findings.error"), vec!["n1"])]
    );
    assert_eq!(c.nodes[1].findings, [1, 0, 0]);
}

#[test]
fn a_node_slower_than_the_threshold_is_slow_and_one_within_it_is_not() {
    let figures = [25.0, 24.8, 25.3, 21.5, 20.0];
    let nodes = figures.iter().enumerate().map(|(i, v)| node(report(&format!("n{i}"), "570.1", Some(*v)))).collect();
    let c = compare(nodes);
    assert_eq!(c.metrics.len(), 1);
    assert_eq!((c.metrics[0].key.as_str(), c.metrics[0].median), ("bench.h2d", Some(24.8)));
    // 21.5 is 13 % below the median, 20.0 is 19 % below.
    let slow: Vec<&str> = c.nodes.iter().filter(|r| r.slow[0]).map(|r| r.host.as_str()).collect();
    assert_eq!(slow, ["n4"]);
    assert_eq!(ids(&c), [("fleet.bench_slow", Some("bench.h2d"), vec!["n4"])]);
    assert!(c.findings[0].summary.contains("n4 20.0 GB/s (19 % less)"), "{}", c.findings[0].summary);
}

#[test]
fn two_nodes_are_too_few_to_call_one_slow() {
    let nodes = vec![node(report("a", "570.1", Some(25.0))), node(report("b", "570.1", Some(5.0)))];
    let c = compare(nodes);
    assert!(c.findings.is_empty(), "{:?}", c.findings);
}

#[test]
fn lower_is_better_is_slow_above_the_median() {
    assert!(metrics::is_slow(11.6, 10.0, true));
    assert!(!metrics::is_slow(11.4, 10.0, true));
    assert!(!metrics::is_slow(5.0, 10.0, true));
    assert_eq!(metrics::median(&[3.0, 1.0, 2.0, 10.0]), Some(2.5));
}

#[test]
fn a_folder_without_a_manifest_reads_every_json_and_keeps_what_is_not_a_report() {
    let dir = tempfile::tempdir().unwrap();
    for h in ["a", "b"] {
        std::fs::write(dir.path().join(format!("{h}.json")), serde_json::to_string(&report(h, "570.1", None)).unwrap())
            .unwrap();
    }
    std::fs::write(dir.path().join("c.json"), "{\"not\": \"a report\"}").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
    let nodes = read_folder(dir.path(), &read).unwrap();
    let hosts: Vec<(&str, bool)> = nodes.iter().map(|n| (n.host.as_str(), n.report.is_some())).collect();
    assert_eq!(hosts, [("a", true), ("b", true), ("c.json", false)]);
    assert!(matches!(&nodes[2].outcome, NodeOutcome::Failed { reason } if reason.contains("not a gpu-doctor report")));
}

#[test]
fn reports_with_the_same_host_name_are_named_by_their_files() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = ["x.json", "y.json"].iter().map(|f| dir.path().join(f)).collect();
    for f in &files {
        std::fs::write(f, serde_json::to_string(&report("same", "570.1", None)).unwrap()).unwrap();
    }
    let hosts: Vec<String> = read_files(&files, &read).into_iter().map(|n| n.host).collect();
    assert_eq!(hosts, ["x.json", "y.json"]);
}

#[test]
fn a_manifest_gives_the_outcomes_and_a_missing_report_is_a_failed_node() {
    use gpu_doctor_model::fleet::{Manifest, NodeEntry};
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join("fleet");
    std::fs::create_dir(&dir).unwrap();
    let a = serde_json::to_string(&report("a", "570.1", None)).unwrap();
    std::fs::write(dir.join("a.json"), &a).unwrap();
    // A real report beside the folder, which a manifest must not reach.
    std::fs::write(base.path().join("outside.json"), &a).unwrap();
    let entry = |host: &str, outcome| NodeEntry {
        host: host.into(),
        engine_name: format!("slurm-{host}"),
        outcome,
        seconds: None,
        certificate: None,
    };
    let manifest = Manifest {
        engine: "slurm".into(),
        started: "2026-11-23T00:00:00Z".into(),
        nodes: vec![
            entry("a", NodeOutcome::Reported { file: "a.json".into() }),
            entry("b", NodeOutcome::Reported { file: "b.json".into() }),
            entry("c", NodeOutcome::Unreachable { reason: "no route to host".into() }),
            entry("d", NodeOutcome::Reported { file: "../outside.json".into() }),
        ],
    };
    std::fs::write(dir.join("fleet.json"), serde_json::to_string(&manifest).unwrap()).unwrap();
    let nodes = read_paths(std::slice::from_ref(&dir), &read).unwrap();
    let got: Vec<(&str, Option<&str>, bool)> =
        nodes.iter().map(|n| (n.host.as_str(), n.engine_name.as_deref(), n.report.is_some())).collect();
    assert_eq!(
        got,
        [
            ("a", Some("slurm-a"), true),
            ("b", Some("slurm-b"), false),
            ("c", Some("slurm-c"), false),
            ("d", Some("slurm-d"), false)
        ]
    );
    assert!(matches!(&nodes[1].outcome, NodeOutcome::Failed { reason } if reason.contains("b.json")));
    assert_eq!(nodes[2].outcome, NodeOutcome::Unreachable { reason: "no route to host".into() });
    assert!(
        matches!(&nodes[3].outcome, NodeOutcome::Failed { reason } if reason.contains("not a file name inside the folder")),
        "{:?}",
        nodes[3].outcome
    );
}

#[test]
fn many_files_are_read_in_order_across_threads() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = (0..100)
        .map(|i| {
            let path = dir.path().join(format!("n{i:03}.json"));
            let text = if i == 57 {
                "garbage".to_owned()
            } else {
                serde_json::to_string(&report(&format!("h{i:03}"), "570.1", None)).unwrap()
            };
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect();
    let nodes = read_files(&files, &read);
    let hosts: Vec<String> = nodes.iter().map(|n| n.host.clone()).collect();
    let want: Vec<String> =
        (0..100).map(|i| if i == 57 { "n057.json".to_owned() } else { format!("h{i:03}") }).collect();
    assert_eq!(hosts, want);
}

#[test]
fn a_missing_path_is_an_error() {
    assert!(read_paths(&[PathBuf::from("/nonexistent/fleet")], &read).unwrap_err().contains("no such file or folder"));
}

#[test]
fn a_long_list_of_hosts_names_five_and_counts_the_rest() {
    let mut nodes: Vec<NodeInput> = (0..20)
        .map(|i| {
            let driver = if i < 6 { "535.1" } else { "570.1" };
            node(report(&format!("n{i:02}"), driver, Some(if i >= 14 { 10.0 } else { 25.0 })))
        })
        .collect();
    nodes.extend((0..6).map(|i| NodeInput {
        host: format!("f{i}"),
        engine_name: None,
        outcome: NodeOutcome::TimedOut,
        report: None,
        certificate: None,
    }));
    let c = compare(nodes);
    let summary = |id: &str| c.findings.iter().find(|f| f.id == id).unwrap().summary.clone();
    assert_eq!(
        summary(FACT_DIFFERS),
        "6 of 20 nodes have driver 535.1 while the rest have 570.1: n00, n01, n02, n03, n04 and 1 more"
    );
    assert_eq!(
        summary(NODE_FAILED),
        "6 of 26 nodes gave no report: f0 (timed out), f1 (timed out), f2 (timed out), f3 (timed out), \
         f4 (timed out) and 1 more"
    );
    assert_eq!(
        summary(BENCH_SLOW),
        "6 of 20 nodes are more than 15 % worse than the fleet median of 25.0 GB/s on H2D pinned: \
         n14 10.0 GB/s (60 % less), n15 10.0 GB/s (60 % less), n16 10.0 GB/s (60 % less), \
         n17 10.0 GB/s (60 % less), n18 10.0 GB/s (60 % less) and 1 more"
    );
    let hosts = |id: &str| c.findings.iter().find(|f| f.id == id).unwrap().hosts.len();
    assert_eq!((hosts(FACT_DIFFERS), hosts(NODE_FAILED), hosts(BENCH_SLOW)), (6, 6, 6), "hosts has them all");
}

/// Runs `f` on a thread of its own and gives its answer, or fails the test when it takes longer
/// than a minute (a fifo read with a blocking open never ends).
fn within_a_minute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    std::thread::Builder::new().name("bounded".into()).spawn(move || tx.send(f())).unwrap();
    rx.recv_timeout(std::time::Duration::from_secs(60)).expect("it hung")
}

#[cfg(unix)]
#[test]
fn devices_and_fifos_named_by_a_manifest_or_the_command_line_are_refused_not_read() {
    use gpu_doctor_model::fleet::{Manifest, NodeEntry};
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().to_path_buf();
    assert!(std::process::Command::new("mkfifo").arg(fleet.join("pipe.json")).status().unwrap().success());
    std::os::unix::fs::symlink("/dev/zero", fleet.join("zero.json")).unwrap();
    std::fs::write(fleet.join("a.json"), serde_json::to_string(&report("a", "570.1", None)).unwrap()).unwrap();
    let entry = |host: &str, file: &str| NodeEntry {
        host: host.into(),
        engine_name: host.into(),
        outcome: NodeOutcome::Reported { file: file.into() },
        seconds: None,
        certificate: None,
    };
    let manifest = Manifest {
        engine: "ssh".into(),
        started: "t".into(),
        nodes: vec![entry("a", "a.json"), entry("p", "pipe.json"), entry("z", "zero.json")],
    };
    std::fs::write(fleet.join("fleet.json"), serde_json::to_string(&manifest).unwrap()).unwrap();
    let nodes = within_a_minute(move || read_folder(&fleet, &read).unwrap());
    let reasons: Vec<String> = nodes.iter().map(|n| n.outcome.describe()).collect();
    assert_eq!(reasons[0], "ok");
    assert!(reasons[1].contains("not a regular file"), "{reasons:?}");
    assert!(reasons[2].contains("symbolic link"), "{reasons:?}");

    // Named on the command line: followed, and still refused as a device; the fifo too.
    let paths = vec![PathBuf::from("/dev/zero"), dir.path().join("pipe.json")];
    let nodes = within_a_minute(move || read_paths(&paths, &read).unwrap());
    for n in &nodes {
        assert!(n.outcome.describe().contains("not a regular file"), "{:?}", n.outcome);
    }
}

#[test]
fn a_report_named_by_many_rows_is_read_once_and_the_total_is_capped() {
    use gpu_doctor_model::fleet::{Manifest, NodeEntry};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.json"), serde_json::to_string(&report("big", "570.1", None)).unwrap()).unwrap();
    let nodes = (0..64)
        .map(|i| NodeEntry {
            host: format!("n{i}"),
            engine_name: format!("n{i}"),
            outcome: NodeOutcome::Reported { file: "big.json".into() },
            seconds: None,
            certificate: None,
        })
        .collect();
    let manifest = Manifest { engine: "ssh".into(), started: "t".into(), nodes };
    std::fs::write(dir.path().join("fleet.json"), serde_json::to_string(&manifest).unwrap()).unwrap();
    let reads = AtomicUsize::new(0);
    let counting = |path: &Path, named: Named| {
        if path.ends_with("big.json") {
            reads.fetch_add(1, Ordering::Relaxed);
        }
        read(path, named)
    };
    let nodes = read_folder(dir.path(), &counting).unwrap();
    assert_eq!(reads.load(Ordering::Relaxed), 1, "the report was read more than once");
    assert_eq!(nodes.iter().filter(|n| n.report.is_some()).count(), 1);
    assert!(nodes[1].outcome.describe().contains("the report of n0 already"), "{:?}", nodes[1].outcome);

    // Files that together pass the total: the later ones are nodes with the reason, unread.
    let files: Vec<PathBuf> = (0..4).map(|i| dir.path().join(format!("f{i}.json"))).collect();
    let reads = AtomicUsize::new(0);
    let quarter = usize::try_from(MAX_TOTAL_BYTES / 3 + 1).unwrap();
    let huge = |_: &Path, _: Named| {
        reads.fetch_add(1, Ordering::Relaxed);
        Ok(vec![b' '; quarter])
    };
    let nodes = read_files(&files, &huge);
    assert_eq!(reads.load(Ordering::Relaxed), 3, "a file past the total was read");
    for n in &nodes[2..] {
        assert!(n.outcome.describe().contains("together pass"), "{:?}", n.outcome);
    }
}

#[test]
fn parse_errors_say_where_not_what_and_a_newer_schema_gets_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let mut value = serde_json::to_value(report("a", "570.1", None)).unwrap();
    value["schema_version"] = "ghp_SECRETTOKEN".into();
    std::fs::write(dir.path().join("a.json"), value.to_string()).unwrap();
    value["schema_version"] = 1.into();
    value["findings"] = "ghp_OTHERTOKEN".into();
    std::fs::write(dir.path().join("b.json"), value.to_string()).unwrap();
    let mut newer = report("c", "570.1", None);
    newer.schema_version = 999;
    std::fs::write(dir.path().join("c.json"), serde_json::to_string(&newer).unwrap()).unwrap();
    std::fs::write(dir.path().join("d.json"), serde_json::to_string(&report("d", "570.1", None)).unwrap()).unwrap();
    let nodes = read_folder(dir.path(), &read).unwrap();
    for n in &nodes[..2] {
        let said = n.outcome.describe();
        assert!(said.contains("not a gpu-doctor report") && said.contains("line 1"), "{said}");
        assert!(!said.contains("TOKEN"), "a value of the file was quoted: {said}");
    }
    let c = compare(nodes);
    let note = c.findings.iter().find(|f| f.id == NEWER_SCHEMA).expect("no note of the newer schema");
    assert_eq!(note.hosts, ["c"]);
    assert!(note.summary.contains("c (999)"), "{}", note.summary);
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config { cases: 64, ..Default::default() })]

    /// Any bytes as a report file: a node with a reason (or a report), never a panic, and a
    /// reason never quotes the bytes.
    #[test]
    fn any_file_content_is_a_node_and_its_reason_quotes_nothing(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..600)) {
        let marked: Vec<u8> = [b"{\"schema_version\": \"QUOTED_", &bytes[..], b"\"}"].concat();
        for content in [bytes, marked] {
            let give = |_: &Path, _: Named| Ok(content.clone());
            let nodes = read_files(&[PathBuf::from("x.json")], &give);
            proptest::prop_assert_eq!(nodes.len(), 1);
            if let NodeOutcome::Failed { reason } = &nodes[0].outcome {
                proptest::prop_assert!(!reason.contains("QUOTED_"), "{}", reason);
            }
        }
    }
}

fn certified(host: &str, verdict: Option<gpu_doctor_model::certify::Verdict>, intact: bool) -> NodeInput {
    let mut n = node(report(host, "570.1", None));
    n.certificate = Some(NodeCertificate { verdict, level: Some(2), intact, note: None, figures: Vec::new() });
    n
}

#[test]
fn certified_nodes_sort_the_failed_first_and_name_them_in_a_finding() {
    use gpu_doctor_model::certify::Verdict;
    let mut nodes = vec![
        certified("a-pass", Some(Verdict::Pass), true),
        certified("b-fail", Some(Verdict::Fail), true),
        certified("c-incomplete", Some(Verdict::Incomplete), true),
        certified("d-altered", Some(Verdict::Pass), false),
        certified("e-warn", Some(Verdict::PassWithWarnings), true),
        node(report("f-none", "570.1", None)),
    ];
    nodes.push(NodeInput {
        host: "g-dead".into(),
        engine_name: None,
        outcome: NodeOutcome::TimedOut,
        report: None,
        certificate: None,
    });
    let c = compare(nodes);
    let order: Vec<&str> = c.nodes.iter().map(|r| r.host.as_str()).collect();
    assert_eq!(order, ["b-fail", "d-altered", "g-dead", "c-incomplete", "f-none", "e-warn", "a-pass"]);
    let failed = c.findings.iter().find(|f| f.id == CERTIFICATE_FAILED).unwrap();
    assert_eq!(failed.hosts, ["b-fail", "d-altered"]);
    assert_eq!(failed.severity, Severity::Error);
    let incomplete = c.findings.iter().find(|f| f.id == CERTIFICATE_INCOMPLETE).unwrap();
    assert_eq!(incomplete.hosts, ["c-incomplete", "f-none"], "INCOMPLETE, and a reported node without a certificate");
    assert_eq!(c.nodes[1].certificate.as_ref().unwrap().label(), "ALTERED");
    assert_eq!(c.nodes[0].certificate.as_ref().unwrap().label(), "FAIL (level 2)");
}

#[test]
fn without_certificates_the_rows_stay_in_host_order() {
    let c = compare(vec![node(report("b", "570.1", None)), node(report("a", "535.1", None))]);
    assert_eq!(c.nodes.iter().map(|r| r.host.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    assert!(!c.findings.iter().any(|f| f.id.starts_with("fleet.certificate")));
}
