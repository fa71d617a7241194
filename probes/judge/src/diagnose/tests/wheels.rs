//! One environment, two CUDA majors.

use super::builder::Machine;
use crate::diagnose::fix;
use gpu_doctor_model::FrameworkBuild;
use gpu_doctor_model::{Change, InstallFlag};

const MIXED: &str = "wheels.mixed_cuda_majors";
const DUPLICATE: &str = "wheels.duplicate_cuda_library";
const DUPLICATE_CUDNN: &str = "wheels.duplicate_cudnn";
fn rig() -> Machine {
    Machine::linux().gpu("NVIDIA GeForce RTX 4090", "8.9")
}

fn major(m: &str) -> Option<FrameworkBuild> {
    Some(FrameworkBuild::Cuda { version: Some(m.into()) })
}

fn jax13(m: Machine) -> Machine {
    // As `pip install "jax[cuda13]"` leaves it: the plugin, its PJRT and the cuDNN wheel it needs.
    m.framework("jax-cuda13-plugin", "0.7.2", major("13"))
        .framework("jax-cuda13-pjrt", "0.7.2", major("13"))
        .wheel("nvidia-cudnn-cu13", "9.13.0.50")
}

fn ids(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn each_mix_gives_exactly_its_finding() {
    let torch = || rig().torch("2.5.1+cu124");
    let cases: Vec<(&str, Machine, Vec<String>)> = vec![
        ("torch and cupy of one major", torch().framework("cupy-cuda12x", "13.3.0", major("12")), vec![]),
        (
            "one major of wheels",
            torch().wheel("nvidia-cudnn-cu12", "9.1.0.70").wheel("nvidia-cublas-cu12", "12.4.5.8"),
            vec![],
        ),
        ("torch cu12 with jax cuda13", jax13(torch()), ids(&[MIXED])),
        ("torch cu12 with cupy cuda13", torch().framework("cupy-cuda13x", "14.0.0", major("13")), ids(&[MIXED])),
        (
            "cuDNN wheels of two majors",
            torch().wheel("nvidia-cudnn-cu12", "9.1.0.70").wheel("nvidia-cudnn-cu13", "9.13.0.50"),
            ids(&[DUPLICATE_CUDNN]),
        ),
        (
            "runtime wheels of two majors",
            torch().wheel("nvidia-cuda-runtime-cu12", "12.4.127").wheel("nvidia-cuda-runtime", "13.0.96"),
            ids(&[DUPLICATE]),
        ),
        (
            "mixed frameworks fold their duplicate runtimes in",
            jax13(torch()).wheel("nvidia-cuda-runtime-cu12", "12.4.127").wheel("nvidia-cuda-runtime", "13.0.96"),
            ids(&[MIXED]),
        ),
        (
            "mixed frameworks and two cuDNN majors",
            jax13(torch()).wheel("nvidia-cudnn-cu12", "9.1.0.70").wheel("nvidia-cudnn-cu13", "9.13.0.50"),
            ids(&[DUPLICATE_CUDNN, MIXED]),
        ),
    ];
    for (name, m, want) in cases {
        assert_eq!(m.ids(), want, "{name}");
    }
}

#[test]
fn the_fix_moves_the_odd_framework_to_the_others_major() {
    let m = jax13(rig().torch("2.5.1+cu124"));
    assert_eq!(
        m.changes(MIXED),
        [
            fix::uninstall(["jax-cuda13-plugin", "jax-cuda13-pjrt"]),
            fix::install(&[InstallFlag::Upgrade], ["jax[cuda12]"])
        ]
    );
    let f = m.finding(MIXED);
    assert!(f.detail.contains("python3 -m venv ~/venvs/jax-cuda13-plugin && ~/venvs/jax-cuda13-plugin/bin/python -m pip install 'jax[cuda13]'"), "{}", f.detail);
    assert!(f.evidence.iter().any(|e| e.contains("jax-cuda13-plugin 0.7.2 (CUDA 13 build)")), "{:?}", f.evidence);

    let cupy = rig().torch("2.5.1+cu124").framework("cupy-cuda13x", "14.0.0", major("13"));
    assert_eq!(cupy.changes(MIXED), [fix::uninstall(["cupy-cuda13x"]), fix::install(&[], ["cupy-cuda12x"])]);

    // TensorFlow has no other major, so torch moves.
    let tf = rig()
        .framework("tensorflow", "2.18.0", major("12.5.1"))
        .wheel("nvidia-cudnn-cu12", "9.3.0.75")
        .torch("2.9.0+cu130");
    assert_eq!(
        tf.changes(MIXED),
        [Change::Install {
            requirements: vec!["torch==2.9.*".into()],
            flags: vec![InstallFlag::Reinstall],
            index_url: Some("https://download.pytorch.org/whl/cu128".into())
        }]
    );

    // Without torch or TensorFlow, the major most frameworks use (the newer on a tie).
    let both = jax13(rig()).framework("cupy-cuda12x", "13.3.0", major("12"));
    assert_eq!(both.changes(MIXED), [fix::uninstall(["cupy-cuda12x"]), fix::install(&[], ["cupy-cuda13x"])]);
}

#[test]
fn duplicate_wheels_keep_the_frameworks_major() {
    let m = rig().torch("2.5.1+cu124").wheel("nvidia-cudnn-cu12", "9.1.0.70").wheel("nvidia-cudnn-cu13", "9.13.0.50");
    assert_eq!(
        m.changes(DUPLICATE_CUDNN),
        [
            fix::uninstall(["nvidia-cudnn-cu13"]),
            fix::install(&[InstallFlag::Reinstall, InstallFlag::NoDeps], ["nvidia-cudnn-cu12==9.1.0.70"])
        ]
    );
    // With no framework to tell, both sets are named and no plan picks one.
    let m = rig().wheel("nvidia-cudnn-cu12", "9.1.0.70").wheel("nvidia-cudnn-cu13", "9.13.0.50");
    let f = m.finding(DUPLICATE_CUDNN);
    let fix = f.fix.unwrap();
    assert!(f.plan.is_none() && fix.contains("CUDA 12: nvidia-cudnn-cu12; CUDA 13: nvidia-cudnn-cu13"), "{fix}");
}

/// JAX falling back to the CPU beside torch seeing the GPU (jax-ml/jax#5231's lines): the jaxlib is its CPU build;
/// with another JAX line saying why the GPU backend failed, or torch not seeing the GPU, it is not concluded.
#[test]
fn jax_on_the_cpu_beside_torch_on_the_gpu_is_a_cpu_jaxlib() {
    let text = ">>> import torch, jax; print(torch.cuda.is_available()); print(jax.devices())\nTrue\n\
                WARNING:absl:No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n\
                [CpuDevice(id=0)]\n";
    let found = super::pasted_findings(text);
    let f = found.iter().find(|f| f.id == "framework.cpu_only_build").expect("the finding");
    assert!(f.fix.as_deref().unwrap().contains("jax[cuda12]"), "{:?}", f.fix);
    assert!(f.explains.contains(&"observed.jax.no_gpu_fallback".to_owned()));
    let without_torch = text.replace("True\n", "False\n");
    assert!(!super::pasted_ids(&without_torch).contains(&"framework.cpu_only_build".to_owned()));
}

/// The warning alone (gladiaio/gladia#927, kuprel/min-dalle#22): a CUDA jaxlib whose GPU cannot start prints the
/// driver's or the loader's error first, so with no other known line the jaxlib is likely its CPU build; not with a
/// line saying why (cuInit failing) or a CUDA jaxlib in the text.
#[test]
fn jax_falling_back_with_no_line_saying_why_is_a_cpu_jaxlib() {
    let line = "2022-11-30 12:50:08,211 - jax._src.lib.xla_bridge - WARNING - No GPU/TPU found, falling back to CPU. \
                (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n";
    let found = super::pasted_findings(line);
    let f = found.iter().find(|f| f.id == "framework.cpu_only_build").expect("the finding");
    assert!(f.summary.contains("likely") && f.explains.contains(&"observed.jax.no_gpu_fallback".to_owned()), "{f:?}");
    assert!(f.fix.as_deref().unwrap().contains("jax[cuda12]"), "{:?}", f.fix);
    let cuinit = format!(
        "2023-01-01 10:00:00.000000: E external/org_tensorflow/tensorflow/compiler/xla/stream_executor/cuda/cuda_driver.cc:267] \
         failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error\n{line}"
    );
    let cuda_jaxlib = format!("$ pip freeze\njax==0.3.25\njaxlib==0.3.25+cuda11.cudnn82\n{line}");
    for text in [cuinit, cuda_jaxlib] {
        assert!(!super::pasted_ids(&text).contains(&"framework.cpu_only_build".to_owned()), "{text}");
    }
}
