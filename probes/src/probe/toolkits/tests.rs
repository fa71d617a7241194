#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::host::{CmdOutput, CommandRecord, Fixture, ReplayHost};
use gpu_doctor_model::{Platform, ToolkitKind, Toolkits, VersionSource};

fn linux() -> Fixture {
    Fixture::new(Platform { os: OsFamily::Linux, arch: "x86_64".into() })
}

fn file(f: &mut Fixture, path: &str, text: &str) {
    f.files.insert(path.into(), text.into());
}

fn command(f: &mut Fixture, argv: &[&str], stdout: &str) {
    f.commands.push(CommandRecord {
        argv: argv.iter().map(|s| s.to_string()).collect(),
        output: Some(CmdOutput { status: Some(0), stdout: stdout.into(), stderr: String::new() }),
        error: None,
    });
}

fn run(f: Fixture, site_packages: &[SitePackages]) -> (Probed<Toolkits>, Vec<gpu_doctor_model::TraceEntry>) {
    let host = ReplayHost::new(f);
    let mut trace = Trace::new("toolkits");
    let probed = probe(&host, site_packages, &LoaderCache::default(), &mut trace);
    (probed, trace.into_entries())
}

const LDCONFIG: &str = "5 libs found in cache `/etc/ld.so.cache'\n\
    \tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1\n\
    \tlibcudnn.so.8 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcudnn.so.8\n\
    \tlibcudart.so.12 (libc6,x86-64) => /usr/local/cuda-12.4/targets/x86_64-linux/lib/libcudart.so.12\n\
    \tlibcuda.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcuda.so.1\n\
    \tlibcudadebugger.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcudadebugger.so.1\n";

