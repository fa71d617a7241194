//! How the GPUs connect: NVML's topology answers (recorded, so replays carry them), else
//! `nvidia-smi topo -m` and `topo -p2p r|w` for the pairs and `nvidia-smi -L` for MIG devices; each
//! GPU's NUMA node and local CPUs from NVML, else sysfs (`numa_node`, `local_cpulist`), else the
//! matrix's affinity columns; and the CUDA order the variables make of them.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::pci::sysfs::{device_dir, read_attr, read_numa_node};
use crate::host::{Cmd, Host, HostError, NvmlReport, NvmlTopology};
use crate::parse::smi_topo::{self, TopoRow};
use gpu_doctor_model::{
    CudaOrder, EnvFacts, Gpu, GpuPair, LinkKind, MigFacts, OsFamily, P2pStatus, PciBusId, TopoGpu, Topology,
};
use gpu_doctor_model::{Probed, Trace};

/// Builds the topology of the GPUs the gpus probe found.
pub fn probe(
    host: &dyn Host,
    nvml: &Result<NvmlReport, HostError>,
    gpus: Option<&[Gpu]>,
    env: &EnvFacts,
    trace: &mut Trace,
) -> Probed<Topology> {
    let Some(gpus) = gpus.filter(|g| !g.is_empty()) else {
        let reason = "no GPU in the driver, so nothing to connect";
        trace.miss("gpus", reason);
        return Probed::absent(reason);
    };
    let mut topo = Topology { gpus: gpus.iter().map(base).collect(), ..Topology::default() };
    let mut sources: Vec<&str> = Vec::new();
    match nvml.as_ref().ok().and_then(|r| r.topology.as_ref()) {
        Some(t) => {
            apply_nvml(&mut topo, t);
            trace.ok("nvml topology", format!("{} GPU(s), {} pair(s)", t.devices.len(), t.pairs.len()));
            sources.push("nvml");
        }
        None => {
            let why = match nvml {
                Ok(_) => "NVML's answer holds no topology (recorded before gpu-doctor asked for it)".to_owned(),
                Err(e) => e.to_string(),
            };
            trace.miss("nvml topology", why);
            if from_smi(host, &mut topo, trace) {
                sources.push("nvidia-smi");
            }
        }
    }
    if host.platform().os == OsFamily::Linux && from_sysfs(host, &mut topo, trace) {
        sources.push("sysfs");
    }
    let var = |name: &str| env.vars.get(name).map(String::as_str);
    topo.cuda_order = CudaOrder::derive(&topo.gpus, var("CUDA_DEVICE_ORDER"), var("CUDA_VISIBLE_DEVICES"));
    for g in &mut topo.gpus {
        if g.affinity_from.is_empty() {
            "none".clone_into(&mut g.affinity_from);
        }
    }
    let source = if sources.is_empty() { "the gpus probe".to_owned() } else { sources.join(", ") };
    Probed::found(topo, source)
}

/// A GPU as the gpus probe found it, before any topology answer.
fn base(g: &Gpu) -> TopoGpu {
    TopoGpu {
        index: g.index,
        name: g.name.clone(),
        bus_id: g.pci_bus_id.as_deref().and_then(PciBusId::sysfs_form),
        uuid: g.uuid.clone(),
        compute_capability: g.compute_capability.map(|c| c.to_string()),
        // The instances of a GPU in MIG mode come from NVML's topology answer or `nvidia-smi -L`.
        mig: g.mig_enabled.map(|enabled| MigFacts { enabled, instances: None }),
        ..TopoGpu::default()
    }
}

