//! The GPU-to-GPU copy test's judging over the topology of real captures: each pair of a made-up
//! matrix (the numbers are invented; the machines are the replay scenarios' `nvidia-smi topo -m`
//! and NVML answers) judged against the link the probes found between its two GPUs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use gpu_doctor_judge::bench::p2p::link_facts;
use gpu_doctor_kb::Kb;
use gpu_doctor_model::LinkKind;
use gpu_doctor_model::bench::judgement::{Judgement, Verdict};
use gpu_doctor_model::bench::p2p::{P2pGpu, P2pLinkFact, P2pMatrix, P2pMeasure, P2pMode, P2pPair};
use gpu_doctor_model::bench::stats::Stats;
use gpu_doctor_probes::host::ReplayHost;
use gpu_doctor_probes::probe::{Options, collect};
use gpu_doctor_tests::fixtures_dir;

fn facts(name: &str) -> Vec<P2pLinkFact> {
    let host = ReplayHost::load(&fixtures_dir().join(name)).unwrap();
    let snap = collect(&host, &Options::default());
    link_facts(&snap, Some(&Kb::get().unwrap().links))
}

fn measure(mode: P2pMode, gbps: Option<f64>) -> P2pMeasure {
    P2pMeasure {
        mode,
        bandwidth_gbps: gbps.and_then(|g| Stats::from_samples(&[g])),
        latency_us: None,
        skipped: gbps.is_none().then(|| "peer access is not offered (cuDeviceCanAccessPeer = 0)".to_owned()),
    }
}

/// A pair copying `src` → `dst` with P2P on and off at these rates (`None`: not measured).
fn pair(src: u32, dst: u32, on: Option<f64>, off: f64) -> P2pPair {
    P2pPair {
        src,
        dst,
        can_access_peer: on.is_some(),
        measures: vec![measure(P2pMode::PeerEnabled, on), measure(P2pMode::PeerDisabled, Some(off))],
        judgement: None,
        judged_mode: None,
    }
}

/// The matrix of `pairs` between `gpus` GPUs (CUDA reports no bus ids here, as the captures have
/// none: the pairs are tied to the topology by CUDA ordinal), judged against `links`.
fn judged(gpus: u32, pairs: Vec<P2pPair>, links: &[P2pLinkFact]) -> P2pMatrix {
    let mut m = P2pMatrix {
        bytes: 64 << 20,
        latency_bytes: 4096,
        gpus: (0..gpus).map(|ordinal| P2pGpu { ordinal, ..P2pGpu::default() }).collect(),
        pairs,
        ..P2pMatrix::default()
    };
    gpu_doctor_judge::bench::p2p::judge_matrix(&mut m, links);
    m
}

fn judgement(m: &P2pMatrix, src: u32, dst: u32) -> &Judgement {
    m.pair(src, dst).unwrap().judgement.as_ref().unwrap()
}

#[test]
fn two_ga102_boards_on_an_nvlink_bridge_are_judged_at_their_own_narrower_rate() {
    // The hgx-h100-nvlink machine turned into a pair of RTX 3090s: capability 8.6, NVLink 3 (NVML
    // answers 5, its enum's 3.1: Syllo/nvtop#469), four links (what an NVLink bridge gives two GA102
    // boards). A100's 25 GB/s per link would expect 100 GB/s and call a healthy 50 GB/s LOW.
    let host = ReplayHost::load(&fixtures_dir().join("hgx-h100-nvlink")).unwrap();
    let mut snap = collect(&host, &Options::default());
    let gpu_doctor_model::Probed::Found { value: topo, .. } = &mut snap.topology else { panic!("no topology") };
    for g in &mut topo.gpus {
        g.compute_capability = Some("8.6".into());
        for l in &mut g.nvlinks {
            l.version = Some(5);
        }
    }
    topo.pairs[0].link = LinkKind::Nvlink { links: 4 };
    let links = link_facts(&snap, Some(&Kb::get().unwrap().links));
    let (gbps, basis) = links[0].peer.clone().unwrap();
    assert!((gbps - 56.25).abs() < 1e-9, "{gbps}: {basis}");
    assert!(basis.contains("14.0625 GB/s per direction (NVLink 3, GA102"), "{basis}");
    let m = judged(2, vec![pair(0, 1, Some(50.0), 20.0)], &links);
    assert_eq!(judgement(&m, 0, 1).verdict, Verdict::Normal, "{:?}", judgement(&m, 0, 1));
}

