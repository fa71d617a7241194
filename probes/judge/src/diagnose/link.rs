//! The GPU's PCIe link: below its maximum under load (a fault), below it while idle (power saving),
//! narrower than the card when the kernel enumerated it (fewer lanes wired), and the bandwidth cap of
//! a Thunderbolt/USB4 eGPU tunnel (normal).

use super::{Ctx, Rule};
use gpu_doctor_kb::pcie_gbytes_per_s;
use gpu_doctor_model::{BootLinkLimit, EgpuFacts, Gpu, LinkSeenBy};
use gpu_doctor_model::{Category, Finding, Origin, PlanTarget, Severity};

/// GPU utilization, percent, from which a sample counts as taken under load.
pub(super) const LOAD_PCT: u32 = 30;

const CHECK: &str = "gpu-doctor bench --tests h2d (or watch nvidia-smi -q -d PCIE while a job runs)";

pub(super) const DEGRADED: Rule = Rule {
    id: "link.degraded_under_load",
    category: Category::PcieLinkDegraded,
    severity: Severity::Warning,
    trigger: "The PCIe link runs below the GPU's maximum generation or width while the GPU is busy (utilization at \
              or above 30 %), when it should be at full speed. In pasted text without a link reading, a sentence \
              saying the link comes down (drops, downgrades, is stuck at a lower rate) while the GPU works (a game, \
              training, a benchmark, under load) and not while idle.",
    source: "NVML device queries (current vs max PCIe generation and width; current values drop only while idle), \
             reference §8.2",
};

pub(super) const IDLE: Rule = Rule {
    id: "link.below_max_idle",
    category: Category::PcieLinkDegraded,
    severity: Severity::Info,
    trigger: "The PCIe link runs below its maximum while the GPU is idle or its utilization is unknown: GPUs lower \
              the link to save power, so this is not a fault. Or the text says the link drops to a lower generation \
              while the GPU is idle (and comes back under load).",
    source: "nvidia-smi --help-query-gpu (pcie.link.gen.gpucurrent \"may be reduced when the GPU is not in use\"), \
             reference §8.2",
};

pub(super) const EGPU: Rule = Rule {
    id: "link.egpu_tunnel",
    category: Category::PcieLinkDegraded,
    severity: Severity::Info,
    trigger: "The GPU is an eGPU behind Thunderbolt/USB4, whose tunnel caps host↔device bandwidth well below a \
              desktop slot: normal for an eGPU. From pasted text also where the text says so in words (eGPU, a \
              Thunderbolt or USB4 dock or enclosure), with the way to cap the GPU's link speed should it drop off \
              the bus behind the dock.",
    source: "Reference §8.1 (TB3 ≈ 2.75 GB/s, TB4/USB4 ≈ 4 GB/s, TB5 ≈ 6–7.9 GB/s theoretical); \
             NVIDIA/open-gpu-kernel-modules src/nvidia/interface/nvrm_registry.h@595.45.04 (RMPcieLinkSpeed: \
             ALLOW_GEN2 1:0 … ALLOW_GEN6 9:8, 2 = disable; LOCK_AT_LOAD 31:31)",
};

pub(super) const NARROW: Rule = Rule {
    id: "link.narrow_slot",
    category: Category::PcieLinkDegraded,
    severity: Severity::Warning,
    trigger: "The kernel's line from when it enumerated the GPU says a link on its path has fewer lanes than the \
              card can use (x1 or x4 of x16): no driver has lowered the link then, so a slot, riser or adapter with \
              fewer lanes limits every host↔device copy. Or lspci's LnkSta shows the GPU's own link trained at one \
              lane, below its LnkCap (marked `Width x1 (downgraded)` where LnkCap was not pasted). Or, for the \
              text's one GPU, a sentence says its link has fewer lanes than the card (`running at x8 instead of \
              x16`, `8 PCIe lanes instead of 16 lanes`, a rig report's `x4 lanes negotiated (GPU max x16`): a GPU \
              lowers its link's speed when idle, not its lanes.",
    source: "Linux drivers/pci/pci.c __pcie_print_link_status (\"available PCIe bandwidth, limited by … (capable of \
             …)\": the slowest link on the path against the device's own LnkCap); only lanes count, since GPUs are \
             often found at 2.5 GT/s x16 (e.g. a GTX 950, linux-btrfs list 2021-03-12), reference §8.2; pciutils \
             ls-caps.c link_compare (\" (downgraded)\" when LnkSta is below LnkCap, on endpoints and upstream ports); \
             widths in words: dartraiden/NVIDIA-patcher#191, noonghunna/club-3090:scripts/report.sh (its PCIe line)",
};

