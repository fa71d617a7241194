use super::*;

const HGX: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_topo/hgx-h100-topo-m.txt"));
const TWO_SOCKET: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_topo/two-socket-8x4090-topo-m.txt"));
const R5090: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_topo/2x5090-topo-m.txt"));
const R5090_P2P: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_topo/2x5090-topo-p2p.txt"));
const H100X4: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_topo/4xh100-nv6-topo-m.txt"));
const OLD: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_topo/8gpu-mlx4-old-topo-m-cut.txt"));
const MIG: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_topo/a100-mig-list.txt"));
const MIG_ONE_OF_FOUR: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_topo/4xa100-one-mig-list.txt"));

#[test]
fn an_hgx_h100_has_18_nvlinks_between_every_pair_and_two_numa_nodes() {
    let rows = parse_topo(HGX).unwrap();
    assert_eq!(rows.len(), 8);
    for r in &rows {
        assert_eq!(r.links.len(), 7, "GPU{}: only the GPU columns, not the NICs", r.index);
        assert!(r.links.values().all(|l| *l == LinkKind::Nvlink { links: 18 }));
    }
    assert_eq!(rows[0].cpu_affinity.as_deref(), Some("0-55,112-167"));
    assert_eq!(rows[0].numa_node, Some(0));
    assert_eq!(rows[7].cpu_affinity.as_deref(), Some("56-111,168-223"));
    assert_eq!(rows[7].numa_node, Some(1));
}

#[test]
fn a_two_socket_machine_is_sys_everywhere() {
    let rows = parse_topo(TWO_SOCKET).unwrap();
    assert_eq!(rows.len(), 8);
    assert_eq!(rows[6].links.get(&7), Some(&LinkKind::Sys));
    assert_eq!(rows[6].links.len(), 7, "the PHB cells are NIC columns");
    assert_eq!(rows.iter().filter(|r| r.numa_node == Some(1)).count(), 4);
}

#[test]
fn a_workstation_with_its_legend() {
    let rows = parse_topo(R5090).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].links.get(&1), Some(&LinkKind::Phb));
    assert_eq!(rows[1].links.get(&0), Some(&LinkKind::Phb));
    assert_eq!((rows[1].cpu_affinity.as_deref(), rows[1].numa_node), (Some("0-63"), Some(0)));
}

#[test]
fn space_aligned_output_and_an_old_driver_without_numa_column() {
    let rows = parse_topo(H100X4).unwrap();
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[2].links.get(&3), Some(&LinkKind::Nvlink { links: 6 }));
    assert_eq!((rows[2].cpu_affinity.as_deref(), rows[2].numa_node), (Some("7,15,23,31"), Some(7)));
    let rows = parse_topo(OLD).unwrap();
    assert_eq!(rows.len(), 5, "the thread's text stops after GPU4");
    assert_eq!(rows[0].links.get(&1), Some(&LinkKind::Pix));
    assert_eq!(rows[0].links.get(&2), Some(&LinkKind::Phb));
    assert_eq!(rows[0].links.get(&4), Some(&LinkKind::Sys));
    assert_eq!(rows[4].links.get(&5), Some(&LinkKind::Pix), "columns past the cut row still read");
    assert_eq!((rows[4].cpu_affinity.as_deref(), rows[4].numa_node), (Some("10-19,30-39"), None));
}

#[test]
fn the_p2p_matrix_says_gpu_not_supported() {
    let cells = parse_p2p(R5090_P2P).unwrap();
    assert_eq!(cells.len(), 2);
    assert_eq!(cells.get(&(0, 1)), Some(&P2pStatus::GpuNotSupported));
    assert_eq!(cells.get(&(1, 0)), Some(&P2pStatus::GpuNotSupported));
}

#[test]
fn mig_devices_hang_under_their_gpu() {
    let gpus = parse_list(MIG).unwrap();
    assert_eq!(gpus.len(), 1);
    assert_eq!(gpus[0].name, "NVIDIA A100-SXM4-80GB");
    assert_eq!(gpus[0].uuid.as_deref(), Some("GPU-7fdaf0a5-179b-f636-d15d-daf243e3ff16"));
    assert_eq!(gpus[0].mig.len(), 7);
    assert_eq!(gpus[0].mig[6].device, 6);
    assert_eq!(gpus[0].mig[6].profile.as_deref(), Some("1g.10gb"));
    assert_eq!(gpus[0].mig[6].uuid.as_deref(), Some("MIG-1aae4990-b962-574e-8375-119d6d9b9687"));
    let gpus = parse_list(MIG_ONE_OF_FOUR).unwrap();
    let migs: Vec<usize> = gpus.iter().map(|g| g.mig.len()).collect();
    assert_eq!(migs, [4, 0, 0, 0]);
}

