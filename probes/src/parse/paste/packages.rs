//! Package lists: `pip list` (a `Package  Version` table), `pip freeze` / `pip list --format=freeze`
//! (`name==version`, `name @ url`), `conda list` (`name  version  build  channel`) and uv's install
//! summary (` + name==version`).

use std::sync::OnceLock;

use regex::Regex;

use super::facts::Facts;
use super::pkg::{CONDA_PLAN, ENV_FILE, Pkg};
use crate::parse::wheel::normalize_name;

/// `name==version` as pip freeze writes it.
fn freeze_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    #[allow(clippy::unwrap_used)] // a literal pattern, exercised by every test
    RE.get_or_init(|| Regex::new(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*===?\s*([0-9][^\s;#]*)$").unwrap())
}

/// Whether `name` has the characters of a package name (letters, digits, `.`, `_`, `-`), as pip and conda print it.
fn package_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// The package on one `pip freeze` line: `torch==2.5.1+cu124`, or `torch @ https://…/torch-2.1.0%2Bcu121-…whl`
/// (the version read from the wheel's file name; `None` for a direct reference without one).
pub(super) fn freeze_line(line: &str) -> Option<(String, String)> {
    let line = line.trim();
    if let Some(c) = freeze_re().captures(line) {
        return Some((c.get(1)?.as_str().to_owned(), c.get(2)?.as_str().to_owned()));
    }
    let (name, url) = line.split_once(" @ ")?;
    if !package_name(name) {
        return None;
    }
    let (_, version) = wheel_file(url.trim())?;
    Some((name.to_owned(), version))
}

/// The package on one `conda list` row: name, version, build string. The row may carry the
/// package's track features in brackets before the channel (`pytorch 1.6.0 py3.8_cpu_0 [cpuonly]
/// pytorch`: conda prints them so for packages built with `track_features`).
pub(super) fn conda_line(line: &str) -> Option<(String, String, Option<String>)> {
    let mut words = line.split_whitespace();
    let name = words.next()?;
    let version = words.next()?;
    let build = words.next();
    let features = |w: &&str| w.len() > 2 && w.starts_with('[') && w.ends_with(']');
    if words.filter(|w| !features(w)).count() > 1
        || !package_name(name)
        || !version.starts_with(|c: char| c.is_ascii_digit())
    {
        return None;
    }
    Some((name.to_owned(), version.to_owned(), build.map(str::to_owned)))
}

/// Adds one package if it matters to gpu-doctor (frameworks, CUDA wheels, companions, conda's CUDA
/// packages); true when it does.
pub(super) fn add(
    facts: &mut Facts,
    name: &str,
    version: &str,
    conda_build: Option<&str>,
    source: &'static str,
) -> bool {
    let mut name = normalize_name(name);
    // conda's `pytorch`, and the nightly packages of 2018 and 2019 (conda's `pytorch-nightly` on the pytorch
    // channel, pip's `torch-nightly`), all install the `torch` module (pytorch/pytorch#23778's conda plan:
    // `pytorch/linux-64::pytorch-nightly-1.2.0.dev20190805+cpu-py3.7_cpu_0`).
    if matches!(name.as_str(), "pytorch" | "pytorch-nightly" | "torch-nightly") {
        name = "torch".to_owned();
    }
    let interesting = crate::probe::python::fast::is_interesting(&name)
        || crate::probe::python::companions::is_companion(&name)
        || matches!(
            name.as_str(),
            "cudatoolkit" | "cudnn" | "cuda-nvcc" | "cuda-cudart" | "cuda-version" | "pytorch-cuda"
        );
    if interesting {
        let conda_build = conda_build.map(str::to_owned);
        facts.package(Pkg { name, version: version.to_owned(), conda_build, source });
    }
    interesting
}

/// Reads every package list in the text.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    read_pip_list(lines, facts);
    if !read_conda_list(lines, facts) {
        read_conda_rows(lines, facts);
    }
    read_conda_plan(lines, facts);
    read_pip_show(lines, facts);
    read_cudnn_packages(lines, facts);
    let mut first = None;
    for (i, line) in lines.iter().enumerate() {
        if let Some((name, version)) = freeze_line(line) {
            first.get_or_insert(i);
            add(facts, &name, &version, None, "pip freeze");
        }
    }
    if let Some(i) = first {
        facts.saw(i, "pip freeze");
        facts.complete_package_list = true;
    }
    read_uv_changes(lines, facts);
    read_in_words(lines, facts);
    read_both_installed(lines, facts);
    read_pip_rows(lines, facts);
    read_pip_log(lines, facts);
}

/// The source name of [`read_pip_log`]'s packages.
const PIP_LOG: &str = "pip install log";

/// The longest `Successfully installed` line read (a large environment's install names hundreds of packages).
const MAX_LOG_LINE: usize = 16_384;

/// The name and version in pip's `name-version` (the last `-` before a digit splits them: `nvidia-cudnn-cu12-8.9.2.26`).
fn name_dash_version(item: &str) -> Option<(&str, &str)> {
    let at =
        item.char_indices().rfind(|&(i, c)| c == '-' && item[i + 1..].starts_with(|d: char| d.is_ascii_digit()))?.0;
    let (name, version) = (&item[..at], &item[at + 1..]);
    package_name(name).then_some((name, version))
}

/// The package a wheel's file name holds (`onnxruntime_gpu-1.15.0-cp310-cp310-manylinux_2_17_x86_64.whl`, the local
/// tag's `+` written `%2B` in a URL), from the last path segment: `pip freeze`'s direct references and pip's download
/// lines name wheels so.
fn wheel_file(word: &str) -> Option<(String, String)> {
    let file = word.rsplit('/').next()?.replace("%2B", "+").replace("%2b", "+");
    let stem = file.strip_suffix(".whl")?;
    let mut parts = stem.split('-');
    let (name, version) = (parts.next()?, parts.next()?);
    version.starts_with(|c: char| c.is_ascii_digit()).then(|| (name.to_owned(), version.to_owned()))
}

/// What a pip install log says is installed: `Successfully installed a-1.0 b-2.0` (the last such line first: it is
/// the environment's latest state), `Requirement already satisfied: torch in … (2.1.0)` (the version in the last
/// parentheses), then the wheels it downloaded or took from its cache (`Downloading torch-2.1.0-cp311-cp311-
/// win_amd64.whl (200 MB)`, `Using cached …whl`). pypa/pip: src/pip/_internal/commands/install.py (`Successfully
/// installed %s`, each item `name-version`), src/pip/_internal/resolution/ and req/ (`Requirement already satisfied:
/// %s in %s (%s)`), src/pip/_internal/network/download.py and operations/prepare.py (`Downloading %s`, `Using cached
/// %s`). Markdown's bold around a name (`Downloading **onnxruntime**-1.15.0-…`, danielgatis/rembg#461) is taken
/// off with the text's other bold (`clean::lines`).
fn read_pip_log(lines: &[String], facts: &mut Facts) {
    if facts.complete_package_list {
        // A package list says what is installed; the log says what an install did before it.
        return;
    }
    let mut first = None;
    let mut seen = |i: usize| {
        first.get_or_insert(i);
    };
    let short = |l: &&String| l.len() <= MAX_LOG_LINE;
    for (i, line) in lines.iter().enumerate().rev().filter(|(_, l)| short(l)) {
        let Some(items) = line.trim().strip_prefix("Successfully installed ") else { continue };
        for item in items.split_whitespace() {
            if let Some((name, version)) = name_dash_version(item)
                && add(facts, name, version, None, PIP_LOG)
            {
                seen(i);
            }
        }
    }
    for (i, line) in lines.iter().enumerate().filter(|(_, l)| short(l)) {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("Requirement already satisfied: ") {
            let name =
                rest.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))).next().unwrap_or("");
            let version = rest.rsplit_once('(').map(|(_, v)| v.trim_end_matches(')').trim());
            if let Some(version) = version.filter(|v| v.starts_with(|c: char| c.is_ascii_digit()) && !v.contains(' '))
                && !name.is_empty()
                && add(facts, name, version, None, PIP_LOG)
            {
                seen(i);
            }
            continue;
        }
        let Some(rest) = line.strip_prefix("Downloading ").or_else(|| line.strip_prefix("Using cached ")) else {
            continue;
        };
        if let Some((name, version)) = wheel_file(rest.split_whitespace().next().unwrap_or(""))
            && add(facts, &name, &version, None, PIP_LOG)
        {
            seen(i);
        }
    }
    if let Some(i) = first {
        facts.saw(i, PIP_LOG);
    }
}

