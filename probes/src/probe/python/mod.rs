//! Python environments and the GPU frameworks in them.
//!
//! Discovery finds every environment (PATH, `VIRTUAL_ENV`, `CONDA_PREFIX`, conda's lists and usual
//! roots, pyenv, a `.venv` in the working folder, `--python`). The fast tier then reads package
//! metadata and version files from each site-packages folder without starting Python. The deep
//! tier (`Options::deep`) runs `assets/python/probe.py` in each interpreter, in parallel.

pub mod companions;
mod deep;
mod discover;
pub(crate) mod fast;
mod layout;
pub(crate) mod parse;

pub use deep::PROBE_SCRIPT;

use super::{Options, SitePackages};
use crate::host::Host;
use gpu_doctor_model::{DeepFacts, PythonEnv, UnusedPython};
use gpu_doctor_model::{Probed, Trace};

/// Finds Python environments and the GPU frameworks in them; also returns each `--python` path
/// that gave no environment, and why.
pub fn probe(host: &dyn Host, opts: &Options, trace: &mut Trace) -> (Probed<Vec<PythonEnv>>, Vec<UnusedPython>) {
    let discover::Discovered { found: layouts, looked, unused } = discover::discover(host, opts, trace);
    if layouts.is_empty() {
        return (Probed::absent(format!("no Python interpreter found; looked in {}", looked.join(", "))), unused);
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
                companions: scan.companions,
                deep: None,
            }
        })
        .collect();
    if opts.deep {
        deep::run_all(host, &mut envs, opts, trace);
    }
    let source =
        if opts.deep { "discovery + site-packages metadata + probe.py" } else { "discovery + site-packages metadata" };
    (Probed::found(envs, source), unused)
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
