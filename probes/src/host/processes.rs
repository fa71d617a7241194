//! Which processes use a GPU, as nvitop's process panel shows them: NVML's running compute and
//! graphics processes (pid, GPU memory, MIG instance) and per-process utilisation (SM, memory,
//! encoder, decoder over the last interval), with the name, command line, owner, CPU and resident
//! memory read from `/proc`.
//!
//! NVML answers with the host's pids. Inside a container with its own PID namespace `/proc` does
//! not have them (or has other processes under the same numbers), so there the rows say why they
//! have no name instead of showing the wrong one (NVIDIA/nvidia-docker#1483, #179: the driver does
//! not know PID namespaces). Every `/proc` read may fail (the process ended, `hidepid`, another
//! PID namespace): the row then says which read failed and why, and nothing panics on what the
//! files hold.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::struct_wrappers::device::{ProcessInfo, ProcessUtilizationSample};
use serde::{Deserialize, Serialize};

/// Which kind of context a process holds on the GPU, as nvidia-smi's "Type" column says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProcessKind {
    /// A compute context (CUDA): `C`.
    Compute,
    /// A graphics context (OpenGL, Vulkan, a display server): `G`.
    Graphics,
    /// Both: `C+G`.
    Both,
}

impl ProcessKind {
    /// nvidia-smi's letters: `C`, `G`, `C+G`.
    pub fn letters(self) -> &'static str {
        match self {
            Self::Compute => "C",
            Self::Graphics => "G",
            Self::Both => "C+G",
        }
    }
}

/// One process on one GPU. Every `None` means it could not be read (see `unreadable`), or NVML
/// did not report it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GpuProcess {
    /// The pid NVML gave: the host's, also inside a container.
    pub pid: u32,
    /// Compute, graphics or both.
    pub kind: Option<ProcessKind>,
    /// GPU memory the process holds, bytes; `None` where NVML cannot say (Windows' WDDM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_memory_bytes: Option<u64>,
    /// The MIG GPU instance it runs in, with MIG on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_instance_id: Option<u32>,
    /// The MIG compute instance it runs in, with MIG on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_instance_id: Option<u32>,
    /// SM (3D and compute) utilisation over NVML's last samples, percent; 0 when NVML had no
    /// sample of it (it keeps only non-zero ones), `None` when NVML could not be asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_pct: Option<u32>,
    /// Framebuffer memory (controller) utilisation, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_pct: Option<u32>,
    /// Video encoder utilisation, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enc_pct: Option<u32>,
    /// Video decoder utilisation, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dec_pct: Option<u32>,
    /// The name the kernel keeps (`/proc/PID/comm`, at most 15 bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The command line, arguments joined by spaces (`/proc/PID/cmdline`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The owner's user name, or the uid where `/etc/passwd` has no name for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Host CPU use since the previous look, percent of one core (over 100 with many threads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_pct: Option<f64>,
    /// Resident host memory, bytes (`VmRSS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_memory_bytes: Option<u64>,
    /// Why some of the host-side fields are blank: the process ended, another PID namespace, not
    /// permitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
}

/// What NVML said about one GPU's processes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GpuProcesses {
    /// One per pid, the most GPU memory first.
    pub processes: Vec<GpuProcess>,
    /// Why a part is missing although the list came: one of the two lists failed, or per-process
    /// utilisation is not supported (NVML's answer).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The newest utilisation sample's timestamp (µs, NVML's clock): the next call asks only for
    /// samples after it.
    #[serde(default)]
    pub last_seen_us: u64,
}