/// The source name of [`read_pip_rows`]' packages.
const PIP_ROWS: &str = "pip list rows";

/// The longest line a `pip list` row is read from.
const MAX_ROW: usize = 200;

/// `pip list` rows without their header (`pip list | grep paddle`, a few rows quoted from a listing): a package
/// name, at least two spaces (pip pads its name column), and a version that starts with a digit, nothing else on
/// the line; or such a row with one space where the line before or after is one too. Only the packages gpu-doctor
/// reads ([`add`]) are kept, and the listing is not taken as complete. Real rows: PaddlePaddle/PaddleClas#3170
/// (`paddlepaddle         2.5.2` beside `paddlepaddle-gpu     2.5.2.post112`).
fn read_pip_rows<'a>(lines: &'a [String], facts: &mut Facts) {
    if facts.complete_package_list {
        // A whole listing (its header read) says what is installed, these rows among it.
        return;
    }
    let row = |line: &'a str| -> Option<(&'a str, &'a str, bool)> {
        if line.len() > MAX_ROW {
            return None;
        }
        let line = line.trim();
        let (name, rest) = line.split_once(' ')?;
        let version = rest.trim_start();
        // Two spaces or more between them: the first split off, at least one more before the version.
        let wide = rest.len() - version.len() >= 1;
        let name_ok = name.starts_with(|c: char| c.is_ascii_alphabetic()) && package_name(name);
        let version_ok = version.starts_with(|c: char| c.is_ascii_digit())
            && !version.contains(char::is_whitespace)
            && version.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-' | '_' | '!'));
        (name_ok && version_ok).then_some((name, version, wide))
    };
    let rows: Vec<Option<(&str, &str, bool)>> = lines.iter().map(|l| row(l)).collect();
    for (i, r) in rows.iter().enumerate() {
        let Some((name, version, wide)) = r else { continue };
        let neighbour = (i > 0 && rows[i - 1].is_some()) || rows.get(i + 1).is_some_and(Option::is_some);
        if (*wide || neighbour) && add(facts, name, version, None, PIP_ROWS) {
            facts.saw(i, PIP_ROWS);
        }
    }
}

