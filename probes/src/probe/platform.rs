//! OS family, WSL and containers.

use std::path::Path;

use crate::host::{FileKind, Host};
use gpu_doctor_model::Trace;
use gpu_doctor_model::{ContainerFacts, OsFamily, PlatformFacts, WslFacts};

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
    let release = host.read_file(Path::new("/proc/sys/kernel/osrelease")).unwrap_or_default();
    let kernel = release.to_ascii_lowercase();
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
    let kernel_release = Some(release.trim().to_owned()).filter(|r| !r.is_empty());
    Some(WslFacts { version, distro, driver_lib_dir_present, libcuda_files, kernel_release, ..WslFacts::default() })
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
