//! Live NVML telemetry of this machine's GPUs: a named thread samples every GPU twice a second while
//! a page that shows live values is open, and the UI keeps a rolling window per GPU.
//!
//! The sampler is a function (`SampleFn`): NVML in the app, a fake in tests, so the window's
//! trimming, pause and the stop on errors are tested without a GPU.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, TryRecvError, TrySendError};
use std::thread;
use std::time::{Duration, Instant};

use gpu_doctor_probes::host::telemetry::{Detail, GpuTelemetry, runtime_suspended, sample_detail};
use gpu_doctor_probes::model::Gpu;

/// How often each GPU is sampled.
pub const INTERVAL: Duration = Duration::from_millis(500);
/// How much history is kept per GPU, seconds.
pub const WINDOW_SECS: f64 = 300.0;

/// Samples GPU `index` (NVML order) now, asking what `Detail` says, or says why not.
pub type SampleFn = Arc<dyn Fn(u32, Detail) -> Result<GpuTelemetry, String> + Send + Sync>;
/// True when the GPU at this PCI bus id sleeps (runtime suspend) and must not be woken by asking.
pub type AsleepFn = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// A GPU the feed samples: its NVML index and, where known, its PCI bus id (for the sleep check).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    /// NVML index.
    pub index: u32,
    /// PCI bus id, e.g. `00000000:01:00.0`.
    pub bus_id: Option<String>,
}

enum Msg {
    Sample { t_secs: f64, gpu: u32, sample: GpuTelemetry },
    Asleep(u32),
    Stopped(String),
}

/// The rolling window of samples and the sampler thread.
pub struct TelemetryFeed {
    /// Samples per GPU index, oldest first: (seconds since the feed started, sample); at most
    /// `WINDOW_SECS` old, counted from each GPU's newest sample.
    pub series: BTreeMap<u32, VecDeque<(f64, GpuTelemetry)>>,
    /// Why sampling stopped or cannot start (no driver, NVML error); `None` while it runs. Once set,
    /// sampling is not tried again in this run of the window.
    pub note: Option<String>,
    /// When set, samples are not added to `series` (the plots hold still); `latest` still follows
    /// the GPUs while the sampler runs for another page.
    pub paused: bool,
    latest: BTreeMap<u32, GpuTelemetry>,
    /// GPUs found asleep at the last look (not sampled, so they stay asleep).
    asleep: std::collections::BTreeSet<u32>,
    source: SampleFn,
    is_asleep: AsleepFn,
    interval: Duration,
    /// What the running sampler was started for.
    running_for: Option<(Vec<Target>, Detail)>,
    started: Option<Instant>,
    running: Option<(Arc<AtomicBool>, Receiver<Msg>)>,
}

impl Default for TelemetryFeed {
    fn default() -> Self {
        let mut feed =
            Self::with_source(Arc::new(|gpu, detail| sample_detail(gpu, detail).map_err(|e| e.to_string())), INTERVAL);
        feed.is_asleep = Arc::new(runtime_suspended);
        feed
    }
}

impl std::fmt::Debug for TelemetryFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TelemetryFeed")
            .field("gpus", &self.series.keys().collect::<Vec<_>>())
            .field("note", &self.note)
            .field("paused", &self.paused)
            .field("running", &self.running.is_some())
            .finish_non_exhaustive()
    }
}

impl TelemetryFeed {
    /// A feed that samples with `source` every `interval` (the app uses NVML and `INTERVAL`).
    pub fn with_source(source: SampleFn, interval: Duration) -> Self {
        Self {
            series: BTreeMap::new(),
            note: None,
            paused: false,
            latest: BTreeMap::new(),
            asleep: std::collections::BTreeSet::new(),
            source,
            is_asleep: Arc::new(|_| false),
            interval,
            running_for: None,
            started: None,
            running: None,
        }
    }

    /// Uses `is_asleep` to tell a sleeping GPU (the app reads the PCI power state from sysfs).
    #[cfg(test)]
    #[must_use]
    pub fn with_sleep_check(mut self, is_asleep: AsleepFn) -> Self {
        self.is_asleep = is_asleep;
        self
    }

