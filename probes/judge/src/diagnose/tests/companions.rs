//! Companion packages against the frameworks beside them.

use super::builder::Machine;
use crate::diagnose::fix;
use gpu_doctor_model::{Change, InstallFlag};

const TORCH: &str = "companions.built_for_other_torch";
const NUMPY2: &str = "companions.numpy_two_beside_numpy_one_build";

fn rig() -> Machine {
    Machine::linux().driver("560.35.03", "12.6").gpu("NVIDIA GeForce RTX 4090", "8.9")
}

fn companion_ids(m: &Machine) -> Vec<String> {
    m.ids().into_iter().filter(|id| id.starts_with("companions.")).collect()
}

fn install(requirements: &[&str], index_url: Option<&str>) -> Change {
    Change::Install {
        requirements: requirements.iter().map(|r| (*r).to_owned()).collect(),
        flags: Vec::new(),
        index_url: index_url.map(str::to_owned),
    }
}

#[test]
fn torchvision_of_another_torch_line_is_named_and_planned_from_torchs_index() {
    // The classic: torch upgraded alone to 2.5.1, torchvision left at 0.19.
    let m = rig().torch("2.5.1+cu124").companion("torchvision", "0.19.1+cu124").companion("torchaudio", "2.5.1+cu124");
    assert_eq!(companion_ids(&m), [TORCH]);
    let f = m.finding(TORCH);
    assert!(f.summary.starts_with("torchvision in "), "{}", f.summary);
    assert!(
        f.evidence.iter().any(|e| e.contains("torchvision 0.19.1+cu124: built for another torch line")),
        "{:?}",
        f.evidence
    );
    // torch 2.5.1 is the line's newest: the table's exact companion, from the cu124 index.
    assert_eq!(
        m.changes(TORCH),
        [install(&["torch==2.5.1+cu124", "torchvision==0.20.1+cu124"], Some("https://download.pytorch.org/whl/cu124"))]
    );
    // An older patch of the line pins the companion's line and lets pip pick the one built for it.
    let m = rig().torch("2.5.0").companion("torchaudio", "2.4.1");
    assert_eq!(m.changes(TORCH), [install(&["torch==2.5.0", "torchaudio==2.5.*"], None)]);
}

#[test]
fn a_cpu_companion_beside_a_cuda_torch_is_another_build() {
    let m = rig().torch("2.3.1+cu121").companion("torchvision", "0.18.1+cpu");
    assert_eq!(companion_ids(&m), [TORCH]);
    assert_eq!(
        m.changes(TORCH),
        [install(&["torch==2.3.1+cu121", "torchvision==0.18.1+cu121"], Some("https://download.pytorch.org/whl/cu121"))]
    );
}

#[test]
fn matching_companions_nightlies_and_unknown_lines_give_nothing() {
    let quiet = [
        rig().torch("2.5.1+cu124").companion("torchvision", "0.20.1+cu124").companion("torchaudio", "2.5.1+cu124"),
        // PyPI's companion has no local tag: not another build.
        rig().torch("2.5.1+cu124").companion("torchvision", "0.20.1"),
        rig().torch("2.5.0").companion("torchvision", "0.20.0"),
        // A nightly pairs with its own date's companions.
        rig().torch("2.8.0.dev20250301+cu128").companion("torchvision", "0.22.0.dev20250301+cu128"),
        // No torch, or a torch line the table does not know.
        rig().companion("torchvision", "0.19.1"),
        rig().torch("3.0.0+cu130").companion("torchvision", "0.19.1"),
    ];
    for m in &quiet {
        assert!(companion_ids(m).is_empty(), "{:?}", m.findings());
    }
}

