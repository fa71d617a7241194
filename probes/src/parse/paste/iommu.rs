//! The host's IOMMU (Intel VT-d, AMD-Vi) from the kernel's command line and log: whether it
//! translates the devices' DMA, passes it through, or is off.
//!
//! ```text
//! [    0.000000] Command line: BOOT_IMAGE=/boot/vmlinuz-6.8.0 root=UUID=… ro intel_iommu=on iommu=pt
//! [    0.412345] iommu: Default domain type: Translated
//! [    0.021044] DMAR: IOMMU enabled
//! [    1.050000] pci 0000:00:00.2: AMD-Vi: Found IOMMU cap 0x40
//! nvidia 0000:07:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x0003 address=0x80000040 flags=0x0020]
//! DMAR: [DMA Write NO_PASID] Request device [41:00.0] fault addr 0xf8000000 [fault reason 0x05] PTE Write access is not set
//! ```
//!
//! The kernel's own words, at Linux v6.8:
//! - the command line as dmesg prints it (`Command line:`, arch/x86/kernel/setup.c; `Kernel command
//!   line:`, init/main.c) or `cat /proc/cmdline` prints it (from `BOOT_IMAGE=`, or the line after that
//!   command), read for the parameters Documentation/admin-guide/kernel-parameters.txt gives the
//!   IOMMU: `iommu=` (x86: `pt`, `nopt`, `off`, comma-separated), `iommu.passthrough=`,
//!   `intel_iommu=` (`on`, `off`, comma-separated) and `amd_iommu=off`;
//! - `iommu: Default domain type: Translated` or `Passthrough` (drivers/iommu/iommu.c
//!   `iommu_subsys_init`, `iommu_domain_type_str`): the kernel's decision, which wins over the rest;
//! - `DMAR: IOMMU enabled` (drivers/iommu/intel/iommu.c `intel_iommu_setup`) and the AMD driver's
//!   `AMD-Vi: Found IOMMU`, `Interrupt remapping enabled` and `Extended features` lines
//!   (drivers/iommu/amd/init.c): the IOMMU is on;
//! - a DMA remapping fault (`DMAR: [DMA Read …` / `[DMA Write …`, drivers/iommu/intel/dmar.c
//!   `dmar_fault_do_one`; `AMD-Vi: Event logged [IO_PAGE_FAULT …`, drivers/iommu/amd/iommu.c): the
//!   IOMMU translated a device's DMA and refused it.
//!
//! An IOMMU that is on with nothing saying passthrough translates: x86 kernels default to the
//! translated (DMA, lazy) domain (drivers/iommu/Kconfig `IOMMU_DEFAULT_DMA_LAZY`, the default on X86).

use super::facts::Facts;
use gpu_doctor_model::{Iommu, IommuMode, OsFamily};

const FORMAT: &str = "kernel IOMMU lines";

/// The most lines kept as evidence: enough to show what said so.
const MAX_EVIDENCE: usize = 6;

/// The longest evidence line kept, in characters: a command line can be long.
const MAX_LINE_CHARS: usize = 240;

/// What the lines say, before the mode is settled.
#[derive(Debug, Default)]
struct Seen {
    /// The kernel's default domain type line.
    domain: Option<IommuMode>,
    /// A command-line parameter that asks for passthrough (`Some(Passthrough)`) or translation.
    asked: Option<IommuMode>,
    /// A command-line parameter that turns it off.
    off: bool,
    /// A line that shows it on.
    on: bool,
    /// A remapping fault: a device's DMA was translated and refused.
    fault: bool,
    /// The devices whose DMA faulted, as the lines name them.
    fault_devices: Vec<String>,
    evidence: Vec<String>,
}

impl Seen {
    fn keep(&mut self, line: &str) {
        if self.evidence.len() < MAX_EVIDENCE {
            let line = line.trim();
            let cut = line.char_indices().nth(MAX_LINE_CHARS).map_or(line.len(), |(at, _)| at);
            let kept = line.get(..cut).unwrap_or(line);
            self.evidence.push(if cut < line.len() { format!("{kept}…") } else { kept.to_owned() });
        }
    }

    fn mode(&self) -> Option<IommuMode> {
        self.domain
            .or(self.fault.then_some(IommuMode::Translated))
            .or(self.asked)
            .or(self.off.then_some(IommuMode::Off))
            .or(self.on.then_some(IommuMode::Translated))
    }
}

/// Reads the IOMMU's mode from command lines and kernel log lines.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    let mut seen = Seen::default();
    let mut first = None;
    for (i, line) in lines.iter().enumerate() {
        let after_cat = i > 0 && lines[i - 1].trim_end().ends_with("/proc/cmdline");
        let found = if let Some(params) = command_line(line, after_cat) {
            parameters(params, &mut seen)
        } else {
            log_line(line, &mut seen)
        };
        if found {
            first.get_or_insert(i);
            seen.keep(line);
        }
    }
    let (Some(at), Some(mode)) = (first, seen.mode()) else { return };
    facts.saw(at, FORMAT);
    facts.os.get_or_insert(OsFamily::Linux);
    facts.iommu = Some(Iommu { mode, evidence: seen.evidence, fault_devices: seen.fault_devices });
}

