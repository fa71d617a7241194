//! Live GPU telemetry from NVML: one small sample per call, cheap enough for 10 samples a second,
//! so a benchmark can plot memory, clocks, temperature and power over time.
//!
//! This is the one place that asks the driver for telemetry. Whoever samples (the benchmark runner,
//! the window) does it through a [`TelemetrySource`] ([`NvmlSource`] here, a fake in tests) and one
//! [`Sampler`] loop, which leaves a GPU in runtime suspend asleep.
//!
//! NVML is safe to ask in-process: without a driver `Nvml::init` returns an error, which is kept.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use gpu_doctor_model::telemetry::{GpuTelemetry, throttle_reason_names};
use nvml_wrapper::enum_wrappers::device::{Clock, PcieUtilCounter, TemperatureSensor};

use super::HostError;
use super::nvml_handle::{device_by_bus, nvml};
use super::processes::{self, GpuProcesses, ProcReader};

/// How much to ask: a card shows memory, clocks, temperature, power, utilization and throttle
/// reasons; the full sample adds the two PCIe counters, which take 20 ms each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// Without the PCIe counters (the Overview's cards).
    Card,
    /// Everything (the Telemetry page, benchmarks).
    Full,
}

/// True when the kernel has put the PCI device at `bus_id` into runtime suspend (a laptop's
/// discrete GPU with nothing on it). Asking NVML about it would wake it, so a sampler skips it, as
/// `bottom` does. Reads `SYSFS/bus/pci/devices/BUS/power/runtime_status` (`sysfs` is `/sys` on a
/// live machine); false where there is no such file (other systems, or no runtime power
/// management) or the bus id is not one.
pub fn runtime_suspended(sysfs: &Path, bus_id: &str) -> bool {
    let Ok(bus) = gpu_doctor_model::PciBusId::parse(bus_id) else { return false };
    std::fs::read_to_string(sysfs.join("bus/pci/devices").join(bus.to_string()).join("power/runtime_status"))
        .is_ok_and(|status| status.trim() == "suspended")
}

/// A GPU to sample: its NVML index and, where known, its PCI bus id (which names the same GPU to
/// NVML whatever the indices, and says where its power state is in sysfs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// NVML index.
    pub index: u32,
    /// PCI bus id, e.g. `00000000:01:00.0`.
    pub bus_id: Option<String>,
}

/// Where telemetry comes from: NVML on this machine ([`NvmlSource`]), a fake in tests. The
/// benchmark runner and the window both sample through it.
pub trait TelemetrySource: Send + Sync {
    /// Asks about `gpu` now, only what `detail` needs, or says why not.
    fn sample(&self, gpu: &Target, detail: Detail) -> Result<GpuTelemetry, String>;
    /// True when `gpu` sleeps (runtime suspend): asking would wake it, so the sampler does not.
    fn is_asleep(&self, gpu: &Target) -> bool;
    /// Asks which processes use `gpu` now, with their utilisation from samples newer than
    /// `since_us` (the previous answer's `last_seen_us`; 0: all NVML keeps), or says why not. A
    /// source that cannot (a test's fake that only samples) says so.
    fn processes(&self, gpu: &Target, since_us: u64) -> Result<GpuProcesses, String> {
        let _ = (gpu, since_us);
        Err("this telemetry source does not list processes".to_owned())
    }
}

/// NVML on this machine, by PCI bus id where known (else by index), with the power state read
/// from sysfs and each GPU process's name, owner and host use from `/proc`.
#[derive(Debug, Clone)]
pub struct NvmlSource {
    /// Where sysfs is mounted: `/sys`, or a folder that fakes it in tests.
    pub sysfs: PathBuf,
    /// Reads `/proc` and `/etc/passwd` (or folders that fake them) for the processes.
    pub proc: Arc<ProcReader>,
}

impl Default for NvmlSource {
    fn default() -> Self {
        Self { sysfs: PathBuf::from("/sys"), proc: Arc::default() }
    }
}

impl TelemetrySource for NvmlSource {
    fn sample(&self, gpu: &Target, detail: Detail) -> Result<GpuTelemetry, String> {
        Ok(read(&device_of(gpu).map_err(|e| e.to_string())?, detail))
    }

