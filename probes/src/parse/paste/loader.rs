//! The dynamic loader's view: `ldconfig -p | grep cuda` lines (→ the loader cache's CUDA entries),
//! and paths under `/usr/lib/wsl/lib`, where WSL2 maps the Windows driver's libraries (→ this is
//! WSL2, and which libcuda files are there). `ldd`'s `libcudart.so.11.0 => not found` is a row of
//! `assets/compat/errors.toml`.
//!
//! ```text
//! $ ldconfig -p | grep libcuda
//!         libcuda.so.1 (libc6,x86-64) => /usr/lib/wsl/lib/libcuda.so.1
//! ```

use super::facts::{Facts, MAX_LIST};
use gpu_doctor_model::{LddResolution, LoaderEntry};
use gpu_doctor_model::{OsFamily, WslFacts};

const FORMAT: &str = "ldconfig -p";

/// Where WSL2 maps the Windows driver's user-space libraries.
const WSL_LIB: &str = "/usr/lib/wsl/lib/";

const LDD: &str = "ldd";

/// `ldd FILE` (after a prompt or not) → FILE.
fn ldd_command(line: &str) -> Option<&str> {
    let file = line.strip_prefix("ldd ")?.trim();
    (!file.is_empty() && !file.contains(' ') && file.contains(".so")).then_some(file)
}

/// ldd's `libX.so.N => /path/libX.so.N (0x…)` (ldd(1); glibc's `ldd --list` format): the library and the
/// file the loader resolved it to; `None` for `not found`, the vdso and the loader itself.
fn ldd_line(line: &str) -> Option<(&str, &str)> {
    let (library, rest) = line.split_once(" => ")?;
    let library = library.trim();
    let path = rest.split_whitespace().next()?;
    (library.starts_with("lib") && !library.contains(' ') && path.starts_with('/')).then_some((library, path))
}

/// Reads loader cache lines, `ldd FILE` output and WSL2's driver folder.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    let mut caller: Option<&str> = None;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        if let Some(file) = ldd_command(t) {
            caller = Some(file);
            continue;
        }
        if let Some(file) = caller {
            match ldd_line(t) {
                Some((library, path)) => {
                    facts.saw(i, LDD);
                    let r =
                        LddResolution { caller: file.to_owned(), library: library.to_owned(), path: path.to_owned() };
                    if facts.ldd_resolved.len() < MAX_LIST && !facts.ldd_resolved.contains(&r) {
                        facts.ldd_resolved.push(r);
                    }
                    continue;
                }
                // ldd's other lines (the vdso, the loader, `not found`) keep the block open; anything else ends it.
                None if t.contains(" (0x") || t.contains(" => ") => {}
                None => caller = None,
            }
        }
        if t.contains("libs found in cache") {
            facts.saw(i, FORMAT);
            facts.loader_cache_read = true;
        } else if let Some(entry) = cache_entry(t) {
            facts.saw(i, FORMAT);
            if facts.loader.len() < MAX_LIST && !facts.loader.contains(&entry) {
                facts.loader.push(entry);
            }
        }
        if let Some(at) = t.find(WSL_LIB) {
            wsl_file(facts, t.get(at + WSL_LIB.len()..).unwrap_or(""));
        }
    }
}

/// `libcuda.so.1 (libc6,x86-64) => /usr/lib/wsl/lib/libcuda.so.1`.
fn cache_entry(line: &str) -> Option<LoaderEntry> {
    // Quoted as inline code in a markdown comment: `` `libnvcuvid.so.1 (libc6,x86-64) => /usr/lib/…` ``.
    let line = line.trim_matches('`').trim();
    let (left, path) = line.split_once(" => ")?;
    let (name, flags) = left.split_once(" (")?;
    let flags = flags.strip_suffix(')')?;
    let path = path.trim();
    let ok = name.starts_with("lib") && !name.contains(' ') && flags.starts_with("libc") && path.starts_with('/');
    ok.then(|| LoaderEntry { name: name.to_owned(), arch: flags.to_owned(), path: path.to_owned() })
}

/// Notes a file named under WSL2's driver folder: the machine is WSL2, and a `libcuda.so*` there is
/// the Windows driver's.
fn wsl_file(facts: &mut Facts, rest: &str) {
    facts.os.get_or_insert(OsFamily::Linux);
    let wsl = facts.wsl.get_or_insert_with(|| WslFacts {
        version: 2,
        distro: None,
        driver_lib_dir_present: true,
        ..WslFacts::default()
    });
    let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')).collect();
    if name.starts_with("libcuda.so") && wsl.libcuda_files.len() < MAX_LIST && !wsl.libcuda_files.contains(&name) {
        wsl.libcuda_files.push(name);
    }
}
