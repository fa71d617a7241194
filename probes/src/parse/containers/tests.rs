//! The container parsers on real captures (`tests/data/containers/`, sources in its `SOURCES.md`), on
//! malformed text, and on arbitrary input.

use super::*;

macro_rules! sample {
    ($name:literal) => {
        include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/containers/", $name))
    };
}

#[test]
fn docker_info_reads_runtimes_default_and_cdi_devices() {
    let info = docker_info(sample!("docker-info-no-nvidia.txt"));
    assert_eq!(info.runtimes, Some(vec!["io.containerd.runc.v2".to_owned(), "runc".to_owned()]));
    assert_eq!(info.default_runtime.as_deref(), Some("runc"));
    assert_eq!(info.cdi_devices.len(), 5);
    assert_eq!(info.cdi_devices[4], "nvidia.com/gpu=all");
}

#[test]
fn docker_info_grep_lines_and_the_nvidia_runtime() {
    let grep = docker_info(sample!("docker-info-grep-runtime.txt"));
    assert_eq!(grep.runtimes.as_deref(), Some(&["io.containerd.runc.v2".to_owned(), "runc".to_owned()][..]));
    let sudo = docker_info(sample!("docker-info-sudo-runtimes.txt"));
    assert!(sudo.runtimes.unwrap().iter().any(|r| r == "nvidia"));
    // The client part alone (the daemon did not answer) has no runtimes line.
    assert_eq!(docker_info("Client: Docker Engine - Community\n Version:    29.1.2\n").runtimes, None);
}

#[test]
fn versions_of_each_program() {
    assert_eq!(first_version("Docker version 24.0.5, build ced0996").as_deref(), Some("24.0.5"));
    assert_eq!(first_version(sample!("nvidia-ctk-version-1.12.0.txt")).as_deref(), Some("1.12.0"));
    assert_eq!(first_version(sample!("nvidia-container-cli-version-1.0.6.txt")).as_deref(), Some("1.0.6"));
    assert_eq!(first_version(sample!("nvidia-container-runtime-version.txt")).as_deref(), Some("1.13.5"));
    assert_eq!(first_version("containerd github.com/containerd/containerd v1.7.2 0cae528").as_deref(), Some("1.7.2"));
    assert_eq!(first_version("no version here"), None);
}

#[test]
fn container_cli_info_reads_driver_cuda_and_devices() {
    let info = container_cli_info(sample!("nvidia-container-cli-info-1060.txt")).unwrap();
    assert_eq!(info.driver_version.as_deref(), Some("435.21"));
    assert_eq!(info.cuda_version.as_deref(), Some("10.1"));
    assert_eq!(info.devices.len(), 1);
    let d = &info.devices[0];
    assert_eq!(d.index, Some(0));
    assert_eq!(d.model.as_deref(), Some("GeForce GTX 1060"));
    assert_eq!(d.uuid.as_deref(), Some("GPU-11e9a5b0-be0f-0466-4daf-34093d62645f"));
    assert_eq!(d.bus_location.as_deref(), Some("00000000:01:00.0"));
}

#[test]
fn container_cli_info_null_values_and_debug_lines() {
    let info = container_cli_info(sample!("nvidia-container-cli-info-xavier.txt")).unwrap();
    assert_eq!(info.driver_version, None);
    assert_eq!(info.cuda_version.as_deref(), Some("10.2"));
    assert_eq!(info.devices[0].uuid, None);
    assert_eq!(info.devices[0].model.as_deref(), Some("Xavier"));
    assert!(container_cli_info("nvidia-container-cli: initialization error: nvml error: driver not loaded").is_err());
}

#[test]
fn daemon_json_runtimes_and_default() {
    let r = daemon_json(sample!("daemon-json-default-nvidia.json")).unwrap();
    assert_eq!(r.names, vec!["nvidia".to_owned()]);
    assert_eq!(r.default.as_deref(), Some("nvidia"));
    let r = daemon_json(sample!("daemon-json-nvidia-ctk-configured.json")).unwrap();
    assert_eq!((r.names.len(), r.default.as_deref()), (1, Some("nvidia")));
    assert_eq!(daemon_json("").unwrap(), Runtimes::default());
    assert_eq!(daemon_json("{\"log-driver\": \"journald\"}").unwrap(), Runtimes::default());
}

#[test]
fn malformed_daemon_json_is_an_error() {
    for text in ["{", "[1, 2]", "{\"runtimes\": [\"nvidia\"]}", "\"nvidia\"", "{\"runtimes\": {\"nvidia\": }}"] {
        assert!(daemon_json(text).is_err(), "{text}");
    }
}

