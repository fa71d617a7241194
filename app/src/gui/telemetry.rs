//! Live NVML telemetry of this machine's GPUs: a named thread samples every GPU twice a second while
//! a page that shows live values is open, and the UI keeps a rolling window per GPU.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::thread;
use std::time::{Duration, Instant};

use gpu_doctor_probes::host::telemetry::{GpuTelemetry, sample};

/// How often each GPU is sampled.
pub const INTERVAL: Duration = Duration::from_millis(500);
/// How much history is kept per GPU, seconds.
pub const WINDOW_SECS: f64 = 300.0;

enum Msg {
    Sample { t_secs: f64, gpu: u32, sample: GpuTelemetry },
    Stopped(String),
}

/// The rolling window of samples and the sampler thread.
#[derive(Debug, Default)]
pub struct TelemetryFeed {
    /// Samples per GPU index: (seconds since the feed started, sample).
    pub series: BTreeMap<u32, VecDeque<(f64, GpuTelemetry)>>,
    /// Why sampling stopped or cannot start (no driver, NVML error); `None` while it runs.
    pub note: Option<String>,
    /// When set, new samples are dropped (the page's pause button); the thread keeps running.
    pub paused: bool,
    started: Option<Instant>,
    running: Option<(Arc<AtomicBool>, Receiver<Msg>)>,
}

impl TelemetryFeed {
    /// Starts or stops the sampler: it runs while `wanted` and there is a GPU to sample.
    pub fn set_wanted(&mut self, wanted: bool, gpu_count: usize, ctx: &egui::Context) {
        let run = wanted && gpu_count > 0;
        match (&self.running, run) {
            (Some((stop, _)), false) => {
                stop.store(true, Ordering::Relaxed);
                self.running = None;
            }
            (None, true) if self.note.is_none() => self.start(gpu_count, ctx),
            _ => {}
        }
    }

    fn start(&mut self, gpu_count: usize, ctx: &egui::Context) {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::sync_channel::<Msg>(64);
        let started = *self.started.get_or_insert_with(Instant::now);
        let (flag, ctx) = (Arc::clone(&stop), ctx.clone());
        let count = u32::try_from(gpu_count).unwrap_or(u32::MAX);
        let spawned = thread::Builder::new().name("gpu-doctor-telemetry".into()).spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                let mut errors = Vec::new();
                for gpu in 0..count {
                    match sample(gpu) {
                        Ok(sample) => {
                            let t_secs = started.elapsed().as_secs_f64();
                            // A full channel means the UI is behind; dropping a sample is fine.
                            let _ = tx.try_send(Msg::Sample { t_secs, gpu, sample });
                        }
                        Err(e) => errors.push(e.to_string()),
                    }
                }
                if errors.len() == count as usize {
                    let why = errors.into_iter().next().unwrap_or_default();
                    let _ = tx.send(Msg::Stopped(format!("live telemetry stopped: {why}")));
                    ctx.request_repaint();
                    return;
                }
                ctx.request_repaint();
                thread::sleep(INTERVAL);
            }
        });
        match spawned {
            Ok(_) => self.running = Some((stop, rx)),
            Err(e) => self.note = Some(format!("could not start the telemetry thread: {e}")),
        }
    }

    /// Takes in new samples; true when any arrived.
    pub fn poll(&mut self) -> bool {
        let mut changed = false;
        while let Some((_, rx)) = &self.running {
            match rx.try_recv() {
                Ok(Msg::Sample { t_secs, gpu, sample }) => {
                    if !self.paused {
                        let s = self.series.entry(gpu).or_default();
                        s.push_back((t_secs, sample));
                        while s.front().is_some_and(|(t, _)| t_secs - t > WINDOW_SECS) {
                            s.pop_front();
                        }
                    }
                }
                Ok(Msg::Stopped(why)) => {
                    self.note = Some(why);
                    self.running = None;
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => self.running = None,
            }
            changed = true;
        }
        changed
    }

    /// The newest sample of GPU `gpu`; `None` before the first.
    pub fn latest(&self, gpu: u32) -> Option<&GpuTelemetry> {
        self.series.get(&gpu).and_then(|s| s.back()).map(|(_, t)| t)
    }

    /// Whether the sampler thread runs.
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }
}

impl Drop for TelemetryFeed {
    fn drop(&mut self) {
        if let Some((stop, _)) = &self.running {
            stop.store(true, Ordering::Relaxed);
        }
    }
}
