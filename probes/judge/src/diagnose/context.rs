//! What the rules read, gathered once: the OS, the GPUs with their capability, the driver level,
//! the frameworks of every environment.

use std::cell::RefCell;

use gpu_doctor_kb::{DriverLevel, Kb};
use gpu_doctor_model::LoaderEntry;
use gpu_doctor_model::shell::Shell;
use gpu_doctor_model::{Category, ComputeCapability, CudaVersion, Finding, Probed, Snapshot};
use gpu_doctor_model::{CudnnCopy, Framework, Gpu, OsFamily, Package, PythonEnv};

/// A GPU with its compute capability, from the driver or looked up by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuView {
    /// The driver's index.
    pub index: u32,
    /// Product name, or `GPU <index>`.
    pub name: String,
    /// Its compute capability, when known.
    pub cc: Option<ComputeCapability>,
    /// True when `cc` came from the knowledge base's product table, not the machine.
    pub cc_by_name: bool,
}

impl GpuView {
    /// `NVIDIA GeForce RTX 4090 (GPU 0, compute capability 8.9)`.
    pub fn describe(&self) -> String {
        match self.cc {
            Some(cc) if self.cc_by_name => {
                format!("{} (GPU {}, compute capability {cc} by its name)", self.name, self.index)
            }
            Some(cc) => format!("{} (GPU {}, compute capability {cc})", self.name, self.index),
            None => format!("{} (GPU {}, compute capability unknown)", self.name, self.index),
        }
    }
}

/// Everything a rule reads.
#[derive(Debug)]
pub(crate) struct Ctx<'a> {
    /// The snapshot.
    pub s: &'a Snapshot,
    /// The knowledge base.
    pub kb: &'a Kb,
    /// The OS family (`Unknown` for pasted text that did not say).
    pub os: OsFamily,
    /// GPUs the driver sees.
    pub gpus: Vec<GpuView>,
    /// The driver.
    pub driver: DriverLevel,
    /// The shell fixes are written for: PowerShell on Windows, POSIX sh elsewhere.
    pub shell: Shell,
    /// Every command and path the fixes so far show.
    pub shown: RefCell<Vec<Shown>>,
}

impl<'a> Ctx<'a> {
    /// Gathers the facts rules share.
    pub fn new(s: &'a Snapshot, kb: &'a Kb) -> Self {
        let gpus = gpu_views(s, kb);
        let driver = driver_level(s);
        let os = s.platform.platform.os;
        Self { s, kb, os, gpus, driver, shell: Shell::for_os(os), shown: RefCell::new(Vec::new()) }
    }

    /// The newest CUDA the driver runs: as the driver or a message says it, else from its version
    /// by the knowledge base's release table; `None` when neither is known.
    pub fn driver_cuda(&self) -> Option<CudaVersion> {
        self.driver.cuda.or_else(|| self.kb.cuda.max_cuda_for_driver(self.driver.version.as_ref()?, self.os))
    }

    /// True when a rule already found the driver too old for a framework here (an error of that
    /// category): a symptom of it needs no second cause.
    pub fn driver_too_old_found(out: &[Finding]) -> bool {
        out.iter()
            .any(|f| f.category == Category::DriverTooOldForRuntime && f.severity == gpu_doctor_model::Severity::Error)
    }

    /// Capabilities of the GPUs whose capability is known, without repeats.
    pub fn capabilities(&self) -> Vec<ComputeCapability> {
        let mut ccs: Vec<ComputeCapability> = self.gpus.iter().filter_map(|g| g.cc).collect();
        ccs.sort();
        ccs.dedup();
        ccs
    }

    /// True when an NVIDIA GPU is known to be in the machine: the driver sees one, or one is on the PCI bus.
    pub fn has_nvidia_gpu(&self) -> bool {
        !self.gpus.is_empty() || self.s.pci_devices.value().is_some_and(|d| !d.is_empty())
    }

