//! The `fix` command: the plans for this machine's findings, one shown (a dry run, the default),
//! one carried out with `--apply`, its root steps written for review with `--root-script`; then
//! the machine checked again, to say whether the findings the plan answers are gone.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use gpu_doctor_installers::apply::{self, ApplyOptions, EnvState, Event, Outcome, StepStatus, UndoPreview};
use gpu_doctor_installers::resolve::{self, Resolution};
use gpu_doctor_installers::{Plan, planners};
use gpu_doctor_model::Report;
use gpu_doctor_model::shell::Shell;
use gpu_doctor_probes::host::Host;
use gpu_doctor_probes::host::process;
use gpu_doctor_probes::probe::Options;
use serde::Serialize;

use crate::cli::args::{ProbeArgs, ReplayArg, ToolArg};
use crate::exit::{self, InputError, UsageError};
use crate::render::text::clean;

pub const AFTER_HELP: &str = "\
Without ID: the plans for this machine's findings. With ID: that plan, step by step (nothing is \
changed). With --apply: the install is first resolved with the plan's own tool (pip's --dry-run report, uv's \
--dry-run) and the whole change is shown (added, upgraded, downgraded, removed; another CUDA major's \
packages of the replaced build are removed), then gpu-doctor runs the steps it may run (installs into a Python environment, as \
you, never with a shell), locks the environment for the run, saves its package list first so the \
change can be undone, stops at the first failing step, reads the package list again, and checks the \
machine again. Root steps (a driver, a kernel module) are never run: they are shown, and \
--root-script writes them to a file for you to review. With --undo BACKUP --env ENV: the list is \
put back into ENV (only if it was saved for ENV's interpreter), after showing what will be removed \
and installed and asking (unless --yes). Ctrl+C or SIGTERM during a step lets a running install \
finish (or stops it before it changes anything), then stops; a second one stops at once.

Exit codes: 0 the plans or the plan were shown, --apply was not confirmed, or the plan was applied \
and its findings are gone (where the machine has no GPU, GPU use cannot be proven: no failure), \
or --undo put the list back; 1 a step failed or was cancelled, a finding it answers is still there, \
files of a package that was whole before are missing or changed (checked against its RECORD), the \
check could not prove GPU use on a machine with a GPU, or after --undo the packages or their files \
still differ from the list; 2 the command line was wrong (an unknown ID, or --apply would move a package you \
have across a major version that the plan does not name: the change is shown, nothing is changed, \
--allow-major allows it; or would put a CUDA library wheel over another CUDA major's, which writes \
the same files: --allow-overlap allows it); 3 an input could not be read; 4 \
gpu-doctor itself failed.";

/// `fix`.
#[derive(Debug, Args)]
pub struct FixArgs {
    #[command(flatten)]
    pub probe: ProbeArgs,
    #[command(flatten)]
    pub replay: ReplayArg,
    /// The plan to show or apply (as `gpu-doctor fix` lists them).
    #[arg(value_name = "ID", conflicts_with = "undo")]
    pub id: Option<String>,
    /// Put an environment's packages back as they were before a plan changed them, from the list
    /// `--apply` saved (its path is printed after the run, and it is in the data folder's installs/).
    #[arg(long, value_name = "BACKUP", requires = "env")]
    pub undo: Option<PathBuf>,
    /// With --undo: the environment to put the list back into; the list must have been saved for
    /// its interpreter.
    #[arg(long, value_name = "ENV", requires = "undo")]
    pub env: Option<PathBuf>,
    /// Carry the plan out (asks first unless --yes).
    #[arg(long)]
    pub apply: bool,
    /// With --apply or --undo: do not ask.
    #[arg(long)]
    pub yes: bool,
    /// Write the plan's root steps to FILE as a script to review (never run by gpu-doctor).
    #[arg(long, value_name = "FILE", requires = "id")]
    pub root_script: Option<PathBuf>,
    /// Install from this folder of wheels and no index (offline): a framework build is chosen
    /// among its wheels.
    #[arg(long, value_name = "DIR")]
    pub find_links: Option<PathBuf>,
    /// The tool that installs into an environment (default: the environment's own pip).
    #[arg(long, value_enum)]
    pub tool: Option<ToolArg>,
    /// Print the plans (or the plan, and with --apply what each step did) as JSON.
    #[arg(long)]
    pub json: bool,
    /// With --apply: allow upgrading or downgrading a package you already have across a major
    /// version (numpy 1 -> 2) that the plan does not name; refused without it.
    #[arg(long, requires = "apply")]
    pub allow_major: bool,
    /// With --apply: install a CUDA library wheel of another CUDA major beside one that stays
    /// (nvidia-cudnn-cu13 beside nvidia-cudnn-cu12): they write the same files, so one overwrites
    /// the other; refused without it (a separate environment keeps both whole).
    #[arg(long, requires = "apply")]
    pub allow_overlap: bool,
}

/// What `fix ID --apply --json` prints.
#[derive(Serialize)]
struct Applied<'a> {
    plan: &'a Plan,
    outcome: &'a Outcome,
    /// The ids of the findings the plan answers that the check after it still finds.
    still_found: Vec<String>,
    /// The change its tool resolved before it was applied; absent where it could not be resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    resolution: Option<&'a Resolution>,
}

