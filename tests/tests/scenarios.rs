//! Replay scenarios: each `tests/fixtures/<name>/host.json` is a recorded (or hand-written) machine;
//! its snapshot is compared with the stored JSON snapshot in `tests/snapshots/`.
//!
//! To accept a changed snapshot after reviewing it: `INSTA_UPDATE=always cargo test -p gpu-doctor-tests`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use Severity::{Error, Info, Warning};
use gpu_doctor_judge::diagnose::diagnose;
use gpu_doctor_kb::Kb;
use gpu_doctor_model::{FrameworkBuild, LinkKind, P2pStatus, SecureBoot, ToolkitKind};
use gpu_doctor_model::{Probed, Severity, Snapshot};
use gpu_doctor_probes::host::ReplayHost;
use gpu_doctor_probes::probe::{Options, collect};
use gpu_doctor_tests::fixtures_dir;

fn scenario(name: &str) -> Snapshot {
    let host = ReplayHost::load(&fixtures_dir().join(name)).unwrap();
    let snap = collect(&host, &Options::default());
    let unrecorded: Vec<_> = snap.trace.iter().filter(|t| t.detail.contains("not recorded")).collect();
    assert!(unrecorded.is_empty(), "{name}: the fixture misses answers the probes asked for: {unrecorded:#?}");
    snap
}

fn check(name: &str) -> Snapshot {
    let snap = scenario(name);
    insta::assert_json_snapshot!(name, snap, { ".tool_version" => "[version]" });
    snap
}

/// The ids of a snapshot's findings, sorted; `(id, severity)` pairs keep a changed severity visible.
fn finding_ids(s: &Snapshot) -> Vec<(String, Severity)> {
    let mut ids: Vec<(String, Severity)> =
        diagnose(s, Kb::get().unwrap()).into_iter().map(|f| (f.id, f.severity)).collect();
    ids.sort();
    ids
}

fn expect_findings(s: &Snapshot, want: &[(&str, Severity)]) {
    let want: Vec<(String, Severity)> = want.iter().map(|(id, sev)| ((*id).to_owned(), *sev)).collect();
    assert_eq!(finding_ids(s), want);
}

