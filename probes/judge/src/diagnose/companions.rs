//! The companion packages against the frameworks beside them: a torchvision or torchaudio built for
//! another torch release or variant, a compiled extension that fails to load because it was built
//! against another torch, and NumPy 2 beside a framework release built against NumPy 1.

use super::demangle::demangle;
use super::{Ctx, Rule, fix};
use gpu_doctor_kb::PyVersion;
use gpu_doctor_model::shell::ShellCommand;
use gpu_doctor_model::{Category, Change, Finding, InstallFlag, OsFamily, Severity};
use gpu_doctor_model::{Framework, Package, PythonEnv};

pub(super) const TORCH_COMPANION: Rule = Rule {
    id: "companions.built_for_other_torch",
    category: Category::Other,
    severity: Severity::Error,
    trigger: "torchvision or torchaudio in an environment belongs to another torch release line than the \
              installed torch (pytorch.toml's torchvision/torchaudio of that line), or is another build: another \
              local tag (`+cu121` beside `+cu124`, `+cpu` beside a CUDA build), or none (PyPI's build, the line's \
              `pypi_linux` or `pypi_windows` variant for the OS, which a `pip show` site-packages path tells for \
              pasted text) beside a torch of another tag: importing it fails with `operator torchvision::nms does \
              not exist` or an undefined symbol.",
    source: "pytorch/vision README (\"torch | torchvision | Python\" table); \
             https://pytorch.org/get-started/previous-versions/ (torch, torchvision and torchaudio installed \
             together); pytorch.toml's pypi_linux/pypi_windows (the variant plain pip gives; torchvision and \
             torchaudio are built in the same pytorch/test-infra binary build matrix and uploaded with it); \
             pytorch/pytorch#122494, vllm-project/vllm#5736",
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

pub(super) const EXTENSION: Rule = Rule {
    id: "companions.extension_built_for_other_torch",
    category: Category::Other,
    severity: Severity::Error,
    trigger: "A compiled PyTorch extension (flash-attn, xformers, vLLM's kernels, torchvision's or torchaudio's \
              operators, mmcv, apex, detectron2, mamba-ssm, any `torch.utils.cpp_extension` build) fails to load with \
              `<library>.so: undefined symbol: _ZN3c10…` (`_ZN2at…`, `_ZN5torch…`, a vtable or type info of them: a \
              mangled C++ name in libtorch's namespaces, the `ld.torch_symbol_missing` row): it was compiled against \
              another torch release, or with the other C++ ABI setting, than the torch it runs beside.",
    source: "https://docs.pytorch.org/docs/stable/notes/libtorch_stable_abi.html (extensions outside the stable ABI \
             are tied to the PyTorch version they were built with); glibc elf/dl-lookup.c (the message); \
             Dao-AILab/flash-attention:setup.py@00291362dbd8c9ab3594e80c2f8faab8a478b9e1 (get_wheel_url, \
             CachedWheelsCommand: a build under --no-build-isolation takes the prebuilt wheel made for the installed \
             torch's major.minor, CUDA major and C++ ABI, else compiles against it; the CUDAExtension names); \
             state-spaces/mamba and Dao-AILab/causal-conv1d setup.py (`selective_scan_cuda`, `causal_conv1d_cuda`); \
             pip's --no-build-isolation and --no-cache-dir (https://pip.pypa.io/en/stable/cli/pip_install/)",
};

pub(super) const RULES: &[Rule] = &[TORCH_COMPANION, EXTENSION, NUMPY2];

/// The message row [`EXTENSION`] reads.
const EXTENSION_MESSAGE: &str = "ld.torch_symbol_missing";

/// Compiled modules installed at the top of site-packages, with the distribution that ships them
/// (the `CUDAExtension(name=…)` of its setup.py: see [`EXTENSION`]'s source).
const TOP_LEVEL_MODULES: &[(&str, &str)] = &[
    ("flash_attn_2_cuda", "flash-attn"),
    ("flash_attn_cuda", "flash-attn"),
    ("selective_scan_cuda", "mamba-ssm"),
    ("causal_conv1d_cuda", "causal-conv1d"),
];

/// Distributions whose wheels require one exact torch release (`Requires-Dist: torch==X`), so pip
/// finds the release built for the installed torch by itself: torchvision and torchaudio (built and
/// released with each torch: pytorch.toml's companions), xformers and vLLM (their wheels on PyPI pin
/// the torch they were built with).
const PINS_TORCH: &[&str] = &["torchvision", "torchaudio", "xformers", "vllm"];

/// The first release of each framework built against NumPy 2 (see `NUMPY2`'s source for each).
const NUMPY2_FLOORS: &[(&str, [u32; 3])] = &[("torch", [2, 3, 0]), ("tensorflow", [2, 18, 0]), ("jaxlib", [0, 4, 26])];

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    for env in cx.envs() {
        torch_companions(cx, env, out);
        numpy2(env, out);
    }
    extensions(cx, out);
}

