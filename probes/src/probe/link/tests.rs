#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;
use crate::host::Fixture;
use crate::probe::pci::testkit::{add_device, host, linux, set_attr, set_driver, set_link};
use gpu_doctor_model::{Gpu, HostLink, PciDevice, Platform, SysfsLink, TunnelKind};

const ROOT_CLASS: u32 = 0x060400;
const VGA: u32 = 0x030000;

/// A GPU as NVML reports it, with only the bus id and the link values set.
fn nvml_gpu(bus_id: &str, link: [u32; 4]) -> Gpu {
    serde_json::from_value(json!({
        "index": 0,
        "pci_bus_id": bus_id,
        "pcie_gen_current": link[0],
        "pcie_gen_max": link[1],
        "pcie_width_current": link[2],
        "pcie_width_max": link[3],
    }))
    .expect("a Gpu from JSON")
}

fn pci_device(bus_id: &str) -> PciDevice {
    PciDevice {
        bus_id: bus_id.into(),
        vendor_id: 0x10de,
        device_id: 0x2684,
        class: VGA,
        subsystem_vendor_id: None,
        subsystem_device_id: None,
        driver: Some("nvidia".into()),
    }
}

fn run(f: Fixture, devices: &[PciDevice], gpus: &[Gpu]) -> (Probed<Vec<HostLink>>, Vec<gpu_doctor_model::TraceEntry>) {
    let mut trace = Trace::new("link");
    let out = probe(&host(f), devices, gpus, &mut trace);
    (out, trace.into_entries())
}

/// A desktop: GPU at 0000:01:00.0 under root port 0000:00:01.0, Gen4 x16, idling at Gen1 x16.
fn desktop() -> Fixture {
    let mut f = linux();
    let root = add_device(&mut f, &["0000:00:01.0"], 0x8086, 0xa70d, ROOT_CLASS);
    set_driver(&mut f, &root, "pcieport");
    set_link(&mut f, &root, ("16.0 GT/s PCIe", 16), ("16.0 GT/s PCIe", 16));
    set_attr(&mut f, &root, "removable", "fixed");
    let gpu = add_device(&mut f, &["0000:00:01.0", "0000:01:00.0"], 0x10de, 0x2684, VGA);
    set_driver(&mut f, &gpu, "nvidia");
    set_link(&mut f, &gpu, ("2.5 GT/s PCIe", 16), ("16.0 GT/s PCIe", 16));
    set_attr(&mut f, &gpu, "numa_node", "-1");
    f
}

/// Adds a Thunderbolt router `name` under domain0, whose controller sits at `nhi` in the PCI tree.
fn add_router(f: &mut Fixture, nhi: &str, route: &[&str], attrs: &[(&str, &str)]) {
    let name = route.last().copied().unwrap_or_default();
    let rel = format!("devices/pci0000:00/{nhi}/domain0/{}", route.join("/"));
    f.links.insert(format!("/sys/bus/thunderbolt/devices/{name}"), format!("../../../{rel}"));
    for (attr, value) in attrs {
        set_attr(f, &format!("/sys/{rel}"), attr, value);
    }
}

/// A laptop with a Razer Core X (TB3) holding a GPU at 0000:08:00.0, behind
/// 0000:00:1c.4 → 0000:05:00.0 → 0000:06:01.0 → 0000:07:00.0; the host controller's NHI also hangs
/// off root port 0000:00:1c.4.
fn egpu_tb3() -> Fixture {
    let mut f = linux();
    let chain = ["0000:00:1c.4", "0000:05:00.0", "0000:06:01.0", "0000:07:00.0", "0000:08:00.0"];
    let bridges = [(0x8086, 0x9db4), (0x8086, 0x15ea), (0x8086, 0x15ea), (0x8086, 0x1578)];
    for (i, (vendor, device)) in bridges.into_iter().enumerate() {
        let dir = add_device(&mut f, &chain[..=i], vendor, device, ROOT_CLASS);
        set_driver(&mut f, &dir, "pcieport");
        set_link(&mut f, &dir, ("8.0 GT/s PCIe", 4), ("8.0 GT/s PCIe", 4));
        if i == 3 {
            set_attr(&mut f, &dir, "removable", "removable");
        }
    }
    let gpu = add_device(&mut f, &chain, 0x10de, 0x1e87, VGA);
    set_driver(&mut f, &gpu, "nvidia");
    set_link(&mut f, &gpu, ("2.5 GT/s PCIe", 4), ("8.0 GT/s PCIe", 16));
    set_attr(&mut f, &gpu, "numa_node", "0");

    let nhi = "0000:00:1c.4/0000:05:00.0/0000:06:00.0/0000:3b:00.0";
    f.links.insert("/sys/bus/thunderbolt/devices/domain0".into(), format!("../../../devices/pci0000:00/{nhi}/domain0"));
    add_router(&mut f, nhi, &["0-0"], &[("device_name", "XPS 15"), ("vendor_name", "Dell"), ("generation", "3")]);
    let enclosure = [
        ("device_name", "Razer Core X"),
        ("vendor_name", "Razer"),
        ("authorized", "1"),
        ("generation", "3"),
        ("rx_speed", "20.0 Gb/s"),
        ("tx_speed", "20.0 Gb/s"),
        ("rx_lanes", "2"),
        ("tx_lanes", "2"),
    ];
    add_router(&mut f, nhi, &["0-0", "0-1"], &enclosure);
    add_router(&mut f, nhi, &["0-0", "0-0:1.1"], &[("device_name", "not a router")]);
    f
}

