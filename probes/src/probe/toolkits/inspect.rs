//! Looks inside one candidate folder: is it a toolkit, which version, where its nvcc and libraries are.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::candidates::nvcc_name;
use super::fs::{conda_meta, leading_version, text};
use super::version_files::{parse_cuda, parse_version_json, parse_version_txt};
use crate::host::{Cmd, Host};
use crate::host::{dir_names, is_dir, is_file};
use crate::parse::wheel::{normalize_name, parse_dist_folder, parse_metadata};
use gpu_doctor_model::{CudaVersion, Trace};
use gpu_doctor_model::{OsFamily, ToolkitInstall, ToolkitKind, VersionSource};

/// How long `nvcc --version` may take.
pub(super) const NVCC_TIMEOUT: Duration = Duration::from_secs(10);

/// What the candidates that resolve to one folder say about it.
#[derive(Debug, Clone)]
pub(super) struct Group {
    /// The resolved folder.
    pub root: PathBuf,
    /// The kind, `Other` until some candidate says more.
    pub kind: ToolkitKind,
    /// The names that point here.
    pub aliases: Vec<String>,
    /// The Python environment, for pip installs.
    pub env: Option<String>,
    /// Dist-info package names that carry a pip install's version.
    pub packages: &'static [&'static str],
    /// The CUDA major a pip folder is for, when the layout says.
    pub pip_major: Option<u32>,
}

/// True when a file name is the CUDA runtime library on some platform.
pub(super) fn is_cudart(name: &str) -> bool {
    name.starts_with("libcudart.so")
        || (name.starts_with("cudart64_") && name.ends_with(".dll"))
        || name == "cudart.lib"
}

/// The folders under `root` that hold CUDA libraries.
fn lib_dirs(host: &dyn Host, root: &Path) -> Vec<PathBuf> {
    let os = host.platform().os;
    let mut dirs: Vec<PathBuf> = Vec::new();
    if os == OsFamily::Windows {
        // The installer's import libraries are in lib/x64; conda's `Library` has only lib.
        let x64 = root.join("lib/x64");
        dirs.push(if is_dir(host, &x64) { x64 } else { root.join("lib") });
    } else if text(root) == "/usr" {
        // A distribution's toolkit shares /usr with everything else: keep only folders with the runtime.
        let arch = host.platform().arch;
        return [format!("lib/{arch}-linux-gnu"), "lib64".into(), "lib".into()]
            .iter()
            .map(|d| root.join(d))
            .filter(|d| dir_names(host, d).iter().any(|n| is_cudart(n)))
            .collect();
    } else {
        dirs.push(root.join("lib64"));
        dirs.push(root.join("lib"));
        let targets = root.join("targets");
        dirs.extend(dir_names(host, &targets).into_iter().map(|t| targets.join(t).join("lib")));
    }
    dirs.into_iter().filter(|d| is_dir(host, d)).collect()
}

/// Inspects one folder; `None` (with a trace entry) when it is not a CUDA toolkit.
pub(super) fn inspect(host: &dyn Host, group: &Group, trace: &mut Trace) -> Option<ToolkitInstall> {
    let root = &group.root;
    let os = host.platform().os;
    let nvcc = Some(root.join("bin").join(nvcc_name(os))).filter(|p| is_file(host, p));
    let libs = lib_dirs(host, root);
    let mut runtime = libs.iter().any(|d| dir_names(host, d).iter().any(|n| is_cudart(n)));
    if os == OsFamily::Windows {
        runtime |= dir_names(host, &root.join("bin")).iter().any(|n| is_cudart(n));
    }
    let version_file = ["version.json", "version.txt"].iter().any(|f| is_file(host, &root.join(f)));
    if nvcc.is_none() && !runtime && !version_file {
        trace.miss(format!("inspect {}", text(root)), "no bin/nvcc, version file or CUDA runtime library");
        return None;
    }
    let (version, version_source) = match version(host, group, nvcc.as_deref(), trace) {
        Some((v, s)) => (Some(v), Some(s)),
        None => (None, None),
    };
    trace.ok(
        format!("inspect {}", text(root)),
        format!("{:?} toolkit, version {}", group.kind, version.map_or("unknown".into(), |v| v.to_string())),
    );
    Some(ToolkitInstall {
        root: text(root),
        kind: group.kind,
        version,
        version_source,
        nvcc: nvcc.as_deref().map(text),
        lib_dirs: libs.iter().map(|d| text(d)).collect(),
        aliases: group.aliases.clone(),
        python_env: group.env.clone(),
    })
}

