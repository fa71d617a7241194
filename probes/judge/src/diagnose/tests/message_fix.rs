//! The fixes of catalogue findings (`observed.*`), one family at a time, on pasted lines as their
//! emitters print them (each line's wording is the catalogue row's source: the emitter's own
//! string at a tag, or NVIDIA's error table), with and without the facts that change the fix.

use super::words;
use gpu_doctor_model::{Change, DriverLoadProblem, Finding, PlanTarget};

/// The findings `diagnose --from` gives for pasted `text`.
fn pasted(text: &str) -> Vec<Finding> {
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let snap = gpu_doctor_probes::parse::paste::read_pasted(text, kb).unwrap();
    crate::diagnose::diagnose(&snap, kb)
}

/// The finding `id` of pasted `text`, or the finding that explains the known message `id`.
fn finding(text: &str, id: &str) -> Finding {
    let findings = pasted(text);
    findings
        .into_iter()
        .find(|f| f.id == id || f.explains.iter().any(|e| e == id))
        .unwrap_or_else(|| panic!("no {id} in {text}"))
}

/// The finding `id` of pasted `text`: its fix in words (for a machine no plan can be made for) and
/// its plan target.
fn fix_of(text: &str, id: &str) -> (String, Option<PlanTarget>) {
    let f = finding(text, id);
    (words(&f).unwrap_or_else(|| panic!("{id} has no fix: {f:#?}")).to_owned(), f.plan.map(|p| p.target))
}

// driver_too_old_for_runtime: cudaErrorUnsupportedPtxVersion (222) and cudaErrorInsufficientDriver
// (35), as cudaGetErrorString prints them (NVIDIA/cuda-python's runtime error table, CUDA 13.0).

#[test]
fn a_driver_too_old_for_a_build_the_text_names_gets_that_builds_driver_floor() {
    // torch 2.4.0+cu124: CUDA 12.4, whose first Linux driver is 550.54.14 (CUDA 12.4 release notes).
    let text = "PyTorch version: 2.4.0+cu124\n\
                RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.\n";
    let f = finding(text, "observed.cuda.unsupported_ptx");
    assert!(f.detail.contains("550.54.14") && f.detail.contains("torch 2.4.0+cu124"), "{}", f.detail);
    // The driver planner writes the fix of a named branch (the distribution's command, or the
    // update in words where the text names no OS).
    let plan = f.plan.map(|p| (p.target, p.unplanned));
    assert_eq!(plan, Some((PlanTarget::Driver { min_branch: Some(550) }, None)));
}

#[test]
fn a_driver_too_old_for_an_unnamed_build_gets_the_newest_driver_and_the_check() {
    let text = "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n";
    let (words, plan) = fix_of(text, "observed.cuda.insufficient_driver");
    assert!(words.contains("newest") && words.contains("`nvidia-smi`"), "{words}");
    assert!(words.contains("a build of the program for the CUDA that driver supports"), "{words}");
    assert_eq!(plan, Some(PlanTarget::Driver { min_branch: None }));
}

// cpu_only_build: the GPU build of the program that printed it.

#[test]
fn a_cpu_only_torch_gets_the_cuda_build_per_driver_line() {
    // pytorch/pytorch:torch/cuda/__init__.py (_lazy_init): `Torch not compiled with CUDA enabled`.
    let (words, _) =
        fix_of("AssertionError: Torch not compiled with CUDA enabled\n", "observed.torch.not_compiled_with_cuda");
    assert!(words.contains("pip uninstall -y torch"), "{words}");
    assert!(words.contains("--index-url https://download.pytorch.org/whl/cu"), "{words}");
    // The driver is not in the text: one build per driver line, each with its floor.
    assert!(words.matches("or newer (driver ").count() >= 2, "{words}");
}

#[test]
fn a_cpu_only_build_of_another_program_gets_that_programs_gpu_build() {
    // llama.cpp's system_info line; CTranslate2's src/devices.cc str_to_device.
    let (llama, _) = fix_of(
        "AVX = 1 | AVX2 = 1 | AVX512 = 0 | FMA = 1 | NEON = 0 | ARM_FMA = 0 | F16C = 1 | BLAS = 0 | SSE3 = 1 | VSX = 0 |\n",
        "observed.llamacpp.cpu_only_build",
    );
    assert!(llama.contains("CMAKE_ARGS=-DGGML_CUDA=on") && llama.contains("-DGGML_CUDA=ON"), "{llama}");
    let (ct2, _) = fix_of(
        "ValueError: This CTranslate2 package was not compiled with CUDA support\n",
        "observed.ctranslate2.not_compiled_with_cuda",
    );
    assert!(ct2.contains("-DWITH_CUDA=ON"), "{ct2}");
    // Faiss's CPU build asked for a GPU index (amazon-science/patchcore-inspection#30): both packages
    // removed, the GPU one installed alone.
    let (faiss, _) =
        fix_of("AttributeError: module 'faiss' has no attribute 'GpuIndexFlatL2'\n", "observed.faiss.cpu_only_build");
    assert!(faiss.contains("uninstall -y faiss-cpu faiss-gpu"), "{faiss}");
    assert!(faiss.contains("conda install -c pytorch -c nvidia faiss-gpu"), "{faiss}");
}

// arch_not_in_build: a build with machine code for the GPU's capability.

#[test]
fn a_gpu_the_torch_build_lacks_gets_a_build_with_its_machine_code() {
    // pytorch/pytorch:torch/cuda/__init__.py (_check_cubins): the GPU and its sm.
    let text = "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch \
                installation.\n";
    let (words, _) = fix_of(text, "observed.torch.sm_not_compatible");
    assert!(words.contains("sm_120") && words.contains("--index-url https://download.pytorch.org/whl/cu"), "{words}");
}

#[test]
fn a_kernel_image_error_without_the_gpu_gets_the_commands_that_show_capability_and_arch_list() {
    // cudaErrorNoKernelImageForDevice (209), nothing else in the text.
    let line = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n";
    let (words, _) = fix_of(line, "observed.cuda.no_kernel_image");
    assert!(words.contains("nvidia-smi --query-gpu=name,compute_cap --format=csv"), "{words}");
    // With no GPU named, the architectures of PyTorch's CUDA variants (pytorch.toml's rows): Blackwell's sm_120
    // is in the CUDA 12.8 builds on, Pascal's range in the CUDA 12.6 ones.
    assert!(words.contains("in cu128 (") && words.contains("in cu126 (") && words.contains("sm_120"), "{words}");
    // Beside PyTorch's own version line, the arch list of the torch build.
    let (torch, _) = fix_of(&format!("PyTorch version: 2.5.1+cu124\n{line}"), "observed.cuda.no_kernel_image");
    assert!(torch.contains("torch.cuda.get_arch_list()"), "{torch}");
    // Beside PyTorch's capability warning, the GPU that warning names.
    let warned = format!(
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch \
         installation.\n{line}"
    );
    let (named, _) = fix_of(&warned, "observed.cuda.no_kernel_image");
    assert!(named.contains("machine code for sm_120") && named.contains("--index-url"), "{named}");
}

