//! The BAR1 aperture: the window through which the CPU and other PCIe devices reach a GPU's memory.
//! Peer-to-peer over PCIe where the GPU maps a peer's memory through it (the P2P-enabled open kernel
//! modules for GeForce boards) and GPUDirect RDMA need it as large as the memory; without Resizable
//! BAR it is 256 MiB.

use super::{Ctx, Rule};
use gpu_doctor_model::{Category, Finding, Gpu, Severity};

const MIB: u64 = 1024 * 1024;

/// BAR1 without Resizable BAR: 256 MiB, what consumer and workstation GPUs declare for 32-bit systems.
const LEGACY_BAR1_BYTES: u64 = 256 * MIB;

pub(super) const SMALL: Rule = Rule {
    id: "topology.bar1_too_small_for_p2p",
    category: Category::PcieLinkDegraded,
    severity: Severity::Info,
    trigger: "On a machine with more than one GPU (or a count the text did not give), a GPU's BAR1 aperture is \
              smaller than its memory, or 256 MiB (the size without Resizable BAR) where the memory is not known: \
              peer-to-peer that maps the peer's memory through BAR1 (the P2P-enabled open kernel modules for \
              GeForce boards) and GPUDirect RDMA cannot reach all of it, so peer copies fail or fall back to host \
              memory.",
    source: "tinygrad/open-gpu-kernel-modules README (\"Your system needs large BAR support and IOMMU off\"; BAR1 \
             P2P); aikitoria/open-gpu-kernel-modules issue 14 (P2P needs BAR1 at least the memory, maintainer) \
             and 22 (an early RTX 3090 VBIOS keeps BAR1 at 256 MiB until updated); the Linux kernel's Resizable \
             BAR support (consumer GPUs declare 256 MiB of BAR1 for 32-bit systems); nvidia-smi -q `BAR1 Memory \
             Usage` and NVML nvmlDeviceGetBAR1MemoryInfo",
};

pub(super) const RULES: &[Rule] = &[SMALL];

/// A GPU's name and index for the evidence.
fn name(g: &Gpu) -> String {
    format!("GPU {} ({})", g.index, g.name.as_deref().unwrap_or("name not shown"))
}

/// Whole GiB or MiB, as nvidia-smi's sizes read.
fn size(bytes: u64) -> String {
    if bytes >= 1024 * MIB && bytes.is_multiple_of(1024 * MIB) {
        format!("{} GiB", bytes / (1024 * MIB))
    } else {
        format!("{} MiB", bytes / MIB)
    }
}

/// The GPU's BAR1 size when it cannot cover the memory.
fn too_small(g: &Gpu) -> Option<String> {
    let bar1 = g.bar1_total_bytes?;
    match g.memory_total_bytes {
        Some(memory) if bar1 < memory => {
            Some(format!("{}: BAR1 {} for {} of memory", name(g), size(bar1), size(memory)))
        }
        Some(_) => None,
        None if bar1 <= LEGACY_BAR1_BYTES => {
            Some(format!("{}: BAR1 {} (the size without Resizable BAR)", name(g), size(bar1)))
        }
        None => None,
    }
}

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(gpus) = cx.raw_gpus() else { return };
    // One GPU has no peer; a pasted list that shows one GPU may be cut, so only a live count of one
    // rules it out.
    if gpus.len() == 1 && cx.s.origin.is_this_machine() {
        return;
    }
    let evidence: Vec<String> = gpus.iter().filter_map(too_small).collect();
    if evidence.is_empty() {
        return;
    }
    out.push(
        SMALL.finding(
            format!(
                "BAR1 is smaller than the memory on {} GPU(s): Resizable BAR is off or not offered",
                evidence.len()
            ),
            "BAR1 is the window other PCIe devices see of a GPU's memory. Peer-to-peer that maps the peer's memory \
         through it (the P2P-enabled open kernel modules for GeForce boards) and GPUDirect RDMA need it as large as \
         the memory; at 256 MiB, the size without Resizable BAR, peer copies fail or go through host memory. \
         NVIDIA's own driver gives GeForce boards no peer-to-peer, so this matters only for those uses.",
            evidence,
            Some(
                "Enable Above 4G Decoding and Resizable BAR (Re-Size BAR Support) in the firmware setup, then check \
             `nvidia-smi -q -d MEMORY` (BAR1 Memory Usage, Total) is at least the GPU's memory. Where it stays \
             at 256 MiB the GPU's VBIOS offers no larger BAR1 (lspci -vv, Physical Resizable BAR, `supported:`): \
             update the VBIOS from the board's maker."
                    .to_owned(),
            ),
        ),
    );
}
