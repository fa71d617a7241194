//! Known error and warning lines (`assets/compat/errors.toml`) found in pasted text.
//!
//! Each line is matched together with the line after it (joined by a newline; by a space where the
//! next line continues a sentence or opens a parenthesis; with nothing between where a console's wrap
//! cut a word), so a message that wraps keeps its values; a match must start on the first of the two
//! lines.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, OnceLock};

use regex::{Regex, RegexSet, RegexSetBuilder};

use gpu_doctor_kb::Kb;
use gpu_doctor_model::ObservedMessage;

/// The cache the set's lazy DFA may use. It must hold the DFA's minimum for the whole catalogue, a
/// minimum that grows with the rows: past it the regex crate silently runs the set on its PikeVM,
/// hundreds of times slower on every line (the default 2 MiB held 172 rows, not 176). With 64 MiB
/// the DFA also keeps the states 8 MiB of varied text needs (`docs/performance.md`: 1.0 s, against
/// 9.0 s at 2 MiB). The cache grows only as far as the text needs.
const SET_DFA_CACHE_BYTES: usize = 64 << 20;

/// The known messages' patterns, compiled.
#[derive(Debug)]
pub(crate) struct Matcher {
    /// Every row's pattern at once, where the prefilter could not be built; `None` where it was, or
    /// where the set could not be built either (its size limits), and each row is then tried on its
    /// own: slower, but no message is lost.
    set: Option<RegexSet>,
    /// The rows' required literals, for trying only the rows whose literal a line holds; `None`
    /// where it could not be built, and the set is used.
    prefilter: Option<Prefilter>,
    /// (message id, its pattern), in the order of `set` and of the prefilter's row indices.
    rows: Vec<(String, Regex)>,
    /// The CUDA runtime's rows by the `cudaError_t` code their emitter gives (`cudaErrorInsufficientDriver (35)`),
    /// for a code printed as a number ([`numbered_cuda_error`]).
    codes: BTreeMap<u32, String>,
}

/// A row's pattern, also matching the error names its emitter gives (`CUDA runtime,
/// cudaErrorInsufficientDriver (35); driver API CUDA_ERROR_…`): programs print the runtime's and the
/// driver API's names where `cudaGetErrorString` would print the words (`b'cudaErrorInsufficientDriver'`,
/// `CUresult CUDA_ERROR_NO_DEVICE`), so each name is a spelling of the same message. A name written as
/// a family (`cudaErrorMps*`) is not one. Only the CUDA runtime's own rows: another program that
/// names the error it got (ethminer's `Insufficient CUDA driver`) prints its own words.
fn with_error_names(pattern: &str, emitter: &str) -> String {
    let mut names: Vec<&str> = Vec::new();
    if !emitter.starts_with("CUDA runtime") {
        return pattern.to_owned();
    }
    for prefix in ["cudaError", "CUDA_ERROR_"] {
        let mut rest = emitter;
        while let Some(at) = rest.find(prefix) {
            let tail = &rest[at..];
            let len = tail.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(tail.len());
            let (name, after) = tail.split_at(len);
            if name.len() > prefix.len() && !after.starts_with('*') && !name.ends_with('_') && !pattern.contains(name) {
                names.push(name);
            }
            rest = after;
        }
    }
    if names.is_empty() {
        return pattern.to_owned();
    }
    format!("(?:{pattern})|(?-u:\\b)(?:{})(?-u:\\b)", names.join("|"))
}

/// Which rows a text may match, from the literals each match must contain: a row's finite set of
/// prefixes (or, failing that, suffixes), read from its pattern by `regex-syntax`. A row with
/// neither is tried on every line. The set's lazy DFA did the same job, but building its states
/// for all rows at once took most of the scan (`docs/performance.md`).
#[derive(Debug)]
struct Prefilter {
    /// Every row's literals.
    literals: aho_corasick::AhoCorasick,
    /// The row of each literal, by the literal's index.
    row_of: Vec<usize>,
    /// The rows with no literal every match contains.
    always: Vec<usize>,
}

