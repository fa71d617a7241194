//! GPU health: memory errors and pending repairs, Xid events, compute mode, power cap, throttling,
//! persistence mode.

use super::builder::Machine;
use gpu_doctor_model::Probed;
use gpu_doctor_model::Severity;
use gpu_doctor_model::{EccCounters, EgpuFacts, GpuHealth, Health, TunnelKind};

const BUS: &str = "0000:07:00.0";

/// A Linux machine with one A10 at `BUS` whose health is `h`, and no Xid events.
fn a10(h: impl FnOnce(&mut GpuHealth)) -> Machine {
    let mut m = Machine::linux().gpu("NVIDIA A10", "8.6").gpu_with(|g| {
        g.pci_bus_id = Some(BUS.into());
        g.power_limit_mw = Some(150_000);
    });
    let mut health = GpuHealth { index: 0, pci_bus_id: Some(BUS.into()), ..GpuHealth::default() };
    h(&mut health);
    m.0.health = Health { gpus: Probed::found(vec![health], "nvml"), xid_events: Probed::found(vec![], "dmesg") };
    m
}

/// `m` with the Xid events the kernel-log reader (the one the health probe uses) finds in `lines`.
fn with_xids(mut m: Machine, lines: &[&str]) -> Machine {
    let lines: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    let events = gpu_doctor_probes::parse::paste::xid_events(&lines, gpu_doctor_kb::Kb::get().unwrap());
    assert_eq!(events.len(), lines.len(), "every line is an Xid line");
    m.0.health.xid_events = Probed::found(events, "dmesg");
    m
}

fn errors(f: impl FnOnce(&mut EccCounters)) -> impl FnOnce(&mut GpuHealth) {
    |h| f(&mut h.memory_errors)
}

#[test]
fn a_healthy_gpu_makes_no_finding() {
    let m = a10(|h| {
        h.memory_errors = EccCounters {
            corrected_volatile: Some(0),
            uncorrected_volatile: Some(0),
            remapped_rows_pending: Some(false),
            remapped_rows_failure: Some(false),
            ..EccCounters::default()
        };
        h.clock_event_reasons = Some(vec!["gpu_idle".into()]);
        h.power_limit_default_mw = Some(150_000);
    });
    assert_eq!(m.ids(), Vec::<String>::new());
}

#[test]
fn memory_errors_and_repairs_each_have_their_rule() {
    let cases: Vec<(&str, Machine, &[&str])> = vec![
        ("uncorrectable now", a10(errors(|e| e.uncorrected_volatile = Some(2))), &["health.ecc_uncorrectable"]),
        ("corrected only", a10(errors(|e| e.corrected_aggregate = Some(177))), &["health.ecc_corrected"]),
        (
            "uncorrectable wins over corrected",
            a10(errors(|e| (e.corrected_volatile, e.uncorrected_volatile) = (Some(5), Some(1)))),
            &["health.ecc_uncorrectable"],
        ),
        ("old uncorrectable errors only", a10(errors(|e| e.uncorrected_aggregate = Some(3))), &[]),
        ("remap pending", a10(errors(|e| e.remapped_rows_pending = Some(true))), &["health.memory_repair_pending"]),
        (
            "page retirement pending",
            a10(errors(|e| e.retired_pages_pending = Some(true))),
            &["health.memory_repair_pending"],
        ),
        (
            "remap failed",
            a10(errors(|e| (e.remapped_rows_failure, e.remapped_rows_pending) = (Some(true), Some(true)))),
            &["health.memory_repair_pending", "health.row_remap_failed"],
        ),
    ];
    for (name, m, want) in cases {
        assert_eq!(m.ids(), want.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(), "{name}");
    }
    let m = a10(errors(|e| e.remapped_rows_pending = Some(true)));
    let f = m.finding("health.memory_repair_pending");
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(m.changes("health.memory_repair_pending")[1], smi(&["-r"]));
    assert!(f.evidence[0].contains("remap pending: yes"), "{:?}", f.evidence);
}

