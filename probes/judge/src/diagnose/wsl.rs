//! WSL: a Linux NVIDIA driver installed inside WSL2, the Windows driver's libraries missing from the
//! loader path, WSL1, which has no GPU support, a WSL kernel too old for GPU paravirtualisation, a
//! Windows GPU in TCC mode, the limits NVIDIA documents for CUDA on WSL (NVML queries, pinned
//! memory, managed memory, GPUs before Volta), a container image that ships the driver libraries WSL's
//! driver is mounted over, and WSL's nvidia-smi crashing with newer Windows drivers.

use super::{Ctx, Rule, fix};
use gpu_doctor_model::LoaderEntry;
use gpu_doctor_model::WslFacts;
use gpu_doctor_model::shell::ShellCommand;
use gpu_doctor_model::{Category, Change, Finding, PlanTarget, Probed, Severity};

/// Where WSL2 maps the Windows driver's libraries in.
const WSL_LIB: &str = "/usr/lib/wsl/lib";

/// The driver libraries WSL maps in there and a Linux driver package installs elsewhere: the CUDA
/// driver and NVML (ollama/ollama#1897: the nvidia-compute packages' libnvidia-ml loaded instead of
/// /usr/lib/wsl/lib/libnvidia-ml.so.1 fails NVML init).
const DRIVER_LIBS: [&str; 2] = ["libcuda.so", "libnvidia-ml.so"];

const SOURCE: &str = "NVIDIA CUDA on WSL User Guide (https://docs.nvidia.com/cuda/wsl-user-guide/index.html): the \
    Windows driver is the only driver; do not install a Linux driver in WSL; libcuda is mapped in at /usr/lib/wsl/lib";

pub(super) const LINUX_DRIVER: Rule = Rule {
    id: "wsl.linux_driver_installed",
    category: Category::WslSpecific,
    severity: Severity::Error,
    trigger: "A Linux NVIDIA driver is installed inside WSL2: a libcuda.so or libnvidia-ml.so outside /usr/lib/wsl/lib \
              in the loader cache, one the text shows in a distribution folder (/usr/lib/x86_64-linux-gnu, \
              /lib/x86_64-linux-gnu: a loader error, ldd, ls, numba's or ollama's library log), an nvidia kernel \
              module, or a driver package (nvidia-driver-*, cuda-drivers, nvidia-dkms-*, libnvidia-compute-*, the \
              .run installer) installed in the text, or the person saying in words that they installed a GPU/NVIDIA \
              driver inside WSL; these shadow the Windows driver's libraries. Also, none of these shown, numba or \
              Taichi saying cuInit found no device (CUDA_ERROR_NO_DEVICE) inside WSL while LD_LIBRARY_PATH names \
              neither /usr/lib/wsl/lib nor a stubs folder: both open the driver library by the name libcuda.so first, \
              which WSL's loader cache does not list, so the library that answered is a Linux driver's. Or NVML \
              answering NVML_ERROR_DRIVER_NOT_LOADED inside WSL 2, which has no NVIDIA kernel module: WSL's own \
              libnvidia-ml reaches the Windows driver, a Linux driver's looks for the module.",
    source: "NVIDIA CUDA on WSL User Guide (https://docs.nvidia.com/cuda/wsl-user-guide/index.html): the Windows driver \
             is the only driver; do not install a Linux driver in WSL; libcuda is mapped in at /usr/lib/wsl/lib; \
             numba/numba#9032 (maintainer: /lib/x86_64-linux-gnu/libcuda.so is the Linux driver's, package \
             libnvidia-compute-510); ollama/ollama#1897 (the nvidia-compute packages' libnvidia-ml loaded instead of \
             WSL's); numba/numba:numba/cuda/cudadrv/driver.py@0.60.0#L122,L138 and \
             taichi-dev/taichi:taichi/rhi/cuda/cuda_driver.cpp@v1.7.4#L120 (libcuda.so opened first); microsoft/WSL#8587 \
             (WSL's libcuda.so not in the loader cache); rapidsai/cuml#6218 (numba's maintainer: cuInit's no device \
             under WSL 2 came from an incorrect driver installed in WSL)",
};

pub(super) const NOT_ON_PATH: Rule = Rule {
    id: "wsl.driver_libs_not_on_loader_path",
    category: Category::WslSpecific,
    severity: Severity::Error,
    trigger: "/usr/lib/wsl/lib holds the Windows driver's libcuda, but neither the loader cache (ldconfig -p) nor \
              LD_LIBRARY_PATH includes that folder, so programs cannot load it.",
    source: SOURCE,
};

pub(super) const WSL1: Rule = Rule {
    id: "wsl.version_one",
    category: Category::WslSpecific,
    severity: Severity::Error,
    trigger: "The distribution runs under WSL1, which has no GPU support; CUDA needs WSL2.",
    source: SOURCE,
};

pub(super) const NO_GPU: Rule = Rule {
    id: "wsl.gpu_not_exposed",
    category: Category::WslSpecific,
    severity: Severity::Error,
    trigger: "Inside WSL (not known to be WSL1), no Linux driver is installed, no program lists a GPU (one the person \
              names is the Windows machine's), and a program says it \
              reached no driver or device (nvidia-smi 'couldn't communicate with the NVIDIA driver', CUDA 'no \
              CUDA-capable device', PyTorch 'Found no NVIDIA driver', cuInit failing; NVML's library, or \
              nvidia-container-cli's `load library failed` or `driver error`, where the text does not show \
              /usr/lib/wsl/lib holding the driver's libraries; `/dev/dxg` said missing; on a Windows 10 release \
              before 21H2 also a person saying no GPU was found): WSL does not hand the GPU to \
              the guest, and a Windows 10 release before 21H2 (1903 to 21H1) shown is said beside it. Under WSL 2 such \
              a release shown is enough on its own, with no program listing a GPU and /usr/lib/wsl/lib not shown \
              holding the driver's libraries: it has no GPU to hand over. Also nvidia-container-cli's `WSL environment detected but no adapters were found` on any \
              platform (Docker Desktop runs containers in its own WSL 2 VM): WSL's GPU interface lists no GPU.",
    source: "NVIDIA CUDA on WSL User Guide (WSL2 on Windows 11 or Windows 10 21H2 and later, the Windows driver only); \
             microsoft/WSL#6773 (a Windows build that broke GPU access); CompVis/stable-diffusion#161 (WSL1 taken for \
             WSL2); AbdBarho/stable-diffusion-webui-docker#129 (Windows 10 20H2: \"you need >= 2021H2\"); \
             NVIDIA/libnvidia-container:src/nvc.c@f35f091c6261496cef48f408dffa84c68e49e199 (nvc_init: dxcore \
             loaded with no adapter)",
};

pub(super) const LIBCUDA_SO: Rule = Rule {
    id: "wsl.libcuda_so_not_in_cache",
    category: Category::WslSpecific,
    severity: Severity::Warning,
    trigger: "A program failed to open `libcuda.so` (\"libcuda.so: cannot open shared object file\") inside WSL, where \
              /usr/lib/wsl/lib holds libcuda.so but the loader cache lists only libcuda.so.1 from it (WSL ships \
              libcuda.so as a plain copy, not a link, so ldconfig leaves the name out) and LD_LIBRARY_PATH lacks the \
              folder; from pasted text that names WSL and the failure without the loader cache, the same (WSL ships \
              libcuda.so so on every install). Without such an error it says nothing: CUDA itself opens libcuda.so.1. \
              Programs that open that name: the loader's own error, cudarc, cuda-python's first releases, Taichi \
              (its 'Arch=[<Arch.cuda: N>] is not supported, falling back to CPU'), bitsandbytes 0.35 to 0.40 \
              ('CUDA SETUP: WARNING! libcuda.so not found!').",
    source: "microsoft/WSL#8587 (the reporter's ldconfig and ls output; LD_LIBRARY_PATH=/usr/lib/wsl/lib fixed it); \
             taichi-dev/taichi:taichi/backends/cuda/cuda_driver.cpp (Taichi's CUDA driver loader opens libcuda.so)",
};

pub(super) const LIBDXCORE: Rule = Rule {
    id: "wsl.libdxcore_not_in_container",
    category: Category::WslSpecific,
    severity: Severity::Warning,
    trigger: "The NVIDIA Container Toolkit, generating a CDI spec in its WSL mode, logs `Could not locate libdxcore.so`: \
              where it ran (a builder or node container, Docker Desktop's VM) WSL's libraries are not in the driver \
              store it searched, so the spec passes /dev/dxg and NVIDIA's programs but not libdxcore.so, without which \
              NVML inside the container fails (`Failed to initialize NVML`).",
    source: "docker/buildx#3295 (the docker-container builder on WSL gets /dev/dxg but not WSL's libraries; the \
             builder's CDI spec lacks libdxcore.so); public write-ups of nvidia-ctk's WSL mode (libdxcore.so searched in \
             the WSL driver store, Docker Desktop keeping it in /usr/lib/x86_64-linux-gnu)",
};

pub(super) const NVML_SO: Rule = Rule {
    id: "wsl.nvml_so_not_in_cache",
    category: Category::WslSpecific,
    severity: Severity::Warning,
    trigger: "A program failed to open the unversioned `libnvidia-ml.so` (\"libnvidia-ml.so: cannot open shared \
              object file\") inside WSL (WSL 2, or WSL named without its version): WSL maps in the Windows driver's \
              NVML only as libnvidia-ml.so.1, with no unversioned name, so a loader asking for `libnvidia-ml.so` (the \
              development name, which a Linux driver package's -dev link provides) finds nothing there, while nvidia-smi \
              and NVML's own users, which open libnvidia-ml.so.1, work.",
    source: "NVIDIA/nvidia-container-toolkit's WSL discovery (libnvidia-ml.so.1 among the libraries it mounts from \
             /usr/lib/wsl/drivers); rust-nvml/nvml-wrapper#51 (the maintainer's strace in WSL2: nvidia-smi opens \
             /usr/lib/wsl/drivers/…/libnvidia-ml.so.1; `Nvml::builder().lib_path(\"libnvidia-ml.so.1\")` worked)",
};

pub(super) const KERNEL_TOO_OLD: Rule = Rule {
    id: "wsl.kernel_too_old",
    category: Category::WslSpecific,
    severity: Severity::Error,
    trigger: "The WSL2 kernel release (`uname -r`, /proc/version, `wsl --version`'s `Kernel version:`) is older than \
              5.10.43.3, the first WSL kernel with which CUDA on WSL works.",
    source: "Microsoft, Enable NVIDIA CUDA on WSL (https://learn.microsoft.com/en-us/windows/ai/directml/gpu-cuda-in-wsl): \
             'WSL kernel version 5.10.43.3 or higher' (checked with `wsl cat /proc/version`), updated with `wsl --update`",
};

