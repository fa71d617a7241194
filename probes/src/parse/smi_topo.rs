//! `nvidia-smi topo -m` (the link matrix with CPU and NUMA affinity), `nvidia-smi topo -p2p r|w|a`
//! (the peer-to-peer matrix), `nvidia-smi -L` (GPUs with their MIG devices), `nvidia-smi nvlink
//! -s` (each GPU's links, up or down) and `nvidia-smi nvlink -e` (each link's error counters).
//!
//! The matrices are read by whitespace, which covers the tab-separated output of current drivers and
//! the space-aligned one of older drivers and of copies from a terminal. Columns that are not GPUs
//! (`NIC0`, `mlx5_0`) are skipped, as are the legends. Samples with their sources:
//! `tests/data/smi_topo/SOURCES.md`.

use std::collections::BTreeMap;

use super::ParseError;
use gpu_doctor_model::{LinkKind, MigInstance, NvLink, NvLinkErrors, P2pStatus};

const TOPO: &str = "nvidia-smi topo -m";
const P2P: &str = "nvidia-smi topo -p2p";
const LIST: &str = "nvidia-smi -L";
const NVLINK: &str = "nvidia-smi nvlink -s";
const NVLINK_ERRORS: &str = "nvidia-smi nvlink -e";

/// One GPU row of `nvidia-smi topo -m`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopoRow {
    /// `GPU<n>`'s n.
    pub index: u32,
    /// The link to each other GPU by its index (`X`, self, left out; a cell that is not a link label
    /// left out too).
    pub links: BTreeMap<u32, LinkKind>,
    /// The `CPU Affinity` cell (`0-55,112-167`); `None` when absent or `N/A`.
    pub cpu_affinity: Option<String>,
    /// The `NUMA Affinity` cell when it is one node (`0`); `None` when absent, `N/A` or several.
    pub numa_node: Option<u32>,
}

/// The matrix's GPU rows, in the order printed.
pub fn parse_topo(text: &str) -> Result<Vec<TopoRow>, ParseError> {
    let (header, columns, rows) = matrix(text, TOPO)?;
    let extras: Vec<&str> =
        ["CPU Affinity", "NUMA Affinity", "GPU NUMA ID"].into_iter().filter(|name| header.contains(name)).collect();
    let mut out = Vec::new();
    for (index, cells) in rows {
        let mut links = BTreeMap::new();
        for (col, cell) in columns.iter().zip(&cells) {
            if let (Some(other), Some(kind)) = (col, LinkKind::from_label(cell)) {
                links.insert(*other, kind);
            }
        }
        let rest: Vec<&str> = cells.iter().skip(columns.len()).map(String::as_str).collect();
        let extra = |name: &str| {
            let at = extras.iter().position(|e| *e == name)?;
            rest.get(at).copied().filter(|v| *v != "N/A")
        };
        out.push(TopoRow {
            index,
            links,
            cpu_affinity: extra("CPU Affinity").filter(|v| is_cpu_list(v)).map(str::to_owned),
            numa_node: extra("NUMA Affinity").and_then(|v| v.parse().ok()),
        });
    }
    Ok(out)
}

/// `topo -p2p`'s cells: (row GPU, column GPU) → status, self left out.
pub fn parse_p2p(text: &str) -> Result<BTreeMap<(u32, u32), P2pStatus>, ParseError> {
    let (_, columns, rows) = matrix(text, P2P)?;
    let mut out = BTreeMap::new();
    for (index, cells) in rows {
        for (col, cell) in columns.iter().zip(&cells) {
            if let (Some(other), Some(status)) = (col, P2pStatus::from_code(cell)) {
                out.insert((index, *other), status);
            }
        }
    }
    if out.is_empty() {
        return Err(ParseError::new(P2P, "no cell between two GPUs holds a status"));
    }
    Ok(out)
}

/// One GPU of `nvidia-smi -L`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedGpu {
    /// Its index.
    pub index: u32,
    /// Product name.
    pub name: String,
    /// `GPU-…` UUID, when printed.
    pub uuid: Option<String>,
    /// Its MIG devices, in the order printed.
    pub mig: Vec<MigInstance>,
}

