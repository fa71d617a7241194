//! System-level inputs: `lspci -k`/`-vv`, kernel log lines, `env`/`export`/`echo $PATH`,
//! `which -a nvcc` and nvcc run by path, `ls -l /usr/local/cuda*`, `ldconfig -p` lines. Each real
//! sample gives the facts the rules read, and the finding those facts lead to.

use super::*;
use gpu_doctor_model::{CudaVersion, Finding};
use gpu_doctor_model::{OsFamily, SecureBoot, ToolkitKind};

fn findings(s: &Snapshot) -> Vec<Finding> {
    gpu_doctor_judge::diagnose::diagnose(s, kb())
}

fn finding_ids(s: &Snapshot) -> Vec<String> {
    findings(s).into_iter().map(|f| f.id).collect()
}

#[test]
fn lspci_vv_with_nouveau_in_use_gives_the_device_and_the_nouveau_finding() {
    let s = read(LSPCI_NOUVEAU);
    assert_eq!(formats(&s), ["lspci"]);
    let d = s.pci_devices.value().unwrap();
    assert_eq!(d.len(), 1);
    assert_eq!(
        (d[0].bus_id.as_str(), d[0].class, d[0].driver.as_deref()),
        ("0000:01:00.0", 0x03_0000, Some("nouveau"))
    );
    assert_eq!(s.platform.platform.os, OsFamily::Linux);
    assert!(is_unknown(&s.links), "`Capabilities: <access denied>`: no link lines");
    assert_eq!(finding_ids(&s), ["presence.nouveau_loaded"]);
}

#[test]
fn lspci_device_ids_and_a_device_no_driver_holds() {
    // `lspci -nnk` of a GPU with no driver bound: only the modules that could take it are listed.
    let text = "01:00.0 VGA compatible controller [0300]: NVIDIA Corporation TU117 [GeForce GTX 1650] [10de:1f82] (rev a1)\n\
                \tSubsystem: Micro-Star International Co., Ltd. [MSI] TU117 [GeForce GTX 1650] [1462:8d92]\n\
                \tKernel modules: nvidiafb, nouveau\n\
                01:00.1 Audio device [0403]: NVIDIA Corporation Device [10de:10fa] (rev a1)\n\
                \tKernel driver in use: snd_hda_intel\n";
    let s = read(text);
    let d = s.pci_devices.value().unwrap();
    assert_eq!(d.len(), 1, "the HDMI audio function is not a GPU");
    assert_eq!((d[0].device_id, d[0].driver.as_deref()), (0x1f82, None));
    assert_eq!(finding_ids(&s), ["presence.gpu_without_driver"]);
}

#[test]
fn lspci_lines_that_do_not_say_which_driver_list_nothing() {
    // A bare `lspci | grep -i nvidia` says nothing about the driver; other vendors' GPUs are not listed.
    let text = "0000:5a:00.0 3D controller: NVIDIA Corporation Device 1db6 (rev a1)\n\
                00:02.0 VGA compatible controller: Intel Corporation UHD Graphics 630 (rev 02)\n\
                \tKernel driver in use: i915\n";
    assert!(unrecognised(text));
}

#[test]
fn lspci_vv_link_lines_give_the_link_and_the_idle_finding() {
    let s = read(LSPCI_LINK);
    let l = &s.links.value().unwrap()[0];
    assert_eq!(l.bus_id, "0000:62:00.0");
    assert_eq!((l.gen_current, l.width_current, l.gen_max, l.width_max), (Some(1), Some(16), Some(4), Some(16)));
    assert!(l.idle_note.is_some());
    assert_eq!(s.pci_devices.value().unwrap()[0].driver.as_deref(), Some("nvidia"));
    assert_eq!(finding_ids(&s), ["link.below_max_idle"], "utilization is not in lspci: not a fault");
}

#[test]
fn lspci_of_a_gpu_trained_at_one_lane_is_the_narrow_slot_finding() {
    let s = read(LSPCI_X1_ROCKCHIP);
    let l = &s.links.value().unwrap()[0];
    assert_eq!(l.bus_id, "0002:21:00.0");
    assert_eq!((l.gen_current, l.width_current, l.gen_max, l.width_max), (Some(1), Some(1), Some(4), Some(16)));
    let b = l.boot_limit.as_ref().expect("one lane of the card's sixteen is the link's limit");
    assert_eq!((b.width, b.capable_width, b.seen_by), (1, Some(16), gpu_doctor_model::LinkSeenBy::Lspci));
    assert_eq!(b.line, "LnkSta: Speed 2.5GT/s (downgraded), Width x1 (downgraded)");
    // The page's driver failed to probe the card (`Kernel modules:` only, no driver in use). Its
    // Resizable BAR capability shows BAR1 at 256MB of the 32GB offered: the BAR1 note, an Info.
    let f = findings(&s);
    assert_eq!(
        f.iter().map(|f| f.id.as_str()).collect::<Vec<_>>(),
        ["presence.gpu_without_driver", "link.narrow_slot", "topology.bar1_too_small_for_p2p"]
    );
    assert!(f[1].summary.contains("Gen1 x1 link, narrower than the card's Gen4 x16"), "{}", f[1].summary);
    assert!(f[1].detail.starts_with("lspci shows the GPU's own link trained at Gen1 x1"), "{}", f[1].detail);
}

#[test]
fn lspci_detail_lines_without_their_header_still_give_a_one_lane_gpu() {
    // The same block from its `LnkCtl` line on, as people cut it: no header, no LnkCap; lspci's
    // `(downgraded)` says the one lane is below the card's own.
    let from = LSPCI_X1_ROCKCHIP.find("\t\tLnkCtl:").unwrap();
    let s = read(&LSPCI_X1_ROCKCHIP[from..]);
    let l = &s.links.value().unwrap()[0];
    assert_eq!((l.width_current, l.width_max), (Some(1), None));
    assert!(is_unknown(&s.pci_devices), "a block without its header names no device");
    let f = findings(&s);
    // The block's Resizable BAR lines come with it: BAR1 256MB, the BAR1 note (an Info).
    assert_eq!(
        f.iter().map(|f| f.id.as_str()).collect::<Vec<_>>(),
        ["link.narrow_slot", "topology.bar1_too_small_for_p2p"]
    );
    assert!(
        f[0].summary.starts_with("The GPU (header line not pasted) sits behind a Gen1 x1 link"),
        "{}",
        f[0].summary
    );
    // Not one lane below the card's: a healthy x1 device (`(ok)`), a width that is not one lane,
    // and a grep over several devices' LnkSta lines say nothing of the GPU.
    for text in [
        "\t\tLnkSta:\tSpeed 5GT/s (ok), Width x1 (ok)\n",
        "\t\tLnkSta:\tSpeed 8GT/s (downgraded), Width x8 (downgraded)\n",
        "\t\tLnkSta:\tSpeed 8GT/s (ok), Width x16 (ok)\n\t\tLnkSta:\tSpeed 2.5GT/s (downgraded), Width x1 (downgraded)\n",
        "LnkSta:\tSpeed 2.5GT/s (downgraded), Width x1 (downgraded)\n",
    ] {
        assert!(unrecognised(text), "{text:?}");
    }
}

#[test]
fn the_kernels_bandwidth_line_of_a_gpu_on_one_lane_is_the_narrow_slot_finding() {
    // Wrapped over three lines, in older kernels' words (`2.5 GT/s x1`, `8 GT/s x16`).
    let s = read(KERNEL_BANDWIDTH_X1);
    assert_eq!(formats(&s), ["kernel log"]);
    let links = s.links.value().unwrap();
    assert_eq!(links.len(), 1, "the SATA card's line is not a GPU's: {links:?}");
    let l = &links[0];
    assert_eq!(l.bus_id, "0000:04:00.0");
    assert_eq!((l.gen_current, l.width_current, l.gen_max, l.width_max), (Some(1), Some(1), Some(3), Some(16)));
    assert_eq!(l.idle_note, None, "fewer lanes at enumeration are not power saving");
    let b = l.boot_limit.as_ref().unwrap();
    assert_eq!((b.at.as_str(), b.available_gbps, b.capable_gbps), ("0000:00:00.0", 2.0, Some(126.016)));
    assert!(b.line.starts_with("pci 0000:04:00.0: 2.000 Gb/s") && b.line.ends_with("with 8 GT/s x16 link)"), "{b:?}");
    let f = findings(&s);
    assert_eq!(f.iter().map(|f| f.id.as_str()).collect::<Vec<_>>(), ["link.narrow_slot"]);
    assert_eq!(f[0].severity, gpu_doctor_model::Severity::Warning);
    assert!(f[0].summary.contains("Gen1 x1 link, narrower than the card's Gen3 x16"), "{:?}", f[0].summary);
    assert!(f[0].detail.contains("about 0.25 GB/s per direction instead of the 15.75 GB/s"), "{:?}", f[0].detail);
    assert_eq!(f[0].evidence, std::slice::from_ref(&b.line));
}

#[test]
fn a_gpu_behind_a_boards_one_lane_pcie_controller_is_the_narrow_slot_finding() {
    // No bandwidth line of the kernel's: the controller's own `link up, 5.0 GT/s PCIe x1` and the GPU
    // enumerated on its root bus.
    let s = read(KERNEL_BRCM_PCIE_X1);
    let links = s.links.value().unwrap();
    assert_eq!(links.len(), 1, "{links:?}");
    let b = links[0].boot_limit.as_ref().unwrap();
    assert_eq!(links[0].bus_id, "0000:01:00.0");
    assert_eq!((b.at.as_str(), b.generation, b.width, b.capable_width), ("fd500000.pcie", Some(2), 1, None));
    assert_eq!(b.line, "brcm-pcie fd500000.pcie: link up, 5.0 GT/s PCIe x1 (SSC)");
    let f = findings(&s);
    assert_eq!(f.iter().map(|f| f.id.as_str()).collect::<Vec<_>>(), ["link.narrow_slot"]);
    assert!(f[0].summary.contains("Gen2 x1 link, narrower than the card's"), "{:?}", f[0].summary);
    assert!(f[0].detail.contains("about 0.50 GB/s per direction"), "{:?}", f[0].detail);
    // Without the GPU's line, the controller's link is nobody's.
    let no_gpu: String = KERNEL_BRCM_PCIE_X1.lines().filter(|l| !l.contains("[10de:")).collect::<Vec<_>>().join("\n");
    assert!(read(&no_gpu).links.value().is_none_or(|l| l.iter().all(|l| l.boot_limit.is_none())));
}

