//! A `PlotSpec` as a self-contained inline SVG: axes with ticks, gridlines, a legend and one
//! polyline (or set of markers) per series. Text and axes use `currentColor`, so the plot follows
//! the page's light or dark colours; series use a fixed palette that reads on both.
//!
//! Points that cannot be drawn (not finite, or not positive on a log axis) are skipped; a plot
//! with nothing left to draw still gets its frame and says so.

use std::fmt::Write;

use crate::plots::{Axis, PlotSpec, Series, SeriesStyle};

/// Width of the drawing, in SVG units (pixels at 100 %).
const WIDTH: f64 = 640.0;
/// Height of the plot area with its title and axis labels, before the legend.
const HEIGHT: f64 = 360.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 36.0;
const BOTTOM: f64 = 52.0;
const LEGEND_ROW: f64 = 20.0;
/// Space between the x axis label and the legend.
const LEGEND_GAP: f64 = 8.0;
/// Series colours (Tableau 10), readable on white and on a dark background.
const PALETTE: [&str; 8] = ["#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f"];
/// Most ticks an axis gets.
const MAX_TICKS: usize = 8;
/// Slack for rounding when a range ends exactly on a tick.
const EPS: f64 = 1e-9;
/// Series with more points than this are drawn without markers.
const MARKER_LIMIT: usize = 40;

/// Escapes text for SVG and HTML content and attribute values. Control characters other than
/// line breaks and tabs (which XML does not allow at all) and bidirectional overrides are shown as
/// their escape (`\u{1b}`).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\r' => out.push(' '),
            c if c != '\n' && c != '\t' && super::text::is_hidden(c) => out.extend(c.escape_default()),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Maps one axis's values onto `[0, 1]`, on a linear or log10 scale.
#[derive(Debug, Clone, Copy)]
struct Scale {
    /// Lower end, in scale units (log10 of the value on a log axis).
    lo: f64,
    /// Upper end, in scale units.
    hi: f64,
    log: bool,
}

impl Scale {
    /// A value in scale units; `None` when it cannot be drawn on this axis.
    fn unit(log: bool, v: f64) -> Option<f64> {
        if !v.is_finite() || (log && v <= 0.0) {
            return None;
        }
        Some(if log { v.log10() } else { v })
    }

    /// The scale covering `values` (already in scale units), padded; `None` without values.
    fn covering(log: bool, values: impl Iterator<Item = f64>, from_zero: bool) -> Option<Self> {
        let (mut lo, mut hi) = values.fold(None, |acc: Option<(f64, f64)>, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })?;
        if from_zero && !log && lo >= 0.0 && lo < 0.6 * hi {
            lo = 0.0;
        }
        let span = hi - lo;
        if span > 0.0 && span.is_finite() {
            let pad = span * 0.05;
            hi += pad;
            if lo != 0.0 || log {
                lo -= pad;
            }
        } else {
            // One value (or a span too large to pad): give it room around it.
            let room = if log {
                0.5
            } else if lo == 0.0 {
                1.0
            } else {
                lo.abs() * 0.1
            };
            lo -= room;
            hi += room;
        }
        Some(Self { lo, hi, log })
    }

    /// Where a value (in scale units) falls, from 0 (lo) to 1 (hi).
    fn fraction(&self, u: f64) -> f64 {
        let span = self.hi - self.lo;
        if span > 0.0 && span.is_finite() {
            let f = (u - self.lo) / span;
            if f.is_finite() { f } else { 0.5 }
        } else {
            0.5
        }
    }

    /// Tick positions as values (not scale units); `pow2` puts log ticks at powers of two.
    fn ticks(&self, axis: &Axis, pow2: bool) -> Vec<f64> {
        if !(self.lo.is_finite() && self.hi.is_finite() && self.hi > self.lo) {
            return Vec::new();
        }
        if !self.log {
            return linear_ticks(self.lo, self.hi);
        }
        if pow2 || axis.is_bytes() {
            // Powers of two, so sizes read as 4 KiB, 64 KiB, 1 MiB, or 256, 1024, 4096.
            let (lo2, hi2) = (self.lo / 2f64.log10(), self.hi / 2f64.log10());
            for step in [1.0, 2.0, 4.0, 5.0, 10.0, 20.0, 50.0] {
                let first = (lo2 / step - EPS).ceil();
                let last = (hi2 / step + EPS).floor();
                if last - first < MAX_TICKS as f64 {
                    return stepped(first, last, 1.0).map(|k| 2f64.powf(k * step)).collect();
                }
            }
            return Vec::new();
        }
        let (first, last) = ((self.lo - EPS).ceil(), (self.hi + EPS).floor());
        if last - first >= 1.0 {
            let every = ((last - first + 1.0) / MAX_TICKS as f64).ceil();
            return stepped(first, last, every).map(|d| 10f64.powf(d)).collect();
        }
        // Less than two decades: 1, 2 and 5 of each decade.
        stepped(self.lo.floor(), self.hi.ceil(), 1.0)
            .flat_map(|d| [1.0, 2.0, 5.0].map(|m| m * 10f64.powf(d)))
            .filter(|v| (self.lo..=self.hi).contains(&v.log10()))
            .collect()
    }
}

