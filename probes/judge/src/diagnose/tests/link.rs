//! The PCIe link: degraded under load, lowered while idle, and an eGPU's tunnel.

use super::builder::Machine;
use gpu_doctor_model::Severity;
use gpu_doctor_model::{BootLinkLimit, EgpuFacts, TunnelKind};

const BUS: &str = "0000:01:00.0";

/// An RTX 4090 at `utilization` % (`None`: not reported), its link at `now` with maximum Gen4 x16.
fn rig(now: (u32, u32), utilization: Option<u32>) -> Machine {
    Machine::linux()
        .gpu("NVIDIA GeForce RTX 4090", "8.9")
        .gpu_with(|g| {
            g.pci_bus_id = Some(BUS.into());
            g.utilization_gpu_pct = utilization;
        })
        .link(BUS, now, (4, 16), |_| {})
}

fn ids(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn below_max_is_a_warning_only_under_load() {
    let idle = ids(&["link.below_max_idle"]);
    let degraded = ids(&["link.degraded_under_load"]);
    let cases: Vec<(&str, Machine, Vec<String>)> = vec![
        ("full speed, busy", rig((4, 16), Some(100)), vec![]),
        ("full speed, idle", rig((4, 16), Some(0)), vec![]),
        ("Gen1 while idle", rig((1, 16), Some(0)), idle.clone()),
        ("Gen1 just below the load threshold", rig((1, 16), Some(29)), idle.clone()),
        ("Gen1 at the load threshold", rig((1, 16), Some(30)), degraded.clone()),
        ("Gen3 under load", rig((3, 16), Some(97)), degraded.clone()),
        ("x8 under load", rig((4, 8), Some(85)), degraded),
        ("Gen1 with utilization unknown", rig((1, 16), None), idle),
    ];
    for (name, m, want) in cases {
        assert_eq!(m.ids(), want, "{name}");
    }
}

/// The kernel's line from enumeration: the slowest link on the path at Gen`generation` x`width`, of a
/// Gen4 x16 card.
fn boot(generation: u32, width: u32) -> BootLinkLimit {
    let gbps = |g: u32, w: u32| f64::from(w) * [2.0, 4.0, 7.877, 15.754][g as usize - 1];
    BootLinkLimit {
        at: "0000:00:1c.4".into(),
        generation: Some(generation),
        width,
        capable_generation: Some(4),
        capable_width: Some(16),
        available_gbps: gbps(generation, width),
        capable_gbps: Some(gbps(4, 16)),
        line: format!("pci {BUS}: limited by … x{width} link at 0000:00:1c.4 (capable of … x16 link)"),
        seen_by: gpu_doctor_model::LinkSeenBy::Kernel,
    }
}

#[test]
fn fewer_lanes_at_enumeration_are_the_narrow_slot_whatever_nvml_says() {
    // NVML's most lanes are "in this system": an x16 card in an x4 slot reports x4 of x4, busy or not.
    let busy = |now: (u32, u32), max: (u32, u32), b: Option<BootLinkLimit>| {
        Machine::linux()
            .gpu("NVIDIA GeForce RTX 4090", "8.9")
            .gpu_with(|g| {
                g.pci_bus_id = Some(BUS.into());
                g.utilization_gpu_pct = Some(100);
            })
            .link(BUS, now, max, |l| l.boot_limit = b)
    };
    let in_x4 = |b| busy((4, 4), (4, 4), b);
    assert_eq!(in_x4(None).ids(), Vec::<String>::new(), "without the kernel's line nothing shows the slot");
    let f = in_x4(Some(boot(4, 4))).finding("link.narrow_slot");
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.summary.contains("Gen4 x4 link, narrower than the card's Gen4 x16"), "{f:#?}");
    assert!(
        f.detail.contains("at 0000:00:1c.4 ran Gen4 x4: about 7.88 GB/s per direction instead of the 31.51"),
        "{f:#?}"
    );
    assert!(f.fix.as_deref().unwrap_or("").contains("slot wired for x16"), "{f:#?}");
    assert_eq!(in_x4(Some(boot(4, 4))).ids(), ids(&["link.narrow_slot"]), "one finding, not also a degraded link");
    // Only the speed lower at enumeration: GPUs may train at 2.5 GT/s until used, so nothing is missing.
    assert_eq!(busy((4, 16), (4, 16), Some(boot(1, 16))).ids(), Vec::<String>::new());
}

