//! Expected against measured: what this hardware should reach, and whether a number is normal.
//!
//! Every expectation comes from facts the probes or CUDA reported, with the arithmetic written
//! into its `basis` so a reader can check it:
//! - host link: the probes' theoretical payload bandwidth of the PCIe link (capped by a
//!   Thunderbolt/USB4 tunnel), per direction, for pinned copies;
//! - pageable copies: the slower of the same test's pinned copy and its host memcpy into the
//!   staging buffer, the two steps a pageable copy goes through (`judge_in`);
//! - device memory: bus width ÷ 8 × memory clock × 2 (NVML and CUDA report the memory clock so
//!   that its double data rate gives the transfer rate, for GDDR and HBM alike);
//! - compute: dense operations per clock per SM (knowledge base) × SMs × the rated boost clock
//!   (NVML's max customer boost clock, else CUDA's clock-rate attribute). NVML's highest SM clock
//!   is the top of the voltage/frequency table (≈ 3.1 GHz on an RTX 4090 rated at 2520 MHz): it
//!   is used only as the ceiling above which a result is "above theory", or as the reference when
//!   no rated clock was reported, which the basis then says. A product with dense figures of its
//!   own in the knowledge base (Hopper boards, whose tensor figures assume a lower clock than the
//!   rated boost clock; the cut-down H20) is judged against those for their precisions.

use crate::compat::OpsPerClock;
use serde::{Deserialize, Serialize};

use super::plan::Precision;
use super::protocol::{CopyMethod, Measurement, Metric, Unit};

/// Share of the theoretical link bandwidth a pinned copy normally reaches (PCIe protocol overhead
/// leaves 75–90 %; a Thunderbolt 3 enclosure ≈ 2.2–2.5 of 2.75 GB/s).
pub const LINK_NORMAL_SHARE: f64 = 0.70;
/// Share of the slower of its two steps a pageable copy normally reaches. The driver copies
/// pageable memory into a pinned staging buffer on the CPU (host memcpy, rate `a`) and the GPU
/// copies that as a pinned copy (rate `b`); even with no overlap at all the two in turn give
/// 1 / (1/a + 1/b), at least half the slower; per-chunk overhead takes a little more.
pub const PAGEABLE_NORMAL_SHARE: f64 = 0.40;
/// Share of twice the link a simultaneous bidirectional copy normally reaches; GPUs with a single
/// copy engine cannot overlap the two directions and land near half.
pub const BIDIR_NORMAL_SHARE: f64 = 0.55;
/// Share of the theoretical memory bandwidth a device copy normally reaches (80–92 % is typical).
pub const MEMORY_NORMAL_SHARE: f64 = 0.70;
/// Share of the dense peak a large GEMM (n ≥ `GEMM_LARGE_N`) normally reaches.
pub const GEMM_NORMAL_SHARE: f64 = 0.50;
/// Share of the dense peak a GEMM smaller than `GEMM_LARGE_N` is held to.
pub const GEMM_SMALL_NORMAL_SHARE: f64 = 0.20;
/// Matrix size from which a GEMM is expected near peak.
pub const GEMM_LARGE_N: u32 = 4096;
/// Share of the FP32 peak the FMA kernel normally reaches.
pub const FMA_NORMAL_SHARE: f64 = 0.80;
/// Share of the free memory the largest single allocation normally reaches.
pub const ALLOC_NORMAL_SHARE: f64 = 0.85;
/// A measurement this far above its theoretical value means the facts behind it are wrong.
pub const ABOVE_THEORY_FACTOR: f64 = 1.10;
/// Launch plus synchronize usually takes well under this, µs (Linux, no MPS or vGPU).
pub const LAUNCH_LATENCY_REFERENCE_US: f64 = 20.0;
/// Back-to-back launches are usually issued faster than this, µs apart.
pub const LAUNCH_INTERVAL_REFERENCE_US: f64 = 10.0;

/// Dense operations per clock per SM for the GEMM precisions (FMA counts as two).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PeakOps {
    /// FP32 on CUDA cores.
    pub fp32: Option<u32>,
    /// TF32 on tensor cores.
    pub tf32: Option<u32>,
    /// FP16 on tensor cores, FP32 accumulation.
    pub fp16: Option<u32>,
    /// BF16 on tensor cores, FP32 accumulation.
    pub bf16: Option<u32>,
}

