//! What each cell of the environments table says and its colour: pure functions of the report, so
//! the colouring is tested without a window. The judgement itself is the diagnosis's (`gpu_fit`).

use gpu_doctor_judge::diagnose::{GpuFit, GpuView, gpu_fit, torch_arch_list};
use gpu_doctor_kb::{Kb, PyVersion};
use gpu_doctor_model::{CudaVersion, CudnnVersion};
use gpu_doctor_model::{CudnnCopy, CudnnKind, Framework, FrameworkBuild, PythonEnv};

use crate::gui::theme::Tone;

/// One table cell: its text, colour and the sentence behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// Its colour.
    pub tone: Tone,
    /// The short text in the cell.
    pub text: String,
    /// What it means, on hover.
    pub hover: String,
}

impl Cell {
    fn new(tone: Tone, text: impl Into<String>, hover: impl Into<String>) -> Self {
        Self { tone, text: text.into(), hover: hover.into() }
    }
}

/// Whether `fw` in `env` runs on `gpu`, coloured: machine code → good; only PTX (compiled by the
/// driver at first use) → warn; not compiled for it, CPU-only or ROCm → bad; not known → muted.
pub fn gpu_cell(kb: &Kb, env: &PythonEnv, fw: &Framework, gpu: &GpuView) -> Cell {
    let Some(cc) = gpu.cc else {
        return Cell::new(Tone::Muted, "? capability unknown", "The GPU's compute capability is not known.");
    };
    match gpu_fit(kb, env, fw, cc) {
        GpuFit::Sass(c) => Cell::new(
            Tone::Good,
            format!("✔ {}", c.sm()),
            format!("Machine code for {} runs on compute capability {cc} (same major, equal or lower minor).", c.sm()),
        ),
        GpuFit::PtxOnly(p) => Cell::new(
            Tone::Warn,
            format!("⚠ PTX compute_{}{} only", p.major, p.minor),
            format!(
                "No machine code for {cc}: the driver compiles the compute_{}{} PTX at first use, which is slow and \
                 fails if the driver is older than the toolkit that built it.",
                p.major, p.minor
            ),
        ),
        GpuFit::NotInBuild => Cell::new(
            Tone::Bad,
            format!("✖ not built for {}", cc.sm()),
            format!(
                "Nothing in this build runs on compute capability {cc}: \"no kernel image is available for execution \
                 on the device\"."
            ),
        ),
        GpuFit::AboveMinimum(min) => Cell::new(
            Tone::Good,
            format!("✔ {cc} ≥ {min}"),
            format!("This package supports compute capability {min} and newer."),
        ),
        GpuFit::CpuOnly => {
            Cell::new(Tone::Bad, "✖ CPU-only build", "A CPU-only build cannot use the GPU; install a CUDA build.")
        }
        GpuFit::Rocm => {
            Cell::new(Tone::Bad, "✖ ROCm build", "A ROCm build is for AMD GPUs; it cannot use an NVIDIA GPU.")
        }
        GpuFit::Unknown => {
            let hint = if fw.name == "torch" {
                "The knowledge base has no architecture list for this build; the deep probe asks torch itself."
            } else {
                "Which architectures this build was compiled for is not known."
            };
            Cell::new(Tone::Muted, "? not known", hint)
        }
    }
}

/// The build column: `CUDA 12.1`, `CPU-only`, `ROCm 6.2`.
pub fn build_cell(fw: &Framework) -> Cell {
    match &fw.build {
        FrameworkBuild::Cuda { version: Some(v) } if !v.contains('.') => Cell::new(
            Tone::Info,
            format!("CUDA {v}.x"),
            format!("Built for CUDA {v} (the package name says only the major)."),
        ),
        FrameworkBuild::Cuda { version: Some(v) } => {
            Cell::new(Tone::Info, format!("CUDA {v}"), format!("Built with CUDA {v}."))
        }
        FrameworkBuild::Cuda { version: None } => {
            Cell::new(Tone::Info, "CUDA", "A CUDA build; its files do not say which CUDA.")
        }
        FrameworkBuild::Cpu => Cell::new(Tone::Warn, "CPU-only", "Built without CUDA."),
        FrameworkBuild::Rocm { version } => Cell::new(
            Tone::Warn,
            version.as_ref().map_or_else(|| "ROCm".to_owned(), |v| format!("ROCm {v}")),
            "Built for AMD GPUs.",
        ),
        FrameworkBuild::Unknown => Cell::new(Tone::Muted, "?", "The files do not say what it was built against."),
    }
}

