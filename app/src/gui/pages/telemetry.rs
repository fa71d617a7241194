//! Telemetry: live plots per GPU over a rolling window, with pause, and under each GPU's plots its
//! processes as nvitop lists them (refreshed once a second by the same sampler thread).
//!
//! The page only draws the feed (`gui/telemetry.rs`), which the app runs while this page is open and
//! not paused; each sample that lands asks for one repaint, so a paused page, or a machine without
//! GPUs, costs nothing.

use egui::{Color32, Id, RichText, Ui};
use egui_plot::{HLine, HoverPosition, Line, Plot, PlotPoints};
use gpu_doctor_model::Gpu;
use gpu_doctor_model::telemetry::GpuTelemetry;

use crate::gui::Shown;
use crate::gui::telemetry::{INTERVAL, TelemetryFeed};
use crate::gui::theme::{Tone, badge_ui, toned};
use crate::render::processes::{self as procs, HEADINGS, NO_PROCESSES};

/// The windows one can pick, seconds.
pub const WINDOWS_SECS: [u32; 3] = [60, 120, 300];
/// Plots per row.
const COLUMNS: usize = 3;
/// The height of one plot, points.
const PLOT_HEIGHT: f32 = 120.0;
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// The Telemetry page's state.
#[derive(Debug)]
pub struct TelemetryPage {
    /// How many seconds the plots show, one of `WINDOWS_SECS`.
    pub window_secs: u32,
}

impl Default for TelemetryPage {
    fn default() -> Self {
        Self { window_secs: 120 }
    }
}

/// Reads one value from a sample; `None` when the GPU did not report it.
type Read = fn(&GpuTelemetry) -> Option<f64>;

/// One quantity: a small plot with one or two lines.
struct Quantity {
    /// Stable id part.
    id: &'static str,
    /// The plot's title.
    title: &'static str,
    /// The unit of the y axis.
    unit: &'static str,
    /// Its lines: name and how to read the value from a sample (`None`: not reported).
    lines: &'static [(&'static str, Read)],
    /// Decimals in the current-value text.
    decimals: usize,
}

const QUANTITIES: [Quantity; 6] = [
    Quantity {
        id: "util",
        title: "Utilization",
        unit: "%",
        lines: &[
            ("GPU", |t| t.utilization_gpu_pct.map(f64::from)),
            ("memory", |t| t.utilization_mem_pct.map(f64::from)),
        ],
        decimals: 0,
    },
    Quantity {
        id: "memory",
        title: "Memory used",
        unit: "GiB",
        lines: &[("used", |t| t.memory_used_bytes.map(|b| b as f64 / GIB))],
        decimals: 2,
    },
    Quantity {
        id: "clocks",
        title: "Clocks",
        unit: "MHz",
        lines: &[("SM", |t| t.clock_sm_mhz.map(f64::from)), ("memory", |t| t.clock_mem_mhz.map(f64::from))],
        decimals: 0,
    },
    Quantity {
        id: "power",
        title: "Power",
        unit: "W",
        lines: &[("draw", |t| t.power_draw_mw.map(|mw| f64::from(mw) / 1000.0))],
        decimals: 0,
    },
    Quantity {
        id: "temperature",
        title: "Temperature",
        unit: "°C",
        lines: &[("GPU", |t| t.temperature_c.map(f64::from))],
        decimals: 0,
    },
    Quantity {
        id: "pcie",
        title: "PCIe throughput",
        unit: "MB/s",
        lines: &[
            ("to GPU", |t| t.pcie_rx_kbps.map(|k| f64::from(k) / 1000.0)),
            ("to host", |t| t.pcie_tx_kbps.map(|k| f64::from(k) / 1000.0)),
        ],
        decimals: 1,
    },
];

