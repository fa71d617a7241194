//! Sections for the software: CUDA toolkits, cuDNN, Python environments with their frameworks,
//! programs that are no Python package (ollama), and the CUDA-related environment variables.

use gpu_doctor_model::{CudnnVersion, Probed, Snapshot};
use gpu_doctor_model::{DeepFacts, Framework, FrameworkBuild, PythonEnv, Toolkits};

use super::{Section, Tone, label, missing};

/// Toolkit, cuDNN, Python and variable sections, in reading order.
pub(super) fn sections(s: &Snapshot) -> Vec<Section> {
    let mut out = Vec::new();
    out.push(match s.toolkits.value() {
        Some(t) => toolkits_section(t),
        None => missing(
            "Toolkits",
            &s.toolkits,
            "no CUDA toolkit (not needed for pip or conda PyTorch, TensorFlow, JAX)",
            Tone::Plain,
        ),
    });
    out.push(match s.cudnn.value() {
        Some(copies) => {
            let mut versions: Vec<String> = copies
                .iter()
                .filter_map(|c| c.version.map(|v| v.to_string()).or(c.major.map(|m| format!("{m}.x"))))
                .collect();
            versions.dedup();
            let headline =
                format!("{} cop{}: {}", copies.len(), if copies.len() == 1 { "y" } else { "ies" }, versions.join(", "));
            let mut sec = Section::new("cuDNN", headline, Tone::Plain);
            for c in copies {
                let version = c
                    .version
                    .map(|v: CudnnVersion| v.to_string())
                    .or_else(|| c.major.map(|m| format!("{m}.x")))
                    .unwrap_or_else(|| "version ?".to_owned());
                let env = c.env.as_deref().map(|e| format!(" in {e}")).unwrap_or_default();
                sec.details.push(format!("{version} {}{env}: {}", label(&c.kind), c.location));
            }
            sec
        }
        None => missing("cuDNN", &s.cudnn, "none found", Tone::Plain),
    });
    match s.python_envs.value() {
        Some(envs) => {
            // A program read into a pasted environment's frameworks (ollama) is no Python package:
            // it gets its own section, and an environment that held only it is no environment.
            let programs: Vec<&Framework> =
                envs.iter().flat_map(|e| e.frameworks.iter().filter(|f| is_program(f))).collect();
            let envs: Vec<PythonEnv> = envs.iter().filter_map(without_programs).collect();
            if !envs.is_empty() || programs.is_empty() {
                out.push(python_section(&envs));
            }
            if !programs.is_empty() {
                out.push(programs_section(&programs));
            }
        }
        None => out.push(missing("Python", &s.python_envs, "no Python found", Tone::Plain)),
    }
    let headline = match s.env.vars.len() {
        0 => "no CUDA-related variables set".to_owned(),
        n => format!("{n} CUDA-related set"),
    };
    let mut env = Section::new("Variables", headline, Tone::Plain);
    env.details = s.env.vars.iter().map(|(k, v)| format!("{k}={v}")).collect();
    if !s.env.path_cuda_entries.is_empty() {
        env.details.push(format!("PATH entries with CUDA: {}", s.env.path_cuda_entries.join(", ")));
    }
    if !s.env.ld_library_path.is_empty() {
        env.details.push(format!("LD_LIBRARY_PATH: {}", s.env.ld_library_path.join(", ")));
    }
    out.push(env);
    out
}

fn toolkits_section(t: &Toolkits) -> Section {
    let roots = t.picked_roots();
    let tone = if roots.len() > 1 { Tone::Warn } else { Tone::Good };
    let versions: Vec<String> =
        t.installs.iter().map(|i| i.version.map_or_else(|| "?".to_owned(), |v| v.to_string())).collect();
    let mut headline = format!("CUDA {}", versions.join(", "));
    if roots.len() > 1 {
        headline.push_str(", and PATH / CUDA_HOME / LD_LIBRARY_PATH / /usr/local/cuda do not agree");
    }
    let mut sec = Section::new("Toolkits", headline, tone);
    for i in &t.installs {
        sec.details.push(format!(
            "CUDA {} ({}) at {}{}",
            i.version.map_or_else(|| "?".to_owned(), |v| v.to_string()),
            label(&i.kind),
            i.root,
            i.python_env.as_deref().map(|e| format!(" in {e}")).unwrap_or_default()
        ));
    }
    let p = &t.picks;
    for (name, pick) in [
        ("PATH (nvcc)", &p.path),
        ("CUDA_HOME", &p.cuda_home),
        ("CUDA_PATH", &p.cuda_path),
        ("LD_LIBRARY_PATH (libcudart)", &p.ld_library_path),
        ("/usr/local/cuda", &p.usr_local_cuda),
    ] {
        if let Some(pick) = pick {
            sec.details.push(format!(
                "{name} → {}",
                pick.install_root
                    .as_deref()
                    .map_or_else(|| format!("{} (no toolkit there)", pick.named), str::to_owned)
            ));
        }
    }
    sec
}

