//! CUDA toolkits: names that disagree, stale library paths, and the harmless version differences.

use super::builder::Machine;
use crate::diagnose::fix;
use gpu_doctor_model::CudnnKind;
use gpu_doctor_model::{Change, PlanTarget, Severity};

fn ids(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// A Linux machine with a GPU (and no driver facts unless a case adds them).
fn rig() -> Machine {
    Machine::linux().gpu("NVIDIA GeForce RTX 4090", "8.9")
}

const C118: &str = "/usr/local/cuda-11.8";
const C124: &str = "/usr/local/cuda-12.4";
const C130: &str = "/usr/local/cuda-13.0";

#[test]
fn names_that_pick_different_releases_conflict() {
    let cases: Vec<(&str, Machine, Vec<String>)> = vec![
        ("one toolkit", rig().toolkit(C124, "12.4", &["PATH", "CUDA_HOME", "/usr/local/cuda"]), vec![]),
        (
            "two releases, PATH against CUDA_HOME",
            rig().toolkit(C118, "11.8", &["PATH"]).toolkit(C124, "12.4", &["CUDA_HOME"]),
            ids(&["toolkits.names_disagree"]),
        ),
        (
            "two roots of the same release",
            rig().toolkit(C124, "12.4", &["PATH"]).toolkit("/opt/conda", "12.4.1", &["CUDA_HOME"]),
            vec![],
        ),
        (
            "a second release that no name picks",
            rig().toolkit(C124, "12.4", &["PATH", "CUDA_HOME"]).toolkit(C118, "11.8", &[]),
            vec![],
        ),
        (
            "a release of unknown version",
            rig().toolkit(C124, "12.4", &["PATH"]).toolkit("/opt/cuda", "", &["CUDA_HOME"]),
            vec![],
        ),
    ];
    for (name, m, want) in cases {
        assert_eq!(m.ids(), want, "{name}");
    }
}

#[test]
fn the_conflict_fix_makes_every_name_agree_on_the_framework_major() {
    let two = || {
        rig().env("LD_LIBRARY_PATH", "/opt/tools/lib").toolkit(C118, "11.8", &["PATH", "LD_LIBRARY_PATH"]).toolkit(
            C124,
            "12.4",
            &["CUDA_HOME", "/usr/local/cuda"],
        )
    };
    // With a CUDA 11 framework the 11.8 toolkit is the one to keep.
    let f = two().torch("2.0.1+cu118").finding("toolkits.names_disagree");
    let Some(PlanTarget::Change { goal, changes, .. }) = f.plan.map(|p| p.target) else { panic!("no change plan") };
    assert!(goal.starts_with("every name picks /usr/local/cuda-11.8 (CUDA 11.8, it matches"), "{goal}");
    let root = ["ln", "-sfn", "/usr/local/cuda-11.8", "/usr/local/cuda"].map(String::from).to_vec();
    assert_eq!(changes, [fix::set_var("CUDA_HOME", "/usr/local/cuda-11.8"), Change::Root { argv: root }]);
    assert!(f.evidence.iter().any(|e| e == "CUDA_HOME: /usr/local/cuda-12.4 → /usr/local/cuda-12.4 (CUDA 12.4)"));
    // Without one, the newest.
    assert_eq!(
        two().changes("toolkits.names_disagree"),
        [
            Change::PrependPath { dir: "/usr/local/cuda-12.4/bin".into() },
            fix::set_var("LD_LIBRARY_PATH", "/usr/local/cuda-12.4/lib64:/opt/tools/lib")
        ]
    );
}

/// Issue 29 item 6 (`two-toolkits`): the names are made to agree on a toolkit the driver runs in
/// full (12.1 on a driver for CUDA 12.2, not 12.5), and the goal says why the newer one is not
/// picked; where none fits the driver, the goal says what the pick costs.
#[test]
fn the_conflict_fix_never_picks_a_toolkit_newer_than_the_driver_without_saying_so() {
    const C121: &str = "/usr/local/cuda-12.1";
    const C125: &str = "/usr/local/cuda-12.5";
    let two = || rig().toolkit(C121, "12.1", &["PATH"]).toolkit(C125, "12.5", &["CUDA_HOME"]).torch("2.3.1+cu121");
    let goal = |m: Machine| {
        let f = m.finding("toolkits.names_disagree");
        let Some(PlanTarget::Change { goal, .. }) = f.plan.map(|p| p.target) else { panic!("no change plan") };
        goal
    };
    let g = goal(two().driver("535.104.05", "12.2"));
    assert!(g.starts_with("every name picks /usr/local/cuda-12.1 (CUDA 12.1"), "{g}");
    assert!(g.contains("; not CUDA 12.5: the driver supports CUDA 12.2 at most"), "{g}");
    // Without driver facts: the newest of the framework's major, as before.
    assert!(goal(two()).starts_with("every name picks /usr/local/cuda-12.5"));
    // Only toolkits newer than the driver: the pick says what it costs.
    let newer =
        rig().toolkit(C124, "12.4", &["PATH"]).toolkit(C125, "12.5", &["CUDA_HOME"]).driver("525.60.13", "12.0");
    let g = goal(newer);
    assert!(g.contains("newer than the CUDA 12.0 the driver supports"), "{g}");
}

fn cu13_env() -> Machine {
    rig().torch("2.9.0+cu130").wheel("nvidia-cuda-runtime", "13.0.96").wheel("nvidia-cudnn-cu13", "9.13.0.50")
}

#[test]
fn a_library_folder_of_another_major_shadows_the_wheels() {
    let m = cu13_env().env("LD_LIBRARY_PATH", "/opt/tools/lib").toolkit(C124, "12.4", &["LD_LIBRARY_PATH"]);
    assert_eq!(m.ids(), ids(&["toolkits.stale_library_path"]));
    let f = m.finding("toolkits.stale_library_path");
    assert_eq!(m.changes("toolkits.stale_library_path"), [fix::set_var("LD_LIBRARY_PATH", "/opt/tools/lib")]);
    assert!(f.evidence[0].contains("/usr/local/cuda-12.4/lib64: CUDA 12.4 toolkit libraries"), "{:?}", f.evidence);
    assert!(f.evidence.iter().any(|e| e.contains("nvidia-cudnn-cu13 9.13.0.50")), "{:?}", f.evidence);

    let only = cu13_env().toolkit(C124, "12.4", &["LD_LIBRARY_PATH"]);
    assert_eq!(only.changes("toolkits.stale_library_path"), [Change::UnsetVar { name: "LD_LIBRARY_PATH".into() }]);

    // A cuDNN library of the other major in a plain folder.
    let cudnn = cu13_env().env("LD_LIBRARY_PATH", "/opt/cudnn/lib").cudnn(
        "/opt/cudnn/lib/libcudnn.so.9",
        CudnnKind::Library,
        "9.1.0",
        Some(12),
    );
    assert_eq!(cudnn.ids(), ids(&["toolkits.stale_library_path"]));
    // The same folder with the wheels' own major, or a copy whose CUDA major is unknown: nothing.
    let same = cu13_env().toolkit(C130, "13.0", &["LD_LIBRARY_PATH"]);
    assert_eq!(same.ids(), Vec::<String>::new());
    let unknown = cu13_env().env("LD_LIBRARY_PATH", "/opt/cudnn/lib").cudnn(
        "/opt/cudnn/lib/libcudnn.so.9",
        CudnnKind::Library,
        "9",
        None,
    );
    assert_eq!(unknown.ids(), Vec::<String>::new());
    // The folder is on the loader path only when LD_LIBRARY_PATH names it.
    let elsewhere = cu13_env().toolkit(C124, "12.4", &[]);
    assert_eq!(elsewhere.ids(), Vec::<String>::new());
}

#[test]
fn version_differences_are_explained_as_information() {
    let nvcc124 = || rig().toolkit(C124, "12.4", &["CUDA_HOME", "PATH"]);
    let cases: Vec<(&str, Machine, Vec<String>)> = vec![
        ("nvcc alone", nvcc124(), vec![]),
        ("everything 12.4", nvcc124().driver("550.54.14", "12.4").torch("2.5.1+cu124"), vec![]),
        ("driver newer than nvcc", nvcc124().driver("570.124.06", "12.8"), ids(&["toolkits.versions_explained"])),
        ("torch of another minor", nvcc124().torch("2.5.1+cu121"), ids(&["toolkits.versions_explained"])),
        ("no nvcc", rig().driver("570.124.06", "12.8").torch("2.5.1+cu121"), vec![]),
        (
            "cupy of the same major",
            nvcc124().framework(
                "cupy-cuda12x",
                "13.3.0",
                Some(gpu_doctor_model::FrameworkBuild::Cuda { version: Some("12".into()) }),
            ),
            vec![],
        ),
    ];
    for (name, m, want) in cases {
        assert_eq!(m.ids(), want, "{name}");
    }
    let f = nvcc124().driver("570.124.06", "12.8").torch("2.5.1+cu121").finding("toolkits.versions_explained");
    assert_eq!(f.severity, Severity::Info);
    assert!(f.detail.contains("not an installed toolkit") && f.fix.is_none(), "{f:#?}");
    assert!(!f.detail.contains("will fail"), "{f:#?}");
}

#[test]
fn a_toolkit_newer_than_the_driver_says_what_its_programs_need() {
    let detail = |driver: &str, cuda: &str| {
        rig().toolkit(C124, "12.4", &["CUDA_HOME"]).driver(driver, cuda).finding("toolkits.versions_explained").detail
    };
    assert!(detail("525.60.13", "12.0").contains("only through minor-version compatibility"));
    assert!(detail("470.82.01", "11.4").contains("do not run on this driver"));
    let newer = detail("570.124.06", "12.8");
    assert!(!newer.contains("minor-version") && !newer.contains("do not run"), "{newer}");
}

#[test]
fn another_major_than_torch_says_extensions_will_not_build() {
    let m = rig().toolkit(C124, "12.4", &["CUDA_HOME"]).driver("580.65.06", "13.0").torch("2.9.0+cu130");
    let f = m.finding("toolkits.versions_explained");
    assert_eq!(f.severity, Severity::Info);
    assert!(f.detail.contains("will fail") && f.detail.contains("refuses a CUDA major (12)"), "{f:#?}");
    let changes = m.changes("toolkits.versions_explained");
    assert!(matches!(&changes[0], Change::Manual { text } if text.starts_with("Install the CUDA 13.0 toolkit")));
    assert_eq!(changes[1], fix::set_var("CUDA_HOME", "/usr/local/cuda-13.0"));
    // With a 13.0 toolkit installed, the fix points at it.
    let m = rig()
        .toolkit(C124, "12.4", &["CUDA_HOME"])
        .toolkit(C130, "13.0", &[])
        .driver("580.65.06", "13.0")
        .torch("2.9.0+cu130");
    assert_eq!(m.changes("toolkits.versions_explained"), [fix::set_var("CUDA_HOME", "/usr/local/cuda-13.0")]);
    // A finding with a fix does not call the difference normal.
    let f = m.finding("toolkits.versions_explained");
    assert!(!f.summary.contains("normal") && f.summary.contains("another CUDA major"), "{f:#?}");
}

/// Issue 29 item 6 (`torch-cu130-on-r550`): a cu130 torch on a driver for CUDA 12.4 gets no plan to
/// install CUDA toolkit 13.0 (what it builds would not run here), and the note that calls the
/// difference normal carries no fix; the detail says why none is planned.
#[test]
fn no_toolkit_newer_than_the_driver_is_planned_and_a_normal_note_has_no_fix() {
    let m = rig().toolkit(C124, "12.4", &["CUDA_HOME"]).driver("550.54.14", "12.4").torch("2.9.0+cu130");
    let f = m.finding("toolkits.versions_explained");
    assert!(f.summary.contains("which is normal"), "{f:#?}");
    assert!(f.fix.is_none() && f.plan.is_none(), "{f:#?}");
    assert!(
        f.detail.contains("No CUDA 13.0 toolkit is planned for it: the driver supports CUDA 12.4 at most"),
        "{f:#?}"
    );
    // An installed 13.0 toolkit is not pointed at either.
    let m = rig()
        .toolkit(C124, "12.4", &["CUDA_HOME"])
        .toolkit(C130, "13.0", &[])
        .driver("550.54.14", "12.4")
        .torch("2.9.0+cu130");
    assert!(m.finding("toolkits.versions_explained").plan.is_none());
}

#[test]
fn pasted_text_without_toolkits_says_nothing_about_them() {
    let m = Machine::pasted().driver("570.124.06", "12.8").torch("2.5.1+cu124");
    assert_eq!(m.ids(), Vec::<String>::new());
}

const PTXAS: &str = "toolkits.ptxas_on_path_shadows_wheel";

/// A machine whose pasted log holds XLA's WarnIfBadPtxasVersion line for `method` at `version`.
fn xla_says(method: &str, version: &str) -> Machine {
    let mut m = rig();
    m.0.messages.push(gpu_doctor_model::ObservedMessage {
        id: "xla.ptxas_miscompiles_clamping".into(),
        line: format!(
            "*** WARNING *** Invoking {method} with version {version}, which corresponds to a CUDA version <=12.6.2."
        ),
        values: [("method", method), ("ptxas_version", version)]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
    });
    m
}

/// A TensorFlow 2.20 log of 2025-09 on an H100 (ptxas 12.1.105 from a system CUDA 12.1): XLA runs the first ptxas
/// on PATH before the pip wheel's (subprocess_compilation.cc, FindCudaExecutable), so the finding names the PATH
/// folder and the wheel; the PTX compiler library linked into the plugin is not a PATH matter.
#[test]
fn an_old_ptxas_xla_runs_is_the_one_on_path_before_the_wheel() {
    let m = xla_says("ptxas", "12.1.105");
    assert_eq!(m.ids(), ids(&[PTXAS]));
    let f = m.finding(PTXAS);
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.summary.contains("12.1.105") && f.detail.contains("12.6.85"), "{f:#?}");
    let fix = m.changes(PTXAS);
    assert!(
        matches!(&fix[..], [Change::Manual { text }] if text.contains("nvidia-cuda-nvcc-cu12>=12.6.85") && text.contains("which -a ptxas")),
        "{fix:?}"
    );
    // With PATH known the folder to take out is named.
    let mut on_path = xla_says("ptxas", "12.1.66");
    on_path.0.env.path = vec!["/usr/local/cuda-12.1/bin".into(), "/usr/bin".into()];
    on_path.0.env.path_cuda_entries = vec!["/usr/local/cuda-12.1/bin".into()];
    let fix = on_path.changes(PTXAS);
    assert!(
        matches!(&fix[..], [Change::Manual { text }] if text.contains("Take /usr/local/cuda-12.1/bin out of PATH")),
        "{fix:?}"
    );
    // The library XLA links (not a program found on PATH) is another matter: only the message's own finding.
    assert_eq!(xla_says("nvJitLink", "12.5").ids(), ids(&["observed.xla.ptxas_miscompiles_clamping"]));
}

