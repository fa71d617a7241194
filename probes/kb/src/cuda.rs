//! Queries on the CUDA table: which driver a CUDA runtime needs, and what a driver supports.

use super::{CudaFamily, CudaTable, ToolkitRelease};
use gpu_doctor_model::OsFamily;
use gpu_doctor_model::{CudaVersion, DriverVersion};

/// What the driver side of a machine is known to be, from the driver probe or from an error line
/// that carried it; either part may be missing in pasted text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DriverLevel {
    /// The driver version, e.g. `535.86.05`.
    pub version: Option<DriverVersion>,
    /// The newest CUDA the driver supports (`nvidia-smi`'s "CUDA Version").
    pub cuda: Option<CudaVersion>,
    /// One line saying what is known and where from; `None` when nothing is.
    pub evidence: Option<String>,
}

/// Whether a CUDA runtime starts on a driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeVerdict {
    /// The driver supports this CUDA version in full.
    Supported,
    /// Same major, newer minor: it starts through minor-version compatibility, but PTX compiled by
    /// the newer toolkit and APIs added in later minors fail. `full` is the driver that supports it in full.
    MinorVersionCompatible { full: Option<DriverVersion> },
    /// It does not start. `floor` is the lowest driver that would start it (the family floor under
    /// minor-version compatibility), `full` the driver of its toolkit release.
    TooOld { floor: Option<DriverVersion>, full: Option<DriverVersion> },
    /// The facts do not say (no driver version and no CUDA level).
    Unknown,
}

impl CudaTable {
    /// The family row of a CUDA major.
    pub fn family(&self, major: u32) -> Option<&CudaFamily> {
        self.family.iter().find(|f| f.major == major)
    }

    /// The GA release row of a major.minor (`12.8.93` → the 12.8 GA row).
    pub fn release(&self, v: CudaVersion) -> Option<&ToolkitRelease> {
        let v = v.major_minor();
        self.toolkit.iter().filter(|t| t.version == v).min_by_key(|t| t.update)
    }

    /// The driver a release was packaged with on `os` (Linux when the OS is not Windows).
    pub fn full_driver(&self, v: CudaVersion, os: OsFamily) -> Option<&DriverVersion> {
        let r = self.release(v)?;
        if os == OsFamily::Windows { r.windows_driver.as_ref() } else { Some(&r.linux_driver) }
    }

    /// The lowest driver that starts any minor of `major` on `os`; `None` without minor-version compatibility.
    pub fn floor(&self, major: u32, os: OsFamily) -> Option<&DriverVersion> {
        let f = self.family(major).filter(|f| f.minor_version_compatibility)?;
        if os == OsFamily::Windows { f.windows_floor.as_ref() } else { f.linux_floor.as_ref() }
    }

    /// The newest CUDA version whose GA driver is at or below `driver` on `os`: what `nvidia-smi`
    /// would print as "CUDA Version" for that driver.
    pub fn max_cuda_for_driver(&self, driver: &DriverVersion, os: OsFamily) -> Option<CudaVersion> {
        self.toolkit
            .iter()
            .filter(|t| t.update == 0)
            .filter(|t| {
                let d = if os == OsFamily::Windows { t.windows_driver.as_ref() } else { Some(&t.linux_driver) };
                d.is_some_and(|d| d <= driver)
            })
            .map(|t| t.version)
            .max()
    }

