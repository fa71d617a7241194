//! Verify: the GPU smoke test (`assets/python/probe.py --smoke`) run in an environment's
//! interpreter, and what it proved, said honestly.
//!
//! The script is the deep probe's, shipped inside the binary and handed to `python -I -` on standard
//! input; the interpreter runs through `gpu_doctor_probes::host` (no shell, a time limit, its own
//! process group). What the frameworks say of themselves comes back in the deep probe's schema
//! ([`DeepFacts`]); the products computed on each device come beside it. Its one JSON object is
//! parsed into [`SmokeReport`]; output that is not that object is an error of the run, never a panic.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use gpu_doctor_kb::families;
use gpu_doctor_model::DeepFacts;
use gpu_doctor_probes::host::{Cmd, Host, SystemHost};
use gpu_doctor_probes::probe::python::PROBE_SCRIPT;
use serde::{Deserialize, Serialize};

/// What one run of the smoke test found, or why it did not run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verified {
    /// The interpreter it ran in.
    pub python: PathBuf,
    /// The frameworks asked for (module names).
    pub frameworks: Vec<String>,
    /// What the script reported; `Err` when it did not run or its output was not its JSON.
    pub outcome: Result<SmokeReport, String>,
}

/// The script's JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmokeReport {
    /// `SMOKE_VERSION` of the script.
    pub smoke_version: u32,
    /// The interpreter's version.
    pub python: String,
    /// What the frameworks asked for said of themselves, as the deep probe reports it.
    pub facts: DeepFacts,
    /// The products computed, per framework asked for (module name).
    pub checks: BTreeMap<String, FrameworkSmoke>,
}

/// One framework's products.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameworkSmoke {
    /// An error after importing, before or instead of the products (an unknown framework).
    pub error: Option<String>,
    /// Why no GPU is visible to it (`CUDA not available`); `None` when one is.
    pub no_gpu: Option<String>,
    /// Its matrix product on the CPU; `None` where it has no CPU path (CuPy) or did not get there.
    pub cpu: Option<Check>,
    /// Its matrix product on each visible GPU.
    #[serde(default)]
    pub gpus: Vec<GpuCheck>,
}

/// A product compared with the one computed in Python.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// Within the tolerance.
    pub ok: bool,
    /// The largest difference, relative to the largest entry.
    pub max_error: Option<f64>,
    /// What went wrong.
    pub error: Option<String>,
}

/// The product on one GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuCheck {
    /// The framework's device index.
    pub index: u32,
    /// The device name.
    pub name: Option<String>,
    /// Its compute capability (`8.9`).
    pub capability: Option<String>,
    /// The comparison.
    #[serde(flatten)]
    pub check: Check,
}

/// The frameworks the smoke test computes with: the keys of `PRODUCTS` in `assets/python/probe.py`.
/// Other modules (ONNX Runtime's) get "does not know this framework" from it.
pub const SMOKE_TESTED: [&str; 4] = ["torch", "jax", "tensorflow", "cupy"];

/// The modules `frameworks` (package or module names) import as, each once, in the order first
/// named: an environment lists `jax`, `jaxlib`, `jax-cuda13-plugin` and `jax-cuda13-pjrt`, all `jax`.
pub fn modules_of(frameworks: &[String]) -> Vec<String> {
    let mut modules: Vec<String> = Vec::new();
    for module in frameworks.iter().map(|f| module_of(f)) {
        if !modules.contains(&module) {
            modules.push(module);
        }
    }
    modules
}

/// The module a framework package imports as: `cupy-cuda12x` → `cupy`, `jax[cuda12]`, `jaxlib` and
/// `jax-cuda12-plugin` → `jax`, `tensorflow[and-cuda]` and `tf-nightly` → `tensorflow`; the name
/// itself otherwise. The families are the knowledge base's ([`families`]).
pub fn module_of(package: &str) -> String {
    let base = package.split(['[', '=', '<', '>', ' ']).next().unwrap_or(package).trim().to_ascii_lowercase();
    let name = base.replace(['_', '.'], "-");
    let module = if families::is_tensorflow(&name) {
        "tensorflow"
    } else if families::is_cupy(&name) {
        "cupy"
    } else if name == "jax" || name == "jaxlib" || families::jax_plugin_cuda(&name).is_some() {
        "jax"
    } else {
        return base;
    };
    module.to_owned()
}

/// Runs the smoke test of `frameworks` (package or module names) with interpreter `python`,
/// killed after `timeout`.
pub fn run(python: &Path, frameworks: &[String], timeout: Duration) -> Verified {
    run_on(&SystemHost::new(), python, frameworks, timeout)
}

