//! The Fleet page through egui_kittest on the real `App`, with comparisons built here and handed in
//! through the page's loader seam; the row logic and the real loader on their own.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use gpu_doctor_judge::fleet::compare::ReadProgress as _;
use gpu_doctor_model::Severity;
use gpu_doctor_model::fleet::{
    Comparison, FactColumn, FleetFinding, MANIFEST_FILE, Manifest, MetricColumn, NodeEntry, NodeGroup, NodeOutcome,
    NodeRow,
};

use super::table::{SortKey, View, natural, visible_rows};
use super::{FleetPage, Progress};
use crate::gui::tests::{harness, settle};
use crate::gui::{App, Page};

const NEW: &str = "570.86.15";
const OLD: &str = "535.104.05";
const H100: &str = "1 × NVIDIA H100 80GB HBM3";

fn reported(host: &str, driver: &str, d2d: Option<f64>) -> NodeRow {
    NodeRow {
        host: host.to_owned(),
        engine_name: Some(format!("{host}.cluster")),
        outcome: NodeOutcome::Reported { file: format!("{host}.json") },
        values: vec![Some(driver.to_owned()), Some(H100.to_owned())],
        differs: vec![driver != NEW, false],
        metrics: vec![d2d],
        slow: vec![d2d.is_some_and(|v| v < 1000.0)],
        findings: [0, usize::from(driver != NEW), 1],
        group: Some(usize::from(driver != NEW)),
        certificate: None,
    }
}

fn facts() -> Vec<FactColumn> {
    vec![
        FactColumn { key: "driver.version".into(), label: "Driver".into(), majority: Some(NEW.into()) },
        FactColumn { key: "gpu.models".into(), label: "GPUs".into(), majority: Some(H100.into()) },
    ]
}

fn d2d(median: f64) -> Vec<MetricColumn> {
    let label = "Device copy".into();
    vec![MetricColumn {
        key: "bench.d2d.gbps".into(),
        label,
        unit: "GB/s".into(),
        lower_is_better: false,
        median: Some(median),
    }]
}

/// Three reported nodes (node-b on an older driver, node-c slow) and one that never answered.
fn three_nodes() -> Comparison {
    let unreachable = NodeRow {
        host: "node-d".into(),
        engine_name: Some("node-d.cluster".into()),
        outcome: NodeOutcome::Unreachable { reason: "ssh: connect to host node-d port 22: Connection refused".into() },
        values: vec![None, None],
        differs: vec![false, false],
        metrics: vec![None],
        slow: vec![false],
        findings: [0; 3],
        group: None,
        certificate: None,
    };
    let finding = |id: &str, severity, summary: &str, host: &str| FleetFinding {
        id: id.into(),
        severity,
        summary: summary.into(),
        key: None,
        hosts: vec![host.into()],
    };
    Comparison {
        facts: facts(),
        metrics: d2d(1490.0),
        nodes: vec![
            reported("node-a", NEW, Some(1510.0)),
            reported("node-b", OLD, Some(1490.0)),
            reported("node-c", NEW, Some(700.0)),
            unreachable,
        ],
        groups: vec![
            NodeGroup { hosts: vec!["node-a".into(), "node-c".into()] },
            NodeGroup { hosts: vec!["node-b".into()] },
        ],
        findings: vec![
            finding("fleet.node_failed", Severity::Error, "1 of 4 nodes gave no report: node-d", "node-d"),
            finding(
                "fleet.driver_differs",
                Severity::Warning,
                "1 of 3 nodes run driver 535.104.05 while the rest run 570.86.15: node-b",
                "node-b",
            ),
            finding(
                "fleet.bench_slow",
                Severity::Warning,
                "1 of 3 nodes copy device memory at half the fleet's speed: node-c",
                "node-c",
            ),
        ],
    }
}

fn three(_: &Path, _: &Progress) -> Result<Comparison, String> {
    Ok(three_nodes())
}

