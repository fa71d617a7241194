//! Benchmark runs: the verdicts of a run's judged measurements (`bench/verdict.rs`), its failed
//! correctness checks and its clocks under sustained load, as findings. Unlike the other families
//! these read a [`BenchRun`], not a snapshot: [`bench_findings`] fills `BenchRun::findings`.

use super::Rule;
use gpu_doctor_model::bench::format;
use gpu_doctor_model::bench::judgement::Verdict;
use gpu_doctor_model::bench::plan::TestKind;
use gpu_doctor_model::bench::protocol::Metric;
use gpu_doctor_model::bench::run::{BenchRun, TestStatus};
use gpu_doctor_model::bench::unit::Unit;
use gpu_doctor_model::bench::verdict::Judged;
use gpu_doctor_model::{Category, Finding, Severity};

const SOURCE: &str = "Measured by `gpu-doctor bench`; the expected values and normal shares are in \
                      `probes/judge/src/bench/verdict.rs` (docs/performance.md)";

const THROTTLE_FIX: &str = "Check `nvidia-smi -q -d PERFORMANCE,CLOCK` for throttling or locked clocks, close other \
                            GPU processes, and check cooling and the power limit.";

/// A rule fired by a measurement's verdict, with what its finding says.
struct VerdictRule {
    rule: Rule,
    detail: &'static str,
    fix: Option<&'static str>,
}

const LINK_LOW: VerdictRule = VerdictRule {
    rule: Rule {
        id: "bench.link.below_expected",
        category: Category::PcieLinkDegraded,
        severity: Severity::Warning,
        trigger: "A pinned host↔device copy (h2d, d2h, bidir) is judged LOW: below its normal share of the host \
                  link's theoretical bandwidth (70 % one way, 55 % of both directions at once).",
        source: SOURCE,
    },
    detail: "Host↔device copies are slower than this link normally allows: data loading and CPU↔GPU transfers will \
             be slower than they should be.",
    fix: Some(
        "Check the link under load with `nvidia-smi -q -d PCIE` (generation and width should reach their maximum), \
         reseat the card or the Thunderbolt cable, use a CPU-attached slot, and check BIOS PCIe settings.",
    ),
};

const PAGEABLE_LOW: VerdictRule = VerdictRule {
    rule: Rule {
        id: "bench.pageable.below_expected",
        category: Category::Benchmark,
        severity: Severity::Warning,
        trigger: "A pageable host↔device copy (h2d, d2h) is judged LOW: below 40 % of the slower of the same test's \
                  pinned copy and its host memcpy between pageable and pinned memory (the driver's staging step).",
        source: SOURCE,
    },
    detail: "Copies from ordinary (pageable) host memory are slower than the pinned copy and the host's own memcpy \
             allow, so the host side (the driver's staging, memory bandwidth, the CPU the copy runs on) holds them \
             back, not the link.",
    fix: Some(
        "Use pinned memory for transfers (PyTorch: `DataLoader(pin_memory=True)`, `tensor.pin_memory()`), see under \
         the bench table whether the worker ran on the GPU's NUMA node, and close memory-heavy processes.",
    ),
};

const MEMORY_LOW: VerdictRule = VerdictRule {
    rule: Rule {
        id: "bench.memory.below_expected",
        category: Category::Benchmark,
        severity: Severity::Warning,
        trigger: "A device-to-device copy (d2d) is judged LOW: below 70 % of the memory bandwidth from the bus width \
                  and memory clock.",
        source: SOURCE,
    },
    detail: "Device memory bandwidth is below what this GPU's memory normally delivers.",
    fix: Some(THROTTLE_FIX),
};

const COMPUTE_LOW: VerdictRule = VerdictRule {
    rule: Rule {
        id: "bench.compute.below_expected",
        category: Category::Benchmark,
        severity: Severity::Warning,
        trigger: "A GEMM, the FMA peak or the sustained load (gemm, fma, sustained) is judged LOW: below its normal \
                  share of the GPU's peak for that precision (50 % for large GEMMs and the sustained load, 20 % for \
                  small GEMMs, 80 % for FMA).",
        source: SOURCE,
    },
    detail: "Compute throughput is below what this GPU normally reaches.",
    fix: Some(THROTTLE_FIX),
};