impl TelemetryPage {
    /// Draws the page.
    pub fn telemetry_ui(&mut self, ui: &mut Ui, shown: &Shown<'_>, feed: &mut TelemetryFeed) {
        ui.heading("Live telemetry");
        if !shown.live {
            let whose = if shown.other { "another machine's report" } else { "a recorded machine" };
            notice_ui(
                ui,
                Tone::Info,
                &format!(
                    "Live telemetry reads this machine's GPUs through NVML, so it is off while {whose} is on screen."
                ),
            );
            return;
        }
        let snap = shown.snapshot;
        let gpus = match snap.gpus.value() {
            Some(g) if !g.is_empty() => g,
            Some(_) => return notice_ui(ui, Tone::Warn, "The driver lists no GPU, so there is nothing to sample."),
            None if shown.pending.contains("gpus") => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("Looking for GPUs…");
                });
                return;
            }
            None => {
                let why = snap.gpus.why_not().unwrap_or("unknown");
                return notice_ui(ui, Tone::Warn, &format!("No GPU to sample: {why}"));
            }
        };
        if let Some(note) = &feed.note {
            return notice_ui(ui, Tone::Warn, note);
        }
        self.controls_ui(ui, feed);
        if feed.series.is_empty() {
            ui.add_space(8.0);
            ui.horizontal(|ui| {
                if feed.paused {
                    ui.label("Paused before the first sample.");
                } else {
                    ui.spinner();
                    ui.label("Waiting for the first samples…");
                }
            });
            return;
        }
        let link = Id::unique("telemetry-x");
        for gpu in gpus {
            ui.add_space(10.0);
            self.gpu_ui(ui, gpu, feed, link);
        }
    }

    fn controls_ui(&mut self, ui: &mut Ui, feed: &mut TelemetryFeed) {
        ui.horizontal(|ui| {
            let label = if feed.paused { "Resume" } else { "Pause" };
            let hover = if feed.paused {
                "Sample again and move the plots on"
            } else {
                "Hold the plots still (sampling stops while this page is open)"
            };
            if ui.button(label).on_hover_text(hover).clicked() {
                feed.paused = !feed.paused;
            }
            ui.separator();
            ui.label("Show the last");
            for secs in WINDOWS_SECS {
                ui.selectable_value(&mut self.window_secs, secs, format!("{secs} s"));
            }
            ui.separator();
            if feed.paused {
                badge_ui(ui, Tone::Warn, "PAUSED");
            } else if feed.is_running() {
                ui.label(toned(ui, Tone::Muted, format!("sampled every {:.1} s through NVML", INTERVAL.as_secs_f64())));
            }
            if let Some(gpu) = feed.run_gpu() {
                ui.label(toned(ui, Tone::Muted, format!("GPU {gpu}: the benchmark run's samples")));
            }
        });
    }

    fn gpu_ui(&self, ui: &mut Ui, gpu: &Gpu, feed: &TelemetryFeed, link: Id) {
        let name = gpu.name.as_deref().unwrap_or("unnamed GPU");
        ui.horizontal(|ui| {
            ui.label(RichText::new(format!("GPU {} · {name}", gpu.index)).size(16.0).strong());
            let reasons = feed.latest(gpu.index).and_then(|t| t.throttle_reasons.as_ref());
            if let Some(r) = reasons.filter(|r| !r.is_empty() && r.iter().any(|x| x != "gpu_idle")) {
                badge_ui(ui, Tone::Warn, "clocks held back").on_hover_text(r.join(", "));
            }
        });
        let Some(series) = feed.series.get(&gpu.index).filter(|s| !s.is_empty()) else {
            ui.label(toned(ui, Tone::Muted, "No sample from this GPU yet."));
            return;
        };
        let t_end = series.back().map_or(0.0, |(t, _)| *t);
        let window = f64::from(self.window_secs);
        let recent: Vec<(f64, &GpuTelemetry)> =
            series.iter().filter(|(t, _)| t_end - t <= window).map(|(t, s)| (t - t_end, s)).collect();
        let spacing = ui.spacing().item_spacing.x;
        let width = ((ui.available_width() - spacing * (COLUMNS as f32 - 1.0)) / COLUMNS as f32).max(160.0);
        egui::Grid::new(("telemetry-grid", gpu.index)).num_columns(COLUMNS).spacing([spacing, 8.0]).show(ui, |ui| {
            for (i, q) in QUANTITIES.iter().enumerate() {
                ui.vertical(|ui| {
                    ui.set_width(width);
                    quantity_ui(ui, gpu, q, &recent, window, width, link);
                });
                if (i + 1) % COLUMNS == 0 {
                    ui.end_row();
                }
            }
        });
        processes_ui(ui, gpu, feed);
    }
}

