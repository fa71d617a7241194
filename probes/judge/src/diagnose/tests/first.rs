//! Driver level, compiled architectures and CPU-only builds.

use super::builder::Machine;

fn rtx4090() -> Machine {
    Machine::linux().gpu("NVIDIA GeForce RTX 4090", "8.9")
}

#[test]
fn a_healthy_machine_has_no_findings_from_these_rules() {
    let m = rtx4090().driver("570.26", "12.8").torch("2.5.1+cu124");
    assert_eq!(m.ids(), Vec::<String>::new());
}

#[test]
fn a_cuda_13_wheel_on_an_r570_driver_is_too_old() {
    let m = rtx4090()
        .driver("570.124.06", "12.8")
        .framework("jax-cuda13-plugin", "0.7.2", None)
        .wheel("nvidia-cudnn-cu13", "9.13.0.50");
    // No cuda version in the name alone: the plugin's build says CUDA 13.
    let m = Machine(m.0).framework(
        "cupy-cuda13x",
        "14.0.0",
        Some(gpu_doctor_model::FrameworkBuild::Cuda { version: Some("13".into()) }),
    );
    let ids = m.ids();
    assert_eq!(ids, vec!["driver.too_old_for_runtime".to_owned()]);
    let f = m.finding("driver.too_old_for_runtime");
    assert!(f.detail.contains("CUDA 13") && f.detail.contains("12.8"), "{f:#?}");
    // The driver update is the plan's (`gpu-doctor-installers` writes the fix): R580 runs CUDA 13.
    assert!(
        matches!(&f.plan, Some(r) if matches!(r.target, gpu_doctor_model::PlanTarget::FrameworkBuild { or_driver: Some(580), .. })),
        "{f:#?}"
    );
}

#[test]
fn the_driver_floor_is_walked_exactly() {
    // 12.8 needs 525.60.13 (floor of 12.x) to start and 570.26 for everything.
    let just = rtx4090().driver("525.60.13", "12.0").torch("2.5.1+cu124");
    assert_eq!(just.ids(), vec!["driver.minor_version_compat".to_owned()]);
    let below = rtx4090().driver("525.60.12", "").torch("2.5.1+cu124");
    assert_eq!(below.ids(), vec!["driver.too_old_for_runtime".to_owned()]);
    let at_full = rtx4090().driver("550.54.14", "12.4").torch("2.5.1+cu124");
    assert_eq!(at_full.ids(), Vec::<String>::new());
}

/// The rule writes no fix: it names the build to replace and the driver branch that runs it, which
/// gpu-doctor-installers plans (a wheel for this driver, when one fits, else the driver) and writes
/// the fix from.
#[test]
fn the_too_old_fix_is_a_plan_for_a_build_for_this_driver_or_the_driver() {
    let m = rtx4090().driver("550.54.14", "12.4").torch("2.9.0+cu130");
    let f = m.finding("driver.too_old_for_runtime");
    assert_eq!(f.fix, None, "the driver's install line is the driver planner's");
    let target = f.plan.map(|p| p.target);
    assert_eq!(
        target,
        Some(gpu_doctor_model::PlanTarget::FrameworkBuild {
            env: "/home/u/proj/.venv".into(),
            framework: "torch".into(),
            or_driver: Some(580)
        })
    );
    assert!(f.evidence.iter().any(|e| e.contains("NVIDIA driver 550.54.14")), "{:?}", f.evidence);
}

/// A snapshot written before the probes stored the level derived from the driver version (no
/// `cuda_version`) is diagnosed as if the level had been stored: the same finding, evidence and fix.
#[test]
fn a_driver_without_its_cuda_level_is_judged_by_the_level_its_version_implies() {
    let stored = rtx4090().driver("550.54.14", "12.4").torch("2.9.0+cu130");
    let old = rtx4090().driver("550.54.14", "").torch("2.9.0+cu130");
    let f = old.finding("driver.too_old_for_runtime");
    assert!(
        f.evidence.iter().any(|e| e.contains("NVIDIA driver 550.54.14, which supports CUDA up to 12.4")),
        "{:?}",
        f.evidence
    );
    assert_eq!(f, stored.finding("driver.too_old_for_runtime"));
}

#[test]
fn an_arch_list_without_the_gpu_major_and_no_ptx_is_not_in_build() {
    let m = Machine::linux().gpu("NVIDIA GeForce RTX 5090", "12.0").driver("570.124.06", "12.8").torch("2.5.1+cu124");
    assert_eq!(m.ids(), vec!["arch.not_in_build".to_owned()]);
    let f = m.finding("arch.not_in_build");
    assert!(f.evidence.iter().any(|e| e.contains("knowledge base")), "{:?}", f.evidence);
    // The deep tier's own list wins over the knowledge base.
    let deep = Machine::linux()
        .gpu("NVIDIA GeForce RTX 5090", "12.0")
        .driver("570.124.06", "12.8")
        .torch("2.5.1+cu124")
        .deep_torch(|t| t.arch_list = Some(vec!["sm_90".into(), "compute_90".into()]));
    assert_eq!(deep.ids(), vec!["arch.ptx_jit_only".to_owned()]);
    let covered = Machine::linux()
        .gpu("NVIDIA GeForce RTX 5090", "12.0")
        .driver("570.124.06", "12.8")
        .torch("2.5.1+cu124")
        .deep_torch(|t| t.arch_list = Some(vec!["sm_90".into(), "sm_120".into()]));
    assert_eq!(covered.ids(), Vec::<String>::new());
}

#[test]
fn a_gpu_below_the_lowest_arch_is_too_old_for_the_build() {
    let m = Machine::linux()
        .gpu("Tesla K80", "3.7")
        .driver("470.82.01", "11.4")
        .deep_torch(|t| t.arch_list = Some(vec!["sm_50".into(), "sm_60".into()]))
        .torch("1.13.1+cu116");
    let f = m.finding("arch.not_in_build");
    assert!(f.detail.contains("too old"), "{f:#?}");
}

/// The issue's own example of a paste that named nothing: a `+cpu` torch whose `is_available()`
/// was asked. Without a GPU list the CPU build is still why it answered False.
#[test]
fn a_pasted_cpu_build_asked_for_cuda_is_named_without_a_gpu_list() {
    let ids = super::pasted_ids;
    let asked = ">>> torch.__version__\n'2.5.1+cpu'\n>>> torch.cuda.is_available()\nFalse\n";
    assert_eq!(ids(asked), ["framework.cpu_only_build"]);
    // Not asked, or a CUDA build: nothing to conclude without the GPU list.
    assert!(ids(">>> torch.__version__\n'2.5.1+cpu'\n").is_empty());
    assert!(ids(">>> torch.__version__\n'2.5.1+cu121'\n>>> torch.cuda.is_available()\nFalse\n").is_empty());
}

