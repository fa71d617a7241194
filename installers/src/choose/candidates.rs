//! The candidates of each framework: from the knowledge base, or from the wheel file names of a
//! wheelhouse (`--find-links DIR`). Newest first.

use std::collections::HashMap;

use gpu_doctor_kb::{Kb, PyVersion, TorchVariant, families, index_tag};
use gpu_doctor_model::OsFamily;
use gpu_doctor_model::{CudaVersion, FrameworkBuild};

use super::wheel::WheelName;
use super::{Build, Framework, Gpus, Line, Wheels};

const LINUX: (OsFamily, &str) = (OsFamily::Linux, "x86_64");
const LINUX_ARM: (OsFamily, &str) = (OsFamily::Linux, "aarch64");
const WINDOWS: (OsFamily, &str) = (OsFamily::Windows, "x86_64");

fn range(min: &str, max: &str) -> Option<((u32, u32), (u32, u32))> {
    Some((super::python_version(min)?, super::python_version(max)?))
}

fn newest_first(mut lines: Vec<Line>) -> Vec<Line> {
    lines.sort_by_cached_key(|l| std::cmp::Reverse(l.builds.first().map(|b| PyVersion::new(&b.version).numbers())));
    lines
}

/// The knowledge base's candidates for `framework`.
pub(crate) fn from_kb(kb: &Kb, framework: Framework) -> Vec<Line> {
    let lines = match framework {
        Framework::Torch => torch_kb(kb),
        Framework::Jax => jax_kb(kb),
        Framework::Tensorflow => tensorflow_kb(kb),
        Framework::Cupy => cupy_kb(kb),
    };
    newest_first(lines)
}

/// The `torchvision` or `torchaudio` release the knowledge base records beside torch `version` of
/// `line`; `None` when it records none, or `version` is not the line's newest release.
fn companion<'k>(kb: &'k Kb, line: &str, version: &str, name: &str) -> Option<&'k str> {
    let release = kb.pytorch.release(line).filter(|r| r.latest.as_deref() == Some(version))?;
    if name == "torchvision" { release.torchvision.as_deref() } else { release.torchaudio.as_deref() }
}

/// torch and its companions, pinned to the build of variant `tag`; a companion recorded by range
/// (built for no one torch release) is pinned without the label, so that whichever build of that
/// version the index has is taken (PEP 440: a pin without a local label matches any label), and the
/// notes say so; one PyTorch's own commands pin without the label (`companions_unlabelled`) is
/// pinned so.
fn torch_requirements(kb: &Kb, line: &str, version: &str, tag: &str) -> (Vec<String>, Vec<String>) {
    let mut reqs = vec![format!("torch=={version}+{tag}")];
    let mut notes = Vec::new();
    let by_range = kb.pytorch.release(line).map(|r| r.companions_by_range.as_slice()).unwrap_or_default();
    let unlabelled = kb.pytorch.release(line).map(|r| r.companions_unlabelled.as_slice()).unwrap_or_default();
    for name in ["torchvision", "torchaudio"] {
        match companion(kb, line, version, name) {
            Some(v) if by_range.iter().any(|n| n == name) => {
                reqs.push(format!("{name}=={v}"));
                notes.push(format!(
                    "no {name} was built for torch {line}: {name} {v} is the newest whose requirements admit torch \
                     {version}, which pip resolves beside it"
                ));
            }
            Some(v) if unlabelled.iter().any(|n| n == name) => reqs.push(format!("{name}=={v}")),
            Some(v) => reqs.push(format!("{name}=={v}+{tag}")),
            None => notes.push(format!("no {name} release is recorded for torch {line}, so none is pinned")),
        }
    }
    (reqs, notes)
}

fn torch_kb(kb: &Kb) -> Vec<Line> {
    let mut out = Vec::new();
    for r in &kb.pytorch.release {
        let Some(latest) = r.latest.as_deref() else { continue };
        let variants = kb.pytorch.variant.iter().filter(|v| v.torch == r.version);
        let builds = variants
            .map(|v| {
                let tag = index_tag(v.cuda);
                let (requirements, notes) = torch_requirements(kb, &r.version, latest, &tag);
                Build {
                    label: format!("{latest}+{tag}"),
                    version: latest.to_owned(),
                    line: r.version.clone(),
                    cuda: Some(v.cuda),
                    driver_min: None,
                    wheels_cuda: None,
                    gpus: Gpus::Arch { sass: v.arch.clone(), ptx: v.ptx_list() },
                    wheels: Wheels::Kb { python: range(&r.python_min, &r.python_max), platforms: vec![LINUX, WINDOWS] },
                    requirements,
                    index_url: Some(kb.pytorch.index_url(v.cuda)),
                    pypi_linux: Some(r.pypi_linux.clone()),
                    ctk: false,
                    beyond_kb: String::new(),
                    notes,
                }
            })
            .rev()
            .collect();
        out.push(Line { label: r.version.clone(), builds, kept_only: r.kept_only });
    }
    out
}