/// A PyTorch package and its version with a build tag, as [`read_in_words`] takes them.
fn words_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    #[allow(clippy::unwrap_used)] // a literal pattern, exercised by every test
    RE.get_or_init(|| {
        Regex::new(
            r"(?i-u)\b(torch|pytorch|torchvision|torchaudio)[ =:-]{1,3}v?(\d+\.\d+(?:\.\d+)?(?:\.dev\d+)?\+(?:cu\d{2,3}|cpu|rocm\d+(?:\.\d+)*))\b",
        )
        .unwrap()
    })
}

/// A PyTorch package named with its whole version in a sentence or a list item: `the compiled product can
/// be used with torch 2.4.1+cu121` (nunchux-ai/nunchaku#15), `` - `torch 2.10.0+cu128` ``. Only a version
/// with PyTorch's local tag of a build (`+cu121`, `+cpu`, `+rocm6.2`) is taken, which no other package's
/// version carries, and only where the text names one version of that package: two are a comparison, not
/// what is installed, and a package a list gave is the list's. Install commands and wheel addresses are the
/// install commands' reader's, and the torch xFormers says it was built for is not the installed one.
fn read_in_words(lines: &[String], facts: &mut Facts) {
    const WORDS: &str = "a package version in words";
    let mut found: Vec<(usize, String, String)> = Vec::new();
    // A build tag starts `+cu`, `+cpu` or `+rocm`: the regex and the lowercase copy only for a line with one.
    static CUDA_TAG: super::Needle = super::Needle::new("+c");
    static ROCM_TAG: super::Needle = super::Needle::new("+r");
    for (i, line) in lines.iter().enumerate() {
        if !(CUDA_TAG.in_line(line) || ROCM_TAG.in_line(line)) {
            continue;
        }
        let lower = line.to_ascii_lowercase();
        if lower.contains("install") || lower.contains("http") || lower.contains(".whl") {
            continue;
        }
        for c in words_re().captures_iter(line) {
            let (Some(name), Some(version)) = (c.get(1), c.get(2)) else { continue };
            // xFormers' `built for: PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.1.2+cpu)` names the torch
            // it was built for (xformers/_cpp_lib.py), not the one installed.
            if line[version.end()..].trim_start().to_ascii_lowercase().starts_with("with cuda") {
                continue;
            }
            let name = name.as_str().to_ascii_lowercase().replace("pytorch", "torch");
            if !found.iter().any(|(_, n, v)| *n == name && v == version.as_str()) {
                found.push((i, name, version.as_str().to_owned()));
            }
        }
    }
    for (i, name, version) in &found {
        // A list or another reader gave it: theirs stands.
        if found.iter().filter(|(_, n, _)| n == name).count() == 1 && !facts.packages.iter().any(|p| p.name == *name) {
            facts.saw(*i, WORDS);
            add(facts, name, version, None, WORDS);
        }
    }
}

