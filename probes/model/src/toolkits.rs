//! CUDA toolkits and the loader cache.

use serde::{Deserialize, Serialize};

use super::CudaVersion;

/// Every CUDA toolkit found, and which one each name picks.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Toolkits {
    /// Each install, one per real folder, in the order found (PATH first).
    pub installs: Vec<ToolkitInstall>,
    /// Which install each name would give a build or a program.
    pub picks: ToolkitPicks,
    /// CUDA-related libraries in the dynamic loader's cache (`ldconfig -p`); empty on Windows, or
    /// when ldconfig could not be run (the trace says why).
    pub loader_libraries: Vec<LoaderEntry>,
    /// True when `ldconfig -p` answered, so that an empty `loader_libraries` means the cache holds no
    /// CUDA library; false when it did not run (Windows, macOS, pasted text, no ldconfig) or failed,
    /// and in snapshots written before this field existed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub loader_cache_read: bool,
    /// What pasted `ldd FILE` output showed: each library FILE needs and the file the loader took for
    /// it; empty when no ldd output was read (the live probe does not run ldd).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ldd_resolved: Vec<LddResolution>,
    /// A CUDA toolkit's link-time stub libcuda where pasted text shows it on the loader's path at run
    /// time: the file a loader or dlopen error names (`…/lib64/stubs/libcuda.so: undefined symbol`),
    /// or a `stubs` folder a line says LD_LIBRARY_PATH holds. Empty for the live probe, which reads
    /// LD_LIBRARY_PATH itself (`EnvFacts::ld_library_path`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stub_libcuda: Vec<String>,
}

/// One `libX.so.N => /path/libX.so.N (0x…)` line of `ldd FILE`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LddResolution {
    /// The file ldd was run on, as typed (`…/site-packages/nvidia/cusparse/lib/libcusparse.so.12`).
    pub caller: String,
    /// The library it needs, by soname (`libnvJitLink.so.12`).
    pub library: String,
    /// The file the loader resolved it to (`/usr/local/cuda-12.1/lib64/libnvJitLink.so.12`).
    pub path: String,
}

impl Toolkits {
    /// The install whose (resolved) root is `root`; `None` when no install has that root.
    pub fn install(&self, root: &str) -> Option<&ToolkitInstall> {
        self.installs.iter().find(|i| i.root == root)
    }

    /// The distinct install roots the picks name, in pick order; more than one means the names
    /// disagree about which toolkit is in use.
    pub fn picked_roots(&self) -> Vec<&str> {
        let p = &self.picks;
        let mut out: Vec<&str> = Vec::new();
        for pick in [&p.path, &p.cuda_home, &p.cuda_path, &p.ld_library_path, &p.usr_local_cuda].into_iter().flatten() {
            if let Some(root) = pick.install_root.as_deref()
                && !out.contains(&root)
            {
                out.push(root);
            }
        }
        out
    }
}

/// One CUDA toolkit install.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolkitInstall {
    /// Its root folder with symlinks resolved, e.g. `/usr/local/cuda-12.4` (`/usr` for a distribution
    /// package, `…/site-packages/nvidia/cuda_runtime` for a pip wheel).
    pub root: String,
    /// How it was installed.
    pub kind: ToolkitKind,
    /// Its version; `None` when no version file, package name or nvcc told.
    pub version: Option<CudaVersion>,
    /// Where `version` came from; `None` exactly when `version` is `None`.
    pub version_source: Option<VersionSource>,
    /// Its nvcc; `None` when it has none (a runtime-only install).
    pub nvcc: Option<String>,
    /// Its library folders that exist (`lib64`, `lib`, `targets/<arch>-linux/lib`, `lib/x64`).
    pub lib_dirs: Vec<String>,
    /// The names that point to it: `PATH`, `CUDA_HOME`, `CUDA_PATH`, `/usr/local/cuda`,
    /// `LD_LIBRARY_PATH`, `CONDA_PREFIX`, `pip:<env>`. Empty when only a folder listing found it.
    pub aliases: Vec<String>,
    /// The Python environment's display name for a pip install; `None` otherwise.
    pub python_env: Option<String>,
}

/// How a toolkit was installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolkitKind {
    /// NVIDIA's runfile or repository packages under `/usr/local/cuda-*`.
    Local,
    /// A distribution's package: `/usr/bin/nvcc`, `/usr/lib/cuda`, `/opt/cuda`.
    Distro,
    /// A conda environment's CUDA packages.
    Conda,
    /// `nvidia-cuda-*` pip wheels in a site-packages folder.
    Pip,
    /// NVIDIA's Windows installer under `Program Files`.
    WindowsInstaller,
    /// Somewhere else (named by `CUDA_HOME` or PATH).
    Other,
    /// Seen only in text pasted from another machine (`nvcc --version` output, collect_env's
    /// "CUDA runtime version"): an nvcc ran there, but where and how it was installed is not known.
    /// Its `root` is `(pasted)`.
    Pasted,
    /// NVIDIA's CUDA container image named in pasted text (`nvidia/cuda:10.0-base`): the toolkit
    /// of its tag's CUDA version under `/usr/local/cuda` inside the image (with nvcc only in the
    /// `devel` flavours). Its `root` names the image.
    ContainerImage,
    /// A value this version of gpu-doctor does not know, read from a report written by a newer one.
    #[serde(other)]
    Unknown,
}

/// Where a toolkit's version came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VersionSource {
    /// `<root>/version.json` (CUDA 11.1 and later).
    VersionJson,
    /// `<root>/version.txt` (CUDA 11.0 and earlier).
    VersionTxt,
    /// Running `<root>/bin/nvcc --version`.
    Nvcc,
    /// A pip `*.dist-info` folder name.
    DistInfo,
    /// A pip package's `METADATA` `Version:` field.
    PackageMetadata,
    /// A conda package's `conda-meta/*.json` file name.
    CondaMeta,
    /// A build system's configuration output read from pasted text: CMake's CUDA compiler identification,
    /// FindCUDA's and FindCUDAToolkit's found version.
    BuildConfig,
    /// A value this version of gpu-doctor does not know, read from a report written by a newer one.
    #[serde(other)]
    Unknown,
}

/// Which install each name picks.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolkitPicks {
    /// The first nvcc on PATH; `None` when PATH has none.
    pub path: Option<Pick>,
    /// `CUDA_HOME`; `None` when unset.
    pub cuda_home: Option<Pick>,
    /// `CUDA_PATH`; `None` when unset.
    pub cuda_path: Option<Pick>,
    /// The first `LD_LIBRARY_PATH` folder holding `libcudart.so*`; `None` when none does (or on Windows).
    pub ld_library_path: Option<Pick>,
    /// Where `/usr/local/cuda` points; `None` when it does not exist.
    pub usr_local_cuda: Option<Pick>,
}

/// What one name points at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pick {
    /// What the name says: the nvcc path, the variable's value, the libcudart file, or the link target
    /// as stored (the folder itself when `/usr/local/cuda` is not a link).
    pub named: String,
    /// The root of the install it leads to; `None` when it leads to no toolkit found.
    pub install_root: Option<String>,
}

/// One library the dynamic loader can find through its cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoaderEntry {
    /// The library's soname as cached, e.g. `libcudart.so.12`.
    pub name: String,
    /// The flags in parentheses, e.g. `libc6,x86-64` or `libc6,AArch64`.
    pub arch: String,
    /// The file the loader would open, e.g. `/lib/x86_64-linux-gnu/libcuda.so.1`.
    pub path: String,
}
