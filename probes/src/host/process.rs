//! Children that cannot outlive their welcome: each runs in its own process group, so a time limit
//! ends everything it started (a wrapper script's `sleep &` too), and every live group is ended
//! when gpu-doctor itself is told to stop (`forward_signals`). A worker process can also ask to
//! die with its parent (`die_with_parent`).
//!
//! The one supervisor: `spawn` starts a program, `GroupChild::supervise` waits on it by blocking
//! on its exit (a waiter thread in `waitid`, which leaves the child for `std` to reap) and on its
//! pipes (a reader thread each, ending at the pipe's end), all sending over one channel. No sleep
//! loop: the caller is woken by the next line, the exit, a deadline, or its own tick. Used by
//! `SystemHost::run` (probes), the benchmark runner (kernels) and a plan's user steps (installers).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, ExitStatus};
use std::sync::mpsc::{self, RecvTimeoutError, SyncSender};
use std::sync::{Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// After a program exits, how long what it left behind may hold its output open before the group
/// is killed and what was read is the answer; after a kill, how long to wait for the pipes to
/// close and the child to end. The one grace period of every supervised child.
pub const GRACE: Duration = Duration::from_millis(500);
/// Pieces of output in flight between the reader threads and the supervisor; a full channel makes
/// the readers wait, and the child's writes with them.
const CHANNEL_BOUND: usize = 256;

/// Process-group ids of the children alive now (Unix: each child leads its own group).
static LIVE: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

fn live() -> std::sync::MutexGuard<'static, BTreeSet<u32>> {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A started child in its own process group. Dropping it forgets the group (it does not kill it:
/// a program that ended normally may leave a daemon on purpose); `kill_group` ends the group.
#[derive(Debug)]
pub struct GroupChild {
    child: Child,
}

/// Starts `cmd` in a new process group (on Unix) and remembers the group until the child is dropped.
pub fn spawn(cmd: &mut Command) -> std::io::Result<GroupChild> {
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(cmd, 0);
    let child = cmd.spawn()?;
    live().insert(child.id());
    Ok(GroupChild { child })
}

impl GroupChild {
    /// The child, for its pipes and `try_wait`.
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Sends SIGKILL to the child's whole process group (on other systems: kills the child).
    pub fn kill_group(&mut self) {
        #[cfg(unix)]
        kill_group_id(self.child.id());
        let _ = self.child.kill();
    }

    /// Waits up to `limit` for the child to exit (blocking, no polling); past it, kills the group
    /// and reaps the child.
    pub fn wait_or_kill(&mut self, limit: Duration) -> Option<ExitStatus> {
        let (tx, rx) = mpsc::sync_channel(CHANNEL_BOUND);
        if watch_exit(self.child.id(), tx) {
            let _ = rx.recv_timeout(limit);
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) => {}
                Err(_) => return None,
            }
        } else {
            // No waiter thread (off Unix, or the thread did not start): poll coarsely.
            let until = Instant::now() + limit;
            loop {
                match self.child.try_wait() {
                    Ok(Some(status)) => return Some(status),
                    Ok(None) if Instant::now() < until => thread::sleep(Duration::from_millis(10)),
                    Ok(None) => break,
                    Err(_) => return None,
                }
            }
        }
        self.kill_group();
        self.child.wait().ok()
    }

    /// Waits for the child and its output: reads its standard output and error (when piped) as
    /// `limits` says and hands each piece to `on`, until the child exited and both pipes ended.
    /// Kills the whole group when `limits.deadline` passes before it exited, when `on` answers
    /// `Flow::Stop`, or when the pipes stay open `GRACE` after it exited (something it started
    /// holds them); after a kill it waits at most `GRACE` more. `on` also sees `Event::Tick` each
    /// `limits.tick` without output, for checks of the caller's own (a Cancel flag, a watchdog).
    pub fn supervise(&mut self, limits: &Limits, on: &mut dyn FnMut(Event) -> Flow) -> Outcome {
        let (tx, rx) = mpsc::sync_channel(CHANNEL_BOUND);
        let mut open = 0usize;
        if let Some(out) = self.child.stdout.take() {
            open += usize::from(read_pipe(
                "child-stdout",
                out,
                Stream::Out,
                limits.stdout,
                limits.output_cap_bytes,
                tx.clone(),
            ));
        }
        if let Some(err) = self.child.stderr.take() {
            open += usize::from(read_pipe(
                "child-stderr",
                err,
                Stream::Err,
                limits.stderr,
                limits.output_cap_bytes,
                tx.clone(),
            ));
        }
        let waited = watch_exit(self.child.id(), tx);
        let mut run = Run {
            open,
            status: None,
            exited_at: None,
            killed_at: None,
            interrupted_until: None,
            ending: Ending::Exited,
        };
        loop {
            if run.status.is_none() && !waited {
                // Off Unix nothing wakes us at the exit: look each time round.
                run.reap(&mut self.child);
            }
            if run.status.is_some() && run.open == 0 {
                break;
            }
            let now = Instant::now();
            if let Some(killed) = run.killed_at {
                if now >= killed + GRACE {
                    break;
                }
            } else if let Some(exited) = run.exited_at {
                if now >= (exited + GRACE).min(limits.deadline.max(exited)) {
                    // It answered and exited; what it left behind is not part of the answer.
                    self.kill(&mut run, Ending::Exited);
                    continue;
                }
            } else if now >= limits.deadline {
                self.kill(&mut run, Ending::TimedOut);
                continue;
            } else if let Some(until) = run.interrupted_until
                && now >= until
            {
                // Asked to stop and still running: killed.
                self.kill(&mut run, Ending::Stopped);
                continue;
            }
            let mut wake = run.next_wake(limits.deadline);
            if let Some(tick) = limits.tick {
                wake = wake.min(now + tick);
            }
            if !waited && run.status.is_none() {
                wake = wake.min(now + Duration::from_millis(10));
            }
            match rx.recv_timeout(wake.saturating_duration_since(now)) {
                Ok(Msg::Out(piece)) => {
                    let flow = on(Event::Output(piece));
                    self.follow(&mut run, flow);
                }
                Ok(Msg::Eof) => run.open = run.open.saturating_sub(1),
                Ok(Msg::Exited) => run.reap(&mut self.child),
                Err(RecvTimeoutError::Timeout) => {
                    if limits.tick.is_some() && run.killed_at.is_none() {
                        let flow = on(Event::Tick);
                        self.follow(&mut run, flow);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    run.reap(&mut self.child);
                    break;
                }
            }
        }
        if run.status.is_none() {
            run.reap(&mut self.child);
        }
        Outcome { ending: run.ending, status: run.status }
    }

    fn kill(&mut self, run: &mut Run, ending: Ending) {
        self.kill_group();
        run.killed_at = Some(Instant::now());
        // A child asked to stop that exited and left something behind was still stopped.
        if run.interrupted_until.is_none() {
            run.ending = ending;
        }
    }

    /// Carries out the caller's answer.
    fn follow(&mut self, run: &mut Run, flow: Flow) {
        if run.killed_at.is_some() || run.exited_at.is_some() {
            return;
        }
        match flow {
            Flow::Go => {}
            Flow::Stop => self.kill(run, Ending::Stopped),
            // A child that ignores SIGINT (inherited: gpu-doctor started as a background job of a
            // non-interactive shell, or under nohup; neither dash nor Python can catch a signal
            // ignored on entry) would only wait out the grace: it is killed at once instead.
            Flow::Interrupt(_) if run.interrupted_until.is_none() && ignores_sigint(self.child.id()) == Some(true) => {
                self.kill(run, Ending::Stopped);
            }
            Flow::Interrupt(wait) if run.interrupted_until.is_none() => {
                #[cfg(unix)]
                signal_group_id(self.child.id(), rustix::process::Signal::INT);
                #[cfg(not(unix))]
                let _ = self.child.kill();
                run.interrupted_until = Some(Instant::now() + wait);
                run.ending = Ending::Stopped;
            }
            Flow::Interrupt(_) => {}
        }
    }
}