impl From<OpsPerClock> for PeakOps {
    fn from(o: OpsPerClock) -> Self {
        Self { fp32: o.fp32, tf32: o.tf32_tensor, fp16: o.fp16_tensor, bf16: o.bf16_tensor }
    }
}

impl PeakOps {
    /// The tensor-core rates (TF32, FP16, BF16) divided by `divisor`; FP32 on CUDA cores unchanged.
    #[must_use]
    pub fn tensor_divided_by(self, divisor: u32) -> Self {
        let div = |v: Option<u32>| v.map(|v| v / divisor.max(1));
        Self { fp32: self.fp32, tf32: div(self.tf32), fp16: div(self.fp16), bf16: div(self.bf16) }
    }

    /// Operations per clock per SM for a precision; `None` when unknown or not supported.
    pub fn for_precision(&self, p: Precision) -> Option<u32> {
        match p {
            Precision::Fp32 => self.fp32,
            Precision::Tf32 => self.tf32,
            Precision::Fp16 => self.fp16,
            Precision::Bf16 => self.bf16,
        }
    }
}

/// A product's own dense figures (its `gpus.toml` product row): NVIDIA's figures where the
/// capability's rates × SMs × the rated boost clock do not give them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProductPeaks {
    /// The product, as the knowledge base's row names it (`NVIDIA H100 80GB HBM3`).
    pub product: String,
    /// The SMs the figures are for; a GPU with another count (a MIG instance) gets them scaled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_count: Option<u32>,
    /// FP32 on CUDA cores, TFLOP/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp32_tflops: Option<f64>,
    /// TF32 on tensor cores, TFLOP/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tf32_tflops: Option<f64>,
    /// FP16 on tensor cores with FP32 accumulation, TFLOP/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp16_tflops: Option<f64>,
    /// BF16 on tensor cores with FP32 accumulation, TFLOP/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bf16_tflops: Option<f64>,
    /// Where the figures were read.
    pub source: String,
}

impl ProductPeaks {
    /// The figure for a precision, TFLOP/s; `None` where the product has none of its own.
    pub fn for_precision(&self, p: Precision) -> Option<f64> {
        match p {
            Precision::Fp32 => self.fp32_tflops,
            Precision::Tf32 => self.tf32_tflops,
            Precision::Fp16 => self.fp16_tflops,
            Precision::Bf16 => self.bf16_tflops,
        }
    }
}

/// A dense peak: TFLOP/s, how it was worked out, and the SM clock it corresponds to (`None` for a
/// product figure no clock explains), which the ceiling scales from.
struct Peak {
    tflops: f64,
    basis: String,
    mhz: Option<f64>,
}

/// What the hardware should reach, from the probes, NVML, CUDA and the knowledge base.
/// Every `None` means no source said; the verdicts that need it then have no reference.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Facts {
    /// Theoretical host↔device payload bandwidth per direction, GB/s.
    pub link_gbytes_per_s: Option<f64>,
    /// How the probes computed it (PCIe generation and lanes, Thunderbolt cap).
    pub link_basis: Option<String>,
    /// Memory bus width, bits.
    pub memory_bus_width_bits: Option<u32>,
    /// Highest memory clock, MHz.
    pub clock_mem_max_mhz: Option<u32>,
    /// Streaming multiprocessors.
    pub sm_count: Option<u32>,
    /// Highest SM clock (NVML's, the top of the voltage/frequency table on GeForce boards), MHz:
    /// the ceiling of the compute peaks, and their reference only when `clock_sm_rated_mhz` is
    /// unknown.
    pub clock_sm_max_mhz: Option<u32>,
    /// The rated boost clock the compute peaks are computed with, MHz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_sm_rated_mhz: Option<u32>,
    /// Where `clock_sm_rated_mhz` came from, for the basis of the compute expectations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_sm_rated_source: Option<String>,
    /// Dense operations per clock per SM (tensor rates already divided for a GeForce board).
    pub peak_ops: Option<PeakOps>,
    /// Why the tensor rates in `peak_ops` are below the capability's (a GeForce board); `None`
    /// when they are the capability's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_rate_note: Option<String>,
    /// The product's own dense figures, which the peaks of their precisions use in place of
    /// `peak_ops` × SMs × the rated clock; `None` when the knowledge base has none for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_peaks: Option<ProductPeaks>,
    /// Free GPU memory when the run started, bytes.
    pub memory_free_bytes: Option<u64>,
    /// How each pair of GPUs connects, which the GPU-to-GPU copies are judged against
    /// (`p2p::link_facts`, from the snapshot's topology and host links).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub p2p_links: Vec<super::p2p::P2pLinkFact>,
    /// Where each fact came from, one line each.
    pub sources: Vec<String>,
}

