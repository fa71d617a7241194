//! `nvidia-smi topo -m`, `nvidia-smi topo -p2p r|w|a`, `nvidia-smi nvlink -s` and `-e` (and `nvidia-smi -L`'s
//! MIG lines) in pasted text, for `diagnose --from`: the pairs, NUMA and CPU affinity, each pair's
//! peer-to-peer status, each GPU's NVLinks up or down and their error counters;
//! the GPUs' names, capabilities and UUIDs from the rest of the paste where it has them, and the
//! CUDA order from its variables.
//!
//! A paste may hold several matrices (the link matrix, then a `-p2p` matrix per capability): each
//! header line (`GPU0 GPU1 …`) starts one, which runs to the next. A matrix whose cells are status
//! codes (`OK`, `CNS`, `GNS`, …) is a `-p2p` one; nvidia-smi prints the same legend for every
//! capability, so which one it answers is read from the command named in the lines just before it
//! (`$ nvidia-smi topo -p2p r`, `nvidia-smi --p2pstatus w`, a heading `(topo -p2p rw)`; each letter
//! of the argument is a capability, as people type `rw` for both). A `-p2p` matrix with no command
//! before it is left unread, and a note says so.

use std::collections::{BTreeMap, BTreeSet};

use super::{parse_list, parse_nvlink_errors, parse_nvlink_status, parse_p2p, parse_topo};
use gpu_doctor_model::{CudaOrder, GpuPair, LinkKind, MigFacts, P2pStatus, TopoGpu, Topology};
use gpu_doctor_model::{Origin, Probed, Snapshot};

/// The format name recorded for the link matrix.
pub const FORMAT: &str = "nvidia-smi topo -m";
/// The format name recorded for a peer-to-peer matrix.
pub const P2P_FORMAT: &str = "nvidia-smi topo -p2p";
/// The format name recorded for NVLink states.
pub const NVLINK_FORMAT: &str = "nvidia-smi nvlink -s";
/// The format name recorded for NVLink error counters.
pub const NVLINK_ERRORS_FORMAT: &str = "nvidia-smi nvlink -e";
/// The format name recorded when `numactl -H` gave a GPU its NUMA node.
pub const NUMACTL_FORMAT: &str = "numactl -H";

/// The most GPUs whose NVLink states are read: more than any machine has, few enough that finding
/// each among the matrices' GPUs stays quick.
const MAX_NVLINK_GPUS: usize = 256;

/// How many lines before a `-p2p` matrix's header are searched for the command that printed it.
const COMMAND_LINES: usize = 16;

/// The most matrices read from one paste: a machine's link matrix and its five `-p2p` capabilities,
/// pasted a few times over. Each is parsed once, so the cost stays in proportion to the text.
const MAX_MATRICES: usize = 32;

/// What the paste's matrices say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pasted {
    /// The topology they describe; `None` when no matrix could be read (only notes).
    pub topology: Option<Topology>,
    /// The formats read, in the order first seen.
    pub formats: Vec<&'static str>,
    /// What was seen but not read, one sentence each (the snapshot's notes).
    pub notes: Vec<String>,
}

