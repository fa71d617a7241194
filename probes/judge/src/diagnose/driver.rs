//! A framework's CUDA build against the driver's CUDA level, minor-version compatibility included.

use super::context::{build_cuda, describe_framework};
use super::{Ctx, Rule};
use gpu_doctor_kb::RuntimeVerdict;
use gpu_doctor_model::{Category, CudaVersion, DriverVersion, Finding, PlanTarget, Severity, ToolkitKind};

const SOURCE: &str = "NVIDIA CUDA Compatibility guide (minor-version compatibility, \
    https://docs.nvidia.com/deploy/cuda-compatibility/) and the CUDA release notes' driver table";

pub(super) const TOO_OLD: Rule = Rule {
    id: "driver.too_old_for_runtime",
    category: Category::DriverTooOldForRuntime,
    severity: Severity::Error,
    trigger: "A framework's CUDA build, or an NVIDIA CUDA container image's CUDA (`nvidia/cuda:10.2-…` named \
              in pasted text), needs a newer driver: a newer CUDA major than the driver supports, or a driver below \
              that major's minor-version-compatibility floor (CUDA before 11 had none). Or the loader's `undefined \
              symbol: cuX` for a driver API call (`cu` and a capital), or Windows' `procedure entry point cuX could \
              not be located in the dynamic link library nvcuda.dll`: libcuda or nvcuda.dll, the driver's, lacks it. \
              Or CUDA's \
              error 35 (`CUDA driver version is insufficient for CUDA runtime version`) beside the driver's version \
              (nvidia-smi's own CUDA level, or a driver version the text states), on a host the text shows neither as a container nor as WSL, where the \
              driver does not run every CUDA the program could have been built for (below R525 with none named): \
              the runtime newer than the driver is the likelier cause, a missing libcuda said beside it.",
    source: SOURCE,
};

pub(super) const MINOR_COMPAT: Rule = Rule {
    id: "driver.minor_version_compat",
    category: Category::DriverTooOldForRuntime,
    severity: Severity::Warning,
    trigger: "A framework's CUDA build is a newer minor of the driver's CUDA major: it starts through \
              minor-version compatibility, but PTX compiled by the newer toolkit and newer APIs fail.",
    source: SOURCE,
};

pub(super) const RULES: &[Rule] = &[TOO_OLD, MINOR_COMPAT];

/// The loader's `undefined symbol: cuX` for a driver API call (`cu` and a capital: cuda.h's names, which libcuda
/// exports without symbol versions; the runtime's are `cuda…`, the libraries' `cudnn…`, `cublas…`): libcuda comes with
/// the driver, so the driver is older than the CUDA the program was built with (`cuDevicePrimaryCtxSetFlags_v2`, CUDA
/// 11's, under driver 440: trexminer/T-Rex#95).
fn driver_api_symbol(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let driver_call = |s: &str| s.strip_prefix("cu").is_some_and(|r| r.starts_with(|c: char| c.is_ascii_uppercase()));
    // The loader's line names libcuda's missing symbol; Windows' names nvcuda.dll, the driver's DLL.
    let in_driver = |m: &&gpu_doctor_model::ObservedMessage| {
        m.id == "ld.nvidia_symbol_missing"
            || (m.id == "windows.entry_point_not_found"
                && m.values.get("dll").is_some_and(|d| d.eq_ignore_ascii_case("nvcuda.dll")))
    };
    let Some((symbol, windows)) =
        cx.s.messages
            .iter()
            .filter(in_driver)
            .find_map(|m| m.values.get("symbol").filter(|s| driver_call(s)).map(|s| (s, m.id.starts_with("windows."))))
    else {
        return;
    };
    let library = if windows { "nvcuda.dll" } else { "libcuda" };
    let mut evidence = vec![format!("{library}, the driver's library, has no {symbol}")];
    evidence.extend(cx.driver.evidence.clone());
    let level = cx.driver_cuda().map_or_else(String::new, |c| format!(" (this one supports CUDA up to {c})"));
    out.push(TOO_OLD.finding(
        format!("The NVIDIA driver is older than the CUDA the program was built with: its {library} has no {symbol}"),
        format!(
            "{symbol} is a CUDA driver API call, which {library}, installed with the NVIDIA driver, provides from the \
             driver release of the CUDA that added it on. The program was built with a newer CUDA than this \
             driver{level} supports."
        ),
        evidence,
        Some(
            "Update the NVIDIA driver to one that supports the CUDA the program was built with (its release notes or \
             start-up banner name it; `nvidia-smi` shows the newest CUDA the driver runs), or use the program's build \
             for an older CUDA, one the driver supports."
                .to_owned(),
        ),
    ));
}

