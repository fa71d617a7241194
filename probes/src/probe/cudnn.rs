//! cuDNN: every copy on the machine — headers, shared libraries, pip wheels, conda packages and
//! Windows DLLs — each with its version when something tells it.
//!
//! Copies are deduplicated by real path (a `/usr/include/cudnn_version.h` alternatives link and the
//! `…/x86_64-linux-gnu/cudnn_version_v9.h` it names are one header).

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use super::SitePackages;
use super::toolkits;
use super::toolkits::fs::{conda_meta, env_path, leading_version, real_path, text};
use crate::host::Host;
use crate::host::{dir_names, is_file};
use crate::parse::wheel::{normalize_name, parse_dist_folder};
use gpu_doctor_model::{CudnnCopy, CudnnKind, CudnnVersionSource, OsFamily, Toolkits};
use gpu_doctor_model::{CudnnVersion, Probed, Trace};

/// The Windows cuDNN 9 installer's folder (`v9.1/bin/12.4/cudnn64_9.dll`).
const WINDOWS_CUDNN: &str = "C:/Program Files/NVIDIA/CUDNN";

/// What the search has collected so far.
#[derive(Debug, Default)]
struct Found {
    copies: Vec<CudnnCopy>,
    seen: Vec<PathBuf>,
    looked: Vec<String>,
}

impl Found {
    /// True (and remembered) when the real path of `path` is new.
    fn first_time(&mut self, host: &dyn Host, path: &Path) -> bool {
        let real = real_path(host, path);
        if self.seen.contains(&real) {
            return false;
        }
        self.seen.push(real);
        true
    }

    fn push(&mut self, location: &Path, kind: CudnnKind, version: Option<(CudnnVersion, CudnnVersionSource)>) {
        self.copies.push(CudnnCopy {
            location: text(location),
            kind,
            version: version.map(|v| v.0),
            major: version.map(|v| v.0.major),
            version_source: version.map(|v| v.1),
            env: None,
            cuda_major: None,
        });
    }
}

/// Finds every copy of cuDNN.
pub fn probe(
    host: &dyn Host,
    toolkits: Option<&Toolkits>,
    site_packages: &[SitePackages],
    loader_cache: &toolkits::LoaderCache,
    trace: &mut Trace,
) -> Probed<Vec<CudnnCopy>> {
    let os = host.platform().os;
    if os == OsFamily::Macos {
        trace.miss("platform", "macOS");
        return Probed::Unsupported { reason: "cuDNN is not built for macOS".into() };
    }
    let mut found = Found::default();
    let installs = toolkits.map(|t| t.installs.as_slice()).unwrap_or_default();
    let conda = env_path(host, "CONDA_PREFIX");
    let conda_root = conda.as_ref().map(|c| if os == OsFamily::Windows { c.join("Library") } else { c.clone() });

    // Pip wheels first, so their headers and libraries are not counted again.
    for sp in site_packages {
        pip_wheel(host, sp, trace, &mut found);
    }

    let mut include_dirs: Vec<PathBuf> = Vec::new();
    if os != OsFamily::Windows {
        include_dirs.push("/usr/include".into());
        include_dirs.push("/usr/local/include".into());
    }
    include_dirs.extend(installs.iter().map(|i| Path::new(&i.root).join("include")));
    include_dirs.extend(conda_root.iter().map(|c| c.join("include")));
    for dir in &include_dirs {
        headers_in(host, dir, trace, &mut found);
    }
    if os != OsFamily::Windows {
        for arch in ["x86_64-linux-gnu", "aarch64-linux-gnu"] {
            let dir = Path::new("/usr/include").join(arch);
            found.looked.push(format!("{}/cudnn_version_v*.h", text(&dir)));
            for name in
                dir_names(host, &dir).into_iter().filter(|n| n.starts_with("cudnn_version") && n.ends_with(".h"))
            {
                header(host, &dir.join(name), trace, &mut found);
            }
        }
    }

    if os == OsFamily::Windows {
        windows_dlls(host, installs, conda_root.as_deref(), trace, &mut found);
    } else {
        let loader = match toolkits {
            Some(t) => t.loader_libraries.as_slice(),
            None => loader_cache.get(host, trace).unwrap_or_default(),
        };
        found.looked.push("the loader cache (ldconfig -p)".into());
        for entry in loader.iter().filter(|e| e.name.starts_with("libcudnn.so")) {
            library(host, Path::new(&entry.path), trace, &mut found);
        }
        let lib_dirs = installs.iter().flat_map(|i| i.lib_dirs.iter().map(PathBuf::from));
        for dir in lib_dirs.chain(conda_root.iter().map(|c| c.join("lib"))).collect::<Vec<_>>() {
            found.looked.push(text(&dir));
            for name in dir_names(host, &dir).into_iter().filter(|n| n.starts_with("libcudnn.so")) {
                library(host, &dir.join(name), trace, &mut found);
            }
        }
    }

    if let Some(prefix) = &conda {
        conda_packages(host, prefix, trace, &mut found);
    }

    if found.copies.is_empty() {
        return Probed::absent(format!("no cuDNN found; looked at {}", found.looked.join(", ")));
    }
    Probed::found(found.copies, "filesystem")
}

