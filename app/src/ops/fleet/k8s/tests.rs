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
        certify: None,
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

fn collect_plan(namespace: &str) -> CollectPlan {
    CollectPlan { namespace: namespace.into(), selector: LABEL.into(), jobs: 4, timeout: Duration::from_secs(600) }
}

#[test]
fn collect_reads_each_pods_log_into_a_row() {
    let kubectl = |cmd: &Cmd| -> Result<CmdOutput, HostError> {
        let ok = |stdout: String| Ok(CmdOutput { status: Some(0), stdout, stderr: String::new() });
        match cmd.argv.iter().map(String::as_str).collect::<Vec<_>>()[..] {
            ["kubectl", "get", "pods", "--namespace", "gpu-doctor", "--selector", LABEL, "-o", "json"] => {
                ok(PODS.to_owned())
            }
            ["kubectl", "logs", "--namespace", "gpu-doctor", "-c", "gpu-doctor", "--", "gpu-doctor-4mz9q"] => {
                ok(report_json(Some("gpu-a")))
            }
            ["kubectl", "logs", "--namespace", "gpu-doctor", "-c", "gpu-doctor", "--", "gpu-doctor-x7k2p"] => {
                ok("sh: 1: gpu-doctor: not found\n".into())
            }
            ["kubectl", "logs", "--namespace", "gpu-doctor", "-c", "gpu-doctor", "--", "gpu-doctor-c2w5n"] => {
                ok(String::new())
            }
            _ => panic!("unexpected {:?}", cmd.argv),
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let mut folder = Folder::open(dir.path(), "k8s", "t".into(), false).unwrap();
    collect(&collect_plan("gpu-doctor"), &kubectl, &mut folder, &mut |_| {}).unwrap();
    // Rows come as the pods' logs are read, several at once: in any order.
    let mut rows: Vec<(&str, String)> =
        folder.manifest().nodes.iter().map(|n| (n.engine_name.as_str(), n.outcome.describe())).collect();
    rows.sort();
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
    assert!(
        collect(&collect_plan("default"), &none, &mut folder, &mut |_| {}).unwrap_err().to_string().contains("no pod")
    );
    let absent = |_: &Cmd| Err(HostError::NotFound { what: "kubectl".into() });
    assert!(collect(&collect_plan("default"), &absent, &mut folder, &mut |_| {}).is_err());
}

/// `kubectl get pods` listing `names` on node `gpu-N`, all Running.
fn pod_list(names: &[&str]) -> String {
    let items: Vec<serde_json::Value> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            serde_json::json!({"metadata": {"name": name}, "spec": {"nodeName": format!("gpu-{i}")}, "status": {"phase": "Running"}})
        })
        .collect();
    serde_json::json!({"kind": "List", "items": items}).to_string()
}

#[test]
fn pod_names_follow_dashes_and_one_that_is_an_option_is_not_asked_about() {
    let asked = std::sync::Mutex::new(Vec::new());
    let kubectl = |cmd: &Cmd| -> Result<CmdOutput, HostError> {
        let stdout = if cmd.argv[1] == "get" {
            pod_list(&["--kubeconfig=/tmp/evil", "ok-pod"])
        } else {
            asked.lock().unwrap().push(cmd.argv.clone());
            report_json(Some("gpu-1"))
        };
        Ok(CmdOutput { status: Some(0), stdout, stderr: String::new() })
    };
    let dir = tempfile::tempdir().unwrap();
    let mut folder = Folder::open(dir.path(), "k8s", "t".into(), false).unwrap();
    collect(&collect_plan("default"), &kubectl, &mut folder, &mut |_| {}).unwrap();
    let asked = asked.into_inner().unwrap();
    assert_eq!(asked, [["kubectl", "logs", "--namespace", "default", "-c", "gpu-doctor", "--", "ok-pod"]]);
    let row = folder.manifest().nodes.iter().find(|n| n.engine_name.ends_with("/--kubeconfig=/tmp/evil")).unwrap();
    assert_eq!(row.outcome.describe(), "failed: not a Kubernetes pod name");
}

#[test]
fn hanging_pods_are_read_at_once_and_the_whole_collection_has_a_deadline() {
    let names: Vec<String> = (0..16).map(|i| format!("pod-{i}")).collect();
    let list = pod_list(&names.iter().map(String::as_str).collect::<Vec<_>>());
    let calls = std::sync::atomic::AtomicUsize::new(0);
    let running = std::sync::atomic::AtomicUsize::new(0);
    let most = std::sync::atomic::AtomicUsize::new(0);
    let kubectl = |cmd: &Cmd| -> Result<CmdOutput, HostError> {
        if cmd.argv[1] == "get" {
            return Ok(CmdOutput { status: Some(0), stdout: list.clone(), stderr: String::new() });
        }
        calls.fetch_add(1, Ordering::SeqCst);
        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
        most.fetch_max(now, Ordering::SeqCst);
        // Each log hangs until its deadline, as an unreachable node's does.
        std::thread::sleep(cmd.timeout.min(Duration::from_millis(400)));
        running.fetch_sub(1, Ordering::SeqCst);
        Err(HostError::Timeout { after_ms: 400, what: "kubectl logs".into() })
    };
    let dir = tempfile::tempdir().unwrap();
    let mut folder = Folder::open(dir.path(), "k8s", "t".into(), false).unwrap();
    let plan = CollectPlan { jobs: 4, timeout: Duration::from_millis(1000), ..collect_plan("default") };
    let started = std::time::Instant::now();
    collect(&plan, &kubectl, &mut folder, &mut |_| {}).unwrap();
    let took = started.elapsed();
    assert_eq!(most.load(Ordering::SeqCst), 4, "not 4 at once");
    // One after another, 16 hanging pods took 16 x 400 ms; 4 at once, the deadline ends it
    // after about 1 s, and the pods not asked by then are not asked at all.
    assert!(took < Duration::from_millis(2500), "{took:?}");
    assert!(calls.load(Ordering::SeqCst) < 16, "every pod was asked after the deadline");
    assert_eq!(folder.manifest().nodes.len(), 16);
    assert!(folder.manifest().nodes.iter().all(|n| n.outcome == NodeOutcome::TimedOut));
}

#[test]
fn with_certify_the_pods_run_certify_after_the_report_and_a_daemonset_still_sleeps() {
    let daemonset = manifest(&ManifestPlan { certify: Some(1), ..plan(Kind::Daemonset) }).unwrap();
    assert!(
        daemonset.contains(
            r#"(gpu-doctor report --format json; d=$(mktemp -d) && gpu-doctor -q certify --level 1 --json --out \"$d\"; s=$?; rm -rf \"$d\"; exit $s); while :; do sleep 3600; done"#
        ),
        "{daemonset}"
    );
    let job = manifest(&ManifestPlan { certify: Some(2), count: Some(2), ..plan(Kind::Job) }).unwrap();
    assert!(job.contains("certify --level 2 --json") && !job.contains("sleep 3600"), "{job}");
}
