//! The exported report in any format, with an optional benchmark run and redaction: one function
//! shared by `gpu-doctor report` and the window's Report page, so both write the same file.

use anyhow::{Context, Result};
use gpu_doctor_model::Report;
use gpu_doctor_model::bench::run::BenchRun;

/// Report formats (`report --format`, the window's Report page).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Format {
    /// The full report as JSON.
    Json,
    /// Markdown for a GitHub issue: a summary table, details folded.
    Md,
    /// One self-contained HTML page (works offline), with the benchmark run's plots.
    Html,
}

/// A report as JSON, the one way gpu-doctor writes it: `report --format json`, the window's
/// export and `check --json` alike.
pub fn json(report: &Report) -> serde_json::Result<String> {
    serde_json::to_string_pretty(report).map(|text| text + "\n")
}

/// The document for `report` with `bench` included (replacing any run it carries), redacted on request.
pub fn document(report: &Report, bench: Option<&BenchRun>, format: Format, redact: bool) -> Result<String> {
    let mut report = report.clone();
    if let Some(run) = bench {
        report.bench = Some(run.clone());
    }
    if redact {
        report = crate::redact::redact(&report).context("could not redact the report")?;
    }
    Ok(match format {
        Format::Json => json(&report).context("could not serialize the report")?,
        Format::Md => {
            let mut text = super::markdown::report(&report);
            // The run as it stands in the (possibly redacted) report.
            if let Some(run) = &report.bench {
                text.push_str(&super::bench::markdown(run));
            }
            text
        }
        Format::Html => super::html::report(&report),
    })
}