const LATENCY_SLOW: VerdictRule = VerdictRule {
    rule: Rule {
        id: "bench.latency.above_usual",
        category: Category::Benchmark,
        severity: Severity::Warning,
        trigger: "Kernel launch latency (latency) is judged LOW: launch plus synchronize over 20 µs, or back-to-back \
                  launches over 10 µs apart.",
        source: SOURCE,
    },
    detail: "Kernel launches take longer than usual, which slows work made of many small kernels.",
    fix: Some("Other processes, MPS or a virtualised GPU add launch latency; retry on an idle GPU."),
};

const ALLOCATION_LOW: VerdictRule = VerdictRule {
    rule: Rule {
        id: "bench.memtest.allocation_below_free",
        category: Category::Benchmark,
        severity: Severity::Warning,
        trigger: "The largest single allocation (memtest) is judged LOW: below 85 % of the memory free when the run \
                  started.",
        source: SOURCE,
    },
    detail: "Less of the free GPU memory could be allocated in one piece than usual.",
    fix: Some("Free GPU memory (close other GPU processes) and run the test again."),
};

const MEMORY_ERRORS: VerdictRule = VerdictRule {
    rule: Rule {
        id: "bench.memtest.errors",
        category: Category::Benchmark,
        severity: Severity::Error,
        trigger: "The memory test (memtest) is judged FAILED: some word read back differently from what was written.",
        source: SOURCE,
    },
    detail: "The memory test found words that did not read back as written: results from this GPU cannot be trusted \
             until the cause (faulty memory, overclocking, overheating) is found.",
    fix: Some(
        "Remove any overclock, check temperatures under load, and run `gpu-doctor bench --tests memtest` again; \
         persistent errors point to faulty hardware.",
    ),
};

const ABOVE_THEORY: VerdictRule = VerdictRule {
    rule: Rule {
        id: "bench.above_theory",
        category: Category::Benchmark,
        severity: Severity::Info,
        trigger: "A measurement is more than 110 % of the most the reported hardware allows: the theoretical value \
                  it was judged against, or for compute the peak at NVML's highest SM clock where that is above the \
                  rated boost clock the peak uses (GeForce boards boost past their rating). A fact behind that value \
                  (link width or generation, memory clock, SM count) is then probably misreported.",
        source: SOURCE,
    },
    detail: "The measurement is above what the reported hardware allows, so one of the facts it was judged against \
             (link width or generation, memory clock, SM count) is probably misreported.",
    fix: None,
};

const CHECK_FAILED: Rule = Rule {
    id: "bench.check_failed",
    category: Category::Benchmark,
    severity: Severity::Error,
    trigger: "A test ran but one of its correctness checks failed (e.g. a GEMM result against the CPU reference).",
    source: "The test's own checks, `gpu-doctor bench`",
};

const CLOCKS_FELL: Rule = Rule {
    id: "bench.sustained.clocks_fell",
    category: Category::Benchmark,
    severity: Severity::Warning,
    trigger: "Under the sustained load the SM clock fell by 10 % or more from the early to the late part, or NVML \
              reported thermal slowdown.",
    source: "NVML telemetry sampled during `gpu-doctor bench --tests sustained` (`probes/judge/src/bench/throttle.rs`)",
};

const ECC_FIX: &str = "Note the GPU's serial, run `nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER` and read the kernel \
                       log for Xid 48, 63, 64, 92, 94 or 95; reset the GPU to apply pending retirements or remaps, and \
                       have a board with growing counts replaced.";

const ECC_ERRORS: Rule = Rule {
    id: "bench.memtest.ecc_errors",
    category: Category::Benchmark,
    severity: Severity::Error,
    trigger: "Over a memory test that broke off, NVML's counters show new uncorrectable ECC errors, retired pages or \
              remapped rows (a finished memory test fails its counter check instead: bench.check_failed).",
    source: "NVML's ECC, page-retirement and row-remapping counters read before and after the memory test \
             (`probes/src/host/ecc.rs`)",
};

const ECC_CORRECTED: Rule = Rule {
    id: "bench.memtest.ecc_corrected",
    category: Category::Benchmark,
    severity: Severity::Warning,
    trigger: "Over the memory test, NVML's counters show new corrected ECC errors and nothing worse.",
    source: "NVML's ECC, page-retirement and row-remapping counters read before and after the memory test \
             (`probes/src/host/ecc.rs`)",
};

