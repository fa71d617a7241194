//! Containers and the GPU: a container engine without NVIDIA's Container Toolkit, the toolkit
//! installed but the engine not set up to use it, a CDI spec that misses a GPU or names another
//! driver, and, inside a container, one started without a GPU or without the driver's CUDA library.
//! A machine without any container engine gets no finding.

use super::{Ctx, Rule, fix};
use gpu_doctor_model::{Category, Change, Finding, Severity};
use gpu_doctor_model::{ContainerSupport, Engine, EngineKind, InsideContainer};

/// Containers that cannot see a GPU: the closest of the fixed categories.
const CATEGORY: Category = Category::NoDriverOrGpuNotVisible;

const GUIDE: &str = "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html";

pub(super) const TOOLKIT_MISSING: Rule = Rule {
    id: "containers.toolkit_missing",
    category: CATEGORY,
    severity: Severity::Warning,
    trigger: "Docker or Podman is installed on a host (not WSL, where Docker Desktop brings its own GPU support) whose \
              driver sees an NVIDIA GPU, but no part of the NVIDIA Container Toolkit (nvidia-ctk, nvidia-container-cli, nvidia-container-runtime, its hook) is on PATH: \
              `docker run --gpus` fails with `could not select device driver \"\" with capabilities: [[gpu]]`.",
    source: "NVIDIA Container Toolkit install guide \
             (https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html); \
             docker/cli#2425, NVIDIA/nvidia-docker#1034",
};

pub(super) const NOT_CONFIGURED: Rule = Rule {
    id: "containers.runtime_not_configured",
    category: CATEGORY,
    severity: Severity::Warning,
    trigger: "The NVIDIA Container Toolkit is installed but an engine here is not set up for it: Docker's running \
              daemon and daemon.json lack the `nvidia` runtime (and it discovered no NVIDIA CDI device), containerd on \
              a Kubernetes node has no `nvidia` runtime, or Podman has no NVIDIA CDI spec.",
    source: "NVIDIA Container Toolkit install guide, \"Configuring Docker\", \"Configuring containerd\", \"Configuring \
             Podman\"; NVIDIA/nvidia-container-toolkit#653, #196 (`unknown or invalid runtime name: nvidia`)",
};

pub(super) const CDI_STALE: Rule = Rule {
    id: "containers.cdi_spec_stale",
    category: CATEGORY,
    severity: Severity::Warning,
    trigger: "An NVIDIA CDI spec in /etc/cdi or /var/run/cdi lists fewer GPUs than the driver sees, misses a GPU's \
              UUID, or mounts another driver version's libraries: `--device nvidia.com/gpu=…` fails with \
              `unresolvable CDI devices` or the container gets the old libraries.",
    source: "NVIDIA Container Toolkit, \"Support for Container Device Interface\" (regenerate after a driver or GPU \
             change: https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/cdi-support.html); \
             NVIDIA/nvidia-container-toolkit#1239",
};

pub(super) const NO_GPU_INSIDE: Rule = Rule {
    id: "containers.started_without_gpu",
    category: CATEGORY,
    severity: Severity::Error,
    trigger: "Inside a container there is no /dev/nvidia<N> device node (nor WSL2's /dev/dxg), while the image asks for a GPU \
              (NVIDIA_VISIBLE_DEVICES set, as nvidia/cuda images do) or the host's NVIDIA driver shows through \
              /proc/driver/nvidia: the container was started without `--gpus` or a CDI device. From pasted text: CUDA's error \
              35 (\"driver version is insufficient\") from a program the text says ran in a container (Docker, Podman, \
              Kubernetes), on a host driver that runs the CUDA the text names (none named: R525 or newer); or a \
              `docker run` (Podman, nerdctl) command the text shows that passes no GPU (`--gpus`, the NVIDIA runtime, \
              a CDI device), with a program in it finding none (nvidia-smi not found, no libcuda, no device, PyTorch's \
              `is_available()` False, nvidia-smi missing or no GPU found said in words); nvidia-docker, which passes the GPU itself, \
              is not such a command; or NVIDIA's test (`docker run --gpus all … nvidia-smi`) printed the driver while \
              a program found none: it ran in another container, started without the GPU. Or an NGC image's \
              entrypoint printing `WARNING: The NVIDIA Driver was not detected.` (no libcuda.so.1, no /dev/nvidiactl \
              in the container).",
    source: "NVIDIA Container Toolkit user guide (NVIDIA_VISIBLE_DEVICES, `--gpus`); NVIDIA/nvidia-docker#341; \
             NVIDIA/nvidia-docker#24 (error 35 on a sufficient driver: the driver's libraries were not mounted); \
             iot-salzburg/gpu-jupyter#22 (NVIDIA's test container saw the GPU, the notebook's container had no \
             nvidia-smi: it was started without `--gpus all`); triton-inference-server/server:nvidia_entrypoint.sh@v2.8.0 \
             (the NGC entrypoint's driver check)",
};

