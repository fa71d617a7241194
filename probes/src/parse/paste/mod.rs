//! Text pasted from another machine → a partial [`Snapshot`].
//!
//! The text may mix, in any order and amid prose, markdown fences, `>` quotes and shell prompts:
//! PyTorch's collect_env, `torch.__config__.show()` and OpenMMLab's collect_env; nvidia-smi's table, `-q` text (its health sections too), `-q -x` XML,
//! `--query-gpu` CSV, `-L` or `--version`; `nvidia-smi topo -m`, `topo -p2p`, `nvlink -s` and `nvlink -e`;
//! `nvidia-container-cli info`, `docker info` and `nvidia-ctk cdi list`;
//! `nvcc --version`; `pip list`, `pip freeze`, `conda list`, uv's install summary (` + torch==2.5.1`); PyTorch's REPL and `python -c` prints;
//! `jax.print_environment_info()`; ONNX Runtime's `get_available_providers()`; llama.cpp's and ollama's device lines; gpustat and nvtop lines;
//! `ptxas --version`;
//! TensorFlow's build info, version, device list and device log lines; `lspci -k`/`-vv` blocks (the
//! Resizable BAR capability too); the IOMMU's mode from the kernel command line and log; and
//! kernel log lines (nouveau, a refused unsigned module, the PCIe bandwidth an NVIDIA GPU was found limited to) and
//! the kernel module's `/proc/driver/nvidia/version`; `env`, `export`, `echo $PATH`,
//! `which -a nvcc` and `ls -l /usr/local/cuda*`; `ldconfig -p` lines and WSL2's `/usr/lib/wsl/lib`;
//! the WSL version (`wsl -l -v`, the kernel release, `WSL1`/`WSL2` named in the text);
//! a GPU count said in words (`I only have one GPU`); a GPU named in a sentence (`I am using RTX 4090`)
//! where no program lists one; an install command (`pip install torch==2.1.0 --index-url …/cu118`)
//! where nothing else gives that framework's version;
//! issue forms and `Label: value` lines (`PyTorch Version: 1.1.0`, `Driver Version: 460.89`, `GPU: …`);
//! error and warning lines known to `assets/compat/errors.toml`; or gpu-doctor's own report JSON. Every part of the
//! snapshot the text says nothing about stays `unknown`; nothing is inferred about this machine.
//!
//! One file per format; `facts` gathers what they find and builds the snapshot.

mod ask;
mod clean;
mod cmake_cuda;
mod collect_env;
mod containers;
mod cuda_order;
mod cupy_config;
mod device_query;
mod facts;
mod frameworks;
mod gpu_words;
mod gpus;
mod install_commands;
mod iommu;
mod issue_form;
mod jax_env;
mod kernel_log;
mod llama_cpp;
mod loader;
mod lspci;
mod messages;
mod monitors;
mod nccl_test_log;
mod nvcc_verbose;
mod onnxruntime;
mod os_release;
mod p2p_bandwidth;
mod packages;
mod paddle_env;
mod pkg;
mod prose;
mod ptxas;
mod python_prints;
mod report;
mod shell_env;
mod smi;
mod tensorflow;
mod wsl;

use std::collections::HashSet;

use super::ParseError;
use gpu_doctor_kb::Kb;
use gpu_doctor_model::{NOTHING_RECOGNISED, Snapshot};

use messages::Matcher;

pub use ask::{COLLECT_ENV, CONTAINER_CLI_INFO, LS_CUDA, LSPCI_K, NVIDIA_SMI, NextPaste, PYTHON_TORCH, next_paste};
pub(crate) use kernel_log::boot_limits;
pub use kernel_log::xid_events;

/// The format name recorded when the text holds known error or warning lines.
const MESSAGES: &str = "error messages";

/// The most text read from one paste: 8 MiB, like every file the probes read. Longer text is cut
/// there (at a character boundary) and a note says so; what came before the cut is read.
pub const MAX_TEXT_BYTES: usize = crate::host::MAX_FILE_BYTES;

/// Reads whatever gpu-doctor recognises in `text` into a snapshot whose origin is
/// [`gpu_doctor_model::Origin::Pasted`] with the formats found, in the order first seen. A pasted gpu-doctor
/// report or snapshot is taken as it is (its origin set to pasted), with known messages from the
/// text around it added. What could not be read whole (text past [`MAX_TEXT_BYTES`], XML cut
/// short, a report from a newer gpu-doctor), and text in which nothing is recognised (with what to
/// paste next), is said in the snapshot's `notes`. Errs only on empty or binary text, or on a
/// gpu-doctor report this version cannot read; never panics, and takes time in proportion to the
/// text.
pub fn read_pasted(text: &str, kb: &Kb) -> Result<Snapshot, ParseError> {
    read_pasted_without(text, kb, &[])
}

/// A substring searched for in every line of a paste, its searcher built once (on first use):
/// `str::contains` builds one per call, which over megabytes of text costs more than the search
/// itself.
pub(super) struct Needle {
    needle: &'static str,
    finder: std::sync::OnceLock<memchr::memmem::Finder<'static>>,
}

