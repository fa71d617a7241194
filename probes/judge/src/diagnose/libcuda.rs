//! CUDA's "driver version is insufficient for CUDA runtime version" (error 35) where the driver is
//! not too old: the CUDA runtime says the same when it cannot load the driver's CUDA library
//! (`libcuda.so.1`) at all, so on a driver that supports the program's CUDA the library is what is
//! missing. In a container that means the container was started without the GPU (Docker, Podman,
//! Kubernetes: the NVIDIA Container Toolkit mounts the library with the GPU) or, for runtimes that
//! never mount it unasked (udocker, Singularity/Apptainer), without their NVIDIA option; on a host, the
//! driver's user-space library package is not installed.

use super::containers::{NO_GPU_INSIDE, NO_LIBCUDA};
use super::context::{build_cuda, parent_dir, same_dir};
use super::{Ctx, Rule, fix};
use gpu_doctor_kb::RuntimeVerdict;
use gpu_doctor_model::{Category, CudaVersion, Finding, OsFamily, PlanTarget, Severity};

pub(super) const LIBCUDA_MISSING: Rule = Rule {
    id: "presence.libcuda_missing",
    category: Category::NoDriverOrGpuNotVisible,
    severity: Severity::Error,
    trigger: "On a Linux host (no container named), the CUDA runtime reports error 35, \"CUDA driver version is \
              insufficient for CUDA runtime version\", while the driver shown supports every CUDA the text names \
              (or, with none named, is of a branch that runs every CUDA 12 program): the runtime says the same when \
              it finds no driver library to load, so the driver's user-space CUDA library (libcuda.so.1) is missing \
              or not in the loader's path. Or, on such a host, a program could not open libcuda.so.1 (TensorFlow's DSO \
              loader) while the driver's kernel module shows its version (/proc/driver/nvidia/version, nvidia-smi).",
    source: "NVIDIA/nvidia-docker#24 (maintainer flx42: error 35 on a sufficient driver because the driver's \
             libraries were not mounted into the container); chahatdeep/ubuntu-for-robotics#3 (driver 384.98 and \
             CUDA 8.0, error 35 until libcuda1-384 was installed); the CUDA Compatibility guide (a CUDA 12 program \
             starts on any R525 or newer driver)",
};

pub(super) const STUB_ON_PATH: Rule = Rule {
    id: "env.ld_library_path_has_stubs",
    category: Category::EnvVarMisconfig,
    severity: Severity::Error,
    trigger: "LD_LIBRARY_PATH holds a CUDA toolkit's `stubs` folder (…/lib64/stubs, …/targets/…/lib/stubs), or the \
              text shows the stub libcuda from such a folder loaded at run time (a loader or dlopen error naming \
              it, `ldd` resolving libcuda.so.1 to it, numba's `Mapped libcuda.so paths:`): the stub is a link-time \
              placeholder with no driver behind it, so a program that finds it before the driver's libcuda.so.1 \
              gets CUDA error 34 (\"CUDA driver is a stub library\") or a failed cuInit.",
    source: "NVIDIA/cuda-python's error tables (cudaErrorStubLibrary, CUDA_ERROR_STUB_LIBRARY = 34: the application \
             loaded a stub library); NVIDIA/warp#219 (maintainer: the stub directory, typically \
             /usr/local/cuda/lib64/stubs, searched before the user-mode driver); numba/numba#8985 and #9732 (the \
             stub libcuda loaded through LD_LIBRARY_PATH); ofiwg/libfabric#10365 (the stubs are named libcuda.so \
             while their SONAME is libcuda.so.1, so only a dlopen of the bare name can find them; open the `.1` \
             name)",
};