/// Where a supervised child is.
struct Run {
    open: usize,
    status: Option<ExitStatus>,
    exited_at: Option<Instant>,
    killed_at: Option<Instant>,
    /// When the child was sent SIGINT (`Flow::Interrupt`): the time it is killed if still running.
    interrupted_until: Option<Instant>,
    ending: Ending,
}

impl Run {
    fn reap(&mut self, child: &mut Child) {
        if self.status.is_none()
            && let Ok(Some(status)) = child.try_wait()
        {
            self.status = Some(status);
            self.exited_at = Some(Instant::now());
        }
    }

    /// When something must be decided without a message: a kill's grace, the left-open grace, the deadline.
    fn next_wake(&self, deadline: Instant) -> Instant {
        match (self.killed_at, self.exited_at) {
            (Some(killed), _) => killed + GRACE,
            (None, Some(exited)) => (exited + GRACE).min(deadline.max(exited)),
            (None, None) => self.interrupted_until.map_or(deadline, |until| until.min(deadline)),
        }
    }
}

/// Which pipe a piece of output came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Out,
    /// Standard error.
    Err,
}

/// How a pipe is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// As it comes, in pieces of up to 16 KiB.
    Chunks,
    /// Line by line, lossily decoded, without the line end, each cut at `line_cap_bytes`.
    Lines {
        /// The longest line passed on; the rest of it is dropped.
        line_cap_bytes: usize,
    },
}

