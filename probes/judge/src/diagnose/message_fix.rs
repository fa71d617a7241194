//! The fix of a catalogue finding (`observed.<message id>`): a catalogue finding is what a user
//! gets exactly when the text lacks the facts a rule needs (a lone traceback line), so its fix comes
//! from the row's family (its category, the program that printed it, the values its pattern
//! captured) and whatever facts the text does give, through the machinery the rules use: the
//! torch chooser (`kb.pytorch.recommend`), the CUDA release table's driver floors, the wheels that
//! ship NVIDIA's libraries (`families::LIBRARY_WHEELS`), the driver and change planners.
//!
//! Each family fix returns the words for a machine no plan can be made for (pasted text without
//! an OS) and, where a planner covers it, the plan target whose plan replaces them.

use super::arch::{build_for, torch_for};
use super::context::{build_cuda, wheel_cuda_major};
use super::{Ctx, fix};
use gpu_doctor_kb::{KnownMessage, families};
use gpu_doctor_model::shell::ShellCommand;
use gpu_doctor_model::{
    Category, Change, ComputeCapability, CudaVersion, DriverLoadProblem, Finding, ObservedMessage, OsFamily, PlanRef,
    PlanTarget,
};

/// A family's fix: its words (for a machine no plan can be made for) and its plan target.
pub(super) type FamilyFix = (Option<String>, Option<PlanTarget>);

/// Gives each catalogue finding (`observed.<id>`) that has neither a fix nor a plan (a row's values
/// naming no driver floor, no torch build for a known driver) the fix of its row's family; and a
/// rule's finding without either, the fix of the first known message it explains (a framework's
/// printed refusal, judged by the rule from the line's values).
pub(super) fn attach(cx: &Ctx<'_>, out: &mut [Finding]) {
    for f in out.iter_mut().filter(|f| f.fix.is_none() && f.plan.is_none()) {
        let row = if f.id.starts_with("observed.") { Some(&f.id) } else { f.explains.first() };
        let Some(id) = row.and_then(|r| r.strip_prefix("observed.")).map(str::to_owned) else { continue };
        let Some(known) = cx.kb.errors.message.iter().find(|m| m.id == id) else { continue };
        let observed: Vec<&ObservedMessage> = cx.s.messages.iter().filter(|m| m.id == id).collect();
        let (words, plan) = family_fix(cx, known, &observed);
        // As `Finding::with_plan`: the rule's words wait in the plan ref for a machine no plan can
        // be made for.
        match plan {
            Some(target) => f.plan = Some(PlanRef { id: String::new(), target, unplanned: words }),
            None => f.fix = words,
        }
    }
}

/// The fix of a known message's finding, from its family; `(None, None)` for a family with no
/// concrete fix (the catch-all `other` category's unrelated problems, a GPU's health).
pub(super) fn family_fix(cx: &Ctx<'_>, known: &KnownMessage, observed: &[&ObservedMessage]) -> FamilyFix {
    let (words, plan) = library_fix(cx, observed).unwrap_or_else(|| by_category(cx, known, observed));
    // A change and a driver update of a named branch are the planners' alone (they plan them on
    // every machine): no words of the rule's own beside them.
    let planned = matches!(plan, Some(PlanTarget::Change { .. } | PlanTarget::Driver { min_branch: Some(_) }));
    (words.filter(|_| !planned), plan)
}

/// NGC's entrypoint refusing a GPU newer than the image's release: the images' release notes and support matrices name
/// the GPUs each release supports; `NVIDIA_DISABLE_REQUIRE` is the toolkit's variable that skips the image's
/// requirement check (NVIDIA/nvidia-container-toolkit's documentation of the image variables).
const NGC_GPU_WORDS: &str = "Use a newer release of the image (its tag's year.month: NVIDIA's support matrix for the \
                             image names the GPUs each release supports; a program's own Dockerfile pins the release \
                             in its FROM line). A program that does not use the GPU can skip the check with \
                             NVIDIA_DISABLE_REQUIRE=1; one that does needs the newer release.";

fn by_category(cx: &Ctx<'_>, known: &KnownMessage, observed: &[&ObservedMessage]) -> FamilyFix {
    match known.category {
        Category::DriverTooOldForRuntime if known.id == "cuda.compat_not_supported" => {
            (Some(compat_words(cx)), Some(PlanTarget::Driver { min_branch: None }))
        }
        Category::DriverTooOldForRuntime => driver_fix(cx),
        Category::CpuOnlyBuild => gpu_build_fix(cx, program(known), observed),
        Category::ArchNotInBuild if known.id == "ngc.gpu_not_supported" => (Some(NGC_GPU_WORDS.to_owned()), None),
        Category::ArchNotInBuild => arch_fix(cx, known, observed),
        Category::CudnnMissingOrMismatch => cudnn_fix(cx, known, observed),
        Category::PcieLinkDegraded if known.id == "cuda.too_many_peers" => (Some(too_many_peers_words(cx)), None),
        Category::EnvVarMisconfig if known.id == "torch.alloc_conf_option_unknown" => {
            let option = observed.iter().find_map(|m| m.values.get("option")).map_or("the option", String::as_str);
            (
                Some(format!(
                    "PYTORCH_CUDA_ALLOC_CONF sets {option}, which this torch does not know (expandable_segments came \
                     with torch 2.1): take it out of the variable (`{}`, or the line of the script that exports it), \
                     or upgrade torch to a release that has it. `{}` shows the torch installed.",
                    fix::unset_line(cx, "PYTORCH_CUDA_ALLOC_CONF"),
                    cmd(cx, "python", ["-c", "import torch; print(torch.__version__)"])
                )),
                None,
            )
        }
        Category::EnvVarMisconfig if known.id == "torch.load_device_beyond_count" => {
            (Some(load_device_words(cx, observed)), None)
        }
        Category::EnvVarMisconfig => variable_fix(cx, known),
        Category::NoDriverOrGpuNotVisible if known.id == "nvrm.legacy_gpu" => legacy_fix(observed),
        Category::NoDriverOrGpuNotVisible if known.id == "kbuild.gpl_only_symbol" => (Some(newer_branch_fix(cx)), None),
        Category::NoDriverOrGpuNotVisible if known.id == "sdwebui.torch_cannot_use_gpu" => {
            (Some(webui_torch_fix(cx)), None)
        }
        Category::NoDriverOrGpuNotVisible if known.id == "kube_scheduler.insufficient_gpu" => {
            (Some(scheduler_gpu_words(cx)), None)
        }
        Category::NoDriverOrGpuNotVisible if known.id == "paddle.no_gpu_in_runtime" => {
            (Some(paddle_no_gpu_words(cx)), None)
        }
        Category::NoDriverOrGpuNotVisible if known.id == "ultralytics.invalid_cuda_device" => {
            (Some(ultralytics_device_words(cx, observed)), None)
        }
        Category::NoDriverOrGpuNotVisible if known.id == "docker.nvidia_device_node_missing" => {
            (Some(device_node_words(cx)), None)
        }
        Category::NoDriverOrGpuNotVisible => {
            image_driver_files_fix(cx, known, observed).unwrap_or_else(|| visible_fix(cx, known))
        }
        Category::MultipleToolkitsConflict => toolkits_fix(cx, known, observed),
        Category::Other => coded_fix(cx, observed)
            .or_else(|| load_refused_fix(cx, known, observed))
            .unwrap_or_else(|| other_fix(cx, known)),
        Category::ToolkitVsFrameworkMismatchHarmless => toolkit_fix(cx, known, observed),
        Category::WslSpecific => wsl_fix(cx, known),
        _ => (None, None),
    }
}

/// A toolkit that differs from what a build step needs (where running prebuilt wheels would not
/// care): PyTorch's extension builder refusing a toolkit of another CUDA major than torch's
/// (`torch/utils/cpp_extension.py`, `_check_cuda_version`), XLA's ptxas newer than the driver, an
/// nvcc too old for the option PyTorch's ninja build passes.
fn toolkit_fix(cx: &Ctx<'_>, known: &KnownMessage, observed: &[&ObservedMessage]) -> FamilyFix {
    let value = |name: &str| observed.iter().find_map(|m| m.values.get(name)?.trim().parse::<CudaVersion>().ok());
    let torch_cuda = || cx.frameworks().filter(|(_, f)| f.name == "torch").find_map(|(_, f)| build_cuda(f));
    let words = match known.id.as_str() {
        "torch.cpp_extension_cuda_mismatch" => {
            let (Some(detected), Some(compiled)) = (value("detected"), value("compiled")) else { return (None, None) };
            format!(
                "PyTorch builds extensions with the toolkit CUDA_HOME names (else the nvcc on PATH): CUDA {detected} \
                 there, CUDA {compiled} in torch, and their majors must match. Either install the CUDA {compiled} \
                 toolkit and point CUDA_HOME at it (`{}` in a conda environment, whose folder CUDA_HOME then names; \
                 NVIDIA's installer puts it in {}), or install the torch build for the toolkit you have: `{}`.",
                cmd(cx, "conda", ["install", "-c", "nvidia", &format!("cuda-nvcc={compiled}")]),
                toolkit_folder(cx, compiled),
                torch_for_toolkit(cx, detected)
            )
        }
        // microsoft/DeepSpeed docs/_tutorials/advanced-install.md ("CUDA version mismatch"): the toolkit of torch's
        // CUDA, or torch of the toolkit's; DS_SKIP_CUDA_CHECK=1 skips DeepSpeed's own check, and PyTorch's
        // extension builder still refuses two majors (torch/utils/cpp_extension.py, _check_cuda_version).
        "deepspeed.cuda_mismatch" => {
            let (Some(installed), Some(torch)) = (value("installed"), value("torch_cuda")) else { return (None, None) };
            let skip = if installed.major == torch.major {
                format!(
                    " Both are CUDA {}.x: a newer DeepSpeed accepts more minors of one major (CUDA 12's from 0.12.3 \
                     on: `{}`), or its own check may be skipped, at your own risk as its docs say: `{}` in the shell \
                     that installs or runs it.",
                    torch.major,
                    pip_install(cx, &["--upgrade", "deepspeed"]),
                    fix::var_line(cx, "DS_SKIP_CUDA_CHECK", "1")
                )
            } else {
                String::new()
            };
            format!(
                "DeepSpeed builds its ops with the toolkit CUDA_HOME names: CUDA {installed} there, CUDA {torch} in \
                 torch. Install the CUDA {} toolkit and point CUDA_HOME at it (`{}` in a conda environment, whose \
                 folder CUDA_HOME then names; NVIDIA's installer puts it in {}), or install the torch build for the \
                 toolkit you have: `{}`.{skip} `{}` shows both versions and which ops are built.",
                torch.major_minor(),
                cmd(cx, "conda", ["install", "-c", "nvidia", &format!("cuda-nvcc={}", torch.major_minor())]),
                toolkit_folder(cx, torch),
                torch_for_toolkit(cx, installed),
                cmd(cx, "ds_report", [])
            )
        }
        // NVIDIA/apex setup.py (check_cuda_torch_binary_vs_bare_metal: major and minor must equal torch's) and
        // README.md (the Python-only build without the CUDA extensions).
        "apex.cuda_mismatch" => {
            let torch = value("torch_cuda");
            let want = torch.map_or_else(
                || format!("torch's CUDA (`{}`)", cmd(cx, "python", ["-c", "import torch; print(torch.version.cuda)"])),
                |t| format!("CUDA {}", t.major_minor()),
            );
            let conda = cmd(
                cx,
                "conda",
                [
                    "install",
                    "-c",
                    "nvidia",
                    &format!("cuda-nvcc={}", torch.map_or_else(|| "X.Y".to_owned(), |t| t.major_minor().to_string())),
                ],
            );
            let folder = torch
                .map_or_else(String::new, |t| format!("; NVIDIA's installer puts it in {}", toolkit_folder(cx, t)));
            format!(
                "Apex builds its CUDA extensions only with the toolkit of torch's own CUDA release, major and minor: \
                 install the toolkit of {want} and point CUDA_HOME at it (`{conda}` in a conda environment, whose \
                 folder CUDA_HOME then names{folder}), or install the torch build of the nvcc's CUDA (`{}` shows \
                 it), then build Apex again. Without its CUDA extensions (no --cuda_ext, APEX_CUDA_EXT unset) Apex \
                 installs Python-only, lacking its fused kernels.",
                cmd(cx, "nvcc", ["--version"])
            )
        }
        "xla.driver_older_than_ptxas" => {
            let driver = value("driver_cuda");
            let ptxas = value("ptxas_version").map(|v| v.major_minor());
            let floor = ptxas.and_then(|p| cx.kb.cuda.full_driver(p, cx.os)).map(ToString::to_string);
            let have = driver.map_or_else(String::new, |d| format!(" (CUDA up to {d})"));
            let match_driver = driver.map_or_else(String::new, |d| {
                format!(
                    ", or install the ptxas of the driver's CUDA, which XLA then uses: `{}`",
                    pip_install(cx, &[&format!("nvidia-cuda-nvcc-cu{}=={}.{}.*", d.major, d.major, d.minor)])
                )
            });
            format!(
                "XLA compiles with a ptxas newer than the driver{have}, so the driver cannot load the code it makes \
                 and XLA compiles again through the driver (slower) or fails. Update the NVIDIA driver{}{match_driver}.",
                floor.map_or_else(String::new, |f| format!(" to {f} or newer"))
            )
        }
        "nvcc.no_generate_dependencies_with_compile" => {
            let want = torch_cuda().map_or_else(
                || "CUDA 10.2 or newer, the one torch was built with (`torch.version.cuda`)".to_owned(),
                |(c, _)| format!("CUDA {c}, the one torch was built with"),
            );
            format!(
                "This nvcc is older than CUDA 10.2 and lacks `--generate-dependencies-with-compile`, which PyTorch's \
                 ninja build of extensions passes. Install the toolkit of {want}, and point CUDA_HOME at it (with \
                 its bin first on PATH)."
            )
        }
        _ => return (None, None),
    };
    (Some(words), None)
}

/// WSL's own lines: the Windows driver's libcuda copies that ldconfig warns about, made links on the
/// Windows side (microsoft/WSL#5548: /usr/lib/wsl/lib is C:\Windows\System32\lxss\lib, read-only inside).
fn wsl_fix(cx: &Ctx<'_>, known: &KnownMessage) -> FamilyFix {
    let words = match known.id.as_str() {
        "ld.wsl_libcuda_not_a_link" => format!(
            "Only a warning where CUDA works. To end it, make the copies symbolic links on the Windows side, in an \
             administrator's Command Prompt (not PowerShell): `cd C:\\Windows\\System32\\lxss\\lib`, `del libcuda.so \
             libcuda.so.1`, `mklink libcuda.so libcuda.so.1.1`, `mklink libcuda.so.1 libcuda.so.1.1`; then `wsl \
             --shutdown`. A build that links -lcuda can instead be given the folder: `{}`.",
            fix::var_line(cx, "LIBRARY_PATH", "/usr/lib/wsl/lib")
        ),
        // NVIDIA/nvidia-container-toolkit#520: the one cause NVIDIA documents for 500 at initialization.
        "cuda.init_symbol_not_found" => super::wsl::TOOLKIT_FIX.to_owned(),
        _ => return (None, None),
    };
    (Some(words), None)
}

/// Where NVIDIA's installer puts a toolkit of `cuda` on this OS.
fn toolkit_folder(cx: &Ctx<'_>, cuda: CudaVersion) -> String {
    let v = cuda.major_minor();
    if cx.os == OsFamily::Windows {
        format!("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v{v}, named by CUDA_PATH")
    } else {
        format!("/usr/local/cuda-{v}")
    }
}

/// `pip install torch --index-url …/cuXYZ` for the newest torch wheel of the toolkit's CUDA major
/// at or below its minor (the extension builder checks the major alone), from the knowledge base's
/// variants; else the toolkit's own tag.
fn torch_for_toolkit(cx: &Ctx<'_>, toolkit: CudaVersion) -> String {
    let toolkit = toolkit.major_minor();
    let variants = || cx.kb.pytorch.variant.iter().filter(|v| v.cuda.major == toolkit.major);
    let cuda = variants()
        .filter(|v| v.cuda.major_minor() <= toolkit)
        .map(|v| v.cuda.major_minor())
        .max()
        .or_else(|| variants().map(|v| v.cuda.major_minor()).min())
        .unwrap_or(toolkit);
    pip_install(cx, &["torch", "--index-url", &cx.kb.pytorch.index_url(cuda)])
}

