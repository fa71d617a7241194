use super::*;
use crate::parse::fixtures;

/// A two-GPU new-layout table, also used by the no-panic property tests.
pub(crate) const SAMPLE: &str = "\
Wed Aug  9 10:00:00 2023
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.86.05              Driver Version: 535.86.05    CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|                                         |                      |               MIG M. |
|=========================================+======================+======================|
|   0  NVIDIA GeForce RTX 4090        On  | 00000000:01:00.0 Off |                  Off |
| 30%   40C    P8              26W / 450W |      2MiB / 24564MiB |      3%   E. Process |
|                                         |                      |                  N/A |
+-----------------------------------------+----------------------+----------------------+
|   1  NVIDIA A100-SXM4-80GB         Off  | 00000000:41:00.0 Off |                    0 |
| N/A   27C    P0              67W / 500W |     50MiB / 81920MiB |      0%      Default |
|                                         |                      |             Disabled |
+-----------------------------------------+----------------------+----------------------+

+---------------------------------------------------------------------------------------+
| Processes:                                                                            |
|  GPU   GI   CI        PID   Type   Process name                            GPU Memory |
|        ID   ID                                                             Usage      |
|=======================================================================================|
|    1   N/A  N/A      4242      C   python                                     48MiB |
|    7   N/A  N/A      4343      C   orphan                                     48MiB |
+---------------------------------------------------------------------------------------+
";

#[test]
fn sample_reads_header_rows_and_processes() {
    let r = parse(SAMPLE).unwrap();
    assert_eq!(r.nvidia_smi_version.as_deref(), Some("535.86.05"));
    assert_eq!(r.driver_version.unwrap().as_str(), "535.86.05");
    assert_eq!(r.cuda_version, Some(gpu_doctor_model::CudaVersion::new(12, 2)));
    assert_eq!(r.gpus.len(), 2);
    let g = &r.gpus[0];
    assert_eq!(g.name.as_deref(), Some("NVIDIA GeForce RTX 4090"));
    assert_eq!(g.pci_bus_id.as_deref(), Some("00000000:01:00.0"));
    assert_eq!(g.persistence_mode, Some(true));
    assert_eq!(g.display_attached, Some(false));
    assert_eq!(g.ecc_enabled, Some(false));
    assert_eq!((g.temperature_c, g.power_draw_mw, g.power_limit_mw), (Some(40), Some(26_000), Some(450_000)));
    assert_eq!((g.memory_used_mib, g.memory_total_mib), (Some(2), Some(24564)));
    assert_eq!(g.utilization_gpu_pct, Some(3));
    assert_eq!(g.compute_mode.as_deref(), Some("Exclusive_Process"));
    assert_eq!(g.mig_enabled, None);
    assert!(g.processes.is_empty());
    let g = &r.gpus[1];
    assert_eq!(g.persistence_mode, Some(false));
    assert_eq!(g.ecc_enabled, Some(true));
    assert_eq!(g.mig_enabled, Some(false));
    assert_eq!(g.processes, vec![SmiProcess { pid: 4242, used_memory_mib: Some(48) }]);
}

#[test]
fn table_embedded_in_an_issue_is_found() {
    let quoted: String = SAMPLE.lines().map(|l| format!("> {l}\n")).collect();
    let text = format!("I ran nvidia-smi and got:\n\n```\n{quoted}```\nthen it crashed.\n");
    let r = parse(&text).unwrap();
    assert_eq!(r.gpus.len(), 2);
    assert_eq!(r.gpus[1].processes.len(), 1);
    let indented: String = SAMPLE.lines().map(|l| format!("    {l}\r\n")).collect();
    assert_eq!(parse(&indented).unwrap(), parse(SAMPLE).unwrap());
}

