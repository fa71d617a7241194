//! GPU health: memory errors and the repairs waiting for a reset, the kernel log's Xid events
//! (each explained from `xid.toml`), compute mode, power cap, throttling now, persistence mode.

use super::{Ctx, Rule, fix};
use gpu_doctor_kb::{XidRow, XidSeverity};
use gpu_doctor_model::shell::{Shell, ShellCommand};
use gpu_doctor_model::{Category, Change, Finding, Severity};
use gpu_doctor_model::{Gpu, GpuHealth, OsFamily, XidEvent};

const CATEGORY: Category = Category::Other;

pub(super) const ECC_UNCORRECTABLE: Rule = Rule {
    id: "health.ecc_uncorrectable",
    category: CATEGORY,
    severity: Severity::Error,
    trigger: "The GPU counted uncorrectable (double-bit) ECC errors since the driver loaded: programs that touched \
              that memory got wrong data or were stopped.",
    source: "NVML nvmlDeviceGetTotalEccErrors (volatile, uncorrected); nvidia-smi -q `ECC Errors`; \
             https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html",
};

pub(super) const ECC_CORRECTED: Rule = Rule {
    id: "health.ecc_corrected",
    category: CATEGORY,
    severity: Severity::Info,
    trigger: "The GPU counted corrected (single-bit) ECC errors and no uncorrectable ones: ECC fixed them, nothing was \
              lost; a count that keeps climbing is a sign of failing memory.",
    source: "NVML nvmlDeviceGetTotalEccErrors (corrected); \
             https://docs.nvidia.com/deploy/dynamic-page-retirement/index.html",
};

pub(super) const REPAIR_PENDING: Rule = Rule {
    id: "health.memory_repair_pending",
    category: CATEGORY,
    severity: Severity::Warning,
    trigger: "A page retirement (Volta and earlier) or a row remap (Ampere and later) waits for a GPU reset: until \
              then the bad memory is only fenced off for the programs running now.",
    source: "NVML nvmlDeviceGetRetiredPagesPendingStatus, nvmlDeviceGetRemappedRows (isPending); \
             https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html",
};

pub(super) const REMAP_FAILED: Rule = Rule {
    id: "health.row_remap_failed",
    category: CATEGORY,
    severity: Severity::Error,
    trigger: "A row remap failed (the memory bank has no spare row left): NVIDIA's RMA criterion once the field \
              diagnostic confirms it.",
    source: "NVML nvmlDeviceGetRemappedRows (failureOccurred); \
             https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html",
};

pub(super) const XID_ERROR: Rule = Rule {
    id: "health.xid_error",
    category: CATEGORY,
    severity: Severity::Error,
    trigger: "The kernel log has an Xid that means the GPU or its connection failed (xid.toml `severity = error`: \
              48, 62, 64, 74, 79, 95, 119, 120): it needs a reset, a reboot or hardware work.",
    source: "assets/compat/xid.toml (NVIDIA's Xid catalog, per row)",
};

pub(super) const XID_WARNING: Rule = Rule {
    id: "health.xid_warning",
    category: CATEGORY,
    severity: Severity::Warning,
    trigger: "The kernel log has an Xid that is usually a program's fault or a sign to watch (xid.toml \
              `severity = warning`: 13, 31, 32, 43, 61, 68, 69, 92, 94), or one xid.toml does not list.",
    source: "assets/compat/xid.toml (NVIDIA's Xid catalog, per row)",
};

pub(super) const XID_INFO: Rule = Rule {
    id: "health.xid_info",
    category: CATEGORY,
    severity: Severity::Info,
    trigger: "The kernel log has an Xid that records an event other checks judge (xid.toml `severity = info`: 45, \
              63).",
    source: "assets/compat/xid.toml (NVIDIA's Xid catalog, per row)",
};

