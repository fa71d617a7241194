#![allow(clippy::unwrap_used)]

use gpu_doctor_model::SystemInfo;
use gpu_doctor_model::{Probed, Report, Snapshot};

use super::*;

/// A report as `gpu-doctor report --format json` prints it, naming `host` (or no host).
pub fn report_json(host: Option<&str>) -> String {
    let mut snap = Snapshot::unknown(vec![]);
    snap.system = Probed::found(SystemInfo { host_name: host.map(str::to_owned), ..SystemInfo::default() }, "test");
    serde_json::to_string_pretty(&Report::new(snap, vec![])).unwrap() + "\n"
}

/// Writes an executable script. Linux refuses to exec a file that any process holds open for
/// writing (ETXTBSY), and a file written by this process stays open in every child another test
/// thread forks at that moment until that child execs. So the bytes go to a side file and
/// `install` (a child of its own) writes the script: no process that can fork holds it open. (The
/// app's test binaries have the same helper in `app/tests/support/`.)
pub fn write_executable(path: &std::path::Path, text: &str) {
    let side = path.with_extension("text");
    std::fs::write(&side, text).unwrap();
    let status = std::process::Command::new("install").arg("-m").arg("0755").arg(&side).arg(path).status().unwrap();
    assert!(status.success(), "install {} failed", path.display());
    std::fs::remove_file(&side).unwrap();
}

fn printed(status: i32, stdout: &str, stderr: &str) -> CmdOutput {
    CmdOutput { status: Some(status), stdout: stdout.into(), stderr: stderr.into() }
}

#[test]
fn a_missing_gpu_doctor_is_known_by_its_exit_code_or_the_shells_words() {
    let no_exit_code = |stderr: &str| CmdOutput { status: None, stdout: String::new(), stderr: stderr.into() };
    for said in [
        "gpu-doctor-fleet: 1: exec: gpu-doctor: not found",
        "gpu-doctor-fleet: line 1: exec: /opt/gd/gpu-doctor: cannot execute: No such file or directory",
        "bash: line 1: gpu-doctor: command not found",
    ] {
        assert_eq!(judge(&no_exit_code(said)), NodeResult::Outcome(NodeOutcome::NoGpuDoctor { reason: said.into() }));
    }
    // gpu-doctor's own complaint about a file is not a missing gpu-doctor.
    let own = "gpu-doctor: --python: /opt/venv/bin/python: not found";
    assert_eq!(judge(&printed(3, "", own)), NodeResult::Outcome(NodeOutcome::Failed { reason: own.into() }));
    assert!(matches!(judge(&printed(127, "", "")), NodeResult::Outcome(NodeOutcome::NoGpuDoctor { .. })));
}

#[test]
fn file_names_are_safe_and_never_the_manifest() {
    assert_eq!(file_stem("gpu-07.cluster.local"), "gpu-07.cluster.local");
    assert_eq!(file_stem("../../etc/passwd"), "_._.._etc_passwd");
    assert_eq!(file_stem("a b/c\\d\n"), "a_b_c_d_");
    assert_eq!(file_stem(".hidden"), "_hidden");
    assert_eq!(file_stem(""), "node-");
    assert_eq!(file_stem("fleet"), "node-fleet");
    assert_eq!(file_stem(&"x".repeat(300)).len(), 100);
    assert_eq!(file_stem("-rf"), "_rf", "a file name is never an option to the next tool");
    assert_eq!(file_stem("--output=x"), "_-output_x");
}