pub(super) const NO_LIBCUDA: Rule = Rule {
    id: "containers.libcuda_not_mounted",
    category: CATEGORY,
    severity: Severity::Error,
    trigger: "Inside a container with a GPU device node, no libcuda.so is in the library folders: the toolkit \
              mounts the driver's CUDA library only for the `compute` capability (NVIDIA_DRIVER_CAPABILITIES). From pasted \
              text: CUDA's error 35 in a udocker or Singularity/Apptainer container run without its NVIDIA option \
              (`udocker setup --nvidia`, `--nv`), which alone mounts the driver's libraries; or, in a container the \
              text names, a program that could not open libcuda.so.1 (TensorFlow's DSO loader) while the host's \
              driver shows its version.",
    source: "NVIDIA Container Toolkit user guide, \"Driver Capabilities\" (compute: CUDA and OpenCL; utility: \
             nvidia-smi and NVML); udocker user manual (`udocker setup --nvidia` adds the host's NVIDIA libraries); \
             Apptainer user guide, GPU support (`--nv` binds the host's driver libraries)",
};

pub(super) const K8S_PLUGIN: Rule = Rule {
    id: "containers.kubernetes_device_plugin_missing",
    category: CATEGORY,
    severity: Severity::Warning,
    trigger: "A kubelet runs on this host (its registration socket /var/lib/kubelet/device-plugins/kubelet.sock is \
              there) and the driver sees NVIDIA GPUs, but no NVIDIA device plugin has registered a socket there \
              (nvidia-gpu.sock): the node advertises no `nvidia.com/gpu`, so pods that ask for one stay Pending. From a \
              pasted `kubectl describe node`: no nvidia.com/gpu under Capacity while its NVIDIA labels \
              (gpu-feature-discovery's nvidia.com/gpu.count or nvidia.com/gpu.present) or the pasted driver show GPUs.",
    source: "NVIDIA k8s-device-plugin README (v0.19.0: prerequisites \"nvidia-container-runtime configured as the \
             default low-level runtime\", Quick Start `kubectl create -f \
             https://raw.githubusercontent.com/NVIDIA/k8s-device-plugin/v0.19.0/deployments/static/nvidia-device-plugin.yml`); \
             Kubernetes \"Device Plugins\" (plugins register through /var/lib/kubelet/device-plugins/kubelet.sock)",
};

pub(super) const K8S_UNHEALTHY: Rule = Rule {
    id: "containers.kubernetes_gpus_unhealthy",
    category: CATEGORY,
    severity: Severity::Warning,
    trigger: "A pasted Kubernetes node advertises fewer allocatable `nvidia.com/gpu` than its capacity: NVIDIA's \
              device plugin marked GPUs unhealthy (after an Xid error it counts as critical), so the scheduler places \
              no new pod on them, and the plugin does not mark them healthy again until it restarts.",
    source: "NVIDIA/k8s-device-plugin#58 (maintainer: Capacity is the total number of GPUs, Allocatable the number \
             in a healthy state), #234 (a GPU marked unhealthy after an Xid stays so until the plugin restarts), \
             #189 (`XidCriticalError: Xid=69 … the device will go unhealthy`)",
};

/// The device plugin's static manifest, as its README's Quick Start deploys it.
pub(super) const DEVICE_PLUGIN_YML: &str =
    "https://raw.githubusercontent.com/NVIDIA/k8s-device-plugin/v0.19.0/deployments/static/nvidia-device-plugin.yml";

pub(super) const RULES: &[Rule] =
    &[TOOLKIT_MISSING, NOT_CONFIGURED, CDI_STALE, NO_GPU_INSIDE, NO_LIBCUDA, K8S_PLUGIN, K8S_UNHEALTHY];

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    run_without_gpu(cx, out);
    ngc_driver_not_detected(cx, out);
    let Some(c) = cx.s.containers.value() else { return };
    match &c.inside {
        Some(inside) => inside_rules(inside, out),
        None => {
            toolkit_missing(cx, c, out);
            not_configured(c, out);
            cdi_stale(cx, c, out);
            k8s_device_plugin(cx, c, out);
            k8s_unhealthy(c, out);
        }
    }
}

/// The NGC images' entrypoint's driver check (`ngc.driver_not_detected`).
const NGC_NO_DRIVER: &str = "ngc.driver_not_detected";

