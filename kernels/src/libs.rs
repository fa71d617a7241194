//! The worker's library search path, prepared from what the probes found.
//!
//! cudarc (built with CUDA 12.8 bindings) opens `libcublas.so`, then `libcublas.so.12`, `.11`, …;
//! it never asks for `.so.13`, and a bare `libcublas.so` elsewhere on the system could be an older
//! release. So the parent picks one cuBLAS and one NVRTC (the newest major the driver supports),
//! links them as `libcublas.so` and `libnvrtc.so` in a private folder, and puts that folder and the
//! picked libraries' folders (for `libcublasLt` and `libnvrtc-builtins`) first on the search path.
//!
//! Where every library found is of a CUDA major this machine cannot use (cuBLAS 13 under an R570
//! driver), the library is refused up front with the reason and what to install
//! (`LibraryPlan::refusals`, passed to the worker in `Wanted::refused_var`), rather than left to
//! the loader's default, which finds nothing or the unusable one (cuBLAS 13 then fails with
//! `CUBLAS_STATUS_NOT_INITIALIZED`).
//!
//! The loader reads that search path only when a process starts, so it is the worker's from its
//! start (`PreparedLibraries::worker_env`); a program that runs the worker's code in its own
//! process (the GPU test binary) runs itself again under the same variables (`reexec_command`).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use gpu_doctor_kb::Kb;
use gpu_doctor_model::{DriverVersion, Snapshot};

/// One library the worker may need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wanted {
    /// File name stem, e.g. `libcublas`.
    pub stem: &'static str,
    /// The name cudarc tries first, which the private folder provides.
    pub link_name: &'static str,
    /// Its name for people, e.g. `cuBLAS`.
    pub what: &'static str,
    /// NVIDIA's pip wheel of it for one CUDA major, without the major: `nvidia-cublas-cu` (12 →
    /// `nvidia-cublas-cu12`).
    pub wheel: &'static str,
    /// The variable that carries the reason it was refused (`LibraryPlan::refusals`) to the worker.
    pub refused_var: &'static str,
}

/// cuBLAS.
pub const CUBLAS: Wanted = Wanted {
    stem: "libcublas",
    link_name: "libcublas.so",
    what: "cuBLAS",
    wheel: "nvidia-cublas-cu",
    refused_var: "GPU_DOCTOR_REFUSED_LIBCUBLAS",
};

/// NVRTC, the runtime compiler of the FMA, latency and copy kernels.
pub const NVRTC: Wanted = Wanted {
    stem: "libnvrtc",
    link_name: "libnvrtc.so",
    what: "NVRTC",
    wheel: "nvidia-cuda-nvrtc-cu",
    refused_var: "GPU_DOCTOR_REFUSED_LIBNVRTC",
};

/// cuBLAS and NVRTC.
pub const WANTED: [Wanted; 2] = [CUBLAS, NVRTC];

/// Why the parent refused `wanted` for this worker (its `refused_var`); `None` when it did not.
pub fn refusal(wanted: &Wanted) -> Option<String> {
    std::env::var(wanted.refused_var).ok().filter(|r| !r.is_empty())
}

/// The newest CUDA major whose libraries serve the worker, and what sets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaLimit {
    /// The major, e.g. 12.
    pub major: u32,
    /// What sets it, e.g. `the driver 570.133.20 supports CUDA 12.8`.
    pub why: String,
    /// Where the driver sets it, the lowest driver that runs each newer major's libraries
    /// (`cuda.toml`'s family floors); empty where a newer driver would not help (the GPU's
    /// architecture sets the limit) or the table does not say.
    pub newer_drivers: Vec<DriverFloor>,
}

impl CudaLimit {
    /// A limit with nothing known beyond its major.
    pub fn major(major: u32) -> Self {
        Self { major, why: format!("CUDA {major} is the newest usable here"), newer_drivers: Vec::new() }
    }
}

/// The lowest driver that runs the libraries of one CUDA major.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverFloor {
    /// The CUDA major, e.g. 13.
    pub cuda_major: u32,
    /// The driver, e.g. `580.65.06`.
    pub driver: DriverVersion,
    /// Where that was read (`cuda.toml`'s row source).
    pub source: String,
}

/// A library the worker must not load, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Which library.
    pub wanted: Wanted,
    /// Why, and what to install instead; what the tests that need it fail with.
    pub reason: String,
}

