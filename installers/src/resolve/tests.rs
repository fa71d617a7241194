use super::*;

fn pins(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|s| (*s).to_owned()).collect()
}

fn install(name: &str, version: &str, requires: &[&str]) -> Install {
    Install { name: name.into(), version: version.into(), requires: pins(requires) }
}

/// uv 0.13.9's own lines (`uv pip install --dry-run`, run on this machine against a venv with
/// numpy 1.26.4 and oldlib 1.0), read into what it installs and uninstalls.
#[test]
fn uv_dry_run_lines_are_read() {
    let text = "Using Python 3.11.7 environment at: v\nResolved 4 packages in 10ms\nWould download 4 packages\n\
                Would uninstall 2 packages\nWould install 4 packages\n + cupy-cuda13x==13.6.0\n + \
                jax-cuda13-plugin==0.7.2\n - numpy==1.26.4\n + numpy==2.4.0\n - oldlib==1.0\n + oldlib==0.9";
    let dry = parse_uv(&pins(&text.lines().collect::<Vec<_>>()));
    let installed: Vec<(&str, &str)> = dry.install.iter().map(|i| (i.name.as_str(), i.version.as_str())).collect();
    assert_eq!(
        installed,
        [("cupy-cuda13x", "13.6.0"), ("jax-cuda13-plugin", "0.7.2"), ("numpy", "2.4.0"), ("oldlib", "0.9")]
    );
    assert_eq!(dry.uninstall, [("numpy".to_owned(), "1.26.4".to_owned()), ("oldlib".to_owned(), "1.0".to_owned())]);
    assert_eq!(parse_uv(&pins(&["Checked 1 package in 1ms", "Would make no changes"])), DryRun::default());
}

/// pip 23.2.1's report (`--dry-run --report -`), cut to the fields read: an extra-only requirement
/// binds nothing.
#[test]
fn pip_s_report_is_read_with_each_install_s_binding_requirements() {
    let text = r#"{"version": "1", "pip_version": "23.2.1", "install": [
      {"download_info": {"url": "file:///w/cupy_cuda13x-13.6.0-py3-none-any.whl"}, "is_direct": false,
       "requested": true, "metadata": {"metadata_version": "2.1", "name": "cupy_cuda13x", "version": "13.6.0",
       "requires_dist": ["numpy>=2", "nvidia-cuda-runtime==13.*; extra == \"ctk\""]}},
      {"requested": false, "metadata": {"name": "numpy", "version": "2.4.0"}}],
      "environment": {"python_version": "3.11"}}"#;
    let dry = parse_pip_report(text).unwrap();
    assert_eq!(dry.install, [install("cupy-cuda13x", "13.6.0", &["numpy"]), install("numpy", "2.4.0", &[])]);
    assert!(parse_pip_report("ERROR: no such option: --report").unwrap_err().contains("pip 22.2"));
}

#[test]
fn the_change_names_each_kind_and_an_unasked_major() {
    let before = pins(&["numpy==1.26.4", "oldlib==1.0", "six==1.16.0", "torch==2.5.1+cpu"]);
    let dry = DryRun {
        install: vec![
            install("cupy-cuda13x", "13.6.0", &[]),
            install("numpy", "2.4.0", &[]),
            install("oldlib", "0.9", &[]),
            install("torch", "2.5.1+cu121", &[]),
        ],
        uninstall: vec![("six".into(), "1.16.0".into())],
    };
    let requested: BTreeSet<String> = ["cupy-cuda13x", "oldlib"].map(str::to_owned).into();
    let r = compare(&before, &dry, &requested);
    let kinds: Vec<(&str, ChangeKind)> = r.changes.iter().map(|c| (c.name.as_str(), c.kind)).collect();
    assert_eq!(
        kinds,
        [
            ("cupy-cuda13x", ChangeKind::Added),
            ("numpy", ChangeKind::Upgraded),
            ("oldlib", ChangeKind::Downgraded),
            ("torch", ChangeKind::Reinstalled),
            ("six", ChangeKind::Removed),
        ]
    );
    assert!(r.unchanged.is_empty());
    let majors: Vec<&str> = r.unasked_majors().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(majors, ["numpy"]);
    let text = r.describe();
    assert!(text.contains("upgrade   numpy 1.26.4 -> 2.4.0\n"), "{text}");
    assert!(text.contains("DOWNGRADE oldlib 1.0 -> 0.9 (asked for)"), "{text}");
    assert!(text.contains("REMOVE    six 1.16.0"), "{text}");
}

