//! Choosing a framework build for this machine, from the knowledge base: the newest (or the same
//! release line) whose build runs on this driver, has machine code or PTX for every GPU here, and
//! supports the environment's Python and OS/CPU. Every candidate turned down keeps its reason.

mod candidates;
pub mod wheel;

use gpu_doctor_kb::{Coverage, DriverLevel, Kb, PyVersion, RuntimeVerdict, coverage, families};
use gpu_doctor_model::OsFamily;
use gpu_doctor_model::{ComputeCapability, CudaVersion, DriverVersion};
use gpu_doctor_probes::parse::wheel::normalize_name;
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
    /// The CUDA toolkits installed on the machine itself (not an environment's pip or conda
    /// packages): a CuPy build of a major none of them has gets its CUDA libraries from PyPI.
    pub toolkits: Vec<CudaVersion>,
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
    /// It would run here too; it lost to the chosen one (another line, an older release).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fits: bool,
}

impl Framework {
    /// The framework a distribution belongs to: `torch`, `jax` and its plugins, `tensorflow` and
    /// `tensorflow-cpu`, `cupy-cuda12x`.
    pub fn of_package(name: &str) -> Option<Self> {
        let name = normalize_name(name);
        match name.as_str() {
            "torch" => Some(Framework::Torch),
            "jax" | "jaxlib" => Some(Framework::Jax),
            "tensorflow" | "tensorflow-cpu" | "tensorflow-gpu" | "tensorflow-intel" => Some(Framework::Tensorflow),
            n if families::jax_plugin_cuda(n).is_some() => Some(Framework::Jax),
            n if n == "cupy" || families::is_cupy_cuda(n) => Some(Framework::Cupy),
            _ => None,
        }
    }
}

/// Chooses a build of `want.framework` for `machine`: among the knowledge base's builds, or among
/// the wheels of `want.wheelhouse` when given, by the same rules. Every candidate is either the
/// one chosen or in `rejected` with its reason.
pub fn choose(kb: &Kb, machine: &Machine, want: &Want) -> Choice {
    let lines = match &want.wheelhouse {
        Some(files) => candidates::from_wheelhouse(kb, want.framework, files),
        None => candidates::from_kb(kb, want.framework),
    };
    // Each rejection keeps its candidate's place (newest first) to be listed in that order.
    let mut rejected: Vec<(usize, Rejected)> = Vec::new();
    let mut fits: Vec<(usize, Build, Fit)> = Vec::new();
    let mut order = 0_usize..;
    // A line too old to offer a new environment is a candidate only for the environment that has it.
    let lines = lines.into_iter().filter(|l| !l.kept_only || want.keep_line.as_deref() == Some(l.label.as_str()));
    for line in lines {
        let (ok, turned): (Vec<_>, Vec<_>) = line
            .builds
            .into_iter()
            .map(|b| (judge(kb, machine, &b), b, order.next().unwrap_or_default()))
            .partition(|(r, _, _)| r.is_ok());
        // A whole line that has no wheel for this Python or platform is turned down once.
        let platform: Vec<String> = turned
            .iter()
            .filter_map(|(r, _, _)| match r {
                Err(Why::Platform(reason)) => Some(reason.clone()),
                _ => None,
            })
            .collect();
        if ok.is_empty() && !turned.is_empty() && platform.len() == turned.len() && all_same(&platform) {
            rejected
                .push((turned[0].2, Rejected { label: line.label.clone(), reason: platform[0].clone(), fits: false }));
        } else {
            for (r, b, i) in turned {
                if let Err(why) = r {
                    rejected.push((i, Rejected { label: b.label, reason: why.text(), fits: false }));
                }
            }
        }
        fits.extend(ok.into_iter().filter_map(|(r, b, i)| r.ok().map(|f| (i, b, f))));
    }
    // A fix of an existing environment stays on its installed line, then prefers a CUDA the
    // driver runs in full; a new environment (no line to keep) gets the newest release that runs,
    // minor-version compatibility included, and within it the best-supported build (issue 29).
    let rank = |(_, b, f): &(usize, Build, Fit)| {
        let keep = want.keep_line.as_deref().is_some_and(|l| b.line == l);
        let own_major = machine.driver_cuda.zip(b.cuda).is_some_and(|(d, c)| d.major == c.major);
        let version = PyVersion::new(&b.version).numbers();
        let newest = if want.keep_line.is_none() { version.clone() } else { Vec::new() };
        (keep, newest, f.full, f.sass_all(), own_major, version, b.cuda)
    };
    fits.sort_by_key(|c| std::cmp::Reverse(rank(c)));
    let mut fits = fits.into_iter();
    let chosen = fits.next();
    if let Some((_, best, best_fit)) = &chosen {
        for (i, b, f) in fits {
            let reason = passed_over(want, best, best_fit, &b, &f);
            rejected.push((i, Rejected { label: b.label, reason, fits: true }));
        }
    }
    rejected.sort_by_key(|(i, _)| *i);
    Choice {
        framework: want.framework.name().to_owned(),
        chosen: chosen.map(|(_, b, f)| b.into_candidate(machine, want, &f)),
        rejected: rejected.into_iter().map(|(_, r)| r).collect(),
    }
}

