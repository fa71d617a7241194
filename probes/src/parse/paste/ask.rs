//! What to paste next: when a pasted text's findings rest on a part the text did not show, the one
//! command whose output settles it. `diagnose --from` prints it under the findings.

use gpu_doctor_model::FrameworkBuild;
use gpu_doctor_model::{Category, Finding, Origin, Probed, Severity, Snapshot};

/// One command to run on the machine and paste, and what its output would settle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NextPaste {
    /// The command, as it is typed.
    pub command: &'static str,
    /// What its output shows, as the end of a sentence (`the driver version …`).
    pub shows: &'static str,
}

/// nvidia-smi: the driver, the CUDA level it supports, the GPUs.
pub const NVIDIA_SMI: NextPaste =
    NextPaste { command: "nvidia-smi", shows: "the driver version, the newest CUDA it supports and the GPUs it sees" };

/// PyTorch's build and what it sees, on one line (the paste reader reads its answer).
pub const PYTHON_TORCH: NextPaste = NextPaste {
    command: "python -c \"import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())\"",
    shows: "which PyTorch build is installed and whether it sees a GPU",
};

/// PyTorch's environment report: the build, the driver, the GPUs and the CUDA libraries at once.
pub const COLLECT_ENV: NextPaste = NextPaste {
    command: "python -m torch.utils.collect_env",
    shows: "the PyTorch build, the driver, the GPUs and the CUDA libraries in one paste (nvidia-smi's output \
            where PyTorch is not installed)",
};

/// The driver, the CUDA level and the GPUs as the NVIDIA Container Toolkit sees them, run on the
/// host: what a container's GPU error turns on.
pub const CONTAINER_CLI_INFO: NextPaste = NextPaste {
    command: "nvidia-container-cli info",
    shows: "the driver, the CUDA level it supports and the GPUs as the NVIDIA Container Toolkit sees them (run it \
            on the host)",
};

/// The GPUs on the PCI bus and the kernel driver bound to each: what settles a driver that nvidia-smi could not
/// reach (or an nvidia-smi that is not there), where asking for nvidia-smi again would show the same failure.
pub const LSPCI_K: NextPaste = NextPaste {
    command: "lspci -k",
    shows: "the GPUs on the PCI bus and the kernel driver each one uses (nvidia, nouveau or none)",
};

/// The catalogue's rows for nvidia-smi itself failing: not found, or NVML unable to reach the driver.
const SMI_FAILED: [&str; 6] = [
    "shell.nvidia_smi_not_found",
    "nvml.cannot_communicate",
    "nvml.driver_not_loaded",
    "nvml.library_not_found",
    "nvml.driver_library_mismatch",
    "nvml.no_devices_found",
];

/// The CUDA toolkits installed and where `/usr/local/cuda` points.
pub const LS_CUDA: NextPaste = NextPaste {
    command: "ls -l /usr/local/cuda*",
    shows: "which CUDA toolkits are installed and which one /usr/local/cuda points to",
};