const P2P_SLOW: Rule = Rule {
    id: "bench.peer_copy.below_expected",
    category: Category::Benchmark,
    severity: Severity::Warning,
    trigger: "A pair of GPUs in the GPU-to-GPU copy test (p2p) is judged LOW: over NVLink or PCIe within a socket, \
              the P2P-on copy below 70 % of the link (NVLinks × the per-link rate of their generation, or the slower \
              GPU's host link), P2P on not faster than P2P off over NVLink, or the topology saying P2P is OK where \
              CUDA offers no peer access; across sockets or where P2P is not supported, the copy through host \
              memory below 40 % of the slower host link.",
    source: "Measured by `gpu-doctor bench --tests p2p` as nvbandwidth measures copy-engine copies \
             (NVIDIA/nvbandwidth README); NVLink rates in assets/compat/links.toml; the topology from NVML",
};

pub(super) const RULES: &[Rule] = &[
    LINK_LOW.rule,
    PAGEABLE_LOW.rule,
    MEMORY_LOW.rule,
    COMPUTE_LOW.rule,
    LATENCY_SLOW.rule,
    ALLOCATION_LOW.rule,
    MEMORY_ERRORS.rule,
    ABOVE_THEORY.rule,
    CHECK_FAILED,
    CLOCKS_FELL,
    ECC_ERRORS,
    ECC_CORRECTED,
    P2P_SLOW,
];

/// The rule a judged measurement of `test` triggers; `None` for a normal or unjudged one.
fn rule_for(test: TestKind, j: &Judged) -> Option<&'static VerdictRule> {
    let pageable =
        matches!(j.measurement.metric, Metric::HostToDevice { pinned: false } | Metric::DeviceToHost { pinned: false });
    match j.judgement.verdict {
        Verdict::Normal | Verdict::NoReference => None,
        Verdict::AboveTheory => Some(&ABOVE_THEORY),
        Verdict::Failed => Some(&MEMORY_ERRORS),
        Verdict::Low => match test {
            TestKind::H2d | TestKind::D2h if pageable => Some(&PAGEABLE_LOW),
            TestKind::H2d | TestKind::D2h | TestKind::Bidir => Some(&LINK_LOW),
            TestKind::D2d => Some(&MEMORY_LOW),
            TestKind::Gemm | TestKind::Fma | TestKind::Sustained => Some(&COMPUTE_LOW),
            TestKind::Latency => Some(&LATENCY_SLOW),
            TestKind::Memtest => Some(&ALLOCATION_LOW),
            // The CPU baselines are compared with, never judged; the GPU-to-GPU headline is not
            // judged either: its pairs are, in the matrix (`p2p_finding`).
            TestKind::Cpu | TestKind::P2p => None,
        },
    }
}

/// One judged measurement as evidence: what was measured against what.
fn evidence(test: TestKind, j: &Judged) -> String {
    let amount = |v: f64, unit: Unit| format!("{} {}", format::value(v), unit.symbol()).trim_end().to_owned();
    let m = &j.measurement;
    let mut line = format!("{}: {}: measured {}", test.label(), m.label, amount(m.value, m.unit));
    if let Some(e) = &j.judgement.expected {
        line.push_str(&format!(", expected {} ({})", amount(e.value, e.unit), e.basis));
    }
    line
}

