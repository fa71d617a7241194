//! Containers: each rule fires on the machine it names and stays quiet on its near neighbours.

use super::builder::Machine;
use gpu_doctor_model::Probed;
use gpu_doctor_model::{
    CdiSpec, ContainerSupport, Engine, EngineKind, InsideContainer, KubeletPlugins, RuntimeConfig, ToolProgram,
};

fn engine(kind: EngineKind) -> Engine {
    Engine {
        kind,
        binary: Some(format!("/usr/bin/{}", format!("{kind:?}").to_lowercase())),
        socket: None,
        version: Some("27.5.1".into()),
        runtimes: None,
        default_runtime: None,
        cdi_devices: Vec::new(),
        info_error: None,
    }
}

fn docker(runtimes: &[&str]) -> Engine {
    Engine { runtimes: Some(runtimes.iter().map(|r| (*r).to_owned()).collect()), ..engine(EngineKind::Docker) }
}

fn with_toolkit(mut c: ContainerSupport) -> ContainerSupport {
    c.toolkit.ctk = Some(ToolProgram { path: "/usr/bin/nvidia-ctk".into(), version: Some("1.17.8".into()) });
    c
}

fn config(engine: EngineKind, path: &str, runtimes: &[&str]) -> RuntimeConfig {
    RuntimeConfig {
        engine,
        path: path.into(),
        rootless: path.contains(".config"),
        runtimes: runtimes.iter().map(|r| (*r).to_owned()).collect(),
        default_runtime: None,
        error: None,
    }
}

/// A Linux host with `gpus` RTX 4090s on driver 550.54.14 and these container facts.
fn host(gpus: u32, c: ContainerSupport) -> Machine {
    let mut m = Machine::linux().driver("550.54.14", "12.4");
    for i in 0..gpus {
        m = m.gpu("NVIDIA GeForce RTX 4090", "8.9").gpu_with(|g| {
            g.index = i;
            g.uuid = Some(format!("GPU-0000000{i}-aaaa-bbbb-cccc-dddddddddddd"));
        });
    }
    m.0.containers = Probed::found(c, "test");
    m
}

fn container_ids(m: &Machine) -> Vec<String> {
    m.ids().into_iter().filter(|id| id.starts_with("containers.")).collect()
}