/// Runs `fix` on the report of `host`.
pub fn fix(host: &dyn Host, args: &FixArgs, opts: &Options, this_machine: bool, quiet: bool) -> Result<u8> {
    if args.yes && !args.apply && args.undo.is_none() {
        return Err(UsageError("--yes goes with --apply or --undo".into()).into());
    }
    if let (Some(backup), Some(env)) = (&args.undo, &args.env) {
        return undo(backup, env, this_machine, args.yes, quiet);
    }
    let kb = crate::ops::kb()?;
    let report = crate::ops::check(host, opts)?;
    let plans = planners::plans_with(&report, kb, &plan_options(args)?);
    let shell = planners::shell_of(&report);
    let Some(id) = &args.id else {
        let text =
            if args.json { serde_json::to_string_pretty(&plans)? + "\n" } else { crate::render::plan::list(&plans) };
        crate::files::to_stdout(text.as_bytes())?;
        return Ok(exit::OK);
    };
    let Some(plan) = plans.iter().find(|p| &p.id == id) else {
        let known: Vec<&str> = plans.iter().map(|p| p.id.as_str()).collect();
        let known = if known.is_empty() { "none here".to_owned() } else { known.join(", ") };
        return Err(UsageError(format!("no plan '{}' for this machine (plans: {known})", clean(id))).into());
    };
    if let Some(path) = &args.root_script {
        write_root_script(plan, path, quiet)?;
    }
    if !args.apply {
        return show(plan, shell, args.json);
    }
    apply_asked(
        host,
        opts,
        plan,
        this_machine,
        Asked { yes: args.yes, json: args.json, allow_major: args.allow_major, allow_overlap: args.allow_overlap },
        quiet,
    )
}

/// The variables through which pip and uv name the user's own index or mirror.
const INDEX_VARS: [&str; 5] = ["PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX"];

/// A note for a plan whose install step names its own index (`--index-url`, PyTorch's, for a build
/// only that index has) while the user's configuration names another (`var(name)` reads one of
/// [`INDEX_VARS`]): that step does not use theirs. `None` otherwise: steps from PyPI carry no
/// `--index-url`, so pip and uv use the user's own index there.
pub(crate) fn index_note(plan: &Plan, var: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let set: Vec<&str> = INDEX_VARS.iter().copied().filter(|v| var(v).is_some_and(|x| !x.trim().is_empty())).collect();
    if set.is_empty() {
        return None;
    }
    let index = plan.steps.iter().find_map(|step| match &step.kind {
        gpu_doctor_installers::StepKind::User { action: gpu_doctor_installers::UserAction::Run { argv } } => {
            argv.iter().position(|a| a == "--index-url").and_then(|i| argv.get(i + 1)).cloned()
        }
        _ => None,
    })?;
    Some(format!(
        "note: the install step reads {index} (only that index has this build), not the index your {} names",
        set.join(" and ")
    ))
}