/// The compiled architectures, shortened (`sm_50…sm_90 (7) + compute_90`); the full list and where
/// it came from on hover. Only torch's list is known.
pub fn arch_cell(kb: &Kb, env: &PythonEnv, fw: &Framework) -> Cell {
    if fw.name != "torch" {
        return Cell::new(Tone::Muted, "—", "Only PyTorch's architecture list is known.");
    }
    let Some(list) = torch_arch_list(kb, env, fw) else {
        let why = match fw.build {
            FrameworkBuild::Cuda { .. } => "The knowledge base has no list for this build; the deep probe asks torch.",
            _ => "Not a CUDA build.",
        };
        return Cell::new(Tone::Muted, "—", why);
    };
    let sass: Vec<&String> = list.names.iter().filter(|n| n.starts_with("sm_")).collect();
    let ptx: Vec<&String> = list.names.iter().filter(|n| n.starts_with("compute_")).collect();
    let mut text = match sass.as_slice() {
        [] => String::new(),
        [one] => (*one).clone(),
        [first, .., last] => format!("{first}…{last} ({})", sass.len()),
    };
    for p in ptx {
        if !text.is_empty() {
            text.push_str(" + ");
        }
        text.push_str(p);
    }
    let from = if list.from_deep {
        "torch.cuda.get_arch_list() of the installed build"
    } else {
        "the knowledge base's list for this wheel"
    };
    Cell::new(Tone::Info, text, format!("{}\nFrom {from}.", list.names.join(", ")))
}

/// The cuDNN column: what the files say, else what torch loaded (deep tier), else the cuDNN wheel
/// installed in the environment (the copy `check` lists for it), else what the wheel pins.
pub fn cudnn_cell(kb: &Kb, env: &PythonEnv, fw: &Framework, copies: &[CudnnCopy]) -> Cell {
    if let Some(v) = &fw.cudnn_build {
        return Cell::new(Tone::Info, v.clone(), "The cuDNN version it was built against, from its files.");
    }
    if fw.name == "torch" {
        let deep = env.deep_torch();
        if let Some(v) = deep.and_then(|t| t.cudnn_version).and_then(CudnnVersion::from_encoded) {
            return Cell::new(Tone::Info, format!("{v} loaded"), "torch.backends.cudnn.version() in the deep probe.");
        }
    }
    let wheel = copies.iter().find(|c| c.kind == CudnnKind::PipWheel && c.env.as_deref() == Some(env.name.as_str()));
    if let Some(c) = wheel
        && matches!(fw.build, FrameworkBuild::Cuda { .. })
    {
        let version = c.version.map(|v| v.to_string()).or_else(|| c.major.map(|m| format!("{m}.x")));
        if let Some(v) = version {
            return Cell::new(
                Tone::Info,
                v,
                format!("The cuDNN pip wheel installed in this environment: {}", c.location),
            );
        }
    }
    if fw.name == "torch" {
        let cuda = fw.build.cuda_version().and_then(|v| v.parse::<CudaVersion>().ok());
        if let Some(pin) = cuda.and_then(|c| kb.pytorch.variant(&fw.version, c)).and_then(|v| v.cudnn.clone()) {
            let line = PyVersion::new(&fw.version).line().unwrap_or_default();
            return Cell::new(
                Tone::Muted,
                pin,
                format!("The cuDNN torch {line} wheels of this CUDA pin (knowledge base)."),
            );
        }
    }
    Cell::new(Tone::Muted, "—", "Not known.")
}

