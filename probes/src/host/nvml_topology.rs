//! NVML's answers about how the devices connect, as plain data the recordings carry: for each pair
//! the closest common PCIe ancestor and the peer-to-peer status of reads, writes, atomics and NVLink;
//! for each device its NUMA node, CPU affinity, NVLinks and MIG devices. Each call is asked
//! separately; one that fails leaves its field `None` with NVML's reason in `unreported`.

use std::collections::BTreeMap;

use nvml_wrapper::Device;
use nvml_wrapper::enum_wrappers::device::{P2pCapabilitiesIndex, P2pStatus as NvmlP2p};
use serde::{Deserialize, Serialize};

use super::nvml_handle::take;
use gpu_doctor_model::{LinkKind, MigFacts, MigInstance, NvLink, P2pStatus};

/// NVLinks asked per device (`NVML_NVLINK_MAX_LINKS`).
const MAX_NVLINKS: u32 = 18;
/// Words of the CPU affinity mask asked for: 64 × 64 = 4096 CPUs.
#[cfg(target_os = "linux")]
const AFFINITY_WORDS: usize = 64;

/// What NVML said about the topology.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NvmlTopology {
    /// One entry per device, by index.
    pub devices: Vec<NvmlTopoDevice>,
    /// One entry per pair of devices (`a < b`).
    pub pairs: Vec<NvmlPair>,
}

/// What NVML said about one device's place.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NvmlTopoDevice {
    /// NVML's index.
    pub index: u32,
    /// `nvmlDeviceGetNumaNodeId`.
    pub numa_node: Option<u32>,
    /// `nvmlDeviceGetCpuAffinity` as a CPU list (`0-23,48-71`).
    pub cpu_affinity: Option<String>,
    /// Each NVLink that answered `is_active`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nvlinks: Vec<NvLink>,
    /// MIG mode and devices; `None` when the device has no MIG.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mig: Option<MigFacts>,
    /// Calls that did not answer, with NVML's reason.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unreported: BTreeMap<String, String>,
}

/// What NVML said about one pair of devices.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NvmlPair {
    /// The lower index.
    pub a: u32,
    /// The higher index.
    pub b: u32,
    /// `nvmlDeviceGetTopologyCommonAncestor`: the PCIe path (never NVLink).
    pub pcie: Option<LinkKind>,
    /// `nvmlDeviceGetP2PStatus` for NVLink.
    pub p2p_nvlink: Option<P2pStatus>,
    /// … for reads.
    pub p2p_read: Option<P2pStatus>,
    /// … for writes.
    pub p2p_write: Option<P2pStatus>,
    /// … for atomics.
    pub p2p_atomics: Option<P2pStatus>,
    /// Calls that did not answer, with NVML's reason.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unreported: BTreeMap<String, String>,
}

/// What `nvml::query` already read of a device's MIG mode, which is not asked again.
#[derive(Debug, Clone, Default)]
pub(super) struct MigAsked {
    /// MIG mode is on; `None` when NVML did not say.
    pub enabled: Option<bool>,
    /// Why NVML did not say, when it did not.
    pub unreported: Option<String>,
}

