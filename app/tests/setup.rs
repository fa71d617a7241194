//! `gpu-doctor setup` end to end, offline: a wheelhouse of tiny real wheels
//! (`installers/tests/support/wheelhouse.py`), a new venv made with pip, the chosen build
//! installed from it, the smoke test run in it, and the honest answer on a machine without a GPU.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_gpu-doctor");

mod support;
use support::{fixture, skip};

fn wheelhouse(dir: &Path) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../installers/tests/support/wheelhouse.py");
    let made = Command::new("python3").arg(script).arg(dir).status().unwrap();
    assert!(made.success());
}

#[test]
fn setup_builds_a_working_venv_from_a_wheelhouse_and_says_gpu_use_is_not_proven_here() {
    let venv_ok = Command::new("python3").args(["-c", "import ensurepip, venv"]).status().is_ok_and(|s| s.success());
    if !venv_ok {
        return skip("python3 with venv and ensurepip (python3-venv)");
    }
    let tmp = tempfile::tempdir().unwrap();
    let (wheels, env, home) = (tmp.path().join("wheels"), tmp.path().join("env"), tmp.path().join("home"));
    wheelhouse(&wheels);
    // Another environment on the machine (the active one): the check after the plan must not import
    // its frameworks (run its interpreter); only the plan's own environment's.
    let other = tmp.path().join("other");
    let imported = tmp.path().join("other-imported");
    std::fs::create_dir_all(other.join("bin")).unwrap();
    std::fs::create_dir_all(other.join("lib/python3.11/site-packages")).unwrap();
    std::fs::write(other.join("pyvenv.cfg"), "home = /usr/bin\ninclude-system-site-packages = false\n").unwrap();
    let fake = other.join("bin/python3");
    std::fs::write(&fake, format!("#!/bin/sh\ntouch '{}'\nexit 1\n", imported.display())).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::os::unix::fs::symlink("python3", other.join("bin/python")).unwrap();
    let run = |extra: &[&str]| {
        Command::new(BIN)
            .args(["setup", "--framework", "torch", "--tool", "pip", "--env"])
            .arg(&env)
            .arg("--find-links")
            .arg(&wheels)
            .args(extra)
            .env("GPU_DOCTOR_HOME", &home)
            .env("VIRTUAL_ENV", &other)
            .env_remove("PIP_FIND_LINKS")
            .env_remove("PIP_INDEX_URL")
            .output()
            .unwrap()
    };
    // The dry run changes nothing and names the choice.
    let shown = run(&[]);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.status.success(), "{text}{}", String::from_utf8_lossy(&shown.stderr));
    assert!(text.contains("chosen: 2.5.1+") && text.contains("not 2.5.1+"), "{text}");
    assert!(!env.exists());
    // Applied: the venv has the chosen build, the smoke test ran in it, and without a GPU the
    // answer is "not proven", with what it did check; on a machine without a GPU that is no
    // failure, so the exit code is 0 (issue 29: scripts and CI read 1 as failure).
    let applied = run(&["--apply", "--yes"]);
    let out = String::from_utf8_lossy(&applied.stdout);
    let err = String::from_utf8_lossy(&applied.stderr);
    assert_eq!(applied.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("GPU use could not be proven here") && out.contains("CPU matmul ok"), "{out}{err}");
    assert!(!imported.exists(), "the check after the plan ran another environment's interpreter");
    let chosen = text.lines().find_map(|l| l.strip_prefix("chosen: ")).unwrap().split(':').next().unwrap().to_owned();
    let version =
        Command::new(env.join("bin/python")).args(["-c", "import torch; print(torch.__version__)"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), chosen);
    // The log of the run is kept in the data folder.
    let logs: Vec<_> = std::fs::read_dir(home.join("installs")).unwrap().collect();
    assert!(!logs.is_empty());

    // Into the environment that now exists: its package list is saved first, and `fix --undo`
    // puts it back, removing what was installed after it.
    let again = run(&["--apply", "--yes"]);
    let err = String::from_utf8_lossy(&again.stderr);
    let backup = err
        .lines()
        .find_map(|l| l.strip_prefix("the environment's package list before: "))
        .unwrap_or_else(|| panic!("no backup named: {err}"))
        .to_owned();
    let python = env.join("bin/python");
    let extra = Command::new(&python)
        .args(["-m", "pip", "install", "--no-index", "--find-links"])
        .arg(&wheels)
        .arg("jax==0.4.35")
        .env_remove("PIP_FIND_LINKS")
        .output()
        .unwrap();
    assert!(extra.status.success(), "{}", String::from_utf8_lossy(&extra.stderr));
    let freeze = || {
        let out = Command::new(&python).args(["-m", "pip", "freeze", "--all"]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(freeze().contains("jax=="));
    assert!(err.contains(&format!("--env {}", env.display())), "the hint names the environment: {err}");
    // Without a terminal, undo asks for --yes and changes nothing.
    let undo = |extra: &[&str]| {
        Command::new(BIN)
            .args(["fix", "--undo", &backup, "--env"])
            .arg(&env)
            .args(extra)
            .env("GPU_DOCTOR_HOME", &home)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let refused = undo(&[]);
    assert_eq!(refused.status.code(), Some(2), "{}", String::from_utf8_lossy(&refused.stderr));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("add --yes"));
    assert!(freeze().contains("jax=="));
    let undone = undo(&["--yes"]);
    let said = String::from_utf8_lossy(&undone.stderr);
    assert!(undone.status.success(), "{said}");
    // It said what it removes before it did, and checked the list after.
    assert!(said.contains("REMOVE 2 package(s): jax, jaxlib") && said.contains("read again after the undo"), "{said}");
    let after = freeze();
    assert!(!after.contains("jax==") && after.contains(&format!("torch=={chosen}")), "{after}");
}

#[test]
fn fix_lists_shows_and_writes_root_steps_without_changing_anything() {
    let tmp = tempfile::tempdir().unwrap();
    let fix = |fixture_name: &str, args: &[&str]| {
        Command::new(BIN)
            .arg("--replay")
            .arg(fixture(fixture_name))
            .arg("fix")
            .args(args)
            .env("GPU_DOCTOR_HOME", tmp.path())
            .output()
            .unwrap()
    };
    let listed = fix("torch-cu130-on-r550", &[]);
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.status.success() && text.starts_with("driver.too_old_for_runtime "), "{text}");
    // --apply on a recorded machine is refused: it would change this one.
    let refused = fix("torch-cu130-on-r550", &["driver.too_old_for_runtime", "--apply", "--yes"]);
    assert_eq!(refused.status.code(), Some(2), "{}", String::from_utf8_lossy(&refused.stderr));
    assert_eq!(fix("torch-cu130-on-r550", &["no.such.plan"]).status.code(), Some(2));
    // A driver plan: its root steps go to a script for review, and only they.
    let script = tmp.path().join("root.sh");
    let written = fix("gpu-no-driver", &["presence.gpu_without_driver", "--root-script", script.to_str().unwrap()]);
    assert!(written.status.success(), "{}", String::from_utf8_lossy(&written.stderr));
    // The plan itself is shown, step by step, with each step's kind and why.
    let shown = String::from_utf8_lossy(&written.stdout);
    assert!(shown.starts_with("Plan presence.gpu_without_driver: "), "{shown}");
    // Root steps are run as root as a whole: shown as such, their commands without a sudo of their own.
    assert!(shown.contains("\n1. [root (you run it)] apt ") && shown.contains("\n   why: "), "{shown}");
    assert!(!shown.contains("] sudo "), "{shown}");
    let body = std::fs::read_to_string(&script).unwrap();
    assert!(body.starts_with("#!/bin/sh\n") && body.contains("set -e") && body.contains("as root"), "{body}");
    assert!(!body.contains("sudo "), "{body}");
    assert!(!body.contains("Reboot"), "manual steps are not script lines: {body}");
}

