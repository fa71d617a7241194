//! `fleet k8s`: a Job or DaemonSet that runs `gpu-doctor report --format json` on GPU nodes
//! (`manifest`), and the reports gathered from its pods' logs (`collect`).
//!
//! The pods select GPU nodes by the label NVIDIA's GPU feature discovery (and the GPU operator)
//! sets, `nvidia.com/gpu.present=true`, tolerate the usual `nvidia.com/gpu` taint, and see every GPU
//! of their node through `NVIDIA_VISIBLE_DEVICES=all` without taking one from the scheduler (a
//! `nvidia.com/gpu` limit, `--gpu-request`, is for clusters that refuse that variable; the pod then
//! sees only the GPUs it was given). A Job runs one pod per node (`--count` nodes, spread by a
//! required anti-affinity on the host name); a DaemonSet runs on every GPU node and sleeps after
//! its report so that it is not restarted. The YAML is written here by hand: every value from the
//! command line is a JSON string, which YAML reads as the same string.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use gpu_doctor_model::fleet::{NodeEntry, NodeOutcome};
use gpu_doctor_probes::host::{Cmd, CmdOutput, HostError};
use serde_json::Value;

use super::{Folder, NodeResult, Runner, judge, last_line};

/// The label every object and pod carries; `collect`'s default selector.
pub const LABEL: &str = "app.kubernetes.io/name=gpu-doctor";

/// Which workload `manifest` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// One pod per node on `--count` GPU nodes; its pods end after the report.
    Job,
    /// A pod on every GPU node, now and as nodes join.
    Daemonset,
}

/// What `fleet k8s manifest` writes.
#[derive(Debug, Clone)]
pub struct ManifestPlan {
    pub kind: Kind,
    /// An image with gpu-doctor on its PATH (and `sh`).
    pub image: String,
    pub namespace: String,
    /// For a Job: how many nodes.
    pub count: Option<u32>,
    /// A `nvidia.com/gpu` limit per pod; 0 for none.
    pub gpu_request: u32,
    /// `--certify LEVEL`: each pod also runs `certify --level LEVEL` after the report, its
    /// certificate printed after the report (and collected beside it).
    pub certify: Option<u8>,
}