    fn is_asleep(&self, gpu: &Target) -> bool {
        gpu.bus_id.as_deref().is_some_and(|bus| runtime_suspended(&self.sysfs, bus))
    }

    fn processes(&self, gpu: &Target, since_us: u64) -> Result<GpuProcesses, String> {
        let d = device_of(gpu).map_err(|e| e.to_string())?;
        let mut list = processes::from_nvml(&d, since_us)?;
        self.proc.describe(&mut list.processes, Instant::now());
        Ok(list)
    }
}

/// The GPUs NVML lists, by index with their PCI bus ids (what `gpu-doctor processes` asks about).
pub fn nvml_targets() -> Result<Vec<Target>, String> {
    let nvml = nvml().map_err(|e| e.to_string())?;
    let count = nvml.device_count().map_err(|e| format!("NVML could not count the GPUs: {e}"))?;
    Ok((0..count)
        .map(|index| Target {
            index,
            bus_id: nvml.device_by_index(index).and_then(|d| d.pci_info()).ok().map(|p| p.bus_id),
        })
        .collect())
}

/// What the sampler hands its sink.
#[derive(Debug, Clone, PartialEq)]
pub enum Reading {
    /// GPU `gpu` (NVML index) answered.
    Sample {
        /// NVML index.
        gpu: u32,
        /// What it said.
        sample: GpuTelemetry,
    },
    /// GPU `gpu` sleeps and was not asked.
    Asleep {
        /// NVML index.
        gpu: u32,
    },
    /// GPU `gpu`'s processes (only from a sampler started with `start_with_processes`), or why
    /// they could not be listed; a failure does not stop the sampler.
    Processes {
        /// NVML index.
        gpu: u32,
        /// What NVML and `/proc` said.
        list: Result<GpuProcesses, String>,
    },
    /// No GPU answered in one round (the first error says why); the sampler has ended. Always the
    /// last reading.
    Stopped(String),
}

/// The one sampling loop, on a named thread: every `interval` it asks each target that is not
/// asleep and hands every reading to its sink, until stopped, until the sink returns false, or
/// until a round in which no GPU answered (one failing GPU does not stop the others). A sleeping
/// GPU counts as answered. Stopped when dropped.
#[derive(Debug)]
pub struct Sampler {
    stop: Arc<AtomicBool>,
    handle: Option<thread::JoinHandle<()>>,
}

impl Sampler {
    /// Starts sampling `targets` from `source` on a thread called `name`.
    pub fn start(
        name: &str,
        source: Arc<dyn TelemetrySource>,
        targets: Vec<Target>,
        detail: Detail,
        interval: Duration,
        sink: impl FnMut(Reading) -> bool + Send + 'static,
    ) -> std::io::Result<Self> {
        Self::spawn(name, source, targets, (detail, interval), None, sink)
    }

    /// Like `start`, and also asks each target that is not asleep for its processes every
    /// `every` (a slower rate than the samples: the lists and `/proc` cost more), starting with
    /// the first round, handing them over as `Reading::Processes`.
    pub fn start_with_processes(
        name: &str,
        source: Arc<dyn TelemetrySource>,
        targets: Vec<Target>,
        detail: Detail,
        (interval, every): (Duration, Duration),
        sink: impl FnMut(Reading) -> bool + Send + 'static,
    ) -> std::io::Result<Self> {
        Self::spawn(name, source, targets, (detail, interval), Some(every), sink)
    }