/// A message that carries the number of the CUDA runtime error it reports (PyTorch's
/// `Error 804: …` after cudaGetDeviceCount): the fix of that error's own row (the catalogue's
/// `CUDA runtime, cudaErrorX (N)` rows, from NVIDIA's error table).
fn coded_fix(cx: &Ctx<'_>, observed: &[&ObservedMessage]) -> Option<FamilyFix> {
    let code: u32 = observed.iter().find_map(|m| m.values.get("code")?.parse().ok())?;
    let tag = format!("({code})");
    let row =
        cx.kb.errors.message.iter().find(|m| m.emitter.starts_with("CUDA runtime") && m.emitter.contains(&tag))?;
    // A row of the catch-all category gets its own fix (its code is its own, so no second look-up).
    Some(if row.category == Category::Other { other_fix(cx, row) } else { by_category(cx, row, observed) })
}

/// CUDA's peer mappings used up (711): at most eight peers a GPU, counted over every process.
fn too_many_peers_words(cx: &Ctx<'_>) -> String {
    format!(
        "A GPU maps at most eight peers, counted over every process on the machine. See what else holds the GPUs: \
         `{}` (an X server or display manager running on every GPU enables peer access between them; run it on \
         one GPU, or stop it: `sudo systemctl stop display-manager`). Give one job at most eight GPUs that talk \
         peer to peer (CUDA_VISIBLE_DEVICES listing eight), or turn P2P off for it (NCCL_P2P_DISABLE=1); a \
         warning at a framework's start-up for the pairs past eight is harmless where the job does not need them.",
        cmd(cx, "nvidia-smi", ["--query-compute-apps=pid,process_name,gpu_bus_id", "--format=csv"])
    )
}

/// torch.load restoring a tensor on a saved CUDA device this process does not have: map_location, and the
/// variable that may hide the GPU (torch/serialization.py, validate_cuda_device).
fn load_device_words(cx: &Ctx<'_>, observed: &[&ObservedMessage]) -> String {
    let value = |name: &str| observed.iter().find_map(|m| m.values.get(name)).map(String::as_str);
    let device = value("device").unwrap_or("N");
    let count = value("count").unwrap_or("fewer");
    format!(
        "The checkpoint holds tensors saved on cuda:{device}; this process sees {count} GPU(s). Load it onto a GPU \
         that exists: `torch.load(path, map_location='cuda:0')` (or map_location='cpu', then `.to(device)`) in the \
         program's load call. Where this machine has that GPU, CUDA_VISIBLE_DEVICES hides it: `{}` lists the GPUs, \
         `echo $CUDA_VISIBLE_DEVICES` the ones this process may use.",
        cmd(cx, "nvidia-smi", ["-L"])
    )
}

/// A library the loader or the linker found and could not use (glibc's elf/dl-load.c, binutils' bfd): the file
/// is there, so the fix is about that file, not about installing a missing one.
fn load_refused_fix(cx: &Ctx<'_>, known: &KnownMessage, observed: &[&ObservedMessage]) -> Option<FamilyFix> {
    let value = |name: &str| observed.iter().find_map(|m| m.values.get(name)).map(String::as_str);
    let object = ["object", "skipped", "truncated"].iter().find_map(|k| value(k));
    let named = object.map_or_else(|| "the library".to_owned(), |o| fix::word(cx, o));
    let file = object.unwrap_or("<library>");
    let words = match known.id.as_str() {
        "ld.executable_stack_refused" => format!(
            "glibc 2.41 and later will not dlopen {named}: it asks for an executable stack. Upgrade the package that \
             ships it to a release linked with `-z noexecstack` (CTranslate2 4.6.0 and later, for faster-whisper and \
             WhisperX); else clear the flag on the file: `{}` (patchelf 0.18 or later) or `{}`. With glibc 2.42 or later, `GLIBC_TUNABLES=glibc.rtld.execstack=2` \
             allows it for one run.",
            cmd(cx, "patchelf", ["--clear-execstack", file]),
            cmd(cx, "execstack", ["-c", file])
        ),
        "ld.library_wrong_elf_class" => {
            let bits = if value("elf_class") == Some("ELFCLASS64") { "64-bit" } else { "32-bit" };
            format!(
                "{named} is a {bits} build. `{}` says which each copy is; put the folder of this machine's build \
                 first (a CUDA toolkit's lib64/, not lib/) in LD_LIBRARY_PATH, or install the package built for \
                 this machine's architecture.",
                cmd(cx, "file", [file])
            )
        }
        "ld.library_not_elf" => format!(
            "{named} is not a library of this system: `{}` says what it is (a cut-short download, a Git LFS pointer, \
             another system's build). Reinstall the package that ships it without the cache (pip: `pip install \
             --force-reinstall --no-cache-dir <package>`), or copy the file whole again.",
            cmd(cx, "file", [file])
        ),
        "ld.link_wrong_format" => format!(
            "The linker cannot use {named}: `{}` names its architecture (x86-64, aarch64, 32-bit). Install the build \
             of that library for this machine's architecture (on a Jetson, the JetPack's cuDNN and CUDA; on x86_64, \
             the lib64/ folder), or replace a cut-short file with a whole copy.",
            cmd(cx, "file", [file])
        ),
        _ => return None,
    };
    Some((Some(words), None))
}

/// Two CUDA releases mixed: the linker's conflict names both copies and the library that needs
/// the other; a PTX newer than the ptxas that assembles it.
fn toolkits_fix(cx: &Ctx<'_>, known: &KnownMessage, observed: &[&ObservedMessage]) -> FamilyFix {
    let value = |name: &str| observed.iter().find_map(|m| m.values.get(name));
    if program(known) == "jax" {
        // JAX's CUDA plugin brings the CUDA libraries it was built against as pip wheels.
        return (Some(jax_builds(cx)), None);
    }
    match known.id.as_str() {
        "tf.ptxas_too_old" => {
            let ptxas = value("ptxas").map_or("an older", String::as_str);
            (
                Some(format!(
                    "XLA took ptxas {ptxas}, an older CUDA toolkit's. `TF_CPP_VMODULE=asm_compiler=2 python …` logs \
                     each place it looks (`Looking for ptxas at`) and the one it takes (`Using ptxas at`). Point XLA \
                     at the toolkit of TensorFlow's CUDA: `XLA_FLAGS=--xla_gpu_cuda_data_dir=/usr/local/cuda-X.Y` \
                     (that toolkit's folder), or make /usr/local/cuda that toolkit (`sudo ln -sfn \
                     /usr/local/cuda-X.Y /usr/local/cuda`), or take the older toolkit's bin folder out of PATH."
                )),
                None,
            )
        }
        "ld.cuda_library_conflict" => {
            let (Some(needed), Some(by), Some(linked)) = (value("needed"), value("by"), value("linked")) else {
                return (None, None);
            };
            let by = fix::word(cx, by);
            (
                Some(format!(
                    "Build against one CUDA release: {by} needs {needed} while {linked} is linked. `ldd {by}` shows \
                     which copy each library takes; take the other release's folder out of LD_LIBRARY_PATH and the \
                     link path, or rebuild {by} with the toolkit the program uses."
                )),
                None,
            )
        }
        "ld.versioned_reference_undefined" => {
            let Some(library) = value("needed") else { return (None, None) };
            let by = value("by").map_or_else(|| "the library being linked".to_owned(), |b| fix::word(cx, b));
            let release = library.split_once(".so.").map_or("", |(_, v)| v);
            (
                Some(format!(
                    "{by} was built against {library}: install that release of it ({release} in its name) beside the \
                     one you have and add its folder to the link path (`-L` and `-Wl,-rpath-link`, or \
                     LD_LIBRARY_PATH), or use a build of {by} made for the CUDA release installed. `{}` lists the \
                     copies the loader knows.",
                    cmd(cx, "ldconfig", ["-p"])
                )),
                None,
            )
        }
        "ld.cuda_runtime_symbol_missing" => {
            let library = value("library").map_or_else(|| "the extension".to_owned(), |l| fix::word(cx, l));
            (
                Some(format!(
                    "Rebuild {library} with the nvcc of the CUDA its framework runs: compare `{}` with `{}`, point \
                     CUDA_HOME (and PATH) at the toolkit of torch.version.cuda, delete the old build (its `build` \
                     folder and .so files) and build it again; or install the framework build of the nvcc's CUDA.",
                    cmd(cx, "python", ["-c", "import torch; print(torch.version.cuda)"]),
                    cmd(cx, "nvcc", ["--version"])
                )),
                None,
            )
        }
        "nvjitlink.ptxas_older_than_ptx" => {
            let ptx = value("ptx_version").map_or_else(|| "the PTX".to_owned(), |v| format!("PTX ISA {v}"));
            (
                Some(format!(
                    "The ptxas in use is older than {ptx}: `{}` shows which one is first on PATH. Put a newer CUDA \
                     toolkit's bin first on PATH, or (Triton) point TRITON_PTXAS_PATH at a ptxas that knows it.",
                    cmd(cx, "ptxas", ["--version"])
                )),
                None,
            )
        }
        _ => (None, None),
    }
}

/// The catch-all category's rows with a fix of their own, each from its emitter's words or
/// NVIDIA's documentation: the compute mode (nvidia-smi's `-c`), Fabric Manager on NVSwitch
/// systems (its user guide), NumPy's own `numpy<2` advice, CuPy's "uninstall all … and reinstall
/// just one", NCCL's `/dev/shm` in containers (its troubleshooting guide: `--shm-size`,
/// `--ipc=host`); CUDA's start-up errors by their known causes (nvidia_uvm's state, a fork, HMM);
/// an uncorrectable ECC error and a lost GPU by the reset, reboot and hardware checks NVIDIA's
/// tools give. Other rows have no fix a line can name.
/// The driver (or its installer) named the legacy branch that still supports the GPU: that branch is the fix, as
/// NVIDIA's legacy GPU list gives it (https://www.nvidia.com/en-us/drivers/unix/legacy-gpu/).
fn legacy_fix(observed: &[&ObservedMessage]) -> FamilyFix {
    let Some(branch) = observed.iter().find_map(|m| m.values.get("legacy_branch")) else { return (None, None) };
    let words = format!(
        "Remove the current driver and install the {branch}.xx legacy branch, the newest that supports this GPU: \
         Ubuntu `sudo apt install nvidia-driver-{branch}` (where the release still ships it), otherwise NVIDIA's \
         {branch}.xx installer from https://www.nvidia.com/en-us/drivers/unix/legacy-gpu/ (it builds only for the \
         kernels of its time), or keep the integrated graphics and leave this GPU unused. A legacy branch gets no \
         CUDA newer than it had: check that the program still supports that CUDA."
    );
    (Some(words), None)
}

/// numba/numba:numba/cuda/cudadrv/libs.py@0.60.0 (get_cudalib: libNVVM from CUDA_HOME's nvvm/lib64, else the conda
/// or pip package's); numba's CUDA installation docs (the nvidia-cuda-nvcc wheel carries libNVVM).
fn numba_nvvm_fix(cx: &Ctx<'_>) -> String {
    format!(
        "numba loads libNVVM from the toolkit CUDA_HOME names (its nvvm/lib64 folder), else from the conda or pip \
         package that ships it. Set CUDA_HOME to one toolkit's root, a single path and not a `:` list (`export \
         CUDA_HOME=/usr/local/cuda-12.4`, where `ls $CUDA_HOME/nvvm/lib64` lists libnvvm.so), or install the \
         package: `{}` (conda: `conda install -c conda-forge cuda-nvcc`).",
        pip_install(cx, &["nvidia-cuda-nvcc-cu12"])
    )
}

/// The web UI's own torch cannot use the GPU: ask that Python which torch it has, then reinstall it or update the
/// driver (AUTOMATIC1111/stable-diffusion-webui modules/launch_utils.py: `--reinstall-torch` and TORCH_COMMAND).
fn webui_torch_fix(cx: &Ctx<'_>) -> String {
    const ASK: &str = "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())";
    let unix = cmd(cx, "venv/bin/python", ["-c", ASK]);
    // The Windows form in PowerShell, whatever shell the text's machine is thought to use: the web UI is most often
    // run there. Its words are constants, so they always quote.
    let windows = ShellCommand::new("venv\\Scripts\\python.exe")
        .args(["-c", ASK])
        .render(gpu_doctor_model::shell::Shell::PowerShell)
        .unwrap_or_default();
    let asked = match cx.os {
        OsFamily::Windows => format!("`{windows}`"),
        OsFamily::Linux | OsFamily::Macos => format!("`{unix}`"),
        _ => format!("`{unix}` (in Windows' PowerShell: `{windows}`)"),
    };
    format!(
        "Ask the web UI's own Python which torch it has: {asked} in the web UI's folder. A version ending `+cpu` (CUDA \
         None) is the CPU build: delete the `venv` folder, or add `--reinstall-torch` to COMMANDLINE_ARGS once, so the \
         launcher installs its CUDA build (TORCH_COMMAND names another). A CUDA build that prints False needs a driver \
         whose CUDA level (`nvidia-smi`'s header) is at or above that CUDA. Do not add `--skip-torch-cuda-test`: it \
         runs everything on the CPU."
    )
}

/// Ultralytics' device check (ultralytics/utils/torch_utils.py, select_device): the lines it prints after the
/// error (is_available(), device_count(), CUDA_VISIBLE_DEVICES) say which; with no GPU seen, its pointer to
/// pytorch.org's install instructions (a CUDA build of torch); else indices nvidia-smi lists, or `device=cpu`.
fn ultralytics_device_words(cx: &Ctx<'_>, observed: &[&ObservedMessage]) -> String {
    let asked = observed.iter().find_map(|m| m.values.get("device")).map_or("the device asked for", String::as_str);
    format!(
        "Ask the Python that runs Ultralytics what torch sees, as the lines after the error print it: `{}`, and \
         `echo $CUDA_VISIBLE_DEVICES` before the run. is_available() False with a torch version ending `+cpu` is the \
         CPU-only torch: uninstall it (`{}`) and install the CUDA build from pytorch.org's index, `pip install torch \
         torchvision --index-url https://download.pytorch.org/whl/<cuXYZ>` for a CUDA the driver runs \
         (`nvidia-smi`'s header; https://pytorch.org/get-started/locally/). A CUDA build that prints False needs a \
         newer driver, or the GPUs given to the container. Ultralytics sets CUDA_VISIBLE_DEVICES to `device={asked}` \
         itself, so the indices are those `{}` lists: one not there hides every GPU (False and 0 as well) and too \
         few leave device_count() short; pass indices it lists, or `device=cpu`.",
        cmd(
            cx,
            "python",
            ["-c", "import torch; print(torch.__version__, torch.cuda.is_available(), torch.cuda.device_count())"]
        ),
        cmd(cx, "pip", ["uninstall", "-y", "torch", "torchvision"]),
        cmd(cx, "nvidia-smi", ["-L"])
    )
}

/// cuBLAS's handle without memory (pytorch/pytorch aten/src/ATen/cuda/CublasHandlePool.cpp: cublasCreate at the first
/// cuBLAS call on a device), so the GPU's memory was full then: what holds it, and a smaller share.
fn cublas_alloc_words(cx: &Ctx<'_>) -> String {
    format!(
        "The GPU's memory was full when cuBLAS started: `{}` lists what holds it. End other processes on that GPU, and \
         shrink the program's own share (a smaller batch size or model, or spread it over the GPUs it was meant for); \
         on several GPUs check which one the program uses (`cuda:N`, CUDA_VISIBLE_DEVICES).",
        cmd(cx, "nvidia-smi", ["--query-compute-apps=pid,process_name,used_memory", "--format=csv"])
    )
}

/// The scheduler's `Insufficient nvidia.com/gpu` (kubernetes/kubernetes noderesources/fit.go: allocatable less
/// requested below the pod's request): what the nodes advertise, then NVIDIA's device plugin where they advertise
/// none (its README's Quick Start, as the `containers.kubernetes_device_plugin_missing` rule deploys it).
fn scheduler_gpu_words(cx: &Ctx<'_>) -> String {
    format!(
        "`{}` shows, per node, nvidia.com/gpu under Capacity and Allocatable and how many the pods there request \
         (Allocated resources). No nvidia.com/gpu on the GPU nodes: NVIDIA's device plugin is not running there; \
         deploy it as its README's Quick Start does, `{}` (or the Helm chart nvdp/nvidia-device-plugin, or the GPU \
         Operator), with the NVIDIA Container Toolkit as the nodes' default runtime, and read its pod's log (the static manifest's: `{}`). \
         Allocatable below Capacity: the plugin marked GPUs unhealthy (the node's Xid errors). All requested \
         already: the GPUs are taken; the pod waits, or asks for fewer (its nvidia.com/gpu limit), or more GPU nodes \
         are needed.",
        cmd(cx, "kubectl", ["describe", "node"]),
        cmd(cx, "kubectl", ["create", "-f", super::containers::DEVICE_PLUGIN_YML]),
        cmd(cx, "kubectl", ["logs", "-n", "kube-system", "daemonset/nvidia-device-plugin-daemonset"])
    )
}

