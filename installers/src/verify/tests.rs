#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! The smoke test run for real: the system's `python3` makes a virtual environment (no pip), fake
//! framework packages go into its site-packages, and `probe.py --smoke` runs in it as it would in a
//! user's.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gpu_doctor_probes::host::{Cmd, Host, SystemHost};

use super::*;

const LIMIT: Duration = Duration::from_secs(60);

/// A virtual environment in a temporary folder, and its site-packages.
struct Env {
    _dir: tempfile::TempDir,
    python: PathBuf,
    site: PathBuf,
}

fn venv() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let host = SystemHost::new();
    let made = host
        .run(&Cmd::new(["python3", "-m", "venv", "--without-pip", &dir.path().display().to_string()]).timeout(LIMIT))
        .expect("python3 is needed for these tests");
    assert!(made.success(), "python3 -m venv failed: {}", made.stderr);
    let python = dir.path().join("bin/python");
    let site = host
        .run(&Cmd::new([
            python.display().to_string().as_str(),
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ]))
        .unwrap();
    let site = PathBuf::from(site.stdout.trim());
    std::fs::create_dir_all(&site).unwrap();
    Env { _dir: dir, python, site }
}

/// A package `name` whose `__init__.py` is `text`.
fn package(site: &Path, name: &str, text: &str) {
    std::fs::create_dir_all(site.join(name)).unwrap();
    std::fs::write(site.join(name).join("__init__.py"), text).unwrap();
}

/// A fake torch: `gpus` CUDA devices, products in plain Python; `wrong` puts a wrong number into
/// every product on a GPU.
fn fake_torch(version: &str, cuda: Option<&str>, gpus: u32, wrong: bool) -> String {
    let cuda = cuda.map_or_else(|| "None".to_owned(), |c| format!("{c:?}"));
    let wrong = if wrong { "True" } else { "False" };
    format!(
        r#"
__version__ = "{version}"
float32 = "float32"
GPUS = {gpus}
WRONG = {wrong}

class _Version:
    cuda = {cuda}

version = _Version()

class _Matrix:
    def __init__(self, rows, device):
        self.rows = [[float(v) for v in r] for r in rows]
        self.device = device

    def __matmul__(self, other):
        cols = list(zip(*other.rows))
        out = [[sum(a * b for a, b in zip(row, col)) for col in cols] for row in self.rows]
        if WRONG and self.device.startswith("cuda"):
            out[3][5] += 1.0
        return _Matrix(out, self.device)

    def cpu(self):
        return _Matrix(self.rows, "cpu")

    def tolist(self):
        return self.rows

def tensor(data, dtype=None, device="cpu"):
    if device.startswith("cuda") and int(device.split(":")[1]) >= GPUS:
        raise RuntimeError("CUDA error: invalid device ordinal")
    return _Matrix(data, device)

class _Cuda:
    def is_available(self):
        return GPUS > 0
    def device_count(self):
        return GPUS
    def get_device_name(self, i):
        return "NVIDIA GeForce RTX 4090"
    def get_device_capability(self, i):
        return (8, 9)
    def get_device_properties(self, i):
        class _Props:
            total_memory = 25757220864
        return _Props()
    def get_arch_list(self):
        return ["sm_50", "sm_80", "sm_86", "sm_89", "sm_90"] if {cuda} else []

cuda = _Cuda()

class _Cudnn:
    @staticmethod
    def version():
        return 90100 if GPUS else None

class _Backends:
    cudnn = _Cudnn()

backends = _Backends()
print("torch says hello on stdout")
"#
    )
}

fn report_of(v: &Verified) -> &SmokeReport {
    v.outcome.as_ref().unwrap_or_else(|e| panic!("{e}"))
}

fn torch_of(v: &Verified) -> &FrameworkSmoke {
    report_of(v).checks.get("torch").unwrap()
}

