//! The CUDA samples' `deviceQuery`: each device's name, compute capability, memory and PCI location,
//! and the driver's CUDA level (kept where the text also gives the driver's version: a snapshot's
//! driver is known by its version), from the device blocks or the one-line summary. Its failure
//! (`cudaGetDeviceCount returned 35` / `-> CUDA driver version is insufficient …`) is the catalogue's.
//!
//! Format: NVIDIA/cuda-samples `Samples/1_Utilities/deviceQuery/deviceQuery.cpp` at v12.9
//! (`Device %d: "%s"`, `CUDA Driver Version / Runtime Version          %d.%d / %d.%d`, `CUDA Capability
//! Major/Minor version number:    %d.%d`, `Total amount of global memory: … (%llu bytes)`, `Device PCI
//! Domain ID / Bus ID / location ID:   %d / %d / %d`, `deviceQuery, CUDA Driver = CUDART, CUDA Driver
//! Version = %d.%d, CUDA Runtime Version = %d.%d, NumDevs = %d`); the same lines since CUDA 5.
//!
//! Also nvbandwidth's header, NVIDIA's bandwidth tool (NVIDIA/nvbandwidth nvbandwidth.cpp @v0.2, output.cpp @v0.8):
//! `nvbandwidth Version: …`, `CUDA Driver Version: 12000` (cuDriverGetVersion), `Driver Version: 525.125.06`
//! (NVML), then `Device %d: NAME` (cuDeviceGetName; from v0.8 followed by ` (0000000d:bb:dd)`, the PCI domain, bus and
//! device in hex).

use super::facts::Facts;
use gpu_doctor_model::{ComputeCapability, CudaVersion, Gpu};

const FORMAT: &str = "deviceQuery";

/// The most devices read from one paste.
const MAX_DEVICES: usize = 64;

/// `Device 0: "NVIDIA GeForce RTX 3090"` → (0, the name).
fn device(line: &str) -> Option<(u32, &str)> {
    let (index, name) = line.trim().strip_prefix("Device ")?.split_once(": \"")?;
    let name = name.strip_suffix('"')?;
    (!name.is_empty() && name.len() <= 120).then_some((index.parse().ok()?, name))
}

/// The value after a deviceQuery label (`  CUDA Capability Major/Minor version number:    8.6`).
fn labelled<'a>(line: &'a str, label: &str) -> Option<&'a str> {
    line.trim().strip_prefix(label).map(|rest| rest.trim_start_matches(':').trim())
}

/// `11.4 / 11.4` → the driver's CUDA level and the runtime's.
fn levels(text: &str) -> Option<(CudaVersion, CudaVersion)> {
    let (driver, runtime) = text.split_once(" / ")?;
    Some((driver.trim().parse().ok()?, runtime.trim().parse().ok()?))
}

/// `0 / 1 / 0` → `0000:01:00.0` (domain, bus, device; a GPU is function 0).
fn bus_id(text: &str) -> Option<String> {
    let parts: Vec<u32> = text.split(" / ").map(|p| p.trim().parse().ok()).collect::<Option<_>>()?;
    pci_location(&parts)
}

const NVBANDWIDTH: &str = "nvbandwidth";

/// nvbandwidth's header: the driver's version and CUDA level and each device's name (and bus, v0.8 on).
fn nvbandwidth(lines: &[String], facts: &mut Facts) {
    let Some(start) = lines.iter().position(|l| l.trim_start().starts_with("nvbandwidth Version: ")) else { return };
    facts.saw(start, NVBANDWIDTH);
    let mut read: Vec<Gpu> = Vec::new();
    for line in lines.iter().skip(start + 1).take(MAX_DEVICES + 16) {
        let t = line.trim();
        if let Some(level) = t.strip_prefix("CUDA Driver Version: ").and_then(|v| v.parse::<u32>().ok()) {
            facts.driver(None, Some(CudaVersion::new(level / 1000, (level % 1000) / 10)), NVBANDWIDTH);
        } else if let Some(version) = t.strip_prefix("Driver Version: ").and_then(|v| v.parse().ok()) {
            facts.driver(Some(version), None, NVBANDWIDTH);
        } else if let Some((index, rest)) = t.strip_prefix("Device ").and_then(|r| r.split_once(": ")) {
            let Ok(index) = index.parse::<u32>() else { continue };
            let (name, bus) = match rest.rsplit_once(" (") {
                Some((name, bus)) => (name, bus.strip_suffix(')').and_then(nvbandwidth_bus)),
                None => (rest, None),
            };
            if !name.is_empty() && name.len() <= 120 && read.len() < MAX_DEVICES {
                read.push(Gpu { index, name: Some(name.to_owned()), pci_bus_id: bus, ..Gpu::default() });
            }
        }
    }
    if facts.listed_gpus.is_empty() {
        facts.listed_gpus.extend(read.into_iter().map(|g| (g, NVBANDWIDTH)));
    }
}

