#![allow(clippy::unwrap_used)]

use std::sync::Mutex;

use super::*;

use crate::ops::fleet::tests::{report_json, write_executable};

fn plan(dir: &Path) -> SlurmPlan {
    SlurmPlan {
        partition: Some("gpu".into()),
        nodelist: Some("gpu[01-03]".into()),
        bin: "/shared/bin/gpu-doctor".into(),
        srun_args: vec!["--time=10".into()],
        dir: dir.to_path_buf(),
        timeout: Duration::from_secs(600),
        ..SlurmPlan::default()
    }
}

/// `scontrol show hostnames` as SLURM answers it: one name per line.
fn scontrol(calls: &Mutex<Vec<Vec<String>>>) -> impl Fn(&Cmd) -> Result<CmdOutput, HostError> + Sync + '_ {
    move |cmd: &Cmd| {
        calls.lock().unwrap().push(cmd.argv.clone());
        assert_eq!(cmd.argv[..3], ["scontrol", "show", "hostnames"]);
        let names = match cmd.argv[3].as_str() {
            "gpu[01-03]" => "gpu01\ngpu02\ngpu03\n",
            "gpu[01-02]" => "gpu01\ngpu02\n",
            other => panic!("unexpected list {other}"),
        };
        Ok(CmdOutput { status: Some(0), stdout: names.into(), stderr: String::new() })
    }
}

#[test]
fn srun_runs_one_task_per_node_writing_per_node_files_into_the_folder() {
    let cmd = plan(Path::new("/shared/fleet")).command();
    assert_eq!(
        cmd.argv,
        [
            "srun",
            "--partition=gpu",
            "--nodelist=gpu[01-03]",
            "--ntasks-per-node=1",
            "--output=/shared/fleet/.slurm/%N.out",
            "--error=/shared/fleet/.slurm/%N.err",
            "--time=10",
            "sh",
            "-c",
            WRAP,
            "gpu-doctor-fleet",
            "/shared/bin/gpu-doctor",
            "/shared/fleet/.slurm/nodelist",
        ]
    );
    assert_eq!(cmd.timeout, Duration::from_secs(600));
}

#[test]
fn with_certify_the_wrapper_runs_the_report_then_certify_and_exits_with_certifys_status() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("nodelist");
    let bin = dir.path().join("fake");
    // certify's files go into the folder it is given: the fake says where, and that it is there.
    write_executable(
        &bin,
        "#!/bin/sh\necho \"ran: $*\"\nfor a; do out=$a; done\n[ -d \"$out\" ] && echo dir\nexit 6\n",
    );
    let out = std::process::Command::new("sh")
        .args(["-c", &wrap(Some(2)), "gpu-doctor-fleet"])
        .arg(&bin)
        .arg(&list)
        .env("SLURM_PROCID", "0")
        .env("SLURM_JOB_NODELIST", "gpu01")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "ran: report --format json");
    assert!(lines[1].starts_with("ran: -q certify --level 2 --json --out /"), "{stdout}");
    assert_eq!(lines[2], "dir", "the folder exists while certify runs");
    assert_eq!(out.status.code(), Some(6), "certify's exit status (INCOMPLETE)");
    assert_eq!(std::fs::read_to_string(&list).unwrap(), "gpu01\n");
    assert_eq!(wrap(None), WRAP);
    let cmd = SlurmPlan { certify: Some(2), ..plan(Path::new("/shared/fleet")) }.command();
    assert!(cmd.argv.iter().any(|a| a.contains("certify --level 2")), "{:?}", cmd.argv);
}

