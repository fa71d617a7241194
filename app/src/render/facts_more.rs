//! Sections for links, toolkits, cuDNN and Python (filled once those probes land).

use gpu_doctor_probes::Report;

use super::facts::Section;

/// Link, toolkit, cuDNN and Python sections.
pub fn sections(report: &Report) -> Vec<Section> {
    let _ = report;
    Vec::new()
}
