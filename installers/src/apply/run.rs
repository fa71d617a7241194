//! One user step's program: started and supervised by `probes::host::process` (its own process
//! group, no shell, its standard output and error read line by line, a deadline), and Cancel.

use std::collections::VecDeque;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use gpu_doctor_probes::host::process::{self, Ending, Event, Flow, Limits, Output, Reading};

/// The longest line passed on; the rest of it is dropped.
const LINE_CAP: usize = 4096;
/// The most output one step passes on and logs; past it lines are read and dropped.
const OUTPUT_CAP: usize = 16 * 1024 * 1024;
/// Lines kept for a failure's reason.
const TAIL: usize = 12;
/// How often Cancel is looked at while the program prints nothing.
const CANCEL_TICK: Duration = Duration::from_millis(50);
/// After Cancel, how long a program sent SIGINT may take to stop by itself before it is killed.
const STOP_WAIT: Duration = Duration::from_secs(20);

/// Which pipe a line came from.
pub(crate) use process::Stream;

/// How the program ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum End {
    /// It exited with this status (`None`: killed by a signal).
    Exited(Option<i32>),
    /// It could not be started.
    NotStarted(String),
    /// It ran past the deadline and was killed.
    TimedOut,
    /// Cancel was set; it was interrupted (SIGINT), and killed if it did not stop.
    Cancelled,
}

/// What a run gave.
#[derive(Debug)]
pub(crate) struct Ran {
    pub(crate) end: End,
    /// The last lines of both streams, for a failure's reason.
    pub(crate) tail: VecDeque<String>,
}

impl Ran {
    pub(crate) fn succeeded(&self) -> bool {
        self.end == End::Exited(Some(0))
    }

    /// Why it failed, with its last lines.
    pub(crate) fn failure(&self, program: &str) -> String {
        let how = match &self.end {
            End::Exited(Some(code)) => format!("{program} exited with status {code}"),
            End::Exited(None) => format!("{program} was killed by a signal"),
            End::NotStarted(e) => return format!("could not start {program}: {e}"),
            End::TimedOut => format!("{program} ran past its time limit and was stopped"),
            End::Cancelled => format!("{program} was cancelled"),
        };
        if self.tail.is_empty() {
            return how;
        }
        let tail: Vec<&str> = self.tail.iter().map(String::as_str).collect();
        format!("{how}; its last lines:\n{}", tail.join("\n"))
    }
}

/// Whether an installer's line says it has started changing the environment: pip's "Installing
/// collected packages" (it uninstalls and installs after it) and uv's "Prepared N packages" (its
/// uninstalls and installs come next).
fn changes_from_here(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("Installing collected packages:")
        || (line.starts_with("Prepared ") && line.split_whitespace().nth(2).is_some_and(|w| w.starts_with("package")))
}

