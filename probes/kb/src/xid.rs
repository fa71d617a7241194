//! `xid.toml`: what each Xid number the NVIDIA driver logs means, and what to do about it.

use serde::Deserialize;

use super::Tag;

/// `xid.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct XidTable {
    /// One row per Xid, sorted by number.
    pub xid: Vec<XidRow>,
}

/// One Xid: NVIDIA's catalog columns, and what gpu-doctor tells the user.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct XidRow {
    /// The number the driver logs, e.g. 79.
    pub xid: u32,
    /// NVIDIA's mnemonic, e.g. `ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS`.
    pub mnemonic: String,
    /// NVIDIA's description, e.g. `GPU has fallen off the bus`.
    pub name: String,
    /// NVIDIA's immediate action bucket, e.g. `RESET_GPU`, `RESTART_BM`.
    pub nvidia_action: String,
    /// How bad it is for the machine.
    pub severity: XidSeverity,
    /// What usually causes it, one or two sentences.
    pub cause: String,
    /// What to do.
    pub fix: String,
    /// Where the row was read: a URL.
    pub source: String,
    /// A second source for the cause or the fix; `None` when `source` says it all.
    #[serde(default)]
    pub also: Option<String>,
    /// Confidence.
    pub tag: Tag,
}

/// How bad an Xid is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum XidSeverity {
    /// The GPU or its connection failed: it needs a reset, a reboot or hardware work.
    Error,
    /// A program's fault (the GPU is fine), or a sign to watch.
    Warning,
    /// A record of an event another check judges.
    Info,
}

impl XidTable {
    /// The row of Xid `xid`; `None` when the table does not list it.
    pub fn get(&self, xid: u32) -> Option<&XidRow> {
        self.xid.iter().find(|r| r.xid == xid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Kb;

    fn table() -> &'static XidTable {
        &Kb::get().unwrap_or_else(|e| panic!("{e}")).xid
    }

    #[test]
    fn rows_are_sorted_unique_and_sourced() {
        let rows = &table().xid;
        assert!(rows.windows(2).all(|w| w[0].xid < w[1].xid), "sorted by xid, no duplicates");
        for r in rows {
            assert!(r.source.starts_with("https://"), "Xid {} has no source URL", r.xid);
            assert!(r.also.as_deref().is_none_or(|a| a.starts_with("https://")), "Xid {}", r.xid);
            for text in [&r.mnemonic, &r.name, &r.nvidia_action, &r.cause, &r.fix] {
                assert!(!text.trim().is_empty(), "Xid {} has an empty column", r.xid);
            }
        }
    }

    #[test]
    fn the_xids_people_meet_are_explained() {
        for xid in [13, 31, 32, 43, 45, 48, 61, 62, 63, 64, 68, 69, 74, 79, 92, 94, 95, 119, 120] {
            assert!(table().get(xid).is_some(), "Xid {xid} is not in xid.toml");
        }
        let fell_off = table().get(79).map(|r| (r.name.as_str(), r.severity));
        assert_eq!(fell_off, Some(("GPU has fallen off the bus", XidSeverity::Error)));
        assert_eq!(table().get(13).map(|r| r.severity), Some(XidSeverity::Warning), "an application's fault");
        assert!(table().get(1).is_none());
    }

    #[test]
    fn a_row_without_a_source_does_not_load() {
        let text = "[[xid]]\nxid = 1\nmnemonic = \"M\"\nname = \"N\"\nnvidia_action = \"IGNORE\"\nseverity = \"info\"\n\
                    cause = \"c\"\nfix = \"f\"\ntag = \"P\"\n";
        assert!(toml::from_str::<XidTable>(text).is_err());
    }
}