/// The CPU build's fix names the CUDA build to install, as arch.not_in_build's does: with the driver
/// not pasted, one per driver level with its command; with the driver's CUDA level pasted, the newest
/// line that driver runs. (pytorch/pytorch#67069's collect_env named neither driver nor GPU.)
#[test]
fn a_pasted_cpu_builds_fix_names_the_cuda_build_to_install() {
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let fix_of = |text: &str| {
        let snap = gpu_doctor_probes::parse::paste::read_pasted(text, kb).unwrap();
        let f = crate::diagnose::diagnose(&snap, kb).into_iter().find(|f| f.id == "framework.cpu_only_build").unwrap();
        super::words(&f).unwrap().to_owned()
    };
    let asked = ">>> torch.__version__\n'2.5.1+cpu'\n>>> torch.cuda.is_available()\nFalse\n";
    let unknown = fix_of(asked);
    assert!(unknown.contains("Which one depends on the driver"), "{unknown}");
    assert!(unknown.contains("--index-url https://download.pytorch.org/whl/cu1"), "{unknown}");
    let known = fix_of(&format!("{asked}Nvidia driver version: 470.82.01\nCUDA Version: 11.4\n"));
    assert!(known.contains("built for CUDA 11."), "{known}");
    assert!(known.contains("whl/cu11"), "{known}");
}

/// A CPU torch said in words (SupreethN/HOISTFormer#3: the conda command, then "This command installs cpu version
/// instead of cuda.") is the CPU-only finding, with the CUDA build to install in its fix; the same words beside a
/// torch a program shows to be a CUDA build speak of something else (another environment, a past install).
#[test]
fn a_cpu_torch_said_in_words_is_named_with_the_build_to_install() {
    let text = "conda install pytorch==1.9.0 torchvision==0.10.0 cudatoolkit=11.1 -c pytorch -c nvidia\n\n\
                This command installs cpu version instead of cuda.\n";
    let found = super::pasted_findings(text);
    let f = found.iter().find(|f| f.id == "framework.cpu_only_build").expect("the CPU-only finding");
    assert!(f.evidence.iter().any(|e| e.contains("installs cpu version")), "{f:#?}");
    let fix = super::words(f).unwrap();
    assert!(fix.contains("--index-url https://download.pytorch.org/whl/cu"), "{fix}");
    let cuda = format!("{text}>>> torch.__version__\n'2.1.0+cu121'\n");
    assert!(!super::pasted_ids(&cuda).contains(&"framework.cpu_only_build".to_owned()));
}

/// A CPU build beside CUDA packages in its environment, without a GPU list: only a wish for CUDA puts
/// conda's cudatoolkit there (bioimage-io/core-bioimage-io-python#307's two rows: conda-forge's
/// cudatoolkit beside the pytorch channel's CPU build), and an environment file that asks for
/// `cudatoolkit=11.3` is the same; the CPU build alone says nothing.
#[test]
fn a_pasted_cpu_build_beside_cuda_packages_is_named_without_a_gpu_list() {
    let ids = super::pasted_ids;
    let cpu = "pytorch                   1.12.1              py3.9_cpu_0    pytorch\n";
    let toolkit = "cudatoolkit               11.7.0              ha6f8bbd_10    conda-forge\n";
    assert_eq!(ids(&format!("{toolkit}{cpu}")), ["framework.cpu_only_build"]);
    let env_file = "dependencies:\n  - python=3.9\n  - cudatoolkit=11.3\n  - pytorch\n";
    assert_eq!(ids(&format!("{env_file}{cpu}")), ["framework.cpu_only_build"]);
    assert!(ids(cpu).is_empty(), "a CPU build alone, with no GPU named and nothing asked");
    assert!(ids(&format!("{toolkit}pytorch 1.12.1 py3.9_cuda11.6_cudnn8.3.2_0 pytorch\n")).is_empty());
}

/// A CPU build (conda-forge's `cpu_generic` build string) where the writer asks for a GPU build in words
/// (computational-cell-analytics/micro-sam#356: "I guess you wanted users to have GPU enabled version by default?"); a
/// writer on a machine without a GPU says so and is left alone.
#[test]
fn a_pasted_cpu_build_where_the_words_ask_for_a_gpu_build_is_named() {
    let ids = super::pasted_ids;
    let cpu = "pytorch                   2.1.0           cpu_generic_py311h8354fdb_2    conda-forge
";
    let wish = "I guess you wanted users to have GPU enabled version by default?
";
    assert_eq!(ids(&format!("{wish}{cpu}")), ["framework.cpu_only_build"]);
    assert!(
        ids(&format!(
            "This is a laptop with no GPU, so no GPU support needed.
{cpu}"
        ))
        .is_empty()
    );
}

/// `is_available()` False after a conda-forge install that asked for no CUDA build (opencv/opencv#24293's two lines),
/// where the text shows no build, GPU list or driver: conda-forge's CPU pytorch, with `conda list pytorch` in the fix
/// to check. Asking for the CUDA build, or a driver shown, is not this.
#[test]
fn is_available_false_after_a_conda_forge_install_is_likely_the_cpu_build() {
    let ids = super::pasted_ids;
    let repl = "(mouse) $ python -c \"import torch; print(torch.cuda.is_available())\"\nFalse\n";
    let text = format!("conda install -c conda-forge opencv\n{repl}");
    let f = super::pasted_findings(&text);
    let named = f.iter().find(|f| f.id == "framework.cpu_only_build").expect("likely the CPU build");
    assert!(super::words(named).is_some_and(|w| w.contains("conda list pytorch")), "{named:?}");
    assert!(
        !ids(&format!("conda install -c conda-forge pytorch-gpu opencv\n{repl}"))
            .contains(&"framework.cpu_only_build".to_owned())
    );
    // `create` is the same command for this (vocalpy/vak#470); the pytorch channel beside conda-forge asks for its build.
    let create = format!("Installed with `mamba create -n vak vak tweetynet -c conda-forge`\n{repl}");
    assert!(ids(&create).contains(&"framework.cpu_only_build".to_owned()));
    let pytorch = format!("conda install -c conda-forge -c pytorch opencv\n{repl}");
    assert!(!ids(&pytorch).contains(&"framework.cpu_only_build".to_owned()));
    assert!(!ids(&format!("{text}Driver Version: 470.82.01\n")).contains(&"framework.cpu_only_build".to_owned()));
    assert!(ids(repl).iter().all(|id| id != "framework.cpu_only_build"), "is_available() alone");
}

/// A CPU torch beside a companion that runs only on CUDA (vLLM, flash-attn), or under a module that failed to load
/// torch's CUDA library (the loader's `libtorch_cuda.so: cannot open shared object file`), was meant to be the CUDA
/// build; a vLLM built for the CPU (`+cpu`) says nothing.
#[test]
fn a_pasted_cpu_torch_under_a_cuda_only_companion_is_named_without_a_gpu_list() {
    let ids = super::pasted_ids;
    let cpu = "torch==2.10.0+cpu\n";
    assert_eq!(ids(&format!("{cpu}vllm==0.11.0\n")), ["framework.cpu_only_build"]);
    assert_eq!(ids(&format!("{cpu}flash-attn==2.8.3\n")), ["framework.cpu_only_build"]);
    let loader = "ImportError: libtorch_cuda.so: cannot open shared object file: No such file or directory\n";
    assert_eq!(ids(&format!("{cpu}{loader}")), ["framework.cpu_only_build"]);
    assert!(ids(&format!("{cpu}vllm==0.11.0+cpu\n")).is_empty());
    assert_eq!(ids(loader), ["observed.ld.torch_cuda_library_missing"], "the line alone is the catalogue's");
}

