//! Pasted gpu-doctor reports from other versions: a value this version does not know, a newer
//! schema, a report that cannot be read at all; and text cut short.

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;

use super::*;
use crate::host::ReplayHost;
use crate::probe::{Options, collect};

fn fixtures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// The replay scenarios (every folder of `tests/fixtures`), between them every kind of value a
/// report carries.
fn scenarios() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures())
        .unwrap()
        .filter_map(|e| e.ok().filter(|e| e.path().is_dir()).map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    names.sort();
    assert!(names.len() >= 9, "the replay scenarios are missing: {names:?}");
    names
}

/// A whole report of a replayed machine, as JSON.
pub(super) fn report_of(scenario: &str) -> Value {
    let dir = fixtures().join(scenario);
    let host = ReplayHost::load(&dir).unwrap();
    let snap = collect(&host, &Options::default());
    let findings = gpu_doctor_judge::diagnose::diagnose(&snap, kb());
    serde_json::to_value(gpu_doctor_model::Report::new(snap, findings)).unwrap()
}

/// Every string in `v` with its path (object keys and array indices).
fn strings(v: &Value, path: &mut Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    match v {
        Value::String(s) => out.push((path.clone(), s.clone())),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(i.to_string());
                strings(item, path, out);
                path.pop();
            }
        }
        Value::Object(map) => {
            for (k, item) in map {
                path.push(k.clone());
                strings(item, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn at<'a>(v: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    path.iter().try_fold(v, |v, key| match v {
        Value::Array(items) => items.get_mut(key.parse::<usize>().ok()?),
        Value::Object(map) => map.get_mut(key),
        _ => None,
    })
}

fn notes(s: &Snapshot) -> String {
    s.notes.join("\n")
}

/// Each string of a real report that names an enum value (changed to a value this version does not
/// know, it is refused or read as something else) is changed to a future value; the report is still
/// read as a report, that value reads as `unknown`, and a note says so.
#[test]
fn a_value_this_version_does_not_know_reads_as_unknown() {
    let mut tried = HashSet::new();
    let mut enums = HashSet::new();
    for scenario in scenarios() {
        let report = report_of(&scenario);
        let mut all = Vec::new();
        strings(&report, &mut Vec::new(), &mut all);
        for (path, original) in all {
            // One try per place in the shape (indices dropped) and value.
            let shape: Vec<&str> =
                path.iter().map(|k| if k.parse::<usize>().is_ok() { "#" } else { k.as_str() }).collect();
            if !tried.insert((shape.join("."), original.clone())) {
                continue;
            }
            let mut changed = report.clone();
            *at(&mut changed, &path).unwrap() = Value::String("from_the_future".into());
            let text = serde_json::to_string_pretty(&changed).unwrap();
            // An enum value: refused as an unknown variant, or read as some other value.
            let is_enum = match serde_json::from_str::<gpu_doctor_model::Report>(&text) {
                Err(e) => e.to_string().contains("unknown variant"),
                Ok(r) => {
                    let mut back = serde_json::to_value(r).unwrap();
                    at(&mut back, &path).is_none_or(|v| *v != Value::String("from_the_future".into()))
                }
            };
            if !is_enum {
                continue;
            }
            let place = format!("{scenario}: {} ({original:?})", path.join("."));
            enums.insert(shape.join("."));
            let s = read_pasted(&text, kb()).unwrap_or_else(|e| panic!("{place}: not read: {e}"));
            assert_eq!(formats(&s), ["gpu-doctor report"], "{place}: another reader took the text");
            // Findings are made anew from the snapshot, so theirs are not read at all.
            let Some(in_snapshot) = path.strip_prefix(&["snapshot".to_owned()]) else { continue };
            assert!(notes(&s).contains("from_the_future"), "{place}: no note: {:?}", s.notes);
            if in_snapshot.first().map(String::as_str) == Some("origin") {
                continue; // a pasted report's origin is always `pasted`
            }
            let mut back = serde_json::to_value(&s).unwrap();
            let value = at(&mut back, in_snapshot).unwrap_or_else(|| panic!("{place}: gone from the snapshot"));
            assert_eq!(*value, Value::String("unknown".into()), "{place}");
        }
    }
    // One place of every enum a snapshot carries is exercised; a new place joins by itself.
    for must in [
        "snapshot.driver.status",
        "snapshot.origin.kind",
        "snapshot.platform.platform.os",
        "snapshot.secure_boot.value",
        "snapshot.links.value.#.egpu.via",
        "snapshot.toolkits.value.installs.#.kind",
        "snapshot.toolkits.value.installs.#.version_source",
        "snapshot.cudnn.value.#.kind",
        "snapshot.cudnn.value.#.version_source",
        "snapshot.python_envs.value.#.kind",
        "snapshot.python_envs.value.#.frameworks.#.build.kind",
        "snapshot.trace.#.outcome",
    ] {
        assert!(enums.contains(must), "{must} not exercised: {enums:?}");
    }
}

