//! How the GPUs of one machine connect: each pair's link as `nvidia-smi topo -m` names it and its
//! peer-to-peer status, each GPU's NUMA node, CPU affinity, NVLinks and MIG instances, and which
//! physical GPU each CUDA index is.

use serde::{Deserialize, Serialize};

use super::ComputeCapability;

/// The GPUs of one machine and how they connect.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Topology {
    /// One entry per GPU, in the driver's (nvidia-smi's, NVML's) index order.
    pub gpus: Vec<TopoGpu>,
    /// One entry per pair of GPUs (`a < b`); empty with fewer than two GPUs.
    #[serde(default)]
    pub pairs: Vec<GpuPair>,
    /// Which GPU each CUDA index is.
    pub cuda_order: CudaOrder,
    /// What could not be asked, one sentence each (NVML's reason, nvidia-smi refused, sysfs missing).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// PCI bridges whose Access Control Services send peer-to-peer requests or completions up to the
    /// root complex (lspci's `ACSCtl: … ReqRedir+` or `CmpltRedir+`): each as `<bus id>: <ACSCtl
    /// line>`, or the line alone where the paste has no header; empty when none is known (the live
    /// probe does not read ACS).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub acs_redirect: Vec<String>,
    /// Peer copies measured between GPU pairs CUDA reports peer access for (the CUDA samples'
    /// p2pBandwidthLatencyTest, pasted), with the same copy staged through the host; empty when
    /// none was measured (the live probe's own P2P test is judged in the benchmark run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub peer_copies: Vec<PeerCopy>,
    /// How the host's IOMMU maps the devices' DMA, as the kernel command line and log show it;
    /// `None` when nothing said (the live probe does not read it yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iommu: Option<Iommu>,
    /// An NCCL test over several GPUs that stopped before its first result, as a pasted output and
    /// the words beside it show it; `None` when none was seen (the live probe runs no NCCL test).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stalled_collective: Option<StalledCollective>,
    /// CUDA's answer whether one GPU can reach another's memory (cuDeviceCanAccessPeer) as a pasted
    /// program printed it (TensorFlow's device interconnect matrix, p2pBandwidthLatencyTest's `CAN Access
    /// Peer`), in the program's numbering; empty when none was printed (the live probe asks NVML).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub peer_access: Vec<PeerAccess>,
}

/// Whether CUDA lets GPU `src` access GPU `dst`'s memory, as a program printed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerAccess {
    /// The accessing GPU, in the program's numbering (CUDA's).
    pub src: u32,
    /// The GPU accessed.
    pub dst: u32,
    /// CUDA said it can.
    pub can: bool,
}

/// An NCCL test (nccl-tests, or NCCL 1.x's own tests) that listed its GPUs and printed its table
/// header, then no result row and no closing average, where the text says it stalled or hung.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StalledCollective {
    /// How many ranks (GPUs) the test listed.
    pub ranks: u32,
    /// The GPU names the test listed, each once.
    pub names: Vec<String>,
    /// The lines that say so: the first device line, the table header, the words.
    pub evidence: Vec<String>,
}

/// What a pasted text says goes wrong when work spans several GPUs of one machine, the symptoms NCCL's
/// troubleshooting guide and the CUDA samples give for peer traffic that ACS or the IOMMU redirects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MultiGpuSymptom {
    /// The run hangs, freezes or deadlocks.
    Hang,
    /// Data that crossed between GPUs is wrong: zeros, NaN, corruption, a CUDA sample's verification error.
    WrongValues,
    /// Work over several GPUs is slower than expected, or a peer copy's bandwidth is low.
    Slow,
    /// A peer-to-peer test (simpleP2P, p2pBandwidthLatencyTest) failed.
    PeerTestFailed,
}

