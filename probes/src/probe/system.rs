//! OS, kernel, CPU and memory, from the host's `system_info`; board, BIOS and product from DMI.

use std::path::Path;

use crate::host::{Host, HostError};
use gpu_doctor_model::{Dmi, OsFamily, SystemFacts};
use gpu_doctor_model::{Probed, Trace};

/// Where Linux exposes the firmware's DMI (SMBIOS) strings, one file each.
const DMI_DIR: &str = "/sys/class/dmi/id";

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
    let mut info = info;
    info.dmi = dmi(host, trace);
    Probed::found(info, "sysinfo")
}

/// Board, BIOS and product from `/sys/class/dmi/id` (Linux), through the host so that a recording
/// keeps them and a replay answers them; `None` where none could be read. `product_serial` is
/// readable by root only: refused, it is left out and the trace says why.
fn dmi(host: &dyn Host, trace: &mut Trace) -> Option<Dmi> {
    if host.platform().os != OsFamily::Linux {
        return None;
    }
    let mut dmi = Dmi::default();
    let mut read = 0;
    for name in Dmi::FILES {
        match host.read_file(&Path::new(DMI_DIR).join(name)) {
            Ok(text) => {
                let value = text.trim();
                // Firmware that fills a field with a placeholder says nothing about the machine.
                if !value.is_empty() && !is_placeholder(value) {
                    dmi.set(name, value.to_owned());
                }
                read += 1;
            }
            Err(HostError::NotFound { .. }) => {}
            Err(e) => trace.miss(format!("dmi {name}"), e.to_string()),
        }
    }
    if read == 0 {
        return None;
    }
    trace.ok("dmi", format!("{read} of {} files under {DMI_DIR}", Dmi::FILES.len()));
    (dmi != Dmi::default()).then_some(dmi)
}

/// The texts firmware writes into a DMI field it did not fill (dmidecode's list of them:
/// `dmi_string` placeholders such as "To Be Filled By O.E.M.", "Default string").
fn is_placeholder(value: &str) -> bool {
    const PLACEHOLDERS: [&str; 6] =
        ["To Be Filled By O.E.M.", "Default string", "Not Specified", "System Product Name", "None", "N/A"];
    PLACEHOLDERS.iter().any(|p| p.eq_ignore_ascii_case(value))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::host::{Fixture, ReplayHost};
    use gpu_doctor_model::Platform;

    fn host(files: &[(&str, &str)], errors: &[(&str, &str)]) -> ReplayHost {
        let mut f = Fixture::new(Platform { os: OsFamily::Linux, arch: "x86_64".into() });
        f.system.os_name = Some("Ubuntu".into());
        f.system.cpu_logical_cores = 8;
        for (name, text) in files {
            f.files.insert(format!("{DMI_DIR}/{name}"), (*text).to_owned());
        }
        for (name, e) in errors {
            f.file_errors.insert(format!("{DMI_DIR}/{name}"), (*e).to_owned());
        }
        ReplayHost::new(f)
    }

    #[test]
    fn board_and_bios_are_read_from_dmi_and_a_root_only_serial_is_left_out() {
        let h = host(
            &[
                ("sys_vendor", "Dell Inc.\n"),
                ("product_name", "Precision 7960 Tower\n"),
                ("board_vendor", "Dell Inc.\n"),
                ("board_name", "0X2V9V\n"),
                ("bios_vendor", "Dell Inc.\n"),
                ("bios_version", "2.8.1\n"),
                ("bios_date", "03/14/2024\n"),
            ],
            &[("product_serial", "Permission denied (os error 13)")],
        );
        let mut t = Trace::new("system");
        let facts = probe(&h, &mut t);
        let dmi = facts.value().unwrap().dmi.clone().unwrap();
        assert_eq!(dmi.board_name.as_deref(), Some("0X2V9V"));
        assert_eq!(dmi.bios_version.as_deref(), Some("2.8.1"));
        assert_eq!(dmi.bios_date.as_deref(), Some("03/14/2024"));
        assert_eq!(dmi.product_serial, None, "root only: refused, not read");
    }

    #[test]
    fn a_readable_serial_is_kept_and_placeholders_are_not() {
        let h = host(&[("product_serial", "7XK2Q73\n"), ("board_vendor", "To Be Filled By O.E.M.\n")], &[]);
        let dmi = probe(&h, &mut Trace::new("system")).value().unwrap().dmi.clone().unwrap();
        assert_eq!(dmi.product_serial.as_deref(), Some("7XK2Q73"));
        assert_eq!(dmi.board_vendor, None);
    }

    #[test]
    fn a_recording_without_dmi_has_none() {
        let facts = probe(&host(&[], &[]), &mut Trace::new("system"));
        assert_eq!(facts.value().unwrap().dmi, None, "so every existing fixture's snapshot is unchanged");
    }
}
