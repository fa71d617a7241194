//! The `bench.*` rules on fake runs: a healthy run makes no finding, and each rule fires on a run
//! broken in the one way it names, alone.

use super::*;
use gpu_doctor_model::EccChange;
use gpu_doctor_model::bench::p2p::{P2pEnd, P2pGpu, P2pLinkFact, P2pMatrix, P2pMeasure, P2pMode, P2pPair};
use gpu_doctor_model::bench::plan::{BenchPlan, Precision, TestKind};
use gpu_doctor_model::bench::protocol::{BenchEvent, Check, CopyMethod, Measurement, Metric, TestResult};
use gpu_doctor_model::bench::protocol::{Failure, FailureKind};
use gpu_doctor_model::bench::record::{RunRecord, TelemetryPoint, TimedEvent};
use gpu_doctor_model::bench::run::BenchRun;
use gpu_doctor_model::bench::unit::Unit;
use gpu_doctor_model::bench::verdict::{Facts, PeakOps};
use gpu_doctor_model::telemetry::GpuTelemetry;

/// Counters that changed by `corrected` corrected and `uncorrected` uncorrectable errors.
fn ecc(corrected: u64, uncorrected: u64) -> Option<EccChange> {
    Some(EccChange { corrected: Some(corrected), uncorrected: Some(uncorrected), ..EccChange::default() })
}

const FREE: f64 = 8.0 * 1024.0 * 1024.0 * 1024.0;

/// A GPU whose link (31.5 GB/s), memory (640 GB/s), FP32 peak (51.2 TFLOP/s) and free memory are known.
fn facts() -> Facts {
    Facts {
        link_gbytes_per_s: Some(31.5),
        link_basis: Some("PCIe Gen4 x16".into()),
        memory_bus_width_bits: Some(256),
        clock_mem_max_mhz: Some(10_000),
        sm_count: Some(100),
        clock_sm_max_mhz: Some(2000),
        peak_ops: Some(PeakOps { fp32: Some(256), ..PeakOps::default() }),
        memory_free_bytes: Some(8 * 1024 * 1024 * 1024),
        p2p_links: vec![P2pLinkFact {
            gpus: [0, 1].map(|index| P2pEnd { index, bus_id: None, cuda_ordinal: Some(index) }),
            link: gpu_doctor_model::LinkKind::Nvlink { links: 4 },
            p2p_ok: Some(true),
            p2p_status: None,
            peer: Some((100.0, "NV4: 4 NVLinks × 25 GB/s per direction (NVLink 3) = 100 GB/s".into())),
            host: None,
        }],
        ..Facts::default()
    }
}

/// A two-GPU matrix copying at `gbps` with P2P on both ways (judged against 100 GB/s).
fn p2p_matrix(gbps: f64) -> P2pMatrix {
    let pair = |src, dst| P2pPair {
        src,
        dst,
        can_access_peer: true,
        measures: vec![P2pMeasure {
            mode: P2pMode::PeerEnabled,
            bandwidth_gbps: gpu_doctor_model::bench::stats::Stats::from_samples(&[gbps]),
            latency_us: None,
            skipped: None,
        }],
        judgement: None,
        judged_mode: None,
    };
    P2pMatrix {
        gpus: (0..2).map(|ordinal| P2pGpu { ordinal, ..P2pGpu::default() }).collect(),
        pairs: vec![pair(0, 1), pair(1, 0)],
        ..P2pMatrix::default()
    }
}

/// What one fake run measured; `healthy()` is normal everywhere.
struct Fake {
    values: Vec<(TestKind, Metric, f64, Unit)>,
    failed_check: Option<TestKind>,
    /// The SM clock in the late part of the sustained load (2000 MHz early).
    late_clock_mhz: u32,
    /// How the memory-error counters changed over the memory test.
    ecc: Option<EccChange>,
    /// The memory test broke off (failed) instead of finishing.
    memtest_broke_off: bool,
    /// GPU-to-GPU copies with P2P on, GB/s, over a link of 100 GB/s.
    p2p_gbps: f64,
}