#[test]
fn a_controllers_link_counts_only_for_gpus_in_its_domain() {
    // The RP1's four lanes are domain 0001's; a GPU in domain 0000 is not behind them, and the
    // one-lane controller says no domain while another controller is in the text.
    let lines: Vec<String> = KERNEL_BRCM_PCIE_PI5.lines().map(str::to_owned).collect();
    let limits = crate::parse::paste::boot_limits(&lines);
    assert!(limits.iter().all(|(_, bus, _)| bus == "0000:01:00.0"), "only the switch's own line: {limits:?}");
    let mut nvidia = lines;
    nvidia.push("[    0.623700] pci 0001:01:00.0: [10de:1b80] type 00 class 0x030000".to_owned());
    nvidia.push("[    0.623800] pci 0000:03:00.0: [10de:1b80] type 00 class 0x030000".to_owned());
    let limits = crate::parse::paste::boot_limits(&nvidia);
    let rp1: Vec<_> = limits.iter().filter(|(_, bus, _)| bus.starts_with("0001:")).collect();
    assert_eq!(rp1.len(), 1, "{limits:?}");
    assert_eq!((rp1[0].2.at.as_str(), rp1[0].2.width), ("1000120000.pcie", 4));
    assert!(!rp1[0].2.narrower_than_card(), "four lanes of unknown card lanes are not called narrow");
    assert!(!limits.iter().any(|(_, bus, _)| bus == "0000:03:00.0"), "which controller is not said: {limits:?}");
}

#[test]
fn a_bandwidth_line_beside_lspci_goes_to_the_link_lspci_gave() {
    // The same GPU's lspci -vv block (Gen1 x16 of Gen4 x16) and its kernel line at enumeration (x4 of x16):
    // one link, its values lspci's, the kernel's limit on it.
    let text = format!(
        "{LSPCI_LINK}\npci 0000:62:00.0: 31.504 Gb/s available PCIe bandwidth, limited by 16.0 GT/s PCIe x4 link at \
         0000:60:01.1 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)\n"
    );
    let s = read(&text);
    let links = s.links.value().unwrap();
    assert_eq!(links.len(), 1, "{links:?}");
    let l = &links[0];
    assert_eq!((l.bus_id.as_str(), l.values_from.as_str()), ("0000:62:00.0", "lspci -vv"));
    assert_eq!((l.gen_current, l.width_current, l.gen_max, l.width_max), (Some(1), Some(16), Some(4), Some(16)));
    let b = l.boot_limit.as_ref().expect("the kernel's line on lspci's link");
    assert_eq!((b.at.as_str(), b.width, b.capable_width), ("0000:60:01.1", 4, Some(16)));
    assert_eq!(l.idle_note, None, "fewer lanes at enumeration are not power saving, whoever made the link");
    assert_eq!(finding_ids(&s), ["link.narrow_slot"]);
}

#[test]
fn a_bandwidth_line_limited_only_in_speed_is_the_idle_note_and_another_devices_line_is_not_read() {
    // GPUs may train at 2.5 GT/s until used: x16 of x16 says nothing is missing.
    let s = read(KERNEL_BANDWIDTH_X16);
    let links = s.links.value().unwrap();
    assert_eq!(links.len(), 1, "the USB controller's line is not a GPU's: {links:?}");
    let l = &links[0];
    assert_eq!(
        (l.bus_id.as_str(), l.gen_current, l.width_current, l.gen_max, l.width_max),
        ("0000:01:00.0", Some(1), Some(16), Some(3), Some(16))
    );
    assert!(l.idle_note.is_some());
    assert_eq!(finding_ids(&s), ["link.below_max_idle"]);
    // Without the line that says what the device is, nothing names it a GPU.
    let bare: String =
        KERNEL_BANDWIDTH_X16.lines().filter(|l| !l.contains("[10de:")).map(|l| format!("{l}\n")).collect();
    assert!(unrecognised(&bare), "{bare}");
}

#[test]
fn a_bandwidth_line_of_a_bus_another_reader_names_a_gpu_is_read_and_cut_lines_are_not() {
    // The device line removed, the GPU named by nouveau's line instead.
    let text = KERNEL_BANDWIDTH_X1.replace(
        "[   54.047067] pci 0000:04:00.0: [10de:11c4] type 00 class 0x030000",
        "[   80.221375] nouveau 0000:04:00.0: NVIDIA GK106 (0e63d0a1)",
    );
    assert_eq!(read(&text).links.value().unwrap()[0].width_max, Some(16));
    for cut in ["(capable of 126.016 Gb/s", "limited by 2.5 GT/s x1 link at", "2.000 Gb/s available PCIe bandwidth,"] {
        let line = format!(
            "pci 0000:04:00.0: [10de:11c4] type 00 class 0x030000\npci 0000:04:00.0: 2.000 Gb/s available PCIe bandwidth, {cut}\n"
        );
        assert!(unrecognised(&line), "{line}");
    }
    let wide = "pci 0000:04:00.0: [10de:11c4] type 00 class 0x030000\npci 0000:04:00.0: 2.000 Gb/s available PCIe bandwidth, limited by 2.5 GT/s x64 link at 0000:00:00.0 (capable of 126.016 Gb/s with 8 GT/s x16 link)\n";
    assert!(unrecognised(wide), "64 lanes is no PCIe link");
}

#[test]
fn nouveau_naming_the_chip_in_the_kernel_log_holds_the_gpu() {
    let s = read("[    5.436312] nouveau 0000:01:00.0: NVIDIA GM204 (124020a1)\n");
    assert_eq!(formats(&s), ["kernel log"]);
    assert_eq!(s.pci_devices.value().unwrap()[0].driver.as_deref(), Some("nouveau"));
    assert_eq!(finding_ids(&s), ["presence.nouveau_loaded"]);
}

/// beclab/Olares#3963 (tests/corpus/no_driver_or_gpu_not_visible/olares-3963-nova-core-holds-gpu.txt):
/// NVIDIA's module names the driver that holds the GPU, here nova-core; the finding blacklists nova,
/// not nouveau, so it carries no nouveau plan.
#[test]
fn nvrm_naming_nova_core_as_the_driver_holding_the_gpu_is_the_open_driver_finding() {
    let s = read(KERNEL_NOVA_CORE);
    assert_eq!(s.pci_devices.value().unwrap()[0].driver.as_deref(), Some("NovaCore"));
    let f = findings(&s);
    assert_eq!(f.iter().map(|f| f.id.as_str()).collect::<Vec<_>>(), ["presence.nouveau_loaded"]);
    assert!(f[0].summary.contains("nova-core"), "{f:?}");
    assert!(f[0].fix.as_deref().unwrap_or("").contains("blacklist nova_core"), "{f:?}");
    assert!(f[0].plan.is_none(), "the nouveau plan would blacklist the wrong driver");
    assert!(unrecognised("NVRM: GPU 0000:01:00.0 is already bound to .\n"), "no driver named");
}

#[test]
fn a_device_named_by_lspci_and_the_kernel_log_is_listed_once() {
    let s = read(
        "01:00.0 VGA compatible controller: NVIDIA Corporation GM204 [GeForce GTX 970] (rev a1)\n\
         \tKernel driver in use: nvidia\n\n\
         [    5.436312] nouveau 0000:01:00.0: NVIDIA GM204 (124020a1)\n",
    );
    assert_eq!(formats(&s), ["lspci", "kernel log"]);
    let d = s.pci_devices.value().unwrap();
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].driver.as_deref(), Some("nvidia"), "the first reader to name the device wins");
}

#[test]
fn nouveau_lines_of_its_subsystems_hold_the_gpu_and_an_unknown_chipset_does_not() {
    // clearlinux/distribution#867 (tests/corpus/no_driver_or_gpu_not_visible/clearlinux-867-…).
    let s = read("[   68.836524] nouveau 0000:01:00.0: gr: init failed, -110\n");
    assert_eq!(s.pci_devices.value().unwrap()[0].driver.as_deref(), Some("nouveau"));
    assert_eq!(finding_ids(&s), ["presence.nouveau_loaded"]);
    assert!(unrecognised("[    2.100000] nouveau 0000:01:00.0: unknown chipset (172000a1)\n"));
}

#[test]
fn a_rejected_module_key_is_secure_boot_refusing_the_unsigned_module() {
    let s = read(KEY_REJECTED);
    assert_eq!(s.secure_boot.value(), Some(&SecureBoot::Enabled));
    let m = s.kernel_module.value().unwrap();
    assert!(!m.nvidia_loaded && m.installed.as_ref().is_some_and(|i| i.signer.is_none()));
    assert_eq!(ids(&s), ["nvml.cannot_communicate", "kernel.module_key_rejected"]);
    assert_eq!(
        finding_ids(&s),
        ["presence.secure_boot_unsigned_module"],
        "the fact-based finding covers the category; the error lines become its evidence"
    );
}

#[test]
fn a_refusal_without_a_key_message_is_secure_boot_only_beside_lockdown() {
    let refused = "modprobe: ERROR: could not insert 'nvidia': Operation not permitted\n";
    let alone = read_pasted(refused, kb()).ok();
    assert!(alone.as_ref().is_none_or(|s| is_unknown(&s.secure_boot)), "{alone:?}");
    let lockdown =
        "[  398.381052] Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7\n";
    let s = read(&format!("{lockdown}{refused}"));
    assert_eq!(s.secure_boot.value(), Some(&SecureBoot::Enabled));
    let s = read("modprobe: ERROR: could not insert 'nvidia': Required key not available\n");
    assert_eq!(s.secure_boot.value(), Some(&SecureBoot::Enabled));
}

