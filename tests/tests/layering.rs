//! The layering the design promises, checked from the code itself:
//!
//! - crates point one way (`cargo metadata`, normal dependencies): the model depends on no crate of
//!   the workspace, the knowledge base only on the model, probes and judge only on those two, and
//!   nothing below the app depends on the app, kernels or installers;
//! - no two files import each other, directly or around a circle: every `use` line and every
//!   `crate::`/`super::`/`self::` path outside test code is resolved to the file that defines the
//!   name (through `pub use` re-exports), and the file graph of each crate must have no cycle.

// Helpers outside #[test] functions are not "in tests" for clippy's allow-unwrap-in-tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Which workspace crates each workspace crate may depend on (normal dependencies).
const MAY_USE: &[(&str, &[&str])] = &[
    ("gpu-doctor-model", &[]),
    ("gpu-doctor-kb", &["gpu-doctor-model"]),
    ("gpu-doctor-probes", &["gpu-doctor-model", "gpu-doctor-kb"]),
    ("gpu-doctor-judge", &["gpu-doctor-model", "gpu-doctor-kb"]),
    ("gpu-doctor-kernels", &["gpu-doctor-model", "gpu-doctor-kb", "gpu-doctor-probes", "gpu-doctor-judge"]),
    ("gpu-doctor-installers", &["gpu-doctor-model", "gpu-doctor-kb", "gpu-doctor-probes", "gpu-doctor-judge"]),
    (
        "gpu-doctor",
        &[
            "gpu-doctor-model",
            "gpu-doctor-kb",
            "gpu-doctor-probes",
            "gpu-doctor-judge",
            "gpu-doctor-kernels",
            "gpu-doctor-installers",
        ],
    ),
    ("gpu-doctor-tests", &["gpu-doctor-model", "gpu-doctor-kb", "gpu-doctor-probes", "gpu-doctor-judge"]),
];

/// (package, [normal dependencies inside the workspace]) from `cargo metadata`.
fn workspace_edges() -> Vec<(String, Vec<String>)> {
    let meta = gpu_doctor_tests::workspace_metadata();
    let packages = meta["packages"].as_array().unwrap();
    let names: BTreeSet<&str> = packages.iter().map(|p| p["name"].as_str().unwrap()).collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null() && names.contains(d["name"].as_str().unwrap()))
                .map(|d| d["name"].as_str().unwrap().to_owned())
                .collect();
            (p["name"].as_str().unwrap().to_owned(), deps)
        })
        .collect()
}

#[test]
fn crates_depend_only_downward() {
    let edges = workspace_edges();
    let listed: BTreeSet<&str> = MAY_USE.iter().map(|(n, _)| *n).collect();
    let found: BTreeSet<&str> = edges.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(found, listed, "every workspace crate has a row in MAY_USE, and every row a crate");
    let mut wrong = Vec::new();
    for (name, deps) in &edges {
        let allowed = MAY_USE.iter().find(|(n, _)| n == name).unwrap().1;
        wrong.extend(deps.iter().filter(|d| !allowed.contains(&d.as_str())).map(|d| format!("{name} → {d}")));
    }
    assert!(wrong.is_empty(), "dependencies against the direction model ← kb ← {{probes, judge}} ← …: {wrong:?}");
}

/// Only `app` (and dev-only `tests`) may use the window and command-line crates; only `kernels`
/// may use cudarc; NVML lives in `probes`.
#[test]
fn the_heavy_dependencies_stay_where_they_belong() {
    let meta = gpu_doctor_tests::workspace_metadata();
    let rules: &[(&str, &[&str])] = &[
        ("egui", &["gpu-doctor"]),
        ("eframe", &["gpu-doctor"]),
        ("egui_plot", &["gpu-doctor"]),
        ("rfd", &["gpu-doctor"]),
        ("clap", &["gpu-doctor"]),
        ("cudarc", &["gpu-doctor-kernels"]),
        ("nvml-wrapper", &["gpu-doctor-probes"]),
    ];
    for (dep, allowed) in rules {
        for p in meta["packages"].as_array().unwrap() {
            let name = p["name"].as_str().unwrap();
            let uses = p["dependencies"].as_array().unwrap().iter().any(|d| d["name"] == *dep && d["kind"].is_null());
            assert!(!uses || allowed.contains(&name), "{name} depends on {dep}; only {allowed:?} may");
        }
    }
}

/// One crate's source: its files by module path.
struct Crate {
    files: BTreeMap<Vec<String>, PathBuf>,
    text: BTreeMap<PathBuf, String>,
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

/// The module path of a file below `src/`: `a/b.rs` → `[a, b]`, `a/mod.rs` → `[a]`, `lib.rs` → `[]`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let file = parts.pop().unwrap();
    if !matches!(file.as_str(), "mod.rs" | "lib.rs" | "main.rs") {
        parts.push(file.trim_end_matches(".rs").to_owned());
    }
    parts
}

