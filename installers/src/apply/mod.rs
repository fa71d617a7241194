//! Carrying a plan out: the user steps run as child processes (no shell, their own process group,
//! a deadline), their output streamed line by line, progress parsed from pip's and uv's lines,
//! cancellable, everything logged to the data folder (`log_dir`, a file per run). Root and manual
//! steps are never run. Before an existing environment is touched its package list is saved;
//! [`undo`] puts exactly that list back. A `Write` step writes only inside the plan's environment
//! or `log_dir`.

mod backup;
pub(crate) mod installed;
mod lock;
mod log;
mod progress;
pub(crate) mod run;
mod write;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use gpu_doctor_model::shell::Shell;
use serde::{Deserialize, Serialize};

use crate::envtool::{self, Source, Tool};
use crate::plan::{Plan, StepKind, UserAction};
use backup::{Backup, Saved};
pub use backup::{name_of, python_of, read as read_backup};
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
    /// The environment's package list read again after the run, against the saved one: which
    /// state it is in. `None` when there was no saved list (a new environment, no environment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<EnvState>,
    /// The new environment this run made and deleted again because a later step failed or was
    /// cancelled; `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_env: Option<PathBuf>,
}

/// Where an environment's packages stand after a run, read again from the environment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum EnvState {
    /// The packages are exactly those of the saved list.
    AsBefore,
    /// They differ from the saved list (one line per distribution); `planned` says whether every
    /// `name==version` the plan installs is there (after an undo: `false`).
    Changed { changes: Vec<String>, planned: bool },
    /// The package list could not be read again.
    Unknown { reason: String },
}

impl EnvState {
    /// The state in one paragraph, for the person.
    pub fn describe(&self) -> String {
        match self {
            EnvState::AsBefore => "the environment's packages are as before (read again: the saved list)".into(),
            EnvState::Changed { changes, planned } => format!(
                "the environment's packages differ from before{} (read again):\n  {}",
                if *planned { ", as the plan installs them" } else { "" },
                changes.join("\n  ")
            ),
            EnvState::Unknown { reason } => format!("the environment's packages could not be read again: {reason}"),
        }
    }
}

/// The interpreter a plan's user steps install with: the one its first install (or freeze)
/// command names (`PYTHON -m pip …`, `uv pip … --python PYTHON`), else `bin/python` of its
/// environment (`bin/python3` where only that is there); `None` without an environment.
pub fn plan_python(plan: &Plan) -> Option<PathBuf> {
    let env = plan.env.as_deref()?;
    let named = plan.steps.iter().find_map(|step| match &step.kind {
        StepKind::User { action: UserAction::Run { argv } } => match argv.as_slice() {
            [python, m, pip, ..] if m == "-m" && pip == "pip" => Some(PathBuf::from(python)),
            [uv, pip, ..] if pip == "pip" && Path::new(uv).file_stem().is_some_and(|s| s == "uv") => {
                argv.iter().position(|a| a == "--python").and_then(|i| argv.get(i + 1)).map(PathBuf::from)
            }
            _ => None,
        },
        _ => None,
    });
    let own = || {
        let python = envtool::python_in(env);
        // A system prefix on Debian and Ubuntu has `bin/python3` only.
        let python3 = env.join("bin").join("python3");
        if !python.exists() && !cfg!(windows) && python3.exists() { python3 } else { python }
    };
    Some(named.filter(|p| p.starts_with(env)).unwrap_or_else(own))
}