pub(super) const EXCLUSIVE: Rule = Rule {
    id: "health.compute_mode_exclusive",
    category: CATEGORY,
    severity: Severity::Warning,
    trigger: "The GPU's compute mode is Exclusive_Process (or Exclusive_Thread): only one process (thread) may hold \
              a CUDA context, so a second process, or a framework that opens two contexts, fails with \
              'CUDA-capable device(s) is/are busy or unavailable'. Also CUDA's 216 (an exclusive-thread device already \
              in use by a different thread; TensorFlow's `cuCtxSetCurrent(context) (0 vs. 216)`) where the compute \
              modes are not shown: CUDA gives that code only in the Exclusive_Thread mode.",
    source: "nvidia-smi(1) `-c, --compute-mode`; NVML nvmlDeviceGetComputeMode",
};

pub(super) const PROHIBITED: Rule = Rule {
    id: "health.compute_mode_prohibited",
    category: CATEGORY,
    severity: Severity::Error,
    trigger: "The GPU's compute mode is Prohibited: no process may create a CUDA context on it.",
    source: "nvidia-smi(1) `-c, --compute-mode`; NVML nvmlDeviceGetComputeMode",
};

pub(super) const POWER_CAP: Rule = Rule {
    id: "health.power_cap_below_default",
    category: CATEGORY,
    severity: Severity::Warning,
    trigger: "The enforced power limit is more than 1 % below the board's default: the GPU slows down earlier under \
              load than it was built to.",
    source: "NVML nvmlDeviceGetEnforcedPowerLimit, nvmlDeviceGetPowerManagementDefaultLimit; nvidia-smi -q \
             `GPU Power Readings`",
};

pub(super) const THROTTLED: Rule = Rule {
    id: "health.throttled_now",
    category: CATEGORY,
    severity: Severity::Warning,
    trigger: "The clocks are held down now by a hardware slowdown (HW Slowdown, HW Thermal Slowdown, HW Power Brake) \
              or by the software thermal limit: the GPU runs too hot or its power delivery asks it to slow down.",
    source: "NVML nvmlDeviceGetCurrentClocksEventReasons; nvidia-smi -q `Clocks Event Reasons`",
};

pub(super) const PERSISTENCE_OFF: Rule = Rule {
    id: "health.persistence_off",
    category: CATEGORY,
    severity: Severity::Info,
    trigger: "Persistence mode is off on a Linux machine where no GPU drives a display (and none is an eGPU): the \
              driver tears the GPU down when the last program exits, so every CUDA start pays the initialisation \
              again.",
    source: "https://docs.nvidia.com/deploy/driver-persistence/index.html",
};

pub(super) const RULES: &[Rule] = &[
    ECC_UNCORRECTABLE,
    ECC_CORRECTED,
    REPAIR_PENDING,
    REMAP_FAILED,
    XID_ERROR,
    XID_WARNING,
    XID_INFO,
    EXCLUSIVE,
    PROHIBITED,
    POWER_CAP,
    THROTTLED,
    PERSISTENCE_OFF,
];

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let gpus = cx.raw_gpus().unwrap_or_default();
    for g in gpus {
        compute_mode(g, out);
    }
    if !out.iter().any(|f| f.id == EXCLUSIVE.id)
        && let Some(m) = cx.s.messages.iter().find(|m| m.id == "cuda.device_already_in_use")
    {
        out.push(exclusive_thread_said(&m.line));
    }
    if let Some(health) = cx.s.health.gpus.value() {
        for h in health {
            let gpu = gpus.iter().find(|g| g.index == h.index);
            memory(cx, h, &name(gpu, h), out);
            if let Some(g) = gpu {
                power_cap(g, h, out);
                throttled(g, h, out);
            }
        }
    }
    persistence(cx, gpus, out);
    if let Some(events) = cx.s.health.xid_events.value() {
        xids(cx, gpus, events, out);
    }
}

/// `NVIDIA A10 (GPU 0, 0000:07:00.0)`.
fn name(gpu: Option<&Gpu>, h: &GpuHealth) -> String {
    let product = gpu.and_then(|g| g.name.clone()).unwrap_or_else(|| "GPU".to_owned());
    match &h.pci_bus_id {
        Some(bus) => format!("{product} (GPU {}, {bus})", h.index),
        None => format!("{product} (GPU {})", h.index),
    }
}

