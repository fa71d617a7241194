//! `Snapshot`: everything the probes found, as plain serde data.

use serde::{Deserialize, Serialize};

use super::{
    ComputeCapability, ContainerSupport, CudnnCopy, DriverFacts, EnvFacts, Gpu, Health, HostLink, KernelModuleFacts,
    OsFamily, PciDevice, Platform, PlatformFacts, Probed, PythonEnv, SecureBoot, SystemFacts, Toolkits, Topology,
    TraceEntry, UnusedPython,
};

/// How the paste reader's note on text in which it recognised nothing begins: the note stands for
/// an answer (nothing is known of that machine), not for a part left unread.
pub const NOTHING_RECOGNISED: &str = "nothing gpu-doctor recognises";

/// The formats of pasted text whose GPUs are a person's words, not a program's list: an issue form's
/// answer, a `GPU: …` line, a GPU named in a sentence. Such a GPU is in the machine; whether the
/// driver (or a WSL guest, or a container) sees it, they do not say.
pub const GPUS_IN_WORDS: [&str; 3] = ["issue form", "labelled lines", "a GPU named in words"];

/// Whether a GPU list's source (`pasted issue form`, `pasted smi + issue form`) names only formats
/// of [`GPUS_IN_WORDS`].
pub fn gpus_only_in_words(source: &str) -> bool {
    let formats = source.strip_prefix("pasted ").unwrap_or(source);
    formats.split(" + ").all(|f| GPUS_IN_WORDS.contains(&f))
}

/// Version of the snapshot and report JSON; bumped on any breaking change.
pub const SCHEMA_VERSION: u32 = 1;

