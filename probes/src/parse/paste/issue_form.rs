//! Labelled answers about a setup, in either shape people give them: GitHub issue forms, as
//! TensorFlow's (and many projects') bug template fills them in (a `### Label` line, a blank line,
//! then the answer), and `Label: value` lines, as templates and people write them (`- PyTorch
//! Version (e.g., 1.0): 1.4.0`, `- GPU: NVIDIA GeForce GTX 1050 (compute capability 6.1)`, `Driver
//! Version: 460.89`, `**OS**: Ubuntu 22.04`). The label says what the answer is by its words, not by
//! one template's spelling: a framework's name (its version), a driver (its version), a GPU (its
//! name and a capability written beside it), the OS, Python. A CUDA or cuDNN version a person types
//! is not read: it may be the toolkit, the driver's level or the framework's build.

use super::facts::Facts;
use super::packages;
use gpu_doctor_model::{ComputeCapability, DriverVersion, Gpu, OsFamily};

/// The answer under a `### Label` line: the first non-empty line after it, unless that is the next
/// label or a code fence.
fn answer(lines: &[String], label_at: usize) -> Option<&str> {
    let line = lines.iter().skip(label_at + 1).take(3).map(|l| l.trim()).find(|l| !l.is_empty())?;
    (!line.starts_with("###") && !line.starts_with("```")).then_some(line)
}

/// The last `X.Y` or `X.Y.Z` in an answer (`v2.12.0-rc1-12-g0db597d0d75 2.12.0` → `2.12.0`,
/// `tf 2.16` and `tf2.12.0` → `2.16` and `2.12.0`); `None` when it holds none.
fn version_in(text: &str) -> Option<String> {
    text.rsplit(|c: char| c.is_whitespace() || c == ',' || c == '/')
        .map(|w| w.trim_start_matches(|c: char| c.is_ascii_alphabetic()).trim_end_matches(['.', ')']))
        .find(|w| {
            let parts: Vec<&str> = w.split('.').collect();
            (2..=3).contains(&parts.len())
                && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(str::to_owned)
}

/// The OS family an answer names (`Windows 11`, `win10`, `Ubuntu 22.04`); `None` for WSL (which is
/// Linux under Windows, and says so elsewhere) and for anything unclear.
fn os_in(text: &str) -> Option<OsFamily> {
    let t = text.to_ascii_lowercase();
    if t.contains("wsl") {
        return None;
    }
    if t.starts_with("win") || t.contains("windows") {
        return Some(OsFamily::Windows);
    }
    ["linux", "ubuntu", "debian", "centos", "fedora", "rhel", "rocky", "arch"]
        .iter()
        .any(|d| t.contains(d))
        .then_some(OsFamily::Linux)
}

const FORM: &str = super::pkg::TYPED[0];
const LINES: &str = super::pkg::TYPED[1];

/// Reads the answers of an issue form and `Label: value` lines.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    for (i, line) in lines.iter().enumerate() {
        if let Some(label) = line.trim().strip_prefix("### ") {
            let label = label.trim().to_ascii_lowercase();
            if label.contains("accelerator") {
                // Ticked boxes are a list of answers: the three lines after the label, up to the next one.
                let boxes: Vec<&str> = lines
                    .iter()
                    .skip(i + 1)
                    .take(4)
                    .map(|l| l.trim())
                    .take_while(|l| !l.starts_with("###"))
                    .filter(|l| !l.is_empty())
                    .collect();
                answered(&label, &boxes.join("\n"), i, FORM, facts);
            } else if let Some(value) = answer(lines, i) {
                answered(&label, value, i, FORM, facts);
            }
        } else if let Some((label, value)) = label_value(line) {
            answered(&label, &value, i, LINES, facts);
        } else {
            for (label, value) in sentence_answers(line) {
                answered(&label, &value, i, LINES, facts);
            }
        }
    }
}