/// The version given to a package that a sentence says is installed without naming its version.
pub(super) const UNSTATED_VERSION: &str = "?";

/// A writer saying they installed a framework's CPU package and its GPU package side by side, in
/// one sentence: `I had installed both onnxruntime and onnxruntime-gpu`, `When I install both
/// `onnxruntime` and `onnxruntime-gpu` packages` (microsoft/onnxruntime#26996, fzehracetin,
/// 2026-01-13, the description's sentence verbatim), `I have both paddlepaddle and paddlepaddle-gpu
/// installed`. Only the pairs that install one module between them (`onnxruntime` and
/// `onnxruntime-gpu`, `paddlepaddle` and `paddlepaddle-gpu`), in either order, and only with the
/// writer as subject (`I`): advice (`if you install both …`), a question or a negation (`I have
/// not installed both …`) says nothing of this machine. The sentence gives no version.
fn both_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    #[allow(clippy::unwrap_used)] // a literal pattern, exercised by every test
    RE.get_or_init(|| {
        Regex::new(
            r"(?i-u)\bI(?:'ve|\s+have|\s+had|\s+also)?(?:\s+[a-z]+){0,2}?\s+(?:installed|install|have|had|got)\s+both\s+`?(onnxruntime|paddlepaddle)(-gpu)?`?\s+(?:packages?\s+)?(?:and|&)\s+`?(onnxruntime|paddlepaddle)(-gpu)?`?(?:\s+packages?)?(?:\s+installed)?",
        )
        .unwrap()
    })
}

/// The most characters of one line [`read_both_installed`] reads: sentences are shorter.
const MAX_SENTENCE_LINE: usize = 4096;

fn read_both_installed(lines: &[String], facts: &mut Facts) {
    const BOTH: &str = "both packages named in words";
    static NEEDLE: super::Needle = super::Needle::new("both");
    if facts.complete_package_list {
        // A package list says what is installed.
        return;
    }
    for (i, line) in lines.iter().enumerate() {
        if !NEEDLE.in_line(line) {
            continue;
        }
        let line = line.get(..line.floor_char_boundary(MAX_SENTENCE_LINE)).unwrap_or("");
        for c in both_re().captures_iter(line) {
            let said = c.get(0).map_or("", |m| m.as_str()).to_ascii_lowercase();
            let negated = said.split_whitespace().any(|w| matches!(w, "not" | "never" | "no") || w.ends_with("n't"));
            let (Some(a), Some(b)) = (c.get(1), c.get(3)) else { continue };
            let (a, b) = (a.as_str().to_ascii_lowercase(), b.as_str().to_ascii_lowercase());
            // One family, one name with `-gpu` and one without.
            if negated || a != b || c.get(2).is_some() == c.get(4).is_some() {
                continue;
            }
            facts.saw(i, BOTH);
            for name in [a.clone(), format!("{a}-gpu")] {
                if !facts.packages.iter().any(|p| p.name == name) {
                    add(facts, &name, UNSTATED_VERSION, None, BOTH);
                }
            }
        }
    }
}