    /// Whether a process built with CUDA `runtime` starts on `driver` (minor-version compatibility
    /// included; forward compatibility, which needs a data-center GPU and the `cuda-compat` package,
    /// is not assumed).
    pub fn judge(&self, runtime: CudaVersion, driver: &DriverLevel, os: OsFamily) -> RuntimeVerdict {
        let runtime = runtime.major_minor();
        let full = self.full_driver(runtime, os).cloned();
        let floor = self.floor(runtime.major, os).cloned();
        let level = driver.cuda.or_else(|| driver.version.as_ref().and_then(|d| self.max_cuda_for_driver(d, os)));
        let Some(level) = level.map(CudaVersion::major_minor) else {
            // A known driver older than every release in the table supports none of them.
            return if driver.version.is_some() {
                RuntimeVerdict::TooOld { floor, full }
            } else {
                RuntimeVerdict::Unknown
            };
        };
        if runtime <= level {
            return RuntimeVerdict::Supported;
        }
        if runtime.major == level.major
            && let Some(f) = &floor
        {
            // A driver of the same major meets the floor when its version says so, or, with only its CUDA
            // level known, when that level's own GA driver does.
            let meets = match &driver.version {
                Some(d) => d >= f,
                None => self.full_driver(level, os).is_some_and(|d| d >= f),
            };
            if meets {
                return RuntimeVerdict::MinorVersionCompatible { full };
            }
        }
        RuntimeVerdict::TooOld { floor, full }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::Kb;

    fn d(s: &str) -> DriverVersion {
        s.parse().unwrap()
    }

    fn judge(runtime: &str, version: Option<&str>, cuda: Option<&str>, os: OsFamily) -> RuntimeVerdict {
        let kb = Kb::get().unwrap();
        let level = DriverLevel { version: version.map(d), cuda: cuda.map(|c| c.parse().unwrap()), evidence: None };
        kb.cuda.judge(runtime.parse().unwrap(), &level, os)
    }

    #[test]
    fn a_runtime_starts_from_its_own_toolkit_driver_on() {
        use RuntimeVerdict::*;
        let linux = OsFamily::Linux;
        assert_eq!(judge("12.8", Some("570.26"), None, linux), Supported);
        assert_eq!(judge("12.8.93", Some("570.26"), None, linux), Supported);
        assert_eq!(judge("12.8", None, Some("12.8"), linux), Supported);
        assert_eq!(judge("12.4", Some("580.65.06"), None, linux), Supported);
        assert_eq!(judge("12.8", None, None, linux), Unknown);
    }

    #[test]
    fn minor_version_compatibility_starts_newer_minors_down_to_the_family_floor() {
        use RuntimeVerdict::*;
        let linux = OsFamily::Linux;
        let full = Some(d("570.26"));
        assert_eq!(judge("12.8", Some("570.25"), None, linux), MinorVersionCompatible { full: full.clone() });
        assert_eq!(judge("12.8", Some("525.60.13"), None, linux), MinorVersionCompatible { full: full.clone() });
        assert_eq!(judge("12.8", None, Some("12.4"), linux), MinorVersionCompatible { full: full.clone() });
        assert_eq!(judge("12.8", Some("525.60.12"), None, linux), TooOld { floor: Some(d("525.60.13")), full });
        assert_eq!(
            judge("12.8", Some("525.60.13"), None, OsFamily::Windows),
            TooOld { floor: Some(d("527.41")), full: Some(d("570.65")) }
        );
        // 527.41 shipped with CUDA 12.0: it starts CUDA 12 programs, though one copy of NVIDIA's
        // table says 528.33.
        assert_eq!(
            judge("12.8", Some("527.41"), None, OsFamily::Windows),
            MinorVersionCompatible { full: Some(d("570.65")) }
        );
    }

    #[test]
    fn no_driver_runs_a_newer_major() {
        let v = judge("13.0", Some("575.57.08"), None, OsFamily::Linux);
        assert_eq!(v, RuntimeVerdict::TooOld { floor: Some(d("580.65.06")), full: Some(d("580.65.06")) });
        let v = judge("13.0", None, Some("12.9"), OsFamily::Linux);
        assert!(matches!(v, RuntimeVerdict::TooOld { .. }));
    }

    #[test]
    fn the_driver_cuda_level_is_the_newest_release_it_covers() {
        let kb = Kb::get().unwrap();
        let linux = OsFamily::Linux;
        assert_eq!(kb.cuda.max_cuda_for_driver(&d("570.26"), linux), Some(CudaVersion::new(12, 8)));
        assert_eq!(kb.cuda.max_cuda_for_driver(&d("580.95.05"), linux), Some(CudaVersion::new(13, 0)));
        assert_eq!(kb.cuda.max_cuda_for_driver(&d("300.1"), linux), None);
    }
}
