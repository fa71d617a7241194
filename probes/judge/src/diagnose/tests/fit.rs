//! `gpu_fit`: the per-GPU judgement the window colours, which must agree with the arch rules.

use super::builder::Machine;
use crate::diagnose::{GpuFit, gpu_fit, gpu_views, torch_arch_list};
use gpu_doctor_kb::Kb;
use gpu_doctor_model::ComputeCapability;
use gpu_doctor_model::FrameworkBuild;

fn cc(text: &str) -> ComputeCapability {
    text.parse().unwrap()
}

/// The fit of the first framework of the machine's environment on `gpu`.
fn fit(m: &Machine, gpu: &str) -> GpuFit {
    let env = &m.0.python_envs.value().unwrap()[0];
    gpu_fit(Kb::get().unwrap(), env, &env.frameworks[0], cc(gpu))
}

fn deep_list(list: &[&str]) -> Machine {
    Machine::linux()
        .torch("2.7.0+cu128")
        .deep_torch(|t| t.arch_list = Some(list.iter().map(|s| s.to_string()).collect()))
}

#[test]
fn an_arch_list_with_and_without_ptx_against_ada_hopper_and_blackwell() {
    let no_ptx = deep_list(&["sm_80", "sm_86", "sm_90"]);
    assert_eq!(fit(&no_ptx, "8.9"), GpuFit::Sass(cc("8.6")));
    assert_eq!(fit(&no_ptx, "9.0"), GpuFit::Sass(cc("9.0")));
    assert_eq!(fit(&no_ptx, "12.0"), GpuFit::NotInBuild);
    let ptx = deep_list(&["sm_80", "sm_90", "compute_90"]);
    assert_eq!(fit(&ptx, "8.9"), GpuFit::Sass(cc("8.0")));
    assert_eq!(fit(&ptx, "12.0"), GpuFit::PtxOnly(cc("9.0")));
    let blackwell = deep_list(&["sm_90", "sm_120"]);
    assert_eq!(fit(&blackwell, "12.0"), GpuFit::Sass(cc("12.0")));
    assert_eq!(fit(&blackwell, "8.9"), GpuFit::NotInBuild);
}

#[test]
fn without_the_deep_tier_the_knowledge_base_list_is_used() {
    let m = Machine::linux().torch("2.3.0+cu121");
    let env = &m.0.python_envs.value().unwrap()[0];
    let list = torch_arch_list(Kb::get().unwrap(), env, &env.frameworks[0]).unwrap();
    assert!(!list.from_deep && list.names.contains(&"sm_90".to_owned()), "{list:?}");
    assert_eq!(fit(&m, "8.9"), GpuFit::Sass(cc("8.6")));
    assert_eq!(fit(&m, "12.0"), GpuFit::NotInBuild);
    // A release the table does not know: no list, so unknown rather than a guess.
    assert_eq!(fit(&Machine::linux().torch("1.0.0+cu100"), "8.9"), GpuFit::Unknown);
}

#[test]
fn cpu_rocm_jax_and_other_builds() {
    assert_eq!(fit(&Machine::linux().torch("2.5.1+cpu"), "8.9"), GpuFit::CpuOnly);
    assert_eq!(fit(&Machine::linux().framework("tensorflow-cpu", "2.16.1", None), "8.9"), GpuFit::CpuOnly);
    let rocm = Machine::linux().framework("torch", "2.5.1+rocm6.2", Some(FrameworkBuild::Rocm { version: None }));
    assert_eq!(fit(&rocm, "8.9"), GpuFit::Rocm);
    let jax13 = Machine::linux().framework("jax-cuda13-plugin", "0.7.2", None);
    assert_eq!(fit(&jax13, "7.0"), GpuFit::NotInBuild);
    assert_eq!(fit(&jax13, "8.9"), GpuFit::AboveMinimum(cc("7.5")));
    let cupy =
        Machine::linux().framework("cupy-cuda12x", "13.3.0", Some(FrameworkBuild::Cuda { version: Some("12".into()) }));
    assert_eq!(fit(&cupy, "8.9"), GpuFit::Unknown);
}

#[test]
fn the_fit_agrees_with_the_rules() {
    for (list, gpu, id) in [
        (&["sm_80", "sm_90"][..], "12.0", Some("arch.not_in_build")),
        (&["sm_80", "compute_80"][..], "9.0", Some("arch.ptx_jit_only")),
        (&["sm_80", "sm_86"][..], "8.9", None),
    ] {
        let m = deep_list(list).gpu("GPU", gpu).driver("580.65", "13.0");
        let arch_ids: Vec<String> = m.ids().into_iter().filter(|i| i.starts_with("arch.")).collect();
        let expected = match fit(&m, gpu) {
            GpuFit::NotInBuild => Some("arch.not_in_build"),
            GpuFit::PtxOnly(_) => Some("arch.ptx_jit_only"),
            _ => None,
        };
        assert_eq!(expected, id, "{list:?} on {gpu}");
        assert_eq!(arch_ids, id.map(|i| vec![i.to_owned()]).unwrap_or_default(), "{list:?} on {gpu}");
    }
    let m = Machine::linux().gpu("NVIDIA GeForce RTX 4090", "").gpu("Tesla V100", "7.0");
    let views = gpu_views(&m.0, Kb::get().unwrap());
    assert_eq!(views.len(), 2);
    assert!(views[0].cc_by_name && views[0].cc == Some(cc("8.9")), "{views:?}");
    assert!(!views[1].cc_by_name && views[1].cc == Some(cc("7.0")));
}

/// A torch build the knowledge base has no list for (a nightly) whose CUDA is older than the first one that
/// compiles for the GPU, with CUDA's "no kernel image": the GPU is not in the build. Without the error too,
/// where that CUDA knows no architecture of the GPU's major (12.4 and the RTX 5080's 12.x): PyTorch's own check
/// counts machine code of the major only. With a CUDA that knows the GPU, nothing is said.
#[test]
fn a_build_of_a_cuda_older_than_the_gpu_with_no_kernel_image_is_not_in_build() {
    let text = |torch: &str, error: bool| {
        format!(
            "GPU: NVIDIA GeForce RTX 5080\nPyTorch Version: {torch}\n{}",
            if error {
                "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
            } else {
                ""
            }
        )
    };
    let ids = |t: &str| super::pasted_ids(t);
    assert!(ids(&text("2.7.0.dev20250310+cu124", true)).contains(&"arch.not_in_build".to_owned()));
    assert!(ids(&text("2.7.0.dev20250310+cu124", false)).contains(&"arch.not_in_build".to_owned()));
    assert!(!ids(&text("2.8.0.dev20250610+cu128", true)).contains(&"arch.not_in_build".to_owned()));
    assert!(!ids(&text("2.8.0.dev20250610+cu128", false)).contains(&"arch.not_in_build".to_owned()));
}