#[test]
fn numpy2_beside_a_numpy1_build_plans_numpy_below_2() {
    // torch 2.2 and TensorFlow 2.17 were built against NumPy 1; 2.3 and 2.18 are the first against NumPy 2.
    let m = rig().torch("2.2.2+cu121").framework("tensorflow", "2.17.0", None).companion("numpy", "2.0.1");
    assert_eq!(companion_ids(&m), [NUMPY2]);
    let f = m.finding(NUMPY2);
    assert!(f.summary.starts_with("torch and tensorflow in "), "{}", f.summary);
    assert!(f.evidence.iter().any(|e| e.contains("NumPy 2 builds start at 2.3.0")), "{:?}", f.evidence);
    assert_eq!(m.changes(NUMPY2), [fix::install(&[], ["numpy<2"])]);
    let quiet = [
        rig().torch("2.3.0+cu121").companion("numpy", "2.0.1"),
        rig().torch("2.2.2+cu121").companion("numpy", "1.26.4"),
        rig().framework("tensorflow", "2.18.0", None).companion("numpy", "2.1.3"),
        // A two-part version (issue forms say `2.18`) is the .0 release, not older than it.
        rig().framework("tensorflow", "2.18", None).companion("numpy", "2.1.3"),
        rig().framework("jaxlib", "0.4.26", None).companion("numpy", "2.0.0"),
        rig().companion("numpy", "2.0.0"),
    ];
    for m in &quiet {
        assert!(companion_ids(m).is_empty(), "{:?}", m.findings());
    }
    let jax = rig().framework("jaxlib", "0.4.25", None).companion("numpy", "2.0.0");
    assert_eq!(companion_ids(&jax), [NUMPY2]);
}

/// The `other` category gathers unrelated problems: a companion finding cites only the lines its
/// rule explains (`explained_by` in errors.toml), and an unrelated pasted line of that category keeps
/// its own finding instead of being taken as explained.
#[test]
fn a_companion_finding_cites_its_own_lines_and_not_another_other_line() {
    let line = |id: &str, text: &str| gpu_doctor_model::ObservedMessage {
        id: id.into(),
        line: text.into(),
        values: Default::default(),
    };
    let mut m = rig().torch("2.5.1+cu124").companion("torchvision", "0.19.1+cu124");
    m.0.messages.push(line("torchvision.operator_missing", "RuntimeError: operator torchvision::nms does not exist"));
    m.0.messages.push(line(
        "cuda.out_of_memory",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB",
    ));
    let f = m.finding(TORCH);
    let cited: Vec<&String> = f.evidence.iter().filter(|e| e.starts_with("pasted line: ")).collect();
    assert_eq!(cited, ["pasted line: RuntimeError: operator torchvision::nms does not exist"], "{:?}", f.evidence);
    let ids = m.ids();
    assert!(ids.contains(&"observed.cuda.out_of_memory".to_owned()), "the memory error is not explained: {ids:?}");
    assert!(!ids.contains(&"observed.torchvision.operator_missing".to_owned()), "{ids:?}");
}

const EXTENSION: &str = "companions.extension_built_for_other_torch";

/// A loader line of the `ld.torch_symbol_missing` row, as the paste reader gives it.
fn symbol_line(m: &mut Machine, library: Option<&str>, symbol: &str) {
    let mut values = std::collections::BTreeMap::from([("symbol".to_owned(), symbol.to_owned())]);
    if let Some(l) = library {
        values.insert("library".to_owned(), l.to_owned());
    }
    let line = format!("ImportError: {}: undefined symbol: {symbol}", library.unwrap_or("?"));
    m.0.messages.push(gpu_doctor_model::ObservedMessage { id: "ld.torch_symbol_missing".into(), line, values });
}