#[test]
fn a_banner_with_braces_before_the_report_and_text_after_it_do_not_hide_it() {
    let report = report_json(Some("gpu07"));
    let printed_text = format!("Welcome {{user}}!\n{{ maintenance at 18:00 }}\n{report}logout\n{{\n");
    match judge(&printed(0, &printed_text, "")) {
        NodeResult::Report { text, host, .. } => {
            assert_eq!(host.as_deref(), Some("gpu07"));
            assert_eq!(text, report, "only the report's own JSON is kept");
        }
        other => panic!("{other:?}"),
    }
    // Many braces, none of them a report: refused, quickly.
    let braces = "{\n".repeat(100_000);
    let started = std::time::Instant::now();
    assert!(parse_report(&braces).is_none());
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[cfg(unix)]
#[test]
fn reports_never_replace_a_file_the_folder_does_not_own_nor_write_through_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::fs::write(dir.path().join("package.json"), "{\"name\": \"unrelated\"}").unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join("gpu01.json")).unwrap();
    let mut folder = Folder::open(dir.path(), "ssh", "t".into(), false).unwrap();
    let report = |host: &str| NodeResult::Report {
        text: report_json(Some(host)),
        host: Some(host.to_owned()),
        certificate: None,
    };
    let a = folder.add("a", report("package"), None).unwrap();
    let b = folder.add("b", report("gpu01"), None).unwrap();
    let c = folder.add("c", report("-rf"), None).unwrap();
    assert_eq!(a.outcome, NodeOutcome::Reported { file: "package-2.json".into() });
    assert_eq!(b.outcome, NodeOutcome::Reported { file: "gpu01-2.json".into() });
    assert_eq!(c.outcome, NodeOutcome::Reported { file: "_rf.json".into() });
    assert_eq!(std::fs::read_to_string(dir.path().join("package.json")).unwrap(), "{\"name\": \"unrelated\"}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(std::fs::symlink_metadata(dir.path().join("gpu01.json")).unwrap().file_type().is_symlink());

    // The manifest was written as the nodes finished; a run over it replaces its own files.
    let manifest: Manifest =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(MANIFEST_FILE)).unwrap()).unwrap();
    assert!(!manifest.nodes.is_empty(), "no manifest while nodes finish");
    folder.finish().unwrap();
    let mut again = Folder::open(dir.path(), "ssh", "t2".into(), false).unwrap();
    let a2 = again.add("a", report("package"), None).unwrap();
    assert_eq!(a2.outcome, NodeOutcome::Reported { file: "package-2.json".into() });
    // A planted fleet.json symlink is never written through.
    std::fs::remove_file(dir.path().join(MANIFEST_FILE)).unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join(MANIFEST_FILE)).unwrap();
    let mut planted = Folder::open(dir.path(), "ssh", "t3".into(), false).unwrap();
    assert!(planted.add("z", NodeResult::Outcome(NodeOutcome::TimedOut), None).is_err());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}

