//! nvcc's verbose listing: `nvcc -v` (`--verbose`) and `nvcc --dryrun` print, before the stages they
//! run, the settings the toolkit's bin/nvcc.profile makes, one per line as `#$ NAME=value`, then each
//! stage's command after `#$ `. CMake's compiler identification runs `nvcc -v` and prints that output
//! when it fails, which is where most pastes of it come from. nvcc.profile starts with
//! `TOP = $(_HERE_)/..`, so `_HERE_` is the folder of the nvcc that ran and its parent that nvcc's
//! toolkit; the host preprocessor's stage carries nvcc's own release as `-D__CUDACC_VER_MAJOR__=M
//! -D__CUDACC_VER_MINOR__=N` (the macros nvcc predefines: CUDA Compiler Driver NVCC, "Predefined
//! macros"). The `PATH=` line (on the `#$` line or the one after it, where CMake wraps) is read by
//! shell_env with the other PATH lines; the CUDA toolkit folders on it, other than the one that ran,
//! are kept here as toolkits shown.
//!
//! ```text
//!   #$ _HERE_=/usr/lib/nvidia-cuda-toolkit/bin
//!   #$ _THERE_=/usr/lib/nvidia-cuda-toolkit/bin
//!   #$ NVVMIR_LIBRARY_DIR=/usr/lib/nvidia-cuda-toolkit/libdevice
//!   #$
//!   PATH=/usr/lib/nvidia-cuda-toolkit/bin:/usr/local/cuda-11.3/bin:/usr/bin
//!   #$ gcc -D__CUDA_ARCH__=300 -E -x c++ -DCUDA_DOUBLE_MATH_FUNCTIONS
//!   -D__CUDACC__ -D__NVCC__ -D__CUDACC_VER_MAJOR__=10 -D__CUDACC_VER_MINOR__=1
//! ```

use super::facts::{Facts, MAX_LIST, version_of_dir};
use gpu_doctor_model::{CudaVersion, ToolkitInstall, ToolkitKind, VersionSource};

const FORMAT: &str = "nvcc -v";

/// The setting nvcc.profile's `TOP` is made from: the folder of the nvcc that ran.
const HERE: &str = "#$ _HERE_=";

/// Longer than any toolkit folder: a longer value is not one.
const MAX_PATH: usize = 300;

/// Reads the folder and release of the nvcc whose verbose listing the text holds, and the other CUDA
/// toolkit folders on the PATH it ran with; or the distribution's nvcc named as the compiler a build ran. Where a
/// distribution's nvcc ran, also the CUDA toolkit the text says is installed.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    // The listing's `_HERE_` is the folder of the nvcc that ran, whatever /usr/bin/nvcc links to.
    if !listing(lines, facts) {
        distro_nvcc_ran(lines, facts);
    }
    if facts.toolkits.iter().any(|t| t.kind == ToolkitKind::Distro && t.nvcc.is_some()) {
        facts.stated_toolkit = facts.stated_toolkit.take().or_else(|| toolkit_in_words(lines));
    }
}

/// nvcc's verbose listing: the folder and release of the nvcc that ran, and the other toolkits on its PATH; false
/// where the text holds none.
fn listing(lines: &[String], facts: &mut Facts) -> bool {
    let Some((at, here)) = lines.iter().enumerate().find_map(|(i, l)| {
        let here = l.trim().strip_prefix(HERE)?.trim();
        let ok = !here.is_empty() && here.len() <= MAX_PATH && !here.contains('$');
        ok.then(|| (i, here.trim_end_matches(['/', '\\']).to_owned()))
    }) else {
        return false;
    };
    facts.saw(at, FORMAT);
    let root = here.strip_suffix("/bin").or_else(|| here.strip_suffix("\\bin")).unwrap_or(&here).to_owned();
    // The defines are on the stages' lines after the settings, wrapped anywhere by CMake.
    let after = &lines[at..];
    let define = |name: &str| after.iter().find_map(|l| define_value(l, name));
    let version = match (define("-D__CUDACC_VER_MAJOR__="), define("-D__CUDACC_VER_MINOR__=")) {
        (Some(major), Some(minor)) => Some(CudaVersion::new(major, minor)),
        _ => None,
    };
    let nvcc = format!("{here}/nvcc");
    let full = facts.toolkits.len() >= MAX_LIST;
    match facts.toolkits.iter_mut().find(|t| t.root == root) {
        Some(t) => {
            if t.version.is_none() && version.is_some() {
                t.version = version;
                t.version_source = Some(VersionSource::Nvcc);
            }
            t.nvcc.get_or_insert(nvcc);
        }
        None if !full => facts.toolkits.push(install(&root, version, version.map(|_| VersionSource::Nvcc), nvcc)),
        None => {}
    }
    // The other toolkits on the PATH nvcc ran with: a `cuda-X.Y` folder's bin.
    let path = after.iter().take(40).enumerate().find_map(|(i, l)| {
        let l = l.trim();
        let value = l
            .strip_prefix("#$ PATH=")
            .or_else(|| (l == "#$").then(|| after.get(i + 1).and_then(|n| n.trim().strip_prefix("PATH="))).flatten())?;
        Some(value)
    });
    for dir in path.iter().flat_map(|p| p.split(':')).take(MAX_LIST) {
        let Some(folder) = dir.trim_end_matches('/').strip_suffix("/bin") else { continue };
        let Some(version) = version_of_dir(folder) else { continue };
        if folder == root || facts.toolkits.len() >= MAX_LIST || facts.toolkits.iter().any(|t| t.root == folder) {
            continue;
        }
        facts.toolkits.push(install(folder, Some(version), None, format!("{folder}/bin/nvcc")));
    }
    true
}