/// Pasted text from openxla/xla#5932 (an H800 under JAX, 2023): XLA's LogPtxasTooOld warnings name the ptxas it
/// ran as the bare `ptxas`, which FindCudaExecutable returns only for the one it ran from PATH
/// (asm_compiler.cc@94fc848): a system toolkit's ptxas on PATH, older than the GPU, ahead of the wheel's. A
/// ptxas XLA names by a path outside PATH (the wheel's, --xla_gpu_cuda_data_dir's) is not this finding; a path
/// in a CUDA folder on PATH is.
#[test]
fn xla_falling_back_from_the_ptxas_on_path_names_the_path_shadowing_the_wheel() {
    let ids = super::pasted_ids;
    let log = |used: &str| {
        format!(
            "2023-09-26 23:49:25.317379: W external/xla/xla/stream_executor/gpu/asm_compiler.cc:231] Falling back to \
             the CUDA driver for PTX compilation; ptxas does not support CC 9.0\n\
             2023-09-26 23:49:25.317412: W external/xla/xla/stream_executor/gpu/asm_compiler.cc:234] Used ptxas at {used}\n"
        )
    };
    assert!(ids(&log("ptxas")).contains(&PTXAS.to_owned()), "{:?}", ids(&log("ptxas")));
    // The driver's JIT, XLA's fallback, then fails on the PTX: that line is this finding's, not a missing build.
    let fallback = format!(
        "{}2023-09-26 23:49:25.424902: E external/xla/xla/stream_executor/cuda/cuda_driver.cc:864] failed to load PTX \
         text as a module: CUDA_ERROR_INVALID_IMAGE: device kernel image is invalid\n",
        log("ptxas")
    );
    assert_eq!(ids(&fallback), [PTXAS.to_owned()]);
    let wheel = log("/venv/lib/python3.11/site-packages/nvidia/cuda_nvcc/bin/ptxas");
    assert!(!ids(&wheel).contains(&PTXAS.to_owned()), "{:?}", ids(&wheel));
    let data_dir = log("/opt/cuda-12.1/bin/ptxas");
    assert!(!ids(&data_dir).contains(&PTXAS.to_owned()), "{:?}", ids(&data_dir));
    let on_path = format!("PATH=/usr/local/cuda-12.1/bin:/usr/bin\n{}", log("/usr/local/cuda-12.1/bin/ptxas"));
    assert!(ids(&on_path).contains(&PTXAS.to_owned()), "{:?}", ids(&on_path));
}