/// Merges NVML's two lists and its utilisation samples by pid: a pid in both lists is `Both` (its
/// memory the larger of the two answers, which are the same allocation), a pid listed twice in one
/// list (two MIG instances) adds up, each pid takes its newest sample, and a sample of a pid no
/// longer listed is dropped. A listed pid without a sample had 0 % (NVML keeps only non-zero
/// samples), unless the samples could not be read. Fails only when both lists failed.
pub fn merge(
    compute: Result<Vec<ProcessInfo>, NvmlError>,
    graphics: Result<Vec<ProcessInfo>, NvmlError>,
    utilization: Result<Vec<ProcessUtilizationSample>, NvmlError>,
    since_us: u64,
) -> Result<GpuProcesses, String> {
    let mut notes = Vec::new();
    let mut rows: BTreeMap<u32, GpuProcess> = BTreeMap::new();
    let lists = [(compute, ProcessKind::Compute, "compute"), (graphics, ProcessKind::Graphics, "graphics")];
    let mut failed = Vec::new();
    for (list, kind, what) in lists {
        let list = match list {
            Ok(list) => list,
            Err(e) => {
                failed.push(format!("NVML could not list the {what} processes: {e}"));
                continue;
            }
        };
        let mut this_list: BTreeMap<u32, GpuProcess> = BTreeMap::new();
        for p in list {
            let memory = match p.used_gpu_memory {
                UsedGpuMemory::Used(bytes) => Some(bytes),
                UsedGpuMemory::Unavailable => None,
            };
            let row = this_list.entry(p.pid).or_insert_with(|| GpuProcess {
                pid: p.pid,
                kind: Some(kind),
                gpu_instance_id: p.gpu_instance_id,
                compute_instance_id: p.compute_instance_id,
                ..GpuProcess::default()
            });
            row.used_memory_bytes = add(row.used_memory_bytes, memory);
        }
        for (pid, new) in this_list {
            match rows.get_mut(&pid) {
                Some(row) => {
                    row.kind = Some(ProcessKind::Both);
                    row.used_memory_bytes = row.used_memory_bytes.max(new.used_memory_bytes);
                }
                None => {
                    rows.insert(pid, new);
                }
            }
        }
    }
    if failed.len() == 2 {
        return Err(failed.join("; "));
    }
    notes.extend(failed);
    let last_seen_us = take_samples(&mut rows, utilization, since_us, &mut notes);
    let mut processes: Vec<GpuProcess> = rows.into_values().collect();
    sort_by_memory(&mut processes);
    Ok(GpuProcesses { processes, notes, last_seen_us })
}

/// The sum of two memory answers, unknown only when neither is known.
fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.saturating_add(b)),
        (a, b) => a.or(b),
    }
}

/// Puts each listed pid's newest utilisation sample into its row; returns the newest timestamp.
fn take_samples(
    rows: &mut BTreeMap<u32, GpuProcess>,
    utilization: Result<Vec<ProcessUtilizationSample>, NvmlError>,
    since_us: u64,
    notes: &mut Vec<String>,
) -> u64 {
    let samples = match utilization {
        Ok(samples) => samples,
        // No process had a non-zero sample since `since_us`: normal on an idle GPU.
        Err(NvmlError::NotFound) => Vec::new(),
        Err(e) => {
            notes.push(format!("NVML gave no per-process utilisation: {e}"));
            return since_us;
        }
    };
    let mut newest: BTreeMap<u32, &ProcessUtilizationSample> = BTreeMap::new();
    for s in &samples {
        let slot = newest.entry(s.pid).or_insert(s);
        if s.timestamp > slot.timestamp {
            *slot = s;
        }
    }
    for row in rows.values_mut() {
        let s = newest.get(&row.pid);
        row.sm_pct = Some(s.map_or(0, |s| s.sm_util));
        row.mem_pct = Some(s.map_or(0, |s| s.mem_util));
        row.enc_pct = Some(s.map_or(0, |s| s.enc_util));
        row.dec_pct = Some(s.map_or(0, |s| s.dec_util));
    }
    samples.iter().map(|s| s.timestamp).max().unwrap_or(since_us).max(since_us)
}

/// The most GPU memory first (unknown last), then by pid.
pub fn sort_by_memory(processes: &mut [GpuProcess]) {
    processes.sort_by(|a, b| b.used_memory_bytes.cmp(&a.used_memory_bytes).then(a.pid.cmp(&b.pid)));
}

