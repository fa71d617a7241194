//! A benchmark run off the UI thread: `ops::bench::measure` on a thread named `gpu-doctor-bench`, its
//! events and telemetry streamed to the UI over a bounded channel, a repaint asked for on each, and
//! cancellation through the runner's `Arc<AtomicBool>`.
//!
//! The sender never blocks the run: a sample, progress line or telemetry point that finds the
//! channel full is dropped (the finished run still has every one), and a test's start and end wait
//! in a small backlog that is sent as soon as there is room.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError, TrySendError};
use std::thread;
use std::time::{Duration, Instant};

use gpu_doctor_model::Snapshot;
use gpu_doctor_model::bench::plan::BenchPlan;
use gpu_doctor_model::bench::protocol::BenchEvent;
use gpu_doctor_model::bench::record::TelemetryPoint;
use gpu_doctor_model::bench::run::BenchRun;
use gpu_doctor_probes::host::telemetry::TelemetrySource;

use super::progress::RunProgress;
use crate::gui::telemetry::RunSamples;
use crate::ops::bench::{Measure, measure};

/// Messages in flight between the bench thread and the UI.
const CHANNEL_CAPACITY: usize = 512;

/// Where the page's benchmark stands, for the page and for UI tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    /// Nothing run in this session.
    Idle,
    /// A run is under way.
    Running,
    /// Cancel was pressed; the run is stopping.
    Cancelling,
    /// The last run ended (every test finished or failed on its own).
    Finished,
    /// The last run was cancelled; what it measured before is still shown.
    Cancelled,
    /// The last run could not be carried out (the worker could not be found).
    Failed,
}

/// What the bench thread sends.
#[derive(Debug)]
enum Msg {
    Event { t_ms: u64, event: BenchEvent },
    Telemetry(TelemetryPoint),
    Done(Box<Result<BenchRun, String>>),
}

impl Msg {
    /// Whether the UI can do without it (the finished run carries it anyway).
    fn droppable(&self) -> bool {
        match self {
            Msg::Event { event, .. } => matches!(event, BenchEvent::Sample { .. } | BenchEvent::Progress { .. }),
            Msg::Telemetry(_) => true,
            Msg::Done(_) => false,
        }
    }
}

/// The sending side: never blocks while the run goes on.
struct Outbox {
    tx: SyncSender<Msg>,
    backlog: VecDeque<Msg>,
    ctx: egui::Context,
}

impl Outbox {
    fn send(&mut self, msg: Msg) {
        while let Some(first) = self.backlog.pop_front() {
            if let Err(e) = self.tx.try_send(first) {
                match e {
                    TrySendError::Full(m) => self.backlog.push_front(m),
                    TrySendError::Disconnected(_) => self.backlog.clear(),
                }
                break;
            }
        }
        if !self.backlog.is_empty() {
            if !msg.droppable() {
                self.backlog.push_back(msg);
            }
        } else if let Err(TrySendError::Full(m)) = self.tx.try_send(msg)
            && !m.droppable()
        {
            self.backlog.push_back(m);
        }
        self.ctx.request_repaint();
    }

    /// Sends the backlog and the outcome, waiting for room now that the run is over.
    fn finish(self, outcome: Result<BenchRun, String>) {
        for m in self.backlog.into_iter().chain([Msg::Done(Box::new(outcome))]) {
            if self.tx.send(m).is_err() {
                // The window closed; nobody is waiting.
                return;
            }
        }
        self.ctx.request_repaint();
    }
}

