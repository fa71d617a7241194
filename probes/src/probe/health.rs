//! Each GPU's health (NVML's memory-error counters, clock-event reasons, limits, fan and
//! temperature thresholds; `nvidia-smi -q -x` when NVML cannot be used) and the NVIDIA driver's
//! Xid lines in the kernel log (`dmesg`, then `journalctl -k -b`), and from the same log the PCIe
//! bandwidth the kernel found each device limited to when it enumerated it (the link probe's).

use std::path::Path;
use std::time::Duration;

use crate::host::{Cmd, CmdOutput, Host, HostError, NvmlReport, which};
use gpu_doctor_kb::Kb;
use gpu_doctor_model::{AerCounters, BootLinkLimit, Gpu, GpuHealth, Health, OsFamily, XidEvent};
use gpu_doctor_model::{Probed, Trace};

use super::driver::SmiXml;
use super::gpus::smi_entry;

/// The longest a kernel-log reader may run.
const LOG_TIMEOUT: Duration = Duration::from_secs(10);

/// At most this many Xid events are kept, the latest: a faulting program can log thousands.
pub const MAX_XID_EVENTS: usize = 200;

/// What the health probe read: every GPU's health, and the kernel log's bandwidth lines at
/// enumeration (bus id, limit) of every device, which the link probe attaches to the GPUs' links.
#[derive(Debug, Clone)]
pub struct Reading {
    pub health: Health,
    pub boot_limits: Vec<(String, BootLinkLimit)>,
}

impl Reading {
    /// The GPUs' health (read into `trace`) joined with what the kernel log said; the log's trace
    /// entries follow the GPUs'.
    pub fn new(gpus: Probed<Vec<GpuHealth>>, log: KernelLog, trace: &mut Trace) -> Self {
        trace.append(log.trace);
        Reading { health: Health { gpus, xid_events: log.xid_events }, boot_limits: log.boot_limits }
    }
}

/// What the kernel log said: its Xid events, its bandwidth lines at enumeration, and how it was
/// read.
#[derive(Debug)]
pub struct KernelLog {
    xid_events: Probed<Vec<XidEvent>>,
    boot_limits: Vec<(String, BootLinkLimit)>,
    trace: Trace,
}

impl KernelLog {
    /// Reads the kernel log: `dmesg`, else `journalctl -k -b`.
    pub fn read(host: &dyn Host) -> Self {
        let mut trace = Trace::new("health");
        let (xid_events, boot_limits) = kernel_log(host, &mut trace);
        Self { xid_events, boot_limits, trace }
    }

    /// No log: the thread that read it failed with `error`.
    pub fn failed(error: &str) -> Self {
        Self {
            xid_events: Probed::Failed { error: error.to_owned() },
            boot_limits: Vec::new(),
            trace: Trace::default(),
        }
    }
}

/// Every listed GPU's health: from NVML's answer, else `nvidia-smi -q -x`; on Linux with the kernel's AER
/// counters of its PCI function (sysfs).
pub fn gpu_health(
    host: &dyn Host,
    nvml: &Result<NvmlReport, HostError>,
    smi: &SmiXml,
    gpus: &Probed<Vec<Gpu>>,
    trace: &mut Trace,
) -> Probed<Vec<GpuHealth>> {
    let mut health = driver_health(host, nvml, smi, gpus, trace);
    if let Probed::Found { value, .. } = &mut health
        && host.platform().os == OsFamily::Linux
    {
        for h in value.iter_mut() {
            h.aer = h.pci_bus_id.as_deref().and_then(|bus| aer(host, bus, trace));
        }
    }
    health
}

