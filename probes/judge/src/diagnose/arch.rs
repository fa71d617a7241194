//! The GPU's compute capability against the architectures a framework was compiled for.

use super::context::{GpuView, build_cuda, describe_framework};
use super::{Ctx, Rule, fix};
use gpu_doctor_kb::{Coverage, JaxPlugin, Kb, TorchVariant, coverage, split_arch_list};
use gpu_doctor_model::{Category, ComputeCapability, CudaVersion, Finding, Severity};
use gpu_doctor_model::{Framework, FrameworkBuild, ObservedMessage, PythonEnv};

/// The sources of the architecture rules, as a literal [`SOURCE_WITH_FLOORS`] can extend.
macro_rules! arch_sources {
    () => {
        "NVIDIA Blackwell/Hopper compatibility guides (cubin and PTX rules); PyTorch's compiled arch lists \
         (pytorch/pytorch .ci/manywheel/build_cuda.sh, RELEASE.md); JAX installation docs"
    };
}

const SOURCE: &str = arch_sources!();

/// [`SOURCE`], and where ollama's floors come from ([`ollama_floor_of`]).
const SOURCE_WITH_FLOORS: &str = concat!(
    arch_sources!(),
    "; ollama/ollama:gpu/gpu.go@v0.1.19 (CudaComputeMajorMin = 6), gpu/gpu.go@v0.1.23 and discover/gpu.go@v0.5.11 \
     (compute capability 5.0), docs/gpu.md@v0.13.0"
);

pub(super) const NOT_IN_BUILD: Rule = Rule {
    id: "arch.not_in_build",
    category: Category::ArchNotInBuild,
    severity: Severity::Error,
    trigger: "A GPU's compute capability has neither machine code (same major, equal or lower minor) nor PTX at or \
              below it in the framework's compiled architecture list (as the installed build or the knowledge base \
              gives it; the list PyTorch's own warning prints is judged by PyTorch's check, machine code of the \
              GPU's major, PTX not counted), or is below the framework's minimum; or, the list unknown, the \
              build's CUDA (its `+cuXYZ`) is older than the first CUDA that compiles for the GPU and the text says a \
              kernel had no code for it (`no kernel image is available`, `invalid device function`), or, for torch, \
              that CUDA is older than the first that compiles for any GPU of the GPU's major (PyTorch's own check \
              wants machine code of the major). Or ollama ran (its log, its source paths, its version) on a GPU \
              below the floor of its released builds (5.0; 6.0 in v0.1.19 to v0.1.22), or the text shows a \
              program's own lowest compute capability (`minimum required compute capability 3.5`, `requires 5.0 \
              capability`) in a line the catalogue does not know, and a GPU below it, or the same line reporting \
              the device it found below it (`compute cap. 2.1 (at least 3.0 required)`), whatever name the board \
              gives. Or CUDA's `no kernel image is available for execution on the device` beside the one GPU model \
              the text names, where it shows no framework and nothing above judged it: by the error's meaning the \
              binary has no code for it.",
    source: SOURCE_WITH_FLOORS,
};

pub(super) const PTX_ONLY: Rule = Rule {
    id: "arch.ptx_jit_only",
    category: Category::ArchNotInBuild,
    severity: Severity::Warning,
    trigger: "A GPU is covered only by PTX in the framework's build: the driver compiles every kernel at first use \
              (slow start), and fails if the PTX is newer than the driver.",
    source: SOURCE,
};

pub(super) const CAPABILITY_WARNING_HARMLESS: Rule = Rule {
    id: "arch.capability_warning_harmless",
    category: Category::ToolkitVsFrameworkMismatchHarmless,
    severity: Severity::Info,
    trigger: "PyTorch's capability warning (`Found GPU0 … which is of cuda capability X.z.` and `Minimum and Maximum \
              cuda capability supported by this version of PyTorch is (…) - (X.y)`) names only GPUs above the \
              build's highest architecture but of its major, with a higher minor: machine code of X.y runs on X.z, \
              so the build runs on them; the warning compares the numbers.",
    source: "pytorch/pytorch:torch/cuda/__init__.py@v2.10.0#L258-L264 (_check_capability: major * 10 + minor against \
             the lowest and highest entry of torch.cuda.get_arch_list()); NVIDIA Blackwell compatibility guide (a \
             cubin runs on later minors of its major); pytorch/pytorch#172629; eugr/spark-vllm-docker#15",
};

pub(super) const RULES: &[Rule] = &[NOT_IN_BUILD, PTX_ONLY, CAPABILITY_WARNING_HARMLESS];