/// Runs the plan's user steps in order until one fails or `cancel` is set; root and manual steps
/// are left to the person. An existing environment (`plan.env` with the plan's interpreter,
/// [`plan_python`], in it) is locked for the run (a second run on it is refused and changes
/// nothing), and before the first user step its package list is saved into `opts.log_dir`
/// ([`Outcome::backup`]); after the steps the list is read again ([`Outcome::state`]).
/// A verify step runs the GPU smoke test in the environment (`verify`); one that cannot prove GPU
/// use ends `Unproven` with what it did check.
pub fn apply(plan: &Plan, opts: &ApplyOptions, cancel: &AtomicBool, events: &mut dyn FnMut(Event)) -> Outcome {
    let total = plan.steps.len();
    let mut outcome = Outcome { steps: vec![StepStatus::NotRun; total], ..Outcome::default() };
    let first = plan.steps.iter().position(crate::Step::is_run_by_gpu_doctor);
    let python = plan_python(plan);
    let existing = plan.env.as_deref().filter(|_| python.as_deref().is_some_and(Path::exists));
    // A folder that is not there yet (or empty) is a new environment this run makes: if a later
    // step fails it is deleted again, so no bare environment is left behind.
    let fresh =
        plan.env.as_deref().filter(|env| existing.is_none() && is_absent_or_empty(env)).map(|env| (env, env.exists()));
    // Held from before the backup to the end of the run. A folder that is no environment yet is
    // left as it is (uv refuses to make a venv in a folder with a file in it): it is locked
    // once a step has made the environment.
    let mut held = match existing.filter(|_| first.is_some()) {
        Some(env) => match lock::lock(env, &opts.log_dir) {
            Ok(held) => Some(held),
            Err(reason) => {
                if let Some(first) = first {
                    outcome.steps[first] = StepStatus::Failed { reason };
                }
                return outcome;
            }
        },
        None => None,
    };
    let mut runner = match Runner::new(opts, cancel, events, "apply", &plan.id) {
        Ok(runner) => runner,
        Err(reason) => {
            if let Some(first) = first {
                outcome.steps[first] = StepStatus::Failed { reason };
            }
            return outcome;
        }
    };
    outcome.log = Some(runner.log.path().to_owned());
    runner.log.line(&format!("plan {}: {}", plan.id, plan.goal.replace(['\n', '\r'], " ")));
    let mut stopped = false;
    let mut saved: Option<Vec<String>> = None;
    for (index, step) in plan.steps.iter().enumerate() {
        let status = if stopped {
            StepStatus::NotRun
        } else if !step.is_run_by_gpu_doctor() {
            StepStatus::LeftToYou
        } else if cancel.load(Ordering::SeqCst) {
            StepStatus::Cancelled
        } else {
            runner.started(index, total, &step.render(shell()).unwrap_or_else(|e| e));
            let status = runner.step(index, plan, existing, python.as_deref(), &mut outcome.backup, &mut saved);
            // A new environment is locked as soon as a step has made it.
            let made = python.as_deref().is_some_and(Path::exists);
            match plan.env.as_deref().filter(|env| held.is_none() && made && env.is_dir()) {
                Some(env) if status == StepStatus::Done => match lock::lock(env, &opts.log_dir) {
                    Ok(lock) => {
                        held = Some(lock);
                        status
                    }
                    Err(reason) => {
                        StepStatus::Failed { reason: format!("this step made {}, then: {reason}", env.display()) }
                    }
                },
                _ => status,
            }
        };
        stopped |= matches!(status, StepStatus::Failed { .. } | StepStatus::Cancelled);
        runner.ended(index, &status);
        outcome.steps[index] = status;
    }
    if let (Some(env), Some(python), Some(before)) = (existing, python.as_deref(), saved) {
        let (tool, _) = tool_and_source(plan);
        let state = match runner.list_now(env, python, &tool, Read::Again) {
            Ok(now) => {
                let changes = backup::changes(&before, &now);
                if changes.is_empty() {
                    EnvState::AsBefore
                } else {
                    let planned = backup::has_all(&now, &planned_pins(plan));
                    EnvState::Changed { changes, planned }
                }
            }
            Err(reason) => EnvState::Unknown { reason },
        };
        runner.line(total.saturating_sub(1), &state.describe());
        outcome.state = Some(state);
    }
    drop(held);
    if let Some((env, was_there)) = fresh.filter(|_| stopped) {
        outcome.deleted_env = delete_new_environment(env, was_there, &mut runner, total.saturating_sub(1));
    }
    runner.log.flush();
    outcome
}

/// Whether `dir` does not exist or is an empty folder.
fn is_absent_or_empty(dir: &Path) -> bool {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => entries.next().is_none(),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound && dir.symlink_metadata().is_err(),
    }
}

