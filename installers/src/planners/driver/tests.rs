#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! Driver plans, from the replay fixtures (`tests/fixtures/`): each fixture is probed, its facts are
//! changed where a case needs another distribution or problem, then diagnosed and planned as the app
//! does (`ops::judged`).

use std::path::PathBuf;

use gpu_doctor_kb::Kb;
use gpu_doctor_model::shell::Shell;
use gpu_doctor_model::{ComputeCapability, DriverLoadProblem, PlanTarget, Probed, Report, Snapshot};
use gpu_doctor_model::{Gpu, SecureBoot};
use gpu_doctor_probes::host::ReplayHost;
use gpu_doctor_probes::probe::{self, Options};

use crate::plan::{Plan, StepKind};
use crate::planners::{attach, plan_for, plans};

fn kb() -> &'static Kb {
    Kb::get().unwrap()
}

/// The snapshot of replay fixture `name`.
fn fixture(name: &str) -> Snapshot {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(name);
    let host = ReplayHost::load(&dir).unwrap_or_else(|e| panic!("{name}: {e}"));
    let opts = host.fixture().recorded_with.clone().unwrap_or_else(|| Options { cwd: None, ..Options::default() });
    probe::collect(&host, &opts)
}

/// Diagnosed and planned, as `ops::judged` does.
fn judged(snap: Snapshot) -> Report {
    let findings = gpu_doctor_judge::diagnose::diagnose(&snap, kb());
    let mut report = Report::new(snap, findings);
    attach(&mut report, kb());
    report
}

fn set_os(snap: &mut Snapshot, name: &str) {
    if let Probed::Found { value, .. } = &mut snap.system {
        value.os_name = Some(name.to_owned());
    } else {
        panic!("the fixture has no system facts");
    }
}

/// The plan of finding `id`, with its prose.
fn plan_of(report: &Report, id: &str) -> (Plan, String) {
    let f = report
        .findings
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("no {id}: {:?}", report.findings.iter().map(|f| &f.id).collect::<Vec<_>>()));
    let plan_id = &f.plan.as_ref().unwrap_or_else(|| panic!("{id} has no plan")).id;
    let plan = plans(report, kb()).into_iter().find(|p| &p.id == plan_id).unwrap();
    assert_eq!(f.fix.as_deref(), Some(plan.prose(Shell::Posix).as_str()), "the fix is the plan's prose");
    let prose = plan.prose(Shell::Posix);
    (plan, prose)
}

/// A plan for `target` made directly (targets other helpers' rules name, like a minimum branch).
fn direct(snap: Snapshot, target: &PlanTarget) -> (Plan, String) {
    let report = judged(snap);
    let plan = plan_for(&report, kb(), target, "test", &crate::planners::framework::Options::default()).unwrap();
    let prose = plan.prose(Shell::Posix);
    (plan, prose)
}

/// The GPU of `gpu-no-driver` on its bus, no driver: it gets a driver plan on every family.
fn no_driver(os: &str) -> Snapshot {
    let mut s = fixture("gpu-no-driver");
    set_os(&mut s, os);
    s
}

/// A machine whose driver lists one GPU of capability `cc`, on driver `driver`.
fn with_gpu(cc: &str, name: &str, driver: &str) -> Snapshot {
    let mut s = fixture("consumer-gpu-torch-venv");
    let cc: ComputeCapability = cc.parse().unwrap();
    if let Probed::Found { value, .. } = &mut s.gpus {
        let g: &mut Gpu = &mut value[0];
        g.compute_capability = Some(cc);
        g.name = Some(name.to_owned());
    }
    if let Probed::Found { value, .. } = &mut s.driver {
        value.version = driver.parse().unwrap();
        value.cuda_version = None;
    }
    s
}

