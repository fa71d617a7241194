//! Which GPU each CUDA index is, as a paste shows it: a program that numbers the GPUs the CUDA way
//! (llama.cpp's `ggml_cuda_init` list, TensorFlow's device lines, a framework's warning naming a
//! device index) beside nvidia-smi's list, or with each GPU's bus id. nvidia-smi and NVML number the
//! GPUs in PCI bus order; the CUDA runtime numbers them fastest first unless `CUDA_DEVICE_ORDER` is
//! `PCI_BUS_ID` (CUDA C++ Programming Guide, "CUDA Environment Variables":
//! <https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars>). Where the two
//! orders the text shows differ, the topology records the CUDA order seen, so
//! `topology.cuda_index_differs` judges it as it judges a live machine.

use gpu_doctor_kb::Kb;
use gpu_doctor_model::{CudaOrder, DeviceOrder, EnvFacts, Gpu, PciBusId, TopoGpu, Topology};

use super::gpus::{GpuFact, names_match};

/// The formats whose GPU lists are in nvidia-smi's (PCI bus) order: nvidia-smi's own, collect_env
/// (which runs `nvidia-smi -L`), gpustat and nvtop (NVML's order).
pub(super) fn in_pci_order(format: &str) -> bool {
    format.starts_with("nvidia-smi") || matches!(format, "collect_env" | "gpustat" | "nvtop")
}

/// The topology the paste's two orders show, when the CUDA order it shows differs from the PCI
/// order: `pci` the GPUs listed in nvidia-smi's order (driver index, name, bus id), `cuda` what
/// CUDA-numbering programs said, `env` the variables the text sets. `None` where the text sets
/// `CUDA_VISIBLE_DEVICES` or `CUDA_DEVICE_ORDER` (the order then is not the default's), where a
/// CUDA device cannot be matched to one listed GPU, or where the orders agree.
pub(super) fn observed(pci: &[Gpu], cuda: &[GpuFact], env: &EnvFacts) -> Option<Topology> {
    if env.vars.contains_key("CUDA_VISIBLE_DEVICES") || env.vars.contains_key("CUDA_DEVICE_ORDER") {
        return None;
    }
    // One fact per CUDA index, the first said.
    let mut devices: Vec<&GpuFact> = Vec::new();
    for f in cuda.iter().filter(|f| f.index.is_some()) {
        if !devices.iter().any(|d| d.index == f.index) {
            devices.push(f);
        }
    }
    devices.sort_by_key(|f| f.index);
    if devices.len() < 2 {
        return None;
    }
    let source = devices.first().map_or("", |f| f.source);
    let (gpus, effective, basis) = if pci.len() >= 2 {
        let mut effective = Vec::new();
        for f in &devices {
            let g = match_listed(pci, f, &devices)?;
            if effective.contains(&g.index) {
                return None;
            }
            effective.push(g.index);
        }
        let gpus: Vec<TopoGpu> = pci.iter().map(topo_gpu).collect();
        (
            gpus,
            effective,
            format!(
                "the pasted {source} numbers the CUDA devices in this order; nvidia-smi's list beside it is in PCI bus order"
            ),
        )
    } else {
        // No nvidia-smi list: PCI bus order is the order of the bus ids the program printed.
        let mut buses: Vec<PciBusId> =
            devices.iter().map(|f| f.bus_id.as_deref()?.parse().ok()).collect::<Option<_>>()?;
        buses.sort();
        buses.dedup();
        if buses.len() != devices.len() {
            return None;
        }
        let mut gpus: Vec<TopoGpu> = Vec::new();
        let mut effective = Vec::new();
        for f in &devices {
            let bus: PciBusId = f.bus_id.as_deref()?.parse().ok()?;
            let index = u32::try_from(buses.iter().position(|b| *b == bus)?).ok()?;
            effective.push(index);
            gpus.push(TopoGpu {
                index,
                name: f.name.clone(),
                bus_id: Some(bus.to_string()),
                compute_capability: f.cc.map(|c| c.to_string()),
                affinity_from: "none".to_owned(),
                ..TopoGpu::default()
            });
        }
        gpus.sort_by_key(|g| g.index);
        (
            gpus,
            effective,
            format!(
                "the pasted {source} numbers the CUDA devices in this order; nvidia-smi numbers them by PCI bus id"
            ),
        )
    };
    let mut with_pci_bus_id = effective.clone();
    with_pci_bus_id.sort_unstable();
    if effective == with_pci_bus_id {
        return None;
    }
    let cuda_order = CudaOrder {
        device_order_var: None,
        visible_devices_var: None,
        order: DeviceOrder::FastestFirst,
        fastest_first: effective.clone(),
        effective,
        with_pci_bus_id,
        unmatched: None,
        basis,
    };
    Some(Topology { gpus, pairs: Vec::new(), cuda_order, ..Topology::default() })
}