/// Deletes the environment `env` that this run made before a step failed (only a folder with a
/// venv's `pyvenv.cfg` or conda's `conda-meta/`, never through a link), and says so; an empty
/// folder stays where the person had made one. Returns `env` when it was deleted.
fn delete_new_environment(env: &Path, was_there: bool, runner: &mut Runner<'_>, index: usize) -> Option<PathBuf> {
    let is_dir = env.symlink_metadata().is_ok_and(|m| m.is_dir());
    if !is_dir || !(env.join("pyvenv.cfg").is_file() || env.join("conda-meta").is_dir()) {
        return None;
    }
    let emptied = std::fs::remove_dir_all(env).and_then(|()| if was_there { std::fs::create_dir(env) } else { Ok(()) });
    match emptied {
        Ok(()) => {
            runner.line(
                index,
                &format!("deleted {}: the new environment this run made, as a step failed", env.display()),
            );
            Some(env.to_owned())
        }
        Err(e) => {
            runner.line(
                index,
                &format!("could not delete the new environment {}: {e}; delete it yourself", env.display()),
            );
            None
        }
    }
}

/// The `name==version` requirements of a plan's install steps.
fn planned_pins(plan: &Plan) -> Vec<String> {
    plan.steps
        .iter()
        .filter_map(|step| match &step.kind {
            StepKind::User { action: UserAction::Run { argv } } if argv.iter().any(|a| a == "install") => Some(argv),
            _ => None,
        })
        .flatten()
        .filter(|a| a.contains("==") && !a.starts_with('-'))
        .cloned()
        .collect()
}

/// What an undo will do, shown to the person before it does it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoPreview {
    /// The interpreter whose environment changes (the one the list was saved for).
    pub python: PathBuf,
    /// The distributions it will remove (installed now, not in the list).
    pub remove: Vec<String>,
    /// The list's lines it will install (`--no-deps`).
    pub install: Vec<String>,
    /// The commands, as shown.
    pub commands: Vec<String>,
}

