//! The CUDA samples' p2pBandwidthLatencyTest: which GPU pairs CUDA reports peer access for, and each
//! pair's unidirectional copy bandwidth with peer access off (staged through host memory) and on.
//! The sample prints (NVIDIA/cuda-samples
//! Samples/5_Domain_Specific/p2pBandwidthLatencyTest/p2pBandwidthLatencyTest.cu, `main`):
//!
//! ```text
//! Device=0 CAN Access Peer Device=1
//! P2P Connectivity Matrix
//!      D\D     0     1
//!      0       1     1
//! Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)
//!    D\D     0      1
//!      0 909.49  21.73
//! Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)
//! ```
//!
//! (older samples: `Unidirectional P2P=Enabled Bandwidth Matrix (GB/s)`). Where peer access is on, a
//! direct copy is at least as fast as one staged through the host; one far below it went up to the
//! root complex and back (NCCL troubleshooting guide: the test "should run to completion and report
//! good performance between GPUs"; ACS and the IOMMU redirecting peer traffic are its named causes).
//!
//! CUDA's peer access answers are kept on their own (`Topology::peer_access`), also from the simpleP2P
//! sample's `> Peer access from NVIDIA GeForce RTX 5090 (GPU0) -> NVIDIA GeForce RTX 5090 (GPU1) : Yes`
//! (NVIDIA/cuda-samples Samples/0_Introduction/simpleP2P/simpleP2P.cu: `cudaDeviceCanAccessPeer`, then
//! `"> Peer access from %s (GPU%d) -> %s (GPU%d) : %s\n"` with `Yes` or `No`). The same sample then enables peer
//! access for the first pair that has it, runs a kernel on each GPU over the other's buffer and checks the result:
//! `"Verification error @ element %i: val = %f, ref = %f\n"` is data that crossed between the GPUs coming out
//! wrong, kept as the multi-GPU trouble it is.

use super::facts::{Facts, MAX_LIST};
use gpu_doctor_model::{MultiGpuSymptom, MultiGpuTrouble, PeerAccess, PeerCopy};

const FORMAT: &str = "p2pBandwidthLatencyTest";
const SIMPLE_P2P: &str = "simpleP2P";

/// The most GPUs a matrix is read for: more than any machine has, few enough that a matrix stays small.
const MAX_GPUS: usize = 64;

/// Reads the connectivity and the two unidirectional bandwidth matrices.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    let mut staged = None;
    let mut p2p = None;
    let mut access: Vec<(u32, u32, bool)> = Vec::new();
    let mut connectivity = None;
    let mut first = None;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        if let Some(a) = can_access(t) {
            first.get_or_insert(i);
            if access.len() < MAX_GPUS * MAX_GPUS {
                access.push(a);
            }
        } else if let Some((src, dst, can)) = simple_p2p(t) {
            facts.saw(i, SIMPLE_P2P);
            if facts.peer_access.len() < MAX_GPUS * MAX_GPUS {
                facts.peer_access.push(PeerAccess { src, dst, can });
            }
        } else if t.starts_with("Verification error @ element ") && facts.multi_gpu_trouble.is_none() {
            // simpleP2P checks the data its kernels moved between the pair it enabled peer access for.
            facts.saw(i, SIMPLE_P2P);
            facts.multi_gpu_trouble = Some(MultiGpuTrouble {
                symptom: MultiGpuSymptom::WrongValues,
                line: t.chars().take(300).collect(),
                several_gpus: true,
            });
        } else if t == "P2P Connectivity Matrix" {
            connectivity = connectivity.or_else(|| matrix(&lines[i + 1..]));
        } else if t == "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)" {
            first.get_or_insert(i);
            staged = staged.or_else(|| matrix(&lines[i + 1..]));
        } else if t.starts_with("Unidirectional P2P=Enabled Bandwidth")
            && !t.contains("(P2P Reads)")
            && t.ends_with("Matrix (GB/s)")
        {
            p2p = p2p.or_else(|| matrix(&lines[i + 1..]));
        }
    }
    if let Some(at) = first.filter(|_| !access.is_empty()) {
        facts.saw(at, FORMAT);
        facts.peer_access.extend(access.iter().map(|&(src, dst, can)| PeerAccess { src, dst, can }));
    }
    let (Some(staged), Some(p2p), Some(at)) = (staged, p2p, first) else { return };
    facts.saw(at, FORMAT);
    let peer = |a: usize, b: usize| {
        let (a32, b32) = (u32::try_from(a).ok(), u32::try_from(b).ok());
        // Without either list the pair counts: where CUDA gives no peer access the P2P=Enabled copy
        // falls back to the staged one, so it cannot come out far below it.
        match connectivity.as_ref().and_then(|c| c.get(a)?.get(b).copied()) {
            Some(v) => v >= 1.0,
            None if access.is_empty() => true,
            None => access.iter().any(|(x, y, ok)| Some(*x) == a32 && Some(*y) == b32 && *ok),
        }
    };
    for (a, row) in staged.iter().enumerate() {
        for (b, s) in row.iter().enumerate() {
            let Some(p) = p2p.get(a).and_then(|r| r.get(b)) else { continue };
            if a == b || !peer(a, b) || facts.peer_copies.len() >= MAX_LIST * MAX_LIST {
                continue;
            }
            // GB/s to whole MB/s (the matrices print two decimals); a value past u32 is no reading.
            let mb = |gb: f64| format!("{:.0}", gb * 1000.0).parse::<u32>().ok();
            let (Ok(src), Ok(dst), Some(p2p), Some(staged)) = (u32::try_from(a), u32::try_from(b), mb(*p), mb(*s))
            else {
                continue;
            };
            facts.peer_copies.push(PeerCopy { src, dst, p2p_mbytes_per_s: p2p, staged_mbytes_per_s: staged });
        }
    }
}