impl Needle {
    pub(super) const fn new(needle: &'static str) -> Self {
        Self { needle, finder: std::sync::OnceLock::new() }
    }

    /// Whether `line` holds the needle.
    pub(super) fn in_line(&self, line: &str) -> bool {
        self.find(line).is_some()
    }

    /// Where the needle first starts in `line`.
    pub(super) fn find(&self, line: &str) -> Option<usize> {
        self.finder.get_or_init(|| memchr::memmem::Finder::new(self.needle)).find(line.as_bytes())
    }
}

/// The words of `text`, runs of the characters `is_word` accepts, each with its byte offset in
/// `text` (any other character, `—` or `⚠` too, separates words).
pub(super) fn words_at(text: &str, is_word: impl Fn(char) -> bool) -> impl Iterator<Item = (usize, &str)> {
    text.split(move |c: char| !is_word(c))
        .filter(|w| !w.is_empty())
        .map(move |w| (w.as_ptr().addr() - text.as_ptr().addr(), w))
}

/// The readers of [`read_pasted`], by the name of their module (`collect_env`, `llama_cpp`, `wsl`,
/// …), in the order they run; `topology` is `nvidia-smi topo -m`'s.
pub const READERS: &[&str] = &[
    "collect_env",
    "python_prints",
    "smi",
    "packages",
    "jax_env",
    "cupy_config",
    "tensorflow",
    "issue_form",
    "lspci",
    "kernel_log",
    "shell_env",
    "loader",
    "wsl",
    "llama_cpp",
    "monitors",
    "ptxas",
    "containers",
    "onnxruntime",
    "prose",
    "p2p_bandwidth",
    "nccl_test_log",
    "os_release",
    "topology",
    "iommu",
    "paddle_env",
    "device_query",
    "nvcc_verbose",
    "cmake_cuda",
    "install_commands",
    "gpu_words",
];

