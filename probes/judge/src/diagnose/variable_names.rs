//! A variable set under a misspelt name (`CUDA_VISABLE_DEVICES`): the program reads only its own
//! spelling, so the setting does nothing and the default stays (every GPU visible, the default
//! allocator, …).

use super::{Ctx, Rule, fix};
use gpu_doctor_model::{Category, Change, Finding, Severity};

pub(super) const MISSPELT: Rule = Rule {
    id: "env.variable_misspelled",
    category: Category::EnvVarMisconfig,
    severity: Severity::Warning,
    trigger: "A variable is set whose name no program reads but is one or two letters from a variable that CUDA, \
              the NVIDIA Container Toolkit, NCCL or a framework reads (one letter for names under 12 characters), \
              and that variable is not set: the setting is ignored and the default holds (with CUDA_VISIBLE_DEVICES \
              misspelt, every GPU stays visible).",
    source: "The names from their readers: CUDA Programming Guide, \"CUDA Environment Variables\" (CUDA_VISIBLE_DEVICES, \
             CUDA_DEVICE_ORDER, CUDA_LAUNCH_BLOCKING, CUDA_MODULE_LOADING, CUDA_CACHE_*); NVIDIA Container Toolkit user \
             guide (NVIDIA_VISIBLE_DEVICES, NVIDIA_DRIVER_CAPABILITIES, NVIDIA_REQUIRE_CUDA); NCCL \"Environment \
             Variables\"; PyTorch \"CUDA semantics\" (PYTORCH_CUDA_ALLOC_CONF) and torch/utils/cpp_extension.py \
             (TORCH_CUDA_ARCH_LIST, CUDA_HOME); JAX \"GPU memory allocation\" (XLA_PYTHON_CLIENT_*); \
             hiyouga/LlamaFactory#4756 (CUDA_VISABLE_DEVICES exported, every GPU used; maintainer: \
             CUDA_VISIBLE_DEVICES)",
};

pub(super) const RULES: &[Rule] = &[MISSPELT];

/// Variables that CUDA, the container toolkit, NCCL and the frameworks read, as their documentation
/// spells them (see [`MISSPELT`]'s source).
const KNOWN: [&str; 32] = [
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "CUDA_LAUNCH_BLOCKING",
    "CUDA_MODULE_LOADING",
    "CUDA_CACHE_PATH",
    "CUDA_CACHE_DISABLE",
    "CUDA_CACHE_MAXSIZE",
    "CUDA_FORCE_PTX_JIT",
    "CUDA_DISABLE_PTX_JIT",
    "CUDA_MPS_PIPE_DIRECTORY",
    "CUDA_MPS_LOG_DIRECTORY",
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDA_ROOT",
    "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES",
    "NVIDIA_REQUIRE_CUDA",
    "NVIDIA_DISABLE_REQUIRE",
    "NCCL_DEBUG",
    "NCCL_P2P_DISABLE",
    "NCCL_P2P_LEVEL",
    "NCCL_IB_DISABLE",
    "NCCL_SHM_DISABLE",
    "NCCL_SOCKET_IFNAME",
    "PYTORCH_CUDA_ALLOC_CONF",
    "PYTORCH_NVML_BASED_CUDA_CHECK",
    "TORCH_CUDA_ARCH_LIST",
    "XLA_PYTHON_CLIENT_PREALLOCATE",
    "XLA_PYTHON_CLIENT_MEM_FRACTION",
    "XLA_PYTHON_CLIENT_ALLOCATOR",
    "XLA_FLAGS",
    "TF_FORCE_GPU_ALLOW_GROWTH",
];

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let vars = &cx.s.env.vars;
    for (name, value) in vars {
        let upper = name.to_ascii_uppercase();
        if KNOWN.contains(&upper.as_str()) || name.len() > 64 {
            continue;
        }
        let Some(meant) = KNOWN.iter().copied().find(|k| {
            let most = if k.len() < 12 { 1 } else { 2 };
            !vars.contains_key(*k) && k.len().abs_diff(upper.len()) <= most && distance(&upper, k) <= most
        }) else {
            continue;
        };
        let word = fix::word(cx, value);
        out.push(
            MISSPELT
                .finding(
                    format!("{name} is probably a misspelt {meant}, which is not set"),
                    format!(
                        "Programs read {meant} under that name only, so {name}={word} changes nothing and the default \
                         holds{}.",
                        if meant == "CUDA_VISIBLE_DEVICES" { ": every GPU stays visible" } else { "" }
                    ),
                    vec![format!("{name}={word}")],
                    None,
                )
                .with_plan(fix::change(
                    None,
                    format!("{meant} set under its own name"),
                    vec![fix::set_var(meant, value), Change::UnsetVar { name: name.clone() }],
                )),
        );
    }
}

/// The edit distance of two ASCII names (insertions, deletions, substitutions, and two neighbours
/// swapped), by rows: names are short (at most 64 characters here).
fn distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut before: Vec<usize> = Vec::new();
    let mut last: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut row = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (last[j] + 1).min(row[j - 1] + 1).min(last[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        before = std::mem::replace(&mut last, row);
    }
    last[b.len()]
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::distance;

    #[test]
    fn names_one_or_two_letters_apart() {
        assert_eq!(distance("CUDA_VISABLE_DEVICES", "CUDA_VISIBLE_DEVICES"), 1);
        assert_eq!(distance("CUDA_VISIBLE_DEVICE", "CUDA_VISIBLE_DEVICES"), 1);
        assert_eq!(distance("CUDA_VISIBEL_DEVICES", "CUDA_VISIBLE_DEVICES"), 1, "two letters swapped");
        assert_eq!(distance("NCCL_P2P_DISABLE", "NCCL_IB_DISABLE"), 3);
        assert_eq!(distance("", "ABC"), 3);
    }
}