#[test]
fn an_extension_built_for_another_torch_is_rebuilt_against_the_installed_one() {
    // The flash-attn form: a top-level module in site-packages, named by flash-attention's setup.py.
    let mut m = Machine::pasted().torch("2.3.0").companion("flash-attn", "2.5.7");
    symbol_line(
        &mut m,
        Some("/usr/local/lib/python3.10/dist-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so"),
        "_ZN3c104cuda9SetDeviceEi",
    );
    assert_eq!(companion_ids(&m), [EXTENSION]);
    let f = m.finding(EXTENSION);
    assert_eq!(f.summary, "flash-attn was built against another torch than torch 2.3.0");
    // The missing torch function, demangled.
    assert!(f.evidence.iter().any(|e| e.contains("(c10::cuda::SetDevice(int))")), "{:?}", f.evidence);
    // A source build against the installed torch (flash-attn's setup.py takes the wheel made for it when
    // one exists), of the installed version, leaving torch and the cache alone.
    assert_eq!(
        m.changes(EXTENSION),
        [Change::Install {
            requirements: vec!["flash-attn==2.5.7".into()],
            flags: vec![
                InstallFlag::Reinstall,
                InstallFlag::NoDeps,
                InstallFlag::NoBuildIsolation,
                InstallFlag::NoCache
            ],
            index_url: None,
        }]
    );
    // The pasted line is cited, and no `observed.` finding repeats it.
    assert!(f.evidence.iter().any(|e| e.starts_with("pasted line: ImportError:")), "{:?}", f.evidence);
    assert!(!m.ids().iter().any(|id| id.starts_with("observed.")), "{:?}", m.ids());
}

#[test]
fn an_extension_whose_wheels_pin_torch_is_reinstalled_for_this_torch() {
    // vllm-project/vllm#611's line: vLLM's wheels pin one torch, so pip picks the one pinned to this torch.
    let mut m = rig().torch("2.0.1+cu118");
    symbol_line(
        &mut m,
        Some(
            "/local_disk0/envs/pythonEnv-1/lib/python3.10/site-packages/vllm/activation_ops.cpython-310-x86_64-linux-gnu.so",
        ),
        "_ZN3c106detail19maybe_wrap_dim_slowEllb",
    );
    assert_eq!(
        m.changes(EXTENSION),
        [Change::Install {
            requirements: vec!["torch==2.0.1+cu118".into(), "vllm".into()],
            flags: vec![InstallFlag::Upgrade],
            index_url: Some("https://download.pytorch.org/whl/cu118".into()),
        }]
    );
    let f = m.finding(EXTENSION);
    assert!(
        f.evidence.iter().any(|e| e.contains("c10::detail::maybe_wrap_dim_slow(long, long, bool)")),
        "{:?}",
        f.evidence
    );
}

#[test]
fn a_cxx11_abi_name_says_so_and_a_source_checkout_is_rebuilt_in_place() {
    // NVIDIA/TransformerEngine#1192's symbol, from lxxue/FRNN#21's in-tree build (`FRNN/frnn/_C…so`).
    let mut m = Machine::pasted().torch("2.3.1+cu121");
    symbol_line(
        &mut m,
        Some("/home/u/FRNN/frnn/_C.cpython-310-x86_64-linux-gnu.so"),
        "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
    );
    let f = m.finding(EXTENSION);
    assert!(f.detail.contains("_GLIBCXX_USE_CXX11_ABI"), "{}", f.detail);
    assert!(f.plan.as_ref().is_none_or(|p| !matches!(p.target, gpu_doctor_model::PlanTarget::Change { .. })));
    let fix = f.fix.unwrap_or_default();
    assert!(fix.contains("pip install --no-build-isolation"), "{fix}");
    assert!(fix.contains("torch 2.3.1+cu121"), "{fix}");
}

#[test]
fn torch_own_libraries_asking_each_other_mean_two_torch_installs() {
    let mut m = rig().torch("2.4.0+cu121");
    symbol_line(
        &mut m,
        Some("/home/u/.local/lib/python3.10/site-packages/torch/lib/libtorch_python.so"),
        "_ZN3c1017RegisterOperatorsD1Ev",
    );
    let f = m.finding(EXTENSION);
    assert!(f.summary.starts_with("torch's own libtorch_python.so"), "{}", f.summary);
    assert_eq!(
        m.changes(EXTENSION),
        [Change::Install {
            requirements: vec!["torch==2.4.0+cu121".into()],
            flags: vec![InstallFlag::Reinstall, InstallFlag::NoDeps],
            index_url: Some("https://download.pytorch.org/whl/cu121".into()),
        }]
    );
}

