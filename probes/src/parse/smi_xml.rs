//! `nvidia-smi -q -x`: the XML report (schemas nvsmi_device_v9 to v13, drivers 390 to 590).

use roxmltree::{Document, Node, ParsingOptions};

use super::ParseError;
use super::smi::{self, SmiGpu, SmiProcess, SmiReport};
use gpu_doctor_model::{EccCounters, GpuHealth};

const FORMAT: &str = "nvidia-smi XML";

/// Bounds the node count so that a hostile DTD cannot make the parser eat all memory.
const NODES_LIMIT: u32 = 2_000_000;

/// How deep elements may nest. nvidia-smi's reports go five deep; roxmltree descends one call per
/// level, so text nested thousands deep would overflow the stack before it could say no.
const DEPTH_LIMIT: usize = 64;

/// Parses `nvidia-smi -q -x` output. Malformed, truncated, too deeply nested or non-nvidia-smi XML
/// is an error.
pub fn parse(text: &str) -> Result<SmiReport, ParseError> {
    if nests_deeper_than(text, DEPTH_LIMIT) {
        return Err(ParseError::new(FORMAT, format!("elements are nested more than {DEPTH_LIMIT} deep")));
    }
    // nvidia-smi writes a `<!DOCTYPE … SYSTEM "nvsmi_device_vN.dtd">` line; roxmltree refuses DTDs
    // unless told otherwise. External DTDs are never fetched.
    let opts = ParsingOptions { allow_dtd: true, nodes_limit: NODES_LIMIT };
    let doc = Document::parse_with_options(text, opts).map_err(|e| ParseError::new(FORMAT, e.to_string()))?;
    let root = doc.root_element();
    if root.tag_name().name() != "nvidia_smi_log" {
        return Err(ParseError::new(
            FORMAT,
            format!("root element is <{}>, not <nvidia_smi_log>", truncate(root.tag_name().name())),
        ));
    }
    let top = |name: &str| child_text(root, name);
    // R610 renamed the driver and CUDA labels (`smi::DRIVER_LABELS`); in `-q` the old labels keep
    // their value followed by `[Deprecated; …]`. The XML's new element names are not seen in a
    // real R610 report yet: `kmd_version` is `--query-gpu`'s R610 field name, `cuda_umd_version`
    // follows it. Each value's first word is read, so a deprecation note after it does no harm.
    let newest = |names: [&str; 2]| -> Vec<String> {
        names.into_iter().filter_map(top).filter_map(|v| v.split_whitespace().next()).map(str::to_owned).collect()
    };
    Ok(SmiReport {
        driver_version: newest(["kmd_version", "driver_version"]).iter().find_map(|v| smi::driver(v)),
        cuda_version: newest(["cuda_umd_version", "cuda_version"]).iter().find_map(|v| smi::cuda(v)),
        nvidia_smi_version: top("nvidia_smi_version").and_then(smi::text),
        gpus: root.children().filter(|n| n.has_tag_name("gpu")).map(gpu).collect(),
    })
}

/// True when the open tags in `text` nest more than `limit` deep. One pass, skipping quoted
/// attribute values; comments, DOCTYPE and processing instructions are not counted as elements,
/// but a tag inside them is (which can only make the answer stricter).
fn nests_deeper_than(text: &str, limit: usize) -> bool {
    let b = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(off) = b.get(i..).and_then(|rest| rest.iter().position(|&c| c == b'<')) {
        i += off + 1;
        match b.get(i) {
            Some(b'/') => depth = depth.saturating_sub(1),
            Some(b'!' | b'?') | None => {}
            Some(_) => {
                let mut quote = None;
                let mut prev = 0u8;
                let mut self_closing = false;
                while let Some(&c) = b.get(i) {
                    match quote {
                        Some(q) if c == q => quote = None,
                        Some(_) => {}
                        None if c == b'"' || c == b'\'' => quote = Some(c),
                        None if c == b'>' => {
                            self_closing = prev == b'/';
                            break;
                        }
                        None => {}
                    }
                    prev = c;
                    i += 1;
                }
                if !self_closing {
                    depth += 1;
                    if depth > limit {
                        return true;
                    }
                }
            }
        }
    }
    false
}

/// At most 64 characters of `s`, for error messages.
fn truncate(s: &str) -> String {
    s.chars().take(64).collect()
}

/// The first child element called `name`.
fn child<'a, 'i>(node: Node<'a, 'i>, name: &str) -> Option<Node<'a, 'i>> {
    node.children().find(|n| n.has_tag_name(name))
}

