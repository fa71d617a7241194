//! Typed versions that keep their raw text: driver, CUDA and cuDNN.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A version string did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a {kind} version: {text:?}")]
pub struct VersionError {
    kind: &'static str,
    text: String,
}

fn err(kind: &'static str, text: &str) -> VersionError {
    VersionError { kind, text: text.chars().take(64).collect() }
}

fn parse_parts(kind: &'static str, text: &str, min: usize, max: usize) -> Result<Vec<u32>, VersionError> {
    let parts: Result<Vec<u32>, _> = text.trim().split('.').map(str::parse::<u32>).collect();
    match parts {
        Ok(p) if (min..=max).contains(&p.len()) => Ok(p),
        _ => Err(err(kind, text)),
    }
}

/// An NVIDIA driver version such as `535.86.05` or `591.86` (not semver: the last part keeps its zeros).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct DriverVersion {
    raw: String,
    parts: Vec<u32>,
}

impl DriverVersion {
    /// The branch, e.g. 535.
    pub fn major(&self) -> u32 {
        self.parts[0]
    }
    /// The numeric parts, for ordering.
    pub fn parts(&self) -> &[u32] {
        &self.parts
    }
    /// The text as the driver printed it.
    pub fn as_str(&self) -> &str {
        &self.raw
    }
}

impl PartialOrd for DriverVersion {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for DriverVersion {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.parts.cmp(&other.parts)
    }
}

impl FromStr for DriverVersion {
    type Err = VersionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let parts = parse_parts("driver", s, 2, 3)?;
        Ok(Self { raw: s.trim().to_owned(), parts })
    }
}
impl TryFrom<String> for DriverVersion {
    type Error = VersionError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}
impl From<DriverVersion> for String {
    fn from(v: DriverVersion) -> Self {
        v.raw
    }
}
impl fmt::Display for DriverVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

/// A CUDA version such as `12.8` or `12.8.93`; the driver API encodes it as `12080`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CudaVersion {
    /// Major, e.g. 12.
    pub major: u32,
    /// Minor, e.g. 8.
    pub minor: u32,
    /// Patch or build, e.g. 93; `None` when the source gave only major.minor.
    pub patch: Option<u32>,
}

impl CudaVersion {
    /// A major.minor version.
    pub const fn new(major: u32, minor: u32) -> Self {
        Self { major, minor, patch: None }
    }

    /// Decodes the driver API integer (`cudaDriverGetVersion`, NVML): `12080` → 12.8.
    pub fn from_api_int(v: i32) -> Option<Self> {
        let v = u32::try_from(v).ok().filter(|&v| v > 0)?;
        Some(Self::new(v / 1000, (v % 1000) / 10))
    }

    /// This version without its patch, for comparisons by minor.
    pub fn major_minor(self) -> Self {
        Self::new(self.major, self.minor)
    }
}

impl FromStr for CudaVersion {
    type Err = VersionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let p = parse_parts("CUDA", s, 2, 3)?;
        Ok(Self { major: p[0], minor: p[1], patch: p.get(2).copied() })
    }
}
impl TryFrom<String> for CudaVersion {
    type Error = VersionError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}
impl From<CudaVersion> for String {
    fn from(v: CudaVersion) -> Self {
        v.to_string()
    }
}
impl fmt::Display for CudaVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.patch {
            Some(p) => write!(f, "{}.{}.{}", self.major, self.minor, p),
            None => write!(f, "{}.{}", self.major, self.minor),
        }
    }
}

/// A cuDNN version such as `9.1.0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CudnnVersion {
    /// Major, e.g. 9.
    pub major: u32,
    /// Minor.
    pub minor: u32,
    /// Patch level.
    pub patch: u32,
}

impl CudnnVersion {
    /// Decodes `CUDNN_VERSION` / `cudnnGetVersion()`: v9 uses `M*10000+m*100+p` (90100),
    /// earlier majors `M*1000+m*100+p` (8907, 7605).
    pub fn from_encoded(v: u32) -> Option<Self> {
        let (major, rest) = if v >= 90000 { (v / 10000, v % 10000) } else { (v / 1000, v % 1000) };
        if major == 0 {
            return None;
        }
        Some(Self { major, minor: rest / 100, patch: rest % 100 })
    }
}

impl FromStr for CudnnVersion {
    type Err = VersionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let p = parse_parts("cuDNN", s, 1, 4)?;
        Ok(Self { major: p[0], minor: p.get(1).copied().unwrap_or(0), patch: p.get(2).copied().unwrap_or(0) })
    }
}
impl TryFrom<String> for CudnnVersion {
    type Error = VersionError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}
impl From<CudnnVersion> for String {
    fn from(v: CudnnVersion) -> Self {
        v.to_string()
    }
}
impl fmt::Display for CudnnVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// A compute capability such as 8.9.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ComputeCapability {
    /// Major, e.g. 8.
    pub major: u32,
    /// Minor, e.g. 9.
    pub minor: u32,
}

impl ComputeCapability {
    /// The `sm_XY` name.
    pub fn sm(self) -> String {
        format!("sm_{}{}", self.major, self.minor)
    }
}

impl FromStr for ComputeCapability {
    type Err = VersionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let p = parse_parts("compute capability", s, 2, 2)?;
        Ok(Self { major: p[0], minor: p[1] })
    }
}
impl TryFrom<String> for ComputeCapability {
    type Error = VersionError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}
impl From<ComputeCapability> for String {
    fn from(v: ComputeCapability) -> Self {
        v.to_string()
    }
}
impl fmt::Display for ComputeCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn driver_versions_order_numerically_and_keep_text() {
        let a: DriverVersion = "535.86.05".parse().unwrap();
        let b: DriverVersion = "535.104.05".parse().unwrap();
        assert!(a < b);
        assert_eq!(a.to_string(), "535.86.05");
        assert_eq!(a.major(), 535);
        assert!("591.86".parse::<DriverVersion>().is_ok());
        for bad in ["", "535", "535.x", "1.2.3.4", "N/A", "-1.2"] {
            assert!(bad.parse::<DriverVersion>().is_err(), "{bad}");
        }
    }

    #[test]
    fn cuda_api_integers_decode() {
        assert_eq!(CudaVersion::from_api_int(12080), Some(CudaVersion::new(12, 8)));
        assert_eq!(CudaVersion::from_api_int(11040), Some(CudaVersion::new(11, 4)));
        assert_eq!(CudaVersion::from_api_int(13010), Some(CudaVersion::new(13, 1)));
        assert_eq!(CudaVersion::from_api_int(0), None);
        assert_eq!(CudaVersion::from_api_int(-5), None);
        assert_eq!("12.5.82".parse::<CudaVersion>().unwrap().patch, Some(82));
        assert!("12".parse::<CudaVersion>().is_err());
    }

    #[test]
    fn cudnn_encodings_decode_by_major() {
        let v = |s: &str| s.parse::<CudnnVersion>().unwrap();
        assert_eq!(CudnnVersion::from_encoded(7605), Some(v("7.6.5")));
        assert_eq!(CudnnVersion::from_encoded(8907), Some(v("8.9.7")));
        assert_eq!(CudnnVersion::from_encoded(90100), Some(v("9.1.0")));
        assert_eq!(CudnnVersion::from_encoded(91002), Some(v("9.10.2")));
        assert_eq!(CudnnVersion::from_encoded(91501), Some(v("9.15.1")));
        assert_eq!(CudnnVersion::from_encoded(0), None);
    }
}