impl Facts {
    /// Theoretical memory bandwidth, GB/s, and how it was computed.
    pub fn memory_bandwidth(&self) -> Option<(f64, String)> {
        let bits = self.memory_bus_width_bits.filter(|b| *b > 0)?;
        let mhz = self.clock_mem_max_mhz.filter(|m| *m > 0)?;
        let gbps = f64::from(bits) / 8.0 * f64::from(mhz) * 2.0 / 1000.0;
        Some((gbps, format!("{bits}-bit bus ÷ 8 × {mhz} MHz × 2 (double data rate) = {gbps:.0} GB/s")))
    }

    /// The SM clock the compute peaks are computed with, MHz, and what it is: the rated boost
    /// clock, or, when no source reported one, the highest SM clock, said to be so.
    pub fn reference_sm_clock(&self) -> Option<(u32, String)> {
        match (self.clock_sm_rated_mhz, self.clock_sm_max_mhz) {
            (Some(mhz), _) => Some((
                mhz,
                format!(
                    "{mhz} MHz: the rated boost clock ({})",
                    self.clock_sm_rated_source.as_deref().unwrap_or("source not recorded")
                ),
            )),
            (None, Some(mhz)) => Some((
                mhz,
                format!(
                    "{mhz} MHz: NVML's highest SM clock, because no rated boost clock was reported (neither NVML's \
                     max customer boost clock nor CUDA's clock-rate attribute); on GeForce boards that is the top \
                     of the voltage/frequency table, so this expectation may be 20–30 % too high"
                ),
            )),
            (None, None) => None,
        }
    }

    /// Dense peak for a precision, TFLOP/s, and how it was computed: the product's own figure where
    /// the knowledge base has one (see `product_peak`), else operations per clock per SM × SMs ×
    /// the reference SM clock.
    pub fn peak_tflops(&self, p: Precision) -> Option<(f64, String)> {
        self.peak(p).map(|k| (k.tflops, k.basis))
    }

    fn peak(&self, p: Precision) -> Option<Peak> {
        if let Some(peak) = self.product_peak(p) {
            return Some(peak);
        }
        let ops = self.peak_ops?.for_precision(p)?;
        let sms = self.sm_count?;
        let (mhz, clock) = self.reference_sm_clock()?;
        let tflops = f64::from(ops) * f64::from(sms) * f64::from(mhz) * 1e6 / 1e12;
        let mut basis =
            format!("{} dense: {ops} ops/clock/SM × {sms} SMs × {mhz} MHz = {tflops:.1} TFLOP/s ({clock})", p.label());
        if let Some(note) = self.tensor_rate_note.as_deref().filter(|_| p != Precision::Fp32) {
            basis.push_str(&format!(" ({note})"));
        }
        Some(Peak { tflops, basis, mhz: Some(f64::from(mhz)) })
    }

    /// The product's own figure for a precision, scaled to this GPU's SMs where both counts are
    /// known. Where the figure is ops/clock/SM × the product's SMs × some clock (Hopper's tensor
    /// figures: 1830 MHz on an H100 SXM5 rated at 1980), the basis names that clock beside the
    /// reference clock the other precisions use; where it is not (the cut-down H20), it says what
    /// ops × SMs × clock would have given.
    fn product_peak(&self, p: Precision) -> Option<Peak> {
        let pp = self.product_peaks.as_ref()?;
        let figure = pp.for_precision(p)?;
        let ops = self.peak_ops.and_then(|o| o.for_precision(p));
        let reference = self.reference_sm_clock();
        match (ops, pp.sm_count) {
            (Some(ops), Some(board_sms)) if board_sms > 0 => {
                let mhz = figure * 1e6 / (f64::from(ops) * f64::from(board_sms));
                let sms = self.sm_count.unwrap_or(board_sms);
                let tflops = figure * f64::from(sms) / f64::from(board_sms);
                let mut basis = format!(
                    "{} dense: {ops} ops/clock/SM × {sms} SMs × {mhz:.0} MHz = {tflops:.1} TFLOP/s ({mhz:.0} MHz: the \
                     clock of NVIDIA's dense figure for {}, {figure} TFLOP/s at {board_sms} SMs",
                    p.label(),
                    pp.product
                );
                if let Some((_, clock)) = &reference {
                    basis.push_str(&format!("; other peaks use {clock}"));
                }
                basis.push_str(&format!("; figure: {})", pp.source));
                Some(Peak { tflops, basis, mhz: Some(mhz) })
            }
            _ => {
                let mut basis = format!(
                    "{} dense: {figure:.1} TFLOP/s, NVIDIA's dense figure for {} ({})",
                    p.label(),
                    pp.product,
                    pp.source
                );
                if let (Some(ops), Some(sms), Some((mhz, _))) = (ops, self.sm_count, &reference) {
                    let would = f64::from(ops) * f64::from(sms) * f64::from(*mhz) * 1e6 / 1e12;
                    basis.push_str(&format!(
                        "; not {ops} ops/clock/SM × {sms} SMs × {mhz} MHz = {would:.1}, which this product does not run at"
                    ));
                }
                Some(Peak { tflops: figure, basis, mhz: reference.map(|(mhz, _)| f64::from(mhz)) })
            }
        }
    }