/// jax and jaxlib out of step: jax-ml/jax setup.py (jax requires a jaxlib of its own release; the `cudaNN` extras
/// pin it with the CUDA plugin) and docs/installation.md (`pip install --upgrade "jax[cuda13]"`).
fn jaxlib_pair_words(cx: &Ctx<'_>) -> String {
    format!(
        "jax and jaxlib are released together: upgrade them as a pair, after removing a jaxlib left from another index \
         or package (`{}`). {} Without a GPU: `{}`.",
        cmd(cx, "pip", ["uninstall", "-y", "jaxlib"]),
        jax_builds(cx),
        pip_install(cx, &["--upgrade", "jax", "jaxlib"])
    )
}

/// A jaxlib newer than jax: the pair as above, or, where a program pins this jax, a jaxlib no newer than it (jax's
/// own requirement, `jaxlib >=minimum, <=jax`, in jax-ml/jax setup.py).
fn jaxlib_newer_words(cx: &Ctx<'_>, known: &KnownMessage) -> String {
    let jax = cx.s.messages.iter().filter(|m| m.id == known.id).find_map(|m| m.values.get("jax"));
    let pinned = jax.map_or_else(String::new, |v| {
        format!(
            " Where the program pins jax {v}, install a jaxlib no newer than it instead: `{}`.",
            pip_install(cx, &[&format!("jaxlib<={v}")])
        )
    });
    format!("{}{pinned}", jaxlib_pair_words(cx))
}

/// The fix of a driver branch older than the kernel it is built for (modpost's GPL-only symbol).
fn newer_branch_fix(cx: &Ctx<'_>) -> String {
    format!(
        "This NVIDIA driver branch is older than the kernel it is being built for. Install a driver branch released \
             for that kernel (the distribution's current NVIDIA driver package, or NVIDIA's newest from \
             https://www.nvidia.com/drivers), then let DKMS build it: `{}`; until then boot the previous kernel, whose \
             module is still installed.",
        cmd(cx, "sudo", ["dkms", "autoinstall"])
    )
}

/// PaddlePaddle's device count failed at start (init.cc): the three causes, each with the command that tells it,
/// and the driver's CUDA level where the text gives the driver.
fn paddle_no_gpu_words(cx: &Ctx<'_>) -> String {
    let level = cx.driver_cuda().map_or_else(String::new, |c| format!(" (the driver here supports CUDA up to {c})"));
    format!(
        "`{}` shows whether a driver answers and the CUDA it supports{level}; `{}` the CUDA the installed \
         paddlepaddle-gpu was built with. A build for a newer CUDA than the driver's needs a driver update, or the \
         paddlepaddle-gpu build for the driver's CUDA (Paddle's install page lists one per CUDA); no driver answering \
         needs the driver; and `echo $CUDA_VISIBLE_DEVICES` must name GPUs the machine has (unset it to use them all).",
        cmd(cx, "nvidia-smi", []),
        cmd(cx, "python", ["-c", "import paddle; print(paddle.version.cuda())"])
    )
}

/// NVRTC dlopens libnvrtc-builtins of its own release at run time, by the loader's path alone.
fn nvrtc_builtins_words(cx: &Ctx<'_>) -> String {
    format!(
        "NVRTC loads libnvrtc-builtins of its own release at run time from the loader's path: `{}` shows which \
         copies the loader knows. Put the folder that holds the builtins beside the libnvrtc the program uses on \
         LD_LIBRARY_PATH (a toolkit's lib64; a pip `nvidia-cuda-nvrtc-cuNN` wheel's nvidia/cuda_nvrtc/lib), or \
         install the missing file of that release (the toolkit's cuda-nvrtc package, or the same nvidia-cuda-nvrtc \
         wheel version).",
        cmd(cx, "ldconfig", ["-p"])
    )
}

/// JAX up to 0.4.16 prints the same fallback for a CPU-only jaxlib as for a GPU backend that failed; the failure
/// prints its own line first (jax-ml/jax:jax/_src/xla_bridge.py@jax-v0.4.16, backends()). The CUDA builds'
/// names from JAX's installation page: `jax[cuda12]` from 0.4.26, `jax[cuda12_pip]`/`jax[cuda11_pip]` with the
/// jax_cuda_releases page before it.
fn jax_fallback_words(cx: &Ctx<'_>) -> String {
    format!(
        "Unless a line before it says why JAX's GPU backend failed, the jaxlib installed is the CPU build (`pip \
             install jax` alone installs it). Install JAX with its CUDA build: `{}` (JAX 0.4.26 or newer); before \
             0.4.26, `jax[cuda12_pip]` or `jax[cuda11_pip]` from {}, the CUDA major the driver runs. `{}` then lists \
             the GPU.",
        cmd(cx, "python", ["-m", "pip", "install", "-U", "jax[cuda12]"]),
        "https://storage.googleapis.com/jax-releases/jax_cuda_releases.html",
        cmd(cx, "python", ["-c", "import jax; print(jax.devices())"])
    )
}

/// facebookresearch/xformers README (installing: the wheels on PyTorch's index are built per torch release
/// and CUDA variant; `python -m xformers.info` prints the build).
fn xformers_words(cx: &Ctx<'_>) -> String {
    format!(
        "Each xFormers wheel is built for one torch release and CUDA variant: install the one for the installed \
             torch from PyTorch's index of its CUDA variant (for torch 2.5.1+cu121: `{}`), or install the torch \
             release this xFormers names; `{}` then shows which build loaded.",
        cmd(
            cx,
            "python",
            ["-m", "pip", "install", "-U", "xformers", "--index-url", "https://download.pytorch.org/whl/cu121"]
        ),
        cmd(cx, "python", ["-m", "xformers.info"])
    )
}

/// A compiled module built against a newer NumPy C-API than the NumPy installed (`numpy.older_than_build`).
fn numpy_upgrade_words(cx: &Ctx<'_>) -> String {
    format!(
        "Upgrade NumPy to at least the release the module was built against: `{}` (`{}` shows what is installed); \
         where another package pins NumPy lower, upgrade that one too, or install the module's build for the older \
         NumPy.",
        pip_install(cx, &["--upgrade", "numpy"]),
        cmd(cx, "python", ["-c", "import numpy; print(numpy.__version__)"])
    )
}

/// A PyTorch DataLoader worker's bus error of a full /dev/shm.
const TORCH_SHM_WORDS: &str = "Give the container a larger /dev/shm: `docker run --shm-size=8g …` or `--ipc=host` \
    (Docker's default is 64 MiB; on Kubernetes, an emptyDir of medium Memory mounted at /dev/shm); `df -h /dev/shm` \
    shows its size. Fewer DataLoader workers (`num_workers`) or smaller batches need less.";

/// A PaddlePaddle DataLoader worker's bus error of a full /dev/shm.
const PADDLE_SHM_WORDS: &str = "`df -h /dev/shm` shows its size and what is left: free it (a restart of a hosted \
    notebook's environment empties it) or give the container a larger one (`docker run --shm-size=8g …` or \
    `--ipc=host`). Or pass batches without shared memory: `paddle.io.DataLoader(..., use_shared_memory=False)`, or \
    fewer workers (`num_workers`).";

fn other_fix(cx: &Ctx<'_>, known: &KnownMessage) -> FamilyFix {
    let words = match known.id.as_str() {
        "torch.dataloader_shm_exhausted" => TORCH_SHM_WORDS.to_owned(),
        "paddle.dataloader_shm_exhausted" => PADDLE_SHM_WORDS.to_owned(),
        "cuda.devices_unavailable" => format!(
            "`{}` shows each GPU's compute mode: in Exclusive_Process another process holds the GPU (`nvidia-smi` \
             lists the processes), in Prohibited none may use it. Set it back to Default: `{}` (one GPU: add `-i N`).",
            cmd(cx, "nvidia-smi", ["--query-gpu=index,compute_mode", "--format=csv"]),
            cmd(cx, "sudo", ["nvidia-smi", "-c", "DEFAULT"])
        ),
        "cuda.system_not_ready" => format!(
            "On an NVSwitch system (HGX, DGX) NVIDIA Fabric Manager of the driver's exact version must run: `{}` \
             (`systemctl status nvidia-fabricmanager` says why it stopped; its package must match the driver's \
             version).",
            cmd(cx, "sudo", ["systemctl", "enable", "--now", "nvidia-fabricmanager"])
        ),
        "xformers.built_for_other_torch" => xformers_words(cx),
        "torchvision.operator_missing" | "torchvision.cuda_mismatch" => torchvision_words(cx),
        // NVRTC dlopens libnvrtc-builtins of its own release at run time, by the loader's path alone
        // (openmm/openmm#1485: "a library path issue"; NVIDIA/numba-cuda#196).
        "nvrtc.builtins_missing" => nvrtc_builtins_words(cx),
        "jax.no_gpu_fallback" => jax_fallback_words(cx),
        "cudnn.status_not_initialized" => dnn_init_words(cx),
        "torch.cublas_create_alloc_failed" => cublas_alloc_words(cx),
        "jax.jaxlib_too_old" => jaxlib_pair_words(cx),
        "jax.jaxlib_newer_than_jax" => jaxlib_newer_words(cx, known),
        "numba.nvvm_missing" => numba_nvvm_fix(cx),
        "numpy.older_than_build" => numpy_upgrade_words(cx),
        "numpy.compiled_against_numpy1" => format!(
            "Install NumPy 1 beside the module built against it: `{}`, or upgrade that module to a release built \
             against NumPy 2 (torch 2.3 and later).",
            pip_install(cx, &["numpy<2"])
        ),
        "cupy.multiple_packages" => {
            let major = text_cuda_major(cx).unwrap_or(12);
            format!(
                "Uninstall every CuPy package (`pip list` names them: cupy, cupy-cudaNNx) and install just the one for \
                 the CUDA major: `{}`, then `{}`.",
                cmd(cx, "pip", ["uninstall", "-y", "cupy", "cupy-cuda11x", "cupy-cuda12x", "cupy-cuda13x"]),
                pip_install(cx, &[format!("cupy-cuda{major}x").as_str()])
            )
        }
        "cuda.unknown_error" if cx.os != OsFamily::Windows => uvm_reload_words(cx),
        // Windows resets a display GPU whose kernel runs past its watchdog (TDR, 2 seconds by default) or whose
        // driver stopped, and CUDA then answers unknown error (AlexeyAB/darknet#1070: the display driver had
        // stopped; rogerallen/raytracinginoneweekendincuda#7: a long render, the screen black for a second).
        "cuda.unknown_error" => "On Windows CUDA's unknown error most often follows the display driver stopping or \
                                 being reset: a kernel that ran longer than Windows' display watchdog (TDR, 2 seconds \
                                 by default; the screen goes black for a moment), or a driver that crashed. Update or \
                                 clean-reinstall the NVIDIA driver (https://www.nvidia.com/drivers) and reboot; for \
                                 long kernels on the display GPU, split the work or raise TdrDelay \
                                 (HKLM\\System\\CurrentControlSet\\Control\\GraphicsDrivers, Microsoft's TDR registry keys)."
            .to_owned(),
        "cuda.initialization_error" if cx.os != OsFamily::Windows => format!(
            "CUDA could not start. In a process forked after its parent started CUDA (PyTorch's DataLoader workers, \
             multiprocessing) it never can: use the 'spawn' start method (`multiprocessing.set_start_method('spawn')`, \
             or DataLoader's `multiprocessing_context='spawn'`), or start CUDA in the children only. Otherwise, on \
             Linux kernels with HMM and NVIDIA's open kernel modules, nvidia_uvm's HMM support fails cuInit with this \
             error (CUDA 12.9 release notes, known issues): put `options nvidia_uvm uvm_disable_hmm=1` in \
             /etc/modprobe.d/nvidia-uvm.conf and reboot. After a suspend: {}",
            uvm_reload_words(cx)
        ),
        "cuda.ecc_uncorrectable" => format!(
            "The GPU's memory reported an uncorrectable ECC error and the work on it was lost. `{}` shows the error \
             counts and pending row remaps; reset the GPU with nothing running on it (`{}`) or reboot, which applies \
             them. If it comes back, the GPU's memory is failing: a hardware fault for the vendor's service (RMA).",
            cmd(cx, "nvidia-smi", ["-q", "-d", "ECC,ROW_REMAPPER"]),
            cmd(cx, "sudo", ["nvidia-smi", "-r", "-i", "N"])
        ),
        "nvml.gpu_is_lost" => format!(
            "The GPU fell off the bus (the kernel log's Xid 79): reboot to get it back. If it happens again, look at \
             its power (cables, the supply's capacity under load), the slot or riser and its temperature; `{}` lists \
             the events.",
            cmd(cx, "sudo", ["dmesg", "--level=err,warn"])
        ),
        // NVIDIA's CUDA installation guide for Linux, "System Requirements" (each release's supported gcc and
        // clang); nvcc's `--compiler-bindir`/`-ccbin` and `--allow-unsupported-compiler` (CUDA compiler driver guide).
        "nvcc.unsupported_host_compiler" => "This CUDA toolkit's nvcc refuses the host compiler (gcc, clang or Visual \
                                             Studio) as outside the versions its release supports. Build with a \
                                             supported one given to nvcc with `-ccbin` (`-ccbin g++-N`, N at or \
                                             below the version the message names; CMake: CUDAHOSTCXX or \
                                             CMAKE_CUDA_HOST_COMPILER; a setup.py build: CC and CXX), or install a \
                                             CUDA toolkit whose release supports this gcc (the CUDA installation \
                                             guide lists each release's). `-allow-unsupported-compiler` only skips \
                                             the check."
            .to_owned(),
        // JAX's installation docs (jax[cuda12] pulls nvidia-cuda-nvcc-cu12, whose ptxas XLA finds); NVIDIA's CUDA
        // images (the base and runtime flavours carry no compiler tools, devel does); XLA's --xla_gpu_cuda_data_dir.
        "xla.ptxas_not_found" => "Give XLA a ptxas: `python -m pip install nvidia-cuda-nvcc-cu12` (JAX: reinstall \
                                  `jax[cuda12]`, which brings it), or a CUDA toolkit with its bin folder on PATH (conda: \
                                  `conda install -c nvidia cuda-nvcc`); in a container, build from NVIDIA's -devel CUDA \
                                  image, since -base and -runtime carry no ptxas. TensorFlow can be pointed at a toolkit \
                                  with XLA_FLAGS=--xla_gpu_cuda_data_dir=<toolkit root>."
            .to_owned(),
        "nccl.system_error" => "Run it again with `NCCL_DEBUG=INFO` (the WARN line before the error names the call \
                                that failed). In a container the usual one is NCCL's shared memory: start it with \
                                `--ipc=host` or `docker run --shm-size=1g …` (`df -h /dev/shm` shows its size; on \
                                Kubernetes, an emptyDir of medium Memory mounted at /dev/shm)."
            .to_owned(),
        "nccl.shm_too_small" => "Give the container a larger /dev/shm: `docker run --shm-size=1g …` or `--ipc=host` \
                                 (NCCL's troubleshooting guide); on Kubernetes, an emptyDir of medium Memory mounted \
                                 at /dev/shm."
            .to_owned(),
        _ => return (None, None),
    };
    (Some(words), None)
}

/// torchvision's operators missing from the torch beside it (`torchvision::nms does not exist`, or no CUDA kernel
/// for it): the two come from different builds. torchvision's wheels pin the one torch they were built for
/// (pytorch.toml's companions), so installing the pair together from one index mends it: the torchvision of the
/// installed torch's line where the text shows torch (pytorch/vision's README table; the previous-versions page
/// installs them together).
fn torchvision_words(cx: &Ctx<'_>) -> String {
    let torch = cx.frameworks().find(|(_, f)| f.name == "torch").map(|(_, f)| f);
    // The installed torch kept, with the torchvision of its line (`2.5.1+cu121` → torch==2.5.1 torchvision==0.20.1).
    let pinned = torch.and_then(|t| {
        let row = cx.kb.pytorch.release(&t.version)?;
        let version = t.version.split('+').next().unwrap_or(&t.version);
        Some((
            format!("torch=={version}"),
            format!("torchvision=={}", row.torchvision.as_deref()?),
            row.version.clone(),
        ))
    });
    let pair = pinned
        .as_ref()
        .map(|(t, v, line)| format!(" (torch {line} goes with {}; {t} keeps yours)", v.replace("==", " ")));
    let (torch_req, vision_req) =
        pinned.map_or_else(|| ("torch".to_owned(), "torchvision".to_owned()), |(t, v, _)| (t, v));
    // The index of torch's own CUDA, where torchvision's check printed it (`PyTorch has CUDA Version=12.1`).
    let index =
        cx.s.messages
            .iter()
            .find_map(|m| {
                m.values.get("torch_cuda")?.parse::<CudaVersion>().ok().filter(|_| m.id == "torchvision.cuda_mismatch")
            })
            .map(|c| format!("cu{}{}", c.major, c.minor))
            // Else torch's own local tag (`2.5.1+cu121`, `+cpu`).
            .or_else(|| {
                let tag = torch?.version.split_once('+')?.1;
                (tag == "cpu" || tag.starts_with("cu")).then(|| tag.to_owned())
            });
    let url = format!("https://download.pytorch.org/whl/{}", index.as_deref().unwrap_or("cuXYZ"));
    format!(
        "torchvision and torch come from different builds: install them together, from the one index of the \
         build you want, so pip takes the torchvision made for that torch{}: `{}`{}. `{}` shows the pair.",
        pair.unwrap_or_default(),
        cmd(
            cx,
            "pip",
            ["install", "--force-reinstall", torch_req.as_str(), vision_req.as_str(), "--index-url", url.as_str()]
        ),
        if index.is_none() { " (cuXYZ: the CUDA build torch has, or `cpu`)" } else { "" },
        cmd(cx, "python", ["-c", "import torch, torchvision; print(torch.__version__, torchvision.__version__)"])
    )
}

