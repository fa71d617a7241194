//! The `Host` trait: the only way probes touch a machine.
//!
//! `SystemHost` touches this machine, `ReplayHost` answers from a recorded fixture folder, and
//! `RecordingHost` wraps `SystemHost` and writes such a folder.

pub mod ecc;
mod fixture;
pub mod nvml;
mod nvml_handle;
pub mod nvml_topology;
pub mod paths;
pub mod process;
pub mod processes;
mod recording;
mod replay;
mod system;
pub mod telemetry;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use fixture::{CommandRecord, FIXTURE_FILE, Fixture, NvmlAnswer};
use gpu_doctor_model::{OsFamily, Platform, SystemInfo};
pub use nvml::{NvmlDevice, NvmlReport};
pub use nvml_topology::{NvmlPair, NvmlTopoDevice, NvmlTopology};
pub use recording::RecordingHost;
pub use replay::ReplayHost;
pub use system::SystemHost;

/// Largest file `read_file` returns; longer files are an error (sysfs and version files are tiny).
pub const MAX_FILE_BYTES: usize = 8 * 1024 * 1024;
/// Largest stdout or stderr a command may print before the rest is cut.
pub const MAX_OUTPUT_BYTES: usize = 8 * 1024 * 1024;

/// Whether [`read_regular_file`] follows a symlink at the path itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Follow it (the probes' sysfs paths are links).
    Follow,
    /// Refuse it: a file named by another file (a fleet manifest's row, a node's output) is read
    /// only where it is, never where a planted link sends it.
    Refuse,
}

/// The one capped reader of files: opens `path` without blocking (a fifo with no writer does not
/// hang it), checks on the open file that it is a regular file (a device such as `/dev/zero` or
/// a fifo is refused; a size check before opening would see 0 for both), then reads at most
/// `cap` bytes: a longer file is an error, never a cut one. Errors name the path.
pub fn read_regular_file(path: &Path, cap: usize, links: Links) -> Result<Vec<u8>, HostError> {
    use std::io::Read;
    let what = || path.display().to_string();
    let io = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => HostError::NotFound { what: what() },
        _ if links == Links::Refuse && e.raw_os_error() == Some(rustix_eloop()) => {
            HostError::Io { message: "a symbolic link, not followed".to_owned(), what: what() }
        }
        _ => HostError::Io { message: e.to_string(), what: what() },
    };
    let file = open_nonblocking(path, links).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(HostError::Io { message: "not a regular file".to_owned(), what: what() });
    }
    let mut bytes = Vec::new();
    file.take(cap as u64 + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() > cap {
        return Err(HostError::Io { message: format!("file larger than {cap} bytes"), what: what() });
    }
    Ok(bytes)
}

#[cfg(unix)]
fn open_nonblocking(path: &Path, links: Links) -> std::io::Result<std::fs::File> {
    use rustix::fs::OFlags;
    use std::os::unix::fs::OpenOptionsExt;
    let mut flags = OFlags::NONBLOCK | OFlags::NOCTTY;
    if links == Links::Refuse {
        flags |= OFlags::NOFOLLOW;
    }
    std::fs::OpenOptions::new().read(true).custom_flags(flags.bits().cast_signed()).open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path, links: Links) -> std::io::Result<std::fs::File> {
    if links == Links::Refuse && std::fs::symlink_metadata(path)?.file_type().is_symlink() {
        return Err(std::io::Error::other("a symbolic link, not followed"));
    }
    std::fs::File::open(path)
}

/// The OS's "too many levels of symbolic links", which `O_NOFOLLOW` answers for a link.
fn rustix_eloop() -> i32 {
    #[cfg(unix)]
    {
        rustix::io::Errno::LOOP.raw_os_error()
    }
    #[cfg(not(unix))]
    {
        -1
    }
}

/// Why a host could not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HostError {
    /// The path or program does not exist.
    #[error("not found: {what}")]
    NotFound { what: String },
    /// The OS refused or failed the operation.
    #[error("{message}: {what}")]
    Io { message: String, what: String },
    /// A program ran past its time limit and was killed.
    #[error("timed out after {after_ms} ms: {what}")]
    Timeout { after_ms: u64, what: String },
    /// A replay fixture does not hold this answer.
    #[error("not recorded in the replay fixture: {what}")]
    NotRecorded { what: String },
    /// This host cannot do this here (e.g. NVML without a driver library).
    #[error("{message}")]
    Unavailable { message: String },
}

impl HostError {
    /// True when the error means "there is nothing there" rather than a failure.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::NotFound { .. })
    }
}

/// One program run: argv (no shell), optional standard input, a time limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cmd {
    /// Program and arguments; the program is a name looked up on PATH or a path.
    pub argv: Vec<String>,
    /// Text written to standard input, which is then closed.
    pub stdin: Option<String>,
    /// The run is killed after this long.
    pub timeout: Duration,
}

impl Cmd {
    /// A command with the default time limit of 10 s.
    pub fn new<I, S>(argv: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self { argv: argv.into_iter().map(Into::into).collect(), stdin: None, timeout: Duration::from_secs(10) }
    }

