#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bar1;
mod bench;
mod companions;
use crate::testing as builder;
mod containers;
mod cudnn;
mod env_vars;
mod first;
mod fit;
mod health;
mod libcuda;
mod link;
mod message_fix;
mod nvcc;
mod presence;
mod quoting;
mod too_old;
mod toolkits;
mod topology;
mod video;
mod wheels;
mod whole;
mod wsl;

use super::*;

/// The findings `diagnose --from` gives for pasted `text`.
fn pasted_findings(text: &str) -> Vec<gpu_doctor_model::Finding> {
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let snap = gpu_doctor_probes::parse::paste::read_pasted(text, kb).unwrap();
    crate::diagnose::diagnose(&snap, kb)
}

/// The finding ids `diagnose --from` gives for pasted `text`.
fn pasted_ids(text: &str) -> Vec<String> {
    pasted_findings(text).into_iter().map(|f| f.id).collect()
}

/// The fix as its rule wrote it: the finding's own, or, for a planned finding, the words for a
/// machine no plan can be made for (the planner writes the fix itself).
fn words(f: &gpu_doctor_model::Finding) -> Option<&str> {
    f.fix.as_deref().or_else(|| f.plan.as_ref()?.unplanned.as_deref())
}

/// A rule that names a plan target leaves the fix to the planner: its own words wait in the plan
/// ref, for a machine no plan can be made for.
#[test]
fn planned_findings_leave_the_fix_to_the_planner() {
    let mut planned = 0;
    let rig = || builder::Machine::linux().gpu("NVIDIA GeForce RTX 4090", "8.9").driver("550.54.14", "12.4");
    let more = [
        ("a CPU build of torch", rig().torch("2.5.1+cpu")),
        ("torch too new for the driver", rig().torch("2.9.0+cu130")),
        (
            "a GPU the driver dropped",
            builder::Machine::linux().gpu("NVIDIA GeForce GTX 1080", "6.1").driver("590.44.01", ""),
        ),
    ];
    for (name, m) in builder::hostile_machines().into_iter().chain(more) {
        for f in m.findings() {
            if f.plan.is_some() {
                planned += 1;
                assert_eq!(f.fix, None, "{name}: {} writes a fix beside its plan target", f.id);
            }
        }
    }
    assert!(planned > 5, "the machines reach too few planned findings: {planned}");
}

#[test]
fn rule_ids_are_unique_dotted_and_documented() {
    let mut ids: Vec<&str> = rules().map(|r| r.id).collect();
    let n = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), n, "duplicate rule ids");
    for r in rules() {
        assert!(
            r.id.contains('.')
                && r.id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '_'),
            "{}",
            r.id
        );
        assert!(r.trigger.len() > 20 && !r.source.is_empty(), "{} lacks a trigger or source", r.id);
    }
}

#[test]
fn each_family_names_its_rules_alike() {
    for rules in FAMILIES.iter().map(|(rules, _)| *rules).chain([super::bench::RULES]) {
        let family = rules[0].id.split('.').next().unwrap();
        for r in rules {
            assert!(r.id.starts_with(&format!("{family}.")), "{} is listed with the {family} rules", r.id);
            assert!(r.trigger.ends_with('.'), "{}: a trigger is one sentence", r.id);
        }
    }
}