#[test]
fn desktop_gpu_idles_below_its_gen4_x16_maximum() {
    let (out, trace) = run(desktop(), &[pci_device("0000:01:00.0")], &[]);
    let links = out.value().expect("found");
    let l = &links[0];
    assert_eq!(l.pci_path, ["0000:00:01.0", "0000:01:00.0"]);
    assert_eq!(l.upstream.len(), 1);
    assert_eq!(l.upstream[0].driver.as_deref(), Some("pcieport"));
    assert_eq!(l.upstream[0].removable, Some(false));
    assert_eq!((l.gen_current, l.gen_max, l.width_current, l.width_max), (Some(1), Some(4), Some(16), Some(16)));
    assert_eq!(l.values_from, "sysfs");
    assert_eq!(l.numa_node, None);
    assert!(l.egpu.is_none());
    assert!((l.theoretical_gbytes_per_s.unwrap() - 31.5).abs() < 0.05);
    assert!(l.bandwidth_basis.contains("Gen4 x16"), "{}", l.bandwidth_basis);
    assert_eq!(l.idle_note.as_deref(), Some(IDLE_NOTE));
    assert!(trace.iter().any(|e| e.method.contains("thunderbolt") && e.outcome == gpu_doctor_model::Outcome::Miss));
}

#[test]
fn nvml_values_win_over_sysfs_and_bus_id_forms_match() {
    let gpus = [nvml_gpu("00000000:01:00.0", [4, 4, 16, 16])];
    let (out, _) = run(desktop(), &[pci_device("0000:01:00.0")], &gpus);
    let links = out.value().expect("found");
    assert_eq!(links.len(), 1, "one GPU, not two: {links:?}");
    assert_eq!(links[0].gen_current, Some(4));
    assert_eq!(links[0].values_from, "nvml");
    assert_eq!(links[0].idle_note, None);
}

#[test]
fn egpu_behind_thunderbolt_3_is_capped_by_the_tunnel() {
    let (out, trace) = run(egpu_tb3(), &[pci_device("0000:08:00.0")], &[]);
    let l = &out.value().expect("found")[0];
    assert_eq!(l.pci_path.len(), 5);
    assert_eq!(l.upstream.len(), 4);
    assert_eq!(l.numa_node, Some(0));
    assert_eq!((l.gen_max, l.width_max), (Some(3), Some(4)), "x16 card in an x4 enclosure link");
    let e = l.egpu.as_ref().expect("an eGPU");
    assert_eq!(e.via, TunnelKind::Thunderbolt);
    assert_eq!(e.tb_generation, Some(3));
    assert_eq!(e.device_name.as_deref(), Some("Razer Core X"));
    assert_eq!(e.vendor_name.as_deref(), Some("Razer"));
    assert_eq!(e.authorized, Some(true));
    assert_eq!(e.link_gbps, Some(40.0));
    assert_eq!(e.router.as_deref(), Some("0-1"));
    assert_eq!(e.evidence.len(), 5, "{:?}", e.evidence);
    assert!((l.theoretical_gbytes_per_s.unwrap() - 2.75).abs() < 1e-9);
    assert!(l.bandwidth_basis.contains("capped by the tunnel"), "{}", l.bandwidth_basis);
    assert!(l.idle_note.is_some());
    assert!(trace.iter().any(|t| t.method == "thunderbolt" && t.detail.contains("Razer Core X")));
}