fn jax_kb(kb: &Kb) -> Vec<Line> {
    let mut out = Vec::new();
    for r in &kb.jax.release {
        let builds = r
            .extras
            .iter()
            .rev()
            .filter_map(|extra| kb.jax.plugin.iter().find(|p| &p.extra == extra))
            .map(|p| Build {
                label: format!("jax[{}] {}", p.extra, r.version),
                version: r.version.clone(),
                line: PyVersion::new(&r.version).line().unwrap_or_default(),
                cuda: Some(p.cuda_min),
                driver_min: Some(p.linux_driver_min.clone()),
                wheels_cuda: p.pypi_cuda,
                gpus: Gpus::MinCc(p.min_cc),
                wheels: Wheels::Kb { python: range(&r.python_min, &r.python_max), platforms: vec![LINUX, LINUX_ARM] },
                requirements: vec![format!("jax[{}]=={}", p.extra, r.version)],
                index_url: None,
                pypi_linux: None,
                ctk: false,
                beyond_kb: String::new(),
                notes: vec![format!("jaxlib and {} move with it (jax pins them to {})", p.package, r.version)],
            })
            .collect();
        out.push(Line { label: format!("jax {}", r.version), builds, kept_only: false });
    }
    out
}

fn tensorflow_kb(kb: &Kb) -> Vec<Line> {
    let mut out = Vec::new();
    for r in &kb.tensorflow.release {
        let Some(latest) = r.latest.as_deref() else { continue };
        let build = Build {
            label: format!("tensorflow {latest} (CUDA {})", r.cuda),
            version: latest.to_owned(),
            line: r.version.clone(),
            cuda: Some(r.cuda),
            driver_min: None,
            wheels_cuda: r.pypi_cuda,
            gpus: Gpus::Arch { sass: r.arch.clone(), ptx: r.ptx.into_iter().collect() },
            wheels: Wheels::Kb { python: range(&r.python_min, &r.python_max), platforms: vec![LINUX] },
            requirements: vec![format!("tensorflow[and-cuda]=={latest}")],
            index_url: None,
            pypi_linux: None,
            ctk: false,
            beyond_kb: String::new(),
            notes: vec![match r.pypi_cuda.filter(|c| c.major_minor() != r.cuda.major_minor()) {
                Some(_) => format!(
                    "the and-cuda extra installs the nvidia-* CUDA wheels: any {}.x from the {} it was tested with",
                    r.cuda.major, r.cuda
                ),
                None => "the and-cuda extra pins the nvidia-* CUDA wheels it was tested with".into(),
            }],
        };
        out.push(Line { label: r.version.clone(), builds: vec![build], kept_only: false });
    }
    out
}

/// Whether CuPy package `name` at `version` has the `ctk` extra, which installs the CUDA
/// libraries it loads (`cuda-toolkit[cublas,cudart,cufft,curand,cusolver,cusparse,nvrtc]==12.*`)
/// from PyPI. Source: `Provides-Extra: ctk` and that `Requires-Dist` in
/// https://pypi.org/pypi/cupy-cuda12x/json and https://pypi.org/pypi/cupy-cuda13x/json (14.2.0,
/// read 2026-11-28); cupy-cuda11x 13.6.0 has none (only `all`, `test`). Only v14 was checked.
pub(crate) fn has_ctk_extra(name: &str, version: &str) -> bool {
    matches!(name, "cupy-cuda12x" | "cupy-cuda13x")
        && PyVersion::new(version).numbers().first().is_some_and(|m| *m >= 14)
}

fn cupy_kb(kb: &Kb) -> Vec<Line> {
    let mut out = Vec::new();
    for p in &kb.cupy.package {
        let Some(latest) = p.latest.as_deref() else { continue };
        let python = p.python_min.as_deref().zip(p.python_max.as_deref()).and_then(|(a, b)| range(a, b));
        let mut platforms = vec![LINUX, LINUX_ARM];
        if p.windows {
            platforms.push(WINDOWS);
        }
        let build = Build {
            label: format!("{} {latest}", p.name),
            version: latest.to_owned(),
            line: PyVersion::new(latest).line().unwrap_or_default(),
            cuda: Some(p.cuda_min),
            driver_min: None,
            wheels_cuda: None,
            gpus: Gpus::CudaRange { min: p.cuda_min, max: p.cuda_max },
            wheels: Wheels::Kb { python, platforms },
            requirements: vec![format!("{}=={latest}", p.name)],
            index_url: None,
            pypi_linux: None,
            ctk: has_ctk_extra(&p.name, latest),
            beyond_kb: String::new(),
            notes: Vec::new(),
        };
        out.push(Line { label: p.name.clone(), builds: vec![build], kept_only: false });
    }
    // Same CuPy release for two CUDA majors: the newer CUDA first.
    out.sort_by_key(|l| std::cmp::Reverse(l.builds.first().and_then(|b| b.cuda)));
    out
}

