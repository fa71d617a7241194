//! One realistic sample per format and the facts it must give.

use super::*;
use gpu_doctor_model::{ComputeCapability, CudaVersion};
use gpu_doctor_model::{CudnnKind, OsFamily, ToolkitKind, VersionSource};

#[test]
fn collect_env_current_layout() {
    let s = read(COLLECT_ENV_CU124);
    assert_eq!(formats(&s), ["collect_env"]);
    let d = s.driver.value().unwrap();
    assert_eq!(
        (d.version.as_str(), d.cuda_version, d.cuda_version_derived),
        ("550.90.07", Some(CudaVersion::new(12, 4)), true),
        "collect_env does not print the driver's CUDA: it is looked up from the version"
    );
    let g = gpus(&s);
    assert_eq!(g.len(), 1);
    assert_eq!(g[0].name.as_deref(), Some("NVIDIA GeForce RTX 4090"));
    assert_eq!(g[0].compute_capability, None, "the text does not state it; the rules look the name up");
    assert_eq!(g[0].architecture, None);
    assert_eq!(g[0].pci_bus_id, None);
    let torch = framework(&s, "torch");
    assert_eq!((torch.version.as_str(), &torch.build), ("2.5.1+cu124", &cuda("12.4")));
    assert_eq!(torch.site_packages, "(pasted)");
    let e = env(&s);
    assert_eq!(e.python_version.as_deref(), Some("3.10.12"));
    let wheels: Vec<&str> = e.cuda_wheels.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(wheels, ["nvidia-cublas-cu12", "nvidia-cuda-runtime-cu12", "nvidia-cudnn-cu12"]);
    let deep = e.deep.as_ref().unwrap().value().unwrap();
    let t = deep.torch.as_ref().unwrap();
    assert_eq!((t.cuda.as_deref(), t.cuda_available, t.hip.as_deref()), (Some("12.4"), Some(true), None));
    let tk = s.toolkits.value().unwrap();
    assert_eq!(tk.installs.len(), 1);
    let nvcc = &tk.installs[0];
    assert_eq!(
        (nvcc.root.as_str(), nvcc.kind, nvcc.version_source),
        ("(pasted)", ToolkitKind::Pasted, Some(VersionSource::Nvcc))
    );
    assert_eq!(nvcc.version.unwrap().to_string(), "12.1.105");
    let cudnn = s.cudnn.value().unwrap();
    let lib = cudnn.iter().find(|c| c.kind == CudnnKind::Library).unwrap();
    assert_eq!(lib.location, "/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.2");
    assert_eq!(lib.version.unwrap().to_string(), "8.9.2");
    let wheel = cudnn.iter().find(|c| c.kind == CudnnKind::PipWheel).unwrap();
    assert_eq!((wheel.version.unwrap().to_string(), wheel.cuda_major), ("9.1.0".to_owned(), Some(12)));
    assert_eq!(cudnn.len(), 2, "the sub-libraries of 8.9.2 are one copy");
    assert_eq!((s.platform.platform.os, s.platform.platform.arch.as_str()), (OsFamily::Linux, "x86_64"));
    assert!(s.messages.is_empty());
    // Of the machine only the OS's name is known: it names the distribution's driver package.
    let system = s.system.value().unwrap();
    assert_eq!((system.os_name.as_deref(), system.cpu_logical_cores), (Some("Ubuntu 22.04.4 LTS"), 0));
    assert!(is_unknown(&s.links) && is_unknown(&s.kernel_module));
}

#[test]
fn collect_env_old_layout_lists_gpus_on_the_next_lines() {
    let s = read(COLLECT_ENV_OLD);
    let g = gpus(&s);
    assert_eq!(g.len(), 4);
    assert_eq!(g.iter().map(|g| g.index).collect::<Vec<_>>(), [0, 1, 2, 3]);
    assert!(g.iter().all(|g| g.name.as_deref() == Some("GeForce GTX 1080 Ti")));
    assert_eq!(s.driver.value().unwrap().version.as_str(), "460.32.03");
    assert_eq!(framework(&s, "torch").build, cuda("10.2"), "collect_env's build line wins over the conda build string");
    assert_eq!(env(&s).python_version.as_deref(), Some("3.8"));
    let deep = env(&s).deep.as_ref().unwrap().value().unwrap();
    assert_eq!(deep.torch.as_ref().unwrap().cuda_available, Some(true), "`Yes`");
    assert!(is_unknown(&s.cudnn), "`Could not collect`");
    let tk = s.toolkits.value().unwrap();
    let conda = tk.installs.iter().find(|t| t.kind == ToolkitKind::Conda).unwrap();
    assert_eq!(conda.version.unwrap().to_string(), "10.2.89");
    assert_eq!(conda.nvcc, None, "cudatoolkit has no nvcc");
}

#[test]
fn collect_env_cpu_build_on_windows() {
    let s = read(COLLECT_ENV_WINDOWS_CPU);
    assert_eq!(formats(&s), ["collect_env", "error messages"]);
    assert_eq!(framework(&s, "torch").build, FrameworkBuild::Cpu);
    let t = env(&s).deep.as_ref().unwrap().value().unwrap().torch.clone().unwrap();
    assert_eq!((t.cuda, t.cuda_available), (None, Some(false)));
    assert_eq!(s.platform.platform.os, OsFamily::Windows);
    let dll = &s.cudnn.value().unwrap()[0];
    assert_eq!((dll.kind, dll.major, dll.version), (CudnnKind::Dll, Some(9), None));
    assert_eq!(dll.location, "C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v12.6/bin/cudnn64_9.dll");
    assert_eq!(ids(&s), ["torch.not_compiled_with_cuda"]);
    assert_eq!(gpus(&s)[0].name.as_deref(), Some("NVIDIA GeForce RTX 3060 Laptop GPU"));
}

