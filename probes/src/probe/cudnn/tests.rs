#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::host::{CmdOutput, CommandRecord, Fixture, ReplayHost};
use gpu_doctor_model::LoaderEntry;
use gpu_doctor_model::{
    CudnnCopy, CudnnKind, CudnnVersionSource, Platform, ToolkitInstall, ToolkitKind, ToolkitPicks, Toolkits,
};

const V8: &str = "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 9\n#define CUDNN_PATCHLEVEL 7\n\
    #define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n";
const V9: &str = "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n";
const SP: &str = "/home/u/.venv/lib/python3.11/site-packages";

fn linux() -> Fixture {
    Fixture::new(Platform { os: OsFamily::Linux, arch: "x86_64".into() })
}

fn run(
    f: Fixture,
    toolkits: Option<&Toolkits>,
    sps: &[SitePackages],
) -> (Probed<Vec<CudnnCopy>>, Vec<gpu_doctor_model::TraceEntry>) {
    let host = ReplayHost::new(f);
    let mut trace = Trace::new("cudnn");
    let probed = probe(&host, toolkits, sps, &crate::probe::toolkits::LoaderCache::default(), &mut trace);
    (probed, trace.into_entries())
}

fn venv() -> Vec<SitePackages> {
    vec![SitePackages { env: "venv:/home/u/.venv".into(), path: SP.into() }]
}

fn toolkit(root: &str, lib: &str, loader: Vec<LoaderEntry>) -> Toolkits {
    Toolkits {
        installs: vec![ToolkitInstall {
            root: root.into(),
            kind: ToolkitKind::Local,
            version: None,
            version_source: None,
            nvcc: None,
            lib_dirs: vec![lib.into()],
            aliases: Vec::new(),
            python_env: None,
        }],
        picks: ToolkitPicks::default(),
        loader_libraries: loader,
        loader_cache_read: true,
        ldd_resolved: Vec::new(),
        stub_libcuda: Vec::new(),
    }
}

#[test]
fn a_pip_wheel_and_a_system_header_are_two_copies() {
    let mut f = linux();
    f.files.insert("/usr/include/cudnn_version.h".into(), V8.into());
    f.files.insert(format!("{SP}/nvidia/cudnn/include/cudnn_version.h"), V9.into());
    f.files.insert(format!("{SP}/nvidia_cudnn_cu12-9.1.0.70.dist-info/METADATA"), "Version: 9.1.0.70\n".into());
    let (probed, _) = run(f, None, &venv());
    let copies = probed.value().unwrap();
    assert_eq!(copies.len(), 2, "{copies:#?}");
    let wheel = copies.iter().find(|c| c.kind == CudnnKind::PipWheel).unwrap();
    assert_eq!(wheel.location, format!("{SP}/nvidia/cudnn"));
    assert_eq!(wheel.version.unwrap().to_string(), "9.1.0");
    assert_eq!(wheel.version_source, Some(CudnnVersionSource::DistInfo));
    assert_eq!(wheel.env.as_deref(), Some("venv:/home/u/.venv"));
    assert_eq!(wheel.cuda_major, Some(12));
    let header = copies.iter().find(|c| c.kind == CudnnKind::Header).unwrap();
    assert_eq!(header.location, "/usr/include/cudnn_version.h");
    assert_eq!(header.version.unwrap().to_string(), "8.9.7");
    assert_eq!((header.major, header.env.as_deref(), header.cuda_major), (Some(8), None, None));
}

#[test]
fn a_wheel_without_dist_info_reads_its_header() {
    let mut f = linux();
    f.files.insert(format!("{SP}/nvidia/cudnn/include/cudnn_version.h"), V9.into());
    let (probed, _) = run(f, None, &venv());
    let copies = probed.value().unwrap();
    assert_eq!(copies.len(), 1);
    assert_eq!(copies[0].version_source, Some(CudnnVersionSource::HeaderDefines));
    assert_eq!(copies[0].version.unwrap().to_string(), "9.1.0");
}

#[test]
fn alternatives_links_and_library_links_are_one_copy_each() {
    let mut f = linux();
    let arch = "/usr/include/x86_64-linux-gnu";
    f.files.insert(format!("{arch}/cudnn_version_v9.h"), V9.into());
    f.links.insert("/usr/include/cudnn_version.h".into(), "/etc/alternatives/cudnn_version_h".into());
    f.links.insert("/etc/alternatives/cudnn_version_h".into(), format!("{arch}/cudnn_version_v9.h"));
    let lib = "/usr/lib/x86_64-linux-gnu";
    f.files.insert(format!("{lib}/libcudnn.so.9.1.0"), String::new());
    f.links.insert(format!("{lib}/libcudnn.so.9"), "libcudnn.so.9.1.0".into());
    f.files.insert("/usr/local/cuda-12.4/lib64/libcudnn.so.8".into(), String::new());
    let loader = vec![
        LoaderEntry { name: "libcudnn.so.9".into(), arch: "libc6,x86-64".into(), path: format!("{lib}/libcudnn.so.9") },
        LoaderEntry { name: "libcudnn_ops.so.9".into(), arch: "libc6,x86-64".into(), path: format!("{lib}/x") },
    ];
    let t = toolkit("/usr/local/cuda-12.4", "/usr/local/cuda-12.4/lib64", loader);
    let (probed, trace) = run(f, Some(&t), &[]);
    let copies = probed.value().unwrap();
    assert_eq!(copies.len(), 3, "{copies:#?}");
    assert_eq!(copies[0].kind, CudnnKind::Header);
    assert_eq!(copies[0].location, "/usr/include/cudnn_version.h");
    assert_eq!(copies[0].version.unwrap().to_string(), "9.1.0");
    let libs: Vec<_> = copies.iter().filter(|c| c.kind == CudnnKind::Library).collect();
    assert_eq!(libs[0].location, format!("{lib}/libcudnn.so.9"));
    assert_eq!(libs[0].version.unwrap().to_string(), "9.1.0");
    assert_eq!(libs[0].version_source, Some(CudnnVersionSource::FileName));
    assert_eq!((libs[1].version, libs[1].major), (None, Some(8)));
    assert!(trace.iter().any(|e| e.method == "look in /usr/local/cuda-12.4/include"), "{trace:#?}");
}

