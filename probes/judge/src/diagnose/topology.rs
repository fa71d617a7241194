//! Several GPUs in one machine: peer-to-peer blocked where the path should carry it, a GeForce board
//! whose driver offers no peer-to-peer, GPUs of different models, a CUDA index that names another GPU
//! than nvidia-smi's, GPUs on different CPU sockets, MIG mode, NVLinks down or counting errors; an IOMMU that
//! translates the GPUs' DMA joins the peer-to-peer finding.

use super::context::GpuView;
use super::{Ctx, Rule, fix};
use gpu_doctor_model::{Category, Finding, Severity, is_display_class};
use gpu_doctor_model::{GpuPair, IommuMode, LinkKind, MultiGpuSymptom, P2pStatus, TopoGpu, Topology};

pub(super) const P2P_BLOCKED: Rule = Rule {
    id: "topology.peer_access_blocked",
    category: Category::PcieLinkDegraded,
    severity: Severity::Warning,
    trigger: "Two GPUs on one PCIe switch (PIX/PXB) or NVLink report peer-to-peer reads or writes as not supported \
              for a reason other than the GPU itself (chipset, topology, regkey): usually PCIe ACS or the IOMMU \
              redirecting peer traffic through the CPU, so NCCL and frameworks copy through host memory. Or, on a \
              machine with two or more GPUs (listed, or said in words: the machine has them, or a run uses them, \
              `--nproc_per_node=2`) whose driver does not refuse P2P (GNS), lspci shows PCI bridges with \
              ACS P2P redirect on (`ACSCtl: … ReqRedir+` or `CmpltRedir+`); the bare lines of `lspci -vvv | grep \
              ACSCtl` (NCCL's own check) count the same where the text lists no GPU. Or p2pBandwidthLatencyTest measures \
              a peer copy between GPUs CUDA reports peer access for at less than half the copy staged through the host. \
              Or, on such a machine whose GPUs are not all joined by NVLink, the kernel command line or log shows \
              the IOMMU translating the devices' DMA (`intel_iommu=on` without `iommu=pt`, `iommu: Default domain \
              type: Translated`, `DMAR: IOMMU enabled`, AMD-Vi, a DMA remapping fault); remapping faults from two or \
              more devices not known to be other than GPUs count as such a machine. Or NCCL_P2P_DISABLE is set \
              (NCCL's workaround for peer traffic that hangs) on such a machine. Or an NCCL test over several \
              such GPUs of one machine listed them and printed its table header (or, hanging while it set up, \
              NCCL's own lines), then no result, where the text says it stalled, hung or deadlocked. Or, on such a \
              machine (its GPUs listed or counted in words, or put in the work by the line itself: `multiple \
              GPUs`, `from one GPU to another`, a peer-to-peer test), the text says work over several GPUs hangs \
              (`MirroredStrategy is stuck`, `DDP training freezes`), gives wrong data after a transfer (`the copied \
              tensor would be … zeroed out`, NaN only with multiple GPUs, simpleP2P's `Verification error`), fails a \
              peer-to-peer test, or moves data between them slowly (peer-to-peer said to be slow, a bandwidth said \
              to be low; slow training alone is not); slow peer traffic between GeForce boards that offer no P2P is \
              `topology.peer_access_not_offered_by_gpu`, and a hang the text ties to NVLink is `topology.nvlink_down`.",
    source: "NVML nvmlDeviceGetP2PStatus / nvidia-smi topo -p2p; NCCL troubleshooting guide, \"PCI Access Control \
             Services (ACS)\" (https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html: \
             `lspci -vvv | grep ACSCtl`, and P2P that hangs or is slow even where topo -p2p says OK; IO \
             virtualization, VT-d or IOMMU, redirecting peer traffic to the root complex); PCIe ACS \
             P2P Request/Completion Redirect as pciutils ls-ecaps.c cap_acs prints them; the guide's GPU-to-GPU check, \
             CUDA samples p2pBandwidthLatencyTest (\"should run to completion and report good performance\"); CUDA C \
             Programming Guide, \"IOMMU on Linux\" (https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#iommu-on-linux: \
             no IOMMU-enabled bare-metal PCIe peer-to-peer); Linux v6.8 drivers/iommu/iommu.c iommu_subsys_init \
             (`Default domain type:`), drivers/iommu/Kconfig (translated lazy domain by default on x86), \
             Documentation/admin-guide/kernel-parameters.txt (iommu=pt, iommu.passthrough, intel_iommu, amd_iommu)",
};

pub(super) const P2P_GPU: Rule = Rule {
    id: "topology.peer_access_not_offered_by_gpu",
    category: Category::PcieLinkDegraded,
    severity: Severity::Info,
    trigger: "The driver reports peer-to-peer between two GPUs as \"GPU not supported\" (GNS): GeForce boards since \
              the RTX 40 series have no P2P in NVIDIA's driver, so multi-GPU traffic goes through host memory; no \
              setting changes that. Or CUDA answered 217 (`peer access is not supported between these two devices`) \
              (or DistServe's words for it) where the GPUs are GeForce boards or not listed: the program's peer-to-peer \
              path must be turned off. Or \
              CUDA's peer access answer as a program printed it (TensorFlow's device interconnect matrix, simpleP2P's \
              `No`, p2pBandwidthLatencyTest's `CANNOT Access Peer`, NCCL's `Could not enable P2P`, nvbandwidth's \
              waived device-to-device test) is no for a pair, where every GPU is a GeForce \
              board of the Turing generation or later: no P2P over PCIe (RTX 20 and 30 only through an NVLink bridge). \
              Or Accelerate's refusal to start on several GeForce RTX 40 boards with NCCL's P2P and IB left on.",
    source: "NVML nvmlGpuP2PStatus_t (NVML_P2P_STATUS_GPU_NOT_SUPPORTED); NVIDIA developer forum, RTX 4090 P2P \
             (https://forums.developer.nvidia.com/t/standard-nvidia-cuda-tests-fail-with-dual-rtx-4090-linux-box/233202); \
             tensorflow/tensorflow#24677 (a 2080 Ti has no P2P without an NVLink bridge) and efeslab/Nanoflow#22 (nor \
             a 3090); tensorflow/tensorflow:tensorflow/core/common_runtime/gpu/gpu_device.cc (the interconnect matrix)",
};

pub(super) const MIXED: Rule = Rule {
    id: "topology.mixed_models",
    category: Category::Other,
    severity: Severity::Info,
    trigger: "The machine has GPUs of more than one model: data-parallel training (DDP, DataParallel) across them \
              runs at the pace of the slowest and is limited by the smallest memory.",
    source: "PyTorch DistributedDataParallel (every rank runs the same model in lockstep; \
             https://pytorch.org/docs/stable/notes/ddp.html)",
};

pub(super) const ORDER: Rule = Rule {
    id: "topology.cuda_index_differs",
    category: Category::EnvVarMisconfig,
    severity: Severity::Warning,
    trigger: "CUDA_DEVICE_ORDER is not PCI_BUS_ID and CUDA's default fastest-first order makes some CUDA device \
              index name another GPU than the same nvidia-smi index (GPUs of different speeds): `cuda:0` and \
              `CUDA_VISIBLE_DEVICES=0` are not nvidia-smi's GPU 0. In pasted text without both orders, also a \
              sentence saying a program's GPU numbers and nvidia-smi's (nvtop's, gpustat's) disagree, or a program's \
              own numbered GPU list (T-Rex's `GPU #0:`, llama.cpp's `Device 0:`) with the same models in another \
              order than lspci's or `nvidia-smi -L`'s, where CUDA_DEVICE_ORDER is not PCI_BUS_ID. Or a pasted GPU list \
              in PCI order (nvidia-smi's, collect_env's) with no CUDA order beside it, every GPU's capability known by \
              its name, and a slower GPU before a faster: the order expected as on a live machine.",
    source: "CUDA Programming Guide, environment variables (CUDA_DEVICE_ORDER: FASTEST_FIRST default, PCI_BUS_ID; \
             CUDA_VISIBLE_DEVICES) (https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars)",
};

