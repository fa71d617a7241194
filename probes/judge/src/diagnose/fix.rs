//! Fixes for this machine: the [`Change`]s of a change plan (`gpu-doctor-installers` writes their
//! commands), and the driver branch for this distribution (from `drivers.toml`; the driver plans
//! themselves are built by `gpu-doctor-installers`) for the lines that stay prose.
//!
//! Every command that holds text of the machine (a path, a package name) is built as a
//! [`ShellCommand`] and rendered for the machine's shell (PowerShell on Windows, POSIX sh elsewhere)
//! with every word quoted; fixed text with shell syntax (`$(uname -r)`) never holds machine text.
//! Each rendered command is noted in the [`Ctx`], so a fix for pasted text can say where its paths
//! came from, and tests can parse every command back.

use super::Ctx;
use super::context::{Shown, same_dir};
use gpu_doctor_kb::{DriverTable, Install, ModuleFlavor};
use gpu_doctor_model::shell::{self, Shell, ShellCommand, Unquotable};
use gpu_doctor_model::{Change, InstallFlag};
use gpu_doctor_model::{Framework, OsFamily, PythonEnv};

/// Notes a rendered text and returns it; a text that could not be rendered safely says so instead.
fn note(cx: &Ctx<'_>, text: Result<String, Unquotable>, argv: Vec<String>, machine: bool) -> String {
    match text {
        Ok(text) => {
            let argv = (cx.shell == Shell::Posix).then_some(argv);
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

/// A path of the machine named in prose, quoted as the shell would need it.
pub(crate) fn word(cx: &Ctx<'_>, text: &str) -> String {
    note(cx, shell::quote(cx.shell, text), vec![text.to_owned()], true)
}

/// The plan target of a finding whose fix is another build of `fw` in `env`: `gpu-doctor-installers`
/// chooses the build and writes the fix from its plan; where no build fits, the rule's own prose stays.
pub(crate) fn framework_build(env: &PythonEnv, fw: &Framework) -> gpu_doctor_model::PlanTarget {
    gpu_doctor_model::PlanTarget::FrameworkBuild {
        env: env.prefix.clone(),
        framework: fw.name.clone(),
        or_driver: None,
    }
}

/// How to install driver branch `branch` (or newer) on this machine, as one line: the prose of the
/// rules that name no plan (the kernel log hint in `presence.rs`, `driver.rs`). Its commands come from
/// `drivers.toml`, the table the driver planner (`gpu-doctor-installers`) reads for its root steps.
pub(crate) fn install_driver(cx: &Ctx<'_>, branch: u32) -> String {
    let caps = cx.capabilities();
    let legacy = DriverTable::legacy_branch(&cx.kb.gpus, &caps) == Some(branch);
    let flavor = cx.kb.drivers.flavor(&cx.kb.gpus, &caps, Some(branch)).unwrap_or(ModuleFlavor::Proprietary);
    install_branch(cx, branch, flavor, legacy)
}

/// How to install legacy branch `branch`, the last one of a GPU the driver here does not know
/// (its proprietary module: every architecture with a last branch predates the open modules).
pub(crate) fn install_legacy_driver(cx: &Ctx<'_>, branch: u32) -> String {
    install_branch(cx, branch, ModuleFlavor::Proprietary, true)
}

fn install_branch(cx: &Ctx<'_>, branch: u32, flavor: ModuleFlavor, legacy: bool) -> String {
    let table = &cx.kb.drivers;
    if cx.s.platform.wsl.is_some() {
        return table.wsl.windows_driver.replace("{branch}", &branch.to_string());
    }
    if cx.os == OsFamily::Windows {
        return table.windows.install.replace("{branch}", &branch.to_string());
    }
    let row = table.distro(&os_name(cx));
    match row.install(Some(branch), flavor, legacy) {
        Install::Root(line) => {
            let mut lines: Vec<&str> = row.setup.iter().map(String::as_str).collect();
            lines.push(&line);
            let first = row.setup_note(Some(branch)).map_or_else(String::new, |n| format!("{n} Then: "));
            let alt = row.alternative(branch, flavor, legacy).map_or_else(String::new, |a| format!(" (or: {a})"));
            format!("{first}{}{alt}, then reboot.", lines.join(" && "))
        }
        Install::Manual(text) => text,
    }
}

/// The distribution's name, lowercase (`ubuntu`), or empty when unknown.
pub(crate) fn os_name(cx: &Ctx<'_>) -> String {
    cx.s.system.value().and_then(|s| s.os_name.as_deref()).unwrap_or_default().to_ascii_lowercase()
}

/// A plan target: make `changes` in `env` (its packages), or only in the shell and the system when
/// `None`. `gpu-doctor-installers` writes the commands and the fix prose from it.
pub(crate) fn change(
    env: Option<&PythonEnv>,
    goal: impl Into<String>,
    changes: Vec<Change>,
) -> gpu_doctor_model::PlanTarget {
    gpu_doctor_model::PlanTarget::Change { env: env.map(|e| e.prefix.clone()), goal: goal.into(), changes }
}

/// Install `requirements` with `flags`.
pub(crate) fn install<I: IntoIterator<Item = S>, S: Into<String>>(flags: &[InstallFlag], requirements: I) -> Change {
    Change::Install {
        requirements: requirements.into_iter().map(Into::into).collect(),
        flags: flags.to_vec(),
        index_url: None,
    }
}

/// Remove `packages`.
pub(crate) fn uninstall<I: IntoIterator<Item = S>, S: Into<String>>(packages: I) -> Change {
    Change::Uninstall { packages: packages.into_iter().map(Into::into).collect() }
}

/// `torch==<pin>` from the index of CUDA variant `cuda`, reinstalled (the switch of
/// `wheels.mixed_cuda_majors`).
pub(crate) fn torch_variant(kb: &gpu_doctor_kb::Kb, pin: &str, cuda: gpu_doctor_model::CudaVersion) -> Change {
    Change::Install {
        requirements: vec![format!("torch=={pin}")],
        flags: vec![InstallFlag::Reinstall],
        index_url: Some(kb.pytorch.index_url(cuda)),
    }
}

/// `LD_LIBRARY_PATH` set to its current folders without `remove` (and with `prepend` first), or
/// removed when nothing is left.
pub(crate) fn ld_library_path_without(cx: &Ctx<'_>, remove: &[&str], prepend: Option<&str>) -> Change {
    let mut dirs: Vec<&str> = prepend.into_iter().collect();
    for d in &cx.s.env.ld_library_path {
        if !remove.iter().chain(&dirs).any(|r| same_dir(r, d)) {
            dirs.push(d);
        }
    }
    let name = "LD_LIBRARY_PATH".to_owned();
    if dirs.is_empty() { Change::UnsetVar { name } } else { Change::SetVar { name, value: dirs.join(":") } }
}

/// Set variable `name` to `value`.
pub(crate) fn set_var(name: &str, value: &str) -> Change {
    Change::SetVar { name: name.to_owned(), value: value.to_owned() }
}