/// A framework's compiled architectures, and where the list came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchList {
    /// Capabilities it carries machine code (SASS) for.
    pub sass: Vec<ComputeCapability>,
    /// Capabilities it carries PTX for.
    pub ptx: Vec<ComputeCapability>,
    /// The list as torch prints it: `sm_80`, `sm_90`, `compute_90`.
    pub names: Vec<String>,
    /// True when the installed build said it (`torch.cuda.get_arch_list()` in the deep tier); false
    /// when it is the knowledge base's list for that wheel.
    pub from_deep: bool,
    /// One sentence saying where the list came from, for evidence.
    pub from: String,
}

/// How a framework build can run on one GPU, by the rules of this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuFit {
    /// Machine code for this GPU: the SASS of this capability (same major, minor at or below).
    Sass(ComputeCapability),
    /// Only PTX of this capability, compiled by the driver at first use (`arch.ptx_jit_only`).
    PtxOnly(ComputeCapability),
    /// Not compiled for this GPU, or below the framework's minimum (`arch.not_in_build`).
    NotInBuild,
    /// At or above the framework's minimum capability, this one (JAX plugins: the knowledge base
    /// has no architecture list for them, only the minimum).
    AboveMinimum(ComputeCapability),
    /// A CPU-only build (`framework.cpu_only_build` when the machine has an NVIDIA GPU).
    CpuOnly,
    /// A ROCm build, for AMD GPUs.
    Rocm,
    /// A CUDA build whose architectures neither the installed files nor the knowledge base tell.
    Unknown,
}

/// How `fw` in `env` can run on a GPU of capability `cc`: the judgement `arch.not_in_build` and
/// `arch.ptx_jit_only` make, for drawing it per GPU.
pub fn gpu_fit(kb: &Kb, env: &PythonEnv, fw: &Framework, cc: ComputeCapability) -> GpuFit {
    match &fw.build {
        FrameworkBuild::Cpu => return GpuFit::CpuOnly,
        FrameworkBuild::Rocm { .. } => return GpuFit::Rocm,
        _ if fw.name == "tensorflow-cpu" => return GpuFit::CpuOnly,
        _ => {}
    }
    if fw.name == "torch" {
        return match torch_arch_list(kb, env, fw).map(|l| coverage(&l.sass, &l.ptx, cc)) {
            Some(Coverage::Sass(c)) => GpuFit::Sass(c),
            Some(Coverage::Ptx(c)) => GpuFit::PtxOnly(c),
            Some(Coverage::None) => GpuFit::NotInBuild,
            None => GpuFit::Unknown,
        };
    }
    match jax_plugin(kb, fw) {
        Some(p) if cc < p.min_cc => GpuFit::NotInBuild,
        Some(p) => GpuFit::AboveMinimum(p.min_cc),
        None => GpuFit::Unknown,
    }
}

/// The knowledge base's row of a JAX CUDA plugin (`jax-cuda12-plugin`); `None` for anything else.
fn jax_plugin<'k>(kb: &'k Kb, fw: &Framework) -> Option<&'k JaxPlugin> {
    if !gpu_doctor_kb::families::is_jax_cuda_plugin(&fw.name) {
        return None;
    }
    kb.jax.plugin.iter().find(|p| p.package == fw.name)
}

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let mut torch_judged = false;
    // Torch builds the knowledge base has no architecture list for, judged by their CUDA.
    let mut unlisted = Vec::new();
    for (env, fw) in cx.frameworks() {
        if fw.name == "torch" {
            if let Some(list) = torch_arch_list(cx.kb, env, fw) {
                torch_judged = true;
                judge_list(cx, env, fw, &list, out);
            } else {
                torch_judged |= judge_by_build_cuda(cx, env, fw, false, out);
                unlisted.push((env, fw));
            }
        } else if let Some(plugin) = jax_plugin(cx.kb, fw) {
            judge_jax(cx, env, fw, plugin, out);
        }
    }
    if !torch_judged {
        let before = out.len();
        judge_printed_list(cx, out);
        // Last, a build's CUDA against the GPU's major, where no list the text printed judged it.
        if out.len() == before {
            for (env, fw) in unlisted {
                judge_by_build_cuda(cx, env, fw, true, out);
            }
        }
    }
    capability_warning(cx, out);
    ollama_floor(cx, out);
    stated_floor(cx, out);
    no_image_for_the_gpu(cx, out);
}

