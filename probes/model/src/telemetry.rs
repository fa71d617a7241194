//! What NVML says of a GPU at one moment (a telemetry sample), and the names of its clock-event
//! ("throttle") reasons.

use serde::{Deserialize, Serialize};

/// What one GPU reported at one moment. Every `None` means NVML did not answer that question.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GpuTelemetry {
    /// Framebuffer memory in use, bytes.
    pub memory_used_bytes: Option<u64>,
    /// SM clock, MHz.
    pub clock_sm_mhz: Option<u32>,
    /// Memory clock, MHz.
    pub clock_mem_mhz: Option<u32>,
    /// Die temperature, °C.
    pub temperature_c: Option<u32>,
    /// Power draw, milliwatts.
    pub power_draw_mw: Option<u32>,
    /// GPU utilization over NVML's last sample period, percent.
    pub utilization_gpu_pct: Option<u32>,
    /// Memory-controller utilization, percent.
    pub utilization_mem_pct: Option<u32>,
    /// PCIe transmit (GPU to host) throughput, KB/s over a 20 ms window.
    pub pcie_tx_kbps: Option<u32>,
    /// PCIe receive (host to GPU) throughput, KB/s over a 20 ms window.
    pub pcie_rx_kbps: Option<u32>,
    /// PCIe link generation now (it drops while idle); `None` when NVML did not answer, and in runs
    /// saved before gpu-doctor sampled it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_link_gen: Option<u32>,
    /// PCIe lanes now; `None` as for `pcie_link_gen`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_link_width: Option<u32>,
    /// Why clocks are held below their maximum now, as NVML names them in snake case
    /// (`gpu_idle`, `sw_power_cap`, `hw_thermal_slowdown`, …); empty when nothing holds them.
    pub throttle_reasons: Option<Vec<String>>,
}

/// NVML's clock-event ("throttle") reason bits and the names used in reports.
pub const THROTTLE_REASONS: [(u64, &str); 9] = [
    (0x1, "gpu_idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
];

/// The names of the reasons set in an NVML throttle-reason bit mask, in bit order.
pub fn throttle_reason_names(bits: u64) -> Vec<String> {
    THROTTLE_REASONS.iter().filter(|(bit, _)| bits & bit != 0).map(|(_, name)| (*name).to_owned()).collect()
}