pub(super) const SOCKETS: Rule = Rule {
    id: "topology.gpus_across_sockets",
    category: Category::Other,
    severity: Severity::Info,
    trigger: "The GPUs hang off more than one NUMA node (CPU socket), or two GPUs meet only across the inter-socket \
              link (SYS): a process on the far socket reaches its GPU through that link.",
    source: "nvidia-smi topo -m legend (SYS, NUMA Affinity); NVML nvmlDeviceGetNumaNodeId / nvmlDeviceGetCpuAffinity; \
             Linux sysfs numa_node and local_cpulist",
};

pub(super) const MIG_EMPTY: Rule = Rule {
    id: "topology.mig_without_instances",
    category: Category::NoDriverOrGpuNotVisible,
    severity: Severity::Warning,
    trigger: "A GPU is in MIG mode but has no MIG device (GPU instance with a compute instance): CUDA sees no device \
              on it at all.",
    source: "NVIDIA MIG User Guide (https://docs.nvidia.com/datacenter/tesla/mig-user-guide/)",
};

pub(super) const MIG_ON: Rule = Rule {
    id: "topology.mig_enabled",
    category: Category::Other,
    severity: Severity::Info,
    trigger: "A GPU is in MIG mode with MIG devices: CUDA sees each MIG device as its own GPU, a process uses one, \
              and CUDA_VISIBLE_DEVICES names them by their MIG- UUIDs.",
    source: "NVIDIA MIG User Guide (https://docs.nvidia.com/datacenter/tesla/mig-user-guide/); CUDA Programming Guide, \
             CUDA_VISIBLE_DEVICES",
};

pub(super) const NVLINK_DOWN: Rule = Rule {
    id: "topology.nvlink_down",
    category: Category::PcieLinkDegraded,
    severity: Severity::Warning,
    trigger: "A GPU has links reported down and fewer NVLinks up than another GPU of the same model in the machine \
              (NVML's link state, or a pasted `nvidia-smi nvlink -s` with `<inactive>` links): a link or its cabling, bridge or NVSwitch port \
              has failed, so traffic to its peers runs on fewer links or through PCIe. GPUs are compared with their \
              own kind, not with the most links the product has: some boards wire only some links by design. Where \
              the text lists no other GPU of its model, an SXM board (its name says SXM) with some links up and some \
              inactive: every NVLink of an SXM board goes to the baseboard's GPUs or NVSwitches. Or the text says a \
              run over several GPUs hangs at NVLink (NCCL querying or using the links): a half-connected bridge.",
    source: "NVML nvmlDeviceGetNvLinkState; nvidia-smi nvlink --status; Azure/azhpc-diagnostics#73 (one V100 of eight \
             with links 3 and 5 inactive) and #78 (its check); NVIDIA/nccl#557 (maintainer: NVLinks detected but not \
             all, a connector only partly making contact, the driver long in initialising them); Azure/azurehpc-health-checks#162 (H100 PCIe boards with \
             6 of 18 links inactive by design on every GPU); NVIDIA DGX-1 with Tesla V100 System Architecture \
             white paper (each V100 SXM2's six NVLinks wired in the hybrid cube-mesh)",
};

pub(super) const NVLINK_ERRORS: Rule = Rule {
    id: "topology.nvlink_errors",
    category: Category::PcieLinkDegraded,
    severity: Severity::Warning,
    trigger: "A GPU's NVLink error counters (a pasted `nvidia-smi nvlink -e`) show replay or recovery errors on a \
              link: the link resent data after errors or had to be retrained, which NVIDIA's DCGM health check \
              fails a GPU for at a single new one. CRC errors alone are not judged: DCGM counts them only at a \
              rate (100 a second), which one reading of the counters cannot give.",
    source: "NVIDIA DCGM modules/health/DcgmHealthWatch.cpp (MonitorNVLink: replay and recovery errors are failures \
             at a delta of DCGM_LIMIT_MAX_NVLINK_ERROR = 1, DCGM_FR_NVLINK_ERROR_CRITICAL; CRC errors fail at \
             DCGM_LIMIT_MAX_NVLINK_CRC_ERROR, 100 per second) and DcgmGpuHardwareLimits.h, NVIDIA/DCGM at ffde4e5; NVML \
             nvmlDeviceGetNvLinkErrorCounter (NVML_NVLINK_ERROR_DL_REPLAY, _DL_RECOVERY, _DL_CRC_FLIT); nvidia-smi \
             nvlink --help (-e/--errorcounters, -re/--reseterrorcounters)",
};

pub(super) const RULES: &[Rule] =
    &[P2P_BLOCKED, P2P_GPU, MIXED, ORDER, SOCKETS, MIG_EMPTY, MIG_ON, NVLINK_DOWN, NVLINK_ERRORS];

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(t) = cx.s.topology.value() else {
        // Without a GPU list, a variable, a count said in words and CUDA's answer are all there is to judge.
        p2p_turned_off(cx, &Topology::default(), out);
        trouble_in_words(cx, &Topology::default(), out);
        peer_access_refused(cx, out);
        peer_access_denied(cx, &Topology::default(), out);
        order_in_words(cx, out);
        return;
    };
    p2p(t, out);
    peer_access_refused(cx, out);
    peer_access_denied(cx, t, out);
    measured(t, out);
    acs(cx, t, out);
    iommu(cx, t, out);
    p2p_turned_off(cx, t, out);
    stalled_collective(t, out);
    trouble_in_words(cx, t, out);
    mixed(t, out);
    order(t, out);
    order_in_words(cx, out);
    sockets(t, out);
    mig(t, out);
    nvlink_down(t, out);
    nvlink_errors(t, out);
}

/// Links whose counters show replay or recovery errors.
fn nvlink_errors(t: &Topology, out: &mut Vec<Finding>) {
    let mut evidence = Vec::new();
    for g in &t.gpus {
        for l in &g.nvlink_errors {
            let (replay, recovery) = (l.replay.unwrap_or(0), l.recovery.unwrap_or(0));
            if replay == 0 && recovery == 0 {
                continue;
            }
            let crc = l.crc.map_or_else(String::new, |c| format!(", {c} CRC"));
            evidence.push(format!(
                "{} link {}: {replay} replay, {recovery} recovery error(s){crc}",
                gpu_name(t, g.index),
                l.link
            ));
        }
    }
    if evidence.is_empty() {
        return;
    }
    let links = evidence.len();
    if links > 16 {
        evidence.truncate(16);
        evidence.push(format!("… and {} more link(s)", links - 16));
    }
    out.push(
        NVLINK_ERRORS.finding(
            format!("{links} NVLink(s) report replay or recovery errors"),
            "A replay is a flit the link sent again after the receiver found it corrupt; a recovery is the link \
         retrained after errors, stalling the traffic on it. A healthy link counts neither: NVIDIA's DCGM health \
         check fails a GPU at a single new one. A link that keeps counting them slows NCCL and peer copies over \
         it and can end in an uncorrectable NVLink error (Xid 74) that kills the job. The counters run since the \
         driver was loaded, so an old burst counts too: what matters is whether they still grow.",
            evidence,
            Some(
                "Zero the counters (`sudo nvidia-smi nvlink -re`) and read `nvidia-smi nvlink -e` again after a load \
             (an NCCL all-reduce test, or `dcgmi diag -r 2`): a replay or recovery count that comes back marks a \
             failing link. Then reseat the NVLink bridge (PCIe boards) \
             or have the vendor check the baseboard and NVSwitch (SXM systems); `dcgmi health -s n` with \
             `dcgmi health -c` watches the links from then on."
                    .to_owned(),
            ),
        ),
    );
}

