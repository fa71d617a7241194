//! nvcc and the builds that run it: an nvcc older than the GPU architecture it was asked to build for
//! (every CUDA release's nvcc knows the architectures up to its own release, the knowledge base's
//! `first_toolkit` per capability, so a build for a newer one fails with `nvcc fatal : Unsupported gpu
//! architecture 'compute_89'`); a build that ran `<root>/bin/nvcc` where the root it was given holds
//! none; a build or a shell that found no `nvcc` on PATH.

use super::context::build_cuda;
use super::{Ctx, Rule};
use gpu_doctor_model::shell::ShellCommand;
use gpu_doctor_model::{Category, ComputeCapability, CudaVersion, Finding, Severity, ToolkitKind};

const NVCC_TOO_OLD: Rule = Rule {
    id: "toolkit.nvcc_too_old",
    category: Category::Other,
    severity: Severity::Warning,
    trigger: "nvcc refused an architecture (`nvcc fatal : Unsupported gpu architecture 'compute_89'`, `Value \
              'sm_90' is not defined for option 'gpu-architecture'`: the `nvcc.unsupported_gpu_architecture` row): \
              its CUDA release is older than the first that builds for it (gpus.toml's first_toolkit of that \
              capability: 8.6 from 11.1, 8.9 and 9.0 from 11.8, 12.0 from 12.8), so building that CUDA code (a \
              PyTorch extension, llama.cpp, any CMake CUDA project) fails until a newer toolkit is used or the \
              architecture is left out. An old nvcc beside a new GPU alone says nothing: prebuilt packages do not \
              use it.",
    source: "gpus.toml first_toolkit (llvm/llvm-project:clang/lib/Basic/Cuda.cpp, NVIDIA's CUDA toolkit release \
             notes: the architectures each release adds); the nvcc message row's source",
};

const MISSING_AT_ROOT: Rule = Rule {
    id: "toolkit.nvcc_missing_at_root",
    category: Category::EnvVarMisconfig,
    severity: Severity::Error,
    trigger: "A build ran nvcc by its path, `<root>/bin/nvcc`, and the shell, make or Python said there is no \
              such file (`/bin/sh: /usr/local/cuda/bin/nvcc: not found`, `make: …/bin/nvcc: Command not found`, \
              `[Errno 2] No such file or directory: '/usr/local/cuda/bin/nvcc'`): the CUDA root it was given \
              (CUDA_HOME, CUDA_PATH, a Makefile's default /usr/local/cuda, an empty variable giving `/bin/nvcc`) \
              holds no nvcc. A root with a stray `:` is `env.cuda_home_not_a_toolkit_root`'s.",
    source: "torch.utils.cpp_extension (CUDA_HOME/bin/nvcc, CUDA_HOME defaulting to /usr/local/cuda); NVIDIA's \
             cuda-samples Makefiles (CUDA_PATH ?= /usr/local/cuda); the messages' rows (`shell.nvcc_not_found`, \
             `shell.nvcc_not_found_python`); CUDA Installation Guide for Linux (the toolkit in /usr/local/cuda-X.Y, a \
             distribution's package in /usr/bin)",
};

const NOT_ON_PATH: Rule = Rule {
    id: "toolkit.nvcc_not_on_path",
    category: Category::EnvVarMisconfig,
    severity: Severity::Error,
    trigger: "A build or a shell ran `nvcc` by name and found none on PATH (`/bin/sh: 1: nvcc: not found`, `make: \
              nvcc: Command not found`, `bash: nvcc: command not found`): no CUDA toolkit is installed, or its bin \
              folder is not on PATH (the toolkit's installer does not add it; `sudo` resets PATH). In NVIDIA's CUDA \
              image of a base or runtime flavour (`nvidia/cuda:10.0-cudnn7-runtime-ubuntu18.04`) there is none to \
              find: the fix names the devel tag. Where the build says it builds without CUDA (`Torch was not built \
              with CUDA support, not building … GPU extensions`), only a note: its nvcc call was a probe it does not \
              need.",
    source: "CUDA Installation Guide for Linux, post-installation actions (`export PATH=/usr/local/cuda-X.Y/bin${PATH:+:${PATH}}`); \
             sudo's secure_path (sudoers(5)); the message row `shell.nvcc_not_found`; espnet/warp-ctc#4 (a CPU-only \
             build's setup.py probing nvcc)",
};