/// Whether `name` is a Kubernetes DNS label (namespaces).
fn dns_label(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

/// A YAML scalar for any text: a JSON string.
fn scalar(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

/// The pod template's `spec`, indented for its place under `template:`.
fn pod_spec(plan: &ManifestPlan, job: bool) -> String {
    let run = super::node_script("gpu-doctor", plan.certify);
    let script = match (job, plan.certify) {
        (true, _) => run,
        (false, None) => format!("{run}; while :; do sleep 3600; done"),
        // The certify script ends in `exit`: in a subshell, so the pod stays.
        (false, Some(_)) => format!("({run}); while :; do sleep 3600; done"),
    };
    let mut spec = String::from(
        "    spec:\n      nodeSelector:\n        nvidia.com/gpu.present: \"true\"\n      tolerations:\n        \
         - key: nvidia.com/gpu\n          operator: Exists\n          effect: NoSchedule\n",
    );
    if job {
        spec.push_str(
            "      restartPolicy: Never\n      affinity:\n        podAntiAffinity:\n          \
             requiredDuringSchedulingIgnoredDuringExecution:\n            - topologyKey: kubernetes.io/hostname\n              \
             labelSelector:\n                matchLabels:\n                  app.kubernetes.io/name: gpu-doctor\n",
        );
    }
    spec.push_str(&format!(
        "      containers:\n        - name: gpu-doctor\n          image: {image}\n          \
         command: [\"sh\", \"-c\", {script}]\n          env:\n            - name: NVIDIA_VISIBLE_DEVICES\n              \
         value: all\n            - name: NVIDIA_DRIVER_CAPABILITIES\n              value: compute,utility\n",
        image = scalar(&plan.image),
        script = scalar(&script),
    ));
    if plan.gpu_request > 0 {
        spec.push_str(&format!(
            "          resources:\n            limits:\n              nvidia.com/gpu: {}\n",
            plan.gpu_request
        ));
    }
    spec
}

/// The manifest's YAML.
pub fn manifest(plan: &ManifestPlan) -> Result<String> {
    if !dns_label(&plan.namespace) {
        bail!("{:?} is not a Kubernetes namespace name (lower-case letters, digits and -)", plan.namespace);
    }
    if plan.image.trim().is_empty() || plan.image.chars().any(char::is_control) {
        bail!("the image name {:?} is empty or holds control characters", plan.image);
    }
    let head = |api: &str, kind: &str| {
        format!(
            "# Written by gpu-doctor fleet k8s manifest; apply with kubectl apply -f FILE, then\n\
             # gpu-doctor fleet k8s collect --namespace {ns} -o DIR\n\
             apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: gpu-doctor\n  namespace: {ns_yaml}\n  \
             labels:\n    app.kubernetes.io/name: gpu-doctor\nspec:\n",
            ns = plan.namespace,
            ns_yaml = scalar(&plan.namespace),
        )
    };
    let template = "  template:\n    metadata:\n      labels:\n        app.kubernetes.io/name: gpu-doctor\n";
    Ok(match plan.kind {
        Kind::Job => {
            let Some(count) = plan.count.filter(|&n| n > 0) else {
                bail!("a Job needs --count N: on how many GPU nodes to run (a DaemonSet runs on all)");
            };
            format!(
                "{}  completions: {count}\n  parallelism: {count}\n  backoffLimit: 0\n{template}{}",
                head("batch/v1", "Job"),
                pod_spec(plan, true)
            )
        }
        Kind::Daemonset => format!(
            "{}  selector:\n    matchLabels:\n      app.kubernetes.io/name: gpu-doctor\n{template}{}",
            head("apps/v1", "DaemonSet"),
            pod_spec(plan, false)
        ),
    })
}

/// One pod of `kubectl get pods -o json`.
#[derive(Debug, Clone, PartialEq)]
pub struct Pod {
    pub name: String,
    pub node: Option<String>,
    pub phase: String,
    /// The container's exit code, once it ended.
    pub exit_code: Option<i64>,
}

/// The pods of `kubectl get pods -o json` (a `List` of `Pod`s), by node name, then pod name.
pub fn pods(json: &str) -> Result<Vec<Pod>> {
    let list: Value = serde_json::from_str(json).context("kubectl get pods did not print JSON")?;
    let Some(items) = list.get("items").and_then(Value::as_array) else {
        bail!("kubectl get pods printed JSON without an items list");
    };
    let text = |v: &Value, path: &[&str]| -> Option<String> {
        path.iter().try_fold(v, |v, k| v.get(k)).and_then(Value::as_str).map(str::to_owned)
    };
    let mut pods: Vec<Pod> = items
        .iter()
        .filter_map(|item| {
            let exit_code = item
                .pointer("/status/containerStatuses")
                .and_then(Value::as_array)
                .and_then(|all| all.iter().find(|c| c.get("name").and_then(Value::as_str) == Some("gpu-doctor")))
                .and_then(|c| c.pointer("/state/terminated/exitCode"))
                .and_then(Value::as_i64);
            Some(Pod {
                name: text(item, &["metadata", "name"])?,
                node: text(item, &["spec", "nodeName"]),
                phase: text(item, &["status", "phase"]).unwrap_or_else(|| "Unknown".to_owned()),
                exit_code,
            })
        })
        .collect();
    pods.sort_by(|a, b| (&a.node, &a.name).cmp(&(&b.node, &b.name)));
    Ok(pods)
}

/// How `collect` reads the pods' logs.
#[derive(Debug, Clone)]
pub struct CollectPlan {
    /// The namespace the manifest was applied in.
    pub namespace: String,
    /// Which pods (kubectl --selector).
    pub selector: String,
    /// At most this many `kubectl logs` at once (at least 1).
    pub jobs: usize,
    /// For the whole collection: pods not asked by then are rows that timed out.
    pub timeout: Duration,
}

/// The most one kubectl call may take, within the whole collection's deadline.
const KUBECTL_TIMEOUT: Duration = Duration::from_secs(60);

/// Gathers a report from every pod matching the plan's selector in its namespace: `kubectl get
/// pods -o json` for the pods and their nodes, then `kubectl logs` of each (the pod name after
/// `--`, so it is never an option), `plan.jobs` at once, all within `plan.timeout`. A pod that is
/// not scheduled, printed no report, found no gpu-doctor or was not reached in time is a row with
/// that reason. Rows are named `NODE/POD`, and written down as each pod's log is read.
pub fn collect(
    plan: &CollectPlan,
    runner: &Runner<'_>,
    folder: &mut Folder,
    progress: &mut dyn FnMut(&NodeEntry),
) -> Result<()> {
    let deadline = Instant::now() + plan.timeout;
    let (namespace, selector) = (plan.namespace.as_str(), plan.selector.as_str());
    let get = Cmd::new(["kubectl", "get", "pods", "--namespace", namespace, "--selector", selector, "-o", "json"])
        .timeout(KUBECTL_TIMEOUT.min(plan.timeout));
    let out = runner(&get).map_err(|e| anyhow::anyhow!("could not run kubectl: {e}"))?;
    if !out.success() {
        bail!("kubectl get pods failed: {}", last_line(&out.stderr));
    }
    let pods = pods(&out.stdout)?;
    if pods.is_empty() {
        bail!("no pod in namespace {namespace} matches {selector}; was the manifest applied?");
    }
    let jobs = plan.jobs.clamp(1, pods.len());
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::sync_channel::<(usize, NodeResult)>(jobs);
    std::thread::scope(|scope| -> Result<()> {
        for worker in 0..jobs {
            let (tx, next, pods) = (tx.clone(), &next, &pods);
            std::thread::Builder::new().name(format!("fleet-k8s-{worker}")).spawn_scoped(scope, move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(pod) = pods.get(i) else { break };
                    let result = pod_result(pod, namespace, deadline, runner);
                    if tx.send((i, result)).is_err() {
                        break;
                    }
                }
            })?;
        }
        drop(tx);
        for (i, result) in rx {
            let pod = &pods[i];
            let name = format!("{}/{}", pod.node.as_deref().unwrap_or("(no node)"), pod.name);
            let entry = folder.add(&name, result, None)?;
            progress(&entry);
        }
        Ok(())
    })
}

