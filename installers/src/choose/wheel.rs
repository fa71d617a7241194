//! Wheel file names (PEP 427): `name-version(-build)?-pytag-abitag-platform.whl`, and what the
//! chooser reads from them: the CUDA variant, the Pythons and the platforms a file installs on.
//! Nothing here panics: a name that does not parse is `None`.

use gpu_doctor_kb::families;
use gpu_doctor_model::CudaVersion;
use gpu_doctor_model::OsFamily;
use gpu_doctor_probes::parse::wheel::normalize_name;

/// One parsed wheel file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WheelName {
    /// The distribution, normalized (lowercase, `_` and `.` as `-`): `torch`, `jax-cuda12-plugin`.
    pub name: String,
    /// The version without its local label: `2.5.1`.
    pub version: String,
    /// The local label after `+`: `cu124`, `cpu`, `rocm6.2`; `None` without one.
    pub local: Option<String>,
    /// The Python tags (`cp310`, `py3`), from the compressed tag set.
    pub python: Vec<String>,
    /// The ABI tags (`cp310`, `abi3`, `none`).
    pub abi: Vec<String>,
    /// The platform tags (`manylinux_2_28_x86_64`, `win_amd64`, `any`).
    pub platform: Vec<String>,
}

impl WheelName {
    /// Parses a file name (a path's last part is taken); `None` when it is not a wheel name.
    pub fn parse(file: &str) -> Option<Self> {
        let file = file.rsplit(['/', '\\']).next()?;
        let stem = file.strip_suffix(".whl")?;
        let parts: Vec<&str> = stem.split('-').collect();
        // name-version-py-abi-plat, with an optional build tag before the Python tag.
        if !(parts.len() == 5 || parts.len() == 6) || parts.iter().any(|p| p.is_empty()) {
            return None;
        }
        let (name, full) = (parts[0], parts[1]);
        let n = parts.len();
        let (py, abi, plat) = (parts[n - 3], parts[n - 2], parts[n - 1]);
        if !full.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        let (version, local) = match full.split_once('+') {
            Some((v, l)) if !v.is_empty() && !l.is_empty() => (v, Some(l.to_ascii_lowercase())),
            Some(_) => return None,
            None => (full, None),
        };
        let split = |s: &str| s.split('.').map(str::to_ascii_lowercase).collect::<Vec<_>>();
        Some(Self {
            name: normalize_name(name),
            version: version.to_owned(),
            local,
            python: split(py),
            abi: split(abi),
            platform: plat.split('.').map(str::to_ascii_lowercase).collect(),
        })
    }

    /// The CUDA version of a `+cuXYZ` label (`cu128` → 12.8, `cu102` → 10.2).
    pub fn local_cuda(&self) -> Option<CudaVersion> {
        families::cuda_tag(self.local.as_deref()?)
    }

    /// Whether the file installs on `python` (`None`: not known yet, any does).
    pub fn fits_python(&self, python: Option<(u32, u32)>) -> bool {
        let Some((major, minor)) = python else { return true };
        let abi3 = self.abi.iter().any(|a| a == "abi3");
        self.python.iter().any(|tag| {
            let digits = tag.trim_start_matches(|c: char| c.is_ascii_alphabetic());
            let Some((maj, min)) = digits.split_at_checked(1) else { return false };
            let Ok(maj) = maj.parse::<u32>() else { return false };
            if maj != major {
                return false;
            }
            match min.parse::<u32>() {
                Ok(m) if abi3 => m <= minor,
                Ok(m) => m == minor,
                Err(_) => min.is_empty(),
            }
        })
    }

