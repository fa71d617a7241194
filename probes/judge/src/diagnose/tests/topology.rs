//! Several GPUs: P2P, mixed models, CUDA order, sockets, MIG.

use super::builder::Machine;
use gpu_doctor_model::Probed;
use gpu_doctor_model::{CudaOrder, GpuPair, LinkKind, MigFacts, MigInstance, P2pStatus, TopoGpu, Topology};

fn gpu(index: u32, name: &str, cc: &str, numa: Option<u32>) -> TopoGpu {
    TopoGpu {
        index,
        name: Some(name.into()),
        compute_capability: Some(cc.into()),
        uuid: Some(format!("GPU-{index}")),
        numa_node: numa,
        affinity_from: "nvml".into(),
        ..TopoGpu::default()
    }
}

fn pair(a: u32, b: u32, link: LinkKind, p2p: Option<P2pStatus>) -> GpuPair {
    GpuPair { a, b, link, p2p_read: p2p, p2p_write: p2p, p2p_atomics: None }
}

fn machine(gpus: Vec<TopoGpu>, pairs: Vec<GpuPair>, vars: &[(&str, &str)]) -> Machine {
    let var = |n: &str| vars.iter().find(|(k, _)| *k == n).map(|(_, v)| *v);
    let cuda_order = CudaOrder::derive(&gpus, var("CUDA_DEVICE_ORDER"), var("CUDA_VISIBLE_DEVICES"));
    let mut m = Machine::linux();
    m.0.topology = Probed::found(Topology { gpus, pairs, cuda_order, ..Topology::default() }, "nvml");
    m
}

fn ids(m: &Machine) -> Vec<String> {
    m.ids().into_iter().filter(|i| i.starts_with("topology.")).collect()
}

#[test]
fn two_equal_gpus_on_one_socket_with_p2p_say_nothing() {
    let m = machine(
        vec![gpu(0, "NVIDIA A100-SXM4-80GB", "8.0", Some(0)), gpu(1, "NVIDIA A100-SXM4-80GB", "8.0", Some(0))],
        vec![pair(0, 1, LinkKind::Nvlink { links: 12 }, Some(P2pStatus::Ok))],
        &[],
    );
    assert_eq!(ids(&m), Vec::<String>::new());
}

#[test]
fn p2p_blocked_on_a_switch_is_a_warning_but_not_across_sockets_or_by_the_gpu() {
    let two = || vec![gpu(0, "NVIDIA L40S", "8.9", Some(0)), gpu(1, "NVIDIA L40S", "8.9", Some(0))];
    for (link, status, want) in [
        (LinkKind::Pix, P2pStatus::ChipsetNotSupported, vec!["topology.peer_access_blocked"]),
        (LinkKind::Pxb, P2pStatus::TopologyNotSupported, vec!["topology.peer_access_blocked"]),
        (LinkKind::Nvlink { links: 4 }, P2pStatus::DisabledByRegkey, vec!["topology.peer_access_blocked"]),
        (LinkKind::Phb, P2pStatus::ChipsetNotSupported, vec![]),
        (LinkKind::Pix, P2pStatus::Unknown, vec![]),
        (LinkKind::Pix, P2pStatus::GpuNotSupported, vec!["topology.peer_access_not_offered_by_gpu"]),
        (LinkKind::Phb, P2pStatus::GpuNotSupported, vec!["topology.peer_access_not_offered_by_gpu"]),
    ] {
        let m = machine(two(), vec![pair(0, 1, link, Some(status))], &[]);
        assert_eq!(ids(&m), want, "{link:?} {status:?}");
    }
    let m = machine(two(), vec![pair(0, 1, LinkKind::Pix, Some(P2pStatus::ChipsetNotSupported))], &[]);
    let f = m.finding("topology.peer_access_blocked");
    assert_eq!(f.severity, gpu_doctor_model::Severity::Warning);
    assert!(f.evidence[0].contains("PIX") && f.evidence[0].contains("chipset not supported"), "{:?}", f.evidence);
    assert!(f.fix.unwrap().contains("ACSCtl"));
    let m = machine(two(), vec![pair(0, 1, LinkKind::Phb, Some(P2pStatus::GpuNotSupported))], &[]);
    assert_eq!(m.finding("topology.peer_access_not_offered_by_gpu").severity, gpu_doctor_model::Severity::Info);
}

