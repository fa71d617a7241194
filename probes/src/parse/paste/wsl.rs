//! Which WSL a paste comes from, from every place WSL shows: `wsl -l -v`'s table (the default
//! distribution's VERSION); the kernel release (`4.4.0-19041-Microsoft` is WSL1's translation layer,
//! `…-microsoft-standard…` a WSL2 kernel, in `uname -a`, `/proc/version`, dmesg or any report line);
//! paths only WSL2 has (`/usr/lib/wsl/drivers`, `/dev/dxg`, `libdxcore.so`); nvidia-smi's table
//! header whose NVIDIA-SMI version differs from the driver's (inside WSL the Linux nvidia-smi reports
//! the Windows driver, `NVIDIA-SMI 560.35.02  Driver Version: 560.94`); a Windows build older than
//! any with WSL2 beside the word WSL; and, weakest, the words `WSL1`/`WSL 2` in the text when only one
//! version is named. The kernel release is kept (also `wsl --version`'s `Kernel version:`), and the
//! GPUs a Windows nvidia-smi in the same text lists in TCC mode, which WSL does not expose. Paths only
//! a WSL distribution has (`/mnt/wsl/`, a Windows drive's `Users` or `Windows` folder under `/mnt/<drive>/`)
//! say WSL of unknown version. Inside WSL the failed calls that meet WSL 2's documented limits are kept:
//! a graphics-interop registration, a pinned host allocation, CUDA's 801 operation not supported.
//! `/usr/lib/wsl/lib` paths (WSL2) are read by `loader.rs`.
//!
//! ```text
//! PS C:\> wsl -l -v
//!   NAME      STATE           VERSION
//! * Ubuntu    Running         1
//! Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com) (gcc version 5.4.0 (GCC) ) #1237-Microsoft
//! | NVIDIA-SMI 560.35.02              Driver Version: 560.94         CUDA Version: 12.6     |
//! ```

use super::facts::Facts;
use crate::parse::smi::DRIVER_LABELS;
use gpu_doctor_model::{OsFamily, WslFacts};

const TABLE: &str = "wsl -l -v";
const KERNEL: &str = "kernel version";
const WORDS: &str = "WSL named in the text";
const WINDOWS: &str = "Windows version";
const PARAVIRT: &str = "WSL2 GPU paths and devices";
const SMI: &str = "nvidia-smi under WSL";
const LIBS: &str = "driver library paths";
const MOUNTS: &str = "WSL mount paths";
const INSIDER: &str = "a Windows Insider build";
const PROMPT: &str = "a shell prompt on a Windows-named host";

/// The first Windows 10 build that runs WSL2: 1903 (18362) and 1909 (18363) got it in an update of
/// 2020; WSL2 came with build 18917 before that. Every WSL on an older build is WSL1.
const FIRST_WSL2_BUILD: u32 = 18362;

/// The most entries kept of each list (TCC GPUs, driver libraries, driver packages).
const MAX_LISTED: usize = 64;

/// Reads the WSL version: the table's, else the kernel's, else WSL2's own paths or its nvidia-smi,
/// else the one version the words name; then the kernel release and Windows' TCC GPUs.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    // Read once: it says WSL, and it is the release kept below.
    let kernel_line = kernel(lines);
    let found = table(lines).map(|(at, v, distro)| (at, v, distro, TABLE)).or_else(|| {
        kernel_line.as_ref().map(|(at, v, _)| (*at, *v, None, KERNEL)).or_else(|| {
            let strong = || {
                paravirt(lines)
                    .map(|at| (at, 2, None, PARAVIRT))
                    .or_else(|| smi_of_wsl(lines).map(|at| (at, 2, None, SMI)))
            };
            // The words are weaker than a path under /usr/lib/wsl/lib, which only WSL2 has.
            let weak = || {
                old_windows(lines)
                    .map(|at| (at, 1, None, WINDOWS))
                    .or_else(|| words(lines).map(|(at, v)| (at, v, None, WORDS)))
                    .or_else(|| insider_build(lines).map(|at| (at, 2, None, INSIDER)))
                    .or_else(|| mounts(lines).map(|at| (at, 0, None, MOUNTS)))
                    .or_else(|| facts.wsl_prompt.map(|(at, format)| (at, 0, None, format)))
                    .or_else(|| unnumbered(lines).map(|at| (at, 0, None, WORDS)))
            };
            strong().or_else(|| facts.wsl.is_none().then(weak).flatten())
        })
    });
    if let Some((at, version, distro, format)) = found {
        facts.saw(at, format);
        // Only the kernel's own release, WSL2's paths and its nvidia-smi say the text came from inside
        // Linux; a table printed by PowerShell or a sentence naming WSL may sit in a paste from native
        // Windows.
        if matches!(format, KERNEL | PARAVIRT | SMI | MOUNTS | PROMPT) {
            facts.os.get_or_insert(OsFamily::Linux);
        }
        let wsl = facts.wsl.get_or_insert_with(|| WslFacts { version, ..WslFacts::default() });
        // A WSL2 sign does not overrule a table or kernel already read.
        if !(matches!(format, PARAVIRT | SMI) && wsl.version != 0) {
            wsl.version = version;
        }
        if distro.is_some() {
            wsl.distro = distro;
        }
    }
    // The rest only matters inside WSL: a text that is not is not read again for it.
    if facts.wsl.is_none() {
        return;
    }
    let (libs_at, libs) = linux_driver_libs(lines);
    if let Some(at) = libs_at {
        facts.saw(at, LIBS);
    }
    let Some(wsl) = facts.wsl.as_mut() else { return };
    if wsl.kernel_release.is_none() {
        wsl.kernel_release =
            kernel_line.map(|(_, _, r)| r).filter(|r| !r.is_empty()).or_else(|| wsl_version_kernel(lines));
    }
    wsl.tcc_gpus = tcc_gpus(lines);
    wsl.linux_driver_packages = linux_driver_packages(lines);
    wsl.linux_driver_said = driver_installed_in_words(lines);
    wsl.linux_driver_libs = libs;
    wsl.graphics_interop_failure = graphics_interop_failure(lines);
    wsl.pinned_alloc_failure = pinned_alloc_failure(lines);
    wsl.vmm_refused = vmm_refused(lines);
    wsl.not_supported_error = if wsl.vmm_refused.is_some() { None } else { not_supported_error(lines) };
    wsl.smi_crash = smi_crash(lines);
    wsl.smi_not_found = smi_not_found(lines);
    wsl.architecture_said = architecture_said(lines);
    wsl.insider_build = insider_build(lines).map(|at| quoted(&lines[at]));
    wsl.build_before_gpu = build_before_gpu(lines).map(|at| quoted(&lines[at]));
    wsl.dxg_missing = dxg_missing(lines).map(|at| quoted(&lines[at]));
    wsl.render_adapter = lines.iter().find(|l| render_adapter(l)).map(|l| quoted(l));
}

/// The Windows 10 release builds with WSL 2 (from 1903, build 18362) but without its GPU compute, which
/// reached release Windows with Windows 10 21H2 (19044): 1903, 1909, 2004, 20H2 and 21H1 (NVIDIA CUDA on WSL
/// User Guide, https://docs.nvidia.com/cuda/wsl-user-guide/index.html: Windows 11 or Windows 10 21H2 and later;
/// https://learn.microsoft.com/windows/release-health/release-information: the builds of each version).
const BUILDS_BEFORE_GPU: std::ops::RangeInclusive<u32> = FIRST_WSL2_BUILD..=19_043;

/// The version names of those releases, as Windows' Settings and `winver` print them.
const VERSIONS_BEFORE_GPU: [&str; 5] = ["1903", "1909", "2004", "20h2", "21h1"];

/// The first line naming a Windows 10 release from before GPU compute reached WSL 2 ([`BUILDS_BEFORE_GPU`]):
/// its build (`19042.928`, `Version 10.0.19043.1288`, `build 19041`) on a line with the word `windows`,
/// `build` or `version`, or its version name (`20H2`, `21H1`; `2004`, `1909` and `1903` only right after
/// `version`, `windows` or `windows 10`, not a year); not a number inside a longer one or a version other than Windows' own `10.0.`.
fn build_before_gpu(lines: &[String]) -> Option<usize> {
    lines.iter().position(|l| {
        if l.len() > 300 {
            return false;
        }
        let lower = l.to_ascii_lowercase();
        let windows = lower.contains("windows");
        if !(windows || lower.contains("build") || lower.contains("version")) {
            return false;
        }
        let words: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
        // `20H2` anywhere on the line; a bare number only right after `version`, `windows` or `windows 10`.
        let named = words.iter().enumerate().any(|(i, w)| {
            VERSIONS_BEFORE_GPU.contains(w)
                && (w.contains('h')
                    || i.checked_sub(1).is_some_and(|p| ["version", "windows", "10"].contains(&words[p])))
        });
        named
            || five_digit_numbers(l).any(|(before, n)| {
                let dotted = before.ends_with('.') && !before.ends_with("10.0.");
                !dotted && BUILDS_BEFORE_GPU.contains(&n)
            })
    })
}

/// Each run of exactly five digits in `l` with the text before it.
fn five_digit_numbers(l: &str) -> impl Iterator<Item = (&str, u32)> {
    let bytes = l.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() {
            if !bytes[at].is_ascii_digit() {
                at += 1;
                continue;
            }
            let start = at;
            at = bytes[start..].iter().position(|b| !b.is_ascii_digit()).map_or(bytes.len(), |n| start + n);
            if at - start == 5
                && let Ok(n) = l[start..at].parse::<u32>()
            {
                return Some((&l[..start], n));
            }
        }
        None
    })
}

/// Words that say a file or device is not there.
const ABSENT: [&str; 9] = [
    "not available",
    "no such file",
    "not found",
    "missing",
    "does not exist",
    "doesn't exist",
    "not exist",
    "cannot access",
    "not present",
];

/// The first line saying `/dev/dxg`, the device through which WSL 2 reaches the Windows GPU driver, is not
/// there (`ls: cannot access '/dev/dxg': No such file or directory`, "The /dev/dxg device is not available",
/// microsoft/WSL#6617): WSL hands the guest no GPU.
fn dxg_missing(lines: &[String]) -> Option<usize> {
    lines.iter().position(|l| {
        l.len() <= 300 && l.contains("/dev/dxg") && {
            let lower = l.to_ascii_lowercase();
            ABSENT.iter().any(|w| lower.contains(w))
        }
    })
}

/// The Windows builds between Windows 10's last release (19045) and Windows 11's first (22000): the Insider
/// channels' builds, where CUDA on WSL 2 first ran.
const INSIDER_BUILDS: std::ops::RangeInclusive<u32> = 20_000..=21_999;

/// Windows Server 2022 (and Azure Stack HCI 21H2), a release build inside that range
/// (https://learn.microsoft.com/windows/release-health/windows-server-release-info: build 20348).
const SERVER_2022: u32 = 20_348;

/// The first line that names a Windows build only the Insider preview channels had (`Windows build number:
/// 21327`, `build 20231`, `Version 10.0.20231.1005`, `windows\u{ff1a}20231.1005`): a word `build` or `windows`
/// and a five-digit number of [`INSIDER_BUILDS`], not part of a longer number or a version other than Windows'
/// own `10.0.`. GPU compute in WSL 2 shipped first to the Insider Dev channel (build 20150, June 2020:
/// microsoft/WSL#829) and reached release Windows only with Windows 10 21H2 (19044) and Windows 11 (22000), so
/// such a build in a text about CUDA is WSL 2's preview.
fn insider_build(lines: &[String]) -> Option<usize> {
    lines.iter().position(|l| {
        if l.len() > 300 {
            return false;
        }
        let lower = l.to_ascii_lowercase();
        if !(lower.contains("build") || lower.contains("windows")) {
            return false;
        }
        five_digit_numbers(l).any(|(before, n)| {
            // A version's later part is Windows' own only after `10.0.`.
            let dotted = before.ends_with('.') && !before.ends_with("10.0.");
            !dotted && INSIDER_BUILDS.contains(&n) && n != SERVER_2022
        })
    })
}