/// The code of a file without its comments and without its test module (`#[cfg(test)]` up to the
/// end of the file, where this project keeps it), so that tests' imports are not counted.
fn code(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") {
            break;
        }
        if t.starts_with("//") {
            continue;
        }
        out.push_str(line.split(" // ").next().unwrap_or(line));
        out.push('\n');
    }
    out
}

impl Crate {
    fn read(src: &Path) -> Self {
        let mut paths = Vec::new();
        rust_files(src, &mut paths);
        let mut files = BTreeMap::new();
        let mut text = BTreeMap::new();
        for p in paths {
            let rel = p.strip_prefix(src).unwrap();
            // Test files are not part of the structure.
            if rel.iter().any(|c| c == "tests" || c == "tests.rs") || rel.to_string_lossy().ends_with("_tests.rs") {
                continue;
            }
            files.insert(module_path(rel), p.clone());
            text.insert(p.clone(), code(&std::fs::read_to_string(&p).unwrap()));
        }
        Self { files, text }
    }

    /// The names a file defines at its top level (items, and the modules below it).
    fn defines(&self, module: &[String], name: &str) -> bool {
        let mut child = module.to_vec();
        child.push(name.to_owned());
        if self.files.contains_key(&child) {
            return true;
        }
        let Some(file) = self.files.get(module) else { return false };
        let text = &self.text[file];
        let kinds = ["fn", "struct", "enum", "trait", "type", "const", "static", "mod", "union"];
        text.lines().any(|l| {
            let words: Vec<&str> =
                l.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).collect();
            words.windows(2).any(|w| kinds.contains(&w[0]) && w[1] == name) && !l.trim_start().starts_with("let ")
        })
    }

    /// The target path of a name a module re-exports (`pub use x::y::Name;`, `pub(crate) use …`).
    fn reexport(&self, module: &[String], name: &str) -> Option<Vec<String>> {
        let file = self.files.get(module)?;
        for (path, _) in use_paths(&self.text[file]).into_iter().filter(|(_, public)| *public) {
            if path.last().is_some_and(|n| n == name) {
                return self.absolute(module, &path);
            }
        }
        None
    }

    /// `path` as seen from `module`, from the crate root (`["crate", …]`): `crate::`, `self::`,
    /// `super::` and a child module's name (`use child::Item;`); `None` for another crate's.
    fn absolute(&self, module: &[String], path: &[String]) -> Option<Vec<String>> {
        let first = path.first()?;
        if !matches!(first.as_str(), "crate" | "self" | "super") {
            let mut child = module.to_vec();
            child.push(first.clone());
            if !self.files.contains_key(&child) {
                return None;
            }
            let mut out = vec!["self".to_owned()];
            out.extend(path.iter().cloned());
            return absolute(module, &out);
        }
        absolute(module, path)
    }

    /// The file that defines what `path` (absolute, from the crate root) names.
    fn resolve(&self, path: &[String], depth: usize) -> Option<&PathBuf> {
        // The longest prefix that is a module of this crate.
        let mut m = path.len();
        while m > 0 && !self.files.contains_key(&path[..m]) {
            m -= 1;
        }
        let module = &path[..m];
        let Some(name) = path.get(m) else { return self.files.get(module) };
        if depth < 8
            && !self.defines(module, name)
            && let Some(target) = self.reexport(module, name)
        {
            if target.first().is_some_and(|s| s == "crate") {
                return self.resolve(&target[1..], depth + 1);
            }
            return None; // another crate's item
        }
        self.files.get(module)
    }
}

/// Every path a file names with `use` (expanded, with whether the `use` is public) or as a
/// `crate::`/`super::`/`self::` path in its code.
fn use_paths(code: &str) -> Vec<(Vec<String>, bool)> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("use ") {
        let before = &rest[..i];
        let line_start = before.rfind('\n').map_or(0, |n| n + 1);
        let head = before[line_start..].trim();
        let at_start = head.is_empty() || head == "pub" || head.starts_with("pub(");
        let Some(end) = rest[i..].find(';') else { break };
        let stmt = &rest[i + 4..i + end];
        if at_start {
            for p in expand("", stmt) {
                out.push((p.split("::").map(str::to_owned).collect(), head.starts_with("pub")));
            }
        }
        rest = &rest[i + end..];
    }
    for (n, _) in code.match_indices("crate::").chain(code.match_indices("super::")).chain(code.match_indices("self::"))
    {
        if n > 0 && code[..n].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let path: String = code[n..].chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
        out.push((path.trim_end_matches(':').split("::").map(str::to_owned).collect(), false));
    }
    out
}

