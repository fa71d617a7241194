//! The probes, and `collect`, which runs them all into a `Snapshot`.

pub mod cudnn;
pub mod driver;
pub mod env;
pub mod gpus;
pub mod link;
pub mod pci;
pub mod platform;
pub mod python;
pub mod system;
pub mod toolkits;

use std::path::PathBuf;

/// What to probe beyond the defaults.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Also import the frameworks in each Python interpreter (the deep tier).
    pub deep: bool,
    /// Interpreters named on the command line with `--python`.
    pub extra_pythons: Vec<PathBuf>,
    /// The folder to look for a `.venv` in; `None` to skip.
    pub cwd: Option<PathBuf>,
}

/// A site-packages folder and the environment it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SitePackages {
    /// The environment's display name.
    pub env: String,
    /// The folder.
    pub path: PathBuf,
}
