//! What people say in words about the machine that no program printed: how many GPUs it has ("I have
//! two GPUs on the machine", "on systems with 1 GPU", "a single-GPU server"). A count is read only
//! where the words say the machine has it (a possessive verb, a machine noun, a `single-GPU machine`
//! compound), not where they say how many a run uses ("train on one GPU"); two different counts read
//! as none.
//!
//! How many GPUs a run uses ("when using 4 or more GPUs", torchrun's `--nproc_per_node=2`) is the least the
//! machine has. A CUDA version quoted for nvidia-smi or nvcc ("nvidia-smi shows CUDA Version 12.2 but nvcc -V
//! shows 11.5") is the driver's level or nvcc's release, where no program's output in the text gave it. Trouble
//! over several GPUs said in words ("MirroredStrategy is stuck", "the copied tensor would be allocated but zeroed
//! out", "simpleP2P failed") and a question whether the machine's CUDA must match a framework's build are kept as
//! the lines that say them.
//!
//! A PCIe link said in a sentence with two rates (`runs at 2.5 GT/s on a lane with 8GT/s available`) is the
//! link now and its maximum, for the one GPU of the text; a link said to come down while the GPU idles, or while
//! it works (a game, training), is kept as the line that says it.
//!
//! Sample (a thread that is not a corpus case): mazurowski-lab/finetune-SAM#18 ("I have two GPUs on
//! the machine and torch.cuda.is_available outputs True").

use gpu_doctor_model::{CudaVersion, MultiGpuSymptom, MultiGpuTrouble};

use super::facts::Facts;

const FORMAT: &str = "a GPU count in words";

/// The most GPUs a count in words is taken for: more is a cluster, not one machine.
const MAX_COUNT: u32 = 16;

/// Words for a machine, before `with N GPUs` or after `single-GPU`.
const MACHINES: [&str; 12] = [
    "system",
    "machine",
    "server",
    "computer",
    "pc",
    "laptop",
    "desktop",
    "node",
    "workstation",
    "box",
    "host",
    "setup",
];

/// Verbs that say the machine holds the GPUs.
const HAVE: [&str; 5] = ["have", "has", "had", "having", "contains"];

/// Words that may stand between the verb and the count.
const FILLER: [&str; 4] = ["only", "just", "got", "exactly"];

/// A count word or number: `one`, `a single`, `2`.
fn count(words: &[&str], at: usize) -> Option<(u32, usize)> {
    let w = *words.get(at)?;
    let n = match w {
        "one" | "single" => 1,
        "a" | "an" if words.get(at + 1) == Some(&"single") => return Some((1, 2)),
        "two" | "dual" => 2,
        "three" => 3,
        "four" | "quad" => 4,
        "eight" => 8,
        _ => w.parse::<u32>().ok().filter(|n| (1..=MAX_COUNT).contains(n))?,
    };
    Some((n, 1))
}

/// A count written as a multiple: `2x`, `4x` (`2x RTX 3090`).
fn times(word: &str) -> Option<u32> {
    word.strip_suffix('x')?.parse::<u32>().ok().filter(|n| (2..=MAX_COUNT).contains(n))
}

fn is_gpu(word: Option<&&str>) -> bool {
    matches!(word, Some(&("gpu" | "gpus" | "gpu's")))
}

/// A word that names an NVIDIA GPU model after a count (`dual 4090`, `2x RTX 3090`, `four A100s`, `two
/// 1080ti`): a brand or series word, a GeForce model number (10 and 16 series, 20 to 50) with its suffix or a
/// plural `s`, or a data-centre model (`a100`, `v100s`, `h100`, `a6000`, `k80`: one letter, two to four digits).
fn is_gpu_model(word: Option<&&str>) -> bool {
    let Some(w) = word else { return false };
    if ["rtx", "gtx", "geforce", "quadro", "tesla", "titan", "nvidia"].contains(w) {
        return true;
    }
    let w = w.strip_suffix('s').unwrap_or(w);
    let digits_end = w.find(|c: char| !c.is_ascii_digit()).unwrap_or(w.len());
    let (number, rest) = w.split_at(digits_end);
    if number.len() == 4 {
        // `2060` to `2080`, `1630` to `1660`: a tier of 3 to 9 and a last 0, so a year (`2024`) is none.
        let series = matches!(number.get(..2), Some("10" | "16" | "20" | "30" | "40" | "50"));
        let tier = number.get(2..).is_some_and(|t| t.ends_with('0') && t.as_bytes()[0] >= b'3');
        return series && tier && ["", "ti", "super"].contains(&rest);
    }
    let mut chars = w.chars();
    let letter = chars.next().is_some_and(|c| "ahlvpk".contains(c));
    let tail = chars.as_str();
    letter && (2..=4).contains(&tail.len()) && tail.chars().all(|c| c.is_ascii_digit())
}

/// Whether a lowercased line names two different GPUs by their index (`between GPU2 and GPU3`, `GPU 0 and GPU 1`,
/// `GPU0-GPU1`).
fn two_gpu_indices(lower: &str) -> bool {
    let words: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let mut seen: Option<&str> = None;
    for (i, w) in words.iter().enumerate() {
        let index = match w.strip_prefix("gpu") {
            Some("") => words.get(i + 1).copied().filter(|n| n.len() <= 2 && n.chars().all(|c| c.is_ascii_digit())),
            Some(n) if n.len() <= 2 && n.chars().all(|c| c.is_ascii_digit()) => Some(n),
            _ => None,
        };
        match (index, seen) {
            (Some(n), Some(first)) if n != first => return true,
            (Some(n), None) => seen = Some(n),
            _ => {}
        }
    }
    false
}

fn is_machine(word: &str) -> bool {
    MACHINES.iter().any(|m| word == *m || word.strip_suffix('s') == Some(m))
}

/// The count of GPUs the machine has, said in this line's words; `None` when the line does not say.
fn count_in(line: &str) -> Option<u32> {
    let lower = line.to_ascii_lowercase();
    // `single-GPU` and `1-gpu` are two words; punctuation other than the apostrophe ends a word.
    let words: Vec<&str> =
        lower.split(|c: char| !(c.is_ascii_alphanumeric() || c == '\'')).filter(|w| !w.is_empty()).collect();
    for i in 0..words.len() {
        let w = words[i];
        // have/has [only|just] N GPU(s); a machine with [only|just] N GPU(s).
        let after_verb = HAVE.contains(&w) || (w == "with" && i > 0 && is_machine(words[i - 1]));
        if after_verb {
            // At most two filler words ("only just"), so a run of them is not walked from every verb.
            let mut at = i + 1;
            while at <= i + 2 && words.get(at).is_some_and(|x| FILLER.contains(x)) {
                at += 1;
            }
            if let Some((n, len)) = count(&words, at)
                && is_gpu(words.get(at + len))
            {
                return Some(n);
            }
        }
        // single-GPU machine, one-GPU server, 2-GPU node.
        if let Some((n, len)) = count(&words, i)
            && is_gpu(words.get(i + len))
            && words.get(i + len + 1).is_some_and(|m| is_machine(m))
            && (i == 0 || !HAVE.contains(&words[i - 1]))
        {
            return Some(n);
        }
    }
    None
}

/// Words before a count of GPUs a run uses: `when using 4 or more GPUs`, `training on 2 GPUs`, `with more than 2
/// GPUs`, `across 8 GPUs`.
const USE: [&str; 7] = ["using", "use", "uses", "used", "on", "across", "with"];

/// Words that put a run on several machines, where a count of GPUs says nothing of one machine.
const CLUSTER: [&str; 5] = ["nodes", "machines", "servers", "hosts", "cluster"];

/// The format name of a count of GPUs a run uses.
const USED_FORMAT: &str = "GPUs a run uses, in words";

/// The processes torchrun (`torch.distributed.launch`, `torchrun`) starts on this machine, one per GPU:
/// `--nproc_per_node=2`, `--nproc-per-node 4` (PyTorch's torchrun documentation; a number only, not `gpu` or
/// `auto`).
fn nproc_per_node(lower: &str) -> Option<u32> {
    let at = lower.find("nproc_per_node").or_else(|| lower.find("nproc-per-node"))?;
    let rest = lower[at + "nproc_per_node".len()..].trim_start_matches(['=', ' ']);
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse::<u32>().ok().filter(|n| (2..=MAX_COUNT).contains(n))
}

/// The GPUs (two or more) this line says a run uses on one machine (`Freezed when running the example code with
/// more than 2 GPUs`, `--nproc_per_node=2`); `None` when it says none, one, or a run over several machines.
/// `N or more` is N, `more than N` is N + 1: the least the machine has.
fn used_in(line: &str) -> Option<u32> {
    let lower = line.to_ascii_lowercase();
    let words: Vec<&str> =
        lower.split(|c: char| !(c.is_ascii_alphanumeric() || c == '\'')).filter(|w| !w.is_empty()).collect();
    // torchrun's `--nnodes=N` spreads the run over N machines; `--nnodes=1` is this one.
    let one_node = |rest: &str| {
        let n: String = rest.trim_start_matches(['=', ' ']).chars().take_while(char::is_ascii_digit).collect();
        n == "1"
    };
    let nodes = lower.find("nnodes").is_some_and(|at| !one_node(&lower[at + "nnodes".len()..]));
    if words.iter().any(|w| CLUSTER.contains(w)) || nodes {
        return None;
    }
    if let Some(n) = nproc_per_node(&lower) {
        return Some(n);
    }
    (1..words.len()).find_map(|i| {
        if !USE.contains(&words[i - 1]) {
            return None;
        }
        let more_than = words.get(i) == Some(&"more") && words.get(i + 1) == Some(&"than");
        let at = if more_than { i + 2 } else { i };
        let (n, len) = count(&words, at)?;
        let at = at + len;
        let or_more = words.get(at) == Some(&"or") && words.get(at + 1) == Some(&"more");
        let n = if more_than { n + 1 } else { n };
        (n >= 2 && is_gpu(words.get(if or_more { at + 2 } else { at }))).then_some(n)
    })
}

/// The format name of a question whether CUDA must match a framework's.
const QUESTION_FORMAT: &str = "a question whether CUDA must match";

/// Frameworks and packages whose prebuilt builds bring their own CUDA runtime.
const BRINGS_CUDA: [&str; 9] =
    ["torch", "pytorch", "tensorflow", "jax", "wheel", "wheels", "cupy", "onnxruntime", "paddlepaddle"];

/// Words that ask whether the machine's CUDA must match, or be installed beside, such a build (`do I have to reinstall
/// torch with cu118`, sasha0552/vllm-ci#4).
const MUST_MATCH: [&str; 13] = [
    "match",
    "reinstall",
    "same",
    "need",
    "necessary",
    "required",
    "require",
    "separately",
    "additionally",
    "ignore",
    "must",
    "compatible",
    "install",
];

/// The question a text asks whether the machine's CUDA (or cuDNN) must match or be installed for a framework's
/// build: a line with `?` that holds a word of [`MUST_MATCH`], where it, the two lines before it and the one after
/// name CUDA or cuDNN and a framework of [`BRINGS_CUDA`] (the PyTorch forum's "Does the CUDA version I have installed on my
/// system need to match the CUDA version of the torch wheel?"). Lines over 400 characters are no question.
fn cuda_question(lines: &[String]) -> Option<(usize, String)> {
    let words = |l: &str| -> Vec<String> {
        l.to_ascii_lowercase()
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect()
    };
    lines.iter().enumerate().find_map(|(i, line)| {
        if tools_disagree(line) || builds_for_a_cuda(line) {
            return Some((i, line.trim().chars().take(300).collect()));
        }
        if !line.contains('?') || line.len() > 400 || !words(line).iter().any(|w| MUST_MATCH.contains(&w.as_str())) {
            return None;
        }
        // The two lines with text before it and the one after (blank lines between paragraphs do not count).
        let said = |l: &&String| !l.trim().is_empty() && l.len() <= 400;
        let before = lines[..i].iter().rev().filter(said).take(2);
        let after = lines[i + 1..].iter().filter(said).take(1);
        let window: Vec<String> = before.chain(std::iter::once(line)).chain(after).flat_map(|l| words(l)).collect();
        let cuda = window.iter().any(|w| w == "cuda" || w == "cudnn");
        let framework = window.iter().any(|w| BRINGS_CUDA.contains(&w.as_str()));
        (cuda && framework).then(|| (i, line.trim().chars().take(300).collect()))
    })
}

/// A line of at most 300 characters asking for prebuilt builds for one CUDA version (`No binaries for cuda 11.4`,
/// pytorch/pytorch#84069; `Support for cuda 9.1 would be useful`, #4156): the wish to match the machine's toolkit,
/// which the builds, bringing their own CUDA runtime, do not need.
fn builds_for_a_cuda(line: &str) -> bool {
    const BUILDS: [&str; 7] = ["binaries", "binary", "builds", "wheels", "wheel", "packages", "support"];
    if line.len() > 300 {
        return false;
    }
    let lower = line.to_ascii_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    words.windows(4).any(|w| {
        BUILDS.contains(&w[0])
            && w[1] == "for"
            && w[2] == "cuda"
            && w[3].trim_end_matches(['.', ',', '?', '!']).parse::<gpu_doctor_model::CudaVersion>().is_ok()
    })
}

/// Words that set nvcc's CUDA against nvidia-smi's in one sentence: they are said to differ.
const CONTRAST: [&str; 7] = ["but", "while", "whereas", "different", "differs", "mismatch", "still"];

/// A sentence of at most 400 characters naming both nvcc and nvidia-smi, with a word that sets one against the
/// other ("it only change the nvcc ... but if you use `nvidia-smi` function, it still use the latest version"):
/// the two show different CUDA versions, the driver's level and the toolkit's release, which need not agree.
fn tools_disagree(line: &str) -> bool {
    if line.len() > 400 {
        return false;
    }
    let lower = line.to_ascii_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
    lower.contains("nvcc") && lower.contains("nvidia-smi") && words.iter().any(|w| CONTRAST.contains(w))
}

/// The format name of a multi-GPU symptom said in words.
const TROUBLE_FORMAT: &str = "a multi-GPU symptom in words";

/// Words that say a run hangs (not that it crashed or is slow); `stucks` and `stucked` as writers put them
/// (huggingface/transformers#28280: "it stucks with multi-GPUs").
const HANG: [&str; 15] = [
    "stuck",
    "stucks",
    "stucked",
    "hang",
    "hangs",
    "hanging",
    "hung",
    "freeze",
    "freezes",
    "freezing",
    "frozen",
    "freezed",
    "deadlock",
    "deadlocks",
    "deadlocked",
];

