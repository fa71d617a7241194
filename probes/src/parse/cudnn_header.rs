//! `cudnn_version.h` (cuDNN 8, 9) or `cudnn.h` (cuDNN 7 and older) text → [`CudnnVersion`].
//!
//! Reads the `CUDNN_MAJOR`, `CUDNN_MINOR` and `CUDNN_PATCHLEVEL` defines; grep'd excerpts with `--`
//! separator lines work too. Only when a define is missing does it fall back to a literal
//! `#define CUDNN_VERSION 8907`, decoded by major (the v9 encoding differs from v8's).

use super::ParseError;
use gpu_doctor_model::CudnnVersion;

const FORMAT: &str = "cuDNN version header";

/// The value of `#define NAME <integer>` in `text`, if any line defines it as a plain integer.
fn define(text: &str, name: &str) -> Option<u32> {
    text.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        let hash = words.next()?;
        let (directive, first) = match hash {
            "#define" => ("define", words.next()?),
            "#" => (words.next()?, words.next()?),
            _ => return None,
        };
        if directive != "define" || first != name {
            return None;
        }
        let value = words.next()?.trim_end_matches(['u', 'U', 'l', 'L']);
        value.trim_matches(['(', ')']).parse().ok()
    })
}

/// Parses the version defines of a cuDNN header.
pub fn parse(text: &str) -> Result<CudnnVersion, ParseError> {
    let parts = (define(text, "CUDNN_MAJOR"), define(text, "CUDNN_MINOR"), define(text, "CUDNN_PATCHLEVEL"));
    if let (Some(major), Some(minor), Some(patch)) = parts {
        if major == 0 {
            return Err(ParseError::new(FORMAT, "CUDNN_MAJOR is 0"));
        }
        return Ok(CudnnVersion { major, minor, patch });
    }
    if let Some(v) = define(text, "CUDNN_VERSION").and_then(CudnnVersion::from_encoded) {
        return Ok(v);
    }
    let missing: Vec<&str> = [("CUDNN_MAJOR", parts.0), ("CUDNN_MINOR", parts.1), ("CUDNN_PATCHLEVEL", parts.2)]
        .into_iter()
        .filter_map(|(name, v)| v.is_none().then_some(name))
        .collect();
    Err(ParseError::new(FORMAT, format!("no {} define", missing.join(", "))))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn v9_defines_parse() {
        let text = "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n\
            #define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n";
        assert_eq!(parse(text).unwrap().to_string(), "9.1.0");
    }

    #[test]
    fn grep_excerpts_and_spaced_directives_parse() {
        let text = "#define CUDNN_MAJOR      7\n--\n# define CUDNN_MINOR 6\n--\n#define CUDNN_PATCHLEVEL 5\r\n";
        assert_eq!(parse(text).unwrap().to_string(), "7.6.5");
    }

    #[test]
    fn a_literal_cudnn_version_is_the_fallback() {
        assert_eq!(parse("#define CUDNN_VERSION 8907\n").unwrap().to_string(), "8.9.7");
        assert_eq!(parse("#define CUDNN_VERSION 90100\n").unwrap().to_string(), "9.1.0");
    }

    #[test]
    fn malformed_or_truncated_headers_are_errors() {
        for bad in [
            "",
            "#include <cudnn_version.h>\n",
            "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 9\n",
            "#define CUDNN_MAJOR eight\n#define CUDNN_MINOR 9\n#define CUDNN_PATCHLEVEL 1\n",
            "#define CUDNN_MAJOR 0\n#define CUDNN_MINOR 0\n#define CUDNN_PATCHLEVEL 0\n",
            "#define CUDNN_VERSION (CUDNN_MAJOR * 1000)\n",
            "#define",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn every_shared_fixture_parses_to_the_version_in_its_name() {
        let Some(files) = crate::parse::fixtures("cudnn") else { return };
        for (name, text) in &files {
            // <header>_<version>_<what>
            let want = name.split('_').find(|p| p.starts_with(|c: char| c.is_ascii_digit())).unwrap();
            assert_eq!(parse(text).unwrap().to_string(), want, "{name}");
        }
        let seen = files.len();
        assert!(seen >= 4, "only {seen} cuDNN fixtures");
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics(s in "\\PC*") {
            let _ = parse(&s);
        }

        #[test]
        fn near_miss_text_never_panics(
            s in "(#define |# |CUDNN_MAJOR |CUDNN_MINOR |CUDNN_PATCHLEVEL |CUDNN_VERSION |[0-9]{0,7}|\n|--\n){0,16}"
        ) {
            let _ = parse(&s);
        }
    }
}