/// A GPU no torch wheel for the driver's CUDA covers (an A100 on driver 450.80.02, CUDA 11.0 in full, as in
/// pytorch/pytorch#57922's collect_env): the wheel of the lowest CUDA that has its machine code, and the driver
/// floor from which that CUDA major runs, not "no wheel has it".
#[test]
fn a_gpu_no_wheel_for_this_driver_covers_gets_the_lowest_cuda_wheel_that_does() {
    let text = "A100-SXM4-40GB with CUDA capability sm_80 is not compatible with the current PyTorch installation.\n\
                The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_61 sm_70 sm_75 compute_37.\n\
                PyTorch version: 1.8.1+cu102\nIs debug build: False\nCUDA used to build PyTorch: 10.2\n\
                Nvidia driver version: 450.80.02\n";
    let (words, _) = fix_of(text, "observed.torch.sm_not_compatible");
    assert!(!words.contains("No torch wheel the knowledge base lists"), "{words}");
    assert!(
        words.contains("--index-url https://download.pytorch.org/whl/cu11") && words.contains("450.80.02"),
        "{words}"
    );
}

// cudnn_missing_or_mismatch and missing libraries: the package that ships the library for its major.

#[test]
fn a_missing_library_gets_the_wheel_of_its_major_and_the_loader_path() {
    // cuDNN 8's sub-library loader; glibc's `<name>: cannot open shared object file`.
    let cudnn = "Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_cnn_infer.so.8: cannot open shared \
                 object file: No such file or directory\n";
    let (words, _) = fix_of(cudnn, "observed.cudnn.could_not_load_library");
    assert!(words.contains("'nvidia-cudnn-cu12==8.*'") && words.contains("libcudnn8"), "{words}");
    assert!(words.contains("LD_LIBRARY_PATH") && words.contains("nvidia.cudnn.lib"), "{words}");
    // cuBLAS numbers its soname by the CUDA major: the CUDA 11 wheel.
    let cublas = "ImportError: libcublas.so.11: cannot open shared object file: No such file or directory\n";
    let (words, _) = fix_of(cublas, "observed.ld.cuda_library_missing");
    assert!(words.contains("nvidia-cublas-cu11") && words.contains("nvidia.cublas.lib"), "{words}");
}

#[test]
fn a_cudnn_older_than_the_build_gets_the_cudnn_it_was_built_against() {
    // pytorch/pytorch:torch/backends/cudnn/__init__.py: compiled against (8, 5, 0), found (8, 4, 1).
    let text = "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 5, 0) but found runtime \
                version (8, 4, 1).\n";
    let (words, _) = fix_of(text, "observed.torch.cudnn_incompatible");
    assert!(words.contains("'nvidia-cudnn-cu12>=8.5,<9'") && words.contains("LD_LIBRARY_PATH"), "{words}");
    assert!(words.contains("cuDNN 8.5") && words.contains("built for the cuDNN 8.4 that is installed"), "{words}");
    // TensorFlow's and XLA's refusal, in each spelling: the cuDNN the build needs, by pip from cuDNN 8 on
    // and by conda for the older ones pip never had.
    for (text, needs, how) in [
        // endernewton/tf-faster-rcnn#436 (TensorFlow 1.x's integer spelling).
        (
            "E tensorflow/stream_executor/cuda/cuda_dnn.cc:378] Loaded runtime CuDNN library: 7201 (compatibility version \
             7200) but source was compiled with 7004 (compatibility version 7000).  If using a binary install, upgrade \
             your CuDNN library to match.",
            "cuDNN 7.0",
            "conda install cudnn=7.0",
        ),
        // bmaltais/kohya_ss#2787 (XLA's, under TensorFlow 2).
        (
            "E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:447] Loaded runtime CuDNN library: 8.7.0 but \
             source was compiled with: 8.9.4.  CuDNN library needs to have matching major version and equal or higher \
             minor version.",
            "cuDNN 8.9",
            "nvidia-cudnn-cu12>=8.9,<9",
        ),
        // carpedm20/DCGAN-tensorflow#242.
        (
            "E tensorflow/stream_executor/cuda/cuda_dnn.cc:352] Loaded runtime CuDNN library: 5005 (compatibility \
             version 5000) but source was compiled with 5110 (compatibility version 5100).",
            "cuDNN 5.1",
            "conda install cudnn=5.1",
        ),
    ] {
        let (words, _) = fix_of(text, "observed.xla.cudnn_version_mismatch");
        assert!(words.contains(needs) && words.contains(how), "{words}");
        assert!(!words.contains("nvidia-cudnn-cu12>=5") && !words.contains("nvidia-cudnn-cu12>=7"), "{words}");
    }
}

// env_var_misconfig: the variable and the value to check or set.

#[test]
fn a_variable_finding_names_the_variable_and_the_value() {
    let (ordinal, _) =
        fix_of("RuntimeError: CUDA error: invalid device ordinal\n", "observed.cuda.invalid_device_ordinal");
    assert!(ordinal.contains("echo $CUDA_VISIBLE_DEVICES") && ordinal.contains("nvidia-smi -L"), "{ordinal}");
    // pytorch/pytorch:torch/utils/cpp_extension.py (_join_cuda_home), with torch's CUDA in the text.
    let text = "PyTorch version: 2.4.0+cu121\n\
                OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n";
    let (home, _) = fix_of(text, "observed.torch.cuda_home_not_set");
    assert!(home.contains("export CUDA_HOME=/usr/local/cuda-12.1"), "{home}");
    // CuPy's CUDA_PATH, for the CUDA major of the CuPy wheel in the text (cupy/_environment.py).
    let text = "cupy-cuda12x==13.0.0\nnumpy==1.26.4\nUserWarning: CUDA path could not be detected. Set CUDA_PATH environment variable \
                if CuPy fails to load.\n";
    let (path, _) = fix_of(text, "observed.cupy.cuda_path_not_detected");
    assert!(path.contains("CUDA_PATH=/usr/local/cuda-12.N") && !path.contains("torch"), "{path}");
}

// no_driver_or_gpu_not_visible: the command that loads, matches or exposes the driver.

#[test]
fn a_driver_the_program_cannot_reach_gets_the_command_of_its_cause() {
    let (module, _) = fix_of(
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest \
         NVIDIA driver is installed and running.\n",
        "observed.nvml.cannot_communicate",
    );
    assert!(module.contains("sudo modprobe nvidia") && module.contains("dkms status"), "{module}");
    // NVML_ERROR_LIB_RM_VERSION_MISMATCH, as nvidia-smi prints it.
    let (mismatch, _) =
        fix_of("Failed to initialize NVML: Driver/library version mismatch\n", "observed.nvml.driver_library_mismatch");
    assert!(mismatch.starts_with("Reboot") && mismatch.contains("/proc/driver/nvidia/version"), "{mismatch}");
    // Docker without the NVIDIA runtime: the toolkit's configure step, as a plan.
    let docker = finding(
        "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].\n",
        "observed.docker.no_gpu_device_driver",
    );
    let plan = docker.plan.map(|p| p.target);
    let Some(PlanTarget::Change { changes, .. }) = plan else { panic!("{plan:?}") };
    let configure: Vec<String> = ["nvidia-ctk", "runtime", "configure", "--runtime=docker"].map(String::from).to_vec();
    assert!(changes.contains(&Change::Root { argv: configure }), "{changes:?}");
}

