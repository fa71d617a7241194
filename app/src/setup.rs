//! The `setup` command: a new Python environment for this machine, with the framework build
//! that runs on its GPUs and driver (chosen from the knowledge base, or among the wheels of
//! `--find-links DIR`), shown as a plan and, with `--apply`, built and verified.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, ValueEnum};
use gpu_doctor_installers::choose::Framework;
use gpu_doctor_installers::envtool;
use gpu_doctor_installers::planners::setup::{SetupRequest, setup_plan};
use gpu_doctor_probes::host::Host;
use gpu_doctor_probes::probe::Options;

use crate::cli::args::ToolArg;
use crate::exit::InputError;
use crate::fix::{Asked, apply_asked, show};

pub const AFTER_HELP: &str = "\
Examples:
  gpu-doctor setup --framework torch --env ~/venvs/torch
                                   the plan: which build and why (and why not the
                                   others), the steps; nothing is changed
  gpu-doctor setup --framework torch --env ~/venvs/torch --apply
                                   show the whole change (resolved by pip or uv),
                                   build it, then prove it on the GPU
  gpu-doctor setup --framework jax --env ./jax-env --find-links ./wheels --apply
                                   offline: choose among the wheels in ./wheels

Exit codes: 0 the plan was shown or not confirmed, or applied and verified (on a machine without a \
GPU: applied, and the check cannot prove GPU use there, which is no failure); 1 a step failed or was \
cancelled (a new environment is then deleted again), files of a package the environment had whole \
are missing or changed (checked against its RECORD), or the check could not prove GPU use on a \
machine with a GPU; 2 the command line was wrong (or --apply would move a package the environment \
has across a major version that the plan does not name: the change is shown first, nothing is \
changed, --allow-major allows it; or would put a CUDA library wheel over another CUDA major's, which \
writes the same files: --allow-overlap allows it); 3 an input could not be read (no build fits, the folder holds \
other files); 4 gpu-doctor itself failed.";

/// A framework on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FrameworkArg {
    Torch,
    Jax,
    Tensorflow,
    Cupy,
}

impl From<FrameworkArg> for Framework {
    fn from(f: FrameworkArg) -> Self {
        match f {
            FrameworkArg::Torch => Framework::Torch,
            FrameworkArg::Jax => Framework::Jax,
            FrameworkArg::Tensorflow => Framework::Tensorflow,
            FrameworkArg::Cupy => Framework::Cupy,
        }
    }
}

/// `setup`.
#[derive(Debug, Args)]
pub struct SetupArgs {
    /// The framework to install.
    #[arg(long, value_enum)]
    pub framework: FrameworkArg,
    /// Where the environment goes: a new or empty folder, or an existing environment to install into.
    #[arg(long, value_name = "PATH")]
    pub env: PathBuf,
    /// The tool that makes the environment and installs (default: uv when it is on PATH, else pip).
    #[arg(long, value_enum)]
    pub tool: Option<ToolArg>,
    /// The Python the new environment is based on (default: python3 on PATH).
    #[arg(long, value_name = "PATH")]
    pub base_python: Option<PathBuf>,
    /// Install from this folder of wheels and no index (offline); the build is chosen among them.
    #[arg(long, value_name = "DIR")]
    pub find_links: Option<PathBuf>,
    /// Carry the plan out (asks first unless --yes).
    #[arg(long)]
    pub apply: bool,
    /// With --apply: do not ask.
    #[arg(long, requires = "apply")]
    pub yes: bool,
    /// Print the plan (and with --apply what each step did) as JSON.
    #[arg(long)]
    pub json: bool,
    /// With --apply: allow upgrading or downgrading a package the environment already has across a
    /// major version (numpy 1 -> 2) that the plan does not name; refused without it.
    #[arg(long, requires = "apply")]
    pub allow_major: bool,
    /// With --apply: install a CUDA library wheel of another CUDA major beside one that stays
    /// (nvidia-cudnn-cu13 beside nvidia-cudnn-cu12): they write the same files, so one overwrites
    /// the other; refused without it (a separate environment keeps both whole).
    #[arg(long, requires = "apply")]
    pub allow_overlap: bool,
}

/// Runs `setup` for the machine behind `host`.
pub fn setup(host: &dyn Host, args: &SetupArgs, opts: &Options, this_machine: bool, quiet: bool) -> Result<u8> {
    let kb = crate::ops::kb()?;
    let env = std::path::absolute(&args.env).unwrap_or_else(|_| args.env.clone());
    let tool = envtool::detect_for(args.tool.map(ToolArg::name), Some(&env)).map_err(InputError)?;
    let python = match &args.base_python {
        Some(p) => p.clone(),
        None => envtool::base_python().map_err(|e| InputError(format!("{e} (--base-python)")))?,
    };
    let req = SetupRequest::new(args.framework.into(), env, tool, Some(python), args.find_links.clone())
        .map_err(InputError)?;
    let before = crate::ops::check(host, opts)?;
    // A Python the snapshot lists without a version (pyenv's shim) is asked on this machine.
    let req =
        if this_machine { SetupRequest { python_version: envtool::python_version(&req.python), ..req } } else { req };
    let plan = setup_plan(&before.snapshot, kb, &req).map_err(InputError)?;
    if !args.apply {
        return show(&plan, gpu_doctor_installers::planners::shell_of(&before), args.json);
    }
    apply_asked(
        host,
        opts,
        &plan,
        this_machine,
        Asked { yes: args.yes, json: args.json, allow_major: args.allow_major, allow_overlap: args.allow_overlap },
        quiet,
    )
}
