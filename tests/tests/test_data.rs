//! Where tests keep their data and their code, checked from the tree itself:
//!
//! - no file of a crate reads a file inside another crate's `src/` (through `include_str!`,
//!   `include_bytes!`, `#[path]`, or a path built from `CARGO_MANIFEST_DIR` or starting with `../`);
//!   walking another crate's whole `src/` folder (a source scan such as the layering check or the
//!   window's font coverage) is not reading its files;
//! - no data file sits under a crate's `src/`: a crate's test data is in its own `tests/data/`;
//! - unit tests are a module named `tests` (inline, or `tests.rs`/`tests/` beside the module),
//!   never a `#[path]` module;
//! - a sample that two crates' tests both need is byte-identical in both `tests/data/` folders
//!   (the same path below `tests/data/`; a folder's `README.md` and `SOURCES.md` are its own).
//!
//! Recorded machines (`tests/fixtures/`) and the real captures in `../shared/fixtures` are read in
//! place: they are nobody's `src/`.

// Helpers outside #[test] functions are not "in tests" for clippy's allow-unwrap-in-tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Checks of the tree itself, which name paths in every crate by design: this file (its self-test
/// names paths into other crates' sources), the check of ARCHITECTURE.md's claims, and the corpus
/// score, whose leave-one-source-out reads which threads each paste reader's source cites.
const TREE_CHECKS: &[&str] = &["tests/tests/test_data.rs", "tests/tests/architecture_doc.rs", "tests/tests/corpus.rs"];

/// A workspace crate: its package name and its folder relative to the workspace root.
#[derive(Debug, Clone)]
struct Crate {
    name: String,
    dir: PathBuf,
}

/// The workspace crates, from `cargo metadata`.
fn crates() -> Vec<Crate> {
    let meta = gpu_doctor_tests::workspace_metadata();
    let root = PathBuf::from(meta["workspace_root"].as_str().unwrap());
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let manifest = PathBuf::from(p["manifest_path"].as_str().unwrap());
            let dir = manifest.parent().unwrap().strip_prefix(&root).unwrap().to_path_buf();
            Crate { name: p["name"].as_str().unwrap().to_owned(), dir }
        })
        .collect()
}

/// The crate whose folder holds `path` (the deepest one: `probes/model/…` is the model's).
fn owner<'a>(crates: &'a [Crate], path: &Path) -> Option<&'a Crate> {
    crates.iter().filter(|c| path.starts_with(&c.dir)).max_by_key(|c| c.dir.components().count())
}

/// `path` with `.` and `..` resolved lexically; `None` when it climbs above the workspace root.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(p) => out.push(p),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// The string literals of a line of code (escapes kept as written; a `'"'` is no literal).
fn literals(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '\'' && chars.get(i + 1) == Some(&'"') && chars.get(i + 2) == Some(&'\'') {
            i += 3;
        } else if chars[i] == '"' {
            let mut lit = String::new();
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    lit.push(chars[i]);
                    i += 1;
                }
                if let Some(&c) = chars.get(i) {
                    lit.push(c);
                }
                i += 1;
            }
            out.push(lit);
            i += 1;
        } else {
            i += 1;
        }
    }
    out
}

/// The paths (relative to the workspace root) that a source file `file` of the crate in
/// `crate_dir` names: include_str!/include_bytes!/#[path] relative to the file's folder, paths
/// built from CARGO_MANIFEST_DIR or starting with `../` relative to the crate, and, in a file that
/// joins `..` to CARGO_MANIFEST_DIR (the workspace root), every path-like literal relative to the
/// root. Each with its line number.
fn named_paths(file: &Path, crate_dir: &Path, text: &str) -> Vec<(usize, PathBuf)> {
    let code: Vec<(usize, &str)> =
        text.lines().enumerate().map(|(i, l)| (i + 1, l)).filter(|(_, l)| !l.trim_start().starts_with("//")).collect();
    let rooted = code.iter().any(|(_, l)| {
        l.contains("CARGO_MANIFEST_DIR") && literals(l).iter().any(|s| s == "..") && l.contains(".join(\"..\")")
    });
    let file_dir = file.parent().unwrap_or(Path::new(""));
    let mut out = Vec::new();
    for (n, line) in code {
        let lits: Vec<String> = literals(line).into_iter().filter(|s| s != "CARGO_MANIFEST_DIR").collect();
        if line.contains("CARGO_MANIFEST_DIR") {
            let mut path = crate_dir.to_path_buf();
            for l in &lits {
                path.push(l.trim_start_matches('/'));
            }
            out.push((n, path));
        } else if line.contains("include_str!") || line.contains("include_bytes!") || line.contains("#[path") {
            out.push((n, file_dir.join(lits.concat())));
        } else {
            for l in lits {
                if l.starts_with("../") {
                    out.push((n, crate_dir.join(l)));
                } else if rooted && l.contains('/') && !l.contains(char::is_whitespace) && !l.contains("::") {
                    out.push((n, PathBuf::from(l)));
                }
            }
        }
    }
    out
}

