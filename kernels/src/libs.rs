//! The worker's library search path, prepared from what the probes found.
//!
//! cudarc (built with CUDA 12.8 bindings) opens `libcublas.so`, then `libcublas.so.12`, `.11`, …;
//! it never asks for `.so.13`, and a bare `libcublas.so` elsewhere on the system could be an older
//! release. So the parent picks one cuBLAS and one NVRTC (the newest major the driver supports),
//! links them as `libcublas.so` and `libnvrtc.so` in a private folder, and puts that folder and the
//! picked libraries' folders (for `libcublasLt` and `libnvrtc-builtins`) first on the search path.
//!
//! The loader reads that search path only when a process starts, so it is the worker's from its
//! start (`PreparedLibraries::worker_env`); a program that runs the worker's code in its own
//! process (the GPU test binary) runs itself again under the same variables (`reexec_command`).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use gpu_doctor_probes::Snapshot;
use gpu_doctor_probes::compat::Kb;

/// One library the worker may need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wanted {
    /// File name stem, e.g. `libcublas`.
    pub stem: &'static str,
    /// The name cudarc tries first, which the private folder provides.
    pub link_name: &'static str,
}

/// cuBLAS and NVRTC.
pub const WANTED: [Wanted; 2] =
    [Wanted { stem: "libcublas", link_name: "libcublas.so" }, Wanted { stem: "libnvrtc", link_name: "libnvrtc.so" }];

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

/// Picks the library to use among `found`: the newest major the driver supports (all of them when
/// the driver's CUDA version is unknown), the first found among equals.
pub fn choose(found: &[Found], driver_cuda_major: Option<u32>) -> Option<&Found> {
    let allowed = |f: &&Found| driver_cuda_major.is_none_or(|d| f.major <= d);
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
}