/// The order CUDA is expected to number the GPUs of a list in PCI order (nvidia-smi's, collect_env's), where the text
/// shows no CUDA order of its own: as on a live machine ([`CudaOrder::derive`]), from the compute capabilities,
/// highest first, under the variables the text sets. Only where every listed GPU's capability is known (from its name)
/// and the expected order changes what the indices name: a list of one model, or one whose faster GPUs come first, is
/// numbered alike by both.
pub(super) fn expected(pci: &[Gpu], env: &EnvFacts, kb: &Kb) -> Option<Topology> {
    if pci.len() < 2 {
        return None;
    }
    let mut gpus: Vec<TopoGpu> = pci.iter().map(topo_gpu).collect();
    for (t, g) in gpus.iter_mut().zip(pci) {
        let cc = g.compute_capability.or_else(|| kb.gpus.cc_for_name(g.name.as_deref()?));
        t.compute_capability = Some(cc?.to_string());
    }
    let var = |name: &str| env.vars.get(name).map(String::as_str);
    let mut cuda_order = CudaOrder::derive(&gpus, var("CUDA_DEVICE_ORDER"), var("CUDA_VISIBLE_DEVICES"));
    if !cuda_order.order_changes_indices() {
        return None;
    }
    cuda_order.basis = format!("the pasted GPU list is in nvidia-smi's (PCI bus) order; {}", cuda_order.basis);
    Some(Topology { gpus, pairs: Vec::new(), cuda_order, ..Topology::default() })
}

/// The listed GPU a CUDA device is: the one at its bus id, or the only one of its name when no
/// other CUDA device has that name.
fn match_listed<'a>(pci: &'a [Gpu], f: &GpuFact, all: &[&GpuFact]) -> Option<&'a Gpu> {
    if let Some(bus) = f.bus_id.as_deref()
        && let Some(g) = pci.iter().find(|g| g.has_bus_id(bus))
    {
        return Some(g);
    }
    let name = f.name.as_deref()?;
    let twins = all.iter().filter(|o| names_match(o.name.as_deref(), Some(name))).count();
    let mut same = pci.iter().filter(|g| names_match(g.name.as_deref(), Some(name)));
    match (same.next(), same.next()) {
        (Some(g), None) if twins == 1 => Some(g),
        _ => None,
    }
}