/// NVIDIA's NGC image saying at its start that it found no driver (no libcuda.so.1 outside its compat folder, no
/// /dev/nvidiactl): inside the container, so the engine did not pass the GPU, or the host has no working driver.
fn ngc_driver_not_detected(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(m) = cx.s.messages.iter().find(|m| m.id == NGC_NO_DRIVER) else { return };
    if out.iter().any(|f| f.id == NO_GPU_INSIDE.id) {
        return;
    }
    let mut evidence = vec![format!("pasted line: {}", m.line)];
    evidence.extend(cx.driver.evidence.clone());
    out.push(NO_GPU_INSIDE.finding(
        "The container was started without the GPU: NVIDIA's image found no driver in it",
        "The NGC image's entrypoint looks for the driver's libcuda.so.1 and its device /dev/nvidiactl inside the \
         container and found neither: the NVIDIA Container Toolkit mounts both only when the engine is asked for the \
         GPU, whatever the host has. The programs in the container then see no GPU.",
        evidence,
        Some(
            "First check the host's driver: `nvidia-smi` on the host must list the GPU (otherwise install the driver \
             there). Then start the container with the GPU: docker run --gpus all … (Docker before 19.03: \
             nvidia-docker run or --runtime=nvidia; Podman or Docker with CDI: --device nvidia.com/gpu=all; Compose: \
             deploy.resources.reservations.devices with capabilities: [gpu]), with the NVIDIA Container Toolkit \
             (package nvidia-container-toolkit) installed on the host."
                .to_owned(),
        ),
    ));
}

/// What a program finds where no GPU was passed to its container: no nvidia-smi (the toolkit mounts
/// it with the driver), no driver library, no device.
const NO_GPU_SYMPTOMS: [&str; 7] = [
    "shell.nvidia_smi_not_found",
    "ld.libcuda_missing",
    "cuda.no_device",
    "torch.no_gpus_available",
    "torch.no_driver",
    "nvml.library_not_found",
    "tf.no_cuda_drivers",
];

/// Pasted text with a `docker run` (or Podman's, nerdctl's) command that passes no GPU, and a
/// program in the container that found none: the container was started without the GPU.
fn run_without_gpu(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(c) = cx.s.platform.container.as_ref() else { return };
    let lower: Vec<String> = c.markers.iter().map(|m| m.to_ascii_lowercase()).collect();
    let run = ["docker run ", "podman run ", "nerdctl run "];
    // nvidia-docker (v1 and v2) is the wrapper that passes the GPU itself.
    let Some(at) = lower.iter().position(|m| run.iter().any(|r| m.contains(r)) && !m.contains("nvidia-docker")) else {
        return;
    };
    let passed = lower.iter().any(|m| gpu_doctor_model::ContainerFacts::passes_gpu(m, true, false));
    if out.iter().any(|f| f.id == NO_GPU_INSIDE.id) {
        return;
    }
    if passed {
        return tested_but_not_passed(cx, c, &lower, out);
    }
    let Some(symptom) = no_gpu_symptom(cx) else { return };
    out.push(NO_GPU_INSIDE.finding(
        "The container was started without the GPU",
        "The container was started with a command that passes no GPU (no `--gpus`, no NVIDIA runtime, no CDI device), \
         and the program in it found no GPU: inside a container the GPU, its device nodes and the driver's tools and \
         libraries (nvidia-smi, libcuda.so.1) exist only when the engine is asked for them, whatever the host has.",
        vec![format!("pasted line: {}", c.markers[at]), symptom],
        Some(
            "Start the container with the GPU: docker run --gpus all … (Podman or Docker with CDI: --device \
             nvidia.com/gpu=all; Compose: deploy.resources.reservations.devices with capabilities: [gpu]). The host \
             needs the NVIDIA Container Toolkit (package nvidia-container-toolkit)."
                .to_owned(),
        ),
    ));
}

/// What shows a program in the container found no GPU: a message that says so, nvidia-smi missing said
/// in words, or PyTorch's `is_available()` answering False.
fn no_gpu_symptom(cx: &Ctx<'_>) -> Option<String> {
    let message =
        cx.s.messages
            .iter()
            .find(|m| NO_GPU_SYMPTOMS.contains(&m.id.as_str()))
            .map(|m| format!("pasted line: {}", m.line));
    let said = || {
        let line = cx.s.stated_nvidia_smi_missing.as_ref().or(cx.s.stated_no_gpu.as_ref());
        line.map(|l| format!("pasted line: {l}"))
    };
    let unavailable = || {
        cx.envs()
            .iter()
            .any(|e| e.deep_torch().and_then(|t| t.cuda_available) == Some(false))
            .then(|| "torch.cuda.is_available() returned False in it".to_owned())
    };
    message.or_else(said).or_else(unavailable)
}