fn healthy() -> Fake {
    use Metric as M;
    use TestKind as T;
    let gemm = M::Gemm { precision: Precision::Fp32, n: 4096 };
    Fake {
        values: vec![
            (T::H2d, M::HostToDevice { pinned: true }, 25.0, Unit::GbPerS),
            (T::H2d, M::HostToDevice { pinned: false }, 10.0, Unit::GbPerS),
            (T::H2d, M::StagingCopy { h2d: true }, 12.0, Unit::GbPerS),
            (T::D2h, M::DeviceToHost { pinned: true }, 25.0, Unit::GbPerS),
            (T::Bidir, M::Bidirectional, 40.0, Unit::GbPerS),
            (T::D2d, M::DeviceCopy { method: CopyMethod::Memcpy }, 550.0, Unit::GbPerS),
            (T::Gemm, gemm, 40.0, Unit::TflopPerS),
            (T::Fma, M::FmaPeak, 45.0, Unit::TflopPerS),
            (T::Latency, M::LaunchLatency, 8.0, Unit::Micros),
            (T::Latency, M::LaunchInterval, 4.0, Unit::Micros),
            (T::Memtest, M::LargestAllocation, 0.9 * FREE, Unit::Bytes),
            (T::Memtest, M::MemtestErrors, 0.0, Unit::Count),
            (T::Sustained, M::SustainedGemm { precision: Precision::Fp32 }, 35.0, Unit::TflopPerS),
            (T::Cpu, M::CpuGemm, 100.0, Unit::GflopPerS),
        ],
        failed_check: None,
        late_clock_mhz: 1990,
        ecc: ecc(0, 0),
        memtest_broke_off: false,
        p2p_gbps: 90.0,
    }
}

impl Fake {
    fn with(mut self, metric: Metric, value: f64) -> Self {
        let v = self.values.iter_mut().find(|v| v.1 == metric).unwrap();
        v.2 = value;
        self
    }

    /// The run assembled as the runner's record would give it: each test 1 s long, one after the
    /// other, telemetry every 100 ms over the sustained test.
    fn run(&self) -> BenchRun {
        let tests: Vec<TestKind> = TestKind::ALL.to_vec();
        let mut events = Vec::new();
        let mut sustained = (0, 0);
        for (i, &test) in tests.iter().enumerate() {
            let start = 1000 * u64::try_from(i).unwrap();
            let measurements = self
                .values
                .iter()
                .filter(|v| v.0 == test)
                .map(|&(_, metric, value, unit)| Measurement::single(metric, format!("{metric:?}"), value, unit))
                .collect();
            let checks = vec![Check {
                name: "result against a reference".into(),
                passed: self.failed_check != Some(test),
                detail: "largest difference 0.5".into(),
            }];
            let p2p = (test == TestKind::P2p).then(|| p2p_matrix(self.p2p_gbps));
            let result = TestResult { measurements, checks, p2p, ..TestResult::default() };
            events.push(TimedEvent { t_ms: start, event: BenchEvent::Started { test, device: None } });
            let end = if test == TestKind::Memtest && self.memtest_broke_off {
                BenchEvent::Failed { test, failure: Failure::new(FailureKind::Crash, "the worker died") }
            } else {
                BenchEvent::Finished { test, result }
            };
            events.push(TimedEvent { t_ms: start + 1000, event: end });
            if test == TestKind::Sustained {
                sustained = (start, start + 1000);
            }
        }
        let telemetry = (0..=10)
            .map(|k| {
                let t_ms = sustained.0 + 100 * k;
                let mhz = if t_ms < sustained.0 + 500 { 2000 } else { self.late_clock_mhz };
                TelemetryPoint { t_ms, sample: GpuTelemetry { clock_sm_mhz: Some(mhz), ..GpuTelemetry::default() } }
            })
            .collect();
        let record = RunRecord { events, telemetry, memtest_ecc: self.ecc.clone(), ..RunRecord::default() };
        crate::bench::run::assemble(&BenchPlan::preset(0, tests, true), record, |_| facts())
    }
}

fn ids(run: &BenchRun) -> Vec<&str> {
    run.findings.iter().map(|f| f.id.as_str()).collect()
}

#[test]
fn a_healthy_run_makes_no_finding() {
    let run = healthy().run();
    assert!(run.tests.iter().all(|t| t.judged.iter().all(|j| !matches!(
        j.judgement.verdict,
        gpu_doctor_model::bench::judgement::Verdict::Low
            | gpu_doctor_model::bench::judgement::Verdict::Failed
            | gpu_doctor_model::bench::judgement::Verdict::AboveTheory
    ))));
    assert!(run.clocks_under_load.as_ref().is_some_and(|c| !c.throttled), "{:?}", run.clocks_under_load);
    assert_eq!(ids(&run), Vec::<&str>::new());
    assert_eq!(bench_findings(&run), Vec::new());
}

