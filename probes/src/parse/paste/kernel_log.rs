//! Kernel log lines (`dmesg`, `journalctl -k`, a modprobe's error) that state the facts the
//! presence rules read: nouveau (or another driver NVIDIA's module names) holding a GPU, the
//! kernel refusing an unsigned nvidia module, and the PCIe bandwidth the kernel found an NVIDIA GPU
//! limited to when it enumerated it.
//! Other kernel messages (`NVRM: API mismatch`, `Xid`, the probe routine not called) are rows of
//! `assets/compat/errors.toml`, matched like every known error line.
//!
//! ```text
//! [    5.436312] nouveau 0000:01:00.0: NVIDIA GM204 (124020a1)
//! [  201.910514] NVRM: GPU 0000:01:00.0 is already bound to NovaCore.
//! modprobe: ERROR: could not insert 'nvidia': Key was rejected by service
//! Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7
//! pci 0000:04:00.0: [10de:1c03] type 00 class 0x030000
//! pci 0000:04:00.0: 4.000 Gb/s available PCIe bandwidth, limited by 5.0 GT/s PCIe x1 link at 0000:00:1c.2 (capable of 126.016 Gb/s with 8.0 GT/s PCIe x16 link)
//! ```

use std::collections::{HashMap, HashSet};

use super::facts::{Facts, MAX_LIST};
use super::messages::Matcher;
use crate::probe::link::parse_link_speed;
use gpu_doctor_kb::Kb;
use gpu_doctor_model::NVIDIA_VENDOR_ID;
use gpu_doctor_model::{
    AerCounters, BootLinkLimit, GpuHealth, InstalledModule, KernelModuleFacts, LinkSeenBy, ObservedMessage, OsFamily,
    PciBusId, PciDevice, SecureBoot, XidEvent,
};

const FORMAT: &str = "kernel log";

/// The PCI class recorded for a GPU the log names: a display controller (the log does not say
/// which subclass).
const DISPLAY_CLASS: u32 = 0x03_0000;

/// Reads nouveau's claim of a GPU and the kernel's refusal of an unsigned nvidia module.
/// The format name of the kernel module's version file.
const PROC_VERSION_FORMAT: &str = "/proc/driver/nvidia/version";

/// The loaded kernel module's version from its version file, `cat /proc/driver/nvidia/version`'s `NVRM version:
/// NVIDIA UNIX x86_64 Kernel Module  535.86.05  …` (or `… Open Kernel Module for x86_64  550.54.14 …`), also where a
/// program quotes it inside its own line (TensorFlow's cuda_diagnostics: `driver version file contents:
/// """NVRM version: …`): the file exists only while NVIDIA's kernel module is loaded (the driver's nv-procfs.c).
fn proc_version(lines: &[String], facts: &mut Facts) {
    static NVRM: super::Needle = super::Needle::new("NVRM version: NVIDIA UNIX");
    let Some((i, version)) = lines.iter().enumerate().find_map(|(i, l)| {
        let at = NVRM.find(l)?;
        crate::probe::driver::parse_proc_version(l.get(at..)?).map(|v| (i, v))
    }) else {
        return;
    };
    facts.saw(i, PROC_VERSION_FORMAT);
    facts.os.get_or_insert(OsFamily::Linux);
    facts.driver(Some(version), None, PROC_VERSION_FORMAT);
}

pub(super) fn read(lines: &[String], facts: &mut Facts) {
    proc_version(lines, facts);
    static LOCKDOWN: super::Needle = super::Needle::new("unsigned module loading is restricted");
    let lockdown = lines.iter().any(|l| LOCKDOWN.in_line(l));
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
    let limits = boot_limits(lines);
    let aer = lines.iter().any(|l| AER.in_line(l));
    if limits.is_empty() && !aer {
        return;
    }
    let gpus = nvidia_gpus(lines, facts);
    read_boot_limits(limits, &gpus, facts);
    if aer {
        read_aer(lines, &gpus, facts);
    }
}

static AER: super::Needle = super::Needle::new(AER_ERROR);

/// What the kernel's AER reports print before the severity (drivers/pci/pcie/aer.c,
/// `aer_print_error`: `"%sPCIe Bus Error: severity=%s, type=%s, (%s)"`, `dev_fmt` adding `AER: `
/// since Linux 4.19; older kernels `…, id=00e8(Receiver ID)`).
const AER_ERROR: &str = "PCIe Bus Error: severity=";

