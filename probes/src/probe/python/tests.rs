//! Scenario tests over machines built in code.

use std::path::PathBuf;

use super::*;
use crate::host::{CmdOutput, CommandRecord, Fixture, HostError, ReplayHost, SystemHost};
use gpu_doctor_model::{EnvKind, Framework, FrameworkBuild, OsFamily, Platform, PythonEnv, UnusedPython};

fn machine(os: OsFamily) -> Fixture {
    let mut f = Fixture::new(Platform { os, arch: "x86_64".into() });
    let home = if os == OsFamily::Windows { ("USERPROFILE", "C:/Users/u") } else { ("HOME", "/home/u") };
    f.env.insert(home.0.into(), home.1.into());
    f
}

fn file(f: &mut Fixture, path: &str, text: &str) {
    f.files.insert(path.into(), text.into());
}

fn dist(f: &mut Fixture, sp: &str, folder: &str, name: &str, version: &str) {
    file(
        f,
        &format!("{sp}/{folder}/METADATA"),
        &format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nbody"),
    );
}

fn probe_with(f: Fixture, opts: &Options) -> (Probed<Vec<PythonEnv>>, Vec<gpu_doctor_model::TraceEntry>) {
    let host = ReplayHost::new(f);
    let mut trace = Trace::new("python");
    let (r, _unused) = probe(&host, opts, &mut trace);
    (r, trace.into_entries())
}

fn envs(f: Fixture, opts: &Options) -> Vec<PythonEnv> {
    let (r, trace) = probe_with(f, opts);
    match r {
        Probed::Found { value, .. } => value,
        other => panic!("expected environments, got {other:?}\ntrace: {trace:#?}"),
    }
}

fn fw<'a>(env: &'a PythonEnv, name: &str) -> &'a Framework {
    env.frameworks.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("no {name} in {:?}", env.frameworks))
}

const VENV: &str = "/home/u/proj/.venv";
const VENV_SP: &str = "/home/u/proj/.venv/lib/python3.11/site-packages";

/// A venv with a CUDA 12.1 torch and two nvidia wheels, active and on PATH.
fn venv_machine() -> Fixture {
    let mut f = machine(OsFamily::Linux);
    f.env.insert("VIRTUAL_ENV".into(), VENV.into());
    f.env.insert("PATH".into(), format!("{VENV}/bin"));
    file(
        &mut f,
        &format!("{VENV}/pyvenv.cfg"),
        "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.4\n",
    );
    f.links.insert(format!("{VENV}/bin/python3"), "/usr/bin/python3.11".into());
    f.links.insert(format!("{VENV}/bin/python"), "python3".into());
    file(&mut f, "/usr/bin/python3.11", "");
    dist(&mut f, VENV_SP, "torch-2.3.0+cu121.dist-info", "torch", "2.3.0+cu121");
    file(
        &mut f,
        &format!("{VENV_SP}/torch/version.py"),
        "from typing import Optional\n__version__ = '2.3.0+cu121'\ndebug = False\ncuda: Optional[str] = '12.1'\ngit_version = 'abc'\nhip: Optional[str] = None\n",
    );
    dist(&mut f, VENV_SP, "nvidia_cudnn_cu12-9.1.0.70.dist-info", "nvidia-cudnn-cu12", "9.1.0.70");
    dist(&mut f, VENV_SP, "nvidia_cuda_runtime_cu12-12.1.105.dist-info", "nvidia-cuda-runtime-cu12", "12.1.105");
    dist(&mut f, VENV_SP, "numpy-1.26.4.dist-info", "numpy", "1.26.4");
    f
}

