//! The report as labelled lines, shared by the terminal summary, the Markdown and HTML reports
//! and the window: the machine's hardware (`hardware.rs`), its health (`health.rs`), then the
//! software on it (`software.rs`), then containers (`containers.rs`), each a `Section`; the wording
//! helpers they share are here.

mod containers;
mod hardware;
mod health;
mod software;
mod topology;

use gpu_doctor_model::{Probed, Report, Snapshot};

pub use hardware::{capability_text, link_text, pcie_text};

/// How a section reads at a glance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Found and fine.
    Good,
    /// Nothing to judge.
    Plain,
    /// Missing or odd, worth a look.
    Warn,
}

/// One labelled section: a headline and detail lines.
#[derive(Debug, Clone)]
pub struct Section {
    /// Short label, e.g. `Driver`.
    pub label: &'static str,
    /// One line.
    pub headline: String,
    /// How the headline reads.
    pub tone: Tone,
    /// Further lines.
    pub details: Vec<String>,
    /// Lines shown as they are, in a fixed-width font (the topology matrix); empty for most sections.
    pub pre: Vec<String>,
}

impl Section {
    fn new(label: &'static str, headline: impl Into<String>, tone: Tone) -> Self {
        Self { label, headline: headline.into(), tone, details: Vec::new(), pre: Vec::new() }
    }
}

/// Bytes as GiB with one decimal.
pub fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1024.0 * 1024.0 * 1024.0))
}

/// The value as text, or `?` when it was not reported.
fn or_q<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "?".to_owned(), |v| v.to_string())
}

/// The headline of a section whose part the source did not speak of.
pub const UNKNOWN: &str = "unknown";

/// A section for a part with no value: `absent` (in `absent_tone`) when it is not there,
/// the platform's or the failure's wording otherwise; the reason goes below.
fn missing<T>(label: &'static str, p: &Probed<T>, absent: &str, absent_tone: Tone) -> Section {
    let (word, tone) = match p {
        Probed::Absent { .. } => (absent, absent_tone),
        Probed::Unsupported { .. } => ("not supported here", Tone::Plain),
        Probed::Failed { .. } => ("could not be checked", Tone::Warn),
        Probed::Unknown { .. } => (UNKNOWN, Tone::Plain),
        Probed::Found { .. } => ("found", Tone::Good),
    };
    let mut s = Section::new(label, word, tone);
    if let Some(why) = p.why_not() {
        s.details.push(why.to_owned());
    }
    s
}

/// The name serde gives an enum value, spaced for reading: `PipWheel` → `pip wheel`.
pub fn label<T: serde::Serialize>(value: &T) -> String {
    serde_name(value).replace('_', " ")
}

/// The name serde gives an enum value, as every export spells it: `DriverTooOldForRuntime` →
/// `driver_too_old_for_runtime`.
pub(super) fn serde_name<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

/// Every section of the summary, in reading order.
pub fn sections(report: &Report) -> Vec<Section> {
    snapshot_sections(&report.snapshot)
}

/// Every section of a snapshot (also a partial one, while probes still run), in reading order.
pub fn snapshot_sections(s: &Snapshot) -> Vec<Section> {
    let mut out = hardware::sections(s);
    out.extend(health::sections(s));
    out.extend(topology::section(s));
    out.extend(software::sections(s));
    out.push(containers::section(s));
    out
}
