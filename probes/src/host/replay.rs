//! `ReplayHost`: a recorded machine, answered from a fixture folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::paths::{normalize, resolve_with};
use super::{
    Cmd, CmdOutput, DirEntry, FileKind, Fixture, Host, HostError, NvmlAnswer, NvmlReport, Platform, SystemInfo,
};

/// Answers every question from a `Fixture`.
#[derive(Debug, Clone)]
pub struct ReplayHost {
    fixture: Fixture,
}

/// The text key of a path in a fixture.
fn key(path: &Path) -> String {
    let s = path.to_string_lossy();
    if s.len() > 1 { s.trim_end_matches('/').to_owned() } else { s.into_owned() }
}

impl ReplayHost {
    /// Loads `DIR/host.json`.
    pub fn load(dir: &Path) -> Result<Self, HostError> {
        Fixture::load(dir).map(Self::new)
    }

    /// Replays an in-memory fixture.
    pub fn new(fixture: Fixture) -> Self {
        Self { fixture }
    }

    /// The fixture being replayed.
    pub fn fixture(&self) -> &Fixture {
        &self.fixture
    }

    /// Follows recorded symlinks in every component of `path`.
    fn resolve(&self, path: &Path) -> PathBuf {
        resolve_with(path, |p| self.fixture.links.get(&key(p)).map(PathBuf::from))
    }

    /// The children that other recorded paths imply under `dir`.
    fn implied_children(&self, dir: &str) -> BTreeMap<String, FileKind> {
        let prefix = if dir.ends_with('/') { dir.to_owned() } else { format!("{dir}/") };
        let mut out = BTreeMap::new();
        let f = &self.fixture;
        let paths = f
            .files
            .keys()
            .chain(f.file_errors.keys())
            .chain(f.links.keys())
            .chain(f.dirs.keys())
            .chain(f.kinds.iter().filter(|(_, k)| k.is_some()).map(|(p, _)| p));
        for path in paths {
            let Some(rest) = path.strip_prefix(&prefix) else { continue };
            let Some(name) = rest.split('/').next().filter(|n| !n.is_empty()) else { continue };
            let child = format!("{prefix}{name}");
            let kind = if f.links.contains_key(&child) {
                FileKind::Symlink
            } else if f.files.contains_key(&child) || f.kinds.get(&child) == Some(&Some(FileKind::File)) {
                FileKind::File
            } else {
                FileKind::Dir
            };
            out.insert(name.to_owned(), kind);
        }
        out
    }
}

impl Host for ReplayHost {
    fn platform(&self) -> Platform {
        self.fixture.platform.clone()
    }

    fn now_unix_secs(&self) -> u64 {
        self.fixture.now_unix_secs
    }

    fn system_info(&self) -> SystemInfo {
        self.fixture.system.clone()
    }

    fn env_var(&self, name: &str) -> Option<String> {
        self.fixture.env.get(name).cloned()
    }

    fn env_vars(&self) -> BTreeMap<String, String> {
        self.fixture.env.clone()
    }

    fn read_file(&self, path: &Path) -> Result<String, HostError> {
        let what = path.display().to_string();
        for k in [key(path), key(&self.resolve(path))] {
            if let Some(text) = self.fixture.files.get(&k) {
                return Ok(text.clone());
            }
            if let Some(message) = self.fixture.file_errors.get(&k) {
                return Err(HostError::Io { message: message.clone(), what });
            }
        }
        Err(HostError::NotFound { what })
    }

    fn read_link(&self, path: &Path) -> Result<PathBuf, HostError> {
        self.fixture
            .links
            .get(&key(&normalize(path)))
            .map(PathBuf::from)
            .ok_or_else(|| HostError::NotFound { what: path.display().to_string() })
    }

    fn list_dir(&self, path: &Path) -> Result<Vec<DirEntry>, HostError> {
        let mut found = false;
        let mut entries: BTreeMap<String, FileKind> = BTreeMap::new();
        for k in [key(path), key(&self.resolve(path))] {
            if let Some(listed) = self.fixture.dirs.get(&k) {
                found = true;
                entries.extend(listed.iter().map(|e| (e.name.clone(), e.kind)));
            }
            let implied = self.implied_children(&k);
            found |= !implied.is_empty();
            for (name, kind) in implied {
                entries.entry(name).or_insert(kind);
            }
        }
        if !found {
            return Err(HostError::NotFound { what: path.display().to_string() });
        }
        Ok(entries.into_iter().map(|(name, kind)| DirEntry { name, kind }).collect())
    }

    fn file_kind(&self, path: &Path) -> Option<FileKind> {
        let direct = key(&normalize(path));
        if let Some(kind) = self.fixture.kinds.get(&direct) {
            return *kind;
        }
        let k = key(&self.resolve(path));
        if let Some(kind) = self.fixture.kinds.get(&k) {
            return *kind;
        }
        if self.fixture.files.contains_key(&k) || self.fixture.file_errors.contains_key(&k) {
            Some(FileKind::File)
        } else if self.fixture.dirs.contains_key(&k) || !self.implied_children(&k).is_empty() {
            Some(FileKind::Dir)
        } else {
            None
        }
    }