/// How many lines after a report its `[ 0] RxErr` lines are looked for (the `device [10de:…]
/// error status/mask` line, then one line per bit set).
const AER_DETAIL_LINES: usize = 34;

/// The kernel's AER reports of NVIDIA GPUs, counted by severity and error name into each GPU's
/// health, as the live probe reads `aer_dev_*` (a report's bits each count once; a report without
/// its bit lines counts under its type).
fn read_aer(lines: &[String], gpus: &HashSet<String>, facts: &mut Facts) {
    let mut by_bus: Vec<(String, AerCounters)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some((port, severity, kind)) = aer_report(line) else { continue };
        let Some(bus) = gpus
            .contains(&port)
            .then(|| port.clone())
            .or_else(|| (severity != AerSeverity::Corrected).then(|| gpu_in_recovery(&lines[i + 1..], gpus)).flatten())
        else {
            continue;
        };
        facts.saw(i, FORMAT);
        facts.os.get_or_insert(OsFamily::Linux);
        let mut names: Vec<String> = Vec::new();
        for next in lines.iter().skip(i + 1).take(AER_DETAIL_LINES) {
            if next.contains(AER_ERROR) || !next.contains(&port) {
                break;
            }
            if let Some(name) = aer_bit(next, &port) {
                names.push(name);
            }
        }
        if names.is_empty() {
            names.push(kind);
        }
        let at = match by_bus.iter().position(|(b, _)| *b == bus) {
            Some(at) => at,
            None if by_bus.len() < MAX_LIST => {
                by_bus.push((bus.clone(), AerCounters::default()));
                by_bus.len() - 1
            }
            None => continue,
        };
        let counters = &mut by_bus[at].1;
        let file = match severity {
            AerSeverity::Corrected => &mut counters.correctable,
            AerSeverity::NonFatal => &mut counters.nonfatal,
            AerSeverity::Fatal => &mut counters.fatal,
        };
        let counts = file.get_or_insert_with(Default::default);
        for n in names {
            *counts.entry(n).or_insert(0) += 1;
        }
    }
    for (bus, aer) in by_bus {
        match facts
            .gpu_health
            .iter_mut()
            .find(|(h, _)| h.pci_bus_id.as_deref().is_some_and(|b| PciBusId::same(b, &bus)))
        {
            Some((h, _)) => {
                h.aer.get_or_insert(aer);
            }
            None => facts.health(GpuHealth { pci_bus_id: Some(bus), aer: Some(aer), ..GpuHealth::default() }, FORMAT),
        }
    }
}

/// The GPU an uncorrectable error on the port above it took down: the kernel's recovery walks the
/// devices below the port and names each driver without error handlers (drivers/pci/pcie/err.c,
/// `report_error_detected`: `AER: Can't recover (no error_detected callback)`; older kernels
/// `device has no AER-aware driver`), which NVIDIA's driver is. Looked for until the next report.
fn gpu_in_recovery(after: &[String], gpus: &HashSet<String>) -> Option<String> {
    for line in after.iter().take(AER_DETAIL_LINES) {
        if line.contains(AER_ERROR) {
            return None;
        }
        let lower = line.to_ascii_lowercase();
        if !(lower.contains("can't recover") || lower.contains("no aer-aware driver")) {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let found = words.windows(2).find_map(|w| {
            let bus = w[1].strip_suffix(':').and_then(PciBusId::sysfs_form)?;
            (w[0] == "nvidia" && gpus.contains(&bus)).then_some(bus)
        });
        if found.is_some() {
            return found;
        }
    }
    None
}

/// An AER report's severity, as `aer_error_severity_string` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AerSeverity {
    /// `Corrected`.
    Corrected,
    /// `Uncorrected (Non-Fatal)`.
    NonFatal,
    /// `Uncorrected (Fatal)`.
    Fatal,
}

