//! Applying the page's plans off the UI thread: the runner (`installers::apply::apply`, a fake in
//! tests) on a thread named `gpu-doctor-apply`, its events sent over a bounded channel, a repaint
//! asked for on each, and Cancel through the runner's `AtomicBool`.
//!
//! Output lines and progress that find the channel full are dropped (the runner's log in the data
//! folder has every line); a step's start and end and the outcome wait for room.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError};
use std::thread;

use gpu_doctor_installers::Plan;
use gpu_doctor_installers::apply::{ApplyOptions, Event, Outcome, StepStatus};

/// Runs one plan: `installers::apply::apply`'s shape, so tests can hand in a fake that sends events.
pub type Runner = fn(&Plan, &ApplyOptions, &AtomicBool, &mut dyn FnMut(Event)) -> Outcome;

/// Messages in flight between the apply thread and the UI.
const CHANNEL_CAPACITY: usize = 256;
/// Log lines kept on screen (the runner's log file has them all).
const LOG_LINES: usize = 2000;

/// Where the apply run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    /// The runner is working.
    Running,
    /// Cancel was pressed; the runner is stopping.
    Cancelling,
    /// Every plan ran to its end.
    Finished,
    /// A step failed; the plans stopped there.
    Failed,
    /// Stopped by Cancel.
    Cancelled,
}

/// What the apply thread sends: an event of plan `plan`, or the outcome of every plan.
#[derive(Debug)]
enum Msg {
    Event { plan: usize, event: Event },
    Done(Vec<Outcome>),
}

/// One step as the page shows it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepView {
    /// Started and not yet ended.
    pub running: bool,
    /// The last progress the runner parsed from its output, 0..=1, and what it was about.
    pub progress: Option<(f32, String)>,
    /// How it ended; `None` until it did.
    pub status: Option<StepStatus>,
}

/// The apply run on screen: its steps, its log, and the job while it runs.
#[derive(Debug)]
pub struct ApplyRun {
    /// Where it stands.
    pub state: RunState,
    /// Per plan, per step.
    pub steps: Vec<Vec<StepView>>,
    /// The last lines the steps printed, with a line per step start.
    pub log: VecDeque<String>,
    rx: Receiver<Msg>,
    cancel: Arc<AtomicBool>,
}

impl ApplyRun {
    /// Starts applying `plans` in order on the `gpu-doctor-apply` thread; a plan runs only when the
    /// one before it ended without a failure and Cancel was not pressed.
    pub fn start(ctx: &egui::Context, plans: Vec<Plan>, opts: ApplyOptions, runner: Runner) -> Result<Self, String> {
        let (tx, rx) = mpsc::sync_channel(CHANNEL_CAPACITY);
        let cancel = Arc::new(AtomicBool::new(false));
        let steps = plans.iter().map(|p| vec![StepView::default(); p.steps.len()]).collect();
        let (flag, ctx) = (Arc::clone(&cancel), ctx.clone());
        thread::Builder::new()
            .name("gpu-doctor-apply".into())
            .spawn(move || {
                let outcomes = apply_all(&plans, &opts, &flag, runner, &tx, &ctx);
                // The window may be gone; nobody is waiting then.
                let _ = tx.send(Msg::Done(outcomes));
                ctx.request_repaint();
            })
            .map_err(|e| format!("could not start the apply thread: {e}"))?;
        Ok(Self { state: RunState::Running, steps, log: VecDeque::new(), rx, cancel })
    }

    /// Asks the runner to stop (it sets the runner's flag).
    pub fn cancel(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
        if self.state == RunState::Running {
            self.state = RunState::Cancelling;
        }
    }

    /// Whether the runner is still working.
    pub fn is_running(&self) -> bool {
        matches!(self.state, RunState::Running | RunState::Cancelling)
    }

    /// Takes in what arrived; true when the run just ended.
    pub fn poll(&mut self) -> bool {
        while self.is_running() {
            match self.rx.try_recv() {
                Ok(Msg::Event { plan, event }) => self.apply_event(plan, event),
                Ok(Msg::Done(outcomes)) => {
                    self.finish(&outcomes);
                    return true;
                }
                Err(TryRecvError::Empty) => return false,
                Err(TryRecvError::Disconnected) => {
                    self.push_log("the apply thread stopped without an answer (a bug: please report it)".into());
                    self.state = RunState::Failed;
                    return true;
                }
            }
        }
        false
    }

    fn apply_event(&mut self, plan: usize, event: Event) {
        match event {
            Event::Started { index, total, line } => {
                self.push_log(format!("[{}/{total}] {line}", index + 1));
                if let Some(s) = self.step_mut(plan, index) {
                    s.running = true;
                }
            }
            Event::Line { text, .. } => self.push_log(text),
            Event::Progress { index, fraction, what } => {
                if let Some(s) = self.step_mut(plan, index) {
                    s.progress = Some((fraction.clamp(0.0, 1.0), what));
                }
            }
            Event::Ended { index, status } => {
                if let Some(s) = self.step_mut(plan, index) {
                    s.running = false;
                    s.status = Some(status);
                }
            }
        }
    }

