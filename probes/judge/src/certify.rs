//! `certify`'s threshold rules: pure functions from measurements (injected, so every rule is tested
//! without a GPU) to [`Check`]s, each with its threshold and the source of its number, and the
//! overall [`Verdict`] of a set of checks. The diagnosis findings and the benchmark's own verdicts
//! are reused as they are (`diagnose`, `bench::verdict`); the rules here add what a certificate
//! needs beyond them.

use gpu_doctor_model::bench::judgement::Verdict as BenchVerdict;
use gpu_doctor_model::bench::record::TelemetryPoint;
use gpu_doctor_model::bench::run::{BenchRun, TestStatus};
use gpu_doctor_model::certify::{Certificate, Check, CheckVerdict, Measured, Stage, Verdict};
use gpu_doctor_model::{
    AerCounters, DeepFacts, EccChange, Finding, GpuHealth, Probed, PythonEnv, Severity, XidEvent, is_slowdown,
};

/// One threshold rule as `docs/certify.md` lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// The id its checks carry (a finding's check is `finding.<finding id>`).
    pub id: &'static str,
    /// When it passes.
    pub pass: &'static str,
    /// When it warns (`—` when it never does).
    pub warn: &'static str,
    /// When it fails.
    pub fail: &'static str,
    /// Where the number comes from.
    pub source: &'static str,
}

/// Sustained compute must stay at or above this share of the GPU's own early figure.
pub const SUSTAINED_MIN_RATIO: f64 = 0.95;
/// A GPU more than this share below the best identical GPU in the machine warns.
pub const PEER_TOLERANCE: f64 = 0.10;
/// `--against`: a figure more than this share worse than the kept certificate's warns.
pub const AGAINST_TOLERANCE: f64 = 0.10;
/// Pinned copies must carry at least this share of the link's payload bandwidth.
pub const PINNED_MIN_SHARE: f64 = 0.80;

const SOURCE_DCGM_STRESS: &str = "DCGM targeted stress: TS_STR_TARGET_PERF_MIN_RATIO = 0.95 (default of \
    target_perf_min_ratio), NVIDIA/DCGM TargetedStress_wrapper.cpp; \
    https://docs.nvidia.com/datacenter/dcgm/latest/reference/diagnostics/plugins/targeted-stress.html";
const SOURCE_FRYER: &str = "gpu-fryer --tflops-tolerance, default 10 (% of the best GPU), \
    https://github.com/huggingface/gpu-fryer/blob/main/README.md";
const SOURCE_LINK: &str = "issue 31: a link may train down while idle (PCIe ASPM/L-states), never under load; \
    gpu-doctor's link facts (probes/model/src/link.rs, IDLE_NOTE)";
const SOURCE_PINNED: &str = "issue 31 (80 % of the link's payload bandwidth, which gpu-doctor's link facts compute \
    after encoding and TLP overhead; probes/judge/src/bench/verdict.rs judges 70 % as normal for a plain benchmark)";
const SOURCE_SLOWDOWN: &str = "NVML clock-event reasons (nvmlClocksEventReasons: HW slowdown, HW/SW thermal \
    slowdown, power brake), https://docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html";
const SOURCE_XID: &str = "DCGM diagnostic plugin: any Xid during the load fails, \
    https://docs.nvidia.com/datacenter/dcgm/latest/reference/diagnostics/plugins/diagnostic.html";
const SOURCE_ECC: &str = "DCGM diagnostic plugin: uncorrectable memory errors during the load fail; NVML row \
    remapping (a pending remap needs a reset), https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html";
const SOURCE_PCIE: &str = "Linux Documentation/PCI/pcieaer-howto.rst: correctable errors are corrected by the \
    hardware without loss of data, uncorrectable ones make a transaction (non-fatal) or the link (fatal) unreliable; \
    counters: Documentation/ABI/testing/sysfs-bus-pci-devices-aer_stats; replays (link-level retransmissions): NVML \
    nvmlDeviceGetPcieReplayCounter, and DCGM's health watch flags more than 8 a minute \
    (DCGM_LIMIT_MAX_PCIREPLAY_RATE, NVIDIA/DCGM dcgmlib/src/DcgmGpuHardwareLimits.h)";
const SOURCE_FRAMEWORK: &str = "issue 31: each GPU framework in each environment imports and sees every GPU \
    (assets/python/probe.py: torch.cuda.device_count(), tf.config.list_physical_devices('GPU'), jax.devices(), \
    cupy getDeviceCount(), onnxruntime get_available_providers())";
const SOURCE_PRESENT: &str =
    "issue 31: a certificate is about a GPU machine, and never PASS over a part that did not run";