/// What the lines' matrices show: the topology, when they hold a `topo -m` matrix, a `-p2p` matrix
/// whose capability the text names or `nvlink -s` states; `None` when they hold none of these.
pub fn read(lines: &[String]) -> Option<Pasted> {
    let mut link_rows = None;
    let mut p2p: BTreeMap<char, BTreeMap<(u32, u32), P2pStatus>> = BTreeMap::new();
    let mut formats = Vec::new();
    let mut notes = Vec::new();
    let starts: Vec<usize> = (0..lines.len()).filter(|i| is_header(&lines[*i])).take(MAX_MATRICES).collect();
    for (n, start) in starts.iter().enumerate() {
        let end = starts.get(n + 1).copied().unwrap_or(lines.len());
        let block = lines[*start..end].join("\n");
        if let Ok(cells) = parse_p2p(&block) {
            let from = n.checked_sub(1).map_or(0, |p| starts[p] + 1).max(start.saturating_sub(COMMAND_LINES));
            let kinds = p2p_kinds(&lines[from..*start]);
            // NVLink (`n`) and PCIe (`p`) capabilities are no part of the model: seen, not needed.
            let read: Vec<char> = kinds.iter().copied().filter(|k| matches!(k, 'r' | 'w' | 'a')).collect();
            if read.is_empty() && !kinds.is_empty() {
                continue;
            }
            if read.is_empty() {
                notes.push(format!(
                    "the `nvidia-smi topo -p2p` matrix at line {} was not read: the text before it does not name the \
                     capability it answers (r, w or a); paste the command line with it",
                    start + 1
                ));
                continue;
            }
            for k in read {
                p2p.entry(k).or_insert_with(|| cells.clone());
            }
            if !formats.iter().any(|(_, f)| *f == P2P_FORMAT) {
                formats.push((*start, P2P_FORMAT));
            }
        } else if link_rows.is_none()
            && let Ok(rows) = parse_topo(&block)
            && rows.iter().any(|r| !r.links.is_empty() || r.cpu_affinity.is_some() || r.numa_node.is_some())
        {
            link_rows = Some(rows);
            formats.push((*start, FORMAT));
        }
    }
    let text = lines.join("\n");
    let nvlinks = parse_nvlink_status(&text).ok();
    if nvlinks.is_some() {
        let at = lines.iter().position(|l| l.trim_start().starts_with("Link ")).unwrap_or(0);
        formats.push((at, NVLINK_FORMAT));
    }
    let nvlink_errors = parse_nvlink_errors(&text).ok();
    if nvlink_errors.is_some() {
        let at = lines.iter().position(|l| l.contains(": Replay Errors:")).unwrap_or(0);
        formats.push((at, NVLINK_ERRORS_FORMAT));
    }
    formats.sort_by_key(|(at, _)| *at);
    let mut formats: Vec<&'static str> = formats.into_iter().map(|(_, f)| f).collect();
    if link_rows.is_none() && p2p.is_empty() && nvlinks.is_none() && nvlink_errors.is_none() {
        return (!notes.is_empty()).then_some(Pasted { topology: None, formats, notes });
    }
    let mut topo = Topology::default();
    if let Some(rows) = &link_rows {
        topo.gpus = rows
            .iter()
            .map(|r| TopoGpu { index: r.index, affinity_from: "none".to_owned(), ..TopoGpu::default() })
            .collect();
        crate::probe::topology::apply_rows(&mut topo, rows);
    }
    apply_p2p(&mut topo, &p2p);
    for status in nvlinks.into_iter().flatten().take(MAX_NVLINK_GPUS) {
        let g = gpu_entry(&mut topo, status.gpu.index);
        g.name = g.name.take().or(Some(status.gpu.name).filter(|n| !n.is_empty()));
        g.uuid = g.uuid.take().or(status.gpu.uuid.filter(|u| u.starts_with("GPU-")));
        g.nvlinks = status.links;
    }
    for counts in nvlink_errors.into_iter().flatten().take(MAX_NVLINK_GPUS) {
        let g = gpu_entry(&mut topo, counts.gpu.index);
        g.name = g.name.take().or(Some(counts.gpu.name).filter(|n| !n.is_empty()));
        g.uuid = g.uuid.take().or(counts.gpu.uuid.filter(|u| u.starts_with("GPU-")));
        g.nvlink_errors = counts.links;
    }
    topo.gpus.sort_by_key(|g| g.index);
    if numa_from_numactl(lines, &mut topo.gpus) {
        formats.push(NUMACTL_FORMAT);
    }
    if let Ok(listed) = parse_list(&text) {
        for l in listed.into_iter().filter(|l| !l.mig.is_empty()) {
            if let Some(g) = topo.gpus.iter_mut().find(|g| g.index == l.index) {
                g.mig = Some(MigFacts { enabled: true, instances: Some(l.mig) });
            }
        }
    }
    Some(Pasted { topology: Some(topo), formats, notes })
}

