//! CUDA toolkits: names that pick different installs, library folders that shadow a framework's wheels,
//! and why an nvcc or driver "CUDA Version" that differs from a framework's build is usually harmless.

use super::context::{build_cuda, cudnn_version_text, describe_framework, parent_dir, same_dir, wheel_cuda_major};
use super::{Ctx, Rule, fix};
use gpu_doctor_kb::{RuntimeVerdict, families};
use gpu_doctor_model::shell::ShellCommand;
use gpu_doctor_model::{Category, Change, CudaVersion, Finding, InstallFlag, PlanTarget, Severity};
use gpu_doctor_model::{OsFamily, Pick, PythonEnv, ToolkitInstall, ToolkitKind, Toolkits, VersionSource};

pub(super) const CONFLICT: Rule = Rule {
    id: "toolkits.names_disagree",
    category: Category::MultipleToolkitsConflict,
    severity: Severity::Warning,
    trigger: "nvcc on PATH, CUDA_HOME, CUDA_PATH, the LD_LIBRARY_PATH libcudart and /usr/local/cuda lead to CUDA \
              toolkits of different versions, so builds mix headers, compiler and libraries of two releases. Also \
              an nvcc shown running of another release than NVIDIA's CUDA image of a base or runtime flavour (no nvcc \
              of its own) named in the text: a compiler installed apart into the image. Or the host compiler's \
              `\"__CUDACC_VER__\" redefined` on CUDA 9's crt/common_functions.h: an nvcc before CUDA 9 compiling a \
              newer toolkit's headers. Or nvcc's verbose listing (`nvcc -v`, CMake's compiler identification) naming a \
              distribution's nvcc (`_HERE_` in /usr/lib/nvidia-cuda-toolkit) of another release than a CUDA toolkit \
              also installed (a `cuda-X.Y` folder on the PATH it ran with, CUDA_HOME); or a build naming the \
              distribution's /usr/bin/nvcc as the compiler it ran (setuptools' `command '/usr/bin/nvcc' failed`, \
              CMake's compiler lines) where the text says another CUDA toolkit is installed (`I installed the CUDA \
              12.8 release`). Or PyTorch's CMake package \
              stopping on `Found two conflicting CUDA installs` (`versions` from 2.5): its FindCUDA and \
              FindCUDAToolkit searches found different toolkits, or one release through two folders. Or a build's \
              configuration (CMake's CUDA compiler identification, FindCUDA's and FindCUDAToolkit's found version, \
              a project's `CUDA detected: X.Y`) that found one release where it, or a toolkit folder the text \
              shows, found another.",
    source: "CUDA Installation Guide for Linux, post-installation PATH and LD_LIBRARY_PATH \
             (https://docs.nvidia.com/cuda/cuda-installation-guide-linux/); torch.utils.cpp_extension CUDA_HOME lookup; \
             NVIDIA's container images' three flavours (https://nvidia.github.io/container-wiki/toolkit/container-images.html), \
             the case of NVIDIA/nvidia-docker#740; the toolkit's bin/nvcc.profile (`TOP = $(_HERE_)/..`, as \
             zspace/system.cuda-12.6:bin/nvcc.profile@b3d92c837713411301ae5df45b0c7758df7d931e copies it) and \
             nvcc's predefined __CUDACC_VER_MAJOR__/__CUDACC_VER_MINOR__ (CUDA Compiler Driver NVCC); \
             pytorch/pytorch:cmake/public/cuda.cmake@v2.1.0#L63-L68 and @v2.5.1#L63-L67; Kitware/CMake \
             Modules/CMakeDetermineCompilerId.cmake and FindPackageHandleStandardArgs.cmake (the `The CUDA compiler \
             identification is` and `Found CUDAToolkit: … (found version \"…\")` lines); pytorch/pytorch#6376; \
             Debian's nvidia-cuda-toolkit file list (https://packages.debian.org/sid/amd64/nvidia-cuda-toolkit/filelist: \
             /usr/bin/nvcc, /usr/lib/nvidia-cuda-toolkit/bin/nvcc); pypa/setuptools:setuptools/_distutils/spawn.py@00eaec7a0c4e49af9c4062145c969f08d2953abe \
             (`command %r failed with exit code %s`; CPython's own distutils wrote `exit status`)",
};

pub(super) const STALE_PATH: Rule = Rule {
    id: "toolkits.stale_library_path",
    category: Category::MultipleToolkitsConflict,
    severity: Severity::Warning,
    trigger: "An LD_LIBRARY_PATH folder holds CUDA libraries (toolkit or cuDNN) of another CUDA major than the pip \
              nvidia-* wheels of an environment, which the loader searches before the wheels' own folders; or a \
              pasted `ldd` of a wheel's library shows one of NVIDIA's CUDA libraries taken from an LD_LIBRARY_PATH \
              folder outside the wheels (any version: an older minor lacks the symbols the wheels call); or JAX's CUDA \
              plugin cannot load cuSPARSE (\"The cuSPARSE library was not found\", \"Unable to load cuSPARSE\"), \
              which it checks after the other CUDA libraries loaded: the wheel's libcusparse needs a libnvJitLink of \
              its release and the loader takes LD_LIBRARY_PATH's first.",
    source: "ld.so(8) (LD_LIBRARY_PATH is searched before DT_RUNPATH); pytorch/pytorch#91067, #103832 and #141063 (system CUDA \
             libraries shadowing the pip wheels); jax-ml/jax:jax_plugins/cuda/__init__.py@00070f859b90d28ac350a25a31410badd8778d02 \
             (_load_nvidia_libraries, _check_cuda_versions: cuSPARSE last, raise_on_first_error); \
             openxla/xla:xla/tsl/cuda/cusparse_stub.cc@80c095fc2f5ba8b1e8c8b7df79c0be532416dd69; jax-ml/jax#28929 (nvJitLink \
             from LD_LIBRARY_PATH's CUDA 12.1)",
};

pub(super) const HARMLESS: Rule = Rule {
    id: "toolkits.versions_explained",
    category: Category::ToolkitVsFrameworkMismatchHarmless,
    severity: Severity::Info,
    trigger: "nvcc's version (or, in a pasted folder listing, that of the toolkit `/usr/local/cuda` points to) \
              differs from a framework's CUDA build (its package's tag, or `torch.version.cuda` as printed) or from \
              the driver's \"CUDA Version\": prebuilt wheels bring their own runtime, so this only \
              matters when compiling extensions. Without an nvcc: an NVIDIA CUDA container image (`nvidia/cuda:X.Y-…`) \
              older than the driver's \"CUDA Version\", which nvidia-smi in the container shows from the host's driver. \
              Without versions to compare: the text asks whether the machine's CUDA must match, or be installed for, a \
              framework's prebuilt build.",
    source: "Reference §2 \"Which CUDA version is which\" (CUDA driver/runtime API version management; PyTorch \
             cpp_extension refuses a different major and warns on a minor); \
             https://nvidia.github.io/container-wiki/toolkit/container-images.html (the image's flavours; the host \
             needs only the driver)",
};