fn companion<'e>(env: &'e PythonEnv, name: &str) -> Option<&'e Package> {
    env.companions.iter().find(|p| p.name == name)
}

fn torch_companions(cx: &Ctx<'_>, env: &PythonEnv, out: &mut Vec<Finding>) {
    let Some(torch) = env.framework("torch") else { return };
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
    // The build a companion without a local tag is: PyPI's, the variant of the line that plain pip gives
    // on that OS (torchvision and torchaudio are built and uploaded with torch from one build matrix).
    let pypi = pypi_build(cx, env, row, torch_tag);
    for (name, wanted) in [("torchvision", &row.torchvision), ("torchaudio", &row.torchaudio)] {
        let (Some(p), Some(wanted)) = (companion(env, name), wanted) else { continue };
        let want_line = PyVersion::new(wanted).line();
        let version = PyVersion::new(&p.version);
        let line_differs = version.line() != want_line;
        let tag_differs = match (torch_tag, version.local()) {
            (Some(a), Some(b)) => a != b,
            (Some(a), None) => pypi.is_some_and(|(build, _)| build != a),
            _ => false,
        };
        if !line_differs && !tag_differs {
            continue;
        }
        let why = match (line_differs, version.local(), pypi) {
            (true, _, _) => format!(
                "built for another torch line: torch {} goes with {name} {}.x",
                row.version,
                want_line.as_deref().unwrap_or("?")
            ),
            (false, None, Some((build, os))) => format!(
                "PyPI's build (no local tag), which on {os} is torch {}'s {build} build, not {}",
                row.version,
                torch_tag.unwrap_or("?")
            ),
            _ => "another build of the same line".to_owned(),
        };
        evidence.push(format!("{name} {}: {why}", p.version));
        names.push(name);
        let tag = torch_tag.map_or_else(String::new, |t| format!("+{t}"));
        requirements.push(if exact {
            format!("{name}=={wanted}{tag}")
        } else if line_differs {
            format!("{name}=={}.*", want_line.as_deref().unwrap_or(wanted))
        } else {
            // The same release in torch's build: a `.*` pin would be met by the installed other build.
            format!("{name}=={}{tag}", version.public())
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

/// The build of a companion installed from PyPI beside a torch with local tag `torch_tag`, with the
/// OS it is for: the line's `pypi_linux` (Linux x86_64) or `pypi_windows` variant. Where the text did
/// not name the OS, a site-packages folder `pip show` printed tells it for a torch tagged `+cpu` or
/// `+cuXYZ`, builds PyTorch makes for Linux and Windows only: a POSIX path is Linux, a drive letter
/// Windows. `None` when neither is known.
fn pypi_build<'r>(
    cx: &Ctx<'_>,
    env: &PythonEnv,
    row: &'r gpu_doctor_kb::TorchRelease,
    torch_tag: Option<&str>,
) -> Option<(&'r str, &'static str)> {
    let os = match cx.os {
        OsFamily::Linux | OsFamily::Windows => cx.os,
        _ if torch_tag.is_some_and(|t| t == "cpu" || gpu_doctor_kb::families::cuda_tag(t).is_some()) => {
            if env.site_packages.iter().any(|d| d.starts_with('/')) {
                OsFamily::Linux
            } else if env.site_packages.iter().any(|d| d.get(1..3) == Some(":\\")) {
                OsFamily::Windows
            } else {
                return None;
            }
        }
        _ => return None,
    };
    Some(if os == OsFamily::Windows {
        (row.pypi_windows.as_str(), "Windows")
    } else {
        (row.pypi_linux.as_str(), "Linux x86_64")
    })
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
            let f = env.framework(name)?;
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

/// Where a compiled extension that failed to load comes from, read from the path the loader printed.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Extension {
    /// The file's name (`flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so`), or words where the line
    /// named none.
    file: String,
    /// The distribution that ships it, where the path says (`flash-attn`, `xformers`); `torch` for
    /// torch's own libraries.
    package: Option<String>,
    /// True when the file lies in a site-packages or dist-packages folder (installed), false for a
    /// build in a source checkout (`pip install -e`, `setup.py develop`) or a path not shown.
    installed: bool,
}

impl Extension {
    /// `…/site-packages/xformers/_C.so` → xformers; `…/site-packages/flash_attn_2_cuda.cpython-310-….so` →
    /// flash-attn (by [`TOP_LEVEL_MODULES`]); `…/site-packages/Foo-1.0-py3.7-linux-x86_64.egg/foo.so` → Foo;
    /// `…/torch/lib/libc10.so` → torch.
    fn of(library: &str) -> Self {
        let parts: Vec<&str> = library.split(['/', '\\']).filter(|p| !p.is_empty()).collect();
        // A line without the path (the symbol alone) names no file.
        let file = parts.last().map_or_else(|| "a compiled PyTorch extension".to_owned(), |f| (*f).to_owned());
        let module = file.split('.').next().unwrap_or_default();
        let site = parts.iter().rposition(|p| *p == "site-packages" || *p == "dist-packages");
        let installed = site.is_some();
        let package = match site.and_then(|i| parts.get(i + 1)) {
            Some(top) if *top == file => {
                TOP_LEVEL_MODULES.iter().find(|(m, _)| *m == module).map(|(_, dist)| (*dist).to_owned())
            }
            Some(top) if top.ends_with(".egg") => top.split('-').next().map(str::to_owned),
            Some(top) => Some((*top).to_owned()),
            None => TOP_LEVEL_MODULES.iter().find(|(m, _)| *m == module).map(|(_, dist)| (*dist).to_owned()),
        };
        let package =
            package.filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)));
        // A bare file name of a known distribution's module (`ImportError: flash_attn_2_cuda….so: …`, the
        // folder cut off) is that distribution's installed copy.
        let installed = installed || (parts.len() == 1 && package.is_some());
        Self { file, package, installed }
    }
}

