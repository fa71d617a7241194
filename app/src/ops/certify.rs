//! `certify` as a service: one run from the checks through the benchmark to a sealed
//! [`Certificate`], shared by `gpu-doctor certify` and the window. The rules are
//! `gpu_doctor_judge::certify`; nothing here prints.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use gpu_doctor_judge::certify::{self as rules, LinkReading, PeerFigure};
use gpu_doctor_model::bench::plan::{BenchPlan, MAX_MEMTEST_SHARE, Precision, TestKind};
use gpu_doctor_model::bench::protocol::Metric;
use gpu_doctor_model::bench::run::BenchRun;
use gpu_doctor_model::certify::{
    CERTIFICATE_SCHEMA_VERSION, Certificate, Check, CheckVerdict, Level, MachineIdentity, Stage, StageRecord,
};
use gpu_doctor_model::{EccChange, Gpu, Report, Snapshot, TOOL_VERSION};
use gpu_doctor_probes::host::Host;
use gpu_doctor_probes::probe::Options;

use crate::cli::args::ProbeArgs;
use crate::exit::InputError;

/// Where the facts come from.
#[derive(Clone, Copy)]
pub struct Machine<'a> {
    /// The host to probe.
    pub host: &'a dyn Host,
    /// The options a replay was recorded with.
    pub recorded: Option<&'a Options>,
    /// The replayed folder, or `None` for this machine.
    pub replay: Option<&'a Path>,
}

impl std::fmt::Debug for Machine<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Machine")
            .field("recorded", &self.recorded)
            .field("replay", &self.replay)
            .finish_non_exhaustive()
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Certify {
    /// The level.
    pub level: Level,
    /// Level 4: the sustained load's length, seconds (`None`: an hour).
    pub duration: Option<u32>,
    /// More Python interpreters to probe (`--python`).
    pub pythons: Vec<std::path::PathBuf>,
    /// A kept certificate to compare with (`--against`).
    pub kept: Option<Certificate>,
    /// Replace user and host names, home folders, serial numbers and UUIDs (as `report --redact`)
    /// before anything is judged or written: the certificate can be shared, and `--verify` can
    /// then no longer tell the machine.
    pub redact: bool,
    /// Set to stop the benchmark; the tests not yet ended fail as cancelled, so the certificate is INCOMPLETE.
    pub cancel: Arc<AtomicBool>,
}

fn now_unix_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The knowledge base's version: its date (the newest release it records), gpu-doctor's version,
/// and the SHA-256 of its embedded tables.
fn kb_version() -> String {
    let tables: String = gpu_doctor_kb::embedded_tables().map(|(name, text)| format!("{name}\n{text}\n")).collect();
    let digest = gpu_doctor_model::certify::sha256_hex(tables.as_bytes());
    let date = gpu_doctor_kb::Kb::get().ok().and_then(|kb| kb.date()).map_or_else(String::new, |d| format!("of {d}, "));
    format!("{date}{TOOL_VERSION} (tables sha256:{})", &digest[..16])
}

/// Runs `how` on `machine` and returns the sealed certificate; `progress` hears, in words, each
/// step as it starts. Blocks until the run ends (the window runs it on a thread of its own).
pub fn run(machine: &Machine<'_>, how: &Certify, progress: &mut dyn FnMut(&str)) -> Result<Certificate> {
    let level = how.level;
    let started_at_unix_secs = now_unix_secs();
    let clock = Instant::now();
    let deep = ProbeArgs { deep: true, pythons: how.pythons.clone() };
    let opts = super::options(&deep, machine.recorded);
    progress(&format!(
        "certify level {}: probing and importing the frameworks in each Python environment",
        level.number()
    ));
    let report = super::check(machine.host, &opts)?;
    let report = if how.redact { crate::redact::redact(&report)? } else { report };
    let mut stages = vec![software(&report, clock.elapsed())];
    if level >= Level::Quick {
        stages.extend(measured_stages(machine, &report.snapshot, &opts, how, progress));
    }
    let kept = how.kept.as_ref();
    if let Some(kept) = kept {
        let now: Vec<&Check> = stages.iter().flat_map(|s| &s.checks).collect();
        let checks = rules::against(kept, &now);
        stages.push(StageRecord { stage: Stage::Against, not_run: None, duration_secs: 0.0, checks });
    }
    let (verdict, reasons) = rules::verdict(stages.iter().flat_map(|s| &s.checks));
    let origin = match machine.replay {
        Some(_) if how.redact => "replay of a recording".to_owned(),
        Some(dir) => format!("replay of {}", dir.display()),
        None => "this machine".to_owned(),
    };
    let mut cert = Certificate {
        schema_version: CERTIFICATE_SCHEMA_VERSION,
        verdict,
        reasons,
        level,
        started_at_unix_secs,
        duration_secs: clock.elapsed().as_secs_f64(),
        tool_version: TOOL_VERSION.to_owned(),
        kb_version: kb_version(),
        origin,
        machine: MachineIdentity::of(&report.snapshot),
        stages,
        sha256: String::new(),
    };
    cert.seal().context("could not hash the certificate")?;
    Ok(cert)
}

