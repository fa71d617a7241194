//! `fleet slurm`: one `gpu-doctor report --format json` per node of a SLURM allocation.
//!
//! `srun --ntasks-per-node=1 --output=DIR/.slurm/%N.out --error=DIR/.slurm/%N.err … sh -c WRAP`
//! runs one task per node; slurmstepd on each node writes that node's output into the folder, so
//! DIR must be on a filesystem the nodes share. The wrapper ([`WRAP`]) lets task 0 write the
//! allocation's node list (`$SLURM_JOB_NODELIST`) beside them, then runs gpu-doctor: afterwards
//! `scontrol show hostnames` expands that list and every node of the allocation gets a row, with
//! its report or the reason there is none. With `--sbcast` the run is `salloc … sh -c SCRIPT`,
//! whose script stages the binary on every node with `sbcast` first. `--write-sbatch` writes the
//! same steps as a batch script that ends with `gpu-doctor fleet slurm --collect`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use gpu_doctor_model::fleet::{NodeEntry, NodeOutcome};
use gpu_doctor_model::shell::quote_posix;
use gpu_doctor_probes::host::{Cmd, CmdOutput, HostError, Links, MAX_FILE_BYTES, read_regular_file};

use super::{Folder, NodeResult, Runner, judge, last_line};

/// The folder inside DIR where the nodes write their raw output.
pub const RAW_DIR: &str = ".slurm";
/// The allocation's node list, as SLURM writes it (`gpu[01-04]`), inside [`RAW_DIR`].
pub const NODELIST_FILE: &str = "nodelist";

/// Run on each node as `sh -c WRAP gpu-doctor-fleet BIN NODELIST_PATH`: task 0 writes the node
/// list, then every task becomes gpu-doctor (a missing one is sh's "not found", exit 127).
pub const WRAP: &str = r#"if [ "$SLURM_PROCID" = 0 ]; then printf '%s\n' "$SLURM_JOB_NODELIST" > "$2"; fi; exec "$1" report --format json"#;