const SOURCE_AGAINST: &str = "issue 31: `certify --against FILE`: a figure more than 10 % worse than the kept \
    certificate's is a warning, a new finding is named";
const SOURCE_SMOKE: &str = "assets/python/probe.py --smoke: a matrix product on each visible GPU against the one \
    computed in Python, TOLERANCE = 1e-3 of the largest entry (probe.py line 203)";
const SOURCE_FINDING: &str = "gpu-doctor's diagnosis rules, each with its own source (docs/diagnosis.md)";
const SOURCE_BENCH: &str =
    "gpu-doctor's benchmark verdicts: expected value and normal share per metric (probes/judge/src/bench/verdict.rs)";

/// Every rule of a certificate, for `docs/certify.md`.
pub const RULES: &[Rule] = &[
    Rule {
        id: "finding.*",
        pass: "no error or warning finding",
        warn: "a warning-level finding",
        fail: "an error-level finding",
        source: SOURCE_FINDING,
    },
    Rule {
        id: "gpus.present",
        pass: "the driver lists at least one GPU (none listed: not run, nothing to certify; a GPU on the bus the \
               driver does not see is an error finding)",
        warn: "—",
        fail: "every way of asking the driver failed",
        source: SOURCE_PRESENT,
    },
    Rule {
        id: "framework.sees_gpus",
        pass: "the framework imports and sees every GPU the driver lists",
        warn: "—",
        fail: "the import fails, or it sees fewer GPUs (none included)",
        source: SOURCE_FRAMEWORK,
    },
    Rule {
        id: "framework.smoke",
        pass: "the framework's product is right on every GPU the driver lists",
        warn: "—",
        fail: "a wrong product, an error, or fewer GPUs than the driver lists",
        source: SOURCE_SMOKE,
    },
    Rule {
        id: "bench.<metric>",
        pass: "at or above the normal share of the expected value",
        warn: "below it (LOW), or above theory",
        fail: "a correctness check failed (wrong GEMM result, memory errors)",
        source: SOURCE_BENCH,
    },
    Rule {
        id: "link.under_load",
        pass: "PCIe generation and width at their maximum while copying, the highest NVML sample (10 Hz) of the \
               host→device copy test (any generation while idle)",
        warn: "—",
        fail: "below the maximum generation or width while copying",
        source: SOURCE_LINK,
    },
    Rule {
        id: "link.pinned_copy",
        pass: "pinned copies ≥ 0.80 × the link's payload bandwidth",
        warn: "below 0.80 ×",
        fail: "—",
        source: SOURCE_PINNED,
    },
    Rule {
        id: "gpus.identical_within",
        pass: "within 10 % of the best GPU of the same product in the machine",
        warn: "more than 10 % below it",
        fail: "—",
        source: SOURCE_FRYER,
    },
    Rule {
        id: "stress.sustained",
        pass: "sustained ≥ 0.95 × the GPU's own early figure",
        warn: "—",
        fail: "below 0.95 ×",
        source: SOURCE_DCGM_STRESS,
    },
    Rule {
        id: "soak.drift",
        pass: "each later round's FP16 GEMM ≥ 0.95 × the same GPU's first round",
        warn: "—",
        fail: "below 0.95 ×, or a round that measured nothing",
        source: SOURCE_DCGM_STRESS,
    },
    Rule {
        id: "stress.slowdown",
        pass: "no thermal or power slowdown reason during the load",
        warn: "HW slowdown, HW/SW thermal slowdown or power brake during the load",
        fail: "—",
        source: SOURCE_SLOWDOWN,
    },
    Rule {
        id: "health.xid",
        pass: "no new Xid line in the kernel log during the run",
        warn: "—",
        fail: "any new Xid",
        source: SOURCE_XID,
    },
    Rule {
        id: "health.memory",
        pass: "no new uncorrectable error, retired page or remapped row, nothing pending",
        warn: "—",
        fail: "any of them",
        source: SOURCE_ECC,
    },
    Rule {
        id: "health.pcie",
        pass: "no new AER error and no new PCIe replay on the GPU's PCI function (where readable: NVML's replay \
            counter, the kernel's aer_dev_* counters; neither readable: info)",
        warn: "new correctable AER errors, or the replay counter rose",
        fail: "a new uncorrectable (non-fatal or fatal) AER error",
        source: SOURCE_PCIE,
    },
    Rule {
        id: "against.figure",
        pass: "within 10 % of the same check's figure in the kept certificate",
        warn: "more than 10 % worse (lower, or higher for a time)",
        fail: "—",
        source: SOURCE_AGAINST,
    },
    Rule {
        id: "against.new_finding",
        pass: "no failed or warning finding the kept certificate did not have",
        warn: "a finding the kept certificate did not have, named",
        fail: "—",
        source: SOURCE_AGAINST,
    },
];

