//! Carrying a plan out: the user steps run as child processes (no shell, their own process group,
//! a deadline), their output streamed line by line, progress parsed from pip's and uv's lines,
//! cancellable, everything logged to the data folder (`log_dir`, a file per run). Root and manual
//! steps are never run. Before an existing environment is touched its package list is saved;
//! [`undo`] puts exactly that list back. A `Write` step writes only inside the plan's environment
//! or `log_dir`.

mod backup;
mod installed;
mod log;
mod progress;
mod run;
mod write;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use gpu_doctor_model::shell::Shell;
use serde::{Deserialize, Serialize};

use crate::envtool::{self, Source, Tool};
use crate::plan::{Plan, StepKind, UserAction};
use backup::Backup;
pub use backup::{name_of, python_of};
use log::Log;
use run::{End, Stream};

/// The longest the GPU smoke test may take: importing a framework and one product per GPU.
const VERIFY_TIMEOUT: Duration = Duration::from_secs(300);

/// How to apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyOptions {
    /// Where the log and the package-list backup go (the data folder's `installs/`).
    pub log_dir: PathBuf,
    /// The longest one step may run.
    pub step_timeout: Duration,
}

/// What the runner reports while it works.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Step `index` (of `total`) started; `line` is the step as shown.
    Started { index: usize, total: usize, line: String },
    /// A line the step printed.
    Line { index: usize, text: String },
    /// Progress of step `index` from its output (pip/uv downloads and installs): `fraction` in 0..=1.
    Progress { index: usize, fraction: f32, what: String },
    /// Step `index` ended.
    Ended { index: usize, status: StepStatus },
}

/// How a step ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum StepStatus {
    /// It ran and succeeded.
    Done,
    /// It ran and failed: the exit status or error, and the last lines it printed.
    Failed { reason: String },
    /// A root or manual step: shown for the person, not run.
    LeftToYou,
    /// Not reached: an earlier step failed or the run was cancelled.
    NotRun,
    /// Stopped by Cancel.
    Cancelled,
    /// A verify step ran but could not prove GPU use (no GPU here, CUDA not available, a wrong
    /// product): what it did check and why not.
    Unproven { summary: String },
}

/// What applying did.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Outcome {
    /// One status per step of the plan, in order.
    pub steps: Vec<StepStatus>,
    /// The saved package list of the environment, for [`undo`]; `None` for a new environment.
    pub backup: Option<PathBuf>,
    /// The full log of the run.
    pub log: Option<PathBuf>,
}

/// Runs the plan's user steps in order until one fails or `cancel` is set; root and manual steps
/// are left to the person. Before the first user step, an existing environment (`plan.env` with
/// its Python in it) has its package list saved into `opts.log_dir` ([`Outcome::backup`]).
/// A verify step runs the GPU smoke test in the environment (`verify`); one that cannot prove GPU
/// use ends `Unproven` with what it did check.
pub fn apply(plan: &Plan, opts: &ApplyOptions, cancel: &AtomicBool, events: &mut dyn FnMut(Event)) -> Outcome {
    let total = plan.steps.len();
    let mut outcome = Outcome { steps: vec![StepStatus::NotRun; total], backup: None, log: None };
    let mut runner = match Runner::new(opts, cancel, events, "apply", &plan.id) {
        Ok(runner) => runner,
        Err(reason) => {
            if let Some(first) = plan.steps.iter().position(crate::Step::is_run_by_gpu_doctor) {
                outcome.steps[first] = StepStatus::Failed { reason };
            }
            return outcome;
        }
    };
    outcome.log = Some(runner.log.path().to_owned());
    runner.log.line(&format!("plan {}: {}", plan.id, plan.goal));
    let existing = plan.env.as_deref().filter(|env| envtool::python_in(env).exists());
    let mut stopped = false;
    for (index, step) in plan.steps.iter().enumerate() {
        let status = if stopped {
            StepStatus::NotRun
        } else if !step.is_run_by_gpu_doctor() {
            StepStatus::LeftToYou
        } else if cancel.load(Ordering::SeqCst) {
            StepStatus::Cancelled
        } else {
            runner.started(index, total, &step.render(shell()).unwrap_or_else(|e| e));
            runner.step(index, plan, existing, &mut outcome.backup)
        };
        stopped |= matches!(status, StepStatus::Failed { .. } | StepStatus::Cancelled);
        runner.ended(index, &status);
        outcome.steps[index] = status;
    }
    runner.log.flush();
    outcome
}

