//! Python environments and the GPU frameworks in them.
//!
//! Discovery finds every environment (PATH, `VIRTUAL_ENV`, `CONDA_PREFIX`, conda's lists and usual
//! roots, pyenv, a `.venv` in the working folder, `--python`). The fast tier then reads package
//! metadata and version files from each site-packages folder without starting Python. The deep
//! tier (`Options::deep`) runs `assets/python/probe.py` in each interpreter, in parallel.

mod deep;
mod discover;
pub(crate) mod fast;
mod layout;
pub(crate) mod parse;

use serde::{Deserialize, Serialize};

pub use deep::{
    DeepCupy, DeepFacts, DeepJax, DeepJaxDevice, DeepOnnxruntime, DeepPython, DeepTensorflow, DeepTorch,
    DeepTorchDevice, PROBE_SCRIPT,
};

use super::{Options, SitePackages};
use crate::host::Host;
use crate::{Probed, Trace};

/// How an environment was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnvKind {
    /// A conda (or mamba, micromamba) environment: its prefix has `conda-meta/`.
    Conda,
    /// A `venv`/`virtualenv`/`uv` environment: its prefix has `pyvenv.cfg`.
    Venv,
    /// A pyenv-installed interpreter under `$PYENV_ROOT/versions/`.
    Pyenv,
    /// Any other interpreter: the OS's, a python.org install, one built from source.
    System,
    /// A value this version of gpu-doctor does not know, read from a report written by a newer one.
    #[serde(other)]
    Unknown,
}

/// What a framework was built against, as far as its files tell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FrameworkBuild {
    /// A CUDA build; `version` is `12.1`, or only the major (`12`) when the package name is all that
    /// tells it (`cupy-cuda12x`, `jax-cuda12-plugin`); `None` when the files do not say which.
    Cuda { version: Option<String> },
    /// A CPU-only build.
    Cpu,
    /// A ROCm build; `version` when the files say it.
    Rocm { version: Option<String> },
    /// The files do not say, or a kind of build this version does not know (a report from a newer
    /// gpu-doctor).
    #[serde(other)]
    Unknown,
}

impl FrameworkBuild {
    /// The CUDA version of a CUDA build.
    pub fn cuda_version(&self) -> Option<&str> {
        match self {
            Self::Cuda { version } => version.as_deref(),
            _ => None,
        }
    }
}

/// A GPU framework found in a site-packages folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Framework {
    /// Normalized distribution name: `torch`, `tensorflow`, `jax`, `jax-cuda12-plugin`, `cupy-cuda12x`,
    /// `onnxruntime-gpu`.
    pub name: String,
    /// The installed version as its metadata says, e.g. `2.3.0+cu121`.
    pub version: String,
    /// What it was built against.
    pub build: FrameworkBuild,
    /// The cuDNN version it was built against, when its files say (TensorFlow, onnxruntime-gpu).
    pub cudnn_build: Option<String>,
    /// Which files told us, e.g. `dist-info METADATA + torch/version.py`.
    pub source: String,
    /// The site-packages folder it is in.
    pub site_packages: String,
}

/// An installed distribution: a pip `nvidia-*` CUDA library wheel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Package {
    /// Normalized name, e.g. `nvidia-cudnn-cu12`.
    pub name: String,
    /// Version, e.g. `9.1.0.70`.
    pub version: String,
}

/// One Python environment and the GPU packages in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PythonEnv {
    /// Display name, e.g. `conda:base`, `venv:/home/user/proj/.venv`, `system:/usr/bin/python3`.
    pub name: String,
    /// How the environment was made.
    pub kind: EnvKind,
    /// The environment's prefix folder.
    pub prefix: String,
    /// Its interpreter; `None` for a conda environment without Python's executable.
    #[serde(default)]
    pub interpreter: Option<String>,
    /// Python's version (`3.11` or `3.11.4`) as read from files; `None` when no file said.
    #[serde(default)]
    pub python_version: Option<String>,
    /// Its site-packages folders.
    pub site_packages: Vec<String>,
    /// A venv whose `pyvenv.cfg` lets it see its base interpreter's packages.
    #[serde(default)]
    pub include_system_site_packages: bool,
    /// How it was found, e.g. `PATH`, `CONDA_PREFIX`, `~/.conda/environments.txt`.
    #[serde(default)]
    pub found_by: Vec<String>,
    /// GPU frameworks from the fast tier (files only).
    #[serde(default)]
    pub frameworks: Vec<Framework>,
    /// pip `nvidia-*` CUDA library wheels.
    #[serde(default)]
    pub cuda_wheels: Vec<Package>,
    /// What importing the frameworks said (deep tier); `None` when the deep tier did not run.
    #[serde(default)]
    pub deep: Option<Probed<DeepFacts>>,
}

/// Finds Python environments and the GPU frameworks in them.
pub fn probe(host: &dyn Host, opts: &Options, trace: &mut Trace) -> Probed<Vec<PythonEnv>> {
    let (layouts, looked) = discover::discover(host, opts, trace);
    if layouts.is_empty() {
        return Probed::absent(format!("no Python interpreter found; looked in {}", looked.join(", ")));
    }
    let mut envs: Vec<PythonEnv> = layouts
        .into_iter()
        .map(|l| {
            let scan = fast::scan(host, &l.site_packages, trace);
            PythonEnv {
                name: l.name,
                kind: l.kind,
                prefix: path_text(&l.prefix),
                interpreter: l.interpreter.as_deref().map(path_text),
                python_version: l.python_version,
                site_packages: l.site_packages.iter().map(|p| path_text(p)).collect(),
                include_system_site_packages: l.include_system_site_packages,
                found_by: l.found_by,
                frameworks: scan.frameworks,
                cuda_wheels: scan.cuda_wheels,
                deep: None,
            }
        })
        .collect();
    if opts.deep {
        deep::run_all(host, &mut envs, opts, trace);
    }
    let source =
        if opts.deep { "discovery + site-packages metadata + probe.py" } else { "discovery + site-packages metadata" };
    Probed::found(envs, source)
}

/// Runs the deep tier (`probe.py`) in one environment found earlier, e.g. when the window asks for
/// it on demand; the environment's `deep` field is left to the caller.
pub fn deep_probe(host: &dyn Host, env: &PythonEnv, trace: &mut Trace) -> Probed<DeepFacts> {
    deep::run_env(host, env, trace)
}

/// Every site-packages folder of every environment.
pub fn site_packages(envs: &[PythonEnv]) -> Vec<SitePackages> {
    envs.iter()
        .flat_map(|e| e.site_packages.iter().map(|p| SitePackages { env: e.name.clone(), path: p.into() }))
        .collect()
}

/// A path as text with forward slashes (Windows paths are reported as `C:/Users/...`).
fn path_text(path: &std::path::Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