#[test]
fn a_venv_with_cuda_torch_and_wheels() {
    let found = envs(venv_machine(), &Options::default());
    assert_eq!(found.len(), 1, "{found:#?}");
    let env = &found[0];
    assert_eq!(env.name, format!("venv:{VENV}"));
    assert_eq!(env.kind, EnvKind::Venv);
    assert_eq!(env.prefix, VENV);
    assert_eq!(env.python_version.as_deref(), Some("3.11.4"));
    assert_eq!(env.site_packages, vec![VENV_SP.to_owned()]);
    assert!(!env.include_system_site_packages);
    assert_eq!(env.found_by, vec!["VIRTUAL_ENV".to_owned(), "PATH".to_owned()]);
    let torch = fw(env, "torch");
    assert_eq!(torch.version, "2.3.0+cu121");
    assert_eq!(torch.build, FrameworkBuild::Cuda { version: Some("12.1".into()) });
    assert_eq!(torch.build.cuda_version(), Some("12.1"));
    assert!(torch.source.contains("torch/version.py"), "{}", torch.source);
    assert_eq!(env.frameworks.len(), 1);
    let wheels: Vec<(&str, &str)> = env.cuda_wheels.iter().map(|p| (p.name.as_str(), p.version.as_str())).collect();
    assert_eq!(wheels, vec![("nvidia-cuda-runtime-cu12", "12.1.105"), ("nvidia-cudnn-cu12", "9.1.0.70")]);
    assert!(env.deep.is_none());
    let sp = site_packages(&found);
    assert_eq!(sp.len(), 1);
    assert_eq!(sp[0].path, PathBuf::from(VENV_SP));
}

#[test]
fn companions_are_recorded_by_canonical_name_without_starting_python() {
    let mut f = venv_machine();
    // Folder names as the wheels write them: underscores, egg-info, a name the METADATA spells otherwise.
    dist(&mut f, VENV_SP, "flash_attn-2.6.3.dist-info", "flash_attn", "2.6.3");
    dist(&mut f, VENV_SP, "torchvision-0.18.0+cu121.dist-info", "torchvision", "0.18.0+cu121");
    dist(&mut f, VENV_SP, "tf_keras-2.17.0.dist-info", "tf_keras", "2.17.0");
    dist(&mut f, VENV_SP, "pytorch_triton-3.0.0+dedb7bdf33.dist-info", "pytorch-triton", "3.0.0+dedb7bdf33");
    dist(&mut f, VENV_SP, "onnxruntime_gpu-1.18.0.dist-info", "onnxruntime-gpu", "1.18.0");
    dist(&mut f, VENV_SP, "requests-2.32.3.dist-info", "requests", "2.32.3");
    let found = envs(f, &Options::default());
    let env = &found[0];
    let companions: Vec<(&str, &str)> = env.companions.iter().map(|p| (p.name.as_str(), p.version.as_str())).collect();
    assert_eq!(
        companions,
        [
            ("flash-attn", "2.6.3"),
            ("numpy", "1.26.4"),
            ("pytorch-triton", "3.0.0+dedb7bdf33"),
            ("tf-keras", "2.17.0"),
            ("torchvision", "0.18.0+cu121")
        ]
    );
    // onnxruntime-gpu stays a framework, and nothing else is listed.
    assert_eq!(fw(env, "onnxruntime-gpu").version, "1.18.0");
    assert!(env.companions.iter().chain(&env.cuda_wheels).all(|p| p.name != "requests" && p.name != "torch"));
}

#[test]
fn b_cpu_only_torch_in_the_system_python() {
    let mut f = machine(OsFamily::Linux);
    f.env.insert("PATH".into(), "/usr/bin".into());
    f.links.insert("/usr/bin/python3".into(), "python3.11".into());
    file(&mut f, "/usr/bin/python3.11", "");
    let sp = "/usr/local/lib/python3.11/dist-packages";
    dist(&mut f, sp, "torch-2.3.0+cpu.dist-info", "torch", "2.3.0+cpu");
    file(&mut f, &format!("{sp}/torch/version.py"), "__version__ = '2.3.0+cpu'\ncuda = None\nhip = None\n");
    file(
        &mut f,
        "/usr/lib/python3/dist-packages/cupy-13.0.0-py3.11.egg-info/PKG-INFO",
        "Name: cupy\nVersion: 13.0.0\n",
    );
    file(&mut f, "/usr/lib/python3.11/os.py", "");
    let found = envs(f, &Options::default());
    assert_eq!(found.len(), 1, "{found:#?}");
    let env = &found[0];
    assert_eq!(env.name, "system:/usr/bin/python3");
    assert_eq!(env.kind, EnvKind::System);
    assert_eq!(env.prefix, "/usr");
    assert_eq!(env.python_version.as_deref(), Some("3.11"));
    assert_eq!(env.site_packages, vec!["/usr/lib/python3/dist-packages".to_owned(), sp.to_owned()]);
    assert_eq!(fw(env, "torch").build, FrameworkBuild::Cpu);
    let cupy = fw(env, "cupy");
    assert_eq!(
        (cupy.version.as_str(), &cupy.build, cupy.source.as_str()),
        ("13.0.0", &FrameworkBuild::Unknown, "egg-info PKG-INFO")
    );
}