/// The device, severity and type of `nvidia 0000:01:00.0: AER: PCIe Bus Error: severity=Corrected,
/// type=Physical Layer, (Receiver ID)`: the bus id is the word before the message that names one.
fn aer_report(line: &str) -> Option<(String, AerSeverity, String)> {
    let at = AER.find(line)?;
    let before = line.get(..at)?;
    let bus = before.split_whitespace().rev().find_map(|w| w.strip_suffix(':').and_then(PciBusId::sysfs_form))?;
    let rest = line.get(at + AER_ERROR.len()..)?;
    let (severity, rest) = rest.split_once(", type=")?;
    // `Corrected`/`Uncorrected (…)`, and `Correctable`/`Uncorrectable (…)` since Linux 6.x.
    let severity = match severity.trim() {
        "Corrected" | "Correctable" => AerSeverity::Corrected,
        "Uncorrected (Non-Fatal)" | "Uncorrectable (Non-Fatal)" => AerSeverity::NonFatal,
        "Uncorrected (Fatal)" | "Uncorrectable (Fatal)" => AerSeverity::Fatal,
        _ => return None,
    };
    let kind = rest.split(',').next()?.trim();
    (!kind.is_empty()).then(|| (bus, severity, kind.to_owned()))
}

/// The error name of a report's bit line, `nvidia 0000:01:00.0:    [ 0] RxErr    (First)`
/// (`"   [%2d] %-22s%s"`), after the device's bus id (a timestamp's brackets come before it).
fn aer_bit(line: &str, bus: &str) -> Option<String> {
    let after = line.get(line.find(bus)? + bus.len()..)?;
    let rest = after.get(after.find('[')?..)?;
    let (index, rest) = rest.strip_prefix('[')?.split_once(']')?;
    index.trim().parse::<u8>().ok().filter(|i| *i < 32)?;
    // Newer kernels print short names (`RxErr`), older ones words (`Receiver Error`).
    let name = rest.trim().trim_end_matches("(First)").trim();
    let named = !name.is_empty() && name.len() <= 40;
    (named && name.chars().all(|c| c.is_ascii_alphanumeric() || " _-".contains(c))).then(|| name.to_owned())
}

/// What the kernel's bandwidth line says after `<bus>: `.
const BANDWIDTH: &str = " Gb/s available PCIe bandwidth, limited by ";

/// The kernel's bandwidth line of each NVIDIA GPU. A line of another device (a disk, a Wi-Fi card) is
/// not read: only a bus the text shows to be an NVIDIA GPU counts.
fn read_boot_limits(found: Vec<(usize, String, BootLinkLimit)>, gpus: &HashSet<String>, facts: &mut Facts) {
    for (i, bus_id, limit) in found.into_iter().filter(|(_, bus, _)| gpus.contains(bus)) {
        facts.saw(i, FORMAT);
        facts.os.get_or_insert(OsFamily::Linux);
        if let Some(l) = facts.links.iter_mut().find(|l| l.bus_id == bus_id) {
            l.set_boot_limit(limit);
        } else if facts.links.len() < MAX_LIST {
            let cap = (limit.capable_generation, limit.capable_width);
            let now = (limit.generation, Some(limit.width));
            let mut l = super::lspci::link(bus_id, cap, now, (BOOT_FROM, "the kernel's \"capable of\" link"));
            l.set_boot_limit(limit);
            facts.links.push(l);
        }
    }
}

/// Every bandwidth line of the kernel's in `lines` (drivers/pci/pci.c, `__pcie_print_link_status`),
/// also one a mailer wrapped over up to three lines: the line's index, the device's bus id and the
/// limit, of whatever device (the caller keeps its GPUs'). The live probes read `dmesg` through this too.
pub(crate) fn boot_limits(lines: &[String]) -> Vec<(usize, String, BootLinkLimit)> {
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        static BANDWIDTH_LINE: super::Needle = super::Needle::new("available PCIe bandwidth");
        if !BANDWIDTH_LINE.in_line(line) {
            continue;
        }
        let mut text = line.clone();
        for next in lines.iter().skip(i + 1).take(2) {
            if text.contains(" link)") {
                break;
            }
            text.push(' ');
            text.push_str(next);
        }
        if let Some((bus_id, limit)) = boot_limit(&text) {
            found.push((i, bus_id, limit));
        }
    }
    found.extend(behind_host_bridge(lines, &found));
    found
}

