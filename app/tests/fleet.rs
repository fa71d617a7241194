//! `gpu-doctor fleet` against real engines where this machine has them: a local sshd on
//! 127.0.0.1, a one-node SLURM cluster (`.ci/slurm-cluster`, run by `.ci/run`), and Kubernetes
//! through a recorded `kubectl` on PATH, its manifests checked by `kubernetes-validate`.
//! Nothing here connects anywhere but 127.0.0.1.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use gpu_doctor_model::fleet::{MANIFEST_FILE, Manifest, NodeOutcome};
use gpu_doctor_model::shell::{Shell, ShellCommand, quote_posix};

const BIN: &str = env!("CARGO_BIN_EXE_gpu-doctor");

mod support;
use support::{skip, write_executable as write_script};

/// A `gpu-doctor` for the nodes: this build replaying a recorded GPU machine.
fn fake_gpu_doctor(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/consumer-gpu-torch-venv");
    let path = dir.join("gpu-doctor");
    let replay = ShellCommand::new(BIN).arg("--replay").arg(fixture.display().to_string());
    write_script(&path, &format!("#!/bin/sh\nexec {} \"$@\"\n", replay.render(Shell::Posix).unwrap()));
    path
}

fn manifest(dir: &Path) -> Manifest {
    serde_json::from_str(&std::fs::read_to_string(dir.join(MANIFEST_FILE)).unwrap()).unwrap()
}

fn outcome<'a>(m: &'a Manifest, engine_name: &str) -> &'a NodeOutcome {
    &m.nodes.iter().find(|n| n.engine_name == engine_name).unwrap_or_else(|| panic!("{engine_name}: {m:#?}")).outcome
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// sshd in the foreground, ended when dropped.
struct Sshd(Child);

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn keygen(path: &Path) {
    let ok =
        Command::new("ssh-keygen").args(["-q", "-t", "ed25519", "-N", "", "-f"]).arg(path).status().unwrap().success();
    assert!(ok, "ssh-keygen failed");
}

