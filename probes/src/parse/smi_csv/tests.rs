use super::*;
use crate::parse::fixtures;

/// Two GPUs with units in the cells, also used by the no-panic property tests.
pub(crate) const SAMPLE: &str = "\
name, uuid, pci.bus_id, driver_version, memory.total [MiB], memory.used [MiB], pcie.link.gen.gpucurrent, pcie.link.gen.max, pcie.link.width.current, pcie.link.width.max, mig.mode.current, compute_cap, temperature.gpu, power.draw [W], power.limit [W], clocks.sm [MHz], clocks.max.sm [MHz], utilization.gpu [%], persistence_mode, compute_mode
NVIDIA GeForce RTX 4090, GPU-71d1acc2-662d-2166-bf9f-65272d2fc437, 00000000:01:00.0, 535.86.05, 24564 MiB, 2 MiB, 1, 4, 16, 16, [N/A], 8.9, 40, 26.84 W, 450.00 W, 210 MHz, 3120 MHz, 0 %, Enabled, Default
NVIDIA A100-SXM4-80GB, GPU-513536b6-7d19-9063-b049-1e69664bb298, 00000000:41:00.0, 535.86.05, 81920 MiB, 50 MiB, 4, 4, 8, 16, Enabled, 8.0, [N/A], [N/A], [Not Supported], 1275 MHz, 1410 MHz, [N/A], Disabled, Exclusive_Process
";

#[test]
fn sample_maps_known_columns() {
    let r = parse(SAMPLE).unwrap();
    assert_eq!(r.driver_version.unwrap().as_str(), "535.86.05");
    assert_eq!(r.cuda_version, None);
    assert_eq!(r.gpus.len(), 2);
    let g = &r.gpus[0];
    assert_eq!(g.name.as_deref(), Some("NVIDIA GeForce RTX 4090"));
    assert_eq!(g.uuid.as_deref(), Some("GPU-71d1acc2-662d-2166-bf9f-65272d2fc437"));
    assert_eq!(g.pci_bus_id.as_deref(), Some("00000000:01:00.0"));
    assert_eq!((g.memory_total_mib, g.memory_used_mib), (Some(24564), Some(2)));
    assert_eq!(
        [g.pcie_gen_current, g.pcie_gen_max, g.pcie_width_current, g.pcie_width_max],
        [Some(1), Some(4), Some(16), Some(16)]
    );
    assert_eq!(g.mig_enabled, None);
    assert_eq!(g.compute_capability.as_deref(), Some("8.9"));
    assert_eq!((g.temperature_c, g.power_draw_mw, g.power_limit_mw), (Some(40), Some(26_840), Some(450_000)));
    assert_eq!((g.clock_sm_mhz, g.clock_sm_max_mhz, g.utilization_gpu_pct), (Some(210), Some(3120), Some(0)));
    assert_eq!(g.persistence_mode, Some(true));
    assert_eq!(g.compute_mode.as_deref(), Some("Default"));
    let g = &r.gpus[1];
    assert_eq!(g.mig_enabled, Some(true));
    assert_eq!(g.pcie_width_current, Some(8));
    assert_eq!((g.temperature_c, g.power_draw_mw, g.power_limit_mw), (None, None, None));
    assert_eq!(g.utilization_gpu_pct, None);
    assert_eq!(g.persistence_mode, Some(false));
    assert_eq!(g.compute_mode.as_deref(), Some("Exclusive_Process"));
}

/// `pcie.link.gen.gpumax` and `pcie.link.gen.hostmax` (nvidia-smi --help-query-gpu: the most the
/// GPU, and the root port above it, support) stand in for a missing `pcie.link.gen.max`, the lower
/// of the two; `pcie.link.gen.max` wins where it is there.
#[test]
fn gpu_and_host_maxima_give_the_link_maximum() {
    let r = parse(
        "name, pcie.link.gen.gpucurrent, pcie.link.gen.gpumax, pcie.link.gen.hostmax\n\
         NVIDIA GeForce RTX 4090, 1, 4, 3\n\
         NVIDIA GeForce RTX 4090, 1, 4, [N/A]",
    )
    .unwrap();
    assert_eq!([r.gpus[0].pcie_gen_current, r.gpus[0].pcie_gen_max], [Some(1), Some(3)]);
    assert_eq!(r.gpus[1].pcie_gen_max, Some(4), "the GPU's own maximum without the host's");
    let r = parse("name, pcie.link.gen.max, pcie.link.gen.gpumax\nTesla T4, 3, 4").unwrap();
    assert_eq!(r.gpus[0].pcie_gen_max, Some(3), "the system's maximum first");
    let r = parse("name, pcie.link.gen.current\nTesla T4, 3").unwrap();
    assert_eq!(r.gpus[0].pcie_gen_max, None);
}