pub(super) const PTXAS_ON_PATH: Rule = Rule {
    id: "toolkits.ptxas_on_path_shadows_wheel",
    category: Category::MultipleToolkitsConflict,
    severity: Severity::Warning,
    trigger: "XLA (JAX, TensorFlow) says it runs a ptxas program older than 12.6.85 (\"Invoking ptxas with version \
              …, which corresponds to a CUDA version <=12.6.2\"), or a ptxas from PATH that does not know the GPU \
              (\"ptxas does not support CC X.Y\" with \"Used ptxas at ptxas\", the bare name XLA gives the one it ran \
              from PATH, or a path in a CUDA folder on PATH): XLA takes the first ptxas of 11.8 or newer in \
              --xla_gpu_cuda_data_dir, then on PATH, and only then in the pip nvidia-cuda-nvcc wheel, so an older \
              system toolkit on PATH shadows the wheel's.",
    source: "openxla/xla:xla/stream_executor/cuda/subprocess_compilation.cc@827aca0eb2748018b7e803606250f9ea56939ab0 \
             (FindCudaExecutable, FindPtxAsExecutable); openxla/xla:xla/tsl/platform/default/cuda_root_path.cc \
             (PreferPtxasFromPath() is true; ../nvidia/cuda_nvcc is the last root); \
             openxla/xla:xla/stream_executor/cuda/ptx_compiler_helpers.cc (WarnIfBadPtxasVersion); \
             tensorflow/tensorflow:tensorflow/compiler/xla/stream_executor/gpu/asm_compiler.cc@94fc848da96e1e8009cee8843a6766435d82f463 \
             (FindCudaExecutable returns the bare `ptxas` it ran from PATH; LogPtxasTooOld); jax-ml/jax#25718",
};

pub(super) const RULES: &[Rule] = &[CONFLICT, STALE_PATH, HARMLESS, PTXAS_ON_PATH];

/// The message XLA logs when the ptxas it runs is older than CUDA 12.6.3's (`assets/compat/errors.toml`).
const PTXAS_MESSAGE: &str = "xla.ptxas_miscompiles_clamping";

/// The first ptxas release of CUDA 12.6.3, the oldest XLA does not warn about (WarnIfBadPtxasVersion).
const PTXAS_FIXED: &str = "12.6.85";

/// XLA's warning that the ptxas it found does not know the GPU (`assets/compat/errors.toml`).
const PTXAS_CC_MESSAGE: &str = "xla.ptxas_too_old_for_gpu";

/// What XLA says of the old ptxas it runs: its version (the clamping warning) or the GPU it cannot compile
/// for (the fallback warning, whose ptxas is the one on PATH when XLA names it by its bare name or from a
/// CUDA folder on PATH).
enum OldPtxas {
    /// `Invoking ptxas with version X`.
    Version(String),
    /// `ptxas does not support CC X.Y`, with the path XLA names (`Used ptxas at …`).
    Gpu { cc: String, path: String },
}

/// The ptxas XLA says it ran from PATH, older than needed.
fn old_ptxas_on_path(cx: &Ctx<'_>) -> Option<OldPtxas> {
    if let Some(m) =
        cx.s.messages.iter().find(|m| m.id == PTXAS_MESSAGE && m.values.get("method").is_some_and(|v| v == "ptxas"))
    {
        return Some(OldPtxas::Version(m.values.get("ptxas_version").map_or("?", String::as_str).to_owned()));
    }
    cx.s.messages.iter().filter(|m| m.id == PTXAS_CC_MESSAGE).find_map(|m| {
        let path = m.values.get("ptxas_path")?;
        // FindCudaExecutable returns the bare name for the ptxas it ran from PATH; later XLA joins each
        // PATH folder, so a whole path counts when its folder is a CUDA folder on PATH (not the wheel's).
        let from_path = path == "ptxas"
            || path == "ptxas.exe"
            || (!path.contains("site-packages")
                && cx.s.env.path_cuda_entries.iter().any(|e| same_dir(e, parent_dir(path))));
        from_path.then(|| OldPtxas::Gpu { cc: m.values.get("cc").cloned().unwrap_or_default(), path: path.clone() })
    })
}

/// XLA runs an old ptxas program: the one first on PATH, ahead of the pip wheel's.
fn ptxas_on_path(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(old) = old_ptxas_on_path(cx) else {
        return;
    };
    let (title, which) = match &old {
        OldPtxas::Version(version) => (
            format!("XLA compiles with ptxas {version}, an older CUDA toolkit's, not the pip wheel's"),
            format!("version {version}"),
        ),
        OldPtxas::Gpu { cc, path } => (
            format!(
                "XLA runs the ptxas on PATH ({path}), whose CUDA toolkit is older than this GPU (compute capability \
                 {cc}), not the pip wheel's"
            ),
            format!("{path}, which cannot compile for compute capability {cc}"),
        ),
    };
    // The pasted line itself is cited by `messages::cite`, as for every finding that explains a row.
    let mut evidence = Vec::new();
    // The PATH folders that hold a CUDA toolkit: the ptxas XLA found is in the first of them.
    let path_dirs: Vec<&String> = cx.s.env.path_cuda_entries.iter().filter(|d| !d.contains("site-packages")).collect();
    if !path_dirs.is_empty() {
        evidence.push(format!(
            "CUDA folders on PATH: {}",
            path_dirs.iter().map(|d| d.as_str()).collect::<Vec<_>>().join(", ")
        ));
    }
    let xla_env = cx.envs().iter().find(|e| {
        e.frameworks.iter().any(|f| matches!(f.name.as_str(), "jax" | "jaxlib" | "tensorflow" | "tf-nightly"))
    });
    if let Some(w) = xla_env.and_then(|e| e.cuda_wheels.iter().find(|w| w.name.starts_with("nvidia-cuda-nvcc"))) {
        evidence.push(format!("{} {} is installed, its ptxas is searched after PATH", w.name, w.version));
    }
    let requirement = format!("nvidia-cuda-nvcc-cu12>={PTXAS_FIXED}");
    let path_step = match path_dirs.first() {
        Some(dir) => format!(
            "Take {dir} out of PATH in the shell that runs the program (or put a ptxas of {PTXAS_FIXED} or newer \
             first), so XLA reaches the wheel's ptxas; or point XLA at the wheel: XLA_FLAGS=--xla_gpu_cuda_data_dir=\
             <site-packages>/nvidia/cuda_nvcc."
        ),
        None => format!(
            "`which -a ptxas` lists the ptxas programs on PATH: take the folder of the old one out of PATH (or put a \
             ptxas of {PTXAS_FIXED} or newer first), so XLA reaches the wheel's ptxas; or point XLA at the wheel: \
             XLA_FLAGS=--xla_gpu_cuda_data_dir=<site-packages>/nvidia/cuda_nvcc."
        ),
    };
    let goal = format!("XLA compiles with ptxas {PTXAS_FIXED} or newer");
    let plan = match xla_env {
        Some(env) => fix::change(
            Some(env),
            goal,
            vec![fix::install(&[InstallFlag::Upgrade], [requirement]), Change::Manual { text: path_step }],
        ),
        None => fix::change(
            None,
            goal,
            vec![Change::Manual {
                text: format!(
                    "In the environment that runs JAX or TensorFlow: `pip install -U \"{requirement}\"`. {path_step}"
                ),
            }],
        ),
    };
    out.push(
        PTXAS_ON_PATH
            .finding(
                title,
                format!(
                    "XLA looks for ptxas in --xla_gpu_cuda_data_dir, then in every PATH folder, and only after them in \
                     the pip nvidia-cuda-nvcc wheel that jax[cuda12] and tensorflow[and-cuda] install; it takes the first of 11.8 or newer. \
                     So a system CUDA toolkit's ptxas on PATH ({which} here) wins over the wheel's. ptxas before \
                     {PTXAS_FIXED} (CUDA 12.6.3) miscompiles some clamping on Hopper and newer GPUs, and an old ptxas \
                     cannot compile for GPUs newer than it: XLA then falls back to the driver's JIT, which fails where \
                     the PTX is newer than the driver (CUDA_ERROR_INVALID_IMAGE)."
                ),
                evidence,
                None,
            )
            .with_plan(plan),
    );
}

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let t = cx.s.toolkits.value();
    if let Some(t) = t {
        conflict(cx, t, out);
        conda_packages_disagree(t, out);
        distribution_nvcc_ran(cx, t, out);
        nvcc_beside_runtime_image(t, out);
        build_found_two(cx, t, out);
    }
    older_nvcc_on_newer_headers(cx, out);
    cmake_found_two(cx, out);
    explain(cx, t, out);
    stale_paths(cx, t.map(|t| t.installs.as_slice()).unwrap_or_default(), out);
    ldd_shadows(cx, out);
    ptxas_on_path(cx, out);
    cusparse_not_loaded(cx, out);
    question(cx, out);
}