/// `GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-…)` lines and the `MIG 1g.10gb Device 0: (UUID: MIG-…)`
/// lines under them.
pub fn parse_list(text: &str) -> Result<Vec<ListedGpu>, ParseError> {
    let mut out: Vec<ListedGpu> = Vec::new();
    for line in text.lines().map(str::trim) {
        let uuid = line
            .split_once("(UUID: ")
            .and_then(|(_, rest)| rest.split_once(')'))
            .map(|(u, _)| u.trim().to_owned())
            .filter(|u| !u.is_empty());
        if let Some(rest) = line.strip_prefix("GPU ")
            && let Some((index, rest)) = rest.split_once(':')
            && let Ok(index) = index.trim().parse()
        {
            let name = rest.split_once("(UUID:").map_or(rest, |(n, _)| n).trim().to_owned();
            out.push(ListedGpu { index, name, uuid, mig: Vec::new() });
        } else if let Some(rest) = line.strip_prefix("MIG ")
            && let Some((profile, rest)) = rest.split_once("Device")
            && let Some((device, _)) = rest.split_once(':')
            && let Ok(device) = device.trim().parse()
            && let Some(gpu) = out.last_mut()
        {
            let profile = Some(profile.trim().to_owned()).filter(|p| !p.is_empty());
            gpu.mig.push(MigInstance { device, profile, uuid });
        }
    }
    if out.is_empty() {
        return Err(ParseError::new(LIST, "no `GPU <n>: <name>` line"));
    }
    Ok(out)
}

/// One GPU of `nvidia-smi nvlink -s`: its `GPU <n>: <name> (UUID: …)` line and the state of each
/// link under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvlinkStatus {
    /// The GPU, as its line names it (no MIG devices).
    pub gpu: ListedGpu,
    /// Its links in the order printed: `Link 0: 26.562 GB/s` is up, `Link 3: <inactive>` down.
    pub links: Vec<NvLink>,
}

/// The most links read under one GPU: more than any GPU has (18 on Hopper and Blackwell).
const MAX_LINKS: usize = 64;
/// The most GPU lines `nvlink -s` is read for: more than any machine has.
const MAX_NVLINK_GPUS: usize = 1024;

/// `nvidia-smi nvlink -s` (`--status`): each `GPU <n>: …` line and the `Link <n>: <speed> GB/s` or
/// `Link <n>: <inactive>` lines under it. Other `Link <n>:` lines (`nvlink -e`'s `Link 0: Replay
/// Errors: 0`, `-c`'s `Link 0, P2P is supported: true`) are not states and are skipped. Errs when
/// no GPU has a state line.
pub fn parse_nvlink_status(text: &str) -> Result<Vec<NvlinkStatus>, ParseError> {
    let mut out: Vec<NvlinkStatus> = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(gpu) = gpu_line(line) {
            if out.len() >= MAX_NVLINK_GPUS {
                break;
            }
            out.push(NvlinkStatus { gpu, links: Vec::new() });
        } else if let Some((link, active)) = link_state(line)
            && let Some(g) = out.last_mut()
            && g.links.len() < MAX_LINKS
            && !g.links.iter().any(|l| l.link == link)
        {
            g.links.push(NvLink { link, active, version: None, remote_bus_id: None });
        }
    }
    out.retain(|g| !g.links.is_empty());
    if out.is_empty() {
        return Err(ParseError::new(NVLINK, "no `Link <n>: <speed> GB/s` or `<inactive>` line under a GPU line"));
    }
    Ok(out)
}

/// One GPU of `nvidia-smi nvlink -e`: its `GPU <n>: <name>` line and each link's error counters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvlinkErrorCounts {
    /// The GPU, as its line names it (no MIG devices).
    pub gpu: ListedGpu,
    /// Its links' counters, in the order first printed.
    pub links: Vec<NvLinkErrors>,
}

/// Each GPU's NVLink error counters from `nvidia-smi nvlink -e` (`--errorcounters`):
///
/// ```text
/// GPU 0: NVIDIA GB300
///      Link 0: Replay Errors: 0
///      Link 0: Recovery Errors: 0
///      Link 0: CRC Errors: 0
/// ```
///
/// One line per counter, as nvidia-smi prints NVML's `nvmlDeviceGetNvLinkErrorCounter` counters
/// (`NVML_NVLINK_ERROR_DL_REPLAY`, `_DL_RECOVERY`, `_DL_CRC_FLIT`); other counters and values that
/// are not numbers (`N/A`) are skipped. GPUs with no counter read are left out; an error when none has any.
pub fn parse_nvlink_errors(text: &str) -> Result<Vec<NvlinkErrorCounts>, ParseError> {
    let mut out: Vec<NvlinkErrorCounts> = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(gpu) = gpu_line(line) {
            if out.len() >= MAX_NVLINK_GPUS {
                break;
            }
            out.push(NvlinkErrorCounts { gpu, links: Vec::new() });
        } else if let Some((link, counter, value)) = error_counter(line)
            && let Some(g) = out.last_mut()
        {
            let at = match g.links.iter().position(|l| l.link == link) {
                Some(at) => at,
                None if g.links.len() < MAX_LINKS => {
                    g.links.push(NvLinkErrors { link, replay: None, recovery: None, crc: None });
                    g.links.len() - 1
                }
                None => continue,
            };
            let l = &mut g.links[at];
            let slot = match counter {
                Counter::Replay => &mut l.replay,
                Counter::Recovery => &mut l.recovery,
                Counter::Crc => &mut l.crc,
            };
            slot.get_or_insert(value);
        }
    }
    out.retain(|g| !g.links.is_empty());
    if out.is_empty() {
        return Err(ParseError::new(NVLINK_ERRORS, "no `Link <n>: Replay Errors: <count>` line under a GPU line"));
    }
    Ok(out)
}

