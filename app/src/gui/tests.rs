//! GUI flows driven through egui_kittest: the real `App` (its `eframe::App` impl) on a replayed
//! machine, clicked by accessible label, with assertions on its state.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use gpu_doctor_model::Severity;
use gpu_doctor_model::telemetry::GpuTelemetry;
use gpu_doctor_probes::host::ReplayHost;
use gpu_doctor_probes::host::processes::{GpuProcess, GpuProcesses};
use gpu_doctor_probes::host::telemetry::{Detail, NvmlSource, Target, TelemetrySource};
use gpu_doctor_probes::probe::Options;

use super::{App, Launch, Page};

/// The window on a recorded machine, sized like a laptop screen, with its settings and past runs
/// in a temporary folder instead of the user's.
pub(crate) fn harness(name: &str) -> (Harness<'static, App>, tempfile::TempDir) {
    launch(name, None)
}

/// The window on a recorded machine, as if it were this one (live: the pages sample telemetry
/// from `telemetry`) when `telemetry` is given.
pub(crate) fn launch(
    name: &str,
    telemetry: Option<Arc<dyn TelemetrySource>>,
) -> (Harness<'static, App>, tempfile::TempDir) {
    let dir = crate::fixture_dir(name);
    let host = Arc::new(ReplayHost::load(&dir).unwrap());
    // Returned beside the harness, so it lives as long as the test and is removed after it.
    let home = tempfile::tempdir().unwrap();
    let storage = home.path().to_owned();
    let live = telemetry.is_some();
    let launch = Launch {
        host,
        replay: (!live).then_some(dir),
        options: Options::default(),
        screenshot: None,
        started: Instant::now(),
        storage: Some(storage),
        telemetry: telemetry.unwrap_or_else(|| Arc::new(NvmlSource::default())),
    };
    (Harness::builder().with_size([1280.0, 800.0]).build_eframe(|cc| App::new(&cc.egui_ctx, launch)), home)
}

/// Steps the harness until no job runs (the workers answer on their own threads).
pub(crate) fn settle(h: &mut Harness<'_, App>) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        h.step();
        if !h.state().busy() {
            break;
        }
        assert!(Instant::now() < deadline, "the window stayed busy for a minute");
        std::thread::sleep(Duration::from_millis(5));
    }
    h.run_steps(3);
}

#[test]
fn the_overview_shows_the_verdict_and_the_gpu_card_once_probed() {
    let (mut h, _home) = harness("consumer-gpu-torch-venv");
    // The first frame comes before any probe has finished.
    h.step();
    assert!(h.state().machine.is_running() || h.state().machine.report.is_some());
    settle(&mut h);
    let report = h.state().machine.report.as_ref().expect("a report");
    assert!(report.findings.iter().all(|f| f.severity != Severity::Error));
    h.get_by_label_contains("Ready: PyTorch 2.3.0+cu121");
    h.get_by_label("NVIDIA GeForce RTX 4090");
    h.get_by_label("8.9 (Ada Lovelace)");
}

#[test]
fn run_the_checks_and_expand_a_finding() {
    let (mut h, _home) = harness("torch-cu130-on-r550");
    settle(&mut h);
    h.get_by_label("Checks").click();
    h.run_steps(2);
    assert_eq!(h.state().page, Page::Checks);
    let finding = h
        .state()
        .machine
        .report
        .as_ref()
        .unwrap()
        .findings
        .iter()
        .find(|f| f.id == "driver.too_old_for_runtime")
        .cloned()
        .expect("the driver finding");
    assert_eq!(finding.severity, Severity::Error);
    // Errors open by themselves, so their fix is in view; notes start folded.
    assert!(h.state().pages.checks.expanded.contains(&finding.id));
    h.get_by_label("Evidence");
    h.get_by_label("Fix");
    let note =
        h.state().machine.report.as_ref().unwrap().findings.iter().find(|f| f.severity == Severity::Info).cloned();
    let note = note.expect("the fixture has a note");
    assert!(!h.state().pages.checks.expanded.contains(&note.id));
    h.get_by_label_contains(&note.summary).click();
    h.run_steps(2);
    assert!(h.state().pages.checks.expanded.contains(&note.id), "a click opens a finding");
    h.get_by_label_contains(&finding.summary).click();
    h.run_steps(2);
    assert!(!h.state().pages.checks.expanded.contains(&finding.id), "a second click folds it");
    h.get_by_label_contains(&finding.summary).click();
    h.run_steps(2);

    // Copy puts the fix on the clipboard.
    h.get_by_label("Copy").click();
    h.run_steps(1);
    assert_eq!(h.state().pages.checks.copied.as_deref(), Some(finding.id.as_str()));

    // Run the checks again: a new probe starts, and the last findings stay on screen meanwhile.
    h.get_by_label("Run the checks again").click();
    h.step();
    h.step();
    assert!(h.state().machine.report.is_some(), "the old report stays while a new probe runs");
    settle(&mut h);
    assert_eq!(h.state().machine.runs_finished, 2, "the checks ran again");
    assert!(h.state().machine.report.as_ref().unwrap().findings.iter().any(|f| f.id == finding.id));
}