/// CUDA's error 35 beside a driver the text shows: cudaErrorInsufficientDriver means the runtime is newer than the
/// driver supports, or no libcuda was found to load. On a host (not a container, whose libraries the runtime may
/// not have mounted, nor WSL, whose libcuda sits in its own folder) where presence.libcuda_missing did not conclude
/// the library is missing (a driver that runs every CUDA the program could have), the first is the likelier, the
/// second said beside it (bytedeco/javacpp-presets#918: OpenCV's GpuMat under driver 418).
fn runtime_newer_than_driver(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    // CUDA's stub libcuda (the toolkit's lib64/stubs, for linking only) answers 35 on every call.
    let stubs =
        !super::libcuda::stub_evidence(cx).is_empty() || cx.s.messages.iter().any(|m| m.id == "cuda.stub_library");
    if stubs
        || cx.s.platform.container.is_some()
        || cx.s.platform.wsl.is_some()
        || out.iter().any(|f| f.id == TOO_OLD.id || f.id.starts_with("containers."))
        || super::libcuda::driver_suffices(cx).is_some()
    {
        return;
    }
    let (Some(driver), Some(level), Some(driver_evidence)) =
        (cx.driver.version.as_ref(), cx.driver_cuda(), cx.driver.evidence.clone())
    else {
        return;
    };
    // The driver's own CUDA level (nvidia-smi's header, NVML), or the level of a driver version the text states
    // (`I am running CUDA 11.7 and driver version 472.12`, SYSTRAN/faster-whisper#866): the driver installed.
    let Some(m) = cx.s.messages.iter().find(|m| m.id == "cuda.insufficient_driver") else {
        return;
    };
    out.push(TOO_OLD.finding(
        format!("The program's CUDA runtime is likely newer than driver {driver} supports (CUDA up to {level})"),
        format!(
            "CUDA's error 35 means the runtime the program loaded needs a newer driver than the one installed, or found \
             no driver library (libcuda) at all. The likelier here: the program was built with a CUDA newer than \
             {level}. Where it was built for CUDA {level} or older, the driver's CUDA library is what is missing \
             (`ldconfig -p | grep libcuda.so.1` prints nothing)."
        ),
        vec![format!("pasted line: {}", m.line), driver_evidence],
        Some(format!(
            "Update the NVIDIA driver to one that supports the CUDA the program was built with (its release notes or \
             start-up banner name it; `nvidia-smi` then shows a CUDA level at least that), or use the program's build \
             for CUDA {level} or older."
        )),
    ));
}

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    driver_api_symbol(cx, out);
    let Some(driver_evidence) = cx.driver.evidence.clone() else { return };
    // `jax` carries its CUDA plugin's build; the plugin itself is judged.
    for (env, fw) in cx.frameworks().filter(|(_, f)| f.name != "jax") {
        let Some((runtime, major_only)) = build_cuda(fw) else { continue };
        let what = describe_framework(env, fw);
        let mut evidence = vec![what.clone(), driver_evidence.clone()];
        if let Some(torch) = env.deep_torch()
            && fw.name == "torch"
            && torch.cuda_available == Some(false)
        {
            evidence.push("torch.cuda.is_available() returned False".to_owned());
        }
        match cx.kb.cuda.judge(runtime, &cx.driver, cx.os) {
            RuntimeVerdict::Supported | RuntimeVerdict::Unknown => {}
            RuntimeVerdict::MinorVersionCompatible { .. } if major_only => {}
            RuntimeVerdict::MinorVersionCompatible { full } => {
                let full_text =
                    full.as_ref().map_or_else(String::new, |d| format!(" Driver {d} or newer supports it in full."));
                // The driver planner (`gpu-doctor-installers`) writes the fix from this target.
                let plan = full.as_ref().map(|d| PlanTarget::Driver { min_branch: Some(d.major()) });
                let finding = MINOR_COMPAT.finding(
                    format!("{} {} runs on this driver only through minor-version compatibility", fw.name, fw.version),
                    format!(
                        "It was built with CUDA {runtime}, newer than the CUDA {} this driver supports. CUDA {} programs \
                         start on it, but kernels shipped only as PTX and APIs added after CUDA {} fail \
                         (\"the provided PTX was compiled with an unsupported toolchain\").{full_text}",
                        level_text(cx),
                        runtime.major,
                        level_text(cx),
                    ),
                    evidence,
                    None,
                );
                out.push(finding.with_plan(plan));
            }
            RuntimeVerdict::TooOld { floor, full } => {
                let needed = floor.clone().or(full.clone());
                let build = if major_only { format!("CUDA {}", runtime.major) } else { format!("CUDA {runtime}") };
                out.push(TOO_OLD.finding(
                    format!("{} {} needs a newer NVIDIA driver than the one installed", fw.name, fw.version),
                    format!(
                        "It was built with {build}; this driver supports CUDA up to {}.{} Until then it cannot use the \
                         GPU (PyTorch: \"The NVIDIA driver on your system is too old\", CUDA error 35 \
                         \"CUDA driver version is insufficient for CUDA runtime version\").",
                        level_text(cx),
                        needs_text(runtime, needed.as_ref(), full.as_ref()),
                    ),
                    evidence,
                    None,
                )
                // A build for this driver, where one exists, keeps the driver: the plan says which;
                // where none does, the plan updates the driver. The installers write the fix from it.
                .with_plan(PlanTarget::FrameworkBuild {
                    env: env.prefix.clone(),
                    framework: fw.name.clone(),
                    or_driver: full.as_ref().or(floor.as_ref()).map(DriverVersion::major),
                }));
            }
        }
    }
    images(cx, &driver_evidence, out);
    runtime_newer_than_driver(cx, out);
}

