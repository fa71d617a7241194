//! Where the benchmark worker runs: on the CPUs of the GPU's NUMA node, read from sysfs
//! (`/sys/bus/pci/devices/BUS/numa_node` and `local_cpulist`). The runner binds the worker there
//! before it sends the plan, so the worker's buffers (pinned ones too, first touched by the worker)
//! land in the memory next to the GPU, and host copies do not cross the socket link.
//!
//! A machine with one node (`numa_node` is -1), a missing file or no local CPU are normal: the
//! worker then runs unbound, and the run says why.

use std::path::Path;

use gpu_doctor_model::PciBusId;
use gpu_doctor_probes::probe::pci::sysfs::parse_numa_node;

/// CPU numbers above this are refused as malformed (Linux's largest `NR_CPUS` is 8192).
const MAX_CPU: usize = 1 << 16;

/// The GPU's NUMA node and the CPUs local to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// The node, from `numa_node`.
    pub node: u32,
    /// Its CPUs, from `local_cpulist`: sorted, no duplicates, never empty.
    pub cpus: Vec<usize>,
}

/// Parses a kernel CPU list such as `0-15,32-47` or `3` (sorted, duplicates removed). An empty list
/// is an empty set. Anything else (a reversed range, a stride, a word) is an error, never a panic.
pub fn parse_cpulist(text: &str) -> Result<Vec<usize>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let number = |s: &str| -> Result<usize, String> {
        let s = s.trim();
        match s.parse::<usize>() {
            Ok(n) if n < MAX_CPU => Ok(n),
            Ok(n) => Err(format!("CPU {n} is out of range")),
            Err(_) => Err(format!("'{s}' is not a CPU number")),
        }
    };
    let mut cpus = Vec::new();
    for item in text.split(',') {
        let (first, last) = match item.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => (number(item)?, number(item)?),
        };
        if first > last {
            return Err(format!("'{}' is a reversed range", item.trim()));
        }
        cpus.extend(first..=last);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// The NUMA node of the PCI device `bus_id` and its CPUs, from the sysfs tree at `sysfs` (`/sys`
/// on a live machine). `Err` says in words why there is none to bind to.
pub fn placement(sysfs: &Path, bus_id: &str) -> Result<Placement, String> {
    let bus = PciBusId::parse(bus_id).map_err(|_| format!("'{bus_id}' is not a PCI bus id"))?;
    let dir = sysfs.join("bus/pci/devices").join(bus.to_string());
    let read = |name: &str| {
        let path = dir.join(name);
        std::fs::read_to_string(&path).map_err(|e| format!("{} could not be read: {e}", path.display()))
    };
    let node_text = read("numa_node")?;
    let node = parse_numa_node(&node_text).map_err(|t| format!("the GPU's numa_node is '{t}', not a number"))?;
    let Some(node) = node else {
        return Err(format!(
            "the kernel gives the GPU no NUMA node (numa_node is {}): one node, or the firmware does not say",
            node_text.trim()
        ));
    };
    let cpus = parse_cpulist(&read("local_cpulist")?).map_err(|e| format!("the GPU's local_cpulist: {e}"))?;
    if cpus.is_empty() {
        return Err(format!("no CPU is local to the GPU's NUMA node {node}"));
    }
    Ok(Placement { node, cpus })
}