/// The first line naming a path only a WSL distribution has: `/mnt/wsl/`, the folder WSL mounts in every
/// WSL 2 distribution to share mounts between them, or a Windows drive that WSL mounts at `/mnt/<letter>/`
/// (its `automount` root) followed by a folder of Windows' own (`Users`, `Windows`, `Program Files`), as a
/// prompt, a traceback's `File "/mnt/c/Users/…"` or a log shows it. A bare `/mnt/e/models` is not taken:
/// native Linux mounts disks under /mnt too. Microsoft, WSL configuration
/// (https://learn.microsoft.com/en-us/windows/wsl/wsl-config: `[automount] root`, default `/mnt/`, each
/// fixed drive at `/mnt/<drive letter>`) and microsoft/WSL#4577 (`/mnt/wsl`, shared across WSL 2
/// distributions since build 19013).
fn mounts(lines: &[String]) -> Option<usize> {
    lines.iter().position(|l| names_wsl_mount(l))
}

/// Whether one line names a path only a WSL distribution has ([`mounts`]).
fn names_wsl_mount(l: &str) -> bool {
    const WINDOWS_DIRS: [&str; 4] = ["Users/", "Windows/", "Program Files", "ProgramData/"];
    l.contains("/mnt/wsl/")
        || l.match_indices("/mnt/").any(|(at, _)| {
            let before = l[..at].chars().next_back();
            let rest = &l[at + "/mnt/".len()..];
            let mut chars = rest.chars();
            let drive = chars.next().is_some_and(|c| c.is_ascii_alphabetic()) && chars.next() == Some('/');
            before.is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '.'))
                && drive
                && WINDOWS_DIRS.iter().any(|d| rest.get(2..).is_some_and(|r| r.starts_with(d)))
        })
}

/// Reads, in the raw text (prompts come off the lines the readers see), the first shell prompt that says
/// WSL: one on a host Windows named ([`windows_named_prompt`]), or one whose path is on a Windows drive as
/// WSL mounts it ([`names_wsl_mount`]: `eugeo@host:/mnt/c/Users/eugeo/…$ python server.py`).
pub(super) fn prompt_signs(text: &str, facts: &mut Facts) {
    // Only lines with a prompt's `$ ` or `# ` are looked at; each line is looked at once.
    facts.wsl_prompt = text.split('\n').enumerate().find_map(|(at, line)| {
        let prompt = line.split_once("$ ").or_else(|| line.split_once("# ")).map(|(p, _)| p)?;
        if !prompt.contains('@') || prompt.len() > 400 {
            return None;
        }
        if windows_named_prompt(prompt) {
            return Some((at, PROMPT));
        }
        names_wsl_mount(prompt).then_some((at, MOUNTS))
    });
}

/// Whether a Linux shell's prompt (`user@host:path`, the part before `$` or `#`) has a host with the name Windows Setup
/// gives a PC, `DESKTOP-` and seven capitals or digits (`LAPTOP-` and eight on laptops): WSL names each
/// distribution after the Windows host (microsoft/WSL#4305, the WSL team: init calls sethostname with it;
/// nix-community/NixOS-WSL#24: a hostname set inside "turns back to the Windows hostname" after `wsl
/// --shutdown`), and a native Linux install names itself. Git Bash's prompt (`user@DESKTOP-… MINGW64 ~`) has
/// no colon there and is native Windows. Sample (a README, not a thread): ivansabater/dcaPractica10's
/// `ivan@DESKTOP-BEGS1AS:/mnt/c/Users/ivans/…$ git st`, the same host's `/mnt/c/Users` saying WSL.
fn windows_named_prompt(prompt: &str) -> bool {
    ["@DESKTOP-", "@LAPTOP-"].iter().any(|prefix| {
        prompt.match_indices(prefix).any(|(at, _)| {
            let name_len = if *prefix == "@DESKTOP-" { 7 } else { 8 };
            let rest = &prompt[at + prefix.len()..];
            let name = rest.get(..name_len).unwrap_or("");
            let generated =
                name.len() == name_len && name.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
            let after = rest.get(name_len..).unwrap_or("");
            generated && (after.starts_with(":~") || after.starts_with(":/"))
        })
    })
}

/// Whether a line says a call failed: an error or failure word, CUDA's error names, or not supported.
fn says_failure(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    // Not `error` alone: cuda-samples' `checkCudaErrors(cudaGraphicsGLRegisterBuffer(…))` is a call in code.
    ["fail", "error:", "error ", "error(", "cuda_error_", "not supported", "out of memory", "exception"]
        .iter()
        .any(|w| lower.contains(w))
}

/// A line with the text cut to what a finding quotes.
fn quoted(line: &str) -> String {
    line.trim().chars().take(200).collect()
}

/// CUDA's graphics-interop entry points for OpenGL, EGL and VDPAU (runtime `cudaGraphicsGL*`,
/// `cudaGraphicsEGL*`, `cudaGraphicsVDPAU*`, `cudaGL*`; driver `cuGraphicsGL*`, `cuGraphicsEGL*`,
/// `cuGraphicsVDPAU*`, `cuGL*`): CUDA Runtime API, modules "OpenGL Interoperability", "EGL
/// Interoperability", "VDPAU Interoperability" (https://docs.nvidia.com/cuda/cuda-runtime-api/modules.html).
/// None works under WSL 2, where the NVIDIA driver has no OpenGL, EGL or Vulkan of its own (NVIDIA CUDA on
/// WSL User Guide, "WSL 2 Support Constraints").
const INTEROP_APIS: [&str; 8] = [
    "cudaGraphicsGL",
    "cudaGraphicsEGL",
    "cudaGraphicsVDPAU",
    "cudaGLSetGLDevice",
    "cudaGLGetDevices",
    "cuGraphicsGL",
    "cuGraphicsEGL",
    "cuGraphicsVDPAU",
];

/// The first line where a graphics-interop call failed: a line naming one of [`INTEROP_APIS`] that says a
/// failure itself or is followed by a line that does (cuda-samples' `checkCudaErrors` prints both on one
/// line: `CUDA error at f.cu:12 code=304(cudaErrorOperatingSystem) "cudaGraphicsGLRegisterBuffer(…)"`,
/// NVIDIA/cuda-samples:Common/helper_cuda.h `check`).
///
/// Also CUDA's operating-system error (cudaErrorOperatingSystem, 304: `OS call failed or operation not supported
/// on this OS`, NVIDIA/cuda-python's runtime error table) within [`GRAPHICS_WINDOW`] lines after a line naming
/// OpenGL, EGL or Vulkan: the error a graphics-interop call returns under WSL 2, printed by a program's own
/// check that names no call (`GPUassert: OS call failed … visualisation.cu 426`).
fn graphics_interop_failure(lines: &[String]) -> Option<String> {
    lines.iter().enumerate().find_map(|(i, l)| {
        let names = INTEROP_APIS.iter().any(|api| l.contains(api));
        let failed = says_failure(l) || lines.get(i + 1).is_some_and(|n| says_failure(n));
        let after_graphics = os_call_failed(l)
            && lines[i.saturating_sub(GRAPHICS_WINDOW)..i].iter().any(|p| GRAPHICS_APIS.iter().any(|g| p.contains(g)));
        ((names && failed) || after_graphics).then(|| quoted(l))
    })
}

/// How many lines before CUDA's operating-system error a graphics API may be named.
const GRAPHICS_WINDOW: usize = 8;

/// Graphics APIs as programs name them in their logs.
const GRAPHICS_APIS: [&str; 4] = ["OpenGL", "EGL", "Vulkan", "glfw"];

/// CUDA's cudaErrorOperatingSystem (304) by its string or its name.
fn os_call_failed(line: &str) -> bool {
    line.contains("OS call failed or operation not supported on this OS") || line.contains("cudaErrorOperatingSystem")
}

/// Words that name a pinned (page-locked) host allocation: the runtime's and driver's calls, PyTorch's
/// `pin_memory` (torch/utils/data/_utils/pin_memory.py, `Tensor.pin_memory`) and its CachingHostAllocator,
/// ggml's `… of pinned memory` (ggml-org/llama.cpp:ggml/src/ggml-cuda/ggml-cuda.cu, ggml_cuda_host_malloc:
/// `failed to allocate %.2f MiB of pinned memory: %s` after cudaMallocHost fails, skipped when
/// GGML_CUDA_NO_PINNED is set; before 2024 `WARNING: failed to allocate %.2f MB of pinned memory: %s`).
const PINNED_SIGNS: [&str; 9] = [
    "pinned memory",
    "pin_memory",
    "cudaMallocHost",
    "cudaHostAlloc",
    "cudaHostRegister",
    "cuMemHostAlloc",
    "cuMemAllocHost",
    "cuMemHostRegister",
    "CachingHostAllocator",
];

/// How many lines before an out-of-memory line a pinned allocation may be named (a traceback's frames).
const PINNED_WINDOW: usize = 8;

/// The first line where a pinned host allocation failed: a line naming one (not a setting such as
/// `pin_memory=True` or vLLM's `pin_memory=False`, nor the variable that turns ggml's off) that also says out of memory or failed to allocate, or an out of
/// memory line with such a name in the [`PINNED_WINDOW`] lines before it (PyTorch's traceback through
/// pin_memory.py, then `RuntimeError: CUDA error: out of memory`).
fn pinned_alloc_failure(lines: &[String]) -> Option<String> {
    let pinned = |l: &str| {
        // A setting (`pin_memory=True` in a config dump, vLLM's `pin_memory=False`, GGML_CUDA_NO_PINNED) is no
        // allocation.
        let setting = ["pin_memory=", "pin_memory:", "pin_memory\"", "pin_memory'", "NO_PINNED"];
        let lower = l.to_ascii_lowercase();
        let in_words = lower.contains("pin memory") || lower.contains("pinning");
        (in_words || PINNED_SIGNS.iter().any(|s| l.contains(s))) && !setting.iter().any(|s| l.contains(s))
    };
    let oom = |l: &str| {
        let lower = l.to_ascii_lowercase();
        lower.contains("out of memory")
            || lower.contains("failed to allocate")
            || lower.contains("cudaerrormemoryallocation")
            || lower.contains("cuda_error_out_of_memory")
            // Said in words on the line that names the pinning: "pinning memory fails", and in Chinese "pin memory will fail"
            // (the maintainer in FlashML-org/FreeToken#443).
            || (pinned(l) && (lower.contains("fail") || l.contains("\u{5931}\u{8d25}")))
    };
    lines.iter().enumerate().find_map(|(i, l)| {
        if !oom(l) {
            return None;
        }
        if pinned(l) {
            return Some(quoted(l));
        }
        lines[i.saturating_sub(PINNED_WINDOW)..i].iter().any(|p| pinned(p)).then(|| quoted(l))
    })
}

/// The first line where CUDA answered 801, `operation not supported`: the runtime's `cudaErrorNotSupported`,
/// the driver's `CUDA_ERROR_NOT_SUPPORTED`, or PyTorch's `CUDA error: operation not supported` (NVIDIA/cuda-python:
/// cuda_core/cuda/core/experimental/_utils/runtime_cuda_error_explanations.py@16c86bd247d19f48afbfe5e3cad20599ca1601cd,
/// entry 801; not 304's `OS call failed or operation not supported on this OS`); else a managed-memory prefetch
/// refused as an invalid device; else CUDA's invalid device ordinal where the only index the text names is 0.
fn not_supported_error(lines: &[String]) -> Option<String> {
    lines
        .iter()
        .find(|l| {
            l.contains("cudaErrorNotSupported")
                || l.contains("CUDA_ERROR_NOT_SUPPORTED")
                || l.contains("CUDA error: operation not supported")
                || prefetch_refused(l)
        })
        .or_else(|| ordinal_zero_refused(lines))
        .map(|l| quoted(l))
}