/// Pasted text: JAX's CUDA plugin cannot load cuSPARSE, in both forms its version check raises (the closing line of
/// jax-ml/jax#28929's traceback; the stub's sentence as jaxlib's versions_helpers.cc wraps it). The plugin checks
/// cuSPARSE after the CUDA runtime, cuDNN, cuFFT, cuPTI and cuBLAS and stops at the first failure, so the wheels
/// are there and libcusparse's libnvJitLink came from elsewhere: LD_LIBRARY_PATH's system folders go (the wheel
/// folders stay). cuDNN that cannot be loaded is another matter.
#[test]
fn jax_unable_to_load_cusparse_is_a_library_path_that_shadows_the_wheels() {
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let run = |text: &str| {
        let snap = gpu_doctor_probes::parse::paste::read_pasted(text, kb).unwrap();
        crate::diagnose::diagnose(&snap, kb)
    };
    let has = |text: &str| run(text).iter().any(|f| f.id == "toolkits.stale_library_path");
    assert!(has("RuntimeError: Unable to load cuSPARSE. Is it installed?\n"));
    let stub = "RuntimeError: jaxlib/cuda/versions_helpers.cc:81: operation cusparseGetProperty(MAJOR_VERSION, &major) \
                failed: The cuSPARSE library was not found.\n";
    assert!(has(stub));
    assert!(!has("RuntimeError: Unable to load cuDNN. Is it installed?\n"));
    let with_path = format!(
        "LD_LIBRARY_PATH=/home/common_modules/cuda/cuda-12.1/lib64:/venv/lib/python3.13/site-packages/nvidia/cusparse/lib\n{stub}"
    );
    let f = run(&with_path);
    let stale = f.iter().find(|f| f.id == "toolkits.stale_library_path").unwrap();
    let plan = format!("{:?}", stale.plan);
    assert!(plan.contains("site-packages/nvidia/cusparse/lib") && !plan.contains("cuda-12.1"), "{plan}");
    // The line is explained by the finding, not repeated as an observed error.
    assert!(!f.iter().any(|f| f.id.starts_with("observed.")), "{:?}", f.iter().map(|f| &f.id).collect::<Vec<_>>());
}