/// simpleP2P's `> Peer access from NVIDIA GeForce RTX 5090 (GPU0) -> NVIDIA GeForce RTX 5090 (GPU1) : Yes`
/// (or `No`): the two GPUs' indices and the answer.
fn simple_p2p(line: &str) -> Option<(u32, u32, bool)> {
    // A `> ` at the start may be gone: pasted text loses it as Markdown's quote mark.
    let rest = line.strip_prefix("> ").unwrap_or(line).strip_prefix("Peer access from ")?;
    let (pair, answer) = rest.rsplit_once(" : ")?;
    let can = match answer.trim() {
        "Yes" => true,
        "No" => false,
        _ => return None,
    };
    let (from, to) = pair.split_once(") -> ")?;
    let index = |side: &str| side.trim_end_matches(')').rsplit_once("(GPU")?.1.parse::<u32>().ok();
    Some((index(from)?, index(to)?, can))
}

/// `Device=0 CAN Access Peer Device=1` (or `CANNOT`).
fn can_access(line: &str) -> Option<(u32, u32, bool)> {
    let rest = line.strip_prefix("Device=")?;
    let (a, rest) = rest.split_once(' ')?;
    let (ok, b) = if let Some(b) = rest.strip_prefix("CAN Access Peer Device=") {
        (true, b)
    } else {
        (false, rest.strip_prefix("CANNOT Access Peer Device=")?)
    };
    Some((a.parse().ok()?, b.trim().parse().ok()?, ok))
}