#[test]
fn a_module_that_does_not_load_gets_the_plan_of_its_cause() {
    // The kernel's lockdown line (security/lockdown/lockdown.c: "Lockdown: %s: %s is restricted").
    let (words, plan) = fix_of(
        "[    5.123456] Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7\n",
        "observed.kernel.lockdown_unsigned_module",
    );
    assert!(words.contains("mokutil"), "{words}");
    assert_eq!(plan, Some(PlanTarget::DriverLoad { problem: DriverLoadProblem::SecureBootUnsigned }));
    // DKMS's failed build for the running kernel: the module-for-this-kernel plan.
    let (words, plan) = fix_of(
        "Error! Bad return status for module build on kernel: 6.8.0-45-generic (x86_64)\n",
        "observed.dkms.module_build_failed",
    );
    assert!(words.contains("dkms autoinstall"), "{words}");
    assert_eq!(plan, Some(PlanTarget::DriverLoad { problem: DriverLoadProblem::ModuleForOtherKernel }));
}

// Rows that carry another error's number, two CUDA releases mixed, and the catch-all rows with a
// fix of their own.

#[test]
fn a_message_carrying_a_cuda_error_number_gets_that_errors_fix() {
    // PyTorch's c10/cuda/CUDAFunctions.cpp warning after cudaGetDeviceCount; 804 is
    // cudaErrorCompatNotSupportedOnDevice (NVIDIA's runtime error table), a driver family row.
    let text = "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda \
                functions before calling NumCudaDevices() that might have already set an error? Error 804: forward \
                compatibility was attempted on non supported HW (Triggered internally at \
                ../c10/cuda/CUDAFunctions.cpp:109.)\n";
    let f = finding(text, "observed.torch.device_count_error");
    assert!(matches!(f.plan.as_ref().map(|p| &p.target), Some(PlanTarget::Driver { .. })), "{f:#?}");
    // 802 is cudaErrorSystemNotReady, a row of the catch-all category with a fix of its own.
    let text = text.replace(
        "Error 804: forward compatibility was attempted on non supported HW",
        "Error 802: system not yet initialized",
    );
    let (words, _) = fix_of(&text, "observed.torch.device_count_error");
    assert!(words.contains("nvidia-fabricmanager"), "{words}");
}

#[test]
fn the_catch_all_rows_with_a_fix_of_their_own_get_it() {
    // cudaErrorDevicesUnavailable (46): the compute mode.
    let (busy, _) = fix_of(
        "RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable\n",
        "observed.cuda.devices_unavailable",
    );
    assert!(busy.contains("nvidia-smi -c DEFAULT"), "{busy}");
    // NumPy's own advice (numpy/core/_multiarray_umath.py).
    let (numpy, _) = fix_of(
        "A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.1 as it may crash.\n",
        "observed.numpy.compiled_against_numpy1",
    );
    assert!(numpy.contains("'numpy<2'"), "{numpy}");
    // The linker's conflict of two CUDA releases names the library that needs the other one.
    let (conflict, _) = fix_of(
        "/usr/bin/ld: warning: libcudart.so.5.5, needed by /usr/local/lib/libcaffe.so, may conflict with \
         libcudart.so.6.0\n",
        "observed.ld.cuda_library_conflict",
    );
    assert!(conflict.contains("ldd /usr/local/lib/libcaffe.so"), "{conflict}");
}

/// The families cover what a lone error line usually is: over every catalogue row with a fix
/// family, a finding of such a row has a fix.
#[test]
fn lone_lines_of_the_fixed_families_get_a_fix() {
    let lines = [
        "CUDA error: the provided PTX was compiled with an unsupported toolchain.",
        "AssertionError: Torch not compiled with CUDA enabled",
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        "libcudnn_ops.so.9: cannot open shared object file: No such file or directory",
        "RuntimeError: CUDA error: invalid device ordinal",
        "RuntimeError: No CUDA GPUs are available",
        "Failed to initialize NVML: Driver/library version mismatch",
    ];
    for line in lines {
        for f in pasted(&format!("{line}\n")).iter().filter(|f| f.id.starts_with("observed.")) {
            assert!(words(f).is_some() || f.plan.is_some(), "{line}: {} has no fix", f.id);
        }
    }
}

// toolkit_vs_framework_mismatch_harmless: what a build step needs of the toolkit.

#[test]
fn an_extension_build_refusing_the_toolkit_gets_the_toolkit_of_torch_and_the_torch_of_the_toolkit() {
    // torch/utils/cpp_extension.py's _check_cuda_version (v2.5.0), toolkit 11.8 under a torch of 12.1.
    let (fix, _) = fix_of(
        "RuntimeError:\nThe detected CUDA version (11.8) mismatches the version that was used to compile\n\
         PyTorch (12.1). Please make sure to use the same CUDA versions.\n",
        "observed.torch.cpp_extension_cuda_mismatch",
    );
    assert!(fix.contains("cuda-nvcc=12.1") && fix.contains("CUDA_HOME"), "{fix}");
    assert!(fix.contains("download.pytorch.org/whl/cu118"), "{fix}");
    // XLA's warning (xla/stream_executor/cuda/ptx_compiler_helpers.cc): the driver's floor for the
    // ptxas, or the ptxas of the driver's CUDA.
    let (ptxas, _) = fix_of(
        "W external/xla/xla/service/gpu/nvptx_compiler.cc:836] The NVIDIA driver's CUDA version is 12.2 which is \
         older than the PTX compiler version 12.6.20. Because the driver is older than the PTX compiler version, \
         XLA is disabling parallel compilation, which may slow down compilation. You should update your NVIDIA \
         driver or use the NVIDIA-provided CUDA forward compatibility packages.\n",
        "observed.xla.driver_older_than_ptxas",
    );
    assert!(ptxas.contains("nvidia-cuda-nvcc-cu12==12.2.*") && ptxas.contains("560"), "{ptxas}");
}