/// The limits of one supervised run.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The child is killed when it has not exited by then; after it exited, its pipes may stay
    /// open until `GRACE` later but not past this.
    pub deadline: Instant,
    /// Most bytes passed on from each pipe; the rest is read and dropped.
    pub output_cap_bytes: usize,
    /// How standard output is read.
    pub stdout: Reading,
    /// How standard error is read.
    pub stderr: Reading,
    /// `Event::Tick` after this long without output; `None`: no ticks.
    pub tick: Option<Duration>,
}

impl Limits {
    /// Chunks of both pipes, capped at `output_cap_bytes` each, until `timeout` from now, no ticks.
    pub fn chunks(timeout: Duration, output_cap_bytes: usize) -> Self {
        Self {
            deadline: Instant::now() + timeout,
            output_cap_bytes,
            stdout: Reading::Chunks,
            stderr: Reading::Chunks,
            tick: None,
        }
    }
}

/// A piece of a supervised child's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Bytes as read (`Reading::Chunks`).
    Chunk(Stream, Vec<u8>),
    /// One line (`Reading::Lines`).
    Line(Stream, String),
}

/// What `GroupChild::supervise` hands its caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The child printed this.
    Output(Output),
    /// `Limits::tick` passed without output.
    Tick,
}

/// The caller's answer to an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Go on waiting.
    Go,
    /// Kill the group now (a Cancel, a watchdog).
    Stop,
    /// Ask the group to stop as Ctrl+C at a terminal does (SIGINT; off Unix: kill the child), so
    /// that a program that can stop cleanly does; kill the group if it still runs this long after.
    Interrupt(Duration),
}

/// How a supervised run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The child exited by itself (what it left behind may have been killed after `GRACE`).
    Exited,
    /// The deadline passed before it exited; the group was killed.
    TimedOut,
    /// The caller answered `Flow::Stop` (the group was killed) or `Flow::Interrupt` (the group was
    /// sent SIGINT, and killed if it ran on past the wait).
    Stopped,
}

/// What a supervised run gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// How it ended.
    pub ending: Ending,
    /// The child's exit status; `None` when it had not ended `GRACE` after the kill (still
    /// unreaped: a process stuck in the kernel) or could not be waited for.
    pub status: Option<ExitStatus>,
}

/// What the supervisor's threads send.
enum Msg {
    Out(Output),
    /// A pipe reached its end.
    Eof,
    /// The child exited (it is left for `try_wait` to reap).
    Exited,
}