/// The text asks whether the machine's CUDA must match (or be installed for) a framework's build, and no
/// versions were shown to compare: the answer is the same note, in general (PyTorch's install page: the
/// binaries ship their own CUDA libraries; the driver is what must be new enough).
fn question(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(asked) = cx.s.stated_cuda_question.as_deref() else { return };
    if out.iter().any(|f| f.id == HARMLESS.id) {
        return;
    }
    out.push(HARMLESS.finding(
        "A framework's prebuilt CUDA build need not match an installed CUDA toolkit",
        "PyTorch's wheels and conda packages, TensorFlow's `tensorflow[and-cuda]`, JAX's CUDA plugins, CuPy's and ONNX \
         Runtime's GPU wheels bring the CUDA runtime (and cuDNN) they were built with, or pull them in as nvidia-* \
         wheels: an installed CUDA toolkit is not used to run them, and its version need not match. What must fit is \
         the NVIDIA driver: nvidia-smi's \"CUDA Version\" is the newest CUDA it runs, and it must be at least the \
         build's CUDA. A toolkit (nvcc) matters only to compile extensions, where PyTorch wants the same major as \
         its build.",
        vec![format!("asked: {asked}")],
        Some(
            "Nothing to install for running the framework: check the driver instead (`nvidia-smi`: its CUDA Version \
             at least the build's, `python -c 'import torch; print(torch.version.cuda)'` for PyTorch). Install a CUDA \
             toolkit only to compile CUDA code or extensions, of the build's major, with CUDA_HOME pointing at it."
                .to_owned(),
        ),
    ));
}

/// JAX's CUDA plugin could not load cuSPARSE. Its version check stops at the first component it cannot load
/// and checks cuSPARSE last (after the CUDA runtime, cuDNN, cuFFT, cuPTI and cuBLAS), so those loaded: the
/// libraries are there. The plugin loads the wheel's libcusparse.so.12 by path; that library needs
/// libnvJitLink.so.12 of its own release, which the loader looks for in LD_LIBRARY_PATH before the wheel's
/// folder, so a system CUDA toolkit there (or an older nvidia-nvjitlink wheel) makes the load fail.
fn cusparse_not_loaded(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    if out.iter().any(|f| f.id == STALE_PATH.id) {
        return;
    }
    let said = cx.s.messages.iter().any(|m| {
        m.id == "xla.cusparse_not_loaded"
            || (m.id == "jax.cuda_component_not_loadable" && m.values.get("component").is_some_and(|c| c == "cuSPARSE"))
    });
    if !said {
        return;
    }
    let system: Vec<&str> =
        cx.s.env.ld_library_path.iter().filter(|d| !d.contains("site-packages")).map(String::as_str).collect();
    let mut evidence = Vec::new();
    if !system.is_empty() {
        evidence.push(format!("LD_LIBRARY_PATH: {}", system.join(":")));
    }
    for env in cx.envs() {
        let wheels: Vec<String> = env
            .cuda_wheels
            .iter()
            .filter(|w| w.name.starts_with("nvidia-cusparse") || w.name.starts_with("nvidia-nvjitlink"))
            .map(|w| format!("{} {}", w.name, w.version))
            .collect();
        if !wheels.is_empty() {
            evidence.push(format!("{}: {}", env.name, wheels.join(", ")));
        }
    }
    out.push(
        STALE_PATH
            .finding(
                "JAX cannot load cuSPARSE: its libnvJitLink is most likely taken from LD_LIBRARY_PATH, not the pip \
                 wheels"
                    .to_owned(),
                "JAX's CUDA plugin checks the CUDA runtime, cuDNN, cuFFT, cuPTI and cuBLAS before cuSPARSE and stops at \
                 the first it cannot load, so the others loaded. The pip wheel's libcusparse.so.12 needs \
                 libnvJitLink.so.12 of its own CUDA release; the loader searches LD_LIBRARY_PATH before the wheel's \
                 folder, so an older system CUDA toolkit there (or an nvidia-nvjitlink wheel older than \
                 nvidia-cusparse) makes libcusparse fail to load, and JAX falls back to the CPU."
                    .to_owned(),
                evidence,
                None,
            )
            .with_plan(fix::change(
                None,
                "the pip wheels' own libnvJitLink for cuSPARSE".to_owned(),
                vec![
                    fix::ld_library_path_without(cx, &system, None),
                    Change::Manual {
                        text: "If LD_LIBRARY_PATH holds no CUDA folder: `pip install -U nvidia-nvjitlink-cu12` to the \
                               release of nvidia-cusparse-cu12 (`pip list | grep nvidia` shows both)."
                            .to_owned(),
                    },
                ],
            )),
    );
}

/// Pasted `ldd` of a pip wheel's library (under site-packages) shows one of NVIDIA's CUDA libraries taken from
/// an LD_LIBRARY_PATH folder outside the wheels: the loader searches LD_LIBRARY_PATH before the RUNPATH that
/// points the wheel's library at its sibling wheels' copies, so that folder's copy wins, whatever its version.
fn ldd_shadows(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(t) = cx.s.toolkits.value() else { return };
    let in_wheels = |p: &str| p.contains("site-packages/") || p.contains("dist-packages/");
    let mut done: Vec<&str> = Vec::new();
    for r in t.ldd_resolved.iter().filter(|r| in_wheels(&r.caller) && !in_wheels(&r.path)) {
        let Some((base, _)) = r.library.strip_prefix("lib").and_then(|l| l.split_once(".so")) else { continue };
        let Some(wheel) = families::library_wheel(base) else { continue };
        let dir = parent_dir(&r.path);
        if done.contains(&dir) || !cx.s.env.ld_library_path.iter().any(|d| same_dir(d, dir)) {
            continue;
        }
        let already = out.iter().any(|f| f.id == STALE_PATH.id && f.evidence.iter().any(|e| e.contains(dir)));
        done.push(dir);
        if already {
            continue;
        }
        let caller = r.caller.rsplit('/').next().unwrap_or(&r.caller);
        let version = t
            .installs
            .iter()
            .find(|i| i.lib_dirs.iter().any(|d| same_dir(d, dir)))
            .and_then(|i| i.version)
            .map_or_else(String::new, |v| format!(" (CUDA {v})"));
        let evidence = vec![
            format!("ldd {}: {} => {}", r.caller, r.library, r.path),
            format!("LD_LIBRARY_PATH folder {dir}{version}"),
        ];
        out.push(
            STALE_PATH
                .finding(
                    format!("LD_LIBRARY_PATH's {dir} supplies {} to the pip wheels' {caller}", r.library),
                    format!(
                        "The loader searches LD_LIBRARY_PATH before the RUNPATH that points {caller} at the {wheel} \
                         wheel's {}, so the copy in {dir}{version} is loaded instead. A copy older than the wheels \
                         (an older minor of the same major too) lacks the versioned symbols they call, which ends in \
                         `undefined symbol: …, version {}` at import.",
                        r.library, r.library
                    ),
                    evidence,
                    None,
                )
                .with_plan(out_of_loader_path(cx, dir)),
        );
    }
}