#[test]
fn cuda_start_up_errors_get_the_causes_their_families_have() {
    // cudaErrorUnknown (999) at start-up: nvidia_uvm reloaded; in PyTorch's words too.
    let (unknown, _) = fix_of("RuntimeError: CUDA error: unknown error\n", "observed.cuda.unknown_error");
    assert!(unknown.contains("sudo rmmod nvidia_uvm") && unknown.contains("sudo modprobe nvidia_uvm"), "{unknown}");
    let (torch, _) = fix_of(
        "UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up \
         environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start.\n",
        "observed.torch.cuda_unknown_error",
    );
    assert!(torch.contains("nvidia_uvm"), "{torch}");
    // cudaErrorInitializationError (3): a fork after CUDA started, or HMM on the open modules.
    let (init, _) = fix_of("RuntimeError: CUDA error: initialization error\n", "observed.cuda.initialization_error");
    assert!(init.contains("spawn") && init.contains("uvm_disable_hmm=1"), "{init}");
    // NVIDIA's NVRTC without the GPU's architecture: a build of a newer CUDA, per driver line.
    let (nvrtc, _) = fix_of(
        "RuntimeError: nvrtc: error: invalid value for --gpu-architecture (-arch)\n",
        "observed.nvrtc.invalid_gpu_architecture",
    );
    assert!(nvrtc.contains("download.pytorch.org/whl/cu") && nvrtc.contains("cupy-cuda12x"), "{nvrtc}");
}

#[test]
fn jax_without_its_cudnn_gets_the_cudnn_its_plugins_need_by_pip_and_conda() {
    // jax_plugins/cuda/__init__.py's check, as JAX raises it (the catalogue's sample).
    let f = pasted("RuntimeError: Outdated cuDNN installation found.\n");
    let fix = f.iter().find_map(|f| words(f).filter(|w| w.contains("cuDNN"))).expect("a cuDNN fix").to_owned();
    assert!(fix.contains("nvidia-cudnn-cu12>=9.") && fix.contains("cudnn>=9."), "{fix}");
    assert!(fix.contains("import jax"), "{fix}");
}

#[test]
fn an_image_shipping_the_drivers_files_gets_them_removed_from_the_image() {
    // lambdal/lambda-stack-dockerfiles#15, nvidia-container-cli's mount error.
    let (fix, _) = fix_of(
        "nvidia-container-cli: mount error: file creation failed: /var/lib/docker/overlay2/40c7fccee0aa8659243a81\
         80389b333c9a6b85fac895a95207bfddca46df4fc6/merged/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1: file exists: \
         unknown.\n",
        "observed.container.mount_file_exists",
    );
    assert!(fix.starts_with("Remove libnvidia-ml.so.1 from the image"), "{fix}");
    assert!(fix.contains("rm -f /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"), "{fix}");
}

#[test]
fn running_out_of_gpu_memory_is_a_note_of_the_workload_not_a_setup_error() {
    // PyTorch's allocator (c10/cuda/CUDACachingAllocator.cpp), the catalogue's `level = "workload"` row.
    let f = finding(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 14.75 GiB\n",
        "observed.cuda.out_of_memory",
    );
    assert_eq!(f.severity, gpu_doctor_model::Severity::Info);
}

/// ollama/ollama#4008: ollama 0.1.33 on Windows reporting "Compute Capability detected: 1.0" for an RTX
/// 3090 after loading PhysX's CUDA 6.5 runtime: no GPU has that capability, so the fix is the runtime
/// found first on PATH, not a build for sm_10.
#[test]
fn a_capability_no_gpu_has_is_an_old_runtime_answering() {
    let text = "time=2024-04-27T10:04:11.573+02:00 level=INFO source=gpu.go:101 msg=\"detected GPUs\" \
                library=\"C:\\\\Program Files (x86)\\\\NVIDIA Corporation\\\\PhysX\\\\Common\\\\cudart64_65.dll\" count=1\n\
                time=2024-04-27T10:04:11.588+02:00 level=INFO source=gpu.go:148 msg=\"[0] CUDA GPU is too old. Compute \
                Capability detected: 1.0\"\n";
    let (words, _) = fix_of(text, "observed.ollama.gpu_too_old");
    assert!(words.contains("PATH") && words.contains("cudart64_65.dll") && !words.contains("sm_10"), "{words}");
    // A real old GPU keeps the build fix.
    let (words, _) = fix_of(
        "time=2024-04-27T10:04:11.588+02:00 level=INFO source=gpu.go:148 msg=\"[0] CUDA GPU is too old. Compute \
         Capability detected: 3.0\"\n",
        "observed.ollama.gpu_too_old",
    );
    assert!(words.contains("sm_30"), "{words}");
}

/// An extension whose kernel stubs call the CUDA runtime's `__cudaPopCallConfiguration` (NVlabs/PWC-Net#11,
/// verbatim): rebuilt with the nvcc of torch.version.cuda, the commands to compare them quoted for the shell.
#[test]
fn a_cuda_runtime_entry_point_missing_rebuilds_with_the_frameworks_nvcc() {
    let (words, _) = fix_of(
        "ImportError: /correlation_package/_ext/corr/_corr.so: undefined symbol: __cudaPopCallConfiguration\n",
        "observed.ld.cuda_runtime_symbol_missing",
    );
    assert!(
        words.contains("/correlation_package/_ext/corr/_corr.so") && words.contains("torch.version.cuda"),
        "{words}"
    );
    assert!(words.contains("`nvcc --version`") && words.contains("CUDA_HOME"), "{words}");
}

/// A link against a library built for another CUDA release (openmm/openmmexampleplugin#20, verbatim: the
/// plugin built against CUDA 10's cuFFT): the fix names that release's library and the link path.
#[test]
fn a_versioned_reference_names_the_release_to_install() {
    let (words, _) = fix_of(
        "/home/lvotapka/bin/openmm/lib/plugins/libOpenMMCUDA.so: undefined reference to `cufftExecZ2D@libcufft.so.10'\n",
        "observed.ld.versioned_reference_undefined",
    );
    assert!(words.contains("libcufft.so.10") && words.contains("libOpenMMCUDA.so") && words.contains("-L"), "{words}");
}

/// A library of a CUDA before 11 (NVIDIA-ISAAC-ROS/isaac_ros_image_pipeline#18's `libcudart.so.10.2`) has no pip
/// wheel, and a library numbered apart from CUDA (`libcufft.so.10`) does not say which CUDA's wheel holds it:
/// neither fix offers a wheel of another CUDA. CUDA 12's runtime still gets its wheel.
#[test]
fn a_library_is_offered_only_the_wheel_of_its_own_cuda() {
    for line in [
        "error while loading shared libraries: libcudart.so.10.2: cannot open shared object file: No such file or directory\n",
        "ImportError: libcufft.so.10: cannot open shared object file: No such file or directory\n",
    ] {
        let f = finding(line, "observed.ld.cuda_library_missing");
        let words = words(&f).expect("a fix").to_owned();
        assert!(!words.contains("-cu12") && !words.contains("-cu11"), "{line}: {words}");
        assert!(words.contains("cuda-toolkit-archive") && words.contains("LD_LIBRARY_PATH"), "{line}: {words}");
    }
    let f = finding(
        "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory\n",
        "observed.ld.cuda_library_missing",
    );
    assert!(words(&f).is_some_and(|w| w.contains("nvidia-cuda-runtime-cu12")), "{f:#?}");
}