#[test]
fn mixed_models_put_the_faster_card_first_for_cuda() {
    let gpus =
        || vec![gpu(0, "NVIDIA GeForce GTX 1080 Ti", "6.1", None), gpu(1, "NVIDIA GeForce RTX 3090", "8.6", None)];
    let m = machine(gpus(), vec![pair(0, 1, LinkKind::Phb, None)], &[]);
    assert_eq!(ids(&m), ["topology.cuda_index_differs", "topology.mixed_models"]);
    let f = m.finding("topology.cuda_index_differs");
    assert_eq!(f.summary, "CUDA device 0 is nvidia-smi's GPU 1 (NVIDIA GeForce RTX 3090)");
    assert!(f.plan.is_some());
    let set = gpu_doctor_model::Change::SetVar { name: "CUDA_DEVICE_ORDER".into(), value: "PCI_BUS_ID".into() };
    assert_eq!(m.changes("topology.cuda_index_differs"), [set]);
    let m = machine(gpus(), vec![], &[("CUDA_DEVICE_ORDER", "PCI_BUS_ID")]);
    assert_eq!(ids(&m), ["topology.mixed_models"], "PCI order: the indices agree");
    let m = machine(gpus(), vec![], &[("CUDA_VISIBLE_DEVICES", "GPU-1")]);
    assert_eq!(ids(&m), ["topology.mixed_models"], "a UUID names the same GPU in either order");
    let m = machine(gpus(), vec![], &[("CUDA_VISIBLE_DEVICES", "1")]);
    let f = m.finding("topology.cuda_index_differs");
    assert_eq!(
        f.summary, "CUDA device 0 is nvidia-smi's GPU 0 (NVIDIA GeForce GTX 1080 Ti)",
        "1 is the second fastest"
    );
}

#[test]
fn gpus_on_two_sockets_are_information() {
    let m = machine(
        vec![gpu(0, "NVIDIA L4", "8.9", Some(0)), gpu(1, "NVIDIA L4", "8.9", Some(2))],
        vec![pair(0, 1, LinkKind::Sys, None)],
        &[],
    );
    assert_eq!(ids(&m), ["topology.gpus_across_sockets"]);
    let f = m.finding("topology.gpus_across_sockets");
    assert_eq!(f.severity, gpu_doctor_model::Severity::Info);
    assert!(f.fix.unwrap().contains("numactl --cpunodebind=0 --membind=0"));
    let m = machine(
        vec![gpu(0, "NVIDIA L4", "8.9", None), gpu(1, "NVIDIA L4", "8.9", None)],
        vec![pair(0, 1, LinkKind::Sys, None)],
        &[],
    );
    assert_eq!(ids(&m), ["topology.gpus_across_sockets"], "SYS alone says so too");
}

#[test]
fn mig_with_and_without_instances() {
    let mig = |instances: Option<Vec<MigInstance>>| {
        let mut g = gpu(0, "NVIDIA A100-SXM4-80GB", "8.0", None);
        g.mig = Some(MigFacts { enabled: true, instances });
        machine(vec![g], vec![], &[])
    };
    let one = MigInstance { device: 0, profile: Some("3g.40gb".into()), uuid: Some("MIG-abc".into()) };
    assert_eq!(ids(&mig(Some(vec![one]))), ["topology.mig_enabled"]);
    assert_eq!(ids(&mig(Some(vec![]))), ["topology.mig_without_instances"]);
    assert_eq!(ids(&mig(None)), Vec::<String>::new(), "instances not listed: nothing concluded");
}

#[test]
fn an_unknown_topology_concludes_nothing() {
    let mut m = Machine::linux().gpu("NVIDIA GeForce GTX 1080", "6.1").gpu("NVIDIA GeForce RTX 4090", "8.9");
    m.0.topology = Probed::unknown("not in the pasted text");
    assert_eq!(ids(&m), Vec::<String>::new());
}

