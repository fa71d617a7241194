//! `nvcc --version` output → the toolkit's [`CudaVersion`], with its patch when nvcc prints one.
//!
//! ```text
//! Cuda compilation tools, release 12.5, V12.5.82
//! ```
//! The `V` token carries the full version (12.5.82); `release` only major.minor. Some outputs (Jetson
//! CUDA 9.0) have no `Build` line; that line is not needed.

use super::ParseError;
use gpu_doctor_model::CudaVersion;

const FORMAT: &str = "nvcc --version output";

/// Parses `nvcc --version` output. The `V` token wins over the `release` token; an output with
/// neither is an error.
pub fn parse(text: &str) -> Result<CudaVersion, ParseError> {
    let line =
        text.lines().find(|l| l.contains("release ")).ok_or_else(|| ParseError::new(FORMAT, "no \"release\" line"))?;
    let release = line.split("release ").nth(1).map(|rest| rest.split(',').next().unwrap_or_default().trim());
    let full = line.split(", V").nth(1).map(|rest| rest.split_whitespace().next().unwrap_or_default());
    if let Some(v) = full.and_then(|v| v.trim_end_matches(',').parse::<CudaVersion>().ok()) {
        return Ok(v);
    }
    match release.map(str::parse::<CudaVersion>) {
        Some(Ok(v)) => Ok(v),
        _ => Err(ParseError::new(FORMAT, format!("no version in {:?}", line.trim()))),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const NVCC_12_5: &str = "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2024 NVIDIA Corporation\n\
        Built on Thu_Jun__6_02:18:23_PDT_2024\nCuda compilation tools, release 12.5, V12.5.82\n\
        Build cuda_12.5.r12.5/compiler.34385749_0\n";

    #[test]
    fn the_v_token_gives_the_patch() {
        let v = parse(NVCC_12_5).unwrap();
        assert_eq!((v.major, v.minor, v.patch), (12, 5, Some(82)));
    }

    #[test]
    fn windows_line_endings_and_a_release_only_line_parse() {
        let v = parse("nvcc: NVIDIA\r\nCuda compilation tools, release 11.8, V11.8.89\r\n").unwrap();
        assert_eq!(v.to_string(), "11.8.89");
        let v = parse("Cuda compilation tools, release 9.0\n").unwrap();
        assert_eq!(v.to_string(), "9.0");
    }

    #[test]
    fn malformed_or_truncated_output_is_an_error() {
        for bad in [
            "",
            "nvcc: NVIDIA (R) Cuda compiler driver\n",
            "Cuda compilation tools, release ",
            "Cuda compilation tools, release x.y, Vx",
            "bash: nvcc: command not found",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn every_shared_fixture_parses_to_the_version_in_its_name() {
        let Some(files) = crate::parse::fixtures("nvcc") else { return };
        for (name, text) in &files {
            // nvcc_<version>_<what>.txt
            let want = name.split('_').nth(1).unwrap();
            assert_eq!(parse(text).unwrap().to_string(), want, "{name}");
        }
        let seen = files.len();
        assert!(seen >= 4, "only {seen} nvcc fixtures");
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics(s in "\\PC*") {
            let _ = parse(&s);
        }

        #[test]
        fn near_miss_text_never_panics(s in "(Cuda compilation tools, release |, V|[0-9.]{0,8}|\n| ){0,12}") {
            let _ = parse(&s);
        }
    }
}