#[test]
fn many_nodes_naming_one_host_each_get_a_file_in_linear_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut folder = Folder::open(dir.path(), "ssh", "t".into(), false).unwrap();
    let text = report_json(Some("same"));
    let started = std::time::Instant::now();
    for i in 0..2000 {
        let result = NodeResult::Report { text: text.clone(), host: Some("same".into()), certificate: None };
        folder.add(&format!("n{i}"), result, None).unwrap();
    }
    let took = started.elapsed();
    eprintln!("2000 nodes of one host name: {took:?}");
    let files: HashSet<&str> = folder
        .manifest()
        .nodes
        .iter()
        .filter_map(|n| match &n.outcome {
            NodeOutcome::Reported { file } => Some(file.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(files.len(), 2000);
    assert!(files.contains("same.json") && files.contains("same-2000.json"));
    assert!(took < std::time::Duration::from_secs(60), "{took:?}");
}

#[test]
fn a_report_after_a_login_banner_is_a_report_named_by_its_host() {
    let out = printed(0, &format!("Welcome to rack 3\n{}", report_json(Some("gpu07"))), "");
    match judge(&out) {
        NodeResult::Report { text, host, .. } => {
            assert_eq!(host.as_deref(), Some("gpu07"));
            assert!(text.starts_with('{'));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        judge(&printed(0, "{\"not\": \"a report\"}", "")),
        NodeResult::Outcome(NodeOutcome::Failed { reason: "the output is not a gpu-doctor report".into() })
    );
    assert_eq!(judge(&printed(2, "", "")), NodeResult::Outcome(NodeOutcome::Failed { reason: "exit code 2".into() }));
}

#[test]
fn reports_are_written_by_host_and_two_nodes_with_one_host_name_keep_both() {
    let dir = tempfile::tempdir().unwrap();
    let mut folder = Folder::open(dir.path(), "ssh", "2026-11-23T00:00:00Z".into(), false).unwrap();
    let report = |host: Option<&str>| NodeResult::Report {
        text: report_json(host),
        host: host.map(str::to_owned),
        certificate: None,
    };
    let a = folder.add("me@10.0.0.1", report(Some("gpu01")), Some(1.0)).unwrap();
    let b = folder.add("10.0.0.2", report(Some("gpu01")), Some(1.0)).unwrap();
    let c = folder.add("n3", report(None), None).unwrap();
    assert_eq!(a.outcome, NodeOutcome::Reported { file: "gpu01.json".into() });
    assert_eq!(b.outcome, NodeOutcome::Reported { file: "gpu01-2.json".into() });
    assert_eq!((c.host.as_str(), c.outcome.clone()), ("n3", NodeOutcome::Reported { file: "n3.json".into() }));
    // The same node again keeps its own file.
    let a2 = folder.add("me@10.0.0.1", report(Some("gpu01")), None).unwrap();
    assert_eq!(a2.outcome, NodeOutcome::Reported { file: "gpu01.json".into() });
    folder.finish().unwrap();
    for f in ["gpu01.json", "gpu01-2.json", "n3.json"] {
        assert!(parse_report(&std::fs::read_to_string(dir.path().join(f)).unwrap()).is_some(), "{f}");
    }
    let manifest: Manifest =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(MANIFEST_FILE)).unwrap()).unwrap();
    assert_eq!(manifest.engine, "ssh");
    assert_eq!(manifest.nodes.len(), 3);
}

#[test]
fn missing_only_keeps_the_reported_nodes_and_replaces_the_others_rows() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = Folder::open(dir.path(), "ssh", "t0".into(), false).unwrap();
    first
        .add("a", NodeResult::Report { text: report_json(Some("a")), host: Some("a".into()), certificate: None }, None)
        .unwrap();
    first.add("b", NodeResult::Outcome(NodeOutcome::TimedOut), None).unwrap();
    first.add("c", NodeResult::Outcome(NodeOutcome::Unreachable { reason: "no route".into() }), None).unwrap();
    first.finish().unwrap();

    assert!(Folder::open(&dir.path().join("none"), "ssh", "t1".into(), true).is_err());
    let broken = tempfile::tempdir().unwrap();
    std::fs::write(broken.path().join(MANIFEST_FILE), "{\"engine\": \"ssh\", \"nodes\": \"ghp_TOKEN\"}").unwrap();
    let err = format!("{:#}", Folder::open(broken.path(), "ssh", "t1".into(), true).unwrap_err());
    assert!(err.contains("not a fleet manifest (line 1") && !err.contains("TOKEN"), "{err}");
    let mut again = Folder::open(dir.path(), "ssh", "t1".into(), true).unwrap();
    assert_eq!(again.missing(), ["b", "c"]);
    again
        .add("b", NodeResult::Report { text: report_json(Some("b")), host: Some("b".into()), certificate: None }, None)
        .unwrap();
    again.finish().unwrap();
    let nodes = &again.manifest().nodes;
    assert_eq!(nodes.iter().map(|n| n.engine_name.as_str()).collect::<Vec<_>>(), ["a", "b", "c"]);
    assert_eq!(again.missing(), ["c"]);
    assert_eq!(counts(again.manifest()), (2, 1));
    assert_eq!(again.manifest().started, "t1");
}

#[test]
fn the_start_time_is_rfc3339_utc() {
    let now = now_rfc3339();
    assert_eq!(now.len(), 20, "{now}");
    assert!(now.ends_with('Z') && now.as_bytes()[10] == b'T', "{now}");
    assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    assert_eq!(rfc3339(1_795_470_815), "2026-11-23T21:53:35Z");
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config { cases: 64, ..Default::default() })]

    /// Whatever a node prints (banners, braces, cut JSON), judging it never panics, and a report
    /// on a line of its own is found whatever comes before and after it.
    #[test]
    fn any_output_is_judged_and_a_report_between_any_texts_is_found(
        before in "[^\\n]{0,200}",
        after in "\\PC{0,200}",
        junk in "\\PC{0,400}",
        status in proptest::option::of(0i32..256),
    ) {
        let out = CmdOutput { status, stdout: junk.clone(), stderr: junk };
        let _ = judge(&out);
        let report = report_json(Some("gpu07"));
        let printed_text = format!("{before}\n{report}{after}");
        match judge(&printed(0, &printed_text, "")) {
            NodeResult::Report { host, .. } => proptest::prop_assert_eq!(host.as_deref(), Some("gpu07")),
            other => proptest::prop_assert!(false, "{other:?}"),
        }
    }
}

