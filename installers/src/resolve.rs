//! A plan resolved before it is applied: the plan's own tool asked what its install step would do
//! (`pip install --dry-run --report -`, `uv pip install --dry-run`, or for a new environment
//! `pip install --dry-run --ignore-installed` / `uv pip compile` with the base interpreter), run as
//! a child with a deadline through the apply runner, and compared with the environment's package
//! list read from disk: the whole change (added, upgraded, downgraded, removed, unchanged).
//! The removals the new build makes necessary are planned here too: the packages of another CUDA
//! major of the replaced build (`jax-cuda12-plugin` when `jax-cuda13-plugin` comes, an
//! `nvidia-*-cu13` wheel when the new build brings CUDA 12's) that nothing staying needs.
//!
//! pip's report (pip 22.2 and newer, format version 1): `{"install": [{"metadata": {"name",
//! "version", "requires_dist"}, "requested": bool}, …]}`, only what would be installed
//! (<https://pip.pypa.io/en/stable/reference/installation-report/>); seen from pip 23.2.1 here.
//! uv 0.13.9 prints on standard error `Would uninstall N packages`, `Would install N packages`,
//! then one line per distribution: ` - name==version` (removed) and ` + name==version` (added),
//! or `Would make no changes`; `--quiet` silences all of it, so it is not passed.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use gpu_doctor_kb::{PyVersion, families};
use gpu_doctor_probes::parse::wheel::normalize_name;
use serde::{Deserialize, Serialize};

use crate::apply::run::{self, Stream};
use crate::envtool::{self, Tool};
use crate::plan::{Plan, Step, StepKind, UserAction};

/// The most of a `METADATA` file read for its header.
const HEADER_CAP: u64 = 256 * 1024;

/// How a package changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// Not installed before.
    Added,
    /// Replaced by a higher version.
    Upgraded,
    /// Replaced by a lower version.
    Downgraded,
    /// Installed again at the same version (another build).
    Reinstalled,
    /// Uninstalled.
    Removed,
}

/// One package's change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// The normalized distribution name.
    pub name: String,
    /// How it changes.
    pub kind: ChangeKind,
    /// The version installed before; `None` when added.
    pub before: Option<String>,
    /// The version after; `None` when removed.
    pub after: Option<String>,
    /// Whether the plan names it (the user asked for it).
    pub requested: bool,
    /// Why it is removed, for a removal this plan adds; empty otherwise.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub why: String,
}

/// What a person allowed that [`Resolution::refusal`] otherwise refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Allow {
    /// An unasked major upgrade or downgrade (`--allow-major`).
    pub major: bool,
    /// Library wheels of two CUDA majors that write the same files (`--allow-overlap`).
    pub overlap: bool,
}

/// What applying a plan's install step would change, resolved by its tool.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Resolution {
    /// Every change, by kind then name.
    pub changes: Vec<Change>,
    /// The packages installed before that stay as they are (`name==version`, the name normalized).
    pub unchanged: Vec<String>,
    /// The command that resolved it, as run.
    pub command: Vec<String>,
}

impl Resolution {
    /// The removals this plan adds (the other CUDA major's packages), by name.
    pub fn planned_removals(&self) -> Vec<&Change> {
        self.changes.iter().filter(|c| c.kind == ChangeKind::Removed && !c.why.is_empty()).collect()
    }

    /// The upgrades and downgrades across a major version (`numpy 1.26.4 → 2.4.0`) of packages
    /// that were installed and that the plan does not name.
    pub fn unasked_majors(&self) -> Vec<&Change> {
        let major = |v: &Option<String>| v.as_deref().and_then(|v| PyVersion::new(v).numbers().first().copied());
        self.changes
            .iter()
            .filter(|c| matches!(c.kind, ChangeKind::Upgraded | ChangeKind::Downgraded) && !c.requested)
            .filter(|c| major(&c.before).is_some() && major(&c.before) != major(&c.after))
            .collect()
    }

