//! `diagnose` over anything pasted (the paste reader, then the rules) never panics or hangs.

use proptest::prelude::*;

use crate::parse::paste::read_pasted;
use gpu_doctor_kb::Kb;

/// The findings for pasted `text`, as `diagnose --from` gives them before planning.
fn diagnosed(text: &str) -> Vec<gpu_doctor_model::Finding> {
    let kb = Kb::get().unwrap();
    gpu_doctor_judge::diagnose::diagnose(&read_pasted(text, kb).unwrap(), kb)
}

/// Lines that look like the formats `diagnose` reads, to be shuffled and cut.
const PIECES: &[&str] = &[
    "PyTorch version: 2.5.1+cu124",
    "CUDA used to build PyTorch: 12.4",
    "Nvidia driver version: 470.82.01",
    "GPU models and configuration: GPU 0: NVIDIA GeForce RTX 5090",
    "| NVIDIA-SMI 535.86.05              Driver Version: 535.86.05    CUDA Version: 12.2     |",
    "Cuda compilation tools, release 12.4, V12.4.131",
    "torch==2.9.0+cu130",
    "jax-cuda13-plugin==0.7.2",
    "cupy-cuda12x 13.3.0",
    "RuntimeError: The NVIDIA driver on your system is too old (found version 12080).",
    "CUDA error: no kernel image is available for execution on the device",
    "{\"schema_version\": 1, \"snapshot\": {",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,400}") {
        crate::test_util::bounded(crate::test_util::CASE_LIMIT, move || {
            let kb = Kb::get().unwrap();
            if let Ok(s) = read_pasted(&text, kb) {
                let _ = gpu_doctor_judge::diagnose::diagnose(&s, kb);
            }
        });
    }

    #[test]
    fn shuffled_and_cut_pastes_never_panic(picks in proptest::collection::vec((0..PIECES.len(), 0usize..120), 0..12)) {
        let kb = Kb::get().unwrap();
        let text: String = picks
            .iter()
            .map(|(i, cut)| {
                let p = PIECES[*i];
                let end = (*cut).min(p.len());
                let end = (0..=end).rev().find(|e| p.is_char_boundary(*e)).unwrap_or(0);
                format!("{}\n", &p[..end])
            })
            .collect();
        let findings = crate::test_util::bounded(crate::test_util::CASE_LIMIT, move || {
            read_pasted(&text, kb).map(|s| gpu_doctor_judge::diagnose::diagnose(&s, kb)).unwrap_or_default()
        });
        // Every finding is fully formed.
        for f in findings {
            prop_assert!(!f.id.is_empty() && !f.summary.is_empty());
        }
    }
}

/// Issue 27's examples of healthy text that used to be refused: `--query-gpu … --format=csv,noheader`
/// rows (two RTX 4090s at their idle link generation) and a bare process table. Each is read (the
/// CSV's GPUs and driver) and gives no error or warning.
#[test]
fn healthy_noheader_csv_and_a_process_table_give_no_warning() {
    let kb = Kb::get().unwrap();
    let csv = "NVIDIA GeForce RTX 4090, 00000000:01:00.0, 550.54.14, 4, 1\n\
               NVIDIA GeForce RTX 4090, 00000000:41:00.0, 550.54.14, 4, 4\n";
    let s = read_pasted(csv, kb).unwrap();
    assert_eq!(s.gpus.value().map(Vec::len), Some(2), "{:?}", s.gpus);
    assert_eq!(s.driver.value().map(|d| d.version.as_str()), Some("550.54.14"));
    let processes = "+-----------------------------------------------------------------------------------------+\n\
                     | Processes:                                                                              |\n\
                     |  GPU   GI   CI        PID   Type   Process name                              GPU Memory |\n\
                     |        ID   ID                                                               Usage      |\n\
                     |=========================================================================================|\n\
                     |    0   N/A  N/A      2345      C   python                                       1024MiB |\n\
                     +-----------------------------------------------------------------------------------------+\n";
    for (name, text) in [("csv", csv), ("processes", processes)] {
        let s = read_pasted(text, kb).unwrap_or_else(|e| panic!("{name} refused: {e}"));
        let serious: Vec<_> = gpu_doctor_judge::diagnose::diagnose(&s, kb)
            .into_iter()
            .filter(|f| f.severity != gpu_doctor_model::Severity::Info)
            .map(|f| f.id)
            .collect();
        assert!(serious.is_empty(), "{name}: {serious:?}");
    }
}

