//! Each rule with a case that fails when the rule is wrong.

use gpu_doctor_model::bench::plan::{BenchPlan, TestKind};
use gpu_doctor_model::bench::protocol::{Failure, FailureKind};
use gpu_doctor_model::bench::run::TestRun;
use gpu_doctor_model::{Category, DeepOnnxruntime, DeepTorch, EccCounters, EnvKind, Framework, FrameworkBuild};

use super::*;

fn link(gen_idle: u32, gen_load: u32) -> LinkReading {
    LinkReading {
        gen_max: Some(4),
        width_max: Some(16),
        gen_idle: Some(gen_idle),
        gen_under_load: Some(gen_load),
        width_under_load: Some(16),
    }
}

#[test]
fn a_link_at_gen1_under_load_fails_and_at_gen1_only_while_idle_passes() {
    let loaded = link_under_load("GPU 0", link(1, 1));
    assert_eq!(loaded.verdict, CheckVerdict::Fail, "{loaded:?}");
    let idle_only = link_under_load("GPU 0", link(1, 4));
    assert_eq!(idle_only.verdict, CheckVerdict::Pass, "{idle_only:?}");
    assert!(idle_only.measured.describe().contains("Gen1 while idle, not judged"));
    let narrow = link_under_load("GPU 0", LinkReading { width_under_load: Some(8), ..link(4, 4) });
    assert_eq!(narrow.verdict, CheckVerdict::Fail, "x8 of x16 under load");
    let unread = link_under_load("GPU 0", LinkReading { gen_under_load: None, ..link(1, 4) });
    assert_eq!(unread.verdict, CheckVerdict::NotRun, "not read is not a pass");
}

#[test]
fn the_link_under_load_is_the_best_sample_inside_the_copy_window() {
    use gpu_doctor_model::telemetry::GpuTelemetry;
    let at = |t_ms, g| TelemetryPoint {
        t_ms,
        sample: GpuTelemetry { pcie_link_gen: Some(g), pcie_link_width: Some(16), ..GpuTelemetry::default() },
    };
    // Idle at Gen1 before and after; Gen4 while the copy (1000..2000 ms) runs.
    let trained = [at(500, 1), at(1000, 1), at(1100, 4), at(1900, 4), at(2500, 1)];
    assert_eq!(link_during(&trained, 1000, 2000), (Some(4), Some(16)));
    let reading = LinkReading { gen_under_load: Some(4), ..link(1, 4) };
    assert_eq!(link_under_load("GPU 0", reading).verdict, CheckVerdict::Pass);
    // Stuck at Gen1 under load: Gen4 outside the window does not count.
    let stuck = [at(500, 4), at(1100, 1), at(1900, 1), at(2500, 4)];
    assert_eq!(link_during(&stuck, 1000, 2000).0, Some(1));
    assert_eq!(link_during(&[], 1000, 2000), (None, None), "no sample, no reading");
}

#[test]
fn thermal_slowdown_during_the_stress_warns_and_a_power_cap_does_not() {
    let hot = slowdown("GPU 0", Some(&["sw_power_cap".to_owned(), "hw_thermal_slowdown".to_owned()]));
    assert_eq!(hot.verdict, CheckVerdict::Warn);
    assert_eq!(hot.measured.describe(), "hw_thermal_slowdown");
    assert_eq!(slowdown("GPU 0", Some(&["sw_power_cap".to_owned()])).verdict, CheckVerdict::Pass);
    assert_eq!(slowdown("GPU 0", None).verdict, CheckVerdict::NotRun);
}

fn xid(n: u32, line: &str) -> XidEvent {
    XidEvent { xid: n, pci_bus_id: Some("0000:01:00.0".into()), line: line.into() }
}

#[test]
fn an_xid_during_the_run_fails_and_one_from_before_does_not() {
    let old = xid(13, "[  10.0] NVRM: Xid (PCI:0000:01:00): 13, Graphics Exception");
    let before = Probed::found(vec![old.clone()], "dmesg");
    let same = Probed::found(vec![old.clone()], "dmesg");
    assert_eq!(xid_during_run(&before, &same).verdict, CheckVerdict::Pass);
    let new = Probed::found(
        vec![old, xid(79, "[ 99.0] NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus")],
        "dmesg",
    );
    let c = xid_during_run(&before, &new);
    assert_eq!(c.verdict, CheckVerdict::Fail);
    assert!(c.measured.describe().contains("Xid 79"), "{c:?}");
    let unread = xid_during_run(&before, &Probed::absent("dmesg_restrict is 1"));
    assert_eq!(unread.verdict, CheckVerdict::NotRun);
    assert!(unread.measured.describe().contains("dmesg_restrict"));
}