fn all_same(v: &[String]) -> bool {
    v.windows(2).all(|w| w[0] == w[1])
}

/// Why a build that fits was not the one chosen.
fn passed_over(want: &Want, best: &Build, best_fit: &Fit, b: &Build, f: &Fit) -> String {
    let kept = want.keep_line.as_deref().filter(|l| best.line == *l && b.line != *l);
    if let Some(line) = kept {
        format!("fits, but {} stays on the installed {line} line", best.label)
    } else if want.keep_line.is_none() && b.version != best.version {
        format!("fits, but {} is newer (a new environment gets the newest release that runs)", best.label)
    } else if best_fit.full && !f.full {
        format!("runs only through minor-version compatibility; {} runs on this driver in full", best.label)
    } else if best_fit.sass_all() && !f.sass_all() {
        format!("has only PTX for {}; {} has machine code for every GPU", f.ptx_only.join(", "), best.label)
    } else if b.version != best.version {
        format!("fits, but {} is newer", best.label)
    } else if best.cuda.map(|c| c.major) != b.cuda.map(|c| c.major) {
        format!("fits, but {} is built for the driver's own CUDA major", best.label)
    } else {
        format!("fits, but {} is built with a newer CUDA", best.label)
    }
}

/// A release line (or a wheelhouse version) and its builds.
#[derive(Debug, Clone)]
pub(crate) struct Line {
    /// `2.9`, `jax 0.7.2`: the label a whole-line rejection carries.
    pub label: String,
    /// Its builds.
    pub builds: Vec<Build>,
    /// Offered only to an environment that keeps this line (`Want::keep_line`), never to a new one.
    pub kept_only: bool,
}

/// One installable build, before it is judged.
#[derive(Debug, Clone)]
pub(crate) struct Build {
    /// As [`Candidate::label`].
    pub label: String,
    /// Its full version (`2.5.1`), for ordering.
    pub version: String,
    /// Its release line (`2.5`), for `keep_line`.
    pub line: String,
    /// The CUDA runtime it needs; `None`: not known.
    pub cuda: Option<CudaVersion>,
    /// A driver it needs beyond the CUDA rules (JAX's stated floor).
    pub driver_min: Option<DriverVersion>,
    /// The CUDA of the runtime wheels it installs from PyPI where that is newer than `cuda` (the
    /// `jax[cuda12]` and `tensorflow[and-cuda]` extras take the newest of the major): said in the
    /// why with how the driver runs it.
    pub wheels_cuda: Option<CudaVersion>,
    /// What it was compiled for.
    pub gpus: Gpus,
    /// Where it installs.
    pub wheels: Wheels,
    /// As [`Candidate::requirements`].
    pub requirements: Vec<String>,
    /// As [`Candidate::index_url`].
    pub index_url: Option<String>,
    /// The variant plain `pip install torch==VERSION` gives from PyPI on Linux x86_64 (`cu130`),
    /// from the knowledge base; `None` for builds that come from PyPI anyway (or a wheelhouse).
    pub pypi_linux: Option<String>,
    /// A CuPy package whose `ctk` extra brings the CUDA libraries it loads from PyPI.
    pub ctk: bool,
    /// As [`Candidate::beyond_kb`].
    pub beyond_kb: String,
    /// Said in the choice's why: companions not pinned, and the like.
    pub notes: Vec<String>,
}

