//! README's Install section (issue 29 item 9): its first command works today. Nothing is published
//! on PyPI yet, so the section starts with what works from a checkout, each command naming what is
//! in this repository, and every PyPI command comes after the sentence that says it needs a release.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn install_section() -> String {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let start = readme.find("## Install\n").expect("README has an Install section");
    let rest = &readme[start + 2..];
    rest[..rest.find("\n## ").unwrap_or(rest.len())].to_owned()
}

/// The commands of the section (`…` in the table's second column, or after "then"), in order.
fn table_commands(section: &str) -> Vec<String> {
    section
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| step") && !l.starts_with("|---"))
        .filter_map(|l| l.split(" | ").nth(1))
        .filter_map(|cell| cell.split('`').nth(1).map(str::to_owned))
        .collect()
}

#[test]
fn the_first_install_command_works_from_this_repository_and_pypi_waits_for_a_release() {
    let section = install_section();
    let commands = table_commands(&section);
    assert!(!commands.is_empty(), "{section}");
    // The first: cargo install of a path that is this workspace's binary crate.
    assert_eq!(commands[0], "cargo install --locked --path app");
    let manifest = std::fs::read_to_string(root().join("app/Cargo.toml")).unwrap();
    assert!(manifest.contains("name = \"gpu-doctor\""), "app/ is the gpu-doctor crate");
    // Every script or built file a table command names is made by this repository.
    assert!(commands.iter().any(|c| c == "scripts/package") && root().join("scripts/package").is_file());
    let workspace = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let version = workspace.lines().find_map(|l| l.strip_prefix("version = \"")).unwrap().trim_end_matches('"');
    assert!(commands.iter().any(|c| c.contains(&format!("gpu-doctor_{version}-1_amd64.deb"))), "{commands:?}");
    // No table command installs from PyPI; the PyPI ones come after "Once a release is on PyPI".
    assert!(commands.iter().all(|c| !c.contains("gpu-doctor-rs")), "{commands:?}");
    let release = section.find("Once a release is on PyPI").expect("the section says PyPI waits for a release");
    for pypi in ["uvx --from gpu-doctor-rs", "pipx install gpu-doctor-rs", "pip install gpu-doctor-rs"] {
        let at = section.rfind(pypi).unwrap_or(usize::MAX);
        assert!(at > release && at != usize::MAX, "{pypi} comes only after the release sentence");
    }
}