/// conda's package plan with the pytorch channel's `pytorch-cuda` metapackage (the CUDA variant asked
/// for: pytorch/builder:conda/pytorch-cuda/meta.yaml) beside the CPU pytorch build it solved to:
/// pytorch/pytorch#87991's and #91009's family, here as conda's NEW-packages rows
/// (conda/core/link.py). The same plan with a CUDA build is healthy.
#[test]
fn a_conda_plan_with_pytorch_cuda_and_a_cpu_pytorch_is_named() {
    let ids = super::pasted_ids;
    let plan = |build: &str| {
        format!(
            "The following NEW packages will be INSTALLED:\n\n  pytorch            \
             pytorch/linux-64::pytorch-2.0.1-{build}\n  pytorch-cuda       pytorch/noarch::pytorch-cuda-11.8-h7e8668a_5\n"
        )
    };
    assert_eq!(ids(&plan("py3.10_cpu_0")), ["framework.cpu_only_build"]);
    assert!(ids(&plan("py3.10_cuda11.8_cudnn8.7.0_0")).is_empty());
}

/// A CPU jaxlib (conda-forge's `cpu_py…` build) where the text asks for CUDA, without a GPU list: JAX's template's
/// accelerator answered GPU (jax-ml/jax#17624's form lines), or an install command naming a CUDA package
/// (jax-ml/jax#24604's conda command). The fix asks conda for the CUDA build by name, quoted for the shell; the
/// CPU build alone says nothing.
#[test]
fn a_pasted_cpu_jax_where_the_text_asks_for_cuda_is_named() {
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let found = |text: &str| {
        let snap = gpu_doctor_probes::parse::paste::read_pasted(text, kb).unwrap();
        crate::diagnose::diagnose(&snap, kb).into_iter().find(|f| f.id == "framework.cpu_only_build")
    };
    let plan = "The following NEW packages will be INSTALLED:\n\n  jax                conda-forge/noarch::jax-0.4.4-pyhd8ed1ab_0\n  \
                jaxlib             conda-forge/linux-64::jaxlib-0.4.4-cpu_py311h7146453_1\n";
    let form = "### Which accelerator(s) are you using?\n\nGPU\n";
    let f = found(&format!("{plan}\n{form}")).expect("the form's answer asks for CUDA");
    let fix = super::words(&f).unwrap();
    assert!(fix.contains("conda install 'jaxlib=*=*cuda*' jax cuda-nvcc"), "{fix}");
    let command = "conda install jaxlib=*=*cuda* jax cuda-nvcc -c conda-forge -c nvidia\n";
    assert!(found(&format!("{command}{plan}")).is_some(), "the command asks for CUDA");
    assert!(found(plan).is_none(), "a CPU build alone, nothing asked");
    assert!(found(&format!("{plan}\n### Which accelerator(s) are you using?\n\nCPU\n")).is_none());
}

#[test]
fn cpu_only_builds_are_flagged_only_where_there_is_a_gpu() {
    let with_gpu = rtx4090().driver("570.26", "12.8").torch("2.5.1+cpu");
    assert_eq!(with_gpu.ids(), vec!["framework.cpu_only_build".to_owned()]);
    let no_gpu = Machine::linux().torch("2.5.1+cpu");
    assert_eq!(no_gpu.ids(), vec!["presence.no_nvidia_gpu".to_owned()]);
}

#[test]
fn tensorflow_after_2_10_on_native_windows_has_no_gpu() {
    let new = Machine::windows().gpu("NVIDIA GeForce RTX 4090", "8.9").driver("571.96", "12.8").framework(
        "tensorflow",
        "2.17.0",
        Some(gpu_doctor_model::FrameworkBuild::Unknown),
    );
    assert_eq!(new.ids(), vec!["framework.tensorflow_windows_native_no_gpu".to_owned()]);
    let old = Machine::windows().gpu("NVIDIA GeForce RTX 4090", "8.9").driver("571.96", "12.8").framework(
        "tensorflow",
        "2.10.1",
        Some(gpu_doctor_model::FrameworkBuild::Unknown),
    );
    assert_eq!(old.ids(), Vec::<String>::new());
}

/// A paste from native Windows that names no GPU is judged over the same TensorFlow packages as a
/// machine with one: `tensorflow-gpu` 2.10 has its Windows GPU build, so it is no finding.
#[test]
fn tensorflow_gpu_2_10_pasted_from_native_windows_is_not_the_no_gpu_finding() {
    let pasted = |name: &str, version: &str| {
        let mut m = Machine::pasted().framework(name, version, Some(gpu_doctor_model::FrameworkBuild::Unknown));
        m.0.platform.platform.os = gpu_doctor_model::OsFamily::Windows;
        m
    };
    let id = "framework.tensorflow_windows_native_no_gpu".to_owned();
    assert!(!pasted("tensorflow-gpu", "2.10.0").ids().contains(&id));
    assert!(pasted("tensorflow", "2.17.0").ids().contains(&id));
    assert!(pasted("tensorflow-intel", "2.17.0").ids().contains(&id));
    assert!(!pasted("tensorflow", "2.10.1").ids().contains(&id));
}

/// The native-Windows limit and the fix's tested build are tensorflow.toml's `windows_native_gpu` rows.
#[test]
fn the_native_windows_tensorflow_limit_is_read_from_the_knowledge_base() {
    let tf = |version: &str| {
        Machine::windows().gpu("NVIDIA GeForce RTX 4090", "8.9").driver("571.96", "12.8").framework(
            "tensorflow",
            version,
            Some(gpu_doctor_model::FrameworkBuild::Unknown),
        )
    };
    let id = "framework.tensorflow_windows_native_no_gpu";
    let fix = tf("2.17.0").finding(id).fix.unwrap();
    assert!(fix.contains("tensorflow==2.10.* with CUDA 11.2 and cuDNN 8.1"), "{fix}");
    let mut kb = gpu_doctor_kb::Kb::get().unwrap().clone();
    let row = kb.tensorflow.release.iter_mut().find(|r| r.version == "2.11").unwrap();
    row.windows_native_gpu = true;
    let (cuda, cudnn) = (row.cuda, row.cudnn);
    assert!(tf("2.11.0").findings_with(&kb).iter().all(|f| f.id != id), "2.11 now has a Windows GPU build");
    let f = tf("2.12.0").findings_with(&kb).into_iter().find(|f| f.id == id).unwrap();
    assert!(f.detail.contains("TensorFlow 2.11 was the last"), "{f:#?}");
    let fix = f.fix.unwrap();
    assert!(fix.contains(&format!("tensorflow==2.11.* with CUDA {cuda} and cuDNN {cudnn}")), "{fix}");
}

