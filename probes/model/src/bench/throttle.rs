//! Whether clocks held up under the sustained load, as judged (`gpu_doctor_judge::bench::throttle`).

use serde::{Deserialize, Serialize};

/// What the telemetry says about the sustained-load window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockAnalysis {
    /// Samples inside the window.
    pub samples: usize,
    /// Median SM clock in the first quarter of the load (after a 10 % ramp), MHz.
    pub sm_clock_early_mhz: Option<f64>,
    /// Median SM clock in the last quarter, MHz.
    pub sm_clock_late_mhz: Option<f64>,
    /// How much the clock fell from early to late, percent (negative when it rose).
    pub drop_pct: Option<f64>,
    /// Hottest temperature seen, °C.
    pub max_temperature_c: Option<u32>,
    /// Highest power draw seen, W.
    pub max_power_w: Option<f64>,
    /// Throttle reasons seen during the load (idle and clock-setting reasons left out).
    pub reasons: Vec<String>,
    /// Whether the clocks fell (or thermal slowdown was reported): a finding.
    pub throttled: bool,
    /// One sentence.
    pub summary: String,
}