pub(super) const CAPABILITY_LACKS_COMPUTE: Rule = Rule {
    id: "env.driver_capabilities_lack_compute",
    category: Category::EnvVarMisconfig,
    severity: Severity::Error,
    trigger: "NVIDIA_DRIVER_CAPABILITIES is shown set to a list without `compute` (or `all`), such as `utility` or \
              `video,utility`, and a program could not reach the driver's CUDA library: libcuda.so.1 not opened, \
              CUDA's error 35 (the runtime finds no driver library), PyTorch's `Found no NVIDIA driver`, a failed \
              cuInit. The NVIDIA Container Toolkit mounts libcuda and the other compute libraries only for the \
              `compute` capability; `utility` gives nvidia-smi and NVML alone, so nvidia-smi answers in such a \
              container and CUDA does not.",
    source: "NVIDIA/libnvidia-container src/nvc_info.c (utility_libs: libnvidia-ml, libnvidia-cfg; compute_libs: \
             libcuda, libnvidia-ptxjitcompiler, libnvidia-nvvm, …; each list mounted for its capability); \
             NVIDIA/nvidia-container-toolkit:internal/config/image/capabilities.go@v1.14.0#L45 (unset or empty: \
             `utility,compute`); @v1.0.5 nvidia-container-toolkit/container_config.go#L21 (the default was `utility` \
             alone then)",
};

/// Messages of a program that could not reach the driver's CUDA library (besides the DSO loader's
/// [`LIBRARY_NOT_OPENED`], read with its library): the loader's, CUDA's error 35, PyTorch's and TensorFlow's.
const NO_DRIVER_LIBRARY: [&str; 4] = ["ld.libcuda_missing", INSUFFICIENT, "torch.no_driver", "tf.cuinit_failed"];

const CAPABILITIES: &str = "NVIDIA_DRIVER_CAPABILITIES";

/// A capabilities list without `compute` beside a program that could not reach libcuda
/// ([`CAPABILITY_LACKS_COMPUTE`]).
fn capabilities_lack_compute(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(value) = cx.s.env.vars.get(CAPABILITIES).map(|v| v.trim()).filter(|v| !v.is_empty()) else { return };
    if value.split(',').any(|c| matches!(c.trim(), "compute" | "all")) {
        return;
    }
    let Some(m) = cx.s.messages.iter().find(|m| {
        NO_DRIVER_LIBRARY.contains(&m.id.as_str())
            || (LIBRARY_NOT_OPENED.contains(&m.id.as_str())
                && m.values.get("library").is_some_and(|l| l.starts_with("libcuda.so")))
    }) else {
        return;
    };
    let mut evidence = vec![format!("{CAPABILITIES}={value}"), format!("pasted line: {}", m.line)];
    let smi = cx.driver.evidence.clone().filter(|_| cx.driver.version.is_some());
    evidence.extend(smi.clone());
    let answered = if smi.is_some() { " (as it does here)" } else { "" };
    out.push(CAPABILITY_LACKS_COMPUTE.finding(
        format!("{CAPABILITIES}={value} gives the container no CUDA library"),
        format!(
            "The NVIDIA Container Toolkit mounts the driver's libraries into a container by capability: `utility` \
             gives nvidia-smi and NVML, `compute` gives libcuda.so.1 and the rest of CUDA's driver side. This \
             container was started with `{value}`, without `compute`, so nvidia-smi can answer{answered} while \
             every CUDA program finds no driver library."
        ),
        evidence,
        Some(format!(
            "Start the container with compute among the capabilities: `docker run --gpus all -e \
             {CAPABILITIES}=compute,utility …` (add `video` for NVENC/NVDEC, or use `all`), in Compose `environment: \
             - {CAPABILITIES}=compute,utility`, or `ENV {CAPABILITIES}=compute,utility` in the image's Dockerfile. \
             Setting it inside the running container changes nothing: the toolkit reads it when the container starts."
        )),
    ));
}

/// With the toolkit's stub on the loader's path ([`STUB_ON_PATH`]) and the capabilities without compute
/// ([`CAPABILITY_LACKS_COMPUTE`]), which the variables' family lists and this family judges.
pub(super) const RULES: &[Rule] = &[LIBCUDA_MISSING];

/// A folder that holds a CUDA toolkit's link-time stubs.
fn is_stub_dir(dir: &str) -> bool {
    dir.trim_end_matches('/').ends_with("/stubs")
}

/// The `stubs` folders LD_LIBRARY_PATH holds.
fn stub_dirs<'a>(cx: &Ctx<'a>) -> Vec<&'a str> {
    cx.s.env.ld_library_path.iter().map(String::as_str).filter(|d| is_stub_dir(d)).collect()
}

