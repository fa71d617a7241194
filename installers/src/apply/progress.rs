//! What pip's and uv's output says about their progress, and about an index they could not reach.

/// Reads an installer's lines one at a time and says how far it is: pip resolves ("Collecting X",
/// "Processing ./X.whl", "Downloading X (12.3 MB)"), then installs ("Installing collected packages:
/// a, b") and ends with "Successfully installed"; uv says "Resolved N packages", "Prepared N
/// packages", "Uninstalled N packages", "Installed N packages". The fraction never goes back.
#[derive(Debug, Default)]
pub(crate) struct ProgressReader {
    fraction: f32,
    collected: u32,
}

impl ProgressReader {
    /// The progress a line shows (`fraction` in 0..=1, what is being done), `None` for other lines.
    pub(crate) fn feed(&mut self, line: &str) -> Option<(f32, String)> {
        let (fraction, what) = self.read(line.trim())?;
        self.fraction = self.fraction.max(fraction);
        Some((self.fraction, what))
    }

    fn read(&mut self, line: &str) -> Option<(f32, String)> {
        if let Some(rest) = line.strip_prefix("Collecting ").or_else(|| line.strip_prefix("Processing ")) {
            self.collected += 1;
            // Each package found moves resolving on, ever more slowly, towards half way.
            let fraction = 0.5 * (1.0 - 1.0 / (self.collected as f32 + 1.0));
            return Some((fraction, format!("resolving: {}", first_word(rest))));
        }
        if let Some(rest) = line.strip_prefix("Downloading ") {
            return Some((self.fraction, format!("downloading {rest}")));
        }
        if let Some(rest) = line.strip_prefix("Installing collected packages: ") {
            return Some((0.6, format!("installing {rest}")));
        }
        if line.starts_with("Successfully installed") {
            return Some((1.0, line.to_owned()));
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let [verb, count, unit, ..] = words.as_slice() else { return None };
        if !matches!(*unit, "package" | "packages") || count.parse::<u32>().is_err() {
            return None;
        }
        let fraction = match *verb {
            "Resolved" => 0.3,
            "Prepared" => 0.6,
            "Uninstalled" => 0.8,
            "Installed" => 1.0,
            _ => return None,
        };
        Some((fraction, format!("{} {count} {unit}", verb.to_lowercase())))
    }
}

fn first_word(text: &str) -> &str {
    text.split_whitespace().next().unwrap_or(text)
}

/// True for a line with which pip or uv says it could not connect (refused, no route, no name).
pub(crate) fn is_connection_error(line: &str) -> bool {
    const SIGNS: [&str; 9] = [
        "failed to establish a new connection",
        "connection broken by",
        "temporary failure in name resolution",
        "name or service not known",
        "connection refused",
        "network is unreachable",
        "error sending request for url",
        "dns error",
        "could not fetch url",
    ];
    let line = line.to_lowercase();
    SIGNS.iter().any(|sign| line.contains(sign))
}

/// The index an install command reads: its `--index-url` (or `-i`, `--default-index`), else PyPI.
/// `None` when it reads no index at all (`--no-index`).
pub(crate) fn index_of(argv: &[String]) -> Option<String> {
    if argv.iter().any(|a| a == "--no-index") {
        return None;
    }
    let mut args = argv.iter();
    while let Some(arg) = args.next() {
        if matches!(arg.as_str(), "--index-url" | "-i" | "--default-index") {
            return args.next().cloned();
        }
        for flag in ["--index-url=", "--default-index="] {
            if let Some(url) = arg.strip_prefix(flag) {
                return Some(url.to_owned());
            }
        }
    }
    Some("https://pypi.org/simple (PyPI)".to_owned())
}

/// The failure reason of a step that could not reach its index: which one, and the offline route.
pub(crate) fn unreachable_index(argv: &[String], line: &str) -> String {
    let index = index_of(argv).unwrap_or_else(|| "a package index".to_owned());
    format!(
        "could not reach {index} ({}). Offline route: download the wheels on a machine with a network \
         (`pip download REQUIREMENTS -d DIR`), bring DIR here and install from it with --find-links DIR \
         (no index is read).",
        line.trim()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fractions(lines: &str) -> Vec<(f32, String)> {
        let mut reader = ProgressReader::default();
        lines.lines().filter_map(|l| reader.feed(l)).collect()
    }

    /// pip 23.2 installing from a wheelhouse (real output), and its download line from an index.
    #[test]
    fn pip_lines_move_the_bar_from_resolving_to_done() {
        let seen = fractions(
            "Looking in links: wh\n\
             Processing ./wh/torch-2.5.1+cpu-py3-none-any.whl\n\
             Processing ./wh/torchvision-0.20.1+cpu-py3-none-any.whl\n\
             Collecting numpy\n  Downloading numpy-2.1.3-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl (16.3 MB)\n\
             Installing collected packages: torch, torchvision\n\
             \x20 Attempting uninstall: torch\n\
             \x20   Found existing installation: torch 2.5.1+cu121\n\
             Successfully installed torch-2.5.1+cpu torchvision-0.20.1+cpu\n",
        );
        let what: Vec<&str> = seen.iter().map(|(_, w)| w.as_str()).collect();
        assert_eq!(
            what,
            [
                "resolving: ./wh/torch-2.5.1+cpu-py3-none-any.whl",
                "resolving: ./wh/torchvision-0.20.1+cpu-py3-none-any.whl",
                "resolving: numpy",
                "downloading numpy-2.1.3-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl (16.3 MB)",
                "installing torch, torchvision",
                "Successfully installed torch-2.5.1+cpu torchvision-0.20.1+cpu",
            ]
        );
        let f: Vec<f32> = seen.iter().map(|(f, _)| *f).collect();
        assert!(f.windows(2).all(|w| w[0] <= w[1]), "{f:?}");
        assert!(f[0] > 0.0 && f[3] < 0.5 && (f[4] - 0.6).abs() < 1e-6 && (f[5] - 1.0).abs() < 1e-6, "{f:?}");
    }

    /// uv 0.13 replacing two packages (real output).
    #[test]
    fn uv_lines_move_the_bar_from_resolved_to_installed() {
        let seen = fractions(
            "Using Python 3.11.7 environment at: v2\n\
             Resolved 2 packages in 3ms\n\
             Prepared 2 packages in 4ms\n\
             Uninstalled 2 packages in 22ms\n\
             Installed 1 package in 1ms\n\
             \x20- torch==2.5.1+cu121\n\
             \x20+ torch==2.5.1+cpu\n",
        );
        assert_eq!(
            seen,
            [
                (0.3, "resolved 2 packages".to_owned()),
                (0.6, "prepared 2 packages".to_owned()),
                (0.8, "uninstalled 2 packages".to_owned()),
                (1.0, "installed 1 package".to_owned()),
            ]
        );
    }

    #[test]
    fn a_line_that_only_looks_like_progress_is_not() {
        assert!(fractions("Installed the 2 packages\nResolved many packages\nInstalled 3 widgets\n").is_empty());
    }

    /// pip 23.2 and uv 0.13 against a refused port and a name that does not resolve (real output).
    #[test]
    fn connection_errors_of_pip_and_uv_are_recognised() {
        for line in [
            "WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection \
             broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPConnection object at 0x7f8739974810>: \
             Failed to establish a new connection: [Errno 111] Connection refused')': /simple/numpy/",
            "  cause: error sending request for url (https://download.invalid/whl/numpy/)",
            "  cause: failed to lookup address information: Name or service not known",
        ] {
            assert!(is_connection_error(line), "{line}");
        }
        for line in [
            "ERROR: Could not find a version that satisfies the requirement numpy (from versions: none)",
            "error: No solution found when resolving dependencies",
        ] {
            assert!(!is_connection_error(line), "{line}");
        }
    }

    #[test]
    fn the_index_named_is_the_one_the_command_reads() {
        let argv = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(
            index_of(&argv("uv pip install --index-url https://download.pytorch.org/whl/cu124 torch")).as_deref(),
            Some("https://download.pytorch.org/whl/cu124")
        );
        assert_eq!(index_of(&argv("p -m pip install -i http://x/simple a")).as_deref(), Some("http://x/simple"));
        assert!(index_of(&argv("p -m pip install torch")).is_some_and(|i| i.contains("pypi.org")));
        assert_eq!(index_of(&argv("p -m pip install --no-index --find-links /w torch")), None);
        let reason =
            unreachable_index(&argv("uv pip install --index-url https://download.invalid/whl torch"), " dns error ");
        assert!(reason.contains("https://download.invalid/whl") && reason.contains("--find-links DIR"), "{reason}");
    }
}
