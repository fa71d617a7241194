//! The `RECORD` check on environments made by hand in a temporary folder; real installs, undo and
//! repair are in `tests/apply.rs`.

use std::path::{Path, PathBuf};

use super::*;

/// The `RECORD` hash field of `data` (`sha256=…`, URL-safe base64 without padding), written here
/// independently of [`decode_digest`]: the standard alphabet, then `+/` swapped and `=` cut.
fn hash_field(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let digest: [u8; 32] = Sha256::digest(data).into();
    let mut out = String::new();
    for chunk in digest.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    format!("sha256={}", out.replace('+', "-").replace('/', "_"))
}

/// A prefix with an empty `lib/python3.12/site-packages`.
fn env() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("env/lib/python3.12/site-packages");
    std::fs::create_dir_all(&site).unwrap();
    (dir, site)
}

/// Installs a distribution by hand: its files written under `site` (relative paths may leave it
/// with `..`), a `METADATA`, and a `RECORD` of `files` plus `extra` lines as given.
fn install(site: &Path, name: &str, version: &str, files: &[(&str, &[u8])], extra: &[&str]) {
    let info = format!("{name}-{version}.dist-info");
    std::fs::create_dir_all(site.join(&info)).unwrap();
    std::fs::write(
        site.join(&info).join("METADATA"),
        format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\n"),
    )
    .unwrap();
    let mut record = String::new();
    for (path, data) in files {
        let at = site.join(path);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(&at, data).unwrap();
        let shown = if path.contains(',') { format!("\"{path}\"") } else { (*path).to_owned() };
        record.push_str(&format!("{shown},{},{}\n", hash_field(data), data.len()));
    }
    for line in extra {
        record.push_str(line);
        record.push('\n');
    }
    record.push_str(&format!("{info}/RECORD,,\n"));
    std::fs::write(site.join(&info).join("RECORD"), record).unwrap();
}

fn prefix(site: &Path) -> PathBuf {
    site.ancestors().nth(3).unwrap().to_owned()
}

