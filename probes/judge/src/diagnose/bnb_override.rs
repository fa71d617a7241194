//! bitsandbytes told which CUDA library to load. BNB_CUDA_VERSION makes bitsandbytes load
//! `libbitsandbytes_cuda<NNN>` instead of the library that matches torch's CUDA, with no fallback
//! (bitsandbytes/cextension.py, get_cuda_bnb_library_path; cuda_setup/main.py before 0.43.1), and says
//! so in a warning. Where bitsandbytes then failed to load its library, the override is why: the
//! package ships no file of that name, or that CUDA's runtime is not on the loader's path.

use super::context::build_cuda;
use super::{Ctx, Rule, fix};
use gpu_doctor_model::{Category, Finding, Severity};

pub(super) const OVERRIDE: Rule = Rule {
    id: "env.bnb_cuda_version_override",
    category: Category::EnvVarMisconfig,
    severity: Severity::Error,
    trigger: "bitsandbytes failed to load its library (`Required library version not found`, `CUDA Setup failed \
              despite GPU being available`, `Attempted to use bitsandbytes native library functionality`, or no \
              binary for the requested CUDA version) while BNB_CUDA_VERSION is set: its own warning says so \
              (`BNB_CUDA_VERSION=… environment variable detected`, `Manual override via BNB_CUDA_VERSION`), or the \
              text sets the variable (an export, a `docker run -e`). The override picks the library by name, with no \
              fallback to the one matching torch's CUDA.",
    source: "bitsandbytes-foundation/bitsandbytes:bitsandbytes/cextension.py@0.45.5#L20-L35 \
             (get_cuda_bnb_library_path: the override replaces the CUDA version in the library's name) and \
             @0.50.1#L40-L50 (\"Override env vars bypass selection entirely and load the named version with no \
             fallback\"); bitsandbytes/cuda_setup/main.py@0.41.0#L104-L114",
};

pub(super) const RULES: &[Rule] = &[OVERRIDE];

const VARIABLE: &str = "BNB_CUDA_VERSION";

/// bitsandbytes' own warning that the variable is set, in both generations.
const WARNINGS: [&str; 2] = ["bitsandbytes.cuda_version_override", "bitsandbytes.cuda_version_override_legacy"];

/// bitsandbytes' lines for its library not loading.
const FAILED: [&str; 4] = [
    "bitsandbytes.required_library_not_found",
    "bitsandbytes.cuda_setup_failed",
    "bitsandbytes.native_unavailable",
    "bitsandbytes.cuda_version_mismatch",
];

/// `118` (the variable's digits, major then one minor digit) as `CUDA 11.8 (BNB_CUDA_VERSION=118)`.
fn cuda_of(value: &str) -> String {
    match value.len() {
        2.. if value.bytes().all(|b| b.is_ascii_digit()) => {
            let (major, minor) = value.split_at(value.len() - 1);
            format!("CUDA {major}.{minor} ({VARIABLE}={value})")
        }
        _ => format!("{VARIABLE}={value}"),
    }
}

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(failed) = cx.s.messages.iter().find(|m| FAILED.contains(&m.id.as_str())) else { return };
    let warnings: Vec<_> = cx.s.messages.iter().filter(|m| WARNINGS.contains(&m.id.as_str())).collect();
    let set = cx.s.env.vars.get(VARIABLE).filter(|v| !v.trim().is_empty());
    if warnings.is_empty() && set.is_none() {
        return;
    }
    let value = warnings.iter().find_map(|m| m.values.get("version")).or(set).map(String::as_str);
    let library =
        cx.s.messages.iter().find_map(|m| m.values.get("library").filter(|l| l.starts_with("libbitsandbytes")));
    let mut evidence: Vec<String> = warnings.iter().map(|m| format!("pasted line: {}", m.line)).collect();
    if let Some(v) = set {
        evidence.push(format!("{VARIABLE}={v}"));
    }
    evidence.push(format!("pasted line: {}", failed.line));
    let torch = cx
        .frameworks()
        .find(|(_, f)| f.name == "torch")
        .and_then(|(_, f)| build_cuda(f))
        .map(|(c, _)| format!(" (torch here is a CUDA {c} build)"))
        .unwrap_or_default();
    let asked = value.map_or_else(|| "another CUDA version".to_owned(), cuda_of);
    let file = library.map_or_else(String::new, |l| format!(", {l},"));
    let unset = fix::unset_line(cx, VARIABLE);
    out.push(OVERRIDE.finding(
        format!("{VARIABLE} makes bitsandbytes load a library that does not load"),
        format!(
            "{VARIABLE} is set, so bitsandbytes loads its library for {asked}{file} instead of the one that matches \
             torch's CUDA{torch}, with no fallback. That library failed: the package ships no file of that name (for \
             GPUs below compute capability 7.5 bitsandbytes before 0.45 adds `_nocublaslt` to it), or that CUDA's \
             runtime (libcudart) is not on the loader's path."
        ),
        evidence,
        Some(format!(
            "Clear the override so bitsandbytes picks the library matching torch's CUDA: `{unset}` (and remove it \
             from the shell's profile or the job script); in a container \
             drop `-e {VARIABLE}=…` from `docker run` (or its line under Compose's `environment:`). Keep it only to \
             load a libbitsandbytes_cuda<NNN> file that the installed package ships (`python -m bitsandbytes` \
             lists what it finds), with that CUDA's libcudart on LD_LIBRARY_PATH."
        )),
    ));
}