/// Prints [`index_note`] for `plan` on standard error, from this process's environment.
fn say_index_note(plan: &Plan) {
    if let Some(note) = index_note(plan, &|name| std::env::var(name).ok()) {
        eprintln!("{}", clean(&note));
    }
}

/// Prints `plan` step by step (as JSON with `json`); nothing is changed.
pub(crate) fn show(plan: &Plan, shell: Shell, json: bool) -> Result<u8> {
    say_index_note(plan);
    let text = if json { serde_json::to_string_pretty(plan)? + "\n" } else { crate::render::plan::plan(plan, shell) };
    crate::files::to_stdout(text.as_bytes())?;
    Ok(exit::OK)
}

/// How `--apply` was asked for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Asked {
    /// Do not ask on the terminal.
    pub(crate) yes: bool,
    /// Print what was done as JSON.
    pub(crate) json: bool,
    /// Allow an unasked major upgrade or downgrade (`--allow-major`).
    pub(crate) allow_major: bool,
    /// Allow library wheels of two CUDA majors that write the same files (`--allow-overlap`).
    pub(crate) allow_overlap: bool,
}

/// The longest resolving a plan's install may take (the tool downloads metadata, not wheels).
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(600);

/// `--apply`: refused for a recorded machine; the install resolved by its own tool and the whole
/// change shown ([`resolved`]); asked on the terminal unless `yes`, then applied and checked again
/// ([`finish`]).
pub(crate) fn apply_asked(
    host: &dyn Host,
    opts: &Options,
    plan: &Plan,
    this_machine: bool,
    asked: Asked,
    quiet: bool,
) -> Result<u8> {
    let Asked { yes, json, allow_major, allow_overlap } = asked;
    if !this_machine {
        return Err(UsageError("--apply changes this machine; it cannot be combined with --replay".into()).into());
    }
    let allow = resolve::Allow { major: allow_major, overlap: allow_overlap };
    let (plan, resolution) = resolved(plan, allow, !quiet || !yes)?;
    let plan = &plan;
    // Said before anything changes: what an undo of this plan could not bring back.
    if !quiet || !yes {
        match apply::undo_limits(plan) {
            Ok(gaps) => {
                for gap in gaps {
                    eprintln!("warning: undo will not be able to bring back {}", clean(&gap));
                }
            }
            Err(why) => eprintln!(
                "note: what an undo could bring back is checked after the package list is saved ({})",
                clean(&why)
            ),
        }
    }
    say_index_note(plan);
    if !yes && !confirm(plan)? {
        eprintln!("nothing changed");
        return Ok(exit::OK);
    }
    finish(host, opts, plan, resolution.as_ref(), json, quiet)
}

/// `plan` resolved before it is applied ([`resolve::resolve`]): the whole change printed on
/// standard error (when `say`), the removals the new build makes necessary added as a step, and a
/// major upgrade or downgrade of a package the user had and the plan does not name refused
/// without `allow_major` (a usage error: nothing changed). Where it cannot be resolved, said, and
/// the plan as it is (its package list is still saved first, for undo).
pub(crate) fn resolved(plan: &Plan, allow: resolve::Allow, say: bool) -> Result<(Plan, Option<Resolution>)> {
    let resolution = match resolve::resolve(plan, RESOLVE_TIMEOUT, &std::sync::atomic::AtomicBool::new(false)) {
        Ok(Some(resolution)) => resolution,
        Ok(None) => return Ok((plan.clone(), None)),
        Err(why) => {
            eprintln!(
                "note: the change could not be resolved before applying ({}); the package list is still saved \
                 first, for undo",
                clean(&why)
            );
            return Ok((plan.clone(), None));
        }
    };
    let refusal = resolution.refusal(allow);
    if say || refusal.is_some() {
        let place = plan.env.as_ref().map_or_else(String::new, |e| format!(" to {}", e.display()));
        eprintln!("The change{} (resolved with the plan's own tool, nothing changed yet):", clean(&place));
        for line in resolution.describe().lines() {
            eprintln!("{}", clean(line));
        }
    }
    if let Some(reason) = refusal {
        return Err(UsageError(clean(&reason)).into());
    }
    let with = resolve::with_removals(plan, &resolution);
    Ok((with, Some(resolution)))
}

