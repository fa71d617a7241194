//! What the format readers found, gathered before it becomes a [`Snapshot`].

use crate::compat::Kb;
use crate::model::{
    CudnnCopy, DeepFacts, DriverFacts, EnvKind, Gpu, OsFamily, Pick, PythonEnv, ToolkitInstall, ToolkitKind,
    ToolkitPicks, Toolkits, VersionSource,
};
use crate::{CudaVersion, DriverVersion, ObservedMessage, Probed, Snapshot};

use super::MESSAGES;
use super::frameworks::{Hints, frameworks};
use super::gpus::{self, GpuFact};
use super::packages::Pkg;

/// The root every toolkit, framework and environment from pasted text gets.
pub(super) const PASTED: &str = "(pasted)";

/// The most toolkits or cuDNN copies read from one paste: far more than any machine has, few
/// enough that checking each new one against the others stays quick.
pub(super) const MAX_LIST: usize = 64;

/// Everything found so far. Readers add; [`Facts::into_snapshot`] settles conflicts (the first
/// value found wins) and fills in what the knowledge base knows.
#[derive(Debug, Default)]
pub(super) struct Facts {
    /// Formats recognised, with the line where each was first seen.
    formats: Vec<(usize, &'static str)>,
    pub driver_version: Option<(DriverVersion, &'static str)>,
    pub driver_cuda: Option<(CudaVersion, &'static str)>,
    /// GPUs as listed by nvidia-smi or collect_env, in order, with the format that listed them.
    pub listed_gpus: Vec<(Gpu, &'static str)>,
    /// Name, bus id or capability of a GPU, said by a framework.
    pub gpu_facts: Vec<GpuFact>,
    pub toolkits: Vec<ToolkitInstall>,
    pub cudnn: Vec<CudnnCopy>,
    pub packages: Vec<Pkg>,
    /// A whole package list (pip list, pip freeze, conda list) was pasted, so a package missing from
    /// it is not installed. collect_env's `[pip3]` lines are filtered and do not count.
    pub complete_package_list: bool,
    pub torch_build: Option<crate::model::FrameworkBuild>,
    pub tf_build_info: Option<std::collections::BTreeMap<String, crate::probe::python::parse::PyValue>>,
    pub deep: DeepFacts,
    pub deep_sources: Vec<&'static str>,
    /// `jax.devices` listed CUDA devices.
    pub jax_cuda_devices: bool,
    pub python_version: Option<String>,
    pub os: Option<OsFamily>,
    pub arch: Option<String>,
    pub messages: Vec<ObservedMessage>,
    /// What could not be read whole, one sentence each (the snapshot's `notes`).
    pub notes: Vec<String>,
}

impl Facts {
    /// Notes that `format` was recognised at line `line`.
    pub fn saw(&mut self, line: usize, format: &'static str) {
        match self.formats.iter_mut().find(|(_, f)| *f == format) {
            Some((l, _)) => *l = (*l).min(line),
            None => self.formats.push((line, format)),
        }
    }

    /// True when no format was recognised.
    pub fn is_empty(&self) -> bool {
        self.formats.is_empty()
    }

    /// Sets the driver version unless one was found already.
    pub fn driver(&mut self, version: Option<DriverVersion>, cuda: Option<CudaVersion>, source: &'static str) {
        if self.driver_version.is_none()
            && let Some(v) = version
        {
            self.driver_version = Some((v, source));
        }
        if self.driver_cuda.is_none()
            && let Some(c) = cuda
        {
            self.driver_cuda = Some((c, source));
        }
    }

    /// Adds a toolkit whose nvcc printed `version`, unless one with that version is there or
    /// [`MAX_LIST`] toolkits are known already.
    pub fn nvcc_toolkit(&mut self, version: CudaVersion) {
        if self.toolkits.len() >= MAX_LIST
            || self.toolkits.iter().any(|t| t.kind == ToolkitKind::Pasted && t.version == Some(version))
        {
            return;
        }
        self.toolkits.push(ToolkitInstall {
            root: PASTED.to_owned(),
            kind: ToolkitKind::Pasted,
            version: Some(version),
            version_source: Some(VersionSource::Nvcc),
            nvcc: Some("nvcc".to_owned()),
            lib_dirs: Vec::new(),
            aliases: Vec::new(),
            python_env: None,
        });
    }

    /// Adds a package unless one of that name is there (then only a conda build string it lacks).
    pub fn package(&mut self, pkg: Pkg) {
        match self.packages.iter_mut().find(|p| p.name == pkg.name) {
            Some(p) => {
                if p.conda_build.is_none() && p.version == pkg.version {
                    p.conda_build = pkg.conda_build;
                }
            }
            None => self.packages.push(pkg),
        }
    }

    /// Notes that `source` contributed framework facts.
    pub fn deep_from(&mut self, source: &'static str) {
        if !self.deep_sources.contains(&source) {
            self.deep_sources.push(source);
        }
    }

    /// The snapshot these facts describe; parts nothing spoke of stay `unknown`.
    pub fn into_snapshot(mut self, kb: &Kb) -> Snapshot {
        self.formats.sort_by_key(|(line, _)| *line);
        let formats: Vec<String> = self.formats.iter().map(|(_, f)| (*f).to_owned()).collect();
        let mut snap = Snapshot::unknown(formats);
        let facts_from_messages = gpus::facts_from_messages(&self.messages);
        self.gpu_facts.extend(facts_from_messages);

        if let Some((version, source)) = self.driver_version.clone() {
            let cuda = match self.driver_cuda {
                Some((c, s)) => Some((c, s)),
                None => driver_cuda_from_messages(&self.messages).map(|c| (c, MESSAGES)),
            };
            let sources = join_sources([source].into_iter().chain(cuda.map(|(_, s)| s)));
            let facts = DriverFacts::reported(version, cuda.map(|(c, _)| c), None);
            snap.driver = Probed::found(facts, sources);
        }

        let gpu_sources =
            join_sources(self.listed_gpus.iter().map(|(_, s)| *s).chain(self.gpu_facts.iter().map(|f| f.source)));
        let list = gpus::merge(self.listed_gpus.into_iter().map(|(g, _)| g).collect(), &self.gpu_facts, kb);
        if !list.is_empty() {
            snap.gpus = Probed::found(list, gpu_sources);
        }

        let hints = Hints {
            torch_build: self.torch_build.as_ref(),
            tf_info: self.tf_build_info.as_ref(),
            tf_version: self.deep.tensorflow.as_ref().and_then(|t| t.version.as_deref()),
            jax_cuda_devices: self.jax_cuda_devices,
            complete: self.complete_package_list,
            windows: self.os == Some(OsFamily::Windows),
            torch_cuda_available: self.deep.torch.as_ref().and_then(|t| t.cuda_available) == Some(true),
        };
        let built = frameworks(&self.packages, &hints);
        self.toolkits.extend(built.toolkits);
        if !self.toolkits.is_empty() {
            // A pasted `nvcc --version` ran the nvcc on PATH: with one such version, that is the pick.
            let mut pasted = self.toolkits.iter().filter(|t| t.kind == ToolkitKind::Pasted);
            let path = match (pasted.next(), pasted.next()) {
                (Some(only), None) => Some(Pick { named: "nvcc".to_owned(), install_root: Some(only.root.clone()) }),
                _ => None,
            };
            let picks = ToolkitPicks { path, ..ToolkitPicks::default() };
            let toolkits = Toolkits { installs: self.toolkits, picks, ..Toolkits::default() };
            snap.toolkits = Probed::found(toolkits, "pasted text");
        }
        self.cudnn.extend(built.cudnn);
        if !self.cudnn.is_empty() {
            snap.cudnn = Probed::found(self.cudnn, "pasted text");
        }
        let has_deep = self.deep != DeepFacts::default();
        if !built.frameworks.is_empty() || !built.cuda_wheels.is_empty() || self.python_version.is_some() || has_deep {
            let deep = has_deep.then(|| Probed::found(self.deep, pasted(&self.deep_sources.join(" + "))));
            let env = PythonEnv {
                name: "pasted".to_owned(),
                kind: EnvKind::System,
                prefix: PASTED.to_owned(),
                interpreter: None,
                python_version: self.python_version,
                site_packages: vec![PASTED.to_owned()],
                include_system_site_packages: false,
                found_by: vec!["pasted text".to_owned()],
                frameworks: built.frameworks,
                cuda_wheels: built.cuda_wheels,
                deep,
            };
            snap.python_envs = Probed::found(vec![env], "pasted text");
        }

        if let Some(os) = self.os {
            snap.platform.platform.os = os;
        }
        if let Some(arch) = self.arch {
            snap.platform.platform.arch = arch;
        }
        if let Probed::Found { value, .. } = &mut snap.driver {
            value.derive_cuda_version(kb, snap.platform.platform.os);
        }
        snap.messages = self.messages;
        snap.notes = self.notes;
        snap
    }
}

/// `pasted <format>`, the source of a part that came from pasted text.
fn pasted(source: &str) -> String {
    format!("pasted {source}")
}

/// The distinct sources, in order, as one `pasted …` source.
fn join_sources<'a>(sources: impl Iterator<Item = &'a str>) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for s in sources {
        if !seen.contains(&s) {
            seen.push(s);
        }
    }
    pasted(&seen.join(" + "))
}

/// The driver's CUDA level as an error message states it: PyTorch's `found version 12080`, XLA's
/// `The NVIDIA driver's CUDA version is 12.4`.
fn driver_cuda_from_messages(messages: &[ObservedMessage]) -> Option<CudaVersion> {
    messages.iter().find_map(|m| match m.id.as_str() {
        "torch.driver_too_old" => {
            m.values.get("found_version")?.parse::<i32>().ok().and_then(CudaVersion::from_api_int)
        }
        "xla.driver_older_than_ptxas" => m.values.get("driver_cuda")?.parse().ok(),
        _ => None,
    })
}