/// The command whose output would settle the first warning or error of a pasted text that rests
/// on a part the text did not show, or that would tell whether a PyTorch that cannot use a GPU or a
/// CUDA_VISIBLE_DEVICES is a problem (the GPUs unknown), or, when the text held nothing gpu-doctor
/// recognises, the one paste that shows the most; `None` for a machine's own report, or when
/// nothing is missing.
#[must_use]
pub fn next_paste(snap: &Snapshot, findings: &[Finding]) -> Option<NextPaste> {
    let Origin::Pasted { formats } = &snap.origin else { return None };
    // Nothing recognised: the one paste that shows the most.
    if formats.is_empty() && snap.messages.is_empty() {
        return Some(COLLECT_ENV);
    }
    let no_driver = unknown(&snap.driver) || unknown(&snap.gpus);
    let torch_unknown = torch_build_unknown(snap);
    let no_toolkits = unknown(&snap.toolkits);
    let mut serious: Vec<&Finding> = findings.iter().filter(|f| f.severity != Severity::Info).collect();
    serious.sort_by_key(|f| f.severity != Severity::Error);
    let for_findings = serious.into_iter().find_map(|f| {
        // A container's GPU error: the container runtime's view of the driver, not a framework's.
        if is_container_finding(&f.id) {
            return no_driver.then_some(CONTAINER_CLI_INFO);
        }
        let needs: &[(bool, NextPaste)] = match f.category {
            Category::DriverTooOldForRuntime | Category::ArchNotInBuild => {
                &[(no_driver, NVIDIA_SMI), (torch_unknown, PYTHON_TORCH)]
            }
            Category::CpuOnlyBuild => &[(torch_unknown, PYTHON_TORCH), (no_driver, NVIDIA_SMI)],
            Category::NoDriverOrGpuNotVisible | Category::WslSpecific | Category::PcieLinkDegraded => {
                &[(no_driver, NVIDIA_SMI)]
            }
            // The GPU list (and, for MIG, the MIG devices' UUIDs that nvidia-smi -L shows) settles these.
            Category::EnvVarMisconfig
                if f.id.starts_with("env.cuda_visible_devices") || f.id.starts_with("env.mig_") =>
            {
                &[(no_driver, NVIDIA_SMI)]
            }
            Category::MultipleToolkitsConflict
            | Category::ToolkitVsFrameworkMismatchHarmless
            | Category::EnvVarMisconfig => &[(no_toolkits, LS_CUDA), (no_driver, NVIDIA_SMI)],
            Category::CudnnMissingOrMismatch => &[(torch_unknown, PYTHON_TORCH), (no_driver, NVIDIA_SMI)],
            Category::Benchmark | Category::Other => &[],
        };
        // PyTorch's own command settles a finding about PyTorch only (not ONNX Runtime's or PaddlePaddle's).
        let torch = about_torch(f);
        needs.iter().find(|(missing, ask)| *missing && (torch || *ask != PYTHON_TORCH)).map(|(_, ask)| *ask)
    });
    // PyTorch that cannot use a GPU (a CPU build, or `is_available()` False) says nothing until the
    // GPUs are known: only then is it a problem. Nor does CUDA_VISIBLE_DEVICES, judged against the GPU list.
    let visible_devices = snap.env.vars.contains_key("CUDA_VISIBLE_DEVICES");
    let ask =
        for_findings.or_else(|| (no_driver && (torch_without_gpu(snap) || visible_devices)).then_some(NVIDIA_SMI));
    // nvidia-smi already failed in the text: its output again says nothing new. On Linux the bus and the bound
    // driver do; elsewhere there is no one command to ask for.
    let smi_failed = snap.messages.iter().any(|m| SMI_FAILED.contains(&m.id.as_str()));
    match ask {
        Some(NVIDIA_SMI) if smi_failed => {
            (snap.platform.platform.os != gpu_doctor_model::OsFamily::Windows).then_some(LSPCI_K)
        }
        other => other,
    }
}

/// True for a finding about a container engine or the NVIDIA Container Toolkit (its message rows'
/// ids begin `container.`, `docker.`, `podman.`, `k8s.`; its rules' `containers.`).
fn is_container_finding(id: &str) -> bool {
    let id = id.strip_prefix("observed.").unwrap_or(id);
    ["container.", "containers.", "docker.", "podman.", "k8s."].iter().any(|p| id.starts_with(p))
}

/// True when a finding speaks of PyTorch: its id is one of PyTorch's messages, or its words name it.
fn about_torch(f: &Finding) -> bool {
    let names = |t: &str| t.contains("torch") || t.contains("PyTorch");
    f.id.starts_with("observed.torch.") || names(&f.summary) || names(&f.detail) || f.evidence.iter().any(|e| names(e))
}

/// True when the pasted PyTorch is a CPU build or said CUDA is not available.
fn torch_without_gpu(snap: &Snapshot) -> bool {
    let Some(envs) = snap.python_envs.value() else { return false };
    envs.iter().any(|e| {
        let cpu = e.frameworks.iter().any(|f| f.name == "torch" && matches!(f.build, FrameworkBuild::Cpu));
        let unavailable = e
            .deep
            .as_ref()
            .and_then(|d| d.value())
            .and_then(|d| d.torch.as_ref())
            .is_some_and(|t| t.cuda_available == Some(false));
        cpu || unavailable
    })
}

/// True for a part the text did not speak of.
fn unknown<T>(p: &Probed<T>) -> bool {
    matches!(p, Probed::Unknown { .. })
}

/// True when the text did not say which PyTorch build is installed (or named no framework at all).
fn torch_build_unknown(snap: &Snapshot) -> bool {
    let Some(envs) = snap.python_envs.value() else { return true };
    let builds: Vec<&FrameworkBuild> =
        envs.iter().flat_map(|e| &e.frameworks).filter(|f| f.name == "torch").map(|f| &f.build).collect();
    builds.is_empty() || builds.iter().all(|b| matches!(b, FrameworkBuild::Unknown))
}