/// CUDA's `no kernel image is available for execution on the device` (cudaErrorNoKernelImageForDevice, 209) where
/// the text names one GPU model, shows no framework and nothing above judged it: by the error's own meaning the program's binary holds
/// neither machine code nor PTX that runs on that GPU, so its architecture is not in the build, whichever program
/// it is (badslam's Windows build on a Quadro M6000, badslam built for 5.3 on a GT 730, ETH3D/badslam#33 and #42).
fn no_image_for_the_gpu(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(line) = cx.s.messages.iter().find(|m| m.id == "cuda.no_kernel_image").map(|m| m.line.as_str()) else {
        return;
    };
    // A framework the text shows (its build judged above, or known to cover the GPU) or PyTorch's own lines: the
    // catalogue's fix for the line, which names that framework's builds, says more than a program's flags.
    if out.iter().any(|f| f.id == NOT_IN_BUILD.id)
        || cx.frameworks().next().is_some()
        || cx.s.messages.iter().any(|m| m.id.starts_with("torch."))
    {
        return;
    }
    let mut models: Vec<(&str, ComputeCapability)> =
        cx.gpus.iter().filter_map(|g| Some((g.name.as_str(), g.cc?))).collect();
    models.dedup_by(|a, b| a.0 == b.0);
    let [(name, cc)] = models[..] else { return };
    let gpu = cx.gpus.iter().find(|g| g.name == name).map(GpuView::describe).unwrap_or_default();
    out.push(NOT_IN_BUILD.finding(
        format!("The program has no code for the {name} ({})", cc.sm()),
        format!(
            "CUDA found no kernel image for this GPU: the program's binary holds no machine code for {} (nor for an \
             earlier minor of its major) and no PTX it could compile for it, so it was built for other GPUs.",
            cc.sm()
        ),
        vec![gpu, format!("pasted line: {line}")],
        Some(format!(
            "Install a build of the program made for this GPU, or build it from source for it ({}); a program \
             built with CMake takes CMAKE_CUDA_ARCHITECTURES, one of its own options, or its build script's \
             architecture list.{}",
            fix::build_flags(&cc),
            fix::toolkit_bound(cx, &cc)
        )),
    ));
}

/// `arch.not_in_build` for a GPU below the lowest compute capability a program in the text says it needs
/// (`No CUDA device found with minimum required compute capability 3.5`, `the 't' kernel requires 5.0
/// capability`), where nothing above judged that GPU: the program has no code for it, whatever its name.
fn stated_floor(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some((floor, line)) = cx.s.stated_min_cc.as_ref() else { return };
    // A line the catalogue knows says what its number means (bfloat16's `compute capability of at least 8.0` is
    // a data type's floor, not the build's): its own finding judges it.
    let catalogued = cx.s.messages.iter().any(|m| m.line.contains(line.as_str()) || line.contains(m.line.trim()));
    if catalogued || out.iter().any(|f| f.id == NOT_IN_BUILD.id) {
        return;
    }
    let before = out.len();
    for gpu in &cx.gpus {
        let Some(cc) = gpu.cc.filter(|cc| cc < floor) else { continue };
        out.push(NOT_IN_BUILD.finding(
            format!("The program needs compute capability {floor}; {} is {cc}", gpu.name),
            format!(
                "The program says it needs a GPU of compute capability {floor} or newer, and this GPU ({cc}) is \
                 older: its build has no code for it."
            ),
            vec![gpu.describe(), format!("pasted line: {line}")],
            Some(format!(
                "Run it on a GPU of compute capability {floor} or newer, or build the program from source for this \
                 GPU ({}) where its code allows it.{}",
                fix::build_flags(&cc),
                fix::toolkit_bound(cx, &cc)
            )),
        ));
    }
    if out.len() == before
        && let Some(cc) = reported_below(line, *floor)
    {
        out.push(reported_below_finding(cx, *floor, cc, line));
    }
}

/// A compute capability below `floor` that the floor's own line reports for the device (`Can't use CUDA device 0:
/// compute cap. 2.1 (at least 3.0 required)`, PhoenixMinerDevTeam/PhoenixMiner#34): the program asked the GPU, so
/// its answer stands whatever name the board gives.
fn reported_below(line: &str, floor: ComputeCapability) -> Option<ComputeCapability> {
    line.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|w| w.trim_end_matches('.').parse::<ComputeCapability>().ok())
        .find(|cc| (1..=12).contains(&cc.major) && *cc < floor)
}

