//! The facts `compare` puts side by side, each as (column, label, value) for one report. A `None`
//! value means the report does not have the fact (the part was not found, or not reported).
//!
//! Links are compared by their width now, their width at most and their generation at most (and
//! the Thunderbolt tunnel): the generation now is left out, since a GPU lowers it while idle and
//! it would set a busy node apart from idle ones.

use std::collections::BTreeMap;

use super::ColumnId;
use gpu_doctor_model::Report;
use gpu_doctor_model::{FrameworkBuild, Gpu, HostLink, ToolkitKind};

/// Column families, in display order.
const DRIVER: u8 = 0;
const GPUS: u8 = 1;
const LINK: u8 = 2;
const ECC: u8 = 3;
const MEMORY_ERRORS: u8 = 4;
const TOOLKITS: u8 = 5;
const CUDNN: u8 = 6;
const ENV: u8 = 7;
const FINDINGS: u8 = 8;

pub(crate) type Facts = BTreeMap<ColumnId, (String, Option<String>)>;

fn put(out: &mut Facts, rank: (u8, u32), key: String, label: String, value: Option<String>) {
    out.insert(ColumnId { rank, key }, (label, value));
}

/// Every compared fact of one report.
pub(crate) fn facts(report: &Report) -> Facts {
    let s = &report.snapshot;
    let mut out = Facts::new();
    let driver = s.driver.value();
    put(&mut out, (DRIVER, 0), "driver.version".into(), "Driver".into(), driver.map(|d| d.version.to_string()));
    put(
        &mut out,
        (DRIVER, 1),
        "driver.cuda".into(),
        "Driver CUDA".into(),
        driver.and_then(|d| d.cuda_version.as_ref()).map(ToString::to_string),
    );
    let gpus = s.gpus.value();
    put(&mut out, (GPUS, 0), "gpu.models".into(), "GPUs".into(), gpus.map(|g| models(g)));
    for gpu in gpus.into_iter().flatten() {
        let link = s.links.value().into_iter().flatten().find(|l| gpu.has_bus_id(&l.bus_id));
        let i = gpu.index;
        put(&mut out, (LINK, i), format!("gpu{i}.link"), format!("GPU{i} link"), link_value(gpu, link));
    }
    put(&mut out, (ECC, 0), "gpu.ecc".into(), "ECC".into(), gpus.and_then(|g| ecc(g)));
    put(&mut out, (MEMORY_ERRORS, 0), "gpu.memory_errors".into(), "Memory errors".into(), memory_errors(report));
    put(
        &mut out,
        (TOOLKITS, 0),
        "toolkits".into(),
        "CUDA toolkits".into(),
        s.toolkits.value().map(|t| {
            list(t.installs.iter().filter(|i| i.python_env.is_none() && i.kind != ToolkitKind::Pip).map(|i| {
                i.version.as_ref().map_or_else(|| format!("unknown version at {}", i.root), ToString::to_string)
            }))
        }),
    );
    put(
        &mut out,
        (CUDNN, 0),
        "cudnn".into(),
        "cuDNN".into(),
        s.cudnn.value().map(|c| {
            list(c.iter().filter(|c| c.env.is_none()).map(|c| {
                c.version.as_ref().map_or_else(|| format!("unknown version at {}", c.location), ToString::to_string)
            }))
        }),
    );
    for env in s.python_envs.value().into_iter().flatten() {
        let value = if env.frameworks.is_empty() {
            "no GPU framework".to_owned()
        } else {
            env.frameworks
                .iter()
                .map(|f| format!("{} {} ({})", f.name, f.version, build(&f.build)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        put(&mut out, (ENV, 0), format!("env.{}", env.prefix), format!("env {}", env.prefix), Some(value));
    }
    for (i, (severity, key, label)) in [
        (gpu_doctor_model::Severity::Error, "findings.error", "Error findings"),
        (gpu_doctor_model::Severity::Warning, "findings.warning", "Warning findings"),
    ]
    .into_iter()
    .enumerate()
    {
        let ids = list(report.findings.iter().filter(|f| f.severity == severity).map(|f| f.id.clone()));
        put(&mut out, (FINDINGS, u32::try_from(i).unwrap_or(u32::MAX)), key.into(), label.into(), Some(ids));
    }
    out
}

/// Sorted, without repeats, joined with `, `; `none` when empty.
fn list(items: impl Iterator<Item = String>) -> String {
    let mut items: Vec<String> = items.collect();
    items.sort();
    items.dedup();
    if items.is_empty() { "none".to_owned() } else { items.join(", ") }
}

/// `2 × NVIDIA H100 80GB HBM3`, or `1 × A, 1 × B`; `none` without a GPU.
fn models(gpus: &[Gpu]) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for g in gpus {
        *counts.entry(g.name.as_deref().unwrap_or("unnamed GPU")).or_default() += 1;
    }
    if counts.is_empty() {
        return "none".to_owned();
    }
    counts.into_iter().map(|(name, n)| format!("{n} × {name}")).collect::<Vec<_>>().join(", ")
}

/// `x8 of x16, gen 4 max`, plus the tunnel for an eGPU; from the link probe, else the GPU's own
/// values. `None` when neither says anything.
fn link_value(gpu: &Gpu, link: Option<&HostLink>) -> Option<String> {
    let (width_now, width_max, gen_max) = match link {
        Some(l) => (l.width_current, l.width_max, l.gen_max),
        None => (gpu.pcie_width_current, gpu.pcie_width_max, gpu.pcie_gen_max),
    };
    if width_now.is_none() && width_max.is_none() && gen_max.is_none() && link.and_then(|l| l.egpu.as_ref()).is_none() {
        return None;
    }
    let n = |v: Option<u32>| v.map_or_else(|| "?".to_owned(), |v| v.to_string());
    let mut text = format!("x{} of x{}, gen {} max", n(width_now), n(width_max), n(gen_max));
    if let Some(egpu) = link.and_then(|l| l.egpu.as_ref()) {
        text.push_str(&format!(", via {}", egpu.via.label()));
        if let Some(g) = egpu.tb_generation {
            text.push_str(&format!(" {g}"));
        }
    }
    Some(text)
}

/// ECC mode of each GPU: `on`, `off`, or one word per GPU when they differ; `None` when no GPU said.
fn ecc(gpus: &[Gpu]) -> Option<String> {
    let modes: Vec<Option<bool>> = gpus.iter().map(|g| g.ecc_enabled).collect();
    if modes.iter().all(Option::is_none) {
        return None;
    }
    let word = |m: &Option<bool>| match m {
        Some(true) => "on",
        Some(false) => "off",
        None => "?",
    };
    if modes.windows(2).all(|w| w[0] == w[1]) {
        return modes.first().map(|m| word(m).to_owned());
    }
    Some(modes.iter().map(word).collect::<Vec<_>>().join("/"))
}

/// Memory errors the report's benchmark run saw: ECC errors counted during the memory test and
/// words that read back wrong. `None` when there were none (or no memory test), so that a fleet
/// where only some nodes ran it sets apart only the nodes with errors.
fn memory_errors(report: &Report) -> Option<String> {
    let run = report.bench.as_ref()?;
    let mut parts = Vec::new();
    if let Some(ecc) = &run.memtest_ecc {
        for (count, what) in [(ecc.uncorrected, "uncorrected ECC"), (ecc.corrected, "corrected ECC")] {
            if let Some(n) = count.filter(|&n| n > 0) {
                parts.push(format!("{n} {what}"));
            }
        }
        if let Some(n) = ecc.retired_pages.filter(|&n| n > 0) {
            parts.push(format!("{n} retired pages"));
        }
        if let Some(n) = ecc.remapped_rows.filter(|&n| n > 0) {
            parts.push(format!("{n} remapped rows"));
        }
    }
    let bad_words: f64 = run
        .tests
        .iter()
        .filter_map(|t| t.result.as_ref())
        .flat_map(|r| &r.measurements)
        .filter(|m| matches!(m.metric, gpu_doctor_model::bench::protocol::Metric::MemtestErrors))
        .map(|m| m.value)
        .sum();
    if bad_words > 0.0 {
        parts.push(format!("{bad_words} bad words"));
    }
    if parts.is_empty() { None } else { Some(parts.join(", ")) }
}

/// `CUDA 12.1`, `CPU`, `ROCm 6.0`, `unknown build`.
fn build(b: &FrameworkBuild) -> String {
    match b {
        FrameworkBuild::Cuda { version: Some(v) } => format!("CUDA {v}"),
        FrameworkBuild::Cuda { version: None } => "CUDA".to_owned(),
        FrameworkBuild::Cpu => "CPU".to_owned(),
        FrameworkBuild::Rocm { version: Some(v) } => format!("ROCm {v}"),
        FrameworkBuild::Rocm { version: None } => "ROCm".to_owned(),
        FrameworkBuild::Unknown => "unknown build".to_owned(),
    }
}
