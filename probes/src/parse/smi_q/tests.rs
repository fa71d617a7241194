use super::*;

pub(crate) const SAMPLE: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/smi_q_two_l4.txt"));

#[test]
fn sample_reads_versions_gpus_links_and_processes() {
    let (r, archs) = parse_full(SAMPLE).unwrap();
    assert_eq!(r.driver_version.unwrap().as_str(), "550.90.07");
    assert_eq!(r.cuda_version, Some(gpu_doctor_model::CudaVersion::new(12, 4)));
    assert_eq!(r.gpus.len(), 2);
    assert_eq!(archs, vec![Some("Ada Lovelace".to_owned()), Some("Ada Lovelace".to_owned())]);
    let g = &r.gpus[0];
    assert_eq!(g.name.as_deref(), Some("NVIDIA L4"));
    assert_eq!(g.pci_bus_id.as_deref(), Some("00000000:17:00.0"));
    assert_eq!(g.uuid.as_deref(), Some("GPU-5f8a2c1e-7b3d-4e69-9a10-2c4d6e8f0a1b"));
    assert_eq!((g.memory_total_mib, g.memory_used_mib), (Some(23034), Some(4120)));
    assert_eq!(g.bar1_total_mib, Some(32768), "BAR1 Memory Usage, not FB's Total");
    assert_eq!(
        (g.pcie_gen_max, g.pcie_gen_current, g.pcie_width_max, g.pcie_width_current),
        (Some(4), Some(4), Some(16), Some(16))
    );
    assert_eq!(g.mig_enabled, None, "N/A");
    assert_eq!(g.compute_mode.as_deref(), Some("Default"));
    assert_eq!((g.persistence_mode, g.display_attached, g.ecc_enabled), (Some(true), Some(false), Some(true)));
    assert_eq!((g.temperature_c, g.power_draw_mw, g.power_limit_mw), (Some(51), Some(38_940), Some(72_000)));
    assert_eq!(
        (g.clock_sm_mhz, g.clock_sm_max_mhz, g.clock_mem_mhz, g.clock_mem_max_mhz),
        (Some(2040), Some(2040), Some(6250), Some(6251))
    );
    assert_eq!(g.utilization_gpu_pct, Some(37));
    assert_eq!(g.vbios_version.as_deref(), Some("95.04.4E.00.04"));
    assert_eq!(g.processes, vec![SmiProcess { pid: 48213, used_memory_mib: Some(4110) }]);
    let g = &r.gpus[1];
    assert_eq!((g.pcie_gen_current, g.pcie_width_current), (Some(1), Some(8)), "a degraded link");
    assert!(g.processes.is_empty());
}

#[test]
fn quoted_and_indented_reports_parse_the_same() {
    let quoted: String = SAMPLE.lines().map(|l| format!(">     {l}\n")).collect();
    let plain = parse_full(SAMPLE).unwrap();
    let stripped: String = quoted.lines().map(|l| format!("{}\n", l.trim_start_matches('>'))).collect();
    assert_eq!(parse_full(&stripped).unwrap(), plain);
    let crlf = SAMPLE.replace('\n', "\r\n");
    assert_eq!(parse_full(&crlf).unwrap(), plain);
}

#[test]
fn prose_after_the_report_ends_it() {
    let text = format!("{SAMPLE}\nThat is all I have.\nDriver Version: 1.0\n");
    let (r, _) = parse_full(&text).unwrap();
    assert_eq!(r.gpus.len(), 2);
    assert_eq!(r.driver_version.unwrap().as_str(), "550.90.07");
}

#[test]
fn old_drivers_without_cuda_or_architecture_parse() {
    let text = "==============NVSMI LOG==============\n\nDriver Version                      : 369.30\n\n\
        Attached GPUs                       : 1\nGPU 0000:06:00.0\n    Product Name                    : GeForce GTX TITAN Z\n\
        \x20   Power Readings\n        Power Draw                  : 45.10 W\n        Power Limit                 : 189.00 W\n";
    let (r, archs) = parse_full(text).unwrap();
    assert_eq!(r.cuda_version, None);
    assert_eq!(archs, vec![None]);
    assert_eq!(r.gpus[0].pci_bus_id.as_deref(), Some("0000:06:00.0"));
    assert_eq!((r.gpus[0].power_draw_mw, r.gpus[0].power_limit_mw), (Some(45_100), Some(189_000)));
}

