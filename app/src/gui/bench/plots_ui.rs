//! Draws a `plots::PlotSpec` with egui_plot, with past runs laid over it.
//!
//! egui_plot has no log axis, so a log axis is drawn as log10 of its values, with grid marks at
//! powers of two and tick labels written back in the axis' own terms (`4 KiB`, `1 GiB`, `4096`).

use egui::{Color32, Ui, Vec2};
use egui_plot::{AxisHints, Corner, GridInput, GridMark, Legend, Line, LineStyle, Plot, Points};

use crate::plots::{Axis, PlotSpec, SeriesStyle};

/// Series colours, in order of first appearance; readable on dark and light backgrounds.
const PALETTE: [Color32; 8] = [
    Color32::from_rgb(0x3b, 0x8e, 0xea),
    Color32::from_rgb(0xe8, 0x7d, 0x1e),
    Color32::from_rgb(0x2c, 0xa0, 0x5a),
    Color32::from_rgb(0xd6, 0x3b, 0x6a),
    Color32::from_rgb(0x94, 0x67, 0xd8),
    Color32::from_rgb(0x17, 0xa2, 0xb8),
    Color32::from_rgb(0xb8, 0x8a, 0x00),
    Color32::from_rgb(0x8c, 0x56, 0x4b),
];

/// A measured series with at most this many points also gets a marker per point.
const MARKERS_UP_TO: usize = 40;

/// log10(2): one octave on a log10 axis.
const OCTAVE: f64 = std::f64::consts::LOG10_2;

/// A value in plot coordinates: log10 on a log axis; `None` for what a log axis cannot show.
pub fn to_plot(axis: &Axis, v: f64) -> Option<f64> {
    if !v.is_finite() {
        return None;
    }
    if axis.log {
        return (v > 0.0).then(|| v.log10());
    }
    Some(v)
}

/// A plot coordinate back in the axis' values.
pub fn from_plot(axis: &Axis, v: f64) -> f64 {
    if axis.log { 10f64.powf(v) } else { v }
}

/// A tick label at plot coordinate `v`: `16 MiB` on a byte axis, `4096` on a log size axis.
pub fn tick_text(axis: &Axis, v: f64) -> String {
    axis.tick_label(from_plot(axis, v))
}

/// Grid marks for a log10 axis at every power of two in `bounds` (log10 values): every fourth one
/// strongest (4 KiB, 64 KiB, 1 MiB, …), then every second, then the rest, so labels thin out
/// evenly as the plot narrows. At most 400 marks.
pub fn power_of_two_marks(bounds: (f64, f64)) -> Vec<GridMark> {
    let (lo, hi) = (bounds.0.min(bounds.1), bounds.0.max(bounds.1));
    if !lo.is_finite() || !hi.is_finite() {
        return Vec::new();
    }
    #[expect(clippy::cast_possible_truncation, reason = "bounded by the checks below")]
    let (first, last) = ((lo / OCTAVE).ceil() as i64, (hi / OCTAVE).floor() as i64);
    if last < first || last - first > 400 {
        return Vec::new();
    }
    (first..=last)
        .map(|k| {
            let octaves = if k % 4 == 0 {
                4.0
            } else if k % 2 == 0 {
                2.0
            } else {
                1.0
            };
            GridMark { value: k as f64 * OCTAVE, step_size: octaves * OCTAVE }
        })
        .collect()
}

/// The unit in an axis label's last parentheses: `GB/s` of `bandwidth (GB/s)`.
fn unit_of(axis: &Axis) -> &str {
    let label = axis.label.trim_end();
    match (label.rfind('('), label.ends_with(')')) {
        (Some(open), true) => &label[open + 1..label.len() - 1],
        _ => "",
    }
}

/// A value with its axis' unit: `1 MiB` on a byte axis, `20.1 GB/s`, `3.5 s`.
fn value_text(axis: &Axis, plot_value: f64) -> String {
    let v = from_plot(axis, plot_value);
    if axis.is_bytes() {
        return axis.tick_label(v);
    }
    let unit = unit_of(axis);
    let number = gpu_doctor_model::bench::format::value(v);
    if unit.is_empty() || unit.contains(' ') { number } else { format!("{number} {unit}") }
}

/// The hover text of a point: the series, then x and y with units.
pub fn hover_text(spec: &PlotSpec, series: &str, x: f64, y: f64) -> String {
    format!("{series}\n{}: {}", value_text(&spec.x, x), value_text(&spec.y, y))
}

/// The series names of `specs` that get a colour (measured ones), in order of first appearance.
fn colour_names<'s>(specs: impl Iterator<Item = &'s PlotSpec>) -> Vec<&'s str> {
    let mut names: Vec<&str> = Vec::new();
    for s in specs.flat_map(|s| &s.series).filter(|s| s.style != SeriesStyle::Dashed) {
        if !names.contains(&s.name.as_str()) {
            names.push(&s.name);
        }
    }
    names
}

