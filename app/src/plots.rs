//! Plots of a benchmark run as plain data, drawn by the HTML report (`render::svg`) and by the
//! window (egui_plot) alike, so both show the same series with the same names and units.
//!
//! An axis marked `log` holds positive values on a log10 scale; a renderer skips points that are
//! not finite or not positive there. An axis whose label ends in `(bytes)` holds byte counts, and
//! `Axis::tick_label` writes them in binary units (`4 KiB`, `1 GiB`).

use gpu_doctor_model::bench::plan::{Precision, TestKind};
use gpu_doctor_model::bench::protocol::Point;
use gpu_doctor_model::bench::run::BenchRun;
use gpu_doctor_model::bench::unit::Unit;
use gpu_doctor_model::telemetry::GpuTelemetry;

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeriesStyle {
    /// A solid line through measured points.
    Line,
    /// A dashed line: a reference or theoretical value, not a measurement.
    Dashed,
    /// Unconnected markers.
    Points,
}

/// One named series of `[x, y]` points, in the axes' units, sorted by x.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Its name in the legend, e.g. `H2D pinned`.
    pub name: String,
    /// The points, `[x, y]`.
    pub points: Vec<[f64; 2]>,
    /// How it is drawn.
    pub style: SeriesStyle,
}

/// One axis: its label with the unit, and its scale.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// What it measures with the unit, e.g. `bandwidth (GB/s)`.
    pub label: String,
    /// Whether it is drawn on a log10 scale.
    pub log: bool,
}

/// One plot: a stable id, a title, two axes and its series.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotSpec {
    /// A stable id, e.g. `transfer` or `telemetry.power` (for egui ids and HTML anchors).
    pub id: &'static str,
    /// The title.
    pub title: String,
    /// The x axis.
    pub x: Axis,
    /// The y axis.
    pub y: Axis,
    /// The series, in legend order.
    pub series: Vec<Series>,
}

impl Axis {
    fn linear(label: impl Into<String>) -> Self {
        Self { label: label.into(), log: false }
    }

    fn log(label: impl Into<String>) -> Self {
        Self { label: label.into(), log: true }
    }

    /// Whether the axis holds byte counts (its label ends in `(bytes)`).
    pub fn is_bytes(&self) -> bool {
        self.label.ends_with("(bytes)")
    }

    /// A tick value as text: sizes in binary units on a byte axis, else a short number.
    pub fn tick_label(&self, v: f64) -> String {
        if self.is_bytes() && v.is_finite() && v >= 0.0 {
            #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "finite and non-negative")]
            return gpu_doctor_model::bench::format::bytes(v.round() as u64);
        }
        short_number(v)
    }
}

/// A number for a tick: `0.5`, `25`, `1200`, `1e-5`, without trailing zeros.
pub fn short_number(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e7).contains(&a) {
        return format!("{v:e}");
    }
    let text = if a >= 100.0 || a == 0.0 { format!("{v:.0}") } else { format!("{v:.3}") };
    if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_owned() } else { text }
}

/// Bytes per GiB.
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// The medians of a test's points in one series, converted by `y`, sorted by x.
fn series_points(run: &BenchRun, test: TestKind, series: &str, y: impl Fn(&Point) -> Option<f64>) -> Vec<[f64; 2]> {
    let mut points: Vec<[f64; 2]> = run
        .tests
        .iter()
        .filter(|t| t.test == test)
        .flat_map(|t| &t.points)
        .filter(|p| p.series == series)
        .filter_map(|p| Some([p.x, y(p)?]))
        .collect();
    points.sort_by(|a, b| a[0].total_cmp(&b[0]));
    points
}

/// A point's median in `unit`, or `None` when it was measured in another unit.
fn median_in(p: &Point, unit: Unit) -> Option<f64> {
    (p.unit == unit).then_some(p.value.median)
}

/// The smallest and largest x of some points; `None` when there are none.
fn x_range<'a>(points: impl IntoIterator<Item = &'a [f64; 2]>) -> Option<(f64, f64)> {
    let xs = points.into_iter().map(|p| p[0]).filter(|x| x.is_finite());
    xs.fold(None, |acc, x| match acc {
        None => Some((x, x)),
        Some((lo, hi)) => Some((f64::min(lo, x), f64::max(hi, x))),
    })
}

/// A dashed horizontal line at `y` across `range`.
fn reference(name: String, y: f64, (lo, hi): (f64, f64)) -> Series {
    Series { name, points: vec![[lo, y], [hi, y]], style: SeriesStyle::Dashed }
}

