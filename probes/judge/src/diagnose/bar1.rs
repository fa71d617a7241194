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
             Usage` and NVML nvmlDeviceGetBAR1MemoryInfo; the sizes the GPU offers from lspci's `Physical Resizable BAR` \
             capability (pciutils ls-ecaps.c cap_rebar, v3.14.0); NVIDIA's EnableResizableBar option \
             (open-gpu-kernel-modules kernel-open/nvidia/nv-reg.h: the driver resizes BAR1 to match the memory)",
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
    let small: Vec<&Gpu> = gpus.iter().filter(|g| too_small(g).is_some()).collect();
    if small.is_empty() {
        return;
    }
    let mut evidence: Vec<String> = small.iter().filter_map(|g| too_small(g)).collect();
    evidence.extend(small.iter().filter_map(|g| offered(g)));
    out.push(SMALL.finding(
        format!("BAR1 is smaller than the memory on {} GPU(s): Resizable BAR is off or not offered", small.len()),
        "BAR1 is the window other PCIe devices see of a GPU's memory. Peer-to-peer that maps the peer's memory \
         through it (the P2P-enabled open kernel modules for GeForce boards) and GPUDirect RDMA need it as large as \
         the memory; at 256 MiB, the size without Resizable BAR, peer copies fail or go through host memory. \
         NVIDIA's own driver gives GeForce boards no peer-to-peer, so this matters only for those uses.",
        evidence,
        Some(fix_words(&small)),
    ));
}

/// What the GPU's Resizable BAR capability offers against BAR1 now, for the evidence.
fn offered(g: &Gpu) -> Option<String> {
    let (now, most) = (g.bar1_total_bytes?, g.bar1_max_bytes?);
    Some(if most > now {
        format!("{}: the GPU offers BAR1 up to {} (lspci, Physical Resizable BAR)", name(g), size(most))
    } else {
        format!(
            "{}: the GPU offers no BAR1 above {} (lspci, Physical Resizable BAR, `supported:`)",
            name(g),
            size(most)
        )
    })
}

/// The fix, by what the GPUs' Resizable BAR capability says: a larger size offered is the firmware's or
/// the driver's to set; none offered is the VBIOS's limit; not known, both.
fn fix_words(small: &[&Gpu]) -> String {
    let check = "then check `nvidia-smi -q -d MEMORY` (BAR1 Memory Usage, Total) is at least the GPU's memory";
    let enable = "enable Above 4G Decoding and Resizable BAR (Re-Size BAR Support) in the firmware setup, with CSM \
                  off; on Linux the NVIDIA driver (530 and newer) can resize it itself: `options nvidia \
                  NVreg_EnableResizableBar=1` in /etc/modprobe.d/nvidia.conf, then rebuild the initramfs and reboot";
    let vbios = "update the GPU's VBIOS to one with Resizable BAR from the board's maker (lspci -vv, Physical \
                 Resizable BAR, must then list sizes up to the memory under `supported:`), then enable Resizable \
                 BAR and Above 4G Decoding in the firmware setup";
    // Some(true): the GPU offers more than BAR1 has now; Some(false): it offers no more; None: not read.
    let larger = |g: &Gpu| g.bar1_max_bytes.zip(g.bar1_total_bytes).map(|(most, now)| most > now);
    if small.iter().all(|g| larger(g) == Some(false)) {
        format!(
            "The GPU's VBIOS offers no larger BAR1, so no firmware setting or driver option can widen it: {vbios}; {check}."
        )
    } else if small.iter().all(|g| larger(g) == Some(true)) {
        let most = small.iter().filter_map(|g| g.bar1_max_bytes).min().map_or_else(String::new, size);
        format!("The GPU offers BAR1 up to {most}, so it is the firmware that did not resize it: {enable}; {check}.")
    } else {
        format!(
            "Enable Above 4G Decoding and Resizable BAR (Re-Size BAR Support) in the firmware setup, with CSM off, \
             {check}. Where it stays at 256 MiB, see what the GPU offers (`sudo lspci -vv -s <bus id>`, Physical \
             Resizable BAR, `supported:`): a larger size there can also be set by the NVIDIA driver on Linux \
             (`options nvidia NVreg_EnableResizableBar=1`); none larger means you must {vbios}."
        )
    }
}
