//! Applies a plan saved as JSON, printing nothing but failures: for timing apply against the same
//! commands run by hand (docs/performance.md, "Applying a plan").
//!
//! `cargo run --example apply_plan -- PLAN.json LOG_DIR`

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use gpu_doctor_installers::Plan;
use gpu_doctor_installers::apply::{ApplyOptions, StepStatus, apply};

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [plan, log_dir] = args.as_slice() else { return Err("usage: apply_plan PLAN.json LOG_DIR".into()) };
    let text = std::fs::read_to_string(plan).map_err(|e| format!("{plan}: {e}"))?;
    let plan: Plan = serde_json::from_str(&text).map_err(|e| format!("{plan}: {e}"))?;
    let opts = ApplyOptions { log_dir: log_dir.into(), step_timeout: Duration::from_secs(600) };
    let outcome = apply(&plan, &opts, &AtomicBool::new(false), &mut |_| {});
    match outcome.steps.iter().find(|s| matches!(s, StepStatus::Failed { .. } | StepStatus::Cancelled)) {
        Some(failed) => Err(format!("{failed:?}")),
        None => Ok(()),
    }
}