    /// The packages the change adds or upgrades whose NVIDIA library (or JAX plugin, or CuPy) is of
    /// another CUDA major than one that stays: `(new, staying)`. Wheels of two CUDA majors of one
    /// library write the same files (`nvidia/cudnn/lib/libcudnn.so.9` of `nvidia-cudnn-cu12` and
    /// `-cu13`): whichever comes last overwrites the other's, and both frameworks load one copy.
    pub fn overlaps(&self) -> Vec<(String, String)> {
        let staying: Vec<(String, &str)> = self
            .unchanged
            .iter()
            .filter_map(|pin| pin.split_once("=="))
            .map(|(name, version)| (normalize_name(name), version))
            .collect();
        let mut out = Vec::new();
        for c in self.changes.iter().filter(|c| matches!(c.kind, ChangeKind::Added | ChangeKind::Upgraded)) {
            let version = c.after.as_deref().unwrap_or("");
            let (Some(major), Some(fam)) = (cuda_major(&c.name, version), family(&c.name)) else { continue };
            // Only the `-cuNN` wheels of one library share a folder (`nvidia/cudnn`); CUDA 13's
            // unsuffixed toolkit wheels install under `nvidia/cu13` (a jax[cuda13] run into a
            // tensorflow[and-cuda] environment changed the files of nvidia-cudnn-cu12 and
            // nvidia-nccl-cu12, not of nvidia-cublas-cu12).
            if !suffixed(&c.name) {
                continue;
            }
            for (name, v) in &staying {
                if suffixed(name)
                    && family(name).as_ref() == Some(&fam)
                    && cuda_major(name, v).is_some_and(|m| m != major)
                {
                    out.push((format!("{} {version}", c.name), format!("{name} {v}")));
                }
            }
        }
        out
    }

    /// Why the change is refused, unless `allow` allows it: first an unasked major upgrade or downgrade
    /// ([`Resolution::unasked_majors`], `--allow-major`), then library wheels of two CUDA majors
    /// that write the same files ([`Resolution::overlaps`], `--allow-overlap`). `None`: go ahead.
    pub fn refusal(&self, allow: Allow) -> Option<String> {
        let majors: Vec<String> = self
            .unasked_majors()
            .iter()
            .map(|c| {
                format!("{} {} -> {}", c.name, c.before.as_deref().unwrap_or("?"), c.after.as_deref().unwrap_or("?"))
            })
            .collect();
        if !majors.is_empty() && !allow.major {
            return Some(format!(
                "refused: the plan would move {} across a major version, and you did not ask for {}; nothing was \
                 changed. Add --allow-major to allow it",
                majors.join(", "),
                if majors.len() == 1 { "it" } else { "them" }
            ));
        }
        let overlaps: Vec<String> = self.overlaps().iter().map(|(new, old)| format!("{new} over {old}")).collect();
        if !overlaps.is_empty() && !allow.overlap {
            return Some(format!(
                "refused: the plan would install {}: wheels of two CUDA majors of one library write the same files, \
                 so the new one overwrites the other and both frameworks load one copy; nothing was changed. Put \
                 this framework in an environment of its own (gpu-doctor setup --env NEW), or add --allow-overlap",
                overlaps.join(", ")
            ));
        }
        None
    }

    /// The change in lines, for the person: one per package, then how many stay as they are.
    pub fn describe(&self) -> String {
        if self.changes.is_empty() {
            return format!("no package changes ({} stay as they are)\n", self.unchanged.len());
        }
        let mut out = String::new();
        for c in &self.changes {
            let (word, what) = match (c.kind, &c.before, &c.after) {
                (ChangeKind::Added, _, Some(after)) => ("add", format!("{} {after}", c.name)),
                (ChangeKind::Removed, Some(before), _) => ("REMOVE", format!("{} {before}", c.name)),
                (ChangeKind::Upgraded, Some(b), Some(a)) => ("upgrade", format!("{} {b} -> {a}", c.name)),
                (ChangeKind::Downgraded, Some(b), Some(a)) => ("DOWNGRADE", format!("{} {b} -> {a}", c.name)),
                (ChangeKind::Reinstalled, _, Some(a)) => ("reinstall", format!("{} {a}", c.name)),
                (_, b, a) => ("change", format!("{} {b:?} -> {a:?}", c.name)),
            };
            let asked = if c.requested { " (asked for)" } else { "" };
            let why = if c.why.is_empty() { String::new() } else { format!(": {}", c.why) };
            out.push_str(&format!("  {word:<9} {what}{asked}{why}\n"));
        }
        out.push_str(&format!("  {} package(s) stay as they are\n", self.unchanged.len()));
        out
    }
}

/// One distribution the tool would install.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Install {
    name: String,
    version: String,
    /// The normalized names it requires (outside extras); empty when the tool does not say.
    requires: Vec<String>,
}