/// NVIDIA's test, a `docker run` that passes the GPU and runs nvidia-smi, printed the driver's table,
/// while a program found no GPU: the host and the Container Toolkit pass GPUs, so the program ran in
/// another container, started without one (Compose's service, a notebook's image).
fn tested_but_not_passed(cx: &Ctx<'_>, c: &gpu_doctor_model::ContainerFacts, lower: &[String], out: &mut Vec<Finding>) {
    let Some(at) = lower.iter().position(|m| {
        gpu_doctor_model::ContainerFacts::passes_gpu(m, true, false) && m.trim_end_matches('`').ends_with(" nvidia-smi")
    }) else {
        return;
    };
    let (Some(driver), Some(symptom)) = (cx.driver.evidence.clone(), no_gpu_symptom(cx)) else { return };
    out.push(NO_GPU_INSIDE.finding(
        "The container the program runs in was started without the GPU",
        "A test container started with the GPU ran nvidia-smi and saw the driver, so the host and the NVIDIA Container \
         Toolkit pass GPUs to containers; the program that found none runs in another container, started without \
         the GPU (inside a container, nvidia-smi and libcuda.so.1 exist only when the engine is asked for the GPU).",
        vec![format!("pasted line: {}", c.markers[at]), driver, symptom],
        Some(
            "Start the program's own container with the GPU, as the test was: docker run --gpus all … (Compose: \
             deploy.resources.reservations.devices with driver: nvidia and capabilities: [gpu] in its service, or \
             runtime: nvidia; Podman or Docker with CDI: --device nvidia.com/gpu=all)."
                .to_owned(),
        ),
    ));
}

/// The GPUs the driver sees, as `(index, uuid)`; empty when unknown.
fn driver_gpus(cx: &Ctx<'_>) -> Vec<(u32, Option<String>)> {
    cx.s.gpus.value().map(|g| g.iter().map(|g| (g.index, g.uuid.clone())).collect()).unwrap_or_default()
}

fn engine_line(e: &Engine) -> String {
    let version = e.version.as_deref().map_or_else(String::new, |v| format!(" {v}"));
    let place = e.binary.as_deref().or(e.socket.as_deref()).unwrap_or("?");
    format!("{}{version} ({place})", e.kind.label())
}

fn toolkit_missing(cx: &Ctx<'_>, c: &ContainerSupport, out: &mut Vec<Finding>) {
    let users: Vec<&Engine> =
        c.engines.iter().filter(|e| matches!(e.kind, EngineKind::Docker | EngineKind::Podman)).collect();
    let gpus = driver_gpus(cx);
    // Under WSL2, Docker Desktop's own backend hands GPUs to containers without the toolkit. Pasted
    // `docker info` shows an engine, but no pasted text shows the toolkit's programs missing from PATH.
    let pasted = cx.s.containers.source().is_some_and(|s| s.starts_with("pasted"));
    if users.is_empty() || c.toolkit.installed() || gpus.is_empty() || cx.s.platform.wsl.is_some() || pasted {
        return;
    }
    let mut evidence: Vec<String> = users.iter().map(|e| engine_line(e)).collect();
    evidence.push("no nvidia-ctk, nvidia-container-cli, nvidia-container-runtime or its hook on PATH".to_owned());
    evidence.push(format!("the driver sees {} GPU(s)", gpus.len()));
    let docker = users.iter().any(|e| e.kind == EngineKind::Docker);
    out.push(TOOLKIT_MISSING.finding(
        "Containers cannot use the GPU: the NVIDIA Container Toolkit is not installed",
        "Docker and Podman hand a GPU to a container through NVIDIA's Container Toolkit, which mounts the device nodes \
         and the driver's libraries into it. Without it `docker run --gpus all` fails with `could not select device \
         driver \"\" with capabilities: [[gpu]]` and `--runtime=nvidia` with `unknown or invalid runtime name: nvidia`.",
        evidence,
        Some(install_steps(&fix::os_name(cx), cx, docker)),
    ));
}