#[test]
fn other_text_is_an_error_not_a_guess() {
    assert!(parse_topo("").is_err());
    assert!(parse_topo("GPU0\t X \tNV18\nGPU1\tNV18\t X").is_err(), "rows without a header");
    assert!(parse_topo("\tGPU0\tGPU1\tCPU Affinity\n").is_err(), "a header without rows");
    assert!(parse_p2p(R5090).is_err(), "a link matrix holds no P2P status");
    assert!(parse_list(HGX).is_err());
    assert!(parse_list("MIG 1g.10gb Device 0: (UUID: MIG-x)").is_err(), "a MIG line without its GPU");
}

#[test]
fn truncated_samples_read_what_is_there() {
    for text in [HGX, TWO_SOCKET, R5090, R5090_P2P, H100X4, OLD, MIG] {
        for cut in (0..text.len()).filter(|c| text.is_char_boundary(*c)).step_by(7) {
            let part = &text[..cut];
            let _ = parse_topo(part);
            let _ = parse_p2p(part);
            let _ = parse_list(part);
        }
    }
}

proptest::proptest! {
    #[test]
    fn arbitrary_text_never_panics(s in "\\PC*") {
        let _ = parse_topo(&s);
        let _ = parse_p2p(&s);
        let _ = parse_list(&s);
    }

    #[test]
    fn near_miss_text_never_panics(s in "(GPU[0-9]{0,3}|NIC0|NV[0-9]{0,3}| X |PIX|SYS|OK|GNS|CPU Affinity|N/A|[0-9,-]{0,6}|MIG |Device |: |\\(UUID: |\\)|\t|\n| ){0,40}") {
        let _ = parse_topo(&s);
        let _ = parse_p2p(&s);
        let _ = parse_list(&s);
    }
}

const GB300_NVLINK_E: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_topo/gb300-nvlink-e-srt-slurm-307.txt"));

#[test]
fn nvlink_error_counters_are_read_per_gpu_and_link() {
    let gpus = parse_nvlink_errors(GB300_NVLINK_E).unwrap();
    assert_eq!(gpus.len(), 1);
    assert_eq!(gpus[0].gpu.name, "NVIDIA GB300");
    assert_eq!(gpus[0].links, [NvLinkErrors { link: 0, replay: Some(0), recovery: Some(0), crc: Some(0) }]);
    // A second link, counters out of order, an unknown counter and `N/A` skipped.
    let text = format!(
        "{GB300_NVLINK_E}\t Link 1: Recovery Errors: 3\n\t Link 1: Replay Errors: 12\n\t Link 1: Effective Errors: 9\n\t \
         Link 1: CRC Errors: N/A\n"
    );
    let links = &parse_nvlink_errors(&text).unwrap()[0].links;
    assert_eq!(links[1], NvLinkErrors { link: 1, replay: Some(12), recovery: Some(3), crc: None });
    // `nvlink -s` lines are not counters, and counters are not states.
    assert!(parse_nvlink_errors("GPU 0: NVIDIA A100 (UUID: GPU-1)\n\t Link 0: 25 GB/s\n").is_err());
    assert!(parse_nvlink_status(GB300_NVLINK_E).is_err());
    // Counters under no GPU line, malformed and huge input.
    assert!(parse_nvlink_errors("\t Link 0: Replay Errors: 4\n").is_err());
    for bad in [
        "GPU 0: X\n Link x: Replay Errors: 1",
        "GPU 0: X\n Link 0: Replay Errors: -1",
        "GPU 0: X\n Link 0: Replay Errors",
    ] {
        assert!(parse_nvlink_errors(bad).is_err(), "{bad}");
    }
    let huge = format!("GPU 0: X\n{}", "\t Link 7: Replay Errors: 1\n".repeat(100_000));
    assert_eq!(parse_nvlink_errors(&huge).unwrap()[0].links.len(), 1);
    let many_links: String = (0..1000).map(|l| format!("\t Link {l}: CRC Errors: 1\n")).collect();
    assert_eq!(parse_nvlink_errors(&format!("GPU 0: X\n{many_links}")).unwrap()[0].links.len(), MAX_LINKS);
}