/// The names that pick a toolkit, with a label.
fn named_picks(t: &Toolkits) -> Vec<(&'static str, &Pick)> {
    let p = &t.picks;
    [
        ("nvcc on PATH", &p.path),
        ("CUDA_HOME", &p.cuda_home),
        ("CUDA_PATH", &p.cuda_path),
        ("LD_LIBRARY_PATH libcudart", &p.ld_library_path),
        ("/usr/local/cuda", &p.usr_local_cuda),
    ]
    .into_iter()
    .filter_map(|(name, pick)| pick.as_ref().map(|p| (name, p)))
    .collect()
}

fn version_of(i: &ToolkitInstall) -> String {
    i.version.map_or_else(|| "version unknown".to_owned(), |v| format!("CUDA {v}"))
}

/// A build's configuration (CMake's compiler identification, FindCUDA, FindCUDAToolkit, a project's `CUDA detected`)
/// that found CUDA of one release where it, or a toolkit folder the text shows, is of another: one build compiles
/// with one toolkit and links or includes the other's (pytorch/pytorch#6376: Gloo's sub-build found 9.0, PyTorch
/// 9.1). The toolkit to point the build at is the newest placed one.
fn build_found_two(cx: &Ctx<'_>, t: &Toolkits, out: &mut Vec<Finding>) {
    if out.iter().any(|f| f.id == CONFLICT.id) {
        return;
    }
    let built = |i: &ToolkitInstall| i.version_source == Some(VersionSource::BuildConfig);
    if !t.installs.iter().any(built) {
        return;
    }
    let placed_toolkit =
        |i: &ToolkitInstall| matches!(i.kind, ToolkitKind::Local | ToolkitKind::Distro | ToolkitKind::Other);
    let found: Vec<&ToolkitInstall> =
        t.installs.iter().filter(|i| i.version.is_some() && (built(i) || placed_toolkit(i))).collect();
    let mut versions: Vec<CudaVersion> = found.iter().filter_map(|i| i.version.map(CudaVersion::major_minor)).collect();
    versions.sort();
    versions.dedup();
    if versions.len() < 2 {
        return;
    }
    let evidence: Vec<String> = found
        .iter()
        .map(|i| {
            let said = if built(i) { "the build's configuration found" } else { "the text shows" };
            format!("{said} {} at {}", version_of(i), i.root)
        })
        .collect();
    let target = found.iter().filter(|i| !i.root.starts_with('(')).max_by_key(|i| i.version);
    let fix = target.map(|target| {
        let root = target.root.as_str();
        let nvcc = target.nvcc.clone().unwrap_or_else(|| format!("{root}/bin/nvcc"));
        format!(
            "Point the whole build at one toolkit ({}, {}), in a fresh build folder: `{}` (CUDACXX={} in the \
             environment does the same for the compiler; FindCUDA takes CUDA_TOOLKIT_ROOT_DIR). Where the other is \
             a distribution's nvcc (/usr/bin/nvcc), remove its package or choose with update-alternatives.",
            root,
            version_of(target),
            fix::command(
                cx,
                &ShellCommand::new("cmake").args([
                    "-B".to_owned(),
                    "build".to_owned(),
                    format!("-DCMAKE_CUDA_COMPILER={nvcc}"),
                    format!("-DCUDAToolkit_ROOT={root}"),
                ]),
                false
            ),
            fix::word(cx, &nvcc)
        )
    });
    out.push(CONFLICT.finding(
        format!("The build found CUDA of {} releases", versions.len()),
        "One configuration took a CUDA compiler or toolkit of one release and another of a different release: the \
         build then compiles with one and includes or links the other's headers and libraries, which ends in \
         unsupported-architecture errors, undefined symbols or a library of the wrong release loaded at run time.",
        evidence,
        fix,
    ));
}

/// An nvcc shown running (its `--version`) of another CUDA release than the one NVIDIA's CUDA image named in the
/// text is for, where that image is a base or runtime flavour, which holds no nvcc: the nvcc came from elsewhere (a
/// distribution's `nvidia-cuda-toolkit` installed into the image), and builds mix its release with the image's
/// libraries (NVIDIA/nvidia-docker#740: apt's nvcc 9.1 in `nvidia/cuda:9.2-cudnn7-runtime-ubuntu18.04`).
fn nvcc_beside_runtime_image(t: &Toolkits, out: &mut Vec<Finding>) {
    if out.iter().any(|f| f.id == CONFLICT.id) {
        return;
    }
    let images: Vec<&ToolkitInstall> = t.installs.iter().filter(|i| i.kind == ToolkitKind::ContainerImage).collect();
    let [image] = images.as_slice() else { return };
    let (Some(want), None) = (image.version, image.nvcc.as_deref()) else { return };
    let Some(nvcc) = t
        .installs
        .iter()
        .find(|i| i.kind == ToolkitKind::Pasted && i.version.is_some_and(|v| v.major_minor() != want.major_minor()))
    else {
        return;
    };
    let shown = nvcc.version.map_or_else(String::new, |v| v.to_string());
    let name = image.root.trim_end_matches(" (container image)");
    out.push(CONFLICT.finding(
        format!("nvcc {shown} is not the CUDA {want} of the image {name}"),
        format!(
            "{name} is a base or runtime flavour of NVIDIA's CUDA image: it holds CUDA {want}'s runtime and libraries \
             but no nvcc, so the nvcc {shown} that ran there was installed apart (a distribution's \
             nvidia-cuda-toolkit package is the usual one). A build then compiles with CUDA {shown} against the \
             image's CUDA {want}, and checks that compare the two (TensorFlow's configure) refuse it."
        ),
        vec![format!("{name}: CUDA {want}, no nvcc"), format!("nvcc --version: release {shown}")],
        Some(format!(
            "{} Remove the separately installed compiler (`apt-get remove nvidia-cuda-toolkit`).",
            super::nvcc::devel_image_fix(&image.root)
        )),
    ));
}

/// The message gcc prints when an nvcc before CUDA 9 (which defines `__CUDACC_VER__` on its command line) compiles
/// CUDA 9 or newer's headers, which define it again (`assets/compat/errors.toml`).
const CUDACC_VER_REDEFINED: &str = "nvcc.cudacc_ver_redefined";