/// The answers a sentence gives in the form `my <thing> version is <value>` or `my system is
/// <value>`, as people report what a label would have asked (`My tensorflow version is 2.12.0.`,
/// `My system is Windows 11.`, `the driver version is 470.82`): each as (label, value) for
/// [`answered`]. The label is the one to three words after `my`, `our` or `the` (or opening the
/// sentence) and before `is`; only a label ending in `version`, or naming the system (`system`, `os`,
/// `operating system`, `platform`), is taken: other sentences of that shape say something else
/// (`my problem is …`). The value runs to the end of its sentence.
fn sentence_answers(line: &str) -> Vec<(String, String)> {
    static IS: super::Needle = super::Needle::new(" is ");
    let mut out = Vec::new();
    if line.len() > 2000 || !IS.in_line(line) {
        return out;
    }
    let lower = line.to_ascii_lowercase();
    for (at, _) in lower.match_indices(" is ").take(8) {
        let before = &lower[..at];
        let start = before.rfind(['.', ',', ';', '!', '?', '(', ':', '"']).map_or(0, |s| s + 1);
        let words: Vec<&str> = before[start..].split_whitespace().collect();
        let label: Vec<&str> = match words.iter().rposition(|w| matches!(*w, "my" | "our" | "the")) {
            Some(p) => words[p + 1..].to_vec(),
            None => words,
        };
        if !(1..=3).contains(&label.len())
            || !label.iter().all(|w| w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        {
            continue;
        }
        let label = label.join(" ");
        let os = matches!(label.as_str(), "system" | "os" | "operating system" | "platform");
        if !(os || label.ends_with("version")) {
            continue;
        }
        let rest = &line[at + " is ".len()..];
        // To the sentence's end: a full stop before a blank or the line's end (not a version's dot).
        let end = rest
            .match_indices(['.', ';', ',', '!', '?'])
            .find(|(i, _)| rest[i + 1..].chars().next().is_none_or(char::is_whitespace));
        let value = end.map_or(rest, |(i, _)| &rest[..i]).trim_end_matches(['!', '?', '.', ',', ';']);
        let value = value.trim().trim_matches(['`', '"', '\'', '*']);
        if !value.is_empty() && value.len() <= 120 {
            out.push((if os { "os".to_owned() } else { label }, value.to_owned()));
        }
    }
    out
}

/// A `Label: value` line's label (lowercase, without list marks, emphasis and a parenthetical
/// such as `(e.g., 1.0)`) and value; `None` for a line that is not one: a label of more than five
/// words or with other punctuation, or an empty value. Long lines are prose, not labels.
fn label_value(line: &str) -> Option<(String, String)> {
    if line.len() > 300 {
        return None;
    }
    let line = line.trim().trim_start_matches(['-', '*', '+', '>', '|', ' ', '\t']);
    // The full-width colon (U+FF1A) is how forms in Chinese and Japanese write it (`driver\u{ff1a}430.64`).
    let (label, value) = match line.split_once(':') {
        Some((label, value)) if !label.contains('\u{ff1a}') => (label, value),
        _ => line.split_once('\u{ff1a}')?,
    };
    // What the label keeps below, checked before anything is copied: most lines with a colon are
    // log lines whose head has other characters (`[`, `=`, `,`).
    let kept = |b: u8| b.is_ascii_alphanumeric() || b" \t-./*`_".contains(&b);
    if !label.contains('(') && !label.bytes().all(kept) {
        return None;
    }
    // A colon inside inline code is no label's (`I use `gpu-operator:v23.9.0` to install …`): the label would
    // open a code span it does not close.
    if label.matches('`').count() % 2 == 1 {
        return None;
    }
    // Markdown's emphasis (`**Label**`, `__Label__`) is not part of the label; an underscore inside
    // a word is a package's (`flash_attn`, which PyPI names alike with a hyphen).
    let label = label.replace(['*', '`'], "");
    let label = label.trim().trim_matches('_').replace('_', "-");
    let label = match label.split_once('(') {
        Some((before, after)) if after.trim_end().ends_with(')') => before.to_owned(),
        _ => label,
    };
    let label = label.trim().to_ascii_lowercase();
    let words = label.split_whitespace().count();
    if !(1..=5).contains(&words) || !label.chars().all(|c| c.is_ascii_alphanumeric() || " -./".contains(c)) {
        return None;
    }
    // Markdown's bold and code marks go; a lone `*` between words stays (`gtx1070 * 2`, a count).
    let value = value.replace("**", "").replace('`', "");
    let value = value.trim().trim_matches('*').trim().trim_end_matches('|').trim().to_owned();
    (!value.is_empty()).then_some((label, value))
}

/// What an answer labelled `label` says, into the facts (what another reader found first stays).
fn answered(label: &str, value: &str, at: usize, format: &'static str, facts: &mut Facts) {
    let words: Vec<&str> = label.split([' ', '/', '-']).filter(|w| !w.is_empty()).collect();
    let has = |w: &str| words.contains(&w);
    if words.iter().any(|w| w.bytes().all(|b| b.is_ascii_digit())) {
        // `GPU 0: …`, `Link 1: …`: an enumeration a program printed (nvidia-smi -L, nvlink -s), not
        // an answer.
        return;
    }
    if words.len() > 1 && label.contains('/') {
        // `CUDA/cuDNN version`, `PyTorch / CUDA`: two things in one answer.
        return;
    }
    let listed = |name: &str| facts.packages.iter().any(|p| p.name == name);
    let version = |name: &str| installed_version(value).or_else(|| version_in(value)).filter(|_| !listed(name));
    if has("ollama") {
        // ollama's bug form asks `### Ollama version` (ollama/ollama:.github/ISSUE_TEMPLATE/10_bug_report.yml@v0.5.11).
        if let Some(version) = version_in(value).filter(|_| !listed("ollama")) {
            facts.saw(at, format);
            facts.package(super::pkg::Pkg { name: "ollama".to_owned(), version, conda_build: None, source: format });
        }
    } else if has("tensorflow") || (has("tf") && has("version")) {
        if let Some(version) = version("tensorflow") {
            facts.saw(at, format);
            packages::add(facts, "tensorflow", &version, None, format);
        }
    } else if (has("pytorch") || has("torch")) && !has("cuda") && !has("vision") && !has("audio") {
        if let Some(version) = version("torch") {
            facts.saw(at, format);
            packages::add(facts, "torch", &version, None, format);
        }
    } else if has("jax") || has("jaxlib") {
        let name = if has("jaxlib") { "jaxlib" } else { "jax" };
        if let Some(version) = version(name) {
            facts.saw(at, format);
            packages::add(facts, name, &version, None, format);
        }
    } else if has("driver") {
        if let Some(v) = value.split_whitespace().find_map(driver_version).filter(|_| facts.driver_version.is_none()) {
            facts.saw(at, format);
            facts.driver(Some(v), None, format);
        } else if has("cuda")
            && let Some(c) = value
                .split_whitespace()
                .next()
                .and_then(|w| w.parse::<gpu_doctor_model::CudaVersion>().ok())
                .filter(|c| (2..=20).contains(&c.major) && facts.driver_cuda.is_none())
        {
            // `Cuda driver version: 11.2`: programs that print what cudaDriverGetVersion returned (a
            // miner's start-up log, deviceQuery's `CUDA Driver Version`) give the driver's CUDA level.
            facts.saw(at, format);
            facts.driver(None, Some(c), format);
        }
    } else if (has("gpu") || has("gpus") || label == "graphics card" || label == "video card")
        && words
            .iter()
            .all(|w| !["count", "memory", "usage", "util", "utilization", "driver"].contains(w) || has("model"))
    {
        if facts.listed_gpus.is_empty() {
            let gpus = gpus_in(value);
            if !gpus.is_empty() {
                facts.saw(at, format);
                facts.listed_gpus.extend(gpus.into_iter().map(|gpu| (gpu, format)));
            }
        }
    } else if label.contains("accelerator") {
        if accelerator_is_gpu(value) && facts.stated_cuda_wanted.is_none() {
            facts.saw(at, format);
            facts.stated_cuda_wanted =
                Some(format!("{label} {}", value.replace('\n', " ")).chars().take(300).collect());
        }
    } else if label.starts_with("os") || label == "operating system" {
        if let Some(os) = os_in(value).filter(|_| facts.os.is_none()) {
            facts.saw(at, format);
            facts.os.get_or_insert(os);
        }
        if super::os_release::is_linux_name(value) {
            super::os_release::keep(facts, value, format);
        }
    } else if (label == "python version" || label == "python")
        && let Some(v) = version_in(value).filter(|_| facts.python_version.is_none())
    {
        facts.saw(at, format);
        facts.python_version.get_or_insert(v);
    } else if let Some(name) = TORCH_EXTENSIONS.iter().find(|n| label.replace(['_', '.', ' '], "-") == **n)
        && let Some(version) = extension_version(value).filter(|_| !listed(name))
    {
        // `flash-attn: 2.5.7`, `xformers: 0.0.28.post1`: a compiled torch extension's version, which says
        // which torch it was built for.
        facts.saw(at, format);
        packages::add(facts, name, &version, None, format);
    }
}

/// Whether an answer to an accelerator question names a GPU: JAX's bug template asked `Which accelerator(s) are
/// you using?` with the boxes CPU, GPU and TPU from August 2022 to February 2024
/// (jax-ml/jax:.github/ISSUE_TEMPLATE/bug-report.yml@945adfdd980dae2b61d9f17cae07f31ae085b0cc), which a filled form
/// shows as `GPU` or as ticked boxes (`- [X] GPU`); an unticked box is no answer.
fn accelerator_is_gpu(value: &str) -> bool {
    value.split(['\n', ',', ';']).any(|part| {
        let part = part.trim().trim_start_matches(['-', '*']).trim_start();
        let (ticked, rest) = match part.strip_prefix('[') {
            Some(box_) => (box_.starts_with(['x', 'X']), box_.get(2..).unwrap_or("")),
            None => (true, part),
        };
        let lower = rest.trim().to_ascii_lowercase();
        ticked && ["gpu", "cuda", "nvidia"].iter().any(|w| lower.contains(w))
    })
}

/// The compiled torch extensions among the companions (`probe::python::companions`) read from a label
/// of their own: each is built for one torch release.
const TORCH_EXTENSIONS: [&str; 5] = ["torchvision", "torchaudio", "xformers", "flash-attn", "vllm"];

/// An extension's installed version: [`installed_version`], or a post or pre release of one
/// (`0.0.28.post1`, `2.7.4.post1`, `0.6.0rc1`).
fn extension_version(value: &str) -> Option<String> {
    installed_version(value).or_else(|| {
        let word = value.split([' ', ',', '(', ';']).find(|w| !w.is_empty())?;
        let word = word.strip_prefix('v').unwrap_or(word).trim_end_matches(['.', ')']);
        let ok = word.bytes().all(|b| b.is_ascii_alphanumeric() || b"._+-".contains(&b));
        (ok && word.as_bytes().first().is_some_and(u8::is_ascii_digit)
            && gpu_doctor_kb::PyVersion::new(word).line().is_some())
        .then(|| word.to_owned())
    })
}

/// The first word of an answer that is an installed version (`2.8.0+cu128`, `v1.4.0`, `1.10.2`, a
/// nightly's `2.7.0.dev20250310+cu124`, `2.1.0rc1`), not a requirement (`>=2.0`, `^2.0`) or prose.
fn installed_version(value: &str) -> Option<String> {
    let word = value.split([' ', ',', '(', ';']).find(|w| !w.is_empty())?;
    let word = word.strip_prefix('v').unwrap_or(word).trim_end_matches(['.', ')']);
    let numeric: &str = word.split(['+', '-']).next().unwrap_or(word);
    let mut parts: Vec<&str> = numeric.split('.').collect();
    // PEP 440's development release (`.devN`), then a pre-release glued to the last number (`0rc1`).
    if parts.len() > 2 && parts.last().is_some_and(|p| is_tagged_number(p, "dev", true)) {
        parts.pop();
    }
    let last_ok = |p: &str| ["rc", "a", "b"].iter().any(|t| is_tagged_number(p, t, false));
    let digits = |p: &&str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    let (body, last) = parts.split_at(parts.len().saturating_sub(1));
    ((2..=4).contains(&parts.len()) && body.iter().all(digits) && last.iter().all(|p| digits(p) || last_ok(p)))
        .then(|| word.to_owned())
}

/// `dev20250310` (`bare`: the tag then digits) or `0rc1` (digits, the tag, digits).
fn is_tagged_number(part: &str, tag: &str, bare: bool) -> bool {
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if bare {
        return part.strip_prefix(tag).is_some_and(all_digits);
    }
    part.split_once(tag).is_some_and(|(n, rest)| all_digits(n) && all_digits(rest))
}

/// A driver version in a word: `460.89`, `550.163.01` (three digits, then one or two parts).
fn driver_version(word: &str) -> Option<DriverVersion> {
    let word = word.trim_matches(|c: char| !c.is_ascii_digit());
    let major = word.split('.').next()?;
    (major.len() == 3 && word.contains('.')).then(|| word.parse().ok())?
}

/// The NVIDIA GPUs an answer names: one ([`gpu_in`]), or several joined by `and`, `+` or `&` (`a GTX
/// 1660 Super which is connected to my monitor, and an RTX 3090`, LostRuins/koboldcpp#1023) when
/// every part names one; a part that names none (`RTX 3090 and 64 GB of RAM`) makes it one answer.
fn gpus_in(value: &str) -> Vec<Gpu> {
    let (count, value) = answer_count(value);
    let gpus = gpus_named(value);
    match &gpus[..] {
        // `gtx1070 * 2`, `4x RTX 3090`: that many of the one model.
        [one] if count > 1 => (0..count).map(|index| Gpu { index, ..one.clone() }).collect(),
        _ => gpus,
    }
}

/// The most GPUs an answer's count is taken for: more is a cluster, not one machine.
const MAX_ANSWER_COUNT: u32 = 16;

/// The count an answer writes around its one model (`4x RTX 3090`, `2 * GTX 1080`, `gtx1070 * 2`, `RTX 3090 x 2`,
/// `A100 ×8`), with the answer left for the name; 1 where it writes none.
fn answer_count(value: &str) -> (u32, &str) {
    let value = value.trim();
    let ops = ['x', 'X', '*', '×'];
    let number = |s: &str| s.trim().parse::<u32>().ok().filter(|n| (2..=MAX_ANSWER_COUNT).contains(n));
    // Before the name: digits, then an operator (`4x`, `4 x`, `4*`).
    let digits = value.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0
        && let Some(n) = number(&value[..digits])
        && let Some(rest) = value[digits..].trim_start().strip_prefix(ops)
        && rest.starts_with(' ')
    {
        return (n, rest.trim());
    }
    // After it: a space, an operator, digits (`gtx1070 * 2`, `RTX 3090 x2`).
    let end = value.len() - value.bytes().rev().take_while(u8::is_ascii_digit).count();
    if end < value.len()
        && let Some(n) = number(&value[end..])
        && let Some(rest) = value[..end].trim_end().strip_suffix(ops)
        && rest.ends_with(' ')
    {
        return (n, rest.trim());
    }
    (1, value)
}

/// The GPUs an answer names, one or several joined by words ([`gpus_in`] without a count).
fn gpus_named(value: &str) -> Vec<Gpu> {
    let lower = value.to_ascii_lowercase();
    let mut cuts = vec![0];
    for sep in [" and ", " + ", " & "] {
        cuts.extend(lower.match_indices(sep).map(|(at, _)| at));
    }
    cuts.sort_unstable();
    let parts: Vec<&str> = cuts
        .iter()
        .enumerate()
        .map(|(i, &at)| {
            let end = cuts.get(i + 1).copied().unwrap_or(value.len());
            let part = value.get(at..end).unwrap_or("");
            let part = [" and ", " + ", " & "]
                .iter()
                .find_map(|sep| part.get(sep.len()..).filter(|_| part.to_ascii_lowercase().starts_with(sep)))
                .unwrap_or(part);
            part.trim_matches([',', ' '])
        })
        .collect();
    if parts.len() > 1 && parts.len() <= 16 {
        let each: Vec<Gpu> =
            parts.iter().filter_map(|p| gpu_in(p)).zip(0u32..).map(|(gpu, index)| Gpu { index, ..gpu }).collect();
        if each.len() == parts.len() {
            return each;
        }
    }
    gpu_in(value).into_iter().collect()
}

/// The NVIDIA GPU an answer names (`NVIDIA GeForce GTX 1050 (compute capability 6.1)`, `GeForce GTX
/// 1080 Ti, 11GB`, `1x RTX 3090`): the name before a parenthesis or comma, and the capability when the
/// answer writes it (`compute capability 6.1`, `sm_61`). `None` when it names no NVIDIA GPU.
fn gpu_in(value: &str) -> Option<Gpu> {
    let lower = value.to_ascii_lowercase();
    let nvidia = ["nvidia", "geforce", "rtx", "gtx", "tesla", "quadro", "titan"].iter().any(|w| lower.contains(w));
    if !nvidia {
        return None;
    }
    let name = value.split(['(', ',', ';']).next()?.trim();
    // `a GTX 1660 Super`, `an RTX 3090`: an article before the name in a sentence.
    let name = ["a ", "an ", "the ", "one "]
        .iter()
        .find_map(|article| {
            name.get(article.len()..)
                .filter(|_| name.get(..article.len()).is_some_and(|w| w.eq_ignore_ascii_case(article)))
        })
        .unwrap_or(name)
        .trim();
    // `GTX 1660 Super which is connected to my monitor`: the name ends where the sentence goes on.
    let name = [" which ", " that ", " for ", " with ", " in ", " on ", " connected "]
        .iter()
        .filter_map(|w| name.to_ascii_lowercase().find(w))
        .min()
        .map_or(name, |at| name[..at].trim());
    // `4x RTX 3090`, `4* NVIDIA GeForce RTX 4090 48G`: the count before the name.
    let name = name
        .split_once(' ')
        .filter(|(n, _)| {
            n.ends_with(['x', 'X', '*']) && n[..n.len() - 1].bytes().all(|b| b.is_ascii_digit()) && n.len() > 1
        })
        .map_or(name, |(_, rest)| rest.trim());
    let memory = memory_in(value);
    // The memory written after the name (`RTX 4090 48G`) is not part of it.
    let name = match name.rsplit_once(' ') {
        Some((rest, last)) if memory.is_some() && memory_word(last).is_some() => rest.trim(),
        _ => name,
    };
    // A vendor or brand alone (`Nvidia`, ollama's form answering its GPU question with the vendor; `NVIDIA
    // GeForce`) names no model: a model has a number, or is a TITAN.
    let model = name.bytes().any(|b| b.is_ascii_digit()) || name.to_ascii_lowercase().contains("titan");
    if name.is_empty() || name.len() > 60 || !model {
        return None;
    }
    let cc = lower
        .split_once("compute capability")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        // `sm_86`, `sm_120` (the digits up to the first other character: `sm_120` is 12.0, not 1.2).
        .or_else(|| {
            lower.split_once("sm_").map(|(_, rest)| {
                rest.get(..rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len())).unwrap_or("")
            })
        })
        .and_then(|w| {
            let w = w.trim_matches(|c: char| !c.is_ascii_digit() && c != '.');
            if w.contains('.') { w.parse::<ComputeCapability>().ok() } else { super::gpus::cc_from_sm(w) }
        });
    Some(Gpu {
        index: 0,
        name: Some(name.to_owned()),
        compute_capability: cc,
        memory_total_bytes: memory,
        ..Gpu::default()
    })
}

