//! The Certify page driven through egui_kittest on replayed machines: start, progress, cancel,
//! the verdict, and saving the certificate.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Result;
use egui_kittest::kittest::Queryable;
use gpu_doctor_model::certify::{Certificate, Verdict};

use crate::gui::Page;
use crate::gui::tests::{harness, settle};
use crate::ops::certify::{Certify, Machine};

/// The window on a recording, on the Certify page, reached through the Overview's button.
fn open(name: &str) -> (egui_kittest::Harness<'static, crate::gui::App>, tempfile::TempDir) {
    let (mut h, home) = harness(name);
    settle(&mut h);
    assert_eq!(h.state().page, Page::Overview);
    h.get_by_label("Certify this machine").click();
    h.run_steps(2);
    assert_eq!(h.state().page, Page::Certify);
    (h, home)
}

#[test]
fn level_1_shows_the_verdict_and_every_check_and_saves_the_certificate() {
    let (mut h, home) = open("a10-row-remap-pending-xid79");
    h.get_by_label("1 software (seconds)").click();
    h.run_steps(1);
    h.get_by_label("Start certify").click();
    settle(&mut h);
    let cert = h.state().pages.certify.certificate().expect("a certificate").clone();
    assert_eq!(cert.verdict, Verdict::Fail);
    h.get_by_label("FAIL — gpu-doctor certify, level 1 (software)");
    h.get_by_label("The NVIDIA driver logged Xid 79: GPU has fallen off the bus");
    assert!(h.query_by_label("Fix it").is_some(), "a failed certificate offers the fix");
    h.get_by_label("Save certificate").click();
    settle(&mut h);
    let dir = home.path().join("certificates").join(format!("certificate-{}", cert.started_at_unix_secs));
    let saved: Certificate =
        serde_json::from_str(&std::fs::read_to_string(dir.join("certificate.json")).unwrap()).unwrap();
    assert!(saved.intact().unwrap());
    assert!(dir.join("certificate.html").is_file() && dir.join("certificate.md").is_file());
    h.get_by_label("Certify again");
}

#[test]
fn level_2_on_a_recording_is_incomplete_and_says_so_before_it_starts() {
    let (mut h, _home) = open("hgx-h100-nvlink");
    h.get_by_label("A recording cannot be measured: levels 2–4 end INCOMPLETE here.");
    h.get_by_label("Start certify").click();
    settle(&mut h);
    assert_eq!(h.state().pages.certify.certificate().unwrap().verdict, Verdict::Incomplete);
    h.get_by_label("INCOMPLETE — gpu-doctor certify, level 2 (quick)");
}

/// A run that shows a step, then waits until it is cancelled (or 10 s), then runs for real.
fn waits_for_cancel(machine: &Machine<'_>, how: &Certify, progress: &mut dyn FnMut(&str)) -> Result<Certificate> {
    progress("waiting to be cancelled");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !how.cancel.load(Ordering::Relaxed) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    crate::ops::certify::run(machine, how, progress)
}

#[test]
fn cancel_sets_the_runs_flag_while_the_steps_show() {
    let (mut h, _home) = open("hgx-h100-nvlink");
    h.state_mut().pages.certify.runner = waits_for_cancel;
    h.get_by_label("Start certify").click();
    let deadline = Instant::now() + Duration::from_secs(10);
    while h.query_by_label("waiting to be cancelled").is_none() {
        assert!(Instant::now() < deadline, "the step never showed");
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(h.query_by_label("Start certify").is_some(), "the start button stays, disabled");
    h.get_by_label("Cancel").click();
    settle(&mut h);
    assert!(h.state().pages.certify.cancelled());
    assert!(h.state().pages.certify.certificate().is_some());
    assert!(h.query_by_label("Cancel").is_none(), "no Cancel once the run ended");
}

#[test]
fn after_a_failed_level_1_fix_it_opens_the_setup_page_and_certify_again_runs_anew() {
    let (mut h, _home) = open("a10-row-remap-pending-xid79");
    h.get_by_label("1 software (seconds)").click();
    h.run_steps(1);
    h.get_by_label("Start certify").click();
    settle(&mut h);
    let first = h.state().pages.certify.certificate().unwrap().sha256.clone();
    h.get_by_label("Certify again").click();
    settle(&mut h);
    let second = h.state().pages.certify.certificate().unwrap();
    assert_eq!(second.verdict, Verdict::Fail);
    assert_ne!(second.sha256, first, "a new run, a new certificate (its start and duration differ)");
    h.get_by_label("Fix it").click();
    h.run_steps(2);
    assert_eq!(h.state().page, Page::Setup, "Fix it goes to the Setup page");
}