#[test]
fn c_conda_base_and_an_env_from_environments_txt() {
    let mut f = machine(OsFamily::Linux);
    let base = "/home/u/miniconda3";
    f.env.insert("CONDA_PREFIX".into(), base.into());
    file(&mut f, &format!("{base}/conda-meta/python-3.11.5-h955ad1f_0.json"), "{}");
    file(&mut f, &format!("{base}/conda-meta/python-dateutil-2.8.2-pyhd3eb1b0_0.json"), "{}");
    file(&mut f, &format!("{base}/bin/python3.11"), "");
    f.links.insert(format!("{base}/bin/python3"), "python3.11".into());
    file(&mut f, &format!("{base}/condabin/conda"), "");
    let bsp = format!("{base}/lib/python3.11/site-packages");
    dist(&mut f, &bsp, "jax-0.4.30.dist-info", "jax", "0.4.30");
    dist(&mut f, &bsp, "jaxlib-0.4.30.dist-info", "jaxlib", "0.4.30");
    dist(&mut f, &bsp, "jax_cuda12_plugin-0.4.30.dist-info", "jax-cuda12-plugin", "0.4.30");
    dist(&mut f, &bsp, "jax_cuda12_pjrt-0.4.30.dist-info", "jax-cuda12-pjrt", "0.4.30");
    let tf = "/data/envs/tf";
    file(&mut f, "/home/u/.conda/environments.txt", &format!("{base}\n{tf}\n"));
    file(&mut f, &format!("{tf}/conda-meta/python-3.10.13-h1.json"), "{}");
    file(&mut f, &format!("{tf}/bin/python"), "");
    let tsp = format!("{tf}/lib/python3.10/site-packages");
    dist(&mut f, &tsp, "tensorflow-2.15.0.dist-info", "tensorflow", "2.15.0");
    file(
        &mut f,
        &format!("{tsp}/tensorflow/python/platform/build_info.py"),
        "build_info = {'cpu_compiler': '/usr/bin/gcc', 'cuda_compute_capabilities': ['sm_50', 'sm_90'], 'cuda_version': '12.3', 'cudnn_version': '8', 'is_cuda_build': True, 'is_rocm_build': False, 'is_tensorrt_build': True}\n",
    );
    let found = envs(f, &Options::default());
    let names: Vec<&str> = found.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, vec!["conda:base", "conda:tf"]);
    let (b, t) = (&found[0], &found[1]);
    assert_eq!(b.kind, EnvKind::Conda);
    assert_eq!(b.python_version.as_deref(), Some("3.11.5"));
    assert_eq!(
        b.found_by,
        vec!["CONDA_PREFIX".to_owned(), "~/.conda/environments.txt".to_owned(), "conda root".to_owned()]
    );
    assert_eq!(fw(b, "jax").build, FrameworkBuild::Cuda { version: Some("12".into()) });
    assert_eq!(fw(b, "jax-cuda12-plugin").build.cuda_version(), Some("12"));
    assert_eq!(fw(b, "jax-cuda12-pjrt").build.cuda_version(), Some("12"));
    assert_eq!(t.python_version.as_deref(), Some("3.10.13"));
    assert_eq!(t.interpreter.as_deref(), Some("/data/envs/tf/bin/python"));
    let tensorflow = fw(t, "tensorflow");
    assert_eq!(tensorflow.build, FrameworkBuild::Cuda { version: Some("12.3".into()) });
    assert_eq!(tensorflow.cudnn_build.as_deref(), Some("8"));
}