pub(super) const TCC: Rule = Rule {
    id: "wsl.gpu_in_tcc_mode",
    category: Category::WslSpecific,
    severity: Severity::Error,
    trigger: "WSL is in the text and the Windows side's nvidia-smi lists a GPU in the TCC driver model (the \
              `TCC/WDDM` or `Driver-Model` column, or `-q`'s `Driver Model: Current : TCC`): WSL2's GPU \
              paravirtualisation goes through WDDM, so a TCC GPU is not exposed to the guest. Also, the driver model \
              not shown, a data-centre board (Tesla, T4, A100, H100 …; not RTX, Quadro or GeForce) named in words \
              only (an issue form, a `GPU:` line, a sentence) under WSL2, with nothing showing CUDA reach it: the Windows data-centre driver runs those in TCC.",
    source: "NVIDIA CUDA on WSL User Guide (https://docs.nvidia.com/cuda/wsl-user-guide/index.html: the Windows driver's \
             WDDM model is what WSL 2 uses); NVML's nvmlDeviceSetDriverModel, which nvidia-smi's `-dm` calls (Windows \
             only, administrator, 0 = WDDM, takes effect after a reboot: \
             https://nvidia.github.io/cuda-python/cuda-bindings/latest/module/generated/cuda.bindings.nvml.device_set_driver_model.html); \
             data-centre boards in TCC: microsoft/WSL#5546, microsoft/WSL#9952, NVIDIA/cuda-python#462",
};

pub(super) const NVML_UNSUPPORTED: Rule = Rule {
    id: "wsl.nvml_query_unsupported",
    category: Category::WslSpecific,
    severity: Severity::Info,
    trigger: "Inside WSL an NVML query answered Not Supported (pynvml's NVMLError_NotSupported, NVML_ERROR_NOT_SUPPORTED, \
              a Go program's error ending `: Not Supported`) or Unknown Error (pynvml's NVMLError_Unknown), or \
              nvidia-smi printed ERR! for utilization: WSL's NVML does not implement every query (utilization, some \
              clocks and processes; the minor number, which nvml.h gives for Linux only, and whose Not Supported \
              says WSL 2 by itself), which monitoring tools must tolerate; not a broken setup.",
    source: "NVIDIA CUDA on WSL User Guide, WSL 2 Support Constraints (https://docs.nvidia.com/cuda/wsl-user-guide/index.html: \
             NVML APIs are not fully supported, so nvidia-smi may not be fully functional in WSL 2); dask/distributed#5568 \
             (NVML monitoring off under WSL: its NVML does not support all queries)",
};

pub(super) const PINNED: Rule = Rule {
    id: "wsl.pinned_memory_limited",
    category: Category::WslSpecific,
    severity: Severity::Info,
    trigger: "vLLM logged that it turned pinned memory off because it runs under WSL ('Using 'pin_memory=False' as WSL \
              is detected'), or inside WSL a pinned host allocation failed: a line naming cudaMallocHost, \
              cudaHostAlloc, cudaHostRegister, cuMemHostAlloc, PyTorch's pin_memory or ggml's '… of pinned memory' \
              that says out of memory or failed to allocate, or an out-of-memory line within 8 lines after one: \
              pinned system memory is limited on WSL. Or, inside WSL 2 (or WSL of unknown version), CUDA answered out \
              of memory where the text names no pinned allocation: where the GPU's memory was not full, the pinned \
              host allocation (a data loader's pin_memory, ggml's pinned buffers) is what failed.",
    source: "NVIDIA CUDA on WSL User Guide, Known Limitations for Linux CUDA Applications \
             (https://docs.nvidia.com/cuda/wsl-user-guide/index.html#known-limitations-for-linux-cuda-applications: pinned \
             system memory availability for applications is limited); vllm-project/vllm:vllm/platforms/interface.py@005e8184209f2036636bcfbcabe565ece9689305 \
             (is_pin_memory_available; in_wsl() is 'microsoft' in uname); \
             ggml-org/llama.cpp:ggml/src/ggml-cuda/ggml-cuda.cu (ggml_cuda_host_malloc: cudaMallocHost, 'failed to \
             allocate %.2f MiB of pinned memory', skipped when GGML_CUDA_NO_PINNED is set); ggml-org/llama.cpp#1594 \
             (pinned memory off under WSL after the OOM of ggml-org/llama.cpp#1230)",
};

pub(super) const IMAGE_SHIPS_DRIVER: Rule = Rule {
    id: "wsl.image_ships_driver_libraries",
    category: Category::WslSpecific,
    severity: Severity::Error,
    trigger: "Inside WSL 2 the NVIDIA Container Toolkit could not start a container because the image already holds \
              a driver library where the toolkit mounts the Windows driver's own (nvidia-container-cli's 'mount \
              error: file creation failed: …/libnvidia-ml.so.1: file exists', the file a libcuda.so*, \
              libnvidia-ml.so* or other libnvidia-* library): the image ships driver files, which must go.",
    source: "NVIDIA/libnvidia-container:src/utils.c (file_create: 'file creation failed: %s' with strerror, EEXIST \
             'file exists'); NVIDIA/libnvidia-container:src/dxcore.c (under WSL the driver's libraries are \
             found in the Windows driver store through dxcore, then mounted at the container's library folder); NVIDIA CUDA on WSL User \
             Guide (https://docs.nvidia.com/cuda/wsl-user-guide/index.html: the Windows driver's libraries are mapped \
             in, no driver is installed in Linux); NVIDIA/nvidia-container-toolkit#289 and NVIDIA/nvidia-docker#1699 \
             (images with libnvidia-ml.so.1 fail this way under WSL 2)",
};

pub(super) const SMI_CRASH: Rule = Rule {
    id: "wsl.nvidia_smi_crash_known_driver",
    category: Category::WslSpecific,
    severity: Severity::Warning,
    trigger: "Inside WSL 2 nvidia-smi died of a segmentation fault (after its table header, or said so in words) \
              with a Windows driver newer than the 537 branch or not shown: the known crash of WSL's nvidia-smi \
              with those Windows drivers, not a broken setup; CUDA itself may still work.",
    source: "microsoft/WSL#11277 (nvidia-smi segfaults inside WSL 2 but not in Windows, Windows driver 551.76 and \
             later), microsoft/WSL#11870 (every distribution, driver 560.70; the 537.xx drivers work), \
             microsoft/WSL#11510 (segmentation fault (core dumped), WSL 2, Ubuntu 22.04)",
};

pub(super) const SMI_NOT_ON_PATH: Rule = Rule {
    id: "wsl.nvidia_smi_not_on_path",
    category: Category::WslSpecific,
    severity: Severity::Warning,
    trigger: "Inside WSL 2 a shell found no nvidia-smi (bash's, dash's, zsh's or sudo's `command not found`, or words \
              saying `sudo nvidia-smi` or root could not find it): WSL's nvidia-smi is the Windows driver's, in \
              /usr/lib/wsl/lib, which WSL puts on the PATH of the shells it starts but which sudo's secure_path, root's \
              login shell, an SSH login and services do not have.",
    source: "NVIDIA CUDA on WSL User Guide (https://docs.nvidia.com/cuda/wsl-user-guide/index.html: the Windows \
             driver's tools and libraries are mapped in at /usr/lib/wsl/lib); sudoers(5) secure_path (the PATH sudo \
             runs every command with); microsoft/WSL#8794 (nvidia-smi not found after an SSH login, found in Windows \
             Terminal); gpustack/gpustack#1297 and PR #1493 (root does not have the folder on PATH; fixed by \
             calling /usr/lib/wsl/lib/nvidia-smi); ollama/ollama#13604 (install.sh adds /usr/lib/wsl/lib to PATH)",
};

pub(super) const BELOW_VOLTA: Rule = Rule {
    id: "wsl.gpu_arch_below_volta_limited",
    category: Category::WslSpecific,
    severity: Severity::Error,
    trigger: "Inside WSL 2 CUDA answered 801 operation not supported (as wsl.unified_memory_limited) and the GPU is \
              older than Volta: a GPU listed with compute capability below 7.0, or the text naming a Kepler, Maxwell \
              or Pascal GPU in words. RAPIDS (cuDF, RMM) and other managed-memory users do not run on those GPUs \
              under WSL 2; a GPU of compute capability 7.0 or newer, or native Linux, does.",
    source: "rapidsai/cudf#9753 (RAPIDS maintainers: Pascal GPUs cannot run RAPIDS on WSL2, later architectures are \
             not affected; closed won't-fix with the advice to use a GPU of compute capability 7.0 or higher, or \
             RAPIDS 21.08); rapidsai/cudf#13112 (maintainer: WSL2 support requires compute capability 7.0 or higher); \
             RAPIDS notice RSN 34 (https://docs.rapids.ai/notices/rsn0034/: Pascal dropped from v24.02); NVIDIA CUDA \
             on WSL User Guide, Known Limitations (managed memory limited under WSL 2)",
};

/// NVIDIA's guide, the section that lists what CUDA cannot do under WSL 2.
const CONSTRAINTS: &str = "NVIDIA CUDA on WSL User Guide, WSL 2 Support Constraints: Known Limitations for Linux CUDA \
    Applications and Features Not Yet Supported \
    (https://docs.nvidia.com/cuda/wsl-user-guide/index.html#known-limitations-for-linux-cuda-applications; \
    https://docs.nvidia.com/cuda/archive/11.8.0/pdf/CUDA_on_WSL_User_Guide.pdf sections 4.1 and 4.2)";

pub(super) const GRAPHICS_INTEROP: Rule = Rule {
    id: "wsl.graphics_interop_unsupported",
    category: Category::WslSpecific,
    severity: Severity::Error,
    trigger: "Inside WSL a CUDA graphics-interop call failed: a line naming cudaGraphicsGL*, cudaGraphicsEGL*, \
              cudaGraphicsVDPAU*, cudaGLSetGLDevice, cudaGLGetDevices or the driver's cuGraphicsGL*/EGL*/VDPAU* that \
              says it failed (or the next line does), or CUDA's operating-system error (304) a few lines after a line \
              naming OpenGL, EGL or Vulkan: CUDA interop with OpenGL, EGL or Vulkan is not supported under WSL 2, \
              whatever the driver.",
    source: "NVIDIA CUDA on WSL User Guide, WSL 2 Support Constraints (https://docs.nvidia.com/cuda/wsl-user-guide/index.html: \
             CUDA interop with graphics APIs is among the features not supported on WSL 2); CUDA Runtime API modules \
             OpenGL/EGL/VDPAU Interoperability (https://docs.nvidia.com/cuda/cuda-runtime-api/modules.html); \
             OutofAi/cudacanvas#2 (maintainer: WSL2 does not support CUDA interoperability)",
};