pub(super) const RULES: &[Rule] = &[NVCC_TOO_OLD, MISSING_AT_ROOT, NOT_ON_PATH];

/// The fix for nvcc missing in NVIDIA's CUDA image `root` (`nvidia/cuda:10.0-cudnn7-runtime-ubuntu18.04 (container
/// image)`): its base and runtime flavours hold the CUDA runtime and libraries, not the compiler, which only the devel
/// flavour of the same tag has (https://nvidia.github.io/container-wiki/toolkit/container-images.html, "CUDA images
/// come in three flavors").
pub(super) fn devel_image_fix(root: &str) -> String {
    let image = root.trim_end_matches(" (container image)");
    let devel = ["-runtime", "-base"]
        .iter()
        .find(|f| image.contains(*f))
        .map(|f| image.replacen(f, "-devel", 1))
        .filter(|d| d != image);
    let instead = devel.map_or_else(|| "the devel tag of the same CUDA version".to_owned(), |d| format!("`{d}`"));
    format!(
        "{image} is a base or runtime flavour of NVIDIA's CUDA image, which holds no nvcc and no CUDA headers (only \
         the devel flavour does): build on {instead} instead (`FROM` in a Dockerfile, or `docker run`), or install \
         the toolkit of the same CUDA version into the image."
    )
}

/// The message rows of a program that could not run nvcc.
const NOT_FOUND: [&str; 2] = ["shell.nvcc_not_found", "shell.nvcc_not_found_python"];

/// [`NOT_ON_PATH`] as a note where the build said it builds without CUDA (`said`): its call to `nvcc` (by `path`) was a
/// probe it does not need.
fn not_needed(said: &str, path: &str) -> Finding {
    let mut note = NOT_ON_PATH.finding(
        "nvcc is not on PATH, and this build does not need it",
        "The build called `nvcc` to ask its version although it builds without CUDA: the framework it builds for \
         has no CUDA. Where no GPU is meant to be used that is the package's own probe failing, nothing to repair \
         in the GPU setup; where one is, the CPU-only framework is the cause, not nvcc.",
        vec![format!("pasted: {said}"), format!("pasted: nvcc ran by the name `{path}` and was not found")],
        Some(
            "Nothing in the GPU setup: ask the package for a CPU-only build (or install a CUDA toolkit only so its \
             setup finds nvcc). To use a GPU, install a CUDA build of the framework first."
                .to_owned(),
        ),
    );
    note.severity = Severity::Info;
    note
}

