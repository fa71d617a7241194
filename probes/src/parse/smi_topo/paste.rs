//! `nvidia-smi topo -m` (and `nvidia-smi -L`'s MIG lines) in pasted text, for `diagnose --from`:
//! the pairs, NUMA and CPU affinity; the GPUs' names, capabilities and UUIDs from the rest of the
//! paste where it has them, and the CUDA order from its variables. A `topo -p2p` matrix in a paste is
//! not read: the text does not say whether it answered reads or writes.

use super::{parse_list, parse_topo};
use gpu_doctor_model::{CudaOrder, MigFacts, TopoGpu, Topology};
use gpu_doctor_model::{Origin, Probed, Snapshot};

/// The format name recorded for it.
pub const FORMAT: &str = "nvidia-smi topo -m";

/// The topology the lines show, when they hold a `topo -m` matrix.
pub fn read(lines: &[String]) -> Option<Topology> {
    let text = lines.join("\n");
    let rows = parse_topo(&text).ok()?;
    let gpus = rows
        .iter()
        .map(|r| TopoGpu { index: r.index, affinity_from: "none".to_owned(), ..TopoGpu::default() })
        .collect();
    let mut topo = Topology { gpus, ..Topology::default() };
    crate::probe::topology::apply_rows(&mut topo, &rows);
    if let Ok(listed) = parse_list(&text) {
        for l in listed.into_iter().filter(|l| !l.mig.is_empty()) {
            if let Some(g) = topo.gpus.iter_mut().find(|g| g.index == l.index) {
                g.mig = Some(MigFacts { enabled: true, instances: Some(l.mig) });
            }
        }
    }
    Some(topo)
}

/// Puts a pasted topology into the snapshot read from the same text: each GPU's name, capability
/// and UUID from its GPUs, the CUDA order from its variables, the format into its origin.
pub fn apply(mut topo: Topology, snap: &mut Snapshot) {
    if let Some(gpus) = snap.gpus.value() {
        for t in &mut topo.gpus {
            if let Some(g) = gpus.iter().find(|g| g.index == t.index) {
                t.name.clone_from(&g.name);
                t.uuid.clone_from(&g.uuid);
                t.compute_capability = g.compute_capability.map(|c| c.to_string());
            }
        }
    }
    let var = |name: &str| snap.env.vars.get(name).map(String::as_str);
    topo.cuda_order = CudaOrder::derive(&topo.gpus, var("CUDA_DEVICE_ORDER"), var("CUDA_VISIBLE_DEVICES"));
    snap.topology = Probed::found(topo, FORMAT);
    if let Origin::Pasted { formats } = &mut snap.origin
        && !formats.iter().any(|f| f == FORMAT)
    {
        formats.push(FORMAT.to_owned());
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use crate::parse::paste::read_pasted;
    use gpu_doctor_kb::Kb;
    use gpu_doctor_model::LinkKind;

    #[test]
    fn a_pasted_matrix_is_read_into_the_topology() {
        let text = format!(
            "$ nvidia-smi topo -m\n```\n{}```\n",
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_topo/two-socket-8x4090-topo-m.txt"))
        );
        let s = read_pasted(&text, Kb::get().unwrap()).unwrap();
        let gpu_doctor_model::Origin::Pasted { formats } = &s.origin else { panic!("pasted") };
        assert_eq!(formats, &[super::FORMAT.to_owned()]);
        let t = s.topology.value().unwrap();
        assert_eq!((t.gpus.len(), t.pairs.len()), (8, 28));
        assert!(t.pairs.iter().all(|p| p.link == LinkKind::Sys));
        assert_eq!(t.gpus[5].numa_node, Some(1));
        let ids: Vec<String> =
            gpu_doctor_judge::diagnose::diagnose(&s, Kb::get().unwrap()).into_iter().map(|f| f.id).collect();
        assert_eq!(ids, ["topology.gpus_across_sockets"]);
    }

    #[test]
    fn with_nvidia_smi_list_the_gpus_are_named_and_mig_devices_kept() {
        let text = format!(
            "{}\n{}",
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_topo/4xa100-one-mig-list.txt")),
            "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tNV12\t0-7\t0\nGPU1\tNV12\t X \t0-7\t0\n"
        );
        let t = super::read(&text.lines().map(str::to_owned).collect::<Vec<_>>()).unwrap();
        assert_eq!(t.gpus[0].mig.as_ref().and_then(|m| m.instances.as_ref()).map(Vec::len), Some(4));
        assert_eq!(t.pair(0, 1).map(|p| p.link), Some(LinkKind::Nvlink { links: 12 }));
    }

    #[test]
    fn text_without_a_matrix_leaves_the_topology_unknown() {
        let s = read_pasted("Cuda compilation tools, release 12.4, V12.4.131\n", Kb::get().unwrap()).unwrap();
        assert!(matches!(s.topology, gpu_doctor_model::Probed::Unknown { .. }));
    }
}
