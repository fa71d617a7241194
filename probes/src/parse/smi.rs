//! What nvidia-smi reports, in any of its formats (XML, table, CSV), as one shape.
//!
//! The small helpers here read nvidia-smi's value spellings (`N/A`, `[Not Supported]`,
//! `24564 MiB`, `123.45 W`, `16x`, `Enabled`) the same way for every format.

use serde::{Deserialize, Serialize};

use gpu_doctor_model::GpuHealth;
use gpu_doctor_model::{CudaVersion, DriverVersion};

/// One nvidia-smi output.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SmiReport {
    /// Driver version; `None` when the output does not show it.
    pub driver_version: Option<DriverVersion>,
    /// The "CUDA Version" line: the newest CUDA the driver supports (not an installed toolkit).
    pub cuda_version: Option<CudaVersion>,
    /// The version of the nvidia-smi binary itself (table header `NVIDIA-SMI 555.42.06`). Under
    /// WSL2 it differs from the (Windows) driver version. `None` when the output does not show it.
    pub nvidia_smi_version: Option<String>,
    /// GPUs in output order.
    pub gpus: Vec<SmiGpu>,
}

/// One GPU as nvidia-smi shows it. `None` means the output did not show the value (or said `N/A`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SmiGpu {
    /// Product name. The default table cuts long names and ends them with `...`.
    pub name: Option<String>,
    /// `GPU-…` UUID.
    pub uuid: Option<String>,
    /// PCI bus id as printed, e.g. `00000000:01:00.0`.
    pub pci_bus_id: Option<String>,
    /// Total memory in MiB.
    pub memory_total_mib: Option<u64>,
    /// Used memory in MiB.
    pub memory_used_mib: Option<u64>,
    /// Size of the BAR1 aperture in MiB (`BAR1 Memory Usage`, `Total`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bar1_total_mib: Option<u64>,
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
    /// Compute mode as `nvidia-smi -q` spells it: `Default`, `Exclusive_Process`,
    /// `Exclusive_Thread` or `Prohibited` (the table's `E. Process` is mapped to `Exclusive_Process`).
    pub compute_mode: Option<String>,
    /// Persistence mode on (Linux; Windows shows `N/A`).
    pub persistence_mode: Option<bool>,
    /// Windows driver model now: `WDDM`, `TCC` or `MCDM`; `None` on Linux.
    pub driver_model: Option<String>,
    /// A display is attached to (or active on) this GPU: XML `display_attached`, else
    /// `display_active`; the table's `Disp.A` column.
    pub display_attached: Option<bool>,
    /// VBIOS version text, e.g. `94.02.6D.00.0D`.
    pub vbios_version: Option<String>,
    /// GPU die temperature, degrees Celsius.
    pub temperature_c: Option<u32>,
    /// Power draw, milliwatts (nvidia-smi prints watts).
    pub power_draw_mw: Option<u32>,
    /// Enforced power limit, milliwatts (nvidia-smi prints watts).
    pub power_limit_mw: Option<u32>,
    /// SM clock now, MHz.
    pub clock_sm_mhz: Option<u32>,
    /// Highest SM clock, MHz.
    pub clock_sm_max_mhz: Option<u32>,
    /// Memory clock now, MHz.
    pub clock_mem_mhz: Option<u32>,
    /// Highest memory clock, MHz.
    pub clock_mem_max_mhz: Option<u32>,
    /// GPU utilization, percent (0–100).
    pub utilization_gpu_pct: Option<u32>,
    /// ECC mode on now.
    pub ecc_enabled: Option<bool>,
    /// Compute capability as printed, e.g. `9.0` (CSV `compute_cap`; most XML schemas lack it).
    pub compute_capability: Option<String>,
    /// Processes using this GPU, as listed (XML `processes`, the table's process box).
    pub processes: Vec<SmiProcess>,
    /// Memory errors, clock-event reasons and limits (`-q` and XML only); its index and bus id are
    /// left for the caller.
    #[serde(default)]
    pub health: GpuHealth,
}

