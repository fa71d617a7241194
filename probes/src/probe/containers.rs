//! Containers: the engines and NVIDIA's Container Toolkit on this machine, how each engine is set
//! up to give containers a GPU, and, inside a container, what it was given.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::host::{Cmd, Host, HostError, dir_names, home_dir, which};
use crate::parse::containers as parse;
use gpu_doctor_model::{
    CdiSpec, ContainerSupport, ContainerToolkit, Engine, EngineKind, InsideContainer, KubeletPlugins, OsFamily,
    RuntimeConfig, ToolProgram,
};
use gpu_doctor_model::{Probed, Trace};

/// How long a `--version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(5);
/// How long `docker info` or `nvidia-container-cli info` may take: a hung daemon must not hold
/// the whole check.
const INFO_TIMEOUT: Duration = Duration::from_secs(8);

/// Where CDI specs live.
pub const CDI_DIRS: [&str; 2] = ["/etc/cdi", "/var/run/cdi"];
/// Kubernetes' device-plugin folder.
pub const DEVICE_PLUGINS: &str = "/var/lib/kubelet/device-plugins";
/// Folders a container's `libcuda.so*` is mounted into.
const LIB_DIRS: [&str; 6] = [
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/local/nvidia/lib64",
    "/usr/lib/wsl/lib",
];

/// Probes the container side of this machine. `inside` says whether the platform probe found
/// container markers. `Unsupported` off Linux; `Absent` when there is no engine, toolkit, CDI spec,
/// kubelet or container.
pub fn probe(host: &dyn Host, inside: bool, trace: &mut Trace) -> Probed<ContainerSupport> {
    if host.platform().os != OsFamily::Linux {
        return Probed::Unsupported {
            reason: "GPU containers (NVIDIA Container Toolkit) run on Linux and WSL2".into(),
        };
    }
    let found = ContainerSupport {
        engines: engines(host, trace),
        toolkit: toolkit(host, inside, trace),
        runtime_configs: runtime_configs(host, trace),
        cdi_specs: cdi_specs(host, trace),
        kubernetes: kubelet(host, trace),
        inside: inside.then(|| inside_container(host, trace)),
        kubernetes_node: None,
    };
    if found == ContainerSupport::default() {
        return Probed::absent(
            "no container engine, NVIDIA Container Toolkit, CDI spec or kubelet found, and not in a container",
        );
    }
    Probed::found(found, "PATH, sockets, configuration files")
}

fn engines(host: &dyn Host, trace: &mut Trace) -> Vec<Engine> {
    let runtime_dir = host.env_var("XDG_RUNTIME_DIR");
    let user_socket = |tail: &str| runtime_dir.as_ref().map(|d| format!("{d}/{tail}"));
    // The client's own setting first: a Unix socket elsewhere, or a daemon on another machine.
    let (docker_set, docker_remote) = daemon_address(host.env_var("DOCKER_HOST").as_deref());
    let (podman_set, podman_remote) = daemon_address(host.env_var("CONTAINER_HOST").as_deref());
    let table: [(EngineKind, &str, Vec<String>, bool); 3] = [
        (
            EngineKind::Docker,
            "docker",
            docker_set
                .into_iter()
                .chain(["/var/run/docker.sock".to_owned(), "/run/docker.sock".to_owned()])
                .chain(user_socket("docker.sock"))
                .collect(),
            docker_remote,
        ),
        (
            EngineKind::Podman,
            "podman",
            podman_set
                .into_iter()
                .chain(["/run/podman/podman.sock".to_owned()])
                .chain(user_socket("podman/podman.sock"))
                .collect(),
            podman_remote,
        ),
        (EngineKind::Containerd, "containerd", vec!["/run/containerd/containerd.sock".to_owned()], false),
    ];
    let mut out = Vec::new();
    for (kind, program, sockets, remote) in table {
        let binary = which(host, program);
        let socket = sockets.into_iter().find(|s| host.file_kind(Path::new(s)).is_some());
        if binary.is_none() && socket.is_none() {
            trace.miss(program, "not on PATH, no socket");
            continue;
        }
        if socket.is_none() && !remote {
            // Starting a container engine's client costs more than the rest of `check`, and with no
            // daemon to answer it says nothing about running containers.
            trace.miss(format!("{program} --version"), "no socket: the daemon is not running here, not asked");
            out.push(Engine {
                kind,
                binary: binary.as_ref().map(|b| b.display().to_string()),
                socket: None,
                version: None,
                runtimes: None,
                default_runtime: None,
                cdi_devices: Vec::new(),
                info_error: (kind == EngineKind::Docker)
                    .then(|| "no Docker daemon socket: the daemon is not running here, so it was not asked".into()),
            });
            continue;
        }
        let mut engine = Engine {
            kind,
            binary: binary.as_ref().map(|b| b.display().to_string()),
            socket,
            version: None,
            runtimes: None,
            default_runtime: None,
            cdi_devices: Vec::new(),
            info_error: None,
        };
        if let Some(bin) = &binary {
            engine.version = version_of(host, bin, trace);
        }
        if kind == EngineKind::Docker {
            match &binary {
                Some(bin) => docker_info(host, bin, &mut engine, trace),
                None => engine.info_error = Some("the docker program is not on PATH".into()),
            }
        }
        out.push(engine);
    }
    out
}

