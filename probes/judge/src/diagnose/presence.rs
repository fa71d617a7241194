//! Whether NVIDIA's driver reaches the GPU: a card on the bus that no driver holds, nouveau, Secure Boot
//! refusing an unsigned module, a module built for another kernel, a GPU the driver branch dropped; and
//! the plain statement that this machine has no NVIDIA GPU.

use super::{Ctx, Rule, fix};
use gpu_doctor_model::is_display_class;
use gpu_doctor_model::{Category, Change, DriverLoadProblem, Finding, PlanTarget, Probed, Severity};
use gpu_doctor_model::{KernelModuleFacts, OsFamily, PciDevice, SecureBoot};

const CATEGORY: Category = Category::NoDriverOrGpuNotVisible;

pub(super) const NO_DRIVER: Rule = Rule {
    id: "presence.gpu_without_driver",
    category: CATEGORY,
    severity: Severity::Error,
    trigger: "An NVIDIA GPU is on the PCI bus but no kernel driver holds it, and no more specific cause (nouveau, \
              Secure Boot, a module built for another kernel) was found.",
    source: "Linux sysfs (/sys/bus/pci/devices/*/driver); NVIDIA Driver Installation Guide \
             (https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/)",
};

pub(super) const NOUVEAU: Rule = Rule {
    id: "presence.nouveau_loaded",
    category: CATEGORY,
    severity: Severity::Error,
    trigger: "The open-source nouveau driver (or nova-core, the kernel's newer open driver) holds the GPU, or nouveau \
              is loaded while NVIDIA's installed module is not: NVIDIA's module cannot load while it does. In pasted \
              text showing no working NVIDIA driver, also a sentence saying nouveau is installed, loaded or printing \
              errors (not blacklisted or disabled).",
    source: "NVIDIA Driver Installation Guide, \"Disabling Nouveau\" \
             (https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/)",
};

pub(super) const SECURE_BOOT: Rule = Rule {
    id: "presence.secure_boot_unsigned_module",
    category: CATEGORY,
    severity: Severity::Error,
    trigger: "Secure Boot is enabled and the installed nvidia module is unsigned and not loaded: the kernel \
              refuses to load it.",
    source: "mokutil --sb-state; modinfo nvidia (signer); NVIDIA Driver Installation Guide (Secure Boot)",
};

pub(super) const OTHER_KERNEL: Rule = Rule {
    id: "presence.module_for_other_kernel",
    category: CATEGORY,
    severity: Severity::Error,
    trigger: "The installed nvidia module was built for another kernel than the running one and is not loaded \
              (typically after a kernel update that DKMS did not rebuild it for).",
    source: "modinfo nvidia (vermagic) against /proc/sys/kernel/osrelease",
};

pub(super) const ARCH_DROPPED: Rule = Rule {
    id: "presence.gpu_dropped_by_driver",
    category: CATEGORY,
    severity: Severity::Error,
    trigger: "A GPU's architecture is supported only up to an older driver branch than the one installed \
              (e.g. Pascal, last supported by R580, on R590).",
    source: "NVIDIA Unix driver deprecation schedule (R580 the last branch for Maxwell, Pascal and Volta; R470 for \
             Kepler; R390 for Fermi), reference §3.4",
};

pub(super) const NO_GPU: Rule = Rule {
    id: "presence.no_nvidia_gpu",
    category: CATEGORY,
    severity: Severity::Info,
    trigger: "No NVIDIA driver answered, the driver lists no GPU and no NVIDIA display controller is on the PCI bus \
              (or the PCI bus cannot be listed here): the normal state of a machine without an NVIDIA GPU. In pasted \
              text: the writer names the machine's GPU as another vendor's (an Intel or AMD GPU), or says it has no \
              NVIDIA GPU (`I don't have NVIDIA GPU`), and the text shows no NVIDIA GPU, driver or device; CUDA's refusals there (`insufficient driver`, `no CUDA-capable device`, \
              PyTorch's `Found no NVIDIA driver`) are this.",
    source: "The driver, GPU and PCI probes; for pasted text the writer's words (Akegarasu/lora-scripts#101: an Intel Iris \
             Xe laptop, bitsandbytes' `CUDA driver version is insufficient`, the maintainer's \"training on the CPU is \
             not supported\"); the CUDA runtime answers cudaErrorInsufficientDriver where no driver library loads at \
             all (the containers rule libcuda_not_mounted reads the same)",
};

