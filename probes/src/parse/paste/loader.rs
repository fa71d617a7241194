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
use gpu_doctor_model::{CudnnCopy, CudnnKind, LddResolution, LoaderEntry};
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
    let mut mapped = false;
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
        // glibc's LD_DEBUG=libs: `calling init: PATH` for each library it initialises (elf/dl-init.c), the files a
        // process loaded (pytorch/pytorch#185512: cuDNN's libraries from a wheel and one from the system).
        if let Some(path) = calling_init(t) {
            facts.saw(i, LD_DEBUG);
            let library = path.rsplit('/').next().unwrap_or(path);
            let r = LddResolution { caller: LD_DEBUG.to_owned(), library: library.to_owned(), path: path.to_owned() };
            if facts.ldd_resolved.len() < MAX_LIST && !facts.ldd_resolved.contains(&r) {
                facts.ldd_resolved.push(r);
            }
            continue;
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
        cudnn_files_named(i, t, facts);
        // numba's `cuda.cudadrv.libs.test()`: `Mapped libcuda.so paths:`, then the files the process
        // mapped, one a line (numba/numba#9732).
        if t == "Mapped libcuda.so paths:" {
            mapped = true;
            continue;
        }
        let stub = if mapped && t.starts_with('/') { t.contains(STUB_FILE).then_some(t) } else { None };
        mapped &= t.starts_with('/');
        if let Some(stub) = stub.or_else(|| stub_libcuda(t)) {
            facts.saw(i, STUB);
            if facts.stub_libcuda.len() < MAX_LIST && !facts.stub_libcuda.iter().any(|s| s == stub) {
                facts.stub_libcuda.push(stub.to_owned());
            }
        }
    }
}

/// A copy this reader added: a bare file name, no version read.
fn facts_named(c: &CudnnCopy) -> bool {
    c.version.is_none() && !c.location.contains(['/', '\\']) && matches!(c.kind, CudnnKind::Dll | CudnnKind::Library)
}

/// The caller of what LD_DEBUG showed loaded: the process, not one file.
pub(crate) const LD_DEBUG: &str = "LD_DEBUG=libs";

/// `5580:     calling init: /lib/x86_64-linux-gnu/libcudnn_engines_tensor_ir.so.9` → the path (glibc elf/dl-init.c@glibc-2.42
/// `\ncalling init: %s\n\n`, after LD_DEBUG's `PID:` prefix): an absolute path of a shared library.
fn calling_init(line: &str) -> Option<&str> {
    let (_, path) = line.split_once("calling init: ")?;
    let path = path.trim();
    (path.starts_with('/') && path.contains(".so") && !path.contains(' ')).then_some(path)
}

const CUDNN_FILES: &str = "cuDNN library files named";

/// cuDNN's libraries named with their major in a line that is no loader's or program's error about them ("saw
/// `cudnn_ops_infer64_9.dll` instead of `cudnn_ops_infer64_8.dll`", m-bain/whisperX#899; a `dir`/`ls` line): a copy
/// of that major is there. `cudnn_ops_infer64_9.dll` and `libcudnn_cnn.so.9` name their major; an ldconfig or ldd line
/// is the loader reader's. Lines of at most 1,000 characters.
fn cudnn_files_named(i: usize, line: &str, facts: &mut Facts) {
    // Where a program's own listing gave the copies (collect_env's `cuDNN version:`, a package list), its lines are
    // those copies already.
    let listed = facts.cudnn.iter().any(|c| !facts_named(c));
    if listed || line.len() > 1000 || !line.contains("cudnn") || line.contains("=>") {
        return;
    }
    let lower = line.to_ascii_lowercase();
    let error = ["could not", "cannot", "can't", "not found", "unable", "no such", "failed", "error", "missing"];
    if error.iter().any(|e| lower.contains(e)) {
        return;
    }
    // "… saw X instead of Y": Y is the one not there.
    let line = lower.find("instead of").and_then(|at| line.get(..at)).unwrap_or(line);
    let names = line.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')));
    for name in names.map(|n| n.trim_end_matches('.')) {
        let kind = if name.starts_with("cudnn") && name.ends_with(".dll") {
            CudnnKind::Dll
        } else if name.starts_with("libcudnn") {
            CudnnKind::Library
        } else {
            continue;
        };
        let Some(major) = CudnnCopy::major_in_file_name(name).filter(|m| (5..=20).contains(m)) else { continue };
        let known = |c: &CudnnCopy| {
            c.location == name
                || c.location.ends_with(&format!("/{name}"))
                || c.location.ends_with(&format!("\\{name}"))
        };
        if facts.cudnn.len() < MAX_LIST && !facts.cudnn.iter().any(known) {
            facts.saw(i, CUDNN_FILES);
            facts.cudnn.push(CudnnCopy {
                location: name.to_owned(),
                kind,
                version: None,
                major: Some(major),
                version_source: None,
                env: None,
                cuda_major: None,
            });
        }
    }
}

