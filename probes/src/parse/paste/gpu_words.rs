//! A GPU named in a sentence ("I am using RTX 4090", "My GPU is 4090", "on a GTX 1080 Ti", "Tesla
//! V100", "Titan X (Pascal)", "a gtx1080Ti GPU", "a DGX Spark", whose one GPU is the GB10), read as the machine's GPU only where no program in
//! the text lists GPUs (nvidia-smi, collect_env, `-L`, a framework's device line, an issue form's
//! answer, a message naming the GPU: those win) and only for names the knowledge base's product
//! table knows. One model named, however often, is that GPU (a count said right before it, `two GTX
//! 1080 Ti`, `2x RTX 3090`, lists that many); two different models read as none, for a comparison
//! ("works on my 3090, fails on the A100") names no one machine. A bare number (`4090`) is read only
//! right after words that say it is the machine's card ("GPU is", "using", "with a", "card is") or a count
//! ("two 4090s", "dual 4090").
//!
//! Samples (threads that are not corpus cases): QData/C-Tran#30 ("My gpu is GeForce RTX 4090."),
//! shurans/sscnet#12 ("I'm working on a gtx1080Ti GPU."), sangwoomo/instagan#14 ("I use a 1080ti
//! gpu"), revoconner/Felicity#6 ("Device is RTX 5090"), facebookresearch/clevr-iep#40 ("I have two
//! GTX 1080 Ti but I get out of GPU memory error").

use gpu_doctor_kb::Kb;
use gpu_doctor_model::Gpu;

use super::facts::Facts;
use super::gpus;

/// The format name, one of [`gpu_doctor_model::GPUS_IN_WORDS`]: the rules know it is no program's list.
const FORMAT: &str = gpu_doctor_model::GPUS_IN_WORDS[2];

/// The most characters of one line read: a sentence is shorter; a longer line is a log or data.
const MAX_LINE: usize = 4096;

/// The most GPUs a count before a name is taken for: more is a cluster, not one machine.
const MAX_COUNT: u32 = 16;

/// The most mentions kept: enough to see two models; the rest of the text adds nothing.
const MAX_MENTIONS: usize = 64;

/// One part of a word: a run of letters or of digits (`gtx1080Ti` → `gtx`, `1080`, `ti`).
#[derive(Debug, Clone, Copy)]
struct Part<'a> {
    text: &'a str,
    digits: bool,
    /// The index of the word it is part of.
    word: usize,
    /// Its place in that word (0 for the first part).
    at: usize,
}

/// The words and parts of a lowercased line.
fn parts(lower: &str) -> (Vec<&str>, Vec<Part<'_>>) {
    let words: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let mut out = Vec::new();
    for (wi, w) in words.iter().enumerate() {
        let bytes = w.as_bytes();
        let (mut start, mut at) = (0, 0);
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push(Part { text: &w[start..i], digits: bytes[start].is_ascii_digit(), word: wi, at });
                start = i;
                at += 1;
            }
        }
    }
    (words, out)
}

/// Words after which a bare model number (`4090`) names the machine's card.
const BARE_AFTER: [&[&str]; 14] = [
    &["gpu", "is"],
    &["card", "is"],
    &["device", "is"],
    &["using"],
    &["using", "a"],
    &["using", "an"],
    &["using", "my"],
    &["with", "a"],
    &["with", "an"],
    &["with", "my"],
    &["use", "a"],
    &["have", "a"],
    &["on", "my"],
    &["on", "a"],
];

/// A name's suffix words, as nvidia-smi writes them.
fn suffix(part: &str) -> Option<&'static str> {
    Some(match part {
        "ti" => "Ti",
        "super" => "SUPER",
        "d" => "D",
        "ada" => "Ada",
        "laptop" => "Laptop GPU",
        _ => return None,
    })
}

