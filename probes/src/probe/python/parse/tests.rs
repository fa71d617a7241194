use proptest::prelude::*;

use super::*;

#[test]
fn torch_version_py_covers_cuda_cpu_rocm_and_annotations() {
    let cuda = "__version__ = '2.3.0+cu121'\ndebug = False\ncuda: Optional[str] = '12.1'\ngit_version = 'abc'\nhip: Optional[str] = None\n";
    let v = parse_torch_version_py(cuda).unwrap();
    assert_eq!(v.version.as_deref(), Some("2.3.0+cu121"));
    assert_eq!(v.cuda, Some(Some("12.1".into())));
    assert_eq!(v.hip, Some(None));
    assert_eq!(v.git_version.as_deref(), Some("abc"));
    let cpu = parse_torch_version_py("__version__ = \"2.3.0+cpu\"\ncuda = None\n").unwrap();
    assert_eq!(cpu.cuda, Some(None));
    assert_eq!(parse_torch_version_py(""), None);
    assert_eq!(parse_torch_version_py("cuda == '12'\n  __version__ = '1'\n"), None);
    assert_eq!(parse_torch_version_py("__version__ = '2.1\n").unwrap().version.as_deref(), Some("2.1"));
}

#[test]
fn tf_build_info_dict_and_old_assignments() {
    let text = "import collections\nbuild_info = collections.OrderedDict({'cpu_compiler': '/usr/bin/gcc', \
                'cuda_compute_capabilities': ['sm_50', 'sm_80'], 'cuda_version': '12.3', 'cudnn_version': '8', \
                'is_cuda_build': True, 'is_rocm_build': False, 'msvcp_dll_names': None})\n";
    let b = parse_tf_build_info(text).unwrap();
    assert_eq!(b["cuda_version"], PyValue::Str("12.3".into()));
    assert_eq!(b["cudnn_version"], PyValue::Str("8".into()));
    assert_eq!(b["is_cuda_build"], PyValue::Bool(true));
    assert_eq!(b["is_rocm_build"], PyValue::Bool(false));
    assert_eq!(b["msvcp_dll_names"], PyValue::None);
    assert!(matches!(b["cuda_compute_capabilities"], PyValue::Other(_)));
    let old = parse_tf_build_info("is_cuda_build = True\ncuda_version_number = '10.1'\n").unwrap();
    assert_eq!(old["cuda_version"], PyValue::Str("10.1".into()));
    assert_eq!(parse_tf_build_info(""), None);
    assert_eq!(parse_tf_build_info("build_info = {"), None);
    assert_eq!(parse_tf_build_info("build_info = {'a': 'b"), Some([("a".into(), PyValue::Str("b".into()))].into()));
    assert_eq!(parse_tf_build_info("build_info = {'unterminated"), None);
}

#[test]
fn pyvenv_cfg_and_python_versions() {
    let cfg = parse_pyvenv_cfg("home = /usr/bin\ninclude-system-site-packages = true\nversion = 3.11.4\n");
    assert_eq!(cfg.version.as_deref(), Some("3.11.4"));
    assert!(cfg.include_system_site_packages);
    assert_eq!(cfg.home.as_deref(), Some("/usr/bin"));
    let uv = parse_pyvenv_cfg("version_info = 3.12.1.final.0\ninclude-system-site-packages = false\n");
    assert_eq!(uv.version.as_deref(), Some("3.12.1"));
    assert!(!uv.include_system_site_packages);
    assert_eq!(parse_pyvenv_cfg("version = banana").version, None);
    assert_eq!(python_version_prefix("3.12.0rc1"), Some("3.12.0".into()));
    assert_eq!(python_version_prefix("3"), None);
    assert_eq!(conda_meta_python("python-3.11.9-h955ad1f_0.json"), Some("3.11.9".into()));
    assert_eq!(conda_meta_python("python-dateutil-2.8.2-pyhd3eb1b0_0.json"), None);
    assert_eq!(conda_meta_python("python_abi-3.11-4_cp311.json"), None);
    assert_eq!(version_from_name("python3.11"), Some("3.11".into()));
    assert_eq!(version_from_name("python3.13t"), Some("3.13".into()));
    assert_eq!(version_from_name("Python311"), Some("3.11".into()));
    assert_eq!(version_from_name("python3"), None);
    assert_eq!(version_from_name("python3.x"), None);
    assert_eq!(version_from_name("python"), None);
}

#[test]
fn conda_lists_and_cu_tags() {
    assert_eq!(parse_environments_txt("/a\n\n  /b  \n# c\n"), vec!["/a".to_owned(), "/b".to_owned()]);
    assert_eq!(parse_conda_env_list(r#"{"envs": ["/opt/conda", "/opt/conda/envs/t"]}"#).unwrap().len(), 2);
    assert!(parse_conda_env_list("EnvironmentLocationNotFound").is_err());
    assert!(parse_conda_env_list(r#"{"envs": 3}"#).is_err());
}

proptest! {
    #[test]
    fn parsers_never_panic(text in "\\PC*") {
        let _ = parse_torch_version_py(&text);
        let _ = parse_tf_build_info(&text);
        let _ = parse_pyvenv_cfg(&text);
        let _ = python_version_prefix(&text);
        let _ = conda_meta_python(&text);
        let _ = version_from_name(&text);
        let _ = parse_environments_txt(&text);
        let _ = parse_conda_env_list(&text);
    }

    #[test]
    fn python_shaped_text_never_panics(
        lines in proptest::collection::vec("[a-z_{}:'\"=, \\[\\]()#TrueFalsNon0-9.+-]{0,40}", 0..12)
    ) {
        let text = lines.join("\n");
        let _ = parse_torch_version_py(&text);
        let _ = parse_tf_build_info(&format!("build_info = {{{text}"));
        let _ = parse_assignments(&text);
    }
}
