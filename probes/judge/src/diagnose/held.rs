//! GPU memory held by another process when a program ran out of it.
//!
//! PyTorch's out-of-memory message (2.1 and later) lists the compute processes NVML counts on the
//! GPU (c10/cuda/CUDACachingAllocator.cpp, reportProcessMemoryInfo): the process itself as
//! `Including non-PyTorch memory, this process has X memory in use`, every other one as `Process PID
//! has X memory in use`. Only where the process found itself (in a container its PID differs from
//! the one NVML gives, and it reads as `Process PID` too) are the others known to be others; where
//! what they hold, added to what was free, would have covered the request, they are why it failed.
//!
//! Before 2.1 the message lists no process but gives the GPU's totals (`… total capacity; … free; … reserved
//! in total by PyTorch`): memory neither free nor PyTorch's, where it is most of the GPU, is most often another
//! process's.
//!
//! A process nvidia-smi lists on a GPU that `ps` shows stopped (state `T`: Ctrl-Z, or a debugger) keeps
//! its GPU memory until it is continued or killed: every new job on that GPU runs short.

use super::{Ctx, Rule, fix};
use gpu_doctor_model::shell::ShellCommand;
use gpu_doctor_model::{Category, Finding, ObservedMessage, OsFamily, Severity, StoppedGpuProcess};

/// The catalogue row of PyTorch's message with its process list.
const MESSAGE: &str = "torch.out_of_memory_processes";

/// The catalogue row of PyTorch's message before 2.1, with the GPU's totals and no process list.
const TOTALS: &str = "torch.out_of_memory_totals";

/// What a process's own CUDA context and a desktop may hold beside PyTorch's memory (a few hundred MiB each).
const OUTSIDE_ALLOWANCE: f64 = 1024.0 * 1024.0 * 1024.0;

pub(super) const HELD: Rule = Rule {
    id: "health.gpu_memory_held_by_other_process",
    category: Category::Other,
    severity: Severity::Warning,
    trigger: "PyTorch ran out of GPU memory, its message names the process itself (`this process has …`) and \
              other processes (`Process PID has …`) on that GPU, and what the others hold, added to the memory \
              that was free, would have covered the allocation that failed: another program (a second job, a \
              stopped or stuck one, a notebook kernel) holds the memory. Before 2.1 the message gives the GPU's \
              totals instead: where the memory neither free nor reserved by PyTorch is at least a quarter of the GPU \
              and covers the request with 1 GiB to spare (the process's own CUDA context and a desktop hold a few \
              hundred MiB), it is held outside PyTorch's allocator, most often by another process. Or a process nvidia-smi's process table \
              lists on a GPU is stopped in a `ps aux` listing beside it (state T: suspended with Ctrl-Z, or held by a \
              debugger): it keeps its GPU memory until it is continued or killed.",
    source: "pytorch/pytorch:c10/cuda/CUDACachingAllocator.cpp@001074d25084fdb87a799823e395a50f5ec044d3 \
             (reportProcessMemoryInfo: NVML's nvmlDeviceGetComputeRunningProcesses, `this process` where the PID \
             is getpid(), `Process <pid>` otherwise; DeviceCachingAllocator::malloc's `CUDA out of memory. Tried to \
             allocate …`); procps ps(1) PROCESS STATE CODES (`T stopped by job control signal`, `t stopped by \
             debugger during the tracing`)",
};

pub(super) const RULES: &[Rule] = &[HELD];

/// `13.09 GiB` (PyTorch's format_size: bytes, KiB, MiB, GiB, TiB) in bytes.
fn bytes(text: &str) -> Option<f64> {
    let (number, unit) = text.trim().split_once(char::is_whitespace)?;
    let n: f64 = number.parse().ok()?;
    let scale = match unit.trim() {
        "bytes" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    (n.is_finite() && n >= 0.0).then_some(n * scale)
}

/// The message's process list: this process's size where it found itself, and each other (PID, size).
struct Processes {
    this: Option<String>,
    others: Vec<(u32, String)>,
}

fn processes(list: &str) -> Processes {
    let mut out = Processes { this: None, others: Vec::new() };
    let words: Vec<&str> = list.split_whitespace().collect();
    for (i, w) in words.iter().enumerate() {
        if *w != "has" || i == 0 || i + 2 >= words.len() {
            continue;
        }
        let size = format!("{} {}", words[i + 1], words[i + 2]);
        if bytes(&size).is_none() {
            continue;
        }
        if words[i - 1] == "process" {
            out.this = Some(size);
        } else if i >= 2
            && words[i - 2] == "Process"
            && let Ok(pid) = words[i - 1].parse()
        {
            out.others.push((pid, size));
        }
    }
    out
}

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    if let Some(f) = cx.s.messages.iter().filter(|m| m.id == MESSAGE).find_map(|m| held(cx, m)) {
        out.push(f);
    } else if let Some(f) = cx.s.messages.iter().filter(|m| m.id == TOTALS).find_map(|m| held_outside(cx, m)) {
        out.push(f);
    } else if !cx.s.stopped_gpu_processes.is_empty() {
        out.push(stopped(cx, &cx.s.stopped_gpu_processes));
    }
}

