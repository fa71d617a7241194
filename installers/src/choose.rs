//! Choosing a framework build for this machine, from the knowledge base: the newest (or the same
//! release line) whose build runs on this driver, has machine code or PTX for every GPU here, and
//! supports the environment's Python and OS/CPU. Every candidate turned down keeps its reason.

use gpu_doctor_probes::compat::Kb;
use gpu_doctor_probes::model::OsFamily;
use gpu_doctor_probes::{ComputeCapability, CudaVersion};
use serde::{Deserialize, Serialize};

/// A framework gpu-doctor can install.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Framework {
    Torch,
    Jax,
    Tensorflow,
    Cupy,
}

impl Framework {
    /// Every one, in the order they are offered.
    pub const ALL: [Framework; 4] = [Framework::Torch, Framework::Jax, Framework::Tensorflow, Framework::Cupy];

    /// The name on the command line (`--framework torch`).
    pub fn name(self) -> &'static str {
        match self {
            Framework::Torch => "torch",
            Framework::Jax => "jax",
            Framework::Tensorflow => "tensorflow",
            Framework::Cupy => "cupy",
        }
    }
}

/// What the build must fit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// The compute capability of every GPU the build must run on.
    pub gpus: Vec<ComputeCapability>,
    /// The newest CUDA the driver supports; `None` without a driver.
    pub driver_cuda: Option<CudaVersion>,
    /// The driver's version (`575.57.08`), for the rules that name a driver version.
    pub driver_version: Option<String>,
    /// The environment's Python, `(3, 12)`; `None` when a new environment's Python is not known yet.
    pub python: Option<(u32, u32)>,
    /// Linux, Windows, …
    pub os: OsFamily,
    /// The CPU (`x86_64`, `aarch64`).
    pub cpu: String,
}

/// What the user asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Want {
    /// Which framework.
    pub framework: Framework,
    /// Stay on this release line (`2.5`) when one of its builds fits: the smallest change.
    pub keep_line: Option<String>,
    /// Choose among the wheels in this folder (`--find-links DIR`, offline) instead of the index.
    pub wheelhouse: Option<Vec<String>>,
}

/// The outcome: the chosen build, or none, and why each other candidate was turned down.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Choice {
    /// `torch`, `jax`, …
    pub framework: String,
    /// The build to install; `None` when no candidate fits (the reasons say why).
    pub chosen: Option<Candidate>,
    /// Every candidate turned down, newest first, each with its reason.
    pub rejected: Vec<Rejected>,
}

/// One installable build.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Candidate {
    /// Short name people know it by: `2.9.1+cu128`, `jax[cuda13] 0.8`, `cupy-cuda12x 13.6`.
    pub label: String,
    /// The requirements to install together (the framework and its companions, pinned):
    /// `torch==2.9.1`, `torchvision==0.24.1`, `torchaudio==2.9.1`.
    pub requirements: Vec<String>,
    /// The index to install from (`https://download.pytorch.org/whl/cu128`); `None` for PyPI.
    pub index_url: Option<String>,
    /// Why this one: the rules it passed, one sentence.
    pub why: String,
    /// Non-empty when the version is newer than the knowledge base and was reasoned from its wheel
    /// tags: says so.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub beyond_kb: String,
}

/// A candidate turned down.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejected {
    /// As [`Candidate::label`].
    pub label: String,
    /// Why: `no sm_120`, `driver 550 < 580`, `no wheel for Python 3.14`.
    pub reason: String,
}

/// Chooses a build of `want.framework` for `machine`.
pub fn choose(kb: &Kb, machine: &Machine, want: &Want) -> Choice {
    let _ = (kb, machine);
    Choice {
        framework: want.framework.name().to_owned(),
        chosen: None,
        rejected: vec![Rejected { label: "*".into(), reason: "the chooser is being written".into() }],
    }
}