/// Applies `plan`, checks the machine again (the plan's environment included, imported), prints
/// what was done and what the check says, and returns the exit code: 1 when a step failed or a
/// finding the plan answers is still there.
fn finish(
    host: &dyn Host,
    opts: &Options,
    plan: &Plan,
    resolution: Option<&Resolution>,
    json: bool,
    quiet: bool,
) -> Result<u8> {
    let outcome = run(plan, quiet)?;
    let after = check_after(host, opts, plan)?;
    let still: Vec<String> =
        plan.answers.iter().filter(|a| after.findings.iter().any(|f| &f.id == *a)).cloned().collect();
    if json {
        let text =
            serde_json::to_string_pretty(&Applied { plan, outcome: &outcome, still_found: still.clone(), resolution })?;
        crate::files::to_stdout((text + "\n").as_bytes())?;
    } else {
        crate::files::to_stdout(summary(plan, &outcome, &still, &after, !quiet).as_bytes())?;
    }
    Ok(exit_code(&outcome, &still, gpu_here(&after)))
}

/// Whether the machine has an NVIDIA GPU: the driver lists one, or the PCI bus has one.
fn gpu_here(report: &Report) -> bool {
    let snap = &report.snapshot;
    snap.gpus.value().is_some_and(|g| !g.is_empty()) || snap.pci_devices.value().is_some_and(|p| !p.is_empty())
}

/// The exit code of an applied plan, as `fix --help` and `setup --help` word it: 1 when a step
/// failed (or was cancelled, or not reached), when a finding the plan answers is still there, when
/// files of a package that was whole before are missing or changed after it, or
/// when the check could not prove GPU use on a machine that has a GPU; else 0. On a machine
/// without a GPU the check cannot prove GPU use, so a successful install there is 0, not 1.
pub(crate) fn exit_code(outcome: &Outcome, still: &[String], gpu_here: bool) -> u8 {
    let failed = outcome.steps.iter().any(|s| match s {
        StepStatus::Done | StepStatus::LeftToYou => false,
        StepStatus::Unproven { .. } => gpu_here,
        StepStatus::Failed { .. } | StepStatus::NotRun | StepStatus::Cancelled => true,
    });
    let broken = crate::render::outcome::files_broken(outcome);
    if failed || broken || !still.is_empty() { exit::FINDINGS } else { exit::OK }
}

/// The machine checked again after `plan`: its environment's interpreter (the plan's own, when it
/// is there) named, and only that environment's frameworks imported (the deep tier), not every
/// environment's.
fn check_after(host: &dyn Host, opts: &Options, plan: &Plan) -> Result<Report> {
    let mut opts = opts.clone();
    let python = apply::plan_python(plan).filter(|p| p.exists());
    if let Some(python) = &python {
        opts.extra_pythons.push(python.clone());
    }
    let mut snap = crate::ops::snapshot(host, &opts)?;
    if let (false, Some(python), gpu_doctor_model::Probed::Found { value: envs, .. }) =
        (opts.deep, &python, &mut snap.python_envs)
    {
        let ours = |env: &gpu_doctor_model::PythonEnv| {
            env.interpreter.as_deref().is_some_and(|i| Path::new(i) == python)
                || plan.env.as_deref().is_some_and(|e| Path::new(&env.prefix) == e)
        };
        for env in envs.iter_mut().filter(|env| ours(env)) {
            let mut trace = gpu_doctor_model::Trace::new("python");
            env.deep = Some(gpu_doctor_probes::probe::python::deep_probe(host, env, &mut trace));
            snap.trace.extend(trace.into_entries());
        }
    }
    crate::ops::judged(snap)
}

