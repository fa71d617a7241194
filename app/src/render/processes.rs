//! The processes on each GPU as nvitop's process panel shows them: one row per process, the most
//! GPU memory first. The Telemetry page draws these cells in a grid; `gpu-doctor processes`
//! prints them as a table.
//!
//! A command line and a user name come from `/proc`, where any local user with a GPU process
//! writes them: every cell and note is cleaned ([`clean`]) before the terminal or the window shows it,
//! so an argument's escape sequence or newline can neither drive the terminal nor draw a fake row.

use crate::render::text::clean;
use gpu_doctor_probes::host::processes::{GpuProcess, GpuProcesses};

/// The columns.
pub const HEADINGS: [&str; 9] = ["PID", "USER", "TYPE", "GPU MEM", "SM %", "MEM %", "CPU %", "HOST MEM", "COMMAND"];

/// What an empty list says.
pub const NO_PROCESSES: &str = "No processes: NVML lists no compute or graphics process on this GPU.";

/// Bytes as nvidia-smi's MiB below a GiB, else GiB with two decimals.
pub fn memory(bytes: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    let mib = bytes as f64 / MIB;
    if mib < 1024.0 { format!("{mib:.0} MiB") } else { format!("{:.2} GiB", mib / 1024.0) }
}

/// What the command column shows: the command line, else the kernel's name for it, else `—`;
/// cleaned for one line of a terminal or a grid cell.
pub fn command(p: &GpuProcess) -> String {
    p.command.as_deref().or(p.name.as_deref()).map_or_else(|| "—".to_owned(), clean)
}

/// One row's cells in `HEADINGS`' order; `—` where a value is unknown. `gpu_total` (the GPU's
/// memory, bytes) adds each process's share to its GPU memory.
pub fn cells(p: &GpuProcess, gpu_total: Option<u64>) -> [String; 9] {
    let dash = || "—".to_owned();
    let pct = |v: Option<u32>| v.map_or_else(dash, |v| v.to_string());
    let gpu_memory = match (p.used_memory_bytes, gpu_total.filter(|t| *t > 0)) {
        (Some(used), Some(total)) => format!("{} ({:.0} %)", memory(used), used as f64 / total as f64 * 100.0),
        (Some(used), None) => memory(used),
        (None, _) => "n/a".to_owned(),
    };
    [
        p.pid.to_string(),
        p.user.as_deref().map_or_else(dash, clean),
        p.kind.map_or_else(dash, |k| k.letters().to_owned()),
        gpu_memory,
        pct(p.sm_pct),
        pct(p.mem_pct),
        p.cpu_pct.map_or_else(dash, |c| format!("{c:.1}")),
        p.host_memory_bytes.map_or_else(dash, memory),
        command(p),
    ]
}

/// A plain-text table of one GPU's processes (the command's output), with NVML's notes and each
/// row's reason for blank fields under it.
pub fn table(list: &GpuProcesses, gpu_total: Option<u64>) -> String {
    if list.processes.is_empty() {
        let mut out = format!("  {NO_PROCESSES}\n");
        for note in &list.notes {
            out.push_str(&format!("  note: {}\n", clean(note)));
        }
        return out;
    }
    let rows: Vec<[String; 9]> = list.processes.iter().map(|p| cells(p, gpu_total)).collect();
    let widths: Vec<usize> = (0..HEADINGS.len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).chain([HEADINGS[i].len()]).max().unwrap_or(0))
        .collect();
    let line = |cells: &[String]| {
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                out.push_str(&format!("  {cell}"));
            } else {
                out.push_str(&format!("  {cell:<width$}", width = widths[i]));
            }
        }
        out.trim_end().to_owned() + "\n"
    };
    let mut out = line(&HEADINGS.map(str::to_owned));
    for (p, row) in list.processes.iter().zip(&rows) {
        out.push_str(&line(row));
        if let Some(why) = &p.unreadable {
            out.push_str(&format!("    pid {}: {}\n", p.pid, clean(why)));
        }
    }
    for note in &list.notes {
        out.push_str(&format!("  note: {}\n", clean(note)));
    }
    out
}

