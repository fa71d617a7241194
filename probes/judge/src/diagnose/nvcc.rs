//! An nvcc older than the GPU architecture it was asked to build for: every CUDA release's nvcc knows
//! the architectures up to its own release (the knowledge base's `first_toolkit` per capability), so
//! a build for a newer one fails with `nvcc fatal : Unsupported gpu architecture 'compute_89'`.

use super::{Ctx, Rule};
use gpu_doctor_model::{Category, ComputeCapability, CudaVersion, Finding, Severity};

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

pub(super) const RULES: &[Rule] = &[NVCC_TOO_OLD];

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
