//! CPU-only builds of a framework on a machine with an NVIDIA GPU.

use super::context::describe_framework;
use super::{Ctx, Rule, fix};
use gpu_doctor_kb::{TfRelease, families};
use gpu_doctor_model::{Category, Finding, Origin, Probed, Severity};
use gpu_doctor_model::{Change, Framework, FrameworkBuild, InstallFlag, OsFamily, PythonEnv, ToolkitKind};

pub(super) const CPU_ONLY: Rule = Rule {
    id: "framework.cpu_only_build",
    category: Category::CpuOnlyBuild,
    severity: Severity::Error,
    trigger: "A CPU-only build of PyTorch, TensorFlow or JAX (`+cpu`, `tensorflow-cpu`, jax without a CUDA plugin) is \
              installed on a machine with an NVIDIA GPU; or, in pasted text without a GPU list, a CPU build of torch \
              whose `torch.cuda.is_available()` answered False, or beside CUDA packages in its environment (conda's \
              cudatoolkit, cuda-nvcc or cuda-cudart, pip's nvidia-* wheels, an xFormers built for CUDA, a companion \
              that runs only on CUDA: vLLM, FlashInfer, flash-attn), or under a module that could not load torch's \
              own CUDA library (`libtorch_cuda.so: cannot open shared object file`); a CPU build of torch or JAX (a \
              conda-forge `cpu_…` jaxlib) where the text asks for CUDA: an install command naming a CUDA package or \
              PyTorch's CUDA download pages (`--index-url …/whl/cu121`, `-f …/whl/torch_stable.html`, a `+cu` pin), \
              or JAX's issue form with the accelerator answered GPU. ONNX Runtime whose available execution providers are \
              the CPU package's (`onnxruntime`: CPU and Azure, no `CUDAExecutionProvider`), printed or named by its \
              warning about a requested provider, or said in words (`only CPUExecutionProvider is available`, `it \
              defaults to the CPU execution provider`, no line of its CUDA provider failing to load), or the `onnxruntime` package installed beside `onnxruntime-gpu` \
              (listed, or the writer's sentence saying they installed both; both install the one `onnxruntime` \
              module), with an NVIDIA GPU or no GPU list (on this machine, where the deep probe lists the providers \
              of whatever it imports, `onnxruntime` alone is left alone). A library's own words that its build has no CUDA code (Detectron2's ops, a PyTorch extension's op \
              guard: MMCV's `nms is not compiled with GPU support`, PyTorch Geometric's `Not compiled with CUDA \
              support`; MMCV's collect_env `MMCV CUDA Compiler: not available`; OpenCV's `-216: No CUDA support`). \
              JAX's `No GPU/TPU found, falling back to CPU` with no other JAX line while torch in the same text \
              answers `torch.cuda.is_available()` True (a CPU jaxlib), or with no other known message at all, no \
              CUDA jaxlib shown and an NVIDIA GPU or no GPU list (a CPU jaxlib, likely: a CUDA jaxlib prints why its \
              GPU backend failed). \
              PaddlePaddle's CPU \
              package `paddlepaddle` on a machine with an NVIDIA GPU (or, without a GPU list, an NVIDIA driver the \
              text shows, or `paddlepaddle-gpu` beside it in one environment, listed or said installed in the writer's sentence: \
              both install the one `paddle` module), or its \
              CPU build's own message that a GPU was asked of it. The text saying in words that the torch installed is \
              a CPU-only build (`installs cpu version instead of cuda`, `Torch without CUDA`, `torch was not compiled \
              with CUDA support`, a version with the CPU index's tag standing alone: `\"2.0.0+cpu Autocast half\"`), \
              where no program's \
              output shows torch's build. torch answering `is_available()` False, its build, a GPU list and a driver \
              not shown, beside a conda command installing from conda-forge without asking for CUDA (conda-forge's \
              CPU pytorch, likely: the fix checks `conda list pytorch` first). ollama whose runner list (`Dynamic LLM libraries`) holds only CPU runners, with an NVIDIA \
              GPU or no GPU list.",
    source: "PyTorch install matrix (https://pytorch.org/get-started/locally/); TensorFlow pip guide; JAX installation \
             docs; the libraries' rows in assets/compat/errors.toml (their sources: open-mmlab/mmcv, \
             rusty1s/pytorch_scatter, opencv/opencv, facebookresearch/detectron2 at tags); microsoft/onnxruntime:onnxruntime/python/onnxruntime_inference_collection.py@v1.20.1#L115-L117 and \
             get_available_providers() of the onnxruntime 1.20.1 wheel (PyPI); \
             PaddlePaddle/Paddle:paddle/fluid/pybind/place.cc@6201f6370bbdb0e53bc0662d328e4db11e587e59 (CUDAPlace in \
             the CPU build), PaddlePaddle/Paddle#47344 (both packages share the `paddle` folder); ollama/ollama:runners/common.go@0cf9c373 (Refresh: the runner list it logs); the words from \
             SupreethN/HOISTFormer#3, pytorch/pytorch#32369, octimot/StoryToolkitAI#170, \
             kyutai-labs/delayed-streams-modeling#131 and zyddnys/manga-image-translator#210",
};