/// uv's summary after `uv pip install` / `uv sync` / `uv add`: a line per package changed, ` + name==version`
/// installed, ` - name==version` removed, ` ~ name==version` reinstalled (astral-sh/uv
/// crates/uv/src/commands/pip/loggers.rs, `DefaultInstallLogger::on_complete`: `" {} {}{}"` with the sign, the
/// name and its long specifier, `==version` or ` @ url`). What is installed after it is the `+` and `~` lines;
/// the list holds only what changed, so it is not the environment's whole list.
fn read_uv_changes(lines: &[String], facts: &mut Facts) {
    const UV: &str = "uv install summary";
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let Some((sign, rest)) = t.split_at_checked(2).filter(|(s, _)| matches!(*s, "+ " | "- " | "~ ")) else {
            continue;
        };
        // A uv line has exactly one space after its sign and a package name right after it.
        let Some((name, version)) =
            rest.starts_with(|c: char| c.is_ascii_alphanumeric()).then(|| freeze_line(rest)).flatten()
        else {
            continue;
        };
        facts.saw(i, UV);
        if sign != "- " {
            add(facts, &name, &version, None, UV);
        }
    }
}

/// `Package    Version` / `------- -------` and the rows under it.
fn read_pip_list(lines: &[String], facts: &mut Facts) {
    let mut i = 0;
    while i + 1 < lines.len() {
        let mut header = lines[i].split_whitespace();
        let rule = lines[i + 1].trim();
        let is_header = header.next() == Some("Package") && header.next() == Some("Version");
        if !(is_header && rule.starts_with('-') && rule.chars().all(|c| c == '-' || c == ' ')) {
            i += 1;
            continue;
        }
        facts.saw(i, "pip list");
        facts.complete_package_list = true;
        i += 2;
        while let Some(row) = lines.get(i) {
            let mut words = row.split_whitespace();
            match (words.next(), words.next()) {
                (Some(name), Some(version)) if version.starts_with(|c: char| c.is_ascii_digit()) => {
                    add(facts, name, version, None, "pip list");
                }
                _ => break,
            }
            i += 1;
        }
    }
}

/// `pip show torch`: a `Name: torch` line with `Version: 1.11.0+cu113` right under it. One package,
/// not a whole list.
fn read_pip_show(lines: &[String], facts: &mut Facts) {
    for (i, pair) in lines.windows(2).enumerate() {
        let name = pair[0].trim().strip_prefix("Name: ").map(str::trim);
        let version = pair[1].trim().strip_prefix("Version: ").map(str::trim);
        let (Some(name), Some(version)) = (name, version) else { continue };
        let one_word = |w: &str| !w.is_empty() && !w.contains(char::is_whitespace);
        if one_word(name) && one_word(version) && version.starts_with(|c: char| c.is_ascii_digit()) {
            facts.saw(i, "pip show");
            add(facts, name, version, None, "pip show");
            location(lines.get(i + 2..).unwrap_or_default(), facts);
        }
    }
}

/// The most site-packages folders kept from `pip show` blocks.
const MAX_LOCATIONS: usize = 8;

/// The `Location:` of a `pip show` block (the lines after its `Version:`, up to the next block): the
/// site-packages folder the package is installed in. pip's show command prints it with the other
/// fields (pypa/pip:src/pip/_internal/commands/show.py, print_results: `write_output("Location: %s",
/// dist.location)`).
fn location(block: &[String], facts: &mut Facts) {
    for line in block.iter().take(20) {
        let line = line.trim();
        if line.starts_with("Name: ") || line.starts_with("---") {
            return;
        }
        if let Some(dir) = line.strip_prefix("Location: ").map(str::trim) {
            let plausible =
                !dir.is_empty() && dir.len() < 4096 && (dir.starts_with('/') || dir.get(1..3) == Some(":\\"));
            if plausible && !facts.site_packages.iter().any(|d| d == dir) && facts.site_packages.len() < MAX_LOCATIONS {
                facts.site_packages.push(dir.to_owned());
            }
            return;
        }
    }
}