fn apply_nvml(topo: &mut Topology, t: &NvmlTopology) {
    for d in &t.devices {
        let Some(g) = topo.gpus.iter_mut().find(|g| g.index == d.index) else { continue };
        g.numa_node = d.numa_node;
        g.cpu_affinity.clone_from(&d.cpu_affinity);
        if g.numa_node.is_some() || g.cpu_affinity.is_some() {
            "nvml".clone_into(&mut g.affinity_from);
        }
        g.nvlinks.clone_from(&d.nvlinks);
        if d.mig.is_some() {
            g.mig.clone_from(&d.mig);
        }
        // "Not supported" (no NVLink on a GeForce, no NUMA node on one socket) is an answer, not a gap.
        for (call, why) in d.unreported.iter().filter(|(_, why)| !is_not_supported(why)) {
            topo.notes.push(format!("GPU {}: NVML did not answer {call}: {why}", d.index));
        }
    }
    for p in &t.pairs {
        let link = if p.p2p_nvlink == Some(P2pStatus::Ok) {
            LinkKind::Nvlink { links: nvlinks_between(topo, p.a, p.b) }
        } else {
            p.pcie.unwrap_or(LinkKind::Unknown)
        };
        topo.pairs.push(GpuPair {
            a: p.a.min(p.b),
            b: p.a.max(p.b),
            link,
            p2p_read: p.p2p_read,
            p2p_write: p.p2p_write,
            p2p_atomics: p.p2p_atomics,
        });
    }
}

/// True for NVML's "not supported" (`NVML_ERROR_NOT_SUPPORTED`, as nvml-wrapper words it).
fn is_not_supported(why: &str) -> bool {
    why.contains("not available on the target device") || why.to_ascii_lowercase().contains("not supported")
}

/// Active NVLinks of `a` that end at `b`; with none (an NVSwitch between them, as on HGX boards) every
/// active link of `a`, which is what `nvidia-smi topo -m` counts there.
fn nvlinks_between(topo: &Topology, a: u32, b: u32) -> u32 {
    let (Some(ga), Some(gb)) = (topo.gpu(a), topo.gpu(b)) else { return 0 };
    let active: Vec<_> = ga.nvlinks.iter().filter(|l| l.active).collect();
    let to_b = active
        .iter()
        .filter(|l| l.remote_bus_id.as_deref().zip(gb.bus_id.as_deref()).is_some_and(|(r, own)| PciBusId::same(r, own)))
        .count();
    u32::try_from(if to_b > 0 { to_b } else { active.len() }).unwrap_or(u32::MAX)
}

/// Runs nvidia-smi (`program`, found once by the caller) with `args`; its standard output, or why
/// not (traced either way).
fn smi(host: &dyn Host, program: Option<&Path>, args: &[&str], trace: &mut Trace) -> Option<String> {
    let method = format!("nvidia-smi {}", args.join(" "));
    let Some(program) = program else {
        trace.miss(&method, "nvidia-smi not found on PATH");
        return None;
    };
    let argv = std::iter::once(program.to_string_lossy().into_owned()).chain(args.iter().map(|a| (*a).to_owned()));
    match host.run(&Cmd::new(argv).timeout(Duration::from_secs(15))) {
        Ok(out) if out.success() => Some(out.stdout),
        Ok(out) => {
            let said = if out.stdout.trim().is_empty() { out.stderr.trim() } else { out.stdout.trim() };
            trace.error(&method, format!("exit {:?}: {said}", out.status));
            None
        }
        Err(e) => {
            trace.error(&method, e.to_string());
            None
        }
    }
}

