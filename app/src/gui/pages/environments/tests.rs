//! The page's jobs over a recorded machine: settings loaded, saved and sent, the deep probe on demand.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use gpu_doctor_probes::host::{CmdOutput, CommandRecord, Fixture, Host, ReplayHost};
use gpu_doctor_probes::probe::{Options, collect};

use super::*;

/// A recorded machine (a venv with torch on an RTX 4090) whose venv answers the deep probe.
fn machine() -> (Arc<dyn Host>, Snapshot) {
    let dir = crate::fixture_dir("consumer-gpu-torch-venv");
    let mut f = Fixture::load(&dir).unwrap();
    let stdout =
        r#"{"torch": {"version": "2.3.0+cu121", "cuda_available": true, "arch_list": ["sm_90", "compute_80"]}}"#;
    f.commands.push(CommandRecord {
        argv: vec!["/home/user/proj/.venv/bin/python3".into(), "-I".into(), "-".into()],
        output: Some(CmdOutput { status: Some(0), stdout: stdout.into(), stderr: String::new() }),
        error: None,
    });
    let host: Arc<dyn Host> = Arc::new(ReplayHost::new(f));
    let snap = collect(host.as_ref(), &Options::default());
    (host, snap)
}

struct World {
    host: Arc<dyn Host>,
    snap: Snapshot,
    options: Options,
    pending: BTreeSet<&'static str>,
    live: bool,
}

impl World {
    fn new(live: bool) -> Self {
        let (host, snap) = machine();
        let options = Options { extra_pythons: vec!["/cli/python3".into()], ..Options::default() };
        Self { host, snap, options, pending: BTreeSet::new(), live }
    }

