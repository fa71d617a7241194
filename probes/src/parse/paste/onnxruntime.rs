//! ONNX Runtime's execution providers as Python prints them: `onnxruntime.get_available_providers()`
//! answers a list of names, `['AzureExecutionProvider', 'CPUExecutionProvider']` for the CPU-only
//! `onnxruntime` package (its 1.20.1 wheel from PyPI, run), with `CUDAExecutionProvider` for
//! `onnxruntime-gpu`. A session's own list (`session.get_providers()`, insightface's `Applied
//! providers: [...]`) is what that session asked and got, not the build's, so a list is the build's
//! only where the line (or the one before it) names `get_available_providers`, or where it holds
//! `AzureExecutionProvider`, which every build since the Azure provider lists but a session adds
//! only when asked. The list fills the same fact the deep probe's `probe.py` fills.

use super::facts::Facts;
use gpu_doctor_model::DeepOnnxruntime;

const FORMAT: &str = "onnxruntime providers";

/// The longest line looked at: a provider list is short; a longer line is something else.
const MAX_LINE: usize = 4096;

/// The execution provider names of a Python list on `line`: every quoted item of the first `[…]`
/// that ends in `ExecutionProvider`; `None` when there is no such list or an item is anything else.
pub(super) fn provider_list(line: &str) -> Option<Vec<String>> {
    if line.len() > MAX_LINE {
        return None;
    }
    let start = line.find('[')?;
    let end = start + line.get(start..)?.find(']')?;
    let inner = line.get(start + 1..end)?;
    let items: Vec<String> = inner
        .split(',')
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .map(|s| {
            let quoted = (s.starts_with('\'') && s.ends_with('\'')) || (s.starts_with('"') && s.ends_with('"'));
            let name = s.trim_matches(['\'', '"']);
            let ok = quoted
                && s.len() >= 2
                && name.ends_with("ExecutionProvider")
                && name.chars().all(|c| c.is_ascii_alphanumeric());
            ok.then(|| name.to_owned())
        })
        .collect::<Option<_>>()?;
    (!items.is_empty()).then_some(items)
}

const WORDS_FORMAT: &str = "onnxruntime providers said in words";

/// Words saying ONNX Runtime offers only its CPU provider (`only `CPUExecutionProvider` is available`,
/// pythongosssss/ComfyUI-WD14-Tagger#23; `it default to cpu exection provider and it doesn't see gpu
/// provider`, yakhyo/uniface#77): a sentence of at most 400 characters naming the CPU provider (its name or
/// `cpu execution provider`, however spelt after `exec`) with a word of only, default or not seeing another.
fn cpu_provider_only_in_words(line: &str) -> bool {
    if line.len() > 400 {
        return false;
    }
    let lower = line.to_ascii_lowercase();
    // `cpu execution provider`, `cpu exection provider`: the provider named, not CPU execution alone.
    let cpu = lower.contains("cpuexecutionprovider")
        || lower
            .match_indices("cpu exec")
            .any(|(at, _)| lower[at..].split_whitespace().nth(2).is_some_and(|w| w.starts_with("provider")));
    let only = ["only", "default", "fall back", "falls back", "fallback", "doesn't see", "does not see", "not see"]
        .iter()
        .any(|w| lower.contains(w));
    cpu && only && !lower.contains("cudaexecutionprovider") && !lower.contains("tensorrt")
}

/// Reads the first provider list that is the build's into the deep facts; without one, words saying only the
/// CPU provider is there (where no line of ONNX Runtime says its CUDA provider failed to load, which is
/// `onnxruntime-gpu` without its CUDA libraries, not the CPU package).
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    read_lists(lines, facts);
    let provider_failed = |l: &String| l.contains("CUDAExecutionProvider") || l.contains("onnxruntime_providers_cuda");
    if facts.deep.onnxruntime.as_ref().is_some_and(|o| o.providers.is_some()) || lines.iter().any(provider_failed) {
        return;
    }
    if let Some(i) = lines.iter().position(|l| cpu_provider_only_in_words(l)) {
        facts.saw(i, WORDS_FORMAT);
        let ort = facts.deep.onnxruntime.get_or_insert_with(DeepOnnxruntime::default);
        ort.providers = Some(vec!["CPUExecutionProvider".to_owned()]);
        facts.deep_from(WORDS_FORMAT);
    }
}