pub(super) const LANES_M2: Rule = Rule {
    id: "link.slot_lanes_shared_with_m2",
    category: Category::PcieLinkDegraded,
    severity: Severity::Warning,
    trigger: "The GPU's link is narrower than the card (link.narrow_slot) at x8 or x4, and the text says M.2 (NVMe) \
              drives are installed: boards wire some M.2 sockets to the CPU lanes of the GPU's slot, which then runs \
              at x8 (or x4) while those sockets are used.",
    source: "ASUS ROG forum, Z790 Maximus Extreme (rog-forum.asus.com/t5/hardware-build-advice/\
             z790-maximus-extreme-nvme-and-gpu-pci-e-lanes/m-p/944193: a drive in M.2_1 drops the top x16 slot to x8, \
             also on the Z690-E, whatever the drive's generation); MSI MEG B550 UNIFY-X manual, \"PCIe bandwidth \
             configuration table for PCIe & M.2 slots\" (CPU mode: the x16 slot at x8 with the CPU's M.2 sockets \
             used); hardforum.com/threads/forcing-16x-card-to-4x-speed.2031820 (Z790: the PCIe 5 M.2 above the top \
             slot splits its 16 lanes x8/x8)",
};

pub(super) const AER_UNCORRECTED: Rule = Rule {
    id: "link.aer_uncorrectable",
    category: Category::PcieLinkDegraded,
    severity: Severity::Warning,
    trigger: "The kernel's PCIe Advanced Error Reporting counted uncorrectable errors (non-fatal or fatal) on a GPU: \
              transfers the link could not repair, which lose data, hang the GPU or drop it off the bus (Xid 79).",
    source: "Linux drivers/pci/pcie/aer.c (aer_print_error \"PCIe Bus Error: severity=…\", the error bits by name; \
             aer_dev_nonfatal/aer_dev_fatal in sysfs); Linux Documentation/PCI/pcieaer-howto.rst (uncorrectable \
             errors impact functionality; fatal ones make the link unreliable)",
};

pub(super) const AER_CORRECTED: Rule = Rule {
    id: "link.aer_correctable",
    category: Category::PcieLinkDegraded,
    severity: Severity::Info,
    trigger: "The kernel's PCIe Advanced Error Reporting counted correctable errors on a GPU (RxErr, BadTLP, \
              BadDLLP, Replay…): the link repaired each by retransmitting, which costs bandwidth; many of them point \
              at signal quality (a riser, a slot, a generation the path cannot hold). Or, where the kernel said \
              nothing, a GPU's PCIe replay counter above zero while another GPU of the machine counted none \
              (NVML's nvmlDeviceGetPcieReplayCounter, nvidia-smi dmon's `pci` errors column): the count adds up since \
              the driver loaded, so only the contrast with the same rig's other links says something.",
    source: "Linux drivers/pci/pcie/aer.c (aer_print_error \"PCIe Bus Error: severity=Corrected\"; aer_dev_correctable \
             in sysfs); Linux Documentation/PCI/pcieaer-howto.rst (correctable errors: no functional impact, \
             recovered by the hardware); nvidia-smi(1), dmon `-s e`: \"ECC errors and PCIe replay errors\"; NVML's \
             nvmlDeviceGetPcieReplayCounter",
};

pub(super) const RULES: &[Rule] = &[DEGRADED, IDLE, EGPU, NARROW, LANES_M2, AER_UNCORRECTED, AER_CORRECTED];

/// One GPU's link as the rules read it.
struct View<'a> {
    name: String,
    bus: String,
    now: (Option<u32>, Option<u32>),
    max: (Option<u32>, Option<u32>),
    from: &'a str,
    utilization: Option<u32>,
    egpu: Option<(&'a EgpuFacts, Option<f64>, &'a str)>,
    boot: Option<&'a BootLinkLimit>,
}

