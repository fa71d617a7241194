//! The NVIDIA driver, its kernel module and Secure Boot.

use serde::{Deserialize, Serialize};

use super::{CudaVersion, DriverVersion};

/// The NVIDIA driver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DriverFacts {
    /// Driver version, e.g. `535.86.05`.
    pub version: DriverVersion,
    /// Newest CUDA the driver supports (what `nvidia-smi` prints as "CUDA Version"; not a toolkit).
    /// Where the source did not say (drivers before 410 and `/proc` do not), the newest CUDA release
    /// whose driver is at or below `version` in the knowledge base (`cuda_version_derived`); `None`
    /// when neither tells.
    pub cuda_version: Option<CudaVersion>,
    /// True when `cuda_version` was looked up from `version` in `cuda.toml`, not reported by the driver.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cuda_version_derived: bool,
    /// NVML library version; `None` when NVML was not usable.
    pub nvml_version: Option<String>,
}

impl DriverFacts {
    /// Facts as a source reported them: `cuda_version` is the driver's own word, or `None`.
    pub fn reported(version: DriverVersion, cuda_version: Option<CudaVersion>, nvml_version: Option<String>) -> Self {
        Self { version, cuda_version, cuda_version_derived: false, nvml_version }
    }
}

/// The NVIDIA kernel module on Linux.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelModuleFacts {
    /// `nvidia` is in `/proc/modules`.
    pub nvidia_loaded: bool,
    /// `nouveau` (the open-source driver that blocks NVIDIA's) is in `/proc/modules`.
    pub nouveau_loaded: bool,
    /// Version of the loaded module (`/sys/module/nvidia/version`); `None` when not loaded.
    pub loaded_version: Option<String>,
    /// The loaded module is NVIDIA's open kernel module; `None` when unknown.
    pub open_kernel_module: Option<bool>,
    /// The running kernel release.
    pub running_kernel: Option<String>,
    /// An installed `nvidia` module for the running kernel, as `modinfo` reports it;
    /// `None` when `modinfo` found none or could not run.
    pub installed: Option<InstalledModule>,
    /// Why `installed` is `None`, in one line.
    pub installed_note: Option<String>,
}

/// An `nvidia` module file installed for a kernel (`modinfo nvidia`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstalledModule {
    /// Module file path.
    pub filename: String,
    /// Module version.
    pub version: Option<String>,
    /// Kernel release it was built for (first word of `vermagic`).
    pub built_for_kernel: Option<String>,
    /// Who signed it; `None` when unsigned (Secure Boot then refuses to load it).
    pub signer: Option<String>,
}

/// UEFI Secure Boot state (`mokutil --sb-state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SecureBoot {
    Enabled,
    Disabled,
    /// Not booted through UEFI, so there is no Secure Boot.
    NotEfi,
    /// A value this version of gpu-doctor does not know, read from a report written by a newer one.
    #[serde(other)]
    Unknown,
}