/// Words and names that make a run one over several GPUs of a machine: the frameworks' multi-GPU strategies and
/// launchers and NCCL's collectives.
const MULTI_GPU: [&str; 13] = [
    "mirroredstrategy",
    "ddp",
    "distributeddataparallel",
    "dataparallel",
    "nccl",
    "allreduce",
    "all_reduce",
    "multi-gpu",
    "multigpu",
    "torch.distributed",
    "nproc_per_node",
    "tensor-parallel-size",
    "deepspeed",
];

/// Words that say data which crossed between GPUs came out wrong.
const WRONG: [&str; 8] = ["nan", "nans", "corrupt", "corrupted", "corruption", "zeros", "zeroed", "garbage"];

/// Words that say work over several GPUs runs slow.
const SLOW: [&str; 4] = ["slow", "slower", "slowdown", "slowly"];

/// Words that say a test failed.
const FAILED: [&str; 5] = ["fail", "fails", "failed", "failure", "error"];

/// Phrases that put two or more GPUs of one machine in the work itself: several GPUs named as such, data moved
/// from one to another, a peer-to-peer test (which needs a pair), NVLink (which joins GPUs).
const SEVERAL: [&str; 18] = [
    "nvlink",
    "multiple gpus",
    "several gpus",
    "more than one gpu",
    "multi-gpu",
    "multi gpu",
    "multigpu",
    "between gpus",
    "across gpus",
    "gpu to gpu",
    "gpu-to-gpu",
    "one gpu to another",
    "peer-to-peer",
    "peer to peer",
    "p2p",
    "than one gpu",
    "than a single gpu",
    "than single gpu",
];

/// Words for direct traffic between GPUs.
const PEER: [&str; 3] = ["p2p", "peer-to-peer", "peer to peer"];

/// The CUDA samples that test peer-to-peer between a pair of GPUs.
const PEER_TESTS: [&str; 3] = ["simplep2p", "p2pbandwidthlatencytest", "p2p test"];

/// What a line says goes wrong when work spans several GPUs of a machine, the symptoms NCCL's troubleshooting
/// guide gives for peer traffic that ACS or the IOMMU sends up to the root complex ("a significant performance
/// reduction or even a hang") and that a CUDA sample's check shows as wrong data:
///
/// * a hang: a word of [`HANG`] and a multi-GPU word ([`MULTI_GPU`], or a phrase of [`SEVERAL`]);
/// * wrong values: a word of [`WRONG`] and a phrase of [`SEVERAL`] (NaN alone has many causes);
/// * a failed peer-to-peer test: a word of [`FAILED`] and a test of [`PEER_TESTS`];
/// * slow transfers: peer-to-peer traffic or a bandwidth said to be slow or low, and a phrase of [`SEVERAL`]; slow
///   training alone is not (data loading, batch sizes and more slow it: facebookresearch/deit#81's healthy machine).
///
/// With whether the line itself puts two or more GPUs of one machine in the work (a phrase of [`SEVERAL`] or a
/// count of GPUs, not in a line that names several nodes). At most 300 characters: a sentence, not a log.
fn multi_gpu_trouble(line: &str) -> Option<(MultiGpuSymptom, bool)> {
    if line.len() > 300 {
        return None;
    }
    let lower = line.to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '\'')))
        .map(|w| w.trim_matches('.'))
        .filter(|w| !w.is_empty())
        .collect();
    let has = |list: &[&str]| words.iter().any(|w| list.contains(w));
    // `tf.distribute.MirroredStrategy`: the name's last part.
    let multi =
        words.iter().any(|w| MULTI_GPU.contains(w) || w.rsplit_once('.').is_some_and(|(_, n)| MULTI_GPU.contains(&n)));
    let counted = (0..words.len()).any(|i| {
        let n = count(&words, i).or_else(|| times(words[i]).map(|n| (n, 1)));
        n.is_some_and(|(n, len)| n >= 2 && (is_gpu(words.get(i + len)) || is_gpu_model(words.get(i + len))))
    });
    let cluster = words.iter().any(|w| CLUSTER.contains(w));
    let several = !cluster && (counted || two_gpu_indices(&lower) || SEVERAL.iter().any(|p| lower.contains(p)));
    let peer_test = PEER_TESTS.iter().any(|t| lower.contains(t));
    let low_bandwidth =
        lower.contains("bandwidth") && ["only", "low", "small", "slow"].iter().any(|w| words.contains(w));
    let symptom = if has(&HANG) && (multi || several) {
        MultiGpuSymptom::Hang
    } else if has(&WRONG) && several {
        MultiGpuSymptom::WrongValues
    } else if has(&FAILED) && peer_test {
        MultiGpuSymptom::PeerTestFailed
    } else if (has(&SLOW) && (lower.contains("bandwidth") || PEER.iter().any(|p| lower.contains(p))) || low_bandwidth)
        && several
    {
        MultiGpuSymptom::Slow
    } else {
        return None;
    };
    Some((symptom, several || peer_test))
}

/// The format name of a CUDA version said in words for nvidia-smi or nvcc.
const TOOL_FORMAT: &str = "a CUDA version said for nvidia-smi or nvcc";

/// The tools whose CUDA version people quote in a sentence, and what each version is: nvidia-smi's header
/// shows the driver's CUDA level, nvcc the toolkit's release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tool {
    Smi,
    Nvcc,
}

/// Words that end the look for a tool's version: other programs whose versions fall in CUDA's range (`nvcc fails
/// with gcc 11.4`, `python 3.10` is out of range anyway) and the GPU's own numbers.
const OTHER_VERSIONED: [&str; 28] = [
    "gcc",
    "g++",
    "clang",
    "llvm",
    "msvc",
    "visual",
    "studio",
    "xcode",
    "cmake",
    "python",
    "ubuntu",
    "debian",
    "fedora",
    "centos",
    "rhel",
    "windows",
    "macos",
    "cudnn",
    "tensorrt",
    "nccl",
    "torch",
    "pytorch",
    "tensorflow",
    "jax",
    "cupy",
    "sm",
    "capability",
    "pcie",
];

/// The most words after a tool's name looked at for its version.
const TOOL_REACH: usize = 10;

/// The most characters of a line looked at for a tool's version: a sentence is shorter.
const MAX_TOOL_LINE: usize = 1024;

/// A CUDA version people may quote for a tool, `major.minor` with a major of 7 to 13; a driver version
/// (`535.104`) or another program's (`3.10`) is not one.
fn cuda_word(word: &str) -> Option<CudaVersion> {
    let word = word.trim_start_matches('v');
    let mut parts = word.split('.');
    let (major, minor) = (parts.next()?.parse::<u32>().ok()?, parts.next()?.parse::<u32>().ok()?);
    ((7..=13).contains(&major) && minor <= 9).then(|| CudaVersion::new(major, minor))
}

/// The CUDA versions a sentence quotes for nvidia-smi and for nvcc (`nvidia-smi shows CUDA Version 12.2 but nvcc
/// -V shows 11.5`): the first CUDA version within [`TOOL_REACH`] words after each tool's name, before another
/// tool, another program ([`OTHER_VERSIONED`]) or the sentence's end.
fn tool_versions(line: &str) -> Vec<(Tool, CudaVersion)> {
    if line.len() > MAX_TOOL_LINE {
        return Vec::new();
    }
    let lower = line.to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ':' | '`' | '\'' | '"' | '(' | ')' | '=' | ';'))
        .filter(|w| !w.is_empty())
        .collect();
    let tool_of = |w: &str| match w.trim_end_matches(['.', '!', '?']) {
        "nvidia-smi" | "nvidia-smi.exe" => Some(Tool::Smi),
        "nvcc" | "nvcc.exe" => Some(Tool::Nvcc),
        _ => None,
    };
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let Some(tool) = tool_of(w) else { continue };
        if out.iter().any(|(t, _)| *t == tool) || w.ends_with(['.', '!', '?']) {
            continue;
        }
        for next in words[i + 1..].iter().take(TOOL_REACH) {
            let bare = next.trim_end_matches(['.', '!', '?']).trim_start_matches('-');
            if let Some(v) = cuda_word(bare) {
                out.push((tool, v));
                break;
            }
            // Another tool, another program's version, or the sentence's end: nothing said for this one.
            if tool_of(next).is_some() || OTHER_VERSIONED.contains(&bare) || next.ends_with(['.', '!', '?']) {
                break;
            }
        }
    }
    out
}

/// The format name of a link speed said in a sentence.
const LINK_FORMAT: &str = "a link speed in words";

/// The PCIe generations of a sentence that names two link rates (`Tesla runs at 2.5 GT/s on a lane with 8GT/s
/// available`): the lower is the link now, the higher its maximum, since a link never runs above what both
/// ends can. Lines of programs that state two rates themselves (the kernel's `limited by … (capable of …)`,
/// lspci's `LnkCap`/`LnkSta`) are theirs, and a sentence of more or fewer rates says nothing.
fn link_in_words(line: &str) -> Option<(u32, u32)> {
    if !line.contains("GT/s")
        || ["available PCIe bandwidth", "LnkSta", "LnkCap", "link up,"].iter().any(|p| line.contains(p))
    {
        return None;
    }
    let mut generations: Vec<u32> = Vec::new();
    for (at, _) in line.match_indices("GT/s") {
        let before = line[..at].trim_end();
        let number = &before[before.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.').len()..];
        let generation = crate::probe::link::bandwidth::parse_link_speed(&format!("{number} GT/s"))?;
        if !generations.contains(&generation) {
            generations.push(generation);
        }
    }
    match generations[..] {
        [a, b] => Some((a.min(b), a.max(b))),
        _ => None,
    }
}

/// Whether the lowered text `lower` holds any of `words` (lower-case words of the readers below).
fn mentions(lower: &str, words: &[&str]) -> bool {
    words.iter().any(|w| lower.contains(w))
}

/// The format name of GPU states with their links, an idle one at a lower generation than a busy one.
const PSTATE_FORMAT: &str = "P-states with their PCIe generation";

/// A line's performance state and PCIe generation (`d1: P8 sm= 324 MHz mem= 324 MHz PCIe Gen1 x16`, a monitor's or a
/// script's line; nvidia-smi names the states P0, the most, to P12, the least): both as words of their own, in a
/// line of at most 300 characters.
fn pstate_and_generation(line: &str) -> Option<(u32, u32)> {
    if line.len() > 300 {
        return None;
    }
    let words: Vec<&str> = line.split(|c: char| c.is_whitespace() || matches!(c, ',' | ':' | '|')).collect();
    let pstate = words.iter().find_map(|w| w.strip_prefix('P').filter(|n| n.len() <= 2)?.parse::<u32>().ok());
    let generation = words.iter().enumerate().find_map(|(i, w)| match w.strip_prefix("Gen") {
        Some("") => words.get(i + 1)?.parse::<u32>().ok(),
        Some(n) => n.parse::<u32>().ok(),
        None => None,
    });
    pstate.filter(|p| *p <= 15).zip(generation.filter(|g| (1..=6).contains(g)))
}

/// An idle GPU's line (P5 or lower in power, P8 and on) at a lower PCIe generation than a busy one's (P0 to P2): the
/// link follows the power state (dogkeeper886/ollama37#207: `P8 … PCIe Gen1 x16` cold, `P0 … PCIe Gen3 x16` after a
/// warm-up).
fn idle_link_by_pstate(lines: &[String]) -> Option<usize> {
    let states: Vec<(usize, u32, u32)> =
        lines.iter().enumerate().filter_map(|(i, l)| pstate_and_generation(l).map(|(p, g)| (i, p, g))).collect();
    let busy = states.iter().filter(|(_, p, _)| *p <= 2).map(|(_, _, g)| *g).max()?;
    states.iter().find(|(_, p, g)| *p >= 5 && *g < busy).map(|(i, _, _)| *i)
}

/// The format name of a link said to drop its generation while idle.
const IDLE_FORMAT: &str = "a link said to slow down while idle";

/// Words that say the GPU is idle.
const IDLE_WORDS: [&str; 5] = ["idle", "not in use", "not being used", "no tasks", "not used"];

/// Words that say the link came down.
const LOWERED: [&str; 7] = ["drop", "reduce", "lower", "downgrad", "falls", "goes down", "show as gen1"];

/// A sentence saying the PCIe link comes down to a lower generation while the GPU is idle (NVIDIA/open-gpu-kernel-modules#1010:
/// "Observed PCIe link dropping to Gen1 (2.5 GT/s) while idle."; #731: "when there are no tasks on the GPU … if you
/// check the GPU's bandwidth with lspci, it will show as Gen1"): a link word (`gen`, `generation`, `GT/s`, `PCIe`,
/// `link`), a word of [`LOWERED`] and one of [`IDLE_WORDS`] (or up `only … during active use`), in at most 400
/// characters. nvidia-smi's own help says the generation "may be reduced when the GPU is not in use".
fn idle_downshift(line: &str) -> bool {
    if line.len() > 400 {
        return false;
    }
    let lower = line.to_ascii_lowercase();
    let link = mentions(&lower, &["gen", "gt/s", "pcie", "link speed"]);
    // Up "only … during active use" says the same: down the rest of the time. A link that drops *under load* is not
    // this (that is the degraded link).
    let idle = mentions(&lower, &IDLE_WORDS) || (lower.contains("only") && lower.contains("active use"));
    link && mentions(&lower, &LOWERED) && idle
}

/// The format name of a link said to come down while the GPU is busy.
const BUSY_FORMAT: &str = "a link said to slow down while the GPU is busy";

/// Words that say the GPU is at work: a game, training, a benchmark, a load.
const BUSY_WORDS: [&str; 11] = [
    "under load",
    "full load",
    "game",
    "gaming",
    "training",
    "benchmark",
    "rendering",
    "% utilization",
    "% utilisation",
    "while busy",
    "during inference",
];

/// Words that say the link came down, or stayed down, while busy (the idle reader's [`LOWERED`], and a link
/// `stuck at` or left at a rate `instead of` another).
const LOWERED_BUSY: [&str; 9] =
    ["drop", "reduce", "lower", "downgrad", "falls", "goes down", "stuck at", "instead of", "degrad"];

/// A sentence saying the PCIe link comes down while the GPU works (pop-os/system76-power#393: "Play any game on the
/// nvidia graphics card in fullscreen and wait for the PCI Express lane downgrade to occur."): a link word (`gen`,
/// `GT/s`, `PCIe`, `PCI Express`, `link speed`, `lane`), a word of [`LOWERED_BUSY`] and one of [`BUSY_WORDS`], and none
/// of the idle reader's [`IDLE_WORDS`], in at most 400 characters. A GPU lowers its link when idle, never at work, so
/// this is the degraded link, not power saving.
fn busy_downshift(line: &str) -> bool {
    if line.len() > 400 {
        return false;
    }
    let lower = line.to_ascii_lowercase();
    // Whole words for the short ones: `gen2`, `lanes`, not `generating` or `plane`.
    let link = mentions(&lower, &["gt/s", "pcie", "pci express", "pci-e", "link speed", "link width"])
        || lower.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| {
            matches!(w, "lane" | "lanes" | "generation")
                || w.strip_prefix("gen").is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        });
    link && mentions(&lower, &LOWERED_BUSY) && mentions(&lower, &BUSY_WORDS) && !mentions(&lower, &IDLE_WORDS)
}

