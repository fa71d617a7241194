//! The framework families: which Python distributions are TensorFlow, a JAX CUDA plugin or CuPy.
//! The one list of these names; the probes, the paste reader, the rules and the chooser ask here.
//! Names are normalized distribution names (PEP 503: lowercase, runs of `-_.` as one `-`).

/// TensorFlow's distribution names. Source: <https://pypi.org/project/tensorflow/> and its
/// sibling projects `tensorflow-cpu`, `tensorflow-gpu`, `tf-nightly`, `tf-nightly-cpu`,
/// `tensorflow-intel`, `tensorflow-macos`.
pub const TENSORFLOW: [&str; 7] = [
    "tensorflow",
    "tensorflow-cpu",
    "tensorflow-gpu",
    "tf-nightly",
    "tf-nightly-cpu",
    "tensorflow-intel",
    "tensorflow-macos",
];

/// The TensorFlow distributions whose Linux wheels are CUDA builds, judged against the cuDNN and
/// CUDA of TensorFlow's tested-build table (`tensorflow-cpu`, `-intel` and `-macos` are not).
pub const TENSORFLOW_CUDA: [&str; 3] = ["tensorflow", "tensorflow-gpu", "tf-nightly"];

/// Whether `name` is a TensorFlow distribution.
pub fn is_tensorflow(name: &str) -> bool {
    TENSORFLOW.contains(&name)
}

/// Whether `name` is a TensorFlow distribution built with CUDA (see [`TENSORFLOW_CUDA`]).
pub fn is_tensorflow_cuda(name: &str) -> bool {
    TENSORFLOW_CUDA.contains(&name)
}

/// The CUDA major of a JAX CUDA plugin: `12` of `jax-cuda12-plugin` or `jax-cuda12-pjrt`; `None`
/// for anything else.
pub fn jax_plugin_cuda(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("jax-cuda")?;
    let (major, kind) = rest.split_once('-')?;
    let ok = matches!(kind, "plugin" | "pjrt") && !major.is_empty() && major.chars().all(|c| c.is_ascii_digit());
    ok.then_some(major)
}

/// Whether `name` is a JAX CUDA plugin proper (`jax-cuda12-plugin`), the package the knowledge
/// base's `jax.toml` rows name, not its `-pjrt` companion.
pub fn is_jax_cuda_plugin(name: &str) -> bool {
    jax_plugin_cuda(name).is_some() && name.ends_with("-plugin")
}

/// Whether `name` is CuPy: `cupy` (built from source) or a binary wheel (`cupy-cuda12x`,
/// `cupy-rocm-5-0`).
pub fn is_cupy(name: &str) -> bool {
    name == "cupy" || name.starts_with("cupy-")
}

/// Whether `name` is a CuPy wheel built for CUDA (`cupy-cuda12x`, `cupy-cuda102`).
pub fn is_cupy_cuda(name: &str) -> bool {
    name.starts_with("cupy-cuda")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensorflow_names() {
        assert!(TENSORFLOW.iter().all(|n| is_tensorflow(n)));
        assert!(TENSORFLOW_CUDA.iter().all(|n| is_tensorflow(n) && is_tensorflow_cuda(n)));
        assert!(!is_tensorflow("tensorflow-io") && !is_tensorflow("tensorboard"));
        assert!(!is_tensorflow_cuda("tensorflow-cpu") && !is_tensorflow_cuda("tensorflow-intel"));
    }

    #[test]
    fn jax_plugins() {
        assert_eq!(jax_plugin_cuda("jax-cuda12-plugin"), Some("12"));
        assert_eq!(jax_plugin_cuda("jax-cuda13-pjrt"), Some("13"));
        assert_eq!(jax_plugin_cuda("jax-cuda-plugin"), None);
        assert_eq!(jax_plugin_cuda("jax-cuda12-other"), None);
        assert_eq!(jax_plugin_cuda("jaxlib"), None);
        assert!(is_jax_cuda_plugin("jax-cuda12-plugin") && !is_jax_cuda_plugin("jax-cuda12-pjrt"));
    }

    #[test]
    fn cupy_names() {
        assert!(is_cupy("cupy") && is_cupy("cupy-cuda12x") && is_cupy("cupy-rocm-5-0"));
        assert!(!is_cupy("cupyx") && !is_cupy("numpy"));
        assert!(is_cupy_cuda("cupy-cuda12x") && is_cupy_cuda("cupy-cuda102") && !is_cupy_cuda("cupy-rocm-5-0"));
    }
}
