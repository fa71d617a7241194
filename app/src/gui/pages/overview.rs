//! Overview: the verdict, the machine, the GPU topology (`gui/topo_matrix.rs`), and a card per GPU
//! with its live state.

use egui::{RichText, Ui};
use gpu_doctor_model::{FrameworkBuild, Gpu, HostLink};
use gpu_doctor_model::{Probed, Report, Severity, Snapshot};

use crate::gui::telemetry::TelemetryFeed;
use crate::gui::theme::{Tone, badge_ui, toned};
use crate::gui::{Action, Page, Shown};
use crate::render::facts::{gib, link_text, pcie_text, snapshot_sections};

/// What the probe groups are called while they run.
const PART_LABELS: [(&str, &str); 10] = [
    ("system", "machine"),
    ("platform", "platform"),
    ("env", "variables"),
    ("containers", "containers"),
    ("gpus", "driver and GPUs"),
    ("health", "GPU health and kernel log"),
    ("modules", "kernel module and PCI bus"),
    ("links", "host links"),
    ("topology", "GPU topology"),
    ("python", "Python, CUDA toolkits, cuDNN"),
];

/// The Overview page.
pub fn overview_ui(ui: &mut Ui, shown: &Shown<'_>, feed: &TelemetryFeed, actions: &mut Vec<Action>) {
    verdict_ui(ui, shown, actions);
    if !shown.pending.is_empty() {
        progress_ui(ui, shown);
    }
    ui.add_space(8.0);
    machine_ui(ui, shown.snapshot);
    ui.add_space(8.0);
    crate::gui::topo_matrix::topology_ui(ui, shown.snapshot);
    gpus_ui(ui, shown, feed);
}

/// The headline: ready, or how many problems.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Its tone.
    pub tone: Tone,
    /// One line.
    pub headline: String,
    /// A second line, e.g. the first error.
    pub detail: Option<String>,
}

/// The verdict for a diagnosed report.
pub fn verdict(report: &Report) -> Verdict {
    let count = |s: Severity| report.findings.iter().filter(|f| f.severity == s).count();
    let (errors, warnings) = (count(Severity::Error), count(Severity::Warning));
    let s = &report.snapshot;
    let first_error = report.findings.iter().find(|f| f.severity == Severity::Error).map(|f| f.summary.clone());
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    if errors > 0 {
        return Verdict {
            tone: Tone::Bad,
            headline: format!("{} found", plural(errors, "problem")),
            detail: first_error,
        };
    }
    let warn_tail =
        if warnings > 0 { format!(", with {} to look at", plural(warnings, "warning")) } else { String::new() };
    let gpus = s.gpus.value().map_or(&[][..], Vec::as_slice);
    let Some(gpu) = gpus.first() else {
        // The finding's words (what `check` prints), not the probe's raw reason (a dlopen error).
        let presence = report.findings.iter().find(|f| f.id.starts_with("presence.")).map(|f| f.summary.clone());
        let why = match (presence, &s.gpus) {
            (Some(summary), _) => summary,
            (None, Probed::Found { .. }) => "the driver lists no GPU".to_owned(),
            (None, other) => other.why_not().unwrap_or("unknown").to_owned(),
        };
        return Verdict {
            tone: if matches!(s.gpus, Probed::Unknown { .. }) { Tone::Muted } else { Tone::Warn },
            headline: format!("No NVIDIA GPU to use{warn_tail}"),
            detail: Some(why),
        };
    };
    let gpu_name = gpu.name.clone().unwrap_or_else(|| format!("GPU {}", gpu.index));
    let ready = s.python_envs.value().into_iter().flatten().find_map(|env| {
        env.frameworks
            .iter()
            .filter(|f| matches!(f.build, FrameworkBuild::Cuda { .. }))
            .min_by_key(|f| framework_rank(&f.name))
            .map(|f| (display_name(&f.name), f.version.clone(), env.name.clone()))
    });
    let tone = if warnings > 0 { Tone::Warn } else { Tone::Good };
    let headline = match ready {
        Some((fw, version, env)) => format!("Ready: {fw} {version} in {env} can use your {gpu_name}{warn_tail}"),
        None => format!("Your {gpu_name} works; no CUDA build of a framework found{warn_tail}"),
    };
    Verdict { tone, headline, detail: None }
}

/// A machine whose GPU works (the driver loaded and lists GPUs) but with no framework in any
/// Python environment: the Overview offers to set one up.
pub fn needs_environment(snap: &Snapshot) -> bool {
    let gpus = snap.gpus.value().is_some_and(|g| !g.is_empty());
    let frameworks = snap.python_envs.value().into_iter().flatten().any(|env| !env.frameworks.is_empty());
    snap.driver.value().is_some() && gpus && !frameworks
}

fn framework_rank(name: &str) -> usize {
    ["torch", "jax", "tensorflow", "cupy"].iter().position(|n| name.starts_with(n)).unwrap_or(9)
}