/// The variable the loader searches for libraries: `LD_LIBRARY_PATH` (`PATH` on Windows).
pub const PATH_VAR: &str = if cfg!(windows) { "PATH" } else { "LD_LIBRARY_PATH" };

/// Set (to `1`) in a process that `reexec_command` started: it already runs under the worker's
/// variables and must not run itself again.
pub const PREPARED_VAR: &str = "GPU_DOCTOR_WORKER_ENV";

/// Whether this process runs under the worker's variables because `reexec_command` started it.
pub fn in_worker_env() -> bool {
    std::env::var_os(PREPARED_VAR).is_some()
}

/// A library file found in a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The folder.
    pub dir: PathBuf,
    /// The file name, e.g. `libcublas.so.12`.
    pub file: String,
    /// Its major version from the name.
    pub major: u32,
}

/// The major version in `stem.so.N` (exactly one number, the soname form).
pub fn soname_major(stem: &str, file: &str) -> Option<u32> {
    let rest = file.strip_prefix(stem)?.strip_prefix(".so.")?;
    rest.parse().ok()
}

/// Picks the library to use among `found`: the newest major within the limit (all of them when
/// no limit is known), the first found among equals.
pub fn choose(found: &[Found], limit: Option<u32>) -> Option<&Found> {
    let allowed = |f: &&Found| limit.is_none_or(|d| f.major <= d);
    let best = found.iter().filter(allowed).map(|f| f.major).max()?;
    found.iter().find(|f| f.major == best)
}

/// What the worker is started with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LibraryPlan {
    /// (link name, target) pairs for the private folder.
    pub links: Vec<(String, PathBuf)>,
    /// Folders to put first on the search path, in order (after the private folder).
    pub dirs: Vec<PathBuf>,
    /// What was picked and why, for the run's record.
    pub notes: Vec<String>,
    /// Libraries found only in majors newer than `limit` allows: not loaded at all, the tests
    /// that need them fail with the reason.
    pub refusals: Vec<Refusal>,
}

/// Works out the links and folders from `(folder, file names)` listings, within `limit` (the
/// newest usable CUDA major and why; `None`: unknown, anything found may serve).
pub fn plan(listings: &[(PathBuf, Vec<String>)], limit: Option<&CudaLimit>) -> LibraryPlan {
    let mut out = LibraryPlan::default();
    for wanted in WANTED {
        let found: Vec<Found> = listings
            .iter()
            .flat_map(|(dir, files)| {
                files.iter().filter_map(|file| {
                    soname_major(wanted.stem, file).map(|major| Found { dir: dir.clone(), file: file.clone(), major })
                })
            })
            .collect();
        match choose(&found, limit.map(|l| l.major)) {
            Some(f) => {
                out.links.push((wanted.link_name.to_owned(), f.dir.join(&f.file)));
                if !out.dirs.contains(&f.dir) {
                    out.dirs.push(f.dir.clone());
                }
                out.notes.push(format!("{} → {}", wanted.link_name, f.dir.join(&f.file).display()));
            }
            None if found.is_empty() => {
                out.notes.push(format!(
                    "no {}.so.N in the toolkits or pip wheels found; the loader's default applies",
                    wanted.stem
                ));
            }
            None => {
                // Only reached with a limit: without one every library found is allowed.
                let Some(limit) = limit else { continue };
                let reason = refusal_reason(&wanted, &found, limit);
                out.notes.push(reason.clone());
                out.refusals.push(Refusal { wanted, reason });
            }
        }
    }
    out
}

/// Why `wanted` is refused when every one `found` is newer than `limit`, and what to install.
fn refusal_reason(wanted: &Wanted, found: &[Found], limit: &CudaLimit) -> String {
    let Wanted { what, stem, wheel, .. } = *wanted;
    let oldest = found.iter().map(|f| f.major).min().unwrap_or(limit.major + 1);
    let files: Vec<String> = found.iter().map(|f| f.dir.join(&f.file).display().to_string()).collect();
    let usable = limit.major;
    let mut reason = format!(
        "{what} not loaded: every {stem} found is CUDA {oldest} or newer ({}), and {}",
        files.join(", "),
        limit.why
    );
    let floor = limit.newer_drivers.iter().find(|f| f.cuda_major == oldest);
    if let Some(f) = floor {
        reason.push_str(&format!(
            "; {what} {oldest} needs a driver of the R{} branch or newer ({} or newer; {})",
            f.driver.major(),
            f.driver,
            f.source
        ));
    }
    reason.push_str(&format!(". Install {what} {usable}: `pip install {wheel}{usable}`, or a CUDA {usable} toolkit"));
    if let Some(f) = floor {
        reason.push_str(&format!("; or update the driver to {} or newer", f.driver));
    }
    reason
}