/// `PROGRAM --version`'s version number.
/// A client's daemon setting (`DOCKER_HOST`, `CONTAINER_HOST`): the Unix socket path it names,
/// and whether it names a daemon elsewhere (`tcp://`, `ssh://`), which only the client can ask.
fn daemon_address(value: Option<&str>) -> (Option<String>, bool) {
    match value.map(str::trim) {
        Some(v) if v.starts_with("unix://") => (Some(v.trim_start_matches("unix://").to_owned()), false),
        Some(v) if !v.is_empty() => (None, true),
        _ => (None, false),
    }
}

fn version_of(host: &dyn Host, program: &Path, trace: &mut Trace) -> Option<String> {
    let cmd = Cmd::new([program.display().to_string(), "--version".to_owned()]).timeout(VERSION_TIMEOUT);
    match host.run(&cmd) {
        Ok(out) => {
            let version = parse::first_version(&out.stdout).or_else(|| parse::first_version(&out.stderr));
            match &version {
                Some(v) => trace.ok(cmd.display(), v.clone()),
                None => trace.error(cmd.display(), "no version in its output"),
            }
            version
        }
        Err(e) => {
            trace.error(cmd.display(), e.to_string());
            None
        }
    }
}

/// `docker info`: the daemon's runtimes. The daemon may refuse (not in the `docker` group), be
/// stopped, or hang; each leaves `info_error` with the reason.
fn docker_info(host: &dyn Host, docker: &Path, engine: &mut Engine, trace: &mut Trace) {
    let cmd = Cmd::new([docker.display().to_string(), "info".to_owned()]).timeout(INFO_TIMEOUT);
    match host.run(&cmd) {
        Ok(out) => {
            let info = parse::docker_info(&out.stdout);
            if info.runtimes.is_some() {
                trace
                    .ok(cmd.display(), format!("runtimes: {}", info.runtimes.as_deref().unwrap_or_default().join(" ")));
            } else {
                let why = daemon_error(&out.stderr);
                trace.error(cmd.display(), why.clone());
                engine.info_error = Some(why);
            }
            engine.runtimes = info.runtimes;
            engine.default_runtime = info.default_runtime;
            engine.cdi_devices = info.cdi_devices;
        }
        Err(e) => {
            trace.error(cmd.display(), e.to_string());
            engine.info_error = Some(match e {
                HostError::Timeout { .. } => {
                    format!("the Docker daemon did not answer `docker info` within {} s", INFO_TIMEOUT.as_secs())
                }
                other => other.to_string(),
            });
        }
    }
}

/// The reason in `docker info`'s standard error, in one line.
fn daemon_error(stderr: &str) -> String {
    let line = stderr.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("docker info printed no runtimes");
    if line.contains("permission denied") {
        format!("not permitted to ask the Docker daemon (run as root or a member of the docker group): {line}")
    } else {
        line.to_owned()
    }
}