#[test]
fn each_bench_rule_fires_alone_on_the_run_it_names() {
    use Metric as M;
    let cases: Vec<(&str, Fake)> = vec![
        ("bench.link.below_expected", healthy().with(M::HostToDevice { pinned: true }, 5.0)),
        ("bench.pageable.below_expected", healthy().with(M::HostToDevice { pinned: false }, 2.0)),
        ("bench.memory.below_expected", healthy().with(M::DeviceCopy { method: CopyMethod::Memcpy }, 100.0)),
        ("bench.compute.below_expected", healthy().with(M::FmaPeak, 10.0)),
        ("bench.latency.above_usual", healthy().with(M::LaunchLatency, 100.0)),
        ("bench.memtest.allocation_below_free", healthy().with(M::LargestAllocation, 0.1 * FREE)),
        ("bench.memtest.errors", healthy().with(M::MemtestErrors, 3.0)),
        ("bench.above_theory", healthy().with(M::Bidirectional, 90.0)),
        ("bench.check_failed", Fake { failed_check: Some(TestKind::Gemm), ..healthy() }),
        ("bench.sustained.clocks_fell", Fake { late_clock_mhz: 1500, ..healthy() }),
        ("bench.memtest.ecc_errors", Fake { ecc: ecc(0, 2), memtest_broke_off: true, ..healthy() }),
        ("bench.memtest.ecc_corrected", Fake { ecc: ecc(5, 0), ..healthy() }),
        ("bench.peer_copy.below_expected", Fake { p2p_gbps: 40.0, ..healthy() }),
    ];
    let bench_ids: Vec<&str> = crate::diagnose::bench::RULES.iter().map(|r| r.id).collect();
    let covered: Vec<&str> = cases.iter().map(|c| c.0).collect();
    assert_eq!(covered, bench_ids, "every bench rule has a case, in table order");
    for (id, fake) in cases {
        let run = fake.run();
        assert_eq!(ids(&run), [id], "{id}");
        let rule = rules().find(|r| r.id == id).unwrap();
        let f = &run.findings[0];
        assert_eq!((f.category, f.severity), (rule.category, rule.severity), "{id}");
        assert!(!f.summary.is_empty() && !f.detail.is_empty() && !f.evidence.is_empty(), "{id}: {f:?}");
    }
}

#[test]
fn a_rule_fired_by_several_measurements_is_one_finding_naming_each() {
    let run = healthy()
        .with(Metric::HostToDevice { pinned: true }, 5.0)
        .with(Metric::DeviceToHost { pinned: true }, 4.0)
        .run();
    assert_eq!(ids(&run), ["bench.link.below_expected"]);
    let f = &run.findings[0];
    assert_eq!(f.category, Category::PcieLinkDegraded);
    assert_eq!(f.evidence.len(), 2, "{:?}", f.evidence);
    assert!(
        f.evidence[0].starts_with("host → device copy: ") && f.evidence[0].contains("measured 5"),
        "{:?}",
        f.evidence
    );
    assert!(f.evidence[1].starts_with("device → host copy: ") && f.evidence[1].contains("expected 31.5 GB/s"));
    assert!(f.summary.starts_with("host → device copy: "), "{}", f.summary);
}

#[test]
fn findings_come_errors_first() {
    let run = Fake { failed_check: Some(TestKind::Gemm), ..healthy() }
        .with(Metric::HostToDevice { pinned: true }, 5.0)
        .with(Metric::Bidirectional, 90.0)
        .run();
    assert_eq!(ids(&run), ["bench.check_failed", "bench.link.below_expected", "bench.above_theory"]);
}

