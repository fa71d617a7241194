//! The real-world paste corpus (`tests/corpus/`, see its README): every case is read and judged the
//! way `gpu-doctor diagnose --from FILE` does (`parse::paste::read_pasted`, then `diagnose`), and
//! scored per category: cases, named right (every expected id among the findings, or among the known
//! messages a finding says it explains) and recall; over
//! `healthy`, the false errors (an error-level finding). The test prints the table and fails when a
//! figure falls below the one recorded in `tests/corpus/ratchet.toml`, or when a case file is
//! malformed. It says when a recorded figure can be raised; raising it means editing that file.
//!
//! `scripts/corpus-score` prints the same table (`cargo test -p gpu-doctor-tests --test corpus --
//! --nocapture`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use gpu_doctor_judge::diagnose::{diagnose, observed_rules, rules};
use gpu_doctor_kb::Kb;
use gpu_doctor_model::{Category, Finding, Report, Severity, Snapshot};
use gpu_doctor_probes::parse::paste::{READERS, read_pasted_without};

/// The eleven finding categories a case can be filed under, besides `healthy`.
const CATEGORIES: [&str; 11] = [
    "driver_too_old_for_runtime",
    "arch_not_in_build",
    "cpu_only_build",
    "cudnn_missing_or_mismatch",
    "toolkit_vs_framework_mismatch_harmless",
    "multiple_toolkits_conflict",
    "env_var_misconfig",
    "no_driver_or_gpu_not_visible",
    "wsl_specific",
    "pcie_link_degraded",
    "other",
];
const HEALTHY: &str = "healthy";
const PLATFORMS: [&str; 5] = ["linux", "windows", "wsl", "container", "macos"];
const REQUIRED: [&str; 5] = ["source", "established", "expected", "platform", "year"];
const OPTIONAL: [&str; 2] = ["note", "fix"];

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

/// One case file.
#[derive(Debug)]
struct Case {
    /// `category/slug.txt`.
    name: String,
    category: String,
    /// The thread it was taken from (`source:`).
    source: String,
    expected: Vec<String>,
    /// What a right fix names (`fix:`): alternatives, each terms that must all appear in a finding's
    /// fix; `None` when the thread established no fix.
    fix: Option<Vec<Vec<String>>>,
    text: String,
}

fn category_name(c: Category) -> String {
    serde_json::to_value(c).unwrap().as_str().unwrap().to_owned()
}

/// Every finding id the project has, with its category.
fn known_ids(kb: &Kb) -> BTreeMap<String, String> {
    let mut ids: BTreeMap<String, String> = rules().map(|r| (r.id.to_owned(), category_name(r.category))).collect();
    ids.extend(observed_rules(kb).into_iter().map(|(id, c, _)| (id, category_name(c))));
    ids
}

/// Reads one case file; `Err` says what is wrong with it.
fn parse_case(category: &str, name: String, content: &str, known: &BTreeMap<String, String>) -> Result<Case, String> {
    if category != HEALTHY && !CATEGORIES.contains(&category) {
        return Err(format!("unknown category folder `{category}`"));
    }
    let content = content.replace("\r\n", "\n");
    let (head, text) = content.split_once("\n---\n").ok_or("no `---` line between the header and the text")?;
    let mut fields: BTreeMap<&str, &str> = BTreeMap::new();
    for line in head.lines().filter(|l| !l.trim().is_empty()) {
        let (key, value) = line.split_once(": ").ok_or_else(|| format!("header line without `key: value`: {line}"))?;
        if !REQUIRED.contains(&key) && !OPTIONAL.contains(&key) {
            return Err(format!("unknown header field `{key}`"));
        }
        if fields.insert(key, value.trim()).is_some() {
            return Err(format!("header field `{key}` given twice"));
        }
    }
    for key in REQUIRED {
        if fields.get(key).is_none_or(|v| v.is_empty()) {
            return Err(format!("missing header field `{key}`"));
        }
    }
    if !fields["source"].starts_with("https://") {
        return Err("source is not an https URL".to_owned());
    }
    if !PLATFORMS.contains(&fields["platform"]) {
        return Err(format!("platform `{}` is not one of {PLATFORMS:?}", fields["platform"]));
    }
    if !fields["year"].parse::<u16>().is_ok_and(|y| (2010..=2030).contains(&y)) {
        return Err(format!("year `{}` is not a year", fields["year"]));
    }
    if text.trim().is_empty() {
        return Err("the pasted text is empty".to_owned());
    }
    let expected = expected_ids(category, fields["expected"], fields.get("note").copied().unwrap_or(""), known)?;
    let fix = fields.get("fix").map(|f| fix_terms(category, f)).transpose()?;
    Ok(Case {
        name,
        category: category.to_owned(),
        source: fields["source"].to_owned(),
        expected,
        fix,
        text: text.to_owned(),
    })
}

