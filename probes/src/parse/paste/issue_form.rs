//! GitHub issue forms, as TensorFlow's (and many projects') bug template fills them in: a
//! `### Label` line, a blank line, then the reporter's answer. The answers read here are the
//! TensorFlow version, the OS platform and the Python version; the others (the CUDA/cuDNN version
//! and GPU model a person types) are prose, not facts.

use super::facts::Facts;
use super::packages;
use gpu_doctor_model::OsFamily;

/// The answer under a `### Label` line: the first non-empty line after it, unless that is the next
/// label or a code fence.
fn answer(lines: &[String], label_at: usize) -> Option<&str> {
    let line = lines.iter().skip(label_at + 1).take(3).map(|l| l.trim()).find(|l| !l.is_empty())?;
    (!line.starts_with("###") && !line.starts_with("```")).then_some(line)
}

/// The last `X.Y` or `X.Y.Z` in an answer (`v2.12.0-rc1-12-g0db597d0d75 2.12.0` → `2.12.0`,
/// `tf 2.16` and `tf2.12.0` → `2.16` and `2.12.0`); `None` when it holds none.
fn version_in(text: &str) -> Option<String> {
    text.rsplit(|c: char| c.is_whitespace() || c == ',' || c == '/')
        .map(|w| w.trim_start_matches(|c: char| c.is_ascii_alphabetic()).trim_end_matches(['.', ')']))
        .find(|w| {
            let parts: Vec<&str> = w.split('.').collect();
            (2..=3).contains(&parts.len())
                && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(str::to_owned)
}

/// The OS family an answer names (`Windows 11`, `win10`, `Ubuntu 22.04`); `None` for WSL (which is
/// Linux under Windows, and says so elsewhere) and for anything unclear.
fn os_in(text: &str) -> Option<OsFamily> {
    let t = text.to_ascii_lowercase();
    if t.contains("wsl") {
        return None;
    }
    if t.starts_with("win") || t.contains("windows") {
        return Some(OsFamily::Windows);
    }
    ["linux", "ubuntu", "debian", "centos", "fedora", "rhel", "rocky", "arch"]
        .iter()
        .any(|d| t.contains(d))
        .then_some(OsFamily::Linux)
}

/// Reads the answers of an issue form.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    for (i, line) in lines.iter().enumerate() {
        let Some(label) = line.trim().strip_prefix("### ") else { continue };
        let label = label.trim().to_ascii_lowercase();
        let Some(value) = answer(lines, i) else { continue };
        if label == "tensorflow version" {
            if let Some(version) = version_in(value) {
                facts.saw(i, "issue form");
                packages::add(facts, "tensorflow", &version, None, "issue form");
            }
        } else if label.starts_with("os platform") {
            if let Some(os) = os_in(value) {
                facts.saw(i, "issue form");
                facts.os.get_or_insert(os);
            }
        } else if label == "python version"
            && let Some(v) = version_in(value)
        {
            facts.saw(i, "issue form");
            facts.python_version.get_or_insert(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_platforms_of_answers() {
        assert_eq!(version_in("v2.12.0-rc1-12-g0db597d0d75 2.12.0").as_deref(), Some("2.12.0"));
        assert_eq!(version_in("tf 2.16").as_deref(), Some("2.16"));
        assert_eq!(version_in("tf2.12.0").as_deref(), Some("2.12.0"), "tensorflow/tensorflow#60241");
        assert_eq!(version_in("2.11.0").as_deref(), Some("2.11.0"));
        assert_eq!(version_in("nightly"), None);
        assert_eq!(version_in("1.2.3.4"), None);
        assert_eq!(os_in("Windows 11"), Some(OsFamily::Windows));
        assert_eq!(os_in("win10"), Some(OsFamily::Windows));
        assert_eq!(os_in("Ubuntu 22.04"), Some(OsFamily::Linux));
        assert_eq!(os_in("WSL2 Ubuntu on Windows 11"), None);
        assert_eq!(os_in("macOS 14"), None);
    }
}