/// The shortest line read as cut by a console's wrap when the next goes on in lower case: consoles wrap at 80
/// columns or wider, and shorter lines end where their writer ended them.
const HARD_WRAP_MIN: usize = 70;

/// How short a row's shortest literal may be: a shorter one is in most lines and filters nothing.
const MIN_LITERAL: usize = 3;

impl Prefilter {
    fn of(rows: &[(String, Regex)]) -> Option<Self> {
        let (mut needles, mut row_of, mut always) = (Vec::new(), Vec::new(), Vec::new());
        for (i, (_, re)) in rows.iter().enumerate() {
            match required_literals(re.as_str()) {
                Some(lits) => {
                    row_of.extend(std::iter::repeat_n(i, lits.len()));
                    needles.extend(lits);
                }
                None => always.push(i),
            }
        }
        // A DFA: the fastest to search, and its size is bounded by the catalogue's.
        let literals =
            aho_corasick::AhoCorasick::builder().kind(Some(aho_corasick::AhoCorasickKind::DFA)).build(&needles).ok()?;
        Some(Self { literals, row_of, always })
    }

    /// The rows of `rows` (the ones this was built from) that match `hay`, in table order.
    fn matching(&self, rows: &[(String, Regex)], hay: &str) -> Vec<usize> {
        self.candidates(hay).into_iter().filter(|&i| rows.get(i).is_some_and(|(_, re)| re.is_match(hay))).collect()
    }

    /// The rows `hay` may match, in table order, each once.
    fn candidates(&self, hay: &str) -> Vec<usize> {
        let mut rows = self.always.clone();
        rows.extend(self.literals.find_overlapping_iter(hay).filter_map(|m| self.row_of.get(m.pattern().as_usize())));
        rows.sort_unstable();
        rows.dedup();
        rows
    }
}

/// Literals of which every match of `pattern` contains one (its prefixes, or else its suffixes),
/// each at least [`MIN_LITERAL`] bytes; `None` where there is no such finite set.
fn required_literals(pattern: &str) -> Option<Vec<Vec<u8>>> {
    use regex_syntax::hir::literal::{ExtractKind, Extractor};
    let hir = regex_syntax::ParserBuilder::new().build().parse(pattern).ok()?;
    [ExtractKind::Prefix, ExtractKind::Suffix]
        .into_iter()
        .filter_map(|kind| {
            let seq = Extractor::new().kind(kind).extract(&hir);
            let lits = seq.literals()?;
            let shortest = lits.iter().map(|l| l.as_bytes().len()).min()?;
            (shortest >= MIN_LITERAL)
                .then(|| (shortest, lits.iter().map(|l| l.as_bytes().to_vec()).collect::<Vec<_>>()))
        })
        .max_by_key(|(shortest, _)| *shortest)
        .map(|(_, lits)| lits)
}

/// Every row's pattern in one set.
fn whole_set(rows: &[(String, Regex)]) -> Option<RegexSet> {
    RegexSetBuilder::new(rows.iter().map(|(_, r)| r.as_str())).dfa_size_limit(SET_DFA_CACHE_BYTES).build().ok()
}

/// The catalogue's row for NCCL's shared memory running out (`assets/compat/errors.toml`).
const NCCL_SHM: &str = "nccl.shm_too_small";

/// A bus error whose backtrace runs through NCCL, read as NCCL's shared memory running out: NCCL maps its
/// segments from /dev/shm, and touching a page past a full tmpfs (Docker's 64 MB by default) raises SIGBUS where
/// NCCL's own error would otherwise be (pytorch/tutorials#2475: a segfault in `ncclShmOpen` without
/// `--shm-size`; PipeDream-2BW's pipedream#76: `Caught signal 7 (Bus error …)` with `ncclGroupEnd` and
/// libnccl.so.2 frames, gone with `--shm-size`). The bus error's line, and NCCL named within the 40 lines after it.
pub(crate) fn add_nccl_bus_error(lines: &[String], found: &mut Vec<ObservedMessage>) {
    if !found.iter().any(|m| m.id == NCCL_SHM)
        && let Some(m) = nccl_bus_error(lines)
    {
        found.push(m);
    }
}

