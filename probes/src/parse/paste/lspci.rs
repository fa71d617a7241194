//! `lspci -k`, `-v` and `-vv` blocks of NVIDIA display devices: the kernel driver bound to each
//! (`Kernel driver in use: nouveau`, or only `Kernel modules:` when none is), and the PCIe link
//! the device has (`LnkCap`) against the one it runs now (`LnkSta`).
//!
//! ```text
//! 01:00.0 VGA compatible controller [0300]: NVIDIA Corporation GP107 [GeForce GTX 1050] [10de:1c81] (rev a1)
//!     Subsystem: Micro-Star International Co., Ltd. [MSI] GP107 [GeForce GTX 1050] [1462:8c96]
//!         LnkCap:    Port #0, Speed 8GT/s, Width x16, ASPM L0s L1, Exit Latency L0s <512ns, L1 <4us
//!         LnkSta:    Speed 2.5GT/s (downgraded), Width x16 (ok)
//!     Kernel driver in use: nouveau
//!     Kernel modules: nvidiafb, nouveau
//! ```
//!
//! A device is listed only when its block says which driver holds it: a bare `lspci` line, or a
//! block cut before its `Kernel` lines, says nothing about the driver.
//!
//! lspci marks a `LnkSta` speed or width below the device's own `LnkCap` with `(downgraded)` (pciutils
//! ls-caps.c, `link_compare`, since v3.6.3: only on endpoints and upstream ports, never on root or
//! downstream ports). A GPU whose link trained at one lane sits in a slot, riser or adapter with one
//! lane: that is read as the link's limit (`link.narrow_slot`), from the GPU's block, or from a
//! block whose header line was not pasted (the detail lines alone, first in the text or after a
//! blank line), which is taken for the GPU the paste is about.

use super::facts::{Facts, MAX_LIST};
use crate::probe::link::parse_link_speed;
use gpu_doctor_kb::pcie_formula;
use gpu_doctor_kb::pcie_gbytes_per_s;
use gpu_doctor_model::IDLE_NOTE;
use gpu_doctor_model::NVIDIA_VENDOR_ID;
use gpu_doctor_model::{BootLinkLimit, HostLink, LinkSeenBy, PciBusId, PciDevice};

const FORMAT: &str = "lspci";

/// The PCI classes lspci names for a GPU, with their class codes.
const CLASSES: &[(&str, u32)] =
    &[("VGA compatible controller", 0x03_0000), ("3D controller", 0x03_0200), ("Display controller", 0x03_8000)];

/// One NVIDIA display device's block.
#[derive(Debug, Default)]
struct Block {
    bus_id: String,
    class: u32,
    device_id: Option<u16>,
    driver: Option<String>,
    /// A `Kernel driver in use:` or `Kernel modules:` line was seen: the driver is known.
    driver_known: bool,
    cap: (Option<u32>, Option<u32>),
    sta: (Option<u32>, Option<u32>),
    /// The `LnkSta:` line, trimmed.
    sta_line: Option<String>,
    /// lspci marked the `LnkSta` width `(downgraded)`: below the device's own `LnkCap` width.
    width_downgraded: bool,
    /// Detail lines without their header line: the device is not known to be NVIDIA's.
    headless: bool,
    /// A headless block with two `LnkSta` lines (a `grep` over many devices): whose is unknown.
    mixed: bool,
}

/// What the lines so far belong to.
enum At {
    /// No device: the text's start, a blank line or other text.
    Nothing,
    /// An NVIDIA display device's block (from line `.0`), or detail lines whose header was not pasted.
    Block(usize, Block),
    /// Another device's block (a bridge's, say): only its ACS control line is read.
    Other(String),
}

/// The bus id given to a link read from detail lines whose header line was not pasted.
pub(super) const HEADLESS_BUS: &str = "(header line not pasted)";

/// Reads every NVIDIA display device's block, and detail lines whose header was not pasted.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    let mut at = At::Nothing;
    for (i, line) in lines.iter().enumerate() {
        if let Some(block) = header(line) {
            finish(facts, std::mem::replace(&mut at, At::Block(i, block)));
            continue;
        }
        if let Some(bus) = other_device(line) {
            finish(facts, std::mem::replace(&mut at, At::Other(bus)));
            continue;
        }
        if line.trim().is_empty() {
            finish(facts, std::mem::replace(&mut at, At::Nothing));
            continue;
        }
        match &mut at {
            At::Block(_, b) => detail(line.trim(), b),
            // Detail lines are indented; a headless block starts at its link lines.
            At::Nothing if line.starts_with([' ', '\t']) && is_link_line(line.trim()) => {
                let mut b = Block { bus_id: HEADLESS_BUS.to_owned(), headless: true, ..Block::default() };
                detail(line.trim(), &mut b);
                at = At::Block(i, b);
            }
            At::Other(bus) => acs_redirect(facts, i, Some(bus), line),
            At::Nothing => acs_redirect(facts, i, None, line),
        }
    }
    finish(facts, at);
}