#[test]
fn each_distribution_family_installs_the_driver_its_own_way() {
    let cases: &[(&str, &[&str])] = &[
        ("Ubuntu", &["as root: apt install linux-headers-$(uname -r)", "as root: ubuntu-drivers install;"]),
        ("Linux Mint", &["ubuntu-drivers install"]),
        (
            "Debian GNU/Linux",
            &["non-free", "as root: apt install nvidia-open-kernel-dkms nvidia-driver firmware-misc-nonfree"],
        ),
        (
            "Fedora Linux",
            &["rpmfusion-nonfree-release", "as root: dnf install akmod-nvidia;", "Wait until akmods has built"],
        ),
        ("Rocky Linux", &["as root: dnf module install nvidia-driver:open-dkms"]),
        ("AlmaLinux", &["nvidia-driver:open-dkms"]),
        ("Arch Linux", &["as root: pacman -Syu nvidia-open-dkms"]),
        ("openSUSE Tumbleweed", &["openSUSE-repos-NVIDIA", "nvidia-open-driver-G06-signed-kmp-default"]),
        ("Gentoo", &["Install the newest NVIDIA driver for this GPU from your distribution"]),
    ];
    for (os, want) in cases {
        let (plan, prose) = plan_of(&judged(no_driver(os)), "presence.gpu_without_driver");
        for w in *want {
            assert!(prose.contains(w), "{os}: no {w:?} in\n{prose}");
        }
        // The fixture has Secure Boot on: the key is enrolled, and that reboot is the only one.
        assert!(prose.contains("Reboot; in the blue MOK manager") && !prose.contains("Reboot."), "{os}: {prose}");
        assert!(plan.root_script().is_some() || *os == "Gentoo", "{os}");
    }
    // Without Secure Boot: no key, one plain reboot at the end.
    let mut s = no_driver("Ubuntu");
    s.secure_boot = Probed::Found { value: SecureBoot::Disabled, source: "test".into() };
    let (_, prose) = plan_of(&judged(s), "presence.gpu_without_driver");
    assert!(prose.ends_with("as root: ubuntu-drivers install; Reboot."), "{prose}");
}

#[test]
fn nouveau_is_blacklisted_the_initramfs_rebuilt_and_the_driver_installed() {
    for (os, initramfs) in [("Ubuntu", "update-initramfs -u"), ("Fedora Linux", "dracut --force")] {
        let mut s = no_driver(os);
        if let Probed::Found { value, .. } = &mut s.pci_devices {
            for d in value.iter_mut() {
                d.driver = Some("nouveau".into());
            }
        }
        let (_, prose) = plan_of(&judged(s), "presence.nouveau_loaded");
        assert!(
            prose.starts_with("as root: printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | tee "),
            "{prose}"
        );
        assert!(prose.contains(&format!("as root: {initramfs}")), "{os}: {prose}");
        let install = if os == "Ubuntu" { "ubuntu-drivers install" } else { "dnf install akmod-nvidia" };
        assert!(prose.contains(install), "{os}: {prose}");
    }
}

/// A module installed for the running kernel except that Secure Boot refuses it, or one built for
/// another kernel.
fn module_problem(os: &str, f: impl FnOnce(&mut gpu_doctor_model::KernelModuleFacts)) -> Snapshot {
    let mut s = no_driver(os);
    let mut m = s.kernel_module.value().cloned().expect("the fixture has module facts");
    m.nvidia_loaded = false;
    m.installed = Some(gpu_doctor_model::InstalledModule {
        filename: "/lib/modules/6.8.0-45-generic/updates/dkms/nvidia.ko".into(),
        version: Some("570.124.06".into()),
        built_for_kernel: m.running_kernel.clone(),
        signer: Some("DKMS module signing key".into()),
    });
    f(&mut m);
    s.kernel_module = Probed::Found { value: m, source: "test".into() };
    s
}

#[test]
fn secure_boot_enrolls_the_key_of_this_distribution_then_rebuilds_signed() {
    for (os, key, rebuild) in [
        ("Ubuntu", "/var/lib/dkms/mok.pub", "dkms autoinstall"),
        ("Fedora Linux", "/etc/pki/akmods/certs/public_key.der", "akmods --force"),
    ] {
        let mut s = module_problem(os, |m| m.installed.as_mut().unwrap().signer = None);
        s.secure_boot = Probed::Found { value: SecureBoot::Enabled, source: "test".into() };
        let (plan, prose) = plan_of(&judged(s), "presence.secure_boot_unsigned_module");
        let import = prose.find(&format!("as root: mokutil --import {key}")).unwrap_or_else(|| panic!("{prose}"));
        let enroll = prose.find("\"Enroll MOK\"").unwrap();
        let signed = prose.find(&format!("as root: {rebuild}")).unwrap();
        assert!(import < enroll && enroll < signed, "{prose}");
        assert!(plan.steps.iter().any(|s| s.undo == format!("mokutil --delete {key}")));
    }
}