/// `sudo nvidia-smi -i INDEX ARGS…` on Linux; `nvidia-smi …` (from an Administrator shell) on Windows.
fn nvidia_smi(cx: &Ctx<'_>, index: u32, args: &[&str]) -> String {
    let smi = ShellCommand::new("nvidia-smi").args(["-i".to_owned(), index.to_string()]).args(args.iter().copied());
    if cx.shell == Shell::PowerShell {
        format!("{} (in an Administrator PowerShell)", fix::command(cx, &smi, false))
    } else {
        fix::command(cx, &ShellCommand::new("sudo").args(smi.argv()), false)
    }
}

/// `nvidia-smi -i INDEX ARGS…` as a root step of a plan (root on Linux, Administrator on Windows).
fn smi_root(index: u32, args: &[&str]) -> Change {
    let mut argv = vec!["nvidia-smi".to_owned(), "-i".to_owned(), index.to_string()];
    argv.extend(args.iter().map(|a| (*a).to_owned()));
    Change::Root { argv }
}

fn count_text(n: Option<u64>) -> String {
    n.map_or_else(|| "not reported".to_owned(), |n| n.to_string())
}

fn memory(cx: &Ctx<'_>, h: &GpuHealth, who: &str, out: &mut Vec<Finding>) {
    let m = &h.memory_errors;
    let counts = format!(
        "{who}: ECC errors since the driver loaded: {} corrected, {} uncorrected; over the board's life: {} \
         corrected, {} uncorrected",
        count_text(m.corrected_volatile),
        count_text(m.uncorrected_volatile),
        count_text(m.corrected_aggregate),
        count_text(m.uncorrected_aggregate)
    );
    let reset = nvidia_smi(cx, h.index, &["-r"]);
    if m.uncorrected_volatile.unwrap_or(0) > 0 {
        out.push(ECC_UNCORRECTABLE.finding(
            format!("{who} had uncorrectable memory errors since the driver loaded"),
            "An uncorrectable ECC error means data in GPU memory was wrong: the programs that read it were stopped \
             (Xid 48, 94 or 95) and results written since are suspect. The driver retires the page or remaps the \
             row at the next GPU reset.",
            vec![counts.clone()],
            Some(format!(
                "Rerun the work that was running. Stop everything on the GPU and reset it ({reset}) or reboot, then \
                 check that the repair took (`nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT`). If uncorrectable \
                 errors come back, run NVIDIA's field diagnostic and ask the vendor for an RMA."
            )),
        ));
    } else if m.corrected_volatile.unwrap_or(0) > 0 || m.corrected_aggregate.unwrap_or(0) > 0 {
        out.push(ECC_CORRECTED.finding(
            format!("{who} has corrected memory errors"),
            "ECC corrected single-bit errors in GPU memory, so no data was lost. A few over a board's life are \
             normal; a count that grows fast, or pages retired or rows remapped after them, mean the memory is \
             failing.",
            vec![counts.clone()],
            None,
        ));
    }
    repairs(h, who, &counts, out);
}