/// The candidates among the wheel files `files` (names or paths).
pub(crate) fn from_wheelhouse(kb: &Kb, framework: Framework, files: &[String]) -> Vec<Line> {
    let wheels: Vec<WheelName> = files.iter().filter_map(|f| WheelName::parse(f)).collect();
    let lines = match framework {
        Framework::Torch => torch_files(kb, &wheels),
        Framework::Jax => jax_files(kb, &wheels),
        Framework::Tensorflow => tensorflow_files(kb, &wheels),
        Framework::Cupy => cupy_files(kb, &wheels),
    };
    newest_first(lines)
}

/// A group of wheels: (version, local label, its files).
type Group<'w> = (String, Option<String>, Vec<&'w WheelName>);

/// Groups `wheels` of `name` by (version, local label), newest version first. Linear in the
/// wheels (and n log n for the order): a wheelhouse may hold thousands.
fn groups<'w>(wheels: &'w [WheelName], name: &str) -> Vec<Group<'w>> {
    let mut out: Vec<Group<'w>> = Vec::new();
    let mut at: HashMap<(&str, Option<&str>), usize> = HashMap::new();
    for w in wheels.iter().filter(|w| w.name == name) {
        match at.get(&(w.version.as_str(), w.local.as_deref())) {
            Some(&i) => out[i].2.push(w),
            None => {
                at.insert((w.version.as_str(), w.local.as_deref()), out.len());
                out.push((w.version.clone(), w.local.clone(), vec![w]));
            }
        }
    }
    out.sort_by_cached_key(|(v, l, _)| std::cmp::Reverse((PyVersion::new(v).numbers(), l.clone())));
    out
}

/// Puts builds into lines by version, in their order.
fn by_version(builds: Vec<Build>, label: impl Fn(&str) -> String) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for b in builds {
        match at.get(&b.version) {
            Some(&i) => out[i].builds.push(b),
            None => {
                at.insert(b.version.clone(), out.len());
                out.push(Line { label: label(&b.version), builds: vec![b], kept_only: false });
            }
        }
    }
    out
}

/// How a version the knowledge base has no row for is described: newer than its newest row (a
/// release that came out after it), or only missing from it (an older or skipped one).
fn unknown_version(what: &str, newest_known: Option<&str>) -> String {
    let version = what.rsplit(' ').next().unwrap_or(what);
    match newest_known {
        Some(n) if PyVersion::new(version).numbers() <= PyVersion::new(n).numbers() => {
            format!("{what} is not in gpu-doctor's knowledge base")
        }
        _ => format!("{what} is newer than gpu-doctor's knowledge base"),
    }
}

/// The knowledge base's variant for a torch version and CUDA, or the newest known variant of that
/// CUDA level (else of that major) for one it does not know, with the sentence saying so.
fn torch_arch(kb: &Kb, version: &str, cuda: CudaVersion) -> (Gpus, String) {
    if let Some(v) = kb.pytorch.variant(version, cuda) {
        return (Gpus::Arch { sass: v.arch.clone(), ptx: v.ptx_list() }, String::new());
    }
    let line = PyVersion::new(version).line().unwrap_or_else(|| version.to_owned());
    let what = if kb.pytorch.release(version).is_none() {
        let newest = kb.pytorch.release.iter().map(|r| r.version.as_str()).max_by_key(|v| PyVersion::new(v).numbers());
        unknown_version(&line, newest)
    } else {
        format!("{line} {} is not in gpu-doctor's knowledge base", index_tag(cuda))
    };
    let newest = |same: &dyn Fn(&TorchVariant) -> bool| {
        kb.pytorch.variant.iter().filter(|v| same(v)).max_by_key(|v| PyVersion::new(&v.torch).numbers())
    };
    let from =
        newest(&|v| v.cuda.major_minor() == cuda.major_minor()).or_else(|| newest(&|v| v.cuda.major == cuda.major));
    match from {
        Some(v) => (
            Gpus::Arch { sass: v.arch.clone(), ptx: v.ptx_list() },
            format!("{what}; its arch list is assumed from {} of {}", index_tag(v.cuda), v.torch),
        ),
        None => (Gpus::Unknown, format!("{what}; no CUDA {} build is known, so its arch list is unknown", cuda.major)),
    }
}

