//! What PyTorch answers in a Python REPL or to `python -c`: `>>> torch.__version__` then
//! `'2.5.1+cpu'`, `torch.cuda.is_available()` then `False`, `python -c "import torch;
//! print(torch.__version__); print(torch.version.cuda)"` then one answer per line (or all on one
//! line, space-separated); and the bare pair people paste without the question, a version with a
//! local tag then `True`/`False` (`2.3.0+cu121`, `False`).
//!
//! An answer is the next non-empty line after the question, taken only when it has the form that
//! question prints (a version, `True`/`False`, a count, `['sm_80', …]`, `(8, 6)`); anything else
//! leaves the question unanswered.

use super::facts::Facts;
use super::packages;
use gpu_doctor_kb::PyVersion;
use gpu_doctor_model::{DeepTorch, OsFamily};

const FORMAT: &str = "python prints";

/// The format name of the interpreter's banner.
const BANNER_FORMAT: &str = "the Python interpreter's banner";

/// What Python prints for `None`.
const NONE: &str = "None";

/// The questions read, in the form they are asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ask {
    Version,
    Cuda,
    Available,
    DeviceCount,
    ArchList,
    Capability,
}

const ASKS: [(&str, Ask); 6] = [
    ("torch.__version__", Ask::Version),
    ("torch.version.cuda", Ask::Cuda),
    ("torch.cuda.is_available()", Ask::Available),
    ("torch.cuda.device_count()", Ask::DeviceCount),
    ("torch.cuda.get_arch_list()", Ask::ArchList),
    ("torch.cuda.get_device_capability(", Ask::Capability),
];

/// The questions on one line, in the order they are asked.
fn asks(line: &str) -> Vec<Ask> {
    // Every question starts `torch.`: one prebuilt search first, not six substring searchers a line.
    static TORCH: super::Needle = super::Needle::new("torch.");
    if !TORCH.in_line(line) {
        return Vec::new();
    }
    let mut found: Vec<(usize, Ask)> =
        ASKS.iter().flat_map(|(text, ask)| line.match_indices(text).map(move |(at, _)| (at, *ask))).collect();
    found.sort_by_key(|(at, _)| *at);
    found.into_iter().map(|(_, a)| a).collect()
}

