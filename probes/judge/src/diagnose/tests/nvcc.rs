//! An nvcc older than the GPU it would build for.

use super::builder::Machine;
use gpu_doctor_model::ObservedMessage;

const NVCC: &str = "toolkit.nvcc_too_old";

fn refused(m: &mut Machine, arch: &str) {
    // The form torch/cutorch#585 and inducer/pycuda#191 show.
    m.0.messages.push(ObservedMessage {
        id: "nvcc.unsupported_gpu_architecture".into(),
        line: format!("nvcc fatal   : Unsupported gpu architecture '{arch}'"),
        values: [("arch".to_owned(), arch.to_owned())].into(),
    });
}

#[test]
fn an_old_nvcc_beside_a_new_gpu_alone_says_nothing() {
    // Ubuntu 22.04's nvidia-cuda-toolkit is nvcc 11.5; an RTX 4090 (8.9) is built for from CUDA 11.8, but
    // prebuilt packages never ask nvcc: without a build's refusal there is nothing to say.
    let m = Machine::linux().driver("550.54.14", "12.4").gpu("NVIDIA GeForce RTX 4090", "8.9").toolkit(
        "/usr",
        "11.5",
        &["PATH"],
    );
    assert!(!m.ids().contains(&NVCC.to_owned()), "{:?}", m.ids());
}

#[test]
fn a_refused_architecture_beyond_the_gpu_may_also_be_left_out() {
    // NVIDIA/cuda-samples' CUDA 13 list (…, 110, 120) under nvcc 12.9 on an RTX 5070 (12.0, built from 12.8).
    let mut m =
        Machine::linux().gpu("NVIDIA GeForce RTX 5070", "12.0").toolkit("/usr/local/cuda-12.9", "12.9", &["PATH"]);
    refused(&mut m, "compute_110");
    let f = m.finding(NVCC);
    assert_eq!(f.summary, "nvcc 12.9 is too old to build for sm_110: CUDA 13.0 or newer is needed");
    let fix = f.fix.unwrap_or_default();
    assert!(fix.contains("leave compute_110 out") && fix.contains("NVIDIA GeForce RTX 5070 (sm_120)"), "{fix}");
    // The refused line keeps its own finding too: the build's architecture list is the other cause.
    assert!(m.ids().iter().any(|id| id == "observed.nvcc.unsupported_gpu_architecture"), "{:?}", m.ids());
}

#[test]
fn nvccs_refusal_names_the_toolkit_the_architecture_needs_and_explains_the_line() {
    let mut m = Machine::pasted();
    refused(&mut m, "compute_89");
    let f = m.finding(NVCC);
    assert_eq!(f.summary, "The nvcc that ran is too old to build for sm_89: CUDA 11.8 or newer is needed");
    let fix = f.fix.unwrap_or_default();
    assert!(fix.contains("cuda-toolkit-11-8") && fix.contains("cuda-nvcc=11.8"), "{fix}");
    assert!(!fix.contains("leave"), "no GPU is known to build for instead: {fix}");
    // With the nvcc's own version, and a Blackwell architecture.
    let mut m = Machine::pasted().toolkit("/usr/local/cuda-12.4", "12.4", &["PATH"]);
    refused(&mut m, "sm_120");
    assert_eq!(m.finding(NVCC).summary, "nvcc 12.4 is too old to build for sm_120: CUDA 12.8 or newer is needed");
}

/// nvcc not found in NVIDIA's CUDA image of the runtime flavour (NVIDIA/nvidia-docker#1160, verbatim lines): the fix
/// names the devel tag of the same image; in a devel image (which has nvcc) the fix is the PATH one.
#[test]
fn nvcc_missing_in_a_runtime_image_gets_the_devel_tag() {
    let runtime = "docker run -it --gpus all nvidia/cuda:10.0-cudnn7-runtime-ubuntu18.04 /bin/bash\n\
                   root@7c0be9bfaeec:/# nvcc --version\n\
                   bash: nvcc: command not found\n";
    let fix_of = |text: &str| {
        let f = super::pasted_findings(text).into_iter().find(|f| f.id == "toolkit.nvcc_not_on_path").unwrap();
        super::words(&f).unwrap().to_owned()
    };
    let fix = fix_of(runtime);
    assert!(fix.contains("`nvidia/cuda:10.0-cudnn7-devel-ubuntu18.04`"), "{fix}");
    let devel = runtime.replace("-runtime-", "-devel-");
    let fix = fix_of(&devel);
    assert!(!fix.contains("flavour") && fix.contains("export PATH=/usr/local/cuda/bin:$PATH"), "{fix}");
}

/// An nvcc of another release shown running in NVIDIA's CUDA runtime image (NVIDIA/nvidia-docker#740: apt's nvcc 9.1
/// in `nvidia/cuda:9.2-cudnn7-runtime-ubuntu18.04`) is a compiler installed apart: the toolkits disagree, and the fix
/// names the devel tag; the same release as the image's is no disagreement.
#[test]
fn an_nvcc_of_another_release_in_a_runtime_image_disagrees_with_it() {
    let text = "docker run -it nvidia/cuda:9.2-cudnn7-runtime-ubuntu18.04\n\
                root@a41114938ade:/# nvcc --version\n\
                nvcc: NVIDIA (R) Cuda compiler driver\n\
                Copyright (c) 2005-2017 NVIDIA Corporation\n\
                Built on Fri_Nov__3_21:07:56_CDT_2017\n\
                Cuda compilation tools, release 9.1, V9.1.85\n";
    let found = super::pasted_findings(text);
    let f = found.iter().find(|f| f.id == "toolkits.names_disagree").expect("the disagreement");
    let fix = super::words(f).unwrap();
    assert!(fix.contains("`nvidia/cuda:9.2-cudnn7-devel-ubuntu18.04`"), "{fix}");
    let same = text.replace("9.2-cudnn7", "9.1-cudnn7");
    assert!(!super::pasted_ids(&same).contains(&"toolkits.names_disagree".to_owned()));
}

/// A build that says it builds without CUDA and then fails to run `nvcc --version` (espnet/warp-ctc#4, verbatim lines,
/// on a CPU-only machine) gets a note, not an error; the same failure alone is still an error.
#[test]
fn nvcc_missing_under_a_build_without_cuda_is_a_note() {
    let failure = "FileNotFoundError: [Errno 2] No such file or directory: 'nvcc': 'nvcc'\n";
    let text = format!("Torch was not built with CUDA support, not building warp-ctc GPU extensions.\n{failure}");
    let found = super::pasted_findings(&text);
    assert!(found.iter().all(|f| f.severity == gpu_doctor_model::Severity::Info), "{found:#?}");
    assert!(found.iter().any(|f| f.id == "toolkit.nvcc_not_on_path"), "{found:#?}");
    let alone = super::pasted_findings(failure);
    assert!(alone.iter().any(|f| f.severity == gpu_doctor_model::Severity::Error), "{alone:#?}");
}