/// PyTorch's CMake message of two CUDA toolkits found (`torch.cmake_conflicting_cuda`) goes on over the next lines,
/// which CMake may separate with blank ones: `V12.1.66 in '/usr/local/cuda/include' and`, `V12.1.66 in
/// '/usr/local/cuda-12.1/include'` (cmake/public/cuda.cmake). The two versions and include folders, as values,
/// from the eight lines after it.
pub(crate) fn add_cmake_conflict_values(lines: &[String], found: &mut [(usize, ObservedMessage)]) {
    for (at, m) in found.iter_mut().filter(|(_, m)| m.id == "torch.cmake_conflicting_cuda") {
        let pairs: Vec<(&str, &str)> =
            lines.iter().skip(*at + 1).take(8).filter_map(|l| version_in_folder(l)).take(2).collect();
        for ((version, include), which) in pairs.into_iter().zip(["first", "second"]) {
            m.values.insert(format!("{which}_version"), version.to_owned());
            m.values.insert(format!("{which}_include"), include.to_owned());
        }
    }
}

/// `V12.1.66 in '/usr/local/cuda/include' and` → (`12.1.66`, `/usr/local/cuda/include`); a line of at most 2,000
/// characters.
fn version_in_folder(line: &str) -> Option<(&str, &str)> {
    if line.len() > 2000 {
        return None;
    }
    let rest = line.trim().strip_prefix('V')?;
    let (version, rest) = rest.split_once(" in '")?;
    let (folder, _) = rest.split_once('\'')?;
    let ok = !version.is_empty() && version.chars().all(|c| c.is_ascii_digit() || c == '.');
    (ok && !folder.is_empty()).then_some((version, folder))
}

/// [`add_nccl_bus_error`]'s reading: the bus error's line as NCCL's shared-memory message.
fn nccl_bus_error(lines: &[String]) -> Option<ObservedMessage> {
    // The length first: no lowercase copy of the paste's long lines.
    let at = lines.iter().position(|l| {
        l.len() <= 400 && {
            let lower = l.to_ascii_lowercase();
            lower.contains("bus error") || lower.contains("sigbus")
        }
    })?;
    let nccl = lines.iter().skip(at).take(41).any(|l| l.len() <= 2000 && l.to_ascii_lowercase().contains("nccl"));
    nccl.then(|| ObservedMessage {
        id: NCCL_SHM.to_owned(),
        line: lines[at].trim().chars().take(300).collect(),
        values: BTreeMap::new(),
    })
}

/// The `cudaError_t` codes an emitter string gives after each error name: `CUDA runtime,
/// cudaErrorInsufficientDriver (35); …` → 35.
fn error_codes(emitter: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let mut rest = emitter;
    while let Some(at) = rest.find("cudaError") {
        let tail = &rest[at..];
        let name = tail.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(tail.len());
        let after = &tail[name..];
        if let Some(code) = after.strip_prefix(" (").and_then(|a| a.split_once(')')).and_then(|(n, _)| n.parse().ok()) {
            out.push(code);
        }
        rest = after;
    }
    out
}

/// Whether `code` names one error in every CUDA release. CUDA 10.1 renumbered `cudaError_t` after the driver
/// API's `CUresult` (cudaErrorNoDevice 38 became 100, cudaErrorInvalidDevice 10 became 101,
/// cudaErrorNoKernelImageForDevice 48 became 209, cudaErrorUnknown 30 became 999); 2, 3, 35 and 46 kept their
/// numbers, and every code from 98 up is of the new numbering (the old one's were 0 to 84, 127, 900 to 907 and
/// 10000, the last three with the same names in both): jcuda/jcuda:JCudaJava/src/main/java/jcuda/runtime/cudaError.java
/// at version-10.0.0-RC01 (2da399fdb60e8b54c45e86c6ba15a82b446e2c63, CUDA 10.0) and version-10.1.0-RC00
/// (5495d71778a835536e2a436555637898465c5eab, CUDA 10.1), each the runtime's driver_types.h enum copied. The driver
/// API's codes were never renumbered and are the runtime's new ones where both have the error.
fn code_means_one_error(code: u32) -> bool {
    matches!(code, 2 | 3 | 35 | 46) || code >= 98
}

