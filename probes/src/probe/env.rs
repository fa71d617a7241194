//! CUDA-relevant environment variables. (Filled by the lead.)

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The environment variables that change how CUDA and the frameworks behave.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EnvFacts {
    /// Relevant variables and their values.
    pub vars: BTreeMap<String, String>,
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
        &["CUDA", "NVIDIA_", "CUDNN", "NCCL_", "XLA_", "JAX_", "TF_", "PYTORCH_", "TORCH_", "CUPY_", "__NV", "__GLX"];
    EXACT.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p))
}
