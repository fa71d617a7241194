//! Queries on the link table: PCIe generations by rate, a link's theoretical payload, and what a
//! Thunderbolt/USB4 tunnel lets through.

use super::{Kb, LinkRow, LinkTable, NvlinkGen, PcieGen, ProductRow};
use gpu_doctor_model::{ComputeCapability, TopoGpu};

/// The NVLink generation (1 = P100 … 5 = B200, the key of `links.toml`'s `[[nvlink]]` rows) of a link
/// for which NVML's `nvmlDeviceGetNvLinkVersion` answered `nvml_version`, on a GPU of compute
/// capability `cc`. `None` for `NVML_NVLINK_VERSION_INVALID` (0), or a value NVML does not define on a
/// GPU whose architecture does not say.
///
/// NVML answers with its own enum, not the generation: `nvmlNvlinkVersion_t` 1.0 = 1, 2.0 = 2,
/// 2.2 = 3, 3.0 = 4, 3.1 = 5, 4.0 = 6, 5.0 = 7 (NVIDIA/DCGM:sdk/nvidia/nvml/dcgm_nvml.h lines 909-922
/// at 72fa3fea, its copy of nvml.h; open-mpi/hwloc:hwloc/topology-nvml.c lines 386-400 at 3b37b024
/// maps the same values). Boards do not keep to it either: A100s answer 5 (open-mpi/hwloc#658), RTX
/// 3090s 5 (Syllo/nvtop#469), H100s 7, the 5.0 of Blackwell (public NCCL benchmark code works around
/// `nvmlDeviceGetNvLinkVersion` returning `NVML_NVLINK_VERSION_5_0` "for H100 GPUs unexpectedly" by
/// the device's architecture). So the architecture decides wherever it is known, as NCCL sizes
/// NVLinks by compute capability alone (NVIDIA/nccl:src/graph/topo.h lines 274-281 at 5067397c,
/// `ncclTopoNVLinkBw`); the enum only where the capability is unknown or not one below.
pub fn nvlink_generation(nvml_version: u32, cc: Option<ComputeCapability>) -> Option<u32> {
    if nvml_version == 0 {
        return None;
    }
    // The generation of each architecture's NVLinks (https://en.wikipedia.org/wiki/NVLink, the
    // table of versions and the GPUs that use them).
    let by_arch = cc.and_then(|cc| match (cc.major, cc.minor) {
        // GP100 (P100).
        (6, 0) => Some(1),
        // GV100 (V100); TU102/TU104 (Quadro RTX, TITAN RTX) on an NVLink bridge.
        (7, 0) | (7, 5) => Some(2),
        // GA100 (A100); GA102 (RTX 3090, RTX A6000) on an NVLink bridge.
        (8, 0) | (8, 6) => Some(3),
        // GH100 (H100, H200, GH200).
        (9, 0) => Some(4),
        // Blackwell (B200, GB200) and Blackwell Ultra (B300, GB300).
        (10, 0) | (10, 3) => Some(5),
        _ => None,
    });
    let by_enum = match nvml_version {
        1 => Some(1),
        2 | 3 => Some(2),
        4 | 5 => Some(3),
        6 => Some(4),
        7 => Some(5),
        _ => None,
    };
    by_arch.or(by_enum)
}

/// The NVLink generation of a GPU's active links (1 = P100 … 5 = B200): NVML's answer read with the
/// GPU's architecture ([`nvlink_generation`]), the highest where links differ; `None` without an
/// active link NVML gave a version for.
pub fn gpu_nvlink_generation(gpu: &TopoGpu) -> Option<u32> {
    let cc = gpu.compute_capability.as_deref().and_then(|c| c.parse::<ComputeCapability>().ok());
    gpu.nvlinks.iter().filter(|l| l.active).filter_map(|l| nvlink_generation(l.version?, cc)).max()
}

impl PcieGen {
    /// Payload per lane per direction, GB/s: rate × the payload share of the line ÷ 8.
    pub fn gbytes_per_s_per_lane(&self) -> f64 {
        let [payload, line] = self.payload_per_line;
        if line == 0 {
            return 0.0;
        }
        self.gt_per_s * f64::from(payload) / f64::from(line) / 8.0
    }
}

impl Kb {
    /// The link over which a GPU named `name` reaches host memory where its product is not a PCIe
    /// board (GH200: NVLink-C2C), with the product row that says so; `None` for a PCIe board, a
    /// name no single product row claims, or a key `links.toml` lacks.
    pub fn product_host_link(&self, name: &str) -> Option<(&ProductRow, &LinkRow)> {
        let product = self.gpus.product_for_name(name)?;
        let row = self.links.link(product.host_link.as_deref()?)?;
        Some((product, row))
    }
}