/// What the tool says it would do.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct DryRun {
    install: Vec<Install>,
    /// `name==version` lines uv would uninstall (pip's report names none: it replaces).
    uninstall: Vec<(String, String)>,
}

/// Resolves `plan`'s first install step with its own tool, within `timeout` (Cancel stops it).
/// `Ok(None)` for a plan that installs nothing into an environment. The environment's list is read
/// from disk (`Err` where it cannot be: a conda environment, an editable install), the tool is run
/// without changing anything, and the removals the new build makes necessary are added.
pub fn resolve(plan: &Plan, timeout: Duration, cancel: &AtomicBool) -> Result<Option<Resolution>, String> {
    let Some((env, argv)) = plan.env.as_deref().zip(install_argv(plan)) else { return Ok(None) };
    let tool = tool_of(argv);
    let python = crate::apply::plan_python(plan);
    let existing = python.as_deref().is_some_and(Path::exists);
    let (before, site) = if existing {
        let listed = crate::apply::installed::freeze_from_disk(env, &tool)
            .map_err(|why| format!("the package list of {} could not be read from disk ({why})", env.display()))?;
        (listed.pins, Some(listed.site))
    } else {
        (Vec::new(), None)
    };
    let command = if existing { dry_run_argv(argv, &tool) } else { new_env_argv(plan, argv, &tool)? };
    let mut out = Vec::new();
    let mut err = Vec::new();
    let ran = run::run(&command, timeout, cancel, &mut |stream, line| match stream {
        Stream::Out => out.push(line.to_owned()),
        Stream::Err => err.push(line.to_owned()),
    });
    if let Some(file) = command.get(3).filter(|_| command.get(2).is_some_and(|c| c == "compile")) {
        let _ = std::fs::remove_file(file);
    }
    let program = command.first().map_or("", String::as_str);
    if !ran.succeeded() {
        return Err(format!("resolving the install failed: {}", ran.failure(program)));
    }
    let dry = match (&tool, existing) {
        (Tool::Uv { .. }, true) => parse_uv(&err),
        (Tool::Uv { .. }, false) => parse_compile(&out),
        _ => parse_pip_report(&out.join("\n"))?,
    };
    let requested: BTreeSet<String> = requirement_names(argv).into_iter().collect();
    let requires = site.as_deref().map(|site| installed_requires(site, &requested)).unwrap_or_default();
    let mut resolution = compare(&before, &dry, &requested);
    resolution.changes.extend(other_major_removals(&before, &dry, &requires));
    resolution.changes.sort_by(|a, b| (a.kind, &a.name).cmp(&(b.kind, &b.name)));
    let removed: BTreeSet<&str> = resolution.changes.iter().map(|c| c.name.as_str()).collect();
    resolution.unchanged.retain(|pin| !removed.contains(normalize_name(pin_name(pin)).as_str()));
    resolution.command = command;
    Ok(Some(resolution))
}

/// `plan` with the removals of `resolution` ([`Resolution::planned_removals`]) as an uninstall step
/// before its install step (so the new build's files are written after the old ones are gone); the
/// plan as it is when there are none.
pub fn with_removals(plan: &Plan, resolution: &Resolution) -> Plan {
    let removals = resolution.planned_removals();
    let mut plan = plan.clone();
    let Some(python) = crate::apply::plan_python(&plan) else { return plan };
    let (Some(at), false) = (install_index(&plan), removals.is_empty()) else { return plan };
    let tool = install_argv(&plan).map_or(Tool::Pip, tool_of);
    let names: Vec<String> = removals.iter().map(|c| c.name.clone()).collect();
    let shown: Vec<String> =
        removals.iter().map(|c| format!("{} {}", c.name, c.before.as_deref().unwrap_or("?"))).collect();
    let why: Vec<&str> = removals.iter().map(|c| c.why.as_str()).collect::<BTreeSet<_>>().into_iter().collect();
    plan.steps.insert(
        at,
        Step::run(
            envtool::uninstall(&tool, &python, &names),
            why.join("; "),
            format!("removes {}", shown.join(", ")),
            format!(
                "gpu-doctor fix --undo LIST --env {}: the package list --apply saves first (LIST) put back, these \
                 included",
                plan.env.as_deref().map_or_else(|| "ENV".into(), |e| e.display().to_string())
            ),
        ),
    );
    plan
}

