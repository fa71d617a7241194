//! The reader on venvs made by hand in a temporary folder: what pip and uv would print, and every
//! case the tool must list instead. The real tools' output is compared in `tests/apply.rs`.

use std::path::{Path, PathBuf};

use super::*;

const CFG: &str = "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.7\n";

/// A venv at a temporary folder with `pyvenv.cfg` `cfg` and an empty site-packages.
fn venv(cfg: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyvenv.cfg"), cfg).unwrap();
    let site = dir.path().join("lib/python3.11/site-packages");
    std::fs::create_dir_all(&site).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("lib", dir.path().join("lib64")).unwrap();
    (dir, site)
}

/// A `*.dist-info` folder in `site` with this `METADATA` text and, if given, `direct_url.json`.
fn dist(site: &Path, folder: &str, metadata: &[u8], direct_url: Option<&str>) {
    let dir = site.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("METADATA"), metadata).unwrap();
    if let Some(json) = direct_url {
        std::fs::write(dir.join("direct_url.json"), json).unwrap();
    }
}

fn meta(name: &str, version: &str) -> Vec<u8> {
    format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nRequires-Dist: x\n\nThe long description.\n")
        .into_bytes()
}

fn uv() -> Tool {
    Tool::Uv { uv: "/usr/bin/uv".into() }
}

/// `Err`'s text for the venv at `prefix`, read for pip; panics when it reads.
fn why_not(prefix: &Path) -> String {
    match freeze_from_disk(prefix, &Tool::Pip) {
        Ok(listed) => panic!("read {:?}", listed.pins),
        Err(why) => why,
    }
}

#[test]
fn dist_info_folders_read_as_pip_and_uv_print_them() {
    let (dir, site) = venv(CFG);
    dist(&site, "torch-2.5.1+cu121.dist-info", &meta("torch", "2.5.1+cu121"), None);
    dist(&site, "jax_cuda12_plugin-0.4.35.dist-info", &meta("jax_cuda12_plugin", "0.4.35"), None);
    dist(&site, "jax-0.4.35.dist-info", &meta("jax", "0.4.35"), None);
    let archive =
        r#"{"archive_info": {"hash": "sha256=ab12", "hashes": {"sha256": "ab12"}}, "url": "file:///w/tv.whl"}"#;
    dist(&site, "torchvision-0.20.1+cpu.dist-info", &meta("torchvision", "0.20.1+cpu"), Some(archive));
    let folder = r#"{"url": "file:///src/my_pkg", "dir_info": {}}"#;
    dist(&site, "my_pkg-1.0rc1.post2.dev3.dist-info", &meta("My_Pkg", "1.0rc1.post2.dev3"), Some(folder));
    // What is no distribution is passed over: packages, caches, a `.pth` of imports and comments.
    std::fs::create_dir_all(site.join("torch/__pycache__")).unwrap();
    std::fs::write(site.join("distutils-precedence.pth"), "# a comment\n\nimport os; os.getcwd()\n").unwrap();

    let pip = freeze_from_disk(dir.path(), &Tool::Pip).unwrap();
    assert_eq!(pip.site, site.canonicalize().unwrap());
    assert_eq!(
        pip.pins,
        [
            "jax==0.4.35",
            "jax_cuda12_plugin==0.4.35",
            "My_Pkg @ file:///src/my_pkg",
            "torch==2.5.1+cu121",
            "torchvision @ file:///w/tv.whl#sha256=ab12",
        ]
    );
    assert_eq!(
        freeze_from_disk(dir.path(), &uv()).unwrap().pins,
        [
            "jax==0.4.35",
            "jax-cuda12-plugin==0.4.35",
            "my-pkg @ file:///src/my_pkg",
            "torch==2.5.1+cu121",
            "torchvision @ file:///w/tv.whl",
        ]
    );
}

#[test]
fn an_empty_venv_reads_as_an_empty_list() {
    let (dir, _) = venv(CFG);
    assert_eq!(freeze_from_disk(dir.path(), &uv()).unwrap().pins, Vec::<String>::new());
}