/// An nvcc older than CUDA 9 compiles a newer toolkit's headers (gcc's `"__CUDACC_VER__" redefined`): two toolkits in
/// one build, whatever else the text shows of them.
fn older_nvcc_on_newer_headers(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    if out.iter().any(|f| f.id == CONFLICT.id) {
        return;
    }
    let Some(m) = cx.s.messages.iter().find(|m| m.id == CUDACC_VER_REDEFINED) else { return };
    let root = m.values.get("include").map(|i| i.trim_end_matches("/include").to_owned());
    let headers =
        root.as_deref().map_or_else(|| "a CUDA 9 or newer toolkit".to_owned(), |r| format!("the toolkit at {r}"));
    let bin =
        root.as_deref().map_or_else(|| "the toolkit's bin folder".to_owned(), |r| fix::word(cx, &format!("{r}/bin")));
    out.push(CONFLICT.finding(
        format!("An nvcc older than CUDA 9 compiles the headers of {headers}"),
        format!(
            "nvcc before CUDA 9.0 defines `__CUDACC_VER__` for the host compiler, and CUDA 9's headers define it \
             again, so gcc warns that it is redefined: the build runs an older toolkit's nvcc (the first on PATH, or \
             the one the build names) against the headers of {headers} (CUDA_HOME or an include path). Code compiled \
             that way fails in the headers or links two releases."
        ),
        Vec::new(),
        Some(format!(
            "Build with the nvcc of the toolkit whose headers are used: put {bin} first on PATH (and CUDA_HOME at that \
             toolkit) in the shell that builds, then check with `nvcc --version`; `which -a nvcc` lists every nvcc on \
             PATH, so an old one left behind (a `/usr/local/bin/nvcc`, a distribution's nvidia-cuda-toolkit) can be \
             removed."
        )),
    ));
}

/// PyTorch's CMake package found two toolkits (`Found two conflicting CUDA installs:` up to 2.4, `versions` from
/// 2.5; cmake/public/cuda.cmake): FindCUDA's, from the nvcc it runs, and FindCUDAToolkit's, from CUDAToolkit_ROOT and
/// CUDA_PATH; 2.1 to 2.4 also stop on one release found in two folders (pytorch/pytorch#106971: /usr/local/cuda and
/// /usr/local/cuda-12.1, cured with CUDA_PATH at one of them).
fn cmake_found_two(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    if out.iter().any(|f| f.id == CONFLICT.id) {
        return;
    }
    let Some(m) = cx.s.messages.iter().find(|m| m.id == "torch.cmake_conflicting_cuda") else { return };
    let value = |k: &str| m.values.get(k).map(String::as_str);
    // An include folder, or the first of a `;` list, without its `/include`.
    let root = |k: &str| {
        value(k).and_then(|i| i.split(';').next()).map(|i| i.trim_end_matches('/').trim_end_matches("/include"))
    };
    let mut evidence = vec![format!("pasted line: {}", m.line)];
    for (which, by) in [("first", "nvcc's (FindCUDA)"), ("second", "FindCUDAToolkit's (CUDAToolkit_ROOT, CUDA_PATH)")] {
        if let (Some(v), Some(i)) = (value(&format!("{which}_version")), value(&format!("{which}_include"))) {
            evidence.push(format!("{by}: CUDA {v} in {i}"));
        }
    }
    let fix = match root("second_include").filter(|r| !r.is_empty()) {
        Some(r) => {
            let nvcc = fix::word(cx, &format!("{r}/bin/nvcc"));
            format!(
                "Give both searches one toolkit, the one the build should use, e.g. {}: {} and {} in the shell that \
                 builds, and configure a clean build folder (CMakeCache.txt keeps the old answers) with \
                 -DCUDAToolkit_ROOT={} -DCMAKE_CUDA_COMPILER={nvcc}.",
                fix::word(cx, r),
                fix::var_line(cx, "CUDA_PATH", r),
                fix::var_line(cx, "CUDA_HOME", r),
                fix::word(cx, r),
            )
        }
        None => "Give both searches one toolkit, the one the build should use: set CUDA_PATH and CUDA_HOME to its \
                 folder in the shell that builds, and configure a clean build folder (CMakeCache.txt keeps the old \
                 answers) with -DCUDAToolkit_ROOT=<that folder> -DCMAKE_CUDA_COMPILER=<that folder>/bin/nvcc."
            .to_owned(),
    };
    out.push(CONFLICT.finding(
        "CMake found two CUDA toolkits for the build (PyTorch's CUDA search)",
        "PyTorch's CMake package looks for CUDA twice: FindCUDA through the nvcc it runs (CUDA_TOOLKIT_ROOT_DIR, PATH, \
         CUDA_HOME) and FindCUDAToolkit through CUDAToolkit_ROOT and CUDA_PATH. They found different toolkits, or, in \
         PyTorch 2.1 to 2.4, one release through two folders (a /usr/local/cuda link and the versioned folder it \
         points at), and the build stops.",
        evidence,
        Some(fix),
    ));
}

/// A distribution's CUDA package is the nvcc a build ran (nvcc's own verbose listing says so: Debian's and
/// Ubuntu's nvidia-cuda-toolkit, behind /usr/bin/nvcc, lives in /usr/lib/nvidia-cuda-toolkit) while another
/// toolkit of another release is installed (a `cuda-X.Y` folder on the PATH it ran with, CUDA_HOME, a folder
/// shown): the build compiles with the distribution's release, not the toolkit meant.
fn distribution_nvcc_ran(cx: &Ctx<'_>, t: &Toolkits, out: &mut Vec<Finding>) {
    if out.iter().any(|f| f.id == CONFLICT.id) {
        return;
    }
    let Some(ran) = t.installs.iter().find(|i| i.kind == ToolkitKind::Distro && i.nvcc.is_some()) else {
        return;
    };
    let differs = |v: CudaVersion| ran.version.is_none_or(|r| r.major_minor() != v.major_minor());
    // The toolkit meant: one the text shows (a `cuda-X.Y` folder, conda's), else the one it says is installed.
    let shown = t
        .installs
        .iter()
        .filter(|i| matches!(i.kind, ToolkitKind::Local | ToolkitKind::Conda | ToolkitKind::Other))
        .filter_map(|i| Some((i, i.version.filter(|v| differs(*v))?)))
        .max_by_key(|(_, v)| *v);
    let (meant_version, meant_root, meant_evidence) = match (shown, cx.s.stated_toolkit.as_ref()) {
        (Some((meant, v)), _) => (
            v.major_minor(),
            Some(meant.root.clone()),
            format!("also installed: {} (CUDA {})", meant.root, v.major_minor()),
        ),
        (None, Some((v, line))) if differs(*v) => (
            v.major_minor(),
            None,
            format!("the text says the toolkit installed is CUDA {}: \"{line}\"", v.major_minor()),
        ),
        _ => return,
    };
    let ran_version =
        ran.version.map_or_else(|| "release not shown".to_owned(), |v| format!("CUDA {}", v.major_minor()));
    let root = meant_root.clone().unwrap_or_else(|| format!("/usr/local/cuda-{meant_version}"));
    let nvcc = shown.and_then(|(m, _)| m.nvcc.clone()).unwrap_or_else(|| format!("{root}/bin/nvcc"));
    let debian = ran.root.starts_with("/usr/lib/nvidia-cuda-toolkit") || ran.nvcc.as_deref() == Some("/usr/bin/nvcc");
    let package = if debian {
        "the distribution's nvidia-cuda-toolkit package (`sudo apt remove nvidia-cuda-toolkit`; it is not needed \
         beside NVIDIA's toolkit)"
    } else {
        "the distribution's CUDA package that installed it"
    };
    let at = meant_root.map_or_else(|| " the text says is installed".to_owned(), |r| format!(" at {r}"));
    let (bin, nvcc) = (fix::word(cx, &format!("{root}/bin")), fix::word(cx, &nvcc));
    out.push(CONFLICT.finding(
        format!(
            "The build ran the distribution's nvcc ({ran_version}, {}), not the CUDA {meant_version} toolkit{at}",
            ran.root
        ),
        format!(
            "The nvcc that ran is a distribution's package's (Debian's and Ubuntu's nvidia-cuda-toolkit put it at \
             /usr/bin/nvcc; here {}), found before the CUDA {meant_version} toolkit: its /usr/bin/nvcc is on every \
             PATH, and CMake keeps the compiler it found in its cache. The build then compiles with that package's \
             release and headers, and fails where the code or the GPU needs the other one (an unknown `sm_XX` or \
             `compute_XX`, a missing libdevice or header).",
            ran.root
        ),
        vec![format!("nvcc that ran: {} ({ran_version})", ran.nvcc.as_deref().unwrap_or(&ran.root)), meant_evidence],
        Some(format!(
            "Remove {package}, or name NVIDIA's compiler to the build: {} first on PATH (`export PATH={}:$PATH`), \
             for CMake `-DCMAKE_CUDA_COMPILER={}` (or `export CUDACXX={}`) and CUDA_HOME={} for PyTorch extensions; \
             then delete the build folder's CMakeCache.txt so CMake looks for nvcc again, and check with `nvcc \
             --version`.",
            bin,
            bin,
            nvcc,
            nvcc,
            fix::word(cx, &root)
        )),
    ));
}