    /// True when an NVIDIA GPU is known to be in the machine, or the text did not list the GPUs at all
    /// (pasted text): a rule about a build that cannot use one then still speaks.
    pub fn gpu_or_no_list(&self) -> bool {
        self.has_nvidia_gpu() || matches!(self.s.gpus, Probed::Unknown { .. })
    }

    /// Python environments, empty when unknown or absent.
    pub fn envs(&self) -> &'a [PythonEnv] {
        self.s.python_envs.value().map(Vec::as_slice).unwrap_or_default()
    }

    /// Every framework of every environment, with its environment.
    pub fn frameworks(&self) -> impl Iterator<Item = (&'a PythonEnv, &'a Framework)> {
        self.envs().iter().flat_map(|e| e.frameworks.iter().map(move |f| (e, f)))
    }

    /// True when a program listed GPUs (the driver, a framework, lspci), not only a person's words
    /// naming one (an issue form's answer, a sentence): those say the machine has the GPU, not that
    /// the driver, a WSL guest or a container sees it.
    pub fn gpus_listed_by_a_program(&self) -> bool {
        match &self.s.gpus {
            Probed::Found { value, source } => !value.is_empty() && !gpu_doctor_model::gpus_only_in_words(source),
            _ => false,
        }
    }

    /// The GPUs as the driver reported them, when the list is known.
    pub fn raw_gpus(&self) -> Option<&'a [Gpu]> {
        self.s.gpus.value().map(Vec::as_slice)
    }

    /// The CUDA libraries in the loader cache, when `ldconfig -p` is known to have answered; `None` when
    /// the toolkits part was not found or ldconfig did not run (an empty list alone does not tell which;
    /// a list with entries does, also in snapshots written before `loader_cache_read` existed).
    pub fn loader_cache(&self) -> Option<&'a [LoaderEntry]> {
        let t = self.s.toolkits.value()?;
        (t.loader_cache_read || !t.loader_libraries.is_empty()).then_some(t.loader_libraries.as_slice())
    }

    /// For a snapshot of another machine, appends to a finding's detail the parts its category depends on
    /// that the pasted text did not show.
    pub fn note_unseen(&self, f: &mut Finding) {
        if self.s.origin.is_this_machine() {
            return;
        }
        let unseen: Vec<&str> =
            parts_for(f.category).iter().filter(|(_, unknown)| unknown(self.s)).map(|(name, _)| *name).collect();
        if !unseen.is_empty() {
            f.detail.push_str(&format!(" Not in the pasted text, so not checked: {}.", unseen.join(", ")));
        }
    }
}

impl Ctx<'_> {
    /// For a snapshot of another machine, says that the paths in a fix's commands are that machine's.
    pub fn note_foreign_paths(&self, f: &mut Finding) {
        if self.s.origin.is_this_machine() {
            return;
        }
        let Some(fix) = f.fix.as_mut() else { return };
        // A machine text that is no path (a variable's value, a package name) needs no warning.
        let path = |t: &str| t.contains('/') || t.contains('\\');
        if self.shown.borrow().iter().any(|s| s.machine && path(&s.text) && fix.contains(&s.text)) {
            fix.push_str(
                "   (The paths in this fix come from another machine, read from pasted text: check them before \
                 running anything.)",
            );
        }
    }
}

