#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::testkit::{add_device, host, linux, set_attr, set_driver};
use super::*;
use gpu_doctor_model::Outcome;
use gpu_doctor_model::{PciDevice, Platform};

fn probe_of(f: crate::host::Fixture) -> (Probed<Vec<PciDevice>>, Vec<gpu_doctor_model::TraceEntry>) {
    let mut trace = Trace::new("pci");
    let out = probe(&host(f), &mut trace);
    (out, trace.into_entries())
}

#[test]
fn finds_an_nvidia_gpu_with_its_driver_and_skips_its_audio_function() {
    let mut f = linux();
    let gpu = add_device(&mut f, &["0000:00:01.0", "0000:01:00.0"], 0x10de, 0x2684, 0x030000);
    set_driver(&mut f, &gpu, "nvidia");
    set_attr(&mut f, &gpu, "subsystem_vendor", "0x1043");
    set_attr(&mut f, &gpu, "subsystem_device", "0x889d");
    let audio = add_device(&mut f, &["0000:00:01.0", "0000:01:00.1"], 0x10de, 0x22ba, 0x040300);
    set_driver(&mut f, &audio, "snd_hda_intel");
    add_device(&mut f, &["0000:00:01.0"], 0x8086, 0xa70d, 0x060400);

    let (out, trace) = probe_of(f);
    let devs = out.value().expect("found");
    assert_eq!(devs.len(), 1);
    let d = &devs[0];
    assert_eq!(d.bus_id, "0000:01:00.0");
    assert_eq!((d.vendor_id, d.device_id, d.class), (0x10de, 0x2684, 0x030000));
    assert_eq!((d.subsystem_vendor_id, d.subsystem_device_id), (Some(0x1043), Some(0x889d)));
    assert_eq!(d.driver.as_deref(), Some("nvidia"));
    assert!(unclaimed(devs).is_empty());
    assert!(trace.iter().any(|e| e.outcome == Outcome::Ok && e.detail.contains("driver nvidia")));
}

#[test]
fn a_card_without_driver_or_with_nouveau_is_unclaimed() {
    let mut f = linux();
    add_device(&mut f, &["0000:00:01.0", "0000:01:00.0"], 0x10de, 0x2204, 0x030000);
    let second = add_device(&mut f, &["0000:00:03.0", "0000:02:00.0"], 0x10de, 0x20b0, 0x030200);
    set_driver(&mut f, &second, "nouveau");

    let (out, _) = probe_of(f);
    let devs = out.value().expect("found");
    assert_eq!(devs.len(), 2);
    assert_eq!(devs[0].driver, None);
    assert_eq!(devs[1].driver.as_deref(), Some("nouveau"));
    assert_eq!(devs[1].class, 0x030200);
    let ids: Vec<_> = unclaimed(devs).iter().map(|d| d.bus_id.as_str()).collect();
    assert_eq!(ids, ["0000:01:00.0", "0000:02:00.0"]);
}

#[test]
fn only_an_intel_gpu_is_absent() {
    let mut f = linux();
    let igpu = add_device(&mut f, &["0000:00:02.0"], 0x8086, 0x46a6, 0x030000);
    set_driver(&mut f, &igpu, "i915");
    let (out, trace) = probe_of(f);
    assert!(matches!(out, Probed::Absent { .. }), "{out:?}");
    assert!(out.why_not().unwrap().contains("vendor 0x10de"));
    assert!(trace.iter().any(|e| e.outcome == Outcome::Miss));
}

#[test]
fn missing_sysfs_is_a_failure_with_a_reason_not_a_panic() {
    let (out, trace) = probe_of(linux());
    match &out {
        Probed::Failed { error } => assert!(error.contains("/sys/bus/pci/devices"), "{error}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(trace[0].outcome, Outcome::Miss);
}

#[test]
fn garbage_attributes_are_skipped() {
    let mut f = linux();
    let a = add_device(&mut f, &["0000:00:01.0", "0000:01:00.0"], 0x10de, 0x2684, 0x030000);
    set_attr(&mut f, &a, "device", "not hex");
    let b = add_device(&mut f, &["0000:00:02.0", "0000:02:00.0"], 0x10de, 0x2684, 0x030000);
    set_attr(&mut f, &b, "class", "");
    let c = add_device(&mut f, &["0000:00:03.0", "0000:03:00.0"], 0x10de, 0x2684, 0x030000);
    set_attr(&mut f, &c, "vendor", "0x10de0000");
    let (out, trace) = probe_of(f);
    assert!(out.value().is_none(), "{out:?}");
    assert!(trace.iter().any(|e| e.outcome == Outcome::Error));
}

#[test]
fn other_systems_are_unsupported() {
    for os in [OsFamily::Windows, OsFamily::Macos] {
        let f = crate::host::Fixture::new(Platform { os, arch: "x86_64".into() });
        let (out, _) = probe_of(f);
        assert!(matches!(out, Probed::Unsupported { .. }), "{out:?}");
    }
}

#[test]
fn display_class_is_base_class_three() {
    assert!(is_display_class(0x030000));
    assert!(is_display_class(0x030200));
    assert!(is_display_class(0x038000));
    assert!(!is_display_class(0x040300));
    assert!(!is_display_class(0x0c0330));
    assert!(!is_display_class(0));
}
