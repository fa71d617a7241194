//! nvidia-smi in any of its formats (default table, `-q`, `-q -x`, `--query-gpu … --format=csv`)
//! and `nvcc --version`, found inside pasted text with the existing parsers.

use super::facts::Facts;
use super::gpus::{MAX_GPUS, from_smi};
use crate::parse::smi::{self, SmiReport};
use crate::parse::{nvcc, smi_csv, smi_q, smi_table, smi_xml};
use gpu_doctor_model::{CudaVersion, DriverVersion, GpuHealth};

/// Reads every nvidia-smi output and nvcc version in the text.
pub(super) fn read(lines: &[String], text: &str, facts: &mut Facts) {
    if let Some(at) =
        lines.iter().position(|l| l.contains("NVIDIA-SMI ") && smi::DRIVER_LABELS.iter().any(|d| l.contains(d)))
    {
        match smi_table::parse(text) {
            Ok(r) => add(facts, at, "nvidia-smi table", &r, &[]),
            Err(_) => header_only(&lines[at], at, facts),
        }
    }
    process_box(lines, text, facts);
    if let Some(start) = text.find("<nvidia_smi_log") {
        let at = line_of(lines, "<nvidia_smi_log");
        const END: &str = "</nvidia_smi_log>";
        let xml = text.get(start..).and_then(|t| t.find(END)).and_then(|len| text.get(start..start + len + END.len()));
        match xml.map(smi_xml::parse) {
            Some(Ok(r)) => add(facts, at, "nvidia-smi XML", &r, &[]),
            Some(Err(e)) => facts.notes.push(format!("the nvidia-smi XML report at line {} was not read: {e}", at + 1)),
            None => facts.notes.push(format!(
                "the nvidia-smi XML report at line {} is cut short (it has no closing {END}), so it was not read",
                at + 1
            )),
        }
    }
    if let Some(at) =
        lines.iter().position(|l| l.contains("NVSMI LOG") || is_q_gpu_line(l) || l.trim() == "GPU Link Info")
        && let Ok((r, archs)) = smi_q::parse_full(&lines[at..].join("\n"))
    {
        add(facts, at, "nvidia-smi -q", &r, &archs);
    }
    gpu_list(lines, facts);
    bar1_blocks(lines, facts);
    version_block(lines, facts);
    container_cli(lines, facts);
    csv(lines, facts);
    static TOOLS: super::Needle = super::Needle::new("Cuda compilation tools");
    static NVCC: super::Needle = super::Needle::new("nvcc");
    let mut after_nvcc = false;
    for (i, line) in lines.iter().enumerate() {
        let tools = TOOLS.in_line(line);
        let (nvcc_before, nvcc) = (after_nvcc, NVCC.in_line(line));
        after_nvcc = nvcc;
        if tools
            && line.contains("Cuda compilation tools, release")
            && let Ok(v) = nvcc::parse(line)
        {
            facts.saw(i, "nvcc --version");
            facts.nvcc_toolkit(v);
        }
        // nvcc's version line quoted without its head, next to the command: `I see the release 11.1, V11.1.74`.
        if !tools
            && (nvcc || nvcc_before)
            && let Some(v) = nvcc_release_tail(line)
        {
            facts.saw(i, "nvcc --version");
            facts.nvcc_toolkit(v);
        }
        // nvcc's answer reported on its command's line: `my nvcc --version is 10.0`, `nvcc -V: 11.8`.
        if let Some(v) = ["nvcc --version", "nvcc -V"]
            .iter()
            .filter(|_| nvcc)
            .find_map(|q| super::python_prints::answer_after(line, q))
            .and_then(|v| v.parse::<gpu_doctor_model::CudaVersion>().ok())
        {
            facts.saw(i, "nvcc --version");
            facts.nvcc_toolkit(v);
        }
    }
    // Last, a driver version written in prose, where no program's output gave one.
    if facts.driver_version.is_none()
        && let Some((i, v)) = lines.iter().enumerate().find_map(|(i, l)| prose_driver(l).map(|v| (i, v)))
    {
        facts.saw(i, "driver version in prose");
        facts.driver(Some(v), None, "driver version in prose");
    }
    if facts.driver_version.is_none()
        && let Some((i, v)) = lines.iter().enumerate().find_map(|(i, l)| library_driver(l).map(|v| (i, v)))
    {
        facts.saw(i, LIBRARY_DRIVER);
        facts.driver(Some(v), None, LIBRARY_DRIVER);
    }
}