#[test]
fn text_without_a_report_is_an_error() {
    for bad in
        ["", "Product Name : x\n", "GPU 0: NVIDIA A100 (UUID: GPU-1)\n", "hello\nworld\n", "CUDA Version : 12.4\n"]
    {
        assert!(parse(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn truncated_reports_keep_what_they_have() {
    for cut in (0..SAMPLE.len()).step_by(97) {
        let Some(text) = SAMPLE.get(..cut) else { continue };
        let _ = parse_full(text);
    }
    let half = SAMPLE.find("GPU 00000000:CA:00.0").unwrap();
    let (r, _) = parse_full(&SAMPLE[..half]).unwrap();
    assert_eq!(r.gpus.len(), 1);
}

const A10: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_q/a10_535.129.03_row-remap-pending.txt"));
const H100: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_q/h100x8_535.161.08_hw-slowdown.txt"));
const RTX4090: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_q/rtx4090x8_535.154.05.txt"));
const A100: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_q/a100_510.73.08_row-remap-pending_excerpt.txt"));

#[test]
fn a10_reads_a_pending_row_remap_thresholds_and_power_limits() {
    let r = parse(A10).unwrap();
    let h = &r.gpus[0].health;
    let m = &h.memory_errors;
    assert_eq!((m.corrected_volatile, m.uncorrected_volatile), (Some(0), Some(0)), "SRAM + DRAM, all 0");
    assert_eq!((m.corrected_aggregate, m.uncorrected_aggregate), (Some(0), Some(0)));
    assert_eq!((m.remapped_rows_corrected, m.remapped_rows_uncorrected), (Some(0), Some(4)));
    assert_eq!((m.remapped_rows_pending, m.remapped_rows_failure), (Some(true), Some(false)));
    assert_eq!((m.retired_pages_single_bit, m.retired_pages_pending), (None, None), "N/A on Ampere");
    assert_eq!(h.ecc_pending, Some(true));
    assert_eq!(h.clock_event_reasons.as_deref(), Some(&["gpu_idle".to_owned()][..]));
    assert_eq!((h.temperature_slowdown_c, h.temperature_shutdown_c), (Some(98), Some(101)));
    assert_eq!(
        (h.power_limit_default_mw, h.power_limit_min_mw, h.power_limit_max_mw),
        (Some(150_000), Some(100_000), Some(150_000))
    );
    assert_eq!(h.fan_speed_pct, Some(0));
    assert_eq!(r.gpus[0].power_limit_mw, Some(150_000), "the enforced limit stays a Gpu field");
}

#[test]
fn h100_reads_the_hardware_slowdown_and_power_brake() {
    let r = parse(H100).unwrap();
    assert_eq!(r.gpus.len(), 8);
    let slowed: Vec<usize> = (0..8)
        .filter(|&i| {
            r.gpus[i].health.clock_event_reasons.as_deref()
                == Some(&["hw_slowdown".to_owned(), "hw_power_brake_slowdown".to_owned()][..])
        })
        .collect();
    assert_eq!(slowed, [0, 1, 2, 3, 4, 5, 6, 7], "HW Slowdown and HW Power Brake Slowdown, in NVML's bit order");
    let h = &r.gpus[0].health;
    assert_eq!(h.fan_speed_pct, None, "N/A: passively cooled");
    assert_eq!(h.memory_errors.uncorrected_volatile, Some(0));
    assert_eq!(h.memory_errors.remapped_rows_pending, Some(false));
}

#[test]
fn geforce_has_no_ecc_counts_and_no_absolute_thresholds() {
    let r = parse(RTX4090).unwrap();
    let h = &r.gpus[0].health;
    assert_eq!(h.ecc_pending, Some(false));
    assert_eq!((h.memory_errors.corrected_volatile, h.memory_errors.uncorrected_aggregate), (None, None));
    assert_eq!(
        (h.memory_errors.remapped_rows_corrected, h.memory_errors.remapped_rows_pending),
        (Some(0), Some(false))
    );
    assert_eq!((h.temperature_slowdown_c, h.temperature_shutdown_c), (None, None), "T.Limit lines are relative");
    assert_eq!((h.fan_speed_pct, h.power_limit_default_mw), (Some(38), Some(450_000)));
}

#[test]
fn an_excerpt_with_elisions_keeps_its_counts() {
    let r = parse(A100).unwrap();
    assert_eq!(r.gpus.len(), 1);
    let m = &r.gpus[0].health.memory_errors;
    assert_eq!((m.corrected_volatile, m.corrected_aggregate), (Some(177), Some(177)));
    assert_eq!((m.remapped_rows_corrected, m.remapped_rows_pending), (Some(1), Some(true)));
    assert_eq!(r.gpus[0].name.as_deref(), Some("NVIDIA A100-SXM4-80GB"));
}

#[test]
fn old_single_and_double_bit_sections_and_pending_retirement() {
    let text = "Driver Version : 418.67\nGPU 00000000:3B:00.0\n    ECC Errors\n        Volatile\n            Single Bit\n                Device Memory : 5\n                Total : 7\n            Double Bit\n                Total : 1\n    Retired Pages\n        Single Bit ECC : 2\n        Double Bit ECC : 0\n        Pending Page Blacklist : No\n        Pending Page Retirement : Yes\n    Clocks Throttle Reasons\n        SW Thermal Slowdown : Active\n";
    let h = &parse(text).unwrap().gpus[0].health;
    let m = &h.memory_errors;
    assert_eq!((m.corrected_volatile, m.uncorrected_volatile), (Some(7), Some(1)), "the Total lines");
    assert_eq!((m.retired_pages_single_bit, m.retired_pages_double_bit), (Some(2), Some(0)));
    assert_eq!(m.retired_pages_pending, Some(true), "either pending line");
    assert_eq!(h.clock_event_reasons.as_deref(), Some(&["sw_thermal_slowdown".to_owned()][..]));
}

/// The byte offset of the `i`-th char boundary of `s`.
fn boundary(s: &str, i: proptest::sample::Index) -> usize {
    let n = s.chars().count();
    let k = i.index(n + 1);
    s.char_indices().map(|(b, _)| b).chain(std::iter::once(s.len())).nth(k).unwrap_or(s.len())
}

proptest::proptest! {
    #[test]
    fn arbitrary_text_never_panics(s in "\\PC*") {
        let _ = parse_full(&s);
    }

    #[test]
    fn health_section_noise_never_panics(
        s in "( {0,16}|GPU 0000:0[0-9]:00.0|ECC Errors|Volatile|Aggregate|SRAM Correctable : |DRAM Uncorrectable|Single Bit|Total : |Retired Pages|Pending Page Blacklist : |Remapped Rows|Pending : |Clocks Event Reasons|HW Slowdown : |Active|Not Active|GPU Power Readings|Default Power Limit : |Fan Speed : |[0-9.%CW ]{0,8}|N/A|\n){0,60}"
    ) {
        let _ = parse_full(&s);
    }

    #[test]
    fn truncated_health_captures_never_panic(file: proptest::sample::Index, at: proptest::sample::Index) {
        let captures = [A10, H100, RTX4090, A100];
        let text = captures[file.index(captures.len())];
        let _ = parse_full(&text[..boundary(text, at)]);
    }

    #[test]
    fn near_miss_text_never_panics(
        s in "( {0,12}|GPU 0000:0[0-9]:00.0|Driver Version : |CUDA Version : |PCIe Generation|Max : |[0-9x.]{0,6}|Processes|Process ID : |Used GPU Memory : |\n){0,40}"
    ) {
        let _ = parse_full(&s);
    }
}

/// Before R610 (550.127.05, github.com/leptonai/gpud e2e/mock/nvidia-smi/test_data.go): only
/// `Driver Version` and `CUDA Version`.
#[test]
fn header_before_r610_reads_driver_and_cuda_version() {
    let q = "==============NVSMI LOG==============\n\n\
             Timestamp                                 : Wed Jan 22 04:28:41 2025\n\
             Driver Version                            : 550.127.05\n\
             CUDA Version                              : 12.4\n";
    let r = parse(q).unwrap();
    assert_eq!(r.driver_version.unwrap().as_str(), "550.127.05");
    assert_eq!(r.cuda_version, Some(gpu_doctor_model::CudaVersion::new(12, 4)));
}

/// R610's `-q` prints the old labels first, their values marked deprecated, then `KMD Version` and
/// `CUDA UMD Version` (the suffix as github.com/PrismML-Eng/Bonsai-demo/pull/122 quotes it): the
/// new labels give the versions, the deprecated values are never read as versions.
#[test]
fn header_from_r610_reads_kmd_and_cuda_umd_version() {
    let q = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_q/r610_header_assembled.txt"));
    let r = parse(q).unwrap();
    assert_eq!(r.driver_version.unwrap().as_str(), "610.43.02");
    assert_eq!(r.cuda_version, Some(gpu_doctor_model::CudaVersion::new(13, 3)));
    // The deprecated lines alone carry no version.
    let old_only: String =
        q.lines().filter(|l| !l.starts_with("KMD") && !l.starts_with("CUDA UMD")).collect::<Vec<_>>().join("\n");
    assert!(parse(&old_only).is_err(), "{old_only}");
}

/// A writer's `...` for lines left out, at the left margin inside a GPU's block (the `nvidia-smi -a`
/// excerpt of zenn.dev/yuyakato/articles/12a19c019b1339, verbatim), does not end the report.
#[test]
fn an_elision_at_the_margin_does_not_end_the_report() {
    let text = [
        "$ nvidia-smi -a",
        "...",
        "Attached GPUs                             : 1",
        "GPU 00000000:2D:00.0",
        "...",
        "    PCI",
        "        Bus                               : 0x2D",
        "        GPU Link Info",
        "            PCIe Generation",
        "                Max                       : 3",
        "                Current                   : 1",
        "            Link Width",
        "                Max                       : 16x",
        "                Current                   : 16x",
        "...",
    ]
    .join("\n");
    let r = parse(&text).unwrap();
    let g = &r.gpus[0];
    assert_eq!(
        (g.pcie_gen_max, g.pcie_gen_current, g.pcie_width_max, g.pcie_width_current),
        (Some(3), Some(1), Some(16), Some(16))
    );
    for mark in ["...", "[...]", "(...)", "…", "[…]"] {
        assert!(is_elision(mark), "{mark}");
    }
    for not in ["..", "[]", "Bus : ...", "N/A"] {
        assert!(!is_elision(not), "{not}");
    }
}

/// `nvidia-smi -q | grep -A 12 "GPU Link Info"`: each GPU's link section without its `GPU <bus id>` line, with
/// prose between them (the layout of -q's PCI section; the values written for the test). Each section is one
/// GPU; prose between them does not end the report.
#[test]
fn link_sections_without_their_gpu_line_are_one_gpu_each() {
    let text = "Driver Version                                         : 596.49\n\
                first card:\n\
                \x20       GPU Link Info\n\
                \x20           PCIe Generation\n\
                \x20               Max                                    : 3\n\
                \x20               Current                                : 3\n\
                \x20           Link Width\n\
                \x20               Max                                    : 16x\n\
                \x20               Current                                : 8x\n\
                second card:\n\
                \x20       GPU Link Info\n\
                \x20           PCIe Generation\n\
                \x20               Max                                    : 4\n\
                \x20               Current                                : 1\n";
    let r = parse(text).unwrap();
    assert_eq!(r.gpus.len(), 2, "{:?}", r.gpus);
    assert_eq!((r.gpus[0].pcie_width_max, r.gpus[0].pcie_width_current), (Some(16), Some(8)));
    assert_eq!((r.gpus[1].pcie_gen_max, r.gpus[1].pcie_gen_current), (Some(4), Some(1)));
    assert_eq!(r.gpus[1].pcie_width_current, None);
    // Inside a GPU's block the section is that GPU's, not another.
    let whole = "GPU 00000000:01:00.0\n    Product Name : NVIDIA GeForce RTX 4070\n    PCI\n        GPU Link Info\n            Link Width\n                Current : 8x\n";
    let r = parse(whole).unwrap();
    assert_eq!(r.gpus.len(), 1);
    assert_eq!(r.gpus[0].pcie_width_current, Some(8));
}
