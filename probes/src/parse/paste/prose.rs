//! What people say in words about the machine that no program printed: how many GPUs it has ("I have
//! two GPUs on the machine", "on systems with 1 GPU", "a single-GPU server"). A count is read only
//! where the words say the machine has it (a possessive verb, a machine noun, a `single-GPU machine`
//! compound), not where they say how many a run uses ("train on one GPU"); two different counts read
//! as none.
//!
//! A PCIe link said in a sentence with two rates (`runs at 2.5 GT/s on a lane with 8GT/s available`) is the
//! link now and its maximum, for the one GPU of the text.
//!
//! Sample (a thread that is not a corpus case): mazurowski-lab/finetune-SAM#18 ("I have two GPUs on
//! the machine and torch.cuda.is_available outputs True").

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

fn is_gpu(word: Option<&&str>) -> bool {
    matches!(word, Some(&("gpu" | "gpus" | "gpu's")))
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

/// Reads the first link said in words, and the machine's GPU count when the text says it in words and says one
/// count only.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    if facts.stated_link.is_none()
        && let Some((i, link)) = lines.iter().enumerate().find_map(|(i, l)| link_in_words(l).map(|link| (i, link)))
    {
        facts.saw(i, LINK_FORMAT);
        facts.stated_link = Some(link);
    }
    let mut found: Option<(usize, u32)> = None;
    for (i, line) in lines.iter().enumerate() {
        let Some(n) = count_in(line) else { continue };
        match found {
            None => found = Some((i, n)),
            Some((_, m)) if m == n => {}
            Some(_) => return,
        }
    }
    if let Some((at, n)) = found {
        facts.saw(at, FORMAT);
        facts.stated_gpu_count = Some(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_text(text: &str) -> Option<u32> {
        Facts::read_by(read, text).stated_gpu_count
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
}