/// The matrix under a title: a `D\D 0 1 …` header, then one row per GPU (`0 909.49 21.73`), in order;
/// `None` when the header or a row is missing or malformed.
fn matrix(lines: &[String]) -> Option<Vec<Vec<f64>>> {
    let mut it = lines.iter().map(|l| l.trim());
    let header: Vec<&str> = it.next()?.split_whitespace().collect();
    if header.first() != Some(&"D\\D") {
        return None;
    }
    let n = header.len() - 1;
    if n == 0 || n > MAX_GPUS {
        return None;
    }
    let mut rows = Vec::with_capacity(n);
    for (i, line) in it.take(n).enumerate() {
        let mut cells = line.split_whitespace();
        if cells.next()?.parse::<usize>().ok()? != i {
            return None;
        }
        let row: Vec<f64> =
            cells.map(|c| c.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0)).collect::<Option<_>>()?;
        if row.len() != n {
            return None;
        }
        rows.push(row);
    }
    (rows.len() == n).then_some(rows)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// NVIDIA/nccl#814 (comaniac): six GPUs, CUDA reports peer access between all of them, and every
    /// peer write runs at about 10 GB/s where the staged copy gets about 22 GB/s (the two
    /// unidirectional matrices, whole lines).
    const NCCL_814: &str = "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)
   D\\D     0      1      2      3      4      5
     0 911.08  20.10  22.16  22.14  22.33  22.37
     1  20.39 920.20  22.26  22.24  22.34  22.22
     2  22.18  22.37 920.74  22.09  22.40  22.24
     3  22.24  22.42  22.25 922.37  20.46  22.24
     4  22.19  22.39  22.25  20.43 920.62  22.23
     5  22.09  22.30  22.22  22.32  22.38 921.96
Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)
   D\\D     0      1      2      3      4      5
     0 912.68   9.90   9.90   9.90   9.90   9.90
     1   9.90 922.37   9.90   9.90   9.90   9.90
     2  10.01  10.01 922.24  10.01  10.01  10.01
     3  10.23  10.23  10.23 921.83  10.23  10.23
     4   9.65   9.64   9.65   9.65 921.29   9.65
     5  10.22  10.22  10.22  10.22  10.22 922.37
";

    /// tinygrad/open-gpu-kernel-modules#44 (Panchovix): two RTX 4090s with the P2P module, peer
    /// access on both ways, P2P writes 6.60 GB/s beside 6.34 staged: slow, but not a detour.
    const TWO_4090: &str = "Device=0 CAN Access Peer Device=1
Device=1 CAN Access Peer Device=0

P2P Connectivity Matrix
     D\\D     0     1
     0       1     1
     1       1     1
Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)
   D\\D     0      1 
     0 1008.06   6.34 
     1   6.34 926.75 
Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)
   D\\D     0      1 
     0 1015.27   6.60 
     1   6.60 945.63 
";

    fn copies(text: &str) -> Vec<PeerCopy> {
        Facts::read_by(read, text).peer_copies
    }

    #[test]
    fn every_off_diagonal_pair_is_read_with_both_bandwidths() {
        let c = copies(NCCL_814);
        assert_eq!(c.len(), 30);
        assert_eq!(c[0], PeerCopy { src: 0, dst: 1, p2p_mbytes_per_s: 9900, staged_mbytes_per_s: 20100 });
        // All but GPU 3 → 4, whose 10.23 GB/s is exactly half its staged 20.46.
        assert_eq!(c.iter().filter(|c| c.p2p_far_below_staged()).count(), 29);
        let c = copies(TWO_4090);
        assert_eq!(c.len(), 2);
        assert!(!c.iter().any(PeerCopy::p2p_far_below_staged));
    }

    #[test]
    fn pairs_without_peer_access_and_broken_matrices_give_nothing() {
        // The connectivity matrix says 0: P2P=Enabled falls back to the staged copy, nothing to judge.
        let cannot = TWO_4090
            .replace("CAN Access", "CANNOT Access")
            .replace("0       1     1", "0       1     0")
            .replace("1       1     1", "1       0     1");
        assert!(copies(&cannot).is_empty());
        // A matrix cut short, a row out of order, a header of another shape, and the P2P matrix alone.
        let cut: String = NCCL_814.lines().take(12).map(|l| format!("{l}\n")).collect();
        assert!(copies(&cut).is_empty());
        assert!(copies(&NCCL_814.replacen("     1  20.39", "     7  20.39", 1)).is_empty());
        assert!(copies(&NCCL_814.replace("D\\D", "GPU")).is_empty());
        let p2p_only: String = NCCL_814.lines().skip(8).map(|l| format!("{l}\n")).collect();
        assert!(copies(&p2p_only).is_empty());
    }

    #[test]
    fn a_detour_is_the_blocked_finding_and_a_slow_direct_path_is_not() {
        let ids = |text: &str| {
            let kb = gpu_doctor_kb::Kb::get().unwrap();
            let s = super::super::read_pasted(text, kb).unwrap();
            gpu_doctor_judge::diagnose::diagnose(&s, kb).into_iter().map(|f| f.id).collect::<Vec<_>>()
        };
        assert!(ids(NCCL_814).contains(&"topology.peer_access_blocked".to_owned()), "{:?}", ids(NCCL_814));
        assert!(!ids(TWO_4090).contains(&"topology.peer_access_blocked".to_owned()), "{:?}", ids(TWO_4090));
    }

    /// aikitoria/open-gpu-kernel-modules#8 (meunal, 2025-10-12, verbatim lines): simpleP2P on two RTX 4090 with the
    /// P2P-enabled driver, every peer access `Yes`, then wrong data after the kernels read across the pair.
    const SIMPLE_P2P_WRONG: &str =
        "> Peer access from NVIDIA GeForce RTX 4090 (GPU0) -> NVIDIA GeForce RTX 4090 (GPU1) : Yes
