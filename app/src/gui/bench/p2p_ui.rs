//! The GPU-to-GPU copy matrix as a heat map: copies from each row's GPU to each column's GPU,
//! coloured by bandwidth or latency for the mode picked (peer access on, off, host-staged), the
//! value in each cell, each pair's verdict marked (a LOW pair outlined), the numbers and the
//! judgement's words on hover, and the all-to-all figure beside it.

use egui::{Color32, RichText, Stroke, Ui};
use gpu_doctor_model::bench::format;
use gpu_doctor_model::bench::judgement::Verdict;
use gpu_doctor_model::bench::p2p::{P2pMatrix, P2pMode, P2pPair};
use gpu_doctor_model::bench::stats::Stats;

use super::results_ui::verdict_tone;
use crate::gui::theme::{Tone, toned};

/// One cell of the map.
const CELL: [f32; 2] = [64.0, 38.0];
/// Space between a marked cell's outline and its fill.
const OUTLINE_GAP: f32 = 2.0;
/// Steps of the legend's colour bar.
const LEGEND_STEPS: usize = 48;
/// The colour scale's stops (viridis, dark to bright): bright is better, on either theme.
const RAMP: [[u8; 3]; 5] =
    [[0x44, 0x01, 0x54], [0x3b, 0x52, 0x8b], [0x21, 0x91, 0x8c], [0x5e, 0xc9, 0x62], [0xfd, 0xe7, 0x25]];

/// What the cells show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum P2pMetric {
    /// Copy bandwidth, GB/s (higher is better).
    #[default]
    Bandwidth,
    /// Time of one small copy, µs (lower is better).
    Latency,
}

impl P2pMetric {
    /// Its unit.
    pub fn unit(self) -> &'static str {
        match self {
            Self::Bandwidth => "GB/s",
            Self::Latency => "µs",
        }
    }

    /// The selector's words.
    fn label(self) -> &'static str {
        match self {
            Self::Bandwidth => "Bandwidth",
            Self::Latency => "Latency",
        }
    }

    /// The median of `pair` in `mode`, when measured.
    pub fn of(self, pair: &P2pPair, mode: P2pMode) -> Option<f64> {
        match self {
            Self::Bandwidth => pair.bandwidth(mode),
            Self::Latency => pair.latency(mode),
        }
        .filter(|v| v.is_finite())
    }
}

/// What the heat map shows: the mode and the metric, picked on the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct P2pView {
    /// How the copies were made.
    pub mode: P2pMode,
    /// What the cells show.
    pub metric: P2pMetric,
}

impl Default for P2pView {
    fn default() -> Self {
        Self { mode: P2pMode::PeerEnabled, metric: P2pMetric::Bandwidth }
    }
}

/// The colour scale of one metric: from 0 to the largest value of any mode, so the modes compare
/// on one scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    /// The largest value measured in any mode.
    pub max: f64,
    /// Higher values are better (bandwidth), else lower are (latency).
    pub higher_is_better: bool,
}

impl Scale {
    /// The scale for `metric` over every pair and mode; `None` when nothing was measured.
    pub fn of(m: &P2pMatrix, metric: P2pMetric) -> Option<Self> {
        let max = m
            .pairs
            .iter()
            .flat_map(|p| P2pMode::ALL.into_iter().filter_map(move |mode| metric.of(p, mode)))
            .reduce(f64::max)?;
        (max > 0.0).then_some(Self { max, higher_is_better: metric == P2pMetric::Bandwidth })
    }

    /// Where `v` falls, 0 (worst) to 1 (best).
    pub fn fraction(self, v: f64) -> f32 {
        let t = (v / self.max).clamp(0.0, 1.0);
        #[allow(clippy::cast_possible_truncation)]
        let t = (if self.higher_is_better { t } else { 1.0 - t }) as f32;
        t
    }
}

