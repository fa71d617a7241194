//! Hostile text: a replayed or pasted machine whose every string carries terminal escape sequences,
//! HTML and Markdown, through the terminal summary, the Markdown report and the HTML report.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use gpu_doctor_model::bench::run::BenchRun;
use gpu_doctor_model::{Origin, Report};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::document::Format;

/// Screen clear, window title (OSC 0), clipboard write (OSC 52), bell, carriage return, HTML that
/// closes the fold, a table separator, a tracking image and a line break that starts a heading.
const PAYLOAD: &str = "![t](https://example.com/t.png)\u{1b}[2J\u{1b}]0;owned\u{7}\u{1b}]52;c;ZWNobyBvd25lZA==\u{7}\rX<script>alert(1)</script></details>|cell\n# heading\u{9b}31m";

/// The JSON pointers of every string in `value`.
fn string_pointers(value: &Value, at: &str, out: &mut Vec<String>) {
    match value {
        Value::String(_) => out.push(at.to_owned()),
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                string_pointers(v, &format!("{at}/{i}"), out);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                string_pointers(v, &format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out);
            }
        }
        _ => {}
    }
}

/// `value` with the payload appended to every string that can carry it and still be read back as
/// a `T` (versions and enum tags cannot); returns how many strings carry it.
fn poisoned<T: serde::Serialize + DeserializeOwned>(value: &T) -> (T, usize) {
    let mut json = serde_json::to_value(value).unwrap();
    let mut pointers = Vec::new();
    string_pointers(&json, "", &mut pointers);
    let mut carried = 0;
    for p in pointers {
        let mut tried = json.clone();
        if let Some(Value::String(s)) = tried.pointer_mut(&p) {
            s.push_str(PAYLOAD);
        }
        if serde_json::from_value::<T>(tried.clone()).is_ok() {
            json = tried;
            carried += 1;
        }
    }
    (serde_json::from_value(json).unwrap(), carried)
}

/// A replayed machine with GPUs, environments, toolkits and findings, and a benchmark run, every
/// string poisoned; once as this machine and once as pasted text.
fn hostile_reports() -> Vec<(Report, BenchRun)> {
    let run = crate::plots::tests::full_run(crate::plots::tests::known_facts());
    let (run, carried) = poisoned(&run);
    assert!(carried > 20, "the bench run carries the payload in {carried} strings");
    let mut out = Vec::new();
    for name in
        ["torch-cu130-on-r550", "egpu-thunderbolt", "two-toolkits", "docker-toolkit-no-runtime", "pcie-2x5090-no-p2p"]
    {
        let report = crate::render::html::tests::fixture_report(name);
        let (mut report, carried) = poisoned(&report);
        assert!(carried > 50, "{name} carries the payload in {carried} strings");
        out.push((report.clone(), run.clone()));
        report.snapshot.origin = Origin::Pasted { formats: vec![format!("nvidia-smi{PAYLOAD}")] };
        out.push((report, run.clone()));
    }
    out
}

/// Control characters that must never reach a terminal or a file as they are.
fn assert_no_controls(text: &str, what: &str) {
    for (i, c) in text.char_indices() {
        let bad = (c.is_control() && c != '\n') || ('\u{202a}'..='\u{202e}').contains(&c);
        assert!(!bad, "{what}: control {c:?} at {i}: {:?}", &text[i.saturating_sub(40)..(i + 40).min(text.len())]);
    }
}

#[test]
fn the_terminal_summary_carries_no_escape_sequences() {
    for (report, _) in hostile_reports() {
        for verbose in [false, true] {
            let plain = super::text::summary(&report, false, verbose);
            assert_no_controls(&plain, "summary");
            assert!(plain.contains("X<script>"), "the text itself is still shown");
            assert!(!plain.lines().any(|l| l.trim_start().starts_with("# heading")), "a line break got through");
            // With colour, the only escape sequences are gpu-doctor's own colours.
            let color = super::text::summary(&report, true, verbose);
            let mut rest = color.as_str();
            while let Some(at) = rest.find('\u{1b}') {
                rest = &rest[at + 1..];
                let code: String = rest.chars().take_while(|c| *c != 'm').collect();
                assert!(["[0", "[32", "[33"].contains(&code.as_str()), "escape {code:?} in the summary");
            }
            assert_no_controls(&color.replace("\u{1b}[", "["), "coloured summary");
        }
    }
}