/// The format name of nvidia-smi's process box pasted without the table above it.
const PROCESS_BOX: &str = "nvidia-smi process table";

/// nvidia-smi's `Processes:` box, read here for the processes a `ps aux` listing in the same text shows stopped
/// (an admin's reply on a cluster node, ai4d-iasc/trixie#92: the box, then `ps -aux | grep 1395` with state `Tl`);
/// the box pasted alone, without the table's header above it, is recognised as nvidia-smi's.
fn process_box(lines: &[String], text: &str, facts: &mut Facts) {
    if !text.contains("Processes:") {
        return;
    }
    let rows = smi_table::process_rows(text);
    if rows.is_empty() {
        return;
    }
    if !facts.read_format("nvidia-smi table") {
        facts.saw(line_of(lines, "Processes:"), PROCESS_BOX);
    }
    for line in lines {
        let Some((pid, state)) = ps_aux_state(line) else { continue };
        let Some((gpu, p)) = rows.iter().find(|(_, p)| p.pid == pid) else { continue };
        if state.starts_with(['T', 't']) && !facts.stopped_gpu_processes.iter().any(|s| s.pid == pid) {
            facts.stopped_gpu_processes.push(gpu_doctor_model::StoppedGpuProcess {
                gpu: *gpu,
                pid,
                used_memory_bytes: p.used_memory_mib.map(|m| m * 1024 * 1024),
                state: state.to_owned(),
                line: line.trim().to_owned(),
            });
        }
    }
}

/// The PID and state of a `ps aux` line (`USER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND`): procps's
/// state letter (D I R S T t W X Z) and its flags (< N L s l +). A line of at most 1,000 characters.
fn ps_aux_state(line: &str) -> Option<(u32, &str)> {
    if line.len() > 1000 {
        return None;
    }
    let t: Vec<&str> = line.split_whitespace().take(11).collect();
    if t.len() < 11 {
        return None;
    }
    let pid = t[1].parse().ok()?;
    let numbers = t[2].parse::<f64>().is_ok()
        && t[3].parse::<f64>().is_ok()
        && t[4].parse::<u64>().is_ok()
        && t[5].parse::<u64>().is_ok();
    let mut state = t[7].chars();
    let letter = state.next().is_some_and(|c| "DIRSTtWXZ".contains(c));
    (numbers && letter && state.all(|c| "<NLsl+".contains(c))).then_some((pid, t[7]))
}

/// The format name of a driver version read from a driver library's file name.
const LIBRARY_DRIVER: &str = "a driver library's file name";

/// The driver's version in the file name of one of its own libraries, which the driver installs under its full
/// version with the SONAME as a link to it (`libcuda.so.560.35.03`, `libnvidia-ml.so.535.104.05`: `ls -l`, `ldconfig
/// -v`, a Nix store path, NixOS/nixpkgs#349617): a three-digit major, so WSL's `libcuda.so.1.1` is none. A line of
/// at most 1,000 characters.
pub(super) fn library_driver(line: &str) -> Option<DriverVersion> {
    if line.len() > 1_000 {
        return None;
    }
    ["libcuda.so.", "libnvidia-ml.so."].iter().find_map(|lib| {
        line.match_indices(lib).find_map(|(at, _)| {
            let rest = &line[at + lib.len()..];
            let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
            three_digit_driver(&rest[..end])
        })
    })
}

/// The tail of nvcc's version line, `release X.Y, VX.Y.Z` (`Cuda compilation tools, release %s, V%s`, nvcc
/// --version; CUDA Installation Guide for Linux, "Verify the Installation"), when the two versions agree: the
/// toolkit's full version.
pub(super) fn nvcc_release_tail(line: &str) -> Option<CudaVersion> {
    let at = line.find("release ")?;
    let rest = &line[at + "release ".len()..];
    let (release, after) = rest.split_once(", V")?;
    let full = after.split_whitespace().next()?.trim_end_matches(['.', ',', ')', '`', '"']);
    let release: CudaVersion = release.trim().parse().ok()?;
    let v: CudaVersion = full.parse().ok()?;
    (v.major == release.major && v.minor == release.minor).then_some(v)
}

