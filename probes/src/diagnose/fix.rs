//! Fix commands for this machine: pip with the right index, the driver branch for this distribution.
//!
//! Every command that holds text of the machine (a path, a package name) is built as a
//! [`ShellCommand`] and rendered for the machine's shell (PowerShell on Windows, POSIX sh elsewhere)
//! with every word quoted; fixed text with shell syntax (`$(uname -r)`) never holds machine text.
//! Each rendered command is noted in the [`Ctx`], so a fix for pasted text can say where its paths
//! came from, and tests can parse every command back.

use super::Ctx;
use super::context::same_dir;
use crate::compat::index_tag;
use crate::model::{Framework, OsFamily, PythonEnv};
use crate::shell::{self, Shell, ShellCommand, Unquotable};

/// A command or word shown in a fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shown {
    /// The text as it appears in the fix.
    pub text: String,
    /// The words a POSIX shell makes of it; `None` for other shells.
    pub argv: Option<Vec<String>>,
    /// True when it holds a path or name read from the machine.
    pub machine: bool,
}

/// Notes a rendered text and returns it; a text that could not be rendered safely says so instead.
fn note(cx: &Ctx<'_>, text: Result<String, Unquotable>, argv: Vec<String>, machine: bool) -> String {
    note_for(cx, cx.shell, text, argv, machine)
}

fn note_for(cx: &Ctx<'_>, shell: Shell, text: Result<String, Unquotable>, argv: Vec<String>, machine: bool) -> String {
    match text {
        Ok(text) => {
            let argv = (shell == Shell::Posix).then_some(argv);
            cx.shown.borrow_mut().push(Shown { text: text.clone(), argv, machine });
            text
        }
        Err(e) => format!("(a command is left out: {e})"),
    }
}

/// A command, quoted for this machine's shell. `machine`: it holds text read from the machine.
pub(crate) fn command(cx: &Ctx<'_>, cmd: &ShellCommand, machine: bool) -> String {
    note(cx, cmd.render(cx.shell), cmd.argv(), machine)
}

/// A command for another shell than this machine's (WSL's Windows side: PowerShell).
pub(crate) fn command_for(cx: &Ctx<'_>, shell: Shell, cmd: &ShellCommand, machine: bool) -> String {
    note_for(cx, shell, cmd.render(shell), cmd.argv(), machine)
}

/// A path of the machine named in prose, quoted as the shell would need it.
pub(crate) fn word(cx: &Ctx<'_>, text: &str) -> String {
    note(cx, shell::quote(cx.shell, text), vec![text.to_owned()], true)
}

/// The interpreter to run pip with: the environment's own, so the fix lands in the right place.
fn python(env: &PythonEnv) -> ShellCommand {
    ShellCommand::new(env.interpreter.as_deref().unwrap_or("python"))
}

/// `<python> -m pip <verb> <args>`.
fn pip<I: IntoIterator<Item = S>, S: Into<String>>(cx: &Ctx<'_>, env: &PythonEnv, verb: &[&str], args: I) -> String {
    let cmd = python(env).args(["-m", "pip"]).args(verb.iter().copied()).args(args);
    command(cx, &cmd, env.interpreter.is_some())
}

/// `<python> -m pip install <args>`.
pub(crate) fn pip_install<I: IntoIterator<Item = S>, S: Into<String>>(
    cx: &Ctx<'_>,
    env: &PythonEnv,
    args: I,
) -> String {
    pip(cx, env, &["install"], args)
}

/// The plan target of a finding whose fix is another build of `fw` in `env`: `gpu-doctor-installers`
/// chooses the build and writes the fix from its plan; where no build fits, the rule's own prose stays.
pub(crate) fn framework_build(env: &PythonEnv, fw: &Framework) -> crate::PlanTarget {
    crate::PlanTarget::FrameworkBuild { env: env.prefix.clone(), framework: fw.name.clone() }
}

/// `--force-reinstall torch==<pin> --index-url <the index of that CUDA variant>` (the switch of
/// `wheels.mixed_cuda_majors`).
pub(crate) fn torch_args(pin: &str, cuda: crate::CudaVersion) -> [String; 4] {
    [
        "--force-reinstall".to_owned(),
        format!("torch=={pin}"),
        "--index-url".to_owned(),
        format!("https://download.pytorch.org/whl/{}", index_tag(cuda)),
    ]
}

/// A distribution family and its commands: the one table [`install_driver`], [`rebuild_module`],
/// [`rebuild_initramfs`] and [`enroll_module_key`] read.
pub(crate) struct Distro {
    /// Lowercase pieces of the OS name that select this family (the first family that matches wins).
    pub names: &'static [&'static str],
    /// How to install driver `{branch}` (or newer), then reboot.
    pub install_driver: &'static str,
    /// How to build the NVIDIA kernel module for the running kernel.
    pub rebuild_module: &'static str,
    /// How to rebuild the initramfs.
    pub rebuild_initramfs: &'static str,
    /// The key locally built modules are signed with, and the command that rebuilds them signed.
    pub module_key: (&'static str, &'static str),
}

