//! Builds inferred where the text is indirect, and what to paste next, on real samples.

use super::*;
use crate::parse::paste::{NVIDIA_SMI, PYTHON_TORCH, next_paste};
use gpu_doctor_kb::Kb;
use gpu_doctor_model::OsFamily;

fn torch_build(s: &Snapshot) -> FrameworkBuild {
    env(s).frameworks.iter().find(|f| f.name == "torch").unwrap().build.clone()
}

/// Old collect_env printed a `None` torch.version.cuda as `Could not collect`: with a GPU listed
/// and CUDA not available, that is a CPU build.
#[test]
fn could_not_collect_with_a_gpu_and_no_cuda_is_a_cpu_build() {
    let s = read(COLLECT_ENV_WINDOWS_PYPI);
    assert_eq!(torch_build(&s), FrameworkBuild::Cpu);
    let ids = gpu_doctor_judge::diagnose::diagnose(&s, kb()).into_iter().map(|f| f.id).collect::<Vec<_>>();
    assert!(ids.iter().any(|i| i == "framework.cpu_only_build"), "{ids:?}");
    // With CUDA available neither that field nor the Windows wheel's missing tag makes it a CPU build.
    let available = COLLECT_ENV_WINDOWS_PYPI.replace("Is CUDA available: False", "Is CUDA available: True");
    assert_eq!(torch_build(&read(&available)), FrameworkBuild::Unknown);
}

/// Without the build line, the PyPI wheel on Windows (no `+cuXYZ`) is still a CPU build; the same
/// text from Linux, where PyPI's wheel is a CUDA build, leaves the build unknown.
#[test]
fn windows_torch_from_pypi_without_a_local_tag_is_a_cpu_build() {
    let without: String = COLLECT_ENV_WINDOWS_PYPI
        .lines()
        .filter(|l| !l.starts_with("CUDA used to build"))
        .map(|l| format!("{l}\n"))
        .collect();
    let s = read(&without);
    assert_eq!(s.platform.platform.os, OsFamily::Windows);
    assert_eq!(torch_build(&s), FrameworkBuild::Cpu);
    let linux = without.replace("OS: Microsoft Windows 11 Education", "OS: Ubuntu 22.04.4 LTS (x86_64)").replace(
        "Python platform: Windows-10-10.0.22631-SP0",
        "Python platform: Linux-5.15.0-97-generic-x86_64-with-glibc2.35",
    );
    assert_eq!(torch_build(&read(&linux)), FrameworkBuild::Unknown);
}

/// zai-org/ChatGLM3#100: one error line that needs the driver asks for nvidia-smi; with the
/// driver there, a torch error whose build is unknown asks for the python line.
/// After a container's GPU error the paste to ask for is the container runtime's view of the
/// driver (NVIDIA/nvidia-docker#1442's line, verbatim), not a framework's.
#[test]
fn a_container_error_asks_for_nvidia_container_cli_info() {
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let text = "docker: Error response from daemon: OCI runtime create failed: container_linux.go:370: starting container process caused: process_linux.go:459: container init caused: Running hook #0:: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: requirement error: unsatisfied condition: cuda>=11.0, please update your driver to a newer version, or use an earlier cuda container: unknown.\n";
    let s = read(text);
    let findings = gpu_doctor_judge::diagnose::diagnose(&s, kb);
    assert_eq!(crate::parse::paste::next_paste(&s, &findings), Some(crate::parse::paste::CONTAINER_CLI_INFO));
}

/// Where nvidia-smi itself failed in the text (not found: cnstark/pytorch-docker#19's line; NVML unable to reach the
/// driver), asking for its output again settles nothing: the bus and the bound driver (`lspci -k`) do.
#[test]
fn after_nvidia_smi_failed_the_next_paste_is_the_bus() {
    let kb = Kb::get().unwrap();
    for text in [
        "\u{4f60}\u{597d}\u{ff0c}\u{5b89}\u{88c5}\u{5b8c}\u{4e4b}\u{540e} `nvcc -V`\u{663e}\u{793a}\u{4e86} cuda \u{7248}\u{672c}\u{ff0c}\u{4f46}\u{662f} `nvidia-smi` \u{547d}\u{4ee4}\u{8fd4}\u{56de}\u{9519}\u{8bef} command not found\n",
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n",
    ] {
        let s = read(text);
        let findings = gpu_doctor_judge::diagnose::diagnose(&s, kb);
        assert_eq!(next_paste(&s, &findings), Some(crate::parse::paste::LSPCI_K), "{text}");
    }
}

