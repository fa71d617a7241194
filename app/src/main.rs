//! gpu-doctor: checks an NVIDIA GPU machine for machine learning.
//!
//! This file is command code: it picks the host and runs `check`, `diagnose`, `report`,
//! `record-fixture` and `compare` (`bench.rs` runs `bench`, `fleet.rs` runs `fleet`, `fix.rs` runs `fix`, `setup.rs` `setup`, `certify.rs` `certify`; `cli/generate.rs` the
//! hidden `completions` and `man`) through the services below it (`ops`, `render`, `exit`, `files`), which the window
//! (`gui`) uses too; nothing below uses this file (`tests/tests/layering.rs` checks that no two files
//! import each other).

mod bench;
mod certify;
mod cli;
mod exit;
mod files;
mod fix;
mod fleet;
mod gui;
mod input;
mod ops;
mod plots;
mod redact;
mod render;
mod setup;

/// The folder of the recorded machine `name` in `tests/fixtures/`.
#[cfg(test)]
fn fixture_dir(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(name)
}

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use gpu_doctor_model::Report;
use gpu_doctor_probes::host::{FIXTURE_FILE, Host, RecordingHost, ReplayHost, SystemHost};
use gpu_doctor_probes::probe::{self, Options};

use cli::args::ProbeArgs;
use cli::{CheckArgs, Cli, Command, CompareArgs, DiagnoseArgs, RecordArgs, ReportArgs};
use exit::{InputError, UsageError};
use input::read_input;

fn main() -> ExitCode {
    let started = Instant::now();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_env("GPU_DOCTOR_LOG"))
        .with_writer(std::io::stderr)
        .init();
    // Children run in their own process groups; pass a Ctrl+C or a SIGTERM on to them before exiting.
    if let Err(e) = gpu_doctor_probes::host::process::forward_signals() {
        tracing::warn!("could not watch for SIGINT and SIGTERM: {e}");
    }
    let cli = Cli::parse_checked();
    match run(cli, started) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("gpu-doctor: {}", render::text::clean(&format!("{e:#}")));
            ExitCode::from(exit::for_error(&e))
        }
    }
}

fn run(cli: Cli, started: Instant) -> Result<u8> {
    // A replay probes with the options the fixture was recorded with (none for an old fixture).
    let replay = cli.replay_dir().cloned();
    let (host, recorded): (Arc<dyn Host>, Option<Options>) = match &replay {
        Some(dir) => {
            let replay = ReplayHost::load(dir).map_err(|e| InputError(format!("{e}")))?;
            let recorded = replay.fixture().recorded_with.clone().unwrap_or_default();
            (Arc::new(replay), Some(recorded))
        }
        None => (Arc::new(SystemHost::new()), None),
    };
    let this_machine = replay.is_none();
    let recorded = recorded.as_ref();
    let color = cli.color.enabled(std::env::var_os("NO_COLOR").as_deref(), std::io::stdout().is_terminal());
    let quiet = cli.quiet;
    match cli.command {
        Some(Command::Check(args)) => check(host.as_ref(), &args, recorded, color),
        Some(Command::Report(args)) => report(host.as_ref(), &args, recorded, quiet),
        Some(Command::Diagnose(args)) => diagnose_text(&args, color),
        Some(Command::RecordFixture(args)) => record(&args, this_machine, quiet),
        Some(Command::Bench(args)) => Ok(bench::bench(host.as_ref(), &args, this_machine, quiet, cli.color)),
        Some(Command::Fleet(args)) => fleet::fleet(&args, quiet),
        Some(Command::Compare(args)) => compare(&args, cli.color, quiet),
        Some(Command::Fix(args)) => {
            fix::fix(host.as_ref(), &args, &ops::options(&args.probe, recorded), this_machine, quiet)
        }
        Some(Command::Setup(args)) => {
            setup::setup(host.as_ref(), &args, &ops::options(&ProbeArgs::default(), recorded), this_machine, quiet)
        }
        Some(Command::Certify(args)) => {
            let machine = ops::certify::Machine { host: host.as_ref(), recorded, replay: replay.as_deref() };
            certify::certify(&machine, &args, quiet)
        }
        Some(Command::Processes(args)) => processes(&args, this_machine),
        Some(Command::BenchWorker) => Ok(bench::worker()),
        Some(Command::Completions { shell }) => cli::generate::print_completions(shell),
        Some(Command::Man { dir }) => cli::generate::man(dir.as_deref(), quiet),
        None => {
            let no_display = std::env::var_os("DISPLAY").is_none() && std::env::var_os("WAYLAND_DISPLAY").is_none();
            let why = if no_display {
                "no display found (DISPLAY and WAYLAND_DISPLAY are unset)".to_owned()
            } else {
                let screenshot = cli.screenshot.clone().map(|path| gui::ScreenshotRequest::new(path, cli.page));
                let options = ops::options(&cli.window_probe(), recorded);
                let telemetry = Arc::new(gpu_doctor_probes::host::telemetry::NvmlSource::default());
                let launch = gui::Launch {
                    host: Arc::clone(&host),
                    replay,
                    options,
                    screenshot,
                    started,
                    storage: None,
                    telemetry,
                };
                match (gui::run(launch), &cli.screenshot) {
                    (Err(e), None) => format!("{e:#}"),
                    (Ok(code), Some(path)) => {
                        if !quiet {
                            eprintln!("wrote {}", path.display());
                        }
                        return Ok(code);
                    }
                    (result, _) => return result,
                }
            };
            if cli.screenshot.is_some() {
                return Err(UsageError(
                    "--screenshot needs a display (DISPLAY or WAYLAND_DISPLAY); under CI, run it with xvfb-run".into(),
                )
                .into());
            }
            let args = CheckArgs {
                probe: cli.window_probe(),
                replay: cli::args::ReplayArg::default(),
                json: false,
                verbose: false,
            };
            let code = check(host.as_ref(), &args, recorded, color)?;
            if !quiet {
                let why = render::text::clean(&why);
                eprintln!("\nhint: {why}, so here is the terminal summary; `gpu-doctor --help` lists the commands.");
            }
            Ok(code)
        }
    }
}