/// What torch said of itself, in the deep probe's schema.
fn torch_facts(v: &Verified) -> &gpu_doctor_model::DeepTorch {
    report_of(v).facts.torch.as_ref().unwrap()
}

#[test]
fn without_a_gpu_it_says_what_it_could_and_could_not_prove() {
    let env = venv();
    package(&env.site, "torch", &fake_torch("2.5.1+cpu", None, 0, false));
    let v = run(&env.python, &["torch".to_owned()], LIMIT);
    let t = torch_of(&v);
    let facts = torch_facts(&v);
    assert_eq!(facts.version.as_deref(), Some("2.5.1+cpu"));
    assert_eq!(t.no_gpu.as_deref(), Some("CUDA not available"));
    assert_eq!((facts.cuda.as_deref(), facts.arch_list.as_deref()), (None, Some(&[][..])), "{facts:#?}");
    assert!(t.gpus.is_empty(), "{t:#?}");
    assert!(t.cpu.as_ref().unwrap().ok, "{t:#?}");
    assert!(!v.proved());
    assert_eq!(
        v.summary(),
        "GPU use could not be proven here: no GPU visible to torch (CUDA not available); checked: torch 2.5.1+cpu \
         imports, CPU matmul ok"
    );
}

#[test]
fn a_framework_that_fails_to_import_gives_its_error() {
    let env = venv();
    package(&env.site, "torch", "raise ImportError('libtorch_cuda.so: cannot open shared object file')\n");
    let v = run(&env.python, &["torch".to_owned(), "jax".to_owned()], LIMIT);
    let report = report_of(&v);
    assert_eq!(
        report.import_of("torch"),
        (None, Some("ImportError: libtorch_cuda.so: cannot open shared object file")),
        "{report:#?}"
    );
    assert!(report.import_of("jax").1.unwrap().starts_with("ModuleNotFoundError"), "{report:#?}");
    assert_eq!(report.checks["torch"].cpu, None, "no product is tried after a failed import");
    let s = v.summary();
    assert!(
        s.starts_with("GPU use could not be proven here: torch does not import (ImportError: libtorch_cuda.so"),
        "{s}"
    );
    assert!(s.contains("jax does not import (ModuleNotFoundError"), "{s}");
}

#[test]
fn each_gpu_is_checked_against_the_cpu_product() {
    let env = venv();
    package(&env.site, "torch", &fake_torch("2.5.1+cu124", Some("12.4"), 2, false));
    let v = run(&env.python, &["torch".to_owned()], LIMIT);
    let t = torch_of(&v);
    let facts = torch_facts(&v);
    assert_eq!((facts.cuda.as_deref(), facts.cudnn_version), (Some("12.4"), Some(90100)));
    assert!(facts.arch_list.as_ref().unwrap().contains(&"sm_89".to_owned()), "{facts:#?}");
    assert_eq!(facts.devices.as_ref().map(Vec::len), Some(2), "the deep probe's device list: {facts:#?}");
    assert_eq!(t.gpus.len(), 2);
    assert_eq!(t.gpus[1].capability.as_deref(), Some("8.9"));
    assert!(v.proved(), "{t:#?}");
    assert!(
        v.summary().starts_with("GPU use proven: torch 2.5.1+cu124 on GPU 0 NVIDIA GeForce RTX 4090 (8.9)"),
        "{}",
        v.summary()
    );

    // A GPU whose product is wrong is not proof.
    let env = venv();
    package(&env.site, "torch", &fake_torch("2.5.1+cu124", Some("12.4"), 1, true));
    let v = run(&env.python, &["torch".to_owned()], LIMIT);
    let g = &torch_of(&v).gpus[0];
    assert!(!g.check.ok && g.check.error.as_deref().unwrap().contains("differs from the CPU result"), "{g:#?}");
    assert!(!v.proved());
    assert!(v.summary().starts_with("GPU use could not be proven here: torch 2.5.1+cu124 on GPU 0"), "{}", v.summary());
}

