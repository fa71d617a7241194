//! Each GPU's path to the CPU: the PCI bridges above it, its PCIe link, a Thunderbolt/USB4 tunnel
//! when it is an eGPU, and the theoretical host↔device bandwidth that follows.
//!
//! Linux only (sysfs); on Windows the link facts come from NVML in the gpus probe.

pub mod bandwidth;
#[cfg(test)]
mod tests;
pub mod thunderbolt;

use std::path::{Path, PathBuf};

use super::pci::sysfs::{PCI_DEVICES, normalize, parse_hex_u16, read_attr, read_numa_node};
use crate::host::Host;
use gpu_doctor_model::{
    BootLinkLimit, EgpuFacts, Gpu, HostLink, OsFamily, PciBusId, PciDevice, SysfsLink, UpstreamPort,
};
use gpu_doctor_model::{IDLE_NOTE, Probed, Trace};

pub use bandwidth::{parse_link_speed, parse_link_width};
pub use thunderbolt::{ThunderboltBus, ThunderboltDevice, ThunderboltDomain};

/// Gives each link the kernel's bandwidth line about its GPU from `boot_limits` (bus id, limit, as
/// the health probe read them from the kernel log); a GPU the log says nothing about keeps none.
pub fn attach_boot_limits(links: &mut [HostLink], boot_limits: &[(String, BootLinkLimit)]) {
    for l in links {
        if let Some((_, limit)) = boot_limits.iter().find(|(bus, _)| *bus == l.bus_id) {
            l.set_boot_limit(limit.clone());
        }
    }
}

/// The PCIe link of the device at `bus_id` (sysfs form, `0000:01:00.0`) from sysfs; `None` when
/// sysfs says nothing readable about it.
pub fn sysfs_link(host: &dyn Host, bus_id: &str) -> Option<SysfsLink> {
    link_at(host, &super::pci::sysfs::device_dir(host, bus_id))
}

/// The link attributes in a device folder.
fn link_at(host: &dyn Host, dir: &Path) -> Option<SysfsLink> {
    let speed = |attr: &str| read_attr(host, dir, attr).ok().and_then(|s| parse_link_speed(&s));
    let width = |attr: &str| read_attr(host, dir, attr).ok().and_then(|s| parse_link_width(&s));
    let link = SysfsLink {
        gen_current: speed("current_link_speed"),
        gen_max: speed("max_link_speed"),
        width_current: width("current_link_width"),
        width_max: width("max_link_width"),
    };
    (link != SysfsLink::default()).then_some(link)
}

