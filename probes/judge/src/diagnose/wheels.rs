//! One environment, two CUDA majors: frameworks built for different majors, and pip `nvidia-*` wheels of the
//! same library for two majors side by side.

use super::context::{build_cuda, describe_framework, wheel_cuda_major, wheel_library};
use super::{Ctx, Rule, fix};
use gpu_doctor_kb::{PyVersion, families};
use gpu_doctor_model::{Category, Change, CudaVersion, Finding, InstallFlag, Severity};
use gpu_doctor_model::{Framework, Package, PythonEnv};

const SOURCE: &str = "PyTorch, JAX and CuPy install docs (each CUDA major has its own nvidia-*-cuNN wheels); \
    reference §7.2 (nvidia-cudnn-cu11/-cu12/-cu13 all install into site-packages/nvidia/cudnn)";

pub(super) const MIXED: Rule = Rule {
    id: "wheels.mixed_cuda_majors",
    category: Category::Other,
    severity: Severity::Warning,
    trigger: "Frameworks in one environment are built for different CUDA majors (e.g. torch cu12x with \
              jax-cuda13-plugin or cupy-cuda13x), so they pull two sets of CUDA wheels that share names and folders.",
    source: SOURCE,
};

pub(super) const DUPLICATE: Rule = Rule {
    id: "wheels.duplicate_cuda_library",
    category: Category::Other,
    severity: Severity::Warning,
    trigger: "An environment holds pip nvidia-* wheels of the same CUDA library for two CUDA majors (e.g. \
              nvidia-cuda-runtime-cu12 and nvidia-cuda-runtime 13.x) while its frameworks do not mix majors (that is \
              wheels.mixed_cuda_majors).",
    source: SOURCE,
};

pub(super) const DUPLICATE_CUDNN: Rule = Rule {
    id: "wheels.duplicate_cudnn",
    category: Category::CudnnMissingOrMismatch,
    severity: Severity::Warning,
    trigger: "An environment holds nvidia-cudnn wheels for two CUDA majors; both install into the same \
              nvidia/cudnn folder, so the one installed last replaced the other's libraries.",
    source: SOURCE,
};

pub(super) const RULES: &[Rule] = &[MIXED, DUPLICATE, DUPLICATE_CUDNN];

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    for env in cx.envs() {
        let frameworks: Vec<(&Framework, u32)> = env
            .frameworks
            .iter()
            .filter(|f| f.name != "jax" && !f.name.ends_with("-pjrt"))
            .filter_map(|f| build_cuda(f).map(|(c, _)| (f, c.major)))
            .collect();
        let target = target_major(&frameworks);
        let mut majors: Vec<u32> = frameworks.iter().map(|(_, m)| *m).collect();
        majors.sort_unstable();
        majors.dedup();
        let duplicates = duplicate_libraries(env);
        let (cudnn, other): (Vec<_>, Vec<_>) = duplicates.into_iter().partition(|(lib, _)| lib == "nvidia-cudnn");
        if majors.len() > 1 {
            out.push(mixed(cx, env, &frameworks, target, &other));
        } else if !other.is_empty() {
            let why = "Each CUDA major has its own nvidia-* wheels, and a framework uses those of its own major; the \
                       other set is left over from a framework or an upgrade of the other major, and a framework that \
                       finds its libraries first fails to load them.";
            out.push(duplicate(env, &DUPLICATE, &other, target, ("CUDA library", why)));
        }
        if !cudnn.is_empty() {
            let why = "nvidia-cudnn of every CUDA major installs into the same nvidia/cudnn folder, so the wheel \
                       installed last replaced the other's libraries (a framework of the other major then loads a \
                       cuDNN built for the wrong CUDA), and uninstalling either removes files the other needs.";
            out.push(duplicate(env, &DUPLICATE_CUDNN, &cudnn, target, ("cuDNN", why)));
        }
    }
}

/// Per library with wheels for more than one CUDA major: its name and the wheels.
fn duplicate_libraries(env: &PythonEnv) -> Vec<(String, Vec<(&Package, u32)>)> {
    let mut out: Vec<(String, Vec<(&Package, u32)>)> = Vec::new();
    for w in &env.cuda_wheels {
        let Some(major) = wheel_cuda_major(w) else { continue };
        let lib = wheel_library(&w.name).to_owned();
        match out.iter_mut().find(|(l, _)| *l == lib) {
            Some((_, list)) => list.push((w, major)),
            None => out.push((lib, vec![(w, major)])),
        }
    }
    out.retain(|(_, list)| list.iter().any(|(_, m)| *m != list[0].1));
    out
}

/// The CUDA major to settle on: the one of a framework that has no other (TensorFlow, onnxruntime-gpu), else
/// torch's, else the one most frameworks use (the newer on a tie).
fn target_major(frameworks: &[(&Framework, u32)]) -> Option<u32> {
    let no_other = |f: &Framework| families::is_tensorflow_cuda(&f.name) || f.name == "onnxruntime-gpu";
    let of = |pick: &dyn Fn(&Framework) -> bool| frameworks.iter().find(|(f, _)| pick(f)).map(|(_, m)| *m);
    of(&no_other).or_else(|| of(&|f| f.name == "torch")).or_else(|| {
        let count = |m: u32| frameworks.iter().filter(|(_, x)| *x == m).count();
        frameworks.iter().map(|(_, m)| *m).max_by_key(|m| (count(*m), *m))
    })
}

