//! `nvidia-smi -q`: the indented text report (`==============NVSMI LOG==============`).
//!
//! ```text
//! Driver Version                            : 566.36
//! CUDA Version                              : 12.7
//!
//! (From driver R610 on, `KMD Version` and `CUDA UMD Version` follow, the old labels' values marked
//! deprecated: see [`smi::DRIVER_LABELS`].)
//!
//! Attached GPUs                             : 1
//! GPU 00000000:01:00.0
//!     Product Name                          : NVIDIA GeForce RTX 4070 Laptop GPU
//!     PCI
//!         GPU Link Info
//!             PCIe Generation
//!                 Max                       : 4
//! ```
//! Each value's meaning is its path of section titles (`PCI / GPU Link Info / PCIe Generation / Max`),
//! told by indentation relative to the `GPU <bus id>` line, so a report indented or quoted as a
//! whole still parses. The report may sit inside other text; prose after it ends it.

use super::ParseError;
use super::smi::{self, SmiGpu, SmiProcess, SmiReport};

const FORMAT: &str = "nvidia-smi -q output";

/// Parses `nvidia-smi -q` output. Text with neither a driver version line nor a `GPU <bus id>`
/// block is an error.
pub fn parse(text: &str) -> Result<SmiReport, ParseError> {
    parse_full(text).map(|(report, _)| report)
}