/// `0000000d:1b:00` (domain, bus, device in hex) → `000d:1b:00.0`.
fn nvbandwidth_bus(text: &str) -> Option<String> {
    let parts: Vec<u32> = text.split(':').map(|p| u32::from_str_radix(p, 16).ok()).collect::<Option<_>>()?;
    pci_location(&parts)
}

/// A GPU's domain, bus and device (function 0) as sysfs writes them, where each is in range.
fn pci_location(parts: &[u32]) -> Option<String> {
    let [domain, bus, dev] = parts else { return None };
    (*domain <= 0xffff && *bus <= 0xff && *dev <= 0x1f).then(|| format!("{domain:04x}:{bus:02x}:{dev:02x}.0"))
}

/// Reads every device block and the summary line.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    nvbandwidth(lines, facts);
    let mut current: Option<usize> = None;
    let mut read: Vec<Gpu> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if let Some((index, name)) = device(line) {
            if read.len() >= MAX_DEVICES {
                break;
            }
            read.push(Gpu { index, name: Some(name.to_owned()), ..Gpu::default() });
            current = Some(read.len() - 1);
            facts.saw(i, FORMAT);
            continue;
        }
        if let Some(rest) = line.trim().strip_prefix("deviceQuery, CUDA Driver = CUDART, CUDA Driver Version = ") {
            facts.saw(i, FORMAT);
            let driver = rest.split(',').next().and_then(|v| v.trim().parse::<CudaVersion>().ok());
            facts.driver(None, driver, FORMAT);
            continue;
        }
        let Some(gpu) = current.and_then(|c| read.get_mut(c)) else { continue };
        if let Some((driver, _runtime)) = labelled(line, "CUDA Driver Version / Runtime Version").and_then(levels) {
            facts.driver(None, Some(driver), FORMAT);
        } else if let Some(cc) = labelled(line, "CUDA Capability Major/Minor version number")
            .and_then(|v| v.parse::<ComputeCapability>().ok())
        {
            gpu.compute_capability = Some(cc);
        } else if let Some(total) = labelled(line, "Total amount of global memory") {
            let bytes = total.split_once('(').and_then(|(_, b)| b.strip_suffix(" bytes)")?.parse::<u64>().ok());
            gpu.memory_total_bytes = bytes;
        } else if let Some(location) = labelled(line, "Device PCI Domain ID / Bus ID / location ID") {
            gpu.pci_bus_id = bus_id(location);
        } else if line.trim() == "Result = PASS" || line.trim() == "Result = FAIL" {
            current = None;
        }
    }
    if facts.listed_gpus.is_empty() {
        facts.listed_gpus.extend(read.into_iter().map(|g| (g, FORMAT)));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn read_text(text: &str) -> Facts {
        Facts::read_by(read, text)
    }

    /// bear63/sceneReco#32 (a GTX 1080, CUDA 8.0 samples; lines after the memory cut).
    #[test]
    fn a_device_block_gives_the_gpu_and_the_drivers_cuda_level() {
        let f = read_text(
            "./NVIDIA_CUDA-8.0_Samples/bin/x86_64/linux/release/deviceQuery Starting...\n\n \
             CUDA Device Query (Runtime API) version (CUDART static linking)\n\n\
             Detected 1 CUDA Capable device(s)\n\n\
             Device 0: \"GeForce GTX 1080\"\n  \
             CUDA Driver Version / Runtime Version          8.0 / 8.0\n  \
             CUDA Capability Major/Minor version number:    6.1\n  \
             Total amount of global memory:                 8105 MBytes (8499167232 bytes)\n  \
             (20) Multiprocessors, (128) CUDA Cores/MP:     2560 CUDA Cores\n",
        );
        assert_eq!(f.driver_cuda.map(|(c, _)| c), Some(CudaVersion::new(8, 0)));
        let (g, _) = &f.listed_gpus[0];
        assert_eq!((g.index, g.name.as_deref()), (0, Some("GeForce GTX 1080")));
        assert_eq!(g.compute_capability.map(|c| c.to_string()).as_deref(), Some("6.1"));
        assert_eq!(g.memory_total_bytes, Some(8_499_167_232));
    }

    /// cbuchner1/CudaMiner#57 (a GTX 460 under the CUDA 5.0 samples), with the PCI location line as
    /// deviceQuery.cpp prints it (v12.9), and the summary line.
    #[test]
    fn the_location_and_the_summary_are_read() {
        let f = read_text(
            " CUDA Device Query (Runtime API) version (CUDART static linking)\n\n\
             Detected 1 CUDA Capable device(s)\n\n\
             Device 0: \"GeForce GTX 460\"\n  CUDA Driver Version / Runtime Version          5.0 / 5.0\n  \
             CUDA Capability Major/Minor version number:    2.1\n  \
             Total amount of global memory:                 1023 MBytes (1072889856 bytes)\n  \
             Device PCI Domain ID / Bus ID / location ID:   0 / 65 / 0\n",
        );
        assert_eq!(f.driver_cuda.map(|(c, _)| c), Some(CudaVersion::new(5, 0)));
        assert_eq!(f.listed_gpus[0].0.pci_bus_id.as_deref(), Some("0000:41:00.0"));
        let f = read_text(
            "deviceQuery, CUDA Driver = CUDART, CUDA Driver Version = 12.2, CUDA Runtime Version = 12.2, NumDevs = 1\n",
        );
        assert_eq!(f.driver_cuda.map(|(c, _)| c), Some(CudaVersion::new(12, 2)));
    }

    /// nvbandwidth's header: NVIDIA/nvbandwidth#13's run (v0.2, two RTX 2080 Ti), verbatim, and v0.8's device line
    /// with its bus as output.cpp prints it.
    #[test]
    fn nvbandwidths_header_gives_the_driver_and_the_devices() {
        let f = read_text(
            "$ ./nvbandwidth -t device_to_device_memcpy_write_ce\nnvbandwidth Version: v0.2\n\
             Built from Git version: 6cefdda\n\nCUDA Runtime Version: 12010\nCUDA Driver Version: 12000\n\
             Driver Version: 525.125.06\n\nDevice 0: NVIDIA GeForce RTX 2080 Ti\nDevice 1: NVIDIA GeForce RTX 2080 Ti\n\n\
             Waiving device_to_device_memcpy_write_ce.\n",
        );
        assert_eq!(f.driver_cuda.map(|(c, _)| c), Some(CudaVersion::new(12, 0)));
        assert_eq!(f.driver_version.as_ref().map(|(v, _)| v.to_string()).as_deref(), Some("525.125.06"));
        let names: Vec<_> = f.listed_gpus.iter().map(|(g, _)| (g.index, g.name.as_deref())).collect();
        assert_eq!(names, [(0, Some("NVIDIA GeForce RTX 2080 Ti")), (1, Some("NVIDIA GeForce RTX 2080 Ti"))]);
        let f = read_text("nvbandwidth Version: v0.8\nDevice 0: NVIDIA H100 80GB HBM3 (00000000:1b:00)\n");
        assert_eq!(f.listed_gpus[0].0.pci_bus_id.as_deref(), Some("0000:1b:00.0"));
        assert_eq!(f.listed_gpus[0].0.name.as_deref(), Some("NVIDIA H100 80GB HBM3"));
        // Without the header, a bare `Device 0: name` is no device list; a flood stops at MAX_DEVICES.
        assert!(read_text("Device 0: NVIDIA GeForce RTX 2080 Ti\n").listed_gpus.is_empty());
        let flood = format!("nvbandwidth Version: v0.2\n{}", "Device 0: NVIDIA A100\n".repeat(10_000));
        assert!(read_text(&flood).listed_gpus.len() <= MAX_DEVICES);
    }

    /// Look-alikes and malformed lines give nothing; a huge paste stops at `MAX_DEVICES`.
    #[test]
    fn look_alikes_and_floods_are_bounded() {
        let f = read_text(
            "Device 0: GeForce GTX 1080\nDevice x: \"A\"\n  CUDA Capability Major/Minor version number: 6.1\n",
        );
        assert!(f.listed_gpus.is_empty() && f.driver_cuda.is_none());
        let f = read_text(&"Device 0: \"GeForce GTX 1080\"\n".repeat(10_000));
        assert_eq!(f.listed_gpus.len(), MAX_DEVICES);
        assert_eq!(bus_id("0 / 300 / 0"), None);
        assert_eq!(levels("8.0 /"), None);
    }
}
