//! Each benchmark number judged against what this hardware should reach (the facts in
//! `gpu_doctor_model::bench::verdict::Facts`), with the share of it that is normal.

use gpu_doctor_model::bench::judgement::{Expected, Judgement, Verdict};
use gpu_doctor_model::bench::plan::Precision;
use gpu_doctor_model::bench::protocol::{Measurement, Metric};
use gpu_doctor_model::bench::unit::Unit;
use gpu_doctor_model::bench::verdict::Facts;

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
                Some((m.value, format!("{what} ({} GB/s)", gpu_doctor_model::bench::format::value(m.value))))
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use gpu_doctor_model::bench::protocol::CopyMethod;
    use gpu_doctor_model::bench::verdict::PeakOps;

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