#[test]
fn new_uncorrectable_memory_errors_fail() {
    let before = EccCounters { uncorrected_volatile: Some(0), ..EccCounters::default() };
    let after = EccCounters { uncorrected_volatile: Some(1), ..EccCounters::default() };
    assert_eq!(memory_errors("GPU 0", Some(&EccChange::between(&before, &before))).verdict, CheckVerdict::Pass);
    assert_eq!(memory_errors("GPU 0", Some(&EccChange::between(&before, &after))).verdict, CheckVerdict::Fail);
    assert_eq!(memory_errors("GPU 0", Some(&EccChange::unread("no NVML"))).verdict, CheckVerdict::NotRun);
}

/// A GPU's health with the kernel's AER files as Linux prints them (`aer_stats_dev_attr`,
/// torvalds/linux:drivers/pci/pcie/aer.c) and NVML's replay counter.
fn pcie(replays: Option<u64>, bad_tlp: u64, cmplt_to_nonfatal: u64, fatal: u64) -> GpuHealth {
    let correctable = format!(
        "RxErr 0\nBadTLP {bad_tlp}\nBadDLLP 0\nRollover 0\nTimeout 0\nNonFatalErr 0\nCorrIntErr 0\nHeaderOF 0\n\
         TOTAL_ERR_COR {bad_tlp}\n"
    );
    let nonfatal = format!("DLP 0\nCmpltTO {cmplt_to_nonfatal}\nTOTAL_ERR_NONFATAL {cmplt_to_nonfatal}\n");
    let fatal = format!("DLP {fatal}\nSDES 0\nTOTAL_ERR_FATAL {fatal}\n");
    GpuHealth {
        pcie_replay_count: replays,
        aer: Some(AerCounters {
            correctable: AerCounters::parse(&correctable),
            nonfatal: AerCounters::parse(&nonfatal),
            fatal: AerCounters::parse(&fatal),
        }),
        ..GpuHealth::default()
    }
}

#[test]
fn a_new_uncorrectable_aer_error_fails_and_correctable_ones_or_replays_warn() {
    let before = pcie(Some(10), 3, 0, 0);
    let v = |after: &GpuHealth| pcie_errors("GPU 0", Some(&before), Some(after));
    assert_eq!(v(&pcie(Some(10), 3, 0, 0)).verdict, CheckVerdict::Pass);
    let nonfatal = v(&pcie(Some(10), 3, 1, 0));
    assert_eq!(nonfatal.verdict, CheckVerdict::Fail);
    assert!(nonfatal.measured.describe().contains("CmpltTO +1"), "{}", nonfatal.measured.describe());
    assert_eq!(v(&pcie(Some(10), 3, 0, 2)).verdict, CheckVerdict::Fail, "fatal");
    let corr = v(&pcie(Some(10), 5, 0, 0));
    assert_eq!(corr.verdict, CheckVerdict::Warn);
    assert!(corr.measured.describe().contains("BadTLP +2"), "{}", corr.measured.describe());
    assert_eq!(v(&pcie(Some(11), 3, 0, 0)).verdict, CheckVerdict::Warn, "a replay");
    let old = pcie(Some(10), 3, 1, 1);
    assert_eq!(pcie_errors("GPU 0", Some(&old), Some(&old)).verdict, CheckVerdict::Pass, "only new errors count");
}

#[test]
fn pcie_counters_that_cannot_be_read_are_said_never_passed() {
    let none = GpuHealth::default();
    let c = pcie_errors("GPU 0", Some(&none), Some(&none));
    assert_eq!(c.verdict, CheckVerdict::Info);
    assert!(c.measured.describe().contains("not readable"));
    assert_eq!(pcie_errors("GPU 0", None, None).verdict, CheckVerdict::Info);
    let replays_only = |n| GpuHealth { pcie_replay_count: Some(n), ..GpuHealth::default() };
    let c = pcie_errors("GPU 0", Some(&replays_only(0)), Some(&replays_only(0)));
    assert_eq!(c.verdict, CheckVerdict::Pass);
    assert!(c.measured.describe().contains("AER correctable: not readable"), "{}", c.measured.describe());
}

