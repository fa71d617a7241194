//! `fleet ssh`: `gpu-doctor report --format json` on each host through the system's `ssh`, with
//! the user's own ssh config and agent, several hosts at once.
//!
//! Each host is one `ssh -o BatchMode=yes [ssh options] -- HOST 'COMMAND'`, the remote command
//! quoted for POSIX sh (what the remote login shell reads). BatchMode makes a host that would ask
//! for a password or a host-key confirmation fail at once instead of waiting. The per-host timeout
//! is the child's deadline (connecting included): at it, ssh's process group is killed and the host
//! is `timed out`, whether it hung in connecting, in the handshake or in the check.
//! What comes back is judged by its exit code: 255 is ssh's own failure (unreachable, refused,
//! authentication), 127 or "command not found" is a node without gpu-doctor, a report on standard
//! output is a report, and anything else failed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Result;
use gpu_doctor_model::fleet::{NodeEntry, NodeOutcome};
use gpu_doctor_model::shell::{Shell, ShellCommand};
use gpu_doctor_probes::host::{Cmd, CmdOutput, HostError};

use super::{Folder, NodeResult, Runner, judge, last_line};

/// What `fleet ssh` is asked to do.
#[derive(Debug, Clone)]
pub struct SshPlan {
    /// The destinations as the user writes them for ssh (`node7`, `me@10.0.0.7`, an alias).
    pub hosts: Vec<String>,
    /// At most this many hosts at once (at least 1).
    pub jobs: usize,
    /// Per host, for connecting and the whole check together.
    pub timeout: Duration,
    /// The gpu-doctor to run on each host (a name looked up on the remote PATH, or a path).
    pub remote_bin: String,
    /// More options for ssh, before the destination (`-F FILE`, `-o Port=2222`).
    pub ssh_options: Vec<String>,
    /// `--certify LEVEL`: also `certify --level LEVEL` on each host, its certificate kept beside
    /// the report.
    pub certify: Option<u8>,
}