    /// Whether the file installs on `os` with CPU `cpu` (`x86_64`, `aarch64`).
    pub fn fits_platform(&self, os: OsFamily, cpu: &str) -> bool {
        let cpu = normalize_cpu(cpu);
        self.platform.iter().any(|p| {
            if p == "any" {
                return true;
            }
            let on = if p.contains("linux") {
                OsFamily::Linux
            } else if p.starts_with("win") {
                OsFamily::Windows
            } else if p.starts_with("macosx") {
                OsFamily::Macos
            } else {
                return false;
            };
            let arch = if p.ends_with("amd64") || p.ends_with("x86_64") {
                "x86_64"
            } else if p.ends_with("aarch64") || p.ends_with("arm64") {
                "aarch64"
            } else {
                p.rsplit('_').next().unwrap_or_default()
            };
            on == os && arch == cpu
        })
    }
}

/// `x86_64` for `amd64`/`x64`, `aarch64` for `arm64`, else as given.
pub fn normalize_cpu(cpu: &str) -> &str {
    match cpu {
        "amd64" | "AMD64" | "x64" | "x86_64" => "x86_64",
        "arm64" | "ARM64" | "aarch64" => "aarch64",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torch_wheel_names_give_version_label_python_and_platform() {
        let w = WheelName::parse("/w/torch-2.5.1+cu121-cp310-cp310-linux_x86_64.whl");
        let Some(w) = w else { panic!("a valid name did not parse") };
        assert_eq!((w.name.as_str(), w.version.as_str(), w.local.as_deref()), ("torch", "2.5.1", Some("cu121")));
        assert_eq!(w.local_cuda(), Some(CudaVersion::new(12, 1)));
        assert!(w.fits_python(Some((3, 10))) && !w.fits_python(Some((3, 11))) && w.fits_python(None));
        assert!(w.fits_platform(OsFamily::Linux, "x86_64") && !w.fits_platform(OsFamily::Windows, "x86_64"));
        assert!(!w.fits_platform(OsFamily::Linux, "aarch64"));
    }

    #[test]
    fn package_names_tags_and_build_numbers() {
        let w = WheelName::parse("jax_cuda12_plugin-0.7.2-1-cp312-cp312-manylinux_2_27_aarch64.whl");
        let Some(w) = w else { panic!("a name with a build tag did not parse") };
        assert_eq!(w.name, "jax-cuda12-plugin");
        assert!(w.fits_platform(OsFamily::Linux, "arm64"));
        let any = WheelName::parse("jax-0.7.2-py3-none-any.whl");
        assert!(any.is_some_and(|w| w.fits_python(Some((3, 14))) && w.fits_platform(OsFamily::Windows, "x86_64")));
        let abi3 = WheelName::parse("cupy_cuda12x-14.2.0-cp310-abi3-win_amd64.whl");
        assert!(abi3.is_some_and(|w| w.fits_python(Some((3, 13))) && !w.fits_python(Some((3, 9)))));
    }

    #[test]
    fn malformed_and_truncated_names_are_none_never_a_panic() {
        for bad in [
            "",
            ".whl",
            "torch.whl",
            "torch-2.5.1.whl",
            "torch-2.5.1-cp310-cp310.whl",
            "torch-2.5.1+cu121-cp310-cp310-linux_x86_64.tar.gz",
            "torch-2.5.1+-cp310-cp310-linux_x86_64.whl",
            "torch-+cu121-cp310-cp310-linux_x86_64.whl",
            "torch--cp310-cp310-linux_x86_64.whl",
            "torch-x.y-cp310-cp310-linux_x86_64.whl",
            "a-1-b-c-d-e-f-g.whl",
            "torch-2.5.1+cu121-cp310-cp310-linux_x86_64.wh",
            "torch-2.5.1+cu121-cp310-cp310-",
            "-2.5.1-cp310-cp310-any.whl",
        ] {
            assert_eq!(WheelName::parse(bad), None, "{bad:?}");
        }
        // Odd tags parse but fit nothing they should not.
        let w = WheelName::parse("torch-2.5.1+cuXY-c-é-linux_ppc64le.whl");
        assert!(w.is_some_and(|w| w.local_cuda().is_none()
            && !w.fits_python(Some((3, 10)))
            && !w.fits_platform(OsFamily::Linux, "x86_64")));
    }

    #[test]
    fn cuda_tags() {}
}