    fn spawn(
        name: &str,
        source: Arc<dyn TelemetrySource>,
        targets: Vec<Target>,
        (detail, interval): (Detail, Duration),
        processes_every: Option<Duration>,
        mut sink: impl FnMut(Reading) -> bool + Send + 'static,
    ) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = thread::Builder::new().name(name.to_owned()).spawn(move || {
            let mut next = Instant::now();
            let mut processes = processes_every.map(ProcessRounds::new);
            while !flag.load(Ordering::Relaxed) {
                match round(source.as_ref(), &targets, detail, &mut sink) {
                    Round::Answered => {}
                    Round::SinkGone => return,
                    Round::NoAnswer(why) => {
                        sink(Reading::Stopped(why));
                        return;
                    }
                }
                if let Some(p) = &mut processes
                    && !p.ask_when_due(source.as_ref(), &targets, &mut sink)
                {
                    return;
                }
                next += interval;
                let now = Instant::now();
                if next > now {
                    thread::sleep(next - now);
                } else {
                    next = now; // a slow round: do not try to catch up in a burst
                }
            }
        })?;
        Ok(Self { stop, handle: Some(handle) })
    }

    /// Stops sampling and waits for the thread (at most one interval); false when it panicked.
    pub fn finish(mut self) -> bool {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.take().is_none_or(|h| h.join().is_ok())
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// When the processes are next due, and per GPU the newest utilisation sample seen.
struct ProcessRounds {
    every: Duration,
    next: Instant,
    last_seen_us: BTreeMap<u32, u64>,
}

impl ProcessRounds {
    fn new(every: Duration) -> Self {
        Self { every, next: Instant::now(), last_seen_us: BTreeMap::new() }
    }

    /// Asks every target that is awake for its processes when they are due; false when the sink
    /// is gone.
    fn ask_when_due(
        &mut self,
        source: &dyn TelemetrySource,
        targets: &[Target],
        sink: &mut impl FnMut(Reading) -> bool,
    ) -> bool {
        let now = Instant::now();
        if now < self.next {
            return true;
        }
        self.next = (self.next + self.every).max(now);
        for target in targets.iter().filter(|t| !source.is_asleep(t)) {
            let since = self.last_seen_us.get(&target.index).copied().unwrap_or(0);
            let list = source.processes(target, since);
            if let Ok(list) = &list {
                self.last_seen_us.insert(target.index, list.last_seen_us);
            }
            if !sink(Reading::Processes { gpu: target.index, list }) {
                return false;
            }
        }
        true
    }
}

enum Round {
    Answered,
    SinkGone,
    NoAnswer(String),
}

/// Asks every target once.
fn round(
    source: &dyn TelemetrySource,
    targets: &[Target],
    detail: Detail,
    sink: &mut impl FnMut(Reading) -> bool,
) -> Round {
    let mut first_error = None;
    let mut answered = false;
    for target in targets {
        let gpu = target.index;
        let reading = if source.is_asleep(target) {
            Reading::Asleep { gpu }
        } else {
            match source.sample(target, detail) {
                Ok(sample) => Reading::Sample { gpu, sample },
                Err(e) => {
                    first_error.get_or_insert(e);
                    continue;
                }
            }
        };
        answered = true;
        if !sink(reading) {
            return Round::SinkGone;
        }
    }
    if answered {
        Round::Answered
    } else {
        Round::NoAnswer(first_error.unwrap_or_else(|| "no GPU answered".to_owned()))
    }
}

/// The GPU `gpu` names: by PCI bus id where known (the one a benchmark worker opened by that bus
/// id, whatever the indices under `CUDA_VISIBLE_DEVICES`), else by index (NVML order).
fn device_of(gpu: &Target) -> Result<nvml_wrapper::Device<'static>, HostError> {
    match &gpu.bus_id {
        Some(bus) => device_by_bus(bus),
        None => device_by_index(gpu.index),
    }
}

fn device_by_index(index: u32) -> Result<nvml_wrapper::Device<'static>, HostError> {
    nvml()?
        .device_by_index(index)
        .map_err(|e| HostError::Unavailable { message: format!("NVML has no GPU {index}: {e}") })
}