pub(super) const RULES: &[Rule] = &[NO_DRIVER, NOUVEAU, SECURE_BOOT, OTHER_KERNEL, ARCH_DROPPED, NO_GPU];

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let devices: Vec<&PciDevice> =
        cx.s.pci_devices.value().map(|d| d.iter().filter(|d| is_display_class(d.class)).collect()).unwrap_or_default();
    let before = out.len();
    nouveau(cx, &devices, out);
    if let Some(m) = cx.s.kernel_module.value() {
        module_rules(cx, m, out);
    }
    // Devices bound to another driver are nouveau's (above) or set aside for a virtual machine on purpose
    // (vfio-pci, pci-stub).
    let unclaimed: Vec<&PciDevice> = devices.iter().copied().filter(|d| d.driver.is_none()).collect();
    if out.len() == before && !unclaimed.is_empty() {
        out.push(no_driver(cx, &unclaimed));
    }
    arch_dropped(cx, out);
    // WSL1 cannot see a GPU at all; the wsl rules say so.
    if no_nvidia_anywhere(cx, &devices) && cx.s.platform.wsl.as_ref().is_none_or(|w| w.version != 1) {
        out.push(no_gpu(cx));
    } else if let Some(line) = &cx.s.stated_other_vendor_gpu
        && cx.gpus.is_empty()
        && cx.driver.version.is_none()
        && devices.is_empty()
    {
        out.push(other_vendor_gpu(line));
    }
}

/// Pasted text whose writer names the machine's GPU as another vendor's, with no NVIDIA GPU, driver or device
/// in it: CUDA has nothing to run on, whatever its refusal says.
fn other_vendor_gpu(line: &str) -> Finding {
    NO_GPU.finding(
        "No NVIDIA GPU here, as the text says: CUDA has no GPU to use",
        "The text names the machine's GPU as another vendor's, or says it has no NVIDIA GPU, and shows no NVIDIA GPU \
         or driver. CUDA runs only on \
         NVIDIA GPUs with NVIDIA's driver; where no driver library loads at all, the CUDA runtime answers \
         `CUDA driver version is insufficient for CUDA runtime version` and PyTorch `Found no NVIDIA driver`, \
         which read like a driver to update but mean there is none to use.",
        vec![format!("pasted line: {line}")],
        Some(
            "A CUDA build needs an NVIDIA GPU: run this on a machine with one, or use the program's CPU mode or a \
             build for this GPU's vendor where it has one (PyTorch: the ROCm wheels for AMD GPUs on Linux, the XPU \
             wheels for Intel GPUs). No NVIDIA driver or CUDA install changes this."
                .to_owned(),
        ),
    )
}

/// The PCI driver names of nova-core, the kernel's Rust driver for NVIDIA GPUs (Linux 6.15 and later): its
/// PCI driver is `NovaCore`, its module `nova_core`.
const NOVA_CORE: [&str; 2] = ["NovaCore", "nova_core"];

fn nouveau(cx: &Ctx<'_>, devices: &[&PciDevice], out: &mut Vec<Finding>) {
    let on_nova: Vec<String> = devices
        .iter()
        .filter(|d| d.driver.as_deref().is_some_and(|n| NOVA_CORE.contains(&n)))
        .map(|d| describe_device(d))
        .collect();
    if !on_nova.is_empty() {
        out.push(NOUVEAU.finding(
            "The kernel's nova-core driver holds the GPU, so NVIDIA's driver cannot load",
            "nova-core (NovaCore), the open driver newer kernels enable, claims the GPU at boot; NVIDIA's module then \
             finds no device (\"No NVIDIA devices probed\"). Blacklist nova-core and the nova DRM driver, rebuild the \
             initramfs so they are not loaded at boot, and reboot.",
            on_nova,
            Some(
                "Add `blacklist nova_core` and `blacklist nova_drm` to /etc/modprobe.d/blacklist-nova.conf, rebuild the \
                 initramfs (update-initramfs -u, or dracut --force) and reboot"
                    .to_owned(),
            ),
        ));
        return;
    }
    let on_nouveau: Vec<String> =
        devices.iter().filter(|d| d.driver.as_deref() == Some("nouveau")).map(|d| describe_device(d)).collect();
    let module = cx.s.kernel_module.value();
    let loaded = module.is_some_and(|m| m.nouveau_loaded);
    // Loaded but bound to nothing, nouveau matters only when NVIDIA's installed module is not loaded.
    let blocks =
        loaded && module.is_some_and(|m| m.installed.is_some() && !m.nvidia_loaded) && cx.s.driver.value().is_none();
    if on_nouveau.is_empty() && !blocks {
        nouveau_in_words(cx, out);
        return;
    }
    let summary = if on_nouveau.is_empty() {
        "The open-source nouveau driver is loaded and keeps NVIDIA's module from loading"
    } else {
        "The open-source nouveau driver holds the GPU, so NVIDIA's driver cannot load"
    };
    let mut evidence = on_nouveau;
    if loaded {
        evidence.push("nouveau is loaded (/proc/modules)".to_owned());
    }
    out.push(nouveau_finding(
        summary,
        "nouveau and NVIDIA's module cannot both drive the card, and CUDA needs NVIDIA's. Blacklist nouveau, rebuild \
         the initramfs so it is not loaded at boot, and install NVIDIA's driver.",
        evidence,
    ));
}