#[test]
fn the_wrapper_writes_the_node_list_from_task_0_only_and_becomes_gpu_doctor() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("nodelist");
    let bin = dir.path().join("fake");
    write_executable(&bin, "#!/bin/sh\necho \"ran: $*\"\n");
    let run = |procid: &str| {
        std::process::Command::new("sh")
            .args(["-c", WRAP, "gpu-doctor-fleet"])
            .arg(&bin)
            .arg(&list)
            .env("SLURM_PROCID", procid)
            .env("SLURM_JOB_NODELIST", "gpu[01-03]")
            .output()
            .unwrap()
    };
    let other = run("1");
    assert_eq!(String::from_utf8_lossy(&other.stdout), "ran: report --format json\n");
    assert!(!list.exists());
    run("0");
    assert_eq!(std::fs::read_to_string(&list).unwrap(), "gpu[01-03]\n");
    let missing = std::process::Command::new("sh")
        .args(["-c", WRAP, "gpu-doctor-fleet", "no-such-gpu-doctor-here"])
        .arg(&list)
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(127));
    let said = String::from_utf8_lossy(&missing.stderr).into_owned();
    let judged = judge(&CmdOutput { status: None, stdout: String::new(), stderr: said });
    assert!(matches!(judged, NodeResult::Outcome(NodeOutcome::NoGpuDoctor { .. })), "{judged:?}");
}

#[test]
fn sbcast_stages_the_binary_inside_salloc_and_removes_it() {
    let cmd = SlurmPlan { sbcast: true, nodelist: None, nodes: Some(4), ..plan(Path::new("/shared/f")) }.command();
    assert_eq!(cmd.argv[..4], ["salloc", "--partition=gpu", "--nodes=4", "--ntasks-per-node=1"]);
    assert_eq!(cmd.argv[4..6], ["sh", "-c"]);
    assert_eq!(cmd.argv[7..], ["gpu-doctor-fleet", "/shared/bin/gpu-doctor"]);
    let script = &cmd.argv[6];
    assert!(script.contains("sbcast --force \"$1\" \"$staged\" || exit 1\n"), "{script}");
    assert!(
        script.contains(
            "srun --ntasks-per-node=1 --output=/shared/f/.slurm/%N.out --error=/shared/f/.slurm/%N.err --time=10 \
             sh -c "
        ),
        "{script}"
    );
    assert!(script.contains(" gpu-doctor-fleet \"$staged\" /shared/f/.slurm/nodelist\n"), "{script}");
    assert!(script.contains("rm -f \"$staged\"\nexit $status\n"), "{script}");
    // The script is valid sh.
    let syntax = std::process::Command::new("sh").args(["-n", "-c", script]).status().unwrap();
    assert!(syntax.success());
}

#[test]
fn the_sbatch_script_asks_for_the_allocation_runs_the_step_and_collects() {
    let script = SlurmPlan { srun_args: vec!["--gres=gpu:1".into()], ..plan(Path::new("/shared/fleet")) }
        .sbatch_script()
        .unwrap();
    let lines: Vec<&str> = script.lines().collect();
    assert_eq!(lines[0], "#!/bin/sh");
    for l in [
        "#SBATCH --job-name=gpu-doctor-fleet",
        "#SBATCH --partition=gpu",
        "#SBATCH --nodelist=gpu[01-03]",
        "#SBATCH --ntasks-per-node=1",
        "set -- /shared/bin/gpu-doctor",
        "#SBATCH --output=/shared/fleet/.slurm/sbatch-%j.log",
        "\"$1\" fleet slurm --collect -o /shared/fleet",
    ] {
        assert!(lines.contains(&l), "{l} not in\n{script}");
    }
    assert!(script.contains("--error=/shared/fleet/.slurm/%N.err --gres=gpu:1 sh -c "), "{script}");
    assert!(std::process::Command::new("sh").args(["-n", "-c", &script]).status().unwrap().success());
    let err = SlurmPlan { partition: Some("gpu a".into()), ..plan(Path::new("/f")) }.sbatch_script();
    assert!(err.unwrap_err().to_string().contains("#SBATCH"));
}

#[test]
fn the_spaced_folder_cannot_go_on_an_sbatch_line() {
    // `#SBATCH --output=` holds the folder: sbatch would cut it at the space.
    let err = plan(Path::new("/shared/my fleet")).sbatch_script();
    assert!(err.is_err());
}