type PartCheck = (&'static str, fn(&Snapshot) -> bool);

fn unknown<T>(p: &Probed<T>) -> bool {
    matches!(p, Probed::Unknown { .. })
}

/// The parts of a snapshot each category's rules read.
fn parts_for(category: Category) -> &'static [PartCheck] {
    const DRIVER: PartCheck = ("the driver version", |s| unknown(&s.driver));
    const GPUS: PartCheck = ("the GPUs", |s| unknown(&s.gpus));
    const PYTHON: PartCheck = ("the Python packages", |s| unknown(&s.python_envs));
    const TOOLKITS: PartCheck = ("the CUDA toolkits", |s| unknown(&s.toolkits));
    const CUDNN: PartCheck = ("the cuDNN copies", |s| unknown(&s.cudnn));
    const MODULE: PartCheck = ("the kernel module", |s| unknown(&s.kernel_module));
    const PCI: PartCheck = ("the PCI devices", |s| unknown(&s.pci_devices));
    const LINKS: PartCheck = ("the host links", |s| unknown(&s.links));
    match category {
        Category::DriverTooOldForRuntime => &[DRIVER, PYTHON],
        Category::ArchNotInBuild => &[GPUS, PYTHON],
        Category::CpuOnlyBuild => &[GPUS, PYTHON],
        Category::CudnnMissingOrMismatch => &[CUDNN, PYTHON],
        Category::ToolkitVsFrameworkMismatchHarmless | Category::MultipleToolkitsConflict => &[TOOLKITS, PYTHON],
        Category::EnvVarMisconfig => &[GPUS],
        Category::NoDriverOrGpuNotVisible => &[DRIVER, MODULE, PCI],
        Category::WslSpecific => &[DRIVER, TOOLKITS],
        Category::PcieLinkDegraded => &[GPUS, LINKS],
        Category::Benchmark | Category::Other => &[],
    }
}

/// The snapshot's GPUs as the rules see them: each with its capability, from the driver or else by
/// product name; empty when the GPU list is not known.
pub fn gpu_views(s: &Snapshot, kb: &Kb) -> Vec<GpuView> {
    s.gpus.value().map(|g| g.iter().map(|g| gpu_view(g, kb)).collect()).unwrap_or_default()
}

/// One GPU as the rules see it: its capability from the driver, or else by product name.
pub fn gpu_view(g: &Gpu, kb: &Kb) -> GpuView {
    let name = g.name.clone().unwrap_or_else(|| format!("GPU {}", g.index));
    let by_name = || g.name.as_deref().and_then(|n| kb.gpus.cc_for_name(n));
    let (cc, cc_by_name) = match g.compute_capability {
        Some(cc) => (Some(cc), false),
        None => (by_name(), true),
    };
    GpuView { index: g.index, name, cc, cc_by_name: cc_by_name && cc.is_some() }
}

fn driver_level(s: &Snapshot) -> DriverLevel {
    if let Some(d) = s.driver.value() {
        let level = d.cuda_version.map_or_else(String::new, |c| format!(", which supports CUDA up to {c}"));
        let source = s.driver.source().unwrap_or_default();
        let evidence = Some(format!("NVIDIA driver {}{level} (from {source})", d.version));
        return DriverLevel { version: Some(d.version.clone()), cuda: d.cuda_version, evidence };
    }
    // A message that carries the driver's CUDA level, in whichever spelling its emitter prints it:
    // the CUDA API's integer (PyTorch's "found version 12080", `found_version`; ggml's "Insufficient
    // CUDA driver: 11040", `driver_cuda_int`) or a dotted version (Triton's "The NVIDIA driver's CUDA
    // version is 12.2", CuPy's and nvidia-docker's `driver_cuda`).
    for m in &s.messages {
        let int = ["found_version", "driver_cuda_int"]
            .iter()
            .find_map(|name| m.values.get(*name)?.parse::<i32>().ok())
            .and_then(CudaVersion::from_api_int);
        let Some(cuda) = int.or_else(|| m.values.get("driver_cuda")?.parse::<CudaVersion>().ok()) else { continue };
        return DriverLevel {
            version: None,
            cuda: Some(cuda),
            evidence: Some(format!("the driver supports CUDA up to {cuda}, as this line says: {}", m.line)),
        };
    }
    // CuPy's own answer (`driverGetVersion()`, which `cupy.show_config()` prints as `CUDA Driver Version`).
    let envs = s.python_envs.value().map(Vec::as_slice).unwrap_or_default();
    let cupy = envs.iter().filter_map(|e| e.deep.as_ref()?.value()?.cupy.as_ref()).find_map(|c| {
        let int = c.driver_version?;
        Some((CudaVersion::from_api_int(int)?, int))
    });
    if let Some((cuda, int)) = cupy {
        return DriverLevel {
            version: None,
            cuda: Some(cuda),
            evidence: Some(format!("the driver supports CUDA up to {cuda}, as CuPy's driverGetVersion() says ({int})")),
        };
    }
    // Last, nvidia-smi's level as a person quotes it ("nvidia-smi shows CUDA Version 12.2").
    if let Some((cuda, line)) = &s.stated_driver_cuda {
        return DriverLevel {
            version: None,
            cuda: Some(*cuda),
            evidence: Some(format!("the driver supports CUDA up to {cuda}, as the text quotes nvidia-smi: {line}")),
        };
    }
    DriverLevel::default()
}

