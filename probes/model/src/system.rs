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
    /// Board, BIOS and product from DMI (`/sys/class/dmi/id`); `None` where none of it could be
    /// read (not Linux, no DMI, or a report written before gpu-doctor read it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dmi: Option<Dmi>,
}

/// The firmware's description of the machine (SMBIOS/DMI, as Linux exposes it in
/// `/sys/class/dmi/id`). Every `None` is a file that could not be read; `product_serial` is
/// readable by root only.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Dmi {
    /// System maker, e.g. `Dell Inc.` (`sys_vendor`).
    pub sys_vendor: Option<String>,
    /// System product, e.g. `Precision 7960 Tower` (`product_name`).
    pub product_name: Option<String>,
    /// System serial number (`product_serial`; root only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_serial: Option<String>,
    /// Board maker (`board_vendor`).
    pub board_vendor: Option<String>,
    /// Board model (`board_name`).
    pub board_name: Option<String>,
    /// BIOS maker (`bios_vendor`).
    pub bios_vendor: Option<String>,
    /// BIOS version (`bios_version`).
    pub bios_version: Option<String>,
    /// BIOS release date as the firmware writes it, e.g. `03/14/2024` (`bios_date`).
    pub bios_date: Option<String>,
}

impl Dmi {
    /// The files under `/sys/class/dmi/id` read, each with the field it fills.
    pub const FILES: [&'static str; 8] = [
        "sys_vendor",
        "product_name",
        "product_serial",
        "board_vendor",
        "board_name",
        "bios_vendor",
        "bios_version",
        "bios_date",
    ];

    /// Sets the field read from the DMI file `name` (one of [`Self::FILES`]); other names are ignored.
    pub fn set(&mut self, name: &str, value: String) {
        let field = match name {
            "sys_vendor" => &mut self.sys_vendor,
            "product_name" => &mut self.product_name,
            "product_serial" => &mut self.product_serial,
            "board_vendor" => &mut self.board_vendor,
            "board_name" => &mut self.board_name,
            "bios_vendor" => &mut self.bios_vendor,
            "bios_version" => &mut self.bios_version,
            "bios_date" => &mut self.bios_date,
            _ => return,
        };
        *field = Some(value);
    }
}

/// OS, kernel, CPU and memory facts.
pub type SystemFacts = SystemInfo;
