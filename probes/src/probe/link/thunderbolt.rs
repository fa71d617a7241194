//! Thunderbolt/USB4 from Linux sysfs (`Documentation/ABI/testing/sysfs-bus-thunderbolt`), and
//! whether a GPU sits behind a Thunderbolt tunnel.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::bus_ids_in;
use crate::host::Host;
use crate::probe::pci::sysfs::{read_attr, resolve};
use gpu_doctor_model::Trace;
use gpu_doctor_model::{EgpuFacts, TunnelKind, UpstreamPort};

/// The folder that lists Thunderbolt domains, routers, ports and services.
pub const TB_DEVICES: &str = "/sys/bus/thunderbolt/devices";

/// One Thunderbolt/USB4 router (a host controller or a connected device such as an eGPU box).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThunderboltDevice {
    /// Its sysfs name, `<domain>-<route>`, e.g. `0-1`; `0-0` is the host's own router.
    pub name: String,
    /// The domain (host controller) number, the part before the dash.
    pub domain: u32,
    /// True for the host router (route 0).
    pub host_router: bool,
    /// `device_name`, e.g. `Razer Core X`; `None` when sysfs has none.
    pub device_name: Option<String>,
    /// `vendor_name`, e.g. `Razer`; `None` when sysfs has none.
    pub vendor_name: Option<String>,
    /// `authorized`: PCIe tunnels are only set up once this is true; `None` when not readable.
    pub authorized: Option<bool>,
    /// `generation` of the router's controller: 1–3 Thunderbolt 1–3, 4 USB4/Thunderbolt 4;
    /// `None` on kernels before 5.5.
    pub generation: Option<u32>,
    /// `rx_speed` per lane, Gb/s (e.g. 20.0); `None` for host routers and kernels before 5.9.
    pub rx_speed_gbps: Option<f64>,
    /// `tx_speed` per lane, Gb/s.
    pub tx_speed_gbps: Option<f64>,
    /// `rx_lanes`, 1 or 2.
    pub rx_lanes: Option<u32>,
    /// `tx_lanes`, 1 or 2.
    pub tx_lanes: Option<u32>,
}

impl ThunderboltDevice {
    /// The Thunderbolt link rate towards the host, Gb/s: receive lanes × per-lane speed
    /// (2 × 20 = 40 for TB3/TB4); `None` when either is unknown.
    pub fn link_gbps(&self) -> Option<f64> {
        Some(self.rx_speed_gbps? * f64::from(self.rx_lanes?))
    }
}

/// One Thunderbolt domain: a host controller (NHI) and where it sits in the PCI tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThunderboltDomain {
    /// The domain number, from `domainN`.
    pub index: u32,
    /// Bus ids from the root port down to the host controller; empty when the link is unreadable.
    pub pci_path: Vec<String>,
}

/// Everything `/sys/bus/thunderbolt/devices` lists that matters for eGPUs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ThunderboltBus {
    /// Domains (host controllers).
    pub domains: Vec<ThunderboltDomain>,
    /// Routers: host routers and connected devices.
    pub devices: Vec<ThunderboltDevice>,
}

/// Intel PCIe bridges that are Thunderbolt controllers, with the Thunderbolt generation they tunnel
/// (ids from the kernel's `pci_ids.h`/`nhi.h`, Goshen/Maple Ridge from `lspci -nn` listings).
const INTEL_TB_BRIDGES: [(u16, &str, u32); 10] = [
    (0x1576, "Alpine Ridge 2C", 3),
    (0x1578, "Alpine Ridge 4C", 3),
    (0x15c0, "Alpine Ridge LP", 3),
    (0x15d3, "Alpine Ridge C 4C", 3),
    (0x15da, "Alpine Ridge C 2C", 3),
    (0x15e7, "Titan Ridge 2C", 3),
    (0x15ea, "Titan Ridge 4C", 3),
    (0x15ef, "Titan Ridge DD", 3),
    (0x0b26, "Goshen Ridge", 4),
    (0x1136, "Maple Ridge 4C", 4),
];