const STUB: &str = "the toolkit's stub libcuda on the loader's path";

/// The toolkit's stub libcuda, as its path ends.
const STUB_FILE: &str = "/stubs/libcuda.so";

/// The toolkit's link-time stub libcuda on the loader's path, as one line shows it: the file an error
/// of the loader or dlopen names first (glibc's dlerror is `FILE: message`, as in numba/numba#8985's
/// `…/lib64/stubs/libcuda.so: undefined symbol: _undef`), or a `stubs` folder on a line that names
/// LD_LIBRARY_PATH (xmake-io/xmake#4686, in Chinese: "the log shows LD_LIBRARY_PATH refers to
/// /usr/local/cuda/lib64/stubs"), or the stub's path right after words saying a program loaded it
/// ([`said_loaded`]). A build's `-L…/stubs` or CMake's
/// `Found CUDA driver library: …/stubs/libcuda.so` is link time, not the loader's, and is not read.
fn stub_libcuda(line: &str) -> Option<&str> {
    let path_at = |at: usize| {
        line[..at]
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace() || "'\"`(=:".contains(*c))
            .map_or(0, |(b, c)| b + c.len_utf8())
    };
    if let Some(at) = line.find(STUB_FILE) {
        let start = path_at(at);
        let rest = &line[at + STUB_FILE.len()..];
        let end = at + STUB_FILE.len() + rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let file = line[start..end].trim_end_matches('.');
        if file.starts_with('/') && (line[end..].starts_with(": ") || said_loaded(&line[..start])) {
            return Some(file);
        }
    }
    if !line.contains("LD_LIBRARY_PATH") {
        return None;
    }
    line.split(|c: char| c.is_whitespace() || "'\"`:=,;()\u{ff0c}".contains(c))
        .map(|w| w.trim_end_matches('/'))
        .find(|w| w.starts_with('/') && w.ends_with("/stubs"))
}

