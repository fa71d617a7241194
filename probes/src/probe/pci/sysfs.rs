//! Small helpers for reading Linux sysfs through a [`Host`]: device folders, attributes, bus ids.
//!
//! Paths are resolved lexically here (read the link, join it to the link's folder, fold `..`), so
//! the probes work the same on a live machine and on a replayed fixture.

use std::path::{Path, PathBuf};

use crate::host::{Host, HostError};

/// The folder that lists every PCI device as a symlink named by its bus id.
pub const PCI_DEVICES: &str = "/sys/bus/pci/devices";

pub use crate::host::paths::normalize;

/// Where `dir/name` really lives: the target of the symlink, resolved against `dir`, or
/// `dir/name` itself when it is not a symlink (or the link cannot be read).
pub fn resolve(host: &dyn Host, dir: &Path, name: &str) -> PathBuf {
    let link = dir.join(name);
    match host.read_link(&link) {
        Ok(target) if target.is_absolute() => normalize(&target),
        Ok(target) => normalize(&dir.join(target)),
        Err(_) => link,
    }
}

/// The real sysfs folder of the PCI device `bus_id` (sysfs form, `0000:01:00.0`), under
/// `/sys/devices/pci…`; `/sys/bus/pci/devices/<bus_id>` when the link cannot be read.
pub fn device_dir(host: &dyn Host, bus_id: &str) -> PathBuf {
    resolve(host, Path::new(PCI_DEVICES), bus_id)
}

/// One sysfs attribute, trimmed of surrounding whitespace and the trailing newline.
pub fn read_attr(host: &dyn Host, dir: &Path, name: &str) -> Result<String, HostError> {
    host.read_file(&dir.join(name)).map(|s| s.trim().to_owned())
}

/// Parses a sysfs hex number such as `0x10de` or `0x030000`; `None` for anything else.
pub fn parse_hex(text: &str) -> Option<u32> {
    let t = text.trim();
    let digits = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X"))?;
    if digits.is_empty() || digits.len() > 8 {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

/// Parses a sysfs hex number that must fit 16 bits (vendor and device ids).
pub fn parse_hex_u16(text: &str) -> Option<u16> {
    parse_hex(text).and_then(|v| u16::try_from(v).ok())
}

/// True when `s` has the shape of a PCI bus id: `DDDD:BB:DD.F` (a VMD domain may have 5+ digits).
pub fn is_bus_id(s: &str) -> bool {
    let mut parts = s.split(':');
    let (Some(domain), Some(bus), Some(devfn), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let hex =
        |p: &str, n: std::ops::RangeInclusive<usize>| n.contains(&p.len()) && p.chars().all(|c| c.is_ascii_hexdigit());
    let Some((dev, func)) = devfn.split_once('.') else { return false };
    hex(domain, 4..=8)
        && hex(bus, 2..=2)
        && hex(dev, 2..=2)
        && func.len() == 1
        && func.chars().all(|c| ('0'..='7').contains(&c))
}

/// The bus ids named in a sysfs device path, in order from the root port down.
pub fn bus_ids_in(path: &Path) -> Vec<String> {
    path.components()
        .filter_map(|c| c.as_os_str().to_str())
        .filter(|c| is_bus_id(c))
        .map(|c| c.to_lowercase())
        .collect()
}

/// A bus id in sysfs form: lowercase, with a 4-digit domain. NVML writes `00000000:01:00.0`,
/// sysfs `0000:01:00.0`, some tools `01:00.0`; all three give `0000:01:00.0`.
/// `None` when the text is not a bus id.
pub fn normalize_bus_id(text: &str) -> Option<String> {
    let t = text.trim().to_lowercase();
    let parts: Vec<&str> = t.split(':').collect();
    let candidate = match parts.as_slice() {
        [bus, devfn] => format!("0000:{bus}:{devfn}"),
        [domain, bus, devfn] => {
            let keep = domain.len().saturating_sub(4);
            let tail = domain.get(keep..)?;
            let head = domain.get(..keep)?;
            // A long domain keeps its last four digits only when the rest is zeros (NVML's padding).
            if !head.chars().all(|c| c == '0') {
                return is_bus_id(&t).then_some(t.clone());
            }
            format!("{tail}:{bus}:{devfn}")
        }
        _ => return None,
    };
    is_bus_id(&candidate).then_some(candidate)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn hex_attributes_parse_and_garbage_does_not() {
        assert_eq!(parse_hex("0x10de\n"), Some(0x10de));
        assert_eq!(parse_hex("0x030200"), Some(0x030200));
        assert_eq!(parse_hex_u16("0x2684"), Some(0x2684));
        for bad in ["", "0x", "10de", "0xzz", "0x123456789", "nvidia", "\u{0}"] {
            assert_eq!(parse_hex(bad), None, "{bad:?}");
        }
        assert_eq!(parse_hex_u16("0x10000"), None);
    }

    #[test]
    fn bus_ids_normalize_from_every_form() {
        assert_eq!(normalize_bus_id("00000000:01:00.0").as_deref(), Some("0000:01:00.0"));
        assert_eq!(normalize_bus_id("0000:0A:00.0").as_deref(), Some("0000:0a:00.0"));
        assert_eq!(normalize_bus_id("01:00.0").as_deref(), Some("0000:01:00.0"));
        assert_eq!(normalize_bus_id("10000:e0:06.0").as_deref(), Some("10000:e0:06.0"));
        for bad in ["", "N/A", "0000:01:00", "0000:01:00.9", "gpu0", ":::", "0000:1:00.0"] {
            assert_eq!(normalize_bus_id(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn device_paths_name_their_bus_ids_in_order() {
        let p = Path::new("/sys/devices/pci0000:00/0000:00:1c.4/0000:05:00.0/0000:06:01.0/0000:07:00.0/0000:08:00.0");
        assert_eq!(bus_ids_in(p), ["0000:00:1c.4", "0000:05:00.0", "0000:06:01.0", "0000:07:00.0", "0000:08:00.0"]);
        assert!(bus_ids_in(Path::new("/sys/devices/platform/foo")).is_empty());
        assert_eq!(normalize(Path::new("/sys/bus/pci/devices/../../../devices/x")), PathBuf::from("/sys/devices/x"));
    }
}