/// `cudnn_version.h`, else `cudnn.h`, in one include folder.
fn headers_in(host: &dyn Host, dir: &Path, trace: &mut Trace, found: &mut Found) {
    found.looked.push(format!("{}/cudnn_version.h", text(dir)));
    let version_h = dir.join("cudnn_version.h");
    if is_file(host, &version_h) {
        header(host, &version_h, trace, found);
        return;
    }
    let cudnn_h = dir.join("cudnn.h");
    if is_file(host, &cudnn_h) {
        header(host, &cudnn_h, trace, found);
    } else {
        trace.miss(format!("look in {}", text(dir)), "no cudnn_version.h or cudnn.h");
    }
}

/// The version defines of one header, as a copy.
fn header(host: &dyn Host, path: &Path, trace: &mut Trace, found: &mut Found) {
    if !found.first_time(host, path) {
        return;
    }
    let version = read_header(host, path, trace);
    found.push(path, CudnnKind::Header, version.map(|v| (v, CudnnVersionSource::HeaderDefines)));
}

fn read_header(host: &dyn Host, path: &Path, trace: &mut Trace) -> Option<CudnnVersion> {
    let method = format!("read {}", text(path));
    match host.read_file(path).map(|t| crate::parse::cudnn_header::parse(&t)) {
        Ok(Ok(v)) => {
            trace.ok(method, v.to_string());
            Some(v)
        }
        Ok(Err(e)) => {
            trace.error(method, e.to_string());
            None
        }
        Err(e) if e.is_not_found() => {
            trace.miss(method, "absent");
            None
        }
        Err(e) => {
            trace.error(method, e.to_string());
            None
        }
    }
}

/// A cuDNN version from a library file name's suffix after `prefix` (`libcudnn.so.9.1.0` → 9.1.0).
fn version_from_file_name(name: &str, prefix: &str) -> (Option<CudnnVersion>, Option<u32>) {
    let suffix = name.strip_prefix(prefix).unwrap_or_default();
    let parts: Vec<&str> = suffix.split('.').collect();
    let major = parts.first().and_then(|p| p.parse().ok());
    let full = (parts.len() >= 3).then(|| suffix.parse().ok()).flatten();
    (full, major)
}

/// One shared library; its version from the name of the file it resolves to.
fn library(host: &dyn Host, path: &Path, trace: &mut Trace, found: &mut Found) {
    if !found.first_time(host, path) {
        return;
    }
    let real = real_path(host, path);
    let name = real.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let (version, major) = version_from_file_name(&name, "libcudnn.so.");
    trace.ok(
        format!("library {}", text(path)),
        format!("{name}: {}", version.map_or("version unknown".into(), |v| v.to_string())),
    );
    found.push(path, CudnnKind::Library, version.map(|v| (v, CudnnVersionSource::FileName)));
    if let Some(copy) = found.copies.last_mut() {
        copy.major = major;
    }
}

