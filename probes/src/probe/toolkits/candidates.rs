//! Where CUDA toolkits may be: every place the probe looks, in order, with the name that led there.

use std::path::{Path, PathBuf};

use super::ToolkitKind;
use super::fs::{env_path, real_path, text};
use crate::host::{self, FileKind, Host};
use crate::host::{dir_names, is_file};
use crate::probe::SitePackages;
use gpu_doctor_model::OsFamily;
use gpu_doctor_model::{Probed, Trace};

/// The Windows installer's folder of versioned toolkits (`v12.4`, …).
pub(super) const WINDOWS_TOOLKITS: &str = "C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA";

/// A folder that may be a toolkit root.
#[derive(Debug, Clone)]
pub(super) struct Candidate {
    /// The folder as named (before following symlinks).
    pub path: PathBuf,
    /// The name that points there (`PATH`, `CUDA_HOME`, `/usr/local/cuda`); `None` for a plain listing.
    pub alias: Option<String>,
    /// What kind of install this place implies; `Other` when the place does not say.
    pub kind: ToolkitKind,
    /// The Python environment, for pip installs.
    pub env: Option<String>,
    /// For pip installs: the dist-info package names (without `_cuNN`) that carry the version.
    pub packages: &'static [&'static str],
    /// For pip installs: the CUDA major the folder is for (13 for `nvidia/cu13`), when the layout says.
    pub pip_major: Option<u32>,
}

impl Candidate {
    fn new(path: impl Into<PathBuf>, alias: Option<&str>, kind: ToolkitKind) -> Self {
        Self { path: path.into(), alias: alias.map(str::to_owned), kind, env: None, packages: &[], pip_major: None }
    }
}

/// The nvcc file name on this platform.
pub(super) fn nvcc_name(os: OsFamily) -> &'static str {
    if os == OsFamily::Windows { "nvcc.exe" } else { "nvcc" }
}

/// The kind a path implies by where it is.
pub(super) fn kind_of(path: &Path) -> ToolkitKind {
    let p = text(path);
    if p.starts_with("/usr/local/cuda") {
        ToolkitKind::Local
    } else if p == "/usr" || p == "/usr/lib/cuda" || p == "/opt/cuda" || p.starts_with("/usr/lib/nvidia-cuda-toolkit") {
        ToolkitKind::Distro
    } else if p.contains("NVIDIA GPU Computing Toolkit") {
        ToolkitKind::WindowsInstaller
    } else {
        ToolkitKind::Other
    }
}

/// Every nvcc on PATH, in PATH order, with its folder.
pub(super) fn nvccs_on_path(host: &dyn Host) -> Vec<PathBuf> {
    let exe = nvcc_name(host.platform().os);
    let windows = host.platform().os == OsFamily::Windows;
    let mut out: Vec<PathBuf> = Vec::new();
    // Real folders already seen: on a merged-/usr system `/bin` is a link to `usr/bin`, so a PATH
    // with both names lists one nvcc twice (and `/bin/nvcc` would make `/` look like a toolkit).
    let mut seen: Vec<PathBuf> = Vec::new();
    for dir in host::path_dirs(host) {
        let dir = if windows { PathBuf::from(text(&dir).replace('\\', "/")) } else { dir };
        let nvcc = dir.join(exe);
        if !is_file(host, &nvcc) {
            continue;
        }
        let real_dir = real_path(host, &dir);
        if !seen.contains(&real_dir) {
            seen.push(real_dir);
            out.push(nvcc);
        }
    }
    out
}

/// The toolkit root of an nvcc binary: the parent of its `bin` folder.
pub(super) fn root_of_nvcc(nvcc: &Path) -> Option<PathBuf> {
    nvcc.parent()?.parent().map(Path::to_path_buf)
}

/// Gathers every candidate, recording each look in `trace` and a line per place in `looked`.
pub(super) fn gather(
    host: &dyn Host,
    site_packages: &[SitePackages],
    trace: &mut Trace,
    looked: &mut Vec<String>,
) -> Vec<Candidate> {
    let os = host.platform().os;
    let mut out = Vec::new();

    looked.push("nvcc on PATH".into());
    let nvccs = nvccs_on_path(host);
    if nvccs.is_empty() {
        trace.miss("nvcc on PATH", "no nvcc in any PATH folder");
    }
    for (i, nvcc) in nvccs.iter().enumerate() {
        trace.ok("nvcc on PATH", text(nvcc));
        if let Some(root) = root_of_nvcc(nvcc) {
            let alias = if i == 0 { "PATH" } else { "PATH (shadowed by an earlier nvcc)" };
            let kind = kind_of(&root);
            out.push(Candidate::new(root, Some(alias), kind));
        }
    }

    let mut vars = vec!["CUDA_HOME".to_owned(), "CUDA_PATH".to_owned(), "CUDA_ROOT".to_owned()];
    if os == OsFamily::Windows {
        vars.extend(host.env_vars().into_keys().filter(|k| k.starts_with("CUDA_PATH_V")));
    }
    for var in &vars {
        looked.push(format!("${var}"));
        match env_path(host, var) {
            Some(path) => {
                trace.ok(format!("env {var}"), text(&path));
                let kind = kind_of(&path);
                out.push(Candidate::new(path, Some(var), kind));
            }
            None => trace.miss(format!("env {var}"), "unset"),
        }
    }

    if os == OsFamily::Windows {
        gather_windows(host, trace, looked, &mut out);
    } else {
        gather_unix(host, trace, looked, &mut out);
    }
    gather_conda(host, trace, looked, &mut out);
    gather_pip(host, site_packages, trace, looked, &mut out);
    out
}