#[test]
fn what_to_paste_next() {
    let kb = Kb::get().unwrap();
    let line = "RuntimeError: The NVIDIA driver on your system is too old (found version 11060). Please update your \
                GPU driver by downloading and installing a new version from the URL: \
                http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a \
                PyTorch version that has been compiled with your version of the CUDA driver.";
    let s = read(line);
    assert_eq!(next_paste(&s, &gpu_doctor_judge::diagnose::diagnose(&s, kb)), Some(NVIDIA_SMI));
    let s = read(COLLECT_ENV_WINDOWS_PYPI);
    assert_eq!(next_paste(&s, &gpu_doctor_judge::diagnose::diagnose(&s, kb)), None, "driver, GPU and build all shown");
    assert_eq!(next_paste(&s, &[]), None, "nothing to settle");
    // Two A100s in MIG mode as `nvidia-smi -L` lists them (the format of DataDog/datadog-agent#33120's capture),
    // no driver shown: nvidia-smi, not the toolkit folders, settles the MIG finding.
    let s = read(
        "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-7fdaf0a5-179b-f636-d15d-daf243e3ff16)\n  \
         MIG 3g.40gb     Device  0: (UUID: MIG-feb88891-0321-5fef-9c87-d4af3b54259e)\n\
         GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-8a1e2f3b-179b-f636-d15d-daf243e3ff17)\n  \
         MIG 3g.40gb     Device  0: (UUID: MIG-a25704ba-3a06-5299-a795-fd7cf4d13973)\n",
    );
    let findings = gpu_doctor_judge::diagnose::diagnose(&s, kb);
    assert!(findings.iter().any(|f| f.id == "env.mig_visible_devices_unset"), "{findings:#?}");
    assert_eq!(next_paste(&s, &findings), Some(NVIDIA_SMI));
    // PaddlePaddle's CPU build (its place.cc message, assets/compat/errors.toml): PyTorch's command
    // would not settle it, the GPU list does.
    let s = read("Cannot use GPU because you have installed CPU version PaddlePaddle.\n");
    let findings = gpu_doctor_judge::diagnose::diagnose(&s, kb);
    assert!(findings.iter().any(|f| f.id == "framework.cpu_only_build"), "{findings:#?}");
    assert_eq!(next_paste(&s, &findings), Some(NVIDIA_SMI));
    // PaddlePaddle's own assertion, a catalogue row (PaddlePaddle/Paddle#24581): its finding names no
    // PyTorch, so PyTorch's command is not asked for.
    let s = read("    \"Not compiled with CUDA\"\nAssertionError: Not compiled with CUDA\n");
    let findings = gpu_doctor_judge::diagnose::diagnose(&s, kb);
    assert!(findings.iter().any(|f| f.id == "observed.paddle.not_compiled_with_cuda"), "{findings:#?}");
    assert_eq!(next_paste(&s, &findings), Some(NVIDIA_SMI));
}

/// The issue's own example: a CPU build that says CUDA is not available gives no finding while the
/// GPUs are unknown, so the paste asks for nvidia-smi; with a GPU listed it asks for nothing.
#[test]
fn a_torch_without_gpu_asks_for_nvidia_smi() {
    let kb = Kb::get().unwrap();
    let s = read(">>> torch.__version__\n'2.5.1+cpu'\n>>> torch.cuda.is_available()\nFalse\n");
    assert_eq!(next_paste(&s, &gpu_doctor_judge::diagnose::diagnose(&s, kb)), Some(NVIDIA_SMI));
    let s = read(COLLECT_ENV_WINDOWS_CPU);
    assert_eq!(next_paste(&s, &gpu_doctor_judge::diagnose::diagnose(&s, kb)), None, "the GPU and driver are listed");
}