/// Asks NVML about the devices (index, handle); `asked[n]` is what `nvml::query` already read of
/// `devices[n]`'s MIG mode.
pub(super) fn query(devices: &[(u32, Device<'_>)], asked: &[MigAsked]) -> NvmlTopology {
    let devices_asked = devices.iter().zip(asked).map(|((i, d), a)| query_device(*i, d, a)).collect();
    let mut out = NvmlTopology { devices: devices_asked, pairs: Vec::new() };
    for (n, (a, da)) in devices.iter().enumerate() {
        for (b, db) in devices.iter().skip(n + 1) {
            out.pairs.push(query_pair((*a, da), (*b, db)));
        }
    }
    out
}

fn status(s: NvmlP2p) -> P2pStatus {
    match s {
        NvmlP2p::Ok => P2pStatus::Ok,
        NvmlP2p::ChipsetNotSupported => P2pStatus::ChipsetNotSupported,
        NvmlP2p::GpuNotSupported => P2pStatus::GpuNotSupported,
        NvmlP2p::IohTopologyNotSupported => P2pStatus::TopologyNotSupported,
        NvmlP2p::DisabledByRegkey => P2pStatus::DisabledByRegkey,
        NvmlP2p::NotSupported => P2pStatus::NotSupported,
        NvmlP2p::Unknown => P2pStatus::Unknown,
    }
}

fn query_pair((a, da): (u32, &Device<'_>), (b, db): (u32, &Device<'_>)) -> NvmlPair {
    let mut u = BTreeMap::new();
    let mut p2p = |name: &str, index| take(&mut u, name, da.p2p_status(db, index)).map(status);
    let p2p_read = p2p("p2p_read", P2pCapabilitiesIndex::Read);
    let p2p_write = p2p("p2p_write", P2pCapabilitiesIndex::Write);
    let p2p_atomics = p2p("p2p_atomics", P2pCapabilitiesIndex::Atomics);
    let p2p_nvlink = p2p("p2p_nvlink", P2pCapabilitiesIndex::NvLink);
    let pcie = common_ancestor(&mut u, da, b);
    NvmlPair { a, b, pcie, p2p_nvlink, p2p_read, p2p_write, p2p_atomics, unreported: u }
}

#[cfg(target_os = "linux")]
fn common_ancestor(u: &mut BTreeMap<String, String>, da: &Device<'_>, b: u32) -> Option<LinkKind> {
    use nvml_wrapper::enum_wrappers::device::TopologyLevel;
    let other = take(u, "device_by_index", da.nvml().device_by_index(b))?;
    take(u, "topology_common_ancestor", da.topology_common_ancestor(other)).map(|level| match level {
        TopologyLevel::Internal => LinkKind::Internal,
        TopologyLevel::Single => LinkKind::Pix,
        TopologyLevel::Multiple => LinkKind::Pxb,
        TopologyLevel::HostBridge => LinkKind::Phb,
        TopologyLevel::Node => LinkKind::Node,
        TopologyLevel::System => LinkKind::Sys,
    })
}

/// NVML's topology calls are Linux only.
#[cfg(not(target_os = "linux"))]
fn common_ancestor(u: &mut BTreeMap<String, String>, _: &Device<'_>, _: u32) -> Option<LinkKind> {
    u.insert("topology_common_ancestor".to_owned(), "NVML offers it on Linux only".to_owned());
    None
}

fn query_device(index: u32, d: &Device<'_>, asked: &MigAsked) -> NvmlTopoDevice {
    let mut u = BTreeMap::new();
    let numa_node = take(&mut u, "numa_node_id", d.numa_node_id());
    let cpu_affinity = cpu_affinity(&mut u, d);
    let mut nvlinks = Vec::new();
    for link in 0..MAX_NVLINKS {
        let w = d.link_wrapper_for(link);
        // The first link that does not answer ends the list (GPUs have fewer links than the maximum).
        let active = match w.is_active() {
            Ok(active) => active,
            Err(e) => {
                if link == 0 {
                    take::<bool>(&mut u, "nvlink_is_active", Err(e));
                }
                break;
            }
        };
        let version = w.version().ok();
        let remote_bus_id = if active { w.remote_pci_info().ok().map(|p| p.bus_id) } else { None };
        nvlinks.push(NvLink { link, active, version, remote_bus_id });
    }
    // MIG mode as `nvml::query` read it for `Gpu::mig_enabled`, with its reason when it did not answer.
    if let Some(why) = &asked.unreported {
        u.insert("mig_mode".to_owned(), why.clone());
    }
    let mig = asked.enabled.map(|enabled| MigFacts { enabled, instances: enabled.then(|| mig_instances(&mut u, d)) });
    NvmlTopoDevice { index, numa_node, cpu_affinity, nvlinks, mig, unreported: u }
}

fn mig_instances(u: &mut BTreeMap<String, String>, d: &Device<'_>) -> Vec<MigInstance> {
    let count = take(u, "mig_device_count", d.mig_device_count()).unwrap_or(0);
    (0..count)
        .filter_map(|i| {
            // Unused slots answer NotFound: not an error.
            let m = d.mig_device_by_index(i).ok()?;
            let name = m.name().ok();
            // `NVIDIA A100-SXM4-80GB MIG 1g.10gb` → `1g.10gb`.
            let profile = name.as_deref().and_then(|n| n.rsplit_once("MIG ")).map(|(_, p)| p.trim().to_owned());
            Some(MigInstance { device: i, profile, uuid: m.uuid().ok() })
        })
        .collect()
}

#[cfg(target_os = "linux")]
fn cpu_affinity(u: &mut BTreeMap<String, String>, d: &Device<'_>) -> Option<String> {
    let words = take(u, "cpu_affinity", d.cpu_affinity(AFFINITY_WORDS))?;
    let bits = std::mem::size_of::<std::os::raw::c_ulong>() * 8;
    let cpus = words
        .iter()
        .enumerate()
        .flat_map(|(w, word)| (0..bits).filter(move |b| word >> b & 1 == 1).map(move |b| w * bits + b));
    let list = gpu_doctor_model::cpu_list(cpus);
    (!list.is_empty()).then_some(list)
}

/// NVML's CPU affinity is Linux only.
#[cfg(not(target_os = "linux"))]
fn cpu_affinity(u: &mut BTreeMap<String, String>, _: &Device<'_>) -> Option<String> {
    u.insert("cpu_affinity".to_owned(), "NVML offers it on Linux only".to_owned());
    None
}
