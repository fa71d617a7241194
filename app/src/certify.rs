//! `gpu-doctor certify`: one run from a machine to a verdict kept as a certificate. Level 1 is the
//! live check with every Python environment probed deep, judged; levels 2 to 4 add the benchmark
//! (`ops::bench`) on every GPU, health before and after, and the stress tests the benchmark plan
//! offers. The rules are `gpu_doctor_judge::certify`; the certificate is
//! `gpu_doctor_model::certify`; its files are written through `files`. Certify changes nothing
//! on the machine. `--verify FILE` checks a kept certificate: intact, and this machine.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use clap::Args;
use gpu_doctor_judge::certify::{self as rules, LinkReading, PeerFigure};
use gpu_doctor_model::bench::plan::{BenchPlan, MAX_MEMTEST_SHARE, Precision, TestKind};
use gpu_doctor_model::bench::protocol::Metric;
use gpu_doctor_model::bench::run::BenchRun;
use gpu_doctor_model::certify::{
    CERTIFICATE_SCHEMA_VERSION, Certificate, Check, Level, MachineIdentity, Stage, StageRecord, Verdict,
};
use gpu_doctor_model::{EccChange, Gpu, Report, Snapshot, TOOL_VERSION};
use gpu_doctor_probes::host::Host;
use gpu_doctor_probes::probe::Options;

use crate::cli::args::{ProbeArgs, ReplayArg};
use crate::exit::{self, InputError};
use crate::ops;
use crate::render::certificate as render;

/// `certify --help` text after the options.
pub const AFTER_HELP: &str = "\
Levels (--level, default 2):
  1  software, seconds: every check of `check`, every Python environment
     imported (--deep), each GPU framework sees every GPU. No GPU load.
  2  quick, about 2 minutes a GPU: + the quick benchmark on each GPU (copies,
     device memory, GEMM, FMA), judged; pinned copies against the link; GPUs of
     one product against each other; Xid lines and memory errors before and
     after.
  3  stress, about 15 minutes: + a sustained GEMM load of at least 3 minutes,
     the memory test over most of the free memory, P2P between every pair,
     bidirectional copies.
  4  soak, --duration (default an hour): level 3 with the sustained load that
     long.
Levels 2-4 have never run on a GPU yet. Without a GPU, or under --replay, they end INCOMPLETE \
and the certificate says what could not be measured and why.

Writes certificate.json, certificate.md and certificate.html into --out (default: the current \
folder) and prints the verdict first. The thresholds and their sources: docs/certify.md.

Examples:

  gpu-doctor certify --level 1
  gpu-doctor certify --out ~/certs/ws-01
  gpu-doctor certify --verify ~/certs/ws-01/certificate.json
  gpu-doctor certify --against ~/certs/ws-01/certificate.json --out now

Exit codes: 0 PASS; 1 FAIL; 5 PASS WITH WARNINGS; 6 INCOMPLETE; with --verify, \
0 intact and this machine, 1 altered, 7 intact but another machine; 2 the command \
line was wrong; 3 an input (a replay folder, the file to verify) could not be read; \
4 gpu-doctor itself failed.";

/// `certify`.
#[derive(Debug, Args)]
pub struct CertifyArgs {
    /// How much to run: 1 software, 2 quick benchmark, 3 stress, 4 soak (see below).
    #[arg(long, value_name = "1|2|3|4", default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=4))]
    pub level: u8,
    /// The folder to write the certificate files into (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Level 4: how long the sustained load runs, seconds (default 3600).
    #[arg(long, value_name = "SECS")]
    pub duration: Option<u32>,
    /// Print the certificate as JSON on standard output instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// Check a kept certificate instead: is the file intact (its SHA-256), and is this the machine
    /// it describes (the same GPUs by UUID; with no GPU, the same host)?
    #[arg(long, value_name = "FILE", conflicts_with_all = ["out", "duration", "against"])]
    pub verify: Option<PathBuf>,
    /// Also compare this run with a kept certificate: a figure more than 10 % worse is a warning,
    /// a finding it did not have is named.
    #[arg(long, value_name = "FILE")]
    pub against: Option<PathBuf>,
    #[command(flatten)]
    pub probe: ProbeArgs,
    #[command(flatten)]
    pub replay: ReplayArg,
}

/// Where the facts come from.
pub struct Machine<'a> {
    /// The host to probe.
    pub host: &'a dyn Host,
    /// The options a replay was recorded with.
    pub recorded: Option<&'a Options>,
    /// The replayed folder, or `None` for this machine.
    pub replay: Option<&'a Path>,
}