/// The `fix:` field: alternatives separated by ` | `, each of terms separated by ` & ` that a right
/// fix must all name (compared without case). A healthy case has no fix; no term may be empty.
fn fix_terms(category: &str, field: &str) -> Result<Vec<Vec<String>>, String> {
    if category == HEALTHY {
        return Err("a healthy case has no `fix:`".to_owned());
    }
    let alternatives: Vec<Vec<String>> =
        field.split(" | ").map(|alt| alt.split(" & ").map(|t| t.trim().to_lowercase()).collect::<Vec<_>>()).collect();
    if alternatives.iter().flatten().any(|t| t.is_empty() || t.contains(['|', '&'])) {
        return Err(format!("`fix: {field}` has an empty term (alternatives ` | `, terms ` & `)"));
    }
    Ok(alternatives)
}

/// Whether one of the fixes names every term of one alternative.
fn fix_named(alternatives: &[Vec<String>], fixes: &[String]) -> bool {
    let fixes: Vec<String> = fixes.iter().map(|f| f.to_lowercase()).collect();
    alternatives.iter().any(|terms| fixes.iter().any(|fix| terms.iter().all(|t| fix.contains(t.as_str()))))
}

/// The `expected:` ids, checked: `none` for healthy cases; otherwise ids this project has (or, for
/// one it should have, an id the note names), at least one of the folder's category when all are known.
fn expected_ids(
    category: &str,
    field: &str,
    note: &str,
    known: &BTreeMap<String, String>,
) -> Result<Vec<String>, String> {
    if category == HEALTHY {
        return if field == "none" { Ok(Vec::new()) } else { Err("a healthy case expects `none`".to_owned()) };
    }
    let ids: Vec<String> = field.split(',').map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect();
    if ids.is_empty() || ids.iter().any(|i| i == "none") {
        return Err("expected names no finding id".to_owned());
    }
    for id in &ids {
        if !known.contains_key(id) && !note.contains(id.as_str()) {
            return Err(format!("`{id}` is no finding id of this project (a new one must be named in `note:`)"));
        }
    }
    let all_known = ids.iter().all(|i| known.contains_key(i));
    if all_known && !ids.iter().any(|i| known[i] == category) {
        return Err(format!("no expected id is of category `{category}`"));
    }
    Ok(ids)
}

/// Every case under `dir`, and the errors of the malformed ones.
fn load(dir: &Path, known: &BTreeMap<String, String>) -> (Vec<Case>, Vec<String>) {
    let mut cases = Vec::new();
    let mut errors = Vec::new();
    let mut folders: Vec<PathBuf> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    folders.sort();
    for folder in folders {
        let category = folder.file_name().unwrap().to_string_lossy().into_owned();
        let mut files: Vec<PathBuf> = std::fs::read_dir(&folder).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        for file in files {
            let name = format!("{category}/{}", file.file_name().unwrap().to_string_lossy());
            if file.extension().is_none_or(|e| e != "txt") {
                errors.push(format!("{name}: not a .txt case file"));
                continue;
            }
            let content = std::fs::read_to_string(&file).unwrap_or_default();
            match parse_case(&category, name.clone(), &content, known) {
                Ok(case) => cases.push(case),
                Err(e) => errors.push(format!("{name}: {e}")),
            }
        }
    }
    (cases, errors)
}

/// What gpu-doctor made of one case.
#[derive(Debug)]
struct Judged {
    /// Every expected id is among the findings, or among the known messages a finding explains
    /// (`Finding::explains`: the message's line is in its evidence).
    named: bool,
    /// Every expected id is a finding's own id (the measure before 2026-11-30).
    named_strict: bool,
    /// An error-level finding (counted on healthy cases).
    false_error: bool,
    /// The finding ids, or why the text was not read.
    got: String,
    /// For a case with a `fix:`: whether a finding's fix (as `diagnose --from` prints it, planned)
    /// names it, and the fixes it got.
    fixed: Option<(bool, Vec<String>)>,
}