/// The window's runner (`apply::apply`'s shape): `plan` resolved first, the change said as lines
/// of its install step; refused (that step failed with the reason, nothing run) where it would
/// move a package the environment had across a major version that the plan does not name, which
/// only `--allow-major` on the command line allows; else applied with the removals it needs
/// ([`with_removals`]), the outcome and events given for the plan's own steps (the removal is
/// part of its install step). Where it cannot be resolved, said, and applied as it is.
pub fn resolve_then_apply(
    plan: &Plan,
    opts: &crate::apply::ApplyOptions,
    cancel: &AtomicBool,
    events: &mut dyn FnMut(crate::apply::Event),
) -> crate::apply::Outcome {
    use crate::apply::{Event, Outcome, StepStatus, apply};
    let Some(at) = install_index(plan) else { return apply(plan, opts, cancel, events) };
    let mut say = |text: String| events(Event::Line { index: at, text });
    let resolution = match resolve(plan, opts.step_timeout, cancel) {
        Ok(Some(resolution)) => resolution,
        Ok(None) => return apply(plan, opts, cancel, events),
        Err(why) => {
            say(format!("the change could not be resolved before applying ({why}); the package list is saved first"));
            return apply(plan, opts, cancel, events);
        }
    };
    say("The change (resolved with the plan's own tool, nothing changed yet):".to_owned());
    for line in resolution.describe().lines() {
        say(line.to_owned());
    }
    // The window allows neither: the reason names the terminal's flag.
    if let Some(reason) = resolution.refusal(Allow::default()) {
        let mut steps = vec![StepStatus::NotRun; plan.steps.len()];
        steps[at] = StepStatus::Failed {
            reason: format!("{reason} (in a terminal: the same setup or fix with --apply and that flag)"),
        };
        return Outcome { steps, ..Outcome::default() };
    }
    let full = with_removals(plan, &resolution);
    if full.steps.len() == plan.steps.len() {
        return apply(plan, opts, cancel, events);
    }
    // The removal step (at `at`) is shown as part of the install step: indexes after it shift back,
    // and its end is said only when it did not succeed (the install step's own end follows).
    let back = |index: usize| index - usize::from(index > at);
    let mut outcome = apply(&full, opts, cancel, &mut |event| match event {
        Event::Started { index, total, line } => {
            events(Event::Started { index: back(index), total: total.saturating_sub(1), line });
        }
        Event::Ended { index, status: StepStatus::Done } if index == at => {}
        Event::Ended { index, status } => events(Event::Ended { index: back(index), status }),
        Event::Line { index, text } => events(Event::Line { index: back(index), text }),
        Event::Progress { index, fraction, what } => events(Event::Progress { index: back(index), fraction, what }),
    });
    let removal = outcome.steps.remove(at);
    if removal != StepStatus::Done {
        outcome.steps[at] = removal;
    }
    outcome
}

/// The argv of `plan`'s first install step.
fn install_argv(plan: &Plan) -> Option<&[String]> {
    install_index(plan).and_then(|at| match &plan.steps[at].kind {
        StepKind::User { action: UserAction::Run { argv } } => Some(argv.as_slice()),
        _ => None,
    })
}

/// The index of `plan`'s first install step (a user step whose argv runs `install`).
fn install_index(plan: &Plan) -> Option<usize> {
    plan.steps.iter().position(|step| {
        matches!(&step.kind, StepKind::User { action: UserAction::Run { argv } } if argv.iter().any(|a| a == "install"))
    })
}

/// uv when the install runs `uv pip install`, else pip.
fn tool_of(argv: &[String]) -> Tool {
    match argv {
        [uv, sub, ..]
            if sub == "pip" && Path::new(uv).file_stem().is_some_and(|s| s.to_string_lossy().starts_with("uv")) =>
        {
            Tool::Uv { uv: PathBuf::from(uv) }
        }
        _ => Tool::Pip,
    }
}

/// The dry run of an install into an existing environment: the same argv with `--dry-run` (and
/// pip's report on standard output) after `install`.
fn dry_run_argv(argv: &[String], tool: &Tool) -> Vec<String> {
    let Some(at) = argv.iter().position(|a| a == "install") else { return argv.to_vec() };
    let flags: &[&str] = match tool {
        Tool::Uv { .. } => &["--dry-run"],
        _ => &["--dry-run", "--report", "-", "--quiet"],
    };
    let mut out = argv[..=at].to_vec();
    out.extend(flags.iter().map(|f| (*f).to_owned()));
    out.extend(argv[at + 1..].iter().cloned());
    out
}