#[test]
fn another_module_refused_says_nothing_about_nvidias() {
    let s = read("modprobe: ERROR: could not insert 'px1800kbd': Key was rejected by service\n");
    assert!(is_unknown(&s.secure_boot) && is_unknown(&s.kernel_module));
    assert_eq!(finding_ids(&s), ["observed.kernel.module_key_rejected"]);
}

#[test]
fn a_legacy_gpu_message_gives_the_gpu_and_the_driver_that_dropped_it() {
    let s = read(LEGACY_GPU);
    assert_eq!(s.driver.value().unwrap().version.as_str(), "595.58.03");
    assert_eq!(gpus(&s)[0].name.as_deref(), Some("NVIDIA GeForce GTX 1050"));
    let f = findings(&s);
    assert_eq!(f[0].id, "presence.gpu_dropped_by_driver", "{f:#?}");
    assert!(f[0].summary.contains("595.58.03"), "{}", f[0].summary);
}

/// The legacy-GPU line quoted with the words between the name and `is` elided (`GPU ... is`, as a
/// maintainer quoted a reporter's log in anomixer/proxmox-vgpu-installer#29) still names the GPU and
/// the driver that dropped it.
#[test]
fn a_legacy_gpu_message_quoted_with_an_ellipsis_is_read() {
    let s = read(
        "NVRM: The NVIDIA Tesla P100-PCIE-16GB GPU ... is\n\
         NVRM:  supported through the NVIDIA 580.xx Legacy drivers.\n\
         NVRM:  The 595.71.03 NVIDIA driver will ignore\n\
         NVRM: No NVIDIA GPU found.\n",
    );
    assert_eq!(gpus(&s)[0].name.as_deref(), Some("Tesla P100-PCIE-16GB"));
    assert_eq!(findings(&s)[0].id, "presence.gpu_dropped_by_driver");
}

/// siderolabs/talos#8764 and fgci-org/ansible-role-cuda#16 (tests/corpus/no_driver_or_gpu_not_visible/):
/// a Kepler GeForce GT 710 on R535 and a Fermi Tesla M2070 on R396, named only by the kernel.
#[test]
fn legacy_kepler_and_fermi_boards_the_kernel_names_are_dropped_by_the_driver() {
    for (text, name, arch, last) in [
        (
            "NVRM: The NVIDIA GeForce GT 710 GPU installed in this system is\n\
             NVRM:  supported through the NVIDIA 470.xx Legacy drivers. Please\n\
             NVRM:  visit http://www.nvidia.com/object/unix.html for more\n\
             NVRM:  information.  The 535.129.03 NVIDIA driver will ignore\n\
             NVRM:  this GPU.  Continuing probe...\n",
            "GeForce GT 710",
            "Kepler",
            "R470",
        ),
        (
            "[15280.304871] NVRM: The NVIDIA Tesla M2070 GPU installed in this system is\n\
             NVRM:  supported through the NVIDIA 390.xx Legacy drivers. Please\n\
             NVRM:  visit http://www.nvidia.com/object/unix.html for more\n\
             NVRM:  information.  The 396.26 NVIDIA driver will ignore\n\
             NVRM:  this GPU.  Continuing probe...\n",
            "Tesla M2070",
            "Fermi",
            "R390",
        ),
    ] {
        let s = read(text);
        let f = findings(&s);
        let dropped = f.iter().find(|f| f.id == "presence.gpu_dropped_by_driver").unwrap_or_else(|| panic!("{f:#?}"));
        assert!(dropped.summary.contains(name) && dropped.summary.contains(arch), "{}", dropped.summary);
        assert!(dropped.evidence.iter().any(|e| e.contains(last)), "{:?}", dropped.evidence);
    }
}

/// AbdBarho/stable-diffusion-webui-docker#117 and microsoft/WSL#5554 (tests/corpus/wsl_specific/): WSL1
/// named in words, or by its kernel release although the words say WSL2.
#[test]
fn wsl1_named_in_words_or_by_its_kernel_is_the_wsl1_finding() {
    let s = read(
        "I'm using Windows with WSL1\n\
         nvidia-container-cli: initialization error: WSL environment detected but no adapters were found: unknown\n",
    );
    assert_eq!(s.platform.wsl.as_ref().map(|w| w.version), Some(1));
    assert_eq!(finding_ids(&s), ["wsl.version_one"]);
    let s = read(WSL_VERSION);
    assert_eq!(s.platform.wsl.as_ref().map(|w| w.version), Some(1), "the kernel outweighs the word wsl2");
    assert!(finding_ids(&s).contains(&"wsl.version_one".to_owned()), "{:?}", finding_ids(&s));
    let s = read(
        "Ubuntu 22.04 on WSL2\nnvidia-smi\n\
         NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
    );
    assert!(!finding_ids(&s).contains(&"wsl.version_one".to_owned()));
}

/// An Insider-only Windows build (microsoft/WSL#6617's environment block, the WSL team's own issue for build 21327;
/// microsoft/WSL#6702's `Windows build number: 21337.1000`) beside CUDA finding no device is the Insider regression;
/// a release build (19045, 22631, Windows Server 2022's 20348) or a build number's look-alike in another version is
/// not one.
#[test]
fn an_insider_windows_build_with_no_gpu_is_the_insider_regression() {
    const ID: &str = "wsl.windows_build_gpu_regression";
    let failed = "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx";
    for build in ["Windows build number: 21327", "Windows build number: 21337.1000"] {
        let s = read(&format!("{build}\n{failed}\n"));
        let wsl = s.platform.wsl.as_ref().expect("an Insider build is WSL 2's preview");
        assert_eq!((wsl.version, wsl.insider_build.as_deref()), (2, Some(build)));
        let f = findings(&s).into_iter().find(|f| f.id == ID).expect(build);
        assert!(f.fix.as_deref().is_some_and(|x| x.contains("Windows Update")), "{f:#?}");
    }
    for other in [
        "Windows build number: 19045.3448",
        "Microsoft Windows [Version 10.0.22631.4460]",
        "build 1.21327.3",
        "OS: Microsoft Windows Server 2022 Datacenter, build 20348",
    ] {
        assert!(!finding_ids(&read(&format!("{other}\n{failed}\n"))).contains(&ID.to_owned()), "{other}");
    }
    // The build alone, with CUDA working, is nothing.
    assert!(!finding_ids(&read("Windows build number: 21327\n")).contains(&ID.to_owned()));
}

/// ultralytics/ultralytics#16862's title (WSL named, verbatim) and PyTorch's out-of-memory line as OpenMOSS/MOSS#328
/// pasted it: under WSL an out of memory with the GPU's memory not full is the pinned host memory limit, said as a
/// note with both readings; on native Linux the same line is only CUDA's.
#[test]
fn an_out_of_memory_under_wsl_names_the_pinned_memory_limit() {
    const ID: &str = "wsl.pinned_memory_limited";
    let text = "WSL Ubuntu2204 trains YOLOV8 custom model with CUDA out of memory error when there is sufficient video memory\n\
                RuntimeError: CUDA error: out of memory\n";
    let f = findings(&read(text)).into_iter().find(|f| f.id == ID).expect("WSL and an out of memory");
    assert!(f.fix.as_deref().is_some_and(|x| x.contains("pin_memory=False") && x.contains("GGML_CUDA_NO_PINNED=1")));
    let native = "RuntimeError: CUDA error: out of memory\n";
    assert!(!finding_ids(&read(native)).contains(&ID.to_owned()));
}

#[test]
fn nvcc_run_by_path_and_path_order_pick_two_toolkits() {
    let s = read(NVCC_PATHS);
    let t = s.toolkits.value().unwrap();
    let by_root = |r: &str| t.install(r).unwrap_or_else(|| panic!("no {r}: {t:#?}"));
    assert_eq!(by_root("/usr").version.map(CudaVersion::major_minor), Some(CudaVersion::new(12, 0)));
    assert_eq!(by_root("/usr/local/cuda").version.map(CudaVersion::major_minor), Some(CudaVersion::new(12, 8)));
    assert!(t.installs.iter().all(|i| i.kind != ToolkitKind::Pasted), "the bare nvcc entries are tied to paths");
    assert_eq!(t.picks.path.as_ref().and_then(|p| p.install_root.as_deref()), Some("/usr"));
    assert_eq!(t.picks.usr_local_cuda.as_ref().and_then(|p| p.install_root.as_deref()), Some("/usr/local/cuda"));
    assert_eq!(s.env.path.first().map(String::as_str), Some("/comfy/mnt/venv/bin"));
    assert!(finding_ids(&s).contains(&"toolkits.names_disagree".to_owned()));
}

/// nvcc run by its path with its answer on the same line, in words beside the bare `nvcc --version`'s
/// (AlexeyAB/darknet#8214, the two lines as posted): PATH's nvcc and /usr/local/cuda's are two releases.
#[test]
fn an_nvcc_path_and_its_answer_on_one_line_tie_the_version_to_that_toolkit() {
    let s = read(
        "- `nvcc --version` shows `Cuda compilation tools, release 9.1, V9.1.85` \n\
         - but `/usr/local/cuda/bin/nvcc --version` shows `Cuda compilation tools, release 11.3, V11.3.58, Build \
         cuda_11.3.r11.3/compiler.29745058_0`\n",
    );
    let t = s.toolkits.value().unwrap();
    let local = t.install("/usr/local/cuda").expect("the toolkit at /usr/local/cuda");
    assert_eq!(local.version.map(CudaVersion::major_minor), Some(CudaVersion::new(11, 3)));
    assert_eq!(local.nvcc.as_deref(), Some("/usr/local/cuda/bin/nvcc"));
    let path = t.picks.path.as_ref().and_then(|p| p.install_root.as_deref()).and_then(|r| t.install(r));
    assert_eq!(path.and_then(|i| i.version).map(CudaVersion::major_minor), Some(CudaVersion::new(9, 1)));
    assert!(finding_ids(&s).contains(&"toolkits.names_disagree".to_owned()));
}

