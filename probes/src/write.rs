//! The one writer of every file gpu-doctor makes: the binary's outputs (reports, benchmark runs,
//! fixtures, the window's settings and history) and the installers' package-list backups, which
//! undo depends on. The model does no I/O, so this lives with the host-facing code.
//!
//! A regular file is replaced atomically: the bytes go to a temporary sibling with a name of its
//! own (so two writes at once never share one), which takes the old file's permissions and is
//! renamed over it only once everything is on disk (`fsync`); on any error the temporary is removed
//! and the old file is untouched, so a full disk never leaves a truncated file under the real name.
//! Anything that is not a regular file is written through: a symlink's target (in place, never by
//! a rename over it), a device such as `/dev/null`, a fifo. A file gpu-doctor owns (a fixture, a
//! backup) is stricter ([`write_own_file`]).
//!
//! `-`, `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` and `/proc/self/fd/N` (or a symlink that leads to
//! one) name a stream, not a file ([`stream_of`]): standard output and error are written as this
//! process holds them, so `{ echo before; gpu-doctor report -o /dev/stdout; } >> build.log` appends,
//! and a pipe works; another descriptor is opened for appending, never truncated nor renamed over.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why a file was not written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The file is already there and the caller did not ask to replace it.
    #[error("{} already exists; add --force to replace it", .0.display())]
    AlreadyThere(PathBuf),
    /// The file system refused: what was being done, and its error.
    #[error("{what}")]
    Io {
        /// What was being done (`could not write PATH`).
        what: String,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The path is no place to write (a folder, a symlink where none is followed).
    #[error("{0}")]
    Refused(String),
}

impl WriteError {
    /// The whole message on one line, the operating system's error included (`could not write
    /// PATH: No space left on device`), for callers that report errors as text.
    pub fn chain(&self) -> String {
        match self {
            WriteError::Io { what, source } => format!("{what}: {source}"),
            e => e.to_string(),
        }
    }
}

type Result<T> = std::result::Result<T, WriteError>;

/// `with_context` for the results met here, as `anyhow` has it.
trait WithContext<T> {
    fn with_context<F: FnOnce() -> String>(self, what: F) -> Result<T>;
}

impl<T> WithContext<T> for io::Result<T> {
    fn with_context<F: FnOnce() -> String>(self, what: F) -> Result<T> {
        self.map_err(|source| WriteError::Io { what: what(), source })
    }
}

impl<T> WithContext<T> for Option<T> {
    fn with_context<F: FnOnce() -> String>(self, what: F) -> Result<T> {
        self.ok_or_else(|| WriteError::Refused(what()))
    }
}

macro_rules! bail {
    ($($t:tt)*) => { return Err(WriteError::Refused(format!($($t)*))) };
}

/// What puts the bytes into the open file: `write_all`, or in tests a full disk.
pub type Writer<'a> = dyn FnMut(&mut File, &[u8]) -> io::Result<()> + 'a;

/// Writes `bytes` to `path` (see the module's notes): a regular file is replaced atomically and
/// keeps its permissions, a symlink's target is written in place, a device or fifo is written
/// into, and a stream ([`stream_of`]) is written as this process holds it.
pub fn write_file(path: &Path, bytes: impl AsRef<[u8]>) -> Result<()> {
    write_with(path, bytes.as_ref(), &mut write_all)
}

/// A stream that an output path names instead of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output: `-`, `/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`.
    Stdout,
    /// Standard error: `/dev/stderr`, `/dev/fd/2`, `/proc/self/fd/2`.
    Stderr,
    /// Another open descriptor: `/dev/fd/N`, `/proc/self/fd/N`.
    Fd(u32),
}

