//! `PciBusId`: a PCI address in one spelling, whoever wrote it.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// A PCI bus id in sysfs form: `domain:bus:device.function`, lowercase, with a 4-digit domain
/// (`0000:01:00.0`); a VMD domain wider than 16 bits keeps its digits (`10000:e0:06.0`).
///
/// NVML and nvidia-smi write `00000000:01:00.0`, CUDA `0000:3B:00.0`, sysfs `0000:3b:00.0`, some
/// tools `01:00.0`: every one parses to the same value, so two ids compare equal exactly when
/// they name the same device.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PciBusId(String);

/// Why a text is not a PCI bus id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a PCI bus id (domain:bus:device.function, e.g. 0000:01:00.0): {text:?}")]
pub struct PciBusIdError {
    /// The text, trimmed and cut to 40 characters.
    pub text: String,
}

impl PciBusId {
    /// Parses any of the spellings above; surrounding whitespace is ignored.
    pub fn parse(text: &str) -> Result<Self, PciBusIdError> {
        let t = text.trim().to_ascii_lowercase();
        let error = || PciBusIdError { text: text.trim().chars().take(40).collect() };
        let parts: Vec<&str> = t.split(':').collect();
        let (domain, bus, devfn) = match parts.as_slice() {
            [bus, devfn] => ("0000", *bus, *devfn),
            [domain, bus, devfn] => (*domain, *bus, *devfn),
            _ => return Err(error()),
        };
        let (dev, func) = devfn.split_once('.').ok_or_else(error)?;
        let hex = |p: &str, len: std::ops::RangeInclusive<usize>| {
            len.contains(&p.len()) && p.chars().all(|c| c.is_ascii_hexdigit())
        };
        let function_ok = func.len() == 1 && func.chars().all(|c| ('0'..='7').contains(&c));
        if !(hex(domain, 4..=8) && hex(bus, 2..=2) && hex(dev, 2..=2) && function_ok) {
            return Err(error());
        }
        // NVML pads the domain to eight digits; the zeros it adds are not part of the address.
        let domain = domain.trim_start_matches('0');
        let domain = if domain.len() <= 4 { format!("{domain:0>4}") } else { domain.to_owned() };
        Ok(Self(format!("{domain}:{bus}:{dev}.{func}")))
    }

    /// Any of the spellings above rewritten in sysfs form; `None` when the text is not a bus id.
    pub fn sysfs_form(text: &str) -> Option<String> {
        Self::parse(text).ok().map(String::from)
    }

    /// The sysfs form, e.g. `0000:01:00.0`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True when both texts are bus ids of the same device; false when either is not a bus id.
    pub fn same(a: &str, b: &str) -> bool {
        matches!((Self::parse(a), Self::parse(b)), (Ok(a), Ok(b)) if a == b)
    }

    /// The bus ids named in a sysfs device path, in order from the root port down, e.g.
    /// `/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0` gives `0000:00:01.0`, `0000:01:00.0`.
    pub fn all_in_path(path: &Path) -> Vec<Self> {
        path.components().filter_map(|c| c.as_os_str().to_str()).filter_map(|c| Self::parse(c).ok()).collect()
    }
}

impl FromStr for PciBusId {
    type Err = PciBusIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Display for PciBusId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<PciBusId> for String {
    fn from(id: PciBusId) -> Self {
        id.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Option<String> {
        PciBusId::sysfs_form(text)
    }

    /// The spellings of `../shared/fixtures` (nvidia-smi XML, table and CSV: `00000000:2D:00.0`),
    /// sysfs, CUDA's `cudaDeviceGetPCIBusId` and `lspci`.
    #[test]
    fn every_real_spelling_gives_the_sysfs_form() {
        assert_eq!(parsed("00000000:2D:00.0").as_deref(), Some("0000:2d:00.0"));
        assert_eq!(parsed("00000000:01:00.0").as_deref(), Some("0000:01:00.0"));
        assert_eq!(parsed("0000:3B:00.0").as_deref(), Some("0000:3b:00.0"));
        assert_eq!(parsed("0000:0a:00.0\n").as_deref(), Some("0000:0a:00.0"));
        assert_eq!(parsed("01:00.0").as_deref(), Some("0000:01:00.0"));
        assert_eq!(parsed("00000001:01:00.0").as_deref(), Some("0001:01:00.0"));
        assert_eq!(parsed("10000:e0:06.0").as_deref(), Some("10000:e0:06.0"), "a VMD domain keeps its digits");
        assert_eq!(parsed("00010000:E0:06.0").as_deref(), Some("10000:e0:06.0"));
        assert!(PciBusId::same("00000000:C1:00.0", "0000:c1:00.0"));
        assert!(!PciBusId::same("00000000:01:00.0", "0000:02:00.0"));
        assert!(!PciBusId::same("N/A", "N/A"), "two texts that are not bus ids name no device");
    }

    #[test]
    fn malformed_text_is_an_error() {
        let bad = [
            "",
            "N/A",
            "0000:01:00",
            "0000:01:00.9",
            "gpu0",
            ":::",
            "0000:1:00.0",
            "000:01:00.0",
            "000000000:01:00.0",
            "0000:01:00.0.0",
            "0000:01:0g.0",
            "0000:01:00.",
            "0000:01:00.00",
            "é:01:00.0",
            "0000:01:00.0:1",
        ];
        for text in bad {
            assert!(PciBusId::parse(text).is_err(), "{text:?}");
        }
        let long = "x".repeat(100);
        assert_eq!(PciBusId::parse(&long).unwrap_err().text.chars().count(), 40);
    }

    proptest::proptest! {
        /// Any text parses or is an error, never a panic; what parses is already in sysfs form.
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,40}", shaped in "[0-9a-fA-F]{0,9}:[0-9a-fA-F]{0,3}:[0-9a-fA-F]{0,3}\\.[0-9]{0,2}") {
            for t in [text.as_str(), shaped.as_str()] {
                if let Ok(id) = PciBusId::parse(t) {
                    proptest::prop_assert_eq!(PciBusId::parse(id.as_str()), Ok(id.clone()));
                    proptest::prop_assert_eq!(id.as_str(), id.as_str().to_ascii_lowercase());
                }
            }
        }
    }

    #[test]
    fn device_paths_name_their_bus_ids_in_order() {
        let p = Path::new("/sys/devices/pci0000:00/0000:00:1c.4/0000:05:00.0/0000:06:01.0/0000:07:00.0/0000:08:00.0");
        let ids: Vec<String> = PciBusId::all_in_path(p).into_iter().map(String::from).collect();
        assert_eq!(ids, ["0000:00:1c.4", "0000:05:00.0", "0000:06:01.0", "0000:07:00.0", "0000:08:00.0"]);
        assert!(PciBusId::all_in_path(Path::new("/sys/devices/platform/foo")).is_empty());
    }
}