fn views<'a>(cx: &Ctx<'a>) -> Vec<View<'a>> {
    let gpus = cx.raw_gpus().unwrap_or_default();
    let name = |g: Option<&Gpu>, bus: &str| {
        match g.and_then(|g| g.name.clone()) {
            Some(n) => format!("{n} ({bus})"),
            // A pasted lspci block without its header line has no bus id.
            // A GPU the text names only by its index (`GPU 0`) is that.
            None if bus.starts_with("GPU ") => bus.to_owned(),
            None if gpu_doctor_model::PciBusId::sysfs_form(bus).is_none() => format!("The GPU {bus}"),
            None => format!("GPU at {bus}"),
        }
    };
    if let Some(links) = cx.s.links.value() {
        return links
            .iter()
            .map(|l| {
                let gpu = gpus.iter().find(|g| g.has_bus_id(&l.bus_id));
                View {
                    name: name(gpu, &l.bus_id),
                    bus: l.bus_id.clone(),
                    now: (l.gen_current, l.width_current),
                    max: (l.gen_max, l.width_max),
                    from: &l.values_from,
                    utilization: gpu.and_then(|g| g.utilization_gpu_pct),
                    egpu: l.egpu.as_ref().map(|e| (e, l.theoretical_gbytes_per_s, l.bandwidth_basis.as_str())),
                    boot: l.boot_limit.as_ref(),
                }
            })
            .collect();
    }
    gpus.iter()
        .map(|g| {
            let bus = g.pci_bus_id.clone().unwrap_or_else(|| format!("GPU {}", g.index));
            View {
                name: name(Some(g), &bus),
                bus,
                now: (g.pcie_gen_current, g.pcie_width_current),
                max: (g.pcie_gen_max, g.pcie_width_max),
                from: if matches!(cx.s.origin, Origin::Pasted { .. }) { "the pasted GPU list" } else { "the driver" },
                utilization: g.utilization_gpu_pct,
                egpu: None,
                boot: None,
            }
        })
        .collect()
}

fn below(now: Option<u32>, max: Option<u32>) -> bool {
    now.zip(max).is_some_and(|(n, m)| n < m)
}

fn text(gen_lanes: (Option<u32>, Option<u32>)) -> String {
    let part = |v: Option<u32>| v.map_or_else(|| "?".to_owned(), |v| v.to_string());
    format!("Gen{} x{}", part(gen_lanes.0), part(gen_lanes.1))
}

/// `≈ 31.5 GB/s` for a generation and width, when both are known.
fn rate(gen_lanes: (Option<u32>, Option<u32>)) -> Option<String> {
    let (g, w) = (gen_lanes.0?, gen_lanes.1?);
    pcie_gbytes_per_s(g, w).map(|v| format!("≈ {v:.1} GB/s"))
}

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    aer(cx, out);
    idle_in_words(cx, out);
    busy_in_words(cx, out);
    let views = views(cx);
    if let Some(said) = cx.s.stated_egpu.as_deref().filter(|_| views.iter().all(|v| v.egpu.is_none())) {
        out.push(egpu_in_words(said));
    }
    for v in views {
        if let Some((egpu, cap, basis)) = v.egpu {
            out.push(egpu_finding(cx, &v, egpu, cap, basis));
        }
        if let Some(b) = v.boot.filter(|b| b.narrower_than_card()) {
            out.push(narrow_finding(&v, b));
            if let Some(said) = cx.s.stated_m2_drives.as_deref().filter(|_| matches!(b.width, 4 | 8)) {
                out.push(lanes_m2_finding(&v, b, said));
            }
            continue;
        }
        if !below(v.now.0, v.max.0) && !below(v.now.1, v.max.1) {
            continue;
        }
        let mut evidence =
            vec![format!("{}: PCIe {} now, {} at most (from {})", v.bus, text(v.now), text(v.max), v.from)];
        evidence.push(
            v.utilization.map_or_else(
                || "GPU utilization not reported".to_owned(),
                |u| format!("GPU utilization {u} % when read"),
            ),
        );
        match v.utilization {
            Some(u) if u >= LOAD_PCT => {
                let speeds = match (rate(v.now), rate(v.max)) {
                    (Some(now), Some(max)) => format!(" Copies between host and GPU get {now} instead of {max}."),
                    _ => String::new(),
                };
                out.push(DEGRADED.finding(
                    format!("{} runs its PCIe link below its maximum while busy", v.name),
                    format!(
                        "At {u} % utilization the link should run at {}, but it runs at {}.{speeds} Fewer lanes \
                         usually mean a card not fully seated, a slot wired for fewer lanes or sharing them with M.2 \
                         drives; a lower generation, a riser cable or a BIOS slot setting.",
                        text(v.max),
                        text(v.now)
                    ),
                    evidence,
                    Some(format!(
                        "Reseat the card in a CPU-attached x16 slot (check the board manual for lanes shared with M.2 \
                         slots), set that slot to Auto or Gen{} in the BIOS, and try without a riser cable or with one \
                         rated for Gen{}; then measure again: {CHECK}",
                        v.max.0.map_or_else(|| "its highest".to_owned(), |g| g.to_string()),
                        v.max.0.map_or_else(|| "its generation".to_owned(), |g| g.to_string()),
                    )),
                ));
            }
            _ => out.push(IDLE.finding(
                format!("{} runs its PCIe link below its maximum while idle, to save power", v.name),
                format!(
                    "GPUs lower the link speed when they have no work and raise it again under load, so {} now says \
                     nothing about what the link can do. It is a problem only if it stays below {} while the GPU is \
                     busy; check with {CHECK}.",
                    text(v.now),
                    text(v.max)
                ),
                evidence,
                None,
            )),
        }
    }
}

