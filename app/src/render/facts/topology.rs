//! The topology section: the GPU matrix as `nvidia-smi topo -m` prints it (links, CPU and NUMA
//! affinity), peer-to-peer status, NVLinks, MIG devices, and which GPU each CUDA index is.

use gpu_doctor_model::Snapshot;
use gpu_doctor_model::{CudaOrder, DeviceOrder, TopoGpu, Topology};

use super::{Section, Tone, missing};

/// The section, when the topology was looked at (not for a machine without GPUs or a paste without it).
pub(super) fn section(s: &Snapshot) -> Option<Section> {
    let Some(t) = s.topology.value() else {
        return matches!(s.topology, gpu_doctor_model::Probed::Failed { .. })
            .then(|| missing("Topology", &s.topology, "not found", Tone::Warn));
    };
    let mut sec = Section::new("Topology", headline(t), Tone::Plain);
    if t.gpus.len() > 1 || t.gpus.iter().any(|g| g.numa_node.is_some() || g.cpu_affinity.is_some()) {
        sec.pre = matrix(t);
    }
    for g in &t.gpus {
        sec.details.extend(gpu_lines(g));
    }
    for p in &t.pairs {
        if p.p2p_read.is_some() || p.p2p_write.is_some() || p.p2p_atomics.is_some() {
            let code = |s: Option<gpu_doctor_model::P2pStatus>| s.map_or("?", |s| s.code());
            sec.details.push(format!(
                "P2P GPU{} ↔ GPU{}: read {}, write {}, atomics {}",
                p.a,
                p.b,
                code(p.p2p_read),
                code(p.p2p_write),
                code(p.p2p_atomics)
            ));
        }
    }
    if let Some(iommu) = &t.iommu {
        let mode = match iommu.mode {
            gpu_doctor_model::IommuMode::Translated => "translates devices' DMA",
            gpu_doctor_model::IommuMode::Passthrough => "in passthrough",
            gpu_doctor_model::IommuMode::Off => "off",
        };
        sec.details.push(format!("IOMMU: {mode}"));
    }
    // Pasted text that gave the host's facts (IOMMU, ACS) but no GPU list says nothing of CUDA's view.
    if !t.gpus.is_empty() {
        sec.details.push(cuda_line(t, &t.cuda_order));
    }
    sec.details.extend(t.notes.iter().cloned());
    Some(sec)
}

/// `8 GPUs · NV18 · 2 NUMA nodes`.
fn headline(t: &Topology) -> String {
    if t.gpus.is_empty() {
        return "GPUs not listed (the host's side only)".to_owned();
    }
    let mut parts = vec![format!("{} GPU{}", t.gpus.len(), if t.gpus.len() == 1 { "" } else { "s" })];
    let mut links: Vec<String> = t.pairs.iter().map(|p| p.link.label()).collect();
    links.sort();
    links.dedup();
    if !links.is_empty() {
        parts.push(links.join("/"));
    } else if t.gpus.len() > 1 {
        parts.push("links not reported".to_owned());
    }
    let nodes = t.numa_nodes().len();
    if nodes > 1 {
        parts.push(format!("{nodes} NUMA nodes"));
    }
    let mig: usize = t.gpus.iter().filter(|g| g.mig.as_ref().is_some_and(|m| m.enabled)).count();
    if mig > 0 {
        parts.push(format!("{mig} in MIG mode"));
    }
    if t.cuda_order.order_changes_indices() {
        parts.push("CUDA order differs from nvidia-smi's".to_owned());
    }
    parts.join(" · ")
}

/// The matrix, one line per GPU, columns padded like `nvidia-smi topo -m`.
fn matrix(t: &Topology) -> Vec<String> {
    let cell =
        |a: u32, b: u32| if a == b { "X".to_owned() } else { t.pair(a, b).map_or("?".to_owned(), |p| p.link.label()) };
    let mut header = format!("{:<8}", "");
    for g in &t.gpus {
        header.push_str(&format!("{:<8}", format!("GPU{}", g.index)));
    }
    header.push_str(&format!("{:<16}{}", "CPU Affinity", "NUMA Affinity"));
    let mut out = vec![header.trim_end().to_owned()];
    for a in &t.gpus {
        let mut line = format!("{:<8}", format!("GPU{}", a.index));
        for b in &t.gpus {
            line.push_str(&format!("{:<8}", cell(a.index, b.index)));
        }
        let numa = a.numa_node.map_or_else(|| "N/A".to_owned(), |n| n.to_string());
        line.push_str(&format!("{:<16}{numa}", a.cpu_affinity.as_deref().unwrap_or("N/A")));
        out.push(line.trim_end().to_owned());
    }
    out
}