/// Like [`parse`], with each GPU's `Product Architecture` line (drivers from about 510 print it).
pub fn parse_full(text: &str) -> Result<(SmiReport, Vec<Option<String>>), ParseError> {
    let mut report = SmiReport::default();
    let mut archs: Vec<Option<String>> = Vec::new();
    let mut block: Option<Block> = None;
    let mut started = false;
    let mut versions = Versions::default();
    for line in text.lines() {
        let content = line.trim();
        if content.is_empty() {
            continue;
        }
        if content.contains("NVSMI LOG") {
            started = true;
            continue;
        }
        // A writer's mark for lines left out (`...`, `[...]`), at any indentation: the report goes on.
        if is_elision(content) {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if let Some(bus) = gpu_header(content) {
            if let Some(b) = block.take() {
                b.finish(&mut report, &mut archs);
            }
            started = true;
            let gpu = SmiGpu { pci_bus_id: smi::text(bus), ..SmiGpu::default() };
            block = Some(Block { indent, gpu, arch: None, sections: Vec::new(), headerless: false });
            continue;
        }
        let (key, value) = split(content);
        // `nvidia-smi -q | grep -A 12 "GPU Link Info"`: a GPU's link section without its `GPU <bus id>` line, one
        // such section a GPU.
        if key == LINK_INFO && value.is_none() && block.as_ref().is_none_or(|b| b.headerless) {
            if let Some(b) = block.take() {
                b.finish(&mut report, &mut archs);
            }
            started = true;
            let mut b = Block {
                indent: indent.saturating_sub(1),
                gpu: SmiGpu::default(),
                arch: None,
                sections: Vec::new(),
                headerless: true,
            };
            b.line(indent, key, None);
            block = Some(b);
            continue;
        }
        match block.as_mut() {
            Some(b) if indent > b.indent => b.line(indent, key, value),
            _ => {
                if let Some(b) = block.take() {
                    let headerless = b.headerless;
                    b.finish(&mut report, &mut archs);
                    if value.is_none() && !headerless {
                        break; // prose after the report
                    }
                }
                let Some(v) = value else { continue };
                if let Some(rank) = smi::DRIVER_LABELS.iter().position(|l| *l == key) {
                    started = true;
                    versions.driver.offer(rank, smi::driver(v));
                } else if let Some(rank) = smi::CUDA_LABELS.iter().position(|l| *l == key)
                    && started
                {
                    versions.cuda.offer(rank, smi::cuda(v));
                }
            }
        }
    }
    if let Some(b) = block.take() {
        b.finish(&mut report, &mut archs);
    }
    report.driver_version = versions.driver.best;
    report.cuda_version = versions.cuda.best;
    if report.driver_version.is_none() && report.gpus.is_empty() {
        return Err(ParseError::new(
            FORMAT,
            "no `KMD Version : …` or `Driver Version : …` line and no `GPU <bus id>` block",
        ));
    }
    Ok((report, archs))
}

/// The report's driver and CUDA versions, each from its newest label spelling that gave one.
#[derive(Default)]
struct Versions {
    driver: Ranked<gpu_doctor_model::DriverVersion>,
    cuda: Ranked<gpu_doctor_model::CudaVersion>,
}

/// A value and the rank of the label it came from (0: the newest spelling). R610 prints the old
/// label first (`Driver Version : 610.43.02 [Deprecated; …]`), then the new one, so the order of
/// the lines cannot decide; the first line of the best label wins.
struct Ranked<T> {
    best: Option<T>,
    rank: usize,
}

impl<T> Default for Ranked<T> {
    fn default() -> Self {
        Self { best: None, rank: usize::MAX }
    }
}

impl<T> Ranked<T> {
    fn offer(&mut self, rank: usize, value: Option<T>) {
        if let Some(v) = value
            && rank < self.rank
        {
            self.best = Some(v);
            self.rank = rank;
        }
    }
}

/// A line that only marks lines left out: `...`, `…`, `[...]`, `(...)`, `[…]`.
fn is_elision(content: &str) -> bool {
    let inner = content.trim_start_matches(['[', '(']).trim_end_matches([']', ')']).trim();
    !inner.is_empty() && (inner.chars().all(|c| c == '.') && inner.len() >= 3 || inner.chars().all(|c| c == '…'))
}

/// The bus id of a `GPU 00000000:01:00.0` line (older drivers: `GPU 0000:06:00.0`).
fn gpu_header(content: &str) -> Option<&str> {
    let bus = content.strip_prefix("GPU ")?;
    let ok = bus.matches(':').count() >= 1
        && bus.contains('.')
        && bus.chars().all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.');
    ok.then_some(bus)
}

/// `Key   : value` → (`Key`, `value`); a section title has no value.
fn split(content: &str) -> (&str, Option<&str>) {
    match content.split_once(" : ") {
        Some((k, v)) => (k.trim(), Some(v.trim())),
        // An empty value (`Serial Number : ` with the trailing space trimmed away).
        None => match content.strip_suffix(" :") {
            Some(k) => (k.trim(), Some("")),
            None => (content, None),
        },
    }
}

/// One `GPU <bus id>` block being read.
struct Block {
    indent: usize,
    gpu: SmiGpu,
    arch: Option<String>,
    /// Open section titles with their indentation.
    sections: Vec<(usize, String)>,
    /// A `GPU Link Info` section pasted without its GPU's line: prose after it does not end the report.
    headerless: bool,
}

/// The title of a GPU's link section.
const LINK_INFO: &str = "GPU Link Info";

impl Block {
    fn line(&mut self, indent: usize, key: &str, value: Option<&str>) {
        while self.sections.last().is_some_and(|(i, _)| *i >= indent) {
            self.sections.pop();
        }
        let Some(value) = value else {
            self.sections.push((indent, key.to_owned()));
            return;
        };
        let path: Vec<&str> = self.sections.iter().map(|(_, s)| s.as_str()).chain([key]).collect();
        assign(&mut self.gpu, &mut self.arch, &path, value);
    }
}

/// Fills `slot` with `value` unless it holds one already: the first line of a field wins.
fn set<T>(slot: &mut Option<T>, value: Option<T>) {
    if slot.is_none() {
        *slot = value;
    }
}

/// Stores the value at `path` (section titles, then the key) in the GPU.
fn assign(g: &mut SmiGpu, arch: &mut Option<String>, path: &[&str], v: &str) {
    let num = |unit: &str| smi::int_with_unit::<u32>(v, unit);
    match path {
        ["Product Name"] => set(&mut g.name, smi::text(v)),
        ["Product Architecture"] => set(arch, smi::text(v)),
        ["GPU UUID"] => set(&mut g.uuid, smi::text(v)),
        ["PCI", "Bus Id"] => g.pci_bus_id = smi::text(v).or(g.pci_bus_id.take()),
        ["FB Memory Usage", "Total"] => set(&mut g.memory_total_mib, smi::mib(v)),
        ["FB Memory Usage", "Used"] => set(&mut g.memory_used_mib, smi::mib(v)),
        ["BAR1 Memory Usage", "Total"] => set(&mut g.bar1_total_mib, smi::mib(v)),
        [.., "PCIe Generation", "Max"] => set(&mut g.pcie_gen_max, num("")),
        [.., "PCIe Generation", "Current"] => set(&mut g.pcie_gen_current, num("")),
        [.., "Link Width", "Max"] => set(&mut g.pcie_width_max, num("x")),
        [.., "Link Width", "Current"] => set(&mut g.pcie_width_current, num("x")),
        ["MIG Mode", "Current"] => set(&mut g.mig_enabled, smi::flag(v)),
        ["Compute Mode"] => set(&mut g.compute_mode, smi::compute_mode(v)),
        ["Persistence Mode"] => set(&mut g.persistence_mode, smi::flag(v)),
        ["Driver Model", "Current"] => set(&mut g.driver_model, smi::text(v)),
        ["Display Attached" | "Display Mode"] => g.display_attached = smi::flag(v).or(g.display_attached),
        ["Display Active"] => set(&mut g.display_attached, smi::flag(v)),
        ["VBIOS Version"] => set(&mut g.vbios_version, smi::text(v)),
        ["Temperature", "GPU Current Temp"] => set(&mut g.temperature_c, num("C")),
        ["GPU Power Readings" | "Power Readings", "Power Draw" | "Average Power Draw" | "Instant Power Draw"] => {
            set(&mut g.power_draw_mw, smi::watts_to_mw(v));
        }
        ["GPU Power Readings" | "Power Readings", "Current Power Limit" | "Enforced Power Limit" | "Power Limit"] => {
            set(&mut g.power_limit_mw, smi::watts_to_mw(v))
        }
        ["Clocks", "SM"] => set(&mut g.clock_sm_mhz, num("MHz")),
        ["Clocks", "Memory"] => set(&mut g.clock_mem_mhz, num("MHz")),
        ["Max Clocks", "SM"] => set(&mut g.clock_sm_max_mhz, num("MHz")),
        ["Max Clocks", "Memory"] => set(&mut g.clock_mem_max_mhz, num("MHz")),
        ["Utilization", "Gpu"] => set(&mut g.utilization_gpu_pct, num("%")),
        ["ECC Mode", "Current"] => set(&mut g.ecc_enabled, smi::flag(v)),
        [..] if assign_health(&mut g.health, path, v) => {}
        ["Processes", "Process ID"] => {
            if let Some(pid) = smi::int_with_unit(v, "") {
                g.processes.push(SmiProcess { pid, used_memory_mib: None });
            }
        }
        ["Processes", "Used GPU Memory"] => {
            if let Some(p) = g.processes.last_mut() {
                set(&mut p.used_memory_mib, smi::mib(v));
            }
        }
        _ => {}
    }
}

/// Stores a value of the health sections (ECC Mode, ECC Errors, Retired Pages, Remapped Rows,
/// Clocks Event Reasons, Temperature, Power Readings, Fan Speed); false when `path` is none of them.
fn assign_health(h: &mut gpu_doctor_model::GpuHealth, path: &[&str], v: &str) -> bool {
    let m = &mut h.memory_errors;
    match path {
        ["ECC Mode", "Pending"] => set(&mut h.ecc_pending, smi::flag(v)),
        // Drivers before about 450: `Single Bit` / `Double Bit` sections, each with a `Total`.
        ["ECC Errors", "Volatile", "Single Bit", "Total"] => set(&mut m.corrected_volatile, smi::count(v)),
        ["ECC Errors", "Volatile", "Double Bit", "Total"] => set(&mut m.uncorrected_volatile, smi::count(v)),
        ["ECC Errors", "Aggregate", "Single Bit", "Total"] => set(&mut m.corrected_aggregate, smi::count(v)),
        ["ECC Errors", "Aggregate", "Double Bit", "Total"] => set(&mut m.uncorrected_aggregate, smi::count(v)),
        // Newer drivers: one line per memory (`SRAM Correctable`, `DRAM Uncorrectable`,
        // `SRAM Uncorrectable Parity`, `SRAM Uncorrectable SEC-DED`), summed as NVML's totals are.
        ["ECC Errors", scope @ ("Volatile" | "Aggregate"), key] => {
            let mut words = key.split_whitespace();
            let (memory, kind) = (words.next(), words.next());
            if !matches!(memory, Some("SRAM" | "DRAM")) {
                return false;
            }
            let volatile = *scope == "Volatile";
            match (kind, volatile) {
                (Some("Correctable"), true) => smi::add_count(&mut m.corrected_volatile, v),
                (Some("Correctable"), false) => smi::add_count(&mut m.corrected_aggregate, v),
                (Some("Uncorrectable"), true) => smi::add_count(&mut m.uncorrected_volatile, v),
                (Some("Uncorrectable"), false) => smi::add_count(&mut m.uncorrected_aggregate, v),
                _ => return false,
            }
        }
        ["Retired Pages", "Single Bit ECC"] => set(&mut m.retired_pages_single_bit, smi::count(v)),
        ["Retired Pages", "Double Bit ECC"] => set(&mut m.retired_pages_double_bit, smi::count(v)),
        ["Retired Pages", "Pending Page Blacklist" | "Pending Page Retirement"] => {
            if let Some(pending) = smi::flag(v) {
                m.retired_pages_pending = Some(pending || m.retired_pages_pending == Some(true));
            }
        }
        ["Remapped Rows", "Correctable Error"] => set(&mut m.remapped_rows_corrected, smi::count(v)),
        ["Remapped Rows", "Uncorrectable Error"] => set(&mut m.remapped_rows_uncorrected, smi::count(v)),
        ["Remapped Rows", "Pending"] => set(&mut m.remapped_rows_pending, smi::flag(v)),
        ["Remapped Rows", "Remapping Failure Occurred"] => set(&mut m.remapped_rows_failure, smi::flag(v)),
        ["Clocks Event Reasons" | "Clocks Throttle Reasons", key] => {
            smi::clock_event(&mut h.clock_event_reasons, key, v)
        }
        ["Fan Speed"] => set(&mut h.fan_speed_pct, smi::int_with_unit(v, "%")),
        ["Temperature", "GPU Slowdown Temp"] => set(&mut h.temperature_slowdown_c, smi::int_with_unit(v, "C")),
        ["Temperature", "GPU Shutdown Temp"] => set(&mut h.temperature_shutdown_c, smi::int_with_unit(v, "C")),
        ["GPU Power Readings" | "Power Readings", key] => {
            let slot = match *key {
                "Default Power Limit" => &mut h.power_limit_default_mw,
                "Min Power Limit" => &mut h.power_limit_min_mw,
                "Max Power Limit" => &mut h.power_limit_max_mw,
                _ => return false,
            };
            set(slot, smi::watts_to_mw(v));
        }
        _ => return false,
    }
    true
}

impl Block {
    fn finish(self, report: &mut SmiReport, archs: &mut Vec<Option<String>>) {
        report.gpus.push(self.gpu);
        archs.push(self.arch);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