fn judge(case: &Case, kb: &Kb, readers_off: &[&str]) -> Judged {
    let (snap, findings): (Snapshot, Vec<Finding>) = match read_pasted_without(&case.text, kb, readers_off) {
        Ok(snap) => {
            let findings = diagnose(&snap, kb);
            (snap, findings)
        }
        Err(_) => {
            let fixed = case.fix.as_ref().map(|_| (false, Vec::new()));
            let got = "nothing recognised (exit 3)".to_owned();
            return Judged { named: false, named_strict: false, false_error: false, got, fixed };
        }
    };
    let ids: BTreeSet<String> = findings.iter().map(|f| f.id.clone()).collect();
    let named_strict = case.expected.iter().all(|e| ids.contains(e));
    let named = case.expected.iter().all(|e| ids.contains(e) || findings.iter().any(|f| f.explains.contains(e)));
    let false_error = findings.iter().any(|f| f.severity == Severity::Error);
    let got = if findings.is_empty() { "no finding".to_owned() } else { got(&findings) };
    // The fixes as `diagnose --from` prints them: a planned finding's fix is written by its plan.
    let fixed = case.fix.as_ref().map(|alternatives| {
        let mut report = Report::new(snap, findings);
        gpu_doctor_installers::attach(&mut report, kb);
        let fixes: Vec<String> = report.findings.iter().filter_map(|f| f.fix.clone()).collect();
        (fix_named(alternatives, &fixes), fixes)
    });
    Judged { named, named_strict, false_error, got, fixed }
}

/// The finding ids, by id, each with the known messages it explains: `arch.not_in_build (explains
/// observed.torch.sm_not_compatible)`.
fn got(findings: &[Finding]) -> String {
    let mut got: Vec<String> = findings
        .iter()
        .map(|f| match f.explains.as_slice() {
            [] => f.id.clone(),
            explained => format!("{} (explains {})", f.id, explained.join(", ")),
        })
        .collect();
    got.sort();
    got.join(", ")
}

/// The recorded floor: `tests/corpus/ratchet.toml`.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Ratchet {
    /// When the figures were last raised.
    #[allow(dead_code)]
    date: String,
    /// Recall over every non-healthy case, in percent.
    overall_recall: f64,
    /// Error-level findings on healthy cases, at most.
    max_false_errors: u32,
    /// Recall per category, in percent.
    recall: BTreeMap<String, f64>,
    /// Overall recall with each case's own catalogue rows and the readers citing its thread switched
    /// off (leave-one-source-out).
    #[serde(default)]
    leave_one_source_out_recall: Option<f64>,
    /// The same with only the catalogue rows switched off.
    #[serde(default)]
    leave_one_source_out_catalogue_recall: Option<f64>,
    /// Of the cases with a `fix:`, the percent whose fix a finding names.
    #[serde(default)]
    fix_recall: Option<f64>,
}

/// One row of the table: cases and named right.
#[derive(Debug, Default, Clone, Copy)]
struct Row {
    cases: u32,
    named: u32,
}

impl Row {
    /// Recall in percent, rounded down to a tenth (the form the ratchet records).
    fn recall(self) -> f64 {
        if self.cases == 0 {
            return 0.0;
        }
        (f64::from(self.named) * 1000.0 / f64::from(self.cases)).floor() / 10.0
    }
}

/// The score: rows per category, the overall row, false errors over healthy cases and the misses.
#[derive(Debug, Default)]
struct Score {
    rows: BTreeMap<String, Row>,
    overall: Row,
    /// The overall row counted by findings' own ids only.
    strict: Row,
    healthy: u32,
    false_errors: u32,
    misses: Vec<String>,
    /// Cases with a `fix:` (`cases`) and those whose fix a finding names (`named`).
    fixes: Row,
    /// The cases whose fix no finding names, with the fixes they got.
    fix_misses: Vec<String>,
}

fn score(cases: &[Case], kb: &Kb) -> Score {
    score_with(cases, |case| judge(case, kb, &[]))
}

/// The thread a source URL names: without its `#fragment`, `?query` and trailing slash, lowercase,
/// so a case and a catalogue row citing two comments of one issue name the same thread.
fn thread_of(url: &str) -> String {
    let url = url.split(['#', '?']).next().unwrap_or(url).trim_end_matches('/');
    url.replacen("http://", "https://", 1).to_ascii_lowercase()
}

