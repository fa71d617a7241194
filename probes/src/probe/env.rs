//! CUDA-relevant environment variables, and the PATH and loader-path entries that hold CUDA.

use std::collections::BTreeMap;

use crate::host::Host;
use gpu_doctor_model::Trace;
use gpu_doctor_model::{EnvFacts, OsFamily, mask_secret};

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
        // bitsandbytes' choice of its CUDA library (bitsandbytes/cextension.py).
        "BNB_CUDA_VERSION",
    ];
    const PREFIXES: &[&str] = &[
        "CUDA",
        "NVIDIA_",
        "CUDNN",
        "NCCL_",
        "XLA_",
        "JAX_",
        "PYTORCH_",
        "TORCH_",
        "CUPY_",
        "NUMBA_CUDA",
        "NUMBAPRO_",
        "__NV",
        "__GLX",
    ];
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

/// The PATH entries that name CUDA or NVIDIA (in any case).
pub fn cuda_entries(path: &[String]) -> Vec<String> {
    path.iter()
        .filter(|p| {
            let l = p.to_ascii_lowercase();
            l.contains("cuda") || l.contains("nvidia")
        })
        .cloned()
        .collect()
}

/// Reads the relevant variables.
pub fn probe(host: &dyn Host, trace: &mut Trace) -> EnvFacts {
    let sep = if host.platform().os == OsFamily::Windows { ';' } else { ':' };
    let split = |v: Option<String>| -> Vec<String> {
        v.map(|v| v.split(sep).filter(|s| !s.is_empty()).map(str::to_owned).collect()).unwrap_or_default()
    };
    let all = host.env_vars();
    let vars: BTreeMap<String, String> = all
        .iter()
        .filter(|(k, _)| is_relevant(k) && !is_locator(k))
        .map(|(k, v)| (k.clone(), mask_secret(k, v)))
        .collect();
    let path = split(all.get("PATH").cloned());
    let ld_library_path = split(all.get("LD_LIBRARY_PATH").cloned());
    let path_cuda_entries = cuda_entries(&path);
    trace.ok("environment", format!("{} relevant variables, {} PATH entries", vars.len(), path.len()));
    EnvFacts { vars, path, ld_library_path, path_cuda_entries, set_in_process: Vec::new(), launch_scripts: Vec::new() }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::host::{Fixture, ReplayHost};
    use gpu_doctor_model::MASKED;
    use gpu_doctor_model::Platform;

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

    const SECRETS: &[(&str, &str)] = &[
        ("NVIDIA_API_KEY", "nvapi-s3cr3t-value"),
        ("CUDA_AUTH_TOKEN", "tok-s3cr3t-value"),
        ("TORCH_HUB_PASSWORD", "pw-s3cr3t-value"),
        ("NCCL_SECRET", "nccl-s3cr3t-value"),
        ("CUDA_CREDENTIALS", "cred-s3cr3t-value"),
    ];

    #[test]
    fn credential_like_variables_and_url_passwords_never_reach_the_snapshot() {
        let mut f = Fixture::new(Platform { os: OsFamily::Linux, arch: "x86_64".into() });
        for (k, v) in SECRETS {
            f.env.insert((*k).into(), (*v).into());
        }
        f.env.insert("CUDA_PROXY".into(), "http://alice:hunter2@proxy.example:3128".into());
        f.env.insert("NVIDIA_MIRROR".into(), "https://u:pw-in-url@a.example/x, https://b.example/y".into());
        f.env.insert("CUDA_VISIBLE_DEVICES".into(), "0,1".into());
        let facts = probe(&ReplayHost::new(f), &mut Trace::default());
        let text = serde_json::to_string(&facts).unwrap();
        for secret in ["s3cr3t", "hunter2", "pw-in-url", "alice"] {
            assert!(!text.contains(secret), "{secret} survived: {text}");
        }
        for (k, _) in SECRETS {
            assert_eq!(facts.vars[*k], MASKED, "{k} is still listed, masked");
        }
        assert_eq!(facts.vars["CUDA_PROXY"], format!("http://{MASKED}@proxy.example:3128"));
        assert_eq!(facts.vars["NVIDIA_MIRROR"], format!("https://{MASKED}@a.example/x, https://b.example/y"));
        assert_eq!(facts.vars["CUDA_VISIBLE_DEVICES"], "0,1", "ordinary values stay");
    }

    #[test]
    fn masking_leaves_ordinary_values_and_urls_alone() {
        for (name, value) in [
            ("CUDA_HOME", "/usr/local/cuda"),
            ("XLA_FLAGS", "--xla_gpu_cuda_data_dir=/opt/cuda"),
            ("TORCH_HOME", "https://example.com/a@b"),
            ("NVIDIA_URL", "mailto:someone@example.com"),
        ] {
            assert_eq!(mask_secret(name, value), value, "{name}");
        }
        assert_eq!(mask_secret("X", "ftp://user@h/"), format!("ftp://{MASKED}@h/"));
        assert_eq!(
            mask_secret("X", "ftp://a:b@h/ and http://c:d@e"),
            format!("ftp://{MASKED}@h/ and http://{MASKED}@e")
        );
        assert_eq!(mask_secret("Cuda_Api_Key", "x"), MASKED);
    }
}