/// An `nvidia-cudnn-cu*` wheel in one site-packages folder.
fn pip_wheel(host: &dyn Host, sp: &SitePackages, trace: &mut Trace, found: &mut Found) {
    found.looked.push(format!("nvidia/cudnn in {}", text(&sp.path)));
    let folder = sp.path.join("nvidia").join("cudnn");
    let has_folder = host.file_kind(&folder).is_some();
    let dist = dir_names(host, &sp.path).into_iter().find_map(|n| {
        let (package, version) = parse_dist_folder(&n)?;
        let package = normalize_name(&package);
        let cuda = package.strip_prefix("nvidia-cudnn-cu").map(|m| m.parse::<u32>().ok());
        (package == "nvidia-cudnn" || cuda.is_some()).then(|| (n, version, cuda.flatten()))
    });
    if dist.is_none() && !has_folder {
        trace.miss(format!("look in {}", text(&sp.path)), "no nvidia-cudnn wheel");
        return;
    }
    let (dist_name, raw, cuda_major) = dist.map_or((None, None, None), |(n, v, c)| (Some(n), Some(v), c));
    let from_dist = raw.as_deref().and_then(leading_version).and_then(|v| v.parse::<CudnnVersion>().ok());
    let version = match from_dist {
        Some(v) => Some((v, CudnnVersionSource::DistInfo)),
        None => read_header(host, &folder.join("include/cudnn_version.h"), trace)
            .map(|v| (v, CudnnVersionSource::HeaderDefines)),
    };
    let location = if has_folder { folder.clone() } else { sp.path.join(dist_name.unwrap_or_default()) };
    found.first_time(host, &folder);
    trace.ok(
        format!("pip wheel {}", text(&location)),
        format!("{} ({})", version.map_or("version unknown".into(), |v| v.0.to_string()), sp.env),
    );
    found.push(&location, CudnnKind::PipWheel, version);
    if let Some(copy) = found.copies.last_mut() {
        copy.env = Some(sp.env.clone());
        copy.cuda_major = cuda_major;
    }
}

/// `cudnn-*.json` and `libcudnn-*.json` records in `$CONDA_PREFIX/conda-meta`.
fn conda_packages(host: &dyn Host, prefix: &Path, trace: &mut Trace, found: &mut Found) {
    let dir = prefix.join("conda-meta");
    found.looked.push(format!("{}/cudnn-*.json", text(&dir)));
    for name in dir_names(host, &dir) {
        let Some((raw, build)) = conda_meta(&name, "cudnn").or_else(|| conda_meta(&name, "libcudnn")) else { continue };
        let version = leading_version(&raw).and_then(|v| v.parse::<CudnnVersion>().ok());
        let cuda_major = build.split("cuda").nth(1).and_then(|r| {
            let digits: String = r.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        });
        trace.ok(format!("conda-meta {}", text(&dir)), &name);
        found.push(&dir.join(&name), CudnnKind::CondaPackage, version.map(|v| (v, CudnnVersionSource::CondaMeta)));
        if let Some(copy) = found.copies.last_mut() {
            copy.cuda_major = cuda_major;
        }
    }
}

/// `cudnn64_<major>.dll` in toolkit and cuDNN installer `bin` folders.
fn windows_dlls(
    host: &dyn Host,
    installs: &[gpu_doctor_model::ToolkitInstall],
    conda_root: Option<&Path>,
    trace: &mut Trace,
    found: &mut Found,
) {
    let mut bins: Vec<(PathBuf, Option<u32>)> =
        installs.iter().map(|i| (Path::new(&i.root).join("bin"), None)).collect();
    bins.extend(conda_root.map(|c| (c.join("bin"), None)));
    let root = Path::new(WINDOWS_CUDNN);
    for version in dir_names(host, root) {
        let bin = root.join(&version).join("bin");
        // cuDNN 9 puts one folder per CUDA version under bin (bin/12.4); cuDNN 8 its DLLs in bin.
        bins.push((bin.clone(), None));
        for cuda in dir_names(host, &bin).into_iter().filter(|n| !n.ends_with(".dll")) {
            let major = cuda.split('.').next().and_then(|m| m.parse().ok());
            bins.push((bin.join(cuda), major));
        }
        let include = root.join(&version).join("include");
        headers_in(host, &include, trace, found);
        for cuda in dir_names(host, &include).into_iter().filter(|n| !n.ends_with(".h")) {
            headers_in(host, &include.join(cuda), trace, found);
        }
    }
    for (bin, cuda_major) in bins {
        found.looked.push(format!("{}/cudnn64_*.dll", text(&bin)));
        for name in dir_names(host, &bin).into_iter().filter(|n| n.starts_with("cudnn64_") && n.ends_with(".dll")) {
            let path = bin.join(&name);
            if !found.first_time(host, &path) {
                continue;
            }
            let major = name.trim_start_matches("cudnn64_").trim_end_matches(".dll").parse().ok();
            trace.ok(format!("dll {}", text(&path)), format!("major {major:?}"));
            found.push(&path, CudnnKind::Dll, None);
            if let Some(copy) = found.copies.last_mut() {
                copy.major = major;
                copy.cuda_major = cuda_major;
            }
        }
    }
}
