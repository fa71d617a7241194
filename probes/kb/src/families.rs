//! The framework families: which Python distributions are TensorFlow, a JAX CUDA plugin or CuPy.
//! The one list of these names; the probes, the paste reader, the rules and the chooser ask here.
//! Names are normalized distribution names (PEP 503: lowercase, runs of `-_.` as one `-`). The
//! one reader of the `+cuXYZ` tags and local labels that say a build is also here.

use gpu_doctor_model::{CudaVersion, FrameworkBuild};

use crate::PyVersion;

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

/// The pip wheels that ship NVIDIA's CUDA libraries, by the library's base name (`libcudart.so.13`
/// → `cudart`): the wheel's name without its CUDA suffix. CUDA 12 wheels add `-cu12`
/// (`nvidia-cuda-runtime-cu12`); CUDA 13's toolkit wheels have no suffix (`nvidia-cuda-runtime`),
/// while cuDNN and NCCL keep theirs (`nvidia-cudnn-cu13`, `nvidia-nccl-cu13`). Source: the
/// `RECORD` files of the wheels `torch==2.15.0+cu132` installs from PyPI (each names the `.so`
/// files it ships), and their `-cu12` counterparts' project pages on PyPI.
pub const LIBRARY_WHEELS: [(&str, &str); 12] = [
    ("cudart", "nvidia-cuda-runtime"),
    ("cublas", "nvidia-cublas"),
    ("cublasLt", "nvidia-cublas"),
    ("cupti", "nvidia-cuda-cupti"),
    ("nvrtc", "nvidia-cuda-nvrtc"),
    ("cufft", "nvidia-cufft"),
    ("curand", "nvidia-curand"),
    ("cusolver", "nvidia-cusolver"),
    ("cusparse", "nvidia-cusparse"),
    ("nvJitLink", "nvidia-nvjitlink"),
    ("cudnn", "nvidia-cudnn"),
    ("nccl", "nvidia-nccl"),
];

/// The wheel (without its CUDA suffix) that ships library `base` (`cudart`); `None` for a library
/// no NVIDIA wheel ships.
pub fn library_wheel(base: &str) -> Option<&'static str> {
    // cuDNN's sub-libraries ship in the same wheel as libcudnn: cuDNN 8's `libcudnn_cnn_infer.so.8` and the
    // other `_infer`/`_train` halves, cuDNN 9's `libcudnn_graph.so.9`, `libcudnn_engines_precompiled.so.9` and the
    // rest (NVIDIA cuDNN documentation, "API overview": the library split into sub-libraries from 8.0).
    let base = if base.starts_with("cudnn_") { "cudnn" } else { base };
    LIBRARY_WHEELS.iter().find(|(lib, _)| *lib == base).map(|(_, wheel)| *wheel)
}

/// The pip requirement that brings library `base` of CUDA major `major`, for the libraries whose
/// soname major is the CUDA major (`libcudart.so.12`, `libcublas.so.13`, `libnvrtc`, `libnvJitLink`,
/// `libcupti`): `nvidia-cuda-runtime-cu12` up to CUDA 12, `nvidia-cuda-runtime==13.*` from CUDA 13,
/// whose toolkit wheels have no suffix (see [`LIBRARY_WHEELS`]). `None` for the others: cuFFT,
/// cuRAND, cuSOLVER and cuSPARSE number their sonames apart from CUDA (`libcufft.so.11` is CUDA
/// 12's: the `nvidia-cufft-cu12` wheel's RECORD), cuDNN and NCCL carry their own versions.
pub fn library_requirement(base: &str, major: u32) -> Option<String> {
    if !is_cuda_numbered(base) || !(11..=99).contains(&major) {
        return None;
    }
    let wheel = library_wheel(base)?;
    Some(if major <= 12 { format!("{wheel}-cu{major}") } else { format!("{wheel}=={major}.*") })
}

/// Whether library `base` numbers its soname major by the CUDA major (see [`library_requirement`]).
pub fn is_cuda_numbered(base: &str) -> bool {
    ["cudart", "cublas", "cublasLt", "nvrtc", "nvJitLink", "cupti"].contains(&base)
}

