//! GPUs from pasted text: nvidia-smi's and collect_env's lists merged, framework facts (a name with
//! its compute capability) applied, and the knowledge base's product table for the rest.

use crate::parse::smi::SmiGpu;
use gpu_doctor_kb::Kb;
use gpu_doctor_model::{ComputeCapability, ObservedMessage};
use gpu_doctor_model::{Gpu, PciBusId};

/// What a framework said about one GPU.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct GpuFact {
    /// The framework's device index (CUDA order, which may differ from nvidia-smi's).
    pub index: Option<u32>,
    pub name: Option<String>,
    /// PCI bus id as printed.
    pub bus_id: Option<String>,
    pub cc: Option<ComputeCapability>,
    /// The format or message that said it.
    pub source: &'static str,
}

/// One nvidia-smi GPU as a [`Gpu`]; `arch` is `-q`'s `Product Architecture`.
pub(super) fn from_smi(index: u32, s: &SmiGpu, arch: Option<String>) -> Gpu {
    Gpu { architecture: arch, ..crate::probe::gpus::gpu_from_smi(index, s) }
}

/// The most GPUs read from one paste, and the most framework facts about them: far more than any
/// machine has, few enough that merging them (each against each) stays quick.
pub(super) const MAX_GPUS: usize = 256;

/// Merges the listed GPUs (the same GPU listed twice, by bus id or by index and name, becomes one),
/// applies the framework facts, then fills capability and architecture from the knowledge base.
/// Only the first [`MAX_GPUS`] listed GPUs and facts are taken.
pub(super) fn merge(listed: Vec<Gpu>, facts: &[GpuFact], kb: &Kb) -> Vec<Gpu> {
    let mut out: Vec<Gpu> = Vec::new();
    for g in listed.into_iter().take(MAX_GPUS) {
        let same = out.iter_mut().find(|e| match (&e.pci_bus_id, &g.pci_bus_id) {
            (Some(a), Some(b)) => a == b,
            _ => e.index == g.index && names_match(e.name.as_deref(), g.name.as_deref()),
        });
        match same {
            Some(e) => fill(e, g),
            None => out.push(g),
        }
    }
    for f in facts.iter().take(MAX_GPUS) {
        let bus = f.bus_id.as_deref().and_then(PciBusId::sysfs_form);
        let by_bus = bus.is_some() && out.iter().any(|g| g.pci_bus_id == bus);
        let same = |g: &Gpu| {
            if by_bus {
                g.pci_bus_id == bus
            } else {
                f.name.is_some() && names_match(g.name.as_deref(), f.name.as_deref())
            }
        };
        let hits = out.iter().filter(|g| same(g)).count();
        // A capability belongs to the product, so every GPU of that name gets it; a bus id belongs
        // to one GPU, so it is given only when the name picks out one.
        for g in out.iter_mut().filter(|g| same(g)) {
            g.compute_capability = g.compute_capability.or(f.cc);
            if hits == 1 {
                g.pci_bus_id = g.pci_bus_id.take().or_else(|| bus.clone());
            }
        }
        if hits == 0 && (f.name.is_some() || bus.is_some()) {
            let next = u32::try_from(out.len()).unwrap_or(u32::MAX);
            let index = f.index.filter(|i| !out.iter().any(|g| g.index == *i)).unwrap_or(next);
            out.push(Gpu { index, name: f.name.clone(), pci_bus_id: bus, compute_capability: f.cc, ..Gpu::default() });
        }
    }
    // A capability the text does not state stays unknown here: the rules look the name up in the
    // knowledge base themselves and say in their evidence that they did.
    for g in &mut out {
        if g.architecture.is_none() {
            g.architecture = g.compute_capability.and_then(|cc| architecture(kb, cc));
        }
    }
    out
}

/// Fills what `e` lacks from `g`; a name cut short by the table (`...`) gives way to a whole one.
fn fill(e: &mut Gpu, g: Gpu) {
    macro_rules! fill {
        ($($f:ident),*) => { $( if e.$f.is_none() { e.$f = g.$f; } )* };
    }
    if e.name.as_deref().is_some_and(|n| n.ends_with("...")) && g.name.is_some() {
        e.name = g.name.clone();
    }
    fill!(name, uuid, pci_bus_id, compute_capability, architecture, memory_total_bytes, memory_used_bytes);
    fill!(memory_free_bytes, pcie_gen_current, pcie_gen_max, pcie_width_current, pcie_width_max, clock_sm_mhz);
    fill!(clock_sm_max_mhz, clock_mem_mhz, clock_mem_max_mhz, power_draw_mw, power_limit_mw, temperature_c);
    fill!(utilization_gpu_pct, ecc_enabled, persistence_mode, compute_mode, mig_enabled, display_attached);
    fill!(vbios_version, driver_model, processes, bar1_total_bytes, bar1_max_bytes);
}

/// True when two product names are the same GPU: equal ignoring case, an `NVIDIA ` prefix and a
/// table's `...` cut, or one a cut-short start of the other.
pub(super) fn names_match(a: Option<&str>, b: Option<&str>) -> bool {
    let norm = |s: &str| {
        let s = s.trim().trim_end_matches("...").trim().to_lowercase();
        let s = s.strip_prefix("nvidia ").unwrap_or(&s).to_owned();
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    match (a, b) {
        (Some(a), Some(b)) => {
            let (a, b) = (norm(a), norm(b));
            !a.is_empty() && !b.is_empty() && (a == b || a.starts_with(&b) || b.starts_with(&a))
        }
        (None, None) => true,
        _ => false,
    }
}

/// The architecture of a capability: the knowledge base's row.
fn architecture(kb: &Kb, cc: ComputeCapability) -> Option<String> {
    kb.gpus.architecture(cc).map(str::to_owned)
}

/// GPU facts carried by known messages: PyTorch's and TensorFlow's capability warnings.
pub(super) fn facts_from_messages(messages: &[ObservedMessage]) -> Vec<GpuFact> {
    messages
        .iter()
        .filter_map(|m| {
            let v = |k: &str| m.values.get(k).map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
            let cc = match m.id.as_str() {
                "torch.sm_not_compatible" => v("sm").and_then(|sm| cc_from_sm(&sm)),
                "torch.gpu_too_old" | "torch.cc_not_supported" | "tf.gpu_ignored_min_cc" => {
                    v("cc").and_then(|c| c.parse().ok())
                }
                // The kernel names a GPU its driver dropped; the rules look its capability up by name.
                "nvrm.legacy_gpu" => None,
                _ => return None,
            };
            Some(GpuFact {
                index: v("index").and_then(|i| i.parse().ok()),
                name: v("gpu"),
                bus_id: v("bus_id"),
                cc,
                source: "error messages",
            })
        })
        .collect()
}

/// `86` → 8.6, `120` → 12.0.
pub(super) fn cc_from_sm(sm: &str) -> Option<ComputeCapability> {
    if sm.len() < 2 || !sm.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (major, minor) = sm.split_at(sm.len() - 1);
    Some(ComputeCapability { major: major.parse().ok()?, minor: minor.parse().ok()? })
}
