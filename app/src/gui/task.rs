//! `Task<T>`: a one-shot background job (probe, diagnose, load, export) as a small state machine.
//!
//! The job runs on a named thread and sends one result over a bounded channel, then asks for a
//! repaint; the UI polls without blocking. While a new run is under way the previous value stays
//! available, so the screen never goes blank. Not `Clone`: one job, one owner.

use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::thread;

/// A background job and its last result.
#[derive(Debug)]
pub struct Task<T> {
    state: State<T>,
}

#[derive(Debug)]
enum State<T> {
    /// Never asked.
    Idle,
    /// Running; `previous` is the last value, shown meanwhile.
    Running { previous: Option<T>, rx: Receiver<Result<T, String>> },
    /// The last run gave this.
    Done(T),
    /// The last run failed; `previous` is the value before it.
    Failed { previous: Option<T>, error: String },
}

impl<T> Default for Task<T> {
    fn default() -> Self {
        Self { state: State::Idle }
    }
}

impl<T: Send + 'static> Task<T> {
    /// Starts `job` on a thread named `gpu-doctor-{name}`, unless one is already running (then
    /// nothing happens and `false` is returned). `ctx` is asked to repaint when the result lands.
    pub fn spawn(
        &mut self,
        name: &str,
        ctx: &egui::Context,
        job: impl FnOnce() -> Result<T, String> + Send + 'static,
    ) -> bool {
        if self.is_running() {
            return false;
        }
        let (tx, rx) = mpsc::sync_channel(1);
        let ctx = ctx.clone();
        let spawned = thread::Builder::new().name(format!("gpu-doctor-{name}")).spawn(move || {
            // The receiver may be gone (the window closed); nothing is lost then.
            let _ = tx.send(job());
            ctx.request_repaint();
        });
        let previous = self.take_value();
        self.state = match spawned {
            Ok(_) => State::Running { previous, rx },
            Err(e) => State::Failed { previous, error: format!("could not start the {name} thread: {e}") },
        };
        true
    }

    /// Takes in a finished result, if one arrived; returns true when the state changed.
    pub fn poll(&mut self) -> bool {
        let State::Running { rx, .. } = &self.state else { return false };
        let outcome = match rx.try_recv() {
            Ok(r) => r,
            Err(TryRecvError::Empty) => return false,
            Err(TryRecvError::Disconnected) => {
                Err("the job stopped without an answer (a bug: please report it)".into())
            }
        };
        let previous = self.take_value();
        self.state = match outcome {
            Ok(v) => State::Done(v),
            Err(error) => State::Failed { previous, error },
        };
        true
    }
}

impl<T> Task<T> {
    /// The newest value: the last result, or while running or after a failure the one before.
    pub fn value(&self) -> Option<&T> {
        match &self.state {
            State::Idle => None,
            State::Done(v) => Some(v),
            State::Running { previous, .. } | State::Failed { previous, .. } => previous.as_ref(),
        }
    }

    /// Whether a run is under way.
    pub fn is_running(&self) -> bool {
        matches!(self.state, State::Running { .. })
    }

    /// Why the last run failed; `None` unless it did.
    pub fn error(&self) -> Option<&str> {
        match &self.state {
            State::Failed { error, .. } => Some(error),
            _ => None,
        }
    }

    /// Forgets the value and any error (a running job keeps running and its result still lands).
    pub fn clear(&mut self) {
        match &mut self.state {
            State::Running { previous, .. } => *previous = None,
            _ => self.state = State::Idle,
        }
    }

    fn take_value(&mut self) -> Option<T> {
        match std::mem::replace(&mut self.state, State::Idle) {
            State::Idle => None,
            State::Done(v) => Some(v),
            State::Running { previous, .. } | State::Failed { previous, .. } => previous,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::time::{Duration, Instant};

    fn wait<T: Send + 'static>(task: &mut Task<T>) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !task.poll() {
            assert!(Instant::now() < deadline, "the job never answered");
            thread::sleep(Duration::from_millis(2));
        }
    }

    #[test]
    fn keeps_the_previous_value_while_running_and_after_a_failure() {
        let ctx = egui::Context::default();
        let mut task: Task<u32> = Task::default();
        assert!(task.value().is_none() && !task.is_running());
        assert!(task.spawn("one", &ctx, || Ok(1)));
        wait(&mut task);
        assert_eq!(task.value(), Some(&1));

        let (go_tx, go_rx) = mpsc::sync_channel::<()>(1);
        assert!(task.spawn("two", &ctx, move || {
            go_rx.recv().unwrap();
            Err("it broke".to_owned())
        }));
        assert!(task.is_running());
        assert_eq!(task.value(), Some(&1), "the old value stays on screen");
        assert!(!task.spawn("three", &ctx, || Ok(3)), "one run at a time");
        go_tx.send(()).unwrap();
        wait(&mut task);
        assert_eq!(task.error(), Some("it broke"));
        assert_eq!(task.value(), Some(&1));
    }

    #[test]
    fn a_panicking_job_is_a_failure_not_a_hang() {
        let ctx = egui::Context::default();
        let mut task: Task<u32> = Task::default();
        task.spawn("panics", &ctx, || panic!("boom"));
        wait(&mut task);
        assert!(task.error().unwrap().contains("without an answer"));
    }
}