/// The kernel's AER counters of the PCI function at `bus` (sysfs form), through the host so that a
/// recording keeps them and a replay answers them; `None` where no file could be read (no AER
/// capability, a kernel before 4.19, a recording made before gpu-doctor read them).
fn aer(host: &dyn Host, bus: &str, trace: &mut Trace) -> Option<AerCounters> {
    let dir = Path::new("/sys/bus/pci/devices").join(bus);
    let mut read = |name: &str| match host.read_file(&dir.join(name)) {
        Ok(text) => AerCounters::parse(&text),
        Err(HostError::NotFound { .. }) => None,
        Err(e) => {
            trace.miss(format!("aer {bus} {name}"), e.to_string());
            None
        }
    };
    let counters = AerCounters {
        correctable: read("aer_dev_correctable"),
        nonfatal: read("aer_dev_nonfatal"),
        fatal: read("aer_dev_fatal"),
    };
    (counters != AerCounters::default()).then_some(counters)
}

/// Every listed GPU's health as the driver reports it: from NVML's answer, else `nvidia-smi -q -x`.
fn driver_health(
    host: &dyn Host,
    nvml: &Result<NvmlReport, HostError>,
    smi: &SmiXml,
    gpus: &Probed<Vec<Gpu>>,
    trace: &mut Trace,
) -> Probed<Vec<GpuHealth>> {
    let listed = match gpus {
        Probed::Found { value, .. } => value,
        Probed::Unsupported { reason } => return Probed::Unsupported { reason: reason.clone() },
        other => return Probed::absent(format!("no GPU to read: {}", other.why_not().unwrap_or("none listed"))),
    };
    let keyed = |mut h: GpuHealth, g: &Gpu| {
        h.index = g.index;
        h.pci_bus_id.clone_from(&g.pci_bus_id);
        h
    };
    if let Ok(report) = nvml {
        let found: Vec<GpuHealth> = listed
            .iter()
            .filter_map(|g| {
                let device = report.devices.iter().find(|d| d.gpu.index == g.index)?;
                Some(keyed(device.health.clone()?, g))
            })
            .collect();
        if !found.is_empty() {
            trace.ok("nvml health", format!("{} GPU(s)", found.len()));
            return Probed::found(found, "nvml");
        }
        trace.miss("nvml health", "NVML's answer holds no health readings (recorded by an older gpu-doctor)");
        return Probed::absent("NVML's answer holds no health readings: it was recorded by an older gpu-doctor");
    }
    match smi.get(host, trace) {
        Ok(r) => {
            let found: Vec<GpuHealth> =
                listed.iter().filter_map(|g| smi_entry(r, g).map(|s| keyed(s.health.clone(), g))).collect();
            if found.is_empty() {
                Probed::absent("nvidia-smi -q -x names none of the GPUs listed")
            } else {
                Probed::found(found, "nvidia-smi -q -x")
            }
        }
        Err(e) => Probed::absent(format!("neither NVML nor nvidia-smi answered: {e}")),
    }
}