/// CUDA's invalid-device answer as its emitters print it: the runtime's `cudaErrorInvalidDevice` (its string
/// `invalid device ordinal`) and the driver's `CUDA_ERROR_INVALID_DEVICE`, not the longer names that begin
/// the same (`cudaErrorInvalidDeviceFunction`).
fn invalid_device(line: &str) -> bool {
    let named = |name: &str| {
        line.match_indices(name).any(|(at, _)| {
            !line[at + name.len()..].chars().next().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    line.contains("invalid device ordinal") || named("cudaErrorInvalidDevice") || named("CUDA_ERROR_INVALID_DEVICE")
}

/// A managed-memory prefetch refused as an invalid device: cudaMemPrefetchAsync returns cudaErrorInvalidDevice
/// when the destination GPU lacks cudaDevAttrConcurrentManagedAccess (CUDA Runtime API reference,
/// cudaMemPrefetchAsync), which no GPU has under WSL 2, whatever the device index (rapidsai/rmm#2023: RMM's
/// prefetch.cpp answering `cudaErrorInvalidDevice invalid device ordinal`).
fn prefetch_refused(line: &str) -> bool {
    invalid_device(line) && (line.contains("prefetch") || line.contains("Prefetch"))
}

/// Spellings of a GPU index in programs' arguments and messages: `cuda:0`, `gpu_id=0`, `device_id: 0`,
/// `set_device(0)`, `--gpu 0`, `current device: 0` (ggml's CUDA error report), `GPU 1`, `device 1`.
fn index_re() -> &'static regex::Regex {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    #[allow(clippy::unwrap_used)] // a literal pattern, exercised by the tests below
    RE.get_or_init(|| {
        regex::Regex::new(
            r"(?i)(?:\bcuda:|\b(?:gpu|device)_?(?:id|index|idx)?\s*[=:]\s*|set_device\(|\bdevice\(|--gpus?[= ]|current device:\s*|\b(?:gpu|device)\s+#?)(\d{1,3})\b",
        )
        .unwrap()
    })
}

/// CUDA's invalid device ordinal where no index can be wrong: every GPU index the text names is 0 and it sets
/// no CUDA_VISIBLE_DEVICES. Device 0 exists wherever CUDA sees a GPU, so the call was refused for what it
/// asked of the device: under WSL 2 the managed-memory paths (prefetch, advice, concurrent access) answer so
/// (glotzerlab/hoomd-blue#2098, fixed by #2099 checking for full unified memory). The line, if any.
fn ordinal_zero_refused(lines: &[String]) -> Option<&String> {
    let error = lines.iter().find(|l| invalid_device(l))?;
    if lines.iter().any(|l| l.contains("CUDA_VISIBLE_DEVICES")) {
        return None;
    }
    let mut indices = lines
        .iter()
        .filter(|l| l.len() <= 1024)
        .flat_map(|l| index_re().captures_iter(l).filter_map(|c| c[1].parse::<u32>().ok()).collect::<Vec<_>>())
        .peekable();
    indices.peek()?;
    indices.all(|i| i == 0).then_some(error)
}

/// Calls of CUDA's virtual memory management (CUDA Driver API, "Virtual Memory Management"), and the
/// allocators built on them (cuda.core's VirtualMemoryResource, ggml's VMM pool).
const VMM_CALLS: [&str; 6] =
    ["cuMemCreate", "cuMemAddressReserve", "cuMemMap", "cuMemSetAccess", "VirtualMemory", "pool_vmm"];

/// How many lines before CUDA's answer may name the VMM call it answered.
const VMM_WINDOW: usize = 3;

/// The first line where CUDA answered invalid device to a virtual-memory-management allocation: the answer on
/// the line naming the call or up to [`VMM_WINDOW`] lines after it (NVIDIA/cuda-python#1127: under WSL
/// cuda.core's VirtualMemoryResource allocations fail with `CUDA_ERROR_INVALID_DEVICE`).
fn vmm_refused(lines: &[String]) -> Option<String> {
    let vmm = |l: &String| VMM_CALLS.iter().any(|c| l.contains(c));
    lines.iter().enumerate().find_map(|(i, l)| {
        (invalid_device(l) && lines[i.saturating_sub(VMM_WINDOW)..=i].iter().any(vmm)).then(|| quoted(l))
    })
}

/// NVIDIA's GPU architectures by the names people write, oldest first (NVIDIA CUDA C++ Programming Guide,
/// compute capabilities: Kepler 3.x, Maxwell 5.x, Pascal 6.x, Volta 7.0, Turing 7.5, Ampere 8.x, Ada 8.9,
/// Hopper 9.0, Blackwell 10.x and 12.x).
const ARCHITECTURES: [&str; 9] =
    ["kepler", "maxwell", "pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell"];

/// Words that make an architecture's name in the same line a GPU's ("Pascal" alone may be the language
/// or the unit).
const GPU_WORDS: [&str; 8] = ["gpu", "gpus", "card", "cards", "architecture", "arch", "generation", "graphics"];

/// The first GPU architecture the text names in words beside a GPU word ("an issue with cudf on pascal
/// based cards", "my Maxwell GPU"), lowercased; lines longer than a sentence are not read.
fn architecture_said(lines: &[String]) -> Option<String> {
    lines.iter().filter(|l| l.len() <= 1024).find_map(|l| {
        let lower = l.to_ascii_lowercase();
        let words: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphabetic()).filter(|w| !w.is_empty()).collect();
        if !words.iter().any(|w| GPU_WORDS.contains(w)) {
            return None;
        }
        words.iter().find(|w| ARCHITECTURES.contains(w)).map(|w| (*w).to_owned())
    })
}

/// How many lines before a bare `Segmentation fault` the `nvidia-smi` command or its table header may be:
/// the header block is 8 lines, the date and the prompt two more.
const SMI_CRASH_WINDOW: usize = 12;

/// The first line where `nvidia-smi` died of a segmentation fault: the shell's report naming it (zsh's
/// `[1]    494 segmentation fault  nvidia-smi`), a sentence or title naming both ("nvidia-smi segmentation
/// fault (core dumped)", microsoft/WSL#11510), or a bare `Segmentation fault` (bash's `Segmentation fault
/// (core dumped)`, the strsignal text of SIGSEGV) within [`SMI_CRASH_WINDOW`] lines after the command or
/// an `NVIDIA-SMI` table header. Another program's crash after nvidia-smi printed its whole table is not
/// taken: the GPU rows ended it.
fn smi_crash(lines: &[String]) -> Option<String> {
    let segfault = |l: &str| l.to_ascii_lowercase().contains("segmentation fault");
    let smi_started = |l: &str| {
        let t = l.trim_end();
        t.contains("NVIDIA-SMI ") || t.ends_with("nvidia-smi") || t.ends_with("nvidia-smi.exe")
    };
    // A GPU row (`|   0  NVIDIA GeForce …`) or the processes block: the table went on past its header.
    let table_went_on = |l: &str| {
        let t = l.trim_start_matches('|').trim_start();
        l.starts_with('|') && (t.starts_with(|c: char| c.is_ascii_digit()) || t.starts_with("Processes:"))
    };
    lines.iter().enumerate().find_map(|(i, l)| {
        if !segfault(l) {
            return None;
        }
        if l.contains("nvidia-smi") {
            return Some(quoted(l));
        }
        let before = &lines[i.saturating_sub(SMI_CRASH_WINDOW)..i];
        let start = before.iter().rposition(|p| smi_started(p))?;
        (!before[start..].iter().any(|p| table_went_on(p))).then(|| quoted(l))
    })
}

/// The first line saying a shell found no `nvidia-smi` to run: bash's and sudo's `nvidia-smi: command not
/// found` (bminor/bash:execute_cmd.c@bash-5.2 `%s: command not found`; sudo-project/sudo:plugins/sudoers
/// `%s: command not found` after its secure_path lookup), dash's `nvidia-smi: not found`, zsh's `command not
/// found: nvidia-smi` (zsh-users/zsh:Src/exec.c `command not found: %s`), or a sentence naming `sudo
/// nvidia-smi` or root beside "could not find", "cannot find" or "not found" (gpustack/gpustack#1297:
/// "“sudo nvidia-smi” could not find the file nvidia-smi"; dstackai/dstack#3211: "`nvidia-smi` cannot be invoked
/// under root inside WSL2"). A container's own `executable file not found`
/// is not taken: that is the container runtime's mount, not the shell's PATH.
fn smi_not_found(lines: &[String]) -> Option<String> {
    const NOT_FOUND: [&str; 10] = [
        "not find",
        "cannot find",
        "can't find",
        "couldn't find",
        "not found",
        "no such file or directory",
        "cannot be invoked",
        "can't be invoked",
        "cannot run",
        "can't run",
    ];
    lines.iter().find_map(|l| {
        if !l.contains("nvidia-smi") || l.contains("executable file not found") {
            return None;
        }
        let shell = l.contains("nvidia-smi: command not found")
            || l.contains("nvidia-smi: not found")
            || l.contains("command not found: nvidia-smi");
        let lower = l.to_ascii_lowercase();
        let as_root = lower.contains("sudo") || lower.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| w == "root");
        let said = as_root && NOT_FOUND.iter().any(|n| lower.contains(n));
        (shell || said).then(|| quoted(l))
    })
}

/// The driver's own user-space libraries, as their file names begin: the CUDA driver (libcuda) and
/// NVML (libnvidia-ml). Under WSL2 the Windows driver maps both in at `/usr/lib/wsl/lib`; a Linux
/// driver package (Ubuntu's `libnvidia-compute-NNN`) puts its own in the distribution's library
/// folder (NVIDIA CUDA on WSL User Guide: the Windows driver's libcuda is mapped in at /usr/lib/wsl/lib
/// and no Linux driver belongs in WSL; ollama/ollama#1897, the generic libnvidia-ml of the nvidia-compute
/// packages loaded instead of `/usr/lib/wsl/lib/libnvidia-ml.so.1`).
const DRIVER_LIBS: [&str; 2] = ["libcuda.so", "libnvidia-ml.so"];

/// The library folders a Debian or Ubuntu package installs into (multiarch, `/lib` being
/// `/usr/lib` on merged-/usr systems). Not `/usr/lib` or `/usr/lib64` alone: programs list those as
/// candidates they try (numba's `Finding driver from candidates`), which says nothing of what exists.
const DISTRO_LIB_DIRS: [&str; 4] =
    ["/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib/aarch64-linux-gnu"];

