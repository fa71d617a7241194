//! `python -m torch.utils.collect_env` output, every generation since 1.0: `PyTorch version:`,
//! `CUDA used to build PyTorch:`, `ROCM used to build PyTorch:`, `OS:`, `Python version:`,
//! `Python platform:`, `Is CUDA available:`, `CUDA runtime version:` (nvcc on PATH), `GPU models and
//! configuration:` (`nvidia-smi -L`, one line or several), `Nvidia driver version:`, `cuDNN version:`
//! (one library path or `Probably one of the following:` and a list), and `[pip3]` / `[conda]` rows.
//! The field names are from pytorch/pytorch `torch/utils/collect_env.py` (`env_info_fmt`).

use super::facts::{Facts, MAX_LIST};
use super::packages;
use crate::probe::python::parse::python_version_prefix;
use gpu_doctor_model::{CudaVersion, CudnnVersion, DriverVersion};
use gpu_doctor_model::{
    CudnnCopy, CudnnKind, CudnnVersionSource, DeepPython, DeepTorch, FrameworkBuild, Gpu, OsFamily,
};

const FORMAT: &str = "collect_env";

/// The value after `key` on the first line that starts with it, with its line number.
/// vLLM's collect_env (2025 on) pads the name before the colon (`Is CUDA available            : True`).
fn field<'a>(lines: &'a [String], key: &str) -> Option<(usize, &'a str)> {
    let name = key.strip_suffix(':').unwrap_or(key);
    lines.iter().enumerate().find_map(|(i, l)| {
        let rest = l.trim().strip_prefix(name)?;
        let value = rest.strip_prefix(':').or_else(|| rest.trim_start_matches(' ').strip_prefix(':'))?;
        Some((i, value.trim()))
    })
}

/// collect_env's words for "no value".
fn missing(v: &str) -> bool {
    matches!(v, "" | "N/A" | "None" | "Could not collect" | "No CUDA" | "none")
}

/// collect_env's package rows, `[pip3] torch==2.5.1` and `[conda] pytorch 2.5.1 py3.11_cuda12.4_cudnn9.1.0_0
/// pytorch` (torch/utils/collect_env.py prefixes each `pip list --format=freeze` and `conda list` line it keeps),
/// whether the rest of collect_env's output is pasted or only these rows are.
fn package_rows(lines: &[String], facts: &mut Facts) {
    for (i, line) in lines.iter().enumerate() {
        let l = line.trim();
        let added = if let Some(rest) = l.strip_prefix("[pip3] ").or_else(|| l.strip_prefix("[pip] ")) {
            packages::freeze_line(rest)
                .is_some_and(|(name, version)| packages::add(facts, &name, &version, None, FORMAT))
        } else if let Some(rest) = l.strip_prefix("[conda] ")
            && let Some((name, version, build)) = packages::conda_line(rest)
        {
            packages::add(facts, &name, &version, build.as_deref(), FORMAT)
        } else {
            false
        };
        if added {
            facts.saw(i, FORMAT);
        }
    }
}

/// Reads collect_env output: its package rows wherever they are, the rest where `PyTorch version:` and one
/// more of its fields are.
/// The format name of OpenMMLab's collect_env.
const MMCV_FORMAT: &str = "OpenMMLab's collect_env";

/// OpenMMLab's collect_env (open-mmlab/mmcv:mmcv/utils/env.py@01941ca, printed as `key: value` by mmdet's, mmseg's,
/// mmpose's tools): `sys.platform: linux`, then `GPU 0,1: GeForce RTX 3090` (the indices torch saw for each GPU
/// name, where CUDA was available) and `CUDA_HOME: /usr/local/cuda`; its `NVCC:` and `PyTorch:` lines are read as
/// labelled lines, its `PyTorch compiling details:` as torch.__config__.show(). Read only where `sys.platform:` and
/// `PyTorch compiling details:` (or `MMCV:`) are both there.
fn mmcv_env(lines: &[String], facts: &mut Facts) {
    let Some((at, _)) = field(lines, "sys.platform:") else { return };
    if field(lines, "PyTorch compiling details:").is_none() && field(lines, "MMCV:").is_none() {
        return;
    }
    let mut gpus: Vec<(u32, String)> = Vec::new();
    for l in lines.iter().skip(at).take(64) {
        let Some((ids, name)) = l.trim().strip_prefix("GPU ").and_then(|r| r.split_once(": ")) else { continue };
        let Ok(ids) = ids.split(',').map(|i| i.trim().parse::<u32>()).collect::<Result<Vec<u32>, _>>() else {
            continue;
        };
        let name = name.trim();
        for index in ids.into_iter().take(super::gpus::MAX_GPUS) {
            if !name.is_empty() && gpus.len() < super::gpus::MAX_GPUS && !gpus.iter().any(|(i, _)| *i == index) {
                gpus.push((index, name.to_owned()));
            }
        }
    }
    facts.saw(at, MMCV_FORMAT);
    gpus.sort_by_key(|(i, _)| *i);
    for (index, name) in gpus {
        facts.listed_gpus.push((Gpu { index, name: Some(name), ..Gpu::default() }, MMCV_FORMAT));
    }
    if let Some((_, home)) = field(lines, "CUDA_HOME:").filter(|(_, v)| v.starts_with('/') && !v.contains(' '))
        && facts.env.vars.len() < 64
    {
        facts.env.vars.entry("CUDA_HOME".to_owned()).or_insert_with(|| home.to_owned());
    }
}

