//! `Snapshot`: everything the probes found, as plain serde data.

use serde::{Deserialize, Serialize};

use crate::probe::{cudnn, driver, env, gpus, link, pci, platform, python, system, toolkits};
use crate::{Probed, TraceEntry};

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
    /// OS, kernel, CPU and memory.
    pub system: Probed<system::SystemFacts>,
    /// OS family, WSL and container.
    pub platform: platform::PlatformFacts,
    /// The NVIDIA driver: version, the CUDA level it supports, its kernel module.
    pub driver: Probed<driver::DriverFacts>,
    /// The NVIDIA kernel module: loaded, nouveau, built for the running kernel (Linux).
    pub kernel_module: Probed<driver::KernelModuleFacts>,
    /// UEFI Secure Boot, which refuses unsigned kernel modules (Linux, where `mokutil` exists).
    pub secure_boot: Probed<driver::SecureBoot>,
    /// NVIDIA display and 3D controllers on the PCI bus, with the driver bound to each.
    pub pci_devices: Probed<Vec<pci::PciDevice>>,
    /// GPUs as the driver sees them.
    pub gpus: Probed<Vec<gpus::Gpu>>,
    /// Each GPU's path to the CPU: PCIe link, Thunderbolt tunnel, theoretical bandwidth.
    pub links: Probed<Vec<link::HostLink>>,
    /// Every CUDA toolkit found, and which one each variable picks.
    pub toolkits: Probed<toolkits::Toolkits>,
    /// Every copy of cuDNN found.
    pub cudnn: Probed<Vec<cudnn::CudnnCopy>>,
    /// Python environments and the GPU frameworks in them.
    pub python_envs: Probed<Vec<python::PythonEnv>>,
    /// CUDA-relevant environment variables.
    pub env: env::EnvFacts,
    /// Every method each probe tried, in order.
    pub trace: Vec<TraceEntry>,
}