/// Two local toolkits; the names disagree about which one is in use.
fn two_toolkits() -> Fixture {
    let mut f = linux();
    file(&mut f, "/usr/local/cuda-11.8/bin/nvcc", "");
    file(&mut f, "/usr/local/cuda-11.8/version.json", r#"{"cuda": {"name": "CUDA SDK", "version": "11.8.0"}}"#);
    file(&mut f, "/usr/local/cuda-11.8/lib64/libcudart.so.11.0", "");
    file(&mut f, "/usr/local/cuda-12.4/bin/nvcc", "");
    file(&mut f, "/usr/local/cuda-12.4/version.json", r#"{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}"#);
    file(&mut f, "/usr/local/cuda-12.4/targets/x86_64-linux/lib/libcudart.so.12", "");
    f.links.insert("/usr/local/cuda".into(), "cuda-12.4".into());
    f.links.insert("/usr/local/cuda-12.4/lib64".into(), "targets/x86_64-linux/lib".into());
    f.env.insert("PATH".into(), "/usr/local/cuda-11.8/bin:/usr/bin:/bin".into());
    f.env.insert("CUDA_HOME".into(), "/usr/local/cuda-12.4".into());
    f.env.insert("LD_LIBRARY_PATH".into(), "/opt/none:/usr/local/cuda/lib64".into());
    file(&mut f, "/sbin/ldconfig", "");
    command(&mut f, &["/sbin/ldconfig", "-p"], LDCONFIG);
    f
}

#[test]
fn two_toolkits_are_both_found_and_the_picks_disagree() {
    let (probed, trace) = run(two_toolkits(), &[]);
    let Probed::Found { value: t, source } = probed else { panic!("{probed:?}") };
    assert_eq!(source, "filesystem");
    assert_eq!(t.installs.len(), 2, "{:#?}", t.installs);

    let old = t.install("/usr/local/cuda-11.8").unwrap();
    assert_eq!(old.version.unwrap().to_string(), "11.8.0");
    assert_eq!(old.version_source, Some(VersionSource::VersionJson));
    assert_eq!(old.kind, ToolkitKind::Local);
    assert_eq!(old.nvcc.as_deref(), Some("/usr/local/cuda-11.8/bin/nvcc"));
    assert_eq!(old.lib_dirs, vec!["/usr/local/cuda-11.8/lib64"]);
    assert_eq!(old.aliases, vec!["PATH"]);

    let new = t.install("/usr/local/cuda-12.4").unwrap();
    assert_eq!(new.version.unwrap().to_string(), "12.4.1");
    for alias in ["CUDA_HOME", "/usr/local/cuda", "LD_LIBRARY_PATH"] {
        assert!(new.aliases.iter().any(|a| a == alias), "{alias} not in {:?}", new.aliases);
    }
    assert!(new.lib_dirs.iter().any(|d| d == "/usr/local/cuda-12.4/targets/x86_64-linux/lib"), "{:?}", new.lib_dirs);

    let p = &t.picks;
    assert_eq!(p.path.as_ref().unwrap().named, "/usr/local/cuda-11.8/bin/nvcc");
    assert_eq!(p.path.as_ref().unwrap().install_root.as_deref(), Some("/usr/local/cuda-11.8"));
    assert_eq!(p.cuda_home.as_ref().unwrap().install_root.as_deref(), Some("/usr/local/cuda-12.4"));
    assert_eq!(p.usr_local_cuda.as_ref().unwrap().named, "cuda-12.4");
    assert_eq!(p.usr_local_cuda.as_ref().unwrap().install_root.as_deref(), Some("/usr/local/cuda-12.4"));
    assert_eq!(p.ld_library_path.as_ref().unwrap().named, "/usr/local/cuda/lib64/libcudart.so.12");
    assert_eq!(p.ld_library_path.as_ref().unwrap().install_root.as_deref(), Some("/usr/local/cuda-12.4"));
    assert!(p.cuda_path.is_none());
    assert_eq!(t.picked_roots(), vec!["/usr/local/cuda-11.8", "/usr/local/cuda-12.4"]);

    let names: Vec<&str> = t.loader_libraries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, vec!["libcudnn.so.8", "libcudart.so.12", "libcuda.so.1"]);
    assert!(t.loader_cache_read);
    assert!(trace.iter().any(|e| e.method == "run /sbin/ldconfig -p"), "{trace:#?}");
}

#[test]
fn a_distro_toolkit_gets_its_version_from_running_nvcc() {
    let mut f = linux();
    file(&mut f, "/usr/bin/nvcc", "");
    file(&mut f, "/usr/lib/x86_64-linux-gnu/libcudart.so.11.5.117", "");
    f.env.insert("PATH".into(), "/usr/bin:/bin".into());
    let out = "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 11.5, V11.5.119\n\
        Build cuda_11.5.r11.5/compiler.30672275_0\n";
    command(&mut f, &["/usr/bin/nvcc", "--version"], out);
    let (probed, trace) = run(f, &[]);
    let t = probed.value().unwrap();
    assert_eq!(t.installs.len(), 1, "{:#?}", t.installs);
    let i = &t.installs[0];
    assert_eq!(i.root, "/usr");
    assert_eq!(i.kind, ToolkitKind::Distro);
    assert_eq!(i.version.unwrap().to_string(), "11.5.119");
    assert_eq!(i.version_source, Some(VersionSource::Nvcc));
    assert_eq!(i.lib_dirs, vec!["/usr/lib/x86_64-linux-gnu"]);
    assert_eq!(t.picks.path.as_ref().unwrap().install_root.as_deref(), Some("/usr"));
    assert!(t.loader_libraries.is_empty());
    assert!(!t.loader_cache_read, "no ldconfig: the empty list does not say the cache is empty");
    assert!(trace.iter().any(|e| e.method == "read /usr/version.json" && e.outcome == gpu_doctor_model::Outcome::Miss));
    assert!(
        trace.iter().any(|e| e.method == "ldconfig -p" && e.outcome == gpu_doctor_model::Outcome::Miss),
        "{trace:#?}"
    );
}

#[test]
fn nothing_is_absent_with_the_places_looked_at() {
    let mut f = linux();
    f.env.insert("PATH".into(), "/usr/bin:/bin".into());
    file(&mut f, "/usr/bin/python3", "");
    let (probed, trace) = run(f, &[]);
    let Probed::Absent { reason } = probed else { panic!("{probed:?}") };
    for place in ["nvcc on PATH", "/usr/local/cuda", "$CUDA_HOME", "/opt/cuda", "$CONDA_PREFIX"] {
        assert!(reason.contains(place), "{place} not in {reason}");
    }
    assert!(!trace.is_empty());
}

#[test]
fn a_folder_without_cuda_in_it_is_not_a_toolkit() {
    let mut f = linux();
    file(&mut f, "/opt/cuda/README", "");
    f.env.insert("CUDA_HOME".into(), "/home/u/nothing".into());
    let (probed, trace) = run(f, &[]);
    assert!(matches!(probed, Probed::Absent { .. }), "{probed:?}");
    assert!(trace.iter().any(|e| e.method == "inspect /opt/cuda"), "{trace:#?}");
}

#[test]
fn macos_is_unsupported() {
    let f = Fixture::new(Platform { os: OsFamily::Macos, arch: "aarch64".into() });
    assert!(matches!(run(f, &[]).0, Probed::Unsupported { .. }));
}

#[test]
fn windows_toolkits_are_found_through_cuda_path_and_program_files() {
    let mut f = Fixture::new(Platform { os: OsFamily::Windows, arch: "x86_64".into() });
    let v124 = "C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v12.4";
    let v118 = "C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.8";
    file(&mut f, &format!("{v124}/bin/nvcc.exe"), "");
    file(&mut f, &format!("{v124}/version.json"), r#"{"cuda": {"version": "12.4.1"}}"#);
    file(&mut f, &format!("{v124}/lib/x64/cudart.lib"), "");
    file(&mut f, &format!("{v118}/bin/nvcc.exe"), "");
    file(&mut f, &format!("{v118}/bin/cudart64_110.dll"), "");
    command(
        &mut f,
        &[&format!("{v118}/bin/nvcc.exe"), "--version"],
        "Cuda compilation tools, release 11.8, V11.8.89\r\n",
    );
    let win = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.4";
    f.env.insert("CUDA_PATH".into(), win.into());
    f.env.insert("CUDA_PATH_V12_4".into(), win.into());
    f.env.insert("CUDA_PATH_V11_8".into(), r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.8".into());
    f.env.insert("PATH".into(), format!(r"{win}\bin;{win}\libnvvp;C:\Windows\system32"));
    let (probed, _) = run(f, &[]);
    let t = probed.value().unwrap();
    assert_eq!(t.installs.len(), 2, "{:#?}", t.installs);
    let i = t.install(v124).unwrap();
    assert_eq!(i.kind, ToolkitKind::WindowsInstaller);
    assert_eq!(i.version.unwrap().to_string(), "12.4.1");
    assert_eq!(i.nvcc.as_deref(), Some(format!("{v124}/bin/nvcc.exe").as_str()));
    assert_eq!(i.lib_dirs, vec![format!("{v124}/lib/x64")]);
    assert_eq!(i.aliases, vec!["PATH", "CUDA_PATH", "CUDA_PATH_V12_4"]);
    let old = t.install(v118).unwrap();
    assert_eq!(old.version.unwrap().to_string(), "11.8.89");
    assert_eq!(old.aliases, vec!["CUDA_PATH_V11_8"]);
    assert_eq!(t.picks.cuda_path.as_ref().unwrap().install_root.as_deref(), Some(v124));
    assert_eq!(t.picks.path.as_ref().unwrap().install_root.as_deref(), Some(v124));
    assert!(t.loader_libraries.is_empty());
    assert!(!t.loader_cache_read, "Windows has no ldconfig");
}

#[test]
fn pip_and_conda_toolkits_are_found_with_package_versions() {
    let mut f = linux();
    let sp = "/home/u/proj/.venv/lib/python3.12/site-packages";
    file(&mut f, &format!("{sp}/nvidia/cuda_runtime/lib/libcudart.so.12"), "");
    file(&mut f, &format!("{sp}/nvidia_cuda_runtime_cu12-12.4.127.dist-info/METADATA"), "Version: 12.4.127\n");
    file(&mut f, &format!("{sp}/nvidia/cuda_nvcc/bin/nvcc"), "");
    file(&mut f, &format!("{sp}/nvidia_cuda_nvcc_cu12-weird.dist-info/METADATA"), "Name: x\nVersion: 12.4.131\n");
    file(&mut f, &format!("{sp}/nvidia/cu13/lib/libcudart.so.13"), "");
    file(&mut f, &format!("{sp}/nvidia_cuda_runtime-13.0.96.dist-info/METADATA"), "Version: 13.0.96\n");
    let conda = "/opt/conda/envs/ml";
    file(&mut f, &format!("{conda}/lib/libcudart.so.12.4.127"), "");
    file(&mut f, &format!("{conda}/conda-meta/cuda-cudart-dev-12.4.127-h0.json"), "{}");
    file(&mut f, &format!("{conda}/conda-meta/cuda-cudart-12.4.127-h5888daf_0.json"), "{}");
    f.env.insert("CONDA_PREFIX".into(), conda.into());
    let envs = [SitePackages { env: "venv:proj".into(), path: sp.into() }];
    let (probed, _) = run(f, &envs);
    let t = probed.value().unwrap();
    assert_eq!(t.installs.len(), 4, "{:#?}", t.installs);
    let c = t.install(conda).unwrap();
    assert_eq!((c.kind, c.version_source), (ToolkitKind::Conda, Some(VersionSource::CondaMeta)));
    assert_eq!(c.version.unwrap().to_string(), "12.4.127");
    let rt = t.install(&format!("{sp}/nvidia/cuda_runtime")).unwrap();
    assert_eq!((rt.kind, rt.version_source), (ToolkitKind::Pip, Some(VersionSource::DistInfo)));
    assert_eq!(rt.version.unwrap().to_string(), "12.4.127");
    assert_eq!(rt.python_env.as_deref(), Some("venv:proj"));
    assert_eq!(rt.lib_dirs, vec![format!("{sp}/nvidia/cuda_runtime/lib")]);
    let nvcc = t.install(&format!("{sp}/nvidia/cuda_nvcc")).unwrap();
    assert_eq!(nvcc.version_source, Some(VersionSource::PackageMetadata));
    assert_eq!(nvcc.version.unwrap().to_string(), "12.4.131");
    let cu13 = t.install(&format!("{sp}/nvidia/cu13")).unwrap();
    assert_eq!(cu13.version.unwrap().to_string(), "13.0.96");
}

#[test]
fn a_failing_nvcc_leaves_the_version_unknown_with_a_reason() {
    let mut f = linux();
    file(&mut f, "/opt/cuda/bin/nvcc", "");
    f.commands.push(CommandRecord {
        argv: vec!["/opt/cuda/bin/nvcc".into(), "--version".into()],
        output: None,
        error: Some(crate::host::HostError::Timeout { after_ms: 10_000, what: "nvcc".into() }),
    });
    let (probed, trace) = run(f, &[]);
    let i = &probed.value().unwrap().installs[0];
    assert_eq!((i.root.as_str(), i.kind, i.version), ("/opt/cuda", ToolkitKind::Distro, None));
    assert!(
        trace
            .iter()
            .any(|e| e.method == "run /opt/cuda/bin/nvcc --version" && e.outcome == gpu_doctor_model::Outcome::Error)
    );
}

#[test]
fn one_collection_reads_the_loader_cache_once_even_without_a_toolkit() {
    // No CUDA toolkit: the toolkits are absent, and cuDNN must still not run ldconfig again.
    let mut f = Fixture::new(Platform { os: gpu_doctor_model::OsFamily::Linux, arch: "x86_64".into() });
    file(&mut f, "/sbin/ldconfig", "");
    command(&mut f, &["/sbin/ldconfig", "-p"], LDCONFIG);
    let snapshot = crate::probe::collect(&ReplayHost::new(f), &crate::probe::Options::default());
    let runs: Vec<_> = snapshot.trace.iter().filter(|e| e.method == "run /sbin/ldconfig -p").collect();
    assert_eq!(runs.len(), 1, "{runs:#?}");
}