/// Asks NVML about a GPU now, only what `detail` needs. A full sample takes about 40 ms: the two
/// PCIe counters each average over 20 ms.
fn read(d: &nvml_wrapper::Device<'_>, detail: Detail) -> GpuTelemetry {
    let utilization = d.utilization_rates().ok();
    GpuTelemetry {
        memory_used_bytes: d.memory_info().ok().map(|m| m.used),
        clock_sm_mhz: d.clock_info(Clock::SM).ok(),
        clock_mem_mhz: d.clock_info(Clock::Memory).ok(),
        temperature_c: d.temperature(TemperatureSensor::Gpu).ok(),
        power_draw_mw: d.power_usage().ok(),
        utilization_gpu_pct: utilization.as_ref().map(|u| u.gpu),
        utilization_mem_pct: utilization.as_ref().map(|u| u.memory),
        pcie_tx_kbps: (detail == Detail::Full).then(|| d.pcie_throughput(PcieUtilCounter::Send).ok()).flatten(),
        pcie_rx_kbps: (detail == Detail::Full).then(|| d.pcie_throughput(PcieUtilCounter::Receive).ok()).flatten(),
        // The link while a copy runs is what `certify` judges (a link may train down while idle).
        pcie_link_gen: d.current_pcie_link_gen().ok(),
        pcie_link_width: d.current_pcie_link_width().ok(),
        throttle_reasons: d.current_throttle_reasons().ok().map(|r| throttle_reason_names(r.bits())),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::sync::mpsc;

    use super::*;

    /// Answers for GPU 1 and fails for GPU 0, counting what it was asked; sleeps where the fake
    /// sysfs says so, as `NvmlSource` does.
    struct Fake {
        sysfs: PathBuf,
        asked: Mutex<Vec<u32>>,
    }

    impl TelemetrySource for Fake {
        fn sample(&self, gpu: &Target, _: Detail) -> Result<GpuTelemetry, String> {
            self.asked.lock().unwrap().push(gpu.index);
            if gpu.index == 0 { Err("lost".to_owned()) } else { Ok(GpuTelemetry::default()) }
        }
        fn is_asleep(&self, gpu: &Target) -> bool {
            NvmlSource { sysfs: self.sysfs.clone(), ..NvmlSource::default() }.is_asleep(gpu)
        }
    }

    fn target(index: u32) -> Target {
        Target { index, bus_id: Some(format!("00000000:0{}:00.0", index + 1)) }
    }

    /// A fake sysfs in which the GPU at `0000:01:00.0` has runtime status `status`.
    fn sysfs(status: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let power = dir.path().join("bus/pci/devices/0000:01:00.0/power");
        std::fs::create_dir_all(&power).unwrap();
        std::fs::write(power.join("runtime_status"), status).unwrap();
        dir
    }

    #[test]
    fn the_power_state_is_read_from_sysfs() {
        let suspended = sysfs("suspended\n");
        assert!(runtime_suspended(suspended.path(), "00000000:01:00.0"), "NVML's form of the bus id");
        assert!(runtime_suspended(suspended.path(), "0000:01:00.0"));
        assert!(!runtime_suspended(suspended.path(), "0000:02:00.0"), "no such device");
        assert!(!runtime_suspended(suspended.path(), "not a bus id"));
        assert!(!runtime_suspended(sysfs("active\n").path(), "0000:01:00.0"));
        let source = NvmlSource { sysfs: suspended.path().to_owned(), ..NvmlSource::default() };
        assert!(source.is_asleep(&target(0)) && !source.is_asleep(&Target { index: 0, bus_id: None }));
    }

    /// Runs the sampler over GPUs 0 and 1 until `enough` readings arrived or it stopped.
    fn readings(source: Arc<Fake>, enough: usize) -> Vec<Reading> {
        let (tx, rx) = mpsc::sync_channel(enough);
        let sampler = Sampler::start(
            "test-sampler",
            source,
            vec![target(0), target(1)],
            Detail::Card,
            Duration::ZERO,
            move |r| tx.try_send(r).is_ok(),
        )
        .unwrap();
        let got: Vec<Reading> = rx.iter().take(enough).collect();
        assert!(sampler.finish());
        got
    }

    #[test]
    fn a_suspended_gpu_is_not_asked() {
        let dir = sysfs("suspended");
        let source = Arc::new(Fake { sysfs: dir.path().to_owned(), asked: Mutex::default() });
        let got = readings(Arc::clone(&source), 6);
        assert_eq!(got.iter().filter(|r| **r == Reading::Asleep { gpu: 0 }).count(), 3, "{got:?}");
        assert_eq!(got.iter().filter(|r| matches!(r, Reading::Sample { gpu: 1, .. })).count(), 3, "{got:?}");
        assert!(!source.asked.lock().unwrap().contains(&0), "the sleeping GPU was woken");
    }

    #[test]
    fn one_failing_gpu_does_not_stop_the_others_and_none_answering_stops_the_sampler() {
        let dir = sysfs("active");
        let source = Arc::new(Fake { sysfs: dir.path().to_owned(), asked: Mutex::default() });
        let got = readings(Arc::clone(&source), 3);
        assert!(got.iter().all(|r| matches!(r, Reading::Sample { gpu: 1, .. })), "{got:?}");

        let (tx, rx) = mpsc::sync_channel(8);
        let lost = Sampler::start("test-sampler", source, vec![target(0)], Detail::Full, Duration::ZERO, move |r| {
            tx.try_send(r).is_ok()
        })
        .unwrap();
        assert_eq!(rx.iter().collect::<Vec<_>>(), [Reading::Stopped("lost".to_owned())], "one round, then it ended");
        assert!(lost.finish());
    }

    /// Counts samples and process lists.
    #[derive(Default)]
    struct Counting {
        samples: Mutex<usize>,
        since: Mutex<Vec<u64>>,
    }

    impl TelemetrySource for Counting {
        fn sample(&self, _: &Target, _: Detail) -> Result<GpuTelemetry, String> {
            *self.samples.lock().unwrap() += 1;
            Ok(GpuTelemetry::default())
        }
        fn is_asleep(&self, _: &Target) -> bool {
            false
        }
        fn processes(&self, _: &Target, since_us: u64) -> Result<GpuProcesses, String> {
            let mut since = self.since.lock().unwrap();
            since.push(since_us);
            Ok(GpuProcesses { last_seen_us: since_us + 1000, ..GpuProcesses::default() })
        }
    }

    /// The processes are asked once per `every`, not with every sample (scaled down: samples every
    /// 5 ms, processes every 50 ms, the window's 0.5 s and 1 s are the same loop), each time for the
    /// utilisation samples after the last answer's.
    #[test]
    fn processes_are_asked_at_their_own_slower_rate() {
        let source = Arc::new(Counting::default());
        let (tx, rx) = mpsc::sync_channel(1024);
        let sampler = Sampler::start_with_processes(
            "test-sampler",
            Arc::clone(&source) as Arc<dyn TelemetrySource>,
            vec![target(0)],
            Detail::Full,
            (Duration::from_millis(5), Duration::from_millis(50)),
            move |r| tx.try_send(r).is_ok(),
        )
        .unwrap();
        let started = Instant::now();
        thread::sleep(Duration::from_millis(400));
        assert!(sampler.finish());
        let elapsed_ms = started.elapsed().as_millis();
        let readings: Vec<Reading> = rx.try_iter().collect();
        let samples = *source.samples.lock().unwrap();
        let since = source.since.lock().unwrap().clone();
        // The bounds hold however loaded the machine is: at most one list per 50 ms of wall time
        // (plus the first, asked at once), and never more lists than sampling rounds.
        let most = usize::try_from(elapsed_ms / 50 + 1).unwrap();
        assert!((1..=most).contains(&since.len()), "{} lists in {elapsed_ms} ms", since.len());
        assert!(since.len() <= samples, "{} process lists over {samples} samples", since.len());
        assert_eq!(since.first(), Some(&0), "the first asks for every sample NVML keeps");
        assert!(since.windows(2).all(|w| w[1] == w[0] + 1000), "each asks after the last answer: {since:?}");
        let lists = readings.iter().filter(|r| matches!(r, Reading::Processes { gpu: 0, list: Ok(_) })).count();
        assert_eq!(lists, since.len());
        // A sampler started without processes never asks for them.
        let plain = Arc::new(Counting::default());
        let sampler = Sampler::start(
            "test-sampler",
            Arc::clone(&plain) as Arc<dyn TelemetrySource>,
            vec![target(0)],
            Detail::Full,
            Duration::from_millis(5),
            |_| true,
        )
        .unwrap();
        thread::sleep(Duration::from_millis(60));
        assert!(sampler.finish());
        assert!(*plain.samples.lock().unwrap() > 0 && plain.since.lock().unwrap().is_empty());
    }

    #[test]
    fn throttle_bits_name_the_reasons() {
        assert!(throttle_reason_names(0).is_empty());
        assert_eq!(throttle_reason_names(0x4 | 0x40), ["sw_power_cap", "hw_thermal_slowdown"]);
        assert_eq!(throttle_reason_names(0x1_0000_0000), Vec::<String>::new());
    }
}
