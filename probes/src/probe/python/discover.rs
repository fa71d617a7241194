//! Finding every Python environment, each once.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::layout::{Inspector, Layout, is_python_name};
use super::parse::{parse_conda_env_list, parse_environments_txt};
use super::path_text;
use crate::host::paths::real_path;
use crate::host::{Cmd, FileKind, Host, home_dir, path_dirs, which};
use crate::probe::Options;
use gpu_doctor_model::Trace;
use gpu_doctor_model::{OsFamily, UnusedPython};

/// Conda installs' usual folders under the home folder.
const HOME_CONDA_ROOTS: [&str; 6] = ["miniconda3", "anaconda3", "miniforge3", "mambaforge", "micromamba", ".conda"];
/// Conda installs' usual system-wide folders on Linux and macOS.
const UNIX_CONDA_ROOTS: [&str; 5] =
    ["/opt/conda", "/opt/miniconda3", "/opt/anaconda3", "/opt/miniforge3", "/opt/mambaforge"];
/// Conda installs' usual system-wide folders on Windows.
const WINDOWS_CONDA_ROOTS: [&str; 3] =
    ["C:/ProgramData/miniconda3", "C:/ProgramData/anaconda3", "C:/ProgramData/miniforge3"];

struct Discovery<'a> {
    inspector: Inspector<'a>,
    found: Vec<Layout>,
}

impl Discovery<'_> {
    /// Keeps a layout, or notes another way to the same environment.
    fn keep(&mut self, layout: Layout, method: &str, trace: &mut Trace) {
        if let Some(same) = self.found.iter_mut().find(|l| l.key == layout.key) {
            for how in layout.found_by {
                if !same.found_by.contains(&how) {
                    same.found_by.push(how);
                }
            }
            trace.ok(method, format!("{} again (already {})", layout.prefix.display(), same.name));
        } else {
            trace.ok(method, format!("{} at {}", layout.name, layout.prefix.display()));
            self.found.push(layout);
        }
    }

    /// Keeps the environment at a prefix; `Some(why)` when there is none to keep.
    fn add_prefix(&mut self, prefix: &Path, method: &str, how: &str, trace: &mut Trace) -> Option<String> {
        let found = self.inspector.inspect_prefix(prefix, None, how);
        self.keep_or_miss(found, method, trace)
    }

    /// Keeps an interpreter's environment; `Some(why)` when there is none to keep.
    fn add_interpreter(&mut self, interpreter: &Path, method: &str, how: &str, trace: &mut Trace) -> Option<String> {
        let found = self.inspector.inspect_interpreter(interpreter, how);
        self.keep_or_miss(found, method, trace)
    }

    fn keep_or_miss(&mut self, found: Result<Layout, String>, method: &str, trace: &mut Trace) -> Option<String> {
        match found {
            Ok(layout) => {
                self.keep(layout, method, trace);
                None
            }
            Err(why) => {
                trace.miss(method, &why);
                Some(why)
            }
        }
    }

    /// A conda root and every environment in its `envs` folder.
    fn add_conda_root(&mut self, root: &Path, how: &str, trace: &mut Trace) {
        let host = self.inspector.host;
        if host.file_kind(root) != Some(FileKind::Dir) {
            trace.miss(format!("conda root {}", root.display()), "not there");
            return;
        }
        self.add_prefix(root, &format!("conda root {}", root.display()), how, trace);
        for env in host.list_dir(&root.join("envs")).unwrap_or_default() {
            if env.kind != FileKind::File {
                self.add_prefix(
                    &root.join("envs").join(&env.name),
                    &format!("conda root {}", root.display()),
                    how,
                    trace,
                );
            }
        }
    }
}

/// What discovery found, where it looked, and which named paths it could not use.
pub(super) struct Discovered {
    /// Every environment, each once.
    pub found: Vec<Layout>,
    /// Where it looked, for an `Absent` reason.
    pub looked: Vec<String>,
    /// Each `--python` path that gave no environment, and why.
    pub unused: Vec<UnusedPython>,
}

