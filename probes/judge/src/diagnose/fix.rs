//! Fixes for this machine: the plan targets rules name (`gpu-doctor-installers` plans them and writes
//! the fix text, driver installs included: the rules write no install line of their own), the
//! [`Change`]s of a change plan, and the quoting of the few commands that stay in a rule's prose.
//!
//! Every command that holds text of the machine (a path, a package name) is built as a
//! [`ShellCommand`] and rendered for the machine's shell (PowerShell on Windows, POSIX sh elsewhere)
//! with every word quoted; fixed text with shell syntax (`$(uname -r)`) never holds machine text.
//! Each rendered command is noted in the [`Ctx`], so a fix for pasted text can say where its paths
//! came from, and tests can parse every command back.

use super::Ctx;
use super::context::{Shown, same_dir};
use gpu_doctor_model::shell::{self, Shell, ShellCommand, Unquotable};
use gpu_doctor_model::{Change, InstallFlag};
use gpu_doctor_model::{Framework, PythonEnv};

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

/// `pip install 'torch==2.6.*' --index-url …/cu124`, noted as shown.
pub(crate) fn install_torch(cx: &Ctx<'_>, v: &gpu_doctor_kb::TorchVariant) -> String {
    let url = cx.kb.pytorch.index_url(v.cuda);
    let pin = format!("torch=={}.*", v.torch);
    command(cx, &ShellCommand::new("pip").args(["install", pin.as_str(), "--index-url", url.as_str()]), false)
}

/// The line that sets variable `name` to `value` in the machine's shell (`export NAME=value`),
/// noted as shown; `value` holds no text of the machine.
pub(crate) fn var_line(cx: &Ctx<'_>, name: &str, value: &str) -> String {
    let argv = vec![format!("{name}={value}")];
    note(cx, shell::set_var(cx.shell, name, value), argv, false)
}

/// The line that removes variable `name` from the machine's shell (`unset NAME`), noted as shown.
pub(crate) fn unset_line(cx: &Ctx<'_>, name: &str) -> String {
    note(cx, shell::unset_var(cx.shell, name), vec!["unset".to_owned(), name.to_owned()], false)
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

/// The flags that build CUDA code for `cc` from source, CMake's and nvcc's: `CMake: `-DCMAKE_CUDA_ARCHITECTURES=61`;
/// nvcc: `-gencode arch=compute_61,code=sm_61``.
pub(crate) fn build_flags(cc: &gpu_doctor_model::ComputeCapability) -> String {
    let n = format!("{}{}", cc.major, cc.minor);
    format!("CMake: `-DCMAKE_CUDA_ARCHITECTURES={n}`; nvcc: `-gencode arch=compute_{n},code=sm_{n}`")
}

/// The sentence (with a leading space) naming the CUDA releases that can build for `cc`, or nothing where
/// gpus.toml cannot say.
pub(crate) fn toolkit_bound(cx: &Ctx<'_>, cc: &gpu_doctor_model::ComputeCapability) -> String {
    // gpus.toml's first_toolkit and last_toolkit: a build made with a CUDA outside them cannot hold it. The
    // table starts at CUDA 7.0, so a first_toolkit of 7.0 means "7.0 or older" and says nothing here.
    cx.kb.gpus.row(*cc).map_or_else(String::new, |r| {
        let oldest = gpu_doctor_model::CudaVersion::new(7, 0);
        match (r.first_toolkit > oldest, r.last_toolkit) {
            (_, Some(last)) => format!(
                " CUDA releases after {last} dropped {}, so the build must be made with CUDA {last} or older.",
                cc.sm()
            ),
            (true, None) => format!(
                " {} first came with CUDA {}, so the build must be made with that CUDA or newer.",
                cc.sm(),
                r.first_toolkit
            ),
            (false, None) => String::new(),
        }
    })
}

/// The torch wheel with machine code for `cc` built with the lowest CUDA (the least driver it needs), of the
/// newest release with that CUDA; a line kept only for the environments that have it (1.7 to 1.11) is no one's.
fn lowest_cuda_wheel(
    kb: &gpu_doctor_kb::Kb,
    cc: gpu_doctor_model::ComputeCapability,
) -> Option<&gpu_doctor_kb::TorchVariant> {
    kb.pytorch
        .variant
        .iter()
        .filter(|v| v.arch.contains(&cc) && !kb.pytorch.kept_only(&v.torch))
        .max_by_key(|v| (std::cmp::Reverse(v.cuda.major_minor()), v.line_key()))
}

/// Where no torch wheel for a CUDA the driver supports in full has machine code for `cc`: the wheel of the
/// lowest CUDA with it (the least driver update), its newest release, and the driver floor of its CUDA major's
/// minor-version compatibility; `None` when no wheel has it.
pub(crate) fn lowest_cuda_wheel_words(cx: &Ctx<'_>, cc: gpu_doctor_model::ComputeCapability) -> Option<String> {
    let v = lowest_cuda_wheel(cx.kb, cc)?;
    let floor = cx
        .kb
        .cuda
        .floor(v.cuda.major, cx.os)
        .map_or_else(String::new, |d| format!(" (CUDA {}.x runs from driver {d} on)", v.cuda.major));
    Some(format!(
        "No torch wheel for a CUDA this driver supports in full has machine code for {}; torch {} built for CUDA {} \
         has: `{}`, on a driver that runs CUDA {}{floor}.",
        cc.sm(),
        v.torch,
        v.cuda,
        install_torch(cx, v),
        v.cuda
    ))
}
