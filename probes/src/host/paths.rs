//! Lexical path helpers shared by the hosts and the probes, so links resolve the same way on a
//! live machine and on a replayed fixture.

use std::path::{Component, Path, PathBuf};

use super::Host;

/// Folds `.` and `..` out of a path without touching any file system.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `C:/…` or `C:\…`: absolute on Windows, though not to a Linux `Path` replaying it. Linux link
/// targets with colons (`../../devices/pci0000:00/…`) are not.
pub fn is_windows_absolute(path: &Path) -> bool {
    let text = path.to_string_lossy();
    let b = text.as_bytes();
    b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && (b[2] == b'/' || b[2] == b'\\')
}

/// Follows symlinks in every component of `path`, asking `read_link` for each prefix (at most 40
/// hops, so a link loop ends), like `realpath` without requiring the path to exist.
pub fn resolve_with(path: &Path, read_link: impl Fn(&Path) -> Option<PathBuf>) -> PathBuf {
    let mut queue: Vec<PathBuf> = path.components().rev().map(|c| PathBuf::from(c.as_os_str())).collect();
    let mut out = PathBuf::new();
    let mut hops = 0;
    while let Some(c) = queue.pop() {
        match c.components().next() {
            Some(Component::ParentDir) => {
                out.pop();
                continue;
            }
            Some(Component::CurDir) => continue,
            _ => out.push(&c),
        }
        if hops >= 40 {
            continue;
        }
        let Some(target) = read_link(&out) else { continue };
        hops += 1;
        out.pop();
        if target.is_absolute() || is_windows_absolute(&target) {
            out = PathBuf::new();
        }
        queue.extend(target.components().rev().map(|c| PathBuf::from(c.as_os_str())));
    }
    out
}

/// Where `path` really is on `host`, following every symlink through `Host::read_link`.
pub fn real_path(host: &dyn Host, path: &Path) -> PathBuf {
    resolve_with(path, |p| host.read_link(p).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_resolve_at_every_component_and_loops_end() {
        let links = |p: &Path| match p.to_str()? {
            "/usr/local/cuda" => Some(PathBuf::from("cuda-12.4")),
            "/sys/bus/pci/devices/0000:01:00.0" => Some(PathBuf::from("../../../devices/pci0000:00/0000:01:00.0")),
            "/loop" => Some(PathBuf::from("/loop")),
            "/c" => Some(PathBuf::from("C:/Program Files")),
            _ => None,
        };
        assert_eq!(
            resolve_with(Path::new("/usr/local/cuda/bin/nvcc"), links),
            PathBuf::from("/usr/local/cuda-12.4/bin/nvcc")
        );
        assert_eq!(
            resolve_with(Path::new("/sys/bus/pci/devices/0000:01:00.0/vendor"), links),
            PathBuf::from("/sys/devices/pci0000:00/0000:01:00.0/vendor")
        );
        assert_eq!(resolve_with(Path::new("/loop/x"), links), PathBuf::from("/loop/x"));
        assert_eq!(resolve_with(Path::new("/c/x"), links), PathBuf::from("C:/Program Files/x"));
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert!(!is_windows_absolute(Path::new("pci0000:00/x")));
    }
}