/// Asks NVML about one GPU's processes: the `_v3` calls (drivers from about 510 on), else the
/// `_v2` ones older drivers have (a missing symbol is what an older driver answers), and the
/// utilisation samples since `since_us`.
pub(crate) fn from_nvml(d: &nvml_wrapper::Device<'_>, since_us: u64) -> Result<GpuProcesses, String> {
    let compute = match d.running_compute_processes() {
        Err(NvmlError::FailedToLoadSymbol(_)) => d.running_compute_processes_v2(),
        other => other,
    };
    let graphics = match d.running_graphics_processes() {
        Err(NvmlError::FailedToLoadSymbol(_)) => d.running_graphics_processes_v2(),
        other => other,
    };
    merge(compute, graphics, d.process_utilization_stats(since_us), since_us)
}

/// USER_HZ, the unit of `/proc/PID/stat`'s CPU times: 100 on every Linux architecture gpu-doctor
/// builds for (proc(5): `sysconf(_SC_CLK_TCK)`).
const CLOCK_TICKS_PER_SECOND: f64 = 100.0;
/// The most of a command line kept.
const MAX_COMMAND_BYTES: u64 = 64 * 1024;
/// CPU use is measured over at least this long; a second look sooner (the same pid on two GPUs)
/// repeats the last figure.
const MIN_CPU_SPAN: Duration = Duration::from_millis(200);

/// Reads what the host knows about a pid from a `/proc` tree and a passwd file (the real ones on
/// a live machine, a temporary folder in tests), and keeps each pid's CPU time from the last look
/// to give CPU use.
#[derive(Debug)]
pub struct ProcReader {
    /// Where procfs is: `/proc`.
    pub proc: PathBuf,
    /// The passwd file: `/etc/passwd`.
    pub passwd: PathBuf,
    /// Per pid: its CPU time at the last look.
    cpu: Mutex<BTreeMap<u32, CpuMark>>,
    /// Whether this process sits in a child PID namespace, read at the first look: a process
    /// never changes its PID namespace, so it is not read again every round for every GPU.
    child_namespace: OnceLock<bool>,
}

/// A process's CPU ticks, when they were read, and the CPU use last worked out.
type CpuMark = (u64, Instant, Option<f64>);

impl Default for ProcReader {
    fn default() -> Self {
        Self::new(PathBuf::from("/proc"), PathBuf::from("/etc/passwd"))
    }
}

impl ProcReader {
    /// A reader of `proc` and `passwd`.
    pub fn new(proc: PathBuf, passwd: PathBuf) -> Self {
        Self { proc, passwd, cpu: Mutex::default(), child_namespace: OnceLock::new() }
    }

    /// Fills the host-side fields of each process, as seen at `now`.
    pub fn describe(&self, processes: &mut [GpuProcess], now: Instant) {
        if processes.is_empty() {
            return;
        }
        if self.in_child_pid_namespace() {
            for p in processes {
                p.unreadable = Some(
                    "NVML gives the host's pids and gpu-doctor runs in its own PID namespace (a container), \
                     so this pid cannot be looked up here (`docker run --pid=host` shows them)"
                        .to_owned(),
                );
            }
            return;
        }
        let users = read_small(&self.passwd).map(|t| users(&String::from_utf8_lossy(&t))).unwrap_or_default();
        for p in processes {
            self.describe_one(p, &users, now);
        }
        if let Ok(mut cpu) = self.cpu.lock() {
            cpu.retain(|_, (_, at, _)| now.saturating_duration_since(*at) < Duration::from_secs(60));
        }
    }