/// `n` nodes, the last on an older driver and named by the one fleet finding.
fn many_nodes(n: usize) -> Comparison {
    let host = |i: usize| format!("node-{i:04}");
    let mut nodes: Vec<NodeRow> = (0..n)
        .map(|i| {
            // Small integers, exact in f64.
            #[allow(clippy::cast_precision_loss)]
            let speed = 1400.0 + (i % 97) as f64;
            reported(&host(i), if i + 1 == n { OLD } else { NEW }, Some(speed))
        })
        .collect();
    nodes.sort_by(|a, b| a.host.cmp(&b.host));
    let last = host(n - 1);
    let summary = format!("1 of {n} nodes run driver {OLD} while the rest run {NEW}");
    let findings = vec![FleetFinding {
        id: "fleet.driver_differs".into(),
        severity: Severity::Warning,
        summary,
        key: None,
        hosts: vec![last],
    }];
    Comparison { facts: facts(), metrics: d2d(1448.0), nodes, groups: Vec::new(), findings }
}

fn thousand(_: &Path, _: &Progress) -> Result<Comparison, String> {
    Ok(many_nodes(1000))
}

/// Goes to the Fleet page and opens `dir` through `loader`, as the "Open this folder" button does.
fn open_fleet(h: &mut Harness<'static, App>, loader: super::Loader, dir: &Path) {
    h.get_by_label("Fleet").click();
    h.run_steps(2);
    assert_eq!(h.state().page, Page::Fleet);
    h.state_mut().pages.fleet.loader = loader;
    h.state_mut().pages.fleet.folder = dir.display().to_string();
    h.get_by_label("Open this folder").click();
    settle(h);
    assert!(h.state().pages.fleet.fleet.value().is_some(), "{:?}", h.state().pages.fleet.fleet.error());
}

#[test]
fn the_page_marks_the_differing_cell_the_slow_figure_and_shows_the_fleet_findings() {
    let (mut h, _home) = harness("no-driver");
    settle(&mut h);
    open_fleet(&mut h, three, Path::new("/fleet"));
    // node-b's driver is marked; the majority's cells are not.
    h.get_by_label("≠ 535.104.05");
    assert_eq!(h.query_all_by_label(NEW).count(), 2, "node-a and node-c hold the majority's driver, unmarked");
    h.get_by_label("▼ 700 GB/s");
    h.get_by_label("1510 GB/s");
    h.get_by_label_contains("1 of 3 nodes run driver 535.104.05 while the rest run 570.86.15: node-b");
    h.get_by_label_contains("1 of 4 nodes gave no report: node-d");
    assert!(h.query_by_label_contains("node-d: node-d").is_none(), "the summary names its hosts once");
    h.get_by_label("unreachable: ssh: connect to host node-d port 22: Connection refused");
    h.get_by_label("error");
    assert_eq!(h.state().pages.fleet.shown_hosts(), ["node-a", "node-b", "node-c", "node-d"]);
}

/// Lets `held` finish.
static RELEASE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A loader that has read one report of two and waits to be let go.
fn held(_: &Path, progress: &Progress) -> Result<Comparison, String> {
    progress.total(2);
    progress.parsed();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !RELEASE.load(std::sync::atomic::Ordering::Relaxed) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    Ok(three_nodes())
}

