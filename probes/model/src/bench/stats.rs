//! Summary statistics of repeated measurements: median and spread, robust to a slow outlier.

use serde::{Deserialize, Serialize};

/// The distribution of repeated measurements of one quantity, in that quantity's unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// How many finite values went in.
    pub n: u32,
    /// The middle value (the mean of the two middle values for an even count).
    pub median: f64,
    /// 25th percentile (linear interpolation between order statistics).
    pub p25: f64,
    /// 75th percentile.
    pub p75: f64,
    /// Interquartile range, `p75 - p25`: the spread.
    pub iqr: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
}

impl Stats {
    /// Summarises `values`, ignoring NaN and infinities; `None` when no finite value is left.
    pub fn from_samples(values: &[f64]) -> Option<Self> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let p25 = percentile_sorted(&v, 0.25);
        let p75 = percentile_sorted(&v, 0.75);
        let n = u32::try_from(v.len()).unwrap_or(u32::MAX);
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        Some(Self {
            n,
            median: percentile_sorted(&v, 0.5),
            p25,
            p75,
            iqr: p75 - p25,
            min: v[0],
            max: v[v.len() - 1],
            mean,
        })
    }

    /// The spread relative to the median (`iqr / median`); 0 when the median is 0.
    pub fn relative_spread(&self) -> f64 {
        if self.median == 0.0 { 0.0 } else { self.iqr / self.median.abs() }
    }

    /// The same distribution in another unit: every value times `factor` (> 0).
    pub fn scale(&self, factor: f64) -> Self {
        Self {
            n: self.n,
            median: self.median * factor,
            p25: self.p25 * factor,
            p75: self.p75 * factor,
            iqr: self.iqr * factor,
            min: self.min * factor,
            max: self.max * factor,
            mean: self.mean * factor,
        }
    }

    /// The same distribution seen through a monotonically decreasing map such as `bytes / seconds`:
    /// order statistics swap ends (the slowest time gives the lowest bandwidth).
    pub fn map_decreasing(&self, f: impl Fn(f64) -> f64) -> Self {
        let (p25, p75) = (f(self.p75), f(self.p25));
        Self {
            n: self.n,
            median: f(self.median),
            p25,
            p75,
            iqr: p75 - p25,
            min: f(self.max),
            max: f(self.min),
            mean: f(self.mean),
        }
    }
}

/// The `q` quantile (0–1) of sorted, non-empty values, interpolating linearly between neighbours.
fn percentile_sorted(sorted: &[f64], q: f64) -> f64 {
    #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "pos is clamped to 0..=len-1")]
    {
        let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
        let lo = pos.floor() as usize;
        let hi = pos.ceil() as usize;
        let frac = pos - lo as f64;
        sorted[lo] + (sorted[hi] - sorted[lo]) * frac
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn odd_and_even_counts() {
        let s = Stats::from_samples(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.n, s.median, s.min, s.max, s.mean), (3, 2.0, 1.0, 3.0, 2.0));
        let s = Stats::from_samples(&[4.0, 1.0, 2.0, 3.0]).unwrap();
        assert_eq!(s.median, 2.5);
        assert_eq!((s.p25, s.p75), (1.75, 3.25));
        assert_eq!(s.iqr, 1.5);
    }

    #[test]
    fn one_value_has_no_spread() {
        let s = Stats::from_samples(&[7.0]).unwrap();
        assert_eq!((s.median, s.p25, s.p75, s.iqr, s.min, s.max), (7.0, 7.0, 7.0, 0.0, 7.0, 7.0));
        assert_eq!(s.relative_spread(), 0.0);
    }

    #[test]
    fn a_slow_outlier_moves_the_mean_not_the_median() {
        let s = Stats::from_samples(&[10.0, 10.0, 10.0, 10.0, 1000.0]).unwrap();
        assert_eq!(s.median, 10.0);
        assert!(s.mean > 200.0);
        assert_eq!(s.iqr, 0.0);
    }

    #[test]
    fn non_finite_values_are_ignored_and_nothing_left_is_none() {
        let s = Stats::from_samples(&[f64::NAN, 1.0, f64::INFINITY]).unwrap();
        assert_eq!((s.n, s.median), (1, 1.0));
        assert!(Stats::from_samples(&[]).is_none());
        assert!(Stats::from_samples(&[f64::NAN]).is_none());
    }

    #[test]
    fn scaling_changes_the_unit() {
        let s = Stats::from_samples(&[1e-6, 2e-6, 3e-6]).unwrap().scale(1e6);
        assert!((s.median - 2.0).abs() < 1e-9 && (s.max - 3.0).abs() < 1e-9);
    }

    #[test]
    fn times_become_bandwidths_with_the_ends_swapped() {
        let t = Stats::from_samples(&[1.0, 2.0, 4.0]).unwrap();
        let bw = t.map_decreasing(|secs| 8.0 / secs);
        assert_eq!((bw.min, bw.median, bw.max), (2.0, 4.0, 8.0));
        assert!(bw.p25 <= bw.median && bw.median <= bw.p75);
    }

    proptest! {
        #[test]
        fn order_holds(values in prop::collection::vec(-1e9f64..1e9, 1..64)) {
            let s = Stats::from_samples(&values).unwrap();
            prop_assert!(s.min <= s.p25 && s.p25 <= s.median && s.median <= s.p75 && s.p75 <= s.max);
            prop_assert!(s.iqr >= 0.0);
            prop_assert!(s.min <= s.mean + 1e-6 && s.mean <= s.max + 1e-6);
        }
    }
}