/// The findings of a run: one per rule that fired, its evidence naming every measurement or check
/// that fired it (in plan order), errors first, then warnings, then information, each group by id.
pub fn bench_findings(run: &BenchRun) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    for t in &run.tests {
        for j in &t.judged {
            let Some(r) = rule_for(t.test, j) else { continue };
            if let Some(f) = out.iter_mut().find(|f| f.id == r.rule.id) {
                f.evidence.push(evidence(t.test, j));
                continue;
            }
            let summary = format!("{}: {} — {}", t.test.label(), j.measurement.label, j.judgement.comment);
            out.push(r.rule.finding(summary, r.detail, vec![evidence(t.test, j)], r.fix.map(str::to_owned)));
        }
    }
    let failed_checks: Vec<(TestKind, String)> = run
        .tests
        .iter()
        .filter(|t| t.status == TestStatus::ChecksFailed)
        .flat_map(|t| t.result.iter().flat_map(|r| &r.checks).map(move |c| (t.test, c)))
        .filter(|(_, c)| !c.passed)
        .map(|(test, c)| (test, format!("{}: {}: {}", test.label(), c.name, c.detail)))
        .collect();
    if let Some((first, _)) = failed_checks.first() {
        out.push(
            CHECK_FAILED.finding(
                format!("{}: a correctness check failed", first.label()),
                "The GPU computed or stored wrong values. Results from this GPU cannot be trusted until the cause \
             (faulty memory, overclocking, overheating, a broken library) is found.",
                failed_checks.into_iter().map(|(_, line)| line).collect(),
                Some(
                    "Remove any overclock, check temperatures under load, and run `gpu-doctor bench --tests \
                 memtest,gemm` again; persistent errors point to faulty hardware."
                        .to_owned(),
                ),
            ),
        );
    }
    if let Some(c) = run.clocks_under_load.as_ref().filter(|c| c.throttled) {
        let mut evidence = vec![c.summary.clone()];
        if let Some(t) = c.max_temperature_c {
            evidence.push(format!("hottest temperature {t} °C"));
        }
        if !c.reasons.is_empty() {
            evidence.push(format!("throttle reasons reported: {}", c.reasons.join(", ")));
        }
        out.push(
            CLOCKS_FELL.finding(
                format!("Clocks fell under sustained load: {}", c.summary),
                "Under a long load the GPU lowered its clocks, so long training runs will be slower than short \
             benchmarks suggest.",
                evidence,
                Some(
                    "Improve cooling (airflow, fan curve, dust), check the power limit with `nvidia-smi -q -d \
                 POWER,PERFORMANCE`, and for an eGPU make sure the enclosure's power supply is sufficient."
                        .to_owned(),
                ),
            ),
        );
    }
    out.extend(ecc_finding(run));
    out.extend(p2p_finding(run));
    out.sort_by(|a, b| (a.severity, &a.id).cmp(&(b.severity, &b.id)));
    out
}

/// The pairs of the GPU-to-GPU matrix judged LOW, one line of evidence each.
fn p2p_finding(run: &BenchRun) -> Option<Finding> {
    let matrix = run.p2p()?;
    let low: Vec<String> = matrix
        .pairs
        .iter()
        .filter_map(|p| {
            let j = p.judgement.as_ref().filter(|j| j.verdict == Verdict::Low)?;
            let expected = j.expected.as_ref().map_or_else(String::new, |e| format!(" (expected from {})", e.basis));
            Some(format!("GPU {} → GPU {}: {}{expected}", p.src, p.dst, j.comment))
        })
        .collect();
    let first = low.first()?.clone();
    Some(
        P2P_SLOW.finding(
            format!("GPU-to-GPU copies are slower than the link between the GPUs allows: {first}"),
            "Copies between these GPUs (what NCCL, DataParallel and tensor parallelism do between layers) are slower \
         than the path between them should allow, so multi-GPU work will scale worse than it should.",
            low,
            Some(
                "Compare `nvidia-smi topo -m` and `nvidia-smi topo -p2p r` with the pairs named; with NVLink, check \
             `nvidia-smi nvlink -s` for links down; on PCIe, IOMMU or ACS in the BIOS (or the kernel's \
             `iommu=pt`) can block or slow peer traffic; NCCL_P2P_DISABLE or a consumer GPU's driver limits \
             keep copies on the host path."
                    .to_owned(),
            ),
        ),
    )
}

/// The memory-error counters over the memory test: new corrected errors are a warning; new
/// uncorrectable errors, retired pages or remapped rows an error where no failed check of the memory
/// test already says so (the test broke off before its counter check).
fn ecc_finding(run: &BenchRun) -> Option<Finding> {
    let change = run.memtest_ecc.as_ref()?;
    let checked = run.tests.iter().any(|t| t.test == TestKind::Memtest && t.status == TestStatus::ChecksFailed);
    let evidence = vec![change.summary()];
    if change.failed() {
        return (!checked).then(|| {
            ECC_ERRORS.finding(
                format!("GPU memory reported errors ECC could not hide during the memory test: {}", change.summary()),
                "New uncorrectable ECC errors, retired pages or remapped rows mean part of this GPU's memory is \
                 failing.",
                evidence,
                Some(ECC_FIX.to_owned()),
            )
        });
    }
    (change.corrected.unwrap_or(0) > 0).then(|| {
        ECC_CORRECTED.finding(
            format!("ECC corrected memory errors during the memory test: {}", change.summary()),
            "ECC fixed these errors, so no result was wrong, but memory that needs correcting under a test may get \
             worse; a count that keeps growing precedes retired pages or remapped rows.",
            evidence,
            Some(ECC_FIX.to_owned()),
        )
    })
}
