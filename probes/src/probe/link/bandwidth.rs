//! PCIe arithmetic: sysfs link speeds to generations, and generations and lanes to GB/s.

/// Per-lane signalling rate of each PCIe generation, GT/s.
const GT_PER_S: [(u32, f64); 6] = [(1, 2.5), (2, 5.0), (3, 8.0), (4, 16.0), (5, 32.0), (6, 64.0)];

/// The PCIe generation for a sysfs link speed: `"8.0 GT/s PCIe"` (or older kernels' `"8 GT/s"`)
/// → 3. `None` for `Unknown`, an unlisted rate, or anything that is not a link speed.
pub fn parse_link_speed(text: &str) -> Option<u32> {
    let mut words = text.split_whitespace();
    let number = words.next()?;
    let rate: f64 = number.parse().ok()?;
    if words.next() != Some("GT/s") {
        return None;
    }
    GT_PER_S.iter().find(|(_, gt)| (gt - rate).abs() < 0.05).map(|(generation, _)| *generation)
}

/// The lane count from `current_link_width`/`max_link_width` (`"16"`); `None` for 0 (link down),
/// more than 32 lanes, or text that is not a number.
pub fn parse_link_width(text: &str) -> Option<u32> {
    text.trim().parse::<u32>().ok().filter(|w| (1..=32).contains(w))
}

/// The per-lane rate of a generation in GT/s; `None` for an unknown generation.
pub fn gt_per_s(generation: u32) -> Option<f64> {
    GT_PER_S.iter().find(|(g, _)| *g == generation).map(|(_, gt)| *gt)
}

/// Line-code efficiency: 8b/10b for Gen1–2, 128b/130b for Gen3 and later (Gen6's FLIT
/// overhead is not modelled; 128b/130b stands in for it).
fn encoding(generation: u32) -> (f64, &'static str) {
    if generation <= 2 { (8.0 / 10.0, "8/10") } else { (128.0 / 130.0, "128/130") }
}

/// Theoretical payload bandwidth of a PCIe link in GB/s per direction:
/// rate (GT/s) × lanes × encoding ÷ 8. `None` for an unknown generation or 0 or more than 32 lanes.
pub fn pcie_gbytes_per_s(generation: u32, lanes: u32) -> Option<f64> {
    let gt = gt_per_s(generation)?;
    if !(1..=32).contains(&lanes) {
        return None;
    }
    Some(gt * f64::from(lanes) * encoding(generation).0 / 8.0)
}

/// How `pcie_gbytes_per_s` got its number, for people: `16 GT/s × 16 lanes × 128/130 ÷ 8`.
pub fn pcie_formula(generation: u32, lanes: u32) -> Option<String> {
    let gt = gt_per_s(generation)?;
    Some(format!("{gt} GT/s × {lanes} lanes × {} ÷ 8", encoding(generation).1))
}

/// What a Thunderbolt/USB4 tunnel lets through for PCIe, GB/s per direction, with a one-line
/// reason. `tb_generation` is the tunnel's generation (3 = TB3, 4 = USB4/TB4) and `link_gbps` the
/// Thunderbolt link rate (lanes × per-lane speed). `None` when neither tells the tunnel's class.
pub fn tunnel_cap(tb_generation: Option<u32>, link_gbps: Option<f64>) -> Option<(f64, String)> {
    let tb_gen = tb_generation.unwrap_or(0);
    if tb_gen >= 5 || link_gbps.is_some_and(|g| g >= 80.0) {
        let cap = pcie_gbytes_per_s(4, 4)?;
        return Some((cap, format!("Thunderbolt 5 / USB4 v2 tunnels PCIe 4.0 x4 (64 Gb/s) ≈ {cap:.2} GB/s")));
    }
    match tb_gen {
        4 => Some((4.0, "Thunderbolt 4 / USB4 40G carries at least 32 Gb/s of PCIe ≈ 4.0 GB/s".to_owned())),
        3 => Some((2.75, "Thunderbolt 3 controllers carry ≈ 22 Gb/s of PCIe data ≈ 2.75 GB/s".to_owned())),
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn link_speeds_map_to_generations() {
        let table = [
            ("2.5 GT/s PCIe", Some(1)),
            ("5.0 GT/s PCIe", Some(2)),
            ("8.0 GT/s PCIe\n", Some(3)),
            ("16.0 GT/s PCIe", Some(4)),
            ("32.0 GT/s PCIe", Some(5)),
            ("64.0 GT/s PCIe", Some(6)),
            ("8 GT/s", Some(3)),
            ("2.5 GT/s", Some(1)),
            ("5 GT/s", Some(2)),
        ];
        for (text, want) in table {
            assert_eq!(parse_link_speed(text), want, "{text:?}");
        }
    }

    #[test]
    fn garbage_link_speeds_are_none() {
        for bad in
            ["", "Unknown", "Unknown speed", "8.0", "8.0 Gb/s", "GT/s", "7.0 GT/s PCIe", "NaN GT/s", "-8 GT/s", "\u{0}"]
        {
            assert_eq!(parse_link_speed(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn link_widths_parse_and_garbage_does_not() {
        assert_eq!(parse_link_width("16\n"), Some(16));
        assert_eq!(parse_link_width("1"), Some(1));
        for bad in ["", "0", "x16", "64", "-4", "255", "sixteen"] {
            assert_eq!(parse_link_width(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn pcie_bandwidth_table() {
        let table = [
            (1, 1, 0.25),
            (1, 16, 4.0),
            (2, 16, 8.0),
            (3, 4, 3.938),
            (3, 16, 15.754),
            (4, 4, 7.877),
            (4, 16, 31.508),
            (5, 16, 63.015),
            (6, 16, 126.031),
        ];
        for (generation, lanes, want) in table {
            let got = pcie_gbytes_per_s(generation, lanes).unwrap();
            assert!((got - want).abs() < 0.001, "Gen{generation} x{lanes}: {got}");
        }
        for (generation, lanes) in [(0, 16), (7, 16), (3, 0), (3, 33)] {
            assert_eq!(pcie_gbytes_per_s(generation, lanes), None);
        }
        assert_eq!(pcie_formula(4, 16).unwrap(), "16 GT/s × 16 lanes × 128/130 ÷ 8");
        assert_eq!(pcie_formula(1, 1).unwrap(), "2.5 GT/s × 1 lanes × 8/10 ÷ 8");
    }

    #[test]
    fn tunnels_cap_by_generation_and_link_rate() {
        assert_eq!(tunnel_cap(Some(3), Some(40.0)).unwrap().0, 2.75);
        assert_eq!(tunnel_cap(Some(4), Some(40.0)).unwrap().0, 4.0);
        assert!((tunnel_cap(Some(4), Some(80.0)).unwrap().0 - 7.877).abs() < 0.001);
        assert!(tunnel_cap(Some(5), None).is_some());
        assert!(tunnel_cap(None, None).is_none());
        assert!(tunnel_cap(Some(2), Some(20.0)).is_none());
    }
}