/// GPUs with fewer NVLinks up than the most any GPU of their model has here.
fn nvlink_down(t: &Topology, out: &mut Vec<Finding>) {
    let up = |g: &TopoGpu| g.nvlinks.iter().filter(|l| l.active).count();
    let mut evidence = Vec::new();
    for g in t.gpus.iter().filter(|g| !g.nvlinks.is_empty()) {
        let Some(name) = g.name.as_deref() else { continue };
        let most = t
            .gpus
            .iter()
            .filter(|o| o.name.as_deref() == Some(name) && !o.nvlinks.is_empty())
            .map(up)
            .max()
            .unwrap_or(0);
        let siblings = t.gpus.iter().filter(|o| o.name.as_deref() == Some(name) && !o.nvlinks.is_empty()).count();
        let down: Vec<String> = g.nvlinks.iter().filter(|l| !l.active).map(|l| l.link.to_string()).collect();
        // A link reported down, not one a cut paste left out, against a sibling with more up; or, the only GPU of
        // its model the text lists, an SXM board: its links all go to the baseboard's other GPUs or NVSwitches,
        // so some up and some inactive is a lost link (PCIe boards wire only some).
        let against = if up(g) < most {
            format!(", while another {name} has {most} up")
        } else if siblings == 1 && up(g) > 0 && name.to_ascii_uppercase().contains("SXM") {
            "; an SXM board's NVLinks are all wired to its baseboard".to_owned()
        } else {
            continue;
        };
        if !down.is_empty() {
            evidence.push(format!(
                "{}: {} of {} NVLinks up (down: link {}){against}",
                gpu_name(t, g.index),
                up(g),
                g.nvlinks.len(),
                down.join(", ")
            ));
        }
    }
    if evidence.is_empty() {
        return;
    }
    out.push(
        NVLINK_DOWN.finding(
            format!("{} GPU(s) have NVLinks down that should be up", evidence.len()),
            "GPUs of one model in one machine are wired alike, and an SXM board wires every link, so a GPU with fewer \
         NVLinks up than its siblings, or an SXM board with links inactive, has lost links: a failed link, a loose \
         bridge or cable, or an NVSwitch port. NCCL and peer copies to its peers then \
         run on the remaining links or fall back to PCIe, and all-reduce slows for every GPU in the job.",
            evidence,
            Some(
                "Check again after a reboot (`nvidia-smi nvlink -s` lists each link; `nvidia-smi nvlink -e` its error \
             counters). If the links stay down, reseat the NVLink bridge (PCIe boards) or have the vendor check the \
             baseboard and NVSwitch (SXM systems); the field diagnostic (`dcgmi diag -r 3`) tests the NVLinks."
                    .to_owned(),
            ),
        ),
    );
}

/// `GPU 1 (NVIDIA H100 80GB HBM3)`.
fn gpu_name(t: &Topology, index: u32) -> String {
    match t.gpu(index).and_then(|g| g.name.as_deref()) {
        Some(name) => format!("GPU {index} ({name})"),
        None => format!("GPU {index}"),
    }
}

fn pair_line(t: &Topology, p: &GpuPair) -> String {
    let status = |s: Option<P2pStatus>| s.map_or("not reported", P2pStatus::words);
    format!(
        "{} ↔ {}: {} ({}); P2P read {}, write {}",
        gpu_name(t, p.a),
        gpu_name(t, p.b),
        p.link.label(),
        p.link.meaning(),
        status(p.p2p_read),
        status(p.p2p_write)
    )
}

fn p2p(t: &Topology, out: &mut Vec<Finding>) {
    let blocked: Vec<&GpuPair> = t
        .pairs
        .iter()
        .filter(|p| p.link.is_close())
        .filter(|p| p.p2p_blocked().is_some_and(|s| s != P2pStatus::GpuNotSupported && s != P2pStatus::Unknown))
        .collect();
    if !blocked.is_empty() {
        out.push(P2P_BLOCKED.finding(
            format!("Peer-to-peer is blocked between {} GPU pair(s) that share a PCIe switch or NVLink", blocked.len()),
            "These GPUs sit close together, but the driver reports peer-to-peer as unavailable, and not because of \
             the GPUs themselves. On a PCIe switch that is usually Access Control Services (ACS) or the IOMMU sending \
             every peer transfer up to the CPU's root complex; NCCL then falls back to copies through host memory, \
             and with ACS left on, peer transfers can also hang or fail.",
            blocked.iter().map(|p| pair_line(t, p)).collect(),
            Some(
                "Check ACS on the PCIe switch ports (`sudo lspci -vvv | grep ACSCtl`: `SrcValid+` means it is on) and \
                 turn it off in the BIOS, or at every boot with setpci as the NCCL troubleshooting guide shows; on \
                 bare metal put the IOMMU in passthrough (`iommu=pt` on the kernel command line) or off. Then check \
                 again with `nvidia-smi topo -p2p r`."
                    .to_owned(),
            ),
        ));
    }
    let gns: Vec<&GpuPair> = t.pairs.iter().filter(|p| p.p2p_blocked() == Some(P2pStatus::GpuNotSupported)).collect();
    if !gns.is_empty() {
        out.push(P2P_GPU.finding(
            format!("The driver offers no peer-to-peer between these GPUs ({} pair(s))", gns.len()),
            "The driver reports peer-to-peer as not supported by the GPU itself: GeForce boards since the RTX 40 \
             series have none in NVIDIA's driver. Multi-GPU work still runs: NCCL and the frameworks copy through \
             host memory, which costs bandwidth and latency between the GPUs (tensor-parallel inference and \
             all-reduce feel it most). No setting or driver option of NVIDIA's turns it on.",
            gns.iter().map(|p| pair_line(t, p)).collect(),
            None,
        ));
    }
}

/// A GeForce board by its name: `GeForce` in it, or a GeForce series name as people write it without the brand
/// (`RTX 4090`, `GTX 1080 Ti`: the series letters then a model number), not a professional `RTX A6000`.
fn is_geforce(name: &str) -> bool {
    let mut words = name.split_whitespace();
    let series = matches!(words.next(), Some("RTX" | "GTX"));
    name.contains("GeForce") || (series && words.next().is_some_and(|w| w.bytes().all(|b| b.is_ascii_digit())))
}

/// A GeForce board of the Turing generation or later (compute capability 7.5 and up), which offers no peer
/// access over PCIe: RTX 20 and 30 series boards only through an NVLink bridge, the RTX 40 series and later not
/// at all (NVIDIA/nccl#1309's maintainer; tensorflow/tensorflow#24677, from NVIDIA's forum: a 2080 Ti "does not
/// support p2p access without NVLink bridge"; efeslab/Nanoflow#22's maintainer: the 3090 "does not support peer
/// access", which "only workstation cards … or V100, A100, H100 have").
fn geforce_without_pcie_p2p(g: &GpuView) -> bool {
    is_geforce(&g.name) && g.cc.is_some_and(|cc| (cc.major, cc.minor) >= (7, 5))
}

