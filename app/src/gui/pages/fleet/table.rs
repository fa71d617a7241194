//! The node table: which rows (filter, "only nodes that differ", sort) and drawing them, only the
//! rows in view (`ScrollArea::show_rows`), so a fleet of thousands stays smooth.

use std::cmp::Ordering;
use std::path::Path;

use egui::{Align, Color32, Layout, RichText, Ui, vec2};
use gpu_doctor_model::fleet::{Comparison, NodeOutcome, NodeRow};

use super::Browse;
use crate::gui::Action;
use crate::gui::theme::{Tone, toned};

/// Marks a fact that differs from the majority (colour alone is not enough for everyone).
pub const DIFFERS: &str = "≠";
/// Marks a benchmark figure on the bad side of the fleet.
pub const SLOW: &str = "▼";

const HOST_W: f32 = 170.0;
const OUTCOME_W: f32 = 150.0;
const FACT_W: f32 = 210.0;
const METRIC_W: f32 = 130.0;
const FINDINGS_W: f32 = 110.0;
const CERTIFICATE_W: f32 = 150.0;

/// The column the table is sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortKey {
    /// Host name.
    #[default]
    Host,
    /// Reported or why not.
    Outcome,
    /// A fact, by index into `Comparison::facts`.
    Fact(usize),
    /// A benchmark figure, by index into `Comparison::metrics`.
    Metric(usize),
    /// The node's own findings: errors, then warnings, then infos.
    Findings,
    /// Its certificate (`fleet … --certify`): the failed first.
    Certificate,
}

/// Where a node sorts by its certificate: failed (or no report) first, then INCOMPLETE or no
/// certificate, PASS WITH WARNINGS, PASS (as `compare` orders certified nodes).
pub fn certificate_rank(row: &NodeRow) -> u8 {
    match &row.certificate {
        _ if !matches!(row.outcome, NodeOutcome::Reported { .. }) => 0,
        Some(c) => c.rank(),
        None => 1,
    }
}

/// Which rows the table shows, in which order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct View {
    /// Only hosts containing this (case-insensitive); empty: all.
    pub filter: String,
    /// Only nodes that stand out: a fact off the majority, a slow figure, or no report.
    pub only_differing: bool,
    /// The sort column.
    pub sort: SortKey,
    /// Largest first.
    pub descending: bool,
}

impl View {
    /// A click on a column heading: sort by it, or the other way round when it already is.
    pub fn click(&mut self, key: SortKey) {
        if self.sort == key {
            self.descending = !self.descending;
        } else {
            self.sort = key;
            self.descending = false;
        }
    }
}

/// Whether a node stands out from the fleet.
pub fn stands_out(row: &NodeRow) -> bool {
    !matches!(row.outcome, NodeOutcome::Reported { .. })
        || row.certificate.as_ref().is_some_and(|c| c.rank() < 3)
        || row.differs.iter().any(|d| *d)
        || row.slow.iter().any(|s| *s)
}

/// The rows to draw, as indices into `cmp.nodes`, filtered and sorted (ties keep the host order).
pub fn visible_rows(cmp: &Comparison, view: &View) -> Vec<usize> {
    let needle = view.filter.trim().to_lowercase();
    let mut rows: Vec<usize> = (0..cmp.nodes.len())
        .filter(|&i| {
            let n = &cmp.nodes[i];
            (needle.is_empty() || n.host.to_lowercase().contains(&needle)) && (!view.only_differing || stands_out(n))
        })
        .collect();
    let order = |a: &NodeRow, b: &NodeRow| -> Ordering {
        match view.sort {
            SortKey::Host => natural(&a.host, &b.host),
            SortKey::Outcome => a.outcome.describe().cmp(&b.outcome.describe()),
            SortKey::Fact(i) => {
                let (x, y) = (a.values.get(i).and_then(Option::as_deref), b.values.get(i).and_then(Option::as_deref));
                missing_last(x, y, view.descending, natural)
            }
            SortKey::Metric(i) => {
                let value = |n: &NodeRow| n.metrics.get(i).copied().flatten();
                missing_last(value(a), value(b), view.descending, |x, y| x.total_cmp(&y))
            }
            SortKey::Findings => a.findings.cmp(&b.findings),
            SortKey::Certificate => certificate_rank(a).cmp(&certificate_rank(b)),
        }
    };
    let missing_handled = matches!(view.sort, SortKey::Fact(_) | SortKey::Metric(_));
    rows.sort_by(|&a, &b| {
        let o = order(&cmp.nodes[a], &cmp.nodes[b]);
        if view.descending && !missing_handled { o.reverse() } else { o }
    });
    rows
}

/// Orders two values, a missing one last whichever the direction.
fn missing_last<T>(a: Option<T>, b: Option<T>, descending: bool, cmp: impl Fn(T, T) -> Ordering) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) if descending => cmp(a, b).reverse(),
        (Some(a), Some(b)) => cmp(a, b),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

