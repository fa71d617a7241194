//! Across families: a healthy machine raises nothing, and a part the facts do not cover (pasted text)
//! never triggers a rule that reads it.

use super::builder::Machine;
use gpu_doctor_model::Probed;
use gpu_doctor_model::Severity;
use gpu_doctor_model::{CudnnKind, FrameworkBuild, SecureBoot};

const BUS: &str = "0000:01:00.0";

/// A workstation where everything is right: driver, module, Secure Boot with a signed module, one toolkit
/// that every name picks, torch with its own cuDNN loaded, a busy GPU at full link speed, a valid
/// CUDA_VISIBLE_DEVICES.
fn healthy() -> Machine {
    Machine::linux()
        .pci_gpu(BUS, Some("nvidia"))
        .gpu("NVIDIA GeForce RTX 4090", "8.9")
        .gpu_with(|g| {
            g.pci_bus_id = Some(BUS.into());
            g.uuid = Some("GPU-aaaa1111-0000-0000-0000-000000000000".into());
            g.utilization_gpu_pct = Some(97);
        })
        .driver("570.124.06", "12.8")
        .kernel_module(|_| {})
        .secure_boot(SecureBoot::Enabled)
        .link(BUS, (4, 16), (4, 16), |_| {})
        .toolkit("/usr/local/cuda-12.8", "12.8", &["PATH", "CUDA_HOME", "LD_LIBRARY_PATH", "/usr/local/cuda"])
        .loader_lib("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1")
        .torch("2.5.1+cu124")
        .wheel("nvidia-cudnn-cu12", "9.1.0.70")
        .wheel("nvidia-cuda-runtime-cu12", "12.4.127")
        .deep_torch(|t| t.cudnn_version = Some(90100))
        .cudnn("/usr/lib/x86_64-linux-gnu/libcudnn.so.9.1.0", CudnnKind::Library, "9.1.0", Some(12))
        .env("CUDA_VISIBLE_DEVICES", "0")
}

#[test]
fn a_healthy_machine_has_no_warning_or_error() {
    let alarms: Vec<String> =
        healthy().findings().into_iter().filter(|f| f.severity != Severity::Info).map(|f| f.id).collect();
    assert_eq!(alarms, Vec::<String>::new());
    // Its one information: nvcc 12.8 against torch's CUDA 12.4 build.
    assert_eq!(healthy().ids(), vec!["toolkits.versions_explained".to_owned()]);
}

type Unset = fn(&mut Machine);

#[test]
fn a_problem_is_not_seen_once_its_part_is_unknown() {
    let unknown = "not in the pasted text";
    let cases: Vec<(&str, Machine, Unset)> = vec![
        ("presence.gpu_without_driver", Machine::linux().pci_gpu(BUS, None), |m| {
            m.0.pci_devices = Probed::unknown("x")
        }),
        (
            "presence.secure_boot_unsigned_module",
            Machine::linux().secure_boot(SecureBoot::Enabled).kernel_module(|k| {
                k.nvidia_loaded = false;
                k.installed.as_mut().unwrap().signer = None;
            }),
            |m| m.0.secure_boot = Probed::unknown("x"),
        ),
        ("presence.no_nvidia_gpu", Machine::linux(), |m| m.0.driver = Probed::unknown("x")),
        (
            "toolkits.names_disagree",
            Machine::linux().toolkit("/usr/local/cuda-11.8", "11.8", &["PATH"]).toolkit(
                "/usr/local/cuda-12.4",
                "12.4",
                &["CUDA_HOME"],
            ),
            |m| m.0.toolkits = Probed::unknown("x"),
        ),
        (
            "env.cuda_visible_devices_hides_all",
            Machine::linux().gpu("NVIDIA GeForce RTX 4090", "8.9").env("CUDA_VISIBLE_DEVICES", "3"),
            |m| m.0.gpus = Probed::unknown("x"),
        ),
        (
            "link.degraded_under_load",
            Machine::linux()
                .gpu("NVIDIA GeForce RTX 4090", "8.9")
                .gpu_with(|g| {
                    g.pci_bus_id = Some(BUS.into());
                    g.utilization_gpu_pct = Some(90);
                })
                .link(BUS, (1, 16), (4, 16), |_| {}),
            |m| {
                m.0.links = Probed::unknown("x");
                m.0.gpus = Probed::unknown("x");
            },
        ),
        (
            "cudnn.missing",
            Machine::linux().gpu("NVIDIA GeForce RTX 4090", "8.9").framework(
                "tensorflow",
                "2.18.0",
                Some(FrameworkBuild::Cuda { version: Some("12.5.1".into()) }),
            ),
            |m| m.0.cudnn = Probed::unknown("x"),
        ),
        (
            "wheels.mixed_cuda_majors",
            Machine::linux().gpu("NVIDIA GeForce RTX 4090", "8.9").torch("2.5.1+cu124").framework(
                "cupy-cuda13x",
                "14.0.0",
                Some(FrameworkBuild::Cuda { version: Some("13".into()) }),
            ),
            |m| m.0.python_envs = Probed::unknown("x"),
        ),
    ];
    for (id, mut m, unset) in cases {
        assert!(m.ids().iter().any(|i| i == id), "{id} should fire before its part is unknown: {:?}", m.ids());
        unset(&mut m);
        m.0.origin = gpu_doctor_model::Origin::Pasted { formats: vec![unknown.into()] };
        assert!(!m.ids().iter().any(|i| i == id), "{id} fired from an unknown part");
    }
}

#[test]
fn pasted_text_with_a_gpu_a_driver_and_frameworks_raises_nothing_unseen() {
    let m = Machine::pasted()
        .gpu("NVIDIA GeForce RTX 4090", "")
        .driver("570.124.06", "12.8")
        .torch("2.5.1+cu124")
        .wheel("nvidia-cudnn-cu12", "9.3.0.75")
        .framework("tensorflow", "2.18.0", Some(FrameworkBuild::Cuda { version: Some("12.5.1".into()) }));
    assert_eq!(m.ids(), Vec::<String>::new());
}