#[test]
fn v7_headers_and_conda_packages_are_found() {
    let mut f = linux();
    let conda = "/opt/conda";
    f.env.insert("CONDA_PREFIX".into(), conda.into());
    f.files.insert(
        format!("{conda}/include/cudnn.h"),
        "#define CUDNN_MAJOR 7\n#define CUDNN_MINOR 6\n#define CUDNN_PATCHLEVEL 5\n".into(),
    );
    f.files.insert(format!("{conda}/conda-meta/cudnn-8.9.2.26-cuda12_0.json"), "{}".into());
    f.files.insert(format!("{conda}/conda-meta/cudnn-dev-8.9.2.26-cuda12_0.json"), "{}".into());
    let (probed, _) = run(f, None, &[]);
    let copies = probed.value().unwrap();
    assert_eq!(copies.len(), 2, "{copies:#?}");
    assert_eq!(copies[0].version.unwrap().to_string(), "7.6.5");
    let pkg = &copies[1];
    assert_eq!(pkg.kind, CudnnKind::CondaPackage);
    assert_eq!(pkg.version.unwrap().to_string(), "8.9.2");
    assert_eq!(pkg.cuda_major, Some(12));
}

#[test]
fn without_toolkits_the_loader_cache_is_read_here() {
    let mut f = linux();
    f.files.insert("/sbin/ldconfig".into(), String::new());
    f.files.insert("/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.7".into(), String::new());
    f.commands.push(CommandRecord {
        argv: vec!["/sbin/ldconfig".into(), "-p".into()],
        output: Some(CmdOutput {
            status: Some(0),
            stdout: "1 libs found in cache `/etc/ld.so.cache'\n\tlibcudnn.so.8 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.7\n".into(),
            stderr: String::new(),
        }),
        error: None,
    });
    let (probed, _) = run(f, None, &[]);
    let copies = probed.value().unwrap();
    assert_eq!(copies.len(), 1);
    assert_eq!(copies[0].version.unwrap().to_string(), "8.9.7");
}

#[test]
fn nothing_is_absent_with_the_places_looked_at() {
    let mut f = linux();
    f.files.insert("/usr/include/stdio.h".into(), String::new());
    let (probed, trace) = run(f, None, &venv());
    let Probed::Absent { reason } = probed else { panic!("{probed:?}") };
    for place in ["/usr/include/cudnn_version.h", "nvidia/cudnn in", "ldconfig"] {
        assert!(reason.contains(place), "{place} not in {reason}");
    }
    assert!(trace.iter().any(|e| e.method == "ldconfig -p"), "{trace:#?}");
}

#[test]
fn windows_dlls_are_found_in_toolkit_and_cudnn_folders() {
    let mut f = Fixture::new(Platform { os: OsFamily::Windows, arch: "x86_64".into() });
    let cuda = "C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v12.4";
    f.files.insert(format!("{cuda}/bin/cudnn64_8.dll"), String::new());
    f.files.insert("C:/Program Files/NVIDIA/CUDNN/v9.1/bin/12.4/cudnn64_9.dll".into(), String::new());
    f.files.insert("C:/Program Files/NVIDIA/CUDNN/v9.1/include/12.4/cudnn_version.h".into(), V9.into());
    let t = toolkit(cuda, &format!("{cuda}/lib/x64"), Vec::new());
    let (probed, _) = run(f, Some(&t), &[]);
    let copies = probed.value().unwrap();
    assert_eq!(copies.len(), 3, "{copies:#?}");
    let dlls: Vec<_> = copies.iter().filter(|c| c.kind == CudnnKind::Dll).collect();
    assert_eq!((dlls[0].major, dlls[0].cuda_major), (Some(8), None));
    assert_eq!((dlls[1].major, dlls[1].cuda_major), (Some(9), Some(12)));
    assert!(copies.iter().any(|c| c.kind == CudnnKind::Header && c.version.is_some_and(|v| v.major == 9)));
}

#[test]
fn macos_is_unsupported() {
    let f = Fixture::new(Platform { os: OsFamily::Macos, arch: "aarch64".into() });
    assert!(matches!(run(f, None, &[]).0, Probed::Unsupported { .. }));
}

#[test]
fn library_file_names_give_versions_only_when_complete() {
    let v = |n: &str| version_from_file_name(n, "libcudnn.so.");
    assert_eq!(v("libcudnn.so.9.1.0").0.unwrap().to_string(), "9.1.0");
    assert_eq!(v("libcudnn.so.9"), (None, Some(9)));
    assert_eq!(v("libcudnn.so"), (None, None));
    assert_eq!(v("libcudnn.so.9.x.0"), (None, Some(9)));
}