/// Folders that may hold CUDA libraries: every toolkit's library folders and every `nvidia/*/lib`
/// in every Python environment's site-packages (pip wheels of CUDA 12 and 13).
pub fn candidate_dirs(snapshot: &Snapshot) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut push = |d: PathBuf| {
        if !dirs.contains(&d) {
            dirs.push(d);
        }
    };
    if let Some(t) = snapshot.toolkits.value() {
        for install in &t.installs {
            for d in &install.lib_dirs {
                push(PathBuf::from(d));
            }
        }
    }
    if let Some(envs) = snapshot.python_envs.value() {
        for env in envs {
            for sp in &env.site_packages {
                wheel_lib_dirs(Path::new(sp)).into_iter().for_each(&mut push);
            }
        }
    }
    dirs
}

/// The library folders of NVIDIA's pip wheels under one site-packages folder (or `pip install
/// --target` folder): every `nvidia/*/lib`, e.g. `nvidia/cublas/lib` (CUDA 12) or `nvidia/cu13/lib`.
pub fn wheel_lib_dirs(site_packages: &Path) -> Vec<PathBuf> {
    let nvidia = site_packages.join("nvidia");
    list(&nvidia).into_iter().map(|name| nvidia.join(name).join("lib")).filter(|lib| lib.is_dir()).collect()
}

fn list(dir: &Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut names: Vec<String> = rd.filter_map(|e| e.ok()?.file_name().into_string().ok()).collect();
    names.sort();
    names
}

/// The CUDA major the snapshot's driver supports, reported by the driver or looked up from its
/// version by the driver probe; `None` when neither is known.
pub fn driver_cuda_major(snapshot: &Snapshot) -> Option<u32> {
    snapshot.driver.value().and_then(|d| d.cuda_version).map(|v| v.major)
}

/// The newest CUDA major whose libraries serve GPU `gpu`: the driver's (`driver_cuda_major`), and
/// no newer than the last toolkit that builds for the GPU's compute capability (`gpus.toml`'s
/// `last_toolkit`): CUDA 13 dropped Maxwell, Pascal and Volta, so a V100 on an R580 driver (CUDA 13)
/// needs cuBLAS and NVRTC 12, whose NVRTC 13 cannot compile for `sm_70`. `None` when neither is known.
pub fn usable_cuda_major(snapshot: &Snapshot, kb: Option<&Kb>, gpu: u32) -> Option<u32> {
    usable_cuda(snapshot, kb, gpu).map(|l| l.major)
}

/// `usable_cuda_major` with what sets it. Where the driver does (an R570 driver supports CUDA
/// 12.x, an R580 one 13.x: NVIDIA's "Supported Drivers and CUDA Toolkit Versions",
/// https://docs.nvidia.com/datacenter/tesla/drivers/supported-drivers-and-cuda-toolkit-versions.html),
/// the lowest driver for each newer major comes from `cuda.toml`'s family floors (13: 580.65.06).
pub fn usable_cuda(snapshot: &Snapshot, kb: Option<&Kb>, gpu: u32) -> Option<CudaLimit> {
    let cc = crate::facts::probed_gpu(snapshot, gpu).and_then(|g| g.compute_capability);
    let by_gpu = kb.zip(cc).and_then(|(kb, cc)| Some((kb.gpus.row(cc)?.last_toolkit?.major, cc))).map(|(l, cc)| {
        CudaLimit {
            major: l,
            why: format!(
                "CUDA {l} is the last that builds for this GPU's compute capability {cc} (gpus.toml: CUDA {} dropped it)",
                l + 1
            ),
            newer_drivers: Vec::new(),
        }
    });
    let by_driver = snapshot.driver.value().and_then(|d| Some((d, d.cuda_version?))).map(|(d, cuda)| {
        let os = snapshot.platform.platform.os;
        let newer_drivers = kb
            .map(|kb| {
                kb.cuda
                    .family
                    .iter()
                    .filter(|f| f.major > cuda.major)
                    .filter_map(|f| {
                        let driver = kb.cuda.floor(f.major, os)?.clone();
                        Some(DriverFloor { cuda_major: f.major, driver, source: f.source.clone() })
                    })
                    .collect()
            })
            .unwrap_or_default();
        let derived = if d.cuda_version_derived { " (looked up from its version)" } else { "" };
        CudaLimit {
            major: cuda.major,
            why: format!("the driver {} supports CUDA {cuda}{derived}", d.version),
            newer_drivers,
        }
    });
    match (by_driver, by_gpu) {
        // Where both set the same major, a newer driver would not help: the GPU's limit is the reason.
        (Some(d), Some(g)) => Some(if g.major <= d.major { g } else { d }),
        (d, g) => d.or(g),
    }
}

