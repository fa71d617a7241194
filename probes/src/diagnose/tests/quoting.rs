//! Fixes name paths of the machine, which may be hostile: every command a fix shows must hand its
//! program exactly the words meant, whatever the paths hold.

use super::builder::Machine;
use crate::compat::Kb;
use crate::model::{CudnnKind, FrameworkBuild};

/// A folder name that runs commands when pasted unquoted, inside single quotes, or inside double quotes.
const H: &str = "/home/u/p;touch${IFS}PWNED;#'$(touch PWNED) x\n`touch PWNED`";
const MARK: &str = "PWNED";

fn cuda(version: &str) -> Option<FrameworkBuild> {
    Some(FrameworkBuild::Cuda { version: Some(version.into()) })
}

fn rig() -> Machine {
    Machine::linux()
        .gpu("NVIDIA GeForce RTX 4090", "8.9")
        .driver("570.124.06", "12.8")
        .env_prefix(&format!("{H}/.venv"))
}

/// A machine per fix that holds a path (or other text) of the machine.
fn hostile_machines() -> Vec<(&'static str, Machine)> {
    let venv_lib = format!("{H}/cudnn/lib");
    let c118 = format!("/usr/local/cuda-11.8{H}");
    let c124 = format!("/usr/local/cuda-12.4{H}");
    let loaded = |encoded: u32| {
        rig()
            .torch("2.5.1+cu124")
            .wheel("nvidia-cudnn-cu12", "9.1.0.70")
            .deep_torch(|t| t.cudnn_version = Some(encoded))
            .env("LD_LIBRARY_PATH", &format!("{venv_lib}:/opt/x"))
            .cudnn(&format!("{venv_lib}/libcudnn.so.8.9.7"), CudnnKind::Library, "8.9.7", None)
    };
    let mut wsl1 = Machine::linux().wsl(1, &[]);
    if let Some(w) = wsl1.0.platform.wsl.as_mut() {
        w.distro = Some(format!("Ubuntu{H}"));
    }
    let two_toolkits = |m: Machine| {
        m.env("LD_LIBRARY_PATH", &format!("{H}/tools/lib"))
            .toolkit(&c118, "11.8", &["PATH", "LD_LIBRARY_PATH"])
            .toolkit(&c124, "12.4", &["CUDA_HOME", "/usr/local/cuda"])
    };
    // A torch CPU build, a torch too new for the driver and a torch not built for the GPU get their
    // fix from a plan (gpu-doctor-installers, whose tests check its quoting): their rules' own prose
    // names no path.
    vec![
        ("tensorflow-cpu", rig().framework("tensorflow-cpu", "2.18.0", Some(FrameworkBuild::Cpu))),
        ("jax without plugin", rig().framework("jax", "0.4.30", Some(FrameworkBuild::Cpu))),
        (
            "tensorflow without cuDNN",
            rig()
                .framework("tensorflow", "2.18.0", cuda("12.5.1"))
                .framework_with(|f| f.cudnn_build = Some("9".into())),
        ),
        ("jax without cuDNN", rig().framework("jax-cuda12-plugin", "0.6.2", cuda("12"))),
        (
            "tensorflow with an old cuDNN on the loader path",
            rig()
                .framework("tensorflow", "2.18.0", cuda("12.5.1"))
                .framework_with(|f| f.cudnn_build = Some("9".into()))
                .env("LD_LIBRARY_PATH", &format!("{venv_lib}:/opt/x"))
                .cudnn(&format!("{venv_lib}/libcudnn.so.9.1.0"), CudnnKind::Library, "9.1.0", None),
        ),
        ("torch loads another cuDNN major", loaded(8907)),
        (
            "torch loads another cuDNN minor",
            loaded(90300).cudnn(&format!("{venv_lib}/libcudnn.so.9.3.0"), CudnnKind::Library, "9.3.0", None),
        ),
        (
            "torch and jax of two majors",
            rig()
                .torch("2.5.1+cu124")
                .framework("jax-cuda13-plugin", "0.7.2", cuda("13"))
                .framework("jax-cuda13-pjrt", "0.7.2", cuda("13"))
                .wheel("nvidia-cudnn-cu13", "9.13.0.50")
                .wheel("nvidia-cudnn-cu12", "9.1.0.70"),
        ),
        ("torch and cupy of two majors", rig().torch("2.5.1+cu124").framework("cupy-cuda13x", "14.0.0", cuda("13"))),
        (
            "tensorflow and torch of two majors",
            rig()
                .framework("tensorflow", "2.18.0", cuda("12.5.1"))
                .wheel("nvidia-cudnn-cu12", "9.3.0.75")
                .torch("2.9.0+cu130"),
        ),
        ("duplicate wheels", rig().wheel("nvidia-cublas-cu12", "12.4.5.8").wheel("nvidia-cublas-cu13", "13.0.0.19")),
        ("toolkits disagree, framework major", two_toolkits(rig().torch("2.0.1+cu118"))),
        ("toolkits disagree, newest", two_toolkits(rig())),
        (
            "stale library path",
            rig()
                .torch("2.9.0+cu130")
                .wheel("nvidia-cuda-runtime", "13.0.96")
                .wheel("nvidia-cudnn-cu13", "9.13.0.50")
                .env("LD_LIBRARY_PATH", &format!("{H}/tools/lib"))
                .toolkit(&c124, "12.4", &["LD_LIBRARY_PATH"]),
        ),
        (
            "extensions need another toolkit",
            rig()
                .driver("580.65.06", "13.0")
                .toolkit(&c124, "12.4", &["CUDA_HOME"])
                .toolkit(&format!("/usr/local/cuda-13.0{H}"), "13.0", &[])
                .torch("2.9.0+cu130"),
        ),
        (
            "a Linux driver inside WSL2",
            Machine::linux()
                .wsl(2, &["libcuda.so.1"])
                .gpu("NVIDIA GeForce RTX 4070", "8.9")
                .driver("555.97", "12.5")
                .toolkit("/usr/local/cuda-12.5", "12.5", &["PATH"])
                .loader_lib("libcuda.so.1", &format!("{H}/libcuda.so.1")),
        ),
        ("WSL1", wsl1),
        (
            "a cuDNN release that dropped the GPU",
            Machine::linux()
                .gpu("NVIDIA GeForce GTX 1080", "6.1")
                .env_prefix(&format!("{H}/.venv"))
                .torch("2.11.0+cu128")
                .wheel("nvidia-cudnn-cu12", "9.17.1.4"),
        ),
    ]
}