/// The parameters of a kernel command line: after dmesg's `Command line:` (`Kernel command line:`
/// too), or `/proc/cmdline`'s text (from `BOOT_IMAGE=`, or any line right after `cat /proc/cmdline`).
fn command_line(line: &str, after_cat: bool) -> Option<&str> {
    if let Some(at) = line.find("Command line:").or_else(|| line.find("command line:")) {
        return line.get(at + "Command line:".len()..);
    }
    let trimmed = line.trim();
    (trimmed.starts_with("BOOT_IMAGE=") || (after_cat && trimmed.contains('='))).then_some(trimmed)
}

/// Notes the IOMMU parameters among `params`; true when there was one.
fn parameters(params: &str, seen: &mut Seen) -> bool {
    let mut found = false;
    for word in params.split_whitespace() {
        let word = word.trim_matches(['"', '\'']);
        let Some((key, value)) = word.split_once('=') else { continue };
        let values = || value.split(',').map(str::trim);
        match key {
            "iommu" => {
                for v in values() {
                    match v {
                        "pt" => seen.asked = Some(IommuMode::Passthrough),
                        "nopt" => seen.asked = Some(IommuMode::Translated),
                        "off" => seen.off = true,
                        _ => continue,
                    }
                    found = true;
                }
            }
            "iommu.passthrough" => {
                seen.asked = match value {
                    "1" | "y" | "Y" | "on" => Some(IommuMode::Passthrough),
                    "0" | "n" | "N" | "off" => Some(IommuMode::Translated),
                    _ => continue,
                };
                found = true;
            }
            "intel_iommu" => {
                for v in values() {
                    match v {
                        "on" => seen.on = true,
                        "off" => seen.off = true,
                        _ => continue,
                    }
                    found = true;
                }
            }
            "amd_iommu" if values().any(|v| v == "off") => {
                seen.off = true;
                found = true;
            }
            _ => {}
        }
    }
    found
}

/// Notes what a kernel log line says of the IOMMU; true when it said something.
fn log_line(line: &str, seen: &mut Seen) -> bool {
    if let Some(at) = line.find("Default domain type: ")
        && line.get(..at).is_some_and(|before| before.trim_end().ends_with("iommu:"))
    {
        let rest = line.get(at + "Default domain type: ".len()..).unwrap_or("");
        let mode = match rest.split_whitespace().next() {
            Some("Translated") => IommuMode::Translated,
            Some("Passthrough") => IommuMode::Passthrough,
            _ => return false,
        };
        seen.domain = Some(mode);
        return true;
    }
    if line.contains("DMAR: IOMMU enabled")
        || (line.contains("AMD-Vi:")
            && ["Found IOMMU", "Interrupt remapping enabled", "Extended features"].iter().any(|w| line.contains(w)))
    {
        seen.on = true;
        return true;
    }
    if line.contains("DMAR: [DMA Read")
        || line.contains("DMAR: [DMA Write")
        || line.contains("Event logged [IO_PAGE_FAULT")
    {
        seen.fault = true;
        seen.on = true;
        if let Some(device) = fault_device(line)
            && seen.fault_devices.len() < MAX_FAULT_DEVICES
            && !seen.fault_devices.contains(&device)
        {
            seen.fault_devices.push(device);
        }
        return true;
    }
    false
}

/// The most faulting devices kept: a machine's GPUs.
const MAX_FAULT_DEVICES: usize = 16;