/// The nouveau finding: blacklisting it and installing NVIDIA's driver, planned where a plan can be made.
fn nouveau_finding(summary: &str, detail: &str, evidence: Vec<String>) -> Finding {
    NOUVEAU
        .finding(
            summary,
            detail,
            evidence,
            Some(planned("Blacklist nouveau, rebuild the initramfs, install NVIDIA's driver and reboot")),
        )
        .with_plan(PlanTarget::DriverLoad { problem: DriverLoadProblem::Nouveau })
}

/// nouveau said in words to be installed, loaded or failing on a pasted machine whose NVIDIA driver is not shown
/// working (no driver version, no GPU listed by a driver's tool): the same conflict, from the person's words.
fn nouveau_in_words(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(line) = cx.s.stated_nouveau.as_deref() else { return };
    if cx.s.origin.is_this_machine() || cx.s.driver.value().is_some() {
        return;
    }
    let mut evidence = vec![format!("the text says: {line}")];
    if let Some(gpu) = cx.gpus.first() {
        evidence.push(gpu.describe());
    }
    out.push(nouveau_finding(
        "The text says the open-source nouveau driver is on the machine, which keeps NVIDIA's driver off the GPU",
        "nouveau and NVIDIA's module cannot both drive the card, and CUDA needs NVIDIA's; a driver installer or the \
         GPU Operator's driver pod fails or crashes the kernel while nouveau holds the GPU. Blacklist nouveau, \
         rebuild the initramfs so it is not loaded at boot, reboot, then install NVIDIA's driver. `lsmod | grep \
         nouveau` shows whether it is loaded.",
        evidence,
    ));
}

fn module_rules(cx: &Ctx<'_>, m: &KernelModuleFacts, out: &mut Vec<Finding>) {
    let Some(installed) = m.installed.as_ref().filter(|_| !m.nvidia_loaded) else { return };
    let version = installed.version.as_deref().unwrap_or("unknown");
    let module = format!("installed module {} (version {version})", installed.filename);
    if cx.s.secure_boot.value() == Some(&SecureBoot::Enabled) && installed.signer.is_none() {
        out.push(SECURE_BOOT.finding(
            "Secure Boot refuses the unsigned NVIDIA kernel module",
            "With Secure Boot on, the kernel loads only modules signed by a key it trusts. This nvidia module has no \
             signature, so it is not loaded and no CUDA program can reach the GPU.",
            vec!["Secure Boot is enabled (mokutil --sb-state)".to_owned(), format!("{module}: unsigned"), not_loaded()],
            Some(planned(
                "Enroll the key the module is signed with (mokutil --import, then \"Enroll MOK\" at the next boot) and \
                 rebuild the module signed, or install your distribution's signed driver packages",
            )),
        )
        .with_plan(PlanTarget::DriverLoad { problem: DriverLoadProblem::SecureBootUnsigned }));
    }
    if let (Some(built), Some(running)) = (installed.built_for_kernel.as_deref(), m.running_kernel.as_deref())
        && built != running
    {
        out.push(OTHER_KERNEL.finding(
            format!("The NVIDIA kernel module was built for kernel {built}, not the running {running}"),
            "A module loads only into the kernel it was built for. After a kernel update DKMS rebuilds it, unless the \
             new kernel's headers are missing; until then the driver does not start.",
            vec![format!("{module}, built for {built}"), format!("running kernel {running}"), not_loaded()],
            Some(planned("Install the running kernel's headers and build the module for it (DKMS or akmods), then reboot")),
        )
        .with_plan(PlanTarget::DriverLoad { problem: DriverLoadProblem::ModuleForOtherKernel }));
    }
}