/// PyTorch's printed arch list alone (no torch version pasted; github.com/Aaronontheweb/witticism/pull/10,
/// verbatim): the fix names a torch build from the knowledge base with machine code for the GPU and
/// the command that installs it, not "a build compiled for sm_61".
#[test]
fn a_printed_arch_list_fix_names_a_build_with_code_for_the_gpu() {
    let text = "NVIDIA GeForce GTX 1080 with CUDA capability sm_61 is not compatible with the current PyTorch installation.\n\
                The current PyTorch install supports CUDA capabilities sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120.\n";
    let findings = diagnosed(text);
    let f = findings.iter().find(|f| f.id == "arch.not_in_build").expect("the finding");
    let fix = f.fix.as_deref().unwrap_or_default();
    assert!(fix.contains("machine code for sm_61") && fix.contains("pip install 'torch=="), "{fix}");
    assert!(fix.contains("--index-url https://download.pytorch.org/whl/cu"), "{fix}");
}

/// A message that names what its program needs from the driver gets a fix that names the driver:
/// nvidia-container-cli's `cuda>=11.0` (NVIDIA/nvidia-docker#1442, verbatim) the first driver of
/// CUDA 11.0 from the kb's release table, with the row's value in its words; ollama's
/// `required_driver="570 or newer"` (ollama/ollama#16415, verbatim) the 570 branch. Both planned as a
/// driver update (the driver planner writes the fix: the distribution's steps where the OS is known),
/// the floor said in the detail.
#[test]
fn a_message_naming_the_needed_cuda_or_branch_names_the_driver() {
    let finding = |text: &str, id: &str| {
        let findings = diagnosed(text);
        findings.into_iter().find(|f| f.id == id).expect("the finding")
    };
    let f = finding(
        "docker: Error response from daemon: OCI runtime create failed: container_linux.go:370: starting container process caused: process_linux.go:459: container init caused: Running hook #0:: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: requirement error: unsatisfied condition: cuda>=11.0, please update your driver to a newer version, or use an earlier cuda container: unknown.\n",
        "observed.container.cuda_requirement_unsatisfied",
    );
    assert!(f.summary.contains("supporting CUDA 11.0 or newer"), "{}", f.summary);
    let plan = f.plan.as_ref().expect("a driver plan");
    assert_eq!(plan.target, gpu_doctor_model::PlanTarget::Driver { min_branch: Some(450) });
    assert!(f.detail.contains("CUDA 11.0 needs driver 450.51.05 or newer"), "{}", f.detail);

    let f = finding(
        "msg=\"NVIDIA driver too old\" device=\"NVIDIA GeForce GTX 1070 Ti\" compute=6.1 driver=535 required_driver=\"570 or newer\"\n",
        "observed.ollama.driver_too_old",
    );
    let plan = f.plan.as_ref().expect("a driver plan");
    assert_eq!(plan.target, gpu_doctor_model::PlanTarget::Driver { min_branch: Some(570) });
    assert!(f.detail.contains("the 570 driver branch or newer"), "{}", f.detail);
}

/// The driver's CUDA level in another emitter's spelling (ggml's `Insufficient CUDA driver: 11040`,
/// the CUDA API's integer, as its row reads it) judges a pasted torch build like PyTorch's own
/// `found version`: torch built for CUDA 12.4 needs a newer driver than one of CUDA 11.4.
#[test]
fn the_driver_level_in_another_spelling_judges_a_framework_build() {
    let text = "torch==2.5.1+cu124\nCUDA error: Insufficient CUDA driver: 11040\n";
    let findings = diagnosed(text);
    let f = findings.iter().find(|f| f.id == "driver.too_old_for_runtime").expect("the finding");
    assert!(f.evidence.iter().any(|e| e.starts_with("the driver supports CUDA up to 11.4")), "{f:#?}");
}

