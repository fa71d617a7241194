//! Children that cannot outlive their welcome: each runs in its own process group, so a time limit
//! ends everything it started (a wrapper script's `sleep &` too), and every live group is ended
//! when gpu-doctor itself is told to stop (`forward_signals`). A worker process can also ask to
//! die with its parent (`die_with_parent`).
//!
//! The one place that starts a program: `SystemHost::run` (probes) and the benchmark runner
//! (kernels) both spawn through `spawn`.

use std::collections::BTreeSet;
use std::io::Read;
use std::process::{Child, Command, ExitStatus};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

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

    /// Waits up to `limit` for the child to exit; past it, kills the group and reaps the child.
    pub fn wait_or_kill(&mut self, limit: Duration) -> Option<ExitStatus> {
        let until = Instant::now() + limit;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < until => thread::sleep(Duration::from_millis(10)),
                Ok(None) => {
                    self.kill_group();
                    return self.child.wait().ok();
                }
                Err(_) => return None,
            }
        }
    }
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
    use rustix::process::{Pid, Signal, kill_process_group};
    if let Some(pid) = i32::try_from(pgid).ok().and_then(Pid::from_raw) {
        let _ = kill_process_group(pid, Signal::KILL);
    }
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

/// On SIGINT, SIGTERM and SIGHUP: end every child group, then exit with 128 + the signal, as the
/// default action would. Children run in their own groups, so a Ctrl+C at the terminal reaches
/// only gpu-doctor; this passes it on. Call once, early in `main`. Does nothing off Unix.
pub fn forward_signals() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
        thread::Builder::new().name("signal-forward".into()).spawn(move || {
            if let Some(sig) = signals.forever().next() {
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

/// A pipe drained on its own named thread into a shared buffer, so what was read so far can be
/// taken even when something still holds the pipe open.
#[derive(Debug)]
pub struct Drain {
    kept: Arc<Mutex<Vec<u8>>>,
    handle: Option<JoinHandle<()>>,
}

impl Drain {
    /// Starts reading `pipe`, keeping at most `cap` bytes (the rest is read and dropped).
    pub fn start(name: &str, mut pipe: impl Read + Send + 'static, cap: usize) -> Self {
        let kept = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&kept);
        let handle = thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                let mut buf = [0u8; 16 * 1024];
                loop {
                    match pipe.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            let mut kept = sink.lock().unwrap_or_else(PoisonError::into_inner);
                            let room = cap.saturating_sub(kept.len());
                            kept.extend_from_slice(&buf[..n.min(room)]);
                        }
                    }
                }
            })
            .ok();
        Self { kept, handle }
    }

    /// True once the pipe reached its end (or the thread could not start).
    pub fn is_done(&self) -> bool {
        self.handle.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// What was read so far, lossily decoded. The thread is joined when it has finished and left
    /// to end on its own otherwise.
    pub fn take(mut self) -> String {
        if let Some(h) = self.handle.take().filter(JoinHandle::is_finished) {
            let _ = h.join();
        }
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&kept).into_owned()
    }
}