/// What NVIDIA's driver offers GeForce boards (see [`geforce_without_pcie_p2p`]).
const GEFORCE_NO_P2P: &str = "GeForce boards since the RTX 20 series offer no peer-to-peer over PCIe in NVIDIA's \
    driver: the RTX 20 and 30 series only through an NVLink bridge, the RTX 40 series and later not at all.";

/// The GPU models of the machine, each once, in order.
fn gpu_models<'a>(cx: &'a Ctx<'_>) -> Vec<&'a str> {
    let mut models: Vec<&str> = cx.gpus.iter().map(|g| g.name.as_str()).collect();
    models.sort_unstable();
    models.dedup();
    models
}

/// CUDA's no to peer access as programs print it without a matrix: NCCL's `Could not enable P2P between dev …` and
/// nvbandwidth's waived device-to-device test (`assets/compat/errors.toml`).
const PEER_SAID_NO: [&str; 2] = ["nccl.p2p_not_enabled", "nvbandwidth.peer_test_waived"];

/// CUDA said no peer access between GPUs (TensorFlow's interconnect matrix, a CUDA sample's `CANNOT Access Peer`
/// or `: No`, NCCL's `Could not enable P2P`, nvbandwidth's waived device-to-device test) on a machine whose GPUs are
/// all GeForce boards without P2P over PCIe: the GPUs' own lack, which no setting changes. Where another GPU is
/// listed the answer has wider causes (sockets, ACS) and is left to the other checks; the driver's own GNS answer
/// already made this finding.
fn peer_access_denied(cx: &Ctx<'_>, t: &Topology, out: &mut Vec<Finding>) {
    let denied: Vec<&gpu_doctor_model::PeerAccess> = t.peer_access.iter().filter(|p| !p.can).collect();
    let said = cx.s.messages.iter().any(|m| PEER_SAID_NO.contains(&m.id.as_str()));
    if (denied.is_empty() && !said) || cx.gpus.is_empty() || out.iter().any(|f| f.id == P2P_GPU.id) {
        return;
    }
    if !cx.gpus.iter().all(geforce_without_pcie_p2p) {
        return;
    }
    let models = gpu_models(cx);
    // The program's own lines join as the messages this finding explains.
    let mut evidence: Vec<String> =
        denied.iter().take(6).map(|p| format!("CUDA: GPU {} cannot access GPU {}'s memory", p.src, p.dst)).collect();
    if denied.len() > 6 {
        evidence.push(format!("… {} ordered pairs in all", denied.len()));
    }
    evidence.push(format!("{}: GeForce, Turing or later", models.join(", ")));
    let pairs = if denied.is_empty() { String::new() } else { format!(" ({} ordered pair(s))", denied.len()) };
    out.push(P2P_GPU.finding(
        format!("CUDA reports no peer-to-peer between these GeForce GPUs{pairs}"),
        format!(
            "{GEFORCE_NO_P2P} Multi-GPU work still runs: NCCL and the frameworks copy through host memory, which costs \
             bandwidth and latency between the GPUs (tensor-parallel inference and all-reduce feel it most). No \
             setting of NVIDIA's turns it on."
        ),
        evidence,
        Some(
            "Nothing to repair in the setup. Where the program asks for peer access itself, turn that off \
             (NCCL_P2P_DISABLE=1; vLLM's `--disable-custom-all-reduce`); for fast GPU-to-GPU traffic use boards with \
             an NVLink bridge (RTX 20/30 series) or workstation or data-centre GPUs."
                .to_owned(),
        ),
    ));
}

/// CUDA's 217 (`cuda.peer_access_unsupported` in `assets/compat/errors.toml`), and DistServe's words for it.
const PEER_ACCESS_UNSUPPORTED: [&str; 2] = ["cuda.peer_access_unsupported", "distserve.peer_access_unsupported"];

/// Accelerate's refusal to start on several GeForce RTX 40 boards with NCCL's peer-to-peer left on
/// (`accelerate.p2p_ib_unsupported`).
const ACCELERATE_REFUSED: &str = "accelerate.p2p_ib_unsupported";

/// CUDA answered that two GPUs offer no peer access to each other (217, `peer access is not supported between
/// these two devices`), where the GPUs are GeForce boards or not listed: the GPUs' own lack of P2P, the usual
/// case (GeForce since the RTX 40 series; NVIDIA/nccl#1309's maintainer), which the program must route around.
/// Where the list shows only other GPUs, the line stays the catalogue's, whose causes are wider.
fn peer_access_refused(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let accelerate = cx.s.messages.iter().any(|m| m.id == ACCELERATE_REFUSED);
    if !accelerate && !cx.s.messages.iter().any(|m| PEER_ACCESS_UNSUPPORTED.contains(&m.id.as_str())) {
        return;
    }
    let geforce: Vec<&str> = cx.gpus.iter().map(|g| g.name.as_str()).filter(|n| is_geforce(n)).collect();
    if out.iter().any(|f| f.id == P2P_GPU.id) || (!cx.gpus.is_empty() && geforce.is_empty()) {
        return;
    }
    // The line itself joins as the message this finding explains.
    let mut evidence = vec![if accelerate {
        "Accelerate's check found several GeForce RTX 40 boards, which offer no peer-to-peer, and refused to start \
         with NCCL_P2P_DISABLE and NCCL_IB_DISABLE unset"
            .to_owned()
    } else {
        "CUDA answered 217 (peer access is not supported) for a pair of these GPUs".to_owned()
    }];
    evidence.extend(geforce.iter().take(4).map(|n| format!("{n}: a GeForce board")));
    let (summary, asked) = if accelerate {
        (
            "Accelerate refused to start on GPUs that offer no peer-to-peer access to each other",
            "Accelerate would leave NCCL to try direct GPU-to-GPU access, which these GPUs do not offer, and hang, so it \
             stops first.",
        )
    } else {
        (
            "CUDA refused peer-to-peer access between two GPUs that do not offer it to each other",
            "CUDA answered 217, peer access is not supported between these two devices: the program (NCCL, vLLM's or \
             SGLang's custom all-reduce, a framework's peer copy) asked for direct GPU-to-GPU access that these GPUs \
             do not offer.",
        )
    };
    out.push(P2P_GPU.finding(
        summary,
        format!(
            "{asked} GeForce boards since the RTX 40 series have no peer-to-peer in NVIDIA's driver, nor do some cloud \
         GPUs; GPUs on different CPU sockets may lack it too. Nothing is broken: the program must copy through host \
         memory instead."
        ),
        evidence,
        Some(
            "`nvidia-smi topo -p2p r` shows which GPU pairs offer peer reads (OK) and which do not (GNS, NS). Disable \
             P2P in the program, so it copies through host memory: NCCL_P2P_DISABLE=1 for NCCL (with \
             NCCL_IB_DISABLE=1 for Accelerate, whose `accelerate launch` sets both); `--disable-custom-all-reduce` for \
             vLLM; `--enable-p2p-check` for SGLang. Where the GPUs should offer it (data-centre boards on one PCIe switch), \
             update the driver and check ACS and the IOMMU."
                .to_owned(),
        ),
    ));
}

