//! A tiny deterministic random source (SplitMix64) for test data and memory patterns: the same
//! seed gives the same data on the host and in any later check.

/// SplitMix64 (Steele, Lea, Flood 2014): one 64-bit state, one multiply-xorshift output.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

/// The output function of SplitMix64 applied to one value: a stateless hash of `x`.
pub fn mix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl SplitMix64 {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let out = mix64(self.state);
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        out
    }

    /// A float uniformly in [-1, 1).
    pub fn next_f32_signed(&mut self) -> f32 {
        // 24 random bits give every float in [0, 1) with spacing 2^-24.
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        unit * 2.0 - 1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_in_range() {
        let mut a = SplitMix64::new(7);
        let mut b = SplitMix64::new(7);
        for _ in 0..1000 {
            let x = a.next_f32_signed();
            assert_eq!(x.to_bits(), b.next_f32_signed().to_bits());
            assert!((-1.0..1.0).contains(&x));
        }
        assert_ne!(SplitMix64::new(1).next_u64(), SplitMix64::new(2).next_u64());
    }
}