#[test]
fn the_bench_table_carries_no_escape_sequences() {
    for (_, run) in hostile_reports().into_iter().take(1) {
        let table = super::bench::table(&run);
        assert_no_controls(&table, "bench table");
        assert!(!table.lines().any(|l| l.trim_start().starts_with("# heading")));
    }
}

/// A line of Markdown without its code spans (whose text Markdown shows as it is): a run of
/// backticks opens a span that the next run of the same length closes.
fn outside_code(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find('`') {
        out.push_str(&rest[..at]);
        let run = rest[at..].chars().take_while(|c| *c == '`').count();
        let after = &rest[at + run..];
        let fence = "`".repeat(run);
        let close = after.char_indices().map(|(i, _)| i).find(|&i| {
            after[i..].starts_with(&fence)
                && !after[i + run..].starts_with('`')
                && (i == 0 || !after[..i].ends_with('`'))
        });
        match close {
            Some(i) => rest = &after[i + run..],
            None => {
                out.push_str(&rest[at..at + run]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The number of `|` in a Markdown table row that are not escaped.
fn separators(row: &str) -> usize {
    let b = row.as_bytes();
    (0..b.len()).filter(|&i| b[i] == b'|' && (i == 0 || b[i - 1] != b'\\')).count()
}

#[test]
fn the_markdown_report_escapes_every_cell_summary_and_trace() {
    for (report, run) in hostile_reports() {
        let md = crate::render::document::document(&report, Some(&run), Format::Md, false).unwrap();
        assert_no_controls(&md, "markdown");
        let prose: String = md.lines().map(outside_code).collect::<Vec<_>>().join("\n");
        assert!(!prose.to_ascii_lowercase().contains("<script"), "raw HTML in the Markdown report");
        assert_eq!(prose.matches("<details>").count(), prose.matches("</details>").count(), "a fold closed early");
        assert!(md.contains("&lt;script&gt;"), "the text itself is still shown, escaped");
        assert!(!prose.contains("]("), "a link or image from the text");
        for line in md.lines() {
            assert!(
                !line.starts_with('#')
                    || ["## gpu-doctor report", "### Findings", "### Benchmarks"].iter().any(|h| line.starts_with(h)),
                "a heading from the text: {line:?}"
            );
            assert!(!line.trim_start().starts_with("# heading"), "{line:?}");
        }
        // Every table row has its own columns and no more.
        let mut columns = None;
        for line in md.lines() {
            if !line.starts_with('|') {
                columns = None;
                continue;
            }
            let n = separators(line);
            assert_eq!(*columns.get_or_insert(n), n, "a cell split the table: {line:?}");
        }
    }
}

#[test]
fn the_html_report_escapes_everything() {
    for (report, run) in hostile_reports() {
        let html = crate::render::document::document(&report, Some(&run), Format::Html, false).unwrap();
        assert_no_controls(&html, "html");
        let lower = html.to_ascii_lowercase();
        assert!(!lower.contains("<script"), "raw HTML in the HTML report");
        assert_eq!(html.matches("<details").count(), html.matches("</details>").count());
        assert!(html.contains("&lt;script&gt;"));
        // Each plot is still well-formed XML.
        for part in html.split("<svg").skip(1) {
            let end = part.find("</svg>").unwrap();
            roxmltree::Document::parse(&format!("<svg{}</svg>", &part[..end])).unwrap();
        }
    }
}

#[test]
fn one_sanitiser_for_the_terminal_and_one_escape_for_markdown() {
    use super::markdown::{code, escape};
    use super::text::clean;
    assert_eq!(clean("a\u{1b}[2Jb\u{7}c\rd\ne\u{9b}f\u{202e}g"), r"a\u{1b}[2Jb\u{7}c d e\u{9b}f\u{202e}g");
    assert_eq!(clean("CUDA 12.8 · RTX 4090 → /usr/local/cuda"), "CUDA 12.8 · RTX 4090 → /usr/local/cuda");
    assert_eq!(
        escape("a|b <i>\n# h [x](y) `c` *d* \\| e_f ~/g"),
        "a&#124;b &lt;i&gt; &#35; h [x&#93;(y) &#96;c&#96; &#42;d&#42; &#92;&#124; e_f ~/g"
    );
    assert_eq!(escape("LD_LIBRARY_PATH=/usr/lib C:\\CUDA"), "LD_LIBRARY_PATH=/usr/lib C:\\CUDA");
    assert_eq!(escape("[0] RTX 4090 ![i](http://x/y.png)"), "[0] RTX 4090 ![i&#93;(http://x/y.png)");
    // A code span keeps the command as it is, backticks included, on one line.
    assert_eq!(code("echo `id` | tee"), "``echo `id` | tee``");
    assert_eq!(code("`id`"), "`` `id` ``");
    assert_eq!(code("pip install torch"), "`pip install torch`");
    assert_eq!(code("a\nb\u{1b}"), r"`a b\u{1b}`");
    assert_eq!(outside_code(&format!("x {} y `z", code("echo `<b>`"))), "x  y `z");
}

// One fact, one wording: what the terminal and the Markdown report say agrees with the findings
// and the window.

/// The detail lines of a section of `report`.
fn details(report: &Report, label: &str) -> Vec<String> {
    super::facts::sections(report).into_iter().find(|s| s.label == label).map(|s| s.details).unwrap_or_default()
}

#[test]
fn a_capability_known_by_the_name_is_shown_as_the_findings_know_it() {
    // The RTX 3090 of a machine (or a paste) that did not report its compute capability.
    let mut report = crate::render::html::tests::fixture_report("two-toolkits");
    let mut snap = report.snapshot.clone();
    if let gpu_doctor_model::Probed::Found { value, .. } = &mut snap.gpus {
        value[0].compute_capability = None;
        value[0].architecture = None;
    }
    report.snapshot = snap;
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let view = gpu_doctor_judge::diagnose::gpu_view(&report.snapshot.gpus.value().unwrap()[0], kb);
    assert!(view.describe().contains("compute capability 8.6 by its name"), "{}", view.describe());
    let line = details(&report, "GPUs").remove(0);
    assert!(line.contains("compute capability 8.6 (Ampere, by its name)"), "{line}");
    assert!(super::text::summary(&report, false, false).contains("8.6 (Ampere, by its name)"));
    assert!(super::markdown::report(&report).contains("8.6 (Ampere, by its name)"));
    // Reported by the driver: no "by its name".
    let plain = crate::render::html::tests::fixture_report("two-toolkits");
    assert!(details(&plain, "GPUs")[0].contains("compute capability 8.6 (Ampere) ·"), "{:?}", details(&plain, "GPUs"));
}

/// The driver probe of a Linux machine whose only word on the driver is `/proc/driver/nvidia/version`.
fn driver_from_proc_only(version: &str) -> gpu_doctor_model::Probed<gpu_doctor_model::DriverFacts> {
    use gpu_doctor_model::{OsFamily, Platform};
    use gpu_doctor_probes::host::{Fixture, Host, NvmlAnswer, ReplayHost};
    use gpu_doctor_probes::probe::driver::{SmiXml, probe};
    let mut f = Fixture::new(Platform { os: OsFamily::Linux, arch: "x86_64".into() });
    let line = format!("NVRM version: NVIDIA UNIX x86_64 Kernel Module  {version}  Fri Jul 14 2023\n");
    f.files.insert("/proc/driver/nvidia/version".into(), line);
    f.nvml = NvmlAnswer::Error("libnvidia-ml.so.1: cannot open shared object file".into());
    let host = ReplayHost::new(f);
    probe(&host, &host.nvml(), &SmiXml::default(), &mut gpu_doctor_model::Trace::new("driver"))
}

#[test]
fn a_driver_found_through_proc_shows_the_cuda_level_the_findings_use() {
    let mut report = crate::render::html::tests::fixture_report("two-toolkits");
    report.snapshot.driver = driver_from_proc_only("535.86.05");
    let headline = super::facts::sections(&report).into_iter().find(|s| s.label == "Driver").unwrap().headline;
    assert_eq!(
        headline,
        "NVIDIA 535.86.05 (supports CUDA up to 12.2, by its version), via /proc/driver/nvidia/version"
    );
    assert!(super::text::summary(&report, false, false).contains("supports CUDA up to 12.2, by its version"));
    assert!(super::markdown::report(&report).contains("supports CUDA up to 12.2, by its version"));
    // A driver that reports its level says so without the note.
    let plain = crate::render::html::tests::fixture_report("two-toolkits");
    let headline = super::facts::sections(&plain).into_iter().find(|s| s.label == "Driver").unwrap().headline;
    assert!(headline.contains("(supports CUDA up to 12.2), via nvml"), "{headline}");
}

#[test]
fn the_deep_probe_cudnn_reads_as_a_version() {
    use gpu_doctor_model::{DeepFacts, DeepTorch};
    let mut report = crate::render::html::tests::fixture_report("consumer-gpu-torch-venv");
    let mut snap = report.snapshot.clone();
    if let gpu_doctor_model::Probed::Found { value, .. } = &mut snap.python_envs {
        let env = value.iter_mut().find(|e| !e.frameworks.is_empty()).unwrap();
        let torch = DeepTorch {
            cuda_available: Some(true),
            device_count: Some(1),
            cudnn_version: Some(92600),
            ..DeepTorch::default()
        };
        env.deep =
            Some(gpu_doctor_model::Probed::found(DeepFacts { torch: Some(torch), ..DeepFacts::default() }, "probe"));
    }
    report.snapshot = snap;
    let lines = details(&report, "Python");
    let deep = lines.iter().find(|l| l.contains("import torch")).unwrap();
    assert!(deep.contains("cuDNN 9.26.0") && !deep.contains("92600"), "{deep}");
}

#[test]
fn an_environment_shows_its_companion_packages_on_one_line() {
    // The recorded venv holds numpy beside torch: one compact line, in the summary, Markdown and HTML.
    let report = crate::render::html::tests::fixture_report("consumer-gpu-torch-venv");
    let lines = details(&report, "Python");
    let companions: Vec<&String> = lines.iter().filter(|l| l.contains("companions:")).collect();
    assert_eq!(companions, ["  companions: numpy 1.26.4"], "{lines:#?}");
    assert!(super::text::summary(&report, false, false).contains("companions: numpy 1.26.4"));
    assert!(super::markdown::report(&report).contains("companions: numpy 1.26.4"));
    let html = super::document::document(&report, None, Format::Html, false).unwrap();
    assert!(html.contains("companions: numpy 1.26.4"));
    let json = super::document::document(&report, None, Format::Json, false).unwrap();
    let json: Value = serde_json::from_str(&json).unwrap();
    let envs = json.pointer("/snapshot/python_envs/value").and_then(Value::as_array).unwrap();
    assert!(envs.iter().any(|e| e["companions"][0]["name"] == "numpy"), "{envs:#?}");
    // An environment without any shows no such line.
    let mut bare = report;
    if let gpu_doctor_model::Probed::Found { value, .. } = &mut bare.snapshot.python_envs {
        value.iter_mut().for_each(|e| e.companions.clear());
    }
    assert!(details(&bare, "Python").iter().all(|l| !l.contains("companions")));
}