/// An NVIDIA device node a container names missing on the host: nvidia-modprobe creates the nodes and loads the
/// modules as root (`-u` nvidia-uvm and its nodes, `-c=0` the first GPU's; NVIDIA/nvidia-modprobe's usage), as
/// nvidia-smi does for the GPU nodes; modules-load.d loads nvidia-uvm at every boot (modules-load.d(5));
/// NVIDIA/nvidia-docker#288 (flx42: a fresh `nvidia-docker run` loads it, an old container's spec does not).
fn device_node_words(cx: &Ctx<'_>) -> String {
    format!(
        "Load the module and create its device nodes: `{}` (nvidia-uvm and /dev/nvidia-uvm*; running `nvidia-smi` \
         once creates the GPUs' nodes), then start the container again. To have them at every boot, load nvidia-uvm \
         then: put `nvidia-uvm` in /etc/modules-load.d/nvidia-uvm.conf.",
        cmd(cx, "sudo", ["nvidia-modprobe", "-u", "-c=0"])
    )
}

/// CUDA's unknown error at start-up on Linux: the nvidia_uvm module lost its state (after a suspend
/// and resume) or its device files are missing (pop-os/default-settings#64 reloads it after resume;
/// ollama/ollama#2934 and pytorch/pytorch#49081 settle it the same way; NVIDIA's driver README,
/// "Configuring Power Management Support", for keeping it across suspend).
fn uvm_reload_words(cx: &Ctx<'_>) -> String {
    format!(
        "CUDA's unknown error at start-up most often means the nvidia_uvm module lost its state (after a suspend \
         and resume) or its device file /dev/nvidia-uvm is missing. Stop the programs that use the GPU, then reload \
         it: `{}`, then `{}` (or reboot); `{}` creates the device files where they are missing. In a container, do \
         this on the host. To keep CUDA working across suspend, enable NVIDIA's nvidia-suspend and nvidia-resume \
         services with the module option NVreg_PreserveVideoMemoryAllocations=1.",
        cmd(cx, "sudo", ["rmmod", "nvidia_uvm"]),
        cmd(cx, "sudo", ["modprobe", "nvidia_uvm"]),
        cmd(cx, "sudo", ["nvidia-modprobe", "-u", "-c", "0"])
    )
}

/// The program that printed a row: its `printed_by` package (`torch`), else the first word of its
/// id (`paddle.not_compiled_with_cuda` → `paddle`).
/// Rebuilding a PyTorch extension with its CUDA code, or installing the project's CUDA wheel: open-mmlab/mmcv
/// README.md@v1.3.7 (mmcv-full from download.openmmlab.com by CUDA and torch), rusty1s/pytorch_scatter README.md@2.1.1
/// (data.pyg.org's index by torch and CUDA; FORCE_CUDA=1), facebookresearch/detectron2 setup.py@v0.6 (FORCE_CUDA).
fn extension_cuda_words(cx: &Ctx<'_>) -> String {
    // The torch build the text shows names PyTorch Geometric's index page.
    let torch = cx.frameworks().find(|(_, f)| f.name == "torch").map(|(_, f)| f.version.clone());
    let pyg = match torch.as_deref().and_then(|v| v.split_once('+')) {
        Some((version, tag)) if tag.starts_with("cu") => format!("https://data.pyg.org/whl/torch-{version}+{tag}.html"),
        _ => "https://data.pyg.org/whl/torch-<torch version>+<cuXYZ>.html".to_owned(),
    };
    format!(
        "Rebuild the extension where its build sees CUDA: a CUDA build of torch (`{}` prints a version, not None) and \
         CUDA_HOME at a toolkit of that CUDA major; where no GPU is visible while building (a Docker build), set `{}`. \
         Then reinstall it without the cache (`pip install --no-cache-dir --force-reinstall <package>`; MMCV with \
         MMCV_WITH_OPS=1). Or install the project's CUDA wheel for this torch and CUDA: MMCV's `pip install mmcv-full \
         -f https://download.openmmlab.com/mmcv/dist/<cu_version>/<torch_version>/index.html` (not a plain `pip install \
         mmcv-full`, which builds without CUDA where it sees none), PyTorch Geometric's `pip install torch-scatter -f \
         {pyg}` (an index page exists only for released torch and CUDA pairs).",
        cmd(cx, "python", ["-c", "import torch; print(torch.version.cuda)"]),
        fix::var_line(cx, "FORCE_CUDA", "1"),
    )
}

fn program(known: &KnownMessage) -> &str {
    match &known.printed_by {
        Some(p) => p.package.as_str(),
        None => known.id.split('.').next().unwrap_or_default(),
    }
}

/// True when the text is about PyTorch: the row is PyTorch's, or the text lists torch or holds
/// another of PyTorch's messages.
fn torch_context(cx: &Ctx<'_>, known: &KnownMessage) -> bool {
    program(known) == "torch"
        || cx.frameworks().any(|(_, f)| f.name == "torch")
        || cx.s.messages.iter().any(|m| m.id.starts_with("torch."))
}

/// A command quoted for the machine's shell (its words hold no text of the machine).
fn cmd<const N: usize>(cx: &Ctx<'_>, program: &str, args: [&str; N]) -> String {
    fix::command(cx, &ShellCommand::new(program).args(args), false)
}

/// `python -m pip install REQUIREMENT…`, quoted.
fn pip_install(cx: &Ctx<'_>, requirements: &[&str]) -> String {
    let mut c = ShellCommand::new("python").args(["-m", "pip", "install"]);
    for r in requirements {
        c = c.arg(*r);
    }
    fix::command(cx, &c, false)
}

// ---------------------------------------------------------------------------------------------
// driver_too_old_for_runtime

/// A driver too old for a CUDA the text does not name: the newest driver for the GPU, the command
/// that shows the driver's CUDA level, and the other way out.
fn driver_fix(cx: &Ctx<'_>) -> FamilyFix {
    let check = cmd(cx, "nvidia-smi", []);
    let have = cx.driver_cuda().map_or_else(String::new, |c| format!(" (this one: CUDA up to {c})"));
    let words = format!(
        "Update the NVIDIA driver to the newest for this GPU (your distribution's driver packages, or \
         https://www.nvidia.com/drivers), then reboot. `{check}` prints in its header the CUDA level the driver \
         supports{have}: it must be at least the CUDA the program was built for. Or install a build of the program \
         for the CUDA that driver supports."
    );
    (Some(words), Some(PlanTarget::Driver { min_branch: None }))
}

// ---------------------------------------------------------------------------------------------
// cpu_only_build

/// The GPU build of the program that printed a CPU-only build's message, each from the project's
/// own install instructions: PyTorch's wheel index per CUDA (the chooser), JAX's `jax[cudaNN]`
/// extra (docs.jax.dev/en/latest/installation.html), onnxruntime-gpu
/// (onnxruntime.ai/docs/install: one of the two packages only), paddlepaddle-gpu
/// (paddlepaddle.org.cn/install/quick), faiss-gpu alone from the pytorch conda channel
/// (facebookresearch/faiss INSTALL.md), llama.cpp's `-DGGML_CUDA=ON` (ggml-org/llama.cpp
/// docs/build.md; llama-cpp-python's README passes it in `CMAKE_ARGS`), CTranslate2's CUDA wheels
/// (Linux x86-64 and Windows) or `-DWITH_CUDA=ON` (OpenNMT/CTranslate2 docs/installation.md),
/// sherpa-onnx's CUDA release archives or `-DSHERPA_ONNX_ENABLE_GPU=ON` (its release workflows).
/// ONNX Runtime refused through its C API (the row's `ep`) is a native library, not the Python
/// package: its GPU archive or NuGet package (onnxruntime.ai/docs/install).
fn gpu_build_fix(cx: &Ctx<'_>, program: &str, observed: &[&ObservedMessage]) -> FamilyFix {
    let native_ep = observed.iter().find_map(|m| m.values.get("ep"));
    let words = match program {
        "ort" | "onnxruntime" if let Some(ep) = native_ep => Some(format!(
            "The ONNX Runtime library this program loads or links was built without the {ep} execution provider (a \
             CPU build: the CPU package or archive, a static or minimal build). Use a GPU build of the native \
             library: the release archive `onnxruntime-linux-x64-gpu-<version>.tgz` or \
             `onnxruntime-win-x64-gpu-<version>.zip` (github.com/microsoft/onnxruntime/releases), the \
             Microsoft.ML.OnnxRuntime.Gpu NuGet package for .NET, or with Rust's ort crate its `cuda` feature and \
             a GPU library (ORT_DYLIB_PATH); from Python, `{}` then `{}`.",
            cmd(cx, "pip", ["uninstall", "-y", "onnxruntime", "onnxruntime-gpu"]),
            pip_install(cx, &["onnxruntime-gpu"])
        )),
        "torch" => super::arch::cuda_torch_for(cx).map(|choice| {
            format!("First remove the CPU-only torch: `{}`. {choice}", cmd(cx, "pip", ["uninstall", "-y", "torch"]))
        }),
        "jax" => Some(jax_builds(cx)),
        "ort" | "onnxruntime" => Some(format!(
            "Install ONNX Runtime's CUDA build alone (both packages install the same module): `{}`, then `{}`.",
            cmd(cx, "pip", ["uninstall", "-y", "onnxruntime", "onnxruntime-gpu"]),
            pip_install(cx, &["onnxruntime-gpu"])
        )),
        "paddle" | "paddlepaddle" => Some(format!(
            "Install PaddlePaddle's GPU build in place of the CPU one: `{}`, then `{}` (PaddlePaddle's install page \
             names the index of each CUDA version).",
            cmd(cx, "pip", ["uninstall", "-y", "paddlepaddle"]),
            pip_install(cx, &["paddlepaddle-gpu"])
        )),
        // dmlc/xgboost doc/install.rst (PyPI's wheels for Linux x86-64 and Windows carry CUDA; conda-forge's
        // variants by build string, `py-xgboost-gpu` before).
        "xgboost" => Some(format!(
            "Install XGBoost's CUDA build: from PyPI `{}` (its Linux x86-64 and Windows wheels carry CUDA; not \
             `xgboost-cpu`), or from conda-forge `{}` (older channels: `py-xgboost-gpu`).",
            pip_install(cx, &["xgboost"]),
            cmd(cx, "conda", ["install", "-c", "conda-forge", "py-xgboost=*=cuda*"])
        )),
        "faiss" => Some(format!(
            "Faiss's GPU classes are only in its GPU build; `faiss-cpu` and `faiss-gpu` install the same `faiss` \
             module, and the one installed last wins. Remove both, then install the GPU build alone: `{}` (or \
             `{}`), then `{}` (Faiss's INSTALL.md: the GPU packages are on the pytorch conda channel, Linux x86-64).",
            cmd(cx, "pip", ["uninstall", "-y", "faiss-cpu", "faiss-gpu"]),
            cmd(cx, "conda", ["remove", "faiss-cpu", "faiss-gpu"]),
            cmd(cx, "conda", ["install", "-c", "pytorch", "-c", "nvidia", "faiss-gpu"])
        )),
        "bitsandbytes" => Some(format!(
            "bitsandbytes picks its CUDA library by the CUDA torch reports: `{}` must print a CUDA version, not None. \
             With a CPU-only torch, install torch's CUDA build; then `{}`.",
            cmd(cx, "python", ["-c", "import torch; print(torch.version.cuda)"]),
            pip_install(cx, &["--upgrade", "bitsandbytes"])
        )),
        "llamacpp" => Some(format!(
            "Rebuild with llama.cpp's CUDA backend: llama-cpp-python with `{}` set, then `{}`; llama.cpp itself with \
             `{}`.",
            fix::var_line(cx, "CMAKE_ARGS", "-DGGML_CUDA=on"),
            pip_install(cx, &["--force-reinstall", "--no-cache-dir", "llama-cpp-python"]),
            cmd(cx, "cmake", ["-B", "build", "-DGGML_CUDA=ON"])
        )),
        "sherpa_onnx" => Some(format!(
            "This sherpa-onnx library is a CPU build (its ONNX Runtime has no CUDA provider). Use its CUDA build, for \
             Linux x64 and Windows x64 only: the release archive `sherpa-onnx-<version>-win-x64-cuda.tar.bz2` or \
             `sherpa-onnx-<version>-linux-x64-gpu.tar.bz2` (github.com/k2-fsa/sherpa-onnx/releases; newer releases \
             also name the CUDA and cuDNN, `-cuda-12.x-cudnn-9.x-`), whose DLLs or shared libraries (sherpa-onnx's \
             and onnxruntime's) replace those your binding's package ships (.NET, Go, Node.js); or build it with \
             `{}`. The CUDA and cuDNN its ONNX Runtime was built for must be installed and on PATH (Windows) or the \
             loader path.",
            cmd(cx, "cmake", ["-DSHERPA_ONNX_ENABLE_GPU=ON", ".."])
        )),
        "lightgbm" => Some(lightgbm_words(cx, observed)),
        "torch_extension" | "mmcv" => Some(extension_cuda_words(cx)),
        // opencv/opencv-python#398's maintainer: no CUDA wheels on PyPI; build locally with WITH_CUDA.
        "opencv" => Some(format!(
            "The opencv-python wheels on PyPI (and most packaged OpenCVs) are built without CUDA. Build OpenCV with it: \
             from source with `{}` and the contrib modules (`-DOPENCV_EXTRA_MODULES_PATH=<opencv_contrib>/modules`), or \
             as a wheel with `{}` set and `{}`; uninstall the PyPI wheels first (`{}`).",
            cmd(cx, "cmake", ["-DWITH_CUDA=ON", "-DOPENCV_DNN_CUDA=ON", ".."]),
            fix::var_line(cx, "CMAKE_ARGS", "-DWITH_CUDA=ON -DOPENCV_DNN_CUDA=ON"),
            pip_install(cx, &["--no-binary", "opencv-contrib-python", "opencv-contrib-python"]),
            cmd(cx, "pip", ["uninstall", "-y", "opencv-python", "opencv-contrib-python"])
        )),
        // facebookresearch/detectron2 setup.py (CUDA only with a GPU torch sees and CUDA_HOME, or FORCE_CUDA=1)
        // and INSTALL.md (the CUDA_HOME check; rebuild after `rm -rf build/ **/*.so`; MODEL.DEVICE='cpu').
        "detectron2" => Some(format!(
            "Rebuild Detectron2 with CUDA: its setup.py compiles the CUDA ops only where `{}` prints True and a \
             toolkit folder (a CUDA build of torch, CUDA_HOME set), or with `{}` where the build sees no GPU (a \
             container build). Then `{}` and `{}` (from a clone: `rm -rf build/ **/*.so`, then `python -m pip \
             install -e detectron2`). Rebuild it after every torch reinstall; on the CPU set MODEL.DEVICE='cpu'.",
            cmd(
                cx,
                "python",
                [
                    "-c",
                    "import torch; from torch.utils.cpp_extension import CUDA_HOME; print(torch.cuda.is_available(), CUDA_HOME)"
                ]
            ),
            fix::var_line(cx, "FORCE_CUDA", "1"),
            cmd(cx, "pip", ["uninstall", "-y", "detectron2"]),
            pip_install(cx, &["--no-cache-dir", "git+https://github.com/facebookresearch/detectron2.git"])
        )),
        "ctranslate2" => Some(format!(
            "PyPI's CTranslate2 wheels carry CUDA only for Linux x86-64 and Windows: there `{}`; on other platforms \
             (Linux AArch64: Jetson, Grace) build it from source with `{}`, or use device \"cpu\".",
            pip_install(cx, &["--force-reinstall", "ctranslate2"]),
            cmd(cx, "cmake", ["-DWITH_CUDA=ON", "-DWITH_CUDNN=ON", ".."])
        )),
        _ => None,
    };
    (words, None)
}