#[test]
fn which_ls_and_env_lines_pick_toolkits_by_every_name() {
    let text = "$ which -a nvcc\n/usr/local/cuda-11.8/bin/nvcc\n/usr/bin/nvcc\n\
                $ ls -l /usr/local/ | grep cuda\n\
                lrwxrwxrwx  1 root root   21 Mar  1 12:00 cuda -> /usr/local/cuda-12.1/\n\
                drwxr-xr-x 17 root root 4096 Mar  1 12:00 cuda-11.8\n\
                drwxr-xr-x 17 root root 4096 Mar  1 12:00 cuda-12.1\n\
                $ env | grep -i cuda\nCUDA_HOME=/usr/local/cuda\n\
                LD_LIBRARY_PATH=/usr/local/cuda-11.8/lib64:$LD_LIBRARY_PATH\n";
    let s = read(text);
    let t = s.toolkits.value().unwrap();
    let root = |p: &Option<gpu_doctor_model::Pick>| p.as_ref().and_then(|p| p.install_root.clone());
    assert_eq!(root(&t.picks.path).as_deref(), Some("/usr/local/cuda-11.8"), "which -a lists PATH order");
    assert_eq!(root(&t.picks.usr_local_cuda).as_deref(), Some("/usr/local/cuda-12.1"));
    assert_eq!(root(&t.picks.cuda_home).as_deref(), Some("/usr/local/cuda-12.1"), "through the link's alias");
    assert_eq!(root(&t.picks.ld_library_path).as_deref(), Some("/usr/local/cuda-11.8"));
    assert_eq!(s.env.ld_library_path, ["/usr/local/cuda-11.8/lib64"], "the unexpanded $VAR is dropped");
    assert_eq!(t.install("/usr/local/cuda-12.1").unwrap().aliases, ["/usr/local/cuda"]);
    assert!(finding_ids(&s).contains(&"toolkits.names_disagree".to_owned()));
}

/// `docker run`'s `-e`, `--env` and `--env=` before the image give the container's variables, quoted or not, only relevant
/// ones; a program's advice with a placeholder folder (`<path_to_cuda_dir/lib64`, bitsandbytes' warning) gives
/// no folder.
#[test]
fn container_command_line_variables_and_placeholder_folders() {
    let s = read(
        "$ docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility --env \"CUDA_VISIBLE_DEVICES=1\" \
         --env=BNB_CUDA_VERSION='118' -e TZ=UTC img:1 python train.py\n",
    );
    let vars: Vec<(&str, &str)> = s.env.vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(
        vars,
        [("BNB_CUDA_VERSION", "118"), ("CUDA_VISIBLE_DEVICES", "1"), ("NVIDIA_DRIVER_CAPABILITIES", "compute,utility")]
    );
    // Up to the image: options with values (`--gpus all`, `-v a:b`, `--shm-size 8g`) and without (`--rm`, `-it`)
    // are passed over; the command's own `-e` after the image is not the container's.
    let s = read(
        "docker run --gpus all --rm -v /data:/data --shm-size 8g -it -e CUDA_HOME=/usr/local/cuda nvcr.io/nvidia/pytorch:24.01-py3 \
         python run.py -e NVIDIA_DRIVER_CAPABILITIES=utility\n",
    );
    let vars: Vec<(&str, &str)> = s.env.vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(vars, [("CUDA_HOME", "/usr/local/cuda")]);
    let s = read(
        "For example by adding the following to your .bashrc: export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:<path_to_cuda_dir/lib64\n",
    );
    assert!(s.env.ld_library_path.is_empty(), "{:?}", s.env.ld_library_path);
}

#[test]
fn cuda_visible_devices_before_a_command_hides_the_only_gpu() {
    let s = read(VISIBLE_DEVICES);
    assert_eq!(s.env.vars.get("CUDA_VISIBLE_DEVICES").map(String::as_str), Some("2"));
    assert_eq!(gpus(&s).len(), 1);
    assert!(finding_ids(&s).contains(&"env.cuda_visible_devices_hides_all".to_owned()));
}

#[test]
fn cuda_home_with_a_stray_colon_is_read_from_the_nvcc_path_and_from_words() {
    // The nvcc path PyTorch's extension builder or the shell ran, a `:` at either end of CUDA_HOME.
    for (line, home) in [
        // facebookresearch/SparseConvNet#94 (the issue's title).
        ("unable to execute ':/usr/local/cuda-8.0/bin/nvcc': No such file or directory", ":/usr/local/cuda-8.0"),
        // IDEA-Research/GroundingDINO#165 (the issue's title).
        ("error: [Errno 2] No such file or directory: '/usr/local/cuda-11.8:/bin/nvcc'", "/usr/local/cuda-11.8:"),
        // chengdazhi/Deformable-Convolution-V2-PyTorch#86.
        ("/bin/sh: 1: :/usr/local/cuda/bin/nvcc: not found", ":/usr/local/cuda"),
    ] {
        let s = read(line);
        assert_eq!(s.env.vars.get("CUDA_HOME").map(String::as_str), Some(home), "{line}");
        assert!(finding_ids(&s).contains(&"env.cuda_home_not_a_toolkit_root".to_owned()), "{line}");
    }
    // One folder, no colon: nothing is said of CUDA_HOME.
    assert!(!read("'/usr/local/cuda/bin/nvcc': No such file or directory").env.vars.contains_key("CUDA_HOME"));
    // What `echo $CUDA_HOME` printed, said on the same line (constructed; the shape of replies such as
    // "echo $CUDA_HOME gives /usr/local/cuda").
    let s = read("when I echo $CUDA_HOME, it is :/usr/local/cuda-10.2. So I fixed .bashrc");
    assert_eq!(s.env.vars.get("CUDA_HOME").map(String::as_str), Some(":/usr/local/cuda-10.2"));
    // Advice naming the command is not its output (Deformable-Convolution-V2-PyTorch#86's answer).
    let advice = "Check whether the cuda home path is correct by `echo $CUDA_HOME`. It should be `/usr/local/cuda`";
    assert!(!read(advice).env.vars.contains_key("CUDA_HOME"));
}

/// cBio/cbio-cluster#1: `echo` after a bash prompt, a device list as the value, a misspelt name: the misspelt
/// variable is read (env.variable_misspelled judges it); an empty echo sets nothing.
#[test]
fn an_echoed_device_list_after_a_prompt_is_read() {
    let text = "-bash-4.1$ echo $CUDA_VISIBLE_DEVICES\n-bash-4.1$ echo $CUDA_VISABLE_DEVICES\n0\n";
    let s = read(text);
    assert_eq!(s.env.vars.get("CUDA_VISABLE_DEVICES").map(String::as_str), Some("0"));
    assert!(!s.env.vars.contains_key("CUDA_VISIBLE_DEVICES"));
    assert!(finding_ids(&s).contains(&"env.variable_misspelled".to_owned()), "{:?}", finding_ids(&s));
    // A number after a variable of paths is no value of it.
    assert!(!read("$ echo $CUDA_HOME\n0\n").env.vars.contains_key("CUDA_HOME"));
}

#[test]
fn an_echoed_path_keeps_its_cuda_entries() {
    let s = read("$ echo $PATH\n/usr/local/cuda-11.8/bin:/usr/bin:/opt/NVIDIA/bin\n");
    assert_eq!(s.env.path, ["/usr/local/cuda-11.8/bin", "/usr/bin", "/opt/NVIDIA/bin"]);
    assert_eq!(s.env.path_cuda_entries, ["/usr/local/cuda-11.8/bin", "/opt/NVIDIA/bin"]);
}

/// A sentence's stop after an export written in prose is not the value's (neuronets/kwyk#17); on an export
/// line of its own the value is taken as written.
#[test]
fn an_export_in_a_sentence_leaves_the_sentences_stop_out() {
    let s = read("that one still selects GPU0 whenever I export CUDA_VISIBLE_DEVICES=1. Here is a full protocol\n");
    assert_eq!(s.env.vars.get("CUDA_VISIBLE_DEVICES").map(String::as_str), Some("1"));
    let s = read("export CUDA_VISIBLE_DEVICES=1.\n");
    assert_eq!(s.env.vars.get("CUDA_VISIBLE_DEVICES").map(String::as_str), Some("1."));
}

/// The variable's device list inside a sentence that runs into it without a space (chatchat-space/Langchain-Chatchat#1526,
/// in Chinese, verbatim); not part of a longer name, nor commented out with `#`.
#[test]
fn a_device_list_in_a_cjk_sentence_is_read() {
    let s = read("v0.2.4\u{7248}\u{672c}\u{ff0c}\u{6267}\u{884c}CUDA_VISIBLE_DEVICES=5 python startup.py -a\n");
    assert_eq!(s.env.vars.get("CUDA_VISIBLE_DEVICES").map(String::as_str), Some("5"));
    for text in ["MY_CUDA_VISIBLE_DEVICES=5 is ours\n", "see #CUDA_VISIBLE_DEVICES=5 in the notes\n"] {
        assert_eq!(read(text).env.vars.get("CUDA_VISIBLE_DEVICES"), None, "{text}");
    }
}

#[test]
fn export_lines_and_an_export_quoted_in_prose_are_read() {
    let s = read(
        "export CUDA_HOME=\"/usr/local/cuda-11.8\"\nI removed \"export CUDA_VISIBLE_DEVICES=2\" from the script.\n",
    );
    assert_eq!(s.env.vars.get("CUDA_HOME").map(String::as_str), Some("/usr/local/cuda-11.8"));
    assert_eq!(s.env.vars.get("CUDA_VISIBLE_DEVICES").map(String::as_str), Some("2"));
    // CUDA_HOME names a `cuda-X.Y` folder not seen otherwise: it is added, with the folder's version.
    let t = s.toolkits.value().unwrap();
    let v = t.install("/usr/local/cuda-11.8").unwrap().version.map(CudaVersion::major_minor);
    assert_eq!(v, Some(CudaVersion::new(11, 8)));
    let home = t.picks.cuda_home.as_ref().and_then(|p| p.install_root.as_deref());
    assert_eq!(home, Some("/usr/local/cuda-11.8"));
    // Ordinary assignments of other names, and `==` pins, are not variables.
    assert!(unrecognised("HOSTNAME=box\nx = export_total=3\n"));
}