fn ids(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn no_engine_no_finding() {
    assert!(container_ids(&host(1, ContainerSupport::default())).is_empty());
    // Unknown (pasted text, an old report) never concludes anything.
    let mut m = Machine::pasted();
    m.0.containers = Probed::unknown("not in the pasted text");
    assert!(container_ids(&m).is_empty());
}

#[test]
fn docker_without_toolkit_needs_a_gpu_to_matter() {
    let c = ContainerSupport { engines: vec![docker(&["io.containerd.runc.v2", "runc"])], ..Default::default() };
    assert_eq!(container_ids(&host(1, c.clone())), ids(&["containers.toolkit_missing"]));
    assert!(container_ids(&host(0, c.clone())).is_empty(), "no GPU, nothing to hand to a container");
    assert!(container_ids(&host(1, with_toolkit(c))).iter().all(|id| id != "containers.toolkit_missing"));
}

#[test]
fn docker_desktop_under_wsl_needs_no_toolkit() {
    let c = ContainerSupport { engines: vec![docker(&["runc"])], ..Default::default() };
    let m = host(1, c).wsl(2, &["libcuda.so.1"]);
    assert!(container_ids(&m).is_empty());
}

#[test]
fn toolkit_install_steps_follow_the_distribution() {
    let c = ContainerSupport { engines: vec![docker(&["runc"])], ..Default::default() };
    let mut m = host(1, c);
    let ubuntu = m.finding("containers.toolkit_missing").fix.unwrap();
    assert!(ubuntu.contains("sudo apt-get install -y nvidia-container-toolkit"), "{ubuntu}");
    if let Probed::Found { value, .. } = &mut m.0.system {
        value.os_name = Some("Fedora Linux".into());
    }
    let fedora = m.finding("containers.toolkit_missing").fix.unwrap();
    assert!(fedora.contains("sudo dnf install -y nvidia-container-toolkit"), "{fedora}");
    assert!(fedora.contains("sudo nvidia-ctk runtime configure --runtime=docker"), "{fedora}");
}

#[test]
fn docker_runtime_configured_or_not() {
    let base = |e: Engine, configs: Vec<RuntimeConfig>| {
        with_toolkit(ContainerSupport { engines: vec![e], runtime_configs: configs, ..Default::default() })
    };
    let missing = ids(&["containers.runtime_not_configured"]);
    let daemon = "/etc/docker/daemon.json";
    // Not configured anywhere.
    assert_eq!(container_ids(&host(1, base(docker(&["runc"]), vec![]))), missing);
    // The running daemon has it (set up some other way): fine.
    assert!(container_ids(&host(1, base(docker(&["runc", "nvidia"]), vec![]))).is_empty());
    // Docker 28+ with NVIDIA CDI devices needs no runtime.
    let cdi = Engine { cdi_devices: vec!["nvidia.com/gpu=all".into()], ..docker(&["runc"]) };
    assert!(container_ids(&host(1, base(cdi, vec![]))).is_empty());
    // daemon.json has it but the daemon was not restarted.
    let m = host(1, base(docker(&["runc"]), vec![config(EngineKind::Docker, daemon, &["nvidia"])]));
    let f = m.finding("containers.runtime_not_configured");
    assert!(f.summary.contains("running daemon does not have it"), "{}", f.summary);
    let restart =
        gpu_doctor_model::Change::Root { argv: ["systemctl", "restart", "docker"].map(String::from).to_vec() };
    assert_eq!(m.changes("containers.runtime_not_configured")[0], restart);
    // daemon.json has it and the daemon could not be asked: trust the file.
    let unasked = Engine { info_error: Some("permission denied".into()), ..engine(EngineKind::Docker) };
    assert!(container_ids(&host(1, base(unasked, vec![config(EngineKind::Docker, daemon, &["nvidia"])]))).is_empty());
    // Rootless Docker gets the rootless steps.
    let rootless = config(EngineKind::Docker, "/home/user/.config/docker/daemon.json", &[]);
    let changes = host(1, base(docker(&["runc"]), vec![rootless])).changes("containers.runtime_not_configured");
    let text = format!("{changes:?}");
    assert!(text.contains("--config=$HOME/.config/docker/daemon.json") && text.contains("no-cgroups"), "{text}");
}

#[test]
fn containerd_matters_on_a_kubernetes_node() {
    // The device plugin registered (without it containers.kubernetes_device_plugin_missing fires too).
    let kubelet = kubelet(&["kubelet.sock", "nvidia-gpu.sock"]);
    let cfg = |runtimes: &[&str]| vec![config(EngineKind::Containerd, "/etc/containerd/config.toml", runtimes)];
    let node = |kubernetes, configs| {
        with_toolkit(ContainerSupport {
            engines: vec![engine(EngineKind::Containerd)],
            runtime_configs: configs,
            kubernetes,
            ..Default::default()
        })
    };
    assert_eq!(
        container_ids(&host(1, node(kubelet.clone(), cfg(&["runc"])))),
        ids(&["containers.runtime_not_configured"])
    );
    assert!(container_ids(&host(1, node(kubelet, cfg(&["runc", "nvidia"])))).is_empty());
    assert!(container_ids(&host(1, node(None, cfg(&["runc"])))).is_empty(), "plain containerd, no kubelet");
}

#[test]
fn podman_needs_a_cdi_spec() {
    let spec = CdiSpec {
        path: "/etc/cdi/nvidia.yaml".into(),
        kind: Some("nvidia.com/gpu".into()),
        devices: vec!["0".into(), "all".into()],
        driver_version: Some("550.54.14".into()),
        error: None,
    };
    let podman = |specs| {
        with_toolkit(ContainerSupport {
            engines: vec![engine(EngineKind::Podman)],
            cdi_specs: specs,
            ..Default::default()
        })
    };
    assert_eq!(container_ids(&host(1, podman(vec![]))), ids(&["containers.runtime_not_configured"]));
    assert!(container_ids(&host(1, podman(vec![spec]))).is_empty());
}

#[test]
fn a_cdi_spec_missing_a_gpu_or_naming_another_driver_is_stale() {
    let spec = |devices: &[&str], driver: &str| CdiSpec {
        path: "/etc/cdi/nvidia.yaml".into(),
        kind: Some("nvidia.com/gpu".into()),
        devices: devices.iter().map(|d| (*d).to_owned()).collect(),
        driver_version: Some(driver.into()),
        error: None,
    };
    let machine = |gpus, s| host(gpus, ContainerSupport { cdi_specs: vec![s], ..Default::default() });
    let stale = ids(&["containers.cdi_spec_stale"]);
    assert!(container_ids(&machine(2, spec(&["0", "1", "all"], "550.54.14"))).is_empty());
    let f = machine(2, spec(&["0", "all"], "550.54.14")).finding("containers.cdi_spec_stale");
    assert!(f.evidence.iter().any(|e| e.starts_with("GPU 1 (GPU-00000001")), "{:?}", f.evidence);
    // By UUID when the spec names UUIDs (issue 1239: only `all` and one GPU's UUID).
    assert_eq!(
        container_ids(&machine(2, spec(&["0", "GPU-00000000-aaaa-bbbb-cccc-dddddddddddd", "all"], "550.54.14"))),
        stale
    );
    let m = machine(1, spec(&["0", "all"], "535.104.05"));
    let f = m.finding("containers.cdi_spec_stale");
    assert!(f.evidence.iter().any(|e| e.contains("535.104.05") && e.contains("550.54.14")), "{:?}", f.evidence);
    // Regenerated where it lives: /etc/cdi/nvidia.yaml, or the same file under /var/run/cdi.
    let regenerate = |output: &str| gpu_doctor_model::Change::Root {
        argv: ["nvidia-ctk", "cdi", "generate", &format!("--output={output}")].map(String::from).to_vec(),
    };
    assert_eq!(m.changes("containers.cdi_spec_stale")[0], regenerate("/etc/cdi/nvidia.yaml"));
    let run = CdiSpec { path: "/var/run/cdi/nvidia.json".into(), ..spec(&["0", "all"], "535.104.05") };
    assert_eq!(machine(1, run).changes("containers.cdi_spec_stale")[0], regenerate("/var/run/cdi/nvidia.json"));
    // A spec of another vendor is not NVIDIA's to judge.
    let other = CdiSpec { kind: Some("vendor.com/device".into()), ..spec(&["x"], "1.2.3") };
    assert!(container_ids(&machine(1, other)).is_empty());
}

fn inside(i: InsideContainer) -> Machine {
    let mut m = Machine::linux();
    m.0.containers = Probed::found(ContainerSupport { inside: Some(i), ..Default::default() }, "test");
    m
}

#[test]
fn a_container_without_a_gpu() {
    let plain = InsideContainer::default();
    assert!(container_ids(&inside(plain.clone())).is_empty(), "a CPU container that asks for nothing");
    let cuda_image = InsideContainer { visible_devices: Some("all".into()), ..plain.clone() };
    assert_eq!(container_ids(&inside(cuda_image)), ids(&["containers.started_without_gpu"]));
    let void = inside(InsideContainer { visible_devices: Some("void".into()), ..plain.clone() });
    assert!(void.finding("containers.started_without_gpu").detail.contains("`void`"));
    let host_driver = InsideContainer { host_driver: Some("550.54.14".into()), ..plain.clone() };
    assert_eq!(container_ids(&inside(host_driver)), ids(&["containers.started_without_gpu"]));
    // nvidiactl alone is not a GPU.
    let ctl_only =
        InsideContainer { dev_nodes: vec!["nvidiactl".into()], visible_devices: Some("all".into()), ..plain };
    assert_eq!(container_ids(&inside(ctl_only)), ids(&["containers.started_without_gpu"]));
}

#[test]
fn a_gpu_without_libcuda() {
    let gpu = InsideContainer {
        dev_nodes: vec!["nvidia0".into(), "nvidiactl".into(), "nvidia-uvm".into()],
        visible_devices: Some("all".into()),
        driver_capabilities: Some("utility".into()),
        ..Default::default()
    };
    let m = inside(gpu.clone());
    assert_eq!(container_ids(&m), ids(&["containers.libcuda_not_mounted"]));
    assert!(m.finding("containers.libcuda_not_mounted").detail.contains("does not ask for it"));
    let compute = inside(InsideContainer { driver_capabilities: Some("compute,utility".into()), ..gpu.clone() });
    assert!(
        compute.finding("containers.libcuda_not_mounted").detail.contains("although the capabilities include compute")
    );
    let mounted = InsideContainer { libcuda: vec!["/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14".into()], ..gpu };
    assert!(container_ids(&inside(mounted)).is_empty());
    // WSL2: the GPU is /dev/dxg and NVIDIA_VISIBLE_DEVICES is `void` on purpose.
    let wsl = InsideContainer {
        dev_nodes: vec!["dxg".into()],
        visible_devices: Some("void".into()),
        libcuda: vec!["/usr/lib/wsl/drivers/nvmii.inf_amd64_c5b5db3e12daa5e3/libcuda.so.1.1".into()],
        ..Default::default()
    };
    assert!(container_ids(&inside(wsl.clone())).is_empty());
    let wsl_no_lib = InsideContainer { libcuda: Vec::new(), ..wsl };
    assert_eq!(container_ids(&inside(wsl_no_lib)), ids(&["containers.libcuda_not_mounted"]));
}

fn kubelet(sockets: &[&str]) -> Option<KubeletPlugins> {
    Some(KubeletPlugins {
        dir: "/var/lib/kubelet/device-plugins".into(),
        sockets: sockets.iter().map(|s| (*s).to_owned()).collect(),
    })
}

#[test]
fn a_kubelet_without_nvidias_device_plugin_is_named_with_the_runtime_it_uses() {
    const ID: &str = "containers.kubernetes_device_plugin_missing";
    let mut cd = config(EngineKind::Containerd, "/etc/containerd/config.toml", &["nvidia", "runc"]);
    cd.default_runtime = Some("runc".into());
    let node = |sockets: &[&str], cd: RuntimeConfig| {
        with_toolkit(ContainerSupport {
            engines: vec![engine(EngineKind::Containerd)],
            runtime_configs: vec![cd],
            kubernetes: kubelet(sockets),
            ..Default::default()
        })
    };
    let m = host(2, node(&["kubelet.sock"], cd.clone()));
    assert_eq!(container_ids(&m), ids(&[ID]));
    let f = m.finding(ID);
    assert!(f.evidence.iter().any(|e| e.contains("default runtime runc, nvidia registered")), "{:?}", f.evidence);
    assert!(f.evidence.iter().any(|e| e.contains("not the default runtime")), "{:?}", f.evidence);
    let changes = m.changes(ID);
    assert_eq!(
        changes[0],
        gpu_doctor_model::Change::Root {
            argv: ["nvidia-ctk", "runtime", "configure", "--runtime=containerd", "--set-as-default"]
                .map(str::to_owned)
                .to_vec()
        }
    );
    assert!(
        matches!(&changes[2], gpu_doctor_model::Change::Manual { text } if text.contains("deployments/static/nvidia-device-plugin.yml")),
        "{changes:?}"
    );

    // The toolkit already the default: only the plugin to deploy.
    let mut default = cd;
    default.default_runtime = Some("nvidia".into());
    let m = host(2, node(&["kubelet.sock"], default.clone()));
    assert_eq!(container_ids(&m), ids(&[ID]));
    assert!(matches!(m.changes(ID)[0], gpu_doctor_model::Change::Manual { .. }));

    // Quiet: the plugin registered, no GPU, no kubelet socket.
    assert!(container_ids(&host(2, node(&["kubelet.sock", "nvidia-gpu.sock"], default.clone()))).is_empty());
    assert!(container_ids(&host(0, node(&["kubelet.sock"], default.clone()))).is_empty());
    assert!(container_ids(&host(2, node(&[], default))).is_empty());
}

#[test]
fn a_pasted_docker_run_without_a_gpu_and_no_gpu_inside_is_the_container_started_without_it() {
    // A `docker run` of a CUDA image without `--gpus`, then the shell in it (anibali/docker-pytorch's
    // README runs the image with `--gpus=all`; without it the container has no nvidia-smi).
    let text = "$ docker run -it --rm nvidia/cuda:12.4.1-base-ubuntu22.04 bash\n\
                root@3f2a:/# nvidia-smi\n\
                bash: nvidia-smi: command not found\n";
    let ids = super::pasted_ids(text);
    assert!(ids.contains(&"containers.started_without_gpu".to_owned()), "{ids:?}");
    // With the GPU passed, nvidia-smi's absence is something else.
    let passed = text.replace("docker run -it", "docker run --gpus all -it");
    assert!(!super::pasted_ids(&passed).contains(&"containers.started_without_gpu".to_owned()));
    // Without a run command the line alone is the catalogue's: the driver's tools are missing.
    let alone = super::pasted_ids("bash: nvidia-smi: command not found\n");
    assert_eq!(alone, vec!["observed.shell.nvidia_smi_not_found".to_owned()]);
    // PyTorch in it answering `is_available()` False is the same symptom (constructed: the IPython
    // session people run in a framework image); nvidia-docker, which passes the GPU itself, is not.
    let torch = "$ sudo docker run -it pytorch/pytorch:latest ipython\n\
                 In [1]: import torch\n\
                 In [2]: torch.cuda.is_available()\n\
                 Out[2]: False\n";
    let ids = super::pasted_ids(torch);
    assert!(ids.contains(&"containers.started_without_gpu".to_owned()), "{ids:?}");
    let wrapped = torch.replace("sudo docker run", "sudo nvidia-docker run");
    assert!(!super::pasted_ids(&wrapped).contains(&"containers.started_without_gpu".to_owned()));
}

/// The same said in words ("type `nvidia-smi` but command not found", TonyXuQAQ/Topo-boundary#1's step
/// after `docker run -it` of its image); and NVIDIA's test container seeing the driver while a program
/// in another container finds no nvidia-smi (iot-salzburg/gpu-jupyter#22's shape: the test's table, a
/// notebook's `!nvidia-smi`), which points at the program's own container.
#[test]
fn a_container_without_the_gpu_is_read_from_words_and_from_a_test_container_that_worked() {
    const ID: &str = "containers.started_without_gpu";
    let words = "2. start the docker by `sudo docker run -it zhxu_topoboundary`.\n\
                 3. type `nvidia-smi` but command not found.\n";
    let ids = super::pasted_ids(words);
    assert!(ids.contains(&ID.to_owned()), "{ids:?}");
    let tested = "docker run --gpus all nvidia/cuda:12.4.1-base-ubuntu22.04 nvidia-smi\n\
                  | NVIDIA-SMI 550.54.14              Driver Version: 550.54.14      CUDA Version: 12.4     |\n\
                  In the notebook: /bin/bash: nvidia-smi: command not found\n";
    let ids = super::pasted_ids(tested);
    assert!(ids.contains(&ID.to_owned()), "{ids:?}");
    // The test alone, nothing missing: nothing.
    let fine = "docker run --gpus all nvidia/cuda:12.4.1-base-ubuntu22.04 nvidia-smi\n\
                | NVIDIA-SMI 550.54.14              Driver Version: 550.54.14      CUDA Version: 12.4     |\n";
    assert!(!super::pasted_ids(fine).contains(&ID.to_owned()));
}

/// The NGC images' entrypoint saying it found no driver in the container (triton-inference-server/server's
/// nvidia_entrypoint.sh@v2.8.0; NVIDIA/nvidia-docker#1071's tensorflow:19.08 image): the container started without the
/// GPU, with the host's driver checked first in the fix; the message alone explained by it.
#[test]
fn the_ngc_entrypoints_driver_not_detected_is_the_container_started_without_the_gpu() {
    let text = "WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.\n   \
                Use 'nvidia-docker run' to start this container; see\n";
    let found = super::pasted_findings(text);
    let f = found.iter().find(|f| f.id == "containers.started_without_gpu").expect("the finding");
    let fix = f.fix.as_deref().unwrap_or_default();
    assert!(fix.contains("--gpus all") && fix.contains("`nvidia-smi` on the host"), "{fix}");
    assert!(f.explains.contains(&"observed.ngc.driver_not_detected".to_owned()), "{:?}", f.explains);
    assert_eq!(found.iter().filter(|f| f.id == "containers.started_without_gpu").count(), 1);
}