/// The device a remapping fault names: Intel's `Request device [02:00.0]` (dmar.c `dmar_fault_do_one`), or the
/// `0000:07:00.0` before AMD-Vi's `Event logged` (the device's own log prefix), without the PCI domain.
fn fault_device(line: &str) -> Option<String> {
    let bus_id = |s: &str| {
        let s = s.strip_prefix("0000:").unwrap_or(s);
        let ok = s.len() == 7
            && s.as_bytes()[2] == b':'
            && s.as_bytes()[5] == b'.'
            && s.chars().all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.');
        ok.then(|| s.to_ascii_lowercase())
    };
    if let Some(at) = line.find("Request device [") {
        let rest = &line[at + "Request device [".len()..];
        return bus_id(rest.split(']').next()?);
    }
    let before = &line[..line.find("AMD-Vi: Event logged")?];
    before.split_whitespace().rev().find_map(|w| bus_id(w.trim_end_matches(':')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(text: &str) -> Option<IommuMode> {
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let mut facts = Facts::default();
        read(&lines, &mut facts);
        facts.iommu.map(|i| i.mode)
    }

    #[test]
    fn the_command_line_asks_for_a_mode() {
        let cmd = |params: &str| {
            mode(&format!("[    0.000000] Command line: BOOT_IMAGE=/boot/vmlinuz root=/dev/sda1 {params}"))
        };
        assert_eq!(cmd("quiet splash intel_iommu=on"), Some(IommuMode::Translated), "on, the x86 default domain");
        assert_eq!(cmd("intel_iommu=on iommu=pt"), Some(IommuMode::Passthrough));
        assert_eq!(cmd("amd_iommu=on iommu=pt"), Some(IommuMode::Passthrough), "amd_iommu=on is no value; pt is");
        assert_eq!(cmd("iommu.passthrough=1"), Some(IommuMode::Passthrough));
        assert_eq!(cmd("iommu.passthrough=0"), Some(IommuMode::Translated));
        assert_eq!(cmd("iommu=soft,nopt"), Some(IommuMode::Translated));
        assert_eq!(cmd("intel_iommu=off"), Some(IommuMode::Off));
        assert_eq!(cmd("amd_iommu=off"), Some(IommuMode::Off));
        assert_eq!(cmd("intel_iommu=on,sm_on"), Some(IommuMode::Translated));
        assert_eq!(cmd("quiet splash"), None, "nothing said: unknown, not off");
        assert_eq!(cmd("amd_iommu=on"), None, "not a value the kernel knows");
        // /proc/cmdline's text, after its command or alone.
        assert_eq!(mode("cat /proc/cmdline\nroot=/dev/nvme0n1p2 ro iommu=pt"), Some(IommuMode::Passthrough));
        assert_eq!(mode("BOOT_IMAGE=/vmlinuz-6.8.0 root=UUID=1 ro intel_iommu=on"), Some(IommuMode::Translated));
        // A parameter named in prose is not the running command line.
        assert_eq!(mode("I added intel_iommu=off iommu=off in GRUB2"), None);
    }

    #[test]
    fn the_kernels_default_domain_wins() {
        let text = "Command line: BOOT_IMAGE=/vmlinuz ro intel_iommu=on\n\
                    [    0.353468] iommu: Default domain type: Passthrough (set via kernel command line)";
        assert_eq!(mode(text), Some(IommuMode::Passthrough));
        assert_eq!(mode("[    0.3] iommu: Default domain type: Translated"), Some(IommuMode::Translated));
        assert_eq!(mode("[    0.3] iommu: Default domain type: Blocked"), None);
        assert_eq!(mode("something else: Default domain type: Translated"), None, "not the iommu core's line");
    }

    #[test]
    fn an_iommu_on_or_a_remapping_fault_is_translation() {
        assert_eq!(mode("[    0.000000] DMAR: IOMMU enabled"), Some(IommuMode::Translated));
        assert_eq!(mode("[    1.05] pci 0000:00:00.2: AMD-Vi: Found IOMMU cap 0x40"), Some(IommuMode::Translated));
        assert_eq!(mode("AMD-Vi: AMD IOMMUv2 functionality not available on this system"), None);
        let fault = "DMAR: [DMA Write NO_PASID] Request device [41:00.0] fault addr 0xf8000000 [fault reason 0x05] PTE \
                     Write access is not set";
        assert_eq!(mode(fault), Some(IommuMode::Translated));
        // Passthrough asked, yet a device's DMA faulted: it was translated.
        assert_eq!(mode(&format!("Command line: ro iommu=pt\n{fault}")), Some(IommuMode::Translated));
    }

    /// The devices a remapping fault names, once each: Intel's requester (the module doc's line) and the device
    /// before AMD-Vi's event (NVIDIA/cuda-samples#48's form).
    #[test]
    fn the_faulting_devices_are_kept() {
        let text = "DMAR: [DMA Write NO_PASID] Request device [41:00.0] fault addr 0xf8000000 [fault reason 0x05] PTE \
                    Write access is not set\n\
                    DMAR: [DMA Write NO_PASID] Request device [41:00.0] fault addr 0xf8001000 [fault reason 0x05] PTE \
                    Write access is not set\n\
                    nvidia 0000:07:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x0003 address=0x80000040 flags=0x0020]\n";
        let iommu = Facts::read_by(read, text).iommu.expect("read");
        assert_eq!(iommu.fault_devices, ["41:00.0", "07:00.0"]);
        assert_eq!(fault_device("DMAR: [DMA Read] Request device [zz:00.0] fault"), None);
    }

    #[test]
    fn long_and_many_lines_stay_bounded() {
        let long = format!("Command line: {} intel_iommu=on", "x=1 ".repeat(100_000));
        let lines = vec![long; 50];
        let mut facts = Facts::default();
        read(&lines, &mut facts);
        let i = facts.iommu.unwrap();
        assert_eq!(i.evidence.len(), MAX_EVIDENCE);
        assert!(i.evidence.iter().all(|e| e.chars().count() <= MAX_LINE_CHARS + 1));
        // Cut anywhere: no panic.
        let text = "[    0.3] iommu: Default domain type: Translated (set via kernel command line)";
        for cut in 0..text.len() {
            let _ = mode(&text[..cut]);
        }
    }
}
