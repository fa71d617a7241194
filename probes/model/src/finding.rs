//! `Finding`: what diagnosis concludes, with its evidence and the plan that fixes it.

use serde::{Deserialize, Serialize};

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

/// The fixed list of finding categories shared by every export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    DriverTooOldForRuntime,
    ArchNotInBuild,
    CpuOnlyBuild,
    CudnnMissingOrMismatch,
    ToolkitVsFrameworkMismatchHarmless,
    MultipleToolkitsConflict,
    EnvVarMisconfig,
    NoDriverOrGpuNotVisible,
    WslSpecific,
    PcieLinkDegraded,
    /// A benchmark measured less (or more) than the hardware should give, or a result was wrong.
    Benchmark,
    Other,
}

/// One conclusion about the machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable dotted id, e.g. `driver.too_old_for_runtime`.
    pub id: String,
    /// Category from the fixed list.
    pub category: Category,
    /// Error, warning or info.
    pub severity: Severity,
    /// One line.
    pub summary: String,
    /// Why it matters.
    pub detail: String,
    /// The facts it rests on.
    pub evidence: Vec<String>,
    /// The known messages of a pasted text this finding explains, as the ids their own finding
    /// would have had (`observed.<message id>`, `assets/compat/errors.toml`): their lines are in the
    /// evidence, and no finding of their own is given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub explains: Vec<String>,
    /// The exact step to take on this machine. For a finding with a [`PlanRef`] only
    /// `gpu-doctor-installers` writes it: the prose of the plan, or, where no plan can be made, the
    /// rule's words ([`PlanRef::unplanned`]); so the plan and the fix cannot disagree.
    pub fix: Option<String>,
    /// The fix plan this finding has: what it acts on, set by the rule; `gpu-doctor-installers`
    /// builds the plan from it and gives it its id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanRef>,
}

impl Finding {
    /// This finding, answered by a plan for `target` (as it is when `target` is `None`). The fix
    /// the rule wrote moves to [`PlanRef::unplanned`]: the words for a machine no plan can be made
    /// for; the fix itself is the planner's to write.
    #[must_use]
    pub fn with_plan(mut self, target: impl Into<Option<PlanTarget>>) -> Self {
        if let Some(target) = target.into() {
            self.plan = Some(PlanRef { id: String::new(), target, unplanned: self.fix.take() });
        }
        self
    }
}

/// A finding's fix plan: the plan's id (`gpu-doctor fix ID`) and what it acts on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanRef {
    /// Unique within a report; empty until `gpu-doctor-installers` planned it.
    #[serde(default)]
    pub id: String,
    /// What the plan changes.
    pub target: PlanTarget,
    /// The rule's fix in words, without commands, for a machine no plan can be made for (an OS that
    /// pasted text did not name, macOS, no build that fits). `gpu-doctor-installers` makes it the
    /// finding's fix only then, and clears it either way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unplanned: Option<String>,
}

/// What a fix plan acts on, as the rule that found the problem names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PlanTarget {
    /// Reinstall `framework` (its package name: `torch`, `jax`, `tensorflow`, `cupy-cuda12x`) in the
    /// environment at `env` (its prefix) with a build that runs on this driver and these GPUs.
    /// When no build fits, the driver branch that the installed build needs instead: the plan then
    /// updates the driver.
    FrameworkBuild {
        env: String,
        framework: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        or_driver: Option<u32>,
    },
    /// Install or change the NVIDIA driver (root steps): at least branch `min_branch` when a
    /// framework needs one.
    Driver { min_branch: Option<u32> },
    /// Make the installed driver load: nouveau, Secure Boot signing, the module for this kernel.
    DriverLoad { problem: DriverLoadProblem },
    /// Authorize a Thunderbolt-attached GPU (`boltctl`).
    Thunderbolt,
    /// The changes a rule names, in order, to the environment at `env` (its prefix; `None` when only
    /// the shell or the system changes): `gpu-doctor-installers` writes each one's command for the
    /// environment's tool and the machine's shell.
    Change {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        env: Option<String>,
        /// What the machine is like when they are done.
        goal: String,
        changes: Vec<Change>,
    },
}

/// One change of a [`PlanTarget::Change`]: what to change, not the command that does it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum Change {
    /// Remove these distributions from the environment.
    Uninstall { packages: Vec<String> },
    /// Install these requirements into the environment (from `index_url` when set, else PyPI).
    Install {
        requirements: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        flags: Vec<InstallFlag>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        index_url: Option<String>,
    },
    /// Set an environment variable in the shell that runs the programs.
    SetVar { name: String, value: String },
    /// Remove an environment variable from that shell.
    UnsetVar { name: String },
    /// Put a folder first in `PATH`.
    PrependPath { dir: String },
    /// A command only root may run (shown, never run by gpu-doctor), as argv.
    Root { argv: Vec<String> },
    /// A command the person runs in PowerShell on Windows (the Windows side of WSL), as argv.
    Windows { argv: Vec<String> },
    /// Something only a person can do, in words.
    Manual { text: String },
}

/// How an [`Change::Install`] treats what is installed already.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InstallFlag {
    /// Upgrade to the newest that fits (`-U`).
    Upgrade,
    /// Install again even when the same version is there (`--force-reinstall`).
    Reinstall,
    /// Leave dependencies as they are (`--no-deps`).
    NoDeps,
    /// Build from source against the packages installed in the environment (the installed torch, for
    /// a PyTorch extension), not in a fresh isolated one (`--no-build-isolation`).
    NoBuildIsolation,
    /// Neither read nor write the tool's cache, so a wheel built earlier against another torch is not
    /// taken again (`--no-cache-dir`).
    NoCache,
}

/// Why an installed NVIDIA driver does not load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DriverLoadProblem {
    /// nouveau holds the GPU.
    Nouveau,
    /// Secure Boot refuses the unsigned module.
    SecureBootUnsigned,
    /// The module was built for another kernel than the running one.
    ModuleForOtherKernel,
}