#[test]
fn a_gpu_with_fewer_nvlinks_up_than_its_siblings_is_a_warning() {
    use gpu_doctor_model::NvLink;
    let links = |up: &[u32]| -> Vec<NvLink> {
        (0..6).map(|link| NvLink { link, active: up.contains(&link), version: None, remote_bus_id: None }).collect()
    };
    let v100 = |index, up: &[u32]| TopoGpu { nvlinks: links(up), ..gpu(index, "Tesla V100-SXM2-32GB", "7.0", Some(0)) };
    let all = [0, 1, 2, 3, 4, 5];
    // Azure/azhpc-diagnostics#73: links 3 and 5 of one GPU inactive, its siblings' up.
    let m = machine(vec![v100(0, &all), v100(1, &all), v100(3, &[0, 1, 2, 4])], vec![], &[]);
    assert_eq!(ids(&m), ["topology.nvlink_down"]);
    let f = m.findings().into_iter().find(|f| f.id == "topology.nvlink_down").unwrap();
    assert!(f.evidence[0].contains("GPU 3") && f.evidence[0].contains("down: link 3, 5"), "{:?}", f.evidence);
    // Equal counts on every GPU (boards that wire some links only, as the RWTH V100 pair: 2 of 6 each).
    let m = machine(vec![v100(0, &[0, 2]), v100(1, &[1, 2])], vec![], &[]);
    assert!(ids(&m).is_empty(), "{:?}", ids(&m));
    // Fewer links listed but none down (a paste cut short, as NVIDIA/k8s-test-infra#371's GB200 list): no finding.
    let cut = TopoGpu { nvlinks: links(&all)[..2].to_vec(), ..v100(1, &all) };
    let m = machine(vec![v100(0, &all), cut], vec![], &[]);
    assert!(ids(&m).is_empty(), "{:?}", ids(&m));
    // A lone GPU of a board that wires some links only (PCIe, NVL), or GPUs of different models, are not compared.
    let pcie = TopoGpu { nvlinks: links(&[0, 1]), ..gpu(0, "NVIDIA H100 NVL", "9.0", Some(0)) };
    let other = TopoGpu { nvlinks: links(&all), ..gpu(1, "NVIDIA A100-SXM4-80GB", "8.0", Some(0)) };
    let m = machine(vec![pcie, other], vec![], &[]);
    assert!(!ids(&m).contains(&"topology.nvlink_down".to_owned()), "{:?}", ids(&m));
    // The only SXM board of its model listed (azhpc-diagnostics#73's paste, one GPU of eight): every link of an SXM
    // board is wired, so links up beside links inactive are lost links; none up says nothing (a link list alone).
    let m = machine(vec![v100(3, &[0, 1, 2, 4])], vec![], &[]);
    assert_eq!(ids(&m), ["topology.nvlink_down"]);
    let f = m.findings().into_iter().find(|f| f.id == "topology.nvlink_down").unwrap();
    assert!(f.evidence[0].contains("SXM board"), "{:?}", f.evidence);
    let m = machine(vec![v100(3, &[])], vec![], &[]);
    assert!(ids(&m).is_empty(), "{:?}", ids(&m));
}

#[test]
fn acs_redirect_on_the_bridges_of_several_gpus_is_the_blocked_finding_once() {
    // Two RTX 5880s NODE apart, as in NVIDIA/nccl#2079, under a bridge with ACS redirect on (the
    // ACSCtl line of ROCm/rccl#547's AMD GPP bridge); P2P itself not reported.
    let acs = |m: &mut Machine, lines: &[&str]| {
        if let Probed::Found { value, .. } = &mut m.0.topology {
            value.acs_redirect = lines.iter().map(|l| (*l).to_owned()).collect();
        }
    };
    let line = "0000:40:01.1: ACSCtl: SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-";
    let two = || {
        vec![
            gpu(0, "NVIDIA RTX 5880 Ada Generation", "8.9", Some(0)),
            gpu(1, "NVIDIA RTX 5880 Ada Generation", "8.9", Some(0)),
        ]
    };
    let mut m = machine(two(), vec![pair(0, 1, LinkKind::Node, None)], &[]);
    assert_eq!(ids(&m), Vec::<String>::new(), "no ACS line: nothing");
    acs(&mut m, &[line]);
    assert_eq!(ids(&m), ["topology.peer_access_blocked"]);
    // One GPU has no peer; GNS: the driver keeps them apart anyway; CNS on a switch: one finding.
    let mut one = machine(vec![gpu(0, "NVIDIA L40S", "8.9", Some(0))], vec![], &[]);
    acs(&mut one, &[line]);
    assert_eq!(ids(&one), Vec::<String>::new());
    let mut gns = machine(two(), vec![pair(0, 1, LinkKind::Phb, Some(P2pStatus::GpuNotSupported))], &[]);
    acs(&mut gns, &[line]);
    assert_eq!(ids(&gns), ["topology.peer_access_not_offered_by_gpu"]);
    let mut cns = machine(two(), vec![pair(0, 1, LinkKind::Pix, Some(P2pStatus::ChipsetNotSupported))], &[]);
    acs(&mut cns, &[line]);
    assert_eq!(ids(&cns), ["topology.peer_access_blocked"]);
    // No GPU named at all: the bare lines of `lspci -vvv | grep ACSCtl` (NCCL's check) count, a
    // bridge's whole block does not.
    let bare = line.split_once(": ").map(|(_, l)| l).unwrap();
    let mut grep = machine(vec![], vec![], &[]);
    acs(&mut grep, &[bare]);
    assert_eq!(ids(&grep), ["topology.peer_access_blocked"]);
    let mut block = machine(vec![], vec![], &[]);
    acs(&mut block, &[line]);
    assert_eq!(ids(&block), Vec::<String>::new());
}