/// A board's PCIe host controller that says its one link's width when it comes up, as the
/// controller drivers print it: `brcm-pcie fd500000.pcie: link up, 2.5 GT/s PCIe x1 (SSC)`
/// (Linux drivers/pci/controller/pcie-brcmstb.c, `brcm_pcie_start_link`: "link up, %s x%u %s") and
/// `rockchip-dw-pcie a40000000.pcie: PCIe Gen.2 x1 link up` (dwc/pcie-designware.c,
/// `dw_pcie_wait_for_link`: "PCIe Gen.%u x%u link up"): the controller's name and the link.
fn host_bridge_link(line: &str) -> Option<(String, Option<u32>, u32)> {
    static LINK_UP: super::Needle = super::Needle::new("link up");
    if !LINK_UP.in_line(line) {
        return None;
    }
    let (head, rest) = line.split_once(": link up, ").or_else(|| line.split_once(": PCIe Gen."))?;
    let controller = head.split_whitespace().last()?.to_owned();
    let (generation, width) = if let Some(gen_width) = rest.strip_suffix(" link up") {
        let (generation, width) = gen_width.split_once(" x")?;
        (generation.parse::<u32>().ok(), width)
    } else {
        let (speed, width) = rest.split_once(" PCIe x")?;
        (parse_link_speed(speed), width.split_whitespace().next()?)
    };
    let width = width.parse::<u32>().ok().filter(|w| (1..=32).contains(w))?;
    Some((controller, generation, width))
}

/// The PCI domain of each host controller's root bus, from its `brcm-pcie 1000120000.pcie: PCI host
/// bridge to bus 0001:00` line (drivers/pci/probe.c, `pci_register_host_bridge`), read in one pass.
fn host_bridge_domains(lines: &[String]) -> HashMap<String, String> {
    lines
        .iter()
        .filter_map(|l| {
            let (head, bus) = l.split_once(": PCI host bridge to bus ")?;
            Some((head.split_whitespace().last()?.to_owned(), bus.split(':').next()?.to_owned()))
        })
        .collect()
}

/// The bus id of an NVIDIA display device in the kernel's enumeration line (`pci 0000:01:00.0:
/// [10de:2571] type 00 class 0x030000`).
fn enumerated_gpu(line: &str) -> Option<String> {
    static VENDOR: super::Needle = super::Needle::new(" [10de:");
    let at = VENDOR.find(line)?;
    let (head, rest) = (line.get(..at)?, line.get(at + " [10de:".len()..)?);
    rest.split_once(" class 0x").filter(|(_, c)| c.starts_with("03"))?;
    head.split_whitespace().last()?.strip_suffix(':').and_then(PciBusId::sysfs_form)
}

/// Every NVIDIA display device the kernel enumerated (`pci 0000:01:00.0: [10de:2571] type 00 class
/// 0x030000`) without a bandwidth line of its own, limited by the link of the host controller it
/// hangs on: the controller whose root bus is in the device's PCI domain, or the text's only one.
/// Such boards (a Raspberry Pi's Compute Module, a RockPro64) have one root port per controller, so
/// the controller's link is the GPU's path. Where the text does not say which controller a GPU hangs
/// on, nothing is read.
fn behind_host_bridge(
    lines: &[String],
    found: &[(usize, String, BootLinkLimit)],
) -> Vec<(usize, String, BootLinkLimit)> {
    let mut bridges: Vec<HostBridge> = lines
        .iter()
        .enumerate()
        .filter_map(|(at, l)| {
            let (controller, generation, width) = host_bridge_link(l)?;
            Some(HostBridge { at, controller, generation, width, domain: None })
        })
        .take(MAX_LIST)
        .collect();
    if bridges.is_empty() {
        return Vec::new();
    }
    let domains = host_bridge_domains(lines);
    for b in &mut bridges {
        b.domain = domains.get(&b.controller).cloned();
    }
    // Buses that have a line of their own, or one from here already.
    let mut seen: HashSet<String> = found.iter().map(|(_, bus, _)| bus.clone()).collect();
    let mut out: Vec<(usize, String, BootLinkLimit)> = Vec::new();
    for l in lines {
        if out.len() >= MAX_LIST {
            break;
        }
        let Some(bus) = enumerated_gpu(l) else { continue };
        if !seen.insert(bus.clone()) {
            continue;
        }
        let domain = bus.split(':').next().unwrap_or("");
        let bridge = match bridges.iter().find(|b| b.domain.as_deref() == Some(domain)) {
            Some(b) => b,
            None if bridges.len() == 1 && bridges[0].domain.is_none() => &bridges[0],
            None => continue,
        };
        let HostBridge { at, controller, generation, width, .. } = bridge;
        let Some(rate) = generation.and_then(|g| gpu_doctor_kb::pcie_gbytes_per_s(g, *width)) else { continue };
        // The line without the timestamp before it (`[    1.339548] `).
        let line = lines.get(*at).map_or("", |l| l.trim_start());
        let line = line.strip_prefix('[').and_then(|l| l.split_once(']')).map_or(line, |(_, rest)| rest).trim();
        let limit = BootLinkLimit {
            at: controller.clone(),
            generation: *generation,
            width: *width,
            capable_generation: None,
            capable_width: None,
            available_gbps: rate * 8.0,
            capable_gbps: None,
            line: line.to_owned(),
            seen_by: LinkSeenBy::Kernel,
        };
        out.push((*at, bus, limit));
    }
    out
}

