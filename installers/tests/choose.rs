//! The chooser, table-driven over the knowledge base: every replay scenario of `tests/fixtures/`
//! (read as the replay host reads it) with its expected choice, the edge cases, a wheelhouse, and
//! properties over random machines.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use gpu_doctor_installers::choose::{Choice, Framework, Machine, Want, choose};
use gpu_doctor_installers::planners::framework;
use gpu_doctor_kb::{Coverage, DriverLevel, Kb, RuntimeVerdict, index_tag};
use gpu_doctor_model::OsFamily;
use gpu_doctor_model::{ComputeCapability, CudaVersion, Snapshot};
use gpu_doctor_probes::host::ReplayHost;
use gpu_doctor_probes::probe::{Options, collect};
use proptest::prelude::*;

fn kb() -> &'static Kb {
    Kb::get().unwrap()
}

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// A replay scenario's snapshot, collected as `tests/tests/scenarios.rs` does.
pub fn scenario(name: &str) -> Snapshot {
    let host = ReplayHost::load(&fixtures().join(name)).unwrap();
    collect(&host, &Options::default())
}

fn cc(s: &str) -> ComputeCapability {
    s.parse().unwrap()
}

fn want(framework: Framework, keep: Option<&str>) -> Want {
    Want { framework, keep_line: keep.map(str::to_owned), wheelhouse: None }
}

fn chosen(c: &Choice) -> &str {
    c.chosen.as_ref().map_or("-", |c| c.label.as_str())
}

fn reason<'c>(c: &'c Choice, label: &str) -> &'c str {
    c.rejected
        .iter()
        .find(|r| r.label == label)
        .map(|r| r.reason.as_str())
        .unwrap_or_else(|| panic!("{label} is not rejected: {c:#?}"))
}

/// The machine of a scenario, with the Python of its first environment that has a framework (else
/// its first environment), and the installed torch's line.
fn scenario_machine(name: &str) -> (Machine, Option<String>) {
    let s = scenario(name);
    let envs = s.python_envs.value().cloned().unwrap_or_default();
    let env = envs.iter().find(|e| !e.frameworks.is_empty()).or(envs.first());
    let torch = env.and_then(|e| e.frameworks.iter().find(|f| f.name == "torch"));
    let keep = torch.and_then(|t| gpu_doctor_kb::PyVersion::new(&t.version).line());
    (framework::machine(&s, kb(), env), keep)
}