fn figure(i: u32, product: &str, value: f64) -> PeerFigure {
    PeerFigure { subject: format!("GPU {i}"), product: product.into(), value }
}

#[test]
fn two_identical_gpus_15_percent_apart_warn_and_5_percent_apart_pass() {
    let checks = identical_gpus(&[figure(0, "RTX 5090", 200.0), figure(1, "RTX 5090", 170.0)], "FP16 GEMM");
    assert_eq!(checks.len(), 2);
    assert_eq!(checks[0].verdict, CheckVerdict::Pass, "the best one");
    assert_eq!(checks[1].verdict, CheckVerdict::Warn, "{:?}", checks[1]);
    let close = identical_gpus(&[figure(0, "RTX 5090", 200.0), figure(1, "RTX 5090", 190.0)], "FP16 GEMM");
    assert!(close.iter().all(|c| c.verdict == CheckVerdict::Pass));
    let different = identical_gpus(&[figure(0, "RTX 5090", 200.0), figure(1, "RTX 4090", 100.0)], "FP16 GEMM");
    assert!(different.is_empty(), "different products are not compared");
}

#[test]
fn sustained_compute_below_95_percent_of_its_early_figure_fails() {
    assert_eq!(sustained("GPU 0", Some(100.0), Some(96.0), "SM clock").verdict, CheckVerdict::Pass);
    assert_eq!(sustained("GPU 0", Some(100.0), Some(94.0), "SM clock").verdict, CheckVerdict::Fail);
    assert_eq!(sustained("GPU 0", None, Some(94.0), "SM clock").verdict, CheckVerdict::NotRun);
}

#[test]
fn a_soak_round_drifting_below_95_percent_of_the_first_fails() {
    assert_eq!(drift("GPU 0, round 2", Some(200.0), Some(195.0)).verdict, CheckVerdict::Pass);
    assert_eq!(drift("GPU 0, round 3", Some(200.0), Some(180.0)).verdict, CheckVerdict::Fail);
    assert_eq!(drift("GPU 0, round 3", Some(200.0), None).verdict, CheckVerdict::Fail, "a round that broke");
    assert_eq!(drift("GPU 0, round 2", None, Some(195.0)).verdict, CheckVerdict::NotRun);
}

#[test]
fn pinned_copies_below_80_percent_of_the_link_warn() {
    assert_eq!(pinned_copy("GPU 0", Some(26.0), Some(31.5)).verdict, CheckVerdict::Pass);
    assert_eq!(pinned_copy("GPU 0", Some(12.0), Some(31.5)).verdict, CheckVerdict::Warn);
    assert_eq!(pinned_copy("GPU 0", None, Some(31.5)).verdict, CheckVerdict::NotRun);
}

fn env_with(torch: Option<DeepTorch>, deep: bool) -> PythonEnv {
    PythonEnv {
        name: "venv:/p".into(),
        kind: EnvKind::Venv,
        prefix: "/p".into(),
        interpreter: None,
        python_version: None,
        site_packages: Vec::new(),
        include_system_site_packages: false,
        found_by: Vec::new(),
        frameworks: vec![Framework {
            name: "torch".into(),
            version: "2.3.0".into(),
            build: FrameworkBuild::Cuda { version: Some("12.1".into()) },
            cudnn_build: None,
            source: "test".into(),
            site_packages: "/p/lib".into(),
        }],
        cuda_wheels: Vec::new(),
        companions: Vec::new(),
        deep: deep.then(|| Probed::found(DeepFacts { torch, ..DeepFacts::default() }, "probe.py")),
    }
}

fn torch(available: bool, count: u32) -> DeepTorch {
    DeepTorch {
        version: Some("2.3.0".into()),
        cuda_available: Some(available),
        device_count: Some(count),
        ..DeepTorch::default()
    }
}

