//! The `fleet` command: its options, and the lines it prints while the engines in `ops::fleet`
//! run (a line per node on standard error as it ends, with the counts so far).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use gpu_doctor_model::fleet::{NodeEntry, NodeOutcome};
use gpu_doctor_probes::host::{Cmd, CmdOutput, Host, HostError, SystemHost};

use crate::exit::{self, InputError, UsageError};
use crate::ops::fleet::k8s::{self, Kind, ManifestPlan};
use crate::ops::fleet::slurm::{self, SlurmPlan, SrunEnd};
use crate::ops::fleet::ssh::{self, SshPlan};
use crate::ops::fleet::{Folder, Runner, counts, now_rfc3339};

pub const AFTER_HELP: &str = "\
Each node's report is written as DIR/<host>.json (the host name the report gives), with --certify its \
certificate as DIR/<host>.certificate.json, and DIR/fleet.json \
lists every node asked with its outcome: reported, timed out, unreachable, no gpu-doctor, or failed. \
Compare the nodes with `gpu-doctor compare DIR`.

Exit codes: 0 every node reported; 1 some node did not; 2 the command line was wrong; 3 an input \
could not be read; 4 the run itself failed (srun or kubectl could not run).";

/// `fleet`.
#[derive(Debug, Args)]
pub struct FleetArgs {
    #[command(subcommand)]
    pub engine: Engine,
}

/// The engines.
#[derive(Debug, Subcommand)]
pub enum Engine {
    /// Over SSH: `gpu-doctor report --format json` on each host through the system's ssh, with
    /// your own ssh config and agent (BatchMode: a host that would ask for a password fails).
    #[command(after_help = AFTER_HELP)]
    Ssh(SshArgs),
    /// On a SLURM cluster: `srun --ntasks-per-node=1 … gpu-doctor report --format json`. The nodes
    /// write their reports into DIR themselves, so DIR must be on a filesystem they share (your
    /// home or a project folder, not /tmp); gpu-doctor must be on their PATH, at --bin, or staged
    /// with --sbcast.
    #[command(after_help = AFTER_HELP)]
    Slurm(SlurmArgs),
    /// On Kubernetes: write a Job or DaemonSet for the GPU nodes, then collect the reports from
    /// its pods' logs.
    #[command(subcommand)]
    K8s(K8sCommand),
}

/// `fleet ssh`.
#[derive(Debug, Args)]
pub struct SshArgs {
    /// The hosts, as you would give them to ssh (`node7`, `me@10.0.0.7`, an alias from ~/.ssh/config).
    #[arg(value_name = "HOST")]
    pub hosts: Vec<String>,
    /// Also the hosts in this file, one per line (`#` starts a comment).
    #[arg(long, value_name = "FILE")]
    pub hosts_file: Option<PathBuf>,
    /// At most this many hosts at once.
    #[arg(long, short, value_name = "N", default_value_t = 16)]
    pub jobs: usize,
    /// Seconds per host, connecting and checking together.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub timeout: u64,
    /// The gpu-doctor to run on the hosts: a name on their PATH or a path.
    #[arg(long, value_name = "PATH", default_value = "gpu-doctor")]
    pub remote_bin: String,
    /// Use this ssh config file instead of ~/.ssh/config (ssh -F).
    #[arg(long, short = 'F', value_name = "FILE")]
    pub ssh_config: Option<PathBuf>,
    /// Run only the hosts that have no report in DIR's fleet.json yet (all of them, or of HOSTS).
    #[arg(long)]
    pub missing_only: bool,
    /// Also certify each node: `gpu-doctor certify --level LEVEL` after its report (1 software,
    /// 2 quick benchmark, 3 stress, 4 soak; docs/certify.md); its certificate is kept beside the
    /// report as <host>.certificate.json and `compare` shows its verdict, the failed nodes first.
    #[arg(long, value_name = "LEVEL", value_parser = clap::value_parser!(u8).range(1..=4))]
    pub certify: Option<u8>,
    /// The folder for the reports and fleet.json (created if missing).
    #[arg(long, short, value_name = "DIR")]
    pub output: PathBuf,
}

