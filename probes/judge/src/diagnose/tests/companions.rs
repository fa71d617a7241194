//! Companion packages against the frameworks beside them.

use super::builder::Machine;
use crate::diagnose::fix;
use gpu_doctor_model::Change;

const TORCH: &str = "companions.built_for_other_torch";
const NUMPY2: &str = "companions.numpy_two_beside_numpy_one_build";

fn rig() -> Machine {
    Machine::linux().driver("560.35.03", "12.6").gpu("NVIDIA GeForce RTX 4090", "8.9")
}

fn companion_ids(m: &Machine) -> Vec<String> {
    m.ids().into_iter().filter(|id| id.starts_with("companions.")).collect()
}

fn install(requirements: &[&str], index_url: Option<&str>) -> Change {
    Change::Install {
        requirements: requirements.iter().map(|r| (*r).to_owned()).collect(),
        flags: Vec::new(),
        index_url: index_url.map(str::to_owned),
    }
}

#[test]
fn torchvision_of_another_torch_line_is_named_and_planned_from_torchs_index() {
    // The classic: torch upgraded alone to 2.5.1, torchvision left at 0.19.
    let m = rig().torch("2.5.1+cu124").companion("torchvision", "0.19.1+cu124").companion("torchaudio", "2.5.1+cu124");
    assert_eq!(companion_ids(&m), [TORCH]);
    let f = m.finding(TORCH);
    assert!(f.summary.starts_with("torchvision in "), "{}", f.summary);
    assert!(
        f.evidence.iter().any(|e| e.contains("torchvision 0.19.1+cu124: built for another torch line")),
        "{:?}",
        f.evidence
    );
    // torch 2.5.1 is the line's newest: the table's exact companion, from the cu124 index.
    assert_eq!(
        m.changes(TORCH),
        [install(&["torch==2.5.1+cu124", "torchvision==0.20.1+cu124"], Some("https://download.pytorch.org/whl/cu124"))]
    );
    // An older patch of the line pins the companion's line and lets pip pick the one built for it.
    let m = rig().torch("2.5.0").companion("torchaudio", "2.4.1");
    assert_eq!(m.changes(TORCH), [install(&["torch==2.5.0", "torchaudio==2.5.*"], None)]);
}

#[test]
fn a_cpu_companion_beside_a_cuda_torch_is_another_build() {
    let m = rig().torch("2.3.1+cu121").companion("torchvision", "0.18.1+cpu");
    assert_eq!(companion_ids(&m), [TORCH]);
    assert_eq!(
        m.changes(TORCH),
        [install(&["torch==2.3.1+cu121", "torchvision==0.18.1+cu121"], Some("https://download.pytorch.org/whl/cu121"))]
    );
}

#[test]
fn matching_companions_nightlies_and_unknown_lines_give_nothing() {
    let quiet = [
        rig().torch("2.5.1+cu124").companion("torchvision", "0.20.1+cu124").companion("torchaudio", "2.5.1+cu124"),
        // PyPI's companion has no local tag: not another build.
        rig().torch("2.5.1+cu124").companion("torchvision", "0.20.1"),
        rig().torch("2.5.0").companion("torchvision", "0.20.0"),
        // A nightly pairs with its own date's companions.
        rig().torch("2.8.0.dev20250301+cu128").companion("torchvision", "0.22.0.dev20250301+cu128"),
        // No torch, or a torch line the table does not know.
        rig().companion("torchvision", "0.19.1"),
        rig().torch("3.0.0+cu130").companion("torchvision", "0.19.1"),
    ];
    for m in &quiet {
        assert!(companion_ids(m).is_empty(), "{:?}", m.findings());
    }
}

#[test]
fn numpy2_beside_a_numpy1_build_plans_numpy_below_2() {
    // torch 2.2 and TensorFlow 2.17 were built against NumPy 1; 2.3 and 2.18 are the first against NumPy 2.
    let m = rig().torch("2.2.2+cu121").framework("tensorflow", "2.17.0", None).companion("numpy", "2.0.1");
    assert_eq!(companion_ids(&m), [NUMPY2]);
    let f = m.finding(NUMPY2);
    assert!(f.summary.starts_with("torch and tensorflow in "), "{}", f.summary);
    assert!(f.evidence.iter().any(|e| e.contains("NumPy 2 builds start at 2.3.0")), "{:?}", f.evidence);
    assert_eq!(m.changes(NUMPY2), [fix::install(&[], ["numpy<2"])]);
    let quiet = [
        rig().torch("2.3.0+cu121").companion("numpy", "2.0.1"),
        rig().torch("2.2.2+cu121").companion("numpy", "1.26.4"),
        rig().framework("tensorflow", "2.18.0", None).companion("numpy", "2.1.3"),
        // A two-part version (issue forms say `2.18`) is the .0 release, not older than it.
        rig().framework("tensorflow", "2.18", None).companion("numpy", "2.1.3"),
        rig().framework("jaxlib", "0.4.26", None).companion("numpy", "2.0.0"),
        rig().companion("numpy", "2.0.0"),
    ];
    for m in &quiet {
        assert!(companion_ids(m).is_empty(), "{:?}", m.findings());
    }
    let jax = rig().framework("jaxlib", "0.4.25", None).companion("numpy", "2.0.0");
    assert_eq!(companion_ids(&jax), [NUMPY2]);
}

/// The `other` category gathers unrelated problems: a companion finding cites only the lines its
/// rule explains (`explained_by` in errors.toml), and an unrelated pasted line of that category keeps
/// its own finding instead of being taken as explained.
#[test]
fn a_companion_finding_cites_its_own_lines_and_not_another_other_line() {
    let line = |id: &str, text: &str| gpu_doctor_model::ObservedMessage {
        id: id.into(),
        line: text.into(),
        values: Default::default(),
    };
    let mut m = rig().torch("2.5.1+cu124").companion("torchvision", "0.19.1+cu124");
    m.0.messages.push(line("torchvision.operator_missing", "RuntimeError: operator torchvision::nms does not exist"));
    m.0.messages.push(line(
        "cuda.out_of_memory",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB",
    ));
    let f = m.finding(TORCH);
    let cited: Vec<&String> = f.evidence.iter().filter(|e| e.starts_with("pasted line: ")).collect();
    assert_eq!(cited, ["pasted line: RuntimeError: operator torchvision::nms does not exist"], "{:?}", f.evidence);
    let ids = m.ids();
    assert!(ids.contains(&"observed.cuda.out_of_memory".to_owned()), "the memory error is not explained: {ids:?}");
    assert!(!ids.contains(&"observed.torchvision.operator_missing".to_owned()), "{ids:?}");
}