/// Whether the words right before a path say a program loaded it (`tensorpipe loads `/usr/…/stubs/libcuda.so``,
/// pytorch/tensorpipe#294's reporter; `where it loads`, `is loading`, `opened`, `dlopen`s): a verb of loading in
/// the last 40 bytes, the path its object.
fn said_loaded(before: &str) -> bool {
    let near = before.get(before.floor_char_boundary(before.len().saturating_sub(40))..).unwrap_or("");
    let lower = near.to_ascii_lowercase();
    let last = lower.split(|c: char| !c.is_ascii_alphanumeric()).rfind(|w| !w.is_empty());
    last.is_some_and(|w| ["loads", "loaded", "loading", "load", "opens", "opened", "dlopen", "dlopens"].contains(&w))
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

#[cfg(test)]
mod tests {
    use super::{calling_init, stub_libcuda};

    #[test]
    fn the_stub_libcuda_is_read_where_the_loader_or_a_variable_names_it() {
        // numba/numba#8985 (ctypes' dlerror) and xmake-io/xmake#4686 (a sentence), verbatim.
        assert_eq!(
            stub_libcuda(
                "AttributeError: /scratch/yhao24/opt/cuda-12.1/lib64/stubs/libcuda.so: undefined symbol: _undef"
            ),
            Some("/scratch/yhao24/opt/cuda-12.1/lib64/stubs/libcuda.so")
        );
        assert_eq!(
            stub_libcuda(
                "\u{770b}\u{65e5}\u{5fd7}\u{662f} LD_LIBRARY_PATH \u{5f15}\u{7528}\u{5230}\u{4e86} /usr/local/cuda/lib64/stubs\u{ff0c}"
            ),
            Some("/usr/local/cuda/lib64/stubs")
        );
        // Words saying a program loaded the stub: pytorch/tensorpipe#294's reporter (verbatim).
        assert_eq!(
            stub_libcuda(
                "On my machine, tensorpipe loads `/usr/lib/x86_64-linux-gnu/stubs/libcuda.so` instead of `/usr/lib/x86_64-linux-gnu/libcuda.so`."
            ),
            Some("/usr/lib/x86_64-linux-gnu/stubs/libcuda.so")
        );
        assert_eq!(stub_libcuda("I deleted /usr/local/cuda/lib64/stubs/libcuda.so by hand"), None);
        // Link time, not the loader's: a linker flag, CMake's report, LIBRARY_PATH.
        assert_eq!(stub_libcuda("-- Found CUDA driver library: /usr/local/cuda/lib64/stubs/libcuda.so"), None);
        assert_eq!(stub_libcuda("g++ -o app main.o -L/usr/local/cuda/lib64/stubs -lcuda"), None);
        assert_eq!(stub_libcuda("ENV LIBRARY_PATH=/usr/local/cuda/lib64/stubs"), None);
        // Truncated, wide and odd input does not panic.
        for line in
            ["/stubs/libcuda.so", "\u{3000}/stubs/libcuda.so: x", "LD_LIBRARY_PATH /stubs", "/stubs/libcuda.so.1.: "]
        {
            let _ = stub_libcuda(line);
        }
    }

    #[test]
    fn numbas_mapped_libcuda_paths_name_the_stub_it_loaded() {
        // numba/numba#9732, `python -c "from numba import cuda; cuda.cudadrv.libs.test()"` (first lines).
        let text = "Finding driver from candidates:\n        libcuda.so\n        libcuda.so.1\n\
                    Using loader <class 'ctypes.CDLL'>\n        Trying to load driver...        ok\n\
                    \t\tLoaded from libcuda.so\n        Mapped libcuda.so paths:\n\
                    \t\t/usr/local/cuda-11.8/targets/x86_64-linux/lib/stubs/libcuda.so\n\
                    Finding nvvm from Conda environment\n";
        let kb = gpu_doctor_kb::Kb::get().unwrap();
        let s = crate::parse::paste::read_pasted(text, kb).unwrap();
        let t = s.toolkits.value().unwrap();
        assert_eq!(t.stub_libcuda, ["/usr/local/cuda-11.8/targets/x86_64-linux/lib/stubs/libcuda.so"]);
    }

    /// cuDNN's files named with their major outside an error (m-bain/whisperX#899's line): the one seen is a copy,
    /// the one after "instead of" and those in error lines are not.
    #[test]
    fn cudnn_files_named_outside_errors_are_copies_of_their_major() {
        let kb = gpu_doctor_kb::Kb::get().unwrap();
        let copies = |text: &str| {
            let s = crate::parse::paste::read_pasted(text, kb).unwrap();
            s.cudnn
                .value()
                .map(|c| c.iter().map(|c| (c.location.clone(), c.major)).collect::<Vec<_>>())
                .unwrap_or_default()
        };
        let seen = "Took a look in `.venv\\Lib\\site-packages\\torch\\lib` and saw `cudnn_ops_infer64_9.dll` instead of \
                    `cudnn_ops_infer64_8.dll`\n";
        assert_eq!(copies(seen), [("cudnn_ops_infer64_9.dll".to_owned(), Some(9))]);
        assert_eq!(
            copies("-rwxr-xr-x 1 root root 1 Jan 1 libcudnn_cnn.so.9.1.0\n"),
            [("libcudnn_cnn.so.9.1.0".to_owned(), Some(9))]
        );
        assert!(
            copies("Could not locate cudnn_ops_infer64_8.dll. Please make sure it is in your library path!\n")
                .is_empty()
        );
        // An ldconfig line is the loader cache's entry, not a copy named in prose.
        assert!(copies("libcudnn.so.8 (libc6,x86-64) => /usr/lib/libcudnn.so.8\n").is_empty());
        assert!(copies("cudnn64_999.dll and libcudnn.so.x\n").is_empty());
    }

    /// LD_DEBUG=libs's `calling init:` lines, after its PID, are the files loaded; other text is not.
    #[test]
    fn ld_debugs_calling_init_lines_name_the_files_loaded() {
        assert_eq!(
            calling_init("5580:     calling init: /lib/x86_64-linux-gnu/libcudnn.so.9"),
            Some("/lib/x86_64-linux-gnu/libcudnn.so.9")
        );
        for other in [
            "calling init: libcudnn.so.9",
            "calling init: /lib/a b.so",
            "calling init: /usr/bin/python3",
            "init: /lib/x.so",
        ] {
            assert_eq!(calling_init(other), None, "{other}");
        }
    }
}