const DKMS_KEY: (&str, &str) = ("/var/lib/dkms/mok.pub", "sudo dkms autoinstall");

/// The families, in the order they are tried; [`OTHER_DISTRO`] when none matches.
pub(crate) static DISTROS: &[Distro] = &[
    Distro {
        names: &["ubuntu", "pop!_os", "mint"],
        install_driver: "sudo ubuntu-drivers install nvidia:{branch} (or: sudo apt install nvidia-driver-{branch}), then reboot.",
        rebuild_module: "sudo apt install linux-headers-$(uname -r) && sudo dkms autoinstall, then sudo modprobe nvidia (or reboot)",
        rebuild_initramfs: "sudo update-initramfs -u",
        module_key: DKMS_KEY,
    },
    Distro {
        names: &["debian"],
        install_driver: "Add NVIDIA's CUDA apt repository for this Debian release (https://developer.nvidia.com/cuda-downloads), \
                         then: sudo apt install cuda-drivers-{branch}, and reboot.",
        rebuild_module: "sudo apt install linux-headers-$(uname -r) && sudo dkms autoinstall, then sudo modprobe nvidia (or reboot)",
        rebuild_initramfs: "sudo update-initramfs -u",
        module_key: DKMS_KEY,
    },
    Distro {
        names: &["fedora"],
        install_driver: "sudo dnf install akmod-nvidia (RPM Fusion, the current branch), then reboot.",
        rebuild_module: "sudo dnf install kernel-devel-$(uname -r) && sudo akmods --force, then reboot",
        rebuild_initramfs: "sudo dracut --force",
        module_key: ("/etc/pki/akmods/certs/public_key.der", "sudo akmods --force"),
    },
    Distro {
        names: &["red hat", "rocky", "alma", "centos"],
        install_driver: "sudo dnf module install nvidia-driver:{branch}-open (NVIDIA's CUDA repository), then reboot.",
        rebuild_module: "sudo dnf install kernel-devel-$(uname -r) kernel-headers-$(uname -r) && sudo dkms autoinstall, then reboot",
        rebuild_initramfs: "sudo dracut --force",
        module_key: DKMS_KEY,
    },
    Distro {
        names: &["arch", "manjaro", "endeavour"],
        install_driver: "sudo pacman -Syu nvidia-open (the current branch), then reboot.",
        rebuild_module: "sudo pacman -S --needed linux-headers && sudo dkms autoinstall, then reboot",
        rebuild_initramfs: "sudo mkinitcpio -P",
        module_key: DKMS_KEY,
    },
];

/// Any other Linux.
pub(crate) static OTHER_DISTRO: Distro = Distro {
    names: &[],
    install_driver: "Install NVIDIA driver {branch} or newer from your distribution or NVIDIA, then reboot.",
    rebuild_module: "Install the kernel headers for $(uname -r), then: sudo dkms autoinstall, and reboot",
    rebuild_initramfs: "sudo update-initramfs -u",
    module_key: DKMS_KEY,
};

/// The family of a lowercase OS name.
pub(crate) fn distro(os_name: &str) -> &'static Distro {
    DISTROS.iter().find(|d| d.names.iter().any(|n| os_name.contains(n))).unwrap_or(&OTHER_DISTRO)
}

fn is_ubuntu_like(os_name: &str) -> bool {
    std::ptr::eq(distro(os_name), &DISTROS[0])
}

/// How to install driver branch `branch` (or newer) on this machine.
pub(crate) fn install_driver(cx: &Ctx<'_>, branch: u32) -> String {
    if cx.s.platform.wsl.is_some() {
        return format!(
            "Install NVIDIA's Windows driver {branch} or newer on the Windows side (https://www.nvidia.com/drivers); \
             WSL2 uses it, so install no Linux driver inside WSL."
        );
    }
    if cx.os == OsFamily::Windows {
        return format!("Install NVIDIA driver {branch} or newer for this GPU from https://www.nvidia.com/drivers.");
    }
    distro(&os_name(cx)).install_driver.replace("{branch}", &branch.to_string())
}

/// `<python> -m pip uninstall -y <args>`.
pub(crate) fn pip_uninstall<I: IntoIterator<Item = S>, S: Into<String>>(
    cx: &Ctx<'_>,
    env: &PythonEnv,
    args: I,
) -> String {
    pip(cx, env, &["uninstall", "-y"], args)
}

/// The line that sets `LD_LIBRARY_PATH` to its current folders without `remove` (and with `prepend`
/// first), or `unset LD_LIBRARY_PATH` when nothing is left.
pub(crate) fn ld_library_path_without(cx: &Ctx<'_>, remove: &[&str], prepend: Option<&str>) -> String {
    let mut dirs: Vec<&str> = prepend.into_iter().collect();
    for d in &cx.s.env.ld_library_path {
        if !remove.iter().chain(&dirs).any(|r| same_dir(r, d)) {
            dirs.push(d);
        }
    }
    if dirs.is_empty() { unset_var(cx, "LD_LIBRARY_PATH") } else { set_var(cx, "LD_LIBRARY_PATH", &dirs.join(":")) }
}