/// `certify`: returns the exit code.
pub fn certify(machine: &Machine<'_>, args: &CertifyArgs, quiet: bool) -> Result<u8> {
    if let Some(file) = &args.verify {
        return verify(machine, file, args.json);
    }
    let level = Level::from_number(args.level).ok_or_else(|| exit::UsageError("--level is 1 to 4".into()))?;
    // Read before minutes of measuring: an unreadable file is an input error now.
    let kept = args.against.as_deref().map(read_certificate).transpose()?;
    let cert = run(machine, args, level, kept.as_ref(), quiet)?;
    let dir = args.out.clone().unwrap_or_else(|| PathBuf::from("."));
    std::fs::create_dir_all(&dir).with_context(|| format!("could not create {}", dir.display()))?;
    let json = serde_json::to_string_pretty(&cert).context("could not serialize the certificate")? + "\n";
    let written = [
        ("certificate.json", json.clone()),
        ("certificate.md", render::markdown(&cert)),
        ("certificate.html", render::html_page(&cert)),
    ];
    let text = if args.json { json } else { render::summary(&cert) };
    crate::files::to_stdout(text.as_bytes())?;
    for (name, body) in written {
        let path = dir.join(name);
        crate::files::write_file(&path, body)?;
        if !quiet {
            eprintln!("wrote {}", crate::render::text::clean(&path.display().to_string()));
        }
    }
    Ok(code(cert.verdict))
}

/// The exit code of a verdict.
pub fn code(verdict: Verdict) -> u8 {
    match verdict {
        Verdict::Pass => exit::OK,
        Verdict::Fail => exit::FINDINGS,
        Verdict::PassWithWarnings => exit::CERTIFY_WARNINGS,
        Verdict::Incomplete => exit::CERTIFY_INCOMPLETE,
    }
}

fn now_unix_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The knowledge base's version: gpu-doctor's, with the SHA-256 of its embedded tables.
fn kb_version() -> String {
    let tables: String = gpu_doctor_kb::embedded_tables().map(|(name, text)| format!("{name}\n{text}\n")).collect();
    let digest = gpu_doctor_model::certify::sha256_hex(tables.as_bytes());
    format!("{TOOL_VERSION} (tables sha256:{})", &digest[..16])
}