/// The columns of `HEADINGS` that hold numbers.
const NUMERIC: [usize; 6] = [0, 3, 4, 5, 6, 7];
/// The longest command shown in a row; the whole line is in its hover text.
const COMMAND_CHARS: usize = 90;

/// The GPU's processes: one row each, the most GPU memory first, with why a row's host fields are
/// blank and NVML's notes.
fn processes_ui(ui: &mut Ui, gpu: &Gpu, feed: &TelemetryFeed) {
    ui.add_space(6.0);
    ui.label(RichText::new("Processes").strong());
    let list = match feed.processes(gpu.index) {
        None => {
            ui.label(toned(ui, Tone::Muted, "Listing the processes…"));
            return;
        }
        Some(Err(why)) => {
            ui.label(toned(ui, Tone::Warn, format!("NVML did not list the processes: {why}")));
            return;
        }
        Some(Ok(list)) => list,
    };
    if list.processes.is_empty() {
        ui.label(toned(ui, Tone::Muted, NO_PROCESSES));
    } else {
        egui::Grid::new(("processes", gpu.index)).striped(true).num_columns(HEADINGS.len()).spacing([16.0, 4.0]).show(
            ui,
            |ui| {
                for (i, heading) in HEADINGS.into_iter().enumerate() {
                    column_ui(ui, i, toned(ui, Tone::Muted, heading).small().strong());
                }
                ui.end_row();
                for p in &list.processes {
                    let cells = procs::cells(p, gpu.memory_total_bytes);
                    let [values @ .., last] = &cells;
                    for (i, cell) in values.iter().enumerate() {
                        column_ui(ui, i, RichText::new(cell).monospace());
                    }
                    command_ui(ui, last, p.unreadable.as_deref());
                    ui.end_row();
                }
            },
        );
    }
    for note in &list.notes {
        ui.label(toned(ui, Tone::Muted, crate::render::text::clean(note)));
    }
}

/// Column `i`'s heading or cell: numbers line up on their right edge, as in nvitop.
fn column_ui(ui: &mut Ui, i: usize, text: RichText) {
    if NUMERIC.contains(&i) {
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| ui.label(text));
    } else {
        ui.label(text);
    }
}

/// The command, cut to `COMMAND_CHARS` (whole on hover), and why the row's host fields are blank.
fn command_ui(ui: &mut Ui, command: &str, unreadable: Option<&str>) {
    ui.horizontal(|ui| {
        let cut = command.chars().count() > COMMAND_CHARS;
        let short: String =
            if cut { command.chars().take(COMMAND_CHARS - 1).chain(['…']).collect() } else { command.to_owned() };
        let shown = ui.label(RichText::new(short).monospace());
        if cut {
            shown.on_hover_text(command);
        }
        if let Some(why) = unreadable {
            ui.label(toned(ui, Tone::Warn, format!("({})", crate::render::text::clean(why))));
        }
    });
}

/// A framed line of text in a tone, instead of an empty grid of plots.
fn notice_ui(ui: &mut Ui, tone: Tone, text: &str) {
    egui::Frame::new()
        .fill(tone.fill(ui))
        .stroke(egui::Stroke::new(1.0, tone.color(ui)))
        .corner_radius(6.0)
        .inner_margin(10)
        .show(ui, |ui| {
            ui.set_width(ui.available_width());
            ui.label(text);
        });
}

/// The current value of each line of a quantity, e.g. `GPU 35 %`, `memory 12 %` (a lone line
/// without its name); `—` for a value not reported.
fn current_values(q: &Quantity, latest: Option<&GpuTelemetry>) -> Vec<String> {
    q.lines
        .iter()
        .map(|(name, read)| {
            let v = latest.and_then(read).map_or_else(|| "—".to_owned(), |v| format!("{v:.*} {}", q.decimals, q.unit));
            if q.lines.len() > 1 { format!("{name} {v}") } else { v }
        })
        .collect()
}

