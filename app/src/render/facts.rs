//! The report as labelled lines, shared by the terminal summary and the Markdown report.

use gpu_doctor_probes::probe::driver::SecureBoot;
use gpu_doctor_probes::probe::gpus::Gpu;
use gpu_doctor_probes::{Probed, Report, Snapshot};

/// How a section reads at a glance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Found and fine.
    Good,
    /// Nothing to judge.
    Plain,
    /// Missing or odd, worth a look.
    Warn,
}

/// One labelled section: a headline and detail lines.
#[derive(Debug, Clone)]
pub struct Section {
    /// Short label, e.g. `Driver`.
    pub label: &'static str,
    /// One line.
    pub headline: String,
    /// How the headline reads.
    pub tone: Tone,
    /// Further lines.
    pub details: Vec<String>,
}

impl Section {
    fn new(label: &'static str, headline: impl Into<String>, tone: Tone) -> Self {
        Self { label, headline: headline.into(), tone, details: Vec::new() }
    }
}

/// Bytes as GiB with one decimal.
pub fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1024.0 * 1024.0 * 1024.0))
}

/// The value as text, or `?` when it was not reported.
pub(super) fn or_q<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "?".to_owned(), |v| v.to_string())
}

/// A section for a part with no value: `absent` (in `absent_tone`) when it is not there,
/// the platform's or the failure's wording otherwise; the reason goes below.
pub(super) fn missing<T>(label: &'static str, p: &Probed<T>, absent: &str, absent_tone: Tone) -> Section {
    let (word, tone) = match p {
        Probed::Absent { .. } => (absent, absent_tone),
        Probed::Unsupported { .. } => ("not supported here", Tone::Plain),
        Probed::Failed { .. } => ("could not be checked", Tone::Warn),
        Probed::Unknown { .. } => ("unknown", Tone::Plain),
        Probed::Found { .. } => ("found", Tone::Good),
    };
    let mut s = Section::new(label, word, tone);
    if let Some(why) = p.why_not() {
        s.details.push(why.to_owned());
    }
    s
}

/// The name serde gives an enum value, spaced for reading: `PipWheel` → `pip wheel`.
pub fn label<T: serde::Serialize>(value: &T) -> String {
    serde_name(value).replace('_', " ")
}

/// The name serde gives an enum value, as every export spells it: `DriverTooOldForRuntime` →
/// `driver_too_old_for_runtime`.
pub(super) fn serde_name<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

/// The PCIe link of a GPU, e.g. `PCIe Gen1 x16 now (max Gen4 x16)`.
pub fn link_text(g: &Gpu) -> String {
    pcie_text([g.pcie_gen_current, g.pcie_width_current], [g.pcie_gen_max, g.pcie_width_max])
}

/// A PCIe link from its `[generation, width]` now and at most, e.g. `PCIe Gen1 x16 now (max Gen4 x16)`.
pub fn pcie_text(now: [Option<u32>; 2], max: [Option<u32>; 2]) -> String {
    let now = format!("Gen{} x{}", or_q(now[0]), or_q(now[1]));
    let max = format!("Gen{} x{}", or_q(max[0]), or_q(max[1]));
    if now == max { format!("PCIe {now}") } else { format!("PCIe {now} now (max {max})") }
}

/// A GPU's compute capability as every view words it: `8.9 (Ada Lovelace)`, `8.6 (Ampere, by its
/// name)` when the machine did not report it and the knowledge base knows the product (the lookup
/// the rules make, `diagnose::gpu_view`), `not reported` otherwise.
pub fn capability_text(g: &Gpu) -> String {
    let kb = gpu_doctor_probes::compat::Kb::get().ok();
    let view = kb.map(|kb| gpu_doctor_probes::diagnose::gpu_view(g, kb));
    let Some(cc) = g.compute_capability.or_else(|| view.as_ref().and_then(|v| v.cc)) else {
        return "not reported".to_owned();
    };
    let by_name = g.compute_capability.is_none();
    let arch = g
        .architecture
        .clone()
        .or_else(|| kb.and_then(|kb| kb.gpus.row(cc)).map(|r| r.arch.clone()))
        .or_else(|| cc.architecture().map(str::to_owned));
    match (arch, by_name) {
        (Some(a), true) => format!("{cc} ({a}, by its name)"),
        (Some(a), false) => format!("{cc} ({a})"),
        (None, true) => format!("{cc} (by its name)"),
        (None, false) => cc.to_string(),
    }
}

/// Every section of the summary, in reading order.
pub fn sections(report: &Report) -> Vec<Section> {
    snapshot_sections(&report.snapshot)
}