    fn describe_one(&self, p: &mut GpuProcess, users: &BTreeMap<u32, String>, now: Instant) {
        let dir = self.proc.join(p.pid.to_string());
        if !dir.is_dir() {
            p.unreadable =
                Some("not in /proc: it ended since NVML listed it, or it runs in another PID namespace".to_owned());
            return;
        }
        let mut why = Vec::new();
        let mut read = |file: &str| match read_small(&dir.join(file)) {
            Ok(bytes) => Some(bytes),
            Err(e) => {
                why.push(format!("/proc/{}/{file}: {}", p.pid, describe_error(&e)));
                None
            }
        };
        let comm = read("comm");
        let cmdline = read("cmdline");
        let status = read("status");
        let stat = read("stat");
        p.name = comm.map(|c| String::from_utf8_lossy(&c).trim_end_matches('\n').to_owned()).filter(|n| !n.is_empty());
        p.command = cmdline.as_deref().and_then(command_line);
        if let Some(status) = status.map(|s| String::from_utf8_lossy(&s).into_owned()) {
            p.user = status_field(&status, "Uid:")
                .and_then(|uid| uid.parse::<u32>().ok())
                .map(|uid| users.get(&uid).cloned().unwrap_or_else(|| uid.to_string()));
            p.host_memory_bytes =
                status_field(&status, "VmRSS:").and_then(|kb| kb.parse::<u64>().ok()).map(|kb| kb.saturating_mul(1024));
        }
        let ticks = stat.as_deref().and_then(cpu_ticks);
        p.cpu_pct = ticks.and_then(|t| self.cpu_pct(p.pid, t, now));
        if !why.is_empty() {
            p.unreadable = Some(why.join("; "));
        }
    }

    /// CPU use since the last look at `pid`, percent of one core; `None` at the first look.
    fn cpu_pct(&self, pid: u32, ticks: u64, now: Instant) -> Option<f64> {
        let mut cpu = self.cpu.lock().ok()?;
        let pct = match cpu.get(&pid) {
            Some((_, at, pct)) if now.saturating_duration_since(*at) < MIN_CPU_SPAN => return *pct,
            Some((before, at, _)) if ticks >= *before => {
                let secs = now.saturating_duration_since(*at).as_secs_f64();
                Some((ticks - before) as f64 / CLOCK_TICKS_PER_SECOND / secs * 100.0)
            }
            // A smaller count than before: the pid was reused by another process.
            _ => None,
        };
        cpu.insert(pid, (ticks, now, pct));
        pct
    }

    /// True when this process sits in a PID namespace below another (its `NSpid:` line has more
    /// than one pid), so NVML's host pids are not this `/proc`'s.
    fn in_child_pid_namespace(&self) -> bool {
        *self.child_namespace.get_or_init(|| {
            read_small(&self.proc.join("self/status")).is_ok_and(|s| {
                String::from_utf8_lossy(&s)
                    .lines()
                    .find_map(|l| l.strip_prefix("NSpid:"))
                    .is_some_and(|pids| pids.split_whitespace().count() > 1)
            })
        })
    }
}

/// Reads at most `MAX_COMMAND_BYTES` of a file.
fn read_small(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(MAX_COMMAND_BYTES).read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn describe_error(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => "not permitted (another user's process)".to_owned(),
        std::io::ErrorKind::NotFound => "gone (the process ended)".to_owned(),
        _ => e.to_string(),
    }
}

/// `/proc/PID/cmdline`'s NUL-separated arguments joined by spaces; `None` when empty (a kernel
/// thread, a zombie).
pub fn command_line(raw: &[u8]) -> Option<String> {
    let args: Vec<String> =
        raw.split(|b| *b == 0).filter(|a| !a.is_empty()).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
    (!args.is_empty()).then(|| args.join(" "))
}

/// The first value after `key` on its line of `/proc/PID/status` (`Uid:` gives the real uid,
/// `VmRSS:` the kB).
fn status_field<'a>(status: &'a str, key: &str) -> Option<&'a str> {
    status.lines().find_map(|l| l.strip_prefix(key)).and_then(|rest| rest.split_whitespace().next())
}

