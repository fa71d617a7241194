//! CuPy's `cupy.show_config()` (`python -c "import cupy; cupy.show_config()"`): CuPy's version, the CUDA it
//! was built with, the driver's and the runtime's CUDA levels as `driverGetVersion()` and
//! `runtimeGetVersion()` return them (`11020`), and each device's name, compute capability and bus id.
//!
//! Format: cupy/cupy `cupyx/_runtime.py` (`_RuntimeInfo.__str__`: one `{key:<width>}: {value}` line per
//! record, `CuPy Version`, `CUDA Root`, `CUDA Build Version`, `CUDA Driver Version`, `CUDA Runtime
//! Version`, …, then `Device {i} Name`, `Device {i} Compute Capability`, `Device {i} PCI Bus ID`); the
//! same keys since CuPy 7 (cupy/cupy#2578). A value that failed is the exception's `repr`
//! (`CUDARuntimeError('cudaErrorInsufficientDriver: …')`), and CuPy 14 adds the locally installed runtime
//! after the linked one (`13000 (linked to CuPy) / RuntimeError(…) (locally installed)`); only a leading
//! integer is a version. A ROCm build prints `Device {i} Arch` and HIP's versions: not read.

use super::facts::Facts;
use super::packages;
use gpu_doctor_model::{ComputeCapability, CudaVersion, DeepCupy, FrameworkBuild, Gpu};

const FORMAT: &str = "cupy.show_config";

/// The most devices read from one paste.
const MAX_DEVICES: usize = 64;

/// The value of `key` on a `Key   : value` line.
fn value<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let rest = line.trim().strip_prefix(key)?;
    let (pad, value) = rest.split_once(':')?;
    pad.trim().is_empty().then(|| value.trim())
}

/// The first line's value of `key`.
fn field<'a>(lines: &'a [String], key: &str) -> Option<(usize, &'a str)> {
    lines.iter().enumerate().find_map(|(i, l)| value(l, key).map(|v| (i, v)))
}

/// A version as CUDA's API encodes it (`11030`), where the value starts with one.
fn api_int(text: &str) -> Option<i32> {
    let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
    let after = text[digits.len()..].chars().next();
    if digits.is_empty() || digits.len() > 6 || after.is_some_and(|c| !c.is_whitespace()) {
        return None;
    }
    digits.parse().ok()
}

/// `Device 0 Name` → (0, `Name`).
fn device_key(line: &str) -> Option<(u32, &str, &str)> {
    let rest = line.trim().strip_prefix("Device ")?;
    let (index, rest) = rest.split_once(' ')?;
    let (key, value) = rest.split_once(':')?;
    let key = key.trim();
    matches!(key, "Name" | "Compute Capability" | "PCI Bus ID" | "Arch").then_some((
        index.parse().ok()?,
        key,
        value.trim(),
    ))
}

/// `75` → 7.5, `120` → 12.0 (CuPy prints `device.compute_capability`, the two numbers joined).
fn capability(text: &str) -> Option<ComputeCapability> {
    let n: u32 = text.parse().ok()?;
    (10..=200).contains(&n).then(|| format!("{}.{}", n / 10, n % 10).parse().ok()).flatten()
}