/// A memory size as people write it after a GPU's name (`48G`, `11GB`, `24GiB`), in bytes (GiB):
/// one to three digits, at most 512.
fn memory_word(word: &str) -> Option<u64> {
    let w = word.to_ascii_lowercase();
    let digits = w.strip_suffix("gib").or_else(|| w.strip_suffix("gb")).or_else(|| w.strip_suffix('g'))?;
    let n: u64 = (!digits.is_empty() && digits.len() <= 3 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())??;
    (1..=512).contains(&n).then_some(n << 30)
}

/// The GPU's memory an answer gives (`NVIDIA GeForce RTX 4090 48G`, `GeForce GTX 1080 Ti, 11GB`, `RTX
/// 3090 24 GB`).
fn memory_in(value: &str) -> Option<u64> {
    let words: Vec<&str> = value.split(|c: char| c.is_whitespace() || matches!(c, ',' | '(' | ')' | ';')).collect();
    words.iter().enumerate().find_map(|(i, w)| {
        memory_word(w).or_else(|| {
            let unit = words.get(i + 1)?.to_ascii_lowercase();
            (["gb", "gib"].contains(&unit.as_str()) && !w.is_empty()).then(|| memory_word(&format!("{w}gb")))?
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gpu_answer_gives_its_count_prefix_away_and_its_memory() {
        // https://github.com/aikitoria/open-gpu-kernel-modules/issues/14 (the form's GPU answer).
        let g = gpu_in("4* NVIDIA GeForce RTX 4090 48G").unwrap();
        assert_eq!((g.name.as_deref(), g.memory_total_bytes), (Some("NVIDIA GeForce RTX 4090"), Some(48 << 30)));
        let g = gpu_in("GeForce GTX 1080 Ti, 11GB").unwrap();
        assert_eq!((g.name.as_deref(), g.memory_total_bytes), (Some("GeForce GTX 1080 Ti"), Some(11 << 30)));
        assert_eq!(gpu_in("2x RTX 3090 24 GB").unwrap().memory_total_bytes, Some(24 << 30));
        let g = gpu_in("NVIDIA GeForce RTX 3060").unwrap();
        assert_eq!((g.name.as_deref(), g.memory_total_bytes), (Some("NVIDIA GeForce RTX 3060"), None));
        // A model number is not a size; a size too large for a GPU is not read.
        assert_eq!(gpu_in("Tesla P100 16G").unwrap().memory_total_bytes, Some(16 << 30));
        assert_eq!(gpu_in("RTX 4090 9999GB").unwrap().memory_total_bytes, None);
    }

    /// The capability an answer writes as `sm_XY` or `sm_XYZ` (Tohrusky/Final2x#613: `NVIDIA RTX 5090D (sm_120)`),
    /// three digits read as 12.0, not 1.2; `compute capability 8.6` as written.
    #[test]
    fn a_gpu_answers_sm_number_is_its_capability() {
        let cc = |v: &str| gpu_in(v).and_then(|g| g.compute_capability).map(|c| c.to_string());
        assert_eq!(cc("NVIDIA RTX 5090D (sm_120)").as_deref(), Some("12.0"));
        assert_eq!(cc("GeForce GTX 1080 (sm_61)").as_deref(), Some("6.1"));
        assert_eq!(cc("NVIDIA GeForce GTX 1050 (compute capability 6.1)").as_deref(), Some("6.1"));
        assert_eq!(cc("RTX 3090 (sm_)"), None);
    }

    /// A count around the one model lists that many: TensorFlow's issue template answered `gtx1070 * 2` (as
    /// tensorflow/tensorflow#44976's reporter did), `4x RTX 3090`, `RTX 3090 x 2`; a model number is no count.
    #[test]
    fn a_count_around_the_gpu_answer_lists_that_many() {
        let names = |v: &str| gpus_in(v).into_iter().map(|g| (g.index, g.name.unwrap_or_default())).collect::<Vec<_>>();
        assert_eq!(names("gtx1070 * 2"), [(0, "gtx1070".to_owned()), (1, "gtx1070".to_owned())]);
        assert_eq!(names("4x RTX 3090").len(), 4);
        assert_eq!(names("RTX 3090 x 2").len(), 2);
        assert_eq!(names("NVIDIA A100 ×8").len(), 8);
        assert_eq!(names("RTX 3090").len(), 1);
        assert_eq!(names("GTX 1080 Ti x 64").len(), 1, "a cluster, not one machine");
        assert_eq!(answer_count("RTX 2080"), (1, "RTX 2080"));
    }

    #[test]
    fn an_installed_version_may_be_a_nightly_or_a_pre_release() {
        // pytorch/pytorch's nightly wheels (`2.7.0.dev20250310+cu124`), release candidates (`2.1.0rc1`).
        assert_eq!(installed_version("2.7.0.dev20250310+cu124 (Nightly)").as_deref(), Some("2.7.0.dev20250310+cu124"));
        assert_eq!(installed_version("2.1.0rc1").as_deref(), Some("2.1.0rc1"));
        assert_eq!(installed_version("2.8.0+cu128").as_deref(), Some("2.8.0+cu128"));
        for not in [">=2.0", "dev20250310", "2.dev1", "2.1.0rcx", "latest", "1.2.3.4.5"] {
            assert_eq!(installed_version(not), None, "{not}");
        }
    }

    #[test]
    fn a_full_width_colon_labels_an_answer_too() {
        // NVIDIA/nccl-tests#319's environment list, written with U+FF1A.
        assert_eq!(
            label_value("Driver Version\u{ff1a}570.124.06"),
            Some(("driver version".into(), "570.124.06".into()))
        );
        assert_eq!(label_value("Ubuntu\u{ff1a}24.04.2"), Some(("ubuntu".into(), "24.04.2".into())));
        // An ASCII colon first is the label's, a full-width one inside the value stays there.
        assert_eq!(
            label_value("GPU: RTX 4090\u{ff08}24G\u{ff09}\u{ff1a}x1"),
            Some(("gpu".into(), "RTX 4090\u{ff08}24G\u{ff09}\u{ff1a}x1".into()))
        );
    }

    #[test]
    fn a_sentence_naming_two_gpus_gives_both() {
        // LostRuins/koboldcpp#1023: the reporter's first line.
        let lines = vec![
            "I have two GPUs: a GTX 1660 Super which is connected to my monitor, and an RTX 3090 which I use for CUDA tasks."
                .to_owned(),
        ];
        let mut facts = Facts::default();
        read(&lines, &mut facts);
        let names: Vec<&str> = facts.listed_gpus.iter().filter_map(|(g, _)| g.name.as_deref()).collect();
        assert_eq!(names, ["GTX 1660 Super", "RTX 3090"]);
        let indices: Vec<u32> = facts.listed_gpus.iter().map(|(g, _)| g.index).collect();
        assert_eq!(indices, [0, 1]);
        // A part that names no GPU keeps the answer one GPU.
        let one: Vec<Option<String>> = gpus_in("RTX 3090 and 64 GB of RAM").into_iter().map(|g| g.name).collect();
        assert_eq!(one, [Some("RTX 3090 and 64 GB of RAM".to_owned())]);
        assert_eq!(gpus_in("NVIDIA GeForce RTX 3090 + RTX 4090").len(), 2);
        assert!(gpus_in(&" and ".repeat(10_000)).is_empty());
    }

    #[test]
    fn answers_in_a_sentence() {
        let one = |line: &str| sentence_answers(line);
        let pair = |l: &str, v: &str| vec![(l.to_owned(), v.to_owned())];
        // Written by people in public READMEs (GitHub code search for "my tensorflow version is": a
        // Jetson Nano TensorFlow guide; a Faster R-CNN port's setup notes).
        assert_eq!(one("My tensorflow version is 2.4.0!!"), pair("tensorflow version", "2.4.0"));
        assert_eq!(
            one(
                "- the tensorflow version that original repo used is 1.3.0, but my tensorflow version is 1.8.0, so you have to"
            ),
            pair("tensorflow version", "1.8.0")
        );
        // The shapes, constructed: the system named, the driver's version, a label opening the sentence.
        assert_eq!(one("My system is Windows 11. My GPU is an RTX 2060."), pair("os", "Windows 11"));
        assert_eq!(
            one("Driver version is 470.82.01 and it still fails"),
            pair("driver version", "470.82.01 and it still fails")
        );
        // Sentences of that shape that answer nothing, and code.
        assert!(one("My problem is that the GPU is not found.").is_empty());
        assert!(one("print('My tensorflow version is:',tf.__version__)").is_empty());
        assert!(one("the version of this repo is old").is_empty());
        // Read into the facts: the framework and the OS, as a labelled line would give them.
        let facts = Facts::read_by(
            read,
            "My system is Windows 11. My tensorflow version is 2.12.0. My GPUs are NVIDIA GeForce RTX 2060.",
        );
        assert_eq!(facts.os, Some(OsFamily::Windows));
        assert!(facts.packages.iter().any(|p| p.name == "tensorflow" && p.version == "2.12.0"), "{:?}", facts.packages);
    }

    #[test]
    fn versions_and_platforms_of_answers() {
        assert_eq!(version_in("v2.12.0-rc1-12-g0db597d0d75 2.12.0").as_deref(), Some("2.12.0"));
        assert_eq!(version_in("tf 2.16").as_deref(), Some("2.16"));
        assert_eq!(version_in("tf2.12.0").as_deref(), Some("2.12.0"), "tensorflow/tensorflow#60241");
        assert_eq!(version_in("2.11.0").as_deref(), Some("2.11.0"));
        assert_eq!(version_in("nightly"), None);
        assert_eq!(version_in("1.2.3.4"), None);
        assert_eq!(os_in("Windows 11"), Some(OsFamily::Windows));
        assert_eq!(os_in("win10"), Some(OsFamily::Windows));
        assert_eq!(os_in("Ubuntu 22.04"), Some(OsFamily::Linux));
        assert_eq!(os_in("WSL2 Ubuntu on Windows 11"), None);
        assert_eq!(os_in("macOS 14"), None);
    }

    #[test]
    fn a_cuda_driver_version_label_gives_the_drivers_cuda_level() {
        // The shape of programs that print cudaDriverGetVersion's answer (constructed).
        let f = Facts::read_by(read, "Cuda driver version: 11.2\n");
        assert_eq!(f.driver_cuda.map(|(c, _)| c), Some(gpu_doctor_model::CudaVersion::new(11, 2)));
        assert!(f.driver_version.is_none());
        // A driver's own version under the same label stays the driver's version.
        let f = Facts::read_by(read, "CUDA driver version: 535.54.03\n");
        assert!(f.driver_version.is_some() && f.driver_cuda.is_none());
    }

    /// A colon inside inline code is no label's: NVIDIA/k8s-driver-manager#37's sentence (a corpus case's, whose
    /// `gpu-operator:v23.9.0` was read as a GPU answered `v23.9.0 to install nvidia gpu driver`).
    #[test]
    fn a_colon_inside_inline_code_is_no_label() {
        assert_eq!(label_value("I use `gpu-operator:v23.9.0` to install nvidia gpu driver, but it fails."), None);
        assert!(label_value("`GPU`: RTX 3090").is_some());
    }

    /// JAX's template's accelerator answered GPU asks for CUDA: jax-ml/jax#17624's form (verbatim lines), and the
    /// ticked boxes the template's checkboxes give; CPU, TPU or an unticked GPU box do not.
    #[test]
    fn an_accelerator_answered_gpu_asks_for_cuda() {
        let form = "### What jax/jaxlib version are you using?\n\n0.4.14\n\n### Which accelerator(s) are you using?\n\nGPU\n\n### Additional system info\n\nLinux\n";
        let f = Facts::read_by(read, form);
        assert_eq!(f.stated_cuda_wanted.as_deref(), Some("which accelerator(s) are you using? GPU"));
        let boxes = "### Which accelerator(s) are you using?\n\n- [ ] CPU\n- [X] GPU\n- [ ] TPU\n";
        assert!(Facts::read_by(read, boxes).stated_cuda_wanted.is_some());
        for no in ["CPU", "TPU", "- [X] CPU\n- [ ] GPU"] {
            let f = Facts::read_by(read, &format!("### Which accelerator(s) are you using?\n\n{no}\n"));
            assert!(f.stated_cuda_wanted.is_none(), "{no}");
        }
    }
}