/// The format name of a link width said in a sentence.
const WIDTH_FORMAT: &str = "a link width in words";

/// Words that make two widths of a sentence a link against its most (`x8 instead of x16`, `x4 lanes
/// negotiated (GPU max x16`, `dropped from x16 to x8`), where they stand between the two.
const WIDTH_JOINS: [&str; 9] = ["instead of", "rather than", "not", "max", "capable", "should", "of", "from", "to"];

/// Words that make a line about a PCIe link.
const LINK_WORDS: [&str; 6] = ["pcie", "lane", "link", "slot", "width", "riser"];

/// The lanes a sentence says a GPU's link has against the card's (`My GPU is only running at x8 instead of x16
/// link width according to the bios`, `Why can a video card run 8 PCIe lanes instead of 16 lanes?`): two widths
/// of x1 to x16 (`x8`, `8 lanes`, `8 PCIe lanes`), at most 40 characters apart with a word of [`WIDTH_JOINS`]
/// between them, in a line about a PCIe link; the lower is the link now, the higher the card's. A third width
/// makes it a list or a question, not a link. Program lines that state a link themselves (the kernel's,
/// lspci's) are theirs.
fn width_in_words(line: &str) -> Option<(u32, u32)> {
    let lower = line.to_ascii_lowercase();
    if !mentions(&lower, &LINK_WORDS)
        || ["available pcie bandwidth", "lnksta", "lnkcap"].iter().any(|p| lower.contains(p))
    {
        return None;
    }
    let words: Vec<(usize, &str)> = super::words_at(&lower, |c| c.is_ascii_alphanumeric()).collect();
    let lanes = |i: usize| {
        let next = words.get(i + 1).map(|(_, w)| *w);
        let after = words.get(i + 2).map(|(_, w)| *w);
        matches!(next, Some("lane" | "lanes")) || (next == Some("pcie") && matches!(after, Some("lane" | "lanes")))
    };
    let mut widths: Vec<(usize, usize, u32)> = Vec::new();
    for (i, (at, w)) in words.iter().enumerate() {
        let number = match w.strip_prefix('x') {
            Some(n) => n.parse::<u32>().ok(),
            None if lanes(i) => w.parse::<u32>().ok(),
            None => None,
        };
        if let Some(n) = number.filter(|n| matches!(n, 1 | 2 | 4 | 8 | 16)) {
            widths.push((*at, at + w.len(), n));
        }
        if widths.len() > 2 {
            return None;
        }
    }
    let [(_, first_end, a), (second, _, b)] = widths[..] else { return None };
    let between = &lower[first_end..second];
    let between_words: Vec<&str> = between.split(|c: char| !c.is_ascii_alphanumeric()).collect();
    let joined = between.len() <= 40
        && WIDTH_JOINS.iter().any(|j| if j.contains(' ') { between.contains(j) } else { between_words.contains(j) });
    (joined && a != b).then(|| (a.min(b), a.max(b)))
}

/// The driver's CUDA level and nvcc's release said in words, where no program's own output gave them: the first
/// said for each tool.
fn tools_in_words(lines: &[String], facts: &mut Facts) {
    let has_nvcc = facts.toolkits.iter().any(|t| t.version.is_some());
    let (mut smi, mut nvcc) = (facts.driver_cuda.is_some(), has_nvcc);
    for (i, line) in lines.iter().enumerate() {
        if smi && nvcc {
            break;
        }
        if !line.contains("nvidia-smi") && !line.contains("nvcc") {
            continue;
        }
        for (tool, version) in tool_versions(line) {
            match tool {
                Tool::Smi if !smi => {
                    smi = true;
                    facts.saw(i, TOOL_FORMAT);
                    facts.stated_driver_cuda = Some((version, line.trim().chars().take(300).collect()));
                }
                Tool::Nvcc if !nvcc => {
                    nvcc = true;
                    facts.saw(i, TOOL_FORMAT);
                    facts.nvcc_toolkit(version);
                }
                _ => {}
            }
        }
    }
}

const NO_GPU_FORMAT: &str = "no GPU found, in words";

/// Words a program or a person uses to say it found no GPU.
const NO_GPU_WORDS: [&str; 22] = [
    "doesn't see the gpu",
    "does not see the gpu",
    "can't see the gpu",
    "cannot see the gpu",
    "doesn't see my gpu",
    "does not see my gpu",
    "can't see my gpu",
    "cannot see my gpu",
    "no gpus detected",
    "no gpu detected",
    "no gpus found",
    "no gpu found",
    "no gpus available",
    "no gpu available",
    "no cuda devices",
    "no cuda device found",
    "no nvidia gpu",
    "gpu not detected",
    "gpu not found",
    "could not find any gpu",
    "couldn't find any gpu",
    "no compatible gpu",
];

/// A line saying no GPU was found, in a program's own words or a person's (`No GPUs detected` after a cross mark,
/// stevezzau/plex_generate_vid_previews through media-preview-generator#124); a line of at most 300 characters.
fn no_gpu_in_words(line: &str) -> bool {
    line.len() <= 300 && {
        let lower = line.to_ascii_lowercase();
        mentions(&lower, &NO_GPU_WORDS)
    }
}

/// The format name of a CPU build of torch said in words.
const CPU_TORCH_FORMAT: &str = "a CPU build of torch said in words";

/// Words after `cpu` (or `cpu only`) that name a build of a package.
const BUILD_NOUNS: [&str; 6] = ["version", "build", "variant", "wheel", "package", "one"];

/// Verbs that put a build in the environment, or say which build is there.
const GOT: [&str; 24] = [
    "install",
    "installs",
    "installed",
    "installing",
    "reinstall",
    "reinstalls",
    "reinstalled",
    "reinstalling",
    "get",
    "gets",
    "got",
    "obtained",
    "default",
    "defaults",
    "defaulted",
    "download",
    "downloads",
    "downloaded",
    "pulls",
    "pulled",
    "replaces",
    "replaced",
    "is",
    "was",
];

/// Words between the verb and the build that turn the sentence round (`installs the CUDA version instead of the
/// CPU one`, `not the cpu version`).
const TURNED: [&str; 6] = ["not", "instead", "rather", "than", "no", "never"];

/// Where in `words` a CPU-only build is named: `cpu version`, `cpu-only build`, `[cpu] version`, `torch without
/// CUDA`, `pytorch with cpu` (ending the sentence).
fn cpu_build_at(words: &[&str]) -> Option<usize> {
    let torch = |w: &str| w.contains("torch");
    (0..words.len()).find_map(|j| {
        let next = |k: usize| words.get(j + k).copied();
        match words[j] {
            "cpu" if next(1).is_some_and(|w| BUILD_NOUNS.contains(&w)) => Some(j),
            "cpu" if next(1) == Some("only") && next(2).is_some_and(|w| BUILD_NOUNS.contains(&w)) => Some(j),
            "cpu" if j >= 2 && words[j - 1] == "with" && torch(words[j - 2]) && next(1).is_none() => Some(j - 2),
            // `torch without CUDA`, `Torch without the CUDA version` (raryelcostasouza/pyTranscriber#56), `without
            // GPU support`.
            "without"
                if j >= 1
                    && (torch(words[j - 1]) || words[j - 1] == "version")
                    && (next(1).is_some_and(|w| w == "cuda" || w == "gpu")
                        || (next(1).is_some_and(|w| ["the", "a", "any"].contains(&w))
                            && next(2).is_some_and(|w| w == "cuda" || w == "gpu"))) =>
            {
                Some(j - 1)
            }
            _ => None,
        }
    })
}

/// Whether `line` says the torch installed is a CPU-only build ("This command installs cpu version instead of
/// cuda", "It defaults to the [cpu] version", "replaces it with Torch without CUDA version 2.1.2", "obtained
/// Pytorch with cpu"): a CPU build named within eight words after a verb that puts or finds a build in the
/// environment ([`GOT`]), with no word between that turns it round ([`TURNED`]), in a sentence of at most 400
/// characters that is no question and names no version tag (`2.1.0+cpu`, which the version readers take), with
/// torch named in it or the four lines before (the install command it speaks of). `uninstalled the cpu version` is
/// no install. Written from SupreethN/HOISTFormer#3, pytorch/pytorch#32369, octimot/StoryToolkitAI#170,
/// kyutai-labs/delayed-streams-modeling#131 and zyddnys/manga-image-translator#210.
fn cpu_torch_in_words(lines: &[String], i: usize) -> bool {
    let line = &lines[i];
    if line.len() > 400 || line.contains('?') {
        return false;
    }
    if line.contains("+cpu") {
        return bare_cpu_version(line);
    }
    let lower = line.to_ascii_lowercase();
    // PyTorch's `Torch not compiled with CUDA enabled` retold (`complaints that torch was not compiled with CUDA
    // support`, haoheliu/AudioLDM#5).
    if lower.contains("not compiled with cuda")
        && lower.contains("torch")
        && !lower.contains("torch not compiled with cuda enabled")
    {
        return true;
    }
    if mentions(&lower, &["import ", "print(", "site-packages", "$ ", ">>>"]) {
        return false;
    }
    let torch_near = || lines[i.saturating_sub(4)..=i].iter().any(|l| l.to_ascii_lowercase().contains("torch"));
    // In Chinese: `cpu` before the word for version (`\u{7248}\u{672c}`) beside the words for default or install
    // (zyddnys/manga-image-translator#210: torch from requirements.txt installs by default as the CPU version).
    if lower.contains("cpu\u{7248}\u{672c}") && mentions(&lower, &["\u{9ed8}\u{8ba4}", "\u{5b89}\u{88c5}"]) {
        return torch_near();
    }
    let words: Vec<&str> =
        lower.split(|c: char| !c.is_ascii_alphanumeric() && c != '\'').filter(|w| !w.is_empty()).collect();
    let Some(at) = cpu_build_at(&words) else { return false };
    let Some(verb) = (at.saturating_sub(8)..at).rev().find(|&k| GOT.contains(&words[k])) else { return false };
    let turned = words[verb + 1..at].iter().any(|w| TURNED.contains(w) || w.ends_with("n't"))
        || verb.checked_sub(1).is_some_and(|k| TURNED.contains(&words[k]) || words[k].ends_with("n't"));
    !turned && torch_near()
}