#[test]
fn an_export_line_in_markdown_bold_is_read() {
    // open-mmlab/mmdetection#944: the ~/.bashrc lines pasted in bold; CUDA_HOME has `:$CUDA_HOME` appended.
    let s = read(
        "**export CUDA_HOME=/usr/local/cuda-10.0:$CUDA_HOME**\n\n**export PATH=/usr/local/cuda-10.0/bin:$PATH**\n",
    );
    assert_eq!(s.env.vars.get("CUDA_HOME").map(String::as_str), Some("/usr/local/cuda-10.0:$CUDA_HOME"));
    assert_eq!(s.env.path, ["/usr/local/cuda-10.0/bin"]);
    assert!(finding_ids(&s).contains(&"env.cuda_home_not_a_toolkit_root".to_owned()));
}

#[test]
fn a_python_os_environ_assignment_is_a_variable() {
    // Grace9994/CoMoSVC#6, the whole report.
    let s = read(
        "If not comment out the line `os.environ[\"CUDA_VISIBLE_DEVICES\"]='1'` in train.py, training will \
         encounter an error: `RuntimeError: No CUDA GPUs are available`.\n",
    );
    assert_eq!(s.env.vars.get("CUDA_VISIBLE_DEVICES").map(String::as_str), Some("1"));
    assert_eq!(s.env.set_in_process, ["CUDA_VISIBLE_DEVICES"]);
    // alibaba/EasyNLP#35: the script's `export` did not work, nor `os.environ[…]` in main.
    let s = read(
        "\u{811a}\u{672c}\u{91cc}\u{7684}export CUDA_VISIBLE_DEVICES\u{4e0d}\u{8d77}\u{4f5c}\u{7528}\u{ff0c}main\u{51fd}\u{6570}\u{91cc}\u{7684}os.environ[\"CUDA_VISIBLE_DEVICES\"] = \"1\"\u{4e5f}\u{6ca1}\u{6709}\u{4f5c}\u{7528}\n",
    );
    assert_eq!(s.env.set_in_process, ["CUDA_VISIBLE_DEVICES"]);
    // A sentence quoting both the script's assignment and the command line that worked (the two forms
    // of open-mmlab/mmdetection3d's and NVIDIA/DALI's reports, here in one line): the script's is the
    // one set in process, the command line's value is the variable's.
    let s = read(
        "Adding `os.environ['CUDA_VISIBLE_DEVICES'] = \"2\"` in my code does not work, but `CUDA_VISIBLE_DEVICES=2 \
         python train.py` works\n",
    );
    assert_eq!(s.env.set_in_process, ["CUDA_VISIBLE_DEVICES"]);
    assert_eq!(s.env.vars.get("CUDA_VISIBLE_DEVICES").map(String::as_str), Some("2"));
    // `from os import environ`, then `environ[…] = …`.
    let s = read("environ[\"CUDA_VISIBLE_DEVICES\"] = \"0\"\n");
    assert_eq!(s.env.set_in_process, ["CUDA_VISIBLE_DEVICES"]);
    let s = read("os.environ['CUDA_HOME'] = \"/usr/local/cuda-11.8\"\n");
    assert_eq!(s.env.vars.get("CUDA_HOME").map(String::as_str), Some("/usr/local/cuda-11.8"));
    // A value the program computes: set in process, to a value the text does not give (yangcong356/ADA-DDA
    // utils/utils.py; hongyliu/CLRNet main.py, after `import torch`; an f-string).
    for line in [
        "    os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu",
        "    os.environ['CUDA_VISIBLE_DEVICES'] = ','.join(str(gpu) for gpu in args.gpus)",
        "os.environ[\"CUDA_VISIBLE_DEVICES\"] = str(args.gpu_id)",
        "os.environ[\"CUDA_VISIBLE_DEVICES\"] = f\"{args.gpu}\"",
    ] {
        let s = read(&format!("{line}\n"));
        assert_eq!(s.env.set_in_process, ["CUDA_VISIBLE_DEVICES"], "{line}");
        assert_eq!(s.env.vars.get("CUDA_VISIBLE_DEVICES"), None, "{line}");
    }
    // A comparison, a number or prose after `=`, and another name are not assignments of a relevant variable.
    for line in [
        "if os.environ[\"CUDA_VISIBLE_DEVICES\"] == '1':",
        "os.environ[\"CUDA_VISIBLE_DEVICES\"] = 1",
        "os.environ[\"CUDA_VISIBLE_DEVICES\"] = ",
        "os.environ[\"WANDB_MODE\"] = 'offline'",
    ] {
        assert!(unrecognised(line), "{line}");
    }
}

/// NCCL's switches written in a sentence or passed through mpirun's `-x` (NVIDIA/nccl-tests#319's command
/// lines), several to a line.
#[test]
fn nccl_settings_in_words_and_mpirun_options_are_variables() {
    let s = read("-x NCCL_NET_GDR_LEVEL=1 \\\n-x NCCL_P2P_LEVEL=NVL \\\n");
    assert_eq!(s.env.vars.get("NCCL_P2P_LEVEL").map(String::as_str), Some("NVL"));
    assert_eq!(s.env.vars.get("NCCL_NET_GDR_LEVEL").map(String::as_str), Some("1"));
    let s = read("Setting `NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1` (forcing the socket transport) avoids the hang.\n");
    assert_eq!(s.env.vars.get("NCCL_P2P_DISABLE").map(String::as_str), Some("1"));
    assert_eq!(s.env.vars.get("NCCL_SHM_DISABLE").map(String::as_str), Some("1"));
    // Prose spaces the sign.
    let s = read("I set NCCL_DEBUG = INFO and then NCCL_P2P_DISABLE =1 , which works\n");
    assert_eq!(s.env.vars.get("NCCL_DEBUG").map(String::as_str), Some("INFO"));
    assert_eq!(s.env.vars.get("NCCL_P2P_DISABLE").map(String::as_str), Some("1"));
    // Not a setting: a name glued to other text, a sign with nothing after it, or a path.
    for line in ["MY_NCCL_P2P_DISABLE=1 is ours", "NCCL_DEBUG = ", "we tried NCCL_SOCKET_IFNAME=/dev/eth0"] {
        let s = read(&format!("{line}\n"));
        assert!(!s.env.vars.keys().any(|k| k.starts_with("NCCL_")), "{line}: {:?}", s.env.vars);
    }
}

/// CUDA_HOME as the nvcc path PyTorch's extension builder ran shows it, when it is a list (a line in the
/// form distutils' spawn prints, `unable to execute '…': No such file or directory`, with a list like
/// facebookresearch/maskrcnn-benchmark#132's); a path of one folder says nothing of the variable.
#[test]
fn an_nvcc_path_under_a_folder_list_is_cuda_home_set_to_it() {
    let s = read("unable to execute '/usr/local/cuda:/usr/local/cuda-10.1/bin/nvcc': No such file or directory\n");
    assert_eq!(s.env.vars.get("CUDA_HOME").map(String::as_str), Some("/usr/local/cuda:/usr/local/cuda-10.1"));
    assert!(finding_ids(&s).contains(&"env.cuda_home_not_a_toolkit_root".to_owned()), "{:?}", finding_ids(&s));
    for line in ["/usr/local/cuda-11.8/bin/nvcc -I/usr/include -c x.cu", "see https://x.org/bin/nvcc for it"] {
        assert!(!read(&format!("{line}\n")).env.vars.contains_key("CUDA_HOME"), "{line}");
    }
}

/// The other shells' ways to set a variable, each in the syntax its own documentation gives: cmd's `set`
/// (learn.microsoft.com, windows-commands/set_1: `set [<variable>=[<string>]]`, quoted as `set "X=1"` in batch
/// files), PowerShell's `$env:` drive (about_Environment_Variables: `$Env:Foo = 'An example'`), IPython's `%env`
/// magic (`%env var=val`, `%env var val`) and Python's `os.environ.setdefault`.
#[test]
fn windows_shells_and_notebooks_set_variables_too() {
    for (text, want) in [
        ("set CUDA_VISIBLE_DEVICES=1\n", "1"),
        ("C:\\stable-diffusion-webui> set CUDA_VISIBLE_DEVICES=2 && webui-user.bat\n", "2"),
        ("set \"CUDA_VISIBLE_DEVICES=0,1\"\n", "0,1"),
        ("PS C:\\work> $env:CUDA_VISIBLE_DEVICES=\"1\"\n", "1"),
        ("$Env:CUDA_VISIBLE_DEVICES = '2,3'\n", "2,3"),
        ("%env CUDA_VISIBLE_DEVICES=1\n", "1"),
        ("%env CUDA_VISIBLE_DEVICES 3\n", "3"),
        ("os.environ.setdefault(\"CUDA_VISIBLE_DEVICES\", \"1\")\n", "1"),
    ] {
        let s = read(text);
        assert_eq!(s.env.vars.get("CUDA_VISIBLE_DEVICES").map(String::as_str), Some(want), "{text}");
    }
    // Prose, a Windows PATH (a `;` list with drive letters), a PowerShell comparison and a framework's own
    // device flags are not this variable.
    for line in [
        "I set CUDA_VISIBLE_DEVICES to 1 first",
        "set PATH=C:\\cuda\\bin;%PATH%",
        "if ($env:CUDA_VISIBLE_DEVICES -eq '1') { exit }",
        "python train.py --gpus 1 --gpu_ids 1",
    ] {
        assert!(unrecognised(line), "{line}");
    }
}

#[test]
fn ldconfig_lines_give_the_loader_cache_and_wsl2() {
    let s = read(LDCONFIG_WSL);
    let t = s.toolkits.value().unwrap();
    let names: Vec<&str> = t.loader_libraries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["libcudart.so.11.0", "libcudart.so", "libcuda.so.1"]);
    assert_eq!(t.loader_libraries[2].path, "/usr/lib/wsl/lib/libcuda.so.1");
    let wsl = s.platform.wsl.as_ref().unwrap();
    assert_eq!(wsl.version, 2);
    assert_eq!(wsl.libcuda_files, ["libcuda.so.1", "libcuda.so", "libcuda.so.1.1"]);
    // libcuda.so.1 is in the cache, so the folder is on the loader path; the failed open of the
    // unversioned libcuda.so (WSL#8587) is its own finding.
    let f = finding_ids(&s);
    let wsl: Vec<&String> = f.iter().filter(|id| id.starts_with("wsl.")).collect();
    assert_eq!(wsl, ["wsl.libcuda_so_not_in_cache"], "{f:?}");
}