/// A series' colour: its place among the measured series; a reference line takes the colour of the
/// series it belongs to (`BF16 peak` of `BF16`), else a dimmed text colour.
fn colour(ui: &Ui, names: &[&str], name: &str) -> Color32 {
    let base = name.strip_suffix(" peak").unwrap_or(name);
    match names.iter().position(|n| *n == base) {
        Some(i) => PALETTE[i % PALETTE.len()],
        None => ui.visuals().text_color().gamma_multiply(0.7),
    }
}

/// Draws `spec` in a plot of `size`, with each of `overlays` (a label such as a date, and the same
/// plot of another run) drawn dashed and faded; the overlays' reference lines are left out.
pub fn plot_ui(ui: &mut Ui, spec: &PlotSpec, overlays: &[(&str, &PlotSpec)], size: Vec2) {
    let names = colour_names(std::iter::once(spec).chain(overlays.iter().map(|(_, s)| *s)));
    let x_axis = AxisHints::new_x()
        .label(if spec.x.log { format!("{}, log scale", spec.x.label) } else { spec.x.label.clone() })
        .formatter(|mark, _| tick_text(&spec.x, mark.value))
        .label_spacing(45.0..=60.0);
    let y_axis = AxisHints::new_y().label(spec.y.label.clone()).formatter(|mark, _| tick_text(&spec.y, mark.value));
    let mut plot = Plot::new(("bench-plot", spec.id))
        .width(size.x)
        .height(size.y)
        .legend(
            Legend::default()
                .position(Corner::RightBottom)
                .text_style(egui::TextStyle::Small)
                .background_alpha(0.75)
                .follow_insertion_order(true),
        )
        .custom_x_axes(vec![x_axis])
        .custom_y_axes(vec![y_axis])
        // The page scrolls with the wheel; zoom with a right-drag box, double-click to reset.
        .allow_scroll(false)
        .allow_zoom(false)
        .allow_drag(false)
        .allow_boxed_zoom(true)
        .label_formatter(|pos| match pos {
            egui_plot::HoverPosition::NearDataPoint { plot_name, position, .. } => {
                Some(hover_text(spec, plot_name, position.x, position.y))
            }
            egui_plot::HoverPosition::Elsewhere { .. } => None,
        });
    if spec.x.log {
        plot = plot.x_grid_spacer(|input: GridInput| power_of_two_marks(input.bounds));
    }
    if spec.y.log {
        plot = plot.y_grid_spacer(|input: GridInput| power_of_two_marks(input.bounds));
    } else if !spec.id.starts_with("telemetry.") {
        // Throughput starts at zero; telemetry keeps its own range so that a clock drop shows.
        plot = plot.include_y(0.0);
    }
    // Legend order: this run's series, then the overlays'. A legend in a bottom corner lists from
    // the bottom up, so the items go in reversed, which also draws the overlays first (underneath)
    // and the reference lines under the measured ones.
    let mut items: Vec<Item> = Vec::new();
    for s in &spec.series {
        let colour = colour(ui, &names, &s.name);
        items.push(Item {
            name: s.name.clone(),
            points: points(spec, &s.points),
            colour,
            style: s.style,
            overlay: false,
        });
    }
    for (label, other) in overlays {
        for s in other.series.iter().filter(|s| s.style != SeriesStyle::Dashed) {
            let colour = colour(ui, &names, &s.name).gamma_multiply(0.45);
            let name = format!("{} · {label}", s.name);
            items.push(Item { name, points: points(spec, &s.points), colour, style: s.style, overlay: true });
        }
    }
    plot.show(ui, |plot_ui| {
        for Item { name, points: pts, colour: c, style, overlay } in items.into_iter().rev() {
            match (style, overlay) {
                (SeriesStyle::Points, _) => {
                    plot_ui.points(Points::new(name, pts).color(c).radius(if overlay { 2.5 } else { 3.5 }));
                }
                (SeriesStyle::Dashed, _) => {
                    plot_ui.line(Line::new(name, pts).color(c).width(1.5).style(LineStyle::dashed_dense()));
                }
                (SeriesStyle::Line, true) => {
                    plot_ui.line(Line::new(name, pts).color(c).width(1.5).style(LineStyle::dashed_loose()));
                }
                (SeriesStyle::Line, false) => {
                    if pts.len() <= MARKERS_UP_TO {
                        plot_ui.points(Points::new(name.clone(), pts.clone()).color(c).radius(2.5));
                    }
                    plot_ui.line(Line::new(name, pts).color(c).width(2.0));
                }
            }
        }
    });
}

/// One series ready to draw.
struct Item {
    name: String,
    points: Vec<[f64; 2]>,
    colour: Color32,
    style: SeriesStyle,
    /// A past run's, drawn faded and dashed.
    overlay: bool,
}

