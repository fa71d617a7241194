//! Container tooling pasted from a host: `docker info` (the daemon's runtimes, its default runtime
//! and the CDI devices Docker 28 and later discovered), `nvidia-ctk cdi list` (the CDI devices
//! the toolkit's specs name) and `kubectl describe node` (the GPUs the node advertises, its NVIDIA
//! labels), read into the snapshot's `containers` as the live probe fills it, so
//! the `containers.*` rules judge them. A pasted `nvidia-ctk cdi list`, `nvidia-ctk --version` or
//! `nvidia-container-cli info` shows the toolkit is installed; nothing in a paste shows it is not.
//!
//! ```text
//! INFO[0000] Found 5 CDI devices
//! nvidia.com/gpu=0
//! nvidia.com/gpu=all
//!  Runtimes: io.containerd.runc.v2 nvidia runc
//!  Default Runtime: runc
//! ```

use super::facts::Facts;
use crate::parse::containers::{docker_info, first_version};
use gpu_doctor_model::{CdiSpec, ContainerSupport, Engine, EngineKind, KubeNode, ToolProgram};

/// The format names recorded.
const DOCKER_INFO: &str = "docker info";
const CDI_LIST: &str = "nvidia-ctk cdi list";
const KUBECTL_NODE: &str = "kubectl describe node";
const CLI_VERSION: &str = "nvidia-container-cli --version";

/// The most lines read of one section (`Labels:`, `Capacity:`, `Allocatable:`) of a node.
const SECTION_LINES: usize = 256;

/// The lines of `docker info` read around its `Server Version:` line: more than it prints.
const DOCKER_INFO_LINES: usize = 120;

/// The most CDI devices read from one list: a GPU's index, UUID and MIG devices, for many GPUs.
const MAX_CDI_DEVICES: usize = 1024;

/// Where a list's devices are said to come from (the command; it does not name the spec files).
pub(super) const CDI_LIST_SOURCE: &str = "nvidia-ctk cdi list (pasted)";

pub(super) fn read(lines: &[String], facts: &mut Facts) {
    cuda_images(lines, facts);
    ran_in_container(lines, facts);
    let mut c = ContainerSupport::default();
    let mut seen = false;
    if let Some(at) = lines.iter().position(|l| l.trim_start().starts_with("Server Version:")) {
        let from = at.saturating_sub(DOCKER_INFO_LINES / 4);
        let block = lines[from..].iter().take(DOCKER_INFO_LINES).map(String::as_str).collect::<Vec<_>>().join("\n");
        let info = docker_info(&block);
        if info.runtimes.is_some() || info.default_runtime.is_some() {
            facts.saw(at, DOCKER_INFO);
            facts.os.get_or_insert(gpu_doctor_model::OsFamily::Linux);
            seen = true;
            c.engines.push(Engine {
                kind: EngineKind::Docker,
                binary: None,
                socket: None,
                version: lines[at].split_once(':').and_then(|(_, v)| first_version(v)),
                runtimes: info.runtimes,
                default_runtime: info.default_runtime,
                cdi_devices: info.cdi_devices,
                info_error: None,
            });
        }
    }
    if let Some((at, devices)) = cdi_list(lines) {
        facts.saw(at, CDI_LIST);
        seen = true;
        c.toolkit.ctk = Some(ToolProgram { path: "nvidia-ctk".to_owned(), version: None });
        for (kind, name) in devices {
            match c.cdi_specs.iter_mut().find(|s| s.kind.as_deref() == Some(kind.as_str())) {
                Some(spec) => spec.devices.push(name),
                None => c.cdi_specs.push(CdiSpec {
                    path: CDI_LIST_SOURCE.to_owned(),
                    kind: Some(kind),
                    devices: vec![name],
                    driver_version: None,
                    error: None,
                }),
            }
        }
    }
    // `nvidia-container-cli --version` (libnvidia-container src/cli/main.c: `cli-version: %s`, `lib-version: %s`).
    if let Some(at) = lines.iter().position(|l| l.trim_start().starts_with("cli-version:")) {
        facts.saw(at, CLI_VERSION);
        seen = true;
        let version = lines[at].split_once(':').and_then(|(_, v)| first_version(v));
        c.toolkit.cli = Some(ToolProgram { path: "nvidia-container-cli".to_owned(), version });
    }
    if let Some((at, node)) = kube_node(lines) {
        facts.saw(at, KUBECTL_NODE);
        seen = true;
        c.kubernetes_node = Some(node);
    }
    if !seen {
        return;
    }
    for line in lines {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("NVIDIA Container Toolkit CLI version") {
            let version = first_version(rest);
            c.toolkit.ctk = Some(ToolProgram { path: "nvidia-ctk".to_owned(), version });
        } else if t.starts_with("NVRM version:") && c.toolkit.cli.is_none() {
            // `nvidia-container-cli info` ran: libnvidia-container is there.
            c.toolkit.cli = Some(ToolProgram { path: "nvidia-container-cli".to_owned(), version: None });
        }
    }
    facts.containers = Some(c);
}

