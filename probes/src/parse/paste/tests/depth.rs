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
