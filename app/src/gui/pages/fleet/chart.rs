//! One benchmark figure across the nodes: a bar per node in the table's order and filter, the slow
//! ones in the "bad" colour, the selected one in the "info" colour, and the fleet median as a line.

use egui::Ui;
use egui_plot::{Bar, BarChart, HLine, Plot};
use gpu_doctor_model::fleet::Comparison;

use super::Browse;
use super::table::figure;
use crate::gui::theme::{Tone, toned};

/// The plot's height.
pub const HEIGHT: f32 = 170.0;

/// The bars of figure `metric` over `rows` (indices into `cmp.nodes`): x is the row's place in the
/// table, a node without the figure has no bar. Returns (x, value, host, slow).
pub fn bars(cmp: &Comparison, rows: &[usize], metric: usize) -> Vec<(usize, f64, String, bool)> {
    rows.iter()
        .enumerate()
        .filter_map(|(x, &i)| {
            let n = &cmp.nodes[i];
            let v = n.metrics.get(metric).copied().flatten()?;
            Some((x, v, n.host.clone(), n.slow.get(metric).copied().unwrap_or(false)))
        })
        .collect()
}

/// Up to this many bars are named under the axis.
const MAX_NAMED: usize = 24;

/// The host under a grid mark at `x`, when `x` is a bar's place; else nothing.
pub fn host_at(names: &[String], x: f64) -> String {
    let place = x.round();
    if (x - place).abs() > 1e-6 || place < 0.0 {
        return String::new();
    }
    // A non-negative whole number; places beyond the names give nothing.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let place = place as usize;
    names.get(place).cloned().unwrap_or_default()
}

/// The figure picker and the chart.
pub fn chart_ui(ui: &mut Ui, cmp: &Comparison, browse: &mut Browse) {
    let Some(metric) = cmp.metrics.get(browse.metric) else { return };
    ui.horizontal(|ui| {
        ui.label("Benchmark figure:");
        egui::ComboBox::from_id_salt("fleet-metric")
            .selected_text(format!("{} ({})", metric.label, metric.unit))
            .show_ui(ui, |ui| {
                for (i, m) in cmp.metrics.iter().enumerate() {
                    ui.selectable_value(&mut browse.metric, i, format!("{} ({})", m.label, m.unit));
                }
            });
        let better = if metric.lower_is_better { "lower is better" } else { "higher is better" };
        let median =
            metric.median.map_or_else(|| "no median".to_owned(), |m| format!("median {}", figure(m, &metric.unit)));
        ui.label(toned(ui, Tone::Muted, format!("{median}, {better}; slow nodes in red")));
    });
    let Some(metric) = cmp.metrics.get(browse.metric) else { return };
    let (bad, normal, picked) = (Tone::Bad.color(ui), Tone::Muted.color(ui), Tone::Info.color(ui));
    let median_colour = Tone::Good.color(ui);
    let selected = browse.selected.as_deref();
    let unit = metric.unit.clone();
    let bars = bars(cmp, &browse.rows, browse.metric);
    // Host names under the bars while they fit; the place in the table means nothing to anyone.
    let names: Vec<String> = if bars.len() <= MAX_NAMED {
        browse.rows.iter().map(|&i| cmp.nodes[i].host.clone()).collect()
    } else {
        Vec::new()
    };
    let bars: Vec<Bar> = bars
        .into_iter()
        .map(|(x, v, host, slow)| {
            let colour = if selected == Some(host.as_str()) {
                picked
            } else if slow {
                bad
            } else {
                normal
            };
            // Row places are far below 2^53.
            #[allow(clippy::cast_precision_loss)]
            let x = x as f64;
            Bar::new(x, v).name(host).fill(colour).width(0.8)
        })
        .collect();
    let chart = BarChart::new(metric.label.clone(), bars)
        .element_formatter(Box::new(move |bar, _| format!("{}: {}", bar.name, figure(bar.value, &unit))));
    Plot::new(("fleet-chart", browse.metric))
        .height(HEIGHT)
        .allow_scroll(false)
        .allow_zoom([true, false])
        .include_y(0.0)
        .show_x(false)
        .x_axis_formatter(move |mark, _| host_at(&names, mark.value))
        .show(ui, |p| {
            p.bar_chart(chart);
            if let Some(median) = metric.median {
                p.hline(HLine::new("fleet median", median).color(median_colour));
            }
        });
}
