//! What nvidia-smi reports, in any of its formats (XML, table, CSV), as one shape.
//! OWNER: parsers helper. Fields may be added; do not rename the ones below (gpus.rs uses them).

use serde::{Deserialize, Serialize};

use crate::{CudaVersion, DriverVersion};

/// One nvidia-smi output.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SmiReport {
    /// Driver version; `None` when the output does not show it.
    pub driver_version: Option<DriverVersion>,
    /// The "CUDA Version" line: the newest CUDA the driver supports (not an installed toolkit).
    pub cuda_version: Option<CudaVersion>,
    /// GPUs in output order.
    pub gpus: Vec<SmiGpu>,
}

/// One GPU as nvidia-smi shows it. `None` means the output did not show the value (or said `N/A`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SmiGpu {
    /// Product name.
    pub name: Option<String>,
    /// `GPU-…` UUID.
    pub uuid: Option<String>,
    /// PCI bus id as printed, e.g. `00000000:01:00.0`.
    pub pci_bus_id: Option<String>,
    /// Total memory in MiB.
    pub memory_total_mib: Option<u64>,
    /// Used memory in MiB.
    pub memory_used_mib: Option<u64>,
    /// PCIe generation now.
    pub pcie_gen_current: Option<u32>,
    /// Highest PCIe generation in this system.
    pub pcie_gen_max: Option<u32>,
    /// PCIe lanes now.
    pub pcie_width_current: Option<u32>,
    /// Widest PCIe link in this system.
    pub pcie_width_max: Option<u32>,
    /// MIG mode on now.
    pub mig_enabled: Option<bool>,
}