/// `first`, `first + step`, … up to `last`: at most 64 values.
fn stepped(first: f64, last: f64, step: f64) -> impl Iterator<Item = f64> {
    (0..64).map(move |i| first + f64::from(i) * step).take_while(move |k| *k <= last && first.is_finite())
}

/// Ticks at 1, 2 or 5 × 10^k covering `[lo, hi]`.
fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let raw = (hi - lo) / 5.0;
    if !(raw.is_finite() && raw > 0.0) {
        return Vec::new();
    }
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * magnitude).find(|s| raw <= *s).unwrap_or(10.0 * magnitude);
    if !(step.is_finite() && step > 0.0) {
        return Vec::new();
    }
    let first = (lo / step).ceil();
    stepped(first, (hi / step).floor(), 1.0)
        .take(MAX_TICKS + 4)
        // Snap values like 0.30000000000000004 and -0.
        .map(|k| {
            let v = k * step;
            if v.abs() < step * 1e-9 { 0.0 } else { v }
        })
        .collect()
}

/// Whether every value (log10 scale units) is a power of two, e.g. matrix sizes 256…8192.
fn powers_of_two(mut values: impl Iterator<Item = f64>) -> bool {
    values.all(|u| {
        let k = u / 2f64.log10();
        (k - k.round()).abs() < 1e-6
    })
}

/// A series' points in scale units, without those that cannot be drawn.
fn drawable(series: &Series, x_log: bool, y_log: bool) -> Vec<(f64, f64)> {
    series.points.iter().filter_map(|[x, y]| Some((Scale::unit(x_log, *x)?, Scale::unit(y_log, *y)?))).collect()
}

/// The colour of each series: reference lines named after a series (`FP32 peak`) take its colour,
/// other reference lines are drawn in the text colour.
fn colours(series: &[Series]) -> Vec<String> {
    let mut next = 0;
    let mut out: Vec<String> = Vec::with_capacity(series.len());
    for (i, s) in series.iter().enumerate() {
        let colour = if s.style == SeriesStyle::Dashed {
            series[..i]
                .iter()
                .zip(&out)
                .find(|(other, _)| {
                    other.style != SeriesStyle::Dashed && s.name.starts_with(&format!("{} ", other.name))
                })
                .map_or_else(|| "currentColor".to_owned(), |(_, c)| c.clone())
        } else {
            next += 1;
            PALETTE[(next - 1) % PALETTE.len()].to_owned()
        };
        out.push(colour);
    }
    out
}

/// Rough width of a legend entry, in SVG units.
fn legend_width(name: &str) -> f64 {
    let chars = name.chars().count() as f64;
    30.0 + 6.8 * chars
}

/// Lays the legend out in rows under the plot: the (x, row) of each entry and the row count.
fn legend_layout(series: &[Series]) -> (Vec<(f64, f64)>, usize) {
    let mut rows = 0;
    let mut x = f64::INFINITY;
    let max = WIDTH - RIGHT;
    let mut out = Vec::with_capacity(series.len());
    for s in series {
        let w = legend_width(&s.name);
        if x + w > max {
            rows += 1;
            x = LEFT;
        }
        out.push((x, (rows - 1) as f64));
        x += w + 12.0;
    }
    (out, rows)
}

