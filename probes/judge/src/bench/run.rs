//! The saved run assembled from what the runner collected: each measurement judged, the ECC
//! counters and the clocks under load added, and the `bench.*` findings.

use gpu_doctor_model::EccChange;
use gpu_doctor_model::bench::plan::{BenchPlan, Precision, TestKind};
use gpu_doctor_model::bench::protocol::{BenchEvent, Check, DeviceInfo, Failure, Metric};
use gpu_doctor_model::bench::record::{RunRecord, TelemetryPoint};
use gpu_doctor_model::bench::run::{BENCH_SCHEMA_VERSION, BenchRun, Comparison, TestRun, TestStatus};
use gpu_doctor_model::bench::unit::Unit;
use gpu_doctor_model::bench::verdict::{Facts, Judged};

use super::throttle;
use super::verdict::judge_in;

/// Assembles a run from what the runner collected; `facts` turns the device description into
/// the facts to judge against.
pub fn assemble(plan: &BenchPlan, record: RunRecord, facts: impl FnOnce(Option<&DeviceInfo>) -> Facts) -> BenchRun {
    let device = record.events.iter().rev().find_map(|e| match &e.event {
        BenchEvent::Started { device: Some(d), .. } => Some(d.clone()),
        _ => None,
    });
    let facts = facts(device.as_ref());
    let mut tests: Vec<TestRun> = plan
        .tests
        .iter()
        .map(|&test| TestRun {
            test,
            status: TestStatus::Failed,
            started_ms: None,
            ended_ms: None,
            points: Vec::new(),
            result: None,
            failure: None,
            judged: Vec::new(),
        })
        .collect();
    for timed in &record.events {
        let Some(t) = tests.iter_mut().find(|t| t.test == timed.event.test()) else { continue };
        match &timed.event {
            BenchEvent::Started { .. } => t.started_ms = t.started_ms.or(Some(timed.t_ms)),
            BenchEvent::Sample { point, .. } => t.points.push(point.clone()),
            BenchEvent::Progress { .. } => {}
            BenchEvent::Finished { result, .. } => {
                t.ended_ms = Some(timed.t_ms);
                t.status =
                    if result.checks.iter().all(|c| c.passed) { TestStatus::Passed } else { TestStatus::ChecksFailed };
                t.judged = result
                    .measurements
                    .iter()
                    .map(|m| Judged { measurement: m.clone(), judgement: judge_in(m, &result.measurements, &facts) })
                    .collect();
                let mut result = result.clone();
                if let Some(matrix) = &mut result.p2p {
                    super::p2p::judge_matrix(matrix, &facts.p2p_links);
                }
                t.result = Some(result);
            }
            BenchEvent::Failed { failure, .. } => {
                t.ended_ms = Some(timed.t_ms);
                t.status = TestStatus::Failed;
                t.failure = Some(failure.clone());
            }
        }
    }
    if let Some(change) = &record.memtest_ecc {
        add_ecc_check(&mut tests, change);
    }
    for t in &mut tests {
        if t.result.is_none() && t.failure.is_none() {
            t.failure = Some(Failure::new(
                gpu_doctor_model::bench::protocol::FailureKind::Internal,
                "no result and no failure was reported for this test",
            ));
        }
    }
    note_measured_clocks(&mut tests, &record.telemetry, &facts);
    let clocks_under_load = tests
        .iter()
        .find(|t| t.test == TestKind::Sustained && t.result.is_some())
        .and_then(|t| throttle::analyze(&record.telemetry, t.started_ms?, t.ended_ms?));
    let mut run = BenchRun {
        schema_version: BENCH_SCHEMA_VERSION,
        tool_version: gpu_doctor_model::TOOL_VERSION.to_owned(),
        started_at_unix_secs: record.started_at_unix_secs,
        duration_secs: record.duration_secs,
        plan: plan.clone(),
        device,
        facts,
        tests,
        comparisons: Vec::new(),
        clocks_under_load,
        findings: Vec::new(),
        telemetry: record.telemetry,
        telemetry_note: record.telemetry_note,
        worker: record.worker,
        library_notes: Vec::new(),
        memtest_ecc: record.memtest_ecc,
    };
    run.comparisons = comparisons(&run);
    run.findings = crate::diagnose::bench_findings(&run);
    run
}