fn gpu_lines(g: &TopoGpu) -> Vec<String> {
    let mut out = Vec::new();
    let active: Vec<_> = g.nvlinks.iter().filter(|l| l.active).collect();
    if !g.nvlinks.is_empty() {
        // The generation, not NVML's version enum (H100s answer 7 for NVLink 4).
        let generation = gpu_doctor_kb::gpu_nvlink_generation(g).map_or_else(String::new, |v| format!(" (NVLink {v})"));
        out.push(format!("GPU{}: {} of {} NVLinks active{generation}", g.index, active.len(), g.nvlinks.len()));
    }
    if let Some(m) = &g.mig {
        match (m.enabled, m.instances.as_deref()) {
            (false, _) => out.push(format!("GPU{}: MIG mode off", g.index)),
            (true, None) => out.push(format!("GPU{}: MIG mode on, devices not listed", g.index)),
            (true, Some(list)) => {
                out.push(format!("GPU{}: MIG mode on, {} MIG device(s)", g.index, list.len()));
                for i in list {
                    out.push(format!(
                        "  MIG {} device {}: {}",
                        i.profile.as_deref().unwrap_or("?"),
                        i.device,
                        i.uuid.as_deref().unwrap_or("no UUID reported")
                    ));
                }
            }
        }
    }
    if g.numa_node.is_some() || g.cpu_affinity.is_some() {
        out.push(format!("GPU{}: {}", g.index, g.affinity_words()));
    }
    out
}

/// `CUDA device 0 = GPU 1, 1 = GPU 0 (CUDA_DEVICE_ORDER unset: fastest first)`.
fn cuda_line(t: &Topology, o: &CudaOrder) -> String {
    let list = if o.effective.is_empty() {
        "no GPU visible".to_owned()
    } else {
        o.effective.iter().enumerate().map(|(c, g)| format!("{c} = GPU{g}")).collect::<Vec<_>>().join(", ")
    };
    let order = match o.order {
        DeviceOrder::PciBusId => "PCI bus order",
        DeviceOrder::FastestFirst => "fastest first",
        DeviceOrder::Unknown => "an order this version does not know",
    };
    let var =
        |name: &str, v: &Option<String>| v.as_deref().map_or(format!("{name} unset"), |v| format!("{name}={v:?}"));
    let mut line = format!(
        "CUDA device {list} ({order}; {}, {})",
        var("CUDA_DEVICE_ORDER", &o.device_order_var),
        var("CUDA_VISIBLE_DEVICES", &o.visible_devices_var)
    );
    if t.gpus.len() > 1 && o.order == DeviceOrder::FastestFirst {
        line.push_str(&format!("; {}", o.basis));
    }
    line
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use crate::render::html::tests::fixture_report;
    use crate::render::{html, markdown, text};

    #[test]
    fn every_report_shows_the_matrix_affinity_and_cuda_order() {
        let report = fixture_report("pcie-2x5090-no-p2p");
        let summary = text::summary(&report, false, false);
        assert!(summary.contains("Topology   2 GPUs · PHB"), "{summary}");
        assert!(summary.contains("GPU0    X       PHB     0-63            0"), "{summary}");
        assert!(summary.contains("P2P GPU0 ↔ GPU1: read GNS, write GNS, atomics ?"), "{summary}");
        assert!(
            summary.contains("CUDA device 0 = GPU0, 1 = GPU1 (fastest first; CUDA_DEVICE_ORDER unset"),
            "{summary}"
        );
        let md = markdown::report(&report);
        assert!(md.contains("```\n        GPU0    GPU1    CPU Affinity    NUMA Affinity\nGPU0    X       PHB"), "{md}");
        let page = html::report(&report);
        assert!(page.contains("<pre>        GPU0    GPU1    CPU Affinity    NUMA Affinity\nGPU0"), "{page}");
    }

    #[test]
    fn nvlinks_numa_nodes_and_mig_devices_are_listed() {
        let hgx = text::summary(&fixture_report("hgx-h100-nvlink"), false, false);
        assert!(hgx.contains("Topology   8 GPUs · NV18 · 2 NUMA nodes"), "{hgx}");
        assert!(hgx.contains("GPU7: 18 of 18 NVLinks active (NVLink 4)"), "{hgx}");
        assert!(hgx.contains("GPU7: NUMA node 1, CPUs 56-111,168-223 (from nvml)"), "{hgx}");
        let mig = text::summary(&fixture_report("mig-a100"), false, false);
        assert!(mig.contains("1 GPU · 1 in MIG mode"), "{mig}");
        assert!(mig.contains("MIG 1g.10gb device 6: MIG-1aae4990-b962-574e-8375-119d6d9b9687"), "{mig}");
        let none = text::summary(&fixture_report("no-driver"), false, false);
        assert!(!none.contains("Topology"), "no GPU, no section: {none}");
    }
}
