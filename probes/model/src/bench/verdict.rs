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

use serde::{Deserialize, Serialize};

use super::judgement::Judgement;
use super::plan::Precision;
use super::protocol::{CopyMethod, Measurement};

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

/// A measurement with its judgement, as saved in a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judged {
    /// The measurement.
    pub measurement: Measurement,
    /// Its judgement.
    pub judgement: Judgement,
}

/// The copy method's display name.
pub fn copy_method_label(m: CopyMethod) -> &'static str {
    match m {
        CopyMethod::Memcpy => "driver memcpy",
        CopyMethod::Kernel => "copy kernel",
    }
}