/// Where the plot's y axis should at least reach: the GPU's limit for that quantity, when known.
fn y_top(gpu: &Gpu, q: &Quantity) -> Option<f64> {
    match q.id {
        "util" => Some(100.0),
        "memory" => gpu.memory_total_bytes.map(|b| b as f64 / GIB),
        "clocks" => gpu.clock_mem_max_mhz.max(gpu.clock_sm_max_mhz).map(f64::from),
        "power" => gpu.power_limit_mw.map(|mw| f64::from(mw) / 1000.0),
        "temperature" => Some(100.0),
        _ => None,
    }
}

fn quantity_ui(
    ui: &mut Ui,
    gpu: &Gpu,
    q: &Quantity,
    recent: &[(f64, &GpuTelemetry)],
    window: f64,
    width: f32,
    link: Id,
) {
    let latest = recent.last().map(|(_, t)| *t);
    // The current values, each in its line's colour, stand in for a legend.
    let colors = [Tone::Info.color(ui), Tone::Warn.color(ui)];
    ui.horizontal(|ui| {
        ui.label(RichText::new(q.title).strong());
        for (value, color) in current_values(q, latest).into_iter().zip(colors) {
            ui.label(RichText::new(value).color(color));
        }
    });
    if recent.iter().all(|(_, t)| q.lines.iter().all(|(_, read)| read(t).is_none())) {
        ui.add_sized([width, PLOT_HEIGHT], egui::Label::new(toned(ui, Tone::Muted, "not reported by this GPU")));
        return;
    }
    let unit = q.unit;
    let mut plot = Plot::new(("telemetry", gpu.index, q.id))
        .width(width)
        .height(PLOT_HEIGHT)
        .link_axis(link, [true, false])
        .link_cursor(link, [true, false])
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .allow_boxed_zoom(false)
        .allow_double_click_reset(false)
        .include_x(-window)
        .include_x(0.0)
        .include_y(0.0)
        .x_axis_formatter(|m, _| format!("{:.0} s", m.value))
        .y_axis_formatter(move |m, _| format!("{} {unit}", egui_plot::format_number(m.value, 1)))
        .label_formatter(move |pos| match pos {
            HoverPosition::NearDataPoint { plot_name, position, .. } => {
                Some(format!("{plot_name}: {:.1} {unit}\n{:.0} s ago", position.y, -position.x))
            }
            HoverPosition::Elsewhere { .. } => None,
        });
    if let Some(top) = y_top(gpu, q) {
        plot = plot.include_y(top);
    }
    let limit_color = Tone::Bad.color(ui);
    plot.show(ui, |p| {
        for ((name, read), color) in q.lines.iter().zip(colors) {
            let points: Vec<[f64; 2]> = recent.iter().filter_map(|(x, t)| read(t).map(|v| [*x, v])).collect();
            p.line(Line::new(*name, PlotPoints::new(points)).color(color).width(1.5));
        }
        if q.id == "power"
            && let Some(limit) = y_top(gpu, q)
        {
            p.hline(HLine::new("power limit", limit).color(faint(limit_color)));
        }
    });
}

fn faint(c: Color32) -> Color32 {
    Color32::from_rgba_unmultiplied(c.r(), c.g(), c.b(), 140)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_values_name_each_line_and_say_what_is_missing() {
        let t = GpuTelemetry {
            utilization_gpu_pct: Some(35),
            memory_used_bytes: Some(3 * (1 << 30)),
            pcie_rx_kbps: Some(2500),
            ..GpuTelemetry::default()
        };
        let text = |q: usize, t: Option<&GpuTelemetry>| current_values(&QUANTITIES[q], t).join(" · ");
        assert_eq!(text(0, Some(&t)), "GPU 35 % · memory —");
        assert_eq!(text(1, Some(&t)), "3.00 GiB");
        assert_eq!(text(5, Some(&t)), "to GPU 2.5 MB/s · to host —");
        assert_eq!(text(4, None), "—");
    }
}