/// A sealed certificate as `certify --json` prints it.
fn certificate_json(verdict: gpu_doctor_model::certify::Verdict) -> String {
    use gpu_doctor_model::certify::{CERTIFICATE_SCHEMA_VERSION, Certificate, Level, MachineIdentity};
    let mut c = Certificate {
        schema_version: CERTIFICATE_SCHEMA_VERSION,
        verdict,
        reasons: vec!["FAIL (software): a reason".into()],
        level: Level::Quick,
        started_at_unix_secs: 1_700_000_000,
        duration_secs: 1.0,
        tool_version: "t".into(),
        kb_version: "k".into(),
        origin: "this machine".into(),
        machine: MachineIdentity::default(),
        stages: Vec::new(),
        sha256: String::new(),
    };
    c.seal().unwrap();
    serde_json::to_string_pretty(&c).unwrap() + "\n"
}

#[test]
fn the_node_script_runs_the_report_then_certify_into_a_folder_it_removes() {
    assert_eq!(node_script("gpu-doctor", None), "gpu-doctor report --format json");
    assert_eq!(
        node_script(r#""$1""#, Some(3)),
        r#""$1" report --format json; d=$(mktemp -d) && "$1" -q certify --level 3 --json --out "$d"; s=$?; rm -rf "$d"; exit $s"#
    );
}

#[test]
fn a_certificate_printed_after_the_report_is_kept_beside_it_and_compare_reads_its_verdict() {
    use gpu_doctor_model::certify::Verdict;
    // A banner, the report, the certificate, as the node script prints them.
    let stdout = format!("Welcome to gpu07\n{}{}", report_json(Some("gpu07")), certificate_json(Verdict::Fail));
    let result = judge(&printed(1, &stdout, ""));
    let NodeResult::Report { host, certificate, .. } = &result else { panic!("{result:?}") };
    assert_eq!(host.as_deref(), Some("gpu07"));
    assert!(certificate.as_deref().is_some_and(|c| c.contains("\"verdict\": \"FAIL\"")), "{certificate:?}");
    // Without --certify (or an older gpu-doctor on the node): a report without a certificate.
    let plain = judge(&printed(0, &report_json(Some("gpu08")), ""));
    assert!(matches!(plain, NodeResult::Report { certificate: None, .. }));

    let dir = tempfile::tempdir().unwrap();
    let mut folder = Folder::open(dir.path(), "ssh", "t".into(), false).unwrap();
    let entry = folder.add("gpu07", result, Some(1.0)).unwrap();
    assert_eq!(entry.certificate.as_deref(), Some("gpu07.certificate.json"));
    folder.add("gpu08", plain, Some(1.0)).unwrap();
    folder.finish().unwrap();
    let written: gpu_doctor_model::certify::Certificate =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("gpu07.certificate.json")).unwrap()).unwrap();
    assert!(written.intact().unwrap(), "kept as printed, its hash holds");

    let read = |p: &std::path::Path, _| std::fs::read(p).map_err(|e| e.to_string());
    for listing in [false, true] {
        if listing {
            std::fs::remove_file(dir.path().join(MANIFEST_FILE)).unwrap();
        }
        let nodes = gpu_doctor_judge::fleet::compare::read_folder(dir.path(), &read).unwrap();
        assert_eq!(nodes.len(), 2, "the certificate file is not read as a node's report (listing: {listing})");
        let c = gpu_doctor_judge::fleet::compare::compare(nodes);
        assert_eq!(c.nodes[0].host, "gpu07", "the failed node first");
        assert_eq!(c.nodes[0].certificate.as_ref().map(|c| c.label()).as_deref(), Some("FAIL (level 2)"));
        assert_eq!(c.nodes[1].certificate, None);
    }
}