/// The CPUs to bind the worker to: the GPU's local CPUs that this process may use (`allowed`,
/// what `taskset`, a cgroup or a batch scheduler left it; `None` when unknown). `Err` when none is.
pub fn cpus_to_bind(placement: &Placement, allowed: Option<&[usize]>) -> Result<Vec<usize>, String> {
    let Some(allowed) = allowed else { return Ok(placement.cpus.clone()) };
    let cpus: Vec<usize> = placement.cpus.iter().copied().filter(|c| allowed.contains(c)).collect();
    if cpus.is_empty() {
        return Err(format!(
            "none of the CPUs of the GPU's NUMA node {} ({}) is among those this process may use ({})",
            placement.node,
            gpu_doctor_model::cpu_list(placement.cpus.iter().copied()),
            gpu_doctor_model::cpu_list(allowed.iter().copied())
        ));
    }
    Ok(cpus)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn cpulists_parse_and_print() {
        assert_eq!(parse_cpulist("0-3,8-9\n").unwrap(), [0, 1, 2, 3, 8, 9]);
        assert_eq!(parse_cpulist("5").unwrap(), [5]);
        assert_eq!(parse_cpulist(" 3,1-2,2 ").unwrap(), [1, 2, 3]);
        assert_eq!(parse_cpulist("\n").unwrap(), Vec::<usize>::new());
        assert_eq!(gpu_doctor_model::cpu_list([0, 1, 2, 3, 8, 9, 11]), "0-3,8-9,11");
        assert_eq!(gpu_doctor_model::cpu_list([]), "");
    }

    #[test]
    fn malformed_cpulists_are_errors() {
        for bad in ["0-", "-3", "a", "1,,2", "4-2", "0-7:2", "0-4294967295", "99999999999999999999", "1 2"] {
            assert!(parse_cpulist(bad).is_err(), "{bad:?} was accepted");
        }
    }

    proptest::proptest! {
        #[test]
        fn cpulist_parsing_never_panics(text in "\\PC{0,40}") {
            let _ = parse_cpulist(&text);
        }

        #[test]
        fn printed_lists_parse_back(mut cpus in proptest::collection::vec(0usize..4096, 0..64)) {
            cpus.sort_unstable();
            cpus.dedup();
            proptest::prop_assert_eq!(parse_cpulist(&gpu_doctor_model::cpu_list(cpus.iter().copied())).unwrap(), cpus);
        }
    }

    /// A sysfs tree with one PCI device holding the given files.
    fn sysfs(files: &[(&str, &str)]) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let dev = root.path().join("bus/pci/devices/0000:41:00.0");
        std::fs::create_dir_all(&dev).unwrap();
        for (name, text) in files {
            std::fs::write(dev.join(name), text).unwrap();
        }
        root
    }

    #[test]
    fn the_node_and_its_cpus_come_from_sysfs() {
        let root = sysfs(&[("numa_node", "1\n"), ("local_cpulist", "16-31,48-63\n")]);
        // NVML writes an eight-digit domain; sysfs has four.
        let p = placement(root.path(), "00000000:41:00.0").unwrap();
        assert_eq!(p.node, 1);
        assert_eq!(p.cpus.len(), 32);
        assert_eq!(gpu_doctor_model::cpu_list(p.cpus.iter().copied()), "16-31,48-63");
    }

    #[test]
    fn no_node_is_a_normal_result_with_a_reason() {
        let one_node = sysfs(&[("numa_node", "-1\n"), ("local_cpulist", "0-7\n")]);
        let why = placement(one_node.path(), "0000:41:00.0").unwrap_err();
        assert!(why.contains("numa_node is -1"), "{why}");

        let missing = sysfs(&[]);
        let why = placement(missing.path(), "0000:41:00.0").unwrap_err();
        assert!(why.contains("numa_node could not be read"), "{why}");
        let why = placement(missing.path(), "0000:02:00.0").unwrap_err();
        assert!(why.contains("0000:02:00.0"), "another device: {why}");

        let no_cpus = sysfs(&[("numa_node", "2"), ("local_cpulist", "\n")]);
        assert!(placement(no_cpus.path(), "0000:41:00.0").unwrap_err().contains("no CPU"));

        let garbage = sysfs(&[("numa_node", "zero"), ("local_cpulist", "0-3")]);
        assert!(placement(garbage.path(), "0000:41:00.0").unwrap_err().contains("not a number"));
        let bad_list = sysfs(&[("numa_node", "0"), ("local_cpulist", "0-3,x")]);
        assert!(placement(bad_list.path(), "0000:41:00.0").unwrap_err().contains("local_cpulist"));

        assert!(placement(missing.path(), "../../etc").unwrap_err().contains("not a PCI bus id"));
    }

    #[test]
    fn binding_keeps_to_the_cpus_this_process_may_use() {
        let p = Placement { node: 1, cpus: (16..32).collect() };
        assert_eq!(cpus_to_bind(&p, None).unwrap(), p.cpus);
        let slurm: Vec<usize> = (0..4).chain(20..24).collect();
        assert_eq!(cpus_to_bind(&p, Some(&slurm)).unwrap(), [20, 21, 22, 23]);
        let why = cpus_to_bind(&p, Some(&[0, 1])).unwrap_err();
        assert!(why.contains("16-31") && why.contains("0-1"), "{why}");
    }
}