pub(super) const NOT_SUPPORTED: Rule = Rule {
    id: "wsl.unified_memory_limited",
    category: Category::WslSpecific,
    severity: Severity::Error,
    trigger: "Inside WSL 2 CUDA answered 801 operation not supported (cudaErrorNotSupported, CUDA_ERROR_NOT_SUPPORTED, \
              PyTorch's 'CUDA error: operation not supported'): WSL 2 has no full managed (unified) memory, no \
              concurrent CPU/GPU access to it and no oversubscription, so the managed-memory paths a library takes on \
              native Linux (prefetch, memory advice, managed pools) answer not supported; or a managed-memory \
              prefetch answered invalid device (cudaMemPrefetchAsync's answer on a GPU without concurrent managed \
              access), or CUDA called device 0 an invalid ordinal where the text names no other GPU index and no \
              CUDA_VISIBLE_DEVICES (device 0 exists wherever a GPU is seen, so what the call asked of it was \
              refused). On a GPU known to be older than Volta, wsl.gpu_arch_below_volta_limited says it instead.",
    source: "NVIDIA CUDA on WSL User Guide, Known Limitations for Linux CUDA Applications \
             (https://docs.nvidia.com/cuda/wsl-user-guide/index.html#known-limitations-for-linux-cuda-applications: \
             Unified Memory, full managed memory support is not available and concurrent CPU/GPU access is not \
             supported; applications are expected to check the CUDA queries); error 801: \
             NVIDIA/cuda-python:cuda_core/cuda/core/experimental/_utils/runtime_cuda_error_explanations.py@16c86bd247d19f48afbfe5e3cad20599ca1601cd \
             (entry 801); rapidsai/cudf#11382 (801 under WSL 2 from cuDF); glotzerlab/hoomd-blue#2098 and #2099 \
             (hoomd.device.GPU(gpu_id=0) answering invalid device ordinal under WSL 2; fixed by checking for full \
             unified memory)",
};

pub(super) const INSIDER: Rule = Rule {
    id: "wsl.windows_build_gpu_regression",
    category: Category::WslSpecific,
    severity: Severity::Error,
    trigger: "The text names a Windows build of the Insider preview channels only (20000 to 21999) and CUDA or NVML \
              reached no usable GPU (all devices busy or unavailable, no driver, no device, NVML cannot communicate; \
              `/dev/dxg` said missing, or the person saying WSL sees no GPU): \
              GPU compute in WSL 2 was a preview of those builds, and several of them broke it for everyone who \
              upgraded (21327, 21337, 21354: /dev/dxg missing), each fixed in a later build.",
    source: "microsoft/WSL#6617 (the WSL team: \"GPU Compute support is unavailable in preview build 21327\", /dev/dxg \
             not visible; fixed in a later Insider build), microsoft/WSL#6773 (the same for 21354) and #6809 (21359 \
             fixed it); microsoft/WSL#829 (GPU compute first shipped to the Insider Dev channel, June 2020)",
};

pub(super) const TOOLKIT_PREDATES_DRIVER: Rule = Rule {
    id: "wsl.container_toolkit_predates_driver",
    category: Category::WslSpecific,
    severity: Severity::Error,
    trigger: "Under WSL 2 (or where the text shows neither WSL nor a Linux host's kernel module), CUDA's \
              initialization answered CUDA_ERROR_NOT_FOUND (500, `named symbol not found`): \
              TensorFlow's `failed call to cuInit: CUDA_ERROR_NOT_FOUND`, PyTorch's `Unexpected error from \
              cudaGetDeviceCount() … Error 500`, ollama's `cuda driver library init failure: 500`. Windows drivers \
              from 555 add libnvdxgdmal.so.1, which a container gets only from NVIDIA Container Toolkit 1.14.4 / \
              1.15.0 or newer (Docker Desktop 4.31 or newer).",
    source: "NVIDIA/nvidia-container-toolkit#520 (NVIDIA's cliffwoolley: drivers 555.xx and newer add \
             libnvdxgdmal.so.1, which must be mapped into the container; without it CUDA initialization returns error \
             500 \"named symbol not found\" (CUDA_ERROR_NOT_FOUND); fixed in nvidia-container-toolkit 1.14.4 and \
             1.15.0, and for Docker Desktop in 4.31.0); tensorflow/tensorflow#68711 (TensorFlow's cuInit line in \
             Docker Desktop's container under WSL 2)",
};

pub(super) const TOOLKIT_RELEASE_BROKEN: Rule = Rule {
    id: "wsl.container_toolkit_release_broken",
    category: Category::WslSpecific,
    severity: Severity::Error,
    trigger: "Under WSL 2, the NVIDIA Container Toolkit's libnvidia-container (`nvidia-container-cli --version`, or \
              `nvidia-ctk --version`: the packages are released together) is 1.12.1, the release whose \
              nvidia-container-cli segfaults on WSL 2 (containers given the GPU hang or fail to start); 1.13.0 fixed \
              it.",
    source: "NVIDIA/nvidia-container-toolkit:CHANGELOG.md@d34b3046 (v1.13.0-rc.2: `[libnvidia-container] Fix segfault \
             on WSL2 systems`; 1.12.1 is the only release between v1.12.0 and v1.13.0); \
             NVIDIA/nvidia-container-toolkit#53 (hangs from 1.12.1, 1.12.0 works)",
};

/// libnvidia-container releases that crash on WSL 2 ([`TOOLKIT_RELEASE_BROKEN`]), with the release that fixed them.
const BROKEN_ON_WSL: [(&str, &str); 1] = [("1.12.1", "1.13.0")];

/// A container toolkit release known to crash on WSL 2 ([`TOOLKIT_RELEASE_BROKEN`]).
fn toolkit_release_broken(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(toolkit) = cx.s.containers.value().map(|c| &c.toolkit) else { return };
    let Some(version) = toolkit.version() else { return };
    let Some((_, fixed)) = BROKEN_ON_WSL.iter().find(|(broken, _)| *broken == version) else { return };
    out.push(TOOLKIT_RELEASE_BROKEN.finding(
        format!("NVIDIA Container Toolkit {version} crashes on WSL 2"),
        format!(
            "libnvidia-container {version} segfaults in nvidia-container-cli on WSL 2, so Docker hangs or fails \
             starting a container that is given the GPU; {fixed} fixed it (the toolkit's changelog: `Fix segfault \
             on WSL2 systems`)."
        ),
        vec![format!("nvidia-container-cli / nvidia-ctk {version}"), "the text shows WSL".to_owned()],
        Some(format!(
            "Inside the WSL distribution: `sudo apt-get update && sudo apt-get install --only-upgrade \
             nvidia-container-toolkit libnvidia-container1 libnvidia-container-tools` ({fixed} or newer; or pin \
             1.12.0), then `sudo systemctl restart docker` (or restart Docker's service)."
        )),
    ));
}

pub(super) const RENDER_ADAPTER: Rule = Rule {
    id: "wsl.gpu_pv_adapter_in_lspci",
    category: Category::WslSpecific,
    severity: Severity::Info,
    trigger: "lspci inside WSL 2 shows Microsoft's virtual render device (`3D controller: Microsoft Corporation Device \
              008e`, `Basic Render Driver`, `[1414:008e]`): WSL 2 projects each GPU onto the guest's virtual PCI bus as \
              that device, which the dxgkrnl driver binds, and the NVIDIA card itself is not on the bus, so `lspci | \
              grep -i nvidia` finds nothing on a working setup; a script that checks the GPU that way must ask \
              nvidia-smi.",
    source: "microsoft/WSL2-Linux-Kernel:drivers/hv/dxgkrnl/dxgmodule.c@90bdbfc4a2e4b28c3e214247d09a857bf409ccb0 \
             (PCI_VENDOR_ID_MICROSOFT 0x1414, PCI_DEVICE_ID_VIRTUAL_RENDER 0x008E, the device dxg_pci_probe_device \
             takes for each virtual GPU); NVIDIA CUDA on WSL User Guide (https://docs.nvidia.com/cuda/wsl-user-guide/\
             index.html: the Windows driver's nvidia-smi is mapped in at /usr/lib/wsl/lib)",
};

pub(super) const VMM_REFUSED: Rule = Rule {
    id: "wsl.vmm_allocations_refused",
    category: Category::WslSpecific,
    severity: Severity::Error,
    trigger: "Inside WSL 2 CUDA answered invalid device (`CUDA_ERROR_INVALID_DEVICE`, `cudaErrorInvalidDevice`) on a \
              line naming a virtual-memory-management call or allocator (cuMemCreate, cuMemAddressReserve, cuMemMap, \
              cuMemSetAccess, a VirtualMemoryResource, ggml's VMM pool) or up to three lines after one: the \
              allocation path, not the device index, is what WSL 2's GPU paravirtualization refused; the plain \
              allocator (cudaMalloc) works.",
    source: "NVIDIA/cuda-python#1127 (NVIDIA's rparolin, merged: under WSL cuda.core's VirtualMemoryResource \
             allocation requests fail with CUDA_ERROR_INVALID_DEVICE, pointing to the WSL guide's known limitations; \
             the tests skip on WSL); ggml-org/llama.cpp:ggml/CMakeLists.txt (option GGML_CUDA_NO_VMM, \"do not try to \
             use CUDA VMM\"); withcatai/node-llama-cpp#580 (cuMemAddressReserve failing in ggml's VMM pool under \
             WDDM, GGML_CUDA_NO_VMM the workaround)",
};

pub(super) const RULES: &[Rule] = &[
    VMM_REFUSED,
    RENDER_ADAPTER,
    TOOLKIT_RELEASE_BROKEN,
    TOOLKIT_PREDATES_DRIVER,
    INSIDER,
    LINUX_DRIVER,
    NOT_ON_PATH,
    WSL1,
    NO_GPU,
    LIBCUDA_SO,
    NVML_SO,
    LIBDXCORE,
    KERNEL_TOO_OLD,
    TCC,
    NVML_UNSUPPORTED,
    PINNED,
    GRAPHICS_INTEROP,
    NOT_SUPPORTED,
    IMAGE_SHIPS_DRIVER,
    SMI_CRASH,
    SMI_NOT_ON_PATH,
    BELOW_VOLTA,
];

/// The first WSL kernel CUDA on WSL works with ([`KERNEL_TOO_OLD`]'s source).
const MIN_KERNEL: [u32; 4] = [5, 10, 43, 3];

/// vLLM's warning that it turned pinned memory off under WSL (`assets/compat/errors.toml`).
const PIN_MEMORY_OFF: &str = "vllm.pin_memory_off_wsl";

/// An NVML query the driver does not support, nvidia-smi's `ERR!` for utilization, and pynvml's `NVMLError_Unknown`
/// (WSL's NVML answers Unknown for some queries it lacks; `assets/compat/errors.toml`).
const NVML_NOT_SUPPORTED: [&str; 3] = ["nvml.not_supported", "nvidia_smi.utilization_err", "nvml.query_unknown_error"];

/// Messages that say a program reached no NVIDIA driver or device (`assets/compat/errors.toml`).
const NO_DEVICE_MESSAGES: [&str; 5] =
    ["nvml.cannot_communicate", "cuda.no_device", "torch.no_driver", "tf.cuinit_failed", "nvml.blocked_by_os"];

