//! Packages → frameworks, CUDA wheels, companions, conda's CUDA toolkit and cuDNN, by the fast tier's rules
//! (`probe::python::fast`) minus the version files it reads: what a pasted list cannot show stays
//! `Unknown` unless collect_env or TensorFlow's build info said it.

use std::collections::BTreeMap;

use super::pkg::{CONDA_PLAN, ENV_FILE, PASTED, Pkg};
use crate::probe::python::companions::is_companion;
use crate::probe::python::fast::tf_build;
use crate::probe::python::parse::PyValue;
use gpu_doctor_kb::families::{self, build_from_local_tag, cupy_build};
use gpu_doctor_model::{CudaVersion, CudnnVersion};
use gpu_doctor_model::{
    CudnnCopy, CudnnKind, CudnnVersionSource, Framework, FrameworkBuild, Package, ToolkitInstall, ToolkitKind,
    VersionSource,
};

/// What the text said beyond the package lists.
#[derive(Debug, Default)]
pub(super) struct Hints<'a> {
    /// collect_env's "CUDA used to build PyTorch" (and ROCm line).
    pub torch_build: Option<&'a FrameworkBuild>,
    /// `tf.sysconfig.get_build_info()`.
    pub tf_info: Option<&'a BTreeMap<String, PyValue>>,
    /// TensorFlow's version as `tf.__version__` printed it.
    pub tf_version: Option<&'a str>,
    /// `jax.devices` listed CUDA devices.
    pub jax_cuda_devices: bool,
    /// The build ollama's runner list says.
    pub ollama_build: Option<&'a FrameworkBuild>,
    /// The build `cupy.show_config()` says, of the package it names `cupy`.
    pub cupy_build: Option<&'a FrameworkBuild>,
    /// A whole package list was pasted, so a missing package is not installed.
    pub complete: bool,
    /// The text says the machine runs Windows, where PyPI's `torch` wheels are CPU builds.
    pub windows: bool,
    /// PyTorch said CUDA is available, which no CPU build says.
    pub torch_cuda_available: bool,
    /// PyTorch's own prints answered (`torch.version.cuda`, `torch.cuda.is_available()`), whether or not its
    /// version was among them.
    pub torch_printed: bool,
}

/// The version of a torch whose prints say its build but not its version.
const VERSION_NOT_SHOWN: &str = "(version not shown)";

/// What the packages add up to.
#[derive(Debug, Default)]
pub(super) struct Built {
    pub frameworks: Vec<Framework>,
    pub cuda_wheels: Vec<Package>,
    pub companions: Vec<Package>,
    pub cudnn: Vec<CudnnCopy>,
    pub toolkits: Vec<ToolkitInstall>,
}

