//! NVML answers as plain data, so that replay and recording can carry them.
//!
//! `query()` asks the real library one function at a time: a function that an old driver lacks
//! (or that a GPU does not support) leaves its field `None` and notes why in `unreported`,
//! so everything else is still reported.

use std::collections::BTreeMap;

use nvml_wrapper::Device;
use nvml_wrapper::enum_wrappers::device::{Clock, PcieUtilCounter, TemperatureSensor, TemperatureThreshold};
use nvml_wrapper::enums::device::UsedGpuMemory;
use serde::{Deserialize, Serialize};

use super::HostError;
use super::nvml_handle::{nvml, take};
use super::nvml_topology::MigAsked;
use gpu_doctor_model::ComputeCapability;
use gpu_doctor_model::{Gpu, GpuHealth, GpuProcess};

/// What NVML said about the driver and every device.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NvmlReport {
    /// `nvmlSystemGetDriverVersion`, e.g. `535.86.05`.
    pub driver_version: Option<String>,
    /// `nvmlSystemGetCudaDriverVersion_v2`: the newest CUDA the driver supports, e.g. `12020`.
    pub cuda_driver_version: Option<i32>,
    /// `nvmlSystemGetNVMLVersion`.
    pub nvml_version: Option<String>,
    /// One entry per device index.
    pub devices: Vec<NvmlDevice>,
    /// System-level functions that did not answer, with NVML's reason.
    pub unreported: BTreeMap<String, String>,
    /// How the devices connect (pairs, NUMA, CPU affinity, NVLink, MIG); `None` in recordings made
    /// before gpu-doctor asked, where the topology probe falls back to nvidia-smi.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<super::nvml_topology::NvmlTopology>,
}

/// What NVML said about one device. Every `None` has its reason in `unreported`.
///
/// `gpu` holds every fact the probes keep, as NVML answered it: the bus id in NVML's spelling
/// (`00000000:01:00.0`), no architecture (the gpus probe names both). Its fields are written inline,
/// beside NVML's own extras, as before `gpu` held them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NvmlDevice {
    /// The device as the probes keep it.
    #[serde(flatten)]
    pub gpu: Gpu,
    /// Combined device and vendor id, e.g. `0x268410DE`.
    pub pci_device_id: Option<u32>,
    /// PCIe transmit throughput in KB/s (20 ms window).
    pub pcie_tx_kbps: Option<u32>,
    /// PCIe receive throughput in KB/s.
    pub pcie_rx_kbps: Option<u32>,
    /// Memory-controller utilization in percent.
    pub utilization_mem_pct: Option<u32>,
    /// Memory errors, clock-event reasons and limits; `None` in recordings made before gpu-doctor
    /// read them (the health probe then says so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<GpuHealth>,
    /// Functions that did not answer for this device, with NVML's reason.
    pub unreported: BTreeMap<String, String>,
}

/// Asks the real NVML everything the probes use.
pub(crate) fn query() -> Result<NvmlReport, HostError> {
    let nvml = nvml()?;
    let mut report = NvmlReport::default();
    let u = &mut report.unreported;
    report.driver_version = take(u, "driver_version", nvml.sys_driver_version());
    report.cuda_driver_version = take(u, "cuda_driver_version", nvml.sys_cuda_driver_version());
    report.nvml_version = take(u, "nvml_version", nvml.sys_nvml_version());
    let count = nvml
        .device_count()
        .map_err(|e| HostError::Unavailable { message: format!("NVML could not count devices: {e}") })?;
    let mut handles = Vec::new();
    for index in 0..count {
        match nvml.device_by_index(index) {
            Ok(device) => {
                report.devices.push(query_device(index, &device));
                handles.push((index, device));
            }
            Err(e) => {
                report.unreported.insert(format!("device {index}"), e.to_string());
            }
        }
    }
    let mig: Vec<MigAsked> = report
        .devices
        .iter()
        .map(|d| MigAsked { enabled: d.gpu.mig_enabled, unreported: d.unreported.get("mig_mode").cloned() })
        .collect();
    report.topology = Some(super::nvml_topology::query(&handles, &mig));
    Ok(report)
}