#[test]
fn nvidia_smi_q_text() {
    let s = read(SMI_Q);
    assert_eq!(formats(&s), ["nvidia-smi -q"]);
    let d = s.driver.value().unwrap();
    assert_eq!((d.version.as_str(), d.cuda_version), ("550.90.07", Some(CudaVersion::new(12, 4))));
    let g = gpus(&s);
    assert_eq!(g.len(), 2);
    assert_eq!(g[0].pci_bus_id.as_deref(), Some("0000:17:00.0"));
    assert_eq!(g[0].architecture.as_deref(), Some("Ada Lovelace"), "printed by -q");
    assert_eq!(g[0].memory_total_bytes, Some(23034 * 1024 * 1024));
    assert_eq!(g[0].processes.as_ref().map(Vec::len), Some(1));
    assert_eq!((g[1].pcie_gen_current, g[1].pcie_gen_max, g[1].pcie_width_current), (Some(1), Some(4), Some(8)));
    assert!(is_unknown(&s.python_envs) && is_unknown(&s.toolkits));
}

#[test]
fn pip_list_with_the_jax_plugin_and_cupy() {
    let s = read(PIP_LIST);
    assert_eq!(formats(&s), ["pip list"]);
    assert_eq!(framework(&s, "jax").build, FrameworkBuild::Cuda { version: Some("12".into()) });
    assert_eq!(framework(&s, "jax-cuda12-plugin").build, FrameworkBuild::Cuda { version: Some("12".into()) });
    assert_eq!(framework(&s, "cupy-cuda12x").build, FrameworkBuild::Cuda { version: Some("12".into()) });
    assert_eq!(framework(&s, "jaxlib").build, FrameworkBuild::Unknown);
    assert_eq!(env(&s).cuda_wheels.len(), 4);
    assert!(env(&s).deep.is_none(), "a package list is not an import");
    assert!(is_unknown(&s.gpus) && is_unknown(&s.driver));
}

#[test]
fn pip_show_gives_one_package() {
    // pytorch/pytorch#77528: `pip show torch` under an nvidia-smi header.
    let s = read("Name: torch\nVersion: 1.11.0+cu113\nSummary: Tensors and Dynamic neural networks in Python\n");
    assert_eq!(formats(&s), ["pip show"]);
    let torch = framework(&s, "torch");
    assert_eq!((torch.version.as_str(), &torch.build), ("1.11.0+cu113", &cuda("11.3")));
    assert!(unrecognised("Name: Version 2\nVersion: of the plan\n"), "prose is not pip show");
}

/// `pip show`'s `Location:` is the site-packages folder of the environment (pip's documented layout,
/// https://pip.pypa.io/en/stable/cli/pip_show/: `Location: /my/env/lib/python2.7/site-packages`; a
/// Windows install prints a drive letter, often in lower case).
#[test]
fn pip_show_location_is_the_environments_site_packages() {
    let block = |name: &str, version: &str, dir: &str| {
        format!(
            "Name: {name}\nVersion: {version}\nSummary: x\nLicense: BSD\nLocation: {dir}\nRequires: \nRequired-by: \n"
        )
    };
    let text = block("torch", "2.4.1+cu121", "/my/env/lib/python3.11/site-packages")
        + "---\n"
        + &block("torchvision", "0.19.1", "/my/env/lib/python3.11/site-packages");
    assert_eq!(env(&read(&text)).site_packages, ["/my/env/lib/python3.11/site-packages"]);
    let windows =
        block("torch", "2.4.1+cu121", r"c:\users\me\appdata\local\programs\python\python311\lib\site-packages");
    assert_eq!(
        env(&read(&windows)).site_packages,
        [r"c:\users\me\appdata\local\programs\python\python311\lib\site-packages"]
    );
    // Without a Location (or with one that is no path) the folder stays unknown.
    let none = "Name: torch\nVersion: 2.4.1+cu121\nLocation: somewhere\n";
    assert_eq!(env(&read(none)).site_packages, ["(pasted)"]);
}

/// uv's install summary (astral-sh/uv#7284, the reporter's `uv sync` on Linux, verbatim): the `+` lines are
/// what is installed. A package removed and installed again at another version (uv prints the `-` line first,
/// loggers.rs sorts by name then kind) is the version installed; a `-` line alone is gone.
#[test]
fn uvs_install_summary_is_a_package_list() {
    let text = ">> uv sync\nUsing Python 3.11.9 interpreter at: /usr/bin/python3.11\nCreating virtualenv at: .venv\n\
                Resolved 11 packages in 754ms\nInstalled 8 packages in 79ms\n + filelock==3.13.1\n + jinja2==3.1.3\n \
                + markupsafe==2.1.5\n + mpmath==1.3.0\n + networkx==3.2.1\n + sympy==1.12\n + torch==2.0.1+cpu\n \
                + typing-extensions==4.9.0\n";
    let s = read(text);
    assert_eq!(formats(&s), ["uv install summary"]);
    let torch = framework(&s, "torch");
    assert_eq!((torch.version.as_str(), &torch.build), ("2.0.1+cpu", &FrameworkBuild::Cpu));
    let replaced = read(
        "Uninstalled 1 package in 40ms\nInstalled 1 package in 2.1s\n - torch==2.2.1+cu118\n + torch==2.1.2\n ~ torchvision==0.16.2\n - xformers==0.0.25\n",
    );
    assert_eq!(framework(&replaced, "torch").version, "2.1.2");
    // xFormers is a companion: a `-` line alone leaves it out of them, a `~` line keeps torchvision.
    let companions: Vec<&str> = env(&replaced).companions.iter().map(|c| c.name.as_str()).collect();
    assert!(!companions.contains(&"xformers") && companions.contains(&"torchvision"), "{companions:?}");
    // A diff's added line and prose after a plus are not uv's.
    for line in ["+torch==2.1.2", "+ see torch==2.1.2 above", "1 + 1 == 2"] {
        assert!(unrecognised(line), "{line}");
    }
}