/// Reads the output: needs `CuPy Version` and `CUDA Build Version`. The build is the CUDA of a package
/// named `cupy` (a source build, or what no package list named otherwise).
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    let Some((at, version)) = field(lines, "CuPy Version") else { return };
    let Some((_, build)) = field(lines, "CUDA Build Version") else { return };
    let version_like = version.starts_with(|c: char| c.is_ascii_digit()) && !version.contains(' ');
    if !version_like {
        return;
    }
    let rocm = lines.iter().any(|l| device_key(l).is_some_and(|(_, key, _)| key == "Arch"));
    facts.saw(at, FORMAT);
    let runtime = field(lines, "CUDA Runtime Version").and_then(|(_, v)| api_int(v));
    let driver = field(lines, "CUDA Driver Version").and_then(|(_, v)| api_int(v));
    let mut gpus: Vec<Gpu> = Vec::new();
    for line in lines {
        let Some((index, key, value)) = device_key(line) else { continue };
        let at = match gpus.iter().position(|g| g.index == index) {
            Some(at) => at,
            None if gpus.len() < MAX_DEVICES => {
                gpus.push(Gpu { index, ..Gpu::default() });
                gpus.len() - 1
            }
            None => continue,
        };
        let gpu = &mut gpus[at];
        match key {
            "Name" if !value.is_empty() && value.len() <= 120 => gpu.name = Some(value.to_owned()),
            "Compute Capability" => gpu.compute_capability = capability(value),
            "PCI Bus ID" if value.len() <= 16 => gpu.pci_bus_id = Some(value.to_ascii_lowercase()),
            _ => {}
        }
    }
    facts.deep.cupy = Some(DeepCupy {
        version: Some(version.to_owned()),
        runtime_version: runtime,
        driver_version: driver,
        device_count: (!gpus.is_empty()).then(|| u32::try_from(gpus.len()).unwrap_or(u32::MAX)),
        ..DeepCupy::default()
    });
    facts.deep_from(FORMAT);
    if rocm {
        return;
    }
    if let Some(build) = api_int(build).and_then(CudaVersion::from_api_int) {
        facts.cupy_build = Some(FrameworkBuild::Cuda { version: Some(build.to_string()) });
    }
    // A wheel's name (`cupy-cuda12x`) a package list gave says the package; `cupy` is a source build's.
    if !facts.packages.iter().any(|p| gpu_doctor_kb::families::is_cupy(&p.name)) {
        packages::add(facts, "cupy", version, None, FORMAT);
    }
    facts.driver(None, driver.and_then(CudaVersion::from_api_int), FORMAT);
    if facts.listed_gpus.is_empty() {
        facts.listed_gpus.extend(gpus.into_iter().filter(|g| g.name.is_some()).map(|g| (g, FORMAT)));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn read_text(text: &str) -> Facts {
        Facts::read_by(read, text)
    }

    /// cupy/cupy#5095 (a maintainer's show_config: CuPy built for and running CUDA 11.3 on a driver of
    /// CUDA 11.2), the lines after the first GPU's.
    const CUPY_5095: &str = "OS                           : Linux-5.4.0-42-generic-x86_64-with-glibc2.10\n\
        CuPy Version                 : 9.0.0rc1\n\
        NumPy Version                : 1.20.2\n\
        CUDA Root                    : /usr/local/cuda-11.3\n\
        CUDA Build Version           : 11030\n\
        CUDA Driver Version          : 11020\n\
        CUDA Runtime Version         : 11030\n\
        cuBLAS Version               : 11402\n\
        NVRTC Version                : (11, 3)\n\
        cuDNN Build Version          : None\n\
        Device 0 Name                : GeForce RTX 2080 Ti\n\
        Device 0 Compute Capability  : 75\n\
        Device 0 PCI Bus ID          : 0000:1A:00.0\n";

    #[test]
    fn show_config_gives_cupy_its_build_the_drivers_level_and_the_gpu() {
        let f = read_text(CUPY_5095);
        assert_eq!(f.cupy_build, Some(FrameworkBuild::Cuda { version: Some("11.3".to_owned()) }));
        assert_eq!(f.driver_cuda.map(|(c, _)| c), Some(CudaVersion::new(11, 2)));
        let cupy = f.deep.cupy.as_ref().unwrap();
        assert_eq!((cupy.runtime_version, cupy.driver_version, cupy.device_count), (Some(11030), Some(11020), Some(1)));
        assert!(f.packages.iter().any(|p| p.name == "cupy" && p.version == "9.0.0rc1"));
        let (gpu, _) = &f.listed_gpus[0];
        assert_eq!(gpu.name.as_deref(), Some("GeForce RTX 2080 Ti"));
        assert_eq!(gpu.compute_capability, Some("7.5".parse().unwrap()));
        assert_eq!(gpu.pci_bus_id.as_deref(), Some("0000:1a:00.0"));
    }

    /// cupy/cupy#9547 (CuPy 14: the linked runtime, then the locally installed one's failure) and an
    /// exception in place of the driver's version.
    #[test]
    fn only_a_leading_integer_is_a_version() {
        let f = read_text(
            "CuPy Version                 : 14.0.0rc1\n\
             CUDA Build Version           : 13000\n\
             CUDA Driver Version          : CUDARuntimeError('cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version')\n\
             CUDA Runtime Version         : 13000 (linked to CuPy) / RuntimeError('CuPy failed to load libcudart.so.13: OSError: libcudart.so.13: cannot open shared object file: No such file or directory') (locally installed)\n",
        );
        let cupy = f.deep.cupy.as_ref().unwrap();
        assert_eq!((cupy.runtime_version, cupy.driver_version), (Some(13000), None));
        assert!(f.driver_cuda.is_none());
        assert_eq!(api_int("11030)"), None);
        assert_eq!(api_int("1234567"), None);
    }

    #[test]
    fn other_key_value_lists_and_broken_text_are_not_show_config() {
        for text in [
            "CuPy Version : \nCUDA Build Version : 11030\n",
            "CUDA Build Version           : 11030\n",
            "CuPy Version                 : 9.0.0\n",
            "CuPy Version                 : 9.0.0\nCUDA Build Version",
            "Device 0 Name : x\nDevice 99999999999 Name : y\n",
        ] {
            let f = read_text(text);
            assert!(f.deep.cupy.is_none() && f.packages.is_empty() && f.listed_gpus.is_empty(), "{text}");
        }
        let huge = format!("CuPy Version : 1.0\nCUDA Build Version : 11030\n{}", "Device 1 Name : x\n".repeat(100_000));
        let f = read_text(&huge);
        assert_eq!(f.listed_gpus.len(), 1);
    }

    /// A ROCm build (cupy/cupy `cupyx/_runtime.py`: `Device {i} Arch` instead of a compute capability)
    /// says HIP's versions, not CUDA's.
    #[test]
    fn a_rocm_build_gives_no_cuda_level() {
        let f = read_text(
            "CuPy Version          : 13.0.0\nCUDA Build Version    : 50422804\nCUDA Driver Version   : 50422804\n\
             Device 0 Name         : AMD Instinct MI210\nDevice 0 Arch         : gfx90a:sramecc+:xnack-\n",
        );
        assert!(f.cupy_build.is_none() && f.driver_cuda.is_none() && f.listed_gpus.is_empty());
    }
}