/// A printed value without the backticks, quotes and spaces a post puts around it, and without
/// IPython's or Jupyter's output prompt (`Out[2]: False`; IPython's documented prompts, "In [N]:" and
/// "Out[N]:", https://ipython.readthedocs.io/en/stable/interactive/tutorial.html).
fn value(line: &str) -> &str {
    let line = line.trim();
    let line = line
        .strip_prefix("Out[")
        .and_then(|rest| rest.split_once("]:"))
        .filter(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .map_or(line, |(_, rest)| rest);
    line.trim().trim_matches('`').trim().trim_matches(['\'', '"'])
}

/// A version as `torch.__version__` prints it: digits and dots first, no spaces.
fn is_version(v: &str) -> bool {
    let mut parts = v.split(['+', '-']).next().unwrap_or("").split('.');
    let numeric = |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    numeric(parts.next()) && numeric(parts.next()) && !v.contains(char::is_whitespace)
}

fn boolean(v: &str) -> Option<bool> {
    match v {
        "True" => Some(true),
        "False" => Some(false),
        _ => None,
    }
}

/// `['sm_50', 'sm_60']` → the names; `[]` → empty.
fn arch_list(v: &str) -> Option<Vec<String>> {
    let inner = v.strip_prefix('[')?.strip_suffix(']')?;
    let items: Vec<String> =
        inner.split(',').map(|s| s.trim().trim_matches(['\'', '"']).to_owned()).filter(|s| !s.is_empty()).collect();
    items.iter().all(|s| s.starts_with("sm_") || s.starts_with("compute_")).then_some(items)
}

/// `(8, 6)` → `8.6`.
fn capability(v: &str) -> Option<String> {
    let (major, minor) = v.strip_prefix('(')?.strip_suffix(')')?.split_once(',')?;
    let (major, minor) = (major.trim().parse::<u32>().ok()?, minor.trim().parse::<u32>().ok()?);
    Some(format!("{major}.{minor}"))
}

/// Records `answer` to `ask`; false when it is not an answer of that form.
fn answer(torch: &mut DeepTorch, ask: Ask, answer: &str) -> bool {
    match ask {
        Ask::Version if is_version(answer) => torch.version = Some(answer.to_owned()),
        // Kept as `None` while reading, so that `read` knows it was printed (a CPU build).
        Ask::Cuda if answer == "None" => torch.cuda = Some(NONE.to_owned()),
        Ask::Cuda if is_version(answer) => torch.cuda = Some(answer.to_owned()),
        Ask::Available if boolean(answer).is_some() => torch.cuda_available = boolean(answer),
        Ask::DeviceCount if answer.parse::<u32>().is_ok() => torch.device_count = answer.parse().ok(),
        Ask::ArchList if arch_list(answer).is_some() => torch.arch_list = arch_list(answer),
        Ask::Capability if capability(answer).is_some() => {
            let cc = capability(answer);
            torch.devices.get_or_insert_with(Vec::new).push(gpu_doctor_model::DeepTorchDevice {
                index: 0,
                capability: cc,
                ..Default::default()
            });
        }
        _ => return false,
    }
    true
}

/// The next non-empty line after `i`, with its index.
fn next_line(lines: &[String], i: usize) -> Option<(usize, &str)> {
    lines.iter().enumerate().skip(i + 1).find(|(_, l)| !value(l).is_empty()).map(|(j, l)| (j, l.as_str()))
}

/// The value written after `question` on the same line, as people report a print's answer in
/// prose or a comment: `torch.__version__  = 2.3.1+cu121`, `my torch.version.cuda is 9.0.176,`,
/// `` `nvcc --version`: 11.8 ``. After the question come closing quotes or backticks, then `=`,
/// `==`, `:`, `->` or `is`, then the value (quotes, backticks and a trailing `,` `.` `;` stripped).
/// `None` without such a separator (`print(torch.cuda.is_available()) return false` is code).
pub(super) fn answer_after<'a>(line: &'a str, question: &str) -> Option<&'a str> {
    let start = line.find(question)?;
    // `if torch.cuda.is_available() == False:` is a condition in code, not an answer.
    let code = line[..start]
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| matches!(w, "if" | "elif" | "while" | "assert" | "return"));
    if code {
        return None;
    }
    let at = start + question.len();
    let rest = line.get(at..)?.trim_start_matches(['`', '"', '\'']).trim_start();
    let rest = ["==", "=", ":", "->", "is "].iter().find_map(|sep| rest.strip_prefix(sep))?;
    let word = rest.split_whitespace().next()?;
    let word = word.trim_matches(['`', '"', '\'']).trim_end_matches([',', '.', ';', ':', ')']);
    let word = word.trim_matches(['`', '"', '\'']);
    (!word.is_empty()).then_some(word)
}

/// Answers written on the question's own line (see [`answer_after`]): true when one was read.
fn answer_same_line(line: &str, asked: &[Ask], torch: &mut DeepTorch) -> bool {
    let mut read = false;
    for (text, ask) in ASKS.iter().filter(|(_, a)| asked.contains(a)) {
        if let Some(v) = answer_after(line, text) {
            read |= answer(torch, *ask, v);
        }
    }
    read
}

/// Verbs with which people report what `is_available()` answered, in prose: "it shows `true`", "outputs
/// True", "returned FALSE", "got True when I run …". Not `return`, which is code.
const REPORTED: [&str; 14] = [
    "shows", "showed", "show", "outputs", "output", "returns", "returned", "gives", "gave", "got", "get", "prints",
    "printed", "says",
];