/// Sets each pair's read, write and atomics status from the `-p2p` matrices (the cell in the lower
/// index's row, else the other); a pair or GPU the link matrix did not list is added, its link
/// unknown.
/// The topology's GPU of driver index `index`, added (with no affinity) when the matrices did not list it.
fn gpu_entry(topo: &mut Topology, index: u32) -> &mut TopoGpu {
    let at = match topo.gpus.iter().position(|g| g.index == index) {
        Some(at) => at,
        None => {
            topo.gpus.push(TopoGpu { index, affinity_from: "none".to_owned(), ..TopoGpu::default() });
            topo.gpus.len() - 1
        }
    };
    &mut topo.gpus[at]
}

fn apply_p2p(topo: &mut Topology, p2p: &BTreeMap<char, BTreeMap<(u32, u32), P2pStatus>>) {
    // Sets and maps, not searches of the lists: a matrix of n GPUs has n² cells.
    let mut known: BTreeSet<u32> = topo.gpus.iter().map(|g| g.index).collect();
    let mut pairs: BTreeSet<(u32, u32)> = topo.pairs.iter().map(|p| (p.a, p.b)).collect();
    for cells in p2p.values() {
        for &(a, b) in cells.keys() {
            for index in [a, b] {
                if known.insert(index) {
                    topo.gpus.push(TopoGpu { index, affinity_from: "none".to_owned(), ..TopoGpu::default() });
                }
            }
            let (lo, hi) = (a.min(b), a.max(b));
            if lo != hi && pairs.insert((lo, hi)) {
                topo.pairs.push(GpuPair {
                    a: lo,
                    b: hi,
                    link: LinkKind::Unknown,
                    p2p_read: None,
                    p2p_write: None,
                    p2p_atomics: None,
                });
            }
        }
    }
    topo.gpus.sort_by_key(|g| g.index);
    for pair in &mut topo.pairs {
        let cell = |kind: char| {
            let cells = p2p.get(&kind)?;
            cells.get(&(pair.a, pair.b)).or_else(|| cells.get(&(pair.b, pair.a))).copied()
        };
        pair.p2p_read = pair.p2p_read.or(cell('r'));
        pair.p2p_write = pair.p2p_write.or(cell('w'));
        pair.p2p_atomics = pair.p2p_atomics.or(cell('a'));
    }
}

/// The most CPU numbers read from one `node N cpus:` line: more than any machine has.
const MAX_NODE_CPUS: usize = 8192;

/// The most NUMA nodes read: more than any machine has (so each GPU is checked against few).
const MAX_NODES: usize = 64;

/// `numactl -H` (`--hardware`): each `node N cpus: 0 1 2 …` line. For a GPU whose link matrix gave
/// its CPUs but no NUMA node (drivers before the `NUMA Affinity` column, or `N/A` in a VM), the
/// node whose CPUs hold all of them is its node. True when that gave any GPU its node.
fn numa_from_numactl(lines: &[String], gpus: &mut [TopoGpu]) -> bool {
    if !gpus.iter().any(|g| g.numa_node.is_none() && g.cpu_affinity.is_some()) {
        return false;
    }
    let nodes: Vec<(u32, BTreeSet<usize>)> = lines
        .iter()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix("node ")?;
            let (node, cpus) = rest.split_once(" cpus:")?;
            let cpus = cpus.split_whitespace().take(MAX_NODE_CPUS).map(str::parse).collect::<Result<_, _>>().ok()?;
            Some((node.trim().parse().ok()?, cpus))
        })
        .take(MAX_NODES)
        .collect();
    let mut gave = false;
    for g in gpus.iter_mut().take(MAX_NVLINK_GPUS).filter(|g| g.numa_node.is_none()) {
        let Some(cpus) = g.cpu_affinity.as_deref().and_then(cpu_set) else { continue };
        if let Some((node, _)) = nodes.iter().find(|(_, on)| cpus.is_subset(on)) {
            g.numa_node = Some(*node);
            g.affinity_from = format!("{} + {NUMACTL_FORMAT}", g.affinity_from);
            gave = true;
        }
    }
    gave
}

/// A Linux CPU list (`0-9,20-29`) as its CPUs; `None` when it does not read as one or names more
/// than [`MAX_NODE_CPUS`].
fn cpu_set(list: &str) -> Option<BTreeSet<usize>> {
    let mut out = BTreeSet::new();
    for part in list.split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
        if b < a || out.len() + (b - a) >= MAX_NODE_CPUS {
            return None;
        }
        out.extend(a..=b);
    }
    (!out.is_empty()).then_some(out)
}

