//! A framework release too old for the driver it runs on: a newer driver branch dropped or changed
//! something the release relied on, and a later release of the framework fixed it. The driver is not
//! at fault and downgrading it is not the fix.

use super::{Ctx, Rule, fix};
use gpu_doctor_model::shell::ShellCommand;
use gpu_doctor_model::{Category, Finding, Severity};

const TOO_OLD_FOR_DRIVER: Rule = Rule {
    id: "framework.too_old_for_driver",
    category: Category::Other,
    severity: Severity::Error,
    trigger: "A pasted line that only a framework release predating the driver's change prints: Warp 1.6.0 to \
              1.8.0's `Failed to get driver entry point 'cuDeviceGetUuid' (CUDA error 1)` (it asks cuGetProcAddress \
              for version 110400 instead of 11040, which an R580 driver, CUDA 13.0, rejects; Warp's CUDA \
              initialisation then fails with error 36 and it runs on the CPU only).",
    source: "NVIDIA/warp:warp/native/cuda_util.cpp@v1.7.1#L215 (`get_driver_entry_point(\"cuDeviceGetUuid\", 110400, …)`; \
             the same from v1.6.0, commit 2df89edcb) and #L154 (the message); fixed in v1.8.1 (commit 3fa6c9b19, \
             CHANGELOG.md 1.8.1: \"Fix driver entry point error for `cuDeviceGetUuid` caused by using an incorrect \
             version\", NVIDIA/warp#851)",
};

pub(super) const RULES: &[Rule] = &[TOO_OLD_FOR_DRIVER];

/// A release line that fails on newer drivers: the message row that shows it, the package, the first
/// release that works, and what changed in the driver.
struct TooOld {
    message: &'static str,
    package: &'static str,
    fixed: &'static str,
    why: &'static str,
}

/// Every such line known (see [`TOO_OLD_FOR_DRIVER`]'s source for each).
const TOO_OLD: &[TooOld] = &[TooOld {
    message: "warp.uuid_entry_point_rejected",
    package: "warp-lang",
    fixed: "1.8.1",
    why: "Warp 1.6.0 to 1.8.0 ask the driver for cuDeviceGetUuid under a wrong version number (110400 for 11040); \
          drivers from R580 (CUDA 13.0) reject it, Warp's CUDA initialisation fails (`Warp CUDA error 36`), and \
          Warp goes on with the CPU only. The driver is fine: Warp 1.8.1 passes the right version.",
}];

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    for old in TOO_OLD {
        let Some(m) = cx.s.messages.iter().find(|m| m.id == old.message) else { continue };
        let mut evidence = Vec::new();
        if let Some(d) = cx.driver.version.as_ref() {
            evidence.push(format!("driver {d}"));
        }
        let requirement = format!("{}>={}", old.package, old.fixed);
        let summary = format!("{} is older than this driver supports: {} or newer is needed", old.package, old.fixed);
        let detail = format!("{} The line: {}", old.why, m.line);
        let finding = TOO_OLD_FOR_DRIVER.finding(summary, detail, evidence, None);
        // The environment that holds it, where the text showed one; else the command in words.
        let env = cx.envs().first();
        let finding = match env {
            Some(env) => finding.with_plan(fix::change(
                Some(env),
                format!("{} {} or newer", old.package, old.fixed),
                vec![fix::install(&[gpu_doctor_model::InstallFlag::Upgrade], [requirement])],
            )),
            None => {
                let pip = fix::command(
                    cx,
                    &ShellCommand::new("python").args(["-m", "pip", "install", "--upgrade"]).arg(&requirement),
                    false,
                );
                Finding { fix: Some(format!("Upgrade it in the environment that runs it: `{pip}`.")), ..finding }
            }
        };
        out.push(finding);
    }
}
