//! The known-message catalogue (`assets/compat/errors.toml`): every pattern compiles, every named
//! group is explained, and every row has a real-world sample line that it — and only the rows
//! listed beside it — matches, with the right values.

use std::collections::{BTreeMap, BTreeSet};

use super::super::clean;
use super::super::messages::Matcher;
use super::*;

/// (id, sample text, expected values, other ids the same text also matches).
type Case = (&'static str, &'static str, &'static [(&'static str, &'static str)], &'static [&'static str]);

const CASES: &[Case] = &[
    ("cuda.insufficient_driver", "-> CUDA driver version is insufficient for CUDA runtime version", &[], &[]),
    // The error by its name, as NVIDIA's Python bindings return it: cuda-python's runtime calls give a
    // `(cudaError_t, value)` tuple whose enum prints `<cudaError_t.NAME: code>` (its docs'
    // cuda.bindings.runtime.cudaError_t); the row's emitter names the error, no pattern lists it.
    ("cuda.insufficient_driver", "(<cudaError_t.cudaErrorInsufficientDriver: 35>, 0)", &[], &[]),
    // ollama's discovery through libcudart, as NixOS/nixpkgs#349617's title quotes it (driver 560 present, its
    // libcuda not on the loader's path).
    ("cuda.insufficient_driver", "`ollama` raises `cudaSetDevice err: 35` on startup", &[], &[]),
    (
        "cuda.no_kernel_image",
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        &[],
        &[],
    ),
    // RustaCUDA's error in a panic, as filecoin-project/rust-gpu-tools#79 pasted it (a Tesla K80, a fatbin from compute_52).
    (
        "cuda.no_kernel_image",
        "thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: Cuda(NoBinaryForGpu)', examples/add.rs:10:76",
        &[],
        &[],
    ),
    // PyTorch's CUDA error help line names the error as cudaGetErrorName prints it; the line as a
    // public report pasted it under "torch.AcceleratorError: CUDA error: no kernel image …".
    (
        "cuda.no_kernel_image",
        "Search for `cudaErrorNoKernelImageForDevice' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.",
        &[],
        &[],
    ),
    (
        "cuda.unsupported_ptx",
        "CUDA error 222 at /home/test/PowerInfer/ggml-cuda.cu:9635: the provided PTX was compiled with an unsupported toolchain.",
        &[],
        &[],
    ),
    (
        "cuda.invalid_ptx",
        "Cuda driver api error CUDA_ERROR_INVALID _PTX CODE 128, FILE D:\\a\\1\\luxcore\\src\\luxrays\\utils\\cuda.cpp, line 190: a ptx jit compilation failed",
        &[],
        &[],
    ),
    (
        "cuda.system_driver_mismatch",
        "CUDA: Check failed: e == cudaSuccess (803 vs. 0) : system has unsupported display driver / cuda driver combination",
        &[],
        &[],
    ),
    ("cuda.compat_not_supported", "RuntimeError: forward compatibility was attempted on non supported HW", &[], &[]),
    // The line as a person retyped it without its `device` (PaddlePaddle/Paddle#17857, the reporter's whole text).
    ("cuda.no_device", "no CUDA-capable is detected", &[], &[]),
    (
        "cuda.no_device",
        "F0527 08:43:32.401912 27274 syncedmem.hpp:18] Check failed: error == cudaSuccess (38 vs. 0)  no CUDA-capable device is detected",
        &[],
        &[],
    ),
    ("cuda.unknown_error", "RuntimeError: CUDA error: unknown error", &[], &[]),
    // cudaGetErrorString(98) as PyTorch's CUDA error raises it.
    ("cuda.invalid_device_function", "RuntimeError: CUDA error: invalid device function", &[], &[]),
    (
        "cuda.invalid_device_function",
        "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=405 error=98 : cudaErrorInvalidDeviceFunction",
        &[],
        &[],
    ),
    // NCCL's shared-memory transport, as an AWS G5 troubleshooting page and NVIDIA/nccl#1838 quote it.
    (
        "cuda.peer_access_unsupported",
        "transport/shm.cc:590 NCCL WARN Cuda failure 217 'peer access is not supported between these two devices'",
        &[],
        &[],
    ),
    // tensorflow/tensorflow#526 (TensorFlow 0.7 on a Tesla K40m in the Exclusive_Thread compute mode), up to its closing fence.
    (
        "cuda.device_already_in_use",
        "I am still seeing the same cuda error for tensorflow 0.7. The error is ```Check failed: CUDA_SUCCESS == dynload::cuCtxSetCurrent(context) (0 vs. 216)",
        &[],
        &[],
    ),
    (
        "cuda.devices_unavailable",
        "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable",
        &[],
        &[],
    ),
    (
        "cuda.out_of_memory",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 7.79 GiB of which 3.44 MiB is free.",
        &[("requested", "20.00 MiB")],
        &[],
    ),
    // Before 2.1 the totals in parentheses, here without the message's first words, as an excerpt cut them
    // (LISTatSNU/FastMRI_challenge#238: a 7.92 GiB GPU with 24.56 MiB free and 86 MiB PyTorch's).
    (
        "torch.out_of_memory_totals",
        "Tried to allocate 216.00 MiB (GPU 0; 7.92 GiB total capacity; 69.17 MiB already allocated; 24.56 MiB free; 86.00 MiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.",
        &[
            ("requested", "216.00 MiB"),
            ("gpu", "0"),
            ("total", "7.92 GiB"),
            ("allocated", "69.17 MiB"),
            ("free", "24.56 MiB"),
            ("reserved", "86.00 MiB"),
        ],
        &[],
    ),
    // PyTorch 2.1 and later list NVML's processes on the GPU (reportProcessMemoryInfo); the values of a public log
    // (a Kaggle notebook's plan in a public repository, wrapped over lines there).
    (
        "torch.out_of_memory_processes",
        "OutOfMemoryError: CUDA out of memory. Tried to allocate 1.98 GiB. GPU 0 has a total capacity of 15.56 GiB of which 1.37 GiB is free. Process 6680 has 1.81 GiB memory in use. Including non-PyTorch memory, this process has 11.21 GiB memory in use. Of the allocated memory 9.46 GiB is allocated by PyTorch, and 1.51 GiB is reserved by PyTorch but unallocated.",
        &[
            ("requested", "1.98 GiB"),
            ("gpu", "0"),
            ("total", "15.56 GiB"),
            ("free", "1.37 GiB"),
            (
                "processes",
                "Process 6680 has 1.81 GiB memory in use. Including non-PyTorch memory, this process has 11.21 GiB memory in use.",
            ),
        ],
        &["cuda.out_of_memory"],
    ),
    // PyTorch's cmake/public/cuda.cmake: the message's first line is fixed text (2.5.1's wording; 2.1.0's says
    // `installs`).
    ("torch.cmake_conflicting_cuda", "  Found two conflicting CUDA versions:", &[], &[]),
    // CuPy names the runtime error by cudaGetErrorName, as public CuPy logs show it.
    ("cuda.out_of_memory", "cupy.cuda.runtime.CUDARuntimeError: cudaErrorMemoryAllocation: out of memory", &[], &[]),
    // taichi-dev/taichi#8469: Taichi 1.7.0 on Linux.
    (
        "taichi.cuda_arch_not_supported",
        "[W 01/29/24 10:00:00.000 1234] [misc.py:adaptive_arch_select@758] Arch=[<Arch.cuda: 3>] is not supported, falling back to CPU",
        &[],
        &[],
    ),
    // QwenLM/qwen.cpp#55: ggml's early CUDA_CHECK, the code and cudaGetErrorString's text.
    (
        "cuda.out_of_memory",
        "CUDA error 2 at /home/qwen.cpp/third_party/ggml/src/ggml-cuda.cu:7196: out of memory",
        &[],
        &[],
    ),
    ("cuda.invalid_device_ordinal", "RuntimeError: CUDA error: invalid device ordinal", &[], &[]),
    ("cuda.invalid_kernel_image", "Status: device kernel image is invalid", &[], &[]),
    (
        "nvrtc.invalid_gpu_architecture",
        "RuntimeError: nvrtc: error: invalid value for --gpu-architecture (-arch)",
        &[],
        &[],
    ),
    // nvcc's words quoted without its `nvcc fatal :` prefix, as questions and build FAQs quote them (a caffe
    // build FAQ: `Build error: Unsupported gpu architecture 'compute_20'`), in either case.
    (
        "nvcc.unsupported_gpu_architecture",
        "Q: Build error: Unsupported gpu architecture 'compute_20'",
        &[("arch", "compute_20")],
        &[],
    ),
    (
        "nvcc.unsupported_gpu_architecture",
        "error: unsupported gpu architecture 'compute_90'",
        &[("arch", "compute_90")],
        &[],
    ),
    (
        "nvcc.unsupported_gpu_architecture",
        "nvcc fatal   : Unsupported gpu architecture 'compute_61'",
        &[("arch", "compute_61")],
        &[],
    ),
    (
        "nvcc.unsupported_gpu_architecture",
        "     Value 'sm_75' is not defined for option 'gpu-architecture'",
        &[("value", "sm_75")],
        &[],
    ),
    ("torch.not_compiled_with_cuda", "AssertionError: Torch not compiled with CUDA enabled", &[], &[]),
    // NixOS/nixpkgs#363601: wyoming-faster-whisper's journal.
    (
        "ctranslate2.not_compiled_with_cuda",
        "Dec 09 14:50:29 architect wyoming-faster-whisper[1253525]: ValueError: This CTranslate2 package was not \
         compiled with CUDA support",
        &[],
        &[],
    ),
    (
        "torch.no_driver",
        "AssertionError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx",
        &[],
        &[],
    ),
    (
        "torch.driver_too_old",
        "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 9010). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx",
        &[("found_version", "9010")],
        &[],
    ),
    (
        // andimarafioti/faster-qwen3-tts#113: the line wrapped where the PR quoted it.
        "torch.driver_too_old",
        ".../torch/cuda/__init__.py:187: UserWarning: CUDA initialization: The NVIDIA driver on your\nsystem is too old (found version 12040). ...",
        &[("found_version", "12040")],
        &[],
    ),
    (
        "torch.driver_init_failed",
        "RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.",
        &[],
        &[],
    ),
    (
        "torch.cuda_unknown_error",
        "UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero.",
        &[],
        &[],
    ),
    (
        "torch.device_count_error",
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 803: system has unsupported display driver / cuda driver combination (Triggered internally at /opt/conda/conda-bld/pytorch_1646755903507/work/c10/cuda/CUDAFunctions.cpp:112.)",
        &[("code", "803"), ("error", "system has unsupported display driver / cuda driver combination")],
        &["cuda.system_driver_mismatch"],
    ),
    ("torch.no_gpus_available", "RuntimeError: No CUDA GPUs are available", &[], &[]),
    (
        "torch.sm_not_compatible",
        "UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.",
        &[("gpu", "NVIDIA GeForce RTX 5090"), ("sm", "120")],
        &[],
    ),
    (
        "torch.supported_sm_list",
        "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.",
        &[("arch_list", "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90")],
        &[],
    ),
    (
        "torch.gpu_too_old",
        "UserWarning: Found GPU0 NVIDIA GeForce GTX 1070 which is of cuda capability 6.1.",
        &[("index", "0"), ("gpu", "NVIDIA GeForce GTX 1070"), ("cc", "6.1")],
        &[],
    ),
    (
        "torch.min_capability",
        "    The minimum cuda capability supported by this library is 3.7.",
        &[("min_cc", "3.7")],
        &[],
    ),
    (
        "torch.min_max_capability",
        "    Minimum and Maximum cuda capability supported by this version of PyTorch is\n    (7.0) - (12.0)",
        &[("min_cc", "7.0"), ("max_cc", "12.0")],
        &[],
    ),
    (
        "torch.suggested_cuda_configurations",
        "    Please install PyTorch with a following CUDA\n    configurations:  12.6 following instructions at",
        &[("cuda_versions", "12.6")],
        &[],
    ),
    (
        "torch.cc_not_supported",
        "UserWarning: Found GPU0 NVIDIA GeForce GTX 1080 which is of compute capability (CC) 6.1.",
        &[("index", "0"), ("gpu", "NVIDIA GeForce GTX 1080"), ("cc", "6.1")],
        &[],
    ),
    (
        "torch.cuda_releases_for_gpu",
        "Please follow the instructions at https://pytorch.org/get-started/locally/ to install a PyTorch release that supports one of these CUDA versions: 12.6",
        &[("cuda_versions", "12.6")],
        &[],
    ),
    (
        "torch.cudnn_incompatible",
        "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (9, 10, 2) but found runtime version (9, 1, 0). PyTorch already comes bundled with cuDNN.",
        &[("compiled", "9, 10, 2"), ("runtime", "9, 1, 0")],
        &[],
    ),
    // pytorch/pytorch#5369 (torch 0.3, the first wording, integers).
    (
        "torch.cudnn_incompatible",
        "RuntimeError: cuDNN version mismatch: PyTorch was compiled against 6021 but linked against 5110",
        &[("compiled", "6021"), ("runtime", "5110")],
        &[],
    ),
    // akanimax/T2F#6 (torch 1.0).
    (
        "torch.cudnn_incompatible",
        "RuntimeError: cuDNN version incompatibility: PyTorch was compiled against 7401 but linked against 7301",
        &[("compiled", "7401"), ("runtime", "7301")],
        &[],
    ),
    (
        "torch.cpp_extension_cuda_mismatch",
        "The detected CUDA version (11.8) mismatches the version that was used to compile\nPyTorch (12.1). Please make sure to use the same CUDA versions.",
        &[("detected", "11.8"), ("compiled", "12.1")],
        &[],
    ),
    // graphdeco-inria/gaussian-splatting#385's title (verbatim): the core without its first words and its end.
    (
        "torch.cpp_extension_cuda_mismatch",
        "RuntimeError CUDA version (12.0) mismatches the version that was used to compile",
        &[("detected", "12.0")],
        &[],
    ),
    ("torchvision.operator_missing", "RuntimeError: operator torchvision::nms does not exist", &[("op", "nms")], &[]),
    (
        "numpy.compiled_against_numpy1",
        "A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.0 as it may crash. To support both 1.x and 2.x",
        &[("numpy", "2.0.0")],
        &[],
    ),
    (
        "torch.cpp_extension_minor_mismatch",
        "UserWarning: The detected CUDA version (12.4) has a minor version mismatch with the version that was used to compile PyTorch (12.1). Most likely this shouldn't be a problem.",
        &[("detected", "12.4"), ("compiled", "12.1")],
        &[],
    ),
    (
        "nvcc.no_generate_dependencies_with_compile",
        "nvcc fatal   : Unknown option '-generate-dependencies-with-compile'",
        &[],
        &[],
    ),
    (
        "tf.dso_load_failed",
        "2020-03-09 21:09:38.011200: W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load dynamic library 'libcusolver.so.10'; dlerror: libcusolver.so.10: cannot open shared object file: No such file or directory",
        &[("library", "libcusolver.so.10")],
        &["ld.cuda_library_missing"],
    ),
    (
        "tf.dso_load_failed",
        "2022-03-07 11:04:46.159459: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'cudart64_110.dll'; dlerror: cudart64_110.dll not found",
        &[("library", "cudart64_110.dll")],
        &[],
    ),
    (
        "tf.cannot_dlopen_gpu_libraries",
        "W0000 00:00:1744212707.411665      14 gpu_device.cc:2341] Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned above are installed properly if you would like to use GPU.",
        &[],
        &[],
    ),
    (
        "tf.no_cuda_drivers",
        "2024-10-17 11:11:36.669260: I external/local_tsl/tsl/cuda/cudart_stub.cc:32] Could not find cuda drivers on your machine, GPU will not be used.",
        &[],
        &[],
    ),
    (
        "tf.cuinit_failed",
        "2023-11-14 23:00:37.345835: E tensorflow/compiler/xla/stream_executor/cuda/cuda_driver.cc:266] failed call to cuInit: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: forward compatibility was attempted on non supported HW",
        &[("error", "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE")],
        &["cuda.compat_not_supported"],
    ),
    (
        "tf.cuinit_failed",
        "2019-03-21 22:15:59.118316: I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:303] kernel version seems to match DSO: 396.64.0",
        &[],
        &[],
    ),
    (
        "tf.gpu_ignored_min_cc",
        "Ignoring visible gpu device (device: 0, name: NVS 5200M, pci bus id: 0000:01:00.0, compute capability: 2.1) with Cuda compute capability 2.1. The minimum required Cuda capability is 3.5.",
        &[("index", "0"), ("gpu", "NVS 5200M"), ("bus_id", "0000:01:00.0"), ("cc", "2.1"), ("min_cc", "3.5")],
        &[],
    ),
    (
        "tf.gpu_ignored_min_cc",
        "Ignoring gpu device (device: 0, name: GRID K520, pci bus id: 0000:00:03.0) with Cuda compute capability 3.0. The minimum required Cuda capability is 3.5.",
        &[("index", "0"), ("gpu", "GRID K520"), ("bus_id", "0000:00:03.0"), ("cc", "3.0"), ("min_cc", "3.5")],
        &[],
    ),
    (
        "tf.no_kernel_binaries",
        "W0000 00:00:1764044088.195750   20660 gpu_device.cc:2431] TensorFlow was not built with CUDA kernel binaries compatible with compute capability 12.0. CUDA kernels will be jit-compiled from PTX, which could take 30 minutes or longer.",
        &[("cc", "12.0")],
        &[],
    ),
    (
        "xla.cudnn_version_mismatch",
        "E0430 22:32:43.417007 2493694 cuda_dnn.cc:454] Loaded runtime CuDNN library: 9.1.0 but source was compiled with: 9.8.0. CuDNN library needs to have matching major version and equal or higher minor version.",
        &[("runtime", "9.1.0"), ("compiled", "9.8.0")],
        &[],
    ),
    // dusty-nv/jetson-inference#1409, the reporter's log line (OpenCV built with cuDNN 8.0.0 in an L4T R32.7.1 image).
    (
        "opencv.cudnn_version_mismatch",
        "[ WARN:0] global /opt/opencv/modules/dnn/src/cuda4dnn/init.hpp (34) checkVersions cuDNN reports version 8201 which does not match with the version 8000 with which OpenCV was built",
        &[("runtime", "8201"), ("compiled", "8000")],
        &[],
    ),
    // TensorFlow 1.5's line in localminimum/QANet#5 (driver 384.69 under a CUDA 9.0 build).
    (
        "xla.possibly_insufficient_driver",
        "2018-03-23 11:55:55.959970: E tensorflow/stream_executor/cuda/cuda_dnn.cc:393] possibly insufficient driver version: 384.69.0",
        &[("driver", "384.69.0")],
        &[],
    ),
    (
        "xla.driver_older_than_ptxas",
        "2024-06-04 13:20:13.475085: W external/xla/xla/service/gpu/nvptx_compiler.cc:760] The NVIDIA driver's CUDA version is 12.4 which is older than the ptxas CUDA version (12.5.40). Because the driver is older than the ptxas version, XLA is disabling parallel compilation, which may slow down compilation.",
        &[("driver_cuda", "12.4"), ("ptxas_version", "12.5.40")],
        &[],
    ),
    (
        "xla.driver_older_than_ptxas",
        "The NVIDIA driver's CUDA version is 12.2 which is older than the PTX compiler version 12.6.77. Because ",
        &[("driver_cuda", "12.2"), ("ptxas_version", "12.6.77")],
        &[],
    ),
    (
        "xla.driver_older_than_ptxas",
        "The NVIDIA driver's CUDA version is 12.4 which is older than the PTX compiler version (12.6.85). Because the driver is older than the PTX compiler version, XLA is disabling parallel compilation, which may slow down compilation.",
        &[("driver_cuda", "12.4"), ("ptxas_version", "12.6.85")],
        &[],
    ),
    (
        "jax.cuda_jaxlib_missing",
        "WARNING:2025-05-01 14:20:42,754:jax._src.xla_bridge:969: An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.",
        &[],
        &[],
    ),
    (
        "jax.cuda_platform_not_registered",
        "[RuntimeError: Backend 'gpu' failed to initialize: NOT_FOUND: Could not find \nregistered platform with name: \"cuda\". Available platform names are: \nHost Interpreter]()",
        &[],
        &[],
    ),
    (
        // The title of danijar/dreamerv3#18 (JAX 0.4, xla_bridge's canonicalize_platform).
        "jax.no_gpu_backend",
        "Unknown backend: 'gpu' requested, but no platforms that are instances of gpu are present. Platforms present are: interpreter,cpu",
        &[("platform", "gpu")],
        &[],
    ),
    (
        // jlin816/dynalang#6, the line wrapped where it was pasted.
        "jax.no_gpu_backend",
        "RuntimeError: Unknown backend: 'gpu' requested, but no platforms that are \ninstances of gpu are present. Platforms present are: cpu",
        &[("platform", "gpu")],
        &[],
    ),
    (
        // ecmwf-lab/ai-models-graphcast#16 (get_backend's shorter wording).
        "jax.no_gpu_backend",
        "**RuntimeError: Unknown backend gpu",
        &[("platform", "gpu")],
        &[],
    ),
    (
        // The line as xmr-stak's cuda_extra.cu prints it (`printf` at v2.2.0, a GPU of architecture 30).
        "xmrstak.arch_not_compiled",
        "WARNING: NVIDIA GPU 0: miner not compiled for the gpu architecture 30.",
        &[("sm", "30")],
        &[],
    ),
    (
        "jax.cuda_backend_failed",
        "CUDA backend failed to initialize: Unable to load cuDNN. Is it installed? (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
        &[("reason", "Unable to load cuDNN. Is it installed?")],
        &["jax.cudnn_not_loadable"],
    ),
    // codalab/codalab-worksheets#591: TensorFlow 1.x in the tensorflow/tensorflow image.
    (
        "tf.cuda_library_not_opened",
        "I tensorflow/stream_executor/dso_loader.cc:102] Couldn't open CUDA library libcuda.so.1. LD_LIBRARY_PATH: ",
        &[("library", "libcuda.so.1")],
        &[],
    ),
    // docker/buildx#3295: the CDI spec made in a WSL builder.
    (
        "nvidia_ctk.libdxcore_not_found",
        "#7 11.40 time=\"2025-07-18T02:55:21Z\" level=warning msg=\"Could not locate libdxcore.so: pattern libdxcore.so not found\"",
        &[("reason", "pattern libdxcore.so not found")],
        &[],
    ),
    // jax-ml/jax#12335: jax_platforms set to 'gpu' on a CUDA jaxlib.
    (
        "jax.rocm_backend_failed",
        "RuntimeError: Unable to initialize backend 'rocm': NOT_FOUND: Could not find registered platform with name: \"rocm\". Available platform names are: Interpreter CUDA Host",
        &[
            (
                "reason",
                "NOT_FOUND: Could not find registered platform with name: \"rocm\". Available platform names are: Interpreter CUDA Host",
            ),
            ("available", "Interpreter CUDA Host"),
        ],
        &[],
    ),
    (
        "jax.no_gpu_fallback",
        "WARNING:absl:No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
        &[],
        &[],
    ),
    ("jax.cudnn_not_loadable", "RuntimeError: Unable to load cuDNN. Is it installed?", &[], &[]),
    ("jax.cudnn_outdated", "Outdated cuDNN installation found.", &[], &[]),
    (
        "jax.device_cc_too_low",
        "RuntimeWarning: Device 0 has CUDA compute capability 5.0 which is lower than the minimum supported compute capability 5.2. See https://jax.readthedocs.io/en/latest/installation.html#nvidia-gpu for more details",
        &[("index", "0"), ("cc", "5.0"), ("min_cc", "5.2")],
        &[],
    ),
    (
        "ollama.gpu_too_old",
        "2024/01/06 21:52:17 gpu.go:89: CUDA GPU is too old. Falling back to CPU mode. Compute Capability detected: 3.0",
        &[("cc", "3.0")],
        &[],
    ),
    (
        "ollama.driver_too_old",
        "msg=\"NVIDIA driver too old\" device=\"NVIDIA GeForce GTX 1070 Ti\" compute=6.1 driver=535 required_driver=\"570 or newer\"",
        &[("driver_major", "535"), ("required_driver", "570")],
        &[],
    ),
    (
        "ollama.driver_too_old",
        "time=2024-09-03T16:36:00.853+08:00 level=DEBUG source=gpu.go:537 msg=\"Unable to load cudart\" library=C:\\Users\\asus\\AppData\\Local\\Programs\\Ollama\\lib\\ollama\\cudart64_12.dll error=\"your nvidia driver is too old or missing.  If you have a CUDA GPU please upgrade to run ollama\"",
        &[],
        &[],
    ),
    (
        "ethminer.insufficient_driver",
        "  X  12:55:12|main      CUDA error: Insufficient CUDA driver: 8000",
        &[("driver_cuda_int", "8000")],
        &[],
    ),
    // ethereum-mining/ethminer#1138: 0.15's own `Error: ` before the exception's text.
    ("ethminer.insufficient_driver", "  Error: Insufficient CUDA driver: 9010", &[("driver_cuda_int", "9010")], &[]),
    (
        "cudajl.driver_too_old",
        "ERROR: LoadError: CUDA 10.0 is not supported by\nyour driver (which supports up to 9.0)",
        &[("toolkit_cuda", "10.0"), ("driver_cuda", "9.0")],
        &[],
    ),
    (
        "cudajl.driver_unsupported",
        "Error: CUDA driver 8.0.0 is not compatible with any supported CUDA toolkit (11.4.4, 11.5.2, 11.6.2, 11.7.1, 11.8.0, 12.0.1, 12.1.1, 12.2.2 or 12.3.1)",
        &[
            ("driver_cuda", "8.0"),
            ("toolkits", "11.4.4, 11.5.2, 11.6.2, 11.7.1, 11.8.0, 12.0.1, 12.1.1, 12.2.2 or 12.3.1"),
        ],
        &[],
    ),
    (
        "cudnn.could_not_load_library",
        "Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared object file: No such file or directory",
        &[("library", "libcudnn_ops_infer.so.8")],
        &["ld.cudnn_library_missing"],
    ),
    (
        "cudnn.could_not_load_library",
        "Error: Could not load library libcudnn_cnn_infer.so.8",
        &[("library", "libcudnn_cnn_infer.so.8")],
        &[],
    ),
    // ceccocats/tkDNN#134 and NVIDIA/cccl#10 (verbatim).
    (
        "nvcc.unsupported_host_compiler",
        "/usr/local/cuda/include/crt/host_config.h:138:2: error: #error -- unsupported GNU version! gcc versions later than 8 are not supported!",
        &[("compiler", "GNU")],
        &[],
    ),
    (
        "nvcc.unsupported_host_compiler",
        "12:32:13     /usr/local/cuda/bin/../targets/x86_64-linux/include/crt/host_config.h:139:2: error: #error -- unsupported GNU version! gcc versions later than 9 are not supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this version check; however, using an unsupported host compiler may cause compilation failure or incorrect run time execution. Use at your own risk.",
        &[("compiler", "GNU")],
        &[],
    ),
    // The same header's other compilers (zspace/system.cuda-12.6:include/crt/host_config.h, verbatim).
    (
        "nvcc.unsupported_host_compiler",
        "#error -- unsupported clang version! clang version must be less than 19 and greater than 3.2 . The nvcc flag '-allow-unsupported-compiler' can be used to override this version check; however, using an unsupported host compiler may cause compilation failure or incorrect run time execution. Use at your own risk.",
        &[("compiler", "clang")],
        &[],
    ),
    (
        "nvcc.unsupported_host_compiler",
        "#error -- unsupported Microsoft Visual Studio version! Only the versions between 2017 and 2022 (inclusive) are supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this version check; however, using an unsupported host compiler may cause compilation failure or incorrect run time execution. Use at your own risk.",
        &[("compiler", "Microsoft Visual Studio")],
        &[],
    ),
    (
        "nvcc.unsupported_host_compiler",
        "#error -- unsupported Intel ICX compiler! The nvcc flag '-allow-unsupported-compiler' can be used to override this version check; however, using an unsupported host compiler may cause compilation failure or incorrect run time execution. Use at your own risk.",
        &[("compiler", "Intel ICX")],
        &[],
    ),
    // XLA without ptxas, as TensorFlow 2.13's log shows it (the README of GitHub user sejmou's TensorFlow Serving
    // API on an EC2 g4dn quotes its GPU container's start; verbatim lines).
    (
        "xla.ptxas_not_found",
        "2023-07-11 18:29:03.714398: W external/org_tensorflow/tensorflow/compiler/xla/stream_executor/gpu/asm_compiler.cc:109] Couldn't get ptxas version : FAILED_PRECONDITION: Couldn't get ptxas/nvlink version string: INTERNAL: Couldn't invoke ptxas --version",
        &[("ptxas", "ptxas")],
        &[],
    ),
    (
        "xla.ptxas_not_found",
        "2023-07-11 18:29:03.714719: W external/org_tensorflow/tensorflow/compiler/xla/stream_executor/gpu/redzone_allocator.cc:317] INTERNAL: Failed to launch ptxas",
        &[],
        &[],
    ),
    // open-mmlab/mmcv's FAQ (verbatim): MSVC prints the directive as `#error:` after its C1189.
    (
        "nvcc.unsupported_host_compiler",
        "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v9.2\\include\\crt/host_config.h(133): fatal error C1189: #error:  -- unsupported Microsoft Visual Studio version! Only the versions 2012, 2013, 2015 and 2017 are supported!",
        &[("compiler", "Microsoft Visual Studio")],
        &[],
    ),
    // pytorch/pytorch#46312 (verbatim, Windows).
    (
        "cudnn.could_not_load_library",
        "Could not load library cudnn_ops_infer64_8.dll. Error code 126",
        &[("library", "cudnn_ops_infer64_8.dll")],
        &[],
    ),
    (
        "cudnn.unable_to_load_any",
        "Unable to load any of {libcudnn_cnn.so.9.1.0, libcudnn_cnn.so.9.1, libcudnn_cnn.so.9, libcudnn_cnn.so}",
        &[("libraries", "libcudnn_cnn.so.9.1.0, libcudnn_cnn.so.9.1, libcudnn_cnn.so.9, libcudnn_cnn.so")],
        &[],
    ),
    (
        "cudnn.dll_not_found",
        "Could not locate cudnn_ops64_9.dll. Please make sure it is in your library path!",
        &[("library", "cudnn_ops64_9.dll")],
        &[],
    ),
    (
        "ort.cuda_provider_failed",
        "2024-11-12 10:07:56.895559377 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:965 CreateExecutionProviderInstance] Failed to create CUDAExecutionProvider. Require cuDNN 8.* and CUDA 12.*. Please install all dependencies as mentioned in the GPU requirements page",
        &[("cudnn_major", "8"), ("cuda_major", "12")],
        &[],
    ),
    // The provider library's load failure on Windows, as pasted in microsoft/onnxruntime#21769
    // (onnxruntime-gpu 1.19.0 over cuDNN 8: error 126, a DLL it links not found).
    (
        "ort.cuda_provider_failed",
        "2024-08-16 15:41:33.7983729 [E:onnxruntime:Default, provider_bridge_ort.cc:1992 onnxruntime::TryGetProviderInfo_CUDA] D:\\a\\_work\\1\\s\\onnxruntime\\core\\session\\provider_bridge_ort.cc:1637 onnxruntime::ProviderLibrary::Get [ONNXRuntimeError] : 1 : FAIL : LoadLibrary failed with error 126 \"\" when trying to load \"C:\\Users\\sunny\\anaconda3\\envs\\pytorch\\lib\\site-packages\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll\"",
        &[("win_error", "126")],
        &[],
    ),
    // And on Linux, where the loader names the library, which the `ld` row reads too
    // (ardha27/AICoverGen-NoUI-Colab#10).
    (
        "ort.cuda_provider_failed",
        "[E:onnxruntime:Default, provider_bridge_ort.cc:1480 TryGetProviderInfo_CUDA] /onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1193 onnxruntime::Provider& onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: libcufft.so.10: cannot open shared object file: No such file or directory",
        &[("dlerror", "libcufft.so.10: cannot open shared object file: No such file or directory")],
        &["ld.cuda_library_missing"],
    ),
    (
        // The onnxruntime 1.20.1 wheel from PyPI, run here: an InferenceSession asked for CUDA.
        "ort.provider_not_available",
        "/tmp/site/onnxruntime/capi/onnxruntime_inference_collection.py:115: UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider names.Available providers: 'AzureExecutionProvider, CPUExecutionProvider'",
        &[("provider", "CUDAExecutionProvider"), ("available", "AzureExecutionProvider, CPUExecutionProvider")],
        &[],
    ),
    // The C API's refusal, as Rust's ort crate returned it (pykeio/ort#456: its downloaded aarch64
    // binaries have no CUDA provider).
    (
        "ort.provider_not_available",
        "Error { code: GenericFailure, msg: \"CUDA execution provider is not enabled in this build.\" }",
        &[("ep", "CUDA")],
        &[],
    ),
    // sherpa-onnx's fallback when its ONNX Runtime lacks CUDA (k2-fsa/sherpa-onnx#1534).
    (
        "sherpa_onnx.gpu_not_enabled_in_build",
        "/project/sherpa-onnx/csrc/session.cc:GetSessionOptionsImpl:167 Please compile with -DSHERPA_ONNX_ENABLE_GPU=ON. Available providers: CPUExecutionProvider, . Fallback to cpu!",
        &[],
        &[],
    ),
    (
        // A CPU-only Faiss asked for a GPU resource, as Python 3 raises it
        // (https://github.com/facebookresearch/faiss/issues/990).
        "faiss.cpu_only_build",
        "AttributeError: module 'faiss' has no attribute 'StandardGpuResources'",
        &[("symbol", "StandardGpuResources")],
        &[],
    ),
    (
        // The same with both faiss-cpu and faiss-gpu installed, a GPU index asked for
        // (https://github.com/amazon-science/patchcore-inspection/issues/30).
        "faiss.cpu_only_build",
        "AttributeError: module 'faiss' has no attribute 'GpuIndexFlatL2'",
        &[("symbol", "GpuIndexFlatL2")],
        &[],
    ),
    (
        // Python 2's wording names no module (https://github.com/facebookresearch/faiss/issues/500).
        "faiss.cpu_only_build",
        "'module' object has no attribute 'StandardGpuResources'",
        &[("symbol", "StandardGpuResources")],
        &[],
    ),
    (
        // faiss's gpu_wrappers.py (index_cpu_to_all_gpus) run by the CPU build: its NameError.
        "faiss.cpu_only_build",
        "NameError: name 'GpuResourcesVector' is not defined",
        &[("symbol", "GpuResourcesVector")],
        &[],
    ),
    // The NGC entrypoint's check for a driver in the container (NVIDIA/nvidia-docker#1071's tensorflow:19.08 image).
    (
        "ngc.driver_not_detected",
        "`WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.",
        &[],
        &[],
    ),
    // The NGC entrypoint's driver check, as a setup guide quotes it (one line) and as fauxpilot's Triton logged it
    // without a driver version.
    (
        "ngc.container_driver_too_old",
        "spin up the container: `ERROR: This container was built for NVIDIA Driver Release 450.51 or later, but\n       version 430.50 was detected and compatibility mode is UNAVAILABLE.`",
        &[("required", "450.51"), ("driver", "430.50")],
        &[],
    ),
    (
        "ngc.container_driver_too_old",
        "fauxpilot-triton-1         | ERROR: This container was built for NVIDIA Driver Release 515.48 or later, but",
        &[("required", "515.48")],
        &[],
    ),
    // PaddleOCR's cuDNN failure as a blog post quotes it (its log lines in a Chinese tutorial, the old fluid path).
    (
        "paddle.cudnn_not_loadable",
        "RuntimeError: (PreconditionNotMet) Cannot load cudnn shared library. Cannot invoke method cudnnGetVersion.",
        &[("method", "cudnnGetVersion")],
        &[],
    ),
    (
        // glog's prefix, then init.cc's warning (PaddlePaddle 2.4 in a public PaddleOCR log).
        "paddle.no_gpu_in_runtime",
        "W1203 09:46:38.052230  8109 init.cc:182] Compiled with WITH_GPU, but no GPU found in runtime.",
        &[],
        &[],
    ),
    (
        // The text of place.cc's Sprintf (PaddlePaddle's CPU build; glog puts its own prefix before it).
        "paddle.cpu_version_installed",
        "Cannot use GPU because you have installed CPU version PaddlePaddle.",
        &[],
        &[],
    ),
    (
        // framework.py's assert as Python prints it, and paddle.device's ValueError (its format string
        // filled with the re.Match it is given, as paddle 2.x prints it).
        "paddle.not_compiled_with_cuda",
        "AssertionError: Not compiled with CUDA",
        &[],
        &[],
    ),
    (
        "paddle.not_compiled_with_cuda",
        "ValueError: The device should not be <re.Match object; span=(0, 5), match='gpu:0'>, since PaddlePaddle is not compiled with CUDA",
        &[],
        &[],
    ),
    // PaddlePaddle/FastDeploy#362, in Chinese: "it says zlibwapi.dll cannot be found, what is it for?".
    (
        "cudnn.zlib_dll_not_found",
        "\u{63d0}\u{793a}zlibwapi.dll\u{627e}\u{4e0d}\u{5230}\u{ff0c}\u{8fd9}\u{4e2a}\u{662f}\u{5e72}\u{561b}\u{7528}\u{7684}\u{ff1f}",
        &[],
        &[],
    ),
    (
        "cudnn.zlib_dll_not_found",
        "Could not locate zlibwapi.dll. Please make sure it is in your library path!",
        &[],
        &[],
    ),
    // Ubuntu's ldconfig wrapper under WSL 2 (the form apt's libc-bin trigger prints).
    (
        "ld.wsl_libcuda_not_a_link",
        "/sbin/ldconfig.real: /usr/lib/wsl/lib/libcuda.so.1 is not a symbolic link",
        &[("path", "/usr/lib/wsl/lib/libcuda.so.1")],
        &[],
    ),
    // microsoft/WSL#11229: ldconfig's own prefix, on Debian under WSL 2.
    (
        "ld.wsl_libcuda_not_a_link",
        "ldconfig: /usr/lib/wsl/lib/libcuda.so.1 is not a symbolic link",
        &[("path", "/usr/lib/wsl/lib/libcuda.so.1")],
        &[],
    ),
    // microsoft/WSL#5548: quoted in prose, without the prefix or the folder.
    (
        "ld.wsl_libcuda_not_a_link",
        "On Windows 10 build 20161 WSL2 running sudo apt upgrade results in warning: \"libcuda.so.1 is not a symbolic link\"",
        &[("path", "libcuda.so.1")],
        &[],
    ),
    (
        "ld.libcuda_missing",
        "ImportError: libcuda.so.1: cannot open shared object file: No such file or directory",
        &[],
        &[],
    ),
    (
        "ld.cuda_library_missing",
        "OSError: libcudart.so.12: cannot open shared object file: No such file or directory",
        &[("library", "libcudart.so.12")],
        &[],
    ),
    // ldd's listing (arch4edu/arch4edu#24).
    ("ld.cuda_library_missing", "\tlibcudart.so.10.0 => not found", &[("library", "libcudart.so.10.0")], &[]),
    // MSYS2's ntldd on a Windows DLL (dougeeai/llama-cpp-python-wheels#3).
    ("ld.cuda_library_missing", "        cublas64_13.dll => not found", &[("library", "cublas64_13.dll")], &[]),
    // CTranslate2's own loader, as faster-whisper raises it on Windows (Purfview/whisper-standalone-win#237)
    // and on Linux.
    (
        "ctranslate2.library_not_found",
        "RuntimeError: Library cublas64_11.dll is not found or cannot be loaded",
        &[("library", "cublas64_11.dll")],
        &[],
    ),
    (
        "ctranslate2.library_not_found",
        "RuntimeError: Library libcublas.so.12 is not found or cannot be loaded",
        &[("library", "libcublas.so.12")],
        &[],
    ),
    // cudaErrorUnknown was 30 before CUDA 10.1: PyTorch 1.0's THC as facebookresearch/maskrcnn-benchmark#238 printed it.
    (
        "cuda.unknown_error",
        "RuntimeError: cuda runtime error (30) : unknown error at /opt/conda/conda-bld/pytorch-nightly_1542964575207/work/aten/src/THC/THCGeneral.cpp:51",
        &[],
        &[],
    ),
    (
        "cuda.unknown_error",
        "THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch-nightly_1542964575207/work/aten/src/THC/THCGeneral.cpp line=51 error=30 : unknown error",
        &[],
        &[],
    ),
    // nvidia-smi's GPU-Util cell, said in words (microsoft/WSL#7162) and as the table prints it.
    ("nvidia_smi.utilization_err", "GPU-Util ERR! (unable to monitor utilization)", &[], &[]),
    (
        "nvidia_smi.utilization_err",
        "| N/A   45C    P8    N/A /  N/A |    653MiB /  6144MiB |    ERR!      Default |",
        &[],
        &[],
    ),
    // A report that cut PyTorch's line before its version (vllm-project/vllm#1772).
    ("torch.driver_too_old", "RuntimeError: The NVIDIA driver on your system is too old", &[], &[]),
    // darknet's `CUDA Error: %s` (AlexeyAB/darknet#1070).
    ("cuda.unknown_error", "CUDA Error: unknown error: No error", &[], &[]),
    // torch.ops before the dispatcher's wording (pytorch/vision#1405).
    ("torchvision.operator_missing", "RuntimeError: No such operator torchvision::nms`", &[("op", "nms")], &[]),
    // ltdrdata/ComfyUI-Impact-Pack#915: the dispatcher finds no CUDA kernel for torchvision's nms.
    (
        "torchvision.operator_missing",
        "Could not run 'torchvision::nms' with arguments from the 'CUDA' backend. This could be because the operator doesn't exist for this backend, or was omitted during the selective/custom build process (if using custom build).",
        &[("op", "nms")],
        &[],
    ),
    // dmlc/xgboost#3030: XGBoost's line retyped by its reader.
    ("xgboost.not_compiled_with_gpu", "XGBoost version not compile with GPU support.", &[], &[]),
    // The stream executor's DNN call without cuDNN: tensorflow/models#10590's title, verbatim.
    ("tf.dnn_library_not_found", "UNIMPLEMENTED: DNN library is not found.", &[], &[]),
    // xmr-stak's NVIDIA backend (fireice-uk/xmr-stak#1413).
    ("xmrstak.insufficient_driver", "WARNING: NVIDIA Insufficient driver!", &[], &[]),
    (
        "xmrstak.insufficient_driver",
        "Driver does not support CUDA 9.1 API! Update your nVidia driver!",
        &[("runtime", "9.1")],
        &[],
    ),
    // Taichi's driver wrapper, as Genesis-Embodied-AI/genesis-world#114 logged it under WSL 2.
    (
        "taichi.cuinit_failed",
        "[E 12/20/24 08:45:40.689 2984] [cuda_driver.h:operator()@92] CUDA Error CUDA_ERROR_NO_DEVICE: no CUDA-capable \
         device is detected while calling init (cuInit)",
        &[("error", "CUDA_ERROR_NO_DEVICE")],
        &["cuda.no_device"],
    ),
    // A program's own capitalisation of cudaErrorUnsupportedPtxVersion's words (dynexcoin/Dynex#42).
    (
        "cuda.unsupported_ptx",
        "I get error: PUassert: The PTX was compiled with an unsupported toolchain, kernel.cu 2352",
        &[],
        &[],
    ),
    // The vllm-ascend FAQ's line (a CUDA torch where only a CPU or NPU one belongs).
    (
        "ld.torch_cuda_library_missing",
        "OSError: libtorch_cuda.so: cannot open shared object file: No such file or directory.",
        &[("library", "libtorch_cuda.so")],
        &[],
    ),
    // tensorflow/tensorflow#12416: the line retyped without the colon after the library's name.
    (
        "ld.cudnn_library_missing",
        "ImportError: libcudnn.so.6 cannot open shared object file: No such file or directory",
        &[("library", "libcudnn.so.6")],
        &[],
    ),
    (
        "ld.cudnn_library_missing",
        "ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory",
        &[("library", "libcudnn.so.8")],
        &[],
    ),
    (
        "nvml.driver_library_mismatch",
        "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.124",
        &[("nvml_version", "570.124")],
        &[],
    ),
    // NVML's string behind another program's prefix: nvtop's, the title of NixOS/nixpkgs#98328.
    (
        "nvml.driver_library_mismatch",
        "Impossible to initialize nvidia nvml : Driver/library version mismatch",
        &[],
        &[],
    ),
    (
        "nvml.cannot_communicate",
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
        &[],
        &[],
    ),
    ("nvml.unknown_error", "Failed to initialize NVML: Unknown Error", &[], &[]),
    ("nvml.blocked_by_os", "Failed to initialize NVML: GPU access blocked by the operating system", &[], &[]),
    (
        "nvrm.api_mismatch",
        "[   27.950245] NVRM: API mismatch: the client has the version 415.27, but\n               NVRM: this kernel module has the version 390.129.  Please",
        &[("client_version", "415.27"), ("kernel_version", "390.129")],
        &[],
    ),
    (
        "container.cuda_requirement_unsatisfied",
        "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver to a newer version, or use an earlier cuda container: unknown",
        &[("required_cuda", "12.8")],
        &[],
    ),
    (
        "torch.cuda_home_not_set",
        "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.",
        &[],
        &[],
    ),
    (
        "nvrm.api_mismatch",
        "[    9.424670] NVRM: API mismatch: the client 'kwin_wayland' (pid 1005)\n               NVRM: has the version 595.84, but this kernel module has",
        &[("client_version", "595.84")],
        &[],
    ),
    (
        "nvrm.probe_not_called",
        "[188549.976351] NVRM: The NVIDIA probe routine was not called for 3 device(s).",
        &[("count", "3")],
        &[],
    ),
    (
        "nvrm.legacy_gpu",
        "[15280.304871] NVRM: The NVIDIA Tesla M2070 GPU installed in this system is\nNVRM:  supported through the NVIDIA 390.xx Legacy drivers. Please",
        &[("gpu", "Tesla M2070"), ("legacy_branch", "390")],
        &[],
    ),
    // ublue-os/bazzite#3972 (verbatim): the reporter retyped dmesg's line, without `NVRM:` or `GPU`, `NVIDA`.
    (
        "nvrm.legacy_gpu",
        "\"`The NVIDIA GeForce GT 7170M installed in this system is supported through the NVIDA 390.xx Legacy drivers`\"",
        &[("gpu", "GeForce GT 7170M"), ("legacy_branch", "390")],
        &[],
    ),
    // ollama's GPU discovery prints cuInit's CUresult (ollama/ollama:discover/gpu_info_nvcuda.c): 3 is
    // CUDA_ERROR_NOT_INITIALIZED, 999 CUDA_ERROR_UNKNOWN (lines as ollama logs them, from a NixOS
    // configuration's comment and a user's server log).
    (
        "cuda.initialization_error",
        "time=2025-08-12T12:22:52.679-05:00 level=INFO source=gpu.go:612 msg=\"Unable to load cudart library /usr/lib/x86_64-linux-gnu/libcuda.so.575.64.03: cuda driver library init failure: 3\"",
        &[],
        &[],
    ),
    (
        "cuda.unknown_error",
        "level=WARN source=gpu.go:562 msg=\"unknown error initializing cuda driver library\" library=/usr/lib/x86_64-linux-gnu/libcuda.so.560.35.03 error=\"cuda driver library init failure: 999\"",
        &[],
        &[],
    ),
    (
        "nvrm.driver_ignores_gpu",
        "NVRM:  information.  The 396.26 NVIDIA driver will ignore",
        &[("driver_version", "396.26")],
        &[],
    ),
    (
        "nvrm.rm_init_adapter_failed",
        "Jul 01 22:55:07 gpu kernel: NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:884)",
        &[("bus_id", "0000:01:00.0"), ("code", "0x22:0x56:884")],
        &[],
    ),
    // The closed drivers' wording, without the bus id: NVIDIA's README for 390.48 (Common Problems) and
    // Bumblebee-Project/Bumblebee#961's dmesg after resume.
    (
        "nvrm.rm_init_adapter_failed",
        "[58169.423781] NVRM: RmInitAdapter failed! (0x26:0xffff:1123)",
        &[("code", "0x26:0xffff:1123")],
        &[],
    ),
    // The open module refusing a GeForce (a 2080 Ti) before RmInitAdapter fails, from dmesg in
    // NVIDIA/open-gpu-kernel-modules#230.
    (
        "nvrm.open_module_unsupported_gpu",
        "[    3.513141] NVRM: Open nvidia.ko is only ready for use on Data Center GPUs.",
        &[],
        &[],
    ),
    (
        "nvrm.xid",
        "april 24 16:22:15 robin-linux-x3d kernel: NVRM: Xid (PCI:0000:01:00): 79, pid=6755, name=vivaldi-bin, GPU has fallen off the bus.",
        &[("device", "PCI:0000:01:00"), ("xid", "79")],
        &[],
    ),
    (
        // An older driver's form, without `PCI:` (https://pastebin.com/gn6mYmM4).
        "nvrm.xid",
        "May 6 00:38:27 alex kernel: [ 4909.922970] NVRM: Xid (0000:01:00): 13, 0005 00000000 0000502d 00000104 00000000 00000100",
        &[("device", "0000:01:00"), ("xid", "13")],
        &[],
    ),
    (
        // Older still, without the domain (https://pastebin.com/zhK16889).
        "nvrm.xid",
        "Jan 13 22:02:13 Theasker64 kernel: NVRM: Xid (0009:00): 53, CMDre 00000000 00000080 00000000 00000005 00000005",
        &[("device", "0009:00"), ("xid", "53")],
        &[],
    ),
    (
        "kernel.module_key_rejected",
        "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service",
        &[("module", "nvidia")],
        &[],
    ),
    (
        "kernel.lockdown_unsigned_module",
        "[  398.381052] Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7",
        &[("process", "modprobe")],
        &[],
    ),
    (
        "container.unsupported_cuda_version",
        "nvidia-docker | 2016/08/22 12:54:02 Error: unsupported CUDA version: driver 7.5 < image 8.0",
        &[("driver_cuda", "7.5"), ("image_cuda", "8.0")],
        &[],
    ),
    (
        "container.unsupported_cuda_version",
        "nvidia-docker | 2016/04/09 00:07:59 Error: unsupported CUDA version: 7.5 < 6.5",
        &[],
        &[],
    ),
    // NVIDIA/nvidia-docker#288 (a container created before a reboot, started again before nvidia-uvm was loaded).
    (
        "docker.nvidia_device_node_missing",
        "Error response from daemon: linux runtime spec devices: error gathering device information while adding custom device \"/dev/nvidia-uvm-tools\": lstat /dev/nvidia-uvm-tools: no such file or directory",
        &[("device", "/dev/nvidia-uvm-tools")],
        &[],
    ),
    (
        "docker.no_gpu_device_driver",
        "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].",
        &[],
        &[],
    ),
    (
        "docker.unknown_nvidia_runtime",
        "docker: Error response from daemon: unknown or invalid runtime name: nvidia.",
        &[],
        &[],
    ),
    (
        // D34DC3N73R/netdata-glibc#2, retyped with a letter lost.
        "docker.unknown_nvidia_runtime",
        "I am getting unknow runtime specified nvidia.",
        &[],
        &[],
    ),
    (
        "container.unresolvable_cdi_devices",
        "  Warning  Failed     10s (x2 over 10s)  kubelet            Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: could not apply required modification to OCI specification: error modifying OCI spec: failed to inject CDI devices: unresolvable CDI devices management.nvidia.com/gpu=GPU-e78e68c0-4e6a-737e-f9cc-4223fe50aead",
        &[("device", "management.nvidia.com/gpu=GPU-e78e68c0-4e6a-737e-f9cc-4223fe50aead")],
        &[],
    ),
    (
        "cupy.insufficient_driver",
        "cupy.cuda.runtime.CUDARuntimeError: cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version",
        &[],
        &["cuda.insufficient_driver"],
    ),
    ("cupy.not_correctly_installed", "CuPy is not correctly installed.", &[], &[]),
    (
        "cupy.multiple_packages",
        "  CuPy may not function correctly because multiple CuPy packages are installed",
        &[],
        &[],
    ),
    // chelsea0x3b/cudarc#255 (verbatim).
    (
        "cudarc.driver_library_not_found",
        "Unable to find cuda lib under the names [\"cuda\", \"nvcuda\"]. Please open GitHub issue.",
        &[],
        &[],
    ),
    // NVIDIA/cuda-python#17 (verbatim).
    ("cuda_python.libcuda_dlopen_failed", "RuntimeError: Failed to dlopen libcuda.so", &[], &[]),
    (
        "ld.versioned_symbol_missing",
        // Issue 27's sample (a torch import under an older CUDA runtime on LD_LIBRARY_PATH).
        "ImportError: /venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: cudaGetDriverEntryPointByVersion, version libcudart.so.12",
        &[("symbol", "cudaGetDriverEntryPointByVersion"), ("library", "libcudart.so.12")],
        &[],
    ),
    // NVIDIA/DALI#2229 (LightnessOfBeing, verbatim).
    (
        "dali.nvcuvid_not_loaded",
        "[/opt/dali/dali/operators/reader/video_reader_op.h:66] [/opt/dali/dali/operators/reader/loader/video_loader.h:182] Assert on \"lib_handle_\" failed: Failed to load libnvcuvid.so, needed by the VideoReader operator. If you are running in a Docker container, please refer to https://github.com/NVIDIA/nvidia-docker/wiki/Usage",
        &[("library", "libnvcuvid.so"), ("operator", "VideoReader")],
        &[],
    ),
    // polygraphene/ALVR#224 (KookyCrazyBob, verbatim): ALVR's copy of the SDK's NvEncoder on Windows.
    (
        "nvcodec.nvenc_library_not_found",
        "Failed to initialize CEncoder. All VideoEncoder are not available. VCE: AMF Error 1. g_AMFFactory.Init(), NVENC: NvEnc NvEncoderD3D11 failed. Code=1 NvEncoder::LoadNvEncApi : NVENC library file is not found. Please ensure NV driver is installed at c:\\src\\alvr\\alvr_server\\nvencoder.cpp:70",
        &[],
        &[],
    ),
    // Microway/gpu-burn#8 (valen0922, verbatim): the Makefile's CUDAPATH empty, so nvcc ran as /bin/nvcc.
    ("shell.nvcc_not_found", "/bin/sh: /bin/nvcc: No such file or directory", &[("path", "/bin/nvcc")], &[]),
    // flatironinstitute/cufinufft#148 (zengletian1491, verbatim): `sudo make`, whose PATH lacks the toolkit.
    ("shell.nvcc_not_found", "/bin/sh: 1: nvcc: not found", &[("path", "nvcc")], &[]),
    // anibali/docker-pytorch#17: bash's words quoted as inline code in a question.
    ("shell.nvcc_not_found", "`nvcc: command not found`", &[("path", "nvcc")], &[]),
    // naruya/dl_remote#8 (the issue's title, verbatim).
    (
        "shell.nvcc_not_found_python",
        "[Errno 2] No such file or directory: '/usr/local/cuda/bin/nvcc': '/usr/local/cuda/bin/nvcc'",
        &[("path", "/usr/local/cuda/bin/nvcc")],
        &[],
    ),
    // NVIDIA/apex#368 (the issue's line, verbatim): CUDA_HOME a `:` list, which the build joined with /bin/nvcc.
    (
        "shell.nvcc_not_found_python",
        "FileNotFoundError: [Errno 2] No such file or directory: ':/usr/local/cuda:/usr/local/cuda-10.1/bin/nvcc': ':/usr/local/cuda:/usr/local/cuda-10.1/bin/nvcc",
        &[("path", ":/usr/local/cuda:/usr/local/cuda-10.1/bin/nvcc")],
        &[],
    ),
    // pytorch/pytorch#119072 (VictorNanka's quote, 2024-04-18, verbatim): torch 2.2's import under an older
    // NCCL found first; the unversioned form of the loader's message.
    (
        "ld.nvidia_symbol_missing",
        "ImportError: /home/user/.local/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister",
        &[
            ("by", "/home/user/.local/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so"),
            ("symbol", "ncclCommRegister"),
        ],
        &[],
    ),
    // vllm-project/vllm#611 (verbatim): vLLM's kernels built for another torch.
    (
        "ld.torch_symbol_missing",
        "/local_disk0/.ephemeral_nfs/envs/pythonEnv-83e459d1-1266-4d71-a155-ef12c7c6cd22/lib/python3.10/site-packages/vllm/activation_ops.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c106detail19maybe_wrap_dim_slowEllb",
        &[
            (
                "library",
                "/local_disk0/.ephemeral_nfs/envs/pythonEnv-83e459d1-1266-4d71-a155-ef12c7c6cd22/lib/python3.10/site-packages/vllm/activation_ops.cpython-310-x86_64-linux-gnu.so",
            ),
            ("symbol", "_ZN3c106detail19maybe_wrap_dim_slowEllb"),
        ],
        &[],
    ),
    // NVIDIA/TransformerEngine#1192 (verbatim): a C++11-ABI name.
    (
        "ld.torch_symbol_missing",
        "ImportError: /usr/local/lib/python3.10/dist-packages/transformer_engine/transformer_engine_torch.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
        &[
            (
                "library",
                "/usr/local/lib/python3.10/dist-packages/transformer_engine/transformer_engine_torch.cpython-310-x86_64-linux-gnu.so",
            ),
            ("symbol", "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"),
        ],
        &[],
    ),
    // vllm-project/vllm#13608 (verbatim, the issue's title): the limited-API file name, torch's namespace.
    (
        "ld.torch_symbol_missing",
        "[Bug]: ImportError: /workspace/vllm-abo/vllm/_C.abi3.so: undefined symbol: _ZN5torch3jit17parseSchemaOrNameERKSsb",
        &[("library", "/workspace/vllm-abo/vllm/_C.abi3.so"), ("symbol", "_ZN5torch3jit17parseSchemaOrNameERKSsb")],
        &[],
    ),
    // idiap/fast-transformers#127 (verbatim, its last line): a type info of c10.
    (
        "ld.torch_symbol_missing",
        "cpu.cpython-38-x86_64-linux-gnu.so: undefined symbol: _ZTIN3c1021AutogradMetaInterfaceE",
        &[("library", "cpu.cpython-38-x86_64-linux-gnu.so"), ("symbol", "_ZTIN3c1021AutogradMetaInterfaceE")],
        &[],
    ),
    // NVIDIA/warp#940 (verbatim; Warp 1.7.1 under Isaac Sim on an R580 driver, Windows).
    (
        "warp.uuid_entry_point_rejected",
        "Warp CUDA error: Failed to get driver entry point 'cuDeviceGetUuid' (CUDA error 1)",
        &[],
        &[],
    ),
    (
        "ld.cuda_library_conflict",
        "/usr/bin/ld: warning: libcudart.so.7.5, needed by /usr/local/lib/libopenncv_core.so, may conflict with libcudart.so.8.0",
        &[("needed", "libcudart.so.7.5"), ("by", "/usr/local/lib/libopenncv_core.so"), ("linked", "libcudart.so.8.0")],
        &[],
    ),
    (
        "cupy.failed_to_load_library",
        "RuntimeError: CuPy failed to load libnvrtc.so.12: OSError: libnvrtc.so.12: cannot open shared object file: No such file or directory",
        &[("library", "libnvrtc.so.12")],
        &["ld.cuda_library_missing"],
    ),
    // Rows read from the emitters' sources (issue 27). A line marked (format) is written in the
    // emitter's own format around the wording its source prints, where no public paste was found.
    ("cuda.stub_library", "runtime cudaSetDevice(0) -> 34 CUDA driver is a stub library", &[], &[]),
    // (format) Warp's cuda_util.cpp prints only the number: `Warp CUDA error %u: %s (%s:%d)` and
    // `Failed to get driver entry point '%s' (CUDA error %u)`; ggml's older `CUDA error %d at %s:%d: %s`.
    ("cuda.stub_library", "Warp CUDA error: Failed to get driver entry point 'cuCtxCreate' (CUDA error 34)", &[], &[]),
    ("cuda.stub_library", "CUDA error 34 at ggml-cuda.cu:6951: CUDA driver is a stub library", &[], &[]),
    // XLA's WarnIfBadPtxasVersion, as a TensorFlow 2.20 run on an H100 logged it (a public log of 2025-09).
    (
        "xla.ptxas_miscompiles_clamping",
        "E0000 00:00:1758870517.195873 3168446 ptx_compiler_helpers.cc:88] *** WARNING *** Invoking ptxas with version 12.1.105, which corresponds to a CUDA version <=12.6.2. CUDA versions 12.x.y up to and including 12.6.2 miscompile certain edge cases around clamping.",
        &[("method", "ptxas"), ("ptxas_version", "12.1.105")],
        &[],
    ),
    (
        "cuda.call_requires_newer_driver",
        "Warp CUDA error 36: API call is not supported in the installed CUDA driver",
        &[],
        &[],
    ),
    // (format) candle's DriverError.
    (
        "cuda.jit_compiler_not_found",
        "    DriverError(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, \"PTX JIT compiler library not found\")",
        &[],
        &[],
    ),
    // (format) PyTorch's `CUDA error: <string>`.
    ("cuda.jit_compilation_disabled", "RuntimeError: CUDA error: PTX JIT compilation was disabled", &[], &[]),
    // (format)
    ("cuda.device_not_licensed", "RuntimeError: CUDA error: device doesn't have valid Grid license", &[], &[]),
    // (format) TensorFlow's cuda_driver.cc.
    (
        "cuda.shared_object_failed",
        "E tensorflow/stream_executor/cuda/cuda_driver.cc:271] failed call to cuInit: CUDA_ERROR_SHARED_OBJECT_INIT_FAILED: shared object initialization failed",
        &[],
        &["tf.cuinit_failed"],
    ),
    // (format)
    (
        "cuda.operating_system",
        "RuntimeError: CUDA error: OS call failed or operation not supported on this OS",
        &[],
        &[],
    ),
    ("cuda.initialization_error", "RuntimeError: CUDA error: initialization error", &[], &[]),
    ("cuda.system_not_ready", "Error 802: system not yet initialized", &[], &[]),
    // A user's notes (in Chinese) on a macOS install: the launcher's traceback, its last lines.
    (
        "sdwebui.torch_cannot_use_gpu",
        "RuntimeError: Torch is not able to use GPU; add --skip-torch-cuda-test to COMMANDLINE_ARGS variable to disable this check",
        &[],
        &[],
    ),
    // ollama/ollama#6961 (ollama's log under WSL 2, quoted by its maintainer).
    ("cuda.init_symbol_not_found", "cuda driver library init failure: 500", &[], &[]),
    // GoogleCloudPlatform/compute-gpu-installation#10 (a VM after a kernel update, verbatim).
    (
        "kernel.module_not_found",
        "modprobe: FATAL: Module nvidia not found in directory /lib/modules/5.13.0-1025-gcp",
        &[("module", "nvidia"), ("kernel", "5.13.0-1025-gcp")],
        &[],
    ),
    // zai-org/GLM-4#487 (eight RTX 4090s, Accelerate's refusal as the traceback printed it).
    (
        "accelerate.p2p_ib_unsupported",
        "NotImplementedError: Using RTX 4000 series doesn't support faster communication broadband via P2P or IB. Please set `NCCL_P2P_DISABLE=\"1\"` and `NCCL_IB_DISABLE=\"1\" or use `accelerate ",
        &[],
        &[],
    ),
    // Accelerate's earlier wording, as its state.py raised it before huggingface/accelerate#2328 took RTX 3090 out.
    (
        "accelerate.p2p_ib_unsupported",
        "NotImplementedError: Using RTX 3090 or 4000 series doesn't support faster communication broadband via P2P or IB. ",
        &[],
        &[],
    ),
    // trexminer/T-Rex#95 (a miner built with CUDA 11.1 under driver 440: libcuda lacks a CUDA 11 driver call).
    (
        "ld.nvidia_symbol_missing",
        "/home/rik/Downloads/trex/t-rex: symbol lookup error: /home/rik/Downloads/trex/t-rex: undefined symbol: cuDevicePrimaryCtxSetFlags_v2",
        &[("symbol", "cuDevicePrimaryCtxSetFlags_v2")],
        &[],
    ),
    // blakeblackshear/frigate#6666 (the TensorRT 22.07 image on an RTX 4060 Ti; the driver named it without a model).
    (
        "ngc.gpu_not_supported",
        "WARNING: Detected NVIDIA NVIDIA Graphics Device GPU, which is not yet supported in this version of the container",
        &[("gpu", "NVIDIA Graphics Device")],
        &[],
    ),
    // ollama/ollama#6840 (ollama 0.3.10 in Docker on Debian 12, cuInit's CUDA_ERROR_NO_DEVICE).
    (
        "cuda.no_device",
        "time=2024-09-17T15:04:08.215Z level=INFO source=gpu.go:560 msg=\"no nvidia devices detected\" library=/usr/lib/x86_64-linux-gnu/libcuda.so.550.107.02",
        &[],
        &[],
    ),
    // abysssol/ollama-flake#4 (ollama 0.1.24 on NixOS: nvmlInit_v2 answered 18, a driver and library mismatch).
    (
        "nvml.driver_library_mismatch",
        "67ffy95f824kxbvx4s6an9150sd6zazl-nvidia-x11-545.29.06-6.1.75/lib/libnvidia-ml.so.545.29.06: nvml vram init failure: 18\"",
        &[],
        &[],
    ),
    // xanmod/linux#411, DKMS building NVIDIA 545.29.06 for kernel 6.6.15 (two of its lines).
    (
        "kbuild.gpl_only_symbol",
        "ERROR: modpost: GPL-incompatible module nvidia.ko uses GPL-only symbol '__rcu_read_lock'",
        &[("module", "nvidia"), ("symbol", "__rcu_read_lock")],
        &[],
    ),
    // zabbly/linux#15's title: the same line with the quotes a forum's title turned typographic.
    (
        "kbuild.gpl_only_symbol",
        "6.7.3 kernel + nvidia incompatibility: ERROR: modpost: GPL-incompatible module nvidia.ko uses GPL-only symbol \u{2018}__rcu_read_lock\u{2019}",
        &[("module", "nvidia"), ("symbol", "__rcu_read_lock")],
        &[],
    ),
    // A user's notes on GitHub (in Japanese) on running XGBoost's GPU benchmark with Anaconda's build on Windows.
    (
        "xgboost.not_compiled_with_gpu",
        "xgboost.core.XGBoostError: [09:12:50] c:\\windows\\temp\\abs_557yfx631l\\croots\\recipe\\xgboost-split_1659548953302\\work\\src\\common\\common.h:157: XGBoost version not compiled with GPU support.",
        &[],
        &[],
    ),
    (
        "cuda.system_not_ready",
        "Failed to allocate device vector A (error code system not yet initialized)! [Vector addition of 5000 elements]",
        &[],
        &[],
    ),
    // (format)
    (
        "cuda.mps_failure",
        "RuntimeError: CUDA error: MPS client failed to connect to the MPS control daemon or the MPS server",
        &[],
        &[],
    ),
    // (format)
    (
        "cuda.mps_failure",
        "cuInit returned CUDA_ERROR_MPS_CONNECTION_FAILED",
        &[("code_name", "CUDA_ERROR_MPS_CONNECTION_FAILED")],
        &[],
    ),
    ("cuda.ecc_uncorrectable", "RuntimeError: CUDA error: uncorrectable ECC error encountered", &[], &[]),
    // (format)
    (
        "cuda.nvlink_uncorrectable",
        "RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution",
        &[],
        &[],
    ),
    ("cuda.launch_timeout", "RuntimeError: CUDA error: the launch timed out and was terminated", &[], &[]),
    // An Ubuntu forum thread of 2018 ("I purged nvidia drivers and reinstalled them but my Nvidia drivers are not
    // loaded"), the reporter's nvidia-settings.
    ("nvidia_settings.driver_not_loaded", "ERROR: NVIDIA driver is not loaded", &[], &[]),
    (
        "nvml.driver_not_loaded",
        "ERROR: failed to generate CDI spec: failed to initialize NVML: Driver Not Loaded",
        &[],
        &[],
    ),
    ("nvml.no_permission", "Failed to initialize NVML: Insufficient Permissions", &[], &[]),
    // (format) pynvml's exception class with nvmlErrorString's text.
    ("nvml.library_not_found", "pynvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found", &[], &[]),
    // nvidia-smi's own words, in a container without the driver's libraries (archimg/archlinux#25).
    (
        "nvml.library_not_found",
        "`NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display Driver is properly installed and present in your system.",
        &[],
        &[],
    ),
    // The shells' words for a program not on PATH, as pasted from a container started without a GPU
    // (NVIDIA/nvidia-docker issues) and from Windows' cmd.exe.
    // The line as bitsandbytes 0.38.0's cuda_setup/main.py writes it to its setup log.
    (
        "bitsandbytes.libcuda_not_found",
        "CUDA SETUP: WARNING! libcuda.so not found! Do you have a CUDA driver installed? If you are on a cluster, make sure you are on a CUDA machine!",
        &[],
        &[],
    ),
    ("shell.nvidia_smi_not_found", "bash: nvidia-smi: command not found", &[], &[]),
    // PyTorch's DataLoader, both of its lines (torch/csrc/DataLoader.cpp).
    (
        "torch.dataloader_shm_exhausted",
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
        &[],
        &[],
    ),
    (
        "torch.dataloader_shm_exhausted",
        "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.",
        &[],
        &[],
    ),
    // pytorch/pytorch#4150's build log: CUDA 9.0's headers under an older nvcc.
    (
        "nvcc.cudacc_ver_redefined",
        "/usr/local/cuda-9.0/include/crt/common_functions.h:64:0: warning: \"__CUDACC_VER__\" redefined [enabled by default]",
        &[("include", "/usr/local/cuda-9.0/include")],
        &[],
    ),
    // BVLC/caffe#2530's build log.
    ("nvcc.libdevice_not_found", "nvcc fatal   : Path to libdevice library not specified", &[], &[]),
    ("shell.nvidia_smi_not_found", "/bin/sh: 1: nvidia-smi: not found", &[], &[]),
    ("shell.nvidia_smi_not_found", "zsh: command not found: nvidia-smi", &[], &[]),
    // cnstark/pytorch-docker#19 (in Chinese: nvcc -V shows the CUDA version, but `nvidia-smi` returns the error).
    (
        "shell.nvidia_smi_not_found",
        "\u{4f60}\u{597d}\u{ff0c}\u{5b89}\u{88c5}\u{5b8c}\u{4e4b}\u{540e} `nvcc -V`\u{663e}\u{793a}\u{4e86} cuda \u{7248}\u{672c}\u{ff0c}\u{4f46}\u{662f} `nvidia-smi` \u{547d}\u{4ee4}\u{8fd4}\u{56de}\u{9519}\u{8bef} command not found",
        &[],
        &[],
    ),
    ("shell.nvidia_smi_not_found", "sudo: nvidia-smi: command not found", &[], &[]),
    ("shell.nvidia_smi_not_found", "'nvidia-smi' is not recognized as an internal or external command,", &[], &[]),
    // The loader's words for the driver's NVML library, as nvml-wrapper's error shows them (its
    // `Failed to load NVML library` around libloading's dlerror).
    (
        "nvml.library_not_found",
        "Failed to load NVML library: libnvidia-ml.so: cannot open shared object file: No such file or directory",
        &[],
        &[],
    ),
    (
        "nvml.gpu_is_lost",
        "Unable to determine the device handle for GPU 0000:02:00.0: GPU is lost. Reboot the system to recover this GPU",
        &[],
        &["nvml.device_handle_failed"],
    ),
    // (format)
    ("nvml.reset_required", "pynvml.NVMLError_ResetRequired: GPU requires reset", &[], &[]),
    ("nvml.corrupted_inforom", "WARNING: infoROM is corrupted at gpu 0000:B3:00.0", &[("bus_id", "0000:B3:00.0")], &[]),
    (
        "nvml.device_handle_failed",
        "Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error",
        &[("bus_id", "0000:0B:00.0"), ("reason", "Unknown Error")],
        &[],
    ),
    ("nvml.no_devices_found", "No devices were found", &[], &[]),
    // (format) pynvml's class for NVML_ERROR_NOT_SUPPORTED with NVML's string, as a traceback ends.
    ("nvml.not_supported", "pynvml.nvml.NVMLError_NotSupported: Not Supported", &[], &[]),
    // go-nvml's `Not Supported` at the end of a Go program's wrapped error (koordinator-sh/koordinator#1558, under WSL 2).
    (
        "nvml.not_supported",
        "W0819 10:04:28.556216  152058 collector_gpu_linux.go:72] nvml init gpu data, error unable to get device minor number: Not Supported",
        &[],
        &[],
    ),
    // pynvml's class for NVML_ERROR_UNKNOWN as a traceback's last line.
    ("nvml.query_unknown_error", "pynvml.nvml.NVMLError_Unknown: Unknown Error", &[], &[]),
    // (format) the kernel module's printf at 595.45.04, one dmesg line per line.
    (
        "nvrm.fallen_off_bus",
        "NVRM: (PCI ID: 10de:2204) installed in this system has\nNVRM: fallen off the bus and is not responding to commands.",
        &[],
        &[],
    ),
    // (format)
    (
        "nvrm.gpu_unsupported_by_release",
        "NVRM: installed in this system is not supported by the\nNVRM: NVIDIA 595.45.04 driver release.",
        &[("driver_version", "595.45.04")],
        &[],
    ),
    // (format)
    (
        "nvrm.open_module_needs_gsp",
        "NVRM: installed in this system is not supported by open\nNVRM: nvidia.ko because it does not include the required GPU",
        &[],
        &[],
    ),
    // ublue-os/aurora#1924: the message's third line alone, as a kernel log cut to it shows it.
    ("nvrm.open_module_needs_gsp", "NVRM: nvidia.ko because it does not include the required GPU", &[], &[]),
    // (format) init.cc@v2.21.5-1#L2261's string, as torch.distributed raises it.
    (
        "nccl.system_error",
        "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
        &[],
        &[],
    ),
    (
        "nccl.shm_too_small",
        "3d3e22c3066f:168:168 [0] misc/shmutils.cc:72 NCCL WARN Error: failed to extend /dev/shm/nccl-UbzKZ9 to 9637892 bytes",
        &[("path", "/dev/shm/nccl-UbzKZ9"), ("bytes", "9637892")],
        &[],
    ),
    // NCCL 2.7's shm.h, as a log of NVIDIA/nccl#290's kind prints it: the segment without its folder,
    // and posix_fallocate's strerror.
    (
        "nccl.shm_too_small",
        "4e9a7654171e:8639:8745 [0] include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-170206743cd9fd1d-0-1-0 (size 9637888)",
        &[("path", "nccl-shm-recv-170206743cd9fd1d-0-1-0"), ("size", "9637888")],
        &[],
    ),
    (
        "nccl.shm_too_small",
        "4e9a7654171e:8639:8745 [0] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device",
        &[],
        &[],
    ),
    // MMCV's op guard (open-mmlab/mmcv#1142) and PyTorch Geometric's (rusty1s/pytorch_scatter#384), as raised.
    (
        "torch_extension.op_not_compiled_with_gpu",
        "RuntimeError: nms is not compiled with GPU support",
        &[("op", "nms")],
        &[],
    ),
    ("torch_extension.not_compiled_with_cuda", "RuntimeError: Not compiled with CUDA support", &[], &[]),
    // maskrcnn-benchmark's ops (maskrcnn_benchmark/csrc/nms.h at v0.1) and the detection code copying them.
    ("torch_extension.not_compiled_with_cuda", "RuntimeError: Not compiled with GPU support", &[], &[]),
    // MMDetection3D's collect_env (SxJyJay/MSMDFusion#21).
    ("mmcv.cuda_compiler_not_available", "MMCV CUDA Compiler: not available", &[], &[]),
    // opencv-python's PyPI wheel (opencv/opencv-python#398).
    (
        "opencv.compiled_without_cuda",
        "cv2.error: OpenCV(4.4.0) C:\\Users\\appveyor\\AppData\\Local\\Temp\\1\\pip-req-build-52oirelq\\opencv\\modules\\core\\include\\opencv2/core/private.cuda.hpp:106: error: (-216:No CUDA support) The library is compiled without CUDA support in function 'throw_no_cuda'",
        &[],
        &[],
    ),
    // Caffe2's check (onnx/onnx-caffe2#288) and Lua Torch's cuDNN bindings (jcjohnson/neural-style#331).
    (
        "caffe2.cudnn_version_mismatch",
        "RuntimeError: [enforce fail at common_cudnn.h:118] version_match. cuDNN compiled (6021) and runtime (7003) versions mismatch",
        &[("compiled", "6021"), ("runtime", "7003")],
        &[],
    ),
    (
        "cudnn_torch.library_not_found",
        "/home/ubuntu/torch/install/share/lua/5.1/cudnn/ffi.lua:1603: 'libcudnn (R5) not found in library path.",
        &[("release", "5")],
        &[],
    ),
    // vllm-project/vllm#327 (A100s in MIG mode, CUDA_VISIBLE_DEVICES=0,1,2,3).
    (
        "torch.device_index_beyond_count",
        "torch.cuda.DeferredCudaCallError: CUDA call failed lazily at initialization with error: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at \"../aten/src/ATen/cuda/CUDAContext.cpp\":50, please re",
        &[],
        &[],
    ),
    // NCCL's P2P transport where CUDA said no (NVIDIA/nccl#1516, two RTX 3090 on one node).
    (
        "nccl.p2p_not_enabled",
        "ault44:1424216:1424273 [1] NCCL INFO Could not enable P2P between dev 1(=81000) and dev 0(=41000)",
        &[("dev1", "1"), ("bus1", "81000"), ("dev2", "0"), ("bus2", "41000")],
        &[],
    ),
    // nvbandwidth v0.2 waiving a device-to-device test (NVIDIA/nvbandwidth#13).
    (
        "nvbandwidth.peer_test_waived",
        "Waiving device_to_device_memcpy_write_ce.",
        &[("test", "device_to_device_memcpy_write_ce")],
        &[],
    ),
    // DistServe's worker exiting on CUDA's 217 (LLMServe/DistServe#39).
    (
        "distserve.peer_access_unsupported",
        "(ParaWorker pid=1955026) Error: Peer-to-peer access is unsupported on this platform.",
        &[],
        &[],
    ),
    // (format) JAX raises the check's message as a RuntimeError.
    ("jax.cuda_component_outdated", "RuntimeError: Outdated cuFFT installation found.", &[("component", "cuFFT")], &[]),
    // RosettaCommons/RFdiffusion#208 (verbatim).
    (
        "jax.cuda_older_than_build",
        "CUDA backend failed to initialize: Found CUDA version 12010, but JAX was built against version 12020, which is newer. The copy of CUDA that is installed must be at least as new as the version against which JAX was built. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
        &[("component", "CUDA"), ("found", "12010"), ("built", "12020")],
        &["jax.cuda_backend_failed"],
    ),
    // MIT-REALM/gcbfplus#1 (verbatim).
    (
        "jax.cudnn_older_than_build",
        "CUDA backend failed to initialize: Found cuDNN version 8600, but JAX was built against version 8906, which is newer. The copy of cuDNN that is installed must be at least as new as the version against which JAX was built. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
        &[("found", "8600"), ("built", "8906")],
        &["jax.cuda_backend_failed"],
    ),
    // (format)
    (
        "jax.cuda_component_not_loadable",
        "RuntimeError: Unable to load cuPTI. Is it installed?",
        &[("component", "cuPTI")],
        &[],
    ),
    (
        "ld.symbol_version_not_found",
        "ImportError: /lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_python.so)",
        &[
            ("version", "GLIBCXX_3.4.30"),
            ("required_by", "/opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_python.so"),
        ],
        &[],
    ),
    // Markdown took the backquote for code and dropped it with the quote (RenYurui/PIRender#21, in an inline-code span).
    (
        "ld.symbol_version_not_found",
        "`ImportError: /miniconda3/envs/PIRender/lib/python3.6/site-packages/torch/lib/../../../.././libstdc++.so.6: version GLIBCXX_3.4.29 not found (required by .cache/torch_extensions/nvdiffrast_plugin/nvdiffrast_plugin.so)`",
        &[
            ("version", "GLIBCXX_3.4.29"),
            ("required_by", ".cache/torch_extensions/nvdiffrast_plugin/nvdiffrast_plugin.so"),
        ],
        &[],
    ),
    // ethminer 0.18 and later print the level without the colon.
    ("ethminer.insufficient_driver", "CUDA Error : Insufficient CUDA driver 9010", &[("driver_cuda_int", "9010")], &[]),
    // lambdal/lambda-stack-dockerfiles#15: an image that ships the driver's NVML library.
    (
        "container.mount_file_exists",
        "nvidia-container-cli: mount error: file creation failed: /var/lib/docker/overlay2/40c7fccee0aa8659243a8180389b333c9a6b85fac895a95207bfddca46df4fc6/merged/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1: file exists: unknown.",
        &[(
            "path",
            "/var/lib/docker/overlay2/40c7fccee0aa8659243a8180389b333c9a6b85fac895a95207bfddca46df4fc6/merged/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
        )],
        &[],
    ),
    ("nvcc.stage_not_found", "sh: 1: cicc: not found", &[("tool", "cicc")], &[]),
    ("nvcc.stage_not_found", "sh: line 1: ptxas: command not found", &[("tool", "ptxas")], &[]),
    (
        "container.nvml_function_not_found",
        "stderr: nvidia-container-cli: detection error: nvml error: function not found\\\\n\\\"\"\": unknown.",
        &[("stage", "detection")],
        &[],
    ),
    (
        "container.cli_init_failed",
        "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file: no such file or directory: unknown.",
        &[(
            "reason",
            "load library failed: libnvidia-ml.so.1: cannot open shared object file: no such file or directory: unknown.",
        )],
        &["nvml.library_not_found"],
    ),
    // (format) klog's prefix around the plugin's lines at v0.20.0.
    // The plugin's first releases logged NVML's error alone (main.go's log.Println).
    (
        "k8s.nvml_init_failed",
        "2018/01/10 08:12:31 Failed to start nvml with error: could not load NVML library",
        &[],
        &[],
    ),
    (
        // NVIDIA/k8s-device-plugin#856 (0.16.1, the pod in CrashLoopBackOff); go-nvml's name of the return, which
        // the NVML row reads too.
        "k8s.nvml_init_failed",
        "error starting plugins: error creating plugin manager: unable to create plugin manager: nvml init failed: ERROR_LIBRARY_NOT_FOUND",
        &[],
        &["nvml.library_not_found"],
    ),
    (
        "k8s.nvml_init_failed",
        "E0530 08:47:09.364823       1 factory.go:100] If this is a GPU node, did you set the docker default runtime to `nvidia`?",
        &[],
        &[],
    ),
    // (format)
    (
        "k8s.no_devices_found",
        "I0530 08:47:09.364900       1 main.go:416] No devices found. Waiting indefinitely.",
        &[],
        &[],
    ),
    (
        "dkms.module_build_failed",
        "Error! Bad return status for module build on kernel: 6.8.0-31-generic (x86_64)",
        &[("kernel", "6.8.0-31-generic"), ("arch", "x86_64")],
        &[],
    ),
    // Void Linux's trigger, which hides DKMS's own lines (void-linux/void-packages#61087).
    (
        "dkms.module_build_failed",
        "Building DKMS module 'nvidia-580.142' for kernel-7.1.0_1... FAILED!",
        &[("module", "nvidia-580.142"), ("void_kernel", "7.1.0_1")],
        &[],
    ),
    (
        "bitsandbytes.no_gpu_build",
        "UserWarning: The installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers, 8-bit multiplication, and GPU quantization are unavailable.",
        &[],
        &[],
    ),
    (
        "bitsandbytes.cuda_setup_failed",
        "CUDA Setup failed despite GPU being available. Please run the following command to get more information:",
        &[],
        &[],
    ),
    // (format)
    (
        "bitsandbytes.native_unavailable",
        "RuntimeError: Attempted to use bitsandbytes native library functionality but it's not available.",
        &[],
        &[],
    ),
    // (format) the two lines of the message at 0.50.1.
    (
        "bitsandbytes.cuda_version_mismatch",
        "Requested CUDA version:          12.9\nDetected PyTorch CUDA version:   12.9",
        &[("requested", "12.9"), ("torch_cuda", "12.9")],
        &[],
    ),
    // (format) cextension.py@0.45.5#L28's first line.
    (
        "bitsandbytes.cuda_version_override",
        "WARNING: BNB_CUDA_VERSION=118 environment variable detected; loading libbitsandbytes_cuda118.so.",
        &[("variable", "BNB_CUDA_VERSION"), ("version", "118"), ("library", "libbitsandbytes_cuda118.so")],
        &[],
    ),
    // (format) cuda_setup/main.py@0.41.0#L112's line of the warning.
    (
        "bitsandbytes.cuda_version_override_legacy",
        "Loading CUDA version: BNB_CUDA_VERSION=118",
        &[("version", "118")],
        &[],
    ),
    // (format) cuda_setup/main.py@0.41.0#L133.
    (
        "bitsandbytes.required_library_not_found",
        "CUDA SETUP: Required library version not found: libbitsandbytes_cuda118_nocublaslt.so. Maybe you need to compile it from source?",
        &[("library", "libbitsandbytes_cuda118_nocublaslt.so")],
        &[],
    ),
    // (format) CUDAAllocatorConfig.cpp@01f9ef32's assert with both backends.
    (
        "torch.alloc_backend_changed_after_load",
        "RuntimeError: Allocator backend parsed at runtime != allocator backend parsed at load time, cudaMallocAsync != native",
        &[("runtime", "cudaMallocAsync"), ("load", "native")],
        &[],
    ),
    ("numba.driver_not_found", "CUDA driver library cannot be found.", &[], &[]),
    (
        "numba.driver_init_error",
        "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: CUDA_ERROR_UNKNOWN (999)",
        &[("error", "CUDA_ERROR_UNKNOWN (999)")],
        &["cuda.unknown_error"],
    ),
    (
        "numba.nvvm_missing",
        "numba.cuda.cudadrv.error.NvvmSupportError: libNVVM cannot be found. Do `conda install cudatoolkit`:",
        &[],
        &[],
    ),
    // numba's library test (`cuda.cudadrv.libs.test()`, libs.py's `'\tERROR: failed to open %s:\n%s'`) for nvvm.
    ("numba.nvvm_missing", "        Trying to open library...       ERROR: failed to open nvvm:", &[], &[]),
    // (format)
    (
        "numba.cc_too_low",
        "numba.cuda.cudadrv.error.CudaSupportError: <CUDA device 0 'b'GeForce GT 730''> has compute capability < (3, 5)",
        &[("min_cc_tuple", "(3, 5)")],
        &[],
    ),
    (
        "llamacpp.cuda_init_failed",
        "ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected",
        &[("error", "no CUDA-capable device is detected")],
        &["cuda.no_device"],
    ),
    // The journal line elasticdotventures/_b00t_#259 quotes from a Homebrew llama.cpp (built without CUDA).
    (
        "llamacpp.no_usable_gpu",
        "Confirmed via journal: `warning: no usable GPU found, --gpu-layers option will be ignored`",
        &[],
        &[],
    ),
    (
        // llama_print_system_info's line as its format string builds it (a build without any BLAS).
        "llamacpp.cpu_only_build",
        "system_info: n_threads = 8 / 16 | AVX = 1 | AVX2 = 1 | AVX512 = 0 | FMA = 1 | NEON = 0 | ARM_FMA = 0 | F16C = 1 | FP16_VA = 0 | WASM_SIMD = 0 | BLAS = 0 | SSE3 = 1 | VSX = 0 |",
        &[],
        &[],
    ),
    (
        "triton.gpu_too_old",
        "RuntimeError: Found Tesla P4 which is too old to be supported by the triton GPU compiler, which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0, but your device is of CUDA capability 6.1",
        &[("gpu", "Tesla P4"), ("cc", "6.1")],
        &[],
    ),
    // (format) the exception's text as torch.compile raises it.
    (
        "triton.missing",
        "torch._inductor.exc.TritonMissing: Cannot find a working triton installation. Either the package is not installed or it is too old. More information on installing Triton can be found at: https://github.com/triton-lang/triton",
        &[],
        &[],
    ),
    (
        "triton.ptxas_unknown_arch",
        "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'",
        &[("arch", "sm_121a")],
        &[],
    ),
    ("cudnn.status_version_mismatch", "RuntimeError: cuDNN error: CUDNN_STATUS_VERSION_MISMATCH", &[], &[]),
    (
        "cudnn.status_sublibrary_loading_failed",
        "RuntimeError: cuDNN error: CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED",
        &[],
        &[],
    ),
    // (format) PyTorch's `cuDNN error: <status>`.
    ("cudnn.status_arch_mismatch", "RuntimeError: cuDNN error: CUDNN_STATUS_ARCH_MISMATCH", &[], &[]),
    (
        "cudnn.status_not_initialized",
        "E tensorflow/stream_executor/cuda/cuda_dnn.cc:334] Could not create cudnn handle: CUDNN_STATUS_NOT_INITIALIZED",
        &[],
        &[],
    ),
    (
        "cublas.status_not_initialized",
        "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
        &[],
        &[],
    ),
    // (format)
    (
        "cublas.status_arch_mismatch",
        "RuntimeError: CUDA error: CUBLAS_STATUS_ARCH_MISMATCH when calling `cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, c, CUDA_R_16F, ldc, CUDA_R_32F, CUBLAS_GEMM_DFALT_TENSOR_OP)`",
        &[],
        &[],
    ),
    (
        "nvrtc.builtins_missing",
        "RuntimeError: nvrtc: error: failed to open libnvrtc-builtins.so.11.1.",
        &[("library", "libnvrtc-builtins.so.11.1")],
        &[],
    ),
    ("nvrtc.builtins_missing", "NVRTC Error(7): NVRTC_ERROR_BUILTIN_OPERATION_FAILURE", &[], &[]),
    // openmm/openmm#1485 (NVRTC before CUDA 11 names no file).
    ("nvrtc.builtins_missing", "Exception: Error compiling program: nvrtc: error: failed to load builtins", &[], &[]),
    (
        "vllm.bf16_unsupported",
        "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute capability 7.5. You can use float16 instead by explicitly setting the`dtype` flag in CLI, for example: --dtype=half.",
        &[("min_cc", "8.0"), ("gpu", "Tesla T4"), ("cc", "7.5")],
        &[],
    ),
    // Public vLLM 0.20.0 log under WSL2 (a docker compose log, 2026-05-01), the warning of Platform.is_pin_memory_available.
    (
        "vllm.pin_memory_off_wsl",
        "WARNING 05-01 16:50:31 [interface.py:686] Using 'pin_memory=False' as WSL is detected. This may slow down the performance.",
        &[],
        &[],
    ),
    // jellyfin/jellyfin#7570 (Debian 11, the container's FFmpeg).
    (
        "ffmpeg.nvenc_library_not_loaded",
        "[h264_nvenc @ 0x55688b625f40] Cannot load libnvidia-encode.so.1",
        &[("library", "libnvidia-encode.so.1")],
        &[],
    ),
    // carykh/jumpcutter#188 (Windows).
    ("ffmpeg.nvenc_library_not_loaded", "Cannot load nvEncodeAPI64.dll", &[("library", "nvEncodeAPI64.dll")], &[]),
    // flox/flox#3597 (FFmpeg 7.1.1 from a flox environment).
    (
        "ffmpeg.nvdec_library_not_loaded",
        "    [h264 @ 0x1e8e8840] Cannot load libnvcuvid.so.1",
        &[("library", "libnvcuvid.so.1")],
        &[],
    ),
    // ladaapp/lada#130 (PyAV's FFmpeg logging through Python's logging).
    (
        "ffmpeg.nvenc_api_newer_than_driver",
        "ERROR:libav.h264_nvenc:Driver does not support the required nvenc API version. Required: 13.0 Found: 12.2",
        &[("required", "13.0"), ("found", "12.2")],
        &[],
    ),
    // livepeer/go-livepeer#1106.
    (
        "ffmpeg.nvenc_driver_minimum",
        "[h264_nvenc @ 0x7ff3e9b83c00] The minimum required Nvidia driver for nvenc is 418.30 or newer",
        &[("driver_version", "418.30")],
        &[],
    ),
    // A Linux driver's three parts (googlecolab/colabtools#3187).
    (
        "ffmpeg.nvenc_driver_minimum",
        " [hevc_nvenc @ 0x55defbb87c00] The minimum required Nvidia driver for nvenc is 470.57.02 or newer",
        &[("driver_version", "470.57.02")],
        &[],
    ),
    // ladaapp/lada#130: builds whose table has no entry for their API.
    (
        "ffmpeg.nvenc_driver_minimum",
        "ERROR:libav.h264_nvenc:The minimum required Nvidia driver for nvenc is (unknown) or newer",
        &[("driver_version", "(unknown)")],
        &[],
    ),
    // daniilidis-group/ffmpeg_image_transport#6 (a machine without an NVIDIA GPU).
    (
        "ffmpeg.cuda_library_not_loaded",
        "[hevc_nvenc @ 0x56547a989800] Cannot load libcuda.so.1",
        &[("library", "libcuda.so.1")],
        &[],
    ),
    // Raveler/ffmpeg-cpp#5 (Windows).
    (
        "ffmpeg.cuda_library_not_loaded",
        "[h264_nvenc @ 000001f8d00602c0] Cannot load nvcuda.dll",
        &[("library", "nvcuda.dll")],
        &[],
    ),
    // invoke-ai/InvokeAI#4788: the warning's second line, a CPU torch under an xFormers for CUDA 11.8.
    (
        "xformers.built_for_other_torch",
        "    PyTorch 2.0.1+cu118 with CUDA 1108 (you have 2.0.1+cpu)",
        &[("built_torch", "2.0.1+cu118"), ("built_cuda", "1108"), ("torch", "2.0.1+cpu")],
        &[],
    ),
    // Vchitect/SEINE#21 (a Mac, torch without a local tag).
    (
        "xformers.built_for_other_torch",
        "    PyTorch 2.0.1 with CUDA 1106 (you have 2.0.1)",
        &[("built_torch", "2.0.1"), ("built_cuda", "1106"), ("torch", "2.0.1")],
        &[],
    ),
    // AlexeyAB/darknet#8558 (CUDA 11.7's cuBLAS linked without its cuBLASLt).
    (
        "ld.versioned_reference_undefined",
        "/usr/bin/ld: /usr/local/cuda-11.7/lib64/libcublas.so: undefined reference to `cublasLtGetStatusString@libcublasLt.so.11'",
        &[
            ("by", "/usr/local/cuda-11.7/lib64/libcublas.so"),
            ("symbol", "cublasLtGetStatusString"),
            ("needed", "libcublasLt.so.11"),
        ],
        &[],
    ),
    // The same line as Markdown shows it where its backquote opened inline code and was dropped (written for the
    // test from isaac_ros_image_pipeline#18's line; glibc's line lost its quotes the same way in RenYurui/PIRender#21).
    (
        "ld.versioned_reference_undefined",
        "/opt/nvidia/vpi1/lib64/libnvvpi.so.1.1.15: undefined reference to cudaMemcpyToArray@libcudart.so.10.2'",
        &[
            ("by", "/opt/nvidia/vpi1/lib64/libnvvpi.so.1.1.15"),
            ("symbol", "cudaMemcpyToArray"),
            ("needed", "libcudart.so.10.2"),
        ],
        &[],
    ),
    // NVIDIA-ISAAC-ROS/isaac_ros_image_pipeline#18 (VPI built for CUDA 10.2, no ld prefix).
    (
        "ld.versioned_reference_undefined",
        "/opt/nvidia/vpi1/lib64/libnvvpi.so.1.1.15: undefined reference to `cudaMemcpyToArray@libcudart.so.10.2'",
        &[
            ("by", "/opt/nvidia/vpi1/lib64/libnvvpi.so.1.1.15"),
            ("symbol", "cudaMemcpyToArray"),
            ("needed", "libcudart.so.10.2"),
        ],
        &[],
    ),
    // Guanghan/lighttrack#46 (an NMS extension built by the system's nvcc).
    (
        "ld.cuda_runtime_symbol_missing",
        "ImportError: /home/peeterson/Desktop/lighttrack/HPE/../lib/nms/gpu_nms.cpython-36m-x86_64-linux-gnu.so: undefined symbol: __cudaPopCallConfiguration",
        &[
            ("library", "/home/peeterson/Desktop/lighttrack/HPE/../lib/nms/gpu_nms.cpython-36m-x86_64-linux-gnu.so"),
            ("symbol", "__cudaPopCallConfiguration"),
        ],
        &[],
    ),
    // tensorflow/tensorflow#39716 (TensorFlow 2.2 taking /usr/local/cuda's ptxas of CUDA 8).
    (
        "tf.ptxas_too_old",
        "You are using ptxas 8.x, but TF requires ptxas 9.x (and strongly prefers >= 9.2.88).  Compilation of XLA kernels below will likely fail.",
        &[("ptxas", "8.x")],
        &[],
    ),
    // (format) the later warning of asm_compiler.cc, for a ptxas of 9.x before 11.1.
    (
        "tf.ptxas_too_old",
        "*** WARNING *** You are using ptxas 10.1.243, which is older than 11.1. ptxas before 11.1 is known to miscompile XLA code, leading to incorrect results or invalid-address errors.",
        &[("ptxas", "10.1.243"), ("older_than", "11.1")],
        &[],
    ),
    // PaddlePaddle/Paddle#34725 (AI Studio's /dev/shm).
    (
        "paddle.dataloader_shm_exhausted",
        "Unexpected BUS error encountered in DataLoader worker. This might be caused by insufficient shared memory (shm), please check whether use_shared_memory is set and storage space in /dev/shm is enough",
        &[],
        &[],
    ),
    // (format) a CUDA error retold without its `is`, as people shorten it (Tohrusky/Final2x#613).
    ("cuda.no_kernel_image", "CUDA error: no kernel image available for sm_120", &[], &[]),
    // trexminer/T-Rex#118 (a CUDA 10 build on an older Windows driver).
    (
        "windows.entry_point_not_found",
        "The procedure entry point cuDevicePrimaryCtxReset_v2 could not be located in the dynamic link library nvcuda.dll",
        &[("symbol", "cuDevicePrimaryCtxReset_v2"), ("dll", "nvcuda.dll")],
        &[],
    ),
    // ZhengPeng7/BiRefNet#179 (torch 2.0.1 and a training script's expandable_segments).
    (
        "torch.alloc_conf_option_unknown",
        "RuntimeError: Unrecognized CachingAllocator option: expandable_segments",
        &[("option", "expandable_segments")],
        &[],
    ),
    // facebookresearch/few-shot-object-detection#11 (the closing quote lost where the paste was cut).
    (
        "nvcc.unsupported_gpu_architecture",
        "nvcc fatal   : Unsupported gpu architecture 'compute_61",
        &[("arch", "compute_61")],
        &[],
    ),
    // (format) cudaGetErrorString's words for 711, as a CUDA check macro prints them.
    ("cuda.too_many_peers", "CUDA failure test.cu:20 'peer mapping resources exhausted'", &[], &[]),
    // (format) torch/serialization.py's validate_cuda_device, with the values its test uses (test_load_nonexistent_device).
    (
        "torch.load_device_beyond_count",
        "RuntimeError: Attempting to deserialize object on CUDA device 9 but torch.cuda.device_count() is 1. Please use torch.load with map_location to map your storages to an existing device.",
        &[("device", "9"), ("count", "1")],
        &[],
    ),
    // OpenNMT/CTranslate2#1849 (glibc 2.41 on Arch).
    (
        "ld.executable_stack_refused",
        "ImportError: libctranslate2-bc15bf3f.so.4.5.0: cannot enable executable stack as shared object requires: Invalid argument",
        &[("object", "libctranslate2-bc15bf3f.so.4.5.0")],
        &[],
    ),
    // andersbll/deeppy#28 (CUDA 7.0's 32-bit lib/ on LD_LIBRARY_PATH).
    (
        "ld.library_wrong_elf_class",
        "ImportError: libcudart.so.7.0: wrong ELF class: ELFCLASS32",
        &[("object", "libcudart.so.7.0"), ("elf_class", "ELFCLASS32")],
        &[],
    ),
    // niuchuangnn/SPICE#4 (a libcufft copy in the Anaconda prefix that is no library).
    (
        "ld.library_not_elf",
        "OSError: /home/anders/anaconda3/lib/python3.8/site-packages/torch/lib/../../../../libcufft.so.10: invalid ELF header",
        &[("object", "/home/anders/anaconda3/lib/python3.8/site-packages/torch/lib/../../../../libcufft.so.10")],
        &[],
    ),
    // davisking/dlib#885 (an x86_64 cuDNN on a Jetson TX1).
    (
        "ld.link_wrong_format",
        "/usr/local/cuda-8.0/lib64/libcudnn.so: error adding symbols: File in wrong format",
        &[("object", "/usr/local/cuda-8.0/lib64/libcudnn.so")],
        &[],
    ),
    // cudpp/cudpp#54 (CUDA's 32-bit lib/ searched before lib64/).
    (
        "ld.link_wrong_format",
        "/usr/bin/ld: skipping incompatible /usr/local/cuda/lib/libcudart.so when searching for -lcudart",
        &[("skipped", "/usr/local/cuda/lib/libcudart.so")],
        &[],
    ),
    // pytorch/pytorch#588 (a cut-short cuDNN download).
    (
        "ld.link_wrong_format",
        "/usr/local/cuda/lib64/libcudnn.so: file not recognized: File truncated",
        &[("truncated", "/usr/local/cuda/lib64/libcudnn.so")],
        &[],
    ),
    // (format) the WinError text Windows gives for 126, with torch's suffix.
    (
        "windows.dll_load_failed",
        "OSError: [WinError 126] The specified module could not be found. Error loading \"C:\\Users\\me\\venv\\lib\\site-packages\\torch\\lib\\c10.dll\" or one of its dependencies.",
        &[("winerror", "126"), ("dll", "C:\\Users\\me\\venv\\lib\\site-packages\\torch\\lib\\c10.dll")],
        &[],
    ),
    // (format) the lines torch 2.13 and later append to the capability warning.
    (
        "torch.cuda_build_for_gpu",
        "For CUDA 12.6 use pip install torch==2.15.0 --index-url https://download.pytorch.org/whl/cu126",
        &[("cuda", "12.6"), ("torch", "2.15.0"), ("index_url", "https://download.pytorch.org/whl/cu126")],
        &[],
    ),
    // (format)
    (
        "torch.no_build_for_gpu",
        "No published PyTorch CUDA builds for release 2.15.0+cu130 support this GPU. Visit https://pytorch.org/get-started/locally/ to find a compatible release.",
        &[("torch", "2.15.0+cu130")],
        &[],
    ),
    // (format) the preload warning of CuPy 13.
    (
        "cupy.preload_failed",
        "UserWarning: CuPy failed to preload library (/usr/lib/x86_64-linux-gnu/libcudnn.so.8): OSError (libcudnn_ops_infer.so.8: cannot open shared object file: No such file or directory)",
        &[
            ("library", "/usr/lib/x86_64-linux-gnu/libcudnn.so.8"),
            ("error", "OSError (libcudnn_ops_infer.so.8: cannot open shared object file: No such file or directory)"),
        ],
        &["ld.cudnn_library_missing"],
    ),
    // (format)
    (
        "cupy.cuda_path_not_detected",
        "UserWarning: CUDA path could not be detected. Set CUDA_PATH environment variable if CuPy fails to load.",
        &[],
        &[],
    ),
    // CuPy 13's wording of the import failure.
    ("cupy.not_correctly_installed", "Failed to import CuPy.", &[], &[]),
    // (format) TensorFlow's cuda_diagnostics line after a failed cuInit.
    (
        "tf.kernel_dso_mismatch",
        "E external/local_xla/xla/stream_executor/cuda/cuda_diagnostics.cc:256] kernel version 535.183.1 does not match DSO version 550.90.7 -- cannot find working devices in this configuration",
        &[("kernel_version", "535.183.1"), ("dso_version", "550.90.7")],
        &[],
    ),
    // (format) XLA's log line.
    (
        "xla.feature_requires_newer_driver",
        "W0000 00:00:1712345678.123456   12345 cuda_executor.cc:1040] Stream capture to graph requires CUDA driver 12.3 or newer",
        &[("feature", "Stream capture to graph"), ("driver_cuda", "12.3")],
        &[],
    ),
    // (format) NCCL's WARN.
    (
        "xla.feature_requires_newer_driver",
        "node1:1234:1234 [0] enqueue.cc:2820 NCCL WARN One-sided RMA requires CUDA driver 12.5 or later (found 12.4).",
        &[("feature", "One-sided RMA"), ("driver_cuda", "12.5")],
        &[],
    ),
    // (format) the module's two-line printf at 595.45.04.
    (
        "nvrm.invalid_bar",
        "NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:\nNVRM: BAR1 is 0M @ 0x0 (PCI:0000:01:00.0)",
        &[("bar", "1"), ("size_mib", "0"), ("bus_id", "0000:01:00.0")],
        &[],
    ),
    ("nvrm.no_gpu_found", "[    3.141592] NVRM: No NVIDIA GPU found.", &[], &[]),
    // (format) the toolkit runtime's own check (CSV mode) at v1.20.0.
    (
        "container.cuda_requirement_unsatisfied",
        "nvidia-container-runtime: requirements not met: unsatisfied condition: cuda>=12.6 (cuda=12.2)",
        &[("required_cuda", "12.6")],
        &[],
    ),
    // (format) the installer's stream UI prints `ERROR: ` before the message.
    (
        "installer.module_load_failed",
        "ERROR: Unable to load the kernel module 'nvidia.ko'.  This happens most frequently when this kernel module was built against the wrong or improperly configured kernel sources, with a version of gcc that differs from the one used to build the target kernel, or if another driver, such as nouveau, is present and prevents the NVIDIA kernel module from obtaining ownership of the NVIDIA device(s), or no NVIDIA device installed in this system is supported by this NVIDIA Linux graphics driver release.",
        &[("module", "nvidia.ko")],
        &[],
    ),
    // (format)
    (
        "installer.module_not_signed",
        "ERROR: The kernel module failed to load because it was not signed by a key that is trusted by the kernel. Please try installing the driver again, and sign the kernel module when prompted to do so.",
        &[],
        &[],
    ),
    // (format)
    (
        "installer.kernel_source_missing",
        "ERROR: Unable to find the kernel source tree for the currently running kernel.  Please make sure you have installed the kernel source files for your kernel and that they are properly configured; on Red Hat Linux systems, for example, be sure you have the 'kernel-source' or 'kernel-devel' RPM installed.",
        &[],
        &[],
    ),
    // (format)
    (
        "installer.nouveau_in_use",
        "WARNING: The Nouveau kernel driver is currently in use by your system.  This driver is incompatible with the NVIDIA driver, and must be disabled before proceeding.",
        &[],
        &[],
    ),
    // Dasharo/dasharo-issues#1597 (verbatim).
    (
        "nouveau.unit_ctor_failed",
        "[    5.559105] nouveau 0000:01:00.0: gsp ctor failed: -2",
        &[("unit", "gsp"), ("errno", "-2")],
        &[],
    ),
    // (format)
    (
        "nouveau.firmware_unavailable",
        "[    2.903412] nouveau 0000:01:00.0: gr: firmware unavailable",
        &[("unit", "gr")],
        &[],
    ),
    // clearlinux/distribution#867 (verbatim).
    (
        "nouveau.unit_init_failed",
        "[   68.836524] nouveau 0000:01:00.0: gr: init failed, -110",
        &[("unit", "gr"), ("errno", "-110")],
        &[],
    ),
    // NVIDIA/nvidia-container-toolkit#885 (verbatim).
    (
        "container.cdi_host_device_missing",
        "Error: setting up CDI devices: failed to inject devices: failed to stat CDI host device \"/dev/dri/renderD129\": no such file or directory",
        &[("path", "/dev/dri/renderD129")],
        &["podman.cdi_setup_failed"],
    ),
    // vespa-engine/vespa#27945 (verbatim).
    (
        "podman.cdi_setup_failed",
        "Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all",
        &[("reason", "unresolvable CDI devices nvidia.com/gpu=all")],
        &["container.unresolvable_cdi_devices"],
    ),
    // NVIDIA/nvidia-container-toolkit#63 (verbatim; Podman 3.0.1).
    (
        "podman.cdi_not_supported",
        "Error: stat nvidia.com/gpu=0: no such file or directory",
        &[("device", "nvidia.com/gpu=0")],
        &[],
    ),
    // (format) cuPythonInit's RuntimeError at 12.8.0.
    (
        "cuda_python.libcuda_so1_dlopen_failed",
        "RuntimeError: Failed to dlopen libcuda.so.1",
        &[("path", "libcuda.so.1")],
        &[],
    ),
    // (format) NotSupportedError with the loader's reason.
    (
        "cuda_python.driver_not_found",
        "cuda.bindings._internal.utils.NotSupportedError: CUDA driver is not found (libcuda.so.1: cannot open shared object file: No such file or directory)",
        &[],
        &["ld.libcuda_missing"],
    ),
    // (format)
    (
        "cuda_python.library_dlopen_failed",
        "RuntimeError: Failed to dlopen libnvrtc.so.12",
        &[("library", "libnvrtc.so.12")],
        &[],
    ),
    // (format) the UserWarning as Python prints it, wrapped where the message continues.
    (
        "cuda_python.driver_major_too_old",
        "UserWarning: cuda-bindings was built for CUDA major version 13, but the NVIDIA driver only supports up to CUDA 12. Some cuda-bindings features may not work correctly.",
        &[("built_major", "13"), ("driver_major", "12")],
        &[],
    ),
    // (format) CUDA.jl 6's @error.
    (
        "cudajl.driver_below_floor",
        "┌ Error: This version of CUDA.jl requires an NVIDIA driver for CUDA 12.x or higher (yours only supports up to CUDA 11.4.0)",
        &[("driver_cuda", "11.4.0")],
        &[],
    ),
    // JuliaGPU/CUDA.jl#2831 (verbatim).
    (
        "cudajl.driver_outside_range",
        " Error: This version of CUDA.jl only supports NVIDIA drivers for CUDA 11.x or 12.x (yours is for CUDA 13.0.0)",
        &[("supported", "11.x or 12.x"), ("driver_cuda", "13.0.0")],
        &[],
    ),
    // JuliaGPU/CUDA.jl#1001 (verbatim).
    (
        "cudajl.driver_below_recommended",
        "┌ Warning: The NVIDIA driver on this system only supports up to CUDA 11.0.0.\n│ For performance reasons, it is recommended to upgrade to a driver that supports CUDA 11.2 or higher.",
        &[("driver_cuda", "11.0.0")],
        &[],
    ),
    // (format)
    (
        "cudajl.toolkit_newer_than_driver",
        "┌ Warning: You are using CUDA 12.2.0 with a driver that only supports up to 11.x.",
        &[("toolkit_cuda", "12.2.0"), ("driver_major", "11")],
        &[],
    ),
    // (format)
    ("cudajl.runtime_not_found", "┌ Error: CUDA.jl could not find an appropriate CUDA runtime to use.", &[], &[]),
    // (format)
    (
        "cudajl.precompiled_without_driver",
        "│ CUDA.jl's JLLs were precompiled without an NVIDIA driver present.",
        &[],
        &[],
    ),
    // (format)
    (
        "cudajl.toolkit_too_old",
        "┌ Error: This version of CUDA.jl only supports CUDA 12 or higher (your toolkit provides CUDA 11.8)",
        &[("required", "12"), ("toolkit_cuda", "11.8")],
        &[],
    ),
    // JuliaGPU/CUDA.jl#2530 (verbatim).
    (
        "cudajl.runtime_from_system_path",
        "┌ Warning: CUDA runtime library `libcublasLt.so.12` was loaded from a system path, `/opt/bwhpc/common/devel/cuda/12.6.1/lib64/libcublasLt.so.12`.",
        &[("library", "libcublasLt.so.12"), ("path", "/opt/bwhpc/common/devel/cuda/12.6.1/lib64/libcublasLt.so.12")],
        &[],
    ),
    // CliMA/ClimaAtmos.jl#3020 (verbatim; CUDA.jl 5.0's wording).
    (
        "cudajl.runtime_from_system_path",
        "│  ┌ Warning: CUDA runtime library libcusparse.so.12 was loaded from a system path. This may cause errors.",
        &[("library", "libcusparse.so.12")],
        &[],
    ),
    // (format)
    (
        "cudajl.gpu_not_supported",
        "┌ Error: Your Tesla K80 GPU (compute capability 3.7) is not supported by CUDA.jl.",
        &[("gpu", "Tesla K80"), ("cc", "3.7"), ("by", "CUDA.jl")],
        &[],
    ),
    // JuliaGPU/CUDA.jl#3187 (verbatim).
    (
        "cudajl.gpu_not_fully_supported",
        "┌ Warning: Your NVIDIA GeForce GTX 1080 GPU (compute capability 6.1) is not fully supported by CUDA 12.9.0.",
        &[("gpu", "NVIDIA GeForce GTX 1080"), ("cc", "6.1"), ("cuda", "12.9.0")],
        &[],
    ),
    // (format) the error `CUDA.functional(true)` raises.
    ("cudajl.driver_not_found", "ERROR: CUDA driver not found", &[], &[]),
    // (format)
    (
        "cudajl.deprecated_env_var",
        "┌ Error: JULIA_CUDA_VERSION is deprecated. Call `CUDA.jl.set_runtime_version!` to use a different version.",
        &[("variable", "JULIA_CUDA_VERSION")],
        &[],
    ),
    // Linaqruf/sd-notebook-collection#36 (verbatim; torchvision before 0.15).
    (
        "torchvision.cuda_mismatch",
        "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA versions. PyTorch has CUDA Version=11.7 and torchvision has CUDA Version=11.8. Please reinstall the torchvision that matches your PyTorch install.",
        &[("torch_cuda", "11.7"), ("torchvision_cuda", "11.8")],
        &[],
    ),
    // deforum/deforum-stable-diffusion#348 (verbatim; the major-version form).
    (
        "torchvision.cuda_mismatch",
        "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions. PyTorch has CUDA Version=12.1 and torchvision has CUDA Version=11.8. Please reinstall the torchvision that matches your PyTorch install.",
        &[("torch_cuda", "12.1"), ("torchvision_cuda", "11.8")],
        &[],
    ),
    // microsoft/scene_graph_benchmark#60 (verbatim).
    (
        "torchvision.custom_ops_not_loaded",
        "Couldn't load custom C++ ops. This can happen if your PyTorch and torchvision versions are incompatible, or if you had errors while compiling torchvision from source.",
        &[],
        &[],
    ),
    // casperg92/MaSIF_colab#7 (verbatim).
    (
        "torchvision.image_extension_not_loaded",
        "/usr/local/lib/python3.9/dist-packages/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: '/usr/local/lib/python3.9/dist-packages/torchvision/image.so: undefined symbol: _ZN3c104impl8GPUTrace13gpuTraceStateE'If you don't plan on using image functionality from `torchvision.io`, you can ignore this warning.",
        &[(
            "reason",
            "/usr/local/lib/python3.9/dist-packages/torchvision/image.so: undefined symbol: _ZN3c104impl8GPUTrace13gpuTraceStateE",
        )],
        // Its inner line is the loader's: torchvision's image library asks for a c10 name.
        &["ld.torch_symbol_missing"],
    ),
    // Emerge-Lab/gpudrive#373 (verbatim).
    (
        "numpy.abi_mismatch",
        "RuntimeError: module compiled against ABI version 0x1000009 but this version of numpy is 0x2000000",
        &[("compiled_abi", "0x1000009"), ("running_abi", "0x2000000")],
        &[],
    ),
    // pytorch/pytorch#413 (verbatim).
    (
        "numpy.older_than_build",
        "RuntimeError: module compiled against API version 0xa but this version of numpy is 0x9",
        &[("compiled_api", "0xa"), ("running_api", "0x9")],
        &[],
    ),
    // (format) the NumPy 2 header's wording.
    (
        "numpy.older_than_build",
        "RuntimeError: module was compiled against NumPy C-API version 0x12 (NumPy 2.0) but the running NumPy has C-API version 0x10. Check the section C-API incompatibility at the Troubleshooting ImportError section",
        &[("compiled_api", "0x12"), ("running_api", "0x10")],
        &[],
    ),
    // numba/numba#10353 (verbatim; cuda-python's nvJitLinkError, then numba-cuda's log line).
    (
        "nvjitlink.input_from_newer_toolkit",
        "Linker error log: ERROR 4 in nvvmAddNVVMContainerToProgram, may need newer version of nvJitLink library",
        &[],
        &[],
    ),
    // (format) cuda-python's nvJitLinkError under CUDA 13's nvJitLink.
    (
        "nvjitlink.input_from_newer_toolkit",
        "cuda.bindings.nvjitlink.nvJitLinkError: ERROR_OUTDATED_LIBRARY (14)",
        &[],
        &[],
    ),
    // (format)
    ("nvjitlink.arch_unknown", "cuda.bindings.nvjitlink.nvJitLinkError: ERROR_UNSUPPORTED_ARCH (17)", &[], &[]),
    // hashcat/hashcat#2626 (verbatim; the driver's JIT).
    // The error log as a program prints it with the ptxas line wrapped after `fatal:` (hashcat's
    // `Error Log:`, hashcat/hashcat#2626's kind).
    (
        "nvjitlink.ptx_newer_than_jit",
        "ptxas application ptx input, line 9; fatal:\nUnsupported .version 7.4; current version is '7.3'",
        &[("ptx_version", "7.4"), ("supported", "7.3")],
        &[],
    ),
    (
        "nvjitlink.ptx_newer_than_jit",
        "ptxas application ptx input, line 9; fatal   : Unsupported .version 7.1; current version is '7.0'",
        &[("ptx_version", "7.1"), ("supported", "7.0")],
        &[],
    ),
    // tinygrad/tinygrad#7729 (verbatim).
    (
        "nvjitlink.ptxas_older_than_ptx",
        "ptxas /tmp/tinycuda_03fe6308def2ec1dd6c3b1a96681a0fc.ptx, line 9; fatal   : Unsupported .version 8.5; current version is '7.5'",
        &[
            ("ptx_file", "/tmp/tinycuda_03fe6308def2ec1dd6c3b1a96681a0fc.ptx"),
            ("ptx_version", "8.5"),
            ("supported", "7.5"),
        ],
        &[],
    ),
    // openxla/xla#5932 (verbatim, the two lines LogPtxasTooOld writes; `ptxas` alone: the one on PATH).
    (
        "xla.ptxas_too_old_for_gpu",
        "2023-09-26 23:49:25.317379: W external/xla/xla/stream_executor/gpu/asm_compiler.cc:231] Falling back to the CUDA driver for PTX compilation; ptxas does not support CC 9.0\n2023-09-26 23:49:25.317412: W external/xla/xla/stream_executor/gpu/asm_compiler.cc:234] Used ptxas at ptxas",
        &[("cc", "9.0"), ("ptxas_path", "ptxas")],
        &[],
    ),
    // (format) the first line alone, as a paste cut after it.
    (
        "xla.ptxas_too_old_for_gpu",
        "W subprocess_compilation.cc:238] Falling back to the CUDA driver for PTX compilation; ptxas does not support CC 10.3",
        &[("cc", "10.3")],
        &[],
    ),
    // (format) jaxlib's versions_helpers.cc status around the cuSPARSE stub's GetErrorString (cusparse_stub.cc).
    (
        "xla.cusparse_not_loaded",
        "RuntimeError: jaxlib/cuda/versions_helpers.cc:81: operation cusparseGetProperty(MAJOR_VERSION, &major) failed: The cuSPARSE library was not found.",
        &[],
        &[],
    ),
    // google-deepmind/alphafold3#68 (verbatim; XLA's extension-less temporary file).
    (
        "nvjitlink.ptxas_older_than_ptx",
        "ptxas exited with non-zero error code 65280, output: ptxas /tmp/tempfile-911e745ba31e-6fcbb92-36855-62725d0d028be, line 5; fatal   : Unsupported .version 8.4; current version is '8.3'",
        &[
            ("ptx_file", "/tmp/tempfile-911e745ba31e-6fcbb92-36855-62725d0d028be"),
            ("ptx_version", "8.4"),
            ("supported", "8.3"),
        ],
        &[],
    ),
    // QwenLM/Qwen2.5-Omni#247 (verbatim; Triton on Windows).
    (
        "nvjitlink.ptxas_older_than_ptx",
        r"ptxas C:\Users\ai\AppData\Local\Temp\tmpkoko0xtp.ptx, line 5; fatal   : Unsupported .version 8.8; current version is '8.7'",
        &[
            ("ptx_file", r"C:\Users\ai\AppData\Local\Temp\tmpkoko0xtp.ptx"),
            ("ptx_version", "8.8"),
            ("supported", "8.7"),
        ],
        &[],
    ),
    // Dao-AILab/flash-attention#762 (its title: a Quadro RTX 5000, Turing).
    ("flash_attn.ampere_or_newer_only", "RuntimeError: FlashAttention only supports Ampere GPUs or newer.", &[], &[]),
    // JIA-Lab-research/MGM#91 (verbatim).
    (
        "deepspeed.cuda_mismatch",
        "deepspeed.ops.op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder: Installed CUDA version 12.2 does not match the version torch was compiled with 11.7, unable to compile cuda/cpp extensions without a matching cuda version.",
        &[("installed", "12.2"), ("torch_cuda", "11.7")],
        &[],
    ),
    // bytedance/lightseq#526 (the wording of DeepSpeed 0.4 to 0.9, without the prefix).
    (
        "deepspeed.cuda_mismatch",
        "Exception: Installed CUDA version 12.3 does not match the version torch was compiled with 12.1, unable to compile cuda/cpp extensions without a matching cuda version.",
        &[("installed", "12.3"), ("torch_cuda", "12.1")],
        &[],
    ),
    // deepspeedai/DeepSpeedExamples#370's title: the message up to torch's CUDA, its tail cut.
    (
        "deepspeed.cuda_mismatch",
        "DeepSpeed Op Builder: Installed CUDA version 12.0 does not match the version torch was compiled with 11.8",
        &[("installed", "12.0"), ("torch_cuda", "11.8")],
        &[],
    ),
    // NVIDIA/apex#1171 (verbatim; its nvcc was CUDA 9.0 from another CUDA_HOME).
    (
        "apex.cuda_mismatch",
        "RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match the version used to compile Pytorch binaries.  Pytorch binaries were compiled with Cuda 10.2.",
        &[("torch_cuda", "10.2")],
        &[],
    ),
    // jax-ml/jax#15876 (its title; Windows, an old jaxlib beside a newer jax).
    (
        "jax.jaxlib_too_old",
        "RuntimeError: jaxlib is version 0.3.25, but this version of jax requires version >= 0.4.7.",
        &[("jaxlib", "0.3.25"), ("required", "0.4.7")],
        &[],
    ),
    // Zuricho/ParallelFold#13 (verbatim; JAX 0.2's wording, a CUDA wheel's jaxlib).
    (
        "jax.jaxlib_too_old",
        "ValueError: jaxlib is version 0.1.69, but this version of jax requires version 0.1.74.",
        &[("jaxlib", "0.1.69"), ("required", "0.1.74")],
        &[],
    ),
    // microsoft/LightGBM#3696 (verbatim; Python 3.7, a Booster asked for "device": "gpu").
    (
        "lightgbm.gpu_learner_not_built",
        "lightgbm.basic.LightGBMError: GPU Tree Learner was not enabled in this build.",
        &[("learner", "GPU")],
        &[],
    ),
    // The CUDA learner's stand-in as LightGBM logs a fatal error (Log::Fatal's `[LightGBM] [Fatal] ` prefix, as
    // microsoft/LightGBM#3696 shows it for the GPU one): the source's words, no paste found.
    (
        "lightgbm.gpu_learner_not_built",
        "[LightGBM] [Fatal] CUDA Tree Learner was not enabled in this build.",
        &[("learner", "CUDA")],
        &[],
    ),
    // facebookresearch/detectron2#3898 (its title).
    // The extensions' guard matches it too (its `op` is Detectron2); the rule takes Detectron2's row first.
    (
        "detectron2.not_compiled_with_gpu",
        "RuntimeError: Detectron2 is not compiled with GPU support!",
        &[],
        &["torch_extension.op_not_compiled_with_gpu"],
    ),
    // facebookresearch/detectron2#257 (its title; v0.1's wording, with PyTorch's AT_ERROR location).
    (
        "detectron2.not_compiled_with_gpu",
        "RuntimeError: Not compiled with GPU support (ROIAlign_forward at /projectnb2/dnn-motion/shukai/detectron2/detectron2/layers/csrc/ROIAlign/ROIAlign.h:73)",
        &[],
        // Detectron2 v0.1 kept maskrcnn-benchmark's words; both rows are the one CPU-only build.
        &["torch_extension.not_compiled_with_cuda"],
    ),
    // jax-ml/jax#17638 (verbatim).
    (
        "jax.jaxlib_newer_than_jax",
        "RuntimeError: jaxlib version 0.4.14 is newer than and incompatible with jax version 0.4.6. Please update your jax and/or jaxlib packages.",
        &[("jaxlib", "0.4.14"), ("jax", "0.4.6")],
        &[],
    ),
    // SunOner/sunone_aimbot#164 (verbatim; YOLOv8 on Windows, torch.cuda.is_available() False, device_count 0).
    (
        "ultralytics.invalid_cuda_device",
        "ValueError: Invalid CUDA 'device=0' requested. Use 'device=cpu' or pass valid CUDA device(s) if available, i.e. 'device=0' or 'device=0,1,2,3' for Multi-GPU.",
        &[("device", "0")],
        &[],
    ),
    // jax-ml/jax#15361 (verbatim; Colab, the GPU's memory near its limit).
    (
        "xla.dnn_library_init_failed",
        "XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed. Look at the errors above for more details.",
        &[],
        &[],
    ),
    // NVlabs/sionna#247 (verbatim; TensorFlow's XLA-compiled graph in Sionna's Docker image).
    (
        "xla.dnn_library_init_failed",
        "FailedPreconditionError: DNN library initialization failed. Look at the errors above for more details [Op:__inference_run_graph_xla_21694]",
        &[],
        &[],
    ),
    // QwenLM/Qwen3#873 (verbatim; solved on one GPU with enough free memory).
    (
        "torch.cublas_create_alloc_failed",
        "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
        &[],
        &[],
    ),
    // NVIDIA/k8s-device-plugin#159 (its title: the scheduler's event for a pod asking for a GPU).
    ("kube_scheduler.insufficient_gpu", "0/2 nodes are available: 2 Insufficient nvidia.com/gpu", &[], &[]),
];

/// The shortest of three scans of `lines` by `matcher`.
fn best_scan(matcher: &Matcher, lines: &[String]) -> std::time::Duration {
    (0..3)
        .map(|_| {
            let t = std::time::Instant::now();
            let _ = matcher.scan(lines);
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// The catalogue is matched as one `RegexSet`, whose lazy DFA needs a cache that grows with the
/// rows; past the cache's capacity the regex crate silently runs the set on its PikeVM instead,
/// hundreds of times slower on every line of every paste (176 rows passed the default 2 MiB). The
/// whole catalogue must scan prose at about the cost of one row.
#[test]
fn the_whole_catalogue_scans_prose_about_as_fast_as_one_row() {
    let lines: Vec<String> =
        (0..4000).map(|i| format!("the quick brown fox {i} jumps over the lazy dog, again and again")).collect();
    let one = best_scan(&Matcher::xid_for_kb(kb()), &lines);
    let all = best_scan(&Matcher::for_kb(kb()), &lines);
    let limit = one * 20 + std::time::Duration::from_millis(300);
    assert!(all <= limit, "{} rows took {all:?} for {} lines, one row {one:?}", kb().errors.message.len(), lines.len());
}

fn scan(text: &str) -> Vec<gpu_doctor_model::ObservedMessage> {
    Matcher::for_kb(kb()).scan(&clean::lines(text)).into_iter().map(|(_, m)| m).collect()
}

#[test]
fn every_pattern_compiles_and_every_group_is_explained() {
    for m in &kb().errors.message {
        let re = regex::Regex::new(&m.pattern).unwrap_or_else(|e| panic!("{}: {e}", m.id));
        for name in re.capture_names().flatten() {
            assert!(m.meaning.contains(&format!("`{name}`")), "{}: group `{name}` is not named in its meaning", m.id);
        }
        assert!(m.id.split_once('.').is_some_and(|(a, b)| !a.is_empty() && !b.is_empty()), "{}", m.id);
        assert!(!m.source.is_empty() && !m.emitter.is_empty(), "{}", m.id);
    }
    assert_eq!(Matcher::for_kb(kb()).ids().len(), kb().errors.message.len(), "a pattern failed to compile");
}

/// A Unicode word boundary makes the regex crate's fast engines give up on any line with a
/// non-ASCII character; one such row sends every such line of a paste through the slow one.
#[test]
fn no_pattern_has_a_unicode_word_boundary() {
    for m in &kb().errors.message {
        let ascii_only = m.pattern.replace("(?-u:\\b)", "").replace("(?-u:\\B)", "");
        assert!(!ascii_only.contains("\\b") && !ascii_only.contains("\\B"), "{}: write `(?-u:\\b)`", m.id);
    }
}

#[test]
fn ids_are_unique_and_every_row_has_a_sample() {
    let rows: Vec<&str> = kb().errors.message.iter().map(|m| m.id.as_str()).collect();
    let unique: BTreeSet<&str> = rows.iter().copied().collect();
    assert_eq!(unique.len(), rows.len(), "duplicate ids");
    let sampled: BTreeSet<&str> = CASES.iter().map(|c| c.0).collect();
    let missing: Vec<&&str> = unique.iter().filter(|id| !sampled.contains(**id)).collect();
    assert!(missing.is_empty(), "rows without a sample: {missing:?}");
    let unknown: Vec<&&str> = sampled.iter().filter(|id| !unique.contains(**id)).collect();
    assert!(unknown.is_empty(), "samples for no row: {unknown:?}");
    assert!((35..=300).contains(&rows.len()), "{} rows", rows.len());
}

#[test]
fn every_sample_matches_its_row_with_its_values() {
    for (id, text, values, also) in CASES {
        let found = scan(text);
        let got: BTreeSet<&str> = found.iter().map(|m| m.id.as_str()).collect();
        let want: BTreeSet<&str> = std::iter::once(*id).chain(also.iter().copied()).collect();
        assert_eq!(got, want, "{text:?}");
        let m = found.iter().find(|m| m.id == *id).unwrap();
        let want_values: BTreeMap<String, String> =
            values.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        assert_eq!(m.values, want_values, "{id}");
        let first = text.lines().next().unwrap().trim();
        assert!(m.line.starts_with(first), "{id}: {:?}", m.line);
    }
}

#[test]
fn a_message_wrapped_over_two_lines_is_one_line_with_both_parts() {
    let found = scan(CASES.iter().find(|c| c.0 == "nvrm.api_mismatch").unwrap().1);
    assert_eq!(found.len(), 1);
    assert!(found[0].line.contains("415.27, but") && found[0].line.ends_with("390.129.  Please"));
}

/// nvidia-smi's `command not found` repeated in a person's words counts only with no other command or words between:
/// another command's failure beside a working nvidia-smi is not nvidia-smi's.
#[test]
fn nvidia_smi_not_found_in_words_is_nvidia_smis_own() {
    let found = |line: &str| scan(line).iter().any(|m| m.id == "shell.nvidia_smi_not_found");
    assert!(found("`nvidia-smi` \u{547d}\u{4ee4}\u{8fd4}\u{56de}\u{9519}\u{8bef} command not found"));
    for line in [
        "nvidia-smi works but nvcc: command not found",
        "nvidia-smi shows the GPU, nvcc command not found",
        "nvidia-smi is fine; `nvcc` command not found",
    ] {
        assert!(!found(line), "{line}");
    }
}

/// A libtorch symbol the paste wrapped onto the next line is still read (the form a public write-up of a
/// flash-attn ABI mismatch shows: `…linux-gnu.so: undefined symbol:` then the name); a C++ name outside
/// libtorch's namespaces, or a plain C symbol, is not this row's.
#[test]
fn a_libtorch_symbol_is_read_across_a_wrap_and_other_symbols_are_not() {
    let wrapped =
        "ImportError: flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so: undefined symbol:\n_ZN3c104cuda9SetDeviceEab";
    let found: Vec<_> = scan(wrapped).into_iter().filter(|m| m.id == "ld.torch_symbol_missing").collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].values.get("symbol").map(String::as_str), Some("_ZN3c104cuda9SetDeviceEab"));
    assert_eq!(
        found[0].values.get("library").map(String::as_str),
        Some("flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so")
    );
    for other in [
        "ImportError: /x/site-packages/jaxlib/xla_extension.so: undefined symbol: _ZN4absl12lts_2023080212log_internal9kCharNullE",
        "OSError: /x/libfoo.so: undefined symbol: cudaGetDriverEntryPointByVersion",
    ] {
        assert!(scan(other).iter().all(|m| m.id != "ld.torch_symbol_missing"), "{other}");
    }
    // The symbol alone (the path cut off) is read without a library.
    let bare: Vec<_> = scan("undefined symbol: _ZN3c104cuda9SetDeviceEi").into_iter().collect();
    assert!(bare.iter().any(|m| m.id == "ld.torch_symbol_missing" && !m.values.contains_key("library")), "{bare:?}");
}

/// PyTorch up to 1.5 (THC) printed the runtime's error 999 in its own words (pytorch/pytorch#43281).
#[test]
fn the_old_thc_unknown_error_is_the_unknown_error_row() {
    let text = "RuntimeError: cuda runtime error (999) : unknown error at /opt/conda/conda-bld/pytorch_1591914886554/work/aten/src/THC/THCGeneral.cpp:47";
    let ids: Vec<String> = scan(text).into_iter().map(|m| m.id).collect();
    assert_eq!(ids, ["cuda.unknown_error"]);
}

#[test]
fn repeated_lines_are_reported_once_in_order() {
    let text = "RuntimeError: No CUDA GPUs are available\nx\nRuntimeError: No CUDA GPUs are available\n\
        AssertionError: Torch not compiled with CUDA enabled\n";
    let ids: Vec<String> = scan(text).into_iter().map(|m| m.id).collect();
    assert_eq!(ids, ["torch.no_gpus_available", "torch.not_compiled_with_cuda"]);
}

#[test]
fn ordinary_output_matches_nothing() {
    for s in [HEALTHY, COLLECT_ENV_CU124, SMI_Q, PIP_LIST, JAX_ENV, TF_PRINTS, CONDA_LIST] {
        assert_eq!(scan(s), Vec::new());
    }
}

/// OpenCV reading cuDNN 9's version with cuDNN 8's formula (`90.1` against the `9.1` it was built with) is its own
/// bug, not a mismatch (opencv/opencv#25711, the maintainer: "CuDNN changed version formula"; fixed in #25841).
#[test]
fn opencvs_misread_cudnn_9_version_matches_nothing() {
    let text = "[ WARN:0@410.036] global init.hpp:32 checkVersions cuDNN reports version 90.1 which is not compatible with the version 9.1 with which OpenCV was built";
    assert_eq!(scan(text), Vec::new());
}

/// TensorFlow's probe for TensorRT's libraries, which only TF-TRT needs, is no CUDA library missing
/// (TheLastBen/fast-stable-diffusion#1580, on a Colab GPU runtime that worked; its maintainer: ignore it).
#[test]
fn tensorflows_probe_for_tensorrt_matches_nothing() {
    let text = ": W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file: No such file or directory; LD_LIBRARY_PATH: /usr/lib64-nvidia\n\
                2023-02-12 02:34:13.661201: W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libnvinfer_plugin.so.7'; dlerror: libnvinfer_plugin.so.7: cannot open shared object file: No such file or directory; LD_LIBRARY_PATH: /usr/lib64-nvidia\n\
                : W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Cannot dlopen some TensorRT\n";
    assert_eq!(scan(text), Vec::new());
}

/// The CPU-build rows take their emitters' words only: llama.cpp's `BLAS = 1` (a cuBLAS build), the
/// CMake options that name BLAS (`-DLLAMA_BLAS=0`, `GGML_BLAS=0`, `OPENBLAS=0`) and PyTorch's own
/// assertion (its row is torch's) are not them.
#[test]
fn cpu_build_rows_take_only_their_emitters_words() {
    let ids = |line: &str| scan(line).into_iter().map(|m| m.id).collect::<Vec<_>>();
    assert_eq!(ids("AVX2 = 1 | WASM_SIMD = 0 | BLAS = 0 | SSE3 = 1 |"), ["llamacpp.cpu_only_build"]);
    assert_eq!(ids("It keeps saying \"BLAS=0\" when starting the model"), ["llamacpp.cpu_only_build"]);
    for line in [
        "AVX2 = 1 | WASM_SIMD = 0 | BLAS = 1 | SSE3 = 1 |",
        "cmake .. -DLLAMA_BLAS=0 -DGGML_BLAS=0",
        "export OPENBLAS=0",
        "BLAS = 01",
    ] {
        assert!(!ids(line).contains(&"llamacpp.cpu_only_build".to_owned()), "{line}");
    }
    // Faiss's row takes only its GPU names: another module's missing attribute, or a CPU class, is not it.
    for line in [
        "AttributeError: module 'torch' has no attribute 'StandardGpuResources_x'",
        "AttributeError: module 'faiss' has no attribute 'IndexFlatL2'",
        "AttributeError: 'module' object has no attribute 'GpuArray'",
    ] {
        assert!(!ids(line).contains(&"faiss.cpu_only_build".to_owned()), "{line}");
    }
    assert_eq!(ids("AssertionError: Not compiled with CUDA"), ["paddle.not_compiled_with_cuda"]);
    for line in
        ["AssertionError: Torch not compiled with CUDA enabled", "AssertionError: Not compiled with CUDA support"]
    {
        assert!(!ids(line).contains(&"paddle.not_compiled_with_cuda".to_owned()), "{line}");
    }
}

/// ldconfig's "is not a symbolic link" is this row's only for libcuda under WSL's folder or named bare (the
/// copies WSL maps in, microsoft/WSL#5548); a libcuda.so.1 in a distribution folder is not WSL's.
#[test]
fn a_libcuda_that_is_no_link_outside_wsl_is_not_the_wsl_row() {
    for other in [
        "ldconfig: /usr/lib/x86_64-linux-gnu/libcuda.so.1 is not a symbolic link",
        "/opt/x/libcuda.so.1 is not a symbolic link",
    ] {
        assert!(scan(other).iter().all(|m| m.id != "ld.wsl_libcuda_not_a_link"), "{other}");
    }
}

/// DeepSpeed prints the same first words where it goes on: a minor mismatch its list accepts, and the
/// DS_SKIP_CUDA_CHECK warning (op_builder/builder.py@v0.16.4#L96-L109); only the raised form is the row's.
#[test]
fn deepspeed_lines_it_goes_on_after_are_not_the_mismatch_row() {
    for line in [
        "Installed CUDA version 11.3 does not match the version torch was compiled with 11.1 but since the APIs are compatible, accepting this combination",
        "[WARNING]  DeepSpeed Op Builder: Installed CUDA version 12.1 does not match the version torch was compiled with 11.8.Detected `DS_SKIP_CUDA_CHECK=1`: Allowing this combination of CUDA, but it may result in unexpected behavior.",
    ] {
        assert!(scan(line).iter().all(|m| m.id != "deepspeed.cuda_mismatch"), "{line}");
    }
}

/// Detectron2's old wording is the bare `Not compiled with GPU support` that other ops print too (its own
/// TensorMask project's, projects/TensorMask/tensormask/layers/csrc/SwapAlign2Nat/SwapAlign2Nat.h@v0.6#L30): only
/// with a detectron2/layers/csrc file after it is it the row's.
#[test]
fn not_compiled_with_gpu_support_is_detectron2_only_with_its_file() {
    for line in [
        "RuntimeError: Not compiled with GPU support",
        "RuntimeError: Not compiled with GPU support (SwapAlign2Nat_forward at /home/u/detectron2/projects/TensorMask/tensormask/layers/csrc/SwapAlign2Nat/SwapAlign2Nat.h:30)",
    ] {
        assert!(scan(line).iter().all(|m| m.id != "detectron2.not_compiled_with_gpu"), "{line}");
    }
}