/// The fix with every shown command taken out; what is left is prose and fixed syntax.
fn prose(fix: &str, shown: &[super::super::Shown]) -> String {
    let mut texts: Vec<&str> = shown.iter().map(|s| s.text.as_str()).collect();
    texts.sort_by_key(|t| std::cmp::Reverse(t.len()));
    texts.iter().fold(fix.to_owned(), |acc, t| acc.replace(t, "<cmd>"))
}

/// What some fix of each case shows, so each case is known to reach the fix it is there for.
const REACHED: &[(&str, &str)] = &[
    ("tensorflow-cpu", "pip uninstall -y tensorflow-cpu"),
    ("jax without plugin", "pip install -U 'jax[cuda12]'"),
    ("tensorflow without cuDNN", "'tensorflow[and-cuda]==2.18.0'"),
    ("jax without cuDNN", "pip install -U 'jax[cuda12]'"),
    ("tensorflow with an old cuDNN on the loader path", "export LD_LIBRARY_PATH=/opt/x"),
    ("torch loads another cuDNN major", "nvidia-cudnn-cu12==9.1.0.70"),
    ("torch loads another cuDNN minor", "nvidia-cudnn-cu12==9.1.0.70"),
    ("torch and jax of two majors", "jax-cuda13-pjrt"),
    ("torch and cupy of two majors", "cupy-cuda12x"),
    ("tensorflow and torch of two majors", "'torch==2.9.*'"),
    ("duplicate wheels", "--no-deps"),
    ("toolkits disagree, framework major", "sudo ln -sfn"),
    ("toolkits disagree, newest", "export PATH="),
    ("stale library path", "Drop the folder from the loader path: export LD_LIBRARY_PATH="),
    ("extensions need another toolkit", "export CUDA_HOME="),
    ("a Linux driver inside WSL2", "dpkg -S"),
    ("WSL1", "wsl --set-version"),
    ("a cuDNN release that dropped the GPU", "'nvidia-cudnn-cu12==9.10.*'"),
];

