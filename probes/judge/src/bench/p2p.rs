//! The GPU-to-GPU copies judged: how each pair of GPUs connects (`link_facts`, from the snapshot's
//! topology and host links) and what a copy between them should reach.

use gpu_doctor_kb::LinkTable;
use gpu_doctor_model::bench::judgement::{Expected, Judgement, Verdict};
use gpu_doctor_model::bench::p2p::{P2pEnd, P2pLinkFact, P2pMatrix, P2pMode, P2pPair};
use gpu_doctor_model::bench::unit::Unit;
use gpu_doctor_model::{LinkKind, PciBusId, Snapshot};

use super::verdict::{LINK_NORMAL_SHARE, PAGEABLE_NORMAL_SHARE, at_least};

/// Share of the link a peer copy (P2P on) normally reaches: as a pinned host copy over PCIe
/// (`LINK_NORMAL_SHARE`); nvbandwidth's published H100 NV18 figures sit near 80 % of 18 × 25 GB/s.
pub const PEER_NORMAL_SHARE: f64 = LINK_NORMAL_SHARE;
/// Share of the slower host link a copy staged through host memory normally reaches: the copy
/// crosses both GPUs' links in turn, which even without overlap gives at least half the slower
/// (the same arithmetic as a pageable copy's two steps, `PAGEABLE_NORMAL_SHARE`).
pub const STAGED_NORMAL_SHARE: f64 = PAGEABLE_NORMAL_SHARE;

/// Judges every pair of a matrix against the link between its two GPUs (`links`, from `link_facts`).
pub fn judge_matrix(matrix: &mut P2pMatrix, links: &[P2pLinkFact]) {
    for pair in &mut matrix.pairs {
        let src = matrix.gpus.iter().find(|g| g.ordinal == pair.src);
        let dst = matrix.gpus.iter().find(|g| g.ordinal == pair.dst);
        let (judgement, mode) = if matrix.loopback {
            (no_reference("a loopback copy between two contexts of one GPU: no link to judge it against"), None)
        } else {
            match src.zip(dst).and_then(|(x, y)| links.iter().find(|l| l.joins(x, y))) {
                Some(link) => judge_pair(pair, link),
                None => (no_reference("the probed topology does not list this pair of GPUs"), None),
            }
        };
        pair.judgement = Some(judgement);
        pair.judged_mode = mode;
    }
}

/// A GPU's host link, GB/s per direction, with its basis: the probed link (which knows a
/// Thunderbolt tunnel's cap), else NVML's maximum PCIe generation and width for the GPU.
fn host_link(snapshot: &Snapshot, index: u32, bus: Option<&str>, kb: Option<&LinkTable>) -> Option<(f64, String)> {
    let probed = bus.and_then(|bus| {
        let link = snapshot.links.value()?.iter().find(|l| PciBusId::same(&l.bus_id, bus))?;
        Some((link.theoretical_gbytes_per_s?, format!("GPU {index}: {}", link.bandwidth_basis)))
    });
    probed.or_else(|| {
        let gpu = snapshot.gpus.value()?.iter().find(|g| g.index == index)?;
        let (generation, lanes) = (gpu.pcie_gen_max?, gpu.pcie_width_max?);
        let kb = kb?;
        let g = kb.pcie_gbytes_per_s(generation, lanes)?;
        let formula = kb.pcie_formula(generation, lanes)?;
        Some((g, format!("GPU {index}: PCIe {generation}.0 x{lanes} (NVML's maximum): {formula} = {g:.1} GB/s")))
    })
}

