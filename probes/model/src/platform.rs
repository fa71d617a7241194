//! The OS family, the architecture, WSL and containers.

use serde::{Deserialize, Serialize};

/// The operating system family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OsFamily {
    Linux,
    Windows,
    Macos,
    Other,
    /// Not known: pasted text from another machine that did not say, or a family this version does
    /// not know (a report from a newer gpu-doctor).
    #[serde(other)]
    Unknown,
}

/// What kind of machine the host is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Platform {
    /// OS family.
    pub os: OsFamily,
    /// CPU architecture as Rust names it (`x86_64`, `aarch64`).
    pub arch: String,
}

impl Platform {
    /// The platform this binary runs on.
    pub fn current() -> Self {
        let os = match std::env::consts::OS {
            "linux" => OsFamily::Linux,
            "windows" => OsFamily::Windows,
            "macos" => OsFamily::Macos,
            _ => OsFamily::Other,
        };
        Self { os, arch: std::env::consts::ARCH.to_owned() }
    }
}

/// Where this machine runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlatformFacts {
    /// OS family and CPU architecture.
    pub platform: Platform,
    /// WSL facts; `None` when not under WSL.
    pub wsl: Option<WslFacts>,
    /// Container facts; `None` when no container marker was found.
    pub container: Option<ContainerFacts>,
}

/// Windows Subsystem for Linux.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WslFacts {
    /// 2 for WSL2 (a real Linux kernel, GPU paravirtualisation), 1 for WSL1 (no GPU support).
    pub version: u32,
    /// `WSL_DISTRO_NAME`; `None` when unset.
    pub distro: Option<String>,
    /// `/usr/lib/wsl/lib` exists: the Windows driver's libraries are mapped in.
    pub driver_lib_dir_present: bool,
    /// `libcuda.so*` files in `/usr/lib/wsl/lib`.
    pub libcuda_files: Vec<String>,
    /// The WSL kernel's release as `uname -r` prints it (`5.15.153.1-microsoft-standard-WSL2`), or
    /// the `Kernel version:` of `wsl --version`; `None` when not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_release: Option<String>,
    /// GPUs the Windows side's nvidia-smi lists in the TCC driver model (index and name, as it
    /// prints them), which WSL does not expose; empty when none or not shown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tcc_gpus: Vec<String>,
    /// Linux NVIDIA driver packages the text shows installed inside WSL (an `apt`/`dnf` install of
    /// `nvidia-driver-*`, `cuda-drivers`, `nvidia-dkms-*`, `dpkg -l`'s `ii` rows, the `.run`
    /// installer); empty when none shown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub linux_driver_packages: Vec<String>,
    /// A Linux driver's own libraries (`libcuda.so*`, `libnvidia-ml.so*`) the text shows in a
    /// distribution's library folder (`/usr/lib/x86_64-linux-gnu`, `/lib/x86_64-linux-gnu`, `/usr/lib64`)
    /// inside WSL, where only `/usr/lib/wsl/lib` should hold them, as paths; empty when none shown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub linux_driver_libs: Vec<String>,
    /// A sentence in which the person says they installed a (GPU, NVIDIA, Linux) driver inside WSL
    /// ("installed the GPU driver … in WSL too"), as written; `None` when the text says no such thing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linux_driver_said: Option<String>,
    /// The first line where a CUDA graphics-interop call (OpenGL, EGL, VDPAU: `cudaGraphicsGLRegisterImage`,
    /// `cuGraphicsGLRegisterBuffer` …) failed inside WSL, as pasted; `None` when the text shows none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graphics_interop_failure: Option<String>,
    /// The first line where a pinned (page-locked) host allocation failed inside WSL (`cudaMallocHost`,
    /// `cudaHostAlloc`, ggml's `failed to allocate … of pinned memory`, PyTorch's `pin_memory` then out of
    /// memory), as pasted; `None` when the text shows none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_alloc_failure: Option<String>,
    /// The first line where CUDA answered 801 `operation not supported` (`cudaErrorNotSupported`,
    /// `CUDA_ERROR_NOT_SUPPORTED`) inside WSL, a managed-memory prefetch answered invalid device, or CUDA called
    /// device 0 an invalid ordinal where the text names no other index, as pasted; `None` when the text shows
    /// none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_supported_error: Option<String>,
    /// The first line where CUDA answered invalid device to a virtual-memory-management allocation inside WSL
    /// (`CUDA_ERROR_INVALID_DEVICE` on or just after a line naming `cuMemCreate`, `cuMemAddressReserve`,
    /// `cuMemMap`, `cuMemSetAccess` or a virtual-memory resource), as pasted; `None` when the text shows none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vmm_refused: Option<String>,
    /// The first line where WSL's own `nvidia-smi` crashed with a segmentation fault (the shell's report
    /// after the command or its table header, or a sentence naming both), as pasted; `None` when the text
    /// shows none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smi_crash: Option<String>,
    /// The first line where a shell inside WSL found no `nvidia-smi` to run (bash's, dash's, zsh's or sudo's
    /// `command not found`, or a sentence saying `sudo nvidia-smi` or root could not find it), as pasted;
    /// `None` when the text shows none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smi_not_found: Option<String>,
    /// The NVIDIA GPU architecture the text names in words beside a GPU word ("on pascal based cards",
    /// "my Maxwell GPU"), lowercased (`pascal`); `None` when it names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub architecture_said: Option<String>,
    /// The line naming a Windows build of the Insider preview channels only (20000 to 21999: after Windows
    /// 10's last release, 19045, before Windows 11's first, 22000), where WSL's GPU compute was in preview;
    /// `None` when the text names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insider_build: Option<String>,
    /// The line naming a Windows 10 release with WSL 2 but from before its GPU compute (1903 to 21H1, builds
    /// 18362 to 19043; it came with 21H2, 19044), as pasted; `None` when the text names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_before_gpu: Option<String>,
    /// The line saying `/dev/dxg`, WSL 2's device for the Windows GPU driver, is not there, as pasted; `None`
    /// when the text says no such thing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dxg_missing: Option<String>,
    /// The lspci line of WSL 2's virtual GPU device (Microsoft's 1414:008e, `3D controller: Microsoft Corporation
    /// Device 008e` or `Basic Render Driver`), which lspci shows in place of the NVIDIA card, as pasted; `None` when
    /// the text shows none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub render_adapter: Option<String>,
}