/// Runs `argv` (no shell, standard input closed) until it ends, `limit` passes or `cancel` is set,
/// calling `on_line` with each line as it comes. On Cancel the program is sent SIGINT (pip then
/// stops before changing anything) and killed `STOP_WAIT` later, except once an installer has said
/// it is changing the environment ([`changes_from_here`]): it is then left to finish (pip does not
/// roll an install back on SIGINT: its rollback is under `except Exception`, which a
/// KeyboardInterrupt is not; src/pip/_internal/req/__init__.py, `_install_given_reqs`, at
/// github.com/pypa/pip commit 6d309205789d368b2749d93fd6193d584811efd5, and 23.2.1 alike).
pub(crate) fn run(argv: &[String], limit: Duration, cancel: &AtomicBool, on_line: &mut dyn FnMut(Stream, &str)) -> Ran {
    let mut tail = VecDeque::new();
    let Some((program, args)) = argv.split_first() else {
        return Ran { end: End::NotStarted("an empty command".into()), tail };
    };
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // pip must never wait for an answer, nor ask the network about its own version.
        .env("PIP_NO_INPUT", "1")
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1");
    let mut child = match process::spawn(&mut cmd) {
        Ok(child) => child,
        Err(e) => return Ran { end: End::NotStarted(e.to_string()), tail },
    };
    let mut passed = 0usize;
    let mut changing = false;
    let mut told = false;
    let mut interrupted = false;
    let mut pass = |stream: Stream, line: String| {
        if passed < OUTPUT_CAP {
            passed += line.len() + 1;
            on_line(stream, &line);
            if tail.len() == TAIL {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    };
    let lines = Reading::Lines { line_cap_bytes: LINE_CAP };
    let limits = Limits {
        deadline: Instant::now() + limit,
        output_cap_bytes: OUTPUT_CAP,
        stdout: lines,
        stderr: lines,
        tick: Some(CANCEL_TICK),
    };
    let outcome = child.supervise(&limits, &mut |event| {
        if let Event::Output(Output::Line(stream, line)) = event {
            changing |= changes_from_here(&line);
            pass(stream, line);
        }
        if !cancel.load(Ordering::SeqCst) || interrupted {
            Flow::Go
        } else if changing {
            if !told {
                told = true;
                pass(
                    Stream::Err,
                    "cancel: the installer is changing the environment; it is left to finish, then nothing after \
                     it runs"
                        .to_owned(),
                );
            }
            Flow::Go
        } else {
            interrupted = true;
            Flow::Interrupt(STOP_WAIT)
        }
    });
    let end = match outcome.ending {
        Ending::Exited => End::Exited(outcome.status.and_then(|s| s.code())),
        Ending::TimedOut => End::TimedOut,
        Ending::Stopped => End::Cancelled,
    };
    Ran { end, tail }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Vec<String> {
        vec!["/bin/sh".into(), "-c".into(), script.into()]
    }

    #[test]
    fn lines_of_both_streams_come_in_order_and_the_exit_status_is_kept() {
        let mut lines = Vec::new();
        let ran = run(
            &sh("echo one; echo two >&2; printf 'three'; exit 3"),
            Duration::from_secs(20),
            &AtomicBool::new(false),
            &mut |s, l| lines.push((s, l.to_owned())),
        );
        assert_eq!(ran.end, End::Exited(Some(3)));
        lines.sort_by_key(|(s, _)| *s == Stream::Err);
        assert_eq!(
            lines,
            [(Stream::Out, "one".to_owned()), (Stream::Out, "three".to_owned()), (Stream::Err, "two".to_owned())]
        );
        let reason = ran.failure("sh");
        assert!(reason.starts_with("sh exited with status 3; its last lines:\n"), "{reason}");
        assert!(reason.contains("three"), "{reason}");
    }

    #[test]
    fn the_deadline_kills_the_whole_group() {
        let started = Instant::now();
        let ran = run(&sh("sleep 30 & sleep 30"), Duration::from_millis(300), &AtomicBool::new(false), &mut |_, _| {});
        assert_eq!(ran.end, End::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    }

    #[test]
    fn a_program_that_exits_while_its_child_holds_the_pipes_ends_after_the_grace() {
        let started = Instant::now();
        let ran = run(&sh("sleep 30 & echo gone"), Duration::from_secs(60), &AtomicBool::new(false), &mut |_, _| {});
        assert_eq!(ran.end, End::Exited(Some(0)));
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    }

    #[test]
    fn cancel_set_by_a_line_stops_the_program_at_once() {
        let cancel = AtomicBool::new(false);
        let started = Instant::now();
        // A loop: dash (`sh -c`) catches SIGINT and acts on it between commands; one that came
        // just before it ran its last command would be lost with the exec.
        let script = "echo started; while :; do sleep 0.1; done";
        let ran = run(&sh(script), Duration::from_secs(60), &cancel, &mut |_, l| {
            if l == "started" {
                cancel.store(true, Ordering::SeqCst);
            }
        });
        assert_eq!(ran.end, End::Cancelled);
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    }

    /// As pip does: SIGINT while it resolves stops it before it changes anything (its
    /// KeyboardInterrupt handler says "Operation cancelled by user"); once it installs, Cancel
    /// lets it finish instead of killing it between removing the old build and adding the new.
    #[test]
    fn cancel_interrupts_an_installer_that_resolves_and_lets_one_that_installs_finish() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = AtomicBool::new(false);
        let mut lines = Vec::new();
        let resolving = "trap 'echo ERROR: Operation cancelled by user; exit 1' INT; echo Collecting torch; \
                         while :; do sleep 0.05; done";
        let ran = run(&sh(resolving), Duration::from_secs(60), &cancel, &mut |_, l| {
            lines.push(l.to_owned());
            cancel.store(true, Ordering::SeqCst);
        });
        assert_eq!(ran.end, End::Cancelled, "{lines:?}");
        // Started with SIGINT ignored (a background job of a non-interactive shell), the child cannot
        // trap it: it is killed at once instead, and says nothing.
        if process::ignores_sigint(std::process::id()) != Some(true) {
            assert!(lines.iter().any(|l| l == "ERROR: Operation cancelled by user"), "{lines:?}");
        }

        let done = dir.path().join("installed");
        let installing = format!(
            "trap '' INT; echo 'Installing collected packages: torch'; sleep 1; touch '{}'; echo Successfully installed",
            done.display()
        );
        cancel.store(false, Ordering::SeqCst);
        let mut lines = Vec::new();
        let ran = run(&sh(&installing), Duration::from_secs(60), &cancel, &mut |_, l| {
            lines.push(l.to_owned());
            cancel.store(true, Ordering::SeqCst);
        });
        assert_eq!(ran.end, End::Exited(Some(0)), "{lines:?}");
        assert!(done.exists());
        assert!(lines.iter().any(|l| l.starts_with("cancel: the installer is changing")), "{lines:?}");
        assert!(changes_from_here("Prepared 2 packages in 4ms") && !changes_from_here("Prepared the way"));
    }

    #[test]
    fn a_missing_program_is_not_started_and_says_why() {
        let ran = run(
            &["/nonexistent/gpu-doctor-test".to_owned()],
            Duration::from_secs(5),
            &AtomicBool::new(false),
            &mut |_, _| {},
        );
        assert!(matches!(ran.end, End::NotStarted(_)), "{:?}", ran.end);
        assert!(ran.failure("x").starts_with("could not start x: "));
    }

    #[test]
    fn long_lines_are_cut_and_invalid_utf8_is_replaced() {
        let mut lines = Vec::new();
        let ran = run(
            &sh("head -c 10000 /dev/zero | tr '\\0' a; echo; printf '\\377ok\\n'"),
            Duration::from_secs(20),
            &AtomicBool::new(false),
            &mut |_, l| lines.push(l.to_owned()),
        );
        assert!(ran.succeeded());
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].len(), LINE_CAP);
        assert_eq!(lines[1], "\u{fffd}ok");
    }
}
