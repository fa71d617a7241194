//! `read_pasted` never panics and never hangs: arbitrary text, and realistic pastes, gpu-doctor
//! reports and the shared captures cut short or mangled. Each case runs on its own thread with a
//! time limit ([`CASE_LIMIT`]), far beyond what it needs, so a hang fails instead of stalling.

use std::sync::OnceLock;

use proptest::prelude::*;

use super::*;
use crate::test_util::{CASE_LIMIT, bounded};

/// Reads `text` (and diagnoses what it gives) within the time limit.
pub(super) fn read_bounded(text: String) {
    bounded(CASE_LIMIT, move || {
        if let Ok(s) = read_pasted(&text, kb()) {
            let _ = gpu_doctor_judge::diagnose::diagnose(&s, kb());
        }
    });
}

/// Replaces, for each edit, `len` bytes at `at` with `insert`, or (when `repeat` is above 1) with
/// that many copies of the bytes it replaces: cut, garbled and repeated structure.
pub(super) fn mangle(text: &str, edits: &[(usize, usize, String, usize)]) -> String {
    let mut text = text.to_owned();
    for (at, len, insert, repeat) in edits {
        let at = *at % (text.len() + 1);
        let end = (at + len).min(text.len());
        if text.is_char_boundary(at) && text.is_char_boundary(end) {
            let with = if *repeat > 1 { text[at..end].repeat(*repeat) } else { insert.clone() };
            text.replace_range(at..end, &with);
        }
    }
    text
}

/// Edits for [`mangle`] anywhere in a text of up to `size` bytes.
pub(super) fn edits(size: usize) -> impl Strategy<Value = Vec<(usize, usize, String, usize)>> {
    proptest::collection::vec((0..size, 0usize..200, "\\PC{0,6}", 0usize..40), 0..8)
}

/// Reports of three replayed machines, as `report --json` writes them, made once.
fn reports() -> &'static [String] {
    static REPORTS: OnceLock<Vec<String>> = OnceLock::new();
    REPORTS.get_or_init(|| {
        ["egpu-thunderbolt", "two-toolkits", "consumer-gpu-torch-venv"]
            .iter()
            .map(|s| serde_json::to_string_pretty(&super::reports::report_of(s)).unwrap())
            .collect()
    })
}

/// The shared captures (nvidia-smi table, XML, CSV, nvcc), pasted into a post; empty when the
/// shared folder is absent.
fn captures() -> &'static [String] {
    static CAPTURES: OnceLock<Vec<String>> = OnceLock::new();
    CAPTURES.get_or_init(|| {
        ["nvidia-smi-table", "nvidia-smi-xml", "nvidia-smi-csv", "nvcc"]
            .iter()
            .filter_map(|dir| crate::parse::fixtures(dir))
            .flatten()
            .map(|(_, text)| format!("Here is my machine:\n```\n{text}\n```\n"))
            .collect()
    })
}

/// Every sample cut at every 37th byte boundary gives partial facts or an error, never a panic.
#[test]
fn truncated_samples_never_panic() {
    for sample in SAMPLES {
        let mut cut = 0;
        while cut < sample.len() {
            if let Some(prefix) = sample.get(..cut) {
                let _ = read_pasted(prefix, kb());
            }
            cut += 37;
        }
    }
}

#[test]
fn a_cut_collect_env_keeps_its_first_fields() {
    let cut = COLLECT_ENV_CU124.find("OS:").unwrap();
    let s = read(&COLLECT_ENV_CU124[..cut]);
    assert_eq!(framework(&s, "torch").build, cuda("12.4"));
    assert!(is_unknown(&s.driver) && is_unknown(&s.gpus));
}

