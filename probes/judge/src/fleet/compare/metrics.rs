//! The benchmark figures `compare` puts side by side: one headline per test kind from a report's
//! saved run (`Report.bench`), and when a node is slow against the fleet's median.
//!
//! The slow rule: a node is slow on a figure when it is worse than the median of the nodes that
//! measured it by more than [`SLOW_THRESHOLD`] (15 %), and at least [`MIN_NODES`] nodes measured
//! it. Why 15 %: the same benchmark on the same model of GPU varies by a few per cent from run to
//! run and board to board (clocks, temperature, the copy engines' plateau), while the faults this
//! is for cost far more: a link at x8 halves the transfers, a GPU held at a lower clock by heat or
//! a power cap loses a fifth or more of its GEMM throughput. 15 % is above the noise of one run and
//! below every such fault.

use std::collections::BTreeMap;

use super::ColumnId;
use gpu_doctor_model::Report;
use gpu_doctor_model::bench::plan::TestKind;
use gpu_doctor_model::bench::protocol::Metric;
use gpu_doctor_model::bench::run::TestRun;
use gpu_doctor_model::fleet::FleetFinding;

/// How much worse than the median a node may measure before it is slow (a fraction).
pub const SLOW_THRESHOLD: f64 = 0.15;
/// The fewest nodes with a figure for a median to judge them by.
pub const MIN_NODES: usize = 3;

/// What a figure is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MetricDef {
    pub label: String,
    pub unit: String,
    pub lower_is_better: bool,
}

/// The headline figure of each test that ran, keyed by column.
pub(crate) fn metrics(report: &Report) -> Figures {
    let mut out = BTreeMap::new();
    let Some(run) = &report.bench else { return out };
    for t in &run.tests {
        let Some((label, lower_is_better, pick)) = headline(t.test) else { continue };
        let Some(m) = best(t, pick, lower_is_better) else { continue };
        let rank = TestKind::ALL.iter().position(|&k| k == t.test).unwrap_or(usize::MAX);
        out.insert(
            ColumnId { rank: (0, u32::try_from(rank).unwrap_or(u32::MAX)), key: format!("bench.{}", t.test.name()) },
            (MetricDef { label: label.to_owned(), unit: m.1.to_owned(), lower_is_better }, m.0),
        );
    }
    out
}

pub(crate) type Figures = BTreeMap<ColumnId, (MetricDef, f64)>;

type Pick = fn(&Metric) -> bool;

/// The label, direction and measurement of each test kind's headline; `None` for the memory test,
/// whose errors are a fact (`gpu.memory_errors`), not a speed.
fn headline(test: TestKind) -> Option<(&'static str, bool, Pick)> {
    Some(match test {
        TestKind::H2d => ("H2D pinned", false, |m| matches!(m, Metric::HostToDevice { pinned: true })),
        TestKind::D2h => ("D2H pinned", false, |m| matches!(m, Metric::DeviceToHost { pinned: true })),
        TestKind::Bidir => ("Bidirectional", false, |m| matches!(m, Metric::Bidirectional)),
        TestKind::D2d => ("Device copy", false, |m| matches!(m, Metric::DeviceCopy { .. })),
        TestKind::Gemm => ("GEMM best", false, |m| matches!(m, Metric::Gemm { .. })),
        TestKind::Fma => ("FP32 FMA", false, |m| matches!(m, Metric::FmaPeak)),
        TestKind::Latency => ("Launch latency", true, |m| matches!(m, Metric::LaunchLatency)),
        TestKind::Sustained => ("Sustained GEMM", false, |m| matches!(m, Metric::SustainedGemm { .. })),
        TestKind::Cpu => ("CPU SGEMM", false, |m| matches!(m, Metric::CpuGemm)),
        TestKind::P2p => ("GPU-to-GPU slowest pair", false, |m| {
            matches!(m, Metric::PeerCopy { mode: gpu_doctor_model::bench::p2p::P2pMode::PeerEnabled })
        }),
        TestKind::Memtest => return None,
    })
}

/// The best measurement of the test that `pick` accepts (the largest, or the smallest when lower is
/// better), with its unit; only finite values count.
fn best(t: &TestRun, pick: Pick, lower_is_better: bool) -> Option<(f64, &'static str)> {
    let ms = t.result.as_ref()?.measurements.iter().filter(|m| pick(&m.metric) && m.value.is_finite());
    let better = |a: f64, b: f64| if lower_is_better { a < b } else { a > b };
    ms.fold(None, |acc: Option<(f64, &'static str)>, m| match acc {
        Some((v, _)) if !better(m.value, v) => acc,
        _ => Some((m.value, m.unit.symbol())),
    })
}

/// The median (the mean of the two middle values for an even count); `None` for no values.
pub(crate) fn median(values: &[f64]) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some(f64::midpoint(v[n / 2 - 1], v[n / 2])),
    }
}

/// Whether `value` is worse than `median` by more than [`SLOW_THRESHOLD`].
pub(crate) fn is_slow(value: f64, median: f64, lower_is_better: bool) -> bool {
    if lower_is_better { value > median * (1.0 + SLOW_THRESHOLD) } else { value < median * (1.0 - SLOW_THRESHOLD) }
}

/// `fleet.bench_slow` for one figure: who, how much, against which median.
pub(crate) fn slow_finding(
    key: &str,
    def: &MetricDef,
    slow: &[(String, f64)],
    median: f64,
    measured: usize,
) -> FleetFinding {
    let fmt = gpu_doctor_model::bench::format::value;
    let each = super::listed(slow, |(host, v)| {
        let off = ((v - median) / median * 100.0).abs();
        format!("{host} {} {} ({off:.0} % {})", fmt(*v), def.unit, if def.lower_is_better { "more" } else { "less" })
    });
    FleetFinding {
        id: super::BENCH_SLOW.to_owned(),
        severity: gpu_doctor_model::Severity::Warning,
        summary: format!(
            "{} of {measured} nodes are more than {:.0} % worse than the fleet median of {} {} on {}: {each}",
            slow.len(),
            SLOW_THRESHOLD * 100.0,
            fmt(median),
            def.unit,
            def.label,
        ),
        key: Some(key.to_owned()),
        hosts: slow.iter().map(|(h, _)| h.clone()).collect(),
    }
}