/// A torch named with its whole version in a sentence (nunchux-ai/nunchaku#15, xmfbit, 2024-11-12, the
/// description's sentence verbatim) is the installed build; a version without PyTorch's build tag, two
/// versions of it, or an install command say nothing of what is installed.
#[test]
fn a_torch_named_with_its_build_in_a_sentence_is_installed() {
    let text = "It wasn't until I set `export CUDA_HOME=/usr/local/cuda-12.4` that I was able to compile it \
                successfully. Moreover, the compiled product can be used with torch 2.4.1+cu121.\n";
    let s = read(text);
    assert!(formats(&s).contains(&"a package version in words"), "{:?}", formats(&s));
    let torch = framework(&s, "torch");
    assert_eq!((torch.version.as_str(), &torch.build), ("2.4.1+cu121", &cuda("12.1")));
    // A list item in backticks, as an issue's environment section writes it.
    assert_eq!(
        framework(&read("- `torch 2.10.0+cu128`, `torch.version.cuda == \"12.8\"`\n"), "torch").version,
        "2.10.0+cu128"
    );
    for other in [
        "the compiled product can be used with torch 2.4.1.\n",
        "it works with torch 2.4.1+cu121 but not with torch 2.5.1+cu124\n",
        "pip install torch 2.4.1+cu121\n",
    ] {
        let s = read(other);
        let envs = s.python_envs.value().map(Vec::as_slice).unwrap_or_default();
        assert!(envs.iter().all(|e| !e.frameworks.iter().any(|f| f.name == "torch")), "{other}");
    }
    // The torch xFormers was built for is not the one installed, which it names after it.
    let xformers = "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n    \
                    PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.1.2+cpu)\n";
    assert_eq!(framework(&read(xformers), "torch").version, "2.1.2+cpu");
}

/// A writer saying they installed a framework's CPU and GPU packages side by side
/// (microsoft/onnxruntime#26996, fzehracetin, 2026-01-13, the description's sentence verbatim) has
/// both in the environment, with no version; advice, a negation, one package twice or another pair
/// say nothing of this machine, and a package list says what is installed.
#[test]
fn both_packages_of_a_framework_named_in_a_sentence_are_installed() {
    let text = "When I install both `onnxruntime` and `onnxruntime-gpu` packages, I can not use the \
                `CUDAExecutionProvider`.\n";
    let s = read(text);
    assert!(formats(&s).contains(&"both packages named in words"), "{:?}", formats(&s));
    assert_eq!(framework(&s, "onnxruntime").build, FrameworkBuild::Cpu);
    assert_eq!(framework(&s, "onnxruntime-gpu").version, "?");
    let paddle = read("I have both paddlepaddle-gpu and paddlepaddle installed\n");
    assert_eq!(framework(&paddle, "paddlepaddle").build, FrameworkBuild::Cpu);
    assert_eq!(framework(&paddle, "paddlepaddle-gpu").version, "?");
    for other in [
        "If you install both onnxruntime and onnxruntime-gpu, uninstall onnxruntime first.\n",
        "I have not installed both onnxruntime and onnxruntime-gpu\n",
        "I didn't install both onnxruntime and onnxruntime-gpu\n",
        "I installed both onnxruntime-gpu and onnxruntime-gpu\n",
        "I installed both onnxruntime and paddlepaddle-gpu\n",
        "I uninstalled both onnxruntime and onnxruntime-gpu\n",
        "Package         Version\n--------------- -------\nonnxruntime-gpu 1.16.1\n\
         I had installed both onnxruntime and onnxruntime-gpu\n",
    ] {
        let s = read(other);
        let envs = s.python_envs.value().map(Vec::as_slice).unwrap_or_default();
        assert!(envs.iter().all(|e| !e.frameworks.iter().any(|f| f.name == "onnxruntime")), "{other}");
    }
}

#[test]
fn pip_freeze_with_a_wheel_url() {
    let s = read(PIP_FREEZE);
    assert_eq!(formats(&s), ["pip freeze"]);
    let torch = framework(&s, "torch");
    assert_eq!((torch.version.as_str(), &torch.build), ("2.8.0.dev20250301+cu128", &cuda("12.8")));
    assert_eq!(framework(&s, "tensorflow").build, FrameworkBuild::Unknown, "a list cannot tell TensorFlow's build");
    assert_eq!(
        env(&s).cuda_wheels.iter().map(|w| w.name.as_str()).collect::<Vec<_>>(),
        ["nvidia-cudnn-cu12", "nvidia-nccl-cu12"]
    );
}

#[test]
fn conda_list_build_strings() {
    let s = read(CONDA_LIST);
    assert_eq!(formats(&s), ["conda list"]);
    let torch = framework(&s, "torch");
    assert_eq!(
        (torch.version.as_str(), &torch.build, torch.cudnn_build.as_deref()),
        ("2.1.0", &cuda("11.8"), Some("8.7.0"))
    );
    let cudnn = &s.cudnn.value().unwrap()[0];
    assert_eq!(
        (cudnn.kind, cudnn.version.unwrap().to_string(), cudnn.cuda_major),
        (CudnnKind::CondaPackage, "8.9.2".to_owned(), Some(11))
    );
    let tk = &s.toolkits.value().unwrap().installs[0];
    assert_eq!((tk.kind, tk.nvcc.as_deref()), (ToolkitKind::Conda, Some("nvcc")));
    assert_eq!(tk.version.unwrap().to_string(), "11.8.89");
}

/// cuDNN's distribution packages as the package managers list them (lines from public READMEs and
/// logs: `dpkg -l | grep libcudnn` of a CUDA 11.8 image, `apt list --installed` of a CUDA 12.8 one,
/// NVIDIA's RHEL 8 repository's package name as `rpm -qa` prints it): the version and the CUDA major
/// each was built for; the `-dev`/`-devel` packages beside them are not copies of their own.
#[test]
fn cudnn_distribution_packages_give_their_version_and_cuda_major() {
    let s = read(
        "ii  libcudnn8                              8.6.0.163-1+cuda11.8              amd64        cuDNN runtime libraries\n\
         ii  libcudnn8-dev                          8.6.0.163-1+cuda11.8              amd64        cuDNN development libraries and headers\n\
         libcudnn9-cuda-12/unknown,now 9.8.0.87-1 amd64 [installed,automatic]\n\
         libcudnn9-dev-cuda-12/unknown,now 9.8.0.87-1 amd64 [installed,automatic]\n\
         libcudnn8-8.7.0.84-1.cuda11.8.x86_64\n",
    );
    let copies: Vec<(CudnnKind, String, Option<u32>)> =
        s.cudnn.value().unwrap().iter().map(|c| (c.kind, c.version.unwrap().to_string(), c.cuda_major)).collect();
    assert_eq!(
        copies,
        [
            (CudnnKind::SystemPackage, "8.6.0".to_owned(), Some(11)),
            (CudnnKind::SystemPackage, "9.8.0".to_owned(), Some(12)),
            (CudnnKind::SystemPackage, "8.7.0".to_owned(), Some(11)),
        ]
    );
    assert_eq!(formats(&s), ["dpkg -l", "apt list", "rpm -qa"]);
    // Not a cuDNN package: the local repository's, and a line that only names it.
    let none = read(
        "ii  cudnn-local-repo-ubuntu2004-8.9.3.28  1.0-1  amd64  cudnn-local repository configuration files\n\
                     sudo apt install libcudnn8=8.9.7.29-1+cuda12.2\n",
    );
    assert!(none.cudnn.value().is_none_or(|c| c.is_empty()), "{:?}", none.cudnn);
}

