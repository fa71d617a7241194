//! cuDNN: missing, another version than the build, the wrong copy loaded, a GPU the release dropped.

use super::builder::Machine;
use crate::diagnose::fix;
use gpu_doctor_model::{Change, InstallFlag, Probed};
use gpu_doctor_model::{CudnnKind, FrameworkBuild};

const MISSING: &str = "cudnn.missing";
const MISMATCH: &str = "cudnn.version_mismatch";
const WRONG_COPY: &str = "cudnn.wrong_copy_loaded";
const UNSUPPORTED: &str = "cudnn.gpu_not_supported";
const SYSTEM_LIB: &str = "/usr/lib/x86_64-linux-gnu";

fn rig() -> Machine {
    Machine::linux().gpu("NVIDIA GeForce RTX 4090", "8.9")
}

fn cuda(version: &str) -> Option<FrameworkBuild> {
    Some(FrameworkBuild::Cuda { version: Some(version.into()) })
}

/// TensorFlow 2.18 (built with cuDNN 9.3, build_info says "9").
fn tf218(m: Machine) -> Machine {
    m.framework("tensorflow", "2.18.0", cuda("12.5.1")).framework_with(|f| f.cudnn_build = Some("9".into()))
}

fn jax(m: Machine) -> Machine {
    m.framework("jax-cuda12-plugin", "0.6.2", cuda("12"))
}

fn jax12(m: Machine) -> Machine {
    m.framework("jax-cuda12-plugin", "0.12.0.1", cuda("12"))
}

