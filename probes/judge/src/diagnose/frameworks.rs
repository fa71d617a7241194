//! CPU-only builds of a framework on a machine with an NVIDIA GPU.

use super::context::describe_framework;
use super::{Ctx, Rule, fix};
use gpu_doctor_model::{Category, Finding, Probed, Severity};
use gpu_doctor_model::{Framework, FrameworkBuild, OsFamily, PythonEnv};

pub(super) const CPU_ONLY: Rule = Rule {
    id: "framework.cpu_only_build",
    category: Category::CpuOnlyBuild,
    severity: Severity::Error,
    trigger: "A CPU-only build of PyTorch, TensorFlow or JAX (`+cpu`, `tensorflow-cpu`, jax without a CUDA plugin) is \
              installed on a machine with an NVIDIA GPU; or, in pasted text without a GPU list, a CPU build of torch \
              whose `torch.cuda.is_available()` answered False.",
    source: "PyTorch install matrix (https://pytorch.org/get-started/locally/); TensorFlow pip guide; JAX installation docs",
};

pub(super) const TF_WINDOWS: Rule = Rule {
    id: "framework.tensorflow_windows_native_no_gpu",
    category: Category::CpuOnlyBuild,
    severity: Severity::Error,
    trigger: "TensorFlow newer than the last release with a native-Windows GPU build (`windows_native_gpu` in \
              tensorflow.toml) on native Windows, where it has no GPU support.",
    source: "tensorflow/docs site/en/install/pip.md (\"TensorFlow 2.10 was the last TensorFlow release that supported \
             GPU on native-Windows\")",
};

pub(super) const RULES: &[Rule] = &[CPU_ONLY, TF_WINDOWS];

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    if !cx.has_nvidia_gpu() && matches!(cx.s.gpus, Probed::Unknown { .. }) {
        // Pasted text without a GPU list: a CPU build whose `torch.cuda.is_available()` was asked
        // and answered False is why it was False, whatever GPU the machine has.
        for env in cx.envs() {
            let asked = env.deep_torch();
            if asked.and_then(|t| t.cuda_available) != Some(false) {
                continue;
            }
            for fw in env.frameworks.iter().filter(|f| f.name == "torch" && f.build == FrameworkBuild::Cpu) {
                let wanted = "torch.cuda.is_available() returned False, so a GPU was wanted (the GPU list was not \
                              pasted)";
                out.push(torch_cpu_only(env, fw, vec![describe_framework(env, fw), wanted.to_owned()]));
            }
        }
    }
    if !cx.has_nvidia_gpu() {
        // Pasted text that names no GPU: TensorFlow on native Windows is still a finding, since it
        // holds without any GPU fact (an issue form asking why TensorFlow sees no GPU).
        if cx.s.gpus.value().is_none() && !cx.s.origin.is_this_machine() && cx.os == OsFamily::Windows {
            for env in cx.envs() {
                for fw in env.frameworks.iter().filter(|f| WINDOWS_TF.contains(&f.name.as_str())) {
                    tensorflow_windows(cx, env, fw, vec![describe_framework(env, fw)], out);
                }
            }
        }
        return;
    }
    let gpu = cx.gpus.first().map_or_else(|| "an NVIDIA GPU on the PCI bus".to_owned(), |g| g.describe());
    for env in cx.envs() {
        for fw in &env.frameworks {
            let evidence = vec![describe_framework(env, fw), gpu.clone()];
            match fw.name.as_str() {
                "torch" if fw.build == FrameworkBuild::Cpu => out.push(torch_cpu_only(env, fw, evidence)),
                name if cx.os == OsFamily::Windows && WINDOWS_TF.contains(&name) => {
                    tensorflow_windows(cx, env, fw, evidence, out);
                }
                "tensorflow-cpu" => out.push(CPU_ONLY.finding(
                    format!("{} {} in {} is a CPU-only build", fw.name, fw.version, env.name),
                    "tensorflow-cpu has no GPU kernels; tf.config.list_physical_devices('GPU') is empty.",
                    evidence,
                    Some(format!(
                        "Remove {} and install tensorflow[and-cuda] (the GPU build with the CUDA and cuDNN wheels it \
                         pins) in its place.",
                        fw.name
                    )),
                )
                .with_plan(fix::framework_build(env, fw))),
                "jax" if fw.build == FrameworkBuild::Cpu => out.push(CPU_ONLY.finding(
                    format!("jax {} in {} has no CUDA plugin", fw.version, env.name),
                    format!(
                        "Without {}, JAX runs on the CPU (\"An NVIDIA GPU may be present on this machine, but a \
                         CUDA-enabled jaxlib is not installed. Falling back to cpu.\").",
                        jax_plugins(cx)
                    ),
                    evidence,
                    jax_extra(cx).map(|extra| {
                        format!("Install jax[{extra}] (jax with the CUDA plugin and the CUDA wheels it pins).")
                    }),
                )
                .with_plan(fix::framework_build(env, fw))),
                _ => {}
            }
        }
    }
}

