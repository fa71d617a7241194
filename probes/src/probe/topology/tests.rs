use super::*;
use crate::host::{CmdOutput, CommandRecord, Fixture, NvmlAnswer, NvmlPair, NvmlTopoDevice, ReplayHost};
use gpu_doctor_model::{ComputeCapability, cpu_list};
use gpu_doctor_model::{MigInstance, NvLink, Platform};

const R5090: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_topo/2x5090-topo-m.txt"));
const R5090_P2P: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_topo/2x5090-topo-p2p.txt"));
const MIG: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_topo/a100-mig-list.txt"));

fn gpu(index: u32, name: &str, cc: (u32, u32), bus: &str) -> Gpu {
    Gpu {
        index,
        name: Some(name.into()),
        uuid: Some(format!("GPU-{index}{index}{index}{index}0000-aaaa-bbbb-cccc-0123456789ab")),
        pci_bus_id: Some(bus.into()),
        compute_capability: Some(ComputeCapability { major: cc.0, minor: cc.1 }),
        ..Gpu::default()
    }
}

fn linux() -> Fixture {
    let mut f = Fixture::new(Platform { os: OsFamily::Linux, arch: "x86_64".into() });
    f.env.insert("PATH".into(), "/usr/bin".into());
    f
}

fn answer(f: &mut Fixture, argv: &[&str], stdout: &str) {
    f.commands.push(CommandRecord {
        argv: argv.iter().map(|a| (*a).to_owned()).collect(),
        output: Some(CmdOutput { status: Some(0), stdout: stdout.into(), stderr: String::new() }),
        error: None,
    });
}

fn run(f: Fixture, gpus: &[Gpu], env: &EnvFacts) -> (Topology, String, Trace) {
    let nvml = match &f.nvml {
        NvmlAnswer::Report(r) => Ok(r.clone()),
        NvmlAnswer::Error(e) => Err(HostError::Unavailable { message: e.clone() }),
    };
    let host = ReplayHost::new(f);
    let mut trace = Trace::new("topology");
    match probe(&host, &nvml, Some(gpus), env, &mut trace) {
        Probed::Found { value, source } => (value, source, trace),
        other => panic!("{other:?}"),
    }
}

fn no_unrecorded(trace: &Trace) {
    let entries = trace.clone().into_entries();
    assert!(entries.iter().all(|e| !e.detail.contains("not recorded")), "{entries:#?}");
}

#[test]
fn nvml_answers_make_nvlink_pairs_and_affinity() {
    let gpus = [
        gpu(0, "NVIDIA H100 80GB HBM3", (9, 0), "0000:18:00.0"),
        gpu(1, "NVIDIA H100 80GB HBM3", (9, 0), "0000:2a:00.0"),
    ];
    // HGX: every link ends at an NVSwitch, so nvidia-smi counts all of a GPU's active links.
    let links = |n: u32| {
        (0..n).map(|link| NvLink {
            link,
            active: true,
            version: Some(4),
            remote_bus_id: Some("00000000:05:00.0".into()),
        })
    };
    let device = |index: u32, numa: u32, cpus: &str| NvmlTopoDevice {
        index,
        numa_node: Some(numa),
        cpu_affinity: Some(cpus.into()),
        nvlinks: links(18).collect(),
        ..NvmlTopoDevice::default()
    };
    let pair = NvmlPair {
        a: 0,
        b: 1,
        pcie: Some(LinkKind::Sys),
        p2p_nvlink: Some(P2pStatus::Ok),
        p2p_read: Some(P2pStatus::Ok),
        p2p_write: Some(P2pStatus::Ok),
        p2p_atomics: Some(P2pStatus::Ok),
        ..NvmlPair::default()
    };
    let mut f = linux();
    f.nvml = NvmlAnswer::Report(NvmlReport {
        topology: Some(NvmlTopology {
            devices: vec![device(0, 0, "0-55,112-167"), device(1, 1, "56-111,168-223")],
            pairs: vec![pair],
        }),
        ..NvmlReport::default()
    });
    // sysfs says otherwise for GPU 0: NVML's answer is kept.
    let dir = "/sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0";
    f.links.insert("/sys/bus/pci/devices/0000:18:00.0".into(), format!("../../..{}", &dir[4..]));
    f.files.insert(format!("{dir}/numa_node"), "3\n".into());
    f.files.insert(format!("{dir}/local_cpulist"), "0-3\n".into());
    let (t, source, trace) = run(f, &gpus, &EnvFacts::default());
    no_unrecorded(&trace);
    assert_eq!(source, "nvml");
    assert_eq!((t.gpus[0].numa_node, t.gpus[0].cpu_affinity.as_deref()), (Some(0), Some("0-55,112-167")));
    assert_eq!(t.pair(1, 0).map(|p| p.link), Some(LinkKind::Nvlink { links: 18 }));
    assert_eq!(t.pairs[0].p2p_atomics, Some(P2pStatus::Ok));
    assert_eq!((t.gpus[1].numa_node, t.gpus[1].cpu_affinity.as_deref()), (Some(1), Some("56-111,168-223")));
    assert_eq!(t.gpus[1].affinity_from, "nvml");
    assert_eq!(t.gpus[0].nvlinks.len(), 18);
}