/// The text of a PowerShell line outside its single-quoted strings, in which nothing runs (a quote
/// character doubled is a quote inside one; PowerShell also reads U+2018 to U+201B as quotes).
fn outside_powershell_quotes(line: &str) -> String {
    const QUOTES: [char; 5] = ['\'', '\u{2018}', '\u{2019}', '\u{201a}', '\u{201b}'];
    let mut out = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if !QUOTES.contains(&c) {
            if !quoted {
                out.push(c);
            }
        } else if quoted && chars.peek().is_some_and(|n| QUOTES.contains(n)) {
            chars.next();
        } else {
            quoted = !quoted;
        }
    }
    out
}

fn check(name: &str, m: &Machine, parse_back: bool) {
    let (findings, shown) = super::super::diagnose_shown(&m.0, Kb::get().unwrap());
    let fixes: Vec<&str> = findings.iter().filter_map(|f| f.fix.as_deref()).collect();
    assert!(fixes.iter().any(|f| f.contains(MARK)), "{name}: no fix shows the hostile path: {findings:#?}");
    if parse_back {
        let (_, want) = REACHED.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("{name} has no REACHED"));
        assert!(fixes.iter().any(|f| f.contains(want)), "{name}: no fix shows {want}: {fixes:#?}");
    }
    for s in &shown {
        if parse_back && let Some(argv) = &s.argv {
            assert_eq!(shlex::split(&s.text).as_ref(), Some(argv), "{name}: {:?} does not read back", s.text);
        }
        // PowerShell (the only other shell fixes use): the machine text only inside literals.
        if s.argv.is_none() {
            let bare = outside_powershell_quotes(&s.text);
            assert!(!bare.contains(MARK), "{name}: PowerShell would run part of {:?}: {bare}", s.text);
        }
    }
    for fix in fixes {
        let rest = prose(fix, &shown);
        assert!(!rest.contains(MARK), "{name}: machine text outside a quoted command:\n{fix}\nleft: {rest}");
    }
}

#[test]
fn every_fix_quotes_hostile_paths_for_posix_sh() {
    for (name, m) in hostile_machines() {
        check(name, &m, true);
    }
}

#[test]
fn every_fix_quotes_hostile_paths_for_powershell_on_windows() {
    let windows = |m: Machine| {
        let mut m = m;
        m.0.platform.platform.os = crate::model::OsFamily::Windows;
        m
    };
    let mut checked = 0;
    for (name, m) in hostile_machines() {
        let m = windows(m);
        // Rules that do not apply on Windows (WSL, the Linux loader) leave nothing to check.
        let (findings, _) = super::super::diagnose_shown(&m.0, Kb::get().unwrap());
        if findings.iter().filter_map(|f| f.fix.as_deref()).any(|f| f.contains(MARK)) {
            check(name, &m, false);
            checked += 1;
        }
    }
    assert!(checked > 10, "only {checked} machines show a hostile path in a Windows fix");
}

#[test]
fn a_fix_for_pasted_text_says_its_paths_came_from_another_machine() {
    let mut pasted = Machine::pasted().gpu("NVIDIA GeForce RTX 4090", "8.9").driver("570.124.06", "12.8");
    let tf_cpu = |m: Machine| m.framework("tensorflow-cpu", "2.18.0", Some(FrameworkBuild::Cpu));
    pasted = tf_cpu(pasted.env_prefix("/home/them/.venv"));
    let f = pasted.finding("framework.cpu_only_build");
    let fix = f.fix.unwrap();
    assert!(fix.contains("/home/them/.venv/bin/python -m pip install"), "{fix}");
    assert!(fix.contains("another machine"), "{fix}");
    // This machine's own fixes say nothing of the kind.
    let fix = tf_cpu(rig()).finding("framework.cpu_only_build").fix.unwrap();
    assert!(!fix.contains("another machine"), "{fix}");
}