/// [`RULES`] as the Markdown table `docs/certify.md` holds (a test keeps the two the same).
pub fn rules_markdown() -> String {
    let cell = |s: &str| s.replace('|', "\\|").split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::from("| check | pass | warn | fail | source |\n|---|---|---|---|---|\n");
    for r in RULES {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            r.id,
            cell(r.pass),
            cell(r.warn),
            cell(r.fail),
            cell(r.source)
        ));
    }
    out
}

fn check(id: &str, stage: Stage, subject: &str, measured: Measured, verdict: CheckVerdict, rule: Rule) -> Check {
    let threshold = if rule.warn == "—" && rule.fail == "—" {
        rule.pass.to_owned()
    } else if rule.warn == "—" {
        format!("pass: {}; fail: {}", rule.pass, rule.fail)
    } else if rule.fail == "—" {
        format!("pass: {}; warn: {}", rule.pass, rule.warn)
    } else {
        format!("pass: {}; warn: {}; fail: {}", rule.pass, rule.warn, rule.fail)
    };
    Check {
        id: id.to_owned(),
        stage,
        subject: subject.to_owned(),
        measured,
        threshold,
        source: rule.source.to_owned(),
        verdict,
    }
}

/// The rule of a check id: its own, a benchmark test's (`bench.gemm`: `bench.<metric>`), or, for
/// a part that has no rule yet, words that say so.
fn rule(id: &str) -> Rule {
    let id = if id.starts_with("bench.") { "bench.<metric>" } else { id };
    RULES.iter().copied().find(|r| r.id == id).unwrap_or(Rule {
        id: "unbuilt",
        pass: "no rule yet: this part is not built",
        warn: "—",
        fail: "—",
        source: "docs/certify.md (what is not built yet)",
    })
}

/// A check that could not be made, for `why`: it makes the certificate `INCOMPLETE`.
pub fn not_run(id: &str, stage: Stage, subject: &str, why: &str) -> Check {
    let r = rule(id);
    check(id, stage, subject, Measured::nothing(why), CheckVerdict::NotRun, r)
}

/// Level 1: every error-level finding fails, every warning warns; info findings are not checks.
pub fn finding_checks(findings: &[Finding]) -> Vec<Check> {
    findings
        .iter()
        .filter_map(|f| {
            let verdict = match f.severity {
                Severity::Error => CheckVerdict::Fail,
                Severity::Warning => CheckVerdict::Warn,
                Severity::Info => return None,
            };
            let measured = if f.evidence.is_empty() { f.summary.clone() } else { f.evidence.join("; ") };
            let mut c = check(
                &format!("finding.{}", f.id),
                Stage::Software,
                &f.summary,
                Measured::text(measured),
                verdict,
                rule("finding.*"),
            );
            c.source = format!("diagnosis rule `{}` (docs/diagnosis.md)", f.id);
            Some(c)
        })
        .collect()
}

/// Level 1: the driver lists at least one GPU. A machine where it lists none has nothing to
/// certify (`not_run`: INCOMPLETE, not FAIL; an NVIDIA GPU on the PCI bus that the driver does not
/// see is a diagnosis error, which fails); a driver that could not be asked at all fails; a list
/// nobody read (`unknown`) is `not_run`.
pub fn gpus_present(gpus: &Probed<Vec<gpu_doctor_model::Gpu>>) -> Check {
    const ID: &str = "gpus.present";
    let (measured, verdict) = match gpus {
        Probed::Found { value, source } if !value.is_empty() => {
            (Measured::value(value.len() as f64, format!("GPU(s), from {source}")), CheckVerdict::Pass)
        }
        Probed::Failed { error } => {
            (Measured::text(format!("the driver could not be asked: {error}")), CheckVerdict::Fail)
        }
        other => {
            let why = other.why_not().unwrap_or("the driver lists none");
            return not_run(ID, Stage::Software, "GPUs", &format!("no GPU to certify: {why}"));
        }
    };
    check(ID, Stage::Software, "GPUs", measured, verdict, rule(ID))
}

