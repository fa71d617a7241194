//! Each GPU's health: memory errors, what holds its clocks down now, its limits; and the kernel
//! log's Xid events. ECC mode now, persistence mode, compute mode, the enforced power limit and the
//! temperature now are plain fields of [`super::Gpu`]; they are not repeated here.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{PciBusId, Probed};

/// The health part of a snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Health {
    /// One entry per GPU the driver answered for, in index order.
    pub gpus: Probed<Vec<GpuHealth>>,
    /// The NVIDIA driver's `Xid` lines in the kernel log since boot; `Absent` with the reason
    /// where the log could not be read (`dmesg_restrict`, no permission, not Linux).
    pub xid_events: Probed<Vec<XidEvent>>,
}

impl Health {
    /// Health nobody looked at, for `why`.
    pub fn unknown(why: &str) -> Self {
        Self { gpus: Probed::unknown(why), xid_events: Probed::unknown(why) }
    }
}

impl Default for Health {
    /// What a snapshot written before gpu-doctor read GPU health holds.
    fn default() -> Self {
        Self::unknown("not read by the gpu-doctor that wrote this report")
    }
}

/// One GPU's health. Every `None` means the driver or the device did not report it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GpuHealth {
    /// Driver index (NVML order), as [`super::Gpu::index`].
    pub index: u32,
    /// PCI bus id in sysfs form, e.g. `0000:01:00.0`.
    pub pci_bus_id: Option<String>,
    /// ECC mode after the next reboot (`nvidia-smi -e` changes it); `Gpu::ecc_enabled` is the mode now.
    pub ecc_pending: Option<bool>,
    /// Memory-error counters, retired pages (Volta and earlier) and remapped rows (Ampere and later).
    pub memory_errors: EccCounters,
    /// Why the clocks are held below their maximum now, named as
    /// `host::telemetry::THROTTLE_REASONS` names NVML's bits (`gpu_idle`, `sw_power_cap`,
    /// `hw_slowdown`, `hw_thermal_slowdown`, `sw_thermal_slowdown`, …); empty when nothing holds them.
    pub clock_event_reasons: Option<Vec<String>>,
    /// The board's default power limit, milliwatts (`Gpu::power_limit_mw` is the one enforced now).
    pub power_limit_default_mw: Option<u32>,
    /// The lowest power limit that can be set, milliwatts.
    pub power_limit_min_mw: Option<u32>,
    /// The highest power limit that can be set, milliwatts.
    pub power_limit_max_mw: Option<u32>,
    /// Fan speed, percent of the fan's maximum; `None` on passively cooled boards.
    pub fan_speed_pct: Option<u32>,
    /// Temperature at which the hardware slows the GPU down, °C.
    pub temperature_slowdown_c: Option<u32>,
    /// Temperature at which the GPU shuts down to protect itself, °C.
    pub temperature_shutdown_c: Option<u32>,
}

/// The clock-event reasons that mean the GPU is slowed by heat or its power delivery.
const SLOWDOWNS: [&str; 4] = ["hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown"];

impl GpuHealth {
    /// The clock-event reasons holding the clocks down now that mean heat or the power delivery
    /// slows the GPU (hardware slowdown, power brake, thermal limits), in `clock_event_reasons`' order.
    pub fn slowdowns(&self) -> Vec<&str> {
        self.clock_event_reasons.iter().flatten().map(String::as_str).filter(|r| SLOWDOWNS.contains(r)).collect()
    }
}

/// What NVML (or nvidia-smi) said about one GPU's memory errors at one moment. Every `None` has
/// the reason in `unreported` where NVML was asked ("not supported by this GPU" on boards without
/// ECC). The benchmark reads it before and after its memory test (`host::ecc`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EccCounters {
    /// ECC is on now.
    pub ecc_enabled: Option<bool>,
    /// Corrected (single-bit) errors since the driver loaded.
    pub corrected_volatile: Option<u64>,
    /// Corrected errors over the board's life.
    pub corrected_aggregate: Option<u64>,
    /// Uncorrected (double-bit) errors since the driver loaded.
    pub uncorrected_volatile: Option<u64>,
    /// Uncorrected errors over the board's life.
    pub uncorrected_aggregate: Option<u64>,
    /// Pages retired after repeated single-bit errors (pending ones included).
    pub retired_pages_single_bit: Option<u64>,
    /// Pages retired after a double-bit error (pending ones included).
    pub retired_pages_double_bit: Option<u64>,
    /// Pages wait for a reset to be retired.
    pub retired_pages_pending: Option<bool>,
    /// Rows remapped after correctable errors.
    pub remapped_rows_corrected: Option<u64>,
    /// Rows remapped after uncorrectable errors.
    pub remapped_rows_uncorrected: Option<u64>,
    /// A remapping waits for a reset.
    pub remapped_rows_pending: Option<bool>,
    /// A remapping failed (no spare row left).
    pub remapped_rows_failure: Option<bool>,
    /// Counters that did not answer, with NVML's reason.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unreported: BTreeMap<String, String>,
}

impl EccCounters {
    /// A page retirement or a row remap waits for a GPU reset.
    pub fn repair_pending(&self) -> bool {
        self.remapped_rows_pending == Some(true) || self.retired_pages_pending == Some(true)
    }
}

/// One `NVRM: Xid` line of the kernel log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct XidEvent {
    /// The Xid number, e.g. 79.
    pub xid: u32,
    /// The GPU's PCI bus id in sysfs form (`0000:01:00.0`; the driver prints it without the
    /// function, which is 0 for a GPU); `None` when the line's address does not read as one.
    pub pci_bus_id: Option<String>,
    /// The line as the kernel log holds it, trimmed.
    pub line: String,
}

impl XidEvent {
    /// True when the event names the GPU at `bus_id` (any spelling [`PciBusId`] reads).
    pub fn is_on(&self, bus_id: &str) -> bool {
        self.pci_bus_id.as_deref().is_some_and(|b| PciBusId::same(b, bus_id))
    }
}