fn reported_below_finding(cx: &Ctx<'_>, floor: ComputeCapability, cc: ComputeCapability, line: &str) -> Finding {
    let mut evidence = vec![format!("pasted line: {line}")];
    // A name whose capability is not the one the program read: a counterfeit board (an old chip flashed
    // to report a newer name) or another GPU than the one named.
    let named = cx.gpus.iter().find(|g| g.cc.is_some_and(|c| c >= floor));
    let also = named.map_or(String::new(), |g| {
        evidence.push(g.describe());
        format!(
            " The text names {} ({}), which would be enough: the chip the program found is not that GPU. A board \
             that reports a newer name than its chip (sold as one, flashed from an older one) shows this; GPU-Z's \
             GPU and device id or `nvidia-smi -q` tell the chip.",
            g.name,
            g.cc.map_or_else(String::new, |c| c.to_string())
        )
    });
    NOT_IN_BUILD.finding(
        format!("The program found a GPU of compute capability {cc}; it needs {floor}"),
        format!("The program reports the GPU it found at compute capability {cc}, below the {floor} it needs: it has no code for it.{also}"),
        evidence,
        Some(format!(
            "Run it on a GPU of compute capability {floor} or newer, or an older release of the program that still \
             supports {cc} where one exists."
        )),
    )
}

/// The lowest compute capability ollama's released builds run on, by release: from v0.1.19 its GPU discovery
/// skips a GPU below `CudaComputeMajorMin = 6` (ollama/ollama:gpu/gpu.go@v0.1.19 to @v0.1.22), from v0.1.23 below
/// `CudaComputeMin = {5, 0}` (gpu/gpu.go@v0.1.23, @v0.1.29; discover/gpu.go@v0.5.11, @v0.12.0 as
/// `CudaComputeMajorMin = "5"`, `CudaComputeMinorMin = "0"`; docs/gpu.md@v0.13.0: "compute capability 5.0+"), and
/// the builds before v0.1.19 had no code below 5.0 either (llama.cpp's default CUDA architectures). A version
/// not known gets 5.0, the floor of every release.
fn ollama_floor_of(version: &str) -> ComputeCapability {
    let parts: Vec<u32> = version.split(['.', '-']).take(3).map_while(|p| p.parse().ok()).collect();
    match parts[..] {
        [0, 1, patch] if (19..=22).contains(&patch) => ComputeCapability { major: 6, minor: 0 },
        _ => ComputeCapability { major: 5, minor: 0 },
    }
}

/// `arch.not_in_build` for a GPU below the floor of ollama's released builds ([`ollama_floor_of`]): ollama skips
/// it and runs on the CPU, or its runner stops at the first kernel (cuBLAS error 3). Where ollama's own `CUDA
/// GPU is too old` line was pasted, its catalogue row says the same and this is not repeated.
fn ollama_floor(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    if cx.s.messages.iter().any(|m| m.id == "ollama.gpu_too_old") {
        return;
    }
    for (_, fw) in cx.frameworks().filter(|(_, fw)| fw.name == "ollama") {
        let floor = ollama_floor_of(&fw.version);
        for gpu in &cx.gpus {
            let Some(cc) = gpu.cc.filter(|cc| *cc < floor) else { continue };
            let why = format!(
                "ollama's released builds have GPU code from compute capability {floor} up (its GPU discovery skips \
                 a GPU below that and runs the model on the CPU), and this GPU is {cc}."
            );
            let evidence =
                vec![gpu.describe(), format!("ollama {} (its releases need compute capability {floor})", fw.version)];
            let n = format!("{}{}", cc.major, cc.minor);
            let fix = format!(
                "Build ollama from source for this GPU, with `-DCMAKE_CUDA_ARCHITECTURES={n}` in its CMake step (its \
                 docs/development.md).{} Or run ollama on a GPU of compute capability {floor} or newer.",
                fix::toolkit_bound(cx, &cc)
            );
            // No plan: ollama is no Python package an installer could swap.
            out.push(NOT_IN_BUILD.finding(
                format!("ollama {} has no code for {} ({})", fw.version, gpu.name, cc.sm()),
                why,
                evidence,
                Some(fix),
            ));
        }
    }
}

/// Rows of the catalogue whose line says a kernel had no code for the GPU.
const NO_CODE_FOR_GPU: [&str; 2] = ["cuda.no_kernel_image", "cuda.invalid_device_function"];