/// LightGBM's GPU learners (microsoft/LightGBM python-package/README.rst: the wheels' OpenCL learner on Windows
/// and Linux, the `cmake.define.USE_GPU=ON`/`USE_CUDA=ON` builds; docs/Installation-Guide.rst: no CUDA version on
/// Windows).
fn lightgbm_words(cx: &Ctx<'_>, observed: &[&ObservedMessage]) -> String {
    let cuda = observed.iter().any(|m| m.values.get("learner").is_some_and(|l| l == "CUDA"));
    let from_source = |option: &str| {
        pip_install(
            cx,
            &[
                "--force-reinstall",
                "--no-deps",
                "--no-binary",
                "lightgbm",
                "lightgbm",
                &format!("--config-settings=cmake.define.{option}=ON"),
            ],
        )
    };
    if cuda {
        format!(
            "LightGBM's CUDA learner (`device_type=\"cuda\"`) is only in a build from source with USE_CUDA, on Linux \
             (no wheel has it; Windows has no CUDA version, its GPU learner is `device_type=\"gpu\"`). With the \
             CUDA toolkit, CMake and gcc installed: `{}`.",
            from_source("USE_CUDA")
        )
    } else {
        format!(
            "LightGBM's GPU learner (`device_type=\"gpu\"`, OpenCL, whose runtime NVIDIA's driver brings) is in \
             PyPI's wheels for Windows and, from 4.0, Linux: `{}`. Elsewhere build it from source with Boost and \
             OpenCL installed: `{}` (its README adds OpenCL_INCLUDE_DIR and OpenCL_LIBRARY the same way); on Linux \
             the CUDA learner (`device_type=\"cuda\"`, `{}`) is the other way.",
            pip_install(cx, &["--upgrade", "lightgbm>=4"]),
            from_source("USE_GPU"),
            from_source("USE_CUDA")
        )
    }
}

/// `pip install -U "jax[cudaNN]"` for the newest plugin this driver runs, or each plugin with its
/// driver floor when the driver is unknown.
fn jax_builds(cx: &Ctx<'_>) -> String {
    let mut plugins: Vec<&gpu_doctor_kb::JaxPlugin> = cx.kb.jax.plugin.iter().collect();
    plugins.sort_by_key(|p| std::cmp::Reverse(p.cuda_major));
    let install = |extra: &str| pip_install(cx, &["--upgrade", &format!("jax[{extra}]")]);
    if let Some(level) = cx.driver_cuda()
        && let Some(p) = plugins.iter().find(|p| p.cuda_min <= level)
    {
        return format!(
            "Install JAX with its CUDA {} plugin, which this driver (CUDA up to {level}) runs: `{}`.",
            p.cuda_major,
            install(&p.extra)
        );
    }
    let choices: Vec<String> =
        plugins.iter().map(|p| format!("driver {} or newer: `{}`", p.linux_driver_min, install(&p.extra))).collect();
    format!("Install JAX with a CUDA plugin for the driver (nvidia-smi prints its CUDA level): {}.", choices.join("; "))
}

// ---------------------------------------------------------------------------------------------
// arch_not_in_build

/// A compute capability as a message prints it: `8.6`, `86` or `sm_86`.
fn parse_cc(text: &str) -> Option<ComputeCapability> {
    let t = text.trim().trim_start_matches("sm_").trim_start_matches("compute_");
    if let Ok(cc) = t.parse() {
        return Some(cc);
    }
    let digits: String = t.chars().take_while(char::is_ascii_digit).collect();
    if digits.len() < 2 || digits.len() > 3 {
        return None;
    }
    let (major, minor) = digits.split_at(digits.len() - 1);
    Some(ComputeCapability { major: major.parse().ok()?, minor: minor.parse().ok()? })
}

/// The GPUs' capabilities the message names (`cc`, `sm`), else those another line of the text
/// names (PyTorch's capability warning beside a kernel-image error), else the text's GPUs'.
fn named_capabilities(cx: &Ctx<'_>, observed: &[&ObservedMessage]) -> Vec<ComputeCapability> {
    let named = |messages: &mut dyn Iterator<Item = &ObservedMessage>| -> Vec<ComputeCapability> {
        messages.filter_map(|m| m.values.get("cc").or_else(|| m.values.get("sm"))).filter_map(|v| parse_cc(v)).collect()
    };
    let mut ccs = named(&mut observed.iter().copied());
    if ccs.is_empty() {
        ccs = named(&mut cx.s.messages.iter());
    }
    if ccs.is_empty() {
        ccs = cx.capabilities();
    }
    ccs.sort();
    ccs.dedup();
    ccs
}

/// The fix where no torch wheel for a CUDA the driver supports in full has machine code for `cc`: the wheel
/// of the lowest CUDA with it (the least driver update), its newest release, and the driver floor of its
/// CUDA major's minor-version compatibility; else a build from source. `list` is the TORCH_CUDA_ARCH_LIST
/// line.
fn no_wheel_for_this_driver(cx: &Ctx<'_>, cc: ComputeCapability, list: &str) -> String {
    match fix::lowest_cuda_wheel_words(cx, cc) {
        Some(words) => format!("{words} Built from source (torch or an extension): rebuild with `{list}`."),
        None => format!(
            "No torch wheel the knowledge base lists has machine code for {}: build torch from source with `{list}` \
             set (PyTorch's README, \"From Source\"), or run it on a GPU a wheel covers.",
            cc.sm(),
        ),
    }
}

/// vLLM's bfloat16 refusal: a dtype the GPU lacks, not a build without it; vLLM's own check names the way round
/// it (vllm/worker/worker.py, _check_if_gpu_supports_dtype: "use the float16 data type … `dtype` flag").
fn bf16_fix(observed: &[&ObservedMessage]) -> FamilyFix {
    let gpu = observed.iter().find_map(|m| m.values.get("gpu")).map_or("This GPU", String::as_str);
    (
        Some(format!(
            "{gpu} has no bfloat16: run the model in float16, `vllm serve <model> --dtype half` (in Python \
             `LLM(model=…, dtype=\"half\")`; in a front end such as LLaMA-Factory its vllm_dtype setting), or use a \
             GPU of compute capability 8.0 or newer. No other build of vLLM or PyTorch changes this."
        )),
        None,
    )
}

/// FlashAttention 2's capability check: below compute capability 8.0 no flash-attn 2 build runs, so the model
/// needs another attention (Dao-AILab/flash-attention README: Ampere, Ada or Hopper, FlashAttention 1.x for
/// Turing; transformers' `attn_implementation`); on a major above 9 the release predates 2.7.3, whose check
/// (csrc/flash_attn/flash_api.cpp, `cc_major >= 8`) takes every later GPU.
fn flash_attn_words(cx: &Ctx<'_>) -> String {
    let ccs = cx.capabilities();
    let upgrade = format!(
        "upgrade flash-attn to 2.7.3 or newer, whose check takes every GPU from compute capability 8.0 on: `{}` (it \
         builds for the GPU; xFormers and vLLM carry their own copy, so there upgrade them)",
        pip_install(cx, &["--upgrade", "flash-attn", "--no-build-isolation"])
    );
    let other = "FlashAttention 2 runs only on GPUs of compute capability 8.0 or newer (Ampere, Ada, Hopper and \
                 later), and no build of it runs below. Use another attention: in transformers load the model with \
                 `attn_implementation=\"sdpa\"` (PyTorch's scaled_dot_product_attention) or `\"eager\"`, elsewhere \
                 the program's setting that turns flash attention off; on Turing (T4, RTX 20xx) FlashAttention 1.x \
                 (`flash-attn<2`) still runs.";
    match ccs.as_slice() {
        [] => format!(
            "{other} On a GPU of compute capability 10.0 or newer (Blackwell) the release is older than \
                       2.7.3: {upgrade}."
        ),
        ccs if ccs.iter().all(|cc| cc.major >= 10) => {
            let sms: Vec<String> = ccs.iter().map(|cc| cc.sm()).collect();
            let mut words = format!("This GPU ({}) is newer than this FlashAttention release knows: ", sms.join(", "));
            words.push_str(&upgrade);
            words.push('.');
            words
        }
        _ => other.to_owned(),
    }
}

/// A build without machine code for the GPU: for PyTorch the chooser's build with machine code
/// for the GPU's capability (per driver line when the driver is unknown); for a compiler that does
/// not know the architecture, the command that lists the ones it knows; else a build for the
/// capability, or, with the GPU unknown, the commands that show the capability and the arch list.
fn arch_fix(cx: &Ctx<'_>, known: &KnownMessage, observed: &[&ObservedMessage]) -> FamilyFix {
    if known.id == "vllm.bf16_unsupported" {
        return bf16_fix(observed);
    }
    if known.id == "flash_attn.ampere_or_newer_only" {
        return (Some(flash_attn_words(cx)), None);
    }
    let ccs = named_capabilities(cx, observed);
    let torch = torch_context(cx, known);
    if known.id.starts_with("nvrtc.") {
        // NVRTC is loaded with the program's own CUDA build (PyTorch's wheel, CuPy's cupy-cudaNNx):
        // a build of a CUDA that knows the GPU brings one that knows it (CUDA's release notes
        // add each architecture; torch's wheels carry machine code only for those their CUDA knows).
        let torch = torch_for(cx, &ccs, "made with a CUDA that knows this GPU");
        let cupy = format!(
            "CuPy: upgrade it, as the cupy-cudaNNx package of the CUDA the driver runs (`{}`)",
            pip_install(cx, &["--upgrade", &format!("cupy-cuda{}x", text_cuda_major(cx).unwrap_or(12))])
        );
        let words = format!(
            "The NVRTC the program loaded (it comes with the program's CUDA build) is older than the GPU's \
             architecture: install a build of the program made with a newer CUDA. {}{cupy}.",
            torch.map_or_else(String::new, |t| format!("PyTorch: {t} "))
        );
        return (Some(words), None);
    }
    if torch && let [cc] = ccs.as_slice() {
        let list = fix::var_line(cx, "TORCH_CUDA_ARCH_LIST", &cc.to_string());
        let words = match build_for(cx, "torch", *cc) {
            // A build from source (torch or an extension) carries the architectures TORCH_CUDA_ARCH_LIST
            // names (PyTorch's README, "From Source"; torch.utils.cpp_extension).
            Some(wheel) => format!("{wheel} Built from source (torch or an extension): rebuild with `{list}`."),
            None => no_wheel_for_this_driver(cx, *cc, &list),
        };
        return (Some(words), None);
    }
    if torch {
        return (
            Some(format!(
                "Compare the GPU's compute capability with the architectures the torch build carries: `{}`. Install a \
                 torch build whose list holds the GPU's sm_XY (the same major, a minor at or below the GPU's), from \
                 the index of a CUDA the driver runs (https://pytorch.org/get-started/locally/).",
                cmd(
                    cx,
                    "python",
                    ["-c", "import torch; print(torch.cuda.get_device_capability(), torch.cuda.get_arch_list())"]
                )
            )),
            None,
        );
    }
    let compiler = ["nvcc.", "nvjitlink.", "triton.ptxas"].iter().any(|p| known.id.starts_with(p));
    if compiler {
        let arch = observed.iter().find_map(|m| m.values.get("arch").or_else(|| m.values.get("value")));
        let what = arch.map_or_else(|| "the GPU's architecture".to_owned(), |a| format!("`{a}`"));
        return (
            Some(format!(
                "The CUDA compiler in use does not know {what}: `{}` lists the architectures a toolkit knows and `{}` \
                 which toolkit is first on PATH. Build with a CUDA toolkit that lists it (a newer one for a new GPU, \
                 an older one for a GPU a release dropped), or a program build made with one.",
                cmd(cx, "nvcc", ["--list-gpu-arch"]),
                cmd(cx, "nvcc", ["--version"])
            )),
            None,
        );
    }
    match ccs.as_slice() {
        // A capability below every GPU the knowledge base has (1.x, which no CUDA since 6.5 runs) is no
        // GPU's answer but an old CUDA runtime's: another program's cudart found first on the library
        // path, such as PhysX's cudart64_65.dll (ollama/ollama#4008: "Compute Capability detected: 1.0"
        // on an RTX 3090, ollama's log naming the PhysX cudart it loaded).
        [cc] if cc.major < 2 && cx.kb.gpus.row(*cc).is_none() => (
            Some(format!(
                "Compute capability {cc} is not this GPU's: an old CUDA runtime answered, another program's copy \
                 found first on the library path (PATH on Windows, LD_LIBRARY_PATH on Linux), such as PhysX's \
                 cudart64_65.dll. Find which runtime the program loaded (ollama's log names it: `detected GPUs … \
                 library=`), and put the program's own folder first on PATH or remove the foreign folder from it; \
                 `{}` shows the GPU's real capability.",
                cmd(cx, "nvidia-smi", ["--query-gpu=name,compute_cap", "--format=csv"])
            )),
            None,
        ),
        [cc] => (Some(build_for_cc(cx, cc)), None),
        _ => (
            Some(format!(
                "`{}` shows each GPU's compute capability; install a build of the program with machine code for it, or \
                 build it from source for the GPU (CMake: `-DCMAKE_CUDA_ARCHITECTURES=XY`; nvcc: `-gencode \
                 arch=compute_XY,code=sm_XY`; PyTorch and its extensions: TORCH_CUDA_ARCH_LIST).{}",
                cmd(cx, "nvidia-smi", ["--query-gpu=name,compute_cap", "--format=csv"]),
                torch_ranges(cx)
            )),
            None,
        ),
    }
}

/// A build of the program for one GPU: where its machine code comes from, and the CUDA releases that can make it.
fn build_for_cc(cx: &Ctx<'_>, cc: &ComputeCapability) -> String {
    format!(
        "Install a build of the program with machine code for {} (or PTX of a lower compute_XY), or build it from \
         source for this GPU ({}; PyTorch and its extensions: TORCH_CUDA_ARCH_LIST).{}",
        cc.sm(),
        fix::build_flags(cc),
        fix::toolkit_bound(cx, cc)
    )
}

/// The architectures PyTorch's wheels carry per CUDA variant, each at the newest release the knowledge base
/// has of it (its rows): ` PyTorch's wheels carry sm_50 to sm_90 in cu126 (2.10), sm_70 to sm_120 in cu128
/// (2.10) …`, so a GPU newer than a build (Blackwell's sm_120) or one a build dropped (Pascal's sm_61) finds
/// the variant that holds it. The five newest CUDA variants.
fn torch_ranges(cx: &Ctx<'_>) -> String {
    let mut newest: Vec<&gpu_doctor_kb::TorchVariant> = Vec::new();
    for v in &cx.kb.pytorch.variant {
        match newest.iter_mut().find(|n| n.cuda.major_minor() == v.cuda.major_minor()) {
            Some(n) if v.line_key() > n.line_key() => *n = v,
            Some(_) => {}
            None => newest.push(v),
        }
    }
    newest.sort_by_key(|v| v.cuda.major_minor());
    let ranges: Vec<String> = newest
        .iter()
        .rev()
        .take(5)
        .rev()
        .filter_map(|v| {
            let (low, high) = (v.arch.iter().min()?, v.arch.iter().max()?);
            Some(format!("{} to {} in {} ({})", low.sm(), high.sm(), gpu_doctor_kb::index_tag(v.cuda), v.torch))
        })
        .collect();
    if ranges.is_empty() {
        return String::new();
    }
    format!(
        " PyTorch's wheels carry {}: install the variant whose range holds the GPU's sm_XY, from \
         https://download.pytorch.org/whl/<variant>, on a driver that runs its CUDA.",
        ranges.join(", ")
    )
}

// ---------------------------------------------------------------------------------------------
// cudnn_missing_or_mismatch and missing libraries

/// The CUDA major the text's builds are for (a framework's `+cuXYZ`, a pip `-cuNN` wheel); `None`
/// when it names none.
fn text_cuda_major(cx: &Ctx<'_>) -> Option<u32> {
    let builds = cx.frameworks().filter_map(|(_, f)| build_cuda(f)).map(|(c, _)| c.major);
    let wheels = cx.envs().iter().flat_map(|e| e.cuda_wheels.iter()).filter_map(wheel_cuda_major);
    builds.chain(wheels).max()
}

/// What cuDNN 8.3 to 8.9 need on Windows beside their own DLLs (NVIDIA's cuDNN 8 installation guide for
/// Windows, "Installing Zlib": zlibwapi.dll, which cuDNN does not ship, in a folder on PATH).
const ZLIB: &str = "cuDNN 8.3 to 8.9 on Windows load zlibwapi.dll (zlib), which cuDNN does not ship: download it as \
                    NVIDIA's cuDNN 8 installation guide for Windows says (\"Installing Zlib\") and put it in a folder on \
                    PATH, such as the CUDA toolkit's bin; cuDNN 9 needs no zlib";