fn check(host: &dyn Host, args: &CheckArgs, recorded: Option<&Options>, color: bool) -> Result<u8> {
    let report = ops::check(host, &ops::options(&args.probe, recorded))?;
    print_report(&report, args.json, args.verbose, color)
}

/// Prints a report as JSON or as the summary (coloured with `color`); the exit code follows its
/// findings.
fn print_report(report: &Report, json: bool, verbose: bool, color: bool) -> Result<u8> {
    let text = if json {
        render::document::json(report).context("could not write the JSON report")?
    } else {
        render::text::summary(report, color, verbose)
    };
    files::to_stdout(text.as_bytes())?;
    Ok(exit::for_findings(&report.findings))
}

fn diagnose_text(args: &DiagnoseArgs, color: bool) -> Result<u8> {
    let text = read_input(&args.from)?;
    let report = ops::diagnose(&text).with_context(|| args.from.display().to_string())?;
    print_report(&report, args.json, args.verbose, color)
}

fn report(host: &dyn Host, args: &ReportArgs, recorded: Option<&Options>, quiet: bool) -> Result<u8> {
    let saved = match &args.bench {
        Some(path) => Some(ops::bench::load(path).map_err(|e| InputError(format!("{e:#}")))?),
        None => None,
    };
    let report = ops::check(host, &ops::options(&args.probe, recorded))?;
    let text = render::document::document(&report, saved.as_ref(), args.format, args.redact)?;
    files::emit(args.output.as_deref(), text, quiet)?;
    Ok(exit::OK)
}

/// Compares a fleet's reports and prints or writes the comparison. Colour follows `--color` for
/// standard output, and only `--color always` colours a file. Exit 1 when a fleet finding is an
/// error, 3 when no report could be read.
fn compare(args: &CompareArgs, color: cli::args::ColorWhen, quiet: bool) -> Result<u8> {
    let comparison = ops::compare(&args.paths)?;
    let no_color = std::env::var_os("NO_COLOR");
    let terminal = args.output.is_none() && std::io::stdout().is_terminal();
    let text = render::compare::document(&comparison, args.format, color.enabled(no_color.as_deref(), terminal))
        .context("could not serialize the comparison")?;
    files::emit(args.output.as_deref(), text, quiet)?;
    let error = comparison.findings.iter().any(|f| f.severity == gpu_doctor_model::Severity::Error);
    Ok(if error { exit::FINDINGS } else { exit::OK })
}