/// `fleet slurm`.
#[derive(Debug, Args)]
pub struct SlurmArgs {
    /// The partition to run in (srun --partition).
    #[arg(long, short, value_name = "P")]
    pub partition: Option<String>,
    /// How many nodes (srun --nodes).
    #[arg(long, short = 'N', value_name = "N", conflicts_with = "nodelist")]
    pub nodes: Option<u32>,
    /// Which nodes, in SLURM's syntax: `gpu[01-08],gpu12` (srun --nodelist).
    #[arg(long, short = 'w', value_name = "LIST")]
    pub nodelist: Option<String>,
    /// Copy the gpu-doctor binary to each node with sbcast first (then --bin is a file here; by
    /// default this program), and remove it afterwards.
    #[arg(long)]
    pub sbcast: bool,
    /// The gpu-doctor the nodes run: a name on their PATH or a path (default: gpu-doctor; with
    /// --sbcast, this program).
    #[arg(long, value_name = "PATH")]
    pub bin: Option<String>,
    /// Seconds for the whole run, waiting in the queue included.
    #[arg(long, value_name = "SECS", default_value_t = 3600)]
    pub timeout: u64,
    /// Run only the nodes that have no report in DIR's fleet.json yet.
    #[arg(long, conflicts_with_all = ["nodes", "nodelist", "collect"])]
    pub missing_only: bool,
    /// Write an sbatch script doing the same into FILE instead of running (submit it with
    /// `sbatch FILE`; its last step collects DIR).
    #[arg(long, value_name = "FILE", conflicts_with = "collect")]
    pub write_sbatch: Option<PathBuf>,
    /// Only build DIR/fleet.json from what the nodes wrote into DIR (after an sbatch script ran).
    #[arg(long)]
    pub collect: bool,
    /// Also certify each node: `gpu-doctor certify --level LEVEL` after its report (1 software,
    /// 2 quick benchmark, 3 stress, 4 soak; docs/certify.md); its certificate is kept beside the
    /// report as <host>.certificate.json and `compare` shows its verdict, the failed nodes first.
    #[arg(long, value_name = "LEVEL", value_parser = clap::value_parser!(u8).range(1..=4))]
    pub certify: Option<u8>,
    /// The shared folder for the reports and fleet.json (created if missing).
    #[arg(long, short, value_name = "DIR")]
    pub output: PathBuf,
    /// More srun options, after `--` (e.g. `-- --gres=gpu:1 --time=10`).
    #[arg(last = true, value_name = "SRUN OPTIONS")]
    pub srun_args: Vec<String>,
}

/// `fleet k8s`.
#[derive(Debug, Subcommand)]
pub enum K8sCommand {
    /// Write the YAML of a DaemonSet (every GPU node) or Job (--count GPU nodes) whose pods run
    /// `gpu-doctor report --format json`; apply it with `kubectl apply -f FILE`.
    Manifest(K8sManifestArgs),
    /// Collect the reports from the pods' logs (kubectl get pods, kubectl logs) into DIR.
    #[command(after_help = AFTER_HELP)]
    Collect(K8sCollectArgs),
}

/// `fleet k8s manifest`.
#[derive(Debug, Args)]
pub struct K8sManifestArgs {
    /// A DaemonSet (a pod on every GPU node) or a Job (one pod on each of --count nodes).
    #[arg(long, value_enum, default_value = "daemonset")]
    pub kind: Kind,
    /// The container image: any image with gpu-doctor on its PATH and sh.
    #[arg(long, value_name = "IMAGE", default_value = "gpu-doctor:latest")]
    pub image: String,
    /// The namespace.
    #[arg(long, short, value_name = "NS", default_value = "default")]
    pub namespace: String,
    /// For a Job: on how many GPU nodes to run.
    #[arg(long, value_name = "N")]
    pub count: Option<u32>,
    /// Request this many `nvidia.com/gpu` per pod (the pod then sees only those); by default
    /// none, and NVIDIA_VISIBLE_DEVICES=all shows it every GPU of its node.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub gpu_request: u32,
    /// Also certify each node: `gpu-doctor certify --level LEVEL` after its report in each pod (1 software,
    /// 2 quick benchmark, 3 stress, 4 soak; docs/certify.md); its certificate is kept beside the
    /// report as <host>.certificate.json and `compare` shows its verdict, the failed nodes first.
    #[arg(long, value_name = "LEVEL", value_parser = clap::value_parser!(u8).range(1..=4))]
    pub certify: Option<u8>,
    /// The YAML file to write (`-` for standard output).
    #[arg(long, short, value_name = "FILE")]
    pub output: PathBuf,
}