pub(super) const TF_WINDOWS: Rule = Rule {
    id: "framework.tensorflow_windows_native_no_gpu",
    category: Category::CpuOnlyBuild,
    severity: Severity::Error,
    trigger: "TensorFlow newer than the last release with a native-Windows GPU build (`windows_native_gpu` in \
              tensorflow.toml) on native Windows, where it has no GPU support. Also pasted text that names native \
              Windows by its release (`I have Windows 11`, no WSL, Linux or container named) and asks for TensorFlow \
              on the GPU without its version: pip installs a newer release there.",
    source: "tensorflow/docs site/en/install/pip.md (\"TensorFlow 2.10 was the last TensorFlow release that supported \
             GPU on native-Windows\")",
};

pub(super) const RULES: &[Rule] = &[CPU_ONLY, TF_WINDOWS];

/// The loader failing to open PyTorch's own CUDA library for a module built against torch's CUDA build
/// (`assets/compat/errors.toml`).
const TORCH_CUDA_LIBRARY_MISSING: &str = "ld.torch_cuda_library_missing";

/// Companions whose PyPI releases are built for CUDA only (vLLM's CPU and ROCm builds are made from source, with
/// a `+cpu` or `+rocm` local version), so one installed beside a CPU torch shows CUDA was wanted: vLLM's and
/// FlashInfer's installation guides, Dao-AILab/flash-attention's README (CUDA or ROCm builds from source only).
const CUDA_ONLY_COMPANIONS: [&str; 4] = ["vllm", "flashinfer-python", "flash-attn", "flash_attn"];

/// xFormers' warning that it was built for a torch with CUDA (`PyTorch 2.1.2+cu121 with CUDA 1201 (you have
/// 2.1.2+cpu)`): an extension of a CUDA build installed beside the torch, in words.
fn cuda_companion(cx: &Ctx<'_>) -> Option<String> {
    let m = cx.s.messages.iter().find(|m| {
        m.id == "xformers.built_for_other_torch" && m.values.get("built_cuda").is_some_and(|c| c != "None")
    })?;
    let built = |k: &str| m.values.get(k).map_or("?", String::as_str);
    Some(format!("an xFormers built for PyTorch {} with CUDA {}", built("built_torch"), built("built_cuda")))
}

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    library_without_cuda(cx, out);
    jax_on_cpu_beside_torch_on_gpu(cx, out);
    cpu_torch_in_words(cx, out);
    cpu_build_from_conda_forge(cx, out);
    tensorflow_windows_in_words(cx, out);
    onnxruntime(cx, out);
    paddle(cx, out);
    ollama(cx, out);
    if !cx.has_nvidia_gpu() && matches!(cx.s.gpus, Probed::Unknown { .. }) {
        // Pasted text without a GPU list: a CPU build whose `torch.cuda.is_available()` was asked
        // and answered False is why it was False, whatever GPU the machine has; so is a CPU build
        // beside CUDA packages in its environment (conda's cudatoolkit, the pip nvidia-* wheels),
        // which only a wish for CUDA puts there: conda's solver gave the CPU pytorch in their place
        // (meta-pytorch/data#315's environment.yml with cudatoolkit=11.3 and pytorch py3.8_cpu_0).
        let conda_cuda = cx.s.toolkits.value().and_then(|t| t.installs.iter().find(|i| i.kind == ToolkitKind::Conda));
        for env in cx.envs() {
            let asked = env.deep_torch().and_then(|t| t.cuda_available) == Some(false);
            let wanted = if asked {
                "torch.cuda.is_available() returned False, so a GPU was wanted (the GPU list was not pasted)".to_owned()
            } else if let Some(wheel) = env.cuda_wheels.first() {
                format!(
                    "{} {} is installed beside it, so CUDA was wanted (the GPU list was not pasted)",
                    wheel.name, wheel.version
                )
            } else if let Some(conda) = conda_cuda {
                let version = conda.version.map_or_else(String::new, |v| format!(" {v}"));
                format!(
                    "conda's CUDA toolkit{version} is in the environment, so CUDA was wanted (the GPU list was not pasted)"
                )
            } else if let Some(built) = cuda_companion(cx) {
                format!(
                    "{built} is installed beside it (its warning), so CUDA was wanted (the GPU list was not pasted)"
                )
            } else if cx.s.messages.iter().any(|m| m.id == TORCH_CUDA_LIBRARY_MISSING) {
                "a module built for torch's CUDA build could not load torch's CUDA library (the loader's line), so \
                 CUDA was wanted (the GPU list was not pasted)"
                    .to_owned()
            } else if let Some(c) = env.companions.iter().find(|c| {
                CUDA_ONLY_COMPANIONS.contains(&c.name.as_str())
                    && !c.version.contains("+cpu")
                    && !c.version.contains("+rocm")
            }) {
                format!(
                    "{} {} is installed beside it, which runs only on CUDA (the GPU list was not pasted)",
                    c.name, c.version
                )
            } else if let Some(line) = cx.s.stated_cuda_wanted.as_deref() {
                format!("the text asks for CUDA: {line} (the GPU list was not pasted)")
            } else {
                continue;
            };
            for fw in env.frameworks.iter().filter(|f| f.build == FrameworkBuild::Cpu) {
                let evidence = vec![describe_framework(env, fw), wanted.clone()];
                match fw.name.as_str() {
                    "torch" => out.push(torch_cpu_only(cx, env, fw, evidence)),
                    "jax" => out.push(jax_cpu_only(cx, env, fw, evidence)),
                    _ => {}
                }
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
                "torch" if fw.build == FrameworkBuild::Cpu => out.push(torch_cpu_only(cx, env, fw, evidence)),
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
                "jax" if fw.build == FrameworkBuild::Cpu => out.push(jax_cpu_only(cx, env, fw, evidence)),
                _ => {}
            }
        }
    }
}