#[test]
fn a_linux_libcuda_in_a_wsl_loader_cache_is_a_linux_driver_inside_wsl() {
    let text = "$ ldconfig -p | grep libcuda\n\
                \tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n\
                \tlibcuda.so.1 (libc6,x86-64) => /usr/lib/wsl/lib/libcuda.so.1\n";
    assert_eq!(finding_ids(&read(text)), ["wsl.linux_driver_installed"]);
}

#[test]
fn a_line_like_an_ls_mode_with_a_wide_character_does_not_panic() {
    // Found by the near-miss property test: the mode column was sliced by bytes.
    let _ = read_pasted("libcuda\u{10000}soA1 (libc6,x86-64) => ", kb());
    let _ = read_pasted("l\u{e9}\u{e9}\u{e9}\u{e9}\u{e9} 1 root root 21 Mar  1 12:00 cuda -> cuda-12.1\n", kb());
}

/// `ldd` of a pip wheel's library, in ldd(1)'s `lib => path (0xaddress)` form (here cuBLAS from the
/// nvidia-cublas wheel; the mechanism PyTorch's maintainers describe in pytorch/pytorch#141063): the
/// libraries it needs and where the loader found them are read, and a CUDA library taken from an
/// LD_LIBRARY_PATH folder outside the wheels is the stale-path finding. The wheel's own copy, or a
/// folder not on LD_LIBRARY_PATH, is not.
#[test]
fn ldd_of_a_wheels_library_names_the_ld_library_path_copy_it_took() {
    let ldd = |resolved: &str| {
        format!(
            "$ ldd /opt/venv/lib/python3.11/site-packages/nvidia/cublas/lib/libcublas.so.12\n\
             \tlinux-vdso.so.1 (0x00007ffc2d9f1000)\n\
             \tlibcublasLt.so.12 => {resolved}/libcublasLt.so.12 (0x00007f3a40000000)\n\
             \tlibrt.so.1 => /lib/x86_64-linux-gnu/librt.so.1 (0x00007f3a5c1e0000)\n\
             \tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f3a5be00000)\n\
             \t/lib64/ld-linux-x86-64.so.2 (0x00007f3a5c20b000)\n\
             $ echo $LD_LIBRARY_PATH\n/usr/local/cuda-12.2/lib64:\n"
        )
    };
    let s = read(&ldd("/usr/local/cuda-12.2/lib64"));
    let t = s.toolkits.value().unwrap();
    assert_eq!(t.ldd_resolved.len(), 3, "{:?}", t.ldd_resolved);
    assert_eq!(t.ldd_resolved[0].library, "libcublasLt.so.12");
    assert_eq!(t.ldd_resolved[0].path, "/usr/local/cuda-12.2/lib64/libcublasLt.so.12");
    let f = findings(&s);
    let stale: Vec<&Finding> = f.iter().filter(|f| f.id == "toolkits.stale_library_path").collect();
    assert_eq!(stale.len(), 1, "{f:#?}");
    assert!(stale[0].summary.contains("/usr/local/cuda-12.2/lib64") && stale[0].summary.contains("libcublasLt.so.12"));
    let own = read(&ldd("/opt/venv/lib/python3.11/site-packages/nvidia/cublas/lib"));
    assert!(!finding_ids(&own).contains(&"toolkits.stale_library_path".to_owned()), "the wheel's own copy");
    let elsewhere = read(&ldd("/opt/cuda/lib64"));
    assert!(
        !finding_ids(&elsewhere).contains(&"toolkits.stale_library_path".to_owned()),
        "not an LD_LIBRARY_PATH folder"
    );
}

/// The driver's version in its own library's file name (NixOS/nixpkgs#349617's description, verbatim; `ls -l`'s link
/// target); WSL's `libcuda.so.1.1` and the SONAME are none.
#[test]
fn a_driver_librarys_file_name_gives_the_driver() {
    use super::super::smi::library_driver;
    let text = |line: &str| library_driver(line).map(|v| v.as_str().to_owned());
    assert_eq!(
        text("However the nvidia driver `libcuda.so.560.35.03` is present but appears to be not found").as_deref(),
        Some("560.35.03")
    );
    assert_eq!(
        text("lrwxrwxrwx 1 root root 29 Jan 1 libnvidia-ml.so.1 -> libnvidia-ml.so.535.104.05").as_deref(),
        Some("535.104.05")
    );
    assert_eq!(text("/usr/lib/wsl/lib/libcuda.so.1.1"), None);
    assert_eq!(text("libcuda.so.1: cannot open shared object file"), None);
    assert_eq!(text(&"libcuda.so.535.1 ".repeat(100)), None, "over 1,000 characters");
}

/// A driver version written in prose is the driver when no program's output gives one: the word `driver`
/// (then `version`, `is` at most) and a number of three-digit major. A line naming two numbers says nothing.
#[test]
fn a_driver_version_in_prose_is_the_driver_when_nothing_else_gives_one() {
    use super::super::smi::prose_driver;
    // wookayin/gpustat#164 (maintainer's comment, verbatim).
    let v = prose_driver("So in your case, nvidia driver 535.113 can support CUDA 12.2 and below");
    assert_eq!(v.map(|v| v.as_str().to_owned()).as_deref(), Some("535.113"));
    // arcs-skku/EMDC_llvm#27 (verbatim).
    let v = prose_driver("NVCC version is 11.2, and NVIDIA Driver version is 460.106.00.");
    assert_eq!(v.map(|v| v.as_str().to_owned()).as_deref(), Some("460.106.00"));
    assert!(prose_driver("I upgraded the driver 470.82 to driver 535.54.03").is_none(), "two numbers");
    assert!(prose_driver("the driver is fine, CUDA 12.2 works").is_none());
    assert!(prose_driver("Cuda compiler driver 11.8").is_none(), "not a driver number");
    // The version the clause ends with (NVIDIA/hpc-container-maker#239, the sysadmin quoted there, verbatim);
    // an `is` after the clause ended is another sentence's.
    let v = prose_driver(
        "\"The version of the driver installed on the compute nodes in the GPU partition is 418.87.00.  That is \
         sufficient for CUDA versions up to and including 10.1.\"",
    );
    assert_eq!(v.map(|v| v.as_str().to_owned()).as_deref(), Some("418.87.00"));
    assert!(prose_driver("I updated the driver. The fan is 450.10 rpm").is_none());
    // A driver a program requires is not the installed one (googlecolab/colabtools#3187's FFmpeg line).
    assert!(
        prose_driver(
            "[hevc_nvenc @ 0x55defbb87c00] The minimum required Nvidia driver for nvenc is 470.57.02 or newer"
        )
        .is_none()
    );
    // The version before the word, as a package name or bare: chahatdeep/ubuntu-for-robotics#3 (verbatim).
    let v = prose_driver("I've installed the nvidia-384.98 driver and cuda 8.0. Then when I'm running cuda samples");
    assert_eq!(v.map(|v| v.as_str().to_owned()).as_deref(), Some("384.98"));
    assert_eq!(
        prose_driver("with the 535.104.05 driver").map(|v| v.as_str().to_owned()).as_deref(),
        Some("535.104.05")
    );
    assert!(prose_driver("the nvidia-384 driver").is_none(), "a branch, not a version");
    // Into the snapshot, and the nvidia-smi header wins over prose.
    let s = read("NVCC version is 11.2, and NVIDIA Driver version is 460.106.00.\n");
    assert_eq!(s.driver.value().unwrap().version.as_str(), "460.106.00");
    let s = read(
        "I had driver 470.82 before.\n\
         | NVIDIA-SMI 525.60.13    Driver Version: 525.60.13    CUDA Version: 12.0     |\n",
    );
    assert_eq!(s.driver.value().unwrap().version.as_str(), "525.60.13");
}

/// nvcc's version line quoted without its head (`release X.Y, VX.Y.Z`, nvcc --version's
/// `Cuda compilation tools, release %s, V%s`) beside the word nvcc is nvcc's toolkit; the two versions
/// must agree, and without nvcc nearby a `release` is anything's.
#[test]
fn the_tail_of_nvccs_version_line_beside_nvcc_is_the_toolkit() {
    use super::super::smi::nvcc_release_tail;
    // (format) the tail of pytorch/builder#580's `Cuda compilation tools, release 11.1, V11.1.105`.
    assert_eq!(
        nvcc_release_tail("it says release 11.1, V11.1.105."),
        Some(CudaVersion { major: 11, minor: 1, patch: Some(105) })
    );
    assert_eq!(nvcc_release_tail("release 11.1, V12.0.76"), None);
    assert_eq!(nvcc_release_tail("release 2.3, Vendor"), None);
    let s = read("then I run nvcc --version\nand I see release 11.8, V11.8.89\n");
    let t = s.toolkits.value().unwrap();
    assert!(
        t.installs.iter().any(|i| i.version == Some(CudaVersion { major: 11, minor: 8, patch: Some(89) })),
        "{t:?}"
    );
    let s = read("my release 11.8, V11.8.89 of something\n");
    assert!(s.toolkits.value().is_none_or(|t| t.installs.is_empty()));
}

#[test]
fn a_device_list_assigned_inside_a_sentence_is_read() {
    // https://github.com/openai/improved-diffusion/issues/46 (JinkaiZheng's comment).
    let s = read("@greens007 Hi~I have the same problem. When I set `CUDA_VISIBLE_DEVICES=1`, it is invalid.\n");
    assert_eq!(s.env.vars.get("CUDA_VISIBLE_DEVICES").map(String::as_str), Some("1"));
    for (text, want) in [
        ("the script sets CUDA_VISIBLE_DEVICES=2,3 for its workers.", Some("2,3")),
        ("(CUDA_VISIBLE_DEVICES=GPU-5f8a2c1e) was ignored", Some("GPU-5f8a2c1e")),
        // Not a device list, or another variable's name ending in it.
        ("we pass CUDA_VISIBLE_DEVICES=$GPU to the job", None),
        ("MY_CUDA_VISIBLE_DEVICES=1 is our own knob", None),
        ("the job had CUDA_VISIBLE_DEVICES= and nothing after", None),
    ] {
        let s = read(text);
        assert_eq!(s.env.vars.get("CUDA_VISIBLE_DEVICES").map(String::as_str), want, "{text}");
    }
}

