//! Queries on the link table: PCIe generations by rate, a link's theoretical payload, and what a
//! Thunderbolt/USB4 tunnel lets through.

use super::{LinkRow, LinkTable, NvlinkGen, PcieGen};

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

    /// The NVLink generation of NVML's NVLink `version`, as a GPU of compute capability `cc` runs
    /// it: the row for that capability where there is one (GA102's narrower NVLink 3), else the
    /// generation's own row.
    pub fn nvlink_gen(&self, version: u32, cc: Option<&str>) -> Option<&NvlinkGen> {
        let for_cc = cc.and_then(|cc| {
            self.nvlink.iter().find(|n| n.version == version && n.compute_capability.as_deref() == Some(cc.trim()))
        });
        for_cc.or_else(|| self.nvlink.iter().find(|n| n.version == version && n.compute_capability.is_none()))
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
}