/// The driver API's function families, whose result is a `CUresult` (`cuInit`, `cuCtxCreate`, `cuMemAlloc`):
/// the libraries' own `cu*` names (cuDNN, cuBLAS, cuSPARSE) number their statuses otherwise.
const DRIVER_CALLS: [&str; 13] = [
    "cuInit",
    "cuCtx",
    "cuDevice",
    "cuMem",
    "cuModule",
    "cuLaunch",
    "cuLink",
    "cuStream",
    "cuEvent",
    "cuGraph",
    "cuLibrary",
    "cuGetProcAddress",
    "cuDriverGetVersion",
];

/// The words a program puts before the number a CUDA call answered.
/// Not `result` or `returns`, which also come before a measure (`cudaEventElapsedTime result 35 ms`).
const CODE_WORDS: [&str; 6] = ["error", "err", "code", "returned", "status", "error_code"];

/// A CUDA error printed as its number where the program did not print the runtime's words: a runtime call
/// (`cudaGetDeviceCount failed in paddle::platform::GetCUDADeviceCountImpl, error code : 35`, PaddlePaddle's
/// paddle/fluid/platform/gpu_info.cc@95c78428f4e8b776d8ff951c54eae7c3374a3d93; `cudaSetDevice returned 100`), a driver API call (`cuInit returned
/// 100`) or `CUDA error 35` (a program's own `printf("CUDA error %d", err)`), then the code after one of
/// [`CODE_WORDS`] (`error code : 35`, `err=35`, `returned 35`). Only a code that [`code_means_one_error`]; `None`
/// for a longer line than 2,000 characters.
fn numbered_cuda_error(line: &str) -> Option<u32> {
    if line.len() > 2000 {
        return None;
    }
    let call = |at: usize| {
        let rest = &line[at..];
        let runtime = rest.strip_prefix("cuda").is_some_and(|r| {
            r.starts_with(|c: char| c.is_ascii_uppercase()) && !r.starts_with("Error") && !r.starts_with("Success")
        });
        runtime || DRIVER_CALLS.iter().any(|d| rest.starts_with(d))
    };
    let start = line
        .match_indices("cu")
        .map(|(at, _)| at)
        .find(|&at| call(at) && !line[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
        .or_else(|| line.to_ascii_lowercase().find("cuda error"))?;
    let rest = &line[start..];
    let bytes = rest.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() || (i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'.')) {
            i += 1;
            continue;
        }
        let end = bytes[i..].iter().position(|b| !b.is_ascii_digit()).map_or(bytes.len(), |n| i + n);
        let whole = bytes.get(end).is_none_or(|b| !(b.is_ascii_alphanumeric() || *b == b'.' || *b == b'_'));
        let before = rest[..i].trim_end_matches([' ', ':', '=', '(', '#']);
        let word_at = before
            .char_indices()
            .rev()
            .find(|(_, c)| !(c.is_ascii_alphabetic() || *c == '_'))
            .map_or(0, |(w, c)| w + c.len_utf8());
        let word = before[word_at..].to_ascii_lowercase();
        if whole && end - i <= 4 && before.len() + 4 >= i && CODE_WORDS.contains(&word.as_str()) {
            return rest[i..end].parse().ok().filter(|&c| code_means_one_error(c));
        }
        i = end;
    }
    None
}

impl Matcher {
    /// Compiles the rows `keep` picks; a row whose pattern does not compile is left out (the table
    /// tests fail on it, so it never ships).
    fn of(kb: &Kb, keep: fn(&str) -> bool) -> Self {
        let rows: Vec<(String, Regex)> = kb
            .errors
            .message
            .iter()
            .filter(|m| keep(&m.id))
            .filter_map(|m| Regex::new(&with_error_names(&m.pattern, &m.emitter)).ok().map(|r| (m.id.clone(), r)))
            .collect();
        let prefilter = Prefilter::of(&rows);
        let set = if prefilter.is_some() { None } else { whole_set(&rows) };
        let codes = kb
            .errors
            .message
            .iter()
            .filter(|m| keep(&m.id) && m.emitter.starts_with("CUDA runtime"))
            .flat_map(|m| error_codes(&m.emitter).into_iter().map(|c| (c, m.id.clone())))
            .collect();
        Self { set, prefilter, rows, codes }
    }