#[test]
fn f5_probes_again() {
    let (mut h, _home) = harness("no-driver");
    settle(&mut h);
    assert_eq!(h.state().machine.runs_finished, 1);
    h.key_press(egui::Key::F5);
    settle(&mut h);
    assert_eq!(h.state().machine.runs_finished, 2, "F5 probed again");
}

#[test]
fn export_a_report_to_a_file_and_read_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("exported.json");
    let (mut h, _home) = harness("torch-cu130-on-r550");
    settle(&mut h);
    h.get_by_label("Report").click();
    h.run_steps(2);
    h.get_by_label("JSON").click();
    h.run_steps(1);
    h.state_mut().pages.report.fallback_path = path.display().to_string();
    h.get_by_label("Save to this path").click();
    settle(&mut h);
    assert_eq!(h.state().pages.report.export.value(), Some(&path));
    let text = std::fs::read_to_string(&path).unwrap();
    let back: gpu_doctor_model::Report = serde_json::from_str(&text).unwrap();
    assert_eq!(&back, h.state().machine.report.as_ref().unwrap());
    h.get_by_label_contains("Saved ");
}

#[test]
fn ctrl_s_exports_to_the_fallback_path_without_a_dialog() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.md");
    let (mut h, _home) = harness("egpu-thunderbolt");
    settle(&mut h);
    h.state_mut().pages.report.fallback_path = path.display().to_string();
    h.state_mut().pages.report.set_dialogs(false);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::S);
    settle(&mut h);
    assert_eq!(h.state().page, Page::Report);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("## gpu-doctor report"), "{text}");
    assert!(text.contains("RTX 3060"));
}

#[test]
fn pasted_text_is_shown_as_another_machine_and_back() {
    let (mut h, _home) = harness("consumer-gpu-torch-venv");
    settle(&mut h);
    let sample = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/support_thread.md"));
    h.state_mut().act(super::Action::Paste(sample.to_owned()));
    settle(&mut h);
    assert!(h.state().shown().other);
    assert_eq!(h.state().page, Page::Checks);
    h.get_by_label("NOT THIS MACHINE");
    h.get_by_label("Back to this machine").click();
    h.run_steps(2);
    assert!(!h.state().shown().other);
    assert!(h.query_by_label("NOT THIS MACHINE").is_none());
}

#[test]
fn every_page_draws_on_a_machine_without_a_driver() {
    let (mut h, _home) = harness("no-driver");
    settle(&mut h);
    // What each page says of a machine without a driver (a page that drew nothing would fail).
    let says = [
        (Page::Overview, "No NVIDIA GPU to use"),
        (Page::Checks, "Checks: "),
        (Page::Environments, "Python environments"),
        (Page::Setup, "Set up an environment"),
        (Page::Certify, "Start certify"),
        (Page::Benchmarks, "Run benchmarks"),
        (Page::Telemetry, "off while a recorded machine is on screen"),
        (Page::Report, "## gpu-doctor report"),
        (Page::Fleet, "Open a folder of gpu-doctor JSON reports"),
    ];
    assert_eq!(says.map(|(p, _)| p), Page::ALL);
    for (page, text) in says {
        h.get_by_label(page.title()).click();
        h.run_steps(2);
        assert_eq!(h.state().page, page);
        assert!(h.query_all_by_label_contains(text).next().is_some(), "{page:?} does not say {text:?}");
    }
}

