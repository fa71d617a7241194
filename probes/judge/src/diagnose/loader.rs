//! The loader's family of messages: a library that asks another, by symbol version, for a symbol
//! the copy the loader found lacks (`undefined symbol: X, version libY.so.N`). Whatever the
//! symbol, the shape says the same: the loaded `libY.so.N` is older than the one the caller was
//! built against, and the fix is the path that supplies it, or a newer copy. NVIDIA libraries built
//! without symbol versions (libnccl.so.2) are asked by name alone (`undefined symbol: ncclMemFree`):
//! the symbol's prefix names the library.

use super::context::{build_cuda, wheel_cuda_major};
use super::{Ctx, Rule, fix};
use gpu_doctor_kb::families;
use gpu_doctor_model::shell::ShellCommand;
use gpu_doctor_model::{Category, Change, Finding, InstallFlag, Severity};

const OLDER_LIBRARY: Rule = Rule {
    id: "loader.older_library_loaded",
    category: Category::MultipleToolkitsConflict,
    severity: Severity::Error,
    trigger: "A pasted loader error `undefined symbol: SYMBOL, version libY.so.N` for one of NVIDIA's CUDA \
              libraries: the copy of libY.so.N the loader found is older than the caller needs. Or `undefined \
              symbol: SYMBOL` alone where SYMBOL's prefix names an NVIDIA library (`ncclMemFree`: libnccl.so.2, \
              which carries no symbol versions).",
    source: "glibc elf/dl-lookup.c (the message); the libraries' wheels from the knowledge base's families \
             (`LIBRARY_WHEELS`, read from the wheels' RECORD files)",
};

pub(super) const RULES: &[Rule] = &[OLDER_LIBRARY];

/// The message row this family reads.
const MESSAGE: &str = "ld.versioned_symbol_missing";

/// Its unversioned form, for a symbol whose prefix names the library.
const UNVERSIONED: &str = "ld.nvidia_symbol_missing";

/// The library a symbol's prefix names, as the loader would name it: `ncclMemFree` → `libnccl.so.2`.
/// Longer prefixes first (`cublasLt` before `cublas`).
fn library_of_symbol(symbol: &str) -> Option<String> {
    const PREFIXES: [&str; 10] =
        ["nccl", "cudnn", "cublasLt", "cublas", "cusparse", "cufft", "curand", "cusolver", "nvrtc", "nvJitLink"];
    let base = PREFIXES
        .iter()
        .find(|p| symbol.strip_prefix(**p).is_some_and(|r| r.starts_with(|c: char| c.is_ascii_uppercase())))?;
    // NCCL has kept soname 2 since its first public release; the others' majors are not in the name.
    Some(if *base == "nccl" { "libnccl.so.2".to_owned() } else { format!("lib{base}.so") })
}

/// A library's name without `lib`, `.so` and its major: `libcudnn.so.7` → `cudnn`, `libnccl.so` → `nccl`.
fn library_base(library: &str) -> &str {
    library_parts(library).map_or_else(|| library.trim_start_matches("lib").trim_end_matches(".so"), |(base, _)| base)
}

/// `libcudart.so.12` → (`cudart`, `12`).
fn library_parts(library: &str) -> Option<(&str, &str)> {
    let rest = library.strip_prefix("lib")?;
    let (base, major) = rest.split_once(".so.")?;
    (!base.is_empty() && !major.is_empty() && major.bytes().all(|b| b.is_ascii_digit())).then_some((base, major))
}

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let mut seen: Vec<String> = Vec::new();
    for m in cx.s.messages.iter().filter(|m| m.id == MESSAGE || m.id == UNVERSIONED) {
        let Some(symbol) = m.values.get("symbol") else { continue };
        let Some(library) = m.values.get("library").cloned().or_else(|| library_of_symbol(symbol)) else { continue };
        let Some(wheel) = families::library_wheel(library_base(&library)) else { continue };
        if seen.contains(&library) {
            continue;
        }
        out.push(finding(cx, &library, symbol, wheel));
        seen.push(library);
    }
}