#[test]
fn a_framework_that_imports_but_sees_no_gpu_fails_level_1() {
    let envs = |t| Probed::found(vec![env_with(Some(t), true)], "test");
    let none = framework_checks(&envs(torch(false, 0)), 2);
    assert_eq!(none.len(), 1);
    assert_eq!(none[0].verdict, CheckVerdict::Fail, "{none:?}");
    assert!(none[0].measured.describe().contains("sees 0 of 2"));
    assert_eq!(framework_checks(&envs(torch(true, 1)), 2)[0].verdict, CheckVerdict::Fail, "one of two");
    assert_eq!(framework_checks(&envs(torch(true, 2)), 2)[0].verdict, CheckVerdict::Pass);
    let broken = DeepTorch { error: Some("ImportError: libcudnn.so.9".into()), ..DeepTorch::default() };
    assert_eq!(framework_checks(&envs(broken), 2)[0].verdict, CheckVerdict::Fail);
    let undeep = framework_checks(&Probed::found(vec![env_with(None, false)], "test"), 2);
    assert_eq!(undeep[0].verdict, CheckVerdict::NotRun, "a deep probe that did not run is not a pass");
}

/// The image a lent H200 ran (2026-11-29): PyPI's `onnxruntime` 1.30.0 beside a CUDA torch, its
/// providers `AzureExecutionProvider, CPUExecutionProvider`. The CPU package alone is not a GPU
/// framework (info); beside `onnxruntime-gpu`, which it shadows, no CUDA provider fails.
#[test]
fn the_cpu_onnxruntime_package_alone_is_not_judged_and_beside_the_gpu_package_fails() {
    let ort = |name: &str| Framework {
        name: name.into(),
        version: "1.30.0".into(),
        build: FrameworkBuild::Cpu,
        cudnn_build: None,
        source: "test".into(),
        site_packages: "/p/lib".into(),
    };
    let with = |names: &[&str]| {
        let mut env = env_with(Some(torch(true, 1)), true);
        env.frameworks.extend(names.iter().map(|n| ort(n)));
        let providers = Some(vec!["AzureExecutionProvider".to_owned(), "CPUExecutionProvider".to_owned()]);
        let deep = DeepOnnxruntime { version: Some("1.30.0".into()), providers, ..DeepOnnxruntime::default() };
        env.deep = Some(Probed::found(
            DeepFacts { torch: Some(torch(true, 1)), onnxruntime: Some(deep), ..DeepFacts::default() },
            "probe.py",
        ));
        framework_checks(&Probed::found(vec![env], "test"), 1)
    };
    let ort_check = |checks: Vec<Check>| checks.into_iter().find(|c| c.subject.ends_with("onnxruntime")).unwrap();
    let alone = ort_check(with(&["onnxruntime"]));
    assert_eq!(alone.verdict, CheckVerdict::Info, "{alone:?}");
    assert!(alone.measured.describe().contains("CPU-only package"), "{alone:?}");
    let shadowing = ort_check(with(&["onnxruntime", "onnxruntime-gpu"]));
    assert_eq!(shadowing.verdict, CheckVerdict::Fail, "{shadowing:?}");
}

#[test]
fn a_machine_without_gpu_has_nothing_to_certify_and_a_driver_that_cannot_be_asked_fails() {
    let one = Probed::found(vec![gpu_doctor_model::Gpu::default()], "nvml");
    assert_eq!(gpus_present(&one).verdict, CheckVerdict::Pass);
    assert_eq!(gpus_present(&Probed::found(Vec::new(), "nvml")).verdict, CheckVerdict::NotRun);
    let absent = gpus_present(&Probed::absent("no NVIDIA device on the PCI bus"));
    assert_eq!(absent.verdict, CheckVerdict::NotRun, "INCOMPLETE, never PASS");
    assert!(absent.measured.describe().contains("no GPU to certify"));
    let failed = Probed::Failed { error: "NVML_ERROR_UNKNOWN".into() };
    assert_eq!(gpus_present(&failed).verdict, CheckVerdict::Fail);
    assert_eq!(gpus_present(&Probed::unknown("not in the pasted text")).verdict, CheckVerdict::NotRun);
}

