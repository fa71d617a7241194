//! A framework release too old for the driver it runs on.

use super::builder::Machine;
use gpu_doctor_model::{Change, InstallFlag, ObservedMessage};

const TOO_OLD: &str = "framework.too_old_for_driver";

/// The lines Warp 1.7.1 printed on an R580 driver (NVIDIA/warp#940), as the paste reader gives them.
fn warp_lines(m: &mut Machine) {
    let line = |id: &str, text: &str| ObservedMessage { id: id.into(), line: text.into(), values: Default::default() };
    m.0.messages.push(line(
        "warp.uuid_entry_point_rejected",
        "Warp CUDA error: Failed to get driver entry point 'cuDeviceGetUuid' (CUDA error 1)",
    ));
    m.0.messages.push(line(
        "cuda.call_requires_newer_driver",
        "Warp CUDA error 36: API call is not supported in the installed CUDA driver (in function cuda_init, C:\\g\\163821891\\warp\\native\\warp.cu:277)",
    ));
}

#[test]
fn warp_before_1_8_1_on_an_r580_driver_is_upgraded_not_the_driver_downgraded() {
    let mut m =
        Machine::linux().driver("580.65.06", "13.0").gpu("NVIDIA GeForce RTX 5070", "12.0").torch("2.7.1+cu128");
    warp_lines(&mut m);
    let f = m.finding(TOO_OLD);
    assert!(f.summary.starts_with("warp-lang is older than this driver supports: 1.8.1"), "{}", f.summary);
    assert!(f.detail.contains("110400"), "{}", f.detail);
    assert_eq!(
        m.changes(TOO_OLD),
        [Change::Install {
            requirements: vec!["warp-lang>=1.8.1".into()],
            flags: vec![InstallFlag::Upgrade],
            index_url: None,
        }]
    );
    // Error 36 says "the driver is too old": here it is Warp's line, not a driver to upgrade.
    let ids = m.ids();
    assert!(!ids.iter().any(|id| id == "observed.cuda.call_requires_newer_driver"), "{ids:?}");
}

#[test]
fn without_an_environment_the_upgrade_is_in_words_and_without_the_line_nothing_is_said() {
    let mut m = Machine::pasted();
    warp_lines(&mut m);
    let fix = m.finding(TOO_OLD).fix.unwrap_or_default();
    assert!(fix.contains("pip install --upgrade 'warp-lang>=1.8.1'"), "{fix}");
    // Error 36 alone (any program) stays the runtime's own finding.
    let mut m = Machine::pasted();
    m.0.messages.push(ObservedMessage {
        id: "cuda.call_requires_newer_driver".into(),
        line: "CUDA error: API call is not supported in the installed CUDA driver".into(),
        values: Default::default(),
    });
    assert!(!m.ids().iter().any(|id| id == TOO_OLD), "{:?}", m.ids());
}

/// The loader's `undefined symbol: cuX` for a driver API call (trexminer/T-Rex#95, verbatim) is the driver older than
/// the program's CUDA; a runtime call (`cudaMallocAsync`, libcudart's) is not the driver's.
#[test]
fn a_driver_api_symbol_missing_is_a_driver_too_old() {
    let line = "/home/rik/Downloads/trex/t-rex: symbol lookup error: /home/rik/Downloads/trex/t-rex: undefined symbol: \
                cuDevicePrimaryCtxSetFlags_v2\n";
    let found = super::pasted_findings(line);
    let f = found.iter().find(|f| f.id == "driver.too_old_for_runtime").expect("the finding");
    assert!(super::words(f).is_some_and(|w| w.contains("Update the NVIDIA driver")), "{f:#?}");
    assert!(
        !super::pasted_ids("undefined symbol: cudaMallocAsync\n").contains(&"driver.too_old_for_runtime".to_owned())
    );
}

/// CUDA's error 35 beside the driver's own nvidia-smi header, or a driver version the text states (SYSTRAN/
/// faster-whisper#866: `driver version 472.12`): the runtime is newer than that driver (bytedeco/javacpp-presets#918's
/// lines); in a container or with the toolkit's stub libcuda on the loader path the other causes of 35 stay open, and
/// a driver new enough for every CUDA the program could have leaves it open too.
#[test]
fn error_35_beside_a_driver_that_answered_is_the_driver_too_old() {
    let error = "gpu_mat.cu:121: error: (-217:Gpu API call) CUDA driver version is insufficient for CUDA runtime version \
                 in function 'allocate'\n";
    let smi = "| NVIDIA-SMI 418.126.02   Driver Version: 418.126.02   CUDA Version: 10.1 |\n";
    let found = super::pasted_findings(&format!("{error}{smi}"));
    let f = found.iter().find(|f| f.id == "driver.too_old_for_runtime").expect("the finding");
    assert!(f.summary.contains("driver 418.126.02") && f.summary.contains("CUDA up to 10.1"), "{}", f.summary);
    assert!(f.explains.contains(&"observed.cuda.insufficient_driver".to_owned()), "{:?}", f.explains);
    assert!(f.fix.as_deref().unwrap().contains("CUDA 10.1 or older"));
    let stubs = format!("{error}{smi}export LD_LIBRARY_PATH=/usr/local/cuda/lib64/stubs\n");
    assert!(!super::pasted_ids(&stubs).contains(&"driver.too_old_for_runtime".to_owned()));
    let words = format!("{error}I am running CUDA 11.7 and driver version 472.12.\n");
    assert!(
        super::pasted_ids(&words).contains(&"driver.too_old_for_runtime".to_owned()),
        "{:?}",
        super::pasted_ids(&words)
    );
}