/// Every pair of the snapshot's topology with what its copies should reach: NVLink at links × the
/// per-link rate of the GPUs' NVLink version (`links.toml`), PCIe at the slower of the two host
/// links; empty without a topology.
pub fn link_facts(snapshot: &Snapshot, kb: Option<&LinkTable>) -> Vec<P2pLinkFact> {
    let Some(topology) = snapshot.topology.value() else { return Vec::new() };
    let order = &topology.cuda_order.with_pci_bus_id;
    let end = |index: u32| {
        let gpu = topology.gpu(index);
        let bus_id = gpu
            .and_then(|g| g.bus_id.clone())
            .or_else(|| snapshot.gpus.value()?.iter().find(|g| g.index == index).and_then(|g| g.pci_bus_id.clone()));
        let cuda_ordinal = if order.is_empty() {
            Some(index)
        } else {
            order.iter().position(|i| *i == index).and_then(|p| u32::try_from(p).ok())
        };
        P2pEnd { index, bus_id, cuda_ordinal }
    };
    let mut out = Vec::new();
    for pair in &topology.pairs {
        let ends = [end(pair.a), end(pair.b)];
        let hosts = ends.clone().map(|e| host_link(snapshot, e.index, e.bus_id.as_deref(), kb));
        let slower = match hosts {
            [Some(x), Some(y)] => {
                let g = x.0.min(y.0);
                Some((g, format!("the slower host link of the two GPUs ({}; {})", x.1, y.1)))
            }
            _ => None,
        };
        let peer = match pair.link {
            LinkKind::Nvlink { links: n } => {
                let gpus: Vec<_> = [pair.a, pair.b].into_iter().filter_map(|i| topology.gpu(i)).collect();
                // The generation, not NVML's answer (an enum H100s answer 7 in): see `nvlink_generation`.
                let generation = gpus.iter().filter_map(|g| gpu_doctor_kb::gpu_nvlink_generation(g)).max();
                // Each end runs the link at its own rate (GA102 narrower than A100): the slower one.
                // (`nvlink_gen` already falls back to the generation's own row for each end.)
                let row = generation.and_then(|v| {
                    let kb = kb?;
                    let rows = gpus.iter().filter_map(|g| kb.nvlink_gen(v, g.compute_capability.as_deref()));
                    rows.min_by(|x, y| x.gbytes_per_s_per_link.total_cmp(&y.gbytes_per_s_per_link)).map(|row| (v, row))
                });
                row.map(|(v, row)| {
                    let rate = row.gbytes_per_s_per_link;
                    let g = f64::from(n) * rate;
                    (
                        g,
                        format!(
                            "NV{n}: {n} NVLinks × {rate} GB/s per direction (NVLink {v}, {}) = {g:.0} GB/s",
                            row.gpus
                        ),
                    )
                })
            }
            LinkKind::Sys | LinkKind::Unknown => None,
            other => slower.clone().map(|(g, basis)| (g, format!("{} over PCIe: {basis}", other.label()))),
        };
        let blocked = pair.p2p_blocked();
        out.push(P2pLinkFact {
            gpus: ends,
            link: pair.link,
            p2p_ok: match (blocked, pair.p2p_read.or(pair.p2p_write)) {
                (Some(_), _) => Some(false),
                (None, Some(_)) => Some(true),
                (None, None) => None,
            },
            p2p_status: blocked.map(|s| s.code().to_owned()),
            peer,
            host: slower,
        });
    }
    out
}

fn no_reference(why: &str) -> Judgement {
    Judgement { expected: None, percent_of_expected: None, verdict: Verdict::NoReference, comment: why.to_owned() }
}

fn gbps_expected(value: f64, basis: &str) -> Expected {
    Expected { value, unit: Unit::GbPerS, basis: basis.to_owned() }
}