/// nvcc without its libdevice (BVLC/caffe#2530's line) is told to run the toolkit's own nvcc, first on PATH.
#[test]
fn nvcc_without_libdevice_is_told_to_put_the_toolkits_bin_first() {
    let f = finding("nvcc fatal   : Path to libdevice library not specified\n", "observed.nvcc.libdevice_not_found");
    let words = words(&f).expect("a fix");
    assert!(words.contains("PATH=/usr/local/cuda/bin:$PATH") && words.contains("which -a nvcc"), "{words}");
}

/// A library named without a major is the development link only a toolkit's `-dev` package installs:
/// cuDNN 8's runtime-fusion engine opens `libnvrtc.so` (facefusion/facefusion-docker#8 made the link in
/// torch/lib). The fix names the link to make, not the cuDNN that loaded fine.
#[test]
fn an_nvidia_library_without_a_major_is_the_development_link() {
    let text = "Could not load library libcudnn_cnn_infer.so.8. Error: libnvrtc.so: cannot open shared object file: \
                No such file or directory\n";
    let (words, _) = fix_of(text, "observed.ld.cuda_library_missing");
    assert!(words.contains("ln -s libnvrtc.so.N libnvrtc.so") && words.contains("-dev"), "{words}");
}

/// cuDNN 8.3 to 8.9 on Windows need zlibwapi.dll: its own line, and a cuDNN 8 DLL that does not load
/// (Windows' error 126), name it.
#[test]
fn cudnn_8_on_windows_names_zlibwapi() {
    let (words, _) = fix_of(
        "Could not locate zlibwapi.dll. Please make sure it is in your library path!\n",
        "observed.cudnn.zlib_dll_not_found",
    );
    assert!(words.contains("zlibwapi.dll") && words.contains("PATH"), "{words}");
    let text = "Could not load library cudnn_cnn_infer64_8.dll. Error code 126\n\
                Please make sure cudnn_cnn_infer64_8.dll is in your library path!\n";
    let (words, _) = fix_of(text, "observed.cudnn.could_not_load_library");
    assert!(words.contains("zlibwapi.dll"), "{words}");
    // cuDNN 9 needs none.
    let text = "Could not load library cudnn_ops64_9.dll. Error code 126\n";
    let (words, _) = fix_of(text, "observed.cudnn.could_not_load_library");
    assert!(!words.contains("zlibwapi.dll"), "{words}");
}

/// The kernel log's NVRM lines of a GPU the driver could not take: the firmware's BAR left unusable
/// (pci=realloc, Above 4G Decoding), RmInitAdapter (the order of causes to check), and a probe never
/// called (another driver, nouveau as the line names it, holds the GPU). The lines are the reader's
/// samples for their rows (probes/src/parse/paste/tests/messages.rs).
#[test]
fn nvrm_lines_of_a_gpu_the_driver_could_not_take_name_their_remedy() {
    let bar = "NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:\nNVRM: BAR1 is 0M @ 0x0 (PCI:0000:01:00.0)\n";
    let (words, _) = fix_of(bar, "observed.nvrm.invalid_bar");
    assert!(words.contains("pci=realloc") && words.contains("Above 4G Decoding"), "{words}");
    let init = "Jul 01 22:55:07 gpu kernel: NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:884)\n";
    let (words, _) = fix_of(init, "observed.nvrm.rm_init_adapter_failed");
    assert!(words.contains("Above 4G Decoding") && words.contains("power"), "{words}");
    let probe = "[188549.976351] NVRM: The NVIDIA probe routine was not called for 3 device(s).\n";
    let (words, plan) = fix_of(probe, "observed.nvrm.probe_not_called");
    assert!(words.contains("nouveau") && words.contains("reboot"), "{words}");
    assert!(plan.is_some(), "the driver-load plan of nouveau");
}

/// CUDA's invalid device ordinal against what the text shows visible: a launcher starting more
/// processes (one a GPU) than CUDA_VISIBLE_DEVICES lists, and one visible GPU. The error line is
/// PyTorch's `cuda runtime error (101)` of torch/csrc/cuda/Module.cpp; the launch lines are written
/// for the test in torch.distributed.launch's documented form.
#[test]
fn an_invalid_ordinal_names_the_process_count_or_the_one_visible_gpu() {
    let error =
        "RuntimeError: cuda runtime error (101) : invalid device ordinal at /pytorch/torch/csrc/cuda/Module.cpp:59\n";
    let launch = format!(
        "CUDA_VISIBLE_DEVICES=1,2 python -m torch.distributed.launch --nnodes=1 --nproc_per_node=4 train.py\n{error}"
    );
    let (words, _) = fix_of(&launch, "observed.cuda.invalid_device_ordinal");
    assert!(words.contains("set --nproc_per_node (torchrun, torch.distributed.launch) to 2"), "{words}");
    let one = format!("$ export CUDA_VISIBLE_DEVICES=0\n{error}");
    let (words, _) = fix_of(&one, "observed.cuda.invalid_device_ordinal");
    assert!(words.contains("Only one GPU is visible (CUDA_VISIBLE_DEVICES=0 shows one)"), "{words}");
    // CUDA stops at -1: `0,-1,1` leaves one GPU visible; `-1` leaves none, which is not one.
    let (words, _) =
        fix_of(&format!("$ export CUDA_VISIBLE_DEVICES=0,-1,1\n{error}"), "observed.cuda.invalid_device_ordinal");
    assert!(words.contains("Only one GPU is visible (CUDA_VISIBLE_DEVICES=0,-1,1 shows one)"), "{words}");
    let (words, _) =
        fix_of(&format!("$ export CUDA_VISIBLE_DEVICES=-1\n{error}"), "observed.cuda.invalid_device_ordinal");
    assert!(!words.contains("Only one GPU is visible"), "{words}");
    // No GPU count shown, a launcher of 8 processes (torchrun's documented `--standalone --nproc_per_node`, as
    // yunqing-me/WatermarkDM#8 ran it): its count is the one to set to the GPUs nvidia-smi lists.
    let (words, _) = fix_of(
        &format!("torchrun --standalone --nproc_per_node=8 train.py\n{error}"),
        "observed.cuda.invalid_device_ordinal",
    );
    assert!(words.contains("starts 8 processes") && words.contains("Set --nproc_per_node (torchrun"), "{words}");
    // Nothing shown visible: the general words alone.
    let (words, _) = fix_of(error, "observed.cuda.invalid_device_ordinal");
    assert!(words.starts_with("`nvidia-smi -L` lists"), "{words}");
}