/// How many GPUs one framework sees, or why it sees none, by the module it imports as.
fn seen_by(deep: &DeepFacts, module: &str) -> Option<Result<(String, Option<u32>), String>> {
    let (version, error) = deep.import_of(module)?;
    if let Some(e) = error {
        return Some(Err(format!("{module} does not import: {e}")));
    }
    let name = format!("{module} {}", version.unwrap_or("(version unknown)"));
    let count = match module {
        "torch" => deep.torch.as_ref().map(|t| {
            if t.cuda_available == Some(false) {
                Some(0)
            } else {
                t.device_count.or(t.devices.as_ref().map(|d| count(d.len())))
            }
        }),
        "tensorflow" => deep.tensorflow.as_ref().map(|t| t.gpus.as_ref().map(|g| count(g.len()))),
        "jax" => deep.jax.as_ref().map(|j| {
            j.devices
                .as_ref()
                .map(|d| count(d.iter().filter(|d| matches!(d.platform.as_deref(), Some("gpu" | "cuda"))).count()))
        }),
        "cupy" => deep.cupy.as_ref().map(|c| c.device_count),
        // ONNX Runtime lists providers, not devices: the CUDA provider stands for every GPU.
        "onnxruntime" => deep
            .onnxruntime
            .as_ref()
            .map(|o| o.providers.as_ref().map(|p| u32::from(p.iter().any(|p| p == "CUDAExecutionProvider")))),
        _ => None,
    }
    .flatten();
    Some(Ok((name, count)))
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Level 1: each framework the deep probe imported in each environment sees every one of the
/// `gpus` GPUs the driver lists. An environment with GPU frameworks whose deep probe did not run
/// gives a `not_run` check.
pub fn framework_checks(envs: &Probed<Vec<PythonEnv>>, gpus: usize) -> Vec<Check> {
    const ID: &str = "framework.sees_gpus";
    let envs = match envs {
        Probed::Found { value, .. } => value,
        // No Python is a fact about the machine, not a part that did not run.
        Probed::Absent { reason } | Probed::Unsupported { reason } => {
            let measured = Measured::text(format!("no Python environment: {reason}"));
            return vec![check(ID, Stage::Software, "Python environments", measured, CheckVerdict::Info, rule(ID))];
        }
        other => {
            let why = other.why_not().unwrap_or("not probed");
            return vec![not_run(ID, Stage::Software, "Python environments", why)];
        }
    };
    let mut out = Vec::new();
    for env in envs {
        let deep = match env.deep.as_ref() {
            Some(Probed::Found { value, .. }) => value,
            Some(other) if !env.frameworks.is_empty() => {
                let why = format!("the deep probe did not answer: {}", other.why_not().unwrap_or("unknown"));
                out.push(not_run(ID, Stage::Software, &env.name, &why));
                continue;
            }
            None if !env.frameworks.is_empty() => {
                out.push(not_run(ID, Stage::Software, &env.name, "the deep probe did not run"));
                continue;
            }
            _ => continue,
        };
        for module in ["torch", "tensorflow", "jax", "cupy", "onnxruntime"] {
            let Some(seen) = seen_by(deep, module) else { continue };
            let subject = format!("{}: {module}", env.name);
            let (measured, verdict) = match seen {
                Err(e) => (Measured::text(e), CheckVerdict::Fail),
                Ok((name, None)) => (
                    Measured::text(format!("{name} imports; how many GPUs it sees was not reported")),
                    CheckVerdict::NotRun,
                ),
                // The PyPI package `onnxruntime` is the CPU build (its GPU build is `onnxruntime-gpu`):
                // alone, it is not a GPU framework, as `paddlepaddle` or `tensorflow-cpu` are not.
                Ok((name, Some(0))) if module == "onnxruntime" && env.framework("onnxruntime-gpu").is_none() => (
                    Measured::text(format!(
                        "{name} is the CPU-only package (no CUDAExecutionProvider; onnxruntime-gpu is not \
                         installed): not a GPU framework, not judged"
                    )),
                    CheckVerdict::Info,
                ),
                Ok((name, Some(n))) if module == "onnxruntime" => {
                    let offers = n > 0;
                    let words = if offers { "offers" } else { "does not offer" };
                    (
                        Measured::text(format!("{name} {words} CUDAExecutionProvider")),
                        if offers && gpus > 0 { CheckVerdict::Pass } else { CheckVerdict::Fail },
                    )
                }
                Ok((name, Some(n))) => (
                    Measured::text(format!("{name} sees {n} of {gpus} GPU(s)")),
                    if n > 0 && n as usize >= gpus { CheckVerdict::Pass } else { CheckVerdict::Fail },
                ),
            };
            out.push(check(ID, Stage::Software, &subject, measured, verdict, rule(ID)));
        }
    }
    out
}

/// One framework's smoke test in one environment, as the installers' verify read it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Smoke {
    /// Each GPU it computed on: its index and whether the product was right.
    pub gpus: Vec<(u32, bool)>,
    /// Why it saw no GPU, when it said so.
    pub no_gpu: Option<String>,
    /// The error that stopped it, when one did.
    pub error: Option<String>,
}

