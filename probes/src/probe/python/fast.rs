//! The fast tier: GPU frameworks, CUDA wheels and companion packages from site-packages files, without
//! starting Python.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::companions::is_companion;
use super::parse::{PyValue, parse_assignments, parse_tf_build_info, parse_torch_version_py};
use crate::host::{FileKind, Host};
use crate::parse::wheel::{normalize_name, parse_dist_folder, parse_metadata};
use gpu_doctor_kb::families::{self, build_from_local_tag, cupy_build};
use gpu_doctor_model::Trace;
use gpu_doctor_model::{Framework, FrameworkBuild, Package};

/// What the fast tier found in one environment.
#[derive(Debug, Default)]
pub(super) struct Scan {
    pub frameworks: Vec<Framework>,
    pub cuda_wheels: Vec<Package>,
    pub companions: Vec<Package>,
}

/// One installed distribution.
#[derive(Debug, Clone)]
struct Dist {
    version: String,
    site_packages: PathBuf,
    source: &'static str,
}

/// True for the distributions the fast tier reports.
pub(crate) fn is_interesting(name: &str) -> bool {
    matches!(name, "torch" | "jax" | "jaxlib" | "onnxruntime" | "onnxruntime-gpu")
        || families::paddle_build(name).is_some()
        || families::is_tensorflow(name)
        || name.starts_with("nvidia-")
        || families::is_cupy(name)
        || families::jax_plugin_cuda(name).is_some()
}

/// Reads every site-packages folder of one environment.
pub(super) fn scan(host: &dyn Host, site_packages: &[PathBuf], trace: &mut Trace) -> Scan {
    let mut dists: BTreeMap<String, Dist> = BTreeMap::new();
    for sp in site_packages {
        let entries = match host.list_dir(sp) {
            Ok(e) => e,
            Err(e) => {
                trace.error(format!("list {}", sp.display()), e.to_string());
                continue;
            }
        };
        let mut seen = 0;
        for e in entries {
            let Some((folder_name, folder_version)) =
                parse_dist_folder(&e.name).filter(|(_, v)| v.starts_with(|c: char| c.is_ascii_digit()))
            else {
                continue;
            };
            let name = normalize_name(&folder_name);
            if !(is_interesting(&name) || is_companion(&name)) || dists.contains_key(&name) {
                continue;
            }
            let path = sp.join(&e.name);
            let (meta_path, source) = if e.name.ends_with(".dist-info") {
                (path.join("METADATA"), "dist-info METADATA")
            } else if host.file_kind(&path) == Some(FileKind::Dir) {
                (path.join("PKG-INFO"), "egg-info PKG-INFO")
            } else {
                (path, "egg-info PKG-INFO")
            };
            let (version, source) = match host.read_file(&meta_path).ok().as_deref().and_then(parse_metadata) {
                Some((meta_name, version)) if normalize_name(&meta_name) == name => (version, source),
                _ => {
                    trace.miss(format!("read {}", meta_path.display()), "no Name/Version; using the folder name");
                    (folder_version, "dist-info folder name")
                }
            };
            seen += 1;
            dists.insert(name, Dist { version, site_packages: sp.clone(), source });
        }
        trace.ok(format!("scan {}", sp.display()), format!("{seen} GPU-related distributions"));
    }
    build(host, &dists, trace)
}