/// One pod's row: its log read with `kubectl logs`, unless it is on no node, its name could be
/// an option, or the collection's deadline has passed.
fn pod_result(pod: &Pod, namespace: &str, deadline: Instant, runner: &Runner<'_>) -> NodeResult {
    if pod.node.is_none() {
        return NodeResult::Outcome(NodeOutcome::Unreachable {
            reason: format!("pod {} is {} and on no node yet", pod.name, pod.phase),
        });
    }
    // Kubernetes names never start with `-`; one that does is not asked about.
    if pod.name.is_empty() || pod.name.starts_with('-') {
        return NodeResult::Outcome(NodeOutcome::Failed { reason: "not a Kubernetes pod name".to_owned() });
    }
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return NodeResult::Outcome(NodeOutcome::TimedOut);
    }
    let logs = Cmd::new(["kubectl", "logs", "--namespace", namespace, "-c", "gpu-doctor", "--", &pod.name])
        .timeout(KUBECTL_TIMEOUT.min(left));
    match runner(&logs) {
        Err(HostError::Timeout { .. }) => NodeResult::Outcome(NodeOutcome::TimedOut),
        Err(e) => NodeResult::Outcome(NodeOutcome::Failed { reason: format!("kubectl logs: {e}") }),
        Ok(out) if !out.success() => {
            NodeResult::Outcome(NodeOutcome::Failed { reason: format!("kubectl logs: {}", last_line(&out.stderr)) })
        }
        Ok(out) if out.stdout.trim().is_empty() => NodeResult::Outcome(NodeOutcome::Failed {
            reason: format!("pod {} ({}) printed no report yet", pod.name, pod.phase),
        }),
        // The log mixes the container's output and errors; its exit code says more than kubectl's.
        Ok(out) => judge(&CmdOutput {
            status: pod.exit_code.and_then(|c| i32::try_from(c).ok()),
            stderr: out.stdout.clone(),
            stdout: out.stdout,
        }),
    }
}

#[cfg(test)]
mod tests;