#[test]
fn d_no_python_anywhere_is_absent_with_where_it_looked() {
    let mut f = machine(OsFamily::Linux);
    f.env.insert("PATH".into(), "/usr/bin:/bin".into());
    file(&mut f, "/usr/bin/ls", "");
    let opts = Options { cwd: Some("/home/u/proj".into()), ..Options::default() };
    let (r, trace) = probe_with(f, &opts);
    let Probed::Absent { reason } = r else { panic!("expected Absent, got {r:?}") };
    for place in ["PATH", "environments.txt", "/opt/conda", ".pyenv", ".venv", "VIRTUAL_ENV"] {
        assert!(reason.contains(place), "{place} missing from {reason}");
    }
    assert!(!trace.is_empty());
}

fn json_output(stdout: &str, stderr: &str, status: i32) -> Option<CmdOutput> {
    Some(CmdOutput { status: Some(status), stdout: stdout.into(), stderr: stderr.into() })
}

fn deep_argv() -> Vec<String> {
    vec![format!("{VENV}/bin/python3"), "-I".into(), "-".into()]
}

#[test]
fn e_deep_tier_parses_probe_json() {
    let mut f = venv_machine();
    let stdout = r#"{"probe_version": 1, "python": {"version": "3.11.4", "executable": "/home/u/proj/.venv/bin/python3"},
        "torch": {"version": "2.3.0+cu121", "cuda": "12.1", "hip": null, "cudnn_version": 8902, "cuda_available": true,
        "device_count": 1, "arch_list": ["sm_80", "sm_90"], "devices": [{"index": 0, "name": "NVIDIA H100", "capability": "9.0",
        "total_memory_bytes": 85000000000}], "something_new": [1, 2]}, "future_framework": {}}"#;
    f.commands.push(CommandRecord {
        argv: deep_argv(),
        output: json_output(&format!("{}\n", stdout.replace('\n', " ")), "", 0),
        error: None,
    });
    let found = envs(f, &Options { deep: true, ..Options::default() });
    let deep = found[0].deep.as_ref().and_then(Probed::value).expect("deep facts");
    assert_eq!(deep.python.as_ref().and_then(|p| p.version.as_deref()), Some("3.11.4"));
    let torch = deep.torch.as_ref().expect("torch");
    assert_eq!(torch.cuda.as_deref(), Some("12.1"));
    assert_eq!(torch.cuda_available, Some(true));
    assert_eq!(torch.arch_list.as_deref(), Some(&["sm_80".to_owned(), "sm_90".to_owned()][..]));
    let dev = &torch.devices.as_ref().expect("devices")[0];
    assert_eq!((dev.name.as_deref(), dev.capability.as_deref()), (Some("NVIDIA H100"), Some("9.0")));
    assert!(deep.tensorflow.is_none());
}