/// Turns the found distributions into frameworks and wheels.
fn build(host: &dyn Host, dists: &BTreeMap<String, Dist>, trace: &mut Trace) -> Scan {
    let mut out = Scan::default();
    let jax_plugin_major =
        dists.keys().filter_map(|n| families::jax_plugin_cuda(n)).max_by_key(|m| m.parse::<u32>().unwrap_or(0));
    for (name, d) in dists {
        if name.starts_with("nvidia-") {
            out.cuda_wheels.push(Package { name: name.clone(), version: d.version.clone() });
            continue;
        }
        if is_companion(name) {
            out.companions.push(Package { name: name.clone(), version: d.version.clone() });
            continue;
        }
        let mut source = d.source.to_owned();
        let mut cudnn_build = None;
        let from_tag = build_from_local_tag(&d.version);
        let build = if name == "torch" {
            let file = d.site_packages.join("torch").join("version.py");
            match read(host, &file, trace).as_deref().and_then(parse_torch_version_py) {
                Some(v) => {
                    source.push_str(" + torch/version.py");
                    match (v.cuda, v.hip) {
                        (Some(Some(cuda)), _) => FrameworkBuild::Cuda { version: Some(cuda) },
                        (_, Some(Some(hip))) => FrameworkBuild::Rocm { version: Some(hip) },
                        (Some(None), _) => FrameworkBuild::Cpu,
                        _ => from_tag.unwrap_or(FrameworkBuild::Unknown),
                    }
                }
                None => from_tag.unwrap_or(FrameworkBuild::Unknown),
            }
        } else if families::is_tensorflow(name) {
            let file = d.site_packages.join("tensorflow/python/platform/build_info.py");
            match read(host, &file, trace).as_deref().and_then(parse_tf_build_info) {
                Some(info) => {
                    source.push_str(" + tensorflow/python/platform/build_info.py");
                    cudnn_build = text(&info, "cudnn_version");
                    tf_build(&info)
                }
                None if name.ends_with("-cpu") => FrameworkBuild::Cpu,
                None => FrameworkBuild::Unknown,
            }
        } else if name == "jax" {
            match (&jax_plugin_major, dists.get("jaxlib").map(|j| build_from_local_tag(&j.version))) {
                (Some(major), _) => FrameworkBuild::Cuda { version: Some((*major).to_owned()) },
                (None, Some(Some(b))) => b,
                (None, Some(None)) => FrameworkBuild::Cpu,
                (None, None) => FrameworkBuild::Unknown,
            }
        } else if let Some(major) = families::jax_plugin_cuda(name) {
            FrameworkBuild::Cuda { version: Some(major.to_owned()) }
        } else if families::is_cupy(name) {
            cupy_build(name)
        } else if name == "onnxruntime-gpu" {
            let file = d.site_packages.join("onnxruntime/capi/build_and_package_info.py");
            let info = read(host, &file, trace).map(|t| parse_assignments(&t)).unwrap_or_default();
            let cuda = info.get("cuda_version").and_then(PyValue::as_str).map(str::to_owned);
            cudnn_build = info.get("cudnn_version").and_then(PyValue::as_str).map(str::to_owned);
            if !info.is_empty() {
                source.push_str(" + onnxruntime/capi/build_and_package_info.py");
            }
            FrameworkBuild::Cuda { version: cuda }
        } else if name == "onnxruntime" {
            FrameworkBuild::Cpu
        } else if let Some(build) = families::paddle_build(name) {
            build
        } else {
            from_tag.unwrap_or(FrameworkBuild::Unknown)
        };
        out.frameworks.push(Framework {
            name: name.clone(),
            version: d.version.clone(),
            build,
            cudnn_build,
            source,
            site_packages: d.site_packages.to_string_lossy().replace('\\', "/"),
        });
    }
    out
}

/// TensorFlow's build from its `build_info` dict.
pub(crate) fn tf_build(info: &BTreeMap<String, PyValue>) -> FrameworkBuild {
    let flag = |k: &str| info.get(k).and_then(PyValue::as_bool);
    if flag("is_rocm_build") == Some(true) {
        return FrameworkBuild::Rocm { version: text(info, "rocm_version") };
    }
    match flag("is_cuda_build") {
        Some(true) => FrameworkBuild::Cuda { version: text(info, "cuda_version") },
        Some(false) => FrameworkBuild::Cpu,
        None => match text(info, "cuda_version") {
            Some(v) => FrameworkBuild::Cuda { version: Some(v) },
            None => FrameworkBuild::Unknown,
        },
    }
}

fn text(info: &BTreeMap<String, PyValue>, key: &str) -> Option<String> {
    info.get(key).and_then(PyValue::as_str).filter(|s| !s.is_empty()).map(str::to_owned)
}

/// Reads a version file, noting the attempt.
fn read(host: &dyn Host, path: &Path, trace: &mut Trace) -> Option<String> {
    match host.read_file(path) {
        Ok(t) => {
            trace.ok(format!("read {}", path.display()), "read");
            Some(t)
        }
        Err(e) => {
            if e.is_not_found() {
                trace.miss(format!("read {}", path.display()), e.to_string());
            } else {
                trace.error(format!("read {}", path.display()), e.to_string());
            }
            None
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_tell_builds() {
        assert!(is_interesting("nvidia-cudnn-cu12") && is_interesting("tf-nightly") && !is_interesting("numpy"));
    }
}