fn query_device(index: u32, d: &Device<'_>) -> NvmlDevice {
    let mut u = BTreeMap::new();
    let pci = take(&mut u, "pci_info", d.pci_info());
    let memory = take(&mut u, "memory_info", d.memory_info());
    let utilization = take(&mut u, "utilization_rates", d.utilization_rates());
    let processes = d.running_compute_processes().or_else(|_| d.running_compute_processes_v2());
    let gpu = Gpu {
        index,
        name: take(&mut u, "name", d.name()),
        uuid: take(&mut u, "uuid", d.uuid()),
        pci_bus_id: pci.as_ref().map(|p| p.bus_id.clone()),
        compute_capability: take(&mut u, "cuda_compute_capability", d.cuda_compute_capability()).and_then(|c| {
            Some(ComputeCapability { major: u32::try_from(c.major).ok()?, minor: u32::try_from(c.minor).ok()? })
        }),
        architecture: None,
        memory_total_bytes: memory.as_ref().map(|m| m.total),
        memory_used_bytes: memory.as_ref().map(|m| m.used),
        memory_free_bytes: memory.as_ref().map(|m| m.free),
        bar1_total_bytes: take(&mut u, "bar1_memory_info", d.bar1_memory_info()).map(|b| b.total),
        // NVML and nvidia-smi do not report the Resizable BAR capability's sizes.
        bar1_max_bytes: None,
        pcie_gen_current: take(&mut u, "current_pcie_link_gen", d.current_pcie_link_gen()),
        pcie_gen_max: take(&mut u, "max_pcie_link_gen", d.max_pcie_link_gen()),
        pcie_width_current: take(&mut u, "current_pcie_link_width", d.current_pcie_link_width()),
        pcie_width_max: take(&mut u, "max_pcie_link_width", d.max_pcie_link_width()),
        clock_sm_mhz: take(&mut u, "clock_info_sm", d.clock_info(Clock::SM)),
        clock_sm_max_mhz: take(&mut u, "max_clock_info_sm", d.max_clock_info(Clock::SM)),
        clock_sm_boost_mhz: take(
            &mut u,
            "max_customer_boost_clock",
            d.max_customer_boost_clock(Clock::SM).or_else(|_| d.max_customer_boost_clock(Clock::Graphics)),
        ),
        clock_mem_mhz: take(&mut u, "clock_info_mem", d.clock_info(Clock::Memory)),
        clock_mem_max_mhz: take(&mut u, "max_clock_info_mem", d.max_clock_info(Clock::Memory)),
        memory_bus_width_bits: take(&mut u, "memory_bus_width", d.memory_bus_width()),
        power_draw_mw: take(&mut u, "power_usage", d.power_usage()),
        power_limit_mw: take(&mut u, "enforced_power_limit", d.enforced_power_limit()),
        temperature_c: take(&mut u, "temperature", d.temperature(TemperatureSensor::Gpu)),
        utilization_gpu_pct: utilization.as_ref().map(|x| x.gpu),
        ecc_enabled: take(&mut u, "is_ecc_enabled", d.is_ecc_enabled()).map(|e| e.currently_enabled),
        persistence_mode: take(&mut u, "is_in_persistent_mode", d.is_in_persistent_mode()),
        compute_mode: take(&mut u, "compute_mode", d.compute_mode()).map(|m| format!("{m:?}")),
        mig_enabled: take(&mut u, "mig_mode", d.mig_mode()).map(|m| m.current == 1),
        display_attached: take(&mut u, "is_display_connected", d.is_display_connected()),
        vbios_version: take(&mut u, "vbios_version", d.vbios_version()),
        serial: take(&mut u, "serial", d.serial()),
        driver_model: driver_model(&mut u, d),
        processes: take(&mut u, "running_compute_processes", processes).map(|ps| {
            ps.into_iter()
                .map(|p| GpuProcess {
                    pid: p.pid,
                    used_memory_bytes: match p.used_gpu_memory {
                        UsedGpuMemory::Used(b) => Some(b),
                        UsedGpuMemory::Unavailable => None,
                    },
                })
                .collect()
        }),
    };
    let health = health(&mut u, d, &gpu);
    NvmlDevice {
        gpu,
        health: Some(health),
        pci_device_id: pci.as_ref().map(|p| p.pci_device_id),
        pcie_tx_kbps: take(&mut u, "pcie_throughput_tx", d.pcie_throughput(PcieUtilCounter::Send)),
        pcie_rx_kbps: take(&mut u, "pcie_throughput_rx", d.pcie_throughput(PcieUtilCounter::Receive)),
        utilization_mem_pct: utilization.as_ref().map(|x| x.memory),
        unreported: u,
    }
}

/// The device's health: the memory-error counters (`ecc::read`), clock-event reasons, power limits,
/// fan and temperature thresholds; what did not answer goes into `u`.
fn health(u: &mut BTreeMap<String, String>, d: &Device<'_>, gpu: &Gpu) -> GpuHealth {
    let constraints = take(u, "power_management_limit_constraints", d.power_management_limit_constraints());
    let threshold = |u: &mut BTreeMap<String, String>, name: &str, t: TemperatureThreshold| {
        take(u, name, d.temperature_threshold(t))
    };
    GpuHealth {
        index: gpu.index,
        pci_bus_id: gpu.pci_bus_id.clone(),
        ecc_pending: take(u, "ecc_pending", d.is_ecc_enabled()).map(|e| e.pending_enabled),
        memory_errors: super::ecc::read(d),
        clock_event_reasons: take(u, "current_throttle_reasons", d.current_throttle_reasons())
            .map(|r| gpu_doctor_model::telemetry::throttle_reason_names(r.bits())),
        power_limit_default_mw: take(u, "power_management_limit_default", d.power_management_limit_default()),
        power_limit_min_mw: constraints.as_ref().map(|c| c.min_limit),
        power_limit_max_mw: constraints.as_ref().map(|c| c.max_limit),
        fan_speed_pct: take(u, "fan_speed", d.fan_speed(0)),
        temperature_slowdown_c: threshold(u, "temperature_threshold_slowdown", TemperatureThreshold::Slowdown),
        temperature_shutdown_c: threshold(u, "temperature_threshold_shutdown", TemperatureThreshold::Shutdown),
        pcie_replay_count: take(u, "pcie_replay_counter", d.pcie_replay_counter()).map(u64::from),
        // Read from sysfs through the Host by the health probe, so that a replay answers it too.
        aer: None,
    }
}

#[cfg(windows)]
fn driver_model(u: &mut BTreeMap<String, String>, d: &Device<'_>) -> Option<String> {
    take(u, "driver_model", d.driver_model()).map(|m| format!("{:?}", m.current))
}

/// Linux has no driver models.
#[cfg(not(windows))]
fn driver_model(_: &mut BTreeMap<String, String>, _: &Device<'_>) -> Option<String> {
    None
}
