//! `gpu-doctor bench` and the hidden `bench-worker`: runs a plan in a worker process, shows a
//! progress bar per test on standard error, then a table of measured against expected values.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Args;
use gpu_doctor_model::bench::plan::{BenchPlan, TestKind};
use gpu_doctor_model::bench::protocol::BenchEvent;
use gpu_doctor_model::bench::run::BenchRun;
use gpu_doctor_probes::host::Host;
use gpu_doctor_probes::probe;

use crate::cli::args::{ColorWhen, ProbeArgs};
use crate::exit;
use crate::ops::bench::{Measure, measure, to_json};
use crate::render::bench::table;

/// `bench --help` text after the options.
pub const AFTER_HELP: &str = "\
Tests (--tests, comma-separated; default: all but sustained):
  h2d, d2h   host↔device copies, pageable and pinned, 4 KiB–1 GiB, against the
             link's bandwidth
  bidir      both directions at once (pinned)
  d2d        device memory bandwidth: the driver's memcpy and a copy kernel
  p2p        GPU-to-GPU copies between every pair of GPUs, P2P on, off and
             staged through host memory, as a matrix judged against the link
             between each pair (NVLink, PCIe); with one GPU, a note
  gemm       cuBLAS FP32/TF32/FP16/BF16, 256–8192, against the GPU's peak;
             checked on the CPU
  fma        FP32 FMA peak (needs NVRTC)
  latency    kernel launch latency (needs NVRTC)
  memtest    largest allocation; a pattern test over --memtest-share of free
             memory
  cpu        CPU baselines: multithreaded SGEMM and host memcpy, for GPU-vs-CPU
             ratios
  sustained  a GEMM loop for --sustained-secs; clocks, temperature and power
             sampled

CUDA runs only in a separate worker process, so a crash, a missing library or an out-of-memory \
error fails one test with a reason instead of crashing gpu-doctor. --gpu is the nvidia-smi index \
(the worker sets CUDA_DEVICE_ORDER=PCI_BUS_ID so that CUDA counts the same way). bench always \
measures this machine, so it takes no --replay.

Examples:
  gpu-doctor bench --quick
      every default test, fewer sizes (about a minute)
  gpu-doctor bench --tests h2d,d2h,bidir
      is this eGPU's link as fast as it should be?
  gpu-doctor bench --tests sustained --sustained-secs 300
  gpu-doctor bench -o run.json && gpu-doctor report --bench run.json -o r.md

Exit codes: 0 every requested test ran; 1 some test did not run or failed (the table says why); \
2 the command line was wrong; 3 an input could not be read; 4 an internal error.";

/// `bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The GPU to measure, by nvidia-smi index.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub gpu: u32,
    /// The tests to run, comma-separated (see below).
    #[arg(long, value_name = "LIST", value_parser = parse_tests)]
    pub tests: Option<TestList>,
    /// Fewer sizes and repetitions: about a minute instead of several.
    #[arg(long)]
    pub quick: bool,
    /// Print the run as JSON on standard output instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also save the run as JSON to FILE (for `gpu-doctor report --bench FILE`).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Length of the sustained-load test, seconds (default 60, 15 with --quick).
    #[arg(long, value_name = "SECS")]
    pub sustained_secs: Option<u32>,
    /// Share of free GPU memory the memory test writes and verifies, above 0 and at most 0.9
    /// (default 0.1, 0.02 with --quick).
    #[arg(long, value_name = "SHARE")]
    pub memtest_share: Option<f64>,
    /// Stop the GPU tests after this many seconds (default: a budget per test).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,
}

/// A parsed `--tests` list.
#[derive(Debug, Clone)]
pub struct TestList(pub Vec<TestKind>);

fn parse_tests(text: &str) -> Result<TestList, String> {
    TestKind::parse_list(text).map(TestList).map_err(|e| e.to_string())
}

/// The hidden `bench-worker` subcommand.
pub fn worker() -> u8 {
    let code = gpu_doctor_kernels::worker::worker_process();
    u8::try_from(code).unwrap_or(exit::INTERNAL)
}

