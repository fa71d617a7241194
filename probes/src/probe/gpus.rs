//! GPUs as the driver sees them: NVML first, `nvidia-smi -q -x` for what NVML cannot tell.

use crate::host::{Host, HostError, NvmlDevice, NvmlReport};
use crate::parse::smi::{SmiGpu, SmiReport};
use gpu_doctor_model::{Gpu, GpuProcess, OsFamily, PciBusId};
use gpu_doctor_model::{Probed, Trace};

use super::driver::SmiXml;
use super::link::sysfs_link;

/// The GPU NVML reported, with its bus id in sysfs form and its architecture named.
fn from_nvml(d: &NvmlDevice) -> Gpu {
    let mut gpu = d.gpu.clone();
    gpu.pci_bus_id = gpu.pci_bus_id.as_deref().and_then(PciBusId::sysfs_form);
    gpu.architecture = gpu.compute_capability.and_then(gpu_doctor_kb::architecture).map(str::to_owned);
    gpu
}

const MIB: u64 = 1024 * 1024;

/// Everything nvidia-smi printed for one GPU, as a [`Gpu`] (the architecture is left to the caller).
pub(crate) fn gpu_from_smi(index: u32, s: &SmiGpu) -> Gpu {
    let total = s.memory_total_mib.map(|m| m * MIB);
    let used = s.memory_used_mib.map(|m| m * MIB);
    let processes: Vec<GpuProcess> = s
        .processes
        .iter()
        .map(|p| GpuProcess { pid: p.pid, used_memory_bytes: p.used_memory_mib.map(|m| m * MIB) })
        .collect();
    Gpu {
        index,
        name: s.name.clone(),
        uuid: s.uuid.clone(),
        pci_bus_id: s.pci_bus_id.as_deref().and_then(PciBusId::sysfs_form),
        compute_capability: s.compute_capability.as_deref().and_then(|c| c.parse().ok()),
        architecture: None,
        memory_total_bytes: total,
        memory_used_bytes: used,
        memory_free_bytes: total.zip(used).map(|(t, u)| t.saturating_sub(u)),
        bar1_total_bytes: s.bar1_total_mib.map(|m| m * MIB),
        // NVML and nvidia-smi do not report the Resizable BAR capability's sizes.
        bar1_max_bytes: None,
        pcie_gen_current: s.pcie_gen_current,
        pcie_gen_max: s.pcie_gen_max,
        pcie_width_current: s.pcie_width_current,
        pcie_width_max: s.pcie_width_max,
        clock_sm_mhz: s.clock_sm_mhz,
        clock_sm_max_mhz: s.clock_sm_max_mhz,
        clock_sm_boost_mhz: None,
        clock_mem_mhz: s.clock_mem_mhz,
        clock_mem_max_mhz: s.clock_mem_max_mhz,
        power_draw_mw: s.power_draw_mw,
        power_limit_mw: s.power_limit_mw,
        temperature_c: s.temperature_c,
        utilization_gpu_pct: s.utilization_gpu_pct,
        ecc_enabled: s.ecc_enabled,
        persistence_mode: s.persistence_mode,
        compute_mode: s.compute_mode.clone(),
        mig_enabled: s.mig_enabled,
        display_attached: s.display_attached,
        vbios_version: s.vbios_version.clone(),
        serial: None,
        driver_model: s.driver_model.clone(),
        processes: (!processes.is_empty()).then_some(processes),
        memory_bus_width_bits: None,
    }
}

/// Fills every field NVML left out (or, without NVML, every field) from what nvidia-smi printed
/// for the same GPU; the architecture follows from the compute capability.
fn fill_from_smi(gpu: &mut Gpu, s: &SmiGpu) {
    let smi = gpu_from_smi(gpu.index, s);
    macro_rules! fill {
        ($($f:ident),*) => { $( if gpu.$f.is_none() { gpu.$f = smi.$f; } )* };
    }
    fill!(name, uuid, pci_bus_id, compute_capability, memory_total_bytes, memory_used_bytes);
    if gpu.memory_free_bytes.is_none()
        && let (Some(t), Some(u)) = (gpu.memory_total_bytes, gpu.memory_used_bytes)
    {
        gpu.memory_free_bytes = Some(t.saturating_sub(u));
    }
    fill!(pcie_gen_current, pcie_gen_max, pcie_width_current, pcie_width_max, mig_enabled);
    fill!(clock_sm_mhz, clock_sm_max_mhz, clock_mem_mhz, clock_mem_max_mhz, memory_bus_width_bits);
    fill!(power_draw_mw, power_limit_mw, temperature_c, utilization_gpu_pct, ecc_enabled, persistence_mode);
    fill!(compute_mode, display_attached, vbios_version, driver_model, processes, bar1_total_bytes);
    if gpu.architecture.is_none() {
        gpu.architecture = gpu.compute_capability.and_then(gpu_doctor_kb::architecture).map(str::to_owned);
    }
}