fn finding(cx: &Ctx<'_>, library: &str, symbol: &str, wheel: &str) -> Finding {
    let summary = format!("An older {library} than the program was built against is loaded");
    let detail = format!(
        "The loader found a copy of {library} without {symbol}: that copy is older than the one the caller was built \
         against. Another copy earlier on the loader's path (a folder in LD_LIBRARY_PATH, an older CUDA toolkit, \
         the system's) shadows the newer one, typically the {wheel} wheel's copy that the framework brings."
    );
    // The pasted line itself is cited by `messages::cite`, as for every finding that explains a row.
    let mut evidence = Vec::new();
    // A CUDA folder on LD_LIBRARY_PATH is searched before the wheels' own copies; a folder named for the library
    // itself (`/pkgs/cudnn-10.0-v7.4.2/lib64` for libcudnn, jax-ml/jax#2494) is the one that supplies it, where
    // there is one.
    let base = library_base(library).to_ascii_lowercase();
    let dirs = || cx.s.env.ld_library_path.iter().map(String::as_str);
    let named: Vec<&str> = dirs().filter(|d| base != "cudart" && d.to_ascii_lowercase().contains(&base)).collect();
    let cuda_dirs: Vec<&str> =
        if named.is_empty() { dirs().filter(|d| d.to_ascii_lowercase().contains("cuda")).collect() } else { named };
    if !cuda_dirs.is_empty() {
        evidence.push(format!("LD_LIBRARY_PATH lists {}", cuda_dirs.join(", ")));
        let goal = format!("the loader finds the newer {library}");
        let newer = format!(
            "If nothing else supplies {library} (a framework older than the CUDA libraries' pip wheels uses the \
             system's), point LD_LIBRARY_PATH at a newer release's copy of it in place of the folder taken out."
        );
        return OLDER_LIBRARY.finding(summary, detail, evidence, None).with_plan(fix::change(
            None,
            goal,
            vec![fix::ld_library_path_without(cx, &cuda_dirs, None), Change::Manual { text: newer }],
        ));
    }
    // The wheel that ships it installed for two CUDA majors in one environment (nvidia-nccl-cu11 beside
    // -cu12): both put the library in the same folder, and the one installed last wins. The other
    // major's goes, and the kept one is installed again at its version: removing the other took the
    // shared file with it (rwth-i6/returnn#1802's collect_env: nvidia-nccl-cu11 2.14.3 beside -cu12 2.27.3).
    for env in cx.envs() {
        let copies: Vec<_> = env.cuda_wheels.iter().filter(|p| families::is_library_wheel(&p.name, wheel)).collect();
        let majors: Vec<u32> = copies.iter().filter_map(|p| wheel_cuda_major(p)).collect();
        let keep = env.frameworks.iter().find_map(build_cuda).map(|(c, _)| c.major);
        let Some(keep) = keep.or_else(|| majors.iter().copied().max()).filter(|_| majors.len() > 1) else { continue };
        let other: Vec<String> =
            copies.iter().filter(|p| wheel_cuda_major(p).is_some_and(|m| m != keep)).map(|p| p.name.clone()).collect();
        if other.is_empty() {
            continue;
        }
        evidence.extend(copies.iter().map(|p| format!("{} {} in {}", p.name, p.version, env.name)));
        let kept: Vec<String> = copies
            .iter()
            .filter(|p| wheel_cuda_major(p) == Some(keep))
            .map(|p| format!("{}=={}", p.name, p.version))
            .collect();
        let goal = format!("one {library} in {}, CUDA {keep}'s", env.name);
        return OLDER_LIBRARY.finding(summary, detail, evidence, None).with_plan(fix::change(
            Some(env),
            goal,
            vec![fix::uninstall(other), fix::install(&[InstallFlag::Reinstall], kept)],
        ));
    }
    // The wheel that ships it, installed in an environment: a newer one.
    let installed = cx
        .envs()
        .iter()
        .find_map(|env| env.cuda_wheels.iter().find(|p| families::is_library_wheel(&p.name, wheel)).map(|p| (env, p)));
    if let Some((env, package)) = installed {
        evidence.push(format!("{} {} in {}", package.name, package.version, env.name));
        let goal = format!("a newer {library} from {}", package.name);
        return OLDER_LIBRARY.finding(summary, detail, evidence, None).with_plan(fix::change(
            Some(env),
            goal,
            vec![fix::install(&[InstallFlag::Upgrade], [package.name.clone()])],
        ));
    }
    // Neither is known: how to find the copy the loader takes, then what to do with it.
    let find = fix::command(cx, &ShellCommand::new("ldconfig").args(["-p"]), false);
    let name = fix::word(cx, library);
    let major = library_parts(library).and_then(|(_, m)| m.parse::<u32>().ok());
    let upgrade =
        match major.zip(library_parts(library)).and_then(|(m, (base, _))| families::library_requirement(base, m)) {
            Some(requirement) => {
                let pip = ShellCommand::new("python").args(["-m", "pip", "install", "--upgrade"]).arg(requirement);
                format!(
                    "upgrade the wheel that ships it in the environment that fails: `{}`",
                    fix::command(cx, &pip, false)
                )
            }
            None => format!("upgrade what ships it (pip: the {wheel} wheel for your CUDA major)"),
        };
    // The second copy is usually a second package's: conda's `cudatoolkit` under pip wheels that bring
    // their own libraries, or an older CUDA's wheel beside the framework's (pytorch/pytorch#91067 and
    // #103832, conda-forge's cudatoolkit beside the nvidia-* wheels).
    let words = format!(
        "Find the copy the loader takes: `{find} | grep -F {name}` and the folders of `echo $LD_LIBRARY_PATH`. Take \
         the folder with the older copy out of LD_LIBRARY_PATH, or {upgrade}. The older copy is usually a second \
         package's: conda's `cudatoolkit` beside pip wheels that bring their own libraries (remove it: `{}`), or an \
         older CUDA's nvidia-* wheel beside the framework's (`pip list` names it; uninstall it).",
        fix::command(cx, &ShellCommand::new("conda").args(["remove", "cudatoolkit"]), false)
    );
    OLDER_LIBRARY.finding(summary, detail, evidence, Some(words))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_names_split_into_base_and_major() {
        assert_eq!(library_parts("libcudart.so.12"), Some(("cudart", "12")));
        assert_eq!(library_parts("libnvJitLink.so.13"), Some(("nvJitLink", "13")));
        assert_eq!(library_parts("libcudart.so"), None);
        assert_eq!(library_parts("cudart.so.12"), None);
        assert_eq!(library_parts("libcudart.so.x"), None);
        assert_eq!(library_base("libcudnn.so.7"), "cudnn");
        assert_eq!(library_base("libcublasLt.so"), "cublasLt");
    }

    #[test]
    fn a_symbols_prefix_names_its_library() {
        assert_eq!(library_of_symbol("ncclMemFree").as_deref(), Some("libnccl.so.2"));
        assert_eq!(library_of_symbol("cublasLtMatmul").as_deref(), Some("libcublasLt.so"));
        assert_eq!(library_of_symbol("cublasCreate_v2").as_deref(), Some("libcublas.so"));
        assert_eq!(library_of_symbol("ncclx"), None);
        assert_eq!(library_of_symbol("cudaMalloc"), None);
    }
}
