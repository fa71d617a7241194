//! `read_pasted` takes time in proportion to its input: hostile shapes of text (a line followed by
//! a million `{`, thousands of CSV headers, non-ASCII prose) are measured at two sizes, and the
//! larger must not take much more than its share. Timings are compared with each other, never with
//! a fixed number of seconds, so a slow or busy machine does not fail them.

use std::time::{Duration, Instant};

use super::*;

/// The small and the large size, in bytes; linear work grows 32 times, quadratic 1024 times.
const SMALL: usize = 32 * 1024;
const LARGE: usize = 1024 * 1024;
/// How many times the small case's time the large case may take: 4 times linear, an eighth of
/// quadratic.
const ALLOWED: u32 = 128;
/// Below this, timings are noise; a large case may always take this long. A linear reader takes
/// about 0.5 s for the large case in a debug build, a quadratic one tens of seconds (43 s for the
/// one-line report before it was fixed), so the floor leaves room for a loaded CI machine.
const FLOOR: Duration = Duration::from_secs(5);

/// `unit` repeated, after `head`, until the text is at least `size` bytes.
fn repeat(head: &str, unit: &str, size: usize) -> String {
    let mut s = head.to_owned();
    while s.len() < size {
        s.push_str(unit);
    }
    s
}

/// collect_env's GPU list, one line per GPU.
fn collect_env_gpus(n: usize) -> String {
    let head = "PyTorch version: 2.3.0\nIs CUDA available: True\nGPU models and configuration:\n";
    head.to_owned() + &numbered(n, |i| format!("GPU {i}: NVIDIA Tesla K{i}\n"))
}

/// An NCCL test's device lines, each rank on another machine.
fn nccl_hosts(n: usize) -> String {
    numbered(n, |i| format!("#  Rank {i} Group  0 Pid  1{i} on node{i} device  0 [0x07] NVIDIA A100\n"))
}