/// `conda list` rows without their header (`conda list | grep torch`, a few rows quoted), and the
/// `conda list --export` / `conda env export` spelling `name=version=build` (`- ` before it in the
/// YAML): a row counts only when its build string has conda's shape (`py3.9_cpu_0`,
/// `cuda120_py311h…_300`, `ha6f8bbd_10`, `pypi_0`), so prose with three words is not a package.
/// Real rows: bioimage-io/core-bioimage-io-python#307 (`pytorch 1.12.1 py3.9_cpu_0 pytorch`),
/// pytorch/pytorch#69202 (`pytorch=1.9.0=py3.8_cpu_0`).
fn read_conda_rows(lines: &[String], facts: &mut Facts) {
    for (i, line) in lines.iter().enumerate() {
        let line = line.trim();
        let row = match export_line(line) {
            Some(row) => Some(row),
            None => conda_line(line).filter(|(_, _, build)| build.as_deref().is_some_and(|b| row_build(b, line))),
        };
        let Some((name, version, Some(build))) = row else {
            if let Some((name, version)) = env_file_spec(line)
                && add(facts, name, version, None, ENV_FILE)
            {
                facts.saw(i, ENV_FILE);
            }
            continue;
        };
        if !row_build(&build, line) {
            continue;
        }
        if add(facts, &name, &version, Some(&build), "conda list") {
            facts.saw(i, "conda list");
        }
    }
}

/// A dependency of a conda environment file (`environment.yml`): `- cudatoolkit=11.3` under
/// `dependencies:`, a package and its version as conda's match spec `name=version` writes it
/// (conda's docs, "Creating an environment file manually"); conda installs it as asked.
fn env_file_spec(line: &str) -> Option<(&str, &str)> {
    let (name, version) = line.strip_prefix("- ")?.trim().split_once('=')?;
    let ok = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && version.starts_with(|c: char| c.is_ascii_digit())
        && version.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '*'));
    ok.then_some((name, version.trim_end_matches(".*")))
}

/// `name=version=build`, with `- ` before it in `conda env export`'s YAML.
fn export_line(line: &str) -> Option<(String, String, Option<String>)> {
    let line = line.strip_prefix("- ").unwrap_or(line).trim();
    let mut parts = line.split('=');
    let (name, version, build) = (parts.next()?, parts.next()?, parts.next()?);
    let ok = parts.next().is_none()
        && !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && version.starts_with(|c: char| c.is_ascii_digit())
        && !version.contains(char::is_whitespace)
        && !build.is_empty()
        && !build.contains(char::is_whitespace);
    ok.then(|| (name.to_owned(), version.to_owned(), Some(build.to_owned())))
}

/// A build string of a `conda list` row: conda's shape ([`conda_build_shape`]), or a bare build number where the row
/// has its channel column too (NVIDIA's channel builds its packages as `0`, `1`: `cuda-nvcc  12.4.131  0  nvidia`,
/// dattalab/keypoint-moseq#161).
fn row_build(build: &str, line: &str) -> bool {
    let bare = !build.is_empty() && build.len() <= 3 && build.bytes().all(|b| b.is_ascii_digit());
    conda_build_shape(build)
        || (bare
            && line.split_whitespace().count() == 4
            && line.split_whitespace().last().is_some_and(|c| {
                c.chars().all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || matches!(ch, '-' | '_'))
                    && c.starts_with(|ch: char| ch.is_ascii_lowercase())
            }))
}

/// Whether `build` has the shape of a conda build string: words of letters and digits joined by
/// `_` (at least one), ending in the build number (`py3.9_cpu_0`, `cuda120_py311h2b5a6c6_300`,
/// `ha6f8bbd_10`, `pypi_0`).
fn conda_build_shape(build: &str) -> bool {
    let Some((head, number)) = build.rsplit_once('_') else { return false };
    !head.is_empty()
        && !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
        && head.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.'))
}

/// The most characters a package plan row is read from: conda's rows are short.
const MAX_PLAN_ROW: usize = 512;

/// conda's package plan, printed by `conda install` / `conda create` / `conda env create` before it
/// changes the environment, in its row shapes:
/// - the download table, `    %-27s|%17s` of `name-version` and the build string, then the size and
///   the channel (conda/conda:conda/plan.py@87f488f487c4752b192747eace699a4f6809f052, `print_dists`
///   and `display_actions` with `FETCH`: `pytorch-2.0.0.dev20221216  |  py3.8_cpu_0  84.2 MB
///   pytorch-nightly`);
/// - the `NEW packages will be INSTALLED` / `UPDATED` / `DOWNGRADED` / `SUPERSEDED` blocks, a name
///   then the record `channel/subdir::name-version-build` (conda/conda:conda/core/link.py@f0677d5b0a25ebd0bb3e3b1335fcd0577cdcd61a,
///   the change report's blocks), or `version-build` alone where the channel did not change; after
///   ` --> ` the record that is installed;
/// - conda before 4.6 (plan.py `display_actions`): `name:` then `version-build` and the channel,
///   `name:  old --> new` for an update.
///
/// What the plan installs is what the environment gets, so its rows are read as the environment's
/// packages. A CI log's timestamp before a row (`2022-12-16T16:39:38.3607708Z`) is skipped.
fn read_conda_plan(lines: &[String], facts: &mut Facts) {
    for (i, line) in lines.iter().enumerate() {
        if line.len() > MAX_PLAN_ROW {
            continue;
        }
        let Some((name, version, build)) = plan_row(line) else { continue };
        let shaped = conda_build_shape(&build) || build.chars().all(|c| c.is_ascii_alphanumeric());
        if shaped && add(facts, &name, &version, Some(&build), CONDA_PLAN) {
            facts.saw(i, CONDA_PLAN);
        }
    }
}

