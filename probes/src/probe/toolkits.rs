//! CUDA toolkits: every install on the machine, which one each name (PATH, `CUDA_HOME`,
//! `LD_LIBRARY_PATH`, `/usr/local/cuda`) picks, and the CUDA libraries in the loader cache.
//!
//! Looks at nvcc on PATH, `CUDA_HOME`/`CUDA_PATH`/`CUDA_ROOT` (and `CUDA_PATH_V*` on Windows),
//! `/usr/local/cuda`, `/usr/local/cuda-*`, `/opt/cuda`, `/usr/lib/cuda`, `/usr/bin/nvcc`, the Windows
//! installer folder, `$CONDA_PREFIX` and the `nvidia/` pip wheels in each site-packages. Folders that
//! resolve to the same real path are one install, listed with every name that points to it.

mod candidates;
pub(super) mod fs;
mod inspect;
mod version_files;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::time::Duration;

use self::candidates::{gather, nvccs_on_path, root_of_nvcc};
use self::fs::{env_path, real_path, text};
use self::inspect::{Group, inspect, is_cudart};
use super::SitePackages;
use crate::host::{self, Cmd, Host, dir_names};
use gpu_doctor_model::LoaderEntry;
use gpu_doctor_model::{OsFamily, Pick, ToolkitInstall, ToolkitKind, ToolkitPicks, Toolkits};
use gpu_doctor_model::{Probed, Trace};

/// The kind of install a toolkit folder is by where it is (`/usr/local/cuda-12.4`: NVIDIA's packages;
/// `/usr/lib/nvidia-cuda-toolkit`: a distribution's), for folders named in pasted text.
pub(crate) fn kind_of_root(root: &str) -> ToolkitKind {
    candidates::kind_of(Path::new(root))
}

/// How long `ldconfig -p` may take.
pub const LDCONFIG_TIMEOUT: Duration = Duration::from_secs(5);

/// Library name prefixes kept from the loader cache.
const CUDA_LIBRARIES: &[&str] =
    &["libcuda.so", "libcudart", "libcublas", "libcudnn", "libnvrtc", "libnvidia-ml", "libnccl"];

/// Finds CUDA toolkits.
pub fn probe(
    host: &dyn Host,
    site_packages: &[SitePackages],
    loader: &LoaderCache,
    trace: &mut Trace,
) -> Probed<Toolkits> {
    let os = host.platform().os;
    if os == OsFamily::Macos {
        trace.miss("platform", "macOS");
        return Probed::Unsupported { reason: "CUDA toolkits do not support macOS since CUDA 10.2".into() };
    }
    let mut looked = Vec::new();
    let found = gather(host, site_packages, trace, &mut looked);
    let mut groups: Vec<Group> = Vec::new();
    for c in found {
        let root = real_path(host, &c.path);
        let i = match groups.iter().position(|g| g.root == root) {
            Some(i) => i,
            None => {
                groups.push(Group {
                    root,
                    kind: ToolkitKind::Other,
                    aliases: Vec::new(),
                    env: None,
                    packages: &[],
                    pip_major: None,
                });
                groups.len() - 1
            }
        };
        let g = &mut groups[i];
        if g.kind == ToolkitKind::Other {
            g.kind = c.kind;
        }
        if let Some(alias) = c.alias
            && !g.aliases.contains(&alias)
        {
            g.aliases.push(alias);
        }
        g.env = g.env.take().or(c.env);
        if g.packages.is_empty() {
            g.packages = c.packages;
            g.pip_major = c.pip_major;
        }
    }
    let installs: Vec<ToolkitInstall> = groups.iter().filter_map(|g| inspect(host, g, trace)).collect();
    let mut toolkits = Toolkits { installs, ..Toolkits::default() };
    toolkits.picks = picks(host, &toolkits.installs, trace);
    if let Some(lib) = toolkits.picks.ld_library_path.as_ref().and_then(|p| p.install_root.clone())
        && let Some(install) = toolkits.installs.iter_mut().find(|i| i.root == lib)
        && !install.aliases.iter().any(|a| a == "LD_LIBRARY_PATH")
    {
        install.aliases.push("LD_LIBRARY_PATH".into());
    }
    if let Some(libraries) = loader.get(host, trace) {
        toolkits.loader_libraries = libraries.to_vec();
        toolkits.loader_cache_read = true;
    }
    if toolkits.installs.is_empty() {
        return candidates::absent(&looked);
    }
    Probed::found(toolkits, "filesystem")
}

/// The install whose root a folder resolves to: its root exactly, one of its library folders, or
/// (failing those) the install with the longest root above it.
fn owner(host: &dyn Host, installs: &[ToolkitInstall], path: &Path) -> Option<String> {
    let real = real_path(host, path);
    let exact = installs
        .iter()
        .find(|i| Path::new(&i.root) == real || i.lib_dirs.iter().any(|d| real_path(host, Path::new(d)) == real));
    exact
        .or_else(|| installs.iter().filter(|i| real.starts_with(&i.root)).max_by_key(|i| i.root.len()))
        .map(|i| i.root.clone())
}

