//! Driver presence: a GPU without a driver, nouveau, Secure Boot, a module for another kernel, a GPU
//! the driver branch dropped, and no NVIDIA GPU at all.

use super::builder::Machine;
use gpu_doctor_model::Probed;
use gpu_doctor_model::SecureBoot;
use gpu_doctor_model::Severity;
use gpu_doctor_model::{DriverLoadProblem, PlanTarget};

const BUS: &str = "0000:01:00.0";

/// An RTX 4090 that the nvidia driver holds: the healthy case every variant starts from.
fn working() -> Machine {
    Machine::linux()
        .pci_gpu(BUS, Some("nvidia"))
        .gpu("NVIDIA GeForce RTX 4090", "8.9")
        .driver("570.124.06", "12.8")
        .kernel_module(|_| {})
        .secure_boot(SecureBoot::Enabled)
}

/// A card on the bus with no NVIDIA driver answering.
fn card_without_driver(driver: Option<&str>) -> Machine {
    Machine::linux().pci_gpu(BUS, driver)
}

fn not_loaded(m: Machine) -> Machine {
    m.kernel_module(|k| {
        k.nvidia_loaded = false;
        k.loaded_version = None;
    })
}

fn ids(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn each_cause_gives_exactly_its_finding() {
    let no_module = |m: Machine| {
        m.kernel_module(|k| {
            k.nvidia_loaded = false;
            k.installed = None;
            k.installed_note = Some("no nvidia module is installed for the running kernel".into());
        })
    };
    let cases: Vec<(&str, Machine, Vec<String>)> = vec![
        ("healthy", working(), vec![]),
        ("healthy without secure boot facts", working().secure_boot(SecureBoot::NotEfi), vec![]),
        ("no GPU, no driver", Machine::linux(), ids(&["presence.no_nvidia_gpu"])),
        ("card, no driver, no module", no_module(card_without_driver(None)), ids(&["presence.gpu_without_driver"])),
        ("card, no driver, module unknown", card_without_driver(None), ids(&["presence.gpu_without_driver"])),
        ("card bound to vfio-pci for a VM", card_without_driver(Some("vfio-pci")), vec![]),
        (
            "nouveau holds the card",
            no_module(card_without_driver(Some("nouveau"))).kernel_module(|k| {
                k.nvidia_loaded = false;
                k.nouveau_loaded = true;
            }),
            ids(&["presence.nouveau_loaded"]),
        ),
        (
            "nouveau bound, module facts unknown",
            card_without_driver(Some("nouveau")),
            ids(&["presence.nouveau_loaded"]),
        ),
        ("nouveau loaded beside a working driver", working().kernel_module(|k| k.nouveau_loaded = true), vec![]),
        (
            "unsigned, not loaded, secure boot state unknown",
            card_without_driver(None).kernel_module(|k| {
                k.nvidia_loaded = false;
                k.installed.as_mut().unwrap().signer = None;
            }),
            ids(&["presence.gpu_without_driver"]),
        ),
        ("unsigned but loaded", working().kernel_module(|k| k.installed.as_mut().unwrap().signer = None), vec![]),
        ("signed, not loaded", not_loaded(card_without_driver(None)), ids(&["presence.gpu_without_driver"])),
        (
            "built for another kernel",
            card_without_driver(None).kernel_module(|k| {
                k.nvidia_loaded = false;
                k.installed.as_mut().unwrap().built_for_kernel = Some("6.8.0-40-generic".into());
            }),
            ids(&["presence.module_for_other_kernel"]),
        ),
        (
            "built for another kernel but loaded",
            working()
                .kernel_module(|k| k.installed.as_mut().unwrap().built_for_kernel = Some("6.8.0-40-generic".into())),
            vec![],
        ),
    ];
    for (name, m, want) in cases {
        assert_eq!(m.ids(), want, "{name}");
    }
}

#[test]
fn secure_boot_refuses_only_an_unsigned_module_while_it_is_on() {
    let unsigned = |state| {
        card_without_driver(None).secure_boot(state).kernel_module(|k| {
            k.nvidia_loaded = false;
            k.installed.as_mut().unwrap().signer = None;
        })
    };
    let on = unsigned(SecureBoot::Enabled);
    assert_eq!(on.ids(), ids(&["presence.secure_boot_unsigned_module"]));
    let f = on.finding("presence.secure_boot_unsigned_module");
    assert_eq!(f.plan.unwrap().target, PlanTarget::DriverLoad { problem: DriverLoadProblem::SecureBootUnsigned });
    assert_eq!(unsigned(SecureBoot::Disabled).ids(), ids(&["presence.gpu_without_driver"]));
    let changes = unsigned(SecureBoot::Disabled).changes("presence.gpu_without_driver");
    assert_eq!(changes[0], gpu_doctor_model::Change::Root { argv: vec!["modprobe".into(), "nvidia".into()] });
}

/// Each cause names the plan that answers it (`gpu-doctor-installers` writes the commands for this
/// distribution from it; its tests check them).
#[test]
fn each_cause_names_its_plan() {
    let m = card_without_driver(None).kernel_module(|k| {
        k.nvidia_loaded = false;
        k.installed.as_mut().unwrap().built_for_kernel = Some("6.8.0-40-generic".into());
    });
    let f = m.finding("presence.module_for_other_kernel");
    assert_eq!(f.plan.unwrap().target, PlanTarget::DriverLoad { problem: DriverLoadProblem::ModuleForOtherKernel });
    assert!(f.evidence.iter().any(|e| e.contains("running kernel 6.8.0-45-generic")), "{:?}", f.evidence);

    let f = card_without_driver(Some("nouveau")).finding("presence.nouveau_loaded");
    assert_eq!(f.plan.unwrap().target, PlanTarget::DriverLoad { problem: DriverLoadProblem::Nouveau });
    assert!(f.evidence.iter().any(|e| e.contains(BUS) && e.contains("nouveau")), "{:?}", f.evidence);

    let no_module = card_without_driver(None).kernel_module(|k| {
        k.nvidia_loaded = false;
        k.installed = None;
    });
    let f = no_module.finding("presence.gpu_without_driver");
    assert_eq!(f.plan.unwrap().target, PlanTarget::Driver { min_branch: None });
    // Installed but not loaded: load it (as root), and read the kernel log if that fails.
    let changes = not_loaded(card_without_driver(None)).changes("presence.gpu_without_driver");
    assert_eq!(changes[0], gpu_doctor_model::Change::Root { argv: vec!["modprobe".into(), "nvidia".into()] });
    // No GPU at all: nothing to plan, except under WSL (the Windows driver).
    assert!(Machine::linux().finding("presence.no_nvidia_gpu").plan.is_none());
}

#[test]
fn a_second_card_the_running_driver_left_alone_points_at_the_kernel_log() {
    let m = working().pci_gpu("0000:02:00.0", None).driver("590.44.01", "");
    assert_eq!(m.ids(), ids(&["presence.gpu_without_driver"]));
    let fix = m.finding("presence.gpu_without_driver").fix.unwrap();
    assert!(fix.starts_with("sudo dmesg | grep -i nvrm") && fix.contains("GPUs that is 580"), "{fix}");
    // The driver install's commands are the driver planner's alone (`gpu-doctor-installers`).
    assert!(fix.contains("install NVIDIA's R580 driver") && !fix.contains("ubuntu-drivers"), "{fix}");
}

#[test]
fn a_gpu_past_its_last_driver_branch_needs_the_legacy_branch() {
    let pascal = |driver: &str| Machine::linux().gpu("NVIDIA GeForce GTX 1080", "6.1").driver(driver, "");
    let m = pascal("590.44.01");
    assert_eq!(m.ids(), ids(&["presence.gpu_dropped_by_driver"]));
    let f = m.finding("presence.gpu_dropped_by_driver");
    assert!(super::words(&f).unwrap().contains("R580"), "{f:#?}");
    assert_eq!(f.plan.as_ref().unwrap().target, PlanTarget::Driver { min_branch: None });
    assert!(f.evidence.iter().any(|e| e.contains("R580")), "{:?}", f.evidence);
    // On its last branch, or an architecture without a last branch: nothing.
    assert_eq!(pascal("580.95.05").ids(), Vec::<String>::new());
    let ada = Machine::linux().gpu("NVIDIA GeForce RTX 4090", "8.9").driver("590.44.01", "");
    assert_eq!(ada.ids(), Vec::<String>::new());
    // By name alone (pasted text), the capability is looked up.
    let pasted = Machine::pasted().gpu("NVIDIA GeForce GTX 1080", "").driver("590.44.01", "");
    assert_eq!(pasted.ids(), ids(&["presence.gpu_dropped_by_driver"]));
}

#[test]
fn no_nvidia_gpu_is_one_plain_info_finding() {
    let m = Machine::linux();
    let f = m.finding("presence.no_nvidia_gpu");
    assert_eq!(f.severity, Severity::Info);
    assert!(f.detail.contains("normal result"), "{f:#?}");
    let mut windows = Machine::windows();
    windows.0.pci_devices = Probed::Unsupported { reason: "sysfs is Linux only".into() };
    let f = windows.finding("presence.no_nvidia_gpu");
    assert!(f.detail.contains("could not be listed"), "{f:#?}");
    // A failed PCI listing does not prove there is no GPU.
    let mut failed = Machine::linux();
    failed.0.pci_devices = Probed::Failed { error: "permission denied".into() };
    assert_eq!(failed.ids(), Vec::<String>::new());
}

#[test]
fn pasted_text_without_these_parts_concludes_nothing() {
    assert_eq!(Machine::pasted().ids(), Vec::<String>::new());
    let with_gpu = Machine::pasted().gpu("NVIDIA GeForce RTX 4090", "").driver("570.124.06", "12.8");
    assert_eq!(with_gpu.ids(), Vec::<String>::new());
}

/// nouveau said present in pasted words (negativo17/nvidia-driver#37's title) is the nouveau finding where no
/// working NVIDIA driver is shown; with a driver's version in the text, or nouveau said blacklisted, it is not.
#[test]
fn nouveau_said_present_in_words_is_the_nouveau_finding() {
    let title = "Nouveau driver is still loaded despite apparently successful install of nvidia binaries, Fedora 27\n";
    assert_eq!(super::pasted_ids(title), ids(&["presence.nouveau_loaded"]));
    let working = format!("{title}Driver Version: 570.124.06\n");
    assert!(!super::pasted_ids(&working).contains(&"presence.nouveau_loaded".to_owned()));
    assert!(super::pasted_ids("I blacklisted nouveau and installed the driver\n").is_empty());
}

/// Akegarasu/lora-scripts#101: bitsandbytes' `CUDA driver version is insufficient` on a laptop whose writer names
/// its GPU as an Intel Iris Xe: no NVIDIA GPU, which the CUDA runtime words as a driver too old. The same words
/// beside an NVIDIA GPU (a laptop with both) or its driver are not this.
#[test]
fn another_vendors_gpu_named_in_words_is_no_nvidia_gpu() {
    let text = "Error CUDA driver version is insufficient for CUDA runtime version at line 167 in file \
                D:\\ai\\tool\\bitsandbytes\\csrc\\ops.cu\n\
                I'm using a integrated Intel GPU(iris xe graphics). os is win 11, torch==2.0.0+cu118\n";
    let ids = super::pasted_ids(text);
    assert!(ids.contains(&"presence.no_nvidia_gpu".to_owned()), "{ids:?}");
    assert!(!ids.iter().any(|i| i == "observed.cuda.insufficient_driver"), "explained by it: {ids:?}");
    let both = format!("{text}I also have an NVIDIA GeForce RTX 3050 Laptop GPU.\n");
    let with_smi = format!("{text}| NVIDIA-SMI 531.14    Driver Version: 531.14    CUDA Version: 12.1     |\n");
    for t in [both, with_smi] {
        assert!(!super::pasted_ids(&t).contains(&"presence.no_nvidia_gpu".to_owned()), "{t}");
    }
    // PyTorch's `Found no NVIDIA driver` on an AMD machine said in words (HAMM3REXTREME/ComfyUI-Installer#6).
    let amd = "RuntimeError: Found no NVIDIA driver on your system.\n\
               I cannot run ./ComfyUI. I am running arch linux with an AMD Radeon 7900xt GPU.\n";
    assert!(super::pasted_ids(amd).contains(&"presence.no_nvidia_gpu".to_owned()), "{amd}");
    // PyTorch's own line asks for an NVIDIA GPU; it names none the machine has
    // (JoshuaKimsey/Linux-StableDiffusion-Script#17, verbatim).
    let asked = "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and \
                 installed a driver from http://www.nvidia.com/Download/index.aspx\n\nI have an AMD Card \n";
    assert!(super::pasted_ids(asked).contains(&"presence.no_nvidia_gpu".to_owned()), "{asked}");
    // An NVIDIA GPU named on the line itself: a machine with both.
    let hybrid = "I have an Intel UHD Graphics and an RTX 3060, torch.cuda.is_available() is False\n";
    assert!(!super::pasted_ids(hybrid).contains(&"presence.no_nvidia_gpu".to_owned()));
}
