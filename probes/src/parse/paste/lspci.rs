//! `lspci -k`, `-v` and `-vv` blocks of NVIDIA display devices: the kernel driver bound to each
//! (`Kernel driver in use: nouveau`, or only `Kernel modules:` when none is), the PCIe link
//! the device has (`LnkCap`) against the one it runs now (`LnkSta`), and BAR1's size now and the
//! largest the GPU offers, from its `Physical Resizable BAR` capability (`-vv`).
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
//!
//! The Resizable BAR capability, as pciutils' ls-ecaps.c `cap_rebar` prints it (since v3.7.0):
//!
//! ```text
//!     Capabilities: [bb0 v1] Physical Resizable BAR
//!         BAR 0: current size: 16MB, supported: 16MB
//!         BAR 1: current size: 256MB, supported: 64MB 128MB 256MB 512MB 1GB 2GB 4GB 8GB 16GB 32GB
//!         BAR 3: current size: 32MB, supported: 32MB
//! ```
//!
//! Its `BAR 1` entry (the aperture onto an NVIDIA GPU's memory) gives the GPU its BAR1 size and the
//! largest size its VBIOS offers; entries whose header line a `grep` left out are taken for the GPU
//! the paste is about, like a headless link.

use super::facts::{Bar1Rebar, Facts, MAX_LIST};
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
    /// The name lspci gives the device (`GeForce RTX 3090` of `GA102 [GeForce RTX 3090]`), when bracketed.
    name: Option<String>,
    /// The lines so far are inside the device's `Physical Resizable BAR` capability.
    in_rebar: bool,
    /// BAR 1's current size and the largest it supports, in bytes, from that capability.
    bar1: Option<(u64, Option<u64>)>,
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
            At::Nothing
                if line.starts_with([' ', '\t']) && (is_link_line(line.trim()) || is_rebar_line(line.trim())) =>
            {
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

/// The Resizable BAR capability's header or one of its `BAR n: current size:` lines, with which a
/// headless block also starts (`lspci -vv | grep -A4 "Resizable BAR"`).
fn is_rebar_line(line: &str) -> bool {
    rebar_capability(line).is_some() || rebar_entry(line).is_some()
}

/// `Capabilities: [bb0 v1] Physical Resizable BAR`: `Some(true)` for the physical function's
/// capability, `Some(false)` for another capability (a `Virtual Resizable BAR` of SR-IOV functions
/// included), `None` for a line that starts no capability.
fn rebar_capability(line: &str) -> Option<bool> {
    let rest = line.strip_prefix("Capabilities:")?;
    Some(rest.trim_end().ends_with("] Physical Resizable BAR"))
}

/// One entry of the Resizable BAR capability as lspci prints it (pciutils ls-ecaps.c `cap_rebar`,
/// since v3.7.0): `BAR 1: current size: 256MB, supported: 64MB 128MB 256MB 512MB 1GB`, as its index,
/// its current size and its largest supported size in bytes (`None` where lspci printed no
/// `supported:` list). `None` when the line is not one, or its current size is `<unknown>`.
fn rebar_entry(line: &str) -> Option<(u32, u64, Option<u64>)> {
    let rest = line.strip_prefix("BAR ")?;
    let (index, rest) = rest.split_once(": current size:")?;
    let index = index.trim().parse::<u32>().ok().filter(|i| *i <= 5)?;
    let (current, supported) = match rest.split_once(", supported:") {
        Some((c, s)) => (c, Some(s)),
        None => (rest, None),
    };
    let current = rebar_size(current.trim())?;
    let largest = supported.and_then(|s| s.split_whitespace().filter_map(rebar_size).max());
    Some((index, current, largest))
}

/// A size as lspci prints a Resizable BAR size (ls-ecaps.c `print_rebar_range_size`: a power of
/// two of 1 MB with the unit MB, GB, TB, PB or EB, each 1024 of the one before), in bytes.
fn rebar_size(text: &str) -> Option<u64> {
    const UNITS: [&str; 5] = ["MB", "GB", "TB", "PB", "EB"];
    let digits = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let power = UNITS.iter().position(|u| *u == unit)?;
    let number = number.parse::<u64>().ok().filter(|n| n.is_power_of_two())?;
    let unit_bytes = 1024u64.checked_pow(u32::try_from(power).ok()?)?.checked_mul(1024 * 1024)?;
    number.checked_mul(unit_bytes)
}

/// The product name lspci puts in brackets after the chip's (`GA102 [GeForce RTX 3090] (rev a1)`),
/// as nvidia-smi names it (`NVIDIA GeForce RTX 3090`); `None` when lspci knew no name (`Device 2684`).
fn marketing_name(name: &str) -> Option<String> {
    let open = name.find('[')?;
    let close = open + name.get(open..)?.find(']')?;
    let inner = name.get(open + 1..close)?.trim();
    // `-nn` ids (`[10de:2204]`) and class codes (`[0300]`) are not names.
    if inner.is_empty() || inner.chars().all(|c| c.is_ascii_hexdigit() || c == ':') {
        return None;
    }
    Some(if inner.starts_with("NVIDIA") { inner.to_owned() } else { format!("NVIDIA {inner}") })
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
    Some(Block { bus_id, class, device_id, name: marketing_name(name), ..Block::default() })
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
/// under no header (`lspci -vvv | grep ACSCtl`, as NCCL's troubleshooting guide asks). A markdown
/// post may quote the line as inline code (`` `ACSCtl: SrcValid+ …` ``), so the backticks around it
/// are dropped.
fn acs_redirect(facts: &mut Facts, at: usize, bus: Option<&String>, line: &str) {
    let line = line.trim().trim_matches('`').trim();
    let Some(ctl) = line.strip_prefix("ACSCtl:") else { return };
    let on = |bit: &str| ctl.split_whitespace().any(|w| w == format!("{bit}+"));
    if !(on("ReqRedir") || on("CmpltRedir")) || facts.acs_redirect.len() >= MAX_LIST {
        return;
    }
    let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
    facts.saw(at, FORMAT);
    facts.acs_redirect.push(bus.map_or_else(|| line.clone(), |b| format!("{b}: {line}")));
}

fn detail(line: &str, b: &mut Block) {
    if let Some(physical) = rebar_capability(line) {
        b.in_rebar = physical;
        return;
    }
    // BAR 1 is the aperture onto an NVIDIA GPU's memory (BAR 0 its registers, BAR 3 another window).
    // A headless block may have lost the capability's header line to a `grep`.
    if let Some((1, current, largest)) = rebar_entry(line)
        && (b.in_rebar || b.headless)
    {
        b.mixed |= b.headless && b.bar1.is_some();
        b.bar1 = Some((current, largest));
        return;
    }
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
    if b.headless && b.mixed {
        return;
    }
    if let Some((current_bytes, max_bytes)) = b.bar1
        && facts.bar1_rebar.len() < MAX_LIST
    {
        facts.saw(at, FORMAT);
        facts.os.get_or_insert(gpu_doctor_model::OsFamily::Linux);
        facts.bar1_rebar.push(Bar1Rebar {
            bus_id: (!b.headless).then(|| b.bus_id.clone()),
            name: b.name.clone(),
            current_bytes,
            max_bytes,
            source: FORMAT,
        });
    }
    if b.headless && limit.is_none() {
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

#[cfg(test)]
mod tests {
    use super::*;

    const MB: u64 = 1 << 20;

    #[test]
    fn rebar_entries_read_as_ls_ecaps_prints_them() {
        // pciutils v3.14.0 ls-ecaps.c cap_rebar: `BAR %d: current size:` then `, supported:` and each
        // size as print_rebar_range_size writes it (MB up to 512MB, then GB, TB, PB, EB).
        assert_eq!(
            rebar_entry("BAR 1: current size: 256MB, supported: 64MB 128MB 256MB 512MB 1GB 2GB 4GB 8GB 16GB 32GB"),
            Some((1, 256 * MB, Some(32 * 1024 * MB)))
        );
        assert_eq!(rebar_entry("BAR 0: current size: 16MB, supported: 16MB"), Some((0, 16 * MB, Some(16 * MB))));
        // No size bits set: lspci prints no `supported:` list.
        assert_eq!(rebar_entry("BAR 1: current size: 8GB"), Some((1, 8 * 1024 * MB, None)));
        assert_eq!(rebar_size("2TB"), Some(2 << 40));
        assert_eq!(rebar_size("8EB"), Some(1 << 63));
        // `<unknown>` (a size code past 43) and malformed text are not sizes.
        for bad in ["<unknown>", "16EB", "3MB", "MB", "256", "256 MB", "-1MB", "99999999999999999999MB"] {
            assert_eq!(rebar_size(bad), None, "{bad}");
        }
        for bad in
            ["BAR 9: current size: 16MB", "BAR x: current size: 16MB", "BAR 1: current size: <unknown>", "BAR 1:"]
        {
            assert_eq!(rebar_entry(bad), None, "{bad}");
        }
        // A supported list with an unreadable size keeps the readable ones.
        assert_eq!(
            rebar_entry("BAR 1: current size: 1GB, supported: 1GB <unknown>"),
            Some((1, 1024 * MB, Some(1024 * MB)))
        );
    }

    #[test]
    fn the_physical_capability_is_told_from_the_virtual_one_and_others() {
        assert_eq!(rebar_capability("Capabilities: [bb0 v1] Physical Resizable BAR"), Some(true));
        assert_eq!(rebar_capability("Capabilities: [bb0 v1] Virtual Resizable BAR"), Some(false));
        assert_eq!(rebar_capability("Capabilities: [100 v1] Virtual Channel"), Some(false));
        assert_eq!(rebar_capability("BAR 1: current size: 16MB"), None);
    }

    #[test]
    fn the_marketing_name_is_the_bracketed_one() {
        let name = |s: &str| marketing_name(s);
        assert_eq!(
            name("NVIDIA Corporation GA102 [GeForce RTX 3090] (rev a1)").as_deref(),
            Some("NVIDIA GeForce RTX 3090")
        );
        assert_eq!(
            name("NVIDIA Corporation GA102 [GeForce RTX 3090] [10de:2204] (rev a1)").as_deref(),
            Some("NVIDIA GeForce RTX 3090")
        );
        assert_eq!(name("NVIDIA Corporation Device 2684 (rev a1)"), None);
        assert_eq!(name("NVIDIA Corporation Device [10de:2684] (rev a1)"), None);
        assert_eq!(name("NVIDIA Corporation GA102 [GeForce RTX 3090"), None, "no closing bracket");
    }
}