#[cfg(test)]
mod tests {
    use gpu_doctor_probes::host::processes::ProcessKind;

    use super::*;

    fn python() -> GpuProcess {
        GpuProcess {
            pid: 4242,
            kind: Some(ProcessKind::Both),
            used_memory_bytes: Some(3 << 30),
            sm_pct: Some(87),
            mem_pct: Some(40),
            user: Some("ada".to_owned()),
            cpu_pct: Some(101.25),
            host_memory_bytes: Some(512 << 20),
            name: Some("python3".to_owned()),
            command: Some("python3 train.py".to_owned()),
            ..GpuProcess::default()
        }
    }

    #[test]
    fn a_row_says_each_value_and_dashes_what_is_unknown() {
        assert_eq!(
            cells(&python(), Some(12 << 30)),
            ["4242", "ada", "C+G", "3.00 GiB (25 %)", "87", "40", "101.2", "512 MiB", "python3 train.py"]
        );
        let gone = GpuProcess {
            pid: 7,
            kind: Some(ProcessKind::Compute),
            unreadable: Some("not in /proc".to_owned()),
            ..GpuProcess::default()
        };
        assert_eq!(cells(&gone, None), ["7", "—", "C", "n/a", "—", "—", "—", "—", "—"]);
        assert_eq!(memory(1012 << 20), "1012 MiB");
    }

    /// What NVML and `/proc` give for a process whose owner chose its command line and name:
    /// an OSC 52 clipboard write, a title change, a screen clear and a newline that draws a row.
    fn hostile() -> GpuProcess {
        GpuProcess {
            pid: 666,
            user: Some("eve\x1b[2J".to_owned()),
            command: Some(
                "python3 \x1b]52;c;cm0gLXJmIH4K\x07\x1b]0;root@prod\x07\n  1     root  C     80.00 GiB  99  fake"
                    .to_owned(),
            ),
            unreadable: Some("gone\x1b[H".to_owned()),
            ..GpuProcess::default()
        }
    }

    #[test]
    fn commands_users_and_notes_from_proc_are_cleaned_in_the_table_and_the_cells() {
        let list = GpuProcesses {
            processes: vec![python(), hostile()],
            notes: vec!["NVML: \x1b[31mred\x1b[0m".to_owned()],
            last_seen_us: 0,
        };
        let text = table(&list, None);
        assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text:?}");
        assert_eq!(text.lines().count(), 5, "a newline in an argument drew a row: {text}");
        assert!(text.contains(r"python3 \u{1b}]52;c;cm0gLXJmIH4K\u{7}"), "{text}");
        // The window draws the same cells.
        for cell in cells(&hostile(), Some(1 << 30)) {
            assert!(!cell.chars().any(char::is_control), "{cell:?}");
        }
        let name_only = GpuProcess { pid: 1, name: Some("x\ry".to_owned()), ..GpuProcess::default() };
        assert_eq!(command(&name_only), "x y");
    }

    #[test]
    fn the_table_lines_up_and_says_why_fields_are_blank() {
        let gone = GpuProcess { pid: 7, unreadable: Some("not in /proc".to_owned()), ..GpuProcess::default() };
        let list = GpuProcesses {
            processes: vec![python(), gone],
            notes: vec!["NVML gave no per-process utilisation: Not supported".to_owned()],
            last_seen_us: 0,
        };
        let text = table(&list, None);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "  PID   USER  TYPE  GPU MEM   SM %  MEM %  CPU %  HOST MEM  COMMAND");
        assert_eq!(lines[1], "  4242  ada   C+G   3.00 GiB  87    40     101.2  512 MiB   python3 train.py");
        assert_eq!(lines[2], "  7     —     —     n/a       —     —      —      —         —");
        assert_eq!(lines[3], "    pid 7: not in /proc");
        assert!(lines[4].contains("Not supported"));
        assert_eq!(table(&GpuProcesses::default(), None), format!("  {NO_PROCESSES}\n"));
    }
}
