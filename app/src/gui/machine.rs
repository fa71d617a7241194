//! The machine the window shows: this one (probed in the background, its parts streaming in as the
//! probe groups finish) or another one, read from a report file or pasted text.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::thread;
use std::time::{Duration, Instant};

use gpu_doctor_model::{Report, Snapshot};
use gpu_doctor_probes::host::Host;
use gpu_doctor_probes::probe::{Options, Part, collect_streaming};

use super::task::Task;

/// What the probe thread sends.
enum ProbeMsg {
    Part(Box<Part>),
    Done(Box<Result<Report, String>>),
}

/// Probing this machine (or the replayed recording), streamed.
#[derive(Debug)]
pub struct MachineProbe {
    /// The last complete, diagnosed report; kept on screen while a new probe runs.
    pub report: Option<Report>,
    /// The snapshot being filled in by the run under way (`Snapshot::pending` at its start).
    pub partial: Snapshot,
    /// Probe groups (`Part::NAMES`) the run under way has not answered yet; empty when idle.
    pub pending: BTreeSet<&'static str>,
    /// Why the last run failed.
    pub error: Option<String>,
    /// How long the last complete run took.
    pub last_duration: Option<Duration>,
    /// How many runs have finished.
    pub runs_finished: u32,
    started: Option<Instant>,
    rx: Option<Receiver<ProbeMsg>>,
}

impl Default for MachineProbe {
    fn default() -> Self {
        Self {
            report: None,
            partial: Snapshot::pending(),
            pending: BTreeSet::new(),
            error: None,
            last_duration: None,
            runs_finished: 0,
            started: None,
            rx: None,
        }
    }
}

impl MachineProbe {
    /// Starts a probe run on a named thread unless one is running; `false` when one was.
    pub fn start(&mut self, host: &Arc<dyn Host>, opts: &Options, ctx: &egui::Context) -> bool {
        if self.is_running() {
            return false;
        }
        let (tx, rx) = mpsc::sync_channel::<ProbeMsg>(Part::NAMES.len() + 1);
        let (host, opts, ctx) = (Arc::clone(host), opts.clone(), ctx.clone());
        let spawned = thread::Builder::new().name("gpu-doctor-probe".into()).spawn(move || {
            let snap = collect_streaming(host.as_ref(), &opts, &|part| {
                let _ = tx.send(ProbeMsg::Part(Box::new(part)));
                ctx.request_repaint();
            });
            let report = crate::ops::judged(snap).map_err(|e| format!("{e:#}"));
            let _ = tx.send(ProbeMsg::Done(Box::new(report)));
            ctx.request_repaint();
        });
        match spawned {
            Ok(_) => {
                self.partial = Snapshot::pending();
                self.pending = Part::NAMES.into_iter().collect();
                self.error = None;
                self.started = Some(Instant::now());
                self.rx = Some(rx);
            }
            Err(e) => self.error = Some(format!("could not start the probe thread: {e}")),
        }
        true
    }

    /// Whether a probe run is under way.
    pub fn is_running(&self) -> bool {
        self.rx.is_some()
    }

    /// Takes in what the probe thread sent; true when anything changed.
    pub fn poll(&mut self) -> bool {
        let mut changed = false;
        while let Some(rx) = &self.rx {
            match rx.try_recv() {
                Ok(ProbeMsg::Part(part)) => {
                    self.pending.remove(part.name());
                    (*part).apply(&mut self.partial);
                }
                Ok(ProbeMsg::Done(result)) => {
                    self.finish(*result);
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    self.finish(Err("the probe thread stopped without an answer (a bug: please report it)".into()));
                }
            }
            changed = true;
        }
        changed
    }

    fn finish(&mut self, result: Result<Report, String>) {
        self.rx = None;
        self.pending.clear();
        self.last_duration = self.started.take().map(|s| s.elapsed());
        self.runs_finished += 1;
        if let Some(d) = self.last_duration {
            tracing::info!(target: "gpu_doctor::timing", "probes and diagnosis done in {} ms", d.as_millis());
        }
        match result {
            Ok(report) => self.report = Some(report),
            Err(e) => self.error = Some(e),
        }
    }

    /// The snapshot to draw: the finished report's, or while the first run goes on, the partial one.
    pub fn snapshot(&self) -> &Snapshot {
        self.report.as_ref().map_or(&self.partial, |r| &r.snapshot)
    }
}

/// Where another machine's facts came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OtherSource {
    /// A file the user opened (a gpu-doctor JSON report or any text the paste reader knows).
    File(PathBuf),
    /// Text pasted into the window.
    Pasted,
}

impl OtherSource {
    /// How the banner names it.
    pub fn label(&self) -> String {
        match self {
            OtherSource::File(p) => {
                p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned())
            }
            OtherSource::Pasted => "pasted text".to_owned(),
        }
    }
}

