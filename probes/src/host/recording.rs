//! `RecordingHost`: this machine, with every answer written down for replay.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::probe::Options;

use super::{
    Cmd, CmdOutput, CommandRecord, DirEntry, FileKind, Fixture, Host, HostError, NvmlAnswer, NvmlReport, Platform,
    SystemHost, SystemInfo,
};

/// Wraps `SystemHost` and records each answer into a `Fixture`.
#[derive(Debug)]
pub struct RecordingHost {
    inner: SystemHost,
    fixture: Mutex<Fixture>,
    keep_env: fn(&str) -> bool,
}

fn key(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

impl RecordingHost {
    /// Records this machine; `keep_env` says which environment variables may be written down.
    /// Credentials among them are always masked (`probe::env::mask_secret`).
    pub fn new(keep_env: fn(&str) -> bool) -> Self {
        let inner = SystemHost::new();
        let mut fixture = Fixture::new(inner.platform());
        fixture.description = "recorded with gpu-doctor record-fixture".to_owned();
        Self { inner, fixture: Mutex::new(fixture), keep_env }
    }

    fn rec(&self) -> MutexGuard<'_, Fixture> {
        self.fixture.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The recording so far, with the user's and the host's names replaced.
    pub fn finish(&self) -> Fixture {
        let fixture = self.rec().clone();
        let user = ["USER", "LOGNAME", "USERNAME"].iter().find_map(|v| self.inner.env_var(v));
        let home = super::home_dir(&self.inner);
        let host = fixture.system.host_name.clone();
        redact(fixture, user.as_deref(), home.as_deref(), host.as_deref())
    }

    /// Writes down the options the probes ran with, so a replay runs with the same ones.
    pub fn note_options(&self, options: &Options) {
        self.rec().recorded_with = Some(options.clone());
    }

    /// The redacted recording as the text of a `host.json` (`FIXTURE_FILE`); the caller writes it
    /// (gpu-doctor's one file writer lives in the app).
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(&self.finish()).map(|text| text + "\n")
    }
}

/// Replaces the home folder, the user name and the host name in every key and value.
pub(crate) fn redact(fixture: Fixture, user: Option<&str>, home: Option<&Path>, host: Option<&str>) -> Fixture {
    // Most specific first: a host name often contains the user's name.
    let mut swaps: Vec<(String, String)> = Vec::new();
    if let Some(host) = host.filter(|h| h.len() >= 3 && *h != "localhost") {
        swaps.push((host.to_owned(), "host".to_owned()));
    }
    if let Some(home) = home.map(|h| h.to_string_lossy().into_owned()).filter(|h| h.len() > 1) {
        let replacement = if home.starts_with("/root") { home.clone() } else { "/home/user".to_owned() };
        swaps.push((home, replacement));
    }
    // Short or system names would also hit unrelated words; they identify nobody.
    if let Some(user) = user.filter(|u| u.len() >= 3 && !matches!(*u, "root" | "user" | "runner")) {
        swaps.push((user.to_owned(), "user".to_owned()));
    }
    let Ok(mut value) = serde_json::to_value(&fixture) else { return fixture };
    crate::rewrite::strings(&mut value, &mut |_, s| {
        swaps.iter().fold(s.to_owned(), |acc, (from, to)| acc.replace(from.as_str(), to))
    });
    serde_json::from_value(value).unwrap_or(fixture)
}

impl Host for RecordingHost {
    fn platform(&self) -> Platform {
        self.inner.platform()
    }

    fn now_unix_secs(&self) -> u64 {
        let now = self.inner.now_unix_secs();
        self.rec().now_unix_secs = now;
        now
    }

    fn system_info(&self) -> SystemInfo {
        let info = self.inner.system_info();
        self.rec().system = info.clone();
        info
    }

    fn env_var(&self, name: &str) -> Option<String> {
        let value = self.inner.env_var(name);
        if let Some(v) = value.as_ref().filter(|_| (self.keep_env)(name)) {
            self.rec().env.insert(name.to_owned(), gpu_doctor_model::mask_secret(name, v));
        }
        value
    }