#[test]
fn rows_are_keyed_by_field_name() {
    let rows = parse_rows("name, memory.total [MiB], fan.speed [%]\r\nTesla T4, 15360, [N/A]").unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].get("name").map(String::as_str), Some("Tesla T4"));
    assert_eq!(rows[0].get("memory.total").map(String::as_str), Some("15360"));
    assert_eq!(rows[0].get("fan.speed").map(String::as_str), Some("[N/A]"));
    let r = parse("name, memory.total [MiB]\nTesla T4, 15360").unwrap();
    assert_eq!(r.gpus[0].memory_total_mib, Some(15360), "nounits cells");
    assert_eq!(r.driver_version, None);
}

#[test]
fn header_only_gives_no_gpus() {
    assert_eq!(parse("name, uuid\n").unwrap().gpus.len(), 0);
}

#[test]
fn bad_input_is_an_error() {
    for bad in [
        "",
        "\n \n",
        "Tesla T4, 15360 MiB",
        "NVIDIA GeForce RTX 4090, GPU-71d1acc2, 24564",
        "0, 24564",
        "Field \"foo\" is not a valid field to query.",
        "name, uuid\nTesla T4",
        "name, uuid\nTesla T4, GPU-1, extra",
        "<nvidia_smi_log/>",
        "| NVIDIA-SMI 535.86.05 Driver Version: 535.86.05 CUDA Version: 12.2 |",
    ] {
        assert!(parse(bad).is_err(), "{bad:?}");
        assert!(parse_rows(bad).is_err(), "{bad:?}");
    }
    let cut = &SAMPLE[..SAMPLE.len() - 20];
    assert!(parse(cut).is_err(), "a row cut short");
}

#[test]
fn every_csv_fixture() {
    let Some(files) = fixtures("nvidia-smi-csv") else { return };
    for (file, text) in &files {
        let r = parse(text).unwrap_or_else(|e| panic!("{file}: {e}"));
        let rows = parse_rows(text).unwrap();
        assert_eq!(rows.len(), r.gpus.len(), "{file}");
        match file.as_str() {
            "tesla-p100_query-gpu.csv" => {
                assert!(!text.ends_with('\n'), "the fixture has no trailing newline");
                assert_eq!(r.driver_version, None);
                assert_eq!(r.gpus.len(), 1);
                let g = &r.gpus[0];
                assert_eq!(g.name.as_deref(), Some("Tesla P100-PCIE-16GB"));
                assert_eq!(g.uuid.as_deref(), Some("GPU-ef1b2c9b-38d8-2090-2bd1-f567a3eb42a6"));
                assert_eq!((g.memory_total_mib, g.memory_used_mib), (None, Some(0)));
                assert_eq!((g.temperature_c, g.power_draw_mw), (Some(37), Some(28_160)));
                assert_eq!((g.clock_sm_mhz, g.clock_mem_mhz), (Some(405), Some(715)));
                assert_eq!(g.utilization_gpu_pct, Some(0));
                assert_eq!(rows[0].get("fan.speed").map(String::as_str), Some("[N/A]"));
                assert_eq!(rows[0].get("memory.reserved").map(String::as_str), Some("103"));
            }
            "h100-80gb-mig_590.48.01_query-gpu-all-fields.csv" => {
                assert_eq!(r.driver_version.as_ref().map(|d| d.as_str()), Some("590.48.01"));
                assert_eq!(r.gpus.len(), 1);
                assert!(rows[0].len() > 150, "about 200 columns, got {}", rows[0].len());
                let g = &r.gpus[0];
                assert_eq!(g.name.as_deref(), Some("NVIDIA H100 80GB HBM3"));
                assert_eq!(g.pci_bus_id.as_deref(), Some("00000000:00:09.0"));
                assert_eq!((g.memory_total_mib, g.memory_used_mib), (Some(81559), Some(59)));
                let link = [g.pcie_gen_current, g.pcie_gen_max, g.pcie_width_current, g.pcie_width_max];
                assert_eq!(link, [Some(5), Some(5), Some(16), Some(16)]);
                assert_eq!(g.mig_enabled, Some(true));
                assert_eq!(g.compute_capability.as_deref(), Some("9.0"));
                assert_eq!(g.utilization_gpu_pct, None, "[N/A] under MIG");
                assert_eq!((g.power_draw_mw, g.power_limit_mw), (Some(71_150), Some(700_000)));
                assert_eq!(g.clock_sm_max_mhz, Some(1980));
                assert_eq!((g.persistence_mode, g.ecc_enabled), (Some(true), Some(true)));
                assert_eq!(g.driver_model, None, "[N/A] on Linux");
                assert_eq!(g.display_attached, Some(true));
                assert_eq!(g.vbios_version.as_deref(), Some("96.00.A5.00.01"));
                assert_eq!(g.temperature_c, Some(42));
                let deprecated = rows[0].get("display_mode").map(String::as_str);
                assert_eq!(deprecated, Some("[Requested functionality has been deprecated]"));
            }
            other => panic!("{other}: new fixture, add its expected values"),
        }
    }
}

