//! The default `nvidia-smi` table, old 79-column and new 89-column layouts, Linux and Windows.
//!
//! The table may sit inside other text (pasted into an issue, indented, quoted with `> `): the
//! parser looks for the `NVIDIA-SMI` header row and reads the boxes that follow it.

use super::ParseError;
use super::smi::{self, SmiGpu, SmiProcess, SmiReport};

const FORMAT: &str = "nvidia-smi table";

/// Parses the default `nvidia-smi` output. Text without an `NVIDIA-SMI <version>` header is an error.
pub fn parse(text: &str) -> Result<SmiReport, ParseError> {
    let lines: Vec<Line<'_>> = text.lines().map(classify).collect();
    let (start, mut report) = lines
        .iter()
        .enumerate()
        .find_map(|(i, l)| match l {
            Line::Row(r) => header(r).map(|h| (i, h)),
            _ => None,
        })
        .ok_or_else(|| ParseError::new(FORMAT, "no `| NVIDIA-SMI <version> … |` header row"))?;
    let rest = lines.get(start + 1..).unwrap_or_default();
    let (gpus, after) = gpu_blocks(rest);
    let mut indexed: Vec<(Option<u32>, SmiGpu)> = gpus.iter().map(|block| gpu(block)).collect();
    if let Some(after) = rest.get(after..) {
        for (gpu_index, process) in processes(after) {
            if let Some((_, g)) = indexed.iter_mut().find(|(i, _)| *i == Some(gpu_index)) {
                g.processes.push(process);
            }
        }
    }
    report.gpus = indexed.into_iter().map(|(_, g)| g).collect();
    Ok(report)
}

/// The rows of a `Processes:` box anywhere in `text`, as (GPU index, process): also a box pasted
/// without the table's header and GPU boxes above it.
pub fn process_rows(text: &str) -> Vec<(u32, SmiProcess)> {
    let lines: Vec<Line<'_>> = text.lines().map(classify).collect();
    processes(&lines)
}

/// One line of text, seen as part of a box drawing.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Line<'a> {
    /// `|  … | … |`: the text from the first `|` to the last.
    Row(&'a str),
    /// `+---+---+`, `|-----|` or `|=====|`; `true` for the `=` kind that ends a column header.
    Rule(bool),
    /// Anything else, including blank lines: ends a box.
    Other,
}

fn classify(line: &str) -> Line<'_> {
    let Some(from) = line.find(['|', '+']) else {
        return Line::Other;
    };
    let boxed = line.get(from..).unwrap_or("").trim_end();
    if boxed.len() > 1 && boxed.chars().all(|c| matches!(c, '+' | '-' | '=' | '|')) && !boxed.contains("||") {
        return Line::Rule(boxed.contains('='));
    }
    if let (Some(a), Some(b)) = (boxed.find('|'), boxed.rfind('|'))
        && a < b
        && let Some(row) = boxed.get(a..=b)
    {
        return Line::Row(row);
    }
    Line::Other
}

/// The cells of a row, untrimmed.
fn cells(row: &str) -> Vec<&str> {
    let inner = row.strip_prefix('|').unwrap_or(row);
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    inner.split('|').collect()
}

/// The whitespace-separated token after `label` in `row`.
fn after_label<'a>(row: &'a str, label: &str) -> Option<&'a str> {
    let at = row.find(label)?;
    row.get(at + label.len()..)?.split_whitespace().next()
}

/// The versions in `| NVIDIA-SMI 535.86.05   Driver Version: 535.86.05   CUDA Version: 12.2 |`, or
/// from R610 on `| NVIDIA-SMI 610.43.02   KMD Version: 610.43.02   CUDA UMD Version: 13.3 |`.
fn header(row: &str) -> Option<SmiReport> {
    let smi_version = after_label(row, "NVIDIA-SMI ")?;
    if !smi_version.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    Some(SmiReport {
        driver_version: smi::labelled(row, smi::DRIVER_LABELS, smi::driver),
        cuda_version: smi::labelled(row, smi::CUDA_LABELS, smi::cuda),
        nvidia_smi_version: smi::text(smi_version),
        gpus: Vec::new(),
    })
}

/// The GPU boxes after the header: groups of rows between rules, after the `|===|` rule that
/// closes the column headings. Returns the groups and the position just past them.
fn gpu_blocks<'a>(lines: &[Line<'a>]) -> (Vec<Vec<&'a str>>, usize) {
    // The heading box: rows and `-`/`+` rules up to the `=` rule. Anything else means the table
    // was cut short (the WSL2 fixture ends right after the header).
    let mut i = 0;
    loop {
        match lines.get(i) {
            Some(Line::Rule(true)) => break,
            Some(Line::Row(_) | Line::Rule(false)) => i += 1,
            _ => return (Vec::new(), i),
        }
    }
    i += 1;
    let mut blocks = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    while let Some(line) = lines.get(i) {
        match line {
            Line::Row(r) => current.push(r),
            Line::Rule(_) => {
                if !current.is_empty() {
                    if !is_gpu_row(current.first().copied()) {
                        current.clear();
                        break;
                    }
                    blocks.push(std::mem::take(&mut current));
                }
            }
            Line::Other => break,
        }
        i += 1;
    }
    if is_gpu_row(current.first().copied()) {
        blocks.push(current);
    }
    (blocks, i)
}