#[test]
fn each_xid_is_explained_from_the_table_with_its_severity() {
    let m = with_xids(
        a10(|_| {}),
        &[
            "[1.0] NVRM: Xid (PCI:0000:07:00): 13, pid=1, Graphics Exception",
            "[2.0] NVRM: Xid (PCI:0000:07:00): 13, pid=1, Graphics Exception",
            "[3.0] NVRM: Xid (PCI:0000:91:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
            "[4.0] NVRM: Xid (PCI:0000:07:00): 63, pid=1896, Row Remapper: New row marked for remapping",
            "[5.0] NVRM: Xid (PCI:0000:07:00): 999, something new",
        ],
    );
    let fell = m.finding("health.xid_error");
    assert_eq!(fell.summary, "The NVIDIA driver logged Xid 79: GPU has fallen off the bus");
    assert!(
        fell.evidence[0].contains("the GPU at 0000:91:00.0, which the driver does not list now: 1 time(s)"),
        "{:?}",
        fell.evidence
    );
    assert!(fell.detail.contains("riser") && fell.fix.as_deref().unwrap().contains("nvidia-smi -lgc"), "{fell:?}");
    let all = m.findings();
    let warnings: Vec<&str> = all.iter().filter(|f| f.id == "health.xid_warning").map(|f| f.summary.as_str()).collect();
    assert_eq!(
        warnings,
        [
            "The NVIDIA driver logged Xid 13: Graphics Engine Exception",
            "The NVIDIA driver logged Xid 999, which gpu-doctor's table does not explain"
        ]
    );
    let thirteen = all.iter().find(|f| f.summary.contains("Xid 13")).unwrap();
    assert!(thirteen.evidence[0].contains("NVIDIA A10 (GPU 0, 0000:07:00.0): 2 time(s)"), "{:?}", thirteen.evidence);
    assert_eq!(
        m.finding("health.xid_info").summary,
        "The NVIDIA driver logged Xid 63: ECC page retirement or row remapping recording event"
    );
}

#[test]
fn an_unreadable_kernel_log_makes_no_xid_finding() {
    let mut m = a10(|_| {});
    m.0.health.xid_events = Probed::absent("the kernel log could not be read: dmesg: not permitted");
    assert!(m.ids().iter().all(|id| !id.starts_with("health.xid")));
}

#[test]
fn compute_modes() {
    let mode = |mode: &str| Machine::linux().gpu("NVIDIA A10", "8.6").gpu_with(|g| g.compute_mode = Some(mode.into()));
    assert_eq!(mode("Default").ids(), Vec::<String>::new());
    for exclusive in ["Exclusive_Process", "ExclusiveProcess", "Exclusive_Thread"] {
        assert_eq!(mode(exclusive).ids(), ["health.compute_mode_exclusive"], "{exclusive}");
    }
    assert_eq!(mode("Prohibited").ids(), ["health.compute_mode_prohibited"]);
    assert_eq!(mode("Exclusive_Process").changes("health.compute_mode_exclusive")[1], smi(&["-c", "DEFAULT"]));
    assert_eq!(mode("Prohibited").changes("health.compute_mode_prohibited")[1], smi(&["-c", "DEFAULT"]));
}

/// The rules errors.toml names in `explained_by` explain their lines: a pasted "busy or unavailable"
/// beside an exclusive compute mode is the compute-mode finding's evidence, not a finding of its own.
#[test]
fn a_busy_device_line_beside_an_exclusive_compute_mode_is_that_findings_evidence() {
    let mut m =
        Machine::linux().gpu("NVIDIA A10", "8.6").gpu_with(|g| g.compute_mode = Some("Exclusive_Process".into()));
    m.0.messages.push(gpu_doctor_model::ObservedMessage {
        id: "cuda.devices_unavailable".into(),
        line: "CUDA error: all CUDA-capable devices are busy or unavailable".into(),
        values: Default::default(),
    });
    assert_eq!(m.ids(), ["health.compute_mode_exclusive"]);
    let f = m.finding("health.compute_mode_exclusive");
    assert!(f.evidence.iter().any(|e| e.contains("busy or unavailable")), "{:?}", f.evidence);
}

/// CUDA's 216 exists only for a GPU in the Exclusive_Thread compute mode: where the modes are not shown, the
/// line says it (tensorflow/tensorflow#526), with the Default mode as the fix; a shown mode keeps its own finding.
#[test]
fn cudas_216_says_exclusive_thread_where_the_mode_is_not_shown() {
    let line = |m: &mut Machine| {
        m.0.messages.push(gpu_doctor_model::ObservedMessage {
            id: "cuda.device_already_in_use".into(),
            line: "Check failed: CUDA_SUCCESS == dynload::cuCtxSetCurrent(context) (0 vs. 216)".into(),
            values: Default::default(),
        });
    };
    let mut pasted = Machine::pasted();
    line(&mut pasted);
    assert_eq!(pasted.ids(), ["health.compute_mode_exclusive"]);
    let f = pasted.finding("health.compute_mode_exclusive");
    assert!(f.summary.contains("Exclusive_Thread") && f.explains == ["observed.cuda.device_already_in_use"], "{f:#?}");
    assert!(
        pasted
            .changes("health.compute_mode_exclusive")
            .iter()
            .any(|c| matches!(c, gpu_doctor_model::Change::Root { argv } if argv == &["nvidia-smi", "-c", "DEFAULT"]))
    );
    let mut shown =
        Machine::linux().gpu("NVIDIA A10", "8.6").gpu_with(|g| g.compute_mode = Some("Exclusive_Thread".into()));
    line(&mut shown);
    assert_eq!(shown.ids(), ["health.compute_mode_exclusive"]);
    assert!(shown.finding("health.compute_mode_exclusive").summary.contains("NVIDIA A10"));
    // Without the line, nothing is said of a mode not shown.
    assert!(Machine::pasted().ids().is_empty());
}