    /// The `nvrm.xid` row alone, for reading the kernel log's Xid lines (the live health probe
    /// reads `dmesg` through it on every `check`): compiling the whole catalogue for that took
    /// most of `check`'s time. Made once for the embedded knowledge base, anew for any other.
    pub(crate) fn xid_for_kb(kb: &Kb) -> Arc<Self> {
        static EMBEDDED: OnceLock<Arc<Matcher>> = OnceLock::new();
        Self::cached(&EMBEDDED, kb, |id| id == "nvrm.xid")
    }

    /// The compiled messages of `kb`: made once for the embedded knowledge base, anew for any other.
    pub(crate) fn for_kb(kb: &Kb) -> Arc<Self> {
        static EMBEDDED: OnceLock<Arc<Matcher>> = OnceLock::new();
        Self::cached(&EMBEDDED, kb, |_| true)
    }

    /// The rows `keep` picks of `kb`, compiled once into `cell` for the embedded knowledge base and
    /// anew for any other.
    fn cached(cell: &OnceLock<Arc<Self>>, kb: &Kb, keep: fn(&str) -> bool) -> Arc<Self> {
        match Kb::get() {
            Ok(embedded) if std::ptr::eq(embedded, kb) => cell.get_or_init(|| Arc::new(Self::of(kb, keep))).clone(),
            _ => Arc::new(Self::of(kb, keep)),
        }
    }