/// nvcc that ran by path or name and was not there ([`MISSING_AT_ROOT`], [`NOT_ON_PATH`]).
fn not_found(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let missing: Vec<&str> =
        cx.s.messages
            .iter()
            .filter(|m| NOT_FOUND.contains(&m.id.as_str()))
            .filter_map(|m| m.values.get("path").map(String::as_str))
            .collect();
    let Some(&path) = missing.first() else { return };
    // The build said it builds without CUDA (the framework it builds for has none): its call to nvcc was a probe
    // whose failure it does not need (espnet/warp-ctc#4: `setup.py` asked `nvcc --version` on a CPU-only machine).
    if let Some(said) = &cx.s.stated_build_without_cuda {
        out.push(not_needed(said, path));
        return;
    }
    // A root that is a `:` list (`:/usr/local/cuda:/usr/local/cuda-10.1/bin/nvcc`) is no folder: CUDA_HOME held the
    // list, which env.cuda_home_not_a_toolkit_root says.
    if path.contains(':') {
        return;
    }
    // The nvcc the text shows elsewhere (`which nvcc`, an nvcc that printed its version), and its root.
    let installs = cx.s.toolkits.value().map(|t| t.installs.as_slice()).unwrap_or_default();
    // An image's nvcc is inside the image, not a folder of the machine that ran the build.
    let elsewhere = installs
        .iter()
        .filter(|i| i.kind != ToolkitKind::ContainerImage)
        .find(|i| i.nvcc.as_deref().is_some_and(|n| n != path));
    let torch_cuda = cx.frameworks().find(|(_, f)| f.name == "torch").and_then(|(_, f)| build_cuda(f)).map(|(c, _)| c);
    let install = match torch_cuda {
        Some(c) => format!(
            "install the CUDA {c} toolkit, torch's own CUDA (NVIDIA's cuda-toolkit-{}-{} package, or `conda install -c \
             nvidia cuda-nvcc={c}` in a conda environment)",
            c.major, c.minor
        ),
        None => "install the CUDA toolkit (https://developer.nvidia.com/cuda-downloads; in a conda environment `conda \
                 install -c nvidia cuda-nvcc` of the CUDA release the framework was built with)"
            .to_owned(),
    };
    let mut evidence: Vec<String> = Vec::new();
    if let Some(i) = elsewhere {
        evidence.push(format!("nvcc shown at {}", i.nvcc.as_deref().unwrap_or_default()));
    }
    // NVIDIA's CUDA image named without nvcc: a base or runtime flavour, which holds none.
    let runtime_image = installs.iter().find(|i| i.kind == ToolkitKind::ContainerImage && i.nvcc.is_none());
    if path == "nvcc" {
        let fix = match (elsewhere, runtime_image) {
            (Some(i), _) => format!(
                "Put the toolkit's bin folder, {}, first on PATH where the build runs (under sudo, PATH is reset: run \
                 the build without sudo).",
                super::fix::word(cx, &format!("{}/bin", i.root.trim_end_matches('/')))
            ),
            (None, Some(image)) => devel_image_fix(&image.root),
            (None, None) => format!(
                "If a CUDA toolkit is installed (`ls -d /usr/local/cuda*`), put its bin folder on PATH: `export \
                 PATH=/usr/local/cuda/bin:$PATH` (under sudo, PATH is reset: run the build without sudo); else {install}."
            ),
        };
        out.push(NOT_ON_PATH.finding(
            "nvcc is not on PATH where the build runs".to_owned(),
            "The build (or the shell) ran `nvcc` by name and no folder on PATH holds it: no CUDA toolkit is installed, \
             or its bin folder was never added to PATH (NVIDIA's installer leaves that to the user), or sudo reset \
             PATH."
                .to_owned(),
            evidence,
            Some(fix),
        ));
        return;
    }
    let root = path.trim_end_matches("/bin/nvcc");
    let shown = if root.is_empty() { "an empty root (`/bin/nvcc`)".to_owned() } else { super::fix::word(cx, root) };
    let fix = match elsewhere {
        Some(i) => {
            let r = i.root.trim_end_matches('/');
            let make = ShellCommand::new("make").arg(format!("CUDA_PATH={r}"));
            format!(
                "Point the build at the toolkit whose nvcc is shown, {}: set CUDA_HOME to it for PyTorch extensions \
                 and most setup.py builds, CUDA_PATH for NVIDIA's CUDA samples' Makefiles (`{}`), CUDAToolkit_ROOT for \
                 CMake; or install NVIDIA's toolkit in the root the build expects \
                 (https://developer.nvidia.com/cuda-downloads).",
                super::fix::word(cx, r),
                super::fix::command(cx, &make, true)
            )
        }
        None => format!(
            "Set the build's CUDA root to a toolkit that has bin/nvcc (CUDA_HOME for PyTorch extensions and setup.py \
             builds, CUDA_PATH for NVIDIA's samples' Makefiles, CUDAToolkit_ROOT for CMake; `ls -d /usr/local/cuda*` \
             lists NVIDIA's), or {install}."
        ),
    };
    out.push(MISSING_AT_ROOT.finding(
        format!("The build ran {path}, which does not exist"),
        format!(
            "The build looked for nvcc under the CUDA root it was given, {shown}, and there is none: that root is \
             another toolkit's default (a Makefile's or PyTorch's /usr/local/cuda), a toolkit without its compiler (a \
             runtime-only or conda cudatoolkit install), or a variable left empty."
        ),
        evidence,
        Some(fix),
    ));
}

/// The message row of nvcc refusing an architecture.
const REFUSED: &str = "nvcc.unsupported_gpu_architecture";