/// Runs the level and returns the sealed certificate.
fn run(
    machine: &Machine<'_>,
    args: &CertifyArgs,
    level: Level,
    kept: Option<&Certificate>,
    quiet: bool,
) -> Result<Certificate> {
    let started_at_unix_secs = now_unix_secs();
    let clock = Instant::now();
    let deep = ProbeArgs { deep: true, pythons: args.probe.pythons.clone() };
    let opts = ops::options(&deep, machine.recorded);
    if !quiet {
        eprintln!("certify level {}: probing and importing the frameworks in each Python environment", level.number());
    }
    let report = ops::check(machine.host, &opts)?;
    let mut stages = vec![software(&report, clock.elapsed())];
    if level >= Level::Quick {
        stages.extend(measured_stages(machine, &report.snapshot, &opts, level, args.duration, quiet));
    }
    if let Some(kept) = kept {
        let now: Vec<&Check> = stages.iter().flat_map(|s| &s.checks).collect();
        let checks = rules::against(kept, &now);
        stages.push(StageRecord { stage: Stage::Against, not_run: None, duration_secs: 0.0, checks });
    }
    let (verdict, reasons) = rules::verdict(stages.iter().flat_map(|s| &s.checks));
    let origin = match machine.replay {
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
    level: Level,
    duration: Option<u32>,
    quiet: bool,
) -> Vec<StageRecord> {
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
    let runs: Vec<(Gpu, Result<BenchRun>)> = gpus
        .into_iter()
        .map(|gpu| {
            if !quiet {
                eprintln!("certify: benchmarking GPU {} ({})", gpu.index, gpu.name.as_deref().unwrap_or("unknown"));
            }
            let plan = plan_for(gpu.index, level, duration);
            let run = ops::bench::measure(Some(snap), &plan, ops::bench::Measure::default(), &mut |_| {});
            (gpu, run)
        })
        .collect();
    let bench_took = clock.elapsed().as_secs_f64();
    let after = ops::snapshot(machine.host, &Options { deep: false, ..opts.clone() });
    let mut out = vec![benchmark_stage(snap, &runs, bench_took)];
    out.push(health_stage(snap, after.as_ref().ok(), &runs));
    if level >= Level::Stress {
        out.push(stress_stage(&runs));
    }
    if level >= Level::Soak {
        out.push(not_run_stage(
            Stage::Soak,
            "rounds of level 3 and the drift between them are not built yet: level 4 runs the sustained load for \
             --duration once",
        ));
    }
    out
}

fn not_run_stage(stage: Stage, why: &str) -> StageRecord {
    let id = match stage {
        Stage::Software | Stage::Benchmark => "bench.quick",
        Stage::Health => "health.xid",
        Stage::Stress => "stress.sustained",
        Stage::Soak => "soak.rounds",
        Stage::Against => "against.figure",
    };
    let check = rules::not_run(id, stage, "every GPU", why);
    StageRecord { stage, not_run: Some(why.to_owned()), duration_secs: 0.0, checks: vec![check] }
}

/// The benchmark plan of a level for one GPU.
fn plan_for(gpu: u32, level: Level, duration: Option<u32>) -> BenchPlan {
    use TestKind::{Bidir, D2d, D2h, Fma, Gemm, H2d, Memtest, P2p, Sustained};
    match level {
        Level::Software | Level::Quick => BenchPlan::preset(gpu, vec![H2d, D2h, D2d, Gemm, Fma], true),
        Level::Stress | Level::Soak => {
            let mut plan =
                BenchPlan::preset(gpu, vec![H2d, D2h, Bidir, D2d, P2p, Gemm, Fma, Memtest, Sustained], false);
            plan.memtest_share = MAX_MEMTEST_SHARE;
            plan.sustained_secs = if level == Level::Soak { duration.unwrap_or(3600) } else { 180 };
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
        let link = LinkReading {
            gen_max: gpu.pcie_gen_max,
            width_max: gpu.pcie_width_max,
            gen_idle: gpu.pcie_gen_current,
            // The benchmark's telemetry does not read the link's generation during the copy yet.
            gen_under_load: None,
            width_under_load: None,
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

/// Xid lines and memory errors before the benchmark against after it.
fn health_stage(before: &Snapshot, after: Option<&Snapshot>, runs: &[(Gpu, Result<BenchRun>)]) -> StageRecord {
    let Some(after) = after else {
        return not_run_stage(Stage::Health, "the machine could not be probed again after the benchmark");
    };
    let mut checks = vec![rules::xid_during_run(&before.health.xid_events, &after.health.xid_events)];
    for (gpu, _) in runs {
        let read = |s: &Snapshot| {
            s.health.gpus.value().and_then(|g| g.iter().find(|h| h.index == gpu.index)).map(|h| h.memory_errors.clone())
        };
        let change = match (read(before), read(after)) {
            (Some(b), Some(a)) => EccChange::between(&b, &a),
            _ => EccChange::unread("the health probe did not answer for this GPU"),
        };
        checks.push(rules::memory_errors(&subject(gpu), Some(&change)));
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
fn read_certificate(file: &Path) -> Result<Certificate> {
    let text =
        std::fs::read_to_string(file).map_err(|e| InputError(format!("could not read {}: {e}", file.display())))?;
    Ok(serde_json::from_str(&text).map_err(|e| {
        InputError(format!("{} is not a certificate written by `gpu-doctor certify`: {e}", file.display()))
    })?)
}

/// `certify --verify FILE`: whether the file is intact, and whether this machine is the one it
/// describes; both said.
fn verify(machine: &Machine<'_>, file: &Path, json: bool) -> Result<u8> {
    let cert = read_certificate(file)?;
    let intact = cert.intact().context("could not hash the certificate")?;
    let snap = ops::snapshot(machine.host, &ops::options(&ProbeArgs::default(), machine.recorded))?;
    let here = MachineIdentity::of(&snap);
    let same = cert.machine.same_machine(&here);
    let code = match (intact, &same) {
        (false, _) => exit::FINDINGS,
        (true, Err(_)) => exit::VERIFY_OTHER_MACHINE,
        (true, Ok(_)) => exit::OK,
    };
    let text = if json {
        let out = serde_json::json!({
            "file": file.display().to_string(),
            "intact": intact,
            "same_machine": same.is_ok(),
            "machine": match &same { Ok(w) | Err(w) => w },
            "verdict": cert.verdict,
            "level": cert.level.number(),
        });
        serde_json::to_string_pretty(&out).context("could not serialize the answer")? + "\n"
    } else {
        let first = if intact {
            format!("intact: the SHA-256 matches ({})", cert.sha256)
        } else {
            "ALTERED: the SHA-256 does not match the content; the file was changed after it was written".to_owned()
        };
        let second = match &same {
            Ok(w) => format!("this machine: yes ({w})"),
            Err(w) => format!("this machine: NO ({w})"),
        };
        let said = format!("it says: {}", render::headline(&cert));
        let clean = crate::render::text::clean;
        format!("{}\n{}\n{}\n", clean(&first), clean(&second), clean(&said))
    };
    crate::files::to_stdout(text.as_bytes())?;
    Ok(code)
}