/// A multi-GPU symptom as a pasted text gives it: a sentence ("`tf.distribute.MirroredStrategy` is stuck",
/// "moving a tensor from one GPU to another results in data corruption") or a CUDA sample's own line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MultiGpuTrouble {
    pub symptom: MultiGpuSymptom,
    /// The line that says it, trimmed to 300 characters.
    pub line: String,
    /// True where the line itself puts two or more GPUs of one machine in the work ("only with multiple GPUs",
    /// "from one GPU to another", a peer-to-peer test), so the machine has them whatever else the text lists.
    pub several_gpus: bool,
}

/// The host's IOMMU (Intel VT-d, AMD-Vi) as the kernel shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Iommu {
    /// How it maps devices' DMA.
    pub mode: IommuMode,
    /// The lines that said so, trimmed, in the order read.
    pub evidence: Vec<String>,
    /// The PCI devices (bus ids as the fault lines print them, `02:00.0`) whose DMA the IOMMU refused, in the
    /// order first seen; empty when no fault was shown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fault_devices: Vec<String>,
}

/// How the IOMMU maps a device's DMA (Linux's default domain type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IommuMode {
    /// Every DMA address is translated through the IOMMU's page tables (the kernel's `Translated`
    /// default domain): CUDA does not support PCIe peer-to-peer on bare metal this way.
    Translated,
    /// Devices see physical addresses (`iommu=pt`, the `Passthrough` default domain).
    Passthrough,
    /// The IOMMU is off (`intel_iommu=off`, `amd_iommu=off`, `iommu=off`).
    Off,
}

/// One GPU pair's unidirectional copy bandwidth with peer access on and off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerCopy {
    /// The copying GPU, in the program's numbering (CUDA's).
    pub src: u32,
    /// The GPU copied to.
    pub dst: u32,
    /// With peer access enabled (P2P writes), MB/s.
    pub p2p_mbytes_per_s: u32,
    /// With peer access disabled (staged through host memory), MB/s.
    pub staged_mbytes_per_s: u32,
}

impl PeerCopy {
    /// True when the peer copy runs at less than half the staged one: peer traffic takes a detour
    /// (ACS or the IOMMU sending it up to the root complex) instead of going straight across.
    pub fn p2p_far_below_staged(&self) -> bool {
        u64::from(self.p2p_mbytes_per_s) * 2 < u64::from(self.staged_mbytes_per_s)
    }
}

impl Topology {
    /// The pair of GPUs `a` and `b` (driver indices, either order), when known.
    pub fn pair(&self, a: u32, b: u32) -> Option<&GpuPair> {
        let (a, b) = (a.min(b), a.max(b));
        self.pairs.iter().find(|p| p.a == a && p.b == b)
    }

    /// The GPU with driver index `index`.
    pub fn gpu(&self, index: u32) -> Option<&TopoGpu> {
        self.gpus.iter().find(|g| g.index == index)
    }

    /// The NUMA nodes the GPUs hang off, each once, lowest first.
    pub fn numa_nodes(&self) -> Vec<u32> {
        let mut nodes: Vec<u32> = self.gpus.iter().filter_map(|g| g.numa_node).collect();
        nodes.sort_unstable();
        nodes.dedup();
        nodes
    }
}

/// One GPU's place in the machine.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TopoGpu {
    /// The driver's index (nvidia-smi's `GPU<n>`, NVML's index: PCI bus order).
    pub index: u32,
    /// Product name; `None` when not reported.
    pub name: Option<String>,
    /// PCI bus id in sysfs form; `None` when not reported.
    pub bus_id: Option<String>,
    /// `GPU-…` UUID, which `CUDA_VISIBLE_DEVICES` may name; `None` when not reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// Compute capability as text (`9.0`), which CUDA's default order ranks by; `None` when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_capability: Option<String>,
    /// The NUMA node of the CPU the GPU hangs off; `None` when the machine has one node or did not say.
    pub numa_node: Option<u32>,
    /// The CPUs next to the GPU as a Linux CPU list (`0-23,48-71`); `None` when not reported.
    pub cpu_affinity: Option<String>,
    /// Where `numa_node` and `cpu_affinity` came from: `nvml`, `sysfs`, `nvidia-smi topo -m`, `none`.
    pub affinity_from: String,
    /// Its NVLinks, one per link that answered; empty on GPUs without NVLink.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nvlinks: Vec<NvLink>,
    /// MIG mode and instances; `None` when the GPU has no MIG or did not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mig: Option<MigFacts>,
    /// Its NVLinks' error counters (`nvidia-smi nvlink -e`), one per link that reported any; empty
    /// when not read (the live probe does not read them yet).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nvlink_errors: Vec<NvLinkErrors>,
}

