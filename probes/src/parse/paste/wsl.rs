//! Which WSL a paste comes from: `wsl -l -v`'s table (the default distribution's VERSION), the
//! kernel release (`4.4.0-19041-Microsoft` is WSL1's translation layer, `…-microsoft-standard…` a
//! WSL2 kernel), a Windows build older than any with WSL2 beside the word WSL, and, weakest, the
//! words `WSL1`/`WSL 2` in the text when only one version is named.
//! `/usr/lib/wsl/lib` paths (WSL2) are read by `loader.rs`.
//!
//! ```text
//! PS C:\> wsl -l -v
//!   NAME      STATE           VERSION
//! * Ubuntu    Running         1
//! Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com) (gcc version 5.4.0 (GCC) ) #1237-Microsoft
//! ```

use super::facts::Facts;
use gpu_doctor_model::{OsFamily, WslFacts};

const TABLE: &str = "wsl -l -v";
const KERNEL: &str = "kernel version";
const WORDS: &str = "WSL named in the text";
const WINDOWS: &str = "Windows version";

/// The first Windows 10 build that runs WSL2: 1903 (18362) and 1909 (18363) got it in an update of
/// 2020; WSL2 came with build 18917 before that. Every WSL on an older build is WSL1.
const FIRST_WSL2_BUILD: u32 = 18362;

/// Reads the WSL version: the table's, else the kernel's, else the one version the words name.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    let found = table(lines).map(|(at, v, distro)| (at, v, distro, TABLE)).or_else(|| {
        kernel(lines).map(|(at, v)| (at, v, None, KERNEL)).or_else(|| {
            // The words are weaker than a path under /usr/lib/wsl/lib, which only WSL2 has.
            let weak = || {
                old_windows(lines)
                    .map(|at| (at, 1, None, WINDOWS))
                    .or_else(|| words(lines).map(|(at, v)| (at, v, None, WORDS)))
                    .or_else(|| unnumbered(lines).map(|at| (at, 0, None, WORDS)))
            };
            facts.wsl.is_none().then(weak).flatten()
        })
    });
    let Some((at, version, distro, format)) = found else { return };
    facts.saw(at, format);
    // Only the kernel's own release says the text came from inside Linux; a table printed by
    // PowerShell or a sentence naming WSL may sit in a paste from native Windows.
    if format == KERNEL {
        facts.os.get_or_insert(OsFamily::Linux);
    }
    let wsl = facts.wsl.get_or_insert_with(|| WslFacts {
        version,
        distro: None,
        driver_lib_dir_present: false,
        libcuda_files: Vec::new(),
    });
    wsl.version = version;
    if distro.is_some() {
        wsl.distro = distro;
    }
}

/// `wsl -l -v`: the header `NAME STATE VERSION`, then one row per distribution, the default one
/// starred. The starred row's version, else the version every row shares.
fn table(lines: &[String]) -> Option<(usize, u32, Option<String>)> {
    let header = lines.iter().position(|l| l.split_whitespace().eq(["NAME", "STATE", "VERSION"]))?;
    let mut rows = Vec::new();
    for line in lines.iter().skip(header + 1).take(32) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let (starred, words) = match words.split_first() {
            Some((&"*", rest)) => (true, rest),
            _ => (false, words.as_slice()),
        };
        let [name, _state, version] = words else { break };
        let Some(version) = version.parse::<u32>().ok().filter(|v| matches!(v, 1 | 2)) else { break };
        rows.push((starred, (*name).to_owned(), version));
    }
    let chosen = rows.iter().find(|(starred, ..)| *starred).or_else(|| {
        let first = rows.first()?;
        rows.iter().all(|(_, _, v)| *v == first.2).then_some(first)
    })?;
    Some((header, chosen.2, Some(chosen.1.clone())))
}

/// The kernel release in `uname -a`, `/proc/version` or a report: WSL1's `4.4.0-19041-Microsoft`
/// (the Windows build in the middle) or a WSL2 kernel's `-microsoft-standard`.
fn kernel(lines: &[String]) -> Option<(usize, u32)> {
    lines.iter().enumerate().find_map(|(i, l)| {
        if l.to_ascii_lowercase().contains("-microsoft-standard") {
            return Some((i, 2));
        }
        l.split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | ',' | '\'' | '"'))
            .any(wsl1_release)
            .then_some((i, 1))
    })
}

