//! CUDA's error 35 on a driver that is not too old: the driver's library is what is missing (in a
//! container: the GPU was not passed; udocker and Singularity: their NVIDIA option; on a host: the
//! library package). Each fires on the text that shows it and stays quiet where the driver may be old.

use crate::diagnose::diagnose;

fn judged(text: &str) -> Vec<gpu_doctor_model::Finding> {
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    diagnose(&gpu_doctor_probes::parse::paste::read_pasted(text, kb).unwrap(), kb)
}

fn fix_of<'a>(findings: &'a [gpu_doctor_model::Finding], id: &str) -> &'a str {
    let f = findings.iter().find(|f| f.id == id).unwrap_or_else(|| panic!("no {id} in {findings:#?}"));
    super::words(f).unwrap()
}

/// The error line as ctranslate2 and ggml print cudart's string.
const ERROR_35: &str =
    "RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime version\n";

#[test]
fn error_35_in_a_container_on_a_sufficient_host_driver_is_a_container_without_the_gpu() {
    // SYSTRAN/faster-whisper#1259: a pod in k8s, the host's nvidia-smi header.
    let text = format!(
        "I'm running the linuxserver/faster-whisper:gpu container within my k8s cluster.\n{ERROR_35}\
         ` NVIDIA-SMI 550.144.03             Driver Version: 550.144.03     CUDA Version: 12.4 `\n"
    );
    let findings = judged(&text);
    let fix = fix_of(&findings, "containers.started_without_gpu");
    assert!(fix.contains("nvidia.com/gpu") && fix.contains("--gpus all"), "{fix}");
    // A driver of CUDA 11 with nothing said of the program's CUDA: a CUDA 12 program would need a
    // newer driver, so nothing is concluded.
    let old = text.replace("550.144.03", "470.256.02").replace("CUDA Version: 12.4", "CUDA Version: 11.4");
    assert!(!judged(&old).iter().any(|f| f.id == "containers.started_without_gpu"));
    // The same on a host is the missing library package.
    let host = text.replace("container within my k8s cluster", "server");
    let findings = judged(&host);
    assert!(fix_of(&findings, "presence.libcuda_missing").contains("libnvidia-compute-550"));
    assert!(!findings.iter().any(|f| f.id == "containers.started_without_gpu"));
}

#[test]
fn error_35_on_a_host_is_the_missing_library_only_where_the_driver_runs_the_toolkit() {
    // deviceQuery's lines (NVIDIA/nvidia-docker#24), a driver of CUDA 9.0 and the CUDA 8.0 toolkit
    // (chahatdeep/ubuntu-for-robotics#3's versions).
    let text = "| NVIDIA-SMI 384.98                 Driver Version: 384.98                    |\n\
                Cuda compilation tools, release 8.0, V8.0.61\n\
                cudaGetDeviceCount returned 35\n\
                -> CUDA driver version is insufficient for CUDA runtime version\n";
    let findings = judged(text);
    let fix = fix_of(&findings, "presence.libcuda_missing");
    assert!(fix.contains("ldconfig -p | grep libcuda.so.1") && fix.contains("libcuda1-384"), "{fix}");
    // A toolkit newer than the driver: the driver is too old after all.
    let newer = text.replace("release 8.0, V8.0.61", "release 10.0, V10.0.130");
    assert!(!judged(&newer).iter().any(|f| f.id == "presence.libcuda_missing"));
}

#[test]
fn udocker_without_its_nvidia_setup_has_no_driver_library_whatever_the_driver() {
    // TabbyML/tabby#998: udocker on Kaggle, no driver shown.
    let text = "!udocker --allow-root install\n\
                !udocker --allow-root run -p 8080:8080 -v $HOME/.tabby:/data tabbyml/tabby serve --device cuda\n\
                CUDA error 35 at ggml-cuda.cu:478: CUDA driver version is insufficient for CUDA runtime version\n";
    let findings = judged(text);
    assert!(fix_of(&findings, "containers.libcuda_not_mounted").contains("udocker setup --nvidia"));
    let set_up = format!("!udocker --allow-root setup --nvidia tabby\n{text}");
    assert!(!judged(&set_up).iter().any(|f| f.id == "containers.libcuda_not_mounted"));
    // The setup step after more udocker lines than the reader keeps as plain markers still counts.
    let pulls = "!udocker --allow-root pull tabbyml/tabby\n".repeat(6);
    let late = format!("{pulls}!udocker --allow-root setup --nvidia tabby\n{text}");
    assert!(!judged(&late).iter().any(|f| f.id == "containers.libcuda_not_mounted"));
    assert!(judged(&format!("{pulls}{text}")).iter().any(|f| f.id == "containers.libcuda_not_mounted"));
}

