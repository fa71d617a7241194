//! Depth pastes read into the facts the live probes fill, judged by the same rules: nvidia-smi
//! `-q` health sections (any `-d` selection) and the kernel log's Xid lines.

use super::*;
use gpu_doctor_model::Severity;

/// A `-q` capture from `tests/data/smi_q/` (sources in its SOURCES.md).
fn smi_q(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/data/smi_q/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn findings(s: &Snapshot) -> Vec<(String, Severity)> {
    gpu_doctor_judge::diagnose::diagnose(s, kb()).into_iter().map(|f| (f.id, f.severity)).collect()
}

fn ids(s: &Snapshot) -> Vec<String> {
    findings(s).into_iter().map(|(id, _)| id).collect()
}

#[test]
fn a_pasted_q_gives_each_gpus_health_and_the_repair_pending_finding() {
    // leptonai/gpud's A10 capture: 4 rows remapped after uncorrectable errors, the remap pending.
    let s = read_pasted(&smi_q("a10_535.129.03_row-remap-pending.txt"), kb()).unwrap();
    let h = &s.health.gpus.value().unwrap()[0];
    assert_eq!((h.index, h.pci_bus_id.as_deref()), (0, Some("0000:07:00.0")));
    assert_eq!(h.memory_errors.remapped_rows_uncorrected, Some(4));
    assert_eq!(h.memory_errors.remapped_rows_pending, Some(true));
    assert_eq!(h.power_limit_default_mw, Some(150_000));
    assert!(matches!(s.health.xid_events, Probed::Unknown { .. }), "no Xid line: the log is not known");
    assert!(ids(&s).contains(&"health.memory_repair_pending".to_owned()), "{:?}", ids(&s));
}

#[test]
fn a_pasted_q_excerpt_gives_corrected_errors_and_a_pending_remap() {
    // stas00/ml-engineering: one A100 of eight, 177 corrected DRAM errors, a row remap pending.
    let s = read_pasted(&smi_q("a100_510.73.08_row-remap-pending_excerpt.txt"), kb()).unwrap();
    let m = &s.health.gpus.value().unwrap()[0].memory_errors;
    assert_eq!((m.corrected_volatile, m.uncorrected_volatile), (Some(177), Some(0)));
    let ids = ids(&s);
    for id in ["health.ecc_corrected", "health.memory_repair_pending"] {
        assert!(ids.contains(&id.to_owned()), "{id} in {ids:?}");
    }
    assert!(!ids.contains(&"health.ecc_uncorrectable".to_owned()));
}

#[test]
fn a_pasted_q_of_eight_slowed_gpus_gives_the_throttled_finding() {
    // leptonai/gpud's 8× H100 capture: HW Slowdown and HW Power Brake Slowdown active on all eight.
    let s = read_pasted(&smi_q("h100x8_535.161.08_hw-slowdown.txt"), kb()).unwrap();
    let health = s.health.gpus.value().unwrap();
    assert_eq!(health.len(), 8);
    assert!(health.iter().all(|h| h.slowdowns().contains(&"hw_slowdown")));
    let Origin::Pasted { formats } = &s.origin else { panic!("pasted") };
    assert_eq!(formats, &["nvidia-smi -q".to_owned()]);
    assert!(ids(&s).iter().filter(|id| *id == "health.throttled_now").count() >= 1, "{:?}", ids(&s));
}

#[test]
fn a_healthy_pasted_q_gives_no_health_warning() {
    // leptonai/gpud's 8× RTX 4090 capture: ECC off (counters N/A), nothing slowing the clocks.
    let s = read_pasted(&smi_q("rtx4090x8_535.154.05.txt"), kb()).unwrap();
    assert_eq!(s.health.gpus.value().map(Vec::len), Some(8));
    let loud: Vec<(String, Severity)> =
        findings(&s).into_iter().filter(|(id, sev)| id.starts_with("health.") && *sev != Severity::Info).collect();
    assert!(loud.is_empty(), "{loud:?}");
}

#[test]
fn the_same_gpu_in_a_table_and_a_q_keeps_one_health_reading_under_its_index() {
    let q = smi_q("a10_535.129.03_row-remap-pending.txt");
    let s = read_pasted(&format!("{q}\n{q}"), kb()).unwrap();
    assert_eq!(s.health.gpus.value().map(Vec::len), Some(1));
}

/// NVIDIA/open-gpu-kernel-modules#1010: a GPU fell off the bus.
const XID_79: &str = "april 24 16:22:15 robin-linux-x3d kernel: NVRM: Xid (PCI:0000:01:00): 79, pid=6755, \
                      name=vivaldi-bin, GPU has fallen off the bus.";

#[test]
fn a_pasted_xid_line_is_an_xid_event_judged_by_the_health_rule() {
    let s = read_pasted(XID_79, kb()).unwrap();
    let events = s.health.xid_events.value().unwrap();
    assert_eq!((events[0].xid, events[0].pci_bus_id.as_deref()), (79, Some("0000:01:00.0")));
    let ids = ids(&s);
    assert!(ids.contains(&"health.xid_error".to_owned()), "{ids:?}");
    assert!(!ids.contains(&"observed.nvrm.xid".to_owned()), "the health finding explains the line: {ids:?}");
}

#[test]
fn a_q_with_only_the_selected_sections_is_read() {
    // What `nvidia-smi -q -d ROW_REMAPPER` prints: the header, the GPU line and its section only.
    // Whole lines of the A10 capture: 1-9 (header and GPU line) and 139-150 (Remapped Rows).
    let capture = smi_q("a10_535.129.03_row-remap-pending.txt");
    let a10: Vec<&str> = capture.lines().collect();
    let text = [&a10[..8], &a10[138..150]].concat().join("\n");
    assert!(text.contains("GPU 00000000:07:00.0") && text.contains("Pending                           : Yes"));
    let s = read_pasted(&text, kb()).unwrap();
    let h = &s.health.gpus.value().unwrap()[0];
    assert_eq!(
        (h.memory_errors.remapped_rows_uncorrected, h.memory_errors.remapped_rows_pending),
        (Some(4), Some(true))
    );
    assert!(ids(&s).contains(&"health.memory_repair_pending".to_owned()), "{:?}", ids(&s));
}

/// A sample from `tests/data/paste/depth/` (sources in its SOURCES.md).
fn depth(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/data/paste/depth/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

#[test]
fn docker_info_and_a_cdi_list_fill_the_containers_part() {
    // ssst0n3/docker_archive: toolkit 1.14.0's `cdi list`, `nvidia-container-cli info`, `docker info`.
    let s = read_pasted(&depth("ctk_1_14_cdi_list_cli_info_docker_info_ssst0n3.txt"), kb()).unwrap();
    let Origin::Pasted { formats } = &s.origin else { panic!("pasted") };
    for f in ["nvidia-ctk cdi list", "nvidia-container-cli info", "docker info"] {
        assert!(formats.iter().any(|x| x == f), "{f} in {formats:?}");
    }
    let c = s.containers.value().unwrap();
    let docker = &c.engines[0];
    assert_eq!((docker.kind, docker.version.as_deref()), (gpu_doctor_model::EngineKind::Docker, Some("24.0.5")));
    assert_eq!(docker.runtimes.as_deref(), Some(&["io.containerd.runc.v2".into(), "nvidia".into(), "runc".into()][..]));
    assert_eq!(docker.default_runtime.as_deref(), Some("runc"));
    assert!(c.toolkit.ctk.is_some() && c.toolkit.cli.is_some());
    assert_eq!(c.cdi_specs.len(), 1);
    assert_eq!(c.cdi_specs[0].kind.as_deref(), Some("nvidia.com/gpu"));
    assert_eq!(c.cdi_specs[0].devices, ["0", "1", "2", "3", "all"]);
    // Configured and listed: no container finding.
    let containers: Vec<String> = ids(&s).into_iter().filter(|i| i.starts_with("containers.")).collect();
    assert!(containers.is_empty(), "{containers:?}");
}

#[test]
fn a_markdown_linked_cdi_list_beside_nvidia_smi_l_matches_its_gpu() {
    // NVIDIA/nvidia-container-toolkit#146: one RTX 2060; the spec names index 0 and `all`.
    let s = read_pasted(&depth("cdi_list_markdown_links_toolkit_146.txt"), kb()).unwrap();
    let g = &s.gpus.value().unwrap()[0];
    assert_eq!(g.uuid.as_deref(), Some("GPU-2f68f999-7b41-e64a-3709-0c8c4fa756c0"));
    let c = s.containers.value().unwrap();
    assert_eq!(c.cdi_specs[0].devices, ["0", "all"]);
    assert_eq!(c.toolkit.version(), Some("1.14.3"));
    assert!(!ids(&s).iter().any(|i| i.starts_with("containers.")), "{:?}", ids(&s));
}

#[test]
fn a_cdi_list_without_the_gpus_uuid_is_the_stale_spec_finding() {
    // Two threads' real lines, joined as one paste would hold them: NVIDIA/nvidia-container-toolkit#1239's
    // `nvidia-smi -L` (a T4) and zelikos/davincibox#268's `cdi list`, whose spec names another GPU's UUID.
    let text = format!(
        "$ nvidia-smi -L\nGPU 0: Tesla T4 (UUID: GPU-e78e68c0-4e6a-737e-f9cc-4223fe50aead)\n$ {}",
        depth("cdi_list_uuid_davincibox_268.txt")
    );
    let s = read_pasted(&text, kb()).unwrap();
    assert!(ids(&s).contains(&"containers.cdi_spec_stale".to_owned()), "{:?}", ids(&s));
    // The same list beside its own GPU's UUID: nothing stale.
    let own = text.replace("GPU-e78e68c0-4e6a-737e-f9cc-4223fe50aead", "GPU-e9050893-7feb-1b73-f785-1e25e3d12837");
    let s = read_pasted(&own, kb()).unwrap();
    assert!(!ids(&s).contains(&"containers.cdi_spec_stale".to_owned()), "{:?}", ids(&s));
}

#[test]
fn pasted_docker_info_without_the_nvidia_runtime_never_claims_the_toolkit_is_missing() {
    // The ssst0n3 docker info with its `nvidia` runtime taken out, beside an nvidia-smi GPU: the
    // paste does not show what is on PATH, so no `toolkit_missing`.
    let docker = depth("ctk_1_14_cdi_list_cli_info_docker_info_ssst0n3.txt");
    let docker = &docker[docker.find("Client: Docker Engine").unwrap()..];
    let text = format!(
        "GPU 0: Tesla T4 (UUID: GPU-e78e68c0-4e6a-737e-f9cc-4223fe50aead)\n{}",
        docker.replace("Runtimes: io.containerd.runc.v2 nvidia runc", "Runtimes: io.containerd.runc.v2 runc")
    );
    let s = read_pasted(&text, kb()).unwrap();
    assert_eq!(s.containers.value().unwrap().engines[0].runtimes.as_ref().map(Vec::len), Some(2));
    assert!(!ids(&s).contains(&"containers.toolkit_missing".to_owned()), "{:?}", ids(&s));
}

#[test]
fn kubectl_describe_node_gives_the_gpus_it_advertises() {
    // NVIDIA/k8s-device-plugin#328: 4 GPUs advertised and allocatable.
    let s = read_pasted(&depth("kubectl_node_four_gpus_device_plugin_328.txt"), kb()).unwrap();
    let Origin::Pasted { formats } = &s.origin else { panic!("pasted") };
    assert_eq!(formats, &["kubectl describe node".to_owned()]);
    let n = s.containers.value().unwrap().kubernetes_node.as_ref().unwrap();
    assert_eq!((n.capacity_read, n.gpu_capacity, n.gpu_allocatable), (true, Some(4), Some(4)));
    // NVIDIA/k8s-device-plugin#283: the lines `egrep` kept of `oc describe node`.
    let s = read_pasted(&depth("oc_describe_node_egrep_device_plugin_283.txt"), kb()).unwrap();
    let n = s.containers.value().unwrap().kubernetes_node.as_ref().unwrap();
    assert_eq!((n.gpu_capacity, n.gpu_allocatable), (Some(2), Some(2)));
    // NVIDIA/k8s-device-plugin#285: no nvidia.com/gpu in either section, and nothing else says
    // the node has a GPU: no finding.
    let s = read_pasted(&depth("kubectl_node_no_gpu_capacity_device_plugin_285.txt"), kb()).unwrap();
    let n = s.containers.value().unwrap().kubernetes_node.as_ref().unwrap();
    assert_eq!((n.capacity_read, n.gpu_capacity, n.gpu_allocatable), (true, None, None));
    assert!(ids(&s).is_empty(), "{:?}", ids(&s));
}

#[test]
fn a_node_labelled_with_gpus_that_advertises_none_is_the_device_plugin_finding() {
    // Two threads' real lines joined as one `kubectl describe node` would hold them:
    // NVIDIA/k8s-device-plugin#1501's gpu-feature-discovery labels (8 H100) above #285's Capacity
    // and Allocatable without nvidia.com/gpu.
    let labels = depth("kubectl_node_gfd_labels_h100x8_device_plugin_1501.txt");
    let text = format!("{labels}{}", depth("kubectl_node_no_gpu_capacity_device_plugin_285.txt"));
    let s = read_pasted(&text, kb()).unwrap();
    let n = s.containers.value().unwrap().kubernetes_node.as_ref().unwrap();
    assert_eq!(n.labelled_gpus(), Some(8));
    assert_eq!(n.nvidia_labels.get("nvidia.com/gpu.product").map(String::as_str), Some("NVIDIA-H100-80GB-HBM3"));
    let f = gpu_doctor_judge::diagnose::diagnose(&s, kb())
        .into_iter()
        .find(|f| f.id == "containers.kubernetes_device_plugin_missing")
        .expect("the device plugin finding");
    assert!(f.evidence.iter().any(|e| e.contains("nvidia.com/gpu.count=8")), "{:?}", f.evidence);
    // The same labels above a Capacity that lists the GPUs: the plugin registered, no finding.
    let text = format!("{labels}{}", depth("kubectl_node_four_gpus_device_plugin_328.txt"));
    let s = read_pasted(&text, kb()).unwrap();
    assert!(!ids(&s).contains(&"containers.kubernetes_device_plugin_missing".to_owned()), "{:?}", ids(&s));
}

/// Every depth sample: `tests/data/smi_topo`, `tests/data/smi_q` and `tests/data/paste/depth`.
fn depth_samples() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["smi_topo", "smi_q", "paste/depth"] {
        let dir = format!("{}/tests/data/{dir}", env!("CARGO_MANIFEST_DIR"));
        let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        out.extend(
            files
                .iter()
                .filter(|f| f.extension().is_some_and(|e| e == "txt"))
                .map(|f| std::fs::read_to_string(f).unwrap()),
        );
    }
    out
}

#[test]
fn depth_samples_cut_anywhere_never_panic() {
    let samples = depth_samples();
    assert!(samples.len() >= 20, "{}", samples.len());
    for sample in &samples {
        // About 40 cuts a sample, wherever they fall (never on fewer than 53 bytes apart).
        let step = (sample.len() / 40).max(53);
        let mut cut = 0;
        while cut < sample.len() {
            if let Some(prefix) = sample.get(..cut)
                && let Ok(s) = read_pasted(prefix, kb())
            {
                let _ = gpu_doctor_judge::diagnose::diagnose(&s, kb());
            }
            cut += step;
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 16, ..proptest::prelude::ProptestConfig::default() })]

    /// All depth samples in one paste, cut, garbled and repeated anywhere: no panic, no hang.
    #[test]
    fn mangled_depth_samples_never_panic(edits in super::props::edits(40_000)) {
        static ALL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        let all = ALL.get_or_init(|| depth_samples().join("\n"));
        super::props::read_bounded(super::props::mangle(all, &edits));
    }
}