/// The fields an old driver's NVML may lack that nvidia-smi can still give.
fn lacks_basics(g: &Gpu) -> bool {
    g.name.is_none() || g.memory_total_bytes.is_none() || g.pcie_gen_max.is_none() || g.pcie_width_max.is_none()
}

/// Fills the PCIe link from sysfs when the driver did not report it (Linux).
fn fill_from_sysfs(host: &dyn Host, gpu: &mut Gpu, trace: &mut Trace) {
    let Some(bus) = gpu.pci_bus_id.clone() else { return };
    if gpu.pcie_gen_max.is_some() && gpu.pcie_width_max.is_some() && gpu.pcie_gen_current.is_some() {
        return;
    }
    match sysfs_link(host, &bus) {
        Some(l) => {
            gpu.pcie_gen_current = gpu.pcie_gen_current.or(l.gen_current);
            gpu.pcie_gen_max = gpu.pcie_gen_max.or(l.gen_max);
            gpu.pcie_width_current = gpu.pcie_width_current.or(l.width_current);
            gpu.pcie_width_max = gpu.pcie_width_max.or(l.width_max);
            trace.ok(format!("sysfs link {bus}"), "filled the PCIe link the driver did not report");
        }
        None => trace.miss(format!("sysfs link {bus}"), "no link files"),
    }
}

/// nvidia-smi's entry for `gpu`: the one with its UUID or its PCI bus id.
pub(super) fn smi_entry<'a>(smi: &'a SmiReport, gpu: &Gpu) -> Option<&'a SmiGpu> {
    smi.gpus
        .iter()
        .find(|s| s.uuid.is_some() && s.uuid == gpu.uuid || s.pci_bus_id.as_deref().is_some_and(|b| gpu.has_bus_id(b)))
}