#[test]
fn without_a_torch_version_the_fix_says_how_to_find_it_and_without_the_line_nothing_is_said() {
    let mut m = Machine::pasted();
    symbol_line(
        &mut m,
        Some("/opt/venv/lib/python3.11/site-packages/xformers/_C.so"),
        "_ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6SymIntEEE",
    );
    let f = m.finding(EXTENSION);
    assert_eq!(f.summary, "xformers was built against another torch than the installed torch");
    let fix = f.fix.unwrap_or_default();
    assert!(fix.contains("torch.__version__") && fix.contains("xformers"), "{fix}");
    // The symbol alone (no path): still the finding, about an extension in general.
    let mut m = Machine::pasted().torch("2.3.0");
    symbol_line(&mut m, None, "_ZN3c104cuda9SetDeviceEi");
    assert_eq!(companion_ids(&m), [EXTENSION]);
    // No such line, or only a torchvision the versions already judge: no second finding.
    assert!(companion_ids(&rig().torch("2.3.0").companion("flash-attn", "2.5.7")).is_empty());
    let mut m = rig().torch("2.5.1+cu124").companion("torchvision", "0.19.1+cu124");
    symbol_line(&mut m, Some("/v/lib/python3.11/site-packages/torchvision/_C.so"), "_ZN3c104cuda9SetDeviceEi");
    assert_eq!(companion_ids(&m), [TORCH]);
}

#[test]
fn a_pypi_companion_beside_a_torch_of_another_build_is_that_other_build() {
    // torch 2.7.0+cpu with torchvision 0.22.0 from PyPI, whose Linux wheel is torch 2.7's cu126 build
    // (pytorch.toml's pypi_linux): its operators need CUDA libraries the CPU torch lacks.
    let m = Machine::linux().torch("2.7.0+cpu").companion("torchvision", "0.22.0");
    assert_eq!(companion_ids(&m), [TORCH]);
    let f = m.finding(TORCH);
    assert!(
        f.evidence.iter().any(|e| e.contains(
            "torchvision 0.22.0: PyPI's build (no local tag), which on Linux x86_64 is torch 2.7's cu126 build, not cpu"
        )),
        "{:?}",
        f.evidence
    );
    // The same release in torch's build, from torch's index: `==0.22.*` would be met by what is installed.
    assert_eq!(
        m.changes(TORCH),
        [install(&["torch==2.7.0+cpu", "torchvision==0.22.0+cpu"], Some("https://download.pytorch.org/whl/cpu"))]
    );
    // On Windows PyPI's torchvision is the CPU build: the pair matches. A CUDA torch there does not.
    assert!(companion_ids(&Machine::windows().torch("2.7.0+cpu").companion("torchvision", "0.22.0")).is_empty());
    let m = Machine::windows().torch("2.5.1+cu124").companion("torchvision", "0.20.1");
    assert_eq!(companion_ids(&m), [TORCH]);
}

#[test]
fn pasted_text_without_the_os_tells_pypis_build_by_the_site_packages_path() {
    let with_site =
        |dir: &str| Machine::pasted().torch("2.7.0+cpu").companion("torchvision", "0.22.0").site_packages(&[dir]);
    // A POSIX site-packages beside a `+cpu` torch (made for Linux and Windows only) is Linux.
    assert_eq!(companion_ids(&with_site("/opt/venv/lib/python3.10/site-packages")), [TORCH]);
    // A drive letter is Windows, where the pair matches; no path (the reader's placeholder) says nothing.
    assert!(companion_ids(&with_site("C:\\Users\\u\\venv\\Lib\\site-packages")).is_empty());
    assert!(companion_ids(&with_site("(pasted)")).is_empty());
}

#[test]
fn another_build_of_the_same_line_pins_that_release_in_torchs_build() {
    // torch 2.3.0 is not its line's newest (2.3.1): the installed torchvision's own release, in torch's build.
    let m = rig().torch("2.3.0+cu121").companion("torchvision", "0.18.0+cu118");
    assert_eq!(
        m.changes(TORCH),
        [install(&["torch==2.3.0+cu121", "torchvision==0.18.0+cu121"], Some("https://download.pytorch.org/whl/cu121"))]
    );
}
