//! What a CMake configuration says it found of CUDA: the CUDA compiler it looked for and identified
//! (`Looking for a CUDA compiler - /usr/bin/nvcc`, CMake's CheckLanguage; `The CUDA compiler identification is
//! NVIDIA 11.5.119`, CMakeDetermineCompilerId; `Check for working CUDA compiler: /usr/local/cuda/bin/nvcc`),
//! FindCUDAToolkit's and FindCUDA's result lines (FindPackageHandleStandardArgs: `Found CUDAToolkit: /usr/include
//! (found version "11.5.119")`, `Found CUDA: /usr/local/cuda (found suitable version "9.1", minimum required is
//! "7.5")`) and the `CUDA detected: 9.0` status line of PyTorch's and Gloo's own CMake files. Each is a toolkit
//! the build took, with the release it said; two releases in one configuration is a build mixing toolkits.
//!
//! Written from Kitware/CMake's Modules (CMakeDetermineCompilerId.cmake, CheckLanguage.cmake,
//! FindPackageHandleStandardArgs.cmake) and pytorch/pytorch#6376 (Gloo's sub-build finding CUDA 9.0 while
//! PyTorch found 9.1).

use super::facts::{Facts, MAX_LIST};
use gpu_doctor_model::{CudaVersion, ToolkitInstall, VersionSource};

const FORMAT: &str = "CMake's CUDA lines";

/// The root of a toolkit the configuration names only by its version.
const UNPLACED: &str = "(build configuration)";

/// Longer than any CMake status line worth reading.
const MAX_LINE: usize = 600;

/// One toolkit the configuration shows: where, and the release it said.
#[derive(Debug, PartialEq)]
struct Found {
    root: Option<String>,
    version: Option<CudaVersion>,
    nvcc: Option<String>,
}

/// The version in `text` up to its first character that is no digit or dot (`11.5.119"` → 11.5.119).
fn version_at(text: &str) -> Option<CudaVersion> {
    let end = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    text[..end].trim_end_matches('.').parse().ok()
}

/// The folder above a compiler's `bin` (`/usr/bin/nvcc` → `/usr`).
fn root_of_compiler(path: &str) -> Option<String> {
    let dir = path.rsplit_once('/')?.0;
    Some(dir.strip_suffix("/bin").unwrap_or(dir).to_owned())
}

/// The toolkit folder of an include folder (`/usr/local/cuda/targets/x86_64-linux/include` → `/usr/local/cuda`).
fn root_of_include(dir: &str) -> String {
    let dir = dir.split(';').next().unwrap_or(dir).trim_end_matches('/');
    let dir = dir.strip_suffix("/include").unwrap_or(dir);
    match dir.rfind("/targets/") {
        Some(at) => dir[..at].to_owned(),
        None => dir.to_owned(),
    }
}

/// What one line says, if it is one of CMake's CUDA lines.
fn line_found(line: &str) -> Option<Found> {
    let l = line.trim().trim_start_matches("-- ").trim();
    if let Some(rest) = l.strip_prefix("The CUDA compiler identification is NVIDIA ") {
        return Some(Found { root: None, version: version_at(rest.trim()), nvcc: None });
    }
    if let Some(path) = l
        .strip_prefix("Looking for a CUDA compiler - ")
        .or_else(|| l.strip_prefix("Check for working CUDA compiler: ").map(|r| r.split(" -").next().unwrap_or(r)))
    {
        let path = path.trim();
        if !path.starts_with('/') || path.contains(' ') {
            return None;
        }
        return Some(Found { root: root_of_compiler(path), version: None, nvcc: Some(path.to_owned()) });
    }
    for (prefix, include) in [("Found CUDAToolkit: ", true), ("Found CUDA: ", false)] {
        let Some(rest) = l.strip_prefix(prefix) else { continue };
        let (dir, after) = rest.split_once(" (found ")?;
        let version = after.split_once("version \"").and_then(|(_, v)| version_at(v));
        let root = if include { root_of_include(dir.trim()) } else { dir.trim().trim_end_matches('/').to_owned() };
        return Some(Found { root: Some(root), version, nvcc: None });
    }
    // PyTorch's cmake/public/cuda.cmake (`Caffe2: CUDA detected: 9.1`) and Gloo's cmake/Cuda.cmake.
    let at = l.find("CUDA detected: ")?;
    let version = version_at(&l[at + "CUDA detected: ".len()..])?;
    Some(Found { root: None, version: Some(version), nvcc: None })
}

/// The CUDA compiler a CMake line names as the one it found (`-- Looking for a CUDA compiler - /usr/bin/nvcc`,
/// `-- Check for working CUDA compiler: /usr/bin/nvcc - skipped`).
pub(super) fn compiler_named(line: &str) -> Option<String> {
    line_found(line)?.nvcc
}