/// Everything known about one machine at one moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// `SCHEMA_VERSION` of the program that wrote it.
    pub schema_version: u32,
    /// Version of gpu-doctor that took it.
    pub tool_version: String,
    /// When it was taken, seconds since the Unix epoch.
    pub taken_at_unix_secs: u64,
    /// Whether the probes ran on this machine or the facts were read from another machine's text.
    #[serde(default)]
    pub origin: Origin,
    /// OS, kernel, CPU and memory.
    pub system: Probed<SystemFacts>,
    /// OS family, WSL and container.
    pub platform: PlatformFacts,
    /// The NVIDIA driver: version, the CUDA level it supports, its kernel module.
    pub driver: Probed<DriverFacts>,
    /// The NVIDIA kernel module: loaded, nouveau, built for the running kernel (Linux).
    pub kernel_module: Probed<KernelModuleFacts>,
    /// UEFI Secure Boot, which refuses unsigned kernel modules (Linux, where `mokutil` exists).
    pub secure_boot: Probed<SecureBoot>,
    /// NVIDIA display and 3D controllers on the PCI bus, with the driver bound to each.
    pub pci_devices: Probed<Vec<PciDevice>>,
    /// GPUs as the driver sees them.
    pub gpus: Probed<Vec<Gpu>>,
    /// Each GPU's path to the CPU: PCIe link, Thunderbolt tunnel, theoretical bandwidth.
    pub links: Probed<Vec<HostLink>>,
    /// Each GPU's memory errors, clock-event reasons and limits, and the kernel log's Xid events;
    /// `unknown` in reports written before gpu-doctor read them.
    #[serde(default)]
    pub health: Health,
    /// How the GPUs connect (pairs, NUMA, MIG, CUDA order). Reports written before it read as unknown.
    #[serde(default = "topology_not_in_report")]
    pub topology: Probed<Topology>,
    /// Every CUDA toolkit found, and which one each variable picks.
    pub toolkits: Probed<Toolkits>,
    /// Every copy of cuDNN found.
    pub cudnn: Probed<Vec<CudnnCopy>>,
    /// Python environments and the GPU frameworks in them.
    pub python_envs: Probed<Vec<PythonEnv>>,
    /// Each path named with `--python` that is not an environment found (one whose `found_by` has
    /// `--python`), and why. Empty when every named path was used, or none was named.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unused_pythons: Vec<UnusedPython>,
    /// CUDA-relevant environment variables.
    pub env: EnvFacts,
    /// Container engines, the NVIDIA Container Toolkit and their GPU setup; inside a container,
    /// what it was given. `unknown` in reports written before gpu-doctor looked at containers.
    #[serde(default = "containers_not_probed")]
    pub containers: Probed<ContainerSupport>,
    /// How many GPUs the pasted text says in words the machine has ("I only have one GPU", "a system with
    /// 2 GPUs", "a single-GPU machine"); `None` for a live machine, or when the text does not say. Weaker than
    /// a GPU list: only rules that compare a count (an index in CUDA_VISIBLE_DEVICES) read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_gpu_count: Option<u32>,
    /// The most GPUs (two or more) the pasted text says in words a run on one machine uses ("the model freezes
    /// when using 4 or more GPUs", "training on 2 GPUs"): the machine has at least that many. `None` for a live
    /// machine, or when the text does not say; a run over nodes is not counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_gpus_used: Option<u32>,
    /// The driver's CUDA level as the pasted text quotes nvidia-smi in words ("nvidia-smi shows CUDA Version
    /// 12.2"), with the line; `None` for a live machine, where a program's output gave it, or when not said.
    /// Rules read it only where no driver and no message gave the level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_driver_cuda: Option<(crate::CudaVersion, String)>,
    /// What the pasted text says goes wrong over several GPUs ("`tf.distribute.MirroredStrategy` is stuck", "DDP
    /// training freezes", "moving a tensor from one GPU to another results in data corruption", simpleP2P's
    /// `Verification error`); `None` for a live machine, or when the text does not say so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multi_gpu_trouble: Option<crate::MultiGpuTrouble>,
    /// The question the pasted text asks whether the machine's CUDA must match (or be installed for) a
    /// framework's build ("Does the CUDA version I have installed on my system need to match the CUDA version of
    /// the torch wheel?"), or its sentence that nvcc's CUDA and nvidia-smi's differ ("CUDA version in nvcc -V and
    /// nvidia-smi different"); `None` for a live machine, or when it says neither.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_cuda_question: Option<String>,
    /// The line where the pasted text says in words that nvidia-smi was not found ("type `nvidia-smi` but
    /// command not found"), where no shell printed it; `None` for a live machine, or when not said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_nvidia_smi_missing: Option<String>,
    /// The line where a build says it builds without CUDA, having found no CUDA in the framework it builds for
    /// ("Torch was not built with CUDA support, not building warp-ctc GPU extensions"); `None` for a live machine, or
    /// when not said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_build_without_cuda: Option<String>,
    /// The line where the text says the work ran on the CPU instead of the GPU ("runs on cpu", "inferring on CPU",
    /// the same in Chinese); `None` for a live machine, or when not said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_cpu_fallback: Option<String>,
    /// The line where the pasted text says M.2 (NVMe) drives are installed ("I have all m.2 nvme slots populated");
    /// `None` for a live machine, or when not said. Read only beside a GPU link narrower than the card: boards
    /// share the GPU slot's lanes with some M.2 sockets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_m2_drives: Option<String>,
    /// The line where the pasted text asks for TensorFlow on the GPU without giving its version ("I can't get
    /// Tensorflow to detect my gpu"); `None` for a live machine, or when not said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_tensorflow_gpu: Option<String>,
    /// The line where the pasted text says the GPU's PCIe link drops to a lower generation while the GPU is idle
    /// ("Observed PCIe link dropping to Gen1 (2.5 GT/s) while idle"); `None` for a live machine, or when not said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_idle_downshift: Option<String>,
    /// The line where the pasted text says the GPU's PCIe link comes down while the GPU is busy ("wait for the PCI
    /// Express lane downgrade to occur" while a game runs); `None` for a live machine, or when not said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_busy_downshift: Option<String>,
    /// The line where the pasted text says the GPU sits behind Thunderbolt or USB4 ("an RTX 4080 SUPER behind an Intel
    /// Thunderbolt 5 dock", "my eGPU"); `None` for a live machine, or when not said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_egpu: Option<String>,
    /// The CUDA toolkit the pasted text says is installed ("I installed the CUDA 12.8 release", "a P6000 GPU with
    /// Cuda 10.1"), with the line; `None` for a live machine, or when not said. Read only against the nvcc a build
    /// is shown running (a distribution's /usr/bin/nvcc): the toolkit meant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_toolkit: Option<(crate::CudaVersion, String)>,
    /// The line where the pasted text asks for CUDA without a program having shown a GPU: an install command that
    /// names a CUDA package beside the framework (`conda install jax cuda-nvcc -c nvidia`), or an issue form's
    /// accelerator answered `GPU` (JAX's bug template); `None` for a live machine, or when not said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_cuda_wanted: Option<String>,
    /// The line of a conda command that installs from conda-forge without asking for a CUDA build (`conda install -c
    /// conda-forge opencv`, `conda create -n x vak -c conda-forge`): conda-forge's solver may pick, or swap in, its CPU
    /// build of pytorch. `None` for a live machine, or when not shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_conda_forge_install: Option<String>,
    /// The line where the pasted text says the nouveau driver is installed, loaded or failing on the machine ("the
    /// machine has nouveau installed", "many errors about nouveau in dmesg"); `None` for a live machine, or when
    /// not said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_nouveau: Option<String>,
    /// The lowest compute capability a program in the pasted text says it needs ("No CUDA device found with
    /// minimum required compute capability 3.5", "the 't' kernel requires 5.0 capability"), with the line; `None`
    /// for a live machine, or when not said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_min_cc: Option<(ComputeCapability, String)>,
    /// The line where the pasted text says a program's GPU numbers and nvidia-smi's (nvtop's, gpustat's) disagree
    /// ("bonito and nvidia-smi do not match the device number"); `None` for a live machine, or when not said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_index_mismatch: Option<String>,
    /// The pasted text's GPUs in CUDA's order (a program's own list: T-Rex's `GPU #0: …`, llama.cpp's `Device 0:
    /// …`) against the same GPUs in PCI order (lspci, `nvidia-smi -L`), where the models' order differs: the two
    /// orders as the text gives them, one sentence; `None` for a live machine, or when not shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listed_order_mismatch: Option<String>,
    /// The line where the pasted text says no GPU was found, in a program's words or a person's ("❌ No GPUs
    /// detected", "GPU not detected"); `None` for a live machine, or when not said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_no_gpu: Option<String>,
    /// The line where the pasted text names the machine's GPU as another vendor's ("I'm using a integrated Intel
    /// GPU(iris xe graphics)"); `None` for a live machine, or when not said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_other_vendor_gpu: Option<String>,
    /// The line where the pasted text says the torch installed is a CPU-only build ("This command installs cpu
    /// version instead of cuda", "replaces it with Torch without CUDA"); `None` for a live machine, or when not
    /// said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_cpu_torch: Option<String>,
    /// Processes nvidia-smi's process table lists on a GPU that a `ps` listing in the same text shows stopped
    /// (state `T`: suspended by job control, or held by a tracer); empty for a live machine, or when not shown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stopped_gpu_processes: Vec<crate::StoppedGpuProcess>,
    /// Error and warning lines from the frameworks and the CUDA runtime found in pasted text, each
    /// matched to a known message. Empty for a live machine.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<ObservedMessage>,
    /// Every method each probe tried, in order.
    pub trace: Vec<TraceEntry>,
    /// What reading another machine's text could not take in whole, one sentence each: text cut at
    /// the size limit, an nvidia-smi XML report cut short, a report from a newer gpu-doctor, values
    /// this version does not know (read as `unknown`). Empty for a live machine.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Snapshot {
    /// A snapshot of another machine where nothing is known yet: every part `unknown`, the platform
    /// `unknown`. Parsers of pasted text fill in what the text says.
    pub fn unknown(formats: Vec<String>) -> Self {
        Self::all_unknown(Origin::Pasted { formats }, "not in the pasted text")
    }

    /// A snapshot of this machine before any probe has answered: every part `unknown` ("still
    /// probing"); `probe::Part::apply` fills it in as the probes finish.
    pub fn pending() -> Self {
        Self::all_unknown(Origin::ThisMachine, "still probing")
    }

    fn all_unknown(origin: Origin, why: &str) -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            tool_version: crate::TOOL_VERSION.to_owned(),
            taken_at_unix_secs: 0,
            origin,
            system: Probed::unknown(why),
            platform: PlatformFacts {
                platform: Platform { os: OsFamily::Unknown, arch: "unknown".to_owned() },
                wsl: None,
                container: None,
            },
            driver: Probed::unknown(why),
            kernel_module: Probed::unknown(why),
            secure_boot: Probed::unknown(why),
            pci_devices: Probed::unknown(why),
            gpus: Probed::unknown(why),
            links: Probed::unknown(why),
            health: Health::unknown(why),
            topology: Probed::unknown(why),
            toolkits: Probed::unknown(why),
            cudnn: Probed::unknown(why),
            python_envs: Probed::unknown(why),
            unused_pythons: Vec::new(),
            env: EnvFacts::default(),
            containers: Probed::unknown(why),
            stated_gpu_count: None,
            stated_gpus_used: None,
            stated_driver_cuda: None,
            multi_gpu_trouble: None,
            stated_nvidia_smi_missing: None,
            stated_build_without_cuda: None,
            stated_cpu_fallback: None,
            stated_m2_drives: None,
            stated_tensorflow_gpu: None,
            stated_idle_downshift: None,
            stated_busy_downshift: None,
            stated_egpu: None,
            stated_toolkit: None,
            stated_cuda_wanted: None,
            stated_conda_forge_install: None,
            stated_nouveau: None,
            stated_min_cc: None,
            stated_index_mismatch: None,
            listed_order_mismatch: None,
            stated_no_gpu: None,
            stated_other_vendor_gpu: None,
            stated_cpu_torch: None,
            stopped_gpu_processes: Vec::new(),
            stated_cuda_question: None,
            messages: Vec::new(),
            trace: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// What a report from before the containers probe says of containers.
