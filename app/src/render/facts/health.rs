//! The health section: each GPU's memory errors, repairs waiting for a reset, clock-event reasons,
//! limits and modes, and the kernel log's Xid events.

use gpu_doctor_model::Snapshot;
use gpu_doctor_model::{EccCounters, Gpu, GpuHealth, XidEvent};

use super::{Section, Tone, missing, or_q};

/// The health section, when anything about health is known (live, replayed, or a report that has it).
pub(super) fn sections(s: &Snapshot) -> Vec<Section> {
    let h = &s.health;
    if h.gpus.value().is_none() && h.xid_events.value().is_none() {
        let mut sec = missing("Health", &h.gpus, "not read", Tone::Plain);
        sec.details.push(kernel_log_line(s));
        return vec![sec];
    }
    let list = h.gpus.value().map_or(&[][..], Vec::as_slice);
    let events = h.xid_events.value();
    let gpus = s.gpus.value().map_or(&[][..], Vec::as_slice);
    let mut troubles = Vec::new();
    let mut details = Vec::new();
    for gh in list {
        let gpu = gpus.iter().find(|g| g.index == gh.index);
        troubles.extend(trouble(gpu, gh));
        details.push(gpu_line(gpu, gh));
    }
    let events = events.map_or(&[][..], Vec::as_slice);
    if !events.is_empty() {
        let mut numbers: Vec<u32> = events.iter().map(|e| e.xid).collect();
        numbers.sort_unstable();
        numbers.dedup();
        let list: Vec<String> = numbers.iter().map(|n| n.to_string()).collect();
        troubles.push(format!("Xid {} in the kernel log", list.join(", ")));
    }
    if let Some(why) = h.gpus.why_not() {
        details.push(format!("GPU health not read: {why}"));
    }
    details.push(kernel_log_line(s));
    let (headline, tone) = if troubles.is_empty() && list.is_empty() {
        let log = if h.xid_events.value().is_some() { "; no Xid lines in the kernel log" } else { "" };
        (format!("no GPU to read{log}"), Tone::Plain)
    } else if troubles.is_empty() {
        (format!("nothing wrong seen on {} GPU(s)", list.len()), Tone::Good)
    } else {
        (troubles.join("; "), Tone::Warn)
    };
    let mut sec = Section::new("Health", headline, tone);
    sec.details = details;
    vec![sec]
}

/// What is wrong with one GPU, in a few words each.
fn trouble(gpu: Option<&Gpu>, h: &GpuHealth) -> Vec<String> {
    let m = &h.memory_errors;
    let who = format!("GPU {}", h.index);
    let mut out = Vec::new();
    if m.uncorrected_volatile.unwrap_or(0) > 0 {
        out.push(format!("{who}: uncorrectable ECC errors"));
    }
    if m.remapped_rows_failure == Some(true) {
        out.push(format!("{who}: a row remap failed"));
    }
    if m.repair_pending() {
        out.push(format!("{who}: memory repair pending a reset"));
    }
    if !h.slowdowns().is_empty() {
        out.push(format!("{who}: slowed down now"));
    }
    let mode = gpu.and_then(|g| g.compute_mode.as_deref()).unwrap_or("");
    if mode.to_ascii_lowercase().starts_with("exclusive") || mode.eq_ignore_ascii_case("prohibited") {
        out.push(format!("{who}: compute mode {mode}"));
    }
    out
}

fn watts(mw: Option<u32>) -> String {
    mw.map_or_else(|| "?".to_owned(), |mw| format!("{:.0} W", f64::from(mw) / 1000.0))
}

fn flag(v: Option<bool>, yes: &str, no: &str) -> String {
    v.map_or_else(|| "?".to_owned(), |v| if v { yes.to_owned() } else { no.to_owned() })
}

/// One GPU's health on one line.
fn gpu_line(gpu: Option<&Gpu>, h: &GpuHealth) -> String {
    let bus = h.pci_bus_id.as_deref().map_or_else(String::new, |b| format!(" ({b})"));
    let mut parts = vec![ecc_text(gpu, h)];
    parts.extend(repairs_text(&h.memory_errors));
    if let Some(reasons) = &h.clock_event_reasons {
        parts.push(if reasons.is_empty() {
            "clocks not held down".to_owned()
        } else {
            format!("clocks held down by {}", reasons.join(", "))
        });
    }
    if h.power_limit_default_mw.is_some() || gpu.is_some_and(|g| g.power_limit_mw.is_some()) {
        let range = match (h.power_limit_min_mw, h.power_limit_max_mw) {
            (Some(_), Some(_)) => format!(", {}–{}", watts(h.power_limit_min_mw), watts(h.power_limit_max_mw)),
            _ => String::new(),
        };
        parts.push(format!(
            "power limit {} (default {}{range})",
            watts(gpu.and_then(|g| g.power_limit_mw)),
            watts(h.power_limit_default_mw)
        ));
    }
    if let Some(fan) = h.fan_speed_pct {
        parts.push(format!("fan {fan} %"));
    }
    if h.temperature_slowdown_c.is_some() || h.temperature_shutdown_c.is_some() {
        parts.push(format!(
            "slowdown at {} °C, shutdown at {} °C",
            or_q(h.temperature_slowdown_c),
            or_q(h.temperature_shutdown_c)
        ));
    }
    if let Some(g) = gpu {
        parts.push(format!(
            "compute mode {}, persistence {}",
            g.compute_mode.as_deref().unwrap_or("?"),
            flag(g.persistence_mode, "on", "off")
        ));
    }
    format!("GPU {}{bus}: {}", h.index, parts.join("; "))
}