/// NVIDIA's install steps for this distribution's package manager, then the engine's setup. Root
/// steps to copy, never run by gpu-doctor.
fn install_steps(os_name: &str, cx: &Ctx<'_>, docker: bool) -> String {
    let family = cx.kb.drivers.distro(os_name).key.as_str();
    let install = match family {
        "ubuntu" | "debian" => {
            "curl -fsSL https://nvidia.github.io/libnvidia-container/gpgkey | sudo gpg --dearmor -o \
             /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg && curl -s -L \
             https://nvidia.github.io/libnvidia-container/stable/deb/nvidia-container-toolkit.list | sed 's#deb \
             https://#deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg] https://#g' | sudo tee \
             /etc/apt/sources.list.d/nvidia-container-toolkit.list\n  sudo apt-get update\n  sudo apt-get install -y \
             nvidia-container-toolkit"
                .to_owned()
        }
        "fedora" | "rhel" => {
            "curl -s -L https://nvidia.github.io/libnvidia-container/stable/rpm/nvidia-container-toolkit.repo \
             | sudo tee /etc/yum.repos.d/nvidia-container-toolkit.repo\n  sudo dnf install -y nvidia-container-toolkit"
                .to_owned()
        }
        "opensuse" => {
            "sudo zypper ar https://nvidia.github.io/libnvidia-container/stable/rpm/nvidia-container-toolkit.repo\n  \
             sudo zypper --gpg-auto-import-keys install -y nvidia-container-toolkit"
                .to_owned()
        }
        _ => format!(
            "install the nvidia-container-toolkit package as NVIDIA's guide says for this distribution: {GUIDE}"
        ),
    };
    let engine = if docker {
        "sudo nvidia-ctk runtime configure --runtime=docker\n  sudo systemctl restart docker"
    } else {
        "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml"
    };
    format!(
        "As root (NVIDIA's install guide, {GUIDE}):\n  {install}\n  {engine}\nThen check: docker run --rm --gpus all \
         ubuntu nvidia-smi"
    )
}

fn not_configured(c: &ContainerSupport, out: &mut Vec<Finding>) {
    if !c.toolkit.installed() {
        return;
    }
    let toolkit = format!(
        "NVIDIA Container Toolkit {}",
        c.toolkit.version().map_or_else(|| "(version not reported)".to_owned(), str::to_owned)
    );
    for e in &c.engines {
        let problem = match e.kind {
            EngineKind::Docker => docker_problem(c, e),
            EngineKind::Containerd => containerd_problem(c),
            EngineKind::Podman => podman_problem(c),
            EngineKind::Unknown => None,
        };
        let Some((summary, mut evidence, changes)) = problem else { continue };
        evidence.insert(0, engine_line(e));
        evidence.insert(1, toolkit.clone());
        out.push(NOT_CONFIGURED.finding(
            summary,
            format!(
                "The toolkit is installed, but {} does not know its runtime yet: `--runtime=nvidia` (and compose's \
                 `runtime: nvidia`, Kubernetes' `nvidia` runtime class) fails with `unknown or invalid runtime name: \
                 nvidia`. Configuring it writes the runtime into the engine's configuration; the engine then needs a \
                 restart.",
                e.kind.label()
            ),
            evidence,
            None,
        )
        .with_plan(fix::change(None, format!("{} runs GPU containers", e.kind.label()), changes)));
    }
}

/// What is wrong with an engine: the summary, the evidence, and the changes that configure it.
type Problem = Option<(String, Vec<String>, Vec<Change>)>;

/// A root command.
fn root(argv: &[&str]) -> Change {
    Change::Root { argv: argv.iter().map(|a| (*a).to_owned()).collect() }
}

/// Something the person does or checks, in words.
fn manual(text: &str) -> Change {
    Change::Manual { text: text.to_owned() }
}

fn docker_problem(c: &ContainerSupport, e: &Engine) -> Problem {
    let configs: Vec<_> = c.runtime_configs.iter().filter(|r| r.engine == EngineKind::Docker).collect();
    let in_file = configs.iter().any(|r| r.has_nvidia());
    let running = e.runtimes.as_ref().map(|r| r.iter().any(|n| n == "nvidia"));
    // Docker 28 and later inject CDI devices without the runtime (`--device nvidia.com/gpu=all`).
    let cdi = e.cdi_devices.iter().any(|d| d.contains("nvidia.com/gpu"));
    if running == Some(true) || cdi || (running.is_none() && in_file) {
        return None;
    }
    let mut evidence: Vec<String> = match &e.runtimes {
        Some(r) => vec![format!("docker info: Runtimes: {}", r.join(" "))],
        None => vec![format!("docker info gave no runtimes: {}", e.info_error.as_deref().unwrap_or("no reason"))],
    };
    if configs.is_empty() {
        evidence.push("no /etc/docker/daemon.json".to_owned());
    }
    for r in &configs {
        evidence.push(match (&r.error, r.has_nvidia()) {
            (Some(err), _) => format!("{}: unreadable: {err}", r.path),
            (None, true) => format!("{} registers the nvidia runtime", r.path),
            (None, false) => format!("{}: no nvidia runtime (runtimes: {})", r.path, list(&r.runtimes)),
        });
    }
    let rootless = configs.iter().any(|r| r.rootless);
    if in_file {
        return Some((
            "Docker's daemon.json registers the nvidia runtime but the running daemon does not have it".to_owned(),
            evidence,
            vec![
                root(&["systemctl", "restart", "docker"]),
                manual(
                    "Rootless Docker restarts with systemctl --user restart docker. If `docker info` still lists no \
                     nvidia runtime, the client talks to another daemon (Docker Desktop, a rootless or snap daemon): \
                     check `docker context ls`.",
                ),
            ],
        ));
    }
    let changes = if rootless {
        vec![
            manual(
                "Rootless Docker, as yourself: nvidia-ctk runtime configure --runtime=docker \
                 --config=$HOME/.config/docker/daemon.json",
            ),
            root(&["nvidia-ctk", "config", "--set", "nvidia-container-cli.no-cgroups", "--in-place"]),
            manual("Then: systemctl --user restart docker"),
        ]
    } else {
        vec![
            root(&["nvidia-ctk", "runtime", "configure", "--runtime=docker"]),
            root(&["systemctl", "restart", "docker"]),
            manual("Check with: docker info | grep -i runtime"),
        ]
    };
    Some(("Docker is not configured with the NVIDIA runtime".to_owned(), evidence, changes))
}