#[test]
fn containerd_drop_in_registers_nvidia_runtimes() {
    let r = containerd_config(sample!("containerd-dropin-nvidia.toml")).unwrap();
    assert_eq!(r.names, vec!["nvidia".to_owned(), "nvidia-cdi".to_owned(), "nvidia-legacy".to_owned()]);
    assert_eq!(r.default, None);
    let v3 = "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.containerd]\n  default_runtime_name = \"runc\"\n";
    assert_eq!(containerd_config(v3).unwrap().default.as_deref(), Some("runc"));
    assert!(containerd_config("[plugins\nversion = ").is_err());
}

#[test]
fn cdi_yaml_as_nvidia_ctk_writes_it() {
    let spec = cdi_spec(sample!("cdi-generate-expected.yaml")).unwrap();
    assert_eq!(spec.kind.as_deref(), Some("example.com/device"));
    assert_eq!(spec.devices, vec!["0".to_owned(), "all".to_owned()]);
    assert_eq!(spec.driver_version.as_deref(), Some("999.88.77"));
}

#[test]
fn cdi_yaml_cut_before_its_devices() {
    let spec = cdi_spec(sample!("cdi-dgx-a100-head.yaml")).unwrap();
    assert_eq!(spec.kind.as_deref(), Some("nvidia.com/gpu"));
    assert!(spec.devices.is_empty());
    assert_eq!(spec.driver_version.as_deref(), Some("460.91.03"));
}

#[test]
fn cdi_yaml_with_items_at_column_zero() {
    // The older `nvidia-ctk` put list items at the key's own indentation and sorted keys, so `name`
    // follows `containerEdits` (see the spec in nvidia-container-toolkit issue 38).
    let text = "cdiVersion: 0.4.0\ndevices:\n- containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n  name: gpu0\n- containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n  name: all\nkind: nvidia.com/gpu\n";
    let spec = cdi_spec(text).unwrap();
    assert_eq!(spec.devices, vec!["gpu0".to_owned(), "all".to_owned()]);
    assert_eq!(spec.kind.as_deref(), Some("nvidia.com/gpu"));
}

#[test]
fn cdi_json_and_a_cut_json_spec() {
    let cut = sample!("cdi-device-plugin-head.json");
    assert!(cdi_spec(cut).is_err());
    // The same spec's head, closed where the thread cut it.
    let head = cut.split("  \"containerEdits\": {\n    \"env\"").next().unwrap().trim_end().trim_end_matches(',');
    let spec = cdi_spec(&format!("{head}\n}}")).unwrap();
    assert_eq!(spec.kind.as_deref(), Some("k8s.device-plugin.nvidia.com/gpu"));
    assert_eq!(spec.devices, vec!["GPU-13f2a0cd-9ac8-a110-68c4-b0e9bd769db1".to_owned()]);
    assert!(cdi_spec("plain text").is_err());
}

#[test]
fn libcuda_versions_from_file_names() {
    assert_eq!(libcuda_version("libcuda.so.535.104.05").as_deref(), Some("535.104.05"));
    assert_eq!(libcuda_version("libcuda.so.1"), None);
    assert_eq!(libcuda_version("libcuda.so.1.1"), None);
    assert_eq!(libcuda_version("libcuda.so"), None);
    assert_eq!(libcuda_version("libcudart.so.12.4.127"), None);
}

proptest::proptest! {
    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,400}") {
        let _ = docker_info(&text);
        let _ = first_version(&text);
        let _ = container_cli_info(&text);
        let _ = daemon_json(&text);
        let _ = containerd_config(&text);
        let _ = cdi_spec(&text);
        let _ = libcuda_version(&text);
    }

    #[test]
    fn near_miss_yaml_never_panics(text in "(devices:|kind:|- name: |  name: |name:|\"|'|-| |\n|#|0|all){0,40}") {
        let _ = cdi_spec(&text);
    }

    #[test]
    fn truncated_samples_never_panic(cut in 0usize..4000) {
        for text in [sample!("cdi-generate-expected.yaml"), sample!("docker-info-no-nvidia.txt"), sample!("containerd-dropin-nvidia.toml"), sample!("daemon-json-default-nvidia.json")] {
            let end = text.char_indices().map(|(i, _)| i).take_while(|i| *i <= cut).last().unwrap_or(0);
            let t = &text[..end];
            let _ = (cdi_spec(t), docker_info(t), containerd_config(t), daemon_json(t));
        }
    }
}