fn build_text(b: &FrameworkBuild) -> String {
    match b {
        FrameworkBuild::Cuda { version } => format!("CUDA {}", version.as_deref().unwrap_or("?")),
        FrameworkBuild::Cpu => "CPU only".to_owned(),
        FrameworkBuild::Rocm { version } => format!("ROCm {}", version.as_deref().unwrap_or("?")),
        FrameworkBuild::Unknown => "build unknown".to_owned(),
    }
}

/// Programs the readers put among an environment's frameworks that no Python environment holds.
const PROGRAMS: &[&str] = &["ollama"];

fn is_program(f: &Framework) -> bool {
    PROGRAMS.contains(&f.name.as_str())
}

/// `e` without its programs; `None` where the programs were all it held (a pasted ollama log's).
fn without_programs(e: &PythonEnv) -> Option<PythonEnv> {
    if !e.frameworks.iter().any(is_program) {
        return Some(e.clone());
    }
    let mut e = e.clone();
    e.frameworks.retain(|f| !is_program(f));
    let empty = e.frameworks.is_empty()
        && e.cuda_wheels.is_empty()
        && e.companions.is_empty()
        && e.deep.is_none()
        && e.python_version.is_none();
    (!empty).then_some(e)
}

fn programs_section(programs: &[&Framework]) -> Section {
    let names: Vec<&str> = programs.iter().map(|f| f.name.as_str()).collect();
    let mut sec = Section::new("Programs", names.join(", "), Tone::Plain);
    sec.details = programs.iter().map(|f| format!("{} {} ({})", f.name, f.version, build_text(&f.build))).collect();
    sec
}

fn python_section(envs: &[PythonEnv]) -> Section {
    // Worth a block: GPU frameworks on disk, an import check that found one, or one that failed.
    let interesting = |e: &PythonEnv| {
        !e.frameworks.is_empty()
            || match &e.deep {
                Some(Probed::Found { value, .. }) => !deep_lines(value).is_empty(),
                Some(Probed::Failed { .. }) => true,
                _ => false,
            }
    };
    let with: Vec<&PythonEnv> = envs.iter().filter(|e| interesting(e)).collect();
    let without: Vec<&str> = envs.iter().filter(|e| !interesting(e)).map(|e| e.name.as_str()).collect();
    let headline = format!(
        "{} environment(s), {} with GPU frameworks",
        envs.len(),
        with.iter().filter(|e| !e.frameworks.is_empty()).count()
    );
    let mut sec = Section::new("Python", headline, Tone::Plain);
    for e in with {
        sec.details.push(format!("{} (Python {})", e.name, e.python_version.as_deref().unwrap_or("?")));
        for f in &e.frameworks {
            let cudnn = f.cudnn_build.as_deref().map(|c| format!(", cuDNN {c}")).unwrap_or_default();
            sec.details.push(format!("  {} {} ({}{cudnn})", f.name, f.version, build_text(&f.build)));
        }
        if !e.cuda_wheels.is_empty() {
            let wheels: Vec<String> = e.cuda_wheels.iter().map(|p| format!("{} {}", p.name, p.version)).collect();
            sec.details.push(format!("  NVIDIA wheels: {}", wheels.join(", ")));
        }
        if !e.companions.is_empty() {
            let companions: Vec<String> = e.companions.iter().map(|p| format!("{} {}", p.name, p.version)).collect();
            sec.details.push(format!("  companions: {}", companions.join(", ")));
        }
        match &e.deep {
            Some(Probed::Found { value, .. }) => sec.details.extend(deep_lines(value)),
            Some(other) => sec.details.push(format!("  import check: {}", other.why_not().unwrap_or("?"))),
            None => {}
        }
    }
    if !without.is_empty() {
        sec.details.push(format!("no GPU frameworks in: {}", without.join(", ")));
    }
    sec
}

/// A device count, `?` where the text did not give one (a pasted `is_available()` without `device_count()`).
fn count(n: Option<u32>) -> String {
    n.map_or_else(|| "?".to_owned(), |n| n.to_string())
}