#[test]
fn a_module_for_another_kernel_is_rebuilt_for_the_running_one() {
    for (os, want) in [
        ("Ubuntu", "as root: apt install linux-headers-$(uname -r); as root: dkms autoinstall"),
        ("Fedora Linux", "as root: dnf install kernel-devel-$(uname -r); as root: akmods --force"),
        ("Arch Linux", "as root: pacman -S --needed linux-headers; as root: dkms autoinstall"),
        ("Gentoo", "Install the kernel headers of the running kernel"),
    ] {
        let s = module_problem(os, |m| m.installed.as_mut().unwrap().built_for_kernel = Some("6.1.0-1-old".into()));
        let (_, prose) = plan_of(&judged(s), "presence.module_for_other_kernel");
        assert!(prose.contains(want) && prose.ends_with("as root: modprobe nvidia"), "{os}: {prose}");
    }
}

#[test]
fn a_minimum_branch_is_installed_with_the_module_the_gpu_needs() {
    let target = PlanTarget::Driver { min_branch: Some(580) };
    // Ada: the open module of the branch asked for.
    let (_, prose) = direct(with_gpu("8.9", "NVIDIA GeForce RTX 4090", "550.54.14"), &target);
    assert!(prose.contains("as root: ubuntu-drivers install nvidia:580-open;"), "{prose}");
    // Blackwell: open, always.
    let (plan, prose) = direct(with_gpu("12.0", "NVIDIA GeForce RTX 5090", "550.54.14"), &target);
    assert!(prose.contains("nvidia:580-open"), "{prose}");
    assert!(plan.steps.iter().any(|s| s.why.contains("Blackwell needs it")), "{plan:#?}");
    // RHEL: the branch's module stream.
    let mut s = with_gpu("12.0", "NVIDIA GeForce RTX 5090", "550.54.14");
    set_os(&mut s, "Rocky Linux");
    let (_, prose) = direct(s, &target);
    assert!(prose.contains("Add NVIDIA's CUDA repository"), "{prose}");
    assert!(prose.contains("as root: dnf module install nvidia-driver:580-open"), "{prose}");
}

#[test]
fn a_legacy_gpu_gets_its_last_branch_and_the_proprietary_module() {
    let report = judged(with_gpu("6.1", "NVIDIA GeForce GTX 1080", "590.44.01"));
    let (plan, prose) = plan_of(&report, "presence.gpu_dropped_by_driver");
    assert!(prose.contains("as root: ubuntu-drivers install nvidia:580;"), "{prose}");
    assert!(plan.steps.iter().any(|s| s.why.contains("last driver branch") && s.why.contains("proprietary")));
    // Asked for more than the GPU's last branch: its last branch, and the conflict said.
    let (_, prose) =
        direct(with_gpu("6.1", "NVIDIA GeForce GTX 1080", "590.44.01"), &PlanTarget::Driver { min_branch: Some(590) });
    assert!(prose.starts_with("No driver branch serves both") && prose.contains("nvidia:580;"), "{prose}");
    // Arch keeps only the current branch: the legacy one comes from the AUR, by hand.
    let mut s = with_gpu("6.1", "NVIDIA GeForce GTX 1080", "590.44.01");
    set_os(&mut s, "Arch Linux");
    let (_, prose) = plan_of(&judged(s), "presence.gpu_dropped_by_driver");
    assert!(prose.contains("nvidia-580xx-dkms") && !prose.contains("pacman -Syu"), "{prose}");
}