fn display_name(name: &str) -> String {
    match name {
        "torch" => "PyTorch".to_owned(),
        "tensorflow" => "TensorFlow".to_owned(),
        "jax" | "jaxlib" => "JAX".to_owned(),
        n if n.starts_with("cupy") => "CuPy".to_owned(),
        n => n.to_owned(),
    }
}

fn verdict_ui(ui: &mut Ui, shown: &Shown<'_>, actions: &mut Vec<Action>) {
    let v = match shown.report {
        Some(r) => verdict(r),
        None => Verdict { tone: Tone::Muted, headline: "Checking this machine…".to_owned(), detail: None },
    };
    egui::Frame::new()
        .fill(v.tone.fill(ui))
        .stroke(egui::Stroke::new(1.0, v.tone.color(ui)))
        .corner_radius(6.0)
        .inner_margin(12)
        .show(ui, |ui| {
            ui.set_width(ui.available_width());
            ui.horizontal(|ui| {
                if shown.report.is_none() {
                    ui.spinner();
                }
                ui.label(toned(ui, v.tone, &v.headline).size(20.0).strong());
            });
            if let Some(d) = &v.detail {
                ui.horizontal_wrapped(|ui| {
                    ui.label(d);
                    // The first error is the one the detail names.
                    let first = shown.report.and_then(|r| r.findings.iter().find(|f| f.severity == Severity::Error));
                    if let Some(f) = first {
                        super::checks::fix_button_ui(ui, f, actions);
                    }
                });
            }
            if !shown.other && shown.report.is_some() && needs_environment(shown.snapshot) {
                ui.horizontal(|ui| {
                    ui.label("No framework in any Python environment yet.");
                    if ui.button("Set up an environment").clicked() {
                        actions.push(Action::Goto(Page::Setup));
                    }
                });
            }
            if let Some(r) = shown.report.filter(|r| !r.findings.is_empty()) {
                ui.horizontal(|ui| {
                    ui.label(crate::render::findings::tally(&r.findings));
                    if ui.link("See the checks").clicked() {
                        actions.push(Action::Goto(Page::Checks));
                    }
                });
            }
            if !shown.other && shown.report.is_some() && ui.button("Certify this machine").clicked() {
                actions.push(Action::Goto(Page::Certify));
            }
        });
}

fn progress_ui(ui: &mut Ui, shown: &Shown<'_>) {
    ui.horizontal_wrapped(|ui| {
        for (part, label) in PART_LABELS {
            if shown.pending.contains(part) {
                ui.spinner();
                ui.label(label);
            } else {
                ui.label(toned(ui, Tone::Good, format!("✔ {label}")));
            }
            ui.add_space(6.0);
        }
    });
}

fn machine_ui(ui: &mut Ui, snap: &Snapshot) {
    ui.heading("This machine");
    egui::Grid::new("machine").num_columns(2).spacing([16.0, 4.0]).striped(true).show(ui, |ui| {
        for sec in snapshot_sections(snap).into_iter().filter(|s| s.label != "GPUs") {
            ui.label(RichText::new(sec.label).strong());
            let tone = match sec.tone {
                crate::render::facts::Tone::Good => Tone::Good,
                crate::render::facts::Tone::Warn => Tone::Warn,
                crate::render::facts::Tone::Plain => Tone::Muted,
            };
            let text = toned(ui, if tone == Tone::Muted { Tone::Info } else { tone }, &sec.headline);
            let r = ui.label(if tone == Tone::Muted { RichText::new(&sec.headline) } else { text });
            if !sec.details.is_empty() {
                r.on_hover_text(sec.details.join("\n"));
            }
            ui.end_row();
        }
    });
}

fn gpus_ui(ui: &mut Ui, shown: &Shown<'_>, feed: &TelemetryFeed) {
    let snap = shown.snapshot;
    let Some(gpus) = snap.gpus.value() else {
        if shown.pending.contains("gpus") {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Looking for GPUs…");
            });
        }
        // Otherwise the verdict banner already says why there is no GPU.
        return;
    };
    let links = snap.links.value().map_or(&[][..], Vec::as_slice);
    ui.horizontal_wrapped(|ui| {
        for gpu in gpus {
            let link = links.iter().find(|l| gpu.has_bus_id(&l.bus_id));
            gpu_card_ui(ui, shown, gpu, link, feed);
        }
    });
}

fn gpu_card_ui(ui: &mut Ui, shown: &Shown<'_>, gpu: &Gpu, link: Option<&HostLink>, feed: &TelemetryFeed) {
    egui::Frame::group(ui.style()).inner_margin(10).corner_radius(6.0).show(ui, |ui| {
        ui.vertical(|ui| gpu_card_body_ui(ui, shown, gpu, link, feed));
    });
}