/// The kernel found fewer lanes on the GPU's path than the card has, or lspci shows the GPU's own link
/// trained at one lane: what the slot, riser or adapter costs, and where the lanes went. Where the
/// text says only the host bridge's link, the card's own lanes are not known and the words say so.
fn narrow_finding(v: &View<'_>, b: &BootLinkLimit) -> Finding {
    let speed = |g: Option<u32>| g.map_or_else(String::new, |g| format!("Gen{g} "));
    let now = format!("{}x{}", speed(b.generation), b.width);
    let (card, can_move, wired_for) = match b.capable_width {
        Some(w) => (
            format!("the card's {}x{w}", speed(b.capable_generation)),
            b.capable_gbps.map_or_else(
                || format!("instead of what the card could move over x{w}"),
                |gbps| {
                    format!(
                        "instead of the {:.2} GB/s the card can move over {}x{w}",
                        gbps / 8.0,
                        speed(b.capable_generation)
                    )
                },
            ),
            format!("x{w}"),
        ),
        None => (
            "the card's (the text does not say its lanes; NVIDIA's cards have x16, x8 or x4)".to_owned(),
            "instead of what the card could move over its own lanes".to_owned(),
            "the card's lanes".to_owned(),
        ),
    };
    let port = if b.at == "<unknown>" { String::new() } else { format!(" at {}", b.at) };
    let rate = if b.available_gbps > 0.0 {
        format!("about {:.2} GB/s per direction {can_move}", b.available_gbps / 8.0)
    } else {
        can_move
    };
    let seen = match b.seen_by {
        LinkSeenBy::Kernel => format!(
            "When the kernel enumerated the GPU, the slowest link on its path{port} ran {now}: {rate}. No driver \
             has lowered the link then, so the lanes"
        ),
        LinkSeenBy::Lspci => format!(
            "lspci shows the GPU's own link trained at {now}: {rate}. A link trains at the lanes both ends have \
             wired and connected, so the lanes"
        ),
        LinkSeenBy::Words => format!(
            "The text says the GPU's link runs at {now}, {rate}. A GPU lowers its link's speed when idle, not its \
             lanes; a link trains at the lanes both ends have wired and connected, so the lanes"
        ),
    };
    NARROW.finding(
        format!("{} sits behind {} {now} link, narrower than {card}", v.name, if now.starts_with('x') { "an" } else { "a" }),
        format!(
            "{seen} are missing in the slot or what the card hangs on: a slot wired x1/x4 or sharing \
             lanes with M.2 drives, an x1 mining riser, an M.2 or mPCIe adapter, a Raspberry Pi or other board \
             with one lane, an eGPU enclosure (x4), or a card not fully seated. Work that keeps its data on the GPU \
             is barely slowed; loading data and models, and anything that copies to and from the GPU, is.",
        ),
        vec![b.line.clone()],
        Some(format!(
            "Move the card to a slot wired for {wired_for} (the board manual says which slots are CPU-attached and which \
             share lanes with M.2 drives), seat it fully, and drop x1 risers or adapters; where the narrow link is \
             the design (a Raspberry Pi, an eGPU enclosure, a mining board), keep data on the GPU. Then measure: \
             {CHECK}"
        )),
    )
}