/// An sshd on `ports` of 127.0.0.1 with a throwaway host key, letting in `user_key`; on the first
/// port the remote PATH starts with `bin`, on the second it has no gpu-doctor.
fn start_sshd(sshd: &Path, dir: &Path, ports: [u16; 2], bin: &Path) -> Sshd {
    keygen(&dir.join("host_key"));
    // Privilege separation wants this folder when sshd runs as root.
    let _ = std::fs::create_dir_all("/run/sshd");
    let config = format!(
        "ListenAddress 127.0.0.1\nPort {}\nPort {}\nHostKey {d}/host_key\nAuthorizedKeysFile {d}/user_key.pub\n\
         StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPidFile none\n\
         Match LocalPort {}\n  SetEnv PATH={}:/usr/bin:/bin\n",
        ports[0],
        ports[1],
        ports[0],
        bin.display(),
        d = dir.display(),
    );
    std::fs::write(dir.join("sshd_config"), config).unwrap();
    let child = Command::new(sshd)
        .args(["-D", "-e", "-f"])
        .arg(dir.join("sshd_config"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("sshd.log")).unwrap())
        .spawn()
        .unwrap();
    let guard = Sshd(child);
    let until = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", ports[1])).is_err() {
        assert!(
            Instant::now() < until,
            "sshd did not start: {}",
            std::fs::read_to_string(dir.join("sshd.log")).unwrap()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    guard
}

#[test]
fn fleet_ssh_reports_refused_hanging_and_gpu_doctor_less_hosts_each_with_its_outcome() {
    let Some(sshd) = which("sshd") else { return skip("no sshd (apt-get install openssh-server)") };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    keygen(&dir.join("user_key"));
    let bin = dir.join("bin");
    fake_gpu_doctor(&bin);
    let ports = [free_port(), free_port()];
    let _sshd = start_sshd(&sshd, dir, ports, &bin);
    let refused = free_port();
    // Accepts and never speaks.
    let hang = TcpListener::bind("127.0.0.1:0").unwrap();
    let hang_port = hang.local_addr().unwrap().port();
    std::thread::Builder::new()
        .name("silent-listener".into())
        .spawn(move || {
            let mut held = Vec::new();
            for stream in hang.incoming() {
                held.push(stream);
            }
        })
        .unwrap();
    let ssh_config = format!(
        "Host works\n  Port {}\nHost nogd\n  Port {}\nHost refuses\n  Port {refused}\nHost hangs\n  Port {hang_port}\n\
         Host *\n  HostName 127.0.0.1\n  IdentityFile {d}/user_key\n  IdentitiesOnly yes\n  \
         UserKnownHostsFile /dev/null\n  StrictHostKeyChecking no\n  LogLevel ERROR\n",
        ports[0],
        ports[1],
        d = dir.display(),
    );
    std::fs::write(dir.join("ssh_config"), ssh_config).unwrap();
    let out_dir = dir.join("fleet");
    let run = |extra: &[&str]| {
        Command::new(BIN)
            .args(["fleet", "ssh", "works", "nogd", "refuses", "hangs", "--timeout", "6", "-F"])
            .arg(dir.join("ssh_config"))
            .arg("-o")
            .arg(&out_dir)
            .args(extra)
            .output()
            .unwrap()
    };
    let started = Instant::now();
    let out = run(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(30), "the hosts ran one after another");
    let m = manifest(&out_dir);
    assert_eq!(m.engine, "ssh");
    let NodeOutcome::Reported { file } = outcome(&m, "works") else { panic!("{m:#?}\n{stderr}") };
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join(file)).unwrap()).unwrap();
    assert!(report["snapshot"]["gpus"].is_object(), "{report}");
    assert!(matches!(outcome(&m, "nogd"), NodeOutcome::NoGpuDoctor { reason } if reason.contains("not found")));
    assert!(
        matches!(outcome(&m, "refuses"), NodeOutcome::Unreachable { reason } if reason.contains("refused")),
        "{m:#?}"
    );
    assert_eq!(outcome(&m, "hangs"), &NodeOutcome::TimedOut);
    assert!(stderr.contains("[4/4, 1 ok, 3 not]"), "{stderr}");
    assert!(stderr.contains("1 of 4 nodes reported"), "{stderr}");

    // --certify 1: the certificate beside the report, and compare shows its verdict, the nodes
    // without one first.
    let certified = dir.join("certified");
    let out = Command::new(BIN)
        .args(["fleet", "ssh", "works", "refuses", "--timeout", "20", "--certify", "1", "-F"])
        .arg(dir.join("ssh_config"))
        .arg("-o")
        .arg(&certified)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let m = manifest(&certified);
    let works = m.nodes.iter().find(|n| n.engine_name == "works").unwrap();
    let cert_file = works.certificate.clone().unwrap_or_else(|| panic!("{m:#?}\n{stderr}"));
    let NodeOutcome::Reported { file } = &works.outcome else { panic!("{m:#?}") };
    assert_eq!(cert_file, file.replace(".json", ".certificate.json"));
    let cert: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(certified.join(&cert_file)).unwrap()).unwrap();
    // The recording has a torch environment without a recorded deep probe: INCOMPLETE.
    assert_eq!(cert["verdict"], "INCOMPLETE", "{cert}");
    assert_eq!(cert["level"], "software");
    let compared = Command::new(BIN).arg("compare").arg(&certified).output().unwrap();
    let text = String::from_utf8_lossy(&compared.stdout);
    let at = text.find("Certificates (the failed nodes first):").unwrap_or_else(|| panic!("{text}"));
    let section = &text[at..];
    let (refuses, works_at) = (section.find("refuses").unwrap(), section.find("INCOMPLETE (level 1)").unwrap());
    assert!(refuses < works_at, "the node without a report comes first: {section}");

    // Again, only the nodes without a report: the one that worked is not asked (its gpu-doctor
    // now fails, and its row stays as it was).
    write_script(&bin.join("gpu-doctor"), "#!/bin/sh\nexit 4\n");
    let again = run(&["--missing-only"]);
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(1), "{stderr}");
    let m2 = manifest(&out_dir);
    assert_eq!(outcome(&m2, "works"), outcome(&m, "works"));
    assert!(stderr.contains("[3/3, 0 ok, 3 not]") && !stderr.contains("works"), "{stderr}");
}