/// The package one package plan row installs: name, version, build string.
fn plan_row(line: &str) -> Option<(String, String, String)> {
    let mut line = line.trim();
    if let Some((first, rest)) = line.split_once(char::is_whitespace)
        && is_log_timestamp(first)
    {
        line = rest.trim();
    }
    if let Some((left, right)) = line.split_once('|') {
        // The download table: `name-version | build  size  channel`.
        let (name, version) = left.trim().rsplit_once('-')?;
        let build = right.split_whitespace().next()?;
        return plan_parts(name, version, build);
    }
    // A transaction row: `name  channel/subdir::name-version-build`, or an update
    // `name  old-record --> new-record`: the record after the arrow is what gets installed.
    let (head, rest) = line.split_once(char::is_whitespace)?;
    let row_name = head.trim_end_matches(':');
    let arrow = rest.contains(" --> ");
    let installed = if arrow { rest.rsplit(" --> ").next()? } else { rest };
    if let Some(record) = installed.split_whitespace().find(|w| w.contains("::")) {
        let (_, dist) = record.rsplit_once("::")?;
        let mut parts = dist.rsplitn(3, '-');
        let (build, version, name) = (parts.next()?, parts.next()?, parts.next()?);
        return (row_name == name).then(|| plan_parts(name, version, build)).flatten();
    }
    // `name:  version-build  channel` (conda before 4.6), or an update whose channel stayed:
    // `name  old-version-build --> new-version-build`. Only a conda-shaped build string
    // (`py3.7_cpu_0`) counts here, so a `Label: 1.2-x` line is not a package.
    if !(arrow || head.ends_with(':')) {
        return None;
    }
    let (version, build) = installed.split_whitespace().next()?.rsplit_once('-')?;
    if !conda_build_shape(build) || row_name.bytes().any(|b| b.is_ascii_uppercase()) {
        return None;
    }
    plan_parts(row_name, version, build)
}

fn plan_parts(name: &str, version: &str, build: &str) -> Option<(String, String, String)> {
    let ok_name = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    let ok_version = version.starts_with(|c: char| c.is_ascii_digit())
        && version.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '!'));
    let ok_build = !build.is_empty() && build.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_'));
    (ok_name && ok_version && ok_build).then(|| (name.to_owned(), version.to_owned(), build.to_owned()))
}

/// An ISO 8601 UTC timestamp as CI logs prefix each line with (`2022-12-16T16:39:38.3607708Z`).
fn is_log_timestamp(word: &str) -> bool {
    let b = word.as_bytes();
    b.len() >= 20
        && word.ends_with('Z')
        && b.get(4) == Some(&b'-')
        && b.get(10) == Some(&b'T')
        && b.iter().take(4).all(u8::is_ascii_digit)
}

/// `# packages in environment at …:` / `# Name  Version  Build  Channel` and the rows under it;
/// true when the text has such a header.
fn read_conda_list(lines: &[String], facts: &mut Facts) -> bool {
    let mut seen = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        let header = line.starts_with("# packages in environment at")
            || (line.starts_with('#') && line.contains("Name") && line.contains("Version") && line.contains("Build"));
        if !header {
            i += 1;
            continue;
        }
        facts.saw(i, "conda list");
        facts.complete_package_list = true;
        seen = true;
        i += 1;
        while let Some(row) = lines.get(i) {
            let row = row.trim();
            if row.starts_with('#') {
                i += 1;
                continue;
            }
            let Some((name, version, build)) = conda_line(row) else { break };
            add(facts, &name, &version, build.as_deref(), "conda list");
            i += 1;
        }
    }
    seen
}

