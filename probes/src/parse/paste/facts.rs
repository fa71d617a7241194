//! What the format readers found, gathered before it becomes a [`Snapshot`].

use gpu_doctor_kb::Kb;
use gpu_doctor_model::{
    ContainerSupport, CudnnCopy, DeepFacts, DriverFacts, EnvFacts, EnvKind, Gpu, GpuHealth, HostLink,
    KernelModuleFacts, OsFamily, PciBusId, PciDevice, Pick, PythonEnv, SecureBoot, SystemInfo, ToolkitInstall,
    ToolkitKind, ToolkitPicks, Toolkits, VersionSource, WslFacts,
};
use gpu_doctor_model::{CudaVersion, DriverVersion, ObservedMessage, Probed, Snapshot, XidEvent};
use gpu_doctor_model::{LddResolution, LoaderEntry};

use super::MESSAGES;
use super::cuda_order;
use super::frameworks::{Hints, frameworks};
use super::gpus::{self, GpuFact};
use super::pkg::{PASTED, Pkg};

/// The most toolkits or cuDNN copies read from one paste: far more than any machine has, few
/// enough that checking each new one against the others stays quick.
pub(super) const MAX_LIST: usize = 64;

/// One GPU's BAR1 as lspci's `Physical Resizable BAR` capability shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Bar1Rebar {
    /// The GPU's bus id in sysfs form; `None` where the block's header line was not pasted.
    pub bus_id: Option<String>,
    /// The product name lspci gave the GPU, as nvidia-smi spells it.
    pub name: Option<String>,
    /// BAR1's size now.
    pub current_bytes: u64,
    /// The largest size the GPU offers; `None` where lspci printed no `supported:` list.
    pub max_bytes: Option<u64>,
    /// The format it was read from, the source of a GPU it lists.
    pub source: &'static str,
}

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
    /// BAR1 sizes in MiB from `nvidia-smi -q` blocks shown without their GPU, in GPU order.
    pub bar1_mib: Vec<u64>,
    /// BAR1 as lspci's Resizable BAR capability shows it, one per GPU block.
    pub bar1_rebar: Vec<Bar1Rebar>,
    /// Name, bus id or capability of a GPU, said by a framework.
    pub gpu_facts: Vec<GpuFact>,
    pub toolkits: Vec<ToolkitInstall>,
    pub cudnn: Vec<CudnnCopy>,
    pub packages: Vec<Pkg>,
    /// A whole package list (pip list, pip freeze, conda list) was pasted, so a package missing from
    /// it is not installed. collect_env's `[pip3]` lines are filtered and do not count.
    pub complete_package_list: bool,
    pub torch_build: Option<gpu_doctor_model::FrameworkBuild>,
    pub tf_build_info: Option<std::collections::BTreeMap<String, crate::probe::python::parse::PyValue>>,
    pub deep: DeepFacts,
    pub deep_sources: Vec<&'static str>,
    /// `jax.devices` listed CUDA devices.
    pub jax_cuda_devices: bool,
    /// The build ollama's runner list says (`msg="Dynamic LLM libraries" runners=[cpu]`).
    pub ollama_build: Option<gpu_doctor_model::FrameworkBuild>,
    /// The CUDA `cupy.show_config()` says CuPy was built with (`CUDA Build Version`).
    pub cupy_build: Option<gpu_doctor_model::FrameworkBuild>,
    pub python_version: Option<String>,
    /// The site-packages folders `pip show` printed (`Location:`), in order, without repeats.
    pub site_packages: Vec<String>,
    pub os: Option<OsFamily>,
    /// The OS's name as the text gives it (`Ubuntu 22.04.4 LTS`), with the format that gave it.
    pub os_name: Option<(String, &'static str)>,
    pub arch: Option<String>,
    pub messages: Vec<ObservedMessage>,
    /// NVIDIA display devices from `lspci -k`/`-v` or the kernel log, with the driver that holds each.
    pub pci_devices: Vec<PciDevice>,
    /// PCIe links from `lspci -vv`.
    pub links: Vec<HostLink>,
    /// Bridges whose ACS redirects peer-to-peer traffic, from `lspci -vvv` (`Topology::acs_redirect`).
    pub acs_redirect: Vec<String>,
    /// Peer copies p2pBandwidthLatencyTest measured (`Topology::peer_copies`).
    pub peer_copies: Vec<gpu_doctor_model::PeerCopy>,
    /// The host's IOMMU as the kernel command line and log show it (`Topology::iommu`).
    pub iommu: Option<gpu_doctor_model::Iommu>,
    /// An NCCL test that stopped before its first result (`Topology::stalled_collective`).
    pub stalled_collective: Option<gpu_doctor_model::StalledCollective>,
    /// CUDA's peer access answers a program printed (`Topology::peer_access`).
    pub peer_access: Vec<gpu_doctor_model::PeerAccess>,
    /// Each GPU's memory errors, repairs, clock-event reasons and limits from nvidia-smi `-q` (any
    /// `-d` selection of it) or `-q -x`, with the format that gave them; index and bus id as listed.
    pub gpu_health: Vec<(GpuHealth, &'static str)>,
    /// The kernel log's Xid events among the pasted lines (from the matched `nvrm.xid` messages).
    pub xid_events: Vec<XidEvent>,
    /// Variables from `env`, `export` and `echo $VAR` lines.
    pub env: EnvFacts,
    /// How many GPUs the text says in words the machine has (`prose`).
    pub stated_gpu_count: Option<u32>,
    /// The most GPUs (two or more) the text says in words a run uses (`prose`).
    pub stated_gpus_used: Option<u32>,
    /// The driver's CUDA level quoted for nvidia-smi in words, with the line (`prose`).
    pub stated_driver_cuda: Option<(gpu_doctor_model::CudaVersion, String)>,
    /// What goes wrong over several GPUs, in words (`prose`) or a CUDA sample's line (`p2p_bandwidth`).
    pub multi_gpu_trouble: Option<gpu_doctor_model::MultiGpuTrouble>,
    /// A question whether the machine's CUDA must match a framework's (`prose`).
    pub stated_cuda_question: Option<String>,
    /// nvidia-smi not found, said in words (`prose`): the line.
    pub stated_nvidia_smi_missing: Option<String>,
    /// A build saying it builds without CUDA (`prose`): the line.
    pub stated_build_without_cuda: Option<String>,
    /// The work ran on the CPU instead of the GPU, said in words (`prose`): the line.
    pub stated_cpu_fallback: Option<String>,
    /// M.2 (NVMe) drives installed, said in words (`prose`): the line.
    pub stated_m2_drives: Option<String>,
    /// GPU processes a `ps` listing shows stopped (`smi`).
    pub stopped_gpu_processes: Vec<gpu_doctor_model::StoppedGpuProcess>,
    /// TensorFlow wanted on the GPU, said in words (`prose`): the line.
    pub stated_tensorflow_gpu: Option<String>,
    /// A link said to drop its generation while idle (`prose`).
    pub stated_idle_downshift: Option<String>,
    /// A link said to come down while the GPU is busy (`prose`).
    pub stated_busy_downshift: Option<String>,
    /// The GPU said to sit behind Thunderbolt or USB4 (`prose`): the line.
    pub stated_egpu: Option<String>,
    /// The CUDA toolkit the text says is installed, with the line (`nvcc_verbose`).
    pub stated_toolkit: Option<(CudaVersion, String)>,
    /// CUDA asked for (`install_commands`: a command naming a CUDA package; `issue_form`: an accelerator answered
    /// `GPU`): the line.
    pub stated_cuda_wanted: Option<String>,
    /// A conda command installing from conda-forge without asking for CUDA (`install_commands`).
    pub stated_conda_forge_install: Option<String>,
    /// nouveau present on the machine, said in words (`prose`): the line.
    pub stated_nouveau: Option<String>,
    /// The lowest compute capability a program says it needs (`prose`): the capability and the line.
    pub stated_min_cc: Option<(gpu_doctor_model::ComputeCapability, String)>,
    /// A program's GPU numbers said to disagree with nvidia-smi's (`prose`): the line.
    pub stated_index_mismatch: Option<String>,
    /// A program's GPU list in CUDA's order against the PCI order, where the models' order differs (`prose`).
    pub listed_order_mismatch: Option<String>,
    /// No GPU found, said by a program or a person (`prose`): the line.
    pub stated_no_gpu: Option<String>,
    /// The line naming the machine's GPU as another vendor's.
    pub stated_other_vendor_gpu: Option<String>,
    /// The line saying in words that the torch installed is a CPU-only build.
    pub stated_cpu_torch: Option<String>,
    /// A PCIe link said in words (`prose`): the generation now and at most, for the text's one GPU.
    pub stated_link: Option<(u32, u32)>,
    /// A link width said in words (`prose`): the lanes now, the card's, and the sentence, for the
    /// text's one GPU.
    pub stated_width: Option<(u32, u32, String)>,
    /// Which toolkit `which nvcc` and the `/usr/local/cuda` link pick (CUDA_HOME, CUDA_PATH and
    /// LD_LIBRARY_PATH are settled from `env` when the snapshot is built).
    pub picks: ToolkitPicks,
    /// Loader cache entries from `ldconfig -p` lines.
    pub loader: Vec<LoaderEntry>,
    /// `ldconfig -p`'s header was pasted: the entries are the whole cache (not a grep of it).
    pub loader_cache_read: bool,
    /// `ldd FILE` lines: what each library FILE needs resolved to.
    pub ldd_resolved: Vec<LddResolution>,
    /// The toolkit's stub libcuda shown on the loader's path (`Toolkits::stub_libcuda`).
    pub stub_libcuda: Vec<String>,
    pub secure_boot: Option<SecureBoot>,
    pub kernel_module: Option<KernelModuleFacts>,
    pub wsl: Option<WslFacts>,
    /// The line of the raw text (before prompts come off) with a shell prompt that says WSL: a host Windows
    /// named, or a path on a Windows drive (`wsl::prompt_signs`).
    pub wsl_prompt: Option<(usize, &'static str)>,
    /// Container engines and the NVIDIA Container Toolkit as `docker info` and `nvidia-ctk cdi list`
    /// show them.
    pub containers: Option<ContainerSupport>,
    /// The container runtime a text names as where its program ran (`docker`, `kubernetes`, …),
    /// with the lines that named it.
    pub container: Option<gpu_doctor_model::ContainerFacts>,
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

    /// True when the format was recognised.
    pub fn read_format(&self, format: &str) -> bool {
        self.formats.iter().any(|(_, f)| *f == format)
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
            // An environment file's pin says what was asked; a listing what is installed.
            Some(p) if p.source == super::pkg::ENV_FILE && pkg.source != super::pkg::ENV_FILE => *p = pkg,
            Some(p) => {
                if p.conda_build.is_none() && p.version == pkg.version {
                    p.conda_build = pkg.conda_build;
                }
            }
            None => self.packages.push(pkg),
        }
    }

    /// Adds one GPU's health reading from `format` unless it says nothing, a reading of the GPU at
    /// that bus id is there, or [`super::gpus::MAX_GPUS`] are (the first reader to give one wins).
    pub fn health(&mut self, health: GpuHealth, format: &'static str) {
        let said_nothing =
            GpuHealth { index: health.index, pci_bus_id: health.pci_bus_id.clone(), ..GpuHealth::default() };
        let same_bus = |h: &GpuHealth| {
            h.pci_bus_id.as_deref().zip(health.pci_bus_id.as_deref()).is_some_and(|(a, b)| PciBusId::same(a, b))
        };
        if health != said_nothing
            && self.gpu_health.len() < super::gpus::MAX_GPUS
            && !self.gpu_health.iter().any(|(h, _)| same_bus(h))
        {
            self.gpu_health.push((health, format));
        }
    }

    /// Adds an NVIDIA display device unless one at its bus id is there or [`MAX_LIST`] are known
    /// already (the first reader to name a device wins).
    pub fn pci_device(&mut self, device: PciDevice) {
        if self.pci_devices.len() < MAX_LIST && !self.pci_devices.iter().any(|d| d.bus_id == device.bus_id) {
            self.pci_devices.push(device);
        }
    }

    /// Notes that `source` contributed framework facts.
    pub fn deep_from(&mut self, source: &'static str) {
        if !self.deep_sources.contains(&source) {
            self.deep_sources.push(source);
        }
    }

    /// Settles which toolkit each name picks. `nvcc --version` ran the nvcc `which` found first, so
    /// its version is that install's. CUDA_HOME, CUDA_PATH and the first LD_LIBRARY_PATH folder of a
    /// CUDA toolkit pick the install they lead to (one is added for a `cuda-X.Y` folder not seen yet).
    fn settle_picks(&mut self) {
        let nvcc: Vec<usize> =
            (0..self.toolkits.len()).filter(|i| self.toolkits[*i].kind == ToolkitKind::Pasted).collect();
        let on_path = self.picks.path.as_ref().and_then(|p| p.install_root.clone());
        if let ([pasted], Some(root)) = (nvcc.as_slice(), on_path)
            && let Some(at) = self.toolkits.iter().position(|t| t.root == root && t.version.is_none())
        {
            let version = self.toolkits[*pasted].version;
            self.toolkits[at].version = version;
            self.toolkits[at].version_source = Some(VersionSource::Nvcc);
            self.toolkits.remove(*pasted);
        }
        // An nvcc version tied to a path repeats the bare `nvcc --version` entry for it.
        let attributed: Vec<CudaVersion> = self
            .toolkits
            .iter()
            .filter(|t| t.kind != ToolkitKind::Pasted && t.version_source == Some(VersionSource::Nvcc))
            .filter_map(|t| t.version)
            .collect();
        self.toolkits.retain(|t| t.kind != ToolkitKind::Pasted || t.version.is_none_or(|v| !attributed.contains(&v)));
        if self.picks.path.is_none() {
            self.picks.path = self.env.path.iter().find_map(|dir| {
                let nvcc = format!("{}/nvcc", dir.trim_end_matches('/'));
                let t = self.toolkits.iter().find(|t| t.nvcc.as_deref() == Some(nvcc.as_str()))?;
                Some(Pick { named: nvcc, install_root: Some(t.root.clone()) })
            });
        }
        if self.picks.path.is_none() {
            // A pasted `nvcc --version` ran the nvcc on PATH: with one such version, that is the pick.
            let mut pasted = self.toolkits.iter().filter(|t| t.kind == ToolkitKind::Pasted);
            if let (Some(only), None) = (pasted.next(), pasted.next()) {
                self.picks.path = Some(Pick { named: "nvcc".to_owned(), install_root: Some(only.root.clone()) });
            }
        }
        if self.picks.usr_local_cuda.is_none() && self.toolkits.iter().any(|t| t.root == "/usr/local/cuda") {
            let root = Some("/usr/local/cuda".to_owned());
            self.picks.usr_local_cuda = Some(Pick { named: "/usr/local/cuda".to_owned(), install_root: root });
        }
        for (name, field) in [("CUDA_HOME", 0), ("CUDA_PATH", 1)] {
            let Some(value) = self.env.vars.get(name).cloned() else { continue };
            let pick = self.pick_for(&value, &value);
            match field {
                0 => self.picks.cuda_home = Some(pick),
                _ => self.picks.cuda_path = Some(pick),
            }
        }
        let lib = self.env.ld_library_path.iter().find_map(|d| toolkit_root_of_lib(d).map(|r| (d.clone(), r)));
        if let Some((dir, root)) = lib {
            let pick = self.pick_for(&format!("{}/libcudart.so", dir.trim_end_matches('/')), &root);
            if let Some(i) = pick.install_root.as_deref().and_then(|r| self.toolkits.iter_mut().find(|t| t.root == r))
                && !i.lib_dirs.contains(&dir)
            {
                i.lib_dirs.push(dir);
            }
            self.picks.ld_library_path = Some(pick);
        }
    }

    /// The pick of `named`, which leads to the toolkit at `root`: an install known by that root or
    /// alias, or a new one for a `cuda-X.Y` folder; no install when neither.
    fn pick_for(&mut self, named: &str, root: &str) -> Pick {
        let root = root.trim_end_matches('/');
        let known = self.toolkits.iter().find(|t| t.root == root || t.aliases.iter().any(|a| a == root));
        let install_root = match known {
            Some(t) => Some(t.root.clone()),
            None => match version_of_dir(root) {
                Some(version) if self.toolkits.len() < MAX_LIST => {
                    self.toolkits.push(ToolkitInstall {
                        root: root.to_owned(),
                        kind: ToolkitKind::Local,
                        version: Some(version),
                        version_source: None,
                        nvcc: None,
                        lib_dirs: Vec::new(),
                        aliases: Vec::new(),
                        python_env: None,
                    });
                    Some(root.to_owned())
                }
                _ => None,
            },
        };
        Pick { named: named.to_owned(), install_root }
    }

    /// What the text said in words: the snapshot's `stated_*` facts (the driver's CUDA level in words only
    /// where no program printed it).
    fn said_in_words_into(&mut self, snap: &mut Snapshot) {
        (snap.stated_gpu_count, snap.stated_gpus_used) = (self.stated_gpu_count, self.stated_gpus_used);
        (snap.multi_gpu_trouble, snap.stated_cuda_question) =
            (self.multi_gpu_trouble.take(), self.stated_cuda_question.take());
        snap.stated_nvidia_smi_missing = self.stated_nvidia_smi_missing.take();
        snap.stated_build_without_cuda = self.stated_build_without_cuda.take();
        snap.stated_cpu_fallback = self.stated_cpu_fallback.take();
        snap.stated_m2_drives = self.stated_m2_drives.take();
        snap.stopped_gpu_processes = std::mem::take(&mut self.stopped_gpu_processes);
        snap.stated_tensorflow_gpu = self.stated_tensorflow_gpu.take();
        snap.stated_idle_downshift = self.stated_idle_downshift.take();
        snap.stated_busy_downshift = self.stated_busy_downshift.take();
        snap.stated_egpu = self.stated_egpu.take();
        snap.stated_toolkit = self.stated_toolkit.take();
        snap.stated_cuda_wanted = self.stated_cuda_wanted.take();
        snap.stated_conda_forge_install = self.stated_conda_forge_install.take();
        snap.stated_nouveau = self.stated_nouveau.take();
        snap.stated_min_cc = self.stated_min_cc.take();
        snap.stated_index_mismatch = self.stated_index_mismatch.take();
        snap.listed_order_mismatch = self.listed_order_mismatch.take();
        snap.stated_no_gpu = self.stated_no_gpu.take();
        snap.stated_other_vendor_gpu = self.stated_other_vendor_gpu.take();
        snap.stated_cpu_torch = self.stated_cpu_torch.take();
        snap.stated_driver_cuda = self.stated_driver_cuda.take().filter(|_| self.driver_cuda.is_none());
    }

    /// The snapshot these facts describe; parts nothing spoke of stay `unknown`.
    pub fn into_snapshot(mut self, kb: &Kb) -> Snapshot {
        self.formats.sort_by_key(|(line, _)| *line);
        let formats: Vec<String> = self.formats.iter().map(|(_, f)| (*f).to_owned()).collect();
        let mut snap = Snapshot::unknown(formats);
        self.settle_picks();
        self.read_messages();
        self.said_in_words_into(&mut snap);
        if let Some((version, source)) = self.driver_version.clone() {
            let cuda = match self.driver_cuda {
                Some((c, s)) => Some((c, s)),
                None => driver_cuda_from_messages(&self.messages).map(|c| (c, MESSAGES)),
            };
            let sources = join_sources([source].into_iter().chain(cuda.map(|(_, s)| s)));
            let facts = DriverFacts::reported(version, cuda.map(|(c, _)| c), None);
            snap.driver = Probed::found(facts, sources);
        }

        let mut gpu_sources: Vec<&str> =
            self.listed_gpus.iter().map(|(_, s)| *s).chain(self.gpu_facts.iter().map(|f| f.source)).collect();
        let cuda_seen = self.cuda_order_seen(kb);
        let mut list = gpus::merge(self.listed_gpus.into_iter().map(|(g, _)| g).collect(), &self.gpu_facts, kb);
        if self.stated_link.is_some_and(|link| with_stated_link(&mut list, link)) {
            gpu_sources.push("a link speed in words");
        }
        with_bar1(&mut list, &self.bar1_mib);
        gpu_sources.extend(with_rebar(&mut list, &self.bar1_rebar));
        fill_health(&mut snap, std::mem::take(&mut self.gpu_health), std::mem::take(&mut self.xid_events), &list);
        if !list.is_empty() {
            snap.gpus = Probed::found(list, join_sources(gpu_sources.into_iter()));
        }

        let hints = Hints {
            torch_build: self.torch_build.as_ref(),
            tf_info: self.tf_build_info.as_ref(),
            tf_version: self.deep.tensorflow.as_ref().and_then(|t| t.version.as_deref()),
            jax_cuda_devices: self.jax_cuda_devices,
            ollama_build: self.ollama_build.as_ref(),
            cupy_build: self.cupy_build.as_ref(),
            complete: self.complete_package_list,
            windows: self.os == Some(OsFamily::Windows),
            torch_cuda_available: self.deep.torch.as_ref().and_then(|t| t.cuda_available) == Some(true),
            torch_printed: self.deep.torch.is_some(),
        };
        let built = frameworks(&self.packages, &hints);
        self.toolkits.extend(built.toolkits);
        let toolkits = Toolkits {
            installs: self.toolkits,
            picks: self.picks,
            loader_libraries: self.loader,
            loader_cache_read: self.loader_cache_read,
            ldd_resolved: self.ldd_resolved,
            stub_libcuda: self.stub_libcuda,
        };
        // Found when anything but the picks (which name installs) was read.
        if toolkits != (Toolkits { picks: toolkits.picks.clone(), ..Toolkits::default() }) {
            snap.toolkits = Probed::found(toolkits, "pasted text");
        }
        self.cudnn.extend(built.cudnn);
        if !self.cudnn.is_empty() {
            snap.cudnn = Probed::found(self.cudnn, "pasted text");
        }
        let has_deep = self.deep != DeepFacts::default();
        let any_package = !built.frameworks.is_empty() || !built.cuda_wheels.is_empty() || !built.companions.is_empty();
        if any_package || self.python_version.is_some() || has_deep {
            let deep = has_deep.then(|| Probed::found(self.deep, pasted(&self.deep_sources.join(" + "))));
            let env = PythonEnv {
                name: "pasted".to_owned(),
                kind: EnvKind::System,
                prefix: PASTED.to_owned(),
                interpreter: None,
                python_version: self.python_version,
                site_packages: site_packages_or_pasted(std::mem::take(&mut self.site_packages)),
                include_system_site_packages: false,
                found_by: vec!["pasted text".to_owned()],
                frameworks: built.frameworks,
                cuda_wheels: built.cuda_wheels,
                companions: built.companions,
                deep,
            };
            snap.python_envs = Probed::found(vec![env], "pasted text");
        }

        if !self.pci_devices.is_empty() {
            snap.pci_devices = Probed::found(self.pci_devices, "pasted lspci or kernel log");
        }
        links_into(self.links, self.stated_width, &mut snap);
        if let Some(sb) = self.secure_boot {
            snap.secure_boot = Probed::found(sb, "pasted kernel log (the kernel refused an unsigned module)");
        }
        if let Some(m) = self.kernel_module {
            snap.kernel_module = Probed::found(m, "pasted kernel log");
        }
        if let Some(c) = self.containers {
            snap.containers = Probed::found(c, "pasted docker info or nvidia-ctk cdi list");
        }
        snap.env = self.env;
        snap.platform.container = self.container;
        place(&mut snap, self.wsl, self.os, self.arch, self.os_name);
        let stalled = (self.stalled_collective.take(), std::mem::take(&mut self.peer_access));
        fill_topology(&mut snap, cuda_seen, &mut self.acs_redirect, &mut self.peer_copies, self.iommu.take(), stalled);
        kb.complete_snapshot(&mut snap);
        snap.messages = self.messages;
        snap.notes = self.notes;
        snap
    }
}

impl Facts {
    /// ONNX Runtime's available providers as its warning about a requested one lists them
    /// (`ort.provider_not_available`), where no printed list gave them.
    fn ort_providers_from_messages(&mut self) {
        if self.deep.onnxruntime.as_ref().is_some_and(|o| o.providers.is_some()) {
            return;
        }
        let Some(available) = self
            .messages
            .iter()
            .filter(|m| m.id == "ort.provider_not_available")
            .find_map(|m| m.values.get("available"))
        else {
            return;
        };
        let list: Vec<String> =
            available.split(',').map(str::trim).filter(|p| !p.is_empty()).map(str::to_owned).collect();
        if list.is_empty() {
            return;
        }
        self.deep.onnxruntime.get_or_insert_with(gpu_doctor_model::DeepOnnxruntime::default).providers = Some(list);
        self.deep_from("onnxruntime's warning");
    }
}

impl Facts {
    /// The CUDA order the paste shows beside nvidia-smi's (`cuda_order::observed`), from the GPUs
    /// listed in PCI order; where it shows none, the order CUDA is expected to use (`cuda_order::expected`).
    fn cuda_order_seen(&self, kb: &Kb) -> Option<gpu_doctor_model::Topology> {
        let in_pci_order: Vec<Gpu> =
            self.listed_gpus.iter().filter(|(_, f)| cuda_order::in_pci_order(f)).map(|(g, _)| g.clone()).collect();
        let listed = gpus::merge(in_pci_order, &[], kb);
        cuda_order::observed(&listed, &self.gpu_facts, &self.env).or_else(|| {
            // A program numbering the GPUs the CUDA way, in the same order: nothing to expect.
            let cuda_shown = self.gpu_facts.iter().filter(|f| f.index.is_some()).count() >= 2;
            if cuda_shown { None } else { cuda_order::expected(&listed, &self.env, kb) }
        })
    }
}

/// The topology the GPU lists' orders, the bridges whose ACS redirects peer traffic, the measured
/// peer copies, the IOMMU, a stalled NCCL test and CUDA's peer access answers show (all taken), with the
/// GPUs the snapshot lists
/// where no order did; unknown when none says anything.
fn fill_topology(
    snap: &mut Snapshot,
    cuda_seen: Option<gpu_doctor_model::Topology>,
    acs: &mut Vec<String>,
    copies: &mut Vec<gpu_doctor_model::PeerCopy>,
    iommu: Option<gpu_doctor_model::Iommu>,
    (stalled_collective, peer_access): (Option<gpu_doctor_model::StalledCollective>, Vec<gpu_doctor_model::PeerAccess>),
) {
    let (acs, copies) = (std::mem::take(acs), std::mem::take(copies));
    if let Some(t) = cuda_seen {
        snap.topology = Probed::found(t, "pasted GPU lists in CUDA and nvidia-smi order");
    }
    if acs.is_empty() && copies.is_empty() && iommu.is_none() && stalled_collective.is_none() && peer_access.is_empty()
    {
        return;
    }
    if let Probed::Found { value, .. } = &mut snap.topology {
        value.acs_redirect = acs;
        value.peer_copies = copies;
        value.iommu = iommu;
        value.stalled_collective = stalled_collective;
        value.peer_access = peer_access;
        return;
    }
    let gpus = snap.gpus.value().map(|list| list.iter().map(cuda_order::topo_gpu).collect()).unwrap_or_default();
    let t = gpu_doctor_model::Topology {
        gpus,
        acs_redirect: acs,
        peer_copies: copies,
        iommu,
        stalled_collective,
        peer_access,
        ..gpu_doctor_model::Topology::default()
    };
    snap.topology = Probed::found(
        t,
        "pasted lspci -vvv, p2pBandwidthLatencyTest, kernel IOMMU lines, an NCCL test's output or TensorFlow's device interconnect matrix",
    );
}

/// The health readings of `-q`/XML (each under the index of its GPU in the merged `list`) and the
/// Xid events of the messages, into the snapshot's health. Only what is there: text without Xid
/// lines says nothing of the kernel log, so that stays unknown.
fn fill_health(snap: &mut Snapshot, gpu_health: Vec<(GpuHealth, &'static str)>, xids: Vec<XidEvent>, list: &[Gpu]) {
    if !gpu_health.is_empty() {
        let sources = join_sources(gpu_health.iter().map(|(_, s)| *s));
        let mut health: Vec<GpuHealth> = gpu_health.into_iter().map(|(h, _)| h).collect();
        // The GPU list merged the same GPU listed twice: each reading takes that GPU's index.
        for h in &mut health {
            if let Some(g) = h.pci_bus_id.as_deref().and_then(|b| list.iter().find(|g| g.has_bus_id(b))) {
                h.index = g.index;
            }
        }
        snap.health.gpus = Probed::found(health, sources);
    }
    if !xids.is_empty() {
        snap.health.xid_events = Probed::found(xids, "pasted kernel log");
    }
}

/// The site-packages folders `pip show` printed, or the [`PASTED`] placeholder where none was.
fn site_packages_or_pasted(dirs: Vec<String>) -> Vec<String> {
    if dirs.is_empty() { vec![PASTED.to_owned()] } else { dirs }
}

#[cfg(test)]
impl Facts {
    /// What one format reader finds in `text` alone (its unit tests).
    pub(super) fn read_by(read: fn(&[String], &mut Facts), text: &str) -> Facts {
        let mut facts = Facts::default();
        read(&super::clean::lines(text), &mut facts);
        facts
    }
}

/// The CUDA version a folder's name carries: `/usr/local/cuda-11.8` → 11.8.
pub(super) fn version_of_dir(dir: &str) -> Option<CudaVersion> {
    let name = dir.trim_end_matches('/').rsplit('/').next()?;
    name.strip_prefix("cuda-")?.parse().ok()
}

/// The toolkit folder a library folder belongs to: `/usr/local/cuda-11.8/lib64` and
/// `/usr/local/cuda/targets/x86_64-linux/lib` → the folder above `lib64` or `targets`.
fn toolkit_root_of_lib(dir: &str) -> Option<String> {
    let dir = dir.trim_end_matches('/');
    let root = dir.strip_suffix("/lib64").or_else(|| dir.split_once("/targets/").map(|(r, _)| r))?;
    root.rsplit('/').next().is_some_and(|n| n == "cuda" || n.starts_with("cuda-")).then(|| root.to_owned())
}

/// Where the pasted machine runs: WSL, the OS family and architecture, and the OS's name (of the
/// machine part only the name is known; the rest stays empty, and zero CPUs reads as "not shown").
fn place(
    snap: &mut Snapshot,
    wsl: Option<WslFacts>,
    os: Option<OsFamily>,
    arch: Option<String>,
    os_name: Option<(String, &'static str)>,
) {
    snap.platform.wsl = wsl;
    if let Some(os) = os {
        snap.platform.platform.os = os;
    }
    if let Some(arch) = arch {
        snap.platform.platform.arch = arch;
    }
    if let Some((name, source)) = os_name {
        snap.system = Probed::found(SystemInfo { os_name: Some(name), ..SystemInfo::default() }, pasted(source));
    }
}

/// BAR1 sizes shown without their GPU (`nvidia-smi -q | grep -A 3 BAR1`), given to the listed GPUs
/// in order, unless a fuller report gave any GPU its own.
fn with_bar1(list: &mut [Gpu], bar1_mib: &[u64]) {
    if list.iter().all(|g| g.bar1_total_bytes.is_none()) {
        for (g, mib) in list.iter_mut().zip(bar1_mib) {
            g.bar1_total_bytes = Some(mib * 1024 * 1024);
        }
    }
}

/// Gives each GPU lspci's Resizable BAR view of its BAR1: to the listed GPU of the same bus id, or
/// to the only GPU listed where the block's header line was not pasted (or no listed GPU has a bus
/// id); where no GPU is listed, the GPU lspci shows is listed (by its bus id and name). A BAR1 size
/// the driver reported (`nvidia-smi -q`) is kept; the largest size offered is added. Returns the
/// source of the GPUs it listed, if it listed any.
fn with_rebar(list: &mut Vec<Gpu>, rebar: &[Bar1Rebar]) -> Option<&'static str> {
    let mut listed = None;
    let known = list.len();
    for r in rebar {
        let by_bus = r.bus_id.as_ref().and_then(|b| list.iter().position(|g| g.pci_bus_id.as_ref() == Some(b)));
        let only = (known == 1 && (r.bus_id.is_none() || list[0].pci_bus_id.is_none())).then_some(0);
        if let Some(i) = by_bus.or(only) {
            let g = &mut list[i];
            g.bar1_total_bytes = g.bar1_total_bytes.or(Some(r.current_bytes));
            g.bar1_max_bytes = g.bar1_max_bytes.or(r.max_bytes);
        } else if known == 0 && list.len() < gpus::MAX_GPUS {
            list.push(Gpu {
                index: u32::try_from(list.len()).unwrap_or(u32::MAX),
                name: r.name.clone(),
                pci_bus_id: r.bus_id.clone(),
                bar1_total_bytes: Some(r.current_bytes),
                bar1_max_bytes: r.max_bytes,
                ..Gpu::default()
            });
            listed = Some(r.source);
        }
    }
    listed
}

/// `pasted <format>`, the source of a part that came from pasted text.
fn pasted(source: &str) -> String {
    format!("pasted {source}")
}

impl Facts {
    /// What known error messages say of the machine where no reader said it: ONNX Runtime's providers, the
    /// torch xFormers names, GPUs, the driver's version.
    fn read_messages(&mut self) {
        self.ort_providers_from_messages();
        self.torch_from_messages();
        self.gpu_facts.extend(gpus::facts_from_messages(&self.messages));
        if self.driver_version.is_none() {
            self.driver_version = driver_from_messages(&self.messages).map(|v| (v, MESSAGES));
        }
    }

    /// The torch installed as xFormers' warning prints it (`torch.__version__`, `… (you have 2.1.2+cpu)`), where
    /// no list or print gave torch: the version is printed whole, its local tag too.
    fn torch_from_messages(&mut self) {
        if self.packages.iter().any(|p| p.name == "torch") {
            return;
        }
        let Some(version) = self
            .messages
            .iter()
            .filter(|m| m.id == "xformers.built_for_other_torch")
            .find_map(|m| m.values.get("torch").cloned())
        else {
            return;
        };
        self.package(Pkg { name: "torch".to_owned(), version, conda_build: None, source: "xFormers' warning" });
    }
}

/// The link said in words (generation now, at most) given to the text's one GPU, or to a GPU the text names no
/// other way; false where the text lists several GPUs or its one GPU's link is known.
fn with_stated_link(list: &mut Vec<Gpu>, (now, max): (u32, u32)) -> bool {
    match list.as_mut_slice() {
        [] => {
            list.push(Gpu { pcie_gen_current: Some(now), pcie_gen_max: Some(max), ..Gpu::default() });
            true
        }
        [one] if one.pcie_gen_current.is_none() && one.pcie_gen_max.is_none() => {
            one.pcie_gen_current = Some(now);
            one.pcie_gen_max = Some(max);
            true
        }
        _ => false,
    }
}

/// The links read into `snap`; where the text shows none and at most one GPU, a link width said in
/// words (`stated_width`) is that GPU's link.
fn links_into(links: Vec<gpu_doctor_model::HostLink>, stated_width: Option<(u32, u32, String)>, snap: &mut Snapshot) {
    if !links.is_empty() {
        snap.links = Probed::found(links, "pasted lspci -vv or kernel log");
    } else if let Some((now, card, line)) = stated_width.filter(|_| snap.gpus.value().is_none_or(|g| g.len() <= 1)) {
        let bus = snap.gpus.value().and_then(|g| g.first()?.pci_bus_id.clone()).unwrap_or_else(|| "GPU 0".into());
        snap.links = Probed::found(vec![worded_link(bus, now, card, line)], "a link width in words");
    }
}

/// The link of a width said in words (`now` lanes of the card's `card`), as a limit the card's own
/// link trained at.
fn worded_link(bus: String, now: u32, card: u32, line: String) -> gpu_doctor_model::HostLink {
    let mut link = super::lspci::link(bus, (None, Some(card)), (None, Some(now)), ("words", "the text's words"));
    link.set_boot_limit(gpu_doctor_model::BootLinkLimit {
        at: "<unknown>".to_owned(),
        generation: None,
        width: now,
        capable_generation: None,
        capable_width: Some(card),
        available_gbps: 0.0,
        capable_gbps: None,
        line,
        seen_by: gpu_doctor_model::LinkSeenBy::Words,
    });
    link
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

/// The running driver's version as a kernel message states it: `The 535.129.03 NVIDIA driver will
/// ignore this GPU`.
fn driver_from_messages(messages: &[ObservedMessage]) -> Option<DriverVersion> {
    messages
        .iter()
        .filter(|m| m.id == "nvrm.driver_ignores_gpu")
        .find_map(|m| m.values.get("driver_version")?.parse().ok())
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