/// A line its emitter logs as a warning and goes on after (JAX's `logger.warning` in xla_bridge.py,
/// printed `WARNING:…:jax._src.xla_bridge:…`) is a warning-level finding, not an error: the
/// kohya-colab#133 reporter trained on the GPU with PyTorch while an unused CPU jaxlib said it.
#[test]
fn a_message_its_emitter_logs_as_a_warning_is_a_warning() {
    let kb = Kb::get().unwrap();
    let text = "\"An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.\"\n";
    let findings = diagnosed(text);
    let f = findings.iter().find(|f| f.id == "observed.jax.cuda_jaxlib_missing").expect("the finding");
    assert_eq!(f.severity, gpu_doctor_model::Severity::Warning);
    let error = gpu_doctor_judge::diagnose::diagnose(
        &read_pasted("AssertionError: Torch not compiled with CUDA enabled\n", kb).unwrap(),
        kb,
    );
    assert!(error.iter().any(|f| f.severity == gpu_doctor_model::Severity::Error), "{error:#?}");
}

/// CUDA_VISIBLE_DEVICES set from Python (AUTOMATIC1111/stable-diffusion-webui#442, verbatim: the line
/// after an import of modules that import torch) is named as set inside the program, with the
/// shell form in the fix; the same value set in the shell is not.
#[test]
fn cuda_visible_devices_set_from_python_is_named() {
    let ids = |text: &str| -> Vec<String> {
        let findings = diagnosed(text);
        findings.into_iter().map(|f| f.id).collect()
    };
    let text = "import modules.img2img\n\nos.environ[\"CUDA_VISIBLE_DEVICES\"] = \"1\"\n\nmodules.codeformer_model.setup_codeformer()\n";
    assert!(ids(text).iter().any(|id| id == "env.cuda_visible_devices_set_after_init"), "{:?}", ids(text));
    assert!(!ids("export CUDA_VISIBLE_DEVICES=1\n").iter().any(|id| id == "env.cuda_visible_devices_set_after_init"));
    // The value computed by the program (hongyliu/CLRNet main.py: `import torch` first, the assignment in
    // main()): set in process all the same, and the fix names no value the text did not give.
    let text = "import torch\nimport os\n\ndef main():\n    args = parse_args()\n    os.environ['CUDA_VISIBLE_DEVICES'] = ','.join(str(gpu) for gpu in args.gpus)\n";
    let findings = diagnosed(text);
    let f = findings.iter().find(|f| f.id == "env.cuda_visible_devices_set_after_init").expect("the finding");
    assert_eq!(f.summary, "CUDA_VISIBLE_DEVICES is set from inside the program");
}

/// glibc before 2.30 worded the same versioned-symbol failure "symbol X, version Y not defined in file
/// Y with link time reference" (deepmodeling/deepmd-kit#2241, verbatim): the same family, the same
/// finding.
#[test]
fn the_older_glibc_wording_of_a_versioned_symbol_is_the_same_family() {
    let text = "OSError: /home/jz748/anaconda3/envs/tf/lib/python3.10/site-packages/nvidia/cublas/lib/libcublas.so.11: symbol cublasLtHSHMatmulAlgoInit, version libcublasLt.so.11 not defined in file libcublasLt.so.11 with link time reference\n";
    let findings = diagnosed(text);
    let f = findings.iter().find(|f| f.id == "loader.older_library_loaded").expect("the finding");
    assert!(f.summary.contains("libcublasLt.so.11"), "{}", f.summary);
}

/// A message that wrapped at a space in the paste reads as its emitter printed it: torch's
/// cpp_extension check quoted over two indented lines (LMCache/LMCache#3056, verbatim).
#[test]
fn a_message_wrapped_at_a_space_is_read() {
    let kb = Kb::get().unwrap();
    let text = "    RuntimeError: The detected CUDA version (13.0) mismatches the\n    version that was used to compile PyTorch (12.8).\n";
    let s = read_pasted(text, kb).unwrap();
    let m = s.messages.iter().find(|m| m.id == "torch.cpp_extension_cuda_mismatch").expect("the message");
    assert_eq!(m.values.get("detected").map(String::as_str), Some("13.0"));
    assert_eq!(m.values.get("compiled").map(String::as_str), Some("12.8"));
}

