use super::*;
use crate::parse::fixtures;

/// A small but complete v13-style report, also used by the no-panic property tests.
pub(crate) const SAMPLE: &str = r#"<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v13.dtd">
<nvidia_smi_log>
    <timestamp>Tue Dec 30 09:46:54 2025</timestamp>
    <driver_version>590.44.01</driver_version>
    <cuda_version>13.1</cuda_version>
    <nvidia_smi_version>590.44.01</nvidia_smi_version>
    <attached_gpus>1</attached_gpus>
    <gpu id="00000000:81:00.0">
        <product_name>NVIDIA RTX A5000</product_name>
        <display_attached>Yes</display_attached>
        <display_active>Disabled</display_active>
        <persistence_mode>Enabled</persistence_mode>
        <mig_mode><current_mig>Disabled</current_mig><pending_mig>N/A</pending_mig></mig_mode>
        <driver_model><current_dm>TCC</current_dm><pending_dm>TCC</pending_dm></driver_model>
        <uuid>GPU-12345678-aaaa-bbbb-cccc-0123456789ab</uuid>
        <vbios_version>94.02.6D.00.0D</vbios_version>
        <compute_cap>8.6</compute_cap>
        <pci>
            <pci_bus_id>00000000:81:00.0</pci_bus_id>
            <pci_gpu_link_info>
                <pcie_gen><max_link_gen>4</max_link_gen><current_link_gen>1</current_link_gen></pcie_gen>
                <link_widths><max_link_width>16x</max_link_width><current_link_width>8x</current_link_width></link_widths>
            </pci_gpu_link_info>
        </pci>
        <fb_memory_usage><total>24564 MiB</total><reserved>336 MiB</reserved><used>22437 MiB</used></fb_memory_usage>
        <compute_mode>Exclusive_Process</compute_mode>
        <utilization><gpu_util>7 %</gpu_util></utilization>
        <ecc_mode><current_ecc>Enabled</current_ecc></ecc_mode>
        <temperature><gpu_temp>13 C</gpu_temp></temperature>
        <gpu_power_readings>
            <power_state>Requested functionality has been deprecated</power_state>
            <average_power_draw>6.41 W</average_power_draw>
            <instant_power_draw>6.52 W</instant_power_draw>
            <current_power_limit>230.00 W</current_power_limit>
        </gpu_power_readings>
        <clocks><sm_clock>210 MHz</sm_clock><mem_clock>405 MHz</mem_clock></clocks>
        <max_clocks><sm_clock>2100 MHz</sm_clock><mem_clock>8001 MHz</mem_clock></max_clocks>
        <processes>
            <process_info><pid>100477</pid><type>C</type><used_memory>22430 MiB</used_memory></process_info>
            <process_info><pid>4242</pid><type>C+G</type><used_memory>N/A</used_memory></process_info>
            <process_info><pid>N/A</pid></process_info>
        </processes>
    </gpu>
</nvidia_smi_log>
"#;

#[test]
fn sample_reads_every_field() {
    let r = parse(SAMPLE).unwrap();
    assert_eq!(r.driver_version.unwrap().as_str(), "590.44.01");
    assert_eq!(r.cuda_version, Some(gpu_doctor_model::CudaVersion::new(13, 1)));
    assert_eq!(r.nvidia_smi_version.as_deref(), Some("590.44.01"));
    let expected = SmiGpu {
        name: Some("NVIDIA RTX A5000".into()),
        uuid: Some("GPU-12345678-aaaa-bbbb-cccc-0123456789ab".into()),
        pci_bus_id: Some("00000000:81:00.0".into()),
        memory_total_mib: Some(24564),
        memory_used_mib: Some(22437),
        bar1_total_mib: None,
        pcie_gen_current: Some(1),
        pcie_gen_max: Some(4),
        pcie_width_current: Some(8),
        pcie_width_max: Some(16),
        mig_enabled: Some(false),
        compute_mode: Some("Exclusive_Process".into()),
        persistence_mode: Some(true),
        driver_model: Some("TCC".into()),
        display_attached: Some(true),
        vbios_version: Some("94.02.6D.00.0D".into()),
        temperature_c: Some(13),
        power_draw_mw: Some(6410),
        power_limit_mw: Some(230_000),
        clock_sm_mhz: Some(210),
        clock_sm_max_mhz: Some(2100),
        clock_mem_mhz: Some(405),
        clock_mem_max_mhz: Some(8001),
        utilization_gpu_pct: Some(7),
        ecc_enabled: Some(true),
        compute_capability: Some("8.6".into()),
        processes: vec![
            SmiProcess { pid: 100477, used_memory_mib: Some(22430) },
            SmiProcess { pid: 4242, used_memory_mib: None },
        ],
        health: gpu_doctor_model::GpuHealth {
            memory_errors: gpu_doctor_model::EccCounters { ecc_enabled: Some(true), ..Default::default() },
            ..Default::default()
        },
    };
    assert_eq!(r.gpus, vec![expected]);
}