/// A command quoted whole, its assignment in front (smallcorgi/Faster-RCNN_TF#141, a corpus case: the
/// reporter's line opens with a quote): the empty value is read, and with CUDA's no-device error it hides every GPU.
#[test]
fn an_assignment_in_front_of_a_command_quoted_whole_is_read() {
    let s = read(" 'CUDA_VISIBLE_DEVICES=  python train_net.py --device cpu --device_id 0\n");
    assert_eq!(s.env.vars.get("CUDA_VISIBLE_DEVICES").map(String::as_str), Some(""));
    let s = read("\"CUDA_HOME=/usr/local/cuda-11.8 python setup.py install\"\n");
    assert_eq!(s.env.vars.get("CUDA_HOME").map(String::as_str), Some("/usr/local/cuda-11.8"));
}

/// A bridge's `lspci -vvv` block with ACS redirect on (ROCm/rccl#547, vasslavich 2022-06-28: an AMD
/// Starship/Matisse GPP bridge, the reporter's `....` cuts kept).
const LSPCI_ACS_BRIDGE: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/lspci_acs_bridge_rccl_547.txt"));
/// Two RTX 5090s' `nvidia-smi topo -m` and their GNS `topo -p2p` matrix (noonghunna/club-3090#1229).
const TOPO_2X5090: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_topo/2x5090-topo-m.txt"));
const P2P_GNS_2X5090: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_topo/2x5090-topo-p2p.txt"));

#[test]
fn acs_redirect_on_a_bridge_of_a_two_gpu_machine_is_the_blocked_finding() {
    let s = read(&format!("{LSPCI_ACS_BRIDGE}\n{TOPO_2X5090}"));
    let t = s.topology.value().unwrap();
    assert_eq!(
        t.acs_redirect,
        ["0000:40:01.1: ACSCtl: SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-"]
    );
    let f = findings(&s);
    let blocked = f.iter().find(|f| f.id == "topology.peer_access_blocked").expect("ACS redirects peer traffic");
    assert!(blocked.summary.starts_with("PCIe ACS sends peer-to-peer traffic"), "{}", blocked.summary);
    assert!(blocked.fix.as_deref().is_some_and(|x| x.contains("ECAP_ACS+0x6.w=0000")));
    // `sudo lspci -vvv | grep ACSCtl`, as NCCL's guide asks: the lines alone count the same.
    let grep = "$ sudo lspci -vvv | grep ACSCtl\n\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-\n";
    assert!(finding_ids(&read(&format!("{grep}\n{TOPO_2X5090}"))).contains(&"topology.peer_access_blocked".to_owned()));
}

/// `lspci -vvv | grep ACSCtl` pasted alone, the check NCCL's troubleshooting guide gives: the first
/// lines of NVIDIA/nccl#629's (NHZlX, an illegal memory access in NCCL; tabs kept), some bridges
/// redirecting peer traffic. With no GPU named anywhere in the text they are the blocked finding,
/// also as a markdown post's inline code; a text that shows one GPU says nothing.
#[test]
fn acs_grep_output_alone_is_the_blocked_finding() {
    let grep = "\t\tACSCtl:\tSrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-\n\
                \t\tACSCtl:\tSrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-\n\
                \t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-\n\
                \t\tACSCtl:\tSrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-\n\
                \t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-\n";
    let s = read(grep);
    assert_eq!(s.topology.value().unwrap().acs_redirect.len(), 2);
    let f = findings(&s);
    let blocked = f.iter().find(|f| f.id == "topology.peer_access_blocked").expect("the grep alone");
    assert!(blocked.summary.starts_with("PCIe ACS sends peer-to-peer traffic"), "{}", blocked.summary);
    // Quoted as inline code in a post's prose.
    let quoted = "The broken state shows:\n`ACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-`\n";
    assert!(finding_ids(&read(quoted)).contains(&"topology.peer_access_blocked".to_owned()));
    // A redirect-off line alone is nothing; the grep beside one GPU's list is nothing.
    let off = "`ACSCtl:\tSrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-`\n";
    assert!(!finding_ids(&read(off)).contains(&"topology.peer_access_blocked".to_owned()));
    let one = format!("{grep}\nGPU 0: NVIDIA GeForce RTX 3090 (UUID: GPU-5f8a2c1e-0000-0000-0000-000000000000)\n");
    assert!(!finding_ids(&read(&one)).contains(&"topology.peer_access_blocked".to_owned()));
}

/// NVIDIA/nccl#85 (dingvyoung, 2017-04-17, verbatim): NCCL 1.x's all_reduce_test on two P100s
/// printed its device list and header and stalled; the maintainer's first question was ACS.
const NCCL_85: &str = "I run \"./build/test/single/all_reduce_test 10000000\" after the NCCL was builded.\n\
However, it stalled after outputs the following text.\n\
```\n\
# Using devices\n\
#   Rank  0 uses device  0 [0x02] Tesla P100-PCIE-16GB\n\
#   Rank  1 uses device  1 [0x03] Tesla P100-PCIE-16GB\n\
\n\
#                                                 out-of-place                    in-place\n\
#      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res\n\
```\n";

#[test]
fn an_nccl_test_that_stalled_after_its_header_is_the_blocked_finding() {
    let s = read(NCCL_85);
    let stalled = s.topology.value().unwrap().stalled_collective.clone().unwrap();
    assert_eq!((stalled.ranks, stalled.names.as_slice()), (2, ["Tesla P100-PCIE-16GB".to_owned()].as_slice()));
    let f = findings(&s);
    let blocked = f.iter().find(|f| f.id == "topology.peer_access_blocked").expect("a stalled NCCL test");
    assert!(blocked.fix.as_deref().is_some_and(|x| x.contains("ACSCtl") && x.contains("iommu=pt")));
    // A result row after the header, no words of a stall, or one rank: nothing.
    let row =
        "     1000000        250000   float     sum    1.234   0.81   0.81    0e+00    1.201   0.83   0.83    0e+00\n";
    let ran = NCCL_85.replace("res\n```\n", &format!("res\n{row}```\n"));
    assert!(ran.contains(row));
    let ids = finding_ids(&read(&ran));
    assert!(!ids.contains(&"topology.peer_access_blocked".to_owned()), "{ids:?}");
    let quiet = NCCL_85.replace("it stalled after outputs", "it printed");
    assert!(!finding_ids(&read(&quiet)).contains(&"topology.peer_access_blocked".to_owned()));
    let one = NCCL_85.replace("#   Rank  1 uses device  1 [0x03] Tesla P100-PCIE-16GB\n", "");
    assert!(!finding_ids(&read(&one)).contains(&"topology.peer_access_blocked".to_owned()));
}

/// NVIDIA/nccl#606 (lifengli137, 2021-12-07, whole lines): the description's sentence, then the
/// nccl-tests output posted while the test hung, cut before any header: it hung while NCCL set up
/// the peer channels between two RTX A6000s of one workstation.
const NCCL_606: &str = "The tests on pairs of GPUs (0-1, 0-2, 0-3, 1-2, 1-3) were run normally as expected; but **hang all the time** if tested between GPU2 and GPU3: CUDA_VISIBLE_DEVICES=2,3 ./all_reduce_perf -b 8 -e 16M -f 2 -g 2\n\
```\n\
# nThread 1 nGpus 2 minBytes 8 maxBytes 16777216 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n\
#\n\
# Using devices\n\
#   Rank  0 Pid    225 on nccl-tests device  0 [0xc1] NVIDIA RTX A6000\n\
#   Rank  1 Pid    225 on nccl-tests device  1 [0xc2] NVIDIA RTX A6000\n\
nccl-tests:225:225 [0] NCCL INFO Bootstrap : Using eno1np0:172.31.45.2<0>\n\
nccl-tests:225:225 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation\n\
nccl-tests:225:225 [0] NCCL INFO NET/IB : No device found.\n\
nccl-tests:225:225 [0] NCCL INFO NET/Socket : Using [0]eno1np0:172.31.45.2<0>\n\
nccl-tests:225:225 [0] NCCL INFO Using network Socket\n\
NCCL version 2.8.2+cuda11.1\n\
nccl-tests:225:240 [1] NCCL INFO Channel 00 : 1[c2000] -> 0[c1000] via P2P/direct pointer\n";

