//! `ARCHITECTURE.md`'s crate table says what each crate holds, its state and which crate alone uses
//! which dependency. This test keeps the checkable parts true: every "only `crate` uses …" names
//! the one crate whose manifest lists each of those dependencies, and a crate is "empty" in the
//! table exactly when its `lib.rs` holds nothing but doc comments, and waits on no stage that exists.

// Helpers outside #[test] functions are not "in tests" for clippy's allow-unwrap-in-tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The "Stages and crates" section.
fn crates_section() -> String {
    let doc = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let start = doc.find("## Stages and crates").expect("ARCHITECTURE.md has a 'Stages and crates' section");
    let rest = &doc[start + 2..];
    rest[..rest.find("\n## ").unwrap_or(rest.len())].to_owned()
}

/// (crate name, dir, state) for each row of the crate table.
fn table(section: &str) -> Vec<(String, String, String)> {
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            assert_eq!(cells.len(), 4, "a crate row has four cells: {l}");
            let unquote = |s: &str| s.trim_matches('`').trim_end_matches('/').to_owned();
            (unquote(cells[0]), unquote(cells[1]), cells[3].to_owned())
        })
        .collect()
}

/// The package names in every dependency table of a manifest.
fn dependencies(manifest: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let mut in_deps = false;
    let mut names = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line.trim_matches(['[', ']']).ends_with("dependencies");
        } else if in_deps && let Some((key, _)) = line.split_once('=') {
            let key = key.trim();
            names.push(key.strip_suffix(".workspace").unwrap_or(key).trim().to_owned());
        }
    }
    names
}

/// Each "Only `crate` uses a, b and c" / "only `crate` uses a" sentence as (crate, [a, b, c]).
fn only_uses(section: &str) -> Vec<(String, Vec<String>)> {
    let text = section.replace('\n', " ");
    let mut claims = Vec::new();
    for part in text.split("nly `").skip(1) {
        let Some((krate, rest)) = part.split_once("` uses ") else { continue };
        let list = rest.split(['.', ';', '(']).next().unwrap();
        let list = list.split(", and only").next().unwrap();
        let deps: Vec<String> = list
            .split([','])
            .flat_map(|s| s.split(" and "))
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect();
        claims.push((krate.to_owned(), deps));
    }
    claims
}

#[test]
fn only_the_named_crate_uses_each_dependency_the_table_names() {
    let section = crates_section();
    let crates = table(&section);
    // The sentences name crates by their folder.
    let dirs: Vec<(String, Vec<String>)> =
        crates.iter().map(|(_, dir, _)| (dir.clone(), dependencies(&root().join(dir).join("Cargo.toml")))).collect();
    let claims = only_uses(&section);
    assert!(claims.iter().any(|(_, deps)| deps.iter().any(|d| d == "egui")), "the egui claim is there: {claims:?}");
    for (krate, deps) in claims {
        for dep in deps {
            let users: Vec<&str> =
                dirs.iter().filter(|(_, ds)| ds.contains(&dep)).map(|(name, _)| name.as_str()).collect();
            assert_eq!(users, [krate.as_str()], "ARCHITECTURE.md: only `{krate}` uses {dep}");
        }
    }
}

#[test]
fn a_crate_is_empty_in_the_table_exactly_when_it_holds_no_code() {
    for (name, dir, state) in table(&crates_section()) {
        let src = root().join(&dir).join("src");
        let lib = std::fs::read_to_string(src.join("lib.rs"))
            .or_else(|_| std::fs::read_to_string(src.join("main.rs")))
            .unwrap();
        let empty = lib.lines().all(|l| l.trim().is_empty() || l.trim_start().starts_with("//"));
        assert_eq!(state.starts_with("empty"), empty, "ARCHITECTURE.md's state of `{name}`: {state}");
        // A crate does not wait for a stage that is already there.
        if state.contains("once diagnosis exists") {
            assert!(
                !root().join("probes/judge/src/diagnose").exists(),
                "`{name}` waits for diagnosis, which exists: {state}"
            );
        }
    }
}
