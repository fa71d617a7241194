//! Whether clocks held up under the sustained load: telemetry inside the sustained test's window,
//! early against late, with the throttle reasons NVML gave meanwhile.

use gpu_doctor_model::bench::record::TelemetryPoint;
use gpu_doctor_model::bench::stats::Stats;
use gpu_doctor_model::bench::throttle::ClockAnalysis;

/// A fall of the SM clock from the early to the late part of the load by this share or more is a
/// finding.
pub const CLOCK_DROP_FINDING_PCT: f64 = 10.0;

/// Throttle reasons that mean heat.
const THERMAL: [&str; 3] = ["sw_thermal_slowdown", "hw_thermal_slowdown", "hw_slowdown"];
/// Throttle reasons that mean the power limit.
const POWER: [&str; 2] = ["sw_power_cap", "hw_power_brake_slowdown"];
/// Reasons that say nothing about load (idle, user clock settings).
const BENIGN: [&str; 3] = ["gpu_idle", "applications_clocks_setting", "display_clock_setting"];

/// The median SM clock NVML reported between `from_ms` and `to_ms`, MHz, and how many samples
/// carried one; `None` without any.
pub fn median_sm_clock(points: &[TelemetryPoint], from_ms: u64, to_ms: u64) -> Option<(f64, usize)> {
    let clocks: Vec<f64> = points
        .iter()
        .filter(|p| p.t_ms >= from_ms && p.t_ms <= to_ms)
        .filter_map(|p| p.sample.clock_sm_mhz.map(f64::from))
        .collect();
    Stats::from_samples(&clocks).map(|s| (s.median, clocks.len()))
}

/// Analyses the telemetry between `from_ms` and `to_ms`; `None` without samples in the window.
pub fn analyze(points: &[TelemetryPoint], from_ms: u64, to_ms: u64) -> Option<ClockAnalysis> {
    let window: Vec<&TelemetryPoint> = points.iter().filter(|p| p.t_ms >= from_ms && p.t_ms <= to_ms).collect();
    if window.is_empty() {
        return None;
    }
    let span = to_ms.saturating_sub(from_ms).max(1);
    #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "a share in 0..=1 of span")]
    let at = |share: f64| from_ms + (span as f64 * share) as u64;
    // Both parts lie inside the window.
    let median_clock = |lo: u64, hi: u64| median_sm_clock(points, lo, hi).map(|(mhz, _)| mhz);
    let early = median_clock(at(0.10), at(0.325));
    let late = median_clock(at(0.75), to_ms);
    let drop_pct = early.zip(late).filter(|(e, _)| *e > 0.0).map(|(e, l)| (e - l) / e * 100.0);
    let mut reasons: Vec<String> = Vec::new();
    for p in &window {
        for r in p.sample.throttle_reasons.iter().flatten() {
            if !BENIGN.contains(&r.as_str()) && !reasons.contains(r) {
                reasons.push(r.clone());
            }
        }
    }
    let thermal = reasons.iter().any(|r| THERMAL.contains(&r.as_str()));
    let power = reasons.iter().any(|r| POWER.contains(&r.as_str()));
    let fell = drop_pct.is_some_and(|d| d >= CLOCK_DROP_FINDING_PCT);
    let cause = match (thermal, power) {
        (true, true) => "thermal and power throttling",
        (true, false) => "thermal throttling",
        (false, true) => "power throttling (the GPU is at its power limit)",
        (false, false) => "no throttle reason reported",
    };
    let summary = match (early, late, drop_pct) {
        (Some(e), Some(l), Some(d)) if fell => {
            format!("the SM clock fell from {e:.0} to {l:.0} MHz ({d:.0} %) under load: {cause}")
        }
        (Some(e), Some(l), _) if thermal => {
            format!("the SM clock went from {e:.0} to {l:.0} MHz, but the GPU reported {cause}")
        }
        (Some(e), Some(l), _) => format!("the SM clock held under load ({e:.0} → {l:.0} MHz)"),
        _ => "NVML did not report the SM clock during the load".to_owned(),
    };
    Some(ClockAnalysis {
        samples: window.len(),
        sm_clock_early_mhz: early,
        sm_clock_late_mhz: late,
        drop_pct,
        max_temperature_c: window.iter().filter_map(|p| p.sample.temperature_c).max(),
        max_power_w: window.iter().filter_map(|p| p.sample.power_draw_mw).max().map(|mw| f64::from(mw) / 1000.0),
        reasons,
        throttled: fell || thermal,
        summary,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use gpu_doctor_model::telemetry::GpuTelemetry;

    use super::*;

    fn series(clocks: &[(u64, u32, &[&str])]) -> Vec<TelemetryPoint> {
        clocks
            .iter()
            .map(|(t, mhz, reasons)| TelemetryPoint {
                t_ms: *t,
                sample: GpuTelemetry {
                    clock_sm_mhz: Some(*mhz),
                    temperature_c: Some(70),
                    power_draw_mw: Some(300_000),
                    throttle_reasons: Some(reasons.iter().map(|r| (*r).to_owned()).collect()),
                    ..GpuTelemetry::default()
                },
            })
            .collect()
    }

    #[test]
    fn steady_clocks_are_fine_even_at_the_power_cap() {
        let pts: Vec<_> = (0..100).map(|i| (i * 100, 1980, &["sw_power_cap"][..])).collect();
        let a = analyze(&series(&pts), 0, 10_000).unwrap();
        assert!(!a.throttled, "{a:?}");
        assert_eq!(a.reasons, ["sw_power_cap"]);
        assert!(a.summary.contains("held"));
        assert_eq!(a.max_power_w, Some(300.0));
    }

    #[test]
    fn falling_clocks_with_thermal_reasons_are_a_finding() {
        let pts: Vec<_> = (0..100u64)
            .map(|i| if i < 50 { (i * 100, 1980, &[][..]) } else { (i * 100, 1400, &["sw_thermal_slowdown"][..]) })
            .collect();
        let a = analyze(&series(&pts), 0, 10_000).unwrap();
        assert!(a.throttled);
        assert!((a.drop_pct.unwrap() - 29.3).abs() < 0.1);
        assert!(a.summary.contains("thermal throttling"), "{}", a.summary);
    }

    #[test]
    fn idle_samples_outside_the_window_are_ignored() {
        let mut pts: Vec<_> = (0..50u64).map(|i| (i * 100, 1980, &["gpu_idle"][..])).collect();
        pts.extend((50..100u64).map(|i| (i * 100, 210, &["gpu_idle"][..])));
        let a = analyze(&series(&pts), 0, 4_900).unwrap();
        assert!(!a.throttled);
        assert!(a.reasons.is_empty());
        assert!(analyze(&series(&pts), 20_000, 30_000).is_none());
    }
}