/// NVIDIA's CUDA container images named in pasted text: the programs in one are built with its CUDA, which
/// the host's driver runs only where it supports that CUDA (the image's NVIDIA_REQUIRE_CUDA, which the
/// NVIDIA Container Toolkit checks; Singularity/Apptainer do not, so CUDA answers error 35 there, as in
/// NVIDIA/hpc-container-maker#239, for which this was written).
fn images(cx: &Ctx<'_>, driver_evidence: &str, out: &mut Vec<Finding>) {
    let installs = cx.s.toolkits.value().map(|t| t.installs.as_slice()).unwrap_or_default();
    for image in installs.iter().filter(|i| i.kind == ToolkitKind::ContainerImage) {
        let Some(cuda) = image.version.map(CudaVersion::major_minor) else { continue };
        let RuntimeVerdict::TooOld { floor, full } = cx.kb.cuda.judge(cuda, &cx.driver, cx.os) else { continue };
        let needed = full.as_ref().or(floor.as_ref());
        let name = image.root.trim_end_matches(" (container image)");
        out.push(
            TOO_OLD
                .finding(
                    format!("The container image {name} needs a newer NVIDIA driver than the host's"),
                    format!(
                        "The image's programs are built with CUDA {cuda}; the host's driver, which the container uses, \
                         supports CUDA up to {}.{} CUDA programs in it fail to start (CUDA error 35, \"CUDA driver \
                         version is insufficient for CUDA runtime version\"; Docker with NVIDIA's toolkit refuses to \
                         start it: \"unsatisfied condition: cuda>={cuda}\"). Or use an image of the CUDA the driver \
                         supports.",
                        level_text(cx),
                        needs_text(cuda, floor.as_ref(), full.as_ref()),
                    ),
                    vec![format!("{name}: an NVIDIA CUDA {cuda} image"), driver_evidence.to_owned()],
                    None,
                )
                .with_plan(PlanTarget::Driver { min_branch: needed.map(DriverVersion::major) }),
        );
    }
}

fn level_text(cx: &Ctx<'_>) -> String {
    cx.driver_cuda().map_or_else(|| "an older version".to_owned(), |c| c.to_string())
}

fn needs_text(runtime: CudaVersion, floor: Option<&DriverVersion>, full: Option<&DriverVersion>) -> String {
    match (floor, full) {
        (Some(f), Some(u)) if f != u => {
            format!(" A CUDA {} program needs driver {f} or newer; {u} supports CUDA {runtime} in full.", runtime.major)
        }
        (Some(f), _) | (None, Some(f)) => format!(" It needs driver {f} or newer."),
        (None, None) => String::new(),
    }
}