/// What a build was compiled for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Gpus {
    /// Its architecture list: SASS and PTX capabilities.
    Arch { sass: Vec<ComputeCapability>, ptx: Vec<ComputeCapability> },
    /// Every capability at or above this one.
    MinCc(ComputeCapability),
    /// Every capability a CUDA toolkit of this range can build for (CuPy: what the CUDA range supports).
    CudaRange { min: CudaVersion, max: CudaVersion },
    /// Not known (a build newer than the knowledge base): assumed to cover every GPU, said as such.
    Unknown,
    /// A build without CUDA (`+cpu`, ROCm): never chosen, for this reason.
    NoCuda(String),
}

/// Where a build installs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Wheels {
    /// The knowledge base's Python range and the (OS, CPU) pairs it has wheels for.
    Kb { python: Option<((u32, u32), (u32, u32))>, platforms: Vec<(OsFamily, &'static str)> },
    /// The wheel files of a wheelhouse.
    Files(Vec<wheel::WheelName>),
}

/// How a build fits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fit {
    /// The driver supports its CUDA in full (not only through minor-version compatibility).
    pub full: bool,
    /// The GPUs covered only by PTX (`sm_120`).
    pub ptx_only: Vec<String>,
    /// Each GPU and how it is covered, for the why: `sm_89 (sm_86 machine code)`.
    pub per_gpu: Vec<String>,
    /// The driver part of the why.
    pub driver: String,
}

impl Fit {
    /// Machine code for every GPU (not only PTX).
    fn sass_all(&self) -> bool {
        self.ptx_only.is_empty()
    }
}

/// Why a build does not fit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Why {
    /// No wheel for this Python or OS/CPU.
    Platform(String),
    /// Anything else: a GPU not covered, a driver too old.
    Other(String),
}

impl Why {
    fn text(self) -> String {
        match self {
            Why::Platform(s) | Why::Other(s) => s,
        }
    }
}

/// `3.12` → (3, 12); `3.10.12` → (3, 10).
pub fn python_version(text: &str) -> Option<(u32, u32)> {
    let mut parts = text.trim().split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.trim_end_matches(|c: char| !c.is_ascii_digit()).parse().ok()?;
    Some((major, minor))
}

fn os_name(os: OsFamily) -> &'static str {
    match os {
        OsFamily::Linux => "Linux",
        OsFamily::Windows => "Windows",
        OsFamily::Macos => "macOS",
        OsFamily::Other | OsFamily::Unknown => "this OS",
    }
}

/// Python and OS/CPU: `Err` with the reason when no wheel installs here.
fn judge_wheels(machine: &Machine, wheels: &Wheels) -> Result<(), Why> {
    let cpu = wheel::normalize_cpu(&machine.cpu);
    let py = machine.python.map(|(a, b)| format!("Python {a}.{b}"));
    match wheels {
        Wheels::Kb { python, platforms } => {
            // An unknown OS (pasted text) does not turn a build down.
            if machine.os != OsFamily::Unknown && !platforms.iter().any(|(os, c)| *os == machine.os && *c == cpu) {
                return Err(Why::Platform(format!("no GPU wheel for {} {cpu}", os_name(machine.os))));
            }
            if let (Some((lo, hi)), Some(p)) = (python, machine.python)
                && !(*lo <= p && p <= *hi)
            {
                let py = py.unwrap_or_default();
                return Err(Why::Platform(format!(
                    "no wheel for {py} (it supports {}.{} to {}.{})",
                    lo.0, lo.1, hi.0, hi.1
                )));
            }
            Ok(())
        }
        Wheels::Files(files) => {
            let os_ok = machine.os == OsFamily::Unknown || files.iter().any(|f| f.fits_platform(machine.os, cpu));
            if !os_ok {
                return Err(Why::Platform(format!("no wheel for {} {cpu} here", os_name(machine.os))));
            }
            let both = files.iter().any(|f| {
                f.fits_python(machine.python) && (machine.os == OsFamily::Unknown || f.fits_platform(machine.os, cpu))
            });
            if both { Ok(()) } else { Err(Why::Platform(format!("no wheel for {} here", py.unwrap_or_default()))) }
        }
    }
}