/// Starts a thread that blocks until process `pid` exits, without reaping it, then sends
/// `Msg::Exited`. False when there is no such thread (off Unix, or it could not start).
fn watch_exit(pid: u32, tx: SyncSender<Msg>) -> bool {
    #[cfg(unix)]
    {
        use rustix::process::{Pid, WaitId, WaitIdOptions, waitid};
        let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else { return false };
        thread::Builder::new()
            .name("child-exit".into())
            .spawn(move || {
                // Interrupted: wait again; any other error (already reaped): it is gone.
                while let Err(rustix::io::Errno::INTR) =
                    waitid(WaitId::Pid(pid), WaitIdOptions::EXITED | WaitIdOptions::NOWAIT)
                {}
                let _ = tx.send(Msg::Exited);
            })
            .is_ok()
    }
    #[cfg(not(unix))]
    {
        let _ = (pid, tx);
        false
    }
}

/// Reads `pipe` on a thread named `name` until its end, sending what it reads as `how` says
/// (at most `cap` bytes, the rest read and dropped), then `Msg::Eof`. False when the thread could
/// not start (the pipe then closes with it: the program's writes fail and it ends).
fn read_pipe(
    name: &str,
    pipe: impl Read + Send + 'static,
    stream: Stream,
    how: Reading,
    cap: usize,
    tx: SyncSender<Msg>,
) -> bool {
    thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            let mut passed = 0usize;
            match how {
                Reading::Chunks => {
                    let mut pipe = pipe;
                    let mut buf = vec![0u8; 16 * 1024];
                    loop {
                        match pipe.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => {
                                let room = cap.saturating_sub(passed).min(n);
                                passed += room;
                                if room > 0 && tx.send(Msg::Out(Output::Chunk(stream, buf[..room].to_vec()))).is_err() {
                                    break;
                                }
                            }
                        }
                    }
                }
                Reading::Lines { line_cap_bytes } => {
                    let mut reader = BufReader::new(pipe);
                    let mut buf = Vec::new();
                    loop {
                        buf.clear();
                        // At most the cap (and one byte more, to see that it was cut) is held.
                        let most = u64::try_from(line_cap_bytes).unwrap_or(u64::MAX).saturating_add(1);
                        match (&mut reader).take(most).read_until(b'\n', &mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(_) => {}
                        }
                        if buf.last() != Some(&b'\n') && buf.len() > line_cap_bytes && reader.skip_until(b'\n').is_err()
                        {
                            break;
                        }
                        if passed >= cap {
                            continue;
                        }
                        passed += buf.len();
                        let text = String::from_utf8_lossy(&buf);
                        let mut line = text.trim_end_matches(['\n', '\r']).to_owned();
                        if line.len() > line_cap_bytes {
                            let mut cut = line_cap_bytes;
                            while !line.is_char_boundary(cut) {
                                cut -= 1;
                            }
                            line.truncate(cut);
                        }
                        if tx.send(Msg::Out(Output::Line(stream, line))).is_err() {
                            break;
                        }
                    }
                }
            }
            let _ = tx.send(Msg::Eof);
        })
        .is_ok()
}

impl Drop for GroupChild {
    fn drop(&mut self) {
        live().remove(&self.child.id());
    }
}

impl GroupChild {
    /// Lets the child run only on `cpus` (Linux `sched_setaffinity`). Threads and processes it
    /// starts afterwards inherit the set, and memory it first touches then lands on the CPUs' NUMA
    /// node. Call it before the child starts its work; elsewhere than Linux, `Unsupported`.
    pub fn set_cpu_affinity(&self, cpus: &[usize]) -> std::io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            use rustix::process::Pid;
            use rustix::thread::{CpuSet, sched_setaffinity};
            let pid = i32::try_from(self.child.id()).ok().and_then(Pid::from_raw);
            let mut set = CpuSet::new();
            for &cpu in cpus {
                if cpu >= CpuSet::MAX_CPU {
                    return Err(std::io::Error::other(format!(
                        "CPU {cpu} is beyond the {} a CPU set holds",
                        CpuSet::MAX_CPU
                    )));
                }
                set.set(cpu);
            }
            Ok(sched_setaffinity(pid, &set)?)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = cpus;
            Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "CPU affinity is set on Linux only"))
        }
    }
}

