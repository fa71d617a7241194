//! Benchmarks as a service: one run of a plan on this machine (`measure`), shared by
//! `gpu-doctor bench` and the window's Benchmarks page, and reading a saved run back (`load`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{Context, Result};
use gpu_doctor_kb::Kb;
use gpu_doctor_kernels::libs::{self, PreparedLibraries};
use gpu_doctor_kernels::runner::OnSample;
use gpu_doctor_kernels::{EccSource, RunOptions, RunTelemetry, WorkerSpec, facts, numa};
use gpu_doctor_model::EccCounters;
use gpu_doctor_model::Snapshot;
use gpu_doctor_model::bench::plan::BenchPlan;
use gpu_doctor_model::bench::protocol::BenchEvent;
use gpu_doctor_model::bench::run::BENCH_SCHEMA_VERSION;
use gpu_doctor_model::bench::run::BenchRun;
use gpu_doctor_probes::host::ecc;
use gpu_doctor_probes::host::telemetry::{NvmlSource, Target, TelemetrySource};

/// The memory-error counters of the benchmarked GPU through the probes, by PCI bus id.
struct NvmlEcc {
    bus_id: Option<String>,
}

impl EccSource for NvmlEcc {
    fn read(&self) -> Result<EccCounters, String> {
        let bus = self.bus_id.as_deref().ok_or("the GPU's PCI bus id is unknown")?;
        ecc::read_bus(bus).map_err(|e| e.to_string())
    }
}

/// How `measure` runs a plan.
pub struct Measure {
    /// Set to stop the run; the tests not yet ended fail as cancelled.
    pub cancel: Arc<AtomicBool>,
    /// Longest the GPU tests may take; `None`: the plan's own budget (`BenchPlan::time_limit`).
    pub timeout: Option<Duration>,
    /// Where the benchmarked GPU's telemetry comes from: NVML (`NvmlSource`), or the window's
    /// source, which is a fake in its tests.
    pub telemetry: Arc<dyn TelemetrySource>,
    /// Sees every telemetry sample of the benchmarked GPU as it is taken; `None`: nobody watches.
    pub on_telemetry: Option<OnSample>,
}

impl Default for Measure {
    fn default() -> Self {
        Self { cancel: Arc::default(), timeout: None, telemetry: Arc::new(NvmlSource::default()), on_telemetry: None }
    }
}

impl std::fmt::Debug for Measure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Measure")
            .field("timeout", &self.timeout)
            .field("on_telemetry", &self.on_telemetry.is_some())
            .finish_non_exhaustive()
    }
}

/// Runs a validated plan on this machine and assembles the judged run: prepares the CUDA library
/// path, starts the worker for the GPU tests (none is started when no test needs the GPU), samples
/// telemetry while it runs, runs the CPU baselines here, and judges every number against the
/// facts of `snapshot` (this machine's probe; `None` when no GPU test runs). `on_event` sees every
/// event as it arrives. Shared by `gpu-doctor bench` and the window; it blocks until the run ends.
pub fn measure(
    snapshot: Option<&Snapshot>,
    plan: &BenchPlan,
    how: Measure,
    on_event: &mut dyn FnMut(&BenchEvent),
) -> Result<BenchRun> {
    let plan = &aimed(snapshot, plan);
    let needs_gpu = !plan.gpu_tests().is_empty();
    let libraries = PreparedLibraries::prepare(snapshot, plan.gpu);
    let spec = if needs_gpu {
        worker_spec(&libraries)?
    } else {
        // Never started: the runner starts a worker only for GPU tests.
        WorkerSpec { program: PathBuf::new(), args: Vec::new(), env: Vec::new() }
    };
    // By PCI bus id where the probes know it: the GPU the worker opens.
    let telemetry = needs_gpu.then(|| RunTelemetry {
        source: how.telemetry,
        gpu: Target { index: plan.gpu, bus_id: plan.gpu_pci_bus_id.clone() },
        on_sample: how.on_telemetry,
    });
    let numa = needs_gpu.then(|| match &plan.gpu_pci_bus_id {
        Some(bus) => numa::placement(Path::new("/sys"), bus),
        None => Err("the GPU's PCI bus id is unknown".to_owned()),
    });
    let ecc = needs_gpu.then(|| Box::new(NvmlEcc { bus_id: plan.gpu_pci_bus_id.clone() }) as Box<dyn EccSource>);
    let opts = RunOptions {
        timeout: how.timeout.unwrap_or_else(|| plan.time_limit()),
        cancel: how.cancel,
        telemetry,
        telemetry_interval: Duration::from_millis(100),
        stall_limit: None,
        numa,
        ecc,
    };
    let record = gpu_doctor_kernels::runner::run(plan, &spec, opts, on_event);
    let kb = Kb::get().ok();
    let mut run =
        gpu_doctor_judge::bench::run::assemble(plan, record, |device| facts::gather(snapshot, plan.gpu, device, kb));
    run.library_notes.clone_from(&libraries.plan.notes);
    Ok(run)
}

/// `plan` aimed at a physical GPU: the PCI bus id the probes found for NVML index `plan.gpu`, so
/// the worker opens that GPU even where `CUDA_VISIBLE_DEVICES` renumbers them (SLURM, Kubernetes).
fn aimed(snapshot: Option<&Snapshot>, plan: &BenchPlan) -> BenchPlan {
    let mut plan = plan.clone();
    if plan.gpu_pci_bus_id.is_none() {
        plan.gpu_pci_bus_id = snapshot
            .and_then(|s| s.gpus.value())
            .and_then(|gpus| gpus.iter().find(|g| g.index == plan.gpu))
            .and_then(|g| g.pci_bus_id.clone());
    }
    plan
}

