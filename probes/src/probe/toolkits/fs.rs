//! Small file-system helpers over `Host`, shared by the toolkits and cuDNN probes.

use std::path::{Path, PathBuf};

use crate::host::Host;
use gpu_doctor_model::OsFamily;

pub(in crate::probe) use crate::host::paths::real_path;

/// A path as text with forward slashes kept as they are.
pub(in crate::probe) fn text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// An environment variable naming a path, with Windows backslashes turned into forward slashes;
/// `None` when unset or empty.
pub(in crate::probe) fn env_path(host: &dyn Host, name: &str) -> Option<PathBuf> {
    let value = host.env_var(name).filter(|v| !v.trim().is_empty())?;
    let value = value.trim();
    let value = if host.platform().os == OsFamily::Windows { value.replace('\\', "/") } else { value.to_owned() };
    Some(PathBuf::from(value.trim_end_matches('/')))
}

/// The leading `a.b[.c]` of a version-like string (`12.1.105.post1` → `12.1.105`); `None` when it
/// does not start with a number.
pub(in crate::probe) fn leading_version(s: &str) -> Option<String> {
    let parts: Vec<&str> =
        s.split('.').take_while(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())).take(4).collect();
    (!parts.is_empty()).then(|| parts.join("."))
}

/// Splits a `conda-meta/<name>-<version>-<build>.json` file name into its version and build when
/// the package is `package` (the version must start with a digit, so `cudnn-dev-…` is not `cudnn`).
pub(in crate::probe) fn conda_meta(name: &str, package: &str) -> Option<(String, String)> {
    let rest = name.strip_suffix(".json")?.strip_prefix(package)?.strip_prefix('-')?;
    let (version, build) = rest.split_once('-').unwrap_or((rest, ""));
    version.starts_with(|c: char| c.is_ascii_digit()).then(|| (version.to_owned(), build.to_owned()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn names_split_into_versions() {
        assert_eq!(leading_version("12.1.105.post1").as_deref(), Some("12.1.105"));
        assert_eq!(leading_version("9.1.0.70").as_deref(), Some("9.1.0.70"));
        assert_eq!(leading_version("dev"), None);
        assert_eq!(conda_meta("cudnn-8.9.2.26-cuda12_0.json", "cudnn"), Some(("8.9.2.26".into(), "cuda12_0".into())));
        assert_eq!(conda_meta("cudnn-dev-8.9.2.26-cuda12_0.json", "cudnn"), None);
        assert_eq!(conda_meta("libcudnn-9.3.0.75-h0.json", "cudnn"), None);
    }
}
