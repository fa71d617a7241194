//! The environment tools a plan's user steps run: uv when it is on PATH (fastest), else the
//! environment's own `python -m pip` (and `python -m venv` for a new one), or conda / mamba /
//! micromamba for a conda environment (the pip wheel installed inside it: PyTorch's own conda
//! channel stopped at 2.5). Every command is an argv, never a shell string.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use gpu_doctor_model::InstallFlag;
use serde::{Deserialize, Serialize};

/// Which tool installs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "tool", rename_all = "snake_case")]
pub enum Tool {
    /// `uv` at this path.
    Uv { uv: PathBuf },
    /// The environment's own `python -m pip`.
    Pip,
    /// conda, mamba or micromamba at this path (creates the environment; pip installs into it).
    Conda { conda: PathBuf },
}

/// Where packages come from.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Source {
    /// The index (`https://download.pytorch.org/whl/cu128`); `None` for PyPI.
    pub index_url: Option<String>,
    /// A local folder of wheels, and no index at all (`--no-index --find-links DIR`): the offline route.
    pub find_links: Option<PathBuf>,
}

impl Source {
    /// The index and find-links arguments pip and `uv pip` share (also valid as lines of a
    /// requirements file).
    pub fn args(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(dir) = &self.find_links {
            out.extend(["--no-index".to_owned(), "--find-links".to_owned(), dir.display().to_string()]);
        } else if let Some(url) = &self.index_url {
            out.extend(["--index-url".to_owned(), url.clone()]);
        }
        out
    }
}

/// The tool to use: `prefer` when given (`uv`, `pip`, `conda`, `mamba`, `micromamba`), else uv when
/// it is on PATH (fastest), else the environment's own pip. `Err` names a preferred tool that is
/// not on PATH or not known.
pub fn detect(prefer: Option<&str>) -> Result<Tool, String> {
    detect_for(prefer, None)
}

/// As [`detect`], for the environment at `env`: a conda environment (one with `conda-meta/`) gets
/// conda, mamba or micromamba when no tool is preferred (the environment's pip when none is on PATH).
pub fn detect_for(prefer: Option<&str>, env: Option<&Path>) -> Result<Tool, String> {
    detect_in(prefer, env, std::env::var_os("PATH").as_deref())
}

/// The interpreter a new environment is based on when none is named: `python3` on PATH, else `python`.
pub fn base_python() -> Result<PathBuf, String> {
    which::which("python3")
        .or_else(|_| which::which("python"))
        .map_err(|_| "no python3 or python on PATH; name the interpreter to base the environment on".to_owned())
}

/// The conda-like tools, in the order they are looked for.
pub const CONDAS: [&str; 3] = ["conda", "mamba", "micromamba"];

/// As [`detect_for`], looking in the folders of `path` (a `PATH` value) instead of this process's.
pub fn detect_in(prefer: Option<&str>, env: Option<&Path>, path: Option<&OsStr>) -> Result<Tool, String> {
    let find = |name: &str| {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        path.and_then(|p| which::which_in(name, Some(p), cwd).ok())
    };
    match prefer {
        Some("pip") => Ok(Tool::Pip),
        Some("uv") => find("uv").map(|uv| Tool::Uv { uv }).ok_or_else(|| "uv is not on PATH".to_owned()),
        Some(name) if CONDAS.contains(&name) => {
            find(name).map(|conda| Tool::Conda { conda }).ok_or_else(|| format!("{name} is not on PATH"))
        }
        Some(other) => Err(format!("unknown tool {other:?}: uv, pip, conda, mamba or micromamba")),
        None if env.is_some_and(|e| e.join("conda-meta").is_dir()) => {
            Ok(CONDAS.iter().find_map(|name| find(name)).map_or(Tool::Pip, |conda| Tool::Conda { conda }))
        }
        None => Ok(find("uv").map_or(Tool::Pip, |uv| Tool::Uv { uv })),
    }
}

/// The interpreter inside the environment at `prefix`.
/// The `(major, minor)` version of the interpreter `python`, asked of it (`python -c`, 10 s at
/// most, no shell); `None` when it does not answer with one.
pub fn python_version(python: &Path) -> Option<(u32, u32)> {
    use gpu_doctor_probes::host::{Cmd, Host, SystemHost};
    let code = "import sys; print('%d.%d' % sys.version_info[:2])";
    let cmd = Cmd::new([python.display().to_string(), "-c".to_owned(), code.to_owned()]);
    let out = SystemHost::new().run(&cmd).ok().filter(|o| o.success())?;
    crate::choose::python_version(out.stdout.trim())
}

pub fn python_in(prefix: &Path) -> PathBuf {
    if cfg!(windows) { prefix.join("python.exe") } else { prefix.join("bin").join("python") }
}

/// `requirements` installed into the environment of `python`. A requirement names the exact build
/// (`torch==2.5.1+cu124`: the local label differs from the installed `+cpu`, so the build is
/// replaced) and no reinstall flag is passed: dependencies that already fit stay as they are.
pub fn install(tool: &Tool, python: &Path, requirements: &[String], source: &Source) -> Vec<String> {
    install_with(tool, python, requirements, source, &[])
}

