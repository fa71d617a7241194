//! The real captures in `../shared/fixtures`, pasted into a post, read like the direct parsers
//! read them.

use super::*;
use crate::parse::fixtures;
use crate::parse::smi::SmiReport;

/// The capture as someone pastes it: prose, a fence, the output, more prose.
fn in_a_post(text: &str) -> String {
    format!("Here is what my machine says:\n\n```\n{text}\n```\n\nThanks for looking!\n")
}

fn check(dir: &str, format: &str, direct: fn(&str) -> Result<SmiReport, crate::parse::ParseError>) {
    let Some(files) = fixtures(dir) else { return };
    for (name, text) in &files {
        let want = direct(text).unwrap();
        let s = read(&in_a_post(text));
        // Inside WSL2 the Linux nvidia-smi reports the Windows driver: the table says WSL2 as well.
        if name.starts_with("wsl2") {
            assert_eq!(formats(&s), [format, "nvidia-smi under WSL"], "{name}");
            assert_eq!(s.platform.wsl.as_ref().map(|w| w.version), Some(2), "{name}");
        } else {
            assert_eq!(formats(&s), [format], "{name}");
            assert_eq!(s.platform.wsl, None, "{name}");
        }
        match &want.driver_version {
            Some(v) => {
                let d = s.driver.value().unwrap_or_else(|| panic!("{name}: no driver"));
                assert_eq!(&d.version, v, "{name}");
                // A format without the driver's CUDA level gets the one its version implies.
                let reported = if d.cuda_version_derived { None } else { d.cuda_version };
                assert_eq!(reported, want.cuda_version, "{name}");
            }
            None => assert!(is_unknown(&s.driver), "{name}"),
        }
        assert_eq!(gpus(&s).len(), want.gpus.len(), "{name}");
        for (g, w) in gpus(&s).iter().zip(&want.gpus) {
            assert_eq!(g.name, w.name, "{name}");
            assert_eq!(g.memory_total_bytes, w.memory_total_mib.map(|m| m * 1024 * 1024), "{name}");
        }
    }
}

#[test]
fn nvidia_smi_tables() {
    check("nvidia-smi-table", "nvidia-smi table", crate::parse::smi_table::parse);
}

#[test]
fn nvidia_smi_xml() {
    check("nvidia-smi-xml", "nvidia-smi XML", crate::parse::smi_xml::parse);
}

#[test]
fn nvidia_smi_csv() {
    check("nvidia-smi-csv", "nvidia-smi CSV", crate::parse::smi_csv::parse);
}

#[test]
fn nvcc_outputs() {
    let Some(files) = fixtures("nvcc") else { return };
    for (name, text) in &files {
        let want = crate::parse::nvcc::parse(text).unwrap();
        let s = read(&in_a_post(text));
        assert_eq!(formats(&s), ["nvcc --version"], "{name}");
        assert_eq!(s.toolkits.value().unwrap().installs[0].version, Some(want), "{name}");
    }
}

#[test]
fn a_gpu_without_a_capability_in_the_text_keeps_it_unknown_but_its_name_maps() {
    let Some(files) = fixtures("nvidia-smi-xml") else { return };
    let (_, text) = files.iter().find(|(n, _)| n.starts_with("rtx-4090")).unwrap();
    let s = read(text);
    let g = &gpus(&s)[0];
    assert_eq!(g.compute_capability, None, "the XML of this driver does not state it");
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    assert_eq!(kb.gpus.cc_for_name(g.name.as_deref().unwrap()).map(|c| c.to_string()).as_deref(), Some("8.9"));
}