/// Adds the block `at` was in, if any.
fn finish(facts: &mut Facts, at: At) {
    if let At::Block(i, b) = at {
        add(facts, i, b);
    }
}

/// `LnkCap:` or `LnkSta:`, the lines a headless block starts with.
fn is_link_line(line: &str) -> bool {
    line.starts_with("LnkCap:") || line.starts_with("LnkSta:")
}

/// The block an NVIDIA display device's header line starts: `01:00.0 VGA compatible controller: NVIDIA …`,
/// with or without the domain (`-D`) and the numeric ids (`-nn`).
fn header(line: &str) -> Option<Block> {
    let (bus, rest) = line.trim_start().split_once(' ')?;
    let bus_id = PciBusId::sysfs_form(bus)?;
    let (class_text, name) = rest.split_once(": ")?;
    let class = CLASSES.iter().find(|(c, _)| class_text.starts_with(c)).map(|(_, code)| *code)?;
    let lower = name.to_ascii_lowercase();
    let ids = format!("[{NVIDIA_VENDOR_ID:04x}:");
    if !lower.starts_with("nvidia corporation") && !lower.contains(&ids) {
        return None;
    }
    let device_id = lower.find(&ids).and_then(|at| lower.get(at + ids.len()..at + ids.len() + 4));
    let device_id = device_id.and_then(|d| u16::from_str_radix(d, 16).ok());
    Some(Block { bus_id, class, device_id, ..Block::default() })
}

/// Another device's header line (`00:02.0 Host bridge: …`), which ends the block before it: its bus id.
fn other_device(line: &str) -> Option<String> {
    if line.starts_with([' ', '\t']) {
        return None;
    }
    let (bus, rest) = line.split_once(' ')?;
    rest.contains(": ").then(|| PciBusId::sysfs_form(bus)).flatten()
}

/// A bridge's `ACSCtl:` line that sends peer-to-peer requests or completions up to the root complex
/// (`ReqRedir+`, `CmpltRedir+`: PCIe ACS P2P Request and Completion Redirect, which lspci prints from
/// the ACS Control register, pciutils ls-ecaps.c `cap_acs`), as `<bus>: <line>`, or the line alone
/// under no header (`lspci -vvv | grep ACSCtl`, as NCCL's troubleshooting guide asks).
fn acs_redirect(facts: &mut Facts, at: usize, bus: Option<&String>, line: &str) {
    let Some(ctl) = line.trim().strip_prefix("ACSCtl:") else { return };
    let on = |bit: &str| ctl.split_whitespace().any(|w| w == format!("{bit}+"));
    if !(on("ReqRedir") || on("CmpltRedir")) || facts.acs_redirect.len() >= MAX_LIST {
        return;
    }
    let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
    facts.saw(at, FORMAT);
    facts.acs_redirect.push(bus.map_or_else(|| line.clone(), |b| format!("{b}: {line}")));
}

fn detail(line: &str, b: &mut Block) {
    if let Some(driver) = line.strip_prefix("Kernel driver in use:") {
        let driver = driver.trim();
        b.driver = (!driver.is_empty()).then(|| driver.to_owned());
        b.driver_known = true;
    } else if line.starts_with("Kernel modules:") {
        b.driver_known = true;
    } else if let Some(cap) = line.strip_prefix("LnkCap:") {
        b.cap = speed_width(cap);
    } else if let Some(sta) = line.strip_prefix("LnkSta:") {
        b.mixed |= b.headless && b.sta_line.is_some();
        b.sta = speed_width(sta);
        b.width_downgraded = sta.split(',').any(|p| p.trim().starts_with("Width x") && p.contains("(downgraded)"));
        b.sta_line = Some(line.split_whitespace().collect::<Vec<_>>().join(" "));
    }
}