/// A driver version written in prose (`I install nvidia driver 460.73.01`, `driver version 535.54.03`): the word
/// `driver`, then `version`, `is`, `:` or `=` at most, then a number of three-digit major (NVIDIA's Linux and
/// Windows driver numbers, 3xx to 5xx); `None` unless the line names exactly one such number, or when it says a
/// driver that is required (`minimum`, `or newer`).
pub(super) fn prose_driver(line: &str) -> Option<DriverVersion> {
    let lower = line.to_ascii_lowercase();
    // A driver a program requires is not the one installed (FFmpeg's `The minimum required Nvidia driver for nvenc
    // is 470.57.02 or newer`, googlecolab/colabtools#3187; `requires driver 525 or later`).
    if ["minimum", "required", "requires", "or newer", "or later", "at least"].iter().any(|w| lower.contains(w)) {
        return None;
    }
    let words: Vec<&str> = lower.split_whitespace().collect();
    let mut found: Vec<DriverVersion> = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if !w.trim_end_matches([':', '=']).ends_with("driver") {
            continue;
        }
        // The version before the word: `the nvidia-384.98 driver`, `the 535.104.05 driver`.
        if let Some(v) = i
            .checked_sub(1)
            .map(|p| words[p].trim_matches(['`', '"', '\'', '(', ')', ',']))
            .map(|p| p.strip_prefix("nvidia-driver-").or_else(|| p.strip_prefix("nvidia-")).unwrap_or(p))
            .and_then(three_digit_driver)
            && !found.contains(&v)
        {
            found.push(v);
        }
        let next = words[i + 1..]
            .iter()
            .map(|w| w.trim_matches(['`', '"', '\'', '(', ')', ',']))
            .find(|w| !["version", "is", ":", "=", "version:", "version=", "of"].contains(w));
        if let Some(v) = next.and_then(three_digit_driver)
            && !found.contains(&v)
        {
            found.push(v);
        }
        // The version at the end of the clause: `the driver installed on the compute nodes … is 418.87.00`
        // (written for NVIDIA/hpc-container-maker#239).
        let after = &words[i + 1..words.len().min(i + 1 + CLAUSE_WORDS)];
        if let Some(is) = after.iter().position(|w| *w == "is")
            && !after[..is].iter().any(|w| w.ends_with(['.', ',', ';', '?']))
            && let Some(v) =
                after.get(is + 1).map(|w| w.trim_matches(['`', '"', '\'', '(', ')'])).and_then(three_digit_driver)
            && !found.contains(&v)
        {
            found.push(v);
        }
    }
    (found.len() == 1).then(|| found.remove(0))
}

/// The most words after `driver` looked through for the `is` that gives its version.
const CLAUSE_WORDS: usize = 14;

/// `460.73.01` as a driver version: a three-digit major and at least a minor.
fn three_digit_driver(word: &str) -> Option<DriverVersion> {
    let word = word.trim_end_matches(['.', ',', ';']);
    let major = word.split('.').next()?;
    (major.len() == 3 && major.bytes().all(|b| b.is_ascii_digit()) && word.contains('.')).then(|| word.parse().ok())?
}

/// `nvidia-smi -L`: `GPU 0: Tesla T4 (UUID: GPU-e78e68c0-…)` lines (the UUID tells them from
/// collect_env's `GPU 0: <name>` lines), read when no fuller nvidia-smi output listed the GPUs; each
/// GPU's index, name and UUID, and MIG mode on for a GPU with `MIG 1g.10gb Device 0: (UUID: MIG-…)`
/// lines under it (MIG User Guide, "Getting Started with MIG": `nvidia-smi -L` lists the MIG devices).
fn gpu_list(lines: &[String], facts: &mut Facts) {
    if !facts.listed_gpus.is_empty() {
        return;
    }
    let listed: Vec<(usize, &String)> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains("(UUID: GPU-") || l.contains("(UUID: MIG-"))
        .take(MAX_GPUS * 8)
        .collect();
    let Some((at, _)) = listed.first().copied() else { return };
    let text = listed.iter().map(|(_, l)| split_list_line(l.trim())).collect::<Vec<_>>().join("\n");
    let Ok(gpus) = crate::parse::smi_topo::parse_list(&text) else { return };
    facts.saw(at, "nvidia-smi -L");
    for g in gpus {
        let gpu = gpu_doctor_model::Gpu {
            index: g.index,
            name: Some(g.name).filter(|n| !n.is_empty()),
            uuid: g.uuid,
            mig_enabled: (!g.mig.is_empty()).then_some(true),
            ..gpu_doctor_model::Gpu::default()
        };
        facts.listed_gpus.push((gpu, "nvidia-smi -L"));
    }
}

