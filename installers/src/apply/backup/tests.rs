use std::time::{Duration, Instant};

use super::*;

fn saved_text(backup: &Backup, python: &str) -> String {
    backup.to_text(Path::new(python)).unwrap()
}

#[test]
fn the_file_reads_back_as_written() {
    let backup = Backup {
        origins: Vec::new(),
        tool: Tool::Uv { uv: "/usr/bin/uv".into() },
        source: Source { index_url: None, find_links: Some("/w h".into()) },
        pins: vec!["pip==23.2.1".into(), "torch==2.5.1+cu121".into(), "x @ file:///tmp/x.whl".into()],
    };
    let text = saved_text(&backup, "/e/bin/python");
    assert!(text.contains("\n--no-index\n--find-links /w h\n"), "{text}");
    assert!(text.ends_with("x @ file:///tmp/x.whl\n# gpu-doctor-end: 3 packages\n"), "{text}");
    let saved = Saved::parse(&text).unwrap();
    assert_eq!((saved.python.as_path(), saved.uv), (Path::new("/e/bin/python"), true));
    assert_eq!((&saved.source, &saved.pins), (&backup.source, &backup.pins));
    assert_eq!(python_of(&text), Some(PathBuf::from("/e/bin/python")));
    assert_eq!(python_of("torch==2.5.1\n"), None);
    let pip = Backup {
        origins: Vec::new(),
        tool: Tool::Pip,
        source: Source { index_url: Some("https://download.pytorch.org/whl/cu124".into()), find_links: None },
        pins: vec!["torch==2.5.1".into(), "-e /src/pkg".into()],
    };
    let saved = Saved::parse(&saved_text(&pip, "/e/bin/python")).unwrap();
    assert_eq!((saved.uv, saved.source, saved.pins), (false, pip.source, pip.pins));
    // A package saved as coming from another index reads back with it.
    let cpu = Backup {
        origins: vec![("torch".into(), "https://download.pytorch.org/whl/cpu".into())],
        tool: Tool::Pip,
        source: Source { index_url: Some("https://download.pytorch.org/whl/cu124".into()), find_links: None },
        pins: vec!["torch==2.5.1+cpu".into()],
    };
    let saved = Saved::parse(&saved_text(&cpu, "/e/bin/python")).unwrap();
    assert_eq!(saved.origins.get("torch").map(String::as_str), Some("https://download.pytorch.org/whl/cpu"));
}

/// A relative wheel folder is saved absolute: undo may run from any folder.
#[test]
fn a_relative_wheel_folder_is_saved_absolute() {
    let backup = Backup {
        origins: Vec::new(),
        tool: Tool::Pip,
        source: Source { index_url: None, find_links: Some("wheels".into()) },
        pins: vec!["torch==2.5.1+cpu".into()],
    };
    let saved = Saved::parse(&saved_text(&backup, "/e/bin/python")).unwrap();
    let dir = saved.source.find_links.unwrap();
    assert!(dir.is_absolute() && dir.ends_with("wheels"), "{}", dir.display());
}

/// A line break in the environment's path stays in the one header line, and reads back whole.
#[test]
fn a_line_break_in_the_interpreter_path_cannot_split_the_header() {
    let python = "/tmp/a\n# gpu-doctor-python: /tmp/evil.sh\n%0A/bin/python";
    let backup =
        Backup { origins: Vec::new(), tool: Tool::Pip, source: Source::default(), pins: vec!["torch==2.5.1".into()] };
    let text = saved_text(&backup, python);
    assert_eq!(text.lines().filter(|l| l.starts_with(PYTHON_LINE)).count(), 1, "{text}");
    assert_eq!(Saved::parse(&text).unwrap().python, PathBuf::from(python));
    assert_eq!(python_of(&text), Some(PathBuf::from(python)));
}