/// The tool and the wheelhouse the plans install with.
fn plan_options(args: &FixArgs) -> Result<planners::framework::Options> {
    let tool = match args.tool {
        Some(t) => gpu_doctor_installers::envtool::detect(Some(t.name())).map_err(InputError)?,
        None => gpu_doctor_installers::envtool::Tool::Pip,
    };
    let wheelhouse = match &args.find_links {
        Some(dir) => Some((dir.clone(), planners::setup::wheel_files(dir).map_err(InputError)?)),
        None => None,
    };
    Ok(planners::framework::Options { tool, wheelhouse })
}

/// `fix --undo BACKUP --env ENV`: the environment's package list put back as the backup has it,
/// after showing what changes and asking (unless `yes`); then read again and said as it is.
fn undo(backup: &Path, env: &Path, this_machine: bool, yes: bool, quiet: bool) -> Result<u8> {
    if !this_machine {
        return Err(UsageError("--undo changes this machine; it cannot be combined with --replay".into()).into());
    }
    // A list that is refused (cut, hostile, another environment's) runs nothing: an input error.
    apply::check_undo(env, backup).map_err(|why| InputError(format!("--undo: {}", clean(&why))))?;
    if !yes && !std::io::stdin().is_terminal() {
        return Err(UsageError("--undo asks before changing anything; without a terminal, add --yes".into()).into());
    }
    let stop = process::graceful_stop();
    let mut declined = false;
    let mut asked: Result<()> = Ok(());
    let outcome =
        apply::undo(env, backup, &apply_options()?, stop.flag(), &mut |e| print_event(e, quiet), &mut |preview| {
            if !quiet || !yes {
                eprint!("{}", describe_undo(preview));
            }
            if yes {
                return true;
            }
            match ask("Put the list back? [y/N] ") {
                Ok(true) => true,
                Ok(false) => {
                    declined = true;
                    false
                }
                Err(e) => {
                    asked = Err(e);
                    false
                }
            }
        });
    asked?;
    if declined {
        eprintln!("nothing changed");
        return Ok(exit::OK);
    }
    let failed = outcome.steps.iter().find_map(|s| match s {
        StepStatus::Failed { reason } => Some(reason.clone()),
        StepStatus::Cancelled => Some("cancelled".to_owned()),
        _ => None,
    });
    let shown = clean(&env.display().to_string());
    match (failed, &outcome.state) {
        (Some(reason), _) => {
            eprintln!("undo failed: {}", clean(&reason));
            if let Some(state) = &outcome.state
                && *state != EnvState::AsBefore
            {
                eprintln!("{shown}: {}", clean(&state.describe()));
            }
            Ok(exit::FINDINGS)
        }
        (None, Some(EnvState::AsBefore)) => {
            if !quiet {
                eprintln!("{shown}: the packages are as the list has them (read again after the undo)");
                if let Some(files) = crate::render::outcome::files(&outcome) {
                    eprintln!("{shown}: {files}");
                }
            }
            Ok(exit::OK)
        }
        (None, state) => {
            let why = state.as_ref().map_or_else(|| "it was not read again".to_owned(), EnvState::describe);
            eprintln!("{shown}: {}", clean(&why));
            Ok(exit::FINDINGS)
        }
    }
}

/// What an undo will run, remove and install, for the person to answer.
fn describe_undo(preview: &UndoPreview) -> String {
    let mut out = format!("Undo runs {} to:\n", clean(&preview.python.display().to_string()));
    let list = |names: &[String]| names.iter().map(|n| clean(n)).collect::<Vec<_>>().join(", ");
    if !preview.remove.is_empty() {
        out.push_str(&format!("  REMOVE {} package(s): {}\n", preview.remove.len(), list(&preview.remove)));
    }
    if !preview.install.is_empty() {
        out.push_str(&format!("  install {} package(s): {}\n", preview.install.len(), list(&preview.install)));
    }
    for command in &preview.commands {
        out.push_str(&format!("  $ {}\n", clean(command)));
    }
    out
}

/// Asks `question` on the terminal: true for y or yes.
fn ask(question: &str) -> Result<bool> {
    eprint!("{question}");
    std::io::stderr().flush().ok();
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer).context("could not read the answer")?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

