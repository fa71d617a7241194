//! Past runs: one JSON file per finished run in a folder (`<data dir>/runs`), named
//! `<UTC start time>-<gpuN|cpu>.json`. The functions take the folder, so tests use a temporary one;
//! only worker threads call them. A file that cannot be read is listed with its error.

use std::path::{Path, PathBuf};

use gpu_doctor_model::bench::run::BenchRun;

use crate::plots::{PlotSpec, run_plots};
use gpu_doctor_model::time::utc;

/// One saved run that read back: the run, its plots, and how it is named on screen.
#[derive(Debug, Clone)]
pub struct Saved {
    /// The run.
    pub run: BenchRun,
    /// Its plots, built once.
    pub plots: Vec<PlotSpec>,
    /// When it started, e.g. `2025-03-05 14:02 UTC`.
    pub date: String,
    /// What was measured, e.g. `NVIDIA GeForce RTX 4090 (…), quick preset, 62 s`.
    pub summary: String,
}

impl Saved {
    /// A run with its plots and labels.
    pub fn new(run: BenchRun) -> Self {
        let plots = run_plots(&run);
        let date = date_label(run.started_at_unix_secs);
        let summary = crate::render::bench::headline(&run);
        Self { run, plots, date, summary }
    }
}

/// One file in the runs folder.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Where it is.
    pub path: PathBuf,
    /// The run, or why it could not be read.
    pub loaded: Result<Saved, String>,
    /// Whether it is drawn over the plots.
    pub overlay: bool,
}

impl Entry {
    /// The file name, for people.
    pub fn file_name(&self) -> String {
        self.path.file_name().map_or_else(|| self.path.display().to_string(), |n| n.to_string_lossy().into_owned())
    }
}

/// `2025-03-05T14-02-12Z-gpu0.json`: the run's UTC start (sortable, no colons), and `cpu` when
/// no test needed the GPU.
pub fn file_name(run: &BenchRun) -> String {
    let (y, mo, d, h, mi, s) = utc(run.started_at_unix_secs);
    let what = if run.plan.gpu_tests().is_empty() { "cpu".to_owned() } else { format!("gpu{}", run.plan.gpu) };
    format!("{y:04}-{mo:02}-{d:02}T{h:02}-{mi:02}-{s:02}Z-{what}.json")
}

/// Writes `run` into `dir` (created if needed) without overwriting another run; returns its entry.
pub fn save(dir: &Path, run: BenchRun) -> Result<Entry, String> {
    let json = crate::ops::bench::to_json(&run).map_err(|e| format!("{e:#}"))?;
    let name = file_name(&run);
    let stem = name.trim_end_matches(".json");
    let mut path = dir.join(&name);
    let mut n = 2;
    while path.exists() && n < 100 {
        path = dir.join(format!("{stem}-{n}.json"));
        n += 1;
    }
    crate::gui::storage::write_atomic(&path, json.as_bytes())?;
    Ok(Entry { path, loaded: Ok(Saved::new(run)), overlay: false })
}

/// Every `*.json` in `dir`, newest first (by name); a missing folder has none. A file that does not
/// read as a run is listed with its error.
pub fn load_all(dir: &Path) -> Result<Vec<Entry>, String> {
    let read = match std::fs::read_dir(dir) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("could not list {}: {e}", dir.display())),
    };
    let mut paths: Vec<PathBuf> = read
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file())
        .collect();
    paths.sort();
    paths.reverse();
    Ok(paths
        .into_iter()
        .map(|path| {
            let loaded = crate::ops::bench::load(&path).map(Saved::new).map_err(|e| format!("{e:#}"));
            Entry { path, loaded, overlay: false }
        })
        .collect())
}

/// Deletes one saved run.
pub fn delete(path: &Path) -> Result<(), String> {
    std::fs::remove_file(path).map_err(|e| format!("could not delete {}: {e}", path.display()))
}

/// Unix seconds as `2025-03-05 14:02 UTC`.
pub fn date_label(unix_secs: u64) -> String {
    let (y, mo, d, h, mi, _) = utc(unix_secs);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02} UTC")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use gpu_doctor_model::bench::plan::{BenchPlan, TestKind};
    use gpu_doctor_model::bench::record::RunRecord;

    use super::*;

    fn run(tests: Vec<TestKind>, started: u64) -> BenchRun {
        let record = RunRecord { started_at_unix_secs: started, ..RunRecord::default() };
        gpu_doctor_judge::bench::run::assemble(&BenchPlan::preset(1, tests, true), record, |_| Default::default())
    }

    #[test]
    fn dates_are_utc() {
        assert_eq!(date_label(0), "1970-01-01 00:00 UTC");
        assert_eq!(date_label(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(date_label(1_741_183_332), "2025-03-05 14:02 UTC");
        assert_eq!(file_name(&run(vec![TestKind::Cpu], 1_741_183_332)), "2025-03-05T14-02-12Z-cpu.json");
        assert_eq!(file_name(&run(vec![TestKind::H2d, TestKind::Cpu], 0)), "1970-01-01T00-00-00Z-gpu1.json");
    }

    #[test]
    fn saved_runs_read_back_newest_first_without_overwriting() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join("runs");
        assert!(load_all(&runs).unwrap().is_empty(), "no folder yet: no runs");
        let older = run(vec![TestKind::Cpu], 1_000);
        let newer = run(vec![TestKind::H2d], 2_000);
        let a = save(&runs, older.clone()).unwrap();
        let b = save(&runs, newer.clone()).unwrap();
        let again = save(&runs, older.clone()).unwrap();
        assert_ne!(a.path, again.path, "a second run in the same second gets its own file");
        assert!(again.file_name().ends_with("-cpu-2.json"), "{}", again.file_name());

        let listed = load_all(&runs).unwrap();
        let names: Vec<String> = listed.iter().map(Entry::file_name).collect();
        assert_eq!(names[0], b.file_name(), "newest first: {names:?}");
        assert_eq!(listed.len(), 3);
        assert_eq!(listed[0].loaded.as_ref().unwrap().run, newer);
        assert_eq!(listed.iter().find(|e| e.path == a.path).unwrap().loaded.as_ref().unwrap().run, older);
        assert!(listed.iter().all(|e| !e.overlay));

        delete(&a.path).unwrap();
        assert_eq!(load_all(&runs).unwrap().len(), 2);
        assert!(delete(&a.path).unwrap_err().contains("could not delete"));
    }

    #[test]
    fn a_corrupt_file_is_listed_with_its_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("2020-01-01T00-00-00Z-gpu0.json"), "{ not json").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
        let good = save(dir.path(), run(vec![TestKind::Cpu], 1_741_183_332)).unwrap();
        let listed = load_all(dir.path()).unwrap();
        assert_eq!(listed.len(), 2, "only JSON files are listed");
        assert_eq!(listed[0].path, good.path);
        let err = listed[1].loaded.as_ref().unwrap_err();
        assert!(err.contains("2020-01-01T00-00-00Z-gpu0.json") && err.contains("not a run"), "{err}");
    }

    #[test]
    fn an_unreadable_folder_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("runs");
        std::fs::write(&file, "a file, not a folder").unwrap();
        assert!(load_all(&file).unwrap_err().contains("could not list"));
    }
}