/// The colour at `t` (0 worst, 1 best) on the ramp.
pub fn ramp(t: f32) -> Color32 {
    let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.0 };
    #[allow(clippy::cast_precision_loss)]
    let x = t * (RAMP.len() - 1) as f32;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let i = (x.floor() as usize).min(RAMP.len() - 2);
    #[allow(clippy::cast_precision_loss)]
    let f = x - i as f32;
    let (a, b) = (RAMP[i], RAMP[i + 1]);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let mix = |k: usize| (f32::from(a[k]) + (f32::from(b[k]) - f32::from(a[k])) * f).round() as u8;
    Color32::from_rgb(mix(0), mix(1), mix(2))
}

/// Black or white, whichever reads on `fill`.
pub fn text_on(fill: Color32) -> Color32 {
    let luma = 0.299 * f32::from(fill.r()) + 0.587 * f32::from(fill.g()) + 0.114 * f32::from(fill.b());
    if luma > 140.0 { Color32::BLACK } else { Color32::WHITE }
}

/// The short mark of a verdict worth seeing in a cell (`LOW`, `FAILED`, `ABOVE?`); `None` for a
/// normal pair or one without a reference.
pub fn verdict_mark(v: Verdict) -> Option<&'static str> {
    match v {
        Verdict::Low => Some("LOW"),
        Verdict::Failed => Some("FAILED"),
        Verdict::AboveTheory => Some("ABOVE?"),
        Verdict::Normal | Verdict::NoReference => None,
    }
}

/// A GPU's name in the map's headings: `0 · NVIDIA H100 80GB HBM3 (0000:18:00.0)`.
fn gpu_words(m: &P2pMatrix, ordinal: u32) -> String {
    let Some(g) = m.gpu(ordinal) else { return format!("CUDA device {ordinal}") };
    let mut text = format!("CUDA device {ordinal}: {}", g.name.as_deref().unwrap_or("unnamed GPU"));
    if let Some(bus) = &g.pci_bus_id {
        text.push_str(&format!(" ({bus})"));
    }
    text
}

fn stats_text(s: &Stats, unit: &str) -> String {
    format!("{} {unit} (median of {}; {}–{})", format::value(s.median), s.n, format::value(s.min), format::value(s.max))
}

/// A pair's hover text: both GPUs, every mode's numbers (or why it was not measured), whether peer
/// access is offered, and the judgement with its comment.
pub fn pair_hover(m: &P2pMatrix, p: &P2pPair) -> String {
    let mut lines = vec![
        format!("{} → {}", p.src, p.dst),
        format!("from {}", gpu_words(m, p.src)),
        format!("to {}", gpu_words(m, p.dst)),
        format!("peer access offered: {}", if p.can_access_peer { "yes" } else { "no" }),
    ];
    for mode in P2pMode::ALL {
        let Some(measure) = p.measure(mode) else {
            lines.push(format!("{}: not tried", mode.label()));
            continue;
        };
        let mut parts = Vec::new();
        if let Some(s) = &measure.bandwidth_gbps {
            parts.push(stats_text(s, "GB/s"));
        }
        if let Some(s) = &measure.latency_us {
            parts.push(format!("latency {}", stats_text(s, "µs")));
        }
        if let Some(why) = &measure.skipped {
            parts.push(format!("not measured: {why}"));
        }
        if parts.is_empty() {
            parts.push("no value".to_owned());
        }
        lines.push(format!("{}: {}", mode.label(), parts.join("; ")));
    }
    if let Some(j) = &p.judgement {
        let on = p.judged_mode.map(|m| format!(" (judged on {} bandwidth)", m.label())).unwrap_or_default();
        lines.push(format!("verdict: {}{on} — {}", j.verdict.label(), j.comment));
    }
    lines.join("\n")
}

