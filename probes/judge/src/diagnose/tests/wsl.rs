//! WSL: a Linux driver inside WSL2, the Windows driver's libraries off the loader path, WSL1.

use super::builder::Machine;
use gpu_doctor_model::{Outcome, TraceEntry};

const WSL_LIBCUDA: &str = "/usr/lib/wsl/lib/libcuda.so.1";
const LINUX_LIBCUDA: &str = "/usr/lib/x86_64-linux-gnu/libcuda.so.1";

/// WSL2 with the Windows driver mapped in and a toolkit, so the loader cache is known.
fn wsl2() -> Machine {
    Machine::linux()
        .wsl(2, &["libcuda.so", "libcuda.so.1", "libcuda.so.1.1"])
        .gpu("NVIDIA GeForce RTX 4070", "8.9")
        .driver("555.97", "12.5")
        .toolkit("/usr/local/cuda-12.5", "12.5", &["PATH"])
        .loader_lib("libcudart.so.12", "/usr/local/cuda-12.5/lib64/libcudart.so.12")
}

fn ids(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn each_wsl_problem_gives_exactly_its_finding() {
    let cases: Vec<(&str, Machine, Vec<String>)> = vec![
        ("healthy", wsl2().loader_lib("libcuda.so.1", WSL_LIBCUDA), vec![]),
        ("loader cache not known", Machine::linux().wsl(2, &["libcuda.so.1"]).driver("555.97", "12.5"), vec![]),
        (
            "a Linux libcuda in the loader cache",
            wsl2().loader_lib("libcuda.so.1", WSL_LIBCUDA).loader_lib("libcuda.so.1", LINUX_LIBCUDA),
            ids(&["wsl.linux_driver_installed"]),
        ),
        (
            "a toolkit's stub libcuda",
            wsl2()
                .loader_lib("libcuda.so.1", WSL_LIBCUDA)
                .loader_lib("libcuda.so", "/usr/local/cuda/lib64/stubs/libcuda.so"),
            vec![],
        ),
        (
            "an nvidia kernel module",
            wsl2().loader_lib("libcuda.so.1", WSL_LIBCUDA).kernel_module(|k| k.nvidia_loaded = false),
            ids(&["wsl.linux_driver_installed"]),
        ),
        ("the WSL folder not in the loader cache", wsl2(), ids(&["wsl.driver_libs_not_on_loader_path"])),
        ("the WSL folder on LD_LIBRARY_PATH", wsl2().env("LD_LIBRARY_PATH", "/usr/lib/wsl/lib/"), vec![]),
        (
            "no libcuda in the WSL folder",
            Machine::linux().wsl(2, &[]).gpu("RTX 4070", "8.9").driver("555.97", "12.5"),
            vec![],
        ),
        ("WSL1", Machine::linux().wsl(1, &[]), ids(&["wsl.version_one"])),
        (
            "a Linux libcuda outside WSL is not a WSL matter",
            Machine::linux()
                .gpu("RTX 4070", "8.9")
                .driver("570.124.06", "12.8")
                .toolkit("/usr/local/cuda-12.5", "12.5", &[])
                .loader_lib("libcuda.so.1", LINUX_LIBCUDA),
            vec![],
        ),
    ];
    for (name, m, want) in cases {
        assert_eq!(m.ids(), want, "{name}");
    }
}

#[test]
fn fixes_are_the_wsl_commands() {
    let m = wsl2().loader_lib("libcuda.so.1", LINUX_LIBCUDA);
    let f = m.finding("wsl.linux_driver_installed");
    let fix = super::words(&f).unwrap().to_owned();
    assert!(fix.starts_with(&format!("dpkg -S {LINUX_LIBCUDA} names the package")), "{fix}");
    assert!(fix.contains("sudo apt remove --purge 'nvidia-driver-*'") && fix.contains("sudo ldconfig"), "{fix}");
    // Fedora removes with dnf, which dpkg knows nothing of.
    let mut fedora = wsl2().loader_lib("libcuda.so.1", LINUX_LIBCUDA);
    if let gpu_doctor_model::Probed::Found { value, .. } = &mut fedora.0.system {
        value.os_name = Some("Fedora Linux".into());
    }
    let fix = super::words(&fedora.finding("wsl.linux_driver_installed")).unwrap().to_owned();
    assert!(fix.starts_with("sudo dnf remove 'nvidia-driver*'") && fix.contains("&& sudo ldconfig"), "{fix}");
    assert!(f.evidence.iter().any(|e| e.contains(LINUX_LIBCUDA)), "{:?}", f.evidence);
    // The Linux libcuda also means the WSL one is missing from the cache here.
    assert!(m.ids().contains(&"wsl.driver_libs_not_on_loader_path".to_owned()));

    let register = ["sh", "-c", "echo /usr/lib/wsl/lib > /etc/ld.so.conf.d/ld.wsl.conf"].map(String::from).to_vec();
    assert_eq!(
        wsl2().changes("wsl.driver_libs_not_on_loader_path"),
        [
            gpu_doctor_model::Change::Root { argv: register },
            gpu_doctor_model::Change::Root { argv: vec!["ldconfig".into()] }
        ]
    );

    let argv = ["wsl", "--set-version", "Ubuntu-24.04", "2"].map(String::from).to_vec();
    assert_eq!(Machine::linux().wsl(1, &[]).changes("wsl.version_one"), [gpu_doctor_model::Change::Windows { argv }]);
}

#[test]
fn an_empty_loader_cache_counts_only_when_ldconfig_answered() {
    let empty = || {
        Machine::linux().wsl(2, &["libcuda.so.1"]).driver("555.97", "12.5").toolkit(
            "/usr/local/cuda-12.5",
            "12.5",
            &["PATH"],
        )
    };
    assert_eq!(empty().ids(), Vec::<String>::new());
    let mut answered = empty();
    answered.toolkits_mut().loader_cache_read = true;
    assert_eq!(answered.ids(), ids(&["wsl.driver_libs_not_on_loader_path"]));
    // The trace is a log, not a fact: a line saying ldconfig ran does not stand in for the flag.
    let mut traced = empty();
    traced.0.trace.push(TraceEntry {
        probe: "toolkits".into(),
        method: "run /usr/sbin/ldconfig -p".into(),
        outcome: Outcome::Ok,
        detail: "0 CUDA libraries".into(),
    });
    assert_eq!(traced.ids(), Vec::<String>::new());
}

#[test]
fn wsl_without_a_driver_is_explained_as_wsl() {
    let f = Machine::linux().wsl(2, &[]).finding("presence.no_nvidia_gpu");
    assert!(f.summary.contains("WSL") && super::words(&f).unwrap().contains("Windows driver"), "{f:#?}");
}

/// WSL#8587: the loader cache lists libcuda.so.1 from /usr/lib/wsl/lib, not libcuda.so (a plain copy).
#[test]
fn libcuda_so_left_out_of_the_cache_is_put_on_the_loader_path() {
    const ID: &str = "wsl.libcuda_so_not_in_cache";
    let healthy = || wsl2().loader_lib("libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1");
    assert!(!healthy().ids().contains(&ID.to_owned()), "every WSL2 cache looks so: only a failed open counts");
    let only_so1 = || {
        let mut m = healthy();
        m.0.messages.push(gpu_doctor_model::ObservedMessage {
            id: "ld.libcuda_missing".into(),
            line: "OSError: libcuda.so: cannot open shared object file: No such file or directory".into(),
            values: std::collections::BTreeMap::new(),
        });
        m
    };
    assert!(only_so1().ids().contains(&ID.to_owned()), "{:?}", only_so1().ids());
    assert_eq!(
        only_so1().changes(ID),
        [gpu_doctor_model::Change::SetVar { name: "LD_LIBRARY_PATH".into(), value: "/usr/lib/wsl/lib".into() }]
    );
    let both = only_so1().loader_lib("libcuda.so", "/usr/lib/wsl/lib/libcuda.so");
    assert!(!both.ids().contains(&ID.to_owned()));
    let on_path = only_so1().env("LD_LIBRARY_PATH", "/usr/lib/wsl/lib");
    assert!(!on_path.ids().contains(&ID.to_owned()));
}

/// A WSL guest with no GPU listed whose programs reached no driver (WSL#6772, stable-diffusion#161).
#[test]
fn a_wsl_guest_that_sees_no_gpu_names_wsl_first() {
    const ID: &str = "wsl.gpu_not_exposed";
    let said = |m: Machine, id: &str| {
        let mut m = m;
        m.0.messages.push(gpu_doctor_model::ObservedMessage {
            id: id.into(),
            line: "no CUDA-capable device is detected".into(),
            values: std::collections::BTreeMap::new(),
        });
        m
    };
    let guest = || Machine::linux().wsl(2, &[]);
    assert!(said(guest(), "cuda.no_device").ids().contains(&ID.to_owned()));
    // A Linux driver the text does not show is checked first (NVIDIA/cuml#6218: cuInit's no device in WSL2
    // came from one), then WSL's version, Windows and its driver, a restart of WSL.
    let changes = said(guest(), "cuda.no_device").changes(ID);
    assert_eq!(changes.len(), 4);
    assert!(format!("{:?}", changes[0]).contains("libnvidia-compute"), "{changes:?}");
    // An unrelated message, a GPU listed, or a Linux driver inside WSL (its own finding) say nothing of it.
    assert!(!said(guest(), "torch.driver_too_old").ids().contains(&ID.to_owned()));
    assert!(!said(wsl2(), "cuda.no_device").ids().contains(&ID.to_owned()));
    let linux = said(guest().loader_lib("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"), "cuda.no_device");
    assert!(!linux.ids().contains(&ID.to_owned()), "{:?}", linux.ids());
}

fn with_message(mut m: Machine, id: &str, line: &str) -> Machine {
    m.0.messages.push(gpu_doctor_model::ObservedMessage {
        id: id.into(),
        line: line.into(),
        values: std::collections::BTreeMap::new(),
    });
    m
}

/// Microsoft's floor for CUDA on WSL is kernel 5.10.43.3; releases as `uname -r` prints them.
#[test]
fn a_wsl_kernel_before_5_10_43_3_is_updated_with_wsl_update() {
    const ID: &str = "wsl.kernel_too_old";
    let kernel = |r: &str| Machine::linux().wsl(2, &[]).wsl_kernel(r);
    for old in ["5.10.16.3-microsoft-standard-WSL2", "5.4.72-microsoft-standard-WSL2", "4.19.128-microsoft-standard"] {
        assert!(kernel(old).ids().contains(&ID.to_owned()), "{old}: {:?}", kernel(old).ids());
    }
    for new in
        ["5.10.43.3-microsoft-standard-WSL2", "5.15.153.1-microsoft-standard-WSL2", "6.6.36.3-microsoft-standard-WSL2"]
    {
        assert!(!kernel(new).ids().contains(&ID.to_owned()), "{new}");
    }
    let wsl1 = Machine::linux().wsl(1, &[]).wsl_kernel("4.4.0-19041-Microsoft");
    assert_eq!(wsl1.ids(), ids(&["wsl.version_one"]), "WSL1's kernel is WSL1's finding");
    assert_eq!(
        kernel("5.10.16.3-microsoft-standard-WSL2").changes(ID)[..2],
        [
            gpu_doctor_model::Change::Windows { argv: vec!["wsl".into(), "--update".into()] },
            gpu_doctor_model::Change::Windows { argv: vec!["wsl".into(), "--shutdown".into()] },
        ]
    );
    // An old kernel is one cause of a missing GPU: both are said.
    let no_driver = with_message(
        kernel("5.10.16.3-microsoft-standard-WSL2"),
        "torch.no_driver",
        "RuntimeError: Found no NVIDIA driver on your system.",
    );
    assert!(no_driver.ids().contains(&ID.to_owned()) && no_driver.ids().contains(&"wsl.gpu_not_exposed".to_owned()));
}

#[test]
fn a_tcc_gpu_beside_wsl_is_switched_to_wddm() {
    const ID: &str = "wsl.gpu_in_tcc_mode";
    let tcc = Machine::linux().wsl(2, &[]).wsl_tcc(&["1 Quadro RTX 8000"]);
    let f = tcc.finding(ID);
    assert_eq!(f.severity, gpu_doctor_model::Severity::Error);
    let text = format!("{:?}", tcc.changes(ID));
    assert!(text.contains("nvidia-smi -i 1 -dm 0"), "{text}");
    assert!(!Machine::linux().wsl(2, &[]).ids().contains(&ID.to_owned()));
    assert!(!Machine::linux().wsl(1, &[]).wsl_tcc(&["0 Tesla T4"]).ids().contains(&ID.to_owned()));
}

/// A data-centre board named in words under WSL2 (microsoft/WSL's issue form, as its reporters fill it; the Tesla
/// P40 of ggml-org/llama.cpp#25978, invisible to WSL2 in TCC) is probably in TCC; a GeForce, the same board outside
/// WSL, or one PyTorch reaches inside WSL (NickLucche/stable-diffusion-nvidia-docker#18: "Tesla T4 works fine") is not.
#[test]
fn a_data_centre_board_named_under_wsl2_is_probably_in_tcc() {
    const ID: &str = "wsl.gpu_in_tcc_mode";
    let form = |gpu: &str| format!("### Are you using WSL 1 or WSL 2?\n\n- [x] WSL 2\n- [ ] WSL 1\n\nGPU: {gpu}\n");
    for board in ["Tesla P40", "NVIDIA Tesla T4", "NVIDIA H100 PCIe", "NVIDIA A100-PCIE-40GB"] {
        assert!(super::pasted_ids(&form(board)).contains(&ID.to_owned()), "{board}");
    }
    for other in ["NVIDIA GeForce RTX 4090", "NVIDIA RTX A4000", "Quadro P4000"] {
        assert!(!super::pasted_ids(&form(other)).contains(&ID.to_owned()), "{other}");
    }
    assert!(!super::pasted_ids("GPU: Tesla P40\n").contains(&ID.to_owned()), "not WSL");
    let reached = format!("{}>>> torch.cuda.is_available()\nTrue\n", form("Tesla T4"));
    assert!(!super::pasted_ids(&reached).contains(&ID.to_owned()), "CUDA reaches it");
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let snap = gpu_doctor_probes::parse::paste::read_pasted(&form("Tesla P40"), kb).unwrap();
    let f = crate::diagnose::diagnose(&snap, kb).into_iter().find(|f| f.id == ID).unwrap();
    let fix = format!("{:?}", f.plan);
    assert!(fix.contains("-dm 0") && fix.contains("--shutdown"), "{fix}");
}

/// The person saying they installed a GPU driver inside WSL is a Linux driver there, with the sentence cited.
#[test]
fn a_driver_installed_inside_wsl_said_in_words_is_a_linux_driver() {
    const ID: &str = "wsl.linux_driver_installed";
    let mut m = Machine::linux().wsl(2, &[]);
    assert!(!m.ids().contains(&ID.to_owned()));
    if let Some(w) = m.0.platform.wsl.as_mut() {
        w.linux_driver_said = Some("Then I installed the NVIDIA driver in WSL as well.".into());
    }
    let f = m.finding(ID);
    assert!(f.evidence.iter().any(|e| e.contains("installed the NVIDIA driver in WSL")), "{f:#?}");
}

/// pynvml's NotSupported inside WSL is WSL's NVML, an explanation; outside WSL it stays the catalogue's.
#[test]
fn nvml_not_supported_inside_wsl_is_explained_not_an_error() {
    const ID: &str = "wsl.nvml_query_unsupported";
    let line = "pynvml.nvml.NVMLError_NotSupported: Not Supported";
    let inside = with_message(Machine::linux().wsl(2, &[]), "nvml.not_supported", line);
    let f = inside.finding(ID);
    assert_eq!(f.severity, gpu_doctor_model::Severity::Info);
    assert!(super::words(&f).unwrap().contains("NVMLError_NotSupported"), "{f:#?}");
    let outside = with_message(Machine::linux(), "nvml.not_supported", line);
    assert!(!outside.ids().contains(&ID.to_owned()), "{:?}", outside.ids());
}

/// vLLM's own warning says WSL (its in_wsl reads uname), so no other WSL fact is needed.
#[test]
fn vllms_pin_memory_warning_is_explained_as_wsls_limit() {
    const ID: &str = "wsl.pinned_memory_limited";
    let line = "WARNING 05-01 16:50:31 [interface.py:686] Using 'pin_memory=False' as WSL is detected. This may slow down the performance.";
    let m = with_message(Machine::linux(), "vllm.pin_memory_off_wsl", line);
    let f = m.finding(ID);
    assert_eq!(f.severity, gpu_doctor_model::Severity::Info);
    assert!(!Machine::linux().wsl(2, &[]).ids().contains(&ID.to_owned()));
}

/// A driver package the text shows installed inside WSL is the Linux driver finding, with dpkg's
/// removal; a WSL1 guest keeps its own finding.
#[test]
fn a_driver_package_installed_inside_wsl_is_the_linux_driver_finding() {
    const ID: &str = "wsl.linux_driver_installed";
    let mut m = Machine::linux().wsl(2, &[]);
    if let Some(w) = m.0.platform.wsl.as_mut() {
        w.linux_driver_packages = vec!["cuda-drivers".into()];
    }
    let f = m.finding(ID);
    assert!(f.evidence.iter().any(|e| e.contains("cuda-drivers")), "{:?}", f.evidence);
    assert!(!Machine::linux().wsl(2, &[]).ids().contains(&ID.to_owned()));
}

/// A Linux driver's library the text shows in a distribution folder (a loader error, numba's or
/// ollama's library log) is the Linux driver finding, with dpkg naming its package; the Linux NVML in
/// the loader cache is one too (ollama/ollama#1897), a stub is not.
#[test]
fn a_linux_driver_library_shown_inside_wsl_is_the_linux_driver_finding() {
    const ID: &str = "wsl.linux_driver_installed";
    const NVML: &str = "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.545.29.06";
    let mut m = wsl2().loader_lib("libcuda.so.1", WSL_LIBCUDA);
    if let Some(w) = m.0.platform.wsl.as_mut() {
        w.linux_driver_libs = vec![NVML.into()];
    }
    let f = m.finding(ID);
    assert!(f.evidence.iter().any(|e| e.contains(NVML)), "{:?}", f.evidence);
    let fix = super::words(&f).unwrap().to_owned();
    assert!(fix.starts_with(&format!("dpkg -S {NVML} names the package")), "{fix}");
    let cached = wsl2().loader_lib("libcuda.so.1", WSL_LIBCUDA).loader_lib("libnvidia-ml.so.1", NVML);
    assert!(cached.ids().contains(&ID.to_owned()));
    let stub = wsl2()
        .loader_lib("libcuda.so.1", WSL_LIBCUDA)
        .loader_lib("libnvidia-ml.so", "/usr/local/cuda/lib64/stubs/libnvidia-ml.so");
    assert!(!stub.ids().contains(&ID.to_owned()));
}

/// A WSL2 kernel line (`uname -a` inside WSL 2, as microsoft/WSL's issue template asks for it).
const WSL2_UNAME: &str =
    "Linux DESKTOP-1 5.15.153.1-microsoft-standard-WSL2 #1 SMP Fri Mar 29 23:14:13 UTC 2024 x86_64 GNU/Linux\n";

/// A graphics-interop call failing inside WSL is WSL's missing interop. The sample is what cuda-samples'
/// simpleGL prints when its registration fails: NVIDIA/cuda-samples:Common/helper_cuda.h `check` (`CUDA error
/// at %s:%d code=%d(%s) "%s"`) around `cudaGraphicsGLRegisterBuffer(vbo_res, *vbo, vbo_res_flags)` of
/// Samples/5_Domain_Specific/simpleGL/simpleGL.cu. Not outside WSL, not the call written in code.
#[test]
fn a_graphics_interop_failure_inside_wsl_is_unsupported_interop() {
    const ID: &str = "wsl.graphics_interop_unsupported";
    let failed = "CUDA error at simpleGL.cu:421 code=304(cudaErrorOperatingSystem) \
                  \"cudaGraphicsGLRegisterBuffer(vbo_res, *vbo, vbo_res_flags)\"\n";
    assert!(super::pasted_ids(&format!("{WSL2_UNAME}{failed}")).contains(&ID.to_owned()));
    let driver_api = "cuGraphicsEGLRegisterImage returned\nCUDA_ERROR_OPERATING_SYSTEM\n";
    assert!(super::pasted_ids(&format!("{WSL2_UNAME}{driver_api}")).contains(&ID.to_owned()), "the next line fails");
    assert!(!super::pasted_ids(failed).contains(&ID.to_owned()), "not WSL");
    let code = "    checkCudaErrors(cudaGraphicsGLRegisterBuffer(vbo_res, *vbo, vbo_res_flags));\n";
    assert!(!super::pasted_ids(&format!("{WSL2_UNAME}{code}")).contains(&ID.to_owned()), "a call in code");
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let snap = gpu_doctor_probes::parse::paste::read_pasted(&format!("{WSL2_UNAME}{failed}"), kb).unwrap();
    let f = crate::diagnose::diagnose(&snap, kb).into_iter().find(|f| f.id == ID).unwrap();
    assert_eq!(f.severity, gpu_doctor_model::Severity::Error);
    assert!(super::words(&f).unwrap().contains("native Windows or native Linux"), "{f:#?}");
}

/// A pinned host allocation running out of memory inside WSL is WSL's pinned-memory limit, whatever program
/// printed it: ggml's own line (ggml-org/llama.cpp:ggml/src/ggml-cuda/ggml-cuda.cu, ggml_cuda_host_malloc
/// `%s: failed to allocate %.2f MiB of pinned memory: %s`), PyTorch's DataLoader pin thread
/// (torch/utils/data/_utils/pin_memory.py, `_pin_memory_loop`) then the runtime's out of memory. Not outside
/// WSL, not an out of memory far from any pinning, and vLLM's own warning gives it once.
#[test]
fn a_pinned_allocation_out_of_memory_inside_wsl_is_the_pinned_limit() {
    const ID: &str = "wsl.pinned_memory_limited";
    let ggml = "ggml_cuda_host_malloc: failed to allocate 8192.00 MiB of pinned memory: out of memory\n";
    let ids = super::pasted_ids(&format!("{WSL2_UNAME}{ggml}"));
    assert!(ids.contains(&ID.to_owned()), "{ids:?}");
    let torch = "  File \"/usr/lib/python3/dist-packages/torch/utils/data/_utils/pin_memory.py\", line 31, in _pin_memory_loop\n\
                 \x20   data = pin_memory(data, device)\n\
                 RuntimeError: CUDA error: out of memory\n";
    assert!(super::pasted_ids(&format!("{WSL2_UNAME}{torch}")).contains(&ID.to_owned()));
    assert!(!super::pasted_ids(ggml).contains(&ID.to_owned()), "not WSL");
    // No pinning near the out of memory, or only a setting: not the failed pinned allocation, only the note that an
    // out of memory under WSL with GPU memory left is the pinned limit.
    let general = |text: &str| {
        super::pasted_findings(text)
            .into_iter()
            .find(|f| f.id == ID)
            .is_some_and(|f| f.summary.starts_with("Out of memory"))
    };
    let far = format!("{WSL2_UNAME}pin_memory=True\n{}RuntimeError: CUDA error: out of memory\n", "step\n".repeat(20));
    assert!(general(&far), "no pinning near the out of memory");
    let setting = format!(
        "{WSL2_UNAME}DataLoader(dataset, batch_size=64, pin_memory=True)\nRuntimeError: CUDA error: out of memory\n"
    );
    assert!(general(&setting), "a setting is no allocation");
    let vllm = "WARNING 05-01 16:50:31 [interface.py:686] Using 'pin_memory=False' as WSL is detected. This may slow \
                down the performance.\n";
    let both = super::pasted_ids(&format!("{WSL2_UNAME}{vllm}{ggml}"));
    assert_eq!(both.iter().filter(|i| *i == ID).count(), 1, "{both:?}");
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let snap = gpu_doctor_probes::parse::paste::read_pasted(&format!("{WSL2_UNAME}{ggml}"), kb).unwrap();
    let f = crate::diagnose::diagnose(&snap, kb).into_iter().find(|f| f.id == ID).unwrap();
    assert!(super::words(&f).unwrap().contains("GGML_CUDA_NO_PINNED=1"), "{f:#?}");
}

/// CUDA's 801 inside WSL 2 is WSL's limited managed memory; 304's "operation not supported on this OS" is
/// not 801, and outside WSL 801 is not a WSL matter. Samples: PyTorch's `CUDA error: <cudaGetErrorString>`
/// for 801 (NVIDIA/cuda-python runtime_cuda_error_explanations.py entry 801: `operation not supported`) and
/// RMM's RMM_CUDA_TRY format (rapidsai/rmm:include/rmm/detail/error.hpp: `CUDA error at: FILE:LINE: NAME
/// STRING`; the file and line here are written for the test).
#[test]
fn operation_not_supported_inside_wsl2_is_limited_managed_memory() {
    const ID: &str = "wsl.unified_memory_limited";
    for line in [
        "RuntimeError: CUDA error: operation not supported\n",
        "rmm::cuda_error: CUDA error at: rmm/mr/device/managed_memory_resource.hpp:67: cudaErrorNotSupported operation not supported\n",
    ] {
        assert!(super::pasted_ids(&format!("{WSL2_UNAME}{line}")).contains(&ID.to_owned()), "{line}");
        assert!(!super::pasted_ids(line).contains(&ID.to_owned()), "not WSL: {line}");
    }
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let pasted = format!("{WSL2_UNAME}RuntimeError: CUDA error: operation not supported\n");
    let snap = gpu_doctor_probes::parse::paste::read_pasted(&pasted, kb).unwrap();
    let f = crate::diagnose::diagnose(&snap, kb).into_iter().find(|f| f.id == ID).unwrap();
    assert!(super::words(&f).unwrap().contains("rmm.reinitialize(managed_memory=False)"), "{f:#?}");
    let os = "cudaErrorOperatingSystem: OS call failed or operation not supported on this OS\n";
    assert!(!super::pasted_ids(&format!("{WSL2_UNAME}{os}")).contains(&ID.to_owned()));
    let wsl1 = "Linux DESKTOP-1 4.4.0-19041-Microsoft #1237-Microsoft Sat Sep 11 14:32:00 PST 2021 x86_64 GNU/Linux\n";
    let ids = super::pasted_ids(&format!("{wsl1}RuntimeError: CUDA error: operation not supported\n"));
    assert!(!ids.contains(&ID.to_owned()) && ids.contains(&"wsl.version_one".to_owned()), "{ids:?}");
}

/// A GPU the person names in a sentence is the Windows machine's: that the WSL guest sees it, only a
/// program's list says, so a guest whose programs find no driver still names WSL first.
#[test]
fn a_gpu_named_in_words_is_not_a_gpu_the_wsl_guest_sees() {
    const ID: &str = "wsl.gpu_not_exposed";
    let text =
        "I run it under WSL2 and I am using an RTX 3080.\nRuntimeError: Found no NVIDIA driver on your system.\n";
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let snap = gpu_doctor_probes::parse::paste::read_pasted(text, kb).unwrap();
    assert_eq!(snap.gpus.value().map(Vec::len), Some(1), "{:?}", snap.gpus);
    let f = crate::diagnose::diagnose(&snap, kb).into_iter().find(|f| f.id == ID).expect("the WSL finding");
    assert!(f.evidence.iter().any(|e| e.contains("no program lists a GPU")), "{:?}", f.evidence);
    // nvidia-smi's list is the guest's own.
    let listed = format!("{text}GPU 0: NVIDIA GeForce RTX 3080 (UUID: GPU-5c6b0b1e)\n");
    assert!(!super::pasted_ids(&listed).contains(&ID.to_owned()));
}

/// nvidia-container-cli's 'file exists' on a driver library inside WSL 2 is the image shipping driver
/// files, with the in-image path to remove; outside WSL, or on a file that is no driver library, it is not.
/// Sample: NVIDIA/nvidia-docker#1699 (Modulus 22.09 under WSL2, Ubuntu 20.04).
#[test]
fn a_driver_library_the_image_ships_inside_wsl_is_removed_from_the_image() {
    const ID: &str = "wsl.image_ships_driver_libraries";
    let path = "/var/lib/docker/overlay2/017a3afa10308f38c995c9b4e9b89b8c736143b33f232f0e4ea37d14094fc30b/merged/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1";
    let line = format!("nvidia-container-cli: mount error: file creation failed: {path}: file exists: unknown.");
    let with_path = |m: Machine, p: &str| {
        let mut m = with_message(m, "container.mount_file_exists", &line);
        if let Some(last) = m.0.messages.last_mut() {
            last.values.insert("path".into(), p.into());
        }
        m
    };
    let inside = with_path(Machine::linux().wsl(2, &[]), path);
    let f = inside.finding(ID);
    let fix = f.fix.clone().or_else(|| f.plan.as_ref().and_then(|p| p.unplanned.clone())).unwrap_or_default();
    assert!(fix.contains("Remove libnvidia-ml.so.1 from the image"), "{fix}");
    assert!(fix.contains("rm -rf /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"), "{fix}");
    assert!(!inside.ids().contains(&"observed.container.mount_file_exists".to_owned()), "{:?}", inside.ids());
    let outside = with_path(Machine::linux(), path);
    assert!(!outside.ids().contains(&ID.to_owned()), "{:?}", outside.ids());
    let not_driver = with_path(Machine::linux().wsl(2, &[]), "/var/lib/docker/overlay2/x/merged/etc/hosts");
    assert!(!not_driver.ids().contains(&ID.to_owned()), "{:?}", not_driver.ids());
}

/// WSL's nvidia-smi dying of a segmentation fault with a Windows driver after 537 (or none shown) is the
/// known driver fault, a warning; with a 537.xx driver it has another cause and is not said
/// (microsoft/WSL#11870: 560.70 crashes, 537.xx works).
#[test]
fn wsls_nvidia_smi_segfault_with_a_newer_windows_driver_is_the_known_crash() {
    const ID: &str = "wsl.nvidia_smi_crash_known_driver";
    let crash = |m: Machine| {
        let mut m = m;
        if let Some(w) = m.0.platform.wsl.as_mut() {
            w.smi_crash = Some("Segmentation fault (core dumped)".into());
        }
        m
    };
    let newer = crash(Machine::linux().wsl(2, &[]).driver("560.70", "12.6"));
    let f = newer.finding(ID);
    assert_eq!(f.severity, gpu_doctor_model::Severity::Warning);
    assert!(f.evidence.iter().any(|e| e.contains("560.70")), "{f:#?}");
    assert!(crash(Machine::linux().wsl(2, &[])).ids().contains(&ID.to_owned()));
    let older = crash(Machine::linux().wsl(2, &[]).driver("537.58", "12.2"));
    assert!(!older.ids().contains(&ID.to_owned()), "{:?}", older.ids());
    assert!(!Machine::linux().wsl(2, &[]).driver("560.70", "12.6").ids().contains(&ID.to_owned()));
}

/// nvidia-smi not found by a shell inside WSL 2 is its folder missing from that shell's PATH, with the fix that names
/// /usr/lib/wsl/lib (microsoft/WSL#8794: zsh after an SSH login); the same line outside WSL is not WSL's.
#[test]
fn nvidia_smi_not_found_inside_wsl_is_its_folder_off_the_path() {
    const ID: &str = "wsl.nvidia_smi_not_on_path";
    let ssh = "Welcome to Ubuntu 20.04 LTS (GNU/Linux 5.10.16.3-microsoft-standard-WSL2 x86_64)\n\
               (base) ➜  ~ nvidia-smi\nzsh: command not found: nvidia-smi";
    let f = super::pasted_findings(ssh).into_iter().find(|f| f.id == ID).expect("WSL's nvidia-smi off PATH");
    assert_eq!(f.severity, gpu_doctor_model::Severity::Warning);
    assert!(f.fix.as_deref().is_some_and(|x| x.contains("/usr/lib/wsl/lib") && x.contains("secure_path")), "{f:#?}");
    let native = "Welcome to Ubuntu 20.04 LTS (GNU/Linux 5.15.0-91-generic x86_64)\nzsh: command not found: nvidia-smi";
    assert!(!super::pasted_ids(native).contains(&ID.to_owned()), "{:?}", super::pasted_ids(native));
}

/// A data-centre board named in a sentence under WSL is taken like one named in an issue form: no program
/// in WSL lists it. Sample: NickLucche/stable-diffusion-nvidia-docker#18 (two Tesla P40 under WSL on
/// Windows 11); a GeForce named the same way is not in TCC.
#[test]
fn a_data_centre_board_named_in_a_sentence_under_wsl_is_probably_in_tcc() {
    const ID: &str = "wsl.gpu_in_tcc_mode";
    let said = "Hi, I recently got two Tesla P40 GPUs which I was hoping to use with this. From my understanding, \
                the Tesla P40s need the vGPU license in order to pass through via WSL.";
    assert!(super::pasted_ids(said).contains(&ID.to_owned()), "{:?}", super::pasted_ids(said));
    let geforce = said.replace("two Tesla P40 GPUs", "an RTX 3090");
    assert!(!super::pasted_ids(&geforce).contains(&ID.to_owned()), "{:?}", super::pasted_ids(&geforce));
}

/// 801 under WSL 2 on a GPU before Volta is that GPU's limit there, by its listed capability or by the
/// architecture the text names; on a newer GPU, or none known, it stays limited managed memory.
#[test]
fn operation_not_supported_on_a_gpu_before_volta_inside_wsl2_is_that_gpus_limit() {
    const ID: &str = "wsl.gpu_arch_below_volta_limited";
    const MANAGED: &str = "wsl.unified_memory_limited";
    let failed = |m: Machine| {
        let mut m = m;
        if let Some(w) = m.0.platform.wsl.as_mut() {
            w.not_supported_error = Some("DriverError(CUDA_ERROR_NOT_SUPPORTED, \"operation not supported\")".into());
        }
        m
    };
    let pascal = failed(Machine::linux().wsl(2, &[]).gpu("NVIDIA GeForce GTX 1080", "6.1").driver("560.94", "12.6"));
    let ids = pascal.ids();
    assert!(ids.contains(&ID.to_owned()) && !ids.contains(&MANAGED.to_owned()), "{ids:?}");
    let both = failed(
        Machine::linux()
            .wsl(2, &[])
            .gpu("NVIDIA GeForce GTX 1080", "6.1")
            .gpu("NVIDIA GeForce RTX 3060", "8.6")
            .driver("560.94", "12.6"),
    );
    assert!(!both.ids().contains(&ID.to_owned()), "a newer GPU beside it: {:?}", both.ids());
    let ampere = failed(Machine::linux().wsl(2, &[]).gpu("NVIDIA GeForce RTX 3060", "8.6").driver("560.94", "12.6"));
    let ids = ampere.ids();
    assert!(!ids.contains(&ID.to_owned()) && ids.contains(&MANAGED.to_owned()), "{ids:?}");
    let error = "RuntimeError: CUDA error: operation not supported\n";
    // rapidsai/cudf#9753's description.
    let said = "I can run RAPIDS on WSL2 with a Pascal GPU (like the one on my laptop)\n";
    let ids = super::pasted_ids(&format!("{WSL2_UNAME}{said}{error}"));
    assert!(ids.contains(&ID.to_owned()) && !ids.contains(&MANAGED.to_owned()), "{ids:?}");
    let ids = super::pasted_ids(&format!("{WSL2_UNAME}{error}"));
    assert!(!ids.contains(&ID.to_owned()) && ids.contains(&MANAGED.to_owned()), "{ids:?}");
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let snap = gpu_doctor_probes::parse::paste::read_pasted(&format!("{WSL2_UNAME}{said}{error}"), kb).unwrap();
    let f = crate::diagnose::diagnose(&snap, kb).into_iter().find(|f| f.id == ID).unwrap();
    assert!(super::words(&f).unwrap().contains("compute capability 7.0 (Volta)"), "{f:#?}");
}

/// Taichi's fallback to the CPU inside WSL is the unversioned libcuda.so its loader opens
/// (taichi-dev/taichi:taichi/backends/cuda/cuda_driver.cpp), put on the loader path; outside WSL the line
/// stays the catalogue's. Line: taichi-dev/taichi#8469 (Taichi 1.7.0).
#[test]
fn taichis_cpu_fallback_inside_wsl_is_libcuda_so_off_the_loader_path() {
    const ID: &str = "wsl.libcuda_so_not_in_cache";
    let line = "[W 01/29/24 10:00:00.000 1234] [misc.py:adaptive_arch_select@758] Arch=[<Arch.cuda: 3>] is not supported, falling back to CPU\n";
    let ids = super::pasted_ids(&format!("{WSL2_UNAME}{line}"));
    assert!(ids.contains(&ID.to_owned()), "{ids:?}");
    assert!(!ids.contains(&"observed.taichi.cuda_arch_not_supported".to_owned()), "{ids:?}");
    let ids = super::pasted_ids(line);
    assert!(
        !ids.contains(&ID.to_owned()) && ids.contains(&"observed.taichi.cuda_arch_not_supported".to_owned()),
        "{ids:?}"
    );
}

/// bitsandbytes 0.35 to 0.40 opens `libcuda.so` by that name (cuda_setup/main.py @0.38.0): its warning inside WSL is
/// the unversioned name missing from the loader cache, with the fix that names /usr/lib/wsl/lib.
#[test]
fn bitsandbytes_libcuda_warning_inside_wsl_is_the_unversioned_name() {
    const ID: &str = "wsl.libcuda_so_not_in_cache";
    let line = "CUDA SETUP: WARNING! libcuda.so not found! Do you have a CUDA driver installed? If you are on a \
                cluster, make sure you are on a CUDA machine!";
    let f = super::pasted_findings(&format!("- [X] WSL 2\n{line}")).into_iter().find(|f| f.id == ID).expect("WSL");
    assert!(f.evidence.iter().any(|e| e.contains("libcuda.so not found")), "{f:#?}");
    assert!(!super::pasted_ids(line).contains(&ID.to_owned()), "outside WSL it is the catalogue's line");
}

/// numba and Taichi open `libcuda.so` by that name first, which WSL's loader cache does not list: under WSL their
/// cuInit answering no device came from another libcuda.so, a Linux driver's (rapidsai/cuml#6218), unless
/// LD_LIBRARY_PATH already puts /usr/lib/wsl/lib (or a stubs folder) first.
#[test]
fn numba_or_taichi_seeing_no_device_inside_wsl_opened_a_linux_libcuda() {
    const ID: &str = "wsl.linux_driver_installed";
    let numba = "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: Call to cuInit results in \
                 CUDA_ERROR_NO_DEVICE (100)\n";
    let taichi = "[E 12/20/24 08:45:40.689 2984] [cuda_driver.h:operator()@92] CUDA Error CUDA_ERROR_NO_DEVICE: no \
                  CUDA-capable device is detected while calling init (cuInit)\n";
    for line in [numba, taichi] {
        let found = super::pasted_findings(&format!("{WSL2_UNAME}{line}"));
        let f = found.iter().find(|f| f.id == ID).unwrap_or_else(|| panic!("{found:#?}"));
        assert!(f.evidence.iter().any(|e| e.contains("by the name libcuda.so first")), "{f:#?}");
        // It replaces the guess that WSL hands over no GPU.
        assert!(!found.iter().any(|f| f.id == "wsl.gpu_not_exposed"), "{found:#?}");
        // Outside WSL, or with WSL's folder already first on the loader path, it says nothing of a Linux driver.
        assert!(!super::pasted_ids(line).contains(&ID.to_owned()));
        let with_path = format!("{WSL2_UNAME}LD_LIBRARY_PATH=/usr/lib/wsl/lib\n{line}");
        assert!(!super::pasted_ids(&with_path).contains(&ID.to_owned()), "{with_path}");
    }
    // Another error from the same call (the stub's) is not this.
    let stub = numba.replace("CUDA_ERROR_NO_DEVICE (100)", "CUDA_ERROR_STUB_LIBRARY (34)");
    assert!(!super::pasted_ids(&format!("{WSL2_UNAME}{stub}")).contains(&ID.to_owned()));
}

/// nvidia-container-cli's `WSL environment detected but no adapters were found` (libnvidia-container nvc_init: dxcore
/// loaded, no GPU adapter in it) is WSL handing over no GPU, on any platform the text shows: Docker Desktop on
/// Windows runs containers in its own WSL 2 VM (AIXCL/aixcl#142, "Running on Windows 11 (not using WSL)").
#[test]
fn no_adapters_from_the_container_cli_is_wsl_handing_over_no_gpu() {
    const ID: &str = "wsl.gpu_not_exposed";
    let line = "Error response from daemon: nvidia-container-cli: initialization error: WSL environment detected but \
                no adapters were found\n";
    for text in [line.to_owned(), format!("{WSL2_UNAME}{line}")] {
        let found = super::pasted_findings(&text);
        let f: Vec<_> = found.iter().filter(|f| f.id == ID).collect();
        assert_eq!(f.len(), 1, "once: {found:#?}");
        assert!(f[0].evidence.iter().any(|e| e.contains("no GPU adapter")), "{f:#?}");
    }
    // Another initialization error is not this.
    let other = "nvidia-container-cli: initialization error: nvml error: driver not loaded\n";
    assert!(!super::pasted_ids(other).contains(&ID.to_owned()));
}

/// Inside WSL 2 the driver's libraries come only from the Windows driver through /usr/lib/wsl/lib, so
/// nvidia-container-cli failing to load libnvidia-ml.so.1 there is WSL handing over no GPU; a Windows 10
/// release before 21H2 beside it is said (AbdBarho/stable-diffusion-webui-docker#129, verbatim lines: "you need
/// >= 2021H2"). Outside WSL the same line is not this finding.
#[test]
fn the_driver_library_missing_inside_wsl_is_wsl_handing_over_no_gpu() {
    const ID: &str = "wsl.gpu_not_exposed";
    let cli = "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared \
               object file: no such file or directory: unknown\n";
    let text = format!("{cli}I'm using WSL2 (latest Docker Desktop).\nWindows 10 Pro, 20H2, 19042.928\n");
    let found = super::pasted_findings(&text);
    let f = found.iter().find(|f| f.id == ID).unwrap_or_else(|| panic!("{found:#?}"));
    assert!(f.evidence.iter().any(|e| e.contains("19042.928") && e.contains("21H2")), "{f:#?}");
    assert!(!super::pasted_ids(cli).contains(&ID.to_owned()), "not WSL");
    // /usr/lib/wsl/lib shown holding the driver's libraries: WSL did map them in.
    let mapped = format!("{text}\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/wsl/lib/libcuda.so.1\n");
    assert!(!super::pasted_ids(&mapped).contains(&ID.to_owned()), "{:?}", super::pasted_ids(&mapped));
}

/// An Insider build beside words that WSL sees no GPU, or that /dev/dxg is missing, is the build's regression
/// (microsoft/WSL#5848 and #6809, verbatim).
#[test]
fn an_insider_build_with_the_gpu_missing_in_words_is_the_builds_regression() {
    const ID: &str = "wsl.windows_build_gpu_regression";
    for text in [
        "The current build of Windows is `20201.1000`.\nAnd after that, the WSL doesn't see the GPU on the laptop. \n",
        "The /dev/dxg device is not available in WLS2 Linux distros when I updated to preview build 21354.\n",
    ] {
        assert!(super::pasted_ids(text).contains(&ID.to_owned()), "{text}: {:?}", super::pasted_ids(text));
    }
    assert!(
        !super::pasted_ids("The current build of Windows is `20201.1000`.\nWSL2 works fine.\n")
            .contains(&ID.to_owned())
    );
}

/// The unversioned `libnvidia-ml.so` not found inside WSL is WSL shipping NVML only as libnvidia-ml.so.1
/// (rust-nvml/nvml-wrapper#51's line), not a guest without its GPU; the versioned name failing is still the latter.
#[test]
fn the_unversioned_nvml_name_missing_inside_wsl_is_its_so_1_only() {
    const ID: &str = "wsl.nvml_so_not_in_cache";
    let unversioned = "Error: LibloadingError(DlOpen { desc: \"libnvidia-ml.so: cannot open shared object file: No such file or directory\" })";
    let m = with_message(Machine::pasted().wsl(2, &[]), "nvml.library_not_found", unversioned);
    assert_eq!(m.ids(), ids(&[ID]), "the NVML line is explained, no guest without a GPU");
    assert!(m.finding(ID).fix.as_deref().is_some_and(|f| f.contains("libnvidia-ml.so.1")));
    let versioned = "libnvidia-ml.so.1: cannot open shared object file: No such file or directory";
    let m = with_message(Machine::pasted().wsl(2, &[]), "nvml.library_not_found", versioned);
    assert!(!m.ids().contains(&ID.to_owned()), "{:?}", m.ids());
    assert!(m.ids().contains(&"wsl.gpu_not_exposed".to_owned()), "{:?}", m.ids());
    // WSL 1 has no GPU at all: its own finding, not this.
    let m = with_message(Machine::pasted().wsl(1, &[]), "nvml.library_not_found", unversioned);
    assert!(!m.ids().contains(&ID.to_owned()), "{:?}", m.ids());
}

/// The toolkit's WSL-mode warning that libdxcore.so was not found (docker/buildx#3295's line) is its own finding,
/// with /usr/lib/wsl/lib in the fix, whatever else the text shows of WSL.
#[test]
fn a_cdi_spec_made_without_wsls_libdxcore_is_named() {
    const ID: &str = "wsl.libdxcore_not_in_container";
    let line = "level=warning msg=\"Could not locate libdxcore.so: pattern libdxcore.so not found\"";
    let m = with_message(Machine::pasted(), "nvidia_ctk.libdxcore_not_found", line);
    assert_eq!(m.ids(), ids(&[ID]));
    assert!(m.finding(ID).fix.as_deref().is_some_and(|f| f.contains("/usr/lib/wsl/lib")));
}

/// A Windows 10 release before 21H2 shown under WSL 2 with no program listing a GPU is WSL handing over none, with no
/// symptom said (microsoft/WSL#7376's form); under WSL 1, or with a GPU a program lists, it is not.
#[test]
fn a_windows_10_release_before_21h2_under_wsl2_hands_over_no_gpu() {
    const ID: &str = "wsl.gpu_not_exposed";
    let mut m = Machine::pasted().wsl(2, &[]);
    if let Some(w) = m.0.platform.wsl.as_mut() {
        w.build_before_gpu = Some("Microsoft Windows [version10.0.19043.1200]".to_owned());
    }
    assert!(m.ids().contains(&ID.to_owned()), "{:?}", m.ids());
    let mut one = Machine::pasted().wsl(1, &[]);
    if let Some(w) = one.0.platform.wsl.as_mut() {
        w.build_before_gpu = Some("Microsoft Windows [version10.0.19043.1200]".to_owned());
    }
    assert!(!one.ids().contains(&ID.to_owned()), "{:?}", one.ids());
    let mut listed = wsl2();
    if let Some(w) = listed.0.platform.wsl.as_mut() {
        w.build_before_gpu = Some("Microsoft Windows [version10.0.19043.1200]".to_owned());
    }
    assert!(!listed.ids().contains(&ID.to_owned()), "{:?}", listed.ids());
}

/// CUDA's error 500 at initialization (`named symbol not found`) is WSL 2's container case: under WSL, and where the
/// text shows neither WSL nor a Linux host's driver (PyTorch's line alone, as Docker Desktop users paste it,
/// jhj0517/Whisper-WebUI#279 and AbdBarho/stable-diffusion-webui-docker#694 with a Windows driver's two-part version).
/// A Linux host's driver shown (its three-part version, the kernel module's version file) is not that case.
#[test]
fn error_500_at_cuda_initialization_is_the_wsl_container_toolkit() {
    let line = "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling \
                NumCudaDevices() that might have already set an error? Error 500: named symbol not found";
    let alone = super::pasted_findings(line);
    let f =
        alone.iter().find(|f| f.id == "wsl.container_toolkit_predates_driver").unwrap_or_else(|| panic!("{alone:#?}"));
    assert!(f.evidence.iter().any(|e| e.contains("not shown")), "{:?}", f.evidence);
    assert!(f.fix.as_deref().is_some_and(|x| x.contains("Docker Desktop to 4.31")), "{:?}", f.fix);
    let windows =
        format!("Local cuda details: `NVIDIA-SMI 555.85, Driver Version: 555.85,  CUDA Version: 12.5`\n{line}\n");
    assert!(super::pasted_ids(&windows).contains(&"wsl.container_toolkit_predates_driver".to_owned()));
    for linux in [
        format!("Driver Version: 555.42.02\n{line}\n"),
        format!("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024\n{line}\n"),
    ] {
        let ids = super::pasted_ids(&linux);
        assert!(!ids.contains(&"wsl.container_toolkit_predates_driver".to_owned()), "{linux}: {ids:?}");
    }
}

/// NVML answering NVML_ERROR_DRIVER_NOT_LOADED inside WSL 2 (ollama/ollama#1888): WSL has no kernel module, so the
/// NVML library loaded is a Linux driver's; on a Linux host the same answer is the kernel module's, not WSL's.
#[test]
fn nvml_driver_not_loaded_inside_wsl_is_a_linux_drivers_library() {
    let line = "NVML_ERROR_DRIVER_NOT_LOADED";
    let m = with_message(wsl2(), "nvml.driver_not_loaded", line);
    let f = m.finding("wsl.linux_driver_installed");
    assert!(f.evidence.iter().any(|e| e.contains("no NVIDIA kernel module")), "{:?}", f.evidence);
    assert!(f.explains.contains(&"observed.nvml.driver_not_loaded".to_owned()), "{f:#?}");
    let host = with_message(Machine::linux(), "nvml.driver_not_loaded", line);
    assert!(!host.ids().contains(&"wsl.linux_driver_installed".to_owned()), "{:?}", host.ids());
}

/// libnvidia-container 1.12.1 under WSL 2 (NVIDIA/nvidia-container-toolkit#53's `/proc/version` and
/// `nvidia-container-cli --version`) is the release that crashes there; 1.12.0, or 1.12.1 on a Linux host, is not.
#[test]
fn container_toolkit_1_12_1_under_wsl_is_the_broken_release() {
    let kernel = "Linux version 5.15.90.1-microsoft-standard-WSL2 (oe-user@oe-host) (x86_64-msft-linux-gcc (GCC) 9.3.0, \
                  GNU ld (GNU Binutils) 2.34.0.20200220) #1 SMP Fri Jan 27 02:56:13 UTC 2023\n";
    let cli = "$ nvidia-container-cli --version\ncli-version: 1.12.1\nlib-version: 1.12.1\n";
    let f = super::pasted_findings(&format!("{kernel}{cli}"));
    let named = f.iter().find(|f| f.id == "wsl.container_toolkit_release_broken").expect("1.12.1 under WSL");
    assert!(super::words(named).is_some_and(|w| w.contains("1.13.0 or newer")), "{named:?}");
    let older = format!("{kernel}{}", cli.replace("1.12.1", "1.12.0"));
    assert!(!super::pasted_ids(&older).contains(&"wsl.container_toolkit_release_broken".to_owned()));
    assert!(!super::pasted_ids(cli).contains(&"wsl.container_toolkit_release_broken".to_owned()));
}

/// lspci inside WSL 2 lists Microsoft's virtual render device (1414:008e, dxgkrnl's PCI_DEVICE_ID_VIRTUAL_RENDER), in
/// each of lspci's namings (microsoft/WSL#9821, mudler/LocalAI#1890), never the NVIDIA card: a note that points to
/// nvidia-smi. A native machine's lspci with an NVIDIA card and another vendor's render device give none.
#[test]
fn lspci_of_wsl_2_shows_its_virtual_gpu_and_the_note_says_so() {
    const ID: &str = "wsl.gpu_pv_adapter_in_lspci";
    for line in [
        "e33f:00:00.0 3D controller: Microsoft Corporation Device 008e",
        "fe50:00:00.0 3D controller: Microsoft Corporation Basic Render Driver.",
        "2761:00:00.0 3D controller [0302]: Microsoft Corporation Device [1414:008e]",
    ] {
        let f = super::pasted_findings(&format!(
            "$ lspci\n2793:00:00.0 SCSI storage controller: Red Hat, Inc. Virtio console (rev 01)\n{line}\n"
        ));
        let named = f.iter().find(|f| f.id == ID).unwrap_or_else(|| panic!("{line}: {f:#?}"));
        assert!(super::words(named).is_some_and(|w| w.contains("nvidia-smi")), "{named:?}");
    }
    let native = "01:00.0 VGA compatible controller: NVIDIA Corporation GA102 [GeForce RTX 3090] (rev a1)\n\
                  00:02.0 VGA compatible controller: Intel Corporation UHD Graphics 630\n";
    assert!(!super::pasted_ids(native).contains(&ID.to_owned()));
}

/// NVML's Not Supported for the minor number, which nvml.h gives for Linux only (/dev/nvidiaN): WSL 2's NVML, a Go
/// program's wrapped error saying so (NVIDIA/k8s-device-plugin#332), is WSL's unsupported query with no other WSL sign.
#[test]
fn nvml_minor_number_not_supported_is_wsl_2s_nvml() {
    let line = "panic: Unable to load resource managers to manage plugin devices: error building device map: error \
                getting device paths: error getting GPU device minor number: Not Supported\n";
    assert!(super::pasted_ids(line).contains(&"wsl.nvml_query_unsupported".to_owned()));
    // Another query's Not Supported, on a machine not shown to be WSL, is NVML's message alone.
    let other = "error getting power usage: Not Supported\n";
    let ids = super::pasted_ids(other);
    assert!(
        ids.contains(&"observed.nvml.not_supported".to_owned()) && !ids.iter().any(|i| i.starts_with("wsl.")),
        "{ids:?}"
    );
}

/// An invalid device answered to a VMM allocation inside WSL 2 names the allocation path and its switch for
/// each allocator (NVIDIA/cuda-python#1127's lines, verbatim); the same lines outside WSL give no WSL finding.
#[test]
fn a_vmm_allocation_refused_inside_wsl2_names_the_allocator_switch() {
    const ID: &str = "wsl.vmm_allocations_refused";
    let error = "When running the VirtualMemoryResources tests under the Windows Subsystem for Linux (WSL) allocation requests throw the following error:\nE   cuda.core.experimental._utils.cuda_utils.CUDAError: CUDA_ERROR_INVALID_DEVICE: This indicates that the device ordinal supplied by the user does not correspond to a valid CUDA device or that the action requested is invalid for the specified device.\n";
    let found = super::pasted_findings(&format!("{WSL2_UNAME}{error}"));
    let f = found.iter().find(|f| f.id == ID).unwrap_or_else(|| panic!("{found:#?}"));
    let fix = super::words(f).unwrap();
    assert!(fix.contains("GGML_CUDA_NO_VMM=ON") && fix.contains("DeviceMemoryResource"), "{fix}");
    assert!(!found.iter().any(|f| f.id == "wsl.unified_memory_limited"), "{found:#?}");
    let native = error.replace(" under the Windows Subsystem for Linux (WSL)", "");
    assert!(!super::pasted_ids(&format!("Linux host 6.8.0-45-generic\n{native}")).contains(&ID.to_owned()));
}