/// Level 1: the findings and each framework's view of the GPUs.
fn software(report: &Report, took: Duration) -> StageRecord {
    let gpus = report.snapshot.gpus.value().map_or(0, Vec::len);
    let mut checks = vec![rules::gpus_present(&report.snapshot.gpus)];
    checks.extend(rules::finding_checks(&report.findings));
    checks.extend(rules::framework_checks(&report.snapshot.python_envs, gpus));
    StageRecord { stage: Stage::Software, not_run: None, duration_secs: took.as_secs_f64(), checks }
}

/// The stages a level adds to level 1, each `not_run` with its reason where nothing can be measured.
fn measured_stages(
    machine: &Machine<'_>,
    snap: &Snapshot,
    opts: &Options,
    how: &Certify,
    progress: &mut dyn FnMut(&str),
) -> Vec<StageRecord> {
    let (level, duration) = (how.level, how.duration);
    let mut wanted = vec![Stage::Benchmark, Stage::Health];
    if level >= Level::Stress {
        wanted.push(Stage::Stress);
    }
    if level >= Level::Soak {
        wanted.push(Stage::Soak);
    }
    let why_not = if machine.replay.is_some() {
        Some("a replay is a recording: the benchmark measures only the machine it runs on".to_owned())
    } else {
        match snap.gpus.value() {
            Some(g) if !g.is_empty() => None,
            _ => Some(format!("no GPU to measure: {}", snap.gpus.why_not().unwrap_or("the driver lists none"))),
        }
    };
    if let Some(why) = why_not {
        return wanted.into_iter().map(|stage| not_run_stage(stage, &why)).collect();
    }
    let gpus = snap.gpus.value().cloned().unwrap_or_default();
    let clock = Instant::now();
    let runs = round(snap, &gpus, how, 1, progress);
    let bench_took = clock.elapsed().as_secs_f64();
    // Level 4: more rounds of level 3 until --duration has passed (or a cancel).
    let mut later = Vec::new();
    let soak = Duration::from_secs(u64::from(duration.unwrap_or(SOAK_SECS)));
    while level == Level::Soak && clock.elapsed() < soak && !how.cancel.load(Ordering::Relaxed) {
        later.push(round(snap, &gpus, how, later.len() + 2, progress));
    }
    let after = super::snapshot(machine.host, &Options { deep: false, ..opts.clone() });
    let mut bench = benchmark_stage(snap, &runs, bench_took);
    bench.checks.extend(smoke_checks(machine.host, snap, progress));
    let mut out = vec![bench];
    out.push(health_stage(snap, after.as_ref().ok(), &runs));
    if level >= Level::Stress {
        out.push(stress_stage(&runs));
    }
    if level >= Level::Soak {
        out.push(soak_stage(&runs, &later, clock.elapsed().as_secs_f64() - bench_took));
    }
    out
}

/// Level 4's length when `--duration` is not given: an hour.
const SOAK_SECS: u32 = 3600;

/// One round: the level's benchmark on every GPU in turn.
fn round(
    snap: &Snapshot,
    gpus: &[Gpu],
    how: &Certify,
    number: usize,
    progress: &mut dyn FnMut(&str),
) -> Vec<(Gpu, Result<BenchRun>)> {
    gpus.iter()
        .map(|gpu| {
            let name = gpu.name.as_deref().unwrap_or("unknown");
            let which = if number > 1 { format!(", round {number}") } else { String::new() };
            progress(&format!("certify: benchmarking GPU {} ({name}){which}", gpu.index));
            let plan = plan_for(gpu.index, how.level);
            let measure = super::bench::Measure { cancel: Arc::clone(&how.cancel), ..super::bench::Measure::default() };
            (gpu.clone(), super::bench::measure(Some(snap), &plan, measure, &mut |_| {}))
        })
        .collect()
}

/// The best FP16 GEMM of a run, TFLOP/s.
fn fp16_gemm(run: &Result<BenchRun>) -> Option<f64> {
    let run = run.as_ref().ok()?;
    run.find_metric(|m| matches!(m, Metric::Gemm { precision: Precision::Fp16, .. })).map(|j| j.measurement.value)
}