#[test]
fn fix_with_a_wheelhouse_chooses_among_its_wheels_and_installs_offline() {
    let tmp = tempfile::tempdir().unwrap();
    let wheels = tmp.path().join("wheels");
    std::fs::create_dir_all(&wheels).unwrap();
    for name in [
        "torch-2.9.0+cu130-cp310-cp310-manylinux_2_28_x86_64.whl",
        "torch-2.9.1+cu126-cp310-cp310-manylinux_2_28_x86_64.whl",
    ] {
        std::fs::write(wheels.join(name), b"").unwrap();
    }
    let out = Command::new(BIN)
        .arg("--replay")
        .arg(fixture("torch-cu130-on-r550"))
        .args(["fix", "driver.too_old_for_runtime", "--json", "--find-links"])
        .arg(&wheels)
        .env("GPU_DOCTOR_HOME", tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let argv: Vec<String> = serde_json::from_value(plan["steps"][0]["kind"]["action"]["argv"].clone()).unwrap();
    let dir = wheels.display().to_string();
    assert!(argv.windows(3).any(|w| w == ["--no-index", "--find-links", dir.as_str()]), "{argv:?}");
    assert!(argv.iter().any(|a| a == "torch==2.9.1+cu126"), "{argv:?}");
    let rejected = plan["choice"]["rejected"].to_string();
    assert!(rejected.contains("2.9.0+cu130") && rejected.contains("driver 550 < 580"), "{rejected}");
}

/// `fix --undo` with a hostile or damaged list runs nothing: another interpreter, an option line
/// for pip, a cut list, `/dev/zero` and a FIFO are refused as inputs (exit 3) at once; a good list
/// without a terminal and without --yes asks for it (exit 2); --undo needs --env.
#[test]
fn fix_undo_refuses_a_hostile_list_and_runs_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let marker = tmp.path().join("ran");
    let env = tmp.path().join("env");
    std::fs::create_dir_all(env.join("bin")).unwrap();
    for script in [env.join("bin/python3"), tmp.path().join("evil.sh")] {
        std::fs::write(&script, format!("#!/bin/sh\ntouch '{}'\n", marker.display())).unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let header = |python: &Path| format!("# gpu-doctor-python: {}\n# gpu-doctor-tool: pip\n", python.display());
    let fifo = tmp.path().join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let mut lists = vec![
        (header(&tmp.path().join("evil.sh")) + "a==1\n# gpu-doctor-end: 1 packages\n", "not the interpreter of"),
        (
            header(&env.join("bin/python3")) + "--index-url=https://evil/simple\na==1\n# gpu-doctor-end: 1 packages\n",
            "not an option",
        ),
        (header(&env.join("bin/python3")) + "a==1\nb==1\n", "no end line"),
    ]
    .into_iter()
    .enumerate()
    .map(|(n, (text, why))| {
        let path = tmp.path().join(format!("list-{n}.txt"));
        std::fs::write(&path, text).unwrap();
        (path, why)
    })
    .collect::<Vec<_>>();
    lists.push((Path::new("/dev/zero").to_owned(), "not a regular file"));
    lists.push((fifo, "not a regular file"));
    let undo = |list: &Path, extra: &[&str]| {
        Command::new(BIN)
            .args(["fix", "--undo"])
            .arg(list)
            .args(extra)
            .env("GPU_DOCTOR_HOME", tmp.path().join("home"))
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let started = std::time::Instant::now();
    for (list, why) in &lists {
        let out = undo(list, &["--env", env.to_str().unwrap(), "--yes"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{}: {err}", list.display());
        assert!(err.contains(why), "{}: {err}", list.display());
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(30), "{:?}", started.elapsed());
    let good = tmp.path().join("good.txt");
    std::fs::write(&good, header(&env.join("bin/python3")) + "a==1\n# gpu-doctor-end: 1 packages\n").unwrap();
    let asked = undo(&good, &["--env", env.to_str().unwrap()]);
    assert_eq!(asked.status.code(), Some(2), "{}", String::from_utf8_lossy(&asked.stderr));
    assert_eq!(undo(&good, &["--yes"]).status.code(), Some(2), "--undo without --env");
    assert!(!marker.exists(), "a program was run");
}

/// SIGTERM while an undo's pip installs: gpu-doctor lets that install finish (pip does not roll
/// back on SIGINT), runs nothing after it, reads the list again and says what is there; before,
/// the install was killed half way.
#[test]
fn sigterm_during_an_undo_lets_the_running_install_finish() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let env = tmp.path().join("env");
    std::fs::create_dir_all(env.join("bin")).unwrap();
    let python = env.join("bin/python3");
    let script = r#"#!/bin/sh
state="$(dirname "$0")/../state.txt"
case "$3" in
  freeze) cat "$state" ;;
  install) echo "Installing collected packages: a"; sleep 2; echo "a==1" > "$state"; echo "Successfully installed a-1" ;;
  *) exit 9 ;;
esac
"#;
    std::fs::write(&python, script).unwrap();
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(env.join("state.txt"), "a==2\n").unwrap();
    let list = tmp.path().join("list.txt");
    let text = format!(
        "# gpu-doctor-python: {}\n# gpu-doctor-tool: pip\na==1\n# gpu-doctor-end: 1 packages\n",
        python.display()
    );
    std::fs::write(&list, text).unwrap();
    let mut child = std::process::Command::new(BIN)
        .args(["fix", "--undo"])
        .arg(&list)
        .arg("--env")
        .arg(&env)
        .arg("--yes")
        .env("GPU_DOCTOR_HOME", tmp.path().join("home"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = String::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        if line.contains("Installing collected packages") {
            let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
            assert!(killed.success());
        }
        said.push_str(&line);
        said.push('\n');
    }
    let status = child.wait().unwrap();
    assert_eq!(std::fs::read_to_string(env.join("state.txt")).unwrap(), "a==1\n", "{said}");
    assert!(said.contains("stopping after the running step"), "{said}");
    assert!(said.contains("the packages are as the list has them (read again"), "{said}");
    assert_eq!(status.code(), Some(0), "{said}");
}

/// A CPU → CUDA switch from a wheel folder named relative to one working folder, undone from
/// another: the list saved the folder absolute, so undo finds the `+cpu` wheels and `pip freeze`
/// is what it was before (a relative folder was saved relative, and undo failed elsewhere).
#[test]
fn a_cpu_to_cuda_switch_from_a_relative_wheel_folder_is_undone_from_another_folder() {
    let venv_ok = Command::new("python3").args(["-c", "import ensurepip, venv"]).status().is_ok_and(|s| s.success());
    if !venv_ok {
        return skip("python3 with venv and ensurepip (python3-venv)");
    }
    let tmp = tempfile::tempdir().unwrap();
    let (work, elsewhere, home) = (tmp.path().join("work"), tmp.path().join("elsewhere"), tmp.path().join("home"));
    std::fs::create_dir_all(&elsewhere).unwrap();
    wheelhouse(&work.join("wheels"));
    let env = tmp.path().join("env");
    let python = env.join("bin/python");
    assert!(Command::new("python3").arg("-m").arg("venv").arg(&env).status().unwrap().success());
    let pip = |args: &[&str]| {
        let out = Command::new(&python)
            .args(["-m", "pip"])
            .args(args)
            .current_dir(&work)
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
            .env_remove("PIP_FIND_LINKS")
            .env_remove("PIP_INDEX_URL")
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    pip(&["install", "-q", "--no-index", "--find-links", "wheels", "torch==2.5.1+cpu", "torchvision==0.20.1+cpu"]);
    let before = pip(&["freeze", "--all"]);
    let applied = Command::new(BIN)
        .args(["setup", "--framework", "torch", "--tool", "pip", "--env"])
        .arg(&env)
        .args(["--find-links", "wheels", "--apply", "--yes"])
        .current_dir(&work)
        .env("GPU_DOCTOR_HOME", &home)
        .env_remove("PIP_FIND_LINKS")
        .env_remove("PIP_INDEX_URL")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&applied.stderr);
    let after = pip(&["freeze", "--all"]);
    assert!(after.contains("torch==2.5.1+cu121"), "the switch: {after}\n{err}");
    let backup = err
        .lines()
        .find_map(|l| l.strip_prefix("the environment's package list before: "))
        .unwrap_or_else(|| panic!("no backup named: {err}"))
        .to_owned();
    let saved = std::fs::read_to_string(&backup).unwrap();
    assert!(saved.contains(&format!("--find-links {}\n", work.join("wheels").display())), "{saved}");
    let undone = Command::new(BIN)
        .args(["fix", "--undo", &backup, "--env"])
        .arg(&env)
        .arg("--yes")
        .current_dir(&elsewhere)
        .env("GPU_DOCTOR_HOME", &home)
        .env_remove("PIP_FIND_LINKS")
        .env_remove("PIP_INDEX_URL")
        .output()
        .unwrap();
    assert!(undone.status.success(), "{}", String::from_utf8_lossy(&undone.stderr));
    assert_eq!(pip(&["freeze", "--all"]), before);
}

/// Issue 29 item 3: `setup --apply` into an environment with numpy 1.26.4, where the chosen build
/// pulls numpy 2 (a dependency the plan does not name), shows the whole change resolved by pip,
/// then refuses (exit 2, naming numpy and --allow-major) and changes nothing; with --allow-major
/// the same change is applied.
#[test]
fn setup_shows_the_whole_change_and_refuses_an_unasked_major_upgrade_without_allow_major() {
    let venv_ok = Command::new("python3").args(["-c", "import ensurepip, venv"]).status().is_ok_and(|s| s.success());
    if !venv_ok {
        return skip("python3 with venv and ensurepip (python3-venv)");
    }
    let tmp = tempfile::tempdir().unwrap();
    let (wheels, env, home) = (tmp.path().join("wheels"), tmp.path().join("env"), tmp.path().join("home"));
    wheelhouse(&wheels);
    // torchvision (which the plan installs beside torch) requires numpy 2 in this wheel folder.
    let tiny = Path::new(env!("CARGO_MANIFEST_DIR")).join("../installers/tests/support/tiny_wheels.py");
    let made = Command::new("python3")
        .arg(tiny)
        .arg(&wheels)
        .args(["numpy==1.26.4", "numpy==2.4.0", "torchvision==0.20.1+cu121:torch==2.5.1,numpy>=2"])
        .args(["torchvision==0.20.1+cpu:torch==2.5.1,numpy>=2"])
        .status()
        .unwrap();
    assert!(made.success());
    assert!(Command::new("python3").arg("-m").arg("venv").arg(&env).status().unwrap().success());
    let python = env.join("bin/python");
    let pip = |args: &[&str]| Command::new(&python).args(["-m", "pip"]).args(args).output().unwrap();
    let had = pip(&["install", "-q", "--no-index", "--find-links", &wheels.display().to_string(), "numpy==1.26.4"]);
    assert!(had.status.success(), "{}", String::from_utf8_lossy(&had.stderr));
    let freeze = || String::from_utf8_lossy(&pip(&["freeze", "--all"]).stdout).into_owned();
    let before = freeze();
    let run = |extra: &[&str]| {
        Command::new(BIN)
            .args(["setup", "--framework", "torch", "--tool", "pip", "--env"])
            .arg(&env)
            .arg("--find-links")
            .arg(&wheels)
            .args(["--apply", "--yes"])
            .args(extra)
            .env("GPU_DOCTOR_HOME", &home)
            .env_remove("PIP_FIND_LINKS")
            .env_remove("PIP_INDEX_URL")
            .output()
            .unwrap()
    };
    let refused = run(&[]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{err}");
    assert!(err.contains("upgrade   numpy 1.26.4 -> 2.4.0\n"), "{err}");
    assert!(err.contains("add       torch 2.5.1+") && err.contains("(asked for)"), "{err}");
    assert!(err.contains("refused: the plan would move numpy 1.26.4 -> 2.4.0 across a major version"), "{err}");
    assert!(err.contains("Add --allow-major"), "{err}");
    assert_eq!(freeze(), before, "a refused plan changed the environment");

    let applied = run(&["--allow-major"]);
    let err = String::from_utf8_lossy(&applied.stderr);
    assert_eq!(applied.status.code(), Some(0), "{}{err}", String::from_utf8_lossy(&applied.stdout));
    assert!(err.contains("upgrade   numpy 1.26.4 -> 2.4.0\n") && !err.contains("refused"), "{err}");
    let after = freeze();
    assert!(after.contains("numpy==2.4.0") && after.contains("torch==2.5.1+"), "{after}");
}