/// Every scenario, per framework: the build chosen (the installed torch line kept where there is
/// one) and some rejected candidates with their reasons.
#[test]
fn every_scenario_gets_its_expected_choice() {
    let mut wrong = Vec::new();
    for (name, fw, want_chosen, want_rejected) in expected_choices() {
        let (machine, keep) = scenario_machine(name);
        let keep = if *fw == Framework::Torch { keep } else { None };
        let c = choose(kb(), &machine, &want(*fw, keep.as_deref()));
        if chosen(&c) != *want_chosen {
            wrong.push(format!("{name} {fw:?}: chose {} not {want_chosen}", chosen(&c)));
        }
        for (label, why) in *want_rejected {
            let got = c.rejected.iter().find(|r| r.label == *label).map_or("(not rejected)", |r| r.reason.as_str());
            if got != *why {
                wrong.push(format!("{name} {fw:?} {label}: {got:?} not {why:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

type Row = (&'static str, Framework, &'static str, &'static [(&'static str, &'static str)]);

/// The table of [`every_scenario_gets_its_expected_choice`]: fixture, framework, the build chosen
/// (`-`: none) and rejected candidates with their reasons.
fn expected_choices() -> &'static [Row] {
    use Framework::{Cupy, Jax, Tensorflow, Torch};
    // 1.13.1 has cp311 wheels on PyPI (kb-refresh, issue 28): 1.13 reaches 3.11, 1.12 stops at 3.10.
    const PY36_112: &str = "no wheel for Python 3.6 (it supports 3.7 to 3.10)";
    const PY36_113: &str = "no wheel for Python 3.6 (it supports 3.7 to 3.11)";
    &[
        (
            "consumer-gpu-torch-venv",
            Torch,
            "2.3.1+cu121",
            &[("2.3.1+cu118", "fits, but 2.3.1+cu121 is built for the driver's own CUDA major")],
        ),
        ("consumer-gpu-torch-venv", Cupy, "cupy-cuda12x 14.2.0", &[("cupy-cuda13x 14.2.0", "driver 550 < 580")]),
        // The consumer-gpu-torch-venv machine as a Kubernetes node: the same choice.
        ("k8s-node-no-device-plugin", Torch, "2.3.1+cu121", &[]),
        // Issue 29 item 5: a new environment (no torch installed here) gets the newest release that
        // runs, through minor-version compatibility (cu126 on a driver for CUDA 12.2), not the
        // newest whose CUDA the driver runs in full (2.5.1+cu121).
        (
            "egpu-thunderbolt",
            Torch,
            "2.14.1+cu126",
            &[
                (
                    "2.5.1+cu121",
                    "fits, but 2.14.1+cu126 is newer (a new environment gets the newest release that runs)",
                ),
                ("2.14.1+cu130", "driver 535 < 580"),
            ],
        ),
        ("gpu-no-driver", Torch, "2.15.0+cu132", &[]),
        ("a10-row-remap-pending-xid79", Torch, "2.14.1+cu126", &[]),
        // An A100 on R510 (CUDA 11.6): cu118 runs through minor-version compatibility (sm_80 machine code).
        (
            "a100-ecc-row-remap-xid63",
            Torch,
            "2.7.1+cu118",
            &[("1.13.1+cu116", "fits, but 2.7.1+cu118 is newer (a new environment gets the newest release that runs)")],
        ),
        ("container-without-gpu", Torch, "2.15.0+cu132", &[]),
        ("docker-no-container-toolkit", Torch, "2.3.1+cu121", &[]),
        ("docker-toolkit-no-runtime", Torch, "2.3.1+cu121", &[]),
        // The lent H200 (R580, CUDA 13.0) keeps its installed 2.11 line; jax[cuda13] would pull the
        // CUDA 13.5 runtime wheel, which runs on CUDA 13.0 only through minor-version compatibility.
        ("h200-container-cu130", Torch, "2.11.0+cu130", &[]),
        (
            "h200-container-cu130",
            Jax,
            "jax[cuda12] 0.12.0.1",
            &[(
                "jax[cuda13] 0.12.0.1",
                "runs only through minor-version compatibility; jax[cuda12] 0.12.0.1 runs on this driver in full",
            )],
        ),
        ("hgx-h100-nvlink", Torch, "2.14.1+cu126", &[]),
        ("mig-a100", Torch, "2.14.1+cu126", &[]),
        ("no-driver", Tensorflow, "tensorflow 2.21.0 (CUDA 12.5)", &[]),
        ("old-driver-nvml-gaps", Torch, "-", &[("1.12", PY36_112), ("1.13", PY36_113)]),
        ("old-driver-nvml-gaps", Cupy, "-", &[("cupy-cuda11x", "no wheel for Python 3.6 (it supports 3.9 to 3.13)")]),
        // RTX 5090 on R570 (CUDA 12.8): the newest build with sm_120 that runs is cu129, through
        // minor-version compatibility; cu130 and newer need R580.
        (
            "pcie-2x5090-no-p2p",
            Torch,
            "2.13.0+cu129",
            &[("2.14.1+cu130", "driver 570 < 580"), ("2.14.1+cu126", "no sm_120")],
        ),
        (
            "torch-cu130-on-r550",
            Torch,
            "2.9.1+cu128",
            &[
                ("2.9.1+cu130", "driver 550 < 580"),
                ("2.6.0+cu124", "fits, but 2.9.1+cu128 stays on the installed 2.9 line"),
            ],
        ),
        (
            "torch-cu130-on-r550",
            Jax,
            "jax[cuda12] 0.6.2",
            // jaxlib 0.7.2 has cp314 wheels on PyPI (kb-refresh, issue 28).
            &[("jax 0.7.2", "no wheel for Python 3.10 (it supports 3.11 to 3.14)")],
        ),
        (
            "torch-cu130-on-r550",
            Tensorflow,
            "tensorflow 2.21.0 (CUDA 12.5)",
            &[(
                "tensorflow 2.17.1 (CUDA 12.3)",
                "fits, but tensorflow 2.21.0 (CUDA 12.5) is newer (a new environment gets the newest release that runs)",
            )],
        ),
        ("two-socket-8x4090", Torch, "2.14.1+cu126", &[]),
        ("two-toolkits", Torch, "2.14.1+cu126", &[]),
        ("windows-wddm", Torch, "2.3.1+cu121", &[]),
        ("windows-wddm", Jax, "-", &[("jax 0.6.2", "no GPU wheel for Windows x86_64")]),
        ("windows-wddm", Tensorflow, "-", &[("2.21", "no GPU wheel for Windows x86_64")]),
        // torch 2.15.0 requires Python >= 3.11 (PyPI, issue 28): the WSL machine's 3.10 turns the
        // line down before its driver is looked at.
        ("wsl2", Torch, "2.14.1+cu126", &[("2.15", "no wheel for Python 3.10 (it supports 3.11 to 3.15)")]),
    ]
}

/// Every scenario folder is in the table above (a new fixture needs its expected choice).
#[test]
fn every_scenario_folder_is_in_the_table() {
    let mut names: Vec<String> = std::fs::read_dir(fixtures())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().join("host.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let src = include_str!("choose.rs");
    for n in names {
        assert!(src.contains(&format!("\"{n}\",")), "{n} has no row in every_scenario_gets_its_expected_choice");
    }
}

fn linux(gpus: &[&str], driver: Option<&str>, cuda: Option<&str>, python: (u32, u32)) -> Machine {
    Machine {
        gpus: gpus.iter().map(|g| cc(g)).collect(),
        driver_cuda: cuda.map(|c| c.parse().unwrap()),
        driver_version: driver.map(str::to_owned),
        python: Some(python),
        os: OsFamily::Linux,
        cpu: "x86_64".into(),
        toolkits: Vec::new(),
    }
}

#[test]
fn sm_120_needs_cu128_or_newer() {
    let m = linux(&["12.0"], Some("570.26"), Some("12.8"), (3, 12));
    let c = choose(kb(), &m, &want(Framework::Torch, Some("2.5")));
    assert_eq!(chosen(&c), "2.11.0+cu128");
    assert_eq!(reason(&c, "2.5.1+cu124"), "no sm_120");
    assert_eq!(reason(&c, "2.11.0+cu126"), "no sm_120");
    assert_eq!(reason(&c, "2.12.1+cu130"), "driver 570 < 580");
    // PyPI's 2.11.0 is cu130: only PyTorch's index has cu128, and the why says so.
    let got = c.chosen.as_ref().unwrap();
    assert_eq!(got.requirements, ["torch==2.11.0+cu128", "torchvision==0.26.0+cu128", "torchaudio==2.11.0+cu128"]);
    assert_eq!(got.index_url.as_deref(), Some("https://download.pytorch.org/whl/cu128"));
    assert!(
        got.why.contains("only https://download.pytorch.org/whl/cu128 has the cu128 build (PyPI serves only cu130"),
        "{}",
        got.why
    );
}

/// Issue 29 item 1: where PyPI serves the chosen build (the line's PyPI-default variant on Linux
/// x86_64, from the knowledge base), it installs from PyPI, unlabelled and with no `--index-url`,
/// so the user's own index or mirror applies; on Windows PyPI's torch is CPU-only.
#[test]
fn a_build_pypi_serves_installs_from_pypi_without_an_index() {
    let m = linux(&["8.9"], Some("580.95.05"), Some("13.0"), (3, 12));
    let c = choose(kb(), &m, &want(Framework::Torch, None));
    let got = c.chosen.as_ref().unwrap();
    let release = kb().pytorch.release(&got.label).unwrap();
    assert!(got.label.ends_with(&format!("+{}", release.pypi_linux)), "{got:?}");
    let version = release.latest.as_deref().unwrap();
    assert_eq!(got.requirements[0], format!("torch=={version}"));
    assert!(got.requirements.iter().all(|r| !r.contains('+')), "{got:?}");
    assert_eq!(got.index_url, None);
    assert!(got.why.contains("PyPI serves this very build"), "{}", got.why);
    let windows = Machine { os: OsFamily::Windows, ..m };
    let w = choose(kb(), &windows, &want(Framework::Torch, None));
    let got = w.chosen.as_ref().unwrap();
    assert!(got.index_url.as_deref().is_some_and(|u| u.starts_with("https://download.pytorch.org/whl/cu")), "{got:?}");
    assert!(got.requirements[0].contains('+') && got.why.contains("CPU-only"), "{got:?}");
}

/// Issue 29 item 5: every torch line from 2.12 gets torchvision and torchaudio (the ones PyPI
/// resolves beside it), from PyPI without labels where PyPI serves the build; a companion built for
/// that very torch keeps its label on PyTorch's index.
#[test]
fn torch_2_12_and_newer_get_their_companions() {
    let r580 = linux(&["8.9"], Some("580.95.05"), Some("13.0"), (3, 12));
    for line in ["2.12", "2.13", "2.14", "2.15"] {
        let c = choose(kb(), &r580, &want(Framework::Torch, Some(line)));
        let got = c.chosen.as_ref().unwrap();
        let names: Vec<&str> = got.requirements.iter().map(|r| r.split("==").next().unwrap()).collect();
        assert_eq!(names, ["torch", "torchvision", "torchaudio"], "{line}: {got:#?}");
    }
    let c = choose(kb(), &r580, &want(Framework::Torch, None));
    assert_eq!(c.chosen.as_ref().unwrap().requirements, ["torch==2.15.0", "torchvision==0.29.2", "torchaudio==2.11.1"]);
    // A 5090 on R575 gets 2.13.0+cu129 from PyTorch's index: torchvision 0.28.0 was built for
    // torch 2.13.0 (labelled), torchaudio 2.11.1 was not (unlabelled).
    let r575 = linux(&["12.0"], Some("575.57.08"), Some("12.9"), (3, 12));
    let c = choose(kb(), &r575, &want(Framework::Torch, None));
    assert_eq!(
        c.chosen.as_ref().unwrap().requirements,
        ["torch==2.13.0+cu129", "torchvision==0.28.0+cu129", "torchaudio==2.11.1"]
    );
}

/// RTX 5090 on R575 (CUDA 12.9) with a cu132 torch: the newest build with sm_120 for this driver.
#[test]
fn a_cu132_torch_on_r575_moves_to_the_newest_cu129_build() {
    let m = linux(&["12.0"], Some("575.57.08"), Some("12.9"), (3, 12));
    let c = choose(kb(), &m, &want(Framework::Torch, Some("2.15")));
    assert_eq!(chosen(&c), "2.13.0+cu129");
    assert_eq!(reason(&c, "2.15.0+cu132"), "driver 575 < 580");
}

#[test]
fn pascal_stays_on_the_newest_cu126_build_the_newest_wheels_dropped_it() {
    let m = linux(&["6.1"], Some("580.95.05"), None, (3, 12));
    let c = choose(kb(), &m, &want(Framework::Torch, None));
    assert_eq!(chosen(&c), "2.14.1+cu126");
    assert_eq!(reason(&c, "2.15.0+cu132"), "no sm_61");
    assert_eq!(reason(&c, "2.14.1+cu130"), "no sm_61");
    let why = &c.chosen.as_ref().unwrap().why;
    assert!(why.contains("sm_61 (sm_60 machine code)"), "{why}");
    // Issue 29 item 5: torch 2.12+ gets the companions pip resolves beside it from PyPI (built for
    // no one torch release, so pinned without a label and taken from the same index).
    let got = c.chosen.as_ref().unwrap();
    assert_eq!(got.requirements, ["torch==2.14.1+cu126", "torchvision==0.29.1", "torchaudio==2.11.1"]);
    assert!(why.contains("torchaudio 2.11.1 is the newest whose requirements admit torch 2.14.1"), "{why}");
    // JAX's CUDA 13 plugin needs 7.5; its CUDA 12 plugin takes Pascal.
    let j = choose(kb(), &m, &want(Framework::Jax, None));
    assert_eq!(chosen(&j), "jax[cuda12] 0.12.0.1");
    assert_eq!(reason(&j, "jax[cuda13] 0.12.0.1"), "needs compute capability 7.5 or newer; sm_61 is older");
}

#[test]
fn python_3_14_with_no_wheel_yet() {
    let m = linux(&["8.9"], Some("580.95.05"), None, (3, 14));
    let c = choose(kb(), &m, &want(Framework::Torch, Some("2.8")));
    assert_eq!(reason(&c, "2.8"), "no wheel for Python 3.14 (it supports 3.9 to 3.13)");
    assert!(chosen(&c).starts_with("2.14.1+"), "{c:#?}");
    // JAX has had cp314 wheels since 0.7.2 (jaxlib's wheel tags on PyPI, issue 28); 0.6.2 had none.
    let j = choose(kb(), &m, &want(Framework::Jax, None));
    assert!(chosen(&j).ends_with(" 0.12.0.1"), "{j:#?}");
    assert_eq!(reason(&j, "jax 0.6.2"), "no wheel for Python 3.14 (it supports 3.10 to 3.13)");
    let t = choose(kb(), &m, &want(Framework::Tensorflow, None));
    assert_eq!(chosen(&t), "-", "{t:#?}");
}

/// Issue 29 item 5: a new environment gets the newest release that runs, minor-version
/// compatibility included, and the why says what that compatibility does not do; a fix of an
/// environment keeps its installed line (R550: torch 2.14.1+cu126 new, 2.6.0+cu124 kept; R535:
/// TensorFlow 2.21, not 2.15.1 with Keras 2).
#[test]
fn a_new_environment_gets_the_newest_release_that_runs_and_a_fix_keeps_its_line() {
    let r550 = linux(&["8.9"], Some("550.54.14"), Some("12.4"), (3, 12));
    let new = choose(kb(), &r550, &want(Framework::Torch, None));
    assert_eq!(chosen(&new), "2.14.1+cu126");
    assert_eq!(
        reason(&new, "2.6.0+cu124"),
        "fits, but 2.14.1+cu126 is newer (a new environment gets the newest release that runs)"
    );
    assert_eq!(reason(&new, "2.14.1+cu130"), "driver 550 < 580");
    let why = &new.chosen.as_ref().unwrap().why;
    assert!(why.contains("driver 550 runs CUDA 12.6 through minor-version compatibility"), "{why}");
    assert!(why.contains("the driver cannot JIT-compile PTX built by the newer toolkit"), "{why}");
    assert!(why.contains("a driver for CUDA 12.6 (560.28.03 or newer) runs it in full"), "{why}");
    let fix = choose(kb(), &r550, &want(Framework::Torch, Some("2.6")));
    assert_eq!(chosen(&fix), "2.6.0+cu124");
    assert!(!fix.chosen.as_ref().unwrap().why.contains("minor-version"), "{fix:#?}");
    let r535 = linux(&["8.6"], Some("535.129.03"), Some("12.2"), (3, 11));
    assert_eq!(chosen(&choose(kb(), &r535, &want(Framework::Torch, None))), "2.14.1+cu126");
    let tf = choose(kb(), &r535, &want(Framework::Tensorflow, None));
    assert_eq!(chosen(&tf), "tensorflow 2.21.0 (CUDA 12.5)");
    assert_eq!(
        reason(&tf, "tensorflow 2.15.1 (CUDA 12.2)"),
        "fits, but tensorflow 2.21.0 (CUDA 12.5) is newer (a new environment gets the newest release that runs)"
    );
}

/// Issue 29 item 5: `jax[cudaNN]` and `tensorflow[and-cuda]` 2.20+ take the newest CUDA wheels of
/// their major from PyPI (12.9 and 13.5 as the knowledge base records), not the floor their row
/// names: the why says which CUDA is installed and how the driver runs it, and a build whose wheels
/// run only through minor-version compatibility loses to one of the same release that runs in full.
#[test]
fn jax_and_tensorflow_say_the_cuda_their_pypi_wheels_bring() {
    let r535 = linux(&["8.6"], Some("535.129.03"), Some("12.2"), (3, 12));
    let tf = choose(kb(), &r535, &want(Framework::Tensorflow, None));
    let why = &tf.chosen.as_ref().unwrap().why;
    assert!(
        why.contains(
            "the CUDA wheels it installs from PyPI are CUDA 12.9 (the newest CUDA 12.x its requirements allow, as of \
             gpu-doctor's knowledge base), which driver 535 runs through minor-version compatibility"
        ),
        "{why}"
    );
    assert!(why.contains("the and-cuda extra installs the nvidia-* CUDA wheels: any 12.x from the 12.5"), "{why}");
    // R580 runs CUDA 13.0 in full, and 12.9 in full: jax[cuda13] brings 13.5.
    let r580 = linux(&["8.9"], Some("580.95.05"), Some("13.0"), (3, 12));
    let j = choose(kb(), &r580, &want(Framework::Jax, None));
    assert_eq!(chosen(&j), "jax[cuda12] 0.12.0.1");
    assert!(j.chosen.as_ref().unwrap().why.contains("are CUDA 12.9 (the newest CUDA 12.x"), "{j:#?}");
    assert!(j.chosen.as_ref().unwrap().why.contains("which driver 580 runs in full"), "{j:#?}");
    assert!(j.chosen.as_ref().unwrap().why.contains("driver 580 runs its CUDA floor, 12.1, in full"), "{j:#?}");
    assert_eq!(
        reason(&j, "jax[cuda13] 0.12.0.1"),
        "runs only through minor-version compatibility; jax[cuda12] 0.12.0.1 runs on this driver in full"
    );
    // A TensorFlow whose and-cuda extra pins its tested CUDA (2.19: 12.5.82) says nothing more.
    let py312 = linux(&["8.9"], Some("580.95.05"), Some("13.0"), (3, 12));
    let w = Want { framework: Framework::Tensorflow, keep_line: Some("2.19".into()), wheelhouse: None };
    let t = choose(kb(), &py312, &w);
    assert_eq!(chosen(&t), "tensorflow 2.19.1 (CUDA 12.5)");
    assert!(!t.chosen.as_ref().unwrap().why.contains("wheels it installs"), "{t:#?}");
}

#[test]
fn a_driver_that_supports_only_cuda_11_8_gets_cu118() {
    let m = linux(&["8.6"], Some("520.61.05"), None, (3, 10));
    let c = choose(kb(), &m, &want(Framework::Torch, None));
    assert_eq!(chosen(&c), "2.7.1+cu118");
    assert_eq!(reason(&c, "2.7.1+cu126"), "driver 520 < 525");
    let cp = choose(kb(), &m, &want(Framework::Cupy, None));
    assert_eq!(chosen(&cp), "cupy-cuda11x 13.6.0");
}

/// A build that covers a GPU only by PTX, on a driver that runs it only through minor-version
/// compatibility, cannot compile that PTX (TensorFlow ships compute_90 PTX and SASS up to sm_89).
#[test]
fn ptx_only_under_minor_version_compatibility_is_turned_down() {
    let m = linux(&["12.0"], Some("550.54.14"), None, (3, 12));
    let c = choose(kb(), &m, &want(Framework::Tensorflow, None));
    assert_eq!(
        reason(&c, "tensorflow 2.21.0 (CUDA 12.5)"),
        "sm_120 only as PTX built by CUDA 12.5, which driver 550 cannot compile (minor-version compatibility)"
    );
    assert_eq!(chosen(&c), "tensorflow 2.17.1 (CUDA 12.3)", "CUDA 12.3 runs in full, so its PTX compiles");
    assert!(c.chosen.unwrap().why.contains("sm_120 (compute_90 PTX only)"));
}

const WHEELHOUSE: &[&str] = &[
    "torch-2.16.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl",
    "torchvision-0.31.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl",
    "torch-2.16.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl",
    "torch-2.15.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl",
    "torch-2.5.1+cu121-cp310-cp310-linux_x86_64.whl",
    "torch-2.5.1+cu121-cp312",
    "not-a-wheel.txt",
];

#[test]
fn a_wheelhouse_with_a_torch_newer_than_the_knowledge_base_is_reasoned_from_its_tags() {
    let m = linux(&["8.9"], None, Some("13.2"), (3, 12));
    let files: Vec<String> = WHEELHOUSE.iter().map(|f| format!("/wh/{f}")).collect();
    let w = Want { framework: Framework::Torch, keep_line: None, wheelhouse: Some(files) };
    let c = choose(kb(), &m, &w);
    let got = c.chosen.as_ref().unwrap();
    assert_eq!(got.label, "2.16.0+cu132");
    assert_eq!(got.requirements, ["torch==2.16.0+cu132", "torchvision==0.31.0+cu132"]);
    assert_eq!(
        got.beyond_kb,
        "2.16 is newer than gpu-doctor's knowledge base; its arch list is assumed from cu132 of 2.15"
    );
    assert_eq!(got.index_url, None, "a wheelhouse is installed from with --find-links, no index");
    assert_eq!(reason(&c, "2.16.0+cpu"), "a cpu build, without CUDA");
    assert_eq!(
        reason(&c, "2.5.1"),
        "no wheel for Python 3.12 here",
        "a version with no wheel here is turned down once"
    );
    assert_eq!(
        reason(&c, "2.15.0+cu132"),
        "fits, but 2.16.0+cu132 is newer (a new environment gets the newest release that runs)"
    );
    // The same Blackwell GPU: the assumed arch list has sm_120.
    let b = choose(kb(), &linux(&["12.0"], None, Some("13.2"), (3, 12)), &w);
    assert_eq!(chosen(&b), "2.16.0+cu132");
}

#[test]
fn a_wheelhouse_of_jax_and_cupy_wheels() {
    let files: Vec<String> = [
        "jax-0.13.0-py3-none-any.whl",
        "jaxlib-0.13.0-cp312-cp312-manylinux_2_27_x86_64.whl",
        "jax_cuda13_plugin-0.13.0-cp312-cp312-manylinux_2_27_x86_64.whl",
        "jax_cuda12_plugin-0.13.0-cp312-cp312-manylinux_2_27_x86_64.whl",
        "cupy_cuda12x-14.2.0-cp312-cp312-manylinux2014_x86_64.whl",
        "cupy_cuda13x-14.2.0-cp312-cp312-manylinux2014_x86_64.whl",
    ]
    .map(str::to_owned)
    .to_vec();
    let m = linux(&["8.9"], Some("550.54.14"), None, (3, 12));
    let w = |framework| Want { framework, keep_line: None, wheelhouse: Some(files.clone()) };
    let j = choose(kb(), &m, &w(Framework::Jax));
    let got = j.chosen.as_ref().unwrap();
    assert_eq!(
        (got.label.as_str(), got.requirements.as_slice()),
        ("jax[cuda12] 0.13.0", &["jax[cuda12]==0.13.0".to_owned()][..])
    );
    assert!(got.beyond_kb.contains("newer than gpu-doctor's knowledge base"), "{got:#?}");
    assert_eq!(reason(&j, "jax[cuda13] 0.13.0"), "driver 550 < 580");
    let c = choose(kb(), &m, &w(Framework::Cupy));
    assert_eq!(chosen(&c), "cupy-cuda12x 14.2.0");
}

/// A jax older than the knowledge base's newest row but not one of its rows is "not in" it, never
/// "newer than" it (it said so for jax 0.4.35 while the rows go up to 0.7).
#[test]
fn an_older_version_missing_from_the_knowledge_base_is_not_called_newer() {
    let files: Vec<String> =
        ["jax-0.4.35-py3-none-any.whl", "jaxlib-0.4.35-py3-none-any.whl", "jax_cuda12_plugin-0.4.35-py3-none-any.whl"]
            .map(str::to_owned)
            .to_vec();
    let m = linux(&["8.9"], Some("550.54.14"), None, (3, 12));
    let j = choose(kb(), &m, &Want { framework: Framework::Jax, keep_line: None, wheelhouse: Some(files) });
    let got = j.chosen.as_ref().unwrap();
    assert!(got.beyond_kb.starts_with("jax 0.4.35 is not in gpu-doctor's knowledge base"), "{got:#?}");
}

/// The framework's candidates as labels, from the knowledge base (torch: every variant of every
/// line that names its newest release).
fn torch_labels(kb: &Kb) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for r in &kb.pytorch.release {
        let Some(latest) = &r.latest else { continue };
        for v in kb.pytorch.variant.iter().filter(|v| v.torch == r.version) {
            out.push((r.version.clone(), format!("{latest}+{}", index_tag(v.cuda))));
        }
    }
    out
}

fn machines() -> impl Strategy<Value = Machine> {
    let ccs: Vec<ComputeCapability> = kb().gpus.cc.iter().map(|r| r.cc).collect();
    let drivers: Vec<String> = kb().cuda.toolkit.iter().map(|t| t.linux_driver.to_string()).collect();
    (
        proptest::sample::subsequence(ccs, 0..3),
        proptest::option::of(proptest::sample::select(drivers)),
        proptest::option::of((6_u32..16).prop_map(|m| (3_u32, m))),
        prop_oneof![Just(OsFamily::Linux), Just(OsFamily::Windows)],
    )
        .prop_map(|(gpus, driver, python, os)| Machine {
            gpus,
            driver_cuda: None,
            driver_version: driver,
            python,
            os,
            cpu: "x86_64".into(),
            toolkits: Vec::new(),
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// A chosen torch build covers every GPU and runs on the driver; every candidate is chosen or
    /// rejected with a reason.
    #[test]
    fn a_chosen_torch_covers_every_gpu_and_runs_on_the_driver(m in machines(), keep in proptest::option::of(0_usize..20)) {
        let kb = kb();
        let lines: Vec<&str> = kb.pytorch.release.iter().map(|r| r.version.as_str()).collect();
        let keep = keep.and_then(|i| lines.get(i).copied());
        let c = choose(kb, &m, &want(Framework::Torch, keep));
        for r in &c.rejected {
            prop_assert!(!r.reason.is_empty(), "{r:?}");
        }
        for (line, label) in torch_labels(kb) {
            // A line kept only for the environments that have it is no candidate elsewhere.
            if kb.pytorch.kept_only(&line) && keep != Some(line.as_str()) {
                prop_assert!(c.chosen.as_ref().is_none_or(|x| !x.label.starts_with(&format!("{line}."))), "{c:#?}");
                continue;
            }
            let seen = c.chosen.as_ref().is_some_and(|x| x.label == label)
                || c.rejected.iter().any(|r| r.label == label || r.label == line);
            prop_assert!(seen, "{label} neither chosen nor rejected: {c:#?}");
        }
        if let Some(x) = &c.chosen {
            let (version, tag) = x.label.split_once('+').unwrap();
            let cuda: CudaVersion = format!("{}.{}", &tag[2..tag.len() - 1], &tag[tag.len() - 1..]).parse().unwrap();
            let v = kb.pytorch.variant(version, cuda).unwrap();
            for g in &m.gpus {
                prop_assert!(v.coverage(*g) != Coverage::None, "{} does not cover {g}", x.label);
            }
            let level = DriverLevel { version: m.driver_version.as_ref().map(|d| d.parse().unwrap()), cuda: None, evidence: None };
            let verdict = kb.cuda.judge(cuda, &level, m.os);
            prop_assert!(!matches!(verdict, RuntimeVerdict::TooOld { .. }), "{} on {:?}: {verdict:?}", x.label, m.driver_version);
        }
    }

    /// Where `recommend` (the probes' query: machine code for every GPU, a CUDA the driver runs in
    /// full) finds a wheel, a new environment gets that release or a newer one (the newest that
    /// runs, minor-version compatibility included), and the same wheel where the release is the
    /// same; a fix that keeps recommend's line gets recommend's wheel.
    #[test]
    fn the_chooser_agrees_with_recommend(gpus in proptest::sample::subsequence(kb().gpus.cc.iter().map(|r| r.cc).collect::<Vec<_>>(), 1..3), cuda in proptest::sample::select(kb().cuda.toolkit.iter().map(|t| t.version).collect::<Vec<_>>())) {
        let kb = kb();
        let m = Machine { gpus: gpus.clone(), driver_cuda: Some(cuda), driver_version: None, python: None, os: OsFamily::Linux, cpu: "x86_64".into(), toolkits: Vec::new() };
        let c = choose(kb, &m, &want(Framework::Torch, None));
        if let Some(v) = kb.pytorch.recommend(&gpus, Some(cuda), None) {
            let latest = kb.pytorch.release(&v.torch).and_then(|r| r.latest.clone()).unwrap();
            let label = format!("{latest}+{}", index_tag(v.cuda));
            let got = chosen(&c);
            let got_version = got.split('+').next().unwrap();
            let numbers = |v: &str| gpu_doctor_kb::PyVersion::new(v).numbers();
            prop_assert!(numbers(got_version) >= numbers(&latest), "{got} is older than {label}");
            if got_version == latest {
                prop_assert_eq!(got, label.as_str());
            }
            let kept = choose(kb, &m, &want(Framework::Torch, Some(&v.torch)));
            prop_assert_eq!(chosen(&kept), label.as_str());
        }
    }

    /// Every framework: whatever the machine, a choice never panics, and a chosen build has a
    /// requirement pinned to one version.
    #[test]
    fn every_framework_chooses_a_pinned_build_or_says_why_not(m in machines(), fw in proptest::sample::select(Framework::ALL.to_vec())) {
        let c = choose(kb(), &m, &want(fw, None));
        match &c.chosen {
            Some(x) => prop_assert!(x.requirements.first().is_some_and(|r| r.contains("==")), "{x:?}"),
            None => prop_assert!(!c.rejected.is_empty()),
        }
    }
}

/// A wheelhouse of many versions is chosen among in linear time (2,000 synthetic torch versions
/// took 5.4 s, 40,000 ran past 10 minutes): torch with its torchvision, jax with its plugin.
#[test]
fn a_wheelhouse_of_many_versions_is_chosen_among_quickly() {
    let m = linux(&["8.9"], Some("550.54.14"), Some("12.4"), (3, 12));
    let n = 10_000;
    let mut files: Vec<String> = Vec::new();
    for i in 0..n {
        files.push(format!("torch-2.{i}.0+cu124-cp312-cp312-manylinux_2_28_x86_64.whl"));
        files.push(format!("torchvision-0.{i}.0+cu124-cp312-cp312-manylinux_2_28_x86_64.whl"));
        files.push(format!("jax-0.{i}.1-py3-none-any.whl"));
        files.push(format!("jax_cuda12_plugin-0.{i}.1-cp312-cp312-manylinux_2_27_x86_64.whl"));
    }
    let started = std::time::Instant::now();
    let t = choose(kb(), &m, &Want { framework: Framework::Torch, keep_line: None, wheelhouse: Some(files.clone()) });
    let got = t.chosen.as_ref().unwrap();
    assert_eq!(got.label, format!("2.{}.0+cu124", n - 1));
    assert_eq!(got.requirements[1], format!("torchvision==0.{}.0+cu124", n - 1));
    let j = choose(kb(), &m, &Want { framework: Framework::Jax, keep_line: None, wheelhouse: Some(files) });
    assert_eq!(chosen(&j), format!("jax[cuda12] 0.{}.1", n - 1));
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
}

/// Issue 29 item 2: CuPy's wheels load cuBLAS and the other CUDA libraries from a toolkit; on a
/// machine with none of that major the plan installs the `ctk` extra, which brings them from PyPI
/// (Provides-Extra of cupy-cuda12x and cupy-cuda13x 14.2.0); a machine with that toolkit keeps it;
/// cupy-cuda11x has no such extra, and the why says a toolkit is needed.
#[test]
fn cupy_brings_its_cuda_libraries_where_the_machine_has_no_toolkit() {
    let bare = linux(&["8.9"], Some("550.54.14"), Some("12.4"), (3, 12));
    let c = choose(kb(), &bare, &want(Framework::Cupy, None));
    let got = c.chosen.as_ref().unwrap();
    assert_eq!(got.requirements, ["cupy-cuda12x[ctk]==14.2.0"]);
    assert!(got.why.contains("no CUDA 12 toolkit, so the ctk extra"), "{}", got.why);
    let with_toolkit = Machine { toolkits: vec![CudaVersion::new(12, 4)], ..bare };
    let c = choose(kb(), &with_toolkit, &want(Framework::Cupy, None));
    let got = c.chosen.as_ref().unwrap();
    assert_eq!(got.requirements, ["cupy-cuda12x==14.2.0"]);
    assert!(got.why.contains("CUDA 12.4 toolkit installed here"), "{}", got.why);
    let r520 = linux(&["8.6"], Some("520.61.05"), None, (3, 10));
    let c = choose(kb(), &r520, &want(Framework::Cupy, None));
    let got = c.chosen.as_ref().unwrap();
    assert_eq!(got.requirements, ["cupy-cuda11x==13.6.0"]);
    assert!(got.why.contains("has no ctk extra: install a CUDA 11.x toolkit"), "{}", got.why);
    // The replay fixtures' toolkits reach the chooser: a recorded machine without one gets the extra.
    let (m, _) = scenario_machine("pcie-2x5090-no-p2p");
    assert!(m.toolkits.is_empty(), "{m:?}");
    let c = choose(kb(), &m, &want(Framework::Cupy, None));
    assert!(c.chosen.as_ref().unwrap().requirements[0].contains("[ctk]=="), "{c:#?}");
}
/// Issue 29 item 8: a machine without a GPU gets the newest build, and the why says why (nothing
/// rules a build out) and what a GPU machine needs to run it.
#[test]
fn a_machine_without_a_gpu_is_told_why_it_gets_the_newest_build() {
    let m = Machine { gpus: vec![], driver_cuda: None, driver_version: None, ..linux(&[], None, None, (3, 12)) };
    let c = choose(kb(), &m, &want(Framework::Torch, None));
    let got = c.chosen.as_ref().unwrap();
    assert!(got.why.starts_with("no NVIDIA GPU or driver is seen here, so nothing rules a build out"), "{}", got.why);
    let cuda = got.label.rsplit("+cu").next().unwrap();
    assert!(got.why.contains(&format!("needs a driver for CUDA {}.{}", &cuda[..2], &cuda[2..])), "{}", got.why);
}

/// Issue 27: an environment pinned to torch 1.7 whose RTX 3090 (sm_86) its cu101 build lacks gets the
/// same line's cu110 build (sm_80 machine code runs on 8.6), with torchaudio pinned as PyTorch's own
/// command pins it, unlabelled (edgeai/DINet#100: "I missed the torch==1.7.1+cu110"). A new
/// environment on the same machine never gets a 1.7 to 1.11 line, nor does `recommend`.
#[test]
fn a_pinned_old_line_gets_its_own_build_and_a_new_environment_never_does() {
    let kb = kb();
    let m = Machine {
        gpus: vec!["8.6".parse().unwrap()],
        driver_cuda: None,
        driver_version: Some("460.32.03".into()),
        python: Some((3, 8)),
        os: OsFamily::Linux,
        cpu: "x86_64".into(),
        toolkits: Vec::new(),
    };
    let kept = choose(kb, &m, &want(Framework::Torch, Some("1.7")));
    let got = kept.chosen.as_ref().expect("a 1.7 build has sm_80");
    assert_eq!(got.label, "1.7.1+cu110");
    assert_eq!(got.requirements, ["torch==1.7.1+cu110", "torchvision==0.8.2+cu110", "torchaudio==0.7.2"]);
    assert_eq!(got.index_url.as_deref(), Some("https://download.pytorch.org/whl/cu110"));
    // Without the line to keep: a release built for today (the driver runs CUDA 11.2).
    let new = choose(kb, &m, &want(Framework::Torch, None));
    let label = chosen(&new);
    assert!(!["1.7.", "1.8.", "1.9.", "1.10.", "1.11."].iter().any(|l| label.starts_with(l)), "{label}");
    assert!(!new.rejected.iter().any(|r| r.label.starts_with("1.7")), "{:#?}", new.rejected);
    let r = kb.pytorch.recommend(&m.gpus, Some("11.0".parse().unwrap()), None);
    assert!(r.is_none_or(|v| !kb.pytorch.kept_only(&v.torch)), "{r:?}");
    // Kept, a 1.8 environment on a Volta under R418 (CUDA 10.1) gets 1.8.1's cu101, not another line.
    let volta = Machine { gpus: vec!["7.0".parse().unwrap()], driver_version: Some("418.67".into()), ..m };
    assert_eq!(chosen(&choose(kb, &volta, &want(Framework::Torch, Some("1.8")))), "1.8.1+cu101");
}