/// Works out each GPU's host link: every NVIDIA PCI device, and every GPU NVML names that the PCI
/// list lacks. Linux only.
pub fn probe(host: &dyn Host, devices: &[PciDevice], gpus: &[Gpu], trace: &mut Trace) -> Probed<Vec<HostLink>> {
    if host.platform().os != OsFamily::Linux {
        let reason = "the host link is read from Linux sysfs; on Windows the gpus probe reports it from NVML";
        trace.miss("sysfs", reason);
        return Probed::Unsupported { reason: reason.to_owned() };
    }
    let mut ids: Vec<String> =
        devices.iter().map(|d| PciBusId::sysfs_form(&d.bus_id).unwrap_or_else(|| d.bus_id.to_lowercase())).collect();
    for id in gpus.iter().filter_map(|g| g.pci_bus_id.as_deref().and_then(PciBusId::sysfs_form)) {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    if ids.is_empty() {
        let reason = "no NVIDIA GPU on the PCI bus or in the driver, so there is no host link to describe";
        trace.miss("match GPUs", reason);
        return Probed::absent(reason);
    }
    let tb = thunderbolt::scan(host, trace);
    let links: Vec<HostLink> = ids
        .iter()
        .map(|id| {
            let gpu = gpus.iter().find(|g| g.has_bus_id(id));
            host_link(host, id, gpu, &tb, trace)
        })
        .collect();
    let source = if links.iter().any(|l| l.values_from.contains("nvml")) { "sysfs and nvml" } else { "sysfs" };
    Probed::found(links, source)
}

/// The bus ids named in a sysfs device path, root port first.
pub(super) fn bus_ids_in(path: &Path) -> Vec<String> {
    PciBusId::all_in_path(path).into_iter().map(String::from).collect()
}

/// The lower of two optional values, or whichever is known.
fn min_known(a: Option<u32>, b: Option<u32>) -> Option<u32> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The sysfs folder of `bus_id` and the bus ids from its root port down to it.
fn resolve_path(host: &dyn Host, bus_id: &str, trace: &mut Trace) -> (PathBuf, Vec<String>) {
    let link = Path::new(PCI_DEVICES).join(bus_id);
    let method = format!("resolve {}", link.display());
    match host.read_link(&link) {
        Ok(target) => {
            let dir =
                if target.is_absolute() { normalize(&target) } else { normalize(&Path::new(PCI_DEVICES).join(target)) };
            let mut path = bus_ids_in(&dir);
            if path.last().map(String::as_str) != Some(bus_id) {
                path = vec![bus_id.to_owned()];
            }
            trace.ok(&method, path.join(" → "));
            (dir, path)
        }
        Err(e) => {
            trace.miss(&method, e.to_string());
            (link, vec![bus_id.to_owned()])
        }
    }
}

/// One bridge above the GPU, read from its folder.
fn upstream_port(host: &dyn Host, bus_id: &str, gpu_dir: &Path, trace: &mut Trace) -> UpstreamPort {
    let dir = gpu_dir
        .ancestors()
        .find(|a| a.file_name().and_then(|n| n.to_str()) == Some(bus_id))
        .map_or_else(|| super::pci::sysfs::device_dir(host, bus_id), Path::to_path_buf);
    let hex = |attr: &str| read_attr(host, &dir, attr).ok().and_then(|s| parse_hex_u16(&s));
    let removable = match read_attr(host, &dir, "removable").as_deref() {
        Ok("removable") => Some(true),
        Ok("fixed") => Some(false),
        _ => None,
    };
    let method = format!("read bridge {bus_id}");
    UpstreamPort {
        bus_id: bus_id.to_owned(),
        vendor_id: hex("vendor"),
        device_id: hex("device"),
        driver: super::pci::bound_driver(host, &dir, &method, trace),
        link: link_at(host, &dir),
        removable,
    }
}

/// Builds one GPU's host link.
fn host_link(host: &dyn Host, bus_id: &str, gpu: Option<&Gpu>, tb: &ThunderboltBus, trace: &mut Trace) -> HostLink {
    let (dir, pci_path) = resolve_path(host, bus_id, trace);
    let upstream: Vec<UpstreamPort> =
        pci_path.iter().take(pci_path.len().saturating_sub(1)).map(|b| upstream_port(host, b, &dir, trace)).collect();
    let own = link_at(host, &dir).unwrap_or_default();
    let parent = upstream.last().and_then(|p| p.link).unwrap_or_default();
    // The GPU's own maximum is what the card can do; the port above it caps what this slot allows.
    let sysfs = SysfsLink {
        gen_current: own.gen_current,
        gen_max: min_known(own.gen_max, parent.gen_max),
        width_current: own.width_current,
        width_max: min_known(own.width_max, parent.width_max),
    };
    let nvml = gpu.map(|g| SysfsLink {
        gen_current: g.pcie_gen_current,
        gen_max: g.pcie_gen_max,
        width_current: g.pcie_width_current,
        width_max: g.pcie_width_max,
    });
    let nvml = nvml.unwrap_or_default();
    let pick = |n: Option<u32>, s: Option<u32>| (n.or(s), n.is_some(), n.is_none() && s.is_some());
    let picks = [
        pick(nvml.gen_current, sysfs.gen_current),
        pick(nvml.gen_max, sysfs.gen_max),
        pick(nvml.width_current, sysfs.width_current),
        pick(nvml.width_max, sysfs.width_max),
    ];
    let values_from = match (picks.iter().any(|p| p.1), picks.iter().any(|p| p.2)) {
        (true, true) => "nvml and sysfs",
        (true, false) => "nvml",
        (false, true) => "sysfs",
        (false, false) => "none",
    };
    let [gen_current, gen_max, width_current, width_max] = picks.map(|p| p.0);
    let numa_node = read_numa_node(host, &dir).and_then(|(_, node)| node);

    let egpu = thunderbolt::egpu_for(&pci_path, &upstream, tb);
    if let Some(e) = &egpu {
        trace.ok(
            "thunderbolt",
            format!(
                "{bus_id} is behind {} {}: {}",
                e.via.label(),
                e.device_name.as_deref().unwrap_or("?"),
                e.evidence.join("; ")
            ),
        );
    }
    let (mut theoretical_gbytes_per_s, mut bandwidth_basis) =
        theoretical(gen_max, width_max, values_from, egpu.as_ref());
    if let Some((g, line)) = gpu.and_then(|g| product_link(g, &bandwidth_basis)) {
        trace.ok("product host link", line.clone());
        (theoretical_gbytes_per_s, bandwidth_basis) = (Some(g), line);
    }
    let below = |cur: Option<u32>, max: Option<u32>| cur.zip(max).is_some_and(|(c, m)| c < m);
    let idle_note = (below(gen_current, gen_max) || below(width_current, width_max)).then(|| IDLE_NOTE.to_owned());
    HostLink {
        bus_id: bus_id.to_owned(),
        pci_path,
        upstream,
        numa_node,
        gen_current,
        gen_max,
        width_current,
        width_max,
        values_from: values_from.to_owned(),
        egpu,
        theoretical_gbytes_per_s,
        bandwidth_basis,
        idle_note,
        boot_limit: None,
    }
}

/// The link over which the GPU reaches host memory where its product is not a PCIe board (GH200:
/// NVLink-C2C to the Grace CPU, `host_link` in its `gpus.toml` row): its theoretical bandwidth per
/// direction and the line that says so, beside the PCIe line (`pcie_line`) it replaces.
fn product_link(gpu: &Gpu, pcie_line: &str) -> Option<(f64, String)> {
    let name = gpu.name.as_deref()?;
    let (product, row) = gpu_doctor_kb::Kb::get().ok()?.product_host_link(name)?;
    let g = row.theoretical_gbytes_per_s;
    Some((
        g,
        format!(
            "{}, over which a {} reaches host memory: {g} GB/s per direction ({}); not its PCIe link ({pcie_line})",
            row.name, product.name, row.source
        ),
    ))
}

/// The theoretical bandwidth and the line that explains it.
fn theoretical(
    gen_max: Option<u32>,
    width_max: Option<u32>,
    from: &str,
    egpu: Option<&EgpuFacts>,
) -> (Option<f64>, String) {
    let pcie = gen_max.zip(width_max).and_then(|(g, w)| {
        let v = gpu_doctor_kb::pcie_gbytes_per_s(g, w)?;
        let formula = gpu_doctor_kb::pcie_formula(g, w)?;
        Some((
            v,
            format!("PCIe Gen{g} x{w}, the most this link can do ({from}): {formula} ≈ {v:.2} GB/s per direction"),
        ))
    });
    let cap = egpu.and_then(|e| bandwidth::tunnel_cap(e.tb_generation, e.link_gbps));
    match (pcie, cap) {
        (Some((p, line)), Some((c, why))) if c < p => (Some(c), format!("{line}; capped by the tunnel: {why}")),
        (Some((p, line)), None) if egpu.is_some() => (
            Some(p),
            format!("{line}; behind Thunderbolt, but the tunnel's generation is unknown, so no cap is applied"),
        ),
        (Some((p, line)), _) => (Some(p), line),
        (None, Some((c, why))) => (Some(c), format!("the PCIe link's maximum is unknown; the tunnel caps it: {why}")),
        (None, None) => (
            None,
            "the link's maximum generation or width is unknown (neither NVML nor sysfs said), so there is no \
             theoretical bandwidth"
                .to_owned(),
        ),
    }
}