fn ids(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn tensorflow_and_jax_need_a_cudnn_of_their_major_and_minor() {
    let lib = |m: Machine, version: &str| {
        m.cudnn(&format!("{SYSTEM_LIB}/libcudnn.so.{version}"), CudnnKind::Library, version, None)
    };
    let mut absent = tf218(rig());
    absent.0.cudnn = Probed::absent("no cuDNN found; looked at /usr/include/cudnn_version.h");
    let cases: Vec<(&str, Machine, Vec<String>)> = vec![
        ("TF, wheel of the build's minor", tf218(rig()).wheel("nvidia-cudnn-cu12", "9.3.0.75"), vec![]),
        ("TF, wheel of a later minor", tf218(rig()).wheel("nvidia-cudnn-cu12", "9.8.0.87"), vec![]),
        ("TF, wheel of a lower minor", tf218(rig()).wheel("nvidia-cudnn-cu12", "9.1.0.70"), ids(&[MISMATCH])),
        ("TF, wheel of another major", tf218(rig()).wheel("nvidia-cudnn-cu12", "8.9.7.29"), ids(&[MISMATCH])),
        ("TF, no cuDNN anywhere", tf218(rig()), ids(&[MISSING])),
        ("TF, cuDNN probe found none", absent, ids(&[MISSING])),
        (
            "TF, only a header",
            tf218(rig()).cudnn("/usr/include/cudnn_version.h", CudnnKind::Header, "9.3.0", None),
            ids(&[MISSING]),
        ),
        ("TF, system library of the build's minor", lib(tf218(rig()), "9.3.0"), vec![]),
        ("TF, system library of a lower minor", lib(tf218(rig()), "9.1.0"), ids(&[MISMATCH])),
        ("TF, system library of unknown minor", lib(tf218(rig()), "9"), vec![]),
        (
            "TF 2.17 from the table alone, 8.9",
            lib(rig().framework("tensorflow", "2.17.0", cuda("12.3")), "8.9.7"),
            vec![],
        ),
        (
            "TF 2.17 from the table alone, 8.6",
            lib(rig().framework("tensorflow", "2.17.0", cuda("12.3")), "8.6.0"),
            ids(&[MISMATCH]),
        ),
        ("TF CPU build", rig().framework("tensorflow", "2.18.0", Some(FrameworkBuild::Cpu)), vec![]),
        ("JAX, cuDNN 9.8", jax(rig()).wheel("nvidia-cudnn-cu12", "9.8.0.87"), vec![]),
        ("JAX, cuDNN 9.1", jax(rig()).wheel("nvidia-cudnn-cu12", "9.1.0.70"), ids(&[MISMATCH])),
        ("JAX, no cuDNN", jax(rig()), ids(&[MISSING])),
        // The floor is the plugin release's own: jax-cuda12-plugin 0.11+ requires cuDNN >= 9.10.2.21,
        // every jax-cuda13-plugin >= 9.12.0.46 (their with-cuda Requires-Dist on PyPI).
        ("JAX 0.12, cuDNN 9.8", jax12(rig()).wheel("nvidia-cudnn-cu12", "9.8.0.87"), ids(&[MISMATCH])),
        ("JAX 0.12, cuDNN 9.10", jax12(rig()).wheel("nvidia-cudnn-cu12", "9.10.2.21"), vec![]),
        (
            "JAX cuda13 0.8, cuDNN 9.8",
            rig().framework("jax-cuda13-plugin", "0.8.3", cuda("13")).wheel("nvidia-cudnn-cu13", "9.8.0.87"),
            ids(&[MISMATCH]),
        ),
        ("no GPU", tf218(Machine::linux()), ids(&["presence.no_nvidia_gpu"])),
    ];
    for (name, m, want) in cases {
        assert_eq!(m.ids(), want, "{name}");
    }
}

#[test]
fn fixes_install_the_cudnn_the_framework_needs() {
    let f = tf218(rig()).finding(MISSING);
    assert_eq!(tf218(rig()).changes(MISSING), [fix::install(&[], ["tensorflow[and-cuda]==2.18.0"])]);
    assert!(f.evidence.iter().any(|e| e.contains("cuDNN 9.3")), "{:?}", f.evidence);
    assert_eq!(jax(rig()).changes(MISSING), [fix::install(&[InstallFlag::Upgrade], ["jax[cuda12]"])]);
    let m = jax(rig()).wheel("nvidia-cudnn-cu12", "9.1.0.70");
    assert_eq!(m.changes(MISMATCH), [fix::install(&[], ["nvidia-cudnn-cu12>=9.8,<10"])]);
    let f = m.finding(MISMATCH);
    assert!(f.evidence.iter().any(|e| e == "found: nvidia-cudnn-cu12 9.1.0.70"), "{:?}", f.evidence);
    let m = jax12(rig()).wheel("nvidia-cudnn-cu12", "9.8.0.87");
    assert_eq!(m.changes(MISMATCH), [fix::install(&[], ["nvidia-cudnn-cu12>=9.10,<10"])]);
    // A system copy on LD_LIBRARY_PATH is dropped from it too.
    let m = tf218(rig()).env("LD_LIBRARY_PATH", "/opt/cudnn-9.1/lib:/opt/x").cudnn(
        "/opt/cudnn-9.1/lib/libcudnn.so.9.1.0",
        CudnnKind::Library,
        "9.1.0",
        None,
    );
    assert_eq!(
        m.changes(MISMATCH),
        [fix::install(&[], ["nvidia-cudnn-cu12>=9.3,<10"]), fix::set_var("LD_LIBRARY_PATH", "/opt/x")]
    );
}

/// torch 2.5.1+cu124 (pins cuDNN 9.1.0.70) with its wheel, having loaded `encoded`.
fn torch_loaded(encoded: u32) -> Machine {
    rig().torch("2.5.1+cu124").wheel("nvidia-cudnn-cu12", "9.1.0.70").deep_torch(|t| t.cudnn_version = Some(encoded))
}

#[test]
fn torch_loading_another_cudnn_than_its_wheel() {
    let on_path = |m: Machine, version: &str| {
        m.env("LD_LIBRARY_PATH", "/usr/local/cuda-12.4/lib64").cudnn(
            &format!("/usr/local/cuda-12.4/lib64/libcudnn.so.{version}"),
            CudnnKind::Library,
            version,
            None,
        )
    };
    let cases: Vec<(&str, Machine, Vec<String>)> = vec![
        ("the wheel's own", torch_loaded(90100), vec![]),
        ("another major from LD_LIBRARY_PATH", on_path(torch_loaded(8907), "8.9.7"), ids(&[MISMATCH])),
        ("another minor from LD_LIBRARY_PATH", on_path(torch_loaded(90300), "9.3.0"), ids(&[WRONG_COPY])),
        ("another minor, no copy to blame", torch_loaded(90300), vec![]),
        ("the wheel's own, a stray copy elsewhere", on_path(torch_loaded(90100), "9.3.0"), vec![]),
    ];
    for (name, m, want) in cases {
        assert_eq!(m.ids(), want, "{name}");
    }
    let restore = fix::install(&[InstallFlag::Reinstall], ["nvidia-cudnn-cu12==9.1.0.70"]);
    assert_eq!(
        on_path(torch_loaded(8907), "8.9.7").changes(MISMATCH),
        [Change::UnsetVar { name: "LD_LIBRARY_PATH".into() }, restore.clone()]
    );
    let m = on_path(torch_loaded(90300), "9.3.0");
    let f = m.finding(WRONG_COPY);
    assert!(f.evidence.iter().any(|e| e.contains("9.3.0 (loaded)")), "{:?}", f.evidence);
    assert_eq!(m.changes(WRONG_COPY).last(), Some(&restore));
}

#[test]
fn a_cudnn_release_that_dropped_the_gpu() {
    let with = |gpu: &str, cc: &str| {
        Machine::linux().gpu(gpu, cc).torch("2.11.0+cu128").wheel("nvidia-cudnn-cu12", "9.17.1.4")
    };
    let pascal = with("NVIDIA GeForce GTX 1080", "6.1");
    // torch 2.11's cu128 wheels also dropped Pascal from their arch list.
    assert_eq!(pascal.ids(), ids(&["arch.not_in_build", UNSUPPORTED]));
    let f = pascal.finding(UNSUPPORTED);
    assert!(f.detail.contains("7.5 to 12.0") && f.detail.contains("6.1"), "{f:#?}");
    assert!(f.evidence.iter().any(|e| e.contains("support-matrix")), "{:?}", f.evidence);
    // The lowest supported capability itself is fine.
    assert_eq!(with("NVIDIA GeForce RTX 2080", "7.5").ids(), Vec::<String>::new());
    // A release the knowledge base does not describe is not judged.
    let other = Machine::linux()
        .gpu("NVIDIA GeForce GTX 1080", "6.1")
        .torch("2.5.1+cu124")
        .wheel("nvidia-cudnn-cu12", "9.1.0.70");
    assert_eq!(other.ids(), Vec::<String>::new());
}

#[test]
fn pasted_text_without_cudnn_copies_never_says_missing() {
    let m = tf218(Machine::pasted().gpu("NVIDIA GeForce RTX 4090", ""));
    assert_eq!(m.ids(), Vec::<String>::new());
}

/// cuDNN built for CUDA 12 (a distribution package, as `dpkg -l` lists it) on a driver of CUDA 11.4:
/// cuDNN cannot run; on a driver of CUDA 12 it can (SYSTRAN/faster-whisper#362's cause).
#[test]
fn cudnn_built_for_a_cuda_the_driver_does_not_run_is_named() {
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let judged =
        |text: &str| crate::diagnose::diagnose(&gpu_doctor_probes::parse::paste::read_pasted(text, kb).unwrap(), kb);
    let cudnn = "ii  libcudnn8    8.9.7.29-1+cuda12.2   amd64    cuDNN runtime libraries\n";
    let old = "| NVIDIA-SMI 470.161.03   Driver Version: 470.161.03   CUDA Version: 11.4     |\n";
    let findings = judged(&format!("{old}{cudnn}"));
    let f = findings.iter().find(|f| f.id == "cudnn.built_for_newer_cuda").unwrap();
    let fix = super::words(f).unwrap();
    assert!(fix.contains("libcudnn9-cuda-11") && fix.contains("nvidia-cudnn-cu11") && fix.contains("525"), "{fix}");
    let new = "| NVIDIA-SMI 535.183.01   Driver Version: 535.183.01   CUDA Version: 12.2     |\n";
    assert!(!judged(&format!("{new}{cudnn}")).iter().any(|f| f.id == "cudnn.built_for_newer_cuda"));
    assert!(!judged(cudnn).iter().any(|f| f.id == "cudnn.built_for_newer_cuda"), "no driver shown");
    // A torch built for CUDA 12 brought its cuDNN wheel: the driver is the cause, named once.
    let wheels = judged(&format!("{old}torch==2.5.1+cu121\nnvidia-cudnn-cu12==9.1.0.70\n"));
    let ids: Vec<&str> = wheels.iter().map(|f| f.id.as_str()).collect();
    assert!(ids.contains(&"driver.too_old_for_runtime") && !ids.contains(&"cudnn.built_for_newer_cuda"), "{ids:?}");
}

/// A framework's own refusal, pasted with both versions, is the mismatch finding: the versions are
/// the facts the rule reads. The lines and values are the reader's samples for the rows
/// (probes/src/parse/paste/tests/messages.rs: XLA's from its cuda_dnn.cc wording, JAX's from
/// MIT-REALM/gcbfplus#1, PyTorch's tuple form from torch/backends/cudnn/__init__.py).
#[test]
fn a_frameworks_pasted_refusal_of_its_cudnn_is_the_mismatch_finding() {
    let refusal = |id: &str, line: &str, values: &[(&str, &str)]| {
        let mut m = Machine::pasted();
        m.0.messages.push(gpu_doctor_model::ObservedMessage {
            id: id.into(),
            line: line.into(),
            values: values.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
        });
        m
    };
    let xla = "E0430 22:32:43.417007 2493694 cuda_dnn.cc:454] Loaded runtime CuDNN library: 9.1.0 but source was \
               compiled with: 9.8.0. CuDNN library needs to have matching major version and equal or higher minor version.";
    let m = refusal("xla.cudnn_version_mismatch", xla, &[("runtime", "9.1.0"), ("compiled", "9.8.0")]);
    assert_eq!(m.ids(), [MISMATCH]);
    let f = m.finding(MISMATCH);
    assert_eq!(f.summary, "TensorFlow loaded cuDNN 9.1, but it was built with cuDNN 9.8");
    assert_eq!(f.explains, ["observed.xla.cudnn_version_mismatch"]);
    let fix = f.fix.clone().or_else(|| f.plan.and_then(|p| p.unplanned)).unwrap_or_default();
    assert!(fix.contains("9.8"), "the fix names the cuDNN the build needs: {fix}");
    let jax = "CUDA backend failed to initialize: Found cuDNN version 8600, but JAX was built against version 8906, which is newer.";
    let m = refusal("jax.cudnn_older_than_build", jax, &[("found", "8600"), ("built", "8906")]);
    assert_eq!(m.finding(MISMATCH).summary, "JAX loaded cuDNN 8.6, but it was built with cuDNN 8.9");
    let torch = "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (9, 10, 2) but found runtime version (9, 1, 0).";
    let m = refusal("torch.cudnn_incompatible", torch, &[("compiled", "9, 10, 2"), ("runtime", "9, 1, 0")]);
    assert_eq!(m.finding(MISMATCH).summary, "PyTorch loaded cuDNN 9.1, but it was built with cuDNN 9.10");
    // Without its values (a row's line cut before them) there is nothing to read.
    let m = refusal("xla.cudnn_version_mismatch", xla, &[]);
    assert_eq!(m.ids(), ["observed.xla.cudnn_version_mismatch"]);
}

/// OpenCV's DNN module on another cuDNN than its build's: a newer minor of the build's major is a warning (cuDNN keeps
/// those compatible; dusty-nv/jetson-inference#1409's maintainer had OpenCV rebuilt for the image), another major an
/// error; both name the rebuild.
#[test]
fn opencvs_cudnn_check_is_a_warning_on_a_newer_minor_and_an_error_across_majors() {
    let line = |runtime: &str, built: &str| {
        format!(
            "[ WARN:0] global /opt/opencv/modules/dnn/src/cuda4dnn/init.hpp (34) checkVersions cuDNN reports version \
             {runtime} which does not match with the version {built} with which OpenCV was built\n"
        )
    };
    let find = |text: &str| {
        super::pasted_findings(text).into_iter().find(|f| f.id == MISMATCH).unwrap_or_else(|| panic!("{text}"))
    };
    let newer = find(&line("8201", "8000"));
    assert_eq!(newer.severity, gpu_doctor_model::Severity::Warning);
    assert!(newer.fix.as_deref().is_some_and(|f| f.contains("Rebuild OpenCV")), "{newer:#?}");
    let other = find(&line("7605", "8000"));
    assert_eq!(other.severity, gpu_doctor_model::Severity::Error);
    let same = line("8000", "8000");
    assert!(!super::pasted_ids(&same).contains(&MISMATCH.to_owned()));
}

/// A cuDNN 8 DLL asked for where the text shows cuDNN 9's (m-bain/whisperX#899's lines): the majors differ; with a
/// cuDNN 8 copy shown too, or none, the loader's message stays on its own.
#[test]
fn a_cudnn_library_of_one_major_asked_for_beside_copies_of_another_is_the_mismatch() {
    let asked = "Could not locate cudnn_ops_infer64_8.dll. Please make sure it is in your library path!\n";
    let seen = "Took a look in torch\\lib and saw `cudnn_ops_infer64_9.dll` instead of `cudnn_ops_infer64_8.dll`\n";
    let found = super::pasted_findings(&format!("{asked}{seen}"));
    let f = found.iter().find(|f| f.id == "cudnn.version_mismatch").expect("the finding");
    assert!(f.summary.contains("cuDNN 8") && f.summary.contains("cuDNN 9"), "{}", f.summary);
    let fix = f.fix.as_deref().unwrap();
    assert!(fix.contains("nvidia-cudnn-cu12==8.*") && fix.contains("CTranslate2: 4.5 or later"), "{fix}");
    assert!(!super::pasted_ids(asked).contains(&"cudnn.version_mismatch".to_owned()));
    let both = format!("{asked}{seen}C:\\cudnn\\bin\\cudnn_ops_infer64_8.dll is here\n");
    assert!(!super::pasted_ids(&both).contains(&"cudnn.version_mismatch".to_owned()));
}

/// LD_DEBUG=libs's `calling init:` lines with cuDNN's files from a wheel and one from the system (pytorch/pytorch#185512's
/// lines): two copies in one process; all from the wheel is nothing.
#[test]
fn cudnn_files_loaded_from_a_wheel_and_the_system_are_two_copies() {
    let wheel = "5580:     calling init: /home/u/miniconda3/envs/debug/lib/python3.10/site-packages/nvidia/cudnn/lib/libcudnn.so.9\n\
                 5580:     calling init: /home/u/miniconda3/envs/debug/lib/python3.10/site-packages/nvidia/cudnn/lib/libcudnn_graph.so.9\n";
    assert!(!super::pasted_ids(wheel).contains(&"cudnn.wrong_copy_loaded".to_owned()));
    let system = format!("{wheel}5580:     calling init: /lib/x86_64-linux-gnu/libcudnn_engines_tensor_ir.so.9\n");
    let found = super::pasted_findings(&system);
    let f = found.iter().find(|f| f.id == "cudnn.wrong_copy_loaded").expect("the finding");
    assert!(f.summary.contains("libcudnn_engines_tensor_ir.so.9 from /lib/x86_64-linux-gnu"), "{}", f.summary);
    assert!(f.fix.as_deref().unwrap().contains("dpkg -S /lib/x86_64-linux-gnu/libcudnn_engines_tensor_ir.so.9"));
    let mine = format!("{wheel}5580:     calling init: /opt/cudnn/lib/libcudnn_ops.so.9\n");
    let f = super::pasted_findings(&mine).into_iter().find(|f| f.id == "cudnn.wrong_copy_loaded").expect("the finding");
    assert!(f.fix.as_deref().unwrap().contains("take /opt/cudnn/lib off LD_LIBRARY_PATH"));
}