/// One NVLink's error counters since the driver last reset them (`nvidia-smi nvlink -e`, NVML's
/// `nvmlDeviceGetNvLinkErrorCounter`); each `None` when not reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NvLinkErrors {
    /// Link number on the GPU.
    pub link: u32,
    /// Data link transmit replays (`Replay Errors`): a flit was sent again after an error.
    pub replay: Option<u64>,
    /// Data link recoveries (`Recovery Errors`): the link was retrained after errors.
    pub recovery: Option<u64>,
    /// Flits received with a CRC error (`CRC Errors`).
    pub crc: Option<u64>,
}

impl TopoGpu {
    /// `NUMA node 0, CPUs 0-63 (from nvml)`, with `?` for what was not reported.
    pub fn affinity_words(&self) -> String {
        format!(
            "NUMA node {}, CPUs {} (from {})",
            self.numa_node.map_or_else(|| "?".to_owned(), |n| n.to_string()),
            self.cpu_affinity.as_deref().unwrap_or("?"),
            self.affinity_from
        )
    }
}

/// One NVLink of a GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NvLink {
    /// Link number on this GPU.
    pub link: u32,
    /// Whether the link is up.
    pub active: bool,
    /// What NVML's `nvmlDeviceGetNvLinkVersion` answered, when it did: its `nvmlNvlinkVersion_t`
    /// enum (3.0 = 4, 4.0 = 6, 5.0 = 7; H100s answer 7), not the generation, which
    /// `gpu_doctor_kb::gpu_nvlink_generation` works out.
    pub version: Option<u32>,
    /// The PCI bus id at the other end (a GPU, or an NVSwitch), when reported.
    pub remote_bus_id: Option<String>,
}

/// MIG (Multi-Instance GPU) state of one GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MigFacts {
    /// MIG mode is on now.
    pub enabled: bool,
    /// The MIG devices CUDA can see (a GPU instance with a compute instance), in the driver's order;
    /// `None` when MIG is off or the instances could not be listed.
    pub instances: Option<Vec<MigInstance>>,
}

/// One MIG device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MigInstance {
    /// Index among the GPU's MIG devices (`MIG 1g.10gb Device 0`).
    pub device: u32,
    /// Profile, e.g. `1g.10gb`; `None` when not reported.
    pub profile: Option<String>,
    /// `MIG-…` UUID, which `CUDA_VISIBLE_DEVICES` takes; `None` when not reported.
    pub uuid: Option<String>,
}

/// How two GPUs connect, as `nvidia-smi topo -m` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LinkKind {
    /// `NV#`: a bonded set of this many NVLinks.
    Nvlink {
        /// Number of links.
        links: u32,
    },
    /// `PIX`: at most a single PCIe bridge (switch) between them.
    Pix,
    /// `PXB`: several PCIe bridges, without the host bridge.
    Pxb,
    /// `PHB`: through a PCIe host bridge (the CPU).
    Phb,
    /// `NODE`: between host bridges within one NUMA node.
    Node,
    /// `SYS`: across the interconnect between NUMA nodes (QPI/UPI, Infinity Fabric).
    Sys,
    /// NVML's "internal": two GPUs on one board (e.g. Tesla K80).
    Internal,
    /// Not reported, or a value this version does not know.
    #[serde(other)]
    Unknown,
}

