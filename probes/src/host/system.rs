//! `SystemHost`: the only code in the probes that touches this machine.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::{
    Cmd, CmdOutput, DirEntry, FileKind, Host, HostError, MAX_FILE_BYTES, MAX_OUTPUT_BYTES, NvmlReport, Platform,
    SystemInfo,
};

/// The machine this program runs on.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemHost;

impl SystemHost {
    /// A host for this machine.
    pub fn new() -> Self {
        Self
    }
}

fn io_error(e: &std::io::Error, path: &Path) -> HostError {
    let what = path.display().to_string();
    if e.kind() == std::io::ErrorKind::NotFound {
        HostError::NotFound { what }
    } else {
        HostError::Io { message: e.to_string(), what }
    }
}

fn kind_of(ft: std::fs::FileType) -> FileKind {
    if ft.is_symlink() {
        FileKind::Symlink
    } else if ft.is_dir() {
        FileKind::Dir
    } else {
        FileKind::File
    }
}

/// Reads a pipe to its end, keeping at most `MAX_OUTPUT_BYTES`.
fn read_capped(mut pipe: impl Read) -> String {
    let mut kept = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = MAX_OUTPUT_BYTES.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

impl Host for SystemHost {
    fn platform(&self) -> Platform {
        Platform::current()
    }

    fn now_unix_secs(&self) -> u64 {
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
    }

    fn system_info(&self) -> SystemInfo {
        use sysinfo::{CpuRefreshKind, MemoryRefreshKind, RefreshKind, System};
        let sys = System::new_with_specifics(
            RefreshKind::nothing()
                .with_memory(MemoryRefreshKind::nothing().with_ram())
                .with_cpu(CpuRefreshKind::nothing()),
        );
        let cpu_model = sys.cpus().first().map(|c| c.brand().trim().to_owned()).filter(|b| !b.is_empty());
        SystemInfo {
            os_name: System::name(),
            os_version: System::os_version(),
            kernel_version: System::kernel_version(),
            host_name: System::host_name(),
            cpu_model,
            cpu_physical_cores: System::physical_core_count().and_then(|n| u32::try_from(n).ok()),
            cpu_logical_cores: u32::try_from(sys.cpus().len()).unwrap_or(u32::MAX),
            memory_total_bytes: sys.total_memory(),
        }
    }

    fn env_var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }

    fn env_vars(&self) -> BTreeMap<String, String> {
        std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect()
    }

    fn read_file(&self, path: &Path) -> Result<String, HostError> {
        let file = std::fs::File::open(path).map_err(|e| io_error(&e, path))?;
        let mut bytes = Vec::new();
        file.take(MAX_FILE_BYTES as u64 + 1).read_to_end(&mut bytes).map_err(|e| io_error(&e, path))?;
        if bytes.len() > MAX_FILE_BYTES {
            return Err(HostError::Io {
                message: format!("file larger than {MAX_FILE_BYTES} bytes"),
                what: path.display().to_string(),
            });
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    fn read_link(&self, path: &Path) -> Result<PathBuf, HostError> {
        std::fs::read_link(path).map_err(|e| io_error(&e, path))
    }

    fn list_dir(&self, path: &Path) -> Result<Vec<DirEntry>, HostError> {
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(path).map_err(|e| io_error(&e, path))? {
            let Ok(entry) = entry else { continue };
            let Ok(name) = entry.file_name().into_string() else { continue };
            let Ok(ft) = entry.file_type() else { continue };
            entries.push(DirEntry { name, kind: kind_of(ft) });
        }
        entries.sort();
        Ok(entries)
    }

    fn file_kind(&self, path: &Path) -> Option<FileKind> {
        std::fs::metadata(path).ok().map(|m| kind_of(m.file_type()))
    }

    fn run(&self, cmd: &Cmd) -> Result<CmdOutput, HostError> {
        let what = cmd.display();
        let (program, args) = cmd
            .argv
            .split_first()
            .ok_or_else(|| HostError::Io { message: "empty command".to_owned(), what: what.clone() })?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(if cmd.stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    HostError::NotFound { what: program.clone() }
                } else {
                    HostError::Io { message: format!("could not start: {e}"), what: what.clone() }
                }
            })?;
        if let (Some(text), Some(mut stdin)) = (cmd.stdin.clone(), child.stdin.take()) {
            // A writer thread, so a program that does not read its input cannot block us.
            let _ = thread::Builder::new().name("host-stdin".into()).spawn(move || {
                let _ = stdin.write_all(text.as_bytes());
            });
        }
        let stdout = child
            .stdout
            .take()
            .map(|p| thread::Builder::new().name("host-stdout".into()).spawn(move || read_capped(p)));
        let stderr = child
            .stderr
            .take()
            .map(|p| thread::Builder::new().name("host-stderr".into()).spawn(move || read_capped(p)));
        let deadline = Instant::now() + cmd.timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() >= deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    // The reader threads are left to finish on their own: a grandchild may hold the pipes.
                    return Err(HostError::Timeout { after_ms: cmd.timeout.as_millis() as u64, what });
                }
                Ok(None) => thread::sleep(Duration::from_millis(5)),
                Err(e) => return Err(HostError::Io { message: format!("could not wait: {e}"), what }),
            }
        };
        let collect = |h: Option<std::io::Result<thread::JoinHandle<String>>>| {
            h.and_then(Result::ok).and_then(|h| h.join().ok()).unwrap_or_default()
        };
        Ok(CmdOutput { status: status.code(), stdout: collect(stdout), stderr: collect(stderr) })
    }

    fn nvml(&self) -> Result<NvmlReport, HostError> {
        super::nvml::query()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_command_past_its_limit_is_killed() {
        let started = Instant::now();
        let err = SystemHost.run(&Cmd::new(["sleep", "5"]).timeout(Duration::from_millis(200))).unwrap_err();
        assert!(matches!(err, HostError::Timeout { .. }), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn a_missing_program_is_not_found() {
        let err = SystemHost.run(&Cmd::new(["gpu-doctor-no-such-program"])).unwrap_err();
        assert!(err.is_not_found(), "{err:?}");
    }

    #[test]
    fn output_and_stdin_round_trip() {
        let out = SystemHost.run(&Cmd::new(["cat"]).stdin("hello")).unwrap();
        assert!(out.success());
        assert_eq!(out.stdout, "hello");
    }

    #[test]
    fn missing_files_are_not_found() {
        let err = SystemHost.read_file(Path::new("/no/such/file/here")).unwrap_err();
        assert!(err.is_not_found());
        assert_eq!(SystemHost.file_kind(Path::new("/no/such/file/here")), None);
    }
}
