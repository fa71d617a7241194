//! The companion packages: what maintainers ask for beside the GPU frameworks in an issue thread
//! (issue 14 item 5). The fast tier and the paste reader record each one found in
//! `PythonEnv::companions`; the frameworks themselves (torch, tensorflow, jax, cupy, onnxruntime and
//! onnxruntime-gpu) are `PythonEnv::frameworks` already and are not repeated here.

/// Each companion's PEP 503 name (as `normalize_name` gives it: `flash_attn` is `flash-attn`) and
/// why it is asked for.
pub const COMPANIONS: &[(&str, &str)] = &[
    // Every framework's array interchange; a NumPy 2 beside a framework built against NumPy 1
    // fails to import ("A module that was compiled using NumPy 1.x cannot be run in NumPy 2").
    ("numpy", "the array ABI every framework is built against"),
    // Built against one torch release each: another torch gives "operator torchvision::nms does
    // not exist" or an undefined symbol.
    ("torchvision", "built for one torch release"),
    ("torchaudio", "built for one torch release"),
    // The compiler torch.compile and most fused kernels use; pinned by each torch release.
    ("triton", "torch.compile's compiler, pinned by each torch release"),
    // PyTorch's nightly and ROCm wheels ship triton under these names.
    ("pytorch-triton", "triton as PyTorch's nightly wheels name it"),
    ("pytorch-triton-rocm", "triton as PyTorch's ROCm wheels name it"),
    // CUDA extensions compiled against one torch and CUDA: the usual undefined-symbol reports.
    ("xformers", "a CUDA extension built for one torch release"),
    ("flash-attn", "a CUDA extension built for one torch and CUDA release"),
    ("bitsandbytes", "loads its own CUDA library, chosen by the CUDA version it detects"),
    // Pins an exact torch and brings its own CUDA kernels.
    ("vllm", "pins an exact torch release and ships CUDA kernels"),
    // JAX's and TensorFlow's high-level libraries, versioned apart from them.
    ("flax", "JAX's neural network library"),
    ("keras", "TensorFlow 2.16 on uses Keras 3 from this package"),
    ("tf-keras", "Keras 2 for TensorFlow 2.16 on (TF_USE_LEGACY_KERAS)"),
];

/// True when `name` (already PEP 503 normalized, `pytorch` read as `torch`) is a companion.
pub fn is_companion(name: &str) -> bool {
    COMPANIONS.iter().any(|(n, _)| *n == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::wheel::normalize_name;

    #[test]
    fn names_are_canonical_and_apart_from_the_frameworks() {
        for (name, why) in COMPANIONS {
            assert_eq!(normalize_name(name), *name, "{name} is not PEP 503 normalized");
            assert!(!why.is_empty());
            assert!(!crate::probe::python::fast::is_interesting(name), "{name} is a framework already");
        }
        // Spellings a folder or a list uses all find the one entry.
        for spelling in ["flash_attn", "Flash-Attn", "flash.attn", "tf_keras", "NumPy", "pytorch_triton"] {
            assert!(is_companion(&normalize_name(spelling)), "{spelling}");
        }
        // onnxruntime and onnxruntime-gpu are frameworks; keras and tf-keras stay two packages.
        assert!(!is_companion("onnxruntime-gpu") && !is_companion("onnxruntime"));
        assert!(is_companion("keras") && is_companion("tf-keras") && !is_companion("torch"));
    }
}
