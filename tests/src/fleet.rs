//! A synthetic fleet for `gpu-doctor compare`: real replayed machines (the `consumer-gpu-torch-venv`
//! scenario, judged by the diagnosis rules, with the saved CPU benchmark run of the app's test data
//! and GPU figures added) copied into N nodes, each a little different in its benchmark figures
//! (within ±4 %, the noise of real runs), and chosen nodes perturbed in one way each.
//!
//! `cargo run --release -p gpu-doctor-tests --example fleet-gen -- DIR N` writes such a fleet
//! (N reports and a `fleet.json`) for measuring `compare`.

use std::path::Path;

use gpu_doctor_judge::bench::run::assemble;
use gpu_doctor_judge::fleet::compare::NodeInput;
use gpu_doctor_kb::Kb;
use gpu_doctor_model::bench::plan::{BenchPlan, Precision, TestKind};
use gpu_doctor_model::bench::protocol::{BenchEvent, Measurement, Metric, TestResult};
use gpu_doctor_model::bench::record::{RunRecord, TimedEvent};
use gpu_doctor_model::bench::run::BenchRun;
use gpu_doctor_model::bench::unit::Unit;
use gpu_doctor_model::bench::verdict::Facts;
use gpu_doctor_model::fleet::{MANIFEST_FILE, Manifest, NodeEntry, NodeOutcome};
use gpu_doctor_model::{DriverVersion, Probed, Report, Snapshot};
use gpu_doctor_model::{FrameworkBuild, ToolkitKind};
use gpu_doctor_probes::host::ReplayHost;
use gpu_doctor_probes::probe::{Options, collect};

/// The replay scenario every node starts from.
pub const BASE_SCENARIO: &str = "consumer-gpu-torch-venv";

/// One way a node differs from the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Perturbation {
    /// The driver was not upgraded: 535.104.05 (CUDA 12.2) instead of 550.54.14 (CUDA 12.4).
    OldDriver,
    /// The GPU's link trained at x8 instead of x16.
    LinkX8,
    /// The system CUDA toolkit is missing.
    NoToolkit,
    /// The venv's torch is a CPU-only build.
    CpuTorch,
    /// The node gave no report (timed out).
    Failed,
    /// The H2D figure is half the others' (what a x8 link or a wrong NUMA node gives).
    SlowBench,
    /// The memory test saw uncorrected ECC errors.
    EccErrors,
}

impl Perturbation {
    /// Every kind.
    pub const ALL: [Self; 7] = [
        Self::OldDriver,
        Self::LinkX8,
        Self::NoToolkit,
        Self::CpuTorch,
        Self::Failed,
        Self::SlowBench,
        Self::EccErrors,
    ];
}

/// The base machine's snapshot, replayed.
///
/// # Panics
/// When the scenario cannot be loaded (a broken checkout).
pub fn base_snapshot() -> Snapshot {
    #[allow(clippy::expect_used)]
    let host = ReplayHost::load(&crate::fixtures_dir().join(BASE_SCENARIO)).expect("the base scenario loads");
    collect(&host, &Options::default())
}

/// A quick benchmark run of H2D and GEMM with figures scaled by `factor` (H2D also by `h2d`),
/// assembled as the runner's record gives it.
fn bench(factor: f64, h2d: f64) -> BenchRun {
    let h2d = Measurement::single(Metric::HostToDevice { pinned: true }, "pinned", 25.2 * factor * h2d, Unit::GbPerS);
    let gemm = Measurement::single(
        Metric::Gemm { precision: Precision::Fp16, n: 8192 },
        "FP16",
        160.0 * factor,
        Unit::TflopPerS,
    );
    let mut events = Vec::new();
    for (i, (test, m)) in [(TestKind::H2d, h2d), (TestKind::Gemm, gemm)].into_iter().enumerate() {
        let start = 1000 * u64::try_from(i).unwrap_or(0);
        let result = TestResult { measurements: vec![m], ..TestResult::default() };
        events.push(TimedEvent { t_ms: start, event: BenchEvent::Started { test, device: None } });
        events.push(TimedEvent { t_ms: start + 1000, event: BenchEvent::Finished { test, result } });
    }
    let plan = BenchPlan::preset(0, vec![TestKind::H2d, TestKind::Gemm], true);
    assemble(&plan, RunRecord { events, ..RunRecord::default() }, |_| Facts::default())
}

/// Node `i`'s host name: `node001`, …
pub fn host(i: usize) -> String {
    format!("node{:03}", i + 1)
}