#[test]
fn the_folder_loads_off_the_ui_thread_with_its_progress() {
    let (mut h, _home) = harness("no-driver");
    settle(&mut h);
    h.get_by_label("Fleet").click();
    h.run_steps(2);
    h.state_mut().pages.fleet.loader = held;
    h.state_mut().pages.fleet.folder = "/fleet".into();
    h.get_by_label("Open this folder").click();
    let deadline = Instant::now() + Duration::from_secs(30);
    // The window keeps drawing while the loader waits, and says how far it got.
    while h.query_by_label("Read 1 of 2 reports…").is_none() {
        assert!(Instant::now() < deadline, "no progress shown");
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(h.state().busy());
    RELEASE.store(true, std::sync::atomic::Ordering::Relaxed);
    settle(&mut h);
    h.get_by_label("≠ 535.104.05");
    assert!(h.query_by_label("Read 1 of 2 reports…").is_none());
}

#[test]
fn filter_toggle_and_sort_change_the_rows() {
    let (mut h, _home) = harness("no-driver");
    settle(&mut h);
    open_fleet(&mut h, three, Path::new("/fleet"));
    let hosts = |h: &Harness<'static, App>| h.state().pages.fleet.shown_hosts();

    h.state_mut().pages.fleet.browse.view.filter = "NODE-B".into();
    h.run_steps(2);
    assert_eq!(hosts(&h), ["node-b"]);
    assert!(h.query_by_label("node-a").is_none(), "a filtered-out row is not drawn");
    h.get_by_label("node-b");
    h.state_mut().pages.fleet.browse.view.filter.clear();

    h.get_by_label("Only nodes that differ").click();
    h.run_steps(2);
    assert_eq!(hosts(&h), ["node-b", "node-c", "node-d"], "an old driver, a slow copy, no report");
    h.get_by_label("Only nodes that differ").click();
    h.run_steps(2);

    h.get_by_label("Driver").click();
    h.run_steps(2);
    assert_eq!(hosts(&h), ["node-b", "node-a", "node-c", "node-d"], "535 before 570, no value last");
    h.get_by_label("Driver ⏶").click();
    h.run_steps(2);
    assert_eq!(hosts(&h), ["node-a", "node-c", "node-b", "node-d"], "the other way round, no value still last");

    h.get_by_label("Device copy (GB/s)").click();
    h.run_steps(2);
    assert_eq!(hosts(&h), ["node-c", "node-b", "node-a", "node-d"], "slowest first");
    h.get_by_label("Findings").click();
    h.run_steps(2);
    h.get_by_label("Findings ⏶").click();
    h.run_steps(2);
    assert_eq!(
        h.state().pages.fleet.browse.view,
        View { sort: SortKey::Findings, descending: true, ..View::default() }
    );
    assert_eq!(hosts(&h)[0], "node-b", "the node with a warning first");
}

/// A second folder replaces the first: its rows are chosen anew (the old ones are places in the
/// first fleet) and the old selection goes; the filter, toggle and sort stay.
#[test]
fn a_new_folder_chooses_its_rows_anew_and_keeps_the_view() {
    let (mut h, _home) = harness("no-driver");
    settle(&mut h);
    open_fleet(&mut h, three, Path::new("/fleet"));
    h.get_by_label("node-b").click();
    h.get_by_label("Only nodes that differ").click();
    h.run_steps(2);
    assert_eq!(h.state().pages.fleet.shown_hosts(), ["node-b", "node-c", "node-d"]);
    assert_eq!(h.state().pages.fleet.browse.selected.as_deref(), Some("node-b"));

    h.state_mut().pages.fleet.loader = thousand;
    h.get_by_label("Open this folder").click();
    settle(&mut h);
    h.run_steps(2);
    assert_eq!(h.state().pages.fleet.shown_hosts(), ["node-0999"], "the one node of the new fleet that differs");
    assert!(h.state().pages.fleet.browse.view.only_differing, "the toggle stays");
    assert_eq!(h.state().pages.fleet.browse.selected, None, "node-b is not in the new fleet");
}

#[test]
fn a_thousand_rows_lay_out_only_the_rows_in_view() {
    let (mut h, _home) = harness("no-driver");
    settle(&mut h);
    open_fleet(&mut h, thousand, Path::new("/fleet"));
    assert_eq!(h.state().pages.fleet.shown_hosts().len(), 1000);
    h.get_by_label("node-0000");
    assert!(h.query_by_label("node-0999").is_none(), "a row far down is not laid out");
    let laid_out = h.query_all_by_label_contains("node-0").count();
    assert!(laid_out < 100, "{laid_out} of 1000 rows in the accessibility tree");

    // The finding names node-0999: a click selects it and scrolls the table down to it.
    h.get_by_label_contains("1 of 1000 nodes run driver").click();
    h.run_steps(3);
    h.get_by_label("node-0999");
    h.get_by_label("≠ 535.104.05");
    assert!(h.query_by_label("node-0000").is_none(), "the top rows left the view");
    assert_eq!(h.state().pages.fleet.browse.selected.as_deref(), Some("node-0999"));
}

#[test]
fn open_as_another_machine_shows_the_node_in_the_other_pages() {
    // node-b's report is another recorded machine (an RTX 3060 over Thunderbolt); the window
    // itself shows an RTX 4090.
    let fleet = tempfile::tempdir().unwrap();
    let dir = crate::fixture_dir("egpu-thunderbolt");
    let host = gpu_doctor_probes::host::ReplayHost::load(&dir).unwrap();
    let report = crate::ops::check(&host, &gpu_doctor_probes::probe::Options::default()).unwrap();
    std::fs::write(fleet.path().join("node-b.json"), serde_json::to_string(&report).unwrap()).unwrap();

    let (mut h, _home) = harness("consumer-gpu-torch-venv");
    settle(&mut h);
    open_fleet(&mut h, three, fleet.path());
    h.get_by_label("node-b").click();
    h.run_steps(2);
    assert_eq!(h.state().pages.fleet.browse.selected.as_deref(), Some("node-b"));
    h.get_by_label("Open as another machine").click();
    settle(&mut h);
    assert!(h.state().shown().other, "{:?}", h.state().other.error());
    h.get_by_label("Overview").click();
    h.run_steps(2);
    h.get_by_label("NOT THIS MACHINE");
    h.get_by_label_contains("node-b.json");
    assert!(h.query_all_by_label_contains("RTX 3060").next().is_some(), "the Overview shows node-b's GPU");
    assert!(h.query_all_by_label_contains("RTX 4090").next().is_none(), "and not this machine's");
}

#[test]
fn a_node_without_a_report_cannot_be_opened() {
    let dir = Path::new("/fleet");
    let cmp = three_nodes();
    assert!(cmp.nodes[3].outcome.report_path(dir).is_none());
    assert_eq!(cmp.nodes[1].outcome.report_path(dir), Some(dir.join("node-b.json")));
    let outside = NodeOutcome::Reported { file: "../etc/passwd".into() };
    assert!(outside.report_path(dir).is_none(), "a file name never leads out of the folder");
}

#[test]
fn versions_and_hosts_sort_by_their_numbers() {
    use std::cmp::Ordering::{Equal, Greater, Less};
    assert_eq!(natural("535.104.05", "535.86.05"), Greater);
    assert_eq!(natural("node-9", "node-10"), Less);
    assert_eq!(natural("node-09", "node-9"), Greater, "ties broken by the written digits");
    assert_eq!(natural("a", "a"), Equal);
    let cmp = three_nodes();
    let view = View { sort: SortKey::Metric(0), descending: true, ..View::default() };
    let hosts: Vec<&str> = visible_rows(&cmp, &view).into_iter().map(|i| cmp.nodes[i].host.as_str()).collect();
    assert_eq!(hosts, ["node-a", "node-b", "node-c", "node-d"], "fastest first, no figure last");
}

#[test]
fn the_chart_has_a_bar_per_node_with_the_figure_in_table_order() {
    let cmp = three_nodes();
    let rows = visible_rows(&cmp, &View { sort: SortKey::Metric(0), ..View::default() });
    let bars = super::chart::bars(&cmp, &rows, 0);
    let got: Vec<(usize, &str, bool)> = bars.iter().map(|(x, _, h, slow)| (*x, h.as_str(), *slow)).collect();
    assert_eq!(got, [(0, "node-c", true), (1, "node-b", false), (2, "node-a", false)], "node-d has no figure, no bar");
    let names = ["node-c".to_owned(), "node-b".to_owned()];
    assert_eq!(super::chart::host_at(&names, 1.0), "node-b", "a bar's host under it");
    assert_eq!(super::chart::host_at(&names, 0.5), "", "no name between bars");
    assert_eq!(super::chart::host_at(&names, -1.0), "");
    assert_eq!(super::chart::host_at(&names, 7.0), "");
}

/// The window's loader over a real folder, without and with a manifest: recorded machines (whose
/// host names are all redacted to one, so nodes are named by file), a broken file and manifest
/// nodes without a report are rows with their reasons; the GPU that differs is marked.
#[test]
fn the_loader_compares_a_real_folder() {
    let dir = tempfile::tempdir().unwrap();
    let report = |name: &str| {
        let host = gpu_doctor_probes::host::ReplayHost::load(&crate::fixture_dir(name)).unwrap();
        serde_json::to_string(&crate::ops::check(&host, &gpu_doctor_probes::probe::Options::default()).unwrap())
            .unwrap()
    };
    let (usual, other) = (report("consumer-gpu-torch-venv"), report("egpu-thunderbolt"));
    for (name, text) in [("a.json", &usual), ("b.json", &usual), ("c.json", &other), ("bad.json", &"{".to_owned())] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }

    let progress = Progress::default();
    let cmp = super::compare_folder(dir.path(), &progress).unwrap();
    assert_eq!(progress.get(), (4, 4), "every file counted");
    let hosts: Vec<&str> = cmp.nodes.iter().map(|n| n.host.as_str()).collect();
    assert_eq!(hosts, ["a.json", "b.json", "bad.json", "c.json"]);
    assert!(
        matches!(&cmp.nodes[2].outcome, NodeOutcome::Failed { reason } if reason.contains("not a gpu-doctor report"))
    );
    let gpus = cmp.facts.iter().position(|f| f.key == "gpu.models").unwrap();
    assert_eq!(
        cmp.nodes.iter().map(|n| n.differs.get(gpus).copied().unwrap_or(false)).collect::<Vec<_>>(),
        [false, false, false, true]
    );
    assert!(cmp.nodes[3].values[gpus].as_deref().is_some_and(|v| v.contains("3060")));
    assert!(cmp.findings.iter().any(|f| f.key.as_deref() == Some("gpu.models") && f.hosts == ["c.json"]));
    assert!(cmp.findings.iter().any(|f| f.id == "fleet.node_failed" && f.hosts == ["bad.json"]));

    let entry = |host: &str, outcome| NodeEntry {
        host: host.into(),
        engine_name: format!("{host}-slurm"),
        outcome,
        seconds: None,
        certificate: None,
    };
    let manifest = Manifest {
        engine: "ssh".into(),
        started: "2026-11-23T00:00:00Z".into(),
        nodes: vec![
            entry("a", NodeOutcome::Reported { file: "a.json".into() }),
            entry("d", NodeOutcome::TimedOut),
            entry("e", NodeOutcome::Reported { file: "e.json".into() }),
        ],
    };
    std::fs::write(dir.path().join(MANIFEST_FILE), serde_json::to_string(&manifest).unwrap()).unwrap();
    let cmp = super::compare_folder(dir.path(), &Progress::default()).unwrap();
    let hosts: Vec<&str> = cmp.nodes.iter().map(|n| n.host.as_str()).collect();
    assert_eq!(hosts, ["a", "d", "e"], "the manifest's nodes only");
    assert_eq!(cmp.nodes[0].engine_name.as_deref(), Some("a-slurm"));
    assert_eq!(cmp.nodes[1].outcome, NodeOutcome::TimedOut);
    assert!(matches!(&cmp.nodes[2].outcome, NodeOutcome::Failed { reason } if reason.contains("e.json")));
}

