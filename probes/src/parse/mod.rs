//! Text parsers: each takes text, never a path, and returns an error rather than panicking.

pub mod containers;
pub mod cudnn_header;
pub mod ldconfig;
pub mod nvcc;
pub mod paste;
pub mod smi;
pub mod smi_csv;
pub mod smi_q;
pub mod smi_table;
pub mod smi_topo;
pub mod smi_xml;
pub mod wheel;

/// Text that is not in the format a parser expects.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not valid {format}: {message}")]
pub struct ParseError {
    /// The format, e.g. `nvidia-smi XML`.
    pub format: &'static str,
    /// What is wrong.
    pub message: String,
}

impl ParseError {
    /// An error for `format`.
    pub fn new(format: &'static str, message: impl Into<String>) -> Self {
        Self { format, message: message.into() }
    }
}

/// The shared fixtures folder: `../shared/fixtures` beside the checkout.
#[cfg(test)]
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/fixtures");

/// Every file in `FIXTURES/<dir>` as (file name, text), sorted by name. When the folder is absent:
/// a panic where the `CI` variable is set (CI must not pass without the captures), else `None` and
/// a line on stderr that the test harness does not swallow.
#[cfg(test)]
pub(crate) fn fixtures(dir: &str) -> Option<Vec<(String, String)>> {
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    fixtures_in(std::path::Path::new(FIXTURES), dir, ci)
}

#[cfg(test)]
fn fixtures_in(root: &std::path::Path, dir: &str, ci: bool) -> Option<Vec<(String, String)>> {
    use std::io::Write as _;
    let path = root.join(dir);
    let Ok(entries) = std::fs::read_dir(&path) else {
        assert!(!ci, "{} is absent and CI is set: the shared-fixture tests cannot run", path.display());
        // Straight to stderr, past the harness's capture, so a skip is seen.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: {} is absent; its fixture tests pass without running",
            path.display()
        );
        return None;
    };
    let mut files: Vec<(String, String)> = entries
        .map(|e| {
            let e = e.unwrap();
            let text = std::fs::read_to_string(e.path()).unwrap();
            (e.file_name().to_string_lossy().into_owned(), text)
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} is empty", path.display());
    Some(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "CI is set")]
    fn absent_shared_fixtures_fail_in_ci() {
        let root = tempfile::tempdir().unwrap();
        fixtures_in(root.path(), "nvcc", true);
    }

    #[test]
    fn absent_shared_fixtures_are_skipped_outside_ci() {
        let root = tempfile::tempdir().unwrap();
        assert!(fixtures_in(root.path(), "nvcc", false).is_none());
    }

    #[test]
    fn present_shared_fixtures_are_read_in_ci() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("nvcc")).unwrap();
        std::fs::write(root.path().join("nvcc/b.txt"), "B").unwrap();
        std::fs::write(root.path().join("nvcc/a.txt"), "A").unwrap();
        let files = fixtures_in(root.path(), "nvcc", true).unwrap();
        assert_eq!(files, [("a.txt".to_owned(), "A".to_owned()), ("b.txt".to_owned(), "B".to_owned())]);
    }

    /// Every GPU name in the shared nvidia-smi captures maps to a capability, read through the parsers
    /// the probes use. "Graphics Device" (a driver older than the GPU) carries no product name at all.
    #[test]
    fn every_captured_gpu_name_maps_to_a_capability() {
        use crate::parse::{smi_csv, smi_table, smi_xml};
        let gpus = &gpu_doctor_kb::Kb::get().unwrap().gpus;
        let cc = |s: &str| s.parse::<gpu_doctor_model::ComputeCapability>().unwrap();
        let expected = [
            ("NVIDIA A100-SXM4-40GB", "8.0"),
            ("NVIDIA A100-SXM4-80GB", "8.0"),
            ("NVIDIA RTX A5000", "8.6"),
            ("NVIDIA GeForce GT 1030", "6.1"),
            ("NVIDIA GeForce RTX 2080", "7.5"),
            ("NVIDIA GeForce RTX 3060", "8.6"),
            ("NVIDIA GeForce RTX 4090", "8.9"),
            ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "12.0"),
            ("Tesla M10", "5.0"),
            ("Tesla P100-PCIE-16GB", "6.0"),
            ("NVIDIA H100 80GB HBM3", "9.0"),
            ("GeForce RTX 207...", "7.5"),
            ("NVIDIA GeForce RTX 2080 ...", "7.5"),
        ];
        let generic = ["Graphics Device"];

        let mut names: Vec<(String, String)> = Vec::new();
        type Parser = fn(&str) -> Result<crate::parse::smi::SmiReport, crate::parse::ParseError>;
        let formats: [(&str, Parser); 3] = [
            ("nvidia-smi-xml", smi_xml::parse),
            ("nvidia-smi-table", smi_table::parse),
            ("nvidia-smi-csv", smi_csv::parse),
        ];
        for (dir, parse) in formats {
            let Some(files) = fixtures(dir) else { return };
            for (file, text) in files {
                let Ok(report) = parse(&text) else { continue };
                names.extend(report.gpus.iter().filter_map(|g| g.name.clone()).map(|n| (format!("{dir}/{file}"), n)));
            }
        }
        assert!(names.len() >= 10, "fixtures: only {} GPU names found", names.len());
        for (file, name) in &names {
            let got = gpus.cc_for_name(name);
            if generic.contains(&name.as_str()) {
                assert_eq!(got, None, "{file}: generic name {name:?} must not map");
                continue;
            }
            let got =
                got.unwrap_or_else(|| panic!("{file}: GPU name {name:?} maps to no capability; add a [[product]] row"));
            if let Some((_, want)) = expected.iter().find(|(n, _)| n == name) {
                assert_eq!(got, cc(want), "{file}: {name:?}");
            }
        }
    }
}