/// `pins` (lines of a saved package list, `name==version`) installed exactly, their dependencies
/// left alone (`--no-deps`): how [`crate::apply::undo`] puts a package list back.
pub fn install_pins(tool: &Tool, python: &Path, pins: &[String], source: &Source) -> Vec<String> {
    let mut argv = install(tool, python, &[], source);
    argv.push("--no-deps".into());
    argv.extend(pins.iter().cloned());
    argv
}

/// The distributions `names` removed from the environment of `python`, without asking.
pub fn uninstall(tool: &Tool, python: &Path, names: &[String]) -> Vec<String> {
    let mut argv = pip(tool, python, "uninstall", &["--yes"]);
    argv.extend(names.iter().cloned());
    argv
}

/// A new environment at `prefix` made with `python` (the interpreter to base it on).
pub fn create(tool: &Tool, python: &Path, prefix: &Path) -> Vec<String> {
    match tool {
        Tool::Uv { uv } => vec![
            uv.display().to_string(),
            "venv".into(),
            "--python".into(),
            python.display().to_string(),
            prefix.display().to_string(),
        ],
        Tool::Pip => vec![python.display().to_string(), "-m".into(), "venv".into(), prefix.display().to_string()],
        Tool::Conda { conda } => vec![
            conda.display().to_string(),
            "create".into(),
            "--yes".into(),
            "--prefix".into(),
            prefix.display().to_string(),
            "python".into(),
            "pip".into(),
        ],
    }
}

/// As [`install`], with `flags` (`-U`, `--force-reinstall`, `--no-deps`, `--no-build-isolation`,
/// `--no-cache-dir`, in the tool's spelling)
/// before the source and the requirements.
pub fn install_with(
    tool: &Tool,
    python: &Path,
    requirements: &[String],
    source: &Source,
    flags: &[InstallFlag],
) -> Vec<String> {
    let mut argv = pip(tool, python, "install", &[]);
    let uv = matches!(tool, Tool::Uv { .. });
    argv.extend(flags.iter().map(|flag| {
        match flag {
            InstallFlag::Upgrade if uv => "--upgrade",
            InstallFlag::Upgrade => "-U",
            InstallFlag::Reinstall if uv => "--reinstall",
            InstallFlag::Reinstall => "--force-reinstall",
            InstallFlag::NoDeps => "--no-deps",
            InstallFlag::NoBuildIsolation => "--no-build-isolation",
            InstallFlag::NoCache if uv => "--no-cache",
            InstallFlag::NoCache => "--no-cache-dir",
        }
        .to_owned()
    }));
    argv.extend(source.args());
    argv.extend(requirements.iter().cloned());
    argv
}

/// The command that prints the environment's package list in a form [`install`] can take back
/// (`name==version` lines).
pub fn freeze(tool: &Tool, python: &Path) -> Vec<String> {
    pip(tool, python, "freeze", &["--all"])
}

/// pip's `command` for the environment of `python`: `uv pip COMMAND --python PYTHON` with uv, else
/// `PYTHON -m pip COMMAND` followed by `pip_flags` (what pip needs and uv does without).
fn pip(tool: &Tool, python: &Path, command: &str, pip_flags: &[&str]) -> Vec<String> {
    let python = python.display().to_string();
    match tool {
        Tool::Uv { uv } => vec![uv.display().to_string(), "pip".into(), command.into(), "--python".into(), python],
        Tool::Pip | Tool::Conda { .. } => {
            [python.as_str(), "-m", "pip", command].iter().chain(pip_flags).map(|&a| a.to_owned()).collect()
        }
    }
}