#[test]
fn wsl_gets_the_windows_driver_and_never_a_linux_one() {
    let (plan, prose) = direct(fixture("wsl2"), &PlanTarget::Driver { min_branch: Some(580) });
    assert!(prose.starts_with("Install NVIDIA's Windows driver 580 or newer on the Windows side"), "{prose}");
    assert!(prose.contains("install no Linux driver inside WSL"), "{prose}");
    assert!(plan.steps.iter().all(|s| !matches!(s.kind, StepKind::Root { .. })), "{plan:#?}");
    // A Linux driver found inside: removed first.
    let mut s = fixture("wsl2");
    let mut loader = s.toolkits.value().cloned().unwrap_or_default();
    loader.loader_cache_read = true;
    loader.loader_libraries.push(gpu_doctor_model::LoaderEntry {
        name: "libcuda.so.1".into(),
        arch: "libc6,x86-64".into(),
        path: "/usr/lib/x86_64-linux-gnu/libcuda.so.1".into(),
    });
    s.toolkits = Probed::Found { value: loader, source: "test".into() };
    let (_, prose) = plan_of(&judged(s), "wsl.linux_driver_installed");
    assert!(prose.starts_with("as root: apt remove --purge 'nvidia-driver-*'"), "{prose}");
    assert!(prose.contains("&& ldconfig; Install NVIDIA's Windows driver on the Windows side"), "{prose}");
}

#[test]
fn an_unauthorized_egpu_is_enrolled_with_boltctl() {
    let mut s = fixture("egpu-thunderbolt");
    let report = judged(s.clone());
    let f = report.findings.iter().find(|f| f.id == "link.egpu_tunnel").unwrap();
    assert!(f.plan.is_none(), "an authorized enclosure needs nothing");
    if let Probed::Found { value, .. } = &mut s.links {
        let e = value.iter_mut().find_map(|l| l.egpu.as_mut()).unwrap();
        e.authorized = Some(false);
    }
    let (plan, prose) = plan_of(&judged(s.clone()), "link.egpu_tunnel");
    assert!(
        prose
            .starts_with("as root: boltctl enroll --policy auto \"$(cat /sys/bus/thunderbolt/devices/0-1/unique_id)\""),
        "{prose}"
    );
    assert!(prose.contains("Unplug the enclosure"), "{prose}");
    assert!(plan.steps[0].undo.starts_with("boltctl forget"));
    // A router name that is not a plain sysfs name never reaches a root line.
    if let Probed::Found { value, .. } = &mut s.links {
        value.iter_mut().find_map(|l| l.egpu.as_mut()).unwrap().router = Some("0-1; rm -rf /".into());
    }
    let (plan, _) = plan_of(&judged(s), "link.egpu_tunnel");
    assert!(plan.steps.iter().all(|s| !matches!(s.kind, StepKind::Root { .. })), "{plan:#?}");
}

/// Text planted in every part of the machine a plan could read.
const MARK: &str = "$(touch /tmp/pwned)'\"`x";

/// Properties over every fixture, distribution and driver target: a driver plan has no step
/// gpu-doctor runs (no user or verify step: root steps are only ever shown), and no root line holds
/// text read from the machine.
#[test]
fn driver_plans_only_show_root_steps_and_hold_no_machine_text() {
    let targets = [
        PlanTarget::Driver { min_branch: None },
        PlanTarget::Driver { min_branch: Some(580) },
        PlanTarget::DriverLoad { problem: DriverLoadProblem::Nouveau },
        PlanTarget::DriverLoad { problem: DriverLoadProblem::SecureBootUnsigned },
        PlanTarget::DriverLoad { problem: DriverLoadProblem::ModuleForOtherKernel },
        PlanTarget::Thunderbolt,
    ];
    let oses = ["Ubuntu", "Debian", "Fedora Linux", "Rocky Linux", "Arch Linux", "openSUSE Leap", "Gentoo"];
    let mut planned = 0;
    for name in ["gpu-no-driver", "no-driver", "consumer-gpu-torch-venv", "egpu-thunderbolt", "wsl2", "windows-wddm"] {
        for os in oses {
            let mut s = fixture(name);
            if let Probed::Found { value, .. } = &mut s.system {
                value.os_name = Some(format!("{os} {MARK}"));
            }
            if let Probed::Found { value, .. } = &mut s.gpus {
                for g in value.iter_mut() {
                    g.name = Some(format!("NVIDIA {MARK}"));
                }
            }
            if let Probed::Found { value, .. } = &mut s.links {
                for e in value.iter_mut().filter_map(|l| l.egpu.as_mut()) {
                    e.authorized = Some(false);
                    e.device_name = Some(MARK.into());
                }
            }
            s.secure_boot = Probed::Found { value: SecureBoot::Enabled, source: "test".into() };
            let report = judged(s);
            let mut all: Vec<Plan> = plans(&report, kb());
            all.extend(
                targets.iter().filter_map(|t| {
                    plan_for(&report, kb(), t, "test", &crate::planners::framework::Options::default())
                }),
            );
            for plan in all {
                planned += 1;
                assert!(!plan.steps.is_empty(), "{name}/{os}: an empty plan");
                for step in &plan.steps {
                    assert!(!step.is_run_by_gpu_doctor(), "{name}/{os}: {step:#?}");
                    if let StepKind::Root { command } = &step.kind {
                        assert!(!command.contains("pwned"), "{name}/{os}: machine text in {command}");
                        assert!(!step.undo.contains("pwned"), "{name}/{os}: machine text in {}", step.undo);
                    }
                    if let StepKind::Manual { text } = &step.kind {
                        assert!(!text.contains("pwned"), "{name}/{os}: machine text in {text}");
                    }
                }
                let script = plan.root_script().unwrap_or_default();
                assert!(script.lines().filter(|l| !l.starts_with('#')).all(|l| !l.contains("pwned")), "{script}");
            }
        }
    }
    assert!(planned > 100, "only {planned} plans");
}