fn repairs(h: &GpuHealth, who: &str, counts: &str, out: &mut Vec<Finding>) {
    let m = &h.memory_errors;
    let remaps = format!(
        "{who}: remapped rows: {} after correctable errors, {} after uncorrectable ones; remap pending: {}; remap \
         failure: {}",
        count_text(m.remapped_rows_corrected),
        count_text(m.remapped_rows_uncorrected),
        yes_no(m.remapped_rows_pending),
        yes_no(m.remapped_rows_failure)
    );
    let pages = format!(
        "{who}: retired pages: {} after single-bit errors, {} after double-bit errors; retirement pending: {}",
        count_text(m.retired_pages_single_bit),
        count_text(m.retired_pages_double_bit),
        yes_no(m.retired_pages_pending)
    );
    if m.remapped_rows_failure == Some(true) {
        out.push(REMAP_FAILED.finding(
            format!("{who} failed to remap a memory row"),
            "The GPU found a bad memory row and had no spare row left to replace it with. NVIDIA's policy: the board \
             qualifies for an RMA when the row-remapping failure flag is set and the field diagnostic confirms it.",
            vec![remaps.clone(), counts.to_owned()],
            Some(
                "Take the GPU out of service, run NVIDIA's field diagnostic (from the vendor) and ask for an RMA \
                 with its result and `nvidia-bug-report.sh` output."
                    .to_owned(),
            ),
        ));
    }
    if m.repair_pending() {
        let evidence = if m.remapped_rows_pending == Some(true) { remaps } else { pages };
        out.push(REPAIR_PENDING.finding(
            format!("{who} has a memory repair waiting for a GPU reset"),
            "The driver marked bad GPU memory for retirement or remapping; the repair takes effect only when the GPU \
             is reset or the machine reboots. Until then the programs running now are kept off it, but the repair \
             is not permanent.",
            vec![evidence, counts.to_owned()],
            None,
        )
        .with_plan(fix::change(
            None,
            format!("the memory repair of {who} applied"),
            vec![
                Change::Manual { text: "Stop every program using the GPU (or reboot instead of the reset).".into() },
                smi_root(h.index, &["-r"]),
                Change::Manual {
                    text: "Then `nvidia-smi -q -d ROW_REMAPPER,PAGE_RETIREMENT` should show nothing pending.".into(),
                },
            ],
        )));
    }
}

fn yes_no(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "not reported",
    }
}

fn compute_mode(g: &Gpu, out: &mut Vec<Finding>) {
    let Some(mode) = g.compute_mode.as_deref() else { return };
    let plain = mode.replace('_', "").to_ascii_lowercase();
    let who = g.name.clone().map_or_else(|| format!("GPU {}", g.index), |n| format!("{n} (GPU {})", g.index));
    let evidence = vec![format!("{who}: compute mode {mode}")];
    let plan = fix::change(
        None,
        format!("{who} in the Default compute mode"),
        vec![
            Change::Manual {
                text: "Check first that nothing here needs it (a job scheduler or an MPS setup may have set it on \
                       purpose)."
                    .into(),
            },
            smi_root(g.index, &["-c", "DEFAULT"]),
            Change::Manual {
                text: "The setting does not survive a reboot unless a startup script sets it again.".into(),
            },
        ],
    );
    match plain.as_str() {
        "exclusiveprocess" | "exclusivethread" => out.push(EXCLUSIVE.finding(
            format!("{who} lets only one process use it (compute mode {mode})"),
            "In an exclusive compute mode a second process (a DataLoader worker touching CUDA, a second notebook, a \
             framework that opens two contexts) fails with 'all CUDA-capable devices are busy or unavailable'.",
            evidence,
            None,
        )
        .with_plan(plan)),
        "prohibited" => out.push(PROHIBITED.finding(
            format!("{who} allows no CUDA program at all (compute mode {mode})"),
            "In the Prohibited compute mode no process may create a CUDA context on this GPU.",
            evidence,
            None,
        )
        .with_plan(plan)),
        _ => {}
    }
}

/// CUDA's 216 (`cudaErrorDeviceAlreadyInUse`, `CUDA_ERROR_CONTEXT_ALREADY_IN_USE`) where the GPUs' compute modes
/// are not shown: the code exists only for a GPU in the Exclusive_Thread mode, so the mode is said by the error.
fn exclusive_thread_said(line: &str) -> Finding {
    EXCLUSIVE
        .finding(
            "A GPU is in the Exclusive_Thread compute mode: CUDA refused a second thread its context",
            "CUDA answered 216 (an exclusive-thread device already in use by another thread), which it gives only for \
             a GPU in the Exclusive_Thread compute mode: one thread may hold its context, and a program that makes \
             the context in one thread and uses it from another (TensorFlow's StreamExecutor) fails.",
            vec![format!("pasted line: {line}")],
            None,
        )
        .with_plan(fix::change(
            None,
            "every GPU in the Default compute mode",
            vec![
                Change::Manual {
                    text:
                        "`nvidia-smi -q -d COMPUTE` shows each GPU's compute mode; check first that nothing here needs \
                           the exclusive one (a job scheduler may have set it on purpose)."
                            .into(),
                },
                Change::Root { argv: vec!["nvidia-smi".into(), "-c".into(), "DEFAULT".into()] },
                Change::Manual {
                    text: "Or `-c EXCLUSIVE_PROCESS` where one process at a time is wanted; the setting does not \
                           survive a reboot unless a startup script sets it again."
                        .into(),
                },
            ],
        ))
}