/// The triggers in docs/diagnosis.md quote the shares and limits the verdicts use; a change to one
/// of those constants must change the rule's text too.
#[test]
fn the_rule_texts_name_the_judging_constants() {
    use crate::bench::p2p::{PEER_NORMAL_SHARE, STAGED_NORMAL_SHARE};
    use crate::bench::throttle::CLOCK_DROP_FINDING_PCT;
    use crate::bench::verdict::*;
    let trigger = |id: &str| rules().find(|r| r.id == id).unwrap().trigger;
    let pct = |share: f64| format!("{:.0} %", share * 100.0);
    let cases = [
        ("bench.link.below_expected", vec![pct(LINK_NORMAL_SHARE), pct(BIDIR_NORMAL_SHARE)]),
        ("bench.pageable.below_expected", vec![pct(PAGEABLE_NORMAL_SHARE)]),
        ("bench.memory.below_expected", vec![pct(MEMORY_NORMAL_SHARE)]),
        (
            "bench.compute.below_expected",
            vec![pct(GEMM_NORMAL_SHARE), pct(GEMM_SMALL_NORMAL_SHARE), pct(FMA_NORMAL_SHARE)],
        ),
        (
            "bench.latency.above_usual",
            vec![format!("{LAUNCH_LATENCY_REFERENCE_US:.0} µs"), format!("{LAUNCH_INTERVAL_REFERENCE_US:.0} µs")],
        ),
        ("bench.memtest.allocation_below_free", vec![pct(ALLOC_NORMAL_SHARE)]),
        ("bench.above_theory", vec![pct(ABOVE_THEORY_FACTOR)]),
        ("bench.sustained.clocks_fell", vec![format!("{CLOCK_DROP_FINDING_PCT:.0} %")]),
        ("bench.peer_copy.below_expected", vec![pct(PEER_NORMAL_SHARE), pct(STAGED_NORMAL_SHARE)]),
    ];
    for (id, needles) in cases {
        for needle in needles {
            assert!(trigger(id).contains(&needle), "{id}'s trigger does not say {needle}");
        }
    }
}

/// An uncorrectable error over a finished memory test fails its counter check (one error finding,
/// `bench.check_failed`), not a second finding; a broken-off test has no check, so the counters
/// speak for themselves; counters that did not move or were not read make no finding.
#[test]
fn memory_error_counters_make_one_finding_however_the_memory_test_ended() {
    let finished = Fake { ecc: ecc(1, 1), ..healthy() }.run();
    assert_eq!(ids(&finished), ["bench.check_failed"]);
    assert!(
        finished.findings[0].evidence.iter().any(|e| e.contains("memory-error counters")),
        "{:?}",
        finished.findings
    );
    let broke_off = Fake { ecc: ecc(1, 1), memtest_broke_off: true, ..healthy() }.run();
    assert_eq!(ids(&broke_off), ["bench.memtest.ecc_errors"]);
    for quiet in [None, Some(EccChange::unread("NVML: not supported by this GPU"))] {
        assert_eq!(ids(&Fake { ecc: quiet, ..healthy() }.run()), Vec::<&str>::new());
    }
}

/// A pageable copy that is slow next to a healthy pinned copy is the host's doing: its own rule,
/// never the link's.
#[test]
fn a_slow_pageable_copy_does_not_blame_the_link() {
    let run = healthy().with(Metric::HostToDevice { pinned: false }, 2.0).run();
    assert_eq!(ids(&run), ["bench.pageable.below_expected"]);
    let f = &run.findings[0];
    assert!(f.evidence[0].contains("host memcpy"), "{:?}", f.evidence);
    assert!(!f.fix.as_deref().unwrap_or_default().contains("reseat"), "{:?}", f.fix);
}

/// A compute peak uses the rated boost clock, and a GeForce board boosts past it up to NVML's
/// highest SM clock: a result in between is normal, not above theory, so the rule's text must name
/// that ceiling rather than "110 % of the value it was judged against".
#[test]
fn above_theory_for_compute_is_past_the_highest_sm_clock_as_the_rule_says() {
    use crate::bench::verdict::judge;
    use gpu_doctor_model::bench::judgement::Verdict;
    // FP32: 256 ops/clock/SM × 100 SMs × 1600 MHz = 40.96 TFLOP/s rated; 51.2 at the highest 2000 MHz.
    let facts = Facts { clock_sm_rated_mhz: Some(1600), clock_sm_rated_source: Some("test".into()), ..facts() };
    let fma = |value: f64| Measurement::single(Metric::FmaPeak, "", value, Unit::TflopPerS);
    let boosted = judge(&fma(48.0), &facts);
    assert!(boosted.percent_of_expected.unwrap() > 110.0, "{boosted:?}");
    assert_eq!(boosted.verdict, Verdict::Normal, "{boosted:?}");
    assert_eq!(judge(&fma(57.0), &facts).verdict, Verdict::AboveTheory);
    let trigger = rules().find(|r| r.id == "bench.above_theory").unwrap().trigger;
    assert!(trigger.contains("highest SM clock") && trigger.contains("rated boost clock"), "{trigger}");
}
