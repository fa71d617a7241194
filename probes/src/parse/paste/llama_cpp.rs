//! What llama.cpp (and ollama, which runs it) prints about the GPUs it starts on:
//! `ggml_cuda_init: found 1 CUDA devices:` (older builds: `ggml_init_cublas:`) and under it
//! `  Device 0: NVIDIA GeForce RTX 4070, compute capability 8.9, VMM: yes` (alone too, by its `VMM:`
//! field); and ollama's
//! `msg="inference compute" … library=cuda … compute=7.5 driver=12.1 name="NVIDIA GeForce RTX 2080 Ti"`,
//! whose `driver=` is the newest CUDA the driver supports.

use std::sync::OnceLock;

use regex::Regex;

use super::facts::Facts;
use super::gpus::GpuFact;
use super::pkg::Pkg;
use gpu_doctor_model::{ComputeCapability, CudaVersion};

const LLAMA_CPP: &str = "llama.cpp device list";
const OLLAMA: &str = "ollama inference compute";

/// `Device 0: NAME, compute capability 8.9` (whatever follows).
fn device_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    #[allow(clippy::unwrap_used)] // a literal pattern, exercised by every test
    RE.get_or_init(|| Regex::new(r"^Device (\d{1,3}): (.{1,200}?), compute capability (\d{1,2}\.\d{1,2})\b").unwrap())
}

/// `key=value` or `key="value"` on an ollama log line.
fn ollama_value<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let at = line.match_indices(key).find(|(i, _)| *i == 0 || line[..*i].ends_with(' '))?.0;
    let rest = line.get(at + key.len()..)?;
    match rest.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next(),
        None => rest.split_whitespace().next(),
    }
}

const OLLAMA_RUNNERS: &str = "ollama runner list";

/// The runners of ollama's `Dynamic LLM libraries` line: `runners=[cpu]`, `runners="[cpu cpu_avx
/// cuda_v12]"`, or the older `msg="Dynamic LLM libraries [cpu_avx2 cuda_v11 cpu]"`. ollama logs it
/// from the runner folders it has (ollama/ollama runners/common.go@0cf9c373, `Refresh`:
/// `slog.Info("Dynamic LLM libraries", "runners", runners)`), named `<library>[_<variant>]`:
/// `cpu`, `cpu_avx2`, `cuda_v12`, `rocm`, `metal`.
pub(super) fn ollama_runners(line: &str) -> Option<Vec<&str>> {
    let at = line.find("Dynamic LLM libraries")?;
    let rest = line.get(at..)?;
    let open = rest.find('[')?;
    let list = rest.get(open + 1..)?;
    let list = list.get(..list.find(']')?)?;
    let runners: Vec<&str> =
        list.split([' ', ',']).map(|r| r.trim_matches(['"', '\''])).filter(|r| !r.is_empty()).collect();
    let named = runners.iter().all(|r| r.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    (named && !runners.is_empty()).then_some(runners)
}

/// `(version 0.5.4-11-g023e4bc)` of ollama's `Listening on` line.
fn ollama_version(line: &str) -> Option<&str> {
    let rest = line.get(line.find("msg=\"Listening on ")?..)?;
    let v = rest.get(rest.find("(version ")? + "(version ".len()..)?;
    v.get(..v.find(')')?).filter(|v| v.starts_with(|c: char| c.is_ascii_digit()))
}

/// Reads llama.cpp's device lines and ollama's `inference compute` lines.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    let mut in_list = false;
    let mut version = None;
    for (i, line) in lines.iter().enumerate() {
        let t = after_journal_tag(line.trim());
        version = version.or_else(|| ollama_version(t));
        if facts.ollama_build.is_none()
            && let Some(runners) = ollama_runners(t)
        {
            let library = |r: &&str| r.split('_').next().unwrap_or(r).to_owned();
            let build = if runners.iter().all(|r| library(r) == "cpu") {
                Some(gpu_doctor_model::FrameworkBuild::Cpu)
            } else if runners.iter().any(|r| library(r) == "cuda") {
                Some(gpu_doctor_model::FrameworkBuild::Cuda { version: None })
            } else {
                None
            };
            if let Some(build) = build {
                facts.saw(i, OLLAMA_RUNNERS);
                facts.ollama_build = Some(build);
            }
        }
        if (t.starts_with("ggml_cuda_init: found") || t.starts_with("ggml_init_cublas: found"))
            && t.contains("CUDA devices")
        {
            in_list = true;
            continue;
        }
        // A device line also stands alone when it has llama.cpp's `VMM:` field.
        if (in_list || t.contains(", VMM: "))
            && let Some(c) = device_re().captures(t)
        {
            facts.saw(i, LLAMA_CPP);
            facts.gpu_facts.push(GpuFact {
                index: c.get(1).and_then(|m| m.as_str().parse().ok()),
                name: c.get(2).map(|m| m.as_str().to_owned()),
                bus_id: None,
                cc: c.get(3).and_then(|m| m.as_str().parse::<ComputeCapability>().ok()),
                source: LLAMA_CPP,
            });
            continue;
        }
        in_list = false;
        if t.contains("msg=\"inference compute\"") && ollama_value(t, "library=") == Some("cuda") {
            facts.saw(i, OLLAMA);
            facts.gpu_facts.push(GpuFact {
                index: None,
                name: ollama_value(t, "name=").map(str::to_owned),
                bus_id: None,
                cc: ollama_value(t, "compute=").and_then(|v| v.parse::<ComputeCapability>().ok()),
                source: OLLAMA,
            });
            let cuda = ollama_value(t, "driver=").and_then(|v| v.parse::<CudaVersion>().ok());
            facts.driver(None, cuda, OLLAMA);
        }
    }
    let in_words = lines.iter().enumerate().find_map(|(i, l)| ollama_version_in_words(l).map(|v| (i, v)));
    let version = version.or(in_words.map(|(_, v)| v));
    let sign = lines.iter().position(|l| ollama_sign(l)).or(in_words.map(|(i, _)| i));
    if facts.ollama_build.is_some() || sign.is_some() {
        if let Some(at) = sign {
            facts.saw(at, OLLAMA_SEEN);
        }
        let version = version.unwrap_or("(version not shown)").to_owned();
        facts.package(Pkg { name: "ollama".to_owned(), version, conda_build: None, source: OLLAMA_SEEN });
    }
}