/// A listed GPU as the topology holds it.
pub(super) fn topo_gpu(g: &Gpu) -> TopoGpu {
    TopoGpu {
        index: g.index,
        name: g.name.clone(),
        bus_id: g.pci_bus_id.clone(),
        uuid: g.uuid.clone(),
        compute_capability: g.compute_capability.map(|c| c.to_string()),
        affinity_from: "none".to_owned(),
        ..TopoGpu::default()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::parse::paste::read_pasted;
    use gpu_doctor_kb::Kb;

    fn fact(index: u32, name: &str, bus_id: Option<&str>, cc: &str) -> GpuFact {
        GpuFact {
            index: Some(index),
            name: Some(name.to_owned()),
            bus_id: bus_id.map(str::to_owned),
            cc: cc.parse().ok(),
            source: "device log",
        }
    }

    fn ids(text: &str) -> Vec<String> {
        let s = read_pasted(text, Kb::get().unwrap()).unwrap();
        gpu_doctor_judge::diagnose::diagnose(&s, Kb::get().unwrap()).into_iter().map(|f| f.id).collect()
    }

    /// microsoft/onnxruntime#17546's nvidia-smi table (a Quadro P1000 at index 0, an RTX A4000 at 1), with no program
    /// numbering the GPUs the CUDA way: CUDA is expected to put the A4000 (8.6) first, as the live probe expects;
    /// not with CUDA_DEVICE_ORDER=PCI_BUS_ID set, nor with the faster GPU listed first.
    #[test]
    fn a_list_in_pci_order_with_a_slower_gpu_first_expects_cuda_to_number_it_otherwise() {
        let table = "| NVIDIA-SMI 528.89       Driver Version: 528.89       CUDA Version: 12.0     |\n\
                     |-------------------------------+----------------------+----------------------+\n\
                     | GPU  Name            TCC/WDDM | Bus-Id        Disp.A | Volatile Uncorr. ECC |\n\
                     | Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n\
                     |===============================+======================+======================|\n\
                     |   0  Quadro P1000       WDDM  | 00000000:73:00.0 Off |                  N/A |\n\
                     | 34%   37C    P0    N/A /  47W |    323MiB /  4096MiB |      0%      Default |\n\
                     +-------------------------------+----------------------+----------------------+\n\
                     |   1  NVIDIA RTX A4000   WDDM  | 00000000:A6:00.0 Off |                  Off |\n\
                     | 41%   33C    P8     9W / 140W |      0MiB / 16376MiB |      0%      Default |\n\
                     +-------------------------------+----------------------+----------------------+\n";
        let s = read_pasted(table, Kb::get().unwrap()).unwrap();
        let t = s.topology.value().expect("the expected order");
        assert_eq!(t.cuda_order.effective, [1, 0]);
        assert!(t.cuda_order.basis.contains("nvidia-smi's (PCI bus) order"), "{}", t.cuda_order.basis);
        assert!(ids(table).contains(&"topology.cuda_index_differs".to_owned()));
        let pci_order = format!("$ export CUDA_DEVICE_ORDER=PCI_BUS_ID\n{table}");
        assert!(!ids(&pci_order).contains(&"topology.cuda_index_differs".to_owned()));
        let faster_first =
            table.replace("Quadro P1000      ", "RTX PLACEHOLDER   ").replace("NVIDIA RTX A4000", "Quadro P1000    ");
        let faster_first = faster_first.replace("RTX PLACEHOLDER   ", "NVIDIA RTX A4000  ");
        assert!(!ids(&faster_first).contains(&"topology.cuda_index_differs".to_owned()), "{faster_first}");
    }

    /// tensorflow/tensorflow#32881 (iperov, 2019-09-27): TensorFlow's device 0 is the RTX 2080 Ti at
    /// bus 03, device 1 the GT 730 at bus 01; no nvidia-smi list is needed, the bus ids give PCI order.
    #[test]
    fn bus_ids_out_of_order_in_cuda_numbering_show_the_order_differs() {
        let facts = [
            fact(0, "GeForce RTX 2080 Ti", Some("0000:03:00.0"), "7.5"),
            fact(1, "GeForce GT 730", Some("0000:01:00.0"), "3.5"),
        ];
        let t = observed(&[], &facts, &EnvFacts::default()).expect("the orders differ");
        assert_eq!(
            (t.cuda_order.effective.as_slice(), t.cuda_order.with_pci_bus_id.as_slice()),
            ([1, 0].as_slice(), [0, 1].as_slice())
        );
        assert_eq!(t.gpu(1).and_then(|g| g.name.as_deref()), Some("GeForce RTX 2080 Ti"));
        assert!(t.cuda_order.order_changes_indices());
        // In bus order, or with the variables set, nothing is claimed.
        let sorted = [
            fact(0, "GeForce GT 730", Some("0000:01:00.0"), "3.5"),
            fact(1, "GeForce RTX 2080 Ti", Some("0000:03:00.0"), "7.5"),
        ];
        assert_eq!(observed(&[], &sorted, &EnvFacts::default()), None);
        for var in ["CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"] {
            let mut env = EnvFacts::default();
            env.vars.insert(var.to_owned(), "1,0".to_owned());
            assert_eq!(observed(&[], &facts, &env), None, "{var}");
        }
        // A device without a bus id, and one device alone, say nothing of the order.
        assert_eq!(
            observed(&[], &[facts[0].clone(), fact(1, "GeForce GT 730", None, "3.5")], &EnvFacts::default()),
            None
        );
        assert_eq!(observed(&[], &facts[..1], &EnvFacts::default()), None);
    }

    /// nvidia-smi's `--query-gpu … --format=csv,noheader` rows after their command, and llama.cpp's
    /// device list as ggml-cuda.cu prints it (`"  Device %d: %s, compute capability %d.%d, VMM: %s"`,
    /// one line per CUDA ordinal, `ggml_cuda_init`): lines written in the two programs' formats for a
    /// machine whose slower GPU sits on the lower bus.
    #[test]
    fn nvidia_smi_beside_llama_cpp_in_another_order_is_the_index_finding() {
        let smi = "$ nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader\n\
                   0, NVIDIA GeForce RTX 3060, 12288 MiB\n\
                   1, NVIDIA GeForce RTX 4090, 24564 MiB\n";
        let llama = "ggml_cuda_init: found 2 CUDA devices:\n  \
                     Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes\n  \
                     Device 1: NVIDIA GeForce RTX 3060, compute capability 8.6, VMM: yes\n";
        let found = ids(&format!("{smi}\n{llama}"));
        assert!(found.contains(&"topology.cuda_index_differs".to_owned()), "{found:?}");
        // The same lists in one order: no finding; two GPUs of one name cannot be told apart.
        let same = llama
            .replace("4090, compute capability 8.9", "TMP")
            .replace("3060, compute capability 8.6", "4090, compute capability 8.9")
            .replace("TMP", "3060, compute capability 8.6");
        assert!(!ids(&format!("{smi}\n{same}")).contains(&"topology.cuda_index_differs".to_owned()));
        let twins = smi.replace("RTX 3060, 12288", "RTX 4090, 24564");
        let twins_llama = llama.replace("RTX 3060, compute capability 8.6", "RTX 4090, compute capability 8.9");
        assert!(!ids(&format!("{twins}\n{twins_llama}")).contains(&"topology.cuda_index_differs".to_owned()));
        // Without its command line the rows hold no bus id, UUID or driver version: not read as a list.
        let bare = smi.lines().skip(1).collect::<Vec<_>>().join("\n");
        assert!(!ids(&format!("{bare}\n{llama}")).contains(&"topology.cuda_index_differs".to_owned()));
    }
}