fn gpu_card_body_ui(ui: &mut Ui, shown: &Shown<'_>, gpu: &Gpu, link: Option<&HostLink>, feed: &TelemetryFeed) {
    let snap = shown.snapshot;
    {
        ui.set_width(440.0);
        ui.horizontal(|ui| {
            ui.label(RichText::new(gpu.name.as_deref().unwrap_or("unnamed GPU")).size(17.0).strong());
            if link.is_some_and(|l| l.egpu.is_some()) {
                badge_ui(ui, Tone::Info, "eGPU").on_hover_text("behind a Thunderbolt or USB4 tunnel");
            }
        });
        egui::Grid::new(("gpu", gpu.index)).num_columns(2).spacing([12.0, 3.0]).show(ui, |ui| {
            let row = |ui: &mut Ui, k: &str, v: String| {
                ui.label(toned(ui, Tone::Muted, k));
                ui.label(v);
                ui.end_row();
            };
            row(ui, "Index", format!("{}  {}", gpu.index, gpu.pci_bus_id.as_deref().unwrap_or("")));
            row(ui, "Compute capability", crate::render::facts::capability_text(gpu));
            row(ui, "Memory", gpu.memory_total_bytes.map_or_else(|| "not reported".to_owned(), gib));
            row(
                ui,
                "Driver",
                match snap.driver.value() {
                    Some(d) => format!(
                        "{} (CUDA {})",
                        d.version,
                        d.cuda_version.as_ref().map_or_else(|| "level not reported".to_owned(), ToString::to_string)
                    ),
                    None => snap.driver.why_not().unwrap_or("unknown").to_owned(),
                },
            );
            row(ui, "Host link", link_line(gpu, link));
            live_rows(ui, shown, gpu, feed);
        });
    }
}

fn link_line(gpu: &Gpu, link: Option<&HostLink>) -> String {
    let mut text = match link {
        // The host link's values, which the link probe merged from NVML and sysfs.
        Some(l) if l.gen_current.is_some() || l.gen_max.is_some() => {
            pcie_text([l.gen_current, l.width_current], [l.gen_max, l.width_max])
        }
        _ => link_text(gpu),
    };
    if let Some(bw) = link.and_then(|l| l.theoretical_gbytes_per_s) {
        text.push_str(&format!(" · {bw:.1} GB/s"));
    }
    if let Some(e) = link.and_then(|l| l.egpu.as_ref()) {
        let generation = e.tb_generation.map_or_else(String::new, |g| format!(" {g}"));
        text.push_str(&format!(" · via {}{generation}", crate::render::facts::label(&e.via)));
    }
    text
}

fn live_rows(ui: &mut Ui, shown: &Shown<'_>, gpu: &Gpu, feed: &TelemetryFeed) {
    if shown.live && feed.is_asleep(gpu.index) {
        ui.label(toned(ui, Tone::Muted, "Live values"));
        ui.label("asleep (runtime suspend): not woken to read it");
        ui.end_row();
        return;
    }
    let live = shown.live.then(|| feed.latest(gpu.index)).flatten();
    let (temp, power, clock, when) = match live {
        Some(t) => (t.temperature_c, t.power_draw_mw, t.clock_sm_mhz, "live"),
        None => (gpu.temperature_c, gpu.power_draw_mw, gpu.clock_sm_mhz, "at probe time"),
    };
    let q = |v: Option<String>| v.unwrap_or_else(|| "not reported".to_owned());
    let label = |ui: &mut Ui, k: &str| ui.label(toned(ui, Tone::Muted, format!("{k} ({when})")));
    label(ui, "Temperature");
    ui.label(q(temp.map(|t| format!("{t} °C"))));
    ui.end_row();
    label(ui, "Power");
    let limit = gpu.power_limit_mw.map_or_else(String::new, |l| format!(" of {:.0} W", f64::from(l) / 1000.0));
    ui.label(q(power.map(|p| format!("{:.0} W{limit}", f64::from(p) / 1000.0))));
    ui.end_row();
    label(ui, "SM clock");
    let max = gpu.clock_sm_max_mhz.map_or_else(String::new, |m| format!(" of {m} MHz"));
    ui.label(q(clock.map(|c| format!("{c} MHz{max}"))));
    ui.end_row();
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_probe_group_has_a_label() {
        let labelled: Vec<&str> = PART_LABELS.iter().map(|(part, _)| *part).collect();
        assert_eq!(labelled, gpu_doctor_probes::probe::Part::NAMES);
    }

    #[test]
    fn setting_up_is_offered_with_a_working_gpu_and_no_framework_only() {
        let offered = |name: &str| needs_environment(&crate::render::html::tests::fixture_report(name).snapshot);
        assert!(offered("egpu-thunderbolt"), "a working RTX 3060 and no framework");
        assert!(!offered("consumer-gpu-torch-venv"), "torch is installed");
        assert!(!offered("no-driver"), "no GPU to use");
        assert!(!offered("gpu-no-driver"), "the driver is not loaded");
    }

    #[test]
    fn the_no_gpu_banner_says_what_the_finding_says() {
        let report = crate::render::html::tests::fixture_report("no-driver");
        let v = verdict(&report);
        assert_eq!(v.headline, "No NVIDIA GPU to use");
        let finding = report.findings.iter().find(|f| f.id == "presence.no_nvidia_gpu").unwrap();
        let detail = v.detail.unwrap();
        assert!(detail.starts_with(&finding.summary), "{detail}");
        assert!(!detail.contains("cannot open shared object") && !detail.contains("libnvidia-ml.so"), "{detail}");
    }
}
