//! The Overview's GPU topology: a GPU × GPU grid as `nvidia-smi topo -m` prints it (each cell the
//! link's label, coloured by how close the link is, the pair's peer-to-peer status on hover and a
//! mark where it is not OK), each GPU's CPU affinity, NUMA node and MIG devices, and which GPU each
//! CUDA index is. One GPU gets its affinity and MIG lines and no grid. The words follow the report's
//! topology section (`render::facts::topology`).

use egui::{Color32, RichText, Stroke, Ui};
use gpu_doctor_model::{CudaOrder, DeviceOrder, GpuPair, LinkKind, P2pStatus, TopoGpu, Topology};
use gpu_doctor_model::{Probed, Snapshot};

use crate::gui::theme::{Tone, badge_ui, toned};

/// One cell of the grid.
const CELL: [f32; 2] = [58.0, 24.0];
/// Space before the CPU affinity, NUMA and MIG columns, which the link cells sit tight against.
const COLUMN_GAP: f32 = 10.0;
/// The mark after a link label where peer-to-peer reads or writes are known not to work.
const NO_P2P: &str = "✖";

/// How close two GPUs are, for the cell colours and the legend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkClass {
    /// `NV#`: NVLink.
    Nvlink,
    /// `PIX`, `PXB`, `BRD`: PCIe switches or one board, without the CPU.
    Switch,
    /// `PHB`, `NODE`: through the CPU's host bridge(s) on one NUMA node.
    HostBridge,
    /// `SYS`: across the link between CPU sockets.
    AcrossSockets,
    /// Not reported.
    Unknown,
}