/// `fleet k8s collect`.
#[derive(Debug, Args)]
pub struct K8sCollectArgs {
    /// The namespace the manifest was applied in.
    #[arg(long, short, value_name = "NS", default_value = "default")]
    pub namespace: String,
    /// Which pods (kubectl --selector).
    #[arg(long, short = 'l', value_name = "SELECTOR", default_value = k8s::LABEL)]
    pub selector: String,
    /// At most this many pods' logs read at once.
    #[arg(long, short, value_name = "N", default_value_t = 16)]
    pub jobs: usize,
    /// Seconds for the whole collection; pods not read by then are rows that timed out.
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    pub timeout: u64,
    /// The folder for the reports and fleet.json (created if missing).
    #[arg(long, short, value_name = "DIR")]
    pub output: PathBuf,
}

/// Runs `fleet`; returns the exit code.
pub fn fleet(args: &FleetArgs, quiet: bool) -> Result<u8> {
    let host = SystemHost::new();
    let runner = |cmd: &Cmd| -> Result<CmdOutput, HostError> { host.run(cmd) };
    let mut progress = Progress { quiet, total: 0, ok: 0, not: 0 };
    match &args.engine {
        Engine::Ssh(a) => run_ssh(a, &runner, &mut progress),
        Engine::Slurm(a) => run_slurm(a, &runner, &mut progress),
        Engine::K8s(K8sCommand::Manifest(a)) => write_manifest(a, quiet),
        Engine::K8s(K8sCommand::Collect(a)) => {
            let mut folder = Folder::open(&a.output, "k8s", now_rfc3339(), false)?;
            let plan = k8s::CollectPlan {
                namespace: a.namespace.clone(),
                selector: a.selector.clone(),
                jobs: a.jobs,
                timeout: Duration::from_secs(a.timeout.max(1)),
            };
            let result = k8s::collect(&plan, &runner, &mut folder, &mut |e| progress.node(e));
            finish(&mut folder, result, quiet)
        }
    }
}

/// A line per node as it ends: `[3/10, 2 ok, 1 not] gpu07 (gpu07.cluster): ok, 2.1 s`.
struct Progress {
    quiet: bool,
    total: usize,
    ok: usize,
    not: usize,
}

impl Progress {
    fn node(&mut self, entry: &NodeEntry) {
        if matches!(entry.outcome, NodeOutcome::Reported { .. }) {
            self.ok += 1;
        } else {
            self.not += 1;
        }
        if self.quiet {
            return;
        }
        let total = if self.total > 0 { format!("/{}", self.total) } else { String::new() };
        let name = if entry.host == entry.engine_name {
            entry.host.clone()
        } else {
            format!("{} ({})", entry.engine_name, entry.host)
        };
        let secs = entry.seconds.map(|s| format!(", {s:.1} s")).unwrap_or_default();
        let line = format!(
            "[{}{total}, {} ok, {} not] {name}: {}{secs}",
            self.ok + self.not,
            self.ok,
            self.not,
            entry.outcome.describe()
        );
        eprintln!("{}", crate::render::text::clean(&line));
    }
}

/// Writes the manifest (also after an error, so what arrived is kept) and picks the exit code.
fn finish(folder: &mut Folder, result: Result<()>, quiet: bool) -> Result<u8> {
    if !folder.manifest().nodes.is_empty() {
        folder.finish()?;
    }
    result?;
    let (ok, not) = counts(folder.manifest());
    if !quiet {
        let path = folder.dir().join(gpu_doctor_model::fleet::MANIFEST_FILE);
        eprintln!(
            "{ok} of {} nodes reported; wrote {}",
            ok + not,
            crate::render::text::clean(&path.display().to_string())
        );
    }
    Ok(if not == 0 { exit::OK } else { exit::INCOMPLETE })
}