#[test]
fn hostile_lists_are_refused_with_the_line_that_is_wrong() {
    let head = "# gpu-doctor-python: /e/bin/python\n# gpu-doctor-tool: pip\n";
    let cases = [
        // Options pip would take from a requirements file: never passed on.
        ("--target=/home/u/.ssh\ntorch==2.5.1\n# gpu-doctor-end: 1 packages\n", "not an option gpu-doctor saves"),
        ("--index-url=https://evil/simple\ntorch==2.5.1\n# gpu-doctor-end: 1 packages\n", "not an option"),
        ("-r /etc/other.txt\n# gpu-doctor-end: 0 packages\n", "not a package pin"),
        ("--index-url file:///tmp/x\n# gpu-doctor-end: 0 packages\n", "not an option"),
        ("--find-links rel/dir\n--no-index\n# gpu-doctor-end: 0 packages\n", "not an option"),
        ("torch==2.5.1\n--index-url https://x/simple\n# gpu-doctor-end: 1 packages\n", "among the packages"),
        ("torch==2.5.1 --hash=sha256:00\n# gpu-doctor-end: 1 packages\n", "not a name==version pin"),
        ("-e --src=/x\n# gpu-doctor-end: 1 packages\n", "editable"),
        ("x @ file:///a b.whl\n# gpu-doctor-end: 1 packages\n", "not a name @ URL"),
        ("torch==2.5.1\ntorch==2.4.0\n# gpu-doctor-end: 2 packages\n", "twice"),
        // Cut short: no end line, or a count that is not the list's.
        ("torch==2.5.1\nnumpy==2.1.0\n", "no end line"),
        ("torch==2.5.1\n# gpu-doctor-end: 2 packages\n", "counts 2 packages"),
        ("torch==2.5.1\n# gpu-doctor-end: 1 packages\nnumpy==1.0\n", "after the end line"),
        // An origin that is no https index, or for a package the list does not have.
        ("# gpu-doctor-origin: torch http://evil/simple\ntorch==2.5.1\n# gpu-doctor-end: 1 packages\n", "https index"),
        ("# gpu-doctor-origin: torch --index-url=x\ntorch==2.5.1\n# gpu-doctor-end: 1 packages\n", "https index"),
        ("# gpu-doctor-origin: jax https://x/simple\ntorch==2.5.1\n# gpu-doctor-end: 1 packages\n", "does not have"),
        // A second interpreter, or one that is no absolute path.
        ("# gpu-doctor-python: /tmp/evil.sh\n# gpu-doctor-end: 0 packages\n", "second interpreter"),
    ];
    for (body, why) in cases {
        let err = Saved::parse(&format!("{head}{body}")).unwrap_err();
        assert!(err.contains(why), "{body:?}: {err}");
    }
    let relative = "# gpu-doctor-python: bin/python\n# gpu-doctor-end: 0 packages\n";
    assert!(Saved::parse(relative).unwrap_err().contains("no absolute path"));
    assert!(Saved::parse("torch==2.5.1\n# gpu-doctor-end: 1 packages\n").unwrap_err().contains("no interpreter"));
    let uv_path = "# gpu-doctor-python: /e/bin/python\n# gpu-doctor-tool: /tmp/evil.sh\n# gpu-doctor-end: 0 packages\n";
    assert!(Saved::parse(uv_path).unwrap_err().contains("unknown tool"));
}

#[cfg(unix)]
#[test]
fn only_a_regular_file_of_at_most_the_cap_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let started = Instant::now();
    for path in [fifo.as_path(), Path::new("/dev/zero"), dir.path()] {
        let err = read(path).unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
    }
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    let big = dir.path().join("big.txt");
    std::fs::write(&big, vec![b'#'; MAX_FILE_BYTES + 1]).unwrap();
    assert!(read(&big).unwrap_err().contains("larger than"));
    let ok = dir.path().join("ok.txt");
    std::fs::write(&ok, "torch==2.5.1\n").unwrap();
    assert_eq!(read(&ok).unwrap(), "torch==2.5.1\n");
}

/// What a full disk does: part of the bytes go in, then ENOSPC.
fn full_disk(file: &mut std::fs::File, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    file.write_all(&bytes[..bytes.len() / 2])?;
    Err(std::io::Error::from(std::io::ErrorKind::StorageFull))
}