fn extensions(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let mut seen: Vec<Option<String>> = Vec::new();
    for m in cx.s.messages.iter().filter(|m| m.id == EXTENSION_MESSAGE) {
        let Some(symbol) = m.values.get("symbol") else { continue };
        let ext = Extension::of(m.values.get("library").map_or("", String::as_str));
        if seen.contains(&ext.package) {
            continue;
        }
        seen.push(ext.package.clone());
        // A torchvision or torchaudio the versions already show to be another torch's is that finding.
        let named =
            |f: &Finding| f.id == TORCH_COMPANION.id && ext.package.as_deref().is_some_and(|p| f.summary.contains(p));
        if out.iter().any(named) {
            continue;
        }
        out.push(extension_finding(cx, &ext, symbol));
    }
}

fn extension_finding(cx: &Ctx<'_>, ext: &Extension, symbol: &str) -> Finding {
    let api = demangle(symbol);
    let api_words = api.as_deref().map_or_else(String::new, |a| format!(" ({a})"));
    let torch = cx.frameworks().find(|(_, f)| f.name == "torch");
    let torch_words = torch.map_or_else(|| "the installed torch".to_owned(), |(_, f)| format!("torch {}", f.version));
    let what = ext.package.as_deref().map_or_else(|| ext.file.clone(), str::to_owned);
    let mut evidence = vec![format!("{} asks libtorch for {symbol}{api_words}", ext.file)];
    if let Some((env, f)) = torch {
        evidence.push(format!("torch {} in {}", f.version, env.name));
    }
    if ext.package.as_deref() == Some("torch") {
        return torch_mixed(cx, ext, symbol, &api_words, torch, evidence);
    }
    // The old and the C++11 string type mangle differently: a missing name that holds one points at the
    // ABI setting (`_GLIBCXX_USE_CXX11_ABI`), which cpp_extension takes from the torch it builds against.
    let abi = if symbol.contains("__cxx11") || api.as_deref().is_some_and(|a| a.contains("std::string")) {
        " The missing name holds a C++ string type of one ABI setting: the extension was compiled with the other \
         `_GLIBCXX_USE_CXX11_ABI` than this torch (`python -c \"import torch; print(torch.compiled_with_cxx11_abi())\"` \
         prints torch's); a build against this torch takes its setting."
    } else {
        ""
    };
    let summary = format!("{what} was built against another torch than {torch_words}");
    let detail = format!(
        "Loading {} fails: it calls {symbol}{api_words}, which {torch_words} does not export. A compiled PyTorch \
         extension links the C++ functions of the torch it was compiled against, and they change between releases \
         (and builds): one made for another torch does not load beside this one, the usual result of upgrading torch \
         alone or of a prebuilt wheel made for another torch release or CUDA.{abi} The build made for {torch_words}, \
         or a rebuild against it, fixes it.",
        ext.file
    );
    let finding = |fix: Option<String>| EXTENSION.finding(summary.clone(), detail.clone(), evidence.clone(), fix);
    let Some(package) = ext.package.as_deref().filter(|_| ext.installed) else {
        // A build in a source checkout, or a path that names no distribution: the rebuild, in words.
        let rebuild = fix::command(
            cx,
            &ShellCommand::new("pip").args([
                "install",
                "--no-build-isolation",
                "--no-cache-dir",
                "--force-reinstall",
                "--no-deps",
                "-e",
                ".",
            ]),
            false,
        );
        return finding(Some(format!(
            "Rebuild {what} against {torch_words}: in its source folder remove the old build (its `build` folder and \
             the stale {} beside the sources), then `{rebuild}`; or install its release built for {torch_words}.",
            ext.file
        )));
    };
    let Some((env, torch)) = torch else {
        let pinned = PINS_TORCH.contains(&package);
        let how = if pinned {
            format!(
                "`pip install torch==VERSION {package}` with torch's version (pip picks the {package} release built for it)"
            )
        } else {
            format!(
                "`pip install --no-build-isolation --no-cache-dir --force-reinstall --no-deps {package}` (a build against the installed torch)"
            )
        };
        let ask = fix::command(
            cx,
            &ShellCommand::new("python").args(["-c", "import torch; print(torch.__version__)"]),
            false,
        );
        return finding(Some(format!(
            "Install the {package} built for the installed torch: `{ask}` prints its version; then {how}."
        )));
    };
    let change = if PINS_TORCH.contains(&package) {
        // Its wheels pin one torch: pip picks the release pinned to this one, torch stays.
        Change::Install {
            requirements: vec![format!("torch=={}", torch.version), package.to_owned()],
            flags: vec![InstallFlag::Upgrade],
            index_url: index_for(cx, torch),
        }
    } else {
        let version = env.companions.iter().find(|p| same_name(&p.name, package)).map(|p| p.version.clone());
        let requirement = version.map_or_else(|| package.to_owned(), |v| format!("{package}=={v}"));
        fix::install(
            &[InstallFlag::Reinstall, InstallFlag::NoDeps, InstallFlag::NoBuildIsolation, InstallFlag::NoCache],
            [requirement],
        )
    };
    EXTENSION.finding(summary.clone(), detail.clone(), evidence.clone(), None).with_plan(fix::change(
        Some(env),
        format!("{package} built against torch {}", torch.version),
        vec![change],
    ))
}