/// The nvidia-smi fallback: the link matrix and P2P matrices when there are several GPUs, `-L` when
/// a GPU is in MIG mode. True when it answered something.
fn from_smi(host: &dyn Host, topo: &mut Topology, trace: &mut Trace) -> bool {
    let matrix = topo.gpus.len() > 1;
    let list = topo.gpus.iter().any(|g| g.mig.as_ref().is_some_and(|m| m.enabled && m.instances.is_none()));
    if !matrix && !list {
        return false;
    }
    // Looked up once for all the calls below.
    let program = super::driver::smi_program(host);
    let program = program.as_deref();
    let mut answered = false;
    if matrix && let Some(text) = smi(host, program, &["topo", "-m"], trace) {
        match smi_topo::parse_topo(&text) {
            Ok(rows) => {
                trace.ok("nvidia-smi topo -m", format!("{} GPU row(s)", rows.len()));
                apply_rows(topo, &rows);
                answered = true;
            }
            Err(e) => trace.error("nvidia-smi topo -m", e.to_string()),
        }
        let mut p2p = BTreeMap::new();
        for kind in ["r", "w"] {
            let Some(text) = smi(host, program, &["topo", "-p2p", kind], trace) else { continue };
            match smi_topo::parse_p2p(&text) {
                Ok(cells) => {
                    trace.ok(format!("nvidia-smi topo -p2p {kind}"), format!("{} cell(s)", cells.len()));
                    p2p.insert(kind, cells);
                }
                Err(e) => trace.error(format!("nvidia-smi topo -p2p {kind}"), e.to_string()),
            }
        }
        for pair in &mut topo.pairs {
            let cell = |kind: &str| p2p.get(kind).and_then(|c| c.get(&(pair.a, pair.b)).copied());
            (pair.p2p_read, pair.p2p_write) = (cell("r"), cell("w"));
        }
    }
    if list {
        answered |= mig_from_list(host, program, topo, trace);
    }
    answered
}

fn mig_from_list(host: &dyn Host, program: Option<&Path>, topo: &mut Topology, trace: &mut Trace) -> bool {
    let Some(text) = smi(host, program, &["-L"], trace) else { return false };
    match smi_topo::parse_list(&text) {
        Ok(listed) => {
            trace.ok("nvidia-smi -L", format!("{} GPU(s)", listed.len()));
            for l in listed {
                if let Some(m) = topo.gpus.iter_mut().find(|g| g.index == l.index).and_then(|g| g.mig.as_mut())
                    && m.enabled
                {
                    m.instances = Some(l.mig);
                }
            }
            true
        }
        Err(e) => {
            trace.error("nvidia-smi -L", e.to_string());
            false
        }
    }
}

pub(crate) fn apply_rows(topo: &mut Topology, rows: &[TopoRow]) {
    for row in rows {
        if let Some(g) = topo.gpus.iter_mut().find(|g| g.index == row.index) {
            g.numa_node = row.numa_node;
            g.cpu_affinity.clone_from(&row.cpu_affinity);
            if g.numa_node.is_some() || g.cpu_affinity.is_some() {
                "nvidia-smi topo -m".clone_into(&mut g.affinity_from);
            }
        }
        for (other, link) in row.links.range(row.index + 1..) {
            topo.pairs.push(GpuPair {
                a: row.index,
                b: *other,
                link: *link,
                p2p_read: None,
                p2p_write: None,
                p2p_atomics: None,
            });
        }
    }
}

/// Fills NUMA node and local CPUs from sysfs where NVML did not say. True when sysfs said anything.
fn from_sysfs(host: &dyn Host, topo: &mut Topology, trace: &mut Trace) -> bool {
    let mut answered = false;
    for g in &mut topo.gpus {
        if g.affinity_from == "nvml" {
            continue;
        }
        let Some(bus) = g.bus_id.clone() else { continue };
        let dir = device_dir(host, &bus);
        let numa = read_numa_node(host, &dir);
        let cpus = read_attr(host, &dir, "local_cpulist").ok();
        if numa.is_none() && cpus.is_none() {
            continue;
        }
        let numa_node = numa.as_ref().and_then(|(_, node)| *node);
        let cpu_affinity = cpus.filter(|c| !c.is_empty());
        trace.ok(
            format!("sysfs {bus}"),
            format!(
                "numa_node {}, local_cpulist {}",
                numa.as_ref().map_or("-", |(text, _)| text.as_str()),
                cpu_affinity.as_deref().unwrap_or("-")
            ),
        );
        if numa_node.is_none() && cpu_affinity.is_none() {
            continue;
        }
        g.numa_node = numa_node.or(g.numa_node);
        g.cpu_affinity = cpu_affinity.or(g.cpu_affinity.take());
        "sysfs".clone_into(&mut g.affinity_from);
        answered = true;
    }
    answered
}

#[cfg(test)]
mod tests;
