//! The companion packages against the frameworks beside them: a torchvision or torchaudio built for
//! another torch release or variant, and NumPy 2 beside a framework release built against NumPy 1.

use super::{Ctx, Rule, fix};
use gpu_doctor_kb::PyVersion;
use gpu_doctor_model::{Category, Change, Finding, Severity};
use gpu_doctor_model::{Framework, Package, PythonEnv};

pub(super) const TORCH_COMPANION: Rule = Rule {
    id: "companions.built_for_other_torch",
    category: Category::Other,
    severity: Severity::Error,
    trigger: "torchvision or torchaudio in an environment belongs to another torch release line than the \
              installed torch (pytorch.toml's torchvision/torchaudio of that line), or carries another local build \
              tag (`+cu121` beside `+cu124`, `+cpu` beside a CUDA build): importing it fails with `operator \
              torchvision::nms does not exist` or an undefined symbol.",
    source: "pytorch/vision README (\"torch | torchvision | Python\" table); \
             https://pytorch.org/get-started/previous-versions/ (torch, torchvision and torchaudio installed \
             together); pytorch/pytorch#122494, vllm-project/vllm#5736",
};

pub(super) const NUMPY2: Rule = Rule {
    id: "companions.numpy_two_beside_numpy_one_build",
    category: Category::Other,
    severity: Severity::Error,
    trigger: "NumPy 2 is installed beside a framework release built against NumPy 1 (torch before 2.3, \
              TensorFlow before 2.18, jaxlib before 0.4.26): importing it prints `A module that was compiled \
              using NumPy 1.x cannot be run in NumPy 2.x` and NumPy interop fails (`_ARRAY_API not found`, \
              `Numpy is not available`).",
    source: "numpy 2.0 ABI (modules built against NumPy 1 do not load in NumPy 2); torch: pytorch/pytorch#132179 \
             (\"PyTorch 2.3.0 is the first version that supports NumPy 2.0\", see #107302); TensorFlow 2.18.0 \
             release notes (\"now supports and is compiled with NumPy 2.0 by default\"); JAX 0.4.26: \
             keras-team/keras#19691 citing google/jax#19246",
};

pub(super) const RULES: &[Rule] = &[TORCH_COMPANION, NUMPY2];

/// The first release of each framework built against NumPy 2 (see `NUMPY2`'s source for each).
const NUMPY2_FLOORS: &[(&str, [u32; 3])] = &[("torch", [2, 3, 0]), ("tensorflow", [2, 18, 0]), ("jaxlib", [0, 4, 26])];

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    for env in cx.envs() {
        torch_companions(cx, env, out);
        numpy2(env, out);
    }
}

fn companion<'e>(env: &'e PythonEnv, name: &str) -> Option<&'e Package> {
    env.companions.iter().find(|p| p.name == name)
}