/// Judges one build: its wheels, then every GPU, then the driver.
fn judge(kb: &Kb, machine: &Machine, b: &Build) -> Result<Fit, Why> {
    judge_wheels(machine, &b.wheels)?;
    let mut fit = judge_gpus(kb, machine, &b.gpus)?;
    let driver = machine.driver_version.as_deref().and_then(|v| v.parse::<DriverVersion>().ok());
    let have = match (&driver, machine.driver_cuda) {
        (Some(d), _) => format!("driver {}", d.major()),
        (None, Some(c)) => format!("a driver for CUDA {c}"),
        (None, None) => String::new(),
    };
    if let (Some(min), Some(d)) = (&b.driver_min, &driver)
        && d < min
    {
        return Err(Why::Other(short_driver(d, min)));
    }
    let Some(cuda) = b.cuda else {
        fit.full = true;
        fit.driver = "its CUDA level is not known, so the driver could not be checked".into();
        return Ok(fit);
    };
    let level = DriverLevel { version: driver.clone(), cuda: machine.driver_cuda, evidence: None };
    let mut mvc = false;
    match kb.cuda.judge(cuda, &level, machine.os) {
        RuntimeVerdict::Supported => {
            fit.full = true;
            fit.driver = if b.wheels_cuda.is_some_and(|w| w.major_minor() != cuda.major_minor()) {
                format!("{have} runs its CUDA floor, {cuda}, in full")
            } else {
                format!("{have} runs CUDA {cuda} in full")
            };
        }
        RuntimeVerdict::Unknown => {
            fit.full = true;
            let need = kb.cuda.full_driver(cuda, machine.os).map_or_else(String::new, |d| format!(" ({d} or newer)"));
            fit.driver = if machine.gpus.is_empty() {
                // Issue 29: a machine without a GPU got a cu132 build with no word on why.
                format!(
                    "no NVIDIA GPU or driver is seen here, so nothing rules a build out and the newest is chosen: \
                     a machine that runs it on a GPU needs a driver for CUDA {cuda}{need}"
                )
            } else {
                format!("the driver is not known: CUDA {cuda} needs a driver for CUDA {cuda}{need}")
            };
        }
        RuntimeVerdict::MinorVersionCompatible { .. } if !fit.ptx_only.is_empty() => {
            return Err(Why::Other(format!(
                "{} only as PTX built by CUDA {cuda}, which {have} cannot compile (minor-version compatibility)",
                fit.ptx_only.join(", ")
            )));
        }
        RuntimeVerdict::MinorVersionCompatible { .. } => {
            mvc = true;
            fit.driver = format!("{have} runs CUDA {cuda} through minor-version compatibility");
        }
        RuntimeVerdict::TooOld { floor, full } => {
            let need = floor.or(full);
            return Err(Why::Other(match (&driver, need) {
                (Some(d), Some(n)) => short_driver(d, &n),
                (None, Some(n)) => format!("{have} < {} (CUDA {cuda})", n.major()),
                (_, None) => format!("{have} does not run CUDA {cuda}"),
            }));
        }
    }
    if let Some(wheels) = b.wheels_cuda.filter(|w| w.major_minor() != cuda.major_minor()) {
        let how = match kb.cuda.judge(wheels, &level, machine.os) {
            RuntimeVerdict::Supported => format!("which {have} runs in full"),
            RuntimeVerdict::MinorVersionCompatible { .. } => {
                // What runs is the wheels' CUDA: not in full, whatever the build's own floor.
                mvc = true;
                fit.full = false;
                format!("which {have} runs through minor-version compatibility")
            }
            RuntimeVerdict::Unknown => format!("which needs a driver for CUDA {wheels} to run in full"),
            RuntimeVerdict::TooOld { .. } => format!("which {have} does not run"),
        };
        fit.driver.push_str(&format!(
            "; the CUDA wheels it installs from PyPI are CUDA {wheels} (the newest CUDA {}.x its requirements \
             allow, as of gpu-doctor's knowledge base), {how}",
            wheels.major
        ));
    }
    if mvc {
        fit.driver.push_str(&format!("; {}", mvc_limits(kb, b.wheels_cuda.unwrap_or(cuda).max(cuda), machine.os)));
    }
    Ok(fit)
}