fn no_driver(cx: &Ctx<'_>, unclaimed: &[&PciDevice]) -> Finding {
    let mut evidence: Vec<String> = unclaimed.iter().map(|d| describe_device(d)).collect();
    if let Some(why) = cx.s.driver.why_not() {
        evidence.push(format!("NVIDIA driver: {why}"));
    }
    let module = cx.s.kernel_module.value();
    if let Some(note) = module.and_then(|m| m.installed_note.as_deref()) {
        evidence.push(format!("modinfo nvidia: {note}"));
    }
    if module.is_some_and(|m| m.nouveau_loaded) {
        evidence.push("nouveau is loaded (/proc/modules), bound to no NVIDIA GPU".to_owned());
    }
    let install = || {
        (planned("Install the NVIDIA driver for this GPU, then reboot"), Some(PlanTarget::Driver { min_branch: None }))
    };
    let (detail, (fix, plan)) = if cx.s.driver.value().is_some() {
        (
            "NVIDIA's driver is running but did not take this GPU. The kernel log says why; usually this driver \
             branch no longer supports the GPU and names the legacy branch that does.",
            (legacy_hint(cx), None),
        )
    } else if module.is_some_and(|m| m.installed.is_some()) {
        (
            "NVIDIA's module is installed but not loaded, so CUDA cannot reach the GPU.",
            (
                planned("Load the module"),
                Some(fix::change(
                    None,
                    "the nvidia module is loaded",
                    vec![
                        Change::Root { argv: vec!["modprobe".into(), "nvidia".into()] },
                        Change::Manual {
                            text: "If it fails, `sudo dmesg | grep -i -E 'nvrm|nvidia'` says why.".into(),
                        },
                    ],
                )),
            ),
        )
    } else if module.is_some_and(|m| m.installed.is_none()) {
        (
            "No NVIDIA module is installed for the running kernel: either the driver was never installed, or it was \
             not rebuilt after a kernel update.",
            install(),
        )
    } else {
        ("No NVIDIA driver holds the GPU, so CUDA cannot use it.", install())
    };
    let finding =
        NO_DRIVER.finding("An NVIDIA GPU is installed but no NVIDIA driver is using it", detail, evidence, Some(fix));
    finding.with_plan(plan)
}

/// The fix text of a finding that has a driver plan, in words, for a machine the driver planner
/// cannot plan for (an OS pasted text did not name, macOS): `gpu-doctor-installers` replaces it with
/// the plan's prose wherever the plan can be made. It names no command (the planner writes those).
fn planned(what: &str) -> String {
    format!("{what}.")
}

/// Where to read why the running driver left a GPU alone, with the newest legacy branch below it.
fn legacy_hint(cx: &Ctx<'_>) -> String {
    let branch = cx.driver.version.as_ref().map(gpu_doctor_model::DriverVersion::major);
    let legacy =
        cx.kb.gpus.cc.iter().filter_map(|r| r.last_driver_branch.filter(|b| Some(*b) < branch).map(|b| (b, r)));
    match legacy.max_by_key(|(b, _)| *b) {
        Some((b, row)) => format!(
            "sudo dmesg | grep -i nvrm   — it names the branch this GPU needs; for {} GPUs that is {b}: install \
             NVIDIA's R{b} driver (its proprietary kernel module) from your distribution's driver packages or \
             https://www.nvidia.com/drivers, then reboot",
            row.arch
        ),
        None => {
            "sudo dmesg | grep -i nvrm   — it names the driver branch this GPU needs; install that branch".to_owned()
        }
    }
}