/// A library's own words that its build has no CUDA code (the catalogue's rows, most specific first: Detectron2's ops,
/// a PyTorch extension's op guard, MMCV's collect_env line, OpenCV's GpuNotSupported): compiled where its build saw no
/// CUDA, whatever the machine has. The fix is the row's, naming the library's CUDA build.
const LIBRARY_WITHOUT_CUDA: [&str; 5] = [
    "detectron2.not_compiled_with_gpu",
    "mmcv.cuda_compiler_not_available",
    "torch_extension.op_not_compiled_with_gpu",
    "torch_extension.not_compiled_with_cuda",
    "opencv.compiled_without_cuda",
];

fn library_without_cuda(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(known) = LIBRARY_WITHOUT_CUDA
        .iter()
        .filter(|id| cx.s.messages.iter().any(|m| m.id == **id))
        .find_map(|id| cx.kb.errors.message.iter().find(|k| k.id == *id))
    else {
        return;
    };
    let observed: Vec<&gpu_doctor_model::ObservedMessage> = cx.s.messages.iter().filter(|m| m.id == known.id).collect();
    let summary = match (known.id.split('.').next(), observed.iter().find_map(|m| m.values.get("op"))) {
        (Some("detectron2"), _) => "Detectron2 was built without its CUDA ops".to_owned(),
        (Some("mmcv"), _) => "MMCV was built without its CUDA ops".to_owned(),
        (Some("opencv"), _) => "This OpenCV was built without CUDA".to_owned(),
        (_, Some(op)) => format!("A PyTorch extension's {op} op was built without CUDA"),
        _ => "A PyTorch extension was built without CUDA".to_owned(),
    };
    let meaning = observed
        .first()
        .map_or_else(|| known.meaning.clone(), |m| super::messages::with_values(&known.meaning, m, &known.pattern));
    let (fix, _) = super::message_fix::family_fix(cx, known, &observed);
    // The lines themselves join as the messages this finding explains.
    out.push(CPU_ONLY.finding(summary, meaning, Vec::new(), fix));
}

