//! TensorFlow's own prints: `tf.sysconfig.get_build_info()` (an `OrderedDict([('cuda_version', '12.3'), …])`
//! or `{'cuda_version': '12.3', …}`), `tf.__version__`, `tf.config.list_physical_devices('GPU')`, and
//! its device log lines (`Created device … name: NVIDIA GeForce RTX 3090, pci bus id: 0000:01:00.0,
//! compute capability: 8.6`), and the device interconnect matrix it logs when it sets up the GPUs (CUDA's
//! peer access between each pair: `Y` or `N`).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use regex::Regex;

use super::facts::Facts;
use super::gpus::GpuFact;
use crate::probe::python::parse::PyValue;
use gpu_doctor_model::DeepTensorflow;

#[allow(clippy::unwrap_used)] // literal patterns, exercised by the tests
fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).unwrap())
}

/// `'key': value` or `('key', value)` for the build-info keys gpu-doctor reads.
fn build_info_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    re(
        &RE,
        r#"['"](cuda_version|cudnn_version|is_cuda_build|is_rocm_build|rocm_version)['"]\s*[:,]\s*(?:'([^'\n]*)'|"([^"\n]*)"|(True|False|None))"#,
    )
}

/// A device line: TensorFlow 2.x `name: …, pci bus id: …, compute capability: 8.6`, 2.1–2.4
/// `pciBusID: 0000:01:00.0 name: … computeCapability: 7.5`, XLA's (TensorFlow, JAX)
/// `StreamExecutor device (0): NVIDIA GeForce RTX 4090, Compute Capability 8.9`.
fn device_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    re(
        &RE,
        r"(?:device: (?P<index>\d+), )?name: (?P<name>[^,]+), pci bus id: (?P<bus>[0-9a-fA-F:.]+)(?:, compute capability: (?P<cc>\d+\.\d+))?|pciBusID: (?P<bus2>[0-9a-fA-F:.]+) name: (?P<name2>.+?) computeCapability: (?P<cc2>\d+\.\d+)|StreamExecutor device \((?P<index3>\d+)\): (?P<name3>.+?), Compute Capability (?P<cc3>\d+\.\d+)",
    )
}

/// `TensorFlow version: 2.15.0`.
fn version_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    re(&RE, r"(?i)^tensorflow version:?\s+'?(\d+\.\d+\.\d+[\w.+-]*)'?$")
}

/// The version printed for `tf.__version__`: on the line after one that asks for it (REPL,
/// `print(tf.__version__)`, `python -c "…"`), or `TensorFlow version: 2.15.0`.
fn version_at(lines: &[String], i: usize) -> Option<String> {
    let line = lines.get(i)?.trim();
    if let Some(c) = version_re().captures(line) {
        return c.get(1).map(|m| m.as_str().to_owned());
    }
    if !(line.contains("tf.__version__") || line.contains("tensorflow.__version__")) {
        return None;
    }
    let next = lines.get(i + 1)?.trim().trim_matches(['\'', '"']);
    let ok = next.starts_with(|c: char| c.is_ascii_digit()) && next.contains('.') && !next.contains(' ');
    ok.then(|| next.to_owned())
}

/// Reads TensorFlow's prints and device lines.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    let mut tf = DeepTensorflow::default();
    build_info(lines, facts, &mut tf);
    for (i, line) in lines.iter().enumerate() {
        let line = line.trim();
        if let Some(v) = version_at(lines, i) {
            facts.saw(i, "tf.__version__");
            tf.version.get_or_insert(v);
        }
        if line.contains("PhysicalDevice(name='/physical_device:GPU:") {
            facts.saw(i, "tf.config.list_physical_devices");
            let gpus = tf.gpus.get_or_insert_with(Vec::new);
            for part in line.split("name='").skip(1) {
                let name = part.split('\'').next().unwrap_or("");
                if name.contains(":GPU:") && !gpus.iter().any(|g| g == name) {
                    gpus.push(name.to_owned());
                }
            }
        } else if line == "[]" && i > 0 && lines[i - 1].contains("list_physical_devices") {
            facts.saw(i, "tf.config.list_physical_devices");
            tf.gpus.get_or_insert_with(Vec::new);
        }
        if let Some(c) = device_re().captures(line) {
            let get = |a: &str, b: &str, d: &str| {
                c.name(a).or_else(|| c.name(b)).or_else(|| c.name(d)).map(|m| m.as_str().trim().to_owned())
            };
            facts.saw(i, "device log");
            facts.gpu_facts.push(GpuFact {
                index: get("index", "index3", "index3").and_then(|v| v.parse().ok()),
                name: get("name", "name2", "name3"),
                bus_id: get("bus", "bus2", "bus2"),
                cc: get("cc", "cc2", "cc3").and_then(|v| v.parse().ok()),
                source: "device log",
            });
        }
    }
    if tf != DeepTensorflow::default() {
        facts.deep.tensorflow = Some(tf);
        facts.deep_from("tensorflow prints");
    }
    edge_matrix(lines, facts);
}

