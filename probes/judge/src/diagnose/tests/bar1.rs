//! The BAR1 aperture against the GPU's memory.

use super::builder::Machine;
use super::pasted_ids;

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;
const ID: &str = "topology.bar1_too_small_for_p2p";

/// `count` RTX 3090s on this machine, each with BAR1 of `bar1` bytes and memory `memory` (`None`: not read).
fn rig(count: u32, bar1: Option<u64>, memory: Option<u64>) -> Machine {
    let mut m = Machine::linux();
    for _ in 0..count {
        m = m.gpu("NVIDIA GeForce RTX 3090", "8.6").gpu_with(|g| {
            g.bar1_total_bytes = bar1;
            g.memory_total_bytes = memory;
        });
    }
    m
}

#[test]
fn bar1_below_the_memory_of_one_of_several_gpus_is_the_note() {
    let has = |m: Machine| m.ids().iter().any(|id| id == ID);
    assert!(has(rig(2, Some(256 * MIB), Some(24 * GIB))), "no Resizable BAR");
    assert!(has(rig(4, Some(32 * GIB), Some(48 * GIB))), "a 48 GB board with a 32 GiB BAR1");
    assert!(has(rig(2, Some(256 * MIB), None)), "256 MiB needs no memory size to be too small");
    assert!(!has(rig(2, Some(32 * GIB), Some(24 * GIB))), "Resizable BAR on");
    assert!(!has(rig(2, Some(16 * GIB), None)), "a large BAR1 of unknown memory");
    assert!(!has(rig(2, None, Some(24 * GIB))), "BAR1 not read");
    assert!(!has(rig(1, Some(256 * MIB), Some(24 * GIB))), "one GPU has no peer");
    let f = rig(2, Some(256 * MIB), Some(24 * GIB)).finding(ID);
    assert_eq!(f.severity, gpu_doctor_model::Severity::Info);
    assert!(f.evidence[0].contains("BAR1 256 MiB for 24 GiB of memory"), "{:?}", f.evidence);
    assert!(f.fix.as_deref().is_some_and(|x| x.contains("Resizable BAR") && x.contains("VBIOS")));
}

#[test]
fn a_pasted_bar1_block_without_its_gpu_header_is_read_for_the_listed_gpus() {
    // https://github.com/aikitoria/open-gpu-kernel-modules/issues/22: the issue form joined the
    // `nvidia-smi -L` lines into one, and `nvidia-smi -q | grep -i bar -A 3` shows the first GPU's
    // block (the other GPUs' blocks trimmed).
    let text = "GPU 0: NVIDIA GeForce RTX 3090 (UUID: GPU-59146b0b-136b-5880-5d07-bdbd769628ec) GPU 1: NVIDIA GeForce \
                RTX 3090 (UUID: GPU-94213e23-6406-aebd-c75b-174da962efd2)\n\
                lazychaser@lazychaser:~$ nvidia-smi -q | grep -i bar -A 3\n    BAR1 Memory Usage\n        \
                Total                                          : 256 MiB\n        Used                                           : 1 MiB\n";
    assert_eq!(pasted_ids(text), [ID]);
    // A single listed GPU may be a cut list: pasted text still gets the note.
    let one = text.replace(" GPU 1: NVIDIA GeForce RTX 3090 (UUID: GPU-94213e23-6406-aebd-c75b-174da962efd2)", "");
    assert_eq!(pasted_ids(&one), [ID]);
    // Without a GPU list the size has no GPU to go to.
    let alone = "    BAR1 Memory Usage\n        Total : 256 MiB\n        Used : 1 MiB\n";
    assert!(!pasted_ids(alone).iter().any(|id| id == ID));
}

#[test]
fn the_fix_follows_what_the_gpus_resizable_bar_capability_offers() {
    let with_max = |max: Option<u64>| {
        let mut m = Machine::linux();
        for _ in 0..2 {
            m = m.gpu("NVIDIA GeForce RTX 3090", "8.6").gpu_with(|g| {
                g.bar1_total_bytes = Some(256 * MIB);
                g.memory_total_bytes = Some(24 * GIB);
                g.bar1_max_bytes = max;
            });
        }
        m.finding(ID)
    };
    // It offers 32 GiB: the firmware's setting or the driver's option, no VBIOS update.
    let f = with_max(Some(32 * GIB));
    assert!(f.summary.contains("on 2 GPU(s)"), "one per GPU, not per evidence line: {}", f.summary);
    let fix = f.fix.as_deref().unwrap();
    assert!(fix.contains("up to 32 GiB") && fix.contains("NVreg_EnableResizableBar=1"), "{fix}");
    assert!(!fix.contains("VBIOS"), "{fix}");
    assert!(f.evidence.iter().any(|e| e.contains("offers BAR1 up to 32 GiB")), "{:?}", f.evidence);
    // It offers nothing above 256 MiB: only a VBIOS with Resizable BAR widens it.
    let f = with_max(Some(256 * MIB));
    let fix = f.fix.as_deref().unwrap();
    assert!(fix.contains("VBIOS offers no larger BAR1") && !fix.contains("NVreg_EnableResizableBar"), "{fix}");
    // Not read: both ways, the firmware first.
    let fix = with_max(None).fix.unwrap();
    assert!(fix.starts_with("Enable Above 4G Decoding") && fix.contains("VBIOS"), "{fix}");
}