fn containerd_problem(c: &ContainerSupport) -> Problem {
    // containerd matters here for Kubernetes; plain containerd users run nerdctl with CDI.
    let k8s = c.kubernetes.as_ref().is_some_and(|k| k.kubelet());
    let configs: Vec<_> = c.runtime_configs.iter().filter(|r| r.engine == EngineKind::Containerd).collect();
    if !k8s || configs.iter().any(|r| r.has_nvidia()) {
        return None;
    }
    let mut evidence = vec!["the kubelet's device-plugin socket is there: this is a Kubernetes node".to_owned()];
    evidence.extend(configs.iter().map(|r| match &r.error {
        Some(err) => format!("{}: unreadable: {err}", r.path),
        None => format!("{}: no nvidia runtime (runtimes: {})", r.path, list(&r.runtimes)),
    }));
    if configs.is_empty() {
        evidence.push("no /etc/containerd/config.toml".to_owned());
    }
    Some((
        "containerd on this Kubernetes node has no nvidia runtime".to_owned(),
        evidence,
        vec![
            root(&["nvidia-ctk", "runtime", "configure", "--runtime=containerd"]),
            root(&["systemctl", "restart", "containerd"]),
            manual("Pods then pick it with runtimeClassName: nvidia (or make it the default with --set-as-default)."),
        ],
    ))
}

fn podman_problem(c: &ContainerSupport) -> Problem {
    if c.cdi_specs.iter().any(|s| s.is_nvidia_gpu() && s.error.is_none()) {
        return None;
    }
    Some((
        "Podman has no NVIDIA CDI spec to hand GPUs to containers".to_owned(),
        vec!["no nvidia.com/gpu spec in /etc/cdi or /var/run/cdi".to_owned()],
        vec![
            root(&["nvidia-ctk", "cdi", "generate", "--output=/etc/cdi/nvidia.yaml"]),
            manual("Then: podman run --device nvidia.com/gpu=all …"),
        ],
    ))
}

fn list(names: &[String]) -> String {
    if names.is_empty() { "none".to_owned() } else { names.join(", ") }
}

fn cdi_stale(cx: &Ctx<'_>, c: &ContainerSupport, out: &mut Vec<Finding>) {
    let gpus = driver_gpus(cx);
    let driver = cx.s.driver.value().map(|d| d.version.to_string());
    for spec in c.cdi_specs.iter().filter(|s| s.is_nvidia_gpu() && s.error.is_none()) {
        let mut evidence = Vec::new();
        let uuids: Vec<&String> = spec.devices.iter().filter(|d| d.starts_with("GPU-")).collect();
        let indexes: Vec<u32> =
            spec.devices.iter().filter_map(|d| d.strip_prefix("gpu").unwrap_or(d).parse().ok()).collect();
        for (index, uuid) in &gpus {
            let missing = match uuid {
                Some(u) if !uuids.is_empty() => !uuids.iter().any(|s| s.eq_ignore_ascii_case(u)),
                _ => !indexes.is_empty() && !indexes.contains(index),
            };
            if missing {
                evidence.push(format!(
                    "GPU {index}{} is not in the spec",
                    uuid.as_deref().map_or_else(String::new, |u| format!(" ({u})"))
                ));
            }
        }
        if let (Some(spec_driver), Some(driver)) = (&spec.driver_version, &driver)
            && spec_driver != driver
        {
            evidence.push(format!("the spec mounts driver {spec_driver}'s libraries; the driver is {driver}"));
        }
        if evidence.is_empty() {
            continue;
        }
        evidence.insert(0, format!("{}: devices {}", spec.path, list(&spec.devices)));
        let output = if spec.path.starts_with("/var/run/cdi") { spec.path.as_str() } else { "/etc/cdi/nvidia.yaml" };
        out.push(CDI_STALE.finding(
            format!("The CDI spec {} no longer matches this machine's GPUs and driver", spec.path),
            "A CDI spec is a snapshot of the GPUs and driver libraries at the time it was generated. After a driver \
             update or a GPU change, a device it lacks fails with `unresolvable CDI devices`, and libraries it names \
             may be gone.",
            evidence,
            None,
        )
        .with_plan(fix::change(
            None,
            format!("{} lists this machine's GPUs and driver", spec.path),
            vec![
                root(&["nvidia-ctk", "cdi", "generate", &format!("--output={output}")]),
                manual(
                    "The nvidia-cdi-refresh service of toolkit 1.18 and later does this at boot and after driver \
                     changes.",
                ),
            ],
        )));
    }
}