/// The extra `pip install jax[...]` names is jax.toml's `extra` of the plugin for the driver's CUDA major.
#[test]
fn the_jax_extra_is_read_from_the_knowledge_base() {
    let jax = |cuda: &str| {
        rtx4090().driver("580.65.06", cuda).framework("jax", "0.7.2", Some(gpu_doctor_model::FrameworkBuild::Cpu))
    };
    let id = "framework.cpu_only_build";
    assert!(super::words(&jax("13.0").finding(id)).unwrap().to_owned().starts_with("Install jax[cuda13] "));
    assert!(super::words(&jax("12.8").finding(id)).unwrap().to_owned().starts_with("Install jax[cuda12] "));
    let mut kb = gpu_doctor_kb::Kb::get().unwrap().clone();
    for p in &mut kb.jax.plugin {
        p.extra = format!("cuda{}-pip", p.cuda_major);
        p.package = format!("jax-cuda{}-pjrt-plugin", p.cuda_major);
    }
    let f = jax("13.0").findings_with(&kb).into_iter().find(|f| f.id == id).unwrap();
    assert!(super::words(&f).unwrap().starts_with("Install jax[cuda13-pip] "), "{f:#?}");
    assert!(f.detail.contains("jax-cuda12-pjrt-plugin or jax-cuda13-pjrt-plugin"), "{f:#?}");
}

#[test]
fn pasted_text_without_a_driver_concludes_nothing_about_the_driver() {
    let mut m = Machine::pasted().gpu("NVIDIA GeForce RTX 4090", "");
    m = m.torch("2.9.0+cu130");
    assert_eq!(m.ids(), Vec::<String>::new());
}

#[test]
fn a_finding_from_partial_facts_says_what_it_could_not_see() {
    let m = Machine::pasted().driver("550.54.14", "12.4").torch("2.9.0+cu130");
    let f = m.finding("driver.too_old_for_runtime");
    assert!(!f.detail.contains("Not in the pasted text"), "driver and python are both known: {f:#?}");
    let m = Machine::pasted().gpu("NVIDIA GeForce RTX 5090", "").torch("2.5.1+cu124");
    let f = m.finding("arch.not_in_build");
    assert!(f.evidence.iter().any(|e| e.contains("by its name")), "{:?}", f.evidence);
    // nvidia-smi's link fields without the host-link probe: the finding says the host links were unseen.
    let m = Machine::pasted().gpu("NVIDIA GeForce RTX 4090", "8.9").gpu_with(|g| {
        g.pci_bus_id = Some("0000:01:00.0".into());
        (g.pcie_gen_current, g.pcie_gen_max, g.pcie_width_current, g.pcie_width_max) =
            (Some(1), Some(4), Some(16), Some(16));
        g.utilization_gpu_pct = Some(0);
    });
    let f = m.finding("link.below_max_idle");
    assert!(f.detail.ends_with("Not in the pasted text, so not checked: the host links."), "{f:#?}");
    // The same finding on this machine says nothing of the kind.
    let mut here = m;
    here.0.origin = gpu_doctor_model::Origin::ThisMachine;
    assert!(!here.finding("link.below_max_idle").detail.contains("pasted"));
}

#[test]
fn pasted_error_lines_of_a_findings_category_are_cited_as_its_evidence() {
    let mut m = Machine::pasted().driver("550.54.14", "12.4").torch("2.9.0+cu130");
    m.0.messages.push(gpu_doctor_model::ObservedMessage {
        id: "torch.driver_too_old".into(),
        line: "The NVIDIA driver on your system is too old (found version 12040).".into(),
        values: [("found_version".to_owned(), "12040".to_owned())].into_iter().collect(),
    });
    let f = m.finding("driver.too_old_for_runtime");
    assert!(f.evidence.iter().any(|e| e.starts_with("pasted line: The NVIDIA driver")), "{:?}", f.evidence);
    assert_eq!(m.ids(), vec!["driver.too_old_for_runtime".to_owned()], "no separate observed.* finding");
}

/// The wheel it gets (2.13.0+cu129) is checked in installers/tests/choose.rs.
#[test]
fn a_cuda_13_2_wheel_on_an_r575_driver_is_too_old_and_gets_a_plan() {
    let m = Machine::linux().gpu("NVIDIA GeForce RTX 5090", "12.0").driver("575.57.08", "12.9").torch("2.15.0+cu132");
    assert_eq!(m.ids(), vec!["driver.too_old_for_runtime".to_owned()]);
    assert!(m.finding("driver.too_old_for_runtime").plan.is_some());
}

/// A JAX message that only some releases print is explained unless every JAX in the snapshot is
/// outside those releases (the line then came from elsewhere).
#[test]
fn a_jax_message_is_explained_only_next_to_a_jax_that_prints_it() {
    let pasted = |jax: Option<&str>, id: &str, line: &str| {
        let mut m = Machine::pasted();
        if let Some(v) = jax {
            m = m.framework("jax", v, None);
        }
        m.0.messages.push(gpu_doctor_model::ObservedMessage {
            id: id.into(),
            line: line.into(),
            values: Default::default(),
        });
        // Named by its own finding, or explained by a rule's (a CPU jaxlib, for the fallback alone).
        let observed = format!("observed.{id}");
        m.findings().iter().any(|f| f.id == observed || f.explains.contains(&observed))
    };
    let fallback = "WARNING:absl:No GPU/TPU found, falling back to CPU.";
    assert!(pasted(Some("0.4.16"), "jax.no_gpu_fallback", fallback));
    assert!(pasted(None, "jax.no_gpu_fallback", fallback), "no JAX version known: the line is explained");
    assert!(!pasted(Some("0.7.2"), "jax.no_gpu_fallback", fallback), "removed in 0.4.17");
    let cc_low =
        "Device 0 has CUDA compute capability 5.0 which is lower than the minimum supported compute capability 5.2.";
    assert!(pasted(Some("0.5.3"), "jax.device_cc_too_low", cc_low));
    assert!(!pasted(Some("0.6.0"), "jax.device_cc_too_low", cc_low), "not printed from 0.6.0");
    assert!(!pasted(Some("0.4.25"), "jax.device_cc_too_low", cc_low), "added in 0.4.26");
}