/// How each program stops pinning host memory: ggml's variable (ggml_cuda_host_malloc), PyTorch's DataLoader
/// argument; vLLM turns it off under WSL itself.
const STOP_PINNING: &str = "llama.cpp/ggml: export GGML_CUDA_NO_PINNED=1; PyTorch: DataLoader(..., pin_memory=False) \
    and no tensor.pin_memory(); vLLM does it by itself; or run on native Linux.";

/// CUDA's out of memory (`assets/compat/errors.toml`).
const OUT_OF_MEMORY: &str = "cuda.out_of_memory";

/// CUDA's `all CUDA-capable devices are busy or unavailable` (`assets/compat/errors.toml`).
const DEVICES_UNAVAILABLE: &str = "cuda.devices_unavailable";

/// The NVIDIA Container Toolkit's WSL-mode warning that it found no libdxcore.so (`assets/compat/errors.toml`).
const LIBDXCORE_NOT_FOUND: &str = "nvidia_ctk.libdxcore_not_found";

/// The toolkit's CDI spec made without WSL's libdxcore.so ([`LIBDXCORE`]): the warning names WSL by itself, since
/// only the toolkit's WSL mode looks for that library.
fn libdxcore_not_found(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(m) = cx.s.messages.iter().find(|m| m.id == LIBDXCORE_NOT_FOUND) else { return };
    out.push(LIBDXCORE.finding(
        "The container's CDI spec was made without WSL's libdxcore.so",
        "The NVIDIA Container Toolkit's WSL mode writes a spec that passes /dev/dxg and the Windows driver's libraries \
         from WSL's driver store; where it ran, libdxcore.so (WSL's GPU interface library, in /usr/lib/wsl/lib) was \
         not found, so containers get nvidia-smi and libnvidia-ml but not the library they need to reach the GPU, and \
         NVML fails there (\"Failed to initialize NVML\").",
        vec![format!("pasted: {}", m.line)],
        Some(
            "Give the container WSL's libraries: generate the CDI spec in the WSL distribution itself, where \
             /usr/lib/wsl/lib holds libdxcore.so (`sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`), not \
             in a builder or node container; or add a mount of /usr/lib/wsl/lib (or of the libdxcore.so the VM has, \
             e.g. /usr/lib/x86_64-linux-gnu/libdxcore.so under Docker Desktop) to the spec's containerEdits; for a \
             BuildKit builder use the docker driver (`docker buildx use default`), which runs on the daemon that has \
             them."
                .to_owned(),
        ),
    ));
}

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    // vLLM's warning says WSL itself (it checks uname for "microsoft").
    pinned_memory(cx, out);
    libdxcore_not_found(cx, out);
    // So does nvidia-container-cli's, found where Docker Desktop runs containers in its own WSL 2 VM.
    let no_adapters = no_adapters(cx);
    if let Some(line) = &no_adapters
        && cx.s.platform.wsl.as_ref().is_none_or(|w| w.version != 1)
    {
        out.push(not_exposed(vec![
            format!("pasted: {line}"),
            "nvidia-container-cli opened WSL 2's GPU interface (dxcore) and it lists no GPU adapter".to_owned(),
        ]));
    }
    let Some(wsl) = cx.s.platform.wsl.as_ref() else {
        // Error 500 at CUDA's initialization where the text does not say where the program ran: the container
        // case of WSL 2 (Docker Desktop's included), unless a Linux host's driver is shown: its kernel module, its
        // NVRM lines, or a Linux driver's three-part version (Windows drivers, which WSL's nvidia-smi shows, have two).
        let linux_host = !matches!(cx.s.kernel_module, Probed::Unknown { .. })
            || cx.driver.version.as_ref().is_some_and(|v| v.parts().len() >= 3)
            || cx.s.messages.iter().any(|m| m.id.starts_with("nvrm.") || m.id.starts_with("kernel."));
        if !linux_host {
            toolkit_predates_driver(cx, out);
        }
        return;
    };
    toolkit_release_broken(cx, out);
    let distro = wsl.distro.as_deref().unwrap_or("<distro>");
    if wsl.version == 1 {
        out.push(
            WSL1.finding(
                format!("{distro} runs under WSL1, which cannot use the GPU"),
                "Only WSL2 (a real Linux kernel with GPU paravirtualization) exposes the NVIDIA GPU to Linux programs. \
             Converting keeps the distribution's files; `wsl -l -v` in PowerShell lists the distributions and their \
             versions.",
                vec![format!("WSL version 1 ({distro})")],
                None,
            )
            .with_plan(fix::change(
                None,
                format!("{distro} runs under WSL2"),
                vec![match wsl.distro.as_deref() {
                    Some(d) => {
                        Change::Windows { argv: vec!["wsl".into(), "--set-version".into(), d.into(), "2".into()] }
                    }
                    None => Change::Manual { text: "In PowerShell on Windows: wsl --set-version <distro> 2".into() },
                }],
            )),
        );
        return;
    }
    let linux = linux_driver(cx, wsl, out);
    not_on_loader_path(cx, wsl, out);
    libcuda_so(cx, wsl, out);
    nvml_so(cx, wsl, out);
    // An old kernel is one cause among those the no-GPU finding lists (a Windows build can break GPU
    // access on any kernel), so both are said.
    kernel_too_old(wsl, out);
    tcc(cx, wsl, out);
    nvml_unsupported(cx, out);
    limits(cx, wsl, out);
    vmm_refused(wsl, out);
    image_ships_driver(cx, out);
    let toolkit = toolkit_predates_driver(cx, out);
    smi_crash(cx, wsl, out);
    smi_not_on_path(wsl, out);
    render_adapter(wsl, out);
    insider_build(cx, wsl, out);
    if !linux && no_adapters.is_none() && !toolkit {
        gpu_not_exposed(cx, wsl, out);
    }
}

/// CUDA's initialization answering CUDA_ERROR_NOT_FOUND (500), as each program prints it: the line, if any.
fn init_symbol_not_found<'a>(cx: &Ctx<'a>) -> Option<&'a str> {
    cx.s.messages.iter().find_map(|m| {
        let found = match m.id.as_str() {
            "tf.cuinit_failed" => m.values.get("error").is_some_and(|e| e == "CUDA_ERROR_NOT_FOUND"),
            "torch.device_count_error" => m.values.get("code").is_some_and(|c| c == "500"),
            "cuda.init_symbol_not_found" => true,
            _ => false,
        };
        found.then_some(m.line.as_str())
    })
}

/// [`TOOLKIT_PREDATES_DRIVER`], inside WSL 2 (or WSL of an unknown version): true when it was said.
fn toolkit_predates_driver(cx: &Ctx<'_>, out: &mut Vec<Finding>) -> bool {
    let Some(line) = init_symbol_not_found(cx) else { return false };
    let place = if cx.s.platform.wsl.is_some() {
        "WSL".to_owned()
    } else {
        "where it ran is not shown: CUDA's initialization answers 500 in a container under WSL 2 (Docker Desktop \
         on Windows runs its containers there), not on a Linux host's own driver"
            .to_owned()
    };
    let mut evidence = vec![place, format!("pasted: {line}")];
    if let Some(d) = cx.driver.version.as_ref() {
        evidence.push(format!("Windows NVIDIA driver {d}"));
    }
    out.push(TOOLKIT_PREDATES_DRIVER.finding(
        "The container lacks a library of the Windows driver: its container toolkit is older than the driver",
        "Under WSL 2 a container gets the Windows driver's libraries from the NVIDIA Container Toolkit (Docker \
         Desktop brings its own). Windows drivers from 555 added libnvdxgdmal.so.1, which toolkits before 1.14.4 \
         (Docker Desktop before 4.31) do not map in, and then CUDA's initialization answers 500, `named symbol not \
         found`, in every container, whatever its CUDA.",
        evidence,
        Some(TOOLKIT_FIX.to_owned()),
    ));
    true
}

/// The fix of [`TOOLKIT_PREDATES_DRIVER`] (NVIDIA/nvidia-container-toolkit#520), also the words of the 500 line's
/// own finding where the text does not show WSL.
pub(super) const TOOLKIT_FIX: &str = "Under WSL 2, update the container toolkit: Docker Desktop to 4.31 or newer; or, \
    where Docker runs inside the WSL distribution, `sudo apt-get install --only-upgrade nvidia-container-toolkit` \
    (1.14.4, 1.15.0 or newer), then `sudo systemctl restart docker`. Until then a Windows driver before 555 works.";

/// An Insider-only Windows build beside CUDA or NVML reaching no usable GPU ([`INSIDER`]).
fn insider_build(cx: &Ctx<'_>, wsl: &WslFacts, out: &mut Vec<Finding>) {
    let Some(build) = &wsl.insider_build else { return };
    let Some(failed) =
        cx.s.messages
            .iter()
            .find(|m| m.id == DEVICES_UNAVAILABLE || NO_DEVICE_MESSAGES.contains(&m.id.as_str()))
            .map(|m| m.line.as_str())
            .or(wsl.dxg_missing.as_deref())
            .or(cx.s.stated_no_gpu.as_deref())
    else {
        return;
    };
    out.push(
        INSIDER.finding(
            "This Windows Insider build may be one that broke GPU compute in WSL 2",
            "Builds 20000 to 21999 came only through the Windows Insider preview channels, where GPU compute in WSL 2 \
         was itself a preview. Several of those builds broke it for every machine that upgraded (21327, 21337 and \
         21354: /dev/dxg missing, CUDA finding no device, or every device busy or unavailable), and the next build \
         fixed it. Nothing in the Linux distribution or the driver repairs that.",
            vec![format!("pasted: {build}"), format!("pasted: {failed}")],
            Some(
                "Update Windows to the newest build of its channel (Settings > Windows Update), or leave the Insider \
             program for a release build (Windows 11, or Windows 10 21H2 / 19044 or later, which have GPU compute in \
             WSL 2); where an update broke it, going back to the previous build works too. Then `wsl --shutdown` \
             and check `ls /dev/dxg` and `nvidia-smi` inside WSL."
                    .to_owned(),
            ),
        ),
    );
}

/// nvidia-container-cli's answer when WSL's dxcore loaded but lists no GPU adapter
/// (NVIDIA/libnvidia-container:src/nvc.c@f35f091c6261496cef48f408dffa84c68e49e199, nvc_init: `dxcore initialization
/// succeeded but no adapters were found`, then the error `WSL environment detected but no adapters were found`).
fn no_adapters(cx: &Ctx<'_>) -> Option<String> {
    cx.s.messages
        .iter()
        .find(|m| {
            m.id == "container.cli_init_failed"
                && m.values.get("reason").is_some_and(|r| r.contains("WSL environment detected but no adapters"))
        })
        .map(|m| m.line.clone())
}

