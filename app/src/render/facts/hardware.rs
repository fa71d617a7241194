//! Sections for the hardware: the machine, the driver (kernel module, Secure Boot), the GPUs, NVIDIA
//! devices on the PCI bus without the driver, and the host links; and how a GPU's link and compute
//! capability are worded everywhere.

use gpu_doctor_model::Snapshot;
use gpu_doctor_model::{Gpu, HostLink, SecureBoot};

use super::{Section, Tone, gib, label, missing, or_q};

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
    let kb = gpu_doctor_kb::Kb::get().ok();
    // Without the knowledge base, only what the machine reported.
    let (cc, by_name) = match kb.map(|kb| gpu_doctor_judge::diagnose::gpu_view(g, kb)) {
        Some(view) => (view.cc, view.cc_by_name),
        None => (g.compute_capability, false),
    };
    let Some(cc) = cc else { return "not reported".to_owned() };
    let arch = g
        .architecture
        .clone()
        .or_else(|| kb.and_then(|kb| kb.gpus.row(cc)).map(|r| r.arch.clone()))
        .or_else(|| gpu_doctor_kb::architecture(cc).map(str::to_owned));
    match (arch, by_name) {
        (Some(a), true) => format!("{cc} ({a}, by its name)"),
        (Some(a), false) => format!("{cc} ({a})"),
        (None, true) => format!("{cc} (by its name)"),
        (None, false) => cc.to_string(),
    }
}

/// Machine, driver, GPU, PCI and link sections, in reading order.
pub(super) fn sections(s: &Snapshot) -> Vec<Section> {
    let mut out = vec![machine_section(s), driver_section(s), gpus_section(s)];
    out.extend(unbound_pci_section(s));
    if let Some(links) = s.links.value() {
        out.push(links_section(links));
    }
    out
}

/// OS, kernel, CPU, memory, WSL and container.
fn machine_section(s: &Snapshot) -> Section {
    match s.system.value() {
        Some(sys) => {
            let os = [sys.os_name.as_deref(), sys.os_version.as_deref()].into_iter().flatten().collect::<Vec<_>>();
            let os = if os.is_empty() { "unknown OS".to_owned() } else { os.join(" ") };
            let mut sec = Section::new(
                "Machine",
                // A pasted machine's kernel and architecture may be unknown: they are left out.
                [Some(os), sys.kernel_version.as_deref().map(|k| format!("kernel {k}"))]
                    .into_iter()
                    .flatten()
                    .chain((s.platform.platform.arch != "unknown").then(|| s.platform.platform.arch.clone()))
                    .collect::<Vec<_>>()
                    .join(", "),
                Tone::Plain,
            );
            // A pasted machine gives its OS's name only: no CPU and no memory were read.
            if sys.cpu_logical_cores > 0 || sys.memory_total_bytes > 0 {
                sec.details.push(format!(
                    "{} ({} cores, {} threads), {} RAM",
                    sys.cpu_model.as_deref().unwrap_or("unknown CPU"),
                    or_q(sys.cpu_physical_cores),
                    sys.cpu_logical_cores,
                    gib(sys.memory_total_bytes)
                ));
            }
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
    }
}

/// The driver, its kernel module and Secure Boot.
fn driver_section(s: &Snapshot) -> Section {
    let mut driver = match s.driver.value() {
        Some(d) => Section::new(
            "Driver",
            format!(
                "NVIDIA {} (supports CUDA up to {}{}), via {}",
                d.version,
                or_q(d.cuda_version),
                if d.cuda_version_derived { ", by its version" } else { "" },
                s.driver.source().unwrap_or("?")
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
    driver
}

/// One line per GPU.
fn gpus_section(s: &Snapshot) -> Section {
    match s.gpus.value() {
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
    }
}

/// NVIDIA devices on the bus that the NVIDIA driver does not hold.
fn unbound_pci_section(s: &Snapshot) -> Option<Section> {
    let devices = s.pci_devices.value()?;
    let unbound: Vec<String> = devices
        .iter()
        .filter(|d| d.driver.as_deref() != Some("nvidia"))
        .map(|d| format!("{} (driver: {})", d.bus_id, d.driver.as_deref().unwrap_or("none")))
        .collect();
    if unbound.is_empty() {
        return None;
    }
    let mut sec = Section::new("PCI", "NVIDIA GPU(s) on the bus without the NVIDIA driver", Tone::Warn);
    sec.details = unbound;
    Some(sec)
}

fn links_section(links: &[HostLink]) -> Section {
    let mut sec = Section::new("Links", String::new(), Tone::Plain);
    let egpus = links.iter().filter(|l| l.egpu.is_some()).count();
    sec.headline = match egpus {
        0 => format!("{} GPU link(s)", links.len()),
        n => format!("{} GPU link(s), {n} eGPU", links.len()),
    };
    for l in links {
        let mut line = format!(
            "{}: PCIe Gen{} x{} now, max Gen{} x{}",
            l.bus_id,
            or_q(l.gen_current),
            or_q(l.width_current),
            or_q(l.gen_max),
            or_q(l.width_max)
        );
        if let Some(gbs) = l.theoretical_gbytes_per_s {
            line.push_str(&format!(", up to {gbs:.2} GB/s each way"));
        }
        sec.details.push(line);
        if let Some(e) = &l.egpu {
            sec.details.push(format!(
                "  eGPU via {}{}{}: {}",
                label(&e.via),
                e.tb_generation.map(|g| format!(" (generation {g})")).unwrap_or_default(),
                e.device_name.as_deref().map(|n| format!(", enclosure {n}")).unwrap_or_default(),
                l.bandwidth_basis
            ));
        }
        if let Some(note) = &l.idle_note {
            sec.details.push(format!("  {note}"));
        }
    }
    sec
}