/// thuml/Autoformer#25: CUDA_VISIBLE_DEVICES=1, the one GPU said only in prose. The variable is
/// judged against the GPU list, so the paste asks for nvidia-smi; with the list shown it does not.
#[test]
fn cuda_visible_devices_without_the_gpus_asks_for_nvidia_smi() {
    let kb = Kb::get().unwrap();
    let text = "I noticed though that on systems with 1 GPU, by default the scripts train on CPU. This is due to the \
                bash files containing\n\n`export CUDA_VISIBLE_DEVICES=1`\n";
    let s = read(text);
    assert_eq!(next_paste(&s, &gpu_doctor_judge::diagnose::diagnose(&s, kb)), Some(NVIDIA_SMI));
    let s = read(VISIBLE_DEVICES);
    assert_ne!(next_paste(&s, &gpu_doctor_judge::diagnose::diagnose(&s, kb)), Some(NVIDIA_SMI), "the GPUs are listed");
}

/// Grace9994/CoMoSVC#6: CUDA_VISIBLE_DEVICES='1' and "No CUDA GPUs are available" name the variable as the
/// likely cause, and the paste asks for nvidia-smi, whose GPU list settles it.
#[test]
fn cuda_visible_devices_past_0_with_no_gpu_seen_is_named_and_asks_for_nvidia_smi() {
    let kb = Kb::get().unwrap();
    let text = "If not comment out the line `os.environ[\"CUDA_VISIBLE_DEVICES\"]='1'` in train.py, training will \
                encounter an error: `RuntimeError: No CUDA GPUs are available`.";
    let s = read(text);
    let findings = gpu_doctor_judge::diagnose::diagnose(&s, kb);
    assert!(findings.iter().any(|f| f.id == "env.cuda_visible_devices_hides_all"), "{findings:#?}");
    assert_eq!(next_paste(&s, &findings), Some(NVIDIA_SMI));
    // CUDA's own "no device" line (cuda.no_device) says the same as PyTorch's.
    let s = read(
        "os.environ[\"CUDA_VISIBLE_DEVICES\"]='1'\nRuntimeError: CUDA error: no CUDA-capable device is detected\n",
    );
    let findings = gpu_doctor_judge::diagnose::diagnose(&s, kb);
    assert!(findings.iter().any(|f| f.id == "env.cuda_visible_devices_hides_all"), "{findings:#?}");
}

/// The python line offered is one the paste reader reads back.
#[test]
fn the_offered_python_line_is_read_back() {
    let text = format!("$ {}\n2.2.2+cpu None False\n", PYTHON_TORCH.command);
    let s = read(&text);
    assert_eq!(torch_build(&s), FrameworkBuild::Cpu);
    let torch = env(&s).deep.as_ref().unwrap().value().unwrap().torch.clone().unwrap();
    assert_eq!((torch.cuda, torch.cuda_available), (None, Some(false)));
}

/// The tools' lines together: GPUs from llama.cpp and ollama with their capability, nvtop's
/// current links, ptxas's banner (its release line is read as the toolkit, as nvcc's is).
#[test]
fn tool_lines_from_threads() {
    let s = read(TOOL_LINES);
    assert_eq!(
        formats(&s),
        ["llama.cpp device list", "ollama inference compute", "nvtop", "ptxas --version", "nvcc --version"]
    );
    let g = gpus(&s);
    let rtx3090: Vec<_> = g.iter().filter(|g| g.name.as_deref() == Some("NVIDIA GeForce RTX 3090")).collect();
    // Framework facts name a product: two devices of one name give that name its capability.
    assert!(!rtx3090.is_empty(), "{g:?}");
    assert!(rtx3090.iter().all(|g| g.compute_capability == "8.6".parse().ok()));
    let ti = g.iter().find(|g| g.name.as_deref() == Some("NVIDIA GeForce RTX 2080 Ti")).unwrap();
    assert_eq!(ti.compute_capability, "7.5".parse().ok());
    let nvtop: Vec<_> = g.iter().filter(|g| g.pcie_gen_current.is_some()).map(|g| g.pcie_gen_current).collect();
    assert_eq!(nvtop, [Some(3), Some(1)]);
}