impl LinkTable {
    /// The row of PCIe generation `generation`.
    pub fn pcie_gen(&self, generation: u32) -> Option<&PcieGen> {
        self.pcie.iter().find(|p| p.generation == generation)
    }

    /// The generation whose per-lane rate is `gt_per_s` (within 0.05 GT/s).
    pub fn generation_for_rate(&self, gt_per_s: f64) -> Option<u32> {
        self.pcie.iter().find(|p| (p.gt_per_s - gt_per_s).abs() < 0.05).map(|p| p.generation)
    }

    /// Theoretical payload bandwidth of a PCIe link in GB/s per direction:
    /// rate (GT/s) × lanes × payload share ÷ 8. `None` for an unknown generation or 0 or more than 32 lanes.
    pub fn pcie_gbytes_per_s(&self, generation: u32, lanes: u32) -> Option<f64> {
        let row = self.pcie_gen(generation)?;
        (1..=32).contains(&lanes).then(|| row.gbytes_per_s_per_lane() * f64::from(lanes))
    }

    /// How [`Self::pcie_gbytes_per_s`] got its number, for people: `16 GT/s × 16 lanes × 128/130 ÷ 8`.
    pub fn pcie_formula(&self, generation: u32, lanes: u32) -> Option<String> {
        let row = self.pcie_gen(generation)?;
        let [payload, line] = row.payload_per_line;
        Some(format!("{} GT/s × {lanes} lanes × {payload}/{line} ÷ 8", row.gt_per_s))
    }

    /// The row of NVLink generation `generation` (not NVML's answer: [`nvlink_generation`] turns that
    /// into a generation), as a GPU of compute capability `cc` runs it: the row for that capability
    /// where there is one (GA102's narrower NVLink 3), else the generation's own row.
    pub fn nvlink_gen(&self, generation: u32, cc: Option<&str>) -> Option<&NvlinkGen> {
        let for_cc = cc.and_then(|cc| {
            self.nvlink.iter().find(|n| n.version == generation && n.compute_capability.as_deref() == Some(cc.trim()))
        });
        for_cc.or_else(|| self.nvlink.iter().find(|n| n.version == generation && n.compute_capability.is_none()))
    }

    /// The named link row with this key.
    pub fn link(&self, key: &str) -> Option<&LinkRow> {
        self.link.iter().find(|l| l.key == key)
    }

