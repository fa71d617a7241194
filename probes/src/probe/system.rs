//! OS, kernel, CPU and memory, from the host's `system_info`.

use crate::host::Host;
use gpu_doctor_model::SystemFacts;
use gpu_doctor_model::{Probed, Trace};

/// Reads the machine facts.
pub fn probe(host: &dyn Host, trace: &mut Trace) -> Probed<SystemFacts> {
    let info = host.system_info();
    if info.os_name.is_none() && info.cpu_logical_cores == 0 && info.memory_total_bytes == 0 {
        trace.error("sysinfo", "the OS reported no name, CPUs or memory");
        return Probed::Failed { error: "the OS reported no system facts".into() };
    }
    trace.ok(
        "sysinfo",
        format!(
            "{} {}, {} CPUs, {} MiB",
            info.os_name.as_deref().unwrap_or("?"),
            info.os_version.as_deref().unwrap_or(""),
            info.cpu_logical_cores,
            info.memory_total_bytes / (1024 * 1024)
        ),
    );
    Probed::found(info, "sysinfo")
}