/// Where `file` (relative to the root, with its text) reads a file inside another crate's `src/`:
/// "file:line: path".
fn reads_into_other_src(crates: &[Crate], file: &Path, text: &str) -> Vec<String> {
    let Some(this) = owner(crates, file) else { return vec![] };
    let mut out = Vec::new();
    for (line, path) in named_paths(file, &this.dir, text) {
        let Some(path) = normalize(&path) else { continue };
        let Some(other) = owner(crates, &path) else { continue };
        let src = other.dir.join("src");
        if other.name != this.name && path.starts_with(&src) && path != src {
            out.push(format!("{}:{line}: {} (inside {}'s src/)", file.display(), path.display(), other.name));
        }
    }
    out
}

/// Every file below `dir` (relative to the root), skipping build output and hidden folders.
fn files(root: &Path, dir: &Path, out: &mut BTreeSet<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else { return };
    for entry in entries {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = dir.join(&name);
        if entry.file_type().unwrap().is_dir() {
            if name != "target" && !name.starts_with('.') {
                files(root, &rel, out);
            }
        } else {
            out.insert(rel);
        }
    }
}

#[test]
fn no_file_reads_inside_another_crates_src() {
    let crates = crates();
    let root = root();
    let mut all = BTreeSet::new();
    for c in &crates {
        files(&root, &c.dir, &mut all);
    }
    let mut bad = Vec::new();
    let mut scanned = 0;
    for file in all
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs") && !TREE_CHECKS.iter().any(|c| *f == Path::new(c)))
    {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        bad.extend(reads_into_other_src(&crates, file, &text));
        scanned += 1;
    }
    assert!(scanned > 100, "only {scanned} Rust files found: is the root right?");
    assert!(
        bad.is_empty(),
        "tests read inside another crate's src/ (give the crate its own tests/data/):\n{}",
        bad.join("\n")
    );
}

/// Files under a crate's `src/` that are not Rust.
fn data_under_src(crates: &[Crate], paths: &BTreeSet<PathBuf>) -> Vec<PathBuf> {
    paths
        .iter()
        .filter(|p| p.extension().is_none_or(|e| e != "rs"))
        .filter(|p| owner(crates, p).is_some_and(|c| p.starts_with(c.dir.join("src"))))
        .cloned()
        .collect()
}

#[test]
fn no_data_sits_under_src() {
    let crates = crates();
    let root = root();
    let mut all = BTreeSet::new();
    for c in &crates {
        files(&root, &c.dir.join("src"), &mut all);
    }
    let bad = data_under_src(&crates, &all);
    assert!(bad.is_empty(), "data under src/ (move it to the crate's tests/data/): {bad:#?}");
}

/// Lines of Rust code that give a module a `#[path]` or a test module another name than `tests`.
fn other_test_layouts(file: &Path, text: &str) -> Vec<String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            let l = l.trim_start();
            let name = l.strip_prefix("mod ").map(|r| r.trim_end_matches([';', '{', ' ']));
            l.starts_with("#[path") || name.is_some_and(|n| n.ends_with("_tests") || n.ends_with("_test"))
        })
        .map(|(i, l)| format!("{}:{}: {}", file.display(), i + 1, l.trim()))
        .collect()
}

#[test]
fn unit_tests_are_modules_named_tests_without_path() {
    let crates = crates();
    let root = root();
    let mut all = BTreeSet::new();
    for c in &crates {
        files(&root, &c.dir.join("src"), &mut all);
    }
    let mut bad = Vec::new();
    for file in all.iter().filter(|f| f.extension().is_some_and(|e| e == "rs")) {
        bad.extend(other_test_layouts(file, &std::fs::read_to_string(root.join(file)).unwrap()));
    }
    assert!(
        bad.is_empty(),
        "unit tests go in `mod tests` (inline, or tests.rs beside), never #[path]:\n{}",
        bad.join("\n")
    );
}

/// Files that two crates' `tests/data/` hold under the same name with different bytes.
fn diverged_copies(copies: &BTreeMap<PathBuf, Vec<(String, Vec<u8>)>>) -> Vec<String> {
    copies
        .iter()
        .filter(|(_, held)| held.windows(2).any(|w| w[0].1 != w[1].1))
        .map(|(name, held)| {
            let who: Vec<&str> = held.iter().map(|(c, _)| c.as_str()).collect();
            format!("{} differs between {}", name.display(), who.join(", "))
        })
        .collect()
}

