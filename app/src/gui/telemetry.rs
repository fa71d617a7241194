//! Live telemetry of this machine's GPUs: the probes' `Sampler` asks the GPUs a visible page
//! shows twice a second on a named thread, and the UI keeps a rolling window per GPU. While the
//! Telemetry page shows them, the same thread also lists each GPU's processes once a second. While a
//! benchmark's GPU tests run, the GPU they measure is not asked here: the run samples it anyway (ten
//! times a second, every detail), and its samples fill that GPU's window, so the driver is asked
//! once, not twice.
//!
//! The source is the `TelemetrySource` the benchmark runner uses too: NVML in the app, a fake in
//! tests, so the window's trimming, pause, the stop on errors and the hand-over to a run are tested
//! without a GPU.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, TryRecvError, TrySendError};
use std::time::{Duration, Instant};

use gpu_doctor_model::Gpu;
use gpu_doctor_model::bench::record::TelemetryPoint;
use gpu_doctor_model::telemetry::GpuTelemetry;
use gpu_doctor_probes::host::processes::GpuProcesses;
use gpu_doctor_probes::host::telemetry::{Detail, Reading, Sampler, Target, TelemetrySource};

/// How often each GPU is sampled.
pub const INTERVAL: Duration = Duration::from_millis(500);
/// How often each GPU's processes are listed (while the Telemetry page shows them).
pub const PROCESSES_EVERY: Duration = Duration::from_secs(1);
/// How much history is kept per GPU, seconds.
pub const WINDOW_SECS: f64 = 300.0;

/// A benchmark run's telemetry while its GPU tests run.
#[derive(Debug, Clone, Copy)]
pub struct RunSamples<'a> {
    /// The GPU it samples (NVML index).
    pub gpu: u32,
    /// When the run started: its samples' `t_ms` count from here.
    pub started: Instant,
    /// Its samples so far, oldest first.
    pub points: &'a [TelemetryPoint],
}

/// The rolling window of samples and the sampler.
pub struct TelemetryFeed {
    /// Samples per GPU index, oldest first: (seconds since the feed was made, sample); at most
    /// `WINDOW_SECS` old, counted from each GPU's newest sample.
    pub series: BTreeMap<u32, VecDeque<(f64, GpuTelemetry)>>,
    /// Why sampling stopped or cannot start (no driver, NVML error); `None` while it runs. Once set,
    /// sampling is not tried again in this run of the window.
    pub note: Option<String>,
    /// When set, samples are not added to `series` (the plots hold still); `latest` still follows
    /// the GPUs while the sampler runs for another page.
    pub paused: bool,
    latest: BTreeMap<u32, GpuTelemetry>,
    /// Whether the sampler should list the GPUs' processes too (`want_processes`), how often, and
    /// the newest list per GPU index or why there is none.
    processes_wanted: bool,
    processes_every: Duration,
    processes: BTreeMap<u32, Result<GpuProcesses, String>>,
    /// GPUs found asleep at the last look (not sampled, so they stay asleep).
    asleep: BTreeSet<u32>,
    source: Arc<dyn TelemetrySource>,
    interval: Duration,
    /// When the feed was made: the clock of `series`.
    epoch: Instant,
    running: Option<Running>,
    /// The benchmark run whose samples stand in for asking its GPU: the GPU, the run's start, and
    /// how many of its samples were taken in.
    run: Option<(u32, Instant, usize)>,
}

/// The running sampler, what it hands over, and what it was started for.
struct Running {
    /// Stops the sampler when dropped.
    _sampler: Sampler,
    rx: Receiver<(f64, Reading)>,
    targets: Vec<Target>,
    detail: Detail,
    processes: bool,
}

impl std::fmt::Debug for TelemetryFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TelemetryFeed")
            .field("gpus", &self.series.keys().collect::<Vec<_>>())
            .field("note", &self.note)
            .field("paused", &self.paused)
            .field("running", &self.running.is_some())
            .field("run", &self.run)
            .finish_non_exhaustive()
    }
}

