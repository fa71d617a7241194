//! `gpu-doctor certify`: one run from a machine to a verdict kept as a certificate. Level 1 is the
//! live check with every Python environment probed deep, judged; levels 2 to 4 add the benchmark
//! (`ops::bench`) on every GPU, health before and after, and the stress tests the benchmark plan
//! offers. The rules are `gpu_doctor_judge::certify`; the certificate is
//! `gpu_doctor_model::certify`; its files are written through `files`. Certify changes nothing
//! on the machine. `--verify FILE` checks a kept certificate: intact, and this machine.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;
use gpu_doctor_model::certify::{Level, MachineIdentity, Verdict};

use crate::cli::args::{ProbeArgs, ReplayArg};
use crate::exit;
use crate::ops;
use crate::ops::certify::{Certify, Machine, read_certificate, run};
use crate::render::certificate as render;

/// `certify --help` text after the options.
pub const AFTER_HELP: &str = "\
Levels (--level, default 2):
  1  software, seconds: every check of `check`, every Python environment
     imported (--deep), each GPU framework sees every GPU. No GPU load.
  2  quick, about 2 minutes a GPU: + the quick benchmark on each GPU (copies,
     device memory, GEMM, FMA), judged; pinned copies against the link; GPUs of
     one product against each other; Xid lines and memory errors before and
     after.
  3  stress, about 15 minutes: + a sustained GEMM load of at least 3 minutes,
     the memory test over most of the free memory, P2P between every pair,
     bidirectional copies.
  4  soak, --duration (default an hour): level 3 in rounds until then, each
     GPU's FP16 GEMM in every round against its first.
Levels 2-4 have never run on a GPU yet. Without a GPU, or under --replay, they end INCOMPLETE \
and the certificate says what could not be measured and why.

Writes certificate.json, certificate.md and certificate.html into --out (default: the current \
folder) and prints the verdict first. The thresholds and their sources: docs/certify.md.

Examples:

  gpu-doctor certify --level 1
  gpu-doctor certify --out ~/certs/ws-01
  gpu-doctor certify --verify ~/certs/ws-01/certificate.json
  gpu-doctor certify --against ~/certs/ws-01/certificate.json --out now

Exit codes: 0 PASS; 1 FAIL; 5 PASS WITH WARNINGS; 6 INCOMPLETE; with --verify, \
0 intact and this machine, 1 altered, 7 intact but another machine; 2 the command \
line was wrong; 3 an input (a replay folder, the file to verify) could not be read; \
4 gpu-doctor itself failed.";

/// `certify`.
#[derive(Debug, Args)]
pub struct CertifyArgs {
    /// How much to run: 1 software, 2 quick benchmark, 3 stress, 4 soak (see below).
    #[arg(long, value_name = "1|2|3|4", default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=4))]
    pub level: u8,
    /// The folder to write the certificate files into (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Level 4: how long the rounds of level 3 go on, seconds (default 3600; at least one more round
    /// runs after the first).
    #[arg(long, value_name = "SECS")]
    pub duration: Option<u32>,
    /// Replace user and host names, home folders, serial numbers and UUIDs, so the certificate can
    /// be shared in public (`--verify` can then no longer tell the machine).
    #[arg(long)]
    pub redact: bool,
    /// Print the certificate as JSON on standard output instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// Check a kept certificate instead: is the file intact (its SHA-256), and is this the machine
    /// it describes (the same GPUs by UUID; with no GPU, the same host)?
    #[arg(long, value_name = "FILE", conflicts_with_all = ["out", "duration", "against"])]
    pub verify: Option<PathBuf>,
    /// Also compare this run with a kept certificate: a figure more than 10 % worse is a warning,
    /// a finding it did not have is named.
    #[arg(long, value_name = "FILE")]
    pub against: Option<PathBuf>,
    #[command(flatten)]
    pub probe: ProbeArgs,
    #[command(flatten)]
    pub replay: ReplayArg,
}

