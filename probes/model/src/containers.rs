//! Containers and GPUs: the container engines and NVIDIA's Container Toolkit on a host, how each
//! engine is set up to hand a GPU to a container (Docker's `daemon.json`, containerd's `config.toml`,
//! CDI specs, Kubernetes' device plugins), and, inside a container, what of the GPU it was given.

use serde::{Deserialize, Serialize};

/// What the containers probe found on one machine.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ContainerSupport {
    /// Container engines found (program on `PATH` or API socket); empty when none.
    #[serde(default)]
    pub engines: Vec<Engine>,
    /// The NVIDIA Container Toolkit's programs.
    #[serde(default)]
    pub toolkit: ContainerToolkit,
    /// Engine configuration files that exist (Docker's `daemon.json`, rootless too; containerd's
    /// `config.toml`), with the runtimes they register.
    #[serde(default)]
    pub runtime_configs: Vec<RuntimeConfig>,
    /// CDI specs found in `/etc/cdi` and `/var/run/cdi`.
    #[serde(default)]
    pub cdi_specs: Vec<CdiSpec>,
    /// Kubernetes' device-plugin folder on this node; `None` when `/var/lib/kubelet/device-plugins`
    /// does not exist.
    #[serde(default)]
    pub kubernetes: Option<KubeletPlugins>,
    /// What this container was given of the GPU; `None` when not running inside a container.
    #[serde(default)]
    pub inside: Option<InsideContainer>,
    /// The node as `kubectl describe node` shows it: what it advertises to the scheduler. Only
    /// pasted text fills it (the probe does not ask the API server); `None` when not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_node: Option<KubeNode>,
}

/// A Kubernetes node as `kubectl describe node` prints it: its NVIDIA GPUs under `Capacity:` and
/// `Allocatable:`, and the labels NVIDIA's gpu-feature-discovery put on it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct KubeNode {
    /// `Name:`; `None` when not pasted.
    pub name: Option<String>,
    /// The `Capacity:` section was there, so a `nvidia.com/gpu` line missing from it means the
    /// node advertises no GPU.
    pub capacity_read: bool,
    /// `nvidia.com/gpu` under `Capacity:`; `None` when the section lists none or was not pasted.
    pub gpu_capacity: Option<u64>,
    /// `nvidia.com/gpu` under `Allocatable:`; `None` when the section lists none or was not pasted.
    pub gpu_allocatable: Option<u64>,
    /// NVIDIA's labels (`nvidia.com/gpu.count=8`, `nvidia.com/gpu.product=…`, `nvidia.com/gpu.present=true`),
    /// name → value.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub nvidia_labels: std::collections::BTreeMap<String, String>,
}

impl KubeNode {
    /// The GPUs its labels say the node has: `nvidia.com/gpu.count`, else 1 (at least) for
    /// `nvidia.com/gpu.present=true`; `None` when no label says.
    pub fn labelled_gpus(&self) -> Option<u64> {
        if let Some(n) = self.nvidia_labels.get("nvidia.com/gpu.count").and_then(|v| v.parse().ok()) {
            return Some(n);
        }
        (self.nvidia_labels.get("nvidia.com/gpu.present").map(String::as_str) == Some("true")).then_some(1)
    }
}

/// A container engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    Docker,
    Podman,
    Containerd,
    /// A value this version of gpu-doctor does not know, read from a report written by a newer one.
    #[serde(other)]
    Unknown,
}

impl EngineKind {
    /// The engine's name as people write it: `Docker`, `Podman`, `containerd`.
    pub fn label(self) -> &'static str {
        match self {
            Self::Docker => "Docker",
            Self::Podman => "Podman",
            Self::Containerd => "containerd",
            Self::Unknown => "an unknown engine",
        }
    }
}

/// One container engine found on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Engine {
    /// Which engine.
    pub kind: EngineKind,
    /// Its program on `PATH`; `None` when only its socket was found.
    pub binary: Option<String>,
    /// Its API socket; `None` when none of the usual paths exists.
    pub socket: Option<String>,
    /// Its version, from `docker --version`, `podman --version` or `containerd --version`; `None`
    /// when not asked or not answered.
    pub version: Option<String>,
    /// The runtimes the running daemon knows (`docker info`'s `Runtimes:`); `None` when the daemon
    /// was not asked or did not answer (see `info_error`).
    pub runtimes: Option<Vec<String>>,
    /// The daemon's default runtime (`docker info`'s `Default Runtime:`); `None` when not known.
    pub default_runtime: Option<String>,
    /// CDI devices the daemon discovered (`docker info`'s `Discovered Devices:`, Docker 28 and
    /// later), e.g. `nvidia.com/gpu=all`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cdi_devices: Vec<String>,
    /// Why the daemon's own view is missing: not permitted, timed out, not running.
    pub info_error: Option<String>,
}

/// The NVIDIA Container Toolkit's programs on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ContainerToolkit {
    /// `nvidia-ctk` (toolkit 1.12 and later), with its version.
    pub ctk: Option<ToolProgram>,
    /// `nvidia-container-cli` (libnvidia-container), with its version.
    pub cli: Option<ToolProgram>,
    /// The path of `nvidia-container-runtime`; `None` when not on `PATH`.
    pub runtime: Option<String>,
    /// The path of `nvidia-container-runtime-hook`, which Docker's `--gpus` looks for; `None` when
    /// not on `PATH`.
    pub hook: Option<String>,
    /// What `nvidia-container-cli info` reported; `None` when not run or it failed (`cli_info_error`).
    pub cli_info: Option<CliInfo>,
    /// Why `nvidia-container-cli info` gave nothing.
    pub cli_info_error: Option<String>,
}