#[test]
fn a_hanging_interpreter_is_stopped_at_the_limit() {
    let env = venv();
    package(&env.site, "torch", "import time\ntime.sleep(60)\n");
    let start = Instant::now();
    let v = run(&env.python, &["torch".to_owned()], Duration::from_secs(2));
    assert!(start.elapsed() < Duration::from_secs(30), "{:?}", start.elapsed());
    let e = v.outcome.unwrap_err();
    assert!(e.contains("gave no result") || e.contains("did not run"), "{e}");
    let missing = run(Path::new("/nonexistent/bin/python"), &["torch".to_owned()], LIMIT);
    assert!(
        missing.summary().starts_with("GPU use could not be proven: /nonexistent/bin/python"),
        "{}",
        missing.summary()
    );
}

/// Output that is not the script's one JSON object is an error, never a panic.
#[test]
fn malformed_or_truncated_output_is_an_error() {
    let good = r#"{"smoke_version": 2, "python": "3.11.7", "facts": {"probe_version": 1, "torch": {"version": "2.5.1"}}, "checks": {"torch": {"error": null, "no_gpu": "CUDA not available", "cpu": {"ok": true, "max_error": 0.0, "error": null}, "gpus": []}}}"#;
    assert!(parse(good).is_ok());
    assert!(parse(&format!("noise from a framework\n{good}\n\n")).is_ok());
    for (bad, why) in [
        ("", "empty"),
        ("   \n", "blank"),
        (&good[..good.len() / 2], "truncated"),
        ("Traceback (most recent call last):", "a traceback"),
        (r#"{"smoke_version": "one"}"#, "wrong types"),
        (
            r#"{"smoke_version": 2, "python": "3", "facts": {}, "checks": {"torch": {"gpus": [{"index": -1}]}}}"#,
            "a bad gpu",
        ),
        (r#"{"smoke_version": 2, "python": "3", "facts": {"torch": {"version": 2}}, "checks": {}}"#, "bad facts"),
        ("[1, 2, 3]", "not an object"),
        ("\u{0}\u{ff}{{{{", "garbage"),
    ] {
        assert!(parse(bad).is_err(), "{why} parsed");
    }
}

#[test]
fn package_names_map_to_the_module_imported() {
    for (package, module) in [
        ("torch", "torch"),
        ("cupy-cuda12x", "cupy"),
        ("jax[cuda12]", "jax"),
        ("tensorflow[and-cuda]", "tensorflow"),
        ("tf-nightly", "tensorflow"),
        ("jax-cuda12-plugin", "jax"),
        ("jaxlib", "jax"),
        ("torch==2.5.1+cu124", "torch"),
        ("numpy", "numpy"),
    ] {
        assert_eq!(module_of(package), module);
    }
}

/// The frameworks of the image a lent H200 ran (its record-fixture's `venv:/opt/torch/.venv`): the
/// smoke test is asked for each module once, so JAX's four packages are one JAX check, not four.
#[test]
fn each_module_is_asked_for_once() {
    let env: Vec<String> =
        ["cupy-cuda13x", "jax", "jax-cuda13-pjrt", "jax-cuda13-plugin", "jaxlib", "onnxruntime", "torch"]
            .map(str::to_owned)
            .to_vec();
    assert_eq!(modules_of(&env), ["cupy", "jax", "onnxruntime", "torch"]);
}

/// `SMOKE_TESTED` is what probe.py's smoke test computes with: the keys of its `PRODUCTS`.
#[test]
fn the_smoke_tested_modules_are_probe_py_s() {
    let line = PROBE_SCRIPT.lines().find(|l| l.starts_with("PRODUCTS = {")).expect("probe.py names PRODUCTS");
    let mut keys: Vec<&str> = line.split('"').skip(1).step_by(2).collect();
    let mut ours = SMOKE_TESTED.to_vec();
    keys.sort_unstable();
    ours.sort_unstable();
    assert_eq!(keys, ours);
}