/// The Intel Thunderbolt bridge with this vendor and device id: its name and generation.
pub fn intel_tb_bridge(vendor_id: u16, device_id: u16) -> Option<(&'static str, u32)> {
    if vendor_id != 0x8086 {
        return None;
    }
    INTEL_TB_BRIDGES.iter().find(|(id, _, _)| *id == device_id).map(|(_, name, g)| (*name, *g))
}

/// Parses a Thunderbolt speed attribute such as `"20.0 Gb/s"` into Gb/s; `None` for anything else.
pub fn parse_tb_speed(text: &str) -> Option<f64> {
    let mut words = text.split_whitespace();
    let v: f64 = words.next()?.parse().ok()?;
    (words.next() == Some("Gb/s") && v.is_finite() && v > 0.0 && v <= 1000.0).then_some(v)
}

/// Splits a router name `0-1` into domain and route; `None` for domains, ports (`0-0:1.1`) and
/// services (`0-1.0`).
fn router_name(name: &str) -> Option<(u32, &str)> {
    let (domain, route) = name.split_once('-')?;
    if route.is_empty() || !route.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    Some((domain.parse().ok()?, route))
}

/// Reads the Thunderbolt bus. A machine without one gives an empty bus (and a trace miss).
pub fn scan(host: &dyn Host, trace: &mut Trace) -> ThunderboltBus {
    let root = Path::new(TB_DEVICES);
    let method = format!("list {TB_DEVICES}");
    let entries = match host.list_dir(root) {
        Ok(entries) => entries,
        Err(e) => {
            let detail = if e.is_not_found() {
                "no Thunderbolt/USB4 bus (no controller, or the thunderbolt module is not loaded)".to_owned()
            } else {
                e.to_string()
            };
            trace.miss(&method, detail);
            return ThunderboltBus::default();
        }
    };
    let mut bus = ThunderboltBus::default();
    for entry in &entries {
        if let Some(index) = entry.name.strip_prefix("domain").and_then(|n| n.parse().ok()) {
            let pci_path = host.read_link(&root.join(&entry.name)).map(|t| bus_ids_in(&t)).unwrap_or_default();
            bus.domains.push(ThunderboltDomain { index, pci_path });
            continue;
        }
        let Some((domain, route)) = router_name(&entry.name) else { continue };
        let dir = resolve(host, root, &entry.name);
        let text = |attr: &str| read_attr(host, &dir, attr).ok().filter(|s| !s.is_empty());
        let number = |attr: &str| text(attr).and_then(|s| s.parse::<u32>().ok());
        bus.devices.push(ThunderboltDevice {
            name: entry.name.clone(),
            domain,
            host_router: route.chars().all(|c| c == '0'),
            device_name: text("device_name"),
            vendor_name: text("vendor_name"),
            authorized: number("authorized").map(|a| a != 0),
            generation: number("generation").filter(|g| (1..=9).contains(g)),
            rx_speed_gbps: text("rx_speed").and_then(|s| parse_tb_speed(&s)),
            tx_speed_gbps: text("tx_speed").and_then(|s| parse_tb_speed(&s)),
            rx_lanes: number("rx_lanes").filter(|l| (1..=4).contains(l)),
            tx_lanes: number("tx_lanes").filter(|l| (1..=4).contains(l)),
        });
    }
    let names: Vec<String> =
        bus.devices.iter().map(|d| format!("{} ({})", d.name, d.device_name.as_deref().unwrap_or("unnamed"))).collect();
    trace.ok(&method, format!("{} domain(s); routers: {}", bus.domains.len(), names.join(", ")));
    bus
}

