//! What the deep probe (`probe.py`) of one environment said, as short toned lines for its card.

use gpu_doctor_model::{CudaVersion, CudnnVersion, Probed};
use gpu_doctor_model::{DeepCupy, DeepFacts, DeepJax, DeepOnnxruntime, DeepTensorflow, DeepTorch};

use crate::gui::theme::Tone;

/// One line of the deep probe's answer.
pub type Line = (Tone, String);

/// The deep probe's answer: one line per framework it imported, then one per error.
pub fn deep_lines(p: &Probed<DeepFacts>) -> Vec<Line> {
    let facts = match p {
        Probed::Found { value, .. } => value,
        Probed::Failed { error } => return vec![(Tone::Bad, format!("The deep probe failed: {error}"))],
        other => return vec![(Tone::Muted, other.why_not().unwrap_or("no answer").to_owned())],
    };
    let mut out = Vec::new();
    if let Some(e) = &facts.python_error {
        out.push((Tone::Bad, format!("Python: {e}")));
    }
    if let Some(t) = &facts.torch {
        torch_lines(t, &mut out);
    }
    if let Some(t) = &facts.tensorflow {
        tensorflow_lines(t, &mut out);
    }
    if let Some(j) = &facts.jax {
        jax_lines(j, &mut out);
    }
    if let Some(c) = &facts.cupy {
        cupy_lines(c, &mut out);
    }
    if let Some(o) = &facts.onnxruntime {
        onnxruntime_lines(o, &mut out);
    }
    if out.is_empty() {
        let python = facts.python.as_ref().and_then(|p| p.version.as_deref()).unwrap_or("?");
        out.push((Tone::Muted, format!("Python {python} ran the probe; no GPU framework imported.")));
    }
    out
}

fn yes_no(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "not reported",
    }
}

fn available_tone(v: Option<bool>) -> Tone {
    match v {
        Some(true) => Tone::Good,
        Some(false) => Tone::Bad,
        None => Tone::Muted,
    }
}

fn errors(out: &mut Vec<Line>, what: &str, errors: [(&str, &Option<String>); 3]) {
    for (context, e) in errors {
        if let Some(e) = e {
            let sep = if context.is_empty() { String::new() } else { format!(" {context}") };
            out.push((Tone::Bad, format!("{what}{sep}: {e}")));
        }
    }
}

fn torch_lines(t: &DeepTorch, out: &mut Vec<Line>) {
    let version = t.version.as_deref().unwrap_or("?");
    if t.error.is_none() {
        let mut parts = vec![format!("torch {version}: CUDA available: {}", yes_no(t.cuda_available))];
        for d in t.devices.iter().flatten() {
            let name = d.name.as_deref().unwrap_or("unnamed");
            let cap = d.capability.as_deref().map_or_else(String::new, |c| format!(", capability {c}"));
            parts.push(format!("device {} {name}{cap}", d.index));
        }
        if let Some(list) = t.arch_list.as_ref().filter(|l| !l.is_empty()) {
            parts.push(format!("compiled for {}", list.join(" ")));
        }
        match t.cudnn_version.and_then(CudnnVersion::from_encoded) {
            Some(v) => parts.push(format!("cuDNN {v} loaded")),
            None if t.cudnn_error.is_none() && t.cuda_available == Some(true) => parts.push("no cuDNN".to_owned()),
            None => {}
        }
        out.push((available_tone(t.cuda_available), parts.join(" · ")));
    }
    errors(out, "torch", [("import failed", &t.error), ("CUDA", &t.cuda_error), ("cuDNN", &t.cudnn_error)]);
}

fn tensorflow_lines(t: &DeepTensorflow, out: &mut Vec<Line>) {
    if t.error.is_none() {
        let gpus = t.gpus.as_ref().map_or(0, Vec::len);
        let mut parts = vec![format!("tensorflow {}: {gpus} GPU(s) visible", t.version.as_deref().unwrap_or("?"))];
        if t.is_cuda_build == Some(true) {
            let cuda = t.cuda_version.as_deref().unwrap_or("?");
            let cudnn = t.cudnn_version.as_deref().unwrap_or("?");
            parts.push(format!("CUDA {cuda} build, cuDNN {cudnn}"));
        } else if t.is_cuda_build == Some(false) {
            parts.push("not a CUDA build".to_owned());
        }
        out.push((if gpus > 0 { Tone::Good } else { Tone::Bad }, parts.join(" · ")));
    }
    errors(
        out,
        "tensorflow",
        [("import failed", &t.error), ("build info", &t.build_info_error), ("GPUs", &t.gpu_error)],
    );
}