#[test]
fn hgx_h100_pairs_are_judged_against_eighteen_nvlink_4_links() {
    let links = facts("hgx-h100-nvlink");
    assert_eq!(links.len(), 28);
    let l = &links[0];
    assert_eq!(l.link, LinkKind::Nvlink { links: 18 });
    assert_eq!(l.peer.as_ref().unwrap().0, 450.0);
    assert!(l.peer.as_ref().unwrap().1.starts_with("NV18: 18 NVLinks × 25 GB/s per direction (NVLink 4, H100"));
    let m = judged(
        8,
        vec![pair(0, 1, Some(390.0), 40.0), pair(2, 5, Some(120.0), 130.0), pair(6, 7, Some(200.0), 40.0)],
        &links,
    );

    let j = judgement(&m, 0, 1);
    assert_eq!(j.verdict, Verdict::Normal, "{j:?}");
    assert_eq!(j.comment, "P2P on, judged against NV18: 87 % of expected; 70 % or more is normal");
    let j = judgement(&m, 2, 5);
    assert_eq!(j.verdict, Verdict::Low, "{j:?}");
    assert_eq!(
        j.comment,
        "P2P on (120.0 GB/s) is not faster than P2P off (130.0 GB/s) over NV18: the copies do not use the NVLinks"
    );
    let j = judgement(&m, 6, 7);
    assert_eq!(j.verdict, Verdict::Low, "{j:?}");
    assert!(j.comment.contains("44 % of expected, below the 70 %"), "{j:?}");

    // Where NVML reports P2P as OK but CUDA offers no peer access, the pair is LOW with that sentence.
    let mut ok = links.clone();
    ok.iter_mut().for_each(|l| l.p2p_ok = Some(true));
    let m = judged(8, vec![pair(3, 4, None, 40.0)], &ok);
    let j = judgement(&m, 3, 4);
    assert_eq!(j.verdict, Verdict::Low);
    assert_eq!(
        j.comment,
        "the topology says P2P is OK over NV18, but CUDA offers no peer access between these GPUs \
         (cuDeviceCanAccessPeer = 0), so every copy is staged through host memory"
    );
}

#[test]
fn two_rtx_5090s_without_p2p_are_judged_as_host_staged_against_pcie_5() {
    let links = facts("pcie-2x5090-no-p2p");
    assert_eq!(links.len(), 1);
    assert_eq!(
        (links[0].link, links[0].p2p_ok, links[0].p2p_status.as_deref()),
        (LinkKind::Phb, Some(false), Some("GNS"))
    );
    let (host, basis) = links[0].host.clone().unwrap();
    assert!((host - 63.0).abs() < 0.1, "{host}");
    assert!(basis.contains("PCIe 5.0 x16 (NVML's maximum)"), "{basis}");

    let m = judged(2, vec![pair(0, 1, None, 30.0), pair(1, 0, None, 12.0)], &links);
    let j = judgement(&m, 0, 1);
    assert_eq!(j.verdict, Verdict::Normal, "{j:?}");
    assert!(
        j.comment.starts_with(
            "P2P off, judged as host-staged (the topology says P2P is not supported (GNS): the copy crosses both \
             GPUs' host links in turn): 48 % of expected; 40 % or more is normal"
        ),
        "{j:?}"
    );
    assert_eq!(judgement(&m, 1, 0).verdict, Verdict::Low);
}

#[test]
fn gpus_on_two_sockets_are_judged_as_host_staged_against_pcie_4() {
    let links = facts("two-socket-8x4090");
    assert_eq!(links.len(), 28);
    assert!(links.iter().all(|l| l.link == LinkKind::Sys && !l.direct()));
    let m = judged(8, vec![pair(0, 7, None, 14.0), pair(7, 0, Some(25.0), 10.0)], &links);
    let j = judgement(&m, 0, 7);
    assert_eq!(j.verdict, Verdict::Normal, "{j:?}");
    assert!(j.comment.starts_with("P2P off, judged as host-staged (across CPU sockets"), "{j:?}");
    assert!(j.expected.as_ref().unwrap().basis.contains("PCIe 4.0 x16"), "{j:?}");
    // Across sockets the P2P-off copy is what is judged, even where peer access was offered.
    let j = judgement(&m, 7, 0);
    assert_eq!(j.verdict, Verdict::Low, "{j:?}");
    assert!(j.comment.contains("32 % of expected"), "{j:?}");
}

#[test]
fn a_pair_the_topology_does_not_list_has_no_reference() {
    let links = facts("pcie-2x5090-no-p2p");
    let m = judged(3, vec![pair(0, 2, Some(20.0), 10.0)], &links);
    let j = judgement(&m, 0, 2);
    assert_eq!(j.verdict, Verdict::NoReference);
    assert_eq!(j.comment, "the probed topology does not list this pair of GPUs");
    let mut loopback = judged(1, vec![pair(0, 0, None, 10.0)], &links);
    loopback.loopback = true;
    gpu_doctor_judge::bench::p2p::judge_matrix(&mut loopback, &links);
    // Judged as a loopback, not merely as a pair the topology does not list.
    let j = judgement(&loopback, 0, 0);
    assert_eq!(j.verdict, Verdict::NoReference);
    assert_eq!(j.comment, "a loopback copy between two contexts of one GPU: no link to judge it against");
    assert_eq!(loopback.pair(0, 0).unwrap().judged_mode, None);
}