/// The toolkit's stub libcuda on the loader's path: the `stubs` folders of LD_LIBRARY_PATH, and the
/// stub files the text shows loaded (each once: a folder LD_LIBRARY_PATH already names is not repeated).
pub(super) fn stub_evidence(cx: &Ctx<'_>) -> Vec<String> {
    let in_path = stub_dirs(cx);
    let mut evidence: Vec<String> = in_path.iter().map(|d| format!("LD_LIBRARY_PATH holds {d}")).collect();
    if let Some(t) = cx.s.toolkits.value() {
        let named = |p: &str| in_path.iter().any(|d| same_dir(d, p) || same_dir(d, parent_dir(p)));
        evidence.extend(
            t.stub_libcuda.iter().filter(|p| !named(p)).map(|p| format!("the stub libcuda on the loader's path: {p}")),
        );
        evidence.extend(
            t.ldd_resolved
                .iter()
                .filter(|r| r.library.starts_with("libcuda.so") && r.path.contains("/stubs/"))
                .map(|r| format!("ldd {}: {} => {}", r.caller, r.library, r.path)),
        );
    }
    evidence
}

fn stubs_on_path(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let evidence = stub_evidence(cx);
    if evidence.is_empty() {
        return;
    }
    let (words, plan) = stubs_fix(cx);
    out.push(
        STUB_ON_PATH
            .finding(
                "The CUDA toolkit's stub libcuda is on the loader's path",
                "The toolkit ships a libcuda.so in its `stubs` folder so that programs can be linked where no driver \
                 is installed; it has no driver behind it. At run time the loader must find the driver's libcuda.so.1 \
                 instead: a program that loads the stub gets CUDA error 34 (\"CUDA driver is a stub library\") or a \
                 failed cuInit.",
                evidence,
                Some(words),
            )
            .with_plan(plan),
    );
}

/// The stub's folder out of LD_LIBRARY_PATH: the words, and the change where LD_LIBRARY_PATH is known
/// to hold it.
pub(super) fn stubs_fix(cx: &Ctx<'_>) -> (String, Option<PlanTarget>) {
    let stubs = stub_dirs(cx);
    let words = "Take the CUDA toolkit's stubs folder (…/lib64/stubs) out of LD_LIBRARY_PATH (`echo \
                 $LD_LIBRARY_PATH` shows it; look for where your shell profile, module file or build tool adds it): \
                 its libcuda.so is for linking only; at run time the driver's libcuda.so.1 must be found. Where \
                 LD_LIBRARY_PATH does not hold it, a library's RPATH may (`readelf -d <library> | grep -iE \
                 'rpath|runpath'`); a program that opens libcuda.so.1, the driver's own name, never loads the stub."
        .to_owned();
    let plan = (!stubs.is_empty()).then(|| {
        fix::change(
            None,
            "the loader finds the driver's libcuda.so.1",
            vec![fix::ld_library_path_without(cx, &stubs, None)],
        )
    });
    (words, plan)
}

/// The catalogue's row for the CUDA runtime's cudaErrorInsufficientDriver string.
const INSUFFICIENT: &str = "cuda.insufficient_driver";

/// Container runtimes that pass the host's devices but mount the driver's libraries only when asked
/// (`udocker setup --nvidia`; `singularity`/`apptainer` `--nv`: `gpu_doctor_model::LIBRARY_GPU_OPTIONS`).
const UNMOUNTED_UNLESS_ASKED: [&str; 2] = ["udocker", "singularity"];

/// Messages of a program that could not open the driver's CUDA library, with the library in `library`: TensorFlow's
/// DSO loader, both wordings.
const LIBRARY_NOT_OPENED: [&str; 2] = ["tf.cuda_library_not_opened", "tf.dso_load_failed"];