fn ms_since(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// A run under way and what it has sent so far.
#[derive(Debug)]
pub struct BenchJob {
    rx: Receiver<Msg>,
    cancel: Arc<AtomicBool>,
    started: Instant,
    /// The planned tests' states, the events and telemetry so far.
    pub progress: RunProgress,
}

impl BenchJob {
    /// Starts `plan` on the `gpu-doctor-bench` thread. `snapshot` is this machine's probe for the
    /// GPU tests (library folders, facts to judge against); `None` when only the CPU runs. The run
    /// samples the benchmarked GPU's telemetry from `telemetry` (the window's source).
    pub fn start(
        ctx: &egui::Context,
        plan: BenchPlan,
        snapshot: Option<Snapshot>,
        telemetry: Arc<dyn TelemetrySource>,
    ) -> Result<Self, String> {
        let (tx, rx) = mpsc::sync_channel(CHANNEL_CAPACITY);
        let cancel = Arc::new(AtomicBool::new(false));
        let started = Instant::now();
        let progress = RunProgress::new(plan.clone());
        let (flag, ctx) = (Arc::clone(&cancel), ctx.clone());
        thread::Builder::new()
            .name("gpu-doctor-bench".into())
            .spawn(move || {
                let tap_tx = tx.clone();
                let tap_ctx = ctx.clone();
                // On the job's clock, as the events are.
                let on_telemetry = Box::new(move |point: &TelemetryPoint| {
                    let point = TelemetryPoint { t_ms: ms_since(started), sample: point.sample.clone() };
                    // Dropped when the UI is behind: the finished run has every sample.
                    if tap_tx.try_send(Msg::Telemetry(point)).is_ok() {
                        tap_ctx.request_repaint();
                    }
                });
                let mut outbox = Outbox { tx, backlog: VecDeque::new(), ctx };
                let how = Measure { cancel: flag, timeout: None, telemetry, on_telemetry: Some(on_telemetry) };
                let outcome = measure(snapshot.as_ref(), &plan, how, &mut |event| {
                    outbox.send(Msg::Event { t_ms: ms_since(started), event: event.clone() });
                })
                .map_err(|e| format!("{e:#}"));
                outbox.finish(outcome);
            })
            .map_err(|e| format!("could not start the benchmark thread: {e}"))?;
        Ok(Self { rx, cancel, started, progress })
    }

    /// Asks the run to stop; the tests not yet ended fail as cancelled.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// Whether cancel was pressed.
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// How long it has run.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// The benchmarked GPU and the run's telemetry samples so far, while its GPU tests run (the run
    /// samples that GPU then, so the window need not); `None` once they ended or when there are none.
    pub fn telemetry(&self) -> Option<RunSamples<'_>> {
        let p = &self.progress;
        p.tests.iter().any(|t| t.test.needs_gpu() && !t.state.ended()).then(|| RunSamples {
            gpu: p.plan.gpu,
            started: self.started,
            points: &p.telemetry,
        })
    }

    /// Takes in everything that arrived; returns the outcome once the run is over.
    pub fn poll(&mut self) -> Option<Result<BenchRun, String>> {
        loop {
            match self.rx.try_recv() {
                Ok(Msg::Event { t_ms, event }) => self.progress.apply(t_ms, event),
                Ok(Msg::Telemetry(point)) => self.progress.apply_telemetry(point),
                Ok(Msg::Done(outcome)) => return Some(*outcome),
                Err(TryRecvError::Empty) => return None,
                Err(TryRecvError::Disconnected) => {
                    return Some(
                        Err("the benchmark thread stopped without an answer (a bug: please report it)".into()),
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use gpu_doctor_model::bench::plan::TestKind;
    use gpu_doctor_model::bench::protocol::TestResult;

    use super::*;

    fn event(test: TestKind, done: u32) -> Msg {
        Msg::Event { t_ms: 0, event: BenchEvent::Progress { test, done, total: 9, what: String::new() } }
    }

    #[test]
    fn a_full_channel_drops_samples_but_keeps_test_ends_in_order() {
        let (tx, rx) = mpsc::sync_channel(2);
        let mut out = Outbox { tx, backlog: VecDeque::new(), ctx: egui::Context::default() };
        out.send(event(TestKind::H2d, 1));
        out.send(event(TestKind::H2d, 2));
        out.send(event(TestKind::H2d, 3)); // full: dropped
        let finished = || Msg::Event {
            t_ms: 1,
            event: BenchEvent::Finished { test: TestKind::H2d, result: TestResult::default() },
        };
        out.send(finished()); // full: waits in the backlog
        out.send(event(TestKind::D2h, 1)); // behind the backlog: dropped
        assert_eq!(out.backlog.len(), 1);
        let got: Vec<Msg> = rx.try_iter().collect();
        assert_eq!(got.len(), 2);
        out.send(Msg::Event { t_ms: 2, event: BenchEvent::Started { test: TestKind::D2h, device: None } });
        let describe = |m: Msg| match m {
            Msg::Event { event, .. } => format!("{} {}", event.test(), event.to_line().contains("started")),
            Msg::Telemetry(_) => "telemetry".into(),
            Msg::Done(_) => "done".into(),
        };
        let mut rest: Vec<String> = rx.try_iter().map(describe).collect();
        out.finish(Err("x".into()));
        rest.extend(rx.try_iter().map(describe));
        assert_eq!(rest, ["h2d false", "d2h true", "done"], "the backlog first, in order, then the outcome");
    }

    /// The hand-over to the window's telemetry: while a GPU test has not ended, the job offers its
    /// GPU and samples (on the job's clock); once the GPU tests ended it offers none, even with the
    /// CPU baselines still to run, so the window samples that GPU again.
    #[test]
    fn the_runs_telemetry_is_offered_only_while_its_gpu_tests_go_on() {
        use gpu_doctor_model::telemetry::GpuTelemetry;

        let (tx, rx) = mpsc::sync_channel(16);
        let plan = BenchPlan::preset(1, vec![TestKind::H2d, TestKind::Cpu], true);
        let mut job =
            BenchJob { rx, cancel: Arc::default(), started: Instant::now(), progress: RunProgress::new(plan) };
        let point = |t_ms| Msg::Telemetry(TelemetryPoint { t_ms, sample: GpuTelemetry::default() });
        tx.send(point(100)).unwrap();
        tx.send(point(200)).unwrap();
        assert!(job.poll().is_none());
        let run = job.telemetry().expect("the GPU test has not ended");
        assert_eq!((run.gpu, run.started), (1, job.started));
        assert_eq!(run.points.iter().map(|p| p.t_ms).collect::<Vec<_>>(), [100, 200]);

        let finished = BenchEvent::Finished { test: TestKind::H2d, result: TestResult::default() };
        tx.send(Msg::Event { t_ms: 300, event: finished }).unwrap();
        assert!(job.poll().is_none());
        assert!(!job.progress.tests[1].state.ended(), "the CPU baseline is still to run");
        assert!(job.telemetry().is_none(), "the GPU tests ended: the window samples the GPU again");
    }

    #[test]
    fn a_cpu_run_streams_events_and_ends_cancelled_when_asked() {
        let ctx = egui::Context::default();
        let plan = BenchPlan::preset(0, vec![TestKind::Cpu], true);
        let source = Arc::new(gpu_doctor_probes::host::telemetry::NvmlSource::default());
        let mut job = BenchJob::start(&ctx, plan, None, source).unwrap();
        assert!(job.telemetry().is_none(), "the CPU baselines sample no GPU");
        job.cancel();
        assert!(job.cancelled());
        let deadline = Instant::now() + Duration::from_secs(120);
        let outcome = loop {
            if let Some(o) = job.poll() {
                break o;
            }
            assert!(Instant::now() < deadline, "the run never ended");
            thread::sleep(Duration::from_millis(5));
        };
        let run = outcome.unwrap();
        assert_eq!(run.tests.len(), 1);
        assert!(job.progress.tests[0].state.ended(), "{:?}", job.progress.tests[0].state);
        assert!(!run.worker.started, "the CPU baselines need no worker process");
    }
}