/// The counters of `nvidia-smi nvlink -e` that the rules read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Counter {
    Replay,
    Recovery,
    Crc,
}

/// `Link 2: Replay Errors: 7` → (2, replay, 7); anything else `None`.
fn error_counter(line: &str) -> Option<(u32, Counter, u64)> {
    let (link, rest) = line.strip_prefix("Link ")?.split_once(':')?;
    let link = link.trim().parse().ok()?;
    let (name, value) = rest.split_once(':')?;
    let counter = match name.trim() {
        "Replay Errors" => Counter::Replay,
        "Recovery Errors" => Counter::Recovery,
        "CRC Errors" => Counter::Crc,
        _ => return None,
    };
    Some((link, counter, value.trim().parse().ok()?))
}

/// `Link 3: 25.781 GB/s` → (3, up); `Link 5: <inactive>` → (5, down); anything else `None`.
fn link_state(line: &str) -> Option<(u32, bool)> {
    let (link, value) = line.strip_prefix("Link ")?.split_once(':')?;
    let link = link.trim().parse().ok()?;
    let value = value.trim();
    let inactive = value.trim_start_matches('<').trim_end_matches('>');
    if inactive.eq_ignore_ascii_case("inactive") {
        return Some((link, false));
    }
    let speed = value.strip_suffix("GB/s")?.trim().parse::<f64>().ok()?;
    Some((link, speed > 0.0))
}

/// `GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-…)`, as `nvidia-smi -L` and `nvlink` print it.
fn gpu_line(line: &str) -> Option<ListedGpu> {
    let (index, rest) = line.strip_prefix("GPU ")?.split_once(':')?;
    let index = index.trim().parse().ok()?;
    let uuid = rest
        .split_once("(UUID: ")
        .and_then(|(_, r)| r.split_once(')'))
        .map(|(u, _)| u.trim().to_owned())
        .filter(|u| !u.is_empty());
    let name = rest.split_once("(UUID:").map_or(rest, |(n, _)| n).trim().to_owned();
    Some(ListedGpu { index, name, uuid, mig: Vec::new() })
}

/// `GPU12` → 12.
fn gpu_label(s: &str) -> Option<u32> {
    s.strip_prefix("GPU")?.parse().ok()
}

/// `0-55,112-167`, `6,14,22,30`, `0`: digits, commas and dashes only.
fn is_cpu_list(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == ',' || c == '-')
}

/// The header line, the GPU index of each matrix column (`None` for a NIC), and each GPU row's
/// cells after its label.
type Matrix = (String, Vec<Option<u32>>, Vec<(u32, Vec<String>)>);

fn matrix(text: &str, format: &'static str) -> Result<Matrix, ParseError> {
    let mut lines = text.lines();
    let header = lines
        .by_ref()
        .find(|l| {
            let mut t = l.split_whitespace();
            t.next().and_then(gpu_label) == Some(0) && t.next() != Some("X")
        })
        .ok_or_else(|| ParseError::new(format, "no header line starting with GPU0"))?;
    // Matrix columns end where the affinity columns start.
    let columns: Vec<Option<u32>> =
        header.split_whitespace().take_while(|t| *t != "CPU" && *t != "NUMA").map(gpu_label).collect();
    let mut rows = Vec::new();
    for line in lines {
        let mut cells = line.split_whitespace();
        let Some(index) = cells.next().and_then(gpu_label) else {
            if line.trim_start().starts_with("Legend") {
                break;
            }
            continue;
        };
        if rows.iter().any(|(i, _)| *i == index) {
            break;
        }
        rows.push((index, cells.map(str::to_owned).collect()));
    }
    if rows.is_empty() {
        return Err(ParseError::new(format, "no GPU row under the header"));
    }
    Ok((header.to_owned(), columns, rows))
}

pub mod paste;
#[cfg(test)]
mod tests;