/// The stream `path` names, if it names one: `-`, `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`,
/// `/proc/self/fd/N` or `/proc/thread-self/fd/N`, or a symlink that leads to one of them (each link
/// of the chain is read, none resolved by the OS: `/proc/self/fd/1` resolves to the file the shell
/// redirected to, or to nothing for a pipe).
pub fn stream_of(path: &Path) -> Option<Stream> {
    let mut here = path.to_path_buf();
    // The OS gives up after 40 links (Linux's MAXSYMLINKS); so does this.
    for _ in 0..40 {
        if let Some(stream) = named_stream(&here) {
            return Some(stream);
        }
        let target = std::fs::read_link(&here).ok()?;
        here = match here.parent() {
            Some(dir) if target.is_relative() => dir.join(target),
            _ => target,
        };
    }
    None
}

/// The stream `path` itself names (no link followed).
fn named_stream(path: &Path) -> Option<Stream> {
    let text = path.to_str()?;
    match text {
        "-" | "/dev/stdout" => return Some(Stream::Stdout),
        "/dev/stderr" => return Some(Stream::Stderr),
        _ => {}
    }
    let fd = ["/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"].iter().find_map(|p| text.strip_prefix(p))?;
    if fd.is_empty() || !fd.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(match fd.parse::<u32>().ok()? {
        1 => Stream::Stdout,
        2 => Stream::Stderr,
        n => Stream::Fd(n),
    })
}

/// Writes `bytes` into a stream. Standard output or error whose reader stopped reading
/// (`gpu-doctor report -o - | head`) is not an error: the output ends there, quietly.
fn write_stream(path: &Path, stream: Stream, bytes: &[u8], writer: &mut Writer<'_>) -> Result<()> {
    let written = match stream {
        Stream::Stdout => {
            let mut out = io::stdout().lock();
            out.write_all(bytes).and_then(|()| out.flush())
        }
        Stream::Stderr => {
            let mut out = io::stderr().lock();
            out.write_all(bytes).and_then(|()| out.flush())
        }
        Stream::Fd(_) => {
            // A descriptor other than 1 and 2 can only be reached by opening it again: for
            // appending, so the file behind it is neither truncated nor replaced.
            let mut file = OpenOptions::new()
                .append(true)
                .open(path)
                .with_context(|| format!("could not open {}", path.display()))?;
            writer(&mut file, bytes).and_then(|()| file.flush())
        }
    };
    match written {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe && matches!(stream, Stream::Stdout | Stream::Stderr) => Ok(()),
        other => other.with_context(|| format!("could not write {}", path.display())),
    }
}

/// Writes a file gpu-doctor owns (a fixture's `host.json`): never through a symlink or into
/// anything but a regular file, and an existing file only when `replace` (else `AlreadyThere`).
pub fn write_own_file(path: &Path, bytes: impl AsRef<[u8]>, replace: bool) -> Result<()> {
    write_own_file_with(path, bytes.as_ref(), replace, &mut write_all)
}

/// [`write_own_file`] with the step that puts the bytes into the open file given, so callers' tests
/// can make it fail the way a full disk does.
pub fn write_own_file_with(path: &Path, bytes: &[u8], replace: bool, writer: &mut Writer<'_>) -> Result<()> {
    let existing = check_own_file(path, replace)?;
    replace_atomically(path, existing.as_ref(), bytes, writer)
}

/// Whether `write_own_file` may write `path`: the metadata of the file it would replace, or the
/// reason it may not (an `AlreadyThere` when only `replace` is missing).
pub fn check_own_file(path: &Path, replace: bool) -> Result<Option<Metadata>> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("could not look at {}", path.display())),
        Ok(meta) if meta.file_type().is_symlink() => {
            bail!("{} is a symbolic link; gpu-doctor does not write through one here (remove it first)", path.display())
        }
        Ok(meta) if !meta.is_file() => bail!("{} is not a regular file", path.display()),
        Ok(_) if !replace => Err(WriteError::AlreadyThere(path.to_path_buf())),
        Ok(meta) => Ok(Some(meta)),
    }
}

/// The usual [`Writer`]: all the bytes.
pub fn write_all(file: &mut File, bytes: &[u8]) -> io::Result<()> {
    file.write_all(bytes)
}