    /// The most a precision can reach, TFLOP/s: the peak scaled from the clock it corresponds to up
    /// to the highest SM clock where that is higher (a GeForce board boosts past its rating while
    /// cool and under its power limit; a Hopper board's tensor cores may run above the clock of
    /// NVIDIA's figure), else the peak itself.
    pub fn ceiling_tflops(&self, p: Precision) -> Option<f64> {
        let peak = self.peak(p)?;
        let reference = self.reference_sm_clock().map(|(mhz, _)| f64::from(mhz));
        let highest = self.clock_sm_max_mhz.map(f64::from).into_iter().chain(reference).reduce(f64::max);
        Some(match (peak.mhz, highest) {
            (Some(at), Some(highest)) if at > 0.0 && highest > at => peak.tflops * highest / at,
            _ => peak.tflops,
        })
    }
}

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

/// A measurement with its judgement, as saved in a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judged {
    /// The measurement.
    pub measurement: Measurement,
    /// Its judgement.
    pub judgement: Judgement,
}

/// How a metric is judged: against what, and how much of it is normal.
enum Rule {
    /// Higher is better; at least `share` of `expected` is normal; clearly above `ceiling` (the
    /// most the hardware allows, when there is such a limit) is above theory.
    AtLeast { expected: Expected, share: f64, ceiling: Option<f64> },
    /// Lower is better; at most `limit` is normal.
    AtMost { limit: Expected },
    /// Zero is the only normal value.
    Zero,
    /// No reference.
    None(String),
}

fn expected(value: f64, unit: Unit, basis: impl Into<String>) -> Expected {
    Expected { value, unit, basis: basis.into() }
}

/// A pageable copy against the slower of the steps it goes through, both measured by the same
/// test (`siblings`): the pinned copy and host memcpy into the staging buffer. Not a theoretical
/// limit: where the GPU reads host memory directly (Grace Hopper), pageable may beat both.
fn pageable_rule(h2d: bool, siblings: &[Measurement]) -> Rule {
    let pinned = if h2d { Metric::HostToDevice { pinned: true } } else { Metric::DeviceToHost { pinned: true } };
    let steps: Vec<(f64, String)> =
        [(pinned, "the pinned copy"), (Metric::StagingCopy { h2d }, "host memcpy between pageable and pinned memory")]
            .into_iter()
            .filter_map(|(metric, what)| {
                let m = siblings.iter().find(|m| m.metric == metric && m.value > 0.0)?;
                Some((m.value, format!("{what} ({} GB/s)", super::format::value(m.value))))
            })
            .collect();
    let Some(slowest) = steps.iter().map(|(v, _)| *v).min_by(f64::total_cmp) else {
        return Rule::None("neither the pinned copy nor host memcpy was measured to compare with".to_owned());
    };
    let words: Vec<&str> = steps.iter().map(|(_, w)| w.as_str()).collect();
    let basis = format!(
        "the slower of {}: a pageable copy is host memcpy into the driver's pinned staging buffer, then a \
         pinned copy",
        words.join(" and ")
    );
    Rule::AtLeast { expected: expected(slowest, Unit::GbPerS, basis), share: PAGEABLE_NORMAL_SHARE, ceiling: None }
}