#[test]
fn jax_environment_info_with_its_nvidia_smi_table() {
    let s = read(JAX_ENV);
    assert_eq!(formats(&s), ["jax.print_environment_info", "nvidia-smi table"]);
    let jax = framework(&s, "jax");
    assert_eq!((jax.version.as_str(), &jax.build), ("0.4.35", &FrameworkBuild::Cuda { version: None }));
    let deep = env(&s).deep.as_ref().unwrap().value().unwrap();
    let j = deep.jax.as_ref().unwrap();
    assert_eq!((j.backend.as_deref(), j.devices.as_ref().map(Vec::len)), (Some("gpu"), Some(2)));
    assert_eq!(env(&s).python_version.as_deref(), Some("3.11.10"));
    let g = gpus(&s);
    assert_eq!(g.len(), 2);
    assert_eq!(g[1].pci_bus_id.as_deref(), Some("0000:3b:00.0"));
    let d = s.driver.value().unwrap();
    assert_eq!((d.version.as_str(), d.cuda_version), ("560.35.03", Some(CudaVersion::new(12, 6))));
    assert_eq!(s.platform.platform.os, OsFamily::Linux);
}

#[test]
fn tensorflow_prints_and_device_log() {
    let s = read(TF_PRINTS);
    assert_eq!(
        formats(&s),
        ["tf.__version__", "tf.sysconfig.get_build_info", "tf.config.list_physical_devices", "device log"]
    );
    let tf = framework(&s, "tensorflow");
    assert_eq!((tf.version.as_str(), &tf.build, tf.cudnn_build.as_deref()), ("2.17.0", &cuda("12.3"), Some("8")));
    let deep = env(&s).deep.as_ref().unwrap().value().unwrap().tensorflow.clone().unwrap();
    assert_eq!(deep.gpus, Some(vec!["/physical_device:GPU:0".to_owned()]));
    assert_eq!(deep.is_cuda_build, Some(true));
    let g = &gpus(&s)[0];
    assert_eq!(g.name.as_deref(), Some("NVIDIA GeForce RTX 3080 Ti"));
    assert_eq!(g.compute_capability, Some(ComputeCapability { major: 8, minor: 6 }), "from the log line");
    assert_eq!(g.pci_bus_id.as_deref(), Some("0000:2b:00.0"));
    assert_eq!(g.architecture.as_deref(), Some("Ampere"));
}

/// TensorFlow's interconnect matrix (tensorflow/tensorflow#24677, four RTX 2080 Ti, its lines): CUDA's peer
/// access answer per ordered pair, every one `N`; a cut or malformed matrix gives nothing.
#[test]
fn tensorflows_interconnect_matrix_gives_cudas_peer_access_answers() {
    let text = "2019-01-03 07:07:31.374026: I tensorflow/core/common_runtime/gpu/gpu_device.cc:971] Device interconnect StreamExecutor with strength 1 edge matrix:
2019-01-03 07:07:31.374063: I tensorflow/core/common_runtime/gpu/gpu_device.cc:977]      0 1 2 3 
2019-01-03 07:07:31.374070: I tensorflow/core/common_runtime/gpu/gpu_device.cc:990] 0:   N N N N 
2019-01-03 07:07:31.374075: I tensorflow/core/common_runtime/gpu/gpu_device.cc:990] 1:   N N N N 
2019-01-03 07:07:31.374079: I tensorflow/core/common_runtime/gpu/gpu_device.cc:990] 2:   N N N N 
2019-01-03 07:07:31.374084: I tensorflow/core/common_runtime/gpu/gpu_device.cc:990] 3:   N N N N 
";
    let access = |text: &str| read(text).topology.value().map(|t| t.peer_access.clone()).unwrap_or_default();
    let all = access(text);
    assert_eq!(all.len(), 12);
    assert!(all.iter().all(|p| !p.can && p.src != p.dst));
    let yes = access(&text.replace("0:   N N N N", "0:   N Y N N"));
    assert!(yes.iter().any(|p| p.src == 0 && p.dst == 1 && p.can));
    let cut: String = text.lines().take(4).map(|l| format!("{l}\n")).collect();
    assert!(access(&cut).is_empty());
    assert!(access(&text.replace("1:   N N N N", "1:   N N X N")).is_empty());
    let huge = format!("Device interconnect StreamExecutor with strength 1 edge matrix:\n{}\n", "0 ".repeat(100_000));
    assert!(access(&huge).is_empty());
}

#[test]
fn nvcc_version_alone_is_a_toolkit() {
    let s = read(
        "$ nvcc --version\nnvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.4, V12.4.131\n",
    );
    assert_eq!(formats(&s), ["nvcc --version"]);
    let tk = &s.toolkits.value().unwrap().installs[0];
    assert_eq!(tk.version.unwrap().to_string(), "12.4.131");
    assert!(is_unknown(&s.driver) && is_unknown(&s.python_envs));
}

#[test]
fn gpu_doctor_report_json_is_taken_whole() {
    let mut inner = Snapshot::unknown(vec![]);
    inner.origin = Origin::ThisMachine;
    inner.taken_at_unix_secs = 1_700_000_000;
    let report = gpu_doctor_model::Report::new(inner.clone(), Vec::new());
    let json = serde_json::to_string_pretty(&report).unwrap();
    let text =
        format!("Here is my report:\n```json\n{json}\n```\nand torch says: Torch not compiled with CUDA enabled\n");
    let s = read(&text);
    assert_eq!(formats(&s), ["gpu-doctor report"]);
    assert_eq!(s.taken_at_unix_secs, 1_700_000_000);
    assert_eq!(ids(&s), ["torch.not_compiled_with_cuda"], "messages around the JSON are added");
    let bare = serde_json::to_string(&inner).unwrap();
    assert_eq!(formats(&read(&bare)), ["gpu-doctor report"]);
    let braces_before = format!("Unable to load any of {{libcudnn_cnn.so.9}}\n> {json}\n");
    let s = read(&braces_before);
    assert_eq!(formats(&s), ["gpu-doctor report"], "a quoted report after a line with braces");
    assert_eq!(ids(&s), ["cudnn.unable_to_load_any"]);
}

