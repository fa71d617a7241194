//! `jax.print_environment_info()` (jax-ml/jax `jax/_src/environment_info.py`):
//!
//! ```text
//! jax:    0.4.26
//! jaxlib: 0.4.26
//! numpy:  1.26.4
//! python: 3.11.8 | packaged by conda-forge | (main, Feb 16 2024, 20:53:32) [GCC 12.3.0]
//! jax.devices (1 total, 1 local): [cuda(id=0)]
//! process_count: 1
//! platform: uname_result(system='Linux', node='box', release='5.15.0-101-generic', …, machine='x86_64')
//!
//! $ nvidia-smi
//! ```
//! The nvidia-smi table it ends with is read by the table reader.

use std::sync::OnceLock;

use regex::Regex;

use super::collect_env::platform;
use super::facts::Facts;
use super::packages;
use crate::probe::python::parse::python_version_prefix;
use gpu_doctor_model::{DeepJax, DeepJaxDevice, DeepPython};

const FORMAT: &str = "jax.print_environment_info";

/// The value after `key` on the first line that starts with it.
fn field<'a>(lines: &'a [String], key: &str) -> Option<(usize, &'a str)> {
    lines.iter().enumerate().find_map(|(i, l)| l.trim_start().strip_prefix(key).map(|v| (i, v.trim())))
}

/// Reads the output: needs `jaxlib:` and either `jax:` or the `jax.devices (` line.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    let Some((at, jaxlib)) = field(lines, "jaxlib:") else { return };
    let jax = field(lines, "jax:");
    let devices_line = field(lines, "jax.devices (");
    if jax.is_none() && devices_line.is_none() {
        return;
    }
    let version_like = |v: &&str| v.starts_with(|c: char| c.is_ascii_digit()) && !v.contains(' ');
    let first = [Some(at), jax.map(|(i, _)| i), devices_line.map(|(i, _)| i)].into_iter().flatten().min().unwrap_or(at);
    let jax = jax.map(|(_, v)| v).filter(version_like);
    let jaxlib = Some(jaxlib).filter(version_like);
    if jax.is_none() && jaxlib.is_none() {
        return;
    }
    facts.saw(first, FORMAT);
    if let Some(v) = jax {
        packages::add(facts, "jax", v, None, FORMAT);
    }
    if let Some(v) = jaxlib {
        packages::add(facts, "jaxlib", v, None, FORMAT);
    }
    let devices = devices_line.and_then(|(_, l)| l.split_once(": ")).map(|(_, list)| parse_devices(list));
    facts.jax_cuda_devices |= devices_line.is_some_and(|(_, l)| l.to_lowercase().contains("cuda"));
    facts.deep.jax = Some(DeepJax {
        version: jax.map(str::to_owned),
        jaxlib_version: jaxlib.map(str::to_owned),
        backend: devices.as_ref().and_then(|d| d.first()).and_then(|d| d.platform.clone()),
        devices,
        ..DeepJax::default()
    });
    facts.deep_from(FORMAT);
    if let Some(v) = field(lines, "python:").and_then(|(_, v)| python_version_prefix(v)) {
        facts.python_version.get_or_insert(v.clone());
        if facts.deep.python.is_none() {
            facts.deep.python = Some(DeepPython { version: Some(v), ..DeepPython::default() });
        }
    }
    if let Some((_, uname)) = field(lines, "platform: uname_result(") {
        let quoted = |key: &str| uname.split(&format!("{key}='")).nth(1).and_then(|r| r.split('\'').next());
        let os = quoted("system");
        let py = os.map(|s| format!("{s}-{}-{}", quoted("release").unwrap_or(""), quoted("machine").unwrap_or("")));
        platform(None, py.as_deref(), facts);
    }
}

/// `[cuda(id=0) cuda(id=1)]`, `[CudaDevice(id=0)]`, `[StreamExecutorGpuDevice(id=0, process_index=0)]`,
/// `[CpuDevice(id=0)]`, `[TFRT_CPU_0]` → devices with their platform (`gpu`, `cpu`, `tpu`).
fn parse_devices(list: &str) -> Vec<DeepJaxDevice> {
    static RE: OnceLock<Regex> = OnceLock::new();
    #[allow(clippy::unwrap_used)] // a literal pattern, exercised by the tests
    let re = RE.get_or_init(|| Regex::new(r"(\w+)\(id=(\d+)|TFRT_(CPU)_(\d+)").unwrap());
    re.captures_iter(list)
        .filter_map(|c| {
            let kind = c.get(1).or_else(|| c.get(3))?.as_str().to_lowercase();
            let id = c.get(2).or_else(|| c.get(4))?.as_str().parse().ok()?;
            let platform = if kind.contains("cuda") || kind.contains("gpu") || kind.contains("rocm") {
                "gpu"
            } else if kind.contains("cpu") {
                "cpu"
            } else if kind.contains("tpu") {
                "tpu"
            } else {
                return None;
            };
            Some(DeepJaxDevice { id, platform: Some(platform.to_owned()), kind: None })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_lists_of_every_generation_parse() {
        let ids = |s: &str| {
            parse_devices(s).iter().map(|d| (d.id, d.platform.clone().unwrap_or_default())).collect::<Vec<_>>()
        };
        assert_eq!(ids("[cuda(id=0) cuda(id=1)]"), [(0, "gpu".to_owned()), (1, "gpu".to_owned())]);
        assert_eq!(ids("[StreamExecutorGpuDevice(id=0, process_index=0, slice_index=0)]"), [(0, "gpu".to_owned())]);
        assert_eq!(ids("[CpuDevice(id=0)]"), [(0, "cpu".to_owned())]);
        assert_eq!(ids("[TFRT_CPU_0]"), [(0, "cpu".to_owned())]);
        assert_eq!(ids("[cuda(id=0) cuda(id=1) ... cuda(id=6) cuda(id=7)]").len(), 4);
    }
}