fn torch_files(kb: &Kb, wheels: &[WheelName]) -> Vec<Line> {
    let mut builds = Vec::new();
    // Each companion's versions by local label, newest first: looked up once per torch group.
    let companions: HashMap<&str, HashMap<Option<String>, Vec<String>>> = ["torchvision", "torchaudio"]
        .into_iter()
        .map(|name| {
            let mut by_local: HashMap<Option<String>, Vec<String>> = HashMap::new();
            for (v, l, _) in groups(wheels, name) {
                by_local.entry(l).or_default().push(v);
            }
            (name, by_local)
        })
        .collect();
    for (version, local, files) in groups(wheels, "torch") {
        let line = PyVersion::new(&version).line().unwrap_or_else(|| version.clone());
        let label = match &local {
            Some(l) => format!("{version}+{l}"),
            None => version.clone(),
        };
        let cuda = local.as_deref().and_then(families::cuda_tag);
        let (gpus, beyond_kb, cuda) = match (local.as_deref(), cuda) {
            (_, Some(c)) => {
                let (g, b) = torch_arch(kb, &version, c);
                (g, b, Some(c))
            }
            // A build without a CUDA label is a CPU or ROCm build, or PyPI's own: not offered.
            (Some(l), None) => (Gpus::NoCuda(format!("a {l} build, without CUDA")), String::new(), None),
            (None, None) => {
                (Gpus::NoCuda("no CUDA label (+cuXYZ): its build is not known".into()), String::new(), None)
            }
        };
        let pin = |name: &str| -> Option<String> {
            let want = companion(kb, &line, &version, name);
            let same = companions.get(name)?.get(&local)?;
            let v = match want {
                Some(w) => same.iter().find(|v| *v == w)?,
                None => same.first()?,
            };
            Some(format!("{name}=={v}{}", local.as_deref().map(|l| format!("+{l}")).unwrap_or_default()))
        };
        let mut requirements = vec![format!("torch=={label}")];
        let mut notes = Vec::new();
        for name in ["torchvision", "torchaudio"] {
            match pin(name) {
                Some(r) => requirements.push(r),
                None => notes.push(format!("no matching {name} wheel is in the wheelhouse, so none is pinned")),
            }
        }
        builds.push(Build {
            label,
            version,
            line,
            cuda,
            driver_min: None,
            wheels_cuda: None,
            gpus,
            wheels: Wheels::Files(files.into_iter().cloned().collect()),
            requirements,
            index_url: None,
            pypi_linux: None,
            ctk: false,
            beyond_kb,
            notes,
        });
    }
    by_version(builds, str::to_owned)
}

fn jax_files(kb: &Kb, wheels: &[WheelName]) -> Vec<Line> {
    let mut builds = Vec::new();
    // The wheels by (name, version): looked up once per jax version.
    let mut named: HashMap<(&str, &str), Vec<&WheelName>> = HashMap::new();
    for w in wheels {
        named.entry((w.name.as_str(), w.version.as_str())).or_default().push(w);
    }
    for (version, _, _) in groups(wheels, "jax") {
        let jaxlib = named.contains_key(&("jaxlib", version.as_str()));
        for major in [14_u32, 13, 12, 11] {
            let package = format!("jax-cuda{major}-plugin");
            let files: Vec<WheelName> = named
                .get(&(package.as_str(), version.as_str()))
                .map(|found| found.iter().map(|w| (*w).clone()).collect())
                .unwrap_or_default();
            if files.is_empty() {
                continue;
            }
            let extra = format!("cuda{major}");
            let row = kb.jax.plugin.iter().find(|p| p.package == package);
            let known = kb.jax.release.iter().any(|r| r.version == version);
            let mut beyond_kb = String::new();
            if !known || row.is_none() {
                let newest =
                    kb.jax.release.iter().map(|r| r.version.as_str()).max_by_key(|v| PyVersion::new(v).numbers());
                let what = if known {
                    format!("jax {version} is in gpu-doctor's knowledge base, {package} is not")
                } else {
                    unknown_version(&format!("jax {version}"), newest)
                };
                let from = row.map_or_else(
                    || format!("no {package} row (its GPUs are not known)"),
                    |_| format!("the {package} row"),
                );
                beyond_kb = format!("{what}; reasoned from its wheel tags and {from}");
            }
            let mut notes = vec![format!("jaxlib and {package} move with it (jax pins them to {version})")];
            if !jaxlib {
                notes.push(format!("no jaxlib {version} wheel is in the wheelhouse"));
            }
            builds.push(Build {
                label: format!("jax[{extra}] {version}"),
                version: version.clone(),
                line: PyVersion::new(&version).line().unwrap_or_default(),
                cuda: Some(row.map_or(CudaVersion::new(major, 0), |p| p.cuda_min)),
                driver_min: row.map(|p| p.linux_driver_min.clone()),
                wheels_cuda: None,
                gpus: row.map_or(Gpus::Unknown, |p| Gpus::MinCc(p.min_cc)),
                wheels: Wheels::Files(files),
                requirements: vec![format!("jax[{extra}]=={version}")],
                index_url: None,
                pypi_linux: None,
                ctk: false,
                beyond_kb,
                notes,
            });
        }
    }
    by_version(builds, |v| format!("jax {v}"))
}