/// A fleet of `n` nodes built from `base`; node `i` gets the perturbation `perturbed` names for it.
/// Each node's report is judged again after its perturbation, as a real node's would be.
///
/// # Panics
/// When the knowledge base does not load (a bug in shipped data).
pub fn fleet(base: &Snapshot, n: usize, perturbed: &[(usize, Perturbation)]) -> Vec<NodeInput> {
    #[allow(clippy::expect_used)]
    let kb = Kb::get().expect("the knowledge base loads");
    (0..n)
        .map(|i| {
            let host = host(i);
            let what = perturbed.iter().find(|(at, _)| *at == i).map(|(_, p)| *p);
            if what == Some(Perturbation::Failed) {
                return NodeInput {
                    host,
                    engine_name: Some(format!("gpu-{i}")),
                    outcome: NodeOutcome::TimedOut,
                    report: None,
                    certificate: None,
                };
            }
            let mut s = base.clone();
            if let Some(system) = found(&mut s.system) {
                system.host_name = Some(host.clone());
            }
            // ±4 %, spread over the nodes.
            let jitter = 1.0 + f64::from(u32::try_from(i * 37 % 9).unwrap_or(0)) / 100.0 - 0.04;
            let mut run = bench(jitter, if what == Some(Perturbation::SlowBench) { 0.5 } else { 1.0 });
            if let Some(p) = what {
                perturb(&mut s, &mut run, p);
            }
            let findings = gpu_doctor_judge::diagnose::diagnose(&s, kb);
            let mut report = Report::new(s, findings);
            report.bench = Some(run);
            NodeInput {
                engine_name: Some(format!("gpu-{i}")),
                outcome: NodeOutcome::Reported { file: format!("{host}.json") },
                host,
                report: Some(report),
                certificate: None,
            }
        })
        .collect()
}

/// The value of a found part, to change it.
fn found<T>(part: &mut Probed<T>) -> Option<&mut T> {
    match part {
        Probed::Found { value, .. } => Some(value),
        _ => None,
    }
}

fn perturb(s: &mut Snapshot, run: &mut BenchRun, p: Perturbation) {
    match p {
        Perturbation::OldDriver => {
            if let Some(d) = found(&mut s.driver) {
                d.version = "535.104.05".parse::<DriverVersion>().unwrap_or_else(|_| d.version.clone());
                d.cuda_version = "12.2".parse().ok();
            }
        }
        Perturbation::LinkX8 => {
            for l in found(&mut s.links).into_iter().flatten() {
                l.width_current = Some(8);
            }
            for g in found(&mut s.gpus).into_iter().flatten() {
                g.pcie_width_current = Some(8);
            }
        }
        Perturbation::NoToolkit => {
            if let Some(t) = found(&mut s.toolkits) {
                t.installs.retain(|i| i.kind == ToolkitKind::Pip);
            }
        }
        Perturbation::CpuTorch => {
            for f in found(&mut s.python_envs).into_iter().flatten().flat_map(|e| &mut e.frameworks) {
                if f.name == "torch" {
                    f.version = "2.3.0+cpu".to_owned();
                    f.build = FrameworkBuild::Cpu;
                }
            }
        }
        Perturbation::EccErrors => {
            run.memtest_ecc = Some(gpu_doctor_model::EccChange {
                corrected: Some(0),
                uncorrected: Some(2),
                retired_pages: None,
                remapped_rows: None,
                newly_pending: false,
                remap_failed: false,
                not_read: vec![],
            });
        }
        Perturbation::Failed | Perturbation::SlowBench => {}
    }
}

/// Writes the fleet into `dir` as `gpu-doctor fleet` would: one `<host>.json` per reported node and
/// a `fleet.json` with every node's outcome.
///
/// # Errors
/// When a file cannot be written.
pub fn write(dir: &Path, nodes: &[NodeInput]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for n in nodes {
        if let (Some(report), NodeOutcome::Reported { file }) = (&n.report, &n.outcome) {
            std::fs::write(dir.join(file), serde_json::to_string_pretty(report)?)?;
        }
    }
    let manifest = Manifest {
        engine: "ssh".to_owned(),
        started: "2026-11-23T00:00:00Z".to_owned(),
        nodes: nodes
            .iter()
            .map(|n| NodeEntry {
                host: n.host.clone(),
                engine_name: n.engine_name.clone().unwrap_or_default(),
                outcome: n.outcome.clone(),
                seconds: Some(2.0),
                certificate: None,
            })
            .collect(),
    };
    std::fs::write(dir.join(MANIFEST_FILE), serde_json::to_string_pretty(&manifest)?)
}
