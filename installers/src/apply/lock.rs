//! One run at a time per environment: a lock file inside the environment (`.gpu-doctor.lock`,
//! holding the pid of the run that has it), locked with the system's advisory file lock from the
//! package-list backup to the end of the run and released when the run ends, however it ends
//! (the system drops the lock with the file, a crash and a kill included).

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{ErrorKind, Read, Seek, Write};
use std::path::Path;

/// The lock file's name inside the environment.
pub(crate) const LOCK_FILE: &str = ".gpu-doctor.lock";

/// A held lock on one environment; dropping it releases the lock.
#[derive(Debug)]
pub(crate) struct EnvLock {
    _file: File,
}

/// Locks the environment at `env` (an existing folder) for this run; `Err` says who holds it, or
/// why it could not be locked. Never through a symbolic link. An environment this user cannot
/// write to (a system prefix, where pip installs into the user's site instead) is locked by a
/// file named after it in `spare/locks/` (the data folder's), which every run of this user shares.
pub(crate) fn lock(env: &Path, spare: &Path) -> Result<EnvLock, String> {
    match lock_at(&env.join(LOCK_FILE), env) {
        Err(Refused::Open(e)) if matches!(e.kind(), ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem) => {
            let name = env.canonicalize().unwrap_or_else(|_| env.to_owned()).display().to_string();
            let dir = spare.join("locks");
            std::fs::create_dir_all(&dir).map_err(|e| format!("could not create {}: {e}", dir.display()))?;
            lock_at(&dir.join(format!("{}.lock", super::log::file_safe(&name))), env).map_err(Refused::said)
        }
        other => other.map_err(Refused::said),
    }
}

/// Why a lock was not taken.
enum Refused {
    /// The lock file could not be opened.
    Open(std::io::Error),
    /// Anything else, said.
    Said(String),
}

impl Refused {
    fn said(self) -> String {
        match self {
            Refused::Open(e) => format!("could not open the lock file: {e}; nothing was changed"),
            Refused::Said(why) => why,
        }
    }
}

fn lock_at(path: &Path, env: &Path) -> Result<EnvLock, Refused> {
    let shown = path.display();
    if path.symlink_metadata().is_ok_and(|m| !m.is_file()) {
        return Err(Refused::Said(format!("{shown} is a link or not a regular file; nothing was changed")));
    }
    let mut file =
        OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path).map_err(Refused::Open)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let mut pid = String::new();
            let _ = (&file).take(32).read_to_string(&mut pid);
            let holder = match pid.trim() {
                "" => String::new(),
                pid => format!(" (pid {pid})"),
            };
            return Err(Refused::Said(format!(
                "another gpu-doctor run{holder} is changing {} now (it holds {shown}); nothing was changed: \
                 run again when it has ended",
                env.display()
            )));
        }
        Err(TryLockError::Error(e)) => {
            return Err(Refused::Said(format!("could not lock {shown}: {e}; nothing was changed")));
        }
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
        let first = lock(dir.path(), dir.path()).unwrap();
        let err = lock(dir.path(), dir.path()).unwrap_err();
        assert!(
            err.contains("another gpu-doctor run") && err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        drop(first);
        lock(dir.path(), dir.path()).unwrap();
    }

    /// An environment this user cannot write to is locked in the data folder instead.
    #[cfg(unix)]
    #[test]
    fn a_read_only_environment_is_locked_in_the_spare_folder() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mut env = dir.path().join("env");
        let data = dir.path().join("data");
        std::fs::create_dir(&env).unwrap();
        std::fs::set_permissions(&env, std::fs::Permissions::from_mode(0o555)).unwrap();
        if std::fs::write(env.join("probe"), "").is_ok() {
            // As root every folder is writable; sysfs refuses new files to root too.
            env = Path::new("/sys").to_owned();
        }
        let first = lock(&env, &data).unwrap();
        assert!(lock(&env, &data).unwrap_err().contains("another gpu-doctor run"));
        assert_eq!(std::fs::read_dir(data.join("locks")).unwrap().count(), 1);
        drop(first);
        lock(&env, &data).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_link_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().join(LOCK_FILE)).unwrap();
        assert!(lock(dir.path(), dir.path()).unwrap_err().contains("is a link"));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    }
}