#[test]
fn versions_order_as_pep_440_says_for_a_change_list() {
    use std::cmp::Ordering::*;
    assert_eq!(compare_versions("1.26.4", "2.4.0"), Less);
    assert_eq!(compare_versions("2.10.0", "2.9.1"), Greater);
    assert_eq!(compare_versions("2.0", "2.0.0"), Equal);
    assert_eq!(compare_versions("2.6.0rc1", "2.6.0"), Less);
    assert_eq!(compare_versions("2.5.1+cpu", "2.5.1+cu121"), Equal);
}

#[test]
fn cuda_majors_come_from_names_and_labels() {
    assert_eq!(cuda_major("jax-cuda12-plugin", "0.7.2"), Some(12));
    assert_eq!(cuda_major("jax-cuda13-pjrt", "0.7.2"), Some(13));
    assert_eq!(cuda_major("cupy-cuda13x", "13.6.0"), Some(13));
    assert_eq!(cuda_major("nvidia-cudnn-cu13", "9.13.0.50"), Some(13));
    assert_eq!(cuda_major("torch", "2.6.0+cu124"), Some(12));
    assert_eq!(cuda_major("torch", "2.6.0"), None);
    assert_eq!(cuda_major("nvidia-cuda-runtime", "13.0.96"), Some(13));
    assert_eq!(cuda_major("nvidia-cublas", "13.1.0.3"), Some(13));
    // cuFFT numbers its versions apart from CUDA (12.0 ships with CUDA 13): no major from it.
    assert_eq!(cuda_major("nvidia-cufft", "12.0.0.61"), None);
    assert_eq!(cuda_major("nvidia-cuda-cupti-cu12", "12.8.90"), Some(12));
    assert_eq!(cuda_major("numpy", "2.4.0"), None);
}

/// Issue 29 item 3: `jax[cuda13]` beside `jax[cuda12]` removes the CUDA 12 plugin and its PJRT,
/// and the R550 torch fix (a cu12 torch replacing a cu13 one) removes the cu13 cuDNN the old torch
/// required; a cu12 library another framework that stays still requires is kept, and so is a
/// package of another family (CuPy beside JAX).
#[test]
fn the_other_cuda_major_s_leftovers_are_removed_unless_something_staying_needs_them() {
    let before = pins(&[
        "jax==0.7.2",
        "jax-cuda12-plugin==0.7.2",
        "jax-cuda12-pjrt==0.7.2",
        "nvidia-cudnn-cu12==9.8.0.87",
        "nvidia-nccl-cu12==2.26.2",
        "cupy-cuda12x==13.6.0",
        "tensorflow==2.20.0",
    ]);
    let dry = DryRun {
        install: vec![
            install("jax-cuda13-plugin", "0.7.2", &["jax-cuda13-pjrt"]),
            install("jax-cuda13-pjrt", "0.7.2", &[]),
            install("nvidia-cudnn-cu13", "9.13.0.50", &[]),
        ],
        uninstall: Vec::new(),
    };
    let mut requires = BTreeMap::new();
    requires.insert("jax-cuda12-plugin".to_owned(), pins(&["jax-cuda12-pjrt", "nvidia-nccl-cu12"]));
    requires.insert("tensorflow".to_owned(), pins(&["nvidia-cudnn-cu12"]));
    let removed: Vec<String> = other_major_removals(&before, &dry, &requires).into_iter().map(|c| c.name).collect();
    assert_eq!(removed, ["jax-cuda12-pjrt", "jax-cuda12-plugin", "nvidia-nccl-cu12"]);

    let before = pins(&["torch==2.9.0+cu130", "nvidia-cudnn-cu13==9.13.0.50", "numpy==2.1.0"]);
    let dry = DryRun {
        install: vec![
            install("torch", "2.6.0+cu124", &["nvidia-cudnn-cu12"]),
            install("nvidia-cudnn-cu12", "9.1.0.70", &[]),
        ],
        uninstall: Vec::new(),
    };
    let removed = other_major_removals(&before, &dry, &BTreeMap::new());
    assert_eq!(removed.len(), 1, "{removed:?}");
    assert_eq!((removed[0].name.as_str(), removed[0].before.as_deref()), ("nvidia-cudnn-cu13", Some("9.13.0.50")));
    assert!(removed[0].why.contains("CUDA 13 package beside the new CUDA 12 build"), "{}", removed[0].why);
    // The unsuffixed CUDA 13 runtime the cu130 torch brought goes too (nothing left needs it).
    let with_runtime = pins(&["torch==2.9.0+cu130", "nvidia-cuda-runtime==13.0.96"]);
    let removed: Vec<String> =
        other_major_removals(&with_runtime, &dry, &BTreeMap::new()).into_iter().map(|c| c.name).collect();
    assert_eq!(removed, ["nvidia-cuda-runtime"]);
    // A build of no CUDA major removes nothing.
    let cpu = DryRun { install: vec![install("torch", "2.6.0+cpu", &[])], uninstall: Vec::new() };
    assert!(other_major_removals(&before, &cpu, &BTreeMap::new()).is_empty());
}