/// `is_available()`'s answer reported in a sentence ([`REPORTED`]): the one boolean word in the line (any
/// case, in backticks or quotes), right after a reporting verb (an `is`/`as`/`me` between them allowed).
/// Samples: https://github.com/LiYingwei/ShapeTextureDebiasedTraining/issues/12 ("When I run
/// `torch.cuda.is_available()` it shows `true`"), mazurowski-lab/finetune-SAM#18 ("torch.cuda.is_available
/// outputs True"). A line that reads as code (`if`, `assert`, `==`, `return`) is not taken.
fn prose_available(line: &str) -> Option<bool> {
    if !line.contains("torch.cuda.is_available") {
        return None;
    }
    let words: Vec<&str> = line
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '='))
        .map(|w| w.trim_matches('.'))
        .filter(|w| !w.is_empty())
        .collect();
    if words.iter().any(|w| matches!(*w, "if" | "assert" | "return" | "while" | "elif" | "not") || w.contains("==")) {
        return None;
    }
    let bools: Vec<(usize, bool)> = words
        .iter()
        .enumerate()
        .filter_map(|(i, w)| match w.to_ascii_lowercase().as_str() {
            "true" => Some((i, true)),
            "false" => Some((i, false)),
            _ => None,
        })
        .collect();
    let [(at, value)] = bools[..] else { return None };
    let before = words[..at].iter().rev().take(3).map(|w| w.to_ascii_lowercase());
    let mut reported = false;
    for w in before {
        if REPORTED.contains(&w.as_str()) {
            reported = true;
            break;
        }
        if !matches!(w.as_str(), "is" | "as" | "me" | "it") {
            break;
        }
    }
    reported.then_some(value)
}

/// `torch.cuda.is_available` without its parentheses in a sentence that reports its answer.
fn prose_line(lines: &[String], i: usize, torch: &mut DeepTorch) -> Option<usize> {
    torch.cuda_available = Some(prose_available(&lines[i])?);
    Some(i)
}

/// Answers the questions on line `i` from the lines after it; the index of the last line used.
fn answer_line(lines: &[String], i: usize, asked: &[Ask], torch: &mut DeepTorch) -> Option<usize> {
    if answer_same_line(&lines[i], asked, torch) {
        return Some(i);
    }
    // A sentence wrapped right after its separator (Markdown hard-wraps: "`torch.__version__` is" then
    // "`2.9.1+cpu` and …" on the next line): the answer begins the next line, which is read again for its
    // own questions.
    let t = lines[i].trim_end();
    if ["is", "=", ":", "->"].iter().any(|sep| t.ends_with(sep))
        && let Some((_, next)) = next_line(lines, i)
        && answer_same_line(&format!("{t} {}", next.trim()), asked, torch)
    {
        return Some(i);
    }
    if asked.contains(&Ask::Available)
        && let Some(available) = prose_available(&lines[i])
    {
        torch.cuda_available = Some(available);
        return Some(i);
    }
    let (first_at, first) = next_line(lines, i)?;
    let words: Vec<&str> = value(first).split_whitespace().collect();
    if asked.len() > 1 && words.len() == asked.len() {
        let all = asked.iter().zip(&words).all(|(a, w)| answer(torch, *a, value(w)));
        return all.then_some(first_at);
    }
    let mut at = i;
    let mut used = None;
    for ask in asked {
        let Some((j, line)) = next_line(lines, at) else { break };
        if !answer(torch, *ask, value(line)) {
            break;
        }
        at = j;
        used = Some(j);
    }
    used
}

/// `2.3.0+cu121` followed by `True` or `False`: torch's version and `is_available()`, printed
/// without the question.
fn bare_pair(lines: &[String], i: usize, torch: &mut DeepTorch) -> Option<usize> {
    let v = value(&lines[i]);
    let tag = PyVersion::new(v).local()?;
    let tagged = tag == "cpu" || tag.starts_with("cu") || tag.starts_with("rocm");
    if !tagged || !is_version(v) {
        return None;
    }
    let (j, next) = next_line(lines, i)?;
    let available = boolean(value(next))?;
    torch.version = Some(v.to_owned());
    torch.cuda_available = Some(available);
    Some(j)
}

/// Reads PyTorch's printed answers into the framework facts and the `torch` package.
/// The OS the interactive interpreter's banner names: CPython prints `Python <version> on <platform>`
/// when it starts (python/cpython:Modules/main.c, pymain_header: `"Python %s on %s\n", Py_GetVersion(),
/// Py_GetPlatform()`), `win32` on Windows, `linux`, `darwin`.
fn banner_os(line: &str) -> Option<OsFamily> {
    let line = line.trim();
    if !line.starts_with("Python 3.") && !line.starts_with("Python 2.") {
        return None;
    }
    match line.rsplit(" on ").next()? {
        "win32" => Some(OsFamily::Windows),
        "linux" => Some(OsFamily::Linux),
        "darwin" => Some(OsFamily::Macos),
        _ => None,
    }
}