/// The most GPUs a matrix is read for.
const MAX_MATRIX: usize = 64;

/// The device interconnect matrix TensorFlow logs (tensorflow/tensorflow
/// tensorflow/core/common_runtime/gpu/gpu_device.cc, `BaseGPUDeviceFactory::CreateDevices`: `Device
/// interconnect … with strength 1 edge matrix:`, logged at INFO until TensorFlow 2.x moved it to VLOG(1)): a
/// header of the GPU ids, then a row per GPU, `0:   N Y`, a `Y` where `GetInterconnectMaps` found StreamExecutor's
/// `CanEnablePeerAccessTo` (cuDeviceCanAccessPeer) true; the diagonal is `N`. Each line
/// after its log prefix (`… gpu_device.cc:990] `). The first whole matrix only; a cut one gives nothing.
/// Written for tensorflow/tensorflow#24677 (four RTX 2080 Ti, every pair `N`).
fn edge_matrix(lines: &[String], facts: &mut Facts) {
    let body = |line: &str| line.rsplit_once("] ").map_or(line, |(_, b)| b).trim().to_owned();
    let Some(at) = lines.iter().position(|l| l.contains("Device interconnect") && l.contains("edge matrix:")) else {
        return;
    };
    let Some(ids) = lines.get(at + 1).map(|l| body(l)).and_then(|h| {
        let ids: Option<Vec<u32>> = h.split_whitespace().map(|w| w.parse().ok()).collect();
        ids.filter(|ids| (2..=MAX_MATRIX).contains(&ids.len()))
    }) else {
        return;
    };
    let mut access = Vec::new();
    for (row, src) in ids.iter().enumerate() {
        let Some(line) = lines.get(at + 2 + row).map(|l| body(l)) else { return };
        let Some(cells) = line.strip_prefix(&format!("{src}:")) else { return };
        let cells: Vec<&str> = cells.split_whitespace().collect();
        if cells.len() != ids.len() || cells.iter().any(|c| !matches!(*c, "Y" | "N")) {
            return;
        }
        for (dst, cell) in ids.iter().zip(&cells) {
            if dst != src {
                access.push(gpu_doctor_model::PeerAccess { src: *src, dst: *dst, can: *cell == "Y" });
            }
        }
    }
    facts.saw(at, "TensorFlow's device interconnect matrix");
    facts.peer_access.extend(access);
}

/// `tf.sysconfig.get_build_info()`, found by its keys wherever the dict is (it may wrap).
fn build_info(lines: &[String], facts: &mut Facts, tf: &mut DeepTensorflow) {
    let mut info: BTreeMap<String, PyValue> = BTreeMap::new();
    let mut first = None;
    for (i, line) in lines.iter().enumerate() {
        for c in build_info_re().captures_iter(line) {
            let (Some(key), value) = (c.get(1), c.get(2).or_else(|| c.get(3)).map(|m| m.as_str())) else { continue };
            let value = match (value, c.get(4).map(|m| m.as_str())) {
                (Some(s), _) => PyValue::Str(s.to_owned()),
                (None, Some("True")) => PyValue::Bool(true),
                (None, Some("False")) => PyValue::Bool(false),
                _ => PyValue::None,
            };
            first.get_or_insert(i);
            info.entry(key.as_str().to_owned()).or_insert(value);
        }
    }
    let Some(at) = first else { return };
    if !info.contains_key("cuda_version") && !info.contains_key("is_cuda_build") {
        return;
    }
    facts.saw(at, "tf.sysconfig.get_build_info");
    let s = |k: &str| match info.get(k) {
        Some(PyValue::Str(v)) if !v.is_empty() => Some(v.clone()),
        _ => None,
    };
    let b = |k: &str| match info.get(k) {
        Some(PyValue::Bool(v)) => Some(*v),
        _ => None,
    };
    tf.cuda_version = s("cuda_version");
    tf.cudnn_version = s("cudnn_version");
    tf.is_cuda_build = b("is_cuda_build");
    tf.is_rocm_build = b("is_rocm_build");
    facts.tf_build_info = Some(info);
}