/// PyTorch's own warning gives the installed build's arch list; with no torch version in the text
/// that list is judged (Comfy-Org/ComfyUI#7127), and a list that covers the GPU says nothing.
#[test]
fn pytorchs_printed_arch_list_is_judged_without_a_torch_version() {
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let judge = |text: &str| {
        let s = gpu_doctor_probes::parse::paste::read_pasted(text, kb).unwrap();
        super::diagnose(&s, kb)
    };
    let found = judge(
        "NVIDIA GeForce RTX 5070 Ti with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n\
         The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_90.\n",
    );
    let ids: Vec<&str> = found.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["arch.not_in_build"], "{found:#?}");
    assert!(found[0].summary.contains("RTX 5070 Ti") && found[0].summary.contains("sm_120"), "{:?}", found[0].summary);
    assert!(found[0].evidence.iter().any(|e| e.contains("sm_50 sm_60")), "{:?}", found[0].evidence);
    // The same list beside a GPU it covers (same major, lower minor): nothing from this rule.
    let covered = judge(
        "GPU models and configuration: GPU 0: NVIDIA GeForce RTX 3090\n\
         The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_90.\n",
    );
    assert!(covered.iter().all(|f| f.id != "arch.not_in_build"), "{covered:#?}");
    // PyTorch's check counts machine code only: the list torch 1.7 and 1.8's CUDA 10.2 wheels print
    // (sm_37 to sm_75 and compute_37 PTX) leaves out an sm_86 GPU, as PyTorch says.
    let ptx = judge(
        "NVIDIA GeForce RTX 3090 with CUDA capability sm_86 is not compatible with the current PyTorch installation.\n\
         The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_61 sm_70 sm_75 compute_37.\n",
    );
    let ids: Vec<&str> = ptx.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["arch.not_in_build"], "{ptx:#?}");
    assert!(
        ptx[0].detail.starts_with(
            "None of its machine code is of compute capability 8's major, which is what PyTorch's check counts (\"with \
         CUDA capability sm_86 is not compatible with the current PyTorch installation\"): the PTX it also lists is \
         not counted, and the CUDA libraries of such a build have no code for this GPU either."
        ),
        "{}",
        ptx[0].detail
    );
    // With the torch version in the text, its build is judged from the knowledge base and the
    // printed list is not judged a second time.
    let versioned = judge(
        "torch==2.5.1+cu124\n\
         NVIDIA GeForce RTX 5070 Ti with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n\
         The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_90.\n",
    );
    let arch: Vec<&str> =
        versioned.iter().filter(|f| f.id == "arch.not_in_build").map(|f| f.summary.as_str()).collect();
    assert_eq!(arch.len(), 1, "{versioned:#?}");
    assert!(arch[0].starts_with("torch 2.5.1+cu124 was not compiled for"), "{arch:?}");
}

/// PyTorch's `_check_capability` compares numbers; machine code of 12.0 runs on 12.1. Its warning for
/// a GB10 (12.1) under a build whose highest entry is 12.0, as pytorch/pytorch#172629 quotes it
/// (a UserWarning over three lines), is no error; a GPU of a higher major (an RTX 5090, 12.0, under
/// a build up to 9.0) or below the lowest entry still is.
#[test]
fn pytorchs_capability_warning_is_judged_by_binary_compatibility() {
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let judge = |text: &str| {
        let s = gpu_doctor_probes::parse::paste::read_pasted(text, kb).unwrap();
        super::diagnose(&s, kb)
    };
    let warn = |gpu: &str, cc: &str, min: &str, max: &str| {
        format!(
            "UserWarning:\n    Found GPU0 {gpu} which is of cuda capability {cc}.\n    Minimum and Maximum cuda \
             capability supported by this version of PyTorch is\n    ({min}) - ({max})\n"
        )
    };
    let serious = |text: &str| -> Vec<String> {
        judge(text).into_iter().filter(|f| f.severity != gpu_doctor_model::Severity::Info).map(|f| f.id).collect()
    };
    assert_eq!(serious(&warn("NVIDIA GB10", "12.1", "8.0", "12.0")), Vec::<String>::new());
    let note = judge(&warn("NVIDIA GB10", "12.1", "8.0", "12.0"));
    let ids: Vec<&str> = note.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["arch.capability_warning_harmless"], "{note:#?}");
    assert!(note[0].summary.contains("12.1 runs 12.0 machine code"), "{}", note[0].summary);
    assert!(note[0].evidence.iter().any(|e| e.contains("Found GPU0 NVIDIA GB10")), "{:?}", note[0].evidence);
    let newer_major = serious(&warn("NVIDIA GeForce RTX 5090", "12.0", "5.0", "9.0"));
    assert!(newer_major.contains(&"observed.torch.gpu_too_old".to_owned()), "{newer_major:?}");
    // Below the lowest entry, the printed minimum leaves the GPU out of the build: the rule's finding,
    // which explains PyTorch's line.
    let below = serious(&warn("Tesla P100-PCIE-16GB", "6.0", "7.0", "12.0"));
    assert_eq!(below, ["arch.not_in_build"]);
    let f = judge(&warn("Tesla P100-PCIE-16GB", "6.0", "7.0", "12.0")).remove(0);
    assert!(f.explains.contains(&"observed.torch.gpu_too_old".to_owned()), "{:?}", f.explains);
    assert!(f.detail.contains("sm_70, above this GPU's sm_60"), "{}", f.detail);
    assert!(
        !below.contains(&"arch.capability_warning_harmless".to_owned())
            && !newer_major.iter().any(|i| i.ends_with("harmless"))
    );
}

/// Issue 27's Pascal case: a GTX 1080 under torch 2.11+cu128 (built from sm_75 up). The fix names
/// the build from the knowledge base, the newest line with machine code for sm_61 on a CUDA this
/// driver runs, with its index: not "a build compiled for sm_61".
#[test]
fn a_gpu_the_build_dropped_gets_the_newest_build_that_still_has_it() {
    let m = Machine::linux().gpu("NVIDIA GeForce GTX 1080", "6.1").driver("570.124.06", "12.8").torch("2.11.0+cu128");
    let f = m.finding("arch.not_in_build");
    let words = super::words(&f).unwrap();
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let want = kb
        .pytorch
        .recommend(
            &[gpu_doctor_model::ComputeCapability { major: 6, minor: 1 }],
            Some(gpu_doctor_model::CudaVersion::new(12, 8)),
            None,
        )
        .unwrap();
    assert!(want.arch.iter().any(|a| a.major == 6), "the kb's pick has Pascal SASS: {want:?}");
    assert!(
        words.contains(&format!("Install torch {} built for CUDA {}", want.torch, want.cuda))
            && words.contains(&format!(
                "pip install 'torch=={}.*' --index-url {}",
                want.torch,
                kb.pytorch.index_url(want.cuda)
            )),
        "{words}"
    );
    // The row it stands on, cited by its file's name, not the row's whole source.
    let first = want.source.split("; ").next().unwrap().split(" (").next().unwrap();
    let file = if first.starts_with("https://") { first.rsplit('/').next().unwrap() } else { first };
    assert!(words.contains(&format!("(as read from {file})")), "{words}");
}

/// A knowledge-base row read from a wheel is cited by the wheel's file name, without what was read in it.
#[test]
fn a_rows_source_is_cited_by_its_file() {
    let source = "https://files.pythonhosted.org/packages/e5/35/0c52d708144c2deb595cd22819a609f78fdd699b95ff6f0ebcd456e3c7c1/\
                  torch-2.6.0-cp312-cp312-manylinux1_x86_64.whl (Requires-Dist nvidia-cudnn-cu12==9.1.0.70); \
                  https://files.pythonhosted.org/x.whl (torch/lib/libtorch_cuda.so: its -gencode flags)";
    assert_eq!(super::super::arch::short_source(source), "torch-2.6.0-cp312-cp312-manylinux1_x86_64.whl");
    assert_eq!(super::super::arch::short_source("pytorch/pytorch:RELEASE.md"), "pytorch/pytorch:RELEASE.md");
}