fn run_ssh(a: &SshArgs, runner: &Runner<'_>, progress: &mut Progress) -> Result<u8> {
    let mut hosts = a.hosts.clone();
    if let Some(file) = &a.hosts_file {
        hosts.extend(ssh::hosts_from_file(&read_hosts_file(file)?));
    }
    let mut folder = Folder::open(&a.output, "ssh", now_rfc3339(), a.missing_only)?;
    // Each host once, in the order given: the progress total counts what runs.
    let mut seen = std::collections::HashSet::new();
    hosts.retain(|h| seen.insert(h.clone()));
    if a.missing_only {
        let missing = folder.missing();
        hosts = if hosts.is_empty() { missing } else { hosts.into_iter().filter(|h| !folder.has_report(h)).collect() };
    } else if hosts.is_empty() {
        return Err(UsageError("name the hosts (HOST… or --hosts-file FILE)".into()).into());
    }
    let mut ssh_options = Vec::new();
    if let Some(config) = &a.ssh_config {
        ssh_options.extend(["-F".to_owned(), config.display().to_string()]);
    }
    progress.total = hosts.len();
    let plan = SshPlan {
        hosts,
        jobs: a.jobs,
        timeout: Duration::from_secs(a.timeout.max(1)),
        remote_bin: a.remote_bin.clone(),
        ssh_options,
        certify: a.certify,
    };
    let result = ssh::run(&plan, runner, &mut folder, &mut |e| progress.node(e));
    finish(&mut folder, result, progress.quiet)
}

/// A hosts file: at most 8 MiB (a pipe such as `<(list-nodes)` is fine, `/dev/zero` is not).
fn read_hosts_file(file: &Path) -> Result<String> {
    use std::io::Read;
    let cap = gpu_doctor_probes::host::MAX_FILE_BYTES;
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(cap as u64 + 1).read_to_end(&mut bytes))
        .map_err(|e| InputError(format!("{}: {e}", file.display())))?;
    if bytes.len() > cap {
        return Err(InputError(format!("{}: longer than {} MiB", file.display(), cap >> 20)).into());
    }
    String::from_utf8(bytes).map_err(|_| InputError(format!("{}: not UTF-8 text", file.display())).into())
}

fn run_slurm(a: &SlurmArgs, runner: &Runner<'_>, progress: &mut Progress) -> Result<u8> {
    let dir = std::path::absolute(&a.output).with_context(|| format!("{}", a.output.display()))?;
    let bin = match (&a.bin, a.sbcast) {
        (Some(bin), _) => bin.clone(),
        (None, false) => "gpu-doctor".to_owned(),
        (None, true) => std::env::current_exe().context("could not find this program to stage")?.display().to_string(),
    };
    let mut plan = SlurmPlan {
        partition: a.partition.clone(),
        nodes: a.nodes,
        nodelist: a.nodelist.clone(),
        sbcast: a.sbcast,
        bin,
        srun_args: a.srun_args.clone(),
        dir: dir.clone(),
        timeout: Duration::from_secs(a.timeout.max(1)),
        certify: a.certify,
    };
    if let Some(file) = &a.write_sbatch {
        let script = plan.sbatch_script().map_err(|e| UsageError(format!("{e:#}")))?;
        std::fs::create_dir_all(dir.join(slurm::RAW_DIR))
            .with_context(|| format!("could not create {}", dir.display()))?;
        return write_out(file, &script, progress.quiet);
    }
    let mut folder = Folder::open(&dir, "slurm", now_rfc3339(), a.missing_only)?;
    if a.collect {
        let result = slurm::collect(&dir, None, &SrunEnd::Ok, runner, &mut folder, &mut |e| progress.node(e));
        let result = result.and_then(|known| match known {
            0 => Err(InputError(format!("no node wrote into {}", dir.join(slurm::RAW_DIR).display())).into()),
            _ => Ok(()),
        });
        return finish(&mut folder, result, progress.quiet);
    }
    if a.missing_only {
        let missing = folder.missing();
        if missing.is_empty() {
            return finish(&mut folder, Ok(()), progress.quiet);
        }
        plan.nodelist = Some(missing.join(","));
    }
    slurm::prepare(&plan, &folder, a.missing_only)?;
    let result = slurm::run(&plan, runner, &mut folder, &mut |e| progress.node(e));
    finish(&mut folder, result, progress.quiet)
}