impl LinkKind {
    /// The matrix label: `NV18`, `PIX`, …, `?`.
    pub fn label(self) -> String {
        match self {
            Self::Nvlink { links } => format!("NV{links}"),
            Self::Pix => "PIX".to_owned(),
            Self::Pxb => "PXB".to_owned(),
            Self::Phb => "PHB".to_owned(),
            Self::Node => "NODE".to_owned(),
            Self::Sys => "SYS".to_owned(),
            Self::Internal => "BRD".to_owned(),
            Self::Unknown => "?".to_owned(),
        }
    }

    /// Reads a matrix label (`NV12`, `PIX`, `PXB`, `PHB`, `NODE`, `SYS`, and the old `SOC` for `SYS`).
    pub fn from_label(label: &str) -> Option<Self> {
        Some(match label {
            "PIX" | "PSB" => Self::Pix,
            "PXB" => Self::Pxb,
            "PHB" => Self::Phb,
            "NODE" => Self::Node,
            "SYS" | "SOC" => Self::Sys,
            other => Self::Nvlink { links: other.strip_prefix("NV")?.parse().ok().filter(|n| *n > 0)? },
        })
    }

    /// True when the pair shares a PCIe switch or NVLink: where peer-to-peer is expected on GPUs that
    /// offer it.
    pub fn is_close(self) -> bool {
        matches!(self, Self::Nvlink { .. } | Self::Pix | Self::Pxb | Self::Internal)
    }

    /// One line saying what it means, as nvidia-smi's legend words it.
    pub fn meaning(self) -> &'static str {
        match self {
            Self::Nvlink { .. } => "a bonded set of NVLinks",
            Self::Pix => "at most a single PCIe bridge",
            Self::Pxb => "multiple PCIe bridges, without the PCIe host bridge",
            Self::Phb => "PCIe and a PCIe host bridge (typically the CPU)",
            Self::Node => "PCIe and the interconnect between PCIe host bridges within a NUMA node",
            Self::Sys => "PCIe and the SMP interconnect between NUMA nodes (e.g. QPI/UPI)",
            Self::Internal => "the same board",
            Self::Unknown => "not reported",
        }
    }
}

/// Peer-to-peer status of one capability between two GPUs (NVML's `nvmlGpuP2PStatus_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum P2pStatus {
    /// `OK`.
    Ok,
    /// `CNS`: the chipset does not support it.
    ChipsetNotSupported,
    /// `GNS`: the GPU does not support it (GeForce boards since the RTX 40 series, the driver says so).
    GpuNotSupported,
    /// `TNS`: the topology (I/O hub) does not support it.
    TopologyNotSupported,
    /// `DR`: disabled by a driver registry key.
    DisabledByRegkey,
    /// `NS`: not supported.
    NotSupported,
    /// `U`: unknown, or a value this version does not know.
    #[serde(other)]
    Unknown,
}

impl P2pStatus {
    /// nvidia-smi's `topo -p2p` code: `OK`, `CNS`, `GNS`, `TNS`, `DR`, `NS`, `U`.
    pub fn code(self) -> &'static str {
        match self {
            Self::Ok => "OK",
            Self::ChipsetNotSupported => "CNS",
            Self::GpuNotSupported => "GNS",
            Self::TopologyNotSupported => "TNS",
            Self::DisabledByRegkey => "DR",
            Self::NotSupported => "NS",
            Self::Unknown => "U",
        }
    }

    /// Reads a `topo -p2p` code.
    pub fn from_code(code: &str) -> Option<Self> {
        Some(match code {
            "OK" => Self::Ok,
            "CNS" => Self::ChipsetNotSupported,
            "GNS" => Self::GpuNotSupported,
            "TNS" => Self::TopologyNotSupported,
            "DR" => Self::DisabledByRegkey,
            "NS" => Self::NotSupported,
            "U" => Self::Unknown,
            _ => return None,
        })
    }

    /// In words, as nvidia-smi's legend has it.
    pub fn words(self) -> &'static str {
        match self {
            Self::Ok => "OK",
            Self::ChipsetNotSupported => "chipset not supported",
            Self::GpuNotSupported => "GPU not supported",
            Self::TopologyNotSupported => "topology not supported",
            Self::DisabledByRegkey => "disabled by regkey",
            Self::NotSupported => "not supported",
            Self::Unknown => "unknown",
        }
    }
}