/// Issue 27 item 6: a GPU and no driver (pasted text that did not show it). The fix names a build for
/// each driver level that changes the answer, newest driver first, each with its CUDA level, the
/// driver that reaches it and its command; every one carries machine code for the GPU.
#[test]
fn a_gpu_and_no_driver_gets_a_build_for_each_driver_level() {
    let m = Machine::linux().gpu("NVIDIA GeForce GTX 1080", "6.1").torch("2.11.0+cu128");
    let f = m.finding("arch.not_in_build");
    let words = super::words(&f).unwrap();
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let cc = gpu_doctor_model::ComputeCapability { major: 6, minor: 1 };
    let picks = super::super::arch::builds_by_driver(kb, &[cc]);
    assert!(picks.len() >= 2, "Pascal has builds for more than one CUDA major: {picks:?}");
    assert_eq!(
        picks.first().map(|v| (&v.torch, v.cuda)),
        kb.pytorch.recommend(&[cc], None, None).map(|v| (&v.torch, v.cuda)),
        "the first is the newest build of all"
    );
    assert!(words.contains("Which one depends on the driver"), "{words}");
    let mut at = 0;
    for v in &picks {
        assert!(v.arch.iter().any(|a| a.major == 6 && a.minor <= 1), "{v:?}");
        let driver = kb.cuda.full_driver(v.cuda, gpu_doctor_model::OsFamily::Linux).unwrap();
        let line = format!(
            "CUDA {} or newer (driver {driver} or newer): torch {}, pip install 'torch=={}.*' --index-url {}",
            v.cuda,
            v.torch,
            v.torch,
            kb.pytorch.index_url(v.cuda)
        );
        let found = words[at..].find(&line).unwrap_or_else(|| panic!("{line} in order in {words}"));
        at += found + line.len();
    }
    let majors: Vec<u32> = picks.iter().map(|v| v.cuda.major).collect();
    assert!(majors.windows(2).all(|w| w[0] >= w[1]), "newest driver first: {majors:?}");
}

/// Issue 27 item 6: a driver and no framework version. PyTorch's "driver too old" line with the
/// driver's level known but not the torch build: the fix names the newest torch line the knowledge base
/// lists for a CUDA this driver runs, with its command, and the driver the newest build needs.
#[test]
fn a_driver_too_old_for_an_unknown_torch_gets_the_newest_line_that_runs_there() {
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let message = || gpu_doctor_model::ObservedMessage {
        id: "torch.driver_too_old".into(),
        line: "RuntimeError: The NVIDIA driver on your system is too old (found version 11040).".into(),
        values: [("found_version".to_owned(), "11040".to_owned())].into_iter().collect(),
    };
    let mut m = Machine::pasted().gpu("NVIDIA GeForce RTX 3060", "8.6");
    m.0.messages.push(message());
    let f = m.finding("observed.torch.driver_too_old");
    let cc = gpu_doctor_model::ComputeCapability { major: 8, minor: 6 };
    let fits = kb.pytorch.recommend(&[cc], Some(gpu_doctor_model::CudaVersion::new(11, 4)), None).unwrap();
    assert!(fits.cuda <= gpu_doctor_model::CudaVersion::new(11, 4), "{fits:?}");
    let fix = f.fix.as_deref().unwrap_or_default();
    assert!(
        fix.contains(&format!(
            "Install torch {} built for CUDA {}, the newest line this driver (CUDA up to 11.4) runs: pip install \
             'torch=={}.*' --index-url {}",
            fits.torch,
            fits.cuda,
            fits.torch,
            kb.pytorch.index_url(fits.cuda)
        )),
        "{fix}"
    );
    let newest = kb.pytorch.recommend(&[cc], None, None).unwrap();
    let driver = kb.cuda.full_driver(newest.cuda, gpu_doctor_model::OsFamily::Linux).unwrap();
    assert!(fix.contains(&format!("needs driver {driver} or newer")), "{fix}");
    // With the torch build known, the fact-based rule judges it and this message adds no finding.
    let mut known = Machine::pasted().gpu("NVIDIA GeForce RTX 3060", "8.6").torch("2.9.0+cu130");
    known.0.messages.push(message());
    assert!(!known.ids().contains(&"observed.torch.driver_too_old".to_owned()), "{:?}", known.ids());
}

/// ONNX Runtime's own words: its warning about a requested provider lists the build's providers,
/// and the CPU package's list (CPU and Azure, from its 1.20.1 wheel run) is a CPU-only build, with a
/// GPU or without a GPU list; a list with CUDAExecutionProvider is not.
#[test]
fn onnxruntime_without_its_cuda_provider_is_a_cpu_only_build() {
    let ids = super::pasted_ids;
    // The onnxruntime 1.20.1 wheel from PyPI, run: a session asked for CUDA.
    let warned = "/tmp/site/onnxruntime/capi/onnxruntime_inference_collection.py:115: UserWarning: Specified provider \
                  'CUDAExecutionProvider' is not in available provider names.Available providers: \
                  'AzureExecutionProvider, CPUExecutionProvider'\n";
    assert_eq!(ids(warned), ["framework.cpu_only_build"]);
    let printed = ">>> onnxruntime.get_available_providers()\n['AzureExecutionProvider', 'CPUExecutionProvider']\n";
    assert_eq!(ids(printed), ["framework.cpu_only_build"]);
    // The GPU package's list: nothing to say.
    let gpu = ">>> onnxruntime.get_available_providers()\n['TensorrtExecutionProvider', 'CUDAExecutionProvider', \
               'CPUExecutionProvider']\n";
    assert!(ids(gpu).is_empty());
}

#[test]
fn onnxruntime_beside_onnxruntime_gpu_shadows_it_and_the_fix_keeps_the_gpu_package() {
    let both = rtx4090()
        .driver("570.26", "12.8")
        .framework("onnxruntime", "1.20.1", Some(gpu_doctor_model::FrameworkBuild::Cpu))
        .framework("onnxruntime-gpu", "1.20.1", Some(gpu_doctor_model::FrameworkBuild::Cuda { version: None }));
    assert_eq!(both.ids(), ["framework.cpu_only_build"]);
    let changes = both.changes("framework.cpu_only_build");
    assert!(
        changes.contains(&gpu_doctor_model::Change::Uninstall {
            packages: vec!["onnxruntime".into(), "onnxruntime-gpu".into()]
        }),
        "{changes:?}"
    );
    assert!(format!("{changes:?}").contains("onnxruntime-gpu\"], flags: [Reinstall]"), "{changes:?}");
    // The CPU package alone, nothing said of CUDA: a dependency that may need no GPU.
    let alone = rtx4090().driver("570.26", "12.8").framework(
        "onnxruntime",
        "1.20.1",
        Some(gpu_doctor_model::FrameworkBuild::Cpu),
    );
    assert!(alone.ids().is_empty());
    // The same on this machine with the deep probe's list of the CPU package's providers (a lent
    // H200's image, 2026-11-29: onnxruntime 1.30.0 beside torch 2.11.0+cu130): still no sign that
    // CUDA was asked of it. Beside onnxruntime-gpu the list says which one won.
    let cpu_providers = ["AzureExecutionProvider", "CPUExecutionProvider"];
    let listed = alone.deep_onnxruntime("1.30.0", &cpu_providers);
    assert!(listed.ids().is_empty(), "{:?}", listed.ids());
    let won = both.deep_onnxruntime("1.20.1", &cpu_providers);
    assert_eq!(won.ids(), ["framework.cpu_only_build"]);
    // No NVIDIA GPU on this machine: not this rule's business.
    let no_gpu = Machine::linux()
        .framework("onnxruntime", "1.20.1", Some(gpu_doctor_model::FrameworkBuild::Cpu))
        .framework("onnxruntime-gpu", "1.20.1", Some(gpu_doctor_model::FrameworkBuild::Cuda { version: None }));
    assert!(!no_gpu.ids().contains(&"framework.cpu_only_build".to_owned()));
}

