//! The unit of a measured value.

use serde::{Deserialize, Serialize};

/// A unit of a measured value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unit {
    /// Bytes.
    #[serde(rename = "B")]
    Bytes,
    /// 10^9 bytes per second.
    #[serde(rename = "GB/s")]
    GbPerS,
    /// 10^12 floating-point operations per second.
    #[serde(rename = "TFLOP/s")]
    TflopPerS,
    /// 10^9 floating-point operations per second.
    #[serde(rename = "GFLOP/s")]
    GflopPerS,
    /// Microseconds.
    #[serde(rename = "us")]
    Micros,
    /// Seconds.
    #[serde(rename = "s")]
    Secs,
    /// Matrix dimension (m = n = k).
    #[serde(rename = "n")]
    MatrixN,
    /// A count.
    #[serde(rename = "count")]
    Count,
    /// A ratio, as a plain number (`12.5` means 12.5 times).
    #[serde(rename = "x")]
    Times,
}

impl Unit {
    /// The symbol shown after a value.
    pub fn symbol(self) -> &'static str {
        match self {
            Self::Bytes => "B",
            Self::GbPerS => "GB/s",
            Self::TflopPerS => "TFLOP/s",
            Self::GflopPerS => "GFLOP/s",
            Self::Micros => "µs",
            Self::Secs => "s",
            Self::MatrixN => "n",
            Self::Count => "",
            Self::Times => "×",
        }
    }
}