    /// Sets the time limit.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets standard input.
    #[must_use]
    pub fn stdin(mut self, text: impl Into<String>) -> Self {
        self.stdin = Some(text.into());
        self
    }

    /// The command line, for messages.
    pub fn display(&self) -> String {
        self.argv.join(" ")
    }
}

/// What a finished program printed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CmdOutput {
    /// Exit code; `None` when killed by a signal.
    pub status: Option<i32>,
    /// Standard output, lossily decoded, capped at `MAX_OUTPUT_BYTES`.
    pub stdout: String,
    /// Standard error, likewise.
    pub stderr: String,
}

impl CmdOutput {
    /// True when the program exited with status 0.
    pub fn success(&self) -> bool {
        self.status == Some(0)
    }
}

/// What kind of file a path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    File,
    Dir,
    Symlink,
}

/// One entry of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct DirEntry {
    /// The entry's file name.
    pub name: String,
    /// Its kind, not following a symlink.
    pub kind: FileKind,
}

/// Everything a probe may ask of a machine.
pub trait Host: Send + Sync {
    /// The OS family and CPU architecture.
    fn platform(&self) -> Platform;
    /// Seconds since the Unix epoch (a replay answers its recording time).
    fn now_unix_secs(&self) -> u64;
    /// OS, CPU and memory facts.
    fn system_info(&self) -> SystemInfo;
    /// One environment variable; `None` when unset or not Unicode.
    fn env_var(&self, name: &str) -> Option<String>;
    /// All environment variables (a recording keeps only those `probe::env::is_relevant` names).
    fn env_vars(&self) -> BTreeMap<String, String>;
    /// A text file, lossily decoded; at most `MAX_FILE_BYTES`.
    fn read_file(&self, path: &Path) -> Result<String, HostError>;
    /// Where a symlink points, as stored in the link.
    fn read_link(&self, path: &Path) -> Result<PathBuf, HostError>;
    /// A directory's entries, sorted by name.
    fn list_dir(&self, path: &Path) -> Result<Vec<DirEntry>, HostError>;
    /// What the path names after following symlinks; `None` when nothing is there.
    fn file_kind(&self, path: &Path) -> Option<FileKind>;
    /// Runs a program without a shell, killing it at its time limit.
    fn run(&self, cmd: &Cmd) -> Result<CmdOutput, HostError>;
    /// Everything NVML answers about the driver and each device.
    fn nvml(&self) -> Result<NvmlReport, HostError>;
    /// The kernel's message buffer read directly (`/dev/kmsg`), one line per record as `dmesg`
    /// prints it (`[   54.047067] message`), so no `dmesg` process is started. The system host reads
    /// it (a recording keeps it as the fixture's file `/dev/kmsg`); a fixture without it answers
    /// `Unavailable`, and the kernel-log probe runs `dmesg` (which older fixtures recorded).
    fn kernel_messages(&self) -> Result<String, HostError> {
        Err(HostError::Unavailable { message: "this host does not read /dev/kmsg".to_owned() })
    }
}

/// The kernel's message buffer, which [`Host::kernel_messages`] reads (and a fixture keeps as a
/// file of this path).
pub const KMSG: &str = "/dev/kmsg";

/// One `/dev/kmsg` record (`PRIORITY,SEQUENCE,MICROSECONDS,FLAGS[,…];MESSAGE`, then optional
/// continuation lines that start with a space) as `dmesg` prints it: `[SSSSS.UUUUUU] MESSAGE`,
/// the `\xNN` escapes of the message undone. `None` for a record of another shape. Format:
/// Linux's Documentation/ABI/testing/dev-kmsg.
pub fn kmsg_line(record: &str) -> Option<String> {
    let first = record.lines().next()?;
    let (prefix, message) = first.split_once(';')?;
    let mut fields = prefix.split(',');
    let (_priority, _sequence, usec) = (fields.next()?, fields.next()?, fields.next()?);
    let usec: u64 = usec.parse().ok()?;
    let mut text = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(i) = rest.find("\\x") {
        text.push_str(&rest[..i]);
        let hex = rest.get(i + 2..i + 4).and_then(|h| u8::from_str_radix(h, 16).ok());
        match hex {
            Some(byte) => {
                text.push(char::from(byte));
                rest = &rest[i + 4..];
            }
            None => {
                text.push('\\');
                rest = &rest[i + 1..];
            }
        }
    }
    text.push_str(rest);
    Some(format!("[{:>5}.{:06}] {text}", usec / 1_000_000, usec % 1_000_000))
}

/// True when `path` names a file (after following links).
pub fn is_file(host: &dyn Host, path: &Path) -> bool {
    host.file_kind(path) == Some(FileKind::File)
}

/// True when `path` names a folder (after following links).
pub fn is_dir(host: &dyn Host, path: &Path) -> bool {
    host.file_kind(path) == Some(FileKind::Dir)
}

/// The names in a folder; empty when it cannot be listed.
pub fn dir_names(host: &dyn Host, dir: &Path) -> Vec<String> {
    host.list_dir(dir).map(|entries| entries.into_iter().map(|e| e.name).collect()).unwrap_or_default()
}

