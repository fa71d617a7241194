//! Carrying a plan out: the user steps run as child processes (no shell, their own process group,
//! a deadline), their output streamed line by line, progress parsed from pip's and uv's lines,
//! cancellable, everything logged to the data folder (`log_dir`, a file per run). Root and manual
//! steps are never run. Before an existing environment is touched its package list is saved;
//! [`undo`] puts exactly that list back. After a run and after an undo, every distribution's files
//! are checked against its `RECORD` (`record`): one whose files were whole before and are now
//! missing or changed, at the same version, is reinstalled exactly (wheels of two CUDA majors
//! write the same files), and [`Outcome::files`] says what still is not whole. A `Write` step
//! writes only inside the plan's environment or `log_dir`.

mod backup;
pub(crate) mod installed;
mod lock;
mod log;
mod progress;
mod record;
pub(crate) mod run;
mod write;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use gpu_doctor_model::InstallFlag;
use gpu_doctor_model::shell::Shell;
use serde::{Deserialize, Serialize};

use crate::envtool::{self, Source, Tool};
use crate::plan::{Plan, StepKind, UserAction};
use backup::{Backup, Saved};
pub use backup::{name_of, python_of, read as read_backup};
use log::Log;
use record::{DistFiles, Record, Site};
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
    /// The files of the environment's distributions checked against their `RECORD` after the
    /// run, once those it damaged were reinstalled: what holds beyond the package list. `None`
    /// where no list was saved (a new environment, no environment, nothing run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<FilesState>,
}

/// Where the files of an environment's distributions stand after a run, checked against each
/// one's `RECORD`: the distributions whose files were whole before the run (every listed file
/// there, of its size) and that are at the same version now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum FilesState {
    /// Every one of them is whole: `dists` distributions, `files` files; `repaired` (`name==version`)
    /// were reinstalled to get there.
    Whole {
        dists: usize,
        files: usize,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        repaired: Vec<String>,
    },
    /// These are not, after reinstalling `repaired`.
    Broken {
        broken: Vec<BrokenDist>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        repaired: Vec<String>,
    },
    /// The files could not be checked (no site-packages, an unreadable folder).
    Unknown { reason: String },
}

/// A distribution whose files are not as its `RECORD` lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrokenDist {
    /// Its normalized name.
    pub name: String,
    pub version: String,
    /// How many listed files are not there.
    pub missing: usize,
    /// How many are there with another size or sha256.
    pub changed: usize,
    /// A few of those files, as `RECORD` writes them.
    pub examples: Vec<String>,
    /// Other installed distributions that list the same files: reinstalling it would write over
    /// theirs, so it is not reinstalled.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared_with: Vec<String>,
}

impl FilesState {
    /// Whether some distribution whose files were whole before is not now.
    pub fn is_broken(&self) -> bool {
        matches!(self, FilesState::Broken { .. })
    }

    /// The state in one paragraph, for the person.
    pub fn describe(&self) -> String {
        let repaired = |pins: &[String]| {
            if pins.is_empty() {
                String::new()
            } else {
                format!(" (reinstalled as their files were missing or changed: {})", pins.join(", "))
            }
        };
        match self {
            FilesState::Whole { dists, files, repaired: pins } => format!(
                "the files of the {dists} distribution(s) that were whole before are all there as their RECORD lists \
                 them ({files} files; before the run every one's size; after it, by size and sha256, every one the run \
                 could have written: those of the distributions it installed or removed, and those two list){}",
                repaired(pins)
            ),
            FilesState::Broken { broken, repaired: pins } => format!(
                "the files of {} distribution(s) are not as their RECORD lists them (the package list cannot show \
                 this){}:\n  {}",
                broken.len(),
                repaired(pins),
                broken.iter().map(BrokenDist::describe).collect::<Vec<_>>().join("\n  ")
            ),
            FilesState::Unknown { reason } => {
                format!("the files of the distributions could not be checked against their RECORD: {reason}")
            }
        }
    }
}

