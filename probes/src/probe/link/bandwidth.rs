//! PCIe arithmetic: sysfs link speeds to generations, and generations and lanes to GB/s. The rates,
//! line codes and tunnel caps are rows of the knowledge base (`assets/compat/links.toml`); these
//! functions read them through [`Kb::get`] and answer `None` when it did not load.

use gpu_doctor_kb::{Kb, LinkTable};
#[cfg(test)]
use gpu_doctor_kb::{pcie_formula, pcie_gbytes_per_s};

fn links() -> Option<&'static LinkTable> {
    Kb::get().ok().map(|kb| &kb.links)
}

/// The PCIe generation for a sysfs link speed: `"8.0 GT/s PCIe"` (or older kernels' `"8 GT/s"`)
/// → 3. `None` for `Unknown`, an unlisted rate, or anything that is not a link speed.
pub fn parse_link_speed(text: &str) -> Option<u32> {
    let mut words = text.split_whitespace();
    let number = words.next()?;
    let rate: f64 = number.parse().ok()?;
    if words.next() != Some("GT/s") {
        return None;
    }
    links()?.generation_for_rate(rate)
}

/// The lane count from `current_link_width`/`max_link_width` (`"16"`); `None` for 0 (link down),
/// more than 32 lanes, or text that is not a number.
pub fn parse_link_width(text: &str) -> Option<u32> {
    text.trim().parse::<u32>().ok().filter(|w| (1..=32).contains(w))
}

/// What a Thunderbolt/USB4 tunnel lets through for PCIe, GB/s per direction, with a one-line
/// reason: see [`LinkTable::tunnel_cap`].
pub fn tunnel_cap(tb_generation: Option<u32>, link_gbps: Option<f64>) -> Option<(f64, String)> {
    links()?.tunnel_cap(tb_generation, link_gbps)
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
            // Gen6 FLIT mode: 242 of every 256 bytes carry payload (links.toml), not 128b/130b.
            (6, 16, 121.0),
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
        assert_eq!(pcie_formula(6, 16).unwrap(), "64 GT/s × 16 lanes × 242/256 ÷ 8");
    }

    #[test]
    fn tunnels_cap_by_generation_and_link_rate() {
        assert_eq!(tunnel_cap(Some(3), Some(40.0)).unwrap().0, 2.75);
        assert_eq!(tunnel_cap(Some(4), Some(40.0)).unwrap().0, 4.0);
        assert_eq!(tunnel_cap(Some(4), Some(80.0)).unwrap().0, 7.9, "80 Gb/s is TB5: links.toml's thunderbolt5 row");
        assert!(tunnel_cap(Some(5), None).is_some());
        assert!(tunnel_cap(None, None).is_none());
        assert!(tunnel_cap(Some(2), Some(20.0)).is_none());
    }
}