/// `libcuda.so`, `libcuda.so.1`, `libnvidia-ml.so.545.29.06`: a driver library's file name (not a
/// glob like `libcuda.so*`, nor `libcudart.so`).
fn driver_lib_file(file: &str) -> bool {
    DRIVER_LIBS.iter().any(|lib| {
        file.strip_prefix(lib).is_some_and(|rest| {
            rest.is_empty() || (rest.starts_with('.') && rest.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
        })
    })
}

/// A line that names a file without showing it there: the loader or a shell saying it is absent, a
/// variable listing folders, a command that makes, moves or removes it, or a link into WSL's own folder
/// (`libcuda.so.1 -> /usr/lib/wsl/lib/libcuda.so.1`, the workaround some threads give).
fn names_without_showing(line: &str) -> bool {
    const ABSENT: [&str; 6] =
        ["no such file", "cannot access", "cannot open", "not found", "does not exist", "doesn't exist"];
    const COMMANDS: [&str; 5] = ["ln", "rm", "cp", "mv", "unlink"];
    let lower = line.to_ascii_lowercase();
    // Anywhere in the line: a script runs it as `$sh_c "rm -f …"` (beclab/Olares#2398).
    let command =
        lower.split_whitespace().any(|w| COMMANDS.contains(&w.trim_start_matches(['"', '\'', '`', '(', '$'])));
    ABSENT.iter().any(|a| lower.contains(a))
        || lower.contains("ld_library_path")
        || lower.contains("-> /usr/lib/wsl")
        || command
}

/// The Linux driver's libraries the text shows in a distribution folder: a path to one wherever it
/// stands (`ldconfig -p`, `ldd`, `ls`, `dpkg -S`, a ctypes or dlopen error naming the file it loaded,
/// numba's `Mapped libcuda.so paths`, ollama's `Discovered GPU libraries: [...]` and `no nvidia devices
/// detected by library ...`), or a line naming one such library beside such a folder
/// (`loading 'libnvidia-ml.so' from /lib/x86_64-linux-gnu`); the first such line, and the paths (at
/// most [`MAX_LISTED`]).
fn linux_driver_libs(lines: &[String]) -> (Option<usize>, Vec<String>) {
    let mut out: Vec<String> = Vec::new();
    let mut first = None;
    for (i, line) in lines.iter().enumerate() {
        if out.len() >= MAX_LISTED {
            break;
        }
        // Most lines name no driver library: a substring check spares them the rest.
        if !DRIVER_LIBS.iter().any(|lib| line.contains(lib)) || names_without_showing(line) {
            continue;
        }
        let words: Vec<&str> = line
            .split(|c: char| {
                c.is_whitespace() || matches!(c, '\'' | '"' | '`' | '[' | ']' | '(' | ')' | '=' | ',' | '<' | '>')
            })
            .map(|w| w.trim_end_matches([':', '.', ';']))
            .filter(|w| !w.is_empty())
            .collect();
        let mut found: Vec<String> = words
            .iter()
            .filter_map(|w| {
                let (dir, file) = w.rsplit_once('/')?;
                (DISTRO_LIB_DIRS.contains(&dir) && driver_lib_file(file)).then(|| (*w).to_owned())
            })
            .collect();
        if found.is_empty() {
            let dir = words.iter().find_map(|w| DISTRO_LIB_DIRS.iter().find(|d| w.trim_end_matches('/') == **d));
            let file = words.iter().find(|w| driver_lib_file(w));
            if let (Some(dir), Some(file)) = (dir, file) {
                found.push(format!("{dir}/{file}"));
            }
        }
        if !found.is_empty() {
            first.get_or_insert(i);
        }
        for f in found {
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    (first, out)
}

/// A Linux NVIDIA driver package: Ubuntu's `nvidia-driver-NNN[-open]`, Debian's `nvidia-driver`,
/// NVIDIA's repository's `cuda-drivers[-NNN]` and `nvidia-dkms-NNN`, RPM Fusion's `akmod-nvidia`, and
/// the package of the Linux driver's libcuda and libnvidia-ml that Ubuntu's and NVIDIA's driver
/// packages pull in, `libnvidia-compute-NNN` (ollama/ollama#1897: its generic libnvidia-ml loaded in
/// WSL2 instead of the one /usr/lib/wsl/lib maps in).
/// NVIDIA's CUDA on WSL guide: in WSL install only the toolkit (`cuda-toolkit-X-Y`), never a driver.
fn driver_package(word: &str) -> bool {
    let w = word.trim_matches(|c: char| matches!(c, '\'' | '"' | '`' | ',' | ';')).split(':').next().unwrap_or("");
    w.starts_with("nvidia-driver")
        || w.starts_with("cuda-drivers")
        || w.starts_with("nvidia-dkms-")
        || w == "akmod-nvidia"
        || w.starts_with("libnvidia-compute-")
}

/// The Linux driver packages the text shows installed: an install command of a package manager
/// naming one, `dpkg -l`'s `ii` rows of one, `dpkg --get-selections`' `PACKAGE install` rows (dpkg(1):
/// the package name, then its selection state), `apt list --installed`'s `PACKAGE/SUITE,now VERSION ARCH
/// [installed]` rows, or NVIDIA's `.run` driver installer run.
fn linux_driver_packages(lines: &[String]) -> Vec<String> {
    const MANAGERS: [&str; 5] = ["apt", "apt-get", "dnf", "yum", "zypper"];
    let mut out: Vec<String> = Vec::new();
    for line in lines {
        if out.len() >= MAX_LISTED {
            break;
        }
        // Markdown's inline code (`` `libnvidia-compute-510:amd64   install` ``) is not part of the words.
        let words: Vec<&str> = line.split_whitespace().map(|w| w.trim_matches('`')).filter(|w| !w.is_empty()).collect();
        // `apt-get -y install …`: a package manager, then its `install` further on.
        let install = words
            .iter()
            .position(|w| MANAGERS.contains(&w.rsplit('/').next().unwrap_or(w)))
            .is_some_and(|at| words.iter().skip(at + 1).any(|w| *w == "install"));
        let found: Vec<&str> = match words.as_slice() {
            ["ii", package, ..] if driver_package(package) => vec![*package],
            [package, "install" | "hold"] if driver_package(package) => vec![*package],
            [listed, .., "[installed]" | "[installed,automatic]" | "[installed,local]"]
                if listed.contains("/") && driver_package(listed.split('/').next().unwrap_or("")) =>
            {
                vec![listed.split('/').next().unwrap_or("")]
            }
            _ if install => words.iter().copied().filter(|w| driver_package(w)).collect(),
            _ => words
                .iter()
                .copied()
                .filter(|w| {
                    let file = w.rsplit('/').next().unwrap_or(w);
                    file.starts_with("NVIDIA-Linux-") && file.ends_with(".run")
                })
                .collect(),
        };
        for f in found {
            if !out.iter().any(|o| o == f) {
                out.push(f.to_owned());
            }
        }
    }
    out
}

/// A sentence saying a driver was installed inside WSL, in the words people use ("I installed the NVIDIA driver
/// in WSL", "installed all GPU driver, cudatoolkit, and cudnn in wsl too"): an install verb, then `driver(s)` with
/// GPU, NVIDIA, Linux, graphics or display among the three words before it, then `in`/`inside`/`into`/`within`
/// WSL, and no `Windows` between the driver and WSL (the driver installed on Windows, the toolkit in WSL). Not a
/// question, a condition or advice (NVIDIA's CUDA on WSL guide: "do not install any Linux display driver in
/// WSL"), which a negation, `if`, `should`, `must` or `?` marks.
fn driver_installed_in_words(lines: &[String]) -> Option<String> {
    const KINDS: [&str; 6] = ["gpu", "nvidia", "linux", "graphics", "display", "cuda"];
    const INTO: [&str; 5] = ["in", "inside", "into", "within", "on"];
    const NOT: [&str; 14] = [
        "not", "don't", "dont", "didn't", "didnt", "never", "no", "without", "if", "should", "must", "whether", "how",
        "avoid",
    ];
    // Most lines name neither: they are skipped without a copy.
    let has = |hay: &str, needle: &[u8]| hay.as_bytes().windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle));
    for line in lines.iter().filter(|l| has(l, b"driver") && has(l, b"wsl")) {
        for sentence in line.split_inclusive(['.', '!', '?', ';']) {
            if sentence.trim_end().ends_with('?') {
                continue;
            }
            let lower = sentence.to_ascii_lowercase();
            let words: Vec<&str> =
                lower.split(|c: char| !(c.is_ascii_alphanumeric() || c == '\'')).filter(|w| !w.is_empty()).collect();
            if words.iter().any(|w| NOT.contains(w)) {
                continue;
            }
            let Some(verb) = words.iter().position(|w| w.starts_with("install") || *w == "reinstalled") else {
                continue;
            };
            let Some(driver) = words
                .iter()
                .enumerate()
                .skip(verb + 1)
                .position(|(i, w)| {
                    matches!(*w, "driver" | "drivers")
                        && words[i.saturating_sub(3)..i].iter().any(|k| KINDS.contains(k))
                })
                .map(|p| p + verb + 1)
            else {
                continue;
            };
            let after = &words[driver + 1..];
            let wsl = after.iter().position(|w| matches!(*w, "wsl" | "wsl2"));
            let said =
                wsl.is_some_and(|at| at > 0 && INTO.contains(&after[at - 1]) && !after[..at].contains(&"windows"));
            if said {
                return Some(sentence.trim().chars().take(200).collect());
            }
        }
    }
    None
}

/// `wsl -l -v`: the header `NAME STATE VERSION`, then one row per distribution, the default one
/// starred. The starred row's version, else the version every row shares.
fn table(lines: &[String]) -> Option<(usize, u32, Option<String>)> {
    let header = lines.iter().position(|l| l.split_whitespace().eq(["NAME", "STATE", "VERSION"]))?;
    let mut rows = Vec::new();
    for line in lines.iter().skip(header + 1).take(32) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let (starred, words) = match words.split_first() {
            Some((&"*", rest)) => (true, rest),
            _ => (false, words.as_slice()),
        };
        let [name, _state, version] = words else { break };
        let Some(version) = version.parse::<u32>().ok().filter(|v| matches!(v, 1 | 2)) else { break };
        rows.push((starred, (*name).to_owned(), version));
    }
    let chosen = rows.iter().find(|(starred, ..)| *starred).or_else(|| {
        let first = rows.first()?;
        rows.iter().all(|(_, _, v)| *v == first.2).then_some(first)
    })?;
    Some((header, chosen.2, Some(chosen.1.clone())))
}

/// The kernel release in `uname -a`, `/proc/version`, dmesg or a report: WSL1's
/// `4.4.0-19041-Microsoft` (the Windows build in the middle) or a WSL2 kernel's
/// `-microsoft-standard` (`5.10.16.3-microsoft-standard-WSL2`); the line, the version and the release.
fn kernel(lines: &[String]) -> Option<(usize, u32, String)> {
    lines.iter().enumerate().find_map(|(i, l)| {
        let mut words = l.split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | ',' | '\'' | '"' | '`' | '|'));
        words.find_map(|w| {
            let w = w.trim_end_matches(['.', ':', ';']);
            if w.to_ascii_lowercase().contains("-microsoft-standard") {
                let numbered = w.bytes().next().is_some_and(|b| b.is_ascii_digit());
                // `linux-msft-wsl-5.15.153.1` or a bare `-microsoft-standard` keep the version, not a release.
                return Some((i, 2, if numbered { w.to_owned() } else { String::new() }));
            }
            wsl1_release(w).then(|| (i, 1, w.to_owned()))
        })
    })
}

/// `wsl --version`'s `Kernel version: 5.15.153.1-2` beside its `WSL version:` line: the WSL2 kernel
/// the Windows side runs.
fn wsl_version_kernel(lines: &[String]) -> Option<String> {
    if !lines.iter().any(|l| l.trim_start().starts_with("WSL version:")) {
        return None;
    }
    lines.iter().find_map(|l| {
        let v = l.trim().strip_prefix("Kernel version:")?.trim();
        v.bytes().next().filter(u8::is_ascii_digit).map(|_| v.to_owned())
    })
}

/// The first line naming a path or library only WSL2 has: the Windows driver store mapped in at
/// `/usr/lib/wsl/drivers`, the paravirtual GPU device `/dev/dxg`, or `libdxcore.so`, through which
/// WSL's libcuda reaches the GPU; or the kernel log of the driver behind `/dev/dxg`, dxgkrnl, which
/// logs as `misc dxg: dxgk: …` (microsoft/WSL2-Linux-Kernel drivers/hv/dxgkrnl/ioctl.c: `pr_fmt` "dxgk: ",
/// and `dev_*` messages of the `dxg` misc device start `misc dxg:`); or what only WSL 2's GPU answers: lspci's
/// line of its virtual render device ([`render_adapter`]), NVML's Not Supported for the minor number
/// ([`minor_number_unsupported`]).
fn paravirt(lines: &[String]) -> Option<usize> {
    lines.iter().position(|l| {
        l.contains("/usr/lib/wsl/drivers")
            || l.contains("/dev/dxg")
            || l.contains("libdxcore.so")
            || l.contains("misc dxg: dxgk:")
            || render_adapter(l)
            || minor_number_unsupported(l)
    })
}