fn conflict(cx: &Ctx<'_>, t: &Toolkits, out: &mut Vec<Finding>) {
    let picked: Vec<&ToolkitInstall> = t.picked_roots().into_iter().filter_map(|r| t.install(r)).collect();
    let mut versions: Vec<CudaVersion> =
        picked.iter().filter_map(|i| i.version.map(CudaVersion::major_minor)).collect();
    versions.sort();
    versions.dedup();
    if versions.len() < 2 {
        return;
    }
    let evidence: Vec<String> = named_picks(t)
        .iter()
        .filter_map(|(name, pick)| {
            let install = t.install(pick.install_root.as_deref()?)?;
            Some(format!("{name}: {} → {} ({})", pick.named, install.root, version_of(install)))
        })
        .collect();
    let majors = framework_majors(cx);
    // A toolkit whose folder the text does not show (an nvcc that printed its version, `(pasted)`) is one no change
    // can point the names at: the others are the targets, where there are any.
    let placed: Vec<&ToolkitInstall> = picked.iter().copied().filter(|i| !i.root.starts_with('(')).collect();
    let picked = if placed.is_empty() { picked } else { placed };
    let with_nvcc: Vec<&ToolkitInstall> = picked.iter().copied().filter(|i| i.nvcc.is_some()).collect();
    let pool = if with_nvcc.is_empty() { &picked } else { &with_nvcc };
    // A toolkit newer than the CUDA the driver supports builds programs that run here only through
    // minor-version compatibility (or not at all): one the driver runs in full comes first.
    let driver = cx.driver.cuda.map(CudaVersion::major_minor);
    let runs = |i: &ToolkitInstall| driver.is_none_or(|d| i.version.is_none_or(|v| v.major_minor() <= d));
    let fitting: Vec<&ToolkitInstall> = pool.iter().copied().filter(|i| runs(i)).collect();
    // The newest toolkit left out for the driver, when one is and another fits.
    let passed_over =
        (!fitting.is_empty()).then(|| pool.iter().filter(|i| !runs(i)).filter_map(|i| i.version).max()).flatten();
    let pool = if fitting.is_empty() { pool } else { &fitting };
    let target = pool
        .iter()
        .filter(|i| i.version.is_some_and(|v| majors.contains(&v.major)))
        .max_by_key(|i| i.version)
        .or_else(|| pool.iter().max_by_key(|i| i.version))
        .copied();
    let plan = target.and_then(|target| {
        let why = match (target.version.is_some_and(|v| majors.contains(&v.major)), passed_over.is_some()) {
            (true, _) => "it matches your framework's CUDA major",
            (false, true) => "the newest the driver runs in full",
            (false, false) => "the newest",
        };
        let cost = match (driver, target.version) {
            (Some(d), Some(v)) if v.major_minor() > d => format!(
                "; it is newer than the CUDA {d} the driver supports, so what it builds runs here only through \
                 minor-version compatibility, if at all"
            ),
            (Some(d), _) if let Some(newer) = passed_over => {
                format!("; not CUDA {}: the driver supports CUDA {d} at most", newer.major_minor())
            }
            _ => String::new(),
        };
        let goal = format!("every name picks {} ({}, {why}{cost})", target.root, version_of(target));
        // No name to change (each already picks it, or only a name no change reaches differs): no plan.
        let changes = agree_changes(cx, t, target);
        (!changes.is_empty()).then(|| fix::change(None, goal, changes))
    });
    let finding = CONFLICT.finding(
        format!("The names that choose a CUDA toolkit pick {} different releases", versions.len()),
        "Each name below leads to a different toolkit release. A build then takes nvcc from one, headers from \
         another and libraries from a third, which ends in version errors or undefined symbols when compiling CUDA \
         extensions or programs.",
        evidence,
        None,
    );
    out.push(finding.with_plan(plan));
}

/// One conda environment whose nvcc (`cuda-nvcc`) is of another CUDA release than its runtime packages
/// (`cudatoolkit`, `cuda-cudart`, the `cuda-version` pin): the pasted reader gives each its own install. What nvcc
/// builds there (JAX's and CuPy's kernels, extensions) is compiled for one release and run with the other's
/// libraries.
fn conda_packages_disagree(t: &Toolkits, out: &mut Vec<Finding>) {
    let conda: Vec<&ToolkitInstall> = t.installs.iter().filter(|i| i.kind == ToolkitKind::Conda).collect();
    let (Some(nvcc), Some(runtime)) =
        (conda.iter().find(|i| i.nvcc.is_some()), conda.iter().find(|i| i.nvcc.is_none()))
    else {
        return;
    };
    let (Some(built), Some(runs)) = (nvcc.version, runtime.version) else { return };
    if built.major_minor() == runs.major_minor() {
        return;
    }
    let package = runtime.root.rsplit(' ').next().unwrap_or("cudatoolkit");
    let pin = runs.major_minor();
    out.push(CONFLICT.finding(
        format!("The conda environment's nvcc is CUDA {} and its {package} CUDA {pin}", built.major_minor()),
        format!(
            "conda installed cuda-nvcc of CUDA {} beside {package} of CUDA {pin} in one environment (an unpinned \
             cuda-nvcc takes the newest release). What that nvcc compiles (JAX's and CuPy's kernels, PyTorch \
             extensions) targets one release and runs with the other's libraries: `no kernel image is available`, \
             PTX that the libraries cannot load, undefined symbols.",
            built.major_minor()
        ),
        vec![format!("cuda-nvcc {built} (conda)"), format!("{package} {runs} (conda)")],
        Some(format!(
            "Pin nvcc to the environment's CUDA: `conda install cuda-nvcc={pin} -c nvidia` (in environment.yml \
             `- cuda-nvcc={pin}`, or `- cuda-version={pin}` so every CUDA package follows one release); or move the \
             whole environment to CUDA {} with its runtime packages of that release.",
            built.major_minor()
        )),
    ));
}