/// The generation and lanes of `Port #0, Speed 8GT/s, Width x16, …` or `Speed 2.5GT/s (downgraded), Width x8 (downgraded)`.
fn speed_width(text: &str) -> (Option<u32>, Option<u32>) {
    let mut generation = None;
    let mut width = None;
    for part in text.split(',').map(str::trim) {
        if let Some(speed) = part.strip_prefix("Speed ") {
            let rate = speed.split("GT/s").next().unwrap_or("").trim();
            generation = parse_link_speed(&format!("{rate} GT/s"));
        } else if let Some(w) = part.strip_prefix("Width x") {
            let digits: String = w.chars().take_while(char::is_ascii_digit).collect();
            width = digits.parse::<u32>().ok().filter(|w| (1..=32).contains(w));
        }
    }
    (generation, width)
}

fn add(facts: &mut Facts, at: usize, b: Block) {
    let has_link = b.cap != (None, None) && b.sta != (None, None);
    let limit = one_lane(&b);
    if b.headless && (limit.is_none() || b.mixed) {
        return;
    }
    if !b.driver_known && !has_link && limit.is_none() {
        return;
    }
    facts.saw(at, FORMAT);
    facts.os.get_or_insert(gpu_doctor_model::OsFamily::Linux);
    if b.driver_known && !b.headless {
        facts.pci_device(PciDevice {
            bus_id: b.bus_id.clone(),
            vendor_id: NVIDIA_VENDOR_ID,
            device_id: b.device_id.unwrap_or(0),
            class: b.class,
            subsystem_vendor_id: None,
            subsystem_device_id: None,
            driver: b.driver,
        });
    }
    if (has_link || limit.is_some())
        && facts.links.len() < MAX_LIST
        && !facts.links.iter().any(|l| l.bus_id == b.bus_id)
    {
        let mut l = link(b.bus_id, b.cap, b.sta, ("lspci -vv", "lspci LnkCap"));
        if let Some(limit) = limit {
            l.set_boot_limit(limit);
        }
        facts.links.push(l);
    }
}

/// The limit of a GPU whose link trained at one lane, below its own lanes: `LnkCap` says more, or
/// lspci marked the width `(downgraded)` where `LnkCap` was not pasted.
fn one_lane(b: &Block) -> Option<BootLinkLimit> {
    let (generation, width) = (b.sta.0, b.sta.1?);
    let below_card = b.cap.1.map_or(b.width_downgraded, |card| width < card);
    if width != 1 || !below_card {
        return None;
    }
    let rate = |g: Option<u32>, w: Option<u32>| g.zip(w).and_then(|(g, w)| pcie_gbytes_per_s(g, w));
    Some(BootLinkLimit {
        at: "<unknown>".to_owned(),
        generation,
        width,
        capable_generation: b.cap.0,
        capable_width: b.cap.1,
        available_gbps: rate(generation, Some(width)).unwrap_or(0.0) * 8.0,
        capable_gbps: rate(b.cap.0, b.cap.1).map(|r| r * 8.0),
        line: b.sta_line.clone().unwrap_or_default(),
        seen_by: LinkSeenBy::Lspci,
    })
}

/// A pasted GPU's link: `cap` its most, `sta` what it runs now, `from` the text they were read from
/// and the part that said the most.
pub(super) fn link(
    bus_id: String,
    cap: (Option<u32>, Option<u32>),
    sta: (Option<u32>, Option<u32>),
    (from, cap_from): (&str, &str),
) -> HostLink {
    let below = |now: Option<u32>, max: Option<u32>| now.zip(max).is_some_and(|(n, m)| n < m);
    let (theoretical, basis) = match cap {
        (Some(g), Some(w)) => (
            pcie_gbytes_per_s(g, w),
            pcie_formula(g, w).map_or_else(|| cap_from.to_owned(), |f| format!("{f} ({cap_from})")),
        ),
        _ => (None, format!("the link's maximum is not in the pasted {from}")),
    };
    HostLink {
        pci_path: vec![bus_id.clone()],
        bus_id,
        upstream: Vec::new(),
        numa_node: None,
        gen_current: sta.0,
        gen_max: cap.0,
        width_current: sta.1,
        width_max: cap.1,
        values_from: from.to_owned(),
        egpu: None,
        theoretical_gbytes_per_s: theoretical,
        bandwidth_basis: basis,
        idle_note: (below(sta.0, cap.0) || below(sta.1, cap.1)).then(|| IDLE_NOTE.to_owned()),
        boot_limit: None,
    }
}