impl LinkClass {
    /// The legend's rows, closest first.
    pub const LEGEND: [(Self, &'static str); 4] = [
        (Self::Nvlink, "NV#: NVLink"),
        (Self::Switch, "PIX/PXB: PCIe switch, not through the CPU"),
        (Self::HostBridge, "PHB/NODE: through the CPU's host bridge"),
        (Self::AcrossSockets, "SYS: across CPU sockets"),
    ];

    /// The class of a link.
    pub fn of(link: LinkKind) -> Self {
        match link {
            LinkKind::Nvlink { .. } => Self::Nvlink,
            LinkKind::Pix | LinkKind::Pxb | LinkKind::Internal => Self::Switch,
            LinkKind::Phb | LinkKind::Node => Self::HostBridge,
            LinkKind::Sys => Self::AcrossSockets,
            LinkKind::Unknown => Self::Unknown,
        }
    }

    /// Its colour for text and outlines, readable on the theme's background: the theme's palette
    /// (NVLink good, a switch info, a host bridge warn), a purple across sockets, grey when unknown.
    pub fn color(self, dark: bool) -> Color32 {
        let tone = match self {
            Self::Nvlink => Tone::Good,
            Self::Switch => Tone::Info,
            Self::HostBridge => Tone::Warn,
            Self::AcrossSockets if dark => return Color32::from_rgb(0xc9, 0x9b, 0xff),
            Self::AcrossSockets => return Color32::from_rgb(0x6a, 0x3d, 0xb8),
            Self::Unknown => Tone::Muted,
        };
        tone.palette(dark).unwrap_or_else(|| Color32::from_gray(if dark { 0xa0 } else { 0x60 }))
    }

    /// The cell's fill: the colour, faint.
    fn fill(self, dark: bool) -> Color32 {
        let c = self.color(dark);
        Color32::from_rgba_unmultiplied(c.r(), c.g(), c.b(), if dark { 48 } else { 36 })
    }
}

/// The text of the cell for GPUs `a` (row) and `b` (column): `X` on the diagonal, the link's label
/// (`?` when the pair is not known), and `✖` after it where peer-to-peer is known not to work.
pub fn cell_text(t: &Topology, a: u32, b: u32) -> String {
    if a == b {
        return "X".to_owned();
    }
    match t.pair(a, b) {
        Some(p) if p.p2p_blocked().is_some() => format!("{} {NO_P2P}", p.link.label()),
        Some(p) => p.link.label(),
        None => "?".to_owned(),
    }
}

/// The hover text of a pair: the link in words and each peer-to-peer capability.
pub fn pair_hover(p: &GpuPair) -> String {
    let status = |s: Option<P2pStatus>| match s {
        Some(P2pStatus::Ok) => "OK".to_owned(),
        Some(s) => format!("{} ({})", s.code(), s.words()),
        None => "not reported".to_owned(),
    };
    let mut text = format!(
        "GPU{} ↔ GPU{}: {} ({})\nP2P read: {}\nP2P write: {}\nP2P atomics: {}",
        p.a,
        p.b,
        p.link.label(),
        p.link.meaning(),
        status(p.p2p_read),
        status(p.p2p_write),
        status(p.p2p_atomics)
    );
    if let Some(s) = p.p2p_blocked() {
        text.push_str(&format!(
            "\n{NO_P2P} Peer-to-peer is not available ({}): copies between these GPUs go through host memory",
            s.words()
        ));
    }
    text
}

/// The MIG column: `on · 7 devices`, `on`, `off`, or empty without MIG.
pub fn mig_text(g: &TopoGpu) -> String {
    match &g.mig {
        None => String::new(),
        Some(m) if !m.enabled => "off".to_owned(),
        Some(m) => match &m.instances {
            Some(list) => format!("on · {} device{}", list.len(), if list.len() == 1 { "" } else { "s" }),
            None => "on · devices not listed".to_owned(),
        },
    }
}

/// One GPU's MIG devices, one per line (profile and UUID).
fn mig_devices(g: &TopoGpu) -> Vec<String> {
    let list = g.mig.as_ref().and_then(|m| m.instances.as_deref()).unwrap_or_default();
    list.iter()
        .map(|i| {
            format!(
                "MIG {} device {}: {}",
                i.profile.as_deref().unwrap_or("?"),
                i.device,
                i.uuid.as_deref().unwrap_or("no UUID reported")
            )
        })
        .collect()
}

/// `GPU0: NUMA node 0, CPUs 0-63 (from nvml)`; `None` when neither was reported.
pub fn affinity_line(g: &TopoGpu) -> Option<String> {
    (g.numa_node.is_some() || g.cpu_affinity.is_some()).then(|| format!("GPU{}: {}", g.index, g.affinity_words()))
}

/// `0 = GPU1, 1 = GPU0`, or `no GPU visible`.
fn order_list(order: &[u32]) -> String {
    if order.is_empty() {
        return "no GPU visible".to_owned();
    }
    order.iter().enumerate().map(|(c, g)| format!("{c} = GPU{g}")).collect::<Vec<_>>().join(", ")
}

/// The CUDA order lines: which GPU each CUDA index is now, and what `CUDA_DEVICE_ORDER=PCI_BUS_ID`
/// would change. The flag says the two differ (CUDA's index N is not nvidia-smi's GPU N).
pub fn cuda_order_lines(o: &CudaOrder) -> (Vec<String>, bool) {
    let order = match o.order {
        DeviceOrder::PciBusId => "CUDA_DEVICE_ORDER=PCI_BUS_ID: PCI bus order",
        DeviceOrder::FastestFirst => "fastest first",
        DeviceOrder::Unknown => "an order this version does not know",
    };
    let mut lines = vec![format!("CUDA device {} ({order})", order_list(&o.effective))];
    let differs = o.order_changes_indices();
    if differs {
        lines.push(format!(
            "With CUDA_DEVICE_ORDER=PCI_BUS_ID: CUDA device {} (nvidia-smi's order)",
            order_list(&o.with_pci_bus_id)
        ));
    } else if o.order != DeviceOrder::PciBusId {
        lines.push("CUDA_DEVICE_ORDER=PCI_BUS_ID would change nothing here".to_owned());
    }
    if let Some(v) = &o.visible_devices_var {
        lines.push(format!("CUDA_VISIBLE_DEVICES={v:?}"));
    }
    if let Some(entry) = &o.unmatched {
        lines
            .push(format!("CUDA_VISIBLE_DEVICES entry {entry:?} names no GPU: CUDA hides it and every entry after it"));
    }
    (lines, differs)
}

/// Why the topology is not drawn, one line; `None` when it is found, still being probed, or there
/// is no GPU to speak of (the verdict already says why).
pub fn missing_line(s: &Snapshot) -> Option<String> {
    let has_gpus = s.gpus.value().is_some_and(|g| !g.is_empty());
    match &s.topology {
        Probed::Found { .. } => None,
        Probed::Failed { error } => Some(format!("GPU topology could not be read: {error}")),
        other if has_gpus => Some(format!("GPU topology not known: {}", other.why_not().unwrap_or("not reported"))),
        _ => None,
    }
}

/// The topology section of the Overview; draws nothing for a machine with one GPU and nothing to
/// say of it, or without GPUs.
pub fn topology_ui(ui: &mut Ui, s: &Snapshot) {
    if let Some(line) = missing_line(s) {
        ui.heading("GPU topology");
        ui.label(toned(ui, Tone::Muted, line));
        ui.add_space(8.0);
        return;
    }
    let Some(t) = s.topology.value() else { return };
    if t.gpus.len() < 2 {
        let lines: Vec<String> = t.gpus.iter().flat_map(|g| affinity_line(g).into_iter().chain(mig_lines(g))).collect();
        if lines.is_empty() {
            return;
        }
        ui.heading("GPU topology");
        for line in lines {
            ui.label(line);
        }
    } else {
        ui.heading("GPU topology");
        egui::ScrollArea::horizontal().id_salt("topo-matrix-scroll").show(ui, |ui| matrix_ui(ui, t));
        legend_ui(ui, t);
    }
    // With one GPU the order says something only when CUDA_VISIBLE_DEVICES picks from it.
    if t.gpus.len() > 1 || t.cuda_order.visible_devices_var.is_some() {
        order_ui(ui, t);
    }
    for n in &t.notes {
        ui.label(toned(ui, Tone::Muted, n));
    }
    ui.add_space(8.0);
}

/// `GPU0: MIG mode on, 7 MIG devices` and the devices, for the one-GPU lines.
fn mig_lines(g: &TopoGpu) -> Vec<String> {
    let mig = mig_text(g);
    if mig.is_empty() {
        return Vec::new();
    }
    let mut out = vec![format!("GPU{}: MIG {mig}", g.index)];
    out.extend(mig_devices(g).into_iter().map(|d| format!("    {d}")));
    out
}

fn matrix_ui(ui: &mut Ui, t: &Topology) {
    let dark = ui.visuals().dark_mode;
    // The MIG column only where a GPU reported its MIG mode.
    let mig_column = t.gpus.iter().any(|g| g.mig.is_some());
    let headings = if mig_column { &["CPU affinity", "NUMA", "MIG"][..] } else { &["CPU affinity", "NUMA"][..] };
    egui::Grid::new("topo-matrix").spacing([3.0, 3.0]).show(ui, |ui| {
        ui.label("");
        for g in &t.gpus {
            ui.add_sized(CELL, egui::Label::new(RichText::new(format!("GPU{}", g.index)).strong()));
        }
        for &h in headings {
            ui.horizontal(|ui| {
                ui.add_space(COLUMN_GAP);
                ui.label(RichText::new(h).strong());
            });
        }
        ui.end_row();
        for a in &t.gpus {
            let head = ui.label(RichText::new(format!("GPU{}", a.index)).strong());
            head.on_hover_text(gpu_hover(a));
            for b in &t.gpus {
                cell_ui(ui, t, a.index, b.index, dark);
            }
            let padded = |ui: &mut Ui, text: RichText| {
                ui.horizontal(|ui| {
                    ui.add_space(COLUMN_GAP);
                    ui.label(text)
                })
                .inner
            };
            padded(ui, RichText::new(a.cpu_affinity.as_deref().unwrap_or("N/A")).monospace());
            padded(ui, RichText::new(a.numa_node.map_or_else(|| "N/A".to_owned(), |n| n.to_string())).monospace());
            if mig_column {
                let mig = padded(ui, RichText::new(mig_text(a)));
                let devices = mig_devices(a);
                if !devices.is_empty() {
                    mig.on_hover_text(devices.join("\n"));
                }
            }
            ui.end_row();
        }
    });
}

fn cell_ui(ui: &mut Ui, t: &Topology, a: u32, b: u32, dark: bool) {
    let text = cell_text(t, a, b);
    let pair = (a != b).then(|| t.pair(a, b)).flatten();
    let class = pair.map(|p| LinkClass::of(p.link));
    let blocked = pair.is_some_and(|p| p.p2p_blocked().is_some());
    let bad = Tone::Bad.color(ui);
    let (fill, stroke, color) = match class {
        None => {
            (Color32::TRANSPARENT, Stroke::new(1.0, ui.visuals().weak_text_color()), ui.visuals().weak_text_color())
        }
        Some(c) if blocked => (c.fill(dark), Stroke::new(2.0, bad), bad),
        Some(c) => (c.fill(dark), Stroke::new(1.0, c.color(dark)), c.color(dark)),
    };
    let response = egui::Frame::new()
        .fill(fill)
        .stroke(stroke)
        .corner_radius(3.0)
        .show(ui, |ui| {
            let size = egui::vec2(CELL[0] - 2.0 * stroke.width, CELL[1] - 2.0 * stroke.width);
            let job = RichText::new(text).monospace().strong().color(color);
            ui.add_sized(size, egui::Label::new(job).selectable(false))
        })
        .inner;
    if let Some(p) = pair {
        response.on_hover_text(pair_hover(p));
    }
}

fn gpu_hover(g: &TopoGpu) -> String {
    let mut lines = vec![format!("GPU{}: {}", g.index, g.name.as_deref().unwrap_or("unnamed GPU"))];
    if let Some(bus) = &g.bus_id {
        lines.push(format!("PCI bus id {bus}"));
    }
    if let Some(uuid) = &g.uuid {
        lines.push(uuid.clone());
    }
    let active = g.nvlinks.iter().filter(|l| l.active).count();
    if !g.nvlinks.is_empty() {
        lines.push(format!("{active} of {} NVLinks active", g.nvlinks.len()));
    }
    lines.extend(affinity_line(g));
    lines.join("\n")
}

fn legend_ui(ui: &mut Ui, t: &Topology) {
    let dark = ui.visuals().dark_mode;
    ui.horizontal_wrapped(|ui| {
        for (class, words) in LinkClass::LEGEND {
            let (rect, _) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
            ui.painter().rect(
                rect,
                2.0,
                class.fill(dark),
                Stroke::new(1.0, class.color(dark)),
                egui::StrokeKind::Inside,
            );
            ui.label(RichText::new(words).small());
            ui.add_space(8.0);
        }
        if t.pairs.iter().any(|p| p.p2p_blocked().is_some()) {
            ui.label(toned(ui, Tone::Bad, format!("{NO_P2P} peer-to-peer not available (hover a cell)")).small());
        }
    });
}

fn order_ui(ui: &mut Ui, t: &Topology) {
    let (lines, differs) = cuda_order_lines(&t.cuda_order);
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new("CUDA order").strong());
        if differs {
            badge_ui(ui, Tone::Warn, "DIFFERS FROM NVIDIA-SMI").on_hover_text(
                "CUDA device N is not nvidia-smi's GPU N: set CUDA_DEVICE_ORDER=PCI_BUS_ID to match them",
            );
        }
    });
    let Some((now, rest)) = lines.split_first() else { return };
    let now = if differs { toned(ui, Tone::Warn, now) } else { RichText::new(now) };
    ui.label(now).on_hover_text(&t.cuda_order.basis);
    for line in rest {
        ui.label(toned(ui, Tone::Muted, line));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use egui_kittest::kittest::Queryable;
    use gpu_doctor_model::{MigFacts, MigInstance};

    use super::*;
    use crate::gui::tests::{harness, settle};
    use crate::render::html::tests::fixture_report;

    fn topology(name: &str) -> Topology {
        fixture_report(name).snapshot.topology.value().cloned().expect("the scenario has a topology")
    }

    fn gpu(index: u32, cc: &str) -> TopoGpu {
        TopoGpu { index, compute_capability: Some(cc.into()), affinity_from: "none".into(), ..TopoGpu::default() }
    }

    #[test]
    fn cells_say_the_link_and_mark_a_pair_without_peer_to_peer() {
        let pcie = topology("pcie-2x5090-no-p2p");
        assert_eq!(cell_text(&pcie, 0, 0), "X");
        assert_eq!(cell_text(&pcie, 0, 1), "PHB ✖");
        assert_eq!(cell_text(&pcie, 1, 0), "PHB ✖");
        assert_eq!(cell_text(&pcie, 0, 7), "?", "no such pair");
        let hover = pair_hover(pcie.pair(0, 1).unwrap());
        assert!(hover.starts_with("GPU0 ↔ GPU1: PHB (PCIe and a PCIe host bridge (typically the CPU))"), "{hover}");
        assert!(hover.contains("P2P read: GNS (GPU not supported)\nP2P write: GNS (GPU not supported)"), "{hover}");
        assert!(hover.contains("P2P atomics: not reported"), "{hover}");
        assert!(hover.contains("✖ Peer-to-peer is not available (GPU not supported)"), "{hover}");
        let hgx = topology("hgx-h100-nvlink");
        assert_eq!(cell_text(&hgx, 3, 6), "NV18");
        assert!(!pair_hover(hgx.pair(3, 6).unwrap()).contains('✖'));
        assert_eq!(cell_text(&topology("two-socket-8x4090"), 0, 4), "SYS");
    }

    #[test]
    fn links_are_coloured_by_how_close_they_are() {
        assert_eq!(LinkClass::of(LinkKind::Nvlink { links: 18 }), LinkClass::Nvlink);
        assert_eq!(LinkClass::of(LinkKind::Pix), LinkClass::Switch);
        assert_eq!(LinkClass::of(LinkKind::Pxb), LinkClass::Switch);
        assert_eq!(LinkClass::of(LinkKind::Internal), LinkClass::Switch);
        assert_eq!(LinkClass::of(LinkKind::Phb), LinkClass::HostBridge);
        assert_eq!(LinkClass::of(LinkKind::Node), LinkClass::HostBridge);
        assert_eq!(LinkClass::of(LinkKind::Sys), LinkClass::AcrossSockets);
        assert_eq!(LinkClass::of(LinkKind::Unknown), LinkClass::Unknown);
        // Each class has its own colour on either theme.
        for dark in [true, false] {
            let mut colours: Vec<Color32> = LinkClass::LEGEND.iter().map(|(c, _)| c.color(dark)).collect();
            colours.push(LinkClass::Unknown.color(dark));
            colours.sort_by_key(|c| c.to_array());
            colours.dedup();
            assert_eq!(colours.len(), 5);
        }
    }

    #[test]
    fn the_cuda_order_line_marks_where_it_differs_from_nvidia_smi() {
        // GPU0 is an RTX 3090 (8.6), GPU1 an RTX 4090 (8.9): fastest first puts GPU1 first.
        let gpus = [gpu(0, "8.6"), gpu(1, "8.9")];
        let (lines, differs) = cuda_order_lines(&CudaOrder::derive(&gpus, None, None));
        assert!(differs);
        assert_eq!(lines[0], "CUDA device 0 = GPU1, 1 = GPU0 (fastest first)");
        assert_eq!(lines[1], "With CUDA_DEVICE_ORDER=PCI_BUS_ID: CUDA device 0 = GPU0, 1 = GPU1 (nvidia-smi's order)");
        let (lines, differs) = cuda_order_lines(&CudaOrder::derive(&gpus, Some("PCI_BUS_ID"), Some("1,7")));
        assert!(!differs);
        assert_eq!(lines[0], "CUDA device 0 = GPU1 (CUDA_DEVICE_ORDER=PCI_BUS_ID: PCI bus order)");
        assert_eq!(lines[1], "CUDA_VISIBLE_DEVICES=\"1,7\"");
        assert_eq!(lines[2], "CUDA_VISIBLE_DEVICES entry \"7\" names no GPU: CUDA hides it and every entry after it");
        let (lines, differs) = cuda_order_lines(&CudaOrder::derive(&[gpu(0, "9.0"), gpu(1, "9.0")], None, None));
        assert!(!differs);
        assert_eq!(
            lines,
            [
                "CUDA device 0 = GPU0, 1 = GPU1 (fastest first)",
                "CUDA_DEVICE_ORDER=PCI_BUS_ID would change nothing here"
            ]
        );
    }

    #[test]
    fn mig_and_affinity_words() {
        let mig = topology("mig-a100");
        assert_eq!(mig_text(&mig.gpus[0]), "on · 7 devices");
        assert_eq!(affinity_line(&mig.gpus[0]), None);
        let lines = mig_lines(&mig.gpus[0]);
        assert_eq!(lines.len(), 8);
        assert_eq!(lines[7], "    MIG 1g.10gb device 6: MIG-1aae4990-b962-574e-8375-119d6d9b9687");
        let mut off = gpu(0, "8.0");
        off.mig = Some(MigFacts { enabled: false, instances: None });
        assert_eq!(mig_text(&off), "off");
        off.mig = Some(MigFacts {
            enabled: true,
            instances: Some(vec![MigInstance { device: 0, profile: None, uuid: None }]),
        });
        assert_eq!(mig_text(&off), "on · 1 device");
        assert_eq!(mig_text(&gpu(0, "8.9")), "");
        let hgx = topology("hgx-h100-nvlink");
        assert_eq!(affinity_line(&hgx.gpus[7]).unwrap(), "GPU7: NUMA node 1, CPUs 56-111,168-223 (from nvml)");
    }

    #[test]
    fn a_topology_that_could_not_be_read_says_why_in_one_line() {
        let mut snap = fixture_report("pcie-2x5090-no-p2p").snapshot;
        assert_eq!(missing_line(&snap), None);
        snap.topology = Probed::Failed { error: "nvidia-smi topo -m timed out".into() };
        assert_eq!(missing_line(&snap).unwrap(), "GPU topology could not be read: nvidia-smi topo -m timed out");
        snap.topology = Probed::Unsupported { reason: "NVML has no topology calls".into() };
        assert_eq!(missing_line(&snap).unwrap(), "GPU topology not known: NVML has no topology calls");
        let none = fixture_report("no-driver").snapshot;
        assert_eq!(missing_line(&none), None, "no GPU: the verdict says why");
    }

    /// The Overview of each multi-GPU scenario draws its matrix; the MIG one its lines, no grid.
    #[test]
    fn the_overview_draws_the_matrix_of_each_scenario() {
        let (mut h, _home) = harness("hgx-h100-nvlink");
        settle(&mut h);
        h.get_by_label("GPU topology");
        assert_eq!(h.query_all_by_label("NV18").count(), 56);
        assert_eq!(h.query_all_by_label("X").count(), 8);
        assert_eq!(h.query_all_by_label("56-111,168-223").count(), 4);
        assert!(h.query_by_label_contains("✖").is_none(), "every pair has peer-to-peer");
        h.get_by_label("NV#: NVLink");
        h.get_by_label("CUDA device 0 = GPU0, 1 = GPU1, 2 = GPU2, 3 = GPU3, 4 = GPU4, 5 = GPU5, 6 = GPU6, 7 = GPU7 (fastest first)");
        h.get_by_label("CUDA_DEVICE_ORDER=PCI_BUS_ID would change nothing here");
        assert!(h.query_by_label("MIG").is_none(), "no GPU reported its MIG mode: no MIG column");
        // Health and containers have their line in the machine table above.
        h.get_by_label("Health");
        h.get_by_label("Containers");

        let (mut h, _home) = harness("two-socket-8x4090");
        settle(&mut h);
        assert_eq!(h.query_all_by_label("SYS").count(), 56);
        assert_eq!(h.query_all_by_label("0-55,112-167").count(), 4);

        let (mut h, _home) = harness("mig-a100");
        settle(&mut h);
        h.get_by_label("GPU topology");
        h.get_by_label("GPU0: MIG on · 7 devices");
        h.get_by_label("    MIG 1g.10gb device 6: MIG-1aae4990-b962-574e-8375-119d6d9b9687");
        assert!(h.query_by_label("X").is_none(), "one GPU: no grid");
        assert!(h.query_by_label("CUDA order").is_none(), "one GPU and no CUDA_VISIBLE_DEVICES: nothing to order");

        let one = fixture_report("windows-wddm").snapshot.topology.value().map(|t| t.gpus.len());
        assert_eq!(one, Some(1), "the scenario has one GPU and its topology");
        let (mut h, _home) = harness("windows-wddm");
        settle(&mut h);
        assert!(h.query_by_label("GPU topology").is_none(), "one GPU and nothing to say of it: no section");
    }

    /// The Report page's preview is the document in a fixed-width font, so the matrix keeps its columns.
    #[test]
    fn the_report_preview_shows_the_matrix_in_columns() {
        let (mut h, _home) = harness("pcie-2x5090-no-p2p");
        settle(&mut h);
        h.get_by_label("Report").click();
        h.run_steps(2);
        h.get_by_label_contains(
            "        GPU0    GPU1    CPU Affinity    NUMA Affinity\nGPU0    X       PHB     0-63            0",
        );
    }

    #[test]
    fn a_pair_without_peer_to_peer_is_marked_and_says_why_on_hover() {
        let (mut h, _home) = harness("pcie-2x5090-no-p2p");
        h.ctx.all_styles_mut(|s| s.interaction.tooltip_delay = 0.0);
        settle(&mut h);
        assert_eq!(h.query_all_by_label("PHB ✖").count(), 2);
        h.get_by_label("✖ peer-to-peer not available (hover a cell)");
        h.get_all_by_label("PHB ✖").next().unwrap().hover();
        h.run_steps(3);
        h.get_by_label_contains("P2P read: GNS (GPU not supported)");
    }
}
