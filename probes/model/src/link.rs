//! Each GPU's path to the CPU: PCIe link, bridges, Thunderbolt tunnel.

use serde::{Deserialize, Serialize};

/// PCIe link state as sysfs shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SysfsLink {
    /// Generation now; `None` when sysfs does not say.
    pub gen_current: Option<u32>,
    /// Highest generation.
    pub gen_max: Option<u32>,
    /// Lanes now.
    pub width_current: Option<u32>,
    /// Most lanes.
    pub width_max: Option<u32>,
}

/// A PCI bridge on the way from the root port to a GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpstreamPort {
    /// Bus id in sysfs form, e.g. `0000:00:01.0`.
    pub bus_id: String,
    /// PCI vendor id; `None` when unreadable.
    pub vendor_id: Option<u16>,
    /// PCI device id; `None` when unreadable.
    pub device_id: Option<u16>,
    /// The driver bound to it (usually `pcieport`); `None` when none is.
    pub driver: Option<String>,
    /// Its own PCIe link (for a downstream port: the link below it); `None` when sysfs has none.
    pub link: Option<SysfsLink>,
    /// sysfs `removable`: true for `removable` (behind an external-facing port, e.g. Thunderbolt),
    /// false for `fixed`; `None` when unknown or absent (kernels before 5.12).
    pub removable: Option<bool>,
}

/// How an eGPU is tunnelled to the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TunnelKind {
    /// Thunderbolt 1–3 (or a generation the kernel did not report).
    Thunderbolt,
    /// USB4 or Thunderbolt 4/5 (router generation 4 or later).
    Usb4,
    /// A value this version of gpu-doctor does not know, read from a report written by a newer one.
    #[serde(other)]
    Unknown,
}

impl TunnelKind {
    /// The name people know it by: `Thunderbolt` or `USB4` (`unknown tunnel` for a kind this
    /// version does not know).
    pub fn label(self) -> &'static str {
        match self {
            Self::Thunderbolt => "Thunderbolt",
            Self::Usb4 => "USB4",
            Self::Unknown => "unknown tunnel",
        }
    }
}

/// What is known about the Thunderbolt/USB4 tunnel in front of an eGPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EgpuFacts {
    /// Thunderbolt or USB4.
    pub via: TunnelKind,
    /// The tunnel's Thunderbolt generation (3 = TB3, 4 = USB4/TB4): the lower of enclosure and host
    /// router, or from the bridge ids; `None` when nothing said.
    pub tb_generation: Option<u32>,
    /// The enclosure's `device_name`, e.g. `Razer Core X`; `None` when no router was matched.
    pub device_name: Option<String>,
    /// The enclosure's `vendor_name`; `None` when no router was matched.
    pub vendor_name: Option<String>,
    /// Whether the enclosure is authorized (PCIe is only tunnelled when it is); `None` when unknown.
    pub authorized: Option<bool>,
    /// Thunderbolt link rate, Gb/s (lanes × per-lane speed, 40 for TB3/TB4); `None` when unknown.
    pub link_gbps: Option<f64>,
    /// The matched router's sysfs name, e.g. `0-1`; `None` when none was matched.
    pub router: Option<String>,
    /// Why the GPU is taken to be behind Thunderbolt, one line per signal.
    pub evidence: Vec<String>,
}

/// A GPU's path to the CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostLink {
    /// The GPU's bus id (sysfs form, `0000:01:00.0`).
    pub bus_id: String,
    /// Bus ids from the root port down to the GPU (the GPU last); just the GPU when sysfs could not
    /// be resolved.
    pub pci_path: Vec<String>,
    /// The bridges on `pci_path` above the GPU, root port first.
    pub upstream: Vec<UpstreamPort>,
    /// The NUMA node the GPU is attached to; `None` when sysfs says -1 or nothing.
    pub numa_node: Option<u32>,
    /// PCIe generation now (lowered while idle); `None` when neither NVML nor sysfs said.
    pub gen_current: Option<u32>,
    /// Highest PCIe generation for this GPU in this system; `None` when unknown.
    pub gen_max: Option<u32>,
    /// PCIe lanes now; `None` when unknown.
    pub width_current: Option<u32>,
    /// Most PCIe lanes for this GPU in this system; `None` when unknown.
    pub width_max: Option<u32>,
    /// Where the four link values came from: `nvml`, `sysfs`, `nvml and sysfs`, or `none`.
    pub values_from: String,
    /// The Thunderbolt/USB4 tunnel, when the GPU is an eGPU; `None` for a GPU in a slot.
    pub egpu: Option<EgpuFacts>,
    /// Theoretical payload bandwidth per direction, GB/s, from the link's maximum and capped by the
    /// tunnel; `None` when the maximum is unknown.
    pub theoretical_gbytes_per_s: Option<f64>,
    /// One line saying how `theoretical_gbytes_per_s` was computed.
    pub bandwidth_basis: String,
    /// `IDLE_NOTE` when the link runs below its maximum now; `None` otherwise.
    pub idle_note: Option<String>,
    /// The kernel's line at enumeration naming the link on the GPU's path that limits its bandwidth;
    /// `None` where no such line was read (the live probes never read one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_limit: Option<BootLinkLimit>,
}