/// The knowledge base without the catalogue rows (`errors.toml`) whose source cites `thread` anywhere
/// (first or beside the emitter's file, as a URL or `owner/repo#N`); `None` when no row cites it.
fn without_thread(kb: &Kb, thread: &str) -> Option<Kb> {
    let cites = |m: &gpu_doctor_kb::KnownMessage| cited_threads(&m.source).contains(thread);
    if !kb.errors.message.iter().any(cites) {
        return None;
    }
    let mut kb = kb.clone();
    kb.errors.message.retain(|m| !cites(m));
    Some(kb)
}

/// The threads each paste reader cites in its own source (`probes/src/parse/paste/<reader>.rs` and
/// its folder; `topology` is `parse/smi_topo/paste.rs`): the samples it was written from. A URL is
/// taken as it is; `owner/repo#N` as that repository's issue or pull request N.
fn reader_threads() -> BTreeMap<&'static str, BTreeSet<String>> {
    let paste = Path::new(env!("CARGO_MANIFEST_DIR")).join("../probes/src/parse/paste");
    let mut out = BTreeMap::new();
    for reader in READERS {
        let files: Vec<PathBuf> = if *reader == "topology" {
            vec![paste.join("../smi_topo/paste.rs")]
        } else {
            let dir = paste.join(reader);
            let mut files = vec![paste.join(format!("{reader}.rs"))];
            if let Ok(entries) = std::fs::read_dir(&dir) {
                files.extend(entries.filter_map(|e| e.ok().map(|e| e.path())));
            }
            files
        };
        let mut threads = BTreeSet::new();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            threads.extend(cited_threads(&text));
        }
        out.insert(*reader, threads);
    }
    out
}

/// The threads `text` cites: `https://…` URLs, and `owner/repo#N` as `github.com/owner/repo/issues/N`
/// and `/pull/N`, each as [`thread_of`] names it.
fn cited_threads(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let is_name = |c: char| c.is_ascii_alphanumeric() || "_.-".contains(c);
    for line in text.lines() {
        // `owner/repo#M and #N`: a bare number belongs to the repository named before it on the line.
        let mut last: Option<(&str, &str)> = None;
        for word in line.split(|c: char| c.is_whitespace() || "()<>\"'`,;[]".contains(c)) {
            if let Some(at) = word.find("https://").or_else(|| word.find("http://")) {
                out.insert(thread_of(word.get(at..).unwrap_or(word).trim_end_matches(['.', ':'])));
                continue;
            }
            let Some((repo, number)) = word.split_once('#') else { continue };
            let number: String = number.chars().take_while(char::is_ascii_digit).collect();
            if number.is_empty() {
                continue;
            }
            let (owner, name) = if repo.is_empty() {
                let Some(named) = last else { continue };
                named
            } else {
                let mut parts = repo.rsplitn(2, '/');
                let (Some(name), Some(owner)) = (parts.next(), parts.next()) else { continue };
                let owner = owner.rsplit('/').next().unwrap_or(owner);
                if owner.is_empty() || name.is_empty() || !owner.chars().chain(name.chars()).all(is_name) {
                    continue;
                }
                last = Some((owner, name));
                (owner, name)
            };
            for kind in ["issues", "pull"] {
                out.insert(thread_of(&format!("https://github.com/{owner}/{name}/{kind}/{number}")));
            }
        }
    }
    out
}

