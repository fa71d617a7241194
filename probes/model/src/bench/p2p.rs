//! The GPU-to-GPU copy test's result: for every ordered pair of GPUs the copy bandwidth and
//! latency with peer access enabled, with it disabled (the driver stages the copy through host
//! memory), and staged by hand through pinned host memory, as a matrix like nvbandwidth's
//! `device_to_device_memcpy_*` tests print. The worker measures; the parent judges each pair
//! against the link between the two GPUs (`judgement`).

use serde::{Deserialize, Serialize};

use super::judgement::Judgement;
use super::stats::Stats;
use crate::{LinkKind, PciBusId};

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
}