    /// Every known message in the lines, in order, each (id, line) once, with the index of the
    /// line it starts on.
    pub(crate) fn scan(&self, lines: &[String]) -> Vec<(usize, ObservedMessage)> {
        let mut out = Vec::new();
        let mut seen: HashSet<(String, String)> = HashSet::new();
        for (i, line) in lines.iter().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let next = lines.get(i + 1).map(|l| l.trim()).unwrap_or("");
            // Joined by a newline (a pattern's `\s` may cross it), and, where the next line reads as
            // the rest of a sentence (it starts with a lower-case letter), by a space: a message that
            // wrapped at a space in the paste (`mismatches the` / `version that was used …`, indented
            // or not) reads as the emitter printed it. Log lines start otherwise, so the second
            // pass is rare.
            // So does a parenthesis, which opens a clause of the sentence before (`Loaded runtime CuDNN library: 5006`
            // / `(compatibility version 5000) but source was compiled with 5103`, TensorFlow 0.x's message as a
            // terminal wrapped it).
            let continues = next.starts_with(|c: char| c.is_ascii_lowercase() || c == '(');
            let mut hays: Vec<String> = match (next.is_empty(), continues) {
                (true, _) => vec![line.to_owned()],
                (false, false) => vec![format!("{line}\n{next}")],
                (false, true) => vec![format!("{line}\n{next}"), format!("{line} {next}")],
            };
            // A console that wraps at its width cuts words too (`… with Cuda c` / `ompute capability 3.0`, a Windows
            // console's TensorFlow log): a long line that ends in a letter, followed by one that goes on in lower
            // case, is also read joined with nothing between.
            if continues && line.len() >= HARD_WRAP_MIN && line.ends_with(|c: char| c.is_ascii_alphabetic()) {
                hays.push(format!("{line}{next}"));
            }
            let mut matched: Vec<usize> = Vec::new();
            for (joined_by_space, hay) in hays.iter().enumerate().map(|(k, h)| (k > 0, h)) {
                let hits: Vec<usize> = match (&self.prefilter, &self.set) {
                    (Some(pre), _) => pre.matching(&self.rows, hay),
                    (_, Some(set)) => set.matches(hay).iter().collect(),
                    (_, None) => {
                        self.rows.iter().enumerate().filter(|(_, (_, re))| re.is_match(hay)).map(|(i, _)| i).collect()
                    }
                };
                for idx in hits {
                    if matched.contains(&idx) {
                        continue;
                    }
                    let Some((id, re)) = self.rows.get(idx) else { continue };
                    // A message the next line holds whole is that line's: a pattern that starts
                    // with free text (`(?P<gpu>.+?) with CUDA capability`) would otherwise take
                    // this line in front of it.
                    if joined_by_space && re.is_match(next) {
                        continue;
                    }
                    let Some(m) = re.captures(hay).filter(|c| c.get(0).is_some_and(|w| w.start() < line.len())) else {
                        continue;
                    };
                    matched.push(idx);
                    let text = if m.get(0).is_some_and(|w| w.end() > line.len()) {
                        if hay.len() == line.len() + next.len() {
                            format!("{line}{next}")
                        } else {
                            format!("{line} {next}")
                        }
                    } else {
                        line.to_owned()
                    };
                    let values: BTreeMap<String, String> = re
                        .capture_names()
                        .flatten()
                        .filter_map(|n| {
                            let v = m.name(n)?.as_str().split_whitespace().collect::<Vec<_>>().join(" ");
                            (!v.is_empty()).then(|| (n.to_owned(), v))
                        })
                        .collect();
                    if seen.insert((id.clone(), text.clone())) {
                        out.push((i, ObservedMessage { id: id.clone(), line: text, values }));
                    }
                }
            }
            if matched.is_empty()
                && let Some(id) = numbered_cuda_error(line).and_then(|code| self.codes.get(&code))
                // The words on the next line (deviceQuery's `cudaGetDeviceCount returned 35` / `-> CUDA driver
                // version is insufficient …`) are that line's message.
                && !self.rows.iter().any(|(row, re)| row == id && re.is_match(next))
                && seen.insert((id.clone(), line.to_owned()))
            {
                out.push((i, ObservedMessage { id: id.clone(), line: line.to_owned(), values: BTreeMap::new() }));
            }
        }
        out
    }

    /// The ids of the rows, in table order (for tests).
    #[cfg(test)]
    pub(crate) fn ids(&self) -> Vec<&str> {
        self.rows.iter().map(|(id, _)| id.as_str()).collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The embedded catalogue's messages in these lines.
    fn scan_lines(lines: &[&str]) -> Vec<(usize, ObservedMessage)> {
        let lines: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
        Matcher::for_kb(Kb::get().unwrap()).scan(&lines)
    }

    /// A CUDA error printed as its number: after a runtime or driver API call or `CUDA error`, behind a word that
    /// says it is the answer; never a number of the old numbering that means another error now (38 was
    /// cudaErrorNoDevice before CUDA 10.1), a line number, a version, or a library's own status (cuDNN's 3).
    #[test]
    fn cuda_errors_printed_as_numbers_are_read_by_their_code() {
        for (line, code) in [
            (
                "Error: cudaGetDeviceCount failed in paddle::platform::GetCUDADeviceCountImpl, error code : 35, Please see",
                35,
            ),
            ("cudaGetDeviceCount returned 35", 35),
            ("cudaSetDevice err=209 at main.cu:12", 209),
            ("cuInit(0) returned 100", 100),
            // A word after a character of more than one byte.
            ("cudaMalloc \u{fffd}returned 2", 2),
            ("CUDA error 2 at kernel.cu:88", 2),
            ("ERROR: cudaMalloc failed with error code 2 (line 40)", 2),
        ] {
            assert_eq!(numbered_cuda_error(line), Some(code), "{line}");
        }
        for line in [
            "cudaGetDeviceCount returned 38",
            "cudaMalloc at demo.cu:35",
            "cuDNN error 3",
            "cudnnCreate returned status 3",
            "cudaRuntimeGetVersion returned 12.1",
            "CUDA error 35ms",
            "cudaEventElapsedTime result 35 ms",
            "cudaSetDevice(1) failed",
            "mycudaMalloc returned 2",
            "",
        ] {
            assert_eq!(numbered_cuda_error(line), None, "{line}");
        }
        assert_eq!(numbered_cuda_error(&format!("cudaMalloc returned 2{}", " x".repeat(1200))), None);
        assert_eq!(
            error_codes("CUDA runtime, cudaErrorInsufficientDriver (35); cudaErrorMps* (8xx); cudaErrorNoDevice (100)"),
            [35, 100]
        );
    }

    /// Read through the catalogue: the code gives the runtime's row for it; where the next line prints the words
    /// (deviceQuery), the words' line is the message, once.
    #[test]
    fn numbered_cuda_errors_give_the_runtime_rows_message() {
        let found = scan_lines(&["cudaGetDeviceCount failed, error code : 35"]);
        assert_eq!(found.iter().map(|(_, m)| m.id.as_str()).collect::<Vec<_>>(), ["cuda.insufficient_driver"]);
        let found = scan_lines(&[
            "cudaGetDeviceCount returned 35",
            "-> CUDA driver version is insufficient for CUDA runtime version",
        ]);
        let got: Vec<(usize, &str)> = found.iter().map(|(i, m)| (*i, m.id.as_str())).collect();
        assert_eq!(got, [(1, "cuda.insufficient_driver")]);
    }

    /// A console that wrapped a long line inside a word (a Windows console's TensorFlow 0.12 log, tensorflow/tensorflow#6125):
    /// the two halves are read joined with nothing between, and the message keeps its values.
    #[test]
    fn a_line_a_console_wrapped_inside_a_word_is_read_whole() {
        let found = scan_lines(&[
            "I c:\\tf_jenkins\\home\\workspace\\release-win\\device\\gpu\\os\\windows\\tensorflow\\core\\common_runtime\\gpu\\gpu_device.cc:948] \
             Ignoring visible gpu device (device: 0, name: GeForce GTX 660 Ti, pci bus id: 0000:01:00.0) with Cuda c",
            "ompute capability 3.0. The minimum required Cuda capability is 3.5.",
        ]);
        let (_, msg) = found.iter().find(|(_, m)| m.id == "tf.gpu_ignored_min_cc").expect("joined");
        assert_eq!(msg.values.get("cc").map(String::as_str), Some("3.0"));
        assert!(msg.line.contains("Cuda compute capability 3.0"), "{}", msg.line);
    }

    /// A message broken before a parenthesis (TensorFlow 0.x's cuDNN check as smallcorgi/Faster-RCNN_TF#12 pasted it):
    /// read joined by a space, with its values.
    #[test]
    fn a_line_broken_before_a_parenthesis_goes_on_in_the_next() {
        let found = scan_lines(&[
            "E tensorflow/stream_executor/cuda/cuda_dnn.cc:378] Loaded runtime CuDNN library: 5006 ",
            "(compatibility version 5000) but source was compiled with 5103 (compatibility version 5100).  ",
        ]);
        let (_, msg) = found.iter().find(|(_, m)| m.id == "xla.cudnn_version_mismatch").expect("joined");
        assert_eq!(msg.values.get("compiled").map(String::as_str), Some("5103"));
    }

    /// The folder lines of PyTorch's CMake message; anything else, or a cut line, is not one.
    #[test]
    fn cmakes_version_and_folder_lines_are_read_and_others_are_not() {
        assert_eq!(
            version_in_folder("  V12.1.66 in '/usr/local/cuda/include' and"),
            Some(("12.1.66", "/usr/local/cuda/include"))
        );
        assert_eq!(
            version_in_folder("V11.8.89 in '/nix/store/a/include;/nix/store/b/include'").map(|v| v.0),
            Some("11.8.89")
        );
        for other in ["V12.1.66 in '/usr/local/cuda/incl", "Version 12 in '/x'", "V in '/x'", "V1.2 in ''", ""] {
            assert_eq!(version_in_folder(other), None, "{other}");
        }
        assert_eq!(version_in_folder(&format!("V1 in '{}'", "x".repeat(3000))), None);
    }

    /// The live health probe reads `dmesg` through `xid_events` on every `check`: it must compile
    /// the Xid row alone (the whole catalogue, every row's pattern, took three quarters of
    /// `check`'s time), and read the same events the whole catalogue reads.
    #[test]
    fn the_xid_reader_compiles_only_the_xid_row_and_reads_what_the_catalogue_reads() {
        let kb = Kb::get().unwrap();
        assert_eq!(Matcher::xid_for_kb(kb).ids(), ["nvrm.xid"]);
        assert_eq!(Matcher::for_kb(kb).ids().len(), kb.errors.message.len(), "the catalogue is the whole table");
        let lines: Vec<String> = [
            "NVRM: Xid (PCI:0000:01:00): 79, pid=1234, GPU has fallen off the bus.",
            "NVRM: Xid (0000:02:00): 13, Graphics Exception",
            "RuntimeError: CUDA error: an illegal memory access was encountered",
            "nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver",
        ]
        .map(str::to_owned)
        .to_vec();
        let whole: Vec<ObservedMessage> =
            Matcher::for_kb(kb).scan(&lines).into_iter().map(|(_, m)| m).filter(|m| m.id == "nvrm.xid").collect();
        let alone: Vec<ObservedMessage> = Matcher::xid_for_kb(kb).scan(&lines).into_iter().map(|(_, m)| m).collect();
        assert_eq!(alone, whole);
        assert_eq!(alone.len(), 2);
    }

    /// The prefilter is built, tries every row on a line most rows skip, and with it the rows find
    /// what the whole set finds, line by line and over each line joined to the next, over every
    /// corpus case's text.
    #[test]
    fn the_prefilter_is_built_and_finds_what_the_set_finds() {
        let kb = Kb::get().unwrap();
        let m = Matcher::for_kb(kb);
        let (Some(set), Some(pre)) = (whole_set(&m.rows), &m.prefilter) else {
            panic!("the set or the prefilter was not built")
        };
        assert!(pre.always.len() * 10 < m.rows.len(), "{} of {} rows have no literal", pre.always.len(), m.rows.len());
        assert!(pre.candidates("nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver").len() < 10);
        let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/corpus");
        let mut lines = 0;
        for dir in std::fs::read_dir(corpus).unwrap().flatten().filter(|d| d.path().is_dir()) {
            for case in std::fs::read_dir(dir.path()).unwrap().flatten() {
                let text = std::fs::read_to_string(case.path()).unwrap();
                let all: Vec<&str> = text.lines().collect();
                for (i, line) in all.iter().enumerate() {
                    let joined = format!("{line}\n{}", all.get(i + 1).unwrap_or(&""));
                    for hay in [*line, joined.as_str()] {
                        lines += 1;
                        let whole: Vec<usize> = set.matches(hay).iter().collect();
                        assert_eq!(pre.matching(&m.rows, hay), whole, "{hay}");
                    }
                }
            }
        }
        assert!(lines > 10_000, "{lines} lines");
    }

    /// Where neither the prefilter nor the set can be built, each row is tried on its own and finds
    /// the same messages, as it does with the set alone.
    #[test]
    fn without_the_set_every_row_is_tried_and_nothing_is_lost() {
        let kb = Kb::get().unwrap();
        let prefiltered = Matcher::for_kb(kb);
        let rows = prefiltered.rows.clone();
        let with_set = Matcher { set: whole_set(&rows), prefilter: None, rows: rows.clone(), codes: BTreeMap::new() };
        let rows_only = Matcher { set: None, prefilter: None, rows, codes: BTreeMap::new() };
        let lines: Vec<String> = [
            "NVRM: Xid (PCI:0000:01:00): 79, pid=1234, GPU has fallen off the bus.",
            "AssertionError: Torch not compiled with CUDA enabled",
            "ValueError: This CTranslate2 package was not compiled with CUDA support",
            "nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver",
        ]
        .map(str::to_owned)
        .to_vec();
        let found = with_set.scan(&lines);
        assert_eq!(found.len(), 3, "{found:?}");
        assert_eq!(rows_only.scan(&lines), found);
        assert_eq!(prefiltered.scan(&lines), found);
    }
}