/// A real post (pytorch/pytorch#31876): REPL answers in backticks beside collect_env. What only the
/// prints said (is_available) joins collect_env's facts; collect_env's own stay.
#[test]
fn python_prints_beside_collect_env() {
    let s = read(PYTHON_PRINTS);
    assert_eq!(formats(&s), ["nvcc --version", "python prints", "collect_env"]);
    let env = &s.python_envs.value().unwrap()[0];
    let deep = env.deep.as_ref().and_then(|d| d.value()).unwrap();
    let torch = deep.torch.as_ref().unwrap();
    assert_eq!(torch.version.as_deref(), Some("1.2.0"));
    assert_eq!(torch.cuda.as_deref(), Some("10.0"));
    assert_eq!(torch.cuda_available, Some(false));
}

/// The issue's three inputs that read as nothing before: a REPL session, a bare version pair and
/// Docker's missing GPU driver.
#[test]
fn repl_bare_pair_and_docker_lines_are_recognised() {
    let s = read(">>> torch.__version__\n'2.5.1+cpu'\n>>> torch.cuda.is_available()\nFalse\n");
    let env = &s.python_envs.value().unwrap()[0];
    assert_eq!(env.frameworks[0].name, "torch");
    assert_eq!(env.frameworks[0].build, FrameworkBuild::Cpu);
    let s = read("2.3.0+cu121\nFalse\n");
    let env = &s.python_envs.value().unwrap()[0];
    assert_eq!(env.frameworks[0].version, "2.3.0+cu121");
    assert_eq!(env.frameworks[0].build, FrameworkBuild::Cuda { version: Some("12.1".to_owned()) });
    let s =
        read("docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].\n");
    assert_eq!(s.messages[0].id, "docker.no_gpu_device_driver");
}

/// The companion packages (numpy, torchvision, triton, keras, …) of each package-listing format.
fn companions(s: &gpu_doctor_model::Snapshot) -> Vec<(String, String)> {
    env(s).companions.iter().map(|p| (p.name.clone(), p.version.clone())).collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect()
}

#[test]
fn companion_packages_from_every_package_list() {
    // collect_env's "Versions of relevant libraries" block.
    let s = read(COLLECT_ENV_CU124);
    assert_eq!(companions(&s), pairs(&[("numpy", "1.26.4"), ("torchvision", "0.20.1+cu124"), ("triton", "3.1.0")]));
    assert_eq!(companions(&read(PIP_LIST)), pairs(&[("numpy", "2.1.3")]));
    assert_eq!(
        companions(&read(PIP_FREEZE)),
        pairs(&[("keras", "3.6.0"), ("torchvision", "0.22.0.dev20250301+cu128")])
    );
    assert_eq!(companions(&read(CONDA_LIST)), pairs(&[("numpy", "1.26.4"), ("torchvision", "0.16.0")]));
    // A list of companions alone is still an environment; a package outside the list is not one.
    let s = read("absl-py==2.1.0\nflash_attn==2.6.3\n");
    assert_eq!(companions(&s), pairs(&[("flash-attn", "2.6.3")]));
    assert!(env(&s).frameworks.is_empty());
}

/// `conda list` rows without their header and the `name=version=build` export spelling give the
/// build: bioimage-io/core-bioimage-io-python#307's two rows (verbatim: a CPU pytorch from the
/// pytorch channel beside conda-forge's cudatoolkit), pytorch/pytorch#69202's
/// `pytorch=1.9.0=py3.8_cpu_0` (in a `conda env export` list), and a conda-forge CUDA build.
/// Three words of prose are not a package.
#[test]
fn conda_rows_without_a_header_and_the_export_spelling() {
    use gpu_doctor_model::FrameworkBuild;
    let torch = |text: &str| {
        let s = read(text);
        let envs = s.python_envs.value().cloned().unwrap_or_default();
        envs.iter().flat_map(|e| e.frameworks.clone()).find(|f| f.name == "torch").map(|f| (f.version, f.build))
    };
    let rows = "cudatoolkit               11.7.0              ha6f8bbd_10    conda-forge\n\
                pytorch                   1.12.1              py3.9_cpu_0    pytorch\n";
    assert_eq!(torch(rows), Some(("1.12.1".into(), FrameworkBuild::Cpu)));
    assert_eq!(formats(&read(rows)), ["conda list"]);
    assert_eq!(torch("- pytorch=1.9.0=py3.8_cpu_0\n"), Some(("1.9.0".into(), FrameworkBuild::Cpu)));
    assert_eq!(
        torch("pytorch                   2.4.1           cuda120_py311h2b5a6c6_300    conda-forge\n"),
        Some(("2.4.1".into(), FrameworkBuild::Cuda { version: Some("12.0".into()) }))
    );
    assert_eq!(torch("I use torch 2.1 today\n"), None);
    assert_eq!(torch("torch 2.1 with_love\n"), None);
    // The track-features column conda prints before the channel (a `conda list` of a public
    // project's environment, pytorch 1.6.0 from the pytorch channel): the row is still read.
    let featured = "pytorch                   1.6.0               py3.8_cpu_0  [cpuonly]  pytorch\n\
                    pytorch-mutex             1.0                         cpu    pytorch\n";
    assert_eq!(torch(featured), Some(("1.6.0".into(), FrameworkBuild::Cpu)));
    assert_eq!(torch("pytorch 1.6.0 py3.8_cpu_0 [cpuonly] pytorch extra\n"), None, "one word too many");
}

/// Each framework the text's environments hold, as `name version`, sorted.
fn framework_versions(text: &str) -> Vec<String> {
    let s = read(text);
    let envs = s.python_envs.value().cloned().unwrap_or_default();
    let mut got: Vec<String> =
        envs.iter().flat_map(|e| e.frameworks.clone()).map(|f| format!("{} {}", f.name, f.version)).collect();
    got.sort();
    got
}