/// Puts the package list saved in `backup` (by [`apply`]) back into the environment at `env`:
/// the list is read ([`read_backup`]: a regular file, capped, complete, pin lines only) and must
/// have been saved for `env`'s own interpreter, else nothing is run. Then, with `env` locked:
/// its package list now is read; `confirm` sees what will be removed and installed, and nothing
/// changes unless it answers true; what the list lacks is removed and the list's own lines are
/// installed (`--no-deps`, from the source saved) where they differ; last, the package list is
/// read again and compared with the saved one ([`Outcome::state`]).
pub fn undo(
    env: &Path,
    backup: &Path,
    opts: &ApplyOptions,
    cancel: &AtomicBool,
    events: &mut dyn FnMut(Event),
    confirm: &mut dyn FnMut(&UndoPreview) -> bool,
) -> Outcome {
    const TOTAL: usize = 4;
    let mut outcome =
        Outcome { steps: vec![StepStatus::NotRun; TOTAL], backup: Some(backup.to_owned()), ..Outcome::default() };
    let found = undo_source(env, backup).and_then(|(saved, tool)| Ok((saved, tool, lock::lock(env, &opts.log_dir)?)));
    let (saved, tool, held) = match found {
        Ok(found) => found,
        Err(reason) => {
            outcome.steps[0] = StepStatus::Failed { reason };
            return outcome;
        }
    };
    let name = backup.file_stem().map_or_else(|| "backup".into(), |s| s.to_string_lossy().into_owned());
    let mut runner = match Runner::new(opts, cancel, events, "undo", &name) {
        Ok(runner) => runner,
        Err(reason) => {
            outcome.steps[0] = StepStatus::Failed { reason };
            return outcome;
        }
    };
    outcome.log = Some(runner.log.path().to_owned());
    let python = saved.python.as_path();
    runner.started(0, TOTAL, &format!("read the package list of {}", python.display()));
    let now = match runner.list_now(env, python, &tool, Read::Before) {
        Ok(lines) => lines,
        Err(reason) => {
            let status = StepStatus::Failed { reason };
            runner.ended(0, &status);
            outcome.steps[0] = status;
            return outcome;
        }
    };
    runner.ended(0, &StepStatus::Done);
    outcome.steps[0] = StepStatus::Done;
    let (remove, reinstall) = backup::differences(&saved.pins, &now);
    let installs = install_commands(&tool, python, &reinstall, &saved);
    let steps = [
        (!remove.is_empty()).then(|| vec![envtool::uninstall(&tool, python, &remove)]),
        (!installs.is_empty()).then_some(installs),
    ];
    let preview = UndoPreview {
        python: python.to_owned(),
        remove,
        install: reinstall,
        commands: steps.iter().flatten().flatten().map(|argv| render(argv)).collect(),
    };
    if !preview.commands.is_empty() && !confirm(&preview) {
        runner.line(0, "not confirmed: nothing was changed");
        runner.log.flush();
        return outcome;
    }
    for (index, argvs) in (1..).zip(steps) {
        let status = match argvs {
            _ if cancel.load(Ordering::SeqCst) => StepStatus::Cancelled,
            Some(argvs) => {
                let shown: Vec<String> = argvs.iter().map(|argv| render(argv)).collect();
                runner.started(index, TOTAL, &shown.join("; then "));
                let mut status = StepStatus::Done;
                for argv in &argvs {
                    status = runner.run_argv(index, argv);
                    if status != StepStatus::Done {
                        break;
                    }
                }
                status
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
    // Whatever happened, the list is read again: the answer says what is there, not what was meant.
    runner.started(3, TOTAL, &format!("read the package list of {} again", python.display()));
    let (state, status) = match runner.list_now(env, python, &tool, Read::Again) {
        Ok(after) => {
            let changes = backup::changes(&saved.pins, &after);
            if changes.is_empty() {
                (EnvState::AsBefore, StepStatus::Done)
            } else {
                let reason = format!("the packages still differ from the list:\n  {}", changes.join("\n  "));
                (EnvState::Changed { changes, planned: false }, StepStatus::Failed { reason })
            }
        }
        Err(reason) => (EnvState::Unknown { reason: reason.clone() }, StepStatus::Failed { reason }),
    };
    runner.line(3, &state.describe());
    runner.ended(3, &status);
    outcome.steps[3] = status;
    outcome.state = Some(state);
    runner.log.flush();
    drop(held);
    outcome
}

/// The install commands that put `reinstall` (lines of the saved list) back: one from the list's
/// source, and one per other index a package was saved as coming from (`Saved::origins`).
fn install_commands(tool: &Tool, python: &Path, reinstall: &[String], saved: &Saved) -> Vec<Vec<String>> {
    let mut groups: Vec<(Source, Vec<String>)> = Vec::new();
    for pin in reinstall {
        let source = match saved.origins.get(&name_of(pin)) {
            Some(url) => Source { index_url: Some(url.clone()), find_links: None },
            None => saved.source.clone(),
        };
        match groups.iter_mut().find(|(s, _)| *s == source) {
            Some((_, pins)) => pins.extend(backup::pin_args(pin)),
            None => groups.push((source, backup::pin_args(pin))),
        }
    }
    groups.iter().map(|(source, pins)| envtool::install_pins(tool, python, pins, source)).collect()
}

/// `Ok` when the list `backup` may be put back into `env` ([`undo`] checks the same before it runs
/// anything): a complete list of pins, saved for `env`'s interpreter. `Err` says why not.
pub fn check_undo(env: &Path, backup: &Path) -> Result<(), String> {
    undo_source(env, backup).map(|_| ())
}

/// The saved list of `backup`, read and checked, and the tool that puts it back into `env`: the
/// list must have been saved for `env`'s interpreter; a list saved with uv gets the uv on PATH.
fn undo_source(env: &Path, backup: &Path) -> Result<(Saved, Tool), String> {
    let text = backup::read(backup)?;
    let saved = Saved::parse(&text).map_err(|why| format!("{} is refused: {why}", backup.display()))?;
    same_environment(&saved.python, env)?;
    let tool = if saved.uv {
        envtool::detect(Some("uv")).map_err(|e| format!("the list was saved with uv, and {e}; nothing was changed"))?
    } else {
        Tool::Pip
    };
    Ok((saved, tool))
}

/// `Ok` when `python` (as a saved list names it) is the interpreter of the environment at `env`:
/// it exists, and its folder's parent (`ENV/bin/python`; on Windows its folder) is `env`, links
/// resolved on both sides. Else nothing may run.
fn same_environment(python: &Path, env: &Path) -> Result<(), String> {
    let prefix = if cfg!(windows) { python.parent() } else { python.parent().and_then(Path::parent) };
    let canonical = |p: &Path| p.canonicalize().ok();
    let same = python.is_file() && prefix.and_then(canonical).is_some_and(|p| Some(p) == canonical(env));
    if same {
        Ok(())
    } else {
        Err(format!(
            "the list was saved for the interpreter {}, which is not the interpreter of {}: nothing was run. Name \
             the environment the list was saved for (--env)",
            python.display(),
            env.display()
        ))
    }
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

/// When a package list is read: before a change (Cancel stops the read), or again after the run
/// (read also after a Cancel: the answer must say what is there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Read {
    Before,
    Again,
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
    /// existing environment (`existing`: its folder; `python`: the plan's interpreter) saves its
    /// package list first, into `backup` (the file) and `saved` (its lines).
    fn step(
        &mut self,
        index: usize,
        plan: &Plan,
        existing: Option<&Path>,
        python: Option<&Path>,
        backup: &mut Option<PathBuf>,
        saved: &mut Option<Vec<String>>,
    ) -> StepStatus {
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
        if let (Some(env), Some(python)) = (existing, python)
            && backup.is_none()
        {
            match self.save_backup(index, env, python, plan) {
                Ok((path, pins)) => {
                    *backup = Some(path);
                    *saved = Some(pins);
                }
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

    /// Runs `argv` and returns its standard output's lines (logged too).
    fn capture(&mut self, argv: &[String], when: Read) -> Result<Vec<String>, StepStatus> {
        let mut out = Vec::new();
        let log = &mut self.log;
        let never = AtomicBool::new(false);
        let cancel = if when == Read::Again { &never } else { self.cancel };
        let ran = run::run(argv, self.opts.step_timeout, cancel, &mut |stream, line| {
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
                Err(StepStatus::Failed { reason: format!("could not read the package list: {}", ran.failure(program)) })
            }
        }
    }

    /// The package list of the environment at `env` (interpreter `python`) now: read from its
    /// `*.dist-info` folders where that gives exactly the tool's list, else printed by the tool.
    fn list_now(&mut self, env: &Path, python: &Path, tool: &Tool, when: Read) -> Result<Vec<String>, String> {
        let argv = envtool::freeze(tool, python);
        match installed::freeze_from_disk(env, tool) {
            Ok(listed) => {
                self.log.line(&format!(
                    "the package list: read from the *.dist-info folders in {} (what `{}` prints)",
                    listed.site.display(),
                    render(&argv)
                ));
                Ok(listed.pins)
            }
            Err(why) => {
                self.log.line(&format!("the package list: {} ({why}: the tool lists it)", render(&argv)));
                match self.capture(&argv, when) {
                    Ok(lines) => Ok(backup::freeze_lines(&lines)),
                    Err(StepStatus::Cancelled) => Err("cancelled while the package list was read".into()),
                    Err(StepStatus::Failed { reason }) => Err(reason),
                    Err(other) => Err(format!("{other:?}")),
                }
            }
        }
    }

    /// Saves the package list of the environment at `env` (interpreter `python`) beside the log,
    /// before step `index` changes it, and says which packages an undo could not bring back.
    /// `Err` is the step's status: the environment is not touched without a backup.
    fn save_backup(
        &mut self,
        index: usize,
        env: &Path,
        python: &Path,
        plan: &Plan,
    ) -> Result<(PathBuf, Vec<String>), StepStatus> {
        let (tool, source) = tool_and_source(plan);
        self.line(index, &format!("saving the package list of {} first", env.display()));
        let pins = self.list_now(env, python, &tool, Read::Before).map_err(|reason| StepStatus::Failed {
            reason: format!("did not touch the environment: its package list could not be read: {reason}"),
        })?;
        let path = self.log.path().with_extension("backup.txt");
        let failed = |why: String| StepStatus::Failed {
            reason: format!(
                "did not touch the environment: its package list could not be saved to {}: {why}",
                path.display()
            ),
        };
        let origins = origins_of(&pins, &planned_pins(plan), &source);
        for (name, url) in &origins {
            self.line(index, &format!("{name} is saved as coming from {url}, where undo takes it back from"));
        }
        let backup = Backup { tool, source: source.clone(), pins: pins.clone(), origins };
        let text = backup.to_text(python).map_err(failed)?;
        // Through the one atomic writer: a full disk leaves no truncated list that undo would
        // take for the environment's packages.
        backup::save(&path, &text).map_err(|e| failed(e.chain()))?;
        self.line(index, &format!("saved the package list to {}", path.display()));
        for gap in undo_gaps(&pins, &planned_pins(plan), &source) {
            self.line(index, &format!("undo will not be able to bring back {gap}"));
        }
        Ok((path, pins))
    }
}

/// Before applying `plan`: the packages of its environment it replaces that an undo could not
/// bring back ([`undo_gaps`]), from the environment's list read from disk; `Err` when that list
/// cannot be read without running the tool (the run's log says it after the backup).
pub fn undo_limits(plan: &Plan) -> Result<Vec<String>, String> {
    let Some(env) = plan.env.as_deref().filter(|env| env.is_dir()) else { return Ok(Vec::new()) };
    let (tool, source) = tool_and_source(plan);
    let listed = installed::freeze_from_disk(env, &tool)?;
    Ok(undo_gaps(&listed.pins, &planned_pins(plan), &source))
}

/// The index each package a plan replaces from one of PyTorch's wheel indexes came from, where
/// its local label names another of them: PyTorch publishes the `+LABEL` builds in
/// `INDEX/LABEL` (`+cpu` in `…/whl/cpu`, `+cu121` in `…/whl/cu121`; the knowledge base's
/// `pytorch.index`, source in assets/compat/pytorch.toml). The package's name (normalized) and URL.
pub(crate) fn origins_of(before: &[String], planned: &[String], source: &Source) -> Vec<(String, String)> {
    let Some(url) = source.index_url.as_deref().map(|u| u.trim_end_matches('/')) else { return Vec::new() };
    let Ok(kb) = gpu_doctor_kb::Kb::get() else { return Vec::new() };
    let base = kb.pytorch.index.trim_end_matches('/');
    if url.strip_prefix(base).is_none_or(|rest| !rest.starts_with('/')) {
        return Vec::new();
    }
    let replaced: std::collections::HashMap<String, String> = planned.iter().map(|p| backup::key_of(p)).collect();
    let mut out = Vec::new();
    for line in before {
        let (name, rest) = backup::key_of(line);
        let Some(label) = line.split_once("==").and_then(|(_, v)| v.split_once('+')).map(|(_, l)| l) else {
            continue;
        };
        let origin = format!("{base}/{label}");
        let plain = label.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.');
        if plain && origin != url && replaced.get(&name).is_some_and(|new| *new != rest) {
            out.push((name, origin));
        }
    }
    out
}

/// The packages a plan replaces that an undo from the plan's own source cannot bring back: a
/// `name==version` in `before` that the plan installs at another version, whose old version is
/// not a wheel in the plan's `--find-links` folder, or has a local label (`+cpu`) that the plan's
/// index is not named for (PyTorch's indexes are named by their label: `…/whl/cu124` holds
/// `+cu124` builds) or comes from PyPI, where local versions are not published (PEP 440: "Local
/// version identifiers SHOULD NOT be used when publishing upstream projects to a public index
/// server", https://peps.python.org/pep-0440/#local-version-identifiers).
pub(crate) fn undo_gaps(before: &[String], planned: &[String], source: &Source) -> Vec<String> {
    let replaced: std::collections::HashMap<String, String> = planned.iter().map(|p| backup::key_of(p)).collect();
    let wheels: std::collections::HashSet<(String, String)> = source
        .find_links
        .as_deref()
        .map(|dir| crate::planners::setup::wheel_files(dir).unwrap_or_default())
        .unwrap_or_default()
        .iter()
        .filter_map(|file| {
            let stem = file.strip_suffix(".whl")?;
            let mut parts = stem.splitn(3, '-');
            Some((gpu_doctor_probes::parse::wheel::normalize_name(parts.next()?), parts.next()?.to_owned()))
        })
        .collect();
    let known: std::collections::HashSet<String> =
        origins_of(before, planned, source).into_iter().map(|(name, _)| name).collect();
    let mut gaps = Vec::new();
    for line in before {
        let Some((_, version)) = line.split_once("==") else { continue };
        let (key, rest) = backup::key_of(line);
        if replaced.get(&key).is_none_or(|new| *new == rest) || known.contains(&key) {
            continue;
        }
        let why = if let Some(dir) = &source.find_links {
            (!wheels.contains(&(key.clone(), version.to_owned())))
                .then(|| format!("{} has no wheel of it", dir.display()))
        } else {
            let label = version.split_once('+').map(|(_, label)| label);
            match (label, &source.index_url) {
                (Some(label), Some(url)) if url.trim_end_matches('/').rsplit('/').next() != Some(label) => {
                    Some(format!("{url} holds no +{label} build"))
                }
                (Some(label), None) => Some(format!("PyPI holds no +{label} build")),
                _ => None,
            }
        };
        if let Some(why) = why {
            gaps.push(format!("{line} ({why}); keep its wheel to put it back by hand"));
        }
    }
    gaps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undo_gaps_name_the_replaced_builds_the_plan_s_source_does_not_hold() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("torch-2.5.1+cu124-cp312-cp312-manylinux_2_28_x86_64.whl"), "").unwrap();
        let before: Vec<String> = ["torch==2.5.1+cpu", "numpy==2.1.0", "jax==0.4.35"].map(str::to_owned).into();
        let planned: Vec<String> = ["torch==2.5.1+cu124", "jax==0.4.35"].map(str::to_owned).into();
        // From a wheel folder without the +cpu wheel.
        let wheels = Source { index_url: None, find_links: Some(dir.path().to_owned()) };
        let gaps = undo_gaps(&before, &planned, &wheels);
        assert_eq!(gaps.len(), 1, "{gaps:?}");
        assert!(gaps[0].starts_with("torch==2.5.1+cpu (") && gaps[0].contains("has no wheel of it"), "{gaps:?}");
        // The folder has it: nothing to say.
        std::fs::write(dir.path().join("torch-2.5.1+cpu-cp312-cp312-linux_x86_64.whl"), "").unwrap();
        assert!(undo_gaps(&before, &planned, &wheels).is_empty());
        // From an index named for another label, which holds no +cpu build; one named for it does.
        let index = |url: &str| Source { index_url: Some(url.into()), find_links: None };
        let gaps = undo_gaps(&before, &planned, &index("https://mirror.example/whl/cu132"));
        assert!(gaps.len() == 1 && gaps[0].contains("holds no +cpu build"), "{gaps:?}");
        assert!(undo_gaps(&before, &planned, &index("https://mirror.example/whl/cpu/")).is_empty());
        // From PyTorch's own cu132 index: the +cpu build's index is known (…/whl/cpu), no gap.
        let pytorch = index("https://download.pytorch.org/whl/cu132");
        assert!(undo_gaps(&before, &planned, &pytorch).is_empty());
        assert_eq!(
            origins_of(&before, &planned, &pytorch),
            [("torch".to_owned(), "https://download.pytorch.org/whl/cpu".to_owned())]
        );
        assert!(origins_of(&before, &planned, &index("https://mirror.example/whl/cu132")).is_empty());
        assert!(origins_of(&before, &planned, &wheels).is_empty());
        assert!(undo_gaps(&before, &planned, &Source::default())[0].contains("PyPI holds no +cpu build"));
    }
}