fn ecc_text(gpu: Option<&Gpu>, h: &GpuHealth) -> String {
    let m = &h.memory_errors;
    let now = gpu.and_then(|g| g.ecc_enabled).or(m.ecc_enabled);
    let mode = match (now, h.ecc_pending) {
        (Some(n), Some(p)) if n != p => {
            format!("ECC {} ({} after a reboot)", flag(Some(n), "on", "off"), flag(Some(p), "on", "off"))
        }
        (n, _) => format!("ECC {}", flag(n, "on", "off")),
    };
    if m.corrected_volatile.is_none() && m.uncorrected_volatile.is_none() && m.corrected_aggregate.is_none() {
        return mode;
    }
    format!(
        "{mode}, errors since driver load {} corrected / {} uncorrected, lifetime {} / {}",
        or_q(m.corrected_volatile),
        or_q(m.uncorrected_volatile),
        or_q(m.corrected_aggregate),
        or_q(m.uncorrected_aggregate)
    )
}

fn repairs_text(m: &EccCounters) -> Vec<String> {
    let mut out = Vec::new();
    if m.remapped_rows_corrected.is_some() || m.remapped_rows_uncorrected.is_some() {
        out.push(format!(
            "remapped rows {} correctable / {} uncorrectable{}{}",
            or_q(m.remapped_rows_corrected),
            or_q(m.remapped_rows_uncorrected),
            if m.remapped_rows_pending == Some(true) { ", remap pending" } else { "" },
            if m.remapped_rows_failure == Some(true) { ", remap FAILED" } else { "" }
        ));
    }
    if m.retired_pages_single_bit.is_some() || m.retired_pages_double_bit.is_some() {
        out.push(format!(
            "retired pages {} single-bit / {} double-bit{}",
            or_q(m.retired_pages_single_bit),
            or_q(m.retired_pages_double_bit),
            if m.retired_pages_pending == Some(true) { ", retirement pending" } else { "" }
        ));
    }
    out
}

/// `Kernel log (dmesg): 2 Xid line(s): Xid 79 on 0000:91:00.0, …`, or why it was not read.
fn kernel_log_line(s: &Snapshot) -> String {
    let p = &s.health.xid_events;
    match p.value() {
        Some(events) if events.is_empty() => {
            format!("Kernel log ({}): no Xid lines since boot", p.source().unwrap_or("?"))
        }
        Some(events) => {
            let shown: Vec<String> = events.iter().rev().take(5).map(event_text).collect();
            let more = events.len().saturating_sub(shown.len());
            let more = if more > 0 { format!(" and {more} earlier") } else { String::new() };
            format!(
                "Kernel log ({}): {} Xid line(s), latest: {}{more}",
                p.source().unwrap_or("?"),
                events.len(),
                shown.join(", ")
            )
        }
        None => format!("Kernel log not read: {}", p.why_not().unwrap_or("?")),
    }
}

fn event_text(e: &XidEvent) -> String {
    match &e.pci_bus_id {
        Some(bus) => format!("Xid {} on {bus}", e.xid),
        None => format!("Xid {}", e.xid),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn troubles_name_pending_repairs_and_slowdowns_only() {
        let pending = |remap: Option<bool>, pages: Option<bool>| GpuHealth {
            memory_errors: EccCounters {
                remapped_rows_pending: remap,
                retired_pages_pending: pages,
                ..EccCounters::default()
            },
            ..GpuHealth::default()
        };
        assert_eq!(trouble(None, &pending(Some(true), None)), ["GPU 0: memory repair pending a reset"]);
        assert_eq!(trouble(None, &pending(Some(false), Some(true))), ["GPU 0: memory repair pending a reset"]);
        assert!(trouble(None, &pending(Some(false), Some(false))).is_empty());
        let reasons = |r: &[&str]| GpuHealth {
            clock_event_reasons: Some(r.iter().map(|s| (*s).to_owned()).collect()),
            ..GpuHealth::default()
        };
        for hot in ["hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown"] {
            assert_eq!(trouble(None, &reasons(&["gpu_idle", hot])), ["GPU 0: slowed down now"], "{hot}");
        }
        assert!(trouble(None, &reasons(&["gpu_idle", "sw_power_cap"])).is_empty());
    }

    #[test]
    fn without_a_gpu_the_headline_does_not_claim_one_was_read() {
        use gpu_doctor_model::Probed;
        let mut s = Snapshot::unknown(vec![]);
        s.health.gpus = Probed::absent("no GPU is visible to a driver");
        s.health.xid_events = Probed::found(Vec::new(), "dmesg");
        assert_eq!(sections(&s)[0].headline, "no GPU to read; no Xid lines in the kernel log");
        s.health.gpus = Probed::found(vec![GpuHealth::default()], "nvml");
        assert_eq!(sections(&s)[0].headline, "nothing wrong seen on 1 GPU(s)");
    }
}
