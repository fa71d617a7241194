//! Python environments, the GPU frameworks in them, and what importing them said.

use serde::{Deserialize, Serialize};

use super::Probed;

/// How an environment was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnvKind {
    /// A conda (or mamba, micromamba) environment: its prefix has `conda-meta/`.
    Conda,
    /// A `venv`/`virtualenv`/`uv` environment: its prefix has `pyvenv.cfg`.
    Venv,
    /// A pyenv-installed interpreter under `$PYENV_ROOT/versions/`.
    Pyenv,
    /// Any other interpreter: the OS's, a python.org install, one built from source.
    System,
    /// A value this version of gpu-doctor does not know, read from a report written by a newer one.
    #[serde(other)]
    Unknown,
}

/// What a framework was built against, as far as its files tell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FrameworkBuild {
    /// A CUDA build; `version` is `12.1`, or only the major (`12`) when the package name is all that
    /// tells it (`cupy-cuda12x`, `jax-cuda12-plugin`); `None` when the files do not say which.
    Cuda { version: Option<String> },
    /// A CPU-only build.
    Cpu,
    /// A ROCm build; `version` when the files say it.
    Rocm { version: Option<String> },
    /// The files do not say, or a kind of build this version does not know (a report from a newer
    /// gpu-doctor).
    #[serde(other)]
    Unknown,
}

impl FrameworkBuild {
    /// The CUDA version of a CUDA build.
    pub fn cuda_version(&self) -> Option<&str> {
        match self {
            Self::Cuda { version } => version.as_deref(),
            _ => None,
        }
    }
}

/// A GPU framework found in a site-packages folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Framework {
    /// Normalized distribution name: `torch`, `tensorflow`, `jax`, `jax-cuda12-plugin`, `cupy-cuda12x`,
    /// `onnxruntime-gpu`.
    pub name: String,
    /// The installed version as its metadata says, e.g. `2.3.0+cu121`.
    pub version: String,
    /// What it was built against.
    pub build: FrameworkBuild,
    /// The cuDNN version it was built against, when its files say (TensorFlow, onnxruntime-gpu).
    pub cudnn_build: Option<String>,
    /// Which files told us, e.g. `dist-info METADATA + torch/version.py`.
    pub source: String,
    /// The site-packages folder it is in.
    pub site_packages: String,
}

/// An installed distribution: a pip `nvidia-*` CUDA library wheel, or a companion package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Package {
    /// Normalized name, e.g. `nvidia-cudnn-cu12`.
    pub name: String,
    /// Version, e.g. `9.1.0.70`.
    pub version: String,
}

/// One Python environment and the GPU packages in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PythonEnv {
    /// Display name, e.g. `conda:base`, `venv:/home/user/proj/.venv`, `system:/usr/bin/python3`.
    pub name: String,
    /// How the environment was made.
    pub kind: EnvKind,
    /// The environment's prefix folder.
    pub prefix: String,
    /// Its interpreter; `None` for a conda environment without Python's executable.
    #[serde(default)]
    pub interpreter: Option<String>,
    /// Python's version (`3.11` or `3.11.4`) as read from files; `None` when no file said.
    #[serde(default)]
    pub python_version: Option<String>,
    /// Its site-packages folders.
    pub site_packages: Vec<String>,
    /// A venv whose `pyvenv.cfg` lets it see its base interpreter's packages.
    #[serde(default)]
    pub include_system_site_packages: bool,
    /// How it was found, e.g. `PATH`, `CONDA_PREFIX`, `~/.conda/environments.txt`.
    #[serde(default)]
    pub found_by: Vec<String>,
    /// GPU frameworks from the fast tier (files only).
    #[serde(default)]
    pub frameworks: Vec<Framework>,
    /// pip `nvidia-*` CUDA library wheels.
    #[serde(default)]
    pub cuda_wheels: Vec<Package>,
    /// The packages maintainers ask for beside the frameworks (numpy, torchvision, triton, …; the
    /// list is `probe::python::companions::COMPANIONS`), by name; written only when not empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub companions: Vec<Package>,
    /// What importing the frameworks said (deep tier); `None` when the deep tier did not run.
    #[serde(default)]
    pub deep: Option<Probed<DeepFacts>>,
}

impl PythonEnv {
    /// The framework package `name` (`torch`, `onnxruntime-gpu`), when the environment has it.
    pub fn framework(&self, name: &str) -> Option<&Framework> {
        self.frameworks.iter().find(|f| f.name == name)
    }

    /// What importing torch told, when the deep probe ran and torch answered.
    pub fn deep_torch(&self) -> Option<&DeepTorch> {
        self.deep.as_ref()?.value()?.torch.as_ref()
    }
}

/// What `probe.py` reported; a framework field is `None` when it is not installed there.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeepFacts {
    /// The script's output format version.
    pub probe_version: Option<u32>,
    /// The interpreter itself.
    pub python: Option<DeepPython>,
    /// Why the interpreter facts could not be read.
    pub python_error: Option<String>,
    /// PyTorch.
    pub torch: Option<DeepTorch>,
    /// TensorFlow.
    pub tensorflow: Option<DeepTensorflow>,
    /// JAX.
    pub jax: Option<DeepJax>,
    /// CuPy.
    pub cupy: Option<DeepCupy>,
    /// ONNX Runtime.
    pub onnxruntime: Option<DeepOnnxruntime>,
}