/// Pasted text: NVIDIA's CUDA image run with nvidia-smi (the container toolkit install guide's
/// sample workload `nvidia/cuda:11.0.3-base-ubuntu20.04`) on a host driver of a newer CUDA level:
/// nvidia-smi shows the host's level, the image runs its own, older CUDA. An image newer than the
/// driver is not this note; nor is one without a driver level.
#[test]
fn a_cuda_images_older_cuda_under_a_newer_driver_is_explained() {
    let ids = super::pasted_ids;
    let smi = |cuda: &str| {
        format!(
            "$ sudo docker run --rm --gpus all nvidia/cuda:11.0.3-base-ubuntu20.04 nvidia-smi\n\
             +-----------------------------------------------------------------------------+\n\
             | NVIDIA-SMI 525.60.13    Driver Version: 525.60.13    CUDA Version: {cuda}     |\n\
             |-------------------------------+----------------------+----------------------+\n"
        )
    };
    assert!(ids(&smi("12.0")).contains(&"toolkits.versions_explained".to_owned()), "{:?}", ids(&smi("12.0")));
    assert!(!ids(&smi("11.0")).contains(&"toolkits.versions_explained".to_owned()));
    assert!(
        !ids("docker run --gpus all nvidia/cuda:11.0.3-base-ubuntu20.04 nvidia-smi\n")
            .contains(&"toolkits.versions_explained".to_owned())
    );
}