/// vLLM's collect_env pads each name before its colon; it reads like PyTorch's.
#[test]
fn vllm_collect_env_with_padded_names() {
    let s = read(COLLECT_ENV_VLLM);
    assert_eq!(formats(&s), ["collect_env"]);
    assert_eq!(torch_build(&s), FrameworkBuild::Cuda { version: Some("12.8".to_owned()) });
    let torch = env(&s).deep.as_ref().unwrap().value().unwrap().torch.clone().unwrap();
    assert_eq!(torch.cuda_available, Some(true));
    assert_eq!(gpus(&s).len(), 5);
    assert_eq!(s.platform.platform.os, OsFamily::Linux);
}

/// mlverse/torch#336: nvidia-smi's header line pasted alone, between `...` lines, still gives the
/// driver and the CUDA level it supports; with nvcc beside it, the harmless difference is explained.
#[test]
fn nvidia_smi_header_line_alone() {
    let text = "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2019 NVIDIA Corporation\n\
                Built on Sun_Jul_28_19:07:16_PDT_2019\nCuda compilation tools, release 10.1, V10.1.243\n...    \n\
                | NVIDIA-SMI 450.66       Driver Version: 450.66       CUDA Version: 11.0     |\n....\n";
    let s = read(text);
    let d = s.driver.value().unwrap();
    assert_eq!((d.version.as_str(), d.cuda_version), ("450.66", Some(gpu_doctor_model::CudaVersion::new(11, 0))));
    let ids: Vec<String> = gpu_doctor_judge::diagnose::diagnose(&s, kb()).into_iter().map(|f| f.id).collect();
    assert!(ids.iter().any(|i| i == "toolkits.versions_explained"), "{ids:?}");
    // pytorch/pytorch#85332: the header run into a label, no table borders.
    let s = read("nvidia-smi:NVIDIA-SMI 450.51.05    Driver Version: 450.51.05    CUDA Version: 11.0 \n");
    assert_eq!(formats(&s), ["nvidia-smi header"]);
    let d = s.driver.value().unwrap();
    assert_eq!((d.version.as_str(), d.cuda_version), ("450.51.05", Some(gpu_doctor_model::CudaVersion::new(11, 0))));
}

/// Issue 27's R610 example (github.com/sgl-project/sglang/issues/27487): the header line alone, with
/// R610's `KMD Version` and `CUDA UMD Version`, gives the driver and its CUDA level; so does R610's
/// `-q` header, whose old labels carry a deprecation note (github.com/PrismML-Eng/Bonsai-demo/pull/122).
#[test]
fn r610_header_line_and_q_header_give_the_driver_and_its_cuda_level() {
    let s = read("| NVIDIA-SMI 610.43.02              KMD Version: 610.43.02     CUDA UMD Version: 13.3     |\n");
    assert_eq!(formats(&s), ["nvidia-smi table"]);
    let d = s.driver.value().unwrap();
    assert_eq!((d.version.as_str(), d.cuda_version), ("610.43.02", Some(gpu_doctor_model::CudaVersion::new(13, 3))));
    // Run into a label, no table borders: the header reader alone.
    let s = read("nvidia-smi:NVIDIA-SMI 610.43.03    KMD Version: 610.43.03    CUDA UMD Version: 13.3 \n");
    assert_eq!(formats(&s), ["nvidia-smi header"]);
    let d = s.driver.value().unwrap();
    assert_eq!((d.version.as_str(), d.cuda_version), ("610.43.03", Some(gpu_doctor_model::CudaVersion::new(13, 3))));
    let q = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_q/r610_header_assembled.txt"));
    let d = read(q).driver.value().cloned().unwrap();
    assert_eq!((d.version.as_str(), d.cuda_version), ("610.43.02", Some(gpu_doctor_model::CudaVersion::new(13, 3))));
}