/// A series' points in plot coordinates, leaving out what the axes cannot show.
fn points(spec: &PlotSpec, pts: &[[f64; 2]]) -> Vec<[f64; 2]> {
    pts.iter().filter_map(|&[x, y]| Some([to_plot(&spec.x, x)?, to_plot(&spec.y, y)?])).collect()
}

/// Several plots side by side, `columns` to a row, each `height` high, with the title above.
/// `overlays` are past runs (a label and their plots); each is laid over the plot of the same id.
pub fn plot_grid_ui(ui: &mut Ui, specs: &[&PlotSpec], overlays: &[(&str, &[PlotSpec])], columns: usize, height: f32) {
    let columns = columns.max(1);
    let gap = ui.spacing().item_spacing.x * 2.0;
    let width = ((ui.available_width() - gap * (columns as f32 - 1.0)) / columns as f32).max(200.0);
    for row in specs.chunks(columns) {
        ui.horizontal_top(|ui| {
            for spec in row {
                ui.vertical(|ui| {
                    ui.set_width(width);
                    ui.label(egui::RichText::new(&spec.title).strong());
                    let matching: Vec<(&str, &PlotSpec)> = overlays
                        .iter()
                        .filter_map(|(label, plots)| Some((*label, plots.iter().find(|p| p.id == spec.id)?)))
                        .collect();
                    plot_ui(ui, spec, &matching, Vec2::new(width, height));
                });
                ui.add_space(gap / 2.0);
            }
        });
        ui.add_space(6.0);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::plots::{Series, short_number};

    fn axis(label: &str, log: bool) -> Axis {
        Axis { label: label.to_owned(), log }
    }

    #[test]
    fn log_byte_ticks_read_as_sizes() {
        let x = axis("transfer size (bytes)", true);
        for (bytes, text) in [(4096.0, "4 KiB"), (1_048_576.0, "1 MiB"), (1_073_741_824.0, "1 GiB")] {
            let v = to_plot(&x, bytes).unwrap();
            assert_eq!(tick_text(&x, v), text);
        }
        assert_eq!(to_plot(&x, 0.0), None, "a log axis cannot show zero");
        assert_eq!(to_plot(&x, f64::NAN), None);
        let n = axis("matrix size n (n×n by n×n)", true);
        assert_eq!(tick_text(&n, to_plot(&n, 4096.0).unwrap()), "4096");
        let lin = axis("bandwidth (GB/s)", false);
        assert_eq!((to_plot(&lin, 0.0), tick_text(&lin, 12.5)), (Some(0.0), "12.5".to_owned()));
    }

    #[test]
    fn grid_marks_sit_on_powers_of_two_with_every_fourth_strongest() {
        let x = axis("transfer size (bytes)", true);
        let (lo, hi) = (to_plot(&x, 4096.0).unwrap(), to_plot(&x, 268_435_456.0).unwrap());
        let marks = power_of_two_marks((lo - 0.01, hi + 0.01));
        assert_eq!(marks.len(), 17, "2^12 to 2^28");
        let strongest: Vec<String> =
            marks.iter().filter(|m| m.step_size > 3.0 * OCTAVE).map(|m| tick_text(&x, m.value)).collect();
        assert_eq!(strongest, ["4 KiB", "64 KiB", "1 MiB", "16 MiB", "256 MiB"]);
        assert_eq!(marks.iter().filter(|m| (m.step_size - 2.0 * OCTAVE).abs() < 1e-12).count(), 4);
        assert!(power_of_two_marks((f64::NAN, 1.0)).is_empty());
        assert!(power_of_two_marks((0.0, 1e6)).is_empty(), "absurd ranges get no marks");
        assert_eq!(power_of_two_marks((1.0, 0.0)).len(), 4, "reversed bounds: 1, 2, 4, 8");
    }

    #[test]
    fn hover_text_names_the_series_and_both_units() {
        let spec = PlotSpec {
            id: "transfer",
            title: String::new(),
            x: axis("transfer size (bytes)", true),
            y: axis("bandwidth (GB/s)", false),
            series: vec![Series { name: "H2D pinned".into(), points: vec![], style: SeriesStyle::Line }],
        };
        let x = to_plot(&spec.x, 1_048_576.0).unwrap();
        assert_eq!(hover_text(&spec, "H2D pinned", x, 20.14), "H2D pinned\n1 MiB: 20.1 GB/s");
        let t = axis("time since the run started (s)", false);
        assert_eq!(value_text(&t, 3.5), "3.50 s");
        let n = axis("matrix size n (n×n by n×n)", true);
        assert_eq!(value_text(&n, to_plot(&n, 1024.0).unwrap()), "1024", "no unit out of a phrase");
        assert_eq!(short_number(2.0), "2");
    }
}