fn watts(mw: u32) -> String {
    format!("{:.0} W", f64::from(mw) / 1000.0)
}

fn power_cap(g: &Gpu, h: &GpuHealth, out: &mut Vec<Finding>) {
    let (Some(now), Some(default)) = (g.power_limit_mw, h.power_limit_default_mw) else { return };
    // More than 1 % below: a limit that equals the default up to rounding is not a cap.
    if u64::from(now) * 100 >= u64::from(default) * 99 {
        return;
    }
    let who = name(Some(g), h);
    let range = match (h.power_limit_min_mw, h.power_limit_max_mw) {
        (Some(min), Some(max)) => format!("; settable from {} to {}", watts(min), watts(max)),
        _ => String::new(),
    };
    let default_w = (default / 1000).to_string();
    out.push(POWER_CAP.finding(
        format!("{who} is capped at {} of its default {}", watts(now), watts(default)),
        "Under load the GPU slows down when it reaches its power limit; below the default it does so earlier, so \
         compute-bound work runs slower than the board's rating. Someone (or a tool such as a mining or quiet-fan \
         profile, or a data-centre policy) set it on purpose; check before raising it.",
        vec![format!("{who}: enforced power limit {}, default {}{range}", watts(now), watts(default))],
        None,
    )
    .with_plan(fix::change(None, format!("{who} at its default power limit"), vec![smi_root(g.index, &["-pl", &default_w])])));
}

fn throttled(g: &Gpu, h: &GpuHealth, out: &mut Vec<Finding>) {
    let Some(reasons) = &h.clock_event_reasons else { return };
    let slow = h.slowdowns();
    if slow.is_empty() {
        return;
    }
    let who = name(Some(g), h);
    let mut evidence = vec![format!("{who}: clocks held down now by {}", reasons.join(", "))];
    if let Some(t) = g.temperature_c {
        let limit = h.temperature_slowdown_c.map_or_else(String::new, |s| format!(" (slowdown at {s} °C)"));
        evidence.push(format!("{who}: temperature {t} °C{limit}"));
    }
    if let (Some(draw), Some(limit)) = (g.power_draw_mw, g.power_limit_mw) {
        evidence.push(format!("{who}: power draw {} of {}", watts(draw), watts(limit)));
    }
    let cause = if slow.contains(&"hw_power_brake_slowdown") {
        "The power brake means the board's power delivery (the power supply, its cables, or the chassis' power \
         management) asked the GPU to slow down."
    } else if slow.iter().any(|r| r.contains("thermal")) {
        "The GPU is too hot: its cooling (fans, airflow, heatsink, the room) cannot keep up."
    } else {
        "HW Slowdown alone means heat or the board's power delivery."
    };
    out.push(THROTTLED.finding(
        format!("{who} is slowed down now by {}", slow.join(", ")),
        format!(
            "These reasons lower the clocks well below what the GPU can do, so everything on it runs slower. {cause}"
        ),
        evidence,
        Some(
            "Check the cooling (fan speed, dust, airflow, the temperature under load with `nvidia-smi -q -d \
             TEMPERATURE,PERFORMANCE`) and the power delivery (the power supply's rating, one cable per power \
             connector, the chassis' power-management logs); then measure again with `gpu-doctor bench`."
                .to_owned(),
        ),
    ));
}