/// `compute_89`, `sm_90a`, `sm_120` → 8.9, 9.0, 12.0: the digits, the last one the minor.
fn arch_cc(arch: &str) -> Option<ComputeCapability> {
    let digits: String = arch
        .strip_prefix("compute_")
        .or_else(|| arch.strip_prefix("sm_"))?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    if !(2..=3).contains(&digits.len()) {
        return None;
    }
    let (major, minor) = digits.split_at(digits.len() - 1);
    Some(ComputeCapability { major: major.parse().ok()?, minor: minor.parse().ok()? })
}

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    not_found(cx, out);
    too_old(cx, out);
}

/// [`NVCC_TOO_OLD`].
fn too_old(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let newest: Option<CudaVersion> =
        cx.s.toolkits
            .value()
            .and_then(|t| t.installs.iter().filter(|i| i.nvcc.is_some()).filter_map(|i| i.version).max());
    // The architectures nvcc refused, with the toolkit each first came with; the newest such.
    let need =
        cx.s.messages
            .iter()
            .filter(|m| m.id == REFUSED)
            .filter_map(|m| {
                let arch = m.values.get("arch").or_else(|| m.values.get("value"))?;
                let cc = arch_cc(arch)?;
                Some((cx.kb.gpus.row(cc)?.first_toolkit, cc, arch.clone()))
            })
            .max_by_key(|(first, _, _)| *first);
    let Some((first, cc, arch)) = need else { return };
    let mut evidence = Vec::new();
    if let Some(n) = newest {
        evidence.push(format!("newest nvcc shown: CUDA {n}"));
    }
    evidence.push(format!("{arch}: capability {cc} ({}) is built from CUDA {first}", cc.sm()));
    let nvcc_words = newest.map_or_else(|| "The nvcc that ran".to_owned(), |n| format!("nvcc {n}"));
    let summary = format!("{nvcc_words} is too old to build for {}: CUDA {first} or newer is needed", cc.sm());
    let detail = format!(
        "Each CUDA release's nvcc knows the GPU architectures up to its own release; {} first came with CUDA {first}, \
         so the build stops at `nvcc fatal : Unsupported gpu architecture`. The prebuilt packages (PyTorch's wheels, \
         llama.cpp's releases) are not affected.",
        cc.sm()
    );
    // The machine's GPUs that this nvcc already builds for: the build asked for more than they need.
    let covered: Vec<String> = cx
        .gpus
        .iter()
        .filter(|g| {
            g.cc.is_some_and(|c| {
                c != cc && cx.kb.gpus.row(c).is_some_and(|r| newest.is_some_and(|n| n >= r.first_toolkit))
            })
        })
        .map(|g| format!("{} ({})", g.name, g.cc.map(ComputeCapability::sm).unwrap_or_default()))
        .collect();
    let narrower = if covered.is_empty() || cx.gpus.iter().any(|g| g.cc == Some(cc)) {
        String::new()
    } else {
        format!(
            " Or build for the GPU this machine has only, {}: leave {arch} out of the build's architecture list \
             (CMAKE_CUDA_ARCHITECTURES, TORCH_CUDA_ARCH_LIST, -gencode flags).",
            covered.join(", ")
        )
    };
    let fix = format!(
        "Install the CUDA {first} toolkit or newer (NVIDIA's cuda-toolkit-{}-{} package from its repository, or `conda \
         install -c nvidia cuda-nvcc={first}` in a conda environment), put its bin folder first on PATH and set \
         CUDA_HOME to it, then build again (`nvcc --version` must print release {first} or later).{narrower}",
        first.major, first.minor
    );
    out.push(NVCC_TOO_OLD.finding(summary, detail, evidence, Some(fix)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architecture_names_give_their_capability() {
        let cc = |s: &str| arch_cc(s).map(|c| c.to_string());
        assert_eq!(cc("compute_89").as_deref(), Some("8.9"));
        assert_eq!(cc("sm_90a").as_deref(), Some("9.0"));
        assert_eq!(cc("sm_120").as_deref(), Some("12.0"));
        assert_eq!(cc("sm_5"), None);
        assert_eq!(cc("compute_"), None);
        assert_eq!(cc("gfx90a"), None);
        assert_eq!(cc("sm_1234"), None);
    }
}
