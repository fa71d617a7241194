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
    /// PCIe replays since the driver loaded (NVML `nvmlDeviceGetPcieReplayCounter`): link-level
    /// retransmissions after a transfer arrived corrupted. `None` where not reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_replay_count: Option<u64>,
    /// The kernel's PCIe Advanced Error Reporting counters of the GPU's PCI function; `None` where
    /// the kernel exposes none (no AER capability, an old kernel, not Linux).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aer: Option<AerCounters>,
}

/// The kernel's AER statistics of one PCI device, read from `/sys/bus/pci/devices/<dev>/
/// aer_dev_{correctable,nonfatal,fatal}` (Linux 4.19 and later). Each file is one `NAME COUNT`
/// line per error kind and a `TOTAL_ERR_COR`/`TOTAL_ERR_NONFATAL`/`TOTAL_ERR_FATAL` line
/// (`aer_stats_dev_attr` in torvalds/linux:drivers/pci/pcie/aer.c). Every `None` is a file that
/// could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AerCounters {
    /// Correctable errors by kind (`RxErr`, `BadTLP`, `BadDLLP`, …), the total under `TOTAL_ERR_COR`.
    pub correctable: Option<BTreeMap<String, u64>>,
    /// Uncorrectable non-fatal errors by kind, the total under `TOTAL_ERR_NONFATAL`.
    pub nonfatal: Option<BTreeMap<String, u64>>,
    /// Uncorrectable fatal errors by kind, the total under `TOTAL_ERR_FATAL`.
    pub fatal: Option<BTreeMap<String, u64>>,
}

impl AerCounters {
    /// The total of one file's counts: its `TOTAL_…` line, else the sum of the others.
    pub fn total(counts: &BTreeMap<String, u64>) -> u64 {
        counts.iter().find(|(k, _)| k.starts_with("TOTAL_")).map_or_else(|| counts.values().sum(), |(_, v)| *v)
    }

    /// Reads one `aer_dev_*` file's text: `NAME COUNT` lines; `None` when no line reads so.
    pub fn parse(text: &str) -> Option<BTreeMap<String, u64>> {
        let counts: BTreeMap<String, u64> = text
            .lines()
            .filter_map(|l| {
                let mut words = l.split_whitespace();
                let (name, count, rest) = (words.next()?, words.next()?, words.next());
                rest.is_none().then_some(())?;
                Some((name.to_owned(), count.parse().ok()?))
            })
            .collect();
        (!counts.is_empty()).then_some(counts)
    }

    /// The error kinds whose counts rose from `before` to `after` in one file, as `NAME +N`.
    pub fn risen(before: Option<&BTreeMap<String, u64>>, after: Option<&BTreeMap<String, u64>>) -> Vec<String> {
        let (Some(b), Some(a)) = (before, after) else { return Vec::new() };
        a.iter()
            .filter(|(k, _)| !k.starts_with("TOTAL_"))
            .filter_map(|(k, v)| {
                let rose = v.saturating_sub(b.get(k).copied().unwrap_or(0));
                (rose > 0).then(|| format!("{k} +{rose}"))
            })
            .collect()
    }
}

/// The clock-event reasons that mean the GPU is slowed by heat or its power delivery.
const SLOWDOWNS: [&str; 4] = ["hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown"];

/// Whether a clock-event reason (as [`GpuHealth::clock_event_reasons`] and telemetry samples name
/// them) means heat or the power delivery slows the GPU.
pub fn is_slowdown(reason: &str) -> bool {
    SLOWDOWNS.contains(&reason)
}

impl GpuHealth {
    /// The clock-event reasons holding the clocks down now that mean heat or the power delivery
    /// slows the GPU (hardware slowdown, power brake, thermal limits), in `clock_event_reasons`' order.
    pub fn slowdowns(&self) -> Vec<&str> {
        self.clock_event_reasons.iter().flatten().map(String::as_str).filter(|r| is_slowdown(r)).collect()
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

/// What changed between two readings. A count is `None` when it could not be compared (its reason
/// is in `not_read`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EccChange {
    /// New corrected errors.
    pub corrected: Option<u64>,
    /// New uncorrected errors.
    pub uncorrected: Option<u64>,
    /// Newly retired pages.
    pub retired_pages: Option<u64>,
    /// Newly remapped rows.
    pub remapped_rows: Option<u64>,
    /// A page retirement or row remap became pending.
    pub newly_pending: bool,
    /// A row remap failed that had not before.
    pub remap_failed: bool,
    /// What could not be compared, and why, e.g. `corrected errors: not supported by this GPU`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_read: Vec<String>,
}

impl EccChange {
    /// The change from `before` to `after`. For the error counts, the larger of the volatile and
    /// aggregate differences: the volatile count restarts when the driver reloads, and the
    /// aggregate one may be written to the board's storage later.
    pub fn between(before: &EccCounters, after: &EccCounters) -> Self {
        let (b, a) = (before, after);
        let mut not_read = Vec::new();
        // The change of two counters (`x` and `y`) combined with `f`, or of the one that was read;
        // when neither was, why, under `key`.
        type Counter = fn(&EccCounters) -> Option<u64>;
        let mut change = |what: &str, key: &str, x: Counter, y: Counter, f: fn(u64, u64) -> u64| {
            let d = |c: Counter| Some(c(a)?.saturating_sub(c(b)?));
            let value = either(d(x), d(y), f);
            if value.is_none() {
                let why = a.unreported.get(key).or_else(|| b.unreported.get(key));
                not_read.push(format!("{what}: {}", why.map_or("not reported", String::as_str)));
            }
            value
        };
        let corrected = change(
            "corrected errors",
            "corrected_volatile",
            |c| c.corrected_volatile,
            |c| c.corrected_aggregate,
            u64::max,
        );
        let uncorrected = change(
            "uncorrected errors",
            "uncorrected_volatile",
            |c| c.uncorrected_volatile,
            |c| c.uncorrected_aggregate,
            u64::max,
        );
        let retired_pages = change(
            "retired pages",
            "retired_pages_single_bit",
            |c| c.retired_pages_single_bit,
            |c| c.retired_pages_double_bit,
            u64::saturating_add,
        );
        let remapped_rows = change(
            "remapped rows",
            "remapped_rows_corrected",
            |c| c.remapped_rows_corrected,
            |c| c.remapped_rows_uncorrected,
            u64::saturating_add,
        );
        let became = |b: Option<bool>, a: Option<bool>| a == Some(true) && b != Some(true);
        Self {
            corrected,
            uncorrected,
            retired_pages,
            remapped_rows,
            newly_pending: became(b.retired_pages_pending, a.retired_pages_pending)
                || became(b.remapped_rows_pending, a.remapped_rows_pending),
            remap_failed: became(b.remapped_rows_failure, a.remapped_rows_failure),
            not_read,
        }
    }