/// The CPUs this process may run on now (Linux `sched_getaffinity`: what `taskset`, a cgroup
/// cpuset or a batch scheduler left it); elsewhere `Unsupported`.
pub fn allowed_cpus() -> std::io::Result<Vec<usize>> {
    #[cfg(target_os = "linux")]
    {
        use rustix::thread::{CpuSet, sched_getaffinity};
        let set = sched_getaffinity(None)?;
        Ok((0..CpuSet::MAX_CPU).filter(|&cpu| set.is_set(cpu)).collect())
    }
    #[cfg(not(target_os = "linux"))]
    Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "CPU affinity is read on Linux only"))
}

#[cfg(unix)]
fn kill_group_id(pgid: u32) {
    signal_group_id(pgid, rustix::process::Signal::KILL);
}

#[cfg(unix)]
fn signal_group_id(pgid: u32, signal: rustix::process::Signal) {
    use rustix::process::{Pid, kill_process_group};
    if let Some(pid) = i32::try_from(pgid).ok().and_then(Pid::from_raw) {
        let _ = kill_process_group(pid, signal);
    }
}

/// Whether process `pid` ignores SIGINT, from the `SigIgn:` mask of `/proc/PID/status` (bit 1 is
/// signal 2). Linux only; elsewhere, and when the file does not say, `None`.
pub fn ignores_sigint(pid: u32) -> Option<bool> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    sigint_in_mask(&status)
}

/// SIGINT's bit in the `SigIgn:` line of a `/proc/PID/status` text; `None` without a readable line.
fn sigint_in_mask(status: &str) -> Option<bool> {
    let mask = status.lines().find_map(|l| l.strip_prefix("SigIgn:"))?.trim();
    let mask = u64::from_str_radix(mask, 16).ok()?;
    Some(mask & 0b10 != 0)
}

/// Whether process `pid` still runs, from `/proc/PID/stat` (a zombie waiting to be reaped has
/// ended). Linux only; elsewhere `None`.
pub fn is_running(pid: u32) -> Option<bool> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    Some(
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| stat.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z'))),
    )
}

/// Ends every live child group. Called when gpu-doctor is told to stop.
pub fn kill_all() {
    #[cfg(unix)]
    for pgid in live().iter() {
        kill_group_id(*pgid);
    }
}

/// Callers holding a [`GracefulStop`] now.
static GRACEFUL: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
/// Set by the first signal while a [`GracefulStop`] is held.
static STOP_ASKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// While one is held, the first SIGINT, SIGTERM or SIGHUP does not end the children and
/// gpu-doctor: it sets [`GracefulStop::flag`], for the holder to stop as its Cancel does (a plan's
/// install step then finishes or is interrupted, never killed in the middle). A second signal
/// ends everything as before.
#[derive(Debug)]
pub struct GracefulStop(());

/// Holds a [`GracefulStop`] until it is dropped.
pub fn graceful_stop() -> GracefulStop {
    use std::sync::atomic::Ordering;
    if GRACEFUL.fetch_add(1, Ordering::SeqCst) == 0 {
        // A signal that came while none was held has been handled (everything ended).
        STOP_ASKED.store(false, Ordering::SeqCst);
    }
    GracefulStop(())
}

impl GracefulStop {
    /// Set when a signal asked gpu-doctor to stop.
    pub fn flag(&self) -> &'static std::sync::atomic::AtomicBool {
        &STOP_ASKED
    }
}

impl Drop for GracefulStop {
    fn drop(&mut self) {
        GRACEFUL.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// What a signal does now: `true` when a [`GracefulStop`] is held and no signal came before, and
/// it only set the flag; `false` when everything must end.
fn only_asks_to_stop() -> bool {
    use std::sync::atomic::Ordering;
    GRACEFUL.load(Ordering::SeqCst) > 0 && !STOP_ASKED.swap(true, Ordering::SeqCst)
}

/// On SIGINT, SIGTERM and SIGHUP: end every child group, then exit with 128 + the signal, as the
/// default action would. Children run in their own groups, so a Ctrl+C at the terminal reaches
/// only gpu-doctor; this passes it on. Call once, early in `main`. Does nothing off Unix.
pub fn forward_signals() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
        thread::Builder::new().name("signal-forward".into()).spawn(move || {
            for sig in signals.forever() {
                if only_asks_to_stop() {
                    eprintln!(
                        "gpu-doctor: stopping after the running step ends or rolls back (the same signal again \
                         stops it at once)"
                    );
                    continue;
                }
                kill_all();
                std::process::exit(128 + sig);
            }
        })?;
    }
    Ok(())
}