/// The kernel log's Xid lines and bandwidth lines: `dmesg`, else `journalctl -k -b` (this boot). Not
/// permitted is a normal answer (`kernel.dmesg_restrict` lets only root read the log), `Absent` with
/// the reason, and no bandwidth lines.
fn kernel_log(host: &dyn Host, trace: &mut Trace) -> (Probed<Vec<XidEvent>>, Vec<(String, BootLinkLimit)>) {
    match host.platform().os {
        OsFamily::Linux => {}
        OsFamily::Windows => {
            let reason =
                "on Windows the driver logs Xid events in the Windows event log, which gpu-doctor does not read";
            return (Probed::Unsupported { reason: reason.to_owned() }, Vec::new());
        }
        _ => {
            let reason = "Xid events are read from the Linux kernel log";
            return (Probed::Unsupported { reason: reason.to_owned() }, Vec::new());
        }
    }
    let Ok(kb) = Kb::get() else {
        let error = "the knowledge base did not load (a bug: please report it)";
        return (Probed::Failed { error: error.to_owned() }, Vec::new());
    };
    let mut why_not = Vec::new();
    // The buffer itself first: what `dmesg` prints, without starting it (the system host only).
    match host.kernel_messages() {
        Ok(text) => {
            let lines: Vec<String> = text.lines().map(str::to_owned).collect();
            return read_log(&lines, "/dev/kmsg", kb, trace);
        }
        Err(HostError::Unavailable { .. }) => {}
        Err(e) => {
            trace.miss("/dev/kmsg", e.to_string());
            why_not.push(format!("/dev/kmsg: {e}"));
        }
    }
    let readers: [(&str, &[&str]); 2] = [("dmesg", &[]), ("journalctl", &["-k", "-b", "--no-pager"])];
    for (program, args) in readers {
        let name = std::iter::once(program).chain(args.iter().copied()).collect::<Vec<_>>().join(" ");
        let Some(path) = which(host, program) else {
            trace.miss(&name, "not found");
            why_not.push(format!("{program}: not installed"));
            continue;
        };
        let argv = std::iter::once(path.to_string_lossy().into_owned()).chain(args.iter().map(|a| (*a).to_owned()));
        match host.run(&Cmd::new(argv).timeout(LOG_TIMEOUT)) {
            Ok(out) => match refusal(&out) {
                None => {
                    let lines: Vec<String> = out.stdout.lines().map(str::to_owned).collect();
                    return read_log(&lines, &name, kb, trace);
                }
                Some(why) => {
                    trace.miss(&name, why.clone());
                    why_not.push(format!("{program}: {why}"));
                }
            },
            Err(e) => {
                trace.error(&name, e.to_string());
                why_not.push(format!("{program}: {e}"));
            }
        }
    }
    if host.read_file(std::path::Path::new("/proc/sys/kernel/dmesg_restrict")).is_ok_and(|v| v.trim() == "1") {
        why_not.push("kernel.dmesg_restrict is 1, so only root (or CAP_SYSLOG) may read the kernel log".to_owned());
    }
    (Probed::absent(format!("the kernel log could not be read: {}", why_not.join("; "))), Vec::new())
}

/// The Xid events (the latest [`MAX_XID_EVENTS`]) and bandwidth lines of the kernel log's `lines`,
/// read by `source`.
fn read_log(
    lines: &[String],
    source: &str,
    kb: &Kb,
    trace: &mut Trace,
) -> (Probed<Vec<XidEvent>>, Vec<(String, BootLinkLimit)>) {
    let mut events = crate::parse::paste::xid_events(lines, kb);
    let dropped = events.len().saturating_sub(MAX_XID_EVENTS);
    events.drain(..dropped);
    let limits: Vec<(String, BootLinkLimit)> =
        crate::parse::paste::boot_limits(lines).into_iter().map(|(_, bus, l)| (bus, l)).collect();
    let mut detail = format!("{} line(s), {} Xid line(s)", lines.len(), events.len() + dropped);
    if !limits.is_empty() {
        detail.push_str(&format!(", {} PCIe bandwidth line(s)", limits.len()));
    }
    trace.ok(source, detail);
    (Probed::found(events, source), limits)
}

/// Why a kernel-log reader's answer is not the log: it failed, or (journalctl) it could not open
/// the system journal. `None` when it is the log.
fn refusal(out: &CmdOutput) -> Option<String> {
    let first_line = |text: &str| text.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_owned);
    // journalctl says so on either stream, and still exits 0; a kernel log line may itself hold
    // "Permission denied", so standard output is searched only for journalctl's own notices.
    let journal = ["insufficient permissions", "not seeing messages from other users and the system"];
    let denied = ["Operation not permitted", "Permission denied"];
    let in_stderr = out.stderr.lines().find(|l| denied.iter().chain(&journal).any(|d| l.contains(d)));
    let in_stdout = || out.stdout.lines().find(|l| journal.iter().any(|d| l.contains(d)));
    if let Some(line) = in_stderr.or_else(in_stdout) {
        return Some(format!("not permitted ({})", line.trim()));
    }
    if out.success() {
        None
    } else {
        let status = out.status.map_or_else(|| "killed by a signal".to_owned(), |s| format!("exit status {s}"));
        Some(first_line(&out.stderr).map_or(status.clone(), |l| format!("{status}: {l}")))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