/// Peer copies measured at less than half the staged copy between GPUs CUDA lets access each other.
fn measured(t: &Topology, out: &mut Vec<Finding>) {
    let slow: Vec<_> = t.peer_copies.iter().filter(|c| c.p2p_far_below_staged()).collect();
    if slow.is_empty() || out.iter().any(|f| f.id == P2P_BLOCKED.id) {
        return;
    }
    let gb = |mb: u32| f64::from(mb) / 1000.0;
    let mut evidence: Vec<String> = slow
        .iter()
        .take(8)
        .map(|c| {
            format!(
                "GPU {} → GPU {}: {:.2} GB/s with peer access, {:.2} GB/s staged through the host",
                c.src,
                c.dst,
                gb(c.p2p_mbytes_per_s),
                gb(c.staged_mbytes_per_s)
            )
        })
        .collect();
    if slow.len() > 8 {
        evidence.push(format!("… and {} more pair(s)", slow.len() - 8));
    }
    evidence.extend(t.acs_redirect.iter().map(|l| format!("ACS redirects peer traffic: {l}")));
    out.push(P2P_BLOCKED.finding(
        format!("Peer-to-peer copies run at less than half the speed of copies through the host ({} GPU pair(s))", slow.len()),
        "CUDA reports peer access between these GPUs, yet a direct copy is slower than one staged through host \
         memory: peer traffic is not going straight across the PCIe switch or root port but up to the root complex \
         and back. PCIe Access Control Services (ACS) on the bridges, or the IOMMU translating device addresses, \
         does that; NCCL and frameworks then run all-reduce and tensor-parallel traffic at this speed, or hang.",
        evidence,
        Some(
            "Check ACS on the bridges above the GPUs (`sudo lspci -vvv | grep ACSCtl`: ReqRedir+ or CmpltRedir+ means \
             it redirects) and turn it off in the BIOS or with `sudo setpci -s <bridge bus id> ECAP_ACS+0x6.w=0000` \
             at every boot, as the NCCL troubleshooting guide shows; put the IOMMU in passthrough (`iommu=pt` on \
             the kernel command line). Then run p2pBandwidthLatencyTest again: P2P=Enabled should beat P2P=Disabled."
                .to_owned(),
        ),
    ));
}

/// How many GPUs this machine has, at least, and how the text showed them: the most of the topology's, the
/// listed GPUs, the display devices on the PCI bus, and the count the text says in words (the machine has, or a
/// run on it uses); words count only where nothing listed as many.
fn gpu_count(cx: &Ctx<'_>, t: &Topology) -> (usize, String) {
    let devices = cx.s.pci_devices.value().map_or(0, |d| d.iter().filter(|d| is_display_class(d.class)).count());
    // CUDA's peer access answers name device indices: GPU 7 means eight devices.
    let peers = t.peer_access.iter().map(|p| p.src.max(p.dst) as usize + 1).max().unwrap_or(0);
    let listed = t.gpus.len().max(cx.raw_gpus().map_or(0, <[_]>::len)).max(devices).max(peers);
    let said = cx.s.stated_gpu_count.max(cx.s.stated_gpus_used).map_or(0, |n| n as usize);
    if said > listed {
        (said, format!("{said} GPUs, as the text says in words"))
    } else {
        (listed, format!("{listed} GPUs"))
    }
}

/// The machine's GPUs as the peer-to-peer checks need them: two or more ([`gpu_count`]), not all joined by NVLink,
/// and not kept from P2P by their driver (GNS); `None` otherwise, else how the text showed them.
fn pcie_peers(cx: &Ctx<'_>, t: &Topology) -> Option<String> {
    let (gpus, said) = gpu_count(cx, t);
    (gpus >= 2 && peer_traffic_on_pcie(t)).then_some(said)
}

/// Whether peer traffic may cross PCIe where ACS or the IOMMU can block it: the GPUs are not all joined by NVLink,
/// and their driver does not keep them from P2P (GNS).
fn peer_traffic_on_pcie(t: &Topology) -> bool {
    let all_nvlink = !t.pairs.is_empty() && t.pairs.iter().all(|p| matches!(p.link, LinkKind::Nvlink { .. }));
    let gns = t.pairs.iter().any(|p| p.p2p_blocked() == Some(P2pStatus::GpuNotSupported));
    !all_nvlink && !gns
}

/// Adds `line` to the peer-to-peer finding another check gave; false when there is none yet.
fn joined(out: &mut [Finding], line: &str) -> bool {
    let Some(f) = out.iter_mut().find(|f| f.id == P2P_BLOCKED.id) else { return false };
    f.evidence.push(line.to_owned());
    true
}

/// Bridges whose ACS sends peer traffic up to the root complex, on a machine with several GPUs that
/// the driver does not keep from P2P; not again where the pairs' own status gave the finding. The
/// bare `ACSCtl:` lines of `lspci -vvv | grep ACSCtl` (no device header above them) count where the
/// text names no GPU at all: that grep is the check NCCL's troubleshooting guide gives for peer
/// traffic between GPUs that hangs or crawls, so its output is pasted from such a machine; a text
/// that shows one GPU, or a whole lspci block of one bridge, still says nothing.
fn acs(cx: &Ctx<'_>, t: &Topology, out: &mut Vec<Finding>) {
    if t.acs_redirect.is_empty() || out.iter().any(|f| f.id == P2P_BLOCKED.id) {
        return;
    }
    let (gpus, gpus_said) = gpu_count(cx, t);
    // The lspci reader writes a line under no device header as the bare `ACSCtl: …`.
    let grep_only = gpus == 0 && t.acs_redirect.iter().all(|l| l.starts_with("ACSCtl:"));
    if (gpus < 2 && !grep_only) || t.pairs.iter().any(|p| p.p2p_blocked() == Some(P2pStatus::GpuNotSupported)) {
        return;
    }
    let mut evidence = vec![if grep_only {
        "`lspci -vvv | grep ACSCtl` output, NCCL's check for blocked peer traffic (no GPU list pasted)".to_owned()
    } else {
        gpus_said
    }];
    evidence.extend(t.acs_redirect.iter().map(|l| format!("ACS redirects peer traffic: {l}")));
    out.push(P2P_BLOCKED.finding(
        format!("PCIe ACS sends peer-to-peer traffic between the GPUs up to the CPU ({} bridge(s))", t.acs_redirect.len()),
        "Access Control Services on these PCI bridges redirect every peer-to-peer request (ReqRedir) or completion \
         (CmpltRedir) up to the root complex instead of straight across to the other GPU. CUDA may still report \
         peer access as available, but peer copies then run far below the link or hang, and NCCL all-reduce can \
         stall with both GPUs at 100 %; setting NCCL_P2P_DISABLE=1 only hides it by copying through host memory.",
        evidence,
        Some(
            "Turn ACS off for the GPUs' bridges: in the BIOS (PCIe ACS, or IO virtualization / VT-d / AMD-Vi), or at \
             every boot with `sudo setpci -s <bridge bus id> ECAP_ACS+0x6.w=0000` for each bridge listed, as the NCCL \
             troubleshooting guide shows; on bare metal `iommu=pt` on the kernel command line keeps the IOMMU out \
             of device traffic. Then check that `sudo lspci -vvv | grep ACSCtl` shows ReqRedir- and CmpltRedir-, and \
             that p2pBandwidthLatencyTest's P2P=Enabled matrix beats P2P=Disabled."
                .to_owned(),
        ),
    ));
}