#[test]
fn a_full_disk_leaves_no_backup_that_looks_valid() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("apply.backup.txt");
    let backup = Backup {
        origins: Vec::new(),
        tool: Tool::Pip,
        source: Source::default(),
        pins: (0..500).map(|i| format!("package-{i}==1.0")).collect(),
    };
    let text = saved_text(&backup, "/e/bin/python");
    let err = save_with(&path, &text, &mut full_disk).unwrap_err();
    assert!(err.to_string().contains("could not write"), "{err}");
    // No file under the backup's name (a truncated one would parse as a shorter, valid list),
    // and no temporary left beside it.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // And a list cut anywhere (a copy, an older writer) is refused: it has no end line.
    for cut in (1..text.len()).step_by(97) {
        assert!(Saved::parse(&text[..cut]).is_err(), "{cut}");
    }
    let before_the_end = text.trim_end().rfind('\n').unwrap() + 1;
    assert!(Saved::parse(&text[..before_the_end]).unwrap_err().contains("no end line"));
    // A backup already there is never replaced, whole or in part.
    std::fs::write(&path, "# gpu-doctor-python: /e/bin/python\ntorch==2.5.1\n").unwrap();
    assert!(save_with(&path, &text, &mut full_disk).is_err());
    assert!(save(&path, &text).is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "# gpu-doctor-python: /e/bin/python\ntorch==2.5.1\n");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    // With room, the whole list is there.
    let fresh = dir.path().join("other.backup.txt");
    save(&fresh, &text).unwrap();
    assert_eq!(Saved::parse(&read(&fresh).unwrap()).unwrap().pins, backup.pins);
}

#[cfg(unix)]
#[test]
fn a_backup_is_never_written_through_a_planted_link() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let path = dir.path().join("apply.backup.txt");
    std::os::unix::fs::symlink(&victim, &path).unwrap();
    assert!(save(&path, "torch==2.5.1\n").is_err());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}

#[test]
fn undoing_removes_what_is_new_and_reinstalls_what_changed() {
    let backup: Vec<String> =
        ["pip==23.2.1", "torch==2.5.1+cu121", "Torch_Vision==0.20.1+cu121", "numpy==2.1.0"].map(str::to_owned).into();
    let now: Vec<String> =
        ["pip==23.2.1", "torch==2.5.1+cpu", "torch-vision==0.20.1+cu121", "jax==0.4.35"].map(str::to_owned).into();
    let (remove, reinstall) = differences(&backup, &now);
    assert_eq!(remove, ["jax"]);
    assert_eq!(reinstall, ["torch==2.5.1+cu121", "numpy==2.1.0"]);
    assert_eq!(differences(&backup, &backup), (vec![], vec![]));
    assert_eq!(
        changes(&backup, &now),
        [
            "torch: ==2.5.1+cu121 before, ==2.5.1+cpu now",
            "numpy: ==2.1.0 before, not installed now",
            "jax: not installed before, ==0.4.35 now"
        ]
    );
    assert!(changes(&backup, &backup).is_empty());
    // A plan's requirement with extras is there when its distribution is, at its version.
    let now: Vec<String> = ["jax==0.4.35", "jaxlib==0.4.35"].map(str::to_owned).into();
    assert!(has_all(&now, &["jax[cuda12]==0.4.35".to_owned()]));
    assert!(!has_all(&now, &["jax[cuda12]==0.4.36".to_owned(), "jaxlib==0.4.35".to_owned()]));
}

/// 8,000 pins took 29.6 s when each line was looked for in the whole other list.
#[test]
fn comparing_long_lists_is_linear() {
    let backup: Vec<String> = (0..40_000).map(|i| format!("package-{i}==1.0")).collect();
    let now: Vec<String> = (0..40_000).map(|i| format!("package-{}==2.0", i + 20_000)).collect();
    let started = Instant::now();
    let (remove, reinstall) = differences(&backup, &now);
    assert_eq!((remove.len(), reinstall.len()), (20_000, 40_000));
    assert_eq!(changes(&backup, &now).len(), 60_000);
    let text = saved_text(
        &Backup { origins: Vec::new(), tool: Tool::Pip, source: Source::default(), pins: backup },
        "/e/bin/python",
    );
    assert_eq!(Saved::parse(&text).unwrap().pins.len(), 40_000);
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
}