#[test]
fn direct_nvlinks_are_counted_between_the_two_gpus() {
    let gpus = [gpu(0, "A", (8, 0), "0000:01:00.0"), gpu(1, "A", (8, 0), "0000:02:00.0")];
    let device = |index: u32, remote: &str| NvmlTopoDevice {
        index,
        nvlinks: (0..4)
            .map(|link| NvLink { link, active: link < 3, version: Some(3), remote_bus_id: Some(remote.into()) })
            .collect(),
        ..NvmlTopoDevice::default()
    };
    let pair =
        NvmlPair { a: 0, b: 1, pcie: Some(LinkKind::Phb), p2p_nvlink: Some(P2pStatus::Ok), ..NvmlPair::default() };
    let mut f = linux();
    f.nvml = NvmlAnswer::Report(NvmlReport {
        topology: Some(NvmlTopology {
            devices: vec![device(0, "00000000:02:00.0"), device(1, "00000000:01:00.0")],
            pairs: vec![pair.clone(), NvmlPair { p2p_nvlink: Some(P2pStatus::NotSupported), ..pair }],
        }),
        ..NvmlReport::default()
    });
    let (t, _, _) = run(f, &gpus, &EnvFacts::default());
    assert_eq!(t.pairs[0].link, LinkKind::Nvlink { links: 3 }, "the inactive link does not count");
    assert_eq!(t.pairs[1].link, LinkKind::Phb, "without NVLink P2P, the PCIe path");
}

#[test]
fn without_nvml_topology_nvidia_smi_gives_the_matrix_and_p2p() {
    let gpus = [
        gpu(0, "NVIDIA GeForce RTX 5090", (12, 0), "0000:01:00.0"),
        gpu(1, "NVIDIA GeForce RTX 5090", (12, 0), "0000:41:00.0"),
    ];
    let mut f = linux();
    f.files.insert("/usr/bin/nvidia-smi".into(), String::new());
    f.nvml = NvmlAnswer::Report(NvmlReport::default());
    answer(&mut f, &["/usr/bin/nvidia-smi", "topo", "-m"], R5090);
    answer(&mut f, &["/usr/bin/nvidia-smi", "topo", "-p2p", "r"], R5090_P2P);
    answer(&mut f, &["/usr/bin/nvidia-smi", "topo", "-p2p", "w"], R5090_P2P);
    let (t, source, trace) = run(f, &gpus, &EnvFacts::default());
    no_unrecorded(&trace);
    assert_eq!(source, "nvidia-smi");
    assert_eq!(t.pairs.len(), 1);
    let p = &t.pairs[0];
    assert_eq!(
        (p.link, p.p2p_read, p.p2p_write),
        (LinkKind::Phb, Some(P2pStatus::GpuNotSupported), Some(P2pStatus::GpuNotSupported))
    );
    assert_eq!((t.gpus[0].numa_node, t.gpus[0].cpu_affinity.as_deref()), (Some(0), Some("0-63")));
    assert_eq!(t.gpus[0].affinity_from, "nvidia-smi topo -m");
}