/// A compute throughput against the dense peak of `precision`: at least `share` of it is normal,
/// past the ceiling (the peak at the highest SM clock) above theory.
fn compute_rule(facts: &Facts, precision: Precision, share: f64) -> Rule {
    match facts.peak_tflops(precision) {
        Some((t, basis)) => Rule::AtLeast {
            expected: expected(t, Unit::TflopPerS, basis),
            share,
            ceiling: facts.ceiling_tflops(precision),
        },
        None => Rule::None(format!("the {} peak of this GPU is unknown", precision.label())),
    }
}

fn rule(metric: &Metric, facts: &Facts, siblings: &[Measurement]) -> Rule {
    let link = || facts.link_gbytes_per_s.map(|g| (g, facts.link_basis.clone().unwrap_or_default()));
    let no_link = || Rule::None("the host link's theoretical bandwidth is unknown".to_owned());
    match *metric {
        Metric::HostToDevice { pinned: false } => pageable_rule(true, siblings),
        Metric::DeviceToHost { pinned: false } => pageable_rule(false, siblings),
        Metric::HostToDevice { pinned: true } | Metric::DeviceToHost { pinned: true } => match link() {
            Some((g, basis)) => {
                Rule::AtLeast { expected: expected(g, Unit::GbPerS, basis), share: LINK_NORMAL_SHARE, ceiling: Some(g) }
            }
            None => no_link(),
        },
        Metric::Bidirectional => match link() {
            Some((g, basis)) => Rule::AtLeast {
                expected: expected(2.0 * g, Unit::GbPerS, format!("both directions of the link: 2 × ({basis})")),
                share: BIDIR_NORMAL_SHARE,
                ceiling: Some(2.0 * g),
            },
            None => no_link(),
        },
        Metric::DeviceCopy { .. } => match facts.memory_bandwidth() {
            Some((g, basis)) => Rule::AtLeast {
                expected: expected(g, Unit::GbPerS, basis),
                share: MEMORY_NORMAL_SHARE,
                ceiling: Some(g),
            },
            None => Rule::None("the memory bus width or memory clock is unknown".to_owned()),
        },
        Metric::Gemm { precision, n } => {
            compute_rule(facts, precision, if n >= GEMM_LARGE_N { GEMM_NORMAL_SHARE } else { GEMM_SMALL_NORMAL_SHARE })
        }
        Metric::SustainedGemm { precision } => compute_rule(facts, precision, GEMM_NORMAL_SHARE),
        Metric::FmaPeak => compute_rule(facts, Precision::Fp32, FMA_NORMAL_SHARE),
        Metric::LaunchLatency => Rule::AtMost {
            limit: expected(
                LAUNCH_LATENCY_REFERENCE_US,
                Unit::Micros,
                "launch plus synchronize usually takes 5–20 µs on Linux",
            ),
        },
        Metric::LaunchInterval => Rule::AtMost {
            limit: expected(
                LAUNCH_INTERVAL_REFERENCE_US,
                Unit::Micros,
                "the host usually issues back-to-back launches 2–10 µs apart",
            ),
        },
        Metric::LargestAllocation => match facts.memory_free_bytes {
            Some(free) => Rule::AtLeast {
                expected: expected(free as f64, Unit::Bytes, "free GPU memory when the run started"),
                share: ALLOC_NORMAL_SHARE,
                ceiling: None,
            },
            None => Rule::None("free memory is unknown".to_owned()),
        },
        Metric::MemtestErrors => Rule::Zero,
        Metric::SmallCopyTime { .. }
        | Metric::MemtestBytes
        | Metric::CpuGemm
        | Metric::CpuNaiveGemm
        | Metric::HostMemcpy
        | Metric::StagingCopy { .. } => Rule::None("a measurement to compare with, not a hardware limit".to_owned()),
        Metric::PeerCopy { .. } => {
            Rule::None("the slowest pair; each pair is judged against its own link in the GPU-to-GPU matrix".to_owned())
        }
    }
}

/// Judges one measurement against what the facts say this hardware should reach.
pub fn judge(m: &Measurement, facts: &Facts) -> Judgement {
    judge_in(m, &[], facts)
}

