//! One writer of fix text: a rule that names a plan writes no fix (its words, if any, wait in the
//! plan ref), and a rule that names a driver update or a change has no words of its own; the
//! installers' `attach` writes every planned finding's fix from its plan, or (where no plan can be
//! made for that machine) gives the rule's words or says the driver update in words, never
//! pointing at a plan that is not there. Checked over every replay fixture and pasted corpus case.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use gpu_doctor_installers::{attach, plans};
use gpu_doctor_judge::diagnose::diagnose;
use gpu_doctor_kb::Kb;
use gpu_doctor_model::{PlanTarget, Report, Snapshot};
use gpu_doctor_probes::host::ReplayHost;
use gpu_doctor_probes::parse::paste::read_pasted;
use gpu_doctor_probes::probe::{Options, collect};

fn kb() -> &'static Kb {
    Kb::get().unwrap()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn sorted(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    paths
}

/// Every machine the tests know: the replay fixtures, then the corpus's pasted cases.
fn machines() -> Vec<(String, Snapshot)> {
    let mut out = Vec::new();
    for dir in sorted(&root().join("tests/fixtures")).into_iter().filter(|d| d.join("host.json").is_file()) {
        let host = ReplayHost::load(&dir).unwrap();
        let opts = host.fixture().recorded_with.clone().unwrap_or_else(|| Options { cwd: None, ..Options::default() });
        out.push((dir.display().to_string(), collect(&host, &opts)));
    }
    for folder in sorted(&root().join("tests/corpus")).into_iter().filter(|p| p.is_dir()) {
        for file in sorted(&folder).into_iter().filter(|f| f.extension().is_some_and(|e| e == "txt")) {
            let text = std::fs::read_to_string(&file).unwrap();
            let body = text.split_once("\n---\n").map_or(text.as_str(), |(_, b)| b);
            if let Ok(snap) = read_pasted(body, kb()) {
                out.push((file.display().to_string(), snap));
            }
        }
    }
    assert!(out.len() > 100, "too few machines: {}", out.len());
    out
}

#[test]
fn rules_write_no_fix_where_they_name_a_plan_and_attach_writes_every_one() {
    let mut planned = 0;
    let mut unplanned = 0;
    let mut wrong = Vec::new();
    for (name, snap) in machines() {
        let findings = diagnose(&snap, kb());
        for f in findings.iter() {
            let Some(r) = &f.plan else { continue };
            // Words of their own (no command) are allowed only for what a planner cannot cover on
            // every machine: a driver install or load problem without a branch to name, a framework
            // build where none fits. A driver update and a change are the installers' alone.
            let words_allowed = matches!(
                r.target,
                PlanTarget::Driver { min_branch: None }
                    | PlanTarget::DriverLoad { .. }
                    | PlanTarget::Thunderbolt
                    | PlanTarget::FrameworkBuild { or_driver: None, .. }
            );
            if let Some(fix) = &f.fix {
                wrong.push(format!("{name}: {} names a plan and writes the fix itself: {fix}", f.id));
            }
            if let Some(words) = r.unplanned.as_ref().filter(|_| !words_allowed) {
                wrong.push(format!("{name}: {} names a plan ({:?}) and words of its own: {words}", f.id, r.target));
            }
        }
        let mut report = Report::new(snap, findings.clone());
        attach(&mut report, kb());
        let shell = gpu_doctor_installers::planners::shell_of(&report);
        let all = plans(&report, kb());
        for (before, after) in findings.iter().zip(&report.findings) {
            if before.plan.is_none() {
                assert_eq!(before.fix, after.fix, "{name}: {}: attach changed an unplanned fix", before.id);
                continue;
            }
            let fix = after.fix.as_deref().unwrap_or_else(|| panic!("{name}: {} was left with no fix", after.id));
            if after.plan.is_none() {
                unplanned += 1;
                assert!(
                    !fix.contains("gpu-doctor fix"),
                    "{name}: {}: no plan, yet the fix points at one: {fix}",
                    after.id
                );
            }
            if let Some(r) = &after.plan {
                planned += 1;
                let plan = all.iter().find(|p| p.id == r.id).unwrap();
                assert!(fix.starts_with(&plan.prose(shell)), "{name}: {}: the fix is not its plan's prose", after.id);
            }
        }
    }
    assert!(wrong.is_empty(), "{} findings:\n{}", wrong.len(), wrong.join("\n"));
    assert!(planned > 20 && unplanned > 0, "too few findings to prove anything: {planned} planned, {unplanned} not");
}