fn inside_rules(i: &InsideContainer, out: &mut Vec<Finding>) {
    let mut evidence = vec![
        format!(
            "/dev: {}",
            if i.dev_nodes.is_empty() { "no nvidia device node".to_owned() } else { i.dev_nodes.join(" ") }
        ),
        format!("NVIDIA_VISIBLE_DEVICES={}", i.visible_devices.as_deref().unwrap_or("(unset)")),
        format!("NVIDIA_DRIVER_CAPABILITIES={}", i.driver_capabilities.as_deref().unwrap_or("(unset)")),
    ];
    if let Some(d) = &i.host_driver {
        evidence.push(format!("the host's driver {d} shows through /proc/driver/nvidia/version"));
    }
    if !i.has_gpu_node() {
        let void = i.visible_devices.as_deref().is_some_and(|v| matches!(v.trim(), "void" | "none" | ""));
        if i.visible_devices.is_none() && i.host_driver.is_none() {
            return;
        }
        let why = if void {
            "NVIDIA_VISIBLE_DEVICES is set to `void`/`none`, which asks the toolkit for no GPU"
        } else {
            "no GPU was passed to it: it was started without `--gpus` or a CDI device"
        };
        out.push(
            NO_GPU_INSIDE.finding(
                "This container has no GPU",
                format!(
                    "Inside a container a GPU exists only when the engine passes its device node in; here {why}. \
                 NVIDIA_VISIBLE_DEVICES in an image (nvidia/cuda images set it to all) does not pass a GPU by itself."
                ),
                evidence,
                Some(
                    "Start the container with a GPU: docker run --gpus all … (Podman or Docker with CDI: --device \
                 nvidia.com/gpu=all; Compose: deploy.resources.reservations.devices with capabilities: [gpu]; \
                 Kubernetes: resources.limits nvidia.com/gpu: 1). The host needs the NVIDIA Container Toolkit."
                        .to_owned(),
                ),
            ),
        );
        return;
    }
    if !i.libcuda.is_empty() {
        return;
    }
    let caps = i.driver_capabilities.as_deref().unwrap_or("");
    let has_compute = caps.split(',').any(|c| matches!(c.trim(), "compute" | "all"));
    let detail = if has_compute {
        "The GPU's device node is here but the driver's CUDA library (libcuda.so) is not, although the capabilities \
         include compute: the toolkit's library mount or its ldconfig step failed, or the image hides the library folder."
    } else {
        "The GPU's device node is here but the driver's CUDA library (libcuda.so) is not: the toolkit mounts it only for \
         the `compute` capability, and NVIDIA_DRIVER_CAPABILITIES does not ask for it. CUDA programs fail to find a driver."
    };
    out.push(NO_LIBCUDA.finding(
        "The container has a GPU but not the driver's CUDA library",
        detail,
        evidence,
        Some(
            "Start it with the compute capability: docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility … \
             (or --gpus 'all,\"capabilities=compute,utility\"'); with CDI the spec mounts every library."
                .to_owned(),
        ),
    ));
}