/// The leading numbers of a kernel release: `5.10.16.3-microsoft-standard-WSL2` → [5, 10, 16, 3].
fn release_numbers(release: &str) -> Vec<u32> {
    release
        .split(|c: char| !c.is_ascii_digit() && c != '.')
        .next()
        .unwrap_or("")
        .split('.')
        .map_while(|p| p.parse().ok())
        .take(4)
        .collect()
}

/// The kernel finding, when the WSL2 kernel is older than [`MIN_KERNEL`].
fn kernel_too_old(wsl: &WslFacts, out: &mut Vec<Finding>) {
    let Some(release) = wsl.kernel_release.as_deref() else { return };
    let numbers = release_numbers(release);
    // A WSL1 release (`4.4.0-19041-Microsoft`) is WSL1's finding, not this one.
    if numbers.len() < 2 || wsl.version == 1 || numbers.as_slice() >= MIN_KERNEL.as_slice() {
        return;
    }
    out.push(
        KERNEL_TOO_OLD
            .finding(
                format!("The WSL kernel {release} is older than 5.10.43.3, which CUDA on WSL needs"),
                "WSL2 hands the GPU to Linux through its kernel's dxgkrnl driver; kernels before 5.10.43.3 lack what \
                 CUDA on WSL needs, so programs find no driver or device (PyTorch 'Found no NVIDIA driver', \
                 nvidia-smi failing). The kernel comes with WSL, not with the distribution: updating WSL replaces it.",
                vec![format!("WSL kernel release: {release}")],
                None,
            )
            .with_plan(fix::change(
                None,
                "WSL runs kernel 5.10.43.3 or later",
                vec![
                    Change::Windows { argv: vec!["wsl".into(), "--update".into()] },
                    Change::Windows { argv: vec!["wsl".into(), "--shutdown".into()] },
                    Change::Manual {
                        text: "Then, in the distribution: uname -r — the release must be 5.10.43.3 or later.".into(),
                    },
                ],
            )),
    );
}

/// Data-centre boards, which the Windows data-centre driver runs in TCC (WDDM needs a GRID/vGPU driver, and
/// the H100 has no WDDM): a name word (`Tesla`) or a model (`T4`, `A100`), never beside RTX, Quadro or
/// GeForce. Sources as [`TCC_DEFAULT`]'s.
fn data_centre_board(name: &str) -> bool {
    const MODELS: [&str; 23] = [
        "k80", "m40", "m60", "p4", "p40", "p100", "v100", "t4", "a2", "a10", "a16", "a30", "a40", "a100", "a800", "l4",
        "l40", "l40s", "h100", "h200", "h800", "b200", "b100",
    ];
    let lower = name.to_ascii_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let branded = words.iter().any(|w| matches!(*w, "rtx" | "quadro" | "geforce" | "gtx" | "titan"));
    !branded && (words.contains(&"tesla") || words.iter().any(|w| MODELS.contains(w)))
}

/// Why a data-centre board is taken to be in TCC on Windows.
const TCC_DEFAULT: &str = "NVIDIA CUDA on WSL User Guide (acceleration 'will not be available on Quadro GPUs in TCC \
    mode or Tesla GPUs'); microsoft/WSL#5546 (Tesla boards run the TCC driver, no /dev/dxg), microsoft/WSL#9952 (H100 \
    PCIe: TCC only), NVIDIA/cuda-python#462 (data-centre drivers do not offer WDDM out of the box; the vGPU driver \
    does)";

/// A data-centre board the text names in words only (an issue form's `GPU:`, a sentence), under WSL2, with nothing showing
/// CUDA reach it there: probably in TCC, the Windows data-centre driver's model.
fn board_in_tcc_by_default(cx: &Ctx<'_>) -> Option<String> {
    let gpus = cx.raw_gpus()?;
    // An issue form's answer, a `GPU:` line or a sentence ("two Tesla P40 GPUs"): no program in WSL lists it.
    let in_words = match &cx.s.gpus {
        gpu_doctor_model::Probed::Found { source, .. } => gpu_doctor_model::gpus_only_in_words(source),
        _ => false,
    };
    let reached = cx
        .envs()
        .iter()
        .filter_map(|e| e.deep_torch())
        .any(|t| t.cuda_available == Some(true) || t.device_count.is_some_and(|n| n > 0));
    if !in_words || reached {
        return None;
    }
    gpus.iter().filter_map(|g| g.name.as_deref()).find(|n| data_centre_board(n)).map(str::to_owned)
}

/// The finding for a data-centre `board` named under WSL2 without its driver model shown.
fn tcc_by_default(board: &str) -> Finding {
    TCC.finding(
        format!("The {board} is a data-centre board, which Windows runs in TCC mode: WSL cannot use it"),
        format!(
            "WSL2 reaches the GPU through the Windows display driver model (WDDM). NVIDIA's data-centre driver runs \
             Tesla-class boards in TCC (Tesla Compute Cluster), which WSL does not expose, so nvidia-smi and CUDA in \
             WSL find no GPU. `nvidia-smi` in Windows PowerShell shows the model in its TCC/WDDM column. The sources: \
             {TCC_DEFAULT}."
        ),
        vec![format!("GPU named in the text: {board} (no GPU listed from inside WSL)")],
        None,
    )
    .with_plan(fix::change(
        None,
        "the GPU runs in a driver model WSL exposes",
        vec![
            Change::Manual {
                text: "In Windows PowerShell: nvidia-smi — if the TCC/WDDM column says TCC, switch it in an \
                       Administrator PowerShell with nvidia-smi -i 0 -dm 0 (0 = WDDM; data-centre boards need NVIDIA's \
                       GRID/vGPU driver for WDDM, and drivers that offer MCDM take -dm 2), then restart Windows"
                    .into(),
            },
            Change::Windows { argv: vec!["wsl".into(), "--shutdown".into()] },
        ],
    ))
}

fn tcc(cx: &Ctx<'_>, wsl: &WslFacts, out: &mut Vec<Finding>) {
    if wsl.version == 1 {
        return;
    }
    if wsl.tcc_gpus.is_empty() {
        if let Some(board) = board_in_tcc_by_default(cx) {
            out.push(tcc_by_default(&board));
        }
        return;
    }
    let mut evidence: Vec<String> =
        wsl.tcc_gpus.iter().map(|g| format!("Windows nvidia-smi: GPU {g} in TCC mode")).collect();
    if cx.gpus.is_empty() {
        evidence.push("no GPU listed inside WSL".to_owned());
    }
    let index = wsl.tcc_gpus.first().and_then(|g| g.split_whitespace().next()).unwrap_or("<index>");
    out.push(
        TCC.finding(
            "A GPU runs in TCC mode on Windows, which WSL cannot use",
            "WSL2 reaches the GPU through the Windows display driver model (WDDM); a GPU switched to TCC (Tesla Compute \
             Cluster, the default on many data-centre and workstation boards) is not handed to WSL, and a host that \
             mixes TCC and WDDM GPUs may expose none (nvidia-smi in WSL: 'No devices were found').",
            evidence,
            None,
        )
        .with_plan(fix::change(
            None,
            "the GPU runs in WDDM mode, which WSL exposes",
            vec![
                Change::Manual {
                    text: format!(
                        "In an Administrator PowerShell on Windows: nvidia-smi -i {index} -dm 0 (0 = WDDM), then \
                         restart Windows"
                    ),
                },
                Change::Windows { argv: vec!["wsl".into(), "--shutdown".into()] },
            ],
        )),
    );
}

fn nvml_unsupported(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(said) = cx.s.messages.iter().find(|m| NVML_NOT_SUPPORTED.contains(&m.id.as_str())) else { return };
    out.push(NVML_UNSUPPORTED.finding(
        "WSL's NVML does not support this query",
        "Under WSL, NVML (what nvidia-smi, pynvml and monitoring tools call) comes with the Windows driver and does not \
         implement every query: GPU utilization, some clocks and the process list answer Not Supported or N/A, and \
         the minor number (Linux's /dev/nvidiaN, which WSL 2 does not have) Not Supported. CUDA itself is not \
         affected; a tool that stops on this error must skip the query under WSL (or have a release that knows WSL).",
        vec!["WSL".to_owned(), format!("pasted: {}", said.line)],
        Some(
            "Nothing to repair in the setup: catch pynvml.NVMLError_NotSupported around the query (or turn the tool's \
             NVML monitoring off under WSL), or run the tool on native Linux for those metrics."
                .to_owned(),
        ),
    ));
}

fn pinned_memory(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(said) = cx.s.messages.iter().find(|m| m.id == PIN_MEMORY_OFF) else { return };
    out.push(PINNED.finding(
        "vLLM turned pinned memory off because it runs under WSL",
        "NVIDIA documents that pinned system memory is limited under WSL 2, so vLLM does not pin its CPU buffers there: \
         copies between CPU and GPU (swapping, CPU offload) are slower than on native Linux. Nothing is broken.",
        vec![format!("pasted: {}", said.line)],
        Some(
            "Nothing to repair: this is a WSL limit. For full speed run vLLM on native Linux (dual boot or a Linux \
             host); under WSL keep the model and KV cache in GPU memory (no --cpu-offload-gb, --swap-space 0)."
                .to_owned(),
        ),
    ));
}