/// [`read_pasted`] with the readers named in `off` (names of [`READERS`]) left out: for measuring
/// how much of the corpus score a reader written from a case's own thread carries
/// (leave-one-source-out). Known messages and a pasted gpu-doctor report are always read.
pub fn read_pasted_without(text: &str, kb: &Kb, off: &[&str]) -> Result<Snapshot, ParseError> {
    let on = |reader: &str| !off.contains(&reader);
    let mut notes = Vec::new();
    let mut text = text;
    if text.len() > MAX_TEXT_BYTES {
        let end = text.floor_char_boundary(MAX_TEXT_BYTES);
        text = text.get(..end).unwrap_or("");
        notes.push(format!(
            "the text is longer than {} MiB: only its first {end} bytes were read",
            MAX_TEXT_BYTES / (1024 * 1024)
        ));
    }
    let matcher = Matcher::for_kb(kb);
    let lines = clean::lines(text);
    let joined = lines.join("\n");
    match report::find(&joined) {
        Some(report::Found::Read { mut snap, rest }) => {
            let mut known: HashSet<(String, String)> =
                snap.messages.iter().map(|o| (o.id.clone(), o.line.clone())).collect();
            for (_, m) in matcher.scan(&clean::lines(&rest)) {
                if known.insert((m.id.clone(), m.line.clone())) {
                    snap.messages.push(m);
                }
            }
            notes.append(&mut snap.notes);
            snap.notes = notes;
            // A report saved before the probes stored the driver's CUDA level lacks it.
            kb.complete_snapshot(&mut snap);
            return Ok(*snap);
        }
        Some(report::Found::Unreadable(why)) => return Err(error(why, &notes)),
        None => {}
    }
    let mut facts = facts::Facts::default();
    facts.notes = notes;
    let readers: [(&str, &Reader<'_>); 28] = [
        ("collect_env", &|f| collect_env::read(&lines, f)),
        ("python_prints", &|f| python_prints::read(&lines, f)),
        ("smi", &|f| smi::read(&lines, &joined, f)),
        ("packages", &|f| packages::read(&lines, f)),
        ("jax_env", &|f| jax_env::read(&lines, f)),
        ("cupy_config", &|f| cupy_config::read(&lines, f)),
        ("tensorflow", &|f| tensorflow::read(&lines, f)),
        ("issue_form", &|f| issue_form::read(&lines, f)),
        ("lspci", &|f| lspci::read(&lines, f)),
        ("kernel_log", &|f| kernel_log::read(&lines, f)),
        ("shell_env", &|f| shell_env::read(&lines, f)),
        ("loader", &|f| loader::read(&lines, f)),
        ("wsl", &|f| {
            wsl::prompt_signs(text, f);
            wsl::read(&lines, f);
        }),
        ("llama_cpp", &|f| llama_cpp::read(&lines, f)),
        ("monitors", &|f| monitors::read(&lines, f)),
        ("ptxas", &|f| ptxas::read(&lines, f)),
        ("containers", &|f| containers::read(&lines, f)),
        ("onnxruntime", &|f| onnxruntime::read(&lines, f)),
        ("os_release", &|f| os_release::read(&lines, f)),
        ("prose", &|f| prose::read(&lines, f)),
        ("p2p_bandwidth", &|f| p2p_bandwidth::read(&lines, f)),
        ("nccl_test_log", &|f| nccl_test_log::read(&lines, f)),
        ("iommu", &|f| iommu::read(&lines, f)),
        ("paddle_env", &|f| paddle_env::read(&lines, f)),
        ("device_query", &|f| device_query::read(&lines, f)),
        ("nvcc_verbose", &|f| nvcc_verbose::read(&lines, f)),
        ("cmake_cuda", &|f| cmake_cuda::read(&lines, f)),
        // After every reader that prints or lists a framework's version.
        ("install_commands", &|f| install_commands::read(&lines, f)),
    ];
    // The known messages are looked for on a thread of their own while the readers run: neither
    // reads what the other finds, and on megabytes of text each takes a good share of the time.
    let mut found = std::thread::scope(|scope| {
        let scan = scope.spawn(|| matcher.scan(&lines));
        for (name, read) in readers {
            if on(name) {
                read(&mut facts);
            }
        }
        scan.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    });
    if let Some((at, _)) = found.first() {
        facts.saw(*at, MESSAGES);
    }
    messages::add_cmake_conflict_values(&lines, &mut found);
    facts.messages = found.into_iter().map(|(_, m)| m).collect();
    messages::add_nccl_bus_error(&lines, &mut facts.messages);
    facts.xid_events = facts.messages.iter().filter_map(kernel_log::xid_event).collect();
    // After every program's GPU list and the messages, which name the GPU where they do.
    if on("gpu_words") {
        gpu_words::read(&lines, kb, &mut facts);
    }
    let topology = if on("topology") { super::smi_topo::paste::read(&lines) } else { None };
    if facts.is_empty() && topology.as_ref().is_none_or(|t| t.topology.is_none()) {
        // Readable text is never refused: the answer says nothing was recognised, and `ask`
        // names what to paste next. Only empty or binary text is an error.
        if let Some(why) = unreadable(&lines) {
            return Err(error(why, &facts.notes));
        }
        facts.notes.push(format!(
            "{NOTHING_RECOGNISED} in these {} line(s), so nothing is known of that machine; it reads {READS}",
            lines.iter().filter(|l| !l.trim().is_empty()).count()
        ));
    }
    let mut snap = facts.into_snapshot(kb);
    if let Some(t) = topology {
        super::smi_topo::paste::apply(t, &mut snap);
    }
    Ok(snap)
}

/// One reader over the paste's lines, filling the facts.
type Reader<'a> = dyn Fn(&mut facts::Facts) + 'a;

/// What the paste reader reads, for the note on text in which it recognised nothing.
const READS: &str = "collect_env (PyTorch's or OpenMMLab's), torch.__config__.show(), nvidia-smi (table, -q, -q -x, CSV, -L or --version), nvidia-smi topo -m / topo -p2p / \
                     nvlink -s / nvlink -e, p2pBandwidthLatencyTest, nvidia-container-cli info, docker info, nvidia-ctk cdi list, \
                     nvcc --version or -v, deviceQuery, pip list / pip freeze / \
                     conda list / uv's install summary, PyTorch's printed torch.__version__ or is_available(), \
                     jax.print_environment_info(), cupy.show_config(), ONNX Runtime's get_available_providers(), \
                     TensorFlow's build info or device lines, lspci -k / -vv, \
                     the kernel command line and its IOMMU lines, \
                     kernel log lines, /proc/driver/nvidia/version, env / echo $PATH / which -a nvcc / ls -l /usr/local/cuda*, ldconfig -p, \
                     `Label: value` lines (PyTorch version:, Driver Version:, GPU:), \
                     a known CUDA, framework or kernel error message, or a gpu-doctor report";

/// Why text cannot be read at all: it is empty (only blank lines), or binary (a NUL byte, or more
/// than one character in eight a control character or an undecodable byte). `None` for readable
/// text, however little of it gpu-doctor recognises.
fn unreadable(lines: &[String]) -> Option<String> {
    let (mut all, mut odd, mut nul) = (0usize, 0usize, false);
    for c in lines.iter().flat_map(|l| l.chars()) {
        all += 1;
        nul |= c == '\0';
        if c == char::REPLACEMENT_CHARACTER || (c.is_control() && c != '\t') {
            odd += 1;
        }
    }
    if lines.iter().all(|l| l.trim().is_empty()) {
        Some("the text is empty".to_owned())
    } else if nul || odd * 8 > all {
        Some(format!(
            "the text is binary ({odd} of its {all} characters are control characters or undecodable bytes), not a program's output"
        ))
    } else {
        None
    }
}

/// The error for pasted text, with what reading it noted (a cut, a newer schema) after it.
fn error(why: String, notes: &[String]) -> ParseError {
    let mut message = why;
    for n in notes {
        message.push_str("; ");
        message.push_str(n);
    }
    ParseError::new("pasted text", message)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