#[test]
fn a_refusing_nvidia_smi_is_traced_and_leaves_no_pairs() {
    let gpus = [gpu(0, "A", (8, 0), "0000:01:00.0"), gpu(1, "A", (8, 0), "0000:02:00.0")];
    let mut f = linux();
    f.files.insert("/usr/bin/nvidia-smi".into(), String::new());
    for args in [&["topo", "-m"][..], &["topo", "-p2p", "r"], &["topo", "-p2p", "w"]] {
        let argv: Vec<String> =
            std::iter::once("/usr/bin/nvidia-smi").chain(args.iter().copied()).map(str::to_owned).collect();
        f.commands.push(CommandRecord {
            argv,
            output: Some(CmdOutput {
                status: Some(4),
                stdout: String::new(),
                stderr: "Insufficient Permissions".into(),
            }),
            error: None,
        });
    }
    let (t, source, trace) = run(f, &gpus, &EnvFacts::default());
    assert!(t.pairs.is_empty());
    assert_eq!(source, "the gpus probe");
    let entries = trace.into_entries();
    assert!(entries.iter().any(|e| e.detail.contains("Insufficient Permissions")), "{entries:#?}");
}

#[test]
fn mig_devices_come_from_nvidia_smi_list() {
    let mut a100 = gpu(0, "NVIDIA A100-SXM4-80GB", (8, 0), "0000:07:00.0");
    a100.mig_enabled = Some(true);
    let mut f = linux();
    f.files.insert("/usr/bin/nvidia-smi".into(), String::new());
    answer(&mut f, &["/usr/bin/nvidia-smi", "-L"], MIG);
    let (t, _, trace) = run(f, &[a100], &EnvFacts::default());
    no_unrecorded(&trace);
    let mig = t.gpus[0].mig.clone().unwrap();
    assert!(mig.enabled);
    let instances = mig.instances.unwrap();
    assert_eq!(instances.len(), 7);
    assert_eq!(
        instances[0],
        MigInstance {
            device: 0,
            profile: Some("1g.10gb".into()),
            uuid: Some("MIG-feb88891-0321-5fef-9c87-d4af3b54259e".into())
        }
    );
}

#[test]
fn a_single_gpu_without_mig_asks_nvidia_smi_nothing() {
    let mut f = linux();
    f.files.insert("/usr/bin/nvidia-smi".into(), String::new());
    let (t, _, trace) = run(f, &[gpu(0, "A", (8, 9), "0000:01:00.0")], &EnvFacts::default());
    no_unrecorded(&trace);
    assert!(t.pairs.is_empty());
    assert!(trace.into_entries().iter().all(|e| !e.method.starts_with("nvidia-smi")));
}

#[test]
fn sysfs_gives_numa_node_and_local_cpus() {
    let mut f = linux();
    let dir = "/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0";
    f.links.insert("/sys/bus/pci/devices/0000:81:00.0".into(), format!("../../..{}", &dir[4..]));
    f.files.insert(format!("{dir}/numa_node"), "1\n".into());
    f.files.insert(format!("{dir}/local_cpulist"), "16-31,48-63\n".into());
    let (t, source, _) = run(f, &[gpu(0, "A", (8, 9), "00000000:81:00.0")], &EnvFacts::default());
    assert_eq!(source, "sysfs");
    assert_eq!((t.gpus[0].numa_node, t.gpus[0].cpu_affinity.as_deref()), (Some(1), Some("16-31,48-63")));
    let mut f = linux();
    f.files.insert(format!("{dir}/numa_node"), "-1\n".into());
    f.links.insert("/sys/bus/pci/devices/0000:81:00.0".into(), format!("../../..{}", &dir[4..]));
    let (t, _, _) = run(f, &[gpu(0, "A", (8, 9), "0000:81:00.0")], &EnvFacts::default());
    assert_eq!((t.gpus[0].numa_node, t.gpus[0].affinity_from.as_str()), (None, "none"), "-1 is no node");
}

#[test]
fn no_gpu_is_absent_with_a_reason() {
    let host = ReplayHost::new(linux());
    let mut trace = Trace::new("topology");
    let p = probe(&host, &Ok(NvmlReport::default()), Some(&[]), &EnvFacts::default(), &mut trace);
    assert!(p.why_not().is_some_and(|w| w.contains("no GPU")), "{p:?}");
}