/// `4.4.0-19041-Microsoft`: a version, a build number, `Microsoft`.
fn wsl1_release(word: &str) -> bool {
    let mut parts = word.split('-');
    let (Some(version), Some(build), Some("Microsoft"), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let numbered = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    version.split('.').count() == 3 && version.split('.').all(numbered) && numbered(build)
}

/// `Microsoft Windows [Version 10.0.17763.292]` with a build older than [`FIRST_WSL2_BUILD`], in a text
/// that names WSL: that WSL is WSL1.
fn old_windows(lines: &[String]) -> Option<usize> {
    let wsl =
        lines.iter().any(|l| l.to_ascii_lowercase().split(|c: char| !c.is_ascii_alphanumeric()).any(|w| w == "wsl"));
    let build = |l: &str| -> Option<u32> {
        let rest = l.get(l.find("Microsoft Windows [Version 10.0.")? + "Microsoft Windows [Version 10.0.".len()..)?;
        rest.split('.').next()?.parse().ok()
    };
    wsl.then(|| lines.iter().position(|l| build(l).is_some_and(|b| b < FIRST_WSL2_BUILD))).flatten()
}

/// `WSL1`, `WSL 2`, `wsl-2` as words (not `WSL 2.0.9`, the WSL app's version): the version when
/// the text names exactly one.
fn words(lines: &[String]) -> Option<(usize, u32)> {
    let mut named: Vec<(usize, u32)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        for v in named_versions(line) {
            if !named.iter().any(|(_, w)| *w == v) {
                named.push((i, v));
            }
        }
    }
    match named.as_slice() {
        [one] => Some(*one),
        _ => None,
    }
}

/// The first line that names WSL without a version (`on a WSL machine`, `in wsl`, `Windows Subsystem
/// for Linux`): the text comes from WSL, version not shown (0). Not a path (`/usr/lib/wsl/lib`, read by
/// `loader.rs`), nor the WSL app's own version line.
fn unnumbered(lines: &[String]) -> Option<usize> {
    lines.iter().position(|line| {
        let lower = line.to_ascii_lowercase();
        if lower.contains("windows subsystem for linux") {
            return true;
        }
        let bytes = lower.as_bytes();
        lower.match_indices("wsl").any(|(at, _)| {
            let before = at.checked_sub(1).and_then(|i| bytes.get(i)).copied();
            let after = bytes.get(at + 3).copied();
            let word =
                |b: Option<u8>| b.is_none_or(|b| !b.is_ascii_alphanumeric() && b != b'/' && b != b'_' && b != b'.');
            // `wsl.` ending a sentence is the word; `wsl.exe` and `/usr/lib/wsl/` are not.
            let sentence_end = after == Some(b'.') && !bytes.get(at + 4).is_some_and(u8::is_ascii_alphanumeric);
            word(before) && (word(after) || sentence_end)
        })
    })
}