/// `25081 MiB` of a process table's size.
fn mib(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "memory".to_owned(), |b| format!("{} MiB", b / (1024 * 1024)))
}

fn stopped(cx: &Ctx<'_>, procs: &[StoppedGpuProcess]) -> Finding {
    let named: Vec<String> =
        procs.iter().map(|p| format!("process {} ({} on GPU {})", p.pid, mib(p.used_memory_bytes), p.gpu)).collect();
    let pids: Vec<String> = procs.iter().map(|p| p.pid.to_string()).collect();
    let evidence = procs
        .iter()
        .map(|p| {
            format!(
                "nvidia-smi: GPU {} process {} uses {}; ps: state {}: {}",
                p.gpu,
                p.pid,
                mib(p.used_memory_bytes),
                p.state,
                p.line
            )
        })
        .collect();
    let kill = fix::command(
        cx,
        &ShellCommand::new("kill").args(["-CONT"].into_iter().chain(pids.iter().map(String::as_str))),
        true,
    );
    let term = fix::command(cx, &ShellCommand::new("kill").args(pids.iter().map(String::as_str)), true);
    HELD.finding(
        format!("A stopped process holds GPU memory: {}", named.join(", ")),
        "The process is stopped (ps state T: suspended with Ctrl-Z, or held by a debugger), not ended: it keeps its \
         GPU memory until it is continued or killed, so jobs started on that GPU since run out of memory or fail to \
         start.",
        evidence,
        Some(format!(
            "End it: from its shell `fg` then Ctrl-C, or {term} then {kill} (a stopped process acts on the TERM signal \
             once continued); as another user, ask its owner or an administrator. nvidia-smi should then list no \
             process there."
        )),
    )
}

/// nvidia-smi's list of the compute processes on each GPU, with what each holds, for the fix.
fn apps_query(cx: &Ctx<'_>) -> String {
    fix::command(
        cx,
        &ShellCommand::new("nvidia-smi").args(["--query-compute-apps=pid,process_name,used_memory", "--format=csv"]),
        false,
    )
}

/// PyTorch's message before 2.1: the GPU's total, what was free and what PyTorch reserved. What none of them
/// accounts for is held outside the process; where that is most of the GPU, by another process.
fn held_outside(cx: &Ctx<'_>, m: &ObservedMessage) -> Option<Finding> {
    let value = |k: &str| m.values.get(k).map(String::as_str);
    let (requested, total, free, reserved) =
        (bytes(value("requested")?)?, bytes(value("total")?)?, bytes(value("free")?)?, bytes(value("reserved")?)?);
    let outside = total - free - reserved;
    if outside < requested + OUTSIDE_ALLOWANCE || outside < total / 4.0 {
        return None;
    }
    let gib = |b: f64| format!("{:.2} GiB", b / (1024.0 * 1024.0 * 1024.0));
    let gpu = value("gpu").unwrap_or("0");
    let query = apps_query(cx);
    Some(HELD.finding(
        format!("About {} of GPU {gpu}'s memory is held outside PyTorch, likely by another process", gib(outside)),
        format!(
            "PyTorch asked for {} on GPU {gpu} ({} in all) with {} free, while it held {} itself: about {} is held \
             outside its allocator, far more than this process's CUDA context takes. Most often another program (a \
             second job, a notebook kernel, an earlier run that hung or was suspended with Ctrl-Z and never ended) \
             keeps that memory until it exits; less often a library in this same process that allocates on its own \
             (TensorRT, JAX, NCCL's buffers).",
            value("requested").unwrap_or("memory"),
            value("total").unwrap_or("its memory"),
            value("free").unwrap_or("little"),
            value("reserved").unwrap_or("little"),
            gib(outside)
        ),
        vec![m.line.clone()],
        Some(format!(
            "See what holds it ({query}, or `nvidia-smi` alone); stop what is yours (`kill <PID>`; a stopped job: `fg` \
             then Ctrl-C) or ask its owner, then run again. Where nvidia-smi lists no process (a container cannot see \
             the host's PIDs), restart the container or the machine; or run on another GPU (CUDA_VISIBLE_DEVICES)."
        )),
    ))
}