fn persistence(cx: &Ctx<'_>, gpus: &[Gpu], out: &mut Vec<Finding>) {
    if cx.s.platform.platform.os != OsFamily::Linux || cx.s.platform.wsl.is_some() {
        return;
    }
    // Headless: every GPU says whether it drives a display, and none does. Not for an eGPU: on a
    // laptop, persistence would keep the GPU awake on battery.
    let egpu = cx.s.links.value().is_some_and(|links| links.iter().any(|l| l.egpu.is_some()));
    let headless = !egpu && !gpus.is_empty() && gpus.iter().all(|g| g.display_attached == Some(false));
    let off: Vec<&Gpu> = gpus.iter().filter(|g| g.persistence_mode == Some(false)).collect();
    if !headless || off.is_empty() {
        return;
    }
    let list: Vec<String> = off.iter().map(|g| format!("GPU {}", g.index)).collect();
    out.push(PERSISTENCE_OFF.finding(
        format!("Persistence mode is off on {} of this headless machine", list.join(", ")),
        "Without persistence mode the driver shuts a GPU down when its last program exits and sets it up again for \
         the next one, which adds seconds to every start (more with many GPUs) and loses settings such as clocks \
         applied with nvidia-smi.",
        off.iter().map(|g| format!("GPU {}: persistence mode off, no display attached", g.index)).collect(),
        None,
    )
    .with_plan(fix::change(
        None,
        "NVIDIA's persistence daemon keeps the GPUs set up",
        vec![Change::Root {
            argv: ["systemctl", "enable", "--now", "nvidia-persistenced"].map(String::from).to_vec(),
        }],
    )));
}

/// One finding per Xid number, its events on every GPU in its evidence (at most 3 lines per GPU).
fn xids(cx: &Ctx<'_>, gpus: &[Gpu], events: &[XidEvent], out: &mut Vec<Finding>) {
    let mut numbers: Vec<u32> = events.iter().map(|e| e.xid).collect();
    numbers.sort_unstable();
    numbers.dedup();
    for xid in numbers {
        let of: Vec<&XidEvent> = events.iter().filter(|e| e.xid == xid).collect();
        let row = cx.kb.xid.get(xid);
        let mut where_: Vec<String> = Vec::new();
        let mut evidence = Vec::new();
        let mut buses: Vec<Option<&str>> = of.iter().map(|e| e.pci_bus_id.as_deref()).collect();
        buses.sort_unstable();
        buses.dedup();
        for bus in buses {
            let on: Vec<&&XidEvent> = of.iter().filter(|e| e.pci_bus_id.as_deref() == bus).collect();
            let gpu = bus.and_then(|b| gpus.iter().find(|g| g.has_bus_id(b)));
            let label = match (gpu, bus) {
                (Some(g), Some(b)) => {
                    format!("{} (GPU {}, {b})", g.name.as_deref().unwrap_or("GPU"), g.index)
                }
                (None, Some(b)) => format!("the GPU at {b}, which the driver does not list now"),
                (_, None) => "a GPU whose address the line does not give".to_owned(),
            };
            where_.push(format!("{label}: {} time(s)", on.len()));
            let shown = on.len().min(3);
            evidence.extend(on[on.len() - shown..].iter().map(|e| format!("kernel log: {}", e.line)));
        }
        evidence.insert(0, format!("Xid {xid} in the kernel log since boot: {}", where_.join("; ")));
        out.push(xid_finding(xid, row, evidence));
    }
}

fn xid_finding(xid: u32, row: Option<&XidRow>, evidence: Vec<String>) -> Finding {
    let Some(row) = row else {
        return XID_WARNING.finding(
            format!("The NVIDIA driver logged Xid {xid}, which gpu-doctor's table does not explain"),
            "Look the number up in NVIDIA's Xid catalog (https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html); \
             the lines around it in the kernel log usually name the engine or process involved.",
            evidence,
            None,
        );
    };
    let rule = match row.severity {
        XidSeverity::Error => XID_ERROR,
        XidSeverity::Warning => XID_WARNING,
        XidSeverity::Info => XID_INFO,
    };
    rule.finding(
        format!("The NVIDIA driver logged Xid {xid}: {}", row.name),
        format!(
            "{} (NVIDIA's catalog: {}, immediate action {}; {})",
            row.cause,
            row.mnemonic,
            row.nvidia_action,
            row.also.as_deref().map_or_else(|| row.source.clone(), |a| format!("{}, {a}", row.source))
        ),
        evidence,
        Some(row.fix.clone()),
    )
}