/// An IOMMU that translates the GPUs' DMA on a machine with several GPUs that are not all joined by
/// NVLink and that the driver does not keep from P2P: its lines join the peer-to-peer finding where
/// another check gave it, or give it.
fn iommu(cx: &Ctx<'_>, t: &Topology, out: &mut Vec<Finding>) {
    let Some(i) = t.iommu.as_ref().filter(|i| i.mode == IommuMode::Translated) else { return };
    let (mut gpus, mut gpus_said) = gpu_count(cx, t);
    // Two or more devices whose DMA the IOMMU refused (dmar.c and AMD-Vi name the requester), none known to be
    // anything but a display device: GPUs whose peer traffic was translated and refused.
    let not_display = |bus: &str| {
        cx.s.pci_devices.value().is_some_and(|d| {
            d.iter().any(|d| d.bus_id.to_ascii_lowercase().ends_with(bus) && !is_display_class(d.class))
        })
    };
    let faulting: Vec<&str> = i.fault_devices.iter().map(String::as_str).filter(|d| !not_display(d)).collect();
    if gpus < 2 && faulting.len() >= 2 {
        gpus = faulting.len();
        gpus_said = format!("{gpus} devices whose DMA the IOMMU refused: {}", faulting.join(", "));
    }
    let all_nvlink = !t.pairs.is_empty() && t.pairs.iter().all(|p| matches!(p.link, LinkKind::Nvlink { .. }));
    if gpus < 2 || all_nvlink || t.pairs.iter().any(|p| p.p2p_blocked() == Some(P2pStatus::GpuNotSupported)) {
        return;
    }
    let lines = i.evidence.iter().map(|l| format!("IOMMU translates device DMA: {l}"));
    if let Some(f) = out.iter_mut().find(|f| f.id == P2P_BLOCKED.id) {
        f.evidence.extend(lines);
        return;
    }
    let mut evidence = vec![gpus_said];
    evidence.extend(lines);
    out.push(
        P2P_BLOCKED.finding(
            "The IOMMU translates the GPUs' DMA, which PCIe peer-to-peer does not support on bare metal".to_owned(),
            "The kernel has the IOMMU (Intel VT-d, AMD-Vi) translating every device's DMA address. CUDA does not \
         support PCIe peer-to-peer between GPUs through a translating IOMMU on bare-metal Linux: peer copies are \
         redirected to the root complex and run slowly, hang, or are dropped while CUDA still reports peer access \
         (the kernel then logs DMAR or AMD-Vi IO_PAGE_FAULT faults for the GPUs), so NCCL all-reduce stalls or \
         returns wrong data. In a virtual machine with the GPUs passed through this does not apply.",
            evidence,
            Some(
                "Put the IOMMU in passthrough: add `iommu=pt` to GRUB_CMDLINE_LINUX in /etc/default/grub (keep \
             `intel_iommu=on` if VT-d must stay on), run `sudo update-grub` (`sudo grub2-mkconfig -o \
             /boot/grub2/grub.cfg` on Fedora/RHEL) and reboot; `sudo dmesg | grep 'Default domain type'` must then \
             say Passthrough. Where no VM needs the IOMMU, turning VT-d / AMD-Vi (IOMMU) off in the firmware setup \
             works too. Then check that p2pBandwidthLatencyTest's P2P=Enabled matrix beats P2P=Disabled."
                    .to_owned(),
            ),
        ),
    );
}

/// NCCL's peer-to-peer transport turned off (`NCCL_P2P_DISABLE` set to anything but 0) on several GPUs
/// that are not all joined by NVLink: the workaround NCCL's troubleshooting guide gives for peer
/// traffic that hangs or crawls, whose cause on PCIe is ACS or the IOMMU redirecting it. Joins the
/// peer-to-peer finding where another check gave it.
fn p2p_turned_off(cx: &Ctx<'_>, t: &Topology, out: &mut Vec<Finding>) {
    let Some(value) = cx.s.env.vars.get("NCCL_P2P_DISABLE").filter(|v| !matches!(v.trim(), "" | "0")) else {
        return;
    };
    let Some(gpus_said) = pcie_peers(cx, t) else { return };
    let line = format!("NCCL_P2P_DISABLE={value}: NCCL's peer-to-peer transport was turned off");
    if joined(out, &line) {
        return;
    }
    out.push(
        P2P_BLOCKED.finding(
            "NCCL's peer-to-peer transport is turned off (NCCL_P2P_DISABLE) on GPUs that talk over PCIe",
            "NCCL_P2P_DISABLE is NCCL's workaround for peer-to-peer traffic that hangs or crawls; with it every \
         GPU-to-GPU transfer goes through host memory, much slower. NCCL's troubleshooting guide names the usual \
         cause on PCIe: ACS on the bridges above the GPUs, or the IOMMU (VT-d, AMD-Vi) translating their DMA, \
         redirecting peer traffic to the root complex, while CUDA still reports peer access.",
            vec![gpus_said, line],
            Some(
                "Find what blocks peer traffic instead of turning it off (NCCL's troubleshooting guide): `sudo lspci \
             -vvv | grep ACSCtl` showing `SrcValid+` or `ReqRedir+` on a bridge above the GPUs is ACS: turn it off in \
             the firmware setup (or with setpci per bridge at each boot); `sudo dmesg | grep 'Default domain type'` \
             saying Translated is the IOMMU: put it in passthrough (`iommu=pt` on the kernel command line), or turn \
             VT-d / AMD-Vi off in the firmware (`intel_iommu=off`, `amd_iommu=off`). Then run without \
             NCCL_P2P_DISABLE and check that p2pBandwidthLatencyTest's P2P=Enabled matrix beats P2P=Disabled."
                    .to_owned(),
            ),
        ),
    );
}

/// An NCCL test over several GPUs that stopped before its first result on GPUs that are not all
/// joined by NVLink and that the driver does not keep from P2P: NCCL's troubleshooting guide names
/// ACS and the IOMMU redirecting peer traffic as the cause of collectives that hang within a machine
/// on PCIe (NVIDIA/nccl#85: an all_reduce_test on two P100s stalled after its header, and the
/// maintainer's first question was ACS). Joins the peer-to-peer finding where another check gave it.
fn stalled_collective(t: &Topology, out: &mut Vec<Finding>) {
    let Some(s) = t.stalled_collective.as_ref().filter(|s| s.ranks >= 2) else { return };
    let all_nvlink = !t.pairs.is_empty() && t.pairs.iter().all(|p| matches!(p.link, LinkKind::Nvlink { .. }));
    if all_nvlink || t.pairs.iter().any(|p| p.p2p_blocked() == Some(P2pStatus::GpuNotSupported)) {
        return;
    }
    let lines = s.evidence.iter().map(|l| format!("NCCL test stopped before its first result: {l}"));
    if let Some(f) = out.iter_mut().find(|f| f.id == P2P_BLOCKED.id) {
        f.evidence.extend(lines);
        return;
    }
    let mut evidence = vec![format!("{} ranks on {}", s.ranks, s.names.join(", "))];
    evidence.extend(lines);
    out.push(P2P_BLOCKED.finding(
        format!("An NCCL test over {} GPUs stalled before its first result", s.ranks),
        "The test set up its communicator on every GPU, printed its table header, and then never finished \
         the first, smallest collective. Between GPUs of one machine that talk over PCIe, NCCL's \
         troubleshooting guide names the usual cause: PCIe Access Control Services (ACS) on the bridges above \
         the GPUs, or the IOMMU (VT-d, AMD-Vi) translating their DMA, sends peer-to-peer traffic up to the root \
         complex, where it crawls or is lost, while CUDA still reports peer access.",
        evidence,
        Some(format!(
            "{CHECK_ACS_AND_IOMMU} Then run the test again; `NCCL_P2P_DISABLE=1` making it pass confirms \
                     that peer traffic was blocked."
        )),
    ));
}

/// How to find which of ACS and the IOMMU blocks peer traffic, and turn it off (NCCL's troubleshooting guide).
const CHECK_ACS_AND_IOMMU: &str = "Check ACS on the bridges above the GPUs: `sudo lspci -vvv | grep ACSCtl` showing \
    `SrcValid+`, `ReqRedir+` or `CmpltRedir+` means it is on: turn it off in the firmware setup (PCIe ACS, or IO \
    virtualization / VT-d / AMD-Vi), or at every boot with `sudo setpci -s <bridge bus id> ECAP_ACS+0x6.w=0000` for \
    each bridge, as NCCL's troubleshooting guide shows. `sudo dmesg | grep 'Default domain type'` saying Translated \
    is the IOMMU: put it in passthrough (`iommu=pt` on the kernel command line) or off (`intel_iommu=off`, \
    `amd_iommu=off`).";