#[test]
fn a_sample_two_crates_need_is_the_same_in_both() {
    let crates = crates();
    let root = root();
    let mut held: BTreeMap<PathBuf, Vec<(String, Vec<u8>)>> = BTreeMap::new();
    for c in &crates {
        let data = c.dir.join("tests/data");
        let mut files_of = BTreeSet::new();
        files(&root, &data, &mut files_of);
        // A folder's README.md and SOURCES.md describe that folder, not a sample.
        for f in files_of.into_iter().filter(|f| !f.ends_with("README.md") && !f.ends_with("SOURCES.md")) {
            let bytes = std::fs::read(root.join(&f)).unwrap();
            held.entry(f.strip_prefix(&data).unwrap().to_path_buf()).or_default().push((c.name.clone(), bytes));
        }
    }
    let shared = held.values().filter(|h| h.len() > 1).count();
    assert!(shared > 0, "the app's and installers' pasted samples are copies of the probes' (see their README.md)");
    let bad = diverged_copies(&held);
    assert!(bad.is_empty(), "copies must stay byte-identical to the owner's:\n{}", bad.join("\n"));
}

fn fake_crates() -> Vec<Crate> {
    [
        ("gpu-doctor", "app"),
        ("gpu-doctor-probes", "probes"),
        ("gpu-doctor-model", "probes/model"),
        ("gpu-doctor-tests", "tests"),
    ]
    .into_iter()
    .map(|(name, dir)| Crate { name: name.into(), dir: dir.into() })
    .collect()
}

/// The check catches every way a test reached into another crate's `src/` before, and leaves the
/// crate's own data, the recorded machines, the shared captures and whole-folder scans alone.
#[test]
fn the_check_catches_a_test_reading_another_crates_src() {
    let crates = fake_crates();
    let caught = |file: &str, text: &str| reads_into_other_src(&crates, Path::new(file), text);
    for (file, text) in [
        (
            "app/src/render/text.rs",
            r#"let t = include_str!("../../../probes/src/parse/paste/samples/support_thread.md");"#,
        ),
        ("app/src/ops/fleet/slurm/tests.rs", r#"#[path = "../../../../../probes/src/test_util.rs"]"#),
        (
            "app/tests/cli.rs",
            r#"PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../probes/src/parse/paste/samples").join(name)"#,
        ),
        ("probes/model/src/x/tests.rs", r#"include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../src/parse/a.txt"))"#),
        (
            "tests/src/fleet.rs",
            r#"    let p = std::fs::read_to_string("../app/src/ops/testdata/bench-run-0.1.0.json");"#,
        ),
        (
            "app/src/gui/tests.rs",
            "let root = Path::new(env!(\"CARGO_MANIFEST_DIR\")).join(\"..\");\nlet f = root.join(\"probes/model/src/lib.rs\");",
        ),
    ] {
        assert_eq!(caught(file, text).len(), 1, "{file}: {text}");
    }
    for (file, text) in [
        (
            "probes/src/parse/smi_q/tests.rs",
            r#"include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smi_q/a.txt"))"#,
        ),
        ("app/tests/support/mod.rs", r#"Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(name)"#),
        (
            "probes/src/parse/mod.rs",
            r#"const F: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/fixtures");"#,
        ),
        (
            "probes/src/probe/deep.rs",
            r#"include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/python/probe.py"))"#,
        ),
        ("probes/src/parse/x.rs", r#"include_str!("y/sample.txt")"#),
        (
            "app/src/gui/tests.rs",
            "let root = Path::new(env!(\"CARGO_MANIFEST_DIR\")).join(\"..\");\nfor d in [\"probes/src\", \"app/src\"] {}",
        ),
        ("app/src/x.rs", r#"// include_str!("../../probes/src/lib.rs") in a comment"#),
    ] {
        assert_eq!(caught(file, text), Vec::<String>::new(), "{file}: {text}");
    }
}

#[test]
fn the_other_checks_catch_data_under_src_stray_layouts_and_diverged_copies() {
    let crates = fake_crates();
    let paths: BTreeSet<PathBuf> =
        ["probes/src/parse/a.rs", "probes/src/parse/paste/samples/x.txt", "probes/tests/data/paste/x.txt"]
            .into_iter()
            .map(PathBuf::from)
            .collect();
    assert_eq!(data_under_src(&crates, &paths), [PathBuf::from("probes/src/parse/paste/samples/x.txt")]);

    let f = Path::new("a.rs");
    assert_eq!(other_test_layouts(f, "#[cfg(test)]\n#[path = \"a_tests.rs\"]\nmod tests;\n").len(), 1);
    assert_eq!(other_test_layouts(f, "#[cfg(test)]\nmod driver_tests;\n").len(), 1);
    assert!(other_test_layouts(f, "#[cfg(test)]\nmod tests;\n#[cfg(test)]\nmod tests {\n}\n").is_empty());

    let mut copies = BTreeMap::new();
    copies.insert(PathBuf::from("paste/x.txt"), vec![("probes".into(), b"a".to_vec()), ("app".into(), b"a".to_vec())]);
    assert!(diverged_copies(&copies).is_empty());
    copies.insert(PathBuf::from("paste/y.txt"), vec![("probes".into(), b"a".to_vec()), ("app".into(), b"b".to_vec())]);
    assert_eq!(diverged_copies(&copies), ["paste/y.txt differs between probes, app"]);
}