/// The options by which Docker, Podman and nerdctl pass the GPU to a container: `--gpus`, the NVIDIA
/// runtime, a CDI device (NVIDIA Container Toolkit user guide; Podman's CDI documentation).
pub const ENGINE_GPU_OPTIONS: [&str; 4] = ["--gpus", "--runtime=nvidia", "--runtime nvidia", "nvidia.com/gpu"];

/// The options by which udocker (`udocker setup --nvidia`) and Singularity/Apptainer (`--nv`,
/// `--nvccli`) mount the host's driver libraries into a container (udocker user manual; Apptainer
/// user guide, GPU support). `--nv` is a word: matched in a line with a space after it.
pub const LIBRARY_GPU_OPTIONS: [&str; 3] = ["--nvidia", "--nv ", "--nvccli"];

impl ContainerFacts {
    /// Whether a (lowercased) command line passes the GPU or the driver's libraries to a container:
    /// one of [`ENGINE_GPU_OPTIONS`] or [`LIBRARY_GPU_OPTIONS`], with `engine` and `library` saying
    /// which lists count.
    #[must_use]
    pub fn passes_gpu(lower: &str, engine: bool, library: bool) -> bool {
        let padded = format!("{lower} ");
        let engines = ENGINE_GPU_OPTIONS.iter().filter(|_| engine);
        let libraries = LIBRARY_GPU_OPTIONS.iter().filter(|_| library);
        engines.chain(libraries).any(|o| padded.contains(o))
    }
}

/// A container runtime.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerFacts {
    /// `docker`, `podman`, `kubernetes`, `containerd`, `lxc`, or `unknown`.
    pub runtime: String,
    /// The markers that gave it away.
    pub markers: Vec<String>,
    /// The NVIDIA container runtime variables set (`NVIDIA_VISIBLE_DEVICES`, …).
    pub nvidia_runtime_vars: Vec<String>,
}