/// ldd's `=> not found` for CUDA's libraries is the loader's missing library (arch4edu/arch4edu#24: an MXNet
/// built for CUDA 10.0 after the toolkit moved to 10.1); before CUDA 11 the runtime's soname carries the release
/// whole, so the fix names `libcudart.so.10.0`, not a `libcudart.so.10` no release ships.
#[test]
fn ldds_not_found_names_the_release_the_soname_carries() {
    let text = "\tlibcudart.so.10.0 => not found\n\tlibcublas.so.10.0 => not found\n";
    let (words, _) = fix_of(text, "observed.ld.cuda_library_missing");
    assert!(words.contains("grep -F libcudart.so.10.0") && words.contains("(10.0 in its name)"), "{words}");
    // From CUDA 11 the soname is the major alone.
    let (words, _) = fix_of("\tlibcublasLt.so.11.2.1 => not found\n", "observed.ld.cuda_library_missing");
    assert!(words.contains("libcublasLt.so.11") && !words.contains("libcublasLt.so.11.2"), "{words}");
}

/// vLLM's bfloat16 check names a dtype the GPU lacks, not a build without the GPU: the fix is float16, whatever
/// torch is installed (hiyouga/LlamaFactory#4960's V100).
#[test]
fn vllms_bfloat16_refusal_is_fixed_with_float16_not_another_build() {
    let line = "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla \
                V100-SXM2-32GB GPU has compute capability 7.0. You can use float16 instead by explicitly setting the \
                `dtype` flag in CLI, for example: --dtype=half.";
    let (words, plan) = fix_of(line, "observed.vllm.bf16_unsupported");
    assert!(words.contains("--dtype half") && words.contains("Tesla V100-SXM2-32GB"), "{words}");
    assert!(!words.contains("index-url"), "no torch build: {words}");
    assert_eq!(plan, None);
}

/// A program's own words that it was built without a GPU's architecture (xmr-stak's check, its printf at v2.2.0):
/// the fix names that sm_XY and, for an architecture CUDA dropped (sm_30 after CUDA 10.2, gpus.toml), the newest
/// CUDA that can still build it, not a "first came with" floor the table cannot give (it starts at CUDA 7.0).
#[test]
fn an_architecture_not_compiled_in_names_the_cuda_that_can_still_build_it() {
    let (words, _) = fix_of(
        "WARNING: NVIDIA GPU 0: miner not compiled for the gpu architecture 30.\n",
        "observed.xmrstak.arch_not_compiled",
    );
    assert!(words.contains("sm_30") && words.contains("CUDA 10.2 or older"), "{words}");
    assert!(!words.contains("first came with"), "{words}");
}

/// FlashAttention 2's capability check (csrc/flash_attn/flash_api.cpp): below compute capability 8.0 no build runs,
/// so the fix is another attention; on Blackwell the release predates v2.7.3's `cc_major >= 8`, so it is a newer
/// flash-attn. Without the GPU, both.
#[test]
fn flash_attentions_refusal_is_another_attention_below_ampere_and_a_newer_release_above_hopper() {
    let line = "RuntimeError: FlashAttention only supports Ampere GPUs or newer.\n";
    let id = "observed.flash_attn.ampere_or_newer_only";
    let (t4, plan) = fix_of(&format!("GPU 0: Tesla T4 (UUID: GPU-1)\n{line}"), id);
    assert!(t4.contains("attn_implementation=\"sdpa\"") && !t4.contains("2.7.3"), "{t4}");
    assert_eq!(plan, None);
    let (blackwell, _) = fix_of(&format!("GPU 0: NVIDIA GeForce RTX 5090 (UUID: GPU-1)\n{line}"), id);
    assert!(blackwell.contains("sm_120") && blackwell.contains("flash-attn --no-build-isolation"), "{blackwell}");
    assert!(!blackwell.contains("sdpa"), "{blackwell}");
    let (unknown, _) = fix_of(line, id);
    assert!(unknown.contains("sdpa") && unknown.contains("2.7.3"), "{unknown}");
}

/// DeepSpeed's op builder (op_builder/builder.py@v0.16.4): the toolkit of torch's CUDA or torch of the toolkit's;
/// DS_SKIP_CUDA_CHECK only where the majors agree, since PyTorch's extension builder refuses two majors anyway.
#[test]
fn deepspeeds_toolkit_mismatch_offers_its_skip_only_within_one_major() {
    let id = "observed.deepspeed.cuda_mismatch";
    let (majors, _) = fix_of(
        ">- DeepSpeed Op Builder: Installed CUDA version 12.2 does not match the version torch was compiled with 11.7, \
         unable to compile cuda/cpp extensions without a matching cuda version.\n",
        id,
    );
    assert!(majors.contains("cuda-nvcc=11.7") && majors.contains("whl/cu12"), "{majors}");
    assert!(!majors.contains("DS_SKIP_CUDA_CHECK"), "{majors}");
    let (minors, _) = fix_of(
        "Exception: Installed CUDA version 12.3 does not match the version torch was compiled with 12.1, unable to \
         compile cuda/cpp extensions without a matching cuda version.\n",
        id,
    );
    assert!(minors.contains("DS_SKIP_CUDA_CHECK=1") && minors.contains("cuda-nvcc=12.1"), "{minors}");
}

/// LightGBM's missing learners (src/treelearner): the OpenCL one is in the Windows and Linux wheels, the CUDA one
/// only in a build from source with USE_CUDA (python-package/README.rst@v4.6.0).
#[test]
fn lightgbms_missing_learner_gets_the_build_that_has_it() {
    let id = "observed.lightgbm.gpu_learner_not_built";
    let (gpu, _) = fix_of("lightgbm.basic.LightGBMError: GPU Tree Learner was not enabled in this build.\n", id);
    assert!(gpu.contains("lightgbm>=4") && gpu.contains("cmake.define.USE_GPU=ON"), "{gpu}");
    let (cuda, _) = fix_of("[LightGBM] [Fatal] CUDA Tree Learner was not enabled in this build.\n", id);
    assert!(cuda.contains("--no-binary lightgbm lightgbm --config-settings=cmake.define.USE_CUDA=ON"), "{cuda}");
    assert!(!cuda.contains("USE_GPU"), "{cuda}");
}

/// Ultralytics' device check (ultralytics/utils/torch_utils.py, select_device): what torch sees, the CUDA build
/// from pytorch.org's index where it sees nothing, and indices nvidia-smi lists (it sets CUDA_VISIBLE_DEVICES to
/// them itself).
#[test]
fn ultralytics_invalid_device_asks_torch_and_names_the_cuda_build_and_the_index() {
    let (words, plan) = fix_of(
        "ValueError: Invalid CUDA 'device=1' requested. Use 'device=cpu' or pass valid CUDA device(s) if available, \
         i.e. 'device=0' or 'device=0,1,2,3' for Multi-GPU.\n",
        "observed.ultralytics.invalid_cuda_device",
    );
    assert!(words.contains("torch.cuda.is_available()") && words.contains("download.pytorch.org/whl"), "{words}");
    assert!(words.contains("`device=1`") && words.contains("nvidia-smi -L"), "{words}");
    assert_eq!(plan, None);
}