fn torch_companions(cx: &Ctx<'_>, env: &PythonEnv, out: &mut Vec<Finding>) {
    let Some(torch) = env.frameworks.iter().find(|f| f.name == "torch") else { return };
    // A nightly or pre-release pairs with companions of its own date, which no table lists.
    if PyVersion::new(&torch.version).is_pre_or_dev() {
        return;
    }
    let Some(row) = cx.kb.pytorch.release(&torch.version) else { return };
    let exact =
        row.latest.as_deref().is_some_and(|l| PyVersion::new(l).numbers() == PyVersion::new(&torch.version).numbers());
    let mut evidence = vec![format!("torch {} (line {})", torch.version, row.version)];
    let torch_tag = PyVersion::new(&torch.version).local();
    // torch itself is pinned to what is installed, so pip picks the companion built for it and
    // keeps torch where it is.
    let mut requirements = vec![format!("torch=={}", torch.version)];
    let mut names = Vec::new();
    for (name, wanted) in [("torchvision", &row.torchvision), ("torchaudio", &row.torchaudio)] {
        let (Some(p), Some(wanted)) = (companion(env, name), wanted) else { continue };
        let want_line = PyVersion::new(wanted).line();
        let line_differs = PyVersion::new(&p.version).line() != want_line;
        let tag_differs = matches!((torch_tag, PyVersion::new(&p.version).local()), (Some(a), Some(b)) if a != b);
        if !line_differs && !tag_differs {
            continue;
        }
        let why = if line_differs {
            format!(
                "built for another torch line: torch {} goes with {name} {}.x",
                row.version,
                want_line.as_deref().unwrap_or("?")
            )
        } else {
            "another build of the same line".to_owned()
        };
        evidence.push(format!("{name} {}: {why}", p.version));
        names.push(name);
        let tag = torch_tag.map_or_else(String::new, |t| format!("+{t}"));
        requirements.push(if exact {
            format!("{name}=={wanted}{tag}")
        } else {
            format!("{name}=={}.*", want_line.as_deref().unwrap_or(wanted))
        });
    }
    if names.is_empty() {
        return;
    }
    let index_url = index_for(cx, torch);
    let from = index_url.as_deref().map_or_else(|| "PyPI".to_owned(), str::to_owned);
    let finding = TORCH_COMPANION.finding(
        format!("{} in {} was built for another torch than torch {}", names.join(" and "), env.name, torch.version),
        format!(
            "torchvision and torchaudio ship compiled operators built against one torch release and build; beside \
             another torch, importing them fails with `RuntimeError: operator torchvision::nms does not exist` or an \
             `undefined symbol` error (the usual result of upgrading torch alone, or of installing a companion from \
             another index). Installing the companion built for the installed torch, from the index torch came from \
             ({from}), fixes it without touching torch."
        ),
        evidence,
        None,
    );
    let change = Change::Install { requirements, flags: Vec::new(), index_url };
    out.push(finding.with_plan(fix::change(
        Some(env),
        format!("companions that match torch {}", torch.version),
        vec![change],
    )));
}

/// The index the installed torch came from: its local tag's index (`+cu124`, `+cpu`, `+rocm6.2`),
/// PyPI (`None`) for a torch without one.
fn index_for(cx: &Ctx<'_>, torch: &Framework) -> Option<String> {
    let tag = PyVersion::new(&torch.version).local()?;
    let known = tag == "cpu" || tag.starts_with("rocm") || gpu_doctor_kb::families::cuda_tag(tag).is_some();
    known.then(|| format!("{}/{tag}", cx.kb.pytorch.index.trim_end_matches('/')))
}

fn numpy2(env: &PythonEnv, out: &mut Vec<Finding>) {
    let Some(numpy) =
        companion(env, "numpy").filter(|n| PyVersion::new(&n.version).numbers().first().is_some_and(|m| *m >= 2))
    else {
        return;
    };
    let old: Vec<(&Framework, [u32; 3])> = NUMPY2_FLOORS
        .iter()
        .filter_map(|(name, floor)| {
            let f = env.frameworks.iter().find(|f| f.name == *name)?;
            // `2.18` is 2.18.0: pad before comparing, or a two-part version reads as older.
            let mut v = PyVersion::new(&f.version).numbers();
            v.resize(floor.len().max(v.len()), 0);
            (v.as_slice() < floor.as_slice()).then_some((f, *floor))
        })
        .collect();
    if old.is_empty() {
        return;
    }
    let mut evidence = vec![format!("numpy {}", numpy.version)];
    evidence.extend(old.iter().map(|(f, [a, b, c])| {
        format!("{} {}: built against NumPy 1 (NumPy 2 builds start at {a}.{b}.{c})", f.name, f.version)
    }));
    let names: Vec<&str> = old.iter().map(|(f, _)| f.name.as_str()).collect();
    let finding = NUMPY2.finding(
        format!("{} in {} was built against NumPy 1 but NumPy {} is installed", names.join(" and "), env.name, numpy.version),
        "A module compiled against NumPy 1 cannot run on NumPy 2: importing it prints `A module that was compiled using \
         NumPy 1.x cannot be run in NumPy 2.x as it may crash`, and everything that passes arrays between them \
         (`torch.from_numpy`, `.numpy()`, data loaders) fails. The plan installs `numpy<2`, which keeps the framework \
         build that was judged against this GPU and driver; upgrading the framework to a release built against NumPy 2 \
         is the other way, and changes its CUDA build too.",
        evidence,
        None,
    );
    let change = fix::install(&[], ["numpy<2"]);
    out.push(finding.with_plan(fix::change(Some(env), format!("NumPy 1 for {}", names.join(" and ")), vec![change])));
}