    /// The outcomes are the final word on every step, events dropped on the way or not.
    fn finish(&mut self, outcomes: &[Outcome]) {
        for (steps, outcome) in self.steps.iter_mut().zip(outcomes) {
            for (step, status) in steps.iter_mut().zip(&outcome.steps) {
                step.running = false;
                step.status = Some(status.clone());
            }
        }
        for log in outcomes.iter().filter_map(|o| o.log.as_ref()) {
            self.push_log(format!("The full log: {}", log.display()));
        }
        let any = |f: fn(&StepStatus) -> bool| outcomes.iter().flat_map(|o| &o.steps).any(f);
        self.state = if self.cancel.load(Ordering::Relaxed) || any(|s| *s == StepStatus::Cancelled) {
            RunState::Cancelled
        } else if any(|s| matches!(s, StepStatus::Failed { .. })) {
            RunState::Failed
        } else {
            RunState::Finished
        };
    }

    fn step_mut(&mut self, plan: usize, index: usize) -> Option<&mut StepView> {
        self.steps.get_mut(plan).and_then(|s| s.get_mut(index))
    }

    fn push_log(&mut self, line: String) {
        if self.log.len() == LOG_LINES {
            self.log.pop_front();
        }
        self.log.push_back(line);
    }
}

/// The apply thread's work: each plan through `runner`, its events forwarded.
fn apply_all(
    plans: &[Plan],
    opts: &ApplyOptions,
    cancel: &AtomicBool,
    runner: Runner,
    tx: &SyncSender<Msg>,
    ctx: &egui::Context,
) -> Vec<Outcome> {
    let mut outcomes = Vec::with_capacity(plans.len());
    let mut stopped = false;
    for (i, plan) in plans.iter().enumerate() {
        if stopped || cancel.load(Ordering::Relaxed) {
            outcomes.push(Outcome { steps: vec![StepStatus::NotRun; plan.steps.len()], ..Outcome::default() });
            continue;
        }
        let outcome = runner(plan, opts, cancel, &mut |event| {
            let msg = Msg::Event { plan: i, event };
            let sent = match &msg {
                Msg::Event { event: Event::Line { .. } | Event::Progress { .. }, .. } => tx.try_send(msg).is_ok(),
                _ => tx.send(msg).is_ok(),
            };
            if sent {
                ctx.request_repaint();
            }
        });
        stopped = outcome.steps.iter().any(|s| matches!(s, StepStatus::Failed { .. } | StepStatus::Cancelled));
        outcomes.push(outcome);
    }
    outcomes
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::time::{Duration, Instant};

    use super::*;
    use gpu_doctor_installers::Step;

    fn plan(steps: usize) -> Plan {
        Plan {
            id: "p".into(),
            goal: "g".into(),
            answers: Vec::new(),
            env: None,
            steps: (0..steps).map(|i| Step::run(vec![format!("cmd{i}")], "why", "changes", "undo")).collect(),
            choice: None,
        }
    }

    fn fails_first(plan: &Plan, _: &ApplyOptions, _: &AtomicBool, events: &mut dyn FnMut(Event)) -> Outcome {
        events(Event::Started { index: 0, total: plan.steps.len(), line: "cmd0".into() });
        let status = StepStatus::Failed { reason: "exit status 1".into() };
        events(Event::Ended { index: 0, status: status.clone() });
        let mut steps = vec![StepStatus::NotRun; plan.steps.len()];
        steps[0] = status;
        Outcome { steps, ..Outcome::default() }
    }

    fn wait(run: &mut ApplyRun) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !run.poll() {
            assert!(Instant::now() < deadline, "the run never ended");
            thread::sleep(Duration::from_millis(2));
        }
    }

    /// A failing plan stops the ones after it: they are not run, and the run says it failed.
    #[test]
    fn a_failed_plan_stops_the_plans_after_it() {
        let opts = ApplyOptions { log_dir: "/nonexistent".into(), step_timeout: Duration::from_secs(1) };
        let mut run = ApplyRun::start(&egui::Context::default(), vec![plan(2), plan(1)], opts, fails_first).unwrap();
        wait(&mut run);
        assert_eq!(run.state, RunState::Failed);
        assert_eq!(run.steps[0][0].status, Some(StepStatus::Failed { reason: "exit status 1".into() }));
        assert_eq!(run.steps[0][1].status, Some(StepStatus::NotRun));
        assert_eq!(run.steps[1][0].status, Some(StepStatus::NotRun), "the second plan did not run");
        assert_eq!(run.log, ["[1/2] cmd0"]);
    }
}