/// `write_file` with the step that puts the bytes into the open file replaceable, so tests can
/// make it fail the way a full disk does.
fn write_with(path: &Path, bytes: &[u8], writer: &mut Writer<'_>) -> Result<()> {
    if let Some(stream) = stream_of(path) {
        return write_stream(path, stream, bytes, writer);
    }
    let meta = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return replace_atomically(path, None, bytes, writer),
        Err(e) => return Err(e).with_context(|| format!("could not look at {}", path.display())),
        Ok(meta) => meta,
    };
    if meta.file_type().is_symlink() {
        let target = std::fs::canonicalize(path).with_context(|| {
            format!("{} is a symbolic link to nothing; gpu-doctor does not follow it", path.display())
        })?;
        // Written in place: a rename would replace what the link points to (wherever that is)
        // with a new file of this process's, and no longer the one the link's owner meant.
        return match std::fs::symlink_metadata(&target) {
            Ok(m) if m.is_dir() => bail!("{} leads to a folder ({})", path.display(), target.display()),
            Ok(_) => write_through(&target, bytes, writer),
            Err(e) => Err(e).with_context(|| format!("could not look at {}", target.display())),
        };
    }
    if meta.is_file() {
        replace_atomically(path, Some(&meta), bytes, writer)
    } else if meta.is_dir() {
        bail!("{} is a folder", path.display())
    } else {
        write_through(path, bytes, writer)
    }
}

/// Writes into a device, fifo or socket as it is: replacing it would turn it into a file.
fn write_through(path: &Path, bytes: &[u8], writer: &mut Writer<'_>) -> Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .with_context(|| format!("could not open {}", path.display()))?;
    writer(&mut file, bytes).and_then(|()| file.flush()).with_context(|| format!("could not write {}", path.display()))
}

/// A temporary file that is removed when dropped, unless it was moved into place.
struct Temporary {
    path: PathBuf,
    placed: bool,
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if !self.placed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Creates a new, uniquely named temporary file next to `path`: `.NAME.PID-N.tmp-gpu-doctor`.
fn create_temporary(path: &Path) -> Result<(Temporary, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().with_context(|| format!("{} does not name a file", path.display()))?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut last = None;
    for _ in 0..100 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{}.{}-{n}.tmp-gpu-doctor", name.to_string_lossy(), std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(file) => return Ok((Temporary { path: tmp, placed: false }, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e).with_context(|| format!("could not create a file in {}", dir.display())),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free name")))
        .with_context(|| format!("could not find a free temporary name in {}", dir.display()))
}

/// Writes a temporary sibling and renames it over `path`; `existing` is the file it replaces,
/// whose permissions (and, where allowed, owner) the new file keeps.
fn replace_atomically(path: &Path, existing: Option<&Metadata>, bytes: &[u8], writer: &mut Writer<'_>) -> Result<()> {
    let (mut tmp, mut file) = create_temporary(path)?;
    writer(&mut file, bytes).with_context(|| format!("could not write {}", path.display()))?;
    if let Some(meta) = existing {
        file.set_permissions(meta.permissions())
            .with_context(|| format!("could not give {} the permissions of the file it replaces", path.display()))?;
        keep_owner(&file, meta);
    }
    file.sync_all().with_context(|| format!("could not write {}", path.display()))?;
    drop(file);
    std::fs::rename(&tmp.path, path)
        .with_context(|| format!("could not move the new {} into place", path.display()))?;
    tmp.placed = true;
    Ok(())
}

/// Gives the new file the old one's owner and group when they differ and the OS allows it (root
/// replacing a user's file); otherwise the writer owns it, as with any new file.
#[cfg(unix)]
fn keep_owner(file: &File, old: &Metadata) {
    use std::os::unix::fs::MetadataExt;
    if let Ok(new) = file.metadata()
        && (new.uid(), new.gid()) != (old.uid(), old.gid())
    {
        let _ = std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid()));
    }
}