/// `bench`: returns the exit code. `quiet`: no progress and no `wrote FILE` on standard error;
/// `--color never`: no escape sequence either, so a line per test even on a terminal.
pub fn bench(host: &dyn Host, args: &BenchArgs, this_machine: bool, quiet: bool, color: ColorWhen) -> u8 {
    if !this_machine {
        eprintln!("gpu-doctor: bench measures this machine; it cannot be combined with --replay");
        return exit::USAGE;
    }
    let tests = args.tests.as_ref().map_or_else(TestKind::default_set, |t| t.0.clone());
    let mut plan = BenchPlan::preset(args.gpu, tests, args.quick);
    if let Some(s) = args.sustained_secs {
        plan.sustained_secs = s;
    }
    if let Some(s) = args.memtest_share {
        plan.memtest_share = s;
    }
    if let Err(e) = plan.validate() {
        eprintln!("gpu-doctor: {e}");
        return exit::USAGE;
    }
    let bar = color != ColorWhen::Never && std::io::stderr().is_terminal();
    let progress = (!quiet).then(|| Progress::new(bar));
    match run(host, args, &plan, progress) {
        Ok(run) => {
            if run.all_ran() {
                exit::OK
            } else {
                exit::INCOMPLETE
            }
        }
        Err(e) => {
            eprintln!("gpu-doctor: {e:#}");
            exit::INTERNAL
        }
    }
}

/// Runs the plan and prints the result; `progress`, where given, shows the events and the saved file.
fn run(host: &dyn Host, args: &BenchArgs, plan: &BenchPlan, mut progress: Option<Progress>) -> Result<BenchRun> {
    let needs_gpu = !plan.gpu_tests().is_empty();
    // This machine, probed as `check` probes it without options.
    let snapshot = needs_gpu.then(|| probe::collect(host, &crate::ops::options(&ProbeArgs::default(), None)));
    let how = Measure { timeout: args.timeout.map(Duration::from_secs), ..Measure::default() };
    let run = measure(snapshot.as_ref(), plan, how, &mut |e| {
        if let Some(progress) = progress.as_mut() {
            progress.show(e);
        }
    })?;

    // Serialized once, for the file and standard output alike.
    let json = if args.output.is_some() || args.json { Some(to_json(&run)?) } else { None };
    if let (Some(path), Some(json)) = (&args.output, &json) {
        crate::files::write_file(path, json)?;
        if progress.is_some() && gpu_doctor_probes::write::stream_of(path).is_none() {
            eprintln!("wrote {}", crate::render::text::clean(&path.display().to_string()));
        }
    }
    // `-o -` (or /dev/stdout) put the JSON on standard output already: nothing more goes there.
    let to_stdout_already = args.output.as_deref().and_then(gpu_doctor_probes::write::stream_of)
        == Some(gpu_doctor_probes::write::Stream::Stdout);
    if to_stdout_already {
        return Ok(run);
    }
    let text = match json {
        Some(json) if args.json => json,
        _ => table(&run),
    };
    crate::files::to_stdout(text.as_bytes())?;
    Ok(run)
}

/// A progress bar per test on standard error (one line per test when it is not a terminal).
struct Progress {
    tty: bool,
    started: Option<Instant>,
    last_draw: Option<Instant>,
}

const BAR: usize = 24;

impl Progress {
    fn new(tty: bool) -> Self {
        Self { tty, started: None, last_draw: None }
    }

    fn show(&mut self, event: &BenchEvent) {
        let mut err = std::io::stderr().lock();
        let name = event.test().name();
        match event {
            BenchEvent::Started { .. } => {
                self.started = Some(Instant::now());
                if self.tty {
                    let _ = write!(err, "\r\x1b[2K  {name:<10}[{}] starting", " ".repeat(BAR));
                }
            }
            BenchEvent::Progress { done, total, what, .. } => {
                let due = self.last_draw.is_none_or(|t| t.elapsed() >= Duration::from_millis(50));
                if self.tty && due && *total > 0 {
                    let filled = (*done as usize * BAR / *total as usize).min(BAR);
                    let _ = write!(
                        err,
                        "\r\x1b[2K  {name:<10}[{}{}] {done}/{total} {}",
                        "#".repeat(filled),
                        " ".repeat(BAR - filled),
                        crate::render::text::clean(what)
                    );
                    self.last_draw = Some(Instant::now());
                }
            }
            BenchEvent::Sample { .. } => {}
            BenchEvent::Finished { .. } => {
                let secs = self.started.map_or(0.0, |s| s.elapsed().as_secs_f64());
                let clear = if self.tty { "\r\x1b[2K" } else { "" };
                let _ = writeln!(err, "{clear}  {name:<10}[{}] done in {secs:.1} s", "#".repeat(BAR));
            }
            BenchEvent::Failed { failure, .. } => {
                let clear = if self.tty { "\r\x1b[2K" } else { "" };
                let _ = writeln!(err, "{clear}  {name:<10}not run: {}", failure.kind.label());
            }
        }
        let _ = err.flush();
    }
}
