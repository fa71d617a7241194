//! Which distribution and release a pasted machine runs, in the shapes people paste it: `cat
//! /etc/os-release` (`PRETTY_NAME="Ubuntu 22.04.4 LTS"`, os-release(5)), `lsb_release -a`
//! (`Description:    Ubuntu 20.04.6 LTS`), `hostnamectl` (`Operating System: Ubuntu 24.04.1 LTS`),
//! `cat /etc/redhat-release` (`Rocky Linux release 9.3 (Blue Onyx)`), and the OS line of collect_env
//! and of issue forms (read there, kept here). The name is what the driver planner reads to name the
//! distribution's own package (`sudo ubuntu-drivers install nvidia:570`); a name that is not a Linux
//! distribution (`Microsoft Windows 11 Pro`, `macOS 14.5`) is kept as it was written.
//!
//! ```text
//! $ cat /etc/os-release
//! PRETTY_NAME="Ubuntu 22.04.4 LTS"
//! NAME="Ubuntu"
//! VERSION_ID="22.04"
//! ```

use super::facts::Facts;
use gpu_doctor_model::OsFamily;

const OS_RELEASE: &str = "os-release";
const LSB_RELEASE: &str = "lsb_release";
const HOSTNAMECTL: &str = "hostnamectl";
const REDHAT_RELEASE: &str = "redhat-release";

/// Longer than any distribution's pretty name: a longer value is prose, not a name.
const MAX_NAME: usize = 80;

/// The release files of the Red Hat family name themselves `NAME release VERSION (CODENAME)`.
const RELEASE_NAMES: &[&str] = &[
    "Red Hat Enterprise Linux",
    "Rocky Linux",
    "CentOS Linux",
    "CentOS Stream",
    "AlmaLinux",
    "Fedora",
    "Oracle Linux",
];

/// Linux distributions' names, lowercase, as they begin a pretty name: the OS is Linux.
const LINUX_NAMES: &[&str] = &[
    "ubuntu",
    "debian",
    "fedora",
    "red hat",
    "rocky",
    "centos",
    "almalinux",
    "alma linux",
    "oracle linux",
    "arch linux",
    "manjaro",
    "opensuse",
    "suse",
    "linux mint",
    "pop!_os",
    "nixos",
    "gentoo",
    "amazon linux",
    "endeavouros",
    "kali",
];

/// A value's quotes and blanks removed.
fn unquote(v: &str) -> &str {
    v.trim().trim_matches('"').trim_matches('\'').trim()
}

/// A name worth keeping: not empty, not prose, no control characters.
fn plausible(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_NAME && !name.chars().any(char::is_control)
}

/// `name` is a Linux distribution's.
pub(super) fn is_linux_name(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    LINUX_NAMES.iter().any(|n| l.starts_with(n) || l.starts_with(&format!("linux {n}")))
}

/// Keeps `name` as the OS's name unless one was found already; a Linux distribution's name also
/// says the OS is Linux.
pub(super) fn keep(facts: &mut Facts, name: &str, source: &'static str) {
    let name = unquote(name);
    if facts.os_name.is_some() || !plausible(name) {
        return;
    }
    if is_linux_name(name) {
        facts.os.get_or_insert(OsFamily::Linux);
    }
    facts.os_name = Some((name.to_owned(), source));
}

/// `Rocky Linux release 9.3 (Blue Onyx)` → itself, when it names a known release file's distribution.
fn redhat_release(line: &str) -> Option<&str> {
    let (name, rest) = line.split_once(" release ")?;
    let version = rest.split_whitespace().next()?;
    (RELEASE_NAMES.contains(&name) && version.starts_with(|c: char| c.is_ascii_digit())).then_some(line)
}

/// Reads the OS's name from os-release, lsb_release, hostnamectl and release-file lines.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        let found = if let Some(v) = t.strip_prefix("PRETTY_NAME=") {
            Some((v, OS_RELEASE))
        } else if let Some(v) = t.strip_prefix("Description:")
            && lines[i.saturating_sub(3)..i].iter().any(|l| l.trim_start().starts_with("Distributor ID:"))
        {
            Some((v, LSB_RELEASE))
        } else if let Some(v) = t.strip_prefix("Operating System:") {
            Some((v, HOSTNAMECTL))
        } else {
            redhat_release(t).map(|v| (v, REDHAT_RELEASE))
        };
        if let Some((name, source)) = found
            && plausible(unquote(name))
        {
            facts.saw(i, source);
            keep(facts, name, source);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name_of(text: &str) -> (Option<String>, Option<OsFamily>) {
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let mut f = Facts::default();
        read(&lines, &mut f);
        (f.os_name.map(|(n, _)| n), f.os)
    }

    #[test]
    fn each_shape_gives_the_name_and_linux() {
        // os-release(5) as `cat /etc/os-release` prints it on Ubuntu 22.04.4 (the file's own lines).
        let os_release = "PRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\n\
                          VERSION=\"22.04.4 LTS (Jammy Jellyfish)\"\nID=ubuntu\nID_LIKE=debian";
        // lsb_release -a, from https://github.com/iperov/DeepFaceLab (deepfacelab-linux issue 89).
        let lsb = "No LSB modules are available.\n  Distributor ID: Ubuntu\n  Description:    Ubuntu 20.04.6 LTS\n  \
                   Release:        20.04\n  Codename:       focal";
        let hostnamectl = "   Static hostname: gpu01\n  Operating System: Debian GNU/Linux 12 (bookworm)\n\
                                     Kernel: Linux 6.1.0-18-amd64";
        let redhat = "$ cat /etc/redhat-release\nRocky Linux release 9.3 (Blue Onyx)";
        for (text, want) in [
            (os_release, "Ubuntu 22.04.4 LTS"),
            (lsb, "Ubuntu 20.04.6 LTS"),
            (hostnamectl, "Debian GNU/Linux 12 (bookworm)"),
            (redhat, "Rocky Linux release 9.3 (Blue Onyx)"),
        ] {
            assert_eq!(name_of(text), (Some(want.to_owned()), Some(OsFamily::Linux)), "{text}");
        }
    }

    #[test]
    fn look_alikes_give_nothing() {
        for text in [
            // A description with no lsb_release header above it.
            "Description: the model fails to load on the GPU",
            // Prose that says `release`.
            "PyTorch release 2.5 (October) broke this",
            "PRETTY_NAME=\"\"",
            "Operating System:",
        ] {
            assert_eq!(name_of(text), (None, None), "{text}");
        }
    }

    #[test]
    fn the_first_name_wins_and_huge_or_cut_input_is_read_in_one_pass() {
        let text = "PRETTY_NAME=\"Fedora Linux 40 (Workstation Edition)\"\nPRETTY_NAME=\"Ubuntu 24.04 LTS\"";
        assert_eq!(name_of(text).0.as_deref(), Some("Fedora Linux 40 (Workstation Edition)"));
        assert_eq!(name_of(&format!("PRETTY_NAME=\"{}\"", "x".repeat(10_000))), (None, None));
        assert_eq!(name_of("PRETTY_NAME=\"Ubun").0.as_deref(), Some("Ubun"));
        let many = "Description: x\n".repeat(200_000);
        let start = std::time::Instant::now();
        assert_eq!(name_of(&many), (None, None));
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }
}