/// Pasted text: a wheel of one CUDA and a folder listing (`ls -l /usr/local/`, GNU ls's long format) in which
/// `/usr/local/cuda` points to a toolkit of another: the toolkit builds would use, explained as normal, though
/// the listing says nothing of its nvcc. The link to the same CUDA is not this note.
#[test]
fn a_listed_default_toolkit_of_another_cuda_is_explained() {
    let ids = super::pasted_ids;
    let listing = |target: &str| {
        format!(
            "pip install torch==2.1.2+cu121 --index-url https://download.pytorch.org/whl/cu121\n\
             $ ls -l /usr/local/\n\
             lrwxrwxrwx  1 root root   21 Mar  3 10:11 cuda -> /usr/local/cuda-{target}/\n\
             drwxr-xr-x 15 root root 4096 Mar  3 10:11 cuda-11.8\n\
             drwxr-xr-x 15 root root 4096 Jan  9 16:02 cuda-12.1\n"
        )
    };
    let explained = "toolkits.versions_explained".to_owned();
    assert!(ids(&listing("11.8")).contains(&explained), "{:?}", ids(&listing("11.8")));
    assert!(!ids(&listing("12.1")).contains(&explained), "{:?}", ids(&listing("12.1")));
}

/// nvcc's release and nvidia-smi's level quoted in words are judged like their outputs: the classic question
/// (phohenecker/switch-cuda#4, verbatim) gets the note that explains the two numbers.
#[test]
fn versions_quoted_in_words_for_nvcc_and_nvidia_smi_are_explained() {
    let text = "After I run the ```source switch-cuda.sh 11.3```, it output that the version has switched to 11.3, \
                and ```nvcc -V``` shows 11.3 also. But ```nvidia-smi``` still shows the version of tookit be 12.2";
    let f = super::pasted_findings(text)
        .into_iter()
        .find(|f| f.id == "toolkits.versions_explained")
        .expect("the versions explained");
    assert!(f.evidence.iter().any(|e| e.contains("nvcc 11.3")), "{f:#?}");
    assert!(f.evidence.iter().any(|e| e.contains("CUDA up to 12.2")), "{f:#?}");
}