#[test]
fn an_nccl_test_stalled_before_its_first_result_is_the_blocked_finding_on_pcie() {
    use gpu_doctor_model::StalledCollective;
    let with = |mut m: Machine, ranks: u32| {
        if let Probed::Found { value, .. } = &mut m.0.topology {
            value.stalled_collective = Some(StalledCollective {
                ranks,
                names: vec!["Tesla P100-PCIE-16GB".into()],
                evidence: vec!["Rank 0 uses device 0 [0x02] Tesla P100-PCIE-16GB".into()],
            });
        }
        m
    };
    let two = || vec![gpu(0, "Tesla P100-PCIE-16GB", "6.0", Some(0)), gpu(1, "Tesla P100-PCIE-16GB", "6.0", Some(0))];
    let pcie = || machine(two(), vec![pair(0, 1, LinkKind::Pix, None)], &[]);
    assert_eq!(ids(&pcie()), Vec::<String>::new(), "no stalled test: nothing");
    let m = with(pcie(), 2);
    assert_eq!(ids(&m), ["topology.peer_access_blocked"]);
    assert!(m.finding("topology.peer_access_blocked").fix.as_deref().is_some_and(|x| x.contains("ACSCtl")));
    // One rank; NVLink between every pair; GNS: nothing.
    assert_eq!(ids(&with(pcie(), 1)), Vec::<String>::new());
    let nvlink = machine(two(), vec![pair(0, 1, LinkKind::Nvlink { links: 4 }, Some(P2pStatus::Ok))], &[]);
    assert_eq!(ids(&with(nvlink, 2)), Vec::<String>::new());
    let gns = machine(two(), vec![pair(0, 1, LinkKind::Phb, Some(P2pStatus::GpuNotSupported))], &[]);
    assert_eq!(ids(&with(gns, 2)), ["topology.peer_access_not_offered_by_gpu"]);
}

#[test]
fn a_translating_iommu_under_several_pcie_gpus_is_the_blocked_finding() {
    use gpu_doctor_model::{Iommu, IommuMode};
    let with = |mut m: Machine, mode: IommuMode| {
        if let Probed::Found { value, .. } = &mut m.0.topology {
            value.iommu = Some(Iommu {
                mode,
                evidence: vec!["[    0.3] iommu: Default domain type: Translated".into()],
                fault_devices: Vec::new(),
            });
        }
        m
    };
    let two = || vec![gpu(0, "NVIDIA L40S", "8.9", Some(0)), gpu(1, "NVIDIA L40S", "8.9", Some(0))];
    let pcie = || machine(two(), vec![pair(0, 1, LinkKind::Node, Some(P2pStatus::Ok))], &[]);
    assert_eq!(ids(&pcie()), Vec::<String>::new(), "no IOMMU line: nothing");
    let m = with(pcie(), IommuMode::Translated);
    assert_eq!(ids(&m), ["topology.peer_access_blocked"]);
    let f = m.finding("topology.peer_access_blocked");
    assert!(f.evidence.iter().any(|e| e.contains("Default domain type: Translated")), "{:?}", f.evidence);
    assert!(f.fix.as_deref().is_some_and(|x| x.contains("iommu=pt") && x.contains("GRUB_CMDLINE_LINUX")));
    // Passthrough or off: nothing. One GPU: no peer. NVLink between every pair: not PCIe P2P. GNS: the
    // driver keeps them apart anyway.
    for mode in [IommuMode::Passthrough, IommuMode::Off] {
        assert_eq!(ids(&with(pcie(), mode)), Vec::<String>::new(), "{mode:?}");
    }
    let one = machine(vec![gpu(0, "NVIDIA L40S", "8.9", Some(0))], vec![], &[]);
    assert_eq!(ids(&with(one, IommuMode::Translated)), Vec::<String>::new());
    let nvlink = machine(two(), vec![pair(0, 1, LinkKind::Nvlink { links: 4 }, Some(P2pStatus::Ok))], &[]);
    assert_eq!(ids(&with(nvlink, IommuMode::Translated)), Vec::<String>::new());
    let gns = machine(two(), vec![pair(0, 1, LinkKind::Phb, Some(P2pStatus::GpuNotSupported))], &[]);
    assert_eq!(ids(&with(gns, IommuMode::Translated)), ["topology.peer_access_not_offered_by_gpu"]);
    // P2P already reported blocked on a switch: one finding, the IOMMU line added to its evidence.
    let cns = machine(two(), vec![pair(0, 1, LinkKind::Pix, Some(P2pStatus::ChipsetNotSupported))], &[]);
    let m = with(cns, IommuMode::Translated);
    assert_eq!(ids(&m), ["topology.peer_access_blocked"]);
    assert!(m.finding("topology.peer_access_blocked").evidence.iter().any(|e| e.starts_with("IOMMU translates")));
}