/// Decides whether the GPU at the end of `pci_path` sits behind a Thunderbolt/USB4 tunnel, and if
/// so describes the tunnel. `None` when no signal says so.
pub fn egpu_for(pci_path: &[String], upstream: &[UpstreamPort], bus: &ThunderboltBus) -> Option<EgpuFacts> {
    let mut evidence = Vec::new();
    let mut bridge_gen = None;
    for port in upstream {
        if let (Some(v), Some(d)) = (port.vendor_id, port.device_id)
            && let Some((name, g)) = intel_tb_bridge(v, d)
        {
            evidence.push(format!("{} is an Intel Thunderbolt bridge ({name}, {v:04x}:{d:04x})", port.bus_id));
            bridge_gen = Some(bridge_gen.map_or(g, |b: u32| b.min(g)));
        }
        if port.removable == Some(true) {
            evidence.push(format!("sysfs marks {} removable (behind an external-facing port)", port.bus_id));
        }
    }
    let gpu_root = pci_path.first().filter(|_| pci_path.len() > 1);
    let domain = bus.domains.iter().find(|d| d.pci_path.first().is_some_and(|r| Some(r) == gpu_root));
    if let (Some(d), Some(root)) = (domain, gpu_root) {
        evidence.push(format!("root port {root} also leads to Thunderbolt domain{}", d.index));
    }
    if evidence.is_empty() {
        return None;
    }
    let in_domain = |dev: &&ThunderboltDevice| domain.is_none_or(|d| d.index == dev.domain);
    let enclosure = bus
        .devices
        .iter()
        .filter(in_domain)
        .filter(|d| !d.host_router)
        .max_by_key(|d| (d.authorized == Some(true), std::cmp::Reverse(d.name.len())));
    let host_gen = enclosure
        .and_then(|e| bus.devices.iter().find(|d| d.host_router && d.domain == e.domain))
        .and_then(|h| h.generation);
    let device_gen = enclosure.and_then(|e| e.generation).or(bridge_gen);
    let tb_generation = match (device_gen, host_gen) {
        (Some(d), Some(h)) => Some(d.min(h)),
        (d, h) => d.or(h),
    };
    let via = if tb_generation.is_some_and(|g| g >= 4) { TunnelKind::Usb4 } else { TunnelKind::Thunderbolt };
    Some(EgpuFacts {
        via,
        tb_generation,
        device_name: enclosure.and_then(|e| e.device_name.clone()),
        vendor_name: enclosure.and_then(|e| e.vendor_name.clone()),
        authorized: enclosure.and_then(|e| e.authorized),
        link_gbps: enclosure.and_then(ThunderboltDevice::link_gbps),
        router: enclosure.map(|e| e.name.clone()),
        evidence,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn tb_speeds_parse_and_garbage_does_not() {
        assert_eq!(parse_tb_speed("20.0 Gb/s\n"), Some(20.0));
        assert_eq!(parse_tb_speed("40 Gb/s"), Some(40.0));
        for bad in ["", "20.0", "20.0 GT/s", "fast Gb/s", "-20 Gb/s", "NaN Gb/s", "inf Gb/s", "0 Gb/s"] {
            assert_eq!(parse_tb_speed(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn router_names_exclude_domains_ports_and_services() {
        assert_eq!(router_name("0-0"), Some((0, "0")));
        assert_eq!(router_name("1-301"), Some((1, "301")));
        for other in ["domain0", "0-1:1.1", "0-1.0", "0-", "x-1", ""] {
            assert_eq!(router_name(other), None, "{other}");
        }
    }

    #[test]
    fn intel_bridges_are_known_by_id() {
        assert_eq!(intel_tb_bridge(0x8086, 0x15ea), Some(("Titan Ridge 4C", 3)));
        assert_eq!(intel_tb_bridge(0x8086, 0x0b26), Some(("Goshen Ridge", 4)));
        assert_eq!(intel_tb_bridge(0x10de, 0x15ea), None);
        assert_eq!(intel_tb_bridge(0x8086, 0x1234), None);
    }
}