/// `nvidia-smi --version`, verbatim from utkuozdemir/nvidia_gpu_exporter's captures
/// (`internal/captures/linux-x86_64__nvidia-geforce-rtx-4080-super__595.71.05.txt` at 0eee0d31 and
/// `…rtx-2080-super__610.57.04.txt` at 5dcd6ec1): before R610 `DRIVER version` and `CUDA Version`
/// carry the values; from R610 they say `Deprecated, see …` and `KMD version` / `CUDA UMD version`
/// follow. Both give the driver and its CUDA level, read as `nvidia-smi --version`.
#[test]
fn nvidia_smi_version_before_and_from_r610_gives_the_driver_and_its_cuda_level() {
    let old = "NVIDIA-SMI version  : 595.71.05\nNVML version        : 595.71\nDRIVER version      : 595.71.05\n\
               CUDA Version        : 13.2\n";
    let r610 = "NVIDIA-SMI version  : 610.57.04\nNVML version        : 610.57\n\
                DRIVER version      : Deprecated, see \"KMD version\" instead\n\
                CUDA version        : Deprecated, see \"CUDA UMD version\" instead\n\
                KMD version         : 610.57.04\nCUDA UMD version    : 13.3\n";
    for (text, driver, cuda) in [(old, "595.71.05", (13, 2)), (r610, "610.57.04", (13, 3))] {
        let s = read(text);
        assert_eq!(formats(&s), ["nvidia-smi --version"], "{text}");
        let d = s.driver.value().unwrap();
        assert_eq!(
            (d.version.as_str(), d.cuda_version),
            (driver, Some(gpu_doctor_model::CudaVersion::new(cuda.0, cuda.1)))
        );
    }
    // Pasted as comments (a `# ` before each line), and under WSL, where the NVIDIA-SMI version is
    // Linux's and the driver Windows' (580.82.07 / 581.42, as a public setup note printed them):
    // the driver's own line counts.
    let wsl = "# NVIDIA-SMI version  : 580.82.07\n# NVML version        : 580.95\n# DRIVER version      : 581.42\n\
               # CUDA Version        : 13.0\n";
    assert_eq!(read(wsl).driver.value().map(|d| d.version.to_string()).as_deref(), Some("581.42"));
    // Only the first line, or deprecated values alone: no driver.
    assert!(read("NVIDIA-SMI version  : 610.57.04\n").driver.value().is_none());
    let deprecated = "NVIDIA-SMI version  : 610.57.04\nDRIVER version      : Deprecated, see \"KMD version\" instead\n";
    assert!(read(deprecated).driver.value().is_none());
}

/// `nvidia-container-cli info` pasted from a host (the probes' own sample,
/// `tests/data/containers/nvidia-container-cli-info-1060.txt`) gives the driver and its CUDA level.
#[test]
fn nvidia_container_cli_info_gives_the_driver_and_its_cuda_level() {
    let text =
        include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/containers/nvidia-container-cli-info-1060.txt"));
    let s = read(text);
    assert_eq!(formats(&s), ["nvidia-container-cli info"]);
    let d = s.driver.value().unwrap();
    assert_eq!(
        (d.version.to_string().as_str(), d.cuda_version),
        ("435.21", Some(gpu_doctor_model::CudaVersion::new(10, 1)))
    );
}

/// R610's `--query-gpu` has a `kmd_version` field beside `driver_version` (its `--help-query-gpu`:
/// `driver_version` "Deprecated; use \"kmd_version\" instead"): a query of `kmd_version` gives the
/// driver. The cells are the `timestamp`, `kmd_version`, `name` and `pci.bus_id` cells of the RTX
/// 2080 SUPER capture cited above, verbatim.
#[test]
fn r610_csv_reads_the_driver_from_kmd_version() {
    let csv = "timestamp, kmd_version, name, pci.bus_id\n\
               2026/08/12 21:53:45.370, 610.57.04, NVIDIA GeForce RTX 2080 SUPER, 00000000:0C:00.0\n";
    let s = read(csv);
    assert_eq!(formats(&s), ["nvidia-smi CSV"]);
    assert_eq!(s.driver.value().map(|d| d.version.to_string()).as_deref(), Some("610.57.04"));
}