/// What minor-version compatibility does not do, said wherever a choice relies on it. Source:
/// NVIDIA's CUDA Compatibility guide, "Minor Version Compatibility"
/// (https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html): a newer
/// toolkit of the same major runs on an older driver "with limited feature-set"; PTX built by the
/// newer toolkit cannot be JIT-compiled by the older driver.
fn mvc_limits(kb: &Kb, cuda: CudaVersion, os: OsFamily) -> String {
    let full = kb.cuda.full_driver(cuda, os).map_or_else(String::new, |d| format!(" ({d} or newer)"));
    format!(
        "minor-version compatibility runs the machine code of a newer CUDA {major}.x with a limited feature set: the \
         driver cannot JIT-compile PTX built by the newer toolkit, so code that compiles PTX at run time (NVRTC, \
         some torch.compile or XLA kernels) may fail or fall back; a driver for CUDA {cuda}{full} runs it in full",
        major = cuda.major
    )
}

/// `driver 550 < 580`, or the full versions when the branches are the same.
fn short_driver(have: &DriverVersion, need: &DriverVersion) -> String {
    if have.major() == need.major() {
        format!("driver {have} < {need}")
    } else {
        format!("driver {} < {}", have.major(), need.major())
    }
}

/// Every GPU must have machine code or PTX in the build.
fn judge_gpus(kb: &Kb, machine: &Machine, gpus: &Gpus) -> Result<Fit, Why> {
    let mut fit = Fit { full: false, ptx_only: Vec::new(), per_gpu: Vec::new(), driver: String::new() };
    if let Gpus::NoCuda(why) = gpus {
        return Err(Why::Other(why.clone()));
    }
    let mut missing = Vec::new();
    let mut ccs = machine.gpus.clone();
    ccs.sort();
    ccs.dedup();
    for cc in ccs {
        match gpus {
            Gpus::Arch { sass, ptx } => match coverage(sass, ptx, cc) {
                Coverage::Sass(c) if c == cc => fit.per_gpu.push(format!("{} (machine code)", cc.sm())),
                Coverage::Sass(c) => fit.per_gpu.push(format!("{} ({} machine code)", cc.sm(), c.sm())),
                Coverage::Ptx(c) => {
                    fit.ptx_only.push(cc.sm());
                    fit.per_gpu.push(format!("{} (compute_{}{} PTX only)", cc.sm(), c.major, c.minor));
                }
                Coverage::None => missing.push(cc.sm()),
            },
            Gpus::MinCc(min) if cc < *min => {
                return Err(Why::Other(format!("needs compute capability {min} or newer; {} is older", cc.sm())));
            }
            Gpus::MinCc(min) => fit.per_gpu.push(format!("{} (≥ {min})", cc.sm())),
            Gpus::CudaRange { min, max } => {
                let row = kb.gpus.row(cc);
                let too_new = row.is_some_and(|r| r.first_toolkit.major_minor() > max.major_minor());
                let dropped = row.and_then(|r| r.last_toolkit).is_some_and(|last| last.major_minor() < *min);
                if too_new || dropped {
                    missing.push(cc.sm());
                } else {
                    fit.per_gpu.push(format!("{} (CUDA {}.x supports it)", cc.sm(), min.major));
                }
            }
            Gpus::Unknown | Gpus::NoCuda(_) => fit.per_gpu.push(format!("{} (assumed)", cc.sm())),
        }
    }
    if missing.is_empty() { Ok(fit) } else { Err(Why::Other(format!("no {}", missing.join(", ")))) }
}