#[test]
fn a_node_with_fewer_allocatable_than_its_gpus_is_the_unhealthy_finding() {
    // NVIDIA/k8s-device-plugin#58: `kubectl get node -o yaml`, 16 GPUs, none allocatable.
    let s = read_pasted(&depth("kubectl_get_node_yaml_allocatable_zero_device_plugin_58.txt"), kb()).unwrap();
    let n = s.containers.value().unwrap().kubernetes_node.as_ref().unwrap();
    assert_eq!((n.gpu_capacity, n.gpu_allocatable), (Some(16), Some(0)));
    let f = gpu_doctor_judge::diagnose::diagnose(&s, kb())
        .into_iter()
        .find(|f| f.id == "containers.kubernetes_gpus_unhealthy")
        .expect("the unhealthy finding");
    assert!(f.summary.contains("0 of this node's 16"), "{}", f.summary);
    // Every GPU allocatable (#328, 4 of 4; #283, 2 of 2): nothing.
    for sample in ["kubectl_node_four_gpus_device_plugin_328.txt", "oc_describe_node_egrep_device_plugin_283.txt"] {
        let s = read_pasted(&depth(sample), kb()).unwrap();
        assert!(!ids(&s).contains(&"containers.kubernetes_gpus_unhealthy".to_owned()), "{sample}: {:?}", ids(&s));
    }
}