/// A torch build whose architecture list is not known (a nightly, a release the knowledge base lacks)
/// but whose CUDA is (its `+cuXYZ` tag): a build made with CUDA X.Y holds no machine code for an
/// architecture that came with a later CUDA (gpus.toml's first_toolkit). When the program also said a
/// kernel had no code for the GPU (only PTX could have run it, and it did not), that GPU is not in the
/// build. Without such a line (`by_major`, asked last, where no architecture list the text printed judged the
/// build), the same holds when no architecture of the GPU's major came before the build's CUDA: PyTorch's own
/// check (pytorch/pytorch:torch/cuda/__init__.py, `_check_cubins`) counts a GPU covered only by machine code of
/// its major, which that build cannot hold. True when it judged.
fn judge_by_build_cuda(cx: &Ctx<'_>, env: &PythonEnv, fw: &Framework, by_major: bool, out: &mut Vec<Finding>) -> bool {
    let Some((cuda, false)) = build_cuda(fw) else { return false };
    // The symptom's line itself is cited by the category's evidence.
    let no_code_said = cx.s.messages.iter().any(|m| NO_CODE_FOR_GPU.contains(&m.id.as_str()));
    if no_code_said == by_major {
        return false;
    }
    let mut judged = false;
    for gpu in &cx.gpus {
        let Some(cc) = gpu.cc else { continue };
        let Some(first) = cx.kb.gpus.row(cc).map(|r| r.first_toolkit).filter(|f| f.major_minor() > cuda.major_minor())
        else {
            continue;
        };
        // The first toolkit that builds any architecture of this major.
        let major_first = cx.kb.gpus.cc.iter().filter(|r| r.cc.major == cc.major).map(|r| r.first_toolkit).min();
        let major_after = major_first.is_some_and(|f| f.major_minor() > cuda.major_minor());
        if !no_code_said && !major_after {
            continue;
        }
        judged = true;
        let mut evidence = vec![
            gpu.describe(),
            describe_framework(env, fw),
            format!("{} is built from CUDA {first} (the first toolkit that knows it)", cc.sm()),
        ];
        let why = if no_code_said {
            format!(
                "The build was made with CUDA {cuda}, which cannot compile for {} (CUDA {first} and later can): it has \
                 no machine code for this GPU, and the error says no PTX of it ran either.",
                cc.sm()
            )
        } else {
            let major_first = major_first.unwrap_or(first);
            evidence.push(format!(
                "no architecture of compute capability {}.x is built before CUDA {major_first}",
                cc.major
            ));
            format!(
                "The build was made with CUDA {cuda}, which cannot compile for any GPU of compute capability {}.x \
                 (CUDA {major_first} is the first that can): it has no machine code for this GPU, and PyTorch counts a \
                 GPU as supported only by machine code of its major (its libraries, cuDNN and cuBLAS of CUDA {cuda}, \
                 have none either), so CUDA work fails or PyTorch warns that the GPU is not compatible.",
                cc.major
            )
        };
        out.push(not_in_build_because(cx, env, fw, gpu, cc, why, evidence));
    }
    judged
}

/// A note for PyTorch's capability warning when every GPU it names runs the build by binary
/// compatibility (a GB10, 12.1, under a build up to 12.0): the warning's lines are then no error.
fn capability_warning(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some((warned, max)) = super::messages::capability_warning_runs(cx) else { return };
    let ccs: Vec<String> = warned.iter().map(ToString::to_string).collect();
    let lines = cx.s.messages.iter().filter(|m| m.id == "torch.gpu_too_old" || m.id == "torch.min_max_capability");
    let mut evidence: Vec<String> = lines.map(|m| format!("pasted line: {}", m.line)).collect();
    evidence.dedup();
    out.push(CAPABILITY_WARNING_HARMLESS.finding(
        format!("PyTorch's capability warning can be ignored: compute capability {} runs {max} machine code", ccs.join(", ")),
        format!(
            "PyTorch warns when a GPU's capability is above the highest architecture its build lists ({max}), comparing \
             the numbers; machine code of {max} runs on every later minor of compute capability {}.x, so the build \
             runs on this GPU.",
            max.major
        ),
        evidence,
        None,
    ));
}