/// Text order with digit runs compared as numbers: `535.104.05` after `535.86.05`, `node-10`
/// after `node-9`.
pub fn natural(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a, b);
    loop {
        match (a.chars().next(), b.chars().next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let (da, ra) = split_digits(a);
                let (db, rb) = split_digits(b);
                let (ta, tb) = (da.trim_start_matches('0'), db.trim_start_matches('0'));
                let o = ta.len().cmp(&tb.len()).then_with(|| ta.cmp(tb)).then_with(|| da.len().cmp(&db.len()));
                if o != Ordering::Equal {
                    return o;
                }
                (a, b) = (ra, rb);
            }
            (Some(x), Some(y)) => {
                if x != y {
                    return x.cmp(&y);
                }
                (a, b) = (&a[x.len_utf8()..], &b[y.len_utf8()..]);
            }
        }
    }
}

fn split_digits(s: &str) -> (&str, &str) {
    s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()))
}

/// The filter box, the toggle, and what to do with the selected node.
pub fn controls_ui(ui: &mut Ui, cmp: &Comparison, browse: &mut Browse, dir: &Path, actions: &mut Vec<Action>) {
    ui.horizontal(|ui| {
        ui.label("Host:");
        ui.add(egui::TextEdit::singleline(&mut browse.view.filter).hint_text("filter").desired_width(160.0));
        ui.checkbox(&mut browse.view.only_differing, "Only nodes that differ")
            .on_hover_text("A fact off the majority, a slow benchmark figure, or no report");
        ui.label(toned(ui, Tone::Muted, format!("{} of {} nodes", browse.rows.len(), cmp.nodes.len())));
        ui.separator();
        let node = browse.selected.as_deref().and_then(|h| cmp.nodes.iter().find(|n| n.host == h));
        let file = node.and_then(|n| n.outcome.report_path(dir));
        let open = ui
            .add_enabled(file.is_some(), egui::Button::new("Open as another machine"))
            .on_hover_text("Show this node's report in every page, as a report opened on the Report page")
            .on_disabled_hover_text("Select a node that has a report (double-click opens it too)");
        if open.clicked()
            && let Some(file) = file
        {
            actions.push(Action::OpenOther(file));
        }
        if let Some(n) = node {
            ui.label(toned(ui, Tone::Muted, selected_line(n)));
        }
    });
}

/// The selected node in words, with the engine's name for it when that differs.
fn selected_line(n: &NodeRow) -> String {
    match n.engine_name.as_deref().filter(|e| *e != n.host) {
        Some(engine) => format!("selected: {} ({engine})", n.host),
        None => format!("selected: {}", n.host),
    }
}

/// The heading and the rows in view; the table scrolls both ways, the heading with it sideways.
pub fn table_ui(
    ui: &mut Ui,
    cmp: &Comparison,
    browse: &mut Browse,
    dir: &Path,
    height: f32,
    actions: &mut Vec<Action>,
) {
    let row_h = ui.text_style_height(&egui::TextStyle::Body) + 6.0;
    let spacing = ui.spacing().item_spacing.y;
    egui::ScrollArea::horizontal().id_salt("fleet-table-h").show(ui, |ui| {
        heading_ui(ui, cmp, browse, row_h);
        let mut rows = egui::ScrollArea::vertical().id_salt("fleet-rows").max_height(height).auto_shrink([false, true]);
        if let Some(host) = browse.scroll_to.take()
            && let Some(pos) = browse.rows.iter().position(|&i| cmp.nodes[i].host == host)
        {
            // Lossless below 2^24 rows.
            #[allow(clippy::cast_precision_loss)]
            let offset = pos as f32 * (row_h + spacing);
            rows = rows.vertical_scroll_offset(offset);
        }
        let shown = std::mem::take(&mut browse.rows);
        rows.show_rows(ui, row_h, shown.len(), |ui, range| {
            for &i in &shown[range] {
                row_ui(ui, cmp, &cmp.nodes[i], browse, dir, row_h, actions);
            }
        });
        browse.rows = shown;
    });
}

fn heading_ui(ui: &mut Ui, cmp: &Comparison, browse: &mut Browse, h: f32) {
    ui.horizontal(|ui| {
        let mut column = |ui: &mut Ui, key: SortKey, label: &str, width: f32| {
            let arrow = match (browse.view.sort == key, browse.view.descending) {
                (false, _) => "",
                (true, false) => " ⏶",
                (true, true) => " ⏷",
            };
            let text = RichText::new(format!("{label}{arrow}")).strong();
            let button = egui::Button::new(text).frame(false).truncate();
            let clicked = cell(ui, width, h, None, |ui| ui.add(button)).inner;
            if clicked.on_hover_text(format!("Sort by {label}")).clicked() {
                browse.view.click(key);
                if let SortKey::Metric(m) = key {
                    browse.metric = m;
                }
            }
        };
        column(ui, SortKey::Host, "Host", HOST_W);
        column(ui, SortKey::Outcome, "Outcome", OUTCOME_W);
        if cmp.nodes.iter().any(|n| n.certificate.is_some()) {
            column(ui, SortKey::Certificate, "Certificate", CERTIFICATE_W);
        }
        for (i, f) in cmp.facts.iter().enumerate() {
            column(ui, SortKey::Fact(i), &f.label, FACT_W);
        }
        for (i, m) in cmp.metrics.iter().enumerate() {
            column(ui, SortKey::Metric(i), &format!("{} ({})", m.label, m.unit), METRIC_W);
        }
        column(ui, SortKey::Findings, "Findings", FINDINGS_W);
    });
}