/// The distribution name of a requirement (`torch==2.5.1` → `torch`, `jax[cuda12]` → `jax`).
pub fn package_name(requirement: &str) -> &str {
    let end = requirement
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(requirement.len());
    &requirement[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_python_is_asked_its_version() {
        assert_eq!(python_version(Path::new("/nonexistent/python3")), None);
        let Ok(python) = which::which("python3") else {
            eprintln!("skipped: no python3 on PATH");
            return;
        };
        assert!(python_version(&python).is_some_and(|(major, _)| major == 3), "{}", python.display());
    }

    #[test]
    fn package_names_drop_pins_and_extras() {
        assert_eq!(package_name("torch==2.5.1"), "torch");
        assert_eq!(package_name("jax[cuda12]==0.7.2"), "jax");
        assert_eq!(package_name("cupy-cuda12x>=13"), "cupy-cuda12x");
    }

    #[test]
    fn install_flags_are_spelled_as_each_tool_reads_them() {
        let flags = [
            InstallFlag::Upgrade,
            InstallFlag::Reinstall,
            InstallFlag::NoDeps,
            InstallFlag::NoBuildIsolation,
            InstallFlag::NoCache,
        ];
        let reqs = ["x==1".to_owned()];
        let py = Path::new("/e/bin/python");
        let pip = install_with(&Tool::Pip, py, &reqs, &Source::default(), &flags);
        let want = ["-U", "--force-reinstall", "--no-deps", "--no-build-isolation", "--no-cache-dir", "x==1"];
        assert_eq!(pip[..4], ["/e/bin/python", "-m", "pip", "install"]);
        assert_eq!(pip[4..], want);
        // uv pip install: https://docs.astral.sh/uv/reference/cli/#uv-pip-install (`--no-build-isolation`,
        // `--no-cache`).
        let uv = install_with(&Tool::Uv { uv: "uv".into() }, py, &reqs, &Source::default(), &flags);
        assert_eq!(uv[5..], ["--upgrade", "--reinstall", "--no-deps", "--no-build-isolation", "--no-cache", "x==1"]);
    }

    #[test]
    fn find_links_means_no_index_and_the_index_is_passed_otherwise() {
        let uv = Tool::Uv { uv: "/usr/bin/uv".into() };
        let src =
            Source { index_url: Some("https://download.pytorch.org/whl/cu128".into()), find_links: Some("/w".into()) };
        let argv = install(&uv, Path::new("/e/bin/python"), &["torch==2.9.1+cu128".into()], &src);
        assert_eq!(
            argv,
            [
                "/usr/bin/uv",
                "pip",
                "install",
                "--python",
                "/e/bin/python",
                "--no-index",
                "--find-links",
                "/w",
                "torch==2.9.1+cu128"
            ]
        );
        let src = Source { index_url: Some("https://x/cu128".into()), find_links: None };
        let pip = install(&Tool::Pip, Path::new("/e/bin/python"), &["torch==2.9.1+cu128".into()], &src);
        assert_eq!(
            pip,
            ["/e/bin/python", "-m", "pip", "install", "--index-url", "https://x/cu128", "torch==2.9.1+cu128"]
        );
    }

    /// A folder holding empty executables named `names`, as PATH.
    fn path_with<'a>(dir: &'a Path, names: &[&str]) -> Option<&'a OsStr> {
        use std::os::unix::fs::PermissionsExt;
        for name in names {
            let file = dir.join(name);
            std::fs::write(&file, "").unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        Some(dir.as_os_str())
    }

    #[test]
    fn uv_on_path_comes_first_else_pip() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(detect_in(None, None, path_with(dir.path(), &["conda"])), Ok(Tool::Pip));
        let path = path_with(dir.path(), &["uv"]);
        assert_eq!(detect_in(None, None, path), Ok(Tool::Uv { uv: dir.path().join("uv") }));
        assert_eq!(detect_in(Some("pip"), None, path), Ok(Tool::Pip));
    }

    #[test]
    fn a_conda_environment_gets_a_conda_tool_and_a_tool_asked_for_must_be_there() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        let env = dir.path().join("env");
        std::fs::create_dir_all(env.join("conda-meta")).unwrap();
        std::fs::create_dir(&bin).unwrap();
        let path = path_with(&bin, &["uv", "mamba"]);
        assert_eq!(detect_in(None, Some(&env), path), Ok(Tool::Conda { conda: bin.join("mamba") }));
        assert_eq!(detect_in(None, Some(dir.path()), path), Ok(Tool::Uv { uv: bin.join("uv") }));
        assert_eq!(detect_in(Some("micromamba"), None, path), Err("micromamba is not on PATH".to_owned()));
        assert_eq!(detect_in(Some("mamba"), None, path), Ok(Tool::Conda { conda: bin.join("mamba") }));
        assert!(detect_in(Some("poetry"), None, path).unwrap_err().starts_with("unknown tool"));
        // A conda environment without any conda tool on PATH is still served by its own pip.
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(detect_in(None, Some(&env), Some(empty.path().as_os_str())), Ok(Tool::Pip));
    }

    #[test]
    fn undo_argv_removes_without_asking_and_reinstalls_pins_without_dependencies() {
        let uv = Tool::Uv { uv: "/usr/bin/uv".into() };
        let py = Path::new("/e/bin/python");
        assert_eq!(
            uninstall(&uv, py, &["jax".into()]),
            ["/usr/bin/uv", "pip", "uninstall", "--python", "/e/bin/python", "jax"]
        );
        assert_eq!(
            uninstall(&Tool::Pip, py, &["jax".into()]),
            ["/e/bin/python", "-m", "pip", "uninstall", "--yes", "jax"]
        );
        assert_eq!(freeze(&uv, py), ["/usr/bin/uv", "pip", "freeze", "--python", "/e/bin/python"]);
        assert_eq!(freeze(&Tool::Pip, py), ["/e/bin/python", "-m", "pip", "freeze", "--all"]);
        let src = Source { index_url: None, find_links: Some("/w".into()) };
        assert_eq!(
            install_pins(&Tool::Pip, py, &["torch==2.5.1+cu121".into()], &src),
            [
                "/e/bin/python",
                "-m",
                "pip",
                "install",
                "--no-index",
                "--find-links",
                "/w",
                "--no-deps",
                "torch==2.5.1+cu121"
            ]
        );
    }
}