/// A `--query-gpu` CSV of the GPU's own link fields (`pcie.link.gen.gpucurrent`,
/// `pcie.link.gen.gpumax`; nvidia-smi --help-query-gpu: the current generation "may be reduced when
/// the GPU is not in use") is a GPU query: an idle GPU at Gen1 of its Gen4 is the idle-link note,
/// not a fault, and a `pstate` column beside them does not keep the header from being read.
#[test]
fn a_csv_of_the_gpus_own_link_fields_reads_the_link() {
    let csv = "pstate, pcie.link.gen.gpucurrent, pcie.link.gen.gpumax\nP8, 1, 4\n";
    let s = read(csv);
    assert_eq!(formats(&s), ["nvidia-smi CSV"]);
    let g = &s.gpus.value().unwrap()[0];
    assert_eq!((g.pcie_gen_current, g.pcie_gen_max), (Some(1), Some(4)));
    let findings = gpu_doctor_judge::diagnose::diagnose(&s, kb());
    assert!(findings.iter().any(|f| f.id == "link.below_max_idle"), "{findings:?}");
    assert!(findings.iter().all(|f| f.severity != gpu_doctor_model::Severity::Error));
    // Printed by a loop (`-l 1`) with no column that tells GPUs apart: the rows are samples of one
    // GPU, not four GPUs; with an index column they stay GPUs.
    let looped = format!(
        "$ nvidia-smi --query-gpu=\"pstate,pcie.link.gen.gpucurrent,pcie.link.gen.gpumax\" --format=csv -l 1\n{csv}P0, 3, 4\nP8, 1, 4\nP0, 3, 4\n"
    );
    assert_eq!(read(&looped).gpus.value().map(Vec::len), Some(1));
    let indexed = "$ nvidia-smi --query-gpu=index,pcie.link.gen.gpucurrent,pcie.link.gen.gpumax --format=csv -l 1\n\
                   index, pcie.link.gen.gpucurrent, pcie.link.gen.gpumax\n0, 1, 4\n1, 1, 4\n";
    assert_eq!(read(indexed).gpus.value().map(Vec::len), Some(2));
}

/// tensorflow/tensorflow#60156's issue form (answers verbatim): TensorFlow 2.11 on Windows 11 is
/// read from the form, and names the native-Windows finding although the form names no GPU.
#[test]
fn a_tensorflow_issue_form_on_windows_names_the_native_windows_finding() {
    let form = "### Tensorflow Version\n\n2.11.0\n\n### OS Platform and Distribution\n\nWindows 11\n\n\
                ### Python version\n\n3.9.10\n\n### CUDA/cuDNN version\n\n11.6r11.6/8.6\n";
    let s = read(form);
    assert_eq!(s.platform.platform.os, OsFamily::Windows);
    assert_eq!(framework(&s, "tensorflow").version, "2.11.0");
    assert_eq!(env(&s).python_version.as_deref(), Some("3.9.10"));
    let ids = gpu_doctor_judge::diagnose::diagnose(&s, kb()).into_iter().map(|f| f.id).collect::<Vec<_>>();
    assert!(ids.iter().any(|i| i == "framework.tensorflow_windows_native_no_gpu"), "{ids:?}");
    // The same form from Linux is no finding; a form cut after its label reads nothing from it.
    let linux = read(&form.replace("Windows 11", "Ubuntu 22.04"));
    assert!(
        gpu_doctor_judge::diagnose::diagnose(&linux, kb())
            .iter()
            .all(|f| f.id != "framework.tensorflow_windows_native_no_gpu")
    );
    assert!(unrecognised("### Tensorflow Version\n"));
}