/// PaddlePaddle's CPU build: its own message (place.cc's text) with no GPU list, or the CPU
/// package `paddlepaddle` on a machine with an NVIDIA GPU; the GPU package is no finding.
#[test]
fn paddlepaddles_cpu_build_is_named_from_its_message_or_its_package() {
    let ids = super::pasted_ids;
    assert_eq!(
        ids("Cannot use GPU because you have installed CPU version PaddlePaddle.\n"),
        ["framework.cpu_only_build"]
    );
    let cpu = rtx4090().driver("570.26", "12.8").framework(
        "paddlepaddle",
        "2.6.2",
        Some(gpu_doctor_model::FrameworkBuild::Cpu),
    );
    assert_eq!(cpu.ids(), ["framework.cpu_only_build"]);
    let changes = cpu.changes("framework.cpu_only_build");
    assert!(
        changes.contains(&gpu_doctor_model::Change::Uninstall { packages: vec!["paddlepaddle".into()] }),
        "{changes:?}"
    );
    let gpu = rtx4090().driver("570.26", "12.8").framework(
        "paddlepaddle-gpu",
        "2.6.2",
        Some(gpu_doctor_model::FrameworkBuild::Cuda { version: None }),
    );
    assert!(gpu.ids().is_empty());
    let no_gpu = Machine::linux().framework("paddlepaddle", "2.6.2", Some(gpu_doctor_model::FrameworkBuild::Cpu));
    assert!(!no_gpu.ids().contains(&"framework.cpu_only_build".to_owned()));
}

/// Both PaddlePaddle packages in one environment, as a package list shows them with no GPU list
/// (the pair from PaddlePaddle/PaddleClas#268's `pip list`): the GPU package says a GPU was wanted and
/// the CPU one shares its `paddle` folder (PaddlePaddle/Paddle#47344), so both are removed and the GPU
/// one installed again. The CPU package alone without a GPU list stays no finding (above).
#[test]
fn paddlepaddle_beside_paddlepaddle_gpu_is_the_cpu_build_shadowing_the_gpu_one() {
    let both = Machine::pasted()
        .framework("paddlepaddle", "1.8.4", Some(gpu_doctor_model::FrameworkBuild::Cpu))
        .framework("paddlepaddle-gpu", "1.8.4.post97", Some(gpu_doctor_model::FrameworkBuild::Cuda { version: None }));
    assert_eq!(both.ids(), ["framework.cpu_only_build"]);
    let changes = both.changes("framework.cpu_only_build");
    assert!(
        changes.contains(&gpu_doctor_model::Change::Uninstall {
            packages: vec!["paddlepaddle".into(), "paddlepaddle-gpu".into()]
        }),
        "{changes:?}"
    );
    // From a pasted `pip list` too.
    let pasted = super::pasted_ids(
        "Package              Version\n-------------------- ------------\npaddlepaddle         1.8.4\n\
         paddlepaddle-gpu     1.8.4.post97\n",
    );
    assert_eq!(pasted, ["framework.cpu_only_build"]);
}

/// ollama's runner list (runners/common.go's `Dynamic LLM libraries` line) with only CPU runners is a
/// build without GPU runners; the release build's list, with cuda runners, is not. The lines are from
/// public logs other than the corpus case's thread (a Colab notebook's and a Docker guide's).
#[test]
fn ollama_with_only_cpu_runners_is_a_cpu_only_build() {
    let ids = super::pasted_ids;
    let cpu = "time=2026-06-04T15:23:45.234Z level=INFO source=common.go:149 msg=\"Dynamic LLM libraries\" \
               runners=\"[cpu cpu_avx cpu_avx2]\"\n";
    assert!(ids(cpu).contains(&"framework.cpu_only_build".to_owned()), "{:?}", ids(cpu));
    let release = "time=2024-12-02T02:20:21.360Z level=INFO source=common.go:49 msg=\"Dynamic LLM libraries\" \
                   runners=\"[cpu cpu_avx cpu_avx2 cuda_v11 cuda_v12]\"\n";
    assert!(!ids(release).contains(&"framework.cpu_only_build".to_owned()));
    let metal = "time=2024-11-21T00:52:25.492+07:00 level=INFO source=common.go:49 msg=\"Dynamic LLM libraries\" runners=[metal]\n";
    assert!(!ids(metal).contains(&"framework.cpu_only_build".to_owned()));
}

/// xFormers' warning names the torch installed (baichuan-inc/Baichuan2#248, verbatim: built for 2.1.0+cu121,
/// `you have 2.1.0+cpu`): a CPU torch under an extension built for CUDA is the CPU-only build, and the warning
/// line is its evidence, not a finding of its own. A torch of another CUDA build is no CPU finding
/// (Engineer-of-Stuff/stable-diffusion-paperspace#111's line).
#[test]
fn xformers_warning_names_a_cpu_torch() {
    let ids = super::pasted_ids;
    let warning = "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n    \
                   PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.1.0+cpu)\n    Python  3.8.10 (you have 3.8.0)\n";
    assert_eq!(ids(warning), ["framework.cpu_only_build"]);
    let other = "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n\
                 PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.0.1+cu118)\n";
    let found = ids(other);
    assert!(!found.contains(&"framework.cpu_only_build".to_owned()), "{found:?}");
    assert!(found.contains(&"observed.xformers.built_for_other_torch".to_owned()), "{found:?}");
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let snap = gpu_doctor_probes::parse::paste::read_pasted(other, kb).unwrap();
    let findings = crate::diagnose::diagnose(&snap, kb);
    let f = findings.iter().find(|f| f.id == "observed.xformers.built_for_other_torch").expect("the finding");
    assert!(f.fix.as_deref().is_some_and(|x| x.contains("xformers") && x.contains("--index-url")), "{f:#?}");
}

/// A known message that a rule's finding explains gets no finding of its own: the rule's finding
/// names it in `explains` and cites its line once, so the report still says the line was read.
#[test]
fn a_known_message_a_rule_explains_is_named_by_that_rule() {
    let line =
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.";
    let mut m =
        Machine::linux().gpu("NVIDIA GeForce RTX 5090", "12.0").driver("570.124.04", "12.8").torch("2.6.0+cu126");
    m.0.messages.push(gpu_doctor_model::ObservedMessage {
        id: "torch.sm_not_compatible".into(),
        line: line.into(),
        values: Default::default(),
    });
    assert_eq!(m.ids(), vec!["arch.not_in_build".to_owned()]);
    let f = m.finding("arch.not_in_build");
    assert_eq!(f.explains, ["observed.torch.sm_not_compatible"]);
    assert_eq!(f.evidence.iter().filter(|e| e.contains(line)).count(), 1, "{:?}", f.evidence);
    // Without the rule's facts (no GPU known), the line is its own finding, which explains nothing.
    let mut m = Machine::pasted();
    m.0.messages.push(gpu_doctor_model::ObservedMessage {
        id: "torch.sm_not_compatible".into(),
        line: line.into(),
        values: Default::default(),
    });
    assert_eq!(m.ids(), vec!["observed.torch.sm_not_compatible".to_owned()]);
    assert!(m.finding("observed.torch.sm_not_compatible").explains.is_empty());
}

