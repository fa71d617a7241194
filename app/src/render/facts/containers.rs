//! The containers section: the engines and the NVIDIA Container Toolkit on a host, their GPU setup
//! (runtimes, CDI specs, Kubernetes' device plugin), or what a container was given.

use gpu_doctor_model::Snapshot;
use gpu_doctor_model::{ContainerSupport, InsideContainer, KubeNode};

use super::{Section, Tone, missing};

/// The containers section.
pub(super) fn section(s: &Snapshot) -> Section {
    match s.containers.value() {
        Some(c) => match &c.inside {
            Some(inside) => inside_section(inside),
            None => host_section(c, s.origin.is_this_machine()),
        },
        None => missing("Containers", &s.containers, "no container engine", Tone::Plain),
    }
}

/// The section of a host; `probed` is false for pasted text, where a toolkit not shown is not known absent.
fn host_section(c: &ContainerSupport, probed: bool) -> Section {
    let engines: Vec<String> = c
        .engines
        .iter()
        .map(|e| format!("{}{}", e.kind.label(), e.version.as_deref().map_or_else(String::new, |v| format!(" {v}"))))
        .collect();
    let toolkit = match (c.toolkit.installed(), c.toolkit.version()) {
        (true, Some(v)) => format!("NVIDIA Container Toolkit {v}"),
        (true, None) => "NVIDIA Container Toolkit".to_owned(),
        (false, _) if probed => "no NVIDIA Container Toolkit".to_owned(),
        (false, _) => "NVIDIA Container Toolkit not in the text".to_owned(),
    };
    let headline = if engines.is_empty() { toolkit } else { format!("{}; {toolkit}", engines.join(", ")) };
    let tone = if !engines.is_empty() && !c.toolkit.installed() { Tone::Warn } else { Tone::Plain };
    let mut s = Section::new("Containers", headline, tone);
    for e in &c.engines {
        let place = e.binary.as_deref().or(e.socket.as_deref()).unwrap_or("?");
        let runtimes = match (&e.runtimes, &e.info_error) {
            (Some(r), _) => format!(
                ": runtimes {}{}",
                r.join(" "),
                e.default_runtime.as_deref().map_or_else(String::new, |d| format!(" (default {d})"))
            ),
            (None, Some(why)) => format!(": runtimes not known ({why})"),
            (None, None) => String::new(),
        };
        s.details.push(format!("{} at {place}{runtimes}", e.kind.label()));
        if !e.cdi_devices.is_empty() {
            s.details.push(format!("{} CDI devices: {}", e.kind.label(), e.cdi_devices.join(" ")));
        }
    }
    let t = &c.toolkit;
    for (name, p) in [("nvidia-ctk", &t.ctk), ("nvidia-container-cli", &t.cli)] {
        if let Some(p) = p {
            s.details.push(format!("{name} {} at {}", p.version.as_deref().unwrap_or("(version ?)"), p.path));
        }
    }
    for (name, p) in [("nvidia-container-runtime", &t.runtime), ("nvidia-container-runtime-hook", &t.hook)] {
        if let Some(p) = p {
            s.details.push(format!("{name} at {p}"));
        }
    }
    if let Some(info) = &t.cli_info {
        s.details.push(format!(
            "nvidia-container-cli info: driver {}, CUDA {}, {} GPU(s)",
            info.driver_version.as_deref().unwrap_or("?"),
            info.cuda_version.as_deref().unwrap_or("?"),
            info.devices.len()
        ));
    } else if let Some(why) = &t.cli_info_error {
        s.details.push(format!("nvidia-container-cli info failed: {why}"));
    }
    for r in &c.runtime_configs {
        s.details.push(match &r.error {
            Some(err) => format!("{}: unreadable ({err})", r.path),
            None => format!(
                "{}: runtimes {}{}",
                r.path,
                if r.runtimes.is_empty() { "none".to_owned() } else { r.runtimes.join(" ") },
                r.default_runtime.as_deref().map_or_else(String::new, |d| format!(", default {d}"))
            ),
        });
    }
    for spec in &c.cdi_specs {
        s.details.push(match &spec.error {
            Some(err) => format!("CDI spec {}: unreadable ({err})", spec.path),
            None => format!(
                "CDI spec {}: {} devices {}{}",
                spec.path,
                spec.kind.as_deref().unwrap_or("?"),
                spec.devices.join(" "),
                spec.driver_version.as_deref().map_or_else(String::new, |d| format!(", driver {d}"))
            ),
        });
    }
    if let Some(k) = &c.kubernetes {
        let plugin = if k.nvidia_plugin() { "NVIDIA device plugin registered" } else { "no NVIDIA device plugin" };
        s.details.push(format!("Kubernetes node: {} ({plugin})", k.sockets.join(" ")));
    }
    if let Some(n) = &c.kubernetes_node {
        s.details.push(kube_node(n));
    }
    s
}