/// WSL named in prose and a program that could not open `libcuda.so` (chelsea0x3b/cudarc#255,
/// verbatim): WSL's libcuda.so is never in the loader cache, so the cause is named with the
/// LD_LIBRARY_PATH plan, and the evidence says the cache was not in the text. Without WSL named,
/// the same panic is only the driver library not found.
#[test]
fn wsl_named_in_prose_and_a_libcuda_so_failure_name_wsls_loader_path() {
    let ids = |text: &str| -> Vec<gpu_doctor_model::Finding> { diagnosed(text) };
    let panic = "thread 'main' panicked at /home/mbuehler/.cargo/registry/src/index.crates.io-6f17d22bba15001f/cudarc-0.11.5/src/driver/sys/mod.rs:61:9:\nUnable to find cuda lib under the names [\"cuda\", \"nvcuda\"]. Please open GitHub issue.\n";
    let text = format!("I was running mistral.rs on a WSL machine when I ran into this error:\n\n{panic}");
    let found = ids(&text);
    let f = found.iter().find(|f| f.id == "wsl.libcuda_so_not_in_cache").expect("the finding");
    assert!(f.evidence.iter().any(|e| e.contains("not in the text")), "{f:#?}");
    assert!(!ids(panic).iter().any(|f| f.id == "wsl.libcuda_so_not_in_cache"));
}

/// The LD_LIBRARY_PATH folder named for the library the versioned symbol asks of (jax-ml/jax#2494, verbatim: cuDNN
/// 7.4.2's folder beside CUDA 10.1's) is the one the fix takes out, not the CUDA folder beside it.
#[test]
fn the_folder_named_for_the_older_library_is_the_one_taken_out() {
    let text = "ImportError: .../jaxlib/xla_extension.so: symbol cudnnSetCTCLossDescriptorEx version libcudnn.so.7 not defined in file libcudnn.so.7 with link time reference\n\
                export LD_LIBRARY_PATH=/pkgs/cuda-10.1/lib64:/pkgs/cudnn-10.0-v7.4.2/lib64:$LD_LIBRARY_PATH\n";
    let findings = diagnosed(text);
    let f = findings.iter().find(|f| f.id == "loader.older_library_loaded").expect("the finding");
    assert!(f.evidence.iter().any(|e| e == "LD_LIBRARY_PATH lists /pkgs/cudnn-10.0-v7.4.2/lib64"), "{f:#?}");
}

/// NCCL's libnccl.so.2 carries no symbol versions, so an older copy shows as `undefined symbol: ncclX`
/// alone (pytorch/pytorch#119072, VictorNanka's quote, verbatim): the same family, libnccl.so.2 named.
/// With collect_env's `[pip3]` rows showing NCCL wheels of two CUDA majors (the form of
/// rwth-i6/returnn#1802's rows; the versions here are pytorch#119072's era), the fix removes the other
/// major's wheel and installs the kept one again; a CUDA runtime symbol without a version is no NCCL's.
#[test]
fn an_unversioned_nccl_symbol_is_an_older_libnccl_and_two_majors_keep_one() {
    let line = "ImportError: /home/user/.local/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister\n";
    let findings = diagnosed(line);
    let f = findings.iter().find(|f| f.id == "loader.older_library_loaded").expect("the finding");
    assert!(f.summary.contains("libnccl.so.2"), "{}", f.summary);
    let text = format!("{line}[pip3] nvidia-nccl-cu11==2.14.3\n[pip3] nvidia-nccl-cu12==2.19.3\n[pip3] torch==2.2.0\n");
    let findings = diagnosed(&text);
    let f = findings.iter().find(|f| f.id == "loader.older_library_loaded").expect("the finding");
    let plan = format!("{:?}", f.plan);
    assert!(plan.contains("Uninstall { packages: [\"nvidia-nccl-cu11\"] }"), "{plan}");
    assert!(plan.contains("nvidia-nccl-cu12==2.19.3"), "{plan}");
    let other = diagnosed("undefined symbol: cudaMallocAsync\n");
    assert!(!other.iter().any(|f| f.id == "loader.older_library_loaded"), "{other:#?}");
}