/// One `-L` line per GPU where a form or a chat joined them (`GPU 0: … (UUID: GPU-…) GPU 1: …`): a
/// new line before each `GPU N:` that follows a closing parenthesis.
fn split_list_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(") GPU ") {
        let after = &rest[at + ") GPU ".len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let next = if digits > 0 && after[digits..].starts_with(':') { ")\n" } else { ") " };
        out.push_str(&rest[..at]);
        out.push_str(next);
        rest = &rest[at + 2..];
    }
    out.push_str(rest);
    out
}

/// `nvidia-smi -q`'s `BAR1 Memory Usage` blocks where no GPU header came with them (`nvidia-smi -q |
/// grep -i bar -A 3`): each block's `Total`, in the order nvidia-smi prints the GPUs, for the GPUs
/// another reader lists. Read only when the `-q` reader gave no BAR1 size.
fn bar1_blocks(lines: &[String], facts: &mut Facts) {
    for (i, l) in lines.iter().enumerate() {
        if l.trim() != "BAR1 Memory Usage" || facts.bar1_mib.len() >= super::facts::MAX_LIST {
            continue;
        }
        let total = lines.iter().skip(i + 1).take(3).find_map(|l| {
            let (key, value) = l.split_once(':')?;
            (key.trim() == "Total").then(|| smi::mib(value.trim())).flatten()
        });
        if let Some(mib) = total {
            facts.saw(i, "nvidia-smi -q");
            facts.bar1_mib.push(mib);
        }
    }
}

/// The table's header line alone (`| NVIDIA-SMI 450.66  Driver Version: 450.66  CUDA Version: 11.0 |`,
/// R610's `KMD Version: … CUDA UMD Version: …`, pasted without the rest of the table): the driver and
/// the newest CUDA it supports.
fn header_only(line: &str, at: usize, facts: &mut Facts) {
    let driver =
        smi::labelled(line, smi::DRIVER_LABELS, |v| v.parse::<DriverVersion>().ok().filter(|d| d.major() >= 100));
    let Some(driver) = driver else { return };
    let cuda = smi::labelled(line, smi::CUDA_LABELS, |v| v.parse::<CudaVersion>().ok());
    facts.saw(at, "nvidia-smi header");
    facts.driver(Some(driver), cuda, "nvidia-smi header");
}

/// `nvidia-smi --version`: `Label : value` lines under `NVIDIA-SMI version : …`. Before R610 the
/// driver is `DRIVER version` and its CUDA level `CUDA Version`; from R610 those two say
/// `Deprecated, see "KMD version" instead` and `KMD version` / `CUDA UMD version` follow
/// (real captures of both: github.com/utkuozdemir/nvidia_gpu_exporter, `internal/captures/`).
/// Under WSL the NVIDIA-SMI version is Linux's and the driver Windows' (580.82.07 / 581.42), so
/// only the driver's own line is read.
fn version_block(lines: &[String], facts: &mut Facts) {
    /// The block's lines after its first: NVML, DRIVER, CUDA, and R610's two deprecation lines.
    const BLOCK_LINES: usize = 6;
    let Some(at) =
        lines.iter().position(|l| version_line(l).is_some_and(|(k, _)| k.eq_ignore_ascii_case("NVIDIA-SMI version")))
    else {
        return;
    };
    let block: Vec<(&str, &str)> = lines[at + 1..].iter().take(BLOCK_LINES).map_while(|l| version_line(l)).collect();
    let find = |labels: &[&str]| {
        labels.iter().find_map(|label| block.iter().find(|(k, _)| k.eq_ignore_ascii_case(label)).map(|(_, v)| *v))
    };
    let driver = find(smi::DRIVER_LABELS).and_then(|v| v.parse::<DriverVersion>().ok()).filter(|d| d.major() >= 100);
    let Some(driver) = driver else { return };
    let cuda = find(smi::CUDA_LABELS).and_then(|v| v.parse::<CudaVersion>().ok());
    facts.saw(at, "nvidia-smi --version");
    facts.driver(Some(driver), cuda, "nvidia-smi --version");
}

