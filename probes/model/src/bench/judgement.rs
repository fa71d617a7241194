//! A number judged: what it was compared with, and the verdict.

use serde::{Deserialize, Serialize};

use super::unit::Unit;

/// Whether a number is what this hardware should give.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Within the normal range for this hardware.
    Normal,
    /// Below what this hardware normally reaches (or, for a time, slower).
    Low,
    /// Clearly above the theoretical value: the facts behind the expectation are wrong.
    AboveTheory,
    /// A correctness failure (memory errors).
    Failed,
    /// Nothing to compare with.
    NoReference,
}

impl Verdict {
    /// Short words for a table.
    pub fn label(self) -> &'static str {
        match self {
            Self::Normal => "normal",
            Self::Low => "LOW",
            Self::AboveTheory => "above theory?",
            Self::Failed => "FAILED",
            Self::NoReference => "no reference",
        }
    }
}

/// The value a measurement is compared with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Expected {
    /// The theoretical or reference value.
    pub value: f64,
    /// Its unit (the measurement's).
    pub unit: Unit,
    /// How it was obtained.
    pub basis: String,
}

/// A measurement judged against its expectation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    /// What it was compared with; `None` when there was nothing.
    pub expected: Option<Expected>,
    /// Measured as a percentage of expected; `None` without an expectation.
    pub percent_of_expected: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
    /// One sentence saying why.
    pub comment: String,
}
