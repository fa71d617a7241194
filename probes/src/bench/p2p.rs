//! The GPU-to-GPU copy test's result: for every ordered pair of GPUs the copy bandwidth and
//! latency with peer access enabled, with it disabled (the driver stages the copy through host
//! memory), and staged by hand through pinned host memory, as a matrix like nvbandwidth's
//! `device_to_device_memcpy_*` tests print. The worker measures; the parent judges each pair
//! against the link between the two GPUs (`judgement`).

use serde::{Deserialize, Serialize};

use super::protocol::Unit;
use super::stats::Stats;
use super::verdict::{Expected, Judgement, LINK_NORMAL_SHARE, PAGEABLE_NORMAL_SHARE, Verdict, at_least};
use crate::Snapshot;
use crate::compat::LinkTable;
use crate::model::{LinkKind, PciBusId};

/// Share of the link a peer copy (P2P on) normally reaches: as a pinned host copy over PCIe
/// (`LINK_NORMAL_SHARE`); nvbandwidth's published H100 NV18 figures sit near 80 % of 18 × 25 GB/s.
pub const PEER_NORMAL_SHARE: f64 = LINK_NORMAL_SHARE;
/// Share of the slower host link a copy staged through host memory normally reaches: the copy
/// crosses both GPUs' links in turn, which even without overlap gives at least half the slower
/// (the same arithmetic as a pageable copy's two steps, `PAGEABLE_NORMAL_SHARE`).
pub const STAGED_NORMAL_SHARE: f64 = PAGEABLE_NORMAL_SHARE;

/// One GPU of the matrix.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct P2pGpu {
    /// CUDA device ordinal in the worker.
    pub ordinal: u32,
    /// Product name as CUDA reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// PCI bus id as CUDA reports it (`0000:3B:00.0`), which ties it to the probed GPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci_bus_id: Option<String>,
}

/// How a copy between two GPUs was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum P2pMode {
    /// Peer access enabled (`cuCtxEnablePeerAccess`), then `cuMemcpyPeerAsync`: over NVLink or
    /// PCIe directly, without host memory.
    PeerEnabled,
    /// `cuMemcpyPeerAsync` without peer access: the driver stages the copy through host memory.
    PeerDisabled,
    /// Device to pinned host memory, then host to device, by hand: the all-to-all fallback that
    /// works wherever each GPU can copy to and from the host.
    HostStaged,
}

impl P2pMode {
    /// Every mode, in table order.
    pub const ALL: [Self; 3] = [Self::PeerEnabled, Self::PeerDisabled, Self::HostStaged];

    /// Short words for a table.
    pub fn label(self) -> &'static str {
        match self {
            Self::PeerEnabled => "P2P on",
            Self::PeerDisabled => "P2P off",
            Self::HostStaged => "host-staged",
        }
    }
}

/// One mode's measurements of one pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct P2pMeasure {
    /// How the copy was made.
    pub mode: P2pMode,
    /// Copy bandwidth, 10^9 bytes per second (bytes copied once per copy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_gbps: Option<Stats>,
    /// Time of one small copy, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_us: Option<Stats>,
    /// Why this mode was not measured (peer access not offered, a CUDA error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// One ordered pair: copies from `src` to `dst`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct P2pPair {
    /// CUDA ordinal of the GPU copied from.
    pub src: u32,
    /// CUDA ordinal of the GPU copied to.
    pub dst: u32,
    /// `cuDeviceCanAccessPeer(src, dst)`: whether the driver offers peer access.
    pub can_access_peer: bool,
    /// Each mode measured (or skipped, with the reason).
    pub measures: Vec<P2pMeasure>,
    /// The pair judged against the link between the two GPUs; filled by the parent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judgement: Option<Judgement>,
    /// The mode whose bandwidth `judgement` judged (P2P on over a direct path, else P2P off or
    /// host-staged); `None` when no bandwidth was judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged_mode: Option<P2pMode>,
}

impl P2pPair {
    /// The measurement of `mode`, when that mode was tried.
    pub fn measure(&self, mode: P2pMode) -> Option<&P2pMeasure> {
        self.measures.iter().find(|m| m.mode == mode)
    }

