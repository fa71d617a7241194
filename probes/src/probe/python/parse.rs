//! Text parsers for the files the fast tier reads: wheel metadata, `torch/version.py`,
//! TensorFlow's `build_info.py`, `pyvenv.cfg`, conda's lists. None of them panics on any input.

use std::collections::BTreeMap;

/// A right-hand side of a simple Python assignment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PyValue {
    /// A quoted string.
    Str(String),
    /// `None`.
    None,
    /// `True` or `False`.
    Bool(bool),
    /// Anything else, as written (numbers, lists, calls).
    Other(String),
}

impl PyValue {
    /// The string, when the value is one.
    pub(super) fn as_str(&self) -> Option<&str> {
        match self {
            Self::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, when the value is one.
    pub(super) fn as_bool(&self) -> Option<bool> {
        match self {
            Self::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

/// Top-level `name = value` and `name: Type = value` lines of a Python file.
pub(super) fn parse_assignments(text: &str) -> BTreeMap<String, PyValue> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        if line.starts_with(char::is_whitespace) || line.starts_with('#') {
            continue;
        }
        let Some((lhs, rhs)) = line.split_once('=') else { continue };
        if rhs.starts_with('=') || lhs.ends_with(['!', '<', '>']) {
            continue;
        }
        let ident = lhs.split(':').next().unwrap_or_default().trim();
        if ident.is_empty() || !ident.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        out.insert(ident.to_owned(), parse_value(rhs));
    }
    out
}

/// One value: a quoted string, `None`, `True`, `False`, or the raw text.
fn parse_value(text: &str) -> PyValue {
    let t = text.trim();
    let t = match t.find(" #") {
        Some(i) if !t.starts_with(['\'', '"']) => t[..i].trim(),
        _ => t,
    };
    match t {
        "None" => return PyValue::None,
        "True" => return PyValue::Bool(true),
        "False" => return PyValue::Bool(false),
        _ => {}
    }
    let mut chars = t.chars();
    if let Some(q @ ('\'' | '"')) = chars.next() {
        let body: String = chars.take_while(|&c| c != q).collect();
        return PyValue::Str(body);
    }
    PyValue::Other(t.to_owned())
}

/// What `torch/version.py` says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct TorchVersionPy {
    /// `__version__`.
    pub version: Option<String>,
    /// `cuda`: `Some(None)` when written as `None` (a CPU or ROCm build).
    pub cuda: Option<Option<String>>,
    /// `hip`: the ROCm version of a ROCm build.
    pub hip: Option<Option<String>>,
    /// `git_version`.
    pub git_version: Option<String>,
}

/// Parses `torch/version.py`; `None` when it names neither a version nor a CUDA level.
pub(super) fn parse_torch_version_py(text: &str) -> Option<TorchVersionPy> {
    let a = parse_assignments(text);
    let opt = |k: &str| {
        a.get(k).and_then(|v| match v {
            PyValue::Str(s) => Some(Some(s.clone())),
            PyValue::None => Some(None),
            _ => None,
        })
    };
    let out = TorchVersionPy {
        version: a.get("__version__").and_then(PyValue::as_str).map(str::to_owned),
        cuda: opt("cuda"),
        hip: opt("hip"),
        git_version: a.get("git_version").and_then(PyValue::as_str).map(str::to_owned),
    };
    (out.version.is_some() || out.cuda.is_some()).then_some(out)
}

/// The `build_info` dict of TensorFlow's `build_info.py`, parsed leniently; older releases wrote
/// module-level assignments (`cuda_version_number = '10.1'`), which are mapped to the dict's keys.
/// `None` when nothing was found.
pub(super) fn parse_tf_build_info(text: &str) -> Option<BTreeMap<String, PyValue>> {
    let mut out = BTreeMap::new();
    if let Some(start) = text.find("build_info")
        && let Some(open) = text[start..].find('{')
    {
        let body = &text[start + open + 1..];
        for item in split_top_level(body) {
            let Some((k, v)) = split_key(item) else { continue };
            if let PyValue::Str(key) = parse_value(k) {
                out.insert(key, parse_value(v));
            }
        }
    }
    if out.is_empty() {
        let a = parse_assignments(text);
        for (old, new) in [
            ("cuda_version_number", "cuda_version"),
            ("cudnn_version_number", "cudnn_version"),
            ("is_cuda_build", "is_cuda_build"),
            ("is_rocm_build", "is_rocm_build"),
        ] {
            if let Some(v) = a.get(old) {
                out.insert(new.to_owned(), v.clone());
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Splits a dict body at its top-level commas, stopping at the closing brace.
fn split_top_level(body: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut quote, mut start) = (0usize, None::<char>, 0usize);
    for (i, c) in body.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '[' | '(' | '{') => depth += 1,
            (None, ']' | ')' | '}') if depth > 0 => depth -= 1,
            (None, '}') => {
                items.push(&body[start..i]);
                return items;
            }
            (None, ',') if depth == 0 => {
                items.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&body[start..]);
    items
}

/// Splits `'key': value` at the colon after the quoted key.
fn split_key(item: &str) -> Option<(&str, &str)> {
    let t = item.trim();
    let q = t.chars().next().filter(|c| matches!(c, '\'' | '"'))?;
    let close = t[1..].find(q)? + 1;
    let rest = t[close + 1..].trim_start().strip_prefix(':')?;
    Some((&t[..=close], rest))
}

/// What `pyvenv.cfg` says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct PyvenvCfg {
    /// The base interpreter's folder (`home`).
    pub home: Option<String>,
    /// `version` or `version_info`, cut to major.minor.micro.
    pub version: Option<String>,
    /// `include-system-site-packages`.
    pub include_system_site_packages: bool,
}

/// Parses `pyvenv.cfg` (`key = value` lines).
pub(super) fn parse_pyvenv_cfg(text: &str) -> PyvenvCfg {
    let mut out = PyvenvCfg::default();
    for line in text.lines() {
        let Some((k, v)) = line.split_once('=') else { continue };
        let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
        match k.as_str() {
            "home" => out.home = Some(v.to_owned()),
            "version" | "version_info" if out.version.is_none() => out.version = python_version_prefix(v),
            "include-system-site-packages" => out.include_system_site_packages = v.eq_ignore_ascii_case("true"),
            _ => {}
        }
    }
    out
}

/// `3.11.4` from `3.11.4`, `3.11.4.final.0` or `3.12.0rc1`; `None` without a major.minor.
pub(crate) fn python_version_prefix(text: &str) -> Option<String> {
    let parts: Vec<&str> = text
        .trim()
        .split('.')
        .take(3)
        .map(|p| &p[..p.find(|c: char| !c.is_ascii_digit()).unwrap_or(p.len())])
        .take_while(|p| !p.is_empty())
        .collect();
    (parts.len() >= 2).then(|| parts.join("."))
}

/// `3.11.9` from a conda-meta file name such as `python-3.11.9-h955ad1f_0.json`.
pub(super) fn conda_meta_python(file_name: &str) -> Option<String> {
    let rest = file_name.strip_prefix("python-")?.strip_suffix(".json")?;
    let version = rest.split('-').next()?;
    python_version_prefix(version).filter(|_| version.starts_with(|c: char| c.is_ascii_digit()))
}

/// `3.11` from `python3.11`, `python3.11.exe`, `python3.13t` or a Windows `Python311` folder.
pub(super) fn version_from_name(name: &str) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    let rest = lower.strip_prefix("python")?;
    let rest = rest.strip_suffix(".exe").unwrap_or(rest);
    let rest = rest.strip_suffix('t').unwrap_or(rest);
    if let Some((major, minor)) = rest.split_once('.') {
        let ok = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
        return (ok(major) && ok(minor)).then(|| format!("{major}.{minor}"));
    }
    // Windows folders: Python311 → 3.11
    let digits = rest.chars().all(|c| c.is_ascii_digit()) && rest.len() >= 2;
    digits.then(|| format!("{}.{}", &rest[..1], &rest[1..]))
}

/// The prefixes listed in `~/.conda/environments.txt`.
pub(super) fn parse_environments_txt(text: &str) -> Vec<String> {
    text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(str::to_owned).collect()
}

/// The prefixes in `conda env list --json` output.
pub(super) fn parse_conda_env_list(text: &str) -> Result<Vec<String>, String> {
    #[derive(serde::Deserialize)]
    struct EnvList {
        envs: Vec<String>,
    }
    serde_json::from_str::<EnvList>(text.trim()).map(|l| l.envs).map_err(|e| e.to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