fn write_root_script(plan: &Plan, path: &Path, quiet: bool) -> Result<()> {
    let Some(script) = plan.root_script() else {
        return Err(UsageError(format!("plan {} has no root step", plan.id)).into());
    };
    crate::files::write_file(path, script)?;
    if !quiet {
        eprintln!(
            "wrote the root steps to {} (review it, then run it as root: sudo sh {0})",
            clean(&path.display().to_string())
        );
    }
    Ok(())
}

/// Asks on the terminal; refuses without one.
fn confirm(plan: &Plan) -> Result<bool> {
    if !std::io::stdin().is_terminal() {
        return Err(UsageError("--apply asks before changing anything; without a terminal, add --yes".into()).into());
    }
    let ours = plan.steps.iter().filter(|s| s.is_run_by_gpu_doctor()).count();
    let place = plan.env.as_ref().map_or_else(String::new, |e| format!(" to {}", e.display()));
    ask(&format!("Apply plan {} ({ours} step(s)){}? [y/N] ", clean(&plan.id), clean(&place)))
}

/// Where the runner logs and saves: the data folder's `installs/`, one hour per step at most.
fn apply_options() -> Result<ApplyOptions> {
    let log_dir = crate::files::data_dir()
        .map(|d| d.join("installs"))
        .ok_or_else(|| InputError("no home folder is known, so there is nowhere to keep the log and backup".into()))?;
    Ok(ApplyOptions { log_dir, step_timeout: Duration::from_secs(3600) })
}

/// Prints a runner event on standard error: each step as it starts, its output, failures.
fn print_event(e: Event, quiet: bool) {
    if quiet {
        return;
    }
    match e {
        Event::Started { index, total, line } => eprintln!("[{}/{total}] {}", index + 1, clean(&line)),
        Event::Line { text, .. } => eprintln!("    {}", clean(&text)),
        Event::Progress { .. } => {}
        Event::Ended { index, status } => match status {
            // Its output was streamed just above: the reason without its last lines again.
            StepStatus::Failed { reason } => eprintln!("[{}] failed: {}", index + 1, clean(failure(&reason, true))),
            StepStatus::LeftToYou => eprintln!("[{}] left to you (shown above)", index + 1),
            _ => {}
        },
    }
}

/// Applies the plan, printing each step, its output and progress on standard error.
fn run(plan: &Plan, quiet: bool) -> Result<Outcome> {
    let stop = process::graceful_stop();
    let outcome = apply::apply(plan, &apply_options()?, stop.flag(), &mut |e| print_event(e, quiet));
    if !quiet {
        if let (Some(backup), Some(env)) = (&outcome.backup, &plan.env) {
            eprintln!(
                "the environment's package list before: {}\n  undo with: gpu-doctor fix --undo {} --env {}",
                clean(&backup.display().to_string()),
                clean(&gpu_doctor_model::shell::quote_posix(&backup.display().to_string())),
                clean(&gpu_doctor_model::shell::quote_posix(&env.display().to_string()))
            );
        }
        if let Some(log) = &outcome.log {
            eprintln!("log: {}", clean(&log.display().to_string()));
        }
    }
    Ok(outcome)
}

/// What was done, what was not, and what the check after it says.
/// A failed step's reason as shown: without the output lines it quotes (`; its last lines:` and
/// after) when that output was `streamed` on the terminal already, so pip's error is shown once.
fn failure(reason: &str, streamed: bool) -> &str {
    match reason.split_once("; its last lines:") {
        Some((head, _)) if streamed => head,
        _ => reason,
    }
}