/// Two GPUs and how they reach each other.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuPair {
    /// The lower driver index.
    pub a: u32,
    /// The higher driver index.
    pub b: u32,
    /// The path between them.
    pub link: LinkKind,
    /// Peer-to-peer reads; `None` when not asked or not answered.
    pub p2p_read: Option<P2pStatus>,
    /// Peer-to-peer writes.
    pub p2p_write: Option<P2pStatus>,
    /// Peer-to-peer atomics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p2p_atomics: Option<P2pStatus>,
}

impl GpuPair {
    /// The first read/write status that is not OK, when any is known not to be.
    pub fn p2p_blocked(&self) -> Option<P2pStatus> {
        [self.p2p_read, self.p2p_write].into_iter().flatten().find(|s| *s != P2pStatus::Ok)
    }
}

/// The CUDA device order the variables ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceOrder {
    /// CUDA's default: fastest first (`CUDA_DEVICE_ORDER` unset or `FASTEST_FIRST`).
    #[default]
    FastestFirst,
    /// `CUDA_DEVICE_ORDER=PCI_BUS_ID`: nvidia-smi's order.
    PciBusId,
    /// A value this version does not know, read from a report written by a newer one.
    #[serde(other)]
    Unknown,
}

/// Which physical GPU each CUDA index names.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CudaOrder {
    /// `CUDA_DEVICE_ORDER` as set; `None` when unset.
    pub device_order_var: Option<String>,
    /// `CUDA_VISIBLE_DEVICES` as set; `None` when unset.
    pub visible_devices_var: Option<String>,
    /// The order the variable asks for (an unknown value keeps CUDA's default).
    pub order: DeviceOrder,
    /// CUDA's default (fastest-first) order: the nvidia-smi index of CUDA device 0, 1, …, expected
    /// from the compute capabilities (higher first; PCI order among equals).
    pub fastest_first: Vec<u32>,
    /// What CUDA device 0, 1, … are under the variables now, as nvidia-smi indices.
    pub effective: Vec<u32>,
    /// What they would be with `CUDA_DEVICE_ORDER=PCI_BUS_ID` and the same `CUDA_VISIBLE_DEVICES`.
    pub with_pci_bus_id: Vec<u32>,
    /// The `CUDA_VISIBLE_DEVICES` entry that names no GPU (CUDA hides it and every entry after it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmatched: Option<String>,
    /// How `fastest_first` was worked out, one sentence.
    pub basis: String,
}