    fn env_vars(&self) -> BTreeMap<String, String> {
        let all = self.inner.env_vars();
        let mut rec = self.rec();
        for (k, v) in all.iter().filter(|(k, _)| (self.keep_env)(k)) {
            rec.env.insert(k.clone(), gpu_doctor_model::mask_secret(k, v));
        }
        all
    }

    fn read_file(&self, path: &Path) -> Result<String, HostError> {
        let answer = self.inner.read_file(path);
        match &answer {
            Ok(text) => {
                self.rec().files.insert(key(path), text.clone());
            }
            Err(HostError::NotFound { .. }) => {
                self.rec().kinds.entry(key(path)).or_insert(None);
            }
            Err(e) => {
                self.rec().file_errors.insert(key(path), e.to_string());
            }
        }
        answer
    }

    fn read_link(&self, path: &Path) -> Result<PathBuf, HostError> {
        let answer = self.inner.read_link(path);
        if let Ok(target) = &answer {
            self.rec().links.insert(key(path), target.to_string_lossy().into_owned());
        }
        answer
    }

    fn list_dir(&self, path: &Path) -> Result<Vec<DirEntry>, HostError> {
        let answer = self.inner.list_dir(path);
        match &answer {
            Ok(entries) => {
                self.rec().dirs.insert(key(path), entries.clone());
            }
            Err(_) => {
                self.rec().kinds.insert(key(path), self.inner.file_kind(path));
            }
        }
        answer
    }

    fn file_kind(&self, path: &Path) -> Option<FileKind> {
        let kind = self.inner.file_kind(path);
        self.rec().kinds.insert(key(path), kind);
        kind
    }

    fn run(&self, cmd: &Cmd) -> Result<CmdOutput, HostError> {
        let answer = self.inner.run(cmd);
        let record = CommandRecord {
            argv: cmd.argv.clone(),
            output: answer.as_ref().ok().cloned(),
            error: answer.as_ref().err().cloned(),
        };
        let mut rec = self.rec();
        rec.commands.retain(|r| r.argv != cmd.argv);
        rec.commands.push(record);
        answer
    }

    fn kernel_messages(&self) -> Result<String, HostError> {
        // Kept as the file `/dev/kmsg` of the fixture, which a replay answers from.
        let answer = self.inner.kernel_messages();
        match &answer {
            Ok(text) => {
                self.rec().files.insert(super::KMSG.to_owned(), text.clone());
            }
            Err(HostError::Unavailable { .. }) => {}
            Err(HostError::Io { message, .. }) => {
                self.rec().file_errors.insert(super::KMSG.to_owned(), message.clone());
            }
            Err(e) => {
                self.rec().file_errors.insert(super::KMSG.to_owned(), e.to_string());
            }
        }
        answer
    }

    fn nvml(&self) -> Result<NvmlReport, HostError> {
        let answer = self.inner.nvml();
        self.rec().nvml = match &answer {
            Ok(report) => NvmlAnswer::Report(report.clone()),
            Err(e) => NvmlAnswer::Error(e.to_string()),
        };
        answer
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use gpu_doctor_model::OsFamily;

    #[test]
    fn redaction_replaces_home_user_and_host_in_keys_and_values() {
        let mut f = Fixture::new(Platform { os: OsFamily::Linux, arch: "x86_64".into() });
        f.env.insert("VIRTUAL_ENV".into(), "/home/alice/proj/.venv".into());
        f.files.insert("/home/alice/.conda/environments.txt".into(), "/home/alice/miniconda3\n".into());
        f.system.host_name = Some("alice-workstation".into());
        f.files.insert("/etc/hostname".into(), "alice-workstation\n".into());
        let r = redact(f, Some("alice"), Some(Path::new("/home/alice")), Some("alice-workstation"));
        let text = serde_json::to_string(&r).unwrap();
        assert!(!text.contains("alice"), "{text}");
        assert_eq!(r.env["VIRTUAL_ENV"], "/home/user/proj/.venv");
        assert!(r.files.contains_key("/home/user/.conda/environments.txt"));
        assert_eq!(r.system.host_name.as_deref(), Some("host"));
    }
}