/// A matrix's header line: `GPU0` first, then not `X` (a row's first cell).
fn is_header(line: &str) -> bool {
    let mut t = line.split_whitespace();
    t.next() == Some("GPU0") && t.next().is_some_and(|c| c != "X")
}

/// The capabilities the `-p2p`/`--p2pstatus` arguments in `lines` name, each letter one (`rw` →
/// `r`, `w`); quotes, backticks, brackets and markup around the words ignored.
fn p2p_kinds(lines: &[String]) -> Vec<char> {
    let mut kinds = Vec::new();
    for line in lines {
        let words: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || "`'\"()[]<>*:,;|".contains(c))
            .filter(|w| !w.is_empty())
            .collect();
        for (i, w) in words.iter().enumerate() {
            let arg = match w.split_once('=') {
                Some((flag, value)) if flag == "-p2p" || flag == "--p2pstatus" => Some(value),
                _ if *w == "-p2p" || *w == "--p2pstatus" => words.get(i + 1).copied(),
                _ => None,
            };
            let Some(arg) = arg.filter(|a| !a.is_empty() && a.len() <= 5) else { continue };
            if arg.chars().all(|c| "rwnap".contains(c)) {
                kinds.extend(arg.chars().filter(|c| !kinds.contains(c)).collect::<Vec<_>>());
            }
        }
    }
    kinds
}