/// The GPU's slot trained at x8 or x4 where the text says M.2 drives are installed: the lanes the board gives
/// those sockets.
fn lanes_m2_finding(v: &View<'_>, b: &BootLinkLimit, said: &str) -> Finding {
    LANES_M2.finding(
        format!("The slot of {} runs at x{}, probably sharing its lanes with the M.2 drives", v.name, b.width),
        "Many boards wire one or two M.2 sockets to the CPU lanes of the first x16 slot (Intel's Z690/Z790 boards \
         with a PCIe 5 M.2 socket, AMD boards in CPU mode): while a drive sits in such a socket the slot runs at x8 \
         (or x4), whatever the drive's generation. The board manual's lane-sharing table names the sockets."
            .to_owned(),
        if said == b.line { vec![b.line.clone()] } else { vec![b.line.clone(), format!("the text: {said}")] },
        Some(
            "Find in the board manual which M.2 sockets share lanes with the GPU's slot (M.2_1 on many Z790 boards) \
             and move that NVMe drive to a chipset-attached M.2 socket, or leave it empty; then check the link \
             under load (`nvidia-smi -q -d PCIE`: Link Width Current x16). At PCIe 4.0 or 5.0, x8 costs little \
             outside host-device copies."
                .to_owned(),
        ),
    )
}

fn egpu_finding(cx: &Ctx<'_>, v: &View<'_>, e: &EgpuFacts, cap: Option<f64>, basis: &str) -> Finding {
    let enclosure = e.device_name.as_deref().map_or_else(String::new, |n| format!(" ({n})"));
    let limit = cap.map_or_else(
        || "its bandwidth could not be worked out".to_owned(),
        |c| format!("host↔device copies are capped at about {c:.2} GB/s per direction"),
    );
    let typical = e
        .tb_generation
        .and_then(|g| cx.kb.links.link.iter().find(|l| l.key == format!("thunderbolt{g}")))
        .and_then(|l| {
            Some(format!(
                " Measured copies over {} are typically {:.1}–{:.1} GB/s.",
                l.name, l.typical_min_gbytes_per_s?, l.typical_max_gbytes_per_s?
            ))
        })
        .unwrap_or_default();
    let mut evidence = vec![format!("{} is behind {}{enclosure}", v.bus, e.via.label()), basis.to_owned()];
    evidence.extend(e.evidence.iter().cloned());
    let f = EGPU.finding(
        format!("{} is an eGPU: the {} tunnel limits host↔device bandwidth", v.name, e.via.label()),
        format!(
            "Over {}, {limit}, a fraction of a desktop x16 slot; that is how eGPUs work, not a fault.{typical} Work that \
             keeps its data on the GPU is barely slowed; work that copies to and from it constantly is.",
            e.via.label()
        ),
        evidence,
        None,
    );
    // An enclosure known to be unauthorized tunnels no PCIe until it is: a plan authorizes it.
    if e.authorized == Some(false) { f.with_plan(PlanTarget::Thunderbolt) } else { f }
}

/// `RMPcieLinkSpeed` holding the link at Gen 2 (or Gen 1) from the module's load: every higher generation's
/// ALLOW field set to 2 (disable), LOCK_AT_LOAD (bit 31) set (nvrm_registry.h).
const GEN2_ONLY: &str = "0x800002A8";
const GEN1_ONLY: &str = "0x800002AA";

/// An eGPU the text names in words: the tunnel's bandwidth is what it is; the link's speed can be capped where the
/// GPU drops off the bus behind the dock (Xid 79) or fails to start there.
fn egpu_in_words(said: &str) -> Finding {
    EGPU.finding(
        "The text says the GPU is behind Thunderbolt or USB4: an eGPU, whose tunnel limits host↔device bandwidth",
        "Thunderbolt 3 and 4 (USB4) tunnel PCIe at about 2.75–4 GB/s, Thunderbolt 5 at up to about 8 GB/s, a fraction \
         of a desktop x16 slot: that is how eGPUs work, not a fault. Behind some docks and hosts the GPU's link is \
         not stable at its full generation: the GPU falls off the bus (Xid 79) under load, or its firmware fails to \
         start, and holding the link at a lower generation keeps it up.",
        vec![format!("said in the text: {said}")],
        Some(format!(
            "Nothing to change for the bandwidth itself. If the GPU drops off the bus behind the dock (Xid 79, `GPU \
             has fallen off the bus`) or fails to start there, hold its PCIe link at Gen 2 from the driver's load: \
             `options nvidia NVreg_RegistryDwords=\"RMPcieLinkSpeed={GEN2_ONLY}\"` in /etc/modprobe.d/nvidia.conf \
             (Gen 1: {GEN1_ONLY}), rebuild the initramfs and reboot; `nvidia-smi -q -d PCIE` then shows the \
             generation held."
        )),
    )
}