/// A build that ran nvcc by a path that is not there (Microway/gpu-burn#8, verbatim lines: the Makefile's
/// CUDAPATH empty, so `/bin/nvcc`) names the root it was given; by name (flatironinstitute/cufinufft#148,
/// `sudo make`) it is PATH; with `which nvcc` showing another nvcc, the fix names that root. A root with a
/// stray colon is the variable's form, not this.
#[test]
fn nvcc_not_found_by_path_or_by_name() {
    let ids = |text: &str| -> Vec<String> { diagnosed(text).into_iter().map(|f| f.id).collect() };
    let burn =
        "/bin/sh: /bin/nvcc: No such file or directory\nmake: *** [Makefile:38: gpu_burn.cuda_kernel] Error 127\n";
    let found = diagnosed(burn);
    let f = found.iter().find(|f| f.id == "toolkit.nvcc_missing_at_root").expect("the finding");
    assert!(f.detail.contains("an empty root"), "{}", f.detail);
    assert!(ids("/bin/sh: 1: nvcc: not found\n").contains(&"toolkit.nvcc_not_on_path".to_owned()));
    let which = format!("{burn}$ which nvcc\n/usr/local/cuda-11.5/bin/nvcc\n");
    let found = diagnosed(&which);
    let f = found.iter().find(|f| f.id == "toolkit.nvcc_missing_at_root").expect("the finding");
    assert!(f.fix.as_deref().is_some_and(|x| x.contains("make CUDA_PATH=/usr/local/cuda-11.5")), "{:?}", f.fix);
    let colon = "FileNotFoundError: [Errno 2] No such file or directory: ':/usr/local/cuda/bin/nvcc'\n";
    let found = ids(colon);
    assert!(!found.iter().any(|id| id.starts_with("toolkit.nvcc")), "{found:?}");
}

/// With nothing else pasted, the versioned symbol's fix names the exact wheel for the library's
/// CUDA major: `-cu12` up to 12, no suffix from 13 (pinned to the major); where the soname is not
/// the CUDA major (cuFFT's `.so.11` is CUDA 12's), it names the wheel without a command.
#[test]
fn a_versioned_symbol_fix_names_the_wheel_for_the_library_major() {
    let fix = |line: &str| {
        let findings = diagnosed(line);
        let f = findings.iter().find(|f| f.id == "loader.older_library_loaded").expect("the finding");
        f.fix.clone().unwrap_or_default()
    };
    let w = fix("undefined symbol: cudaGetDriverEntryPointByVersion, version libcudart.so.12\n");
    assert!(w.contains("`python -m pip install --upgrade nvidia-cuda-runtime-cu12`"), "{w}");
    let w = fix("undefined symbol: cublasLtGetVersion, version libcublasLt.so.13\n");
    assert!(w.contains("`python -m pip install --upgrade 'nvidia-cublas==13.*'`"), "{w}");
    let w = fix("undefined symbol: cufftXtExec, version libcufft.so.11\n");
    assert!(w.contains("the nvidia-cufft wheel for your CUDA major") && !w.contains("pip install"), "{w}");
}

/// Issue 27's versioned symbol, a message family rather than a string: the loaded libY.so.N is
/// older than the caller needs. Alone, the fix says how to find the copy; with an LD_LIBRARY_PATH
/// that lists a CUDA folder, the plan takes it out; with the wheel in a pasted pip list, the plan
/// upgrades it. Any symbol of any of NVIDIA's libraries reads the same.
#[test]
fn a_versioned_symbol_missing_names_the_older_library_and_its_fix() {
    let line = "undefined symbol: cudaGetDriverEntryPointByVersion, version libcudart.so.12\n";
    let findings = |text: &str| diagnosed(text);
    let alone = findings(line);
    let ids: Vec<&str> = alone.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["loader.older_library_loaded"], "the row is explained by the rule, not an observed. finding");
    let fix = alone[0].fix.as_deref().unwrap();
    assert!(fix.contains("ldconfig -p | grep -F libcudart.so.12") && fix.contains("nvidia-cuda-runtime"), "{fix}");

    let on_path = findings(&format!("export LD_LIBRARY_PATH=/usr/local/cuda-12.1/lib64:/opt/lib\n{line}"));
    let f = on_path.iter().find(|f| f.id == "loader.older_library_loaded").unwrap();
    assert!(f.evidence.iter().any(|e| e == "LD_LIBRARY_PATH lists /usr/local/cuda-12.1/lib64"), "{f:#?}");
    // The folder goes; where nothing else supplies the library, a newer copy's folder takes its place (said, not done).
    assert!(
        matches!(&f.plan, Some(r) if matches!(&r.target, gpu_doctor_model::PlanTarget::Change { changes, .. }
        if changes.first() == Some(&gpu_doctor_model::Change::SetVar { name: "LD_LIBRARY_PATH".into(), value: "/opt/lib".into() })
            && matches!(changes.get(1), Some(gpu_doctor_model::Change::Manual { text }) if text.contains("newer release's copy"))
            && changes.len() == 2)),
        "{f:#?}"
    );

    let with_wheel = findings(&format!(
        "Package                  Version\n------------------------ ----------\nnvidia-cuda-runtime-cu12 12.1.105\ntorch                    2.5.1\n{line}"
    ));
    let f = with_wheel.iter().find(|f| f.id == "loader.older_library_loaded").unwrap();
    assert!(
        matches!(&f.plan, Some(r) if matches!(&r.target, gpu_doctor_model::PlanTarget::Change { changes, .. }
        if changes == &[gpu_doctor_model::Change::Install { requirements: vec!["nvidia-cuda-runtime-cu12".into()], flags: vec![gpu_doctor_model::InstallFlag::Upgrade], index_url: None }])),
        "{f:#?}"
    );

    // Another library, another symbol: the same family.
    let cublas = findings("undefined symbol: cublasLtGetVersion, version libcublasLt.so.13\n");
    assert!(
        cublas
            .iter()
            .any(|f| f.id == "loader.older_library_loaded"
                && f.fix.as_deref().is_some_and(|x| x.contains("nvidia-cublas"))),
        "{cublas:#?}"
    );
    // A library no NVIDIA wheel ships is left to the observed message.
    let other = findings("undefined symbol: foo_bar, version libfoo.so.1\n");
    assert!(other.iter().all(|f| f.id != "loader.older_library_loaded"), "{other:#?}");
}