/// Every section of a snapshot (also a partial one, while probes still run), in reading order.
#[expect(clippy::too_many_lines, reason = "one section per part of the snapshot; to be split with the rest of render/")]
pub fn snapshot_sections(s: &Snapshot) -> Vec<Section> {
    let mut out = Vec::new();

    out.push(match s.system.value() {
        Some(sys) => {
            let mut sec = Section::new(
                "Machine",
                format!(
                    "{} {}, kernel {}, {}",
                    sys.os_name.as_deref().unwrap_or("unknown OS"),
                    sys.os_version.as_deref().unwrap_or(""),
                    sys.kernel_version.as_deref().unwrap_or("?"),
                    s.platform.platform.arch
                ),
                Tone::Plain,
            );
            sec.details.push(format!(
                "{} ({} cores, {} threads), {} RAM",
                sys.cpu_model.as_deref().unwrap_or("unknown CPU"),
                or_q(sys.cpu_physical_cores),
                sys.cpu_logical_cores,
                gib(sys.memory_total_bytes)
            ));
            if let Some(wsl) = &s.platform.wsl {
                sec.details.push(format!(
                    "WSL{} {}; Windows driver libraries in /usr/lib/wsl/lib: {}",
                    wsl.version,
                    wsl.distro.as_deref().unwrap_or(""),
                    if wsl.libcuda_files.is_empty() { "no libcuda".to_owned() } else { wsl.libcuda_files.join(", ") }
                ));
            }
            if let Some(c) = &s.platform.container {
                sec.details.push(format!("inside a {} container ({})", c.runtime, c.markers.join(", ")));
                if !c.nvidia_runtime_vars.is_empty() {
                    sec.details.push(format!("NVIDIA container runtime: {}", c.nvidia_runtime_vars.join(", ")));
                }
            }
            sec
        }
        None => missing("Machine", &s.system, "not found", Tone::Warn),
    });

    let mut driver = match s.driver.value() {
        Some(d) => Section::new(
            "Driver",
            format!(
                "NVIDIA {} (supports CUDA up to {}), via {}",
                d.version,
                or_q(d.cuda_version),
                match &s.driver {
                    Probed::Found { source, .. } => source.as_str(),
                    _ => "?",
                }
            ),
            Tone::Good,
        ),
        None => missing("Driver", &s.driver, "not found", Tone::Warn),
    };
    if let Some(m) = s.kernel_module.value() {
        driver.details.push(format!(
            "kernel module: nvidia {}{}, nouveau {}",
            if m.nvidia_loaded { "loaded" } else { "not loaded" },
            m.loaded_version.as_deref().map(|v| format!(" ({v})")).unwrap_or_default(),
            if m.nouveau_loaded { "LOADED (it blocks the NVIDIA driver)" } else { "not loaded" }
        ));
        match (&m.installed, &m.installed_note) {
            (Some(i), _) => driver.details.push(format!(
                "installed module {} built for kernel {} (running {}){}",
                i.version.as_deref().unwrap_or("?"),
                i.built_for_kernel.as_deref().unwrap_or("?"),
                m.running_kernel.as_deref().unwrap_or("?"),
                if i.signer.is_none() { ", unsigned" } else { "" }
            )),
            (None, Some(note)) => driver.details.push(format!("installed module: {note}")),
            (None, None) => {}
        }
    }
    if let Some(sb) = s.secure_boot.value() {
        driver.details.push(format!(
            "Secure Boot: {}",
            match sb {
                SecureBoot::Enabled => "enabled",
                SecureBoot::Disabled => "disabled",
                SecureBoot::NotEfi => "none (not booted through UEFI)",
                SecureBoot::Unknown => "unknown",
            }
        ));
    }
    out.push(driver);

    out.push(match s.gpus.value() {
        Some(gpus) => {
            let mut names: Vec<String> =
                gpus.iter().map(|g| g.name.clone().unwrap_or_else(|| "unknown GPU".into())).collect();
            names.dedup();
            let mut sec = Section::new("GPUs", format!("{} × {}", gpus.len(), names.join(", ")), Tone::Good);
            for g in gpus {
                sec.details.push(format!(
                    "[{}] {} · compute capability {} · {} · {}",
                    g.index,
                    g.name.as_deref().unwrap_or("unknown GPU"),
                    capability_text(g),
                    g.memory_total_bytes.map_or_else(|| "memory ?".to_owned(), gib),
                    link_text(g)
                ));
            }
            sec
        }
        None => missing("GPUs", &s.gpus, "not found", Tone::Warn),
    });
    if let Some(devices) = s.pci_devices.value() {
        let unbound: Vec<String> = devices
            .iter()
            .filter(|d| d.driver.as_deref() != Some("nvidia"))
            .map(|d| format!("{} (driver: {})", d.bus_id, d.driver.as_deref().unwrap_or("none")))
            .collect();
        if !unbound.is_empty() {
            let mut sec = Section::new("PCI", "NVIDIA GPU(s) on the bus without the NVIDIA driver", Tone::Warn);
            sec.details = unbound;
            out.push(sec);
        }
    }
    out.extend(super::facts_more::sections(s));

    let headline = match s.env.vars.len() {
        0 => "no CUDA-related variables set".to_owned(),
        n => format!("{n} CUDA-related set"),
    };
    let mut env = Section::new("Variables", headline, Tone::Plain);
    env.details = s.env.vars.iter().map(|(k, v)| format!("{k}={v}")).collect();
    if !s.env.path_cuda_entries.is_empty() {
        env.details.push(format!("PATH entries with CUDA: {}", s.env.path_cuda_entries.join(", ")));
    }
    if !s.env.ld_library_path.is_empty() {
        env.details.push(format!("LD_LIBRARY_PATH: {}", s.env.ld_library_path.join(", ")));
    }
    out.push(env);
    out
}