/// A version with PyTorch's CPU tag standing alone, no package named before it (`it says "2.0.0+cpu Autocast half"`,
/// SD.Next's system info, vladmandic/automatic#409): the `+cpu` local tag is the CPU index's (torch, and torchvision
/// and torchaudio installed with it), so the torch there is a CPU build. Only a version of major 1 or more.
fn bare_cpu_version(line: &str) -> bool {
    line.match_indices("+cpu").any(|(at, _)| {
        let before = &line[..at];
        let start = before.rfind(|c: char| !(c.is_ascii_digit() || c == '.')).map_or(0, |i| i + 1);
        let version = &before[start..];
        let after_ok = !line[at + 4..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        // Nothing before the version but a quote or a bracket: a package or a label before it (`torch==2.0.0+cpu`,
        // `torch 2.0.0+cpu`, `PyTorch version: 2.0.0+cpu`) is the version readers'.
        let bare = before[..start].trim_end().chars().last().is_none_or(|c| matches!(c, '"' | '\'' | '`' | '(' | '['));
        version.split('.').count() >= 2
            && version.split('.').next().is_some_and(|m| m.parse::<u32>().is_ok_and(|m| m >= 1))
            && after_ok
            && bare
    })
}

const OTHER_VENDOR_FORMAT: &str = "the machine's GPU named as another vendor's, or no NVIDIA GPU, in words";

/// Another vendor's GPU, as people name it.
const OTHER_VENDOR_GPUS: [&str; 10] = [
    "amd card",
    "intel gpu",
    "intel graphics",
    "iris xe",
    "uhd graphics",
    "intel arc",
    "intel(r) uhd",
    "radeon",
    "amd gpu",
    "amd graphics",
];

/// Words that make the GPU named the writer's own.
const OWN: [&str; 15] = [
    "i'm using",
    "i am using",
    "i use",
    "i have",
    "i only have",
    "my gpu",
    "my graphics",
    "my laptop has",
    "my pc has",
    "i'm running",
    "i am running",
    "i run",
    "my machine has",
    "my computer has",
    "my system has",
];

/// Words of NVIDIA's GPUs: a line naming one beside another vendor's is a machine with both.
const NVIDIA_WORDS: [&str; 7] = ["nvidia", "geforce", "rtx", "gtx", "quadro", "tesla", "cuda-capable"];

/// A sentence naming the writer's GPU as another vendor's and no NVIDIA GPU beside it (`I'm using a integrated Intel
/// GPU(iris xe graphics)`, Akegarasu/lora-scripts#101; `I am running arch linux with an AMD Radeon 7900xt GPU`,
/// HAMM3REXTREME/ComfyUI-Installer#6); at most 300 characters.
fn other_vendor_gpu_in_words(line: &str) -> bool {
    line.len() <= 300 && {
        let lower = line.to_ascii_lowercase();
        OTHER_VENDOR_GPUS.iter().any(|g| lower.contains(g))
            && mentions(&lower, &OWN)
            && !mentions(&lower, &NVIDIA_WORDS)
    }
}

/// A sentence of the writer saying the machine has no NVIDIA GPU (`This is correct since I don't have NVIDIA GPU`,
/// lllyasviel/Fooocus#3737; `I do not have an nvidia card`): a negation, then within a few words an NVIDIA GPU, card or
/// graphics; at most 300 characters, no question.
fn no_nvidia_gpu_in_words(line: &str) -> bool {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    static NEEDLE: super::Needle = super::Needle::new("nvidia");
    static NEEDLE_UPPER: super::Needle = super::Needle::new("NVIDIA");
    if line.len() > 2000 || !(NEEDLE.in_line(line) || NEEDLE_UPPER.in_line(line) || line.contains("Nvidia")) {
        return false;
    }
    #[allow(clippy::unwrap_used)] // a literal pattern, exercised by the tests
    let re = RE.get_or_init(|| {
        regex::Regex::new(
            r"(?i-u)\b(?:i|we|my\s+(?:pc|laptop|computer|machine))\s+(?:don'?t|do\s+not|doesn'?t|does\s+not|haven'?t|has\s+no|have\s+no)\s+(?:have\s+|got\s+)?(?:an?\s+|any\s+)?nvidia\s+(?:gpus?|cards?|graphics|video\s+cards?)\b",
        )
        .unwrap()
    });
    // Sentence by sentence: a question beside it (`But I can't imagine … without that?`) does not make it one.
    line.split_inclusive(['.', '?', '!'])
        .any(|sentence| sentence.len() <= 300 && !sentence.trim_end().ends_with('?') && re.is_match(sentence))
}

/// A line naming an NVIDIA GPU by its family or in words (`GeForce`, `RTX 3050`, `an NVIDIA GPU`): a machine that has
/// one, whatever other GPU the text names. At most 2,000 characters are looked at. PyTorch's error line that names one only to ask for it (`Found
/// no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver`, beside `I have an
/// AMD Card` in JoshuaKimsey/Linux-StableDiffusion-Script#17) says nothing of the machine.
fn names_nvidia_gpu(line: &str) -> bool {
    let lower = line.get(..2000).unwrap_or(line).to_ascii_lowercase();
    !lower.contains("please check that you have an nvidia gpu")
        && mentions(
            &lower,
            &["geforce", "rtx ", "gtx ", "quadro", "tesla ", "nvidia gpu", "nvidia graphics", "nvidia card"],
        )
}

const INDEX_FORMAT: &str = "GPU numbers said to disagree with nvidia-smi's";

/// The monitors that number GPUs as NVML does, in PCI bus order.
const PCI_ORDER_TOOLS: [&str; 4] = ["nvidia-smi", "nvtop", "nvitop", "gpustat"];

/// Words that say two GPUs' numbers are the other way round.
const SWAPPED: [&str; 5] = ["reversed", "swapped", "flipped", "other way round", "other way around"];

/// Words that say two numberings disagree (`unconsistent` as people write it: AlexeyAB/darknet#6982).
const DISAGREE: [&str; 13] = [
    "not match",
    "unconsistent",
    "not correspond",
    "don't match",
    "doesn't match",
    "mismatch",
    "different",
    "differ",
    "not the same",
    "inconsistent",
    "not consistent",
    "swapped",
    "reversed",
];

/// A sentence saying a program's GPU numbers and an NVML monitor's disagree: the monitor named, and either words of
/// disagreement beside a numbering word (`bonito and nvidia-smi do not match the device number`, nanoporetech/bonito#120),
/// or two GPU numbers set against each other (`I selected GPU 2 and 3 for training, but … nvidia-smi says the training is
/// happening on GPU 0 and 1`, NVIDIA/DIGITS#1358). At most 500 characters: a sentence, not a table.
fn index_mismatch_in_words(line: &str) -> bool {
    if line.len() > 500 {
        return false;
    }
    let lower = line.to_ascii_lowercase();
    if lower.contains('|') {
        return false;
    }
    // Two GPUs' numbers said reversed between two programs (`Windows … GPU0 is the 660 … the 2 are reversed in
    // there`, nemosminer/NemosMiner#393), whichever program numbers them in PCI order.
    if SWAPPED.iter().any(|w| lower.contains(w)) && two_gpu_indices(&lower) {
        return true;
    }
    if !PCI_ORDER_TOOLS.iter().any(|t| lower.contains(t)) {
        return false;
    }
    let words: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let numbering = words.iter().any(|w| {
        matches!(
            *w,
            "number" | "numbers" | "numbering" | "index" | "indices" | "indexes" | "id" | "ids" | "order" | "ordering"
        )
    });
    if numbering && DISAGREE.iter().any(|d| lower.contains(d)) {
        return true;
    }
    // `GPU 2` … but … `GPU 0`: the numbers a person chose against those the monitor shows.
    let contrast = words.iter().any(|w| matches!(*w, "but" | "however" | "instead" | "whereas"));
    contrast && two_gpu_indices(&lower)
}

const LISTED_ORDER_FORMAT: &str = "a program's GPU list against the PCI order";

/// A GPU model as different tools name it (`Gigabyte GTX 1080 Ti`, `NVIDIA GeForce GTX 1080 Ti`, lspci's `GP102
/// [GeForce GTX 1080 Ti]`): the first word with a digit, cut at a `-` (`V100-SXM2-16GB`), with a `Ti` or `SUPER`
/// after it; lowercase.
fn model_key(name: &str) -> Option<String> {
    let words: Vec<String> =
        name.split(|c: char| c.is_whitespace() || c == ',').filter(|w| !w.is_empty()).map(str::to_lowercase).collect();
    let at = words.iter().position(|w| w.chars().any(|c| c.is_ascii_digit()))?;
    let model = words[at].split('-').next().filter(|m| !m.is_empty())?.to_owned();
    Some(match words.get(at + 1).map(String::as_str) {
        Some(suffix @ ("ti" | "super")) => format!("{model} {suffix}"),
        _ => model,
    })
}

/// A GPU a program lists in CUDA's order: T-Rex's and other miners' `GPU #0: Gigabyte GTX 1080 Ti` (after a
/// timestamp), llama.cpp's `Device 0: NVIDIA GeForce RTX 4070, compute capability 8.9`. The index and the name.
fn cuda_listed(line: &str) -> Option<(u32, &str)> {
    let t = line.trim();
    let (index, rest) = match t.find("GPU #") {
        Some(at) => t[at + "GPU #".len()..].split_once(':')?,
        None => t.strip_prefix("Device ")?.split_once(':')?,
    };
    let index: u32 = index.parse().ok().filter(|i| *i < 64)?;
    let name = rest.split(", compute capability").next()?.trim();
    (!name.is_empty() && name.len() <= 80).then_some((index, name))
}

/// A GPU listed in PCI order: lspci's `02:00.0 VGA compatible controller: NVIDIA Corporation GP102 [GeForce GTX 1080
/// Ti] (rev a1)` (the name in brackets) or `nvidia-smi -L`'s `GPU 0: NVIDIA GeForce GTX 1080 Ti (UUID: GPU-…)`.
fn pci_listed(line: &str) -> Option<&str> {
    let t = line.trim();
    if let Some(rest) = t.strip_prefix("GPU ")
        && let Some((index, name)) = rest.split_once(": ")
        && index.chars().all(|c| c.is_ascii_digit())
    {
        return name.split(" (UUID:").next().filter(|_| name.contains("(UUID:")).map(str::trim);
    }
    let controller = ["VGA compatible controller: NVIDIA", "3D controller: NVIDIA"].iter().any(|c| t.contains(c));
    let slot = t.split_whitespace().next().is_some_and(|s| s.len() >= 7 && s.contains(':') && s.contains('.'));
    if !(controller && slot) {
        return None;
    }
    let open = t.find('[')?;
    let close = t[open..].find(']')? + open;
    Some(&t[open + 1..close])
}

/// The pasted text's GPUs in CUDA's order (a program's own list, numbered from 0) against the same models in PCI
/// order, where the order differs (trexminer/T-Rex#72: five GTX 1080 Ti then four GTX 1070 in T-Rex's list, lspci's
/// bus order mixing them): the line of the CUDA list's first GPU and the two orders in one sentence. Both lists
/// of two or more GPUs, of the same models in the same numbers, with at least two models.
fn listed_order_mismatch(lines: &[String]) -> Option<(usize, String)> {
    let mut cuda: Vec<(u32, String, usize)> = Vec::new();
    let mut pci: Vec<String> = Vec::new();
    for (i, line) in lines.iter().enumerate().take(5000) {
        if let Some((index, name)) = cuda_listed(line)
            && let Some(key) = model_key(name)
            && !cuda.iter().any(|(n, _, _)| *n == index)
        {
            cuda.push((index, key, i));
        } else if let Some(key) = pci_listed(line).and_then(model_key) {
            pci.push(key);
        }
    }
    cuda.sort_by_key(|(n, _, _)| *n);
    let in_cuda: Vec<&str> = cuda.iter().map(|(_, k, _)| k.as_str()).collect();
    let pci_keys: Vec<&str> = pci.iter().map(String::as_str).collect();
    let numbered = cuda.iter().enumerate().all(|(i, (n, _, _))| *n as usize == i);
    // The same models, one list possibly a GPU short (a paste cut at its last line): every model of the shorter
    // list as often in the longer, and the models in another order where both lists go.
    let (short, long) = if in_cuda.len() <= pci_keys.len() { (&in_cuda, &pci_keys) } else { (&pci_keys, &in_cuda) };
    let count = |list: &[&str], key: &str| list.iter().filter(|k| **k == key).count();
    let contained = short.iter().all(|k| count(short, k) <= count(long, k)) && long.len() - short.len() <= 1;
    let mut models = in_cuda.clone();
    models.sort_unstable();
    models.dedup();
    let reordered = in_cuda.iter().zip(&pci_keys).any(|(a, b)| a != b);
    if !numbered || short.len() < 2 || !contained || models.len() < 2 || !reordered {
        return None;
    }
    let list =
        |keys: &[&str]| keys.iter().map(|k| k.to_uppercase().replace(" TI", " Ti")).collect::<Vec<_>>().join(", ");
    Some((
        cuda[0].2,
        format!("the program's GPUs 0, 1, … are {}; in PCI bus order they are {}", list(&in_cuda), list(&pci_keys)),
    ))
}

const MIN_CC_FORMAT: &str = "a program's lowest compute capability";

/// The lowest compute capability a line says a program needs, in the shapes programs print it and people repeat
/// it: `minimum required compute capability 3.5` (DeepFaceLab's `No CUDA device found with …`), `the minimum
/// required Cuda capability is 6.0` (TensorFlow's gpu_device.cc), `The minimum cuda capability supported by this
/// library is 5.0` (PyTorch's torch/cuda/__init__.py), `requires 5.0 capability` and `requires compute
/// capability 7.0`, `compute capability of at least 7.0`, `compute capability >= 7.0`, `compute capability below
/// 7.0 are not supported` (vLLM's worker), `supports CC 5.0 and above`, a miner's `compute cap. 2.1 (at least 3.0
/// required)`, tiny-cuda-nn's `compute capability at least 75` (the SM number). One number X.Y of 1.0 to 12.9.
fn min_cc_in(line: &str) -> Option<gpu_doctor_model::ComputeCapability> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    // The paste's shared searchers, not a lowercase copy of every line (`capability` in any of its casings).
    static WORDS: [super::Needle; 4] = [
        super::Needle::new("apabilit"),
        super::Needle::new("APABILIT"),
        super::Needle::new("CC "),
        super::Needle::new("cap. "),
    ];
    if line.len() > 2000 || !WORDS.iter().any(|w| w.in_line(line)) {
        return None;
    }
    #[allow(clippy::unwrap_used)] // a literal pattern, exercised by the tests
    let re = RE.get_or_init(|| {
        regex::Regex::new(
            r"(?ix)
            (?:minimum|lowest|min\.?)\s+(?:required\s+)?(?:cuda\s+)?(?:compute\s+)?capability\s+
                (?:supported\s+by\s+this\s+library\s+)?(?:is\s+|of\s+)?(?P<a>\d{1,2}\.\d)\b
            | requires?\s+(?:a\s+gpu\s+with\s+)?(?:cuda\s+)?(?:compute\s+)?capability\s+(?:of\s+)?(?:at\s+least\s+|>=\s*)?(?P<b>\d{1,2}\.\d)\b
            | requires?\s+(?P<c>\d{1,2}\.\d)\s+(?:compute\s+)?capability
            | (?:compute\s+)?capability\s+(?:of\s+)?(?:at\s+least|>=|≥)\s*(?P<d>\d{1,2}\.\d)\b
            | capability\s+(?:below|lower\s+than|less\s+than|<)\s+(?P<e>\d{1,2}\.\d)\s+(?:is|are)\s+not\s+supported
            | \bCC\s+(?P<f>\d{1,2}\.\d)\s*(?:\+|and\s+(?:above|up|newer|higher))
            | cap(?:ability|\.)?\s+\d{1,2}\.\d\s*\(at\s+least\s+(?P<g>\d{1,2}\.\d)\s+required\)
            | compute\s+capability\s+(?:of\s+)?at\s+least\s+(?P<h>[1-9]\d)\b",
        )
        .unwrap()
    });
    let caps = re.captures(line)?;
    let cc = match caps.name("h") {
        // tiny-cuda-nn's `compute capability at least 75`: the SM number, major and minor run together.
        Some(sm) => {
            let (major, minor) = sm.as_str().split_at(1);
            format!("{major}.{minor}")
        }
        None => ["a", "b", "c", "d", "e", "f", "g"].iter().find_map(|n| caps.name(n))?.as_str().to_owned(),
    };
    cc.parse().ok().filter(|cc: &gpu_doctor_model::ComputeCapability| (1..=12).contains(&cc.major))
}

const NOUVEAU_FORMAT: &str = "nouveau said present, in words";

/// Words that say nouveau is on the machine and running: installed, loaded, in use, or printing errors.
const NOUVEAU_PRESENT: [&str; 10] =
    ["installed", "install", "loaded", "loading", "running", "in use", "using", "errors", "error", "is used"];

/// Words that say nouveau was kept off or is asked about, not that it runs.
const NOUVEAU_OFF: [&str; 11] = [
    "blacklist",
    "blacklisted",
    "blacklisting",
    "disable",
    "disabled",
    "remove",
    "uninstall",
    "purge",
    "rmmod",
    "not loaded",
    "whether",
];

/// A sentence saying the nouveau driver is present on the machine, where no kernel line of nouveau's was pasted:
/// `nouveau` and a word of [`NOUVEAU_PRESENT`] (`machine is install `nouveau` driver, and … found having many error
/// about `nouveau``), none of [`NOUVEAU_OFF`] (blacklisted, disabled, removed, asked whether). At most 300
/// characters: a sentence, not a log (nouveau's own `nouveau 0000:01:00.0: …` lines are the kernel log's).
fn nouveau_in_words(line: &str) -> bool {
    if line.len() > 300 {
        return false;
    }
    let lower = line.to_ascii_lowercase();
    // Programs' lines are their readers': the kernel's (`nouveau 0000:01:00.0: …`), lspci's (`Kernel driver in use:
    // nouveau`, `Kernel modules: nvidiafb, nouveau`).
    let program = ["nouveau 0000:", "] nouveau", "kernel driver in use", "kernel modules"];
    if !lower.contains("nouveau") || program.iter().any(|p| lower.contains(p)) {
        return false;
    }
    let words: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let has_word = |p: &str| if p.contains(' ') { lower.contains(p) } else { words.contains(&p) };
    NOUVEAU_PRESENT.iter().any(|p| has_word(p)) && !NOUVEAU_OFF.iter().any(|p| has_word(p))
}