/// `pip list` rows without their header (PaddlePaddle/PaddleClas#3170's three rows, verbatim): the CPU and GPU
/// packages of one framework both read; a single row of one space, a row with a third word or a version that
/// is no version, is not.
#[test]
fn pip_list_rows_without_a_header() {
    let names = framework_versions;
    let rows = "paddleclas           2.5.1\npaddlepaddle         2.5.2\npaddlepaddle-gpu     2.5.2.post112\n";
    assert_eq!(names(rows), ["paddlepaddle 2.5.2", "paddlepaddle-gpu 2.5.2.post112"]);
    assert!(names("torch 2.1.0\n").is_empty(), "one space, no row beside it");
    assert_eq!(names("onnxruntime-gpu    1.15.0\n"), ["onnxruntime-gpu 1.15.0"]);
    assert!(names("torch    2.1.0 installed\n").is_empty());
    assert!(names("torch    latest\n").is_empty());
}

/// A pip install log: the last `Successfully installed` line is the environment's state (a CPU torch replaced by a CUDA
/// one reads as the CUDA one), `Requirement already satisfied` gives the version in its last parentheses, and a wheel
/// downloaded or taken from the cache its file name's (danielgatis/rembg#461's line, Markdown's bold and all); an
/// uninstall line is none.
#[test]
fn a_pip_install_log_says_what_is_installed() {
    let versions = framework_versions;
    let log = "Successfully installed torch-2.1.0\nSuccessfully uninstalled torch-2.1.0\nSuccessfully installed nvidia-cudnn-cu12-8.9.2.26 torch-2.1.0+cu121\n";
    assert_eq!(versions(log), ["torch 2.1.0+cu121"]);
    let satisfied = "Requirement already satisfied: torch>=2.0 in ./venv/lib/python3.10/site-packages (from -r requirements.txt (line 1)) (2.1.0+cpu)\n";
    assert_eq!(versions(satisfied), ["torch 2.1.0+cpu"]);
    let rembg =
        "  Downloading **onnxruntime**-1.15.0-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl (5.9 MB)\n";
    assert_eq!(versions(rembg), ["onnxruntime 1.15.0"]);
    let url = "Downloading https://download.pytorch.org/whl/cu121/torch-2.1.0%2Bcu121-cp310-cp310-linux_x86_64.whl (2200.6 MB)\n";
    assert_eq!(versions(url), ["torch 2.1.0+cu121"]);
    assert!(versions("Successfully uninstalled torch-2.1.0\nDownloading the model weights (5 GB)\n").is_empty());
}

/// conda's package plan (conda/conda:conda/plan.py `print_dists`: `    %-27s|%17s` of `name-version`
/// and build, then size and channel; conda/core/link.py's `name  channel/subdir::name-version-build`
/// rows): the download table as pytorch/pytorch#59222 shows it (its `cpuonly-1.0 | 0` and
/// `ffmpeg-4.3 | hf484d3e_0` rows verbatim; the pytorch row in the same shape), a CI log's timestamp
/// before a row, the NEW-packages rows and an UPDATED row's record after the arrow. The
/// `pytorch-cuda` metapackage is conda's CUDA (its version is the CUDA release it installs).
#[test]
fn conda_package_plan_rows_give_the_build() {
    use gpu_doctor_model::FrameworkBuild;
    let torch = |text: &str| {
        let s = read(text);
        let envs = s.python_envs.value().cloned().unwrap_or_default();
        envs.iter().flat_map(|e| e.frameworks.clone()).find(|f| f.name == "torch").map(|f| (f.version, f.build))
    };
    let cpu = || Some(FrameworkBuild::Cpu);
    let table = "The following packages will be downloaded:\n\n\
                 \x20   package                    |            build\n\
                 \x20   ---------------------------|-----------------\n\
                 \x20   cpuonly-1.0                |                0           2 KB  pytorch\n\
                 \x20   ffmpeg-4.3                 |       hf484d3e_0         9.9 MB  pytorch\n\
                 \x20   pytorch-1.8.1              |      py3.9_cpu_0        45.6 MB  pytorch\n";
    assert_eq!(torch(table).map(|t| t.1), cpu());
    assert_eq!(formats(&read(table)), ["conda package plan"]);
    let logged = "2022-12-16T16:39:38.3607708Z     pytorch-2.0.0.dev20221216  |      py3.8_cpu_0        84.2 MB  \
                  pytorch-nightly\n";
    assert_eq!(torch(logged), Some(("2.0.0.dev20221216".into(), FrameworkBuild::Cpu)));
    let new = "The following NEW packages will be INSTALLED:\n\n\
               \x20 pytorch            pytorch/linux-64::pytorch-2.1.2-py3.8_cpu_0\n\
               \x20 pytorch-cuda       pytorch/noarch::pytorch-cuda-11.7-h67b0de4_1\n\
               \x20 pytorch-mutex      pytorch/noarch::pytorch-mutex-1.0-cpu\n";
    assert_eq!(torch(new), Some(("2.1.2".into(), FrameworkBuild::Cpu)));
    let s = read(new);
    let toolkits = s.toolkits.value().map(|t| t.installs.clone()).unwrap_or_default();
    assert_eq!(toolkits.iter().filter_map(|t| t.version.map(|v| v.to_string())).collect::<Vec<_>>(), ["11.7"]);
    let cuda = "  pytorch            pytorch/linux-64::pytorch-1.9.1-py3.8_cuda10.2_cudnn7.6.5_0\n";
    assert_eq!(torch(cuda), Some(("1.9.1".into(), FrameworkBuild::Cuda { version: Some("10.2".into()) })));
    let updated =
        "  pytorch   pytorch::pytorch-1.3.1-py3.7_cuda10.1.243_cudnn7.6.3_0 --> pytorch::pytorch-1.4.0-py3.7_cpu_0\n";
    assert_eq!(torch(updated), Some(("1.4.0".into(), FrameworkBuild::Cpu)));
    // The channel unchanged (no record id), and conda before 4.6 (`name:` then version-build, the
    // shape of a public README's `conda create` transcript: `    python:  3.6.6-hd0568c0_1  rpi`).
    let same_channel = "  pytorch    1.3.1-py3.7_cuda10.1.243_cudnn7.6.3_0 --> 1.4.0-py3.7_cpu_0\n";
    assert_eq!(torch(same_channel), Some(("1.4.0".into(), FrameworkBuild::Cpu)));
    let old_conda =
        "The following NEW packages will be INSTALLED:\n\n    pytorch:         1.4.0-py3.7_cpu_0    pytorch\n";
    assert_eq!(torch(old_conda), Some(("1.4.0".into(), FrameworkBuild::Cpu)));
    assert_eq!(torch("pytorch: 2.1.0-rc1\n").map(|t| t.1), Some(FrameworkBuild::Unknown), "a label, not a plan row");
    // Not rows: a name that is not the record's, prose with a bar, an unbounded line.
    assert_eq!(torch("  torchvision        pytorch/linux-64::pytorch-2.1.2-py3.8_cpu_0\n"), None);
    assert_eq!(torch("pytorch-is | great for me\n"), None);
    assert_eq!(torch(&format!("pytorch-2.1.2 | py3.8_cpu_0 {}\n", "x".repeat(100_000))), None);
}