/// `nvidia-container-cli info`: the driver and the CUDA level as the container runtime sees them
/// (`NVRM version:   435.21` then `CUDA version:   10.1`), read by the probes' own parser
/// (`parse::container_cli_info`) from the `NVRM version:` line on.
fn container_cli(lines: &[String], facts: &mut Facts) {
    /// The lines read after `NVRM version:`: the CUDA line, then per device about ten.
    const BLOCK_LINES: usize = 12 * MAX_GPUS;
    let Some(at) = lines.iter().position(|l| l.trim_start().starts_with("NVRM version:")) else { return };
    let block = lines[at..].iter().take(BLOCK_LINES).map(String::as_str).collect::<Vec<_>>().join("\n");
    let Ok(info) = crate::parse::containers::container_cli_info(&block) else { return };
    let driver = info.driver_version.as_deref().and_then(|v| v.parse::<DriverVersion>().ok());
    let cuda = info.cuda_version.as_deref().and_then(|v| v.parse::<CudaVersion>().ok());
    if driver.is_none() && cuda.is_none() {
        return;
    }
    facts.saw(at, "nvidia-container-cli info");
    facts.driver(driver, cuda, "nvidia-container-cli info");
}

/// One `Label : value` line of `nvidia-smi --version` (a pasted `# ` or `> ` before it ignored),
/// or `None` for any other line; a value of more than one word (`Deprecated, see …`) is kept whole
/// and parses as no version.
fn version_line(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.split_once(" : ").or_else(|| line.split_once(": "))?;
    let key = key.trim_start_matches(|c: char| !c.is_ascii_alphanumeric()).trim_end();
    let known =
        ["NVIDIA-SMI version", "NVML version", "DRIVER version", "CUDA version", "KMD version", "CUDA UMD version"];
    known.iter().any(|k| key.eq_ignore_ascii_case(k)).then_some((key, value.trim()))
}

/// `GPU 00000000:01:00.0` alone on a line: a `-q` block pasted without its header.
fn is_q_gpu_line(l: &str) -> bool {
    l.trim()
        .strip_prefix("GPU ")
        .is_some_and(|b| b.len() >= 7 && b.contains(':') && b.contains('.') && !b.contains(' '))
}

fn line_of(lines: &[String], needle: &str) -> usize {
    lines.iter().position(|l| l.contains(needle)).unwrap_or(0)
}

fn add(facts: &mut Facts, at: usize, format: &'static str, r: &SmiReport, archs: &[Option<String>]) {
    facts.saw(at, format);
    facts.driver(r.driver_version.clone(), r.cuda_version, format);
    for (i, g) in r.gpus.iter().enumerate() {
        let index = u32::try_from(i).unwrap_or(u32::MAX);
        let arch = archs.get(i).cloned().flatten();
        let gpu = from_smi(index, g, arch);
        let health = GpuHealth { index, pci_bus_id: gpu.pci_bus_id.clone(), ..g.health.clone() };
        facts.health(health, format);
        facts.listed_gpus.push((gpu, format));
    }
}

/// Field names a `--query-gpu` header has; two of them make a CSV header.
const CSV_FIELDS: &[&str] = &[
    "index",
    "name",
    "uuid",
    "pci.bus_id",
    "driver_version",
    "kmd_version",
    "memory.total",
    "memory.used",
    "compute_cap",
    "temperature.gpu",
    "utilization.gpu",
    "pcie.link.gen.max",
    "pcie.link.gen.current",
    "pcie.link.gen.gpucurrent",
    "pcie.link.gen.gpumax",
    "pcie.link.gen.hostmax",
    "pcie.link.width.max",
    "pcie.link.width.current",
    "power.draw",
];

/// How many header-like lines are tried as the start of a CSV; each try reads at most
/// [`MAX_GPUS`] rows, so text full of header-like lines costs no more than a few CSVs.
const CSV_TRIES: usize = 16;

/// A `--query-gpu` CSV: a header of field names, then rows with as many cells.
fn csv(lines: &[String], facts: &mut Facts) {
    let headers = lines.iter().enumerate().filter(|(_, line)| {
        line.split(',').filter(|c| CSV_FIELDS.contains(&c.split(" [").next().unwrap_or("").trim())).count() >= 2
    });
    let mut tries = 0;
    for (i, line) in headers {
        let cells = line.split(',').count();
        let block: Vec<&str> = std::iter::once(line.as_str())
            .chain(
                lines
                    .iter()
                    .skip(i + 1)
                    .take(MAX_GPUS)
                    .map(String::as_str)
                    .take_while(|l| l.split(',').count() == cells),
            )
            .collect();
        if block.len() < 2 {
            continue;
        }
        tries += 1;
        if tries > CSV_TRIES {
            return;
        }
        let block = one_sample_of_a_loop(lines, i, block);
        if let Ok(r) = smi_csv::parse(&block.join("\n")) {
            add(facts, i, "nvidia-smi CSV", &r, &[]);
            return;
        }
    }
    if facts.listed_gpus.is_empty() {
        noheader(lines, facts);
    }
}