fn named_versions(line: &str) -> Vec<u32> {
    let lower = line.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut out = Vec::new();
    for (at, _) in lower.match_indices("wsl") {
        if at > 0 && bytes.get(at - 1).is_some_and(u8::is_ascii_alphanumeric) {
            continue;
        }
        let mut k = at + 3;
        if bytes.get(k).is_some_and(|b| matches!(b, b' ' | b'-')) {
            k += 1;
        }
        let Some(v) = bytes.get(k).and_then(|b| match b {
            b'1' => Some(1),
            b'2' => Some(2),
            _ => None,
        }) else {
            continue;
        };
        let next = bytes.get(k + 1).copied();
        // `WSL 2.0.9` is the WSL app's version, not the distribution's.
        let app_version = next == Some(b'.') && bytes.get(k + 2).is_some_and(u8::is_ascii_digit);
        if !next.is_some_and(|b| b.is_ascii_alphanumeric()) && !app_version {
            out.push(v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(text: &str) -> Option<(u32, Option<String>)> {
        Facts::read_by(read, text).wsl.map(|w| (w.version, w.distro))
    }

    #[test]
    fn the_default_distribution_of_wsl_l_v() {
        let t = "PS C:\\Users\\me> wsl -l -v\n  NAME            STATE           VERSION\n\
                 * Ubuntu-20.04    Running         1\n  docker-desktop  Stopped         2\n";
        assert_eq!(version(t), Some((1, Some("Ubuntu-20.04".to_owned()))));
        let t = "  NAME      STATE           VERSION\n  Ubuntu    Running         2\n  Debian    Stopped         1\n";
        assert_eq!(version(t), None, "no default and the rows disagree");
    }

    #[test]
    fn kernel_releases_of_wsl1_and_wsl2() {
        let one =
            "Linux DESKTOP-1 4.4.0-19041-Microsoft #1237-Microsoft Sat Sep 11 14:32:00 PST 2021 x86_64 GNU/Linux\n";
        assert_eq!(version(one), Some((1, None)));
        let two = "Linux version 5.15.153.1-microsoft-standard-WSL2 (root@941d701f84f1) (gcc (GCC) 11.2.0)\n";
        assert_eq!(version(two), Some((2, None)));
        assert_eq!(version("Linux box 6.8.0-45-generic #45-Ubuntu SMP x86_64\n"), None);
        assert_eq!(version("4.4.0-x-Microsoft and 4.4-19041-Microsoft\n"), None);
    }

    #[test]
    fn words_name_a_version_only_when_they_name_one() {
        assert_eq!(version("I'm using Windows with WSL1\n"), Some((1, None)));
        assert_eq!(version("Ubuntu 22.04 on WSL 2, Windows 11\n"), Some((2, None)));
        assert_eq!(version("I moved from WSL1 to WSL2\n"), None);
        assert_eq!(
            version("WSL version: 2.0.9.0\nwsl 2.3.26\n"),
            Some((0, None)),
            "the WSL app's version: WSL, of no version"
        );
        assert_eq!(version("NEWSL1 AWSL2x\n"), None);
    }

    /// WSL named without a number (chelsea0x3b/cudarc#255: "running mistral.rs on a WSL machine";
    /// microsoft/WSL#12272: "in wsl"; bitsandbytes#17: "Windows Subsystem for Linux") is WSL, its
    /// version not shown (0); a path or the WSL app's version line is not.
    #[test]
    fn wsl_named_without_a_number_is_wsl_of_unknown_version() {
        assert_eq!(version("I was running mistral.rs on a WSL machine when I ran into this error:\n"), Some((0, None)));
        assert_eq!(version("Now I cannot use GPU in my wsl. How to recover from that?\n"), Some((0, None)));
        assert_eq!(version("a completely fresh Windows Subsystem for Linux with CUDA support\n"), Some((0, None)));
        assert_eq!(version("ls /usr/lib/wsl/lib\n"), None);
        assert_eq!(version("NEWSLETTER wslx\n"), None);
    }

    /// microsoft/WSL#3847: WSL on Windows 10 1809, before WSL2 existed.
    #[test]
    fn a_windows_build_before_wsl2_beside_the_word_wsl_is_wsl1() {
        let t = "### Microsoft Windows [Version 10.0.17763.292] \n\n#### Ubuntu app WSL: \n";
        assert_eq!(version(t), Some((1, None)));
        assert_eq!(
            version("Microsoft Windows [Version 10.0.19045.2728]\nWSL: Ubuntu\n"),
            Some((0, None)),
            "WSL2 exists there: WSL, of no version"
        );
        assert_eq!(version("Microsoft Windows [Version 10.0.17763.292]\n"), None, "WSL not named");
    }

    #[test]
    fn only_the_kernel_release_makes_the_paste_linux() {
        assert_eq!(
            Facts::read_by(read, "Linux version 5.15.153.1-microsoft-standard-WSL2\n").os,
            Some(OsFamily::Linux)
        );
        for t in ["Windows 11; it works under WSL2 but not here\n", "  NAME STATE VERSION\n* Ubuntu Running 2\n"] {
            let f = Facts::read_by(read, t);
            assert_eq!((f.wsl.map(|w| w.version), f.os), (Some(2), None), "{t}");
        }
    }

    #[test]
    fn the_table_and_the_kernel_outweigh_the_words() {
        let t = "I thought this was WSL2\n  NAME      STATE           VERSION\n* Ubuntu    Running         1\n";
        assert_eq!(version(t).map(|v| v.0), Some(1));
        let t = "on WSL1\nLinux version 5.10.16.3-microsoft-standard-WSL2\n";
        assert_eq!(version(t).map(|v| v.0), Some(2));
    }
}