#[test]
fn header_without_cuda_and_na_cells() {
    let text = "\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 384.111                Driver Version: 384.111                   |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  Tesla K80           Off  | 00000000:00:1E.0 Off |                    0 |
| N/A   N/A    P8   N/A /  N/A  |      0MiB / 11439MiB |    N/A    Prohibited |
+-------------------------------+----------------------+----------------------+
";
    let r = parse(text).unwrap();
    assert_eq!(r.cuda_version, None);
    assert_eq!(r.driver_version.unwrap().as_str(), "384.111");
    let g = &r.gpus[0];
    assert_eq!((g.temperature_c, g.power_draw_mw, g.power_limit_mw), (None, None, None));
    assert_eq!(g.utilization_gpu_pct, None);
    assert_eq!(g.compute_mode.as_deref(), Some("Prohibited"));
    assert_eq!(g.mig_enabled, None, "no MIG M. row in the old layout");
}

#[test]
fn text_without_a_header_is_an_error() {
    for bad in [
        "",
        "\n\n",
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
        "| NVIDIA-SMI version |",
        "+------+\n| GPU  Name |\n+------+",
        "Failed to initialize NVML: Driver/library version mismatch",
    ] {
        assert!(parse(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn truncated_table_keeps_what_is_there() {
    let cut: String = SAMPLE.lines().take(10).map(|l| format!("{l}\n")).collect();
    let r = parse(&cut).unwrap();
    assert_eq!(r.gpus.len(), 1);
    assert_eq!(r.gpus[0].memory_total_mib, Some(24564));
}

/// (file, NVIDIA-SMI version, driver, CUDA, GPU names, memory total MiB, MIG per GPU).
type Expect = (&'static str, &'static str, &'static str, &'static str, &'static [&'static str], u64, Option<bool>);

const EXPECT: &[Expect] = &[
    ("h100-80gb-mig_590.48.01.txt", "590.48.01", "590.48.01", "13.1", &["NVIDIA H100 80GB HBM3"], 81559, Some(true)),
    ("h100-sxm-x8_565.57.01.txt", "565.57.01", "565.57.01", "12.7", &["NVIDIA H100 80GB HBM3"; 8], 81559, Some(false)),
    ("rtx-2070-laptop_440.100_pre-mig-layout.txt", "440.100", "440.100", "10.2", &["GeForce RTX 207..."], 7973, None),
    (
        "rtx-2080-super-windows-wddm_591.86.txt",
        "591.86",
        "591.86",
        "13.1",
        &["NVIDIA GeForce RTX 2080 ..."],
        8192,
        None,
    ),
    ("wsl2-header-only_555.42.06-win555.97.txt", "555.42.06", "555.97", "12.5", &[], 0, None),
];

#[test]
fn every_table_fixture() {
    let Some(files) = fixtures("nvidia-smi-table") else { return };
    for (file, text) in &files {
        let r = parse(text).unwrap_or_else(|e| panic!("{file}: {e}"));
        let (_, smi, driver, cuda, names, total, mig) = EXPECT
            .iter()
            .find(|e| e.0 == file)
            .unwrap_or_else(|| panic!("{file}: new fixture, add its expected values"));
        assert_eq!(r.nvidia_smi_version.as_deref(), Some(*smi), "{file}");
        assert_eq!(r.driver_version.as_ref().map(|d| d.as_str()), Some(*driver), "{file}");
        assert_eq!(r.cuda_version.map(|c| c.to_string()).as_deref(), Some(*cuda), "{file}");
        let got: Vec<_> = r.gpus.iter().map(|g| g.name.as_deref().unwrap_or("?")).collect();
        assert_eq!(got, *names, "{file}");
        for g in &r.gpus {
            assert_eq!(g.memory_total_mib, Some(*total), "{file}");
            assert_eq!(g.mig_enabled, *mig, "{file}");
            assert!(g.pci_bus_id.as_deref().is_some_and(|b| b.starts_with("00000000:")), "{file}");
            assert!(g.temperature_c.is_some() && g.memory_used_mib.is_some(), "{file}");
            assert_eq!(g.compute_mode.as_deref(), Some("Default"), "{file}");
            // The table has no link info; those come from XML or CSV.
            assert_eq!(g.pcie_gen_current, None, "{file}");
        }
    }
}

#[test]
fn table_fixture_details() {
    let Some(files) = fixtures("nvidia-smi-table") else { return };
    let get = |name: &str| parse(&files.iter().find(|(f, _)| f == name).unwrap().1).unwrap();

    let win = get("rtx-2080-super-windows-wddm_591.86.txt");
    let g = &win.gpus[0];
    assert_eq!(g.driver_model.as_deref(), Some("WDDM"));
    assert_eq!(g.persistence_mode, None);
    assert_eq!((g.power_draw_mw, g.power_limit_mw), (Some(38_000), Some(250_000)));
    assert_eq!(g.processes.len(), 10);
    assert_eq!(g.processes[0], SmiProcess { pid: 2056, used_memory_mib: None });

    let old = get("rtx-2070-laptop_440.100_pre-mig-layout.txt");
    let g = &old.gpus[0];
    assert_eq!(g.persistence_mode, Some(false));
    assert_eq!(g.display_attached, Some(true));
    assert_eq!((g.power_draw_mw, g.power_limit_mw), (Some(6_000), None));
    assert_eq!(g.utilization_gpu_pct, Some(6));
    assert_eq!(g.ecc_enabled, None);
    let pids: Vec<_> = g.processes.iter().map(|p| (p.pid, p.used_memory_mib)).collect();
    assert_eq!(pids, [(1357, Some(18)), (1417, Some(49)), (1811, Some(96)), (1968, Some(77))]);

    let mig = get("h100-80gb-mig_590.48.01.txt");
    let g = &mig.gpus[0];
    assert_eq!(g.utilization_gpu_pct, None, "GPU-Util N/A under MIG");
    assert_eq!(g.memory_used_mib, Some(59), "not a MIG device's memory");
    assert_eq!(g.persistence_mode, Some(true));
    assert!(g.processes.is_empty());

    let x8 = get("h100-sxm-x8_565.57.01.txt");
    assert_eq!(x8.gpus[7].pci_bus_id.as_deref(), Some("00000000:DB:00.0"));
    assert_eq!(x8.gpus[7].power_draw_mw, Some(75_000));
    assert_eq!(x8.gpus[0].ecc_enabled, Some(true));
}

/// Before R610 (550.127.05, github.com/leptonai/gpud e2e/mock/nvidia-smi/test_data.go): the header
/// says `Driver Version` and `CUDA Version`.
#[test]
fn header_before_r610_reads_driver_and_cuda_version() {
    let r =
        parse("| NVIDIA-SMI 550.127.05             Driver Version: 550.127.05     CUDA Version: 12.4     |").unwrap();
    assert_eq!(r.driver_version.unwrap().as_str(), "550.127.05");
    assert_eq!(r.cuda_version, Some(gpu_doctor_model::CudaVersion::new(12, 4)));
    // A value that is no version is none, under either spelling (scripts/gpu_verify_ref.py's selftest).
    let r = parse("| NVIDIA-SMI 550.127.05  Driver Version: N/A  CUDA Version: N/A |").unwrap();
    assert_eq!((r.driver_version, r.cuda_version), (None, None));
}

/// From R610 on the header says `KMD Version` and `CUDA UMD Version` (NVIDIA B200,
/// github.com/sgl-project/sglang/issues/27487; 610.43.03, github.com/projectbluefin/finpilot/issues/160).
#[test]
fn header_from_r610_reads_kmd_and_cuda_umd_version() {
    let table = "\
| NVIDIA-SMI 610.43.02              KMD Version: 610.43.02     CUDA UMD Version: 13.3     |
+-----------------------------------------+------------------------+----------------------+
|   0  NVIDIA B200                    On  |   00000000:63:00.0 Off |                    0 |
";
    let r = parse(table).unwrap();
    assert_eq!(r.driver_version.unwrap().as_str(), "610.43.02");
    assert_eq!(r.cuda_version, Some(gpu_doctor_model::CudaVersion::new(13, 3)));
    assert_eq!(r.nvidia_smi_version.as_deref(), Some("610.43.02"));
    let r =
        parse("| NVIDIA-SMI 610.43.03              KMD Version: 610.43.03     CUDA UMD Version: 13.3     |").unwrap();
    assert_eq!(r.driver_version.unwrap().as_str(), "610.43.03");
    assert_eq!(r.cuda_version, Some(gpu_doctor_model::CudaVersion::new(13, 3)));
}
