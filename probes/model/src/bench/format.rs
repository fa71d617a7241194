//! Numbers for people: sizes in binary units, values with sensible precision.

/// `4096` → `4 KiB`, `1610612736` → `1.5 GiB`.
pub fn bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if (v - v.round()).abs() < 0.05 { format!("{v:.0} {}", UNITS[unit]) } else { format!("{v:.1} {}", UNITS[unit]) }
}

/// A value with three significant digits or so: `4317`, `43.2`, `0.812`.
pub fn value(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(4096), "4 KiB");
        assert_eq!(bytes(1 << 30), "1 GiB");
        assert_eq!(bytes(3 << 29), "1.5 GiB");
    }

    #[test]
    fn values() {
        assert_eq!(value(4317.4), "4317");
        assert_eq!(value(43.21), "43.2");
        assert_eq!(value(2.345), "2.35");
        assert_eq!(value(0.8123), "0.812");
        assert_eq!(value(0.0), "0");
    }
}