fn containers_not_probed() -> Probed<ContainerSupport> {
    Probed::unknown("not probed: written by a gpu-doctor that did not look at containers")
}

/// The topology of a report written before gpu-doctor probed it.
fn topology_not_in_report() -> Probed<Topology> {
    Probed::unknown("not in this report (written before gpu-doctor looked at GPU topology)")
}

/// Where a snapshot's facts came from.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Origin {
    /// The probes ran on this machine (or on a recording of one, under `--replay`).
    #[default]
    ThisMachine,
    /// Read from text pasted from another machine; parts it did not cover are `unknown`.
    Pasted {
        /// The formats recognised in the text, in the order first seen, e.g. `collect_env`, `nvidia-smi table`.
        formats: Vec<String>,
    },
    /// A value this version of gpu-doctor does not know, read from a report written by a newer one.
    #[serde(other)]
    Unknown,
}

impl Origin {
    /// True when the facts describe the machine this program runs on.
    pub fn is_this_machine(&self) -> bool {
        matches!(self, Self::ThisMachine)
    }
}

/// A well-known error or warning line found in pasted text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservedMessage {
    /// The id of the known message it matched (`assets/compat/errors.toml`), e.g. `torch.driver_too_old`.
    pub id: String,
    /// The line as pasted, trimmed.
    pub line: String,
    /// Values the message carries, by name, e.g. `found_version` → `12080`.
    pub values: std::collections::BTreeMap<String, String>,
}