/// The resolution of an install into a new environment, with the interpreter its create step
/// bases it on: pip's dry run ignoring what that interpreter has, or `uv pip compile` of the
/// requirements (uv's dry run needs the environment).
fn new_env_argv(plan: &Plan, argv: &[String], tool: &Tool) -> Result<Vec<String>, String> {
    let base = plan
        .steps
        .iter()
        .find_map(|step| match &step.kind {
            StepKind::User { action: UserAction::Run { argv } } => match argv.as_slice() {
                [python, m, venv, ..] if m == "-m" && venv == "venv" => Some(python.clone()),
                [_, venv, rest @ ..] if venv == "venv" => {
                    rest.iter().position(|a| a == "--python").and_then(|i| rest.get(i + 1)).cloned()
                }
                _ => None,
            },
            _ => None,
        })
        .ok_or("the plan makes no venv whose base interpreter could resolve it")?;
    let at = argv.iter().position(|a| a == "install").ok_or("no install")?;
    let mut rest: Vec<String> = Vec::new();
    let mut args = argv[at + 1..].iter();
    while let Some(arg) = args.next() {
        if arg == "--python" {
            args.next();
        } else {
            rest.push(arg.clone());
        }
    }
    Ok(match tool {
        Tool::Uv { uv } => {
            // `uv pip compile` reads the requirements from a file (standard input is closed).
            let (reqs, flags): (Vec<String>, Vec<String>) = split_requirements(&rest);
            let file = requirements_file(&reqs)?;
            let mut out = vec![uv.display().to_string(), "pip".into(), "compile".into(), file.display().to_string()];
            out.extend(["--python".into(), base, "--no-header".into(), "--no-annotate".into(), "--quiet".into()]);
            out.extend(flags);
            out
        }
        _ => {
            let mut out: Vec<String> = [base.as_str(), "-m", "pip", "install", "--dry-run", "--ignore-installed"]
                .iter()
                .map(|s| (*s).to_owned())
                .collect();
            out.extend(["--report".into(), "-".into(), "--quiet".into()]);
            out.extend(rest);
            out
        }
    })
}

/// A new file in the temporary folder holding `reqs`, one a line (made anew: never a planted one).
fn requirements_file(reqs: &[String]) -> Result<PathBuf, String> {
    use std::io::Write as _;
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let file = std::env::temp_dir().join(format!("gpu-doctor-resolve-{}-{nanos}.txt", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&file)
        .map_err(|e| format!("{}: {e}", file.display()))?;
    f.write_all((reqs.join("\n") + "\n").as_bytes()).map_err(|e| format!("{}: {e}", file.display()))?;
    Ok(file)
}

/// Flags of pip and `uv pip install` that take a value.
const VALUED: [&str; 12] = [
    "--python",
    "--index-url",
    "-i",
    "--extra-index-url",
    "--find-links",
    "-f",
    "--report",
    "-c",
    "--constraint",
    "-r",
    "--requirement",
    "--target",
];

/// The install arguments split into requirements and flags (with their values).
fn split_requirements(args: &[String]) -> (Vec<String>, Vec<String>) {
    let (mut reqs, mut flags) = (Vec::new(), Vec::new());
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if VALUED.contains(&arg.as_str()) {
            flags.push(arg.clone());
            flags.extend(args.next().cloned());
        } else if arg.starts_with('-') {
            flags.push(arg.clone());
        } else {
            reqs.push(arg.clone());
        }
    }
    (reqs, flags)
}

/// The normalized names of the requirements an install argv names.
fn requirement_names(argv: &[String]) -> Vec<String> {
    let at = argv.iter().position(|a| a == "install").map_or(argv.len(), |i| i + 1);
    split_requirements(&argv[at..]).0.iter().map(|r| normalize_name(envtool::package_name(r))).collect()
}

/// pip's installation report (`--report -`).
fn parse_pip_report(text: &str) -> Result<DryRun, String> {
    #[derive(Deserialize)]
    struct Report {
        install: Vec<Item>,
    }
    #[derive(Deserialize)]
    struct Item {
        metadata: Metadata,
    }
    #[derive(Deserialize)]
    struct Metadata {
        name: String,
        version: String,
        #[serde(default)]
        requires_dist: Vec<String>,
    }
    // Anything pip printed before the report (a warning on standard output) is skipped.
    let start = text.find('{').ok_or("pip printed no installation report (pip 22.2 or newer writes one)")?;
    let report: Report = serde_json::from_str(&text[start..])
        .map_err(|e| format!("pip's installation report could not be read: {e}"))?;
    let install = report
        .install
        .into_iter()
        .map(|item| Install {
            name: normalize_name(&item.metadata.name),
            version: item.metadata.version,
            requires: item.metadata.requires_dist.iter().filter_map(|r| binding_requirement(r, false)).collect(),
        })
        .collect();
    Ok(DryRun { install, uninstall: Vec::new() })
}