fn arch_dropped(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(driver) = cx.driver.version.as_ref() else { return };
    for gpu in &cx.gpus {
        let Some(row) = gpu.cc.and_then(|cc| cx.kb.gpus.row(cc)) else { continue };
        let Some(last) = row.last_driver_branch.filter(|last| *last < driver.major()) else { continue };
        out.push(
            ARCH_DROPPED
                .finding(
                    format!("Driver {driver} no longer supports {} ({})", gpu.name, row.arch),
                    format!(
                        "{} GPUs are supported up to the R{last} driver branch; R{} does not drive them, so the GPU is \
                 missing from nvidia-smi or CUDA reports no device.",
                        row.arch,
                        driver.major()
                    ),
                    vec![
                        gpu.describe(),
                        format!("NVIDIA driver {driver}"),
                        format!("{}: last driver branch R{last} ({})", row.arch, row.source),
                    ],
                    Some(planned(&format!(
                        "Install the R{last} driver branch and stay on it: newer branches do not support {}",
                        row.arch
                    ))),
                )
                .with_plan(PlanTarget::Driver { min_branch: None }),
        );
    }
}

/// True when it is known that there is no NVIDIA driver, no GPU in the driver's list, and none on the bus
/// (or the bus cannot be listed on this system).
fn no_nvidia_anywhere(cx: &Ctx<'_>, devices: &[&PciDevice]) -> bool {
    let driver = no_answer(&cx.s.driver);
    let gpus = cx.s.gpus.value().map_or_else(|| no_answer(&cx.s.gpus), Vec::is_empty);
    let pci = cx.s.pci_devices.value().map_or_else(|| no_answer(&cx.s.pci_devices), |_| devices.is_empty());
    let module = cx.s.kernel_module.value().is_none_or(|m| !m.nvidia_loaded && !m.nouveau_loaded);
    driver && gpus && pci && module
}

/// Absent, or impossible on this system: known not to be there.
fn no_answer<T>(p: &Probed<T>) -> bool {
    matches!(p, Probed::Absent { .. } | Probed::Unsupported { .. })
}

fn no_gpu(cx: &Ctx<'_>) -> Finding {
    let mut evidence = Vec::new();
    for (name, why) in [("NVIDIA driver", cx.s.driver.why_not()), ("PCI bus", cx.s.pci_devices.why_not())] {
        if let Some(why) = why {
            evidence.push(format!("{name}: {why}"));
        }
    }
    if cx.s.pci_devices.value().is_some() {
        evidence.push("PCI bus: no NVIDIA display or 3D controller".to_owned());
    }
    if cx.s.platform.wsl.is_some() {
        return NO_GPU.finding(
            "WSL sees no NVIDIA GPU",
            "Under WSL2 the GPU is reached through the Windows NVIDIA driver, which maps its libraries into \
             /usr/lib/wsl/lib. No driver answered here, so either the Windows machine has no NVIDIA GPU or its NVIDIA \
             driver is not installed. WSL2 needs no Linux driver.",
            evidence,
            Some(planned("Install NVIDIA's Windows driver on the Windows side; WSL2 uses it, so install no Linux driver inside WSL")),
        )
        .with_plan(PlanTarget::Driver { min_branch: None });
    }
    let detail = if cx.os == OsFamily::Macos {
        "macOS has no NVIDIA CUDA driver (NVIDIA ended CUDA for macOS), so CUDA has nothing to use here; frameworks \
         run on the CPU or Apple's GPU."
    } else if matches!(cx.s.pci_devices, Probed::Unsupported { .. }) {
        "No NVIDIA driver is installed and none reports a GPU, so CUDA has nothing to use. This system's PCI bus \
         could not be listed, so a GPU without a driver would not show up here: if the machine has an NVIDIA GPU, \
         install its driver from https://www.nvidia.com/drivers."
    } else {
        "There is no NVIDIA GPU and no NVIDIA driver, so CUDA has nothing to use. This is the normal result on a \
         machine without an NVIDIA GPU; frameworks run on the CPU here."
    };
    NO_GPU.finding("This machine has no NVIDIA GPU", detail, evidence, None)
}

fn describe_device(d: &PciDevice) -> String {
    let bound = d.driver.as_deref().map_or_else(|| "no kernel driver bound".to_owned(), |dr| format!("bound to {dr}"));
    format!("PCI {}: NVIDIA device {:#06x}, {bound}", d.bus_id, d.device_id)
}

fn not_loaded() -> String {
    "the nvidia module is not loaded (/proc/modules)".to_owned()
}