/// Bandwidth (GB/s) against transfer size (bytes, log x): one series per direction×memory kind
/// (H2D/D2H × pinned/pageable), plus the link's theoretical line (Dashed) when the facts know it.
/// None when the run has no transfer points.
pub fn transfer_plot(run: &BenchRun) -> Option<PlotSpec> {
    let mut series = Vec::new();
    for (test, dir) in [(TestKind::H2d, "H2D"), (TestKind::D2h, "D2H")] {
        for kind in ["pinned", "pageable"] {
            let points = series_points(run, test, kind, |p| median_in(p, Unit::GbPerS));
            if !points.is_empty() {
                series.push(Series { name: format!("{dir} {kind}"), points, style: SeriesStyle::Line });
            }
        }
    }
    let range = x_range(series.iter().flat_map(|s| &s.points))?;
    if let Some(link) = run.facts.link_gbytes_per_s.filter(|g| g.is_finite() && *g > 0.0) {
        series.push(reference("link, theoretical per direction".to_owned(), link, range));
    }
    Some(PlotSpec {
        id: "transfer",
        title: "Host↔device transfers".to_owned(),
        x: Axis::log("transfer size (bytes)"),
        y: Axis::linear("bandwidth (GB/s)"),
        series,
    })
}

/// TFLOP/s against matrix size per precision, plus a Dashed peak line per precision the facts
/// know (for the precisions that were measured). None when no GEMM points.
pub fn gemm_plot(run: &BenchRun) -> Option<PlotSpec> {
    let mut series = Vec::new();
    let mut measured = Vec::new();
    for p in Precision::ALL {
        let points = series_points(run, TestKind::Gemm, p.label(), |pt| median_in(pt, Unit::TflopPerS));
        if !points.is_empty() {
            series.push(Series { name: p.label().to_owned(), points, style: SeriesStyle::Line });
            measured.push(p);
        }
    }
    let range = x_range(series.iter().flat_map(|s| &s.points))?;
    for p in measured {
        if let Some((peak, _basis)) = run.facts.peak_tflops(p).filter(|(t, _)| t.is_finite() && *t > 0.0) {
            series.push(reference(format!("{} peak", p.label()), peak, range));
        }
    }
    Some(PlotSpec {
        id: "gemm",
        title: "GEMM throughput (cuBLAS)".to_owned(),
        x: Axis::log("matrix size n (n×n matrices)"),
        y: Axis::linear("throughput (TFLOP/s)"),
        series,
    })
}

/// TFLOP/s over the sustained-load test (seconds since it started), with the precision's peak
/// (Dashed) when the facts know it. None when the test has no points.
pub fn sustained_plot(run: &BenchRun) -> Option<PlotSpec> {
    let mut series = Vec::new();
    for p in Precision::ALL {
        let points = series_points(run, TestKind::Sustained, p.label(), |pt| median_in(pt, Unit::TflopPerS));
        if points.is_empty() {
            continue;
        }
        let range = x_range(&points);
        series.push(Series { name: p.label().to_owned(), points, style: SeriesStyle::Line });
        if let (Some((peak, _)), Some(range)) = (run.facts.peak_tflops(p), range)
            && peak.is_finite()
            && peak > 0.0
        {
            series.push(reference(format!("{} peak", p.label()), peak, range));
        }
    }
    if series.is_empty() {
        return None;
    }
    Some(PlotSpec {
        id: "sustained",
        title: "Sustained GEMM load".to_owned(),
        x: Axis::linear("time since the test started (s)"),
        y: Axis::linear("throughput (TFLOP/s)"),
        series,
    })
}

/// One telemetry quantity: plot id, title, axis label, series name, and how to read a sample.
type Quantity = (&'static str, &'static str, &'static str, &'static str, fn(&GpuTelemetry) -> Option<f64>);

/// The telemetry quantities plotted, in display order.
const QUANTITIES: [Quantity; 4] = [
    ("telemetry.memory", "GPU memory in use", "memory used (GiB)", "memory used", |s| {
        s.memory_used_bytes.map(|b| b as f64 / GIB)
    }),
    ("telemetry.sm_clock", "SM clock", "SM clock (MHz)", "SM clock", |s| s.clock_sm_mhz.map(f64::from)),
    ("telemetry.temperature", "GPU temperature", "temperature (°C)", "temperature", |s| {
        s.temperature_c.map(f64::from)
    }),
    ("telemetry.power", "Power draw", "power (W)", "power draw", |s| s.power_draw_mw.map(|mw| f64::from(mw) / 1000.0)),
];

/// Over time (seconds) from run.telemetry: memory used (GiB), SM clock (MHz), temperature (°C),
/// power (W); one PlotSpec each, skipping series with no samples.
pub fn telemetry_plots(run: &BenchRun) -> Vec<PlotSpec> {
    QUANTITIES
        .iter()
        .filter_map(|&(id, title, label, name, read)| {
            let points: Vec<[f64; 2]> =
                run.telemetry.iter().filter_map(|t| Some([t.t_ms as f64 / 1000.0, read(&t.sample)?])).collect();
            (!points.is_empty()).then(|| PlotSpec {
                id,
                title: title.to_owned(),
                x: Axis::linear("time since the run started (s)"),
                y: Axis::linear(label),
                series: vec![Series { name: name.to_owned(), points, style: SeriesStyle::Line }],
            })
        })
        .collect()
}