fn toolkit(host: &dyn Host, inside: bool, trace: &mut Trace) -> ContainerToolkit {
    let program = |name: &str, trace: &mut Trace| {
        let path = which(host, name)?;
        let version = version_of(host, &path, trace);
        Some(ToolProgram { path: path.display().to_string(), version })
    };
    let path_of = |name: &str| which(host, name).map(|p| p.display().to_string());
    let mut toolkit = ContainerToolkit {
        ctk: program("nvidia-ctk", trace),
        cli: program("nvidia-container-cli", trace),
        runtime: path_of("nvidia-container-runtime"),
        hook: path_of("nvidia-container-runtime-hook"),
        cli_info: None,
        cli_info_error: None,
    };
    if !toolkit.installed() {
        trace.miss("nvidia container toolkit", "no nvidia-ctk, nvidia-container-cli, runtime or hook on PATH");
    }
    // Inside a container the toolkit's view of the host means nothing.
    if let (Some(cli), false) = (&toolkit.cli, inside) {
        let cmd = Cmd::new([cli.path.clone(), "info".to_owned()]).timeout(INFO_TIMEOUT);
        match host.run(&cmd).map_err(|e| e.to_string()).and_then(|out| {
            parse::container_cli_info(&out.stdout).map_err(|e| {
                let err = out.stderr.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_owned);
                err.unwrap_or_else(|| e.to_string())
            })
        }) {
            Ok(info) => {
                trace.ok(cmd.display(), format!("{} device(s)", info.devices.len()));
                toolkit.cli_info = Some(info);
            }
            Err(e) => {
                trace.error(cmd.display(), e.clone());
                toolkit.cli_info_error = Some(e);
            }
        }
    }
    toolkit
}

fn runtime_configs(host: &dyn Host, trace: &mut Trace) -> Vec<RuntimeConfig> {
    let mut files: Vec<(EngineKind, PathBuf, bool)> =
        vec![(EngineKind::Docker, "/etc/docker/daemon.json".into(), false)];
    if let Some(home) = home_dir(host) {
        files.push((EngineKind::Docker, home.join(".config/docker/daemon.json"), true));
    }
    files.push((EngineKind::Containerd, "/etc/containerd/config.toml".into(), false));
    let drop_ins = Path::new("/etc/containerd/conf.d");
    for name in dir_names(host, drop_ins).into_iter().filter(|n| n.ends_with(".toml")) {
        files.push((EngineKind::Containerd, drop_ins.join(name), false));
    }
    let mut out = Vec::new();
    for (engine, path, rootless) in files {
        let shown = path.display().to_string();
        let parsed = match host.read_file(&path) {
            Err(e) if e.is_not_found() => {
                trace.miss(format!("read {shown}"), "not there");
                continue;
            }
            Err(e) => Err(e.to_string()),
            Ok(text) if engine == EngineKind::Docker => parse::daemon_json(&text).map_err(|e| e.to_string()),
            Ok(text) => parse::containerd_config(&text).map_err(|e| e.to_string()),
        };
        let (runtimes, default_runtime, error) = match parsed {
            Ok(r) => {
                trace.ok(format!("read {shown}"), format!("runtimes: {}", r.names.join(" ")));
                (r.names, r.default, None)
            }
            Err(e) => {
                trace.error(format!("read {shown}"), e.clone());
                (Vec::new(), None, Some(e))
            }
        };
        out.push(RuntimeConfig { engine, path: shown, rootless, runtimes, default_runtime, error });
    }
    out
}

fn cdi_specs(host: &dyn Host, trace: &mut Trace) -> Vec<CdiSpec> {
    let mut out = Vec::new();
    for dir in CDI_DIRS {
        let names = dir_names(host, Path::new(dir));
        for name in names.into_iter().filter(|n| [".yaml", ".yml", ".json"].iter().any(|e| n.ends_with(e))) {
            let path = Path::new(dir).join(&name);
            let shown = path.display().to_string();
            let (kind, devices, driver_version, error) = match host
                .read_file(&path)
                .map_err(|e| e.to_string())
                .and_then(|t| parse::cdi_spec(&t).map_err(|e| e.to_string()))
            {
                Ok(c) => {
                    trace.ok(
                        format!("read {shown}"),
                        format!("{}: {}", c.kind.as_deref().unwrap_or("no kind"), c.devices.join(" ")),
                    );
                    (c.kind, c.devices, c.driver_version, None)
                }
                Err(e) => {
                    trace.error(format!("read {shown}"), e.clone());
                    (None, Vec::new(), None, Some(e))
                }
            };
            out.push(CdiSpec { path: shown, kind, devices, driver_version, error });
        }
    }
    out
}