fn read_lists(lines: &[String], facts: &mut Facts) {
    for (i, line) in lines.iter().enumerate() {
        let Some(list) = provider_list(line) else { continue };
        let asked = |l: &str| l.contains("get_available_providers");
        let named = asked(line) || i.checked_sub(1).and_then(|p| lines.get(p)).is_some_and(|l| asked(l));
        if !named && !list.iter().any(|p| p == "AzureExecutionProvider") {
            continue;
        }
        facts.saw(i, FORMAT);
        let ort = facts.deep.onnxruntime.get_or_insert_with(DeepOnnxruntime::default);
        if ort.providers.is_none() {
            ort.providers = Some(list);
            facts.deep_from(FORMAT);
        }
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words of pythongosssss/ComfyUI-WD14-Tagger#23 and yakhyo/uniface#77, verbatim, say only the CPU provider; a line
    /// of ONNX Runtime's CUDA provider failing (onnxruntime-gpu without its libraries) or a sentence naming the CUDA
    /// provider as there does not.
    #[test]
    fn only_the_cpu_provider_said_in_words() {
        for text in [
            "If you install `onnxruntime-gpu` first and then `onnxruntime`, you will notice that only `CPUExecutionProvider` is available.",
            "it default to cpu exection provider and it doesn't see gpu provider",
        ] {
            assert_eq!(providers(text).as_deref(), Some(&["CPUExecutionProvider".to_owned()][..]), "{text}");
        }
        let failed = "it falls back to CPUExecutionProvider\n[E:onnxruntime:Default, provider_bridge_ort.cc:1548 \
                      TryGetProviderInfo_CUDA] Failed to load library libonnxruntime_providers_cuda.so\n";
        assert_eq!(providers(failed), None);
        assert_eq!(providers("both CUDAExecutionProvider and CPUExecutionProvider are the default"), None);
        assert_eq!(providers("I use the CPUExecutionProvider for tests"), None);
        // jax-ml/jax#28929: CPU execution, no provider.
        assert_eq!(
            providers("causing JAX to fall back to CPU execution despite the presence of CUDA-enabled jaxlib"),
            None
        );
        assert_eq!(providers(&"only CPUExecutionProvider ".repeat(100)), None, "no sentence");
    }

    fn providers(text: &str) -> Option<Vec<String>> {
        Facts::read_by(read, text).deep.onnxruntime.and_then(|o| o.providers)
    }

    #[test]
    fn the_cpu_packages_list_is_read() {
        // onnxruntime 1.20.1 from PyPI, run here: `python -c "import onnxruntime as o; print(o.get_available_providers())"`.
        let text = ">>> import onnxruntime as o; print(o.get_available_providers())\n['AzureExecutionProvider', 'CPUExecutionProvider']\n";
        assert_eq!(providers(text).unwrap(), ["AzureExecutionProvider", "CPUExecutionProvider"]);
        // Printed on one line with a label, double quotes (roop and similar apps print it so).
        let text = "Available ONNXRT providers: [\"CUDAExecutionProvider\", \"CPUExecutionProvider\"] from get_available_providers()";
        assert_eq!(providers(text).unwrap(), ["CUDAExecutionProvider", "CPUExecutionProvider"]);
    }

    #[test]
    fn a_sessions_list_is_not_the_builds() {
        // insightface prints the session's providers: a GPU build whose CUDA provider failed says the same.
        assert_eq!(
            providers("Applied providers: ['CPUExecutionProvider'], with options: {'CPUExecutionProvider': {}}"),
            None
        );
        assert_eq!(providers("print(sess.get_providers())\n['CPUExecutionProvider']\n"), None);
    }

    #[test]
    fn other_lists_and_malformed_text_are_not_providers() {
        assert_eq!(provider_list("['sm_50', 'sm_60']"), None);
        assert_eq!(provider_list("[AzureExecutionProvider, CPUExecutionProvider]"), None);
        assert_eq!(provider_list("['AzureExecutionProvider', 'CPUExecutionProvider'"), None);
        assert_eq!(provider_list("[]"), None);
        assert_eq!(provider_list("['"), None);
        assert_eq!(provider_list("['CPU Execution Provider']"), None);
        let huge = format!("['AzureExecutionProvider', {}]", "'CPUExecutionProvider', ".repeat(100_000));
        assert_eq!(provider_list(&huge), None);
        assert_eq!(providers(&"['AzureExecutionProvider'\n".repeat(10_000)), None);
    }
}