/// The GPU against the CPU, where both ran the same kind of work.
fn comparisons(run: &BenchRun) -> Vec<Comparison> {
    let value = |pred: &dyn Fn(&Metric) -> bool| run.find_metric(pred).map(|j| j.measurement.value);
    let mut out = Vec::new();
    let cpu_gflops = value(&|m| *m == Metric::CpuGemm);
    for p in [Precision::Fp32, Precision::Bf16] {
        if let (Some(gpu_tflops), Some(cpu)) =
            (value(&|m| matches!(m, Metric::Gemm { precision, .. } if *precision == p)), cpu_gflops)
            && cpu > 0.0
        {
            let gpu = gpu_tflops * 1000.0;
            out.push(Comparison {
                label: format!("{} GEMM on the GPU (cuBLAS) vs FP32 SGEMM on the CPU", p.label()),
                gpu,
                cpu,
                unit: Unit::GflopPerS,
                times: gpu / cpu,
            });
        }
    }
    if let (Some(gpu), Some(cpu)) =
        (value(&|m| matches!(m, Metric::DeviceCopy { .. })), value(&|m| *m == Metric::HostMemcpy))
        && cpu > 0.0
    {
        out.push(Comparison {
            label: "memory copy: GPU device memory vs host memory".to_owned(),
            gpu,
            cpu,
            unit: Unit::GbPerS,
            times: gpu / cpu,
        });
    }
    out
}

/// The memory-error counters judged as one check of a finished memory test: a new uncorrectable
/// error, retired page or remapped row fails it (corrected errors do not: they were corrected, and
/// the `bench.memtest.ecc_corrected` rule warns of them); counters the GPU does not have are a note.
fn add_ecc_check(tests: &mut [TestRun], change: &EccChange) {
    let Some(t) = tests.iter_mut().find(|t| t.test == TestKind::Memtest) else { return };
    let Some(result) = &mut t.result else { return };
    if change.compared() {
        result.checks.push(Check {
            name: "memory-error counters (NVML) over the memory test".to_owned(),
            passed: !change.failed(),
            detail: change.summary(),
        });
        if change.failed() {
            t.status = TestStatus::ChecksFailed;
        }
    } else {
        result.notes.push(format!("the memory-error counters were not compared: {}", change.not_read.join("; ")));
    }
}