/// An lspci line of WSL 2's virtual GPU: the device the Windows host projects onto the guest's virtual PCI bus
/// for each GPU, vendor 1414 (Microsoft) and device 008e, which the dxgkrnl driver binds
/// (microsoft/WSL2-Linux-Kernel:drivers/hv/dxgkrnl/dxgmodule.c@90bdbfc4a2e4b28c3e214247d09a857bf409ccb0:
/// `PCI_VENDOR_ID_MICROSOFT 0x1414`, `PCI_DEVICE_ID_VIRTUAL_RENDER 0x008E`), as lspci names it: `3D controller:
/// Microsoft Corporation Device 008e` without a name in its database, `Microsoft Corporation Basic Render
/// Driver` with one, `[1414:008e]` with `-nn`. The NVIDIA card itself is never on that bus.
fn render_adapter(line: &str) -> bool {
    line.len() <= 300
        && (line.contains("1414:008e")
            || line.contains("Microsoft Corporation")
                && (line.contains("Device 008e") || line.contains("Basic Render Driver")))
}

/// An NVML answer of Not Supported to the minor-number query (`error getting GPU device minor number: Not
/// Supported`, the NVIDIA device plugin; koordinator's `unable to get device minor number: Not Supported`):
/// nvml.h gives nvmlDeviceGetMinorNumber as "Supported only for Linux" (NVIDIA/DCGM:sdk/nvidia/nvml/nvml.h
/// @6e947dcac9b3160d61d98fea4741d51d4bec5c1f), the number of the GPU's /dev/nvidiaN node, which WSL 2's NVML, the
/// Windows driver's, does not have (NVIDIA/k8s-device-plugin#332: the maintainer, on WSL 2).
fn minor_number_unsupported(line: &str) -> bool {
    line.len() <= 2000 && line.contains("minor number") && line.contains("Not Supported")
}

/// nvidia-smi's table header whose `NVIDIA-SMI` version is not the driver's: inside WSL2 the Linux
/// nvidia-smi that the Windows driver maps in reports the Windows driver's version
/// (`| NVIDIA-SMI 560.35.02   Driver Version: 560.94   CUDA Version: 12.6 |`); on native Linux and
/// Windows both come from one driver package and are equal.
fn smi_of_wsl(lines: &[String]) -> Option<usize> {
    let version_after = |line: &str, label: &str| -> Option<String> {
        let rest = line.get(line.find(label)? + label.len()..)?.trim_start_matches([':', ' ']);
        let v: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
        (v.contains('.') && v.bytes().next().is_some_and(|b| b.is_ascii_digit())).then_some(v)
    };
    // The Windows driver's number has two parts (`560.94`; WSL's early previews also printed a two-part
    // `NVIDIA-SMI 510.00`): two three-part Linux numbers that differ are a library and a kernel module
    // of two Linux drivers (an update not yet rebooted into), not WSL.
    let parts = |v: &str| v.split('.').count();
    lines.iter().position(|l| {
        let Some(smi) = version_after(l, "NVIDIA-SMI ") else { return false };
        DRIVER_LABELS
            .iter()
            .find_map(|label| version_after(l, label))
            .is_some_and(|driver| driver != smi && !(parts(&driver) == 3 && parts(&smi) == 3))
    })
}

/// The GPUs a Windows nvidia-smi lists in the TCC driver model: in its table (header column
/// `TCC/WDDM` or `Driver-Model`, the GPU row's first cell ending in `TCC`), as `<index> <name>`; in
/// `-q`, `Driver Model` then `Current : TCC`, as the GPU's bus id.
fn tcc_gpus(lines: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_table = false;
    let mut gpu_id: Option<String> = None;
    let mut driver_model = false;
    for line in lines {
        if out.len() >= MAX_LISTED {
            break;
        }
        let t = line.trim();
        if t.contains("TCC/WDDM") || t.contains("Driver-Model") {
            in_table = true;
            continue;
        }
        if in_table && t.starts_with('|') {
            let first = t.trim_start_matches('|').split('|').next().unwrap_or("").trim();
            let mut words = first.split_whitespace();
            if let (Some(index), Some("TCC")) = (words.next(), first.split_whitespace().last())
                && index.bytes().all(|b| b.is_ascii_digit())
            {
                let name = first.trim_start_matches(index).trim_end_matches("TCC").trim();
                out.push(format!("{index} {name}"));
            }
            continue;
        }
        if t.starts_with("+-") || t.is_empty() {
            continue;
        }
        in_table = false;
        // nvidia-smi -q: `GPU 00000000:C1:00.0`, then `Driver Model`, `Current : TCC`.
        if let Some(id) = t.strip_prefix("GPU ").filter(|r| r.contains(':') && !r.contains(' ')) {
            gpu_id = Some(id.to_owned());
            driver_model = false;
        } else if t == "Driver Model" {
            driver_model = true;
        } else if driver_model && let Some(v) = t.strip_prefix("Current") {
            if v.trim_start_matches([' ', ':']).trim() == "TCC" {
                out.push(gpu_id.clone().unwrap_or_else(|| "(bus id not shown)".to_owned()));
            }
            driver_model = false;
        }
    }
    out
}