#[test]
fn an_nccl_test_that_hung_while_setting_up_on_one_machine_is_the_blocked_finding() {
    let s = read(NCCL_606);
    let stalled = s.topology.value().unwrap().stalled_collective.clone().unwrap();
    assert_eq!(stalled.ranks, 2);
    assert!(stalled.evidence.iter().any(|l| l.contains("NCCL INFO Bootstrap")), "{:?}", stalled.evidence);
    assert!(finding_ids(&s).contains(&"topology.peer_access_blocked".to_owned()));
    // The same ranks on two machines: the network, not one machine's PCIe. (Without the description's sentence,
    // whose hang "between GPU2 and GPU3" names two GPUs of one machine and is read as such on its own.)
    let two = NCCL_606
        .replace("Pid    225 on nccl-tests device  1", "Pid    225 on other-node device  1")
        .replace("**hang all the time** if tested between GPU2 and GPU3", "**ran** between the pair");
    assert_ne!(two, NCCL_606);
    assert!(!finding_ids(&read(&two)).contains(&"topology.peer_access_blocked".to_owned()));
    // Nothing of NCCL after the device list, and no header: nothing says where it stopped (the sentence, which
    // says it in words, left out too).
    let bare: String = NCCL_606
        .lines()
        .filter(|l| !l.contains("NCCL INFO") && !l.contains("hang all the time"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(!finding_ids(&read(&bare)).contains(&"topology.peer_access_blocked".to_owned()));
}

#[test]
fn acs_says_nothing_without_two_gpus_with_acs_off_or_where_the_driver_offers_no_p2p() {
    // One machine's bridge, no GPU list: nothing to say about peers.
    assert!(!finding_ids(&read(LSPCI_ACS_BRIDGE)).contains(&"topology.peer_access_blocked".to_owned()));
    // Redirect off (SrcValid on alone isolates nothing of peer traffic).
    let off = LSPCI_ACS_BRIDGE.replace(
        "ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-\n....",
        "ReqRedir- CmpltRedir- UpstreamFwd+ EgressCtrl- DirectTrans-\n....",
    );
    assert_ne!(off, LSPCI_ACS_BRIDGE);
    assert!(!finding_ids(&read(&format!("{off}\n{TOPO_2X5090}"))).contains(&"topology.peer_access_blocked".to_owned()));
    // The driver reports GNS between the GPUs: ACS is not what keeps them apart.
    let gns = format!("{LSPCI_ACS_BRIDGE}\n{TOPO_2X5090}\n$ nvidia-smi topo -p2p rw\n{P2P_GNS_2X5090}");
    let ids = finding_ids(&read(&gns));
    assert!(!ids.contains(&"topology.peer_access_blocked".to_owned()), "{ids:?}");
    assert!(ids.contains(&"topology.peer_access_not_offered_by_gpu".to_owned()), "{ids:?}");
}

/// The kernel's AER reports around a Tesla falling off the bus (wilicc/gpu-burn#1, priyankasingh's
/// `dmesg`, 2018-04-12; whole lines, the rest of the log left out): a corrected error on the root
/// port, then a fatal Surprise Down whose recovery names the GPU below it.
const AER_GPU_BURN: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/kernel_aer_fatal_gpu_burn_1.txt"));
/// A fatal completion timeout on the port above a GPU, newer kernels' words (rwth-i6/returnn#1500,
/// albertz's `dmesg -H`, 2024-01-21, whole).
const AER_RETURNN: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/kernel_aer_fatal_returnn_1500.txt"));

#[test]
fn a_fatal_aer_error_whose_recovery_names_the_gpu_is_counted_on_that_gpu() {
    for (text, bus, fatal) in [
        (AER_GPU_BURN, "0000:02:00.0", vec![("Surprise Down Error", 1)]),
        (AER_RETURNN, "0000:03:00.0", vec![("CmpltTO", 1), ("SDES", 1)]),
    ] {
        let s = read(text);
        let h = s.health.gpus.value().unwrap();
        assert_eq!(h.len(), 1, "{bus}");
        assert_eq!(h[0].pci_bus_id.as_deref(), Some(bus));
        let aer = h[0].aer.as_ref().unwrap();
        let got: Vec<(&str, u64)> = aer.fatal.as_ref().unwrap().iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(got, fatal, "{bus}");
        assert_eq!(aer.correctable, None, "the port's corrected error is the port's, not the GPU's");
        let ids = finding_ids(&s);
        assert!(ids.contains(&"link.aer_uncorrectable".to_owned()), "{ids:?}");
    }
}

#[test]
fn aer_reports_of_other_devices_and_corrected_ones_on_a_port_say_nothing_of_the_gpu() {
    // The port's corrected error alone, and a fatal one whose recovery names no NVIDIA GPU.
    let corrected: String = AER_GPU_BURN.lines().take(4).map(|l| format!("{l}\n")).collect();
    let s = read(&corrected);
    assert!(is_unknown(&s.health.gpus));
    let other = AER_RETURNN.replace("nvidia 0000:03:00.0", "nvme 0000:03:00.0");
    assert!(!finding_ids(&read(&other)).iter().any(|i| i.starts_with("link.aer")));
    // A GPU's own corrected report, in the newer kernels' `Correctable` (pop-os/pop#3363's lines
    // with the port's name and bus replaced by a GPU's: edited) is a note, not a warning.
    let own = "[68183.615810] nvidia 0000:01:00.0: PCIe Bus Error: severity=Correctable, type=Data Link Layer, (Receiver ID)\n\
               [68183.637902] nvidia 0000:01:00.0:   device [10de:2204] error status/mask=00000040/00006000\n\
               [68183.637907] nvidia 0000:01:00.0:    [ 6] BadTLP                \n";
    let s = read(own);
    let aer = s.health.gpus.value().unwrap()[0].aer.clone().unwrap();
    assert_eq!(aer.correctable.unwrap().get("BadTLP"), Some(&1));
    let f = findings(&s);
    let note = f.iter().find(|f| f.id == "link.aer_correctable").expect("a note");
    assert_eq!(note.severity, gpu_doctor_model::Severity::Info);
}

/// Hydra sets a config's `hydra.job.env_set` inside the running program, just before the task function
/// (facebookresearch/hydra `hydra/core/utils.py`, `run_job`): the block of huggingface/optimum-benchmark#27.
#[test]
fn a_hydra_env_set_block_is_a_variable_set_in_process() {
    let s = read(
        "For example setting\n\n```\nhydra:\n  job:\n    env_set:\n      CUDA_VISIBLE_DEVICES: 4,5\n```\n\n\
         does not work and the model will be loaded on devices 0, 1.\n",
    );
    assert_eq!(s.env.set_in_process, ["CUDA_VISIBLE_DEVICES"]);
    assert_eq!(s.env.vars.get("CUDA_VISIBLE_DEVICES").map(String::as_str), Some("4,5"));
    // A quoted value; the block ends at a line indented no deeper than `env_set:`; other names are not read.
    let s = read(
        "    env_set:\n      CUDA_VISIBLE_DEVICES: '1'\n      WANDB_MODE: offline\n    chdir: true\nCUDA_HOME: x\n",
    );
    assert_eq!(s.env.vars.get("CUDA_VISIBLE_DEVICES").map(String::as_str), Some("1"));
    assert!(!s.env.vars.contains_key("WANDB_MODE") && !s.env.vars.contains_key("CUDA_HOME"), "{:?}", s.env.vars);
    // Not in a block, an empty value, a truncated block: nothing set in process.
    for text in ["CUDA_VISIBLE_DEVICES: 4,5\n", "env_set:\n  CUDA_VISIBLE_DEVICES:\n", "env_set:\n", "  env_set:\n:"] {
        assert!(read(text).env.set_in_process.is_empty(), "{text}");
    }
    // An OmegaConf interpolation: set in process, to a value the text does not give.
    let s = read("env_set:\n  CUDA_VISIBLE_DEVICES: ${oc.env:GPUS}\n");
    assert_eq!(s.env.set_in_process, ["CUDA_VISIBLE_DEVICES"]);
    assert_eq!(s.env.vars.get("CUDA_VISIBLE_DEVICES"), None);
}

/// Lines giving a GPU's performance state with its link (dogkeeper886/ollama37#207's script): an idle state (P8) at
/// Gen1 beside a busy one (P0) at Gen3 is the link following the power state; both busy, or no link on the line,
/// say nothing.
#[test]
fn an_idle_pstate_at_a_lower_generation_than_a_busy_one_is_the_idle_note() {
    let text = "--- gpu state [at start, cold] ---\n  d1: P8   sm= 324 MHz  mem= 324 MHz  PCIe Gen1 x16     ← deep idle\n\
                --- gpu state [after warm-up] ---\n  d0-d3: ALL P0  mem=2505 MHz  PCIe Gen3 x16\n";
    let s = read(text);
    assert!(
        s.stated_idle_downshift.as_deref().is_some_and(|l| l.starts_with("d1: P8")),
        "{:?}",
        s.stated_idle_downshift
    );
    assert!(finding_ids(&s).contains(&"link.below_max_idle".to_owned()));
    for other in ["d1: P0 PCIe Gen1 x16\nd0: P0 PCIe Gen3 x16\n", "d1: P8 sm= 324 MHz\nd0: P0 PCIe Gen3 x16\n"] {
        assert!(read(other).stated_idle_downshift.is_none(), "{other:?}");
    }
}

/// `nvidia-smi dmon -s pcet -o DT` (ethereum-mining/ethminer#679's rig): the `pci` errors column is each GPU's PCIe
/// replay count, the most of its rows; the GPU with replays is the correctable-errors note, the others named clean.
/// A dmon without the column, or rows of another width, give none.
#[test]
fn dmon_pci_errors_are_replays_and_a_gpu_with_them_is_the_correctable_note() {
    let text = "# nvidia-smi dmon -s pcet -d 10 -o DT\n\
                #Date       Time        gpu   pwr  temp  mclk  pclk sbecc dbecc   pci rxpci txpci\n\
                #YYYYMMDD   HH:MM:SS    Idx     W     C   MHz   MHz  errs  errs  errs  MB/s  MB/s\n \
                20180205   03:24:32      0   240    64  5433  1898     -     -     0    25    15\n \
                20180205   03:24:32      2   230    44  5490  1949     -     -    27    18    13\n \
                20180205   03:24:42      2   230    44  5490  1949     -     -    31    18    13\n";
    let s = read(text);
    let replays: Vec<(u32, Option<u64>)> =
        s.health.gpus.value().unwrap().iter().map(|h| (h.index, h.pcie_replay_count)).collect();
    assert_eq!(replays, [(0, Some(0)), (2, Some(31))]);
    let f = findings(&s);
    let note = f.iter().find(|f| f.id == "link.aer_correctable").expect("replays");
    assert_eq!(note.evidence, ["GPU 2: 31 PCIe replays", "no replays on GPU 0"]);
    // One GPU with a few replays (a healthy H200 counted 2 since its driver loaded) has no clean sibling to compare.
    let one = "# gpu   pwr  temp   pci\n# Idx     W     C  errs\n    0    43    39     2\n";
    assert!(!finding_ids(&read(one)).contains(&"link.aer_correctable".to_owned()));
    let no_column = "# gpu   pwr  temp    sm   mem\n# Idx     W     C     %     %\n    0    43    39     0     0\n";
    assert!(read(no_column).health.gpus.value().is_none_or(|h| h.iter().all(|h| h.pcie_replay_count.is_none())));
}
