//! `nvidia-smi --query-gpu=… --format=csv`: a header row of field names (with units such as
//! `memory.total [MiB]`), then one row per GPU. Cells may carry units (`81559 MiB`) or not
//! (`nounits`); `[N/A]` and `[Requested functionality has been deprecated]` mean no value.
//! The `noheader` variant is read by the shapes of its values ([`parse_noheader`]): a GPU name, a
//! bus id, a UUID, a driver version and a memory size cannot be mistaken for one another; the
//! other columns stay unread.

use std::collections::BTreeMap;

use super::ParseError;
use super::smi::{self, SmiGpu, SmiReport};

const FORMAT: &str = "nvidia-smi CSV";

/// Splits the CSV into one map per GPU row, keyed by field name without its unit
/// (`memory.total [MiB]` → `memory.total`), cells trimmed. Errors: empty text, a first row that
/// is not a list of field names, or a row with a different number of cells than the header.
pub fn parse_rows(text: &str) -> Result<Vec<BTreeMap<String, String>>, ParseError> {
    let mut lines = text.lines().map(|l| l.trim_end_matches('\r')).filter(|l| !l.trim().is_empty());
    let header = lines.next().ok_or_else(|| ParseError::new(FORMAT, "empty"))?;
    let keys = header.split(',').map(field_name).collect::<Result<Vec<_>, _>>()?;
    lines
        .enumerate()
        .map(|(n, line)| {
            let cells: Vec<&str> = line.split(',').map(str::trim).collect();
            if cells.len() != keys.len() {
                return Err(ParseError::new(
                    FORMAT,
                    format!("row {} has {} cells, the header {}", n + 1, cells.len(), keys.len()),
                ));
            }
            Ok(keys.iter().map(|k| (*k).to_owned()).zip(cells.into_iter().map(str::to_owned)).collect())
        })
        .collect()
}

/// The field name of a header cell: `memory.total [MiB]` → `memory.total`. Field names are made
/// of ASCII letters, digits, `_` and `.`, starting with a letter.
fn field_name(cell: &str) -> Result<&str, ParseError> {
    let cell = cell.trim();
    let name = match cell.split_once(' ') {
        Some((name, unit)) if unit.trim_start().starts_with('[') && unit.ends_with(']') => name,
        _ => cell,
    };
    let ok = name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    if ok {
        Ok(name)
    } else {
        let shown: String = cell.chars().take(64).collect();
        Err(ParseError::new(FORMAT, format!("header cell {shown:?} is not a query field name")))
    }
}

/// Parses `--query-gpu` CSV with a header into a report. Unknown columns are ignored; the driver
/// version comes from a `kmd_version` column (R610 on; its `--help-query-gpu` says of
/// `driver_version`: "Deprecated; use \"kmd_version\" instead") or a `driver_version` column.
pub fn parse(text: &str) -> Result<SmiReport, ParseError> {
    let rows = parse_rows(text)?;
    let driver_version = ["kmd_version", "driver_version"]
        .iter()
        .find_map(|field| rows.iter().find_map(|r| r.get(*field).and_then(|v| smi::driver(v))));
    Ok(SmiReport { driver_version, cuda_version: None, nvidia_smi_version: None, gpus: rows.iter().map(gpu).collect() })
}

/// What a cell of a `--query-gpu … --format=csv,noheader` row is, told by its shape alone: the
/// fields whose values cannot be mistaken for another's. Small numbers (index, link generation and
/// width, temperature, utilisation) are not told apart, so they stay unread.
pub(crate) fn field_of_cell(cell: &str) -> Option<&'static str> {
    let cell = cell.trim();
    let hex =
        |s: &str, n: std::ops::RangeInclusive<usize>| n.contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit());
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if cell.starts_with("NVIDIA ") || ["GeForce", "Tesla", "Quadro", "TITAN"].iter().any(|w| cell.starts_with(w)) {
        return Some("name");
    }
    if cell.starts_with("GPU-") && cell.len() > 20 {
        return Some("uuid");
    }
    // A PCI bus id: `00000000:01:00.0` (domain, bus, device, function).
    let mut parts = cell.split(':');
    if let (Some(domain), Some(bus), Some(rest), None) = (parts.next(), parts.next(), parts.next(), parts.next())
        && let Some((device, function)) = rest.split_once('.')
        && hex(domain, 4..=8)
        && hex(bus, 2..=2)
        && hex(device, 2..=2)
        && matches!(function, "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7")
    {
        return Some("pci.bus_id");
    }
    // A driver version: `550.54.14` or `552.22` (three digits, then two or three parts of digits).
    let numbers: Vec<&str> = cell.split('.').collect();
    if (2..=3).contains(&numbers.len())
        && numbers[0].len() == 3
        && numbers.iter().all(|n| digits(n))
        && numbers[1..].iter().all(|n| (2..=3).contains(&n.len()))
    {
        return Some("driver_version");
    }
    if let Some(n) = cell.strip_suffix(" MiB")
        && digits(n)
    {
        return Some("memory.total");
    }
    None
}