/// CuPy's own report of the driver's CUDA level (`cupy.show_config()`'s `CUDA Driver Version`, from
/// `driverGetVersion()`) judges its build where no driver version was pasted (cupy/cupy#5095: "Using
/// driver from 11.2 and runtime from 11.3 is not going to work").
#[test]
fn cupys_driver_level_judges_its_build() {
    let config = "CuPy Version                 : 9.0.0rc1\n\
                  CUDA Root                    : /usr/local/cuda-11.3\n\
                  CUDA Build Version           : 11030\n\
                  CUDA Driver Version          : {driver}\n\
                  CUDA Runtime Version         : 11030\n\
                  Device 0 Name                : GeForce RTX 2080 Ti\n\
                  Device 0 Compute Capability  : 75\n";
    let findings = super::pasted_findings(&config.replace("{driver}", "11020"));
    let f = findings.iter().find(|f| f.id == "driver.minor_version_compat").unwrap();
    assert!(f.evidence.iter().any(|e| e.contains("driverGetVersion() says (11020)")), "{f:#?}");
    assert!(f.evidence.iter().any(|e| e.contains("cupy 9.0.0rc1 (CUDA 11.3 build)")), "{f:#?}");
    assert_eq!(super::pasted_ids(&config.replace("{driver}", "11030")), Vec::<String>::new());
    assert_eq!(super::pasted_ids(&config.replace("{driver}", "10020")), vec!["driver.too_old_for_runtime".to_owned()]);
}

/// A torch build whose CUDA predates every architecture of the GPU's major has no machine code PyTorch counts
/// for it (`_check_cubins` asks for an `sm_` of the GPU's major), even before a kernel fails; where an
/// architecture of that major came earlier, the build may carry it, and only the symptom decides.
#[test]
fn a_build_older_than_every_architecture_of_the_gpus_major_is_not_in_build() {
    let ampere = |torch: &str| Machine::linux().gpu("NVIDIA GeForce RTX 3080 Ti", "8.6").torch(torch);
    let f = ampere("1.5.1+cu101").finding("arch.not_in_build");
    assert!(f.detail.contains("any GPU of compute capability 8.x (CUDA 11.0 is the first that can)"), "{f:#?}");
    assert!(f.evidence.iter().any(|e| e.contains("no architecture of compute capability 8.x")), "{f:#?}");
    // CUDA 11.0 builds sm_80, whose machine code runs on an 8.6: no finding without a failed kernel.
    assert!(!ampere("1.7.1+cu110").ids().contains(&"arch.not_in_build".to_owned()));
    // A Turing GPU (7.5, first built by CUDA 10.0) under a CUDA 10.1 build: covered.
    let turing = Machine::linux().gpu("NVIDIA GeForce RTX 2080 Ti", "7.5").torch("1.5.1+cu101");
    assert!(!turing.ids().contains(&"arch.not_in_build".to_owned()));
}

/// An NVIDIA CUDA image named in the text against the host's driver (NVIDIA/hpc-container-maker#239: a
/// Singularity container from nvidia/cuda:10.2 on driver 418.87, error 35): CUDA 10 had no minor-version
/// compatibility, so 10.2 needs 440.33; the old driver, not a missing `--nv`, is the cause. An image the driver
/// runs, or one of a newer minor of the driver's major, is not this finding.
#[test]
fn a_cuda_image_newer_than_the_driver_needs_the_driver() {
    let text = |image: &str, driver: &str| {
        format!(
            "ERROR: CUDA driver version is insufficient for CUDA runtime version in /var/tmp/relion/src/ml_optimiser.cpp at line 1143 (error-code 35)\n\
             Yes, I'm running a singularity container for relion.\n\
             The version of the driver installed on the compute nodes is {driver}.\n\
             I built my container from nvidia/cuda:{image}-devel-ubuntu18.04.\n"
        )
    };
    let findings = super::pasted_findings(&text("10.2", "418.87.00"));
    let ids: Vec<&str> = findings.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["driver.too_old_for_runtime"], "{findings:#?}");
    assert!(findings[0].summary.contains("nvidia/cuda:10.2-devel-ubuntu18.04 needs"), "{}", findings[0].summary);
    assert!(findings[0].detail.contains("440.33"), "{}", findings[0].detail);
    assert!(!super::pasted_ids(&text("10.1", "418.87.00")).contains(&"driver.too_old_for_runtime".to_owned()));
    assert!(!super::pasted_ids(&text("12.4", "535.104.05")).contains(&"driver.too_old_for_runtime".to_owned()));
}

/// Native Windows named in words and TensorFlow asked for on the GPU without its version
/// (tensorflow/tensorflow#60206): the native-Windows finding, with the last release that had a GPU build; not
/// where the text shows WSL, nor where it gives TensorFlow's version (the version's own rule judges that).
#[test]
fn tensorflow_on_the_gpu_asked_for_on_windows_in_words_is_the_native_windows_finding() {
    let id = "framework.tensorflow_windows_native_no_gpu".to_owned();
    let text = "I have Cuda 12.1 installed along with Cudnn.\nI can't get Tensorflow to detect my gpu in Python.\n\
                I have Windows 11.\n";
    let found = super::pasted_findings(text);
    let f = found.iter().find(|f| f.id == id).unwrap_or_else(|| panic!("{found:#?}"));
    assert!(f.fix.as_deref().is_some_and(|x| x.contains("WSL2") && x.contains("tensorflow==2.10")), "{f:#?}");
    assert!(!super::pasted_ids(&format!("{text}inside WSL2\n")).contains(&id));
    assert!(!super::pasted_ids("I can't get Tensorflow to detect my gpu in Python.\n").contains(&id));
}

/// torch's prints saying its build without its version (`torch.version.cuda` printed None; opendatalab/MinerU#240's
/// REPL, verbatim lines) are a CPU torch all the same.
#[test]
fn a_cpu_torch_from_its_prints_without_a_version_is_a_cpu_build() {
    let repl = ">>> import torch\n>>> print(torch.cuda.is_available()) \nFalse\n>>> print(torch.version.cuda) \nNone\n";
    assert!(super::pasted_ids(repl).contains(&"framework.cpu_only_build".to_owned()), "{:?}", super::pasted_ids(repl));
    let cuda = ">>> import torch\n>>> print(torch.cuda.is_available()) \nFalse\n>>> print(torch.version.cuda) \n12.1\n";
    assert!(!super::pasted_ids(cuda).contains(&"framework.cpu_only_build".to_owned()));
}