/// An environment file's dependencies (`- cudatoolkit=11.3`, conda's docs "Creating an environment
/// file manually"): conda's toolkit as asked; other spellings (`>=`, no version, prose) are not read.
#[test]
fn conda_environment_file_dependencies() {
    let toolkit = |text: &str| {
        let s = read(text);
        s.toolkits.value().and_then(|t| t.installs.first().map(|i| i.version.map(|v| v.to_string())))
    };
    let file = "name: env\nchannels:\n  - pytorch\ndependencies:\n  - python=3.8\n  - cudatoolkit=11.3\n  - pytorch\n";
    assert_eq!(toolkit(file), Some(Some("11.3".to_owned())));
    assert_eq!(formats(&read(file)), ["conda environment file"]);
    assert_eq!(toolkit("  - cudatoolkit=11.8.*\n"), Some(Some("11.8".to_owned())));
    assert_eq!(toolkit("  - cudatoolkit>=11.3\n"), None);
    assert_eq!(toolkit("- cudatoolkit = the one I had\n"), None);
    assert_eq!(toolkit(&"- cudatoolkit=1".repeat(10_000)), None);
}

#[test]
fn readers_left_out_read_nothing_and_each_name_is_a_reader() {
    // With every reader left out, no sample gives a format but its known messages; with one left out,
    // only that reader's formats go (collect_env's sample keeps the messages and the other readers').
    use crate::parse::paste::{READERS, read_pasted_without};
    for sample in SAMPLES {
        let s = read_pasted_without(sample, kb(), READERS).unwrap();
        let left: Vec<&str> = formats(&s).into_iter().filter(|f| *f != "error messages").collect();
        assert!(left.is_empty(), "{left:?} read with every reader off");
    }
    let all = read(COLLECT_ENV_CU124);
    assert!(
        formats(&all).contains(&"collect_env") && !formats(&all).contains(&"labelled lines"),
        "{:?}",
        formats(&all)
    );
    let without = read_pasted_without(COLLECT_ENV_CU124, kb(), &["collect_env"]).unwrap();
    assert!(!formats(&without).contains(&"collect_env"), "{:?}", formats(&without));
}

#[test]
fn labelled_lines_of_a_filled_in_template_give_the_framework_the_os_and_the_gpu() {
    let s = read(LABELLED_TEMPLATE);
    // `cuDNN version: C:\…\bin\cudnn64_6.dll` names cuDNN 6's DLL.
    assert_eq!(formats(&s), ["labelled lines", "cuDNN library files named"]);
    assert_eq!(s.cudnn.value().map(|c| c.iter().map(|c| c.major).collect::<Vec<_>>()), Some(vec![Some(6)]));
    assert_eq!(env(&s).frameworks.iter().find(|f| f.name == "torch").map(|f| f.version.as_str()), Some("1.1.0"));
    assert_eq!(s.platform.platform.os, OsFamily::Windows);
    assert_eq!(gpus(&s).iter().map(|g| g.name.as_deref().unwrap_or("")).collect::<Vec<_>>(), ["GeForce GTX 1050"]);
    assert!(s.toolkits.value().is_none_or(|t| t.installs.is_empty()), "a typed CUDA version is not a toolkit");
    let f = gpu_doctor_judge::diagnose::diagnose(&s, kb());
    let loud = |f: &&gpu_doctor_model::Finding| {
        matches!(f.severity, gpu_doctor_model::Severity::Error | gpu_doctor_model::Severity::Warning)
    };
    assert!(!f.iter().any(|f| loud(&f)), "a healthy setup: {f:?}");
}

#[test]
fn a_labelled_driver_version_is_the_driver() {
    let s = read(LABELLED_DRIVER);
    assert_eq!(s.driver.value().map(|d| d.version.to_string()), Some("460.89".to_owned()));
    // The label's words, not one template's spelling; a requirement or a CUDA level is no version.
    for (line, torch) in [
        ("- PyTorch: 2.8.0+cu128", Some("2.8.0+cu128")),
        ("**Torch version**: v2.1.0", Some("2.1.0")),
        ("torch: >=2.0", None),
        ("PyTorch / CUDA: 2.1 / 12.1", None),
    ] {
        let s = read_pasted(line, kb()).unwrap();
        let envs = s.python_envs.value().map(Vec::as_slice).unwrap_or_default();
        let got = envs.iter().flat_map(|e| e.frameworks.iter()).find(|f| f.name == "torch");
        assert_eq!(got.map(|f| f.version.as_str()), torch, "{line}");
    }
    for line in ["driver: nvidia", "GPU: 0", "gpu memory usage: 4 GB"] {
        assert!(unrecognised(line), "{line}");
    }
    // A CUDA level under a driver label is no driver version: it is the driver's CUDA level (what
    // cudaDriverGetVersion answers, and deviceQuery prints as `CUDA Driver Version`).
    let s = read("CUDA Driver Version: 12.2");
    assert!(s.driver.value().is_none_or(|d| d.version.to_string() != "12.2"));
    let s = read("Driver Version: 535.54.03\nCUDA Driver Version: 12.2");
    assert_eq!(s.driver.value().map(|d| d.version.to_string()).as_deref(), Some("535.54.03"));
    assert_eq!(s.driver.value().and_then(|d| d.cuda_version).map(|c| c.to_string()).as_deref(), Some("12.2"));
}