    /// Median bandwidth of `mode`, GB/s, when it was measured.
    pub fn bandwidth(&self, mode: P2pMode) -> Option<f64> {
        self.measure(mode)?.bandwidth_gbps.map(|s| s.median)
    }

    /// Median latency of `mode`, µs, when it was measured.
    pub fn latency(&self, mode: P2pMode) -> Option<f64> {
        self.measure(mode)?.latency_us.map(|s| s.median)
    }
}

/// The GPU-to-GPU copy test's result.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct P2pMatrix {
    /// Bytes per bandwidth copy.
    pub bytes: u64,
    /// Bytes per latency copy.
    pub latency_bytes: u64,
    /// The GPUs, in ordinal order.
    pub gpus: Vec<P2pGpu>,
    /// Every ordered pair of different GPUs.
    pub pairs: Vec<P2pPair>,
    /// Every GPU sending to every other at once through pinned host memory: the sum over all
    /// pairs, GB/s. `None` when not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staged_all_to_all_gbps: Option<Stats>,
    /// A loopback run on one GPU (two contexts of the same device), made only by the GPU
    /// verification to exercise the CUDA calls; its pairs are not judged.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub loopback: bool,
}

impl P2pMatrix {
    /// The pair copying from `src` to `dst`.
    pub fn pair(&self, src: u32, dst: u32) -> Option<&P2pPair> {
        self.pairs.iter().find(|p| p.src == src && p.dst == dst)
    }

    /// The GPU with CUDA ordinal `ordinal`.
    pub fn gpu(&self, ordinal: u32) -> Option<&P2pGpu> {
        self.gpus.iter().find(|g| g.ordinal == ordinal)
    }

    /// Judges every pair against the link between its two GPUs (`links`, from `link_facts`).
    pub fn judge(&mut self, links: &[P2pLinkFact]) {
        for pair in &mut self.pairs {
            let src = self.gpus.iter().find(|g| g.ordinal == pair.src);
            let dst = self.gpus.iter().find(|g| g.ordinal == pair.dst);
            let (judgement, mode) = if self.loopback {
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
}

/// How two GPUs connect, as the GPU-to-GPU copies are judged: the topology's path and P2P status
/// between them and their host links, with the expected bandwidths worked out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct P2pLinkFact {
    /// The two GPUs (either order).
    pub gpus: [P2pEnd; 2],
    /// The path between them, as `nvidia-smi topo -m` names it.
    pub link: LinkKind,
    /// Whether the topology says peer reads and writes work (`false`: a status other than OK,
    /// named in `p2p_status`); `None` when it did not say.
    pub p2p_ok: Option<bool>,
    /// The first read/write P2P status that is not OK, as `topo -p2p` writes it (`CNS`, `GNS`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p2p_status: Option<String>,
    /// What a peer copy should reach over this path, GB/s per direction, and how it was worked
    /// out; `None` when it could not be (an NVLink of unknown version, an unknown host link).
    pub peer: Option<(f64, String)>,
    /// The slower of the two GPUs' host links, GB/s per direction, and its basis: what a copy
    /// staged through host memory crosses.
    pub host: Option<(f64, String)>,
}

/// One GPU of a `P2pLinkFact`, as the worker's matrix can be tied to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct P2pEnd {
    /// The driver's (nvidia-smi's) index.
    pub index: u32,
    /// Its PCI bus id, when the probes reported one.
    pub bus_id: Option<String>,
    /// Its CUDA ordinal under `CUDA_DEVICE_ORDER=PCI_BUS_ID` (which the worker runs with) and this
    /// process's `CUDA_VISIBLE_DEVICES`; `None` when CUDA does not see it.
    pub cuda_ordinal: Option<u32>,
}

impl P2pEnd {
    /// Whether the matrix's `gpu` is this one: by PCI bus id where both are known, else by CUDA ordinal.
    pub fn is(&self, gpu: &P2pGpu) -> bool {
        match (&self.bus_id, &gpu.pci_bus_id) {
            (Some(mine), Some(theirs)) => PciBusId::same(mine, theirs),
            _ => self.cuda_ordinal == Some(gpu.ordinal),
        }
    }
}

impl P2pLinkFact {
    /// Whether this joins the matrix's GPUs `x` and `y`, in either order.
    pub fn joins(&self, x: &P2pGpu, y: &P2pGpu) -> bool {
        let [a, b] = &self.gpus;
        (a.is(x) && b.is(y)) || (a.is(y) && b.is(x))
    }

