//! The command line: what each command and option means, written for someone new to the tool.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::render::document::Format;
use args::{ColorWhen, ProbeArgs, ReplayArg};

const ABOUT: &str = "Checks an NVIDIA GPU machine for machine learning: driver, GPUs, PCIe and Thunderbolt links, \
CUDA toolkits, cuDNN, and the PyTorch, TensorFlow, JAX and CuPy installs in every Python environment.";

const AFTER_HELP: &str = "\
Examples:
  gpu-doctor check                 summary of this machine in the terminal
  gpu-doctor check --deep          also import the frameworks in each Python
                                   environment
  gpu-doctor check --json          the full report as JSON (for scripts)
  gpu-doctor report --format md -o report.md
                                   a Markdown report to paste into a GitHub
                                   issue
  gpu-doctor report --format html --redact -o report.html
                                   one page to open offline or attach, without
                                   names or serials
  gpu-doctor diagnose --from support-thread.txt
                                   diagnose another machine from pasted
                                   collect_env, nvidia-smi, pip list,
                                   tracebacks or a gpu-doctor report
  pbpaste | gpu-doctor diagnose --from -
                                   the same from standard input
  gpu-doctor record-fixture ./my-machine
                                   record what the probes saw, for a bug report
  gpu-doctor --replay ./my-machine check
                                   look at a recorded machine instead of this
                                   one
  gpu-doctor bench --quick         measure the GPU and judge every number
  gpu-doctor processes             which processes use each GPU, with their GPU
                                   memory and utilisation
  gpu-doctor compare fleet/        which node of a fleet is not like the others
                                   (a folder of `report --format json` files)
  gpu-doctor --python ~/venv/bin/python --deep
                                   the window, also looking at (and importing
                                   in) that interpreter

Exit codes (check and diagnose): 0 no error found; 1 at least one error-level finding; 2 the command \
line was wrong (also `--replay` with record-fixture, `--screenshot` without a display); 3 the input \
could not be read (also a `--python` that is not there); 4 gpu-doctor itself failed. Other commands \
exit 0 when they ran, and 2, 3 or 4 likewise. Output cut short by its reader (`check | head`) ends \
quietly with the code the command would have had.

With no command, gpu-doctor opens its window (F5 checks again, Ctrl+S exports the report); without a \
display it prints the `check` summary. `gpu-doctor --screenshot shot.png --page checks` saves a picture \
of a page once the probes are done.";

const EXIT_HELP: &str = "\
Exit codes: 0 no error-level finding; 1 at least one error-level finding; 2 the command line was \
wrong; 3 the input could not be read; 4 gpu-doctor itself failed.";

const COMPARE_EXIT_HELP: &str = "\
Exit codes: 0 no error-level fleet finding; 1 at least one (a node without a report, a node with \
error-level findings); 2 the command line was wrong; 3 no report could be read; 4 gpu-doctor itself \
failed.";

/// What `--version` prints after the name, and the window's title after "gpu-doctor":
/// `0.1.0 · knowledge base of 2026-10-28` (the knowledge base's date: its newest row).
pub fn version_line() -> &'static str {
    static LINE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    LINE.get_or_init(|| {
        let version = gpu_doctor_model::TOOL_VERSION;
        match gpu_doctor_kb::Kb::get().ok().and_then(|kb| kb.date()) {
            Some(date) => format!("{version} · knowledge base of {date}"),
            None => version.to_owned(),
        }
    })
}