/// The ids of the findings for pasted `text`.
fn finding_ids(text: &str) -> Vec<String> {
    diagnosed(text).into_iter().map(|f| f.id).collect()
}

/// ollama with a GPU below the floor of its releases (gpu/gpu.go's CudaComputeMin, by release): its journal's
/// lines (ollama/ollama#1756, a K80 under a release of January 2024), its issue form's version answer
/// (ollama/ollama#9124's form: `### Ollama version`), a version in words (ollama/ollama#1877: a 5.0 GPU under
/// v0.1.19, whose floor was 6.0). A GPU at the floor, or ollama's own `too old` line, gives no second finding.
#[test]
fn ollama_has_no_code_below_its_releases_floor() {
    let journal = "Jan  1 20:22:43 thinkstation-s30 ollama[911]: ggml_init_cublas: found 3 CUDA devices:\n\
                   Jan  1 20:22:43 thinkstation-s30 ollama[911]:   Device 0: Tesla K80, compute capability 3.7\n";
    let f = diagnosed(journal);
    let arch = f.iter().find(|f| f.id == "arch.not_in_build").expect("the finding");
    let fix = arch.fix.as_deref().unwrap_or_default();
    assert!(fix.contains("-DCMAKE_CUDA_ARCHITECTURES=37") && fix.contains("11.8"), "{fix}");
    let form = "### GPU\n\nNvidia\n\n### Ollama version\n\n0.5.11\n\nmy server has 4 nvidia tesla k80 gpus\n";
    assert!(finding_ids(form).contains(&"arch.not_in_build".to_owned()), "{form}");
    let words = "I've updated ollama to v0.1.19. I have a gtx 950M, Nvidia driver 545.23.08\n";
    assert!(finding_ids(words).contains(&"arch.not_in_build".to_owned()));
    // The same GPU under a release whose floor is 5.0 runs.
    let later = "I've updated ollama to v0.1.23. I have a gtx 950M, Nvidia driver 545.23.08\n";
    assert!(!finding_ids(later).contains(&"arch.not_in_build".to_owned()));
    // Without ollama, a K80 named is no finding of this kind.
    assert!(
        !finding_ids("Device 0: Tesla K80, compute capability 3.7, VMM: no\n")
            .contains(&"arch.not_in_build".to_owned())
    );
}

/// A program's stated floor against the GPU the text names: spacemeshos/gpu-post#15 (`the 't' kernel requires
/// 5.0 capability!` on a K80). A GPU at or above the floor gives nothing.
#[test]
fn a_gpu_below_the_floor_a_program_states_is_not_in_its_build() {
    let text = "Runtime Error with Nvidia Tesla K80\n\
                [2020-09-08 11:15:32] GPU #0: FATAL: the 't' kernel requires 5.0 capability!\n";
    assert!(finding_ids(text).contains(&"arch.not_in_build".to_owned()), "{:?}", finding_ids(text));
    let t4 = "Runtime Error with Nvidia Tesla T4\n[2020-09-08 11:15:32] GPU #0: FATAL: the 't' kernel requires 5.0 capability!\n";
    assert!(!finding_ids(t4).contains(&"arch.not_in_build".to_owned()));
}