#[test]
fn e_deep_tier_garbage_timeouts_and_crashes_fail_without_panicking() {
    let cases: Vec<(Option<CmdOutput>, Option<HostError>, &str)> = vec![
        (
            json_output("Illegal instruction\n", "Fatal Python error: Segmentation fault\nline2", 139),
            None,
            "Segmentation fault",
        ),
        (json_output("", "", 0), None, "not probe.py's JSON"),
        (json_output(r#"{"torch": {"device_count": "many"}}"#, "", 0), None, "not probe.py's JSON"),
        (None, Some(HostError::Timeout { after_ms: 60_000, what: "python3".into() }), "timed out"),
    ];
    for (output, error, needle) in cases {
        let mut f = venv_machine();
        f.commands.push(CommandRecord { argv: deep_argv(), output, error });
        let found = envs(f, &Options { deep: true, ..Options::default() });
        match found[0].deep.as_ref() {
            Some(Probed::Failed { error }) => assert!(error.contains(needle), "{needle} not in {error}"),
            other => panic!("expected Failed, got {other:?}"),
        }
    }
    // Not recorded at all: a loud failure, still no panic.
    let found = envs(venv_machine(), &Options { deep: true, ..Options::default() });
    assert!(matches!(found[0].deep, Some(Probed::Failed { .. })));
}

#[test]
fn f_two_path_symlinks_to_one_interpreter_are_one_env() {
    let mut f = machine(OsFamily::Linux);
    f.env.insert("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into());
    f.links.insert("/bin".into(), "usr/bin".into());
    f.links.insert("/usr/local/bin/python3".into(), "/usr/bin/python3.11".into());
    f.links.insert("/usr/bin/python3".into(), "python3.11".into());
    f.links.insert("/usr/bin/python".into(), "python3".into());
    file(&mut f, "/usr/bin/python3.11", "");
    file(&mut f, "/usr/lib/python3/dist-packages/six.py", "");
    let found = envs(f, &Options::default());
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].name, "system:/usr/local/bin/python3");
    assert_eq!(found[0].found_by, vec!["PATH".to_owned()]);
    assert_eq!(found[0].python_version.as_deref(), Some("3.11"));
}

#[test]
fn pyenv_cwd_venv_extra_python_and_conda_env_list() {
    let mut f = machine(OsFamily::Linux);
    f.env.insert("PATH".into(), "/home/u/.pyenv/shims:/opt/tools/bin".into());
    file(&mut f, "/home/u/.pyenv/shims/python3", "#!/bin/sh");
    file(&mut f, "/home/u/.pyenv/versions/3.12.1/bin/python3.12", "");
    f.links.insert("/home/u/.pyenv/versions/3.12.1/bin/python3".into(), "python3.12".into());
    file(&mut f, "/home/u/.pyenv/versions/3.12.1/lib/python3.12/site-packages/pip.py", "");
    file(&mut f, "/work/.venv/pyvenv.cfg", "version_info = 3.12.1.final.0\ninclude-system-site-packages = true\n");
    file(&mut f, "/work/.venv/bin/python", "");
    file(&mut f, "/srv/py/bin/python3.13", "");
    file(&mut f, "/opt/tools/bin/conda", "");
    file(&mut f, "/srv/ml/conda-meta/python-3.12.2-h.json", "{}");
    file(&mut f, "/srv/ml/bin/python", "");
    f.commands.push(CommandRecord {
        argv: vec!["/opt/tools/bin/conda".into(), "env".into(), "list".into(), "--json".into()],
        output: json_output(r#"{"envs": ["/srv/ml", "/nowhere"]}"#, "", 0),
        error: None,
    });
    let opts = Options { cwd: Some("/work".into()), extra_pythons: vec!["/srv/py/bin/python3.13".into()], deep: false };
    let found = envs(f, &opts);
    let names: Vec<&str> = found.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, vec!["venv:/work/.venv", "system:/srv/py/bin/python3.13", "conda:/srv/ml", "pyenv:3.12.1"]);
    assert!(found[0].include_system_site_packages);
    assert_eq!(found[0].python_version.as_deref(), Some("3.12.1"));
    assert_eq!(found[1].python_version.as_deref(), Some("3.13"));
    assert_eq!(found[3].kind, EnvKind::Pyenv);
    assert_eq!(found[3].python_version.as_deref(), Some("3.12.1"));
    assert_eq!(found[3].site_packages, vec!["/home/u/.pyenv/versions/3.12.1/lib/python3.12/site-packages".to_owned()]);
}

#[test]
fn each_named_path_is_found_or_unused_with_its_reason() {
    let mut f = machine(OsFamily::Linux);
    file(&mut f, "/srv/py/bin/python3.13", "");
    f.links.insert("/home/u/bin/py".into(), "/srv/py/bin/python3.13".into());
    file(&mut f, "/home/u/notes.txt", "not a program");
    file(&mut f, "/srv/empty/README", "");
    let named = ["/srv/py/bin/python3.13", "/home/u/bin/py", "/nowhere/bin/python3", "/home/u/notes.txt", "/srv/empty"];
    let opts = Options { extra_pythons: named.iter().map(PathBuf::from).collect(), ..Options::default() };
    let host = ReplayHost::new(f);
    let mut trace = Trace::new("python");
    let (envs, unused) = probe(&host, &opts, &mut trace);

    let found = envs.value().expect("the good interpreter is found");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].found_by, vec!["--python".to_owned()]);
    let unused_pair = |path: &str, reason: &str| UnusedPython { path: path.into(), reason: reason.into() };
    assert_eq!(
        unused,
        vec![
            unused_pair("/nowhere/bin/python3", "/nowhere/bin/python3 does not exist"),
            unused_pair(
                "/home/u/notes.txt",
                "/home/u/notes.txt is not a Python interpreter (its name has neither python nor pypy in it)"
            ),
            unused_pair("/srv/empty", "no Python interpreter in /srv/empty"),
        ]
    );
    // The trace still says the same, for people.
    let misses: Vec<String> = trace
        .into_entries()
        .into_iter()
        .filter(|t| t.method == "--python" && t.outcome != gpu_doctor_model::Outcome::Ok)
        .map(|t| t.detail)
        .collect();
    assert_eq!(misses, unused.iter().map(|u| u.reason.clone()).collect::<Vec<_>>());
}

