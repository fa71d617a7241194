//! Test helpers: a fake Linux sysfs PCI tree inside a replay `Fixture`.

use crate::host::{Fixture, ReplayHost};
use gpu_doctor_model::{OsFamily, Platform};

/// An empty Linux x86_64 machine.
pub(crate) fn linux() -> Fixture {
    Fixture::new(Platform { os: OsFamily::Linux, arch: "x86_64".into() })
}

/// The replay host for a fixture.
pub(crate) fn host(f: Fixture) -> ReplayHost {
    ReplayHost::new(f)
}

/// Adds a PCI function whose path from the root complex is `chain` (root port first, the function
/// itself last): its folder under `/sys/devices/pciDDDD:BB/…`, the relative symlink
/// `/sys/bus/pci/devices/<id>` to it, and its `vendor`, `device` and `class` files.
/// Returns the function's folder.
pub(crate) fn add_device(f: &mut Fixture, chain: &[&str], vendor: u16, device: u16, class: u32) -> String {
    let root = chain.first().and_then(|id| id.get(..7)).unwrap_or("0000:00");
    let rel = format!("devices/pci{root}/{}", chain.join("/"));
    let id = chain.last().copied().unwrap_or_default();
    f.links.insert(format!("/sys/bus/pci/devices/{id}"), format!("../../../{rel}"));
    let dir = format!("/sys/{rel}");
    set_attr(f, &dir, "vendor", &format!("{vendor:#06x}"));
    set_attr(f, &dir, "device", &format!("{device:#06x}"));
    set_attr(f, &dir, "class", &format!("{class:#08x}"));
    dir
}

/// Writes `<dir>/<name>` with a trailing newline, as sysfs does.
pub(crate) fn set_attr(f: &mut Fixture, dir: &str, name: &str, value: &str) {
    f.files.insert(format!("{dir}/{name}"), format!("{value}\n"));
}

/// Binds `driver` to the function in `dir` (the relative `driver` symlink).
pub(crate) fn set_driver(f: &mut Fixture, dir: &str, driver: &str) {
    f.links.insert(format!("{dir}/driver"), format!("../../../../bus/pci/drivers/{driver}"));
}

/// Sets the four PCIe link attributes: current speed and width, maximum speed and width.
pub(crate) fn set_link(f: &mut Fixture, dir: &str, cur: (&str, u32), max: (&str, u32)) {
    set_attr(f, dir, "current_link_speed", cur.0);
    set_attr(f, dir, "current_link_width", &cur.1.to_string());
    set_attr(f, dir, "max_link_speed", max.0);
    set_attr(f, dir, "max_link_width", &max.1.to_string());
}