#[test]
fn requirements_under_an_extra_bind_nothing() {
    assert_eq!(
        binding_requirement("nvidia-cudnn-cu12==9.1.0.70; platform_system == \"Linux\"", false),
        Some("nvidia-cudnn-cu12".into())
    );
    assert_eq!(binding_requirement("jax-cuda12-plugin[with-cuda]<=0.7.2,>=0.7.2; extra == \"cuda12\"", false), None);
    assert_eq!(binding_requirement("Jax_Lib>=0.7", false), Some("jax-lib".into()));
    // For a distribution the plan does not name, its extras' requirements bind too.
    assert_eq!(
        binding_requirement("nvidia-cublas-cu12>=12.5.3.2; extra == \"and-cuda\"", true),
        Some("nvidia-cublas-cu12".into())
    );
}

#[test]
fn dry_runs_keep_the_install_s_own_arguments() {
    let argv =
        pins(&["/e/bin/python", "-m", "pip", "install", "--no-index", "--find-links", "/w", "cupy-cuda13x==13.6.0"]);
    assert_eq!(
        dry_run_argv(&argv, &Tool::Pip),
        pins(&[
            "/e/bin/python",
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--report",
            "-",
            "--quiet",
            "--no-index",
            "--find-links",
            "/w",
            "cupy-cuda13x==13.6.0"
        ])
    );
    let uv = pins(&["/usr/bin/uv", "pip", "install", "--python", "/e/bin/python", "jax[cuda13]==0.7.2"]);
    let tool = tool_of(&uv);
    assert_eq!(tool, Tool::Uv { uv: "/usr/bin/uv".into() });
    assert_eq!(
        dry_run_argv(&uv, &tool),
        pins(&["/usr/bin/uv", "pip", "install", "--dry-run", "--python", "/e/bin/python", "jax[cuda13]==0.7.2"])
    );
    assert_eq!(requirement_names(&uv), ["jax"]);
    assert_eq!(requirement_names(&argv), ["cupy-cuda13x"]);
}

/// uv 0.13.9's dry run of `--reinstall numpy==1.26.4` (seen here): a reinstall, not a removal.
#[test]
fn a_uv_reinstall_is_a_reinstall() {
    let text = "Would uninstall 1 package\nWould install 1 package\n - numpy==1.26.4\n + numpy==1.26.4";
    let dry = parse_uv(&pins(&text.lines().collect::<Vec<_>>()));
    let r = compare(&pins(&["numpy==1.26.4"]), &dry, &BTreeSet::new());
    assert_eq!(
        r.changes.iter().map(|c| (c.name.as_str(), c.kind)).collect::<Vec<_>>(),
        [("numpy", ChangeKind::Reinstalled)]
    );
}