/// JAX falling back to the CPU (`No GPU/TPU found, falling back to CPU`, xla_bridge.py up to 0.4.16) with no line of
/// why its GPU backend failed (no other JAX message), while torch in the same text answers
/// `torch.cuda.is_available()` True: the driver and the GPU work, so the jaxlib installed is its CPU build, which `pip
/// install jax` alone gives (jax-ml/jax#5231, closed by the CUDA install instructions).
fn jax_on_cpu_beside_torch_on_gpu(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(m) = cx.s.messages.iter().find(|m| m.id == "jax.no_gpu_fallback") else { return };
    let other_jax = cx.s.messages.iter().any(|o| o.id.starts_with("jax.") && o.id != m.id);
    let torch_gpu = cx.envs().iter().any(|e| e.deep_torch().is_some_and(|t| t.cuda_available == Some(true)));
    // Without torch's answer: the line alone among the known messages, where the GPUs are not listed or an NVIDIA GPU
    // is, no torch in the text fails to see it and no CUDA jaxlib is shown. JAX 0.3 to 0.4.16 logs a failing GPU
    // backend at INFO, hidden by default (jax/_src/xla_bridge.py@jax-v0.4.16#L510-L513), but a CUDA jaxlib's XLA logs
    // the driver's or the loader's failure (cuInit, libcuda) at warning or error, which are shown; with no such line,
    // the jaxlib has no CUDA (jax-ml/jax#5231: `pip install jaxlib`).
    let torch_no_gpu = cx.envs().iter().any(|e| e.deep_torch().is_some_and(|t| t.cuda_available == Some(false)));
    let known = cx.kb.errors.message.iter().find(|k| k.id == m.id);
    let cuda_jaxlib = cx.envs().iter().any(|e| {
        e.frameworks.iter().any(|f| f.name.starts_with("jax") && matches!(f.build, FrameworkBuild::Cuda { .. }))
    });
    let alone = cx.s.messages.iter().all(|o| o.id == m.id)
        && cx.gpu_or_no_list()
        && !torch_no_gpu
        && !cuda_jaxlib
        && known.is_some_and(|k| super::messages::printed_here(cx, k));
    if other_jax || !(torch_gpu || alone) || out.iter().any(|f| f.id == CPU_ONLY.id) {
        return;
    }
    let fix = known.and_then(|k| super::message_fix::family_fix(cx, k, &[m]).0);
    let (title, why, seen) = if torch_gpu {
        (
            "JAX's jaxlib is its CPU build: torch on the same machine sees the GPU",
            "JAX found no GPU backend and fell back to the CPU, and no line says its GPU backend failed, while \
             torch.cuda.is_available() is True here: the driver and the GPU work, so the jaxlib installed has no CUDA \
             (`pip install jax` alone installs that build).",
            "torch.cuda.is_available() returned True",
        )
    } else {
        (
            "JAX's jaxlib is likely its CPU build: it found no GPU and no line says why",
            "JAX found no GPU backend and fell back to the CPU, and no other line of the text says a GPU backend \
             failed. A CUDA jaxlib whose GPU cannot start prints the driver's or the loader's error (cuInit, \
             libcuda) before this warning; without one, the jaxlib installed is most likely the CPU build that \
             `pip install jax` alone installs.",
            "no line of the text says why a GPU backend failed (no other known message)",
        )
    };
    out.push(CPU_ONLY.finding(title, why, vec![format!("pasted line: {}", m.line), seen.to_owned()], fix));
}

/// The text saying in words that the torch installed is a CPU-only build ("This command installs cpu version instead
/// of cuda"), where no program's output shows which build torch is (a torch of unknown build is the one it speaks
/// of): the build the machine wants in its place.
fn cpu_torch_in_words(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(line) = cx.s.stated_cpu_torch.as_deref() else { return };
    let torch =
        cx.envs().iter().flat_map(|e| e.frameworks.iter().map(move |f| (e, f))).find(|(_, f)| f.name == "torch");
    if torch.is_some_and(|(_, f)| f.build != FrameworkBuild::Unknown) {
        return;
    }
    let mut evidence = vec![format!("the text says the torch installed is a CPU-only build: \"{line}\"")];
    if let Some((env, fw)) = torch {
        evidence.insert(0, describe_framework(env, fw));
    }
    let version = torch.map_or_else(String::new, |(_, f)| format!(" {}", f.version));
    out.push(CPU_ONLY.finding(
        format!("torch{version} is a CPU-only build, as the text says"),
        "A CPU-only torch cannot use the GPU: torch.cuda.is_available() is False. Plain `pip install torch` gives \
         this build on Windows, and conda's solver gives it where the CUDA build asked for cannot be installed.",
        evidence,
        Some(super::arch::cuda_torch_for(cx).unwrap_or_else(|| {
            "Install a CUDA build of torch from the index https://pytorch.org/get-started/locally/ names for it \
             (`pip install torch --index-url https://download.pytorch.org/whl/cuXYZ`, cuXYZ the CUDA build)."
                .to_owned()
        })),
    ));
}