/// lspci's Resizable BAR capability of an RTX 3090 whose firmware left BAR1 at 256MB while the GPU
/// offers up to 32GB (xCuri0/ReBarUEFI#11, the "Before" block).
const REBAR_3090: &str = "lspci_vv_rebar_3090_256mb_offers_32gb_rebaruefi_11.txt";

const BAR1_ID: &str = "topology.bar1_too_small_for_p2p";

fn bar1_finding(text: &str) -> Option<gpu_doctor_model::Finding> {
    let s = read_pasted(text, kb()).unwrap();
    gpu_doctor_judge::diagnose::diagnose(&s, kb()).into_iter().find(|f| f.id == BAR1_ID)
}

#[test]
fn lspci_resizable_bar_gives_the_gpu_its_bar1_and_the_size_it_offers() {
    let s = read_pasted(&depth(REBAR_3090), kb()).unwrap();
    let g = &s.gpus.value().expect("the GPU lspci shows")[0];
    assert_eq!((g.name.as_deref(), g.pci_bus_id.as_deref()), (Some("NVIDIA GeForce RTX 3090"), Some("0000:d8:00.0")));
    assert_eq!((g.bar1_total_bytes, g.bar1_max_bytes), (Some(256 << 20), Some(32 << 30)));
    let f = bar1_finding(&depth(REBAR_3090)).expect("BAR1 256 MiB");
    assert!(f.evidence.iter().any(|e| e.contains("offers BAR1 up to 32 GiB")), "{:?}", f.evidence);
    // A larger size offered: the firmware or the driver sets it, no VBIOS update needed.
    let fix = f.fix.unwrap();
    assert!(fix.contains("NVreg_EnableResizableBar=1") && fix.contains("up to 32 GiB"), "{fix}");
    assert!(!fix.contains("update the GPU's VBIOS"), "{fix}");
}

