//! A run in progress as the window sees it: the state of every planned test, built from the
//! streamed `BenchEvent`s, and the events and telemetry so far, from which the live plots are drawn.

use gpu_doctor_model::bench::plan::{BenchPlan, TestKind};
use gpu_doctor_model::bench::protocol::BenchEvent;
use gpu_doctor_model::bench::protocol::{DeviceInfo, FailureKind};
use gpu_doctor_model::bench::record::{RunRecord, TelemetryPoint, TimedEvent};
use gpu_doctor_model::bench::run::BenchRun;
use gpu_doctor_model::bench::verdict::Facts;

/// Where one planned test stands.
#[derive(Debug, Clone, PartialEq)]
pub enum TestState {
    /// Not started yet.
    Waiting,
    /// Running: `done` of `total` steps (0 of 0 before the first progress event), the last step.
    Running {
        /// Steps done.
        done: u32,
        /// Steps in all; 0 when not reported yet.
        total: u32,
        /// The step just done, e.g. `pinned 64 MiB`; empty before the first.
        what: String,
    },
    /// Ended with results; `checks_failed` when a correctness check did not pass.
    Done {
        /// How long it ran, seconds; `None` when its start was not seen.
        secs: Option<f64>,
        /// Whether a check failed.
        checks_failed: bool,
    },
    /// Did not run or broke off.
    Failed {
        /// The kind of failure.
        kind: FailureKind,
        /// Why, for people.
        reason: String,
    },
}

impl TestState {
    /// How far along it is, 0–1: 0 while waiting, the share of steps while running, 1 once ended.
    pub fn fraction(&self) -> f32 {
        match self {
            Self::Waiting => 0.0,
            Self::Running { done, total, .. } if *total > 0 => (*done as f32 / *total as f32).clamp(0.0, 1.0),
            Self::Running { .. } => 0.0,
            Self::Done { .. } | Self::Failed { .. } => 1.0,
        }
    }

    /// Whether it has ended (done or failed).
    pub fn ended(&self) -> bool {
        matches!(self, Self::Done { .. } | Self::Failed { .. })
    }

    /// One short line: `waiting`, `3/10 · pinned 1 MiB`, `done in 4.2 s`, `cancelled`.
    pub fn text(&self) -> String {
        match self {
            Self::Waiting => "waiting".to_owned(),
            Self::Running { total: 0, .. } => "starting…".to_owned(),
            Self::Running { done, total, what } if what.is_empty() => format!("{done}/{total}"),
            Self::Running { done, total, what } => format!("{done}/{total} · {what}"),
            Self::Done { secs, checks_failed } => {
                let time = secs.map_or_else(String::new, |s| format!(" in {s:.1} s"));
                if *checks_failed { format!("done{time}, a check FAILED") } else { format!("done{time}") }
            }
            Self::Failed { kind: FailureKind::Cancelled, .. } => "cancelled".to_owned(),
            Self::Failed { kind, .. } => format!("not run: {}", kind.label()),
        }
    }
}

/// One planned test and where it stands.
#[derive(Debug, Clone, PartialEq)]
pub struct TestProgress {
    /// The test.
    pub test: TestKind,
    /// Where it stands.
    pub state: TestState,
    /// Milliseconds from the run's start to the test's start; `None` before it started.
    pub started_ms: Option<u64>,
}

/// A run in progress: every planned test's state, the events and telemetry so far.
#[derive(Debug, Clone)]
pub struct RunProgress {
    /// The plan being run.
    pub plan: BenchPlan,
    /// Every planned test, in plan order.
    pub tests: Vec<TestProgress>,
    /// Every event so far with its arrival time.
    pub events: Vec<TimedEvent>,
    /// Telemetry samples so far.
    pub telemetry: Vec<TelemetryPoint>,
    /// Bumped on every change, so that views built from it know when to rebuild.
    pub generation: u64,
}

impl RunProgress {
    /// A run of `plan` with nothing started.
    pub fn new(plan: BenchPlan) -> Self {
        let tests =
            plan.tests.iter().map(|&test| TestProgress { test, state: TestState::Waiting, started_ms: None }).collect();
        Self { plan, tests, events: Vec::new(), telemetry: Vec::new(), generation: 0 }
    }

    /// Takes in one event that arrived `t_ms` after the run started. Events of tests not in the
    /// plan are kept for the record but change no state.
    pub fn apply(&mut self, t_ms: u64, event: BenchEvent) {
        if let Some(t) = self.tests.iter_mut().find(|t| t.test == event.test()) {
            match &event {
                BenchEvent::Started { .. } => {
                    t.started_ms = t.started_ms.or(Some(t_ms));
                    t.state = TestState::Running { done: 0, total: 0, what: String::new() };
                }
                BenchEvent::Progress { done, total, what, .. } if !t.state.ended() => {
                    t.state = TestState::Running { done: *done, total: *total, what: what.clone() };
                }
                BenchEvent::Progress { .. } | BenchEvent::Sample { .. } => {}
                BenchEvent::Finished { result, .. } => {
                    let secs = t.started_ms.map(|s| t_ms.saturating_sub(s) as f64 / 1000.0);
                    t.state = TestState::Done { secs, checks_failed: result.checks.iter().any(|c| !c.passed) };
                }
                BenchEvent::Failed { failure, .. } => {
                    t.state = TestState::Failed { kind: failure.kind, reason: failure.reason.clone() };
                }
            }
        }
        self.events.push(TimedEvent { t_ms, event });
        self.generation += 1;
    }