/// The most NVIDIA CUDA images read from one paste.
const MAX_IMAGES: usize = 8;

/// NVIDIA's CUDA container image on a line (`docker run … nvidia/cuda:10.0-base nvidia-smi`, a
/// `FROM nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04` line, `nvcr.io/nvidia/cuda:…`): its tag's
/// CUDA version and whether it is a `devel` flavour (the one with nvcc). Tags are
/// `<version>[-cudnnN]-<base|runtime|devel>[-<os>]`; `base` has the CUDA runtime, `runtime` adds
/// the libraries, `devel` the compiler (https://nvidia.github.io/container-wiki/toolkit/container-images.html,
/// "CUDA images come in three flavors"; tags as hub.docker.com/r/nvidia/cuda lists them).
pub(super) fn cuda_image(line: &str) -> Option<(String, gpu_doctor_model::CudaVersion, bool)> {
    let at = line.find("nvidia/cuda:")?;
    let tag: String = line
        .get(at + "nvidia/cuda:".len()..)?
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        .take(64)
        .collect();
    let version: String = tag.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    if !version.contains('.') {
        return None;
    }
    let v = version.trim_end_matches('.').parse().ok()?;
    // A sentence's full stop after the tag is not part of it.
    let tag = tag.trim_end_matches(['.', '-', '_']);
    let devel = tag.split('-').any(|w| w == "devel");
    Some((format!("nvidia/cuda:{tag} (container image)"), v, devel))
}

/// Each NVIDIA CUDA image named in the text, as a toolkit of kind `ContainerImage`.
fn cuda_images(lines: &[String], facts: &mut Facts) {
    let mut found = 0;
    for line in lines {
        let Some((root, version, devel)) = cuda_image(line) else { continue };
        if facts.toolkits.iter().any(|t| t.root == root) {
            continue;
        }
        facts.toolkits.push(gpu_doctor_model::ToolkitInstall {
            root,
            kind: gpu_doctor_model::ToolkitKind::ContainerImage,
            version: Some(version),
            version_source: None,
            nvcc: devel.then(|| "/usr/local/cuda/bin/nvcc".to_owned()),
            lib_dirs: Vec::new(),
            aliases: Vec::new(),
            python_env: None,
        });
        found += 1;
        if found >= MAX_IMAGES {
            return;
        }
    }
}

/// The container tools a text names as whole words, each with the runtime it stands for: the text
/// is then about a program run in a container, where CUDA's view of the driver is the container's.
const CONTAINER_WORDS: [(&str, &str); 11] = [
    ("docker", "docker"),
    ("docker-compose", "docker"),
    ("podman", "podman"),
    ("nerdctl", "containerd"),
    ("udocker", "udocker"),
    ("singularity", "singularity"),
    ("apptainer", "singularity"),
    ("kubernetes", "kubernetes"),
    ("k8s", "kubernetes"),
    ("kubectl", "kubernetes"),
    ("k3s", "kubernetes"),
];

/// The most markers kept of lines that name a container tool; a line that also passes the GPU
/// (`gpu_doctor_model::ENGINE_GPU_OPTIONS`, `LIBRARY_GPU_OPTIONS`) is kept beyond them, up to `MAX_GPU_MARKERS` more, wherever it stands.
const MAX_MARKERS: usize = 4;
const MAX_GPU_MARKERS: usize = 4;