/// [`run`] through any host.
pub fn run_on(host: &dyn Host, python: &Path, frameworks: &[String], timeout: Duration) -> Verified {
    let modules = modules_of(frameworks);
    let mut argv = vec![python.display().to_string(), "-I".to_owned(), "-".to_owned(), "--smoke".to_owned()];
    argv.extend(modules.iter().cloned());
    let cmd = Cmd::new(argv).stdin(PROBE_SCRIPT).timeout(timeout);
    let outcome = match host.run(&cmd) {
        Err(e) => Err(format!("{} did not run: {e}", python.display())),
        Ok(out) => parse(&out.stdout).map_err(|e| {
            let status = out.status.map_or_else(|| "killed".to_owned(), |s| format!("exit status {s}"));
            let tail: String = last_line(&out.stderr).chars().take(300).collect();
            let tail = if tail.is_empty() { String::new() } else { format!("; it said: {tail}") };
            format!("the smoke test gave no result ({e}; {status}){tail}")
        }),
    };
    Verified { python: python.to_path_buf(), frameworks: modules, outcome }
}

fn last_line(text: &str) -> &str {
    text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim()
}

/// The script's JSON from its standard output (its last line that is not empty).
pub fn parse(stdout: &str) -> Result<SmokeReport, String> {
    let line = last_line(stdout);
    if line.is_empty() {
        return Err("no output".into());
    }
    serde_json::from_str(line).map_err(|e| format!("not the smoke test's JSON: {e}"))
}

impl FrameworkSmoke {
    /// True when it ran on at least one GPU and every GPU's product was right.
    pub fn proved(&self) -> bool {
        !self.gpus.is_empty() && self.gpus.iter().all(|g| g.check.ok)
    }
}

impl SmokeReport {
    /// The version framework `module` reported, and why it did not import (from the facts).
    pub fn import_of(&self, module: &str) -> (Option<&str>, Option<&str>) {
        self.facts.import_of(module).unwrap_or((None, None))
    }
}

impl Verified {
    /// True when every framework asked for computed correctly on a GPU.
    pub fn proved(&self) -> bool {
        self.outcome.as_ref().is_ok_and(|r| {
            !self.frameworks.is_empty() && self.frameworks.iter().all(|f| r.checks.get(f).is_some_and(|s| s.proved()))
        })
    }

    /// One paragraph: what was proven on which GPU, and where GPU use could not be proven, why not
    /// and what was checked instead.
    pub fn summary(&self) -> String {
        let report = match &self.outcome {
            Ok(r) => r,
            Err(e) => return format!("GPU use could not be proven: {e}"),
        };
        let (mut proven, mut not, mut checked) = (Vec::new(), Vec::new(), Vec::new());
        for name in &self.frameworks {
            let Some(s) = report.checks.get(name) else {
                not.push(format!("{name} gave no result"));
                continue;
            };
            let (version, import_error) = report.import_of(name);
            if let Some(e) = import_error {
                not.push(format!("{name} does not import ({e})"));
                continue;
            }
            let label = version.map_or_else(|| name.clone(), |v| format!("{name} {v}"));
            if let Some(e) = &s.error {
                not.push(format!("{label} failed ({e})"));
            }
            for g in &s.gpus {
                let gpu = gpu_label(g);
                match (&g.check.ok, &g.check.error) {
                    (true, _) => proven.push(format!("{label} on {gpu}")),
                    (false, e) => not.push(format!(
                        "{label} on {gpu} gave a wrong or no result ({})",
                        e.as_deref().unwrap_or("no reason given")
                    )),
                }
            }
            if s.gpus.is_empty() && s.error.is_none() {
                let why = s.no_gpu.as_deref().unwrap_or("none found");
                not.push(format!("no GPU visible to {name} ({why})"));
            }
            checked.push(match &s.cpu {
                Some(c) if c.ok => format!("{label} imports, CPU matmul ok"),
                Some(c) => {
                    format!("{label} imports, CPU matmul failed ({})", c.error.as_deref().unwrap_or("wrong result"))
                }
                None => format!("{label} imports"),
            });
        }
        let mut text = String::new();
        if !proven.is_empty() {
            text.push_str(&format!("GPU use proven: {} (matrix product matches the CPU's)", proven.join(", ")));
        }
        if !not.is_empty() {
            if !text.is_empty() {
                text.push_str(". ");
            }
            let here = if proven.is_empty() { " here" } else { " for the rest" };
            text.push_str(&format!("GPU use could not be proven{here}: {}", not.join(", ")));
            if !checked.is_empty() {
                text.push_str(&format!("; checked: {}", checked.join(", ")));
            }
        }
        if text.is_empty() {
            text.push_str("GPU use could not be proven here: no framework was checked");
        }
        text
    }
}

fn gpu_label(g: &GpuCheck) -> String {
    let name = g.name.clone().unwrap_or_else(|| format!("GPU {}", g.index));
    match &g.capability {
        Some(cc) => format!("GPU {} {name} ({cc})", g.index),
        None => format!("GPU {} {name}", g.index),
    }
}

#[cfg(test)]
mod tests;
