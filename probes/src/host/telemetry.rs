//! Live GPU telemetry from NVML: one small sample per call, cheap enough for 10 samples a second,
//! so a benchmark can plot memory, clocks, temperature and power over time.
//!
//! NVML is safe to ask in-process: without a driver `Nvml::init` returns an error, which is kept.

use nvml_wrapper::enum_wrappers::device::{Clock, PcieUtilCounter, TemperatureSensor};
use serde::{Deserialize, Serialize};

use super::HostError;
use super::nvml::nvml;

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

/// How much to ask: a card shows memory, clocks, temperature, power, utilization and throttle
/// reasons; the full sample adds the two PCIe counters, which take 20 ms each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// Without the PCIe counters (the Overview's cards).
    Card,
    /// Everything (the Telemetry page, benchmarks).
    Full,
}

/// True when the kernel has put the PCI device at `bus_id` into runtime suspend (a laptop's
/// discrete GPU with nothing on it). Asking NVML about it would wake it, so a sampler skips it, as
/// `bottom` does. Reads `/sys/bus/pci/devices/BUS/power/runtime_status`; false where there is no
/// such file (other systems, or no runtime power management).
pub fn runtime_suspended(bus_id: &str) -> bool {
    let Ok(bus) = crate::model::PciBusId::parse(bus_id) else { return false };
    std::fs::read_to_string(format!("/sys/bus/pci/devices/{bus}/power/runtime_status"))
        .is_ok_and(|status| status.trim() == "suspended")
}

/// Asks NVML about GPU `index` (NVML order) now. Takes about 40 ms: the two PCIe counters each
/// average over 20 ms.
pub fn sample(index: u32) -> Result<GpuTelemetry, HostError> {
    sample_detail(index, Detail::Full)
}

/// `sample`, asking only what `detail` needs.
pub fn sample_detail(index: u32, detail: Detail) -> Result<GpuTelemetry, HostError> {
    let nvml = nvml()?;
    let d = nvml
        .device_by_index(index)
        .map_err(|e| HostError::Unavailable { message: format!("NVML has no GPU {index}: {e}") })?;
    Ok(read(&d, detail))
}

/// Asks NVML about the GPU at PCI bus id `bus` now: the one a benchmark worker opened by that bus
/// id, whatever the indices under `CUDA_VISIBLE_DEVICES`.
pub fn sample_bus(bus: &str, detail: Detail) -> Result<GpuTelemetry, HostError> {
    let nvml = nvml()?;
    let d = nvml
        .device_by_pci_bus_id(bus)
        .map_err(|e| HostError::Unavailable { message: format!("NVML has no GPU at PCI {bus}: {e}") })?;
    Ok(read(&d, detail))
}

fn read(d: &nvml_wrapper::Device<'_>, detail: Detail) -> GpuTelemetry {
    let utilization = d.utilization_rates().ok();
    GpuTelemetry {
        memory_used_bytes: d.memory_info().ok().map(|m| m.used),
        clock_sm_mhz: d.clock_info(Clock::SM).ok(),
        clock_mem_mhz: d.clock_info(Clock::Memory).ok(),
        temperature_c: d.temperature(TemperatureSensor::Gpu).ok(),
        power_draw_mw: d.power_usage().ok(),
        utilization_gpu_pct: utilization.as_ref().map(|u| u.gpu),
        utilization_mem_pct: utilization.as_ref().map(|u| u.memory),
        pcie_tx_kbps: (detail == Detail::Full).then(|| d.pcie_throughput(PcieUtilCounter::Send).ok()).flatten(),
        pcie_rx_kbps: (detail == Detail::Full).then(|| d.pcie_throughput(PcieUtilCounter::Receive).ok()).flatten(),
        throttle_reasons: d.current_throttle_reasons().ok().map(|r| throttle_reason_names(r.bits())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttle_bits_name_the_reasons() {
        assert!(throttle_reason_names(0).is_empty());
        assert_eq!(throttle_reason_names(0x4 | 0x40), ["sw_power_cap", "hw_thermal_slowdown"]);
        assert_eq!(throttle_reason_names(0x1_0000_0000), Vec::<String>::new());
    }
}
