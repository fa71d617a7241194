//! JAX's platforms setting (`JAX_PLATFORMS`, `jax.config.update('jax_platforms', …)`): a value that names a
//! platform this jaxlib lacks, and a value set after JAX read it.
//!
//! JAX's `backends()` (jax-ml/jax:jax/_src/xla_bridge.py) starts every registered backend; one that fails and may
//! fail quietly is only logged (`Unable to initialize backend 'rocm': …` at INFO, on every CUDA machine), one that
//! may not raises `RuntimeError: Unable to initialize backend '<platform>': <error>`, ending in ` (set
//! JAX_PLATFORMS='' to automatically choose an available backend)` where the platforms setting was set when JAX
//! started its backends and in ` (you may need to uninstall the failing plugin package, or set JAX_PLATFORMS=cpu to
//! skip this backend.)` where it was not. XLA's NOT_FOUND for a platform lists the ones it has (`Could not find
//! registered platform with name: "rocm". Available platform names are: Interpreter CUDA Host`, platform_manager.cc).

use super::{Ctx, Rule, fix};
use gpu_doctor_model::{Category, Finding, Severity};

pub(super) const VALUE_WRONG: Rule = Rule {
    id: "env.jax_platforms_value_wrong",
    category: Category::EnvVarMisconfig,
    severity: Severity::Error,
    trigger: "JAX raised `RuntimeError: Unable to initialize backend 'rocm'` (so a platforms setting asked for ROCm: \
              JAX_PLATFORMS or `jax_platforms` naming `rocm`, or `gpu`, which JAX expands to both \
              cuda and rocm, its platform aliases) where XLA's answer lists CUDA among the platforms this jaxlib has: the setting names the \
              wrong GPU platform.",
    source: "jax-ml/jax:jax/_src/xla_bridge.py (backends(): RuntimeError for a backend that may not fail quietly); \
             openxla/xla:xla/stream_executor/platform_manager.cc (LookupByNameLocked: `Could not find registered \
             platform with name: \"…\". Available platform names are: …`); jax-ml/jax#12335 (jax_platforms 'gpu' on a \
             CUDA jaxlib; 'cuda' worked)",
};

pub(super) const SET_AFTER_IMPORT: Rule = Rule {
    id: "env.jax_platforms_set_after_import",
    category: Category::EnvVarMisconfig,
    severity: Severity::Warning,
    trigger: "The pasted code sets JAX_PLATFORMS inside the program (`os.environ[\"JAX_PLATFORMS\"] = …`) and JAX's \
              RuntimeError for a backend ends in `(you may need to uninstall the failing plugin package, or set \
              JAX_PLATFORMS=cpu …)`, the suffix JAX adds only where no platforms setting was in force when it \
              started its backends: the variable was set after JAX had read its configuration (at `import jax`).",
    source: "jax-ml/jax:jax/_src/xla_bridge.py (backends(): the two suffixes, by config.jax_platforms); \
             jax-ml/jax:jax/_src/config.py (flags read from the environment when jax is imported); jax-ml/jax#23208 \
             (maintainer: set it before you import jax)",
};

pub(super) const RULES: &[Rule] = &[VALUE_WRONG, SET_AFTER_IMPORT];

/// The suffix JAX adds to a backend's RuntimeError where no platforms setting was in force.
const UNSET_SUFFIX: &str = "you may need to uninstall the failing plugin package";

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    value_wrong(cx, out);
    set_after_import(cx, out);
}

/// `RuntimeError: Unable to initialize backend 'rocm'` with CUDA among the platforms XLA has.
fn value_wrong(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(m) = cx.s.messages.iter().find(|m| {
        m.id == "jax.rocm_backend_failed"
            && m.values.get("available").is_some_and(|a| a.split_whitespace().any(|p| p.eq_ignore_ascii_case("cuda")))
    }) else {
        return;
    };
    let available = m.values.get("available").map_or("", String::as_str);
    let set = cx.s.env.vars.get("JAX_PLATFORMS").map(|v| format!("JAX_PLATFORMS={v}"));
    let mut evidence = vec![format!("this jaxlib's platforms: {available}")];
    evidence.extend(set);
    out.push(VALUE_WRONG.finding(
        "JAX's platforms setting asks for ROCm, but this jaxlib has CUDA",
        "JAX raised instead of falling back, so a platforms setting asked for ROCm: JAX_PLATFORMS or \
         `jax.config.update('jax_platforms', …)` naming `rocm`, or `gpu`, which JAX expands to both \
         cuda and rocm. XLA's answer lists the platforms this jaxlib has, and CUDA is one of them: the \
         NVIDIA GPU is there under the name `cuda`.",
        evidence,
        Some(format!(
            "Name CUDA: {} in the shell that starts Python, or `jax.config.update('jax_platforms', 'cuda')` before \
             the first JAX call; or leave the setting unset and JAX picks the GPU itself.",
            fix::var_line(cx, "JAX_PLATFORMS", "cuda")
        )),
    ));
}

/// JAX_PLATFORMS set inside the program, while JAX's RuntimeError says no platforms setting was in force.
fn set_after_import(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    if !cx.s.env.set_in_process.iter().any(|n| n == "JAX_PLATFORMS") {
        return;
    }
    let Some(m) = cx.s.messages.iter().find(|m| {
        m.id.starts_with("jax.") && m.line.contains("Unable to initialize backend") && m.line.contains(UNSET_SUFFIX)
    }) else {
        return;
    };
    let value = cx.s.env.vars.get("JAX_PLATFORMS").cloned().unwrap_or_else(|| "cpu".to_owned());
    let shown = fix::var_line(cx, "JAX_PLATFORMS", &value);
    out.push(SET_AFTER_IMPORT.finding(
        format!("JAX_PLATFORMS=\"{value}\" is set inside the program after JAX read its configuration"),
        "JAX reads JAX_PLATFORMS into its configuration when `jax` is imported. The pasted code sets it with \
         `os.environ[...]` later, and JAX's own error shows that no platforms setting was in force when it started \
         its backends: it ends in \"(you may need to uninstall the failing plugin package, or set JAX_PLATFORMS=cpu \
         …)\", the words JAX adds only then.",
        vec![
            format!("JAX_PLATFORMS={value}, set inside the program in the pasted code"),
            format!("pasted: {}", m.line.chars().take(200).collect::<String>()),
        ],
        Some(format!(
            "Set it before `import jax` runs: in the shell ({shown}), or as the first lines of the script, before any \
             import of jax or of a module that imports it; or call `jax.config.update('jax_platforms', '{value}')` \
             right after importing jax, before the first JAX operation."
        )),
    ));
}