/// gpu-doctor: is this machine ready for GPU machine learning, and if not, why not?
#[derive(Debug, Parser)]
#[command(name = "gpu-doctor", version = version_line(), about = ABOUT, after_help = AFTER_HELP)]
pub struct Cli {
    /// Look at a machine recorded with `record-fixture` (a folder) instead of this one: in the
    /// window, `check` and `report` (which also take it after the command).
    #[arg(long, value_name = "DIR")]
    pub replay: Option<PathBuf>,
    /// What the window's probes look at (and the summary printed without a display); a command
    /// takes its own after its name.
    #[command(flatten)]
    pub probe: ProbeArgs,
    /// Window only: once the probes are done, save a PNG of the window to PATH and exit.
    #[arg(long, value_name = "PATH")]
    pub screenshot: Option<PathBuf>,
    /// Window only: the page to open (and to take with `--screenshot`).
    #[arg(long, value_enum, value_name = "NAME", default_value = "overview")]
    pub page: crate::gui::Page,
    /// When to colour the terminal summary and the help: auto (on a terminal, unless NO_COLOR is
    /// set and not empty), always (also into a pipe or a file, whatever NO_COLOR says) or never.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value = "auto", hide_possible_values = true)]
    pub color: ColorWhen,
    /// No progress bars or informational lines (`wrote FILE`, hints) on standard error; warnings
    /// and errors are still printed.
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// What to do; without one, opens the window (or, without a display, shows the `check` summary).
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// `--color` as typed (the last one wins), for clap's help and errors, which are written before
/// the parse is done. Anything else is clap's to report.
fn clap_color(args: &[OsString]) -> clap::ColorChoice {
    let mut choice = clap::ColorChoice::Auto;
    let mut args = args.iter().skip(1).map(|a| a.to_str());
    while let Some(arg) = args.next() {
        let value = match arg {
            Some("--") => break,
            Some("--color") => args.next().flatten(),
            Some(a) => a.strip_prefix("--color="),
            None => None,
        };
        match value.and_then(|v| <ColorWhen as clap::ValueEnum>::from_str(v, false).ok()) {
            Some(ColorWhen::Auto) => choice = clap::ColorChoice::Auto,
            Some(ColorWhen::Always) => choice = clap::ColorChoice::Always,
            Some(ColorWhen::Never) => choice = clap::ColorChoice::Never,
            None => {}
        }
    }
    choice
}

impl ColorWhen {
    /// Whether to colour, given the `NO_COLOR` variable (`None`: unset) and whether standard
    /// output is a terminal.
    pub fn enabled(self, no_color: Option<&OsStr>, terminal: bool) -> bool {
        match self {
            Self::Always => true,
            Self::Never => false,
            Self::Auto => terminal && no_color.is_none_or(OsStr::is_empty),
        }
    }
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Probe this machine and print a summary: driver, GPUs and their links, CUDA toolkits, cuDNN,
    /// and each Python environment with its frameworks; then the findings, each with its evidence
    /// and fix.
    #[command(after_help = EXIT_HELP)]
    Check(CheckArgs),
    /// Diagnose another machine from text: PyTorch's collect_env, nvidia-smi (table, -q, -q -x, CSV,
    /// --version), nvidia-container-cli info,
    /// nvcc --version, pip list/freeze, conda list, JAX and TensorFlow version prints, tracebacks and
    /// error lines, or a gpu-doctor report, pasted together in any order.
    #[command(after_help = EXIT_HELP)]
    Diagnose(DiagnoseArgs),
    /// Write the full report as a file (JSON for tools, Markdown for GitHub issues, HTML to open
    /// in a browser); `--redact` hides who and which machine it came from.
    Report(ReportArgs),
    /// Record every command output, file and NVML answer the probes use into DIR, so the machine
    /// can be replayed with `--replay DIR` from any folder (user and host names are replaced). The
    /// options (`--deep`, `--python`, the working folder) are recorded too, and replayed.
    RecordFixture(RecordArgs),
    /// Measure what the GPU delivers (transfers, memory bandwidth, GEMM, compute, memory test) and
    /// judge each number against what this hardware should reach.
    #[command(after_help = crate::bench::AFTER_HELP)]
    Bench(crate::bench::BenchArgs),
    /// Check many machines: run `report --format json` on each node of a SLURM allocation, a
    /// Kubernetes GPU node pool or a list of SSH hosts, and collect one report per node into a folder.
    Fleet(crate::fleet::FleetArgs),
    /// Compare many machines: a folder of reports (`report --format json`, one per node, or a
    /// `gpu-doctor fleet` folder with its fleet.json) or report files. Shows what every node
    /// shares, groups identical nodes, marks every value that differs from the majority, compares
    /// benchmark runs (a node more than 15 % worse than the median is slow), and names each outlier.
    #[command(after_help = COMPARE_EXIT_HELP)]
    Compare(CompareArgs),
    /// Fix what check found: the plan for each finding that has one (install the framework build
    /// that runs on this GPU and driver, the driver this GPU needs, …), shown step by step, and
    /// carried out with --apply, then checked again.
    #[command(after_help = crate::fix::AFTER_HELP)]
    Fix(crate::fix::FixArgs),
    /// Build a new Python environment for this machine: the framework build that runs on its GPUs
    /// and driver (with the reason for every build turned down), shown as a plan, and with --apply
    /// made, then proven on the GPU.
    #[command(after_help = crate::setup::AFTER_HELP)]
    Setup(crate::setup::SetupArgs),
    /// Certify this machine: one run from the checks (level 1) through the benchmark (2), stress (3)
    /// and soak (4) to a verdict (PASS, PASS WITH WARNINGS, FAIL or INCOMPLETE), kept as a
    /// certificate (JSON, Markdown, HTML) with every check's measurement, threshold and source and a
    /// SHA-256; `--verify FILE` checks a kept one. Certify changes nothing on the machine.
    #[command(after_help = crate::certify::AFTER_HELP)]
    Certify(crate::certify::CertifyArgs),
    /// List the processes on each of this machine's GPUs once, as the window's Telemetry page
    /// shows them: pid, owner, compute (C) or graphics (G) context, GPU memory, SM and memory
    /// utilisation, host CPU and memory, command line. From NVML and /proc; CPU % needs two
    /// looks, so it is blank here. Inside a container NVML gives the host's pids, which cannot be
    /// looked up there.
    Processes(ProcessesArgs),
    /// Internal: run a benchmark plan read as JSON on standard input, writing events on standard
    /// output. `bench` starts it, so CUDA never loads in the main process.
    #[command(hide = true)]
    BenchWorker,
    /// For packaging: print the completion script for SHELL on standard output.
    #[command(hide = true)]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// For packaging: print the man page gpu-doctor.1 on standard output, or write it and a page
    /// per command (gpu-doctor-check.1, ...) into DIR.
    #[command(hide = true)]
    Man {
        /// Write every page into this folder instead.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

/// `check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub probe: ProbeArgs,
    #[command(flatten)]
    pub replay: ReplayArg,
    /// Print the full report as JSON instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// Also print every method each probe tried and what it answered.
    #[arg(long, short)]
    pub verbose: bool,
}

/// `processes`.
#[derive(Debug, Args)]
pub struct ProcessesArgs {
    /// Print one JSON object per GPU (index, bus id, processes, notes or error) as an array.
    #[arg(long)]
    pub json: bool,
}

/// `diagnose`.
#[derive(Debug, Args)]
pub struct DiagnoseArgs {
    /// The text to read: a file, or `-` for standard input.
    #[arg(long, value_name = "FILE|-")]
    pub from: PathBuf,
    /// Print the report as JSON (findings as a top-level array) instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// Show details in full.
    #[arg(long, short)]
    pub verbose: bool,
}

/// `report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub probe: ProbeArgs,
    #[command(flatten)]
    pub replay: ReplayArg,
    /// The format.
    #[arg(long, value_enum, default_value = "md")]
    pub format: Format,
    /// Write to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Include a benchmark run saved with `gpu-doctor bench -o FILE`.
    #[arg(long, value_name = "FILE")]
    pub bench: Option<PathBuf>,
    /// Replace user and host names, home folders (with `~`), serial numbers and UUIDs, so the
    /// report can be shared in public.
    #[arg(long)]
    pub redact: bool,
}

/// `compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// A folder of reports (with or without fleet.json) or report files; more than one adds up.
    #[arg(value_name = "FOLDER|FILE", required = true)]
    pub paths: Vec<PathBuf>,
    /// The format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: crate::render::compare::CompareFormat,
    /// Write to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `record-fixture`.
#[derive(Debug, Args)]
pub struct RecordArgs {
    #[command(flatten)]
    pub probe: ProbeArgs,
    /// The folder to write (created if missing); it gets a `host.json`.
    pub dir: PathBuf,
    /// Replace the `host.json` already in DIR (never a symbolic link).
    #[arg(long)]
    pub force: bool,
}

impl Cli {
    /// The command line, with the checks clap cannot make: `--deep` and `--python` before a
    /// command belong to the window, so with a command they are a usage error (exit 2). clap's
    /// own help and errors follow `--color` too.
    pub fn parse_checked() -> Self {
        let args: Vec<OsString> = std::env::args_os().collect();
        let mut cmd = <Self as CommandFactory>::command().color(clap_color(&args));
        let cli = cmd
            .clone()
            .try_get_matches_from(args)
            .and_then(|m| <Self as FromArgMatches>::from_arg_matches(&m))
            .unwrap_or_else(|e| e.format(&mut cmd).exit());
        if let Err(e) = cli.check(&mut cmd) {
            e.exit();
        }
        cli
    }