fn held(cx: &Ctx<'_>, m: &ObservedMessage) -> Option<Finding> {
    let value = |k: &str| m.values.get(k).map(String::as_str);
    let list = processes(value("processes")?);
    let this = list.this.as_deref()?;
    if list.others.is_empty() {
        return None;
    }
    let requested = bytes(value("requested")?)?;
    let free = bytes(value("free")?)?;
    let held: f64 = list.others.iter().filter_map(|(_, s)| bytes(s)).sum();
    if free + held < requested {
        return None;
    }
    let gpu = value("gpu").unwrap_or("0");
    let total = value("total").unwrap_or("its memory");
    let others: Vec<String> = list.others.iter().map(|(pid, size)| format!("process {pid} ({size})")).collect();
    let pids: Vec<String> = list.others.iter().map(|(pid, _)| pid.to_string()).collect();
    let query = apps_query(cx);
    // Windows has no ps or kill: PowerShell's Get-Process and Stop-Process take the PIDs, comma-separated.
    let (ps, kill) = if cx.os == OsFamily::Windows {
        let ids = pids.join(",");
        (
            fix::command(cx, &ShellCommand::new("Get-Process").args(["-Id", ids.as_str()]), true),
            fix::command(cx, &ShellCommand::new("Stop-Process").args(["-Id", ids.as_str()]), true),
        )
    } else {
        (
            fix::command(
                cx,
                &ShellCommand::new("ps").args(["-o", "pid,user,stat,etime,args", "-p", &pids.join(",")]),
                true,
            ),
            fix::command(cx, &ShellCommand::new("kill").args(pids.iter().map(String::as_str)), true),
        )
    };
    Some(HELD.finding(
        format!("Other processes hold GPU {gpu}'s memory: {}", others.join(", ")),
        format!(
            "PyTorch asked for {} on GPU {gpu} ({total} in all) with {} free, while this process itself held {this}. \
             The other processes on that GPU hold more than the allocation lacked: without them it would have \
             fitted. A second job, a notebook kernel, or a stopped or hung run (one suspended with Ctrl-Z stays on \
             the GPU) keeps its memory until it exits.",
            value("requested").unwrap_or("memory"),
            value("free").unwrap_or("little"),
        ),
        vec![m.line.clone()],
        Some(format!(
            "See what they are ({ps}, or {query}); stop those that are yours ({kill}; a stopped job: `fg` then Ctrl-C) \
             or ask their owner, then run again; or run on another GPU (CUDA_VISIBLE_DEVICES)."
        )),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_pytorchs_units() {
        assert_eq!(bytes("512 bytes"), Some(512.0));
        assert_eq!(bytes("1.5 KiB"), Some(1536.0));
        assert_eq!(bytes("2.00 GiB"), Some(2.0 * 1024.0 * 1024.0 * 1024.0));
        assert_eq!(bytes("2.00 GB"), None);
        assert_eq!(bytes("-1 MiB"), None);
        assert_eq!(bytes("NaN MiB"), None);
        assert_eq!(bytes("GiB"), None);
    }

    #[test]
    fn the_process_list_tells_this_process_from_the_others() {
        let p = processes(
            "Process 6680 has 1.81 GiB memory in use. Including non-PyTorch memory, this process has 11.21 GiB \
             memory in use. Process 7 has 3 MiB memory in use. ",
        );
        assert_eq!(p.this.as_deref(), Some("11.21 GiB"));
        assert_eq!(p.others, vec![(6680, "1.81 GiB".to_owned()), (7, "3 MiB".to_owned())]);
        let cut = processes("Process 6680 has 1.81");
        assert!(cut.this.is_none() && cut.others.is_empty());
    }
}