impl CudaOrder {
    /// Works out the order from the GPUs (driver order) and the two variables.
    ///
    /// CUDA's default order is "fastest first" by a heuristic the CUDA documentation does not spell
    /// out; it puts higher compute capabilities first, so that is what is expected here, PCI order
    /// among equals. Integer entries of `CUDA_VISIBLE_DEVICES` index that order; `GPU-…` entries (or
    /// unique prefixes) and `MIG-…` entries name a GPU; the first entry that names none hides itself
    /// and every entry after it.
    pub fn derive(gpus: &[TopoGpu], device_order_var: Option<&str>, visible_devices_var: Option<&str>) -> Self {
        let order = match device_order_var.map(str::trim) {
            Some("PCI_BUS_ID") => DeviceOrder::PciBusId,
            _ => DeviceOrder::FastestFirst,
        };
        let cc = |g: &TopoGpu| g.compute_capability.as_deref()?.parse::<ComputeCapability>().ok();
        let mut pci: Vec<&TopoGpu> = gpus.iter().collect();
        pci.sort_by_key(|g| g.index);
        let mut fastest = pci.clone();
        // A stable sort: equal capabilities keep PCI order; unknown ones go last.
        fastest.sort_by_key(|g| std::cmp::Reverse(cc(g)));
        let unknown = pci.iter().filter(|g| cc(g).is_none()).count();
        let basis = if unknown == 0 {
            "CUDA's default order (FASTEST_FIRST) ranks GPUs by a speed heuristic; expected here from the compute \
             capabilities, highest first, PCI order among equals"
                .to_owned()
        } else {
            format!(
                "CUDA's default order (FASTEST_FIRST) ranks GPUs by a speed heuristic; {unknown} GPU(s) without a known \
                 compute capability are placed last, so the expected order is uncertain"
            )
        };
        let visible = |base: &[&TopoGpu]| pick_visible(base, gpus, visible_devices_var);
        let (with_pci, unmatched) = visible(&pci);
        let (with_fastest, _) = visible(&fastest);
        Self {
            device_order_var: device_order_var.map(str::to_owned),
            visible_devices_var: visible_devices_var.map(str::to_owned),
            order,
            fastest_first: fastest.iter().map(|g| g.index).collect(),
            effective: if order == DeviceOrder::PciBusId { with_pci.clone() } else { with_fastest },
            with_pci_bus_id: with_pci,
            unmatched,
            basis,
        }
    }

    /// True when CUDA's indices differ from nvidia-smi's only because of the device order: what
    /// CUDA device N is now is not what it would be with `CUDA_DEVICE_ORDER=PCI_BUS_ID`.
    pub fn order_changes_indices(&self) -> bool {
        self.effective != self.with_pci_bus_id
    }
}

/// The GPUs CUDA shows, in order, from `base` (CUDA's enumeration order) and `CUDA_VISIBLE_DEVICES`;
/// and the first entry that named no GPU.
fn pick_visible(base: &[&TopoGpu], all: &[TopoGpu], var: Option<&str>) -> (Vec<u32>, Option<String>) {
    let Some(var) = var else { return (base.iter().map(|g| g.index).collect(), None) };
    if var.trim().is_empty() {
        return (Vec::new(), None);
    }
    let mut out: Vec<u32> = Vec::new();
    for entry in var.split(',').map(str::trim) {
        let found = if let Ok(n) = entry.parse::<usize>() {
            base.get(n).map(|g| g.index)
        } else if entry.starts_with("MIG-") {
            all.iter()
                .find(|g| {
                    g.mig
                        .as_ref()
                        .and_then(|m| m.instances.as_ref())
                        .is_some_and(|is| is.iter().any(|i| i.uuid.as_deref() == Some(entry)))
                })
                .map(|g| g.index)
        } else if entry.starts_with("GPU-") {
            let mut hits = all.iter().filter(|g| g.uuid.as_deref().is_some_and(|u| u.starts_with(entry)));
            match (hits.next(), hits.next()) {
                (Some(g), None) => Some(g.index),
                _ => None,
            }
        } else {
            None
        };
        match found {
            Some(i) if !out.contains(&i) => out.push(i),
            Some(_) => {}
            None => return (out, Some(entry.to_owned())),
        }
    }
    (out, None)
}

/// A Linux CPU list (`0-3,8`) of CPU numbers in increasing order.
pub fn cpu_list(cpus: impl IntoIterator<Item = usize>) -> String {
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for cpu in cpus {
        match ranges.last_mut() {
            Some((_, end)) if *end + 1 == cpu => *end = cpu,
            _ => ranges.push((cpu, cpu)),
        }
    }
    ranges.iter().map(|(a, b)| if a == b { a.to_string() } else { format!("{a}-{b}") }).collect::<Vec<_>>().join(",")
}