/// One GPU's processes as `processes --json` prints them.
#[derive(serde::Serialize)]
struct ProcessesOut {
    gpu: u32,
    bus_id: Option<String>,
    #[serde(flatten)]
    list: gpu_doctor_probes::host::processes::GpuProcesses,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// Lists the processes on each of this machine's GPUs once, through the window's telemetry source.
fn processes(args: &cli::ProcessesArgs, this_machine: bool) -> Result<u8> {
    use gpu_doctor_probes::host::telemetry::{NvmlSource, TelemetrySource, nvml_targets};
    if !this_machine {
        return Err(UsageError(
            "processes lists this machine's GPU processes; it cannot be combined with --replay".into(),
        )
        .into());
    }
    let targets = nvml_targets().map_err(|e| InputError(format!("no GPU to ask: {e}")))?;
    let source = NvmlSource::default();
    let lists: Vec<ProcessesOut> = targets
        .into_iter()
        .map(|t| {
            let (list, error) = match source.processes(&t, 0) {
                Ok(list) => (list, None),
                Err(e) => (Default::default(), Some(e)),
            };
            ProcessesOut { gpu: t.index, bus_id: t.bus_id, list, error }
        })
        .collect();
    let text = if args.json {
        serde_json::to_string_pretty(&lists).context("could not serialize the processes")? + "\n"
    } else {
        let mut out = String::new();
        for l in &lists {
            let bus_id = l.bus_id.as_deref().map_or_else(|| "bus id unknown".to_owned(), render::text::clean);
            out.push_str(&format!("GPU {} ({bus_id})\n", l.gpu));
            match &l.error {
                Some(e) => out.push_str(&format!("  NVML did not list the processes: {}\n", render::text::clean(e))),
                None => out.push_str(&render::processes::table(&l.list, None)),
            }
        }
        out
    };
    files::emit(None, text, false)?;
    Ok(exit::OK)
}

/// Records this machine into `DIR/host.json`, with the options it was probed with. The file is
/// replaced only with `--force`, never through a symlink, and atomically (a full disk keeps the
/// previous fixture).
fn record(args: &RecordArgs, this_machine: bool, quiet: bool) -> Result<u8> {
    if !this_machine {
        return Err(
            UsageError("record-fixture records this machine; it cannot be combined with --replay".into()).into()
        );
    }
    let path = args.dir.join(FIXTURE_FILE);
    // Refuse before minutes of probing, and again when writing.
    files::check_own_file(&path, args.force)?;
    let host = RecordingHost::new(probe::env::is_relevant);
    let opts = ops::options(&args.probe, None);
    let snap = ops::snapshot(&host, &opts)?;
    host.note_options(&opts);
    let text = host.to_json().context("could not turn the recording into JSON")?;
    std::fs::create_dir_all(&args.dir).with_context(|| format!("could not create {}", args.dir.display()))?;
    files::write_own_file(&path, text, args.force)
        .with_context(|| format!("could not write the fixture to {}", args.dir.display()))?;
    if quiet {
        return Ok(exit::OK);
    }
    // The folder is the user's own text, but the line is for pasting into a shell: quote it.
    let replay = gpu_doctor_model::shell::ShellCommand::new("gpu-doctor")
        .arg("--replay")
        .arg(args.dir.to_string_lossy())
        .arg("check")
        .render(gpu_doctor_model::shell::Shell::for_os(gpu_doctor_model::Platform::current().os))
        .unwrap_or_else(|_| format!("gpu-doctor --replay {} check", args.dir.display()));
    eprintln!(
        "recorded {} GPU(s), {} Python environment(s) into {}\nreplay it with: {}",
        snap.gpus.value().map_or(0, Vec::len),
        snap.python_envs.value().map_or(0, Vec::len),
        render::text::clean(&path.display().to_string()),
        render::text::clean(&replay)
    );
    Ok(exit::OK)
}