/// `4.4.0-19041-Microsoft`: a version, a build number, `Microsoft`.
fn wsl1_release(word: &str) -> bool {
    let mut parts = word.split('-');
    let (Some(version), Some(build), Some("Microsoft"), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let numbered = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    version.split('.').count() == 3 && version.split('.').all(numbered) && numbered(build)
}

/// `Microsoft Windows [Version 10.0.17763.292]` with a build older than [`FIRST_WSL2_BUILD`], in a text
/// that names WSL: that WSL is WSL1.
fn old_windows(lines: &[String]) -> Option<usize> {
    let wsl =
        lines.iter().any(|l| l.to_ascii_lowercase().split(|c: char| !c.is_ascii_alphanumeric()).any(|w| w == "wsl"));
    let build = |l: &str| -> Option<u32> {
        let rest = l.get(l.find("Microsoft Windows [Version 10.0.")? + "Microsoft Windows [Version 10.0.".len()..)?;
        rest.split('.').next()?.parse().ok()
    };
    wsl.then(|| lines.iter().position(|l| build(l).is_some_and(|b| b < FIRST_WSL2_BUILD))).flatten()
}

/// `WSL1`, `WSL 2`, `wsl-2` as words (not `WSL 2.0.9`, the WSL app's version): the version when
/// the text names exactly one. An issue form's unticked box (`- [ ] WSL 1` beside `- [X] WSL 2`, microsoft/WSL's
/// bug template) names an option not chosen, not the machine's.
fn words(lines: &[String]) -> Option<(usize, u32)> {
    let mut named: Vec<(usize, u32)> = Vec::new();
    let unticked = |l: &str| {
        let t = l.trim_start();
        t.starts_with("- [ ]") || t.starts_with("* [ ]")
    };
    for (i, line) in lines.iter().enumerate().filter(|(_, l)| !unticked(l)) {
        for v in named_versions(line) {
            if !named.iter().any(|(_, w)| *w == v) {
                named.push((i, v));
            }
        }
    }
    match named.as_slice() {
        [one] => Some(*one),
        _ => None,
    }
}

/// The first line that names WSL without a version (`on a WSL machine`, `in wsl`, `Windows Subsystem
/// for Linux`): the text comes from WSL, version not shown (0). Not a path (`/usr/lib/wsl/lib`, read by
/// `loader.rs`), nor the WSL app's own version line.
fn unnumbered(lines: &[String]) -> Option<usize> {
    lines.iter().position(|line| {
        let lower = line.to_ascii_lowercase();
        // nvidia-container-cli's debug log asks on every machine (NVIDIA/libnvidia-container:src/nvc.c, nvc_init:
        // `attempting to load dxcore to see if we are running under Windows Subsystem for Linux (WSL)`).
        if lower.contains("to see if we are running under") {
            return false;
        }
        if lower.contains("windows subsystem for linux") {
            return true;
        }
        let bytes = lower.as_bytes();
        lower.match_indices("wsl").any(|(at, _)| {
            let before = at.checked_sub(1).and_then(|i| bytes.get(i)).copied();
            let after = bytes.get(at + 3).copied();
            let word =
                |b: Option<u8>| b.is_none_or(|b| !b.is_ascii_alphanumeric() && b != b'/' && b != b'_' && b != b'.');
            // `wsl.` ending a sentence is the word; `wsl.exe` and `/usr/lib/wsl/` are not.
            let sentence_end = after == Some(b'.') && !bytes.get(at + 4).is_some_and(u8::is_ascii_alphanumeric);
            word(before) && (word(after) || sentence_end)
        })
    })
}

fn named_versions(line: &str) -> Vec<u32> {
    let lower = line.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut out = Vec::new();
    for (at, _) in lower.match_indices("wsl") {
        if at > 0 && bytes.get(at - 1).is_some_and(u8::is_ascii_alphanumeric) {
            continue;
        }
        let mut k = at + 3;
        if bytes.get(k).is_some_and(|b| matches!(b, b' ' | b'-')) {
            k += 1;
        }
        let Some(v) = bytes.get(k).and_then(|b| match b {
            b'1' => Some(1),
            b'2' => Some(2),
            _ => None,
        }) else {
            continue;
        };
        let next = bytes.get(k + 1).copied();
        // `WSL 2.0.9` is the WSL app's version, not the distribution's.
        let app_version = next == Some(b'.') && bytes.get(k + 2).is_some_and(u8::is_ascii_digit);
        if !next.is_some_and(|b| b.is_ascii_alphanumeric()) && !app_version {
            out.push(v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(text: &str) -> Option<(u32, Option<String>)> {
        Facts::read_by(read, text).wsl.map(|w| (w.version, w.distro))
    }

    #[test]
    fn the_default_distribution_of_wsl_l_v() {
        let t = "PS C:\\Users\\me> wsl -l -v\n  NAME            STATE           VERSION\n\
                 * Ubuntu-20.04    Running         1\n  docker-desktop  Stopped         2\n";
        assert_eq!(version(t), Some((1, Some("Ubuntu-20.04".to_owned()))));
        let t = "  NAME      STATE           VERSION\n  Ubuntu    Running         2\n  Debian    Stopped         1\n";
        assert_eq!(version(t), None, "no default and the rows disagree");
    }

    #[test]
    fn kernel_releases_of_wsl1_and_wsl2() {
        let one =
            "Linux DESKTOP-1 4.4.0-19041-Microsoft #1237-Microsoft Sat Sep 11 14:32:00 PST 2021 x86_64 GNU/Linux\n";
        assert_eq!(version(one), Some((1, None)));
        let two = "Linux version 5.15.153.1-microsoft-standard-WSL2 (root@941d701f84f1) (gcc (GCC) 11.2.0)\n";
        assert_eq!(version(two), Some((2, None)));
        assert_eq!(version("Linux box 6.8.0-45-generic #45-Ubuntu SMP x86_64\n"), None);
        assert_eq!(version("4.4.0-x-Microsoft and 4.4-19041-Microsoft\n"), None);
    }

    #[test]
    fn words_name_a_version_only_when_they_name_one() {
        assert_eq!(version("I'm using Windows with WSL1\n"), Some((1, None)));
        assert_eq!(version("Ubuntu 22.04 on WSL 2, Windows 11\n"), Some((2, None)));
        assert_eq!(version("I moved from WSL1 to WSL2\n"), None);
        // microsoft/WSL's bug template: the ticked box is the machine's, the unticked one an option not chosen.
        assert_eq!(version("### WSL Version\n\n- [X] WSL 2\n- [ ] WSL 1\n"), Some((2, None)));
        assert_eq!(
            version("WSL version: 2.0.9.0\nwsl 2.3.26\n"),
            Some((0, None)),
            "the WSL app's version: WSL, of no version"
        );
        assert_eq!(version("NEWSL1 AWSL2x\n"), None);
    }

    /// A prompt on a host Windows named is WSL (docs on `windows_named_prompt`); Git Bash's, a name set by hand,
    /// an e-mail address or a prompt cut short is not.
    #[test]
    fn a_prompt_on_a_windows_named_host_is_wsl() {
        let version = |text: &str| {
            let mut facts = Facts::default();
            prompt_signs(text, &mut facts);
            read(&super::super::clean::lines(text), &mut facts);
            facts.wsl.map(|w| (w.version, w.distro))
        };
        assert_eq!(version("ivan@DESKTOP-BEGS1AS:~$ cat .gitconfig\n"), Some((0, None)));
        assert_eq!(version("root@LAPTOP-AB12CD34:/home/me# nvidia-smi\n"), Some((0, None)));
        assert_eq!(version("me@DESKTOP-BEGS1AS MINGW64 ~/proj\n$ nvcc -V\n"), None, "Git Bash");
        assert_eq!(version("me@desktop-begs1as:~$ ls\n"), None, "a name set by hand");
        assert_eq!(version("mail me@DESKTOP-BEGS1AS.localdomain\n"), None);
        assert_eq!(version("me@DESKTOP-BEG:~$ ls\nme@LAPTOP-\n@DESKTOP-BEGS1AS:\n"), None);
        // A prompt whose path is on a Windows drive (the shape `mounts` documents).
        assert_eq!(version("(env) me@host:/mnt/c/Users/me/dev$ python server.py\n"), Some((0, None)));
        assert_eq!(version("me@host:/mnt/e/models$ ls\n"), None, "a disk native Linux mounts");
    }

    /// WSL named without a number is WSL, its version not shown (0); a path or the WSL app's version
    /// line is not. Samples: Docker's get-docker.sh run inside WSL2 prints `WSL DETECTED:`;
    /// rapidsai/jupyterlab-nvdashboard#74 "to track WSL (Windows Subsystem for Linux)"; a Chinese CUDA on
    /// WSL install note, "the version not installed on wsl" in Chinese (lowercase, between spaces; written
    /// with escapes, as the window's fonts have no CJK glyphs and every character in the sources is drawn).
    #[test]
    fn wsl_named_without_a_number_is_wsl_of_unknown_version() {
        assert_eq!(version("WSL DETECTED: We recommend using Docker Desktop for Windows.\n"), Some((0, None)));
        assert_eq!(version("Opening this issue to track WSL (Windows Subsystem for Linux).\n"), Some((0, None)));
        assert_eq!(
            version(
                "\u{53d6}\u{51b3}\u{4e8e} Driver Version \u{5bf9}\u{5e94}\u{7684}\u{7248}\u{672c}\u{ff0c}\u{975e} wsl \u{4e0a}\u{5b89}\u{88c5}\u{7684}\u{7248}\u{672c}\u{ff0c}\u{4e0d}\u{5fc5}\u{7406}\u{4f1a}\n"
            ),
            Some((0, None))
        );
        assert_eq!(version("ls /usr/lib/wsl/lib\n"), None);
        assert_eq!(version("NEWSLETTER wslx\n"), None);
    }

    /// A Windows build before WSL2 (Microsoft: WSL2 needs Windows 10 1903, build 18362, or later;
    /// https://learn.microsoft.com/en-us/windows/wsl/install-manual) beside the word WSL is WSL1. The
    /// lines are `ver`'s format, written for the test (1803 is build 17134).
    #[test]
    fn a_windows_build_before_wsl2_beside_the_word_wsl_is_wsl1() {
        let t = "Microsoft Windows [Version 10.0.17134.1304]\nUbuntu 18.04 under WSL\n";
        assert_eq!(version(t), Some((1, None)));
        assert_eq!(
            version("Microsoft Windows [Version 10.0.19045.2728]\nWSL: Ubuntu\n"),
            Some((0, None)),
            "WSL2 exists there: WSL, of no version"
        );
        assert_eq!(version("Microsoft Windows [Version 10.0.17134.1304]\n"), None, "WSL not named");
    }

    fn read_wsl(text: &str) -> Option<WslFacts> {
        Facts::read_by(read, text).wsl
    }

    /// Windows 10 releases with WSL 2 but before its GPU compute (1903 to 21H1), by build or version name
    /// (AbdBarho/stable-diffusion-webui-docker#129: "Windows 10 Pro, 20H2, 19042.928"); 21H2, Windows 11, a
    /// year, Ubuntu's version and a build inside a longer version are not.
    #[test]
    fn a_windows_10_release_before_21h2_is_kept() {
        let before = |t: &str| read_wsl(&format!("WSL2\n{t}\n")).and_then(|w| w.build_before_gpu);
        for t in [
            "Windows 10 Pro, 20H2, 19042.928",
            "Microsoft Windows [Version 10.0.19043.1288]",
            "OS build 19041.1415",
            "Windows 10 version 2004",
            "Windows 21H1",
        ] {
            assert!(before(t).is_some(), "{t}");
        }
        for t in [
            "Windows 10 Pro 21H2 19044.1766",
            "Microsoft Windows [Version 10.0.22631.4169]",
            "Windows 10, bought in 2004",
            "Ubuntu 20.04 on Windows",
            "Windows driver 31.0.19042.1",
            "19042 steps",
        ] {
            assert_eq!(before(t), None, "{t}");
        }
    }

    /// `/dev/dxg` said to be missing (microsoft/WSL#6809, verbatim; `ls`'s answer), not a line that lists it.
    #[test]
    fn dev_dxg_missing_is_kept() {
        let missing = |t: &str| read_wsl(&format!("WSL2\n{t}\n")).and_then(|w| w.dxg_missing);
        assert!(
            missing(
                "The /dev/dxg device is not available in WLS2 Linux distros when I updated to preview build 21354."
            )
            .is_some()
        );
        assert!(missing("ls: cannot access '/dev/dxg': No such file or directory").is_some());
        assert_eq!(missing("crw-rw-rw- 1 root root 10, 63 Nov 28 10:00 /dev/dxg"), None);
    }

    /// A driver installed inside WSL said in words: sentences written for the test in the words reporters
    /// use; the negatives are real: NVIDIA's CUDA on WSL guide ("Do not install any Linux display driver in
    /// WSL"), microsoft/WSL#6622 and #6623 (CUDA and NVIDIA drivers configured, the guide's URL naming wsl).
    #[test]
    fn a_driver_installed_inside_wsl_said_in_words_is_kept() {
        let said = |t: &str| read_wsl(&format!("WSL2\n{t}\n")).unwrap().linux_driver_said;
        assert!(said("Then I installed the NVIDIA driver in WSL as well.").is_some());
        assert!(said("and installed all GPU driver, cudatoolkit, and cudnn inside wsl too. Now it fails").is_some());
        assert!(said("I reinstalled the linux nvidia drivers into WSL2 twice").is_some());
        for not in [
            "Do not install any Linux display driver in WSL.",
            "I had installed WSL and configured CUDA and NVIDIA drivers.",
            "Then I re-installed the NVIDIA driver and CUDA by following instructions on \
             https://docs.nvidia.com/cuda/wsl-user-guide/index.html .",
            "I installed the NVIDIA driver on Windows and the toolkit in WSL.",
            "Should I install the GPU driver in WSL?",
            "I installed the driver in WSL",
        ] {
            assert_eq!(said(not), None, "{not}");
        }
        assert_eq!(said(&"installed gpu driver driver driver ".repeat(20_000)), None);
    }

    /// The release is kept wherever it shows: `uname -a` of a WSL2 kernel of 2020 (microsoft/WSL2-Linux-Kernel
    /// tag linux-msft-5.4.72), dmesg's first line, and `wsl --version` (its format as Microsoft documents
    /// it, https://learn.microsoft.com/en-us/windows/wsl/basic-commands#check-wsl-version).
    #[test]
    fn the_kernel_release_is_kept_from_uname_dmesg_and_wsl_version() {
        let uname =
            "Linux DESKTOP-7 5.4.72-microsoft-standard-WSL2 #1 SMP Wed Oct 28 23:40:43 UTC 2020 x86_64 GNU/Linux\n";
        let w = read_wsl(uname).unwrap();
        assert_eq!((w.version, w.kernel_release.as_deref()), (2, Some("5.4.72-microsoft-standard-WSL2")));
        let dmesg =
            "[    0.000000] Linux version 5.15.167.4-microsoft-standard-WSL2 (root@f9c826d3017f) (gcc (GCC) 11.2.0)\n";
        assert_eq!(read_wsl(dmesg).unwrap().kernel_release.as_deref(), Some("5.15.167.4-microsoft-standard-WSL2"));
        let one = read_wsl("Linux box 4.4.0-19041-Microsoft #1237-Microsoft x86_64\n").unwrap();
        assert_eq!((one.version, one.kernel_release.as_deref()), (1, Some("4.4.0-19041-Microsoft")));
        let app = "WSL version: 2.0.9.0\nKernel version: 5.15.133.1-1\nWSLg version: 1.0.59\n\
                   Windows version: 10.0.22631.2428\n";
        assert_eq!(read_wsl(app).unwrap().kernel_release.as_deref(), Some("5.15.133.1-1"));
        assert_eq!(read_wsl("Kernel version: 6.8.0\n"), None, "a kernel line without WSL");
        let table = "  NAME      STATE           VERSION\n* Ubuntu    Running         2\n";
        assert_eq!(read_wsl(table).unwrap().kernel_release, None);
    }

    /// Paths only WSL2 has: the paravirtual GPU `/dev/dxg` and `libdxcore.so` (in the loader cache
    /// WSL registers), and the Windows driver store `/usr/lib/wsl/drivers`.
    #[test]
    fn wsl2_gpu_paths_are_wsl2_from_inside_linux() {
        for t in [
            "crw-rw-rw- 1 root root 10, 63 Jan 16 19:34 /dev/dxg\n",
            "\tlibdxcore.so (libc6,x86-64) => /usr/lib/wsl/lib/libdxcore.so\n",
            "ls /usr/lib/wsl/drivers/nvmdsi.inf_amd64_6c4e8a1e2e5b5f84/\n",
            // dmesg | grep dxg, as microsoft/WSL#40680 pasted it.
            "[    1.906866] misc dxg: dxgk: dxgkio_query_adapter_info: Ioctl failed: -22\n",
        ] {
            let f = Facts::read_by(read, t);
            assert_eq!((f.wsl.map(|w| w.version), f.os), (Some(2), Some(OsFamily::Linux)), "{t}");
        }
        let t = "  NAME      STATE           VERSION\n* Ubuntu    Running         1\n/dev/dxg\n";
        assert_eq!(version(t).map(|v| v.0), Some(1), "the table outweighs a path");
    }

    /// nvidia-smi inside WSL2 reports the Windows driver, not its own version; in PowerShell and on native
    /// Linux the two are equal (also checked over `../shared/fixtures`: feuyeux/hello-ai's WSL2 header,
    /// 555.42.06 beside 555.97, and a Windows table of 591.86). Samples: a public WSL2 setup note for a Khadas Mind Graphics (RTX 4060 Ti),
    /// the same machine's nvidia-smi in PowerShell and in WSL2 (2025-01-16); a Linux header of 550.54.14.
    #[test]
    fn nvidia_smi_reporting_another_driver_than_itself_is_wsl2() {
        let wsl = "| NVIDIA-SMI 560.35.02              Driver Version: 560.94         CUDA Version: 12.6     |\n";
        assert_eq!(version(wsl), Some((2, None)));
        let windows = "| NVIDIA-SMI 560.94                 Driver Version: 560.94         CUDA Version: 12.6     |\n";
        assert_eq!(version(windows), None);
        let linux = "| NVIDIA-SMI 550.54.14              Driver Version: 550.54.14      CUDA Version: 12.4     |\n";
        assert_eq!(version(linux), None);
        let r610 = "| NVIDIA-SMI 610.43.02              KMD Version: 610.43.02     CUDA UMD Version: 13.3     |\n";
        assert_eq!(version(r610), None);
        assert_eq!(version("| NVIDIA-SMI 560.35.02   Driver Version: N/A   CUDA Version: N/A |\n"), None);
        // Two Linux numbers (SYSTRAN/faster-whisper#362, native Ubuntu 20.04 after a driver update):
        // a library and a kernel module apart, not WSL.
        let linux_pair = "| NVIDIA-SMI 470.199.02   Driver Version: 470.161.03   CUDA Version: 11.4     |\n";
        assert_eq!(version(linux_pair), None);
    }

    /// A Windows nvidia-smi's TCC GPUs, kept when the text is from WSL. Sample: a public Windows
    /// workstation's two Quadro RTX 8000 in TCC (driver 442.92), table as nvidia-smi printed it.
    #[test]
    fn windows_tcc_gpus_are_kept_beside_wsl() {
        let table = "| GPU  Name            TCC/WDDM | Bus-Id        Disp.A | Volatile Uncorr. ECC |\n\
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n\
|===============================+======================+======================|\n\
|   0  Quadro RTX 8000     TCC  | 00000000:15:00.0 Off |                  Off |\n\
| 33%   56C    P0    65W / 260W |      9MiB / 48767MiB |      0%      Default |\n\
+-------------------------------+----------------------+----------------------+\n\
|   1  Quadro RTX 8000     TCC  | 00000000:2D:00.0 Off |                  Off |\n\
| 40%   64C    P0    69W / 260W |      9MiB / 48767MiB |      0%      Default |\n\
+-------------------------------+----------------------+----------------------+\n";
        let w = read_wsl(&format!("{table}and in WSL2 nvidia-smi says: No devices were found\n")).unwrap();
        assert_eq!(w.tcc_gpus, ["0 Quadro RTX 8000", "1 Quadro RTX 8000"]);
        assert_eq!(read_wsl(table), None, "a Windows table alone is not WSL");
        let wddm = table.replace("TCC  |", "WDDM |");
        assert!(read_wsl(&format!("{wddm}WSL2\n")).unwrap().tcc_gpus.is_empty());
        let q = "GPU 00000000:C1:00.0\n    Product Name : NVIDIA RTX A6000\n    Driver Model\n        \
                 Current : TCC\n        Pending : TCC\nwsl -l -v says VERSION 2, WSL2\n";
        assert_eq!(read_wsl(q).unwrap().tcc_gpus, ["00000000:C1:00.0"]);
    }

    /// A Linux driver installed inside WSL, in the forms a shell shows it: the install command of
    /// Ubuntu's driver package (NVIDIA's guide names `cuda-drivers` as the package not to install in
    /// WSL), `dpkg -l`'s row, the `.run` installer; a toolkit install is not a driver.
    #[test]
    fn linux_driver_packages_installed_inside_wsl_are_kept() {
        let t = "WSL2\n$ sudo apt install nvidia-driver-535\n$ sudo apt-get -y install cuda-drivers\n\
                 ii  nvidia-dkms-535  535.183.01-0ubuntu0.22.04.1  amd64  NVIDIA DKMS package\n\
                 $ sudo sh ./NVIDIA-Linux-x86_64-550.54.14.run\n";
        assert_eq!(
            read_wsl(t).unwrap().linux_driver_packages,
            ["nvidia-driver-535", "cuda-drivers", "nvidia-dkms-535", "./NVIDIA-Linux-x86_64-550.54.14.run"]
        );
        let toolkit = "WSL2\n$ sudo apt-get -y install cuda-toolkit-12-6\nI read about nvidia-driver-535 somewhere\n";
        assert!(read_wsl(toolkit).unwrap().linux_driver_packages.is_empty());
    }

    /// The Linux driver's libcuda or libnvidia-ml shown in a distribution folder, wherever a program
    /// prints the path. Samples: ollama 0.6.0 under WSL (NixOS/nixpkgs#389898: `no nvidia devices detected
    /// by library /usr/lib/x86_64-linux-gnu/libcuda.so.535.183.01`, the next lines WSL's own); numba's
    /// `cuda.cudadrv.libs.test()` in the format of numba/numba#9034 (its candidates are not files found);
    /// `dpkg -S` and `ldd` rows and a sentence, written for the test.
    #[test]
    fn linux_driver_libraries_in_a_distribution_folder_are_kept() {
        let ollama = "time=2025-03-14T19:04:56.786Z level=INFO source=gpu.go:602 msg=\"no nvidia devices detected by \
                      library /usr/lib/x86_64-linux-gnu/libcuda.so.535.183.01\"\n\
                      time=2025-03-14T19:04:56.792Z level=INFO source=gpu.go:602 msg=\"no nvidia devices detected by \
                      library /usr/lib/wsl/lib/libcuda.so\"\n\
                      time=2025-03-14T19:04:56.921Z level=INFO source=gpu.go:612 msg=\"Unable to load cudart library \
                      /usr/lib/wsl/drivers/nvhm.inf_amd64_5c197d2d97068bef/libcuda.so.1.1: cuda driver library init \
                      failure: 500\"\n";
        let w = read_wsl(ollama).unwrap();
        assert_eq!(w.version, 2);
        assert_eq!(w.linux_driver_libs, ["/usr/lib/x86_64-linux-gnu/libcuda.so.535.183.01"]);
        let numba = "WSL2\nFinding driver from candidates:\n\tlibcuda.so\n\tlibcuda.so.1\n\t/usr/lib/libcuda.so\n\
                     \t/usr/lib64/libcuda.so.1\nUsing loader <class 'ctypes.CDLL'>\n\tTrying to load driver...\tok\n\
                     \t\tLoaded from libcuda.so\n\tMapped libcuda.so paths:\n\t\t/usr/lib/x86_64-linux-gnu/libcuda.so.530.30.02\n";
        assert_eq!(read_wsl(numba).unwrap().linux_driver_libs, ["/usr/lib/x86_64-linux-gnu/libcuda.so.530.30.02"]);
        let others = "WSL2\nlibnvidia-compute-535:amd64: /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.183.01\n\
                      \tlibcuda.so.1 => /lib/x86_64-linux-gnu/libcuda.so.1 (0x00007f2c1a000000)\n\
                      it picks up libnvidia-ml.so.1 from /usr/lib/aarch64-linux-gnu/ first\n";
        assert_eq!(
            read_wsl(others).unwrap().linux_driver_libs,
            [
                "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.183.01",
                "/lib/x86_64-linux-gnu/libcuda.so.1",
                "/usr/lib/aarch64-linux-gnu/libnvidia-ml.so.1"
            ]
        );
    }

    /// Lines that name such a path without showing the file there: TensorFlow's dlopen failure with
    /// its LD_LIBRARY_PATH, `ls` failing, a link or removal command (beclab/Olares#2398's script), a
    /// link into WSL's folder, a glob, another library (libcudart), a stub folder.
    #[test]
    fn paths_named_without_the_file_there_are_not_a_linux_driver() {
        let t = "WSL2\n\
                 Could not load dynamic library 'libcuda.so.1'; dlerror: libcuda.so.1: cannot open shared object file: \
                 No such file or directory; LD_LIBRARY_PATH: /usr/lib/x86_64-linux-gnu\n\
                 ls: cannot access '/usr/lib/x86_64-linux-gnu/libcuda.so': No such file or directory\n\
                 sudo ln -s /usr/lib/wsl/lib/libcuda.so.1 /usr/lib/x86_64-linux-gnu/libcuda.so\n\
                 \x20   $sh_c \"rm -f /usr/lib/x86_64-linux-gnu/libcuda.so.1\"\n\
                 lrwxrwxrwx 1 root root 30 /usr/lib/x86_64-linux-gnu/libcuda.so -> /usr/lib/wsl/lib/libcuda.so.1\n\
                 msg=\"gpu library search\" globs=\"[/usr/lib/x86_64-linux-gnu/libcuda.so* /usr/lib/wsl/lib/libcuda.so*]\"\n\
                 /usr/lib/x86_64-linux-gnu/libcudart.so.12 /usr/local/cuda/lib64/stubs/libcuda.so\n";
        assert_eq!(read_wsl(t).unwrap().linux_driver_libs, Vec::<String>::new());
    }

    /// The package of the Linux driver's libraries in the listings people paste: `dpkg --get-selections`
    /// (name, then selection state; `deinstall` is not installed) and `apt list --installed`, written for
    /// the test in those tools' formats.
    #[test]
    fn the_linux_driver_library_package_is_a_linux_driver_package() {
        let t = "WSL2\nlibnvidia-compute-535:amd64\t\t\t\tinstall\nlibnvidia-compute-470:amd64\t\t\t\tdeinstall\n\
                 libnvidia-compute-550/jammy-updates,jammy-security,now 550.120-0ubuntu0.22.04.1 amd64 [installed,automatic]\n\
                 libnvidia-container1/unknown,now 1.17.3-1 amd64 [installed]\n";
        assert_eq!(
            read_wsl(t).unwrap().linux_driver_packages,
            ["libnvidia-compute-535:amd64", "libnvidia-compute-550"]
        );
    }

    #[test]
    fn huge_and_cut_input_reads_in_linear_time() {
        let line = "| NVIDIA-SMI 560.35.02 Driver Version: 560.94 |  0  Quadro TCC  | /dev/dx Kernel version: 5.\n";
        // Sizes a quadratic reader could not read in the time, small enough for a loaded debug build.
        let text = line.repeat(10_000);
        let started = std::time::Instant::now();
        let _ = Facts::read_by(read, &text);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        let libs = "WSL2 /lib/x86_64-linux-gnu libcuda.so.1 /usr/lib/x86_64-linux-gnu/libnvidia-ml.so. install\n";
        let text = libs.repeat(5_000);
        let started = std::time::Instant::now();
        assert_eq!(Facts::read_by(read, &text).wsl.map(|w| w.linux_driver_libs.len()), Some(1));
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        for cut in
            ["| NVIDIA-SMI ", "| NVIDIA-SMI 560.", "Linux version -microsoft-standard", "GPU \nDriver Model\nCurrent"]
        {
            let _ = Facts::read_by(read, cut);
        }
    }

    #[test]
    fn only_the_kernel_release_makes_the_paste_linux() {
        assert_eq!(
            Facts::read_by(read, "Linux version 5.15.153.1-microsoft-standard-WSL2\n").os,
            Some(OsFamily::Linux)
        );
        for t in ["Windows 11; it works under WSL2 but not here\n", "  NAME STATE VERSION\n* Ubuntu Running 2\n"] {
            let f = Facts::read_by(read, t);
            assert_eq!((f.wsl.map(|w| w.version), f.os), (Some(2), None), "{t}");
        }
    }

    #[test]
    fn the_table_and_the_kernel_outweigh_the_words() {
        let t = "I thought this was WSL2\n  NAME      STATE           VERSION\n* Ubuntu    Running         1\n";
        assert_eq!(version(t).map(|v| v.0), Some(1));
        let t = "on WSL1\nLinux version 5.10.16.3-microsoft-standard-WSL2\n";
        assert_eq!(version(t).map(|v| v.0), Some(2));
    }

    /// Paths only WSL has: `/mnt/wsl/` and a Windows drive's own folders under `/mnt/<letter>/` (a Python
    /// traceback's frame, a prompt in a drive folder; lines written for the test in the shapes Python and
    /// bash print); not a disk mounted under /mnt on native Linux.
    #[test]
    fn wsl_mount_paths_say_wsl_of_unknown_version() {
        let traceback = "  File \"/mnt/c/Users/me/proj/train.py\", line 12, in <module>\n";
        let read = Facts::read_by(read, traceback);
        assert_eq!(read.wsl.map(|w| w.version), Some(0));
        assert_eq!(read.os, Some(OsFamily::Linux));
        assert_eq!(version("./main -m /mnt/wsl/models/7b.gguf\n"), Some((0, None)));
        assert_eq!(version("cd /mnt/d/Program Files/NVIDIA\n"), Some((0, None)));
        assert_eq!(version("./main -m /mnt/e/models/7b.gguf\n"), None, "a disk mounted under /mnt");
        assert_eq!(version("/mnt/data/Users/x\n/home/me/mnt/c/Users/x\n/mnt/c\n/mnt/\n"), None);
        assert_eq!(version("WSL2\n/mnt/c/Users/me\n"), Some((2, None)), "the words' version is kept");
    }

    /// CUDA's operating-system error after an OpenGL line is the interop's failure (a program's own assert that
    /// names no call, the shape of FLAMEGPU's `GPUassert`; lines written for the test); the error alone, or an
    /// OpenGL line long before it, is not.
    #[test]
    fn the_os_call_error_after_an_opengl_line_is_an_interop_failure() {
        let failure = |t: &str| read_wsl(t).and_then(|w| w.graphics_interop_failure);
        let text = "WSL2\nOpenGL Error : invalid operation\nGPUassert: OS call failed or operation not supported on this OS src/vis.cu 426\n";
        assert!(failure(text).is_some_and(|l| l.starts_with("GPUassert")), "{:?}", failure(text));
        assert_eq!(
            failure("WSL2\nGPUassert: OS call failed or operation not supported on this OS src/vis.cu 426\n"),
            None
        );
        let far = format!(
            "WSL2\nOpenGL 4.6\n{}CUDA error: OS call failed or operation not supported on this OS\n",
            "x\n".repeat(10)
        );
        assert_eq!(failure(&far), None);
    }

    /// A managed-memory prefetch refused as an invalid device is WSL 2's limited managed memory, as 801 is
    /// (rapidsai/rmm#2023's test output, verbatim); an invalid ordinal elsewhere is not.
    #[test]
    fn a_refused_prefetch_is_the_managed_memory_limit() {
        let line = "C++ exception with description \"CUDA error at: /home/coder/rmm/cpp/src/prefetch.cpp:40: cudaErrorInvalidDevice invalid device ordinal\" thrown in the test body.";
        assert!(read_wsl(&format!("WSL2\n{line}\n")).unwrap().not_supported_error.is_some());
        let other = "RuntimeError: CUDA error: invalid device ordinal";
        assert_eq!(read_wsl(&format!("WSL2\n{other}\n")).unwrap().not_supported_error, None);
    }

    /// CUDA's invalid device ordinal where every index the text names is 0 is a refused call, not a wrong index
    /// (glotzerlab/hoomd-blue#2098, verbatim lines); an index above 0 anywhere, or CUDA_VISIBLE_DEVICES, leaves
    /// the index in doubt; cudaErrorInvalidDeviceFunction is another error.
    #[test]
    fn an_invalid_ordinal_for_device_0_is_a_refused_call() {
        let said = "Despite a clean installation on WSL2 where `nvidia-smi` works correctly, `hoomd.device.GPU()` fails with `RuntimeError: CUDA Error: invalid device ordinal`.";
        let zero = "    device = hoomd.device.GPU(gpu_id=0)";
        let read = |text: &str| read_wsl(text).unwrap().not_supported_error;
        assert!(read(&format!("{said}\n{zero}\n")).is_some());
        assert_eq!(read(&format!("{said}\n")), None, "no index named");
        assert_eq!(read(&format!("{said}\n{zero}\nmodel.to('cuda:1')\n")), None);
        assert_eq!(read(&format!("{said}\n{zero}\nexport CUDA_VISIBLE_DEVICES=0\n")), None);
        assert_eq!(read(&format!("WSL2\n{zero}\ncudaErrorInvalidDeviceFunction\n")), None);
    }

    /// An invalid device answered to a virtual-memory-management allocation is WSL 2 refusing that path
    /// (NVIDIA/cuda-python#1127's description, verbatim), not the managed-memory limit; without a VMM call
    /// within three lines it is not read so.
    #[test]
    fn an_invalid_device_after_a_vmm_allocation_is_the_vmm_path() {
        let text = "When running the VirtualMemoryResources tests under the Windows Subsystem for Linux (WSL) allocation requests throw the following error:\n>   raise CUDAError(f\"{name.decode()}: {expl}\")\nE   cuda.core.experimental._utils.cuda_utils.CUDAError: CUDA_ERROR_INVALID_DEVICE: This indicates that the device ordinal supplied by the user does not correspond to a valid CUDA device or that the action requested is invalid for the specified device.\n";
        let wsl = read_wsl(text).unwrap();
        assert!(wsl.vmm_refused.as_deref().is_some_and(|l| l.contains("CUDA_ERROR_INVALID_DEVICE")), "{wsl:?}");
        assert_eq!(wsl.not_supported_error, None);
        let far = text.replacen("error:\n", "error:\nx\ny\nz\n", 1);
        assert_eq!(read_wsl(&far).unwrap().vmm_refused, None);
    }

    /// A pinned allocation's failure said in words on the line that names the pinning
    /// (FlashML-org/FreeToken#443, the maintainer, verbatim), not a mention of pinning without a failure.
    #[test]
    fn a_pinning_failure_said_in_words_is_read() {
        let said = "WSL2\nwsl2 \u{672c}\u{8d28}\u{662f} windows \u{4f46} engine \u{4e0d}\u{77e5}\u{9053}\u{ff0c}\u{6240}\u{4ee5}\u{4f1a}\u{7528} linux \u{7684}\u{65b9}\u{5f0f}\u{53bb} pin memory\u{3002}\u{8fd9}\u{4e2a} pin memory \u{4f1a}\u{5931}\u{8d25}\u{5bfc}\u{81f4}\u{5927}\u{91cf} fallback \u{5230} pagable memory\u{3002}\n";
        assert!(read_wsl(said).unwrap().pinned_alloc_failure.is_some());
        assert!(read_wsl("WSL2\nPinning memory fails with large batches\n").unwrap().pinned_alloc_failure.is_some());
        assert_eq!(read_wsl("WSL2\nWe use pinned memory for the loader.\n").unwrap().pinned_alloc_failure, None);
    }

    /// The failure readers on malformed, truncated and huge input: no panic, and a long text read in time
    /// linear in its size (the pinned window looks back a fixed number of lines).
    #[test]
    fn failure_readers_take_malformed_and_huge_input() {
        for t in ["/mnt/", "/mnt/c", "/mnt/\u{e9}/Users/", "cudaGraphicsGL", "pinned memory", "out of memory\n"] {
            let _ = read_wsl(&format!("WSL2\n{t}"));
        }
        let huge = format!("WSL2\n{}", "pin_memory out of memory /mnt/x/ cudaGraphicsGL\n".repeat(50_000));
        let started = std::time::Instant::now();
        let w = read_wsl(&huge).unwrap();
        assert!(w.pinned_alloc_failure.is_some() && w.graphics_interop_failure.is_some());
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
    }

    /// A shell inside WSL that found no nvidia-smi: zsh after an SSH login (microsoft/WSL#8794, verbatim), sudo's
    /// and bash's words, and a sentence saying sudo could not find it (gpustack/gpustack#1297). A container's
    /// `executable file not found` and a sentence without sudo or root are not taken.
    #[test]
    fn nvidia_smi_not_found_inside_wsl_is_kept() {
        let missing = |t: &str| read_wsl(t).and_then(|w| w.smi_not_found);
        let ssh = "Welcome to Ubuntu 20.04 LTS (GNU/Linux 5.10.16.3-microsoft-standard-WSL2 x86_64)\n(base) ➜  ~ nvidia-smi\nzsh: command not found: nvidia-smi";
        assert_eq!(missing(ssh).as_deref(), Some("zsh: command not found: nvidia-smi"));
        assert!(missing("WSL2\n$ sudo nvidia-smi\nsudo: nvidia-smi: command not found").is_some());
        assert!(missing("- [X] WSL 2\nbash: nvidia-smi: command not found").is_some());
        let words =
            "In WSL+ubuntu, “sudo nvidia-smi” could not find the file nvidia-smi. thne server will start successfully";
        assert!(missing(words).is_some());
        assert_eq!(missing("WSL2\nexec: \"nvidia-smi\": executable file not found in $PATH: unknown"), None);
        assert_eq!(missing("WSL2\nI could not find why nvidia-smi is slow"), None);
        // dstackai/dstack#3211 (verbatim).
        let invoked = "The shim running on SSH fleet hosts fails to detect NVIDIA GPUs because `nvidia-smi` cannot be invoked under root inside WSL2.";
        assert!(missing(invoked).is_some());
        assert_eq!(missing("bash: nvidia-smi: command not found"), None, "not WSL");
    }

    /// WSL's nvidia-smi dying of a segmentation fault is kept: named in a title (microsoft/WSL#11510, "WSL
    /// nvidia-smi segmentation fault (core dumped)"), in a sentence (microsoft/WSL#11870), or as bash's report
    /// right after the command or its header; another program's crash, or one after a whole table, is not.
    #[test]
    fn nvidia_smis_segmentation_fault_inside_wsl_is_kept() {
        let crash = |t: &str| read_wsl(t).and_then(|w| w.smi_crash);
        assert_eq!(
            crash("WSL2\nWSL nvidia-smi segmentation fault (core dumped)").as_deref(),
            Some("WSL nvidia-smi segmentation fault (core dumped)")
        );
        assert!(
            crash("- [X] WSL 2\nnvidia-smi in every wsl distro gives error \"segmentation fault\" on latest nvidia drivers")
                .is_some()
        );
        let header = "| NVIDIA-SMI 560.27                 Driver Version: 560.70         CUDA Version: 12.6     |";
        assert_eq!(
            crash(&format!("WSL2\n$ nvidia-smi\nFri Aug  2 18:55:26 2024\n{header}\nSegmentation fault (core dumped)"))
                .as_deref(),
            Some("Segmentation fault (core dumped)")
        );
        assert_eq!(crash("WSL2\n$ nvidia-smi\nSegmentation fault").as_deref(), Some("Segmentation fault"));
        let whole = format!(
            "WSL2\n$ nvidia-smi\n{header}\n|   0  NVIDIA GeForce RTX 4070 ...  On  | 00000000:01:00.0  On |  N/A |\n$ python train.py\nSegmentation fault (core dumped)"
        );
        assert_eq!(crash(&whole), None);
        assert_eq!(crash("WSL2\n$ python train.py\nSegmentation fault (core dumped)"), None);
        assert_eq!(crash("nvidia-smi segmentation fault"), None, "not WSL");
    }

    /// An architecture named beside a GPU word is kept (both samples from rapidsai/cudf#9753's description:
    /// "I can run RAPIDS on WSL2 with a Pascal GPU …", "Running another GPU arch (Turning, Volta, Ampere)");
    /// the word beside no GPU word is not.
    #[test]
    fn a_gpu_architecture_named_in_words_is_kept() {
        let arch = |t: &str| read_wsl(&format!("WSL2\n{t}")).and_then(|w| w.architecture_said);
        assert_eq!(
            arch("I can run RAPIDS on WSL2 with a Pascal GPU (like the one on my laptop)").as_deref(),
            Some("pascal")
        );
        assert_eq!(arch("Running another GPU arch (Turning, Volta, Ampere)").as_deref(), Some("volta"));
        assert_eq!(arch("the pressure is 101325 Pascal"), None);
        assert_eq!(arch("Written in Pascal and Ada"), None);
    }
}