/// A process using a GPU, as nvidia-smi lists it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SmiProcess {
    /// Process id (on Windows/WSL, a host pid).
    pub pid: u32,
    /// GPU memory the process uses, MiB; `None` under WDDM, where nvidia-smi says `N/A`.
    pub used_memory_mib: Option<u64>,
}

/// Spellings nvidia-smi uses for "no value" (compared without brackets, ignoring case).
const NO_VALUE: &[&str] = &[
    "n/a",
    "na",
    "not supported",
    "not available",
    "unknown",
    "unknown error",
    "insufficient permissions",
    "requested functionality has been deprecated",
    "gpu is lost",
    "gpu requires reset",
    "no data",
    "none",
    "",
];

/// The value of a cell or element: trimmed, or `None` for `N/A`, `[N/A]`, `[Not Supported]`,
/// `Requested functionality has been deprecated` and the like.
pub(crate) fn value(raw: &str) -> Option<&str> {
    let t = raw.trim();
    let inner = t.strip_prefix('[').and_then(|s| s.strip_suffix(']')).unwrap_or(t).trim();
    if NO_VALUE.iter().any(|n| inner.eq_ignore_ascii_case(n)) { None } else { Some(t) }
}

/// `raw` without an optional unit suffix (`24564 MiB`, `42C`, `16x`, `0 %`), as a trimmed number text.
fn strip_unit<'a>(raw: &'a str, unit: &str) -> Option<&'a str> {
    let t = value(raw)?;
    let t = t.strip_suffix(unit).unwrap_or(t).trim_end();
    if t.is_empty() { None } else { Some(t) }
}