/// Found trying `setup --framework jax` into a `tensorflow[and-cuda]` environment (2026-11-28):
/// TensorFlow requires its CUDA 12 wheels only under its `and-cuda` extra, so they were planned for
/// removal as "nothing left needs" them, and TensorFlow lost the GPU. A distribution the plan does
/// not name keeps what its extras require; the plan's own (jax, whose extra it names anew) does not.
#[test]
fn an_extra_of_a_framework_the_plan_does_not_name_keeps_its_cuda_wheels() {
    let dir = tempfile::tempdir().unwrap();
    let dist = |folder: &str, headers: &str| {
        let d = dir.path().join(folder);
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("METADATA"), format!("Metadata-Version: 2.1\n{headers}\n\nbody\n")).unwrap();
    };
    dist(
        "tensorflow-2.21.0.dist-info",
        "Name: tensorflow\nVersion: 2.21.0\nRequires-Dist: numpy>=1.26\nRequires-Dist: nvidia-cudnn-cu12<10.0,>=9.3.0.75; extra == \"and-cuda\"",
    );
    dist(
        "jax-0.7.2.dist-info",
        "Name: jax\nVersion: 0.7.2\nRequires-Dist: jax-cuda12-plugin[with-cuda]<=0.7.2,>=0.7.2; extra == \"cuda12\"",
    );
    // Named or not by the plan, jax's cuda12 extra is one of its alternative builds; TensorFlow's
    // and-cuda extra adds the libraries to its one build.
    for requested in [BTreeSet::from(["jax".to_owned()]), BTreeSet::new()] {
        let requires = installed_requires(dir.path(), &requested);
        assert_eq!(requires["tensorflow"], ["numpy", "nvidia-cudnn-cu12"]);
        assert!(requires["jax"].is_empty(), "{requires:?}");
    }
    let requires = installed_requires(dir.path(), &BTreeSet::from(["tensorflow".to_owned()]));
    assert_eq!(requires["tensorflow"], ["numpy"], "a plan naming tensorflow names its extras anew");
    let requires = installed_requires(dir.path(), &BTreeSet::new());
    let before = pins(&[
        "tensorflow==2.21.0",
        "nvidia-cudnn-cu12==9.28.0.42",
        "jax==0.7.2",
        "jax-cuda12-plugin==0.7.2",
        "numpy==2.4.6",
    ]);
    let dry = DryRun {
        install: vec![
            install("jax-cuda13-plugin", "0.7.2", &["nvidia-cudnn-cu13"]),
            install("nvidia-cudnn-cu13", "9.28.1.4", &[]),
        ],
        uninstall: Vec::new(),
    };
    let removed: Vec<String> = other_major_removals(&before, &dry, &requires).into_iter().map(|c| c.name).collect();
    assert_eq!(removed, ["jax-cuda12-plugin"], "TensorFlow's cuDNN stays, jax's old plugin goes");
}

/// Issue 29 item 4: jax[cuda13] into a tensorflow[and-cuda] environment (tried 2026-11-28) put
/// nvidia-cudnn-cu13 over nvidia-cudnn-cu12's files (both write nvidia/cudnn/lib/libcudnn.so.9):
/// the resolution names each such pair before anything changes.
#[test]
fn library_wheels_of_two_cuda_majors_that_stay_together_are_named() {
    let change = |name: &str, kind: ChangeKind, after: &str| Change {
        name: name.into(),
        kind,
        before: None,
        after: Some(after.into()),
        requested: false,
        why: String::new(),
    };
    let r = Resolution {
        changes: vec![
            change("jax", ChangeKind::Added, "0.10.2"),
            change("nvidia-cudnn-cu13", ChangeKind::Added, "9.28.1.4"),
            change("nvidia-cublas", ChangeKind::Added, "13.10.0.20"),
            change("nvidia-nccl-cu13", ChangeKind::Added, "2.32.3"),
        ],
        unchanged: pins(&["nvidia-cudnn-cu12==9.28.0.42", "nvidia-cublas-cu12==12.9.3.13", "tensorflow==2.21.0"]),
        command: Vec::new(),
    };
    assert_eq!(
        r.overlaps(),
        // CUDA 13's unsuffixed nvidia-cublas installs under nvidia/cu13: no overlap.
        [("nvidia-cudnn-cu13 9.28.1.4".to_owned(), "nvidia-cudnn-cu12 9.28.0.42".to_owned())]
    );
    // Refused unless allowed, in the words setup, fix and the window give.
    let refused = r.refusal(Allow::default()).unwrap();
    assert!(
        refused.contains("nvidia-cudnn-cu13 9.28.1.4 over nvidia-cudnn-cu12 9.28.0.42")
            && refused.contains("--allow-overlap")
    );
    assert_eq!(r.refusal(Allow { overlap: true, major: false }), None);
    // The same major, or a library nothing of the other major stays for: none.
    let same = Resolution { unchanged: pins(&["nvidia-cudnn-cu13==9.26.0.51"]), ..r };
    assert!(same.overlaps().is_empty());
    assert_eq!(same.refusal(Allow::default()), None);
    // An unasked major upgrade is refused first, and allowed by its own flag only.
    let numpy = Change {
        name: "numpy".into(),
        kind: ChangeKind::Upgraded,
        before: Some("1.26.4".into()),
        after: Some("2.4.0".into()),
        requested: false,
        why: String::new(),
    };
    let major = Resolution { changes: vec![numpy], ..same };
    assert!(major.refusal(Allow::default()).unwrap().contains("numpy 1.26.4 -> 2.4.0"));
    assert!(major.refusal(Allow { major: false, overlap: true }).is_some());
    assert_eq!(major.refusal(Allow { major: true, overlap: false }), None);
}