/// Level 2: a framework's product on each GPU; `Err` (the script did not run or gave no result)
/// is `not_run`.
pub fn smoke(subject: &str, outcome: Result<&Smoke, &str>, gpus: usize) -> Check {
    const ID: &str = "framework.smoke";
    let s = match outcome {
        Ok(s) => s,
        Err(why) => return not_run(ID, Stage::Benchmark, subject, why),
    };
    let right = s.gpus.iter().filter(|(_, ok)| *ok).count();
    let (measured, verdict) = if let Some(e) = &s.error {
        (format!("error: {e}"), CheckVerdict::Fail)
    } else if let Some(why) = &s.no_gpu {
        (format!("no GPU: {why}"), CheckVerdict::Fail)
    } else if right == s.gpus.len() && right >= gpus && right > 0 {
        (format!("right on {right} of {gpus} GPU(s)"), CheckVerdict::Pass)
    } else {
        let wrong: Vec<String> = s.gpus.iter().filter(|(_, ok)| !ok).map(|(i, _)| format!("GPU {i}")).collect();
        (format!("right on {right} of {gpus} GPU(s); wrong on [{}]", wrong.join(", ")), CheckVerdict::Fail)
    };
    check(ID, Stage::Benchmark, subject, Measured::text(measured), verdict, rule(ID))
}

/// The host link of one GPU: its maximum, and what it was while idle and while copying.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinkReading {
    /// Highest PCIe generation of the link.
    pub gen_max: Option<u32>,
    /// Most lanes of the link.
    pub width_max: Option<u32>,
    /// Generation while idle (not judged: links train down to save power).
    pub gen_idle: Option<u32>,
    /// Generation read while the copy ran; `None` when not read.
    pub gen_under_load: Option<u32>,
    /// Lanes read while the copy ran; `None` when not read.
    pub width_under_load: Option<u32>,
}

/// The highest PCIe generation and width NVML reported between `from_ms` and `to_ms` of a run (the
/// copy test's window): what the link trained to under load. `None` where no sample in the window
/// had it.
pub fn link_during(points: &[TelemetryPoint], from_ms: u64, to_ms: u64) -> (Option<u32>, Option<u32>) {
    let inside = || points.iter().filter(move |p| p.t_ms >= from_ms && p.t_ms <= to_ms);
    (inside().filter_map(|p| p.sample.pcie_link_gen).max(), inside().filter_map(|p| p.sample.pcie_link_width).max())
}

/// Level 2: the link is at its maximum generation and width under load; idle is not judged.
pub fn link_under_load(subject: &str, link: LinkReading) -> Check {
    const ID: &str = "link.under_load";
    let (Some(gen_max), Some(gen_load)) = (link.gen_max, link.gen_under_load) else {
        return not_run(ID, Stage::Benchmark, subject, "the link's generation was not read while copying");
    };
    let width = match (link.width_max, link.width_under_load) {
        (Some(max), Some(w)) => Some((w, max)),
        _ => None,
    };
    let idle = link.gen_idle.map_or_else(String::new, |g| format!(" (Gen{g} while idle, not judged)"));
    let width_words = width.map_or_else(String::new, |(w, max)| format!(" x{w} of x{max}"));
    let ok = gen_load >= gen_max && width.is_none_or(|(w, max)| w >= max);
    let measured = Measured::text(format!("Gen{gen_load} of Gen{gen_max}{width_words} while copying{idle}"));
    let verdict = if ok { CheckVerdict::Pass } else { CheckVerdict::Fail };
    check(ID, Stage::Benchmark, subject, measured, verdict, rule(ID))
}

/// Level 2: pinned copies carry at least [`PINNED_MIN_SHARE`] of the link's payload bandwidth.
pub fn pinned_copy(subject: &str, measured_gbytes_per_s: Option<f64>, link_gbytes_per_s: Option<f64>) -> Check {
    const ID: &str = "link.pinned_copy";
    let (Some(v), Some(link)) = (measured_gbytes_per_s, link_gbytes_per_s.filter(|l| *l > 0.0)) else {
        return not_run(ID, Stage::Benchmark, subject, "no pinned copy measured, or the link's bandwidth is unknown");
    };
    let share = v / link;
    let verdict = if share >= PINNED_MIN_SHARE { CheckVerdict::Pass } else { CheckVerdict::Warn };
    check(ID, Stage::Benchmark, subject, Measured::value(share, "× link bandwidth"), verdict, rule(ID))
}

