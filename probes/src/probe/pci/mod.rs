//! NVIDIA display and 3D controllers on the PCI bus, from Linux sysfs, with the driver bound to each.
//!
//! This is what tells a fresh workstation (no driver, or `nouveau`/`vfio-pci` holding the card) from
//! a machine without an NVIDIA GPU: the card is on the bus even when no NVIDIA driver answers.

pub mod sysfs;
#[cfg(test)]
pub(crate) mod testkit;
#[cfg(test)]
mod tests;

use std::path::Path;

use crate::host::Host;
use gpu_doctor_model::{NVIDIA_VENDOR_ID, OsFamily, PciDevice, is_display_class};
use gpu_doctor_model::{Probed, Trace};

use sysfs::{PCI_DEVICES, parse_hex, parse_hex_u16, read_attr};

/// The devices NVIDIA's driver does not hold: no driver bound, or another one (`nouveau`,
/// `vfio-pci`). CUDA cannot use these.
pub fn unclaimed(devices: &[PciDevice]) -> Vec<&PciDevice> {
    devices.iter().filter(|d| !d.has_nvidia_driver()).collect()
}

/// Lists NVIDIA GPUs on the PCI bus (Linux sysfs). Other systems answer `Unsupported`.
pub fn probe(host: &dyn Host, trace: &mut Trace) -> Probed<Vec<PciDevice>> {
    let os = host.platform().os;
    if os != OsFamily::Linux {
        let reason = match os {
            OsFamily::Windows => "the PCI device list comes from Linux sysfs; on Windows the gpus probe asks NVML",
            OsFamily::Macos => "macOS has no NVIDIA CUDA driver and no sysfs PCI device list",
            _ => "the PCI device list comes from Linux sysfs, which this system does not have",
        };
        trace.miss("sysfs", reason);
        return Probed::Unsupported { reason: reason.to_owned() };
    }
    let method = format!("list {PCI_DEVICES}");
    let entries = match host.list_dir(Path::new(PCI_DEVICES)) {
        Ok(entries) => entries,
        Err(e) if e.is_not_found() => {
            trace.miss(&method, e.to_string());
            return Probed::Failed {
                error: format!(
                    "{PCI_DEVICES} does not exist (sysfs is not mounted, e.g. in a restricted container), \
                     so the PCI bus could not be read"
                ),
            };
        }
        Err(e) => {
            trace.error(&method, e.to_string());
            return Probed::Failed { error: format!("could not list the PCI devices: {e}") };
        }
    };
    trace.ok(&method, format!("{} PCI functions", entries.len()));

    let mut found = Vec::new();
    let mut unreadable = Vec::new();
    for entry in &entries {
        match read_device(host, &entry.name, trace) {
            Ok(Some(dev)) => found.push(dev),
            Ok(None) => {}
            Err(name) => unreadable.push(name),
        }
    }
    if !unreadable.is_empty() {
        trace.error("read vendor", format!("unreadable vendor id: {}", unreadable.join(", ")));
    }
    if found.is_empty() {
        let reason =
            "no NVIDIA display or 3D controller on the PCI bus (vendor 0x10de in /sys/bus/pci/devices)".to_owned();
        trace.miss("match vendor 0x10de, class 0x03", &reason);
        if !unreadable.is_empty() && unreadable.len() == entries.len() {
            return Probed::Failed { error: format!("no PCI device's vendor id could be read under {PCI_DEVICES}") };
        }
        return Probed::absent(reason);
    }
    Probed::found(found, format!("sysfs {PCI_DEVICES}"))
}

/// Reads one PCI function: `Ok(None)` when it is not an NVIDIA display device, `Err(name)` when
/// its vendor id cannot be read.
fn read_device(host: &dyn Host, name: &str, trace: &mut Trace) -> Result<Option<PciDevice>, String> {
    let dir = sysfs::device_dir(host, name);
    let vendor = read_attr(host, &dir, "vendor").ok().and_then(|v| parse_hex_u16(&v)).ok_or_else(|| name.to_owned())?;
    if vendor != NVIDIA_VENDOR_ID {
        return Ok(None);
    }
    let method = format!("read {PCI_DEVICES}/{name}");
    let class = match read_attr(host, &dir, "class").map(|text| parse_hex(&text)) {
        Ok(Some(class)) => class,
        Ok(None) => {
            trace.error(&method, "NVIDIA function whose class is not a hex number");
            return Ok(None);
        }
        Err(e) => {
            trace.error(&method, format!("NVIDIA function without a readable class: {e}"));
            return Ok(None);
        }
    };
    if !is_display_class(class) {
        return Ok(None);
    }
    let Some(device_id) = read_attr(host, &dir, "device").ok().and_then(|d| parse_hex_u16(&d)) else {
        trace.error(&method, "NVIDIA display device without a readable device id");
        return Ok(None);
    };
    let driver = bound_driver(host, &dir, &method, trace);
    let sub = |attr: &str| read_attr(host, &dir, attr).ok().and_then(|v| parse_hex_u16(&v));
    let dev = PciDevice {
        bus_id: name.to_lowercase(),
        vendor_id: vendor,
        device_id,
        class,
        subsystem_vendor_id: sub("subsystem_vendor"),
        subsystem_device_id: sub("subsystem_device"),
        driver,
    };
    trace.ok(
        &method,
        format!(
            "NVIDIA {:#06x}, class {:#08x}, driver {}",
            dev.device_id,
            dev.class,
            dev.driver.as_deref().unwrap_or("none bound")
        ),
    );
    Ok(Some(dev))
}

/// The file name of the `driver` symlink's target, e.g. `nvidia`; `None` when no driver is bound.
pub fn bound_driver(host: &dyn Host, dir: &Path, method: &str, trace: &mut Trace) -> Option<String> {
    match host.read_link(&dir.join("driver")) {
        Ok(target) => target.file_name().and_then(|n| n.to_str()).map(str::to_owned),
        Err(e) if e.is_not_found() => None,
        Err(e) => {
            trace.error(method, format!("could not read the driver link: {e}"));
            None
        }
    }
}