/// What was done, what was not, and what the check after it says; a failed step's output lines
/// only where they were not `streamed` on the terminal during the run.
fn summary(plan: &Plan, outcome: &Outcome, still: &[String], after: &Report, streamed: bool) -> String {
    let mut out = format!("Plan {}:\n", plan.id);
    for (step, status) in plan.steps.iter().zip(&outcome.steps) {
        let what = match status {
            StepStatus::Done => "done".to_owned(),
            StepStatus::Failed { reason } if streamed && failure(reason, true).len() < reason.len() => {
                format!("FAILED: {} (its output is above)", clean(failure(reason, true)))
            }
            StepStatus::Failed { reason } => format!("FAILED: {}", clean(reason)),
            StepStatus::LeftToYou => "left to you".to_owned(),
            StepStatus::NotRun => "not run".to_owned(),
            StepStatus::Cancelled => "cancelled".to_owned(),
            StepStatus::Unproven { summary } => format!("not proven: {}", clean(summary)),
        };
        out.push_str(&format!("  {:<18} {what}\n", crate::render::plan::step_label(&step.kind)));
    }
    if let Some(state) = &outcome.state {
        out.push_str(&format!("\n{}.\n", clean(&state.describe())));
    }
    if let Some(files) = crate::render::outcome::files(outcome) {
        out.push_str(&format!("{files}.\n"));
    }
    if let Some(answers) = crate::render::outcome::answers(&plan.answers, still, outcome) {
        out.push_str(&format!("\n{answers}\n"));
    }
    let errors = after.findings.iter().filter(|f| f.severity == gpu_doctor_model::Severity::Error).count();
    out.push_str(&format!("{errors} error-level finding(s) now; `gpu-doctor check` shows them.\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(steps: Vec<StepStatus>) -> Outcome {
        Outcome { steps, ..Outcome::default() }
    }

    /// Issue 29: a successful install on a machine without a GPU exits 0, as the help says; the
    /// same verify on a machine with a GPU, a failed, cancelled or unreached step, or a finding still
    /// there exit 1. Each row names the words of `fix --help` and `setup --help` it follows.
    #[test]
    fn exit_codes_of_an_applied_plan_follow_the_help() {
        let unproven = || StepStatus::Unproven { summary: "no GPU here".into() };
        let failed = || StepStatus::Failed { reason: "pip failed".into() };
        type Row = (Vec<StepStatus>, &'static [&'static str], bool, u8, &'static str);
        let broken = || Outcome {
            steps: vec![StepStatus::Done],
            files: Some(apply::FilesState::Broken { broken: Vec::new(), repaired: Vec::new() }),
            ..Outcome::default()
        };
        assert_eq!(exit_code(&broken(), &[], false), exit::FINDINGS);
        assert!(
            AFTER_HELP.replace('\n', " ").contains("files of a package that was whole before are missing or changed")
        );
        let rows: [Row; 6] = [
            (vec![StepStatus::Done, StepStatus::Done], &[], true, exit::OK, "and its findings are gone"),
            (vec![StepStatus::Done, unproven()], &[], false, exit::OK, "GPU use cannot be proven: no failure"),
            (vec![StepStatus::Done, unproven()], &[], true, exit::FINDINGS, "prove GPU use on a machine with a GPU"),
            (vec![failed(), StepStatus::NotRun], &[], false, exit::FINDINGS, "a step failed"),
            (vec![StepStatus::Cancelled, StepStatus::NotRun], &[], false, exit::FINDINGS, "or was cancelled"),
            (vec![StepStatus::LeftToYou, StepStatus::Done], &["x"], true, exit::FINDINGS, "is still there"),
        ];
        let help = AFTER_HELP.replace('\n', " ");
        for (steps, still, gpu, code, words) in rows {
            let still: Vec<String> = still.iter().map(|s| (*s).to_owned()).collect();
            assert_eq!(exit_code(&outcome(steps.clone()), &still, gpu), code, "{steps:?} gpu {gpu}");
            assert!(help.contains(words), "fix --help does not say {words:?}");
        }
        let setup = crate::setup::AFTER_HELP.replace('\n', " ");
        for words in ["1 a step failed or was cancelled", "cannot prove GPU use there, which is no failure"] {
            assert!(setup.contains(words), "setup --help does not say {words:?}");
        }
    }

    /// Issue 29 item 1: a step from PyTorch's index says it does not use the user's configured
    /// index; a plan from PyPI (no --index-url) or a user without one gets no note.
    #[test]
    fn a_pytorch_index_step_says_it_bypasses_the_configured_index() {
        let plan = |argv: &[&str]| Plan {
            id: "p".into(),
            goal: "g".into(),
            answers: Vec::new(),
            env: None,
            steps: vec![gpu_doctor_installers::Step::run(
                argv.iter().map(|a| (*a).to_owned()).collect(),
                "w",
                "c",
                "u",
            )],
            choice: None,
        };
        let pytorch =
            plan(&["pip", "install", "--index-url", "https://download.pytorch.org/whl/cu126", "torch==2.9.1+cu126"]);
        let pypi = plan(&["pip", "install", "torch==2.9.1"]);
        let mirror = |name: &str| (name == "UV_DEFAULT_INDEX").then(|| "https://mirror.example/simple".to_owned());
        let none = |_: &str| None;
        assert_eq!(
            index_note(&pytorch, &mirror).as_deref(),
            Some(
                "note: the install step reads https://download.pytorch.org/whl/cu126 (only that index has this build), \
                 not the index your UV_DEFAULT_INDEX names"
            )
        );
        assert_eq!(index_note(&pypi, &mirror), None);
        assert_eq!(index_note(&pytorch, &none), None);
    }

    /// Issue 29: pip's error wall is shown once: streamed as it runs, then only the reason's head
    /// in the failed line and the summary; printed in full where nothing was streamed (--quiet).
    #[test]
    fn a_failed_steps_output_is_shown_once() {
        let reason = "pip exited with status 1; its last lines:\nERROR: No matching distribution found for torch==9";
        let plan = Plan {
            id: "p".into(),
            goal: "g".into(),
            answers: Vec::new(),
            env: None,
            steps: vec![gpu_doctor_installers::Step::run(vec!["pip".into()], "w", "c", "u")],
            choice: None,
        };
        let done = outcome(vec![StepStatus::Failed { reason: reason.into() }]);
        let report = Report::new(gpu_doctor_model::Snapshot::unknown(Vec::new()), Vec::new());
        let streamed = summary(&plan, &done, &[], &report, true);
        assert!(!streamed.contains("No matching distribution"), "{streamed}");
        assert!(streamed.contains("FAILED: pip exited with status 1 (its output is above)"), "{streamed}");
        assert_eq!(failure(reason, true), "pip exited with status 1");
        let quiet = summary(&plan, &done, &[], &report, false);
        assert_eq!(quiet.matches("No matching distribution").count(), 1, "{quiet}");
    }

    /// Issue 29: a failed offline cuDNN fix left no cuDNN, and the summary said the finding it
    /// answers was gone; the summary says a finding is gone only after a run that ended with
    /// every file whole, and names the files that are not.
    #[test]
    fn a_failed_fix_does_not_say_its_finding_is_gone() {
        let plan = Plan {
            id: "p".into(),
            goal: "g".into(),
            answers: vec!["wheels.duplicate_cudnn".into()],
            env: None,
            steps: vec![
                gpu_doctor_installers::Step::run(vec!["pip".into()], "w", "c", "u"),
                gpu_doctor_installers::Step::run(vec!["pip".into()], "w", "c", "u"),
            ],
            choice: None,
        };
        let report = Report::new(gpu_doctor_model::Snapshot::unknown(Vec::new()), Vec::new());
        let failed = outcome(vec![StepStatus::Done, StepStatus::Failed { reason: "no wheel".into() }]);
        let text = summary(&plan, &failed, &[], &report, true);
        assert!(!text.contains("are gone") && text.contains("did not run to its end"), "{text}");
        let ended = outcome(vec![StepStatus::Done, StepStatus::Done]);
        assert!(summary(&plan, &ended, &[], &report, true).contains("are gone (wheels.duplicate_cudnn)"));
        let broken = crate::render::outcome::cudnn_missing();
        let damaged = Outcome { files: Some(broken), ..ended };
        let text = summary(&plan, &damaged, &[], &report, true);
        assert!(
            !text.contains("are gone") && text.contains("nvidia-cudnn-cu12==9.1.0.70: 2 file(s) missing"),
            "{text}"
        );
        assert_eq!(exit_code(&damaged, &[], false), exit::FINDINGS);
    }
}