const SMI_MISSING_FORMAT: &str = "nvidia-smi not found, in words";

/// The format name of work said to run on the CPU instead of the GPU.
const CPU_FALLBACK_FORMAT: &str = "work on the CPU, in words";

/// Words a program or a person uses to say the work ran on the CPU, not the GPU (English, and Chinese: "the CPU is
/// what is used", "runs on the CPU", escaped below).
const CPU_FALLBACK_WORDS: [&str; 14] = [
    "runs on cpu",
    "runs on the cpu",
    "running on cpu",
    "running on the cpu",
    "inferring on cpu",
    "falling back to cpu",
    "fall back to cpu",
    "falls back to cpu",
    "fallback to cpu",
    "only uses the cpu",
    "only using the cpu",
    "\u{4f7f}\u{7528}\u{7684}\u{662f}cpu",
    "\u{7528}\u{7684}\u{662f}cpu",
    "\u{8dd1}\u{5728}cpu",
];

/// A line of at most 300 characters saying the work ran on the CPU ([`CPU_FALLBACK_WORDS`]; lightweight-human-pose-
/// estimation-3d-demo's `No CUDA device found, inferring on CPU`, chatchat-space/Langchain-Chatchat#1526).
fn cpu_fallback_in_words(line: &str) -> bool {
    line.len() <= 300 && {
        let lower = line.to_lowercase();
        mentions(&lower, &CPU_FALLBACK_WORDS)
    }
}

/// The format name of a wish for a GPU build said in words.
const GPU_WANTED_FORMAT: &str = "a GPU build wished for, in words";

/// Words asking for a framework that uses the GPU.
const GPU_WANTED: [&str; 14] = [
    "gpu enabled",
    "gpu-enabled",
    "gpu version",
    "gpu support",
    "gpu build",
    "gpu-accelerated",
    "gpu acceleration",
    "cuda enabled",
    "cuda-enabled",
    "cuda support",
    "cuda build",
    "use my gpu",
    "use the gpu",
    "run on the gpu",
];

/// A sentence asking for a GPU build of a framework (micro-sam#356: "I guess you wanted users to have GPU enabled
/// version by default?"): one of [`GPU_WANTED`] in a line of at most 300 characters that does not say the machine has
/// no GPU or is meant for the CPU (`cpu-only machine`, `no gpu`), and is no program's error (`AssertionError: Torch
/// not compiled with CUDA enabled` is torch's own, read as its message).
fn gpu_wanted_in_words(line: &str) -> bool {
    line.len() <= 300 && {
        let lower = line.to_ascii_lowercase();
        let denied = ["no gpu", "without gpu", "without a gpu", "cpu-only machine", "cpu only machine", "not compiled"];
        mentions(&lower, &GPU_WANTED) && !mentions(&lower, &denied) && !lower.contains("error:")
    }
}

/// The format name of a build that says it builds without CUDA.
const BUILD_WITHOUT_CUDA_FORMAT: &str = "a build without CUDA, said by the build";

/// A build saying it leaves its CUDA part out (`not building warp-ctc GPU extensions`, `Skipping CUDA extension`),
/// or that the framework it builds for has no CUDA (`Torch was not built with CUDA support`, warp-ctc's
/// pytorch_binding/setup.py, espnet/warp-ctc#4): a line of at most 300 characters.
fn build_without_cuda_in_words(line: &str) -> bool {
    line.len() <= 300 && {
        let lower = line.to_ascii_lowercase();
        let skips = mentions(&lower, &["not building", "skipping", "skip building", "will not build", "won't build"])
            && mentions(&lower, &["gpu ext", "cuda ext", "cuda kernel", "gpu kernel", "cuda op", "gpu op"]);
        skips || lower.contains("was not built with cuda support")
    }
}

/// A sentence saying nvidia-smi was not found, where the shell's own line was not pasted: `nvidia-smi`
/// and, after it, `command not found` or `not found` (TonyXuQAQ/Topo-boundary#1: "type `nvidia-smi` but
/// command not found"). The shell's message itself (`nvidia-smi: command not found`) is the catalogue's row, and a
/// line of at most 300 characters is a sentence, not a log.
fn nvidia_smi_missing_in_words(line: &str) -> bool {
    if line.len() > 300 {
        return false;
    }
    let lower = line.to_ascii_lowercase();
    let Some(at) = lower.find("nvidia-smi") else { return false };
    let after = &lower[at + "nvidia-smi".len()..];
    let shell = after.starts_with(": command not found") || after.starts_with(": not found");
    // "not found" close after the name, not a GPU or driver nvidia-smi did not find.
    let near: String = after.chars().take(30).collect();
    let what = ["gpu", "device", "driver", "librar"].iter().any(|w| near.contains(w));
    !shell && (after.contains("command not found") || (near.contains("not found") && !what))
}

const M2_FORMAT: &str = "M.2 drives in words";
const WINDOWS_FORMAT: &str = "Windows in words";
const TF_FORMAT: &str = "TensorFlow on the GPU in words";

/// Words that put the text on Linux, inside WSL or in a container, where a Windows release it names is the host's.
const NOT_NATIVE_WINDOWS: [&str; 8] = ["wsl", "linux", "ubuntu", "docker", "colab", "kaggle", "conda-forge", "/usr/"];

/// A sentence naming native Windows by its release (`I have Windows 11.`, `on win10`), in a text that names no
/// Linux, WSL, container or notebook service: the machine runs Windows. At most 300 characters: a sentence.
fn windows_in_words(lines: &[String]) -> Option<usize> {
    let named = |l: &str| {
        let lower = l.to_ascii_lowercase();
        mentions(&lower, &["windows 10", "windows 11", "windows10", "windows11", "win10", "win11"])
    };
    let at = lines.iter().position(|l| l.len() <= 300 && named(l))?;
    let elsewhere = lines.iter().any(|l| {
        let lower = l.to_ascii_lowercase();
        mentions(&lower, &NOT_NATIVE_WINDOWS)
    });
    (!elsewhere).then_some(at)
}

/// cmd's prompt before a command (`D:\\darknet\\build\\darknet\\x64>darknet.exe detector train …`), in a text
/// that names no WSL: the program ran on Windows.
fn windows_prompt(lines: &[String]) -> Option<usize> {
    let prompt = |l: &str| {
        let l = l.trim_start();
        let b = l.as_bytes();
        b.len() > 4
            && b[0].is_ascii_alphabetic()
            && b[1] == b':'
            && b[2] == b'\\'
            && l.find('>').is_some_and(|at| l[at + 1..].trim_start().starts_with(|c: char| c.is_ascii_alphanumeric()))
    };
    let at = lines.iter().position(|l| l.len() <= 1000 && prompt(l))?;
    (!lines.iter().any(|l| l.to_ascii_lowercase().contains("wsl"))).then_some(at)
}

/// A sentence asking for TensorFlow on the GPU (`I can't get Tensorflow to detect my gpu`, `no tensorflow-gpu
/// version for CUDA 12.1`): `tensorflow` and `gpu` or `cuda` in one line of at most 300 characters; TensorFlow's
/// own log lines (`I tensorflow/stream_executor/…cc:44] Successfully opened dynamic library cudart64_101.dll`) are
/// its output, not a question; nor is code (`import tensorflow as tf; print(…('GPU'))`), and a sentence that names
/// TensorFlow's version (`TensorFlow 2.17 in a fresh venv`) gives the version, which its own readers judge.
fn tensorflow_gpu_in_words(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    let versioned = lower.match_indices("tensorflow").any(|(at, w)| {
        lower[at + w.len()..].trim_start_matches([' ', '-', '=', 'v']).starts_with(|c: char| c.is_ascii_digit())
    });
    line.len() <= 300
        && lower.contains("tensorflow")
        && (lower.contains("gpu") || lower.contains("cuda"))
        && !versioned
        && !mentions(&lower, &["tensorflow/", ".cc", ".py", "import ", "print(", "tf."])
}

/// A sentence saying M.2 (NVMe) drives sit in the machine's sockets (`I have all m.2 nvme slots populated`,
/// `with two NVMe SSDs in the M.2 slots`): `m.2`, `m2` or `nvme` beside a word of a drive or its socket being
/// used. At most 300 characters: a sentence, not a log (the kernel's nvme lines name no socket).
fn m2_drives_in_words(line: &str) -> bool {
    if line.len() > 300 {
        return false;
    }
    let lower = line.to_ascii_lowercase();
    let words: Vec<&str> =
        lower.split(|c: char| !c.is_ascii_alphanumeric() && c != '.').map(|w| w.trim_matches('.')).collect();
    let named = lower.contains("m.2") || words.iter().any(|w| matches!(*w, "m2" | "nvme" | "nvmes"));
    let used = ["populated", "installed", "occupied", "drive", "drives", "ssd", "ssds", "using", "used", "filled"]
        .iter()
        .any(|w| words.contains(w));
    named && used && !lower.contains("nvme0") && !lower.contains("nvme1")
}

const EGPU_FORMAT: &str = "a GPU said to be behind Thunderbolt or USB4";

/// A GPU said to sit behind Thunderbolt or USB4: the word eGPU, or a Thunderbolt or USB4 word (`Thunderbolt`, `TB3`,
/// `TB3/4`, `TB5`, `USB4`) beside an enclosure's (`dock`, `enclosure`, `box`) in one sentence of at most 400
/// characters, in a line of at most 4,000 ("an RTX 4080 SUPER … behind an Intel Thunderbolt 5 dock", "RTX 5060Ti +
/// WKG-L1970C TB3/4 dock").
fn egpu_in_words(line: &str) -> bool {
    line.len() <= 4000 && line.split(". ").any(egpu_in_sentence)
}

fn egpu_in_sentence(sentence: &str) -> bool {
    if sentence.len() > 400 {
        return false;
    }
    let lower = sentence.to_ascii_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphanumeric() && c != '-').collect();
    let egpu = words.iter().any(|w| matches!(*w, "egpu" | "egpus" | "e-gpu"));
    let tunnel = lower.contains("thunderbolt") || words.iter().any(|w| matches!(*w, "tb3" | "tb4" | "tb5" | "usb4"));
    let enclosure = words.iter().any(|w| matches!(*w, "dock" | "docks" | "enclosure" | "enclosures" | "box"));
    egpu || (tunnel && enclosure)
}

/// The first line `said` holds, noted as read in `format`: trimmed, at most 300 characters.
fn said_line(lines: &[String], facts: &mut Facts, format: &'static str, said: fn(&str) -> bool) -> Option<String> {
    let (i, line) = lines.iter().enumerate().find(|(_, l)| said(l))?;
    facts.saw(i, format);
    Some(line.trim().chars().take(300).collect())
}

/// What the words say of the build: a build leaving CUDA out, work falling back to the CPU, a GPU build wished for
/// (the wish another reader found, an install command asking for CUDA, comes first).
fn builds_in_words(lines: &[String], facts: &mut Facts) {
    facts.stated_build_without_cuda = said_line(lines, facts, BUILD_WITHOUT_CUDA_FORMAT, build_without_cuda_in_words)
        .or(facts.stated_build_without_cuda.take());
    facts.stated_cpu_fallback =
        said_line(lines, facts, CPU_FALLBACK_FORMAT, cpu_fallback_in_words).or(facts.stated_cpu_fallback.take());
    if facts.stated_cuda_wanted.is_none() {
        facts.stated_cuda_wanted = said_line(lines, facts, GPU_WANTED_FORMAT, gpu_wanted_in_words);
    }
}

/// The machine's GPU named as another vendor's, or said not to be NVIDIA's. The whole text is looked through for an
/// NVIDIA GPU only where a line names another vendor's, or says the machine has no NVIDIA GPU (that line itself
/// names one only to deny it).
fn other_vendor_or_none(lines: &[String], facts: &mut Facts) {
    let at = match lines.iter().position(|l| other_vendor_gpu_in_words(l)) {
        Some(i) if !lines.iter().any(|l| names_nvidia_gpu(l)) => Some(i),
        Some(_) => None,
        None => lines
            .iter()
            .position(|l| no_nvidia_gpu_in_words(l))
            .filter(|&i| !lines.iter().enumerate().any(|(j, l)| j != i && names_nvidia_gpu(l))),
    };
    if let Some(i) = at {
        facts.saw(i, OTHER_VENDOR_FORMAT);
        facts.stated_other_vendor_gpu = Some(lines[i].trim().chars().take(300).collect());
    }
}