/// A question whether the machine's CUDA must be installed for PyTorch (cpbotha/ansible-ubu-to-pytorch#1, verbatim)
/// gets the note that the builds bring their own runtime and the driver is what must fit.
#[test]
fn a_question_whether_cuda_must_match_gets_the_versions_note() {
    let text = "Why do you need to install CUDA?\nPytorch should install it, together with cudnn.";
    let f = super::pasted_findings(text)
        .into_iter()
        .find(|f| f.id == "toolkits.versions_explained")
        .expect("the question answered");
    assert_eq!(f.severity, gpu_doctor_model::Severity::Info);
    assert!(f.fix.as_deref().is_some_and(|x| x.contains("nvidia-smi")), "{f:#?}");
}

/// An nvcc that printed its version without its folder, against /usr/local/cuda's link (pytorch/pytorch#9437,
/// verbatim lines): the names are pointed at the toolkit whose folder is shown, not at one no change can reach.
#[test]
fn the_names_are_pointed_at_a_toolkit_whose_folder_is_shown() {
    let text = "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2015 NVIDIA Corporation\n\
                Built on Tue_Aug_11_14:27:32_CDT_2015\nCuda compilation tools, release 7.5, V7.5.17\n\
                lrwxrwxrwx 1 root root 20 Jul 13 12:21 /usr/local/cuda -> /usr/local/cuda-9.0/\n";
    let found = super::pasted_findings(text);
    let f = found.iter().find(|f| f.id == "toolkits.names_disagree").unwrap_or_else(|| panic!("{found:#?}"));
    let plan = f.plan.as_ref().expect("a plan");
    assert!(format!("{:?}", plan.target).contains("/usr/local/cuda-9.0/bin"), "{:?}", plan.target);
}

/// gcc's `"__CUDACC_VER__" redefined` on CUDA 9's headers: an nvcc before CUDA 9 compiles them, two toolkits in one
/// build (pytorch/pytorch#4150's line); the fix names the headers' toolkit, quoted as a path of another machine.
#[test]
fn an_older_nvcc_on_cuda_9_headers_is_two_toolkits() {
    let line = "/usr/local/cuda-9.0/include/crt/common_functions.h:64:0: warning: \"__CUDACC_VER__\" redefined";
    let mut m = Machine::pasted();
    m.0.messages.push(gpu_doctor_model::ObservedMessage {
        id: "nvcc.cudacc_ver_redefined".into(),
        line: line.into(),
        values: [("include".to_owned(), "/usr/local/cuda-9.0/include".to_owned())].into_iter().collect(),
    });
    assert_eq!(m.ids(), ids(&["toolkits.names_disagree"]));
    let f = m.finding("toolkits.names_disagree");
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.summary.contains("/usr/local/cuda-9.0"), "{}", f.summary);
    assert!(f.fix.as_deref().is_some_and(|x| x.contains("/usr/local/cuda-9.0/bin first on PATH")), "{:?}", f.fix);
    // A planted path is quoted for the shell.
    let mut hostile = Machine::pasted();
    hostile.0.messages.push(gpu_doctor_model::ObservedMessage {
        id: "nvcc.cudacc_ver_redefined".into(),
        line: line.into(),
        values: [("include".to_owned(), "/x;reboot/include".to_owned())].into_iter().collect(),
    });
    let fix = hostile.finding("toolkits.names_disagree").fix.unwrap_or_default();
    assert!(fix.contains("'/x;reboot/bin'"), "{fix}");
}