/// Builds frameworks, wheels, conda toolkit and cuDNN copies from the packages, sorted by name.
pub(super) fn frameworks(pkgs: &[Pkg], hints: &Hints<'_>) -> Built {
    let by_name: BTreeMap<&str, &Pkg> = pkgs.iter().map(|p| (p.name.as_str(), p)).collect();
    let mut out = Built::default();
    let plugin_major =
        by_name.keys().filter_map(|n| families::jax_plugin_cuda(n)).max_by_key(|m| m.parse::<u32>().unwrap_or(0));
    for (name, p) in &by_name {
        let name = *name;
        if name.starts_with("nvidia-") {
            out.cuda_wheels.push(Package { name: name.to_owned(), version: p.version.clone() });
            if let Some(major) = name.strip_prefix("nvidia-cudnn-cu") {
                out.cudnn.push(cudnn_copy(name, p, CudnnKind::PipWheel, major.parse().ok()));
            }
            continue;
        }
        if is_companion(name) {
            out.companions.push(Package { name: name.to_owned(), version: p.version.clone() });
            continue;
        }
        match name {
            "cudnn" => out.cudnn.push(cudnn_copy(name, p, CudnnKind::CondaPackage, conda_cuda_major(p))),
            "cudatoolkit" | "cuda-nvcc" | "cuda-cudart" | "cuda-version" | "pytorch-cuda" => {}
            _ => out.frameworks.push(framework(name, p, &by_name, plugin_major, hints)),
        }
    }
    if let Some(info) = hints.tf_info
        && !out.frameworks.iter().any(|f| families::is_tensorflow(&f.name))
        && let Some(version) = hints.tf_version
    {
        let cudnn_build = text(info, "cudnn_version");
        out.frameworks.push(Framework {
            name: "tensorflow".to_owned(),
            version: version.to_owned(),
            build: tf_build(info),
            cudnn_build,
            source: "pasted tf.__version__ + tf.sysconfig.get_build_info".to_owned(),
            site_packages: PASTED.to_owned(),
        });
    }
    // torch's own prints said its build (`torch.version.cuda` printed None: a CPU build) without its version:
    // the torch they came from is installed all the same (opendatalab/MinerU#240's REPL).
    if hints.torch_printed
        && let Some(build) = hints.torch_build
        && !out.frameworks.iter().any(|f| f.name == "torch")
    {
        out.frameworks.push(Framework {
            name: "torch".to_owned(),
            version: VERSION_NOT_SHOWN.to_owned(),
            build: build.clone(),
            cudnn_build: None,
            source: "pasted python prints".to_owned(),
            site_packages: PASTED.to_owned(),
        });
    }
    out.toolkits.extend(conda_toolkit(&by_name));
    out
}

fn framework(
    name: &str,
    p: &Pkg,
    by_name: &BTreeMap<&str, &Pkg>,
    plugin_major: Option<&str>,
    hints: &Hints<'_>,
) -> Framework {
    let from_tag = build_from_local_tag(&p.version);
    let from_conda = p.conda_build.as_deref().and_then(conda_build);
    let mut source = format!("pasted {}", p.source);
    let mut cudnn_build = p.conda_build.as_deref().and_then(conda_cudnn);
    let build = if name == "torch" {
        match hints.torch_build {
            Some(b) => {
                if p.source != "collect_env" {
                    source.push_str(" + collect_env");
                }
                b.clone()
            }
            None => from_conda.or(from_tag).unwrap_or_else(|| windows_pypi_torch(p, hints)),
        }
    } else if families::is_tensorflow(name) {
        match hints.tf_info {
            Some(info) => {
                source.push_str(" + tf.sysconfig.get_build_info");
                cudnn_build = text(info, "cudnn_version");
                tf_build(info)
            }
            None if name.ends_with("-cpu") => FrameworkBuild::Cpu,
            None => from_conda.or(from_tag).unwrap_or(FrameworkBuild::Unknown),
        }
    } else if name == "jax" {
        let jaxlib = by_name.get("jaxlib");
        let jaxlib_build = jaxlib
            .and_then(|j| j.conda_build.as_deref().and_then(conda_build).or_else(|| build_from_local_tag(&j.version)));
        match (plugin_major, jaxlib_build) {
            (Some(major), _) => FrameworkBuild::Cuda { version: Some(major.to_owned()) },
            (None, Some(b)) => b,
            (None, None) if hints.jax_cuda_devices => FrameworkBuild::Cuda { version: None },
            (None, None) if hints.complete && jaxlib.is_some() => FrameworkBuild::Cpu,
            (None, None) => FrameworkBuild::Unknown,
        }
    } else if let Some(major) = families::jax_plugin_cuda(name) {
        FrameworkBuild::Cuda { version: Some(major.to_owned()) }
    } else if name == "cupy"
        && let Some(build) = hints.cupy_build
    {
        build.clone()
    } else if families::is_cupy(name) {
        from_conda.unwrap_or_else(|| cupy_build(name))
    } else if name == "onnxruntime-gpu" {
        FrameworkBuild::Cuda { version: None }
    } else if name == "onnxruntime" {
        FrameworkBuild::Cpu
    } else if let Some(build) = families::paddle_build(name) {
        build
    } else if name == "ollama" {
        hints.ollama_build.cloned().unwrap_or(FrameworkBuild::Unknown)
    } else {
        from_conda.or(from_tag).unwrap_or(FrameworkBuild::Unknown)
    };
    Framework {
        name: name.to_owned(),
        version: p.version.clone(),
        build,
        cudnn_build,
        source,
        site_packages: PASTED.to_owned(),
    }
}

