//! Memory-test patterns: what each 64-bit word should hold, as a pure function of the pattern, the
//! word's index and its device address, so writing and checking need no stored copy.

use crate::rng::mix64;
use gpu_doctor_model::bench::protocol::{MAX_REPORTED_ERRORS, MemError};

/// One pass of the memory test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Word `i` holds a single one bit at position `(i + pass) mod 64`: neighbouring words differ in
    /// every position, and successive passes move each word's bit along.
    WalkingOnes {
        /// Which pass, 0–63.
        pass: u32,
    },
    /// Each word holds its own device address (finds address-line faults and aliasing).
    OwnAddress,
    /// Each word holds the complement of its address (every bit flips from the previous pass).
    OwnAddressInverted,
    /// Pseudo-random words from a seed (SplitMix64 of seed and index).
    Random {
        /// The seed.
        seed: u64,
    },
}

impl Pattern {
    /// The passes of a memory test: `walking_passes` walking-ones passes, then own address, its
    /// complement, and random.
    pub fn sequence(walking_passes: u32, seed: u64) -> Vec<Self> {
        let mut out: Vec<Self> = (0..walking_passes.min(64)).map(|pass| Self::WalkingOnes { pass }).collect();
        out.extend([Self::OwnAddress, Self::OwnAddressInverted, Self::Random { seed }]);
        out
    }

    /// Its name in reports.
    pub fn name(&self) -> String {
        match self {
            Self::WalkingOnes { pass } => format!("walking ones {pass}"),
            Self::OwnAddress => "own address".to_owned(),
            Self::OwnAddressInverted => "own address inverted".to_owned(),
            Self::Random { seed } => format!("random (seed {seed:#x})"),
        }
    }

    /// The word at index `index` (counted from the start of the tested region), whose device
    /// address is `address`.
    pub fn word(&self, index: u64, address: u64) -> u64 {
        match *self {
            Self::WalkingOnes { pass } => 1u64 << ((index + u64::from(pass)) % 64),
            Self::OwnAddress => address,
            Self::OwnAddressInverted => !address,
            Self::Random { seed } => mix64(seed ^ index.wrapping_mul(0xD6E8_FEB8_6659_FD93)),
        }
    }

    /// Fills `out` with the words starting at region index `first_index`, device address `base`.
    pub fn fill(&self, first_index: u64, base: u64, out: &mut [u64]) {
        for (k, w) in (0u64..).zip(out.iter_mut()) {
            *w = self.word(first_index + k, base + 8 * k);
        }
    }
}

/// Wrong words found so far: a total and the first few in detail.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorLog {
    /// Every wrong word.
    pub total: u64,
    /// The first `MAX_REPORTED_ERRORS`.
    pub first: Vec<MemError>,
}

impl ErrorLog {
    /// Adds another log's findings after this one's.
    pub fn merge(&mut self, other: Self) {
        self.total += other.total;
        let room = MAX_REPORTED_ERRORS.saturating_sub(self.first.len());
        self.first.extend(other.first.into_iter().take(room));
    }
}

/// Checks `data` (words from region index `first_index`, device address `base`) against the
/// pattern, logging every word that differs.
pub fn verify(pattern: &Pattern, first_index: u64, base: u64, data: &[u64]) -> ErrorLog {
    let mut log = ErrorLog::default();
    for (k, &found) in (0u64..).zip(data) {
        let address = base + 8 * k;
        let expected = pattern.word(first_index + k, address);
        if found != expected {
            log.total += 1;
            if log.first.len() < MAX_REPORTED_ERRORS {
                log.first.push(MemError { address, pattern: pattern.name(), expected, found });
            }
        }
    }
    log
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walking_ones_have_one_bit_that_moves() {
        let p = Pattern::WalkingOnes { pass: 0 };
        assert_eq!(p.word(0, 0), 1);
        assert_eq!(p.word(1, 8), 2);
        assert_eq!(p.word(63, 0), 1 << 63);
        assert_eq!(p.word(64, 0), 1);
        assert_eq!(Pattern::WalkingOnes { pass: 5 }.word(0, 0), 1 << 5);
        for i in 0..200 {
            assert_eq!(p.word(i, 0).count_ones(), 1);
        }
    }

    #[test]
    fn address_patterns_and_random_are_distinct() {
        assert_eq!(Pattern::OwnAddress.word(3, 0x1000), 0x1000);
        assert_eq!(Pattern::OwnAddressInverted.word(3, 0x1000), !0x1000);
        let r = Pattern::Random { seed: 42 };
        assert_eq!(r.word(9, 0), r.word(9, 999), "random words depend on the index only");
        assert_ne!(r.word(9, 0), r.word(10, 0));
        assert_ne!(r.word(9, 0), Pattern::Random { seed: 43 }.word(9, 0));
    }

    #[test]
    fn fill_then_verify_is_clean_and_flipped_bits_are_found() {
        let base = 0x7f00_0000_0000u64;
        for p in Pattern::sequence(3, 0xfeed) {
            let mut words = vec![0u64; 1000];
            p.fill(500, base, &mut words);
            assert_eq!(verify(&p, 500, base, &words), ErrorLog::default(), "{}", p.name());
            words[17] ^= 1 << 9;
            words[900] = !words[900];
            let log = verify(&p, 500, base, &words);
            assert_eq!(log.total, 2);
            assert_eq!(log.first[0].address, base + 17 * 8);
            assert_eq!(log.first[0].found ^ log.first[0].expected, 1 << 9);
            assert_eq!(log.first[1].address, base + 900 * 8);
        }
    }

    #[test]
    fn the_log_keeps_a_bounded_list() {
        let p = Pattern::OwnAddress;
        let words = vec![0u64; 200];
        let log = verify(&p, 0, 8, &words);
        assert_eq!(log.total, 200);
        assert_eq!(log.first.len(), MAX_REPORTED_ERRORS);
        let mut merged = ErrorLog::default();
        merged.merge(log.clone());
        merged.merge(log);
        assert_eq!(merged.total, 400);
        assert_eq!(merged.first.len(), MAX_REPORTED_ERRORS);
    }

    #[test]
    fn sequence_order() {
        let names: Vec<String> = Pattern::sequence(2, 1).iter().map(Pattern::name).collect();
        assert_eq!(
            names,
            ["walking ones 0", "walking ones 1", "own address", "own address inverted", "random (seed 0x1)"]
        );
    }
}
