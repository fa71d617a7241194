//! CPU-only builds of a framework on a machine with an NVIDIA GPU.

use super::context::describe_framework;
use super::{Ctx, Rule, fix};
use crate::host::OsFamily;
use crate::probe::python::{Framework, FrameworkBuild, PythonEnv};
use crate::{Category, Finding, Severity};

pub(super) const CPU_ONLY: Rule = Rule {
    id: "framework.cpu_only_build",
    category: Category::CpuOnlyBuild,
    severity: Severity::Error,
    trigger: "A CPU-only build of PyTorch, TensorFlow or JAX (`+cpu`, `tensorflow-cpu`, jax without a CUDA plugin) is \
              installed on a machine with an NVIDIA GPU.",
    source: "PyTorch install matrix (https://pytorch.org/get-started/locally/); TensorFlow pip guide; JAX installation docs",
};

pub(super) const TF_WINDOWS: Rule = Rule {
    id: "framework.tensorflow_windows_native_no_gpu",
    category: Category::CpuOnlyBuild,
    severity: Severity::Error,
    trigger: "TensorFlow newer than 2.10 on native Windows, where it has no GPU support.",
    source: "tensorflow/docs site/en/install/pip.md (\"TensorFlow 2.10 was the last TensorFlow release that supported \
             GPU on native-Windows\")",
};

pub(super) const RULES: &[Rule] = &[CPU_ONLY, TF_WINDOWS];

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    if !cx.has_nvidia_gpu() {
        return;
    }
    let gpu = cx.gpus.first().map_or_else(|| "an NVIDIA GPU on the PCI bus".to_owned(), |g| g.describe());
    for env in cx.envs() {
        for fw in &env.frameworks {
            let evidence = vec![describe_framework(env, fw), gpu.clone()];
            match fw.name.as_str() {
                "torch" if fw.build == FrameworkBuild::Cpu => out.push(CPU_ONLY.finding(
                    format!("torch {} in {} is a CPU-only build", fw.version, env.name),
                    "It cannot use the GPU: torch.cuda.is_available() is False and .cuda() raises \"Torch not compiled \
                     with CUDA enabled\". Plain `pip install torch` gives this build on Windows and macOS.",
                    evidence,
                    fix::torch_wheel(cx, env, fw),
                )),
                "tensorflow" | "tensorflow-cpu" | "tensorflow-intel" if cx.os == OsFamily::Windows => {
                    tensorflow_windows(env, fw, evidence, out);
                }
                "tensorflow-cpu" => out.push(CPU_ONLY.finding(
                    format!("{} {} in {} is a CPU-only build", fw.name, fw.version, env.name),
                    "tensorflow-cpu has no GPU kernels; tf.config.list_physical_devices('GPU') is empty.",
                    evidence,
                    Some(format!(
                        "{} && {}",
                        fix::pip_uninstall(cx, env, [fw.name.as_str()]),
                        fix::pip_install(cx, env, ["tensorflow[and-cuda]"])
                    )),
                )),
                "jax" if fw.build == FrameworkBuild::Cpu => out.push(CPU_ONLY.finding(
                    format!("jax {} in {} has no CUDA plugin", fw.version, env.name),
                    "Without jax-cuda12-plugin or jax-cuda13-plugin, JAX runs on the CPU (\"An NVIDIA GPU may be \
                     present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.\").",
                    evidence,
                    Some(fix::pip_install(cx, env, ["-U".to_owned(), format!("jax[{}]", jax_extra(cx))])),
                )),
                _ => {}
            }
        }
    }
}

fn tensorflow_windows(env: &PythonEnv, fw: &Framework, evidence: Vec<String>, out: &mut Vec<Finding>) {
    let newer_than_2_10 = crate::compat::release_line(&fw.version)
        .and_then(|l| l.split_once('.').and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?))))
        .is_some_and(|v| v > (2, 10));
    if !newer_than_2_10 && fw.name == "tensorflow" {
        return;
    }
    out.push(TF_WINDOWS.finding(
        format!("{} {} in {} on native Windows cannot use the GPU", fw.name, fw.version, env.name),
        "TensorFlow 2.10 was the last release with GPU support on native Windows; newer releases run on the CPU there.",
        evidence,
        Some(
            "Run TensorFlow in WSL2 (wsl --install, then inside Ubuntu: pip install \"tensorflow[and-cuda]\"), or \
             install tensorflow==2.10.* with CUDA 11.2 and cuDNN 8.1 on Windows."
                .to_owned(),
        ),
    ));
}

/// `cuda13` when the driver supports CUDA 13, else `cuda12`.
fn jax_extra(cx: &Ctx<'_>) -> &'static str {
    if cx.driver.cuda.is_some_and(|c| c.major >= 13) { "cuda13" } else { "cuda12" }
}