/// Puts a pasted topology into the snapshot read from the same text: each GPU's name, capability
/// and UUID from its GPUs, the CUDA order from its variables, the formats into its origin and what
/// was left unread into its notes.
pub fn apply(pasted: Pasted, snap: &mut Snapshot) {
    let Pasted { topology, formats, notes } = pasted;
    snap.notes.extend(notes);
    let Some(mut topo) = topology else { return };
    if let Some(gpus) = snap.gpus.value() {
        for t in &mut topo.gpus {
            if let Some(g) = gpus.iter().find(|g| g.index == t.index) {
                t.name = g.name.clone().or(t.name.take());
                t.uuid = g.uuid.clone().or(t.uuid.take());
                t.compute_capability = g.compute_capability.map(|c| c.to_string());
            }
        }
    }
    // What the rest of the paste said of the bridges (lspci's ACS lines), peer copies and the IOMMU stays.
    if let Some(before) = snap.topology.value() {
        topo.acs_redirect.clone_from(&before.acs_redirect);
        topo.peer_copies.clone_from(&before.peer_copies);
        topo.iommu.clone_from(&before.iommu);
    }
    let var = |name: &str| snap.env.vars.get(name).map(String::as_str);
    topo.cuda_order = CudaOrder::derive(&topo.gpus, var("CUDA_DEVICE_ORDER"), var("CUDA_VISIBLE_DEVICES"));
    snap.topology = Probed::found(topo, formats.join(" + "));
    if let Origin::Pasted { formats: known } = &mut snap.origin {
        for f in formats {
            if !known.iter().any(|k| k == f) {
                known.push(f.to_owned());
            }
        }
    }
}
#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use crate::parse::paste::read_pasted;
    use gpu_doctor_kb::Kb;
    use gpu_doctor_model::{LinkKind, P2pStatus};

    const CNS: P2pStatus = P2pStatus::ChipsetNotSupported;
    const GNS: P2pStatus = P2pStatus::GpuNotSupported;

    #[test]
    fn a_pasted_matrix_is_read_into_the_topology() {
        let text = format!(
            "$ nvidia-smi topo -m\n```\n{}```\n",
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_topo/two-socket-8x4090-topo-m.txt"))
        );
        let s = read_pasted(&text, Kb::get().unwrap()).unwrap();
        let gpu_doctor_model::Origin::Pasted { formats } = &s.origin else { panic!("pasted") };
        assert_eq!(formats, &[super::FORMAT.to_owned()]);
        let t = s.topology.value().unwrap();
        assert_eq!((t.gpus.len(), t.pairs.len()), (8, 28));
        assert!(t.pairs.iter().all(|p| p.link == LinkKind::Sys));
        assert_eq!(t.gpus[5].numa_node, Some(1));
        let ids: Vec<String> =
            gpu_doctor_judge::diagnose::diagnose(&s, Kb::get().unwrap()).into_iter().map(|f| f.id).collect();
        assert_eq!(ids, ["topology.gpus_across_sockets"]);
    }

    #[test]
    fn with_nvidia_smi_list_the_gpus_are_named_and_mig_devices_kept() {
        let text = format!(
            "{}\n{}",
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_topo/4xa100-one-mig-list.txt")),
            "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tNV12\t0-7\t0\nGPU1\tNV12\t X \t0-7\t0\n"
        );
        let t = super::read(&text.lines().map(str::to_owned).collect::<Vec<_>>()).unwrap().topology.unwrap();
        assert_eq!(t.gpus[0].mig.as_ref().and_then(|m| m.instances.as_ref()).map(Vec::len), Some(4));
        assert_eq!(t.pair(0, 1).map(|p| p.link), Some(LinkKind::Nvlink { links: 12 }));
    }

    fn sample(name: &str) -> String {
        std::fs::read_to_string(format!("{}/tests/data/smi_topo/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_owned).collect()
    }

    fn ids(s: &gpu_doctor_model::Snapshot) -> Vec<String> {
        gpu_doctor_judge::diagnose::diagnose(s, Kb::get().unwrap()).into_iter().map(|f| f.id).collect()
    }

    #[test]
    fn a_p2p_matrix_after_its_command_gives_each_pair_its_status() {
        // tinygrad/open-gpu-kernel-modules#23: `nvidia-smi topo -p2p rw`, CNS everywhere, no link matrix.
        let p = super::read(&lines(&sample("8x4090-topo-p2p-rw-cns-cut.txt"))).unwrap();
        assert_eq!(p.formats, [super::P2P_FORMAT]);
        let t = p.topology.unwrap();
        assert_eq!(t.gpus.iter().map(|g| g.index).collect::<Vec<_>>(), (0..8).collect::<Vec<_>>());
        assert_eq!(t.pairs.len(), 27, "rows 0-5 name every column: every pair but 6-7, whose rows are cut off");
        assert_eq!(t.pair(6, 7), None);
        let p05 = t.pair(0, 5).unwrap();
        assert_eq!((p05.link, p05.p2p_read, p05.p2p_write), (LinkKind::Unknown, Some(CNS), Some(CNS)));
        assert_eq!(t.pair(5, 7).unwrap().p2p_read, Some(CNS), "from GPU5's row");
    }

    #[test]
    fn a_p2p_matrix_without_its_command_is_noted_not_read() {
        let text = sample("8x4090-topo-p2p-rw-cns-cut.txt").replacen("nvidia-smi topo -p2p rw\n", "", 1);
        let p = super::read(&lines(&text)).unwrap();
        assert_eq!(p.topology, None);
        assert!(p.notes[0].contains("at line 1 was not read"), "{:?}", p.notes);
        let s = read_pasted(&text, Kb::get().unwrap()).unwrap();
        assert!(matches!(s.topology, gpu_doctor_model::Probed::Unknown { .. }));
        assert!(s.notes.iter().any(|n| n.contains("topo -p2p")), "{:?}", s.notes);
    }

    #[test]
    fn a_pcie_capability_matrix_is_not_taken_for_reads_and_the_link_matrix_before_it_is_read() {
        // aikitoria/open-gpu-kernel-modules#13: `topo -m`, a mistyped `-p2p -p`, then `-p2p p`.
        let text = sample("5x5060ti-topo-m-then-p2p-p.txt");
        let p = super::read(&lines(&text)).unwrap();
        assert_eq!(p.formats, [super::FORMAT]);
        assert!(p.notes.is_empty(), "the PCIe capability is seen and not needed: {:?}", p.notes);
        let t = p.topology.unwrap();
        assert_eq!((t.gpus.len(), t.pairs.len()), (5, 10));
        assert_eq!(t.pair(3, 4).map(|p| p.link), Some(LinkKind::Phb));
        assert!(t.pairs.iter().all(|p| p.p2p_read.is_none() && p.p2p_write.is_none()));
        // A healthy machine on one NUMA node: nothing to warn about.
        let s = read_pasted(&text, Kb::get().unwrap()).unwrap();
        assert!(ids(&s).is_empty(), "{:?}", ids(&s));
    }

    #[test]
    fn the_r_and_w_matrices_each_fill_their_field_and_the_link_matrix_may_come_last() {
        // The 2× RTX 5090 of noonghunna/club-3090#1229: its GNS matrix pasted once as reads, once as
        // writes with the read cell changed, then its link matrix.
        let p2p = sample("2x5090-topo-p2p.txt");
        let text = format!(
            "$ nvidia-smi topo -p2p r\n{p2p}\n$ nvidia-smi topo --p2pstatus=w\n{}\n$ nvidia-smi topo -m\n{}",
            p2p.replace("GNS", "OK"),
            sample("2x5090-topo-m.txt")
        );
        let p = super::read(&lines(&text)).unwrap();
        assert_eq!(p.formats, [super::P2P_FORMAT, super::FORMAT]);
        let t = p.topology.unwrap();
        let pair = t.pair(0, 1).unwrap();
        assert_eq!((pair.link, pair.p2p_read, pair.p2p_write), (LinkKind::Phb, Some(GNS), Some(P2pStatus::Ok)));
        assert_eq!(t.gpus[1].numa_node, Some(0));
    }

    #[test]
    fn gns_under_its_heading_gives_the_no_p2p_finding() {
        // noonghunna/club-3090#1229 as posted: the link matrix, then the heading
        // `GPU peer-access matrix (topo -p2p rw)` and the GNS matrix.
        let text = format!(
            "```\n{}```\n</details>\n<details><summary>GPU peer-access matrix (topo -p2p rw)</summary>\n\n```\n{}```\n",
            sample("2x5090-topo-m.txt"),
            sample("2x5090-topo-p2p.txt")
        );
        let s = read_pasted(&text, Kb::get().unwrap()).unwrap();
        let gpu_doctor_model::Origin::Pasted { formats } = &s.origin else { panic!("pasted") };
        assert_eq!(formats, &[super::FORMAT.to_owned(), super::P2P_FORMAT.to_owned()]);
        assert_eq!(ids(&s), ["topology.peer_access_not_offered_by_gpu"]);
        let without = read_pasted(&sample("2x5090-topo-m.txt"), Kb::get().unwrap()).unwrap();
        assert!(ids(&without).is_empty(), "the link matrix alone says nothing of P2P: {:?}", ids(&without));
    }

    #[test]
    fn chipset_not_supported_between_close_gpus_is_the_blocked_finding() {
        // The 4× H100 NV6 link matrix of NVIDIA/nccl#1617 with tinygrad/open-gpu-kernel-modules#23's CNS
        // matrix (its first four GPUs) as reads: close links whose P2P the chipset refuses.
        let cns = sample("8x4090-topo-p2p-rw-cns-cut.txt");
        let text = format!("{}\n{cns}", sample("4xh100-nv6-topo-m.txt"));
        let s = read_pasted(&text, Kb::get().unwrap()).unwrap();
        let t = s.topology.value().unwrap();
        assert_eq!(t.pair(0, 1).map(|p| (p.link, p.p2p_read)), Some((LinkKind::Nvlink { links: 6 }, Some(CNS))));
        assert!(ids(&s).contains(&"topology.peer_access_blocked".to_owned()), "{:?}", ids(&s));
    }

    #[test]
    fn nvlink_states_fill_each_gpus_nvlinks() {
        // Azure/azhpc-diagnostics#73: one V100 of eight with links 3 and 5 down.
        let text = sample("v100-nvlink-s-two-inactive.txt");
        let p = super::read(&lines(&text)).unwrap();
        assert_eq!(p.formats, [super::NVLINK_FORMAT]);
        let t = p.topology.unwrap();
        assert_eq!(t.gpus.len(), 1);
        let g = &t.gpus[0];
        assert_eq!((g.index, g.name.as_deref(), g.uuid.as_deref()), (3, Some("Tesla V100-SXM2-32GB"), None));
        let down: Vec<u32> = g.nvlinks.iter().filter(|l| !l.active).map(|l| l.link).collect();
        assert_eq!((g.nvlinks.len(), down), (6, vec![3, 5]));
        assert!(t.pairs.is_empty());
        let s = read_pasted(&text, Kb::get().unwrap()).unwrap();
        let gpu_doctor_model::Origin::Pasted { formats } = &s.origin else { panic!("pasted") };
        assert_eq!(formats, &[super::NVLINK_FORMAT.to_owned()]);
        assert_eq!(s.topology.value().unwrap().gpus[0].nvlinks.len(), 6);
    }

    #[test]
    fn nvlink_states_of_a_healthy_gb200_and_per_gpu_runs() {
        // NVIDIA/k8s-test-infra#371: GB200, 18 links up (the thread cuts GPU 1 after two links).
        let t = super::read(&lines(&sample("gb200-nvlink-s-cut.txt"))).unwrap().topology.unwrap();
        assert_eq!(t.gpus.iter().map(|g| g.nvlinks.len()).collect::<Vec<_>>(), [18, 2]);
        assert!(t.gpus.iter().flat_map(|g| &g.nvlinks).all(|l| l.active));
        assert_eq!(t.gpus[1].uuid.as_deref(), Some("GPU-39ac7bce-e3d6-b426-008e-fa47897c72d5"));
        let s = read_pasted(&sample("gb200-nvlink-s-cut.txt"), Kb::get().unwrap()).unwrap();
        assert!(ids(&s).is_empty(), "{:?}", ids(&s));
        // RWTH's help page: `nvlink --status -i 0` and `-i 1` after their prompts, unindented.
        let t = super::read(&lines(&sample("2xv100-nvlink-status-per-gpu.txt"))).unwrap().topology.unwrap();
        let up = |g: usize| t.gpus[g].nvlinks.iter().filter(|l| l.active).map(|l| l.link).collect::<Vec<_>>();
        assert_eq!((up(0), up(1)), (vec![0, 2], vec![1, 2]));
        // Two of six up on both V100s: wired alike, nothing down.
        let s = read_pasted(&sample("2xv100-nvlink-status-per-gpu.txt"), Kb::get().unwrap()).unwrap();
        assert!(!ids(&s).contains(&"topology.nvlink_down".to_owned()), "{:?}", ids(&s));
        // The same paste with one of GPU 1's links down (edited): fewer than its sibling.
        let edited =
            sample("2xv100-nvlink-status-per-gpu.txt").replacen("Link 1: 25.781 GB/s", "Link 1: <inactive>", 1);
        let s = read_pasted(&edited, Kb::get().unwrap()).unwrap();
        assert!(ids(&s).contains(&"topology.nvlink_down".to_owned()), "{:?}", ids(&s));
    }

    #[test]
    fn nvlink_states_join_the_link_matrix_of_the_same_paste() {
        let text = format!(
            "{}\n$ nvidia-smi nvlink -s\n{}",
            sample("4xh100-nv6-topo-m.txt"),
            "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\n\t Link 0: 26.562 GB/s\n\t Link 1: <inactive>\n"
        );
        let p = super::read(&lines(&text)).unwrap();
        assert_eq!(p.formats, [super::FORMAT, super::NVLINK_FORMAT]);
        let t = p.topology.unwrap();
        assert_eq!((t.gpus.len(), t.pairs.len()), (4, 6));
        assert_eq!(t.gpus[0].nvlinks.iter().map(|l| l.active).collect::<Vec<_>>(), [true, false]);
        assert_eq!(t.gpus[0].numa_node, Some(3));
    }

    #[test]
    fn other_nvlink_outputs_are_not_states() {
        // `nvlink -e` and `-c` lines (their shapes as nvidia-smi prints them) give no state; `-e`'s
        // lines are the links' error counters.
        let errors =
            "GPU 0: Tesla V100-SXM2-16GB (UUID: GPU-1)\n\t Link 0: Replay Errors: 0\n\t Link 0: CRC Errors: 0\n";
        let p = super::read(&lines(errors)).unwrap();
        assert_eq!(p.formats, [super::NVLINK_ERRORS_FORMAT]);
        let g = &p.topology.unwrap().gpus[0];
        assert!(g.nvlinks.is_empty());
        assert_eq!((g.nvlink_errors[0].replay, g.nvlink_errors[0].recovery), (Some(0), None));
        let caps = "GPU 0: Tesla V100-SXM2-16GB (UUID: GPU-1)\n\t Link 0, P2P is supported: true\n";
        for text in [caps, "GPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-1)\n"] {
            assert_eq!(super::read(&lines(text)), None, "{text}");
        }
    }

    #[test]
    fn numactl_gives_a_gpu_its_node_only_when_its_cpus_lie_in_one() {
        // kubernetes/kubernetes#53497's 2017 matrix has CPU Affinity but no NUMA column; the
        // 8-node numactl -H of NordicHPC/sonar#358 (16 CPUs a node) splits 0-9,20-29 over two
        // nodes, so no GPU gets one, and the format is not recorded.
        let old = sample("8gpu-mlx4-old-topo-m-cut.txt");
        let text = format!("{old}\n{}", sample("8-node-numactl-h-cut.txt"));
        let p = super::read(&lines(&text)).unwrap();
        assert_eq!(p.formats, [super::FORMAT]);
        assert!(p.topology.unwrap().gpus.iter().all(|g| g.numa_node.is_none()));
        // The node lines a two-socket, ten-core machine with hyper-threading prints (synthetic:
        // no thread pasted both): each GPU's CPUs lie in one node.
        let numactl = "node 0 cpus: 0 1 2 3 4 5 6 7 8 9 20 21 22 23 24 25 26 27 28 29\n\
                       node 1 cpus: 10 11 12 13 14 15 16 17 18 19 30 31 32 33 34 35 36 37 38 39\n";
        let p = super::read(&lines(&format!("{old}\n{numactl}"))).unwrap();
        assert_eq!(p.formats, [super::FORMAT, super::NUMACTL_FORMAT]);
        let t = p.topology.unwrap();
        assert_eq!(
            t.gpus.iter().map(|g| g.numa_node).collect::<Vec<_>>(),
            [Some(0), Some(0), Some(0), Some(0), Some(1)]
        );
        assert_eq!(t.gpus[4].affinity_from, "nvidia-smi topo -m + numactl -H");
        assert_eq!(t.numa_nodes(), [0, 1]);
        // A matrix that names the node already is left as it is.
        let hgx = format!("{}\n{numactl}", sample("hgx-h100-topo-m.txt"));
        assert_eq!(super::read(&lines(&hgx)).unwrap().formats, [super::FORMAT]);
    }

    #[test]
    fn cpu_lists_read_as_sets() {
        assert_eq!(super::cpu_set("0-2,8").map(|s| s.into_iter().collect::<Vec<_>>()), Some(vec![0, 1, 2, 8]));
        for bad in ["", "a", "3-1", "0-99999999", "1,,2"] {
            assert_eq!(super::cpu_set(bad), None, "{bad}");
        }
    }

    #[test]
    fn p2p_kinds_are_read_from_each_spelling() {
        let kinds = |l: &str| super::p2p_kinds(&lines(l));
        assert_eq!(kinds("$ nvidia-smi topo -p2p r"), ['r']);
        assert_eq!(kinds("`nvidia-smi topo -p2p w`"), ['w']);
        assert_eq!(kinds("nvidia-smi topo --p2pstatus=a"), ['a']);
        assert_eq!(kinds("(topo -p2p rw)"), ['r', 'w']);
        assert!(kinds("nvidia-smi topo -p2p -p").is_empty());
        assert!(kinds("nvidia-smi topo -p2p").is_empty());
        assert!(kinds("use -p2p wisely").is_empty());
        assert_eq!(kinds("<summary>GPU peer-access matrix (topo -p2p rw)</summary>"), ['r', 'w']);
        assert_eq!(kinds("nvidia-smi topo -p2p p"), ['p']);
    }

    #[test]
    fn text_without_a_matrix_leaves_the_topology_unknown() {
        let s = read_pasted("Cuda compilation tools, release 12.4, V12.4.131\n", Kb::get().unwrap()).unwrap();
        assert!(matches!(s.topology, gpu_doctor_model::Probed::Unknown { .. }));
    }
}