fn picks(host: &dyn Host, installs: &[ToolkitInstall], trace: &mut Trace) -> ToolkitPicks {
    let mut picks = ToolkitPicks::default();
    if let Some(nvcc) = nvccs_on_path(host).into_iter().next() {
        let root = root_of_nvcc(&nvcc).and_then(|r| owner(host, installs, &r));
        picks.path = Some(Pick { named: text(&nvcc), install_root: root });
    }
    for (var, slot) in [("CUDA_HOME", &mut picks.cuda_home), ("CUDA_PATH", &mut picks.cuda_path)] {
        if let Some(path) = env_path(host, var) {
            let root = installs.iter().find(|i| Path::new(&i.root) == real_path(host, &path)).map(|i| i.root.clone());
            if root.is_none() {
                trace.error(format!("env {var}"), format!("{} is not a CUDA toolkit found here", text(&path)));
            }
            *slot = Some(Pick { named: text(&path), install_root: root });
        }
    }
    if host.platform().os == OsFamily::Windows {
        return picks;
    }
    if let Some(value) = host.env_var("LD_LIBRARY_PATH") {
        let found = value.split(':').filter(|d| !d.is_empty()).find_map(|dir| {
            let dir = PathBuf::from(dir);
            dir_names(host, &dir).into_iter().find(|n| is_cudart(n)).map(|n| (dir.join(n), dir))
        });
        match found {
            Some((lib, dir)) => {
                trace.ok("LD_LIBRARY_PATH libcudart", text(&lib));
                picks.ld_library_path = Some(Pick { named: text(&lib), install_root: owner(host, installs, &dir) });
            }
            None => trace.miss("LD_LIBRARY_PATH libcudart", "no folder holds libcudart.so*"),
        }
    }
    let usr_local_cuda = Path::new("/usr/local/cuda");
    if host.file_kind(usr_local_cuda).is_some() {
        let named = host.read_link(usr_local_cuda).map_or_else(|_| text(usr_local_cuda), |t| text(&t));
        let root =
            installs.iter().find(|i| Path::new(&i.root) == real_path(host, usr_local_cuda)).map(|i| i.root.clone());
        picks.usr_local_cuda = Some(Pick { named, install_root: root });
    }
    picks
}

/// The loader cache's CUDA entries, read (`ldconfig -p`) at most once per collection and shared
/// by the probes that need them (the toolkits, cuDNN). The collection reads it on a thread of its
/// own from the start ([`LoaderCache::read`]), so the child runs while the other probes work.
#[derive(Debug, Default)]
pub struct LoaderCache {
    read: std::sync::OnceLock<(Option<Vec<LoaderEntry>>, Trace)>,
    told: std::sync::atomic::AtomicBool,
}

impl LoaderCache {
    /// Reads the loader cache now, unless it was read; a [`LoaderCache::get`] meanwhile waits for it.
    pub fn read(&self, host: &dyn Host) {
        self.entries(host);
    }

    fn entries(&self, host: &dyn Host) -> &(Option<Vec<LoaderEntry>>, Trace) {
        self.read.get_or_init(|| {
            let mut trace = Trace::new("toolkits");
            (loader_libraries(host, &mut trace), trace)
        })
    }

    /// The entries (read now if no thread did); the first caller's trace gets the run. `None` as
    /// `loader_libraries`.
    pub fn get(&self, host: &dyn Host, trace: &mut Trace) -> Option<&[LoaderEntry]> {
        let (entries, run) = self.entries(host);
        if !self.told.swap(true, std::sync::atomic::Ordering::Relaxed) {
            trace.append(run.clone());
        }
        entries.as_deref()
    }
}

/// The CUDA-related entries of the loader cache (`ldconfig -p`); `None` on Windows and macOS, or when
/// ldconfig is missing or fails (recorded in `trace`).
pub fn loader_libraries(host: &dyn Host, trace: &mut Trace) -> Option<Vec<LoaderEntry>> {
    if matches!(host.platform().os, OsFamily::Windows | OsFamily::Macos) {
        return None;
    }
    let ldconfig = host::which(host, "ldconfig").or_else(|| {
        ["/sbin/ldconfig", "/usr/sbin/ldconfig"].iter().map(PathBuf::from).find(|p| host::is_file(host, p))
    });
    let Some(ldconfig) = ldconfig else {
        trace.miss("ldconfig -p", "no ldconfig on PATH, in /sbin or /usr/sbin");
        return None;
    };
    let cmd = Cmd::new([text(&ldconfig), "-p".into()]).timeout(LDCONFIG_TIMEOUT);
    let method = format!("run {}", cmd.display());
    let out = match host.run(&cmd) {
        Ok(out) if out.success() => out,
        Ok(out) => {
            trace.error(method, format!("exit {:?}: {}", out.status, out.stderr));
            return None;
        }
        Err(e) => {
            trace.error(method, e.to_string());
            return None;
        }
    };
    match crate::parse::ldconfig::parse(&out.stdout) {
        Ok(entries) => {
            let kept: Vec<LoaderEntry> =
                entries.into_iter().filter(|e| CUDA_LIBRARIES.iter().any(|p| e.name.starts_with(p))).collect();
            trace.ok(method, format!("{} CUDA libraries", kept.len()));
            Some(kept)
        }
        Err(e) => {
            trace.error(method, e.to_string());
            None
        }
    }
}
