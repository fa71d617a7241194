//! Kernel log lines (`dmesg`, `journalctl -k`, a modprobe's error) that state the facts the
//! presence rules read: nouveau (or another driver NVIDIA's module names) holding a GPU, and the
//! kernel refusing an unsigned nvidia module.
//! Other kernel messages (`NVRM: API mismatch`, `Xid`, the probe routine not called) are rows of
//! `assets/compat/errors.toml`, matched like every known error line.
//!
//! ```text
//! [    5.436312] nouveau 0000:01:00.0: NVIDIA GM204 (124020a1)
//! [  201.910514] NVRM: GPU 0000:01:00.0 is already bound to NovaCore.
//! modprobe: ERROR: could not insert 'nvidia': Key was rejected by service
//! Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7
//! ```

use super::facts::Facts;
use super::messages::Matcher;
use crate::compat::Kb;
use crate::model::{InstalledModule, KernelModuleFacts, OsFamily, PciBusId, PciDevice, SecureBoot, XidEvent};
use crate::probe::pci::NVIDIA_VENDOR_ID;

const FORMAT: &str = "kernel log";

/// The PCI class recorded for a GPU the log names: a display controller (the log does not say
/// which subclass).
const DISPLAY_CLASS: u32 = 0x03_0000;

/// Reads nouveau's claim of a GPU and the kernel's refusal of an unsigned nvidia module.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    let lockdown = lines.iter().any(|l| l.contains("unsigned module loading is restricted"));
    for (i, line) in lines.iter().enumerate() {
        let held = nouveau_chip(line).map(|bus| (bus, "nouveau".to_owned())).or_else(|| already_bound(line));
        if let Some((bus_id, driver)) = held {
            facts.saw(i, FORMAT);
            facts.os.get_or_insert(OsFamily::Linux);
            facts.pci_device(PciDevice {
                bus_id,
                vendor_id: NVIDIA_VENDOR_ID,
                device_id: 0,
                class: DISPLAY_CLASS,
                subsystem_vendor_id: None,
                subsystem_device_id: None,
                driver: Some(driver),
            });
        } else if refused_nvidia(line, lockdown) {
            facts.saw(i, FORMAT);
            facts.os.get_or_insert(OsFamily::Linux);
            facts.secure_boot.get_or_insert(SecureBoot::Enabled);
            facts.kernel_module.get_or_insert_with(unsigned_module);
        }
    }
}

/// `nouveau 0000:01:00.0: NVIDIA GM204 (124020a1)`, `nouveau 0000:01:00.0: DRM: VRAM: 4096 MiB`,
/// `nouveau 0000:01:00.0: gr: init failed, -110`: nouveau runs on that device, so it holds the GPU. Not
/// `unknown chipset`, which nouveau prints when it leaves a GPU alone.
fn nouveau_chip(line: &str) -> Option<String> {
    let at = line.find("nouveau ")?;
    let (bus, rest) = line.get(at + "nouveau ".len()..)?.split_once(": ")?;
    let subsystem =
        rest.split_once(": ").is_some_and(|(s, _)| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric()));
    let holds = (rest.starts_with("NVIDIA ") || subsystem) && !rest.contains("unknown chipset");
    holds.then(|| PciBusId::sysfs_form(bus)).flatten()
}

/// `NVRM: GPU 0000:01:00.0 is already bound to NovaCore.`: NVIDIA's module found the GPU held by
/// another driver (its PCI driver name, e.g. `nouveau` or nova-core's `NovaCore`).
fn already_bound(line: &str) -> Option<(String, String)> {
    let at = line.find("NVRM: GPU ")?;
    let (bus, rest) = line.get(at + "NVRM: GPU ".len()..)?.split_once(' ')?;
    let driver = rest.strip_prefix("is already bound to ")?.trim().trim_end_matches('.');
    let named = !driver.is_empty() && driver.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'));
    named.then(|| Some((PciBusId::sysfs_form(bus)?, driver.to_owned()))).flatten()
}

/// `could not insert 'nvidia': Key was rejected by service` (or `Required key not available`), or
/// `… 'nvidia': Operation not permitted` beside lockdown's `unsigned module loading is restricted`:
/// the kernel accepts only signed modules and refused NVIDIA's.
fn refused_nvidia(line: &str, lockdown: bool) -> bool {
    let Some(at) = line.find("could not insert 'nvidia") else { return false };
    let rest = line.get(at..).unwrap_or("");
    rest.contains("Key was rejected by service")
        || rest.contains("Required key not available")
        || (lockdown && rest.contains("Operation not permitted"))
}

/// The module the kernel refused: installed, not loaded, without a signature it trusts.
fn unsigned_module() -> KernelModuleFacts {
    KernelModuleFacts {
        nvidia_loaded: false,
        nouveau_loaded: false,
        loaded_version: None,
        open_kernel_module: None,
        running_kernel: None,
        installed: Some(InstalledModule {
            filename: "nvidia (refused by the kernel: no trusted signature)".to_owned(),
            version: None,
            built_for_kernel: None,
            signer: None,
        }),
        installed_note: None,
    }
}

/// The `NVRM: Xid (PCI:0000:01:00): 79, …` lines (older drivers: `Xid (0000:01:00): 13`) among `lines`, as the knowledge base's `nvrm.xid`
/// message reads them (the live health probe reads `dmesg` through this too). The driver prints
/// the bus id without its function, which is 0 for a GPU.
pub(crate) fn xid_events(lines: &[String], kb: &Kb) -> Vec<XidEvent> {
    Matcher::for_kb(kb)
        .scan(lines)
        .into_iter()
        .filter(|(_, m)| m.id == "nvrm.xid")
        .filter_map(|(_, m)| {
            let xid = m.values.get("xid")?.parse().ok()?;
            let device = m.values.get("device").map(|d| d.trim_start_matches("PCI:"));
            let pci_bus_id = device.and_then(|d| {
                let with_function = if d.contains('.') { d.to_owned() } else { format!("{d}.0") };
                PciBusId::sysfs_form(&with_function)
            });
            Some(XidEvent { xid, pci_bus_id, line: m.line })
        })
        .collect()
}