/// The toolkit's stub libcuda on the loader's path: LD_LIBRARY_PATH holding a `stubs` folder (the
/// fix takes it out), or the text showing the stub loaded; CUDA's error 34 beside it is the same
/// problem, named by the rule's finding. A `-L…/stubs` of a build is link time and says nothing.
#[test]
fn the_stub_libcuda_on_the_loaders_path_is_the_variable_finding() {
    const STUB: &str = "env.ld_library_path_has_stubs";
    let text = "$ echo $LD_LIBRARY_PATH\n/usr/local/cuda-12.4/lib64:/usr/local/cuda-12.4/lib64/stubs\n\
                RuntimeError: CUDA driver error: CUDA driver is a stub library\n";
    let findings = judged(text);
    let ids: Vec<&str> = findings.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, [STUB], "{findings:#?}");
    let f = &findings[0];
    assert_eq!(f.explains, ["observed.cuda.stub_library"]);
    let fix = fix_of(&findings, STUB);
    assert!(fix.contains("stubs") && fix.contains("LD_LIBRARY_PATH"), "{fix}");
    let Some(gpu_doctor_model::PlanRef { target: gpu_doctor_model::PlanTarget::Change { changes, .. }, .. }) = &f.plan
    else {
        panic!("a change of LD_LIBRARY_PATH: {:?}", f.plan)
    };
    assert!(
        changes.iter().any(|c| matches!(c, gpu_doctor_model::Change::SetVar { name, value }
            if name == "LD_LIBRARY_PATH" && value == "/usr/local/cuda-12.4/lib64")),
        "{changes:?}"
    );
    // The stub loaded, as numba's library test shows it (numba/numba#9732).
    let findings =
        judged("Mapped libcuda.so paths:\n\t\t/usr/local/cuda-11.8/targets/x86_64-linux/lib/stubs/libcuda.so\n");
    assert_eq!(findings.iter().map(|f| f.id.as_str()).collect::<Vec<_>>(), [STUB]);
    // The folder an `export` puts on LD_LIBRARY_PATH is named once, though the line also says LD_LIBRARY_PATH
    // holds it.
    let findings = judged("$ export LD_LIBRARY_PATH=/usr/local/cuda/lib64/stubs:$LD_LIBRARY_PATH\n");
    let f = findings.iter().find(|f| f.id == STUB).unwrap_or_else(|| panic!("{findings:#?}"));
    assert_eq!(f.evidence, ["LD_LIBRARY_PATH holds /usr/local/cuda/lib64/stubs"]);
    // A build linking against the stub: nothing.
    let findings = judged("nvcc -o app app.cu -L/usr/local/cuda/lib64/stubs -lcuda\nCUDA Version: 12.4\n");
    assert!(findings.iter().all(|f| f.id != STUB), "{findings:#?}");
}

/// TensorFlow 1.x could not open libcuda.so.1 while the kernel module's version file shows the driver
/// (codalab/codalab-worksheets#591's lines, in the tensorflow/tensorflow image): in a container the library was not
/// mounted; on a host its package is missing; without the driver shown, nothing.
#[test]
fn libcuda_not_opened_beside_a_loaded_kernel_module_is_the_library_missing() {
    let lines = "I tensorflow/stream_executor/dso_loader.cc:102] Couldn't open CUDA library libcuda.so.1. LD_LIBRARY_PATH: \n\
                 I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:356] driver version file contents: \"\"\"NVRM \
                 version: NVIDIA UNIX x86_64 Kernel Module  367.27  Thu Jun  9 18:53:27 PDT 2016\n";
    let in_docker = judged(&format!("When running with `tensorflow/tensorflow` docker image I got this\n{lines}"));
    let fix = fix_of(&in_docker, "containers.libcuda_not_mounted");
    assert!(fix.contains("--gpus all") && fix.contains("nvidia-container-toolkit"), "{fix}");
    let host = judged(lines);
    assert!(fix_of(&host, "presence.libcuda_missing").contains("libnvidia-compute-367"));
    let no_driver = judged(
        "I tensorflow/stream_executor/dso_loader.cc:102] Couldn't open CUDA library libcuda.so.1. LD_LIBRARY_PATH: \n",
    );
    assert!(!no_driver.iter().any(|f| f.id == "presence.libcuda_missing" || f.id == "containers.libcuda_not_mounted"));
}