/// A library of NVIDIA's named without a major (`libnvrtc.so`, `libcuda.so`'s kind of name for a
/// toolkit library): the development link that only a toolkit's `-dev` packages install, which a
/// program opening that name needs (cuDNN 8's runtime-fusion engine opens `libnvrtc.so`). Its base,
/// when the name is one of NVIDIA's libraries.
fn unversioned_library(observed: &[&ObservedMessage]) -> Option<(String, String)> {
    observed.iter().find_map(|m| {
        let lib = m.values.get("library")?.trim();
        let base = lib.rsplit('/').next()?.strip_prefix("lib")?.strip_suffix(".so")?;
        families::library_wheel(base).map(|_| (lib.to_owned(), base.to_owned()))
    })
}

/// An NVIDIA library named by a loader line: its base (`cudnn` for every cuDNN sub-library,
/// `cublasLt`, `cudart`) and soname major, and whether it is a Windows DLL. `libcudnn_ops_infer.so.8`
/// → (`cudnn`, 8, false); `cudnn_ops64_9.dll` → (`cudnn`, 9, true); `cublas64_12.dll` → (`cublas`, 12,
/// true).
fn library_parts(name: &str) -> Option<(String, u32, bool)> {
    let file = name.trim().rsplit(['/', '\\']).next()?;
    let (stem, major, dll) = if let Some(stem) = file.strip_prefix("lib") {
        let (stem, rest) = stem.split_once(".so.")?;
        let major = rest.split('.').next()?.parse::<u32>().ok()?;
        (stem, major, false)
    } else {
        let stem = file.strip_suffix(".dll").or_else(|| file.strip_suffix(".DLL"))?;
        let (stem, major) = stem.rsplit_once('_')?;
        (stem.strip_suffix("64")?, major.parse::<u32>().ok()?, true)
    };
    let base = if stem.starts_with("cudnn") { "cudnn" } else { stem };
    families::library_wheel(base).map(|_| (base.to_owned(), major, dll))
}

/// The first NVIDIA library a message's values name (`library`, `libraries`, `dll`), parsed.
fn named_library(observed: &[&ObservedMessage]) -> Option<(String, String, u32, bool)> {
    observed.iter().find_map(|m| {
        ["library", "libraries", "dll"].iter().filter_map(|k| m.values.get(*k)).find_map(|v| {
            v.split([',', ' ', '{', '}'])
                .filter(|s| !s.is_empty())
                .find_map(|lib| library_parts(lib).map(|(base, major, dll)| (lib.to_owned(), base, major, dll)))
        })
    })
}

/// The pip requirement that ships `base` of soname major `major`: cuDNN's wheel for the text's CUDA
/// major (12 when the text names none: NVIDIA publishes `nvidia-cudnn-cu12` for cuDNN 8.9 and 9),
/// the toolkit libraries' wheel for that CUDA major (`families::library_requirement`), else the
/// wheel for the text's CUDA major.
///
/// No wheel for a library of a CUDA before 11 (`libcudart.so.10.2`: NVIDIA's wheels start at CUDA 11), and
/// none for a library numbered apart from CUDA (`libcufft.so.10`) where the text names no CUDA major: its
/// soname does not say which CUDA's wheel holds it.
fn library_requirement(cx: &Ctx<'_>, base: &str, major: u32) -> Option<String> {
    let text_cuda = text_cuda_major(cx);
    let cuda = text_cuda.unwrap_or(12);
    if base == "cudnn" {
        return (major >= 8).then(|| format!("nvidia-cudnn-cu{cuda}=={major}.*"));
    }
    if families::is_cuda_numbered(base) {
        return families::library_requirement(base, major);
    }
    let wheel = families::library_wheel(base)?;
    text_cuda.map(|cuda| format!("{wheel}-cu{cuda}"))
}

/// The Python module whose folder holds a wheel's libraries: `nvidia-cudnn-cu12` → `nvidia.cudnn.lib`
/// (the CUDA 12 wheels' layout, `site-packages/nvidia/<name>/lib`; faster-whisper's README sets
/// LD_LIBRARY_PATH from `nvidia.cublas.lib` and `nvidia.cudnn.lib` this way).
fn wheel_lib_module(requirement: &str) -> Option<String> {
    let name = requirement.split(['=', '>', '<']).next()?;
    let base = families::LIBRARY_WHEELS.iter().map(|(_, w)| *w).find(|w| name.starts_with(w))?;
    let cuda_12 = name.ends_with("-cu12") || name.ends_with("-cu11");
    cuda_12.then(|| format!("nvidia.{}.lib", base.trim_start_matches("nvidia-").replace('-', "_")))
}

/// A library of NVIDIA's that the loader did not find: the package that ships it for its major,
/// and how the loader finds it. `None` when the message names no such library.
fn library_fix(cx: &Ctx<'_>, observed: &[&ObservedMessage]) -> Option<FamilyFix> {
    let Some((lib, base, major, dll)) = named_library(observed) else {
        let (lib, base) = unversioned_library(observed)?;
        let name = fix::word(cx, &lib);
        return Some((
            Some(format!(
                "{name} has no major in its name: it is the development link (lib{base}.so → lib{base}.so.N) that \
                 only a CUDA toolkit's development packages install (pip wheels and runtime packages ship \
                 lib{base}.so.N alone), and the program opens that name. Make the link beside the versioned copy it \
                 should use (`ln -s lib{base}.so.N lib{base}.so` in that folder: the wheel's nvidia/…/lib, or \
                 torch/lib, whose copy has a hash in its name), or install the toolkit's `-dev` package of that \
                 library."
            )),
            None,
        ));
    };
    // The soname (`libcudnn_ops.so.9` of `libcudnn_ops.so.9.1.0`) is what the loader cache lists. Before CUDA
    // 11 the CUDA-numbered libraries carried the CUDA release whole (`libcudart.so.10.0`), which is their soname.
    let lib = match lib.split_once(".so.") {
        Some((_, rest)) if major < 11 && families::is_cuda_numbered(&base) && rest.split('.').count() == 2 => lib,
        Some((stem, rest)) => format!("{stem}.so.{}", rest.split('.').next().unwrap_or(rest)),
        None => lib,
    };
    let name = fix::word(cx, &lib);
    let Some(requirement) = library_requirement(cx, &base, major) else {
        // No wheel holds it (a CUDA before 11, or a library the text does not tie to a CUDA major): the toolkit.
        let check = cmd(cx, "ldconfig", ["-p"]);
        let release = lib.split_once(".so.").map_or(String::new(), |(_, v)| format!(" ({v} in its name)"));
        return Some((
            Some(format!(
                "`{check} | grep -F {name}` shows whether the loader finds it. Install the CUDA toolkit release that \
                 ships {name}{release} (https://developer.nvidia.com/cuda-toolkit-archive) and add its library folder \
                 to LD_LIBRARY_PATH, or install a build of the program for the CUDA release you have."
            )),
            None,
        ));
    };
    let install = pip_install(cx, &[requirement.as_str()]);
    if dll || cx.os == OsFamily::Windows {
        return Some((
            Some(format!(
                "{name} is not in any folder on PATH. Install the package that ships it: `{install}` (or NVIDIA's \
                 installer for that {} release), and put the folder that holds the DLL (the wheel's `bin` folder under \
                 site-packages\\nvidia, or the toolkit's `bin`) on PATH.{}",
                if base == "cudnn" { format!("cuDNN {major}") } else { "CUDA".to_owned() },
                if base == "cudnn" && major == 8 {
                    format!(" Where the DLL is there and still does not load (Windows' error 126): {ZLIB}.")
                } else {
                    String::new()
                }
            )),
            None,
        ));
    }
    let check = cmd(cx, "ldconfig", ["-p"]);
    let path = match wheel_lib_module(&requirement) {
        Some(module) => format!(
            "let the loader find the wheel's copy: `export LD_LIBRARY_PATH=\"$(python -c 'import os, {module} as m; \
             print(os.path.dirname(m.__file__))'):$LD_LIBRARY_PATH\"`"
        ),
        None => {
            "add the folder that holds it to LD_LIBRARY_PATH (or to /etc/ld.so.conf.d, then `sudo ldconfig`)".to_owned()
        }
    };
    let (what, other) = if base == "cudnn" {
        // NVIDIA's cuDNN install guide (Linux, package manager): `libcudnn8` for cuDNN 8,
        // `libcudnn9-cuda-12` for cuDNN 9 of CUDA 12; conda-forge's `cudnn` package.
        let apt = if major >= 9 {
            format!("libcudnn{major}-cuda-{}", text_cuda_major(cx).unwrap_or(12))
        } else {
            format!("libcudnn{major}")
        };
        (
            format!("cuDNN {major}"),
            format!(
                "NVIDIA's apt package `{apt}`, or in conda `{}`",
                cmd(cx, "conda", ["install", "-c", "conda-forge", "cudnn"])
            ),
        )
    } else {
        if families::is_cuda_numbered(&base) {
            (format!("{base} of CUDA {major}"), format!("the CUDA {major} toolkit"))
        } else {
            (format!("{base} (soname {major})"), "the CUDA toolkit that ships it".to_owned())
        }
    };
    Some((
        Some(format!(
            "`{check} | grep -F {name}` shows whether the loader finds it. Install {what} where it is missing: \
             `{install}` (or {other}), then {path}."
        )),
        None,
    ))
}

/// A cuDNN version as frameworks print it: `(8, 5, 0)`, `8.9.4`, `8500` (8.5.0), `90100` (9.1.0);
/// major and minor.
pub(super) fn parse_cudnn(text: &str) -> Option<(u32, u32)> {
    let parts: Vec<u32> =
        text.split(|c: char| !c.is_ascii_digit()).filter(|p| !p.is_empty()).filter_map(|p| p.parse().ok()).collect();
    match parts.as_slice() {
        [n] if *n >= 10_000 => Some((n / 10_000, n % 10_000 / 100)),
        [n] if *n >= 1_000 => Some((n / 1_000, n % 1_000 / 100)),
        [major, minor, ..] => Some((*major, *minor)),
        _ => None,
    }
}

/// A cuDNN older than the build or of another major: the cuDNN the build was compiled against
/// (`compiled`, `built`, ONNX Runtime's `cudnn_major`), installed for the text's CUDA, and the
/// older copy kept off the loader's path; for JAX, its own CUDA plugin, which brings its cuDNN.
/// PaddlePaddle opens `libcudnn.so` by that unversioned name (paddle/phi/backends/dynload/dynamic_loader.cc,
/// GetCUDNNDsoHandle; FLAGS_cudnn_dir first), which cuDNN's packages and pip wheels do not all ship: the folder must
/// be on the loader's path, with the unversioned name in it.
fn paddle_cudnn_words(cx: &Ctx<'_>) -> String {
    format!(
        "Install the cuDNN major PaddlePaddle's build was made for (its install page lists it per CUDA; `{}` prints \
         the build's CUDA and cuDNN), put its folder on the loader's path (`export \
         LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH`, or the folder `{} | grep -F libcudnn` shows), and \
         where only `libcudnn.so.N` is there give PaddlePaddle the unversioned name it opens: `ln -s libcudnn.so.N \
         libcudnn.so` in that folder.",
        cmd(cx, "python", ["-c", "import paddle; print(paddle.version.cuda(), paddle.version.cudnn())"]),
        cmd(cx, "ldconfig", ["-p"])
    )
}

fn cudnn_fix(cx: &Ctx<'_>, known: &KnownMessage, observed: &[&ObservedMessage]) -> FamilyFix {
    let value = |name: &str| observed.iter().find_map(|m| m.values.get(name));
    if known.id == "cudnn.zlib_dll_not_found" {
        return (Some(format!("{ZLIB}.")), None);
    }
    if known.id == "paddle.cudnn_not_loadable" {
        return (Some(paddle_cudnn_words(cx)), None);
    }
    if known.id == "xla.dnn_library_init_failed" {
        return (Some(dnn_init_words(cx)), None);
    }
    // soumith/cudnn.torch ffi.lua: it loads libcudnn.so.<R> by name, or the file CUDNN_PATH names.
    if known.id == "cudnn_torch.library_not_found" {
        let r = value("release").map_or("<R>", String::as_str);
        return (
            Some(format!(
                "Install cuDNN {r} (NVIDIA's cuDNN archive, for the CUDA Lua Torch was built with) and put its lib64 folder \
                 on the loader's path: `export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH` (or an \
                 /etc/ld.so.conf.d entry and `sudo ldconfig`); or name the file: `{}`.",
                fix::var_line(cx, "CUDNN_PATH", &format!("/usr/local/cuda/lib64/libcudnn.so.{r}"))
            )),
            None,
        );
    }
    if program(known) == "jax" {
        return (Some(jax_cudnn(cx, value("built").and_then(|v| parse_cudnn(v)))), None);
    }
    if known.id == "ort.cuda_provider_failed" && value("cudnn_major").is_none() {
        return (Some(ort_provider_load_words(cx, value("win_error").map(String::as_str))), None);
    }
    let cuda = value("cuda_major").and_then(|v| v.parse::<u32>().ok());
    let needed = value("compiled").or_else(|| value("built")).and_then(|v| parse_cudnn(v));
    let runtime = value("runtime").and_then(|v| parse_cudnn(v));
    match (needed, value("cudnn_major").and_then(|v| v.parse::<u32>().ok())) {
        (Some(needed), _) => (Some(install_cudnn(cx, needed, runtime, cuda)), None),
        (None, major) => {
            let cuda = cuda.or_else(|| text_cuda_major(cx)).unwrap_or(12);
            let requirement = major
                .map_or_else(|| format!("nvidia-cudnn-cu{cuda}"), |major| format!("nvidia-cudnn-cu{cuda}=={major}.*"));
            let check = cmd(cx, "ldconfig", ["-p"]);
            (
                Some(format!(
                    "Install the cuDNN the build was made for: `{}`, and keep older copies off the loader's path: \
                     `{check} | grep -F libcudnn` and `echo $LD_LIBRARY_PATH` show which copy is found first.",
                    pip_install(cx, &[requirement.as_str()])
                )),
                None,
            )
        }
    }
}

/// ONNX Runtime's CUDA provider library that did not load (its own line, without the cuDNN and CUDA
/// majors the Python package's line adds): the majors each onnxruntime-gpu release on PyPI is built
/// for (onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements: CUDA 12.x
/// is PyPI's default from 1.19, with cuDNN 9.x; the releases before it default to CUDA 11.8 with
/// cuDNN 8.x), the wheels that ship them, and the release built for a cuDNN 8 already installed.
fn ort_provider_load_words(cx: &Ctx<'_>, win_error: Option<&str>) -> String {
    let why = match win_error {
        Some("126") => " (Windows error 126: a DLL it links, cuDNN's or CUDA's, is not in any folder on PATH)",
        Some(_) => " (a DLL it links is missing or of another build)",
        None => " (the loader names the library it did not find)",
    };
    let cuda = text_cuda_major(cx).filter(|&c| c >= 12).unwrap_or(12);
    format!(
        "ONNX Runtime's CUDA provider library did not load{why}, so it runs on the CPU. Each onnxruntime-gpu \
         release needs one CUDA and one cuDNN major: on PyPI 1.19 and later are built for CUDA 12.x and cuDNN 9.x, \
         1.18 and earlier for CUDA 11.8 and cuDNN 8.x. Install the libraries of the installed release's majors \
         (`{}`, the cuDNN 9 and cuBLAS of CUDA {cuda}; from 1.21 on, `onnxruntime.preload_dlls()` called before the \
         session loads them from those wheels or from torch), or keep cuDNN 8 and install a release built for it: \
         `{}`.",
        pip_install(cx, &[&format!("nvidia-cudnn-cu{cuda}==9.*"), &format!("nvidia-cublas-cu{cuda}")]),
        pip_install(cx, &["onnxruntime-gpu==1.18.*"])
    )
}