/// A host controller's link-up line: where it is in the text, the controller, its link, and the
/// PCI domain of its root bus where the text says it.
struct HostBridge {
    at: usize,
    controller: String,
    generation: Option<u32>,
    width: u32,
    domain: Option<String>,
}

/// Where the values of a link read from the kernel's bandwidth line came from.
const BOOT_FROM: &str = "the kernel's boot log";

/// The bus ids the text shows to be NVIDIA GPUs: the kernel's `pci 0000:01:00.0: [10de:1c03] type 00
/// class 0x030000` line, a line of the nvidia or nouveau driver about the device, or a GPU another
/// reader found (nvidia-smi, lspci).
fn nvidia_gpus(lines: &[String], facts: &Facts) -> HashSet<String> {
    let mut gpus: HashSet<String> = HashSet::new();
    static NVIDIA: super::Needle = super::Needle::new("nvidia");
    static NOUVEAU: super::Needle = super::Needle::new("nouveau");
    for line in lines {
        gpus.extend(enumerated_gpu(line));
        if !(NVIDIA.in_line(line) || NOUVEAU.in_line(line)) {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        for pair in words.windows(2) {
            let [first, second] = pair else { continue };
            if matches!(*first, "nvidia" | "nouveau")
                && let Some(bus) = second.strip_suffix(':').and_then(PciBusId::sysfs_form)
            {
                gpus.insert(bus);
            }
        }
    }
    let listed = facts.listed_gpus.iter().filter_map(|(g, _)| g.pci_bus_id.as_deref());
    let devices = facts.pci_devices.iter().map(|d| d.bus_id.as_str());
    let linked = facts.links.iter().map(|l| l.bus_id.as_str());
    gpus.extend(listed.chain(devices).chain(linked).filter_map(PciBusId::sysfs_form));
    gpus
}

/// The bus id and the limit of `pci 0000:01:00.0: 4.000 Gb/s available PCIe bandwidth, limited by
/// 5.0 GT/s PCIe x1 link at 0000:00:1c.2 (capable of 126.016 Gb/s with 8.0 GT/s PCIe x16 link)`,
/// or of older kernels' `… limited by 2.5 GT/s x1 link at … (capable of … with 8 GT/s x16 link)`.
fn boot_limit(text: &str) -> Option<(String, BootLinkLimit)> {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let at = line.find(BANDWIDTH)?;
    let mut before = line.get(..at)?.split_whitespace().rev();
    let available_gbps = gbps(before.next()?)?;
    let bus_word = before.next()?;
    let bus_id = PciBusId::sysfs_form(bus_word.strip_suffix(':')?)?;
    // The line from the device's name on (`pci 0000:01:00.0: …`), without a timestamp before it.
    let from = before.next().unwrap_or(bus_word);
    let start = line.get(..at)?.rfind(&format!("{from} "))?;
    let (limited, rest) = line.get(at + BANDWIDTH.len()..)?.split_once(" link at ")?;
    let (port, rest) = rest.split_once(" (capable of ")?;
    let (capable, rest) = rest.split_once(" Gb/s with ")?;
    let (capable_link, _) = rest.split_once(" link)")?;
    if port.contains(' ') {
        return None;
    }
    let (generation, width) = speed_width(limited)?;
    let (capable_generation, capable_width) = speed_width(capable_link)?;
    let limit = BootLinkLimit {
        at: port.to_owned(),
        generation,
        width,
        capable_generation,
        capable_width: Some(capable_width),
        available_gbps,
        capable_gbps: Some(gbps(capable)?),
        line: line.get(start..)?.to_owned(),
        seen_by: LinkSeenBy::Kernel,
    };
    Some((bus_id, limit))
}

/// A bandwidth the kernel printed (`126.016`), Gb/s.
fn gbps(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0)
}