#[test]
fn what_the_tool_must_list_falls_back_and_says_why() {
    // Environments that are not a venv of one site-packages.
    let (dir, _) = venv(CFG);
    std::fs::create_dir(dir.path().join("conda-meta")).unwrap();
    assert_eq!(why_not(dir.path()), "a conda environment");
    let (dir, _) = venv(CFG);
    let conda = freeze_from_disk(dir.path(), &Tool::Conda { conda: "/c/conda".into() });
    assert_eq!(conda, Err("a conda tool lists the environment".into()));
    let (dir, _) = venv(CFG);
    std::fs::remove_file(dir.path().join("pyvenv.cfg")).unwrap();
    assert!(why_not(dir.path()).starts_with("no readable pyvenv.cfg, so not a venv"));
    for cfg in ["home = /usr/bin\ninclude-system-site-packages = True\n", "home = /usr/bin\n"] {
        let (dir, _) = venv(cfg);
        assert_eq!(why_not(dir.path()), "the venv sees the system site-packages", "{cfg}");
    }
    let (dir, _) = venv(CFG);
    std::fs::create_dir_all(dir.path().join("lib/python3.12/site-packages")).unwrap();
    assert!(why_not(dir.path()).starts_with("2 site-packages folders in "));
    let (dir, site) = venv(CFG);
    std::fs::remove_dir(&site).unwrap();
    assert!(why_not(dir.path()).starts_with("no site-packages folder in "));

    // Distributions that are not (only) `*.dist-info` folders.
    let cases: [(&str, &str); 4] = [
        ("old-1.0-py3.11.egg-info", "old-1.0-py3.11.egg-info: not a *.dist-info folder"),
        ("dev.egg-link", "dev.egg-link: not a *.dist-info folder"),
        ("zipped-1.0-py3.11.egg", "zipped-1.0-py3.11.egg: not a *.dist-info folder"),
        ("easy-install.pth", "easy-install.pth adds a folder to the path"),
    ];
    for (name, why) in cases {
        let (dir, site) = venv(CFG);
        dist(&site, "torch-2.5.1.dist-info", &meta("torch", "2.5.1"), None);
        std::fs::write(site.join(name), "/src/dev\n").unwrap();
        assert_eq!(why_not(dir.path()), why);
    }
}