impl DeepFacts {
    /// What importing one framework said, by the module it imports as (`torch`, `tensorflow`,
    /// `jax`, `cupy`, `onnxruntime`): its version and the import's error. `None` when that framework
    /// was not probed (not installed, or a module this schema does not know).
    pub fn import_of(&self, module: &str) -> Option<(Option<&str>, Option<&str>)> {
        let (version, error) = match module {
            "torch" => self.torch.as_ref().map(|f| (&f.version, &f.error)),
            "tensorflow" => self.tensorflow.as_ref().map(|f| (&f.version, &f.error)),
            "jax" => self.jax.as_ref().map(|f| (&f.version, &f.error)),
            "cupy" => self.cupy.as_ref().map(|f| (&f.version, &f.error)),
            "onnxruntime" => self.onnxruntime.as_ref().map(|f| (&f.version, &f.error)),
            _ => None,
        }?;
        Some((version.as_deref(), error.as_deref()))
    }
}

/// The interpreter as it describes itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeepPython {
    /// `platform.python_version()`, e.g. `3.11.7`.
    pub version: Option<String>,
    /// `sys.executable`.
    pub executable: Option<String>,
    /// `sys.prefix`.
    pub prefix: Option<String>,
    /// `sys.base_prefix` (differs from `prefix` in a venv).
    pub base_prefix: Option<String>,
    /// `sys.platform`, e.g. `linux`.
    pub platform: Option<String>,
    /// `CPython`, `PyPy`.
    pub implementation: Option<String>,
}

/// What importing torch said.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeepTorch {
    /// `torch.__version__`.
    pub version: Option<String>,
    /// `torch.version.cuda`; `None` for a CPU or ROCm build.
    pub cuda: Option<String>,
    /// `torch.version.hip`; set for a ROCm build.
    pub hip: Option<String>,
    /// `torch.version.git_version`.
    pub git_version: Option<String>,
    /// `torch.backends.cudnn.version()`, encoded (`90100`); see `CudnnVersion::from_encoded`.
    pub cudnn_version: Option<u32>,
    /// `torch.cuda.is_available()`.
    pub cuda_available: Option<bool>,
    /// `torch.cuda.device_count()`.
    pub device_count: Option<u32>,
    /// `torch.cuda.get_arch_list()`, e.g. `["sm_80", "sm_90"]`.
    pub arch_list: Option<Vec<String>>,
    /// Each visible device.
    pub devices: Option<Vec<DeepTorchDevice>>,
    /// The import failed with this exception.
    pub error: Option<String>,
    /// CUDA initialization or a device query failed with this exception.
    pub cuda_error: Option<String>,
    /// `torch.backends.cudnn.version()` failed with this exception.
    pub cudnn_error: Option<String>,
}

/// One device as torch sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeepTorchDevice {
    /// CUDA device index.
    pub index: u32,
    /// `torch.cuda.get_device_name`.
    pub name: Option<String>,
    /// Compute capability, e.g. `8.9`.
    pub capability: Option<String>,
    /// Total memory in bytes.
    pub total_memory_bytes: Option<u64>,
}

/// What importing tensorflow said.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeepTensorflow {
    /// `tf.__version__`.
    pub version: Option<String>,
    /// `get_build_info()["cuda_version"]`.
    pub cuda_version: Option<String>,
    /// `get_build_info()["cudnn_version"]`.
    pub cudnn_version: Option<String>,
    /// `get_build_info()["is_cuda_build"]`.
    pub is_cuda_build: Option<bool>,
    /// `get_build_info()["is_rocm_build"]`.
    pub is_rocm_build: Option<bool>,
    /// `tf.config.list_physical_devices('GPU')` names.
    pub gpus: Option<Vec<String>>,
    /// The import failed with this exception.
    pub error: Option<String>,
    /// `get_build_info()` failed.
    pub build_info_error: Option<String>,
    /// Listing GPUs failed.
    pub gpu_error: Option<String>,
}

/// What importing jax said.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeepJax {
    /// `jax.__version__`.
    pub version: Option<String>,
    /// `jaxlib.__version__`.
    pub jaxlib_version: Option<String>,
    /// `jax.default_backend()`: `gpu`, `cpu`, `tpu`.
    pub backend: Option<String>,
    /// `jax.devices()`.
    pub devices: Option<Vec<DeepJaxDevice>>,
    /// The import failed with this exception.
    pub error: Option<String>,
    /// Backend initialization failed with this exception.
    pub backend_error: Option<String>,
}

/// One device as jax sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeepJaxDevice {
    /// Device id.
    pub id: u32,
    /// `gpu`, `cpu`, `tpu`.
    pub platform: Option<String>,
    /// `device_kind`, e.g. `NVIDIA H100 80GB HBM3`.
    pub kind: Option<String>,
}

/// What importing cupy said.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeepCupy {
    /// `cupy.__version__`.
    pub version: Option<String>,
    /// `runtimeGetVersion()`, encoded (`12040`); see `CudaVersion::from_api_int`.
    pub runtime_version: Option<i32>,
    /// `driverGetVersion()`, encoded like `runtime_version`.
    pub driver_version: Option<i32>,
    /// `getDeviceCount()`.
    pub device_count: Option<u32>,
    /// The import failed with this exception.
    pub error: Option<String>,
    /// A CUDA call failed with this exception.
    pub cuda_error: Option<String>,
}

/// What importing onnxruntime said.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeepOnnxruntime {
    /// `onnxruntime.__version__`.
    pub version: Option<String>,
    /// `get_available_providers()`, e.g. `CUDAExecutionProvider`.
    pub providers: Option<Vec<String>>,
    /// The import failed with this exception.
    pub error: Option<String>,
    /// Listing providers failed.
    pub providers_error: Option<String>,
}

/// An interpreter or environment folder named with `--python` that discovery could not use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnusedPython {
    /// The path as given, with forward slashes.
    pub path: String,
    /// Why it was not used, e.g. `/opt/py/bin/python3 does not exist`.
    pub reason: String,
}