/// Judges one measurement of a test among the test's other measurements (`siblings`), which a
/// pageable copy is judged against; everything else as `judge`.
pub fn judge_in(m: &Measurement, siblings: &[Measurement], facts: &Facts) -> Judgement {
    match rule(&m.metric, facts, siblings) {
        Rule::AtLeast { expected, share, ceiling } => at_least(m.value, expected, share, ceiling),
        Rule::AtMost { limit } => {
            let pct = m.value / limit.value * 100.0;
            let (verdict, comment) = if m.value <= limit.value {
                (Verdict::Normal, format!("within the usual {:.0} {}", limit.value, limit.unit.symbol()))
            } else {
                (Verdict::Low, format!("slower than the usual {:.0} {}", limit.value, limit.unit.symbol()))
            };
            Judgement { expected: Some(limit), percent_of_expected: Some(pct), verdict, comment }
        }
        Rule::Zero => {
            let clean = m.value == 0.0;
            Judgement {
                expected: Some(expected(0.0, m.unit, "memory must read back what was written")),
                percent_of_expected: None,
                verdict: if clean { Verdict::Normal } else { Verdict::Failed },
                comment: if clean {
                    "every word read back as written".to_owned()
                } else {
                    "words read back wrong: faulty memory, overclocking or overheating".to_owned()
                },
            }
        }
        Rule::None(why) => {
            Judgement { expected: None, percent_of_expected: None, verdict: Verdict::NoReference, comment: why }
        }
    }
}

/// `value` (higher is better) against `expected`: at least `share` of it is normal, clearly above
/// `ceiling` (the most the hardware allows, where there is such a limit) above theory.
pub fn at_least(value: f64, expected: Expected, share: f64, ceiling: Option<f64>) -> Judgement {
    let pct = if expected.value > 0.0 { value / expected.value * 100.0 } else { f64::NAN };
    let (verdict, comment) = if !pct.is_finite() {
        (Verdict::NoReference, "the expected value is zero".to_owned())
    } else if ceiling.is_some_and(|c| value > c * ABOVE_THEORY_FACTOR) {
        (
            Verdict::AboveTheory,
            format!(
                "{pct:.0} % of the theoretical value: faster than this hardware should allow, so a fact \
                 behind the expectation (link width, clock, SM count) is probably wrong"
            ),
        )
    } else if value >= expected.value * share {
        (Verdict::Normal, format!("{pct:.0} % of expected; {:.0} % or more is normal", share * 100.0))
    } else {
        (
            Verdict::Low,
            format!("{pct:.0} % of expected, below the {:.0} % this hardware normally reaches", share * 100.0),
        )
    };
    Judgement { expected: Some(expected), percent_of_expected: pct.is_finite().then_some(pct), verdict, comment }
}