/// uv's dry-run lines: ` + name==version` installed, ` - name==version` uninstalled (uv 0.13.9
/// prints a reinstall as both, ` - numpy==1.26.4` then ` + numpy==1.26.4`).
fn parse_uv(lines: &[String]) -> DryRun {
    let mut dry = DryRun::default();
    for line in lines {
        let line = line.trim_start();
        let Some((sign, pin)) = line.split_at_checked(2) else { continue };
        let Some((name, version)) = pin.trim().split_once("==") else { continue };
        let (name, version) = (normalize_name(name), version.trim().to_owned());
        match sign {
            "+ " => dry.install.push(Install { name, version, requires: Vec::new() }),
            "- " => dry.uninstall.push((name, version)),
            _ => {}
        }
    }
    dry
}

/// `uv pip compile`'s `name==version` lines: everything a new environment gets.
fn parse_compile(lines: &[String]) -> DryRun {
    let install = lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once("=="))
        .map(|(name, version)| Install {
            name: normalize_name(name.trim()),
            version: version.split([' ', ';']).next().unwrap_or("").to_owned(),
            requires: Vec::new(),
        })
        .collect();
    DryRun { install, uninstall: Vec::new() }
}

/// The name of a pin line (`name==version`, `name @ url`).
fn pin_name(pin: &str) -> &str {
    envtool::package_name(pin.trim())
}

/// The version of a pin line; `None` for `name @ url`.
fn pin_version(pin: &str) -> Option<&str> {
    pin.split_once("==").map(|(_, v)| v.trim())
}

/// The change from `before` (the environment's pins) that `dry` makes.
fn compare(before: &[String], dry: &DryRun, requested: &BTreeSet<String>) -> Resolution {
    let had: BTreeMap<String, Option<&str>> =
        before.iter().map(|pin| (normalize_name(pin_name(pin)), pin_version(pin))).collect();
    let mut changes = Vec::new();
    let mut touched = BTreeSet::new();
    let installing: BTreeSet<&str> = dry.install.iter().map(|i| i.name.as_str()).collect();
    for item in &dry.install {
        touched.insert(item.name.clone());
        let old = had.get(&item.name).copied();
        let kind = match old {
            None => ChangeKind::Added,
            Some(Some(old)) => match compare_versions(old, &item.version) {
                std::cmp::Ordering::Less => ChangeKind::Upgraded,
                std::cmp::Ordering::Greater => ChangeKind::Downgraded,
                std::cmp::Ordering::Equal => ChangeKind::Reinstalled,
            },
            Some(None) => ChangeKind::Reinstalled,
        };
        changes.push(Change {
            name: item.name.clone(),
            kind,
            before: old.flatten().map(str::to_owned),
            after: Some(item.version.clone()),
            requested: requested.contains(&item.name),
            why: String::new(),
        });
    }
    for (name, version) in &dry.uninstall {
        if !installing.contains(name.as_str()) && touched.insert(name.clone()) {
            changes.push(Change {
                name: name.clone(),
                kind: ChangeKind::Removed,
                before: Some(version.clone()),
                after: None,
                requested: false,
                why: String::new(),
            });
        }
    }
    let unchanged = before
        .iter()
        .filter(|pin| !touched.contains(&normalize_name(pin_name(pin))))
        .map(|pin| match pin_version(pin) {
            Some(version) => format!("{}=={version}", normalize_name(pin_name(pin))),
            None => pin.clone(),
        })
        .collect();
    Resolution { changes, unchanged, command: Vec::new() }
}