/// One pair against its link. A direct path (NVLink, PCIe within a socket with P2P not refused)
/// judges the P2P-on copy against the link; anything else judges the P2P-off copy (the driver
/// stages it through host memory; the hand-staged one where it was not measured) against the
/// slower host link. Over a direct path where the topology says P2P is OK, a pair CUDA offers no
/// peer access, or (over NVLink) where P2P on is not faster than P2P off, is LOW with that sentence.
pub fn judge_pair(pair: &P2pPair, link: &P2pLinkFact) -> (Judgement, Option<P2pMode>) {
    let on = pair.bandwidth(P2pMode::PeerEnabled);
    let off = pair.bandwidth(P2pMode::PeerDisabled);
    let path = link.link.label();
    if link.direct() {
        let Some((expected, basis)) = &link.peer else {
            return (no_reference(&format!("the bandwidth of the {path} path between these GPUs is unknown")), None);
        };
        if link.p2p_ok == Some(true) && !pair.can_access_peer {
            let mut j = at_least(off.unwrap_or(0.0), gbps_expected(*expected, basis), PEER_NORMAL_SHARE, None);
            j.verdict = Verdict::Low;
            j.comment = format!(
                "the topology says P2P is OK over {path}, but CUDA offers no peer access between these GPUs \
                 (cuDeviceCanAccessPeer = 0), so every copy is staged through host memory"
            );
            return (j, off.map(|_| P2pMode::PeerDisabled));
        }
        let Some(on) = on else {
            let why = pair.measure(P2pMode::PeerEnabled).and_then(|m| m.skipped.clone()).unwrap_or_default();
            return (no_reference(&format!("P2P on was not measured over {path}: {why}")), None);
        };
        if let (LinkKind::Nvlink { .. }, Some(off)) = (link.link, off)
            && on <= off
        {
            let mut j = at_least(on, gbps_expected(*expected, basis), PEER_NORMAL_SHARE, None);
            j.verdict = Verdict::Low;
            j.comment = format!(
                "P2P on ({on:.1} GB/s) is not faster than P2P off ({off:.1} GB/s) over {path}: the copies do not \
                 use the NVLinks"
            );
            return (j, Some(P2pMode::PeerEnabled));
        }
        let mut j = at_least(on, gbps_expected(*expected, basis), PEER_NORMAL_SHARE, Some(*expected));
        j.comment = format!("P2P on, judged against {path}: {}", j.comment);
        return (j, Some(P2pMode::PeerEnabled));
    }
    let why = match (&link.p2p_status, link.link) {
        (_, LinkKind::Sys) => "across CPU sockets".to_owned(),
        (Some(code), _) => format!("the topology says P2P is not supported ({code})"),
        _ => "the path between these GPUs is not known".to_owned(),
    };
    let Some((expected, basis)) = &link.host else {
        return (no_reference(&format!("{why}, and the GPUs' host links are unknown")), None);
    };
    let (value, mode) = match (off, pair.bandwidth(P2pMode::HostStaged)) {
        (Some(v), _) => (v, P2pMode::PeerDisabled),
        (None, Some(v)) => (v, P2pMode::HostStaged),
        (None, None) => return (no_reference(&format!("{why}, and no copy through host memory was measured")), None),
    };
    let mut j = at_least(value, gbps_expected(*expected, basis), STAGED_NORMAL_SHARE, None);
    j.comment = format!(
        "{}, judged as host-staged ({why}: the copy crosses both GPUs' host links in turn): {}",
        mode.label(),
        j.comment
    );
    (j, Some(mode))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use gpu_doctor_model::bench::p2p::P2pMeasure;
    use gpu_doctor_model::bench::stats::Stats;

    use super::*;

    fn stats(v: f64) -> Option<Stats> {
        Stats::from_samples(&[v, v, v])
    }

    /// Two GPUs of a family on `n` NVLinks, each link answering NVML's `nvml` version.
    fn nvlink_pair(cc: &str, nvml: u32, n: u32) -> Snapshot {
        use gpu_doctor_model::{GpuPair, NvLink, TopoGpu, Topology};
        let gpu = |index: u32| TopoGpu {
            index,
            compute_capability: Some(cc.to_owned()),
            nvlinks: (0..n)
                .map(|link| NvLink { link, active: true, version: Some(nvml), remote_bus_id: None })
                .collect(),
            ..TopoGpu::default()
        };
        let pair = GpuPair {
            a: 0,
            b: 1,
            link: LinkKind::Nvlink { links: n },
            p2p_read: Some(gpu_doctor_model::P2pStatus::Ok),
            p2p_write: Some(gpu_doctor_model::P2pStatus::Ok),
            p2p_atomics: None,
        };
        let mut snap = Snapshot::unknown(Vec::new());
        snap.topology = gpu_doctor_model::Probed::found(
            Topology { gpus: vec![gpu(0), gpu(1)], pairs: vec![pair], ..Topology::default() },
            "test",
        );
        snap
    }

    /// Each family's pair, with the version NVML really answers there, is judged against its own
    /// generation's row of `links.toml`: H100s answer 7 (the enum's 5.0), A100s and RTX 3090s 5 (3.1).
    #[test]
    fn nvlink_pairs_are_judged_at_the_generation_nvml_reports_for_their_family() {
        let kb = &gpu_doctor_kb::Kb::get().unwrap().links;
        // (family, capability, NVML's answer, links, expected GB/s per direction, what the basis names)
        let families = [
            ("P100", "6.0", 1, 4, 80.0, "NVLink 1, P100"),
            ("V100", "7.0", 2, 6, 150.0, "NVLink 2, V100"),
            ("A100", "8.0", 5, 12, 300.0, "NVLink 3, A100"),
            ("RTX 3090", "8.6", 5, 4, 56.25, "NVLink 3, GA102"),
            ("H100", "9.0", 7, 18, 450.0, "NVLink 4, H100/H200"),
            ("H200", "9.0", 6, 18, 450.0, "NVLink 4, H100/H200"),
            ("B200", "10.0", 7, 18, 900.0, "NVLink 5, B200"),
        ];
        for (family, cc, nvml, n, want, names) in families {
            let facts = link_facts(&nvlink_pair(cc, nvml, n), Some(kb));
            let (gbps, basis) = facts[0].peer.clone().unwrap_or_else(|| panic!("{family}: no expectation"));
            assert!((gbps - want).abs() < 1e-9, "{family} answering {nvml}: {gbps} GB/s: {basis}");
            assert!(basis.starts_with(&format!("NV{n}: {n} NVLinks × ")) && basis.contains(names), "{family}: {basis}");
            // A healthy copy (80 % of the link) is normal against that basis.
            let pair = P2pPair {
                src: 0,
                dst: 1,
                can_access_peer: true,
                measures: vec![
                    P2pMeasure {
                        mode: P2pMode::PeerEnabled,
                        bandwidth_gbps: stats(want * 0.8),
                        latency_us: None,
                        skipped: None,
                    },
                    P2pMeasure {
                        mode: P2pMode::PeerDisabled,
                        bandwidth_gbps: stats(20.0),
                        latency_us: None,
                        skipped: None,
                    },
                ],
                judgement: None,
                judged_mode: None,
            };
            let (j, mode) = judge_pair(&pair, &facts[0]);
            assert_eq!((j.verdict, mode), (Verdict::Normal, Some(P2pMode::PeerEnabled)), "{family}: {j:?}");
            assert_eq!(j.expected.as_ref().map(|e| e.basis.as_str()), Some(basis.as_str()), "{family}");
            assert_eq!(j.percent_of_expected.map(f64::round), Some(80.0), "{family}: {j:?}");
        }
    }
}