    fn check(&self, cmd: &mut clap::Command) -> Result<(), clap::Error> {
        let window_only = self.probe.deep || !self.probe.pythons.is_empty();
        match &self.command {
            Some(c) if window_only => Err(cmd.error(
                clap::error::ErrorKind::ArgumentConflict,
                format!(
                    "--deep and --python before the command are for the window; put them after it: \
                     gpu-doctor {} --deep",
                    c.name()
                ),
            )),
            _ => Ok(()),
        }
    }

    /// The recorded machine to look at: `--replay DIR` before the command, or after `check` or
    /// `report`.
    pub fn replay_dir(&self) -> Option<&PathBuf> {
        let after = match &self.command {
            Some(Command::Check(a)) => a.replay.dir.as_ref(),
            Some(Command::Report(a)) => a.replay.dir.as_ref(),
            Some(Command::Fix(a)) => a.replay.dir.as_ref(),
            Some(Command::Certify(a)) => a.replay.dir.as_ref(),
            _ => None,
        };
        self.replay.as_ref().or(after)
    }

    /// What the window probes: `--deep` and `--python` given without a command.
    pub fn window_probe(&self) -> ProbeArgs {
        self.probe.clone()
    }
}

impl Command {
    /// The command's name as typed.
    fn name(&self) -> &'static str {
        match self {
            Self::Check(_) => "check",
            Self::Diagnose(_) => "diagnose",
            Self::Report(_) => "report",
            Self::RecordFixture(_) => "record-fixture",
            Self::Bench(_) => "bench",
            Self::Fleet(_) => "fleet",
            Self::Compare(_) => "compare",
            Self::Fix(_) => "fix",
            Self::Setup(_) => "setup",
            Self::Certify(_) => "certify",
            Self::Processes(_) => "processes",
            Self::BenchWorker => "bench-worker",
            Self::Completions { .. } => "completions",
            Self::Man { .. } => "man",
        }
    }
}

pub mod args;
pub mod generate;
#[cfg(test)]
mod tests;