fn jax_lines(j: &DeepJax, out: &mut Vec<Line>) {
    if j.error.is_none() {
        let backend = j.backend.as_deref().unwrap_or("?");
        let kinds: Vec<&str> = j.devices.iter().flatten().filter_map(|d| d.kind.as_deref()).collect();
        let mut line = format!("jax {}: backend {backend}", j.version.as_deref().unwrap_or("?"));
        if !kinds.is_empty() {
            line.push_str(&format!(" · {}", kinds.join(", ")));
        }
        out.push((if backend == "gpu" { Tone::Good } else { Tone::Bad }, line));
    }
    errors(out, "jax", [("import failed", &j.error), ("backend", &j.backend_error), ("", &None)]);
}

fn cupy_lines(c: &DeepCupy, out: &mut Vec<Line>) {
    if c.error.is_none() {
        let runtime = c.runtime_version.and_then(CudaVersion::from_api_int);
        let version = c.version.as_deref().unwrap_or("?");
        // A pasted `cupy.show_config()` may list no devices (cupy/cupy#2578, of CuPy 7, prints none; a paste may be
        // cut): their count is then not known.
        let mut line = match c.device_count {
            Some(devices) => format!("cupy {version}: {devices} device(s)"),
            None => format!("cupy {version}"),
        };
        if let Some(r) = runtime {
            line.push_str(&format!(" · CUDA runtime {r}"));
        }
        let tone = match c.device_count {
            Some(0) => Tone::Bad,
            Some(_) => Tone::Good,
            None => Tone::Info,
        };
        out.push((tone, line));
    }
    errors(out, "cupy", [("import failed", &c.error), ("CUDA", &c.cuda_error), ("", &None)]);
}

fn onnxruntime_lines(o: &DeepOnnxruntime, out: &mut Vec<Line>) {
    if o.error.is_none() {
        let providers = o.providers.clone().unwrap_or_default();
        let cuda = providers.iter().any(|p| p == "CUDAExecutionProvider");
        let line = format!("onnxruntime {}: {}", o.version.as_deref().unwrap_or("?"), providers.join(", "));
        out.push((if cuda { Tone::Good } else { Tone::Warn }, line));
    }
    errors(out, "onnxruntime", [("import failed", &o.error), ("providers", &o.providers_error), ("", &None)]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_doctor_model::DeepTorchDevice;

    #[test]
    fn torch_answers_read_as_one_line_plus_errors() {
        let torch = DeepTorch {
            version: Some("2.3.0+cu121".into()),
            cuda_available: Some(true),
            arch_list: Some(vec!["sm_86".into(), "sm_90".into()]),
            devices: Some(vec![DeepTorchDevice {
                index: 0,
                name: Some("RTX 4090".into()),
                capability: Some("8.9".into()),
                total_memory_bytes: None,
            }]),
            cudnn_version: Some(8902),
            ..DeepTorch::default()
        };
        let lines = deep_lines(&Probed::found(DeepFacts { torch: Some(torch), ..DeepFacts::default() }, "probe.py"));
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].0, Tone::Good);
        assert_eq!(
            lines[0].1,
            "torch 2.3.0+cu121: CUDA available: yes · device 0 RTX 4090, capability 8.9 · compiled for sm_86 sm_90 · \
             cuDNN 8.9.2 loaded"
        );
        let broken = DeepTorch {
            version: Some("2.9.0".into()),
            cuda_available: Some(false),
            cuda_error: Some("The NVIDIA driver on your system is too old".into()),
            ..DeepTorch::default()
        };
        let lines = deep_lines(&Probed::found(DeepFacts { torch: Some(broken), ..DeepFacts::default() }, "probe.py"));
        assert_eq!(lines.iter().map(|l| l.0).collect::<Vec<_>>(), [Tone::Bad, Tone::Bad]);
        assert!(lines[1].1.starts_with("torch CUDA: The NVIDIA driver"));
    }

    #[test]
    fn failures_and_empty_answers_say_so() {
        let failed = deep_lines(&Probed::Failed { error: "not recorded".into() });
        assert_eq!(failed, [(Tone::Bad, "The deep probe failed: not recorded".to_owned())]);
        let empty = deep_lines(&Probed::found(DeepFacts::default(), "probe.py"));
        assert!(empty[0].1.contains("no GPU framework"));
        assert_eq!(deep_lines(&Probed::absent("no interpreter in this environment"))[0].0, Tone::Muted);
    }
}
