//! One run at a time per environment: a lock file inside the environment (`.gpu-doctor.lock`,
//! holding the pid of the run that has it), locked with the system's advisory file lock from the
//! package-list backup to the end of the run and released when the run ends, however it ends
//! (the system drops the lock with the file, a crash and a kill included).

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::Path;

/// The lock file's name inside the environment.
pub(crate) const LOCK_FILE: &str = ".gpu-doctor.lock";

/// A held lock on one environment; dropping it releases the lock.
#[derive(Debug)]
pub(crate) struct EnvLock {
    _file: File,
}

/// Locks the environment at `env` (an existing folder) for this run; `Err` says who holds it, or
/// why it could not be locked. Never through a symbolic link.
pub(crate) fn lock(env: &Path) -> Result<EnvLock, String> {
    let path = env.join(LOCK_FILE);
    let shown = path.display();
    if path.symlink_metadata().is_ok_and(|m| !m.is_file()) {
        return Err(format!("{shown} is a link or not a regular file; nothing was changed"));
    }
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| format!("could not open the lock file {shown}: {e}; nothing was changed"))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let mut pid = String::new();
            let _ = (&file).take(32).read_to_string(&mut pid);
            let holder = match pid.trim() {
                "" => String::new(),
                pid => format!(" (pid {pid})"),
            };
            return Err(format!(
                "another gpu-doctor run{holder} is changing {} now (it holds {shown}); nothing was changed: \
                 run again when it has ended",
                env.display()
            ));
        }
        Err(TryLockError::Error(e)) => return Err(format!("could not lock {shown}: {e}; nothing was changed")),
    }
    // The holder's pid, for the message of a run that finds it locked.
    let _ = file.set_len(0).and_then(|()| file.rewind()).and_then(|()| writeln!(file, "{}", std::process::id()));
    Ok(EnvLock { _file: file })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let first = lock(dir.path()).unwrap();
        let err = lock(dir.path()).unwrap_err();
        assert!(
            err.contains("another gpu-doctor run") && err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        drop(first);
        lock(dir.path()).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_link_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().join(LOCK_FILE)).unwrap();
        assert!(lock(dir.path()).unwrap_err().contains("is a link"));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    }
}