#[test]
fn the_snapshot_carries_unused_pythons_and_writes_them_only_when_there_are_some() {
    let f = machine(OsFamily::Linux);
    let named = Options { extra_pythons: vec!["/nowhere/python3".into()], ..Options::default() };
    let snap = crate::probe::collect(&ReplayHost::new(f.clone()), &named);
    let missing = UnusedPython { path: "/nowhere/python3".into(), reason: "/nowhere/python3 does not exist".into() };
    assert_eq!(snap.unused_pythons, vec![missing]);
    let json = serde_json::to_value(&snap).unwrap();
    assert_eq!(json["unused_pythons"][0]["path"], "/nowhere/python3");
    let back: gpu_doctor_model::Snapshot = serde_json::from_value(json).unwrap();
    assert_eq!(back.unused_pythons, snap.unused_pythons);
    let plain = crate::probe::collect(&ReplayHost::new(f), &Options::default());
    assert!(serde_json::to_value(&plain).unwrap().get("unused_pythons").is_none());
}

#[test]
fn windows_python_org_install_and_conda() {
    let mut f = machine(OsFamily::Windows);
    f.env.insert("LOCALAPPDATA".into(), "C:/Users/u/AppData/Local".into());
    f.env.insert("PATH".into(), "C:/Users/u/AppData/Local/Microsoft/WindowsApps;C:/Windows".into());
    file(&mut f, "C:/Users/u/AppData/Local/Microsoft/WindowsApps/python.exe", "");
    let py = "C:/Users/u/AppData/Local/Programs/Python/Python311";
    file(&mut f, &format!("{py}/python.exe"), "");
    dist(&mut f, &format!("{py}/Lib/site-packages"), "torch-2.3.0+cu121.dist-info", "torch", "2.3.0+cu121");
    let conda = "C:/Users/u/miniconda3";
    file(&mut f, &format!("{conda}/python.exe"), "");
    file(&mut f, &format!("{conda}/conda-meta/python-3.12.4-h.json"), "{}");
    file(&mut f, &format!("{conda}/envs/ml/python.exe"), "");
    file(&mut f, &format!("{conda}/envs/ml/conda-meta/python-3.10.1-h.json"), "{}");
    dist(
        &mut f,
        &format!("{conda}/envs/ml/Lib/site-packages"),
        "cupy_cuda12x-13.1.0.dist-info",
        "cupy-cuda12x",
        "13.1.0",
    );
    let found = envs(f, &Options::default());
    let names: Vec<&str> = found.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, vec!["conda:base", "conda:ml", &format!("system:{py}/python.exe")]);
    let torch = fw(&found[2], "torch");
    assert_eq!(torch.build.cuda_version(), Some("12.1"), "from the +cu121 tag");
    assert_eq!(found[2].python_version.as_deref(), Some("3.11"));
    assert_eq!(fw(&found[1], "cupy-cuda12x").build.cuda_version(), Some("12"));
}