    /// What a Thunderbolt/USB4 tunnel lets through for PCIe, GB/s per direction, with a one-line
    /// reason: the `thunderbolt<N>` row's theoretical value. `tb_generation` is the tunnel's
    /// generation (3 = TB3, 4 = USB4/TB4, 5 = TB5/USB4 v2) and `link_gbps` the Thunderbolt link rate
    /// (lanes × per-lane speed; 80 Gb/s or more is TB5). `None` when neither tells the tunnel's class
    /// or the table has no row for it.
    pub fn tunnel_cap(&self, tb_generation: Option<u32>, link_gbps: Option<f64>) -> Option<(f64, String)> {
        let tb_gen = tb_generation.unwrap_or(0);
        let class = if tb_gen >= 5 || link_gbps.is_some_and(|g| g >= 80.0) { 5 } else { tb_gen };
        if !(3..=5).contains(&class) {
            return None;
        }
        let row = self.link(&format!("thunderbolt{class}"))?;
        let why = row.pcie_tunnel.as_deref()?;
        let cap = row.theoretical_gbytes_per_s;
        Some((cap, format!("{why} ≈ {cap:?} GB/s")))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::super::{Kb, LinkTable};
    use super::nvlink_generation;
    use gpu_doctor_model::ComputeCapability;

    const LINKS: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/compat/links.toml"));

    /// The table with one piece of text replaced (which must be there).
    fn edited(from: &str, to: &str) -> LinkTable {
        assert!(LINKS.contains(from), "links.toml no longer holds {from:?}");
        toml::from_str(&LINKS.replacen(from, to, 1)).unwrap()
    }

    #[test]
    fn pcie_answers_come_from_the_rows() {
        let kb = &Kb::get().unwrap().links;
        for row in &kb.pcie {
            let [payload, line] = row.payload_per_line;
            let want = row.gt_per_s * f64::from(payload) / f64::from(line) / 8.0 * 16.0;
            assert_eq!(kb.pcie_gbytes_per_s(row.generation, 16), Some(want), "Gen{}", row.generation);
            assert_eq!(kb.generation_for_rate(row.gt_per_s), Some(row.generation));
        }
        // Changing nothing but a row changes the answers.
        let t = edited("gt_per_s = 16.0\npayload_per_line = [128, 130]", "gt_per_s = 20.0\npayload_per_line = [1, 1]");
        assert_eq!(t.pcie_gbytes_per_s(4, 8), Some(20.0));
        assert_eq!(t.pcie_formula(4, 8).unwrap(), "20 GT/s × 8 lanes × 1/1 ÷ 8");
        assert_eq!(t.generation_for_rate(20.0), Some(4));
        assert_eq!(t.generation_for_rate(16.0), None);
    }

    #[test]
    fn tunnel_caps_come_from_the_thunderbolt_rows() {
        let kb = &Kb::get().unwrap().links;
        for (generation, key) in [(3, "thunderbolt3"), (4, "thunderbolt4"), (5, "thunderbolt5")] {
            let row = kb.link(key).unwrap();
            let (cap, why) = kb.tunnel_cap(Some(generation), None).unwrap();
            assert_eq!(cap, row.theoretical_gbytes_per_s, "{key}");
            assert!(why.starts_with(row.pcie_tunnel.as_deref().unwrap()), "{why}");
        }
        let t = edited("theoretical_gbytes_per_s = 2.75", "theoretical_gbytes_per_s = 2.5");
        assert_eq!(t.tunnel_cap(Some(3), Some(40.0)).unwrap().0, 2.5);
        let t = edited("pcie_tunnel = \"Thunderbolt 3 controllers carry \u{2248} 22 Gb/s of PCIe data\"\n", "");
        assert_eq!(t.tunnel_cap(Some(3), None), None, "a row without a tunnel phrase caps nothing");
    }

    /// What NVML really answers per GPU family (`nvmlNvlinkVersion_t`, not the generation), read with
    /// the family's compute capability, lands on that family's `links.toml` row: the per-link rate
    /// the GPU-to-GPU copies are judged against.
    #[test]
    fn nvml_nvlink_versions_map_to_the_generation_of_each_family() {
        let kb = &Kb::get().unwrap().links;
        let cc = |s: &str| s.parse::<ComputeCapability>().unwrap();
        // (family, capability, what NVML answers, generation, the row's rate per link and GPUs)
        let families = [
            ("P100", "6.0", &[1][..], 1, 20.0, "P100"),
            // 2.2 (3) on V100s is the enum's other 2.x value.
            ("V100", "7.0", &[2, 3], 2, 25.0, "V100"),
            // 3.0 by the enum; A100s answer 5 (3.1) (open-mpi/hwloc#658).
            ("A100", "8.0", &[4, 5], 3, 25.0, "A100"),
            // RTX 3090 answers 5 (Syllo/nvtop#469); its row is GA102's narrower link.
            ("GA102 (RTX 3090, RTX A6000)", "8.6", &[4, 5], 3, 14.0625, "GA102"),
            // 4.0 by the enum (6); H100 and H200 boards answer 7, the enum's 5.0.
            ("H100/H200", "9.0", &[6, 7], 4, 25.0, "H100/H200"),
            ("B200", "10.0", &[7], 5, 50.0, "B200"),
        ];
        for (family, c, answers, generation, rate, gpus) in families {
            for &nvml in answers {
                let got = nvlink_generation(nvml, Some(cc(c)));
                assert_eq!(got, Some(generation), "{family} answering {nvml}");
                let row = kb.nvlink_gen(generation, Some(c)).unwrap();
                assert_eq!(row.gbytes_per_s_per_link, rate, "{family} answering {nvml}: {row:?}");
                assert!(row.gpus.starts_with(gpus), "{family} answering {nvml}: {row:?}");
            }
        }
        // Without a capability, NVML's enum: 3.1 is NVLink 3, 5.0 NVLink 5; invalid or undefined is none.
        assert_eq!(nvlink_generation(5, None), Some(3));
        assert_eq!(nvlink_generation(7, None), Some(5));
        assert_eq!(nvlink_generation(0, Some(cc("9.0"))), None, "NVML_NVLINK_VERSION_INVALID");
        assert_eq!(nvlink_generation(9, None), None);
        // A capability without NVLinks here leaves it to the enum.
        assert_eq!(nvlink_generation(6, Some(cc("12.0"))), Some(4));
    }
}