/// PyTorch's warnings name the installed build's architectures even where the text gives no torch
/// version, or one the knowledge base has no list for (Comfy-Org/ComfyUI#7127): judged against the
/// GPUs when no torch build was judged from its version, by PyTorch's own checks
/// (pytorch/pytorch:torch/cuda/__init__.py, `_check_capability`): "The current PyTorch install
/// supports CUDA capabilities sm_50 … sm_90" covers a GPU when some `sm_XY` shares its major (PTX
/// entries are not counted), and "The minimum cuda capability supported by this library is X.Y"
/// leaves out every GPU below it.
fn judge_printed_list(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let value =
        |id: &str, name: &str| cx.s.messages.iter().filter(|m| m.id == id).find_map(|m| Some((m, m.values.get(name)?)));
    if let Some((line, printed)) = value("torch.supported_sm_list", "arch_list") {
        let names: Vec<String> = printed.split_whitespace().map(str::to_owned).collect();
        let (sass, ptx) = split_arch_list(&names);
        for gpu in &cx.gpus {
            let Some(cc) = gpu.cc.filter(|cc| !sass.iter().any(|s| s.major == cc.major)) else { continue };
            let why = if ptx.is_empty() {
                why_not_in_build(cc, &sass)
            } else {
                format!(
                    "None of its machine code is of compute capability {}'s major, which is what PyTorch's check counts \
                     (\"with CUDA capability {} is not compatible with the current PyTorch installation\"): the PTX it \
                     also lists is not counted, and the CUDA libraries of such a build have no code for this GPU either.",
                    cc.major,
                    cc.sm()
                )
            };
            out.push(printed_not_in_build(cx, gpu, cc, why, line));
        }
        return;
    }
    let min = value("torch.min_capability", "min_cc").or_else(|| value("torch.min_max_capability", "min_cc"));
    let Some((line, min)) = min.and_then(|(m, v)| Some((m, v.parse::<ComputeCapability>().ok()?))) else { return };
    for gpu in &cx.gpus {
        let Some(cc) = gpu.cc.filter(|cc| *cc < min) else { continue };
        let why = format!(
            "Its lowest compiled architecture is {}, above this GPU's {}: the build dropped this GPU (PyTorch: \"PyTorch \
             no longer supports this GPU because it is too old\").",
            min.sm(),
            cc.sm()
        );
        out.push(printed_not_in_build(cx, gpu, cc, why, line));
    }
}

/// `arch.not_in_build` for a GPU that the installed PyTorch's printed architectures leave out. The
/// fix is the wheel for this driver; where none is known, `message_fix::attach` gives the fix of the
/// family of PyTorch's line the finding explains (the lowest CUDA whose wheel has the GPU's machine
/// code, with that CUDA's driver floor).
fn printed_not_in_build(
    cx: &Ctx<'_>,
    gpu: &GpuView,
    cc: ComputeCapability,
    why: String,
    line: &ObservedMessage,
) -> Finding {
    NOT_IN_BUILD.finding(
        format!("The installed PyTorch was not compiled for {} ({})", gpu.name, cc.sm()),
        why,
        vec![gpu.describe(), format!("pasted line: {}", line.line)],
        build_for(cx, "torch", cc),
    )
}

/// The compiled architectures of a torch build: what `torch.cuda.get_arch_list()` said in the deep
/// tier, else the knowledge base's list for its release and CUDA; `None` when neither is known.
pub fn torch_arch_list(kb: &Kb, env: &PythonEnv, fw: &Framework) -> Option<ArchList> {
    let deep = env.deep_torch();
    if let Some(list) = deep.and_then(|t| t.arch_list.as_ref()).filter(|l| !l.is_empty()) {
        let (sass, ptx) = split_arch_list(list);
        return Some(ArchList {
            sass,
            ptx,
            names: list.clone(),
            from_deep: true,
            from: format!("torch.cuda.get_arch_list() = [{}]", list.join(", ")),
        });
    }
    let (cuda, false) = build_cuda(fw)? else { return None };
    let v = kb.pytorch.variant(&fw.version, cuda)?;
    let names: Vec<String> =
        v.arch.iter().map(|c| c.sm()).chain(v.ptx.map(|c| format!("compute_{}{}", c.major, c.minor))).collect();
    let from = format!(
        "the knowledge base's arch list for torch {} {} wheels: [{}] (the installed files were not asked)",
        v.torch,
        gpu_doctor_kb::index_tag(v.cuda),
        names.join(", ")
    );
    Some(ArchList { sass: v.arch.clone(), ptx: v.ptx_list(), names, from_deep: false, from })
}

fn judge_list(cx: &Ctx<'_>, env: &PythonEnv, fw: &Framework, list: &ArchList, out: &mut Vec<Finding>) {
    for gpu in cx.gpus.iter().filter(|g| g.cc.is_some()) {
        let Some(cc) = gpu.cc else { continue };
        let evidence = vec![gpu.describe(), describe_framework(env, fw), list.from.clone()];
        match coverage(&list.sass, &list.ptx, cc) {
            Coverage::Sass(_) => {}
            Coverage::Ptx(p) => out.push(PTX_ONLY.finding(
                format!("{} {} has only PTX for {} ({})", fw.name, fw.version, gpu.name, cc.sm()),
                format!(
                    "There is no machine code for compute capability {cc}; the driver compiles the compute_{}{} PTX at \
                     first use, which takes minutes and fails if the driver is older than the toolkit that built it.",
                    p.major, p.minor
                ),
                evidence,
                Some(format!("Install a {} build with machine code for {}.", fw.name, cc.sm())),
            )
            .with_plan(fix::framework_build(env, fw))),
            Coverage::None => out.push(not_in_build(cx, env, fw, gpu, cc, &list.sass, evidence)),
        }
    }
}