#[cfg(not(unix))]
fn keep_owner(_: &File, _: &Metadata) {}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    /// Every name in a folder, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn a_new_file_is_written_and_no_temporary_stays() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.md");
        write_file(&path, "hello").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "hello");
        assert_eq!(names(dir.path()), ["r.md"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_private_file_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.md");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_file(&path, "new, unredacted").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new, unredacted");
        assert_eq!(mode(&path), 0o600, "replacing a 600 file must not widen who can read it");
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_written_through_and_stays_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.md");
        let link = dir.path().join("link.md");
        std::fs::write(&target, "old").unwrap();
        std::os::unix::fs::symlink("real.md", &link).unwrap();
        write_file(&link, "new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(names(dir.path()), ["link.md", "real.md"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinks_target_is_written_in_place_not_renamed_over() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.md");
        std::fs::write(&target, "old").unwrap();
        // A second name for the same file: a rename over `real.md` would leave it the old bytes.
        std::fs::hard_link(&target, dir.path().join("same.md")).unwrap();
        let inode = std::fs::metadata(&target).unwrap().ino();
        let link = dir.path().join("link.md");
        std::os::unix::fs::symlink("real.md", &link).unwrap();
        write_file(&link, "new").unwrap();
        assert_eq!(std::fs::metadata(&target).unwrap().ino(), inode, "the link's target was replaced");
        assert_eq!(std::fs::read_to_string(dir.path().join("same.md")).unwrap(), "new");
    }

    #[cfg(unix)]
    #[test]
    fn standard_streams_and_descriptors_are_streams_by_name_and_through_links() {
        for (path, stream) in [
            ("-", Stream::Stdout),
            ("/dev/stdout", Stream::Stdout),
            ("/dev/stderr", Stream::Stderr),
            ("/dev/fd/1", Stream::Stdout),
            ("/proc/self/fd/2", Stream::Stderr),
            ("/proc/thread-self/fd/1", Stream::Stdout),
            ("/dev/fd/7", Stream::Fd(7)),
        ] {
            assert_eq!(stream_of(Path::new(path)), Some(stream), "{path}");
        }
        for path in ["./-", "--", "/dev/fd/", "/dev/fd/1x", "/dev/fd/+1", "/dev/null", "/proc/1/fd/1", "r.md"] {
            assert_eq!(stream_of(Path::new(path)), None, "{path}");
        }
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let hop = dir.path().join("hop");
        std::os::unix::fs::symlink("/dev/stdout", &hop).unwrap();
        std::os::unix::fs::symlink("hop", &out).unwrap();
        assert_eq!(stream_of(&out), Some(Stream::Stdout));
        let looped = dir.path().join("loop");
        std::os::unix::fs::symlink("loop", &looped).unwrap();
        assert_eq!(stream_of(&looped), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_descriptor_is_appended_to_not_truncated_nor_replaced() {
        use std::os::unix::io::AsRawFd;
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("build.log");
        std::fs::write(&log, "before\n").unwrap();
        let held = OpenOptions::new().append(true).open(&log).unwrap();
        let fd = held.as_raw_fd();
        write_file(Path::new(&format!("/proc/self/fd/{fd}")), "report\n").unwrap();
        write_file(Path::new(&format!("/dev/fd/{fd}")), "again\n").unwrap();
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "before\nreport\nagain\n");
        assert_eq!(names(dir.path()), ["build.log"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_device_node_is_written_through_and_stays_a_device() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        // A private copy of /dev/null where mknod is allowed (root), so the old behaviour could
        // not turn the machine's own /dev/null into a file; else /dev/null, which a user who
        // cannot mknod cannot replace either.
        let own = dir.path().join("null");
        let made = std::process::Command::new("mknod")
            .arg(&own)
            .args(["c", "1", "3"])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        let node = if made { own } else { std::path::PathBuf::from("/dev/null") };
        eprintln!("device node under test: {}", node.display());
        write_file(&node, "report").unwrap();
        assert!(
            std::fs::symlink_metadata(&node).unwrap().file_type().is_char_device(),
            "{} was replaced",
            node.display()
        );
        if made {
            assert_eq!(names(dir.path()), ["null"]);
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_written_through() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        {
            let fifo = fifo.clone();
            // Waits for a writer; if the fifo was replaced, none ever comes, hence the timeout below.
            let reader = move || tx.send(std::fs::read_to_string(fifo).unwrap());
            std::thread::Builder::new().name("fifo-reader".into()).spawn(reader).unwrap();
        }
        let written = write_file(&fifo, "through the pipe");
        assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the fifo was replaced");
        written.unwrap();
        let read = rx.recv_timeout(std::time::Duration::from_secs(20)).expect("the reader got nothing");
        assert_eq!(read, "through the pipe");
    }

    #[test]
    fn a_failed_write_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("r.md");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("keep"), "x").unwrap();
        assert!(write_file(&folder, "report").is_err());
        assert_eq!(names(dir.path()), ["r.md"], "a temporary file was left behind");
        assert_eq!(names(&folder), ["keep"]);
    }

    #[test]
    fn sibling_exports_at_once_keep_their_own_content() {
        let dir = tempfile::tempdir().unwrap();
        let md = dir.path().join("r.md");
        let html = dir.path().join("r.html");
        let md_text = "m".repeat(1 << 20);
        let html_text = "h".repeat(1 << 20);
        for round in 0..40 {
            let barrier = std::sync::Barrier::new(2);
            std::thread::scope(|s| {
                let a = s.spawn(|| {
                    barrier.wait();
                    write_file(&md, &md_text)
                });
                let b = s.spawn(|| {
                    barrier.wait();
                    write_file(&html, &html_text)
                });
                a.join().unwrap().unwrap_or_else(|e| panic!("round {round}: r.md: {e:#}"));
                b.join().unwrap().unwrap_or_else(|e| panic!("round {round}: r.html: {e:#}"));
            });
            assert!(std::fs::read_to_string(&md).unwrap() == md_text, "round {round}: r.md has the wrong content");
            assert!(
                std::fs::read_to_string(&html).unwrap() == html_text,
                "round {round}: r.html has the wrong content"
            );
            assert_eq!(names(dir.path()), ["r.html", "r.md"], "round {round}");
        }
    }

    #[test]
    fn a_full_disk_keeps_the_previous_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.md");
        std::fs::write(&path, "previous").unwrap();
        // What a full disk does: part of the bytes go in, then ENOSPC.
        let mut full_disk = |file: &mut File, bytes: &[u8]| {
            file.write_all(&bytes[..bytes.len() / 2])?;
            Err(io::Error::from(io::ErrorKind::StorageFull))
        };
        let err = write_with(&path, b"a new report that does not fit", &mut full_disk).unwrap_err();
        assert!(format!("{err:#}").contains("could not write"), "{err:#}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "previous");
        assert_eq!(names(dir.path()), ["r.md"]);
        // The same for a file that did not exist yet.
        let new = dir.path().join("new.md");
        assert!(write_with(&new, b"x", &mut full_disk).is_err());
        assert_eq!(names(dir.path()), ["r.md"]);
    }

    #[cfg(unix)]
    #[test]
    fn own_files_are_never_written_through_links_nor_replaced_unasked() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let link = dir.path().join("host.json");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        for replace in [false, true] {
            let err = write_own_file(&link, "{}", replace).unwrap_err();
            assert!(format!("{err:#}").contains("symbolic link"), "{err:#}");
        }
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        std::fs::remove_file(&link).unwrap();

        write_own_file(&link, "one", false).unwrap();
        let err = write_own_file(&link, "two", false).unwrap_err();
        assert!(matches!(err, WriteError::AlreadyThere(_)), "{err:#}");
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "one");
        write_own_file(&link, "two", true).unwrap();
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "two");
        assert_eq!(names(dir.path()), ["host.json", "victim"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_new_file_gets_the_usual_mode_not_the_temporary_s() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.md");
        write_file(&path, "x").unwrap();
        std::fs::write(dir.path().join("plain"), "x").unwrap();
        assert_eq!(mode(&path), mode(&dir.path().join("plain")));
    }
}