fn deep_lines(d: &DeepFacts) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(t) = &d.torch {
        match (&t.error, t.cuda_available) {
            (Some(e), _) => out.push(format!("  import torch failed: {e}")),
            (None, Some(ok)) => out.push(format!(
                "  import torch: cuda.is_available() = {ok}, {} device(s), archs {}, cuDNN {}{}",
                count(t.device_count),
                t.arch_list.as_ref().map_or_else(|| "?".to_owned(), |a| a.join(" ")),
                t.cudnn_version.map_or_else(
                    || "none".to_owned(),
                    |v| CudnnVersion::from_encoded(v).map_or_else(|| v.to_string(), |c| c.to_string())
                ),
                t.cuda_error.as_deref().map(|e| format!("; CUDA error: {e}")).unwrap_or_default()
            )),
            (None, None) => {}
        }
    }
    if let Some(tf) = &d.tensorflow {
        match &tf.error {
            Some(e) => out.push(format!("  import tensorflow failed: {e}")),
            None => out.push(format!(
                "  import tensorflow: {} GPU(s) visible",
                tf.gpus.as_ref().map_or_else(|| "?".to_owned(), |g| g.len().to_string())
            )),
        }
    }
    if let Some(j) = &d.jax {
        match &j.error {
            Some(e) => out.push(format!("  import jax failed: {e}")),
            None => out.push(format!("  import jax: backend {}", j.backend.as_deref().unwrap_or("?"))),
        }
    }
    if let Some(c) = &d.cupy {
        match &c.error {
            Some(e) => out.push(format!("  import cupy failed: {e}")),
            None => {
                // What CuPy answered: its runtime, the driver's CUDA level and its devices, each where known.
                let level = |v: Option<i32>| v.and_then(gpu_doctor_model::CudaVersion::from_api_int);
                let said: Vec<String> = [
                    level(c.runtime_version).map(|r| format!("CUDA runtime {r}")),
                    level(c.driver_version).map(|d| format!("the driver supports CUDA {d}")),
                    c.device_count.map(|n| format!("{n} device(s)")),
                ]
                .into_iter()
                .flatten()
                .collect();
                out.push(if said.is_empty() {
                    "  import cupy: worked".to_owned()
                } else {
                    format!("  import cupy: {}", said.join(" \u{b7} "))
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use gpu_doctor_model::{DeepFacts, DeepTorch};

    /// A pasted `torch.cuda.is_available()` without `device_count()` shows the count unknown, not 0.
    #[test]
    fn an_unknown_device_count_is_shown_unknown() {
        let torch = |device_count| DeepFacts {
            torch: Some(DeepTorch { cuda_available: Some(true), device_count, ..Default::default() }),
            ..Default::default()
        };
        assert!(
            super::deep_lines(&torch(None))[0].contains("= true, ? device(s)"),
            "{:?}",
            super::deep_lines(&torch(None))
        );
        assert!(super::deep_lines(&torch(Some(2)))[0].contains("= true, 2 device(s)"));
    }

    /// ollama read from a pasted log is a program, not a Python environment's framework: its own section, and
    /// no Python section for an environment that held only it; beside a pasted torch, the torch stays under Python.
    #[test]
    fn ollama_is_a_program_not_a_python_environment() {
        let kb = gpu_doctor_kb::Kb::get().unwrap();
        let labels = |text: &str| {
            let snap = gpu_doctor_probes::parse::paste::read_pasted(text, kb).unwrap();
            super::sections(&snap).into_iter().map(|s| (s.label, s.headline, s.details)).collect::<Vec<_>>()
        };
        let log = "ollama[911]: time=2024-01-28T10:00:00 level=INFO source=routes.go:1034 msg=\"Listening on 127.0.0.1:11434 (version 0.1.22)\"\n";
        let only = labels(log);
        assert!(only.iter().any(|(l, h, _)| *l == "Programs" && h == "ollama"), "{only:?}");
        assert!(!only.iter().any(|(l, _, _)| *l == "Python"), "{only:?}");
        let both = labels(&format!("{log}torch 2.3.1+cu121\n"));
        let python = both.iter().find(|(l, _, _)| *l == "Python").expect("torch's environment");
        assert!(
            python.2.iter().any(|d| d.contains("torch 2.3.1")) && !python.2.iter().any(|d| d.contains("ollama")),
            "{both:?}"
        );
        assert!(both.iter().any(|(l, _, _)| *l == "Programs"), "{both:?}");
    }

    /// CuPy's answers, each where known (a pasted `cupy.show_config()` may list no devices).
    #[test]
    fn cupy_shows_what_it_answered() {
        let cupy = |runtime_version, driver_version, device_count| DeepFacts {
            cupy: Some(gpu_doctor_model::DeepCupy {
                runtime_version,
                driver_version,
                device_count,
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(
            super::deep_lines(&cupy(Some(11030), Some(11020), Some(1))),
            ["  import cupy: CUDA runtime 11.3 \u{b7} the driver supports CUDA 11.2 \u{b7} 1 device(s)"]
        );
        assert_eq!(super::deep_lines(&cupy(Some(9020), None, None)), ["  import cupy: CUDA runtime 9.2"]);
        assert_eq!(super::deep_lines(&cupy(None, None, None)), ["  import cupy: worked"]);
    }
}