/// User time plus system time from `/proc/PID/stat`, in clock ticks. The name in parentheses may
/// hold spaces and parentheses, so the fields are counted after its last `)`.
pub fn cpu_ticks(stat: &[u8]) -> Option<u64> {
    let text = String::from_utf8_lossy(stat);
    let (_, rest) = text.rsplit_once(')')?;
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    utime.checked_add(stime)
}

/// Uid to user name from passwd lines (`name:x:uid:gid:…`); malformed lines are skipped.
pub fn users(passwd: &str) -> BTreeMap<u32, String> {
    let mut out = BTreeMap::new();
    for line in passwd.lines() {
        let mut parts = line.split(':');
        if let (Some(name), Some(_), Some(uid)) = (parts.next(), parts.next(), parts.next())
            && let Ok(uid) = uid.parse::<u32>()
            && !name.is_empty()
        {
            out.entry(uid).or_insert_with(|| name.to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(pid: u32, mib: u64) -> ProcessInfo {
        ProcessInfo {
            pid,
            used_gpu_memory: UsedGpuMemory::Used(mib << 20),
            gpu_instance_id: None,
            compute_instance_id: None,
        }
    }

    fn sample(pid: u32, timestamp: u64, sm: u32) -> ProcessUtilizationSample {
        ProcessUtilizationSample { pid, timestamp, sm_util: sm, mem_util: sm / 2, enc_util: 0, dec_util: 1 }
    }

    fn pids(list: &GpuProcesses) -> Vec<u32> {
        list.processes.iter().map(|p| p.pid).collect()
    }

    #[test]
    fn a_pid_in_both_lists_is_one_row_and_samples_of_gone_pids_are_dropped() {
        let compute = Ok(vec![listed(10, 100), listed(20, 4000), listed(30, 50)]);
        let graphics = Ok(vec![listed(30, 50), listed(40, 200)]);
        let samples = Ok(vec![sample(20, 5, 40), sample(20, 9, 90), sample(20, 7, 10), sample(99, 8, 70)]);
        let list = merge(compute, graphics, samples, 3).unwrap();
        assert_eq!(pids(&list), [20, 40, 10, 30], "the most GPU memory first");
        let row = |pid| list.processes.iter().find(|p| p.pid == pid).unwrap();
        assert_eq!(row(30).kind, Some(ProcessKind::Both));
        assert_eq!(row(30).used_memory_bytes, Some(50 << 20), "one allocation, not counted twice");
        assert_eq!(row(40).kind, Some(ProcessKind::Graphics));
        assert_eq!(row(10).kind, Some(ProcessKind::Compute));
        assert_eq!((row(20).sm_pct, row(20).mem_pct, row(20).dec_pct), (Some(90), Some(45), Some(1)), "the newest");
        assert_eq!(row(10).sm_pct, Some(0), "no sample: NVML keeps only non-zero ones");
        assert_eq!(list.last_seen_us, 9);
        assert!(list.notes.is_empty(), "{:?}", list.notes);
    }

    #[test]
    fn one_list_failing_is_a_note_and_both_failing_is_an_error() {
        let list = merge(Ok(vec![listed(1, 1)]), Err(NvmlError::NotSupported), Err(NvmlError::NotFound), 42).unwrap();
        assert_eq!(pids(&list), [1]);
        assert_eq!(list.processes[0].sm_pct, Some(0), "NotFound: nothing ran, which is normal");
        assert_eq!(list.last_seen_us, 42);
        assert_eq!(list.notes.len(), 1);
        assert!(list.notes[0].contains("graphics"), "{:?}", list.notes);

        let list = merge(Ok(vec![listed(1, 1)]), Ok(vec![]), Err(NvmlError::NotSupported), 0).unwrap();
        assert_eq!(list.processes[0].sm_pct, None, "not supported is not 0 %");
        assert!(list.notes[0].contains("utilisation"), "{:?}", list.notes);

        let err = merge(Err(NvmlError::NoPermission), Err(NvmlError::GpuLost), Ok(vec![]), 0).unwrap_err();
        assert!(err.contains("compute") && err.contains("graphics"), "{err}");
    }

    #[test]
    fn a_pid_twice_in_one_list_adds_up_and_unknown_memory_sorts_last() {
        let mut wddm = listed(5, 0);
        wddm.used_gpu_memory = UsedGpuMemory::Unavailable;
        let list =
            merge(Ok(vec![listed(7, 10), wddm, listed(7, 30), listed(6, 1)]), Ok(vec![]), Ok(vec![]), 0).unwrap();
        assert_eq!(pids(&list), [7, 6, 5]);
        assert_eq!(list.processes[0].used_memory_bytes, Some(40 << 20));
        assert_eq!(list.processes[2].used_memory_bytes, None);
    }

    /// A fake `/proc` with the files of each pid given, and a passwd file.
    struct Tree {
        dir: tempfile::TempDir,
    }

    impl Tree {
        fn new() -> Self {
            let tree = Self { dir: tempfile::tempdir().unwrap() };
            std::fs::create_dir_all(tree.dir.path().join("proc")).unwrap();
            std::fs::write(
                tree.dir.path().join("passwd"),
                "root:x:0:0:root:/root:/bin/bash\nbroken line\nada:x:1000:1000::/home/ada:/bin/sh\n",
            )
            .unwrap();
            tree
        }

        fn file(&self, path: &str, bytes: &[u8]) -> &Self {
            let path = self.dir.path().join("proc").join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
            self
        }

        fn reader(&self) -> ProcReader {
            ProcReader::new(self.dir.path().join("proc"), self.dir.path().join("passwd"))
        }
    }

    fn stat(comm: &str, utime: u64, stime: u64) -> Vec<u8> {
        format!("4242 ({comm}) S 1 4242 4242 0 -1 4194304 1 0 0 0 {utime} {stime} 0 0 20 0 1 0 100 0 0").into_bytes()
    }

    fn describe(reader: &ProcReader, pids: &[u32], now: Instant) -> Vec<GpuProcess> {
        let mut rows: Vec<GpuProcess> = pids.iter().map(|&pid| GpuProcess { pid, ..GpuProcess::default() }).collect();
        reader.describe(&mut rows, now);
        rows
    }

    #[test]
    fn proc_gives_name_command_owner_memory_and_cpu() {
        let tree = Tree::new();
        tree.file("4242/comm", b"python3\n")
            .file("4242/cmdline", b"python3\0train.py\0--lr\0\0")
            .file("4242/status", b"Name:\tpython3\nUid:\t1000\t1000\t1000\t1000\nVmRSS:\t  2048 kB\n")
            .file("4242/stat", &stat("python3 (worker) x", 100, 50))
            .file("7/comm", b"Xorg\n")
            .file("7/cmdline", b"")
            .file("7/status", b"Uid:\t4000\t4000\t4000\t4000\n")
            .file("7/stat", b"7 (Xorg) R 1");
        let reader = tree.reader();
        let t0 = Instant::now();
        let rows = describe(&reader, &[4242, 7], t0);
        let (py, xorg) = (&rows[0], &rows[1]);
        assert_eq!(py.name.as_deref(), Some("python3"));
        assert_eq!(py.command.as_deref(), Some("python3 train.py --lr"));
        assert_eq!(py.user.as_deref(), Some("ada"));
        assert_eq!(py.host_memory_bytes, Some(2048 * 1024));
        assert_eq!(py.cpu_pct, None, "the first look has nothing to compare with");
        assert_eq!(py.unreadable, None);
        assert_eq!(xorg.user.as_deref(), Some("4000"), "a uid without a name shows the number");
        assert_eq!(xorg.command, None, "an empty cmdline");
        assert_eq!(xorg.cpu_pct, None, "a short stat line");

        tree.file("4242/stat", &stat("python3 (worker) x", 250, 100));
        let rows = describe(&reader, &[4242], t0 + Duration::from_secs(2));
        assert_eq!(rows[0].cpu_pct, Some(100.0), "200 ticks of 1/100 s in 2 s: one core");
        tree.file("4242/stat", &stat("python3", 900, 100));
        let rows = describe(&reader, &[4242], t0 + Duration::from_millis(2100));
        assert_eq!(rows[0].cpu_pct, Some(100.0), "too soon to measure again: the last figure");
    }

    #[test]
    fn a_vanished_pid_and_an_unreadable_file_say_why() {
        let tree = Tree::new();
        tree.file("5/comm", b"app\n").file("5/cmdline", b"app\0");
        let rows = describe(&tree.reader(), &[5, 6], Instant::now());
        assert_eq!(rows[0].name.as_deref(), Some("app"));
        let why = rows[0].unreadable.as_deref().unwrap();
        assert!(why.contains("/proc/5/status") && why.contains("gone"), "{why}");
        assert!(rows[0].user.is_none());
        let why = rows[1].unreadable.as_deref().unwrap();
        assert!(why.contains("not in /proc"), "{why}");
        assert!(rows[1].name.is_none());
    }

    #[test]
    fn a_refused_read_says_not_permitted() {
        let refused = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert_eq!(describe_error(&refused), "not permitted (another user's process)");
        assert_eq!(describe_error(&std::io::Error::from(std::io::ErrorKind::NotFound)), "gone (the process ended)");
    }

    #[test]
    fn inside_another_pid_namespace_no_pid_is_looked_up() {
        let tree = Tree::new();
        tree.file("self/status", b"Name:\tgpu-doctor\nNSpid:\t81234\t12\n").file("12/comm", b"bash\n");
        let reader = tree.reader();
        let rows = describe(&reader, &[12], Instant::now());
        assert_eq!(rows[0].name, None, "pid 12 here is not NVML's pid 12");
        assert!(rows[0].unreadable.as_deref().unwrap().contains("PID namespace"));

        tree.file("self/status", b"NSpid:\t81234\n");
        assert_eq!(describe(&tree.reader(), &[12], Instant::now())[0].name.as_deref(), Some("bash"));
        assert_eq!(describe(&reader, &[12], Instant::now())[0].name, None, "read once: a process keeps its namespace");
    }

    #[test]
    fn garbage_in_proc_files_reads_as_unknown() {
        assert_eq!(cpu_ticks(b"no parenthesis 1 2 3"), None);
        assert_eq!(cpu_ticks(b"1 (x) S 1 2 3 4 5 6 7 8 9 10 abc 12"), None);
        assert_eq!(cpu_ticks(&stat(") (", 3, 4)), Some(7));
        assert_eq!(cpu_ticks(&stat("x", u64::MAX, 1)), None, "overflow");
        assert_eq!(command_line(b"\0\0"), None);
        assert_eq!(command_line(b"a\xffb\0c"), Some("a\u{fffd}b c".to_owned()));
        assert_eq!(status_field("Uid:", "Uid:"), None);
        assert_eq!(users("::0:\nx:y:notanumber\n:x:5:5\n"), BTreeMap::new());
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_in_proc_files_never_panic(
            comm in proptest::collection::vec(proptest::num::u8::ANY, 0..64),
            cmdline in proptest::collection::vec(proptest::num::u8::ANY, 0..256),
            status in proptest::collection::vec(proptest::num::u8::ANY, 0..256),
            stat in proptest::collection::vec(proptest::num::u8::ANY, 0..256),
            passwd in proptest::collection::vec(proptest::num::u8::ANY, 0..256),
        ) {
            let tree = Tree::new();
            tree.file("3/comm", &comm).file("3/cmdline", &cmdline).file("3/status", &status).file("3/stat", &stat);
            tree.file("self/status", &status);
            std::fs::write(tree.dir.path().join("passwd"), &passwd).unwrap();
            let reader = tree.reader();
            let now = Instant::now();
            describe(&reader, &[3], now);
            describe(&reader, &[3], now + Duration::from_secs(1));
        }
    }
}