/// torch answering `is_available()` False where the text shows neither its build nor a GPU list nor a driver, beside a
/// conda command that installed from conda-forge without asking for CUDA: conda-forge's CPU pytorch is the likely
/// build (its solver picks it unless a CUDA build is asked for, and installing another package can swap it in).
fn cpu_build_from_conda_forge(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(command) = cx.s.stated_conda_forge_install.as_deref() else { return };
    if cx.has_nvidia_gpu() || cx.driver.version.is_some() || out.iter().any(|f| f.id == CPU_ONLY.id) {
        return;
    }
    let asked = cx.envs().iter().any(|e| {
        let build_shown = e.framework("torch").is_some_and(|f| f.build != FrameworkBuild::Unknown);
        let torch = e.deep_torch();
        !build_shown && torch.is_some_and(|t| t.cuda_available == Some(false) && t.cuda.is_none())
    });
    if !asked {
        return;
    }
    out.push(CPU_ONLY.finding(
        "torch is likely conda-forge's CPU build: CUDA is not available after a conda-forge install",
        "torch.cuda.is_available() answered False, and the text shows conda installing from conda-forge without asking \
         for a CUDA build. conda-forge's pytorch comes as a CPU build and a CUDA build; its solver takes the CPU one \
         unless the CUDA build is asked for (or it sees the driver), and installing another package from conda-forge \
         can swap a CUDA pytorch for the CPU one. The text does not show which build is installed.",
        vec![
            format!("pasted: {command}"),
            "torch.cuda.is_available() returned False; the text shows neither torch's build, nor a GPU list, nor a \
             driver"
                .to_owned(),
        ],
        Some(
            "Check the build: `conda list pytorch` (a build string starting `cpu_` is the CPU build; `cuda…` the CUDA \
             one). Then ask conda-forge for the CUDA build: `conda install -c conda-forge pytorch-gpu` (or \
             `\"pytorch=*=cuda*\"`), or install torch with pip from the CUDA index \
             (`pip install torch --index-url https://download.pytorch.org/whl/cu126`) and the other package with pip, \
             so conda does not swap it again."
                .to_owned(),
        ),
    ));
}

fn jax_cpu_only(cx: &Ctx<'_>, env: &PythonEnv, fw: &Framework, evidence: Vec<String>) -> Finding {
    CPU_ONLY
        .finding(
            format!("jax {} in {} has no CUDA plugin", fw.version, env.name),
            format!(
                "Without {}, JAX runs on the CPU (\"An NVIDIA GPU may be present on this machine, but a CUDA-enabled \
                 jaxlib is not installed. Falling back to cpu.\").",
                jax_plugins(cx)
            ),
            evidence,
            jax_fix(cx, env),
        )
        .with_plan(fix::framework_build(env, fw))
}

/// JAX's CUDA build, the way the environment got jax: from conda, conda-forge's CUDA jaxlib, which its solver
/// may pass over for the CPU build unless the build is asked for by name (JAX's own install page:
/// jax-ml/jax:docs/installation.md@jax-v0.4.30#L242, `conda install jaxlib=*=*cuda* jax cuda-nvcc -c conda-forge
/// -c nvidia`); else pip's `jax[cudaNN]`.
fn jax_fix(cx: &Ctx<'_>, env: &PythonEnv) -> Option<String> {
    let pip = jax_extra(cx).map(|extra| format!("jax[{extra}] (jax with the CUDA plugin and the CUDA wheels it pins)"));
    let conda = env.frameworks.iter().any(|f| f.name.starts_with("jax") && f.source.contains("conda"));
    if conda {
        let or_pip = pip.map_or_else(String::new, |p| format!(" Or, with pip, install {p}."));
        return Some(format!(
            "conda picked the CPU build of jaxlib: ask for the CUDA build by name, `conda install 'jaxlib=*=*cuda*' jax \
             cuda-nvcc -c conda-forge -c nvidia`.{or_pip}"
        ));
    }
    pip.map(|p| format!("Install {p}."))
}