/// A labelled companion package (`flash-attn: 2.5.7`, `torchvision: 0.18.1`) is that package; a label
/// that is no package, or a requirement, is not.
#[test]
fn a_labelled_companion_package_is_that_package() {
    let companion = |text: &str, name: &str| {
        let s = read_pasted(text, kb()).ok()?;
        let envs = s.python_envs.value().map(Vec::as_slice).unwrap_or_default();
        envs.iter().flat_map(|e| e.companions.iter()).find(|p| p.name == name).map(|p| p.version.clone())
    };
    // The form of the issue templates that ask for each package on its own line (hiyouga/LLaMA-Factory's
    // and vllm-project/vllm's list `transformers version`, `torch version` lines the same way).
    let text = "torch: 2.4.1\nflash-attn: 2.6.3\nxformers: 0.0.28.post1\ntorchvision: 0.19.1";
    assert_eq!(companion(text, "flash-attn").as_deref(), Some("2.6.3"));
    assert_eq!(companion(text, "xformers").as_deref(), Some("0.0.28.post1"));
    assert_eq!(companion(text, "torchvision").as_deref(), Some("0.19.1"));
    assert_eq!(companion("Flash-Attn: 2.6.3\ntorch: 2.4.1", "flash-attn").as_deref(), Some("2.6.3"));
    // The import name with its underscore, and a label in markdown's underscore emphasis.
    assert_eq!(companion("flash_attn: 2.6.3\ntorch: 2.4.1", "flash-attn").as_deref(), Some("2.6.3"));
    assert_eq!(companion("__xformers__: 0.0.28.post1\ntorch: 2.4.1", "xformers").as_deref(), Some("0.0.28.post1"));
    assert_eq!(companion("flash-attn: >=2.0\ntorch: 2.4.1", "flash-attn"), None);
    assert_eq!(companion("einops: 0.8.0\ntorch: 2.4.1", "einops"), None);
}

/// nvcc's version reported on its command's line, in prose or a comment (the corpus's
/// pytorch_scatter#45 says "my nvcc --version is 10.0"; these are other spellings of the family).
#[test]
fn nvcc_version_said_on_its_commands_line() {
    for (text, want) in [("`nvcc -V`: 11.8", "11.8"), ("and nvcc --version = 12.1.105 here", "12.1.105")] {
        let s = read(text);
        let tk = s.toolkits.value().expect(text);
        assert_eq!(tk.installs[0].version.unwrap().to_string(), want, "{text}");
    }
    assert!(read("nvcc --version: command not found").toolkits.value().is_none());
    assert!(read("run nvcc --version and paste it").toolkits.value().is_none());
}

/// OpenMMLab's collect_env (open-mmlab/mmdetection#4736's, lines cut; mmcv/utils/env.py): its GPU lines (indices
/// joined by a comma for one name), CUDA_HOME, NVCC, PyTorch and the torch.__config__.show() block under `PyTorch
/// compiling details:`.
#[test]
fn openmmlabs_collect_env() {
    let text = "sys.platform: linux\nPython: 3.8.8 (default, Feb 24 2021, 21:46:12) [GCC 7.3.0]\nCUDA available: True\n\
                GPU 0,1: GeForce RTX 3090\nCUDA_HOME: /usr/local/cuda\nNVCC: Cuda compilation tools, release 10.0, \
                V10.0.130\nPyTorch: 1.7.1\nPyTorch compiling details: PyTorch built with:\n  - GCC 7.3\n  - CUDA Runtime \
                11.0\n  - CuDNN 8.0.5\nMMCV: 1.2.7\n";
    let s = read(text);
    let g = gpus(&s);
    assert_eq!(
        g.iter().map(|g| (g.index, g.name.as_deref())).collect::<Vec<_>>(),
        [(0, Some("GeForce RTX 3090")), (1, Some("GeForce RTX 3090"))]
    );
    let torch = framework(&s, "torch");
    assert_eq!((torch.version.as_str(), &torch.build), ("1.7.1", &cuda("11.0")));
    assert_eq!(s.env.vars.get("CUDA_HOME").map(String::as_str), Some("/usr/local/cuda"));
    // Without its `sys.platform:` line a `GPU 0,1:` line is no such list.
    let bare =
        read("GPU 0,1: GeForce RTX 3090\nPyTorch compiling details: PyTorch built with:\n  - CUDA Runtime 11.0\n");
    assert!(s.gpus.value().is_some() && bare.gpus.value().is_none_or(Vec::is_empty));
}

/// nvidia-smi's process box pasted without the table above it, and `ps aux`'s line for its process
/// (ai4d-iasc/trixie#92: an administrator's reply about a node whose GPU 0 a stopped job held).
const PROCESS_BOX: &str = "\
+-----------------------------------------------------------------------------+
| Processes:                                                                  |
|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |
|        ID   ID                                                   Usage      |
|=============================================================================|
|    0   N/A  N/A      1395      C   python                          25081MiB |
+-----------------------------------------------------------------------------+
";

#[test]
fn a_process_box_alone_is_nvidia_smis_and_ps_shows_which_of_its_processes_are_stopped() {
    let s = read(PROCESS_BOX);
    assert_eq!(formats(&s), ["nvidia-smi process table"]);
    assert!(s.stopped_gpu_processes.is_empty() && is_unknown(&s.gpus), "no GPU list from the box alone");
    let ps = "thomased  1395  1.7 14.4 89506440 28604880 pts/2 Tl May25 147:37 python train.py --device=cuda:0";
    let s = read(&format!("{PROCESS_BOX}\n***@***.*** ~]# ps -aux | grep 1395\n{ps}\n"));
    let p = &s.stopped_gpu_processes;
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!((p[0].gpu, p[0].pid, p[0].state.as_str()), (0, 1395, "Tl"));
    assert_eq!(p[0].used_memory_bytes, Some(25081 * 1024 * 1024));
    // Running (`Sl`), another PID, or a line that is not `ps aux`'s: nothing stopped.
    for other in [
        ps.replace(" Tl ", " Sl "),
        ps.replace("1395", "1396"),
        "thomased 1395 Tl python".to_owned(),
        ps.replace("14.4", "x"),
    ] {
        let s = read(&format!("{PROCESS_BOX}\n{other}\n"));
        assert!(s.stopped_gpu_processes.is_empty(), "{other}");
    }
}