fn k8s_device_plugin(cx: &Ctx<'_>, c: &ContainerSupport, out: &mut Vec<Finding>) {
    let gpus = driver_gpus(cx);
    let mut evidence = match (c.kubernetes.as_ref().filter(|k| k.kubelet() && !k.nvidia_plugin()), &c.kubernetes_node) {
        (Some(k), _) if !gpus.is_empty() => vec![
            format!("{}: {}", k.dir, list(&k.sockets)),
            "no nvidia-gpu.sock: NVIDIA's device plugin has not registered with this kubelet".to_owned(),
            format!("the driver sees {} GPU(s)", gpus.len()),
        ],
        // `kubectl describe node`: the node advertises no GPU while its labels or the driver show some.
        (_, Some(n)) if n.capacity_read && n.gpu_capacity.unwrap_or(0) == 0 => {
            let node = n.name.as_deref().map_or_else(String::new, |name| format!(" {name}"));
            let mut why = vec![format!("kubectl describe node{node}: no nvidia.com/gpu under Capacity")];
            match (n.labelled_gpus(), gpus.len()) {
                (_, seen) if seen > 0 => why.push(format!("the driver sees {seen} GPU(s)")),
                (Some(_), _) => why.push(format!(
                    "its labels say it has GPUs: {}",
                    n.nvidia_labels
                        .iter()
                        .filter(|(k, _)| *k == "nvidia.com/gpu.count" || *k == "nvidia.com/gpu.present")
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
                (None, _) => return,
            }
            why
        }
        _ => return,
    };
    let configs: Vec<_> = c.runtime_configs.iter().filter(|r| r.engine == EngineKind::Containerd).collect();
    let default_nvidia = configs.iter().any(|r| r.default_runtime.as_deref() == Some("nvidia"));
    for r in &configs {
        evidence.push(format!(
            "{}: default runtime {}{}",
            r.path,
            r.default_runtime.as_deref().unwrap_or("not set (runc)"),
            if r.has_nvidia() { ", nvidia registered" } else { ", no nvidia runtime" }
        ));
    }
    let mut changes = Vec::new();
    if !configs.is_empty() && !default_nvidia {
        evidence.push(
            "the toolkit is not the default runtime of this node's containerd, which the plugin's own pod needs"
                .to_owned(),
        );
        changes.push(root(&["nvidia-ctk", "runtime", "configure", "--runtime=containerd", "--set-as-default"]));
        changes.push(root(&["systemctl", "restart", "containerd"]));
    }
    changes.push(manual(&format!(
        "With cluster-admin rights, deploy NVIDIA's device plugin (its README's Quick Start): kubectl create -f \
         {DEVICE_PLUGIN_YML} (or the Helm chart nvdp/nvidia-device-plugin; the GPU Operator deploys it with the \
         toolkit). On CRI-O: nvidia-ctk runtime configure --runtime=crio, then restart crio."
    )));
    changes.push(manual(
        "Check: ls /var/lib/kubelet/device-plugins shows nvidia-gpu.sock, and kubectl describe node lists \
         nvidia.com/gpu under Capacity and Allocatable.",
    ));
    out.push(
        K8S_PLUGIN
            .finding(
                "Kubernetes on this node cannot hand out its GPUs: no NVIDIA device plugin is registered",
                "The kubelet learns about GPUs only from a device plugin that registers a socket in its \
                 device-plugins folder. Without NVIDIA's, the node advertises no nvidia.com/gpu and a pod that asks \
                 for one (resources.limits nvidia.com/gpu: 1) stays Pending with `Insufficient nvidia.com/gpu`. The \
                 plugin's own pod needs the NVIDIA Container Toolkit as the default runtime of the node's containerd \
                 or CRI-O.",
                evidence,
                None,
            )
            .with_plan(fix::change(None, "Kubernetes pods on this node can ask for nvidia.com/gpu", changes)),
    );
}

fn k8s_unhealthy(c: &ContainerSupport, out: &mut Vec<Finding>) {
    let Some(n) = &c.kubernetes_node else { return };
    let (Some(capacity), Some(allocatable)) = (n.gpu_capacity, n.gpu_allocatable) else { return };
    if allocatable >= capacity {
        return;
    }
    let node = n.name.as_deref().map_or_else(String::new, |name| format!(" {name}"));
    out.push(
        K8S_UNHEALTHY.finding(
            format!("Kubernetes can place pods on only {allocatable} of this node's {capacity} GPUs"),
            "A node's Capacity counts every GPU the device plugin found and its Allocatable only the healthy ones. \
         NVIDIA's device plugin marks a GPU unhealthy when the driver reports an Xid error it counts as critical \
         (a GPU fallen off the bus, a double-bit memory error), and keeps it so until the plugin restarts; pods \
         asking for those GPUs stay Pending with `Insufficient nvidia.com/gpu`.",
            vec![format!("the pasted node{node}: nvidia.com/gpu Capacity {capacity}, Allocatable {allocatable}")],
            Some(
                "Find why: the device plugin's log names each GPU it marked (`kubectl logs -n <its namespace> <the \
             nvidia-device-plugin pod on this node> | grep -i unhealthy`), and the node's kernel log the Xid \
             (`sudo dmesg | grep -i xid`; paste it here to have it explained). Once the GPU is fixed (a reset or \
             reboot for a transient Xid, the vendor for a hardware fault), delete that device-plugin pod so its \
             DaemonSet restarts it and the GPU is counted again."
                    .to_owned(),
            ),
        ),
    );
}