#[test]
fn replay_or_recovery_errors_on_a_link_are_the_nvlink_errors_finding() {
    use gpu_doctor_model::NvLinkErrors;
    let counted = |replay: u64, recovery: u64, crc: u64| {
        let mut g = gpu(0, "NVIDIA H100 80GB HBM3", "9.0", Some(0));
        g.nvlink_errors = vec![
            NvLinkErrors { link: 0, replay: Some(0), recovery: Some(0), crc: Some(0) },
            NvLinkErrors { link: 5, replay: Some(replay), recovery: Some(recovery), crc: Some(crc) },
        ];
        machine(vec![g], vec![], &[])
    };
    assert_eq!(ids(&counted(0, 0, 0)), Vec::<String>::new());
    assert_eq!(ids(&counted(0, 0, 500)), Vec::<String>::new(), "CRC alone is judged by rate, not by one reading");
    for (replay, recovery) in [(3, 0), (0, 1)] {
        let m = counted(replay, recovery, 7);
        assert_eq!(ids(&m), ["topology.nvlink_errors"], "{replay} {recovery}");
        let f = m.finding("topology.nvlink_errors");
        assert_eq!(f.severity, gpu_doctor_model::Severity::Warning);
        assert_eq!(
            f.evidence,
            [format!("GPU 0 (NVIDIA H100 80GB HBM3) link 5: {replay} replay, {recovery} recovery error(s), 7 CRC")]
        );
    }
}

/// NCCL's troubleshooting guide: peer traffic that hangs or crawls, worked around with NCCL_P2P_DISABLE, is
/// ACS or the IOMMU on PCIe; not where NVLink joins the GPUs, nor with one GPU, nor set to 0.
#[test]
fn nccl_p2p_turned_off_on_pcie_gpus_is_the_blocked_finding() {
    let two =
        || vec![gpu(0, "NVIDIA GeForce RTX 4090", "8.9", Some(0)), gpu(1, "NVIDIA GeForce RTX 4090", "8.9", Some(0))];
    let with =
        |link: LinkKind, value: &str| machine(two(), vec![pair(0, 1, link, None)], &[]).env("NCCL_P2P_DISABLE", value);
    let m = with(LinkKind::Pxb, "1");
    assert_eq!(ids(&m), ["topology.peer_access_blocked"]);
    let fix = m.finding("topology.peer_access_blocked").fix.unwrap_or_default();
    assert!(fix.contains("ACSCtl") && fix.contains("iommu=pt") && fix.contains("intel_iommu=off"), "{fix}");
    assert_eq!(ids(&with(LinkKind::Pxb, "0")), Vec::<String>::new());
    assert_eq!(ids(&with(LinkKind::Nvlink { links: 4 }, "1")), Vec::<String>::new());
    let one =
        machine(vec![gpu(0, "NVIDIA GeForce RTX 4090", "8.9", Some(0))], vec![], &[]).env("NCCL_P2P_DISABLE", "1");
    assert_eq!(ids(&one), Vec::<String>::new());
}

/// The GPUs a text says in words count for the same finding where it lists none: Lightning-AI/pytorch-lightning#16614's
/// title and #19425's answer (verbatim); a run said to use one GPU does not.
#[test]
fn nccl_p2p_turned_off_on_gpus_said_in_words_is_the_blocked_finding() {
    const ID: &str = "topology.peer_access_blocked";
    let text = "Freezed when running the example code with more than 2 GPUs (DDP)\n\
                @awaelchli Thank you for your help. Setting `NCCL_P2P_DISABLE=1` did indeed resolve the problem.";
    let f = super::pasted_findings(text).into_iter().find(|f| f.id == ID).expect("P2P turned off on 3 GPUs");
    assert!(f.evidence.iter().any(|e| e == "3 GPUs, as the text says in words"), "{f:#?}");
    let one = text.replace("with more than 2 GPUs", "on 1 GPU");
    assert!(!super::pasted_ids(&one).contains(&ID.to_owned()), "{:?}", super::pasted_ids(&one));
}