impl HostLink {
    /// Gives the link the kernel's line about it. Fewer lanes at enumeration than the card has are
    /// not power saving, so such a line drops the idle note (`link.narrow_slot` says what they are).
    pub fn set_boot_limit(&mut self, limit: BootLinkLimit) {
        if limit.narrower_than_card() {
            self.idle_note = None;
        }
        self.boot_limit = Some(limit);
    }
}

/// The Linux kernel's line at enumeration (`pci 0000:01:00.0: 4.000 Gb/s available PCIe bandwidth,
/// limited by 5.0 GT/s PCIe x1 link at 0000:00:1c.4 (capable of 126.016 Gb/s with 8.0 GT/s PCIe x16
/// link)`): the slowest link between the GPU and the root port, against what the GPU itself can run.
/// No GPU driver has loaded then, so a width below the card's comes from link training: fewer lanes
/// wired or connected. The speed says less: GPUs may train at their lowest speed until used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BootLinkLimit {
    /// The device whose link limits the GPU (`0000:00:1c.4`), or `<unknown>` as the kernel says.
    pub at: String,
    /// The limiting link's generation; `None` for a speed the knowledge base does not know.
    pub generation: Option<u32>,
    /// The limiting link's lanes.
    pub width: u32,
    /// The generation the GPU can run; `None` for a speed the knowledge base does not know.
    pub capable_generation: Option<u32>,
    /// The lanes the GPU can run; `None` where the text says only the host bridge's link (a
    /// board's PCIe controller line, `brcm-pcie …: link up, 2.5 GT/s PCIe x1`).
    pub capable_width: Option<u32>,
    /// The kernel's `available` and `capable of` figures, Gb/s (`capable_gbps` `None` as the lanes).
    pub available_gbps: f64,
    pub capable_gbps: Option<f64>,
    /// The line as the kernel wrote it (or lspci's `LnkSta:` line, as `seen_by` says).
    pub line: String,
    /// What showed the link: the kernel's line at enumeration (reports written before lspci was
    /// read here have no such field and mean that), or lspci's `LnkSta`.
    #[serde(default, skip_serializing_if = "LinkSeenBy::is_kernel")]
    pub seen_by: LinkSeenBy,
}

/// Which text showed a [`BootLinkLimit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkSeenBy {
    /// The kernel's line when it enumerated the device, before any GPU driver loaded.
    #[default]
    Kernel,
    /// lspci's `LnkSta` of the GPU itself: the width the link trained at, which lspci marks
    /// `(downgraded)` below the device's own `LnkCap` (pciutils ls-caps.c, `link_compare`).
    Lspci,
    /// A person's words: the lanes a tool showed them (the BIOS, GPU-Z, a rig report) against the
    /// card's, in one sentence (`running at x8 instead of x16`).
    Words,
}

impl LinkSeenBy {
    /// True for the kernel's line (the default, left out of saved reports).
    pub fn is_kernel(&self) -> bool {
        *self == Self::Kernel
    }
}

impl BootLinkLimit {
    /// Whether the link on the path has fewer lanes than the card: against the card's own lanes
    /// where the line says them; where it does not (a host bridge's line), a one-lane link, since
    /// NVIDIA's cards have 16, 8 or 4 lanes but for a few one-lane GT 710 boards.
    pub fn narrower_than_card(&self) -> bool {
        self.capable_width.map_or(self.width == 1, |card| self.width < card)
    }
}

/// What `HostLink::idle_note` says when the link runs below its maximum.
pub const IDLE_NOTE: &str = "the link runs below its maximum now; GPUs lower the link speed while idle to save \
                             power, so this is only a problem if it stays low under load";