fn tensorflow_files(kb: &Kb, wheels: &[WheelName]) -> Vec<Line> {
    let mut builds = Vec::new();
    for (version, _, files) in groups(wheels, "tensorflow") {
        let line = PyVersion::new(&version).line().unwrap_or_default();
        let row = kb.tensorflow.release.iter().find(|r| r.version == line);
        let newest = kb
            .tensorflow
            .release
            .iter()
            .filter(|r| r.latest.is_some())
            .max_by_key(|r| PyVersion::new(&r.version).numbers());
        let (row, beyond_kb) = match (row, newest) {
            (Some(r), _) => (Some(r), String::new()),
            (None, Some(n)) => (
                Some(n),
                format!(
                    "{}; its CUDA and arch list are assumed from {}",
                    unknown_version(&line, Some(&n.version)),
                    n.version
                ),
            ),
            (None, None) => (None, format!("{line} is newer than gpu-doctor's knowledge base")),
        };
        builds.push(Build {
            label: format!("tensorflow {version}"),
            version: version.clone(),
            line,
            cuda: row.map(|r| r.cuda),
            driver_min: None,
            wheels_cuda: None,
            gpus: row.map_or(Gpus::Unknown, |r| Gpus::Arch { sass: r.arch.clone(), ptx: r.ptx.into_iter().collect() }),
            wheels: Wheels::Files(files.into_iter().cloned().collect()),
            requirements: vec![format!("tensorflow[and-cuda]=={version}")],
            index_url: None,
            pypi_linux: None,
            ctk: false,
            beyond_kb,
            notes: vec!["the and-cuda extra needs its nvidia-* wheels in the wheelhouse too".into()],
        });
    }
    by_version(builds, str::to_owned)
}

fn cupy_files(kb: &Kb, wheels: &[WheelName]) -> Vec<Line> {
    let mut builds = Vec::new();
    let mut names: Vec<&str> = wheels.iter().map(|w| w.name.as_str()).filter(|n| n.starts_with("cupy-cuda")).collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let row = kb.cupy.package.iter().find(|p| p.name == name);
        // The CUDA major the wheel's name says (`cupy-cuda12x` → 12, `cupy-cuda102` → 10): the kb's one reader.
        let major = match families::cupy_build(name) {
            FrameworkBuild::Cuda { version: Some(v) } => v.split('.').next().and_then(|m| m.parse().ok()),
            _ => None,
        };
        let range = row
            .map(|p| (p.cuda_min, p.cuda_max))
            .or_else(|| major.map(|m: u32| (CudaVersion::new(m, 0), CudaVersion::new(m, 9))));
        for (version, _, files) in groups(wheels, name) {
            let beyond_kb = match row {
                Some(_) => String::new(),
                None => {
                    format!("{name} is newer than gpu-doctor's knowledge base; reasoned from its name and wheel tags")
                }
            };
            builds.push(Build {
                label: format!("{name} {version}"),
                version: version.clone(),
                line: PyVersion::new(&version).line().unwrap_or_default(),
                cuda: range.map(|(min, _)| min),
                driver_min: None,
                wheels_cuda: None,
                gpus: range.map_or(Gpus::Unknown, |(min, max)| Gpus::CudaRange { min, max }),
                wheels: Wheels::Files(files.into_iter().cloned().collect()),
                requirements: vec![format!("{name}=={version}")],
                index_url: None,
                pypi_linux: None,
                ctk: false,
                beyond_kb,
                notes: Vec::new(),
            });
        }
    }
    builds.sort_by_key(|b| std::cmp::Reverse((PyVersion::new(&b.version).numbers(), b.cuda)));
    by_version(builds, |v| format!("cupy {v}"))
}