/// The GPUs of real `nvidia-smi -q -x` captures (`../shared/fixtures/nvidia-smi-xml/`, sources in
/// its SOURCES.md), put into a replayed Ubuntu machine on driver `driver`, their capability looked up
/// by product name as for pasted text.
fn with_captured_gpus(xml: &str, driver: &str) -> Snapshot {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/nvidia-smi-xml").join(xml);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let smi = gpu_doctor_probes::parse::smi_xml::parse(&text).unwrap();
    let mut s = with_gpu("8.9", "placeholder", driver);
    if let Probed::Found { value, .. } = &mut s.gpus {
        let template = value[0].clone();
        *value = smi
            .gpus
            .iter()
            .zip(0..)
            .map(|(g, index)| Gpu { index, name: g.name.clone(), compute_capability: None, ..template.clone() })
            .collect();
    }
    s
}

/// Real captures, table-driven: a legacy GPU past its last branch gets that branch with the
/// proprietary module; current GPUs asked for R580 get its open module.
#[test]
fn captured_machines_get_the_branch_and_module_of_their_generation() {
    let dropped = [("gt-1030_470.74.xml", "Pascal"), ("tesla-m10-x4_390.94_vgpu-host.xml", "Maxwell")];
    for (xml, arch) in dropped {
        let report = judged(with_captured_gpus(xml, "590.44.01"));
        let (plan, prose) = plan_of(&report, "presence.gpu_dropped_by_driver");
        assert!(prose.contains("as root: ubuntu-drivers install nvidia:580;"), "{xml}: {prose}");
        assert!(plan.goal.contains("R580 (proprietary kernel module)"), "{xml} ({arch}): {}", plan.goal);
    }
    let current = [
        "rtx-4090_535.86.05.xml",
        "rtx-3060_570.124.04.xml",
        "dual-rtx-a5000_590.44.01.xml",
        "rtx-pro-6000-blackwell-maxq_590.44.01.xml",
    ];
    for xml in current {
        let (plan, prose) = direct(with_captured_gpus(xml, "550.54.14"), &PlanTarget::Driver { min_branch: Some(580) });
        assert!(prose.contains("as root: ubuntu-drivers install nvidia:580-open;"), "{xml}: {prose}");
        assert!(plan.goal.contains("open kernel module"), "{xml}: {}", plan.goal);
    }
}

/// Issue 29 item 7: with no driver, the generation is not known (gpus.toml maps product names,
/// not PCI ids); the open-module step names the PCI device id the bus gives (0x2684 on
/// `gpu-no-driver`) with where to look it up, instead of only "not known".
#[test]
fn a_gpu_known_only_by_its_pci_id_is_named_by_it() {
    let (plan, _) = plan_of(&judged(no_driver("Arch Linux")), "presence.gpu_without_driver");
    let install =
        plan.steps.iter().find(|s| s.why.contains("generation is not known")).unwrap_or_else(|| panic!("{plan:#?}"));
    assert!(install.why.contains("PCI device 0x2684: https://pci-ids.ucw.cz/read/PC/10de/2684"), "{}", install.why);
}