/// Asks the kernel to kill this process when its parent dies (Linux), and exits at once when the
/// parent already died before this call (`parent` is the pid it was started by). Elsewhere a
/// worker relies on its standard input closing (see `exit_when_closed`).
pub fn die_with_parent(parent: Option<u32>) {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::process::{Signal, getppid, set_parent_process_death_signal};
        if set_parent_process_death_signal(Some(Signal::KILL)).is_ok()
            && let Some(parent) = parent
            && getppid().map(|p| p.as_raw_pid()) != i32::try_from(parent).ok()
        {
            // The parent went away before the death signal was armed.
            std::process::exit(PARENT_GONE);
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let _ = parent;
}

/// Exit code of a child that ended because its parent went away.
pub const PARENT_GONE: i32 = 5;

/// Watches `input` on a thread and exits the process with `PARENT_GONE` when it reaches its end:
/// the parent holds the other end of the pipe, and the system closes it when the parent dies.
pub fn exit_when_closed(mut input: impl Read + Send + 'static) -> std::io::Result<()> {
    thread::Builder::new().name("parent-watch".into()).spawn(move || {
        let mut buf = [0u8; 256];
        loop {
            match input.read(&mut buf) {
                Ok(0) | Err(_) => std::process::exit(PARENT_GONE),
                Ok(_) => {}
            }
        }
    })?;
    Ok(())
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::process::Stdio;

    fn sh(script: &str) -> GroupChild {
        let mut cmd = Command::new("/bin/sh");
        cmd.args(["-c", script]).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        spawn(&mut cmd).unwrap()
    }

    fn lines(limit: Duration, cap: usize, line_cap: usize) -> Limits {
        let how = Reading::Lines { line_cap_bytes: line_cap };
        Limits { deadline: Instant::now() + limit, output_cap_bytes: cap, stdout: how, stderr: how, tick: None }
    }

    #[test]
    fn every_line_of_both_pipes_comes_cut_and_capped_before_the_exit_is_reported() {
        let mut child = sh("echo one; echo two >&2; printf 'abcdefgh\\nlast'; echo; echo dropped; exit 3");
        let mut seen = Vec::new();
        let outcome = child.supervise(&lines(Duration::from_secs(20), 14, 4), &mut |e| {
            seen.push(e);
            Flow::Go
        });
        assert_eq!(outcome.ending, Ending::Exited);
        assert_eq!(outcome.status.and_then(|s| s.code()), Some(3));
        let out: Vec<_> = seen
            .iter()
            .filter_map(|e| match e {
                Event::Output(Output::Line(Stream::Out, l)) => Some(l.as_str()),
                _ => None,
            })
            .collect();
        // "one\n", "abcde" (a cut line counts the cap and one byte) and "last\n" fill the cap of 14.
        assert_eq!(out, ["one", "abcd", "last"]);
        assert!(seen.contains(&Event::Output(Output::Line(Stream::Err, "two".into()))), "{seen:?}");
    }

    #[test]
    fn a_stop_kills_the_group_and_a_silent_child_gets_ticks() {
        let mut child = sh("sleep 30 & sleep 30");
        let mut ticks = 0;
        let started = Instant::now();
        let mut limits = lines(Duration::from_secs(60), 1024, 1024);
        limits.tick = Some(Duration::from_millis(20));
        let outcome = child.supervise(&limits, &mut |e| {
            ticks += usize::from(e == Event::Tick);
            if ticks == 3 { Flow::Stop } else { Flow::Go }
        });
        assert_eq!(outcome.ending, Ending::Stopped);
        assert!(outcome.status.is_some_and(|s| s.code().is_none()), "{outcome:?}");
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    }

    /// An interrupt lets the child clean up and exit by itself (pip's KeyboardInterrupt path); one
    /// that ignores it is killed when the wait is over, and on Linux (where `/proc` says it ignores
    /// SIGINT, as a child of a background job inherits) at once.
    #[cfg(unix)]
    #[test]
    fn an_interrupt_lets_the_child_exit_itself_and_kills_it_after_the_wait() {
        let mut child = sh("trap 'echo cleaned up; exit 7' INT; echo ready; while :; do sleep 0.05; done");
        let mut seen = Vec::new();
        let outcome = child.supervise(&lines(Duration::from_secs(60), 1024, 1024), &mut |e| {
            let ready = e == Event::Output(Output::Line(Stream::Out, "ready".into()));
            seen.push(e);
            if ready { Flow::Interrupt(Duration::from_secs(30)) } else { Flow::Go }
        });
        assert_eq!(outcome.ending, Ending::Stopped);
        assert_eq!(outcome.status.and_then(|s| s.code()), Some(7), "{seen:?}");
        assert!(seen.contains(&Event::Output(Output::Line(Stream::Out, "cleaned up".into()))), "{seen:?}");

        let mut deaf = sh("trap '' INT; echo ready; exec sleep 30");
        let started = Instant::now();
        let outcome = deaf.supervise(&lines(Duration::from_secs(60), 1024, 1024), &mut |e| {
            if e == Event::Output(Output::Line(Stream::Out, "ready".into())) {
                Flow::Interrupt(if cfg!(target_os = "linux") {
                    Duration::from_secs(30)
                } else {
                    Duration::from_millis(300)
                })
            } else {
                Flow::Go
            }
        });
        assert_eq!(outcome.ending, Ending::Stopped);
        assert!(outcome.status.is_some_and(|s| s.code().is_none()), "{outcome:?}");
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    }

    #[test]
    fn the_sigint_bit_is_read_from_the_ignore_mask() {
        if cfg!(target_os = "linux") {
            assert!(ignores_sigint(std::process::id()).is_some(), "this process's own mask is readable");
        }
        assert_eq!(sigint_in_mask("Name:\tsh\nSigIgn:\t0000000000000002\nSigCgt:\t0\n"), Some(true));
        assert_eq!(sigint_in_mask("SigIgn:\t0000000000001006\n"), Some(true));
        assert_eq!(sigint_in_mask("SigIgn:\t0000000000001004\n"), Some(false));
        assert_eq!(sigint_in_mask("SigIgn:\tzz\n"), None);
        assert_eq!(sigint_in_mask("SigIgn:"), None);
        assert_eq!(sigint_in_mask(""), None);
        assert_eq!(sigint_in_mask(&"SigIgn:\t".repeat(100_000)), None);
    }

    #[test]
    fn a_signal_only_sets_the_flag_while_a_graceful_stop_is_held_and_only_once() {
        use std::sync::atomic::Ordering;
        assert!(!only_asks_to_stop(), "without one, a signal ends everything");
        let held = graceful_stop();
        assert!(!held.flag().load(Ordering::SeqCst));
        assert!(only_asks_to_stop(), "the first signal asks");
        assert!(held.flag().load(Ordering::SeqCst));
        assert!(!only_asks_to_stop(), "a second one ends everything");
        drop(held);
    }

    #[test]
    fn the_deadline_kills_a_child_that_does_not_exit() {
        let mut child = sh("echo started; exec sleep 30");
        let started = Instant::now();
        let outcome = child.supervise(&Limits::chunks(Duration::from_millis(200), 1024), &mut |_| Flow::Go);
        assert_eq!(outcome.ending, Ending::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    }

    #[test]
    fn wait_or_kill_answers_at_the_exit_and_kills_past_the_limit() {
        let mut quick = sh("exit 7");
        assert_eq!(quick.wait_or_kill(Duration::from_secs(20)).and_then(|s| s.code()), Some(7));
        let mut slow = sh("exec sleep 30");
        let started = Instant::now();
        assert_eq!(slow.wait_or_kill(Duration::from_millis(100)).map(|s| s.code()), Some(None));
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    }
}