/// The variable's value is not in the text, but what is says where to look. mazurowski-lab/finetune-SAM#18 (the
/// reporter's words, the traceback cut to its last line): PyTorch saw the GPUs in a shell and the project's
/// launch script counted none; LiYingwei/ShapeTextureDebiasedTraining#12: `is_available()` "shows `true`" in
/// prose. A script run alone names the script to search, also where a sentence quotes its command.
#[test]
fn no_gpus_for_the_program_alone_points_at_its_launch_script() {
    let hides = |text: &str| {
        let findings = gpu_doctor_judge::diagnose::diagnose(&read(text), kb());
        findings.into_iter().find(|f| f.id == "env.cuda_visible_devices_hides_all")
    };
    let sam = "I am getting the following error when I try to run train_singlegpu_demo.sh\n\
               RuntimeError: No CUDA GPUs are available\n\n\
               I have two GPUs on the machine and torch.cuda.is_available outputs True.  How do I fix this error?\n";
    let f = hides(sam).expect("PyTorch saw the GPUs elsewhere");
    assert!(f.evidence.iter().any(|e| e.contains("is_available() is True")), "{f:#?}");
    assert!(format!("{:?}", f.plan).contains("value: \"0,1\""), "the two GPUs said: {:?}", f.plan);
    let shape = "When I run `torch.cuda.is_available()` it shows `true`. However, in this project when I run \
                 `python imagenet.py -a resnet50`, it returns `RuntimeError: No CUDA GPUs are available`\n";
    assert!(hides(shape).is_some());
    let script = "$ bash scripts/train.sh\nTraceback (most recent call last):\n\
                  RuntimeError: No CUDA GPUs are available\n";
    let s = read(script);
    assert_eq!(s.env.launch_scripts, ["scripts/train.sh"]);
    let f = hides(script).expect("started by a script");
    let plan = format!("{:?}", f.plan);
    assert!(plan.contains("grep -n CUDA_VISIBLE_DEVICES scripts/train.sh"), "{plan}");
    // The command quoted as inline code in a numbered step (thuml/Time-Series-Library#698, in Chinese: "run the
    // script:").
    let step = "3. \u{8fd0}\u{884c}\u{811a}\u{672c}\u{ff1a}`bash ./scripts/long_term_forecast/ETT_script/TimesNet_ETTh1.sh`\n\
                RuntimeError: No CUDA GPUs are available\n";
    assert_eq!(read(step).env.launch_scripts, ["./scripts/long_term_forecast/ETT_script/TimesNet_ETTh1.sh"]);
    assert!(hides(step).is_some());
    // The message alone is the variable at a warning only (the likeliest cause, none shown); a script run
    // without it is not the variable.
    let alone = hides("RuntimeError: No CUDA GPUs are available\n").expect("the likeliest cause");
    assert_eq!(alone.severity, gpu_doctor_model::Severity::Warning);
    assert_eq!(hides(script).map(|f| f.severity), Some(gpu_doctor_model::Severity::Error));
    assert!(hides("$ bash scripts/train.sh\nepoch 1 loss 0.3\n").is_none());
}

/// A GPU count said in words settles an index the GPU list would (finetune-SAM#18's "I have two GPUs on the
/// machine"); the fix keeps the indices the machine has.
#[test]
fn an_index_past_a_gpu_count_said_in_words_hides_every_gpu() {
    let text = "I have two GPUs on the machine.\n$ CUDA_VISIBLE_DEVICES=5 python train.py\n";
    let s = read(text);
    assert_eq!(s.stated_gpu_count, Some(2));
    let findings = gpu_doctor_judge::diagnose::diagnose(&s, kb());
    let f = findings.iter().find(|f| f.id == "env.cuda_visible_devices_hides_all").expect("index 5 of 2");
    assert!(format!("{:?}", f.plan).contains("value: \"0,1\""), "{:?}", f.plan);
    let s = read("I have two GPUs on the machine.\n$ CUDA_VISIBLE_DEVICES=1 python train.py\n");
    let findings = gpu_doctor_judge::diagnose::diagnose(&s, kb());
    assert!(!findings.iter().any(|f| f.id == "env.cuda_visible_devices_hides_all"), "{findings:#?}");
}