/// Works out the links and folders from `(folder, file names)` listings.
pub fn plan(listings: &[(PathBuf, Vec<String>)], driver_cuda_major: Option<u32>) -> LibraryPlan {
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
        match choose(&found, driver_cuda_major) {
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
            None => out.notes.push(format!(
                "every {} found is newer than the driver supports (CUDA {}); the loader's default applies",
                wanted.stem,
                driver_cuda_major.map_or_else(|| "?".to_owned(), |m| m.to_string())
            )),
        }
    }
    out
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
    let driver = driver_cuda_major(snapshot);
    let cc = crate::facts::probed_gpu(snapshot, gpu).and_then(|g| g.compute_capability);
    let last = kb.zip(cc).and_then(|(kb, cc)| kb.gpus.row(cc)).and_then(|r| r.last_toolkit).map(|v| v.major);
    match (driver, last) {
        (Some(d), Some(l)) => Some(d.min(l)),
        (d, l) => d.or(l),
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
    /// Lists the candidate folders, plans for GPU `gpu` (`usable_cuda_major`), and makes the
    /// private folder of links (Unix only).
    pub fn prepare(snapshot: Option<&Snapshot>, gpu: u32) -> Self {
        let dirs = snapshot.map(candidate_dirs).unwrap_or_default();
        let major = snapshot.and_then(|s| usable_cuda_major(s, Kb::get().ok(), gpu));
        Self::from_dirs(dirs, major)
    }

    /// Lists `dirs` (the candidate folders), plans, and makes the private folder of links.
    pub fn from_dirs(dirs: Vec<PathBuf>, driver_major: Option<u32>) -> Self {
        let listings: Vec<(PathBuf, Vec<String>)> = dirs.into_iter().map(|d| (d.clone(), list(&d))).collect();
        let mut plan = plan(&listings, driver_major);
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
    /// does, and `PATH_VAR` set to `search_path` with `existing` (its value in this process) last.
    pub fn worker_env(&self, existing: Option<&OsStr>) -> Vec<(OsString, OsString)> {
        let mut env: Vec<(OsString, OsString)> = vec![("CUDA_DEVICE_ORDER".into(), "PCI_BUS_ID".into())];
        if let Some(path) = self.search_path(existing) {
            env.push((PATH_VAR.into(), path));
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
        let p = plan(&listings, Some(13));
        assert_eq!(
            p.links,
            [
                ("libcublas.so".to_owned(), PathBuf::from("/env/site-packages/nvidia/cu13/lib/libcublas.so.13")),
                ("libnvrtc.so".to_owned(), PathBuf::from("/env/site-packages/nvidia/cu13/lib/libnvrtc.so.13")),
            ]
        );
        assert_eq!(p.dirs, [PathBuf::from("/env/site-packages/nvidia/cu13/lib")]);

        let old_driver = plan(&listings, Some(12));
        assert_eq!(old_driver.links[0].1, PathBuf::from("/usr/local/cuda-12.8/lib64/libcublas.so.12"));
        let unknown = plan(&listings, None);
        assert!(unknown.links[0].1.ends_with("libcublas.so.13"));
    }

    /// A driver found only through `/proc/driver/nvidia/version` (no NVML, no nvidia-smi) reports no
    /// CUDA level; the driver probe looks it up, so a CUDA 13 wheel is not picked for a 535 driver.
    #[test]
    fn a_driver_found_through_proc_limits_the_libraries() {
        use gpu_doctor_probes::host::{Fixture, Host, NvmlAnswer, ReplayHost};
        use gpu_doctor_probes::model::{OsFamily, Platform};
        use gpu_doctor_probes::probe::driver::{SmiXml, probe};
        let mut f = Fixture::new(Platform { os: OsFamily::Linux, arch: "x86_64".into() });
        let line = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.86.05  Fri Jul 14 2023\n";
        f.files.insert("/proc/driver/nvidia/version".into(), line.into());
        f.nvml = NvmlAnswer::Error("libnvidia-ml.so.1: cannot open shared object file".into());
        let host = ReplayHost::new(f);
        let mut snap = Snapshot::unknown(Vec::new());
        snap.driver = probe(&host, &host.nvml(), &SmiXml::default(), &mut gpu_doctor_probes::Trace::new("driver"));
        assert_eq!(driver_cuda_major(&snap), Some(12));
        let listings = vec![
            listing("/usr/local/cuda-12.8/lib64", &["libcublas.so.12", "libnvrtc.so.12"]),
            listing("/env/site-packages/nvidia/cu13/lib", &["libcublas.so.13", "libnvrtc.so.13"]),
        ];
        let p = plan(&listings, driver_cuda_major(&snap));
        assert_eq!(p.links[0].1, PathBuf::from("/usr/local/cuda-12.8/lib64/libcublas.so.12"));
    }

    /// A V100 (7.0) on an R580 driver (CUDA 13.0): CUDA 13's libraries do not serve Volta, so
    /// cuBLAS and NVRTC 12 are linked; an RTX 4090 (8.9) on the same driver gets 13.
    #[test]
    fn a_gpu_cuda_13_dropped_gets_cuda_12_libraries_on_a_cuda_13_driver() {
        use gpu_doctor_probes::model::{DriverFacts, Gpu};
        use gpu_doctor_probes::{ComputeCapability, Probed};
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
        let p = plan(&listings, usable_cuda_major(&snap, Some(kb), 0));
        assert_eq!(p.links[1].1, PathBuf::from("/usr/local/cuda-12.8/lib64/libnvrtc.so.12"));
    }

    #[test]
    fn pip_wheels_of_cuda_12_keep_libraries_in_separate_folders() {
        let listings = vec![
            listing("/sp/nvidia/cublas/lib", &["libcublas.so.12", "libcublasLt.so.12", "libnvblas.so.12"]),
            listing("/sp/nvidia/cuda_nvrtc/lib", &["libnvrtc-builtins.so.12.4", "libnvrtc.so.12"]),
        ];
        let p = plan(&listings, Some(12));
        assert_eq!(p.dirs, [PathBuf::from("/sp/nvidia/cublas/lib"), PathBuf::from("/sp/nvidia/cuda_nvrtc/lib")]);
    }

    #[test]
    fn nothing_found_or_too_new_leaves_the_default() {
        let p = plan(&[], Some(12));
        assert!(p.links.is_empty() && p.dirs.is_empty());
        assert!(p.notes.iter().all(|n| n.contains("default")));
        let too_new = plan(&[listing("/x", &["libcublas.so.13"])], Some(12));
        assert!(too_new.links.is_empty());
        assert!(too_new.notes[0].contains("newer than the driver supports"));
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
                notes: vec![],
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
        let prepared = PreparedLibraries::from_dirs(wheel_lib_dirs(sp.path()), Some(12));
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
            plan: LibraryPlan { links: vec![], dirs: vec![PathBuf::from("/a")], notes: vec![] },
        };
        let path = prepared.search_path(Some(OsStr::new("/b:/c"))).unwrap();
        assert_eq!(path, OsString::from("/tmp/links:/a:/b:/c"));
        std::mem::forget(prepared); // nothing to remove
        let empty = PreparedLibraries { link_dir: None, plan: LibraryPlan::default() };
        assert_eq!(empty.search_path(None), None);
    }
}