/// Ubuntu 24.04's own index (drivers.toml `[[archive]]`, read by scripts/kb-refresh from
/// archive.ubuntu.com's noble and noble-updates restricted Packages): nvidia-driver-550 is a
/// transitional package that installs R580, and there is no nvidia-driver-550-open at all.
#[test]
fn ubuntu_installs_a_branch_its_release_really_packages() {
    let target = PlanTarget::Driver { min_branch: Some(550) };
    let mut s = with_gpu("8.9", "NVIDIA GeForce RTX 4090", "535.54.03");
    set_os(&mut s, "Ubuntu 24.04.1 LTS");
    let (plan, prose) = direct(s, &target);
    assert!(prose.contains("ubuntu-drivers install nvidia:580"), "{prose}");
    assert!(!prose.contains("nvidia:550"), "{prose}");
    assert!(plan.steps.iter().any(|s| s.why.contains("Ubuntu 24.04's own package index, read")), "{plan:#?}");
    assert!(plan.goal.contains("R580"), "{}", plan.goal);
    // 22.04 has nvidia-driver-545 as a package of its own: from 545 up, that is what it installs.
    let mut s = with_gpu("8.9", "NVIDIA GeForce RTX 4090", "535.54.03");
    set_os(&mut s, "Ubuntu 22.04.4 LTS");
    let (_, prose) = direct(s, &PlanTarget::Driver { min_branch: Some(545) });
    assert!(prose.contains("nvidia:545"), "{prose}");
    // A release the knowledge base has not read keeps the branch asked for.
    let mut s = with_gpu("8.9", "NVIDIA GeForce RTX 4090", "535.54.03");
    set_os(&mut s, "Ubuntu 26.04 LTS");
    let (_, prose) = direct(s, &target);
    assert!(prose.contains("nvidia:550"), "{prose}");
}

/// Debian 13's own index: nvidia-driver 550.163.01 (non-free), nvidia-open-kernel-dkms 550.163.01
/// (contrib). Enough for a floor of 550: Debian's own packages; a floor of 580: NVIDIA's repository.
#[test]
fn debian_uses_its_own_driver_when_its_branch_is_new_enough() {
    let mut s = with_gpu("8.9", "NVIDIA GeForce RTX 4090", "535.54.03");
    set_os(&mut s, "Debian GNU/Linux 13 (trixie)");
    let (plan, prose) = direct(s.clone(), &PlanTarget::Driver { min_branch: Some(550) });
    assert!(prose.contains("as root: apt install nvidia"), "{prose}");
    assert!(!prose.contains("cuda-drivers") && !prose.contains("CUDA repository"), "{prose}");
    assert!(plan.goal.contains("R550"), "{}", plan.goal);
    let (plan, prose) = direct(s, &PlanTarget::Driver { min_branch: Some(580) });
    assert!(prose.contains("Add NVIDIA's CUDA repository") && prose.contains("nvidia-open-580"), "{prose}");
    assert!(plan.steps.iter().any(|s| s.why.contains("own driver packages are R550")), "{plan:#?}");
}