/// Level 3: sustained compute against the GPU's own early figure.
pub fn sustained(subject: &str, early: Option<f64>, late: Option<f64>, what: &str) -> Check {
    const ID: &str = "stress.sustained";
    let (Some(early), Some(late)) = (early.filter(|e| *e > 0.0), late) else {
        return not_run(ID, Stage::Stress, subject, "no sustained load measured");
    };
    let ratio = late / early;
    let verdict = if ratio >= SUSTAINED_MIN_RATIO { CheckVerdict::Pass } else { CheckVerdict::Fail };
    check(ID, Stage::Stress, subject, Measured::value(ratio, format!("× early ({what})")), verdict, rule(ID))
}

/// Level 4: one GPU's figure in a later round against its first round's.
pub fn drift(subject: &str, first: Option<f64>, later: Option<f64>) -> Check {
    const ID: &str = "soak.drift";
    let Some(first) = first.filter(|f| *f > 0.0) else {
        return not_run(ID, Stage::Soak, subject, "the first round measured no FP16 GEMM");
    };
    let (measured, verdict) = match later {
        Some(v) => {
            let ratio = v / first;
            let verdict = if ratio >= SUSTAINED_MIN_RATIO { CheckVerdict::Pass } else { CheckVerdict::Fail };
            (Measured::value(ratio, "× the first round (FP16 GEMM)"), verdict)
        }
        None => (Measured::text("this round measured no FP16 GEMM"), CheckVerdict::Fail),
    };
    check(ID, Stage::Soak, subject, measured, verdict, rule(ID))
}

/// Level 3: the clock-event reasons seen during the load; a thermal or power slowdown warns.
pub fn slowdown(subject: &str, reasons: Option<&[String]>) -> Check {
    const ID: &str = "stress.slowdown";
    let Some(reasons) = reasons else {
        return not_run(ID, Stage::Stress, subject, "no telemetry covered the load");
    };
    let slow: Vec<&str> = reasons.iter().map(String::as_str).filter(|r| is_slowdown(r)).collect();
    let (measured, verdict) = if slow.is_empty() {
        (Measured::text("no slowdown reason during the load"), CheckVerdict::Pass)
    } else {
        (Measured::text(slow.join(", ")), CheckVerdict::Warn)
    };
    check(ID, Stage::Stress, subject, measured, verdict, rule(ID))
}

/// Level 2: the kernel log's Xid lines after the run that were not there before it. Either
/// reading missing gives a `not_run` check.
pub fn xid_during_run(before: &Probed<Vec<XidEvent>>, after: &Probed<Vec<XidEvent>>) -> Check {
    const ID: &str = "health.xid";
    let (Some(before), Some(after)) = (before.value(), after.value()) else {
        let why = after.why_not().or(before.why_not()).unwrap_or("the kernel log was not read");
        return not_run(ID, Stage::Health, "kernel log", &format!("the kernel log was not read: {why}"));
    };
    let new: Vec<&XidEvent> = after.iter().filter(|e| !before.iter().any(|b| b.line == e.line)).collect();
    let (measured, verdict) = if new.is_empty() {
        (Measured::value(0.0, "new Xid lines"), CheckVerdict::Pass)
    } else {
        let words = new.iter().map(|e| format!("Xid {}", e.xid)).collect::<Vec<_>>().join(", ");
        (Measured::text(format!("{} new: {words}", new.len())), CheckVerdict::Fail)
    };
    check(ID, Stage::Health, "kernel log", measured, verdict, rule(ID))
}

/// Level 2: one GPU's memory-error counters over the run.
pub fn memory_errors(subject: &str, change: Option<&EccChange>) -> Check {
    const ID: &str = "health.memory";
    let Some(change) = change.filter(|c| c.compared()) else {
        let why = change.map_or_else(|| "not read".to_owned(), |c| c.not_read.join("; "));
        return not_run(ID, Stage::Health, subject, &format!("the memory-error counters: {why}"));
    };
    let verdict = if change.failed() { CheckVerdict::Fail } else { CheckVerdict::Pass };
    check(ID, Stage::Health, subject, Measured::text(change.summary()), verdict, rule(ID))
}