/// A first GPU row starts with the GPU index: `|   0  NVIDIA H100 …`.
fn is_gpu_row(row: Option<&str>) -> bool {
    let first = row.map(cells).and_then(|c| c.first().and_then(|c| c.split_whitespace().next()));
    cells_count(row) >= 3 && first.is_some_and(|t| t.bytes().all(|b| b.is_ascii_digit()))
}

fn cells_count(row: Option<&str>) -> usize {
    row.map_or(0, |r| cells(r).len())
}

/// The value of a box cell, by row and column, or `""`.
fn cell<'a>(block: &[&'a str], row: usize, col: usize) -> &'a str {
    block.get(row).and_then(|r| cells(r).get(col).copied()).unwrap_or("")
}

/// One GPU box (two rows in the old layout, three with `MIG M.`), with its index.
fn gpu(block: &[&str]) -> (Option<u32>, SmiGpu) {
    let mut g = SmiGpu::default();

    // `   0  NVIDIA H100 80GB HBM3          On  ` — index, name, Persistence-M or Driver-Model.
    let c = cell(block, 0, 0).trim();
    let (index, rest) = c.split_once(char::is_whitespace).unwrap_or((c, ""));
    let rest = rest.trim();
    match rest.rsplit_once(char::is_whitespace) {
        Some((name, mode)) => {
            g.name = smi::text(name);
            match mode {
                "WDDM" | "TCC" | "MCDM" => g.driver_model = Some(mode.to_owned()),
                _ => g.persistence_mode = smi::flag(mode),
            }
        }
        None => g.name = smi::text(rest),
    }

    // `   00000000:18:00.0 Off ` — bus id, Disp.A.
    let mut bus = cell(block, 0, 1).split_whitespace();
    g.pci_bus_id = bus.next().and_then(smi::text);
    g.display_attached = bus.next().and_then(smi::flag);

    // Volatile Uncorr. ECC: an error count means ECC is on; `Off` that it is off.
    let ecc = cell(block, 0, 2).trim();
    g.ecc_enabled =
        if !ecc.is_empty() && ecc.bytes().all(|b| b.is_ascii_digit()) { Some(true) } else { smi::flag(ecc) };

    // ` N/A   42C    P0             98W /  700W ` — fan, temperature, perf state, power draw / cap.
    let c = cell(block, 1, 0);
    g.temperature_c = c.split_whitespace().find_map(|t| t.strip_suffix('C').and_then(|t| smi::int_with_unit(t, "")));
    // Split on ` / `: `N/A` (fan, draw or cap) has a slash of its own.
    if let Some((draw, cap)) = c.split_once(" / ") {
        g.power_draw_mw = draw.split_whitespace().last().and_then(smi::watts_to_mw);
        g.power_limit_mw = cap.split_whitespace().next().and_then(smi::watts_to_mw);
    }

    // `      59MiB /  81559MiB ` — memory used / total.
    if let Some((used, total)) = cell(block, 1, 1).split_once(" / ") {
        g.memory_used_mib = smi::mib(used);
        g.memory_total_mib = smi::mib(total);
    }

    // `     N/A      Default ` — GPU-Util, Compute M.
    let c = cell(block, 1, 2).trim();
    let (util, mode) = c.split_once(char::is_whitespace).unwrap_or((c, ""));
    g.utilization_gpu_pct = smi::int_with_unit(util, "%");
    g.compute_mode = smi::compute_mode(mode);

    // `              Enabled ` — MIG M., only in the three-row layout.
    if block.len() >= 3 {
        g.mig_enabled = smi::flag(cell(block, 2, 2));
    }

    (smi::int_with_unit(index, ""), g)
}

/// The rows of the `Processes:` box, as (GPU index, process).
fn processes(lines: &[Line<'_>]) -> Vec<(u32, SmiProcess)> {
    let Some(title) = lines.iter().position(|l| matches!(l, Line::Row(r) if r.contains("Processes:"))) else {
        return Vec::new();
    };
    let rest = lines.get(title..).unwrap_or_default();
    let Some(rule) = rest.iter().position(|l| matches!(l, Line::Rule(true))) else {
        return Vec::new();
    };
    // New layouts add `GI ID` and `CI ID` columns between the GPU index and the pid.
    let has_instances = rest
        .get(..rule)
        .unwrap_or_default()
        .iter()
        .any(|l| matches!(l, Line::Row(r) if r.split_whitespace().any(|t| t == "GI")));
    let pid_at = if has_instances { 3 } else { 1 };
    rest.get(rule + 1..)
        .unwrap_or_default()
        .iter()
        .map_while(|l| match l {
            Line::Row(r) => Some(*r),
            _ => None,
        })
        .filter_map(|r| {
            let tokens: Vec<&str> = cells(r).first()?.split_whitespace().collect();
            let gpu = smi::int_with_unit(tokens.first()?, "")?;
            let pid = smi::int_with_unit(tokens.get(pid_at)?, "")?;
            let used_memory_mib = tokens.last().and_then(|t| smi::mib(t));
            Some((gpu, SmiProcess { pid, used_memory_mib }))
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub(crate) mod tests;
