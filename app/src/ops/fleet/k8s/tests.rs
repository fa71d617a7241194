#![allow(clippy::unwrap_used)]

use gpu_doctor_probes::host::{CmdOutput, HostError};

use super::*;
use crate::ops::fleet::tests::report_json;

/// `kubectl get pods -o json` as recorded: a report on gpu-a, a container that found no
/// gpu-doctor on gpu-b (exit 127), a pod not scheduled, a running pod with no output yet on gpu-c.
const PODS: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/kubectl-get-pods.json"));

fn plan(kind: Kind) -> ManifestPlan {
    ManifestPlan {
        kind,
        image: "registry.example/gpu-doctor:0.4".into(),
        namespace: "gpu-doctor".into(),
        count: None,
        gpu_request: 0,
    }
}

#[test]
fn the_daemonset_selects_gpu_nodes_tolerates_their_taint_and_sleeps_after_the_report() {
    let yaml = manifest(&plan(Kind::Daemonset)).unwrap();
    for line in [
        "apiVersion: apps/v1",
        "kind: DaemonSet",
        "  namespace: \"gpu-doctor\"",
        "        nvidia.com/gpu.present: \"true\"",
        "        - key: nvidia.com/gpu",
        "          image: \"registry.example/gpu-doctor:0.4\"",
        "          command: [\"sh\", \"-c\", \"gpu-doctor report --format json; while :; do sleep 3600; done\"]",
    ] {
        assert!(yaml.lines().any(|l| l == line), "{line:?} not in\n{yaml}");
    }
    assert!(!yaml.contains("nvidia.com/gpu: "), "no GPU is taken from the scheduler by default");
    assert!(!yaml.contains("restartPolicy"), "a DaemonSet's pods restart always");
}

#[test]
fn a_job_needs_a_count_and_spreads_its_pods_one_per_node() {
    assert!(manifest(&plan(Kind::Job)).unwrap_err().to_string().contains("--count"));
    let yaml = manifest(&ManifestPlan { count: Some(8), gpu_request: 1, ..plan(Kind::Job) }).unwrap();
    for line in [
        "apiVersion: batch/v1",
        "kind: Job",
        "  completions: 8",
        "  parallelism: 8",
        "      restartPolicy: Never",
        "            - topologyKey: kubernetes.io/hostname",
        "              nvidia.com/gpu: 1",
        "          command: [\"sh\", \"-c\", \"gpu-doctor report --format json\"]",
    ] {
        assert!(yaml.lines().any(|l| l == line), "{line:?} not in\n{yaml}");
    }
}

#[test]
fn names_that_would_break_the_yaml_are_refused_or_quoted() {
    assert!(manifest(&ManifestPlan { namespace: "a\nkind: Secret".into(), ..plan(Kind::Daemonset) }).is_err());
    assert!(manifest(&ManifestPlan { namespace: "Upper".into(), ..plan(Kind::Daemonset) }).is_err());
    assert!(manifest(&ManifestPlan { image: "x\ny".into(), ..plan(Kind::Daemonset) }).is_err());
    let yaml = manifest(&ManifestPlan { image: "reg:5000/a\"b: #c".into(), ..plan(Kind::Daemonset) }).unwrap();
    assert!(yaml.contains("          image: \"reg:5000/a\\\"b: #c\"\n"), "{yaml}");
}

#[test]
fn recorded_pods_read_with_their_nodes_phases_and_exit_codes() {
    let pods = pods(PODS).unwrap();
    let summary: Vec<(Option<&str>, &str, &str, Option<i64>)> =
        pods.iter().map(|p| (p.node.as_deref(), p.name.as_str(), p.phase.as_str(), p.exit_code)).collect();
    assert_eq!(
        summary,
        [
            (None, "gpu-doctor-pq8rt", "Pending", None),
            (Some("gpu-a"), "gpu-doctor-4mz9q", "Running", None),
            (Some("gpu-b"), "gpu-doctor-x7k2p", "Failed", Some(127)),
            (Some("gpu-c"), "gpu-doctor-c2w5n", "Running", None),
        ]
    );
    assert!(super::pods("{}").is_err());
    assert!(super::pods("not json").is_err());
}

#[test]
fn collect_reads_each_pods_log_into_a_row() {
    let kubectl = |cmd: &Cmd| -> Result<CmdOutput, HostError> {
        let ok = |stdout: String| Ok(CmdOutput { status: Some(0), stdout, stderr: String::new() });
        match cmd.argv.iter().map(String::as_str).collect::<Vec<_>>()[..] {
            ["kubectl", "get", "pods", "--namespace", "gpu-doctor", "--selector", LABEL, "-o", "json"] => {
                ok(PODS.to_owned())
            }
            ["kubectl", "logs", "--namespace", "gpu-doctor", "gpu-doctor-4mz9q", "-c", "gpu-doctor"] => {
                ok(report_json(Some("gpu-a")))
            }
            ["kubectl", "logs", "--namespace", "gpu-doctor", "gpu-doctor-x7k2p", "-c", "gpu-doctor"] => {
                ok("sh: 1: gpu-doctor: not found\n".into())
            }
            ["kubectl", "logs", "--namespace", "gpu-doctor", "gpu-doctor-c2w5n", "-c", "gpu-doctor"] => {
                ok(String::new())
            }
            _ => panic!("unexpected {:?}", cmd.argv),
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let mut folder = Folder::open(dir.path(), "k8s", "t".into(), false).unwrap();
    collect("gpu-doctor", LABEL, &kubectl, &mut folder, &mut |_| {}).unwrap();
    let rows: Vec<(&str, String)> =
        folder.manifest().nodes.iter().map(|n| (n.engine_name.as_str(), n.outcome.describe())).collect();
    assert_eq!(
        rows,
        [
            ("(no node)/gpu-doctor-pq8rt", "unreachable: pod gpu-doctor-pq8rt is Pending and on no node yet".into()),
            ("gpu-a/gpu-doctor-4mz9q", "ok".into()),
            ("gpu-b/gpu-doctor-x7k2p", "no gpu-doctor: sh: 1: gpu-doctor: not found".into()),
            ("gpu-c/gpu-doctor-c2w5n", "failed: pod gpu-doctor-c2w5n (Running) printed no report yet".into()),
        ]
    );
    assert!(dir.path().join("gpu-a.json").exists());
}

#[test]
fn collect_without_pods_or_kubectl_is_an_error() {
    let none = |_: &Cmd| {
        Ok(CmdOutput { status: Some(0), stdout: r#"{"kind":"List","items":[]}"#.into(), stderr: String::new() })
    };
    let dir = tempfile::tempdir().unwrap();
    let mut folder = Folder::open(dir.path(), "k8s", "t".into(), false).unwrap();
    assert!(collect("default", LABEL, &none, &mut folder, &mut |_| {}).unwrap_err().to_string().contains("no pod"));
    let absent = |_: &Cmd| Err(HostError::NotFound { what: "kubectl".into() });
    assert!(collect("default", LABEL, &absent, &mut folder, &mut |_| {}).is_err());
}