/// A GeForce, Quadro, Tesla or TITAN name starting at part `i`, with the index of the part after
/// it; `None` where the parts there name none.
fn named_at(p: &[Part<'_>], words: &[&str], i: usize) -> Option<(String, usize)> {
    let get = |k: usize| p.get(k).map(|x| x.text);
    let digits = |k: usize| p.get(k).filter(|x| x.digits).map(|x| x.text);
    let letter_digits = |k: usize| {
        // `v100`, `k80`, `a6000`, `p4000`: one or two letters then digits, one word.
        let (l, d) = (p.get(k)?, p.get(k + 1)?);
        (!l.digits && l.text.len() <= 2 && d.digits && d.word == l.word && d.at == l.at + 1)
            .then(|| (format!("{}{}", l.text.to_ascii_uppercase(), d.text), k + 2))
    };
    let with_suffixes = |mut name: String, mut next: usize| {
        // A laptop part's `M` is part of the model (`GTX 950M`, `960m`, `GTX 965 M`).
        if get(next) == Some("m") {
            name.push('M');
            next += 1;
        }
        // `4090 D` or `5090D`, `1080 Ti`, `2080 SUPER`: at most two suffix words.
        for _ in 0..2 {
            match get(next).and_then(suffix) {
                Some(s) => {
                    name.push(' ');
                    name.push_str(s);
                    next += 1;
                }
                None => break,
            }
        }
        (name, next)
    };
    match get(i)? {
        family @ ("rtx" | "gtx" | "gt" | "mx") => {
            let upper = family.to_ascii_uppercase();
            if let Some(n) = digits(i + 1) {
                // A GeForce series fixes its prefix (GTX for the 10 and 16 series, RTX for 20 to 50), so
                // the wrong one people write (`GTX 3090`, in many public READMEs) names that series' card.
                let upper = match (family, n.len(), n.get(..2)) {
                    ("rtx" | "gtx", 4, Some("10" | "16")) => "GTX".to_owned(),
                    ("rtx" | "gtx", 4, Some("20" | "30" | "40" | "50")) => "RTX".to_owned(),
                    _ => upper,
                };
                return Some(with_suffixes(format!("{upper} {n}"), i + 2));
            }
            if family == "rtx" {
                if get(i + 1) == Some("pro") {
                    let n = digits(i + 2)?;
                    return Some(with_suffixes(format!("RTX PRO {n}"), i + 3));
                }
                let (model, next) = letter_digits(i + 1).filter(|(m, _)| m.starts_with('A'))?;
                return Some((format!("RTX {model}"), next));
            }
            if family == "gtx" && get(i + 1) == Some("titan") {
                let (name, next) = titan(p, words, i + 1)?;
                return Some((format!("GTX {name}"), next));
            }
            None
        }
        "titan" => titan(p, words, i),
        // The DGX Spark is named for its one GPU, the GB10 superchip's (NVIDIA's DGX Spark page; the CUDA GPUs
        // list gives GB10 compute capability 12.1).
        "dgx" if get(i + 1) == Some("spark") => Some(("NVIDIA GB10".to_owned(), i + 2)),
        "gb" if words.get(p[i].word) == Some(&"gb10") => Some(("NVIDIA GB10".to_owned(), i + 2)),
        "tesla" => {
            let (model, next) = letter_digits(i + 1)?;
            Some((format!("Tesla {model}"), next))
        }
        "quadro" => {
            if get(i + 1) == Some("rtx") {
                return Some((format!("Quadro RTX {}", digits(i + 2)?), i + 3));
            }
            let (model, next) = letter_digits(i + 1)?;
            Some((format!("Quadro {model}"), next))
        }
        _ => {
            // A data-centre GPU's bare model (`A100`, `V100`, `H100`, `P100`): one letter and three
            // digits, one word; shorter models (`T4`, `L4`, `K80`) only after `NVIDIA`.
            let (model, next) = letter_digits(i)?;
            let after_nvidia = i > 0 && get(i - 1) == Some("nvidia");
            let long = p[i].text.len() == 1 && p[i + 1].text.len() == 3;
            let whole = p.get(next).is_none_or(|x| x.word != p[i].word);
            (whole && (long || after_nvidia)).then(|| (format!("NVIDIA {model}"), next))
        }
    }
}

/// `TITAN X (Pascal)`, `Titan Xp`, `TITAN V`, `TITAN RTX`, `GTX TITAN X` from the part `i` (`titan`).
fn titan(p: &[Part<'_>], words: &[&str], i: usize) -> Option<(String, usize)> {
    let model = p.get(i + 1).filter(|x| !x.digits && matches!(x.text, "x" | "xp" | "v" | "rtx" | "z" | "black"));
    let Some(model) = model else { return Some(("TITAN".to_owned(), i + 1)) };
    let mut name =
        format!("TITAN {}", if model.text == "xp" { "Xp".to_owned() } else { model.text.to_ascii_uppercase() });
    let mut next = i + 2;
    if model.text == "x" && p.get(next).is_some_and(|x| x.text == "pascal" && words.get(x.word) == Some(&"pascal")) {
        name.push_str(" (Pascal)");
        next += 1;
    }
    Some((name, next))
}

/// A bare model number at part `i` (`4090`, `1080ti`) after the words that make it the machine's
/// card, or after a count (`two 4090s`): its GeForce name (`GTX` for 10 and 16 series, `RTX` for 20 to 50).
fn bare_at(p: &[Part<'_>], words: &[&str], i: usize) -> Option<(String, usize)> {
    let n = p.get(i).filter(|x| x.digits && x.at == 0 && x.text.len() == 4)?;
    let w = n.word;
    let after = BARE_AFTER
        .iter()
        .any(|before| w >= before.len() && words.get(w - before.len()..w).is_some_and(|ws| ws == *before));
    // Or right after a count: `dual 4090`, `two 4090s`, `2x 3090`.
    if !after && count_before(words, w).is_none() {
        return None;
    }
    let family = match n.text.get(..2)? {
        "10" | "16" => "GTX",
        "20" | "30" | "40" | "50" => "RTX",
        _ => return None,
    };
    let mut name = format!("{family} {}", n.text);
    let mut next = i + 1;
    if let Some(s) = p.get(next).and_then(|x| suffix(x.text)) {
        name.push(' ');
        name.push_str(s);
        next += 1;
    }
    Some((name, next))
}

/// A count said right before the name at word `w` (`two GTX 1080 Ti`, `2x RTX 3090`, `4 x A100`,
/// `have 2 RTX 3090`); a bare number only after a verb of having, so `Windows 11, RTX 4090` is no count.
fn count_before(words: &[&str], w: usize) -> Option<u32> {
    let word = |k: usize| w.checked_sub(k).and_then(|at| words.get(at)).copied();
    let in_range = |n: u32| (2..=MAX_COUNT).contains(&n).then_some(n);
    let spelled = |s: &str| match s {
        "two" | "dual" => Some(2),
        "three" => Some(3),
        "four" | "quad" => Some(4),
        "eight" => Some(8),
        _ => None,
    };
    let w1 = word(1)?;
    if w1 == "x" {
        return word(2)?.parse().ok().and_then(in_range);
    }
    if let Some(n) = spelled(w1) {
        return Some(n);
    }
    if let Some(n) = w1.strip_suffix('x') {
        return n.parse().ok().and_then(in_range);
    }
    let verb = word(2).is_some_and(|v| ["have", "has", "with", "using"].contains(&v));
    verb.then(|| w1.parse().ok().and_then(in_range)).flatten()
}

/// The key two mentions of one model share: the name without `NVIDIA`, `GeForce` or `Tesla`.
fn key(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    lower.split_whitespace().filter(|w| !["nvidia", "geforce", "tesla"].contains(w)).collect::<Vec<_>>().join(" ")
}

/// The GPU models a line names that the knowledge base knows, each with a count said before it.
fn mentions(line: &str, kb: &Kb, out: &mut Vec<(String, Option<u32>)>) {
    let lower = line.get(..line.floor_char_boundary(MAX_LINE)).unwrap_or("").to_ascii_lowercase();
    let (words, p) = parts(&lower);
    if lower.contains('|') {
        // A table's row (nvidia-smi's, a markdown table): a program's, or an issue form's answer.
        return;
    }
    let offset = |text: &str| text.as_ptr() as usize - lower.as_ptr() as usize;
    // A program names a GPU after a label, in brackets or tags, or as a value (`Model:  NVIDIA
    // GeForce GTX 1080`, lspci's `[GeForce RTX 3090]`, `<product_name>NVIDIA A100`,
    // `gpu.product=NVIDIA-H100`, `Device 0: NVIDIA GeForce RTX 5060`); a sentence does not.
    let in_a_sentence = |part: &Part<'_>| {
        let mut w = part.word;
        while w > 0 && part.word - w < 2 && matches!(words[w - 1], "nvidia" | "geforce") {
            w -= 1;
        }
        let before = lower.get(..offset(words[w])).unwrap_or("").trim_end();
        if before.ends_with([':', '[', '<', '>', '=', '/', '\\']) {
            return false;
        }
        // A label's value (`Device: 0, GeForce GTX 1080 Ti`): at most one word since a colon just
        // before. Only the last 48 bytes are looked at, so each name costs the same.
        let near = before.get(before.floor_char_boundary(before.len().saturating_sub(48))..).unwrap_or("");
        near.rsplit_once(':').is_none_or(|(_, value)| value.split_whitespace().count() > 1)
    };
    let mut i = 0;
    while i < p.len() && out.len() < MAX_MENTIONS {
        // A name starts a word (`rtx3090`, `gtx1080ti`); a part inside a word (`tf2`, `sm_86`) does not.
        let found = (p[i].at == 0)
            .then(|| named_at(&p, &words, i).or_else(|| bare_at(&p, &words, i)))
            .flatten()
            .filter(|_| in_a_sentence(&p[i]));
        match found {
            Some((name, next)) if kb.gpus.product_for_name(&name).is_some() => {
                out.push((name, count_before(&words, p[i].word)));
                i = next.max(i + 1);
            }
            _ => i += 1,
        }
    }
}

/// Reads the GPU the text names in words, when no program's output in it lists or names a GPU and
/// it names one model only.
pub(super) fn read(lines: &[String], kb: &Kb, facts: &mut Facts) {
    let named_by_message = gpus::facts_from_messages(&facts.messages).iter().any(|f| f.name.is_some());
    if !facts.listed_gpus.is_empty() || !facts.gpu_facts.is_empty() || !facts.bar1_rebar.is_empty() || named_by_message
    {
        return;
    }
    let mut first: Option<(usize, String, Option<u32>)> = None;
    let mut found = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        found.clear();
        mentions(line, kb, &mut found);
        for (name, count) in found.drain(..) {
            match &mut first {
                None => first = Some((at, name, count)),
                Some((_, kept, kept_count)) => {
                    // Two models (`GTX 1080` and `GTX 1080 Ti` too): a comparison or a list, no one GPU.
                    if key(kept) != key(&name) {
                        return;
                    }
                    *kept_count = kept_count.or(count);
                }
            }
        }
    }
    if let Some((at, name, count)) = first {
        facts.saw(at, FORMAT);
        for index in 0..count.unwrap_or(1) {
            facts.listed_gpus.push((Gpu { index, name: Some(name.clone()), ..Gpu::default() }, FORMAT));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kb() -> &'static Kb {
        Kb::get().unwrap()
    }

    fn named(text: &str) -> Vec<String> {
        let mut facts = Facts::default();
        read(&super::super::clean::lines(text), kb(), &mut facts);
        facts.listed_gpus.into_iter().filter_map(|(g, _)| g.name).collect()
    }

    #[test]
    fn a_gpu_named_in_a_sentence_is_read() {
        // QData/C-Tran#30 (https://github.com/QData/C-Tran/issues/30), the reporter.
        assert_eq!(
            named("My gpu is GeForce RTX 4090. The torch version and other python extensions are consistent"),
            ["RTX 4090"]
        );
        // shurans/sscnet#12 (https://github.com/shurans/sscnet/issues/12): a name written as one word.
        assert_eq!(named("I'm working on a gtx1080Ti GPU. I do see a peak of memory usage"), ["GTX 1080 Ti"]);
        // sangwoomo/instagan#14 (https://github.com/sangwoomo/instagan/issues/14): a bare number after `use a`.
        assert_eq!(named("I use a 1080ti gpu,and it out of memory,how can I train with my gpu"), ["GTX 1080 Ti"]);
        // revoconner/Felicity#6 (https://github.com/revoconner/Felicity/issues/6).
        assert_eq!(named("Device is RTX 5090\ncuda version 13.1.1\npytorch 2.6"), ["RTX 5090"]);
        assert_eq!(named("I am using RTX 4090"), ["RTX 4090"]);
        assert_eq!(named("My GPU is 4090"), ["RTX 4090"]);
        assert_eq!(named("training on a Tesla V100 fails"), ["Tesla V100"]);
        assert_eq!(named("It runs on a Titan X (Pascal)."), ["TITAN X (Pascal)"]);
        assert_eq!(named("i run demo on my pc with rtx3090 , and i get error"), ["RTX 3090"]);
        assert_eq!(named("the A100 gives this error"), ["NVIDIA A100"]);
        assert_eq!(named("on an NVIDIA T4 in Colab"), ["NVIDIA T4"]);
        assert_eq!(named("RTX A6000 here"), ["RTX A6000"]);
        // The wrong GeForce prefix, as people write it (public READMEs found by code search: "On GTX 3090
        // GPU, CUDA verison used is 11.3", "Test on Tiny_Fod Dataset on GTX 3090Ti GPU").
        assert_eq!(named("On GTX 3090 GPU, CUDA verison used is 11.3."), ["RTX 3090"]);
        assert_eq!(named("Test on Tiny_Fod Dataset on GTX 3090Ti GPU:"), ["RTX 3090 Ti"]);
        assert_eq!(named("I am using RTX 1080 Ti"), ["GTX 1080 Ti"]);
        assert_eq!(named("I am using GT 1030"), ["GT 1030"]);
        assert_eq!(named("The GPU is an RTX 4090 and the driver is recent."), ["RTX 4090"]);
        // The DGX Spark is named for its one GPU, the GB10; `GB100` or `gb10x` are not it.
        assert_eq!(named("vLLM on a DGX Spark fails to start"), ["NVIDIA GB10"]);
        assert_eq!(named("Torch CUDA install on ARM64 (GB10)"), ["NVIDIA GB10"]);
        assert!(named("a GB100 board and a gb10x file").is_empty());
    }

    #[test]
    fn one_model_named_twice_is_one_gpu_and_a_count_lists_that_many() {
        assert_eq!(named("I have an RTX 3090.\nThe 3090 has 24 GB; my GPU is 3090\n"), ["RTX 3090"]);
        assert_eq!(named("I have a gtx 950M and cuda 12.3"), ["GTX 950M"]);
        // facebookresearch/clevr-iep#40 (https://github.com/facebookresearch/clevr-iep/issues/40).
        assert_eq!(
            named("I have two GTX 1080 Ti but I get out of GPU memory error when I want to train."),
            ["GTX 1080 Ti", "GTX 1080 Ti"]
        );
        assert_eq!(named("a box with 4x RTX 3090").len(), 4);
        // A bare number after a count: sgl-project/sglang#4723's title (verbatim); a resolution is no count.
        assert_eq!(
            named(
                "[Bug] After adding --enable-p2p-check, why is the speed of running on two 4090s slower than on a single one"
            ),
            ["RTX 4090", "RTX 4090"]
        );
        assert!(named("a 1920 x 1080 screen").is_empty());
        let mut facts = Facts::default();
        read(&["2x RTX 3090".to_owned()], kb(), &mut facts);
        let indices: Vec<u32> = facts.listed_gpus.iter().map(|(g, _)| g.index).collect();
        assert_eq!(indices, [0, 1]);
    }

    #[test]
    fn the_formats_the_rules_take_for_words_are_these_readers() {
        assert_eq!(super::super::pkg::TYPED[..], gpu_doctor_model::GPUS_IN_WORDS[..2]);
        assert!(gpu_doctor_model::gpus_only_in_words(&format!("pasted {FORMAT}")));
        assert!(!gpu_doctor_model::gpus_only_in_words("pasted nvidia-smi + issue form"));
    }

    #[test]
    fn two_models_or_a_bare_number_without_its_words_read_none() {
        assert!(named("works on my 3090, fails on the A100").is_empty(), "a comparison names no one machine");
        assert!(named("I tried an RTX 4090.\nOn a GTX 1080 Ti it works.\n").is_empty());
        assert!(named("1. NVIDIA GeForce GTX 1080 Ti\n2. NVIDIA GeForce GTX 1080\n").is_empty(), "a list of two");
        assert!(named("error 4090 at line 3090").is_empty(), "a bare number without words before it");
        assert!(named("cuda 1100 and port 3090").is_empty());
        assert!(named("RTX 9999 is not a GPU").is_empty(), "a name the knowledge base does not know");
        assert!(named("tf2 with sm_86 and cu118").is_empty());
        assert!(named("T4 only after NVIDIA or Tesla").is_empty());
        // A program's line, not a sentence.
        assert!(
            named("01:00.0 VGA compatible controller: NVIDIA Corporation GA102 [GeForce RTX 3090] (rev a1)").is_empty()
        );
        assert!(named("Model:            NVIDIA GeForce GTX 1080").is_empty());
        assert!(named("    nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3").is_empty());
        assert!(named("<product_name>NVIDIA A100-SXM4-40GB</product_name>").is_empty());
        assert!(named("| 0  Tesla V100  Off |").is_empty());
        assert!(named("Device 0: NVIDIA GeForce RTX 5060, compute capability 12.0, VMM: yes").is_empty());
        assert!(named("GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-1)").is_empty());
        assert!(named("Device: 0, GeForce GTX 1080 Ti, pciBusID: 2, pciDeviceID: 0").is_empty());
        // A program's list wins.
        let mut facts = Facts::default();
        facts
            .listed_gpus
            .push((Gpu { name: Some("NVIDIA A100-SXM4-40GB".to_owned()), ..Gpu::default() }, "nvidia-smi"));
        read(&["I am using RTX 4090".to_owned()], kb(), &mut facts);
        assert_eq!(facts.listed_gpus.len(), 1);
    }

    #[test]
    fn huge_and_odd_input_is_read_in_linear_time() {
        assert!(named(&"rtx ".repeat(200_000)).is_empty());
        assert!(named(&"using ".repeat(200_000)).is_empty());
        assert_eq!(named(&"RTX 3090 ".repeat(100_000)), ["RTX 3090"]);
        assert!(named(&"2x ".repeat(100_000)).is_empty());
        assert!(named("titan").is_empty());
        assert!(named("Windows 11, RTX 4090").len() == 1, "a number before the name is no count");
        assert!(named("tesla").is_empty());
        assert!(named("é RTX 3090 ü").len() == 1);
    }
}