/// CUDA's 217 between GPUs that are GeForce boards or not listed is the GPUs' own lack of peer access, with the
/// switches that route around it (the line as NCCL's shared-memory transport prints it, quoted in NVIDIA/nccl#1838);
/// beside a list of data-centre GPUs it stays the catalogue's line.
#[test]
fn cudas_peer_access_unsupported_on_geforce_or_unlisted_gpus_is_the_gpus_lack_of_p2p() {
    const ID: &str = "topology.peer_access_not_offered_by_gpu";
    let line =
        "transport/shm.cc:590 NCCL WARN Cuda failure 217 'peer access is not supported between these two devices'";
    let f = super::pasted_findings(line).into_iter().find(|f| f.id == ID).expect("no list: the GPUs' lack");
    let fix = f.fix.unwrap_or_default();
    assert!(fix.contains("NCCL_P2P_DISABLE=1") && fix.contains("--disable-custom-all-reduce"), "{fix}");
    let geforce = format!(
        "GPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-1a8c1f5e-1f3b-2c4d-9e8f-0a1b2c3d4e5f)\n\
         GPU 1: NVIDIA GeForce RTX 4090 (UUID: GPU-2b9d2a6f-2a4c-3d5e-8f9a-1b2c3d4e5f6a)\n{line}"
    );
    assert!(super::pasted_ids(&geforce).contains(&ID.to_owned()), "{:?}", super::pasted_ids(&geforce));
    let a100 = format!(
        "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-6a8c1f5e-1f3b-2c4d-9e8f-0a1b2c3d4e5f)\n\
         GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-7b9d2a6f-2a4c-3d5e-8f9a-1b2c3d4e5f6a)\n{line}"
    );
    let ids = super::pasted_ids(&a100);
    assert!(
        !ids.contains(&ID.to_owned()) && ids.contains(&"observed.cuda.peer_access_unsupported".to_owned()),
        "{ids:?}"
    );
    // A professional RTX board offers P2P: its 217 is not the GPU's lack of it; a GeForce named without the brand is.
    let a6000 = a100.replace("NVIDIA A100-SXM4-80GB", "RTX A6000");
    assert!(!super::pasted_ids(&a6000).contains(&ID.to_owned()), "{:?}", super::pasted_ids(&a6000));
}

/// Remapping faults from two devices with no GPU list are GPUs whose peer traffic the IOMMU refused; from one
/// device they say nothing of peers.
#[test]
fn remapping_faults_from_two_devices_are_peer_traffic_the_iommu_refused() {
    const ID: &str = "topology.peer_access_blocked";
    let fault = |bus: &str| {
        format!(
            "DMAR: [DMA Write NO_PASID] Request device [{bus}] fault addr 0xf8000000 [fault reason 0x05] PTE Write \
             access is not set\n"
        )
    };
    let two = format!("{}{}", fault("41:00.0"), fault("81:00.0"));
    let f = super::pasted_findings(&two).into_iter().find(|f| f.id == ID).expect("two devices");
    assert!(f.evidence.iter().any(|e| e.contains("2 devices whose DMA the IOMMU refused")), "{f:#?}");
    assert!(!super::pasted_ids(&fault("41:00.0")).contains(&ID.to_owned()));
}

/// A multi-GPU run said to hang (brandleyzhou/DIFFNet#10's title) is the peer-to-peer suspect, with
/// NCCL_P2P_DISABLE=1 as the test: the words `multi-GPU` put two or more GPUs in the run. On a machine said to have
/// one GPU, nothing; nor for a strategy's name alone (it runs on one GPU too) unless the machine has two.
#[test]
fn a_multi_gpu_hang_in_words_on_two_gpus_suspects_peer_traffic() {
    const ID: &str = "topology.peer_access_blocked";
    let text = "Multi-GPU training hangs\nI have two GPUs on the machine.";
    let f = super::pasted_findings(text).into_iter().find(|f| f.id == ID).expect("two GPUs");
    assert!(f.fix.as_deref().is_some_and(|x| x.contains("NCCL_P2P_DISABLE=1") && x.contains("ACSCtl")), "{f:#?}");
    assert!(!super::pasted_ids("Multi-GPU training hangs\nI only have one GPU.").contains(&ID.to_owned()));
    assert!(super::pasted_ids("Multi-GPU training hangs").contains(&ID.to_owned()));
    let strategy = "`tf.distribute.MirroredStrategy` is stuck.";
    assert!(!super::pasted_ids(strategy).contains(&ID.to_owned()));
    assert!(super::pasted_ids(&format!("{strategy}\nI have two GPUs on the machine.")).contains(&ID.to_owned()));
}