#[test]
fn collect_gives_every_allocated_node_a_row() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join(RAW_DIR);
    std::fs::create_dir_all(&raw).unwrap();
    std::fs::write(raw.join(NODELIST_FILE), "gpu[01-03]\n").unwrap();
    std::fs::write(raw.join("gpu01.out"), report_json(Some("gpu01.cluster"))).unwrap();
    std::fs::write(raw.join("gpu01.err"), "").unwrap();
    std::fs::write(raw.join("gpu02.out"), "").unwrap();
    std::fs::write(raw.join("gpu02.err"), "gpu-doctor-fleet: 1: exec: gpu-doctor: not found\n").unwrap();
    // gpu03 wrote nothing; gpu09 was not in the list but left output.
    std::fs::write(raw.join("gpu09.out"), "").unwrap();
    let calls = Mutex::new(Vec::new());
    let runner = scontrol(&calls);
    let mut folder = Folder::open(dir.path(), "slurm", "t".into(), false).unwrap();
    let mut ended = 0;
    let known = collect(dir.path(), None, &SrunEnd::Ok, &runner, &mut folder, &mut |_| ended += 1).unwrap();
    assert_eq!((known, ended), (4, 4));
    let rows: Vec<(&str, &str, String)> = folder
        .manifest()
        .nodes
        .iter()
        .map(|n| (n.engine_name.as_str(), n.host.as_str(), n.outcome.describe()))
        .collect();
    assert_eq!(rows[0], ("gpu01", "gpu01.cluster", "ok".into()));
    assert_eq!(rows[1].0, "gpu02");
    assert_eq!(rows[1].2, "no gpu-doctor: gpu-doctor-fleet: 1: exec: gpu-doctor: not found");
    assert_eq!(rows[2].0, "gpu03");
    assert!(rows[2].2.contains("no output arrived") && rows[2].2.contains("share"), "{}", rows[2].2);
    assert_eq!(rows[3], ("gpu09", "gpu09", "failed: printed no report".into()));
    assert!(dir.path().join("gpu01.cluster.json").exists());
}

#[test]
fn a_timed_out_or_failed_srun_is_the_reason_of_the_nodes_without_output() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(RAW_DIR)).unwrap();
    let calls = Mutex::new(Vec::new());
    let runner = scontrol(&calls);
    let mut folder = Folder::open(dir.path(), "slurm", "t".into(), false).unwrap();
    // No node list arrived: the one asked for is used.
    collect(dir.path(), Some("gpu[01-02]"), &SrunEnd::TimedOut, &runner, &mut folder, &mut |_| {}).unwrap();
    let outcomes: Vec<&NodeOutcome> = folder.manifest().nodes.iter().map(|n| &n.outcome).collect();
    assert_eq!(outcomes, [&NodeOutcome::TimedOut, &NodeOutcome::TimedOut]);
    let failed = SrunEnd::Failed("srun: error: Unable to allocate resources: Invalid partition name specified".into());
    collect(dir.path(), Some("gpu[01-02]"), &failed, &runner, &mut folder, &mut |_| {}).unwrap();
    assert_eq!(
        folder.manifest().nodes[0].outcome.describe(),
        "failed: no output: srun: error: Unable to allocate resources: Invalid partition name specified"
    );
}

#[test]
fn run_fails_loudly_when_srun_knows_no_node() {
    let dir = tempfile::tempdir().unwrap();
    let runner = |cmd: &Cmd| {
        assert_eq!(cmd.argv[0], "srun");
        Ok(CmdOutput {
            status: Some(1),
            stdout: String::new(),
            stderr: "srun: error: Unable to allocate resources: Invalid partition name specified\n".into(),
        })
    };
    let p = SlurmPlan { nodelist: None, ..plan(dir.path()) };
    let mut folder = Folder::open(dir.path(), "slurm", "t".into(), false).unwrap();
    prepare(&p, &folder, false).unwrap();
    let err = run(&p, &runner, &mut folder, &mut |_| {}).unwrap_err().to_string();
    assert!(err.contains("Invalid partition name"), "{err}");
}