/// A program could not open libcuda.so.1 while the driver is shown (its kernel module's version, or nvidia-smi's):
/// the kernel driver runs, its user-space CUDA library is what is missing. In a container the NVIDIA Container
/// Toolkit mounts that library with the GPU and the `compute` capability (a container started without them has
/// none); on a Linux host the driver's CUDA library package is not installed.
fn library_not_opened(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    if out.iter().any(|f| f.id == LIBCUDA_MISSING.id || f.id == NO_LIBCUDA.id) {
        return;
    }
    let Some(version) = cx.driver.version.as_ref() else { return };
    let Some(m) = cx.s.messages.iter().find(|m| {
        LIBRARY_NOT_OPENED.contains(&m.id.as_str())
            && m.values.get("library").is_some_and(|l| l.starts_with("libcuda.so"))
    }) else {
        return;
    };
    let driver = cx.driver.evidence.clone().unwrap_or_else(|| format!("driver {version}"));
    let evidence = vec![format!("pasted line: {}", m.line), driver];
    match cx.s.platform.container.as_ref() {
        Some(c) => {
            let mut evidence = evidence;
            evidence.extend(c.markers.iter().map(|m| format!("pasted line: {m}")));
            out.push(NO_LIBCUDA.finding(
                "The container has no driver CUDA library (libcuda.so.1), though the host's driver runs",
                format!(
                    "The driver's kernel module answers (version {version}), but the program in the container ({}) \
                     cannot open libcuda.so.1, the driver's user-space CUDA library. It is not part of a CUDA image: \
                     the NVIDIA Container Toolkit mounts it from the host when the container is started with the GPU \
                     and the `compute` capability, so a container started by plain `docker run` (or by a tool that \
                     sets up the GPU itself without the toolkit) has none.",
                    c.runtime
                ),
                evidence,
                Some(
                    "Start the container through the NVIDIA Container Toolkit: `docker run --gpus all …` (nvidia-docker \
                     or `--runtime=nvidia` on older setups; Podman with CDI: `--device nvidia.com/gpu=all`), with \
                     NVIDIA_DRIVER_CAPABILITIES including compute if it is set; the host needs the \
                     nvidia-container-toolkit package."
                        .to_owned(),
                ),
            ));
        }
        None if matches!(cx.os, OsFamily::Linux | OsFamily::Unknown) && cx.s.platform.wsl.is_none() => {
            out.push(LIBCUDA_MISSING.finding(
                "A program cannot open the driver's library (libcuda.so.1), though the driver's kernel module runs",
                format!(
                    "The driver's kernel module answers (version {version}), but libcuda.so.1, the driver's user-space \
                     CUDA library, could not be opened: its package is not installed, or it is not where the loader \
                     looks."
                ),
                evidence,
                Some(library_package_fix(&version.major().to_string())),
            ));
        }
        None => {}
    }
}