impl ContainerToolkit {
    /// True when any of the toolkit's programs is there.
    pub fn installed(&self) -> bool {
        self.ctk.is_some() || self.cli.is_some() || self.runtime.is_some() || self.hook.is_some()
    }

    /// The toolkit's version: `nvidia-ctk`'s, else `nvidia-container-cli`'s.
    pub fn version(&self) -> Option<&str> {
        [&self.ctk, &self.cli].into_iter().flatten().find_map(|p| p.version.as_deref())
    }
}

/// A program and its version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolProgram {
    /// Where it was found.
    pub path: String,
    /// Its version from `--version`; `None` when it did not say.
    pub version: Option<String>,
}

/// `nvidia-container-cli info`: the driver and GPUs as the toolkit sees them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CliInfo {
    /// `NVRM version:`, the kernel driver; `None` when not printed or `(null)`.
    pub driver_version: Option<String>,
    /// `CUDA version:`, the newest CUDA the driver supports.
    pub cuda_version: Option<String>,
    /// One entry per `Device Index:` block.
    pub devices: Vec<CliDevice>,
}

/// One GPU in `nvidia-container-cli info`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CliDevice {
    /// `Device Index:`.
    pub index: Option<u32>,
    /// `Model:`.
    pub model: Option<String>,
    /// `GPU UUID:`.
    pub uuid: Option<String>,
    /// `Bus Location:`, as printed.
    pub bus_location: Option<String>,
}

/// An engine's configuration file and the runtimes it registers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeConfig {
    /// The engine it configures.
    pub engine: EngineKind,
    /// The file.
    pub path: String,
    /// Rootless Docker's own file (`~/.config/docker/daemon.json`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rootless: bool,
    /// Runtime names it registers (`runtimes` keys in `daemon.json`; containerd's
    /// `…containerd.runtimes.<name>` tables).
    pub runtimes: Vec<String>,
    /// The default runtime it sets (`default-runtime`; containerd's `default_runtime_name`).
    pub default_runtime: Option<String>,
    /// Why it could not be read or parsed; the lists are then empty.
    pub error: Option<String>,
}

impl RuntimeConfig {
    /// True when it registers the `nvidia` runtime.
    pub fn has_nvidia(&self) -> bool {
        self.runtimes.iter().any(|r| r == "nvidia")
    }
}

/// A Container Device Interface spec file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CdiSpec {
    /// The file.
    pub path: String,
    /// Its `kind`, e.g. `nvidia.com/gpu`; `None` when not found.
    pub kind: Option<String>,
    /// The device names it lists (`0`, `GPU-…` UUIDs, `all`, MIG `0:1`), in order.
    pub devices: Vec<String>,
    /// The driver version its mounts name (`libcuda.so.<version>`, `libnvidia-ml.so.<version>`);
    /// `None` when none does.
    pub driver_version: Option<String>,
    /// Why it could not be read or parsed.
    pub error: Option<String>,
}

impl CdiSpec {
    /// True for NVIDIA's GPU specs (`nvidia.com/gpu`, also the device plugin's
    /// `management.nvidia.com/gpu`).
    pub fn is_nvidia_gpu(&self) -> bool {
        self.kind.as_deref().is_some_and(|k| k.ends_with("nvidia.com/gpu"))
    }
}

/// Kubernetes' device-plugin folder on a node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KubeletPlugins {
    /// The folder, `/var/lib/kubelet/device-plugins`.
    pub dir: String,
    /// The sockets in it: `kubelet.sock` (the kubelet's registration socket) and one per plugin
    /// (NVIDIA's is `nvidia-gpu.sock`).
    pub sockets: Vec<String>,
}

impl KubeletPlugins {
    /// The kubelet's registration socket is there.
    pub fn kubelet(&self) -> bool {
        self.sockets.iter().any(|s| s == "kubelet.sock")
    }

    /// NVIDIA's device plugin has registered its socket.
    pub fn nvidia_plugin(&self) -> bool {
        self.sockets.iter().any(|s| s.starts_with("nvidia"))
    }
}

/// What a container was given of the GPU.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct InsideContainer {
    /// The NVIDIA device nodes in `/dev` (`nvidia0`, `nvidiactl`, `nvidia-uvm`, …; WSL2's `dxg`).
    pub dev_nodes: Vec<String>,
    /// Every `libcuda.so*` found in the usual library folders.
    pub libcuda: Vec<String>,
    /// The driver version in a mounted `libcuda.so.<version>`'s name; `None` when none carries one.
    pub libcuda_version: Option<String>,
    /// `NVIDIA_VISIBLE_DEVICES`; `None` when unset.
    pub visible_devices: Option<String>,
    /// `NVIDIA_DRIVER_CAPABILITIES`; `None` when unset.
    pub driver_capabilities: Option<String>,
    /// The host's kernel driver as the container sees it (`/proc/driver/nvidia/version`); `None`
    /// when that file is not there.
    pub host_driver: Option<String>,
}

impl InsideContainer {
    /// True when a GPU device node was passed in: `/dev/nvidia<N>`, or WSL2's `/dev/dxg`.
    pub fn has_gpu_node(&self) -> bool {
        self.dev_nodes.iter().any(|n| n == "dxg")
            || self.dev_nodes.iter().any(|n| {
                n.strip_prefix("nvidia").is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            })
    }
}