/// The heat map of one matrix, with the mode and metric selector above it and the all-to-all
/// figure beside it.
pub fn p2p_ui(ui: &mut Ui, m: &P2pMatrix, view: &mut P2pView) {
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new("GPU-to-GPU copies").strong());
        ui.separator();
        for mode in P2pMode::ALL {
            ui.radio_value(&mut view.mode, mode, mode.label()).on_hover_text(mode_hint(mode));
        }
        ui.separator();
        for metric in [P2pMetric::Bandwidth, P2pMetric::Latency] {
            ui.radio_value(&mut view.metric, metric, metric.label());
        }
    });
    let size = match view.metric {
        P2pMetric::Bandwidth => format::bytes(m.bytes),
        P2pMetric::Latency => format::bytes(m.latency_bytes),
    };
    ui.label(toned(
        ui,
        Tone::Muted,
        format!("{} per copy, {} in {}; rows copy to columns", size, view.metric.unit(), view.mode.label()),
    ));
    let Some(scale) = Scale::of(m, view.metric) else {
        ui.label(toned(ui, Tone::Muted, format!("No {} was measured.", view.metric.label().to_lowercase())));
        return;
    };
    ui.horizontal(|ui| {
        ui.vertical(|ui| {
            egui::ScrollArea::horizontal().id_salt("p2p-map-scroll").show(ui, |ui| map_ui(ui, m, *view, scale));
            legend_ui(ui, scale, view.metric);
        });
        ui.add_space(16.0);
        ui.vertical(|ui| side_ui(ui, m));
    });
}

fn mode_hint(mode: P2pMode) -> &'static str {
    match mode {
        P2pMode::PeerEnabled => "Peer access enabled: over NVLink or PCIe directly, without host memory",
        P2pMode::PeerDisabled => "Peer access off: the driver stages the copy through host memory",
        P2pMode::HostStaged => "By hand through pinned host memory: the fallback that works everywhere",
    }
}

fn map_ui(ui: &mut Ui, m: &P2pMatrix, view: P2pView, scale: Scale) {
    egui::Grid::new("p2p-map").spacing([3.0, 3.0]).show(ui, |ui| {
        ui.label(toned(ui, Tone::Muted, "src ↓ dst →").small());
        for g in &m.gpus {
            ui.add_sized([CELL[0], 18.0], egui::Label::new(RichText::new(g.ordinal.to_string()).strong()))
                .on_hover_text(gpu_words(m, g.ordinal));
        }
        ui.end_row();
        for src in &m.gpus {
            ui.label(RichText::new(src.ordinal.to_string()).strong()).on_hover_text(gpu_words(m, src.ordinal));
            for dst in &m.gpus {
                cell_ui(ui, m, src.ordinal, dst.ordinal, view, scale);
            }
            ui.end_row();
        }
    });
}