/// Adds the SM clock NVML measured while each compute test ran to the basis of its expectations,
/// beside the rated clock they are computed with: a board running below its rating (a laptop, an
/// eGPU, a power cap) shows why it reads low, one boosting past it why it reads high.
fn note_measured_clocks(tests: &mut [TestRun], telemetry: &[TelemetryPoint], facts: &Facts) {
    for t in tests.iter_mut().filter(|t| matches!(t.test, TestKind::Gemm | TestKind::Fma | TestKind::Sustained)) {
        let Some((mhz, samples)) =
            t.started_ms.zip(t.ended_ms).and_then(|(a, b)| throttle::median_sm_clock(telemetry, a, b))
        else {
            continue;
        };
        let mut note = format!("; SM clock measured during the test: median {mhz:.0} MHz ({samples} NVML samples)");
        // Of the reference clock: the rated boost clock (a Hopper tensor figure's own clock is in
        // its basis), else NVML's highest SM clock.
        if let Some((reference, _)) = facts.reference_sm_clock() {
            let what = if facts.clock_sm_rated_mhz.is_some() { "rated boost clock" } else { "highest SM clock" };
            note.push_str(&format!(
                ", {:.0} % of the {reference} MHz {what}",
                mhz / f64::from(reference.max(1)) * 100.0
            ));
        }
        for e in t.judged.iter_mut().filter_map(|j| j.judgement.expected.as_mut()) {
            if e.unit == Unit::TflopPerS {
                e.basis.push_str(&note);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use gpu_doctor_model::bench::judgement::Verdict;
    use gpu_doctor_model::bench::protocol::TestResult;
    use gpu_doctor_model::bench::protocol::{Check, FailureKind, Measurement};
    use gpu_doctor_model::bench::record::TimedEvent;
    use gpu_doctor_model::{Category, Severity};

    fn ev(t_ms: u64, event: BenchEvent) -> TimedEvent {
        TimedEvent { t_ms, event }
    }

    fn m(metric: Metric, value: f64, unit: Unit) -> Measurement {
        Measurement::single(metric, "x", value, unit)
    }

    #[test]
    fn a_run_without_cuda_is_judged_and_does_not_count_as_complete() {
        let plan = BenchPlan::preset(0, vec![TestKind::H2d, TestKind::Cpu], true);
        let record = RunRecord {
            events: vec![
                ev(1, BenchEvent::Started { test: TestKind::H2d, device: None }),
                ev(
                    2,
                    BenchEvent::Failed {
                        test: TestKind::H2d,
                        failure: Failure::new(FailureKind::MissingLibrary, "libcuda.so.1 missing"),
                    },
                ),
                ev(3, BenchEvent::Started { test: TestKind::Cpu, device: None }),
                ev(
                    9,
                    BenchEvent::Finished {
                        test: TestKind::Cpu,
                        result: TestResult {
                            measurements: vec![m(Metric::CpuGemm, 100.0, Unit::GflopPerS)],
                            ..TestResult::default()
                        },
                    },
                ),
            ],
            ..RunRecord::default()
        };
        let run = assemble(&plan, record, |d| {
            assert!(d.is_none());
            Facts::default()
        });
        assert!(!run.all_ran());
        assert_eq!(run.tests[0].status, TestStatus::Failed);
        assert_eq!(run.tests[1].status, TestStatus::Passed);
        assert_eq!(run.tests[1].judged[0].judgement.verdict, Verdict::NoReference);
        assert!(run.findings.is_empty());
        let json = serde_json::to_string(&run).unwrap();
        let back: BenchRun = serde_json::from_str(&json).unwrap();
        assert_eq!(back, run);
    }

    /// A laptop board rated at 2520 MHz that ran the FMA test at 1500 MHz: its basis names both.
    #[test]
    fn compute_expectations_name_the_clock_measured_during_the_test() {
        use gpu_doctor_model::telemetry::GpuTelemetry;

        let plan = BenchPlan::preset(0, vec![TestKind::Fma, TestKind::H2d], true);
        let fma = TestResult { measurements: vec![m(Metric::FmaPeak, 45.0, Unit::TflopPerS)], ..TestResult::default() };
        let h2d = TestResult {
            measurements: vec![m(Metric::HostToDevice { pinned: true }, 20.0, Unit::GbPerS)],
            ..TestResult::default()
        };
        let sample = |t_ms: u64, mhz: u32| TelemetryPoint {
            t_ms,
            sample: GpuTelemetry { clock_sm_mhz: Some(mhz), ..GpuTelemetry::default() },
        };
        let record = RunRecord {
            events: vec![
                ev(1000, BenchEvent::Started { test: TestKind::Fma, device: None }),
                ev(2000, BenchEvent::Finished { test: TestKind::Fma, result: fma }),
                ev(2100, BenchEvent::Started { test: TestKind::H2d, device: None }),
                ev(3000, BenchEvent::Finished { test: TestKind::H2d, result: h2d }),
            ],
            // Idle before the test, 1500 MHz during it, 2800 MHz after it.
            telemetry: vec![
                sample(900, 210),
                sample(1100, 1500),
                sample(1500, 1490),
                sample(1900, 1510),
                sample(2500, 2800),
            ],
            ..RunRecord::default()
        };
        let run = assemble(&plan, record, |_| Facts {
            sm_count: Some(128),
            clock_sm_max_mhz: Some(3105),
            clock_sm_rated_mhz: Some(2520),
            clock_sm_rated_source: Some("NVML's max customer boost clock".into()),
            peak_ops: Some(gpu_doctor_model::bench::verdict::PeakOps { fp32: Some(128), ..Default::default() }),
            link_gbytes_per_s: Some(25.0),
            ..Facts::default()
        });
        let basis = &run.tests[0].judged[0].judgement.expected.as_ref().unwrap().basis;
        assert!(basis.contains("2520 MHz: the rated boost clock"), "{basis}");
        assert!(
            basis.contains("measured during the test: median 1500 MHz (3 NVML samples), 60 % of the 2520 MHz"),
            "{basis}"
        );
        let h2d_basis = &run.tests[1].judged[0].judgement.expected.as_ref().unwrap().basis;
        assert!(!h2d_basis.contains("SM clock"), "{h2d_basis}");
    }

    /// A memory test that finished clean, with the counters' change as the runner recorded it.
    fn memtest_run(change: Option<EccChange>) -> BenchRun {
        let plan = BenchPlan::preset(0, vec![TestKind::Memtest], true);
        let result =
            TestResult { measurements: vec![m(Metric::MemtestErrors, 0.0, Unit::Count)], ..TestResult::default() };
        let record = RunRecord {
            events: vec![
                ev(1, BenchEvent::Started { test: TestKind::Memtest, device: None }),
                ev(2, BenchEvent::Finished { test: TestKind::Memtest, result }),
            ],
            memtest_ecc: change,
            ..RunRecord::default()
        };
        assemble(&plan, record, |_| Facts::default())
    }

    fn change(corrected: u64, uncorrected: u64) -> EccChange {
        EccChange { corrected: Some(corrected), uncorrected: Some(uncorrected), ..EccChange::default() }
    }

    #[test]
    fn memory_errors_ecc_hid_fail_a_clean_memory_test() {
        let clean = memtest_run(Some(change(0, 0)));
        assert!(clean.all_ran() && clean.findings.is_empty(), "{:?}", clean.findings);
        let checks = &clean.tests[0].result.as_ref().unwrap().checks;
        assert!(checks.iter().any(|c| c.passed && c.name.contains("memory-error counters")), "{checks:?}");

        let uncorrected = memtest_run(Some(change(0, 1)));
        assert!(!uncorrected.all_ran());
        assert_eq!(uncorrected.tests[0].status, TestStatus::ChecksFailed);
        let ids: Vec<&str> = uncorrected.findings.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["bench.check_failed"]);
        assert!(uncorrected.findings[0].evidence[0].contains("1 new uncorrected errors"));

        let remapped = memtest_run(Some(EccChange { remapped_rows: Some(1), ..change(0, 0) }));
        assert_eq!(remapped.tests[0].status, TestStatus::ChecksFailed);

        let corrected = memtest_run(Some(change(3, 0)));
        assert!(corrected.all_ran(), "corrected errors do not fail the test");
        assert_eq!(corrected.findings.len(), 1);
        assert_eq!(corrected.findings[0].id, "bench.memtest.ecc_corrected");
        assert_eq!(corrected.findings[0].severity, Severity::Warning);

        let json = serde_json::to_string(&corrected).unwrap();
        assert_eq!(serde_json::from_str::<BenchRun>(&json).unwrap(), corrected);
    }

    #[test]
    fn counters_a_geforce_lacks_are_a_note_and_a_broken_off_test_still_reports_errors() {
        let geforce = memtest_run(Some(EccChange::unread("not supported by this GPU")));
        assert!(geforce.all_ran() && geforce.findings.is_empty());
        let notes = &geforce.tests[0].result.as_ref().unwrap().notes;
        assert!(notes.iter().any(|n| n.contains("not supported by this GPU")), "{notes:?}");
        assert!(memtest_run(None).tests[0].result.as_ref().unwrap().checks.is_empty());

        let plan = BenchPlan::preset(0, vec![TestKind::Memtest], true);
        let record = RunRecord {
            events: vec![
                ev(1, BenchEvent::Started { test: TestKind::Memtest, device: None }),
                ev(
                    2,
                    BenchEvent::Failed {
                        test: TestKind::Memtest,
                        failure: Failure::new(FailureKind::Crash, "the worker was killed"),
                    },
                ),
            ],
            memtest_ecc: Some(change(0, 2)),
            ..RunRecord::default()
        };
        let run = assemble(&plan, record, |_| Facts::default());
        let ids: Vec<&str> = run.findings.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["bench.memtest.ecc_errors"]);
        assert_eq!(run.findings[0].severity, Severity::Error);
    }

    #[test]
    fn pageable_copies_are_judged_within_their_test() {
        let plan = BenchPlan::preset(0, vec![TestKind::H2d], true);
        let result = TestResult {
            measurements: vec![
                m(Metric::HostToDevice { pinned: true }, 50.0, Unit::GbPerS),
                m(Metric::HostToDevice { pinned: false }, 10.0, Unit::GbPerS),
                m(Metric::StagingCopy { h2d: true }, 12.0, Unit::GbPerS),
            ],
            ..TestResult::default()
        };
        let record = RunRecord {
            events: vec![ev(1, BenchEvent::Finished { test: TestKind::H2d, result })],
            ..RunRecord::default()
        };
        let run = assemble(&plan, record, |_| Facts { link_gbytes_per_s: Some(63.0), ..Facts::default() });
        let pageable = run.find_metric(|m| *m == Metric::HostToDevice { pinned: false }).unwrap();
        assert_eq!(pageable.judgement.verdict, Verdict::Normal, "{:?}", pageable.judgement);
        assert!(run.findings.is_empty(), "{:?}", run.findings);
    }

    #[test]
    fn low_links_failed_checks_and_comparisons() {
        let plan = BenchPlan::preset(0, vec![TestKind::H2d, TestKind::Gemm, TestKind::Cpu], true);
        let gemm = TestResult {
            measurements: vec![m(Metric::Gemm { precision: Precision::Fp32, n: 4096 }, 20.0, Unit::TflopPerS)],
            checks: vec![Check { name: "FP32 256³".into(), passed: false, detail: "error 3.1".into() }],
            ..TestResult::default()
        };
        let record = RunRecord {
            events: vec![
                ev(
                    1,
                    BenchEvent::Finished {
                        test: TestKind::H2d,
                        result: TestResult {
                            measurements: vec![m(Metric::HostToDevice { pinned: true }, 0.8, Unit::GbPerS)],
                            ..TestResult::default()
                        },
                    },
                ),
                ev(2, BenchEvent::Finished { test: TestKind::Gemm, result: gemm }),
                ev(
                    3,
                    BenchEvent::Finished {
                        test: TestKind::Cpu,
                        result: TestResult {
                            measurements: vec![m(Metric::CpuGemm, 200.0, Unit::GflopPerS)],
                            ..TestResult::default()
                        },
                    },
                ),
            ],
            ..RunRecord::default()
        };
        let run = assemble(&plan, record, |_| Facts {
            link_gbytes_per_s: Some(2.75),
            link_basis: Some("Thunderbolt 3".into()),
            ..Facts::default()
        });
        assert!(!run.all_ran());
        assert_eq!(run.tests[1].status, TestStatus::ChecksFailed);
        let ids: Vec<&str> = run.findings.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["bench.check_failed", "bench.link.below_expected"]);
        assert_eq!(run.findings[1].category, Category::PcieLinkDegraded);
        assert_eq!(run.comparisons.len(), 1);
        assert!((run.comparisons[0].times - 100.0).abs() < 1e-9);
    }

    /// The run is part of the report's type: it serializes as the run itself and reads back equal.
    #[test]
    fn a_report_with_a_bench_run_round_trips_as_typed_data() {
        let run =
            assemble(&BenchPlan::preset(0, vec![TestKind::H2d], true), RunRecord::default(), |_| Facts::default());
        let mut report =
            gpu_doctor_model::Report::new(gpu_doctor_model::Snapshot::unknown(vec!["test".into()]), Vec::new());
        report.bench = Some(run.clone());
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["bench"], serde_json::to_value(&run).unwrap());
        let back: gpu_doctor_model::Report = serde_json::from_value(json).unwrap();
        assert_eq!(back, report);
        assert_eq!(back.bench.unwrap().tests[0].test, TestKind::H2d);
        // Without a run, no `bench` key at all.
        report.bench = None;
        assert!(serde_json::to_value(&report).unwrap().get("bench").is_none());
    }
}