> Peer access from NVIDIA GeForce RTX 4090 (GPU1) -> NVIDIA GeForce RTX 4090 (GPU0) : Yes
Run kernel on GPU1, taking source data from GPU0 and writing to GPU1...
Run kernel on GPU0, taking source data from GPU1 and writing to GPU0...
Copy data back to host from GPU0 and verify results...
Verification error @ element 0: val = nan, ref = 0.000000
Verification error @ element 1: val = nan, ref = 4.000000
";

    #[test]
    fn simple_p2ps_verification_error_is_wrong_data_between_the_gpus() {
        let f = Facts::read_by(read, SIMPLE_P2P_WRONG);
        let t = f.multi_gpu_trouble.expect("the verification error");
        assert_eq!((t.symptom, t.several_gpus), (MultiGpuSymptom::WrongValues, true));
        assert_eq!(t.line, "Verification error @ element 0: val = nan, ref = 0.000000");
        let kb = gpu_doctor_kb::Kb::get().unwrap();
        let s = super::super::read_pasted(SIMPLE_P2P_WRONG, kb).unwrap();
        let findings = gpu_doctor_judge::diagnose::diagnose(&s, kb);
        let blocked = findings.iter().find(|f| f.id == "topology.peer_access_blocked").expect("wrong data");
        assert!(blocked.fix.as_deref().is_some_and(|x| x.contains("iommu=pt")), "{blocked:#?}");
        // The peer access list alone says nothing went wrong.
        let fine: String = SIMPLE_P2P_WRONG.lines().take(5).map(|l| format!("{l}\n")).collect();
        assert!(Facts::read_by(read, &fine).multi_gpu_trouble.is_none());
    }

    #[test]
    fn a_huge_matrix_header_is_not_read() {
        let header: String = (0..10_000).map(|i| format!(" {i}")).collect();
        let text = format!("Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)\nD\\D{header}\n");
        assert!(copies(&text).is_empty());
    }

    /// simpleP2P's lines (aikitoria/open-gpu-kernel-modules#6, the first two of eight RTX 5090s), and its `No`.
    #[test]
    fn simple_p2p_gives_cudas_peer_access_answers() {
        let text = "> Peer access from NVIDIA GeForce RTX 5090 (GPU0) -> NVIDIA GeForce RTX 5090 (GPU1) : Yes\n\
                    > Peer access from NVIDIA GeForce RTX 5090 (GPU1) -> NVIDIA GeForce RTX 5090 (GPU0) : No\n";
        let f = Facts::read_by(read, text);
        let answers: Vec<(u32, u32, bool)> = f.peer_access.iter().map(|p| (p.src, p.dst, p.can)).collect();
        assert_eq!(answers, [(0, 1, true), (1, 0, false)]);
        // Cut or garbled lines give nothing; p2pBandwidthLatencyTest's own lines give the same answers.
        for bad in [
            "> Peer access from A (GPU0) -> B (GPU1) : Maybe",
            "> Peer access from A (GPU0) -> B : Yes",
            "> Peer access from",
        ] {
            assert!(Facts::read_by(read, bad).peer_access.is_empty(), "{bad}");
        }
        let f = Facts::read_by(read, "Device=0 CANNOT Access Peer Device=1\n");
        assert_eq!(f.peer_access.iter().map(|p| (p.src, p.dst, p.can)).collect::<Vec<_>>(), [(0, 1, false)]);
    }
}