fn torch_cpu_only(cx: &Ctx<'_>, env: &PythonEnv, fw: &Framework, evidence: Vec<String>) -> Finding {
    CPU_ONLY
        .finding(
            format!("torch {} in {} is a CPU-only build", fw.version, env.name),
            "It cannot use the GPU: torch.cuda.is_available() is False and .cuda() raises \"Torch not compiled with \
             CUDA enabled\". Plain `pip install torch` gives this build on Windows and macOS.",
            evidence,
            Some(super::arch::cuda_torch_for(cx).unwrap_or_else(|| {
                "Install a CUDA build of torch that covers this GPU and runs on this driver, from the index \
                 https://pytorch.org/get-started/locally/ names for it."
                    .to_owned()
            })),
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

/// The newest release with a native-Windows GPU build (tensorflow.toml `windows_native_gpu`), with its line.
fn last_windows_gpu_release<'k>(cx: &Ctx<'k>) -> Option<((u32, u32), &'k TfRelease)> {
    cx.kb
        .tensorflow
        .release
        .iter()
        .filter(|r| r.windows_native_gpu)
        .filter_map(|r| Some((line_number(&r.version)?, r)))
        .max_by_key(|(n, _)| *n)
}

/// The native-Windows finding: `summary`, what the last release with a GPU build was, and the way out.
fn windows_finding(summary: String, last: &TfRelease, evidence: Vec<String>) -> Finding {
    TF_WINDOWS.finding(
        summary,
        format!(
            "TensorFlow {} was the last release with GPU support on native Windows; every newer release, which pip \
             installs there by default, runs on the CPU whatever CUDA and cuDNN are installed (TensorFlow {} wants CUDA \
             {} and cuDNN {}).",
            last.version, last.version, last.cuda, last.cudnn
        ),
        evidence,
        Some(format!(
            "Run TensorFlow in WSL2 (wsl --install, then inside Ubuntu: pip install \"tensorflow[and-cuda]\"), or \
             install tensorflow=={}.* with CUDA {} and cuDNN {} on Windows.",
            last.version, last.cuda, last.cudnn
        )),
    )
}

fn tensorflow_windows(cx: &Ctx<'_>, env: &PythonEnv, fw: &Framework, evidence: Vec<String>, out: &mut Vec<Finding>) {
    let Some((line, last)) = last_windows_gpu_release(cx) else { return };
    let newer =
        gpu_doctor_kb::PyVersion::new(&fw.version).line().and_then(|l| line_number(&l)).is_some_and(|v| v > line);
    if !newer && fw.name == "tensorflow" {
        return;
    }
    let summary = format!("{} {} in {} on native Windows cannot use the GPU", fw.name, fw.version, env.name);
    out.push(windows_finding(summary, last, evidence));
}

/// Pasted text from native Windows that asks for TensorFlow on the GPU without its version: every TensorFlow pip
/// installs there now is newer than the last release with a native-Windows GPU build, so the answer is the same as
/// for a version shown (tensorflow/tensorflow#60206).
fn tensorflow_windows_in_words(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(said) = cx.s.stated_tensorflow_gpu.as_deref() else { return };
    let tf_shown = cx.envs().iter().any(|e| e.frameworks.iter().any(|f| families::is_tensorflow(&f.name)));
    // A program that lists a GPU (TensorFlow's own device lines) shows it working.
    let working = cx.gpus_listed_by_a_program();
    if cx.s.origin.is_this_machine() || cx.os != OsFamily::Windows || cx.s.platform.wsl.is_some() || tf_shown || working
    {
        return;
    }
    let Some((_, last)) = last_windows_gpu_release(cx) else { return };
    let summary = format!("TensorFlow on native Windows cannot use the GPU after {}", last.version);
    let evidence = vec![format!("the text: {said}"), "native Windows (named in the text, no WSL or Linux)".to_owned()];
    out.push(windows_finding(summary, last, evidence));
}

/// The JAX install extra (jax.toml `extra`) for this driver: the plugin of the highest CUDA major the
/// driver supports, else the lowest plugin (also when the driver's CUDA level is unknown).
fn jax_extra<'k>(cx: &Ctx<'k>) -> Option<&'k str> {
    let plugins = &cx.kb.jax.plugin;
    let fits =
        cx.driver_cuda().and_then(|c| plugins.iter().filter(|p| p.cuda_major <= c.major).max_by_key(|p| p.cuda_major));
    fits.or_else(|| plugins.iter().min_by_key(|p| p.cuda_major)).map(|p| p.extra.as_str())
}

/// The CUDA plugin packages jax.toml knows, for prose: `jax-cuda12-plugin or jax-cuda13-plugin`.
fn jax_plugins(cx: &Ctx<'_>) -> String {
    let mut names: Vec<&str> = cx.kb.jax.plugin.iter().map(|p| p.package.as_str()).collect();
    names.sort_unstable();
    names.join(" or ")
}

