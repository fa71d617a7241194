//! One GPU as the driver sees it.

use serde::{Deserialize, Deserializer, Serialize};

use super::{ComputeCapability, PciBusId};

/// One GPU. Every `None` means the driver or device did not report it; the trace says why.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Gpu {
    /// Driver index (NVML order).
    pub index: u32,
    /// Product name.
    pub name: Option<String>,
    /// `GPU-…` UUID.
    pub uuid: Option<String>,
    /// PCI bus id in sysfs form, e.g. `0000:01:00.0`.
    pub pci_bus_id: Option<String>,
    /// Compute capability, e.g. 8.9.
    #[serde(default, deserialize_with = "capability_as_text_or_pair")]
    pub compute_capability: Option<ComputeCapability>,
    /// Architecture name from the compute capability, e.g. `Ada Lovelace`.
    pub architecture: Option<String>,
    /// Total memory in bytes.
    pub memory_total_bytes: Option<u64>,
    /// Used memory in bytes.
    pub memory_used_bytes: Option<u64>,
    /// Free memory in bytes.
    pub memory_free_bytes: Option<u64>,
    /// Size of the BAR1 aperture in bytes: the window through which the CPU and other PCIe devices
    /// (a peer GPU, a NIC for GPUDirect RDMA) reach the GPU's memory. 256 MiB without Resizable BAR;
    /// `None` when not read (reports written before gpu-doctor read it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bar1_total_bytes: Option<u64>,
    /// The largest BAR1 size the GPU offers: the top of the supported sizes in its PCIe Resizable BAR
    /// capability (lspci's `Physical Resizable BAR`, `BAR 1: … supported: … 32GB`). Above
    /// `bar1_total_bytes`, the firmware or driver did not resize BAR1; equal to it, the GPU's VBIOS
    /// offers no more. `None` when not read (the live probe does not read it yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bar1_max_bytes: Option<u64>,
    /// PCIe link generation now (drops while idle to save power).
    pub pcie_gen_current: Option<u32>,
    /// Highest PCIe generation for this GPU in this system.
    pub pcie_gen_max: Option<u32>,
    /// PCIe lanes now.
    pub pcie_width_current: Option<u32>,
    /// Most PCIe lanes for this GPU in this system.
    pub pcie_width_max: Option<u32>,
    /// SM clock now, MHz.
    pub clock_sm_mhz: Option<u32>,
    /// Highest SM clock, MHz: on GeForce boards the top of the voltage/frequency table, above the
    /// rated boost clock.
    pub clock_sm_max_mhz: Option<u32>,
    /// The rated boost clock, MHz (NVML's max customer boost clock); `None` when not reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_sm_boost_mhz: Option<u32>,
    /// Memory clock now, MHz.
    pub clock_mem_mhz: Option<u32>,
    /// Highest memory clock, MHz.
    pub clock_mem_max_mhz: Option<u32>,
    /// Memory bus width in bits; with `clock_mem_max_mhz` it gives the theoretical memory bandwidth.
    /// `None` when NVML did not report it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bus_width_bits: Option<u32>,
    /// Power draw, milliwatts.
    pub power_draw_mw: Option<u32>,
    /// Enforced power limit, milliwatts.
    pub power_limit_mw: Option<u32>,
    /// Die temperature, °C.
    pub temperature_c: Option<u32>,
    /// GPU utilization, percent.
    pub utilization_gpu_pct: Option<u32>,
    /// ECC on.
    pub ecc_enabled: Option<bool>,
    /// Persistence mode on.
    pub persistence_mode: Option<bool>,
    /// Compute mode, e.g. `Default`, `ExclusiveProcess`.
    pub compute_mode: Option<String>,
    /// MIG mode on.
    pub mig_enabled: Option<bool>,
    /// A display is attached.
    pub display_attached: Option<bool>,
    /// VBIOS version.
    pub vbios_version: Option<String>,
    /// The board's serial number (NVML `nvmlDeviceGetSerial`; nvidia-smi's `Serial Number`);
    /// `None` where not reported (GeForce boards report none) or in reports written before
    /// gpu-doctor read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// Windows driver model (`WDDM`/`TCC`).
    pub driver_model: Option<String>,
    /// Compute processes running now.
    pub processes: Option<Vec<GpuProcess>>,
}

impl Gpu {
    /// True when `bus_id`, in any spelling [`PciBusId`] reads, names this GPU's PCI address; false
    /// when the GPU has no bus id or either text is not one.
    pub fn has_bus_id(&self, bus_id: &str) -> bool {
        self.pci_bus_id.as_deref().is_some_and(|b| PciBusId::same(b, bus_id))
    }
}

/// A compute capability written as `"8.9"`, or as NVML's `[8, 9]` (recordings made before
/// `NvmlDevice` held a `Gpu`); a negative pair reads as not reported.
fn capability_as_text_or_pair<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ComputeCapability>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written {
        Text(ComputeCapability),
        Pair(i64, i64),
    }
    Ok(match Option::<Written>::deserialize(d)? {
        Some(Written::Text(cc)) => Some(cc),
        Some(Written::Pair(major, minor)) => u32::try_from(major)
            .ok()
            .zip(u32::try_from(minor).ok())
            .map(|(major, minor)| ComputeCapability { major, minor }),
        None => None,
    })
}

/// A process using a GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuProcess {
    /// Process id.
    pub pid: u32,
    /// GPU memory in bytes; `None` under WDDM.
    pub used_memory_bytes: Option<u64>,
}

/// A process on a GPU (nvidia-smi's process table) that `ps` shows stopped, read from pasted text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoppedGpuProcess {
    /// The GPU's index in nvidia-smi's table.
    pub gpu: u32,
    /// Process id.
    pub pid: u32,
    /// GPU memory in bytes, as the process table gives it; `None` where it gives none (WDDM's `N/A`).
    pub used_memory_bytes: Option<u64>,
    /// `ps`'s state (`T`, `Tl`, `t`).
    pub state: String,
    /// `ps`'s line, trimmed.
    pub line: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gpu_is_named_by_its_bus_id_in_any_spelling() {
        let gpu = Gpu { pci_bus_id: Some("0000:3b:00.0".into()), ..Gpu::default() };
        assert!(gpu.has_bus_id("00000000:3B:00.0"), "NVML's spelling");
        assert!(gpu.has_bus_id("0000:3B:00.0"), "CUDA's spelling");
        assert!(!gpu.has_bus_id("0000:3c:00.0"));
        assert!(!gpu.has_bus_id("N/A"));
        assert!(!Gpu::default().has_bus_id("0000:3b:00.0"), "a GPU without a bus id matches none");
    }
}