fn not_in_build(
    cx: &Ctx<'_>,
    env: &PythonEnv,
    fw: &Framework,
    gpu: &GpuView,
    cc: ComputeCapability,
    sass: &[ComputeCapability],
    evidence: Vec<String>,
) -> Finding {
    not_in_build_because(cx, env, fw, gpu, cc, why_not_in_build(cc, sass), evidence)
}

/// The finding that `fw` has no code for `gpu`, for the reason `why`, with the build to install.
fn not_in_build_because(
    cx: &Ctx<'_>,
    env: &PythonEnv,
    fw: &Framework,
    gpu: &GpuView,
    cc: ComputeCapability,
    why: String,
    evidence: Vec<String>,
) -> Finding {
    let fix = build_for(cx, &fw.name, cc)
        .unwrap_or_else(|| format!("Install a {} build compiled for {}, or build it from source.", fw.name, cc.sm()));
    NOT_IN_BUILD
        .finding(
            format!("{} {} was not compiled for {} ({})", fw.name, fw.version, gpu.name, cc.sm()),
            why,
            evidence,
            Some(fix),
        )
        .with_plan(fix::framework_build(env, fw))
}

/// The words of a fix that name the build: for torch, the newest release line in the knowledge base
/// whose wheels carry machine code for `cc`, built for a CUDA this driver runs, with the command that
/// installs it from its index. With the driver unknown (pasted text that did not show it), one such build
/// for each driver level that changes the answer ([`builds_by_driver`]). `None` for another framework or
/// when no such build is listed. (A planned finding shows the framework plan instead; these words are for
/// a machine no plan can be made for, such as pasted text.)
pub(super) fn build_for(cx: &Ctx<'_>, framework: &str, cc: ComputeCapability) -> Option<String> {
    if framework != "torch" {
        return None;
    }
    let Some(level) = cx.driver_cuda() else {
        let (first, choices) = choices_by_driver(cx, &[cc])?;
        return Some(format!(
            "Install a torch build with machine code for {} (as read from {}). {choices}",
            cc.sm(),
            short_source(&first.source),
        ));
    };
    let Some(v) = cx.kb.pytorch.recommend(&[cc], Some(level), None) else {
        return fix::lowest_cuda_wheel_words(cx, cc);
    };
    Some(format!(
        "Install torch {} built for CUDA {}: its wheels carry machine code for {}, which this driver (CUDA up to \
         {level}) runs (as read from {}). {}",
        v.torch,
        v.cuda,
        cc.sm(),
        short_source(&v.source),
        fix::install_torch(cx, v)
    ))
}

/// For GPUs of capabilities `ccs` (none: any GPU) on a driver the text does not show: the first
/// build, and in words the builds to choose from by the driver's CUDA level, each with its command.
fn choices_by_driver<'k>(cx: &Ctx<'k>, ccs: &[ComputeCapability]) -> Option<(&'k TorchVariant, String)> {
    let builds = builds_by_driver(cx.kb, ccs);
    let first = *builds.first()?;
    let choices: Vec<String> = builds
        .iter()
        .map(|v| {
            let floor =
                cx.kb.cuda.full_driver(v.cuda, cx.os).map_or_else(String::new, |d| format!(" (driver {d} or newer)"));
            format!("CUDA {} or newer{floor}: torch {}, {}", v.cuda, v.torch, fix::install_torch(cx, v))
        })
        .collect();
    Some((
        first,
        format!(
            "Which one depends on the driver, which the pasted text does not show: take the first line that \
             nvidia-smi's \"CUDA Version\" reaches. {}.",
            choices.join("; ")
        ),
    ))
}

/// The CUDA build of torch to install in place of a CPU-only one, in words with its command: for the
/// GPUs the text names (any, when it names none), the newest line the driver runs, or with the driver
/// not shown, one per driver level ([`choices_by_driver`]). `None` when the knowledge base lists none.
pub(super) fn cuda_torch_for(cx: &Ctx<'_>) -> Option<String> {
    torch_for(cx, &cx.capabilities(), "in place of the CPU-only one")
}