/// Level 2: one GPU's PCIe errors over the run, from its health read before and after: NVML's
/// replay counter and the kernel's AER counters of its PCI function, each where both readings
/// have it. Neither readable is `info` (the issue asks for them where readable), never a pass.
pub fn pcie_errors(subject: &str, before: Option<&GpuHealth>, after: Option<&GpuHealth>) -> Check {
    const ID: &str = "health.pcie";
    let replays = before.and_then(|b| b.pcie_replay_count).zip(after.and_then(|a| a.pcie_replay_count));
    let replays = replays.map(|(b, a)| a.saturating_sub(b));
    let aer = |h: Option<&GpuHealth>| h.and_then(|h| h.aer.clone()).unwrap_or_default();
    let (b, a) = (aer(before), aer(after));
    type Kind = fn(&AerCounters) -> Option<&std::collections::BTreeMap<String, u64>>;
    let rise = |kind: Kind| {
        let (Some(x), Some(y)) = (kind(&b), kind(&a)) else { return None };
        Some((AerCounters::total(y).saturating_sub(AerCounters::total(x)), AerCounters::risen(Some(x), Some(y))))
    };
    let correctable = rise(|c| c.correctable.as_ref());
    let nonfatal = rise(|c| c.nonfatal.as_ref());
    let fatal = rise(|c| c.fatal.as_ref());
    if replays.is_none() && correctable.is_none() && nonfatal.is_none() && fatal.is_none() {
        let why = "not readable: NVML gave no PCIe replay counter and the kernel no AER counters for this GPU";
        return check(ID, Stage::Health, subject, Measured::text(why), CheckVerdict::Info, rule(ID));
    }
    let mut words = Vec::new();
    let mut say = |what: &str, rose: &Option<(u64, Vec<String>)>| match rose {
        None => words.push(format!("AER {what}: not readable")),
        Some((n, kinds)) if kinds.is_empty() => words.push(format!("AER {what} +{n}")),
        Some((n, kinds)) => words.push(format!("AER {what} +{n} ({})", kinds.join(", "))),
    };
    say("uncorrectable fatal", &fatal);
    say("uncorrectable non-fatal", &nonfatal);
    say("correctable", &correctable);
    words.push(replays.map_or_else(|| "replays: not readable".to_owned(), |n| format!("PCIe replays +{n}")));
    let new = |r: &Option<(u64, Vec<String>)>| r.as_ref().is_some_and(|(n, _)| *n > 0);
    let verdict = if new(&fatal) || new(&nonfatal) {
        CheckVerdict::Fail
    } else if new(&correctable) || replays.is_some_and(|n| n > 0) {
        CheckVerdict::Warn
    } else {
        CheckVerdict::Pass
    };
    check(ID, Stage::Health, subject, Measured::text(words.join("; ")), verdict, rule(ID))
}

/// One GPU's figure for comparing identical GPUs.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerFigure {
    /// The GPU, e.g. `GPU 1 (NVIDIA GeForce RTX 5090)`.
    pub subject: String,
    /// Its product name: GPUs are compared within one product.
    pub product: String,
    /// The figure (higher is better), e.g. the best FP16 GEMM in TFLOP/s.
    pub value: f64,
}

/// Level 2: each GPU against the best GPU of the same product in the machine; a product with one
/// GPU gives no check.
pub fn identical_gpus(figures: &[PeerFigure], what: &str) -> Vec<Check> {
    const ID: &str = "gpus.identical_within";
    figures
        .iter()
        .filter_map(|f| {
            let peers: Vec<&PeerFigure> = figures.iter().filter(|p| p.product == f.product).collect();
            if peers.len() < 2 {
                return None;
            }
            let best = peers.iter().map(|p| p.value).fold(f64::MIN, f64::max);
            if best <= 0.0 {
                return None;
            }
            let share = f.value / best;
            let verdict = if share >= 1.0 - PEER_TOLERANCE { CheckVerdict::Pass } else { CheckVerdict::Warn };
            let measured = Measured::value(share, format!("× the best {} ({what})", f.product));
            Some(check(ID, Stage::Benchmark, &f.subject, measured, verdict, rule(ID)))
        })
        .collect()
}