/// The floor's own line reporting the device below it (PhoenixMinerDevTeam/PhoenixMiner#34: a board sold as a GTX 1060
/// whose chip is a Fermi of 2.1) is the program's answer, whatever the name says, and says the name does not fit;
/// tiny-cuda-nn's SM-number floor (NVlabs/instant-ngp#13) against a V100 named in words.
#[test]
fn a_device_the_floors_line_reports_below_it_is_not_in_the_build() {
    let text = "Using `1x GTX1060 6GB` on `WIN10` with `8GB RAM`\n\nCan't use CUDA device 0: compute cap. 2.1 (at least 3.0 required)\n";
    let f = diagnosed(text).into_iter().find(|f| f.id == "arch.not_in_build").expect("arch.not_in_build");
    assert!(f.summary.contains("2.1") && f.detail.contains("GTX 1060"), "{f:#?}");
    let fine = "Using a GTX 1060\nCUDA device 0: compute cap. 6.1 (at least 3.0 required)\n";
    assert!(!finding_ids(fine).contains(&"arch.not_in_build".to_owned()));
    let ngp = "Turing Tensor Core operations must be run on a machine with compute capability at least 75\n\n\
               Does it mean that there is no way to support running this code on some older GPUs, e.g. Tesla V100\n";
    assert!(finding_ids(ngp).contains(&"arch.not_in_build".to_owned()), "{:?}", finding_ids(ngp));
}

/// A program's GPU list in another order than lspci's (trexminer/T-Rex#72) is CUDA's fastest-first order, with
/// CUDA_DEVICE_ORDER=PCI_BUS_ID as the fix; already set, nothing is said.
#[test]
fn a_programs_gpu_list_out_of_bus_order_names_cuda_device_order() {
    let text = "20200830 20:11:31 GPU #0: Gigabyte GTX 1080 Ti\n20200830 20:11:31 GPU #1: ASUS GTX 1070\n\
                20200830 20:11:31 GPU #2: ASUS GTX 1070\n\
                02:00.0 VGA compatible controller: NVIDIA Corporation GP104 [GeForce GTX 1070] (rev a1)\n\
                04:00.0 VGA compatible controller: NVIDIA Corporation GP102 [GeForce GTX 1080 Ti] (rev a1)\n\
                05:00.0 VGA compatible controller: NVIDIA Corporation GP104 [GeForce GTX 1070] (rev a1)\n";
    let f = diagnosed(text).into_iter().find(|f| f.id == "topology.cuda_index_differs").expect("the order finding");
    assert!(f.evidence.iter().any(|e| e.contains("in PCI bus order they are 1070, 1080 Ti, 1070")), "{f:#?}");
    let set = format!("export CUDA_DEVICE_ORDER=PCI_BUS_ID\n{text}");
    assert!(!finding_ids(&set).contains(&"topology.cuda_index_differs".to_owned()));
}

/// CUDA's `no kernel image` beside one GPU model the text names (ETH3D/badslam#33's lines) is that GPU's architecture
/// missing from the program's build, with the flags for it; beside two models it cannot say which.
#[test]
fn no_kernel_image_beside_one_named_gpu_is_its_architecture_missing() {
    let text = "cuda_image_processing.c:192 FATL| Cuda Error: no kernel image is available for execution on the device\n\
                My system\nWindows 10\nNVIDIA Quadro M6000\n";
    let f = diagnosed(text).into_iter().find(|f| f.id == "arch.not_in_build").expect("arch.not_in_build");
    assert!(
        f.summary.contains("Quadro M6000 (sm_52)") && f.explains.contains(&"observed.cuda.no_kernel_image".to_owned()),
        "{f:#?}"
    );
    assert!(f.fix.as_deref().is_some_and(|x| x.contains("-DCMAKE_CUDA_ARCHITECTURES=52")), "{f:#?}");
    let two = format!("{text}NVIDIA GeForce RTX 3090\n");
    assert!(!finding_ids(&two).contains(&"arch.not_in_build".to_owned()));
}