/// Trouble over several GPUs said in words or shown by a CUDA sample (a hang, wrong data after a transfer, a failed
/// peer test, slow work) on a machine with two or more GPUs (listed, counted, or put in the work by the line
/// itself) not all joined by NVLink and not kept from P2P by their driver: NCCL's troubleshooting guide names ACS
/// and the IOMMU redirecting peer traffic as the usual cause of transfers that hang or crawl within a machine on
/// PCIe, and the CUDA guide supports no peer copy through an IOMMU on bare metal. Slow work over GeForce boards
/// that offer no P2P and were given none is theirs. Joins the peer-to-peer finding where another check gave it.
fn trouble_in_words(cx: &Ctx<'_>, t: &Topology, out: &mut Vec<Finding>) {
    let Some(trouble) = cx.s.multi_gpu_trouble.as_ref() else { return };
    let (gpus, mut gpus_said) = gpu_count(cx, t);
    if gpus < 2 {
        // The line's own several GPUs count, unless the text says the machine has one.
        if !trouble.several_gpus || cx.s.stated_gpu_count == Some(1) {
            return;
        }
        gpus_said = "two or more GPUs, as the line itself says".to_owned();
    }
    if !peer_traffic_on_pcie(t) {
        return;
    }
    let line = &trouble.line;
    // A hang the text ties to NVLink: a link the driver keeps trying to bring up (a bridge partly seated), not PCIe.
    if trouble.symptom == MultiGpuSymptom::Hang && line.to_ascii_lowercase().contains("nvlink") {
        if !out.iter().any(|f| f.id == NVLINK_DOWN.id) {
            out.push(nvlink_hang(line, gpus_said));
        }
        return;
    }
    let (what, title) = match trouble.symptom {
        MultiGpuSymptom::Hang => ("a multi-GPU run hangs", "A run over several GPUs hangs"),
        MultiGpuSymptom::WrongValues => {
            ("data crossing between GPUs comes out wrong", "Data that crosses between GPUs comes out wrong")
        }
        MultiGpuSymptom::PeerTestFailed => ("a peer-to-peer test failed", "A peer-to-peer test between GPUs failed"),
        MultiGpuSymptom::Slow => ("work over several GPUs is slow", "Work over several GPUs runs slow"),
    };
    // GeForce boards without P2P over PCIe, where CUDA gave no peer access: slow multi-GPU work is their lack.
    let no_peer_given = !t.peer_access.iter().any(|p| p.can);
    if trouble.symptom == MultiGpuSymptom::Slow
        && no_peer_given
        && !cx.gpus.is_empty()
        && cx.gpus.iter().all(geforce_without_pcie_p2p)
    {
        if out.iter().any(|f| f.id == P2P_GPU.id) {
            return;
        }
        let models = gpu_models(cx);
        out.push(
            P2P_GPU.finding(
                "Work over these GeForce GPUs is slow because they offer no peer-to-peer over PCIe",
                format!(
                    "{GEFORCE_NO_P2P} Every transfer between the GPUs goes through host memory, even where two share a \
                 PCIe switch. That costs bandwidth and latency; nothing is broken."
                ),
                vec![
                    format!("the text says {what}: {line}"),
                    format!("{}: GeForce, Turing or later", models.join(", ")),
                ],
                Some(
                    "Nothing to repair in the setup: `nvidia-smi topo -p2p r` shows GNS for these pairs. For fast \
                 GPU-to-GPU traffic use boards with an NVLink bridge (RTX 20/30 series) or workstation or data-centre \
                 GPUs; keep tensor-parallel work on one GPU where it fits."
                        .to_owned(),
                ),
            ),
        );
        return;
    }
    let said = format!("the text says {what}: {line}");
    if joined(out, &said) {
        return;
    }
    out.push(P2P_BLOCKED.finding(
        format!("{title}: peer-to-peer traffic between them is the first suspect"),
        "Work spread over several GPUs of one machine moves data between them directly (peer-to-peer) where CUDA \
         offers it. Where the GPUs talk over PCIe, NCCL's troubleshooting guide names the usual cause of transfers \
         that hang or crawl: PCIe Access Control Services (ACS) on the bridges above the GPUs, or the IOMMU (VT-d, \
         AMD-Vi) translating their DMA, sends peer traffic up to the root complex, while CUDA still reports peer \
         access; CUDA does not support peer copies through an IOMMU on bare-metal Linux, where they can also \
         return zeros or garbage. Running with NCCL_P2P_DISABLE=1 tells: if the trouble goes away, peer traffic \
         was blocked.",
        vec![gpus_said, said],
        Some(format!(
            "Test with NCCL_P2P_DISABLE=1 (slower, through host memory): if the run then finishes with right results, \
             peer traffic is blocked. {CHECK_ACS_AND_IOMMU} Then run p2pBandwidthLatencyTest: P2P=Enabled should \
             beat P2P=Disabled."
        )),
    ));
}

/// A multi-GPU hang the text ties to NVLink ([`NVLINK_DOWN`]).
fn nvlink_hang(line: &str, gpus_said: String) -> Finding {
    NVLINK_DOWN.finding(
        "A hang tied to NVLink: a link that is down or half connected is the first suspect",
        "NCCL reads every GPU's NVLinks through NVML when it sets up, and sends traffic over those it finds up. A \
         bridge that makes contact on some lanes only (not pressed fully home, a cooler in the way) leaves links \
         that the driver keeps trying to bring up: NCCL's setup, or a collective over that link, then hangs while \
         every GPU still works on its own.",
        vec![gpus_said, format!("the text says the hang is at NVLink: {line}")],
        Some(
            "`nvidia-smi nvlink -s` shows each link's state and speed (every link of a bridge should be up, at the \
             same speed); `nvidia-smi topo -m` should show NV# between the bridged GPUs. Power off, reseat the NVLink \
             bridge (fully home on both cards), and check again. NCCL_P2P_DISABLE=1 runs without peer traffic meanwhile."
                .to_owned(),
        ),
    )
}

fn mixed(t: &Topology, out: &mut Vec<Finding>) {
    let mut models: Vec<&str> = t.gpus.iter().filter_map(|g| g.name.as_deref()).collect();
    models.sort_unstable();
    models.dedup();
    if models.len() < 2 {
        return;
    }
    let evidence = t.gpus.iter().map(|g| gpu_name(t, g.index)).collect();
    let count = |name: &str| t.gpus.iter().filter(|g| g.name.as_deref() == Some(name)).count();
    let most = models.iter().copied().max_by_key(|m| count(m)).unwrap_or_default();
    out.push(MIXED.finding(
        format!("This machine has GPUs of {} models: {}", models.len(), models.join(", ")),
        "Frameworks that spread one job over several GPUs in lockstep (PyTorch DDP and DataParallel, data-parallel \
         training in general) wait for the slowest GPU at every step and must fit the batch in the smallest memory, \
         so a mixed set runs no faster than its weakest member times their count. Run such jobs on GPUs of one model.",
        evidence,
        Some(format!(
            "Give such a job only GPUs of one model, named by UUID so the order cannot mislead: `nvidia-smi -L` lists \
             them; e.g. keep the {most} GPUs with CUDA_VISIBLE_DEVICES=<their GPU- UUIDs, comma-separated>."
        )),
    ));
}