/// The plot as an inline `<svg>` element.
#[expect(clippy::too_many_lines, reason = "to be split with the rest of render/")]
pub fn plot(spec: &PlotSpec) -> String {
    let (legend, legend_rows) = legend_layout(&spec.series);
    let height = if legend_rows == 0 { HEIGHT } else { HEIGHT + LEGEND_GAP + legend_rows as f64 * LEGEND_ROW };
    let (px0, px1, py0, py1) = (LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, TOP);
    let mut out = String::new();
    let title = escape(&spec.title);
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="plot" id="plot-{id}" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" aria-label="{title}" font-family="system-ui, sans-serif" font-size="12" fill="currentColor">"#,
        id = escape(spec.id),
    );
    let _ = write!(out, "<title>{title}</title>");
    let _ = write!(
        out,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="15" font-weight="600">{title}</text>"#,
        WIDTH / 2.0
    );

    let points: Vec<Vec<(f64, f64)>> = spec.series.iter().map(|s| drawable(s, spec.x.log, spec.y.log)).collect();
    let xs = Scale::covering(spec.x.log, points.iter().flatten().map(|p| p.0), false);
    let ys = Scale::covering(spec.y.log, points.iter().flatten().map(|p| p.1), true);

    // Frame and axis labels.
    let _ = write!(
        out,
        r#"<rect x="{px0}" y="{py1}" width="{}" height="{}" fill="none" stroke="currentColor" stroke-opacity="0.5"/>"#,
        px1 - px0,
        py0 - py1
    );
    let _ = write!(
        out,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        (px0 + px1) / 2.0,
        py0 + 38.0,
        escape(&spec.x.label)
    );
    let _ = write!(
        out,
        r#"<text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        (py0 + py1) / 2.0,
        escape(&spec.y.label)
    );

    let (Some(xs), Some(ys)) = (xs, ys) else {
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill-opacity="0.7">no data to plot</text>"#,
            (px0 + px1) / 2.0,
            (py0 + py1) / 2.0
        );
        legend_svg(&mut out, spec, &legend, &colours(&spec.series));
        out.push_str("</svg>");
        return out;
    };
    let to_x = |u: f64| px0 + xs.fraction(u) * (px1 - px0);
    let to_y = |u: f64| py0 - ys.fraction(u) * (py0 - py1);

    // Gridlines and tick labels.
    out.push_str(r#"<g stroke="currentColor" stroke-opacity="0.15">"#);
    let x_ticks = xs.ticks(&spec.x, spec.x.log && powers_of_two(points.iter().flatten().map(|p| p.0)));
    let y_ticks = ys.ticks(&spec.y, spec.y.log && powers_of_two(points.iter().flatten().map(|p| p.1)));
    for t in &x_ticks {
        if let Some(u) = Scale::unit(spec.x.log, *t) {
            let x = to_x(u);
            let _ = write!(out, r#"<line x1="{x:.1}" y1="{py1:.1}" x2="{x:.1}" y2="{py0:.1}"/>"#);
        }
    }
    for t in &y_ticks {
        if let Some(u) = Scale::unit(spec.y.log, *t) {
            let y = to_y(u);
            let _ = write!(out, r#"<line x1="{px0:.1}" y1="{y:.1}" x2="{px1:.1}" y2="{y:.1}"/>"#);
        }
    }
    out.push_str("</g>");
    for t in &x_ticks {
        if let Some(u) = Scale::unit(spec.x.log, *t) {
            let _ = write!(
                out,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                to_x(u),
                py0 + 16.0,
                escape(&spec.x.tick_label(*t))
            );
        }
    }
    for t in &y_ticks {
        if let Some(u) = Scale::unit(spec.y.log, *t) {
            let _ = write!(
                out,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                px0 - 6.0,
                to_y(u) + 4.0,
                escape(&spec.y.tick_label(*t))
            );
        }
    }

    // The series.
    let colours = colours(&spec.series);
    for ((s, pts), colour) in spec.series.iter().zip(&points).zip(&colours) {
        let coords: Vec<(f64, f64)> = pts.iter().map(|&(x, y)| (to_x(x), to_y(y))).collect();
        let _ = write!(out, r#"<g class="series"><title>{}</title>"#, escape(&s.name));
        // Markers on measured points (unless there are too many to tell apart), and on a line of
        // one point, which has nothing to connect.
        let markers = match s.style {
            SeriesStyle::Points => true,
            SeriesStyle::Line => coords.len() <= MARKER_LIMIT,
            SeriesStyle::Dashed => coords.len() == 1,
        };
        if s.style != SeriesStyle::Points && coords.len() >= 2 {
            let dash = if s.style == SeriesStyle::Dashed { r#" stroke-dasharray="6 4""# } else { "" };
            let list: Vec<String> = coords.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
            let _ = write!(
                out,
                r#"<polyline fill="none" stroke="{colour}" stroke-width="2"{dash} points="{}"/>"#,
                list.join(" ")
            );
        }
        if markers {
            let r = if s.style == SeriesStyle::Points { 3.5 } else { 2.5 };
            for (x, y) in &coords {
                let _ = write!(out, r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}" fill="{colour}"/>"#);
            }
        }
        out.push_str("</g>");
    }
    legend_svg(&mut out, spec, &legend, &colours);
    out.push_str("</svg>");
    out
}

/// The legend entries under the plot.
fn legend_svg(out: &mut String, spec: &PlotSpec, layout: &[(f64, f64)], colours: &[String]) {
    for ((s, (x, row)), colour) in spec.series.iter().zip(layout).zip(colours) {
        let y = HEIGHT + LEGEND_GAP + row * LEGEND_ROW;
        let mark = match s.style {
            SeriesStyle::Line => {
                format!(
                    r#"<line x1="{x:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{colour}" stroke-width="2"/>"#,
                    x + 20.0
                )
            }
            SeriesStyle::Dashed => format!(
                r#"<line x1="{x:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{colour}" stroke-width="2" stroke-dasharray="6 4"/>"#,
                x + 20.0
            ),
            SeriesStyle::Points => format!(r#"<circle cx="{:.1}" cy="{y:.1}" r="3.5" fill="{colour}"/>"#, x + 10.0),
        };
        let _ = write!(
            out,
            r#"<g class="legend">{mark}<text x="{:.1}" y="{:.1}">{}</text></g>"#,
            x + 26.0,
            y + 4.0,
            escape(&s.name)
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn spec(x_log: bool, y_log: bool, series: Vec<Series>) -> PlotSpec {
        PlotSpec {
            id: "test",
            title: "Test".into(),
            x: Axis { label: "transfer size (bytes)".into(), log: x_log },
            y: Axis { label: "bandwidth (GB/s)".into(), log: y_log },
            series,
        }
    }

    fn line(name: &str, points: Vec<[f64; 2]>, style: SeriesStyle) -> Series {
        Series { name: name.into(), points, style }
    }

    /// Parses the SVG as XML and returns it, failing the test when it is not well-formed.
    fn parsed(svg: &str) -> roxmltree::Document<'_> {
        let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}\n{svg}"));
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        doc
    }

    fn numbers_are_finite(doc: &roxmltree::Document<'_>) {
        for node in doc.descendants().filter(roxmltree::Node::is_element) {
            for a in node.attributes().filter(|a| ["x", "y", "x1", "x2", "y1", "y2", "cx", "cy"].contains(&a.name())) {
                let v: f64 = a.value().parse().unwrap_or_else(|_| panic!("{} = {:?}", a.name(), a.value()));
                assert!(v.is_finite() && (-1.0..=1000.0).contains(&v), "{} = {v}", a.name());
            }
            if let Some(points) = node.attribute("points") {
                assert!(!points.contains("NaN") && !points.contains("inf"), "{points}");
            }
        }
    }

    #[test]
    fn a_transfer_plot_has_ticks_in_binary_units_a_legend_and_a_dashed_line() {
        let svg = plot(&spec(
            true,
            false,
            vec![
                line(
                    "H2D pinned",
                    vec![[4096.0, 3.0], [1_048_576.0, 20.0], [1_073_741_824.0, 24.0]],
                    SeriesStyle::Line,
                ),
                line("link", vec![[4096.0, 31.5], [1_073_741_824.0, 31.5]], SeriesStyle::Dashed),
            ],
        ));
        let doc = parsed(&svg);
        numbers_are_finite(&doc);
        let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).collect();
        for want in ["4 KiB", "1 MiB", "256 MiB", "H2D pinned", "link", "Test", "bandwidth (GB/s)"] {
            assert!(texts.contains(&want), "{want} missing in {texts:?}");
        }
        assert_eq!(doc.descendants().filter(|n| n.has_tag_name("polyline")).count(), 2);
        assert!(svg.contains(r#"stroke-dasharray="6 4" points="#), "the reference line is dashed");
        assert!(svg.contains(r#"viewBox="0 0 640 388""#), "one legend row: {svg}");
    }

    #[test]
    fn text_is_escaped() {
        let mut s =
            spec(false, false, vec![line(r#"<b>"x" & 'y'</b>"#, vec![[1.0, 2.0], [2.0, 3.0]], SeriesStyle::Line)]);
        s.title = "a < b & c > d".into();
        let svg = plot(&s);
        let doc = parsed(&svg);
        assert!(!svg.contains("<b>"));
        let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).collect();
        assert!(texts.contains(&r#"<b>"x" & 'y'</b>"#), "{texts:?}");
        assert!(texts.contains(&"a < b & c > d"));
        assert_eq!(escape(r#"&<>"'"#), "&amp;&lt;&gt;&quot;&#39;");
    }

    #[test]
    fn degenerate_inputs_never_panic_and_stay_well_formed() {
        let weird = [
            vec![],
            vec![[1.0, 1.0]],
            vec![[5.0, 5.0], [5.0, 5.0]],
            vec![[0.0, 0.0], [0.0, 0.0]],
            vec![[f64::NAN, 1.0], [1.0, f64::INFINITY], [f64::NEG_INFINITY, f64::NAN]],
            vec![[-1.0, -5.0], [0.0, 0.0], [10.0, -1e-300]],
            vec![[1e-300, 1e300], [1e300, 1e-300]],
            vec![[f64::MAX, f64::MAX], [f64::MIN, f64::MIN]],
            vec![[f64::MIN_POSITIVE, 1.0], [f64::MIN_POSITIVE, 1.0]],
            vec![[1.0, 0.1], [1.0000000001, 0.1000000001]],
        ];
        for points in weird {
            for (x_log, y_log) in [(false, false), (true, false), (false, true), (true, true)] {
                for style in [SeriesStyle::Line, SeriesStyle::Dashed, SeriesStyle::Points] {
                    let s = spec(x_log, y_log, vec![line("s", points.clone(), style)]);
                    let svg = plot(&s);
                    let doc = parsed(&svg);
                    numbers_are_finite(&doc);
                }
            }
        }
        let empty = plot(&spec(true, true, Vec::new()));
        assert!(empty.contains("no data to plot"));
        parsed(&empty);
    }

    #[test]
    fn log_points_that_cannot_be_drawn_are_skipped() {
        let svg = plot(&spec(
            true,
            true,
            vec![line(
                "s",
                vec![[0.0, 1.0], [-4.0, 2.0], [10.0, 3.0], [100.0, 0.0], [1000.0, 4.0]],
                SeriesStyle::Points,
            )],
        ));
        let doc = parsed(&svg);
        let circles = doc.descendants().filter(|n| n.has_tag_name("circle")).count();
        assert_eq!(circles, 2 + 1, "two drawable points and the legend marker");
    }

    #[test]
    fn one_point_of_a_line_is_a_marker() {
        let svg = plot(&spec(false, false, vec![line("one", vec![[3.0, 4.0]], SeriesStyle::Line)]));
        let doc = parsed(&svg);
        assert_eq!(doc.descendants().filter(|n| n.has_tag_name("circle")).count(), 1);
        assert_eq!(doc.descendants().filter(|n| n.has_tag_name("polyline")).count(), 0);
    }

    #[test]
    fn ticks() {
        assert_eq!(linear_ticks(0.0, 10.0), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let small: Vec<String> = linear_ticks(0.0, 0.35).iter().map(|v| crate::plots::short_number(*v)).collect();
        assert_eq!(small, ["0", "0.1", "0.2", "0.3"]);
        assert_eq!(
            Scale { lo: -300.0, hi: 300.0, log: true }.ticks(&Axis { label: "n".into(), log: true }, false).len(),
            8
        );
        let decades = Scale { lo: 0.0, hi: 3.0, log: true };
        assert_eq!(decades.ticks(&Axis { label: "n".into(), log: true }, false), [1.0, 10.0, 100.0, 1000.0]);
        let short = Scale { lo: 256f64.log10(), hi: 8192f64.log10(), log: true };
        assert_eq!(short.ticks(&Axis { label: "n".into(), log: true }, false), [500.0, 1000.0, 2000.0, 5000.0]);
        assert_eq!(
            short.ticks(&Axis { label: "n".into(), log: true }, true),
            [256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0]
        );
        let bytes = Scale { lo: 4096f64.log10(), hi: 1_073_741_824f64.log10(), log: true };
        let t = bytes.ticks(&Axis { label: "size (bytes)".into(), log: true }, false);
        assert_eq!(t, [4096.0, 65536.0, 1_048_576.0, 16_777_216.0, 268_435_456.0]);
    }

    #[test]
    fn long_legends_wrap_and_the_drawing_grows() {
        let series: Vec<Series> = (0..8)
            .map(|i| line(&format!("a rather long series name {i}"), vec![[1.0, 1.0]], SeriesStyle::Line))
            .collect();
        let svg = plot(&spec(false, false, series));
        let doc = parsed(&svg);
        let height: f64 = doc.root_element().attribute("height").unwrap().parse().unwrap();
        assert!(height > HEIGHT + LEGEND_ROW, "{height}");
    }
}