/// XLA without cuDNN (xla/service/gpu/stream_executor_util.cc): the lines cuda_dnn.cc logged above it decide, a
/// cuDNN older than the build's (jax-ml/jax#16901) or cudnnCreate without memory; with neither, both.
#[test]
fn xlas_dnn_init_failure_follows_the_line_above_it() {
    let id = "observed.xla.dnn_library_init_failed";
    let line = "jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed. Look at \
                the errors above for more details.\n";
    let (older, _) = fix_of(
        &format!(
            "E0731 cuda_dnn.cc:425] Loaded runtime CuDNN library: 8.5.0 but source was compiled with: 8.6.0.  CuDNN \
             library needs to have matching major version and equal or higher minor version.\n{line}"
        ),
        id,
    );
    assert!(older.contains("cuDNN 8.6") && !older.contains("XLA_PYTHON_CLIENT_PREALLOCATE"), "{older}");
    let (memory, _) = fix_of(
        &format!("E0904 cuda_dnn.cc:535] Could not create cudnn handle: CUDNN_STATUS_NOT_INITIALIZED\n{line}"),
        id,
    );
    assert!(memory.contains("XLA_PYTHON_CLIENT_PREALLOCATE=false") && !memory.contains("nvidia-cudnn"), "{memory}");
    let (unknown, plan) = fix_of(line, id);
    assert!(unknown.contains("nvidia-cudnn-cu") && unknown.contains("XLA_PYTHON_CLIENT_MEM_FRACTION"), "{unknown}");
    assert_eq!(plan, None);
}

/// cuBLAS's handle without memory (pytorch/pytorch CublasHandlePool.cpp): the processes holding the GPU and a
/// smaller share, not another build.
#[test]
fn cublas_alloc_failure_at_create_is_memory_not_a_build() {
    let (words, plan) = fix_of(
        "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n",
        "observed.torch.cublas_create_alloc_failed",
    );
    assert!(words.contains("--query-compute-apps") && words.contains("batch size"), "{words}");
    assert!(!words.contains("index-url"), "{words}");
    assert_eq!(plan, None);
}

/// The scheduler's `Insufficient nvidia.com/gpu` (kubernetes/kubernetes noderesources/fit.go): what the nodes
/// advertise, NVIDIA's device plugin where they advertise none, and GPUs already taken.
#[test]
fn schedulers_insufficient_gpu_reads_the_nodes_and_names_the_device_plugin() {
    let (words, plan) = fix_of(
        "Warning  FailedScheduling  default-scheduler  0/2 nodes are available: 2 Insufficient nvidia.com/gpu.\n",
        "observed.kube_scheduler.insufficient_gpu",
    );
    assert!(words.contains("kubectl describe node") && words.contains("nvidia-device-plugin.yml"), "{words}");
    assert!(words.contains("Allocatable") && words.contains("taken"), "{words}");
    assert_eq!(plan, None);
}

/// ShuangLI59/person_search#56: a copy of nvcc in /usr/local/bin, first on PATH, cannot find its own `cicc`
/// (nvcc.profile finds the stages relative to nvcc's folder): the toolkit's own nvcc first on PATH, the copy gone.
/// NVRTC before CUDA 11 named no builtins file (openmm/openmm#1485): the loader's path.
#[test]
fn an_nvcc_outside_its_toolkit_and_nvrtc_without_its_builtins_name_the_path() {
    let text = "/usr/local/bin/nvcc -I/usr/local/cuda-8.0/include -c nms/nms_kernel.cu -arch=sm_35\n\
                sh: 1: cicc: not found\n\
                error: command '/usr/local/bin/nvcc' failed with exit status 127\n";
    let (fix, _) = fix_of(text, "observed.nvcc.stage_not_found");
    assert!(fix.contains("PATH=/usr/local/cuda/bin:$PATH") && fix.contains("/usr/local/bin/nvcc"), "{fix}");
    let text = "Exception: Error compiling program: nvrtc: error: failed to load builtins\n";
    let (fix, _) = fix_of(text, "observed.nvrtc.builtins_missing");
    assert!(fix.contains("libnvrtc-builtins") && fix.contains("LD_LIBRARY_PATH"), "{fix}");
}

/// NVIDIA/nvidia-docker#1280: libnvidia-container's `nvml error: function not found` under driver 410.48 is a
/// driver older than the toolkit: the driver's update.
#[test]
fn nvml_without_a_function_the_container_toolkit_calls_is_the_driver() {
    let text = "stderr: nvidia-container-cli: detection error: nvml error: function not found\\\\n\\\"\"\": unknown.\n\
                | NVIDIA-SMI 410.48                 Driver Version: 410.48                    |\n";
    let f = finding(text, "observed.container.nvml_function_not_found");
    assert_eq!(f.category, gpu_doctor_model::Category::DriverTooOldForRuntime);
    assert!(f.summary.contains("older than this container toolkit supports"), "{}", f.summary);
    // The driver's update, planned; its words name the CUDA level the pasted driver reaches.
    assert!(matches!(f.plan.as_ref().map(|p| &p.target), Some(PlanTarget::Driver { min_branch: None })), "{f:#?}");
    assert!(
        words(&f).is_some_and(|w| w.contains("Update the NVIDIA driver") && w.contains("CUDA up to 10.0")),
        "{f:#?}"
    );
}

/// PaddlePaddle's start-up warning that its device count failed (init.cc), under a driver the text names: the
/// three causes with the commands that tell them, and the driver's CUDA level.
#[test]
fn paddle_without_a_gpu_at_start_names_the_driver_level_and_the_variable() {
    let text = "   driver\u{ff1a}430.64\n\
                W0624 14:32:46.220422 23029 init.cc:136] Compiled with WITH_GPU, but no GPU found in runtime.\n";
    let (fix, _) = fix_of(text, "observed.paddle.no_gpu_in_runtime");
    assert!(fix.contains("CUDA up to 10.1") && fix.contains("paddle.version.cuda()"), "{fix}");
    assert!(fix.contains("CUDA_VISIBLE_DEVICES"), "{fix}");
}

/// CUDA's 804 is a user-space driver newer than the kernel module on a GPU without forward compatibility: after a
/// driver update the reboot (ollama/ollama#15918, its fix #16684), in a container the host driver's update or an
/// image for its CUDA.
#[test]
fn forward_compatibility_on_a_geforce_names_the_reboot_and_the_host_driver() {
    let text = "ggml_cuda_init: failed to initialize CUDA: forward compatibility was attempted on non supported HW\n";
    let (fix, plan) = fix_of(text, "observed.cuda.compat_not_supported");
    assert!(fix.contains("reboot") && fix.contains("/proc/driver/nvidia/version"), "{fix}");
    assert!(fix.contains("update the host's NVIDIA driver") && fix.contains("compat"), "{fix}");
    assert!(matches!(plan, Some(PlanTarget::Driver { min_branch: None })), "{plan:?}");
}