#[test]
fn no_python_at_all_is_a_fact_not_a_missing_part() {
    let none = framework_checks(&Probed::absent("no Python interpreter found"), 1);
    assert_eq!(none[0].verdict, CheckVerdict::Info);
    let unknown = framework_checks(&Probed::unknown("not in the pasted text"), 1);
    assert_eq!(unknown[0].verdict, CheckVerdict::NotRun);
}

#[test]
fn a_framework_whose_product_is_wrong_on_a_gpu_fails_and_one_that_did_not_run_is_not_run() {
    let right = Smoke { gpus: vec![(0, true), (1, true)], ..Smoke::default() };
    assert_eq!(smoke("venv: torch", Ok(&right), 2).verdict, CheckVerdict::Pass);
    let wrong = Smoke { gpus: vec![(0, true), (1, false)], ..Smoke::default() };
    let c = smoke("venv: torch", Ok(&wrong), 2);
    assert_eq!(c.verdict, CheckVerdict::Fail);
    assert!(c.measured.describe().contains("wrong on [GPU 1]"), "{c:?}");
    let one = Smoke { gpus: vec![(0, true)], ..Smoke::default() };
    assert_eq!(smoke("venv: torch", Ok(&one), 2).verdict, CheckVerdict::Fail, "one of two GPUs");
    let blind = Smoke { no_gpu: Some("CUDA not available".into()), ..Smoke::default() };
    assert_eq!(smoke("venv: torch", Ok(&blind), 2).verdict, CheckVerdict::Fail);
    assert_eq!(smoke("venv: torch", Err("timed out"), 2).verdict, CheckVerdict::NotRun);
}

#[test]
fn any_part_that_did_not_run_makes_incomplete_never_pass() {
    let pass = slowdown("GPU 0", Some(&[]));
    let warn = slowdown("GPU 0", Some(&["hw_slowdown".to_owned()]));
    let missing = not_run("bench.gemm", Stage::Benchmark, "GPU 0", "no GPU");
    let fail = link_under_load("GPU 0", link(1, 1));
    assert_eq!(verdict([&pass]).0, Verdict::Pass);
    assert_eq!(verdict([&pass, &warn]).0, Verdict::PassWithWarnings);
    let (v, reasons) = verdict([&pass, &missing]);
    assert_eq!(v, Verdict::Incomplete);
    assert_eq!(reasons, ["not run (benchmark): GPU 0: not measured: no GPU"]);
    assert_eq!(verdict([&pass, &warn, &missing]).0, Verdict::Incomplete, "warnings do not hide a missing part");
    let (v, reasons) = verdict([&warn, &missing, &fail]);
    assert_eq!(v, Verdict::Fail);
    assert!(reasons[0].starts_with("FAIL"), "failures come first: {reasons:?}");
    assert_eq!(verdict(std::iter::empty()).0, Verdict::Incomplete, "no check is no pass");
}

fn finding(id: &str, severity: Severity) -> Finding {
    Finding {
        id: id.into(),
        category: Category::Other,
        severity,
        summary: format!("{id} summary"),
        detail: String::new(),
        evidence: vec!["evidence".into()],
        explains: Vec::new(),
        fix: None,
        plan: None,
    }
}

#[test]
fn error_findings_fail_warnings_warn_and_info_is_no_check() {
    let checks = finding_checks(&[
        finding("a.error", Severity::Error),
        finding("b.warning", Severity::Warning),
        finding("c.info", Severity::Info),
    ]);
    let got: Vec<(&str, CheckVerdict)> = checks.iter().map(|c| (c.id.as_str(), c.verdict)).collect();
    assert_eq!(got, [("finding.a.error", CheckVerdict::Fail), ("finding.b.warning", CheckVerdict::Warn)]);
    assert!(checks[0].source.contains("a.error"));
}

