//! What a paste's package rows become: one [`Pkg`] each, under the [`PASTED`] root.

/// The sources of versions a person typed: an issue form's answer, a `Label: value` line. People
/// leave a version's local tag out, so its absence says nothing of the build.
pub(super) const TYPED: [&str; 2] = ["issue form", "labelled lines"];

/// The format name of a conda environment file's dependency list (`- cudatoolkit=11.3`).
pub(super) const ENV_FILE: &str = "conda environment file";

/// The format name of conda's transaction listing (the package plan it prints before it installs).
pub(super) const CONDA_PLAN: &str = "conda package plan";

/// The format name of a `pip install name==version` command (`install_commands`).
pub(super) const PIP_COMMAND: &str = "pip install command";

/// The format name of a `conda install name=version` command (`install_commands`).
pub(super) const CONDA_COMMAND: &str = "conda install command";

/// The root every toolkit, framework and environment from pasted text gets.
pub(super) const PASTED: &str = "(pasted)";

/// One installed package as a list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Pkg {
    /// PEP 503 name; conda's `pytorch` is recorded as `torch`.
    pub name: String,
    pub version: String,
    /// conda's build string, e.g. `py3.10_cuda11.8_cudnn8.7.0_0`.
    pub conda_build: Option<String>,
    /// The format that listed it.
    pub source: &'static str,
}