fn write_manifest(a: &K8sManifestArgs, quiet: bool) -> Result<u8> {
    let plan = ManifestPlan {
        kind: a.kind,
        image: a.image.clone(),
        namespace: a.namespace.clone(),
        count: a.count,
        gpu_request: a.gpu_request,
        certify: a.certify,
    };
    let yaml = k8s::manifest(&plan).map_err(|e| UsageError(format!("{e:#}")))?;
    write_out(&a.output, &yaml, quiet)
}

/// Writes `text` to `path` (`-`: standard output).
fn write_out(path: &Path, text: &str, quiet: bool) -> Result<u8> {
    crate::files::emit(Some(path), text, quiet)?;
    Ok(exit::OK)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    fn engine(args: &[&str]) -> Result<Engine, clap::Error> {
        let cli = Cli::try_parse_from([&["gpu-doctor", "fleet"][..], args].concat())?;
        match cli.command {
            Some(Command::Fleet(f)) => Ok(f.engine),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn slurm_takes_srun_options_after_dashes_and_one_way_to_pick_nodes() {
        let Engine::Slurm(a) =
            engine(&["slurm", "-p", "gpu", "-N", "4", "-o", "f", "--", "--gres=gpu:1", "-t", "5"]).unwrap()
        else {
            panic!()
        };
        assert_eq!((a.partition.as_deref(), a.nodes), (Some("gpu"), Some(4)));
        assert_eq!(a.srun_args, ["--gres=gpu:1", "-t", "5"]);
        assert!(engine(&["slurm", "-N", "4", "-w", "gpu[1-4]", "-o", "f"]).is_err());
        assert!(engine(&["slurm", "--missing-only", "-w", "gpu1", "-o", "f"]).is_err());
        assert!(engine(&["slurm", "--collect", "--write-sbatch", "x", "-o", "f"]).is_err());
        assert!(engine(&["slurm"]).is_err(), "the folder is required");
    }

    #[test]
    fn ssh_and_k8s_defaults() {
        let Engine::Ssh(a) = engine(&["ssh", "a", "b", "-o", "f"]).unwrap() else { panic!() };
        assert_eq!((a.hosts.len(), a.jobs, a.timeout, a.remote_bin.as_str()), (2, 16, 120, "gpu-doctor"));
        let Engine::K8s(K8sCommand::Manifest(m)) = engine(&["k8s", "manifest", "-o", "-"]).unwrap() else { panic!() };
        assert_eq!((m.kind, m.namespace.as_str(), m.gpu_request), (Kind::Daemonset, "default", 0));
        let Engine::K8s(K8sCommand::Collect(c)) = engine(&["k8s", "collect", "-o", "d"]).unwrap() else { panic!() };
        assert_eq!(c.selector, k8s::LABEL);
    }

    #[test]
    fn collecting_a_folder_no_node_wrote_into_is_an_input_error() {
        let dir = tempfile::tempdir().unwrap();
        let Engine::Slurm(a) = engine(&["slurm", "--collect", "-o", dir.path().to_str().unwrap()]).unwrap() else {
            panic!()
        };
        let never = |_: &Cmd| -> Result<CmdOutput, HostError> { panic!("nothing may run") };
        let mut progress = Progress { quiet: true, total: 0, ok: 0, not: 0 };
        let err = run_slurm(&a, &never, &mut progress).unwrap_err();
        assert_eq!(exit::for_error(&err), exit::INPUT, "{err:#}");
    }

    #[cfg(unix)]
    #[test]
    fn a_hosts_file_is_capped() {
        let err = read_hosts_file(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(exit::for_error(&err), exit::INPUT, "{err:#}");
        assert!(format!("{err:#}").contains("longer than 8 MiB"), "{err:#}");
    }

    #[test]
    fn ssh_without_hosts_is_a_usage_error() {
        let dir = tempfile::tempdir().unwrap();
        let Engine::Ssh(a) = engine(&["ssh", "-o", dir.path().to_str().unwrap()]).unwrap() else { panic!() };
        let never = |_: &Cmd| -> Result<CmdOutput, HostError> { panic!("nothing may run") };
        let mut progress = Progress { quiet: true, total: 0, ok: 0, not: 0 };
        let err = run_ssh(&a, &never, &mut progress).unwrap_err();
        assert_eq!(exit::for_error(&err), exit::USAGE);
    }
}