/// The element at `path` below `node`, e.g. `["pci", "pci_gpu_link_info", "pcie_gen"]`.
fn at<'a, 'i>(node: Node<'a, 'i>, path: &[&str]) -> Option<Node<'a, 'i>> {
    path.iter().try_fold(node, |n, name| child(n, name))
}

/// The text of the child element called `name` (empty elements give `""`).
fn child_text<'a>(node: Node<'a, '_>, name: &str) -> Option<&'a str> {
    child(node, name).map(|n| n.text().unwrap_or(""))
}

/// The text of the element at `path`.
fn text_at<'a>(node: Node<'a, '_>, path: &[&str]) -> Option<&'a str> {
    at(node, path).map(|n| n.text().unwrap_or(""))
}

/// The first of `names` below `parent` that has a value (not `N/A`), parsed by `f`.
fn first_of<T>(parent: Option<Node<'_, '_>>, names: &[&str], f: impl Fn(&str) -> Option<T>) -> Option<T> {
    let parent = parent?;
    names.iter().find_map(|name| child_text(parent, name).and_then(&f))
}

fn gpu(g: Node<'_, '_>) -> SmiGpu {
    let t = |path: &[&str]| text_at(g, path);
    let link = at(g, &["pci", "pci_gpu_link_info"]);
    let link_text = |path: &[&str]| link.and_then(|l| text_at(l, path));
    // v12+ report `gpu_power_readings` (and module/memory readings we skip); older `power_readings`.
    // v13 replaced `power_draw` with `average_power_draw` / `instant_power_draw`, and the limit
    // in force is `current_power_limit` (v12+) or `enforced_power_limit` (older).
    let power = child(g, "gpu_power_readings").or_else(|| child(g, "power_readings"));
    let display = t(&["display_attached"]).and_then(smi::flag).or_else(|| t(&["display_active"]).and_then(smi::flag));
    SmiGpu {
        name: t(&["product_name"]).and_then(smi::text),
        uuid: t(&["uuid"]).and_then(smi::text),
        pci_bus_id: t(&["pci", "pci_bus_id"]).and_then(smi::text).or_else(|| g.attribute("id").and_then(smi::text)),
        memory_total_mib: t(&["fb_memory_usage", "total"]).and_then(smi::mib),
        memory_used_mib: t(&["fb_memory_usage", "used"]).and_then(smi::mib),
        bar1_total_mib: t(&["bar1_memory_usage", "total"]).and_then(smi::mib),
        pcie_gen_current: link_text(&["pcie_gen", "current_link_gen"]).and_then(|s| smi::int_with_unit(s, "")),
        pcie_gen_max: link_text(&["pcie_gen", "max_link_gen"]).and_then(|s| smi::int_with_unit(s, "")),
        pcie_width_current: link_text(&["link_widths", "current_link_width"]).and_then(|s| smi::int_with_unit(s, "x")),
        pcie_width_max: link_text(&["link_widths", "max_link_width"]).and_then(|s| smi::int_with_unit(s, "x")),
        mig_enabled: t(&["mig_mode", "current_mig"]).and_then(smi::flag),
        compute_mode: t(&["compute_mode"]).and_then(smi::compute_mode),
        persistence_mode: t(&["persistence_mode"]).and_then(smi::flag),
        driver_model: t(&["driver_model", "current_dm"]).and_then(smi::text),
        display_attached: display,
        vbios_version: t(&["vbios_version"]).and_then(smi::text),
        temperature_c: t(&["temperature", "gpu_temp"]).and_then(|s| smi::int_with_unit(s, "C")),
        power_draw_mw: first_of(power, &["power_draw", "average_power_draw", "instant_power_draw"], smi::watts_to_mw),
        power_limit_mw: first_of(
            power,
            &["current_power_limit", "enforced_power_limit", "power_limit"],
            smi::watts_to_mw,
        ),
        clock_sm_mhz: t(&["clocks", "sm_clock"]).and_then(|s| smi::int_with_unit(s, "MHz")),
        clock_sm_max_mhz: t(&["max_clocks", "sm_clock"]).and_then(|s| smi::int_with_unit(s, "MHz")),
        clock_mem_mhz: t(&["clocks", "mem_clock"]).and_then(|s| smi::int_with_unit(s, "MHz")),
        clock_mem_max_mhz: t(&["max_clocks", "mem_clock"]).and_then(|s| smi::int_with_unit(s, "MHz")),
        utilization_gpu_pct: t(&["utilization", "gpu_util"]).and_then(|s| smi::int_with_unit(s, "%")),
        ecc_enabled: t(&["ecc_mode", "current_ecc"]).and_then(smi::flag),
        compute_capability: first_of(Some(g), &["compute_cap", "cuda_compute_capability"], smi::text),
        processes: processes(g),
        health: health(g, power),
    }
}