fn gather_windows(host: &dyn Host, trace: &mut Trace, looked: &mut Vec<String>, out: &mut Vec<Candidate>) {
    looked.push(format!("{WINDOWS_TOOLKITS}/v*"));
    let dir = Path::new(WINDOWS_TOOLKITS);
    let versions: Vec<String> = dir_names(host, dir).into_iter().filter(|n| n.starts_with('v')).collect();
    if versions.is_empty() {
        trace.miss(format!("list {WINDOWS_TOOLKITS}"), "no v* folders");
    }
    for name in versions {
        trace.ok(format!("list {WINDOWS_TOOLKITS}"), &name);
        out.push(Candidate::new(dir.join(&name), None, ToolkitKind::WindowsInstaller));
    }
}

fn gather_unix(host: &dyn Host, trace: &mut Trace, looked: &mut Vec<String>, out: &mut Vec<Candidate>) {
    looked.push("/usr/local/cuda".into());
    let usr_local_cuda = Path::new("/usr/local/cuda");
    match host.read_link(usr_local_cuda) {
        Ok(target) => trace.ok("read_link /usr/local/cuda", text(&target)),
        Err(e) => trace.miss("read_link /usr/local/cuda", e.to_string()),
    }
    if host.file_kind(usr_local_cuda).is_some() {
        out.push(Candidate::new(usr_local_cuda, Some("/usr/local/cuda"), ToolkitKind::Local));
    }

    looked.push("/usr/local/cuda-*".into());
    match host.list_dir(Path::new("/usr/local")) {
        Ok(entries) => {
            let found: Vec<_> = entries.into_iter().filter(|e| e.name.starts_with("cuda-")).collect();
            let detail = found.iter().map(|e| e.name.as_str()).collect::<Vec<_>>().join(", ");
            if found.is_empty() {
                trace.miss("list /usr/local", "no cuda-* folders");
            } else {
                trace.ok("list /usr/local", detail);
            }
            for e in found {
                let path = Path::new("/usr/local").join(&e.name);
                let alias = (e.kind == FileKind::Symlink).then(|| text(&path));
                out.push(Candidate::new(path, alias.as_deref(), ToolkitKind::Local));
            }
        }
        Err(e) => trace.miss("list /usr/local", e.to_string()),
    }

    for (path, label) in [("/opt/cuda", "/opt/cuda"), ("/usr/lib/cuda", "/usr/lib/cuda")] {
        looked.push(label.into());
        if host.file_kind(Path::new(path)).is_some() {
            trace.ok(format!("look at {path}"), "exists");
            out.push(Candidate::new(path, None, ToolkitKind::Distro));
        } else {
            trace.miss(format!("look at {path}"), "absent");
        }
    }
    looked.push("/usr/bin/nvcc".into());
    if is_file(host, Path::new("/usr/bin/nvcc")) {
        trace.ok("look at /usr/bin/nvcc", "exists");
        out.push(Candidate::new("/usr", None, ToolkitKind::Distro));
    } else {
        trace.miss("look at /usr/bin/nvcc", "absent");
    }
}

fn gather_conda(host: &dyn Host, trace: &mut Trace, looked: &mut Vec<String>, out: &mut Vec<Candidate>) {
    looked.push("$CONDA_PREFIX".into());
    let Some(prefix) = env_path(host, "CONDA_PREFIX") else {
        trace.miss("env CONDA_PREFIX", "unset");
        return;
    };
    trace.ok("env CONDA_PREFIX", text(&prefix));
    let root = if host.platform().os == OsFamily::Windows { prefix.join("Library") } else { prefix };
    out.push(Candidate::new(root, Some("CONDA_PREFIX"), ToolkitKind::Conda));
}

fn gather_pip(
    host: &dyn Host,
    site_packages: &[SitePackages],
    trace: &mut Trace,
    looked: &mut Vec<String>,
    out: &mut Vec<Candidate>,
) {
    if !site_packages.is_empty() {
        looked.push(format!(
            "nvidia/cuda_nvcc, nvidia/cuda_runtime, nvidia/cu13 in {} site-packages",
            site_packages.len()
        ));
    }
    const RUNTIME: &[&str] = &["nvidia-cuda-runtime", "nvidia-cuda-nvcc"];
    const NVCC: &[&str] = &["nvidia-cuda-nvcc", "nvidia-cuda-runtime"];
    for sp in site_packages {
        let nvidia = sp.path.join("nvidia");
        let folders = dir_names(host, &nvidia);
        let mut any = false;
        for (folder, packages, major) in
            [("cuda_runtime", RUNTIME, None), ("cuda_nvcc", NVCC, None), ("cu13", RUNTIME, Some(13))]
        {
            if !folders.iter().any(|f| f == folder) {
                continue;
            }
            any = true;
            let path = nvidia.join(folder);
            trace.ok(format!("look in {}", text(&nvidia)), format!("{folder} ({})", sp.env));
            let mut c = Candidate::new(path, Some(&format!("pip:{}", sp.env)), ToolkitKind::Pip);
            c.env = Some(sp.env.clone());
            c.packages = packages;
            c.pip_major = major;
            out.push(c);
        }
        if !any {
            trace.miss(format!("look in {}", text(&nvidia)), "no CUDA toolkit wheels");
        }
    }
}

/// Makes `Probed::Absent`'s reason from the places looked at.
pub(super) fn absent<T>(looked: &[String]) -> Probed<T> {
    Probed::absent(format!("no CUDA toolkit found; looked at {}", looked.join(", ")))
}