fn cell_ui(ui: &mut Ui, m: &P2pMatrix, src: u32, dst: u32, view: P2pView, scale: Scale) {
    let pair = (src != dst).then(|| m.pair(src, dst)).flatten();
    let value = pair.and_then(|p| view.metric.of(p, view.mode));
    // A pair is judged on one mode's bandwidth (`judged_mode`): its mark shows on that view only.
    let judged_here =
        |p: &P2pPair| view.metric == P2pMetric::Bandwidth && p.judged_mode.is_none_or(|mode| mode == view.mode);
    let verdict = pair.filter(|p| judged_here(p)).and_then(|p| p.judgement.as_ref()).map(|j| j.verdict);
    let mark = verdict.and_then(verdict_mark);
    let weak = ui.visuals().weak_text_color();
    let (fill, text_color) = match value {
        Some(v) => {
            let fill = ramp(scale.fraction(v));
            (fill, text_on(fill))
        }
        None if src == dst => (ui.visuals().faint_bg_color, weak),
        None => (Color32::TRANSPARENT, weak),
    };
    let stroke = if value.is_none() && src != dst {
        Stroke::new(1.0, ui.visuals().widgets.noninteractive.bg_stroke.color)
    } else {
        Stroke::NONE
    };
    // A marked pair is outlined in its verdict's colour with a gap of the page's background
    // between outline and fill, so the outline reads on the theme whatever the fill.
    let outline = mark.and(verdict).map(|v| Stroke::new(2.5, verdict_tone(v).color(ui)));
    let text = match (src == dst, value) {
        (true, _) => "—".to_owned(),
        (false, Some(v)) => format::value(v),
        (false, None) => "n/a".to_owned(),
    };
    let inset = outline.map_or(0.0, |o| o.width + OUTLINE_GAP);
    let cell = |ui: &mut Ui| {
        egui::Frame::new().fill(fill).stroke(stroke).corner_radius(3.0).show(ui, |ui| {
            let size = egui::vec2(CELL[0], CELL[1]) - egui::Vec2::splat(2.0 * (stroke.width + inset));
            ui.allocate_ui_with_layout(size, egui::Layout::top_down(egui::Align::Center), |ui| {
                ui.set_min_size(size);
                // The value alone sits in the middle; with a mark under it, the two together do.
                ui.add_space(if mark.is_some() { 3.0 } else { 10.0 } - stroke.width - inset);
                ui.add(egui::Label::new(RichText::new(text).monospace().strong().color(text_color)).selectable(false));
                if let Some(mark) = mark {
                    ui.add(egui::Label::new(RichText::new(mark).small().strong().color(text_color)).selectable(false));
                }
            });
        })
    };
    let response = match outline {
        Some(o) => {
            let frame = egui::Frame::new().stroke(o).corner_radius(4.0).inner_margin(OUTLINE_GAP);
            frame.show(ui, cell).response
        }
        None => cell(ui).response,
    };
    if let Some(p) = pair {
        response.on_hover_text(pair_hover(m, p));
    } else if src == dst {
        response.on_hover_text("the same GPU: not measured");
    }
}

fn legend_ui(ui: &mut Ui, scale: Scale, metric: P2pMetric) {
    ui.horizontal(|ui| {
        let (worst, best) = if scale.higher_is_better { (0.0, scale.max) } else { (scale.max, 0.0) };
        ui.label(RichText::new(format!("{} {}", format::value(worst), metric.unit())).small());
        let (rect, _) = ui.allocate_exact_size(egui::vec2(180.0, 12.0), egui::Sense::hover());
        #[allow(clippy::cast_precision_loss)]
        let step = rect.width() / LEGEND_STEPS as f32;
        for i in 0..LEGEND_STEPS {
            #[allow(clippy::cast_precision_loss)]
            let x = rect.left() + step * i as f32;
            let r = egui::Rect::from_min_max(egui::pos2(x, rect.top()), egui::pos2(x + step + 0.5, rect.bottom()));
            #[allow(clippy::cast_precision_loss)]
            ui.painter().rect_filled(r, 0.0, ramp(i as f32 / (LEGEND_STEPS - 1) as f32));
        }
        ui.label(RichText::new(format!("{} {}", format::value(best), metric.unit())).small());
        ui.label(toned(ui, Tone::Muted, "(brighter is better)").small());
    });
}