/// The documented limits of CUDA under WSL 2 that a failed call shows: graphics interop, a pinned host
/// allocation, an operation not supported ([`CONSTRAINTS`]); the last, on a GPU older than Volta, is
/// that GPU's limit there ([`BELOW_VOLTA`]).
fn limits(cx: &Ctx<'_>, wsl: &WslFacts, out: &mut Vec<Finding>) {
    if let Some(line) = &wsl.graphics_interop_failure {
        out.push(GRAPHICS_INTEROP.finding(
            "CUDA graphics interop (OpenGL/EGL/Vulkan) does not work under WSL 2",
            format!(
                "The program shares a buffer or texture between CUDA and a graphics API, which WSL 2 does not support: \
                 the NVIDIA driver inside WSL has no OpenGL, EGL or Vulkan of its own, so the registration answers \
                 'OS call failed or operation not supported on this OS' (cudaErrorOperatingSystem) or another error \
                 on every GPU and driver. {CONSTRAINTS}."
            ),
            vec!["WSL".to_owned(), format!("pasted: {line}")],
            Some(
                "Nothing in the setup can enable it under WSL 2: copy the frames through host memory instead of \
                 registering them (tensor.cpu() / cudaMemcpy into a plain OpenGL texture upload), or run the program on \
                 native Windows or native Linux, where cudaGraphicsGLRegisterImage/Buffer work."
                    .to_owned(),
            ),
        ));
    }
    if let Some(line) = &wsl.pinned_alloc_failure
        && !out.iter().any(|f| f.id == PINNED.id)
    {
        out.push(PINNED.finding(
            "A pinned host allocation failed: pinned memory is limited under WSL 2",
            format!(
                "The program asked CUDA for page-locked (pinned) host memory (cudaMallocHost/cudaHostAlloc, PyTorch's \
                 pin_memory, ggml's pinned buffers) and got out of memory: under WSL 2 the pinned system memory an \
                 application may take is limited, well below the RAM the machine has. {CONSTRAINTS}."
            ),
            vec!["WSL".to_owned(), format!("pasted: {line}")],
            Some(format!("Stop pinning host memory under WSL: {STOP_PINNING}")),
        ));
    }
    if wsl.version != 1
        && !out.iter().any(|f| f.id == PINNED.id)
        && let Some(oom) = cx.s.messages.iter().find(|m| m.id == OUT_OF_MEMORY)
    {
        out.push(PINNED.finding(
            "Out of memory under WSL 2: if the GPU's memory was not full, pinned host memory ran out",
            format!(
                "CUDA answered out of memory inside WSL. Where the GPU still had memory free (`nvidia-smi` during the \
                 run), the allocation that failed was page-locked (pinned) host memory, which WSL 2 limits well below \
                 the RAM the machine has: PyTorch's DataLoader pins its batches with pin_memory=True, and llama.cpp \
                 (ggml) and vLLM pin their host buffers. {CONSTRAINTS}."
            ),
            vec!["WSL".to_owned(), format!("pasted: {}", oom.line)],
            Some(format!(
                "Watch `nvidia-smi` during the run: with GPU memory left, stop pinning host memory under WSL: \
                     {STOP_PINNING} With the GPU's memory full, it is a real out of memory: a smaller batch or model."
            )),
        ));
    }
    if wsl.version != 1
        && let Some(line) = &wsl.not_supported_error
    {
        if let Some(older) = below_volta(cx, wsl) {
            out.push(below_volta_finding(&older, line));
            return;
        }
        out.push(NOT_SUPPORTED.finding(
            if line.contains("nvalid device") && line.to_lowercase().contains("prefetch") {
                "CUDA refused a managed-memory prefetch (invalid device) under WSL 2: managed memory is limited there"
            } else if line.contains("nvalid device") || line.contains("INVALID_DEVICE") {
                "CUDA called device 0 invalid under WSL 2: a managed-memory call was refused, not the index"
            } else {
                "CUDA answered 'operation not supported' (801) under WSL 2: managed memory is limited there"
            },
            format!(
                "Under WSL 2 CUDA has no full managed (unified) memory: no concurrent CPU/GPU access, no \
                 oversubscription, so managed-memory prefetch, advice and managed pools answer 801 where native Linux \
                 runs them; other features WSL 2 lacks (graphics interop, some IPC) answer the same. {CONSTRAINTS}."
            ),
            vec!["WSL 2".to_owned(), format!("pasted: {line}")],
            Some(
                "Turn managed memory off in the library: RAPIDS/RMM: rmm.reinitialize(managed_memory=False) (and no \
                 managed pool); numba: cuda.device_array instead of cuda.managed_array. RAPIDS (cuDF, RMM) needs a \
                 GPU of compute capability 7.0 (Volta) or newer from v24.02 on (RAPIDS notice RSN 34, \
                 https://docs.rapids.ai/notices/rsn0034/), and its maintainers give Pascal as unsupported under WSL 2. \
                 Where the program needs managed memory, run it on native Linux."
                    .to_owned(),
            ),
        ));
    }
}

/// CUDA's invalid device answered to a virtual-memory-management allocation under WSL 2 ([`VMM_REFUSED`]).
fn vmm_refused(wsl: &WslFacts, out: &mut Vec<Finding>) {
    if wsl.version != 1
        && let Some(line) = &wsl.vmm_refused
    {
        out.push(
            VMM_REFUSED.finding(
                "CUDA refused a virtual-memory-management allocation (invalid device) under WSL 2",
                format!(
                    "The allocation went through CUDA's virtual memory management (cuMemCreate / cuMemAddressReserve / \
                 cuMemMap: cuda.core's VirtualMemoryResource, ggml's VMM pool, PyTorch's expandable segments), \
                 which WSL 2's GPU paravirtualization answers with invalid device although the device is valid; \
                 the plain allocator works. {CONSTRAINTS}."
                ),
                vec!["WSL 2".to_owned(), format!("pasted: {line}")],
                Some(
                    "Allocate without CUDA's virtual memory management under WSL 2: cuda.core: DeviceMemoryResource \
                 instead of VirtualMemoryResource; llama.cpp (ggml): build with `cmake -B build -DGGML_CUDA=ON \
                 -DGGML_CUDA_NO_VMM=ON`; PyTorch: leave `expandable_segments:True` out of PYTORCH_CUDA_ALLOC_CONF. \
                 Or run the program on native Linux."
                        .to_owned(),
                ),
            ),
        );
    }
}

/// nvidia-container-cli's mount error when the image already holds a file at the path it mounts
/// (`assets/compat/errors.toml`).
const MOUNT_FILE_EXISTS: &str = "container.mount_file_exists";

/// Whether a library file name is one of the driver's that the toolkit mounts into a container: libcuda,
/// NVML and the other libnvidia-* libraries, and WSL's libdxcore (the names libnvidia-container's
/// library lists hold; a CUDA toolkit's libraries, libcudart and the like, are not among them).
fn driver_library(file: &str) -> bool {
    file.starts_with("libcuda.so") || file.starts_with("libnvidia-") || file.starts_with("libdxcore.so")
}

/// The image finding, when inside WSL 2 the toolkit found a driver library of the image where it mounts
/// the Windows driver's: the image was built with driver files in it (a `libnvidia-compute-*` or `cuda`
/// package, or files copied from a host), which the container cannot start with.
fn image_ships_driver(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some((said, file, inside)) = cx.s.messages.iter().filter(|m| m.id == MOUNT_FILE_EXISTS).find_map(|m| {
        let path = m.values.get("path")?;
        let file = path.rsplit('/').next()?;
        // The path is the container's root on the host (overlay2's `merged`) followed by the image's own path.
        let inside = path.split_once("/merged/").map_or(path.as_str(), |(_, rest)| rest);
        driver_library(file).then(|| (m, file.to_owned(), format!("/{}", inside.trim_start_matches('/'))))
    }) else {
        return;
    };
    out.push(IMAGE_SHIPS_DRIVER.finding(
        format!("The container image ships the driver library {file}, which WSL's driver is mounted over"),
        "Under WSL 2 the NVIDIA Container Toolkit mounts the Windows driver's libraries (from /usr/lib/wsl/lib) into \
         the container at the image's library folder. The image already holds a file of that name, installed when it \
         was built (a driver or `cuda` package, a `libnvidia-compute-*` package, or files copied from a machine with a \
         driver), so the mount fails with 'file exists' and the container does not start. The image must not ship \
         driver libraries; the toolkit brings the host's.",
        vec!["WSL".to_owned(), format!("pasted: {}", said.line)],
        Some(format!(
            "Remove {file} from the image: rebuild it, or derive one, with `RUN rm -rf {inside}` (and the other \
             libcuda.so* / libnvidia-*.so* files the image holds in that folder) after whatever installed them, or \
             install only the CUDA toolkit packages in it, never a driver."
        )),
    ));
}

/// The last Windows driver branch the reports of [`SMI_CRASH`] name as running WSL's nvidia-smi (537.xx).
const LAST_SMI_WORKING_BRANCH: u32 = 537;

/// The nvidia-smi crash finding, when WSL's nvidia-smi died of a segmentation fault with a Windows driver
/// after [`LAST_SMI_WORKING_BRANCH`] (or one the text does not show); with an older driver the crash has
/// another cause, which this finding would hide.
fn smi_crash(cx: &Ctx<'_>, wsl: &WslFacts, out: &mut Vec<Finding>) {
    let Some(line) = &wsl.smi_crash else { return };
    let driver = cx.driver.version.as_ref();
    if driver.is_some_and(|d| d.major() <= LAST_SMI_WORKING_BRANCH) {
        return;
    }
    let mut evidence = vec!["WSL".to_owned(), format!("pasted: {line}")];
    if let Some(d) = driver {
        evidence.push(format!("Windows NVIDIA driver {d}"));
    }
    out.push(
        SMI_CRASH.finding(
            "WSL's nvidia-smi crashes (segmentation fault): a known fault of newer Windows drivers",
            "Inside WSL 2, nvidia-smi is the Windows driver's own (mapped in at /usr/lib/wsl/lib), and with Windows \
         drivers after the 537 branch it dies of a segmentation fault while it prints its table on many machines \
         (microsoft/WSL#11277, #11870), while nvidia-smi in Windows works. The crash is in that tool, not in the \
         setup: CUDA programs inside WSL often still run, so test CUDA itself before changing anything.",
            evidence,
            Some(
                "Check CUDA directly inside WSL: python3 -c 'import torch; print(torch.cuda.is_available(), \
             torch.cuda.get_device_name(0))' (or a CUDA sample such as deviceQuery); run nvidia-smi in Windows \
             PowerShell for the table. Where the WSL nvidia-smi is needed, install NVIDIA's newest Windows driver, \
             or go back to a 537.xx Windows driver, then wsl --shutdown. Do not install a Linux driver in WSL."
                    .to_owned(),
            ),
        ),
    );
}

/// nvidia-smi not found by a shell inside WSL 2: its folder, /usr/lib/wsl/lib, is on the PATH WSL gives the
/// shells it starts, not on sudo's secure_path or an SSH or root login's ([`SMI_NOT_ON_PATH`]).
fn smi_not_on_path(wsl: &WslFacts, out: &mut Vec<Finding>) {
    let Some(line) = &wsl.smi_not_found else { return };
    out.push(SMI_NOT_ON_PATH.finding(
        "nvidia-smi is not on this shell's PATH inside WSL (it lives in /usr/lib/wsl/lib)",
        "Under WSL 2 the Windows driver maps its Linux tools and libraries in at /usr/lib/wsl/lib, and WSL adds that \
         folder to the PATH of the shells it starts. sudo runs commands with its own secure_path, and root's login \
         shell, an SSH login and system services build PATH without it, so there nvidia-smi (and tools that call it \
         to detect the GPU) is not found while the GPU itself works.",
        vec!["WSL".to_owned(), format!("pasted: {line}")],
        Some(
            "Check that the driver's copy is there: `ls -l /usr/lib/wsl/lib/nvidia-smi` (if it is missing, the \
             Windows driver does not expose the GPU to WSL: update it and run `wsl --shutdown` in PowerShell). Then \
             call it by its path (`sudo /usr/lib/wsl/lib/nvidia-smi`), or put the folder on that PATH: for sudo, \
             `sudo visudo` and append `:/usr/lib/wsl/lib` to `Defaults secure_path`; for SSH, root and services, \
             `export PATH=\"$PATH:/usr/lib/wsl/lib\"` in their profile or unit (`Environment=PATH=…`). Do not install a \
             Linux driver in WSL."
                .to_owned(),
        ),
    ));
}