#[test]
fn the_environments_page_lists_the_companion_packages() {
    let (mut h, _home) = harness("consumer-gpu-torch-venv");
    settle(&mut h);
    h.get_by_label(Page::Environments.title()).click();
    h.run_steps(2);
    h.get_by_label("Companions: numpy 1.26.4");
}

#[test]
fn export_redacted_html() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.html");
    let (mut h, _home) = harness("consumer-gpu-torch-venv");
    settle(&mut h);
    assert!(
        serde_json::to_string(h.state().machine.report.as_ref().unwrap()).unwrap().contains("/home/user"),
        "the fixture has a home path to redact"
    );
    h.get_by_label("Report").click();
    h.run_steps(2);
    h.get_by_label("HTML").click();
    h.get_by_label("Redact personal data").click();
    h.run_steps(2);
    assert!(h.state().pages.report.redact);
    h.state_mut().pages.report.fallback_path = path.display().to_string();
    h.get_by_label("Save to this path").click();
    settle(&mut h);
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") || html.starts_with("<!doctype html>"), "{}", &html[..80]);
    assert!(html.contains("RTX 4090"));
    assert!(!html.contains("/home/user"), "the home path is redacted");
}

#[test]
fn start_and_cancel_a_cpu_baseline_benchmark() {
    use super::bench::RunState;
    let (mut h, _home) = harness("consumer-gpu-torch-venv");
    settle(&mut h);
    h.get_by_label("Benchmarks").click();
    h.run_steps(2);
    assert_eq!(h.state().pages.bench.run_state(), RunState::Idle);
    h.get_by_label("Run benchmarks").click();
    h.run_steps(2);
    assert_eq!(h.state().pages.bench.run_state(), RunState::Running);
    assert!(h.state().busy());
    h.get_by_label("Cancel").click();
    let deadline = Instant::now() + Duration::from_secs(120);
    while h.state().pages.bench.run_state() != RunState::Cancelled {
        assert!(Instant::now() < deadline, "the run never ended: {:?}", h.state().pages.bench.run_state());
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    h.run_steps(3);
    h.get_by_label("CANCELLED");
    h.get_by_label("Run benchmarks");
    assert!(h.state().pages.bench.latest_run().is_none(), "a cancelled run is not kept as a result");
}

/// A telemetry source that counts its questions and answers only once opened.
#[derive(Default)]
pub(crate) struct Gated {
    open: std::sync::atomic::AtomicBool,
    asked: std::sync::Mutex<Vec<Detail>>,
}

impl Gated {
    pub(crate) fn opened() -> Arc<Self> {
        let gated = Arc::new(Self::default());
        gated.open.store(true, std::sync::atomic::Ordering::Relaxed);
        gated
    }

    fn asked(&self) -> Vec<Detail> {
        self.asked.lock().unwrap().clone()
    }
}

impl TelemetrySource for Gated {
    fn sample(&self, _: &Target, detail: Detail) -> Result<GpuTelemetry, String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.open.load(std::sync::atomic::Ordering::Relaxed) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        self.asked.lock().unwrap().push(detail);
        Ok(GpuTelemetry { temperature_c: Some(41), ..GpuTelemetry::default() })
    }
    fn is_asleep(&self, _: &Target) -> bool {
        false
    }
}