fn row_ui(
    ui: &mut Ui,
    cmp: &Comparison,
    n: &NodeRow,
    browse: &mut Browse,
    dir: &Path,
    h: f32,
    actions: &mut Vec<Action>,
) {
    ui.horizontal(|ui| {
        let selected = browse.selected.as_deref() == Some(n.host.as_str());
        // The whole cell is the button, its text on the left.
        let button = egui::Button::selectable(selected, n.host.as_str())
            .truncate()
            .right_text(egui::Atom::grow())
            .min_size(vec2(HOST_W - 8.0, h - 2.0));
        let host = cell(ui, HOST_W, h, None, |ui| ui.add(button)).inner;
        if host.clicked() {
            browse.selected = Some(n.host.clone());
        }
        if host.double_clicked()
            && let Some(file) = n.outcome.report_path(dir)
        {
            actions.push(Action::OpenOther(file));
        }
        let reported = matches!(n.outcome, NodeOutcome::Reported { .. });
        let outcome_tone = if reported { Tone::Good } else { Tone::Bad };
        text_cell(ui, OUTCOME_W, h, None, toned(ui, outcome_tone, n.outcome.describe()));
        if cmp.nodes.iter().any(|n| n.certificate.is_some()) {
            let text = match &n.certificate {
                Some(c) => {
                    let tone = match c.rank() {
                        0 => Tone::Bad,
                        3 => Tone::Good,
                        _ => Tone::Warn,
                    };
                    toned(ui, tone, c.label())
                }
                None => toned(ui, Tone::Muted, "—"),
            };
            text_cell(ui, CERTIFICATE_W, h, None, text);
        }
        for i in 0..cmp.facts.len() {
            let value = n.values.get(i).cloned().flatten();
            let differs = n.differs.get(i).copied().unwrap_or(false);
            let (text, fill) = match value {
                Some(v) if differs => (toned(ui, Tone::Warn, format!("{DIFFERS} {v}")), Some(Tone::Warn.fill(ui))),
                Some(v) => (RichText::new(v), None),
                None if differs => (toned(ui, Tone::Warn, format!("{DIFFERS} none")), Some(Tone::Warn.fill(ui))),
                None => (toned(ui, Tone::Muted, "—"), None),
            };
            text_cell(ui, FACT_W, h, fill, text);
        }
        for (i, m) in cmp.metrics.iter().enumerate() {
            let value = n.metrics.get(i).copied().flatten();
            let slow = n.slow.get(i).copied().unwrap_or(false);
            let text = match value {
                Some(v) if slow => toned(ui, Tone::Bad, format!("{SLOW} {}", figure(v, &m.unit))),
                Some(v) => RichText::new(figure(v, &m.unit)),
                None => toned(ui, Tone::Muted, "—"),
            };
            text_cell(ui, METRIC_W, h, slow.then(|| Tone::Bad.fill(ui)), text);
        }
        let [e, w, i] = n.findings;
        let tone = if e > 0 {
            Tone::Bad
        } else if w > 0 {
            Tone::Warn
        } else {
            Tone::Muted
        };
        let text = if reported { toned(ui, tone, format!("{e} / {w} / {i}")) } else { toned(ui, Tone::Muted, "—") };
        text_cell(ui, FINDINGS_W, h, None, text).on_hover_text("errors / warnings / notes");
    });
}

/// A benchmark figure with its unit, to three significant digits or so (as `compare` writes them).
pub fn figure(v: f64, unit: &str) -> String {
    format!("{} {unit}", gpu_doctor_model::bench::format::value(v))
}

/// One cell: a fixed width whatever its content (so the rows line up under the heading), an
/// optional background, the content left-aligned.
fn cell<R>(
    ui: &mut Ui,
    width: f32,
    h: f32,
    fill: Option<Color32>,
    add: impl FnOnce(&mut Ui) -> R,
) -> egui::InnerResponse<R> {
    ui.allocate_ui_with_layout(vec2(width, h), Layout::left_to_right(Align::Center), |ui| {
        ui.set_min_size(vec2(width, h));
        if let Some(fill) = fill {
            ui.painter().rect_filled(ui.max_rect(), 2.0, fill);
        }
        ui.add_space(4.0);
        add(ui)
    })
}

/// A cell of text, cut with "…" where it does not fit (the whole text on hover).
fn text_cell(ui: &mut Ui, width: f32, h: f32, fill: Option<Color32>, text: RichText) -> egui::Response {
    cell(ui, width, h, fill, |ui| ui.add(egui::Label::new(text).truncate())).inner
}