/// Puts the package list saved in `backup` (by [`apply`]) back into the environment of `python`:
/// three steps, reading its package list now, removing what the backup does not have, and
/// installing the backup's own lines (`--no-deps`, from the source the plan used) where they differ.
pub fn undo(
    python: &Path,
    backup: &Path,
    opts: &ApplyOptions,
    cancel: &AtomicBool,
    events: &mut dyn FnMut(Event),
) -> Outcome {
    const TOTAL: usize = 3;
    let mut outcome = Outcome { steps: vec![StepStatus::NotRun; TOTAL], backup: Some(backup.to_owned()), log: None };
    let name = backup.file_stem().map_or_else(|| "backup".into(), |s| s.to_string_lossy().into_owned());
    let mut runner = match Runner::new(opts, cancel, events, "undo", &name) {
        Ok(runner) => runner,
        Err(reason) => {
            outcome.steps[0] = StepStatus::Failed { reason };
            return outcome;
        }
    };
    outcome.log = Some(runner.log.path().to_owned());
    let saved = match std::fs::read_to_string(backup) {
        Ok(text) => Backup::parse(&text),
        Err(e) => {
            outcome.steps[0] = StepStatus::Failed { reason: format!("could not read {}: {e}", backup.display()) };
            runner.ended(0, &outcome.steps[0]);
            return outcome;
        }
    };
    let argv = envtool::freeze(&saved.tool, python);
    runner.started(0, TOTAL, &render(&argv));
    let now = match runner.capture(0, &argv) {
        Ok(lines) => backup::freeze_lines(&lines),
        Err(status) => {
            runner.ended(0, &status);
            outcome.steps[0] = status;
            return outcome;
        }
    };
    runner.ended(0, &StepStatus::Done);
    outcome.steps[0] = StepStatus::Done;
    let (remove, reinstall) = backup::differences(&saved.pins, &now);
    let pins: Vec<String> = reinstall.iter().flat_map(|pin| backup::pin_args(pin)).collect();
    let steps = [
        (!remove.is_empty()).then(|| envtool::uninstall(&saved.tool, python, &remove)),
        (!pins.is_empty()).then(|| envtool::install_pins(&saved.tool, python, &pins, &saved.source)),
    ];
    for (index, argv) in (1..).zip(steps) {
        let status = match argv {
            _ if cancel.load(Ordering::SeqCst) => StepStatus::Cancelled,
            Some(argv) => {
                runner.started(index, TOTAL, &render(&argv));
                runner.run_argv(index, &argv)
            }
            None => {
                runner.line(index, "nothing to do");
                StepStatus::Done
            }
        };
        runner.ended(index, &status);
        let stop = status != StepStatus::Done;
        outcome.steps[index] = status;
        if stop {
            break;
        }
    }
    runner.log.flush();
    outcome
}

/// The shell steps are shown for here.
fn shell() -> Shell {
    if cfg!(windows) { Shell::PowerShell } else { Shell::Posix }
}

fn render(argv: &[String]) -> String {
    crate::Step::run(argv.to_vec(), "", "", "").render(shell()).unwrap_or_else(|e| e)
}