impl TelemetryFeed {
    /// A feed that samples `source` every `interval` (the app uses NVML and `INTERVAL`).
    pub fn new(source: Arc<dyn TelemetrySource>, interval: Duration) -> Self {
        Self {
            series: BTreeMap::new(),
            note: None,
            paused: false,
            latest: BTreeMap::new(),
            processes_wanted: false,
            processes_every: PROCESSES_EVERY,
            processes: BTreeMap::new(),
            asleep: BTreeSet::new(),
            source,
            interval,
            epoch: Instant::now(),
            running: None,
            run: None,
        }
    }

    /// The source the feed samples, which a benchmark run started from the window samples too.
    pub fn source(&self) -> &Arc<dyn TelemetrySource> {
        &self.source
    }

    /// Starts, restarts or stops the sampler: it runs while `wanted` and there is a GPU to ask (one
    /// of `gpus`, the GPUs the page shows, that no benchmark run samples), unless it already
    /// stopped with a note, and asks only what `detail` needs (a page that shows no PCIe throughput
    /// does not pay for the counters).
    /// Called every frame with the GPUs on screen; allocates only when it (re)starts the sampler.
    pub fn set_wanted(&mut self, wanted: bool, gpus: &[Gpu], detail: Detail, ctx: &egui::Context) {
        let lent = self.run_gpu();
        let asked = gpus.iter().filter(|g| Some(g.index) != lent);
        let run = wanted && asked.clone().next().is_some();
        let same = self.running.as_ref().is_some_and(|r| {
            r.detail == detail
                && r.processes == self.processes_wanted
                && r.targets
                    .iter()
                    .map(|t| (t.index, t.bus_id.as_deref()))
                    .eq(asked.clone().map(|g| (g.index, g.pci_bus_id.as_deref())))
        });
        if self.running.is_some() && (!run || !same) {
            // Dropping the sampler stops it.
            self.running = None;
        }
        if run && self.running.is_none() && self.note.is_none() {
            let targets = asked.map(|g| Target { index: g.index, bus_id: g.pci_bus_id.clone() }).collect();
            self.start(targets, detail, ctx);
        }
    }

    /// Whether the sampler lists the GPUs' processes too (every `PROCESSES_EVERY`); the change
    /// takes effect at the next `set_wanted`. Only the Telemetry page shows them.
    pub fn want_processes(&mut self, wanted: bool) {
        self.processes_wanted = wanted;
        if !wanted {
            // Lists from this visit of the page would be stale by the next one.
            self.processes.clear();
        }
    }

    /// GPU `gpu`'s newest process list, or why NVML gave none; `None` before the first answer.
    pub fn processes(&self, gpu: u32) -> Option<&Result<GpuProcesses, String>> {
        self.processes.get(&gpu)
    }

    /// Whether GPU `gpu` was asleep at the last look (and so was not sampled).
    pub fn is_asleep(&self, gpu: u32) -> bool {
        self.asleep.contains(&gpu)
    }

    fn start(&mut self, targets: Vec<Target>, detail: Detail, ctx: &egui::Context) {
        let (tx, rx) = mpsc::sync_channel::<(f64, Reading)>(64);
        let (epoch, ctx) = (self.epoch, ctx.clone());
        let sink = move |reading: Reading| {
            let t_secs = epoch.elapsed().as_secs_f64();
            let open = if matches!(reading, Reading::Stopped(_)) {
                tx.send((t_secs, reading)).is_ok()
            } else {
                // A full channel means the UI is behind; dropping a sample is fine. A closed one
                // means the feed is gone.
                !matches!(tx.try_send((t_secs, reading)), Err(TrySendError::Disconnected(_)))
            };
            ctx.request_repaint();
            open
        };
        let source = Arc::clone(&self.source);
        let (name, processes) = ("gpu-doctor-telemetry", self.processes_wanted);
        let started = if processes {
            let every = (self.interval, self.processes_every);
            Sampler::start_with_processes(name, source, targets.clone(), detail, every, sink)
        } else {
            Sampler::start(name, source, targets.clone(), detail, self.interval, sink)
        };
        match started {
            Ok(sampler) => self.running = Some(Running { _sampler: sampler, rx, targets, detail, processes }),
            Err(e) => self.note = Some(format!("could not start the telemetry thread: {e}")),
        }
    }

