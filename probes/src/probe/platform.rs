//! OS family, WSL and containers.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::Trace;
use crate::host::{FileKind, Host, OsFamily, Platform};

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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WslFacts {
    /// 2 for WSL2 (a real Linux kernel, GPU paravirtualisation), 1 for WSL1 (no GPU support).
    pub version: u32,
    /// `WSL_DISTRO_NAME`; `None` when unset.
    pub distro: Option<String>,
    /// `/usr/lib/wsl/lib` exists: the Windows driver's libraries are mapped in.
    pub driver_lib_dir_present: bool,
    /// `libcuda.so*` files in `/usr/lib/wsl/lib`.
    pub libcuda_files: Vec<String>,
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

/// Detects WSL and containers.
pub fn probe(host: &dyn Host, trace: &mut Trace) -> PlatformFacts {
    let platform = host.platform();
    if platform.os != OsFamily::Linux {
        return PlatformFacts { platform, wsl: None, container: None };
    }
    let wsl = probe_wsl(host, trace);
    let container = probe_container(host, trace);
    PlatformFacts { platform, wsl, container }
}

fn probe_wsl(host: &dyn Host, trace: &mut Trace) -> Option<WslFacts> {
    let kernel = host.read_file(Path::new("/proc/sys/kernel/osrelease")).unwrap_or_default().to_ascii_lowercase();
    let proc_version = host.read_file(Path::new("/proc/version")).unwrap_or_default().to_ascii_lowercase();
    let distro = host.env_var("WSL_DISTRO_NAME");
    let lib_dir = Path::new("/usr/lib/wsl/lib");
    let driver_lib_dir_present = host.file_kind(lib_dir) == Some(FileKind::Dir);
    let microsoft = kernel.contains("microsoft") || proc_version.contains("microsoft");
    if !microsoft && distro.is_none() && !driver_lib_dir_present {
        trace.miss("wsl", "no Microsoft kernel, WSL_DISTRO_NAME or /usr/lib/wsl/lib");
        return None;
    }
    let version =
        if kernel.contains("wsl2") || proc_version.contains("wsl2") || driver_lib_dir_present { 2 } else { 1 };
    let libcuda_files = host
        .list_dir(lib_dir)
        .map(|es| es.into_iter().map(|e| e.name).filter(|n| n.starts_with("libcuda.so")).collect())
        .unwrap_or_default();
    trace.ok(
        "wsl",
        format!("WSL{version}, /usr/lib/wsl/lib {}", if driver_lib_dir_present { "present" } else { "absent" }),
    );
    Some(WslFacts { version, distro, driver_lib_dir_present, libcuda_files })
}

fn probe_container(host: &dyn Host, trace: &mut Trace) -> Option<ContainerFacts> {
    let mut markers = Vec::new();
    let mut runtime = None;
    let mut mark = |m: String, r: &str| {
        markers.push(m);
        runtime.get_or_insert_with(|| r.to_owned());
    };
    if host.file_kind(Path::new("/.dockerenv")).is_some() {
        mark("/.dockerenv exists".into(), "docker");
    }
    if host.file_kind(Path::new("/run/.containerenv")).is_some() {
        mark("/run/.containerenv exists".into(), "podman");
    }
    if let Some(c) = host.env_var("container") {
        mark(format!("container={c}"), &c);
    }
    if host.env_var("KUBERNETES_SERVICE_HOST").is_some() {
        mark("KUBERNETES_SERVICE_HOST is set".into(), "kubernetes");
    }
    if let Ok(cgroup) = host.read_file(Path::new("/proc/1/cgroup")) {
        for (needle, r) in
            [("kubepods", "kubernetes"), ("docker", "docker"), ("containerd", "containerd"), ("lxc", "lxc")]
        {
            if cgroup.contains(needle) {
                mark(format!("/proc/1/cgroup mentions {needle}"), r);
            }
        }
    }
    let nvidia_runtime_vars: Vec<String> =
        ["NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "NVIDIA_REQUIRE_CUDA"]
            .iter()
            .filter_map(|v| host.env_var(v).map(|val| format!("{v}={val}")))
            .collect();
    let Some(runtime) = runtime else {
        trace.miss("container", "no container markers");
        return None;
    };
    trace.ok("container", format!("{runtime}: {}", markers.join(", ")));
    Some(ContainerFacts { runtime, markers, nvidia_runtime_vars })
}