/// Every rule a row of errors.toml names in `explained_by` exists.
#[test]
fn every_explaining_rule_named_in_the_catalogue_exists() {
    let rules: Vec<&str> = crate::diagnose::rules().map(|r| r.id).collect();
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let named: Vec<(&str, &str)> = kb
        .errors
        .message
        .iter()
        .flat_map(|k| k.explained_by.iter().map(move |r| (k.id.as_str(), r.as_str())))
        .collect();
    assert!(named.len() >= 4, "{named:?}");
    for (row, rule) in named {
        assert!(rules.contains(&rule), "{row} names {rule}, which is no rule");
    }
}

#[test]
fn a_power_cap_below_the_default_warns_past_one_percent() {
    let capped = |default: u32| a10(move |h| h.power_limit_default_mw = Some(default));
    assert_eq!(capped(150_000).ids(), Vec::<String>::new(), "at the default");
    assert_eq!(capped(151_500).ids(), Vec::<String>::new(), "1 % below is rounding");
    assert_eq!(capped(151_600).ids(), ["health.power_cap_below_default"]);
    let f = a10(|h| {
        h.power_limit_default_mw = Some(300_000);
        (h.power_limit_min_mw, h.power_limit_max_mw) = (Some(100_000), Some(300_000));
    })
    .finding("health.power_cap_below_default");
    assert_eq!(f.summary, "NVIDIA A10 (GPU 0, 0000:07:00.0) is capped at 150 W of its default 300 W");
    assert!(f.evidence[0].ends_with("settable from 100 W to 300 W"), "{:?}", f.evidence);
    assert!(f.plan.is_some());
    let m = a10(|h| h.power_limit_default_mw = Some(300_000));
    assert_eq!(m.changes("health.power_cap_below_default"), [smi(&["-pl", "300"])]);
}

#[test]
fn only_heat_and_power_slowdowns_are_throttling() {
    let reasons = |r: &[&str]| {
        let r: Vec<String> = r.iter().map(|s| (*s).to_owned()).collect();
        a10(move |h| h.clock_event_reasons = Some(r))
    };
    for calm in [&["gpu_idle"][..], &["sw_power_cap"], &["applications_clocks_setting", "sync_boost"], &[]] {
        assert_eq!(reasons(calm).ids(), Vec::<String>::new(), "{calm:?}");
    }
    for hot in [&["hw_slowdown", "hw_power_brake_slowdown"][..], &["hw_thermal_slowdown"], &["sw_thermal_slowdown"]] {
        assert_eq!(reasons(hot).ids(), ["health.throttled_now"], "{hot:?}");
    }
    let f = reasons(&["hw_slowdown", "hw_power_brake_slowdown"]).finding("health.throttled_now");
    assert!(f.detail.contains("power brake"), "{}", f.detail);
}

#[test]
fn persistence_off_is_information_on_a_headless_linux_machine_only() {
    let rig = |display: Option<bool>, persistence: Option<bool>| {
        Machine::linux().gpu("NVIDIA A10", "8.6").gpu_with(move |g| {
            g.display_attached = display;
            g.persistence_mode = persistence;
        })
    };
    assert_eq!(rig(Some(false), Some(false)).ids(), ["health.persistence_off"]);
    assert_eq!(rig(Some(true), Some(false)).ids(), Vec::<String>::new(), "a desktop");
    assert_eq!(rig(None, Some(false)).ids(), Vec::<String>::new(), "display unknown");
    assert_eq!(rig(Some(false), Some(true)).ids(), Vec::<String>::new());
    let windows = Machine::windows().gpu("NVIDIA A10", "8.6").gpu_with(|g| {
        g.display_attached = Some(false);
        g.persistence_mode = Some(false);
    });
    assert_eq!(windows.ids(), Vec::<String>::new());
    assert_eq!(rig(Some(false), Some(false)).finding("health.persistence_off").severity, Severity::Info);
    let egpu =
        rig(Some(false), Some(false)).gpu_with(|g| g.pci_bus_id = Some(BUS.into())).link(BUS, (3, 4), (3, 4), |l| {
            l.egpu = Some(EgpuFacts {
                via: TunnelKind::Thunderbolt,
                tb_generation: Some(3),
                device_name: None,
                vendor_name: None,
                authorized: Some(true),
                link_gbps: Some(40.0),
                router: None,
                evidence: vec![],
            });
        });
    assert!(!egpu.ids().contains(&"health.persistence_off".to_owned()), "an eGPU laptop: {:?}", egpu.ids());
}