/// Each GPU's AER counts: uncorrectable ones a warning, correctable ones a note.
fn aer(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(health) = cx.s.health.gpus.value() else { return };
    let counted = |m: Option<&std::collections::BTreeMap<String, u64>>| -> Vec<String> {
        m.map(|m| {
            m.iter().filter(|(k, v)| !k.starts_with("TOTAL_") && **v > 0).map(|(k, v)| format!("{k} ×{v}")).collect()
        })
        .unwrap_or_default()
    };
    for h in health {
        let Some(a) = h.aer.as_ref() else { continue };
        let gpu =
            h.pci_bus_id.as_deref().map_or_else(|| format!("GPU {}", h.index), |b| format!("GPU {} ({b})", h.index));
        let (nonfatal, fatal) = (counted(a.nonfatal.as_ref()), counted(a.fatal.as_ref()));
        let corrected = counted(a.correctable.as_ref());
        if !nonfatal.is_empty() || !fatal.is_empty() {
            let mut evidence = Vec::new();
            if !fatal.is_empty() {
                evidence.push(format!("{gpu}: fatal: {}", fatal.join(", ")));
            }
            if !nonfatal.is_empty() {
                evidence.push(format!("{gpu}: non-fatal: {}", nonfatal.join(", ")));
            }
            out.push(AER_UNCORRECTED.finding(
                format!("{gpu} had uncorrectable PCIe errors on its link"),
                "The kernel's PCIe Advanced Error Reporting logged errors on this GPU's link that the hardware could \
                 not repair by retransmitting: a transfer was lost or corrupted. They come before hangs, \
                 `GPU has fallen off the bus` (Xid 79) and machine resets; the usual causes are a riser or \
                 extension cable, a card not fully seated, a slot or generation the path cannot hold, or power.",
                evidence,
                Some(format!(
                    "Reseat the card and drop risers or extension cables; set the slot to one PCIe generation lower \
                     in the BIOS (e.g. Gen3 instead of Auto) and watch `sudo dmesg -w | grep -i aer` under load; \
                     then measure the link: {CHECK}"
                )),
            ));
        } else if !corrected.is_empty() {
            out.push(AER_CORRECTED.finding(
                format!("{gpu} had correctable PCIe errors on its link"),
                "The kernel's PCIe Advanced Error Reporting logged errors on this GPU's link that the link repaired \
                 by retransmitting. A few are harmless; a steady stream costs bandwidth and points at signal quality \
                 (a riser, a slot, a generation the path cannot hold).",
                vec![format!("{gpu}: corrected: {}", corrected.join(", "))],
                Some(format!(
                    "If they keep coming under load (`sudo dmesg -w | grep -i aer`), reseat the card, drop risers, or \
                     set the slot one PCIe generation lower in the BIOS; then measure: {CHECK}"
                )),
            ));
        }
    }
    replays(health, out);
}