/// The hostile shapes, each as a function of the size.
#[allow(clippy::type_complexity)]
fn shapes() -> Vec<(&'static str, Box<dyn Fn(usize) -> String>)> {
    let mut all: Vec<(&'static str, Box<dyn Fn(usize) -> String>)> = vec![
        ("a report key, then one line of `{`", Box::new(|n| repeat("\"schema_version\"\nx", "{", n))),
        ("a report key, then lines of `{`", Box::new(|n| repeat("\"schema_version\"\n", "{\n", n))),
        ("an unclosed report", Box::new(|n| repeat("{\"schema_version\": 1, \"trace\": [", "1,", n))),
        ("quote markers", Box::new(|n| repeat("", "> ", n))),
        ("CSV headers", Box::new(|n| repeat("", "index,name\n", n))),
        ("CSV headers that do not parse", Box::new(|n| repeat("", "index,name,not a field\n", n))),
        ("pip list headers", Box::new(|n| repeat("", "Package Version\n------- -------\n", n))),
        ("conda headers", Box::new(|n| repeat("", "# packages in environment at /x:\n", n))),
        ("-q GPU lines", Box::new(|n| repeat("", "GPU 00000000:01:00.0\n    Product Name : X\n", n))),
        ("unclosed XML", Box::new(|n| repeat("<nvidia_smi_log>\n", "<gpu>", n))),
        ("nested XML", Box::new(|n| repeat("<nvidia_smi_log>\n", "<gpu>", n) + "</nvidia_smi_log>\n")),
        (
            "nvcc versions",
            Box::new(|n| numbered(n, |i| format!("Cuda compilation tools, release 12.{i}, V12.{i}.1\n"))),
        ),
        (
            "collect_env cuDNN paths",
            Box::new(|n| {
                let head =
                    "PyTorch version: 2.3.0\nIs CUDA available: True\ncuDNN version: Probably one of the following:\n";
                head.to_owned() + &numbered(n, |i| format!("/usr/lib/x{i}/libcudnn.so.8.9.{i}\n"))
            }),
        ),
        (
            "framework GPU warnings",
            Box::new(|n| numbered(n, |i| format!("Found GPU{i} Tesla K{i} which is of cuda capability 3.5.\n"))),
        ),
        ("collect_env GPU lines", Box::new(collect_env_gpus)),
        ("nvidia-smi --version heads", Box::new(|n| repeat("", "NVIDIA-SMI version  : 610.57.04\n", n))),
        ("container-cli driver lines", Box::new(|n| repeat("", "NVRM version:   435.21\n", n))),
        ("conda rows without a header", Box::new(|n| repeat("", "pytorch 2.2.0 py3.10_cpu_0 pytorch\n", n))),
        ("NCCL test device lines, each on another host", Box::new(nccl_hosts)),
        ("conda export lines", Box::new(|n| repeat("", "- pytorch=1.9.0=py3.8_cpu_0\n", n))),
        ("one line of both-packages sentences", Box::new(|n| repeat("", "I have both onnxruntime and ", n))),
        ("os.environ lines", Box::new(|n| repeat("", "os.environ[\"CUDA_VISIBLE_DEVICES\"] = \"1\"\n", n))),
        (
            "cmd, PowerShell and %env lines",
            Box::new(|n| repeat("", "set CUDA_VISIBLE_DEVICES=1\n$env:CUDA_HOME='x'\n%env A B\n", n)),
        ),
        (
            "ldd lines after one ldd",
            Box::new(|n| {
                repeat(
                    "ldd /v/site-packages/nvidia/cublas/lib/libcublas.so.12\n",
                    "\tlibcublasLt.so.12 => /usr/local/cuda/lib64/libcublasLt.so.12 (0x00007f3a40000000)\n",
                    n,
                )
            }),
        ),
        ("topology matrix headers", Box::new(|n| repeat("", "\tGPU0\tGPU1\n", n))),
        (
            "topo -p2p matrices after their commands",
            Box::new(|n| repeat("", "$ nvidia-smi topo -p2p rw\n GPU0 GPU1\n GPU0 X CNS\n GPU1 CNS X\n", n)),
        ),
        ("topo -p2p commands", Box::new(|n| repeat("\tGPU0\tGPU1\n", "nvidia-smi topo -p2p r -p2p w\n", n))),
        ("nvlink -s link lines", Box::new(|n| repeat("GPU 0: X (UUID: GPU-1)\n", "Link 0: 25.781 GB/s\n", n))),
        (
            "nvlink -s GPUs",
            Box::new(|n| numbered(n, |i| format!("GPU {i}: NVIDIA X (UUID: GPU-{i})\n Link 0: <inactive>\n"))),
        ),
        (
            "one wide -p2p matrix",
            Box::new(|n| {
                let gpus = n.isqrt() / 3;
                let head: String = (0..gpus).map(|i| format!(" GPU{i}")).collect();
                let row: String = (0..gpus).map(|_| " OK").collect();
                let mut s = format!("nvidia-smi topo -p2p r\n{head}\n");
                for i in 0..gpus {
                    s.push_str(&format!("GPU{i}{row}\n"));
                }
                s
            }),
        ),
        ("docker info server lines", Box::new(|n| repeat("", " Server Version: 24.0.5\n Runtimes: runc\n", n))),
        ("cdi list heads", Box::new(|n| repeat("", "INFO[0000] Found 1 CDI devices\nnvidia.com/gpu=0\n", n))),
        ("nvidia-smi -L lines", Box::new(|n| numbered(n, |i| format!("GPU {i}: NVIDIA T4 (UUID: GPU-{i})\n")))),
        (
            "kubectl node sections",
            Box::new(|n| repeat("Name: x\nLabels: a=b\n", "Capacity:\n  cpu: 1\nAllocatable:\n", n)),
        ),
        (
            "kubectl label lines",
            Box::new(|n| repeat("Labels: a=b\n", "   nvidia.com/gpu.count=8\n", n) + "Capacity:\n"),
        ),
        (
            "numactl node lines under a matrix without NUMA",
            Box::new(|n| {
                repeat("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tSYS\t0-4095\n", "node 0 cpus: 0 1 2 3 4 5 6 7\n", n)
            }),
        ),
        ("every sample", Box::new(|n| repeat("", &SAMPLES.join("\n"), n))),
    ];
    all.extend(sentence_shapes());
    all
}

