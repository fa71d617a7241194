//! What one environment looks like on disk: its kind, interpreter, Python version and
//! site-packages folders, all read from files without starting Python.

use std::path::{Path, PathBuf};

use super::parse::{conda_meta_python, parse_pyvenv_cfg, python_version_prefix, version_from_name};
use crate::host::paths::real_path;
use crate::host::{Host, home_dir, is_dir, is_file};
use gpu_doctor_model::EnvKind;

/// One environment found on disk.
#[derive(Debug, Clone)]
pub(super) struct Layout {
    pub kind: EnvKind,
    pub name: String,
    pub prefix: PathBuf,
    pub interpreter: Option<PathBuf>,
    pub python_version: Option<String>,
    pub site_packages: Vec<PathBuf>,
    pub include_system_site_packages: bool,
    pub found_by: Vec<String>,
    /// What makes two findings the same environment: the resolved prefix, or for a system
    /// interpreter the resolved interpreter (one prefix such as `/usr` can hold several).
    pub key: PathBuf,
}

/// Reads environment layouts through a host.
pub(super) struct Inspector<'a> {
    pub host: &'a dyn Host,
    pub windows: bool,
    /// Resolved `versions` folders of pyenv.
    pub pyenv_versions: Vec<PathBuf>,
}

impl Inspector<'_> {
    fn is_dir(&self, p: &Path) -> bool {
        is_dir(self.host, p)
    }

    fn is_file(&self, p: &Path) -> bool {
        is_file(self.host, p)
    }

    /// The prefix an interpreter path implies: `<prefix>/bin/python3`, or on Windows
    /// `<prefix>/python.exe` and `<venv>/Scripts/python.exe`.
    fn prefix_of(&self, interpreter: &Path) -> Option<PathBuf> {
        let dir = interpreter.parent()?;
        let in_scripts = dir.file_name().is_some_and(|n| n.eq_ignore_ascii_case("scripts"));
        if self.windows && !in_scripts { Some(dir.to_path_buf()) } else { dir.parent().map(Path::to_path_buf) }
    }

    /// Classifies an interpreter. A venv's `bin/python` links to its base interpreter, so the
    /// literal path is checked for a venv or conda prefix before links are followed.
    pub fn inspect_interpreter(&self, path: &Path, how: &str) -> Result<Layout, String> {
        if !self.is_file(path) {
            return Err(format!("{} is not a file", path.display()));
        }
        if !python_like_name(path) && !python_like_name(&real_path(self.host, path)) {
            return Err(format!(
                "{} is not a Python interpreter (its name has neither python nor pypy in it)",
                path.display()
            ));
        }
        let literal = self.prefix_of(path).ok_or_else(|| format!("{} has no prefix folder", path.display()))?;
        if self.is_file(&literal.join("pyvenv.cfg")) || self.is_dir(&literal.join("conda-meta")) {
            return self.inspect_prefix(&literal, Some(path), how);
        }
        let resolved = real_path(self.host, path);
        let prefix = self.prefix_of(&resolved).ok_or_else(|| format!("{} has no prefix folder", resolved.display()))?;
        self.inspect_prefix(&prefix, Some(path), how)
    }

    /// Classifies a prefix folder, with the interpreter already known or to be found in it.
    pub fn inspect_prefix(&self, prefix: &Path, interpreter: Option<&Path>, how: &str) -> Result<Layout, String> {
        if !self.is_dir(prefix) {
            return Err(format!("{} is not a folder", prefix.display()));
        }
        let cfg = self.host.read_file(&prefix.join("pyvenv.cfg")).ok().map(|t| parse_pyvenv_cfg(&t));
        let conda = self.is_dir(&prefix.join("conda-meta"));
        let resolved_prefix = real_path(self.host, prefix);
        let pyenv = resolved_prefix.parent().is_some_and(|p| self.pyenv_versions.iter().any(|v| v == p));
        let kind = match (&cfg, conda, pyenv) {
            (Some(_), _, _) => EnvKind::Venv,
            (None, true, _) => EnvKind::Conda,
            (None, false, true) => EnvKind::Pyenv,
            _ => EnvKind::System,
        };
        let interpreter = interpreter.map(Path::to_path_buf).or_else(|| self.find_interpreter(prefix, kind));
        let resolved_interpreter = interpreter.as_deref().map(|i| real_path(self.host, i));
        let pyenv_version = (kind == EnvKind::Pyenv).then(|| python_version_prefix(&file_name(prefix))).flatten();
        let python_version = cfg
            .as_ref()
            .and_then(|c| c.version.clone())
            .or(pyenv_version)
            .or_else(|| conda.then(|| self.conda_python(prefix)).flatten())
            .or_else(|| resolved_interpreter.as_deref().and_then(file_version))
            .or_else(|| interpreter.as_deref().and_then(file_version))
            .or_else(|| self.lib_version(prefix));
        if interpreter.is_none() && (kind != EnvKind::Conda || python_version.is_none()) {
            return Err(format!("no Python interpreter in {}", prefix.display()));
        }
        let site_packages = self.site_packages(prefix, kind, python_version.as_deref());
        let name = match kind {
            EnvKind::Venv => format!("venv:{}", slashes(prefix)),
            EnvKind::Conda => self.conda_name(prefix),
            EnvKind::Pyenv => format!("pyenv:{}", file_name(prefix)),
            EnvKind::System | EnvKind::Unknown => {
                format!("system:{}", interpreter.as_deref().map(slashes).unwrap_or_else(|| slashes(prefix)))
            }
        };
        let key = match (kind, resolved_interpreter) {
            (EnvKind::System, Some(i)) => i,
            _ => resolved_prefix,
        };
        Ok(Layout {
            kind,
            name,
            prefix: prefix.to_path_buf(),
            interpreter,
            python_version,
            site_packages,
            include_system_site_packages: cfg.is_some_and(|c| c.include_system_site_packages),
            found_by: vec![how.to_owned()],
            key,
        })
    }

    fn find_interpreter(&self, prefix: &Path, kind: EnvKind) -> Option<PathBuf> {
        let candidates: Vec<PathBuf> = if self.windows {
            let (first, second) = if kind == EnvKind::Venv {
                ("Scripts/python.exe", "python.exe")
            } else {
                ("python.exe", "Scripts/python.exe")
            };
            vec![prefix.join(first), prefix.join(second)]
        } else {
            let bin = prefix.join("bin");
            let mut c = vec![bin.join("python3"), bin.join("python")];
            if let Ok(entries) = self.host.list_dir(&bin) {
                c.extend(entries.into_iter().filter(|e| is_python_name(&e.name, false)).map(|e| bin.join(e.name)));
            }
            c
        };
        candidates.into_iter().find(|c| self.is_file(c))
    }

    fn conda_python(&self, prefix: &Path) -> Option<String> {
        let entries = self.host.list_dir(&prefix.join("conda-meta")).ok()?;
        entries.iter().find_map(|e| conda_meta_python(&e.name))
    }

    /// The version in the one `lib/python3.X` folder of a prefix.
    fn lib_version(&self, prefix: &Path) -> Option<String> {
        if self.windows {
            return version_from_name(&file_name(prefix));
        }
        let entries = self.host.list_dir(&prefix.join("lib")).ok()?;
        let versions: Vec<String> = entries.iter().filter_map(|e| version_from_name(&e.name)).collect();
        match versions.as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        }
    }

    fn site_packages(&self, prefix: &Path, kind: EnvKind, version: Option<&str>) -> Vec<PathBuf> {
        let mut candidates = Vec::new();
        if self.windows {
            candidates.push(prefix.join("Lib").join("site-packages"));
        } else {
            let mm = version.map(major_minor);
            let lib = prefix.join("lib");
            let mut libdirs: Vec<String> = self
                .host
                .list_dir(&lib)
                .map(|es| {
                    es.into_iter()
                        .filter(|e| version_from_name(&e.name).is_some_and(|v| mm.as_deref().is_none_or(|m| m == v)))
                        .map(|e| e.name)
                        .collect()
                })
                .unwrap_or_default();
            if let Some(m) = &mm
                && libdirs.is_empty()
            {
                libdirs.push(format!("python{m}"));
            }
            for d in &libdirs {
                candidates.push(lib.join(d).join("site-packages"));
                if kind == EnvKind::System {
                    candidates.push(lib.join(d).join("dist-packages"));
                }
            }
            if kind == EnvKind::System {
                candidates.push(lib.join("python3").join("dist-packages"));
                if prefix == Path::new("/usr") {
                    for d in &libdirs {
                        candidates.push(Path::new("/usr/local/lib").join(d).join("dist-packages"));
                        candidates.push(Path::new("/usr/local/lib").join(d).join("site-packages"));
                    }
                }
                if let (Some(home), Some(m)) = (home_dir(self.host), &mm) {
                    candidates.push(home.join(".local/lib").join(format!("python{m}")).join("site-packages"));
                }
            }
        }
        let mut out: Vec<PathBuf> = Vec::new();
        for c in candidates {
            if self.is_dir(&c) && !out.contains(&c) {
                out.push(c);
            }
        }
        out
    }

    fn conda_name(&self, prefix: &Path) -> String {
        let under_envs = prefix.parent().and_then(Path::file_name).is_some_and(|n| n == "envs");
        if under_envs {
            format!("conda:{}", file_name(prefix))
        } else if ["condabin", "envs", "pkgs"].iter().any(|d| self.is_dir(&prefix.join(d))) {
            "conda:base".to_owned()
        } else {
            format!("conda:{}", slashes(prefix))
        }
    }
}

/// True for `python`, `python3` and `python3.N` (on Windows `python.exe`, `python3.exe`).
pub(super) fn is_python_name(name: &str, windows: bool) -> bool {
    if windows {
        let lower = name.to_ascii_lowercase();
        return lower == "python.exe" || lower == "python3.exe";
    }
    name == "python"
        || name == "python3"
        || name.strip_prefix("python3.").is_some_and(|m| !m.is_empty() && m.chars().all(|c| c.is_ascii_digit()))
}

/// Whether a file's name could be an interpreter's, of any version or build: it has `python` or
/// `pypy` in it, in any case (`python3.13t`, `pythonw.exe`, `platform-python`, `pypy3`). Looser
/// than `is_python_name`, for paths the user named.
fn python_like_name(path: &Path) -> bool {
    let name = file_name(path).to_ascii_lowercase();
    name.contains("python") || name.contains("pypy")
}

/// Python's version in an interpreter's file name (`python3.11`).
fn file_version(path: &Path) -> Option<String> {
    version_from_name(&file_name(path))
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

fn slashes(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

/// `3.11` from `3.11.4`.
fn major_minor(version: &str) -> String {
    version.split('.').take(2).collect::<Vec<_>>().join(".")
}