/// ONNX Runtime without its CUDA provider where a GPU is there or was wanted: the providers it
/// lists are the CPU package's (printed by `get_available_providers()` or named in its warning
/// about a requested provider; the deep probe reads the same list), or the CPU package
/// `onnxruntime` sits beside `onnxruntime-gpu`. Both packages install the one `onnxruntime`
/// module, so whichever was installed last wins; `onnxruntime` alone on a GPU machine, with no sign
/// that CUDA was asked of it, is often a dependency that needs no GPU and is left alone. On this
/// machine the deep probe lists the providers of every ONNX Runtime it imports, which is no such
/// sign (a lent H200's image holds PyPI's `onnxruntime` beside a CUDA torch); in pasted text, a
/// printed list or the warning is: someone asked.
fn onnxruntime(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    if !cx.gpu_or_no_list() {
        return;
    }
    let probed_here = matches!(cx.s.origin, Origin::ThisMachine);
    for env in cx.envs() {
        let deep = env.deep.as_ref().and_then(|d| d.value()).and_then(|d| d.onnxruntime.as_ref());
        let providers = deep.and_then(|o| o.providers.as_deref());
        let build = providers.and_then(families::onnxruntime_build);
        let cpu = env.framework("onnxruntime");
        let gpu_pkg = env.framework("onnxruntime-gpu");
        let listed_cpu = build == Some(FrameworkBuild::Cpu) && !(probed_here && gpu_pkg.is_none());
        let shadowed = build.is_none() && cpu.is_some() && gpu_pkg.is_some();
        if !listed_cpu && !shadowed {
            continue;
        }
        let mut evidence: Vec<String> = cpu.into_iter().chain(gpu_pkg).map(|f| describe_framework(env, f)).collect();
        if let Some(list) = providers {
            evidence.push(format!("onnxruntime's available execution providers: {}", list.join(", ")));
        }
        if let Some(g) = cx.gpus.first() {
            evidence.push(g.describe());
        }
        let version = deep.and_then(|o| o.version.as_deref()).or(cpu.map(|f| f.version.as_str()));
        let title = match (version, gpu_pkg) {
            (_, Some(g)) => format!(
                "onnxruntime (the CPU-only package) in {} shadows onnxruntime-gpu {}: it has no CUDAExecutionProvider",
                env.name, g.version
            ),
            (Some(v), None) => {
                format!("onnxruntime {v} in {} is the CPU-only package: it has no CUDAExecutionProvider", env.name)
            }
            (None, None) => {
                format!("ONNX Runtime in {} is the CPU-only package: it has no CUDAExecutionProvider", env.name)
            }
        };
        let remove: Vec<String> = ["onnxruntime", "onnxruntime-gpu"]
            .into_iter()
            .filter(|n| n == &"onnxruntime" || gpu_pkg.is_some())
            .map(str::to_owned)
            .collect();
        let plan = fix::change(
            Some(env),
            "onnxruntime-gpu alone provides the onnxruntime module, with its CUDAExecutionProvider",
            vec![Change::Uninstall { packages: remove }, fix::install(&[InstallFlag::Reinstall], ["onnxruntime-gpu"])],
        );
        out.push(
            CPU_ONLY
                .finding(
                    title,
                    "The `onnxruntime` package on PyPI is built for the CPU only (its providers are CPUExecutionProvider \
                     and AzureExecutionProvider); the CUDA build is the `onnxruntime-gpu` package. Both install the same \
                     `onnxruntime` module, so with both installed the one installed last is imported. A session that \
                     asks for CUDAExecutionProvider gets a warning and runs on the CPU.",
                    evidence,
                    None,
                )
                .with_plan(plan),
        );
    }
}