/// How to start `gpu-doctor bench-worker`: this executable, under the variables of the prepared
/// libraries (`PreparedLibraries::worker_env`: the library path, `CUDA_DEVICE_ORDER=PCI_BUS_ID`),
/// which the GPU test binary runs itself under too.
fn worker_spec(libraries: &PreparedLibraries) -> Result<WorkerSpec> {
    let program = std::env::current_exe().context("could not find gpu-doctor's own executable to start the worker")?;
    let env = libraries.worker_env(std::env::var_os(libs::PATH_VAR).as_deref());
    Ok(WorkerSpec { program, args: vec!["bench-worker".into()], env })
}

/// A run as the text `bench -o FILE`, `bench --json` and the window's history write, and `load`
/// reads back.
pub fn to_json(run: &BenchRun) -> Result<String> {
    Ok(serde_json::to_string_pretty(run).context("could not serialize the run")? + "\n")
}

/// A saved run with its findings made by this version's `bench.*` rules, as a saved report's
/// findings are re-derived when it is read.
pub fn rejudged(mut run: BenchRun) -> BenchRun {
    run.findings = gpu_doctor_judge::diagnose::bench_findings(&run);
    run
}

/// Reads a run saved with `bench -o FILE`, its findings made by this version's rules.
pub fn load(path: &Path) -> Result<BenchRun> {
    let text = std::fs::read_to_string(path).with_context(|| format!("could not read {}", path.display()))?;
    let run: BenchRun = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a run saved by `gpu-doctor bench -o`", path.display()))?;
    anyhow::ensure!(
        run.schema_version == BENCH_SCHEMA_VERSION,
        "{} has bench schema {}, this gpu-doctor reads schema {BENCH_SCHEMA_VERSION}",
        path.display(),
        run.schema_version
    );
    Ok(rejudged(run))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use gpu_doctor_model::bench::plan::TestKind;

    /// Under `CUDA_VISIBLE_DEVICES` the CUDA ordinal of NVML GPU N is not N; the plan names the
    /// physical GPU by its PCI bus id, which the worker opens (`cuDeviceGetByPCIBusId`) and the
    /// telemetry samples.
    #[test]
    fn the_plan_names_the_gpu_by_its_bus_id() {
        let report = crate::render::html::tests::fixture_report("consumer-gpu-torch-venv");
        let gpu = &report.snapshot.gpus.value().unwrap()[0];
        let bus = gpu.pci_bus_id.clone().unwrap();
        let plan = aimed(Some(&report.snapshot), &BenchPlan::preset(gpu.index, vec![TestKind::H2d], true));
        assert_eq!(plan.gpu_pci_bus_id.as_deref(), Some(bus.as_str()));
        let line = serde_json::to_string(&plan).unwrap();
        assert!(BenchPlan::from_json(&line).unwrap().gpu_pci_bus_id == Some(bus), "the worker reads it back");
        // A GPU the probes do not know keeps the ordinal alone.
        let unknown = aimed(Some(&report.snapshot), &BenchPlan::preset(7, vec![TestKind::H2d], true));
        assert_eq!(unknown.gpu_pci_bus_id, None);
        assert_eq!(aimed(None, &BenchPlan::preset(0, vec![TestKind::H2d], true)).gpu_pci_bus_id, None);
    }

    /// A run saved by gpu-doctor 0.1.0 (`bench --tests cpu --quick -o FILE`) reads as typed data
    /// and writes back the same text.
    #[test]
    fn a_run_saved_by_an_earlier_version_reads() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bench-run-0.1.0.json");
        let run = load(&path).unwrap();
        assert_eq!(run.plan.tests, [TestKind::Cpu]);
        assert!(run.all_ran());
        assert_eq!(to_json(&run).unwrap(), std::fs::read_to_string(&path).unwrap());
    }

    /// A saved run's findings are made again by this version's `bench.*` rules: the ones an
    /// earlier version wrote (`bench.h2d.below_expected`, category `other`) do not survive.
    #[test]
    fn a_loaded_run_gets_this_versions_findings() {
        let facts = gpu_doctor_model::bench::verdict::Facts {
            link_gbytes_per_s: Some(100.0),
            ..crate::plots::tests::known_facts()
        };
        let mut run = crate::plots::tests::full_run(facts);
        let current = gpu_doctor_judge::diagnose::bench_findings(&run);
        assert!(current.iter().any(|f| f.id == "bench.link.below_expected"), "{current:?}");
        run.findings = vec![gpu_doctor_model::Finding {
            id: "bench.h2d.below_expected".into(),
            category: gpu_doctor_model::Category::Other,
            severity: gpu_doctor_model::Severity::Warning,
            summary: "old".into(),
            detail: "old".into(),
            evidence: Vec::new(),
            explains: Vec::new(),
            fix: None,
            plan: None,
        }];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        std::fs::write(&path, to_json(&run).unwrap()).unwrap();
        assert_eq!(load(&path).unwrap().findings, current);
    }

    #[test]
    fn a_saved_run_reads_back_as_it_was() {
        let run = crate::plots::tests::full_run(crate::plots::tests::known_facts());
        let text = to_json(&run).unwrap();
        assert!(text.ends_with("}\n"));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        std::fs::write(&path, &text).unwrap();
        assert_eq!(to_json(&load(&path).unwrap()).unwrap(), text);
        std::fs::write(
            &path,
            text.replace(&format!("\"schema_version\": {BENCH_SCHEMA_VERSION}"), "\"schema_version\": 0"),
        )
        .unwrap();
        assert!(format!("{:#}", load(&path).unwrap_err()).contains("bench schema 0"));
    }
}