/// How to build the NVIDIA kernel module for the running kernel on this distribution.
pub(crate) fn rebuild_module(cx: &Ctx<'_>) -> String {
    distro(&os_name(cx)).rebuild_module.to_owned()
}

/// How to install the driver these GPUs need: the legacy branch when a GPU here is only supported up to
/// one, else (on Ubuntu) the driver Ubuntu recommends for the hardware, else the newest branch the
/// knowledge base knows.
pub(crate) fn install_recommended_driver(cx: &Ctx<'_>) -> String {
    let legacy = cx.gpus.iter().filter_map(|g| g.cc).filter_map(|cc| cx.kb.gpus.row(cc)?.last_driver_branch).min();
    if let Some(branch) = legacy {
        return install_driver(cx, branch);
    }
    if cx.s.platform.wsl.is_none() && cx.os == OsFamily::Linux && is_ubuntu_like(&os_name(cx)) {
        return "sudo ubuntu-drivers install (installs the driver Ubuntu recommends for this GPU), then reboot"
            .to_owned();
    }
    let newest = cx.kb.cuda.toolkit.iter().max_by_key(|t| t.version).map(|t| t.linux_driver.major());
    match newest {
        Some(branch) => install_driver(cx, branch),
        None => "Install the NVIDIA driver for this GPU from https://www.nvidia.com/drivers, then reboot.".to_owned(),
    }
}

/// The distribution's name, lowercase (`ubuntu`), or empty when unknown.
pub(crate) fn os_name(cx: &Ctx<'_>) -> String {
    cx.s.system.value().and_then(|s| s.os_name.as_deref()).unwrap_or_default().to_ascii_lowercase()
}

/// The command that rebuilds the initramfs on this distribution.
pub(crate) fn rebuild_initramfs(cx: &Ctx<'_>) -> &'static str {
    distro(&os_name(cx)).rebuild_initramfs
}

/// How to enroll the key this distribution signs locally built modules with, and rebuild the module signed.
pub(crate) fn enroll_module_key(cx: &Ctx<'_>) -> String {
    let (key, rebuild) = distro(&os_name(cx)).module_key;
    format!(
        "Enroll the key locally built modules are signed with: sudo mokutil --import {key} (choose a one-time \
         password), reboot and pick \"Enroll MOK\" in the blue MOK manager, then rebuild the module signed: {rebuild}"
    )
}

/// The line that sets an environment variable in this machine's shell: `export NAME=value`, or
/// PowerShell's `$env:NAME = 'value'` on Windows, the value quoted.
pub(crate) fn set_var(cx: &Ctx<'_>, name: &str, value: &str) -> String {
    let path = value.contains(['/', '\\']);
    note(cx, shell::set_var(cx.shell, name, value), vec!["export".to_owned(), format!("{name}={value}")], path)
}

/// The line that removes an environment variable: `unset NAME`, or PowerShell's `Remove-Item Env:NAME`.
pub(crate) fn unset_var(cx: &Ctx<'_>, name: &str) -> String {
    note(cx, shell::unset_var(cx.shell, name), vec!["unset".to_owned(), name.to_owned()], false)
}

/// The line that puts `dir` first in PATH: `export PATH=dir:"$PATH"`, or PowerShell's
/// `$env:PATH = 'dir;' + $env:PATH`.
pub(crate) fn prepend_path(cx: &Ctx<'_>, dir: &str) -> String {
    note(cx, shell::prepend_var(cx.shell, "PATH", dir), vec!["export".to_owned(), format!("PATH={dir}:$PATH")], true)
}

#[cfg(test)]
mod tests {
    use super::{DISTROS, OTHER_DISTRO, distro};

    /// Every name of every family selects that family, for all four commands at once.
    #[test]
    fn each_name_selects_its_row() {
        for d in DISTROS {
            for name in d.names {
                assert!(std::ptr::eq(distro(&format!("{name} linux 9")), d), "{name}");
            }
        }
        assert!(std::ptr::eq(distro("gentoo"), &OTHER_DISTRO));
        assert!(std::ptr::eq(distro(""), &OTHER_DISTRO));
    }

    /// CentOS Stream is one family with RHEL for every command (it used to be only for the initramfs).
    #[test]
    fn centos_is_rhel_for_every_command() {
        let d = distro("centos stream 9");
        assert!(d.install_driver.contains("dnf module install"), "{}", d.install_driver);
        assert!(d.rebuild_module.contains("kernel-devel"), "{}", d.rebuild_module);
        assert_eq!(d.rebuild_initramfs, "sudo dracut --force");
    }
}