/// The changes that make every name pick `target`.
fn agree_changes(cx: &Ctx<'_>, t: &Toolkits, target: &ToolkitInstall) -> Vec<Change> {
    let off = |pick: &Option<Pick>| pick.as_ref().is_some_and(|p| p.install_root.as_deref() != Some(&target.root));
    let bin = target.nvcc.as_deref().map_or_else(|| format!("{}/bin", target.root), |n| parent_dir(n).to_owned());
    let windows = cx.os == OsFamily::Windows;
    let mut lines = Vec::new();
    if off(&t.picks.path) {
        lines.push(Change::PrependPath { dir: bin });
    }
    for (name, pick) in [("CUDA_HOME", &t.picks.cuda_home), ("CUDA_PATH", &t.picks.cuda_path)] {
        if off(pick) {
            lines.push(if windows {
                // `setx` keeps it for every new shell of this user.
                Change::Windows { argv: vec!["setx".into(), name.into(), target.root.clone()] }
            } else {
                fix::set_var(name, &target.root)
            });
        }
    }
    if let Some(p) = t.picks.ld_library_path.as_ref().filter(|_| off(&t.picks.ld_library_path)) {
        lines.push(fix::ld_library_path_without(
            cx,
            &[parent_dir(&p.named)],
            target.lib_dirs.first().map(String::as_str),
        ));
    }
    if let Some(p) = t.picks.usr_local_cuda.as_ref().filter(|_| off(&t.picks.usr_local_cuda))
        && p.named != "/usr/local/cuda"
        && target.root.starts_with("/usr/local/cuda-")
    {
        lines.push(Change::Root {
            argv: vec!["ln".into(), "-sfn".into(), target.root.clone(), "/usr/local/cuda".into()],
        });
    }
    lines
}

/// The CUDA majors the frameworks of every environment were built for.
fn framework_majors(cx: &Ctx<'_>) -> Vec<u32> {
    cx.frameworks().filter_map(|(_, f)| build_cuda(f)).map(|(c, _)| c.major).collect()
}

/// The CUDA major of an environment's pip `nvidia-*` wheels, when they agree on one.
fn wheels_major(env: &PythonEnv) -> Option<u32> {
    let mut majors: Vec<u32> = env.cuda_wheels.iter().filter_map(wheel_cuda_major).collect();
    majors.sort_unstable();
    majors.dedup();
    (majors.len() == 1).then(|| majors[0])
}

fn stale_paths(cx: &Ctx<'_>, installs: &[ToolkitInstall], out: &mut Vec<Finding>) {
    let copies = cx.s.cudnn.value().map(Vec::as_slice).unwrap_or_default();
    for env in cx.envs() {
        let Some(wheels) = wheels_major(env) else { continue };
        for dir in &cx.s.env.ld_library_path {
            let mut here: Vec<String> = installs
                .iter()
                .filter(|i| i.lib_dirs.iter().any(|d| same_dir(d, dir)))
                .filter_map(|i| i.version.filter(|v| v.major != wheels).map(|v| format!("CUDA {v} toolkit libraries")))
                .collect();
            here.extend(
                copies
                    .iter()
                    .filter(|c| same_dir(parent_dir(&c.location), dir))
                    .filter_map(|c| c.cuda_major.filter(|m| *m != wheels).map(|m| (c, m)))
                    .map(|(c, m)| format!("cuDNN {} built for CUDA {m} ({})", cudnn_version_text(c), c.location)),
            );
            if here.is_empty() {
                continue;
            }
            let mut evidence = vec![format!("LD_LIBRARY_PATH folder {dir}: {}", here.join(", "))];
            let names: Vec<String> = env
                .cuda_wheels
                .iter()
                .filter(|w| wheel_cuda_major(w).is_some())
                .map(|w| format!("{} {}", w.name, w.version))
                .collect();
            evidence.push(format!("{}: CUDA {wheels} wheels {}", env.name, names.join(", ")));
            evidence
                .extend(env.frameworks.iter().filter(|f| build_cuda(f).is_some()).map(|f| describe_framework(env, f)));
            out.push(STALE_PATH.finding(
                format!("LD_LIBRARY_PATH puts CUDA libraries of another major in front of {}'s wheels", env.name),
                format!(
                    "The loader searches LD_LIBRARY_PATH before the folders the framework's libraries point to, so a \
                     library here whose file name is also in the CUDA {wheels} wheels (cuDNN's libcudnn.so.9 is named \
                     the same in its CUDA 12 and CUDA 13 builds) is loaded from {dir} instead, built for the other \
                     major. The results are undefined-symbol errors at import or CUDA errors at first use."
                ),
                evidence,
                None,
            )
            .with_plan(out_of_loader_path(cx, dir)));
        }
    }
}

/// The toolkit `torch.utils.cpp_extension` and build scripts use: CUDA_HOME, CUDA_PATH, nvcc on PATH,
/// then /usr/local/cuda, the first that leads to an install with nvcc and a version.
fn build_toolkit(t: &Toolkits) -> Option<(&'static str, &ToolkitInstall, CudaVersion)> {
    let p = &t.picks;
    [
        ("CUDA_HOME", &p.cuda_home),
        ("CUDA_PATH", &p.cuda_path),
        ("nvcc on PATH", &p.path),
        ("/usr/local/cuda", &p.usr_local_cuda),
    ]
    .into_iter()
    .find_map(|(name, pick)| {
        let i = t.install(pick.as_ref()?.install_root.as_deref()?)?;
        Some((name, i, i.version?.major_minor())).filter(|_| i.nvcc.is_some())
    })
}

/// The toolkit `/usr/local/cuda` points to, from a pasted folder listing (`ls -l /usr/local/cuda*`: the
/// version is the folder's name, no file was read) that says nothing of its nvcc: NVIDIA's installers make
/// that link to the toolkit they install. On this machine the probe looks for the nvcc itself.
fn default_toolkit(t: &Toolkits) -> Option<(&str, CudaVersion)> {
    let i = t.install(t.picks.usr_local_cuda.as_ref()?.install_root.as_deref()?)?;
    let listed = i.kind == ToolkitKind::Local && i.nvcc.is_none() && i.version_source.is_none();
    listed.then_some((i.root.as_str(), i.version?.major_minor()))
}

/// One framework's CUDA build, as the explanation names it.
struct Built {
    /// `torch 2.3.1+cu121 (CUDA 12.1 build) in pasted`, or `torch.version.cuda 9.0.176 in pasted`.
    evidence: String,
    name: String,
    version: String,
    cuda: CudaVersion,
    /// Only the major is known (`cupy-cuda12x`).
    major_only: bool,
}

/// The CUDA builds of every environment's frameworks (JAX left out: its plugins pin their own
/// CUDA wheels), and torch's `torch.version.cuda` where no torch of a known CUDA build is listed
/// (a paste that printed only that).
fn framework_builds(cx: &Ctx<'_>) -> Vec<Built> {
    let mut out = Vec::new();
    for env in cx.envs() {
        for fw in env.frameworks.iter().filter(|f| f.name != "jax") {
            if let Some((cuda, major_only)) = build_cuda(fw) {
                let (name, version) = (fw.name.clone(), fw.version.clone());
                out.push(Built { evidence: describe_framework(env, fw), name, version, cuda, major_only });
            }
        }
        let torch_known = env.frameworks.iter().any(|f| f.name == "torch" && build_cuda(f).is_some());
        if !torch_known
            && let Some(cuda) = env.deep_torch().and_then(|t| t.cuda.as_deref())
            && let Ok(v) = cuda.parse::<CudaVersion>()
        {
            out.push(Built {
                evidence: format!("torch.version.cuda {cuda} in {}", env.name),
                name: "torch".to_owned(),
                version: format!("(torch.version.cuda {cuda})"),
                cuda: v.major_minor(),
                major_only: false,
            });
        }
    }
    out
}