/// The most cuDNN packages read from one list.
const MAX_CUDNN_PACKAGES: usize = 16;

/// cuDNN's distribution packages as `dpkg -l`, `apt list --installed` and `rpm -qa` print them:
/// `ii  libcudnn8  8.9.3.28-1+cuda12.1  amd64  cuDNN runtime libraries`,
/// `libcudnn8/unknown,now 8.9.3.28-1+cuda12.1 amd64 [installed]`,
/// `libcudnn9-cuda-12-9.1.0.70-1.x86_64`. NVIDIA's repositories name cuDNN 8 packages
/// `libcudnn8=<version>-1+cuda<X.Y>` and cuDNN 9 ones `libcudnn9-cuda-<X>` (cuDNN installation
/// guide, "Package Manager Installation"): the CUDA major they were built for is in the version or the
/// name. Each into the snapshot's cuDNN copies.
fn read_cudnn_packages(lines: &[String], facts: &mut Facts) {
    let mut found = 0;
    for (i, line) in lines.iter().enumerate() {
        if found >= MAX_CUDNN_PACKAGES {
            return;
        }
        let Some((name, version, cuda_major, format)) = cudnn_package(line) else { continue };
        if facts.cudnn.iter().any(|c| c.location.starts_with(&format!("{name} {version}"))) {
            continue;
        }
        let parsed: Option<gpu_doctor_model::CudnnVersion> = version.split('-').next().and_then(|v| v.parse().ok());
        facts.saw(i, format);
        facts.cudnn.push(gpu_doctor_model::CudnnCopy {
            location: format!("{name} {version} ({format})"),
            kind: gpu_doctor_model::CudnnKind::SystemPackage,
            version: parsed,
            major: parsed.map(|v| v.major).or_else(|| name.strip_prefix("libcudnn")?.split('-').next()?.parse().ok()),
            version_source: parsed.map(|_| gpu_doctor_model::CudnnVersionSource::PackageManager),
            env: None,
            cuda_major,
        });
        found += 1;
    }
}

/// One cuDNN package line: its name, its version (with the package revision and CUDA suffix), the CUDA
/// major it was built for, and the list's format.
fn cudnn_package(line: &str) -> Option<(String, String, Option<u32>, &'static str)> {
    if line.len() > 400 || !line.contains("cudnn") {
        return None;
    }
    let t = line.trim();
    let words: Vec<&str> = t.split_whitespace().collect();
    let (name, version, format) = if words.first() == Some(&"ii") && words.len() >= 3 {
        (words[1].split(':').next()?, words[2], "dpkg -l")
    } else if let Some((name, _)) = words.first().and_then(|w| w.split_once('/')) {
        if !t.contains("[installed") {
            return None;
        }
        (name, *words.get(1)?, "apt list")
    } else {
        // rpm -qa: name-version-release.arch, the name ending before the first `-<digit>` part.
        let w = *words.first()?;
        let arch_cut = w.rsplit_once('.').filter(|(_, a)| ["x86_64", "aarch64", "ppc64le"].contains(a))?.0;
        let at = arch_cut.match_indices('-').map(|(i, _)| i).find(|&i| {
            arch_cut[i + 1..].starts_with(|c: char| c.is_ascii_digit()) && !arch_cut[..i].ends_with("-cuda")
        })?;
        (&arch_cut[..at], &arch_cut[at + 1..], "rpm -qa")
    };
    // The runtime library's package; `-dev`, `-devel` and `-samples` ones sit beside it.
    let is_cudnn = name.strip_prefix("libcudnn").is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        && !["-dev", "-samples"].iter().any(|extra| name.contains(extra));
    if !is_cudnn || !version.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    // `+cuda12.1` (dpkg/apt) or `.cuda12.1` (rpm) in the version; `-cuda-12` in the name.
    let from_version = version.split_once("cuda").and_then(|(_, v)| v.split('.').next()?.parse().ok());
    let from_name = name.split_once("-cuda-").and_then(|(_, v)| v.split('-').next()?.parse().ok());
    Some((name.to_owned(), version.to_owned(), from_version.or(from_name), format))
}