fn torch_cpu_only(env: &PythonEnv, fw: &Framework, evidence: Vec<String>) -> Finding {
    CPU_ONLY
        .finding(
            format!("torch {} in {} is a CPU-only build", fw.version, env.name),
            "It cannot use the GPU: torch.cuda.is_available() is False and .cuda() raises \"Torch not compiled with \
             CUDA enabled\". Plain `pip install torch` gives this build on Windows and macOS.",
            evidence,
            Some(
                "Install a CUDA build of torch that covers this GPU and runs on this driver, from the index \
                 https://pytorch.org/get-started/locally/ names for it."
                    .to_owned(),
            ),
        )
        .with_plan(fix::framework_build(env, fw))
}

/// A release line as numbers: `2.10` → (2, 10).
fn line_number(line: &str) -> Option<(u32, u32)> {
    let (a, b) = line.split_once('.')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// The TensorFlow distributions the native-Windows rule judges, with a GPU named or not: those
/// whose releases after 2.10 have no native-Windows GPU build (`tensorflow-gpu` ends at 2.10, with
/// one; `tensorflow-macos` does not install on Windows).
const WINDOWS_TF: [&str; 3] = ["tensorflow", "tensorflow-cpu", "tensorflow-intel"];

fn tensorflow_windows(cx: &Ctx<'_>, env: &PythonEnv, fw: &Framework, evidence: Vec<String>, out: &mut Vec<Finding>) {
    // The newest release with a native-Windows GPU build (tensorflow.toml `windows_native_gpu`).
    let Some(last) = cx
        .kb
        .tensorflow
        .release
        .iter()
        .filter(|r| r.windows_native_gpu)
        .filter_map(|r| Some((line_number(&r.version)?, r)))
        .max_by_key(|(n, _)| *n)
    else {
        return;
    };
    let newer =
        gpu_doctor_kb::PyVersion::new(&fw.version).line().and_then(|l| line_number(&l)).is_some_and(|v| v > last.0);
    if !newer && fw.name == "tensorflow" {
        return;
    }
    let last = last.1;
    out.push(TF_WINDOWS.finding(
        format!("{} {} in {} on native Windows cannot use the GPU", fw.name, fw.version, env.name),
        format!(
            "TensorFlow {} was the last release with GPU support on native Windows; newer releases run on the CPU there.",
            last.version
        ),
        evidence,
        Some(format!(
            "Run TensorFlow in WSL2 (wsl --install, then inside Ubuntu: pip install \"tensorflow[and-cuda]\"), or \
             install tensorflow=={}.* with CUDA {} and cuDNN {} on Windows.",
            last.version, last.cuda, last.cudnn
        )),
    ));
}

/// The JAX install extra (jax.toml `extra`) for this driver: the plugin of the highest CUDA major the
/// driver supports, else the lowest plugin (also when the driver's CUDA level is unknown).
fn jax_extra<'k>(cx: &Ctx<'k>) -> Option<&'k str> {
    let plugins = &cx.kb.jax.plugin;
    let fits =
        cx.driver.cuda.and_then(|c| plugins.iter().filter(|p| p.cuda_major <= c.major).max_by_key(|p| p.cuda_major));
    fits.or_else(|| plugins.iter().min_by_key(|p| p.cuda_major)).map(|p| p.extra.as_str())
}

/// The CUDA plugin packages jax.toml knows, for prose: `jax-cuda12-plugin or jax-cuda13-plugin`.
fn jax_plugins(cx: &Ctx<'_>) -> String {
    let mut names: Vec<&str> = cx.kb.jax.plugin.iter().map(|p| p.package.as_str()).collect();
    names.sort_unstable();
    names.join(" or ")
}