/// Level 2: every number of a benchmark run as its own verdict judged it; a test that did not run
/// is a `not_run` check with the reason, one whose checks failed (a wrong result, memory errors)
/// fails.
pub fn bench_checks(subject: &str, stage: Stage, run: &BenchRun) -> Vec<Check> {
    let mut out = Vec::new();
    for test in &run.tests {
        let id = format!("bench.{}", test.test.name());
        let what = format!("{subject}: {}", test.test.label());
        match test.status {
            TestStatus::Failed => {
                let why = test.failure.as_ref().map_or_else(|| "it did not run".to_owned(), ToString::to_string);
                out.push(not_run(&id, stage, &what, &why));
                continue;
            }
            TestStatus::ChecksFailed => {
                let why = test.failure.as_ref().map_or_else(|| "a check failed".to_owned(), ToString::to_string);
                out.push(check(&id, stage, &what, Measured::text(why), CheckVerdict::Fail, rule("bench.<metric>")));
            }
            TestStatus::Passed => {}
        }
        for j in &test.judged {
            let verdict = match j.judgement.verdict {
                BenchVerdict::Normal => CheckVerdict::Pass,
                BenchVerdict::Low | BenchVerdict::AboveTheory => CheckVerdict::Warn,
                BenchVerdict::Failed => CheckVerdict::Fail,
                BenchVerdict::NoReference => CheckVerdict::Info,
            };
            let m = &j.measurement;
            let mut c = check(
                &id,
                stage,
                &format!("{what}: {}", m.label),
                Measured::value(m.value, m.unit.symbol()),
                verdict,
                rule("bench.<metric>"),
            );
            c.threshold = match &j.judgement.expected {
                Some(e) => {
                    format!("{} (expected {:.3} {}: {})", j.judgement.comment, e.value, e.unit.symbol(), e.basis)
                }
                None => j.judgement.comment.clone(),
            };
            out.push(c);
        }
    }
    out
}

/// `--against`: this run's checks against a kept certificate's. Each figure (a value with the same
/// unit in a check of the same id and subject) more than [`AGAINST_TOLERANCE`] worse warns (lower
/// is worse, but for a time in µs or s); each failed or warning finding the kept certificate did not
/// have is named as a warning.
pub fn against(kept: &Certificate, now: &[&Check]) -> Vec<Check> {
    let mut out = Vec::new();
    for c in now {
        let old = kept.checks().find(|k| k.id == c.id && k.subject == c.subject);
        if let (Measured::Value { value, unit }, Some(Measured::Value { value: was, unit: was_unit })) =
            (&c.measured, old.map(|k| &k.measured))
        {
            if unit != was_unit || *was == 0.0 {
                continue;
            }
            let lower_is_better = matches!(unit.as_str(), "µs" | "s");
            let worse_by = if lower_is_better { value / was - 1.0 } else { 1.0 - value / was };
            let verdict = if worse_by > AGAINST_TOLERANCE { CheckVerdict::Warn } else { CheckVerdict::Pass };
            let measured = Measured::value(
                value / was,
                format!("× the kept {} {unit} ({})", Measured::value(*was, "").describe().trim_end(), c.id),
            );
            out.push(check("against.figure", Stage::Against, &c.subject, measured, verdict, rule("against.figure")));
        }
        let is_problem = matches!(c.verdict, CheckVerdict::Fail | CheckVerdict::Warn);
        if c.id.starts_with("finding.") && is_problem && old.is_none_or(|k| k.id != c.id) {
            let measured = Measured::text(format!("new since the kept certificate: `{}`", c.id));
            let rule = rule("against.new_finding");
            out.push(check("against.new_finding", Stage::Against, &c.subject, measured, CheckVerdict::Warn, rule));
        }
    }
    out
}

/// The verdict of a set of checks and its reasons (one line per failed, warning or missing
/// check): FAIL when any failed; else INCOMPLETE when any did not run, or there is none; else
/// PASS WITH WARNINGS when any warned; else PASS.
pub fn verdict<'a>(checks: impl IntoIterator<Item = &'a Check>) -> (Verdict, Vec<String>) {
    let checks: Vec<&Check> = checks.into_iter().collect();
    let has = |v: CheckVerdict| checks.iter().any(|c| c.verdict == v);
    let verdict = if has(CheckVerdict::Fail) {
        Verdict::Fail
    } else if has(CheckVerdict::NotRun) || checks.is_empty() {
        Verdict::Incomplete
    } else if has(CheckVerdict::Warn) {
        Verdict::PassWithWarnings
    } else {
        Verdict::Pass
    };
    let mut reasons: Vec<(CheckVerdict, String)> = checks
        .iter()
        .filter(|c| matches!(c.verdict, CheckVerdict::Fail | CheckVerdict::Warn | CheckVerdict::NotRun))
        .map(|c| {
            (
                c.verdict,
                format!("{} ({}): {}: {}", c.verdict.label(), c.stage.label(), c.subject, c.measured.describe()),
            )
        })
        .collect();
    if checks.is_empty() {
        reasons.push((CheckVerdict::NotRun, "no check was made".to_owned()));
    }
    // Failures first, then what did not run, then warnings.
    reasons.sort_by_key(|(v, _)| match v {
        CheckVerdict::Fail => 0,
        CheckVerdict::NotRun => 1,
        _ => 2,
    });
    reasons.dedup();
    (verdict, reasons.into_iter().map(|(_, r)| r).collect())
}

#[cfg(test)]
mod tests;