    /// Takes in new samples; true when anything arrived.
    pub fn poll(&mut self) -> bool {
        let mut changed = false;
        while let Some(running) = &self.running {
            match running.rx.try_recv() {
                Ok((t_secs, Reading::Sample { gpu, sample })) => {
                    self.asleep.remove(&gpu);
                    self.accept(t_secs, gpu, sample);
                }
                Ok((_, Reading::Asleep { gpu })) => {
                    self.asleep.insert(gpu);
                }
                // The source lists them the most GPU memory first (`GpuProcesses`), as shown.
                Ok((_, Reading::Processes { gpu, list })) => {
                    self.processes.insert(gpu, list);
                }
                Ok((_, Reading::Stopped(why))) => {
                    self.note = Some(format!("Live telemetry stopped: {why}"));
                    self.running = None;
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => self.running = None,
            }
            changed = true;
        }
        changed
    }

    /// Takes in the samples a benchmark run took since the last call, as if sampled here; from now
    /// until it is called with `None`, `set_wanted` leaves the run's GPU to the run. Called every
    /// frame before `set_wanted`.
    pub fn follow_run(&mut self, run: Option<RunSamples<'_>>) {
        let Some(run) = run else {
            self.run = None;
            return;
        };
        let taken = match self.run {
            Some((gpu, started, taken)) if gpu == run.gpu && started == run.started => taken,
            _ => 0,
        };
        let offset = run.started.saturating_duration_since(self.epoch);
        for point in run.points.get(taken..).unwrap_or_default() {
            self.asleep.remove(&run.gpu);
            let t_secs = (offset + Duration::from_millis(point.t_ms)).as_secs_f64();
            self.accept(t_secs, run.gpu, point.sample.clone());
        }
        self.run = Some((run.gpu, run.started, run.points.len()));
    }

    /// The GPU whose samples come from a benchmark run now, if any.
    pub fn run_gpu(&self) -> Option<u32> {
        self.run.map(|(gpu, ..)| gpu)
    }

    /// Whether the sampler runs but nothing has come back yet (a screenshot waits for the first
    /// samples).
    pub fn is_waiting(&self) -> bool {
        self.running.is_some() && self.latest.is_empty() && self.asleep.is_empty()
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Mutex;
    use std::thread;

    use super::*;

    fn util(pct: u32) -> GpuTelemetry {
        GpuTelemetry { utilization_gpu_pct: Some(pct), ..GpuTelemetry::default() }
    }

    /// A source that answers with `answer` and keeps every question; the GPU at `asleep_bus`, if
    /// any, sleeps.
    struct Fake {
        answer: fn(u32) -> Result<GpuTelemetry, String>,
        asleep_bus: Option<&'static str>,
        asked: Mutex<Vec<(u32, Detail)>>,
    }

    impl Fake {
        fn new(answer: fn(u32) -> Result<GpuTelemetry, String>) -> Arc<Self> {
            Arc::new(Self { answer, asleep_bus: None, asked: Mutex::default() })
        }

        /// How many times GPU `gpu` was asked.
        fn asked(&self, gpu: u32) -> usize {
            self.asked.lock().unwrap().iter().filter(|(g, _)| *g == gpu).count()
        }
    }

    impl TelemetrySource for Fake {
        fn sample(&self, gpu: &Target, detail: Detail) -> Result<GpuTelemetry, String> {
            self.asked.lock().unwrap().push((gpu.index, detail));
            (self.answer)(gpu.index)
        }
        fn is_asleep(&self, gpu: &Target) -> bool {
            self.asleep_bus.is_some_and(|b| gpu.bus_id.as_deref() == Some(b))
        }
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
        let mut feed = TelemetryFeed::new(Fake::new(|_| Ok(util(0))), INTERVAL);
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
        let mut feed = TelemetryFeed::new(Fake::new(|_| Ok(util(0))), INTERVAL);
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
        let mut feed = TelemetryFeed::new(Fake::new(|gpu| Ok(util(gpu * 100))), Duration::from_millis(1));
        feed.set_wanted(true, &[], Detail::Full, &ctx);
        assert!(!feed.is_running(), "no GPU, no sampler");
        feed.set_wanted(true, &two(), Detail::Full, &ctx);
        assert!(feed.is_running());
        poll_until(&mut feed, |f| f.series.get(&1).is_some_and(|s| s.len() >= 3));
        let times: Vec<f64> = feed.series[&0].iter().map(|(t, _)| *t).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
        assert_eq!(feed.latest(1), Some(&util(100)));
        feed.set_wanted(false, &two(), Detail::Full, &ctx);
        assert!(!feed.is_running() && feed.note.is_none());
    }

    #[test]
    fn a_source_that_always_fails_stops_with_a_note_and_is_not_retried() {
        let ctx = egui::Context::default();
        let source = Fake::new(|_| Err("NVML could not be loaded: libnvidia-ml.so.1 not found".to_owned()));
        let mut feed = TelemetryFeed::new(Arc::clone(&source) as Arc<dyn TelemetrySource>, Duration::from_millis(1));
        feed.set_wanted(true, &two(), Detail::Full, &ctx);
        assert!(feed.is_waiting());
        poll_until(&mut feed, |f| f.note.is_some());
        assert!(!feed.is_running() && !feed.is_waiting());
        assert!(feed.note.as_deref().unwrap().contains("libnvidia-ml.so.1"), "{:?}", feed.note);
        thread::sleep(Duration::from_millis(20));
        let calls = || source.asked.lock().unwrap().len();
        assert_eq!(calls(), 2, "one round over both GPUs, then it stopped");
        feed.set_wanted(true, &two(), Detail::Full, &ctx);
        assert!(!feed.is_running(), "a stopped feed does not start again");
        assert_eq!(calls(), 2);
        assert!(feed.series.is_empty());
    }

    #[test]
    fn one_failing_gpu_does_not_stop_the_others() {
        let ctx = egui::Context::default();
        let source = Fake::new(|gpu| if gpu == 0 { Err("lost".to_owned()) } else { Ok(util(5)) });
        let mut feed = TelemetryFeed::new(source, Duration::from_millis(1));
        feed.set_wanted(true, &two(), Detail::Full, &ctx);
        poll_until(&mut feed, |f| f.series.get(&1).is_some_and(|s| s.len() >= 2));
        assert!(feed.is_running() && feed.note.is_none() && !feed.series.contains_key(&0));
    }

    /// A laptop's discrete GPU in runtime suspend is not asked (asking NVML wakes it); the other
    /// GPU is sampled, and the sleeping one is not an error that stops the feed.
    #[test]
    fn a_sleeping_gpu_is_not_woken_to_sample_it() {
        let ctx = egui::Context::default();
        let source =
            Arc::new(Fake { answer: |_| Ok(util(1)), asleep_bus: Some("00000000:01:00.0"), asked: Mutex::default() });
        let mut feed = TelemetryFeed::new(Arc::clone(&source) as Arc<dyn TelemetrySource>, Duration::from_millis(1));
        feed.set_wanted(true, &two(), Detail::Card, &ctx);
        poll_until(&mut feed, |f| f.series.get(&1).is_some_and(|s| s.len() >= 3) && f.is_asleep(0));
        assert_eq!(source.asked(0), 0, "the sleeping GPU was asked");
        assert!(feed.is_running() && feed.note.is_none());
        assert!(!feed.is_asleep(1));
    }

    /// A source that lists two processes per GPU, the most GPU memory first as NVML's lists come
    /// (`GpuProcesses`), and counts the lists.
    #[derive(Default)]
    struct Listing {
        lists: Mutex<usize>,
    }

    impl TelemetrySource for Listing {
        fn sample(&self, _: &Target, _: Detail) -> Result<GpuTelemetry, String> {
            Ok(util(1))
        }
        fn is_asleep(&self, _: &Target) -> bool {
            false
        }
        fn processes(&self, gpu: &Target, _: u64) -> Result<GpuProcesses, String> {
            *self.lists.lock().unwrap() += 1;
            let row = |pid, mib: u64| gpu_doctor_probes::host::processes::GpuProcess {
                pid,
                used_memory_bytes: Some(mib << 20),
                ..Default::default()
            };
            Ok(GpuProcesses { processes: vec![row(gpu.index + 20, 2), row(gpu.index + 10, 1)], ..Default::default() })
        }
    }

    /// Processes are listed only while wanted (the Telemetry page), each GPU's own list in the
    /// source's order, and dropped when no longer wanted, so a later visit shows no stale list.
    #[test]
    fn processes_are_listed_only_while_wanted() {
        let ctx = egui::Context::default();
        let source = Arc::new(Listing::default());
        let mut feed = TelemetryFeed::new(Arc::clone(&source) as Arc<dyn TelemetrySource>, Duration::from_millis(1));
        feed.processes_every = Duration::from_millis(5);
        feed.set_wanted(true, &two(), Detail::Card, &ctx);
        poll_until(&mut feed, |f| f.series.get(&1).is_some_and(|s| s.len() >= 20));
        assert_eq!(*source.lists.lock().unwrap(), 0, "listed without being asked to");

        feed.want_processes(true);
        feed.set_wanted(true, &two(), Detail::Full, &ctx);
        poll_until(&mut feed, |f| f.processes(0).is_some() && f.processes(1).is_some());
        let pids: Vec<u32> = feed.processes(1).unwrap().as_ref().unwrap().processes.iter().map(|p| p.pid).collect();
        assert_eq!(pids, [21, 11], "GPU 1's list, the most GPU memory first");

        feed.want_processes(false);
        feed.set_wanted(true, &two(), Detail::Full, &ctx);
        assert!(feed.processes(0).is_none(), "a list from the last visit is stale");
        let lists = *source.lists.lock().unwrap();
        poll_until(&mut feed, |f| f.series.get(&1).is_some_and(|s| s.len() >= 60));
        assert!(*source.lists.lock().unwrap() <= lists + 2, "still listing after the page left");

        // Back to the page after one that shows no live values (the sampler stops, nothing
        // restarts it meanwhile): the last visit's lists are gone too.
        feed.want_processes(true);
        feed.set_wanted(true, &two(), Detail::Full, &ctx);
        poll_until(&mut feed, |f| f.processes(0).is_some());
        feed.want_processes(false);
        feed.set_wanted(false, &two(), Detail::Full, &ctx);
        feed.want_processes(true);
        assert!(feed.processes(0).is_none(), "a list from the visit before the last is stale");
    }

    /// The Overview asks for cards, the Telemetry page for everything: switching restarts the
    /// sampler with the detail the page shows.
    #[test]
    fn the_sampler_asks_what_the_page_shows() {
        let ctx = egui::Context::default();
        let source = Fake::new(|_| Ok(util(1)));
        let mut feed = TelemetryFeed::new(Arc::clone(&source) as Arc<dyn TelemetrySource>, Duration::from_millis(1));
        feed.set_wanted(true, &two(), Detail::Card, &ctx);
        poll_until(&mut feed, |f| f.series.get(&1).is_some_and(|s| s.len() >= 2));
        feed.set_wanted(true, &two(), Detail::Full, &ctx);
        let last = || source.asked.lock().unwrap().last().map(|(_, d)| *d);
        poll_until(&mut feed, |_| last() == Some(Detail::Full));
        let seen = source.asked.lock().unwrap();
        assert_eq!(seen.first().map(|(_, d)| *d), Some(Detail::Card));
    }

    /// During a benchmark run the runner samples the GPU it measures, through the same source, and
    /// the window shows those samples instead of asking that GPU again: the driver is asked about it
    /// once per interval, not twice. The other GPU is still sampled here, and the benchmarked one
    /// again once the run lets it go.
    #[cfg(unix)]
    #[test]
    fn during_a_run_the_driver_is_asked_once_per_interval_not_twice() {
        use gpu_doctor_kernels::runner::{self, RunOptions, RunTelemetry, WorkerSpec};
        use gpu_doctor_model::bench::plan::{BenchPlan, TestKind};

        let interval = Duration::from_millis(20);
        let ctx = egui::Context::default();
        let source = Fake::new(|gpu| Ok(util(gpu)));
        let mut feed = TelemetryFeed::new(Arc::clone(&source) as Arc<dyn TelemetrySource>, interval);
        let (tx, rx) = mpsc::sync_channel(1024);
        let opts = RunOptions {
            timeout: Duration::from_secs(30),
            cancel: Arc::default(),
            telemetry: Some(RunTelemetry {
                source: Arc::clone(&source) as Arc<dyn TelemetrySource>,
                gpu: Target { index: 0, bus_id: two()[0].pci_bus_id.clone() },
                on_sample: Some(Box::new(move |p: &TelemetryPoint| tx.try_send(p.clone()).unwrap())),
            }),
            telemetry_interval: interval,
            stall_limit: None,
            numa: None,
            ecc: None,
        };
        // A worker that takes half a second and says nothing.
        let worker = WorkerSpec {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), "head -n 1 >/dev/null; sleep 0.5".into()],
            env: Vec::new(),
        };
        let started = Instant::now();
        let run = thread::Builder::new()
            .name("test-run".into())
            .spawn(move || {
                let plan = BenchPlan::preset(0, vec![TestKind::Gemm], true);
                runner::run(&plan, &worker, opts, &mut |_| {})
            })
            .unwrap();
        let mut points = Vec::new();
        while !run.is_finished() {
            // What the window does every frame while the run's GPU tests go on.
            points.extend(rx.try_iter());
            feed.follow_run(Some(RunSamples { gpu: 0, started, points: &points }));
            feed.set_wanted(true, &two(), Detail::Full, &ctx);
            feed.poll();
            thread::sleep(Duration::from_millis(2));
        }
        let took = started.elapsed();
        let record = run.join().unwrap();
        points.extend(rx.try_iter());
        feed.follow_run(Some(RunSamples { gpu: 0, started, points: &points }));

        assert!(record.telemetry.len() >= 5, "{} samples", record.telemetry.len());
        assert_eq!(source.asked(0), record.telemetry.len(), "GPU 0 was asked by the run only");
        assert!(source.asked(0) <= usize::try_from(took.as_millis() / 20).unwrap() + 1, "{took:?}");
        assert_eq!(feed.series[&0].len(), record.telemetry.len(), "the window shows the run's samples");
        assert_eq!(feed.latest(0), record.telemetry.last().map(|p| &p.sample));
        assert!(source.asked(1) >= 5, "the other GPU is still sampled");

        feed.follow_run(None);
        let before = source.asked(0);
        feed.set_wanted(true, &two(), Detail::Full, &ctx);
        poll_until(&mut feed, |_| source.asked(0) > before);
    }
}
