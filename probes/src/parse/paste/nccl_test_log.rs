//! An NCCL test run that stopped before its first result: the GPUs it listed, its table header, no
//! result row after it and no closing average, where the text says in words that it stalled or hung.
//! NCCL's troubleshooting guide names the usual cause of collectives that hang between GPUs of one
//! machine on PCIe: ACS on the bridges, or the IOMMU, redirecting peer traffic to the root complex
//! (https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html).
//!
//! The two device-list forms and the header, at their sources:
//!
//! ```text
//! # Using devices
//! #   Rank  0 uses device  0 [0x02] Tesla P100-PCIE-16GB
//! #  Rank  0 Group  0 Pid  12345 on   hostname device  0 [0x1b] NVIDIA A100-SXM4-80GB
//! #       size         count      type   redop    root     time   algbw   busbw #wrong ...
//! # Avg bus bandwidth    : 10.2
//! ```
//!
//! NCCL 1.x's own tests (NVIDIA/nccl v1.3.4 test/single/all_reduce_test.cu: `#   Rank %2d uses
//! device %2d [0x%02x] %s`, then `# bytes N type op time algbw busbw delta …`); nccl-tests
//! (NVIDIA/nccl-tests src/common.cu: `#  Rank %2d Group %2d Pid %6d on %10s device %2d [<bus id>] %s`, the
//! `size count type redop root time algbw busbw #wrong` header, a row per size, then `# Avg bus
//! bandwidth`). A markdown post may lose the `#` to a heading or quote the lines with `>`, so the
//! leading `#` is optional. Sample (a thread that is not a corpus case): NVIDIA/nccl#85, an
//! all_reduce_test on two P100s that printed its header and stalled, which the maintainer first
//! asked to check ACS for.

use super::facts::Facts;
use gpu_doctor_model::StalledCollective;

const FORMAT: &str = "an NCCL test's output";

/// The most device lines read: more than one test lists for one machine.
const MAX_RANKS: usize = 64;

/// Words that say a run stopped making progress (matched at a word's start, case folded).
const STALLED: [&str; 7] = ["stall", "hang", "hung", "stuck", "freez", "froze", "deadlock"];

/// Reads the test's device list, header and results; records the run when it stopped before its
/// first result and the text says so.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    let mut devices: Vec<(usize, String)> = Vec::new();
    // The first rank's machine, and whether another rank named another one: two at most are kept.
    let mut host_seen: Option<String> = None;
    let mut several_hosts = false;
    let mut header = None;
    let mut setup = None;
    let mut rows = 0usize;
    let mut finished = false;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start().trim_start_matches('#').trim();
        if let Some(name) = device_line(t) {
            if devices.len() < MAX_RANKS {
                devices.push((i, name));
            }
            match (host(t), &host_seen) {
                (Some(h), None) => host_seen = Some(h.to_owned()),
                (Some(h), Some(first)) if h != first => several_hosts = true,
                _ => {}
            }
        } else if !devices.is_empty() && header.is_none() && is_header(t) {
            header = Some(i);
        } else if !devices.is_empty() && setup.is_none() && t.contains("NCCL INFO") {
            setup = Some(i);
        } else if header.is_some() && is_row(t) {
            rows += 1;
        } else if t.starts_with("Avg bus bandwidth") {
            finished = true;
        }
    }
    // The header comes once every communicator is set up; a run that hangs while NCCL sets them up
    // shows NCCL's own lines (NCCL_DEBUG=INFO) after the device list instead.
    let (Some(h), Some(&(first, _))) = (header.or(setup), devices.first()) else { return };
    // Ranks on several machines talk over the network, not over one machine's PCIe.
    if rows > 0 || finished || devices.len() < 2 || several_hosts {
        return;
    }
    let Some(words) = lines.iter().find(|l| says_stalled(l)) else { return };
    facts.saw(first, FORMAT);
    let mut names: Vec<String> = Vec::new();
    for (_, n) in &devices {
        if !names.contains(n) {
            names.push(n.clone());
        }
    }
    let ranks = u32::try_from(devices.len()).unwrap_or(u32::MAX);
    let squeeze = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    facts.stalled_collective = Some(StalledCollective {
        ranks,
        names,
        evidence: vec![squeeze(&lines[first]), squeeze(&lines[h]), squeeze(words)],
    });
}

/// `Rank  0 uses device  0 [0x05] Tesla M40 24GB` or `Rank  0 Group  0 Pid 123 on host device  0
/// [0x1b] NVIDIA A100`: the GPU's name.
fn device_line(t: &str) -> Option<String> {
    let rest = t.strip_prefix("Rank ")?;
    let (_, after) = rest.split_once(" device ")?;
    let (index, after) = after.trim_start().split_once(' ')?;
    if !index.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (_, name) = after.trim_start().strip_prefix('[')?.split_once(']')?;
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_owned())
}

/// The machine of an nccl-tests device line (`Pid 123 on host device`), where it names one.
fn host(t: &str) -> Option<&str> {
    let (_, after) = t.split_once(" on ")?;
    let (host, _) = after.split_once(" device ")?;
    Some(host.trim()).filter(|h| !h.is_empty())
}

/// The table's column header: both bandwidth columns and a time column.
fn is_header(t: &str) -> bool {
    let words: Vec<&str> = t.split_whitespace().collect();
    ["algbw", "busbw", "time"].iter().all(|w| words.contains(w))
}

/// A result row: a size in bytes, then at least six more cells.
fn is_row(t: &str) -> bool {
    let mut words = t.split_whitespace();
    words.next().is_some_and(|w| w.bytes().all(|b| b.is_ascii_digit())) && words.count() >= 6
}

/// Whether a line says in words that the run stalled or hung.
fn says_stalled(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    lower.split(|c: char| !c.is_ascii_alphabetic()).any(|w| STALLED.iter().any(|s| w.starts_with(s)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn both_device_line_forms_give_the_name() {
        assert_eq!(
            device_line("Rank  0 uses device  0 [0x02] Tesla P100-PCIE-16GB").as_deref(),
            Some("Tesla P100-PCIE-16GB")
        );
        assert_eq!(
            device_line("Rank  1 Group  0 Pid  40001 on   node-a device  1 [0000:48:00] NVIDIA H100 80GB HBM3")
                .as_deref(),
            Some("NVIDIA H100 80GB HBM3")
        );
        assert_eq!(device_line("Rank 0 uses device x [0x02] Tesla"), None);
        assert_eq!(device_line("Ranking the devices [0x02] by speed"), None);
    }

    #[test]
    fn a_word_that_only_contains_hang_is_not_a_stall() {
        assert!(says_stalled("it will be stalled."));
        assert!(says_stalled("The test hangs forever"));
        assert!(!says_stalled("we changed the driver"));
        assert!(!says_stalled("Shanghai node"));
    }
}