/// [`WRAP`], or with `certify` (a level) the report and then the certificate
/// ([`super::node_script`]).
pub fn wrap(certify: Option<u8>) -> String {
    match certify {
        None => WRAP.to_owned(),
        Some(_) => format!(
            r#"if [ "$SLURM_PROCID" = 0 ]; then printf '%s\n' "$SLURM_JOB_NODELIST" > "$2"; fi; {}"#,
            super::node_script(r#""$1""#, certify)
        ),
    }
}

/// Where `--sbcast` stages the binary on each node (expanded by sh inside the allocation).
const STAGED: &str = r#""${TMPDIR:-/tmp}/gpu-doctor-fleet-$SLURM_JOB_ID""#;

/// What `fleet slurm` is asked to do.
#[derive(Debug, Clone, Default)]
pub struct SlurmPlan {
    /// `--partition`.
    pub partition: Option<String>,
    /// `--nodes`: how many nodes.
    pub nodes: Option<u32>,
    /// `--nodelist`: which nodes (SLURM's host list syntax, `gpu[01-04],gpu07`).
    pub nodelist: Option<String>,
    /// Stage `bin` on the nodes with sbcast (then `bin` is a file on this machine).
    pub sbcast: bool,
    /// The gpu-doctor the nodes run: a name on their PATH or a path (with `sbcast`: a local file).
    pub bin: String,
    /// More srun options, passed as given.
    pub srun_args: Vec<String>,
    /// The fleet folder, absolute (the nodes write into it).
    pub dir: PathBuf,
    /// For the whole run, queueing included.
    pub timeout: Duration,
    /// `--certify LEVEL`: each node also runs `certify --level LEVEL`, its certificate kept beside
    /// its report.
    pub certify: Option<u8>,
}

impl SlurmPlan {
    fn raw(&self) -> PathBuf {
        self.dir.join(RAW_DIR)
    }

    /// `--partition`, `--nodes`, `--nodelist` and `--ntasks-per-node=1`: how the allocation is asked for.
    fn allocation(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(p) = &self.partition {
            args.push(format!("--partition={p}"));
        }
        if let Some(n) = self.nodes {
            args.push(format!("--nodes={n}"));
        }
        if let Some(list) = &self.nodelist {
            args.push(format!("--nodelist={list}"));
        }
        args.push("--ntasks-per-node=1".to_owned());
        args
    }

    /// The srun of the step, from its options to `sh -c WRAP gpu-doctor-fleet` (the binary and the
    /// node list path follow).
    fn step(&self, with_allocation: bool) -> Vec<String> {
        let raw = self.raw();
        let mut argv = vec!["srun".to_owned()];
        if with_allocation {
            argv.extend(self.allocation());
        } else {
            argv.push("--ntasks-per-node=1".to_owned());
        }
        argv.push(format!("--output={}", raw.join("%N.out").display()));
        argv.push(format!("--error={}", raw.join("%N.err").display()));
        argv.extend(self.srun_args.iter().cloned());
        argv.extend(["sh".to_owned(), "-c".to_owned(), wrap(self.certify), "gpu-doctor-fleet".to_owned()]);
        argv
    }

    fn nodelist_path(&self) -> String {
        self.raw().join(NODELIST_FILE).display().to_string()
    }

    /// The sh lines that stage the binary (`$1`), run the step on the staged copy, run `then`
    /// (sh text that may use `"$staged"`) and remove the copies, exiting with the step's status.
    fn staged_step(&self, then: &str) -> String {
        let srun = sh_line(self.step(false));
        format!(
            "staged={STAGED}\nsbcast --force \"$1\" \"$staged\" || exit 1\n{srun} \"$staged\" {list}\nstatus=$?\n{then}\
             srun --ntasks-per-node=1 --output=/dev/null rm -f \"$staged\"\nexit $status\n",
            list = quote_posix(&self.nodelist_path()),
        )
    }

    /// The command `fleet slurm` runs: `srun …`, or with `sbcast`, `salloc … sh -c SCRIPT`.
    pub fn command(&self) -> Cmd {
        let argv = if self.sbcast {
            let mut argv = vec!["salloc".to_owned()];
            argv.extend(self.allocation());
            argv.extend(["sh".to_owned(), "-c".to_owned(), self.staged_step(""), "gpu-doctor-fleet".to_owned()]);
            argv.push(self.bin.clone());
            argv
        } else {
            let mut argv = self.step(true);
            argv.extend([self.bin.clone(), self.nodelist_path()]);
            argv
        };
        Cmd::new(argv).timeout(self.timeout)
    }

    /// An sbatch script doing what `command` does, then collecting the folder on the batch node.
    /// Values that go on `#SBATCH` lines (which sbatch splits at spaces, unquoted) must be plain.
    pub fn sbatch_script(&self) -> Result<String> {
        let mut script =
            String::from("#!/bin/sh\n# Written by gpu-doctor fleet slurm --write-sbatch; submit with: sbatch FILE\n");
        script.push_str("#SBATCH --job-name=gpu-doctor-fleet\n");
        let log = self.raw().join("sbatch-%j.log").display().to_string();
        for arg in self.allocation().into_iter().chain([format!("--output={log}")]) {
            if arg.chars().any(|c| c.is_whitespace() || matches!(c, '"' | '\'' | '\\' | '#' | '$' | '`')) {
                bail!("{arg:?} cannot go on an #SBATCH line (no spaces, quotes, `#`, `$` or backslashes)");
            }
            script.push_str(&format!("#SBATCH {arg}\n"));
        }
        script.push_str(&format!("set -u\nset -- {}\n", quote_posix(&self.bin)));
        let collect = sh_line(
            ["fleet", "slurm", "--collect", "-o"]
                .map(str::to_owned)
                .into_iter()
                .chain([self.dir.display().to_string()]),
        );
        if self.sbcast {
            // The batch node is a node of the allocation: it collects with its staged copy.
            script.push_str(&self.staged_step(&format!("\"$staged\" {collect}\n")));
        } else {
            let srun = sh_line(self.step(false));
            script.push_str(&format!("{srun} \"$1\" {}\n", quote_posix(&self.nodelist_path())));
            script.push_str(&format!("\"$1\" {collect}\n"));
        }
        Ok(script)
    }
}

/// Words as one POSIX sh line, each quoted (sh can quote anything).
fn sh_line(words: impl IntoIterator<Item = String>) -> String {
    words.into_iter().map(|w| quote_posix(&w)).collect::<Vec<_>>().join(" ")
}

/// Removes an earlier run's node output from the raw folder: only the files this tool's earlier
/// run (the folder's manifest) had the nodes write, `NODE.out` and `NODE.err`, and the node list;
/// every other file there is left alone. Kept with `missing_only`: those nodes are not run again,
/// and a re-run's files replace their own. The raw folder must be a folder, not a symlink.
pub fn prepare(plan: &SlurmPlan, folder: &Folder, missing_only: bool) -> Result<()> {
    let raw = plan.raw();
    match std::fs::symlink_metadata(&raw) {
        Ok(meta) if meta.file_type().is_symlink() || !meta.is_dir() => bail!(
            "{} is a symbolic link or not a folder; gpu-doctor only writes into a folder of its own there (remove it first)",
            raw.display()
        ),
        Ok(_) if !missing_only => {
            let names = folder.earlier_nodes().iter().filter(|n| plain_node_name(n));
            let files = names.flat_map(|n| [format!("{n}.out"), format!("{n}.err")]);
            for name in files.chain([NODELIST_FILE.to_owned()]) {
                let path = raw.join(&name);
                // Only a regular file: a symlink or anything else there is not this tool's.
                if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
                    std::fs::remove_file(&path).with_context(|| format!("could not remove {}", path.display()))?;
                }
            }
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("could not look at {}", raw.display())),
    }
    std::fs::create_dir_all(&raw).with_context(|| format!("could not create {}", raw.display()))
}