/// The hostile shapes of sentences: GPUs named in words, install commands.
#[allow(clippy::type_complexity)]
fn sentence_shapes() -> Vec<(&'static str, Box<dyn Fn(usize) -> String>)> {
    vec![
        ("GPUs named in sentences", Box::new(|n| repeat("", "I am using RTX 4090 with a 3090 and 2x Tesla V100 ", n))),
        ("one GPU named in a sentence, per line", Box::new(|n| repeat("", "My GPU is 4090\n", n))),
        (
            "install commands",
            Box::new(|n| {
                repeat(
                    "",
                    "pip install torch==2.1.0 jax==0.4.20 --index-url https://download.pytorch.org/whl/cu118\n",
                    n,
                )
            }),
        ),
        ("one install command of many pins", Box::new(|n| repeat("pip install", " torch==1.0", n))),
    ]
}

/// Lines made by `line` for 0, 1, 2… until the text is at least `size` bytes.
fn numbered(size: usize, line: impl Fn(usize) -> String) -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.len() < size {
        s.push_str(&line(i));
        i += 1;
    }
    s
}

/// The shortest of three runs of `read_pasted` on `text`.
fn best_of_three(text: &str) -> Duration {
    (0..3)
        .map(|_| {
            let t = Instant::now();
            let _ = read_pasted(text, kb());
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// Reads `text` on a thread and waits at most `limit`; the time it took, or `None` past the limit
/// (the thread is left to finish on its own).
fn within(text: String, limit: Duration) -> Option<Duration> {
    crate::test_util::within(limit, move || {
        let t = Instant::now();
        let _ = read_pasted(&text, kb());
        t.elapsed()
    })
}

#[test]
fn hostile_shapes_take_linear_time() {
    let mut slow = Vec::new();
    for (name, make) in shapes() {
        let small = best_of_three(&make(SMALL));
        let limit = (small * ALLOWED).max(FLOOR);
        // A second try where the first ran out of time: a test run in parallel can take the CPU for
        // a while (CI ran one shape past 128 times its small case once, a linear reader); a
        // quadratic reader runs out of time on both.
        match within(make(LARGE), limit).or_else(|| within(make(LARGE), limit)) {
            Some(large) => eprintln!("{name}: {small:?} for {SMALL} bytes, {large:?} for {LARGE} bytes"),
            None => slow.push(format!("{name}: {small:?} for {SMALL} bytes, more than {limit:?} for {LARGE} bytes")),
        }
    }
    assert!(slow.is_empty(), "not linear:\n{}", slow.join("\n"));
}

/// Prose in other scripts must not take the regex engines' slow path: it costs about what the same
/// amount of ASCII prose costs.
#[test]
fn non_ascii_text_costs_about_what_ascii_costs() {
    let ascii = repeat("", "the quick brown fox jumps over the lazy dog, again and again\n", LARGE);
    let other = repeat(
        "",
        "Gr\u{f6}\u{df}en\u{e4}nderung fehlgeschlagen: donn\u{e9}es n\u{e3}o dispon\u{ed}veis, \u{8bbe}\u{5907}\u{4e0d}\u{53ef}\u{7528}\n",
        LARGE,
    );
    let ascii_time = best_of_three(&ascii);
    let limit = (ascii_time * 4).max(FLOOR);
    let other_time = within(other, limit);
    assert!(
        other_time.is_some(),
        "{LARGE} bytes of non-ASCII text took more than {limit:?}; the same amount of ASCII took {ascii_time:?}"
    );
}

/// Text past the limit is cut there; what came before it is read, and a note says how much.
#[test]
fn text_past_the_limit_is_cut_and_says_how_much_was_read() {
    let mut text = COLLECT_ENV_CU124.to_owned();
    if text.len().is_multiple_of(2) {
        text.push(' ');
    }
    // Two bytes each from an odd offset: the limit falls inside a character, which is not cut.
    text.push_str(&"\u{e9}".repeat(MAX_TEXT_BYTES));
    let s = read(&text);
    assert_eq!(framework(&s, "torch").build, cuda("12.4"), "the facts before the cut are read");
    let note = s.notes.join("\n");
    assert!(note.contains("8 MiB") && note.contains(&format!("first {} bytes", MAX_TEXT_BYTES - 1)), "{note}");
    // Binary text is refused, and the error says the text was cut.
    let err = read_pasted(&"\0".repeat(MAX_TEXT_BYTES + 1), kb()).unwrap_err().to_string();
    assert!(err.contains("the text is binary") && err.contains("8 MiB"), "{err}");
}