fn order(t: &Topology, out: &mut Vec<Finding>) {
    let o = &t.cuda_order;
    if !o.order_changes_indices() {
        return;
    }
    let Some((cuda, smi)) = o.effective.iter().enumerate().find(|(i, smi)| o.with_pci_bus_id.get(*i) != Some(*smi))
    else {
        return;
    };
    let mut evidence = vec![
        format!(
            "CUDA_DEVICE_ORDER is {}",
            o.device_order_var.as_deref().map_or("unset".to_owned(), |v| format!("{v:?}"))
        ),
        format!(
            "CUDA_VISIBLE_DEVICES is {}",
            o.visible_devices_var.as_deref().map_or("unset".to_owned(), |v| format!("{v:?}"))
        ),
    ];
    let list = |order: &[u32]| order.iter().map(|i| gpu_name(t, *i)).collect::<Vec<_>>().join(", ");
    evidence.push(format!("CUDA device 0, 1, … now: {}", list(&o.effective)));
    evidence.push(format!("with CUDA_DEVICE_ORDER=PCI_BUS_ID: {}", list(&o.with_pci_bus_id)));
    evidence.push(o.basis.clone());
    out.push(
        ORDER
            .finding(
                format!("CUDA device {cuda} is nvidia-smi's {}", gpu_name(t, *smi)),
                "CUDA numbers GPUs fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID, while nvidia-smi, NVML and most \
         monitoring tools number them in PCI order. With GPUs of different speeds the two disagree: `cuda:0`, \
         `--gpu 0` and the integers in CUDA_VISIBLE_DEVICES pick another card than the one nvidia-smi shows as GPU 0, \
         so a job lands on the wrong GPU or the wrong GPU looks busy.",
                evidence,
                None,
            )
            .with_plan(fix::change(
                None,
                "CUDA numbers the GPUs as nvidia-smi does",
                vec![fix::set_var("CUDA_DEVICE_ORDER", "PCI_BUS_ID")],
            )),
    );
}

/// The text says a program's GPU numbers and nvidia-smi's (or another NVML monitor's) disagree, or shows a program's
/// own GPU list (CUDA's order) with the models in another order than lspci's or `nvidia-smi -L`'s, where no GPU list
/// showed the two orders ([`order`] judges those) and CUDA_DEVICE_ORDER is not PCI_BUS_ID already: CUDA's default
/// fastest-first order is the one cause CUDA documents for it.
fn order_in_words(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let said = match (&cx.s.listed_order_mismatch, &cx.s.stated_index_mismatch) {
        (Some(orders), _) => orders.clone(),
        (None, Some(line)) => format!("pasted line: {line}"),
        (None, None) => return,
    };
    let order_var = cx.s.env.vars.get("CUDA_DEVICE_ORDER");
    if out.iter().any(|f| f.id == ORDER.id) || order_var.is_some_and(|v| v == "PCI_BUS_ID") {
        return;
    }
    let mut evidence = vec![said];
    evidence.push(
        order_var
            .map_or("CUDA_DEVICE_ORDER: not set in the text".to_owned(), |v| format!("CUDA_DEVICE_ORDER is {v:?}")),
    );
    out.push(
        ORDER
            .finding(
                "The program's GPU numbers are not nvidia-smi's",
                "CUDA numbers GPUs fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID, while nvidia-smi, nvtop and \
                 other NVML monitors number them in PCI order: on a machine whose GPUs differ in speed, `cuda:0`, \
                 `--gpu 0` and the integers in CUDA_VISIBLE_DEVICES pick another card than the one nvidia-smi calls \
                 GPU 0.",
                evidence,
                None,
            )
            .with_plan(fix::change(
                None,
                "CUDA numbers the GPUs as nvidia-smi does",
                vec![fix::set_var("CUDA_DEVICE_ORDER", "PCI_BUS_ID")],
            )),
    );
}

fn sockets(t: &Topology, out: &mut Vec<Finding>) {
    let nodes = t.numa_nodes();
    let sys = t.pairs.iter().filter(|p| p.link == LinkKind::Sys).count();
    if nodes.len() < 2 && sys == 0 {
        return;
    }
    let line = |g: &TopoGpu| format!("{}: {}", gpu_name(t, g.index), g.affinity_words());
    let mut evidence: Vec<String> = t.gpus.iter().map(line).collect();
    if sys > 0 {
        evidence.push(format!("{sys} GPU pair(s) meet only across the inter-socket link (SYS)"));
    }
    let example = t.gpus.iter().find(|g| g.numa_node.is_some());
    let pin = example.map_or_else(
        || "numactl --cpunodebind=<node> --membind=<node> <command>".to_owned(),
        |g| {
            let n = g.numa_node.unwrap_or_default();
            format!(
                "CUDA_VISIBLE_DEVICES={} numactl --cpunodebind={n} --membind={n} <command>",
                g.uuid.as_deref().unwrap_or("<GPU UUID>")
            )
        },
    );
    out.push(SOCKETS.finding(
        if nodes.len() > 1 {
            format!("The GPUs are spread over {} NUMA nodes (CPU sockets)", nodes.len())
        } else {
            "Some GPU pairs meet only across the inter-socket link".to_owned()
        },
        "Each GPU hangs off one CPU socket. A process that runs, or keeps its memory, on the other socket reaches \
         its GPU across the inter-socket link, which lowers host↔device bandwidth and adds latency; traffic between \
         GPUs on different sockets crosses it too. Keeping each process beside its GPU avoids that.",
        evidence,
        Some(format!(
            "Start each GPU's process on that GPU's socket, e.g. `{pin}`; launchers that bind per rank (Slurm's \
             --gpu-bind/--cpu-bind, torchrun with numactl per rank) do this for you."
        )),
    ));
}

fn mig(t: &Topology, out: &mut Vec<Finding>) {
    for g in &t.gpus {
        let Some(m) = g.mig.as_ref().filter(|m| m.enabled) else { continue };
        match m.instances.as_deref() {
            Some([]) => out.push(MIG_EMPTY.finding(
                format!("{} is in MIG mode without any MIG device", gpu_name(t, g.index)),
                "In MIG mode CUDA sees only MIG devices, and this GPU has none, so CUDA sees nothing on it.",
                vec![format!("{}: MIG on, no MIG device listed", gpu_name(t, g.index))],
                Some(format!(
                    "Create instances (`sudo nvidia-smi mig -i {0} -lgip` lists the profiles; `sudo nvidia-smi mig -i \
                     {0} -cgi <profile> -C` creates one with its compute instance), or leave MIG mode: `sudo \
                     nvidia-smi -i {0} -mig 0` (takes effect after a GPU reset).",
                    g.index
                )),
            )),
            Some(instances) => {
                let evidence = instances
                    .iter()
                    .map(|i| {
                        format!(
                            "{}: MIG device {} {} {}",
                            gpu_name(t, g.index),
                            i.device,
                            i.profile.as_deref().unwrap_or("?"),
                            i.uuid.as_deref().unwrap_or("(no UUID reported)")
                        )
                    })
                    .collect();
                out.push(MIG_ON.finding(
                    format!("{} is split into {} MIG device(s)", gpu_name(t, g.index), instances.len()),
                    "CUDA sees each MIG device as a GPU of its own with the memory and SMs of its profile, and one \
                     process uses one MIG device. Frameworks list them as cuda:0, cuda:1, …; name one with its MIG- \
                     UUID in CUDA_VISIBLE_DEVICES. A job that needs the whole GPU needs MIG mode off.",
                    evidence,
                    None,
                ));
            }
            None => {}
        }
    }
}