/// nvcc's verbose listing in CMake's failed compiler identification names the nvcc that ran: Ubuntu's
/// nvidia-cuda-toolkit 10.1, with CUDA 11.3 on the PATH it ran with (NVlabs/instant-ngp#747's lines). Two
/// toolkits, the fix naming the package and NVIDIA's nvcc; NVIDIA's own nvcc in the same listing is no finding.
#[test]
fn the_distributions_nvcc_ran_beside_nvidias_toolkit() {
    let dump = |here: &str, major: u32, minor: u32| {
        format!(
            "  Compiler: /usr/bin/nvcc\n  #$ _HERE_={here}\n  #$\n  \
             PATH={here}:/usr/local/cuda-11.3/bin:/usr/bin:/bin\n  #$ gcc -D__CUDA_ARCH__=300 -E -x c++\n  \
             -D__CUDACC__ -D__NVCC__ -D__CUDACC_VER_MAJOR__={major} -D__CUDACC_VER_MINOR__={minor}\n"
        )
    };
    let found = super::pasted_findings(&dump("/usr/lib/nvidia-cuda-toolkit/bin", 10, 1));
    let f = found.iter().find(|f| f.id == "toolkits.names_disagree").unwrap_or_else(|| panic!("{found:#?}"));
    assert!(f.summary.contains("CUDA 10.1") && f.summary.contains("/usr/local/cuda-11.3"), "{}", f.summary);
    let fix = f.fix.as_deref().unwrap_or_default();
    assert!(fix.contains("apt remove nvidia-cuda-toolkit"), "{fix}");
    assert!(fix.contains("CUDACXX=/usr/local/cuda-11.3/bin/nvcc"), "{fix}");
    // NVIDIA's CUDA 11.3 itself ran: one toolkit, nothing to say.
    let found = super::pasted_findings(&dump("/usr/local/cuda-11.3/bin", 11, 3));
    assert!(found.iter().all(|f| f.id != "toolkits.names_disagree"), "{found:#?}");
    // The distribution's nvcc of the same release as the toolkit on PATH: no conflict of releases.
    let found = super::pasted_findings(&dump("/usr/lib/nvidia-cuda-toolkit/bin", 11, 3));
    assert!(found.iter().all(|f| f.id != "toolkits.names_disagree"), "{found:#?}");
}

/// The distribution's nvcc named as the compiler a build ran, its release not shown, beside the toolkit the writer
/// says is installed (NVIDIA/cuda-samples#356: "I installed the CUDA 12.8 release"; mit-han-lab/torchsparse#78's
/// setuptools line): two toolkits, the fix naming the package and the toolkit's folder. Not without such a sentence.
#[test]
fn the_distributions_nvcc_ran_where_the_text_says_another_toolkit_is_installed() {
    let text = "I installed the CUDA 12.8 release as per the guide here\n  Compiler: /usr/bin/nvcc\n\n  \
                #$ _HERE_=/usr/lib/nvidia-cuda-toolkit/bin\n  #$ NVVMIR_LIBRARY_DIR=/usr/lib/nvidia-cuda-toolkit/libdevice\n";
    let found = super::pasted_findings(text);
    let f = found.iter().find(|f| f.id == "toolkits.names_disagree").unwrap_or_else(|| panic!("{found:#?}"));
    assert!(f.summary.contains("CUDA 12.8 toolkit the text says is installed"), "{}", f.summary);
    let fix = f.fix.as_deref().unwrap_or_default();
    assert!(fix.contains("apt remove nvidia-cuda-toolkit") && fix.contains("/usr/local/cuda-12.8/bin"), "{fix}");
    let setuptools =
        "error: command '/usr/bin/nvcc' failed with exit status 1\nnvcc version is 9.1, CUDA version is 10.2.\n";
    assert!(super::pasted_ids(setuptools).contains(&"toolkits.names_disagree".to_owned()));
    let alone = "error: command '/usr/bin/nvcc' failed with exit status 1\n";
    assert!(!super::pasted_ids(alone).contains(&"toolkits.names_disagree".to_owned()));
}

/// PyTorch's CMake package finding one release in two folders (2.1 to 2.4; the message over lines CMake separates
/// with blank ones): one toolkit for both searches, the second folder's in the fix.
#[test]
fn cmakes_two_cuda_installs_are_the_names_disagreeing_with_one_root_in_the_fix() {
    let text = "CMake Error at /opt/conda/lib/python3.10/site-packages/torch/share/cmake/Caffe2/public/cuda.cmake:65 \
                (message):\n  Found two conflicting CUDA installs:\n\n  V12.1.66 in '/usr/local/cuda/include' and\n\n  \
                V12.1.66 in '/usr/local/cuda-12.1/include'\nCall Stack (most recent call first):\n";
    let found = super::pasted_findings(text);
    let f = found.iter().find(|f| f.id == "toolkits.names_disagree").expect("the finding");
    assert!(f.evidence.iter().any(|e| e.contains("12.1.66 in /usr/local/cuda-12.1/include")), "{:?}", f.evidence);
    let fix = f.fix.as_deref().unwrap();
    assert!(
        fix.contains("CUDA_PATH=/usr/local/cuda-12.1") && fix.contains("-DCUDAToolkit_ROOT=/usr/local/cuda-12.1"),
        "{fix}"
    );
    assert!(f.explains.contains(&"observed.torch.cmake_conflicting_cuda".to_owned()));
    // The first line alone: the finding, with the fix in general words.
    let alone = super::pasted_findings("  Found two conflicting CUDA versions:\n");
    let f = alone.iter().find(|f| f.id == "toolkits.names_disagree").expect("the finding");
    assert!(f.fix.as_deref().unwrap().contains("-DCUDAToolkit_ROOT=<that folder>"));
}