/// `certify`: returns the exit code.
pub fn certify(machine: &Machine<'_>, args: &CertifyArgs, quiet: bool) -> Result<u8> {
    if let Some(file) = &args.verify {
        return verify(machine, file, args.json);
    }
    let level = Level::from_number(args.level).ok_or_else(|| exit::UsageError("--level is 1 to 4".into()))?;
    if args.duration.is_some() && level != Level::Soak {
        return Err(exit::UsageError("--duration is the length of level 4's soak: add --level 4".into()).into());
    }
    // Read before minutes of measuring: an unreadable file is an input error now.
    let kept = args.against.as_deref().map(read_certificate).transpose()?;
    let how = Certify {
        level,
        duration: args.duration,
        pythons: args.probe.pythons.clone(),
        kept,
        redact: args.redact,
        cancel: Arc::default(),
    };
    let cert = run(machine, &how, &mut |step| {
        if !quiet {
            eprintln!("{}", crate::render::text::clean(step));
        }
    })?;
    let dir = args.out.clone().unwrap_or_else(|| PathBuf::from("."));
    std::fs::create_dir_all(&dir).with_context(|| format!("could not create {}", dir.display()))?;
    let written = render::files(&cert).context("could not serialize the certificate")?;
    let text = if args.json { written[0].1.clone() } else { render::summary(&cert) };
    crate::files::to_stdout(text.as_bytes())?;
    for (name, body) in written {
        let path = dir.join(name);
        crate::files::write_file(&path, body)?;
        if !quiet {
            eprintln!("wrote {}", crate::render::text::clean(&path.display().to_string()));
        }
    }
    Ok(code(cert.verdict))
}

/// The exit code of a verdict.
pub fn code(verdict: Verdict) -> u8 {
    match verdict {
        Verdict::Pass => exit::OK,
        Verdict::Fail => exit::FINDINGS,
        Verdict::PassWithWarnings => exit::CERTIFY_WARNINGS,
        Verdict::Incomplete => exit::CERTIFY_INCOMPLETE,
    }
}

/// `certify --verify FILE`: whether the file is intact, and whether this machine is the one it
/// describes; both said.
fn verify(machine: &Machine<'_>, file: &Path, json: bool) -> Result<u8> {
    let cert = read_certificate(file)?;
    let intact = cert.intact().context("could not hash the certificate")?;
    let snap = ops::snapshot(machine.host, &ops::options(&ProbeArgs::default(), machine.recorded))?;
    let here = MachineIdentity::of(&snap);
    let redacted = cert.machine.gpus.iter().any(|g| g.uuid.as_deref().is_some_and(|u| u.contains("redacted")));
    let same = if redacted {
        Err("cannot tell: the certificate was written with --redact, which replaced its GPUs' UUIDs".to_owned())
    } else {
        cert.machine.same_machine(&here)
    };
    let code = match (intact, &same) {
        (false, _) => exit::FINDINGS,
        (true, Err(_)) => exit::VERIFY_OTHER_MACHINE,
        (true, Ok(_)) => exit::OK,
    };
    let text = if json {
        let out = serde_json::json!({
            "file": file.display().to_string(),
            "intact": intact,
            "same_machine": same.is_ok(),
            "machine": match &same { Ok(w) | Err(w) => w },
            "verdict": cert.verdict,
            "level": cert.level.number(),
        });
        serde_json::to_string_pretty(&out).context("could not serialize the answer")? + "\n"
    } else {
        let first = if intact {
            format!("intact: the SHA-256 matches ({})", cert.sha256)
        } else {
            "ALTERED: the SHA-256 does not match the content; the file was changed after it was written".to_owned()
        };
        let second = match &same {
            Ok(w) => format!("this machine: yes ({w})"),
            Err(w) => format!("this machine: NO ({w})"),
        };
        let said = format!("it says: {}", render::headline(&cert));
        let clean = crate::render::text::clean;
        format!("{}\n{}\n{}\n", clean(&first), clean(&second), clean(&said))
    };
    crate::files::to_stdout(text.as_bytes())?;
    Ok(code)
}