/// The tool and source a plan installs with, from its first install step: uv when that step runs
/// `uv pip install`, else pip; its `--find-links` (with `--no-index`) or `--index-url`.
fn tool_and_source(plan: &Plan) -> (Tool, Source) {
    let install = plan.steps.iter().find_map(|step| match &step.kind {
        StepKind::User { action: UserAction::Run { argv } } if argv.iter().any(|a| a == "install") => Some(argv),
        _ => None,
    });
    let Some(argv) = install else { return (Tool::Pip, Source::default()) };
    let tool = match argv.as_slice() {
        [uv, sub, ..]
            if sub == "pip" && Path::new(uv).file_stem().is_some_and(|s| s.to_string_lossy().starts_with("uv")) =>
        {
            Tool::Uv { uv: PathBuf::from(uv) }
        }
        _ => Tool::Pip,
    };
    let value = |flag: &str| argv.iter().position(|a| a == flag).and_then(|i| argv.get(i + 1)).cloned();
    let source = Source { index_url: value("--index-url"), find_links: value("--find-links").map(PathBuf::from) };
    (tool, source)
}

/// What the steps share while they run: the options, Cancel, the listener and the log.
struct Runner<'a> {
    opts: &'a ApplyOptions,
    cancel: &'a AtomicBool,
    events: &'a mut dyn FnMut(Event),
    log: Log,
}

impl<'a> Runner<'a> {
    fn new(
        opts: &'a ApplyOptions,
        cancel: &'a AtomicBool,
        events: &'a mut dyn FnMut(Event),
        what: &str,
        name: &str,
    ) -> Result<Self, String> {
        let log = Log::create(&opts.log_dir, what, name)?;
        Ok(Self { opts, cancel, events, log })
    }

    fn started(&mut self, index: usize, total: usize, line: &str) {
        self.log.line(&format!("== step {} of {total}: {line}", index + 1));
        self.log.flush();
        (self.events)(Event::Started { index, total, line: line.to_owned() });
    }

    fn line(&mut self, index: usize, text: &str) {
        self.log.line(text);
        (self.events)(Event::Line { index, text: text.to_owned() });
    }

    fn ended(&mut self, index: usize, status: &StepStatus) {
        let word = match status {
            StepStatus::Done => "done".to_owned(),
            StepStatus::Failed { reason } => format!("failed: {reason}"),
            StepStatus::LeftToYou => "left to you (not run by gpu-doctor)".to_owned(),
            StepStatus::NotRun => "not run".to_owned(),
            StepStatus::Cancelled => "cancelled".to_owned(),
            StepStatus::Unproven { summary } => format!("not proven: {summary}"),
        };
        self.log.line(&format!("== step {}: {word}", index + 1));
        self.log.flush();
        (self.events)(Event::Ended { index, status: status.clone() });
    }

    /// Carries out step `index` of `plan` (a user or verify step). The first user step on an
    /// existing environment (`existing`: its folder) saves its package list first, into `backup`.
    fn step(&mut self, index: usize, plan: &Plan, existing: Option<&Path>, backup: &mut Option<PathBuf>) -> StepStatus {
        let action = match &plan.steps[index].kind {
            StepKind::User { action } => action,
            StepKind::Verify { python, frameworks } => {
                let verified = crate::verify::run(python, frameworks, self.opts.step_timeout.min(VERIFY_TIMEOUT));
                let summary = verified.summary();
                self.line(index, &summary);
                return if verified.proved() { StepStatus::Done } else { StepStatus::Unproven { summary } };
            }
            StepKind::Root { .. } | StepKind::Manual { .. } => return StepStatus::LeftToYou,
        };
        if let Some(env) = existing
            && backup.is_none()
        {
            match self.save_backup(index, env, plan) {
                Ok(path) => *backup = Some(path),
                Err(status) => return status,
            }
        }
        match action {
            UserAction::Run { argv } => self.run_argv(index, argv),
            UserAction::Write { path, text } => {
                let roots: Vec<&Path> =
                    plan.env.iter().map(PathBuf::as_path).chain([self.opts.log_dir.as_path()]).collect();
                match write::write_inside(path, text, &roots) {
                    Ok(()) => {
                        self.line(index, &format!("wrote {}", path.display()));
                        StepStatus::Done
                    }
                    Err(reason) => StepStatus::Failed { reason },
                }
            }
        }
    }