#[test]
fn a_vbios_that_offers_no_larger_bar1_is_named_in_the_fix() {
    // The same block with the supported list ending at the current size, as a pre-Resizable-BAR VBIOS
    // leaves it.
    let capped = depth(REBAR_3090).replace("256MB 512MB 1GB 2GB 4GB 8GB 16GB 32GB", "256MB");
    let f = bar1_finding(&capped).expect("BAR1 256 MiB");
    assert!(f.evidence.iter().any(|e| e.contains("offers no BAR1 above 256 MiB")), "{:?}", f.evidence);
    let fix = f.fix.unwrap();
    assert!(fix.contains("update the GPU's VBIOS") && !fix.contains("NVreg_EnableResizableBar"), "{fix}");
    // The entries alone, as `lspci -vv | grep -A4 "Resizable BAR"` without its first line leaves them:
    // taken for the GPU the paste is about.
    let entries: String =
        capped.lines().filter(|l| l.trim_start().starts_with("BAR ")).map(|l| format!("{l}\n")).collect();
    assert_eq!(entries.lines().count(), 3);
    let f = bar1_finding(&format!("$ sudo lspci -vv -s 01:00.0 | grep -A4 \"Resizable BAR\"\n{entries}"))
        .expect("headless");
    assert!(f.fix.unwrap().contains("update the GPU's VBIOS"));
}