pub(super) fn read(lines: &[String], facts: &mut Facts) {
    mmcv_env(lines, facts);
    fields(lines, facts);
    // After the fields: `PyTorch version:` names torch's local tag where a `[pip3]` row may not.
    package_rows(lines, facts);
}

/// The fields, where `PyTorch version:` and one more of them are.
fn fields(lines: &[String], facts: &mut Facts) {
    let Some((start, torch_version)) = field(lines, "PyTorch version:") else { return };
    let others = ["CUDA used to build PyTorch:", "Is CUDA available:", "Is debug build:", "cuDNN version:"];
    if !others.iter().any(|k| field(lines, k).is_some()) {
        return;
    }
    facts.saw(start, FORMAT);
    let get = |k: &str| field(lines, k).map(|(_, v)| v).filter(|v| !missing(v));

    let cuda_build = get("CUDA used to build PyTorch:");
    let rocm_build = get("ROCM used to build PyTorch:");
    let torch_present = !missing(torch_version);
    if torch_present {
        packages::add(facts, "torch", torch_version, None, FORMAT);
        let built_with = field(lines, "CUDA used to build PyTorch:").map(|(_, v)| v);
        facts.torch_build = match (cuda_build, rocm_build) {
            (Some(v), _) if v.starts_with(|c: char| c.is_ascii_digit()) => {
                Some(FrameworkBuild::Cuda { version: Some(v.to_owned()) })
            }
            (_, Some(r)) => Some(FrameworkBuild::Rocm { version: Some(r.to_owned()) }),
            _ if built_with == Some("None") => Some(FrameworkBuild::Cpu),
            _ => None,
        };
        let available = get("Is CUDA available:").and_then(|v| match v {
            "Yes" | "True" => Some(true),
            "No" | "False" => Some(false),
            _ => None,
        });
        // Older collect_env printed every `None` as `Could not collect`: with a GPU or a driver
        // listed and CUDA not available, torch.version.cuda was None, a CPU build.
        let gpu_listed = get("GPU models and configuration:").is_some() || get("Nvidia driver version:").is_some();
        if facts.torch_build.is_none()
            && built_with == Some("Could not collect")
            && rocm_build.is_none()
            && available == Some(false)
            && gpu_listed
        {
            facts.torch_build = Some(FrameworkBuild::Cpu);
        }
        facts.deep.torch = Some(DeepTorch {
            version: Some(torch_version.to_owned()),
            cuda: cuda_build.map(str::to_owned),
            hip: rocm_build.map(str::to_owned),
            cuda_available: available,
            ..DeepTorch::default()
        });
        facts.deep_from(FORMAT);
    }
    if let Some(v) = get("Python version:").and_then(python_version_prefix) {
        facts.python_version.get_or_insert(v.clone());
        facts.deep.python = Some(DeepPython { version: Some(v), ..DeepPython::default() });
    }
    platform(get("OS:"), get("Python platform:"), facts);
    if let Some(v) = get("CUDA runtime version:").and_then(|v| v.parse::<CudaVersion>().ok()) {
        facts.nvcc_toolkit(v);
    }
    let driver =
        get("Nvidia driver version:").and_then(|v| v.parse::<DriverVersion>().ok()).filter(|d| d.major() >= 100);
    facts.driver(driver, None, FORMAT);
    if rocm_build.is_none() {
        gpus(lines, facts);
    }
    cudnn(lines, facts);
}

/// The CPU architectures collect_env and Python's platform string name.
const ARCHES: [&str; 5] = ["x86_64", "aarch64", "arm64", "amd64", "ppc64le"];