/// The fix for a build compiled against cuDNN `needed` (major, minor) that loaded another: that
/// cuDNN named, the same major at least that minor (the check TensorFlow's cudnn_version.cc and
/// PyTorch's torch/backends/cudnn make), by pip where NVIDIA ships it as a wheel (cuDNN 8 and
/// later: nvidia-cudnn-cu11/-cu12/-cu13) and by conda (`cudnn=X.Y`, which also has the cuDNN 5 to 7
/// of older builds); or the framework release built for the cuDNN already installed (`runtime`); and
/// the older copy kept off the loader's path.
pub(super) fn install_cudnn(
    cx: &Ctx<'_>,
    needed: (u32, u32),
    runtime: Option<(u32, u32)>,
    cuda: Option<u32>,
) -> String {
    let (major, minor) = needed;
    let conda = cmd(cx, "conda", ["install", &format!("cudnn={major}.{minor}")]);
    let how = if major >= 8 {
        let cuda = cuda.or_else(|| text_cuda_major(cx)).unwrap_or(12);
        let requirement = format!("nvidia-cudnn-cu{cuda}>={major}.{minor},<{}", major + 1);
        format!("`{}` (or `{conda}`)", pip_install(cx, &[requirement.as_str()]))
    } else {
        format!("`{conda}`")
    };
    let other = runtime.map_or_else(String::new, |(a, b)| {
        format!(", or install the framework release built for the cuDNN {a}.{b} that is installed")
    });
    let check = cmd(cx, "ldconfig", ["-p"]);
    format!(
        "Install cuDNN {major}.{minor} (the build's cuDNN: the same major, at least that minor): {how}{other}; and keep \
         older copies off the loader's path: `{check} | grep -F libcudnn` and `echo $LD_LIBRARY_PATH` show which copy \
         is found first."
    )
}

/// JAX without the cuDNN its CUDA plugin needs: the cuDNN it was built against (the message's
/// `built`), else its plugins' floor (jax.toml's `cudnn_min`, from the plugins' own requirements),
/// as the wheel its pip install pulls or conda-forge's package, then JAX's own build (JAX's
/// installation docs: pip's `jax[cudaNN]` brings the nvidia-cudnn wheel; a conda or system cuDNN
/// must be at least the one JAX was built with).
fn jax_cudnn(cx: &Ctx<'_>, built: Option<(u32, u32)>) -> String {
    let floor = cx.kb.jax.plugin.iter().map(|p| (p.cudnn_min.major, p.cudnn_min.minor)).min();
    let (major, minor) = built.or(floor).unwrap_or((9, 0));
    let cuda = text_cuda_major(cx).unwrap_or(12);
    format!(
        "JAX needs cuDNN {major}.{minor} or a newer {major}.x where it loads it: with pip, `{}`; with conda, `{}`; \
         then keep an older copy from being loaded first (another framework's, such as torch's: `import jax` \
         before it; a folder on LD_LIBRARY_PATH). {}",
        pip_install(cx, &[&format!("nvidia-cudnn-cu{cuda}>={major}.{minor}")]),
        cmd(cx, "conda", ["install", "-c", "conda-forge", &format!("cudnn>={major}.{minor}")]),
        jax_builds(cx)
    )
}

/// XLA without its cuDNN (xla/service/gpu/stream_executor_util.cc, GetDnnVersionInfo): CudnnSupport::Init
/// (xla/stream_executor/cuda/cuda_dnn.cc) logged why above it, a cuDNN older than the build's or cudnnCreate
/// failing, most often for memory. The memory words are JAX's docs/gpu_memory_allocation.rst.
fn dnn_init_words(cx: &Ctx<'_>) -> String {
    let seen = |id: &str| cx.s.messages.iter().any(|m| m.id == id);
    let built =
        cx.s.messages.iter().filter(|m| m.id == "xla.cudnn_version_mismatch").find_map(|m| m.values.get("compiled"));
    let cudnn = format!(
        "A cuDNN older than the build's (the line above: `Loaded runtime CuDNN library: X but source was compiled \
         with: Y`): {}",
        jax_cudnn(cx, built.and_then(|v| parse_cudnn(v)))
    );
    let memory = format!(
        "No GPU memory left for cuDNN (the lines above: `Could not create cudnn handle: …` and `Memory usage: … bytes \
         free`): close what holds the GPU (`{}` lists the processes), and since JAX preallocates most of the GPU at \
         its first operation, start it with `{}`, or with a smaller share, `{}`; TensorFlow maps nearly all of it \
         too, unless started with `{}` (or `tf.config.experimental.set_memory_growth(gpu, True)`: TensorFlow's GPU \
         guide, \"Limiting GPU memory growth\"); beside TensorFlow, keep TensorFlow off the GPU where it only loads \
         data (`tf.config.experimental.set_visible_devices([], \"GPU\")`).",
        cmd(cx, "nvidia-smi", []),
        fix::var_line(cx, "XLA_PYTHON_CLIENT_PREALLOCATE", "false"),
        fix::var_line(cx, "XLA_PYTHON_CLIENT_MEM_FRACTION", ".50"),
        fix::var_line(cx, "TF_FORCE_GPU_ALLOW_GROWTH", "true")
    );
    if seen("xla.cudnn_version_mismatch") {
        cudnn
    } else if seen("cudnn.status_not_initialized") {
        format!(
            "{memory} With CUDNN_STATUS_NOT_INITIALIZED and `Possibly insufficient driver version`, a newer driver."
        )
    } else {
        format!("Read the lines logged just above it. {cudnn} {memory}")
    }
}

// ---------------------------------------------------------------------------------------------
// env_var_misconfig

/// A variable set wrong or missing: the variable, the value to check and to set.
fn variable_fix(cx: &Ctx<'_>, known: &KnownMessage) -> FamilyFix {
    match known.id.as_str() {
        "cuda.invalid_device_ordinal" => (Some(invalid_ordinal_words(cx)), None),
        // PyTorch's CUDAContext.cpp assert: an index beyond the devices CUDA set up in the process; in MIG mode CUDA
        // presents one MIG device to a process (NVIDIA's MIG user guide).
        "torch.device_index_beyond_count" => (
            Some(format!(
                "Give the process only devices CUDA can use, and count them as CUDA does: `{}` lists the GPUs (and their \
                 MIG devices); `{}` prints how many this process sees. With MIG on, set CUDA_VISIBLE_DEVICES to one MIG \
                 device (`MIG-…` UUID) per process; with a GPU the driver lists but CUDA cannot start (an Xid in \
                 `sudo dmesg`), leave it out of CUDA_VISIBLE_DEVICES or reset it; and use indices below that count \
                 (`unset CUDA_VISIBLE_DEVICES` shows all).",
                cmd(cx, "nvidia-smi", ["-L"]),
                cmd(cx, "python", ["-c", "import torch; print(torch.cuda.device_count())"])
            )),
            None,
        ),
        // NVIDIA/nvvl#99 and cudamat/cudamat#40: the toolkit's own nvcc first on PATH cured it; an nvcc
        // whose stages the shell cannot find is one outside its toolkit too (ShuangLI59/person_search#56).
        "nvcc.libdevice_not_found" | "nvcc.stage_not_found" => (
            Some(format!(
                "Run the complete toolkit's nvcc: `{}` lists every nvcc on PATH; put the toolkit's bin first (`export \
             PATH=/usr/local/cuda/bin:$PATH`, or the CUDA_HOME of the toolkit you build with), and remove a stray \
             nvcc that is no toolkit's own (a copy or link such as /usr/local/bin/nvcc; a distribution's \
             nvidia-cuda-toolkit's /usr/bin/nvcc: `sudo apt remove nvidia-cuda-toolkit`). Under sudo, which resets \
             PATH, call the toolkit's nvcc by its full path.",
                cmd(cx, "which", ["-a", "nvcc"])
            )),
            None,
        ),

        "torch.cuda_home_not_set" | "cupy.cuda_path_not_detected" => toolkit_root_fix(cx, known),
        "cuda.jit_compilation_disabled" => (
            Some("Unset CUDA_DISABLE_PTX_JIT, which switches the driver's PTX JIT off.".to_owned()),
            Some(fix::change(
                None,
                "the driver may JIT-compile PTX",
                vec![Change::UnsetVar { name: "CUDA_DISABLE_PTX_JIT".to_owned() }],
            )),
        ),
        _ => (None, None),
    }
}

/// An index beyond the visible GPUs: how many the text shows visible (CUDA_VISIBLE_DEVICES' entries, else
/// the GPUs listed), against the processes a launcher starts, one a GPU (`--nproc_per_node`); then which
/// GPUs the process may use.
fn invalid_ordinal_words(cx: &Ctx<'_>) -> String {
    let var = cx.s.env.vars.get("CUDA_VISIBLE_DEVICES").map(|v| v.trim()).filter(|v| !v.is_empty());
    let visible = match var {
        Some(v) => super::env_vars::listed_devices(v).filter(|n| *n > 0),
        None => cx.raw_gpus().map(<[_]>::len).filter(|n| *n > 0),
    };
    let shown = var.map_or_else(|| "the text shows".to_owned(), |v| format!("CUDA_VISIBLE_DEVICES={v} shows"));
    let first = match (visible, cx.s.stated_gpus_used) {
        (Some(visible), Some(processes)) if processes as usize > visible => format!(
            "The launcher starts {processes} processes, one a GPU (local ranks 0 to {}), while {shown} {visible}: \
             set --nproc_per_node (torchrun, torch.distributed.launch) to {visible}, or make {processes} GPUs \
             visible. ",
            processes - 1
        ),
        // No GPU count in the text: the launcher's own count is what to check against `nvidia-smi -L`.
        (None, Some(processes)) if processes > 1 => format!(
            "The launcher starts {processes} processes, one a GPU (local ranks 0 to {}): where fewer GPUs are \
             visible, the ranks past them ask for an index that does not exist. Set --nproc_per_node (torchrun, \
             torch.distributed.launch) to the number of GPUs `{}` lists. ",
            processes - 1,
            cmd(cx, "nvidia-smi", ["-L"])
        ),
        (Some(1), _) => format!(
            "Only one GPU is visible ({shown} one), so only index 0 exists: run the program on one GPU (its \
             option for the GPU count or the GPU indices, set to 1 or 0), or make more GPUs visible. "
        ),
        _ => String::new(),
    };
    format!("{first}{}", visible_devices_words(cx))
}

/// Which GPUs the process may use: `nvidia-smi -L` and CUDA_VISIBLE_DEVICES.
fn visible_devices_words(cx: &Ctx<'_>) -> String {
    let count = match cx.raw_gpus() {
        Some(g) if !g.is_empty() => format!(" (the text shows {}: valid indices 0 to {})", g.len(), g.len() - 1),
        _ => String::new(),
    };
    format!(
        "`{}` lists the GPUs the driver sees and `echo $CUDA_VISIBLE_DEVICES` which of them the process may use: a \
         device index counts only the visible ones{count} (with CUDA_VISIBLE_DEVICES=2,3 they are cuda:0 and \
         cuda:1). Use such an index, or set CUDA_VISIBLE_DEVICES to GPUs the list shows (`{}` shows them all).",
        cmd(cx, "nvidia-smi", ["-L"]),
        fix::unset_line(cx, "CUDA_VISIBLE_DEVICES")
    )
}

/// CUDA_HOME (PyTorch's extension builder) or CUDA_PATH (CuPy) names no toolkit: the toolkit root
/// the text shows (the one of torch's CUDA when known) as a variable change, else how to find one.
fn toolkit_root_fix(cx: &Ctx<'_>, known: &KnownMessage) -> FamilyFix {
    let cupy = known.id.starts_with("cupy.");
    let var = if cupy { "CUDA_PATH" } else { "CUDA_HOME" };
    // The CUDA of the framework that looks for the toolkit: torch's `+cuXYZ`, CuPy's `cupy-cudaNNx`.
    let ours = |name: &str| if cupy { families::is_cupy(name) } else { name == "torch" };
    let built = cx.frameworks().filter(|(_, f)| ours(&f.name)).find_map(|(_, f)| build_cuda(f));
    let fits = |v: Option<CudaVersion>| match built {
        None => true,
        Some((c, true)) => v.is_some_and(|v| v.major == c.major),
        Some((c, false)) => v.is_some_and(|v| v.major_minor() == c.major_minor()),
    };
    let installs = cx.s.toolkits.value().map(|t| t.installs.as_slice()).unwrap_or_default();
    if let Some(t) = installs.iter().filter(|t| t.nvcc.is_some()).find(|t| fits(t.version)) {
        let words = format!("Set {var} to the toolkit's root: `{}`.", fix::var_line(cx, var, &t.root));
        return (
            Some(words),
            Some(fix::change(None, format!("{var} names a CUDA toolkit"), vec![fix::set_var(var, &t.root)])),
        );
    }
    let version = match built {
        Some((c, false)) => c.to_string(),
        Some((c, true)) => format!("{}.N", c.major),
        None => "X.Y".to_owned(),
    };
    let example = if cx.os == OsFamily::Windows {
        format!("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v{version}")
    } else {
        format!("/usr/local/cuda-{version}")
    };
    let which = match (cupy, built) {
        (true, _) => "the CUDA major of the cupy-cudaNNx package".to_owned(),
        (false, Some((c, _))) => format!("torch's CUDA {c}"),
        (false, None) => format!("torch's, `{}`", cmd(cx, "python", ["-c", "import torch; print(torch.version.cuda)"])),
    };
    let words = format!(
        "`{}` finds a CUDA toolkit on PATH; point {var} at the root of the one matching {which}: `{}`. Without one, \
         install the CUDA toolkit of that version first.",
        cmd(cx, "nvcc", ["--version"]),
        fix::var_line(cx, var, &example)
    );
    (Some(words), None)
}

// ---------------------------------------------------------------------------------------------
// no_driver_or_gpu_not_visible

/// The sub-families of the rows whose GPU the program cannot reach, by what is wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unreachable {
    /// The kernel module is not loaded.
    ModuleNotLoaded,
    /// The loaded module and the user-space libraries are different versions.
    VersionMismatch,
    /// The driver answers and shows the process no GPU.
    NoDevice,
    /// Docker has no NVIDIA runtime.
    ContainerRuntime,
    /// The driver's own library (libcuda.so.1, NVML) is not found.
    DriverLibrary,
    /// The toolkit's link-time stub libcuda was loaded.
    Stub,
    /// Secure Boot refuses an unsigned module.
    Signing,
    /// nouveau holds the GPU.
    Nouveau,
    /// The module could not be built for the running kernel.
    ModuleBuild,
    /// A container lost its GPUs (systemd reloaded its cgroup).
    ContainerLost,
    /// The open kernel module on a GPU without a GSP.
    ProprietaryModule,
    /// The open kernel module of 515 to 535 on a GPU that is not a data-centre one, without the opt-in.
    OpenModuleOptIn,
    /// CUDA's unknown error at start-up: nvidia_uvm's state.
    UvmState,
    /// The Kubernetes device plugin's pod cannot reach the driver: the node's runtime is not NVIDIA's by default.
    NodeRuntime,
    /// The firmware left the GPU's memory window (BAR) unassigned or unusable.
    Bar,
    /// The driver found the GPU but could not initialise it (RmInitAdapter).
    AdapterInit,
}

/// Which rows are which sub-family.
const UNREACHABLE: &[(Unreachable, &[&str])] = &[
    (
        Unreachable::ModuleNotLoaded,
        &[
            "nvml.cannot_communicate",
            "nvml.driver_not_loaded",
            "nvidia_settings.driver_not_loaded",
            "torch.no_driver",
            "tf.no_cuda_drivers",
            "cudajl.driver_not_found",
            "numba.driver_not_found",
            "cuda_python.driver_not_found",
            "installer.module_load_failed",
        ],
    ),
    (
        Unreachable::VersionMismatch,
        &["nvml.driver_library_mismatch", "nvrm.api_mismatch", "tf.kernel_dso_mismatch", "cuda.system_driver_mismatch"],
    ),
    (Unreachable::NoDevice, &["cuda.no_device", "torch.no_gpus_available", "nvml.no_devices_found"]),
    (Unreachable::ContainerRuntime, &["docker.no_gpu_device_driver", "docker.unknown_nvidia_runtime"]),
    (
        Unreachable::DriverLibrary,
        &[
            "ld.libcuda_missing",
            "cuda_python.libcuda_dlopen_failed",
            "cuda_python.libcuda_so1_dlopen_failed",
            "cudarc.driver_library_not_found",
            "bitsandbytes.libcuda_not_found",
            // Taichi's CUDA driver loader opens libcuda.so by that name (taichi/rhi/cuda/cuda_driver.cpp).
            "taichi.cuda_arch_not_supported",
            "nvml.library_not_found",
            "shell.nvidia_smi_not_found",
        ],
    ),
    (Unreachable::Stub, &["cuda.stub_library"]),
    (
        Unreachable::Signing,
        &["kernel.module_key_rejected", "kernel.lockdown_unsigned_module", "installer.module_not_signed"],
    ),
    (
        Unreachable::Nouveau,
        &[
            "installer.nouveau_in_use",
            // The module's probe was never called: the kernel gave the GPU to another driver first, nouveau as
            // the line itself names it (or rivafb, nvidiafb).
            "nvrm.probe_not_called",
            "nouveau.unit_ctor_failed",
            "nouveau.firmware_unavailable",
            "nouveau.unit_init_failed",
        ],
    ),
    (
        Unreachable::ModuleBuild,
        &["dkms.module_build_failed", "installer.kernel_source_missing", "kernel.module_not_found"],
    ),
    (Unreachable::ContainerLost, &["nvml.unknown_error"]),
    (Unreachable::ProprietaryModule, &["nvrm.open_module_needs_gsp"]),
    (Unreachable::OpenModuleOptIn, &["nvrm.open_module_unsupported_gpu"]),
    (Unreachable::UvmState, &["torch.cuda_unknown_error"]),
    (Unreachable::NodeRuntime, &["k8s.nvml_init_failed"]),
    (Unreachable::Bar, &["nvrm.invalid_bar"]),
    (Unreachable::AdapterInit, &["nvrm.rm_init_adapter_failed"]),
];

