//! CUDA-relevant environment variables, and the PATH and loader-path entries that hold CUDA.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Trace;
use crate::host::{Host, OsFamily};

/// The environment variables that change how CUDA and the frameworks behave.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EnvFacts {
    /// Relevant variables and their values (see `is_relevant`), without PATH and the loader path,
    /// which are split into entries below.
    pub vars: BTreeMap<String, String>,
    /// PATH entries, in order.
    pub path: Vec<String>,
    /// `LD_LIBRARY_PATH` entries, in order; empty when unset.
    pub ld_library_path: Vec<String>,
    /// PATH entries that look like CUDA (contain `cuda` or `nvidia`).
    pub path_cuda_entries: Vec<String>,
}

/// True for variable names worth recording: CUDA, NVIDIA, cuDNN, XLA/JAX, TensorFlow, PyTorch,
/// the loader path, PATH and the Python environment markers.
pub fn is_relevant(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "PATH",
        "LD_LIBRARY_PATH",
        "LD_PRELOAD",
        "PATHEXT",
        "HOME",
        "USERPROFILE",
        "LOCALAPPDATA",
        "VIRTUAL_ENV",
        "CONDA_PREFIX",
        "CONDA_DEFAULT_ENV",
        "CONDA_EXE",
        "PYENV_ROOT",
        "PYTHONPATH",
        "PYTHONHOME",
        "WSL_DISTRO_NAME",
        "WSL_INTEROP",
        "container",
        "KUBERNETES_SERVICE_HOST",
        "DISPLAY",
        "WAYLAND_DISPLAY",
    ];
    const PREFIXES: &[&str] =
        &["CUDA", "NVIDIA_", "CUDNN", "NCCL_", "XLA_", "JAX_", "PYTORCH_", "TORCH_", "CUPY_", "__NV", "__GLX"];
    // TensorFlow's own; a bare `TF_` would also catch Terraform's variables.
    const TENSORFLOW: &[&str] = &["TF_CPP_", "TF_GPU", "TF_FORCE_GPU", "TF_XLA", "TF_CUDNN", "TF_ENABLE_", "TF_USE_"];
    EXACT.contains(&name) || PREFIXES.iter().chain(TENSORFLOW).any(|p| name.starts_with(p))
}

/// Names that only help other probes find things; they say nothing about the GPU setup.
fn is_locator(name: &str) -> bool {
    matches!(
        name,
        "PATH"
            | "LD_LIBRARY_PATH"
            | "PATHEXT"
            | "HOME"
            | "USERPROFILE"
            | "LOCALAPPDATA"
            | "DISPLAY"
            | "WAYLAND_DISPLAY"
            | "PYENV_ROOT"
            | "CONDA_EXE"
    )
}

/// Reads the relevant variables.
pub fn probe(host: &dyn Host, trace: &mut Trace) -> EnvFacts {
    let sep = if host.platform().os == OsFamily::Windows { ';' } else { ':' };
    let split = |v: Option<String>| -> Vec<String> {
        v.map(|v| v.split(sep).filter(|s| !s.is_empty()).map(str::to_owned).collect()).unwrap_or_default()
    };
    let all = host.env_vars();
    let vars: BTreeMap<String, String> =
        all.iter().filter(|(k, _)| is_relevant(k) && !is_locator(k)).map(|(k, v)| (k.clone(), v.clone())).collect();
    let path = split(all.get("PATH").cloned());
    let ld_library_path = split(all.get("LD_LIBRARY_PATH").cloned());
    let path_cuda_entries = path
        .iter()
        .filter(|p| {
            let l = p.to_ascii_lowercase();
            l.contains("cuda") || l.contains("nvidia")
        })
        .cloned()
        .collect();
    trace.ok("environment", format!("{} relevant variables, {} PATH entries", vars.len(), path.len()));
    EnvFacts { vars, path, ld_library_path, path_cuda_entries }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relevance_keeps_cuda_and_framework_variables_only() {
        for yes in [
            "CUDA_VISIBLE_DEVICES",
            "CUDA_HOME",
            "LD_LIBRARY_PATH",
            "XLA_FLAGS",
            "TF_FORCE_GPU_ALLOW_GROWTH",
            "NVIDIA_VISIBLE_DEVICES",
        ] {
            assert!(is_relevant(yes), "{yes}");
        }
        for no in ["TF_CLI_CONFIG_FILE", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "SSH_AUTH_SOCK", "USER"] {
            assert!(!is_relevant(no), "{no}");
        }
    }
}