impl Build {
    fn into_candidate(self, machine: &Machine, want: &Want, fit: &Fit) -> Candidate {
        let mut why = vec![];
        if !fit.per_gpu.is_empty() {
            why.push(format!("covers {}", fit.per_gpu.join(", ")));
        }
        if !fit.driver.is_empty() {
            why.push(fit.driver.clone());
        }
        if let Some((a, b)) = machine.python {
            why.push(format!("has a wheel for Python {a}.{b}"));
        }
        if want.keep_line.as_deref() == Some(self.line.as_str()) {
            why.push(format!("stays on the installed {} line", self.line));
        }
        why.extend(self.notes);
        let (requirements, index_url) = match (self.pypi_linux, self.cuda) {
            (Some(default), Some(cuda)) => {
                let (requirements, index_url, said) =
                    torch_source(machine, &default, cuda, self.requirements, self.index_url, &self.version);
                why.push(said);
                (requirements, index_url)
            }
            _ => (self.requirements, self.index_url),
        };
        let requirements = match self.cuda.filter(|_| want.framework == Framework::Cupy) {
            Some(cuda) => {
                let (requirements, said) = cupy_libraries(machine, cuda, self.ctk, requirements);
                why.push(said);
                requirements
            }
            None => requirements,
        };
        Candidate {
            label: self.label,
            requirements,
            index_url,
            why: format!("{}.", why.join("; ")),
            beyond_kb: self.beyond_kb,
        }
    }
}

/// Where a torch build of the knowledge base installs from: PyPI (the requirements without their
/// `+cuXYZ` label, no `--index-url`, so the user's own index or mirror from pip's or uv's
/// configuration applies) when PyPI serves that very build here, which is on Linux x86_64 for the
/// line's PyPI-default variant `default`; else PyTorch's index, which alone has the other variants.
/// Returns the requirements, the index and the sentence that says which and why.
fn torch_source(
    machine: &Machine,
    default: &str,
    cuda: CudaVersion,
    requirements: Vec<String>,
    index_url: Option<String>,
    version: &str,
) -> (Vec<String>, Option<String>, String) {
    let tag = gpu_doctor_kb::index_tag(cuda);
    let linux_x86 = machine.os == OsFamily::Linux && wheel::normalize_cpu(&machine.cpu) == "x86_64";
    let index = index_url.as_deref().unwrap_or("PyTorch's index");
    if linux_x86 && tag == default {
        let suffix = format!("+{tag}");
        let plain = requirements.iter().map(|r| r.strip_suffix(&suffix).unwrap_or(r).to_owned()).collect();
        let said = format!(
            "PyPI serves this very build (torch {version} from PyPI is {tag} on Linux x86_64), so it installs from \
             PyPI or the index your pip or uv configuration names, not from {index}"
        );
        return (plain, None, said);
    }
    let pypi = match machine.os {
        OsFamily::Linux if linux_x86 => format!("PyPI serves only {default} of torch {version}"),
        OsFamily::Unknown => {
            format!("the OS is not known; PyPI serves {default} of torch {version} on Linux x86_64 only")
        }
        _ => "PyPI's torch wheels for this platform are CPU-only builds".to_owned(),
    };
    let said = format!("only {index} has the {tag} build ({pypi}), so it installs from there");
    (requirements, index_url, said)
}

/// The CuPy requirements for `machine`: with the `ctk` extra (the CUDA libraries CuPy loads, from
/// PyPI) where the machine has no CUDA toolkit of the build's major, as CuPy's wheels otherwise
/// load cuBLAS and the rest from a local toolkit; and the sentence that says which.
fn cupy_libraries(machine: &Machine, cuda: CudaVersion, ctk: bool, requirements: Vec<String>) -> (Vec<String>, String) {
    let major = cuda.major;
    if let Some(local) = machine.toolkits.iter().filter(|t| t.major == major).max() {
        return (requirements, format!("it loads the CUDA libraries of the CUDA {local} toolkit installed here"));
    }
    if !ctk {
        let said = format!(
            "this machine has no CUDA {major} toolkit and this CuPy package has no ctk extra: install a CUDA {major}.x \
             toolkit, or CuPy cannot load cuBLAS and the other CUDA libraries"
        );
        return (requirements, said);
    }
    let with_extra = requirements
        .into_iter()
        .map(|r| match r.split_once("==") {
            Some((name, version)) if families::is_cupy_cuda(name) => format!("{name}[ctk]=={version}"),
            _ => r,
        })
        .collect();
    let said = format!(
        "this machine has no CUDA {major} toolkit, so the ctk extra installs the CUDA libraries CuPy loads (cuBLAS, \
         cuFFT, cuRAND, cuSOLVER, cuSPARSE, NVRTC, the runtime) from PyPI: the newest CUDA {major}.x wheels \
         (cuda-toolkit=={major}.*)"
    );
    (with_extra, said)
}