#[test]
fn fleet_slurm_on_a_one_node_cluster() {
    if std::env::var_os("GPU_DOCTOR_SLURM_TEST").is_none() {
        return skip("set GPU_DOCTOR_SLURM_TEST=1 (and SLURM_CONF) with a cluster up (.ci/slurm-cluster)");
    }
    let tmp = tempfile::tempdir().unwrap();
    let bin = fake_gpu_doctor(&tmp.path().join("bin"));
    let node = String::from_utf8(Command::new("hostname").arg("-s").output().unwrap().stdout).unwrap();
    let node = node.trim();

    // srun, the binary on the nodes' side at --bin.
    let out_dir = tmp.path().join("srun");
    let out = Command::new(BIN)
        .args(["fleet", "slurm", "--nodes", "1", "--timeout", "120", "--bin"])
        .arg(&bin)
        .arg("-o")
        .arg(&out_dir)
        .args(["--", "--job-name=gpu-doctor-test"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let m = manifest(&out_dir);
    assert_eq!((m.engine.as_str(), m.nodes.len()), ("slurm", 1), "{m:#?}");
    let NodeOutcome::Reported { file } = outcome(&m, node) else { panic!("{m:#?}") };
    assert!(out_dir.join(file).is_file());

    // --certify 1: each node's certificate beside its report (the recording's is INCOMPLETE).
    let certified = tmp.path().join("certified");
    let out = Command::new(BIN)
        .args(["fleet", "slurm", "--nodes", "1", "--timeout", "120", "--certify", "1", "--bin"])
        .arg(&bin)
        .arg("-o")
        .arg(&certified)
        .args(["--", "--job-name=gpu-doctor-test"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let m = manifest(&certified);
    let cert = m.nodes[0].certificate.clone().unwrap_or_else(|| panic!("{m:#?}"));
    let cert: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(certified.join(cert)).unwrap()).unwrap();
    assert_eq!(cert["verdict"], "INCOMPLETE", "{cert}");

    // --sbcast stages it; a missing binary is a row, not a lost run.
    let staged = tmp.path().join("sbcast");
    let out = Command::new(BIN)
        .args(["fleet", "slurm", "--sbcast", "--timeout", "120", "--bin"])
        .arg(&bin)
        .arg("-o")
        .arg(&staged)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(matches!(outcome(&manifest(&staged), node), NodeOutcome::Reported { .. }));
    let missing = tmp.path().join("missing");
    let out = Command::new(BIN)
        .args(["fleet", "slurm", "--timeout", "120", "--bin", "/nonexistent/gpu-doctor", "-o"])
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(matches!(outcome(&manifest(&missing), node), NodeOutcome::NoGpuDoctor { .. }));

    // The sbatch script, submitted for real; its last step collects the folder.
    let batch = tmp.path().join("batch");
    let script = tmp.path().join("fleet.sbatch");
    let out = Command::new(BIN)
        .args(["fleet", "slurm", "--nodes", "1", "--bin"])
        .arg(&bin)
        .arg("-o")
        .arg(&batch)
        .arg("--write-sbatch")
        .arg(&script)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let submitted = Command::new("timeout").args(["120", "sbatch", "--wait"]).arg(&script).output().unwrap();
    assert!(submitted.status.success(), "{}", String::from_utf8_lossy(&submitted.stderr));
    assert!(matches!(outcome(&manifest(&batch), node), NodeOutcome::Reported { .. }));
}

/// `kubernetes-validate`, from GPU_DOCTOR_K8S_VALIDATE or PATH.
fn validator() -> Option<PathBuf> {
    std::env::var_os("GPU_DOCTOR_K8S_VALIDATE").map(PathBuf::from).or_else(|| which("kubernetes-validate"))
}

#[test]
fn fleet_k8s_manifests_validate_against_the_kubernetes_schema() {
    let Some(validate) = validator() else {
        return skip("no kubernetes-validate (pip install kubernetes-validate, or set GPU_DOCTOR_K8S_VALIDATE)");
    };
    let tmp = tempfile::tempdir().unwrap();
    let cases: [&[&str]; 3] = [
        &["--kind", "daemonset"],
        &["--kind", "job", "--count", "16", "--gpu-request", "1", "--namespace", "ml-ops"],
        &["--kind", "daemonset", "--image", "registry.example:5000/team/gpu-doctor:0.4"],
    ];
    for (i, args) in cases.iter().enumerate() {
        let file = tmp.path().join(format!("m{i}.yaml"));
        let out =
            Command::new(BIN).args(["fleet", "k8s", "manifest"]).args(*args).arg("-o").arg(&file).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let checked = Command::new(&validate).arg("--strict").arg(&file).output().unwrap();
        assert!(
            checked.status.success(),
            "{args:?}: {}{}\n{}",
            String::from_utf8_lossy(&checked.stdout),
            String::from_utf8_lossy(&checked.stderr),
            std::fs::read_to_string(&file).unwrap()
        );
    }
    // The validator does reject a broken manifest (so a pass above means something).
    let broken = tmp.path().join("broken.yaml");
    let good = std::fs::read_to_string(tmp.path().join("m0.yaml")).unwrap();
    std::fs::write(&broken, good.replace("nodeSelector:", "nodeSelectr:")).unwrap();
    assert!(!Command::new(&validate).arg("--strict").arg(&broken).output().unwrap().status.success());
}

#[test]
fn fleet_k8s_collect_reads_recorded_kubectl_output() {
    let tmp = tempfile::tempdir().unwrap();
    let fakebin = tmp.path().join("fakebin");
    std::fs::create_dir_all(&fakebin).unwrap();
    let recorded = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kubectl-get-pods.json");
    let logs = tmp.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let report =
        Command::new(fake_gpu_doctor(&tmp.path().join("bin"))).args(["report", "--format", "json"]).output().unwrap();
    assert!(report.status.success());
    std::fs::write(logs.join("gpu-doctor-4mz9q"), &report.stdout).unwrap();
    std::fs::write(logs.join("gpu-doctor-x7k2p"), "sh: 1: gpu-doctor: not found\n").unwrap();
    std::fs::write(logs.join("gpu-doctor-c2w5n"), "").unwrap();
    // Answers `get pods` with the recording and `logs POD` with that pod's log, as kubectl prints them.
    write_script(
        &fakebin.join("kubectl"),
        &format!(
            "#!/bin/sh\necho \"$*\" >> {calls}\ncase \"$1\" in\n  get) cat {pods} ;;\n  logs) cat {logs}/\"$7\" ;;\n  \
             *) echo \"unexpected: $*\" >&2; exit 1 ;;\nesac\n",
            calls = quote_posix(&tmp.path().join("calls").display().to_string()),
            pods = quote_posix(&recorded.display().to_string()),
            logs = quote_posix(&logs.display().to_string()),
        ),
    );
    let path = format!("{}:{}", fakebin.display(), std::env::var("PATH").unwrap_or_default());
    let out_dir = tmp.path().join("fleet");
    let out = Command::new(BIN)
        .args(["fleet", "k8s", "collect", "--namespace", "gpu-doctor", "-o"])
        .arg(&out_dir)
        .env("PATH", path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let m = manifest(&out_dir);
    assert_eq!(m.engine, "k8s");
    let NodeOutcome::Reported { file } = outcome(&m, "gpu-a/gpu-doctor-4mz9q") else { panic!("{m:#?}") };
    assert!(out_dir.join(file).is_file());
    assert!(matches!(outcome(&m, "gpu-b/gpu-doctor-x7k2p"), NodeOutcome::NoGpuDoctor { .. }));
    assert!(matches!(outcome(&m, "(no node)/gpu-doctor-pq8rt"), NodeOutcome::Unreachable { .. }));
    assert!(matches!(outcome(&m, "gpu-c/gpu-doctor-c2w5n"), NodeOutcome::Failed { .. }));
    let calls = std::fs::read_to_string(tmp.path().join("calls")).unwrap();
    assert!(
        calls.starts_with("get pods --namespace gpu-doctor --selector app.kubernetes.io/name=gpu-doctor -o json\n"),
        "{calls}"
    );
    assert!(calls.contains("logs --namespace gpu-doctor -c gpu-doctor -- gpu-doctor-4mz9q\n"), "{calls}");
}

/// A fake `ssh` on PATH whose nodes answer with hostile host names (an existing file's name, a
/// planted symlink's, an option), a banner with braces and text after the report, and a host named
/// twice: no file outside the manifest's own is touched, every report is found, and the progress
/// counts each host once.
#[test]
fn fleet_ssh_with_hostile_host_names_and_banners_touches_only_its_own_files() {
    let tmp = tempfile::tempdir().unwrap();
    let answers = tmp.path().join("answers");
    std::fs::create_dir_all(&answers).unwrap();
    let report =
        Command::new(fake_gpu_doctor(&tmp.path().join("bin"))).args(["report", "--format", "json"]).output().unwrap();
    assert!(report.status.success());
    let base: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let named = |host: &str| {
        let mut r = base.clone();
        r["snapshot"]["system"]["value"]["host_name"] = host.into();
        serde_json::to_string_pretty(&r).unwrap()
    };
    std::fs::write(answers.join("n1"), named("package")).unwrap();
    std::fs::write(answers.join("n2"), named("gpu01")).unwrap();
    std::fs::write(answers.join("n3"), named("-rf")).unwrap();
    let banner = format!("Welcome {{admin}}\n{{ maintenance }}\n{}\nlogout {{\n", named("bannered"));
    std::fs::write(answers.join("n4"), banner).unwrap();
    let fakebin = tmp.path().join("fakebin");
    std::fs::create_dir_all(&fakebin).unwrap();
    // ssh -o BatchMode=yes -- HOST COMMAND: the host is $4.
    write_script(
        &fakebin.join("ssh"),
        &format!("#!/bin/sh\ncat {}/\"$4\"\n", quote_posix(&answers.display().to_string())),
    );
    let out_dir = tmp.path().join("fleet");
    std::fs::create_dir_all(&out_dir).unwrap();
    std::fs::write(out_dir.join("package.json"), "{\"name\": \"unrelated\"}").unwrap();
    let victim = tmp.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::os::unix::fs::symlink(&victim, out_dir.join("gpu01.json")).unwrap();
    let path = format!("{}:{}", fakebin.display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new(BIN)
        .args(["fleet", "ssh", "n1", "n2", "n3", "n4", "n1", "-o"])
        .arg(&out_dir)
        .env("PATH", path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("[4/4, 4 ok, 0 not]") && stderr.contains("4 of 4 nodes reported"), "{stderr}");
    assert_eq!(std::fs::read_to_string(out_dir.join("package.json")).unwrap(), "{\"name\": \"unrelated\"}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let m = manifest(&out_dir);
    let file = |node: &str| match outcome(&m, node) {
        NodeOutcome::Reported { file } => file.clone(),
        other => panic!("{node}: {other:?}"),
    };
    assert_eq!(file("n1"), "package-2.json");
    assert_eq!(file("n2"), "gpu01-2.json");
    assert_eq!(file("n3"), "_rf.json");
    let kept = std::fs::read_to_string(out_dir.join(file("n4"))).unwrap();
    assert!(kept.starts_with('{') && kept.trim_end().ends_with('}'), "{kept}");
}

/// Fake `srun` and `scontrol` on PATH: scontrol names a node `../../secret` and one `-x`, a node's
/// `.out` is a FIFO no one writes, and `DIR/.slurm` holds a file of the user's. The run ends
/// promptly, reads no file outside `.slurm`, and removes nothing it did not write.
#[test]
fn fleet_slurm_with_hostile_node_names_and_outputs_reads_and_removes_only_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let fakebin = tmp.path().join("fakebin");
    std::fs::create_dir_all(&fakebin).unwrap();
    write_script(&fakebin.join("srun"), "#!/bin/sh\nexit 0\n");
    write_script(&fakebin.join("scontrol"), "#!/bin/sh\nprintf 'gpu01\\n../../secret\\n-x\\n'\n");
    let out_dir = tmp.path().join("run").join("fleet");
    let raw = out_dir.join(".slurm");
    std::fs::create_dir_all(&raw).unwrap();
    std::fs::write(tmp.path().join("run").join("secret.out"), "TOKEN-42\n").unwrap();
    std::fs::write(raw.join("notes.out"), "mine\n").unwrap();
    assert!(Command::new("mkfifo").arg(raw.join("gpu01.out")).status().unwrap().success());
    let path = format!("{}:{}", fakebin.display(), std::env::var("PATH").unwrap_or_default());
    let started = Instant::now();
    let out = Command::new("timeout")
        .args(["60", BIN, "fleet", "slurm", "-w", "gpu01", "--timeout", "30", "-o"])
        .arg(&out_dir)
        .env("PATH", path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(30), "a FIFO held the run");
    assert_eq!(std::fs::read_to_string(raw.join("notes.out")).unwrap(), "mine\n", "a file of the user's was removed");
    let text = std::fs::read_to_string(out_dir.join(MANIFEST_FILE)).unwrap();
    assert!(!text.contains("TOKEN-42"), "a file outside the folder was read: {text}");
    let m = manifest(&out_dir);
    assert!(
        matches!(outcome(&m, "gpu01"), NodeOutcome::Failed { reason } if reason.contains("not a regular file")),
        "{m:#?}"
    );
    for name in ["../../secret", "-x"] {
        assert!(
            matches!(outcome(&m, name), NodeOutcome::Failed { reason } if reason.contains("not a plain node name")),
            "{m:#?}"
        );
    }
}

/// A fake `kubectl` on PATH listing a pod named like an option and one whose log hangs: the
/// option-like name is never passed to kubectl, the hanging pod is cut by `--timeout`, and the
/// others are read at once.
#[test]
fn fleet_k8s_collect_with_hostile_pod_names_and_a_hanging_log_keeps_its_deadline() {
    let tmp = tempfile::tempdir().unwrap();
    let fakebin = tmp.path().join("fakebin");
    std::fs::create_dir_all(&fakebin).unwrap();
    let report =
        Command::new(fake_gpu_doctor(&tmp.path().join("bin"))).args(["report", "--format", "json"]).output().unwrap();
    assert!(report.status.success());
    std::fs::write(tmp.path().join("report.json"), &report.stdout).unwrap();
    let pod = |name: &str, node: &str| serde_json::json!({"metadata": {"name": name}, "spec": {"nodeName": node}, "status": {"phase": "Running"}});
    let list = serde_json::json!({"kind": "List", "items": [
        pod("--kubeconfig=/tmp/evil", "gpu-a"), pod("hang", "gpu-b"), pod("ok", "gpu-c"),
    ]});
    std::fs::write(tmp.path().join("pods.json"), list.to_string()).unwrap();
    let t = quote_posix(&tmp.path().display().to_string());
    // kubectl logs --namespace NS -c gpu-doctor -- POD: the pod is the last argument.
    write_script(
        &fakebin.join("kubectl"),
        &format!(
            "#!/bin/sh\necho \"$*\" >> {t}/calls\ncase \"$1\" in\n  get) cat {t}/pods.json ;;\n  \
             logs) for last; do :; done; case \"$last\" in hang) exec sleep 60 ;; *) cat {t}/report.json ;; esac ;;\n\
             esac\n"
        ),
    );
    let path = format!("{}:{}", fakebin.display(), std::env::var("PATH").unwrap_or_default());
    let out_dir = tmp.path().join("fleet");
    let started = Instant::now();
    let out = Command::new(BIN)
        .args(["fleet", "k8s", "collect", "--timeout", "3", "-o"])
        .arg(&out_dir)
        .env("PATH", path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(20), "the hanging pod held the run: {stderr}");
    let m = manifest(&out_dir);
    assert!(matches!(outcome(&m, "gpu-c/ok"), NodeOutcome::Reported { .. }), "{m:#?}");
    assert_eq!(outcome(&m, "gpu-b/hang"), &NodeOutcome::TimedOut);
    assert!(matches!(outcome(&m, "gpu-a/--kubeconfig=/tmp/evil"), NodeOutcome::Failed { .. }), "{m:#?}");
    let calls = std::fs::read_to_string(tmp.path().join("calls")).unwrap();
    assert!(!calls.contains("kubeconfig"), "{calls}");
    assert!(calls.contains("logs --namespace default -c gpu-doctor -- ok\n"), "{calls}");
}