/// A private folder of library links, removed on drop.
#[derive(Debug)]
pub struct PreparedLibraries {
    /// The private folder, when one was made.
    pub link_dir: Option<PathBuf>,
    /// The plan it came from.
    pub plan: LibraryPlan,
}

impl PreparedLibraries {
    /// Lists the candidate folders, plans for GPU `gpu` (`usable_cuda`), and makes the
    /// private folder of links (Unix only).
    pub fn prepare(snapshot: Option<&Snapshot>, gpu: u32) -> Self {
        let dirs = snapshot.map(candidate_dirs).unwrap_or_default();
        let limit = snapshot.and_then(|s| usable_cuda(s, Kb::get().ok(), gpu));
        Self::from_dirs(dirs, limit.as_ref())
    }

    /// Lists `dirs` (the candidate folders), plans within `limit`, and makes the private folder of links.
    pub fn from_dirs(dirs: Vec<PathBuf>, limit: Option<&CudaLimit>) -> Self {
        let listings: Vec<(PathBuf, Vec<String>)> = dirs.into_iter().map(|d| (d.clone(), list(&d))).collect();
        let mut plan = plan(&listings, limit);
        let link_dir = if plan.links.is_empty() { None } else { make_links(&plan.links, &mut plan.notes) };
        Self { link_dir, plan }
    }

    /// The search path for the worker: the private folder, the picked folders, then `existing`.
    pub fn search_path(&self, existing: Option<&OsStr>) -> Option<OsString> {
        let mut parts: Vec<PathBuf> = self.link_dir.iter().cloned().collect();
        parts.extend(self.plan.dirs.iter().cloned());
        if let Some(e) = existing {
            parts.extend(std::env::split_paths(e));
        }
        if parts.is_empty() {
            return None;
        }
        std::env::join_paths(parts).ok()
    }

    /// The variables the worker runs under, set by the runner (`gpu-doctor bench`) and by
    /// `reexec_command` alike: `CUDA_DEVICE_ORDER=PCI_BUS_ID`, so that CUDA counts GPUs as NVML
    /// does, `PATH_VAR` set to `search_path` with `existing` (its value in this process) last,
    /// and each refused library's `refused_var` set to the reason (`refusal` in the worker).
    pub fn worker_env(&self, existing: Option<&OsStr>) -> Vec<(OsString, OsString)> {
        let mut env: Vec<(OsString, OsString)> = vec![("CUDA_DEVICE_ORDER".into(), "PCI_BUS_ID".into())];
        if let Some(path) = self.search_path(existing) {
            env.push((PATH_VAR.into(), path));
        }
        for r in &self.plan.refusals {
            env.push((r.wanted.refused_var.into(), r.reason.clone().into()));
        }
        env
    }

    /// The variables a program that runs the worker's code in its own process (the GPU test
    /// binary) runs itself again under: `worker_env`, and `PREPARED_VAR` so that it does not
    /// run itself once more.
    pub fn reexec_env(&self, existing: Option<&OsStr>) -> Vec<(OsString, OsString)> {
        let mut env = self.worker_env(existing);
        env.push((PREPARED_VAR.into(), "1".into()));
        env
    }

    /// This program (`current_exe`) with `args`, under `reexec_env` (with this process's
    /// `PATH_VAR` last on the search path). The caller waits for it and keeps `self` (its folder of
    /// links) alive until it ended.
    pub fn reexec_command(&self, args: impl IntoIterator<Item = OsString>) -> std::io::Result<Command> {
        let mut cmd = Command::new(std::env::current_exe()?);
        cmd.args(args).envs(self.reexec_env(std::env::var_os(PATH_VAR).as_deref()));
        Ok(cmd)
    }
}