#[test]
fn usb4_enclosure_known_only_by_removable_ports_gets_the_usb4_cap() {
    let mut f = linux();
    let chain = ["0000:00:07.0", "0000:20:00.0", "0000:21:00.0"];
    for i in 0..2 {
        let dir = add_device(&mut f, &chain[..=i], 0x8086, 0x1234, ROOT_CLASS);
        set_link(&mut f, &dir, ("16.0 GT/s PCIe", 4), ("16.0 GT/s PCIe", 4));
        set_attr(&mut f, &dir, "removable", if i == 0 { "fixed" } else { "removable" });
    }
    add_device(&mut f, &chain, 0x10de, 0x2684, VGA);
    f.links.insert(
        "/sys/bus/thunderbolt/devices/domain0".into(),
        "../../../devices/pci0000:00/0000:00:0d.2/domain0".into(),
    );
    add_router(&mut f, "0000:00:0d.2", &["0-0"], &[("generation", "4")]);
    add_router(&mut f, "0000:00:0d.2", &["0-0", "0-1"], &[("generation", "4"), ("authorized", "1")]);
    let gpus = [nvml_gpu("00000000:21:00.0", [4, 4, 4, 4])];
    let (out, _) = run(f, &[], &gpus);
    let l = &out.value().expect("found")[0];
    let e = l.egpu.as_ref().expect("an eGPU");
    assert_eq!(e.via, TunnelKind::Usb4);
    assert_eq!(e.tb_generation, Some(4));
    assert_eq!(e.evidence.len(), 1, "{:?}", e.evidence);
    assert_eq!(l.theoretical_gbytes_per_s, Some(4.0));
}

#[test]
fn a_slot_gpu_on_a_machine_with_thunderbolt_is_not_an_egpu() {
    let mut f = desktop();
    let nhi = "0000:00:1c.4/0000:05:00.0/0000:06:00.0/0000:3b:00.0";
    f.links.insert("/sys/bus/thunderbolt/devices/domain0".into(), format!("../../../devices/pci0000:00/{nhi}/domain0"));
    add_router(&mut f, nhi, &["0-0"], &[("generation", "3")]);
    add_router(&mut f, nhi, &["0-0", "0-1"], &[("device_name", "TB3 Dock"), ("authorized", "1")]);
    let (out, _) = run(f, &[pci_device("0000:01:00.0")], &[]);
    assert!(out.value().expect("found")[0].egpu.is_none());
}

#[test]
fn without_sysfs_nvml_alone_still_describes_the_link() {
    let gpus = [nvml_gpu("00000000:01:00.0", [3, 3, 16, 16])];
    let (out, trace) = run(linux(), &[], &gpus);
    let l = &out.value().expect("found")[0];
    assert_eq!(l.pci_path, ["0000:01:00.0"]);
    assert!(l.upstream.is_empty());
    assert_eq!(l.values_from, "nvml");
    assert!((l.theoretical_gbytes_per_s.unwrap() - 15.75).abs() < 0.01);
    assert!(trace.iter().any(|e| e.outcome == gpu_doctor_model::Outcome::Miss));
    assert_eq!(sysfs_link(&host(linux()), "0000:01:00.0"), None);
}

#[test]
fn missing_sysfs_and_no_gpu_is_absent_and_unknown_links_say_why() {
    let (out, _) = run(linux(), &[], &[]);
    assert!(matches!(out, Probed::Absent { .. }), "{out:?}");
    let (out, _) = run(linux(), &[pci_device("0000:01:00.0")], &[]);
    let l = &out.value().expect("found")[0];
    assert_eq!(l.values_from, "none");
    assert_eq!(l.theoretical_gbytes_per_s, None);
    assert!(l.bandwidth_basis.contains("unknown"));
}

#[test]
fn sysfs_link_reads_the_four_attributes_and_tolerates_garbage() {
    let mut f = desktop();
    let h = host(f.clone());
    let link = sysfs_link(&h, "0000:01:00.0").unwrap();
    assert_eq!(
        link,
        SysfsLink { gen_current: Some(1), gen_max: Some(4), width_current: Some(16), width_max: Some(16) }
    );
    let gpu = "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0";
    set_link(&mut f, gpu, ("Unknown", 0), ("Unknown", 0));
    assert_eq!(sysfs_link(&host(f.clone()), "0000:01:00.0"), None);
    set_link(&mut f, gpu, ("8 GT/s", 255), ("garbage", 8));
    let link = sysfs_link(&host(f), "0000:01:00.0").unwrap();
    assert_eq!(link, SysfsLink { gen_current: Some(3), gen_max: None, width_current: None, width_max: Some(8) });
}

#[test]
fn other_systems_are_unsupported() {
    let f = Fixture::new(Platform { os: OsFamily::Windows, arch: "x86_64".into() });
    let (out, _) = run(f, &[pci_device("0000:01:00.0")], &[]);
    assert!(matches!(out, Probed::Unsupported { .. }), "{out:?}");
}