/// PaddlePaddle's CPU package (`paddlepaddle`) on a machine with an NVIDIA GPU, or beside its GPU
/// package `paddlepaddle-gpu` in one environment with no GPU list (installing the GPU package says a
/// GPU was wanted; both install the one `paddle` module, so the one installed last is imported:
/// uninstalling either removes that shared folder, PaddlePaddle/Paddle#47344),
/// or its CPU build's own message that CUDAPlace was asked of it (`paddle.cpu_version_installed`),
/// GPU list or not.
fn paddle(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let said = cx.s.messages.iter().find(|m| m.id == "paddle.cpu_version_installed");
    let no_list = matches!(cx.s.gpus, Probed::Unknown { .. });
    // An NVIDIA driver the text shows (PaddlePaddle's summary_env prints it) is on a machine with an
    // NVIDIA GPU.
    let driver_shown = no_list && cx.driver.version.is_some();
    let gpu_shown = cx.has_nvidia_gpu() || driver_shown;
    if !(gpu_shown || no_list) {
        return;
    }
    let mut named = false;
    for env in cx.envs() {
        let gpu_pkg = env.framework("paddlepaddle-gpu");
        if !(gpu_shown || gpu_pkg.is_some()) {
            continue;
        }
        for fw in env.frameworks.iter().filter(|f| f.name == "paddlepaddle" && f.build == FrameworkBuild::Cpu) {
            named = true;
            let mut evidence = vec![describe_framework(env, fw)];
            evidence.extend(gpu_pkg.map(|g| describe_framework(env, g)));
            evidence.extend(cx.gpus.first().map(|g| g.describe()));
            let what = match gpu_pkg {
                Some(g) => format!(
                    "paddlepaddle {} in {}, installed beside paddlepaddle-gpu {},",
                    fw.version, env.name, g.version
                ),
                None => format!("paddlepaddle {} in {}", fw.version, env.name),
            };
            out.push(paddle_finding(Some(env), &what, evidence, gpu_pkg.is_some()));
        }
    }
    if said.is_some() && !named {
        // The message's line is cited by the category's own evidence.
        out.push(paddle_finding(cx.envs().first(), "The installed PaddlePaddle", Vec::new(), false));
    }
}

/// The finding with its fix: a change of the environment's packages where the paste gave one,
/// else the words (a planner changes packages only in a known environment). With both packages
/// installed (`both`), both are removed and the GPU one installed again, since the CPU package
/// overwrote the files they share.
fn paddle_finding(env: Option<&PythonEnv>, what: &str, evidence: Vec<String>, both: bool) -> Finding {
    let words = "Replace the CPU build with the CUDA one: pip uninstall paddlepaddle, then pip install paddlepaddle-gpu \
                 (PaddlePaddle's own advice in that message).";
    let finding = CPU_ONLY.finding(
        format!("{what} is the CPU-only build"),
        "The `paddlepaddle` package is PaddlePaddle's CPU build; its CUDA build is `paddlepaddle-gpu`. Asked for a GPU \
         (CUDAPlace), the CPU build prints \"Cannot use GPU because you have installed CPU version PaddlePaddle\" and \
         exits.",
        evidence,
        env.is_none().then(|| words.to_owned()),
    );
    match env {
        Some(env) => finding.with_plan(fix::change(
            Some(env),
            "paddlepaddle-gpu, PaddlePaddle's CUDA build, in place of the CPU build",
            if both {
                vec![
                    Change::Uninstall { packages: vec!["paddlepaddle".to_owned(), "paddlepaddle-gpu".to_owned()] },
                    fix::install(&[InstallFlag::Reinstall], ["paddlepaddle-gpu"]),
                ]
            } else {
                vec![
                    Change::Uninstall { packages: vec!["paddlepaddle".to_owned()] },
                    fix::install(&[], ["paddlepaddle-gpu"]),
                ]
            },
        )),
        None => finding,
    }
}

/// ollama built without GPU runners: its `Dynamic LLM libraries` list holds only `cpu` runners
/// (a source build without the CUDA toolkit, or one made for the CPU), with an NVIDIA GPU or no
/// GPU list (ollama logs the list whatever the machine).
fn ollama(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    if !cx.gpu_or_no_list() {
        return;
    }
    for env in cx.envs() {
        for fw in env.frameworks.iter().filter(|f| f.name == "ollama" && f.build == FrameworkBuild::Cpu) {
            let mut evidence = vec![format!("ollama {}: its runner list holds only CPU runners", fw.version)];
            evidence.extend(cx.gpus.first().map(|g| g.describe()));
            out.push(
                CPU_ONLY.finding(
                    format!("ollama {} was built without GPU runners", fw.version),
                    "ollama logs the runners it has at start (\"Dynamic LLM libraries\"); with only `cpu` ones it runs \
                 every model on the CPU. A build from source gets its CUDA runner only where the CUDA toolkit was \
                 found when it was built; the release builds ship it.",
                    evidence,
                    Some(
                        "Install ollama's release build (https://ollama.com/download: on Linux `curl -fsSL \
                     https://ollama.com/install.sh | sh`), or rebuild from source with the CUDA toolkit installed \
                     (nvcc on PATH) so the cuda runner is built."
                            .to_owned(),
                    ),
                ),
            );
        }
    }
}