impl Drop for PreparedLibraries {
    fn drop(&mut self) {
        if let Some(dir) = &self.link_dir {
            // Only links the parent made live here; a leftover folder in the temp dir is harmless.
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

#[cfg(unix)]
fn make_links(links: &[(String, PathBuf)], notes: &mut Vec<String>) -> Option<PathBuf> {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let dir = std::env::temp_dir().join(format!("gpu-doctor-libs-{}-{nanos}", std::process::id()));
    if let Err(e) = std::fs::create_dir(&dir) {
        notes.push(format!("could not make {}: {e}; the loader's default applies", dir.display()));
        return None;
    }
    for (name, target) in links {
        if let Err(e) = std::os::unix::fs::symlink(target, dir.join(name)) {
            notes.push(format!("could not link {name} to {}: {e}", target.display()));
        }
    }
    Some(dir)
}

#[cfg(not(unix))]
fn make_links(_: &[(String, PathBuf)], notes: &mut Vec<String>) -> Option<PathBuf> {
    notes.push("library links are made on Unix only; the picked folders go on PATH".to_owned());
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn listing(dir: &str, files: &[&str]) -> (PathBuf, Vec<String>) {
        (PathBuf::from(dir), files.iter().map(|f| (*f).to_owned()).collect())
    }

    #[test]
    fn sonames_parse() {
        assert_eq!(soname_major("libcublas", "libcublas.so.12"), Some(12));
        assert_eq!(soname_major("libcublas", "libcublas.so.13"), Some(13));
        assert_eq!(soname_major("libcublas", "libcublas.so.12.8.4.1"), None);
        assert_eq!(soname_major("libcublas", "libcublasLt.so.12"), None);
        assert_eq!(soname_major("libcublas", "libcublas.so"), None);
        assert_eq!(soname_major("libnvrtc", "libnvrtc-builtins.so.12.8"), None);
    }

    #[test]
    fn cuda_13_is_linked_when_the_driver_supports_it() {
        let listings = vec![
            listing("/usr/local/cuda-12.8/lib64", &["libcublas.so.12", "libcublasLt.so.12", "libnvrtc.so.12"]),
            listing("/env/site-packages/nvidia/cu13/lib", &["libcublas.so.13", "libnvrtc.so.13"]),
        ];
        let p = plan(&listings, Some(&CudaLimit::major(13)));
        assert_eq!(
            p.links,
            [
                ("libcublas.so".to_owned(), PathBuf::from("/env/site-packages/nvidia/cu13/lib/libcublas.so.13")),
                ("libnvrtc.so".to_owned(), PathBuf::from("/env/site-packages/nvidia/cu13/lib/libnvrtc.so.13")),
            ]
        );
        assert_eq!(p.dirs, [PathBuf::from("/env/site-packages/nvidia/cu13/lib")]);

        let old_driver = plan(&listings, Some(&CudaLimit::major(12)));
        assert_eq!(old_driver.links[0].1, PathBuf::from("/usr/local/cuda-12.8/lib64/libcublas.so.12"));
        let unknown = plan(&listings, None);
        assert!(unknown.links[0].1.ends_with("libcublas.so.13"));
    }

    /// A driver found only through `/proc/driver/nvidia/version` (no NVML, no nvidia-smi) reports no
    /// CUDA level; the driver probe looks it up, so a CUDA 13 wheel is not picked for a 535 driver.
    #[test]
    fn a_driver_found_through_proc_limits_the_libraries() {
        use gpu_doctor_model::{OsFamily, Platform};
        use gpu_doctor_probes::host::{Fixture, Host, NvmlAnswer, ReplayHost};
        use gpu_doctor_probes::probe::driver::{SmiXml, probe};
        let mut f = Fixture::new(Platform { os: OsFamily::Linux, arch: "x86_64".into() });
        let line = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.86.05  Fri Jul 14 2023\n";
        f.files.insert("/proc/driver/nvidia/version".into(), line.into());
        f.nvml = NvmlAnswer::Error("libnvidia-ml.so.1: cannot open shared object file".into());
        let host = ReplayHost::new(f);
        let mut snap = Snapshot::unknown(Vec::new());
        snap.driver = probe(&host, &host.nvml(), &SmiXml::default(), &mut gpu_doctor_model::Trace::new("driver"));
        assert_eq!(driver_cuda_major(&snap), Some(12));
        let listings = vec![
            listing("/usr/local/cuda-12.8/lib64", &["libcublas.so.12", "libnvrtc.so.12"]),
            listing("/env/site-packages/nvidia/cu13/lib", &["libcublas.so.13", "libnvrtc.so.13"]),
        ];
        let p = plan(&listings, usable_cuda(&snap, None, 0).as_ref());
        assert_eq!(p.links[0].1, PathBuf::from("/usr/local/cuda-12.8/lib64/libcublas.so.12"));
    }

    /// A V100 (7.0) on an R580 driver (CUDA 13.0): CUDA 13's libraries do not serve Volta, so
    /// cuBLAS and NVRTC 12 are linked; an RTX 4090 (8.9) on the same driver gets 13.
    #[test]
    fn a_gpu_cuda_13_dropped_gets_cuda_12_libraries_on_a_cuda_13_driver() {
        use gpu_doctor_model::{ComputeCapability, Probed};
        use gpu_doctor_model::{DriverFacts, Gpu};
        let kb = Kb::get().unwrap();
        let mut snap = Snapshot::unknown(Vec::new());
        let facts = DriverFacts::reported("580.65.06".parse().unwrap(), Some("13.0".parse().unwrap()), None);
        snap.driver = Probed::found(facts, "test");
        let gpu = |index, major, minor| Gpu {
            index,
            compute_capability: Some(ComputeCapability { major, minor }),
            ..Gpu::default()
        };
        snap.gpus = Probed::found(vec![gpu(0, 7, 0), gpu(1, 8, 9)], "test");
        assert_eq!(usable_cuda_major(&snap, Some(kb), 0), Some(12));
        assert_eq!(usable_cuda_major(&snap, Some(kb), 1), Some(13));
        assert_eq!(usable_cuda_major(&snap, None, 0), Some(13), "without the table only the driver limits");
        let listings = vec![
            listing("/usr/local/cuda-12.8/lib64", &["libcublas.so.12", "libnvrtc.so.12"]),
            listing("/env/site-packages/nvidia/cu13/lib", &["libcublas.so.13", "libnvrtc.so.13"]),
        ];
        let p = plan(&listings, usable_cuda(&snap, Some(kb), 0).as_ref());
        assert_eq!(p.links[1].1, PathBuf::from("/usr/local/cuda-12.8/lib64/libnvrtc.so.12"));
    }

    #[test]
    fn pip_wheels_of_cuda_12_keep_libraries_in_separate_folders() {
        let listings = vec![
            listing("/sp/nvidia/cublas/lib", &["libcublas.so.12", "libcublasLt.so.12", "libnvblas.so.12"]),
            listing("/sp/nvidia/cuda_nvrtc/lib", &["libnvrtc-builtins.so.12.4", "libnvrtc.so.12"]),
        ];
        let p = plan(&listings, Some(&CudaLimit::major(12)));
        assert_eq!(p.dirs, [PathBuf::from("/sp/nvidia/cublas/lib"), PathBuf::from("/sp/nvidia/cuda_nvrtc/lib")]);
    }

    #[test]
    fn nothing_found_leaves_the_default() {
        let p = plan(&[], Some(&CudaLimit::major(12)));
        assert!(p.links.is_empty() && p.dirs.is_empty() && p.refusals.is_empty());
        assert!(p.notes.iter().all(|n| n.contains("the loader's default applies")));
    }

    /// An R570 driver (CUDA 12.8; NVIDIA: "This driver branch supports CUDA 12.x") on an H100 with
    /// only CUDA 13 wheels (`nvidia/cu13/lib`): cuBLAS 13 would fail with NOT_INITIALIZED, so
    /// neither library is loaded; each is refused with the reason and what to install, which the
    /// worker's environment carries to the tests that need them.
    #[test]
    fn only_cuda_13_libraries_under_an_r570_driver_are_refused_with_the_reason() {
        use gpu_doctor_model::{ComputeCapability, Probed};
        use gpu_doctor_model::{DriverFacts, Gpu};
        let kb = Kb::get().unwrap();
        let mut snap = Snapshot::unknown(Vec::new());
        let facts = DriverFacts::reported("570.133.20".parse().unwrap(), Some("12.8".parse().unwrap()), None);
        snap.driver = Probed::found(facts, "test");
        let h100 = Gpu { compute_capability: Some(ComputeCapability { major: 9, minor: 0 }), ..Gpu::default() };
        snap.gpus = Probed::found(vec![h100], "test");
        let limit = usable_cuda(&snap, Some(kb), 0).unwrap();
        assert_eq!(limit.major, 12);
        let cu13 = "/venv/lib/python3.12/site-packages/nvidia/cu13/lib";
        let p = plan(&[listing(cu13, &["libcublas.so.13", "libcublasLt.so.13", "libnvrtc.so.13"])], Some(&limit));
        assert!(p.links.is_empty() && p.dirs.is_empty(), "{p:?}");
        assert_eq!(p.refusals.iter().map(|r| r.wanted).collect::<Vec<_>>(), [CUBLAS, NVRTC]);
        let cublas = p.refusals[0].reason.clone();
        assert_eq!(
            cublas,
            format!(
                "cuBLAS not loaded: every libcublas found is CUDA 13 or newer ({cu13}/libcublas.so.13), and the \
                 driver 570.133.20 supports CUDA 12.8; cuBLAS 13 needs a driver of the R580 branch or newer \
                 (580.65.06 or newer; {}). Install cuBLAS 12: `pip install nvidia-cublas-cu12`, or a CUDA 12 \
                 toolkit; or update the driver to 580.65.06 or newer",
                kb.cuda.family(13).unwrap().source
            )
        );
        assert!(p.refusals[1].reason.contains("`pip install nvidia-cuda-nvrtc-cu12`"), "{:?}", p.refusals[1]);
        assert!(p.notes.contains(&cublas), "the run's record says it too: {:?}", p.notes);
        let prepared = PreparedLibraries { link_dir: None, plan: p };
        let env = prepared.worker_env(None);
        assert!(env.contains(&(CUBLAS.refused_var.into(), cublas.into())), "{env:?}");
        assert!(env.iter().any(|(k, _)| k == NVRTC.refused_var), "{env:?}");

        // A V100 (7.0) under the same driver: a newer driver would not help, CUDA 12 libraries would.
        let v100 = Gpu { compute_capability: Some(ComputeCapability { major: 7, minor: 0 }), ..Gpu::default() };
        snap.gpus = Probed::found(vec![v100], "test");
        let limit = usable_cuda(&snap, Some(kb), 0).unwrap();
        let p = plan(&[listing(cu13, &["libcublas.so.13"])], Some(&limit));
        let reason = &p.refusals[0].reason;
        assert!(reason.contains("CUDA 12 is the last that builds for this GPU's compute capability 7.0"), "{reason}");
        assert!(reason.ends_with("`pip install nvidia-cublas-cu12`, or a CUDA 12 toolkit"), "{reason}");
    }

    const REFUSED_CHILD_TEST: &str = "libs::tests::child_fails_cublas_and_nvrtc_with_the_refusal";

    /// Runs only as the child of the test below (it returns at once otherwise): the worker's
    /// library checks answer the refusal from the environment, before trying to load anything.
    #[test]
    fn child_fails_cublas_and_nvrtc_with_the_refusal() {
        if !in_worker_env() {
            return;
        }
        let cublas = crate::gpu::cublas_library().unwrap_err();
        assert_eq!(cublas.kind, gpu_doctor_model::bench::protocol::FailureKind::MissingLibrary);
        assert_eq!(cublas.reason, "cuBLAS not loaded: refused for the test");
        let nvrtc = crate::gpu::nvrtc_library().unwrap_err();
        assert_eq!(nvrtc.reason, "NVRTC not loaded: refused for the test");
    }

    /// A refused library's tests fail with the parent's reason, in a process started under the
    /// worker's variables (as `bench-worker` and the re-executed GPU test binary are).
    #[cfg(unix)]
    #[test]
    fn the_worker_fails_a_refused_library_with_the_reason() {
        let refusal =
            |wanted: Wanted| Refusal { wanted, reason: format!("{} not loaded: refused for the test", wanted.what) };
        let plan = LibraryPlan { refusals: vec![refusal(CUBLAS), refusal(NVRTC)], ..LibraryPlan::default() };
        let prepared = PreparedLibraries { link_dir: None, plan };
        let args = ["--exact", REFUSED_CHILD_TEST, "--test-threads=1", "--nocapture", "-q"].map(OsString::from);
        let out = prepared.reexec_command(args).unwrap().output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
        assert!(text.contains("1 passed"), "the child ran: {text}");
    }

    /// The variables the runner starts `bench-worker` with, and the ones the GPU test binary runs
    /// itself again under: the same, plus the marker that stops a second re-run.
    #[cfg(unix)]
    #[test]
    fn the_worker_and_a_reexecuted_test_binary_get_the_same_variables() {
        let prepared = PreparedLibraries {
            link_dir: Some(PathBuf::from("/tmp/gpu-doctor-libs-1")),
            plan: LibraryPlan {
                links: vec![("libcublas.so".into(), PathBuf::from("/sp/nvidia/cu13/lib/libcublas.so.13"))],
                dirs: vec![PathBuf::from("/sp/nvidia/cu13/lib")],
                ..LibraryPlan::default()
            },
        };
        let existing = OsStr::new("/opt/x");
        let worker = prepared.worker_env(Some(existing));
        let var =
            |env: &[(OsString, OsString)], name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        assert_eq!(var(&worker, "CUDA_DEVICE_ORDER"), Some("PCI_BUS_ID".into()));
        assert_eq!(var(&worker, "LD_LIBRARY_PATH"), Some("/tmp/gpu-doctor-libs-1:/sp/nvidia/cu13/lib:/opt/x".into()));
        assert_eq!(var(&worker, PREPARED_VAR), None);
        let reexec = prepared.reexec_env(Some(existing));
        assert_eq!(reexec[..worker.len()], worker[..]);
        assert_eq!(reexec[worker.len()..], [(OsString::from(PREPARED_VAR), OsString::from("1"))]);
        std::mem::forget(prepared); // nothing to remove
        // Nothing found: the loader's default, and only the device order is set.
        let bare = PreparedLibraries { link_dir: None, plan: LibraryPlan::default() };
        assert_eq!(bare.worker_env(None), [(OsString::from("CUDA_DEVICE_ORDER"), OsString::from("PCI_BUS_ID"))]);
    }

    const REEXEC_TEST: &str = "libs::tests::a_reexecuted_process_finds_the_linked_libraries_first";

    /// Run for real: this test runs itself again through `reexec_command` from fake CUDA 12 pip
    /// wheels; the re-run process (`in_worker_env`) finds `libcublas.so` in the first folder of
    /// its search path, linked to the picked file, as the worker would.
    #[cfg(unix)]
    #[test]
    fn a_reexecuted_process_finds_the_linked_libraries_first() {
        if in_worker_env() {
            let path = std::env::var_os(PATH_VAR).unwrap();
            let first = std::env::split_paths(&path).next().unwrap();
            let target = std::fs::read_link(first.join("libcublas.so")).unwrap();
            assert!(target.ends_with("nvidia/cublas/lib/libcublas.so.12"), "{}", target.display());
            assert!(std::fs::metadata(first.join("libnvrtc.so")).is_ok(), "{}", first.display());
            return;
        }
        let sp = tempfile::tempdir().unwrap();
        for (dir, file) in [("cublas", "libcublas.so.12"), ("cuda_nvrtc", "libnvrtc.so.12")] {
            let lib = sp.path().join("nvidia").join(dir).join("lib");
            std::fs::create_dir_all(&lib).unwrap();
            std::fs::write(lib.join(file), b"").unwrap();
        }
        let prepared = PreparedLibraries::from_dirs(wheel_lib_dirs(sp.path()), Some(&CudaLimit::major(12)));
        assert_eq!(prepared.plan.links.len(), 2, "{:?}", prepared.plan);
        let args = ["--exact", REEXEC_TEST, "--test-threads=1", "--nocapture", "-q"].map(OsString::from);
        let out = prepared.reexec_command(args).unwrap().output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
        assert!(text.contains("1 passed"), "the re-run process ran the test: {text}");
    }

    #[cfg(unix)]
    #[test]
    fn search_path_order() {
        let prepared = PreparedLibraries {
            link_dir: Some(PathBuf::from("/tmp/links")),
            plan: LibraryPlan { dirs: vec![PathBuf::from("/a")], ..LibraryPlan::default() },
        };
        let path = prepared.search_path(Some(OsStr::new("/b:/c"))).unwrap();
        assert_eq!(path, OsString::from("/tmp/links:/a:/b:/c"));
        std::mem::forget(prepared); // nothing to remove
        let empty = PreparedLibraries { link_dir: None, plan: LibraryPlan::default() };
        assert_eq!(empty.search_path(None), None);
    }
}