#[test]
fn a_digest_decodes_as_the_wheel_spec_writes_it() {
    // sha256 of nothing, as pip writes it in RECORD.
    let empty: [u8; 32] = Sha256::digest(b"").into();
    assert_eq!(decode_digest("47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"), Some(empty));
    assert_eq!(hash_field(b""), "sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
    assert_eq!(decode_digest("47DEQpj8HBSa"), None, "too short");
    assert_eq!(decode_digest("47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuF!"), None);
}

#[test]
fn csv_fields_follow_python_s_csv() {
    assert_eq!(csv_fields("a/b.py,sha256=x,3").unwrap(), ["a/b.py", "sha256=x", "3"]);
    assert_eq!(csv_fields("x.dist-info/RECORD,,").unwrap(), ["x.dist-info/RECORD", "", ""]);
    assert_eq!(csv_fields("\"a,\"\"b\"\".py\",sha256=x,3").unwrap(), ["a,\"b\".py", "sha256=x", "3"]);
    assert_eq!(csv_fields("\"a,b"), None);
}

/// Every file is looked at: a missing one, one of another size; one of the same size with other
/// content only where it is hashed. `.pyc`, `__pycache__` and `RECORD` are not checked; pip's
/// `../../../bin/` scripts are; paths that leave the environment are not followed and are named.
#[test]
fn files_are_checked_against_their_record() {
    let (_dir, site) = env();
    install(
        &site,
        "Good_Pkg",
        "1.0",
        &[("good/__init__.py", b"x = 1\n"), ("good/lib.so", b"0123456789"), ("../../../bin/good", b"#!/bin/sh\n")],
        &["good/__pycache__/__init__.cpython-312.pyc,,", "good/gone.pyc,,"],
    );
    install(
        &site,
        "hostile",
        "2",
        &[("hostile/ok.py", b"")],
        &["../../../../outside.txt,,", "/etc/passwd,,", "\"open"],
    );
    let prefix = prefix(&site);
    let read = Site::read(&prefix).unwrap();
    let good = &read.records[0];
    assert_eq!((good.name.as_str(), good.version.as_str(), good.entries.len()), ("good-pkg", "1.0", 3));
    let checked = check(&read, &HashSet::new(), &|_| true, None);
    assert!(checked.values().all(|d| d.missing.is_empty() && d.changed.is_empty()), "{checked:?}");
    assert!(checked["Good_Pkg-1.0.dist-info"].intact());
    let hostile = &checked["hostile-2.dist-info"];
    assert!(!hostile.intact());
    assert_eq!(hostile.refused.len(), 3, "{hostile:?}");
    assert!(hostile.refused[0].starts_with("../../../../outside.txt: outside the environment"), "{hostile:?}");

    // The same size, other content: seen only when hashed.
    std::fs::write(site.join("good/lib.so"), b"9876543210").unwrap();
    let lib = site.join("good/lib.so");
    assert!(check(&read, &HashSet::new(), &|_| true, None)["Good_Pkg-1.0.dist-info"].intact());
    let hashed = check(&read, &HashSet::from([lib.clone()]), &|_| true, None);
    assert_eq!(hashed["Good_Pkg-1.0.dist-info"].changed, ["good/lib.so"]);
    // Another size: seen without hashing; a missing file too (also the script outside site-packages).
    std::fs::write(&lib, b"short").unwrap();
    std::fs::remove_file(prefix.join("bin/good")).unwrap();
    let now = &check(&read, &HashSet::new(), &|_| true, None)["Good_Pkg-1.0.dist-info"];
    assert_eq!(
        (now.changed.as_slice(), now.missing.as_slice()),
        (["good/lib.so".to_owned()].as_slice(), ["../../../bin/good".to_owned()].as_slice())
    );
    // Narrowed to the files a run could have written: only those are looked at.
    let narrow = HashSet::from([lib]);
    let now = &check(&read, &HashSet::new(), &|_| true, Some(&narrow))["Good_Pkg-1.0.dist-info"];
    assert_eq!((now.changed.as_slice(), now.missing.len()), (["good/lib.so".to_owned()].as_slice(), 0));
}

/// Two wheels that write the same file: it is shared; a distribution installed or removed between
/// two reads is touched, with its files.
#[test]
fn shared_and_touched_files() {
    let (_dir, site) = env();
    install(&site, "nvidia-cudnn-cu12", "9.1.0", &[("nvidia/cudnn/lib/libcudnn.so.9", b"cu12")], &[]);
    let prefix = prefix(&site);
    let before = Site::read(&prefix).unwrap();
    assert!(before.shared().is_empty());
    install(&site, "nvidia-cudnn-cu13", "9.13.0", &[("nvidia/cudnn/lib/libcudnn.so.9", b"cu13")], &[]);
    let after = Site::read(&prefix).unwrap();
    let lib = site.canonicalize().unwrap().join("nvidia/cudnn/lib/libcudnn.so.9");
    assert_eq!(after.shared(), HashSet::from([lib.clone()]));
    assert_eq!(before.touched(&after), HashSet::from([lib.clone()]));
    assert_eq!(after.touched(&after), HashSet::new());
    assert_eq!(after.owners(&lib, "nvidia_cudnn_cu12-9.1.0.dist-info"), ["nvidia-cudnn-cu12", "nvidia-cudnn-cu13"]);
    assert_eq!(after.owners(&lib, "nvidia-cudnn-cu12-9.1.0.dist-info"), ["nvidia-cudnn-cu13"]);
    // Same size, other content: the cu12 wheel's file changed, seen by the hash.
    let checked = check(&after, &after.shared(), &|_| true, None);
    assert_eq!(checked["nvidia-cudnn-cu12-9.1.0.dist-info"].changed, ["nvidia/cudnn/lib/libcudnn.so.9"]);
    assert!(checked["nvidia-cudnn-cu13-9.13.0.dist-info"].intact());
}

#[test]
fn a_prefix_without_site_packages_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    assert!(Site::read(dir.path()).unwrap_err().contains("no site-packages"));
}