/// Tries each version source in order.
fn version(
    host: &dyn Host,
    group: &Group,
    nvcc: Option<&Path>,
    trace: &mut Trace,
) -> Option<(CudaVersion, VersionSource)> {
    let root = &group.root;
    if group.kind == ToolkitKind::Pip
        && let Some(found) = pip_version(host, group, trace)
    {
        return Some(found);
    }
    for (file, parser, source) in [
        ("version.json", parse_version_json as fn(&str) -> _, VersionSource::VersionJson),
        ("version.txt", parse_version_txt, VersionSource::VersionTxt),
    ] {
        let path = root.join(file);
        let method = format!("read {}", text(&path));
        match host.read_file(&path) {
            Ok(body) => match parser(&body) {
                Ok(v) => {
                    trace.ok(method, v.to_string());
                    return Some((v, source));
                }
                Err(e) => trace.error(method, e.to_string()),
            },
            Err(e) if e.is_not_found() => trace.miss(method, "absent"),
            Err(e) => trace.error(method, e.to_string()),
        }
    }
    if let Some(nvcc) = nvcc {
        let cmd = Cmd::new([text(nvcc), "--version".into()]).timeout(NVCC_TIMEOUT);
        let method = format!("run {}", cmd.display());
        match host.run(&cmd) {
            Ok(out) => match crate::parse::nvcc::parse(&out.stdout) {
                Ok(v) => {
                    trace.ok(method, v.to_string());
                    return Some((v, VersionSource::Nvcc));
                }
                Err(e) => trace.error(method, format!("{e} (exit {:?})", out.status)),
            },
            Err(e) => trace.error(method, e.to_string()),
        }
    }
    if group.kind == ToolkitKind::Conda {
        return conda_version(host, root, trace);
    }
    None
}

/// A pip toolkit's version from the dist-info folders next to `nvidia/`.
fn pip_version(host: &dyn Host, group: &Group, trace: &mut Trace) -> Option<(CudaVersion, VersionSource)> {
    let site = group.root.parent()?.parent()?;
    let want13 = group.pip_major == Some(13);
    let entries = dir_names(host, site);
    for base in group.packages {
        for name in &entries {
            let Some((package, raw)) = parse_dist_folder(name) else { continue };
            let package = normalize_name(&package);
            if package != *base && !package.starts_with(&format!("{base}-cu")) {
                continue;
            }
            let method = format!("dist-info {}", text(&site.join(name)));
            let (parsed, source) = match parse_cuda("dist-info version", &raw) {
                Ok(v) => (Some(v), VersionSource::DistInfo),
                Err(_) => {
                    let meta = host.read_file(&site.join(name).join("METADATA")).ok();
                    let v = meta.as_deref().and_then(parse_metadata).map(|(_, version)| version);
                    (v.and_then(|v| parse_cuda("METADATA", &v).ok()), VersionSource::PackageMetadata)
                }
            };
            match parsed {
                Some(v) if (v.major == 13) == want13 => {
                    trace.ok(method, v.to_string());
                    return Some((v, source));
                }
                Some(v) => trace.miss(method, format!("{v} is for another folder")),
                None => trace.error(method, "no version in the folder name or METADATA"),
            }
        }
    }
    trace.miss(format!("dist-info in {}", text(site)), format!("none of {}", group.packages.join(", ")));
    None
}

/// A conda toolkit's version from `conda-meta/<package>-<version>-<build>.json` file names.
fn conda_version(host: &dyn Host, root: &Path, trace: &mut Trace) -> Option<(CudaVersion, VersionSource)> {
    let dirs = [Some(root.join("conda-meta")), root.parent().map(|p| p.join("conda-meta"))];
    for dir in dirs.into_iter().flatten() {
        let entries = dir_names(host, &dir);
        for package in ["cuda-nvcc", "cuda-cudart", "cudatoolkit", "cuda-version"] {
            let found = entries.iter().find_map(|n| conda_meta(n, package));
            if let Some(v) =
                found.and_then(|(v, _)| leading_version(&v)).and_then(|v| parse_cuda("conda-meta", &v).ok())
            {
                trace.ok(format!("conda-meta {}", text(&dir)), format!("{package} {v}"));
                return Some((v, VersionSource::CondaMeta));
            }
        }
    }
    trace.miss(format!("conda-meta {}", text(root)), "no cuda-nvcc, cuda-cudart, cudatoolkit or cuda-version package");
    None
}
