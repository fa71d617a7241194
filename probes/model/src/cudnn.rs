//! Copies of cuDNN.

use serde::{Deserialize, Serialize};

use super::CudnnVersion;

/// One copy of cuDNN.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CudnnCopy {
    /// Where it is: the header, library or DLL file, the wheel's `nvidia/cudnn` folder (or its
    /// dist-info folder), or the `conda-meta` record.
    pub location: String,
    /// What kind of copy this is.
    pub kind: CudnnKind,
    /// Its version; `None` when it could not be read (e.g. a library named only `libcudnn.so.9`).
    pub version: Option<CudnnVersion>,
    /// Its major version, also when the full version is unknown (from `libcudnn.so.9`,
    /// `cudnn64_9.dll`); `None` when nothing tells.
    pub major: Option<u32>,
    /// Where `version` came from; `None` when `version` is `None`.
    pub version_source: Option<CudnnVersionSource>,
    /// The Python environment's display name for a pip wheel; `None` for every other kind.
    pub env: Option<String>,
    /// The CUDA major it was built for, from the package name (`nvidia-cudnn-cu12`), conda build
    /// string (`cuda12_0`) or Windows folder (`bin/12.4`); `None` when unknown.
    pub cuda_major: Option<u32>,
}

impl CudnnCopy {
    /// The major a cuDNN library's file name carries: `libcudnn_cnn.so.9.1.0` and `libcudnn.so.9` → 9,
    /// `cudnn64_8.dll` and `cudnn_ops_infer64_8.dll` → 8; `None` for a name without one (`libcudnn.so`).
    pub fn major_in_file_name(file: &str) -> Option<u32> {
        if let Some((_, tail)) = file.split_once(".so.") {
            return tail.split('.').next()?.parse().ok();
        }
        file.to_ascii_lowercase().strip_suffix(".dll")?.rsplit('_').next()?.parse().ok()
    }
}

/// What kind of copy of cuDNN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CudnnKind {
    /// A `cudnn_version.h` (cuDNN 8, 9) or `cudnn.h` (cuDNN 7) header.
    Header,
    /// A `libcudnn.so*` shared library.
    Library,
    /// An `nvidia-cudnn-cu*` pip wheel.
    PipWheel,
    /// A `cudnn` or `libcudnn` conda package.
    CondaPackage,
    /// A Windows `cudnn64_<major>.dll`.
    Dll,
    /// A distribution package (`libcudnn8`, `libcudnn9-cuda-12`) as dpkg, apt or rpm lists it.
    SystemPackage,
    /// A value this version of gpu-doctor does not know, read from a report written by a newer one.
    #[serde(other)]
    Unknown,
}

/// Where a cuDNN copy's version came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CudnnVersionSource {
    /// The `CUDNN_MAJOR`/`CUDNN_MINOR`/`CUDNN_PATCHLEVEL` defines of a header.
    HeaderDefines,
    /// A fully versioned library file name, e.g. `libcudnn.so.9.1.0`.
    FileName,
    /// A pip `*.dist-info` folder name.
    DistInfo,
    /// A `conda-meta/*.json` file name.
    CondaMeta,
    /// A package manager's list (`dpkg -l`, `apt list --installed`, `rpm -qa`).
    PackageManager,
    /// A value this version of gpu-doctor does not know, read from a report written by a newer one.
    #[serde(other)]
    Unknown,
}

#[cfg(test)]
mod tests {
    use super::CudnnCopy;

    #[test]
    fn a_cudnn_files_major_is_read_from_its_name() {
        assert_eq!(CudnnCopy::major_in_file_name("libcudnn_cnn.so.9.1.0"), Some(9));
        assert_eq!(CudnnCopy::major_in_file_name("libcudnn.so.8"), Some(8));
        assert_eq!(CudnnCopy::major_in_file_name("cudnn_ops_infer64_8.dll"), Some(8));
        assert_eq!(CudnnCopy::major_in_file_name("CUDNN64_7.DLL"), Some(7));
        for none in ["libcudnn.so", "cudnn.dll", "libcudnn.so.x", "cudnn64_.dll", ""] {
            assert_eq!(CudnnCopy::major_in_file_name(none), None, "{none}");
        }
    }
}