/// The format name of `torch.__config__.show()`'s output.
const CONFIG_FORMAT: &str = "torch.__config__.show()";

/// The most lines after `PyTorch built with:` read as its list.
const CONFIG_LINES: usize = 40;

/// What `torch.__config__.show()` prints (OpenMMLab's collect_env prints it as `PyTorch compiling details:`):
/// `PyTorch built with:`, then `  - ` lines, among them CUDAHooks::showConfig's `CUDA Runtime X.Y` (the runtime
/// loaded), `Built with CUDA Runtime X.Y` (the build's, printed where the two differ), `NVCC architecture flags:
/// -gencode;arch=compute_37,code=sm_37;…` (the architectures compiled in: `code=sm_XY` machine code, `code=compute_XY`
/// PTX) and `CuDNN 8.0.5`; the build's CUDA, else the runtime's, is torch's CUDA build, and the flags its
/// architecture list (pytorch/pytorch:aten/src/ATen/Version.cpp show_config, aten/src/ATen/cuda/detail/CUDAHooks.cpp
/// showConfig). A HIP build prints `HIP Runtime` and no flags: nothing is read from it.
fn config_show(lines: &[String], facts: &mut Facts) {
    let Some(at) = lines.iter().position(|l| l.trim_end().ends_with("PyTorch built with:")) else { return };
    let (mut runtime, mut built, mut archs) = (None, None, Vec::new());
    for l in lines.iter().skip(at + 1).take(CONFIG_LINES) {
        let Some(item) = l.trim().strip_prefix("- ") else { break };
        if let Some(v) = item.strip_prefix("Built with CUDA Runtime ") {
            built = v.split_whitespace().next().filter(|v| v.parse::<gpu_doctor_model::CudaVersion>().is_ok());
        } else if let Some(v) = item.strip_prefix("CUDA Runtime ") {
            runtime = v.split_whitespace().next().filter(|v| v.parse::<gpu_doctor_model::CudaVersion>().is_ok());
        } else if let Some(flags) = item.strip_prefix("NVCC architecture flags:") {
            archs = flags
                .split(';')
                .filter_map(|f| f.trim().strip_prefix("arch=")?.split_once(",code=").map(|(_, code)| code.trim()))
                .filter(|code| code.starts_with("sm_") || code.starts_with("compute_"))
                .map(str::to_owned)
                .collect();
        }
    }
    let Some(cuda) = built.or(runtime) else { return };
    facts.saw(at, CONFIG_FORMAT);
    facts.torch_build.get_or_insert(gpu_doctor_model::FrameworkBuild::Cuda { version: Some(cuda.to_owned()) });
    let printed = DeepTorch {
        cuda: Some(cuda.to_owned()),
        arch_list: (!archs.is_empty()).then_some(archs),
        ..DeepTorch::default()
    };
    match &mut facts.deep.torch {
        Some(known) => fill(known, printed),
        None => facts.deep.torch = Some(printed),
    }
    facts.deep_from(CONFIG_FORMAT);
}

/// The format name of a printed list of PyTorch's devices.
const DEVICES_FORMAT: &str = "PyTorch's device names";

/// Words one of NVIDIA's GPU names holds.
const GPU_NAME_WORDS: [&str; 6] = ["NVIDIA", "GeForce", "Tesla", "Quadro", "TITAN", "RTX"];