/// The generation and lanes of `5.0 GT/s PCIe x1` (older kernels: `8 GT/s x16`); the generation is
/// `None` for a speed the knowledge base does not know (`Unknown`), the lanes must be 1 to 32.
fn speed_width(text: &str) -> Option<(Option<u32>, u32)> {
    let (speed, lanes) = text.rsplit_once(" x")?;
    let width = lanes.parse::<u32>().ok().filter(|w| (1..=32).contains(w))?;
    let speed = speed.trim_end_matches(" PCIe");
    Some((parse_link_speed(speed), width))
}

/// `nouveau 0000:01:00.0: NVIDIA GM204 (124020a1)`, `nouveau 0000:01:00.0: DRM: VRAM: 4096 MiB`,
/// `nouveau 0000:01:00.0: gr: init failed, -110`: nouveau runs on that device, so it holds the GPU. Not
/// `unknown chipset`, which nouveau prints when it leaves a GPU alone.
fn nouveau_chip(line: &str) -> Option<String> {
    static NOUVEAU_WORD: super::Needle = super::Needle::new("nouveau ");
    let at = NOUVEAU_WORD.find(line)?;
    let (bus, rest) = line.get(at + "nouveau ".len()..)?.split_once(": ")?;
    let subsystem =
        rest.split_once(": ").is_some_and(|(s, _)| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric()));
    let holds = (rest.starts_with("NVIDIA ") || subsystem) && !rest.contains("unknown chipset");
    holds.then(|| PciBusId::sysfs_form(bus)).flatten()
}

/// `NVRM: GPU 0000:01:00.0 is already bound to NovaCore.`: NVIDIA's module found the GPU held by
/// another driver (its PCI driver name, e.g. `nouveau` or nova-core's `NovaCore`).
fn already_bound(line: &str) -> Option<(String, String)> {
    static NVRM_GPU: super::Needle = super::Needle::new("NVRM: GPU ");
    let at = NVRM_GPU.find(line)?;
    let (bus, rest) = line.get(at + "NVRM: GPU ".len()..)?.split_once(' ')?;
    let driver = rest.strip_prefix("is already bound to ")?.trim().trim_end_matches('.');
    let named = !driver.is_empty() && driver.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'));
    named.then(|| Some((PciBusId::sysfs_form(bus)?, driver.to_owned()))).flatten()
}

/// `could not insert 'nvidia': Key was rejected by service` (or `Required key not available`), or
/// `… 'nvidia': Operation not permitted` beside lockdown's `unsigned module loading is restricted`:
/// the kernel accepts only signed modules and refused NVIDIA's.
fn refused_nvidia(line: &str, lockdown: bool) -> bool {
    static INSERT: super::Needle = super::Needle::new("could not insert 'nvidia");
    let Some(at) = INSERT.find(line) else { return false };
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
pub fn xid_events(lines: &[String], kb: &Kb) -> Vec<XidEvent> {
    Matcher::xid_for_kb(kb).scan(lines).into_iter().filter_map(|(_, m)| xid_event(&m)).collect()
}

/// The Xid event a matched `nvrm.xid` line states; `None` for any other message. Pasted text's
/// Xid lines become the snapshot's `health.xid_events` through this, as the live log's do.
pub(super) fn xid_event(m: &ObservedMessage) -> Option<XidEvent> {
    if m.id != "nvrm.xid" {
        return None;
    }
    let xid = m.values.get("xid")?.parse().ok()?;
    let device = m.values.get("device").map(|d| d.trim_start_matches("PCI:"));
    let pci_bus_id = device.and_then(|d| {
        let with_function = if d.contains('.') { d.to_owned() } else { format!("{d}.0") };
        PciBusId::sysfs_form(&with_function)
    });
    Some(XidEvent { xid, pci_bus_id, line: m.line.clone() })
}