/// A `torch` with no local version tag and no conda build string: on Windows that is PyPI's wheel,
/// which is built for the CPU only (PyTorch's CUDA wheels for Windows come from its own index and
/// carry `+cuXYZ`); elsewhere PyPI's wheel is a CUDA build of unknown level, so it stays unknown. A
/// version a person typed (an issue form's answer, a `PyTorch version:` line) says nothing of the
/// tag: people leave it out.
fn windows_pypi_torch(p: &Pkg, hints: &Hints<'_>) -> FrameworkBuild {
    let tagged = p.version.contains('+');
    let printed =
        p.source != "conda list" && p.source != super::pkg::CONDA_COMMAND && !super::pkg::TYPED.contains(&p.source);
    if hints.windows && !hints.torch_cuda_available && !tagged && p.conda_build.is_none() && printed {
        FrameworkBuild::Cpu
    } else {
        FrameworkBuild::Unknown
    }
}

/// The build a conda build string says: `py3.10_cuda11.8_cudnn8.7.0_0` → CUDA 11.8,
/// conda-forge's `cuda120_py311h…` → CUDA 12.0, `cpu_py311h…` or `py3.10_cpu_0` → CPU.
fn conda_build(build: &str) -> Option<FrameworkBuild> {
    build.split('_').find_map(|t| {
        if t == "cpu" || (t.starts_with("cpu") && !t.starts_with("cpython")) {
            return Some(FrameworkBuild::Cpu);
        }
        if let Some(rest) = t.strip_prefix("rocm") {
            let v: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
            return Some(FrameworkBuild::Rocm { version: Some(v).filter(|v| !v.is_empty()) });
        }
        let rest = t.strip_prefix("cuda")?;
        let v: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
        let version = match v.len() {
            0 => None,
            _ if v.contains('.') => Some(v.trim_end_matches('.').to_owned()),
            1 | 2 => Some(v),
            _ => families::cuda_tag(&format!("cu{v}")).map(|c| c.to_string()),
        };
        Some(FrameworkBuild::Cuda { version })
    })
}

/// `cudnn8.7.0` in a conda build string → `8.7.0`.
fn conda_cudnn(build: &str) -> Option<String> {
    build.split('_').find_map(|t| {
        t.strip_prefix("cudnn").filter(|v| v.starts_with(|c: char| c.is_ascii_digit())).map(str::to_owned)
    })
}

/// The CUDA major of a conda package's build string (`cuda12_0`, `cuda11.8_…`).
fn conda_cuda_major(p: &Pkg) -> Option<u32> {
    let build = p.conda_build.as_deref()?;
    build.split('_').find_map(|t| {
        let digits: String = t.strip_prefix("cuda")?.chars().take_while(char::is_ascii_digit).collect();
        match digits.len() {
            1 | 2 => digits.parse().ok(),
            3 => digits.get(..2)?.parse().ok(),
            _ => None,
        }
    })
}

fn cudnn_copy(name: &str, p: &Pkg, kind: CudnnKind, cuda_major: Option<u32>) -> CudnnCopy {
    let version: Option<CudnnVersion> = p.version.parse().ok();
    let source = match kind {
        CudnnKind::PipWheel => CudnnVersionSource::DistInfo,
        _ => CudnnVersionSource::CondaMeta,
    };
    CudnnCopy {
        location: format!("{PASTED} {name} {}", p.version),
        kind,
        version,
        major: version.map(|v| v.major),
        version_source: version.map(|_| source),
        env: (kind == CudnnKind::PipWheel).then(|| "pasted".to_owned()),
        cuda_major,
    }
}