/// Beside the map: the all-to-all figure and what the marks mean.
fn side_ui(ui: &mut Ui, m: &P2pMatrix) {
    ui.label(RichText::new("All-to-all, host-staged").strong());
    match &m.staged_all_to_all_gbps {
        Some(s) => {
            ui.label(RichText::new(format!("{} GB/s", format::value(s.median))).size(20.0).strong())
                .on_hover_text(stats_text(s, "GB/s"));
            ui.label(toned(ui, Tone::Muted, "every GPU sending to every other at once, summed"));
        }
        None => {
            ui.label(toned(ui, Tone::Muted, "not measured"));
        }
    }
    ui.add_space(8.0);
    let marked: Vec<Verdict> = m.pairs.iter().filter_map(|p| p.judgement.as_ref()).map(|j| j.verdict).collect();
    for v in [Verdict::Low, Verdict::Failed, Verdict::AboveTheory] {
        let n = marked.iter().filter(|x| **x == v).count();
        if n > 0 {
            ui.label(toned(ui, verdict_tone(v), format!("{n} pair{} {}", if n == 1 { "" } else { "s" }, v.label())));
        }
    }
    ui.label(toned(ui, Tone::Muted, "Outlined: the pair's verdict against its link. Hover a cell for the numbers."));
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;
    use gpu_doctor_model::bench::judgement::Judgement;
    use gpu_doctor_model::bench::p2p::{P2pGpu, P2pMeasure};

    use super::*;

    fn stats(v: f64) -> Option<Stats> {
        Stats::from_samples(&[v * 0.98, v, v * 1.02])
    }

    fn measure(mode: P2pMode, gbps: f64, us: f64) -> P2pMeasure {
        P2pMeasure { mode, bandwidth_gbps: stats(gbps), latency_us: stats(us), skipped: None }
    }

    /// A matrix FABRICATED for layout, not measured anywhere: three GPUs, peer copies near 370 GB/s
    /// except 0 → 2 (41 GB/s, judged LOW), and 2 → 1 where peer access is not offered.
    pub(crate) fn fabricated() -> P2pMatrix {
        let mut pairs = Vec::new();
        for src in 0..3u32 {
            for dst in (0..3u32).filter(|d| *d != src) {
                let peer = match (src, dst) {
                    (0, 2) => measure(P2pMode::PeerEnabled, 41.0, 9.5),
                    (2, 1) => P2pMeasure {
                        mode: P2pMode::PeerEnabled,
                        bandwidth_gbps: None,
                        latency_us: None,
                        skipped: Some("peer access is not offered".into()),
                    },
                    _ => measure(P2pMode::PeerEnabled, 370.0 + f64::from(src * 3 + dst), 2.25),
                };
                let judgement = ((src, dst) == (0, 2)).then(|| Judgement {
                    expected: None,
                    percent_of_expected: Some(11.0),
                    verdict: Verdict::Low,
                    comment: "fabricated: 11 % of the NVLink's bandwidth".into(),
                });
                pairs.push(P2pPair {
                    src,
                    dst,
                    can_access_peer: (src, dst) != (2, 1),
                    measures: vec![
                        peer,
                        measure(P2pMode::PeerDisabled, 21.5, 14.0),
                        measure(P2pMode::HostStaged, 18.25, 17.0),
                    ],
                    judged_mode: judgement.is_some().then_some(P2pMode::PeerEnabled),
                    judgement,
                });
            }
        }
        P2pMatrix {
            bytes: 256 << 20,
            latency_bytes: 4096,
            gpus: (0..3)
                .map(|o| P2pGpu { ordinal: o, name: Some(format!("Fabricated GPU {o}")), pci_bus_id: None })
                .collect(),
            pairs,
            staged_all_to_all_gbps: stats(52.5),
            loopback: false,
        }
    }

    #[test]
    fn the_scale_spans_zero_to_the_largest_value_of_any_mode_and_brighter_is_better() {
        let m = fabricated();
        let bw = Scale::of(&m, P2pMetric::Bandwidth).unwrap();
        assert_eq!(bw.max, 376.0, "2 → 0 in P2P on is the largest");
        assert_eq!(bw.fraction(376.0), 1.0);
        assert_eq!(bw.fraction(0.0), 0.0);
        assert!((bw.fraction(188.0) - 0.5).abs() < 1e-6);
        let lat = Scale::of(&m, P2pMetric::Latency).unwrap();
        assert_eq!(lat.max, 17.0, "host-staged latency is the largest");
        assert_eq!(lat.fraction(17.0), 0.0, "the slowest copy is the darkest");
        assert!(lat.fraction(2.25) > 0.8);
        assert_eq!(Scale::of(&P2pMatrix::default(), P2pMetric::Bandwidth), None);
    }

    #[test]
    fn the_ramp_runs_dark_to_bright_and_text_stays_readable() {
        let [r, g, b] = RAMP[0];
        assert_eq!(ramp(0.0), Color32::from_rgb(r, g, b));
        let [r, g, b] = RAMP[4];
        assert_eq!(ramp(1.0), Color32::from_rgb(r, g, b));
        assert_eq!(ramp(f32::NAN), ramp(0.0));
        assert_eq!(ramp(7.0), ramp(1.0));
        let [r, g, b] = RAMP[2];
        assert_eq!(ramp(0.5), Color32::from_rgb(r, g, b));
        assert_eq!(text_on(ramp(0.0)), Color32::WHITE);
        assert_eq!(text_on(ramp(1.0)), Color32::BLACK);
    }

    #[test]
    fn cells_and_hover_say_the_numbers_and_the_verdict() {
        assert_eq!(format::value(372.4), "372");
        assert_eq!(format::value(21.5), "21.5");
        assert_eq!(format::value(2.25), "2.25");
        assert_eq!(verdict_mark(Verdict::Low), Some("LOW"));
        assert_eq!(verdict_mark(Verdict::Normal), None);
        assert_eq!(verdict_mark(Verdict::NoReference), None);
        let m = fabricated();
        let low = pair_hover(&m, m.pair(0, 2).unwrap());
        assert!(low.contains("from CUDA device 0: Fabricated GPU 0"), "{low}");
        assert!(low.contains("P2P on: 41.0 GB/s (median of 3; 40.2–41.8); latency 9.50 µs"), "{low}");
        assert!(
            low.contains("verdict: LOW (judged on P2P on bandwidth) — fabricated: 11 % of the NVLink's bandwidth"),
            "{low}"
        );
        let skipped = pair_hover(&m, m.pair(2, 1).unwrap());
        assert!(skipped.contains("peer access offered: no"), "{skipped}");
        assert!(skipped.contains("P2P on: not measured: peer access is not offered"), "{skipped}");
        assert!(skipped.contains("host-staged: 18.2 GB/s"), "{skipped}");
    }

    fn map() -> Harness<'static, P2pView> {
        let m = fabricated();
        let mut h = Harness::builder()
            .with_size([900.0, 500.0])
            .with_context_setup(|ctx| {
                crate::gui::theme::install_fonts(ctx);
                ctx.all_styles_mut(|s| s.interaction.tooltip_delay = 0.0);
            })
            .build_ui_state(move |ui, view: &mut P2pView| p2p_ui(ui, &m, view), P2pView::default());
        h.run_steps(2);
        h
    }

    #[test]
    fn the_heat_map_shows_the_selected_mode_with_the_low_pair_marked() {
        let mut h = map();
        // P2P on: five measured pairs, the LOW one marked, the pair without peer access empty.
        for v in ["371", "373", "375", "376", "41.0"] {
            h.get_by_label(v);
        }
        h.get_by_label("LOW");
        h.get_by_label("n/a");
        assert_eq!(h.query_all_by_label("—").count(), 3, "the diagonal");
        assert!(h.query_by_label("21.5").is_none(), "P2P off is not on screen");
        h.get_by_label("52.5 GB/s");
        h.get_by_label("1 pair LOW");

        h.get_by_label("P2P off").click();
        h.run_steps(2);
        assert_eq!(h.state().mode, P2pMode::PeerDisabled);
        assert_eq!(h.query_all_by_label("21.5").count(), 6);
        assert!(h.query_by_label("371").is_none() && h.query_by_label("n/a").is_none());
        assert!(h.query_by_label("LOW").is_none(), "the pair was judged on P2P on, not on this view");

        h.get_by_label("Latency").click();
        h.run_steps(2);
        assert_eq!(*h.state(), P2pView { mode: P2pMode::PeerDisabled, metric: P2pMetric::Latency });
        assert_eq!(h.query_all_by_label("14.0").count(), 6);
        h.get_by_label_contains("4 KiB per copy, µs in P2P off");
    }

    #[test]
    fn hovering_a_cell_shows_its_numbers_and_judgement() {
        let mut h = map();
        h.get_by_label("41.0").hover();
        h.run_steps(3);
        h.get_by_label_contains("verdict: LOW (judged on P2P on bandwidth) — fabricated");
    }
}