/// Finds every environment.
#[expect(clippy::too_many_lines, reason = "one walk over every kind of environment; split it when it grows")]
pub(super) fn discover(host: &dyn Host, opts: &Options, trace: &mut Trace) -> Discovered {
    let windows = host.platform().os == OsFamily::Windows;
    let home = home_dir(host);
    let mut pyenv_roots: Vec<PathBuf> = Vec::new();
    if let Some(root) = host.env_var("PYENV_ROOT").filter(|r| !r.is_empty()) {
        pyenv_roots.push(PathBuf::from(root));
    }
    if let Some(h) = &home {
        pyenv_roots.push(h.join(".pyenv"));
    }
    let mut version_dirs: Vec<PathBuf> = pyenv_roots.iter().map(|r| r.join("versions")).collect();
    if windows {
        version_dirs.extend(pyenv_roots.iter().map(|r| r.join("pyenv-win").join("versions")));
    }
    let pyenv_versions = version_dirs.iter().map(|d| real_path(host, d)).collect();
    let mut d = Discovery { inspector: Inspector { host, windows, pyenv_versions }, found: Vec::new() };
    let mut looked = Vec::new();
    let mut unused = Vec::new();

    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        match host.env_var(var).filter(|v| !v.is_empty()) {
            Some(p) => {
                d.add_prefix(Path::new(&p), &format!("${var}"), var, trace);
            }
            None => trace.miss(format!("${var}"), "not set"),
        }
    }
    looked.push("$VIRTUAL_ENV and $CONDA_PREFIX (not set or not an environment)".to_owned());

    if let Some(cwd) = &opts.cwd {
        let venv = cwd.join(".venv");
        if host.file_kind(&venv) == Some(FileKind::Dir) {
            d.add_prefix(&venv, ".venv in the working folder", ".venv", trace);
        } else {
            trace.miss(".venv in the working folder", format!("no {}", venv.display()));
        }
        looked.push(format!("{}", venv.display()));
    }

    for extra in &opts.extra_pythons {
        let why_not = match host.file_kind(extra) {
            Some(FileKind::Dir) => d.add_prefix(extra, "--python", "--python", trace),
            Some(_) => d.add_interpreter(extra, "--python", "--python", trace),
            None => {
                let why = format!("{} does not exist", extra.display());
                trace.miss("--python", &why);
                Some(why)
            }
        };
        if let Some(reason) = why_not {
            unused.push(UnusedPython { path: path_text(extra), reason });
        }
        looked.push(format!("--python {}", extra.display()));
    }

    let dirs = path_dirs(host);
    for dir in &dirs {
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name == "shims" || dir.to_string_lossy().contains("WindowsApps") {
            trace.miss("PATH", format!("skipped {} (launcher shims, not interpreters)", dir.display()));
            continue;
        }
        let Ok(entries) = host.list_dir(dir) else { continue };
        for e in entries.into_iter().filter(|e| is_python_name(&e.name, windows)) {
            d.add_interpreter(&dir.join(&e.name), "PATH", "PATH", trace);
        }
    }
    looked.push(format!("PATH ({} folders)", dirs.len()));

    if let Some(h) = &home {
        let txt = h.join(".conda").join("environments.txt");
        match host.read_file(&txt) {
            Ok(text) => {
                for prefix in parse_environments_txt(&text) {
                    d.add_prefix(Path::new(&prefix), "~/.conda/environments.txt", "~/.conda/environments.txt", trace);
                }
            }
            Err(e) => trace.miss("~/.conda/environments.txt", e.to_string()),
        }
        looked.push(txt.display().to_string());
    }

    conda_env_list(&mut d, trace);
    looked.push("conda env list".to_owned());

    let mut roots: Vec<PathBuf> = home.iter().flat_map(|h| HOME_CONDA_ROOTS.iter().map(move |r| h.join(r))).collect();
    if windows {
        roots.extend(WINDOWS_CONDA_ROOTS.iter().map(PathBuf::from));
        if let Some(local) = host.env_var("LOCALAPPDATA") {
            roots.extend(["miniconda3", "anaconda3", "miniforge3"].iter().map(|r| Path::new(&local).join(r)));
        }
    } else {
        roots.extend(UNIX_CONDA_ROOTS.iter().map(PathBuf::from));
    }
    for root in &roots {
        d.add_conda_root(root, "conda root", trace);
    }
    looked.push(format!(
        "conda roots ({})",
        roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", ")
    ));

    for dir in &version_dirs {
        let Ok(entries) = host.list_dir(dir) else {
            trace.miss("pyenv", format!("no {}", dir.display()));
            continue;
        };
        for e in entries {
            d.add_prefix(&dir.join(&e.name), "pyenv", "pyenv", trace);
        }
    }
    looked.extend(version_dirs.iter().map(|v| v.display().to_string()));

    if windows && let Some(local) = host.env_var("LOCALAPPDATA") {
        let base = Path::new(&local).join("Programs").join("Python");
        for e in host.list_dir(&base).unwrap_or_default() {
            if e.name.to_ascii_lowercase().starts_with("python3") {
                d.add_prefix(&base.join(&e.name), "%LOCALAPPDATA%/Programs/Python", "python.org installer", trace);
            }
        }
        looked.push(base.display().to_string());
    }

    let mut found = d.found;
    make_names_unique(&mut found);
    Discovered { found, looked, unused }
}

/// Asks conda itself for its environments, when a conda executable can be found.
fn conda_env_list(d: &mut Discovery<'_>, trace: &mut Trace) {
    let host = d.inspector.host;
    let exe = host
        .env_var("CONDA_EXE")
        .filter(|e| !e.is_empty())
        .map(PathBuf::from)
        .or_else(|| which(host, "conda"))
        .or_else(|| which(host, "mamba"));
    let Some(exe) = exe else {
        trace.miss("conda env list --json", "no conda executable ($CONDA_EXE, conda or mamba on PATH)");
        return;
    };
    let cmd = Cmd::new([exe.to_string_lossy().as_ref(), "env", "list", "--json"]).timeout(Duration::from_secs(5));
    let method = cmd.display();
    match host.run(&cmd) {
        Ok(out) if out.success() => match parse_conda_env_list(&out.stdout) {
            Ok(prefixes) => {
                for p in prefixes {
                    d.add_prefix(Path::new(&p), &method, "conda env list", trace);
                }
            }
            Err(e) => trace.error(method, format!("output is not the expected JSON: {e}")),
        },
        Ok(out) => trace.error(method, format!("exit status {:?}: {}", out.status, out.stderr.trim())),
        Err(e) if e.is_not_found() => trace.miss(method, e.to_string()),
        Err(e) => trace.error(method, e.to_string()),
    }
}

/// Two environments may claim the same name (two conda bases); those get their prefix appended.
fn make_names_unique(found: &mut [Layout]) {
    let names: Vec<String> = found.iter().map(|l| l.name.clone()).collect();
    for l in found.iter_mut() {
        if names.iter().filter(|n| **n == l.name).count() > 1 {
            l.name = format!("{} ({})", l.name, l.prefix.to_string_lossy().replace('\\', "/"));
        }
    }
}