#[test]
fn prepare_clears_only_the_output_the_earlier_run_had_written_and_never_through_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let p = plan(dir.path());
    let mut first = Folder::open(dir.path(), "slurm", "t0".into(), false).unwrap();
    prepare(&p, &first, false).unwrap();
    let raw = dir.path().join(RAW_DIR);
    let old = raw.join("gpu01.out");
    std::fs::write(&old, "old").unwrap();
    first.add("gpu01", NodeResult::Outcome(NodeOutcome::TimedOut), None).unwrap();
    first.finish().unwrap();
    // Files the tool never wrote: a user's notes, a node no run of this folder had.
    let notes = raw.join("notes.out");
    let other = raw.join("gpu77.err");
    std::fs::write(&notes, "mine").unwrap();
    std::fs::write(&other, "mine").unwrap();

    let again = Folder::open(dir.path(), "slurm", "t1".into(), true).unwrap();
    prepare(&p, &again, true).unwrap();
    assert!(old.exists(), "--missing-only keeps the earlier output");
    let fresh = Folder::open(dir.path(), "slurm", "t2".into(), false).unwrap();
    prepare(&p, &fresh, false).unwrap();
    assert!(!old.exists());
    assert!(notes.exists() && other.exists(), "files the tool never wrote were removed");

    // A symlinked .slurm is refused, and what it points to is left alone.
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("gpu01.out"), "precious").unwrap();
    let linked = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), linked.path().join(RAW_DIR)).unwrap();
    let mut folder = Folder::open(linked.path(), "slurm", "t".into(), false).unwrap();
    folder.add("gpu01", NodeResult::Outcome(NodeOutcome::TimedOut), None).unwrap();
    let folder = Folder::open(linked.path(), "slurm", "t".into(), false).unwrap();
    let err = prepare(&plan(linked.path()), &folder, false).unwrap_err().to_string();
    assert!(err.contains("symbolic link"), "{err}");
    assert!(elsewhere.path().join("gpu01.out").exists());
}

#[cfg(unix)]
#[test]
fn node_names_that_are_paths_and_outputs_that_are_not_regular_files_are_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join(RAW_DIR);
    std::fs::create_dir_all(&raw).unwrap();
    std::fs::write(dir.path().join("secret"), "token-123\n").unwrap();
    std::fs::write(raw.join(NODELIST_FILE), "hostile\n").unwrap();
    // A fifo no one writes (a blocking read hangs), a symlink to a private file, a huge file.
    assert!(std::process::Command::new("mkfifo").arg(raw.join("gpu01.out")).status().unwrap().success());
    std::os::unix::fs::symlink(dir.path().join("secret"), raw.join("gpu02.out")).unwrap();
    let huge = std::fs::File::create(raw.join("gpu03.out")).unwrap();
    huge.set_len(MAX_FILE_BYTES as u64 + 1).unwrap();
    let runner = |cmd: &Cmd| {
        assert_eq!(cmd.argv[..4], ["scontrol", "show", "hostnames", "hostile"]);
        let names = "gpu01\ngpu02\ngpu03\n../secret\n-rf\n";
        Ok(CmdOutput { status: Some(0), stdout: names.into(), stderr: String::new() })
    };
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let path = dir.path().to_path_buf();
    let collect_all = move || {
        let mut folder = Folder::open(&path, "slurm", "t".into(), false).unwrap();
        collect(&path, None, &SrunEnd::Ok, &runner, &mut folder, &mut |_| {}).unwrap();
        tx.send(folder.manifest().clone()).unwrap();
    };
    std::thread::Builder::new().name("collect".into()).spawn(collect_all).unwrap();
    let manifest = rx.recv_timeout(Duration::from_secs(30)).expect("collect hung on a fifo");
    let reason = |name: &str| manifest.nodes.iter().find(|n| n.engine_name == name).unwrap().outcome.describe();
    assert!(reason("gpu01").contains("not a regular file"), "{}", reason("gpu01"));
    assert!(reason("gpu02").contains("symbolic link"), "{}", reason("gpu02"));
    assert!(reason("gpu03").contains("larger than"), "{}", reason("gpu03"));
    for name in ["../secret", "-rf"] {
        assert!(reason(name).contains("not a plain node name"), "{name}: {}", reason(name));
    }
    let text = serde_json::to_string(&manifest).unwrap();
    assert!(!text.contains("token-123"), "a private file reached the manifest: {text}");
}