/// Live, the Overview samples its GPU card (without the PCIe counters), a page that shows no
/// telemetry samples nothing, and the Telemetry page samples everything.
#[test]
fn only_a_page_that_shows_telemetry_samples() {
    let source = Gated::opened();
    let (mut h, _home) = launch("consumer-gpu-torch-venv", Some(Arc::clone(&source) as Arc<dyn TelemetrySource>));
    settle(&mut h);
    assert_eq!(h.state().page, Page::Overview);
    assert!(h.state().telemetry.latest(0).is_some(), "settled before the first sample");
    assert!(!source.asked().is_empty() && source.asked().iter().all(|d| *d == Detail::Card), "{:?}", source.asked());

    h.get_by_label("Checks").click();
    h.run_steps(2);
    assert!(!h.state().telemetry.is_running());
    std::thread::sleep(Duration::from_millis(50));
    let asked = source.asked().len();
    std::thread::sleep(super::telemetry::INTERVAL * 2);
    h.run_steps(2);
    assert_eq!(source.asked().len(), asked, "the Checks page shows no telemetry, yet the GPU was asked");

    h.get_by_label("Telemetry").click();
    let deadline = Instant::now() + Duration::from_secs(10);
    while source.asked().last() != Some(&Detail::Full) {
        assert!(Instant::now() < deadline, "the Telemetry page never sampled");
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `--screenshot --page telemetry` waits for the first sample instead of drawing "Waiting for the
/// first samples…".
#[test]
fn the_window_is_busy_until_the_first_telemetry_sample() {
    let source = Arc::new(Gated::default());
    let (mut h, _home) = launch("consumer-gpu-torch-venv", Some(Arc::clone(&source) as Arc<dyn TelemetrySource>));
    h.state_mut().page = Page::Telemetry;
    let deadline = Instant::now() + Duration::from_secs(60);
    while h.state().machine.is_running() || !h.state().telemetry.is_running() {
        assert!(Instant::now() < deadline, "the probe never ended or the sampler never started");
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    h.run_steps(3);
    assert!(h.state().busy(), "busy while the first sample is still being taken");
    source.open.store(true, std::sync::atomic::Ordering::Relaxed);
    settle(&mut h);
    assert!(h.state().telemetry.latest(0).is_some());
    // The first question may have been the Overview's (card detail), asked before the page changed;
    // the Telemetry page then asks for every detail.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !source.asked().contains(&Detail::Full) {
        assert!(Instant::now() < deadline, "the Telemetry page never asked for every detail: {:?}", source.asked());
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A GPU with three processes, listed as NVML's lists come (`GpuProcesses`: the most GPU memory
/// first, unknown last): a big one, a small one, and one whose pid `/proc` does not have.
#[derive(Default)]
pub(crate) struct WithProcesses {
    lists: std::sync::Mutex<usize>,
}

impl TelemetrySource for WithProcesses {
    fn sample(&self, _: &Target, _: Detail) -> Result<GpuTelemetry, String> {
        Ok(GpuTelemetry {
            memory_used_bytes: Some(3_400 << 20),
            utilization_gpu_pct: Some(87),
            utilization_mem_pct: Some(31),
            clock_sm_mhz: Some(2520),
            clock_mem_mhz: Some(10501),
            temperature_c: Some(64),
            power_draw_mw: Some(312_000),
            ..GpuTelemetry::default()
        })
    }
    fn is_asleep(&self, _: &Target) -> bool {
        false
    }
    fn processes(&self, _: &Target, _: u64) -> Result<GpuProcesses, String> {
        use gpu_doctor_probes::host::processes::ProcessKind;
        *self.lists.lock().unwrap() += 1;
        let row = |pid, mib: u64, kind, command: &str| GpuProcess {
            pid,
            kind: Some(kind),
            used_memory_bytes: Some(mib << 20),
            sm_pct: Some(12),
            mem_pct: Some(3),
            user: Some("ada".to_owned()),
            name: Some(command.split(' ').next().unwrap().to_owned()),
            command: Some(command.to_owned()),
            ..GpuProcess::default()
        };
        let gone = GpuProcess {
            pid: 8123,
            kind: Some(ProcessKind::Compute),
            unreadable: Some("not in /proc: it ended since NVML listed it".to_owned()),
            ..GpuProcess::default()
        };
        Ok(GpuProcesses {
            processes: vec![
                row(4242, 3_100, ProcessKind::Compute, "python3 train.py --batch 64"),
                row(2211, 180, ProcessKind::Graphics, "/usr/lib/xorg/Xorg vt2"),
                gone,
            ],
            notes: Vec::new(),
            last_seen_us: 0,
        })
    }
}

/// The Telemetry page lists each GPU's processes, the most GPU memory first, with why a row's
/// host fields are blank; the Overview does not ask for them.
#[test]
fn the_telemetry_page_lists_the_processes_by_gpu_memory() {
    let source = Arc::new(WithProcesses::default());
    let (mut h, _home) = launch("consumer-gpu-torch-venv", Some(Arc::clone(&source) as Arc<dyn TelemetrySource>));
    settle(&mut h);
    assert_eq!(*source.lists.lock().unwrap(), 0, "the Overview asked for the processes");
    h.get_by_label("Telemetry").click();
    let deadline = Instant::now() + Duration::from_secs(10);
    while h.state().telemetry.processes(0).is_none() {
        assert!(Instant::now() < deadline, "the Telemetry page never listed the processes");
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    h.run_steps(3);
    let top = |label: &str| h.get_by_label(label).rect().top();
    let (big, small, gone) = (top("4242"), top("2211"), top("8123"));
    assert!(big < small && small < gone, "rows out of order: {big} {small} {gone}");
    // Numbers line up on the right edge of their heading, words on the left.
    let (pid, user) = (h.get_by_label("PID").rect(), h.get_by_label("USER").rect());
    assert!((h.get_by_label("4242").rect().right() - pid.right()).abs() < 0.5, "PID not right-aligned");
    assert!(
        (h.get_all_by_label("ada").next().unwrap().rect().left() - user.left()).abs() < 0.5,
        "USER not left-aligned"
    );
    h.get_by_label("python3 train.py --batch 64");
    h.get_by_label("3.03 GiB (13 %)");
    assert_eq!(h.get_all_by_label("C").count(), 2, "the two compute processes");
    h.get_by_label("G");
    h.get_by_label("(not in /proc: it ended since NVML listed it)");
}

/// Not a check but a look: opens the real window (needs a display: run it under
/// `xvfb-run -a -s '-screen 0 1400x900x24'`) on the Telemetry page, live with `WithProcesses` as
/// its source, and saves it to `GPU_DOCTOR_SHOT` (default `/tmp/gpu-doctor-telemetry.png`).
#[test]
#[ignore = "opens a window: run under xvfb-run to look at the page"]
fn screenshot_of_the_telemetry_page_with_processes() {
    use winit::platform::x11::EventLoopBuilderExtX11;
    let path = std::env::var_os("GPU_DOCTOR_SHOT")
        .map_or_else(|| PathBuf::from("/tmp/gpu-doctor-telemetry.png"), PathBuf::from);
    let home = tempfile::tempdir().unwrap();
    let launch = Launch {
        host: Arc::new(ReplayHost::load(&crate::fixture_dir("consumer-gpu-torch-venv")).unwrap()),
        replay: None,
        options: Options::default(),
        screenshot: Some(super::ScreenshotRequest::new(path.clone(), Page::Telemetry)),
        started: Instant::now(),
        storage: Some(home.path().to_owned()),
        telemetry: Arc::new(WithProcesses::default()),
    };
    // The test runs on a thread of its own; winit opens its event loop off the main thread only when told.
    let any_thread: eframe::EventLoopBuilderHook = Box::new(|b| {
        b.with_any_thread(true);
    });
    super::run_with(launch, Some(any_thread)).unwrap();
    assert!(std::fs::metadata(&path).unwrap().len() > 10_000, "{}", path.display());
}

/// Every non-ASCII character in the knowledge base and in the code's strings can be drawn with the
/// fonts the window installs (kittest fails on a missing glyph instead of drawing a box).
#[test]
fn every_character_the_program_prints_has_a_glyph() {
    fn walk(dir: &Path, out: &mut std::collections::BTreeSet<char>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs" || e == "toml") {
                out.extend(std::fs::read_to_string(&path).unwrap().chars().filter(|c| !c.is_ascii()));
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut chars = std::collections::BTreeSet::new();
    for dir in ["assets/compat", "probes/src", "kernels/src", "app/src"] {
        walk(&root.join(dir), &mut chars);
    }
    assert!(chars.contains(&'→') && chars.contains(&'…'), "the scan found the usual suspects");
    let text: String = chars.iter().collect();
    for family in [egui::FontFamily::Proportional, egui::FontFamily::Monospace] {
        let text = text.clone();
        let mut h = Harness::builder().with_context_setup(super::theme::install_fonts).build_ui(move |ui| {
            ui.label(egui::RichText::new(text.as_str()).family(family.clone()));
        });
        h.run_steps(2);
    }
}