/// A line without its systemd journal's head (`Jan  1 20:22:43 thinkstation-s30 ollama[911]: ` of `journalctl -u
/// ollama`, whose lines are ollama's own after it): the text after the first `]: ` that closes a
/// `name[digits]` tag, else the line.
fn after_journal_tag(line: &str) -> &str {
    let Some(close) = line.find("]: ") else { return line };
    let head = &line[..close];
    let pid = head.len() - head.bytes().rev().take_while(u8::is_ascii_digit).count();
    if pid < head.len() && head[..pid].ends_with('[') && pid > 1 { line[close + 3..].trim() } else { line }
}

/// The format name of ollama seen in the text (its runner list, its log, its source paths, its version).
const OLLAMA_SEEN: &str = "ollama's log or version";

/// Whether a line is ollama's own: its systemd journal's tag (`Jan  1 20:22:43 host ollama[911]: …`), a path
/// in its source tree (`/go/src/github.com/jmorganca/ollama/llm/…`, `github.com/ollama/ollama/…`, as Go prints
/// them in panics and ggml's errors), or its `Listening on` line: the judge's floor of ollama's builds needs only
/// to know that ollama ran.
fn ollama_sign(line: &str) -> bool {
    if line.len() > 4000 {
        return false;
    }
    let journal = line.match_indices("ollama[").any(|(at, w)| {
        let rest = &line[at + w.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && rest[digits..].starts_with("]:")
    });
    journal
        || line.contains("github.com/jmorganca/ollama/")
        || line.contains("github.com/ollama/ollama/")
        || ollama_version(line.trim()).is_some()
}

/// ollama's version said in words: `v0.1.19` or `0.5.11` within the three words after `ollama` (`I've updated
/// ollama to v0.1.19`, `Ollama 0.5.11`, `ollama version 0.3.6`).
fn ollama_version_in_words(line: &str) -> Option<&str> {
    if line.len() > 2000 {
        return None;
    }
    let at = line.to_ascii_lowercase().find("ollama")?;
    line[at + "ollama".len()..]
        .split_whitespace()
        .take(3)
        .map(|w| w.trim_end_matches([',', '.', ')', ';', ':', '!', '?']).trim_start_matches(['(', 'v']))
        .find(|w| {
            let parts: Vec<&str> = w.split('.').collect();
            parts.len() == 3
                && parts[0] == "0"
                && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ollama's signs and its version in words (ollama/ollama#1756's journal, #1834's Go path, #1877's sentence);
    /// a word `ollama` in a sentence is no sign, and a version of another program is not ollama's.
    #[test]
    fn ollama_seen_and_its_version_in_words() {
        let journal = "Jan  1 20:22:43 thinkstation-s30 ollama[911]:   Device 0: Tesla K80, compute capability 3.7";
        assert!(ollama_sign(journal));
        assert_eq!(after_journal_tag(journal), "Device 0: Tesla K80, compute capability 3.7");
        assert!(ollama_sign(
            "cuBLAS error 3 at /go/src/github.com/jmorganca/ollama/llm/llama.cpp/gguf/ggml-cuda.cu:5552"
        ));
        assert!(!ollama_sign("I found that Ollama doesn't use the GPU at all."));
        assert_eq!(after_journal_tag("[1]: not a journal"), "[1]: not a journal");
        assert_eq!(ollama_version_in_words("I've updated ollama to v0.1.19, but"), Some("0.1.19"));
        assert_eq!(ollama_version_in_words("Ollama version 0.3.6"), Some("0.3.6"));
        assert_eq!(ollama_version_in_words("ollama runs torch 2.1.0 here"), None);
        assert_eq!(ollama_version_in_words("ollama with CUDA 12.3"), None);
    }

    /// Every spelling of the runner list in public logs: slog's quoted and bare values, and the
    /// older form with the list in the message.
    #[test]
    fn ollama_runner_lists() {
        assert_eq!(
            ollama_runners(r#"msg="Dynamic LLM libraries" runners="[cpu cpu_avx cuda_v12]""#),
            Some(vec!["cpu", "cpu_avx", "cuda_v12"])
        );
        assert_eq!(ollama_runners(r#"msg="Dynamic LLM libraries" runners=[metal]"#), Some(vec!["metal"]));
        assert_eq!(
            ollama_runners(
                r#"source=payload_common.go:139 msg="Dynamic LLM libraries [rocm_v60000 cpu_avx2 cuda_v11 cpu cpu_avx]""#
            ),
            Some(vec!["rocm_v60000", "cpu_avx2", "cuda_v11", "cpu", "cpu_avx"])
        );
        for not in [
            r#"msg="Dynamic LLM libraries" libdirs=ollama,cuda_v12"#,
            "Dynamic LLM libraries [",
            "Dynamic LLM libraries []",
            "[cpu] Dynamic LLM libraries",
        ] {
            assert_eq!(ollama_runners(not), None, "{not}");
        }
        assert_eq!(
            ollama_version(r#"msg="Listening on 127.0.0.1:11434 (version 0.5.4-11-g023e4bc)""#),
            Some("0.5.4-11-g023e4bc")
        );
        assert_eq!(ollama_runners(&format!("Dynamic LLM libraries [{}", "cpu ".repeat(100_000))), None);
    }

    fn read_text(text: &str) -> Facts {
        Facts::read_by(read, text)
    }

    /// ggml-org/llama.cpp#9881 (tests/corpus/healthy/llama.cpp-9881-rtx4070-reference-run.txt).
    #[test]
    fn llama_cpp_device_lines_give_name_and_capability() {
        let f = read_text(
            "ggml_cuda_init: GGML_CUDA_FORCE_CUBLAS: no\nggml_cuda_init: found 1 CUDA devices:\n  \
             Device 0: NVIDIA GeForce RTX 4070, compute capability 8.9, VMM: yes\n\
             register_backend: registered backend CUDA (1 devices)\n",
        );
        assert_eq!(f.gpu_facts.len(), 1);
        let g = &f.gpu_facts[0];
        assert_eq!((g.index, g.name.as_deref()), (Some(0), Some("NVIDIA GeForce RTX 4070")));
        assert_eq!(g.cc, "8.9".parse().ok());
    }

    /// ollama/ollama#1834: the older `ggml_init_cublas` header, no `VMM`.
    #[test]
    fn older_cublas_header_is_read() {
        let f = read_text(
            "ggml_init_cublas: found 1 CUDA devices:\n  Device 0: NVIDIA GeForce GTX 765M, compute capability 3.0\n",
        );
        assert_eq!(f.gpu_facts[0].cc, "3.0".parse().ok());
        assert!(read_text("  Device 0: X, compute capability 3.0\n").gpu_facts.is_empty(), "no header, no claim");
        // ggml-org/llama.cpp#16834: the device line alone, with its `VMM:` field.
        let f = read_text("Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes\n");
        assert_eq!(f.gpu_facts[0].name.as_deref(), Some("NVIDIA GeForce RTX 4090"));
    }

    /// ollama/ollama#10569 (tests/corpus/healthy/ollama-10569-oldest-driver-531-works.txt).
    #[test]
    fn ollama_inference_compute_line() {
        let f = read_text(
            "time=2025-05-05T16:11:49.763-07:00 level=INFO source=types.go:130 msg=\"inference compute\" \
             id=GPU-d6de3398-9932-6902-11ec-fee8e424c8a2 library=cuda variant=v12 compute=7.5 driver=12.1 \
             name=\"NVIDIA GeForce RTX 2080 Ti\" total=\"11.0 GiB\" available=\"9.9 GiB\"",
        );
        assert_eq!(f.gpu_facts[0].name.as_deref(), Some("NVIDIA GeForce RTX 2080 Ti"));
        assert_eq!(f.gpu_facts[0].cc, "7.5".parse().ok());
        assert_eq!(f.driver_cuda.map(|(c, _)| c), Some(CudaVersion::new(12, 1)));
        assert!(read_text("msg=\"inference compute\" library=cpu compute=\"\"").gpu_facts.is_empty());
    }
}