#[test]
fn health_unknown_in_an_old_report_makes_no_finding() {
    let mut m = a10(errors(|e| e.uncorrected_volatile = Some(9)));
    m.0.health = Health::default();
    assert_eq!(m.ids(), Vec::<String>::new());
}

/// `nvidia-smi -i 0 ARGS…` as a plan's root step.
fn smi(args: &[&str]) -> gpu_doctor_model::Change {
    let mut argv = vec!["nvidia-smi".to_owned(), "-i".to_owned(), "0".to_owned()];
    argv.extend(args.iter().map(|a| (*a).to_owned()));
    gpu_doctor_model::Change::Root { argv }
}

/// The three Xid rules' triggers (and so docs/diagnosis.md's rule table) list exactly the Xids that
/// xid.toml gives their severity: a row added or regraded there must be named here too.
#[test]
fn the_xid_rules_name_the_xids_of_their_severity_in_the_table() {
    use crate::diagnose::health::{XID_ERROR, XID_INFO, XID_WARNING};
    use gpu_doctor_kb::XidSeverity;
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    for (rule, severity, word) in [
        (XID_ERROR, XidSeverity::Error, "error"),
        (XID_WARNING, XidSeverity::Warning, "warning"),
        (XID_INFO, XidSeverity::Info, "info"),
    ] {
        let marker = format!("`severity = {word}`: ");
        let listed =
            rule.trigger.split_once(marker.as_str()).map(|(_, rest)| rest).unwrap_or_else(|| panic!("{}", rule.id));
        let listed: Vec<u32> = listed
            .split(')')
            .next()
            .unwrap()
            .split(',')
            .map(|n| n.split_whitespace().collect::<String>().parse().unwrap())
            .collect();
        let table: Vec<u32> = kb.xid.xid.iter().filter(|r| r.severity == severity).map(|r| r.xid).collect();
        assert_eq!(listed, table, "{}", rule.id);
    }
}

/// PyTorch's out-of-memory message of 2.1 and later, with the processes NVML lists (`others` before
/// `this process`), as reportProcessMemoryInfo and malloc build it.
fn oom(requested: &str, free: &str, processes: &str) -> String {
    format!(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {requested}. GPU 0 has a total capacity of \
         15.56 GiB of which {free} is free. {processes}Of the allocated memory 9.46 GiB is allocated by PyTorch, and \
         1.51 GiB is reserved by PyTorch but unallocated.\n"
    )
}

const HELD: &str = "health.gpu_memory_held_by_other_process";

/// PyTorch's message before 2.1 (the totals in parentheses, LISTatSNU/FastMRI_challenge#238's line): 7.81 GiB of a
/// 7.92 GiB GPU neither free nor PyTorch's is held outside the process; where PyTorch holds most of it itself, or
/// what is outside is a context's few hundred MiB, nothing is said.
#[test]
fn memory_held_outside_pytorch_is_read_from_the_totals_before_2_1() {
    let line = |free: &str, reserved: &str| {
        format!(
            "RuntimeError: CUDA out of memory. Tried to allocate 216.00 MiB (GPU 0; 7.92 GiB total capacity; 69.17 MiB \
             already allocated; {free} free; {reserved} reserved in total by PyTorch)\n"
        )
    };
    let found = super::pasted_findings(&line("24.56 MiB", "86.00 MiB"));
    let f = found.iter().find(|f| f.id == HELD).expect("the finding");
    assert!(f.summary.contains("About 7.81 GiB of GPU 0"), "{}", f.summary);
    assert!(f.fix.as_deref().is_some_and(|x| x.contains("kill <PID>") && x.contains("--query-compute-apps")), "{f:?}");
    for (free, reserved) in [("24.56 MiB", "7.40 GiB"), ("6.90 GiB", "500.00 MiB")] {
        let ids = super::pasted_ids(&line(free, reserved));
        assert!(!ids.contains(&HELD.to_owned()), "{free} {reserved}: {ids:?}");
    }
}