#[test]
fn origins_without_a_known_freeze_line_fall_back() {
    let cases = [
        (r#"{"url": "file:///src/p", "dir_info": {"editable": true}}"#, "says an editable install"),
        (r#"{"url": "file:///src/p", "dir_info": {"editable": "yes"}}"#, "has an editable flag"),
        (r#"{"url": "file:///src/p", "vcs_info": {"vcs": "git", "commit_id": "ab"}}"#, "records no archive"),
        (r#"{"url": "file:///p.whl", "archive_info": {}, "dir_info": {}}"#, "records no archive"),
        (r#"{"url": "file:///p.whl"}"#, "records no archive"),
        (r#"{"url": "https://x.org/p.whl", "archive_info": {}}"#, "names https://x.org/p.whl, not a local file"),
        (r#"{"url": "file:///p.tgz", "archive_info": {}, "subdirectory": "py"}"#, "names a subdirectory"),
        (r#"{"url": "file:///p.whl", "archive_info": {"hash": "ab12"}}"#, "which pip rejects"),
        (r#"{"url": "file:///p.whl", "archive_info": {"hash": 7}}"#, "which pip rejects"),
        (r#"{"archive_info": {}}"#, "has no url"),
        ("{\"url\": \"file:///p.whl\", \"archive_in", "is not JSON"),
    ];
    for (json, why) in cases {
        let (dir, site) = venv(CFG);
        dist(&site, "p-1.0.dist-info", &meta("p", "1.0"), Some(json));
        let said = why_not(dir.path());
        assert!(said.starts_with("p-1.0.dist-info: direct_url.json ") && said.contains(why), "{json}: {said}");
    }
    // An archive without a hash is `name @ url` for pip too.
    let (dir, site) = venv(CFG);
    dist(&site, "p-1.0.dist-info", &meta("p", "1.0"), Some(r#"{"url": "file:///p.whl", "archive_info": {}}"#));
    assert_eq!(freeze_from_disk(dir.path(), &Tool::Pip).unwrap().pins, ["p @ file:///p.whl"]);
}

#[test]
fn names_and_versions_that_could_print_otherwise_fall_back() {
    let cases = [
        ("p-1.0-1.dist-info", "p", "1.0-1", "is not in its normalized form"),
        ("p-01.0.dist-info", "p", "01.0", "is not in its normalized form"),
        ("p-1.0+CU121.dist-info", "p", "1.0+CU121", "is not in its normalized form"),
        ("p-1!2.0.dist-info", "p", "1!2.0", "is not in its normalized form"),
        ("p_-1.0.dist-info", "p_", "1.0", "is not a valid distribution name"),
        ("q-1.0.dist-info", "p", "1.0", "its METADATA says p 1.0"),
        ("p-1.1.dist-info", "p", "1.0", "its METADATA says p 1.0"),
        ("p-q-1.0.dist-info", "p-q", "1.0", "its METADATA says p-q 1.0"),
        ("argparse-1.4.0.dist-info", "argparse", "1.4.0", "pip leaves argparse out of its list"),
    ];
    for (folder, name, version, why) in cases {
        let (dir, site) = venv(CFG);
        dist(&site, folder, &meta(name, version), None);
        let said = why_not(dir.path());
        assert!(said.starts_with(&format!("{folder}: ")) && said.ends_with(why), "{folder}: {said}");
    }
    let (dir, site) = venv(CFG);
    dist(&site, "a_b-1.0.dist-info", &meta("a_b", "1.0"), None);
    dist(&site, "a.b-1.0.dist-info", &meta("a.b", "1.0"), None);
    assert!(why_not(dir.path()).ends_with(" is installed twice"));
}

#[test]
fn malformed_or_unreadable_metadata_falls_back() {
    let mut junk = b"Name: p\nVersion: 1.0".to_vec();
    junk.splice(3..3, [0xff, 0xfe, 0x00]);
    let cases: [(&[u8], &str); 7] = [
        (b"Metadata-Version: 2.1\nName: p\nSummary: no version\n\nVersion: 1.0\n", "no Name and Version"),
        (b"Metadata-Version: 2.1\nName: p\nVers", "no Name and Version"),
        (b"", "no Name and Version"),
        (b"\nName: p\nVersion: 1.0\n", "no Name and Version"),
        (&junk, "a header that is not UTF-8"),
        (&[0x80; 300], "a header that is not UTF-8"),
        (&[b'a'; 200_000], "no Name and Version"),
    ];
    for (text, why) in cases {
        let (dir, site) = venv(CFG);
        dist(&site, "p-1.0.dist-info", text, None);
        let said = why_not(dir.path());
        assert!(said.contains(&format!("p-1.0.dist-info/METADATA: {why}")), "{said}");
    }
    // No METADATA, or one that is a folder.
    let (dir, site) = venv(CFG);
    std::fs::create_dir_all(site.join("p-1.0.dist-info")).unwrap();
    assert!(why_not(dir.path()).starts_with("could not read "));
    std::fs::create_dir(site.join("p-1.0.dist-info/METADATA")).unwrap();
    assert!(why_not(dir.path()).starts_with("could not read "));
}

#[test]
fn only_the_header_is_read() {
    // A body that is not UTF-8, and a header past the cap whose cut falls inside a character.
    let (dir, site) = venv(CFG);
    let mut text = meta("p", "1.0");
    text.extend([0xff; 100]);
    dist(&site, "p-1.0.dist-info", &text, None);
    let mut long = meta("q", "2.0");
    long.truncate(long.iter().position(|&b| b == b'R').unwrap());
    long.extend(b"Description: ");
    if (usize::try_from(HEADER_CAP).unwrap() - long.len()).is_multiple_of(2) {
        long.push(b'x'); // so that the cap falls inside a two-byte `é`
    }
    long.extend("é".repeat(40_000).into_bytes());
    dist(&site, "q-2.0.dist-info", &long, None);
    assert_eq!(freeze_from_disk(dir.path(), &Tool::Pip).unwrap().pins, ["p==1.0", "q==2.0"]);
}

#[test]
fn canonical_versions_are_told_from_the_rest() {
    for v in
        ["0", "1.0", "2.5.1+cu121", "1.0a1", "1.0b2", "1.0rc1", "1.0.post1", "1.0.dev0", "1.0rc1.post2.dev3", "3+0.x1"]
    {
        assert!(is_canonical_version(v), "{v}");
    }
    for v in [
        "",
        "1.",
        ".1",
        "01",
        "1.0-1",
        "1.0.post",
        "1.0dev1",
        "1.0.dev1.post1",
        "1.0RC1",
        "1.0c1",
        "1+",
        "1+a..b",
        "1+01",
        "1!1",
        "v1",
    ] {
        assert!(!is_canonical_version(v), "{v}");
    }
    assert!(sees_system_site("include-system-site-packages=TRUE"));
    assert!(!sees_system_site("Include-System-Site-Packages = False\n"));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    #[test]
    fn arbitrary_metadata_and_direct_urls_never_panic(
        metadata in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400),
        json in "\\PC{0,80}",
        version in "[0-9a-z.+!-]{0,12}",
    ) {
        let (dir, site) = venv(CFG);
        dist(&site, "p-1.0.dist-info", &metadata, Some(&json));
        let _ = freeze_from_disk(dir.path(), &Tool::Pip);
        let _ = direct_url(json.as_bytes());
        let _ = is_canonical_version(&version);
    }
}