/// conda's CUDA packages (`cudatoolkit`, `cuda-nvcc`, `cuda-cudart`) as one conda toolkit; else
/// the pytorch channel's `pytorch-cuda` metapackage, whose version is the CUDA release whose
/// libraries it installs ("Metapackage to select the PyTorch variant", `run: cuda-libraries
/// >=11.6,<11.7` for 11.6: pytorch/builder:conda/pytorch-cuda/meta.yaml@0919b667c342f430f2b0f7bae7bb9240aac9bf22).
///
/// Where the environment's nvcc (`cuda-nvcc`) is of another CUDA release than its runtime packages (`cudatoolkit`,
/// `cuda-cudart`, or the `cuda-version` pin that conda-forge's and NVIDIA's CUDA packages follow), both are given,
/// each under its package's name (dattalab/keypoint-moseq#161: `cuda-nvcc 12.4.131` beside `cudatoolkit 11.8.0`).
fn conda_toolkit(by_name: &BTreeMap<&str, &Pkg>) -> Vec<ToolkitInstall> {
    let listed =
        |p: &&&Pkg| [CONDA_PLAN, "conda list", ENV_FILE].contains(&p.source) || p.source.starts_with("collect_env");
    let install = |root: String, version: Option<CudaVersion>, nvcc: bool| ToolkitInstall {
        root,
        kind: ToolkitKind::Conda,
        version,
        version_source: version.map(|_| VersionSource::CondaMeta),
        nvcc: nvcc.then(|| "nvcc".to_owned()),
        lib_dirs: Vec::new(),
        aliases: Vec::new(),
        python_env: None,
    };
    let nvcc = by_name.get("cuda-nvcc").filter(listed);
    // `cuda-version` is a pin other packages follow, no toolkit by itself: only compared with nvcc.
    let runtime = |names: &[&'static str]| names.iter().find_map(|&n| by_name.get(n).filter(listed).map(|p| (n, p)));
    let release = |p: &Pkg| p.version.parse::<CudaVersion>().ok();
    let pinned = runtime(&["cudatoolkit", "cuda-cudart", "cuda-version", "pytorch-cuda"]);
    match (nvcc, pinned) {
        (Some(n), Some((name, r)))
            if release(n).zip(release(r)).is_some_and(|(a, b)| a.major_minor() != b.major_minor()) =>
        {
            vec![
                install(format!("{PASTED} conda cuda-nvcc"), release(n), true),
                install(format!("{PASTED} conda {name}"), release(r), false),
            ]
        }
        (Some(n), _) => vec![install(format!("{PASTED} conda"), release(n), true)],
        (None, _) => runtime(&["cudatoolkit", "cuda-cudart", "pytorch-cuda"])
            .map(|(_, r)| install(format!("{PASTED} conda"), release(r), false))
            .into_iter()
            .collect(),
    }
}

fn text(info: &BTreeMap<String, PyValue>, key: &str) -> Option<String> {
    match info.get(key) {
        Some(PyValue::Str(s)) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conda_build_strings_tell_builds() {
        let cuda = |v: &str| Some(FrameworkBuild::Cuda { version: Some(v.to_owned()) });
        assert_eq!(conda_build("py3.10_cuda11.8_cudnn8.7.0_0"), cuda("11.8"));
        assert_eq!(conda_build("cuda120_py311h25b6552_301"), cuda("12.0"));
        assert_eq!(conda_build("cuda118py310h2a0a2c1_202"), cuda("11.8"));
        assert_eq!(conda_build("py3.10_cpu_0"), Some(FrameworkBuild::Cpu));
        assert_eq!(conda_build("cpu_generic_py311h_0"), Some(FrameworkBuild::Cpu));
        assert_eq!(conda_build("pyhd8ed1ab_0"), None);
        assert_eq!(conda_cudnn("py3.10_cuda11.8_cudnn8.7.0_0").as_deref(), Some("8.7.0"));
    }
}