/// Whether a container tool is named only under a condition: `if you`/`if running` before the first
/// container word of the line.
fn conditional(lower: &str) -> bool {
    let first = CONTAINER_WORDS.iter().filter_map(|(w, _)| lower.find(w)).min();
    first.is_some_and(|at| ["if you ", "if running ", "if using "].iter().any(|c| lower[..at].contains(c)))
}

/// A text about a program run in a container (`docker run …`, `udocker run …`, "in a docker on my
/// unraid server", "within my k8s cluster"): the runtime and the lines that named it, into
/// `facts.container`. The first runtime named wins.
fn ran_in_container(lines: &[String], facts: &mut Facts) {
    let mut found: Option<gpu_doctor_model::ContainerFacts> = None;
    for line in lines.iter().filter(|l| l.len() <= 2000) {
        let lower = line.to_ascii_lowercase();
        let Some(runtime) = container_word(&lower) else { continue };
        // Advice that names a container under a condition (DALI's `If you are running in a Docker container,
        // please refer to …`, printed wherever it runs) says nothing of where the program ran.
        if conditional(&lower) {
            continue;
        }
        let marker: String = line.trim().chars().take(160).collect();
        match &mut found {
            None => {
                found = Some(gpu_doctor_model::ContainerFacts {
                    runtime: runtime.to_owned(),
                    markers: vec![marker],
                    nvidia_runtime_vars: Vec::new(),
                });
            }
            Some(f) if f.markers.len() < MAX_MARKERS => f.markers.push(marker),
            Some(f) if f.markers.len() < MAX_MARKERS + MAX_GPU_MARKERS && passes_gpu(&lower) => f.markers.push(marker),
            Some(_) => {}
        }
    }
    if found.is_some() && facts.container.is_none() {
        facts.container = found;
    }
}

/// The runtime of the first container tool a (lowercased) line names as a word, not as a part of
/// a path: `/var/lib/docker` (a disk listing of the host) or `/var/run/docker.sock` names where the
/// host's Docker keeps its data or listens, not a program run in a container.
fn container_word(lower: &str) -> Option<&'static str> {
    super::words_at(lower, |c| c.is_ascii_alphanumeric() || c == '-').find_map(|(at, word)| {
        let in_path = lower[..at].ends_with('/') || lower[at + word.len()..].starts_with('/');
        CONTAINER_WORDS.iter().find(|(w, _)| *w == word).filter(|_| !in_path).map(|(_, runtime)| *runtime)
    })
}

/// A (lowercased) line that passes the GPU or the driver's libraries to a container (any engine's option).
fn passes_gpu(lower: &str) -> bool {
    gpu_doctor_model::ContainerFacts::passes_gpu(lower, true, true)
}

/// `kubectl describe node` (or the lines of it a `grep` kept, or `kubectl get node -o yaml`'s
/// `capacity:`/`allocatable:`): its Capacity section, read as the node's, with Allocatable, `Name:`
/// and the NVIDIA labels (`nvidia.com/…=…`) around it. A pod's description has `Limits:`/`Requests:`
/// instead, so it is not taken for a node.
fn kube_node(lines: &[String]) -> Option<(usize, KubeNode)> {
    let header = |name: &'static str| move |l: &String| l.trim().eq_ignore_ascii_case(name);
    let at = lines.iter().position(header("capacity:"))?;
    let mut node = KubeNode { capacity_read: true, ..KubeNode::default() };
    node.gpu_capacity = section_gpus(&lines[at..]);
    // `describe` prints Allocatable after Capacity; `get node -o yaml` before it.
    let near = at.saturating_sub(SECTION_LINES)..(at + SECTION_LINES).min(lines.len());
    if let Some(alloc) = lines[near.clone()].iter().position(header("allocatable:")) {
        node.gpu_allocatable = section_gpus(&lines[near.start + alloc..]);
    }
    // The node's head: from its `Name:` line (the last one before `Capacity:`) on.
    let head = lines[..at].iter().rposition(|l| l.starts_with("Name:")).unwrap_or(at.saturating_sub(SECTION_LINES));
    node.name =
        lines.get(head).and_then(|l| l.strip_prefix("Name:")).map(|n| n.trim().to_owned()).filter(|n| !n.is_empty());
    // The `Labels:` block: its first line and the indented `key=value` lines under it; without its
    // head (a paste of some labels only), the indented lines just before `Capacity:`.
    let start = lines[head..at].iter().position(|l| l.starts_with("Labels:")).map(|s| head + s);
    let labels: Vec<&String> = match start {
        Some(start) => lines[start..at]
            .iter()
            .enumerate()
            .take(SECTION_LINES)
            .take_while(|(i, l)| *i == 0 || is_label_line(l))
            .map(|(_, l)| l)
            .collect(),
        None => lines[head..at].iter().rev().take(SECTION_LINES).filter(|l| is_label_line(l)).collect(),
    };
    for line in labels {
        let label = line.trim().strip_prefix("Labels:").unwrap_or(line.trim()).trim();
        if let Some((k, v)) = label.split_once('=')
            && k.starts_with("nvidia.com/")
        {
            node.nvidia_labels.entry(k.to_owned()).or_insert_with(|| v.trim().to_owned());
        }
    }
    Some((at, node))
}

