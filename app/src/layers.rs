//! The app's modules point one way: the command code (`main.rs`, `cli.rs` and `cli/`, `bench.rs`, `fleet.rs`, `fix.rs`, `setup.rs`)
//! sits on top and uses the window (`gui`) and the services (`ops`, `render`, `exit`, `files`, …);
//! nothing below reaches up into it, and no service uses the window, so there is no import circle
//! such as `cli → gui → render → cli`. This test reads the sources and checks every `crate::` and
//! root-reaching `super::` path outside the command code.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

/// The command code: files that may use anything.
const COMMANDS: [&str; 6] = ["main.rs", "cli.rs", "bench.rs", "fleet.rs", "fix.rs", "setup.rs"];
/// Command modules: nothing else may use them.
const COMMAND_MODULES: [&str; 5] = ["cli", "bench", "fleet", "fix", "setup"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The modules `main.rs` declares: the only names below the crate root that are not `main.rs`'s
/// own items.
fn crate_modules() -> Vec<String> {
    let main = std::fs::read_to_string(src().join("main.rs")).unwrap();
    main.lines()
        .filter_map(|l| l.trim().strip_prefix("mod ").or_else(|| l.trim().strip_prefix("pub mod ")))
        .map(|m| m.trim_end_matches(';').trim().to_owned())
        .collect()
}

/// The module path of a file below `src/`: `gui/pages/report.rs` → `[gui, pages, report]`,
/// `gui/mod.rs` → `[gui]`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let file = parts.pop().unwrap();
    if file != "mod.rs" {
        parts.push(file.trim_end_matches(".rs").to_owned());
    }
    parts
}

/// The first name after the crate root of every path in `code` that reaches the crate root
/// (`crate::x`, `crate::{x, y}`, or enough `super::`s), as seen from the module `at`.
fn root_names(code: &str, at: &[String]) -> Vec<String> {
    let ident = |s: &str| -> String { s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    let mut out = Vec::new();
    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
        let mut rest = line;
        while let Some(i) = rest.find("crate::").or_else(|| rest.find("super::")) {
            let before = rest[..i].chars().last();
            let start = rest[i..].starts_with("crate::");
            let mut tail = &rest[i..];
            rest = &rest[i + 7..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut depth = at.len();
            if start {
                depth = 0;
                tail = &tail[7..];
            } else {
                while let Some(t) = tail.strip_prefix("super::") {
                    depth = depth.saturating_sub(1);
                    tail = t;
                }
            }
            if depth > 0 {
                continue;
            }
            match tail.strip_prefix('{') {
                Some(group) => {
                    let group = group.split('}').next().unwrap_or_default();
                    out.extend(group.split(',').map(|n| ident(n.trim())).filter(|n| !n.is_empty()));
                }
                // `super::*` (a file's inline tests) names nothing.
                None => out.extend(Some(ident(tail)).filter(|n| !n.is_empty())),
            }
        }
    }
    out
}

#[test]
fn nothing_below_the_commands_uses_them() {
    let modules = crate_modules();
    assert!(modules.iter().any(|m| m == "render") && modules.iter().any(|m| m == "gui"), "{modules:?}");
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut checked = 0;
    let mut wrong = Vec::new();
    for path in files {
        let rel = path.strip_prefix(src()).unwrap().to_owned();
        let top = rel.iter().next().unwrap().to_string_lossy().into_owned();
        if COMMANDS.contains(&top.as_str()) || top == "cli" || rel == Path::new("layers.rs") {
            continue;
        }
        let code = std::fs::read_to_string(&path).unwrap();
        checked += 1;
        for name in root_names(&code, &module_path(&rel)) {
            // The window is a top too: only the command code opens it, so the services cannot
            // circle back through it (`render → gui → render`).
            let window_from_below = name == "gui" && top != "gui";
            if COMMAND_MODULES.contains(&name.as_str()) || !modules.contains(&name) || window_from_below {
                wrong.push(format!("{} uses crate::{name}", rel.display()));
            }
        }
    }
    assert!(checked > 30, "only {checked} files checked");
    assert!(wrong.is_empty(), "command code used from below it:\n{}", wrong.join("\n"));
}

#[test]
fn the_path_reader_sees_what_it_must() {
    let at = |p: &str| module_path(Path::new(p));
    assert_eq!(at("gui/pages/report.rs"), ["gui", "pages", "report"]);
    assert_eq!(root_names("use crate::cli::Format;", &at("render/document.rs")), ["cli"]);
    assert_eq!(root_names("use crate::{bench, plots};", &at("render/html.rs")), ["bench", "plots"]);
    assert_eq!(root_names("let r = crate::judged(snap);", &at("gui/machine.rs")), ["judged"]);
    assert_eq!(root_names("use super::cli::EXIT_OK;", &at("gui/mod.rs")), ["cli"]);
    assert_eq!(root_names("use super::super::bench;", &at("render/x.rs")), ["bench"]);
    // An inline `mod tests` seen as its file (it can only be stricter): `super::*` names nothing.
    assert!(root_names("use super::*;", &at("files.rs")).is_empty());
    // Paths that stay inside their module are not the crate root's.
    assert!(root_names("use super::bench::RunState;", &at("gui/tests.rs")).is_empty());
    assert!(root_names("use super::facts::label;", &at("render/html.rs")).is_empty());
    assert!(root_names("// crate::cli in a comment", &at("render/html.rs")).is_empty());
}