/// Another machine, diagnosed from its text.
#[derive(Debug)]
pub struct OtherMachine {
    /// Where it came from.
    pub source: OtherSource,
    /// What was read and concluded.
    pub report: Report,
}

/// Reads another machine from a file (off the UI thread).
pub fn open_file(task: &mut Task<OtherMachine>, ctx: &egui::Context, path: PathBuf) -> bool {
    task.spawn("open-report", ctx, move || {
        // At most the paste limit (and one byte more, so the reader notes the cut).
        let (bytes, _) = std::fs::File::open(&path)
            .and_then(crate::input::read_capped)
            .map_err(|e| format!("could not read {}: {e}", path.display()))?;
        let report = read_text(&crate::input::decode_text(&bytes)).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(OtherMachine { source: OtherSource::File(path), report })
    })
}

/// Diagnoses pasted text (off the UI thread).
pub fn read_paste(task: &mut Task<OtherMachine>, ctx: &egui::Context, text: String) -> bool {
    task.spawn("read-paste", ctx, move || {
        let report = read_text(&text)?;
        Ok(OtherMachine { source: OtherSource::Pasted, report })
    })
}

/// Text from another machine → a diagnosed report. A gpu-doctor JSON report is taken as it is
/// (its findings re-derived with this version's rules); anything else goes through the paste reader.
pub fn read_text(text: &str) -> Result<Report, String> {
    let mut report = crate::ops::diagnose(text).map_err(|e| format!("{e:#}"))?;
    // Nothing recognised: the page shows the reader's note and what to paste next in place of an
    // empty report.
    if let Some(next) = gpu_doctor_probes::parse::paste::next_paste(&report.snapshot, &report.findings)
        && matches!(&report.snapshot.origin, gpu_doctor_model::Origin::Pasted { formats } if formats.is_empty())
    {
        let note = report.snapshot.notes.first().cloned().unwrap_or_default();
        return Err(format!("{note}. Paste the output of `{}` (it shows {}).", next.command, next.shows));
    }
    // A saved report may carry a benchmark run; keep it, its findings made by this version's rules.
    if let Ok(saved) = serde_json::from_str::<Report>(text) {
        report.bench = saved.bench.map(crate::ops::bench::rejudged);
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use gpu_doctor_probes::host::ReplayHost;

    fn fixture(name: &str) -> Arc<dyn Host> {
        Arc::new(ReplayHost::load(&crate::fixture_dir(name)).unwrap())
    }

    #[test]
    fn parts_stream_in_then_the_report_lands() {
        let ctx = egui::Context::default();
        let mut probe = MachineProbe::default();
        assert!(probe.start(&fixture("consumer-gpu-torch-venv"), &Options::default(), &ctx));
        assert!(probe.is_running());
        assert_eq!(probe.pending.len(), Part::NAMES.len());
        assert!(!probe.start(&fixture("no-driver"), &Options::default(), &ctx), "one run at a time");
        let deadline = Instant::now() + Duration::from_secs(20);
        while probe.is_running() {
            probe.poll();
            assert!(Instant::now() < deadline);
            thread::sleep(Duration::from_millis(5));
        }
        let report = probe.report.as_ref().unwrap();
        assert!(probe.pending.is_empty() && probe.error.is_none());
        assert!(report.snapshot.gpus.value().is_some_and(|g| !g.is_empty()));
        assert_eq!(probe.partial.gpus, report.snapshot.gpus, "the streamed parts match the report");
    }

    /// A report with a benchmark run, written by gpu-doctor 0.1.0 before the run became typed data
    /// (`report --bench FILE --format json`), opens with its run.
    #[test]
    fn a_saved_report_keeps_its_benchmark_run() {
        let text = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/report-with-bench-0.1.0.json"));
        let report = read_text(text).unwrap();
        let run = report.bench.as_ref().expect("the run is kept");
        assert_eq!(run.tests.len(), 1);
        assert_eq!(run.tests[0].status, gpu_doctor_model::bench::run::TestStatus::Passed);
        assert!(!run.tests[0].judged.is_empty());
        let html = crate::render::document::document(&report, None, crate::render::document::Format::Html, false);
        assert!(html.unwrap().contains("<h2 id=\"bench\">Benchmarks</h2>"), "the report page shows the run");
    }

    #[test]
    fn prose_is_answered_with_what_to_paste_next() {
        let err = read_text("hello, my gpu is slow, any ideas?").unwrap_err();
        assert!(err.starts_with("nothing gpu-doctor recognises"), "{err}");
        assert!(err.contains("python -m torch.utils.collect_env"), "{err}");
    }
}