/// An indented `key=value` line of a node's labels.
fn is_label_line(line: &str) -> bool {
    line.starts_with([' ', '\t']) && line.contains('=') && !line.trim_end().ends_with(':')
}

/// `nvidia.com/gpu:  4` (or YAML's `nvidia.com/gpu: "4"`) among the lines under a section's header
/// (`lines[0]`), which end at the first line not indented further than it; `None` when none.
fn section_gpus(lines: &[String]) -> Option<u64> {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let head = indent(lines.first()?);
    lines
        .iter()
        .skip(1)
        .take(SECTION_LINES)
        .take_while(|l| indent(l) > head && l.contains(':'))
        .find_map(|l| l.trim().strip_prefix("nvidia.com/gpu:")?.trim().trim_matches('"').parse().ok())
}

/// `nvidia-ctk cdi list`: its `Found N CDI devices` line (logrus' text or key=value form) and the
/// `kind=name` lines after it, as `(kind, name)`; a list a forum turned into Markdown links
/// (`[nvidia.com/gpu=0](http://nvidia.com/gpu=0)`) is read too.
fn cdi_list(lines: &[String]) -> Option<(usize, Vec<(String, String)>)> {
    let at = lines.iter().position(|l| {
        l.split_once("Found ").is_some_and(|(_, r)| r.split_whitespace().nth(1).is_some_and(|w| w == "CDI"))
            && l.contains("CDI device")
    })?;
    let devices = lines[at + 1..].iter().map_while(|l| cdi_device(l)).take(MAX_CDI_DEVICES).collect();
    Some((at, devices))
}