/// torch's own libraries asking each other for a symbol: two torch installs mixed (a user-site or
/// another environment's copy loaded beside this one's), fixed by installing torch again.
fn torch_mixed(
    cx: &Ctx<'_>,
    ext: &Extension,
    symbol: &str,
    api_words: &str,
    torch: Option<(&PythonEnv, &Framework)>,
    evidence: Vec<String>,
) -> Finding {
    let summary = format!("torch's own {} comes from another torch release than the rest of it", ext.file);
    let detail = format!(
        "{} is part of torch, and it asks torch's other libraries for {symbol}{api_words}, which they lack: files of \
         two torch releases are loaded together (a torch in the user site or another environment beside this one, \
         or an upgrade that left files behind). Installing torch again, alone, puts one release's files back.",
        ext.file
    );
    let Some((env, fw)) = torch else {
        let ask = fix::command(cx, &ShellCommand::new("python").args(["-m", "pip", "list", "-v"]), false);
        return EXTENSION.finding(
            summary,
            detail,
            evidence,
            Some(format!(
                "`{ask}` shows where each torch is installed; remove the other copy and install torch again."
            )),
        );
    };
    let change = Change::Install {
        requirements: vec![format!("torch=={}", fw.version)],
        flags: vec![InstallFlag::Reinstall, InstallFlag::NoDeps],
        index_url: index_for(cx, fw),
    };
    EXTENSION.finding(summary, detail, evidence, None).with_plan(fix::change(
        Some(env),
        format!("one torch {} installed", fw.version),
        vec![change],
    ))
}