/// Finds a program the way a shell would: a path is taken as is, a bare name is looked up on
/// `PATH` (with `PATHEXT` on Windows). `None` when not found.
pub fn which(host: &dyn Host, program: &str) -> Option<PathBuf> {
    let platform = host.platform();
    let p = Path::new(program);
    if p.components().count() > 1 {
        return is_file(host, p).then(|| p.to_path_buf());
    }
    let windows = platform.os == OsFamily::Windows;
    let sep = if windows { ';' } else { ':' };
    let exts: Vec<String> = if windows {
        let pathext = host.env_var("PATHEXT").unwrap_or_else(|| ".EXE;.BAT;.CMD".to_owned());
        std::iter::once(String::new()).chain(pathext.split(';').map(str::to_lowercase)).collect()
    } else {
        vec![String::new()]
    };
    let path = host.env_var("PATH")?;
    path.split(sep).filter(|d| !d.is_empty()).find_map(|dir| {
        exts.iter().find_map(|ext| {
            let candidate = Path::new(dir).join(format!("{program}{ext}"));
            is_file(host, &candidate).then_some(candidate)
        })
    })
}

/// The user's home folder from `HOME` (or `USERPROFILE` on Windows).
pub fn home_dir(host: &dyn Host) -> Option<PathBuf> {
    let var = if host.platform().os == OsFamily::Windows { "USERPROFILE" } else { "HOME" };
    host.env_var(var).filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// The directories on `PATH`, in order.
pub fn path_dirs(host: &dyn Host) -> Vec<PathBuf> {
    let sep = if host.platform().os == OsFamily::Windows { ';' } else { ':' };
    host.env_var("PATH")
        .map(|p| p.split(sep).filter(|d| !d.is_empty()).map(PathBuf::from).collect())
        .unwrap_or_default()
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// The records of Linux's Documentation/ABI/testing/dev-kmsg, as `dmesg` prints them.
    #[test]
    fn kmsg_records_read_as_dmesg_prints_them() {
        let record = "7,160,424069,-;pci_root PNP0A03:00: host bridge window [io  0x0000-0x0cf7] (ignored)\n \
                      SUBSYSTEM=acpi\n DEVICE=+acpi:PNP0A03:00\n";
        assert_eq!(
            kmsg_line(record).as_deref(),
            Some("[    0.424069] pci_root PNP0A03:00: host bridge window [io  0x0000-0x0cf7] (ignored)")
        );
        assert_eq!(
            kmsg_line("6,339,5140900,-;NET: Registered protocol family 10\n").as_deref(),
            Some("[    5.140900] NET: Registered protocol family 10")
        );
        // An Xid line long after boot, and the escapes the kernel writes for bytes it will not print.
        assert_eq!(
            kmsg_line("4,1024,6781741548779,-;NVRM: Xid (PCI:0000:91:00): 79, GPU has fallen off the bus.\\x0a")
                .as_deref(),
            Some("[6781741.548779] NVRM: Xid (PCI:0000:91:00): 79, GPU has fallen off the bus.\n")
        );
        assert_eq!(kmsg_line("6,1,5,-;a \\xzz b").as_deref(), Some("[    0.000005] a \\xzz b"));
        for bad in ["", "no prefix", "6,1;x", "6,1,notime,-;x", "\u{0}\u{ff};;;"] {
            assert_eq!(kmsg_line(bad), None, "{bad:?}");
        }
        let huge = format!("6,1,1,-;{}", "x".repeat(1 << 20));
        assert_eq!(kmsg_line(&huge).map(|l| l.len()), Some(15 + (1 << 20)));
    }

    #[test]
    fn devices_and_fifos_are_refused_at_once_and_files_read_up_to_the_cap() {
        let err = read_regular_file(Path::new("/dev/zero"), 1 << 20, Links::Follow).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        // No writer ever comes: a blocking open would hang here.
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let read = move || tx.send(read_regular_file(&fifo, 1 << 20, Links::Follow).map(|_| ()));
        std::thread::Builder::new().name("fifo-read".into()).spawn(read).unwrap();
        let read = rx.recv_timeout(Duration::from_secs(20)).expect("reading a fifo hung");
        assert!(read.unwrap_err().to_string().contains("not a regular file"));

        let file = dir.path().join("r.json");
        std::fs::write(&file, "0123456789").unwrap();
        assert_eq!(read_regular_file(&file, 10, Links::Refuse).unwrap(), b"0123456789");
        let err = read_regular_file(&file, 9, Links::Refuse).unwrap_err();
        assert!(err.to_string().contains("larger than 9 bytes"), "{err}");
        assert!(matches!(
            read_regular_file(&dir.path().join("none"), 9, Links::Follow),
            Err(HostError::NotFound { .. })
        ));
    }

    #[test]
    fn a_symlink_is_followed_only_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("secret"), "token").unwrap();
        let link = dir.path().join("gpu01.json");
        std::os::unix::fs::symlink("secret", &link).unwrap();
        assert_eq!(read_regular_file(&link, 100, Links::Follow).unwrap(), b"token");
        let err = read_regular_file(&link, 100, Links::Refuse).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
    }
}
