//! gpu-doctor: checks an NVIDIA GPU machine for machine learning.

mod bench;
mod cli;
mod gui;
mod input;
mod plots;
mod redact;
mod render;

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;
use gpu_doctor_probes::compat::Kb;
use gpu_doctor_probes::diagnose::diagnose;
use gpu_doctor_probes::host::{Host, RecordingHost, ReplayHost, SystemHost};
use gpu_doctor_probes::probe::{self, Options};
use gpu_doctor_probes::{Finding, Report, Severity, Snapshot};

pub(crate) use input::decode_text;
use input::read_input;

use cli::{CheckArgs, Cli, Command, DiagnoseArgs, ProbeArgs, RecordArgs, ReportArgs};

fn main() -> ExitCode {
    let started = Instant::now();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_env("GPU_DOCTOR_LOG"))
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match run(cli, started) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("gpu-doctor: {e:#}");
            ExitCode::from(e.downcast_ref::<InputError>().map_or(cli::EXIT_INTERNAL, |_| cli::EXIT_INPUT))
        }
    }
}

/// An input that could not be read (exit code 3).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct InputError(String);

fn run(cli: Cli, started: Instant) -> Result<u8> {
    let host: Arc<dyn Host> = match &cli.replay {
        Some(dir) => Arc::new(ReplayHost::load(dir).map_err(|e| InputError(format!("{e}")))?),
        None => Arc::new(SystemHost::new()),
    };
    let this_machine = cli.replay.is_none();
    match cli.command {
        Some(Command::Check(args)) => check(host.as_ref(), &args),
        Some(Command::Report(args)) => report(host.as_ref(), &args),
        Some(Command::Diagnose(args)) => diagnose_text(&args),
        Some(Command::RecordFixture(args)) => record(&args, this_machine),
        Some(Command::Bench(args)) => Ok(bench::bench(host.as_ref(), &args, this_machine)),
        Some(Command::BenchWorker) => Ok(bench::worker()),
        None => {
            let no_display = std::env::var_os("DISPLAY").is_none() && std::env::var_os("WAYLAND_DISPLAY").is_none();
            let why = if no_display {
                "no display found (DISPLAY and WAYLAND_DISPLAY are unset)".to_owned()
            } else {
                let screenshot = cli.screenshot.clone().map(|path| gui::ScreenshotRequest::new(path, cli.page));
                let options = options(&ProbeArgs::default());
                let launch = gui::Launch {
                    host: Arc::clone(&host),
                    replay: cli.replay,
                    options,
                    screenshot,
                    started,
                    storage: None,
                };
                match gui::run(launch) {
                    Err(e) if cli.screenshot.is_none() => format!("{e:#}"),
                    result => return result,
                }
            };
            anyhow::ensure!(
                cli.screenshot.is_none(),
                "--screenshot needs a display (DISPLAY or WAYLAND_DISPLAY); under CI, run it with xvfb-run"
            );
            let code = check(host.as_ref(), &CheckArgs { probe: ProbeArgs::default(), json: false, verbose: false })?;
            eprintln!("\nhint: {why}, so here is the terminal summary; `gpu-doctor --help` lists the commands.");
            Ok(code)
        }
    }
}

fn options(args: &ProbeArgs) -> Options {
    Options { deep: args.deep, extra_pythons: args.pythons.clone(), cwd: std::env::current_dir().ok() }
}

fn snapshot(host: &dyn Host, args: &ProbeArgs) -> Snapshot {
    probe::collect(host, &options(args))
}

/// A snapshot with the findings of every rule.
fn judged(snap: Snapshot) -> Result<Report> {
    let kb = Kb::get().map_err(|e| anyhow::anyhow!("the knowledge base did not load: {e}"))?;
    let findings = diagnose(&snap, kb);
    Ok(Report::new(snap, findings))
}

/// 1 when any finding is an error, else 0.
fn exit_for(findings: &[Finding]) -> u8 {
    if findings.iter().any(|f| f.severity == Severity::Error) { cli::EXIT_FINDINGS } else { cli::EXIT_OK }
}

fn check(host: &dyn Host, args: &CheckArgs) -> Result<u8> {
    let report = judged(snapshot(host, &args.probe))?;
    print_report(&report, args.json, args.verbose)
}

/// Prints a report as JSON or as the summary; the exit code follows its findings.
fn print_report(report: &Report, json: bool, verbose: bool) -> Result<u8> {
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, report).context("could not write the JSON report")?;
        writeln!(out)?;
    } else {
        let color = std::env::var_os("NO_COLOR").is_none() && std::io::IsTerminal::is_terminal(&std::io::stdout());
        out.write_all(render::text::summary(report, color, verbose).as_bytes())?;
    }
    Ok(exit_for(&report.findings))
}

fn diagnose_text(args: &DiagnoseArgs) -> Result<u8> {
    let text = read_input(&args.from)?;
    let kb = Kb::get().map_err(|e| anyhow::anyhow!("{e}"))?;
    let snap = gpu_doctor_probes::parse::paste::read_pasted(&text, kb)
        .map_err(|e| InputError(format!("{}: {e}", args.from.display())))?;
    print_report(&judged(snap)?, args.json, args.verbose)
}

fn report(host: &dyn Host, args: &ReportArgs) -> Result<u8> {
    let saved = match &args.bench {
        Some(path) => Some(bench::load(path).map_err(|e| InputError(format!("{e:#}")))?),
        None => None,
    };
    let report = judged(snapshot(host, &args.probe))?;
    let text = render::document::document(&report, saved.as_ref(), args.format, args.redact)?;
    match &args.output {
        Some(path) => {
            write_file(path, &text)?;
            eprintln!("wrote {}", path.display());
        }
        None => std::io::stdout().lock().write_all(text.as_bytes())?,
    }
    Ok(cli::EXIT_OK)
}

fn record(args: &RecordArgs, this_machine: bool) -> Result<u8> {
    anyhow::ensure!(this_machine, "record-fixture records this machine; it cannot be combined with --replay");
    let host = RecordingHost::new(probe::env::is_relevant);
    let snap = snapshot(&host, &args.probe);
    let path =
        host.write(&args.dir).with_context(|| format!("could not write the fixture to {}", args.dir.display()))?;
    eprintln!(
        "recorded {} GPU(s), {} Python environment(s) into {}\nreplay it with: gpu-doctor --replay {} check",
        snap.gpus.value().map_or(0, Vec::len),
        snap.python_envs.value().map_or(0, Vec::len),
        path.display(),
        args.dir.display()
    );
    Ok(cli::EXIT_OK)
}

/// Writes a file through a temporary sibling, so a failed write never leaves half a file behind.
/// The one writer of every file gpu-doctor makes (reports, runs, settings, screenshots).
fn write_file(path: &Path, bytes: impl AsRef<[u8]>) -> Result<()> {
    let tmp = path.with_extension("tmp-gpu-doctor");
    std::fs::write(&tmp, bytes).with_context(|| format!("could not write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("could not move {} into place", path.display()))
}