impl BrokenDist {
    /// One line: the pin, the counts, a few files, and what else writes them.
    pub fn describe(&self) -> String {
        let mut out = format!(
            "{}=={}: {} file(s) missing, {} changed (e.g. {})",
            self.name,
            self.version,
            self.missing,
            self.changed,
            self.examples.join(", ")
        );
        if !self.shared_with.is_empty() {
            out.push_str(&format!(
                "; {} list(s) the same files, so one overwrites the other: not reinstalled; keep only one of them",
                self.shared_with.join(", ")
            ));
        }
        out
    }
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
    let mut saved: Option<Before> = None;
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
        let last = total.saturating_sub(1);
        let files = match &before.files {
            Ok((site, whole)) => {
                let repair = Repair { tool: &tool, python, source: &before.source, origins: &before.origins };
                // Only after steps that all ran to their end are the run's files all named by RECORDs.
                let narrow = !stopped;
                runner.files_after(last, env, &repair, site, &|r: &Record| whole.contains(&r.folder), narrow)
            }
            Err(reason) => FilesState::Unknown { reason: reason.clone() },
        };
        runner.line(last, &files.describe());
        outcome.files = Some(files);
        let state = match runner.list_now(env, python, &tool, Read::Again) {
            Ok(now) => {
                let changes = backup::changes(&before.pins, &now);
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
    // The files before the undo changes anything: what it removes and installs is "touched".
    let files_before = Site::read(env);
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
    // Whatever happened, the files and the list are read again: the answer says what is there,
    // not what was meant.
    runner.started(3, TOTAL, &format!("check the files and read the package list of {} again", python.display()));
    let files = undo_files(&mut runner, env, python, &tool, &saved, &files_before);
    runner.line(3, &files.describe());
    let (state, status) = undo_state(&mut runner, env, python, &tool, &saved.pins);
    // A list as before over missing files is no undo: the step says what is not whole.
    let status = match status {
        StepStatus::Done if files.is_broken() => StepStatus::Failed { reason: files.describe() },
        StepStatus::Failed { reason } if files.is_broken() => {
            StepStatus::Failed { reason: format!("{reason}\n{}", files.describe()) }
        }
        other => other,
    };
    runner.ended(3, &status);
    outcome.steps[3] = status;
    outcome.state = Some(state);
    outcome.files = Some(files);
    runner.log.flush();
    drop(held);
    outcome
}

/// The package list of the environment at `env` read again after an undo, against the saved
/// `pins` (step 4), and said.
fn undo_state(
    runner: &mut Runner<'_>,
    env: &Path,
    python: &Path,
    tool: &Tool,
    pins: &[String],
) -> (EnvState, StepStatus) {
    let (state, status) = match runner.list_now(env, python, tool, Read::Again) {
        Ok(after) => {
            let changes = backup::changes(pins, &after);
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
    (state, status)
}

/// The files of the environment at `env` after an undo, checked against their `RECORD` (step 4):
/// the saved list's distributions at their saved version, unless it names them as not whole when
/// it was saved, are reinstalled where their files are missing or changed ([`Runner::files_after`]).
fn undo_files(
    runner: &mut Runner<'_>,
    env: &Path,
    python: &Path,
    tool: &Tool,
    saved: &Saved,
    files_before: &Result<Site, String>,
) -> FilesState {
    match files_before {
        Ok(site) => {
            let listed: HashSet<String> = saved.pins.iter().map(|p| backup::key_of(p)).map(|(k, r)| k + &r).collect();
            let was_whole = |r: &Record| {
                let pin = format!("{}=={}", r.name, r.version);
                listed.contains(&pin) && !saved.not_whole.contains(&pin)
            };
            let repair = Repair { tool, python, source: &saved.source, origins: &saved.origins };
            runner.files_after(3, env, &repair, site, &was_whole, false)
        }
        Err(reason) => FilesState::Unknown { reason: reason.clone() },
    }
}

/// The install commands that put `reinstall` (lines of the saved list) back: one from the list's
/// source, and one per other index a package was saved as coming from (`Saved::origins`).
fn install_commands(tool: &Tool, python: &Path, reinstall: &[String], saved: &Saved) -> Vec<Vec<String>> {
    by_source(reinstall, &saved.source, &saved.origins)
        .iter()
        .map(|(source, pins)| envtool::install_pins(tool, python, pins, source))
        .collect()
}

/// `pins` as arguments, grouped by where each comes from: its own index in `origins` (by
/// normalized name), else `source`.
fn by_source(pins: &[String], source: &Source, origins: &HashMap<String, String>) -> Vec<(Source, Vec<String>)> {
    let mut groups: Vec<(Source, Vec<String>)> = Vec::new();
    for pin in pins {
        let source = match origins.get(&name_of(pin)) {
            Some(url) => Source { index_url: Some(url.clone()), find_links: None },
            None => source.clone(),
        };
        match groups.iter_mut().find(|(s, _)| *s == source) {
            Some((_, args)) => args.extend(backup::pin_args(pin)),
            None => groups.push((source, backup::pin_args(pin))),
        }
    }
    groups
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
        saved: &mut Option<Before>,
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
                Ok((path, before)) => {
                    *backup = Some(path);
                    *saved = Some(before);
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
    /// before step `index` changes it, and says which packages an undo could not bring back; its
    /// distributions' files are checked against their `RECORD` (those not whole are named in the
    /// list). `Err` is the step's status: the environment is not touched without a backup.
    fn save_backup(
        &mut self,
        index: usize,
        env: &Path,
        python: &Path,
        plan: &Plan,
    ) -> Result<(PathBuf, Before), StepStatus> {
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
        let (files, not_whole) = match whole_before(env) {
            Ok((site, whole, broken)) => {
                let n = site.records.len();
                self.line(index, &format!("checked the files of its {n} distribution(s) against their RECORD"));
                // Said, and saved in the list: no run is blamed (or undone) for these.
                for dist in &broken {
                    self.line(index, &format!("not whole before the run: {}", dist.describe()));
                }
                let pins = broken.iter().map(|b| format!("{}=={}", b.name, b.version)).collect();
                (Ok((site, whole)), pins)
            }
            Err(why) => {
                self.line(index, &format!("its files could not be checked against their RECORD: {why}"));
                (Err(why), Vec::new())
            }
        };
        let backup = Backup { tool, source: source.clone(), pins: pins.clone(), origins: origins.clone() };
        let text = backup.to_text_with(python, &not_whole).map_err(failed)?;
        // Through the one atomic writer: a full disk leaves no truncated list that undo would
        // take for the environment's packages.
        backup::save(&path, &text).map_err(|e| failed(e.chain()))?;
        self.line(index, &format!("saved the package list to {}", path.display()));
        for gap in undo_gaps(&pins, &planned_pins(plan), &source) {
            self.line(index, &format!("undo will not be able to bring back {gap}"));
        }
        Ok((path, Before { pins, files, source, origins: origins.into_iter().collect() }))
    }

    /// Checks the files of the environment at `env` against their `RECORD` after a run (`before`:
    /// its `RECORD` files read before it), as step `index`: the distributions `was_whole` names
    /// (whole before, at the same version now) that are not whole now are reinstalled exactly
    /// with `repair` (`--force-reinstall --no-deps NAME==VERSION`), unless another installed
    /// distribution lists the same files, and checked again. Files are looked at for their size;
    /// those another distribution also lists, and those of the distributions the run installed or
    /// removed, are hashed too ([`record`]'s bound on the cost). `narrow`: every step ran to its
    /// end, so pip and uv named every file they wrote or removed in a `RECORD`: only those files
    /// (and the ones two distributions list) are looked at; else every listed file is.
    fn files_after(
        &mut self,
        index: usize,
        env: &Path,
        repair: &Repair<'_>,
        before: &Site,
        was_whole: &dyn Fn(&Record) -> bool,
        narrow: bool,
    ) -> FilesState {
        let look = || -> Result<(Site, BTreeMap<String, DistFiles>), String> {
            let now = Site::read(env)?;
            let mut hash = now.shared();
            hash.extend(before.shared());
            hash.extend(before.touched(&now));
            // pip and uv write and remove only the files of what they install or remove: the
            // others' files they can have changed are among these (a stat of each of 20,000 files
            // of a torch environment is most of the check's cost).
            let checked = record::check(&now, &hash, was_whole, narrow.then_some(&hash));
            Ok((now, checked))
        };
        let (now, checked) = match look() {
            Ok(found) => found,
            Err(reason) => return FilesState::Unknown { reason },
        };
        let found = damaged(&now, &checked);
        let pins: Vec<String> =
            found.iter().filter(|b| b.shared_with.is_empty()).map(|b| format!("{}=={}", b.name, b.version)).collect();
        if pins.is_empty() {
            return state_of(&checked, found, Vec::new());
        }
        self.line(
            index,
            &format!(
                "the files of {} are missing or changed since before the run: reinstalling exactly that",
                pins.join(", ")
            ),
        );
        for argv in repair.commands(&pins) {
            self.line(index, &format!("$ {}", render(&argv)));
            let status = self.run_argv(index, &argv);
            if status != StepStatus::Done {
                self.line(index, &format!("the reinstall did not succeed: {status:?}"));
                break;
            }
        }
        match look() {
            Ok((now, checked)) => {
                let broken = damaged(&now, &checked);
                let repaired = pins
                    .into_iter()
                    .filter(|pin| !broken.iter().any(|b| format!("{}=={}", b.name, b.version) == *pin))
                    .collect();
                state_of(&checked, broken, repaired)
            }
            Err(reason) => FilesState::Unknown { reason },
        }
    }
}

/// What is kept from before a run changes an existing environment.
struct Before {
    /// Its package list.
    pins: Vec<String>,
    /// Its `RECORD` files, and the folders of the distributions whose files were whole; or why
    /// they could not be read.
    files: Result<(Site, HashSet<String>), String>,
    /// Where a damaged distribution is reinstalled from: the list's source, and the index of each
    /// package (normalized name) that came from elsewhere.
    source: Source,
    origins: HashMap<String, String>,
}

/// The `RECORD` files of the environment at `env` and the folders of the distributions whose
/// files are whole (sizes; the sha256 of files two distributions list).
fn whole_before(env: &Path) -> Result<(Site, HashSet<String>, Vec<BrokenDist>), String> {
    let site = Site::read(env)?;
    let checked = record::check(&site, &site.shared(), &|_| true, None);
    let whole = checked.iter().filter(|(_, files)| files.intact()).map(|(folder, _)| folder.clone()).collect();
    let broken = damaged(&site, &checked);
    Ok((site, whole, broken))
}

/// The distributions of `checked` that are not whole, with the other distributions of `now` that
/// list their missing or changed files.
fn damaged(now: &Site, checked: &BTreeMap<String, DistFiles>) -> Vec<BrokenDist> {
    let mut out = Vec::new();
    for record in &now.records {
        let Some(files) = checked.get(&record.folder).filter(|f| !f.intact()) else { continue };
        let at: HashMap<&str, &Path> = record.entries.iter().map(|e| (e.shown.as_str(), e.path.as_path())).collect();
        let bad: Vec<&String> = files.missing.iter().chain(&files.changed).collect();
        let mut shared_with: Vec<String> = bad
            .iter()
            .filter_map(|shown| at.get(shown.as_str()))
            .flat_map(|path| now.owners(path, &record.folder))
            .collect();
        shared_with.sort();
        shared_with.dedup();
        out.push(BrokenDist {
            name: files.name.clone(),
            version: files.version.clone(),
            missing: files.missing.len(),
            changed: files.changed.len(),
            examples: bad
                .iter()
                .chain(files.refused.iter().collect::<Vec<_>>().iter())
                .take(3)
                .map(|s| (*s).clone())
                .collect(),
            shared_with,
        });
    }
    out
}

/// The state of the distributions `checked`, `broken` of them not whole.
fn state_of(checked: &BTreeMap<String, DistFiles>, broken: Vec<BrokenDist>, repaired: Vec<String>) -> FilesState {
    if broken.is_empty() {
        FilesState::Whole { dists: checked.len(), files: checked.values().map(|f| f.files).sum(), repaired }
    } else {
        FilesState::Broken { broken, repaired }
    }
}

/// How a damaged distribution is reinstalled: the tool, the environment's interpreter, the saved
/// list's source and the packages' own indexes.
struct Repair<'a> {
    tool: &'a Tool,
    python: &'a Path,
    source: &'a Source,
    origins: &'a HashMap<String, String>,
}

impl Repair<'_> {
    /// The commands that reinstall exactly `pins` (`name==version`) without their dependencies:
    /// `pip install --force-reinstall --no-deps`, `uv pip install --reinstall --no-deps`.
    fn commands(&self, pins: &[String]) -> Vec<Vec<String>> {
        let flags = [InstallFlag::Reinstall, InstallFlag::NoDeps];
        by_source(pins, self.source, self.origins)
            .iter()
            .map(|(source, pins)| envtool::install_with(self.tool, self.python, pins, source, &flags))
            .collect()
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