/// A list of PyTorch's devices by name, one per line, as scripts print it (`cuda:0 -> NVIDIA GeForce RTX 5060 Ti`,
/// `cuda:1 NVIDIA GeForce RTX 3060`, `cuda:0: Tesla T4`): `torch.cuda.get_device_name(i)` numbers them as the CUDA
/// runtime does (fastest first by default), which `cuda_order` compares with nvidia-smi's list.
fn device_names(lines: &[String], facts: &mut Facts) {
    let mut seen = 0;
    for (i, line) in lines.iter().enumerate() {
        let Some((index, name)) = device_name(line) else { continue };
        if seen == 0 {
            facts.saw(i, DEVICES_FORMAT);
        }
        seen += 1;
        if seen > super::gpus::MAX_GPUS {
            return;
        }
        facts.gpu_facts.push(super::gpus::GpuFact {
            index: Some(index),
            name: Some(name),
            bus_id: None,
            cc: None,
            source: DEVICES_FORMAT,
        });
    }
}

/// `cuda:0 -> NVIDIA GeForce RTX 5060 Ti | UUID: …` → (0, the name): the index after `cuda:` at the line's start,
/// then `->`, `:`, `=` or a space, then a name holding one of NVIDIA's product words, up to a `|`, `,` or `(`.
fn device_name(line: &str) -> Option<(u32, String)> {
    let rest = line.trim().strip_prefix("cuda:")?;
    let digits = rest.find(|c: char| !c.is_ascii_digit()).filter(|n| (1..=3).contains(n))?;
    let index: u32 = rest[..digits].parse().ok()?;
    let name = rest[digits..].trim_start_matches([' ', '-', '>', ':', '=', '\t']);
    let name = name.split(['|', ',', '(']).next()?.trim().trim_matches(['\'', '"']);
    let gpu = name.len() <= 60 && GPU_NAME_WORDS.iter().any(|w| name.contains(w));
    gpu.then(|| (index, name.to_owned()))
}

pub(super) fn read(lines: &[String], facts: &mut Facts) {
    config_show(lines, facts);
    device_names(lines, facts);
    if let Some((i, os)) = lines.iter().enumerate().find_map(|(i, l)| banner_os(l).map(|os| (i, os)))
        && facts.os.is_none()
    {
        facts.saw(i, BANNER_FORMAT);
        facts.os = Some(os);
    }
    let mut torch = DeepTorch::default();
    let mut first = None;
    let mut i = 0;
    while i < lines.len() {
        let asked = asks(&lines[i]);
        let used = if asked.is_empty() {
            bare_pair(lines, i, &mut torch).or_else(|| prose_line(lines, i, &mut torch))
        } else {
            answer_line(lines, i, &asked, &mut torch)
        };
        if let Some(last) = used {
            first.get_or_insert(i);
            i = last;
        }
        i += 1;
    }
    let Some(at) = first else { return };
    facts.saw(at, FORMAT);
    // torch.version.cuda is None in a CPU build (and a ROCm one, whose torch.version.hip says so), as
    // collect_env's "CUDA used to build PyTorch: None".
    if torch.cuda.as_deref() == Some(NONE) {
        torch.cuda = None;
        if torch.hip.is_none() {
            facts.torch_build.get_or_insert(gpu_doctor_model::FrameworkBuild::Cpu);
        }
    }
    if let Some(v) = &torch.version {
        packages::add(facts, "torch", v, None, FORMAT);
    }
    match &mut facts.deep.torch {
        Some(known) => fill(known, torch),
        None => facts.deep.torch = Some(torch),
    }
    facts.deep_from(FORMAT);
}