#[test]
fn the_kernels_bandwidth_line_goes_to_its_gpus_link_only() {
    let (out, _) = run(desktop(), &[pci_device("0000:01:00.0")], &[]);
    let mut links = out.value().expect("found").clone();
    let limit = |width| BootLinkLimit {
        at: "0000:00:01.0".into(),
        generation: Some(1),
        width,
        capable_generation: Some(4),
        capable_width: Some(16),
        available_gbps: 8.0,
        capable_gbps: Some(252.048),
        line: "pci 0000:01:00.0: …".into(),
        seen_by: gpu_doctor_model::LinkSeenBy::Kernel,
    };
    attach_boot_limits(&mut links, &[("0000:02:00.0".into(), limit(1))]);
    assert_eq!(links[0].boot_limit, None, "another device's line");
    assert_eq!(links[0].idle_note.as_deref(), Some(IDLE_NOTE), "Gen1 x16 of Gen4 x16 now");
    attach_boot_limits(&mut links, &[("0000:01:00.0".into(), limit(16))]);
    assert_eq!(links[0].idle_note.as_deref(), Some(IDLE_NOTE), "a speed-only limit keeps the idle note");
    attach_boot_limits(&mut links, &[("0000:02:00.0".into(), limit(1)), ("0000:01:00.0".into(), limit(4))]);
    assert_eq!(links[0].boot_limit.as_ref().map(|b| b.width), Some(4));
    assert_eq!(links[0].idle_note, None, "fewer lanes at enumeration are not power saving");
}

/// The whole collection gives a GPU's link the kernel's bandwidth line about it that the health probe
/// read from `dmesg`.
#[test]
fn collect_gives_the_gpus_link_the_kernels_bandwidth_line_from_dmesg() {
    let mut f = desktop();
    f.env.insert("PATH".into(), "/usr/bin".into());
    f.files.insert("/usr/bin/dmesg".into(), String::new());
    let log = "[    0.912345] pci 0000:01:00.0: 8.000 Gb/s available PCIe bandwidth, limited by 2.5 GT/s PCIe x4 link \
               at 0000:00:01.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)\n";
    f.commands.push(crate::host::CommandRecord {
        argv: vec!["/usr/bin/dmesg".into()],
        output: Some(crate::host::CmdOutput { status: Some(0), stdout: log.into(), stderr: String::new() }),
        error: None,
    });
    let snap = crate::probe::collect(&host(f), &crate::probe::Options::default());
    let links = snap.links.value().expect("found");
    let limit = links.iter().find(|l| l.bus_id == "0000:01:00.0").and_then(|l| l.boot_limit.as_ref());
    assert_eq!(
        limit.map(|b| (b.at.as_str(), b.width, b.capable_width)),
        Some(("0000:00:01.0", 4, Some(16))),
        "{links:?}"
    );
}

/// A GH200's GPU reaches the Grace CPU's memory over NVLink-C2C, 450 GB/s per direction, not over
/// the PCIe Gen5 x16 NVML reports (63 GB/s): pinned copies of about 380 GB/s are normal, not
/// "above theory".
#[test]
fn a_grace_hopper_gpu_is_judged_against_nvlink_c2c_not_pcie() {
    use gpu_doctor_judge::bench::verdict::judge;
    use gpu_doctor_model::bench::judgement::Verdict;
    use gpu_doctor_model::bench::protocol::{Measurement, Metric};
    use gpu_doctor_model::bench::unit::Unit;
    use gpu_doctor_model::bench::verdict::Facts;

    let gh200 = Gpu { name: Some("NVIDIA GH200 480GB".into()), ..nvml_gpu("00000009:01:00.0", [5, 5, 16, 16]) };
    let (out, trace) = run(linux(), &[], &[gh200]);
    let l = &out.value().expect("found")[0];
    assert_eq!((l.gen_max, l.width_max), (Some(5), Some(16)), "NVML's PCIe values are kept");
    assert_eq!(l.theoretical_gbytes_per_s, Some(450.0));
    assert!(l.bandwidth_basis.starts_with("NVLink-C2C (Grace Hopper), over which a GH200"), "{}", l.bandwidth_basis);
    assert!(l.bandwidth_basis.contains("not its PCIe link (PCIe Gen5 x16"), "{}", l.bandwidth_basis);
    assert!(trace.iter().any(|t| t.method == "product host link"), "{trace:?}");

    let facts = Facts {
        link_gbytes_per_s: l.theoretical_gbytes_per_s,
        link_basis: Some(l.bandwidth_basis.clone()),
        ..Facts::default()
    };
    let h2d = Measurement::single(Metric::HostToDevice { pinned: true }, "", 380.0, Unit::GbPerS);
    let j = judge(&h2d, &facts);
    assert_eq!(j.verdict, Verdict::Normal, "{j:?}");

    // An H100 on PCIe keeps its PCIe link.
    let h100 = Gpu { name: Some("NVIDIA H100 PCIe".into()), ..nvml_gpu("00000000:01:00.0", [5, 5, 16, 16]) };
    let (out, _) = run(linux(), &[], &[h100]);
    let l = &out.value().expect("found")[0];
    assert!((l.theoretical_gbytes_per_s.unwrap() - 63.0).abs() < 0.1, "{l:?}");
}