#[test]
fn cpu_lists_fold_runs_into_ranges() {
    assert_eq!(cpu_list([0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
    assert_eq!(cpu_list([]), "");
    assert_eq!(cpu_list([5]), "5");
}

fn env(vars: &[(&str, &str)]) -> EnvFacts {
    EnvFacts { vars: vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(), ..EnvFacts::default() }
}

/// A GTX 1080 in the first slot and an RTX 4090 in the second: CUDA's default order puts the 4090 first.
fn mixed() -> [Gpu; 2] {
    [
        gpu(0, "NVIDIA GeForce GTX 1080", (6, 1), "0000:01:00.0"),
        gpu(1, "NVIDIA GeForce RTX 4090", (8, 9), "0000:02:00.0"),
    ]
}

#[test]
fn cuda_puts_the_faster_gpu_first_unless_told_pci_order() {
    let (t, _, _) = run(linux(), &mixed(), &EnvFacts::default());
    let o = &t.cuda_order;
    assert_eq!(
        (o.fastest_first.as_slice(), o.effective.as_slice(), o.with_pci_bus_id.as_slice()),
        (&[1, 0][..], &[1, 0][..], &[0, 1][..])
    );
    assert!(o.order_changes_indices());
    let (t, _, _) = run(linux(), &mixed(), &env(&[("CUDA_DEVICE_ORDER", "PCI_BUS_ID")]));
    assert_eq!(t.cuda_order.effective, [0, 1]);
    assert!(!t.cuda_order.order_changes_indices());
    let same = [gpu(0, "A", (8, 0), "0000:01:00.0"), gpu(1, "A", (8, 0), "0000:02:00.0")];
    let (t, _, _) = run(linux(), &same, &EnvFacts::default());
    assert!(!t.cuda_order.order_changes_indices(), "equal GPUs keep PCI order");
    let newer = [gpu(0, "RTX 4090", (8, 9), "0000:01:00.0"), gpu(1, "RTX 5090", (12, 0), "0000:02:00.0")];
    let (t, _, _) = run(linux(), &newer, &EnvFacts::default());
    assert_eq!(t.cuda_order.fastest_first, [1, 0], "12.0 ranks above 8.9: numbers, not text");
}

#[test]
fn visible_devices_index_cudas_order_or_name_uuids() {
    let (t, _, _) = run(linux(), &mixed(), &env(&[("CUDA_VISIBLE_DEVICES", "0")]));
    assert_eq!((t.cuda_order.effective.as_slice(), t.cuda_order.with_pci_bus_id.as_slice()), (&[1][..], &[0][..]));
    let (t, _, _) = run(linux(), &mixed(), &env(&[("CUDA_VISIBLE_DEVICES", "GPU-0000")]));
    assert_eq!(t.cuda_order.effective, [0], "a UUID prefix names the GPU whatever the order");
    assert!(!t.cuda_order.order_changes_indices());
    let (t, _, _) = run(linux(), &mixed(), &env(&[("CUDA_VISIBLE_DEVICES", "1,7,0")]));
    assert_eq!((t.cuda_order.effective.as_slice(), t.cuda_order.unmatched.as_deref()), (&[0][..], Some("7")));
    let (t, _, _) = run(linux(), &mixed(), &env(&[("CUDA_VISIBLE_DEVICES", "")]));
    assert!(t.cuda_order.effective.is_empty() && t.cuda_order.unmatched.is_none());
}

#[test]
fn only_calls_that_failed_become_notes_not_features_a_gpu_lacks() {
    let mut unreported = std::collections::BTreeMap::new();
    unreported.insert(
        "nvlink_is_active".to_owned(),
        "the requested operation is not available on the target device".to_owned(),
    );
    unreported.insert(
        "cpu_affinity".to_owned(),
        "the current user does not have permission to perform this operation".to_owned(),
    );
    let mut f = linux();
    f.nvml = NvmlAnswer::Report(NvmlReport {
        topology: Some(NvmlTopology {
            devices: vec![NvmlTopoDevice { index: 0, unreported, ..NvmlTopoDevice::default() }],
            pairs: Vec::new(),
        }),
        ..NvmlReport::default()
    });
    let (t, _, _) = run(f, &[gpu(0, "NVIDIA GeForce RTX 4090", (8, 9), "0000:01:00.0")], &EnvFacts::default());
    assert_eq!(
        t.notes,
        [
            "GPU 0: NVML did not answer cpu_affinity: the current user does not have permission to perform this operation"
        ]
    );
}