    /// Nothing could be compared, for `reason` (NVML could not be asked).
    pub fn unread(reason: &str) -> Self {
        Self { not_read: vec![format!("memory-error counters: {reason}")], ..Self::default() }
    }

    /// Whether any counter was compared.
    pub fn compared(&self) -> bool {
        self.corrected.is_some()
            || self.uncorrected.is_some()
            || self.retired_pages.is_some()
            || self.remapped_rows.is_some()
    }

    /// Memory failed: a new uncorrectable error, retired page or remapped row (or one pending, or a
    /// failed remap).
    pub fn failed(&self) -> bool {
        self.uncorrected.unwrap_or(0) > 0
            || self.retired_pages.unwrap_or(0) > 0
            || self.remapped_rows.unwrap_or(0) > 0
            || self.newly_pending
            || self.remap_failed
    }

    /// The changes in words, e.g. `3 corrected errors, 0 uncorrected errors, …`.
    pub fn summary(&self) -> String {
        let mut parts: Vec<String> = [
            (self.corrected, "corrected errors"),
            (self.uncorrected, "uncorrected errors"),
            (self.retired_pages, "retired pages"),
            (self.remapped_rows, "remapped rows"),
        ]
        .into_iter()
        .filter_map(|(n, what)| n.map(|n| format!("{n} new {what}")))
        .collect();
        if self.newly_pending {
            parts.push("a page retirement or row remap is pending (it needs a GPU reset)".to_owned());
        }
        if self.remap_failed {
            parts.push("a row remap failed".to_owned());
        }
        parts.extend(self.not_read.iter().map(|n| format!("not read: {n}")));
        parts.join("; ")
    }
}

/// `f` of both values, or the one there is.
fn either(x: Option<u64>, y: Option<u64>, f: fn(u64, u64) -> u64) -> Option<u64> {
    match (x, y) {
        (Some(x), Some(y)) => Some(f(x, y)),
        (x, y) => x.or(y),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `aer_dev_correctable` as Linux 6.x prints it: the kernel's names of the correctable error
    /// bits (`aer_correctable_error_string`), then the total (`aer_stats_dev_attr`,
    /// torvalds/linux:drivers/pci/pcie/aer.c).
    const CORRECTABLE: &str = "RxErr 0\nBadTLP 3\nBadDLLP 1\nRollover 0\nTimeout 0\nNonFatalErr 0\n\
        CorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR 4\n";
    /// `aer_dev_nonfatal` (the uncorrectable error bits' names, then the total).
    const NONFATAL: &str = "Undefined 0\nDLP 0\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 0\nCmpltAbrt 0\nUnxCmplt 0\n\
        RxOF 0\nMalfTLP 0\nECRC 0\nUnsupReq 0\nACSViol 0\nUncorrIntErr 0\nBlockedTLP 0\n\
        AtomicOpBlocked 0\nTLPBlockedErr 0\nPoisonTLPBlocked 0\nTOTAL_ERR_NONFATAL 0\n";

    #[test]
    fn aer_files_read_as_counts_with_their_total() {
        let cor = AerCounters::parse(CORRECTABLE).unwrap();
        assert_eq!(cor.get("BadTLP"), Some(&3));
        assert_eq!(AerCounters::total(&cor), 4, "the kernel's TOTAL_ line");
        let nonfatal = AerCounters::parse(NONFATAL).unwrap();
        assert_eq!(nonfatal.len(), 19);
        assert_eq!(AerCounters::total(&nonfatal), 0);
        let no_total = AerCounters::parse("RxErr 2\nBadTLP 1\n").unwrap();
        assert_eq!(AerCounters::total(&no_total), 3, "without a TOTAL_ line, the sum");
        assert_eq!(AerCounters::parse(""), None);
        assert_eq!(AerCounters::parse("not a counter line\n"), None);
    }

    #[test]
    fn aer_kinds_that_rose_are_named() {
        let before = AerCounters::parse(CORRECTABLE).unwrap();
        let after =
            AerCounters::parse(&CORRECTABLE.replace("BadTLP 3", "BadTLP 5").replace("_COR 4", "_COR 6")).unwrap();
        assert_eq!(AerCounters::risen(Some(&before), Some(&after)), ["BadTLP +2"]);
        assert!(AerCounters::risen(Some(&before), Some(&before)).is_empty());
        assert!(AerCounters::risen(None, Some(&after)).is_empty(), "nothing to compare with");
    }
}