#[test]
fn a_resized_bar1_or_another_capability_gives_no_bar1_finding() {
    let resized = depth(REBAR_3090).replace("BAR 1: current size: 256MB", "BAR 1: current size: 32GB");
    let s = read_pasted(&resized, kb()).unwrap();
    assert_eq!(s.gpus.value().unwrap()[0].bar1_total_bytes, Some(32 << 30));
    assert!(bar1_finding(&resized).is_none());
    // SR-IOV functions' BARs are not the GPU's BAR1.
    let r#virtual = depth(REBAR_3090).replace("Physical Resizable BAR", "Virtual Resizable BAR");
    assert!(read_pasted(&r#virtual, kb()).unwrap().gpus.value().is_none());
    // Another vendor's GPU: its block is not read.
    let amd = depth(REBAR_3090)
        .replace("NVIDIA Corporation GA102 [GeForce RTX 3090]", "Advanced Micro Devices, Inc. [AMD/ATI] Navi 21");
    assert!(read_pasted(&amd, kb()).unwrap().gpus.value().is_none());
}

#[test]
fn lspci_bar1_joins_the_only_listed_gpu() {
    // One GPU listed by `nvidia-smi -L` (no bus id): the lspci block is its.
    let listed = "GPU 0: NVIDIA GeForce RTX 3090 (UUID: GPU-59146b0b-136b-5880-5d07-bdbd769628ec)\n\n";
    let s = read_pasted(&format!("{listed}{}", depth(REBAR_3090)), kb()).unwrap();
    let gpus = s.gpus.value().unwrap();
    assert_eq!(gpus.len(), 1, "{gpus:?}");
    assert_eq!((gpus[0].bar1_max_bytes, gpus[0].uuid.is_some()), (Some(32 << 30), true));
}

#[test]
fn many_resizable_bar_blocks_stay_bounded() {
    let block = depth(REBAR_3090);
    let text = std::iter::repeat_n(block.as_str(), 5_000).collect::<Vec<_>>().join("\n");
    let s = read_pasted(&text, kb()).unwrap();
    // The same bus id each time: one GPU, however long the text.
    assert_eq!(s.gpus.value().unwrap().len(), 1);
}

/// A `topo -m` sample from `tests/data/smi_topo/`: two RTX 5090s under one host bridge (PHB).
fn topo(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/data/smi_topo/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn iommu_mode(text: &str) -> Option<gpu_doctor_model::IommuMode> {
    let s = read_pasted(text, kb()).unwrap();
    s.topology.value().and_then(|t| t.iommu.as_ref()).map(|i| i.mode)
}

#[test]
fn kernel_iommu_lines_give_the_iommus_mode() {
    use gpu_doctor_model::IommuMode;
    // IO_PAGE_FAULTs of an NVIDIA GPU (NVIDIA/cuda-samples#48): the IOMMU translated its DMA.
    assert_eq!(
        iommu_mode(&depth("dmesg_amd_vi_io_page_fault_nvidia_cuda_samples_48.txt")),
        Some(IommuMode::Translated)
    );
    // `amd_iommu=on iommu=pt` on the command line (pastebin BuiLxRXZ): passthrough.
    assert_eq!(
        iommu_mode(&depth("dmesg_command_line_amd_iommu_on_iommu_pt_pastebin_builxrxz.txt")),
        Some(IommuMode::Passthrough)
    );
    // `DMAR: IOMMU enabled` with nothing saying passthrough (pastebin XuGtDmSm): translated.
    let s = read_pasted(&depth("dmesg_grep_dmar_iommu_enabled_pastebin_xugtdmsm.txt"), kb()).unwrap();
    let i = s.topology.value().unwrap().iommu.as_ref().unwrap();
    assert_eq!(i.mode, IommuMode::Translated);
    assert_eq!(i.evidence, ["[    0.000000] DMAR: IOMMU enabled"]);
    let Origin::Pasted { formats } = &s.origin else { panic!("pasted") };
    assert!(formats.contains(&"kernel IOMMU lines".to_owned()), "{formats:?}");
}

#[test]
fn a_translating_iommu_under_two_pcie_gpus_is_the_blocked_finding() {
    // Two real outputs of different machines put together: two RTX 5090s under one host bridge
    // (noonghunna/club-3090#1229's `topo -m`) and the IO_PAGE_FAULT lines of NVIDIA/cuda-samples#48.
    let faults = depth("dmesg_amd_vi_io_page_fault_nvidia_cuda_samples_48.txt");
    let text = format!("{}\n{faults}", topo("2x5090-topo-m.txt"));
    let s = read_pasted(&text, kb()).unwrap();
    let f = gpu_doctor_judge::diagnose::diagnose(&s, kb())
        .into_iter()
        .find(|f| f.id == "topology.peer_access_blocked")
        .expect("the IOMMU finding");
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.evidence.iter().any(|e| e.contains("IO_PAGE_FAULT")), "{:?}", f.evidence);
    assert!(f.fix.as_deref().is_some_and(|x| x.contains("iommu=pt")));
    // Passthrough asked on the command line: nothing. The link matrix alone: nothing.
    let pt = depth("dmesg_command_line_amd_iommu_on_iommu_pt_pastebin_builxrxz.txt");
    for text in [format!("{}\n{pt}", topo("2x5090-topo-m.txt")), topo("2x5090-topo-m.txt")] {
        let s = read_pasted(&text, kb()).unwrap();
        assert!(!ids(&s).contains(&"topology.peer_access_blocked".to_owned()), "{:?}", ids(&s));
    }
    // The IOMMU lines alone say nothing of how many GPUs there are: no finding.
    let s = read_pasted(&faults, kb()).unwrap();
    assert!(!ids(&s).contains(&"topology.peer_access_blocked".to_owned()), "{:?}", ids(&s));
}

/// `nvidia-smi nvlink -e` of one GB300 (NVIDIA/srt-slurm#307), every counter zero.
const NVLINK_E: &str = "gb300-nvlink-e-srt-slurm-307.txt";

#[test]
fn nvlink_error_counters_fill_the_gpus_links_and_replays_are_the_finding() {
    let s = read_pasted(&topo(NVLINK_E), kb()).unwrap();
    let g = &s.topology.value().unwrap().gpus[0];
    assert_eq!((g.name.as_deref(), g.nvlink_errors.len()), (Some("NVIDIA GB300"), 1));
    assert_eq!(g.nvlink_errors[0].replay, Some(0));
    let Origin::Pasted { formats } = &s.origin else { panic!("pasted") };
    assert!(formats.contains(&"nvidia-smi nvlink -e".to_owned()), "{formats:?}");
    assert!(!ids(&s).contains(&"topology.nvlink_errors".to_owned()), "all zero: {:?}", ids(&s));
    // The same link with replays counted: a link that resent data.
    let replays = topo(NVLINK_E).replace("Replay Errors: 0", "Replay Errors: 12");
    let s = read_pasted(&replays, kb()).unwrap();
    let f = gpu_doctor_judge::diagnose::diagnose(&s, kb())
        .into_iter()
        .find(|f| f.id == "topology.nvlink_errors")
        .expect("the NVLink errors finding");
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.evidence, ["GPU 0 (NVIDIA GB300) link 0: 12 replay, 0 recovery error(s), 0 CRC"]);
    assert!(f.fix.as_deref().is_some_and(|x| x.contains("nvidia-smi nvlink -re")));
    // CRC errors alone: DCGM judges them by rate, which one reading cannot give.
    let crc = topo(NVLINK_E).replace("CRC Errors: 0", "CRC Errors: 40");
    assert!(!ids(&read_pasted(&crc, kb()).unwrap()).contains(&"topology.nvlink_errors".to_owned()));
}