/// CPU time this thread has used, in clock ticks (1/100 s on Linux), from `/proc/thread-self/stat`.
fn thread_cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
    // After the name: state, ppid, …; utime and stime are the 12th and 13th.
    fields.get(11..13).map_or(0, |f| f.iter().filter_map(|v| v.parse::<u64>().ok()).sum())
}

/// One frame of the page with `n` rows, laid out and tessellated as the window does (no GPU: the
/// upload and drawing are left out), as wall time and as this thread's CPU time (which other work
/// on a busy machine does not inflate). Not a test: `cargo test -p gpu-doctor --bin gpu-doctor
/// fleet_frame_time -- --ignored --nocapture`; the figures are in docs/performance.md.
#[test]
#[ignore = "a measurement, not a test"]
fn fleet_frame_time() {
    const FRAMES: u32 = 300;
    for n in [10, 1_000, 10_000] {
        let ctx = egui::Context::default();
        crate::gui::theme::install_fonts(&ctx);
        let loader: super::Loader = match n {
            10 => |_, _| Ok(many_nodes(10)),
            1_000 => thousand,
            _ => |_, _| Ok(many_nodes(10_000)),
        };
        let mut page = FleetPage { loader, ..FleetPage::default() };
        page.open(&ctx, "/fleet".into());
        let deadline = Instant::now() + Duration::from_secs(30);
        while !page.fleet.poll() {
            assert!(Instant::now() < deadline);
            std::thread::sleep(Duration::from_millis(2));
        }
        page.browse.view.sort = SortKey::Metric(0);
        let mut actions = Vec::new();
        let mut frame = || {
            let input = egui::RawInput {
                screen_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(1280.0, 800.0))),
                ..egui::RawInput::default()
            };
            let mut out = ctx.run_ui(input, |ui| {
                egui::CentralPanel::default().show(ui, |ui| page.fleet_ui(ui, &mut actions));
            });
            let _ = ctx.tessellate(std::mem::take(&mut out.shapes), out.pixels_per_point);
            // No renderer takes the font atlas here.
            out.textures_delta.clear();
        };
        for _ in 0..20 {
            frame();
        }
        let (started, cpu) = (Instant::now(), thread_cpu_ticks());
        for _ in 0..FRAMES {
            frame();
        }
        let wall_ms = started.elapsed().as_secs_f64() * 1e3 / f64::from(FRAMES);
        // Ticks of 10 ms; a few hundred per run.
        #[allow(clippy::cast_precision_loss)]
        let cpu_ms = (thread_cpu_ticks() - cpu) as f64 * 10.0 / f64::from(FRAMES);
        println!("{n} rows: {cpu_ms:.1} ms CPU, {wall_ms:.1} ms wall per frame (mean of {FRAMES} frames)");
    }
}