/// Parses `--query-gpu … --format=csv,noheader` rows, whose columns are told by their values'
/// shapes ([`field_of_cell`], from the first row): a GPU name and at least one of a bus id, a
/// UUID or a driver version, or it is not such a CSV. The first `MiB` column is taken as the
/// total memory. Every row must have the first row's number of cells.
pub fn parse_noheader(text: &str) -> Result<SmiReport, ParseError> {
    let mut lines = text.lines().map(|l| l.trim_end_matches('\r')).filter(|l| !l.trim().is_empty());
    let first = lines.next().ok_or_else(|| ParseError::new(FORMAT, "empty"))?;
    let mut seen = Vec::new();
    let keys: Vec<String> = first
        .split(',')
        .enumerate()
        .map(|(i, cell)| match field_of_cell(cell).filter(|f| !seen.contains(f)) {
            Some(field) => {
                seen.push(field);
                field.to_owned()
            }
            None => format!("unknown{i}"),
        })
        .collect();
    let typed = ["pci.bus_id", "uuid", "driver_version"];
    if !seen.contains(&"name") || !seen.iter().any(|f| typed.contains(f)) {
        return Err(ParseError::new(FORMAT, "no GPU name beside a bus id, UUID or driver version: not a GPU query"));
    }
    parse(
        &std::iter::once(keys.join(","))
            .chain(std::iter::once(first.to_owned()))
            .chain(lines.map(str::to_owned))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// Where a CSV has no `pcie.link.gen.max` but the GPU's and the root port's own maxima
/// (`pcie.link.gen.gpumax`, `pcie.link.gen.hostmax`): the lower of the two, which is what
/// `pcie.link.gen.max` reports ("the maximum PCI-E link generation possible with this GPU and system
/// configuration"; nvidia-smi --help-query-gpu, which lists gpumax as "supported by this GPU" and
/// hostmax as "supported by the root port corresponding to this GPU"). With only gpumax, gpumax: the
/// link can then run below it for a host that offers less, which the link rules read as an idle
/// link or a narrower host, never as the card's fault alone.
fn gen_max_of_gpu_and_host(num: &dyn Fn(&[&str], &str) -> Option<u32>) -> Option<u32> {
    let gpu = num(&["pcie.link.gen.gpumax"], "");
    match num(&["pcie.link.gen.hostmax"], "") {
        Some(host) => Some(gpu.map_or(host, |g| g.min(host))),
        None => gpu,
    }
}

fn gpu(row: &BTreeMap<String, String>) -> SmiGpu {
    // The first of `keys` whose cell has a value (not `[N/A]`).
    let get = |keys: &[&str]| keys.iter().filter_map(|k| row.get(*k)).find_map(|v| smi::value(v));
    let num = |keys: &[&str], unit: &str| get(keys).and_then(|v| smi::int_with_unit::<u32>(v, unit));
    SmiGpu {
        name: get(&["name"]).map(str::to_owned),
        uuid: get(&["uuid"]).map(str::to_owned),
        pci_bus_id: get(&["pci.bus_id"]).map(str::to_owned),
        memory_total_mib: get(&["memory.total"]).and_then(smi::mib),
        // --query-gpu has no BAR1 field.
        bar1_total_mib: None,
        memory_used_mib: get(&["memory.used"]).and_then(smi::mib),
        pcie_gen_current: num(&["pcie.link.gen.current", "pcie.link.gen.gpucurrent"], ""),
        pcie_gen_max: num(&["pcie.link.gen.max"], "").or_else(|| gen_max_of_gpu_and_host(&num)),
        pcie_width_current: num(&["pcie.link.width.current"], "x"),
        pcie_width_max: num(&["pcie.link.width.max"], "x"),
        mig_enabled: get(&["mig.mode.current"]).and_then(smi::flag),
        compute_mode: get(&["compute_mode"]).and_then(smi::compute_mode),
        persistence_mode: get(&["persistence_mode"]).and_then(smi::flag),
        driver_model: get(&["driver_model.current"]).map(str::to_owned),
        display_attached: get(&["display_attached", "display_active"]).and_then(smi::flag),
        vbios_version: get(&["vbios_version"]).map(str::to_owned),
        temperature_c: num(&["temperature.gpu"], "C"),
        power_draw_mw: get(&["power.draw", "power.draw.average", "power.draw.instant"]).and_then(smi::watts_to_mw),
        power_limit_mw: get(&["enforced.power.limit", "power.limit"]).and_then(smi::watts_to_mw),
        clock_sm_mhz: num(&["clocks.sm", "clocks.current.sm"], "MHz"),
        clock_sm_max_mhz: num(&["clocks.max.sm", "clocks.max.sm_clock"], "MHz"),
        clock_mem_mhz: num(&["clocks.mem", "clocks.current.memory"], "MHz"),
        clock_mem_max_mhz: num(&["clocks.max.mem", "clocks.max.memory"], "MHz"),
        utilization_gpu_pct: num(&["utilization.gpu"], "%"),
        ecc_enabled: get(&["ecc.mode.current"]).and_then(smi::flag),
        compute_capability: get(&["compute_cap"]).map(str::to_owned),
        processes: Vec::new(),
        health: gpu_doctor_model::GpuHealth::default(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub(crate) mod tests;