    /// Runs `argv` as step `index`: its lines logged and passed on, pip's and uv's progress read
    /// from them; a step that could not reach its index says which, and the offline route.
    fn run_argv(&mut self, index: usize, argv: &[String]) -> StepStatus {
        let mut progress = progress::ProgressReader::default();
        let mut unreachable: Option<String> = None;
        let (log, events) = (&mut self.log, &mut self.events);
        let ran = run::run(argv, self.opts.step_timeout, self.cancel, &mut |_, line| {
            log.line(line);
            events(Event::Line { index, text: line.to_owned() });
            if let Some((fraction, what)) = progress.feed(line) {
                events(Event::Progress { index, fraction, what });
            }
            if unreachable.is_none() && progress::is_connection_error(line) {
                unreachable = Some(line.to_owned());
            }
        });
        let program = argv.first().map_or("", String::as_str);
        match (&ran.end, unreachable) {
            _ if ran.succeeded() => StepStatus::Done,
            (End::Cancelled, _) => StepStatus::Cancelled,
            (_, Some(line)) => StepStatus::Failed {
                reason: format!("{}\n{}", progress::unreachable_index(argv, &line), ran.failure(program)),
            },
            (_, None) => StepStatus::Failed { reason: ran.failure(program) },
        }
    }

    /// Runs `argv` as part of step `index` and returns its standard output's lines (logged too).
    fn capture(&mut self, index: usize, argv: &[String]) -> Result<Vec<String>, StepStatus> {
        let mut out = Vec::new();
        let log = &mut self.log;
        let ran = run::run(argv, self.opts.step_timeout, self.cancel, &mut |stream, line| {
            log.line(line);
            if stream == Stream::Out {
                out.push(line.to_owned());
            }
        });
        let program = argv.first().map_or("", String::as_str);
        match ran.end {
            _ if ran.succeeded() => Ok(out),
            End::Cancelled => Err(StepStatus::Cancelled),
            _ => {
                let reason = format!("could not read the package list: {}", ran.failure(program));
                self.line(index, &reason);
                Err(StepStatus::Failed { reason })
            }
        }
    }

    /// Saves the package list of the environment at `env` beside the log, before step `index`
    /// changes it. `Err` is the step's status: the environment is not touched without a backup.
    fn save_backup(&mut self, index: usize, env: &Path, plan: &Plan) -> Result<PathBuf, StepStatus> {
        let (tool, source) = tool_and_source(plan);
        let python = envtool::python_in(env);
        let argv = envtool::freeze(&tool, &python);
        let pins = match installed::freeze_from_disk(env, &tool) {
            Ok(listed) => {
                self.line(
                    index,
                    &format!(
                        "saving the package list first: read from the *.dist-info folders in {} (what `{}` prints)",
                        listed.site.display(),
                        render(&argv)
                    ),
                );
                listed.pins
            }
            Err(why) => {
                self.line(
                    index,
                    &format!("saving the package list first: {} ({why}: the tool lists it)", render(&argv)),
                );
                backup::freeze_lines(&self.capture(index, &argv)?)
            }
        };
        let path = self.log.path().with_extension("backup.txt");
        let text = Backup { tool, source, pins }.to_text(&python);
        // Through the one atomic writer: a full disk leaves no truncated list that undo would
        // take for the environment's packages.
        match backup::save(&path, &text) {
            Ok(()) => {
                self.line(index, &format!("saved the package list to {}", path.display()));
                Ok(path)
            }
            Err(e) => Err(StepStatus::Failed {
                reason: format!(
                    "did not touch the environment: its package list could not be saved to {}: {}",
                    path.display(),
                    e.chain()
                ),
            }),
        }
    }
}