/// The fixes of rows given words of their own (each line verbatim from its thread): NGC's entrypoint refusing a newer
/// GPU (blakeblackshear/frigate#6666) wants a newer image, not a build for the GPU's architecture; JAX's CPU fallback
/// (gladiaio/gladia#927) names the CUDA jaxlib; kmod's missing module
/// (GoogleCloudPlatform/compute-gpu-installation#10) rebuilds it for the running kernel.
#[test]
fn rows_with_words_of_their_own_get_them() {
    let fix_of = |text: &str, id: &str| {
        let found = super::pasted_findings(text);
        let f = found.iter().find(|f| f.id == id).unwrap_or_else(|| panic!("{id} in {found:#?}"));
        super::words(f).unwrap_or_default().to_owned()
    };
    let ngc = fix_of(
        "WARNING: Detected NVIDIA NVIDIA Graphics Device GPU, which is not yet supported in this version of the container\n",
        "observed.ngc.gpu_not_supported",
    );
    assert!(ngc.contains("newer release of the image") && !ngc.contains("sm_"), "{ngc}");
    // The line alone is a CPU jaxlib, likely: the rule's finding explains it and carries the row's words.
    let jax = fix_of(
        "2022-11-30 12:50:08,211 - jax._src.lib.xla_bridge - WARNING - No GPU/TPU found, falling back to CPU. (Set \
         TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n",
        "framework.cpu_only_build",
    );
    assert!(jax.contains("jax[cuda12]") && jax.contains("jaxlib"), "{jax}");
    let module = fix_of(
        "modprobe: FATAL: Module nvidia not found in directory /lib/modules/5.13.0-1025-gcp\n",
        "observed.kernel.module_not_found",
    );
    assert!(module.contains("headers of the running kernel") && module.contains("dkms autoinstall"), "{module}");
}

/// torchvision's operators missing from torch (pytorch/vision's `operator torchvision::nms does not exist`,
/// ltdrdata/ComfyUI-Impact-Pack#958) or its CUDA check (`compiled with different CUDA major versions`, with torch's
/// CUDA): torch and torchvision installed together from one index, the installed torch kept and its line's
/// torchvision named where the text shows torch, the index of torch's CUDA where the text gives it.
#[test]
fn torchvision_from_another_build_gets_the_pair_from_one_index() {
    let (alone, _) =
        fix_of("RuntimeError: operator torchvision::nms does not exist\n", "observed.torchvision.operator_missing");
    assert!(alone.contains("torch torchvision --index-url https://download.pytorch.org/whl/cuXYZ"), "{alone}");
    let with_torch = "torch 2.5.1+cu121\nRuntimeError: operator torchvision::nms does not exist\n";
    let (fix, _) = fix_of(with_torch, "observed.torchvision.operator_missing");
    assert!(
        fix.contains("torch==2.5.1 torchvision==0.20.1 --index-url https://download.pytorch.org/whl/cu121"),
        "{fix}"
    );
    let check = "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions. \
                 PyTorch has CUDA Version=12.1 and torchvision has CUDA Version=11.8. Please reinstall the torchvision \
                 that matches your PyTorch install.\n";
    let (fix, _) = fix_of(check, "observed.torchvision.cuda_mismatch");
    assert!(fix.contains("--index-url https://download.pytorch.org/whl/cu121"), "{fix}");
}

/// A library's own words that its build has no CUDA are a CPU-only build, one finding whose fix names that library's
/// CUDA build (the lines of open-mmlab/mmcv#1142, rusty1s/pytorch_scatter#384 with torch 2.0.0+cu118 shown,
/// opencv/opencv-python#398); Detectron2's wording, which the extensions' guard also matches, keeps Detectron2's fix.
#[test]
fn a_library_built_without_cuda_is_a_cpu_only_build_with_its_cuda_build() {
    let mmcv = pasted("RuntimeError: nms is not compiled with GPU support\n");
    let f = mmcv.iter().find(|f| f.id == "framework.cpu_only_build").unwrap_or_else(|| panic!("{mmcv:#?}"));
    assert!(f.summary.contains("nms op"), "{}", f.summary);
    assert!(f.explains.contains(&"observed.torch_extension.op_not_compiled_with_gpu".to_owned()), "{f:#?}");
    let fix = f.fix.as_deref().unwrap_or_default();
    assert!(fix.contains("download.openmmlab.com/mmcv/dist") && fix.contains("FORCE_CUDA=1"), "{fix}");
    let (fix, _) = fix_of(
        "PyTorch version: 2.0.0+cu118\nRuntimeError: Not compiled with CUDA support\n",
        "observed.torch_extension.not_compiled_with_cuda",
    );
    assert!(fix.contains("https://data.pyg.org/whl/torch-2.0.0+cu118.html"), "{fix}");
    let (fix, _) = fix_of(
        "cv2.error: OpenCV(4.4.0) error: (-216:No CUDA support) The library is compiled without CUDA support in function 'throw_no_cuda'\n",
        "observed.opencv.compiled_without_cuda",
    );
    assert!(fix.contains("-DWITH_CUDA=ON"), "{fix}");
    let detectron = pasted("RuntimeError: Detectron2 is not compiled with GPU support!\n");
    let cpu: Vec<&Finding> = detectron.iter().filter(|f| f.id == "framework.cpu_only_build").collect();
    assert_eq!(cpu.len(), 1, "{detectron:#?}");
    assert!(cpu[0].summary.contains("Detectron2"), "{}", cpu[0].summary);
    assert!(cpu[0].fix.as_deref().is_some_and(|x| x.contains("detectron2.git")), "{:?}", cpu[0].fix);
}

/// Caffe2's own cuDNN check with both versions (onnx/onnx-caffe2#288's line) is the mismatch finding; Lua Torch's
/// cuDNN bindings not finding libcudnn.so.5 (jcjohnson/neural-style#331) get cuDNN 5 on the loader's path or
/// CUDNN_PATH, not a pip wheel; Void's DKMS trigger (void-linux/void-packages#61087) is DKMS's build failure.
#[test]
fn caffe2_lua_torch_and_void_dkms_lines_get_their_fixes() {
    let caffe2 = pasted(
        "RuntimeError: [enforce fail at common_cudnn.h:118] version_match. cuDNN compiled (6021) and runtime (7003) \
         versions mismatch\n",
    );
    let f = caffe2.iter().find(|f| f.id == "cudnn.version_mismatch").unwrap_or_else(|| panic!("{caffe2:#?}"));
    assert!(f.summary.contains("7.0") && f.summary.contains("6.0"), "{}", f.summary);
    let (fix, _) = fix_of(
        "/home/u/torch/install/share/lua/5.1/cudnn/ffi.lua:1603: 'libcudnn (R5) not found in library path.\n",
        "observed.cudnn_torch.library_not_found",
    );
    assert!(fix.contains("CUDNN_PATH=/usr/local/cuda/lib64/libcudnn.so.5") && !fix.contains("pip"), "{fix}");
    let dkms = finding(
        "Building DKMS module 'nvidia-580.142' for kernel-7.1.0_1... FAILED!\n",
        "observed.dkms.module_build_failed",
    );
    assert!(dkms.summary.contains("nvidia-580.142") && dkms.summary.contains("7.1.0_1"), "{}", dkms.summary);
}
