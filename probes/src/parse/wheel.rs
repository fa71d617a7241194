//! Python package metadata: PEP 503 names, `METADATA`/`PKG-INFO` headers and `*.dist-info`
//! folder names. Shared by the Python, toolkit and cuDNN probes.

/// PEP 503 normalization: lowercase, runs of `-`, `_` and `.` become one `-`.
pub fn normalize_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut sep = false;
    for c in name.trim().chars() {
        if matches!(c, '-' | '_' | '.') {
            sep = true;
        } else {
            if sep && !out.is_empty() {
                out.push('-');
            }
            sep = false;
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// `Name:` and `Version:` from a `METADATA` or `PKG-INFO` header; `None` when either is missing.
pub fn parse_metadata(text: &str) -> Option<(String, String)> {
    let (mut name, mut version) = (None, None);
    for line in text.lines() {
        if line.trim().is_empty() {
            break; // the body (long description) starts here
        }
        let Some((key, value)) = line.split_once(':') else { continue };
        let value = value.trim();
        if value.is_empty() {
            continue;
        }
        if key.eq_ignore_ascii_case("name") && name.is_none() {
            name = Some(value.to_owned());
        } else if key.eq_ignore_ascii_case("version") && version.is_none() {
            version = Some(value.to_owned());
        }
    }
    Some((name?, version?))
}

/// Name and version text from a folder such as `torch-2.3.0+cu121.dist-info` or
/// `foo-1.0-py3.11.egg-info`; the version is whatever the name holds, checked by the caller.
pub fn parse_dist_folder(folder: &str) -> Option<(String, String)> {
    let stem = folder.strip_suffix(".dist-info").or_else(|| folder.strip_suffix(".egg-info"))?;
    let mut parts = stem.split('-');
    let name = parts.next().filter(|n| !n.is_empty())?;
    let version = parts.next().filter(|v| !v.is_empty())?;
    Some((name.to_owned(), version.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_normalize_per_pep_503() {
        assert_eq!(normalize_name("Nvidia_CUDNN.cu12"), "nvidia-cudnn-cu12");
        assert_eq!(normalize_name("jax--cuda12__plugin"), "jax-cuda12-plugin");
        assert_eq!(normalize_name("torch"), "torch");
        assert_eq!(normalize_name("_x_"), "x");
    }

    #[test]
    fn metadata_gives_name_and_version_and_rejects_the_incomplete() {
        let text = "Metadata-Version: 2.1\nName: torch\nVersion: 2.3.0+cu121\nSummary: x\n\nVersion: 9.9\n";
        assert_eq!(parse_metadata(text), Some(("torch".into(), "2.3.0+cu121".into())));
        assert_eq!(parse_metadata("Name: torch\n"), None);
        assert_eq!(parse_metadata("Version: 1.0\n"), None);
        assert_eq!(parse_metadata(""), None);
        assert_eq!(parse_metadata("\nName: a\nVersion: 1\n"), None, "the body is not the header");
        assert_eq!(parse_metadata("garbage\u{0}:::\nName:\nVersion:"), None);
    }

    #[test]
    fn dist_folders_split_into_name_and_version() {
        assert_eq!(parse_dist_folder("torch-2.3.0+cu121.dist-info"), Some(("torch".into(), "2.3.0+cu121".into())));
        assert_eq!(parse_dist_folder("foo-1.0-py3.11.egg-info"), Some(("foo".into(), "1.0".into())));
        assert_eq!(parse_dist_folder("torch"), None);
        assert_eq!(parse_dist_folder("-1.dist-info"), None);
        assert_eq!(parse_dist_folder("torch.dist-info"), None);
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,300}") {
            let _ = normalize_name(&text);
            let _ = parse_metadata(&text);
            let _ = parse_dist_folder(&text);
        }
    }
}