/// PEP 440 order of two versions' public parts, far enough for a change list: release numbers,
/// then a pre-release before its release. Two builds of one release (`+cpu`, `+cu121`) are equal:
/// installing the other is a reinstall.
fn compare_versions(a: &str, b: &str) -> std::cmp::Ordering {
    let (va, vb) = (PyVersion::new(a), PyVersion::new(b));
    let (mut na, mut nb) = (va.numbers(), vb.numbers());
    let len = na.len().max(nb.len());
    na.resize(len, 0);
    nb.resize(len, 0);
    na.cmp(&nb).then_with(|| match (va.is_pre_or_dev(), vb.is_pre_or_dev()) {
        (true, false) => std::cmp::Ordering::Less,
        (false, true) => std::cmp::Ordering::Greater,
        (true, true) => va.public().cmp(vb.public()),
        (false, false) => std::cmp::Ordering::Equal,
    })
}

/// The CUDA major a distribution is built for: `jax-cuda12-plugin`/`-pjrt` → 12, `cupy-cuda13x` →
/// 13, `nvidia-cudnn-cu13` → 13 (the `-cuN` suffix of NVIDIA's library wheels), a `+cu126` label →
/// 12, CUDA 13's unsuffixed toolkit wheels whose version major is the CUDA major
/// (`nvidia-cuda-runtime 13.0.96` → 13); `None` otherwise.
pub fn cuda_major(name: &str, version: &str) -> Option<u32> {
    if let Some(major) = families::jax_plugin_cuda(name) {
        return major.parse().ok();
    }
    let build = if families::is_cupy_cuda(name) {
        Some(families::cupy_build(name))
    } else if let Some(rest) = name.strip_prefix("nvidia-") {
        if let Some(major) = rest.rsplit_once("-cu").and_then(|(_, m)| m.parse().ok()) {
            return Some(major);
        }
        // CUDA 13's toolkit wheels have no suffix; those whose soname major is the CUDA major
        // carry it as their version's major (`nvidia-cuda-runtime 13.0.96`): families.rs,
        // `library_requirement`.
        let numbered = ["cudart", "cublas", "nvrtc", "nvJitLink", "cupti"];
        let wheel = numbered.iter().filter_map(|lib| families::library_wheel(lib)).any(|w| w == name);
        return wheel.then(|| PyVersion::new(version).numbers().first().copied()).flatten().filter(|m| *m >= 13);
    } else {
        families::build_from_local_tag(version)
    };
    match build? {
        gpu_doctor_model::FrameworkBuild::Cuda { version: Some(v) } => {
            v.chars().take_while(char::is_ascii_digit).collect::<String>().parse().ok()
        }
        _ => None,
    }
}

/// An NVIDIA library wheel named for its CUDA major (`nvidia-cudnn-cu12`).
fn suffixed(name: &str) -> bool {
    name.starts_with("nvidia-")
        && name.rsplit_once("-cu").is_some_and(|(_, m)| !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()))
}

/// Which family a CUDA-major-specific package is of, so that a new major of it replaces the old:
/// the JAX plugin, its PJRT companion, CuPy's wheels, and each NVIDIA library wheel (by its name
/// without the suffix).
fn family(name: &str) -> Option<String> {
    if families::jax_plugin_cuda(name).is_some() {
        return Some(if name.ends_with("-pjrt") { "jax-pjrt" } else { "jax-plugin" }.to_owned());
    }
    if families::is_cupy_cuda(name) {
        return Some("cupy".to_owned());
    }
    let rest = name.strip_prefix("nvidia-")?;
    Some(match rest.rsplit_once("-cu").filter(|(_, m)| m.bytes().all(|b| b.is_ascii_digit())) {
        Some((base, _)) => format!("nvidia-{base}"),
        None => name.to_owned(),
    })
}

