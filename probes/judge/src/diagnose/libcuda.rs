//! CUDA's "driver version is insufficient for CUDA runtime version" (error 35) where the driver is
//! not too old: the CUDA runtime says the same when it cannot load the driver's CUDA library
//! (`libcuda.so.1`) at all, so on a driver that supports the program's CUDA the library is what is
//! missing. In a container that means the container was started without the GPU (Docker, Podman,
//! Kubernetes: the NVIDIA Container Toolkit mounts the library with the GPU) or, for runtimes that
//! never mount it unasked (udocker, Singularity/Apptainer), without their NVIDIA option; on a host, the
//! driver's user-space library package is not installed.

use super::containers::{NO_GPU_INSIDE, NO_LIBCUDA};
use super::context::build_cuda;
use super::{Ctx, Rule};
use gpu_doctor_kb::RuntimeVerdict;
use gpu_doctor_model::{Category, CudaVersion, Finding, OsFamily, Severity};

pub(super) const LIBCUDA_MISSING: Rule = Rule {
    id: "presence.libcuda_missing",
    category: Category::NoDriverOrGpuNotVisible,
    severity: Severity::Error,
    trigger: "On a Linux host (no container named), the CUDA runtime reports error 35, \"CUDA driver version is \
              insufficient for CUDA runtime version\", while the driver shown supports every CUDA the text names \
              (or, with none named, is of a branch that runs every CUDA 12 program): the runtime says the same when \
              it finds no driver library to load, so the driver's user-space CUDA library (libcuda.so.1) is missing \
              or not in the loader's path.",
    source: "NVIDIA/nvidia-docker#24 (maintainer flx42: error 35 on a sufficient driver because the driver's \
             libraries were not mounted into the container); chahatdeep/ubuntu-for-robotics#3 (driver 384.98 and \
             CUDA 8.0, error 35 until libcuda1-384 was installed); the CUDA Compatibility guide (a CUDA 12 program \
             starts on any R525 or newer driver)",
};

pub(super) const RULES: &[Rule] = &[LIBCUDA_MISSING];

/// The catalogue's row for the CUDA runtime's cudaErrorInsufficientDriver string.
const INSUFFICIENT: &str = "cuda.insufficient_driver";

/// Container runtimes that pass the host's devices but mount the driver's libraries only when asked
/// (`udocker setup --nvidia`; `singularity`/`apptainer` `--nv`: `gpu_doctor_model::LIBRARY_GPU_OPTIONS`).
const UNMOUNTED_UNLESS_ASKED: [&str; 2] = ["udocker", "singularity"];

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
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
                Some(format!(
                    "Check for it: ldconfig -p | grep libcuda.so.1. If it is missing, install the CUDA library of \
                     the installed driver branch: on Ubuntu and Debian libnvidia-compute-{branch} (libcuda1-{branch} \
                     on releases before Ubuntu 18.04), from NVIDIA's RHEL repository nvidia-driver-cuda-libs, from \
                     RPM Fusion xorg-x11-drv-nvidia-cuda-libs."
                )),
            ));
        }
        None => {}
    }
}

/// The driver's CUDA level, when the driver is shown and runs every CUDA the text says the program
/// was built for (framework builds, toolkits, CUDA images); with none said, when it runs every CUDA 12
/// program (R525 or newer: minor-version compatibility). `None` otherwise.
fn driver_suffices(cx: &Ctx<'_>) -> Option<CudaVersion> {
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