/// `nvidia.com/gpu=0` → (`nvidia.com/gpu`, `0`); `None` for any other line.
fn cdi_device(line: &str) -> Option<(String, String)> {
    let t = line.trim();
    let t = t.strip_prefix('[').and_then(|r| r.split_once("](")).map_or(t, |(inner, _)| inner);
    let (kind, name) = t.split_once('=')?;
    let (vendor, class) = kind.split_once('/')?;
    let word = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    let name_ok = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || ":._-".contains(c));
    (word(vendor) && vendor.contains('.') && word(class) && name_ok).then(|| (kind.to_owned(), name.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NVIDIA's CUDA image tags in the forms its pages and Dockerfiles write them: the container
    /// toolkit's install guide's sample workload (`nvidia/cuda:11.0.3-base-ubuntu20.04`), a devel
    /// image with cuDNN, an NGC path, and the old short tags.
    #[test]
    fn a_text_about_a_program_in_a_container_names_its_runtime() {
        let facts = |text: &str| {
            let lines: Vec<String> = text.lines().map(str::to_owned).collect();
            let mut facts = Facts::default();
            ran_in_container(&lines, &mut facts);
            facts.container
        };
        // NVIDIA/DIGITS#1769, NVIDIA/gpu-operator#415 and LIP-Computing/tutorials' udocker hands-on
        // (verbatim lines).
        let c = facts(
            "The old installation works like expected, but if I want to train on the docker image there appears to be \
             something wrong with the cuda support:",
        );
        assert_eq!(c.unwrap().runtime, "docker");
        let c = facts(
            "Same issue continue on k3s: v1.30.4+k3s1 + gpu operator: v24.6.2 + manual install GPU driver in host first.",
        )
        .unwrap();
        assert_eq!((c.runtime.as_str(), c.markers.len()), ("kubernetes", 1));
        assert_eq!(facts("udocker create --name=tf_gpu tensorflow/tensorflow:2.11.0-gpu").unwrap().runtime, "udocker");
        // Names that only contain a tool's name, and the toolkit on a host, are not a container.
        assert!(
            facts(
                "sudo apt install nvidia-container-toolkit
see the Dockerfile and dockerd"
            )
            .is_none()
        );
        // Advice under a condition, printed wherever the program runs (NVIDIA/DALI's video loader, verbatim).
        assert!(
            facts(
                "Failed to load libnvcuvid.so, needed by the VideoReader operator. If you are running in a Docker \
                 container, please refer to https://github.com/NVIDIA/nvidia-docker/wiki/Usage"
            )
            .is_none()
        );
        // Docker's folders on the host, in a disk listing (the Disk section of noonghunna/club-3090's
        // scripts/report.sh, as a rig on Proxmox printed it) or a socket path, are not a program run
        // in a container; a command is.
        assert!(facts("- **/var/lib/docker:** 57G available, ext4 filesystem").is_none());
        assert!(facts("Got permission denied while trying to connect to unix:///var/run/docker.sock").is_none());
        assert_eq!(facts("docker run -v /var/lib/docker:/d x").unwrap().runtime, "docker");
        // Many lines: a few markers kept, the first runtime wins.
        let many = "docker run x
"
        .repeat(10_000)
            + "podman run y
";
        let c = facts(&many).unwrap();
        assert_eq!((c.runtime.as_str(), c.markers.len()), ("docker", MAX_MARKERS));
    }

    #[test]
    fn cuda_images_give_their_cuda_and_flavour() {
        let v = |line: &str| cuda_image(line).map(|(root, v, devel)| (root, v.to_string(), devel));
        assert_eq!(
            v("sudo docker run --rm --gpus all nvidia/cuda:11.0.3-base-ubuntu20.04 nvidia-smi"),
            Some(("nvidia/cuda:11.0.3-base-ubuntu20.04 (container image)".into(), "11.0.3".into(), false))
        );
        assert_eq!(
            v("FROM nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04 AS build").map(|x| (x.1, x.2)),
            Some(("12.4.1".into(), true))
        );
        assert_eq!(v("image: nvcr.io/nvidia/cuda:12.8.0-runtime-ubuntu24.04").map(|x| x.1), Some("12.8.0".into()));
        assert_eq!(v("docker pull nvidia/cuda:9.0-cudnn7-devel").map(|x| (x.1, x.2)), Some(("9.0".into(), true)));
        for not in
            ["nvidia/cuda:latest", "nvidia/cuda:", "nvidia/cuda:12-base", "nvidia/cudagl:11.0-base", "nvidia/cuda"]
        {
            assert_eq!(v(not), None, "{not}");
        }
        assert!(cuda_image(&format!("nvidia/cuda:{}", "1.".repeat(100_000))).is_none());
    }

    #[test]
    fn cdi_device_lines_and_their_markdown_form() {
        assert_eq!(cdi_device("nvidia.com/gpu=all"), Some(("nvidia.com/gpu".into(), "all".into())));
        assert_eq!(
            cdi_device("[nvidia.com/gpu=0](http://nvidia.com/gpu=0)"),
            Some(("nvidia.com/gpu".into(), "0".into()))
        );
        assert_eq!(cdi_device("nvidia.com/gpu=0:1"), Some(("nvidia.com/gpu".into(), "0:1".into())));
        for not in ["a=b", "x/y=z", "NVIDIA_VISIBLE_DEVICES=all", "nvidia.com/gpu=", "nvidia.com/gpu=a b", ""] {
            assert_eq!(cdi_device(not), None, "{not}");
        }
    }
}