#[test]
fn old_power_readings_and_na_values() {
    let xml = "<nvidia_smi_log><driver_version>390.94</driver_version>\
        <gpu id=\"00000000:1A:00.0\"><product_name>Tesla M10</product_name>\
        <persistence_mode>N/A</persistence_mode><display_active>Enabled</display_active>\
        <utilization><gpu_util>[Not Supported]</gpu_util></utilization>\
        <power_readings><power_draw>10.43 W</power_draw><power_limit>60.00 W</power_limit>\
        <enforced_power_limit>53.00 W</enforced_power_limit></power_readings></gpu></nvidia_smi_log>";
    let r = parse(xml).unwrap();
    assert_eq!(r.cuda_version, None);
    let g = &r.gpus[0];
    assert_eq!(g.pci_bus_id.as_deref(), Some("00000000:1A:00.0"), "falls back to the gpu id attribute");
    assert_eq!(g.persistence_mode, None);
    assert_eq!(g.display_attached, Some(true));
    assert_eq!(g.utilization_gpu_pct, None);
    assert_eq!(g.power_draw_mw, Some(10_430));
    assert_eq!(g.power_limit_mw, Some(53_000), "the enforced limit wins");
    assert_eq!(g.memory_total_mib, None);
    assert!(g.processes.is_empty());
}

#[test]
fn bad_input_is_an_error() {
    for bad in [
        "",
        "   ",
        "not xml at all",
        "<html><body>nvidia-smi</body></html>",
        "<nvidia_smi_log><driver_version>535.86.05</driver_version>",
        "<nvidia_smi_log><gpu></nvidia_smi_log>",
        "<?xml version=\"1.0\" ?>",
        "{\"driver_version\": \"535.86.05\"}",
    ] {
        assert!(parse(bad).is_err(), "{bad:?}");
    }
    let cut = &SAMPLE[..SAMPLE.len() / 2];
    assert!(parse(cut).is_err());
}

/// roxmltree descends one call per open element, so text nested a hundred thousand deep would
/// overflow the stack (an abort, not an error) if it reached the parser.
#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let n = 100_000;
    let deep = format!("<nvidia_smi_log>{}{}</nvidia_smi_log>", "<gpu>".repeat(n), "</gpu>".repeat(n));
    let err = parse(&deep).unwrap_err().to_string();
    assert!(err.contains("nested"), "{err}");
    // Quoted `/>` in an attribute does not make a tag look self-closing.
    let sneaky = format!("<nvidia_smi_log>{}</nvidia_smi_log>", "<gpu a=\"/>\" b='>'>".repeat(n));
    assert!(parse(&sneaky).unwrap_err().to_string().contains("nested"));
    // The real reports (every_xml_fixture) are shallow and still parse.
}

#[test]
fn entity_bombs_are_refused_or_bounded() {
    let bomb = r#"<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">
<!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">]>
<nvidia_smi_log><driver_version>&f;</driver_version></nvidia_smi_log>"#;
    // Either roxmltree refuses it or the value is simply not a version; it must not hang or panic.
    if let Ok(r) = parse(bomb) {
        assert_eq!(r.driver_version, None);
    }
}

/// What each fixture must give: driver, CUDA, then per GPU (name, memory total MiB,
/// [gen now, gen max, width now, width max], MIG).
struct Expect {
    driver: &'static str,
    cuda: Option<&'static str>,
    gpus: &'static [(&'static str, u64, [u32; 4], Option<bool>)],
}

