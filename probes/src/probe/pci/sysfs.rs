//! Small helpers for reading Linux sysfs through a [`Host`]: device folders and attributes.
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

/// What a PCI device's `numa_node` attribute says: `Ok(Some(node))`; `Ok(None)` when the kernel
/// gives the device no node (`-1`: one node, or the firmware does not say); `Err` with the trimmed
/// text when it is not a number. The one reader of this attribute (the topology and link probes,
/// the benchmark's worker placement). Source: Linux `Documentation/ABI/testing/sysfs-bus-pci`
/// (`numa_node`: "the NUMA node to which the PCI device is attached, or -1 if the node is unknown").
pub fn parse_numa_node(text: &str) -> Result<Option<u32>, String> {
    let t = text.trim();
    let node: i64 = t.parse().map_err(|_| t.to_owned())?;
    Ok(u32::try_from(node).ok())
}

/// The `numa_node` attribute of the device in sysfs folder `dir`, through the host: its text (for
/// traces) and the node it names (see [`parse_numa_node`]); `None` when it cannot be read.
pub fn read_numa_node(host: &dyn Host, dir: &Path) -> Option<(String, Option<u32>)> {
    let text = read_attr(host, dir, "numa_node").ok()?;
    let node = parse_numa_node(&text).ok().flatten();
    Some((text, node))
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
    fn numa_node_attributes() {
        assert_eq!(parse_numa_node("0\n"), Ok(Some(0)));
        assert_eq!(parse_numa_node(" 3 "), Ok(Some(3)));
        // -1: the kernel gives the device no node.
        assert_eq!(parse_numa_node("-1\n"), Ok(None));
        assert_eq!(parse_numa_node("4294967296"), Ok(None));
        for bad in ["", "node0", "1.5", "0x1", "99999999999999999999"] {
            assert_eq!(parse_numa_node(bad), Err(bad.trim().to_owned()), "{bad:?}");
        }
    }

    #[test]
    fn dot_dot_folds_lexically() {
        assert_eq!(normalize(Path::new("/sys/bus/pci/devices/../../../devices/x")), PathBuf::from("/sys/devices/x"));
    }
}