/// GPUs whose PCIe replay counter (NVML's, nvidia-smi's `Replays Since Reset`, dmon's `pci` errors) is above zero
/// beside GPUs of the same machine that counted none, where the kernel's AER said nothing of them: the link
/// retransmitted packets after errors that its siblings' links did not have ([`AER_CORRECTED`]). A count alone says
/// little: it adds up since the driver loaded, and a healthy H200 (tests/fixtures/h200-container-cu130) counted 2;
/// NVIDIA's DCGM judges the rate, not the count. Named per GPU, the busiest first, the clean ones beside them.
fn replays(health: &[gpu_doctor_model::GpuHealth], out: &mut Vec<Finding>) {
    let mut counted: Vec<(u32, u64)> =
        health.iter().filter_map(|h| h.pcie_replay_count.filter(|c| *c > 0).map(|c| (h.index, c))).collect();
    let clean: Vec<String> =
        health.iter().filter(|h| h.pcie_replay_count == Some(0)).map(|h| h.index.to_string()).collect();
    if counted.is_empty()
        || clean.is_empty()
        || out.iter().any(|f| f.id == AER_CORRECTED.id || f.id == AER_UNCORRECTED.id)
    {
        return;
    }
    counted.sort_by_key(|c| std::cmp::Reverse(c.1));
    let gpus: Vec<String> = counted.iter().map(|(i, _)| format!("GPU {i}")).collect();
    let mut evidence: Vec<String> = counted.iter().map(|(i, c)| format!("GPU {i}: {c} PCIe replays")).collect();
    evidence.push(format!("no replays on GPU {}", clean.join(", ")));
    out.push(AER_CORRECTED.finding(
        format!("{} retransmitted PCIe packets after link errors", gpus.join(", ")),
        "The GPU's PCIe replay counter counts packets its link had to send again after an error. The link repairs \
         each, at the cost of bandwidth; a count that keeps rising points at signal quality: a riser (USB risers \
         above all), a slot, a card not fully seated, a generation the path cannot hold.",
        evidence,
        Some(format!(
            "Watch whether it rises under load (`nvidia-smi dmon -s e`, its `pci` column, or `nvidia-smi -q -d PCIE`, \
             `Replays Since Reset`); if it does, reseat the card, swap its riser or cable, or set the slot one PCIe \
             generation lower in the BIOS; then measure: {CHECK}"
        )),
    ));
}

/// The text says the link comes down while the GPU works ([`DEGRADED`]), where no link reading of a GPU shows it below
/// its maximum (those are judged by their utilization): a GPU lowers its link to save power only when idle, so a link
/// that drops under load is held down by the slot, a riser, the BIOS or the platform's power management (ASPM).
fn busy_in_words(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(line) = cx.s.stated_busy_downshift.as_deref() else { return };
    if views(cx).iter().any(|v| below(v.now.0, v.max.0) || below(v.now.1, v.max.1)) {
        return;
    }
    out.push(DEGRADED.finding(
        "The text says the GPU's PCIe link comes down while the GPU is busy",
        "GPUs lower their link's speed only when they have no work, and raise it within milliseconds of load; a link \
         that drops while a game, training or a benchmark runs is held down: by the platform's PCIe power management \
         (ASPM) on laptops and some boards, by a BIOS slot setting, a riser cable or a slot that cannot keep the speed. \
         Every host-to-GPU copy then runs at the lower rate.",
        vec![format!("the text says: {line}")],
        Some(format!(
            "Check the link while the GPU is busy: `nvidia-smi -q -d PCIE` (Link Info, current against max) or \
             `sudo lspci -vv -s <bus id> | grep -E 'LnkCap|LnkSta'`. If it drops only after a while, turn PCIe ASPM \
             off for the GPU's link (the BIOS's ASPM setting, or the kernel parameter `pcie_aspm=off`; on Linux \
             `echo on | sudo tee /sys/bus/pci/devices/<bus id>/power/control`); if it stays low, set the slot to Auto \
             or its generation in the BIOS, reseat the card in a CPU-attached x16 slot and try without a riser. Then \
             measure again: {CHECK}"
        )),
    ));
}

/// The text says the link drops to a lower generation while the GPU is idle ([`IDLE`]): what GPUs do to save power.
/// Not again where a GPU's own link reading gave the idle finding.
fn idle_in_words(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(line) = cx.s.stated_idle_downshift.as_deref() else { return };
    if out.iter().any(|f| f.id == IDLE.id) || views(cx).iter().any(|v| below(v.now.0, v.max.0)) {
        return;
    }
    out.push(IDLE.finding(
        "The PCIe link drops to a lower generation while the GPU is idle: power management, not a fault",
        format!(
            "GPUs lower their link's generation when they have no work, to save power, and raise it again within \
             milliseconds of load; nvidia-smi's own help says the current generation \"may be reduced when the GPU is \
             not in use\". It is a problem only if the link stays low while the GPU is busy; check with {CHECK}."
        ),
        vec![format!("the text says: {line}")],
        Some(
            "Nothing to repair. To see the link at full speed, read it under load (`nvidia-smi -q -d PCIE` while a job \
             runs, or `nvidia-smi --query-gpu=pcie.link.gen.gpucurrent,pcie.link.gen.max --format=csv -l 1`); \
             there is no supported setting that keeps an idle GPU's link at full speed."
                .to_owned(),
        ),
    ));
}