/// `--format=csv,noheader` is the same rows without the header: each shared capture with its
/// header taken off gives the same name, UUID, bus id, driver and total memory as with it.
#[test]
fn every_csv_fixture_without_its_header() {
    let Some(files) = fixtures("nvidia-smi-csv") else { return };
    for (file, text) in &files {
        let with = parse(text).unwrap();
        let rows = text.split_once('\n').map_or("", |(_, rows)| rows);
        let without = parse_noheader(rows).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(without.driver_version, with.driver_version, "{file}");
        assert_eq!(without.gpus.len(), with.gpus.len(), "{file}");
        for (a, b) in without.gpus.iter().zip(&with.gpus) {
            assert_eq!((&a.name, &a.uuid, &a.pci_bus_id), (&b.name, &b.uuid, &b.pci_bus_id), "{file}");
            assert_eq!(a.memory_total_mib, b.memory_total_mib, "{file}");
        }
    }
}

/// The rows issue 27 names (`nvidia-smi --query-gpu=name,pci.bus_id,driver_version,
/// pcie.link.gen.max,pcie.link.gen.current --format=csv,noheader`): the GPUs and the driver are
/// read; the small numbers (link generations) stay unread, since their shape does not say which
/// field they are.
#[test]
fn noheader_rows_are_read_by_their_shapes() {
    let rows = "NVIDIA GeForce RTX 4090, 00000000:01:00.0, 550.54.14, 4, 1\n\
                NVIDIA GeForce RTX 4090, 00000000:41:00.0, 550.54.14, 4, 4\n";
    let r = parse_noheader(rows).unwrap();
    assert_eq!(r.driver_version.as_ref().map(|d| d.as_str()), Some("550.54.14"));
    let ids: Vec<_> = r.gpus.iter().map(|g| g.pci_bus_id.as_deref()).collect();
    assert_eq!(ids, [Some("00000000:01:00.0"), Some("00000000:41:00.0")]);
    assert!(r.gpus.iter().all(|g| g.name.as_deref() == Some("NVIDIA GeForce RTX 4090") && g.pcie_gen_max.is_none()));
    for (bad, why) in [
        ("", "empty"),
        ("a, b, c\n", "no field told"),
        ("NVIDIA GeForce RTX 4090, 4, 1\n", "a name alone"),
        ("00000000:01:00.0, 550.54.14\n", "no name"),
        (
            "NVIDIA GeForce RTX 4090, 00000000:01:00.0, 550.54.14\nNVIDIA GeForce RTX 4090, 00000000:41:00.0\n",
            "a short row",
        ),
    ] {
        assert!(parse_noheader(bad).is_err(), "{why} was read");
    }
    // Near misses are not taken for a bus id or a driver.
    for cell in ["0000:01:00.8", "00000000:1:00.0", "5500.54.14", "550.5", "96.00.A5.00.01", "12.4"] {
        assert_eq!(field_of_cell(cell), None, "{cell}");
    }
    // Huge input stays linear: 50,000 rows.
    let many = "NVIDIA H100 80GB HBM3, 00000000:00:09.0, 590.48.01\n".repeat(50_000);
    assert_eq!(parse_noheader(&many).unwrap().gpus.len(), 50_000);
}