/// The lines of `text` kept where `keep` says so (cycled), in the order of `keys` (cycled, stable).
fn dropped_and_shuffled(text: &str, keep: &[bool], keys: &[u16]) -> String {
    let mut lines: Vec<(u16, &str)> = text
        .lines()
        .enumerate()
        .filter(|(i, _)| keep.is_empty() || keep[i % keep.len()])
        .map(|(i, l)| (if keys.is_empty() { 0 } else { keys[i % keys.len()] }, l))
        .collect();
    lines.sort_by_key(|(k, _)| *k);
    lines.into_iter().map(|(_, l)| l).collect::<Vec<_>>().join("\n")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Readable text is never refused (issue 27: exit 3 only for empty or binary input): any
    /// sample with lines dropped and shuffled is read, unless nothing but blank lines is left.
    #[test]
    fn samples_with_lines_dropped_and_shuffled_are_never_refused(
        which in 0..SAMPLES.len(),
        keep in proptest::collection::vec(any::<bool>(), 0..64),
        keys in proptest::collection::vec(any::<u16>(), 0..64),
    ) {
        let text = dropped_and_shuffled(SAMPLES[which], &keep, &keys);
        // Blank once a post's wrapping is taken off (code fences, quote marks, prompts).
        let blank = crate::parse::paste::clean::lines(&text).iter().all(|l| l.trim().is_empty());
        match read_pasted(&text, kb()) {
            Ok(_) => prop_assert!(!blank, "blank text was read"),
            Err(e) => prop_assert!(blank, "refused: {e}\n{text}"),
        }
    }

    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,400}") {
        read_bounded(s);
    }

    #[test]
    fn near_miss_text_never_panics(
        s in "(PyTorch version: |CUDA used to build PyTorch: |GPU [0-9]: |Driver Version |NVIDIA-SMI |\\| |\\+---|GPU 0000:01:00.0|    Max : |jaxlib: |jax: |Package  Version|---- ----|# packages in environment at|==|cuda[0-9]{0,4}|[0-9.]{0,8}|'cuda_version': |found version |sm_[0-9]{0,3}|\\{|\\}|\"schema_version\"|> |```|>>> |torch.__version__|torch.version.cuda|torch.cuda.is_available\\(\\)|torch.cuda.get_arch_list\\(\\)|torch.cuda.get_device_capability\\(|python -c \"|print\\(|\\(8, |\\['sm_|True|False|\\+cpu|\\+cu121|`|could not select device driver \"\" with capabilities: |01:00.0 VGA compatible controller: NVIDIA Corporation |\\tKernel driver in use: |Kernel modules: |LnkCap: Port #0, Speed |LnkSta: Speed |[0-9.]{0,4}GT/s|, Width x[0-9]{0,3}|nouveau 0000:01:00.0: NVIDIA |could not insert 'nvidia': Key was rejected by service|Lockdown: |export |CUDA_VISIBLE_DEVICES=|CUDA_HOME=|echo \\$PATH|echo \\$LD_LIBRARY_PATH|which -a nvcc|/usr/local/cuda-1[0-9]\\.[0-9]|/bin/nvcc|/bin/nvcc -V|lrwxrwxrwx 1 root root 21 Mar  1 12:00 |drwxr-xr-x |cuda -> |Cuda compilation tools, release 12.0, V12.0.140|libcuda.so.1 \\(libc6,x86-64\\) => |/usr/lib/wsl/lib/|NVRM: The NVIDIA GeForce GT 710 GPU installed in this system is|NVRM:  supported through the NVIDIA 470.xx Legacy drivers|The 535.129.03 NVIDIA driver will ignore|ggml_cuda_init: found [0-9] CUDA devices:|  Device [0-9]: |, compute capability |, VMM: yes|msg=\"inference compute\" |library=cuda |compute=[0-9.]{0,4} |driver=[0-9.]{0,5} |name=\"|Device [0-9] \\[|\\] PCIe GEN [0-9]@[0-9]{0,2}x|\\[[0-9]\\] | \\| [0-9]{0,3}'C, |[0-9]{0,3} % |[0-9]{0,5} / [0-9]{0,5} MB|ptxas: NVIDIA \\(R\\) Ptx optimizing assembler|Cuda compilation tools, release |Is CUDA available            : |### Tensorflow Version|### OS Platform and Distribution|### Python version|Windows 1[01]|\\n){0,60}"
    ) {
        read_bounded(s);
    }

    #[test]
    fn mangled_samples_never_panic(which in 0..SAMPLES.len(), edits in edits(6000)) {
        read_bounded(mangle(SAMPLES[which], &edits));
    }

    #[test]
    fn mangled_reports_never_panic_or_hang(which in 0..3usize, edits in edits(60_000)) {
        read_bounded(mangle(&reports()[which], &edits));
    }

    #[test]
    fn mangled_captures_never_panic_or_hang(which: proptest::sample::Index, edits in edits(20_000)) {
        if !captures().is_empty() {
            read_bounded(mangle(&captures()[which.index(captures().len())], &edits));
        }
    }
}