/// Debian's and Ubuntu's `nvidia-cuda-toolkit` puts its nvcc at /usr/bin/nvcc (a wrapper of
/// /usr/lib/nvidia-cuda-toolkit/bin/nvcc); NVIDIA's toolkits stay in /usr/local/cuda-X.Y, conda's and pip's in
/// their environments, Arch's in /opt/cuda. So a build naming /usr/bin/nvcc as the compiler it ran ran the
/// distribution's.
const DISTRO_NVCC: &str = "/usr/bin/nvcc";
const DISTRO_ROOT: &str = "/usr/lib/nvidia-cuda-toolkit";
/// The folder above /usr/bin/nvcc's, the root CMake's reader gives it too.
const DISTRO_NVCC_ROOT: &str = "/usr";

/// The distribution's nvcc named as the compiler a build ran: setuptools' failure (`error: command '/usr/bin/nvcc'
/// failed with exit status 1`, distutils' spawn), CMake's compiler lines (`Compiler: /usr/bin/nvcc` of a failed
/// identification, `-- Check for working CUDA compiler: /usr/bin/nvcc`, `-- Looking for a CUDA compiler -
/// /usr/bin/nvcc`). Kept as the distribution's toolkit with that nvcc, its release unknown here.
fn distro_nvcc_ran(lines: &[String], facts: &mut Facts) {
    let ran = |l: &str| {
        let l = l.trim();
        l.len() <= 2000
            && (l.contains("command '/usr/bin/nvcc' failed")
                || l.contains("command \"/usr/bin/nvcc\" failed")
                // A failed identification's `Compiler:` line; the search's lines are CMake's reader's.
                || l.strip_prefix("Compiler: ").is_some_and(|rest| rest.split_whitespace().next() == Some(DISTRO_NVCC))
                || super::cmake_cuda::compiler_named(l).as_deref() == Some(DISTRO_NVCC))
    };
    let Some(at) = lines.iter().position(|l| ran(l)) else { return };
    facts.saw(at, "a build's compiler line");
    let full = facts.toolkits.len() >= MAX_LIST;
    let same = |t: &ToolkitInstall| {
        t.root == DISTRO_ROOT || t.root == DISTRO_NVCC_ROOT || t.nvcc.as_deref() == Some(DISTRO_NVCC)
    };
    match facts.toolkits.iter_mut().find(|t| same(t)) {
        Some(t) => {
            t.nvcc.get_or_insert_with(|| DISTRO_NVCC.to_owned());
        }
        None if !full => facts.toolkits.push(install(DISTRO_NVCC_ROOT, None, None, DISTRO_NVCC.to_owned())),
        None => {}
    }
}

/// The writer's sentence naming the CUDA toolkit installed (`I installed the CUDA 12.8 release`, `an Nvidia P6000
/// GPU with Cuda 10.1`, `I have cuda 11.8 installed`, `nvcc version is 9.1, CUDA version is 10.2`), with its line:
/// the toolkit meant. Not a framework's build (`built with CUDA 11.8`, `torch … with CUDA 12.1`). Lines of at most
/// 500 characters.
fn toolkit_in_words(lines: &[String]) -> Option<(CudaVersion, String)> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    #[allow(clippy::unwrap_used)] // a literal pattern, exercised by the tests
    let re = RE.get_or_init(|| {
        regex::Regex::new(
            r"(?i-u)(?-u:\b)(?:(?:installed|install|installing|have|has|with|using)\s+(?:the\s+|a\s+)?(?:nvidia\s+)?cuda(?:\s*toolkit)?\s*(?:version\s*)?v?|cuda(?:\s*toolkit)?\s+version\s+is\s+v?)(?P<major>\d{1,2})\.(?P<minor>\d{1,2})(?-u:\b)",
        )
        .unwrap()
    });
    lines.iter().filter(|l| l.len() <= 500).find_map(|l| {
        let c = re.captures(l)?;
        let start = c.get(0)?.start();
        let before = l[..start].to_ascii_lowercase();
        let framework = ["built", "compiled", "torch", "tensorflow", "jax", "wheel", "cu1"]
            .iter()
            .any(|w| before.rfind(w).is_some_and(|at| start - at <= 40));
        if framework {
            return None;
        }
        let version =
            CudaVersion::new(c.name("major")?.as_str().parse().ok()?, c.name("minor")?.as_str().parse().ok()?);
        Some((version, l.trim().to_owned()))
    })
}