/// TensorFlow's interconnect matrix of four RTX 2080 Ti, every pair `N` (tensorflow/tensorflow#24677, its
/// lines): GeForce boards since Turing offer no P2P over PCIe. The same matrix of data-centre boards or of
/// Pascal GeForce boards, which do offer it, is left to the other checks.
#[test]
fn cudas_no_peer_access_between_geforce_boards_since_turing_is_theirs() {
    let matrix = "2019-01-03 07:07:31.374026: I tensorflow/core/common_runtime/gpu/gpu_device.cc:971] Device interconnect StreamExecutor with strength 1 edge matrix:\n\
                  2019-01-03 07:07:31.374063: I tensorflow/core/common_runtime/gpu/gpu_device.cc:977]      0 1 \n\
                  2019-01-03 07:07:31.374070: I tensorflow/core/common_runtime/gpu/gpu_device.cc:990] 0:   N N \n\
                  2019-01-03 07:07:31.374075: I tensorflow/core/common_runtime/gpu/gpu_device.cc:990] 1:   N N \n";
    let device = |i: u32, name: &str, cc: &str| {
        format!(
            "2019-01-03 07:07:31.374707: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1103] Created TensorFlow device (/job:localhost/replica:0/task:0/device:GPU:{i} with 9854 MB memory) -> physical GPU (device: {i}, name: {name}, pci bus id: 0000:0{}:00.0, compute capability: {cc})\n",
            i + 5
        )
    };
    let with = |name: &str, cc: &str| format!("{matrix}{}{}", device(0, name, cc), device(1, name, cc));
    let findings = super::pasted_findings(&with("GeForce RTX 2080 Ti", "7.5"));
    let f = findings.iter().find(|f| f.id == "topology.peer_access_not_offered_by_gpu").unwrap();
    assert!(f.evidence.iter().any(|e| e == "CUDA: GPU 0 cannot access GPU 1's memory"), "{f:#?}");
    assert!(f.summary.contains("2 ordered pair(s)"), "{}", f.summary);
    for (name, cc) in [("Tesla V100-SXM2-16GB", "7.0"), ("GeForce GTX 1080 Ti", "6.1")] {
        let ids = super::pasted_ids(&with(name, cc));
        assert!(!ids.iter().any(|i| i == "topology.peer_access_not_offered_by_gpu"), "{name}: {ids:?}");
    }
    // A `Y` pair is access CUDA gives.
    let yes = with("GeForce RTX 2080 Ti", "7.5").replace("0:   N N", "0:   N Y").replace("1:   N N", "1:   Y N");
    assert!(!super::pasted_ids(&yes).iter().any(|i| i == "topology.peer_access_not_offered_by_gpu"));
}

/// CUDA's no as NCCL and nvbandwidth print it, beside the GPU list (NVIDIA/nccl#1516's `nvidia-smi -L` and NCCL INFO
/// lines; NVIDIA/nvbandwidth#13's run): GeForce boards since Turing, the boards' lack; data-centre boards are left
/// to the other checks; DistServe's words for CUDA's 217 with no GPU listed are the 217 finding.
#[test]
fn cudas_no_as_nccl_and_nvbandwidth_print_it_between_geforce_boards() {
    let nccl = |name: &str| {
        format!(
            "GPU 0: NVIDIA {name} (UUID: GPU-c2927e9a-08b2-a1cd-17a1-092a418bac6e)\n\
             GPU 1: NVIDIA {name} (UUID: GPU-9d7f82f3-c503-8ee9-26f2-424ddefe47e2)\n\
             ault44:1424216:1424273 [1] NCCL INFO Could not enable P2P between dev 1(=81000) and dev 0(=41000)\n\
             ault44:1424216:1424273 [1] NCCL INFO Channel 00 : 3[81000] -> 2[41000] via SHM/direct/direct\n"
        )
    };
    let found = super::pasted_findings(&nccl("GeForce RTX 3090"));
    let f = found
        .iter()
        .find(|f| f.id == "topology.peer_access_not_offered_by_gpu")
        .unwrap_or_else(|| panic!("{found:#?}"));
    assert!(f.explains.contains(&"observed.nccl.p2p_not_enabled".to_owned()), "{f:#?}");
    assert_eq!(f.severity, gpu_doctor_model::Severity::Info);
    let ids = super::pasted_ids(&nccl("A100-SXM4-80GB"));
    assert!(!ids.contains(&"topology.peer_access_not_offered_by_gpu".to_owned()), "{ids:?}");
    assert!(ids.contains(&"observed.nccl.p2p_not_enabled".to_owned()), "{ids:?}");
    let nvbandwidth = "nvbandwidth Version: v0.2\nCUDA Driver Version: 12000\nDriver Version: 525.125.06\n\n\
                       Device 0: NVIDIA GeForce RTX 2080 Ti\nDevice 1: NVIDIA GeForce RTX 2080 Ti\n\n\
                       Waiving device_to_device_memcpy_write_ce.\n";
    assert!(super::pasted_ids(nvbandwidth).contains(&"topology.peer_access_not_offered_by_gpu".to_owned()));
    let distserve = "(ParaWorker pid=1955026) Error: Peer-to-peer access is unsupported on this platform.\n";
    assert!(super::pasted_ids(distserve).contains(&"topology.peer_access_not_offered_by_gpu".to_owned()));
}