    /// Takes in one telemetry sample.
    pub fn apply_telemetry(&mut self, point: TelemetryPoint) {
        self.telemetry.push(point);
        self.generation += 1;
    }

    /// The share of the planned tests that have ended, counting the running one's progress.
    pub fn overall(&self) -> f32 {
        if self.tests.is_empty() {
            return 1.0;
        }
        let n = self.tests.len() as f32;
        self.tests.iter().map(|t| t.state.fraction()).sum::<f32>() / n
    }

    /// The test running now, if any.
    pub fn current(&self) -> Option<TestKind> {
        self.tests.iter().find(|t| matches!(t.state, TestState::Running { .. })).map(|t| t.test)
    }

    /// The device as CUDA described it so far.
    pub fn device(&self) -> Option<&DeviceInfo> {
        self.events.iter().rev().find_map(|e| match &e.event {
            BenchEvent::Started { device: Some(d), .. } => Some(d),
            _ => None,
        })
    }

    /// The run so far, assembled as a finished one would be (for the live plots; tests that have
    /// not ended carry a placeholder failure there).
    pub fn snapshot_run(&self, facts: impl FnOnce(Option<&DeviceInfo>) -> Facts) -> BenchRun {
        let record =
            RunRecord { events: self.events.clone(), telemetry: self.telemetry.clone(), ..RunRecord::default() };
        gpu_doctor_judge::bench::run::assemble(&self.plan, record, facts)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use gpu_doctor_model::bench::protocol::{Check, Failure, Point, TestResult};
    use gpu_doctor_model::bench::stats::Stats;
    use gpu_doctor_model::bench::unit::Unit;
    use gpu_doctor_model::telemetry::GpuTelemetry;

    use super::*;

    fn plan() -> BenchPlan {
        BenchPlan::preset(0, vec![TestKind::H2d, TestKind::Gemm, TestKind::Cpu], true)
    }

    fn state(p: &RunProgress, test: TestKind) -> &TestState {
        &p.tests.iter().find(|t| t.test == test).unwrap().state
    }

    #[test]
    fn events_move_each_test_from_waiting_to_its_end() {
        let mut p = RunProgress::new(plan());
        assert!(p.tests.iter().all(|t| t.state == TestState::Waiting));
        assert_eq!(p.overall(), 0.0);

        p.apply(10, BenchEvent::Started { test: TestKind::H2d, device: None });
        assert_eq!(state(&p, TestKind::H2d).text(), "starting…");
        assert_eq!(p.current(), Some(TestKind::H2d));
        p.apply(20, BenchEvent::Progress { test: TestKind::H2d, done: 1, total: 4, what: "pinned 4 KiB".into() });
        assert_eq!(state(&p, TestKind::H2d).text(), "1/4 · pinned 4 KiB");
        assert_eq!(state(&p, TestKind::H2d).fraction(), 0.25);
        let point = Point {
            series: "pinned".into(),
            x: 4096.0,
            x_unit: Unit::Bytes,
            value: Stats::from_samples(&[3.0]).unwrap(),
            unit: Unit::GbPerS,
            time_us: None,
        };
        p.apply(25, BenchEvent::Sample { test: TestKind::H2d, point });
        p.apply(2510, BenchEvent::Finished { test: TestKind::H2d, result: TestResult::default() });
        assert_eq!(state(&p, TestKind::H2d), &TestState::Done { secs: Some(2.5), checks_failed: false });
        assert_eq!(state(&p, TestKind::H2d).text(), "done in 2.5 s");
        // A late progress line does not reopen an ended test.
        p.apply(2520, BenchEvent::Progress { test: TestKind::H2d, done: 4, total: 4, what: String::new() });
        assert!(state(&p, TestKind::H2d).ended());

        p.apply(
            2600,
            BenchEvent::Failed {
                test: TestKind::Gemm,
                failure: Failure::new(FailureKind::MissingLibrary, "no libcublas"),
            },
        );
        assert_eq!(state(&p, TestKind::Gemm).text(), "not run: missing library");
        let bad_check = TestResult {
            checks: vec![Check { name: "x".into(), passed: false, detail: String::new() }],
            ..TestResult::default()
        };
        p.apply(2700, BenchEvent::Finished { test: TestKind::Cpu, result: bad_check });
        assert_eq!(state(&p, TestKind::Cpu).text(), "done, a check FAILED", "its start was not seen");
        assert_eq!(p.overall(), 1.0);
        assert_eq!(p.current(), None);
        assert_eq!(p.events.len(), 7);

        let run = p.snapshot_run(|_| Facts::default());
        assert_eq!(run.tests[0].points.len(), 1, "the live run carries the streamed points");
    }

    #[test]
    fn cancelled_tests_say_so() {
        let mut p = RunProgress::new(plan());
        let failure = Failure::new(FailureKind::Cancelled, "cancelled by the user");
        p.apply(5, BenchEvent::Failed { test: TestKind::Cpu, failure });
        assert_eq!(state(&p, TestKind::Cpu).text(), "cancelled");
        assert!((p.overall() - 1.0 / 3.0).abs() < 1e-6);
    }

    #[test]
    fn telemetry_and_unplanned_events_are_recorded() {
        let mut p = RunProgress::new(plan());
        let before = p.generation;
        p.apply_telemetry(TelemetryPoint { t_ms: 100, sample: GpuTelemetry::default() });
        p.apply(5, BenchEvent::Started { test: TestKind::Fma, device: None });
        assert!(p.tests.iter().all(|t| t.state == TestState::Waiting), "fma is not planned");
        assert_eq!((p.telemetry.len(), p.events.len()), (1, 1));
        assert_eq!(p.generation, before + 2);
    }
}