/// The distribution's command that rebuilds the NVIDIA module for the running kernel, when the
/// text names the distribution; else DKMS's (akmods on Fedora); in backticks.
fn rebuild_module(cx: &Ctx<'_>) -> String {
    let os = fix::os_name(cx);
    if os.is_empty() {
        "`sudo dkms autoinstall` (Fedora: `sudo akmods --force`)".to_owned()
    } else {
        format!("`{}`", cx.kb.drivers.distro(&os).rebuild_module)
    }
}

/// A GPU the firmware left without a usable memory window (BAR): the kernel's pci=realloc
/// (Documentation/admin-guide/kernel-parameters.txt: reassign PCI bridge resources the firmware left
/// wrong); Above 4G Decoding, the firmware setting that maps a BAR above 4 GiB.
const BAR_WORDS: &str = "The firmware left the GPU without a usable memory window (BAR): let the kernel assign it with \
                         `pci=realloc` on its command line (GRUB_CMDLINE_LINUX in /etc/default/grub, then `sudo \
                         update-grub` and a reboot); for a GPU with a large BAR, enable Above 4G Decoding (and \
                         Resizable BAR) in the firmware setup, or update the BIOS. A Thunderbolt eGPU may need the \
                         bridge above it rescanned after that (`echo 1 | sudo tee /sys/bus/pci/rescan`).";

/// RmInitAdapter failed: the driver found the GPU and could not initialise it; its causes in the
/// order to check them.
fn adapter_init_words(cx: &Ctx<'_>) -> String {
    format!(
        "The driver found the GPU but could not initialise it: `{}` shows the lines before it. Check, in order: \
         the firmware's PCI setup (enable Above 4G Decoding and Resizable BAR for a GPU with large memory; \
         `pci=realloc` on the kernel command line), the GPU's power (every supplementary cable seated, a supply \
         that carries the load), a driver release that supports this GPU (the newest of its branch), and for the \
         open kernel module a GSP firmware failure (try the same release's proprietary module where the GPU \
         allows it). Then reboot.",
        cmd(cx, "sudo", ["dmesg", "--level=err,warn"])
    )
}

/// CUDA's 804: a user-space driver newer than the kernel module on a GPU without forward compatibility. The two
/// ways it comes about, each with its cure.
fn compat_words(cx: &Ctx<'_>) -> String {
    format!(
        "The libcuda loaded is newer than the kernel module, which only data-centre GPUs accept. After a driver \
         update, reboot: the new libraries run over the old module until then (`{}` and `nvidia-smi` then agree). \
         Otherwise a cuda-compat libcuda is on the loader path (a container image's /usr/local/cuda/compat, a \
         cuda-compat package): update the host's NVIDIA driver to one that supports the image's CUDA (its libcuda \
         is then taken), run an image built for the CUDA the driver supports, or take the compat folder off \
         LD_LIBRARY_PATH.",
        cmd(cx, "cat", ["/proc/driver/nvidia/version"])
    )
}

/// NVML's driver/library version mismatch: the reboot, then the package state that leaves two driver
/// versions installed.
fn version_mismatch_words(cx: &Ctx<'_>) -> String {
    format!(
        "Reboot: the kernel still runs the module of the driver before the update, while the libraries are the \
         new one's. If it stays after a reboot, two driver versions are installed: `{}` shows the loaded \
         module's, and `{}` (Fedora, RHEL: `rpm -qa | grep -i nvidia`) lists the packages of both; remove \
         the other version's so the module and the libraries are one version (a half-finished upgrade: \
         `sudo apt --fix-broken install`; a package that pulled another branch's libraries, as \
         nvidia-opencl-dev pulls libnvidia-compute-<branch>; on Fedora-based systems the kmod-nvidia module \
         of the new driver must be built for the running kernel), then {}, and `sudo ldconfig` so the loader \
         cache no longer names the old libraries. In a container, a forward-compatibility libcuda (the \
         image's /usr/local/cuda/compat) found before the host driver's does the same: take that folder off \
         LD_LIBRARY_PATH.",
        cmd(cx, "cat", ["/proc/driver/nvidia/version"]),
        "dpkg -l | grep -E 'nvidia|libnvidia'",
        rebuild_module(cx)
    )
}

/// The GPU the program cannot reach, by sub-family: the command that loads, rebuilds, matches or
/// exposes the driver, and the driver-load plan where the row says which problem it is.
fn visible_fix(cx: &Ctx<'_>, known: &KnownMessage) -> FamilyFix {
    let Some(family) = UNREACHABLE.iter().find(|(_, ids)| ids.contains(&known.id.as_str())).map(|(family, _)| *family)
    else {
        return (None, None);
    };
    let load = |problem| Some(PlanTarget::DriverLoad { problem });
    match family {
        Unreachable::ModuleNotLoaded => (
            Some(format!(
                "Load the NVIDIA kernel module and read why it fails: `{}`, then `sudo dmesg | grep -i nvrm`. If it is \
                 not built for the running kernel (`{}` does not list `uname -r`), install that kernel's headers and \
                 rebuild it: {}; with Secure Boot on (`{}`) it must be signed with an enrolled key. Then reboot.",
                cmd(cx, "sudo", ["modprobe", "nvidia"]),
                cmd(cx, "dkms", ["status"]),
                rebuild_module(cx),
                cmd(cx, "mokutil", ["--sb-state"])
            )),
            None,
        ),
        Unreachable::VersionMismatch => (Some(version_mismatch_words(cx)), None),
        Unreachable::NoDevice => (
            Some(format!(
                "{} An empty value, -1, or an index or UUID not in the list hides every GPU. In a container, start \
                 it with the GPUs: `docker run --gpus all …` (NVIDIA Container Toolkit installed).",
                visible_devices_words(cx)
            )),
            None,
        ),
        Unreachable::ContainerRuntime => container_runtime_fix(cx),
        Unreachable::DriverLibrary => (
            Some(format!(
                "libcuda.so.1 (and NVML's libnvidia-ml.so.1) come with the NVIDIA driver, not with CUDA or a pip wheel: \
                 `{} | grep -F libcuda.so.1` must list it. Under WSL2 it is in /usr/lib/wsl/lib (put that folder on \
                 LD_LIBRARY_PATH); in a container, start it with `--gpus all`; elsewhere install the NVIDIA driver.",
                cmd(cx, "ldconfig", ["-p"])
            )),
            None,
        ),
        Unreachable::Stub => stub_fix(cx),
        Unreachable::Signing => (
            Some(format!(
                "Secure Boot (`{}`) refuses the unsigned module: enroll the key it is signed with (DKMS on Ubuntu and \
                 Debian: `sudo mokutil --import /var/lib/dkms/mok.pub`), reboot and confirm it in the MOK manager; or \
                 install the distribution's signed driver packages.",
                cmd(cx, "mokutil", ["--sb-state"])
            )),
            load(DriverLoadProblem::SecureBootUnsigned),
        ),
        Unreachable::Nouveau => (
            Some(format!(
                "nouveau holds the GPU: blacklist it (`{}`), rebuild the initramfs, reboot, then install NVIDIA's driver.",
                cx.kb.drivers.nouveau.blacklist
            )),
            load(DriverLoadProblem::Nouveau),
        ),
        Unreachable::Bar => (Some(BAR_WORDS.to_owned()), None),
        Unreachable::AdapterInit => (Some(adapter_init_words(cx)), None),
        Unreachable::ContainerLost => (
            Some(format!(
                "In a container this follows the host re-applying the container's cgroup (a `systemctl \
                 daemon-reload` with systemd cgroups; on Kubernetes also the kubelet's static CPU manager, \
                 cpu-manager-policy=static, moving the container's CPUs): restart or recreate the container; the \
                 lasting fix on the host is NVIDIA's: `{}` (its notice, NVIDIA/nvidia-docker#1730), and on Kubernetes \
                 the device plugin's --pass-device-specs. Outside a container, `{}` shows whether the driver loads.",
                cmd(cx, "sudo", ["nvidia-ctk", "system", "create-dev-char-symlinks", "--create-all"]),
                cmd(cx, "sudo", ["modprobe", "nvidia"])
            )),
            None,
        ),
        Unreachable::ProprietaryModule => (
            Some(
                "This GPU (older than Turing, no GSP) needs NVIDIA's proprietary kernel module: install the same \
                 release's proprietary flavor (Ubuntu: nvidia-driver-NNN, not nvidia-driver-NNN-open; the .run \
                 installer: --kernel-module-type=proprietary) and reboot."
                    .to_owned(),
            ),
            None,
        ),
        Unreachable::OpenModuleOptIn => (Some(open_module_opt_in_words(cx)), None),
        Unreachable::UvmState => (Some(uvm_reload_words(cx)), None),
        Unreachable::NodeRuntime => node_runtime_fix(cx),
        Unreachable::ModuleBuild => (
            Some(format!(
                "Install the headers of the running kernel (`uname -r` names it) and rebuild the module: {}. If the \
                 build still fails, the driver branch is older than the kernel: install a newer branch.",
                rebuild_module(cx)
            )),
            load(DriverLoadProblem::ModuleForOtherKernel),
        ),
    }
}

/// The open kernel module of 515 to 535 on a GeForce or Workstation GPU: the open-gpu-kernel-modules
/// README of those releases ("Compatible GPUs") asks for the module parameter; from 545 on it is
/// ignored and not needed.
fn open_module_opt_in_words(cx: &Ctx<'_>) -> String {
    format!(
        "This driver's open kernel module (515 to 535) drives GeForce and Workstation GPUs only when loaded \
         with NVreg_OpenRmEnableUnsupportedGpus=1: put `options nvidia NVreg_OpenRmEnableUnsupportedGpus=1` \
         in a file in /etc/modprobe.d (on an immutable system such as Talos, the module parameter in its \
         machine configuration), rebuild the initramfs (`{}`; Fedora: `sudo dracut --force`) and reboot; \
         or `{}` to try it at once. Or install the proprietary kernel module of the same release, or a 545 \
         or newer driver, whose open module needs no opt-in.",
        cmd(cx, "sudo", ["update-initramfs", "-u"]),
        cmd(cx, "sudo", ["modprobe", "nvidia", "NVreg_OpenRmEnableUnsupportedGpus=1"])
    )
}

/// An image that ships the driver's files the container toolkit mounts from the host: the file out of
/// the image (NVIDIA Container Toolkit: the host's driver files are mounted in at start; the image must
/// not carry its own).
fn image_driver_files_fix(cx: &Ctx<'_>, known: &KnownMessage, observed: &[&ObservedMessage]) -> Option<FamilyFix> {
    if known.id != "container.mount_file_exists" {
        return None;
    }
    let path = observed.iter().find_map(|m| m.values.get("path"))?;
    let file = path.rsplit('/').next().filter(|f| !f.is_empty())?;
    // The path inside the container: after the overlay's `merged/` (Docker) or as given.
    let inside = path.split_once("/merged/").map_or(path.as_str(), |(_, p)| p.trim_start_matches('/'));
    let inside = if inside.starts_with('/') { inside.to_owned() } else { format!("/{inside}") };
    Some((
        Some(format!(
            "Remove {file} from the image: the NVIDIA Container Toolkit mounts the host driver's copy there at start. \
             Do not install the driver's packages (nvidia-utils, libnvidia-compute, a CUDA compat package) in the \
             Dockerfile, or delete their files at its end (`{}`), then rebuild the image.",
            cmd(cx, "rm", ["-f", &inside])
        )),
        None,
    ))
}

/// The Kubernetes device plugin's pod that cannot reach the driver: NVIDIA's runtime made the node's
/// default (NVIDIA k8s-device-plugin README, prerequisites: nvidia-container-runtime configured as the
/// default low-level runtime; NVIDIA Container Toolkit install guide, `--set-as-default`).
fn node_runtime_fix(cx: &Ctx<'_>) -> FamilyFix {
    (
        Some(format!(
            "On each GPU node, install the NVIDIA Container Toolkit and make its runtime the default one, then \
                 restart the runtime and the plugin's pod: containerd `{}`, Docker `{}` (daemon.json's \
                 \"default-runtime\": \"nvidia\"), CRI-O `{}`; or deploy the plugin with a RuntimeClass of nvidia.",
            cmd(cx, "sudo", ["nvidia-ctk", "runtime", "configure", "--runtime=containerd", "--set-as-default"]),
            cmd(cx, "sudo", ["nvidia-ctk", "runtime", "configure", "--runtime=docker", "--set-as-default"]),
            cmd(cx, "sudo", ["nvidia-ctk", "runtime", "configure", "--runtime=crio", "--set-as-default"])
        )),
        None,
    )
}

/// Docker without NVIDIA's runtime: the NVIDIA Container Toolkit's configure step and a restart
/// (NVIDIA Container Toolkit install guide, "Configuring Docker").
fn container_runtime_fix(cx: &Ctx<'_>) -> FamilyFix {
    let root = |argv: &[&str]| Change::Root { argv: argv.iter().map(|a| (*a).to_owned()).collect() };
    let words = format!(
        "Install the NVIDIA Container Toolkit (package nvidia-container-toolkit, NVIDIA's install guide), \
         register its runtime with Docker and restart it: `{}`, then `{}`.",
        cmd(cx, "sudo", ["nvidia-ctk", "runtime", "configure", "--runtime=docker"]),
        cmd(cx, "sudo", ["systemctl", "restart", "docker"])
    );
    let plan = fix::change(
        None,
        "Docker starts containers with the NVIDIA runtime",
        vec![
            Change::Manual {
                text: "Install the NVIDIA Container Toolkit (package nvidia-container-toolkit, from NVIDIA's \
                       repository, as its install guide says)"
                    .to_owned(),
            },
            root(&["nvidia-ctk", "runtime", "configure", "--runtime=docker"]),
            root(&["systemctl", "restart", "docker"]),
        ],
    );
    (Some(words), Some(plan))
}

/// The toolkit's link-time stub libcuda found at run time: its folder out of LD_LIBRARY_PATH.
fn stub_fix(cx: &Ctx<'_>) -> FamilyFix {
    let (words, plan) = super::libcuda::stubs_fix(cx);
    (Some(words), plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_read_in_each_spelling() {
        let cc = |major, minor| Some(ComputeCapability { major, minor });
        assert_eq!(parse_cc("8.6"), cc(8, 6));
        assert_eq!(parse_cc("120"), cc(12, 0));
        assert_eq!(parse_cc("sm_61"), cc(6, 1));
        assert_eq!(parse_cc("x"), None);
        assert_eq!(parse_cc("1234"), None);
    }

    #[test]
    fn library_names_give_the_base_and_the_soname_major() {
        assert_eq!(library_parts("libcudnn_ops_infer.so.8"), Some(("cudnn".to_owned(), 8, false)));
        assert_eq!(library_parts("/usr/lib/libcublasLt.so.12.4.5"), Some(("cublasLt".to_owned(), 12, false)));
        assert_eq!(library_parts("cudnn_ops64_9.dll"), Some(("cudnn".to_owned(), 9, true)));
        assert_eq!(library_parts("cublas64_11.dll"), Some(("cublas".to_owned(), 11, true)));
        assert_eq!(library_parts("libcuda.so.1"), None, "the driver's library ships in no wheel");
        assert_eq!(library_parts("libfoo.so.1"), None);
        assert_eq!(library_parts("libcudnn.so"), None);
    }

    #[test]
    fn cudnn_versions_read_in_each_spelling() {
        assert_eq!(parse_cudnn("8, 5, 0"), Some((8, 5)));
        assert_eq!(parse_cudnn("8.9.4"), Some((8, 9)));
        assert_eq!(parse_cudnn("8500"), Some((8, 5)));
        assert_eq!(parse_cudnn("90100"), Some((9, 1)));
        assert_eq!(parse_cudnn("x"), None);
    }

    #[test]
    fn every_unreachable_row_is_in_the_catalogue() {
        let kb = gpu_doctor_kb::Kb::get().unwrap_or_else(|e| panic!("{e}"));
        for (_, ids) in UNREACHABLE {
            for id in *ids {
                let row = kb.errors.message.iter().find(|m| m.id == *id);
                assert!(row.is_some_and(|m| m.category == Category::NoDriverOrGpuNotVisible), "{id}");
            }
        }
    }
}