/// Package names compared as pip compares them (PEP 503: case, `-`, `_` and `.` alike).
fn same_name(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.to_ascii_lowercase().replace(['_', '.'], "-");
    norm(a) == norm(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(library: &str) -> (String, Option<String>, bool) {
        let e = Extension::of(library);
        (e.file, e.package, e.installed)
    }

    #[test]
    fn an_extensions_path_names_its_distribution() {
        let cases = [
            // vllm-project/vllm#611: a folder under site-packages.
            (
                "/envs/e/lib/python3.10/site-packages/vllm/activation_ops.cpython-310-x86_64-linux-gnu.so",
                ("activation_ops.cpython-310-x86_64-linux-gnu.so", Some("vllm"), true),
            ),
            // A module at the top of dist-packages, named by its setup.py.
            (
                "/usr/local/lib/python3.11/dist-packages/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so",
                ("flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so", Some("flash-attn"), true),
            ),
            // timmeinhardt/trackformer#23: an egg.
            (
                "/e/lib/python3.7/site-packages/MultiScaleDeformableAttention-1.0-py3.7-linux-x86_64.egg/MultiScaleDeformableAttention.cpython-37m-x86_64-linux-gnu.so",
                (
                    "MultiScaleDeformableAttention.cpython-37m-x86_64-linux-gnu.so",
                    Some("MultiScaleDeformableAttention"),
                    true,
                ),
            ),
            // lxxue/FRNN#21: a source checkout.
            (
                "/home/u/FRNN/frnn/_C.cpython-310-x86_64-linux-gnu.so",
                ("_C.cpython-310-x86_64-linux-gnu.so", None, false),
            ),
            // The folder cut off: a known module is its distribution's installed copy, another is unknown.
            (
                "selective_scan_cuda.cpython-310-x86_64-linux-gnu.so",
                ("selective_scan_cuda.cpython-310-x86_64-linux-gnu.so", Some("mamba-ssm"), true),
            ),
            ("cpu.cpython-38-x86_64-linux-gnu.so", ("cpu.cpython-38-x86_64-linux-gnu.so", None, false)),
            ("", ("a compiled PyTorch extension", None, false)),
            // torch's own libraries.
            (
                "/v/lib/python3.12/site-packages/torch/lib/libtorch_python.so",
                ("libtorch_python.so", Some("torch"), true),
            ),
        ];
        for (library, (file, package, installed)) in cases {
            assert_eq!(of(library), (file.to_owned(), package.map(str::to_owned), installed), "{library}");
        }
    }

    #[test]
    fn hostile_paths_give_no_package_and_end_quickly() {
        // A folder name that is no distribution name is not one.
        assert_eq!(of("/x/site-packages/a b;rm/_C.so").1, None);
        assert_eq!(of("/x/site-packages/").1, None);
        let deep = format!("/{}site-packages/{}/_C.so", "a/".repeat(100_000), "p".repeat(10_000));
        let start = std::time::Instant::now();
        assert_eq!(of(&deep).1.map(|p| p.len()), Some(10_000));
        assert!(start.elapsed() < std::time::Duration::from_secs(2));
    }
}