/// Whether the installed package `name` is the wheel `wheel` (from [`library_wheel`]), with or
/// without a CUDA suffix: `nvidia-cuda-runtime-cu12` and `nvidia-cuda-runtime` are
/// `nvidia-cuda-runtime`.
pub fn is_library_wheel(name: &str, wheel: &str) -> bool {
    name.strip_prefix(wheel).is_some_and(|rest| {
        rest.is_empty()
            || rest.strip_prefix("-cu").is_some_and(|m| !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// The CUDA version of a `cuXYZ` tag, as PyTorch's wheel indexes, its local version labels
/// (`2.5.1+cu124`) and conda builds (`cuda118` → `cu118`) write it: `cu` and two to four digits,
/// the last the minor: `cu121` → 12.1, `cu92` → 9.2, `cu130` → 13.0. `None` for anything else
/// (`cpu`, `cu`, `cu1`, `cu12x`, `cuda12`). Source: <https://download.pytorch.org/whl/> index names.
pub fn cuda_tag(tag: &str) -> Option<CudaVersion> {
    let digits = tag.strip_prefix("cu")?;
    if !(2..=4).contains(&digits.len()) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (major, minor) = digits.split_at(digits.len() - 1);
    Some(CudaVersion::new(major.parse().ok()?, minor.parse().ok()?))
}

/// The build a version's local label says: `+cu121` → CUDA 12.1, `+cpu` (and `+cpu.cxx11.abi`) →
/// CPU, `+rocm5.7` → ROCm 5.7, jaxlib's `+cuda12.cudnn89` → CUDA 12 and `+cuda112` → CUDA 11.2; `None` without a label or
/// with one that says none of these.
pub fn build_from_local_tag(version: &str) -> Option<FrameworkBuild> {
    let tag = PyVersion::new(version).local()?;
    if tag == "cpu" || tag.starts_with("cpu.") {
        return Some(FrameworkBuild::Cpu);
    }
    if let Some(rocm) = tag.strip_prefix("rocm") {
        return Some(FrameworkBuild::Rocm { version: Some(rocm.to_owned()).filter(|r| !r.is_empty()) });
    }
    if let Some(cuda) = tag.strip_prefix("cuda") {
        let digits: String = cuda.chars().take_while(char::is_ascii_digit).collect();
        // jaxlib before 0.4 wrote the release whole (`+cuda112`, `+cuda101`): CUDA 11.2, 10.1.
        if digits.len() >= 3 {
            return cuda_tag(&format!("cu{digits}")).map(|v| FrameworkBuild::Cuda { version: Some(v.to_string()) });
        }
        return Some(FrameworkBuild::Cuda { version: Some(digits).filter(|m| !m.is_empty()) });
    }
    cuda_tag(tag).map(|v| FrameworkBuild::Cuda { version: Some(v.to_string()) })
}

/// The build a CuPy wheel's name says: `cupy-cuda12x` → CUDA 12, `cupy-cuda102` → 10.2,
/// `cupy-rocm-5-0` → ROCm 5.0; unknown for `cupy` (built from source).
pub fn cupy_build(name: &str) -> FrameworkBuild {
    if let Some(tag) = name.strip_prefix("cupy-cuda") {
        let version = match tag.strip_suffix('x') {
            Some(major) => Some(major.to_owned()),
            None => cuda_tag(&format!("cu{tag}")).map(|v| v.to_string()),
        };
        return FrameworkBuild::Cuda { version };
    }
    if let Some(tag) = name.strip_prefix("cupy-rocm-") {
        return FrameworkBuild::Rocm { version: Some(tag.replace('-', ".")) };
    }
    FrameworkBuild::Unknown
}

/// The ONNX Runtime execution providers that run on an NVIDIA GPU (`kCudaExecutionProvider`,
/// `kTensorrtExecutionProvider`). Source: microsoft/onnxruntime
/// include/onnxruntime/core/graph/constants.h (the provider names every build registers by).
pub const ONNXRUNTIME_CUDA_PROVIDERS: [&str; 2] = ["CUDAExecutionProvider", "TensorrtExecutionProvider"];

/// The execution providers of the CPU-only `onnxruntime` package: `get_available_providers()` of
/// its PyPI wheel (1.20.1, Linux x86_64) prints `['AzureExecutionProvider', 'CPUExecutionProvider']`
/// (a build without the Azure provider lists `CPUExecutionProvider` alone); the CUDA build is the
/// `onnxruntime-gpu` package.
pub const ONNXRUNTIME_CPU_PROVIDERS: [&str; 2] = ["AzureExecutionProvider", "CPUExecutionProvider"];

/// The build an ONNX Runtime's available execution providers say: CUDA when one of
/// [`ONNXRUNTIME_CUDA_PROVIDERS`] is there, ROCm for `ROCMExecutionProvider` or
/// `MIGraphXExecutionProvider`, CPU when every one is of the CPU package
/// ([`ONNXRUNTIME_CPU_PROVIDERS`]); `None` for another accelerator's build (DirectML, OpenVINO,
/// CoreML, QNN) or an empty list.
pub fn onnxruntime_build<S: AsRef<str>>(providers: &[S]) -> Option<FrameworkBuild> {
    let has = |names: &[&str]| providers.iter().any(|p| names.contains(&p.as_ref()));
    if has(&ONNXRUNTIME_CUDA_PROVIDERS) {
        return Some(FrameworkBuild::Cuda { version: None });
    }
    if has(&["ROCMExecutionProvider", "MIGraphXExecutionProvider"]) {
        return Some(FrameworkBuild::Rocm { version: None });
    }
    let cpu = !providers.is_empty() && providers.iter().all(|p| ONNXRUNTIME_CPU_PROVIDERS.contains(&p.as_ref()));
    cpu.then_some(FrameworkBuild::Cpu)
}

/// PaddlePaddle's distributions and their builds: `paddlepaddle` is the CPU build, `paddlepaddle-gpu`
/// the CUDA one. Source: PaddlePaddle's own message in its CPU build (PaddlePaddle/Paddle
/// paddle/fluid/pybind/place.cc, CUDAPlace's `#else` of PADDLE_WITH_CUDA: "Cannot use GPU because
/// you have installed CPU version PaddlePaddle. If you want to use GPU, please try to install GPU
/// version PaddlePaddle by: pip install paddlepaddle-gpu"), and the two projects on PyPI.
pub fn paddle_build(name: &str) -> Option<FrameworkBuild> {
    match name {
        "paddlepaddle" => Some(FrameworkBuild::Cpu),
        "paddlepaddle-gpu" => Some(FrameworkBuild::Cuda { version: None }),
        _ => None,
    }
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
    fn cudnns_sub_libraries_come_with_the_cudnn_wheel() {
        for base in ["cudnn", "cudnn_cnn_infer", "cudnn_ops_train", "cudnn_graph", "cudnn_engines_precompiled"] {
            assert_eq!(library_wheel(base), Some("nvidia-cudnn"), "{base}");
        }
        assert_eq!(library_wheel("cudnnx"), None);
        assert_eq!(library_wheel("cudart"), Some("nvidia-cuda-runtime"));
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

    /// Every form the three former readers accepted (the probes' `cuda_from_cu_tag`, the
    /// chooser's `cuda_tag`, the companion rule's index check) and what each rejected.
    #[test]
    fn cu_tags_of_every_form() {
        let v = |major, minor| Some(CudaVersion::new(major, minor));
        assert_eq!(cuda_tag("cu121"), v(12, 1));
        assert_eq!(cuda_tag("cu118"), v(11, 8));
        assert_eq!(cuda_tag("cu102"), v(10, 2));
        assert_eq!(cuda_tag("cu92"), v(9, 2));
        assert_eq!(cuda_tag("cu130"), v(13, 0));
        assert_eq!(cuda_tag("cu1000"), v(100, 0));
        for not in ["", "cu", "cu1", "cpu", "cuda12", "cu12x", "cu12.1", "cu+121", "rocm6.2", "cu12345", "cu１２"] {
            assert_eq!(cuda_tag(not), None, "{not}");
        }
    }

    #[test]
    fn builds_from_local_labels() {
        let cuda = |v: &str| Some(FrameworkBuild::Cuda { version: Some(v.into()) });
        assert_eq!(build_from_local_tag("2.3.0+cu121"), cuda("12.1"));
        assert_eq!(build_from_local_tag("2.3.0+cpu"), Some(FrameworkBuild::Cpu));
        assert_eq!(build_from_local_tag("2.1.0+cpu.cxx11.abi"), Some(FrameworkBuild::Cpu));
        assert_eq!(build_from_local_tag("2.3.0+rocm6.0"), Some(FrameworkBuild::Rocm { version: Some("6.0".into()) }));
        assert_eq!(build_from_local_tag("0.4.7+cuda12.cudnn88"), cuda("12"));
        assert_eq!(build_from_local_tag("0.1.65+cuda112"), cuda("11.2"));
        assert_eq!(build_from_local_tag("0.1.55+cuda101"), cuda("10.1"));
        assert_eq!(build_from_local_tag("2.3.0"), None);
        assert_eq!(build_from_local_tag("2.3.0+weird"), None);
        assert_eq!(build_from_local_tag("2.3.0+cu"), None);
    }

    #[test]
    fn cupy_builds_from_names() {
        assert_eq!(cupy_build("cupy-cuda12x"), FrameworkBuild::Cuda { version: Some("12".into()) });
        assert_eq!(cupy_build("cupy-cuda102"), FrameworkBuild::Cuda { version: Some("10.2".into()) });
        assert_eq!(cupy_build("cupy-rocm-5-0"), FrameworkBuild::Rocm { version: Some("5.0".into()) });
        assert_eq!(cupy_build("cupy"), FrameworkBuild::Unknown);
    }

    #[test]
    fn onnxruntime_builds_from_providers() {
        // get_available_providers() of the PyPI `onnxruntime` 1.20.1 wheel, run here.
        assert_eq!(onnxruntime_build(&["AzureExecutionProvider", "CPUExecutionProvider"]), Some(FrameworkBuild::Cpu));
        assert_eq!(onnxruntime_build(&["CPUExecutionProvider"]), Some(FrameworkBuild::Cpu));
        let cuda = Some(FrameworkBuild::Cuda { version: None });
        assert_eq!(
            onnxruntime_build(&["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"]),
            cuda
        );
        assert_eq!(
            onnxruntime_build(&["ROCMExecutionProvider", "CPUExecutionProvider"]),
            Some(FrameworkBuild::Rocm { version: None })
        );
        assert_eq!(onnxruntime_build(&["DmlExecutionProvider", "CPUExecutionProvider"]), None);
        assert_eq!(onnxruntime_build::<&str>(&[]), None);
    }

    #[test]
    fn paddle_builds_from_names() {
        assert_eq!(paddle_build("paddlepaddle"), Some(FrameworkBuild::Cpu));
        assert_eq!(paddle_build("paddlepaddle-gpu"), Some(FrameworkBuild::Cuda { version: None }));
        assert_eq!(paddle_build("paddleocr"), None);
    }
}