#[test]
fn memory_another_process_holds_is_named_when_it_would_have_covered_the_request() {
    let text = oom(
        "1.98 GiB",
        "1.37 GiB",
        "Process 6680 has 1.81 GiB memory in use. Including non-PyTorch memory, this process has 11.21 GiB memory in \
         use. ",
    );
    let found = super::pasted_findings(&text);
    let f = found.iter().find(|f| f.id == HELD).expect("the finding");
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.summary.contains("process 6680 (1.81 GiB)"), "{}", f.summary);
    let fix = f.fix.as_deref().unwrap();
    assert!(fix.contains("kill 6680") && fix.contains("ps -o pid,user,stat,etime,args -p 6680"), "{fix}");
    assert!(f.explains.contains(&"observed.cuda.out_of_memory".to_owned()), "{:?}", f.explains);
    assert!(found.iter().all(|f| !f.id.starts_with("observed.")), "one finding: {found:?}");
    // The others after `this process`, in NVML's order, count the same; two others add up.
    let after = oom(
        "1.16 GiB",
        "471.69 MiB",
        "Including non-PyTorch memory, this process has 14.63 GiB memory in use. Process 19 has 300.00 MiB memory in \
         use. Process 20 has 500.00 MiB memory in use. ",
    );
    let f = super::pasted_findings(&after).into_iter().find(|f| f.id == HELD).expect("the finding");
    assert!(f.fix.as_deref().unwrap().contains("kill 19 20"), "{:?}", f.fix);
}

#[test]
fn memory_held_by_others_is_not_blamed_where_it_could_not_have_covered_the_request_or_self_is_unknown() {
    // 251 MiB free and 458 MiB held by another: 876 MiB would not have fitted without it either.
    let small = oom(
        "876.00 MiB",
        "251.06 MiB",
        "Process 2612630 has 458.00 MiB memory in use. Including non-PyTorch memory, this process has 22.98 GiB \
         memory in use. ",
    );
    let ids = super::pasted_ids(&small);
    assert!(!ids.contains(&HELD.to_owned()), "{ids:?}");
    assert!(ids.contains(&"observed.cuda.out_of_memory".to_owned()), "{ids:?}");
    // In a container PyTorch's PID is not NVML's: the process reads as `Process N` and may be itself.
    let container = oom("1.95 GiB", "1.66 GiB", "Process 414660 has 13.09 GiB memory in use. ");
    assert!(!super::pasted_ids(&container).contains(&HELD.to_owned()));
    // Only this process: the workload's own memory.
    let alone =
        oom("3.13 GiB", "279.12 MiB", "Including non-PyTorch memory, this process has 7.46 GiB memory in use. ");
    assert_eq!(super::pasted_ids(&alone), ["observed.cuda.out_of_memory"]);
}

#[test]
fn a_stopped_process_on_a_gpu_is_named_with_the_way_to_end_it() {
    let text = "\
|    0   N/A  N/A      1395      C   python                          25081MiB |
";
    // The process box alone says nothing is wrong.
    let boxed = format!(
        "| Processes:                                                                  |\n\
         |  GPU   GI   CI        PID   Type   Process name                  GPU Memory |\n\
         |=============================================================================|\n{text}"
    );
    assert!(super::pasted_ids(&boxed).is_empty());
    let ps = "thomased  1395  1.7 14.4 89506440 28604880 pts/2 Tl May25 147:37 python train.py\n";
    let found = super::pasted_findings(&format!("{boxed}{ps}"));
    let f = found.iter().find(|f| f.id == HELD).expect("the finding");
    assert!(f.summary.contains("process 1395 (25081 MiB on GPU 0)"), "{}", f.summary);
    let fix = f.fix.as_deref().unwrap();
    assert!(fix.contains("kill 1395 then kill -CONT 1395"), "{fix}");
}

/// On Windows the processes are looked at and stopped with PowerShell's cmdlets, not ps and kill.
#[test]
fn memory_held_on_windows_names_powershells_process_cmdlets() {
    let text = format!(
        "C:\\Users\\me>python train.py\n{}",
        oom(
            "1.98 GiB",
            "1.37 GiB",
            "Process 6680 has 1.81 GiB memory in use. Including non-PyTorch memory, this process has 11.21 GiB memory \
             in use. ",
        )
    );
    let found = super::pasted_findings(&text);
    let f = found.iter().find(|f| f.id == HELD).expect("the finding");
    let fix = f.fix.as_deref().unwrap();
    assert!(
        fix.contains("Get-Process -Id 6680") && fix.contains("Stop-Process -Id 6680") && !fix.contains("kill"),
        "{fix}"
    );
}