    /// Starts, restarts or stops the sampler: it runs while `wanted` and there is a GPU to sample,
    /// unless it already stopped with a note, and asks only what `detail` needs (a page that shows
    /// no PCIe throughput does not pay for the counters).
    /// Called every frame with the GPUs on screen; allocates only when it (re)starts the sampler.
    pub fn set_wanted(&mut self, wanted: bool, gpus: &[Gpu], detail: Detail, ctx: &egui::Context) {
        let run = wanted && !gpus.is_empty();
        let same = self.running_for.as_ref().is_some_and(|(t, d)| {
            *d == detail
                && t.iter()
                    .map(|t| (t.index, t.bus_id.as_deref()))
                    .eq(gpus.iter().map(|g| (g.index, g.pci_bus_id.as_deref())))
        });
        if self.running.is_some() && (!run || !same) {
            if let Some((stop, _)) = self.running.take() {
                stop.store(true, Ordering::Relaxed);
            }
            self.running_for = None;
        }
        if run && self.running.is_none() && self.note.is_none() {
            let targets = gpus.iter().map(|g| Target { index: g.index, bus_id: g.pci_bus_id.clone() }).collect();
            self.start(targets, detail, ctx);
        }
    }

    /// Whether GPU `gpu` was asleep at the last look (and so was not sampled).
    pub fn is_asleep(&self, gpu: u32) -> bool {
        self.asleep.contains(&gpu)
    }