fn explain(cx: &Ctx<'_>, t: Option<&Toolkits>, out: &mut Vec<Finding>) {
    let (mut evidence, first, version) = match t.and_then(build_toolkit) {
        Some((name, nvcc, version)) => (
            vec![format!("nvcc {version} ({name} → {})", nvcc.root)],
            format!("nvcc {version} is the compiler a build would use."),
            version,
        ),
        None => match t.and_then(default_toolkit) {
            Some((root, version)) => (
                vec![format!("CUDA {version} (/usr/local/cuda → {root})")],
                format!(
                    "/usr/local/cuda points to CUDA {version}, the toolkit builds use unless CUDA_HOME or PATH names \
                     another."
                ),
                version,
            ),
            None => {
                explain_without_nvcc(cx, t, out);
                return;
            }
        },
    };
    let mut detail = vec![format!(
        "{first} Prebuilt wheels (PyTorch, JAX, CuPy, TensorFlow) bring their own CUDA runtime and never run nvcc, so \
         its version does not have to match theirs; it matters only when compiling CUDA code or extensions."
    )];
    let mut plan = None;
    for fw in framework_builds(cx) {
        let (build, major_only) = (fw.cuda, fw.major_only);
        let differs = if major_only { build.major != version.major } else { build.major_minor() != version };
        if !differs {
            continue;
        }
        evidence.push(fw.evidence.clone());
        if build.major != version.major && fw.name == "torch" {
            detail.push(format!(
                "Building a PyTorch extension against {} {} with this nvcc will fail: torch.utils.cpp_extension \
                 refuses a CUDA major ({}) other than the one PyTorch was built with ({}); a different minor only \
                 warns.",
                fw.name, fw.version, version.major, build.major
            ));
            match t.and_then(|t| cuda_home_for(cx, t, build)) {
                Some(target) => plan = Some(target),
                None => detail.push(format!(
                    "No CUDA {} toolkit is planned for it: the driver supports CUDA {} at most, so what it builds \
                     would not run here (a {} build for this driver is the fix).",
                    build.major_minor(),
                    cx.driver.cuda.map_or_else(String::new, |d| d.major_minor().to_string()),
                    fw.name
                )),
            }
        }
    }
    if let Some(driver) = cx.driver.cuda.map(CudaVersion::major_minor).filter(|d| *d != version) {
        evidence.push(cx.driver.evidence.clone().unwrap_or_else(|| format!("driver supports CUDA up to {driver}")));
        let runs = match cx.kb.cuda.judge(version, &cx.driver, cx.os) {
            RuntimeVerdict::Supported | RuntimeVerdict::Unknown => String::new(),
            RuntimeVerdict::MinorVersionCompatible { .. } => format!(
                " Programs built with nvcc {version} run on this driver only through minor-version compatibility \
                 (PTX compiled at run time and newer APIs fail)."
            ),
            RuntimeVerdict::TooOld { .. } => format!(" Programs built with nvcc {version} do not run on this driver."),
        };
        detail.push(format!(
            "nvidia-smi's \"CUDA Version: {driver}\" is the newest CUDA the driver supports, not an installed \
             toolkit.{runs}"
        ));
    }
    if evidence.len() < 2 {
        return;
    }
    // A note that calls the difference normal carries no fix; one with a fix says what it is for.
    let title = if plan.is_some() {
        format!("nvcc {version} cannot build extensions for a framework of another CUDA major")
    } else {
        "The CUDA versions shown by nvcc, the driver and the frameworks differ, which is normal".to_owned()
    };
    let finding = HARMLESS.finding(&title, detail.join(" "), evidence, None);
    out.push(finding.with_plan(plan));
}

/// The plan that points `CUDA_HOME` at an installed toolkit of the build's major, or installs one;
/// never a toolkit newer than the CUDA the driver supports (what it builds would not run): `None`
/// when the build's own CUDA is newer than that.
fn cuda_home_for(cx: &Ctx<'_>, t: &Toolkits, build: CudaVersion) -> Option<PlanTarget> {
    let major = build.major;
    let runs = |v: CudaVersion| cx.driver_cuda().is_none_or(|d| v.major_minor() <= d.major_minor());
    if !runs(build) {
        return None;
    }
    let goal = format!("extensions build against the CUDA {major} toolkit");
    let found =
        t.installs.iter().filter(|i| i.nvcc.is_some() && i.version.is_some_and(|v| v.major == major && runs(v)));
    Some(match found.max_by_key(|i| i.version) {
        Some(i) => fix::change(None, goal, vec![fix::set_var("CUDA_HOME", &i.root)]),
        None => {
            let v = build.major_minor();
            let root = if cx.os == OsFamily::Windows {
                format!("C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v{v}")
            } else {
                format!("/usr/local/cuda-{v}")
            };
            let install = Change::Manual {
                text: format!("Install the CUDA {v} toolkit (https://developer.nvidia.com/cuda-toolkit-archive)."),
            };
            fix::change(None, goal, vec![install, fix::set_var("CUDA_HOME", &root)])
        }
    })
}

/// Without an nvcc: an NVIDIA CUDA container image whose CUDA is older than the driver's "CUDA
/// Version" (nvidia-smi inside the container shows the host's driver, which the NVIDIA Container
/// Toolkit mounts in); one newer than the driver is the driver's finding, not a harmless one.
fn explain_without_nvcc(cx: &Ctx<'_>, t: Option<&Toolkits>, out: &mut Vec<Finding>) {
    let Some(driver) = cx.driver_cuda().map(CudaVersion::major_minor) else { return };
    let images: Vec<(&ToolkitInstall, CudaVersion)> = t
        .map(|t| t.installs.as_slice())
        .unwrap_or_default()
        .iter()
        .filter(|i| i.kind == ToolkitKind::ContainerImage)
        .filter_map(|i| Some((i, i.version?.major_minor())))
        .filter(|(_, v)| *v < driver)
        .collect();
    let Some((first, version)) = images.first() else { return };
    let mut evidence =
        vec![cx.driver.evidence.clone().unwrap_or_else(|| format!("driver supports CUDA up to {driver}"))];
    evidence.extend(images.iter().map(|(i, v)| format!("{}: CUDA {v}", i.root)));
    let detail = format!(
        "nvidia-smi's \"CUDA Version: {driver}\" is the newest CUDA the driver supports, not an installed toolkit. \
         Inside a container nvidia-smi is the host driver's (the NVIDIA Container Toolkit mounts the host's driver \
         libraries and nvidia-smi in), so it shows the host's level; the image's own CUDA {version} ({}) is what \
         programs in it use, and it runs because the driver supports CUDA up to {driver}.",
        first.root
    );
    out.push(HARMLESS.finding(
        "nvidia-smi in the container shows the host driver's CUDA level, not the image's CUDA, which is normal",
        detail,
        evidence,
        None,
    ));
}

/// The plan that takes `dir` out of `LD_LIBRARY_PATH`.
fn out_of_loader_path(cx: &Ctx<'_>, dir: &str) -> PlanTarget {
    fix::change(None, format!("{dir} out of the loader path"), vec![fix::ld_library_path_without(cx, &[dir], None)])
}