/// Whether `text` names the environment `name` (not merely a longer name that starts with it, as
/// `/usr/bin/python3.11` starts with `/usr/bin/python3`).
pub fn mentions(text: &str, name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    text.match_indices(name).any(|(i, _)| {
        let next = text[i + name.len()..].chars().next();
        next.is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | '\\')))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use gpu_doctor_model::Probed;
    use gpu_doctor_model::{DeepFacts, DeepTorch, EnvKind};

    fn env(frameworks: Vec<Framework>, arch_list: Option<&[&str]>) -> PythonEnv {
        PythonEnv {
            name: "venv:/p/.venv".into(),
            kind: EnvKind::Venv,
            prefix: "/p/.venv".into(),
            interpreter: Some("/p/.venv/bin/python".into()),
            python_version: Some("3.12".into()),
            site_packages: Vec::new(),
            include_system_site_packages: false,
            found_by: Vec::new(),
            frameworks,
            cuda_wheels: Vec::new(),
            companions: Vec::new(),
            deep: arch_list.map(|l| {
                let torch = DeepTorch {
                    arch_list: Some(l.iter().map(|s| s.to_string()).collect()),
                    cudnn_version: Some(90100),
                    ..DeepTorch::default()
                };
                Probed::found(DeepFacts { torch: Some(torch), ..DeepFacts::default() }, "probe.py")
            }),
        }
    }

    fn fw(name: &str, version: &str, build: FrameworkBuild) -> Framework {
        Framework {
            name: name.into(),
            version: version.into(),
            build,
            cudnn_build: None,
            source: "test".into(),
            site_packages: String::new(),
        }
    }

    fn cuda(v: &str) -> FrameworkBuild {
        FrameworkBuild::Cuda { version: Some(v.into()) }
    }

    fn gpu(cc: Option<&str>) -> GpuView {
        GpuView { index: 0, name: "GPU".into(), cc: cc.map(|c| c.parse().unwrap()), cc_by_name: false }
    }

    fn tone(e: &PythonEnv, cc: &str) -> Tone {
        gpu_cell(Kb::get().unwrap(), e, &e.frameworks[0], &gpu(Some(cc))).tone
    }

    #[test]
    fn arch_lists_with_and_without_ptx_against_ada_hopper_and_blackwell() {
        let torch = || vec![fw("torch", "2.7.0+cu128", cuda("12.8"))];
        let no_ptx = env(torch(), Some(&["sm_80", "sm_86", "sm_90"]));
        assert_eq!(
            [tone(&no_ptx, "8.9"), tone(&no_ptx, "9.0"), tone(&no_ptx, "12.0")],
            [Tone::Good, Tone::Good, Tone::Bad]
        );
        let ptx = env(torch(), Some(&["sm_80", "sm_90", "compute_90"]));
        assert_eq!([tone(&ptx, "8.9"), tone(&ptx, "9.0"), tone(&ptx, "12.0")], [Tone::Good, Tone::Good, Tone::Warn]);
        let cell = gpu_cell(Kb::get().unwrap(), &ptx, &ptx.frameworks[0], &gpu(Some("12.0")));
        assert!(cell.text.contains("compute_90") && cell.hover.contains("first use"), "{cell:?}");
        let arch = arch_cell(Kb::get().unwrap(), &ptx, &ptx.frameworks[0]);
        assert_eq!(arch.text, "sm_80…sm_90 (2) + compute_90");
        assert!(arch.hover.contains("installed build"));
        assert_eq!(cudnn_cell(Kb::get().unwrap(), &ptx, &ptx.frameworks[0], &[]).text, "9.1.0 loaded");
    }

    #[test]
    fn the_knowledge_base_list_stands_in_without_the_deep_probe() {
        let e = env(vec![fw("torch", "2.3.0+cu121", cuda("12.1"))], None);
        assert_eq!([tone(&e, "8.9"), tone(&e, "9.0"), tone(&e, "12.0")], [Tone::Good, Tone::Good, Tone::Bad]);
        let arch = arch_cell(Kb::get().unwrap(), &e, &e.frameworks[0]);
        assert!(arch.text.starts_with("sm_50…sm_90") && arch.hover.contains("knowledge base"), "{arch:?}");
        assert_eq!(cudnn_cell(Kb::get().unwrap(), &e, &e.frameworks[0], &[]).text, "8.9.2.26");
    }

    /// The pip cuDNN wheel of an environment, as the cuDNN probe (and so `check`) reports it.
    fn pip_cudnn(env: &str, version: &str) -> CudnnCopy {
        CudnnCopy {
            location: "/p/.venv/lib/python3.12/site-packages/nvidia/cudnn".into(),
            kind: CudnnKind::PipWheel,
            version: Some(version.parse().unwrap()),
            major: Some(9),
            version_source: None,
            env: Some(env.into()),
            cuda_major: Some(13),
        }
    }

    #[test]
    fn the_cudnn_wheel_check_reports_shows_in_its_environment() {
        let kb = Kb::get().unwrap();
        let e = env(vec![fw("torch", "2.9.0+cu130", cuda("13.0"))], None);
        let copies = [pip_cudnn("venv:/elsewhere", "8.9.7"), pip_cudnn("venv:/p/.venv", "9.26.0")];
        let cell = cudnn_cell(kb, &e, &e.frameworks[0], &copies);
        assert_eq!(cell.text, "9.26.0", "{cell:?}");
        assert!(cell.hover.contains("pip"), "{cell:?}");
        // Without it, the knowledge base's pin (or nothing) as before.
        let old = env(vec![fw("torch", "2.3.0+cu121", cuda("12.1"))], None);
        assert_eq!(cudnn_cell(kb, &old, &old.frameworks[0], &copies[..1]).text, "8.9.2.26");
    }

    #[test]
    fn cpu_only_rocm_and_unknown_builds() {
        let cpu = env(vec![fw("torch", "2.5.1+cpu", FrameworkBuild::Cpu)], None);
        assert_eq!(tone(&cpu, "8.9"), Tone::Bad);
        assert_eq!(build_cell(&cpu.frameworks[0]).text, "CPU-only");
        let rocm = env(vec![fw("torch", "2.5.1+rocm6.2", FrameworkBuild::Rocm { version: Some("6.2".into()) })], None);
        assert_eq!(tone(&rocm, "9.0"), Tone::Bad);
        let cupy = env(vec![fw("cupy-cuda12x", "13.3.0", cuda("12"))], None);
        assert_eq!(tone(&cupy, "8.9"), Tone::Muted);
        assert_eq!(build_cell(&cupy.frameworks[0]).text, "CUDA 12.x");
        let torch = env(vec![fw("torch", "2.7.0+cu128", cuda("12.8"))], Some(&["sm_90"]));
        assert_eq!(gpu_cell(Kb::get().unwrap(), &torch, &torch.frameworks[0], &gpu(None)).tone, Tone::Muted);
    }

    #[test]
    fn a_name_is_mentioned_only_as_a_whole() {
        assert!(mentions("torch 2.5 (CUDA 12.4 build) in system:/usr/bin/python3", "system:/usr/bin/python3"));
        assert!(mentions("in system:/usr/bin/python3, which", "system:/usr/bin/python3"));
        assert!(!mentions("in system:/usr/bin/python3.11", "system:/usr/bin/python3"));
        assert!(!mentions("anything", ""));
    }
}