/// One conda environment with NVIDIA's cuda-nvcc (its build a bare `0`, the channel column beside it) of another
/// release than its cudatoolkit (dattalab/keypoint-moseq#161's rows): the two disagree, with the pin in the fix.
/// The environment file's pin of another version, quoted before the list, does not hide what is installed; an nvcc
/// of the toolkit's release is no finding.
#[test]
fn a_conda_nvcc_of_another_release_than_the_environments_cudatoolkit() {
    let pin = "  - cuda-nvcc=11.8.89\n";
    let rows = "cuda-nvcc                 12.4.131                      0    nvidia\n\
                cuda-version              11.8                 hcce14f8_3    defaults\n\
                cudatoolkit               11.8.0              h09e9e62_13    conda-forge\n";
    let f = super::pasted_findings(&format!("{pin}{rows}"));
    let named = f.iter().find(|f| f.id == "toolkits.names_disagree").expect("disagree");
    assert_eq!(named.evidence, ["cuda-nvcc 12.4.131 (conda)", "cudatoolkit 11.8.0 (conda)"]);
    assert!(super::words(named).is_some_and(|w| w.contains("conda install cuda-nvcc=11.8 -c nvidia")), "{named:?}");
    let same = rows.replace("12.4.131", "11.8.89 ");
    assert!(!super::pasted_ids(&same).contains(&"toolkits.names_disagree".to_owned()));
    assert!(super::pasted_ids("cuda-nvcc 12.4.131 0 nvidia's build\n").is_empty(), "not a row: five words");
}

/// CMake's compiler search and identification of a distribution's nvcc (hank-ai/darknet#130's lines) beside
/// FindCUDAToolkit's line for another release (its format, CMake's FindPackageHandleStandardArgs): the build mixes two
/// toolkits, and the fix points CMake at the placed newer one; one release alone is no conflict.
#[test]
fn a_build_configuration_that_found_two_releases_is_a_conflict() {
    const ID: &str = "toolkits.names_disagree";
    let compiler = "-- Looking for a CUDA compiler - /usr/bin/nvcc\n-- The CUDA compiler identification is NVIDIA 11.5.119 with host compiler GNU 11.4.0\n";
    let toolkit = "-- Found CUDAToolkit: /usr/local/cuda-12.8/include (found version \"12.8.61\")\n";
    let found = super::pasted_findings(&format!("{compiler}{toolkit}"));
    let f = found.iter().find(|f| f.id == ID).unwrap_or_else(|| panic!("{found:#?}"));
    let fix = super::words(f).unwrap();
    assert!(fix.contains("-DCMAKE_CUDA_COMPILER=/usr/local/cuda-12.8/bin/nvcc"), "{fix}");
    assert!(!super::pasted_ids(compiler).contains(&ID.to_owned()));
}

/// TensorFlow's ptxas warning is an older toolkit's ptxas taken first (tensorflow/tensorflow#39716's line), except
/// where the ptxas it names is not older than the version it compares with: TensorFlow 1.13's comparison bug
/// (tensorflow/tensorflow#23874's line), no finding.
#[test]
fn tensorflows_ptxas_warning_unless_its_own_comparison_is_wrong() {
    const ID: &str = "observed.tf.ptxas_too_old";
    let old = "You are using ptxas 8.x, but TF requires ptxas 9.x (and strongly prefers >= 9.2.88).  Compilation of XLA kernels below will likely fail.\n";
    assert!(super::pasted_ids(old).contains(&ID.to_owned()));
    let false_warning = "\"*** WARNING *** You are using ptxas 10.0.145, which is older than 9.2.88\"\n";
    assert!(!super::pasted_ids(false_warning).contains(&ID.to_owned()), "{:?}", super::pasted_ids(false_warning));
    let true_warning = "*** WARNING *** You are using ptxas 9.1.121, which is older than 9.2.88\n";
    assert!(super::pasted_ids(true_warning).contains(&ID.to_owned()));
}