/// Adds to what another format (collect_env) said what only the prints said; theirs stays.
fn fill(known: &mut DeepTorch, printed: DeepTorch) {
    known.version = known.version.take().or(printed.version);
    known.cuda = known.cuda.take().or(printed.cuda);
    known.cuda_available = known.cuda_available.or(printed.cuda_available);
    known.device_count = known.device_count.or(printed.device_count);
    known.arch_list = known.arch_list.take().or(printed.arch_list);
    known.devices = known.devices.take().or(printed.devices);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A script's list of PyTorch's devices by name (shootthesound/Fizgig#104's lines, verbatim): each index with its
    /// GPU, in CUDA's order; lines that name no NVIDIA GPU, or no index, are not such a list.
    #[test]
    fn pytorchs_device_names_by_index() {
        let text = "cuda:0 -> NVIDIA GeForce RTX 5060 Ti | UUID: f1d7572e-dea8-5b28-9004-936dbea138de\n\
                    cuda:1 -> NVIDIA GeForce RTX 3060 | UUID: d1994ec5-98b0-9a97-086e-d52c41c58141\n";
        let f = Facts::read_by(read, text);
        let got: Vec<(Option<u32>, Option<&str>)> = f.gpu_facts.iter().map(|g| (g.index, g.name.as_deref())).collect();
        assert_eq!(got, [(Some(0), Some("NVIDIA GeForce RTX 5060 Ti")), (Some(1), Some("NVIDIA GeForce RTX 3060"))]);
        assert_eq!(device_name("cuda:1: 'Tesla T4'"), Some((1, "Tesla T4".to_owned())));
        for line in ["cuda:0 -> cpu", "cuda:x NVIDIA GeForce RTX 3060", "device = cuda:0", "cuda:12345 NVIDIA A100"] {
            assert_eq!(device_name(line), None, "{line}");
        }
        let huge = "cuda:0 NVIDIA GeForce RTX 3060\n".repeat(10_000);
        assert!(Facts::read_by(read, &huge).gpu_facts.len() <= crate::parse::paste::gpus::MAX_GPUS);
    }

    /// `torch.__config__.show()` as OpenMMLab's collect_env prints it (open-mmlab/mmdetection#4736, lines cut), and
    /// with the runtime loaded differing from the build's; a list that is not the config's says nothing.
    #[test]
    fn torch_config_show_gives_the_build_cuda_and_its_architectures() {
        let text = "PyTorch compiling details: PyTorch built with:\n  - GCC 7.3\n  - C++ Version: 201402\n  \
                    - CUDA Runtime 11.0\n  - NVCC architecture flags: -gencode;arch=compute_37,code=sm_37;-gencode;\
                    arch=compute_80,code=sm_80;-gencode;arch=compute_80,code=compute_80\n  - CuDNN 8.0.5\n";
        let f = Facts::read_by(config_show, text);
        let t = f.deep.torch.as_ref().expect("torch");
        assert_eq!(t.cuda.as_deref(), Some("11.0"));
        assert_eq!(
            t.arch_list.as_deref(),
            Some(&["sm_37".to_owned(), "sm_80".to_owned(), "compute_80".to_owned()][..])
        );
        assert_eq!(f.torch_build, Some(gpu_doctor_model::FrameworkBuild::Cuda { version: Some("11.0".into()) }));
        let both = "PyTorch built with:\n  - CUDA Runtime 12.1\n  - Built with CUDA Runtime 11.8\n";
        let f = Facts::read_by(config_show, both);
        assert_eq!(f.deep.torch.and_then(|t| t.cuda).as_deref(), Some("11.8"));
        let hip = "PyTorch built with:\n  - HIP Runtime 6.0\n  - MIOpen 3.0.0\n";
        assert!(Facts::read_by(config_show, hip).deep.torch.is_none());
        assert!(Facts::read_by(config_show, "PyTorch built with:\nCUDA Runtime 11.0\n").deep.torch.is_none());
    }

    fn read_lines(text: &str) -> Facts {
        Facts::read_by(read, text)
    }

    fn torch(facts: &Facts) -> &DeepTorch {
        facts.deep.torch.as_ref().expect("torch facts")
    }

    #[test]
    fn repl_questions_and_answers_are_read() {
        let f = read_lines(">>> torch.__version__\n'2.5.1+cpu'\n>>> torch.cuda.is_available()\nFalse\n");
        assert_eq!(torch(&f).version.as_deref(), Some("2.5.1+cpu"));
        assert_eq!(torch(&f).cuda_available, Some(false));
        assert_eq!(f.packages[0].name, "torch");
        assert_eq!(f.packages[0].version, "2.5.1+cpu");
    }

    #[test]
    fn python_c_answers_in_order_on_lines_or_one_line() {
        let f = read_lines(
            "$ python -c \"import torch; print(torch.__version__); print(torch.version.cuda); \
             print(torch.cuda.get_arch_list())\"\n2.3.0+cu121\n12.1\n['sm_50', 'sm_80', 'sm_90']\n",
        );
        let t = torch(&f);
        assert_eq!(t.version.as_deref(), Some("2.3.0+cu121"));
        assert_eq!(t.cuda.as_deref(), Some("12.1"));
        assert_eq!(t.arch_list.as_deref().map(<[String]>::len), Some(3));
        let f = read_lines(
            "python -c \"import torch; print(torch.__version__, torch.cuda.is_available(), torch.cuda.device_count())\"\n\
             2.1.0+cpu False 0\n",
        );
        assert_eq!(torch(&f).version.as_deref(), Some("2.1.0+cpu"));
        assert_eq!(torch(&f).device_count, Some(0));
    }

    /// opendatalab/MinerU#240, the reporter's Windows REPL (verbatim lines): the banner names the OS, and
    /// `torch.version.cuda` printed `None` says the build is a CPU one, as collect_env's "CUDA used to build
    /// PyTorch: None" does; a version printed with it is the CPU build's.
    #[test]
    fn the_banner_names_the_os_and_a_cuda_of_none_a_cpu_build() {
        let repl = "(MinerU_GPU) C:\\Users\\tu_ha>python\n\
                    Python 3.10.14 | packaged by Anaconda, Inc. | (main, May  6 2024, 19:44:50) [MSC v.1916 64 bit (AMD64)] on win32\n\
                    >>> import torch\n>>> print(torch.cuda.is_available()) \nFalse\n>>> print(torch.version.cuda) \nNone\n";
        let f = read_lines(repl);
        assert_eq!(f.os, Some(OsFamily::Windows));
        assert_eq!(f.torch_build, Some(gpu_doctor_model::FrameworkBuild::Cpu));
        assert_eq!(torch(&f).cuda, None, "None is no CUDA version");
        assert_eq!(banner_os("Python 3.8.10 (default, Nov 22 2023, 10:22:35) \n"), None);
        assert_eq!(
            banner_os("Python 3.8.10 (default, Nov 22 2023, 10:22:35) [GCC 9.4.0] on linux"),
            Some(OsFamily::Linux)
        );
        let f = read_lines(
            "$ python -c \"import torch; print(torch.__version__); print(torch.version.cuda)\"\n1.4.0\nNone\n",
        );
        assert_eq!(f.torch_build, Some(gpu_doctor_model::FrameworkBuild::Cpu));
        let f = read_lines(
            "$ python -c \"import torch; print(torch.__version__); print(torch.version.cuda)\"\n2.3.0+cu121\n12.1\n",
        );
        assert_eq!(f.torch_build, None);
    }

    #[test]
    fn bare_version_then_boolean_is_torch() {
        let f = read_lines("2.3.0+cu121\nFalse\n");
        assert_eq!(torch(&f).version.as_deref(), Some("2.3.0+cu121"));
        assert_eq!(torch(&f).cuda_available, Some(false));
        assert!(read_lines("2.3.0\nFalse\n").deep.torch.is_none(), "no local tag, no claim it is torch");
        assert!(read_lines("1.2.3+cpu\nmaybe\n").deep.torch.is_none());
    }

    #[test]
    fn a_question_without_its_form_of_answer_is_not_read() {
        assert!(read_lines(">>> torch.cuda.is_available()\nTraceback (most recent call last):\n").deep.torch.is_none());
        // IPython's prompts (its tutorial's `In [1]:`/`Out[1]:`), constructed.
        let f = read_lines("In [1]: import torch\nIn [2]: torch.cuda.is_available()\nOut[2]: False\n");
        assert_eq!(f.deep.torch.as_ref().and_then(|t| t.cuda_available), Some(false));
        assert!(read_lines("In [2]: torch.cuda.is_available()\nOut[x]: False\n").deep.torch.is_none());
        assert!(read_lines("print(torch.cuda.is_available()) return false\n").deep.torch.is_none());
        // A condition in code is no answer (an `if … == False:` line a script pasted beside its output).
        assert!(read_lines("    if torch.cuda.is_available() == False:\n").deep.torch.is_none());
        assert!(read_lines("assert torch.version.cuda == \"12.1\"\n").deep.torch.is_none());
        assert!(read_lines("while not torch.cuda.is_available() == True:\n").deep.torch.is_none());
        assert!(read_lines(">>> torch.__version__\n").deep.torch.is_none(), "cut after the question");
    }

    /// Answers people write beside the question. flash-attention#825 is a corpus case's thread; these
    /// lines are from other public text (found with the code search; a README's "Verified here: torch
    /// 2.7.1+cu126, torch.version.cuda = 12.6." and a script comment's "If nvidia-smi shows CUDA 12.0
    /// but torch.version.cuda is 11.3:"), and a markdown post's backticks.
    #[test]
    fn answers_on_the_questions_line_are_read() {
        let f = read_lines("wheel. Verified here: torch 2.7.1+cu126, torch.version.cuda = 12.6.\n");
        assert_eq!(torch(&f).cuda.as_deref(), Some("12.6"));
        let f = read_lines("# If nvidia-smi shows CUDA 12.0 but torch.version.cuda is 11.3:\n");
        assert_eq!(torch(&f).cuda.as_deref(), Some("11.3"));
        let f = read_lines("`torch.__version__` is `2.1.0+cpu`, and `torch.cuda.is_available()` -> False.\n");
        assert_eq!(torch(&f).version.as_deref(), Some("2.1.0+cpu"));
        assert_eq!(torch(&f).cuda_available, Some(false));
        // Code, an f-string and a question without its answer's form stay unread.
        assert!(read_lines("print(torch.cuda.is_available()) return false\n").deep.torch.is_none());
        assert!(read_lines("print(f\"torch.__version__ = {torch.__version__}\")\n").deep.torch.is_none());
        assert!(read_lines("torch.__version__ is wrong\n").deep.torch.is_none());
        assert_eq!(answer_after("x torch.__version__ =", "torch.__version__"), None);
        assert!(read_lines(&"torch.__version__ = ".repeat(50_000)).deep.torch.is_none());
        // Wrapped after its separator, as Markdown hard-wraps a sentence.
        let f =
            read_lines("On linux-aarch64 the wheel is CPU-only: `torch.__version__` is\n`2.9.1+cpu` and the rest.\n");
        assert_eq!(torch(&f).version.as_deref(), Some("2.9.1+cpu"));
    }

    /// is_available()'s answer reported in a sentence, from threads that are not corpus cases:
    /// LiYingwei/ShapeTextureDebiasedTraining#12 and mazurowski-lab/finetune-SAM#18 (the reporters' words).
    #[test]
    fn an_answer_reported_in_a_sentence_is_read() {
        let f = read_lines("When I run `torch.cuda.is_available()` it shows `true`. And Cuda is always work fine\n");
        assert_eq!(torch(&f).cuda_available, Some(true));
        let f = read_lines(
            "I have two GPUs on the machine and torch.cuda.is_available outputs True.  How do I fix this?\n",
        );
        assert_eq!(torch(&f).cuda_available, Some(true));
        let f = read_lines("because torch.cuda.is_available() returned FALSE;\n");
        assert_eq!(torch(&f).cuda_available, Some(false));
        let f = read_lines("(got True when I run \"import torch torch.cuda.is_available()\").\n");
        assert_eq!(torch(&f).cuda_available, Some(true));
        // Code, two answers, a verb far from the word, or no verb at all stay unread.
        for code in [
            "print(torch.cuda.is_available()) return false",
            "if torch.cuda.is_available(): print('it shows True')",
            "assert torch.cuda.is_available() shows True",
            "torch.cuda.is_available() gives True here and False there",
            "torch.cuda.is_available() shows that the tests are all failing, True story",
            "True, I called torch.cuda.is_available",
        ] {
            assert!(read_lines(code).deep.torch.is_none(), "{code}");
        }
        assert!(read_lines(&"torch.cuda.is_available shows ".repeat(50_000)).deep.torch.is_none());
    }

    #[test]
    fn capability_tuple_is_read() {
        let f = read_lines(">>> torch.cuda.get_device_capability(0)\n(8, 6)\n");
        let devices = torch(&f).devices.as_ref().unwrap();
        assert_eq!(devices[0].capability.as_deref(), Some("8.6"));
    }
}