/// lspci's line of WSL 2's virtual GPU, where the NVIDIA card is never listed ([`RENDER_ADAPTER`]).
fn render_adapter(wsl: &WslFacts, out: &mut Vec<Finding>) {
    let Some(line) = &wsl.render_adapter else { return };
    out.push(RENDER_ADAPTER.finding(
        "lspci shows WSL 2's virtual GPU, not the NVIDIA card: that is how WSL 2 looks",
        "Under WSL 2 the Windows host gives the Linux guest one virtual device per GPU, Microsoft's 1414:008e (`Device \
         008e`, `Basic Render Driver`), which the dxgkrnl driver behind /dev/dxg takes; the NVIDIA card is not on the \
         guest's PCI bus, so `lspci | grep -i nvidia` prints nothing even where CUDA works. lspci says nothing about \
         whether the GPU can be used here.",
        vec!["WSL 2".to_owned(), format!("pasted: {line}")],
        Some(
            "Check the GPU with nvidia-smi instead (`nvidia-smi`, or `/usr/lib/wsl/lib/nvidia-smi` where it is not on \
             PATH): it lists the NVIDIA GPU when the Windows driver exposes it to WSL. A script that detects the GPU \
             with lspci must also take Microsoft's 1414:008e device, or ask nvidia-smi."
                .to_owned(),
        ),
    ));
}

/// The architectures before Volta (compute capability below 7.0) as people name them.
const BEFORE_VOLTA: [&str; 3] = ["kepler", "maxwell", "pascal"];

/// How the GPU is known to be older than Volta: a listed GPU's capability below 7.0 (every GPU's, so a
/// machine with a newer one beside it is not taken), else an architecture before Volta named in words.
fn below_volta(cx: &Ctx<'_>, wsl: &WslFacts) -> Option<String> {
    let ccs = cx.capabilities();
    if !ccs.is_empty() {
        let volta = gpu_doctor_model::ComputeCapability { major: 7, minor: 0 };
        return ccs.iter().all(|cc| *cc < volta).then(|| {
            let names: Vec<String> = cx.gpus.iter().map(|g| g.describe()).collect();
            names.join(", ")
        });
    }
    let arch = wsl.architecture_said.as_deref().filter(|a| BEFORE_VOLTA.contains(a))?;
    Some(format!("a {}{} GPU, as the text says", arch[..1].to_ascii_uppercase(), &arch[1..]))
}

/// The finding for an 801 answer on a GPU older than Volta (`older` says how that is known).
fn below_volta_finding(older: &str, line: &str) -> Finding {
    BELOW_VOLTA.finding(
        "CUDA answered 'operation not supported' (801) under WSL 2 on a GPU older than Volta",
        format!(
            "Under WSL 2 managed (unified) memory is limited, and on GPUs before Volta (Kepler, Maxwell, Pascal: \
             compute capability below 7.0) the paths RAPIDS (cuDF, RMM) and other managed-memory users take answer \
             801 even where newer GPUs run them; RAPIDS' maintainers closed Pascal under WSL 2 as won't-fix, and \
             RAPIDS needs compute capability 7.0 (Volta) or newer from v24.02 on. {CONSTRAINTS}."
        ),
        vec!["WSL 2".to_owned(), format!("GPU: {older}"), format!("pasted: {line}")],
        Some(
            "Under WSL 2 this GPU cannot run it: use a GPU of compute capability 7.0 (Volta) or newer (GeForce RTX \
             20xx or later), or run on native Linux, where Pascal works with RAPIDS before v24.02; RAPIDS 21.08 is \
             the last release its maintainers saw run on a Pascal GPU under WSL 2. Elsewhere turn managed memory \
             off (rmm.reinitialize(managed_memory=False))."
                .to_owned(),
        ),
    )
}

/// The Linux driver finding, when one is installed; true when it was.
fn linux_driver(cx: &Ctx<'_>, wsl: &WslFacts, out: &mut Vec<Finding>) -> bool {
    let libs: Vec<&LoaderEntry> = cx
        .loader_cache()
        .unwrap_or_default()
        .iter()
        .filter(|e| {
            DRIVER_LIBS.iter().any(|lib| e.name.starts_with(lib))
                && !e.path.starts_with("/usr/lib/wsl/")
                && !e.path.contains("/stubs/")
        })
        .collect();
    let mut evidence: Vec<String> = libs.iter().map(|e| format!("loader cache: {} => {}", e.name, e.path)).collect();
    evidence.extend(
        wsl.linux_driver_libs
            .iter()
            .filter(|p| !libs.iter().any(|e| e.path == **p))
            .map(|p| format!("a Linux driver library inside WSL: {p}")),
    );
    if let Some(m) = cx.s.kernel_module.value() {
        if let Some(i) = &m.installed {
            evidence.push(format!("an nvidia kernel module is installed: {}", i.filename));
        }
        if m.nvidia_loaded {
            evidence.push("the nvidia kernel module is loaded".to_owned());
        }
    }
    evidence.extend(wsl.linux_driver_packages.iter().map(|p| format!("a Linux driver package installed in WSL: {p}")));
    evidence.extend(
        wsl.linux_driver_said.iter().map(|s| format!("the text says a driver was installed inside WSL: \"{s}\"")),
    );
    if evidence.is_empty() {
        evidence.extend(opened_by_name_no_device(cx));
    }
    if evidence.is_empty() {
        evidence.extend(nvml_driver_not_loaded(cx));
    }
    if evidence.is_empty() {
        return false;
    }
    let table = &cx.kb.drivers.wsl;
    let remove = table.remove(&fix::os_name(cx));
    // With apt, dpkg names the package the Linux library came with.
    let owner = libs
        .first()
        .map(|e| e.path.as_str())
        .or_else(|| wsl.linux_driver_libs.first().map(String::as_str))
        .filter(|_| remove == table.remove_apt)
        .map(|path| {
            let dpkg = fix::command(cx, &ShellCommand::new("dpkg").args(["-S", path]), true);
            format!("{dpkg} names the package; then: ")
        })
        .unwrap_or_default();
    let finding = LINUX_DRIVER.finding(
        "A Linux NVIDIA driver is installed inside WSL2",
        "WSL2 uses the Windows NVIDIA driver, whose libcuda is mapped in at /usr/lib/wsl/lib. A Linux driver's \
         libcuda found first does not work in WSL (CUDA reports no device or a driver mismatch). Installing the `cuda` \
         or `cuda-drivers` package does this; in WSL install only `cuda-toolkit-<version>`.",
        evidence,
        Some(format!(
            "{owner}{remove} && sudo ldconfig   — keep the Windows driver, whose libraries WSL maps in at {WSL_LIB}; \
             until then `export LD_LIBRARY_PATH={WSL_LIB}:$LD_LIBRARY_PATH` makes programs load those first"
        )),
    );
    out.push(finding.with_plan(PlanTarget::Driver { min_branch: None }));
    true
}

/// Messages of programs that open the driver library by the unversioned name `libcuda.so` first, saying its
/// cuInit answered `error`: numba (numba/numba:numba/cuda/cudadrv/driver.py@0.60.0#L122,L138: `libcuda.so`, then
/// `libcuda.so.1`) and Taichi (taichi-dev/taichi:taichi/rhi/cuda/cuda_driver.cpp@v1.7.4#L120).
const BY_NAME_INIT: [(&str, &str); 2] = [("numba.driver_init_error", "numba"), ("taichi.cuinit_failed", "Taichi")];

/// NVML answering that no driver is loaded (NVML_ERROR_DRIVER_NOT_LOADED, 9) inside WSL 2: WSL has no NVIDIA kernel
/// module at all, and its own libnvidia-ml.so.1 (in /usr/lib/wsl/lib) reaches the Windows driver through /dev/dxg; a
/// Linux driver's libnvidia-ml looks for the kernel module and answers 9. So the NVML library the program loaded is a
/// Linux driver's (ollama/ollama#1888: the generic libnvidia-ml of a Linux package, fixed by loading WSL's).
fn nvml_driver_not_loaded(cx: &Ctx<'_>) -> Option<String> {
    let m = cx.s.messages.iter().find(|m| m.id == "nvml.driver_not_loaded")?;
    Some(format!(
        "pasted: {} — WSL has no NVIDIA kernel module: its own libnvidia-ml.so.1 in /usr/lib/wsl/lib reaches the \
         Windows driver, while a Linux driver's libnvidia-ml looks for the module and answers that no driver is loaded, \
         so the NVML library loaded is a Linux driver's",
        m.line
    ))
}

/// A program that opens `libcuda.so` by name saw no device under WSL 2: WSL's own libcuda.so is not in the loader
/// cache (WSL ships it as a plain file, not a link; microsoft/WSL#8587), so unless LD_LIBRARY_PATH names
/// /usr/lib/wsl/lib, the library that answered is another one: a Linux driver's (numba's maintainer in
/// rapidsai/cuml#6218). The toolkit's stub answers CUDA_ERROR_STUB_LIBRARY, not no device.
fn opened_by_name_no_device(cx: &Ctx<'_>) -> Option<String> {
    let path = &cx.s.env.ld_library_path;
    if path.iter().any(|d| super::context::same_dir(d, WSL_LIB) || d.contains("/stubs")) {
        return None;
    }
    cx.s.messages.iter().find_map(|m| {
        let (_, program) = BY_NAME_INIT.iter().find(|(id, _)| *id == m.id)?;
        m.values.get("error").filter(|e| e.contains("CUDA_ERROR_NO_DEVICE"))?;
        Some(format!(
            "pasted: {} — {program} opens the driver library by the name libcuda.so first, which WSL's loader cache \
             does not list (WSL ships its libcuda.so as a plain file); the libcuda.so it opened answered no device, so \
             it is not WSL's but a Linux driver's",
            m.line
        ))
    })
}

fn gpu_not_exposed(cx: &Ctx<'_>, wsl: &WslFacts, out: &mut Vec<Finding>) {
    // A GPU the person names is the Windows machine's; that the guest sees it, only a program says.
    if cx.gpus_listed_by_a_program() {
        return;
    }
    let mut said: Vec<String> =
        cx.s.messages
            .iter()
            .filter(|m| NO_DEVICE_MESSAGES.contains(&m.id.as_str()) || driver_library_unreachable(wsl, m))
            .map(|m| format!("pasted: {}", m.line))
            .collect();
    said.extend(wsl.dxg_missing.iter().map(|l| format!("pasted: {l}")));
    // Said in words, on a Windows build that has no GPU in WSL 2 to give.
    if wsl.build_before_gpu.is_some() {
        said.extend(cx.s.stated_no_gpu.iter().map(|l| format!("pasted: {l}")));
    }
    // A Windows 10 release before 21H2 has no GPU for WSL 2 to hand over, whatever the text says of it; under WSL 1
    // the WSL 1 finding says why.
    let libs_shown = wsl.driver_lib_dir_present
        || !wsl.libcuda_files.is_empty()
        || cx.loader_cache().is_some_and(|c| c.iter().any(|e| e.path.starts_with(WSL_LIB)));
    if said.is_empty() && (wsl.build_before_gpu.is_none() || wsl.version != 2 || libs_shown) {
        return;
    }
    let version = if wsl.version == 2 { "WSL2" } else { "WSL (version not shown)" };
    let listed = if cx.gpus.is_empty() { "no GPU listed" } else { "no program lists a GPU" };
    let mut evidence = vec![format!("{version}, and {listed}")];
    if let Some(build) = &wsl.build_before_gpu {
        evidence.push(format!(
            "pasted: {build} (a Windows 10 release before 21H2, build 19044, the first with GPU compute in WSL 2)"
        ));
    }
    evidence.extend(said);
    out.push(not_exposed(evidence));
}