/// Level 4: each later round's checks, and each GPU's drift from its first round.
fn soak_stage(first: &[(Gpu, Result<BenchRun>)], later: &[Vec<(Gpu, Result<BenchRun>)>], took: f64) -> StageRecord {
    let mut checks = Vec::new();
    if later.is_empty() {
        checks.push(rules::not_run(
            "soak.drift",
            Stage::Soak,
            "every GPU",
            "no second round ran (--duration too short, or cancelled)",
        ));
    }
    for (n, round) in later.iter().enumerate() {
        for (gpu, run) in round {
            let who = format!("{}, round {}", subject(gpu), n + 2);
            if let Ok(run) = run {
                checks.extend(
                    rules::bench_checks(&who, Stage::Soak, run).into_iter().filter(|c| c.verdict != CheckVerdict::Pass),
                );
            }
            let start = first.iter().find(|(g, _)| g.index == gpu.index).and_then(|(_, r)| fp16_gemm(r));
            checks.push(rules::drift(&who, start, fp16_gemm(run)));
        }
    }
    StageRecord { stage: Stage::Soak, not_run: None, duration_secs: took, checks }
}

fn not_run_stage(stage: Stage, why: &str) -> StageRecord {
    let id = match stage {
        Stage::Software | Stage::Benchmark => "bench.quick",
        Stage::Health => "health.xid",
        Stage::Stress => "stress.sustained",
        Stage::Soak => "soak.drift",
        Stage::Against => "against.figure",
    };
    let check = rules::not_run(id, stage, "every GPU", why);
    StageRecord { stage, not_run: Some(why.to_owned()), duration_secs: 0.0, checks: vec![check] }
}

/// The benchmark plan of a level for one GPU (level 4 runs level 3's in rounds).
fn plan_for(gpu: u32, level: Level) -> BenchPlan {
    use TestKind::{Bidir, D2d, D2h, Fma, Gemm, H2d, Memtest, P2p, Sustained};
    match level {
        Level::Software | Level::Quick => BenchPlan::preset(gpu, vec![H2d, D2h, D2d, Gemm, Fma], true),
        Level::Stress | Level::Soak => {
            let mut plan =
                BenchPlan::preset(gpu, vec![H2d, D2h, Bidir, D2d, P2p, Gemm, Fma, Memtest, Sustained], false);
            plan.memtest_share = MAX_MEMTEST_SHARE;
            // At least 3 minutes of sustained load (issue 31; DCGM's diagnostic plugin runs 180 s).
            plan.sustained_secs = 180;
            plan
        }
    }
}

fn subject(gpu: &Gpu) -> String {
    format!("GPU {} ({})", gpu.index, gpu.name.as_deref().unwrap_or("unknown"))
}

/// The benchmark's own verdicts, the link, and GPUs of one product against each other.
fn benchmark_stage(snap: &Snapshot, runs: &[(Gpu, Result<BenchRun>)], took: f64) -> StageRecord {
    let mut checks: Vec<Check> = Vec::new();
    let mut figures = Vec::new();
    for (gpu, run) in runs {
        let who = subject(gpu);
        let run = match run {
            Ok(run) => run,
            Err(e) => {
                checks.push(rules::not_run("bench.quick", Stage::Benchmark, &who, &format!("{e:#}")));
                continue;
            }
        };
        checks.extend(rules::bench_checks(&who, Stage::Benchmark, run));
        let pinned = run.find_metric(|m| *m == Metric::HostToDevice { pinned: true }).map(|j| j.measurement.value);
        checks.push(rules::pinned_copy(&who, pinned, run.facts.link_gbytes_per_s));
        // The host→device copy test's window of the run's telemetry.
        let copy = run.tests.iter().find(|t| t.test == TestKind::H2d);
        let (gen_under_load, width_under_load) = match copy.and_then(|t| t.started_ms.zip(t.ended_ms)) {
            Some((from, to)) => rules::link_during(&run.telemetry, from, to),
            None => (None, None),
        };
        let link = LinkReading {
            gen_max: gpu.pcie_gen_max,
            width_max: gpu.pcie_width_max,
            gen_idle: gpu.pcie_gen_current,
            gen_under_load,
            width_under_load,
        };
        let is_pcie = snap.links.value().is_none_or(|l| !l.is_empty());
        if is_pcie {
            checks.push(rules::link_under_load(&who, link));
        }
        let gemm = run
            .find_metric(|m| matches!(m, Metric::Gemm { precision: Precision::Fp16, .. }))
            .map(|j| j.measurement.value);
        if let (Some(value), Some(product)) = (gemm, gpu.name.clone()) {
            figures.push(PeerFigure { subject: who, product, value });
        }
    }
    checks.extend(rules::identical_gpus(&figures, "FP16 GEMM"));
    StageRecord { stage: Stage::Benchmark, not_run: None, duration_secs: took, checks }
}