#[test]
fn a_report_of_a_newer_schema_is_read_with_a_warning() {
    let mut report = report_of("consumer-gpu-torch-venv");
    report["schema_version"] = 99.into();
    report["snapshot"]["schema_version"] = 99.into();
    report["snapshot"]["a_field_from_the_future"] = "x".into();
    let s = read(&serde_json::to_string(&report).unwrap());
    assert_eq!(formats(&s), ["gpu-doctor report"]);
    assert!(notes(&s).contains("schema 99"), "{:?}", s.notes);
    let findings = gpu_doctor_judge::diagnose::diagnose(&s, kb());
    let f = findings.iter().find(|f| f.id == "pasted.partly_read").expect("a warning finding");
    assert_eq!(f.severity, gpu_doctor_model::Severity::Warning);
    assert!(f.evidence.iter().any(|e| e.contains("schema 99")), "{f:?}");
    // This version's own schema raises nothing.
    let s = read(&serde_json::to_string(&report_of("consumer-gpu-torch-venv")).unwrap());
    assert!(s.notes.is_empty(), "{:?}", s.notes);
    assert!(!gpu_doctor_judge::diagnose::diagnose(&s, kb()).iter().any(|f| f.id == "pasted.partly_read"));
}

/// A report saved before the probes stored the driver's CUDA level has only the driver's version:
/// reading it back looks the level up by version, so the rules and the planners see it as they see
/// a probed one (and say it was looked up).
#[test]
fn a_saved_report_without_the_drivers_cuda_level_gets_it_by_version() {
    let mut report = report_of("consumer-gpu-torch-venv");
    let driver = &mut report["snapshot"]["driver"]["value"];
    let probed = driver["cuda_version"].clone();
    assert!(probed.is_string(), "the scenario's driver reports its CUDA level: {driver}");
    let obj = driver.as_object_mut().unwrap();
    obj.remove("cuda_version");
    obj.remove("cuda_version_derived");
    let s = read(&serde_json::to_string(&report).unwrap());
    let d = s.driver.value().expect("the driver");
    let by_version = kb().cuda.max_cuda_for_driver(&d.version, s.platform.platform.os).unwrap();
    assert_eq!(d.cuda_version, Some(by_version), "{d:?}");
    assert!(d.cuda_version_derived, "{d:?}");
}

/// A report this version cannot read at all (here a part that changed shape) is an error that says
/// so; the other readers do not pick facts out of its JSON.
#[test]
fn an_unreadable_report_is_an_error_not_facts_from_other_readers() {
    let mut report = report_of("consumer-gpu-torch-venv");
    report["snapshot"]["gpus"] = Value::String("NVIDIA-SMI 550.54 Driver Version: 550.54.14 CUDA Version: 12.4".into());
    report["snapshot"]["messages"] = serde_json::json!("Torch not compiled with CUDA enabled");
    let text = serde_json::to_string_pretty(&report).unwrap();
    let err = read_pasted(&text, kb()).unwrap_err().to_string();
    // The reader's own words, not the "nothing recognised" list, which names gpu-doctor reports too.
    assert!(err.contains("a gpu-doctor report that this version cannot read"), "{err}");
}

#[test]
fn nvidia_smi_xml_cut_short_says_so() {
    let xml = crate::parse::smi_xml::tests::SAMPLE;
    let cut = &xml[..xml.len() / 2];
    let text = format!("{cut}\nPyTorch version: 2.3.0\nIs CUDA available: True\n");
    let s = read(&text);
    assert!(notes(&s).contains("nvidia-smi XML") && notes(&s).contains("cut"), "{:?}", s.notes);
    // Alone, nothing is recognised, and the notes say that the XML was cut.
    let s = read_pasted(cut, kb()).unwrap();
    assert!(notes(&s).contains("nvidia-smi XML") && notes(&s).contains("cut"), "{:?}", s.notes);
    assert!(notes(&s).contains("nothing gpu-doctor recognises"), "{:?}", s.notes);
}

/// A report written before credentials were masked (or edited by hand) is masked as it is read, so
/// the rules and every view see what a live probe would give them.
#[test]
fn a_pasted_reports_credentials_are_masked_as_it_is_read() {
    let mut report = report_of("consumer-gpu-torch-venv");
    let vars = &mut report["snapshot"]["env"]["vars"];
    vars["NVIDIA_API_KEY"] = Value::String("nvapi-s3cr3t-1".into());
    vars["CUDA_PROXY"] = Value::String("http://alice:s3cr3t-2@proxy.example:3128".into());
    let s = read(&serde_json::to_string_pretty(&report).unwrap());
    let text = serde_json::to_string(&s).unwrap();
    assert!(!text.contains("s3cr3t"), "{text}");
    assert_eq!(s.env.vars["NVIDIA_API_KEY"], gpu_doctor_model::MASKED);
    assert_eq!(s.env.vars["CUDA_PROXY"], format!("http://{}@proxy.example:3128", gpu_doctor_model::MASKED));
}
