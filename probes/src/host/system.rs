//! `SystemHost`: the only code in the probes that touches this machine.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{SystemTime, UNIX_EPOCH};

use super::process::{self, Ending, Event, Flow, Limits, Output, Stream};
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
            dmi: None,
        }
    }

    fn env_var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }

    fn env_vars(&self) -> BTreeMap<String, String> {
        std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect()
    }

    fn read_file(&self, path: &Path) -> Result<String, HostError> {
        let bytes = super::read_regular_file(path, MAX_FILE_BYTES, super::Links::Follow)?;
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
        let mut command = Command::new(program);
        command.args(args).stdin(if cmd.stdin.is_some() { Stdio::piped() } else { Stdio::null() });
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut group = process::spawn(&mut command).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                HostError::NotFound { what: program.clone() }
            } else {
                HostError::Io { message: format!("could not start: {e}"), what: what.clone() }
            }
        })?;
        let child = group.child();
        if let (Some(text), Some(mut stdin)) = (cmd.stdin.clone(), child.stdin.take()) {
            // A writer thread, so a program that does not read its input cannot block us.
            let _ = thread::Builder::new().name("host-stdin".into()).spawn(move || {
                let _ = stdin.write_all(text.as_bytes());
            });
        }
        // The output has the same deadline as the program: one that exits while a child it started
        // keeps the pipes open must not hold the probe past its limit.
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        let outcome = group.supervise(&Limits::chunks(cmd.timeout, MAX_OUTPUT_BYTES), &mut |event| {
            if let Event::Output(Output::Chunk(stream, bytes)) = event {
                match stream {
                    Stream::Out => stdout.extend_from_slice(&bytes),
                    Stream::Err => stderr.extend_from_slice(&bytes),
                }
            }
            Flow::Go
        });
        if outcome.ending == Ending::TimedOut {
            return Err(HostError::Timeout {
                after_ms: u64::try_from(cmd.timeout.as_millis()).unwrap_or(u64::MAX),
                what,
            });
        }
        Ok(CmdOutput {
            status: outcome.status.and_then(|s| s.code()),
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
        })
    }

    fn nvml(&self) -> Result<NvmlReport, HostError> {
        super::nvml_handle::with_deadline("the NVML query", super::nvml_handle::QUERY_DEADLINE, super::nvml::query)
    }

    #[cfg(target_os = "linux")]
    fn kernel_messages(&self) -> Result<String, HostError> {
        read_kmsg(std::path::Path::new(super::KMSG))
    }
}

/// Reads every record of the kernel's message buffer at `path` without blocking: one record per
/// `read`, until the buffer is drained (`EAGAIN`); a record overwritten while reading (`EPIPE`) is
/// skipped. At most `MAX_FILE_BYTES` of text. Not permitted (`kernel.dmesg_restrict`) is an error.
#[cfg(target_os = "linux")]
fn read_kmsg(path: &std::path::Path) -> Result<String, HostError> {
    use std::io::{ErrorKind, Read};
    use std::os::unix::fs::OpenOptionsExt;
    let io = |e: std::io::Error| HostError::Io { message: e.to_string(), what: path.display().to_string() };
    let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::CLOEXEC;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(i32::try_from(flags.bits()).unwrap_or_default())
        .open(path)
        .map_err(io)?;
    let mut out = String::new();
    // A record is at most about 1 KiB of text plus its dictionary; 8 KiB is what dmesg reads with.
    let mut buf = vec![0u8; 8192];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if let Some(line) = super::kmsg_line(&String::from_utf8_lossy(&buf[..n])) {
                    if out.len() + line.len() + 1 > super::MAX_FILE_BYTES {
                        break;
                    }
                    out.push_str(&line);
                    out.push('\n');
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::PIPE.raw_os_error()) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(io(e)),
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Where this machine lets us read both, the buffer read directly holds what `dmesg` prints
    /// (records that came in between aside).
    #[cfg(target_os = "linux")]
    #[test]
    fn kmsg_holds_what_dmesg_prints() {
        let Ok(direct) = read_kmsg(std::path::Path::new("/dev/kmsg")) else { return };
        let Ok(out) = std::process::Command::new("dmesg").output() else { return };
        if !out.status.success() {
            return;
        }
        let direct: std::collections::BTreeSet<&str> = direct.lines().collect();
        let printed = String::from_utf8_lossy(&out.stdout);
        let missing: Vec<&str> = printed.lines().filter(|l| !direct.contains(l)).collect();
        assert!(
            missing.len() <= 2,
            "{} of dmesg's lines are not read: {:?}",
            missing.len(),
            &missing[..missing.len().min(5)]
        );
        assert!(!direct.is_empty());
    }
    use std::time::{Duration, Instant};

    #[test]
    fn a_command_past_its_limit_is_killed() {
        let started = Instant::now();
        let err = SystemHost.run(&Cmd::new(["sleep", "5"]).timeout(Duration::from_millis(200))).unwrap_err();
        assert!(matches!(err, HostError::Timeout { .. }), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(3));
    }

    fn alive(pid: &str) -> bool {
        super::process::is_running(pid.trim().parse().unwrap()).unwrap()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_program_that_leaves_a_child_holding_its_output_answers_at_once_and_the_child_dies() {
        let started = Instant::now();
        let out =
            SystemHost.run(&Cmd::new(["sh", "-c", "sleep 30 & echo $!"]).timeout(Duration::from_secs(20))).unwrap();
        assert!(started.elapsed() < Duration::from_secs(5), "waited {:?} for a leftover child", started.elapsed());
        assert!(out.success(), "{out:?}");
        let pid = out.stdout.trim().to_owned();
        assert!(!pid.is_empty() && pid.chars().all(|c| c.is_ascii_digit()), "{out:?}");
        let until = Instant::now() + Duration::from_secs(2);
        while alive(&pid) && Instant::now() < until {
            thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(&pid), "the child {pid} the program left behind still runs");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_timed_out_program_dies_with_everything_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let script = format!("sleep 30 & echo $! > '{}'; sleep 30", pidfile.display());
        let started = Instant::now();
        let err = SystemHost.run(&Cmd::new(["sh", "-c", &script]).timeout(Duration::from_millis(500))).unwrap_err();
        assert!(matches!(err, HostError::Timeout { .. }), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
        let pid = std::fs::read_to_string(&pidfile).unwrap();
        let until = Instant::now() + Duration::from_secs(2);
        while alive(&pid) && Instant::now() < until {
            thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(&pid), "the grandchild {} outlived its timed-out parent", pid.trim());
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
