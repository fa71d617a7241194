//! The machine: OS, kernel, CPU and memory.

use serde::{Deserialize, Serialize};

/// Machine facts from the OS (through `sysinfo` on a real machine).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SystemInfo {
    /// OS name, e.g. `Debian GNU/Linux`; `None` when the OS did not say.
    pub os_name: Option<String>,
    /// OS version, e.g. `12`.
    pub os_version: Option<String>,
    /// Kernel release, e.g. `6.1.0-18-amd64`.
    pub kernel_version: Option<String>,
    /// Host name (redacted in recordings).
    pub host_name: Option<String>,
    /// CPU model name.
    pub cpu_model: Option<String>,
    /// Physical CPU cores; `None` when unknown.
    pub cpu_physical_cores: Option<u32>,
    /// Logical CPUs.
    pub cpu_logical_cores: u32,
    /// Installed memory in bytes.
    pub memory_total_bytes: u64,
}

/// OS, kernel, CPU and memory facts.
pub type SystemFacts = SystemInfo;
