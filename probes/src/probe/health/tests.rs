use super::*;
use crate::host::{CommandRecord, Fixture, NvmlAnswer, NvmlDevice, ReplayHost};
use crate::parse::smi_xml::tests::SAMPLE;
use gpu_doctor_model::{AerCounters, EccCounters, Platform};

/// Real `NVRM` lines of a GPU that fell off the bus (leptonai/gpud,
/// components/accelerator/nvidia/sxid/README.md at 4a8de33a3f02e207f39e9023d67125592d599731).
const FELL_OFF: &str = "\
[6781741.548768] NVRM: GPU at PCI:0000:91:00: GPU-b6c3b2be-c55b-d076-fa0e-d464e4c7e08b
[6781741.548776] NVRM: GPU Board Serial Number: 1653723052734
[6781741.548779] NVRM: Xid (PCI:0000:91:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
[6781741.548783] NVRM: GPU 0000:91:00.0: GPU has fallen off the bus.
";

fn linux() -> Fixture {
    let mut f = Fixture::new(Platform { os: OsFamily::Linux, arch: "x86_64".into() });
    f.env.insert("PATH".into(), "/usr/bin".into());
    f
}

fn ran(argv: &[&str], status: i32, stdout: &str, stderr: &str) -> CommandRecord {
    CommandRecord {
        argv: argv.iter().map(|a| (*a).to_owned()).collect(),
        output: Some(CmdOutput { status: Some(status), stdout: stdout.into(), stderr: stderr.into() }),
        error: None,
    }
}

fn with_program(mut f: Fixture, path: &str, record: CommandRecord) -> Fixture {
    f.files.insert(path.into(), String::new());
    f.commands.push(record);
    f
}

fn a10() -> Gpu {
    Gpu { index: 0, name: Some("NVIDIA A10".into()), pci_bus_id: Some("0000:07:00.0".into()), ..Gpu::default() }
}

fn probe_on(f: Fixture, gpus: &Probed<Vec<Gpu>>) -> (Health, Trace) {
    let (reading, trace) = read_on(f, gpus);
    (reading.health, trace)
}

fn read_on(f: Fixture, gpus: &Probed<Vec<Gpu>>) -> (Reading, Trace) {
    let host = ReplayHost::new(f);
    let mut trace = Trace::new("health");
    // As the collection reads them: the GPUs' health, then the kernel log, joined.
    let health = gpu_health(&host, &host.nvml(), &SmiXml::default(), gpus, &mut trace);
    let reading = Reading::new(health, KernelLog::read(&host), &mut trace);
    (reading, trace)
}

#[test]
fn nvml_health_is_kept_per_gpu_with_the_sysfs_bus_id() {
    let pending = EccCounters { remapped_rows_pending: Some(true), ..EccCounters::default() };
    let device = NvmlDevice {
        gpu: Gpu { pci_bus_id: Some("00000000:07:00.0".into()), ..a10() },
        health: Some(GpuHealth { memory_errors: pending, fan_speed_pct: Some(0), ..GpuHealth::default() }),
        ..NvmlDevice::default()
    };
    let mut f = linux();
    f.nvml = NvmlAnswer::Report(NvmlReport { devices: vec![device], ..NvmlReport::default() });
    let (health, _) = probe_on(f, &Probed::found(vec![a10()], "nvml"));
    let Probed::Found { value, source } = health.gpus else { panic!("{:?}", health.gpus) };
    assert_eq!(source, "nvml");
    assert_eq!(value.len(), 1);
    assert_eq!((value[0].index, value[0].pci_bus_id.as_deref()), (0, Some("0000:07:00.0")));
    assert_eq!(value[0].memory_errors.remapped_rows_pending, Some(true));
    assert_eq!(
        health.xid_events,
        Probed::absent("the kernel log could not be read: dmesg: not installed; journalctl: not installed")
    );
}

/// `aer_dev_*` as the kernel prints them (`aer_stats_dev_attr`, torvalds/linux:drivers/pci/pcie/aer.c):
/// each error bit's name and count, then the total.
const AER_CORRECTABLE: &str =
    "RxErr 0\nBadTLP 2\nBadDLLP 0\nRollover 0\nTimeout 0\nNonFatalErr 0\nCorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR 2\n";
const AER_FATAL: &str = "Undefined 0\nDLP 0\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 0\nCmpltAbrt 0\nUnxCmplt 0\nRxOF 0\n\
    MalfTLP 0\nECRC 0\nUnsupReq 0\nACSViol 0\nUncorrIntErr 0\nBlockedTLP 0\nAtomicOpBlocked 0\nTLPBlockedErr 0\n\
    PoisonTLPBlocked 0\nTOTAL_ERR_FATAL 0\n";

fn nvml_a10(replays: Option<u64>) -> NvmlAnswer {
    let device = NvmlDevice {
        gpu: Gpu { pci_bus_id: Some("00000000:07:00.0".into()), ..a10() },
        health: Some(GpuHealth { pcie_replay_count: replays, ..GpuHealth::default() }),
        ..NvmlDevice::default()
    };
    NvmlAnswer::Report(NvmlReport { devices: vec![device], ..NvmlReport::default() })
}

#[test]
fn aer_counters_are_read_from_the_gpus_sysfs_device_beside_nvmls_replays() {
    let mut f = linux();
    f.nvml = nvml_a10(Some(7));
    f.files.insert("/sys/bus/pci/devices/0000:07:00.0/aer_dev_correctable".into(), AER_CORRECTABLE.into());
    f.files.insert("/sys/bus/pci/devices/0000:07:00.0/aer_dev_fatal".into(), AER_FATAL.into());
    f.file_errors.insert("/sys/bus/pci/devices/0000:07:00.0/aer_dev_nonfatal".into(), "Permission denied".into());
    let (health, trace) = probe_on(f, &Probed::found(vec![a10()], "nvml"));
    let gpus = health.gpus.value().unwrap();
    assert_eq!(gpus[0].pcie_replay_count, Some(7));
    let aer = gpus[0].aer.clone().unwrap();
    assert_eq!(aer.correctable.as_ref().map(AerCounters::total), Some(2));
    assert_eq!(aer.fatal.as_ref().map(AerCounters::total), Some(0));
    assert_eq!(aer.nonfatal, None, "refused: not read");
    assert!(format!("{trace:?}").contains("aer_dev_nonfatal"), "the refusal is in the trace");
}

#[test]
fn a_gpu_without_aer_files_has_no_aer_counters() {
    let mut f = linux();
    f.nvml = nvml_a10(None);
    let (health, _) = probe_on(f, &Probed::found(vec![a10()], "nvml"));
    assert_eq!(health.gpus.value().unwrap()[0].aer, None, "so every recording made before keeps its snapshot");
}

#[test]
fn an_nvml_recording_without_health_says_so_and_runs_nothing() {
    let mut f = with_program(linux(), "/usr/bin/nvidia-smi", ran(&["/usr/bin/nvidia-smi", "-q", "-x"], 0, SAMPLE, ""));
    let device = NvmlDevice { gpu: a10(), ..NvmlDevice::default() };
    f.nvml = NvmlAnswer::Report(NvmlReport { devices: vec![device], ..NvmlReport::default() });
    let (health, trace) = probe_on(f, &Probed::found(vec![a10()], "nvml"));
    assert_eq!(
        health.gpus,
        Probed::absent("NVML's answer holds no health readings: it was recorded by an older gpu-doctor")
    );
    assert!(!format!("{trace:?}").contains("nvidia-smi"), "{trace:?}");
}

#[test]
fn without_nvml_health_comes_from_nvidia_smi_xml() {
    let f = with_program(linux(), "/usr/bin/nvidia-smi", ran(&["/usr/bin/nvidia-smi", "-q", "-x"], 0, SAMPLE, ""));
    let gpu = Gpu { index: 0, pci_bus_id: Some("0000:81:00.0".into()), ..Gpu::default() };
    let (health, _) = probe_on(f, &Probed::found(vec![gpu], "nvidia-smi -q -x"));
    let Probed::Found { value, source } = health.gpus else { panic!("{:?}", health.gpus) };
    assert_eq!(source, "nvidia-smi -q -x");
    assert_eq!(
        (value[0].pci_bus_id.as_deref(), value[0].memory_errors.ecc_enabled),
        (Some("0000:81:00.0"), Some(true))
    );
}

#[test]
fn no_gpu_means_no_health_and_windows_has_no_kernel_log() {
    let (health, _) = probe_on(linux(), &Probed::absent("no NVIDIA GPU on the PCI bus"));
    assert_eq!(health.gpus, Probed::absent("no GPU to read: no NVIDIA GPU on the PCI bus"));
    let windows = Fixture::new(Platform { os: OsFamily::Windows, arch: "x86_64".into() });
    let (health, _) = probe_on(windows, &Probed::absent("none"));
    assert!(matches!(health.xid_events, Probed::Unsupported { .. }), "{:?}", health.xid_events);
}

#[test]
fn dmesg_xid_lines_become_events() {
    let f = with_program(linux(), "/usr/bin/dmesg", ran(&["/usr/bin/dmesg"], 0, FELL_OFF, ""));
    let (health, trace) = probe_on(f, &Probed::absent("none"));
    let Probed::Found { value, source } = health.xid_events else { panic!("{:?}", health.xid_events) };
    assert_eq!(source, "dmesg");
    assert_eq!(value.len(), 1, "only the Xid line is an event");
    assert_eq!((value[0].xid, value[0].pci_bus_id.as_deref()), (79, Some("0000:91:00.0")));
    assert!(value[0].line.ends_with("GPU has fallen off the bus."), "{}", value[0].line);
    assert!(format!("{trace:?}").contains("1 Xid line(s)"), "{trace:?}");
}

#[test]
fn dmesg_bandwidth_lines_are_read_for_the_link_probe() {
    // The kernel's lines for a GTX 950 and a USB controller (the link probe keeps the GPUs').
    let log = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/kernel_bandwidth_p35_gtx950.txt"));
    let f = with_program(linux(), "/usr/bin/dmesg", ran(&["/usr/bin/dmesg"], 0, log, ""));
    let (reading, trace) = read_on(f, &Probed::absent("none"));
    let got: Vec<(&str, u32, Option<u32>)> =
        reading.boot_limits.iter().map(|(bus, l)| (bus.as_str(), l.width, l.capable_width)).collect();
    assert_eq!(got, [("0000:01:00.0", 16, Some(16)), ("0000:02:00.0", 1, Some(1))]);
    assert!(format!("{trace:?}").contains("2 PCIe bandwidth line(s)"), "{trace:?}");
    let (reading, _) = read_on(linux(), &Probed::absent("none"));
    assert!(reading.boot_limits.is_empty(), "no kernel log, no lines");
}

#[test]
fn xid_lines_of_older_drivers_without_pci_are_events_too() {
    // https://pastebin.com/gn6mYmM4 (2012) and https://pastebin.com/zhK16889: older drivers print
    // the bus id without `PCI:`, and older still without the PCI domain.
    let old = "May 6 00:38:27 alex kernel: [ 4909.922970] NVRM: Xid (0000:01:00): 13, 0005 00000000 0000502d 00000104 00000000 00000100
Jan 13 22:02:13 Theasker64 kernel: NVRM: Xid (0009:00): 53, CMDre 00000000 00000080 00000000 00000005 00000005
";
    let f = with_program(linux(), "/usr/bin/dmesg", ran(&["/usr/bin/dmesg"], 0, old, ""));
    let (health, _) = probe_on(f, &Probed::absent("none"));
    let Probed::Found { value, .. } = health.xid_events else { panic!("{:?}", health.xid_events) };
    let got: Vec<(u32, Option<&str>)> = value.iter().map(|e| (e.xid, e.pci_bus_id.as_deref())).collect();
    // The domain-less `0009:00` is no bus id gpu-doctor can read: the event names no GPU rather
    // than a wrong one.
    assert_eq!(got, [(13, Some("0000:01:00.0")), (53, None)]);
}

#[test]
fn a_refused_dmesg_falls_back_to_journalctl() {
    let f = with_program(
        linux(),
        "/usr/bin/dmesg",
        ran(&["/usr/bin/dmesg"], 1, "", "dmesg: read kernel buffer failed: Operation not permitted\n"),
    );
    let journal = format!("Nov 24 03:00:00 host kernel: {}", FELL_OFF.lines().nth(2).unwrap_or_default());
    let f = with_program(
        f,
        "/usr/bin/journalctl",
        ran(&["/usr/bin/journalctl", "-k", "-b", "--no-pager"], 0, &journal, ""),
    );
    let (health, _) = probe_on(f, &Probed::absent("none"));
    let Probed::Found { value, source } = health.xid_events else { panic!("{:?}", health.xid_events) };
    assert_eq!((source.as_str(), value.len()), ("journalctl -k -b --no-pager", 1));
}

#[test]
fn not_permitted_is_a_normal_answer_with_the_reason() {
    let mut f = with_program(
        linux(),
        "/usr/bin/dmesg",
        ran(&["/usr/bin/dmesg"], 1, "", "dmesg: read kernel buffer failed: Operation not permitted\n"),
    );
    // journalctl as a user outside `adm`/`systemd-journal`: exit 0, no kernel lines, a hint.
    let hint = "Hint: You are currently not seeing messages from other users and the system.\n";
    f = with_program(
        f,
        "/usr/bin/journalctl",
        ran(&["/usr/bin/journalctl", "-k", "-b", "--no-pager"], 0, "-- No entries --\n", hint),
    );
    f.files.insert("/proc/sys/kernel/dmesg_restrict".into(), "1\n".into());
    let (health, _) = probe_on(f, &Probed::absent("none"));
    let Probed::Absent { reason } = health.xid_events else { panic!("{:?}", health.xid_events) };
    assert!(
        reason.contains("dmesg: not permitted (dmesg: read kernel buffer failed: Operation not permitted)"),
        "{reason}"
    );
    assert!(reason.contains("journalctl: not permitted (Hint: You are currently not seeing messages"), "{reason}");
    assert!(
        reason.ends_with("kernel.dmesg_restrict is 1, so only root (or CAP_SYSLOG) may read the kernel log"),
        "{reason}"
    );
}

#[test]
fn a_flood_of_xid_lines_keeps_the_latest() {
    let line = |i: usize| {
        format!("[{i}.0] NVRM: Xid (PCI:0000:38:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception {i}")
    };
    let log: String = (0..MAX_XID_EVENTS + 50).map(|i| line(i) + "\n").collect();
    let f = with_program(linux(), "/usr/bin/dmesg", ran(&["/usr/bin/dmesg"], 0, &log, ""));
    let (health, _) = probe_on(f, &Probed::absent("none"));
    let events = health.xid_events.value().unwrap();
    assert_eq!(events.len(), MAX_XID_EVENTS);
    assert_eq!(events.last().map(|e| e.line.clone()), Some(line(MAX_XID_EVENTS + 49)));
}