/// Each environment's GPU frameworks' smoke test (the installers' verify: a matrix product on each
/// GPU against Python's), each framework once (JAX's packages are one JAX); frameworks the smoke
/// test does not compute with (ONNX Runtime) get none here, the software stage's check judges them.
fn smoke_checks(host: &dyn Host, snap: &Snapshot, progress: &mut dyn FnMut(&str)) -> Vec<Check> {
    let gpus = snap.gpus.value().map_or(0, Vec::len);
    let mut out = Vec::new();
    for env in snap.python_envs.value().into_iter().flatten() {
        let names = smoke_modules(env);
        let (Some(python), false) = (env.interpreter.as_deref(), names.is_empty()) else { continue };
        progress(&format!("certify: the frameworks' smoke test in {}", env.name));
        let verified = gpu_doctor_installers::verify::run_on(host, Path::new(python), &names, SMOKE_TIMEOUT);
        for module in &verified.frameworks {
            let subject = format!("{}: {module}", env.name);
            let outcome = match &verified.outcome {
                Err(e) => Err(e.clone()),
                Ok(report) => match report.checks.get(module) {
                    None => Err(format!("{module} gave no result")),
                    Some(s) => Ok(rules::Smoke {
                        gpus: s.gpus.iter().map(|g| (g.index, g.check.ok)).collect(),
                        no_gpu: s.no_gpu.clone(),
                        error: s.error.clone(),
                    }),
                },
            };
            out.push(rules::smoke(&subject, outcome.as_ref().map_err(String::as_str), gpus));
        }
    }
    out
}

/// The modules of `env`'s frameworks the smoke test computes with, each once.
fn smoke_modules(env: &gpu_doctor_model::PythonEnv) -> Vec<String> {
    let packages: Vec<String> = env.frameworks.iter().map(|f| f.name.clone()).collect();
    gpu_doctor_installers::verify::modules_of(&packages)
        .into_iter()
        .filter(|m| gpu_doctor_installers::verify::SMOKE_TESTED.contains(&m.as_str()))
        .collect()
}

/// The longest one environment's smoke test may take (importing TensorFlow and JAX is slow).
const SMOKE_TIMEOUT: Duration = Duration::from_secs(180);

/// Xid lines, memory errors and PCIe errors (replays, AER) before the benchmark against after it.
fn health_stage(before: &Snapshot, after: Option<&Snapshot>, runs: &[(Gpu, Result<BenchRun>)]) -> StageRecord {
    let Some(after) = after else {
        return not_run_stage(Stage::Health, "the machine could not be probed again after the benchmark");
    };
    let mut checks = vec![rules::xid_during_run(&before.health.xid_events, &after.health.xid_events)];
    for (gpu, _) in runs {
        let read =
            |s: &'_ Snapshot| s.health.gpus.value().and_then(|g| g.iter().find(|h| h.index == gpu.index).cloned());
        let (b, a) = (read(before), read(after));
        let change = match (&b, &a) {
            (Some(b), Some(a)) => EccChange::between(&b.memory_errors, &a.memory_errors),
            _ => EccChange::unread("the health probe did not answer for this GPU"),
        };
        checks.push(rules::memory_errors(&subject(gpu), Some(&change)));
        checks.push(rules::pcie_errors(&subject(gpu), b.as_ref(), a.as_ref()));
    }
    StageRecord { stage: Stage::Health, not_run: None, duration_secs: 0.0, checks }
}

/// The sustained load: clocks held, and no thermal or power slowdown.
fn stress_stage(runs: &[(Gpu, Result<BenchRun>)]) -> StageRecord {
    let mut checks = Vec::new();
    for (gpu, run) in runs {
        let who = subject(gpu);
        let clocks = run.as_ref().ok().and_then(|r| r.clocks_under_load.as_ref());
        checks.push(rules::sustained(
            &who,
            clocks.and_then(|c| c.sm_clock_early_mhz),
            clocks.and_then(|c| c.sm_clock_late_mhz),
            "median SM clock, last quarter against first",
        ));
        checks.push(rules::slowdown(&who, clocks.map(|c| c.reasons.as_slice())));
    }
    StageRecord { stage: Stage::Stress, not_run: None, duration_secs: 0.0, checks }
}