fn kubelet(host: &dyn Host, trace: &mut Trace) -> Option<KubeletPlugins> {
    let Ok(entries) = host.list_dir(Path::new(DEVICE_PLUGINS)) else {
        trace.miss(format!("list {DEVICE_PLUGINS}"), "not there");
        return None;
    };
    let sockets: Vec<String> = entries.into_iter().map(|e| e.name).filter(|n| n.ends_with(".sock")).collect();
    trace.ok(format!("list {DEVICE_PLUGINS}"), sockets.join(" "));
    Some(KubeletPlugins { dir: DEVICE_PLUGINS.to_owned(), sockets })
}

fn inside_container(host: &dyn Host, trace: &mut Trace) -> InsideContainer {
    // WSL2 passes the GPU as /dev/dxg, with the driver's libraries under /usr/lib/wsl/drivers.
    let dev_nodes: Vec<String> =
        dir_names(host, Path::new("/dev")).into_iter().filter(|n| n.starts_with("nvidia") || n == "dxg").collect();
    if dev_nodes.is_empty() {
        trace.miss("list /dev", "no nvidia device node");
    } else {
        trace.ok("list /dev", dev_nodes.join(" "));
    }
    let wsl_drivers = Path::new("/usr/lib/wsl/drivers");
    let wsl_dirs: Vec<String> = if dev_nodes.iter().any(|n| n == "dxg") {
        dir_names(host, wsl_drivers).into_iter().map(|d| wsl_drivers.join(d).display().to_string()).collect()
    } else {
        Vec::new()
    };
    let libcuda: Vec<String> = LIB_DIRS
        .iter()
        .copied()
        .chain(wsl_dirs.iter().map(String::as_str))
        .flat_map(|dir| {
            dir_names(host, Path::new(dir))
                .into_iter()
                .filter(|n| n.starts_with("libcuda.so"))
                .map(move |n| format!("{dir}/{n}"))
        })
        .collect();
    let libcuda_version = libcuda.iter().find_map(|p| p.rsplit('/').next().and_then(parse::libcuda_version));
    if libcuda.is_empty() {
        trace.miss("find libcuda.so*", "none in the library folders");
    } else {
        trace.ok("find libcuda.so*", libcuda.join(" "));
    }
    let host_driver = host
        .read_file(Path::new("/proc/driver/nvidia/version"))
        .ok()
        .and_then(|t| crate::probe::driver::parse_proc_version(&t))
        .map(|v| v.to_string());
    InsideContainer {
        dev_nodes,
        libcuda,
        libcuda_version,
        visible_devices: host.env_var("NVIDIA_VISIBLE_DEVICES"),
        driver_capabilities: host.env_var("NVIDIA_DRIVER_CAPABILITIES"),
        host_driver,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::host::{CmdOutput, CommandRecord, DirEntry, FileKind, Fixture, ReplayHost};
    use gpu_doctor_model::Platform;

    fn linux() -> Fixture {
        let mut f = Fixture::new(Platform { os: OsFamily::Linux, arch: "x86_64".into() });
        f.env.insert("PATH".into(), "/usr/bin".into());
        f.env.insert("HOME".into(), "/home/user".into());
        f
    }

    fn answer(f: &mut Fixture, argv: &[&str], out: Result<CmdOutput, HostError>) {
        f.files.insert(argv[0].into(), String::new());
        let argv = argv.iter().map(|a| (*a).to_owned()).collect();
        f.commands.push(match out {
            Ok(o) => CommandRecord { argv, output: Some(o), error: None },
            Err(e) => CommandRecord { argv, output: None, error: Some(e) },
        });
    }

    fn stdout(text: &str) -> Result<CmdOutput, HostError> {
        Ok(CmdOutput { status: Some(0), stdout: text.into(), stderr: String::new() })
    }

    fn run(f: Fixture, inside: bool) -> (Probed<ContainerSupport>, Vec<gpu_doctor_model::TraceEntry>) {
        let mut t = Trace::new("containers");
        let p = probe(&ReplayHost::new(f), inside, &mut t);
        (p, t.into_entries())
    }

    #[test]
    fn nothing_container_related_is_absent_and_windows_unsupported() {
        assert!(matches!(run(linux(), false).0, Probed::Absent { .. }));
        let windows = Fixture::new(Platform { os: OsFamily::Windows, arch: "x86_64".into() });
        assert!(matches!(run(windows, false).0, Probed::Unsupported { .. }));
    }

    #[test]
    fn an_engine_without_a_socket_is_not_asked_and_a_remote_or_moved_one_is() {
        let mut f = linux();
        // Answers recorded, but with no daemon socket nothing may run them.
        answer(&mut f, &["/usr/bin/docker", "--version"], stdout("Docker version 27.3.1, build ce12230\n"));
        answer(&mut f, &["/usr/bin/docker", "info"], stdout(" Runtimes: io.containerd.runc.v2 runc\n"));
        answer(&mut f, &["/usr/bin/podman", "--version"], stdout("podman version 4.9.3\n"));
        let (p, trace) = run(f.clone(), false);
        let engines = &p.value().unwrap().engines;
        assert_eq!(
            engines.iter().map(|e| (e.kind, e.version.is_some())).collect::<Vec<_>>(),
            [(EngineKind::Docker, false), (EngineKind::Podman, false)]
        );
        assert_eq!(engines[0].binary.as_deref(), Some("/usr/bin/docker"));
        assert!(engines[0].info_error.as_deref().unwrap().contains("not running"), "{:?}", engines[0]);
        assert!(
            !trace.iter().any(|t| t.method.contains("info") || t.outcome == gpu_doctor_model::Outcome::Ok),
            "{trace:#?}"
        );

        // DOCKER_HOST names the socket elsewhere; CONTAINER_HOST a daemon on another machine.
        f.env.insert("DOCKER_HOST".into(), "unix:///srv/docker.sock".into());
        f.files.insert("/srv/docker.sock".into(), String::new());
        f.env.insert("CONTAINER_HOST".into(), "ssh://core@build:22/run/podman/podman.sock".into());
        let (p, _) = run(f, false);
        let engines = &p.value().unwrap().engines;
        assert_eq!(engines[0].socket.as_deref(), Some("/srv/docker.sock"));
        assert_eq!(engines[0].version.as_deref(), Some("27.3.1"));
        assert_eq!(engines[1].version.as_deref(), Some("4.9.3"));
    }

    #[test]
    fn a_refused_or_hung_docker_daemon_leaves_its_reason() {
        let mut f = linux();
        f.files.insert("/var/run/docker.sock".into(), String::new());
        answer(&mut f, &["/usr/bin/docker", "--version"], stdout("Docker version 17.03.2-ce, build f5ec1e2\n"));
        let denied = "permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock: Get \"http://%2Fvar%2Frun%2Fdocker.sock/v1.24/info\": dial unix /var/run/docker.sock: connect: permission denied";
        answer(
            &mut f,
            &["/usr/bin/docker", "info"],
            Ok(CmdOutput {
                status: Some(1),
                stdout: "Client:\n Version:    24.0.5\n".into(),
                stderr: format!("{denied}\n"),
            }),
        );
        let (p, _) = run(f.clone(), false);
        let e = &p.value().unwrap().engines[0];
        assert_eq!(e.runtimes, None);
        assert!(
            e.info_error.as_deref().unwrap().starts_with("not permitted to ask the Docker daemon"),
            "{:?}",
            e.info_error
        );

        f.commands.retain(|c| c.argv[1] != "info");
        answer(
            &mut f,
            &["/usr/bin/docker", "info"],
            Err(HostError::Timeout { after_ms: 8000, what: "docker info".into() }),
        );
        let (p, trace) = run(f, false);
        let e = &p.value().unwrap().engines[0];
        assert!(e.info_error.as_deref().unwrap().contains("did not answer `docker info` within 8 s"));
        assert!(
            trace.iter().any(|t| t.method == "/usr/bin/docker info" && t.outcome == gpu_doctor_model::Outcome::Error)
        );
    }

    #[test]
    fn configs_specs_and_kubelet_are_read_and_bad_ones_say_why() {
        let mut f = linux();
        f.files.insert("/var/run/docker.sock".into(), String::new());
        f.files.insert("/etc/docker/daemon.json".into(), "{\"runtimes\": [".into());
        f.files.insert(
            "/home/user/.config/docker/daemon.json".into(),
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/containers/daemon-json-default-nvidia.json"))
                .into(),
        );
        f.files.insert(
            "/etc/containerd/conf.d/99-nvidia.toml".into(),
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/containers/containerd-dropin-nvidia.toml"))
                .into(),
        );
        f.files.insert(
            "/etc/cdi/nvidia.yaml".into(),
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/containers/cdi-generate-expected.yaml"))
                .into(),
        );
        f.file_errors.insert("/var/run/cdi/nvidia.json".into(), "permission denied".into());
        f.dirs.insert(
            DEVICE_PLUGINS.into(),
            ["kubelet.sock", "kubelet_internal_checkpoint", "nvidia-gpu.sock"]
                .iter()
                .map(|n| DirEntry { name: (*n).into(), kind: FileKind::File })
                .collect(),
        );
        let (p, _) = run(f, false);
        let c = p.value().unwrap();
        assert_eq!(c.engines[0].kind, EngineKind::Docker);
        assert_eq!(c.engines[0].info_error.as_deref(), Some("the docker program is not on PATH"));
        let configs: Vec<(&str, bool, bool)> =
            c.runtime_configs.iter().map(|r| (r.path.as_str(), r.error.is_some(), r.has_nvidia())).collect();
        assert_eq!(
            configs,
            [
                ("/etc/docker/daemon.json", true, false),
                ("/home/user/.config/docker/daemon.json", false, true),
                ("/etc/containerd/conf.d/99-nvidia.toml", false, true),
            ]
        );
        assert!(c.runtime_configs[1].rootless);
        assert_eq!(c.cdi_specs.len(), 2);
        assert_eq!(c.cdi_specs[0].devices, ["0", "all"]);
        assert!(c.cdi_specs[1].error.as_deref().unwrap().contains("permission denied"));
        let k = c.kubernetes.as_ref().unwrap();
        assert!(k.kubelet() && k.nvidia_plugin());
        assert_eq!(k.sockets, ["kubelet.sock", "nvidia-gpu.sock"]);
    }

    #[test]
    fn inside_a_container_with_a_gpu() {
        let mut f = linux();
        f.env.insert("NVIDIA_VISIBLE_DEVICES".into(), "GPU-a281f91d-a6ff-c999-bea8-4eff2389aad3".into());
        f.env.insert("NVIDIA_DRIVER_CAPABILITIES".into(), "compute,utility".into());
        for n in ["nvidia0", "nvidiactl", "nvidia-uvm", "null"] {
            f.files.insert(format!("/dev/{n}"), String::new());
        }
        for n in ["libcuda.so.1", "libcuda.so.550.54.14", "libc.so.6"] {
            f.files.insert(format!("/usr/lib/x86_64-linux-gnu/{n}"), String::new());
        }
        f.files.insert(
            "/proc/driver/nvidia/version".into(),
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024\n".into(),
        );
        let (p, _) = run(f, true);
        let i = p.value().unwrap().inside.clone().unwrap();
        assert_eq!(i.dev_nodes, ["nvidia-uvm", "nvidia0", "nvidiactl"]);
        assert!(i.has_gpu_node());
        assert_eq!(i.libcuda.len(), 2);
        assert_eq!(i.libcuda_version.as_deref(), Some("550.54.14"));
        assert_eq!(i.host_driver.as_deref(), Some("550.54.14"));
        assert_eq!(i.driver_capabilities.as_deref(), Some("compute,utility"));
    }

    #[test]
    fn inside_a_wsl2_container_the_gpu_is_dxg() {
        let mut f = linux();
        f.env.insert("NVIDIA_VISIBLE_DEVICES".into(), "void".into());
        f.files.insert("/dev/dxg".into(), String::new());
        let drivers = "/usr/lib/wsl/drivers/nvmii.inf_amd64_c5b5db3e12daa5e3";
        f.files.insert(format!("{drivers}/libcuda.so.1.1"), String::new());
        f.files.insert("/usr/lib/wsl/lib/libdxcore.so".into(), String::new());
        let (p, _) = run(f, true);
        let i = p.value().unwrap().inside.clone().unwrap();
        assert_eq!(i.dev_nodes, ["dxg"]);
        assert!(i.has_gpu_node());
        assert_eq!(i.libcuda, [format!("{drivers}/libcuda.so.1.1")]);
        assert_eq!(i.libcuda_version, None);
    }
}
