//! The Benchmarks page's jobs: plans, CPU runs saved, listed, cancelled.

#![allow(clippy::unwrap_used)]
use super::*;

#[test]
fn a_plan_leaves_out_gpu_tests_that_cannot_run() {
    let page = BenchPage::default();
    let plan = page.plan(false).unwrap();
    assert_eq!(plan.tests, [TestKind::Cpu]);
    assert!(plan.quick);
    let all = page.plan(true).unwrap();
    assert_eq!(all.tests, TestKind::default_set());
    let mut none = BenchPage::default();
    none.choice.tests = [TestKind::H2d].into_iter().collect();
    assert!(none.plan(false).is_none(), "nothing left to run");
}

/// The telemetry source a run would sample (a CPU run samples none).
fn nvml() -> Arc<dyn TelemetrySource> {
    Arc::new(gpu_doctor_probes::host::telemetry::NvmlSource::default())
}

/// Steps the page like frames would until `done` says so.
fn step_until(page: &mut BenchPage, ctx: &egui::Context, done: impl Fn(&BenchPage) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(300);
    while !done(page) {
        assert!(Instant::now() < deadline, "stuck in {:?}", page.run_state());
        page.step(ctx, &nvml());
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn cpu_run(page: &mut BenchPage) {
    let plan = BenchPlan::preset(0, vec![TestKind::Cpu], true);
    page.requests.push(Request::Run(Box::new(plan), Box::new(None)));
}

#[test]
fn a_finished_cpu_run_is_saved_listed_and_reported() {
    let ctx = egui::Context::default();
    let dir = tempfile::tempdir().unwrap();
    let mut page = BenchPage { runs_dir: Some(dir.path().join("runs")), ..BenchPage::default() };
    assert_eq!(page.run_state(), RunState::Idle);
    cpu_run(&mut page);
    page.step(&ctx, &nvml());
    assert_eq!(page.run_state(), RunState::Running);
    assert!(page.busy());
    step_until(&mut page, &ctx, |p| !p.busy());
    assert_eq!(page.run_state(), RunState::Finished, "{:?}", page.error);
    assert_eq!(page.history.len(), 1, "saved and listed");
    let saved = page.history[0].loaded.as_ref().unwrap();
    assert!(page.history[0].file_name().ends_with("-cpu.json"));
    assert_eq!(page.latest_run(), Some(&saved.run));
    let (progress, _) = page.last_progress.as_ref().unwrap();
    assert_eq!(progress.tests[0].state.fraction(), 1.0);

    // Read back from the folder, as on the next start.
    let mut next = BenchPage::default();
    next.set_runs_dir(&ctx, Some(dir.path().join("runs")));
    step_until(&mut next, &ctx, |p| !p.busy());
    let (read_back, ran) = (next.latest_run().unwrap(), page.latest_run().unwrap());
    assert!(same_run(read_back, ran), "the report gets the newest saved run");
    let path = next.history[0].path.clone();
    next.requests.push(Request::Delete(path.clone()));
    step_until(&mut next, &ctx, |p| !p.busy());
    assert!(next.history.is_empty() && !path.exists() && next.io_error.is_none());
}

#[test]
fn a_listing_of_a_folder_no_longer_in_use_is_dropped() {
    let ctx = egui::Context::default();
    let (old, new) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let plan = BenchPlan::preset(0, vec![TestKind::Cpu], true);
    let run = gpu_doctor_judge::bench::run::assemble(&plan, Default::default(), |_| Default::default());
    history::save(old.path(), run).unwrap();
    let mut page = BenchPage::default();
    page.set_runs_dir(&ctx, Some(old.path().to_owned()));
    page.set_runs_dir(&ctx, Some(new.path().to_owned()));
    step_until(&mut page, &ctx, |p| !p.busy());
    assert!(page.history.is_empty(), "the old folder's run is not listed");
    std::fs::write(new.path().join("bad.json"), "[]").unwrap();
    page.set_runs_dir(&ctx, Some(new.path().to_owned()));
    step_until(&mut page, &ctx, |p| !p.busy());
    assert_eq!(page.history.len(), 1);
    assert!(page.history[0].loaded.is_err());
}

#[test]
fn a_cancelled_run_shows_as_cancelled_and_is_not_saved() {
    let ctx = egui::Context::default();
    let dir = tempfile::tempdir().unwrap();
    let mut page = BenchPage { runs_dir: Some(dir.path().join("runs")), ..BenchPage::default() };
    cpu_run(&mut page);
    page.step(&ctx, &nvml());
    page.requests.push(Request::Cancel);
    page.step(&ctx, &nvml());
    assert!(matches!(page.run_state(), RunState::Cancelling | RunState::Cancelled));
    step_until(&mut page, &ctx, |p| !p.busy());
    assert_eq!(page.run_state(), RunState::Cancelled);
    assert!(page.error.is_none(), "a cancel is not an error");
    assert!(page.last.is_some(), "what ran is still shown");
    assert!(page.history.is_empty() && !dir.path().join("runs").exists(), "not saved");
    assert_eq!(page.latest_run(), None);
}

/// The shown run's GPU-to-GPU result is drawn as the heat map under its results, and a run without
/// one draws none.
#[test]
fn a_shown_run_with_a_p2p_result_draws_its_heat_map() {
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;

    let results = |run: BenchRun| {
        let page = BenchPage { last: Some(Saved::new(run)), state: RunState::Finished, ..BenchPage::default() };
        let mut h = Harness::builder()
            .with_size([1000.0, 900.0])
            .with_context_setup(crate::gui::theme::install_fonts)
            .build_ui_state(move |ui, view: &mut P2pView| page.results_ui(ui, view), P2pView::default());
        h.run_steps(2);
        h
    };
    let h = results(crate::render::bench::tests::p2p_run());
    h.get_by_label("GPU-to-GPU copies");
    h.get_by_label("390");
    let mut cpu = crate::render::bench::tests::p2p_run();
    cpu.tests.clear();
    assert!(results(cpu).query_by_label("GPU-to-GPU copies").is_none());
}