/// [`three_nodes`] certified: node-b failed its certificate, node-a passed, node-c is INCOMPLETE.
fn certified(_: &Path, _: &Progress) -> Result<Comparison, String> {
    use gpu_doctor_model::certify::Verdict;
    use gpu_doctor_model::fleet::NodeCertificate;
    let mut c = three_nodes();
    for (row, verdict) in c.nodes.iter_mut().zip([Verdict::Pass, Verdict::Fail, Verdict::Incomplete]) {
        row.certificate = Some(NodeCertificate {
            verdict: Some(verdict),
            level: Some(2),
            intact: true,
            note: None,
            figures: Vec::new(),
        });
    }
    Ok(c)
}

#[test]
fn a_certified_fleet_shows_each_verdict_and_opens_with_the_failed_nodes_first() {
    let (mut h, _home) = harness("no-driver");
    settle(&mut h);
    open_fleet(&mut h, certified, Path::new("/fleet"));
    h.get_by_label("FAIL (level 2)");
    h.get_by_label("PASS (level 2)");
    h.get_by_label("INCOMPLETE (level 2)");
    assert_eq!(
        h.state().pages.fleet.shown_hosts(),
        ["node-b", "node-d", "node-c", "node-a"],
        "the failed certificate and the node without a report first, then INCOMPLETE, then PASS"
    );
}