/// The CUDA build of torch with machine code for `ccs` (any GPU when empty), `instead` of the one
/// installed: the newest line the driver runs, or with the driver not shown, one per driver level.
pub(super) fn torch_for(cx: &Ctx<'_>, ccs: &[ComputeCapability], instead: &str) -> Option<String> {
    let Some(level) = cx.driver_cuda() else {
        let (_, choices) = choices_by_driver(cx, ccs)?;
        return Some(format!("Install a CUDA build of torch {instead}. {choices}"));
    };
    let v = cx.kb.pytorch.recommend(ccs, Some(level), None)?;
    Some(format!(
        "Install torch {} built for CUDA {} {instead}, the newest line this driver (CUDA up to {level}) runs{}: {}",
        v.torch,
        v.cuda,
        if ccs.is_empty() { String::new() } else { " on this GPU".to_owned() },
        fix::install_torch(cx, v)
    ))
}

/// For GPUs of capabilities `ccs` (none: any GPU) on a driver not known, the torch builds to choose from, newest driver
/// first: the build [`PytorchTable::recommend`](gpu_doctor_kb::PytorchTable) picks at each CUDA level the
/// knowledge base lists torch wheels for: the newest of each CUDA major (three at most), and the one for
/// the oldest driver when it is of the last major shown.
pub(super) fn builds_by_driver<'k>(kb: &'k Kb, ccs: &[ComputeCapability]) -> Vec<&'k TorchVariant> {
    let mut levels: Vec<CudaVersion> = kb
        .pytorch
        .variant
        .iter()
        .filter(|v| ccs.iter().all(|cc| matches!(v.coverage(*cc), Coverage::Sass(_))))
        .map(|v| v.cuda.major_minor())
        .collect();
    levels.sort_unstable_by(|a, b| b.cmp(a));
    levels.dedup();
    let mut all: Vec<&TorchVariant> = Vec::new();
    for level in levels {
        if let Some(v) = kb.pytorch.recommend(ccs, Some(level), None)
            && !all.iter().any(|p| std::ptr::eq(*p, v))
        {
            all.push(v);
        }
    }
    let mut picks: Vec<&TorchVariant> = Vec::new();
    for v in &all {
        if picks.len() < 3 && !picks.iter().any(|p| p.cuda.major == v.cuda.major) {
            picks.push(v);
        }
    }
    if let (Some(oldest), Some(last)) = (all.last().copied(), picks.last().copied())
        && oldest.cuda.major == last.cuda.major
        && !std::ptr::eq(oldest, last)
    {
        picks.push(oldest);
    }
    picks
}

/// A knowledge-base row's source in few words: its first reference, a URL as its file's name
/// (`torch-2.6.0-cp312-cp312-manylinux1_x86_64.whl`), without what was read in it.
pub(super) fn short_source(source: &str) -> &str {
    let first = source.split("; ").next().unwrap_or(source);
    let first = first.split(" (").next().unwrap_or(first).trim();
    if first.starts_with("https://") { first.rsplit('/').find(|s| !s.is_empty()).unwrap_or(first) } else { first }
}

/// Why a build with machine code for `sass` (and no PTX that fits) does not run on `cc`.
fn why_not_in_build(cc: ComputeCapability, sass: &[ComputeCapability]) -> String {
    match sass.iter().min() {
        Some(min) if cc < *min => format!(
            "Its lowest compiled architecture is {}, above this GPU's {}: the build dropped this GPU (PyTorch: \
             \"PyTorch no longer supports this GPU because it is too old\").",
            min.sm(),
            cc.sm()
        ),
        _ => format!(
            "Nothing in it runs on compute capability {cc}: machine code runs only on its own major, and there is no \
             PTX to compile (PyTorch: \"with CUDA capability {} is not compatible with the current PyTorch \
             installation\", then \"no kernel image is available for execution on the device\").",
            cc.sm()
        ),
    }
}

fn judge_jax(cx: &Ctx<'_>, env: &PythonEnv, fw: &Framework, plugin: &JaxPlugin, out: &mut Vec<Finding>) {
    for gpu in &cx.gpus {
        let Some(cc) = gpu.cc.filter(|cc| *cc < plugin.min_cc) else { continue };
        out.push(NOT_IN_BUILD.finding(
            format!("{} does not support {} ({})", fw.name, gpu.name, cc.sm()),
            format!(
                "JAX's {} wheels need compute capability {} or newer; this GPU has {cc}.",
                plugin.extra, plugin.min_cc
            ),
            vec![
                gpu.describe(),
                describe_framework(env, fw),
                format!("{}: minimum compute capability {} ({})", plugin.package, plugin.min_cc, plugin.source),
            ],
            Some(format!(
                "Use an older GPU-capable JAX with a CUDA 12 plugin if one supports {}, or run JAX on a GPU of compute \
                 capability {} or newer.",
                cc.sm(),
                plugin.min_cc
            )),
        )
        .with_plan(fix::framework_build(env, fw)));
    }
}
