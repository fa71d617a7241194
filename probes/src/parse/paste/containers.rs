//! Container tooling pasted from a host: `docker info` (the daemon's runtimes, its default runtime
//! and the CDI devices Docker 28 and later discovered) and `nvidia-ctk cdi list` (the CDI devices
//! the toolkit's specs name), read into the snapshot's `containers` as the live probe fills it, so
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
use gpu_doctor_model::{CdiSpec, ContainerSupport, Engine, EngineKind, ToolProgram};

/// The format names recorded.
const DOCKER_INFO: &str = "docker info";
const CDI_LIST: &str = "nvidia-ctk cdi list";

/// The lines of `docker info` read around its `Server Version:` line: more than it prints.
const DOCKER_INFO_LINES: usize = 120;

/// The most CDI devices read from one list: a GPU's index, UUID and MIG devices, for many GPUs.
const MAX_CDI_DEVICES: usize = 1024;

/// Where a list's devices are said to come from (the command; it does not name the spec files).
pub(super) const CDI_LIST_SOURCE: &str = "nvidia-ctk cdi list (pasted)";

pub(super) fn read(lines: &[String], facts: &mut Facts) {
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