/// The remove lines (an install's undo) run on a machine where none of the packages exist: apt-get
/// must not stop with "Unable to locate package" (exit 100), as a glob like 'cuda-drivers*' makes it
/// do on Debian without NVIDIA's repository. Checked with apt-get's simulation, which needs no root,
/// where apt-get is installed.
#[test]
fn apt_remove_lines_do_not_fail_where_a_package_is_absent() {
    let Ok(apt) = which::which("apt-get") else {
        eprintln!("skipped: no apt-get here");
        return;
    };
    for d in kb().drivers.distro.iter().filter(|d| d.remove.as_deref().is_some_and(|r| r.contains("apt"))) {
        let line = d.remove.as_deref().unwrap_or_default();
        let words = shlex::split(line).unwrap();
        assert_eq!(words[..2], ["sudo", "apt-get"], "{line}");
        let out = std::process::Command::new(&apt).arg("-s").args(&words[2..]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{}: {line}: {err}", d.key);
    }
}

/// RHEL 10 and its rebuilds have no DNF module streams (NVIDIA's guide, R620, Table 5): `dnf install
/// nvidia-open`, a branch held with `dnf versionlock`; RHEL 8/9 keep the streams.
#[test]
fn rhel_10_installs_without_module_streams() {
    let mut s = with_gpu("8.9", "NVIDIA GeForce RTX 4090", "535.54.03");
    set_os(&mut s, "Rocky Linux 10.0 (Red Quartz)");
    let (_, prose) = direct(s.clone(), &PlanTarget::Driver { min_branch: Some(580) });
    assert!(prose.contains("as root: dnf versionlock '*nvidia*580*' && dnf install nvidia-open"), "{prose}");
    assert!(!prose.contains("dnf module"), "{prose}");
    let (_, prose) = direct(s, &PlanTarget::Driver { min_branch: None });
    assert!(prose.contains("as root: dnf install nvidia-open"), "{prose}");
    // A Pascal GPU needs the proprietary module, for which the guide names no package there: by hand.
    let mut s = with_gpu("6.1", "NVIDIA GeForce GTX 1080", "535.54.03");
    set_os(&mut s, "AlmaLinux 10.0 (Purple Lion)");
    let (plan, prose) = direct(s, &PlanTarget::Driver { min_branch: None });
    assert!(!prose.contains("dnf module") && !prose.contains("nvidia-open"), "{prose}");
    assert!(plan.steps.iter().any(|s| matches!(s.kind, StepKind::Manual { .. })), "{plan:#?}");
    // RHEL 9: the module streams.
    let mut s = with_gpu("8.9", "NVIDIA GeForce RTX 4090", "535.54.03");
    set_os(&mut s, "Red Hat Enterprise Linux 9.4 (Plow)");
    let (_, prose) = direct(s, &PlanTarget::Driver { min_branch: Some(580) });
    assert!(prose.contains("dnf module install nvidia-driver:580-open"), "{prose}");
}

/// collect_env from https://github.com/pytorch/pytorch/issues/175855 (the lines the driver plan
/// reads): driver 535 under torch cu128, on Ubuntu 22.04.
const COLLECT_ENV_UBUNTU: &str = "PyTorch version: 2.10.0.dev20251021+cu128\nIs debug build: False\n\
    CUDA used to build PyTorch: 12.8\nROCM used to build PyTorch: N/A\n\nOS: Ubuntu 22.04.4 LTS (x86_64)\n\
    Python platform: Linux-6.8.0-40-generic-x86_64-with-glibc2.35\nIs CUDA available: True\n\
    GPU models and configuration:\nGPU 0: NVIDIA RTX A6000\nGPU 1: NVIDIA RTX A6000\n\n\
    Nvidia driver version: 535.183.01\n";

#[test]
fn a_pasted_machines_os_line_names_its_distributions_driver_package() {
    let pasted = |text: &str| judged(gpu_doctor_probes::parse::paste::read_pasted(text, kb()).unwrap());
    let (_, prose) = plan_of(&pasted(COLLECT_ENV_UBUNTU), "driver.minor_version_compat");
    // Ubuntu 22.04's own archive packages 570 as nvidia-driver-580 (drivers.toml `[[archive]]`):
    // the open flavor for Ampere.
    assert!(prose.contains("ubuntu-drivers install nvidia:580-open"), "{prose}");
    // The same lines with os-release's name of Debian 12 in place of collect_env's: Debian's package.
    let debian = COLLECT_ENV_UBUNTU.replace("OS: Ubuntu 22.04.4 LTS (x86_64)\n", "")
        + "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\n";
    let (_, prose) = plan_of(&pasted(&debian), "driver.minor_version_compat");
    assert!(prose.contains("apt install") && !prose.contains("ubuntu-drivers"), "{prose}");
    // Without a name the fix stays the generic sentence.
    let unnamed = COLLECT_ENV_UBUNTU.replace("OS: Ubuntu 22.04.4 LTS (x86_64)\n", "");
    let (_, prose) = plan_of(&pasted(&unnamed), "driver.minor_version_compat");
    assert!(prose.contains("from your distribution or NVIDIA"), "{prose}");
}