#[test]
fn a_benchmark_test_that_did_not_run_is_not_run_with_its_reason() {
    let plan = BenchPlan::preset(0, vec![TestKind::Gemm], true);
    let run = BenchRun {
        schema_version: 1,
        tool_version: "0".into(),
        started_at_unix_secs: 0,
        duration_secs: 0.0,
        plan,
        device: None,
        facts: gpu_doctor_model::bench::verdict::Facts::default(),
        tests: vec![TestRun {
            test: TestKind::Gemm,
            status: TestStatus::Failed,
            started_ms: None,
            ended_ms: None,
            points: Vec::new(),
            result: None,
            failure: Some(Failure::new(FailureKind::NoDevice, "cuInit: no CUDA-capable device")),
            judged: Vec::new(),
        }],
        comparisons: Vec::new(),
        clocks_under_load: None,
        findings: Vec::new(),
        telemetry: Vec::new(),
        telemetry_note: None,
        worker: gpu_doctor_model::bench::record::WorkerOutcome::default(),
        library_notes: Vec::new(),
        memtest_ecc: None,
    };
    let checks = bench_checks("GPU 0", Stage::Benchmark, &run);
    assert_eq!(checks.len(), 1);
    assert_eq!(checks[0].verdict, CheckVerdict::NotRun);
    assert!(checks[0].measured.describe().contains("no CUDA-capable device"), "{:?}", checks[0]);
    assert_eq!(checks[0].source, rule("bench.<metric>").source, "a test's check has the benchmark rule's source");
}

#[test]
fn every_rule_names_its_source() {
    for r in RULES {
        assert!(!r.source.is_empty() && r.source != "—", "{}", r.id);
        assert!(r.pass != "—" && (r.warn != "—" || r.fail != "—"), "{} has no threshold", r.id);
    }
}

/// `docs/certify.md` shows the rules as they are; after a change, paste `rules_markdown()` there.
#[test]
fn the_docs_threshold_table_is_the_rules() {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/certify.md")).unwrap();
    let table = rules_markdown();
    assert!(docs.contains(&table), "docs/certify.md's threshold table differs from RULES; it should be:\n{table}");
}

fn kept(checks: Vec<Check>) -> Certificate {
    use gpu_doctor_model::certify::{Level, MachineIdentity, StageRecord};
    Certificate {
        schema_version: 1,
        verdict: Verdict::Pass,
        reasons: Vec::new(),
        level: Level::Quick,
        started_at_unix_secs: 0,
        duration_secs: 0.0,
        tool_version: "0".into(),
        kb_version: "0".into(),
        origin: "this machine".into(),
        machine: MachineIdentity::default(),
        stages: vec![StageRecord { stage: Stage::Benchmark, not_run: None, duration_secs: 0.0, checks }],
        sha256: String::new(),
    }
}

fn figure_check(id: &str, value: f64, unit: &str) -> Check {
    let mut c = pinned_copy("GPU 0", Some(30.0), Some(31.5));
    c.id = id.into();
    c.measured = Measured::value(value, unit);
    c
}

#[test]
fn against_a_kept_certificate_a_figure_more_than_10_percent_worse_warns() {
    let old = kept(vec![figure_check("bench.gemm", 100.0, "TFLOP/s"), figure_check("bench.latency", 10.0, "µs")]);
    let now = [figure_check("bench.gemm", 85.0, "TFLOP/s"), figure_check("bench.latency", 10.5, "µs")];
    let checks = against(&old, &now.iter().collect::<Vec<_>>());
    let got: Vec<CheckVerdict> = checks.iter().map(|c| c.verdict).collect();
    assert_eq!(got, [CheckVerdict::Warn, CheckVerdict::Pass], "{checks:?}");
    let now = [figure_check("bench.gemm", 95.0, "TFLOP/s"), figure_check("bench.latency", 11.5, "µs")];
    let got: Vec<CheckVerdict> = against(&old, &now.iter().collect::<Vec<_>>()).iter().map(|c| c.verdict).collect();
    assert_eq!(got, [CheckVerdict::Pass, CheckVerdict::Warn], "a time 15 % longer is worse");
}

#[test]
fn against_a_kept_certificate_a_new_finding_is_named() {
    let old_finding = finding_checks(&[finding("driver.old", Severity::Warning)]);
    let old = kept(old_finding);
    let now = finding_checks(&[finding("driver.old", Severity::Warning), finding("health.xid_error", Severity::Error)]);
    let checks = against(&old, &now.iter().collect::<Vec<_>>());
    assert_eq!(checks.len(), 1, "{checks:?}");
    assert_eq!(checks[0].verdict, CheckVerdict::Warn);
    assert!(checks[0].measured.describe().contains("finding.health.xid_error"));
}