#[test]
fn findings_name_the_link_and_the_check() {
    let f = rig((4, 8), Some(85)).finding("link.degraded_under_load");
    assert!(f.evidence[0].contains("PCIe Gen4 x8 now, Gen4 x16 at most"), "{:?}", f.evidence);
    assert!(f.evidence.iter().any(|e| e.contains("85 %")), "{:?}", f.evidence);
    assert!(f.detail.contains("≈ 15.8 GB/s instead of ≈ 31.5 GB/s"), "{f:#?}");
    let fix = f.fix.unwrap();
    assert!(fix.contains("x16 slot") && fix.contains("Gen4") && fix.contains("gpu-doctor bench --tests h2d"), "{fix}");

    let f = rig((1, 16), Some(0)).finding("link.below_max_idle");
    assert_eq!(f.severity, Severity::Info);
    assert!(f.detail.contains("save") || f.summary.contains("save power"), "{f:#?}");
    assert!(f.detail.contains("gpu-doctor bench --tests h2d"), "{f:#?}");
}

#[test]
fn without_host_links_the_driver_values_are_read() {
    // Windows: no sysfs, the link comes from NVML.
    let m = |util| {
        Machine::windows().gpu("NVIDIA GeForce RTX 4090", "8.9").gpu_with(|g| {
            g.pcie_gen_current = Some(1);
            g.pcie_gen_max = Some(4);
            g.pcie_width_current = Some(16);
            g.pcie_width_max = Some(16);
            g.utilization_gpu_pct = Some(util);
        })
    };
    assert_eq!(m(3).ids(), ids(&["link.below_max_idle"]));
    assert_eq!(m(60).ids(), ids(&["link.degraded_under_load"]));
    // Half-known values conclude nothing.
    let half = Machine::linux().gpu("NVIDIA GeForce RTX 4090", "8.9").gpu_with(|g| {
        g.pcie_gen_current = Some(1);
        g.utilization_gpu_pct = Some(100);
    });
    assert_eq!(half.ids(), Vec::<String>::new());
}

#[test]
fn an_egpu_tunnel_is_explained_not_flagged() {
    let egpu = |now| {
        Machine::linux()
            .gpu("NVIDIA GeForce RTX 3080", "8.6")
            .gpu_with(|g| {
                g.pci_bus_id = Some("0000:07:00.0".into());
                g.utilization_gpu_pct = Some(0);
            })
            .link("0000:07:00.0", now, (3, 4), |l| {
                l.theoretical_gbytes_per_s = Some(2.75);
                l.bandwidth_basis = "PCIe Gen3 x4; capped by the tunnel: Thunderbolt 3".into();
                l.egpu = Some(EgpuFacts {
                    via: TunnelKind::Thunderbolt,
                    tb_generation: Some(3),
                    device_name: Some("Razer Core X".into()),
                    vendor_name: Some("Razer".into()),
                    authorized: Some(true),
                    link_gbps: Some(40.0),
                    router: Some("0-1".into()),
                    evidence: vec!["bridge 8086:15ef is a Thunderbolt 3 bridge".into()],
                });
            })
    };
    let m = egpu((3, 4));
    assert_eq!(m.ids(), ids(&["link.egpu_tunnel"]));
    let f = m.finding("link.egpu_tunnel");
    assert_eq!(f.severity, Severity::Info);
    assert!(f.detail.contains("about 2.75 GB/s") && f.detail.contains("not a fault"), "{f:#?}");
    assert!(f.detail.contains("typically 2.0–2.5 GB/s"), "{f:#?}");
    assert!(f.evidence.iter().any(|e| e.contains("Razer Core X")), "{:?}", f.evidence);
    assert_eq!(egpu((1, 4)).ids(), ids(&["link.below_max_idle", "link.egpu_tunnel"]));
}

#[test]
fn pasted_text_without_links_or_gpus_says_nothing() {
    assert_eq!(Machine::pasted().ids(), Vec::<String>::new());
}

/// The RTX 4090 with the kernel's AER counts of its PCI function (`aer_dev_*` on a live machine, or
/// a pasted `dmesg`), by kind: `(correctable, nonfatal, fatal)`.
fn aer_rig(correctable: &[(&str, u64)], nonfatal: &[(&str, u64)], fatal: &[(&str, u64)]) -> Machine {
    let map = |kinds: &[(&str, u64)]| Some(kinds.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect());
    let aer =
        gpu_doctor_model::AerCounters { correctable: map(correctable), nonfatal: map(nonfatal), fatal: map(fatal) };
    let mut m = rig((4, 16), Some(0));
    let h =
        gpu_doctor_model::GpuHealth { index: 0, pci_bus_id: Some(BUS.into()), aer: Some(aer), ..Default::default() };
    m.0.health.gpus = gpu_doctor_model::Probed::found(vec![h], "sysfs");
    m
}

