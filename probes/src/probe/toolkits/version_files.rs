//! The version files a CUDA toolkit carries: `version.json` (CUDA 11.1 and later) and
//! `version.txt` (CUDA 11.0 and earlier).

use super::fs::leading_version;
use crate::parse::ParseError;
use gpu_doctor_model::CudaVersion;

/// Parses a toolkit's `version.json`: `{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}, …}`.
pub(super) fn parse_version_json(text: &str) -> Result<CudaVersion, ParseError> {
    const FORMAT: &str = "CUDA version.json";
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| ParseError::new(FORMAT, e.to_string()))?;
    let version = value
        .get("cuda")
        .and_then(|c| c.get("version"))
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| ParseError::new(FORMAT, "no cuda.version string"))?;
    parse_cuda(FORMAT, version)
}

/// Parses an old toolkit's `version.txt`: `CUDA Version 10.2.89`.
pub(super) fn parse_version_txt(text: &str) -> Result<CudaVersion, ParseError> {
    const FORMAT: &str = "CUDA version.txt";
    let version = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("CUDA Version"))
        .ok_or_else(|| ParseError::new(FORMAT, "no \"CUDA Version\" line"))?;
    parse_cuda(FORMAT, version.trim())
}

/// A CUDA version from text such as `12.4.127` or `12.1.105.post1` (only the first three parts count).
pub(super) fn parse_cuda(format: &'static str, text: &str) -> Result<CudaVersion, ParseError> {
    leading_version(text)
        .map(|v| v.split('.').take(3).collect::<Vec<_>>().join("."))
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| {
            ParseError::new(format, format!("not a CUDA version: {:?}", text.chars().take(40).collect::<String>()))
        })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn version_json_and_txt_parse() {
        let json = r#"{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}, "cuda_cudart": {"version": "12.4.127"}}"#;
        assert_eq!(parse_version_json(json).unwrap().to_string(), "12.4.1");
        assert_eq!(parse_version_txt("CUDA Version 10.2.89\n").unwrap().to_string(), "10.2.89");
        assert_eq!(parse_cuda("x", "12.1.105.post1").unwrap().to_string(), "12.1.105");
    }

    #[test]
    fn malformed_version_files_are_errors() {
        for bad in ["", "{", "{}", r#"{"cuda": {"version": 12}}"#, r#"{"cuda": {"version": "twelve"}}"#, "[1]"] {
            assert!(parse_version_json(bad).is_err(), "{bad:?}");
        }
        for bad in ["", "CUDA Version", "CUDA Version x.y", "Version 10.2"] {
            assert!(parse_version_txt(bad).is_err(), "{bad:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics(s in "\\PC*") {
            let _ = parse_version_json(&s);
            let _ = parse_version_txt(&s);
        }
    }
}
