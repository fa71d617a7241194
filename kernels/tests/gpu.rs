//! Every benchmark at a small size on a real GPU, checking invariants rather than speeds:
//! bandwidths above zero and below the theoretical peak, GEMM results correct, memory test clean.
//!
//! Run where an NVIDIA GPU is: `cargo test -p gpu-doctor-kernels --test gpu -- --ignored --test-threads=1`
//!
//! The tests run the worker's code in this process, so the first of them runs this binary again
//! (same arguments) under the libraries `gpu-doctor bench` prepares for its worker
//! (`under_the_workers_libraries`), and that process runs the tests.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::sync::Mutex;

use gpu_doctor_kb::Kb;
use gpu_doctor_kernels::facts;
use gpu_doctor_kernels::libs::{self, PreparedLibraries};
use gpu_doctor_model::bench::judgement::Verdict;
use gpu_doctor_model::bench::plan::{BenchPlan, MIB, TestKind};
use gpu_doctor_model::bench::protocol::{BenchEvent, Metric};
use gpu_doctor_model::bench::record::{RunRecord, TimedEvent};
use gpu_doctor_model::bench::run::{BenchRun, TestStatus};

/// Makes sure this process runs under the library search path and variables that `gpu-doctor
/// bench` starts its worker with (`PreparedLibraries::prepare` from this machine's probe, as the
/// bench command probes it, then `worker_env`): cudarc does not try the `.so.13` names, and the
/// loader reads the search path only when a process starts. Unless this process was started so
/// (`libs::in_worker_env`), it runs this binary again with the same arguments under them, waits,
/// and exits with its exit code: the re-run process runs the tests, and its output is the run's.
fn under_the_workers_libraries() {
    static ONCE: Mutex<()> = Mutex::new(());
    let _one_at_a_time = ONCE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if libs::in_worker_env() {
        return;
    }
    let options = gpu_doctor_probes::probe::Options { cwd: std::env::current_dir().ok(), ..Default::default() };
    let snapshot = gpu_doctor_probes::probe::collect(&gpu_doctor_probes::host::SystemHost::new(), &options);
    let prepared = PreparedLibraries::prepare(Some(&snapshot), 0);
    // Straight to standard error, past the test harness's capture.
    let mut err = std::io::stderr();
    let _ = writeln!(err, "\nrunning the GPU tests again under the worker's libraries: {:?}", prepared.plan.notes);
    let status = prepared.reexec_command(std::env::args_os().skip(1)).unwrap().status().unwrap();
    drop(prepared);
    std::process::exit(status.code().unwrap_or(101));
}

/// Runs `tests` in this process at small sizes and judges them against CUDA's own device facts.
fn run(tests: &[TestKind]) -> BenchRun {
    under_the_workers_libraries();
    let mut plan = BenchPlan::preset(0, tests.to_vec(), true);
    plan.transfer_sizes_bytes = vec![4096, MIB, 64 * MIB];
    plan.d2d_bytes = 64 * MIB;
    plan.gemm_sizes = vec![256, 1024];
    plan.repetitions = 3;
    plan.warmup = 1;
    plan.memtest_share = 0.01;
    plan.sustained_secs = 3;
    let mut events = Vec::new();
    gpu_doctor_kernels::worker::run_plan(&plan, &mut |e| events.push(TimedEvent { t_ms: 0, event: e }));
    let record = RunRecord { events, ..RunRecord::default() };
    gpu_doctor_judge::bench::run::assemble(&plan, record, |device| facts::gather(None, 0, device, Kb::get().ok()))
}

fn value(run: &BenchRun, pred: impl Fn(&Metric) -> bool) -> f64 {
    run.find_metric(pred).expect("the measurement is present").measurement.value
}

fn assert_ran(run: &BenchRun) {
    for t in &run.tests {
        assert_eq!(t.status, TestStatus::Passed, "{}: {:?} {:?}", t.test, t.failure, t.result);
    }
}