fn expectations(file: &str) -> Option<Expect> {
    const M10: (&str, u64, [u32; 4], Option<bool>) = ("Tesla M10", 8191, [1, 3, 8, 16], None);
    const A5000: (&str, u64, [u32; 4], Option<bool>) = ("NVIDIA RTX A5000", 24564, [1, 4, 16, 16], None);
    let e = |driver, cuda, gpus| Some(Expect { driver, cuda, gpus });
    match file {
        "tesla-m10-x4_390.94_vgpu-host.xml" => e("390.94", None, &[M10, M10, M10, M10]),
        "gtx-1660-ti-graphics-device_418.43.xml" => {
            e("418.43", Some("10.1"), &[("Graphics Device", 5912, [1, 3, 16, 16], None)])
        }
        "gt-1030_470.74.xml" => e("470.74", Some("11.4"), &[("NVIDIA GeForce GT 1030", 1998, [3, 3, 4, 4], None)]),
        "a100-sxm4-40gb-mig_510.47.03.xml" => {
            e("510.47.03", Some("11.6"), &[("NVIDIA A100-SXM4-40GB", 40960, [4, 4, 16, 16], Some(true))])
        }
        "rtx-2080-windows-wddm_516.59.xml" => {
            e("516.59", Some("11.7"), &[("NVIDIA GeForce RTX 2080", 8192, [3, 3, 8, 16], None)])
        }
        "a100-sxm4-80gb_535.54.03.xml" => {
            e("535.54.03", Some("12.2"), &[("NVIDIA A100-SXM4-80GB", 81920, [4, 4, 16, 16], Some(true))])
        }
        "rtx-4090_535.86.05.xml" => {
            e("535.86.05", Some("12.2"), &[("NVIDIA GeForce RTX 4090", 24564, [1, 3, 16, 16], None)])
        }
        "rtx-3060_570.124.04.xml" => {
            e("570.124.04", Some("12.8"), &[("NVIDIA GeForce RTX 3060", 12288, [1, 4, 16, 16], None)])
        }
        "dual-rtx-a5000_590.44.01.xml" => e("590.44.01", Some("13.1"), &[A5000, A5000]),
        "rtx-pro-6000-blackwell-maxq_590.44.01.xml" => e(
            "590.44.01",
            Some("13.1"),
            &[("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", 97887, [1, 4, 16, 16], None)],
        ),
        _ => None,
    }
}