/// A whole number with an optional unit suffix: `("24564 MiB", "MiB")` → 24564.
pub(crate) fn int_with_unit<T: std::str::FromStr>(raw: &str, unit: &str) -> Option<T> {
    let t = strip_unit(raw, unit)?;
    if !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

/// Memory in MiB: `24564 MiB`, `24564MiB` or `24564`.
pub(crate) fn mib(raw: &str) -> Option<u64> {
    int_with_unit(raw, "MiB")
}

/// Watts as printed (`123.45 W`, `98W`, `28.16`) → whole milliwatts, rounded down past three decimals.
pub(crate) fn watts_to_mw(raw: &str) -> Option<u32> {
    let t = strip_unit(raw, "W")?;
    let (whole, frac) = t.split_once('.').unwrap_or((t, ""));
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let whole: u32 = whole.parse().ok()?;
    let mut milli = 0u32;
    let mut scale = 100u32;
    for b in frac.bytes().take(3) {
        milli += u32::from(b - b'0') * scale;
        scale /= 10;
    }
    whole.checked_mul(1000)?.checked_add(milli)
}

/// A yes/no value: `Enabled`/`Disabled`, `Yes`/`No`, `On`/`Off`, `True`/`False`.
pub(crate) fn flag(raw: &str) -> Option<bool> {
    let t = value(raw)?;
    const YES: &[&str] = &["enabled", "yes", "on", "true"];
    const NO: &[&str] = &["disabled", "no", "off", "false"];
    if YES.iter().any(|y| t.eq_ignore_ascii_case(y)) {
        Some(true)
    } else if NO.iter().any(|n| t.eq_ignore_ascii_case(n)) {
        Some(false)
    } else {
        None
    }
}

/// A text value, owned, or `None` for the no-value spellings.
pub(crate) fn text(raw: &str) -> Option<String> {
    value(raw).map(str::to_owned)
}

/// nvidia-smi's labels for the driver version, newest spelling first. Driver R610 renamed "Driver
/// Version" to "KMD Version" in the table header and in `-q` (docs.nvidia.com/deploy/nvidia-smi:
/// "deprecated Driver Version and CUDA Version in favor of KMD Version and CUDA UMD Version
/// respectively"; the R610 table: github.com/sgl-project/sglang/issues/27487); `-q` still prints
/// the old label first, its value followed by `[Deprecated; will be removed in CUDA 14.0. Use KMD
/// Version instead]` (github.com/PrismML-Eng/Bonsai-demo/pull/122).
pub(crate) const DRIVER_LABELS: &[&str] = &["KMD Version", "Driver Version"];

/// nvidia-smi's labels for the newest CUDA the driver supports, newest spelling first: R610's
/// "CUDA UMD Version", then the older "CUDA Version" (sources as for [`DRIVER_LABELS`]).
pub(crate) const CUDA_LABELS: &[&str] = &["CUDA UMD Version", "CUDA Version"];

/// The value of `read` for the first label of `labels` (newest spelling first) that `row` carries as
/// `Label: value` with a value `read` accepts; so `Deprecated` or `N/A` under one spelling never
/// hides a version under another.
pub(crate) fn labelled<T>(row: &str, labels: &[&str], read: impl Fn(&str) -> Option<T>) -> Option<T> {
    labels.iter().find_map(|label| {
        let (_, rest) = row.split_once(label)?;
        let value = rest.trim_start().strip_prefix(':')?.split_whitespace().next()?;
        read(value)
    })
}

/// A driver version, or `None` when absent or not a version.
pub(crate) fn driver(raw: &str) -> Option<DriverVersion> {
    value(raw)?.parse().ok()
}

/// A CUDA version, or `None` when absent or not a version.
pub(crate) fn cuda(raw: &str) -> Option<CudaVersion> {
    value(raw)?.parse().ok()
}

/// The compute mode in `nvidia-smi -q` spelling (`E. Process` → `Exclusive_Process`).
pub(crate) fn compute_mode(raw: &str) -> Option<String> {
    let t = value(raw)?;
    Some(match t {
        "E. Process" => "Exclusive_Process".to_owned(),
        "E. Thread" => "Exclusive_Thread".to_owned(),
        other => other.to_owned(),
    })
}

/// A count (`177`), or `None` for the no-value spellings.
pub(crate) fn count(raw: &str) -> Option<u64> {
    int_with_unit(raw, "")
}

/// Adds a count to a sum that may not have started yet (nvidia-smi splits the error counts by
/// memory: SRAM and DRAM, and in newer drivers SRAM parity and SEC-DED).
pub(crate) fn add_count(sum: &mut Option<u64>, raw: &str) {
    if let Some(n) = count(raw) {
        *sum = Some(sum.unwrap_or(0).saturating_add(n));
    }
}

/// The report name of a clock-event ("throttle") reason as nvidia-smi spells it: the `-q` title
/// (`SW Power Cap`, `HW Thermal Slowdown`, `Idle`) or the XML element's end
/// (`sw_power_cap`, `gpu_idle`, `display_clocks_setting`). The names are
/// `host::telemetry::THROTTLE_REASONS`', which NVML's bits decode to.
pub(crate) fn clock_event_name(key: &str) -> Option<&'static str> {
    let snake = key.trim().to_ascii_lowercase().replace([' ', '-'], "_");
    let snake = match snake.as_str() {
        "idle" => "gpu_idle",
        "display_clocks_setting" => "display_clock_setting",
        other => other,
    };
    gpu_doctor_model::telemetry::THROTTLE_REASONS.iter().map(|(_, name)| *name).find(|name| *name == snake)
}

/// Records one clock-event reason's state (`Active` / `Not Active`) in `reasons`, kept in NVML's
/// bit order; a reason nvidia-smi shows as `N/A` leaves them as they are.
pub(crate) fn clock_event(reasons: &mut Option<Vec<String>>, key: &str, raw: &str) {
    let Some(name) = clock_event_name(key) else { return };
    let active = match value(raw) {
        Some(v) if v.eq_ignore_ascii_case("active") => true,
        Some(v) if v.eq_ignore_ascii_case("not active") => false,
        _ => return,
    };
    let list = reasons.get_or_insert_with(Vec::new);
    if active && !list.iter().any(|r| r == name) {
        list.push(name.to_owned());
        let order = |r: &String| gpu_doctor_model::telemetry::THROTTLE_REASONS.iter().position(|(_, n)| n == r);
        list.sort_by_key(order);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub(crate) mod tests;