/// Whether `name` is a plain node name, safe as a file name in the raw folder: letters, digits,
/// `-`, `_` and `.`, not starting with `.` or `-` (so never `..` nor an option), at most 255 bytes.
pub fn plain_node_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && !name.starts_with(['.', '-'])
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Runs the plan, then collects what arrived (see [`collect`]). srun's own failure is an error
/// only when no node is known at all; otherwise it is the reason of each node without output.
pub fn run(
    plan: &SlurmPlan,
    runner: &Runner<'_>,
    folder: &mut Folder,
    progress: &mut dyn FnMut(&NodeEntry),
) -> Result<()> {
    let cmd = plan.command();
    let answer = runner(&cmd);
    let srun = match &answer {
        Ok(out) if out.success() => SrunEnd::Ok,
        Ok(out) => SrunEnd::Failed(last_line(&out.stderr)),
        Err(HostError::Timeout { .. }) => SrunEnd::TimedOut,
        Err(e) => SrunEnd::Failed(e.to_string()),
    };
    let known = collect(&plan.dir, plan.nodelist.as_deref(), &srun, runner, folder, progress)?;
    if known == 0 {
        let said = match &srun {
            SrunEnd::Failed(why) => why.clone(),
            SrunEnd::TimedOut => format!("timed out after {} s", plan.timeout.as_secs()),
            SrunEnd::Ok => "no node wrote anything".to_owned(),
        };
        bail!("{} gave no node: {said}", cmd.argv[0]);
    }
    Ok(())
}

/// How the srun (or salloc) of a run ended, for the nodes without output.
#[derive(Debug, Clone, PartialEq)]
pub enum SrunEnd {
    /// It exited 0 (or is not known: `--collect` after sbatch).
    Ok,
    /// It failed, with its last line.
    Failed(String),
    /// It ran past the deadline and was killed.
    TimedOut,
}