#[test]
fn probe_py_runs_in_this_machines_python() {
    let host = SystemHost::new();
    let Some(python) = crate::host::which(&host, "python3") else {
        println!("skipped: no python3 on PATH");
        return;
    };
    let mut trace = Trace::new("python");
    let r = deep::run_one(&host, &python.to_string_lossy(), &mut trace);
    let facts = r.value().unwrap_or_else(|| panic!("probe.py failed: {r:?}"));
    let version = facts.python.as_ref().and_then(|p| p.version.clone()).expect("a python version");
    assert!(version.starts_with('3'), "{version}");
    // The whole probe must not panic on a real machine either.
    let _ = probe(&host, &Options::default(), &mut trace);
}

#[test]
fn e_deep_probe_of_one_environment_on_demand() {
    let mut f = venv_machine();
    let stdout =
        r#"{"probe_version": 1, "torch": {"version": "2.3.0+cu121", "cuda_available": false, "arch_list": ["sm_86"]}}"#;
    f.commands.push(CommandRecord { argv: deep_argv(), output: json_output(stdout, "", 0), error: None });
    let host = ReplayHost::new(f.clone());
    let found = envs(f, &Options::default());
    let venv = found.iter().find(|e| e.prefix == VENV).expect("the venv");
    assert!(venv.deep.is_none(), "the fast tier leaves the deep facts out");
    let mut trace = Trace::new("python");
    let deep = deep_probe(&host, venv, &mut trace);
    let torch = deep.value().and_then(|d| d.torch.as_ref()).expect("torch facts");
    assert_eq!(torch.cuda_available, Some(false));
    assert!(trace.into_entries().iter().any(|e| e.method.contains("probe.py")));

    let mut without = venv.clone();
    without.interpreter = None;
    assert!(matches!(deep_probe(&host, &without, &mut Trace::new("python")), Probed::Absent { .. }));
    without.interpreter = venv.interpreter.clone();
    without.python_version = Some("2.7.18".into());
    assert!(matches!(deep_probe(&host, &without, &mut Trace::new("python")), Probed::Unsupported { .. }));
}

/// The deep tier would run `.venv/bin/python` of the working folder: in a checkout someone else
/// made, that is their code. It runs only when the user names the environment with `--python`.
#[test]
fn deep_tier_leaves_a_venv_inside_the_working_folder_alone_unless_named() {
    let torch = r#"{"probe_version": 1, "torch": {"version": "2.3.0+cu121", "cuda": "12.1"}}"#;
    let with_answer = || {
        let mut f = venv_machine();
        f.commands.push(CommandRecord { argv: deep_argv(), output: json_output(torch, "", 0), error: None });
        f
    };
    let in_proj = Options { deep: true, cwd: Some("/home/u/proj".into()), ..Options::default() };
    let found = envs(with_answer(), &in_proj);
    let venv = found.iter().find(|e| e.prefix == VENV).expect("the venv is still found and read");
    assert_eq!(fw(venv, "torch").version, "2.3.0+cu121", "the fast tier still reads its files");
    match &venv.deep {
        Some(Probed::Unsupported { reason }) => {
            assert!(reason.contains("working folder") && reason.contains("--python"), "{reason}");
        }
        other => panic!("the working folder's venv must not be run, got {other:?}"),
    }

    let named = Options { extra_pythons: vec![VENV.into()], ..in_proj.clone() };
    let found = envs(with_answer(), &named);
    let venv = found.iter().find(|e| e.prefix == VENV).expect("venv");
    assert!(matches!(venv.deep, Some(Probed::Found { .. })), "named with --python, it runs: {:?}", venv.deep);

    // Started from the home folder, every environment of the user's is below it: not a checkout.
    let from_home = Options { cwd: Some("/home/u".into()), ..in_proj };
    let found = envs(with_answer(), &from_home);
    assert!(matches!(found[0].deep, Some(Probed::Found { .. })), "{:?}", found[0].deep);
}