#[test]
fn names_are_compared_as_pip_does() {
    assert_eq!(name_of("Jax_CUDA12.plugin==0.4.35"), "jax-cuda12-plugin");
    assert_eq!(name_of("mypkg @ file:///tmp/mypkg-1.0-py3-none-any.whl"), "mypkg");
    assert_eq!(name_of("-e git+https://x/y.git@abc#egg=My_Pkg"), "my-pkg");
    assert_eq!(pin_args("-e /src/pkg"), ["-e", "/src/pkg"]);
    assert_eq!(pin_args("torch==2.5.1"), ["torch==2.5.1"]);
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    /// Lines a hostile or damaged list may hold.
    fn line() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("torch==2.5.1+cpu".to_owned()),
            Just("x @ file:///tmp/x.whl".to_owned()),
            Just("-e /src/pkg".to_owned()),
            Just("--no-index".to_owned()),
            Just("--find-links /w".to_owned()),
            Just("--index-url https://x/simple".to_owned()),
            Just("--index-url=https://evil/simple".to_owned()),
            Just("--target=/home/u".to_owned()),
            Just("-r other.txt".to_owned()),
            Just("# gpu-doctor-python: /tmp/evil.sh".to_owned()),
            Just("# gpu-doctor-tool: uv /tmp/evil".to_owned()),
            Just("# gpu-doctor-end: 1 packages".to_owned()),
            Just("# a comment".to_owned()),
            "[ -~]{0,40}",
            ".{0,20}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Whatever the file holds, reading it never panics, and a list it accepts holds only
        /// pins, the options gpu-doctor writes, one absolute interpreter and a matching count.
        #[test]
        fn a_list_read_back_holds_only_pins_and_known_options(lines in prop::collection::vec(line(), 0..24)) {
            let text = lines.join("\n");
            if let Ok(saved) = Saved::parse(&text) {
                prop_assert!(saved.python.is_absolute());
                for pin in &saved.pins {
                    prop_assert!(check_pin(pin).is_ok(), "{pin:?}");
                    prop_assert!(!pin.starts_with("--") || pin.starts_with("--editable "), "{pin:?}");
                }
                prop_assert!(saved.source.find_links.as_deref().is_none_or(Path::is_absolute));
                let count = text.lines().filter(|l| check_pin(l.trim_end_matches('\r')).is_ok()).count();
                prop_assert_eq!(count, saved.pins.len());
            }
        }

        /// A list gpu-doctor wrote reads back whole, and every cut of it is refused.
        #[test]
        fn a_saved_list_reads_back_and_no_cut_of_it_does(
            pins in prop::collection::btree_set("[a-z][a-z0-9]{0,6}==[0-9]{1,3}(\\.[0-9]{1,2})?", 0..12),
            python in "/[ -~\n]{1,30}",
            cut in any::<prop::sample::Index>(),
        ) {
            let pins: Vec<String> = pins.into_iter().collect();
            // Distinct lines may still name one distribution twice: keep the first of each.
            let mut seen = HashSet::new();
            let pins: Vec<String> = pins.into_iter().filter(|p| seen.insert(name_of(p))).collect();
            let backup = Backup { origins: Vec::new(), tool: Tool::Pip, source: Source::default(), pins: pins.clone() };
            let text = backup.to_text(Path::new(&python)).unwrap();
            let saved = Saved::parse(&text).unwrap();
            prop_assert_eq!(saved.python, PathBuf::from(&python));
            prop_assert_eq!(saved.pins, pins);
            let at = cut.index(text.len());
            if text[..at].trim_end() != text.trim_end() {
                prop_assert!(Saved::parse(&text[..at]).is_err());
            }
        }
    }
}

/// The distributions whose files were not whole when the list was saved are named in it and read
/// back (names normalized); a list without such lines (saved before them) names none, and a line
/// that is no `name==version` pin is refused.
#[test]
fn distributions_not_whole_are_saved_and_read_back() {
    let backup = Backup {
        origins: Vec::new(),
        tool: Tool::Pip,
        source: Source::default(),
        pins: vec!["Nvidia_CuDNN_cu12==9.1.0.70".into(), "torch==2.5.1".into()],
    };
    let text = backup.to_text_with(Path::new("/e/bin/python"), &["Nvidia_CuDNN_cu12==9.1.0.70".into()]).unwrap();
    assert!(text.contains("\n# gpu-doctor-not-whole: Nvidia_CuDNN_cu12==9.1.0.70\n"), "{text}");
    let saved = Saved::parse(&text).unwrap();
    assert_eq!(saved.not_whole, HashSet::from(["nvidia-cudnn-cu12==9.1.0.70".to_owned()]));
    assert_eq!(saved.pins, backup.pins);
    assert!(Saved::parse(&saved_text(&backup, "/e/bin/python")).unwrap().not_whole.is_empty());
    let odd = backup.to_text_with(Path::new("/e/bin/python"), &["x @ file:///x.whl".into()]).unwrap();
    assert!(!odd.contains("not-whole"), "a line that is no pin is left out, the list still saved: {odd}");
    let hostile =
        text.replace("# gpu-doctor-not-whole: Nvidia_CuDNN_cu12==9.1.0.70", "# gpu-doctor-not-whole: --target=/x");
    assert!(Saved::parse(&hostile).unwrap_err().contains("no name==version pin"), "{hostile}");
}