/// A multi-GPU hang the text ties to NVLink (NVIDIA/nccl#557's description, verbatim) is the NVLink finding, with
/// the bridge to reseat; the same hang without NVLink is not.
#[test]
fn a_hang_tied_to_nvlink_is_the_nvlink_finding() {
    let text = "Horovod was not working for me. It was getting stuck in variable broadcast step. I have isolated the problem to NCCL/NVLINK. Here are the details. Please help!!";
    let f = super::pasted_findings(text).into_iter().find(|f| f.id == "topology.nvlink_down").expect("NVLink named");
    assert!(f.fix.as_deref().is_some_and(|x| x.contains("nvidia-smi nvlink -s") && x.contains("reseat")), "{f:#?}");
    let ids = super::pasted_ids(&text.replace("NCCL/NVLINK", "NCCL"));
    assert!(!ids.contains(&"topology.nvlink_down".to_owned()), "{ids:?}");
}

/// Peer traffic said to be slow (the words of stackoverflow.com/questions/59690008) between GPUs nvidia-smi -L lists
/// (aikitoria/open-gpu-kernel-modules#8's two RTX 4090 lines): GeForce boards since Turing offer no P2P, so it is
/// theirs; between data-centre boards, the peer-to-peer suspect.
#[test]
fn slow_peer_traffic_between_geforce_boards_is_their_lack_of_p2p() {
    let slow = "Multi-GPU peer to peer slow between particular pairs\n";
    let geforce = "GPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-e7ef4627-74b0-908a-1b24-cdefb9ad4d11)\n\
                   GPU 1: NVIDIA GeForce RTX 4090 (UUID: GPU-1b36253b-41fa-d8cc-a12f-309a5e368f68)\n";
    let ids = super::pasted_ids(&format!("{geforce}{slow}"));
    assert!(ids.contains(&"topology.peer_access_not_offered_by_gpu".to_owned()), "{ids:?}");
    assert!(!ids.contains(&"topology.peer_access_blocked".to_owned()), "{ids:?}");
    let a100 = geforce.replace("GeForce RTX 4090", "A100-SXM4-40GB");
    let ids = super::pasted_ids(&format!("{a100}{slow}"));
    assert!(ids.contains(&"topology.peer_access_blocked".to_owned()), "{ids:?}");
}

/// Accelerate's refusal on several GeForce RTX 40 boards (zai-org/GLM-4#487's line, verbatim) is the GPUs' lack of peer
/// access, with NCCL_P2P_DISABLE and NCCL_IB_DISABLE in the fix, not CUDA's 217.
#[test]
fn accelerates_refusal_on_rtx_40_boards_is_no_peer_access() {
    let text = "NotImplementedError: Using RTX 4000 series doesn't support faster communication broadband via P2P or \
                IB. Please set `NCCL_P2P_DISABLE=\"1\"` and `NCCL_IB_DISABLE=\"1\" or use `accelerate \n";
    let found = super::pasted_findings(text);
    let f = found.iter().find(|f| f.id == "topology.peer_access_not_offered_by_gpu").expect("the finding");
    assert!(f.summary.starts_with("Accelerate refused"), "{f:#?}");
    let fix = super::words(f).unwrap();
    assert!(fix.contains("NCCL_P2P_DISABLE=1") && fix.contains("NCCL_IB_DISABLE=1"), "{fix}");
    assert!(!f.evidence.iter().any(|e| e.contains("217")), "{f:#?}");
}