    fn shown(&self) -> Shown<'_> {
        Shown {
            report: None,
            snapshot: &self.snap,
            live: self.live,
            other: false,
            pending: &self.pending,
            host: &self.host,
            options: &self.options,
        }
    }

    /// Runs the page's logic until its jobs are done; returns the actions it asked for.
    fn settle(&self, page: &mut EnvPage, ctx: &egui::Context) -> Vec<Action> {
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut actions = Vec::new();
        loop {
            page.logic(ctx, &self.shown(), &mut actions);
            if !page.busy() {
                return actions;
            }
            assert!(Instant::now() < deadline, "the page's jobs never finished: {page:?}");
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

fn settings_file(dir: &std::path::Path, text: &str) {
    std::fs::write(dir.join(settings::FILE_NAME), text).unwrap();
}

#[test]
fn remembered_interpreters_load_and_are_probed_after_the_command_line_ones() {
    let (ctx, world, dir) = (egui::Context::default(), World::new(true), tempfile::tempdir().unwrap());
    settings_file(dir.path(), r#"{"extra_pythons": ["/opt/py/bin/python3", "/cli/python3"]}"#);
    let mut page = EnvPage::default();
    page.start_with_dir(&ctx, Ok(dir.path().to_owned()));
    assert!(page.busy(), "loading counts as busy");
    let actions = world.settle(&mut page, &ctx);
    let expected = vec![PathBuf::from("/cli/python3"), PathBuf::from("/opt/py/bin/python3")];
    assert_eq!(actions, vec![Action::SetPythons(expected)]);
    assert_eq!(page.remembered().len(), 2);
    assert!(world.settle(&mut page, &ctx).is_empty(), "asked once");
}

#[test]
fn an_empty_list_asks_for_no_second_probe_and_a_recorded_machine_none_at_all() {
    let ctx = egui::Context::default();
    let dir = tempfile::tempdir().unwrap();
    let mut page = EnvPage::default();
    page.start_with_dir(&ctx, Ok(dir.path().to_owned()));
    assert!(World::new(true).settle(&mut page, &ctx).is_empty());
    assert!(page.settings_note.is_none());

    settings_file(dir.path(), r#"{"extra_pythons": ["/opt/py/bin/python3"]}"#);
    let mut replayed = EnvPage::default();
    replayed.start_with_dir(&ctx, Ok(dir.path().to_owned()));
    assert!(World::new(false).settle(&mut replayed, &ctx).is_empty());
    assert_eq!(replayed.remembered(), [PathBuf::from("/opt/py/bin/python3")]);
}

#[test]
fn a_corrupt_settings_file_is_reported_and_ignored() {
    let (ctx, world, dir) = (egui::Context::default(), World::new(true), tempfile::tempdir().unwrap());
    settings_file(dir.path(), "{\"extra_pythons\": [");
    let mut page = EnvPage::default();
    page.start_with_dir(&ctx, Ok(dir.path().to_owned()));
    assert!(world.settle(&mut page, &ctx).is_empty());
    assert!(page.settings_note.as_deref().is_some_and(|n| n.contains("ignored")), "{:?}", page.settings_note);
    assert!(page.remembered().is_empty());
    // Adding still works, and replaces the bad file.
    page.add("/opt/py/bin/python3".into());
    let actions = world.settle(&mut page, &ctx);
    assert_eq!(actions.len(), 1);
    assert_eq!(settings::load(dir.path()).unwrap().extra_pythons, [PathBuf::from("/opt/py/bin/python3")]);
}

#[test]
fn adding_and_removing_save_and_ask_for_a_probe() {
    let (ctx, world, dir) = (egui::Context::default(), World::new(true), tempfile::tempdir().unwrap());
    let mut page = EnvPage::default();
    page.start_with_dir(&ctx, Ok(dir.path().to_owned()));
    world.settle(&mut page, &ctx);
    page.typing = true;
    page.typed = "/opt/a/bin/python3".into();
    page.add("/opt/a/bin/python3".into());
    page.add("/opt/a/bin/python3".into());
    assert!(!page.typing && page.typed.is_empty(), "the field closes once used");
    let actions = world.settle(&mut page, &ctx);
    let with_a = vec![PathBuf::from("/cli/python3"), PathBuf::from("/opt/a/bin/python3")];
    assert_eq!(actions, vec![Action::SetPythons(with_a)]);
    assert_eq!(settings::load(dir.path()).unwrap().extra_pythons.len(), 1);
    page.remove(&PathBuf::from("/opt/a/bin/python3"));
    assert_eq!(world.settle(&mut page, &ctx), vec![Action::SetPythons(vec![PathBuf::from("/cli/python3")])]);
    assert!(settings::load(dir.path()).unwrap().extra_pythons.is_empty());
}

#[test]
fn the_deep_probe_of_one_environment_runs_on_demand_and_feeds_the_colours() {
    let (ctx, world) = (egui::Context::default(), World::new(true));
    let mut page = EnvPage::default();
    page.start_with_dir(&ctx, Err("no home in this test".into()));
    let venv = "venv:/home/user/proj/.venv";
    page.deep_asked.push(venv.to_owned());
    assert!(page.busy());
    world.settle(&mut page, &ctx);
    let facts = page.deep_result(venv).and_then(Probed::value).unwrap();
    assert_eq!(facts.torch.as_ref().and_then(|t| t.cuda_available), Some(true));
    // Its arch list (sm_90 + compute_80) now decides the colour for the 8.9 GPU: PTX only.
    let env = envs(&world.snap).iter().find(|e| e.name == venv).unwrap();
    let merged = PythonEnv { deep: page.deep_result(venv).cloned(), ..env.clone() };
    let kb = Kb::get().unwrap();
    let gpu = &gpu_views(&world.snap, kb)[0];
    assert_eq!(cells::gpu_cell(kb, env, &env.frameworks[0], gpu).tone, Tone::Good, "the wheel table: sm_86");
    assert_eq!(cells::gpu_cell(kb, &merged, &merged.frameworks[0], gpu).tone, Tone::Warn);
    // The system interpreter's answer was not recorded: a failure, not a panic.
    page.deep_asked.push("system:/usr/bin/python3".into());
    world.settle(&mut page, &ctx);
    assert!(matches!(page.deep_result("system:/usr/bin/python3"), Some(Probed::Failed { .. })));
}

#[test]
fn an_added_interpreter_that_was_not_used_shows_why_from_the_snapshot() {
    let mut world = World::new(true);
    // The recorded machine has no /cli/python3 (the probe says so in the snapshot), but has the venv.
    let venv = "/home/user/proj/.venv/bin/python3";
    world.options.extra_pythons.push(venv.into());
    world.snap = collect(world.host.as_ref(), &world.options);
    assert_eq!(world.snap.unused_pythons.len(), 1, "{:?}", world.snap.unused_pythons);
    let status = added_status(&world.shown(), std::path::Path::new(venv));
    assert_eq!(status.0, Tone::Good, "{status:?}");
    let status = added_status(&world.shown(), std::path::Path::new("/cli/python3"));
    assert_eq!(status, (Tone::Warn, "not used: /cli/python3 does not exist".to_owned()));
    // Only the typed fact counts: a snapshot without it (say, from before) does not guess from the trace.
    world.snap.unused_pythons.clear();
    let status = added_status(&world.shown(), std::path::Path::new("/cli/python3"));
    assert_eq!(status, (Tone::Muted, "not probed yet".to_owned()));
}