    fn start(&mut self, targets: Vec<Target>, detail: Detail, ctx: &egui::Context) {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::sync_channel::<Msg>(64);
        let started = *self.started.get_or_insert_with(Instant::now);
        let (flag, ctx, source, interval) = (Arc::clone(&stop), ctx.clone(), Arc::clone(&self.source), self.interval);
        let is_asleep = Arc::clone(&self.is_asleep);
        self.running_for = Some((targets.clone(), detail));
        let spawned = thread::Builder::new().name("gpu-doctor-telemetry".into()).spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                let mut first_error = None;
                let mut answered = 0;
                for target in &targets {
                    let gpu = target.index;
                    // Asking NVML about a suspended GPU wakes it; a sleeping GPU counts as answered.
                    if target.bus_id.as_deref().is_some_and(|b| is_asleep(b)) {
                        answered += 1;
                        if let Err(TrySendError::Disconnected(_)) = tx.try_send(Msg::Asleep(gpu)) {
                            return;
                        }
                        continue;
                    }
                    match source(gpu, detail) {
                        Ok(sample) => {
                            answered += 1;
                            let t_secs = started.elapsed().as_secs_f64();
                            // A full channel means the UI is behind; dropping a sample is fine.
                            // A closed one means the feed is gone.
                            if let Err(TrySendError::Disconnected(_)) = tx.try_send(Msg::Sample { t_secs, gpu, sample })
                            {
                                return;
                            }
                        }
                        Err(e) => {
                            first_error.get_or_insert(e);
                        }
                    }
                }
                if answered == 0 {
                    let why = first_error.unwrap_or_else(|| "no GPU answered".to_owned());
                    let _ = tx.send(Msg::Stopped(format!("Live telemetry stopped: {why}")));
                    ctx.request_repaint();
                    return;
                }
                ctx.request_repaint();
                thread::sleep(interval);
            }
        });
        match spawned {
            Ok(_) => self.running = Some((stop, rx)),
            Err(e) => self.note = Some(format!("could not start the telemetry thread: {e}")),
        }
    }

    /// Takes in new samples; true when anything arrived.
    pub fn poll(&mut self) -> bool {
        let mut changed = false;
        while let Some((_, rx)) = &self.running {
            match rx.try_recv() {
                Ok(Msg::Sample { t_secs, gpu, sample }) => {
                    self.asleep.remove(&gpu);
                    self.accept(t_secs, gpu, sample);
                }
                Ok(Msg::Asleep(gpu)) => {
                    self.asleep.insert(gpu);
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

    /// Takes in one sample: always the newest value; into the window unless paused, dropping what
    /// is older than `WINDOW_SECS`.
    fn accept(&mut self, t_secs: f64, gpu: u32, sample: GpuTelemetry) {
        if !self.paused {
            let s = self.series.entry(gpu).or_default();
            s.push_back((t_secs, sample.clone()));
            while s.front().is_some_and(|(t, _)| t_secs - t > WINDOW_SECS) {
                s.pop_front();
            }
        }
        self.latest.insert(gpu, sample);
    }

    /// The newest sample of GPU `gpu`, paused or not; `None` before the first.
    pub fn latest(&self, gpu: u32) -> Option<&GpuTelemetry> {
        self.latest.get(&gpu)
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Mutex;
    use std::sync::atomic::AtomicUsize;

    use super::*;

    fn util(pct: u32) -> GpuTelemetry {
        GpuTelemetry { utilization_gpu_pct: Some(pct), ..GpuTelemetry::default() }
    }

    fn two() -> Vec<Gpu> {
        (0..2)
            .map(|index| Gpu { index, pci_bus_id: Some(format!("00000000:0{}:00.0", index + 1)), ..Gpu::default() })
            .collect()
    }

    /// Polls until `done` holds; fails after 10 s.
    fn poll_until(feed: &mut TelemetryFeed, done: impl Fn(&TelemetryFeed) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !done(feed) {
            assert!(Instant::now() < deadline, "the feed never got there: {feed:?}");
            feed.poll();
            thread::sleep(Duration::from_millis(2));
        }
    }

    #[test]
    fn the_window_keeps_only_the_last_five_minutes() {
        let mut feed = TelemetryFeed::with_source(Arc::new(|_, _| Ok(util(0))), INTERVAL);
        for i in 0..=1000 {
            feed.accept(f64::from(i), 0, util(i));
        }
        let s = &feed.series[&0];
        assert_eq!(s.front().map(|(t, _)| *t), Some(1000.0 - WINDOW_SECS));
        assert_eq!(s.back().map(|(t, _)| *t), Some(1000.0));
        assert_eq!(s.len(), 301);
        assert_eq!(feed.latest(0), Some(&util(1000)));
        assert!(feed.latest(1).is_none());
    }

    #[test]
    fn pause_keeps_the_plots_still_but_follows_the_newest_value() {
        let mut feed = TelemetryFeed::with_source(Arc::new(|_, _| Ok(util(0))), INTERVAL);
        feed.accept(1.0, 0, util(10));
        feed.paused = true;
        feed.accept(2.0, 0, util(20));
        assert_eq!(feed.series[&0].len(), 1, "a sample while paused is dropped from the plots");
        assert_eq!(feed.latest(0), Some(&util(20)));
        feed.paused = false;
        feed.accept(3.0, 0, util(30));
        assert_eq!(feed.series[&0].iter().map(|(t, _)| *t).collect::<Vec<_>>(), [1.0, 3.0]);
    }

    #[test]
    fn a_fake_source_streams_samples_for_every_gpu_until_not_wanted() {
        let ctx = egui::Context::default();
        let calls = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&calls);
        let source: SampleFn = Arc::new(move |gpu, _| {
            let n = counter.fetch_add(1, Ordering::Relaxed);
            Ok(util(gpu * 100 + u32::try_from(n).unwrap_or(0)))
        });
        let mut feed = TelemetryFeed::with_source(source, Duration::from_millis(1));
        feed.set_wanted(true, &[], Detail::Full, &ctx);
        assert!(!feed.is_running(), "no GPU, no sampler");
        feed.set_wanted(true, &two(), Detail::Full, &ctx);
        assert!(feed.is_running());
        poll_until(&mut feed, |f| f.series.get(&1).is_some_and(|s| s.len() >= 3));
        let times: Vec<f64> = feed.series[&0].iter().map(|(t, _)| *t).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
        feed.set_wanted(false, &two(), Detail::Full, &ctx);
        assert!(!feed.is_running() && feed.note.is_none());
    }

    #[test]
    fn a_source_that_always_fails_stops_with_a_note_and_is_not_retried() {
        let ctx = egui::Context::default();
        let calls = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&calls);
        let source: SampleFn = Arc::new(move |_, _| {
            counter.fetch_add(1, Ordering::Relaxed);
            Err("NVML could not be loaded: libnvidia-ml.so.1 not found".to_owned())
        });
        let mut feed = TelemetryFeed::with_source(source, Duration::from_millis(1));
        feed.set_wanted(true, &two(), Detail::Full, &ctx);
        poll_until(&mut feed, |f| f.note.is_some());
        assert!(!feed.is_running());
        assert!(feed.note.as_deref().unwrap().contains("libnvidia-ml.so.1"), "{:?}", feed.note);
        thread::sleep(Duration::from_millis(20));
        assert_eq!(calls.load(Ordering::Relaxed), 2, "one round over both GPUs, then it stopped");
        feed.set_wanted(true, &two(), Detail::Full, &ctx);
        assert!(!feed.is_running(), "a stopped feed does not start again");
        assert_eq!(calls.load(Ordering::Relaxed), 2);
        assert!(feed.series.is_empty());
    }

    #[test]
    fn one_failing_gpu_does_not_stop_the_others() {
        let ctx = egui::Context::default();
        let source: SampleFn = Arc::new(|gpu, _| if gpu == 0 { Err("lost".to_owned()) } else { Ok(util(5)) });
        let mut feed = TelemetryFeed::with_source(source, Duration::from_millis(1));
        feed.set_wanted(true, &two(), Detail::Full, &ctx);
        poll_until(&mut feed, |f| f.series.get(&1).is_some_and(|s| s.len() >= 2));
        assert!(feed.is_running() && feed.note.is_none() && !feed.series.contains_key(&0));
    }

    /// A laptop's discrete GPU in runtime suspend is not asked (asking NVML wakes it); the other
    /// GPU is sampled, and the sleeping one is not an error that stops the feed.
    #[test]
    fn a_sleeping_gpu_is_not_woken_to_sample_it() {
        let ctx = egui::Context::default();
        let asked = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&asked);
        let source: SampleFn = Arc::new(move |gpu, _| {
            log.lock().unwrap().push(gpu);
            Ok(util(1))
        });
        let asleep: AsleepFn = Arc::new(|bus: &str| bus == "00000000:01:00.0");
        let mut feed = TelemetryFeed::with_source(source, Duration::from_millis(1)).with_sleep_check(asleep);
        feed.set_wanted(true, &two(), Detail::Card, &ctx);
        poll_until(&mut feed, |f| f.series.get(&1).is_some_and(|s| s.len() >= 3) && f.is_asleep(0));
        assert!(!asked.lock().unwrap().contains(&0), "the sleeping GPU was asked");
        assert!(feed.is_running() && feed.note.is_none());
        assert!(!feed.is_asleep(1));
    }

    /// The Overview asks for cards, the Telemetry page for everything: switching restarts the
    /// sampler with the detail the page shows.
    #[test]
    fn the_sampler_asks_what_the_page_shows() {
        let ctx = egui::Context::default();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let source: SampleFn = Arc::new(move |_, detail| {
            log.lock().unwrap().push(detail);
            Ok(util(1))
        });
        let mut feed = TelemetryFeed::with_source(source, Duration::from_millis(1));
        feed.set_wanted(true, &two(), Detail::Card, &ctx);
        poll_until(&mut feed, |f| f.series.get(&1).is_some_and(|s| s.len() >= 2));
        feed.set_wanted(true, &two(), Detail::Full, &ctx);
        poll_until(&mut feed, |_| seen.lock().unwrap().last() == Some(&Detail::Full));
        let seen = seen.lock().unwrap();
        assert_eq!(seen.first(), Some(&Detail::Card));
        assert!(seen.contains(&Detail::Full), "{seen:?}");
    }
}