#[test]
fn aer_errors_on_the_gpu_are_a_warning_when_uncorrectable_and_a_note_when_corrected() {
    let zero = [("TOTAL_ERR_FATAL", 0), ("SDES", 0)];
    assert_eq!(aer_rig(&[("RxErr", 0), ("TOTAL_ERR_COR", 0)], &zero, &zero).ids(), Vec::<String>::new());
    let m = aer_rig(&[("BadTLP", 3), ("TOTAL_ERR_COR", 3)], &zero, &zero);
    assert_eq!(m.ids(), ids(&["link.aer_correctable"]));
    let m = aer_rig(&[("BadTLP", 3)], &[], &[("CmpltTO", 1), ("TOTAL_ERR_FATAL", 1)]);
    assert_eq!(m.ids(), ids(&["link.aer_uncorrectable"]), "one finding, the worse");
    let f = m.findings();
    assert_eq!(f[0].severity, Severity::Warning);
    assert!(f[0].evidence.iter().any(|e| e.contains("fatal: CmpltTO ×1")), "{:?}", f[0].evidence);
}

/// A slot at x8 of x16 where the text says M.2 drives are installed: boards give the GPU slot's CPU lanes to some
/// M.2 sockets (the ROG forum's Z790 threads), so the lane-sharing finding joins the narrow link's; no M.2 drive
/// said, or a link at one lane (a riser, not a shared slot), and it does not.
#[test]
fn a_slot_at_x8_beside_m2_drives_said_in_words_shares_its_lanes() {
    const ID: &str = "link.slot_lanes_shared_with_m2";
    let link = "My GPU is only running at x8 instead of x16 link width according to the bios.\n";
    let drives = "I have all m.2 nvme slots populated.\n";
    let ids = super::pasted_ids(&format!("{link}{drives}"));
    assert!(ids.contains(&"link.narrow_slot".to_owned()) && ids.contains(&ID.to_owned()), "{ids:?}");
    let f = super::pasted_findings(&format!("{link}{drives}")).into_iter().find(|f| f.id == ID).unwrap();
    assert!(f.evidence.iter().any(|e| e.contains("m.2 nvme slots populated")), "{f:#?}");
    assert!(!super::pasted_ids(link).contains(&ID.to_owned()));
    let riser = "The card runs at x1 instead of x16 on the riser.\n";
    assert!(!super::pasted_ids(&format!("{riser}{drives}")).contains(&ID.to_owned()));
}

/// NVIDIA/open-gpu-kernel-modules#1010 (tuxblk, verbatim): a link said to drop its generation while idle is the idle
/// note, with nothing to repair; the same words of a link down under load are not.
#[test]
fn a_link_said_to_drop_while_idle_is_the_idle_note() {
    const ID: &str = "link.below_max_idle";
    let f = super::pasted_findings("Observed PCIe link dropping to Gen1 (2.5 GT/s) while idle.\n")
        .into_iter()
        .find(|f| f.id == ID)
        .expect("said in words");
    assert!(f.fix.as_deref().is_some_and(|x| x.starts_with("Nothing to repair")), "{f:#?}");
    assert!(!super::pasted_ids("The PCIe link drops to x8 under load.\n").contains(&ID.to_owned()));
}

/// A link said in words to come down while the GPU works is the degraded link (pop-os/system76-power#393's words),
/// unless a GPU's own link reading is there to judge by its utilization; said while idle, it is not.
#[test]
fn a_link_said_to_come_down_while_busy_is_degraded() {
    let said = "Play any game and wait for the PCI Express lane downgrade to occur.";
    let mut m = Machine::pasted();
    m.0.stated_busy_downshift = Some(said.to_owned());
    assert_eq!(m.ids(), ids(&["link.degraded_under_load"]));
    let f = m.finding("link.degraded_under_load");
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.evidence.iter().any(|e| e.contains(said)), "{:?}", f.evidence);
    assert!(f.fix.as_deref().is_some_and(|x| x.contains("ASPM")), "{:?}", f.fix);
    // A reading of the GPU's own link below its maximum is judged by its utilization, not by the words.
    let mut read = rig((1, 16), Some(0));
    read.0.stated_busy_downshift = Some(said.to_owned());
    assert_eq!(read.ids(), ids(&["link.below_max_idle"]));
}

/// An eGPU said in words is the tunnel's note, with the way to hold its link at a lower generation
/// (nvrm_registry.h's RMPcieLinkSpeed: Gen 3 and up disabled, locked at load, is 0x800002A8).
#[test]
fn an_egpu_said_in_words_is_noted_with_the_link_speed_cap() {
    let found = super::pasted_findings("RTX 5060Ti + WKG-L1970C TB3/4 dock: xid79 events under CUDA load\n");
    let f = found.iter().find(|f| f.id == "link.egpu_tunnel").expect("the note");
    assert_eq!(f.severity, gpu_doctor_model::Severity::Info);
    let fix = f.fix.as_deref().unwrap();
    assert!(fix.contains("RMPcieLinkSpeed=0x800002A8") && fix.contains("0x800002AA"), "{fix}");
    assert!(super::pasted_ids("Two Thunderbolt ports on this laptop, the GPU is in the desktop\n").is_empty());
}