/// ECC, retired pages, remapped rows, clock-event reasons, fan, temperature thresholds and power
/// limits; the error counts are summed over the memories listed (as NVML's totals are).
fn health(g: Node<'_, '_>, power: Option<Node<'_, '_>>) -> GpuHealth {
    let t = |path: &[&str]| text_at(g, path);
    let count = |path: &[&str]| t(path).and_then(smi::count);
    let flag = |path: &[&str]| t(path).and_then(smi::flag);
    // `single_bit/total` and `double_bit/total` before about 450; then `sram_correctable`,
    // `dram_uncorrectable`, `sram_uncorrectable_parity`, … one element per memory.
    let errors = |scope: &str, kind: &str, old: &str| {
        let node = at(g, &["ecc_errors", scope])?;
        if let Some(total) = text_at(node, &[old, "total"]).and_then(smi::count) {
            return Some(total);
        }
        let mut sum = None;
        for n in node.children().filter(|n| {
            let name = n.tag_name().name();
            (name.starts_with("sram_") || name.starts_with("dram_"))
                && name.get(5..).is_some_and(|rest| rest == kind || rest.starts_with(&format!("{kind}_")))
        }) {
            smi::add_count(&mut sum, n.text().unwrap_or(""));
        }
        sum
    };
    let pages = at(g, &["retired_pages"]);
    let pending_pages = ["pending_blacklist", "pending_retirement"]
        .iter()
        .filter_map(|name| pages.and_then(|p| child_text(p, name)).and_then(smi::flag))
        .reduce(|a, b| a || b);
    let reasons = child(g, "clocks_event_reasons").or_else(|| child(g, "clocks_throttle_reasons"));
    let mut clock_event_reasons = None;
    for r in reasons.iter().flat_map(|r| r.children()).filter(Node::is_element) {
        let name = r.tag_name().name();
        let key = name.strip_prefix("clocks_event_reason_").or_else(|| name.strip_prefix("clocks_throttle_reason_"));
        if let Some(key) = key {
            smi::clock_event(&mut clock_event_reasons, key, r.text().unwrap_or(""));
        }
    }
    GpuHealth {
        ecc_pending: flag(&["ecc_mode", "pending_ecc"]),
        memory_errors: EccCounters {
            ecc_enabled: flag(&["ecc_mode", "current_ecc"]),
            corrected_volatile: errors("volatile", "correctable", "single_bit"),
            corrected_aggregate: errors("aggregate", "correctable", "single_bit"),
            uncorrected_volatile: errors("volatile", "uncorrectable", "double_bit"),
            uncorrected_aggregate: errors("aggregate", "uncorrectable", "double_bit"),
            retired_pages_single_bit: count(&["retired_pages", "multiple_single_bit_retirement", "retired_count"]),
            retired_pages_double_bit: count(&["retired_pages", "double_bit_retirement", "retired_count"]),
            retired_pages_pending: pending_pages,
            remapped_rows_corrected: count(&["remapped_rows", "remapped_row_corr"]),
            remapped_rows_uncorrected: count(&["remapped_rows", "remapped_row_unc"]),
            remapped_rows_pending: flag(&["remapped_rows", "remapped_row_pending"]),
            remapped_rows_failure: flag(&["remapped_rows", "remapped_row_failure"]),
            ..EccCounters::default()
        },
        clock_event_reasons,
        power_limit_default_mw: first_of(power, &["default_power_limit"], smi::watts_to_mw),
        power_limit_min_mw: first_of(power, &["min_power_limit"], smi::watts_to_mw),
        power_limit_max_mw: first_of(power, &["max_power_limit"], smi::watts_to_mw),
        fan_speed_pct: t(&["fan_speed"]).and_then(|s| smi::int_with_unit(s, "%")),
        temperature_slowdown_c: t(&["temperature", "gpu_temp_slow_threshold"]).and_then(|s| smi::int_with_unit(s, "C")),
        temperature_shutdown_c: t(&["temperature", "gpu_temp_max_threshold"]).and_then(|s| smi::int_with_unit(s, "C")),
        ..GpuHealth::default()
    }
}

/// `processes/process_info` entries with a numeric pid.
fn processes(g: Node<'_, '_>) -> Vec<SmiProcess> {
    let Some(list) = child(g, "processes") else {
        return Vec::new();
    };
    list.children()
        .filter(|n| n.has_tag_name("process_info"))
        .filter_map(|p| {
            let pid = child_text(p, "pid").and_then(|s| smi::int_with_unit(s, ""))?;
            let used_memory_mib = child_text(p, "used_memory").and_then(smi::mib);
            Some(SmiProcess { pid, used_memory_mib })
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub(crate) mod tests;