    fn run(&self, cmd: &Cmd) -> Result<CmdOutput, HostError> {
        if let Some(record) = self.fixture.commands.iter().find(|r| r.argv == cmd.argv) {
            return match (&record.output, &record.error) {
                (Some(out), _) => Ok(out.clone()),
                (None, Some(err)) => Err(err.clone()),
                (None, None) => Err(HostError::NotRecorded { what: cmd.display() }),
            };
        }
        let program = cmd.argv.first().map(String::as_str).unwrap_or_default();
        if super::which(self, program).is_none() {
            return Err(HostError::NotFound { what: program.to_owned() });
        }
        Err(HostError::NotRecorded { what: cmd.display() })
    }

    fn kernel_messages(&self) -> Result<String, HostError> {
        // A recording keeps it as the file `/dev/kmsg`; fixtures without it ran `dmesg`.
        if let Some(text) = self.fixture.files.get(super::KMSG) {
            return Ok(text.clone());
        }
        if let Some(message) = self.fixture.file_errors.get(super::KMSG) {
            return Err(HostError::Io { message: message.clone(), what: super::KMSG.to_owned() });
        }
        Err(HostError::Unavailable { message: "the fixture holds no /dev/kmsg".to_owned() })
    }

    fn nvml(&self) -> Result<NvmlReport, HostError> {
        match &self.fixture.nvml {
            NvmlAnswer::Report(r) => Ok(r.clone()),
            NvmlAnswer::Error(message) => Err(HostError::Unavailable { message: message.clone() }),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::host::CommandRecord;
    use gpu_doctor_model::OsFamily;

    fn machine() -> ReplayHost {
        let mut f = Fixture::new(Platform { os: OsFamily::Linux, arch: "x86_64".into() });
        f.env.insert("PATH".into(), "/usr/local/cuda/bin:/usr/bin".into());
        f.files.insert("/usr/local/cuda-12.4/version.json".into(), "{}".into());
        f.files.insert("/usr/local/cuda-12.4/bin/nvcc".into(), String::new());
        f.files.insert("/usr/bin/python3".into(), String::new());
        f.links.insert("/usr/local/cuda".into(), "cuda-12.4".into());
        f.commands.push(CommandRecord {
            argv: vec!["/usr/local/cuda/bin/nvcc".into(), "--version".into()],
            output: Some(CmdOutput { status: Some(0), stdout: "release 12.4".into(), stderr: String::new() }),
            error: None,
        });
        ReplayHost::new(f)
    }

    #[test]
    fn sysfs_links_with_colons_are_relative() {
        let mut f = Fixture::new(Platform { os: OsFamily::Linux, arch: "x86_64".into() });
        f.links.insert(
            "/sys/bus/pci/devices/0000:01:00.0".into(),
            "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0".into(),
        );
        f.files.insert("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/vendor".into(), "0x10de\n".into());
        let h = ReplayHost::new(f);
        assert_eq!(h.read_file(Path::new("/sys/bus/pci/devices/0000:01:00.0/vendor")).unwrap(), "0x10de\n");
    }

    #[test]
    fn symlinks_resolve_relative_to_their_folder() {
        let h = machine();
        assert_eq!(h.read_link(Path::new("/usr/local/cuda")).unwrap(), PathBuf::from("cuda-12.4"));
        assert_eq!(h.read_file(Path::new("/usr/local/cuda/version.json")).unwrap(), "{}");
        assert_eq!(h.file_kind(Path::new("/usr/local/cuda")), Some(FileKind::Dir));
    }

    #[test]
    fn folders_are_implied_by_the_paths_under_them() {
        let h = machine();
        let names: Vec<_> =
            h.list_dir(Path::new("/usr/local")).unwrap().into_iter().map(|e| (e.name, e.kind)).collect();
        assert_eq!(names, vec![("cuda".into(), FileKind::Symlink), ("cuda-12.4".into(), FileKind::Dir)]);
        assert!(h.list_dir(Path::new("/opt")).unwrap_err().is_not_found());
        assert_eq!(h.file_kind(Path::new("/opt/cuda")), None);
    }

    #[test]
    fn commands_answer_what_was_recorded_and_are_loud_about_the_rest() {
        let h = machine();
        let nvcc = Cmd::new(["/usr/local/cuda/bin/nvcc", "--version"]);
        assert_eq!(h.run(&nvcc).unwrap().stdout, "release 12.4");
        let unrecorded = h.run(&Cmd::new(["python3", "-V"])).unwrap_err();
        assert!(matches!(unrecorded, HostError::NotRecorded { .. }), "{unrecorded:?}");
        assert!(h.run(&Cmd::new(["nvidia-smi"])).unwrap_err().is_not_found());
        assert_eq!(super::super::which(&h, "nvcc"), Some(PathBuf::from("/usr/local/cuda/bin/nvcc")));
    }
}