/// The hosts of a hosts file: one per line; blank lines and `#` comments are skipped.
pub fn hosts_from_file(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The ssh command for one host.
pub fn command(plan: &SshPlan, host: &str) -> Cmd {
    let bin = ShellCommand::new(plan.remote_bin.clone()).render(Shell::Posix).unwrap_or_default();
    let remote = super::node_script(&bin, plan.certify);
    let mut argv: Vec<String> = ["ssh", "-o", "BatchMode=yes"].map(str::to_owned).into();
    argv.extend(plan.ssh_options.iter().cloned());
    argv.extend(["--".to_owned(), host.to_owned(), remote]);
    Cmd::new(argv).timeout(plan.timeout)
}

/// What one host's ssh run gave.
pub fn judge_ssh(answer: Result<CmdOutput, HostError>) -> NodeResult {
    match answer {
        Err(HostError::Timeout { .. }) => NodeResult::Outcome(NodeOutcome::TimedOut),
        Err(e) => NodeResult::Outcome(NodeOutcome::Failed { reason: format!("could not run ssh: {e}") }),
        Ok(out) if out.status == Some(255) && super::parse_report(&out.stdout).is_none() => {
            let said = last_line(&out.stderr);
            let reason = if said.is_empty() { "ssh exited with 255".to_owned() } else { said };
            NodeResult::Outcome(NodeOutcome::Unreachable { reason })
        }
        Ok(out) => judge(&out),
    }
}

/// Runs the plan for every host (each once, in the order given), at most `plan.jobs` at a time,
/// writing each into `folder` as it ends and telling `progress` its row.
pub fn run(
    plan: &SshPlan,
    runner: &Runner<'_>,
    folder: &mut Folder,
    progress: &mut dyn FnMut(&NodeEntry),
) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    let hosts: Vec<&str> = plan.hosts.iter().map(String::as_str).filter(|h| seen.insert(*h)).collect();
    let jobs = plan.jobs.clamp(1, hosts.len().max(1));
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::sync_channel::<(usize, NodeResult, f64)>(jobs);
    std::thread::scope(|scope| -> Result<()> {
        for worker in 0..jobs {
            let (tx, next, hosts) = (tx.clone(), &next, &hosts);
            std::thread::Builder::new().name(format!("fleet-ssh-{worker}")).spawn_scoped(scope, move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(host) = hosts.get(i) else { break };
                    let started = Instant::now();
                    let result = judge_ssh(runner(&command(plan, host)));
                    if tx.send((i, result, started.elapsed().as_secs_f64())).is_err() {
                        break;
                    }
                }
            })?;
        }
        drop(tx);
        for (i, result, seconds) in rx {
            let entry = folder.add(hosts[i], result, Some(seconds))?;
            progress(&entry);
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn plan() -> SshPlan {
        SshPlan {
            hosts: vec!["a".into()],
            jobs: 2,
            timeout: Duration::from_secs(30),
            remote_bin: "/opt/my tools/gpu-doctor".into(),
            ssh_options: vec!["-F".into(), "/tmp/cfg".into()],
            certify: None,
        }
    }

    fn out(status: i32, stdout: &str, stderr: &str) -> Result<CmdOutput, HostError> {
        Ok(CmdOutput { status: Some(status), stdout: stdout.into(), stderr: stderr.into() })
    }

    #[test]
    fn the_command_is_batch_mode_with_the_destination_after_dashes_and_the_remote_command_quoted() {
        let cmd = command(&plan(), "-oProxyCommand=evil");
        assert_eq!(
            cmd.argv,
            [
                "ssh",
                "-o",
                "BatchMode=yes",
                "-F",
                "/tmp/cfg",
                "--",
                "-oProxyCommand=evil",
                "'/opt/my tools/gpu-doctor' report --format json"
            ]
        );
        assert_eq!(cmd.timeout, Duration::from_secs(30));
        let certify = command(&SshPlan { certify: Some(2), ..plan() }, "a");
        assert_eq!(
            certify.argv.last().unwrap(),
            "'/opt/my tools/gpu-doctor' report --format json; d=$(mktemp -d) && '/opt/my tools/gpu-doctor' -q certify \
             --level 2 --json --out \"$d\"; s=$?; rm -rf \"$d\"; exit $s"
        );
    }

    #[test]
    fn hosts_files_skip_blank_lines_and_comments() {
        assert_eq!(hosts_from_file("a\n\n  # all of rack 2\nb  # the old one\n me@c \n"), ["a", "b", "me@c"]);
    }

    #[test]
    fn ssh_answers_become_outcomes() {
        let timeout = Err(HostError::Timeout { after_ms: 1, what: "ssh".into() });
        assert_eq!(judge_ssh(timeout), NodeResult::Outcome(NodeOutcome::TimedOut));
        let refused = out(255, "", "ssh: connect to host 127.0.0.1 port 9: Connection refused\r\n");
        assert_eq!(
            judge_ssh(refused),
            NodeResult::Outcome(NodeOutcome::Unreachable {
                reason: "ssh: connect to host 127.0.0.1 port 9: Connection refused".into()
            })
        );
        let missing = out(127, "", "bash: line 1: gpu-doctor: command not found\n");
        assert!(matches!(judge_ssh(missing), NodeResult::Outcome(NodeOutcome::NoGpuDoctor { .. })));
        let missing_sh = out(127, "", "sh: 1: gpu-doctor: not found\n");
        assert!(matches!(judge_ssh(missing_sh), NodeResult::Outcome(NodeOutcome::NoGpuDoctor { .. })));
        let broken = out(4, "", "gpu-doctor: the knowledge base did not load\n");
        assert_eq!(
            judge_ssh(broken),
            NodeResult::Outcome(NodeOutcome::Failed { reason: "gpu-doctor: the knowledge base did not load".into() })
        );
        let not_a_report = out(0, "hello\n", "");
        assert!(matches!(judge_ssh(not_a_report), NodeResult::Outcome(NodeOutcome::Failed { .. })));
    }

    #[test]
    fn hosts_run_in_parallel_up_to_the_limit_and_each_once() {
        let running = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let calls = std::sync::Mutex::new(Vec::new());
        let runner = |cmd: &Cmd| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            calls.lock().unwrap().push(cmd.argv[cmd.argv.len() - 2].clone());
            std::thread::sleep(Duration::from_millis(30));
            running.fetch_sub(1, Ordering::SeqCst);
            out(127, "", "gpu-doctor: command not found")
        };
        let dir = tempfile::tempdir().unwrap();
        let mut folder = Folder::open(dir.path(), "ssh", "t".into(), false).unwrap();
        let hosts: Vec<String> = ["a", "b", "c", "a", "d", "e"].map(str::to_owned).into();
        let plan = SshPlan { hosts, jobs: 2, ..plan() };
        let mut seen = Vec::new();
        run(&plan, &runner, &mut folder, &mut |e| seen.push(e.engine_name.clone())).unwrap();
        assert_eq!(most.load(Ordering::SeqCst), 2);
        let mut called = calls.into_inner().unwrap();
        called.sort();
        assert_eq!(called, ["a", "b", "c", "d", "e"]);
        seen.sort();
        assert_eq!(seen, ["a", "b", "c", "d", "e"], "progress hears of each host once, as it ends");
        assert_eq!(folder.manifest().nodes.len(), 5);
    }
}