/// The fix for the driver's CUDA library missing on a Linux host: the package of driver branch `branch` that ships it
/// on each distribution family, or the folder to add where the driver put it outside the loader's folders.
fn library_package_fix(branch: &str) -> String {
    format!(
        "Check for it: ldconfig -p | grep libcuda.so.1. If it is missing, install the CUDA library of the installed \
         driver branch: on Ubuntu and Debian libnvidia-compute-{branch} (libcuda1-{branch} on releases before Ubuntu \
         18.04), from NVIDIA's RHEL repository nvidia-driver-cuda-libs, from RPM Fusion \
         xorg-x11-drv-nvidia-cuda-libs. If the driver put it outside the loader's folders (NixOS: \
         /run/opengl-driver/lib; a .run install with its own prefix), add that folder to LD_LIBRARY_PATH of the \
         program or its service."
    )
}

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    stubs_on_path(cx, out);
    capabilities_lack_compute(cx, out);
    if out.iter().any(|f| f.id == CAPABILITY_LACKS_COMPUTE.id) {
        return;
    }
    library_not_opened(cx, out);
    let Some(message) = cx.s.messages.iter().find(|m| m.id == INSUFFICIENT) else { return };
    if Ctx::driver_too_old_found(out) {
        return;
    }
    let pasted = format!("pasted line: {}", message.line);
    let container = cx.s.platform.container.as_ref();
    if let Some(c) = container.filter(|c| UNMOUNTED_UNLESS_ASKED.contains(&c.runtime.as_str())) {
        // These runtimes never mount the driver's libraries unasked, whatever the driver.
        if c.markers.iter().any(|m| gpu_doctor_model::ContainerFacts::passes_gpu(m, false, true)) {
            return;
        }
        let (tool, option) = if c.runtime == "udocker" {
            ("udocker", "`udocker setup --nvidia <container>` once, then run it again")
        } else {
            ("Singularity/Apptainer", "run it with `--nv` (`singularity exec --nv …`, `apptainer exec --nv …`)")
        };
        let mut evidence = vec![pasted];
        evidence.extend(c.markers.iter().map(|m| format!("pasted line: {m}")));
        out.push(NO_LIBCUDA.finding(
            format!("The {tool} container has no NVIDIA driver library"),
            format!(
                "CUDA reported an insufficient driver inside a {tool} container started without its NVIDIA option: \
                 {tool} passes the host's devices but mounts the driver's CUDA library (libcuda.so.1) only when asked, \
                 and without it the CUDA runtime reports error 35 whatever the driver."
            ),
            evidence,
            Some(format!("Give the container the host's NVIDIA libraries: {option}.")),
        ));
        return;
    }
    let Some(level) = driver_suffices(cx) else { return };
    let driver = cx.driver.evidence.clone().unwrap_or_else(|| format!("the driver supports CUDA up to {level}"));
    let why = format!(
        "The driver shown supports CUDA up to {level}, enough for what the text says the program runs (a CUDA 12 \
         program starts on any R525 or newer driver; one built for CUDA 13 would need R580). The CUDA runtime also \
         reports error 35 when it cannot load the driver's CUDA library, libcuda.so.1, at all"
    );
    match container {
        Some(c) => {
            let mut evidence = vec![pasted, driver];
            evidence.extend(c.markers.iter().map(|m| format!("pasted line: {m}")));
            out.push(
                NO_GPU_INSIDE.finding(
                    "CUDA in the container cannot reach the driver: the container was probably started without the GPU",
                    format!(
                        "{why}: inside a container ({}) the NVIDIA Container Toolkit mounts that library together with \
                     the GPU, so a container started without a GPU has neither.",
                        c.runtime
                    ),
                    evidence,
                    Some(
                        "Start the container with the GPU: docker run --gpus all … (or --runtime=nvidia -e \
                     NVIDIA_VISIBLE_DEVICES=all, as Unraid's template does; Podman or Docker with CDI: --device \
                     nvidia.com/gpu=all; Compose: deploy.resources.reservations.devices with capabilities: [gpu]; \
                     Kubernetes: resources.limits nvidia.com/gpu: 1 in the pod's container). The host needs the NVIDIA \
                     Container Toolkit."
                            .to_owned(),
                    ),
                ),
            );
        }
        None if matches!(cx.os, OsFamily::Linux | OsFamily::Unknown) && cx.s.platform.wsl.is_none() => {
            let branch = cx.driver.version.as_ref().map_or_else(|| "<branch>".to_owned(), |d| d.major().to_string());
            out.push(LIBCUDA_MISSING.finding(
                "CUDA cannot load the driver's library (libcuda.so.1), though the driver is new enough",
                format!("{why}: the driver's user-space CUDA library is not installed, or not where the loader looks."),
                vec![pasted, driver],
                Some(library_package_fix(&branch)),
            ));
        }
        None => {}
    }
}

/// The driver's CUDA level, when the driver is shown and runs every CUDA the text says the program
/// was built for (framework builds, toolkits, CUDA images); with none said, when it runs every CUDA 12
/// program (R525 or newer: minor-version compatibility). `None` otherwise.
pub(super) fn driver_suffices(cx: &Ctx<'_>) -> Option<CudaVersion> {
    let level = cx.driver_cuda()?;
    let mut runtimes: Vec<CudaVersion> = cx.frameworks().filter_map(|(_, f)| build_cuda(f).map(|(c, _)| c)).collect();
    if let Some(toolkits) = cx.s.toolkits.value() {
        runtimes.extend(toolkits.installs.iter().filter_map(|t| t.version));
    }
    let runs = |r: &CudaVersion| {
        matches!(
            cx.kb.cuda.judge(*r, &cx.driver, cx.os),
            RuntimeVerdict::Supported | RuntimeVerdict::MinorVersionCompatible { .. }
        )
    };
    let enough = if runtimes.is_empty() { level.major >= 12 } else { runtimes.iter().all(runs) };
    enough.then_some(level)
}
