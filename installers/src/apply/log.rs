//! The log of one run: every step, every line it printed, how it ended; a file per run, named by
//! its UTC start time.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// An open log file.
#[derive(Debug)]
pub(crate) struct Log {
    path: PathBuf,
    out: BufWriter<File>,
}

impl Log {
    /// Creates `DIR/<what>-<UTC time>-<name>.log` (a `-N` suffix when that exists), and the folder.
    pub(crate) fn create(dir: &Path, what: &str, name: &str) -> Result<Self, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("could not create {}: {e}", dir.display()))?;
        let stem = format!("{what}-{}-{}", stamp(SystemTime::now()), file_safe(name));
        for n in 1..1000 {
            let path = if n == 1 { dir.join(format!("{stem}.log")) } else { dir.join(format!("{stem}-{n}.log")) };
            match File::create_new(&path) {
                Ok(file) => return Ok(Self { path, out: BufWriter::new(file) }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(format!("could not create {}: {e}", path.display())),
            }
        }
        Err(format!("could not create a log in {}: every name is taken", dir.display()))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// One line; a log that cannot be written does not stop the run.
    pub(crate) fn line(&mut self, text: &str) {
        let _ = writeln!(self.out, "{text}");
    }

    /// Writes what is buffered: before a step starts and when the run ends.
    pub(crate) fn flush(&mut self) {
        let _ = self.out.flush();
    }
}

/// `name` with everything but letters, digits, `-`, `_` and `.` replaced by `_`.
pub(crate) fn file_safe(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' }).collect()
}

/// `20250102T030405Z`: the UTC time, for file names.
pub(crate) fn stamp(time: SystemTime) -> String {
    let secs = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (year, month, day, hour, minute, second) = gpu_doctor_model::time::utc(secs);
    format!("{year:04}{month:02}{day:02}T{hour:02}{minute:02}{second:02}Z")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn stamps_are_utc_calendar_times() {
        assert_eq!(stamp(UNIX_EPOCH), "19700101T000000Z");
        assert_eq!(stamp(UNIX_EPOCH + Duration::from_secs(951_782_400 + 3_723)), "20000229T010203Z");
        assert_eq!(stamp(UNIX_EPOCH + Duration::from_secs(1_767_225_599)), "20251231T235959Z");
    }

    #[test]
    fn two_runs_in_one_second_get_two_files() {
        let dir = tempfile::tempdir().unwrap();
        let a = Log::create(dir.path(), "apply", "cuda.torch/cpu").unwrap();
        let b = Log::create(dir.path(), "apply", "cuda.torch/cpu").unwrap();
        assert_ne!(a.path(), b.path());
        let name = a.path().file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("apply-") && name.ends_with("-cuda.torch_cpu.log"), "{name}");
    }
}