/// CUDA's initialization answering 500 under WSL 2 is a container toolkit older than the Windows driver
/// (NVIDIA/nvidia-container-toolkit#520): TensorFlow's cuInit line as tensorflow/tensorflow#68711 has it, PyTorch's
/// device-count line as YanWenKun/ComfyUI-Docker#77 has it. Where the text shows neither WSL nor a Linux host's
/// driver it is still that case (Docker Desktop users paste the line alone: jhj0517/Whisper-WebUI#279), with the
/// evidence saying so; not where a Linux host's driver is shown (the kernel module's version file), and not for
/// another cuInit error.
#[test]
fn cuda_init_500_under_wsl_is_a_container_toolkit_older_than_the_driver() {
    const ID: &str = "wsl.container_toolkit_predates_driver";
    let tf = "I am using Docker Desktop with WSL2 on Windows 11 Pro.\n\
              2024-05-27 18:05:31.089452: E external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:282] failed call \
              to cuInit: CUDA_ERROR_NOT_FOUND: named symbol not found\n";
    let f = diagnosed(tf);
    let found = f.iter().find(|f| f.id == ID).expect("the toolkit finding");
    assert!(found.fix.as_deref().is_some_and(|x| x.contains("nvidia-container-toolkit") && x.contains("4.31")));
    assert!(!f.iter().any(|f| f.id == "wsl.gpu_not_exposed"), "{f:#?}");
    let torch = "Running on WSL2\nRuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda \
                 functions before calling NumCudaDevices() that might have already set an error? Error 500: named \
                 symbol not found\n";
    assert!(finding_ids(torch).contains(&ID.to_owned()), "{:?}", finding_ids(torch));
    let unsaid = tf.replace("I am using Docker Desktop with WSL2 on Windows 11 Pro.\n", "");
    let f = diagnosed(&unsaid);
    let found = f.iter().find(|f| f.id == ID).expect("the toolkit finding where the place is not shown");
    assert!(found.evidence.iter().any(|e| e.contains("not shown")), "{:?}", found.evidence);
    let native = tf.replace(
        "I am using Docker Desktop with WSL2 on Windows 11 Pro.",
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024",
    );
    assert!(!finding_ids(&native).contains(&ID.to_owned()));
    let no_device = tf.replace(
        "CUDA_ERROR_NOT_FOUND: named symbol not found",
        "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected",
    );
    assert!(!finding_ids(&no_device).contains(&ID.to_owned()));
}

/// A `docker run` without a GPU and a program in it saying, in its own words, it found none
/// (stevezzau/plex_generate_vid_previews through media-preview-generator#124: `No GPUs detected` after a cross mark): the container
/// was started without the GPU. With `--gpus all` it is not that.
#[test]
fn no_gpu_said_in_a_container_started_without_one() {
    const ID: &str = "containers.started_without_gpu";
    let text = "\u{276f} docker run --rm stevezzau/plex_generate_vid_previews:latest --list-gpus\n\
                2025/12/23 15:39:05 | \u{2139}  - \u{274c} No GPUs detected\n";
    assert!(finding_ids(text).contains(&ID.to_owned()), "{:?}", finding_ids(text));
    let passed = text.replace("--rm ", "--rm --gpus all ");
    assert!(!finding_ids(&passed).contains(&ID.to_owned()));
    assert!(!finding_ids("\u{276f} docker run --rm nginx\nserver started\n").contains(&ID.to_owned()));
}

/// A bus error whose backtrace runs through NCCL is NCCL's shared memory running out (pipedream#76's lines, cut);
/// a bus error elsewhere, or NCCL without one, is not.
#[test]
fn a_bus_error_through_nccl_is_its_shared_memory() {
    const ID: &str = "observed.nccl.shm_too_small";
    let text = "[8d6bf97c3bf4:3039 :0:3095] Caught signal 7 (Bus error: nonexistent physical address)\n\
                ==== backtrace (tid:   3095) ====\n\
                 2 0x000000000007587d ncclGroupEnd()  ???:0\n\
                 5 0x00000000000489b1 ???()  /usr/lib/x86_64-linux-gnu/libnccl.so.2:0\n";
    let f = diagnosed(text);
    let found = f.iter().find(|f| f.id == ID).expect("NCCL's shared memory");
    assert!(format!("{:?}", found).contains("shm-size"), "{found:#?}");
    assert!(
        !finding_ids("Caught signal 7 (Bus error: nonexistent physical address)\n 2 0x1 memcpy()\n")
            .contains(&ID.to_owned())
    );
    assert!(!finding_ids("NCCL INFO Channel 00 : 1[1] -> 0[0] via SHM/direct/direct\n").contains(&ID.to_owned()));
}