/// `a::{b, c::{d}}` → `a::b`, `a::c::d` (an `as` rename keeps the original name).
fn expand(prefix: &str, stmt: &str) -> Vec<String> {
    let stmt: String = stmt.split_whitespace().collect::<Vec<_>>().join(" ");
    let stmt = stmt.trim();
    if let Some(open) = stmt.find('{') {
        let head = format!("{prefix}{}", &stmt[..open]);
        let inner = &stmt[open + 1..stmt.rfind('}').unwrap_or(stmt.len())];
        let mut parts = Vec::new();
        let (mut depth, mut cur) = (0, String::new());
        for c in inner.chars() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(std::mem::take(&mut cur));
                    continue;
                }
                _ => {}
            }
            cur.push(c);
        }
        parts.push(cur);
        parts.iter().filter(|p| !p.trim().is_empty()).flat_map(|p| expand(&head, p.trim())).collect()
    } else {
        let name = stmt.split(" as ").next().unwrap_or(stmt).trim();
        let full = format!("{prefix}{name}");
        vec![full.trim_end_matches("::self").to_owned()]
    }
}

/// `path` as seen from `module`, from the crate root (`["crate", …]`); `None` for another crate's.
fn absolute(module: &[String], path: &[String]) -> Option<Vec<String>> {
    let first = path.first()?;
    let mut base: Vec<String> = match first.as_str() {
        "crate" => Vec::new(),
        "self" => module.to_vec(),
        "super" => module[..module.len().saturating_sub(1)].to_vec(),
        _ => return None,
    };
    let mut rest = &path[1..];
    while rest.first().is_some_and(|s| s == "super") {
        base.pop();
        rest = &rest[1..];
    }
    let mut out = vec!["crate".to_owned()];
    out.extend(base);
    out.extend(rest.iter().filter(|s| *s != "*").cloned());
    Some(out)
}

/// The strongly connected groups of more than one file (Tarjan).
fn circles(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct State<'a> {
        edges: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on: BTreeSet<&'a PathBuf>,
        out: Vec<Vec<PathBuf>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a PathBuf) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.edges.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut group = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                group.push(w.clone());
                if w == v {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                s.out.push(group);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// The file graph of one crate: an edge from each file to each other file of the crate it uses.
fn file_graph(src: &Path) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let krate = Crate::read(src);
    let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for (module, file) in &krate.files {
        let targets = edges.entry(file.clone()).or_default();
        for (path, public) in use_paths(&krate.text[file]) {
            let Some(abs) = krate.absolute(module, &path) else { continue };
            // A module's face (`pub use child::Item;`) hands its children's names on; that is not
            // an import of the child (whose own imports are resolved to the defining file).
            if public && abs[1..].starts_with(module) && abs.len() > module.len() + 2 {
                continue;
            }
            if let Some(target) = krate.resolve(&abs[1..], 0)
                && target != file
            {
                targets.insert(target.clone());
            }
        }
    }
    edges
}

const CRATE_SOURCES: [&str; 8] = [
    "probes/model/src",
    "probes/kb/src",
    "probes/src",
    "probes/judge/src",
    "kernels/src",
    "installers/src",
    "app/src",
    "tests/src",
];

#[test]
fn no_two_files_import_each_other_directly_or_around_a_circle() {
    let mut found = Vec::new();
    for src in CRATE_SOURCES {
        for group in circles(&file_graph(&root().join(src))) {
            let names: Vec<String> =
                group.iter().map(|p| p.strip_prefix(root()).unwrap_or(p).display().to_string()).collect();
            found.push(names.join(" ↔ "));
        }
    }
    assert!(found.is_empty(), "files that import each other:\n{}", found.join("\n"));
}

/// The check finds a circle where there is one, and follows re-exports to the defining file.
#[test]
fn the_circle_check_sees_a_circle_and_follows_reexports() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\nmod c;\n").unwrap();
    std::fs::write(src.join("a.rs"), "use crate::b::B;\npub struct A;\n").unwrap();
    // b takes A through c's re-export: the edge goes to a, where A is defined.
    std::fs::write(src.join("b.rs"), "use crate::c::A;\npub struct B;\n").unwrap();
    std::fs::write(src.join("c.rs"), "pub use crate::a::A;\n").unwrap();
    let groups = circles(&file_graph(src));
    assert_eq!(groups, vec![vec![src.join("a.rs"), src.join("b.rs")]]);
    // Without the edge back, no circle; test modules do not count.
    std::fs::write(src.join("a.rs"), "pub struct A;\n#[cfg(test)]\nmod tests {\n    use crate::b::B;\n}\n").unwrap();
    assert!(circles(&file_graph(src)).is_empty());
}