/// A node as `kubectl describe node` showed it: its name, the GPUs it advertises to the scheduler
/// (capacity and allocatable) and the count NVIDIA's labels give.
fn kube_node(n: &KubeNode) -> String {
    let count = |v: Option<u64>, read: bool| match v {
        Some(v) => v.to_string(),
        None if read => "0".to_owned(),
        None => "?".to_owned(),
    };
    let labels = n.labelled_gpus().map_or_else(String::new, |g| format!(", labels say {g}"));
    let product = n.nvidia_labels.get("nvidia.com/gpu.product").map_or_else(String::new, |p| format!(" ({p})"));
    format!(
        "Kubernetes node {} (kubectl): nvidia.com/gpu capacity {}, allocatable {}{labels}{product}",
        n.name.as_deref().unwrap_or("(name not shown)"),
        count(n.gpu_capacity, n.capacity_read),
        count(n.gpu_allocatable, n.capacity_read),
    )
}

fn inside_section(i: &InsideContainer) -> Section {
    let (headline, tone) = if i.has_gpu_node() {
        if i.libcuda.is_empty() {
            ("inside a container: GPU passed in, no libcuda".to_owned(), Tone::Warn)
        } else {
            ("inside a container with a GPU".to_owned(), Tone::Good)
        }
    } else {
        ("inside a container without a GPU".to_owned(), Tone::Warn)
    };
    let mut s = Section::new("Containers", headline, tone);
    s.details.push(format!(
        "device nodes: {}",
        if i.dev_nodes.is_empty() { "none".to_owned() } else { i.dev_nodes.join(" ") }
    ));
    s.details.push(format!(
        "libcuda: {}{}",
        if i.libcuda.is_empty() { "none".to_owned() } else { i.libcuda.join(" ") },
        i.libcuda_version.as_deref().map_or_else(String::new, |v| format!(" (driver {v})"))
    ));
    s.details.push(format!("NVIDIA_VISIBLE_DEVICES={}", i.visible_devices.as_deref().unwrap_or("(unset)")));
    s.details.push(format!("NVIDIA_DRIVER_CAPABILITIES={}", i.driver_capabilities.as_deref().unwrap_or("(unset)")));
    if let Some(d) = &i.host_driver {
        s.details.push(format!("host driver (/proc/driver/nvidia/version): {d}"));
    }
    s
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use crate::render::html::tests::fixture_report;
    use crate::render::{html, markdown, text};

    /// The section's headline and first detail, as every format prints them.
    #[test]
    fn every_format_shows_the_containers_section() {
        let report = fixture_report("docker-toolkit-no-runtime");
        let section = super::super::sections(&report).into_iter().find(|s| s.label == "Containers").unwrap();
        assert_eq!(section.headline, "Docker 17.03.2-ce; NVIDIA Container Toolkit 1.12.0");
        assert_eq!(section.details[0], "Docker at /usr/bin/docker: runtimes io.containerd.runc.v2 runc (default runc)");
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["snapshot"]["containers"]["value"]["toolkit"]["ctk"]["version"], "1.12.0");
        for (format, out) in [
            ("text", text::summary(&report, false, true)),
            ("markdown", markdown::report(&report)),
            ("html", html::report(&report)),
        ] {
            assert!(out.contains("Docker 17.03.2-ce; NVIDIA Container Toolkit 1.12.0"), "{format}");
            assert!(out.contains("runtimes io.containerd.runc.v2 runc"), "{format}: {out}");
        }
    }

    /// A pasted `kubectl describe node` shows in the section: the GPUs the node advertises, 0 where the
    /// Capacity section was read without nvidia.com/gpu, and what NVIDIA's labels say.
    #[test]
    fn a_pasted_kubernetes_node_is_shown() {
        let mut c = gpu_doctor_model::ContainerSupport::default();
        let mut node =
            gpu_doctor_model::KubeNode { name: Some("gpu-node-1".into()), capacity_read: true, ..Default::default() };
        node.nvidia_labels.insert("nvidia.com/gpu.count".into(), "8".into());
        node.nvidia_labels.insert("nvidia.com/gpu.product".into(), "NVIDIA-H100-80GB-HBM3".into());
        c.kubernetes_node = Some(node);
        let section = super::host_section(&c, false);
        assert_eq!(section.headline, "NVIDIA Container Toolkit not in the text");
        assert_eq!(super::host_section(&c, true).headline, "no NVIDIA Container Toolkit");
        assert!(
            section.details.contains(
                &"Kubernetes node gpu-node-1 (kubectl): nvidia.com/gpu capacity 0, allocatable 0, labels say 8 \
                  (NVIDIA-H100-80GB-HBM3)"
                    .to_owned()
            ),
            "{:?}",
            section.details
        );
        let unread = gpu_doctor_model::KubeNode { gpu_allocatable: Some(4), ..Default::default() };
        assert_eq!(
            super::kube_node(&unread),
            "Kubernetes node (name not shown) (kubectl): nvidia.com/gpu capacity ?, allocatable 4"
        );
    }

    #[test]
    fn inside_a_container_without_a_gpu() {
        let report = fixture_report("container-without-gpu");
        let section = super::super::sections(&report).into_iter().find(|s| s.label == "Containers").unwrap();
        assert_eq!(section.headline, "inside a container without a GPU");
        assert!(section.details.contains(&"NVIDIA_VISIBLE_DEVICES=all".to_owned()), "{:?}", section.details);
        assert!(section.details.contains(&"device nodes: none".to_owned()));
    }
}