/// The readers that cite `thread` among their samples: left out when a case of that thread is
/// judged leaving its own source out.
fn readers_from(thread: &str, cited: &BTreeMap<&'static str, BTreeSet<String>>) -> Vec<&'static str> {
    cited.iter().filter(|(_, threads)| threads.contains(thread)).map(|(r, _)| *r).collect()
}

/// [`score`] with each case judged by `judge`.
fn score_with(cases: &[Case], judge: impl Fn(&Case) -> Judged) -> Score {
    let mut s = Score::default();
    for case in cases {
        let j = judge(case);
        if case.category == HEALTHY {
            s.healthy += 1;
            if j.false_error {
                s.false_errors += 1;
                s.misses.push(format!("{}: error on a healthy paste: {}", case.name, j.got));
            }
            continue;
        }
        if let Some((fixed, fixes)) = &j.fixed {
            s.fixes.cases += 1;
            if *fixed {
                s.fixes.named += 1;
            } else {
                let want = case.fix.iter().flatten().map(|alt| alt.join(" & ")).collect::<Vec<_>>().join(" | ");
                let got = if fixes.is_empty() { "no fix".to_owned() } else { fixes.join(" // ") };
                s.fix_misses.push(format!("{}: fix should name {want}; got {got}", case.name));
            }
        }
        let row = s.rows.entry(case.category.clone()).or_default();
        row.cases += 1;
        s.overall.cases += 1;
        s.strict.cases += 1;
        s.strict.named += u32::from(j.named_strict);
        if j.named {
            row.named += 1;
            s.overall.named += 1;
        } else {
            s.misses.push(format!("{}: expected {}; got {}", case.name, case.expected.join(", "), j.got));
        }
    }
    s
}

fn table(s: &Score, r: &Ratchet) -> String {
    let mut out = format!("{:<40} {:>5} {:>5} {:>8} {:>8}\n", "category", "cases", "named", "recall", "floor");
    for c in CATEGORIES {
        let row = s.rows.get(c).copied().unwrap_or_default();
        let floor = r.recall.get(c).map_or_else(|| "-".to_owned(), |f| format!("{f:.1} %"));
        let recall = if row.cases == 0 { "-".to_owned() } else { format!("{:.1} %", row.recall()) };
        writeln!(out, "{c:<40} {:>5} {:>5} {recall:>8} {floor:>8}", row.cases, row.named).unwrap();
    }
    let o = s.overall;
    writeln!(out, "{:<40} {:>5} {:>5} {:>6.1} % {:>6.1} %", "overall", o.cases, o.named, o.recall(), r.overall_recall)
        .unwrap();
    writeln!(
        out,
        "{:<40} {:>5} {:>5} {:>6.1} %   (findings' own ids only, not the known messages they explain)",
        "overall, strict",
        s.strict.cases,
        s.strict.named,
        s.strict.recall()
    )
    .unwrap();
    writeln!(
        out,
        "healthy: {} cases, {} with a false error (at most {})",
        s.healthy, s.false_errors, r.max_false_errors
    )
    .unwrap();
    let floor = r.fix_recall.map_or_else(|| "-".to_owned(), |f| format!("{f:.1} %"));
    writeln!(
        out,
        "fixes: {} cases say what fixed them, a finding's fix names it in {} ({:.1} %, floor {floor})",
        s.fixes.cases,
        s.fixes.named,
        s.fixes.recall()
    )
    .unwrap();
    if !s.misses.is_empty() {
        writeln!(out, "\nnot named right ({}):", s.misses.len()).unwrap();
        for m in &s.misses {
            writeln!(out, "  {m}").unwrap();
        }
    }
    if !s.fix_misses.is_empty() {
        writeln!(out, "\nfix not named ({}):", s.fix_misses.len()).unwrap();
        for m in &s.fix_misses {
            let m: String = m.chars().take(600).collect();
            writeln!(out, "  {m}").unwrap();
        }
    }
    out
}

/// What fell below the ratchet (failures) and what rose above it (figures that can be raised).
fn against(s: &Score, r: &Ratchet) -> (Vec<String>, Vec<String>) {
    let (mut fell, mut rose) = (Vec::new(), Vec::new());
    let mut compare = |what: &str, now: f64, floor: f64, fell: &mut Vec<String>| {
        if now < floor {
            fell.push(format!("{what}: recall {now:.1} % is below the recorded {floor:.1} %"));
        } else if now > floor {
            rose.push(format!("{what}: recall {now:.1} % is above the recorded {floor:.1} %: raise it"));
        }
    };
    compare("overall", s.overall.recall(), r.overall_recall, &mut fell);
    if let Some(floor) = r.fix_recall {
        compare("fixes", s.fixes.recall(), floor, &mut fell);
    }
    for c in CATEGORIES {
        match (s.rows.get(c), r.recall.get(c)) {
            (Some(row), floor) => compare(c, row.recall(), floor.copied().unwrap_or(0.0), &mut fell),
            (None, Some(_)) => fell.push(format!("{c}: a recall is recorded but the category has no case now")),
            (None, None) => {}
        }
    }
    for c in r.recall.keys().filter(|c| !CATEGORIES.contains(&c.as_str())) {
        fell.push(format!("ratchet.toml names `{c}`, which is no category"));
    }
    if s.false_errors > r.max_false_errors {
        fell.push(format!("{} healthy cases raise an error; at most {} may", s.false_errors, r.max_false_errors));
    } else if s.false_errors < r.max_false_errors {
        rose.push(format!("max_false_errors can be lowered to {}", s.false_errors));
    }
    (fell, rose)
}

#[test]
fn corpus_score_holds_the_ratchet() {
    let kb = Kb::get().unwrap();
    let known = known_ids(kb);
    let (cases, malformed) = load(&corpus_dir(), &known);
    assert!(malformed.is_empty(), "malformed corpus cases:\n{}", malformed.join("\n"));
    assert!(!cases.is_empty(), "the corpus is empty");
    let ratchet = std::fs::read_to_string(corpus_dir().join("ratchet.toml")).unwrap();
    let ratchet: Ratchet = toml::from_str(&ratchet).expect("tests/corpus/ratchet.toml");
    let s = score(&cases, kb);
    println!("{}", table(&s, &ratchet));
    let (fell, rose) = against(&s, &ratchet);
    for r in &rose {
        println!("can be raised in tests/corpus/ratchet.toml: {r}");
    }
    assert!(fell.is_empty(), "the corpus score fell below tests/corpus/ratchet.toml:\n{}", fell.join("\n"));
}

/// A first sight (issue 27): the cases of another folder laid out like the corpus
/// (`GPU_DOCTOR_FIRST_SIGHT=DIR`, `scripts/corpus-score --first-sight DIR`), collected before any
/// code was written for them, scored once against no ratchet. Without the variable it scores
/// nothing.
#[test]
fn corpus_first_sight() {
    let Some(dir) = std::env::var_os("GPU_DOCTOR_FIRST_SIGHT").map(PathBuf::from) else { return };
    let kb = Kb::get().unwrap();
    let (cases, malformed) = load(&dir, &known_ids(kb));
    assert!(malformed.is_empty(), "malformed cases in {}:\n{}", dir.display(), malformed.join("\n"));
    let s = score(&cases, kb);
    let none = Ratchet::default();
    println!("first sight of {} ({} cases):\n{}", dir.display(), cases.len(), table(&s, &none));
}

/// Leave-one-source-out (issue 27): every case judged with the catalogue rows taken from its own
/// thread switched off. The drop from the plain score is how much of it is memory of the case
/// rather than reasoning from the message's family. Prints both per category; fails when the
/// overall figure falls below the ratchet's `leave_one_source_out_recall`.
#[test]
fn corpus_leave_one_source_out() {
    let kb = Kb::get().unwrap();
    let (cases, _) = load(&corpus_dir(), &known_ids(kb));
    let plain = score(&cases, kb);
    let cited = reader_threads();
    let catalogue_only = score_with(&cases, |case| {
        let own = without_thread(kb, &thread_of(&case.source));
        judge(case, own.as_ref().unwrap_or(kb), &[])
    });
    let loso = score_with(&cases, |case| {
        let thread = thread_of(&case.source);
        let own = without_thread(kb, &thread);
        judge(case, own.as_ref().unwrap_or(kb), &readers_from(&thread, &cited))
    });
    let own = cases.iter().filter(|c| without_thread(kb, &thread_of(&c.source)).is_some()).count();
    let own_readers: Vec<String> = cases
        .iter()
        .filter_map(|c| {
            let off = readers_from(&thread_of(&c.source), &cited);
            (!off.is_empty()).then(|| format!("{} ({})", c.name, off.join(", ")))
        })
        .collect();
    println!("leave-one-source-out: {own} of {} cases have catalogue rows from their own thread", cases.len());
    println!(
        "and {} have readers citing their own thread among their samples, left out for them: {}",
        own_readers.len(),
        own_readers.join("; ")
    );
    println!(
        "catalogue rows alone left out: {:.1} %; rows and readers left out (the loso column): {:.1} %",
        catalogue_only.overall.recall(),
        loso.overall.recall()
    );
    println!("{:<40} {:>5} {:>8} {:>8}", "category", "cases", "plain", "loso");
    for c in CATEGORIES {
        let (Some(p), Some(l)) = (plain.rows.get(c), loso.rows.get(c)) else { continue };
        println!("{c:<40} {:>5} {:>6.1} % {:>6.1} %", p.cases, p.recall(), l.recall());
    }
    println!(
        "{:<40} {:>5} {:>6.1} % {:>6.1} %",
        "overall",
        plain.overall.cases,
        plain.overall.recall(),
        loso.overall.recall()
    );
    println!("healthy with a false error: plain {}, loso {}", plain.false_errors, loso.false_errors);
    let lost: Vec<&String> = loso.misses.iter().filter(|m| !plain.misses.contains(m)).collect();
    println!("\nnamed right only with their own thread's rows ({}):", lost.len());
    for miss in lost {
        println!("  {miss}");
    }
    let ratchet = std::fs::read_to_string(corpus_dir().join("ratchet.toml")).unwrap();
    let ratchet: Ratchet = toml::from_str(&ratchet).expect("tests/corpus/ratchet.toml");
    if let Some(floor) = ratchet.leave_one_source_out_recall {
        assert!(
            loso.overall.recall() >= floor,
            "leave-one-source-out recall {:.1} % fell below the recorded {floor:.1} %",
            loso.overall.recall()
        );
    }
    if let Some(floor) = ratchet.leave_one_source_out_catalogue_recall {
        assert!(
            catalogue_only.overall.recall() >= floor,
            "leave-one-source-out recall with catalogue rows alone left out {:.1} % fell below the recorded {floor:.1} %",
            catalogue_only.overall.recall()
        );
    }
}

#[test]
fn a_readers_cited_threads_are_read_from_urls_and_short_references() {
    let cited = cited_threads(
        "/// microsoft/WSL#3847: WSL1 (see https://github.com/chelsea0x3b/cudarc/issues/255#issuecomment-1).\n\
         // not a reference: a#1, C# 12, #3\n\
         // numba/numba#8985 and #9732",
    );
    assert!(cited.contains(&thread_of("https://github.com/numba/numba/issues/9732")), "{cited:?}");
    assert!(cited.contains(&thread_of("https://github.com/microsoft/WSL/issues/3847")), "{cited:?}");
    assert!(cited.contains(&thread_of("https://github.com/microsoft/WSL/pull/3847")), "{cited:?}");
    assert!(cited.contains(&thread_of("https://github.com/chelsea0x3b/cudarc/issues/255")), "{cited:?}");
    assert_eq!(cited.len(), 7, "{cited:?}");
    // The readers' own sources: the llama.cpp reader was written from ollama/ollama#1834 among others,
    // so it is left out for that thread's case, and no reader for a thread none cites.
    let readers = reader_threads();
    assert_eq!(readers.len(), READERS.len());
    assert!(readers_from(&thread_of("https://github.com/ollama/ollama/pull/1834"), &readers).contains(&"llama_cpp"));
    assert!(readers_from("https://example.org/none", &readers).is_empty());
}

#[test]
fn a_thread_is_named_alike_by_its_comments() {
    assert_eq!(
        thread_of("https://github.com/pytorch/pytorch/issues/123#issuecomment-9"),
        thread_of("http://github.com/PyTorch/pytorch/issues/123/")
    );
    assert_ne!(thread_of("https://github.com/a/b/issues/12"), thread_of("https://github.com/a/b/issues/123"));
    let kb = Kb::get().unwrap();
    // A row citing a thread anywhere in its source: first (a URL) or beside the emitter's file.
    let (row, thread) = kb
        .errors
        .message
        .iter()
        .find_map(|m| cited_threads(&m.source).into_iter().next().map(|t| (m, t)))
        .expect("a row that cites a thread");
    let without = without_thread(kb, &thread).expect("the row's thread");
    assert!(without.errors.message.iter().all(|m| !cited_threads(&m.source).contains(&thread)));
    assert!(!without.errors.message.iter().any(|m| m.id == row.id));
    assert!(without.errors.message.len() < kb.errors.message.len());
    assert!(without_thread(kb, "https://example.com/never").is_none());
}

fn parse(category: &str, content: &str) -> Result<Case, String> {
    parse_case(category, format!("{category}/x.txt"), content, &known_ids(Kb::get().unwrap()))
}

const GOOD_HEAD: &str = "source: https://github.com/o/r/issues/1\nestablished: maintainer: 'CPU wheel'\n\
    expected: framework.cpu_only_build\nplatform: linux\nyear: 2024\n";

#[test]
fn a_well_formed_case_reads() {
    let case = parse("cpu_only_build", &format!("{GOOD_HEAD}---\n'2.5.1+cpu'\n")).unwrap();
    assert_eq!(case.expected, ["framework.cpu_only_build"]);
    assert_eq!(case.text, "'2.5.1+cpu'\n");
}

#[test]
fn malformed_cases_are_refused() {
    let body = "---\ntext\n";
    let missing = GOOD_HEAD.replace("year: 2024\n", "");
    assert!(parse("cpu_only_build", &format!("{missing}{body}")).unwrap_err().contains("year"));
    assert!(parse("no_such_category", &format!("{GOOD_HEAD}{body}")).unwrap_err().contains("category"));
    assert!(parse("cpu_only_build", &format!("{GOOD_HEAD}---\n  \n")).unwrap_err().contains("empty"));
    assert!(parse("cpu_only_build", GOOD_HEAD).unwrap_err().contains("---"));
    let unknown_id = GOOD_HEAD.replace("framework.cpu_only_build", "framework.made_up");
    assert!(parse("cpu_only_build", &format!("{unknown_id}{body}")).unwrap_err().contains("made_up"));
    let noted = format!("{unknown_id}note: needs framework.made_up, which the project lacks\n{body}");
    assert!(parse("cpu_only_build", &noted).is_ok());
    assert!(parse("arch_not_in_build", &format!("{GOOD_HEAD}{body}")).unwrap_err().contains("category"));
    assert!(parse(HEALTHY, &format!("{GOOD_HEAD}{body}")).unwrap_err().contains("none"));
    let extra = format!("{GOOD_HEAD}colour: blue\n{body}");
    assert!(parse("cpu_only_build", &extra).unwrap_err().contains("colour"));
}

#[test]
fn a_cases_fix_is_alternatives_of_terms_all_named_in_one_fix() {
    let case = parse("cpu_only_build", &format!("{GOOD_HEAD}fix: cu118 | CU121 & Torch\n---\nx\n")).unwrap();
    let alternatives = case.fix.unwrap();
    assert_eq!(alternatives, [vec!["cu118".to_owned()], vec!["cu121".to_owned(), "torch".to_owned()]]);
    let fix = |s: &str| vec![s.to_owned()];
    assert!(fix_named(
        &alternatives,
        &fix("pip install 'torch==2.4.*' --index-url https://download.pytorch.org/whl/cu121")
    ));
    assert!(fix_named(&alternatives, &fix("… whl/CU118")));
    // Both terms of one alternative in one fix, not spread over two.
    assert!(!fix_named(&alternatives, &["whl/cu121".to_owned(), "torch 2.4".to_owned()]));
    assert!(!fix_named(&alternatives, &fix("Install the NVIDIA driver 570")));
    assert!(!fix_named(&alternatives, &[]));
    assert!(
        parse(
            HEALTHY,
            &GOOD_HEAD
                .replace("framework.cpu_only_build", "none")
                .replace("year: 2024\n", "year: 2024\nfix: x\n---\nx\n")
        )
        .unwrap_err()
        .contains("healthy")
    );
    assert!(parse("cpu_only_build", &format!("{GOOD_HEAD}fix: a |  | b\n---\nx\n")).unwrap_err().contains("empty"));
}

#[test]
fn the_ratchet_fails_on_a_fall_and_says_when_to_raise() {
    let mut s = Score { overall: Row { cases: 10, named: 5 }, healthy: 3, false_errors: 1, ..Score::default() };
    s.rows.insert("cpu_only_build".to_owned(), Row { cases: 10, named: 5 });
    let ratchet = |overall: f64, cpu: f64, max: u32| Ratchet {
        date: String::new(),
        overall_recall: overall,
        max_false_errors: max,
        recall: BTreeMap::from([("cpu_only_build".to_owned(), cpu)]),
        leave_one_source_out_recall: None,
        leave_one_source_out_catalogue_recall: None,
        fix_recall: None,
    };
    let (fell, rose) = against(&s, &ratchet(50.0, 50.0, 1));
    assert!(fell.is_empty() && rose.is_empty(), "{fell:?} {rose:?}");
    // The fixes' figure is held only where one is recorded.
    let with_fixes = Score { fixes: Row { cases: 4, named: 1 }, ..Score::default() };
    let mut r = ratchet(0.0, 0.0, 0);
    assert!(!against(&with_fixes, &r).0.iter().any(|f| f.starts_with("fixes")));
    r.fix_recall = Some(50.0);
    assert!(against(&with_fixes, &r).0.iter().any(|f| f.starts_with("fixes")), "{:?}", against(&with_fixes, &r));
    let (fell, _) = against(&s, &ratchet(50.0, 60.0, 0));
    assert_eq!(fell.len(), 2, "{fell:?}");
    let (fell, rose) = against(&s, &ratchet(40.0, 50.0, 2));
    assert!(fell.is_empty());
    assert_eq!(rose.len(), 2, "{rose:?}");
    assert_eq!(Row { cases: 3, named: 2 }.recall(), 66.6);
}
