//! Arguments several commands share: what the probes look at, `--replay`, `--color` and `--tool`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// `--color`: when the terminal summary (and clap's help and errors) are coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    /// On a terminal, unless NO_COLOR is set and not empty.
    Auto,
    /// Always, whatever NO_COLOR says.
    Always,
    /// Never.
    Never,
}

/// What the probes look at.
#[derive(Debug, Args, Clone, Default)]
pub struct ProbeArgs {
    /// Also start each Python interpreter and import its frameworks (slower: seconds per
    /// environment), to learn what only an import tells: whether CUDA works, the compiled GPU
    /// architectures, the cuDNN actually loaded.
    #[arg(long)]
    pub deep: bool,
    /// Also look at this Python interpreter or environment folder (repeat for more); one that is not
    /// there is an error (exit code 3). With `--deep`, environments inside the working folder are
    /// only imported when named here.
    #[arg(long = "python", value_name = "PATH")]
    pub pythons: Vec<PathBuf>,
}

/// `--replay` where a command reads it (`check`, `report`); `bench`, `diagnose` and
/// `record-fixture` do not, so their help does not offer it.
#[derive(Debug, Args, Clone, Default)]
pub struct ReplayArg {
    /// Look at a machine recorded with `record-fixture` (a folder) instead of this one.
    #[arg(long = "replay", value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// The tool on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ToolArg {
    Uv,
    Pip,
    Conda,
}

impl ToolArg {
    /// The name `envtool::detect` takes.
    pub fn name(self) -> &'static str {
        match self {
            ToolArg::Uv => "uv",
            ToolArg::Pip => "pip",
            ToolArg::Conda => "conda",
        }
    }
}