/// A framework's CUDA build version: `12.4`, or `12.0` standing for a build that names only its major
/// (`cupy-cuda12x`), with `true` in that case.
pub(crate) fn build_cuda(f: &Framework) -> Option<(CudaVersion, bool)> {
    let v = f.build.cuda_version()?;
    if let Ok(c) = v.parse::<CudaVersion>() {
        return Some((c, false));
    }
    v.parse::<u32>().ok().map(|major| (CudaVersion::new(major, 0), true))
}

/// `torch 2.5.1+cu124 (CUDA 12.4 build) in venv:/home/u/.venv`.
pub(crate) fn describe_framework(env: &PythonEnv, f: &Framework) -> String {
    use gpu_doctor_model::FrameworkBuild;
    let build = match (&f.build, build_cuda(f)) {
        (_, Some((c, false))) => format!("CUDA {c} build"),
        (_, Some((c, true))) => format!("CUDA {} build", c.major),
        (FrameworkBuild::Cpu, _) => "CPU-only build".to_owned(),
        (FrameworkBuild::Rocm { .. }, _) => "ROCm build".to_owned(),
        _ => "build unknown".to_owned(),
    };
    format!("{} {} ({build}) in {}", f.name, f.version, env.name)
}

/// The CUDA major a pip `nvidia-*` wheel is for: the `-cu12` of its name, or the version of an unsuffixed
/// `nvidia-cuda-*` wheel (CUDA 13's `nvidia-cuda-runtime 13.0.96`); `None` when neither tells.
pub(crate) fn wheel_cuda_major(p: &Package) -> Option<u32> {
    if let Some((_, tag)) = p.name.rsplit_once("-cu")
        && let Ok(major) = tag.parse::<u32>()
    {
        return Some(major);
    }
    if p.name.starts_with("nvidia-cuda-") {
        return p.version.split('.').next()?.parse().ok();
    }
    None
}

/// The library a wheel ships, without its CUDA suffix: `nvidia-cudnn-cu12` → `nvidia-cudnn`.
pub(crate) fn wheel_library(name: &str) -> &str {
    match name.rsplit_once("-cu") {
        Some((base, tag)) if !tag.is_empty() && tag.chars().all(|c| c.is_ascii_digit()) => base,
        _ => name,
    }
}

/// A command or word shown in a fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shown {
    /// The text as it appears in the fix.
    pub text: String,
    /// The words a POSIX shell makes of it; `None` for other shells.
    pub argv: Option<Vec<String>>,
    /// True when it holds a path or name read from the machine.
    pub machine: bool,
}

/// True when two folder paths name the same folder, trailing slashes aside.
pub(crate) fn same_dir(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// The folder a file path is in.
pub(crate) fn parent_dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// A cuDNN copy's version, `9.x` when only its major is known, `?` when neither.
pub(crate) fn cudnn_version_text(c: &CudnnCopy) -> String {
    c.version.map(|v| v.to_string()).or_else(|| c.major.map(|m| format!("{m}.x"))).unwrap_or_else(|| "?".to_owned())
}