/// A certificate file; one that cannot be read, or is not a certificate, is an `InputError`.
pub fn read_certificate(file: &Path) -> Result<Certificate> {
    let text =
        std::fs::read_to_string(file).map_err(|e| InputError(format!("could not read {}: {e}", file.display())))?;
    Ok(serde_json::from_str(&text).map_err(|e| {
        InputError(format!("{} is not a certificate written by `gpu-doctor certify`: {e}", file.display()))
    })?)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    /// The certificate names the knowledge base by its date (the newest release it records) and
    /// the hash of its tables, so a kept certificate says which facts judged it.
    #[test]
    fn the_knowledge_base_version_names_its_date_and_tables() {
        let v = kb_version();
        let date = gpu_doctor_kb::Kb::get().unwrap().date().unwrap();
        assert!(v.starts_with(&format!("of {date}, ")) && v.contains("(tables sha256:"), "{v}");
    }

    use super::*;

    /// The lent H200's environment (tests/fixtures/h200-container-cu130): certify's first run there
    /// smoke-tested JAX three times and failed `jaxlib` and `onnxruntime` as unknown frameworks.
    #[test]
    fn each_smoke_tested_module_is_asked_for_once_and_no_other() {
        let host = gpu_doctor_probes::host::ReplayHost::load(&crate::fixture_dir("h200-container-cu130")).unwrap();
        let snap = gpu_doctor_probes::probe::collect(&host, &gpu_doctor_probes::probe::Options::default());
        let envs = snap.python_envs.value().unwrap();
        let venv = envs.iter().find(|e| e.name == "venv:/opt/torch/.venv").unwrap();
        assert!(venv.framework("jaxlib").is_some() && venv.framework("onnxruntime").is_some());
        assert_eq!(smoke_modules(venv), ["cupy", "jax", "torch"]);
    }

    fn stress_of(gpu: u32) -> BenchPlan {
        plan_for(gpu, Level::Stress)
    }

    #[test]
    fn each_level_asks_the_benchmark_for_what_it_promises() {
        let quick = plan_for(0, Level::Quick);
        assert!(quick.quick);
        assert_eq!(quick.tests, [TestKind::H2d, TestKind::D2h, TestKind::D2d, TestKind::Gemm, TestKind::Fma]);
        let stress = plan_for(1, Level::Stress);
        assert_eq!(stress.gpu, 1);
        assert!(stress.sustained_secs >= 180, "at least 3 minutes of sustained load");
        assert_eq!(stress.memtest_share, MAX_MEMTEST_SHARE, "most of the free memory");
        for t in [TestKind::Bidir, TestKind::P2p, TestKind::Memtest, TestKind::Sustained] {
            assert!(stress.tests.contains(&t), "{t:?}");
        }
        assert_eq!(plan_for(0, Level::Soak), stress_of(0), "level 4 is level 3 in rounds");
        for level in [Level::Quick, Level::Stress, Level::Soak] {
            plan_for(0, level).validate().unwrap();
        }
    }

    /// A snapshot whose GPU 0 has `replays` PCIe replays and `fatal` fatal AER errors.
    fn health(replays: u64, fatal: u64) -> Snapshot {
        use gpu_doctor_model::{AerCounters, GpuHealth, Probed};
        let mut s = Snapshot::unknown(Vec::new());
        let aer = AerCounters {
            fatal: AerCounters::parse(&format!("DLP {fatal}\nSDES 0\nTOTAL_ERR_FATAL {fatal}\n")),
            ..AerCounters::default()
        };
        let h = GpuHealth { index: 0, pcie_replay_count: Some(replays), aer: Some(aer), ..GpuHealth::default() };
        s.health.gpus = Probed::found(vec![h], "test");
        s.health.xid_events = Probed::found(Vec::new(), "test");
        s
    }

    #[test]
    fn the_health_stage_judges_each_gpus_pcie_errors_over_the_run() {
        let runs = vec![(Gpu { index: 0, ..Gpu::default() }, Err(anyhow::anyhow!("not measured in this test")))];
        let pcie = |after: &Snapshot| {
            let stage = health_stage(&health(5, 0), Some(after), &runs);
            stage.checks.into_iter().find(|c| c.id == "health.pcie").unwrap().verdict
        };
        assert_eq!(pcie(&health(5, 0)), CheckVerdict::Pass);
        assert_eq!(pcie(&health(9, 0)), CheckVerdict::Warn, "replays during the run");
        assert_eq!(pcie(&health(5, 1)), CheckVerdict::Fail, "a fatal AER error during the run");
    }
}