/// Reads the first link said in words, and the machine's GPU count when the text says it in words and says one
/// count only.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    tools_in_words(lines, facts);
    facts.stated_m2_drives = said_line(lines, facts, M2_FORMAT, m2_drives_in_words).or(facts.stated_m2_drives.take());
    if facts.os.is_none()
        && let Some(i) = windows_prompt(lines).or_else(|| windows_in_words(lines))
    {
        facts.saw(i, WINDOWS_FORMAT);
        facts.os = Some(gpu_doctor_model::OsFamily::Windows);
    }
    facts.stated_tensorflow_gpu =
        said_line(lines, facts, TF_FORMAT, tensorflow_gpu_in_words).or(facts.stated_tensorflow_gpu.take());
    if let Some((i, question)) = cuda_question(lines) {
        facts.saw(i, QUESTION_FORMAT);
        facts.stated_cuda_question = Some(question);
    }
    facts.stated_no_gpu = said_line(lines, facts, NO_GPU_FORMAT, no_gpu_in_words).or(facts.stated_no_gpu.take());
    other_vendor_or_none(lines, facts);
    facts.stated_index_mismatch =
        said_line(lines, facts, INDEX_FORMAT, index_mismatch_in_words).or(facts.stated_index_mismatch.take());
    if let Some((i, orders)) = listed_order_mismatch(lines) {
        facts.saw(i, LISTED_ORDER_FORMAT);
        facts.listed_order_mismatch = Some(orders);
    }
    if facts.stated_cpu_torch.is_none()
        && let Some(i) = (0..lines.len()).find(|&i| cpu_torch_in_words(lines, i))
    {
        facts.saw(i, CPU_TORCH_FORMAT);
        facts.stated_cpu_torch = Some(lines[i].trim().chars().take(300).collect());
    }
    if let Some((i, cc, line)) = lines.iter().enumerate().find_map(|(i, l)| min_cc_in(l).map(|cc| (i, cc, l))) {
        facts.saw(i, MIN_CC_FORMAT);
        facts.stated_min_cc = Some((cc, line.trim().chars().take(300).collect()));
    }
    facts.stated_nouveau = said_line(lines, facts, NOUVEAU_FORMAT, nouveau_in_words).or(facts.stated_nouveau.take());
    facts.stated_nvidia_smi_missing = said_line(lines, facts, SMI_MISSING_FORMAT, nvidia_smi_missing_in_words)
        .or(facts.stated_nvidia_smi_missing.take());
    builds_in_words(lines, facts);
    if facts.multi_gpu_trouble.is_none()
        && let Some((i, sentence, (symptom, several_gpus))) = lines.iter().enumerate().find_map(|(i, l)| {
            // A line ending in a colon goes on in the next ("it hangs here:" / "when calling NVML to check NVLINK").
            let sentence = match lines.get(i + 1) {
                Some(next) if l.trim_end().ends_with(':') => format!("{} {}", l.trim(), next.trim()),
                _ => l.trim().to_owned(),
            };
            multi_gpu_trouble(&sentence).map(|t| (i, sentence, t))
        })
    {
        facts.saw(i, TROUBLE_FORMAT);
        let line = sentence.chars().take(300).collect();
        facts.multi_gpu_trouble = Some(MultiGpuTrouble { symptom, line, several_gpus });
    }
    // A paragraph is one line: its sentences are read two at a time ("… later they are reduced. Then they only set
    // to Gen3 during active use.").
    let said = lines.iter().enumerate().filter(|(_, l)| l.len() <= 4000).find_map(|(i, l)| {
        let sentences: Vec<&str> = l.split_inclusive(". ").collect();
        (0..sentences.len()).find_map(|s| {
            let two = sentences[s..sentences.len().min(s + 2)].concat();
            idle_downshift(two.trim()).then(|| (i, two.trim().to_owned()))
        })
    });
    if let Some((i, sentence)) = said {
        facts.saw(i, IDLE_FORMAT);
        facts.stated_idle_downshift = Some(sentence.chars().take(300).collect());
    } else if let Some(i) = idle_link_by_pstate(lines) {
        facts.saw(i, PSTATE_FORMAT);
        facts.stated_idle_downshift = Some(lines[i].trim().chars().take(300).collect());
    }
    facts.stated_busy_downshift =
        said_line(lines, facts, BUSY_FORMAT, busy_downshift).or(facts.stated_busy_downshift.take());
    facts.stated_egpu = said_line(lines, facts, EGPU_FORMAT, egpu_in_words).or(facts.stated_egpu.take());
    if facts.stated_link.is_none()
        && let Some((i, link)) = lines.iter().enumerate().find_map(|(i, l)| link_in_words(l).map(|link| (i, link)))
    {
        facts.saw(i, LINK_FORMAT);
        facts.stated_link = Some(link);
    }
    if facts.stated_width.is_none()
        && let Some((i, (now, card))) = lines.iter().enumerate().find_map(|(i, l)| width_in_words(l).map(|w| (i, w)))
    {
        facts.saw(i, WIDTH_FORMAT);
        facts.stated_width = Some((now, card, lines[i].trim().chars().take(300).collect()));
    }
    let mut found: Option<(usize, u32)> = None;
    for (i, line) in lines.iter().enumerate() {
        let Some(n) = count_in(line) else { continue };
        match found {
            None => found = Some((i, n)),
            Some((_, m)) if m == n => {}
            Some(_) => {
                found = None;
                break;
            }
        }
    }
    if let Some((at, n)) = found {
        facts.saw(at, FORMAT);
        facts.stated_gpu_count = Some(n);
    }
    if let Some((at, n)) =
        lines.iter().enumerate().filter_map(|(i, l)| used_in(l).map(|n| (i, n))).max_by_key(|&(_, n)| n)
    {
        facts.saw(at, USED_FORMAT);
        facts.stated_gpus_used = Some(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No GPU found, in a program's words (media-preview-generator#124's `No GPUs detected`) or a person's; a GPU
    /// named, or a long log line, is not this.
    #[test]
    fn no_gpu_found_said_in_words() {
        assert!(no_gpu_in_words("2025/12/23 15:39:05 | \u{2139}  - \u{274c} No GPUs detected"));
        assert!(no_gpu_in_words("The GPU not detected after the update"));
        // pytorch/pytorch#84069 and #4156 (verbatim); a build for a GPU, not a CUDA version, is not one.
        assert!(builds_for_a_cuda("No binaries for cuda 11.4"));
        assert!(builds_for_a_cuda(
            "Support for cuda 9.1 would be useful. For one thing, currently you can't download cuda 9.0 from NVIDIA's website."
        ));
        assert!(!builds_for_a_cuda("Support for cuda graphs in the allocator"));
        // espnet/warp-ctc#4, verbatim; a build that goes on to build its CUDA part is not one.
        assert!(build_without_cuda_in_words(
            "Torch was not built with CUDA support, not building warp-ctc GPU extensions."
        ));
        assert!(build_without_cuda_in_words("Skipping CUDA extension build"));
        // The demo's own line and a title in Chinese (both verbatim, first-sight set 28).
        assert!(cpu_fallback_in_words("No CUDA device found, inferring on CPU"));
        assert!(cpu_fallback_in_words(
            "v0.2.4\u{7248}\u{672c}\u{ff0c}\u{6267}\u{884c}CUDA_VISIBLE_DEVICES=5 python startup.py -a\u{ff0c}\u{53d1}\u{73b0}\u{56de}\u{7b54}\u{975e}\u{5e38}\u{6162}\u{ff0c}\u{67e5}\u{770b}\u{65e5}\u{5fd7}\u{53d1}\u{73b0}\u{4f7f}\u{7528}\u{7684}\u{662f}CPU"
        ));
        assert!(!cpu_fallback_in_words("The data loader runs on 8 CPU cores"));
        assert!(!build_without_cuda_in_words("building 'warpctc_pytorch._warp_ctc' extension with CUDA ops"));
        // microsoft/WSL#5848, verbatim.
        assert!(no_gpu_in_words("And after that, the WSL doesn't see the GPU on the laptop. "));
        assert!(!no_gpu_in_words("GPU 0: NVIDIA GeForce RTX 4090 detected"));
        assert!(!no_gpu_in_words(&format!("{} no gpu found", "x".repeat(400))));
    }

    /// GPU numbers said to disagree with nvidia-smi's: nanoporetech/bonito#120, NVIDIA/DIGITS#1358 and AlexeyAB/darknet#6982,
    /// verbatim. Other
    /// differences with nvidia-smi, its table, and numbers not set against each other are not this.
    #[test]
    fn gpu_numbers_said_to_disagree_with_nvidia_smi() {
        assert!(index_mismatch_in_words(
            "i found that bonito and nvidia-smi do not match the device number. I started"
        ));
        assert!(index_mismatch_in_words(
            "In DIGITS I selected GPU 2 and 3 for training, but the GPU utilisation showing in nvidia-smi says the \
             training is happening on GPU 0 and 1."
        ));
        // AlexeyAB/darknet#6982, verbatim.
        assert!(index_mismatch_in_words(
            "However the ids selection using --gpus option seems unconsistent with the ID nvidia-smi gave me."
        ));
        for line in [
            "nvidia-smi shows a different driver version than nvcc",
            "nvidia-smi shows GPU 0 and GPU 1 busy",
            "the order of the GPUs in nvidia-smi is by bus id",
            "| 0  NVIDIA GeForce RTX 3090 ... different |",
            "CUDA_VISIBLE_DEVICES=1 python train.py",
        ] {
            assert!(!index_mismatch_in_words(line), "{line}");
        }
        assert!(!index_mismatch_in_words(&"nvidia-smi numbers differ ".repeat(40)));
        // Two GPUs' numbers said reversed between programs, whichever they are (nemosminer/NemosMiner#393).
        assert!(index_mismatch_in_words(
            "Windows correctly determines that GPU0 is the 660, and GPU1 is the 1080, but using miner 3.0, 2.5.2, and \
             2.4.2, the 2 are reversed in there. (1080 becomes GPU0, 660 becomes GPU1)"
        ));
        assert!(!index_mismatch_in_words("the fans of GPU0 are reversed"));
        assert!(!index_mismatch_in_words("I swapped the cables"));
    }

    /// The floors programs print (TensorFlow's gpu_device.cc and PyTorch's torch/cuda/__init__.py as the catalogue
    /// quotes them; iperov/DeepFaceLab#264's and spacemeshos/gpu-post#15's lines, verbatim) and the shapes people
    /// repeat them in; a capability alone is no floor.
    #[test]
    fn a_programs_lowest_compute_capability() {
        let cc = |l: &str| min_cc_in(l).map(|c| c.to_string());
        for (line, want) in [
            ("No CUDA device found with minimum required compute capability 3.5", "3.5"),
            ("with Cuda compute capability 3.0. The minimum required Cuda capability is 3.5.", "3.5"),
            ("The minimum cuda capability supported by this library is 5.0.", "5.0"),
            ("[2020-09-08 11:15:32] GPU #0: FATAL: the 't' kernel requires 5.0 capability!", "5.0"),
            ("GPUs with compute capability below 7.0 are not supported.", "7.0"),
            ("FlashAttention requires a GPU with compute capability of at least 8.0", "8.0"),
            ("ollama supports CC 5.0 and above", "5.0"),
            // PhoenixMinerDevTeam/PhoenixMiner#34 (the device's own capability, then the floor).
            ("Can't use CUDA device 0: compute cap. 2.1 (at least 3.0 required)", "3.0"),
            // NVlabs/instant-ngp#13: tiny-cuda-nn's fully fused MLP (src/fully_fused_mlp.cu), the SM number.
            ("Turing Tensor Core operations must be run on a machine with compute capability at least 75", "7.5"),
        ] {
            assert_eq!(cc(line).as_deref(), Some(want), "{line}");
        }
        for line in [
            "Device 0: NVIDIA GeForce RTX 4070, compute capability 8.9, VMM: yes",
            "Found GPU0 Tesla K80 which is of cuda capability 3.7.",
            "My graphic card has a compute capability 3.0",
        ] {
            assert_eq!(cc(line), None, "{line}");
        }
        assert_eq!(cc(&"requires 5.0 capability ".repeat(200)), None);
    }

    /// trexminer/T-Rex#72: T-Rex's list (CUDA's fastest-first order) against lspci's bus order, the paste's last lspci
    /// line cut; llama.cpp's device list against `nvidia-smi -L`. The same order, one model, or lists of other
    /// models say nothing.
    #[test]
    fn a_programs_gpu_list_in_another_order_than_the_bus() {
        let lines = |t: &str| t.lines().map(str::to_owned).collect::<Vec<_>>();
        let trex = "20200830 20:11:31 GPU #0: Gigabyte GTX 1080 Ti\n20200830 20:11:31 GPU #1: EVGA GTX 1080 Ti\n\
                    20200830 20:11:31 GPU #2: ASUS GTX 1070\n\nWhereas the actual ordering by pci address is:\n\n\
                    02:00.0 VGA compatible controller: NVIDIA Corporation GP102 [GeForce GTX 1080 Ti] (rev a1)\n\
                    04:00.0 VGA compatible controller: NVIDIA Corporation GP104 [GeForce GTX 1070] (rev a1)\n\
                    0a:00.0 VGA compatible controller: NVIDIA Corporation GP102 [GeForce GTX 1080 Ti] (rev a1)\n";
        let (at, said) = listed_order_mismatch(&lines(trex)).expect("the orders differ");
        assert_eq!(at, 0);
        assert_eq!(
            said,
            "the program's GPUs 0, 1, … are 1080 Ti, 1080 Ti, 1070; in PCI bus order they are 1080 Ti, 1070, 1080 Ti"
        );
        let cut = trex.rsplit_once("0a:00.0").map(|(head, _)| head).unwrap_or(trex);
        assert!(listed_order_mismatch(&lines(cut)).is_some(), "one GPU short of the other list");
        let llama = "ggml_cuda_init: found 2 CUDA devices:\n  Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, \
                     VMM: yes\n  Device 1: NVIDIA GeForce RTX 3060, compute capability 8.6, VMM: yes\n\
                     GPU 0: NVIDIA GeForce RTX 3060 (UUID: GPU-1)\nGPU 1: NVIDIA GeForce RTX 3090 (UUID: GPU-2)\n";
        assert!(listed_order_mismatch(&lines(llama)).is_some());
        let same = llama
            .replace("GPU 0: NVIDIA GeForce RTX 3060", "GPU 0: X")
            .replace("GPU 1: NVIDIA GeForce RTX 3090", "GPU 1: NVIDIA GeForce RTX 3060")
            .replace("GPU 0: X", "GPU 0: NVIDIA GeForce RTX 3090");
        assert_eq!(listed_order_mismatch(&lines(&same)), None, "the same order");
        let one_model =
            trex.replace("ASUS GTX 1070", "ASUS GTX 1080 Ti").replace("[GeForce GTX 1070]", "[GeForce GTX 1080 Ti]");
        assert_eq!(listed_order_mismatch(&lines(&one_model)), None, "one model: no order to tell");
        let other = trex.replace("[GeForce GTX 1070]", "[GeForce RTX 3060]");
        assert_eq!(listed_order_mismatch(&lines(&other)), None, "other models");
        assert_eq!(listed_order_mismatch(&lines(&"GPU #0: GTX 1070\n".repeat(10_000))), None);
    }

    /// The writer saying the machine has no NVIDIA GPU (lllyasviel/Fooocus#3737, verbatim); a driver not had, a
    /// question, or someone else's machine are not.
    #[test]
    fn no_nvidia_gpu_said_in_words() {
        for line in [
            "Can't launch the application as it runs into error while loading saying that it cant find NVIDIA driver. \
             This is correct since I don't have NVIDIA GPU. But I can't imagine that the application cant be run \
             without that?",
            "I do not have an nvidia card",
            "My laptop doesn't have a Nvidia GPU",
        ] {
            assert!(no_nvidia_gpu_in_words(line), "{line}");
        }
        for line in [
            "I don't have the NVIDIA driver installed",
            "Do I need it if I don't have NVIDIA GPU?",
            "the server does not have an NVIDIA GPU attached",
            "I have an NVIDIA GPU",
        ] {
            assert!(!no_nvidia_gpu_in_words(line), "{line}");
        }
        let said = |t: &str| Facts::read_by(read, t).stated_other_vendor_gpu;
        assert!(said("This is correct since I don't have NVIDIA GPU.\n").is_some());
        assert!(said("This is correct since I don't have NVIDIA GPU.\nGPU 0: NVIDIA GeForce RTX 3060\n").is_none());
    }

    fn read_text(text: &str) -> Option<u32> {
        Facts::read_by(read, text).stated_gpu_count
    }

    /// TonyXuQAQ/Topo-boundary#1, the reporter's step in a container started without the GPU: nvidia-smi
    /// missing said in words. The shell's own line is the catalogue's row, and nvidia-smi not finding a GPU
    /// is not this.
    #[test]
    fn nvidia_smi_missing_said_in_words_is_read() {
        let said = |t: &str| Facts::read_by(read, t).stated_nvidia_smi_missing;
        assert_eq!(
            said("3. type `nvidia-smi` but command not found.").as_deref(),
            Some("3. type `nvidia-smi` but command not found.")
        );
        assert_eq!(said("bash: nvidia-smi: command not found"), None);
        assert_eq!(said("nvidia-smi: not found"), None);
        assert_eq!(said("nvidia-smi says GPU not found"), None);
        assert_eq!(said("nvidia-smi: No devices were found"), None);
        assert_eq!(said(&format!("nvidia-smi {} command not found", "x".repeat(400))), None);
    }

    /// M.2 drives said in words: the ROG forum's (rog-forum.asus.com t5/…/944193: "adding 2 SK hynix Platinum P41 2TB
    /// drives into the NVME slots"; 903150: "I have all m.2 nvme slots populated"); a kernel log's nvme device and a
    /// sentence that names no drive in use are not.
    #[test]
    fn m2_drives_said_in_words_are_read() {
        let said = |t: &str| Facts::read_by(read, t).stated_m2_drives;
        assert!(said("I have all m.2 nvme slots populated including the dimm.2 card").is_some());
        assert!(said("was thinking about adding 2 SK hynix Platinum P41 2TB drives into the NVME slots").is_some());
        assert!(said("[    1.234] nvme nvme0: 8/0/0 default/read/poll queues").is_none());
        assert!(said("Which M.2 slot shares lanes with the GPU?").is_none());
        assert!(said(&format!("{} m.2 drive", "x".repeat(300))).is_none());
    }

    /// A GPU behind Thunderbolt or USB4 said in words (tinygrad/tinygrad#18215: "behind an Intel Thunderbolt 5 dock"
    /// in a long paragraph; NVIDIA/open-gpu-kernel-modules#974: "RTX 5060Ti + WKG-L1970C TB3/4 dock"); a Thunderbolt
    /// word without an enclosure, or a dock without a tunnel, is not.
    #[test]
    fn a_gpu_behind_thunderbolt_said_in_words_is_read() {
        let said = |t: &str| Facts::read_by(read, t).stated_egpu;
        let long = format!(
            "On an RTX 4080 SUPER (AD103, `10de:2702`) behind an Intel Thunderbolt 5 dock on a Mac Studio, GSP boot \
             fails. {}",
            "Measured cause: every register reads 0xffffffff. ".repeat(8)
        );
        assert!(said(&long).is_some());
        assert!(
            said("For anyone struggling with RTX 5060Ti + WKG-L1970C TB3/4 dock, limiting the PCIe to Gen2 helps")
                .is_some()
        );
        assert!(said("My eGPU is a Razer Core X with a 3090").is_some());
        assert!(said("The laptop has two Thunderbolt ports").is_none());
        assert!(said("The GPU sits in the docking station of a server rack").is_none());
        assert!(said(&format!("{} eGPU", "x ".repeat(2100))).is_none());
    }

    /// Native Windows named by its release, unless the text names WSL, Linux or a container; TensorFlow asked for
    /// on the GPU (tensorflow/tensorflow#60206, verbatim lines).
    #[test]
    fn windows_and_tensorflow_on_the_gpu_said_in_words_are_read() {
        let f = Facts::read_by(read, "I can't get Tensorflow to detect my gpu in Python.\nI have Windows 11.\n");
        assert_eq!(f.os, Some(gpu_doctor_model::OsFamily::Windows));
        assert_eq!(f.stated_tensorflow_gpu.as_deref(), Some("I can't get Tensorflow to detect my gpu in Python."));
        let wsl = Facts::read_by(read, "I have Windows 11 and run Ubuntu in WSL2.\n");
        assert_eq!(wsl.os, None);
        assert_eq!(Facts::read_by(read, "TensorFlow 2.15 works fine here.\n").stated_tensorflow_gpu, None);
        // cmd's prompt (AlexeyAB/darknet#1070, verbatim); PowerShell's `PS C:\\…>` is taken off by the cleaning.
        let os = |t: &str| Facts::read_by(read, t).os;
        let windows = Some(gpu_doctor_model::OsFamily::Windows);
        assert_eq!(os("D:\\darknet\\build\\darknet\\x64>darknet.exe detector train cfg/obj.data\n"), windows);
        assert_eq!(os("C:\\Users\\me> \n"), None);
        assert_eq!(os("C:\\work>wsl nvidia-smi\n"), None);
        // tensorflow/tensorflow#40988's log line: TensorFlow's output, not a question.
        let log = "2020-07-01 18:46:30.457181: I tensorflow/stream_executor/platform/default/dso_loader.cc:44] \
                   Successfully opened dynamic library cudart64_101.dll";
        assert_eq!(Facts::read_by(read, log).stated_tensorflow_gpu, None);
        // Code, and a sentence that gives the version, are not the question.
        let code = "$ python -c \"import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\"";
        assert_eq!(Facts::read_by(read, code).stated_tensorflow_gpu, None);
        let versioned = "TensorFlow 2.17 in a fresh venv: version, build info, GPU list and the device log.";
        assert_eq!(Facts::read_by(read, versioned).stated_tensorflow_gpu, None);
    }

    /// mazurowski-lab/finetune-SAM#18, the reporter: a count with a possessive verb.
    #[test]
    fn a_count_the_machine_has_is_read() {
        assert_eq!(read_text("I have two GPUs on the machine and torch.cuda.is_available outputs True."), Some(2));
        assert_eq!(read_text("I only have one GPU."), Some(1));
        assert_eq!(read_text("the server only has 1 GPU"), Some(1));
        assert_eq!(read_text("on a system with a single GPU the script fails"), Some(1));
        assert_eq!(read_text("Laptops with just one GPU"), Some(1));
        assert_eq!(read_text("It is a single-GPU machine"), Some(1));
        assert_eq!(read_text("my 4-GPU node"), Some(4));
    }

    /// The GPUs a run uses, said in words or by torchrun, are the least the machine has:
    /// Lightning-AI/pytorch-lightning#16614's title, brandleyzhou/DIFFNet#10's command (both verbatim); one GPU,
    /// a run over nodes, and a count of something else are not taken.
    #[test]
    fn the_gpus_a_run_uses_are_read_as_the_least_the_machine_has() {
        let used = |t: &str| Facts::read_by(read, t).stated_gpus_used;
        assert_eq!(used("Freezed when running the example code with more than 2 GPUs (DDP)"), Some(3));
        assert_eq!(
            used("python -m torch.distributed.launch --nproc_per_node=2 train.py --split eigen_zhou --batch_size 2"),
            Some(2)
        );
        assert_eq!(used("the model stops when using 4 or more GPUs"), Some(4));
        assert_eq!(used("torchrun --nproc-per-node 8 train.py"), Some(8));
        assert_eq!(used("it works when using 1 GPU"), None);
        assert_eq!(used("training on 64 GPUs across 8 nodes"), None);
        assert_eq!(used("torchrun --nnodes=2 --nproc_per_node=4 train.py"), None);
        assert_eq!(used("torchrun --nnodes=1 --nproc_per_node=4 train.py"), Some(4), "one node is this machine");
        assert_eq!(used("using 2 threads on the GPU"), None);
        assert_eq!(used("runs on one GPU\nlater with 2 GPUs it hangs"), Some(2));
    }

    /// A CUDA version quoted for nvidia-smi or nvcc in a sentence is that tool's: the driver's level and nvcc's
    /// release. Samples (verbatim, threads that are not corpus cases): phohenecker/switch-cuda#4, onnx/onnx#3491; a
    /// version of another program, a driver version, or one past the sentence's end is not taken.
    #[test]
    fn cuda_versions_quoted_for_nvidia_smi_and_nvcc_are_theirs() {
        let tools = |t: &str| tool_versions(t);
        let switch = "After I run the ```source switch-cuda.sh 11.3```, it output that the version has switched to 11.3, \
                      and ```nvcc -V``` shows 11.3 also. But ```nvidia-smi``` still shows the version of tookit be 12.2";
        assert_eq!(tools(switch), [(Tool::Nvcc, CudaVersion::new(11, 3)), (Tool::Smi, CudaVersion::new(12, 2))]);
        let onnx = "I install nvidia driver 460.73.01 and use the \"watch nvidia-smi\" to see cuda version 11.2";
        assert_eq!(tools(onnx), [(Tool::Smi, CudaVersion::new(11, 2))]);
        assert_eq!(tools("`nvcc --version`: release 10.1, V10.1.243"), [(Tool::Nvcc, CudaVersion::new(10, 1))]);
        assert_eq!(tools("nvidia-smi shows driver 535.104.05 and CUDA 12.2"), [(Tool::Smi, CudaVersion::new(12, 2))]);
        assert_eq!(tools("nvcc fails with gcc 11.4 here"), []);
        assert_eq!(tools("nvidia-smi works. Ubuntu 22.04, CUDA 12.1"), []);
        assert_eq!(tools(&format!("nvcc shows 11.8 {}", "x".repeat(2000))), []);
        let f = Facts::read_by(read, "nvidia-smi says CUDA 12.4\nnvcc -V says 12.1");
        assert_eq!(f.stated_driver_cuda.map(|(c, _)| c), Some(CudaVersion::new(12, 4)));
        assert_eq!(f.toolkits.iter().filter_map(|t| t.version).collect::<Vec<_>>(), [CudaVersion::new(12, 1)]);
    }

    /// A run over several GPUs said to hang: the titles of brandleyzhou/DIFFNet#10, Lightning-AI/pytorch-lightning#19425
    /// and #16614 and NVIDIA/nccl#1999 (verbatim); a hang of one process is not, nor does a hang or NaN of a run over
    /// nodes put several GPUs of one machine in the work.
    #[test]
    fn a_multi_gpu_run_said_to_hang_is_read() {
        use MultiGpuSymptom::{Hang, PeerTestFailed, Slow, WrongValues};
        assert_eq!(multi_gpu_trouble("Multi-GPU training hangs"), Some((Hang, true)));
        assert_eq!(multi_gpu_trouble("Single machine multi-gpus ddp training stuck"), Some((Hang, true)));
        assert_eq!(
            multi_gpu_trouble("Freezed when running the example code with more than 2 GPUs (DDP)"),
            Some((Hang, true))
        );
        assert_eq!(multi_gpu_trouble("```tf.distribute.MirroredStrategy``` is stuck."), Some((Hang, false)));
        assert_eq!(
            multi_gpu_trouble(
                "[Issue]: NCCL hangs during AllReduce with P2P enabled on dual RTX Pro 6000's (Blackwells)"
            ),
            Some((Hang, true))
        );
        assert_eq!(
            multi_gpu_trouble("it stucks with multi-GPUs (2 or 4 A6000), but works with a single GPU."),
            Some((Hang, true))
        );
        assert_eq!(multi_gpu_trouble("the notebook hangs when I import torch"), None);
        assert_eq!(multi_gpu_trouble(&format!("DDP hangs {}", "x".repeat(400))), None);
        assert_eq!(multi_gpu_trouble("NCCL hangs when training across 2 nodes with 8 GPUs each"), Some((Hang, false)));
        // Wrong values, a failed peer test, slow work: tinygrad/open-gpu-kernel-modules#18 (legraphista, verbatim),
        // the titles of aikitoria/open-gpu-kernel-modules#25 (no failure word) and #15, NVIDIA/caffe#10 (NVIDIA's
        // note on ACS, verbatim: advice, not a symptom).
        assert_eq!(
            multi_gpu_trouble(
                "When moving data between GPUs via P2P, I was getting IO_PAGE_FAULT and the copied tensor would be allocated but zeroed out."
            ),
            Some((WrongValues, true))
        );
        assert_eq!(multi_gpu_trouble("P2P Verification error"), None);
        assert_eq!(multi_gpu_trouble("P2P test failed on 2*5090 + AMD Turin Server"), Some((PeerTestFailed, true)));
        assert_eq!(
            multi_gpu_trouble(
                "If lower than expected performance is observed when executing a training and DIGITS has been configured to use multiple GPUs, verify that PCI Express Access Control Services (ACS) are disabled."
            ),
            None
        );
        // The words of stackoverflow.com/questions/59690008 (multi-gpu-peer-to-peer-slow-between-particular-pairs),
        // which NVIDIA/nccl#1086's fix cites beside NCCL's ACS section, and NVIDIA/nccl#489 (kingder, verbatim).
        assert_eq!(multi_gpu_trouble("Multi-GPU peer to peer slow between particular pairs"), Some((Slow, true)));
        assert_eq!(
            multi_gpu_trouble(
                "we previously encountered hangs / slow when run p2pBandwidthLatencyTest on a machine with 8 GPUs with no NVLINKs and IOMMU enabled"
            ),
            Some((Hang, true))
        );
        assert_eq!(multi_gpu_trouble("Training on multiple GPUs is much slower than on one."), None);
        assert_eq!(multi_gpu_trouble("DDP training is slower than one GPU"), None);
        // NVIDIA/nccl#557's description (verbatim): a hang that names NVLink.
        assert_eq!(
            multi_gpu_trouble(
                "Horovod was not working for me. It was getting stuck in variable broadcast step. I have isolated the problem to NCCL/NVLINK. Here are the details. Please help!!"
            ),
            Some((Hang, true))
        );
        // A count before a GPU model puts several GPUs in the work, as before `GPUs`: sgl-project/sglang#4723's title
        // (verbatim; its p2p word alone already did); a comparison of two machines' speed is no peer traffic
        // (pytorch/pytorch#48714's title, verbatim).
        assert_eq!(
            multi_gpu_trouble(
                "[Bug] After adding --enable-p2p-check, why is the speed of running on two 4090s slower than on a single one"
            ),
            Some((Slow, true))
        );
        assert_eq!(multi_gpu_trouble("RTX 3090 setup vs 2x RTX 2080TI setup slower? Help.."), None);
        assert_eq!(multi_gpu_trouble("my loss is nan after a few steps"), None);
        assert_eq!(multi_gpu_trouble("the loss is nan on 2 nodes with multiple GPUs"), None);
    }

    /// GPU models after a count (`dual 4090`, `2x RTX 3090`, `8 RTX3090 GPUs` of NVIDIA/nccl#1127, `4 A100s`) and
    /// two GPUs named by index (NVIDIA/cuda-samples#392, verbatim: "The spec says GPU0-GPU1 NVlink bandwidth  is
    /// 300 GB/s."); a year, a resolution or one GPU's index is neither.
    #[test]
    fn gpu_models_and_indices_put_several_gpus_in_a_line() {
        for w in ["4090", "4090s", "rtx", "1080ti", "2080", "a100s", "v100", "h100", "a6000", "k80", "geforce"] {
            assert!(is_gpu_model(Some(&w)), "{w}");
        }
        for w in ["2024", "2020", "1920", "1080p", "x", "a1", "gpus", "h1000000", "9090", "11"] {
            assert!(!is_gpu_model(Some(&w)), "{w}");
        }
        assert_eq!(times("2x"), Some(2));
        assert_eq!(times("1x"), None);
        assert_eq!(times("x"), None);
        assert!(two_gpu_indices("the spec says gpu0-gpu1 nvlink bandwidth  is 300 gb/s."));
        assert!(two_gpu_indices("between gpu 2 and gpu 3"));
        assert!(!two_gpu_indices("gpu0 is slow, gpu0 again"));
        assert!(!two_gpu_indices("gpu 12345 and gpu"));
    }

    /// nouveau said present: negativo17/nvidia-driver#75's and #37's words and gridhead/nvidia-auto-installer-for-
    /// fedora-linux#149's (verbatim); asked to be blacklisted (NVIDIA/ansible-role-nvidia-driver#44's title) or
    /// said disabled is not, nor is nouveau's own kernel line.
    #[test]
    fn nouveau_said_present_is_read() {
        for yes in [
            "Hi! I just upgraded an f27 to f29 and it seems that nvidia cannot be loaded because nouveau is always present an loaded!! (and no package with nouveau is installed)",
            "Nouveau driver is still loaded despite apparently successful install of nvidia binaries, Fedora 27",
            "After (apparently successful) driver installation, `lsmod` shows that the `nouveau` kernel module is still loaded. Is this expected? Doesn't that cause conflicts? Thanks for any clarification.",
        ] {
            assert!(nouveau_in_words(yes), "{yes}");
        }
        for no in [
            "please blacklist nouveau driver",
            "I disabled nouveau and installed the driver",
            "[    5.436312] nouveau 0000:01:00.0: NVIDIA GM204 (124020a1)",
            "\tKernel driver in use: nouveau",
            "the nvidia driver is installed",
        ] {
            assert!(!nouveau_in_words(no), "{no}");
        }
    }

    /// A link said to drop its generation while idle: NVIDIA/open-gpu-kernel-modules#1010 (tuxblk) and #731
    /// (nju-zjx), verbatim; a link said to be slow under load, or a GPU said to be idle, is not.
    #[test]
    fn a_link_said_to_come_down_while_busy_is_read() {
        // pop-os/system76-power#393 (verbatim), and lines written for the test.
        assert!(busy_downshift(
            "Play any game on the nvidia graphics card in fullscreen and wait for the PCI Express lane downgrade to occur. (EVEN ON AC)"
        ));
        assert!(busy_downshift("During training the link drops to Gen1 x16."));
        assert!(!busy_downshift(
            "Observed PCIe link dropping to Gen1 (2.5 GT/s) while idle, back to Gen4 during training."
        ));
        assert!(!busy_downshift("The training loss goes down while generating samples on the plane dataset."));
        assert!(!busy_downshift(&format!("During training the link drops to Gen1 {}", "x".repeat(400))));
        let f = Facts::read_by(read, "Play any game and wait for the PCI Express lane downgrade to occur.");
        assert_eq!(
            f.stated_busy_downshift.as_deref(),
            Some("Play any game and wait for the PCI Express lane downgrade to occur.")
        );
    }

    #[test]
    fn a_link_said_to_drop_while_idle_is_read() {
        assert!(idle_downshift("Observed PCIe link dropping to Gen1 (2.5 GT/s) while idle."));
        assert!(idle_downshift(
            "Thanks for your contributions to open source. We know that when there are no tasks on the GPU, it goes into an idle state, and during this time, if you check the GPU's bandwidth with lspci, it will show as Gen1."
        ));
        assert!(!idle_downshift("However under load the link immediately retrains to Gen5 (32 GT/s x16)."));
        assert!(!idle_downshift("The GPU is idle at 0% utilization."));
        assert!(!idle_downshift(&format!("PCIe link dropping while idle {}", "x".repeat(400))));
        assert!(!idle_downshift("The PCIe link drops to x8 under load."), "a link down under load is no idle state");
        // In a paragraph, read two sentences at a time: tuxblk's two lines of #1010 as one paragraph.
        let paragraph = "Observed PCIe link dropping to Gen1 (2.5 GT/s) while idle. However under load the link immediately retrains to Gen5 (32 GT/s x16).";
        let f = Facts::read_by(read, paragraph);
        assert_eq!(f.stated_idle_downshift.as_deref(), Some(paragraph));
    }

    /// A question whether the machine's CUDA must match or be installed for a framework: cpbotha/ansible-ubu-to-pytorch#1
    /// (its title and description), ShenhanQian/GaussianAvatars#32 and sasha0552/vllm-ci#4 (verbatim); a question without a framework, or
    /// a framework without CUDA, is not one.
    #[test]
    fn a_question_whether_cuda_must_match_a_framework_is_read() {
        let asked = |t: &str| Facts::read_by(read, t).stated_cuda_question;
        assert_eq!(
            asked("Why do you need to install CUDA?\nPytorch should install it, together with cudnn.").as_deref(),
            Some("Why do you need to install CUDA?")
        );
        assert!(
            asked("Why do you need to install cuda without writing pytorch and without specifying the version?")
                .is_some()
        );
        // A sentence that nvcc's CUDA and nvidia-smi's differ: john-hewitt/backpacks-flash-attn#2's title and
        // phohenecker/switch-cuda#4's description (verbatim); naming both without a contrast is not one.
        assert!(asked("CUDA version in nvcc -V and nvidia-smi different").is_some());
        assert!(
            asked("After I run the ```source switch-cuda.sh 11.3```, it output that the version has switched to 11.3, and ```nvcc -V``` shows 11.3 also. But ```nvidia-smi``` still shows the version of tookit be 12.2")
                .is_some()
        );
        // sasha0552/vllm-ci#4 (verbatim): whether to reinstall torch for the machine's CUDA.
        assert!(
            asked("A bit confused - do I have to reinstall torch with cu118 after the initial installation ?\nif I have P40 (11.8 cuda).")
                .is_some()
        );
        assert_eq!(asked("I ran nvidia-smi and nvcc --version."), None);
        assert_eq!(asked("Does this need CUDA 12?"), None);
        assert_eq!(asked("How do I install torch?"), None);
        assert_eq!(asked("CUDA and torch are installed. It crashes."), None);
    }

    /// A link width said in a sentence: dartraiden/NVIDIA-patcher#191's question (verbatim) and the rig report
    /// of noonghunna/club-3090's `scripts/report.sh` (its PCIe line, as a report on a healthy rig printed it);
    /// yandex/YaLM-100B#24 (verbatim) asks about slots, and widths joined by a comma are two slots.
    #[test]
    fn a_link_width_said_in_words_is_the_link_against_the_card() {
        let width = |t: &str| Facts::read_by(read, t).stated_width.map(|(now, card, _)| (now, card));
        let ru_en = "ENG: Why can a video card run 8 PCIe lanes instead of 16 lanes?";
        assert_eq!(width(ru_en), Some((8, 16)));
        assert_eq!(
            width("  - **PCIe:** x4 lanes negotiated (GPU max x16, Gen up to 3) | bus 00000000:04:00.0"),
            Some((4, 16))
        );
        assert_eq!(width("  - **PCIe:** x16 lanes negotiated (GPU max x16, Gen up to 3) | bus 00000000:17:00.0"), None);
        // Characters of several bytes around the widths (report.sh's `⚠` and `—`).
        assert_eq!(width("⚠ PCIe — x4 lanes — negotiated ⚠ (GPU max x16 ⚠"), Some((4, 16)));
        let question = "If connect them to PCI x1, how much will performance decrease and does PCI x1 or PCI x16 affect in \
                        this particular case?";
        assert_eq!(width(question), None);
        assert_eq!(width("- Asymmetric consumer mobos (one slot CPU x16, another chipset x4)"), None);
        // Not about a link: a count of cards.
        assert_eq!(width("I run x2 RTX 3090 instead of x4 A100"), None);
        // The kernel's own line is the kernel reader's.
        let kernel = "pci 0000:01:00.0: 8.000 Gb/s available PCIe bandwidth, limited by 2.5 GT/s PCIe x4 link at \
                      0000:00:1c.4 (capable of 126.016 Gb/s with 8.0 GT/s PCIe x16 link)";
        assert_eq!(width(kernel), None);
    }

    /// A link said in a sentence with two rates (lines written for the test): the lower rate is the link now, the
    /// higher its maximum; a line of a program that states both, or of one rate, is not.
    #[test]
    fn a_link_speed_in_words_is_the_link_now_and_its_maximum() {
        let link = |t: &str| Facts::read_by(read, t).stated_link;
        assert_eq!(link("My card runs at 2.5 GT/s on a slot with 8GT/s available."), Some((1, 3)));
        assert_eq!(link("It is stuck at 5 GT/s instead of 16 GT/s"), Some((2, 4)));
        assert_eq!(link("LnkSta: Speed 2.5GT/s (downgraded), Width x16 (ok) 8GT/s"), None);
        assert_eq!(
            link(
                "pci 0000:01:00.0: 4.000 Gb/s available PCIe bandwidth, limited by 2.5 GT/s PCIe x1 link at 0000:00:1c.2 (capable of 126.016 Gb/s with 8.0 GT/s PCIe x16 link)"
            ),
            None
        );
        assert_eq!(link("The GPU runs at 8 GT/s."), None);
        assert_eq!(
            link("2.5 GT/s, 5 GT/s and 8 GT/s are PCIe 1, 2 and 3"),
            None,
            "three rates say nothing of one link"
        );
        assert_eq!(link("runs at 7 GT/s of 8 GT/s"), None, "not a PCIe rate");
    }

    #[test]
    fn how_many_a_run_uses_is_not_a_count_of_the_machine() {
        assert_eq!(read_text("to train on a single GPU, add os.environ[\"CUDA_VISIBLE_DEVICES\"] = \"0\""), None);
        assert_eq!(read_text("training with 1 GPU takes two days"), None);
        assert_eq!(read_text("I have an RTX 3090 GPU"), None);
        assert_eq!(read_text("we have 64 GPUs in the cluster"), None, "more than one machine holds");
        assert_eq!(read_text("I have one GPU.\nThe other box has two GPUs.\n"), None, "two counts: none");
        assert_eq!(read_text("I have one GPU.\nyes, I only have 1 GPU\n"), Some(1));
    }

    #[test]
    fn huge_and_odd_input_is_read_in_linear_time() {
        assert_eq!(read_text(&"have only only only ".repeat(100_000)), None);
        assert_eq!(read_text(&"a single-".repeat(100_000)), None);
        assert_eq!(read_text("has"), None);
        assert_eq!(read_text("with gpus"), None);
    }

    /// A CPU build of torch said in words, in the sentences of SupreethN/HOISTFormer#3 (the conda command two lines
    /// before it), octimot/StoryToolkitAI#170, kyutai-labs/delayed-streams-modeling#131 and pytorch/pytorch#32369,
    /// verbatim; sentences that turn it round, ask, or leave torch out are not.
    #[test]
    fn a_cpu_build_of_torch_said_in_words_is_kept_with_its_line() {
        let said = |text: &str| Facts::read_by(read, text).stated_cpu_torch;
        let conda = "```bash\nconda install pytorch==1.9.0 torchvision==0.10.0 cudatoolkit=11.1 -c pytorch -c nvidia\n```\n\n\
                     This command installs cpu version instead of cuda.\n";
        assert_eq!(said(conda).as_deref(), Some("This command installs cpu version instead of cuda."));
        for line in [
            "3. You can see the installation of storytookitai removes Torch with CUDA 2.21 cu118 and replaces it with \
             Torch without CUDA version 2.1.2",
            "Unsure, if this is an issue with windows only. But when trying to directly use `uvx --with moshi`, the \
             wrong pytorch version is installed. It defaults to the [cpu] version even when having cuda installed.",
            "Today I installed it on a new environment, env2, requested Pytorch Stable 1.4.0 with CUDA 10.1 but \
             obtained Pytorch with cpu",
            // haoheliu/AudioLDM#5 and vladmandic/automatic#409, verbatim.
            "I followed the instructions but kept getting complaints that torch was not compiled with CUDA support.",
            "I have an RTX2060 6Gb, but the generation process starts on the CPU, in the \"System Info\" section it says \
             \"2.0.0+cpu Autocast half\" and an empty stash in the \"GPU\".",
            // raryelcostasouza/pyTranscriber#56, verbatim.
            "The openai-whisper package installed Torch without the CUDA version, but I installed Torch using",
            // zyddnys/manga-image-translator#210, verbatim.
            "requirements\u{91cc}torch install\u{65f6}\u{9ed8}\u{8ba4}\u{662f}cpu\u{7248}\u{672c}\u{ff0c}\u{6240}\u{4ee5}cuda.is_available()\u{53ea}\u{4f1a}\u{8fd4}\u{56de}false",
        ] {
            assert_eq!(said(line).as_deref(), Some(line), "{line}");
        }
        for line in [
            "pip installs the cuda version of torch instead of the cpu version",
            "I uninstalled the cpu version of torch",
            "I did not install the cpu version of torch",
            "Is the installed torch the cpu version?",
            "torch 2.1.0+cpu is installed",
            "This command installs cpu version instead of cuda.",
            "pytorch works with the cpu version of numpy",
            "I installed torch without the conda package",
            "torchvision 0.15.1+cpu is what pip gave",
            "it says \"0.15.1+cpu\"",
            "PyTorch version: 2.6.0+cpu",
            "[pip3] torch==2.6.0+cpu",
            "AssertionError: Torch not compiled with CUDA enabled",
        ] {
            assert_eq!(said(line), None, "{line}");
        }
        assert_eq!(said(&"installed the cpu ".repeat(50_000)), None, "a huge line is no sentence");
    }
}