/// OS family, name and CPU architecture from `OS: Ubuntu 22.04.4 LTS (x86_64)` and
/// `Python platform: Linux-5.15.0-…-x86_64-with-glibc2.35`.
pub(super) fn platform(os: Option<&str>, python_platform: Option<&str>, facts: &mut Facts) {
    let os_l = os.unwrap_or("").to_lowercase();
    let py = python_platform.unwrap_or("").to_lowercase();
    let family = if os_l.contains("windows") || py.starts_with("windows") {
        Some(OsFamily::Windows)
    } else if os_l.contains("mac") || py.starts_with("macos") || py.starts_with("darwin") {
        Some(OsFamily::Macos)
    } else if py.starts_with("linux") || os_l.contains("linux") || os_l.contains("ubuntu") || os_l.contains("(x86_64)")
    {
        Some(OsFamily::Linux)
    } else {
        None
    };
    if facts.os.is_none() {
        facts.os = family;
    }
    // `Ubuntu 22.04.4 LTS (x86_64)`: the name without the architecture collect_env appends.
    let name = os.map(|o| match o.trim().strip_suffix(')').and_then(|x| x.rsplit_once(" (")) {
        Some((name, arch)) if ARCHES.contains(&arch) => name.trim(),
        _ => o.trim(),
    });
    if let Some(name) = name.filter(|n| !n.is_empty() && !missing(n)) {
        super::os_release::keep(facts, name, FORMAT);
    }
    let both = format!("{os_l} {py}");
    let arch = ARCHES.into_iter().find(|a| both.contains(a));
    if facts.arch.is_none() {
        facts.arch = arch.map(|a| match a {
            "arm64" => "aarch64".to_owned(),
            "amd64" => "x86_64".to_owned(),
            other => other.to_owned(),
        });
    }
}

/// `GPU 0: NVIDIA GeForce RTX 3090` lines (the UUID is removed by collect_env); a single name on
/// the field's own line (macOS builds) is GPU 0.
fn gpus(lines: &[String], facts: &mut Facts) {
    let Some((at, value)) = field(lines, "GPU models and configuration:") else { return };
    let mut names: Vec<(u32, String)> = gpu_line(value).into_iter().collect();
    if value.is_empty() || !names.is_empty() {
        for l in lines.iter().skip(at + 1).take(64) {
            let t = l.trim();
            match gpu_line(t) {
                Some(g) => names.push(g),
                None if t.starts_with("MIG ") || (t.is_empty() && names.is_empty()) => {}
                None => break,
            }
        }
    } else if !missing(value) && !value.contains(':') {
        names.push((0, value.to_owned()));
    }
    for (index, name) in names {
        facts.listed_gpus.push((Gpu { index, name: Some(name), ..Gpu::default() }, FORMAT));
    }
}

/// `GPU 0: NVIDIA GeForce RTX 3090` (or with its ` (UUID: GPU-…)`) → index and name.
fn gpu_line(l: &str) -> Option<(u32, String)> {
    let (idx, name) = l.trim().strip_prefix("GPU ")?.split_once(": ")?;
    let name = name.split(" (UUID:").next().unwrap_or(name).trim();
    (!name.is_empty()).then(|| idx.parse().ok().map(|i| (i, name.to_owned())))?
}

/// cuDNN library paths: one copy per folder and version (`libcudnn.so.8.9.2` and its
/// `libcudnn_adv_infer.so.8.9.2` siblings are one copy).
fn cudnn(lines: &[String], facts: &mut Facts) {
    let Some((at, value)) = field(lines, "cuDNN version:") else { return };
    let paths: Vec<&str> = if value.starts_with("Probably one of the following") {
        lines.iter().skip(at + 1).map(|l| l.trim()).take_while(|l| looks_like_path(l)).collect()
    } else if looks_like_path(value) {
        vec![value]
    } else {
        Vec::new()
    };
    let mut seen: Vec<(String, Option<CudnnVersion>, Option<u32>)> = Vec::new();
    for path in paths.into_iter().take(MAX_LIST) {
        let path = path.replace('\\', "/");
        let Some(copy) = copy_from_path(&path) else { continue };
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d).to_owned();
        let key = (dir, copy.version, copy.major);
        if !seen.contains(&key) {
            seen.push(key);
            facts.cudnn.push(copy);
        }
    }
}

fn looks_like_path(l: &str) -> bool {
    (l.starts_with('/') || l.get(1..3) == Some(":\\") || l.get(1..3) == Some(":/"))
        && l.to_lowercase().contains("cudnn")
}

/// A cuDNN library file: `…/libcudnn.so.8.9.2` (version from the name), `…/libcudnn.so.9` or
/// `…/cudnn64_8.dll` (major only).
fn copy_from_path(path: &str) -> Option<CudnnCopy> {
    let file = path.rsplit('/').next()?;
    let major = CudnnCopy::major_in_file_name(file);
    let (kind, version) = if let Some((_, tail)) = file.split_once(".so.") {
        (CudnnKind::Library, tail.parse::<CudnnVersion>().ok().filter(|_| tail.matches('.').count() >= 2))
    } else if file.to_ascii_lowercase().ends_with(".dll") {
        (CudnnKind::Dll, None)
    } else {
        (CudnnKind::Library, None)
    };
    Some(CudnnCopy {
        location: path.to_owned(),
        kind,
        version,
        major: version.map(|v| v.major).or(major),
        version_source: version.map(|_| CudnnVersionSource::FileName),
        env: None,
        cuda_major: None,
    })
}