/// Every plot of a run in display order.
pub fn run_plots(run: &BenchRun) -> Vec<PlotSpec> {
    let mut out: Vec<PlotSpec> =
        [transfer_plot(run), gemm_plot(run), sustained_plot(run)].into_iter().flatten().collect();
    out.extend(telemetry_plots(run));
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use gpu_doctor_model::bench::plan::BenchPlan;
    use gpu_doctor_model::bench::protocol::{BenchEvent, Measurement, Metric, TestResult};
    use gpu_doctor_model::bench::record::{RunRecord, TelemetryPoint, TimedEvent};
    use gpu_doctor_model::bench::stats::Stats;
    use gpu_doctor_model::bench::verdict::{Facts, PeakOps};

    use super::*;

    fn sample(test: TestKind, series: &str, x: f64, x_unit: Unit, v: f64, unit: Unit) -> TimedEvent {
        TimedEvent {
            t_ms: 1,
            event: BenchEvent::Sample {
                test,
                point: Point {
                    series: series.to_owned(),
                    x,
                    x_unit,
                    value: Stats::from_samples(&[v]).unwrap(),
                    unit,
                    time_us: None,
                },
            },
        }
    }

    fn finished(test: TestKind) -> TimedEvent {
        let measurements = match test {
            TestKind::H2d => vec![Measurement {
                metric: Metric::HostToDevice { pinned: true },
                label: "pinned, plateau".into(),
                value: 20.0,
                unit: Unit::GbPerS,
                stats: None,
            }],
            _ => Vec::new(),
        };
        TimedEvent {
            t_ms: 2,
            event: BenchEvent::Finished { test, result: TestResult { measurements, ..TestResult::default() } },
        }
    }

    /// A run with transfer, GEMM and sustained points and four telemetry samples (no power).
    pub(crate) fn full_run(facts: Facts) -> BenchRun {
        let tests = vec![TestKind::H2d, TestKind::D2h, TestKind::Gemm, TestKind::Sustained];
        let plan = BenchPlan::preset(0, tests.clone(), true);
        let mut events = Vec::new();
        // Sizes out of order: the builders sort by x.
        for &size in &[1_048_576.0, 4096.0, 268_435_456.0] {
            events.push(sample(TestKind::H2d, "pinned", size, Unit::Bytes, 20.0, Unit::GbPerS));
            events.push(sample(TestKind::H2d, "pageable", size, Unit::Bytes, 9.0, Unit::GbPerS));
            events.push(sample(TestKind::D2h, "pinned", size, Unit::Bytes, 21.0, Unit::GbPerS));
        }
        for &n in &[256.0, 1024.0, 4096.0] {
            events.push(sample(TestKind::Gemm, "FP32", n, Unit::MatrixN, n / 1000.0, Unit::TflopPerS));
            events.push(sample(TestKind::Gemm, "BF16", n, Unit::MatrixN, n / 100.0, Unit::TflopPerS));
        }
        for s in 1..=3 {
            events.push(sample(TestKind::Sustained, "BF16", f64::from(s), Unit::Secs, 150.0, Unit::TflopPerS));
        }
        events.extend(tests.iter().map(|&t| finished(t)));
        let telemetry = (0..4u32)
            .map(|i| TelemetryPoint {
                t_ms: u64::from(i) * 500,
                sample: GpuTelemetry {
                    memory_used_bytes: Some(u64::from(i + 1) << 30),
                    clock_sm_mhz: Some(1800 + i),
                    temperature_c: (i != 2).then_some(60 + i),
                    ..GpuTelemetry::default()
                },
            })
            .collect();
        gpu_doctor_judge::bench::run::assemble(&plan, RunRecord { events, telemetry, ..RunRecord::default() }, |_| {
            facts
        })
    }

    pub(crate) fn known_facts() -> Facts {
        Facts {
            link_gbytes_per_s: Some(31.5),
            link_basis: Some("PCIe Gen4 x16".into()),
            sm_count: Some(100),
            clock_sm_max_mhz: Some(2000),
            peak_ops: Some(PeakOps { fp32: Some(256), bf16: Some(1024), ..PeakOps::default() }),
            ..Facts::default()
        }
    }

    fn names(spec: &PlotSpec) -> Vec<&str> {
        spec.series.iter().map(|s| s.name.as_str()).collect()
    }

    #[test]
    fn transfers_have_a_series_per_direction_and_kind_and_the_link_line() {
        let run = full_run(known_facts());
        let plot = transfer_plot(&run).unwrap();
        assert_eq!(names(&plot), ["H2D pinned", "H2D pageable", "D2H pinned", "link, theoretical per direction"]);
        assert!(plot.x.log && !plot.y.log && plot.x.is_bytes());
        let h2d = &plot.series[0];
        assert_eq!(h2d.style, SeriesStyle::Line);
        assert_eq!(h2d.points, [[4096.0, 20.0], [1_048_576.0, 20.0], [268_435_456.0, 20.0]]);
        let link = plot.series.last().unwrap();
        assert_eq!(link.style, SeriesStyle::Dashed);
        assert_eq!(link.points, [[4096.0, 31.5], [268_435_456.0, 31.5]]);
    }

    #[test]
    fn without_link_facts_there_is_no_theoretical_line() {
        let plot = transfer_plot(&full_run(Facts::default())).unwrap();
        assert!(plot.series.iter().all(|s| s.style == SeriesStyle::Line), "{:?}", names(&plot));
        assert_eq!(plot.series.len(), 3);
    }

    #[test]
    fn gemm_has_a_series_and_a_peak_per_measured_precision() {
        let plot = gemm_plot(&full_run(known_facts())).unwrap();
        assert_eq!(names(&plot), ["FP32", "BF16", "FP32 peak", "BF16 peak"]);
        assert_eq!(plot.series[0].points.len(), 3);
        // 256 ops × 100 SMs × 2000 MHz = 51.2 TFLOP/s.
        let fp32_peak = &plot.series[2];
        assert_eq!(fp32_peak.style, SeriesStyle::Dashed);
        assert!((fp32_peak.points[0][1] - 51.2).abs() < 1e-9, "{fp32_peak:?}");
        assert_eq!(fp32_peak.points.iter().map(|p| p[0]).collect::<Vec<_>>(), [256.0, 4096.0]);
        let no_facts = gemm_plot(&full_run(Facts::default())).unwrap();
        assert_eq!(names(&no_facts), ["FP32", "BF16"]);
    }

    #[test]
    fn sustained_load_over_time() {
        let plot = sustained_plot(&full_run(known_facts())).unwrap();
        assert_eq!(names(&plot), ["BF16", "BF16 peak"]);
        assert_eq!(plot.series[0].points, [[1.0, 150.0], [2.0, 150.0], [3.0, 150.0]]);
    }

    #[test]
    fn telemetry_is_converted_and_empty_quantities_are_skipped() {
        let plots = telemetry_plots(&full_run(Facts::default()));
        let ids: Vec<&str> = plots.iter().map(|p| p.id).collect();
        assert_eq!(ids, ["telemetry.memory", "telemetry.sm_clock", "telemetry.temperature"], "no power samples");
        assert_eq!(plots[0].series[0].points, [[0.0, 1.0], [0.5, 2.0], [1.0, 3.0], [1.5, 4.0]], "GiB over seconds");
        assert_eq!(plots[2].series[0].points.len(), 3, "the sample without a temperature is left out");
        let mut run = full_run(Facts::default());
        run.telemetry[0].sample.power_draw_mw = Some(250_500);
        let power = telemetry_plots(&run).pop().unwrap();
        assert_eq!((power.id, power.series[0].points.clone()), ("telemetry.power", vec![[0.0, 250.5]]));
    }

    #[test]
    fn a_run_without_points_has_no_plots() {
        let run = gpu_doctor_judge::bench::run::assemble(
            &BenchPlan::preset(0, vec![TestKind::Cpu], true),
            RunRecord::default(),
            |_| known_facts(),
        );
        assert!(transfer_plot(&run).is_none() && gemm_plot(&run).is_none());
        assert!(run_plots(&run).is_empty());
        let ids: Vec<&str> = run_plots(&full_run(known_facts())).iter().map(|p| p.id).collect();
        assert_eq!(
            ids,
            ["transfer", "gemm", "sustained", "telemetry.memory", "telemetry.sm_clock", "telemetry.temperature"]
        );
    }

    #[test]
    fn tick_labels() {
        let bytes = Axis::log("transfer size (bytes)");
        assert_eq!(bytes.tick_label(1024.0), "1 KiB");
        assert_eq!(bytes.tick_label(1_073_741_824.0), "1 GiB");
        let plain = Axis::linear("bandwidth (GB/s)");
        assert_eq!(plain.tick_label(2.5), "2.5");
        assert_eq!(plain.tick_label(1200.0), "1200");
        assert_eq!(plain.tick_label(0.0), "0");
        assert_eq!(plain.tick_label(0.25), "0.25");
        assert_eq!(plain.tick_label(f64::NAN), "");
    }
}