/// Whether `m` says the driver's own libraries could not be loaded (libnvidia-ml.so.1 not found, nvidia-container-cli's
/// `load library failed` or `driver error`) where the text does not show /usr/lib/wsl/lib holding them: inside WSL 2
/// they come only from the Windows driver through that folder (in Docker Desktop's WSL 2 VM too), so WSL mapped in
/// no driver.
fn driver_library_unreachable(wsl: &WslFacts, m: &gpu_doctor_model::ObservedMessage) -> bool {
    !wsl.driver_lib_dir_present
        && wsl.libcuda_files.is_empty()
        && (m.id == "nvml.library_not_found" && !unversioned_nvml(&m.line)
            || m.id == "container.cli_init_failed"
                && m.values
                    .get("reason")
                    .is_some_and(|r| r.contains("load library failed") || r.contains("driver error")))
}

/// The finding that WSL hands no GPU to the guest, with its causes and the steps that check each.
fn not_exposed(evidence: Vec<String>) -> Finding {
    NO_GPU
        .finding(
            "WSL does not hand the GPU to this Linux guest",
            "Inside WSL the GPU comes from the Windows driver through WSL2's paravirtualisation; the text shows \
                 no Linux driver inside WSL, yet programs find no driver or device. The usual causes: a Linux NVIDIA \
                 driver installed inside WSL after all (its libcuda in /usr/lib/x86_64-linux-gnu shadows the one WSL \
                 maps in at /usr/lib/wsl/lib: cuInit answers no device), the distribution runs under WSL1 (even when \
                 people think it is WSL2), a Windows build too old (Windows 10 before 21H2) or one that broke GPU \
                 access, a Windows driver too old for WSL, or no NVIDIA GPU in the Windows machine at all \
                 (Docker Desktop's WSL 2 VM then has none to give its containers).",
            evidence,
            None,
        )
        .with_plan(fix::change(
            None,
            "WSL2 hands the GPU to the guest",
            vec![
                Change::Manual {
                    text: "Inside WSL: ls -l /usr/lib/x86_64-linux-gnu/libcuda.so* and dpkg -l | grep -E \
                               'nvidia-driver|libnvidia-compute|cuda-drivers' — anything listed is a Linux driver, \
                               which must go (sudo apt-get purge the packages listed), leaving /usr/lib/wsl/lib's."
                        .into(),
                },
                Change::Manual {
                    text: "In PowerShell on Windows: wsl -l -v — the distribution's VERSION must be 2 (else \
                               wsl --set-version <distro> 2)."
                        .into(),
                },
                Change::Manual { text: "Update Windows (11, or 10 21H2 or later) and NVIDIA's Windows driver.".into() },
                Change::Windows { argv: vec!["wsl".into(), "--shutdown".into()] },
            ],
        ))
}

/// Whether `line` names NVML's library by its unversioned development name (`libnvidia-ml.so:`, `libnvidia-ml.so"`),
/// not `libnvidia-ml.so.1`.
fn unversioned_nvml(line: &str) -> bool {
    line.match_indices("libnvidia-ml.so").any(|(at, name)| !line[at + name.len()..].starts_with('.'))
}

/// A program could not open the unversioned `libnvidia-ml.so` inside WSL, which maps in only libnvidia-ml.so.1
/// ([`NVML_SO`]).
fn nvml_so(cx: &Ctx<'_>, wsl: &WslFacts, out: &mut Vec<Finding>) {
    if wsl.version == 1 {
        return;
    }
    let Some(m) = cx.s.messages.iter().find(|m| m.id == "nvml.library_not_found" && unversioned_nvml(&m.line)) else {
        return;
    };
    let version = if wsl.version == 2 { "WSL2" } else { "WSL named in the text (its version not shown)" };
    out.push(
        NVML_SO
            .finding(
                "WSL has NVML only as libnvidia-ml.so.1: a program that opens libnvidia-ml.so finds nothing",
                "WSL maps the Windows driver's NVML library in as libnvidia-ml.so.1 (under /usr/lib/wsl), with no \
                 unversioned libnvidia-ml.so beside it: that name is a development link a Linux driver's packages \
                 add. nvidia-smi and programs that open libnvidia-ml.so.1 work; one that asks for libnvidia-ml.so \
                 (some NVML bindings by default) fails with \"cannot open shared object file\", which says nothing \
                 about the GPU.",
                vec![version.to_owned(), format!("pasted: {}", m.line)],
                Some(
                    "Make the program open libnvidia-ml.so.1 (a binding's library path setting: nvml-wrapper's \
                     `Nvml::builder().lib_path(\"libnvidia-ml.so.1\")`, pynvml's and go-nvml's defaults already do), or \
                     give it the name in a folder of its own: `mkdir -p ~/.local/lib/nvml && ln -s \
                     /usr/lib/wsl/lib/libnvidia-ml.so.1 ~/.local/lib/nvml/libnvidia-ml.so` and \
                     `export LD_LIBRARY_PATH=~/.local/lib/nvml:$LD_LIBRARY_PATH` in the shell that runs it."
                        .to_owned(),
                ),
            ),
    );
}

/// Messages that say a program could not open the unversioned `libcuda.so`: the loader's own
/// (`libcuda.so: cannot open shared object file`), cudarc's, cuda-python's and Taichi's (whose CUDA driver
/// loader opens that name, taichi-dev/taichi:taichi/backends/cuda/cuda_driver.cpp).
const LIBCUDA_SO_FAILED: [&str; 5] = [
    "ld.libcuda_missing",
    "cudarc.driver_library_not_found",
    "bitsandbytes.libcuda_not_found",
    "cuda_python.libcuda_dlopen_failed",
    "taichi.cuda_arch_not_supported",
];

fn libcuda_so(cx: &Ctx<'_>, wsl: &WslFacts, out: &mut Vec<Finding>) {
    // Only a program that opens the unversioned name fails; CUDA opens libcuda.so.1.
    let failed: Vec<&str> =
        cx.s.messages
            .iter()
            .filter(|m| {
                LIBCUDA_SO_FAILED.contains(&m.id.as_str())
                    && (m.id != "ld.libcuda_missing" || m.line.contains("libcuda.so:"))
            })
            .map(|m| m.line.as_str())
            .collect();
    let in_env = cx.s.env.ld_library_path.iter().any(|d| super::context::same_dir(d, WSL_LIB));
    if failed.is_empty() || in_env || wsl.version == 1 {
        return;
    }
    let mut evidence = match cx.loader_cache() {
        Some(cache) => {
            let from_wsl = |name: &str| cache.iter().any(|e| e.name == name && e.path.starts_with(WSL_LIB));
            if !wsl.libcuda_files.iter().any(|f| f == "libcuda.so")
                || !from_wsl("libcuda.so.1")
                || from_wsl("libcuda.so")
            {
                return;
            }
            vec![
                format!("{WSL_LIB} holds {}", wsl.libcuda_files.join(", ")),
                format!("the loader cache lists libcuda.so.1 from {WSL_LIB}, and no libcuda.so"),
                "LD_LIBRARY_PATH does not include it".to_owned(),
            ]
        }
        // Pasted text that names WSL and the failure but not the loader cache: WSL ships libcuda.so
        // this way on every install, so the failure has this cause unless LD_LIBRARY_PATH lists the
        // folder (which the text then would have to show).
        None => vec![
            if wsl.version == 2 {
                "WSL2".to_owned()
            } else {
                "WSL named in the text (its version not shown)".to_owned()
            },
            format!("the loader cache and {WSL_LIB} are not in the text"),
        ],
    };
    evidence.push(format!("pasted: {}", failed[0]));
    out.push(
        LIBCUDA_SO
            .finding(
                "The loader cache has libcuda.so.1 from /usr/lib/wsl/lib but not libcuda.so",
                "WSL maps the Windows driver's libcuda.so in as a plain file, not a link to libcuda.so.1, and ldconfig \
                 only lists links by that name: opening `libcuda.so` (Triton, JIT compilers, ctypes, cudarc, \
                 cuda-python) fails with \"cannot open shared object file\" while CUDA programs, which open \
                 libcuda.so.1, run.",
                evidence,
                None,
            )
            .with_plan(fix::change(
                None,
                format!("programs find libcuda.so in {WSL_LIB}"),
                vec![fix::ld_library_path_without(cx, &[], Some(WSL_LIB))],
            )),
    );
}

fn not_on_loader_path(cx: &Ctx<'_>, wsl: &WslFacts, out: &mut Vec<Finding>) {
    if !wsl.driver_lib_dir_present || wsl.libcuda_files.is_empty() {
        return;
    }
    let Some(cache) = cx.loader_cache() else { return };
    let in_cache = cache.iter().any(|e| e.name.starts_with("libcuda.so") && e.path.starts_with(WSL_LIB));
    let in_env = cx.s.env.ld_library_path.iter().any(|d| super::context::same_dir(d, WSL_LIB));
    if in_cache || in_env {
        return;
    }
    out.push(NOT_ON_PATH.finding(
        "The Windows driver's CUDA library in /usr/lib/wsl/lib is not on the loader path",
        "WSL normally registers /usr/lib/wsl/lib in /etc/ld.so.conf.d/ld.wsl.conf. Without it, loading libcuda.so.1 \
         fails (\"libcuda.so.1: cannot open shared object file\", CUDA reports no driver).",
        vec![
            format!("{WSL_LIB} holds {}", wsl.libcuda_files.join(", ")),
            format!("the loader cache (ldconfig -p) has no libcuda from {WSL_LIB}"),
            "LD_LIBRARY_PATH does not include it".to_owned(),
        ],
        None,
    )
    .with_plan(fix::change(
        None,
        format!("the loader finds the Windows driver's libcuda in {WSL_LIB}"),
        vec![
            Change::Root {
                argv: ["sh", "-c", &format!("echo {WSL_LIB} > /etc/ld.so.conf.d/ld.wsl.conf")]
                    .map(String::from)
                    .to_vec(),
            },
            Change::Root { argv: vec!["ldconfig".into()] },
        ],
    )));
}