/// No measurement is judged faster than the hardware allows.
fn assert_below_theory(run: &BenchRun) {
    for j in run.tests.iter().flat_map(|t| &t.judged) {
        assert_ne!(j.judgement.verdict, Verdict::AboveTheory, "{j:?}");
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn transfers_are_positive_and_below_the_fastest_link() {
    let run = run(&[TestKind::H2d, TestKind::D2h, TestKind::Bidir]);
    assert_ran(&run);
    for pinned in [true, false] {
        for v in [
            value(&run, |m| *m == Metric::HostToDevice { pinned }),
            value(&run, |m| *m == Metric::DeviceToHost { pinned }),
        ] {
            // PCIe 6.0 x16 carries ≈ 126 GB/s per direction; nothing attached today is faster.
            assert!(v > 0.0 && v < 130.0, "{v} GB/s");
        }
    }
    let bidir = value(&run, |m| *m == Metric::Bidirectional);
    assert!(bidir > 0.0 && bidir < 260.0);
    assert!(run.device.as_ref().and_then(|d| d.sm_count).is_some());
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn device_copies_stay_below_the_memory_bandwidth() {
    let run = run(&[TestKind::D2d]);
    assert_ran(&run);
    let memcpy = value(&run, |m| matches!(m, Metric::DeviceCopy { .. }));
    assert!(memcpy > 0.0);
    // Each buffer holds at least 4 × the L2 (the planned 64 MiB are enlarged on an H100 or RTX
    // 4090), so neither method may run from cache above the memory's bandwidth.
    if let Some((theory, basis)) = run.facts.memory_bandwidth() {
        assert!(memcpy < theory * 1.1, "{memcpy} GB/s against {basis}");
    }
    assert_below_theory(&run);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn gemm_results_are_correct_in_every_precision() {
    let run = run(&[TestKind::Gemm]);
    assert_ran(&run);
    let result = run.tests[0].result.as_ref().unwrap();
    assert!(!result.checks.is_empty());
    assert!(result.checks.iter().all(|c| c.passed), "{:?}", result.checks);
    for j in &run.tests[0].judged {
        assert!(j.measurement.value > 0.0, "{j:?}");
    }
    assert_below_theory(&run);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn compiled_kernels_run() {
    let run = run(&[TestKind::Fma, TestKind::Latency]);
    assert_ran(&run);
    assert!(value(&run, |m| *m == Metric::FmaPeak) > 0.0);
    // The expectation is on the rated boost clock, as `gpu-doctor bench` judges it; after the
    // warm-up a healthy GPU's FMA kernel reaches its normal share of that peak.
    let fma = run.find_metric(|m| *m == Metric::FmaPeak).unwrap();
    let basis = &fma.judgement.expected.as_ref().expect("an FP32 peak for this GPU").basis;
    assert!(basis.contains("the rated boost clock (CUDA's clock-rate attribute)"), "{basis}");
    assert_eq!(fma.judgement.verdict, Verdict::Normal, "{fma:?}");
    let latency = value(&run, |m| *m == Metric::LaunchLatency);
    assert!(latency > 0.0 && latency < 10_000.0, "{latency} µs");
    assert_below_theory(&run);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn memory_test_is_clean_and_the_largest_allocation_is_large() {
    let run = run(&[TestKind::Memtest]);
    assert_ran(&run);
    let report = run.tests[0].result.as_ref().unwrap().memtest.as_ref().unwrap();
    assert_eq!(report.errors_total, 0, "{:?}", report.errors);
    assert!(report.bytes_tested >= 64 * MIB);
    assert!(value(&run, |m| *m == Metric::LargestAllocation) >= (64 * MIB) as f64);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn sustained_load_reports_every_second() {
    let run = run(&[TestKind::Sustained]);
    assert_ran(&run);
    assert!(run.tests[0].points.len() >= 2, "{:?}", run.tests[0].points);
    assert!(value(&run, |m| matches!(m, Metric::SustainedGemm { .. })) > 0.0);
}

/// The GPU-to-GPU copies: in loopback on GPU 0 (its primary context to a second context of its
/// own), so every CUDA call of the test runs on a machine with one GPU, then as `bench` runs them:
/// every ordered pair with two or more GPUs, a note with one. With `GPU_VERIFY_P2P_JSON` set, the
/// loopback's and the real run's tests are written there (`scripts/gpu-verify`'s p2p.json).
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn p2p_copies_run_in_loopback_and_between_every_pair() {
    use gpu_doctor_model::bench::p2p::P2pMode;

    under_the_workers_libraries();
    let mut plan = BenchPlan::preset(0, vec![TestKind::P2p], true);
    plan.p2p_bytes = 16 * MIB;
    plan.repetitions = 3;
    plan.warmup = 1;
    let mut events = Vec::new();
    gpu_doctor_kernels::worker::run_p2p_loopback(&plan, &mut |e| events.push(TimedEvent { t_ms: 0, event: e }));
    let loopback =
        gpu_doctor_judge::bench::run::assemble(&plan, RunRecord { events, ..RunRecord::default() }, |device| {
            facts::gather(None, 0, device, Kb::get().ok())
        });
    let real = run(&[TestKind::P2p]);
    if let Ok(path) = std::env::var("GPU_VERIFY_P2P_JSON") {
        let both = serde_json::json!({ "loopback": loopback.tests, "run": real.tests, "device": real.device });
        std::fs::write(path, serde_json::to_string_pretty(&both).unwrap()).unwrap();
    }
    assert_ran(&loopback);
    let m = loopback.tests[0].result.as_ref().unwrap().p2p.clone().expect("a loopback matrix");
    assert!(m.loopback && m.pairs.len() == 1, "{m:?}");
    let pair = &m.pairs[0];
    for mode in [P2pMode::PeerDisabled, P2pMode::HostStaged] {
        let bw = pair.bandwidth(mode).unwrap_or_else(|| panic!("{mode:?} measured: {pair:?}"));
        // Within one GPU the copy never leaves its memory; host-staged crosses PCIe twice.
        assert!(bw > 0.0 && bw < 10_000.0, "{mode:?}: {bw} GB/s");
    }
    assert!(pair.latency(P2pMode::PeerDisabled).is_some_and(|us| us > 0.0), "{pair:?}");
    // Peer access between two contexts of one GPU: measured, or the driver's refusal recorded.
    let on = pair.measure(P2pMode::PeerEnabled).unwrap();
    assert!(on.bandwidth_gbps.is_some() || on.skipped.as_deref().is_some_and(|s| !s.is_empty()), "{on:?}");

    assert_ran(&real);
    let result = real.tests[0].result.as_ref().unwrap();
    match &result.p2p {
        None => assert!(result.notes.iter().any(|n| n.starts_with("not measured: CUDA sees 1 GPU")), "{result:?}"),
        Some(m) => {
            let n = m.gpus.len();
            assert!(n >= 2 && m.pairs.len() == n * (n - 1), "{m:?}");
            assert!(m.pairs.iter().all(|p| p.bandwidth(P2pMode::HostStaged).is_some_and(|b| b > 0.0)), "{m:?}");
            assert!(m.staged_all_to_all_gbps.is_some(), "{m:?}");
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn events_of_a_run_round_trip() {
    let run = run(&[TestKind::H2d]);
    let json = serde_json::to_string(&run).unwrap();
    let back: BenchRun = serde_json::from_str(&json).unwrap();
    assert_eq!(back, run);
    assert!(BenchEvent::from_line("{}").is_none());
}

/// A run's measured floats come back bit for bit from its JSON (`bench -o`, the window's history,
/// a saved report): serde_json parses a float exactly only with its `float_roundtrip` feature
/// (the workspace's Cargo.toml); without it about one value in ten comes back one ULP off, and
/// `events_of_a_run_round_trip` above could not pass on a GPU. The values are made as the copy
/// test makes its bandwidths: 64 MiB over CUDA event times (f32 milliseconds).
#[test]
fn measured_floats_survive_a_json_round_trip() {
    use gpu_doctor_model::bench::protocol::{Measurement, TestResult};
    use gpu_doctor_model::bench::stats::Stats;
    use gpu_doctor_model::bench::unit::Unit;

    let plan = BenchPlan::preset(0, vec![TestKind::H2d], true);
    let gbps: Vec<f64> = (0u16..200)
        .map(|i| {
            let ms = f64::from(2.71_f32 + f32::from(i) * 0.0137);
            (64 * MIB) as f64 / (ms * 1e-3) / 1e9
        })
        .collect();
    let measurements = gbps
        .chunks(5)
        .map(|c| {
            let stats = Stats::from_samples(c).unwrap();
            Measurement::median(Metric::HostToDevice { pinned: true }, "pinned, 64 MiB", stats, Unit::GbPerS)
        })
        .collect();
    let result = TestResult { measurements, ..TestResult::default() };
    let events = [
        BenchEvent::Started { test: TestKind::H2d, device: None },
        BenchEvent::Finished { test: TestKind::H2d, result },
    ]
    .into_iter()
    .enumerate()
    .map(|(i, event)| TimedEvent { t_ms: 1000 * i as u64, event })
    .collect();
    let record = RunRecord { events, duration_secs: 23.456_789_012_345_677, ..RunRecord::default() };
    let run =
        gpu_doctor_judge::bench::run::assemble(&plan, record, |_| gpu_doctor_model::bench::verdict::Facts::default());

    let back: BenchRun = serde_json::from_str(&serde_json::to_string(&run).unwrap()).unwrap();
    let values = |r: &BenchRun| -> Vec<f64> {
        let result = r.tests[0].result.as_ref().unwrap();
        result.measurements.iter().flat_map(|m| m.stats.iter().flat_map(|s| [s.median, s.p25, s.p75, s.mean])).collect()
    };
    let changed = values(&run).iter().zip(values(&back)).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
    assert_eq!(changed, 0, "{changed} of {} measured values came back changed", values(&run).len());
    assert_eq!(back, run);
}

/// The runner and the window sample through one `NvmlSource`, by the PCI bus id the probes found:
/// it names a GPU NVML knows, as the index does, and the one sampler loop keeps its interval with
/// real NVML calls (`assert_the_sampler_keeps_its_interval`).
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_telemetry_source_samples_every_gpu_by_bus_id_at_its_interval() {
    use std::sync::Arc;

    use gpu_doctor_probes::host::SystemHost;
    use gpu_doctor_probes::host::telemetry::{Detail, NvmlSource, Target, TelemetrySource};

    let snapshot = gpu_doctor_probes::probe::collect(&SystemHost::new(), &gpu_doctor_probes::probe::Options::default());
    let gpus = snapshot.gpus.value().expect("the probes found the GPUs");
    let source = Arc::new(NvmlSource::default());
    let mut targets = Vec::new();
    for gpu in gpus {
        let by_bus = Target { index: gpu.index, bus_id: gpu.pci_bus_id.clone() };
        assert!(by_bus.bus_id.is_some(), "GPU {} has no bus id", gpu.index);
        if source.is_asleep(&by_bus) {
            continue;
        }
        let full = source.sample(&by_bus, Detail::Full).unwrap();
        assert!(full.memory_used_bytes.is_some() && full.pcie_rx_kbps.is_some(), "{full:?}");
        let card = source.sample(&Target { bus_id: None, ..by_bus.clone() }, Detail::Card).unwrap();
        assert!(card.memory_used_bytes.is_some() && card.pcie_rx_kbps.is_none(), "{card:?}");
        targets.push(by_bus);
    }
    let Some(first) = targets.first().cloned() else { return };
    assert_the_sampler_keeps_its_interval(source, first);
}

/// The same checks over a source that takes 150 ms per sample, as NVML may on a loaded machine
/// (a full sample takes 40 ms or more): fewer samples than 1.05 s / 100 ms, which the earlier
/// "9 to 12 samples" check failed, and still every promise of the loop kept.
#[test]
fn the_sampler_keeps_its_interval_with_a_slow_source() {
    use std::sync::Arc;
    use std::time::Duration;

    use gpu_doctor_model::telemetry::GpuTelemetry;
    use gpu_doctor_probes::host::telemetry::{Detail, Target, TelemetrySource};

    struct Slow;
    impl TelemetrySource for Slow {
        fn sample(&self, _: &Target, _: Detail) -> Result<GpuTelemetry, String> {
            std::thread::sleep(Duration::from_millis(150));
            Ok(GpuTelemetry::default())
        }
        fn is_asleep(&self, _: &Target) -> bool {
            false
        }
    }
    let samples = assert_the_sampler_keeps_its_interval(Arc::new(Slow), Target { index: 0, bus_id: None });
    assert!(samples <= 8, "at 150 ms a sample, {samples} samples in 1.05 s");
}

/// Runs the one sampler loop on `target` at 100 ms for 1.05 s, timing when it asks `source`, and
/// checks what the loop promises; the number of samples. Not an exact count: the loop starts a
/// round every interval, but a round takes as long as the source (a full NVML sample 40 ms or
/// more, longer on a loaded machine), and after a slow one the next starts at once rather than
/// catching up in a burst, so how many fit in 1.05 s depends on the source's speed. What it
/// promises, and what is checked:
/// - samples arrive: at least two rounds in 1.05 s, each answer handed over as one sample;
/// - rounds start at least the interval apart, give or take a late wake-up from its sleep (half
///   the interval at the least: a burst of catch-up rounds would start them back to back), and
///   on average at least the interval apart over the whole run;
/// - no more rounds than the interval allows in the time it ran.
fn assert_the_sampler_keeps_its_interval(
    source: std::sync::Arc<dyn gpu_doctor_probes::host::telemetry::TelemetrySource>,
    target: gpu_doctor_probes::host::telemetry::Target,
) -> usize {
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use gpu_doctor_model::telemetry::GpuTelemetry;
    use gpu_doctor_probes::host::telemetry::{Detail, Reading, Sampler, Target, TelemetrySource};

    /// `inner`, with the instant each sample was asked for.
    struct Timed {
        inner: Arc<dyn TelemetrySource>,
        asked: Mutex<Vec<Instant>>,
    }
    impl TelemetrySource for Timed {
        fn sample(&self, gpu: &Target, detail: Detail) -> Result<GpuTelemetry, String> {
            self.asked.lock().unwrap().push(Instant::now());
            self.inner.sample(gpu, detail)
        }
        fn is_asleep(&self, gpu: &Target) -> bool {
            self.inner.is_asleep(gpu)
        }
    }

    let interval = Duration::from_millis(100);
    let timed = Arc::new(Timed { inner: source, asked: Mutex::new(Vec::new()) });
    let readings = Arc::new(Mutex::new(Vec::new()));
    let into = Arc::clone(&readings);
    let started = Instant::now();
    let sampler = Sampler::start("gpu-test-telemetry", timed.clone(), vec![target], Detail::Full, interval, move |r| {
        into.lock().unwrap().push(r);
        true
    })
    .unwrap();
    std::thread::sleep(Duration::from_millis(1050));
    assert!(sampler.finish());
    let ran = started.elapsed();
    let readings = readings.lock().unwrap();
    let asked = timed.asked.lock().unwrap();
    let samples = readings.iter().filter(|r| matches!(r, Reading::Sample { .. })).count();
    assert!(samples >= 2, "{samples} samples in {ran:?}: {readings:?}");
    assert_eq!(samples, asked.len(), "every answer is handed over as a sample: {readings:?}");
    let gaps: Vec<Duration> = asked.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.iter().all(|g| *g >= interval / 2), "rounds in a burst: {gaps:?}");
    let span = asked[asked.len() - 1] - asked[0];
    let rounds = u32::try_from(gaps.len()).unwrap();
    assert!(span + Duration::from_millis(10) >= interval * rounds, "{rounds} rounds in {span:?}: {gaps:?}");
    let most = 1 + ran.as_millis() / interval.as_millis();
    assert!(samples as u128 <= most, "{samples} samples in {ran:?} at {interval:?}: {gaps:?}");
    samples
}