/// The packages of `before` of another CUDA major than the one the install brings, of a family
/// the install brings (a JAX plugin, CuPy) or an NVIDIA library wheel, that nothing staying
/// requires (`requires`: each installed distribution's requirements; the new ones' from the dry
/// run): the replaced build's leftovers, planned for removal.
fn other_major_removals(before: &[String], dry: &DryRun, requires: &BTreeMap<String, Vec<String>>) -> Vec<Change> {
    let new_majors: BTreeSet<u32> = dry.install.iter().filter_map(|i| cuda_major(&i.name, &i.version)).collect();
    if new_majors.is_empty() {
        return Vec::new();
    }
    let new_families: BTreeSet<String> = dry
        .install
        .iter()
        .filter(|i| cuda_major(&i.name, &i.version).is_some())
        .filter_map(|i| family(&i.name))
        .collect();
    let going: BTreeSet<&str> =
        dry.install.iter().map(|i| i.name.as_str()).chain(dry.uninstall.iter().map(|(n, _)| n.as_str())).collect();
    let staying: Vec<(String, Option<&str>)> = before
        .iter()
        .map(|pin| (normalize_name(pin_name(pin)), pin_version(pin)))
        .filter(|(name, _)| !going.contains(name.as_str()))
        .collect();
    let mut remove: BTreeMap<String, (String, u32)> = staying
        .iter()
        .filter_map(|(name, version)| {
            let major = cuda_major(name, version.unwrap_or(""))?;
            let fam = family(name)?;
            let other = !new_majors.contains(&major);
            (other && (new_families.contains(&fam) || name.starts_with("nvidia-")))
                .then(|| (name.clone(), (version.unwrap_or("").to_owned(), major)))
        })
        .collect();
    // Keep what a package that stays (or comes) still requires, until nothing more changes.
    loop {
        let needed: BTreeSet<String> = staying
            .iter()
            .filter(|(name, _)| !remove.contains_key(name))
            .flat_map(|(name, _)| requires.get(name).into_iter().flatten().cloned())
            .chain(dry.install.iter().flat_map(|i| i.requires.iter().cloned()))
            .collect();
        let before_len = remove.len();
        remove.retain(|name, _| !needed.contains(name));
        if remove.len() == before_len {
            break;
        }
    }
    let news: Vec<String> = new_majors.iter().map(|m| format!("CUDA {m}")).collect();
    remove
        .into_iter()
        .map(|(name, (version, major))| Change {
            why: format!(
                "a CUDA {major} package beside the new {} build that nothing left needs (two CUDA majors in one \
                 environment load each other's libraries)",
                news.join("/")
            ),
            name,
            kind: ChangeKind::Removed,
            before: Some(version),
            after: None,
            requested: false,
        })
        .collect()
}

/// The normalized name a `Requires-Dist` value binds: `None` for one only under an extra (`;
/// extra == "cuda12"`) unless `extras` (an extra is not recorded as installed: for a distribution
/// the plan does not name, `tensorflow[and-cuda]`'s CUDA wheels, they are taken to be wanted), and
/// never under an extra that names a CUDA major ([`names_a_cuda_major`]).
fn binding_requirement(value: &str, extras: bool) -> Option<String> {
    let (req, marker) = value.split_once(';').unwrap_or((value, ""));
    if marker.contains("extra") && (!extras || names_a_cuda_major(marker)) {
        return None;
    }
    let name = envtool::package_name(req.trim());
    (!name.is_empty()).then(|| normalize_name(name))
}

/// Whether a marker's extra names a CUDA major (`extra == "cuda12"`, `"cuda12-local"`): one of a
/// framework's alternative builds, which another major's build replaces, unlike an extra that adds
/// the CUDA libraries to the one build (`"and-cuda"`, `"with-cuda"`).
fn names_a_cuda_major(marker: &str) -> bool {
    marker
        .split(['"', '\''])
        .skip(1)
        .step_by(2)
        .any(|extra| extra.strip_prefix("cuda").is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit())))
}

/// Each installed distribution's binding requirements, read from the `METADATA` headers of the
/// `*.dist-info` folders in `site`; a file that cannot be read is left out (its package then
/// protects nothing: the plan still shows every removal before it is made). The requirements under
/// an extra bind for every distribution but the `requested` ones (whose extras the plan names
/// anew: `jax[cuda13]` replaces `jax[cuda12]`): an environment made with `tensorflow[and-cuda]`
/// keeps its CUDA wheels when another framework comes.
fn installed_requires(site: &Path, requested: &BTreeSet<String>) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(site) else { return out };
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().to_ascii_lowercase().ends_with(".dist-info") {
            continue;
        }
        let mut text = String::new();
        let read = std::fs::File::open(entry.path().join("METADATA"))
            .and_then(|f| f.take(HEADER_CAP).read_to_string(&mut text));
        if read.is_err() {
            continue;
        }
        let headers: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
        let name = headers.iter().find_map(|l| l.strip_prefix("Name:")).map(|v| normalize_name(v.trim()));
        let extras = name.as_ref().is_some_and(|n| !requested.contains(n));
        let reqs: Vec<String> = headers
            .iter()
            .filter_map(|l| l.strip_prefix("Requires-Dist:"))
            .filter_map(|value| binding_requirement(value.trim(), extras))
            .collect();
        if let Some(name) = name {
            out.insert(name, reqs);
        }
    }
    out
}

#[cfg(test)]
mod tests;