/// A `--query-gpu … --format=csv,noheader` block: rows of as many cells, the first with a GPU
/// name. Where the command that printed it is pasted just before it, with as many fields as the
/// rows have cells, its field list is the header (nvidia-smi prints the fields in the order asked);
/// otherwise the columns are told by their shapes, a bus id, UUID or driver version beside the name
/// (`smi_csv::parse_noheader`).
fn noheader(lines: &[String], facts: &mut Facts) {
    let mut tries = 0;
    for (i, line) in lines.iter().enumerate() {
        let cells = line.split(',').count();
        if cells < 2 || !line.split(',').any(|c| smi_csv::field_of_cell(c) == Some("name")) {
            continue;
        }
        tries += 1;
        if tries > CSV_TRIES {
            return;
        }
        let block: Vec<&str> = lines
            .iter()
            .skip(i)
            .take(MAX_GPUS)
            .map(String::as_str)
            .take_while(|l| l.split(',').count() == cells)
            .collect();
        let asked = lines[i.saturating_sub(QUERY_LINES)..i].iter().rev().find_map(|l| query_fields(l));
        let read = match asked.filter(|fields| fields.len() == cells) {
            Some(fields) => smi_csv::parse(
                &std::iter::once(fields.join(","))
                    .chain(block.iter().map(|l| (*l).to_owned()))
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            None => smi_csv::parse_noheader(&block.join("\n")),
        };
        if let Ok(r) = read {
            add(facts, i, "nvidia-smi CSV", &r, &[]);
            return;
        }
    }
}

/// How many lines before a header-less CSV are searched for the command that printed it.
const QUERY_LINES: usize = 4;

/// Fields that tell one GPU's row from another's.
const IDENTITY_FIELDS: [&str; 4] = ["index", "name", "uuid", "pci.bus_id"];

/// A `--query-gpu` CSV printed by a command with `-l`/`--loop` (`-lms`/`--loop-ms`) just above its
/// header repeats its rows once a sample (nvidia-smi --help: "Probe until Ctrl+C at specified second
/// interval"). Where no column tells the GPUs apart, the rows cannot be split into GPUs and samples,
/// so only the header and the first row are kept: one GPU's first sample, not as many GPUs as rows.
fn one_sample_of_a_loop<'a>(lines: &[String], header_at: usize, block: Vec<&'a str>) -> Vec<&'a str> {
    let looped = lines[header_at.saturating_sub(QUERY_LINES)..header_at].iter().any(|l| {
        l.contains("--query-gpu")
            && l.split_whitespace().any(|w| matches!(w.split('=').next(), Some("-l" | "--loop" | "-lms" | "--loop-ms")))
    });
    let identified = block
        .first()
        .is_some_and(|h| h.split(',').any(|c| IDENTITY_FIELDS.contains(&c.split(" [").next().unwrap_or("").trim())));
    if looped && !identified { block.into_iter().take(2).collect() } else { block }
}

/// The fields a `nvidia-smi --query-gpu=name,memory.total,index` command line asks for (or
/// `--query-gpu name,…`), in order; `None` for any other line or a list that is not all field names.
fn query_fields(line: &str) -> Option<Vec<String>> {
    let at = line.find("--query-gpu")?;
    let rest = line.get(at + "--query-gpu".len()..)?;
    let list = rest.trim_start_matches(['=', ' ']).split_whitespace().next()?;
    let list = list.trim_matches(['"', '\'', '`']);
    let fields: Vec<String> = list.split(',').map(|f| f.trim().to_owned()).collect();
    let name = |f: &String| {
        f.starts_with(|c: char| c.is_ascii_alphabetic())
            && f.chars().all(|c| c.is_ascii_alphanumeric() || "._".contains(c))
    };
    (fields.len() >= 2 && fields.iter().all(name)).then_some(fields)
}