#[test]
fn every_xml_fixture() {
    let Some(files) = fixtures("nvidia-smi-xml") else { return };
    for (file, text) in files {
        let r = parse(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        let want = expectations(&file).unwrap_or_else(|| panic!("{file}: new fixture, add its expected values"));
        assert_eq!(r.driver_version.as_ref().map(|d| d.as_str()), Some(want.driver), "{file}");
        assert_eq!(r.cuda_version.map(|c| c.to_string()).as_deref(), want.cuda, "{file}");
        assert_eq!(r.gpus.len(), want.gpus.len(), "{file}");
        for (g, (name, total, link, mig)) in r.gpus.iter().zip(want.gpus) {
            assert_eq!(g.name.as_deref(), Some(*name), "{file}");
            assert_eq!(g.memory_total_mib, Some(*total), "{file}");
            let got = [g.pcie_gen_current, g.pcie_gen_max, g.pcie_width_current, g.pcie_width_max];
            assert_eq!(got, link.map(Some), "{file}: PCIe gen now/max, width now/max");
            assert_eq!(g.mig_enabled, *mig, "{file}");
            assert!(g.uuid.as_deref().is_some_and(|u| u.starts_with("GPU-")), "{file}");
            assert!(g.pci_bus_id.is_some() && g.vbios_version.is_some() && g.temperature_c.is_some(), "{file}");
            assert!(g.power_limit_mw.is_some() && g.clock_sm_max_mhz.is_some(), "{file}");
            assert_eq!(g.compute_mode.as_deref(), Some("Default"), "{file}");
        }
    }
}

#[test]
fn fixture_details() {
    let Some(files) = fixtures("nvidia-smi-xml") else { return };
    let get = |name: &str| parse(&files.iter().find(|(f, _)| f == name).unwrap().1).unwrap();

    let win = get("rtx-2080-windows-wddm_516.59.xml");
    let g = &win.gpus[0];
    assert_eq!(g.driver_model.as_deref(), Some("WDDM"));
    assert_eq!(g.persistence_mode, None);
    assert_eq!(g.display_attached, Some(true));
    assert_eq!((g.power_draw_mw, g.power_limit_mw), (Some(14_500), Some(275_000)));
    assert_eq!(g.processes.len(), 26);
    assert!(g.processes.iter().all(|p| p.used_memory_mib.is_none()), "WDDM hides per-process memory");

    let a5000 = get("dual-rtx-a5000_590.44.01.xml");
    let g = &a5000.gpus[0];
    assert_eq!(g.power_draw_mw, Some(6_410), "v13 average_power_draw");
    assert_eq!(g.power_limit_mw, Some(230_000), "v13 current_power_limit");
    assert_eq!(g.persistence_mode, Some(true));
    assert_eq!(g.display_attached, Some(false));
    assert_eq!(g.ecc_enabled, Some(false));
    assert_eq!(g.processes, vec![SmiProcess { pid: 100477, used_memory_mib: Some(22430) }]);
    assert_eq!(a5000.gpus[1].pci_bus_id.as_deref(), Some("00000000:C1:00.0"));
    assert_eq!(g.bar1_total_mib, Some(256), "bar1_memory_usage: Resizable BAR off");

    let a100 = get("a100-sxm4-40gb-mig_510.47.03.xml");
    let g = &a100.gpus[0];
    assert_eq!(g.utilization_gpu_pct, None, "MIG hides GPU utilization");
    assert_eq!(g.ecc_enabled, Some(true));
    assert_eq!(g.memory_used_mib, Some(38), "the GPU's fb_memory_usage, not a MIG device's");

    let gt = get("gt-1030_470.74.xml");
    assert_eq!(gt.gpus[0].power_draw_mw, None, "power_draw N/A");
    assert_eq!(gt.gpus[0].power_limit_mw, Some(30_000));
    assert_eq!(gt.gpus[0].processes.len(), 10);

    let m10 = get("tesla-m10-x4_390.94_vgpu-host.xml");
    let buses: Vec<_> = m10.gpus.iter().map(|g| g.pci_bus_id.as_deref().unwrap()).collect();
    assert_eq!(buses, ["00000000:1A:00.0", "00000000:1B:00.0", "00000000:1C:00.0", "00000000:1D:00.0"]);
    assert_eq!(m10.gpus[0].power_draw_mw, Some(10_430));
}

#[test]
fn captures_read_the_health_sections() {
    let Some(files) = fixtures("nvidia-smi-xml") else { return };
    let file = |name: &str| {
        let (_, text) = files.iter().find(|(n, _)| n.contains(name)).unwrap();
        parse(text).unwrap()
    };
    let a100 = file("a100-sxm4-80gb_535.54.03");
    let h = &a100.gpus[0].health;
    let m = &h.memory_errors;
    assert_eq!((h.ecc_pending, m.ecc_enabled), (Some(true), Some(true)));
    assert_eq!((m.corrected_volatile, m.uncorrected_volatile, m.uncorrected_aggregate), (Some(0), Some(0), Some(0)));
    assert_eq!((m.remapped_rows_pending, m.retired_pages_pending), (None, None), "N/A");
    assert_eq!((h.temperature_slowdown_c, h.temperature_shutdown_c), (Some(89), Some(92)));
    assert_eq!((h.power_limit_default_mw, h.power_limit_min_mw), (Some(500_000), Some(100_000)));
    assert_eq!(h.clock_event_reasons.as_deref(), Some(&[][..]), "every clocks_event_reason Not Active");
    assert_eq!(h.fan_speed_pct, None);
    let m10 = file("tesla-m10");
    let h = &m10.gpus[0].health;
    assert_eq!(h.clock_event_reasons.as_deref(), Some(&["gpu_idle".to_owned()][..]), "clocks_throttle_reasons");
    assert_eq!(h.memory_errors.corrected_volatile, None, "single_bit/total N/A");
    let a5000 = file("dual-rtx-a5000");
    assert_eq!(a5000.gpus[1].health.fan_speed_pct, Some(30));
}

#[test]
fn error_counts_sum_the_memories_or_take_the_old_total() {
    let xml = "<nvidia_smi_log><gpu id=\"00000000:01:00.0\"><ecc_errors>\
        <volatile><sram_correctable>2</sram_correctable><sram_uncorrectable_parity>1</sram_uncorrectable_parity>\
        <sram_uncorrectable_secded>1</sram_uncorrectable_secded><dram_correctable>3</dram_correctable>\
        <dram_uncorrectable>0</dram_uncorrectable></volatile>\
        <aggregate><single_bit><device_memory>4</device_memory><total>9</total></single_bit>\
        <double_bit><total>N/A</total></double_bit></aggregate></ecc_errors>\
        <remapped_rows><remapped_row_corr>1</remapped_row_corr><remapped_row_unc>0</remapped_row_unc>\
        <remapped_row_pending>Yes</remapped_row_pending><remapped_row_failure>No</remapped_row_failure></remapped_rows>\
        <clocks_event_reasons><clocks_event_reason_sw_thermal_slowdown>Active</clocks_event_reason_sw_thermal_slowdown>\
        <clocks_event_reason_display_clocks_setting>Active</clocks_event_reason_display_clocks_setting></clocks_event_reasons>\
        </gpu></nvidia_smi_log>";
    let h = &parse(xml).unwrap().gpus[0].health;
    let m = &h.memory_errors;
    assert_eq!((m.corrected_volatile, m.uncorrected_volatile), (Some(5), Some(2)), "SRAM + DRAM");
    assert_eq!((m.corrected_aggregate, m.uncorrected_aggregate), (Some(9), None), "the old total");
    assert_eq!(
        (m.remapped_rows_corrected, m.remapped_rows_pending, m.remapped_rows_failure),
        (Some(1), Some(true), Some(false))
    );
    assert_eq!(
        h.clock_event_reasons.as_deref(),
        Some(&["sw_thermal_slowdown".to_owned(), "display_clock_setting".to_owned()][..])
    );
}

/// R610's relabelling in the XML. No real R610 XML report has been seen yet; its `-q` text (a real
/// capture: github.com/utkuozdemir/nvidia_gpu_exporter, `internal/captures/
/// linux-x86_64__nvidia-geforce-rtx-2080-super__610.57.04.txt`) keeps the old labels with
/// `[Deprecated; …]` after the value and adds `KMD Version` / `CUDA UMD Version`. Both shapes are
/// read here: the old elements with the note after the value, and the new elements (named as
/// `--query-gpu`'s `kmd_version`) winning over the old ones.
#[test]
fn r610_labels_and_deprecation_notes_give_the_driver_and_its_cuda_level() {
    let noted = SAMPLE
        .replace(
            "<driver_version>590.44.01</driver_version>",
            "<driver_version>610.57.04 [Deprecated; will be removed in CUDA 14.0. Use KMD Version instead]</driver_version>",
        )
        .replace(
            "<cuda_version>13.1</cuda_version>",
            "<cuda_version>13.3 [Deprecated; will be removed in CUDA 14.0. Use CUDA UMD Version instead]</cuda_version>",
        );
    let r = parse(&noted).unwrap();
    assert_eq!(r.driver_version.map(|d| d.to_string()).as_deref(), Some("610.57.04"));
    assert_eq!(r.cuda_version, Some(gpu_doctor_model::CudaVersion::new(13, 3)));
    let renamed = SAMPLE
        .replace(
            "<driver_version>590.44.01</driver_version>",
            "<driver_version>Deprecated</driver_version><kmd_version>610.57.04</kmd_version>",
        )
        .replace("<cuda_version>13.1</cuda_version>", "<cuda_umd_version>13.3</cuda_umd_version>");
    let r = parse(&renamed).unwrap();
    assert_eq!(r.driver_version.map(|d| d.to_string()).as_deref(), Some("610.57.04"));
    assert_eq!(r.cuda_version, Some(gpu_doctor_model::CudaVersion::new(13, 3)));
}