/// Reads CMake's CUDA lines into toolkits found by the build's configuration.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    let mut compiler: Option<(String, String)> = None;
    for (i, line) in lines.iter().enumerate().filter(|(_, l)| l.len() <= MAX_LINE) {
        let Some(found) = line_found(line) else { continue };
        facts.saw(i, FORMAT);
        // The compiler's path comes on one line and its release on another: the identification follows the
        // search, and the working-compiler check repeats the path after it.
        let (root, nvcc) = match (&found.root, &found.nvcc) {
            (Some(root), Some(nvcc)) => {
                compiler = Some((root.clone(), nvcc.clone()));
                (root.clone(), Some(nvcc.clone()))
            }
            (Some(root), None) => (root.clone(), None),
            (None, _) if found.version.is_some() && line.contains("compiler identification") => match &compiler {
                Some((root, nvcc)) => (root.clone(), Some(nvcc.clone())),
                None => (UNPLACED.to_owned(), Some("nvcc".to_owned())),
            },
            (None, _) => (UNPLACED.to_owned(), None),
        };
        add(facts, &root, found.version, nvcc);
    }
    // An identification printed before the search named the path: the unplaced compiler is that one.
    if let Some((root, nvcc)) = compiler
        && let Some(at) = facts.toolkits.iter().position(|t| t.root == UNPLACED && t.nvcc.is_some())
    {
        let version = facts.toolkits.remove(at).version;
        add(facts, &root, version, Some(nvcc));
    }
}

/// Records a toolkit the configuration found, or completes the one at that root.
fn add(facts: &mut Facts, root: &str, version: Option<CudaVersion>, nvcc: Option<String>) {
    let unplaced = root == UNPLACED;
    let same = |t: &ToolkitInstall| {
        t.root == root
            && (!unplaced || t.version.map(CudaVersion::major_minor) == version.map(CudaVersion::major_minor))
    };
    if let Some(t) = facts.toolkits.iter_mut().find(|t| same(t)) {
        if t.version.is_none() && version.is_some() {
            t.version = version;
            t.version_source = Some(VersionSource::BuildConfig);
        }
        if t.nvcc.is_none() {
            t.nvcc = nvcc;
        }
        return;
    }
    if facts.toolkits.len() >= MAX_LIST || (unplaced && version.is_none()) {
        return;
    }
    facts.toolkits.push(ToolkitInstall {
        root: root.to_owned(),
        kind: if unplaced { gpu_doctor_model::ToolkitKind::Pasted } else { crate::probe::toolkits::kind_of_root(root) },
        version,
        version_source: version.map(|_| VersionSource::BuildConfig),
        nvcc,
        lib_dirs: Vec::new(),
        aliases: Vec::new(),
        python_env: None,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<(String, Option<String>)> {
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let mut facts = Facts::default();
        read(&lines, &mut facts);
        facts.toolkits.iter().map(|t| (t.root.clone(), t.version.map(|v| v.to_string()))).collect()
    }

    /// CMake's compiler search, identification and FindCUDAToolkit (hank-ai/darknet#130's configuration, verbatim
    /// lines): the distribution's nvcc under /usr, CUDA 11.5.
    #[test]
    fn the_compiler_cmake_took_is_a_toolkit_with_its_release() {
        let text = "-- Looking for a CUDA compiler\n-- Looking for a CUDA compiler - /usr/bin/nvcc\n-- CUDA detected. Darknet will use NVIDIA GPUs.  CUDA compiler is /usr/bin/nvcc.\n-- The CUDA compiler identification is NVIDIA 11.5.119 with host compiler GNU 11.4.0\n-- Check for working CUDA compiler: /usr/bin/nvcc - skipped\n-- Found CUDAToolkit: /usr/include (found version \"11.5.119\")";
        assert_eq!(found(text), [("/usr".to_owned(), Some("11.5.119".to_owned()))]);
    }

    /// Two releases in one configuration (pytorch/pytorch#6376: Gloo's `CUDA detected: 9.0`, PyTorch's FindCUDA
    /// 9.1 at /usr/local/cuda) are two toolkits; a version-less or over-long line is none.
    #[test]
    fn two_releases_in_one_configuration_are_two_toolkits() {
        let text = "-- CUDA detected: 9.0\n-- Found CUDA: /usr/local/cuda (found suitable version \"9.1\", minimum required is \"7.5\") ";
        let got = found(text);
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got.contains(&("/usr/local/cuda".to_owned(), Some("9.1".to_owned()))), "{got:?}");
        assert!(got.contains(&(UNPLACED.to_owned(), Some("9.0".to_owned()))), "{got:?}");
        assert!(found("-- CUDA detected: yes\n").is_empty());
        assert!(found(&format!("-- Found CUDA: /x{} (found version \"9.1\")", "y".repeat(700))).is_empty());
        let include =
            "-- Found CUDAToolkit: /usr/local/cuda-12.4/targets/x86_64-linux/include (found version \"12.4.131\")";
        assert_eq!(found(include), [("/usr/local/cuda-12.4".to_owned(), Some("12.4.131".to_owned()))]);
    }
}
