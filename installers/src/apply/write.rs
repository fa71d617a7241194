//! A plan's `Write` step: a file written only inside the plan's environment or the data folder.

use std::path::{Component, Path};

/// Writes `text` to `path` when it lies inside one of `roots` (each an existing folder): an
/// absolute path without `.` or `..`, whose nearest existing folder, links resolved, is inside
/// that root, links resolved, and which is not itself a link. Anything else is refused.
pub(crate) fn write_inside(path: &Path, text: &str, roots: &[&Path]) -> Result<(), String> {
    let shown = path.display();
    if !path.is_absolute() || path.components().any(|c| matches!(c, Component::ParentDir | Component::CurDir)) {
        return Err(format!("refused to write {shown}: not a plain absolute path"));
    }
    let mut existing = path.parent();
    while let Some(dir) = existing.filter(|d| !d.exists()) {
        existing = dir.parent();
    }
    let inside = existing
        .and_then(|dir| dir.canonicalize().ok())
        .is_some_and(|dir| roots.iter().filter_map(|root| root.canonicalize().ok()).any(|root| dir.starts_with(root)));
    if !inside {
        let roots: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
        return Err(format!("refused to write {shown}: outside {}", roots.join(" and ")));
    }
    if path.symlink_metadata().is_ok_and(|m| !m.is_file()) {
        return Err(format!("refused to write {shown}: it is a link or not a regular file"));
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("could not create {}: {e}", parent.display()))?;
    }
    gpu_doctor_probes::write::write_own_file(path, text, true).map_err(|e| e.chain())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_inside_a_root_are_written_with_their_folders() {
        let dir = tempfile::tempdir().unwrap();
        let env = dir.path().join("env");
        std::fs::create_dir(&env).unwrap();
        let hook = env.join("etc/conda/activate.d/gpu-doctor.sh");
        write_inside(&hook, "export X=1\n", &[&env]).unwrap();
        assert_eq!(std::fs::read_to_string(&hook).unwrap(), "export X=1\n");
    }

    #[test]
    fn anything_outside_the_roots_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let env = dir.path().join("env");
        let data = dir.path().join("data");
        let other = dir.path().join("other");
        for d in [&env, &data, &other] {
            std::fs::create_dir(d).unwrap();
        }
        std::os::unix::fs::symlink(&other, env.join("escape")).unwrap();
        std::os::unix::fs::symlink(other.join("target"), env.join("link")).unwrap();
        for path in [
            other.join("x"),
            env.join("../other/x"),
            env.join("escape/x"),
            env.join("link"),
            Path::new("relative/x").to_path_buf(),
            dir.path().join("envx/x"),
        ] {
            let err = write_inside(&path, "x", &[&env, &data]).unwrap_err();
            assert!(err.starts_with("refused to write"), "{err}");
        }
        assert_eq!(std::fs::read_dir(&other).unwrap().count(), 0);
        assert!(!dir.path().join("envx").exists());
        write_inside(&data.join("notes.txt"), "x", &[&env, &data]).unwrap();
    }
}