/// Builds the rows from `DIR/.slurm`: every node of the allocation's node list (or of `nodelist`
/// when the list never arrived), and any other node that left output there. A node whose report
/// is already in `folder` (a `missing_only` run) is kept as it is. Rows have no seconds: the nodes
/// ran at once, in one step. Returns how many nodes are known.
pub fn collect(
    dir: &Path,
    nodelist: Option<&str>,
    srun: &SrunEnd,
    runner: &Runner<'_>,
    folder: &mut Folder,
    progress: &mut dyn FnMut(&NodeEntry),
) -> Result<usize> {
    let raw = dir.join(RAW_DIR);
    let written = read_regular_file(&raw.join(NODELIST_FILE), MAX_FILE_BYTES, Links::Refuse)
        .ok()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
    let mut nodes = match written.as_deref().map(str::trim).filter(|l| !l.is_empty()).or(nodelist) {
        Some(list) => hostnames(list, runner)?,
        None => Vec::new(),
    };
    let mut left: Vec<String> = std::fs::read_dir(&raw)
        .map(|entries| {
            entries.flatten().filter_map(|e| e.file_name().to_str()?.strip_suffix(".out").map(str::to_owned)).collect()
        })
        .unwrap_or_default();
    left.sort();
    for node in left {
        if !nodes.contains(&node) {
            nodes.push(node);
        }
    }
    for node in &nodes {
        if folder.has_report(node) {
            continue;
        }
        let result = node_result(&raw, node, srun, dir);
        let entry = folder.add(node, result, None)?;
        progress(&entry);
    }
    Ok(nodes.len())
}

/// One node's row from its `.out` and `.err` files: regular files in the raw folder (no symlink
/// followed), at most `MAX_FILE_BYTES` each, and only for a plain node name.
fn node_result(raw: &Path, node: &str, srun: &SrunEnd, dir: &Path) -> NodeResult {
    if !plain_node_name(node) {
        return NodeResult::Outcome(NodeOutcome::Failed {
            reason: "not a plain node name; its output files were not read".to_owned(),
        });
    }
    let read = |ext: &str| match read_regular_file(&raw.join(format!("{node}.{ext}")), MAX_FILE_BYTES, Links::Refuse) {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(HostError::NotFound { .. }) => Ok(None),
        Err(e) => Err(format!("{node}.{ext}: {}", crate::render::text::clean(&e.to_string()))),
    };
    let (out, err) = match (read("out"), read("err")) {
        (Ok(out), Ok(err)) => (out, err),
        (Err(why), _) | (_, Err(why)) => return NodeResult::Outcome(NodeOutcome::Failed { reason: why }),
    };
    match (out, err) {
        (None, None) => NodeResult::Outcome(match srun {
            SrunEnd::TimedOut => NodeOutcome::TimedOut,
            SrunEnd::Failed(why) if !why.is_empty() => NodeOutcome::Failed { reason: format!("no output: {why}") },
            _ => NodeOutcome::Failed {
                reason: format!(
                    "no output arrived in {} (it must be on a filesystem the nodes share)",
                    crate::render::text::clean(&dir.display().to_string())
                ),
            },
        }),
        (out, err) => {
            let out = CmdOutput { status: None, stdout: out.unwrap_or_default(), stderr: err.unwrap_or_default() };
            let said_nothing = out.stderr.trim().is_empty();
            match judge(&out) {
                NodeResult::Outcome(NodeOutcome::Failed { .. }) if said_nothing => {
                    NodeResult::Outcome(NodeOutcome::Failed { reason: "printed no report".to_owned() })
                }
                result => result,
            }
        }
    }
}

/// A SLURM host list (`gpu[01-03],login`) as node names, through `scontrol show hostnames`.
pub fn hostnames(list: &str, runner: &Runner<'_>) -> Result<Vec<String>> {
    let cmd = Cmd::new(["scontrol", "show", "hostnames", list]).timeout(Duration::from_secs(30));
    let out = runner(&cmd).map_err(|e| anyhow::anyhow!("could not expand the node list {list:?}: {e}"))?;
    if !out.success() {
        bail!("scontrol could not expand the node list {list:?}: {}", last_line(&out.stderr));
    }
    Ok(out.stdout.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_owned).collect())
}

#[cfg(test)]
mod tests;