#[test]
fn every_fixture_folder_has_a_test() {
    let mut names: Vec<String> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("host.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, SCENARIOS, "add a #[test] for each fixture folder (and list it in SCENARIOS)");
}

const SCENARIOS: &[&str] = &[
    "a10-row-remap-pending-xid79",
    "a100-ecc-row-remap-xid63",
    "consumer-gpu-torch-venv",
    "container-without-gpu",
    "docker-no-container-toolkit",
    "docker-toolkit-no-runtime",
    "egpu-thunderbolt",
    "gpu-no-driver",
    "h200-container-cu130",
    "hgx-h100-nvlink",
    "k8s-node-no-device-plugin",
    "mig-a100",
    "no-driver",
    "old-driver-nvml-gaps",
    "pcie-2x5090-no-p2p",
    "torch-cu130-on-r550",
    "two-socket-8x4090",
    "two-toolkits",
    "windows-wddm",
    "wsl2",
];

fn found<T>(p: &Probed<T>, what: &str) -> T
where
    T: Clone,
{
    match p {
        Probed::Found { value, .. } => value.clone(),
        other => panic!("{what} should be found, is {:?}", other.why_not()),
    }
}

fn absent_reason<T>(p: &Probed<T>, what: &str) -> String {
    match p {
        Probed::Absent { reason } => reason.clone(),
        other => panic!("{what} should be absent, is found: {}", other.why_not().is_none()),
    }
}

fn source<T>(p: &Probed<T>) -> &str {
    p.source().unwrap_or_default()
}

#[test]
fn no_driver() {
    let s = check("no-driver");
    expect_findings(&s, &[("presence.no_nvidia_gpu", Info)]);
    let why = absent_reason(&s.driver, "driver");
    assert!(why.contains("could not be loaded"), "{why}");
    assert!(why.contains("/proc/driver/nvidia/version does not exist"), "{why}");
    assert!(why.contains("nvidia-smi not found"), "{why}");
    absent_reason(&s.gpus, "gpus");
    let pci = absent_reason(&s.pci_devices, "pci");
    assert!(pci.contains("no NVIDIA display or 3D controller"), "{pci}");
    absent_reason(&s.links, "links");
    absent_reason(&s.toolkits, "toolkits");
    absent_reason(&s.cudnn, "cudnn");
    let module = found(&s.kernel_module, "kernel module");
    assert!(!module.nvidia_loaded && !module.nouveau_loaded);
    assert!(module.installed.is_none());
    let envs = found(&s.python_envs, "python");
    assert_eq!(envs.len(), 1, "{envs:#?}");
    assert_eq!(envs[0].name, "system:/usr/bin/python3");
    assert_eq!(envs[0].python_version.as_deref(), Some("3.12"));
    assert!(envs[0].frameworks.is_empty() && envs[0].cuda_wheels.is_empty());
    assert!(s.platform.wsl.is_none() && s.platform.container.is_none());
}

#[test]
fn gpu_no_driver() {
    let s = check("gpu-no-driver");
    expect_findings(&s, &[("link.below_max_idle", Info), ("presence.gpu_without_driver", Error)]);
    absent_reason(&s.driver, "driver");
    absent_reason(&s.gpus, "gpus");
    let pci = found(&s.pci_devices, "pci");
    assert_eq!(pci.len(), 1, "the HDMI audio function is not a GPU: {pci:#?}");
    assert_eq!((pci[0].bus_id.as_str(), pci[0].device_id, pci[0].class), ("0000:01:00.0", 0x2684, 0x030000));
    assert_eq!(pci[0].driver, None);
    let module = found(&s.kernel_module, "kernel module");
    assert!(module.nouveau_loaded && !module.nvidia_loaded);
    assert!(module.installed.is_none());
    assert!(module.installed_note.as_deref().unwrap().contains("Module nvidia not found"));
    assert_eq!(found(&s.secure_boot, "secure boot"), SecureBoot::Enabled);
    let links = found(&s.links, "links");
    assert_eq!((links[0].gen_max, links[0].width_max), (Some(4), Some(16)));
    assert_eq!(links[0].values_from, "sysfs");
    assert!(links[0].egpu.is_none());
}

#[test]
fn consumer_gpu_torch_venv() {
    let s = check("consumer-gpu-torch-venv");
    expect_findings(&s, &[("link.below_max_idle", Info), ("toolkits.versions_explained", Info)]);
    let driver = found(&s.driver, "driver");
    assert_eq!(driver.version.as_str(), "550.54.14");
    assert_eq!(driver.cuda_version.unwrap().to_string(), "12.4");
    assert_eq!(source(&s.driver), "nvml");
    let gpus = found(&s.gpus, "gpus");
    assert_eq!(gpus.len(), 1);
    assert_eq!(gpus[0].name.as_deref(), Some("NVIDIA GeForce RTX 4090"));
    assert_eq!(gpus[0].compute_capability.unwrap().to_string(), "8.9");
    assert_eq!(gpus[0].architecture.as_deref(), Some("Ada Lovelace"));
    assert_eq!(gpus[0].memory_total_bytes, Some(24 * 1024 * 1024 * 1024 - 12 * 1024 * 1024));
    assert_eq!(gpus[0].pci_bus_id.as_deref(), Some("0000:01:00.0"));
    let pci = found(&s.pci_devices, "pci");
    assert_eq!(pci.len(), 1);
    assert!(pci[0].has_nvidia_driver());
    let module = found(&s.kernel_module, "kernel module");
    assert!(module.nvidia_loaded && !module.nouveau_loaded);
    assert_eq!(module.loaded_version.as_deref(), Some("550.54.14"));
    assert_eq!(module.open_kernel_module, Some(false));
    assert_eq!(module.installed.unwrap().built_for_kernel.as_deref(), Some("6.5.0-41-generic"));
    let link = &found(&s.links, "links")[0];
    assert_eq!(
        (link.gen_current, link.gen_max, link.width_current, link.width_max),
        (Some(1), Some(4), Some(16), Some(16))
    );
    assert!(link.idle_note.is_some());
    assert!(link.egpu.is_none());
    assert!((link.theoretical_gbytes_per_s.unwrap() - 31.508).abs() < 0.01);

    let tk = found(&s.toolkits, "toolkits");
    let local = tk.install("/usr/local/cuda-12.4").expect("the /usr/local toolkit");
    assert_eq!(local.version.unwrap().to_string(), "12.4.1");
    assert_eq!(local.kind, ToolkitKind::Local);
    assert_eq!(tk.picks.path.as_ref().unwrap().install_root.as_deref(), Some("/usr/local/cuda-12.4"));
    assert_eq!(tk.picks.usr_local_cuda.as_ref().unwrap().install_root.as_deref(), Some("/usr/local/cuda-12.4"));
    assert_eq!(tk.picks.ld_library_path.as_ref().unwrap().install_root.as_deref(), Some("/usr/local/cuda-12.4"));
    let pip = tk.installs.iter().find(|i| i.kind == ToolkitKind::Pip).expect("the cuda-runtime wheel");
    assert_eq!(pip.version.unwrap().to_string(), "12.1.105");
    assert_eq!(tk.installs.len(), 2, "{:#?}", tk.installs);

    let envs = found(&s.python_envs, "python");
    let venv = envs.iter().find(|e| e.name == "venv:/home/user/proj/.venv").expect("the venv");
    assert_eq!(venv.python_version.as_deref(), Some("3.10.12"));
    let torch = venv.frameworks.iter().find(|f| f.name == "torch").expect("torch");
    assert_eq!(torch.version, "2.3.0+cu121");
    assert_eq!(torch.build, FrameworkBuild::Cuda { version: Some("12.1".into()) });
    let wheels: Vec<(&str, &str)> = venv.cuda_wheels.iter().map(|p| (p.name.as_str(), p.version.as_str())).collect();
    assert!(wheels.contains(&("nvidia-cudnn-cu12", "8.9.2.26")), "{wheels:?}");
    assert!(wheels.contains(&("nvidia-cuda-runtime-cu12", "12.1.105")), "{wheels:?}");
    let cudnn = found(&s.cudnn, "cudnn");
    assert_eq!(cudnn.len(), 1, "{cudnn:#?}");
    assert_eq!(cudnn[0].version.unwrap().to_string(), "8.9.2");
    assert_eq!(cudnn[0].cuda_major, Some(12));
}

#[test]
fn two_toolkits() {
    let s = check("two-toolkits");
    expect_findings(
        &s,
        &[
            ("health.persistence_off", Info),
            ("toolkits.names_disagree", Warning),
            ("toolkits.versions_explained", Info),
        ],
    );
    let tk = found(&s.toolkits, "toolkits");
    let roots: Vec<&str> = tk.installs.iter().map(|i| i.root.as_str()).collect();
    assert_eq!(roots.len(), 2, "{roots:?}");
    let distro = tk.install("/usr").expect("the distro toolkit");
    assert_eq!(distro.kind, ToolkitKind::Distro);
    assert_eq!(distro.version.unwrap().to_string(), "11.5.119");
    assert_eq!(distro.lib_dirs, ["/usr/lib/x86_64-linux-gnu"]);
    let local = tk.install("/usr/local/cuda-12.5").expect("CUDA 12.5");
    assert_eq!(local.version.unwrap().to_string(), "12.5.1");
    assert_eq!(tk.picks.path.as_ref().unwrap().named, "/usr/bin/nvcc");
    assert_eq!(tk.picks.path.as_ref().unwrap().install_root.as_deref(), Some("/usr"));
    assert_eq!(tk.picks.cuda_home.as_ref().unwrap().install_root.as_deref(), Some("/usr/local/cuda-12.5"));
    assert_eq!(tk.picks.usr_local_cuda.as_ref().unwrap().install_root.as_deref(), Some("/usr/local/cuda-12.5"));
    assert_eq!(tk.picked_roots(), ["/usr", "/usr/local/cuda-12.5"], "the picks disagree");
    let driver = found(&s.driver, "driver");
    assert_eq!(driver.version.as_str(), "535.183.01");
}

#[test]
fn wsl2() {
    let s = check("wsl2");
    expect_findings(&s, &[]);
    let wsl = s.platform.wsl.clone().expect("WSL");
    assert_eq!(wsl.version, 2);
    assert_eq!(wsl.distro.as_deref(), Some("Ubuntu"));
    assert!(wsl.driver_lib_dir_present);
    assert_eq!(wsl.libcuda_files, ["libcuda.so", "libcuda.so.1", "libcuda.so.1.1"]);
    let driver = found(&s.driver, "driver");
    assert_eq!(driver.version.as_str(), "555.97");
    assert_eq!(driver.cuda_version.unwrap().to_string(), "12.5");
    let gpus = found(&s.gpus, "gpus");
    assert_eq!(gpus[0].name.as_deref(), Some("NVIDIA GeForce RTX 4070"));
    assert_eq!(gpus[0].compute_capability.unwrap().to_string(), "8.9");
    absent_reason(&s.pci_devices, "pci");
    let module = found(&s.kernel_module, "kernel module");
    assert!(!module.nvidia_loaded && !module.nouveau_loaded);
    assert!(s.links.value().is_none());
}

#[test]
fn egpu_thunderbolt() {
    let s = check("egpu-thunderbolt");
    expect_findings(&s, &[("link.below_max_idle", Info), ("link.egpu_tunnel", Info)]);
    let gpus = found(&s.gpus, "gpus");
    assert_eq!(gpus[0].name.as_deref(), Some("NVIDIA GeForce RTX 3060"));
    assert_eq!(gpus[0].compute_capability.unwrap().to_string(), "8.6");
    assert_eq!(gpus[0].pci_bus_id.as_deref(), Some("0000:0a:00.0"));
    let links = found(&s.links, "links");
    assert_eq!(links.len(), 1);
    let link = &links[0];
    assert_eq!(
        link.pci_path,
        ["0000:00:1c.4", "0000:05:00.0", "0000:06:01.0", "0000:08:00.0", "0000:09:01.0", "0000:0a:00.0"]
    );
    assert_eq!((link.gen_max, link.width_max), (Some(3), Some(4)));
    let egpu = link.egpu.clone().expect("an eGPU");
    assert_eq!(egpu.tb_generation, Some(3));
    assert_eq!(egpu.device_name.as_deref(), Some("Razer Core X Chroma"));
    assert_eq!(egpu.vendor_name.as_deref(), Some("Razer"));
    assert_eq!(egpu.authorized, Some(true));
    assert_eq!(egpu.router.as_deref(), Some("0-1"));
    assert_eq!(egpu.link_gbps, Some(40.0));
    assert!(egpu.evidence.iter().any(|e| e.contains("Intel Thunderbolt bridge")), "{:?}", egpu.evidence);
    assert!(egpu.evidence.iter().any(|e| e.contains("domain0")), "{:?}", egpu.evidence);
    assert_eq!(link.theoretical_gbytes_per_s, Some(2.75));
    assert!(link.bandwidth_basis.contains("capped by the tunnel"), "{}", link.bandwidth_basis);
    assert!(link.idle_note.is_some());
}

#[test]
fn old_driver_nvml_gaps() {
    let s = check("old-driver-nvml-gaps");
    expect_findings(&s, &[("link.below_max_idle", Info)]);
    let driver = found(&s.driver, "driver");
    assert_eq!(driver.version.as_str(), "418.43");
    assert_eq!(driver.cuda_version.unwrap().to_string(), "10.1");
    let gpus = found(&s.gpus, "gpus");
    assert_eq!(gpus.len(), 1);
    let g = &gpus[0];
    assert_eq!(g.name.as_deref(), Some("GeForce GTX 1660 Ti"), "the name comes from NVML");
    assert_eq!(g.memory_total_bytes, Some(5944 * 1024 * 1024), "memory comes from nvidia-smi");
    assert_eq!(g.memory_used_bytes, Some(235 * 1024 * 1024));
    assert_eq!(g.memory_free_bytes, Some((5944 - 235) * 1024 * 1024));
    assert_eq!(g.compute_capability, None, "NVML could not say and nvidia-smi 418 does not print it");
    assert_eq!((g.pcie_gen_max, g.pcie_width_max), (Some(3), Some(16)));
    assert!(s.trace.iter().any(|t| t.method == "nvidia-smi -q -x"), "nvidia-smi was asked");
    let module = found(&s.kernel_module, "kernel module");
    assert!(module.nvidia_loaded);
    assert_eq!(module.installed.unwrap().version.as_deref(), Some("418.43"));
}

#[test]
fn windows_wddm() {
    let s = check("windows-wddm");
    expect_findings(&s, &[("toolkits.versions_explained", Info)]);
    let driver = found(&s.driver, "driver");
    assert_eq!(driver.version.as_str(), "552.22");
    let gpus = found(&s.gpus, "gpus");
    assert_eq!(gpus[0].driver_model.as_deref(), Some("WDDM"));
    assert_eq!(gpus[0].compute_capability.unwrap().to_string(), "8.9");
    assert!(matches!(s.kernel_module, Probed::Unsupported { .. }));
    assert!(matches!(s.pci_devices, Probed::Unsupported { .. }));
    assert!(matches!(s.links, Probed::Unsupported { .. }));
    let tk = found(&s.toolkits, "toolkits");
    let cu = "C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v12.4";
    let install = tk.install(cu).expect("CUDA 12.4");
    assert_eq!(install.kind, ToolkitKind::WindowsInstaller);
    assert_eq!(install.version.unwrap().to_string(), "12.4.1");
    assert_eq!(tk.installs.len(), 1, "{:#?}", tk.installs);
    assert_eq!(tk.picks.cuda_path.as_ref().unwrap().install_root.as_deref(), Some(cu));
    assert_eq!(tk.picks.path.as_ref().unwrap().install_root.as_deref(), Some(cu));
    let cudnn = found(&s.cudnn, "cudnn");
    assert!(cudnn.iter().any(|c| c.major == Some(9) && c.cuda_major == Some(12)), "{cudnn:#?}");
    let envs = found(&s.python_envs, "python");
    assert_eq!(envs.len(), 1, "{envs:#?}");
    assert_eq!(envs[0].python_version.as_deref(), Some("3.11"));
    let torch = envs[0].frameworks.iter().find(|f| f.name == "torch").expect("torch");
    assert_eq!(torch.build, FrameworkBuild::Cuda { version: Some("12.1".into()) });
}

#[test]
fn torch_cu130_on_r550() {
    let s = check("torch-cu130-on-r550");
    expect_findings(
        &s,
        &[("driver.too_old_for_runtime", Error), ("link.below_max_idle", Info), ("toolkits.versions_explained", Info)],
    );
    let f = diagnose(&s, Kb::get().unwrap()).into_iter().find(|f| f.id == "driver.too_old_for_runtime").unwrap();
    assert!(f.evidence.iter().any(|e| e.contains("550.54.14") && e.contains("12.4")), "{:?}", f.evidence);
    // The rule writes no fix: the installers write it from the plan (a build for this driver, else the
    // driver update: installers/tests/framework_plan.rs and fix_writer.rs).
    assert_eq!(f.fix, None);
    let target = f.plan.map(|p| p.target);
    assert_eq!(
        target,
        Some(gpu_doctor_model::PlanTarget::FrameworkBuild {
            env: "/home/user/proj/.venv".into(),
            framework: "torch".into(),
            or_driver: Some(580)
        })
    );
}

/// The first machine recorded with a GPU (a lent H200, 2026-11-30): a healthy one, so no finding;
/// in particular PyPI's CPU `onnxruntime` beside a CUDA torch is left alone, and the wheel's CUDA
/// runtime beside the local toolkit of the same major is no mismatch.
#[test]
fn h200_container_cu130() {
    let s = check("h200-container-cu130");
    expect_findings(&s, &[]);
    let gpus = found(&s.gpus, "GPUs");
    assert_eq!(gpus.len(), 1);
    assert_eq!(gpus[0].name.as_deref(), Some("NVIDIA H200"));
    assert_eq!(source(&s.driver), "nvml");
    assert_eq!(found(&s.driver, "driver").version.to_string(), "580.159.04");
    let envs = found(&s.python_envs, "Python environments");
    let venv = envs.iter().find(|e| e.name == "venv:/opt/torch/.venv").expect("the image's venv");
    let build = |name: &str| venv.frameworks.iter().find(|f| f.name == name).map(|f| f.build.clone());
    assert_eq!(build("onnxruntime"), Some(FrameworkBuild::Cpu));
    assert_eq!(build("torch"), Some(FrameworkBuild::Cuda { version: Some("13.0".into()) }));
    assert!(s.platform.container.is_some(), "inside the image's Docker container");
}

#[test]
fn hgx_h100_nvlink() {
    let s = check("hgx-h100-nvlink");
    expect_findings(&s, &[("topology.gpus_across_sockets", Info)]);
    assert_eq!(source(&s.topology), "nvml");
    let t = found(&s.topology, "topology");
    assert_eq!((t.gpus.len(), t.pairs.len()), (8, 28));
    assert!(t.pairs.iter().all(|p| p.link == LinkKind::Nvlink { links: 18 }), "{:?}", t.pairs);
    assert!(t.pairs.iter().all(|p| p.p2p_read.is_none()), "the capture has no P2P matrix");
    let numa: Vec<Option<u32>> = t.gpus.iter().map(|g| g.numa_node).collect();
    assert_eq!(numa, [Some(0), Some(0), Some(0), Some(0), Some(1), Some(1), Some(1), Some(1)]);
    assert_eq!(t.gpus[4].cpu_affinity.as_deref(), Some("56-111,168-223"));
    // NVML answers 7 (its enum's 5.0) on H100s; the generation is NVLink 4.
    assert_eq!(t.gpus[0].nvlinks.iter().filter(|l| l.active && l.version == Some(7)).count(), 18);
    assert_eq!(gpu_doctor_kb::gpu_nvlink_generation(&t.gpus[0]), Some(4));
    assert_eq!(t.cuda_order.effective, (0..8).collect::<Vec<u32>>(), "eight equal GPUs: CUDA keeps PCI order");
}

#[test]
fn pcie_2x5090_no_p2p() {
    let s = check("pcie-2x5090-no-p2p");
    expect_findings(&s, &[("topology.peer_access_not_offered_by_gpu", Info)]);
    assert_eq!(source(&s.topology), "nvidia-smi");
    let t = found(&s.topology, "topology");
    assert_eq!(t.pairs.len(), 1);
    let p = &t.pairs[0];
    assert_eq!(
        (p.link, p.p2p_read, p.p2p_write),
        (LinkKind::Phb, Some(P2pStatus::GpuNotSupported), Some(P2pStatus::GpuNotSupported))
    );
    assert_eq!((t.gpus[1].numa_node, t.gpus[1].cpu_affinity.as_deref()), (Some(0), Some("0-63")));
    assert!(s.trace.iter().any(|e| e.method == "nvidia-smi topo -p2p r"), "the fallback asked for P2P");
}

#[test]
fn two_socket_8x4090() {
    let s = check("two-socket-8x4090");
    expect_findings(&s, &[("topology.gpus_across_sockets", Info)]);
    let t = found(&s.topology, "topology");
    assert_eq!(t.pairs.len(), 28);
    assert!(t.pairs.iter().all(|p| p.link == LinkKind::Sys));
    let f = diagnose(&s, Kb::get().unwrap()).into_iter().find(|f| f.id == "topology.gpus_across_sockets").unwrap();
    assert!(f.summary.contains("2 NUMA nodes"), "{}", f.summary);
    assert!(
        f.evidence.iter().any(|e| e.contains("GPU 7") && e.contains("NUMA node 1") && e.contains("56-111,168-223")),
        "{:?}",
        f.evidence
    );
}

#[test]
fn mig_a100() {
    let s = check("mig-a100");
    expect_findings(&s, &[("topology.mig_enabled", Info)]);
    let t = found(&s.topology, "topology");
    let mig = t.gpus[0].mig.clone().expect("MIG facts");
    assert!(mig.enabled);
    let instances = mig.instances.expect("the MIG devices");
    assert_eq!(instances.len(), 7);
    assert!(instances.iter().all(|i| i.profile.as_deref() == Some("1g.10gb")));
    assert_eq!(instances[3].uuid.as_deref(), Some("MIG-36c795f2-5cf7-55d6-af30-e535e79b7bb6"));
    assert_eq!(source(&s.topology), "nvidia-smi");
}

#[test]
fn docker_no_container_toolkit() {
    let s = check("docker-no-container-toolkit");
    expect_findings(
        &s,
        &[
            ("containers.toolkit_missing", Warning),
            ("link.below_max_idle", Info),
            ("toolkits.versions_explained", Info),
        ],
    );
    let c = found(&s.containers, "containers");
    assert_eq!(c.engines.len(), 1);
    assert_eq!(c.engines[0].version.as_deref(), Some("17.03.2-ce"));
    assert_eq!(c.engines[0].runtimes.as_deref(), Some(&["io.containerd.runc.v2".to_owned(), "runc".to_owned()][..]));
    assert!(!c.toolkit.installed());
    let f = diagnose(&s, Kb::get().unwrap()).into_iter().find(|f| f.id == "containers.toolkit_missing").unwrap();
    let fix = f.fix.unwrap();
    assert!(fix.contains("sudo apt-get install -y nvidia-container-toolkit"), "{fix}");
    assert!(fix.contains("sudo nvidia-ctk runtime configure --runtime=docker"), "{fix}");
}

#[test]
fn docker_toolkit_no_runtime() {
    let s = check("docker-toolkit-no-runtime");
    expect_findings(
        &s,
        &[
            ("containers.runtime_not_configured", Warning),
            ("link.below_max_idle", Info),
            ("toolkits.versions_explained", Info),
        ],
    );
    let c = found(&s.containers, "containers");
    assert_eq!(c.toolkit.version(), Some("1.12.0"));
    assert!(c.toolkit.runtime.is_some() && c.toolkit.hook.is_none());
    assert!(c.runtime_configs.is_empty(), "no daemon.json: {:?}", c.runtime_configs);
    let f = diagnose(&s, Kb::get().unwrap()).into_iter().find(|f| f.id == "containers.runtime_not_configured").unwrap();
    assert!(f.evidence.iter().any(|e| e == "no /etc/docker/daemon.json"), "{:?}", f.evidence);
    let Some(gpu_doctor_model::PlanTarget::Change { changes, .. }) = f.plan.map(|p| p.target) else {
        panic!("no change plan")
    };
    let configure = ["nvidia-ctk", "runtime", "configure", "--runtime=docker"].map(String::from).to_vec();
    assert_eq!(changes[0], gpu_doctor_model::Change::Root { argv: configure });
}

#[test]
fn k8s_node_no_device_plugin() {
    let s = check("k8s-node-no-device-plugin");
    expect_findings(
        &s,
        &[
            ("containers.kubernetes_device_plugin_missing", Warning),
            ("link.below_max_idle", Info),
            ("toolkits.versions_explained", Info),
        ],
    );
    let c = found(&s.containers, "containers");
    let k = c.kubernetes.as_ref().unwrap();
    assert_eq!(k.sockets, ["kubelet.sock"]);
    let f = diagnose(&s, Kb::get().unwrap())
        .into_iter()
        .find(|f| f.id == "containers.kubernetes_device_plugin_missing")
        .unwrap();
    assert!(f.evidence.iter().any(|e| e == "the driver sees 1 GPU(s)"), "{:?}", f.evidence);
    // No containerd configuration was found, so only the plugin's deployment and the check.
    let Some(gpu_doctor_model::PlanTarget::Change { changes, .. }) = f.plan.map(|p| p.target) else {
        panic!("no change plan")
    };
    assert_eq!(changes.len(), 2, "{changes:?}");
    assert!(
        matches!(&changes[0], gpu_doctor_model::Change::Manual { text } if text.contains("nvidia-device-plugin.yml"))
    );
}

#[test]
fn container_without_gpu() {
    let s = check("container-without-gpu");
    expect_findings(&s, &[("containers.started_without_gpu", Error), ("presence.no_nvidia_gpu", Info)]);
    assert_eq!(s.platform.container.as_ref().map(|c| c.runtime.as_str()), Some("docker"));
    let inside = found(&s.containers, "containers").inside.expect("inside a container");
    assert!(inside.dev_nodes.is_empty() && inside.libcuda.is_empty());
    assert_eq!(inside.visible_devices.as_deref(), Some("all"));
    assert_eq!(inside.driver_capabilities.as_deref(), Some("compute,utility"));
}

/// The window fills a pending snapshot from the parts `collect_streaming` hands out as each probe
/// group finishes; once every part is in, it must equal what `collect` returns (but for the trace).
#[test]
fn streamed_parts_rebuild_the_whole_snapshot() {
    use gpu_doctor_probes::probe::{Options, Part, collect_streaming};
    use std::sync::Mutex;
    for name in ["consumer-gpu-torch-venv", "egpu-thunderbolt", "no-driver"] {
        let host = ReplayHost::load(&fixtures_dir().join(name)).unwrap();
        let parts = Mutex::new(Vec::new());
        let whole = collect_streaming(&host, &Options::default(), &|p| parts.lock().unwrap().push(p));
        let parts = parts.into_inner().unwrap();
        let mut names: Vec<&str> = parts.iter().map(Part::name).collect();
        names.sort_unstable();
        let mut want = Part::NAMES.to_vec();
        want.sort_unstable();
        assert_eq!(names, want, "{name}: every part exactly once");
        let mut rebuilt = Snapshot::pending();
        for p in parts {
            p.apply(&mut rebuilt);
        }
        rebuilt.taken_at_unix_secs = whole.taken_at_unix_secs;
        rebuilt.trace.clone_from(&whole.trace);
        assert_eq!(rebuilt, whole, "{name}");
    }
}

/// The findings of a scenario with `id`.
fn findings_of(s: &Snapshot, id: &str) -> Vec<gpu_doctor_model::Finding> {
    diagnose(s, Kb::get().unwrap()).into_iter().filter(|f| f.id == id).collect()
}

#[test]
fn a10_row_remap_pending_xid79() {
    let s = check("a10-row-remap-pending-xid79");
    expect_findings(&s, &[("health.memory_repair_pending", Warning), ("health.xid_error", Error)]);
    let health = found(&s.health.gpus, "health");
    assert_eq!(source(&s.health.gpus), "nvml");
    let m = &health[0].memory_errors;
    assert_eq!(
        (health[0].pci_bus_id.as_deref(), m.remapped_rows_uncorrected, m.remapped_rows_pending),
        (Some("0000:07:00.0"), Some(4), Some(true))
    );
    let events = found(&s.health.xid_events, "xid events");
    assert_eq!(source(&s.health.xid_events), "dmesg");
    assert_eq!((events.len(), events[0].xid, events[0].pci_bus_id.as_deref()), (1, 79, Some("0000:91:00.0")));
    let xid = &findings_of(&s, "health.xid_error")[0];
    assert_eq!(xid.summary, "The NVIDIA driver logged Xid 79: GPU has fallen off the bus");
    assert!(
        xid.evidence[0].contains("the GPU at 0000:91:00.0, which the driver does not list now"),
        "{:?}",
        xid.evidence
    );
    let pending = &findings_of(&s, "health.memory_repair_pending")[0];
    assert_eq!(pending.summary, "NVIDIA A10 (GPU 0, 0000:07:00.0) has a memory repair waiting for a GPU reset");
    assert!(pending.evidence[0].contains("4 after uncorrectable ones; remap pending: yes"), "{:?}", pending.evidence);
}

#[test]
fn a100_ecc_row_remap_xid63() {
    let s = check("a100-ecc-row-remap-xid63");
    expect_findings(
        &s,
        &[("health.ecc_corrected", Info), ("health.memory_repair_pending", Warning), ("health.xid_info", Info)],
    );
    let m = &found(&s.health.gpus, "health")[0].memory_errors;
    assert_eq!(
        (m.corrected_volatile, m.uncorrected_volatile, m.remapped_rows_corrected),
        (Some(177), Some(0), Some(1))
    );
    let xid = &findings_of(&s, "health.xid_info")[0];
    assert!(xid.evidence[0].contains("NVIDIA A100-SXM4-80GB (GPU 0, 0000:10:1c.0): 1 time(s)"), "{:?}", xid.evidence);
    assert!(xid.summary.ends_with("Xid 63: ECC page retirement or row remapping recording event"), "{}", xid.summary);
}