fn mixed(
    cx: &Ctx<'_>,
    env: &PythonEnv,
    frameworks: &[(&Framework, u32)],
    target: Option<u32>,
    libs: &[(String, Vec<(&Package, u32)>)],
) -> Finding {
    let mut evidence: Vec<String> = frameworks.iter().map(|(f, _)| describe_framework(env, f)).collect();
    evidence.extend(libs.iter().map(|(lib, list)| format!("{lib} wheels: {}", wheel_list(list))));
    let majors: Vec<String> = frameworks.iter().map(|(f, m)| format!("{} CUDA {m}", f.name)).collect();
    let mut detail = format!(
        "{}. Each pulls the nvidia-* wheels of its own CUDA major; both sets land in the same site-packages \
         (nvidia-cudnn of every major installs into nvidia/cudnn), so whichever was installed last can replace \
         libraries the other needs, and one process importing both loads two CUDA runtimes.",
        majors.join(", ")
    );
    let plan = target.map(|t| {
        let odd: Vec<&Framework> = frameworks.iter().filter(|(_, m)| *m != t).map(|(f, _)| *f).collect();
        if let Some(f) = odd.first() {
            let spec = match cx.kb.jax.plugin.iter().find(|p| p.package == f.name) {
                Some(p) => format!("jax[{}]", p.extra),
                None => format!("{}=={}", f.name, f.version),
            };
            // `~` must stay unquoted for the shell to expand it, so the folder name keeps only plain characters.
            let folder: String =
                f.name.chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')).collect();
            let dir = format!("~/venvs/{}", folder.trim_start_matches('.'));
            detail.push_str(&format!(
                " Instead of settling on one major, {} can have an environment of its own: python3 -m venv {dir} && \
                 {dir}/bin/python -m pip install {}",
                f.name,
                fix::word(cx, &spec)
            ));
        }
        let changes = odd.iter().flat_map(|f| switch(cx, f, t)).collect();
        fix::change(Some(env), format!("every framework in {} on CUDA {t}", env.name), changes)
    });
    let finding =
        MIXED.finding(format!("{} mixes frameworks built for different CUDA majors", env.name), detail, evidence, None);
    finding.with_plan(plan)
}

/// The changes that move one framework to CUDA `major`.
fn switch(cx: &Ctx<'_>, f: &Framework, major: u32) -> Vec<Change> {
    let name = f.name.as_str();
    if let Some(old) = families::jax_plugin_cuda(name) {
        return vec![
            fix::uninstall([format!("jax-cuda{old}-plugin"), format!("jax-cuda{old}-pjrt")]),
            fix::install(&[InstallFlag::Upgrade], [format!("jax[cuda{major}]")]),
        ];
    }
    if families::is_cupy_cuda(name) {
        return vec![fix::uninstall([name]), fix::install(&[], [format!("cupy-cuda{major}x")])];
    }
    if name == "torch" {
        // The newest variant of that major that has machine code for these GPUs, within the driver's level.
        let cap = cx.driver.cuda.filter(|d| d.major == major).unwrap_or(CudaVersion::new(major, 99));
        let line = PyVersion::new(&f.version).line();
        let pick = cx.kb.pytorch.recommend(&cx.capabilities(), Some(cap), line.as_deref());
        if let Some(v) = pick.filter(|v| v.cuda.major == major) {
            return vec![fix::torch_variant(cx.kb, &format!("{}.*", v.torch), v.cuda)];
        }
    }
    vec![Change::Manual { text: format!("Install a CUDA {major} build of {name}.") }]
}

fn wheel_list(list: &[(&Package, u32)]) -> String {
    let names: Vec<String> = list.iter().map(|(p, m)| format!("{} {} (CUDA {m})", p.name, p.version)).collect();
    names.join(", ")
}

fn duplicate(
    env: &PythonEnv,
    rule: &Rule,
    libs: &[(String, Vec<(&Package, u32)>)],
    target: Option<u32>,
    (what, why): (&str, &str),
) -> Finding {
    let evidence: Vec<String> = libs.iter().map(|(lib, list)| format!("{lib}: {}", wheel_list(list))).collect();
    let all: Vec<(&Package, u32)> = libs.iter().flat_map(|(_, l)| l.iter().copied()).collect();
    let of_major = |m: u32| all.iter().filter(move |(_, x)| *x == m).map(|(p, _)| p);
    let mut majors: Vec<u32> = all.iter().map(|(_, m)| *m).collect();
    majors.sort_unstable();
    majors.dedup();
    let summary = format!("{} holds {what} wheels for two CUDA majors", env.name);
    match target {
        Some(t) if majors.contains(&t) => {
            let drop: Vec<&str> = all.iter().filter(|(_, m)| *m != t).map(|(p, _)| p.name.as_str()).collect();
            let kept: Vec<String> = of_major(t).map(|p| format!("{}=={}", p.name, p.version)).collect();
            let changes =
                vec![fix::uninstall(drop), fix::install(&[InstallFlag::Reinstall, InstallFlag::NoDeps], kept)];
            let goal = format!("only the CUDA {t} wheels your frameworks use in {}", env.name);
            rule.finding(summary, why, evidence, None).with_plan(fix::change(Some(env), goal, changes))
        }
        _ => {
            let sets: Vec<String> = majors
                .iter()
                .map(|m| {
                    let names: Vec<&str> = of_major(*m).map(|p| p.name.as_str()).collect();
                    format!("CUDA {m}: {}", names.join(", "))
                })
                .collect();
            let fix = format!(
                "Keep the set your framework needs ({}): uninstall the other set, then reinstall the kept wheels \
                 with --force-reinstall --no-deps (uninstalling removes files both share).",
                sets.join("; ")
            );
            rule.finding(summary, why, evidence, Some(fix))
        }
    }
}