/// The copy method's display name.
pub fn copy_method_label(m: CopyMethod) -> &'static str {
    match m {
        CopyMethod::Memcpy => "driver memcpy",
        CopyMethod::Kernel => "copy kernel",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn m(metric: Metric, value: f64, unit: Unit) -> Measurement {
        Measurement::single(metric, "", value, unit)
    }

    fn tb3() -> Facts {
        Facts {
            link_gbytes_per_s: Some(2.75),
            link_basis: Some("PCIe Gen3 x4; capped by the tunnel: Thunderbolt 3 ≈ 2.75 GB/s".into()),
            ..Facts::default()
        }
    }

    #[test]
    fn thunderbolt3_link_normal_and_low() {
        let ok = judge(&m(Metric::HostToDevice { pinned: true }, 2.3, Unit::GbPerS), &tb3());
        assert_eq!(ok.verdict, Verdict::Normal, "{ok:?}");
        assert!((ok.percent_of_expected.unwrap() - 83.6).abs() < 0.1);
        assert!(ok.expected.unwrap().basis.contains("Thunderbolt 3"));

        let low = judge(&m(Metric::DeviceToHost { pinned: true }, 0.8, Unit::GbPerS), &tb3());
        assert_eq!(low.verdict, Verdict::Low);
        assert!((low.percent_of_expected.unwrap() - 29.1).abs() < 0.1);

        let pageable = judge(&m(Metric::HostToDevice { pinned: false }, 0.9, Unit::GbPerS), &tb3());
        assert_eq!(pageable.verdict, Verdict::NoReference, "pageable copies are not judged against the link");

        let fast = judge(&m(Metric::HostToDevice { pinned: true }, 3.5, Unit::GbPerS), &tb3());
        assert_eq!(fast.verdict, Verdict::AboveTheory);
    }

    /// A Gen5 x16 server: the link allows 63 GB/s per direction, the pinned copy reaches 50, host
    /// memcpy only 12; the driver's staging copy bounds the pageable copy, not the link.
    fn gen5_server(pageable: f64, h2d: bool) -> (Measurement, Vec<Measurement>, Facts) {
        let (pageable_metric, pinned_metric) = if h2d {
            (Metric::HostToDevice { pinned: false }, Metric::HostToDevice { pinned: true })
        } else {
            (Metric::DeviceToHost { pinned: false }, Metric::DeviceToHost { pinned: true })
        };
        let siblings = vec![
            m(pinned_metric, 50.0, Unit::GbPerS),
            m(Metric::StagingCopy { h2d }, 12.0, Unit::GbPerS),
            m(pageable_metric, pageable, Unit::GbPerS),
        ];
        let facts =
            Facts { link_gbytes_per_s: Some(63.0), link_basis: Some("PCIe Gen5 x16".into()), ..Facts::default() };
        (m(pageable_metric, pageable, Unit::GbPerS), siblings, facts)
    }

    #[test]
    fn pageable_is_judged_against_pinned_and_host_memcpy_not_the_link() {
        for h2d in [true, false] {
            let (healthy, siblings, facts) = gen5_server(10.0, h2d);
            let j = judge_in(&healthy, &siblings, &facts);
            assert_eq!(j.verdict, Verdict::Normal, "{j:?}");
            let e = j.expected.unwrap();
            assert_eq!(e.value, 12.0, "the slower step, host memcpy");
            assert!(e.basis.contains("pinned copy (50.0 GB/s)") && e.basis.contains("host memcpy"), "{}", e.basis);
            assert!(!e.basis.contains("Gen5"), "not the link: {}", e.basis);

            let (slow, siblings, facts) = gen5_server(2.0, h2d);
            let j = judge_in(&slow, &siblings, &facts);
            assert_eq!(j.verdict, Verdict::Low, "{j:?}");
            assert!((j.percent_of_expected.unwrap() - 16.7).abs() < 0.1);
            assert!(j.expected.unwrap().basis.contains("memcpy"));
        }
    }

    #[test]
    fn pageable_uses_what_was_measured_and_may_beat_it() {
        let (pageable, siblings, facts) = gen5_server(10.0, true);
        // Without host memcpy (page-locking failed and so on), the pinned copy alone.
        let pinned_only: Vec<Measurement> =
            siblings.iter().filter(|s| !matches!(s.metric, Metric::StagingCopy { .. })).cloned().collect();
        let j = judge_in(&pageable, &pinned_only, &facts);
        assert_eq!(j.expected.as_ref().unwrap().value, 50.0);
        assert_eq!(j.verdict, Verdict::Low);
        // A GPU that reads pageable memory itself (Grace Hopper) beats memcpy: not suspicious.
        let coherent = m(Metric::HostToDevice { pinned: false }, 45.0, Unit::GbPerS);
        assert_eq!(judge_in(&coherent, &siblings, &facts).verdict, Verdict::Normal);
        // The other direction's steps are not this one's.
        let j = judge_in(&m(Metric::DeviceToHost { pinned: false }, 10.0, Unit::GbPerS), &siblings, &facts);
        assert_eq!(j.verdict, Verdict::NoReference, "{j:?}");
    }

    #[test]
    fn bidirectional_is_judged_against_both_directions() {
        let facts = Facts { link_gbytes_per_s: Some(31.5), ..Facts::default() };
        let full = judge(&m(Metric::Bidirectional, 50.0, Unit::GbPerS), &facts);
        assert_eq!(full.verdict, Verdict::Normal);
        assert_eq!(full.expected.unwrap().value, 63.0);
        let one_engine = judge(&m(Metric::Bidirectional, 26.0, Unit::GbPerS), &facts);
        assert_eq!(one_engine.verdict, Verdict::Low);
    }

    #[test]
    fn memory_bandwidth_from_bus_width_and_clock() {
        // H200: 6144-bit HBM3e at 3201 MHz; PyTorch measures ≈ 4.3 TB/s for a device copy.
        let h200 = Facts { memory_bus_width_bits: Some(6144), clock_mem_max_mhz: Some(3201), ..Facts::default() };
        let (gbps, basis) = h200.memory_bandwidth().unwrap();
        assert!((gbps - 4917.0).abs() < 1.0, "{gbps}");
        assert!(basis.contains("6144-bit"));
        // RTX 4090: 384-bit GDDR6X, NVML reports 10501 MHz → 1008 GB/s.
        let rtx = Facts { memory_bus_width_bits: Some(384), clock_mem_max_mhz: Some(10501), ..Facts::default() };
        assert!((rtx.memory_bandwidth().unwrap().0 - 1008.1).abs() < 0.1);

        let j = judge(&m(Metric::DeviceCopy { method: CopyMethod::Memcpy }, 4300.0, Unit::GbPerS), &h200);
        assert_eq!(j.verdict, Verdict::Normal);
        let j = judge(&m(Metric::DeviceCopy { method: CopyMethod::Kernel }, 2000.0, Unit::GbPerS), &h200);
        assert_eq!(j.verdict, Verdict::Low);
        assert_eq!(Facts::default().memory_bandwidth(), None);
    }

    #[test]
    fn compute_peak_from_ops_sms_and_clock() {
        // Made-up numbers in the shape of a Hopper GPU: 132 SMs at 1980 MHz.
        let facts = Facts {
            sm_count: Some(132),
            clock_sm_max_mhz: Some(1980),
            peak_ops: Some(PeakOps { fp32: Some(256), tf32: Some(1024), fp16: Some(2048), bf16: Some(2048) }),
            ..Facts::default()
        };
        let (bf16, basis) = facts.peak_tflops(Precision::Bf16).unwrap();
        assert!((bf16 - 535.3).abs() < 0.1, "{bf16}");
        assert!(basis.contains("2048 ops/clock/SM × 132 SMs × 1980 MHz"));
        let (fp32, _) = facts.peak_tflops(Precision::Fp32).unwrap();
        assert!((fp32 - 66.9).abs() < 0.1);

        let big = judge(&m(Metric::Gemm { precision: Precision::Bf16, n: 8192 }, 400.0, Unit::TflopPerS), &facts);
        assert_eq!(big.verdict, Verdict::Normal);
        let weak = judge(&m(Metric::Gemm { precision: Precision::Bf16, n: 8192 }, 200.0, Unit::TflopPerS), &facts);
        assert_eq!(weak.verdict, Verdict::Low);
        let small = judge(&m(Metric::Gemm { precision: Precision::Bf16, n: 1024 }, 200.0, Unit::TflopPerS), &facts);
        assert_eq!(small.verdict, Verdict::Normal, "small sizes are held to a lower share");
        let fma = judge(&m(Metric::FmaPeak, 60.0, Unit::TflopPerS), &facts);
        assert_eq!(fma.verdict, Verdict::Normal);

        let unknown = Facts { peak_ops: Some(PeakOps::default()), ..facts };
        let j = judge(&m(Metric::Gemm { precision: Precision::Tf32, n: 8192 }, 1.0, Unit::TflopPerS), &unknown);
        assert_eq!(j.verdict, Verdict::NoReference);
        assert!(j.comment.contains("TF32"));
    }

    #[test]
    fn latency_is_lower_better() {
        let f = Facts::default();
        assert_eq!(judge(&m(Metric::LaunchLatency, 8.0, Unit::Micros), &f).verdict, Verdict::Normal);
        assert_eq!(judge(&m(Metric::LaunchLatency, 80.0, Unit::Micros), &f).verdict, Verdict::Low);
    }

    #[test]
    fn memory_test_and_allocation() {
        let f = Facts { memory_free_bytes: Some(80 << 30), ..Facts::default() };
        assert_eq!(judge(&m(Metric::MemtestErrors, 0.0, Unit::Count), &f).verdict, Verdict::Normal);
        assert_eq!(judge(&m(Metric::MemtestErrors, 3.0, Unit::Count), &f).verdict, Verdict::Failed);
        let alloc = |b: u64| judge(&m(Metric::LargestAllocation, b as f64, Unit::Bytes), &f).verdict;
        assert_eq!(alloc(78 << 30), Verdict::Normal);
        assert_eq!(alloc(20 << 30), Verdict::Low);
        // Free memory is not a theoretical limit: more (memory freed meanwhile) is not suspicious.
        assert_eq!(alloc(90 << 30), Verdict::Normal);
    }

    #[test]
    fn no_facts_means_no_reference() {
        let j = judge(&m(Metric::HostToDevice { pinned: true }, 10.0, Unit::GbPerS), &Facts::default());
        assert_eq!(j.verdict, Verdict::NoReference);
        assert!(j.comment.contains("link"));
        let cpu = judge(&m(Metric::CpuGemm, 100.0, Unit::GflopPerS), &Facts::default());
        assert_eq!(cpu.verdict, Verdict::NoReference);
    }
}