    /// Whether a peer copy should take the direct path: NVLink, or PCIe within one CPU socket,
    /// unless the topology says P2P is not supported. Across sockets (`SYS`) peer traffic
    /// crosses the CPU interconnect, where P2P is usually refused or slower than staging, so
    /// such a pair is judged as host-staged.
    pub fn direct(&self) -> bool {
        self.p2p_ok != Some(false) && !matches!(self.link, LinkKind::Sys | LinkKind::Unknown)
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
                let generation = gpus.iter().filter_map(|g| g.nvlink_generation()).max();
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
mod tests {
    use super::*;

    fn stats(v: f64) -> Option<Stats> {
        Stats::from_samples(&[v, v, v])
    }

    #[test]
    fn a_matrix_reads_back_from_json_and_finds_its_pairs_and_modes() {
        let pair = P2pPair {
            src: 0,
            dst: 1,
            can_access_peer: false,
            measures: vec![
                P2pMeasure {
                    mode: P2pMode::PeerEnabled,
                    bandwidth_gbps: None,
                    latency_us: None,
                    skipped: Some("peer access is not offered".into()),
                },
                P2pMeasure {
                    mode: P2pMode::PeerDisabled,
                    bandwidth_gbps: stats(12.5),
                    latency_us: stats(9.0),
                    skipped: None,
                },
            ],
            judgement: None,
            judged_mode: None,
        };
        let matrix = P2pMatrix {
            bytes: 256 << 20,
            latency_bytes: 4096,
            gpus: vec![P2pGpu { ordinal: 0, ..P2pGpu::default() }, P2pGpu { ordinal: 1, ..P2pGpu::default() }],
            pairs: vec![pair],
            staged_all_to_all_gbps: None,
            loopback: false,
        };
        let json = serde_json::to_string(&matrix).unwrap();
        assert!(json.contains("\"peer_disabled\""), "{json}");
        let back: P2pMatrix = serde_json::from_str(&json).unwrap();
        assert_eq!(back, matrix);
        let p = back.pair(0, 1).unwrap();
        assert_eq!(p.bandwidth(P2pMode::PeerDisabled), Some(12.5));
        assert_eq!(p.latency(P2pMode::PeerDisabled), Some(9.0));
        assert_eq!(p.bandwidth(P2pMode::PeerEnabled), None);
        assert!(p.measure(P2pMode::HostStaged).is_none());
        assert!(back.pair(1, 0).is_none());
    }

    /// Two GPUs of a family on `n` NVLinks, each link answering NVML's `nvml` version.
    fn nvlink_pair(cc: &str, nvml: u32, n: u32) -> Snapshot {
        use crate::model::{GpuPair, NvLink, TopoGpu, Topology};
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
            p2p_read: Some(crate::model::P2pStatus::Ok),
            p2p_write: Some(crate::model::P2pStatus::Ok),
            p2p_atomics: None,
        };
        let mut snap = Snapshot::unknown(Vec::new());
        snap.topology = crate::Probed::found(
            Topology { gpus: vec![gpu(0), gpu(1)], pairs: vec![pair], ..Topology::default() },
            "test",
        );
        snap
    }

    /// Each family's pair, with the version NVML really answers there, is judged against its own
    /// generation's row of `links.toml`: H100s answer 7 (the enum's 5.0), A100s and RTX 3090s 5 (3.1).
    #[test]
    fn nvlink_pairs_are_judged_at_the_generation_nvml_reports_for_their_family() {
        let kb = &crate::compat::Kb::get().unwrap().links;
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