/// A toolkit the listing shows at `root`, its kind by where it is.
fn install(root: &str, version: Option<CudaVersion>, source: Option<VersionSource>, nvcc: String) -> ToolkitInstall {
    ToolkitInstall {
        root: root.to_owned(),
        kind: crate::probe::toolkits::kind_of_root(root),
        version,
        version_source: source,
        nvcc: Some(nvcc),
        lib_dirs: Vec::new(),
        aliases: Vec::new(),
        python_env: None,
    }
}

/// The number after `name` in `line` (`-D__CUDACC_VER_MAJOR__=10` → 10).
fn define_value(line: &str, name: &str) -> Option<u32> {
    let rest = &line[line.find(name)? + name.len()..];
    let digits: &str = &rest[..rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len())];
    (!digits.is_empty() && digits.len() <= 3).then(|| digits.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CMake's compiler identification failing with nvcc's verbose listing, from
    /// NVlabs/instant-ngp#747 (Ubuntu's nvidia-cuda-toolkit 10.1 ran; CUDA 11.3 on PATH).
    const APT_NVCC: &str = "  Compiler: /usr/bin/nvcc\n\n  Id flags: --keep;--keep-dir;tmp -v\n\n  \
        The output was:\n\n  255\n  #$ _SPACE_=\n  #$ _CUDART_=cudart\n  \
        #$ _HERE_=/usr/lib/nvidia-cuda-toolkit/bin\n  #$ _THERE_=/usr/lib/nvidia-cuda-toolkit/bin\n  \
        #$ _TARGET_SIZE_=64\n  #$ NVVMIR_LIBRARY_DIR=/usr/lib/nvidia-cuda-toolkit/libdevice\n  #$\n  \
        PATH=/usr/lib/nvidia-cuda-toolkit/bin:/usr/local/cuda-11.3/bin:/home/zzc/miniconda3/bin:/usr/bin\n\n  \
        #$ LIBRARIES= -L/usr/lib/x86_64-linux-gnu/stubs -L/usr/lib/x86_64-linux-gnu\n\n  \
        #$ gcc -D__CUDA_ARCH__=300 -E -x c++ -DCUDA_DOUBLE_MATH_FUNCTIONS\n  \
        -D__CUDACC__ -D__NVCC__ -D__CUDACC_VER_MAJOR__=10 -D__CUDACC_VER_MINOR__=1\n  \
        -D__CUDACC_VER_BUILD__=243 -include \"cuda_runtime.h\" -m64\n";

    #[test]
    fn the_nvcc_that_ran_and_the_toolkits_on_its_path() {
        let kb = gpu_doctor_kb::Kb::get().expect("kb");
        let s = super::super::read_pasted(APT_NVCC, kb).expect("read");
        let gpu_doctor_model::Origin::Pasted { formats } = &s.origin else { panic!("not pasted") };
        assert!(formats.iter().any(|f| f == FORMAT), "{formats:?}");
        let f = Facts::read_by(read, APT_NVCC);
        let ran = f.toolkits.iter().find(|t| t.root == "/usr/lib/nvidia-cuda-toolkit").expect("the nvcc that ran");
        assert_eq!((ran.kind, ran.version), (ToolkitKind::Distro, Some(CudaVersion::new(10, 1))));
        assert_eq!(ran.version_source, Some(VersionSource::Nvcc));
        assert_eq!(ran.nvcc.as_deref(), Some("/usr/lib/nvidia-cuda-toolkit/bin/nvcc"));
        let other = f.toolkits.iter().find(|t| t.root == "/usr/local/cuda-11.3").expect("the toolkit on PATH");
        assert_eq!((other.kind, other.version), (ToolkitKind::Local, Some(CudaVersion::new(11, 3))));
        assert_eq!(f.toolkits.len(), 2);
    }

    #[test]
    fn a_listing_cut_before_its_stages_gives_the_folder_without_a_release() {
        // NVIDIA/cuda-samples#356: the dump as stored, cut after NVVMIR_LIBRARY_DIR.
        let cut = "  #$ _NVVM_BRANCH_=nvvm\n\n  #$ _SPACE_=\n\n  #$ _HERE_=/usr/lib/nvidia-cuda-toolkit/bin\n\n  \
                   #$ NVVMIR_LIBRARY_DIR=/usr/lib/nvidia-cuda-toolkit/libdevice\n";
        let f = Facts::read_by(read, cut);
        assert_eq!(f.toolkits.len(), 1);
        assert_eq!((f.toolkits[0].root.as_str(), f.toolkits[0].version), ("/usr/lib/nvidia-cuda-toolkit", None));
        // NVIDIA's own toolkit, one PATH line: nothing else named.
        let nvidia = "#$ _HERE_=/usr/local/cuda-12.4/bin\n#$ PATH=/usr/local/cuda-12.4/bin:/usr/bin\n\
                      #$ gcc -D__CUDACC_VER_MAJOR__=12 -D__CUDACC_VER_MINOR__=4 -D__CUDACC_VER_BUILD__=131\n";
        let f = Facts::read_by(read, nvidia);
        assert_eq!(f.toolkits.len(), 1);
        assert_eq!((f.toolkits[0].kind, f.toolkits[0].version), (ToolkitKind::Local, Some(CudaVersion::new(12, 4))));
    }

    #[test]
    fn malformed_truncated_and_huge_listings_read_nothing_wrong() {
        for text in [
            "#$ _HERE_=\n",
            "#$ _HERE_=$(TOP)/bin\n",
            "#$ _HERE_=/usr/local/cuda/bin\n-D__CUDACC_VER_MAJOR__=\n",
            "#$ _HERE_=/usr/local/cuda/bin\n-D__CUDACC_VER_MAJOR__=99999 -D__CUDACC_VER_MINOR__=1\n",
            "_HERE_=/usr/local/cuda/bin\n",
        ] {
            let f = Facts::read_by(read, text);
            assert!(f.toolkits.iter().all(|t| t.version.is_none()), "{text:?}: {:?}", f.toolkits);
        }
        let huge = format!("#$ _HERE_=/usr/local/cuda/bin\n#$ PATH={}\n", "/usr/local/cuda-1.0/bin:".repeat(100_000));
        let f = Facts::read_by(read, &huge);
        assert!(f.toolkits.len() <= MAX_LIST);
    }

    /// A build naming /usr/bin/nvcc as the compiler it ran (setuptools' failure, mit-han-lab/torchsparse#78; CMake's
    /// lines) is the distribution's nvcc; the writer's sentence then gives the toolkit meant, not a framework's build.
    #[test]
    fn a_build_that_ran_usr_bin_nvcc_and_the_toolkit_said_installed() {
        let torchsparse = "At the end of veeery long error message, this is written:\n\
                           `error: command '/usr/bin/nvcc' failed with exit status 1`\n\n\
                           gcc version is 7.4.0, nvcc version is 9.1, CUDA version is 10.2. \n";
        let f = Facts::read_by(read, torchsparse);
        let ran = f.toolkits.iter().find(|t| t.nvcc.as_deref() == Some(DISTRO_NVCC)).expect("the nvcc that ran");
        assert_eq!((ran.root.as_str(), ran.kind, ran.version), ("/usr", ToolkitKind::Distro, None));
        assert_eq!(f.stated_toolkit.as_ref().map(|(v, _)| *v), Some(CudaVersion::new(10, 2)));
        for cmake in ["-- Check for working CUDA compiler: /usr/bin/nvcc - skipped", "  Compiler: /usr/bin/nvcc"] {
            assert_eq!(Facts::read_by(read, cmake).toolkits.len(), 1, "{cmake}");
        }
        // NVIDIA/cuda-samples#356's first line beside its listing; a framework's build is no toolkit said installed.
        let samples =
            "I installed the CUDA 12.8 release as per the guide here\n#$ _HERE_=/usr/lib/nvidia-cuda-toolkit/bin\n";
        let f = Facts::read_by(read, samples);
        assert_eq!(f.stated_toolkit.map(|(v, _)| v), Some(CudaVersion::new(12, 8)));
        let built = "error: command '/usr/bin/nvcc' failed with exit status 1\nPyTorch built with CUDA 11.8\n";
        assert_eq!(Facts::read_by(read, built).stated_toolkit, None);
        // No distribution's nvcc: the sentence is not read; another nvcc, or none run, is not the distribution's.
        assert_eq!(Facts::read_by(read, "I have CUDA 11.8 installed\n").stated_toolkit, None);
        for other in ["error: command '/usr/local/cuda/bin/nvcc' failed with exit status 1", "see /usr/bin/nvcc"] {
            assert!(Facts::read_by(read, other).toolkits.is_empty(), "{other}");
        }
        let huge = format!("{}\nerror: command '/usr/bin/nvcc' failed", "with cuda 12.1 ".repeat(100_000));
        assert_eq!(Facts::read_by(read, &huge).stated_toolkit, None);
    }
}