/// Lists the GPUs: NVML, with gaps filled from `nvidia-smi -q -x` and sysfs; nvidia-smi alone
/// when NVML is not usable.
pub fn probe(
    host: &dyn Host,
    nvml: &Result<NvmlReport, HostError>,
    smi: &SmiXml,
    trace: &mut Trace,
) -> Probed<Vec<Gpu>> {
    if host.platform().os == OsFamily::Macos {
        return Probed::Unsupported { reason: "macOS has no NVIDIA CUDA GPUs".into() };
    }
    let linux = host.platform().os == OsFamily::Linux;
    let (mut gpus, source) = match nvml {
        Ok(report) if !report.devices.is_empty() => {
            for d in &report.devices {
                let missing: Vec<&str> = d.unreported.keys().map(String::as_str).collect();
                if missing.is_empty() {
                    trace.ok(format!("nvml device {}", d.gpu.index), "every field answered");
                } else {
                    trace.ok(format!("nvml device {}", d.gpu.index), format!("not reported: {}", missing.join(", ")));
                }
            }
            let mut gpus: Vec<Gpu> = report.devices.iter().map(from_nvml).collect();
            let mut source = "nvml";
            if gpus.iter().any(lacks_basics)
                && let Ok(r) = smi.get(host, trace)
            {
                for gpu in &mut gpus {
                    if let Some(s) = smi_entry(r, gpu) {
                        fill_from_smi(gpu, s);
                        source = "nvml, gaps filled from nvidia-smi -q -x";
                    }
                }
            }
            (gpus, source)
        }
        Ok(_) => {
            trace.miss("nvml", "the driver reports no GPUs");
            return Probed::absent("the NVIDIA driver is running but reports no GPUs");
        }
        Err(e) => {
            trace.miss("nvml", e.to_string());
            match smi.get(host, trace) {
                Ok(r) if !r.gpus.is_empty() => {
                    let gpus = r
                        .gpus
                        .iter()
                        .zip(0u32..)
                        .map(|(s, index)| {
                            let mut g = Gpu { index, ..Gpu::default() };
                            fill_from_smi(&mut g, s);
                            g
                        })
                        .collect();
                    (gpus, "nvidia-smi -q -x")
                }
                Ok(_) => return Probed::absent("nvidia-smi lists no GPUs"),
                Err(smi_err) => {
                    return Probed::absent(format!("no GPU is visible to a driver: {e}; {smi_err}"));
                }
            }
        }
    };
    if linux {
        for gpu in &mut gpus {
            fill_from_sysfs(host, gpu, trace);
        }
    }
    Probed::found(gpus, source)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::host::{CmdOutput, CommandRecord, Fixture, NvmlAnswer, ReplayHost};
    use crate::parse::smi_xml::tests::SAMPLE;
    use gpu_doctor_model::Platform;

    /// A Linux machine whose `nvidia-smi -q -x` prints the RTX A5000 sample, with NVML's answer.
    fn machine(nvml: NvmlAnswer) -> ReplayHost {
        let mut f = Fixture::new(Platform { os: OsFamily::Linux, arch: "x86_64".into() });
        f.env.insert("PATH".into(), "/usr/bin".into());
        f.files.insert("/usr/bin/nvidia-smi".into(), String::new());
        f.commands.push(CommandRecord {
            argv: vec!["/usr/bin/nvidia-smi".into(), "-q".into(), "-x".into()],
            output: Some(CmdOutput { status: Some(0), stdout: SAMPLE.into(), stderr: String::new() }),
            error: None,
        });
        f.nvml = nvml;
        ReplayHost::new(f)
    }

    fn gpus(host: &ReplayHost) -> (Vec<Gpu>, String) {
        let mut trace = Trace::new("gpus");
        match probe(host, &host.nvml(), &SmiXml::default(), &mut trace) {
            Probed::Found { value, source } => (value, source),
            other => panic!("no GPUs: {other:?}"),
        }
    }

    /// Everything nvidia-smi printed that the card and the rules use.
    fn assert_everything_from_smi(g: &Gpu) {
        assert_eq!(g.name.as_deref(), Some("NVIDIA RTX A5000"));
        assert_eq!(g.compute_capability.map(|c| c.to_string()).as_deref(), Some("8.6"));
        assert_eq!(g.architecture.as_deref(), Some("Ampere"));
        assert_eq!((g.clock_sm_mhz, g.clock_sm_max_mhz), (Some(210), Some(2100)));
        assert_eq!((g.clock_mem_mhz, g.clock_mem_max_mhz), (Some(405), Some(8001)));
        assert_eq!((g.power_draw_mw, g.power_limit_mw), (Some(6410), Some(230_000)));
        assert_eq!(g.temperature_c, Some(13));
        assert_eq!(g.utilization_gpu_pct, Some(7));
        assert_eq!(g.ecc_enabled, Some(true));
        assert_eq!(g.persistence_mode, Some(true));
        assert_eq!(g.compute_mode.as_deref(), Some("Exclusive_Process"));
        assert_eq!(g.vbios_version.as_deref(), Some("94.02.6D.00.0D"));
        assert_eq!(g.display_attached, Some(true));
        assert_eq!(g.driver_model.as_deref(), Some("TCC"));
        let pids: Vec<u32> = g.processes.iter().flatten().map(|p| p.pid).collect();
        assert_eq!(pids, [100_477, 4242]);
    }

    #[test]
    fn without_nvml_every_field_nvidia_smi_printed_is_kept() {
        let host = machine(NvmlAnswer::Error("libnvidia-ml.so.1: cannot open shared object file".into()));
        let (gpus, source) = gpus(&host);
        assert_eq!(source, "nvidia-smi -q -x");
        assert_eq!(gpus.len(), 1);
        assert_everything_from_smi(&gpus[0]);
    }

    /// Recordings keep NVML's device flat, as written before `NvmlDevice` held a `Gpu`: the old
    /// capability pair still reads, and a device writes its fields inline, not under `gpu`.
    #[test]
    fn an_nvml_device_reads_and_writes_its_fields_inline() {
        let recorded = serde_json::json!({
            "index": 1, "name": "NVIDIA GeForce RTX 4090", "uuid": null, "pci_bus_id": "00000000:01:00.0",
            "pci_device_id": 0x2684_10de_u32, "compute_capability": [8, 9], "memory_total_bytes": 25_757_220_864_u64,
            "memory_used_bytes": null, "memory_free_bytes": null, "pcie_gen_current": 1, "pcie_gen_max": 4,
            "pcie_width_current": 16, "pcie_width_max": 16, "pcie_tx_kbps": 10, "pcie_rx_kbps": 20,
            "clock_sm_mhz": null, "clock_sm_max_mhz": null, "clock_mem_mhz": null, "clock_mem_max_mhz": null,
            "power_draw_mw": null, "power_limit_mw": null, "temperature_c": null, "utilization_gpu_pct": 3,
            "utilization_mem_pct": 4, "ecc_enabled": null, "persistence_mode": null, "compute_mode": null,
            "mig_enabled": null, "display_attached": null, "vbios_version": null, "driver_model": null,
            "processes": [{"pid": 7, "used_memory_bytes": null}], "unreported": {"uuid": "Not supported"}
        });
        let d: NvmlDevice = serde_json::from_value(recorded).unwrap();
        assert_eq!((d.gpu.index, d.gpu.compute_capability.map(|c| c.to_string())), (1, Some("8.9".to_owned())));
        assert_eq!((d.pci_device_id, d.pcie_rx_kbps, d.utilization_mem_pct), (Some(0x2684_10de), Some(20), Some(4)));
        assert_eq!(d.gpu.processes.as_ref().map(|p| p[0].pid), Some(7));
        let g = from_nvml(&d);
        assert_eq!(g.pci_bus_id.as_deref(), Some("0000:01:00.0"));
        assert_eq!(g.architecture.as_deref(), Some("Ada Lovelace"));
        let written = serde_json::to_value(&d).unwrap();
        assert!(written.get("gpu").is_none() && written["name"] == "NVIDIA GeForce RTX 4090", "{written}");
        assert_eq!(serde_json::from_value::<NvmlDevice>(written).unwrap(), d);
        let negative = serde_json::json!({"index": 0, "compute_capability": [-1, 0], "unreported": {}});
        assert_eq!(serde_json::from_value::<NvmlDevice>(negative).unwrap().gpu.compute_capability, None);
    }

    #[test]
    fn an_old_nvml_has_its_gaps_filled_from_nvidia_smi() {
        let gpu = Gpu {
            uuid: Some("GPU-12345678-aaaa-bbbb-cccc-0123456789ab".into()),
            clock_sm_mhz: Some(300),
            ..Gpu::default()
        };
        let device = NvmlDevice { gpu, ..NvmlDevice::default() };
        let host = machine(NvmlAnswer::Report(NvmlReport { devices: vec![device], ..NvmlReport::default() }));
        let (gpus, source) = gpus(&host);
        assert_eq!(source, "nvml, gaps filled from nvidia-smi -q -x");
        let g = &gpus[0];
        assert_eq!(g.clock_sm_mhz, Some(300), "what NVML answered stays");
        assert_eq!(g.clock_sm_max_mhz, Some(2100));
        let from_smi = Gpu { clock_sm_mhz: Some(210), ..g.clone() };
        assert_everything_from_smi(&from_smi);
    }

    /// An RTX 4090 as NVML answers it: the top of its voltage/frequency table (3105 MHz) and its
    /// rated boost clock (2520 MHz) are both kept; a recording made before the boost clock was
    /// asked for reads as not reported.
    #[test]
    fn the_rated_boost_clock_is_kept_beside_the_highest_clock() {
        let device = NvmlDevice {
            gpu: Gpu {
                index: 0,
                name: Some("NVIDIA GeForce RTX 4090".into()),
                clock_sm_max_mhz: Some(3105),
                clock_sm_boost_mhz: Some(2520),
                ..Gpu::default()
            },
            ..NvmlDevice::default()
        };
        let g = from_nvml(&device);
        assert_eq!((g.clock_sm_max_mhz, g.clock_sm_boost_mhz), (Some(3105), Some(2520)));
        let old: NvmlDevice = serde_json::from_str(r#"{"index":0,"clock_sm_max_mhz":3105,"unreported":{}}"#).unwrap();
        assert_eq!((old.gpu.clock_sm_max_mhz, old.gpu.clock_sm_boost_mhz), (Some(3105), None));
        let json = serde_json::to_string(&from_nvml(&old)).unwrap();
        assert!(!json.contains("clock_sm_boost_mhz"), "an unreported boost clock is left out: {json}");
    }
}
