//! Gathers the `Facts` a run is judged against from the probes' snapshot, what CUDA reported in
//! the worker, and the knowledge base.

use gpu_doctor_kb::{Kb, ProductRow};
use gpu_doctor_model::Snapshot;
use gpu_doctor_model::{Gpu, HostLink, PciBusId};

use gpu_doctor_model::bench::protocol::DeviceInfo;
use gpu_doctor_model::bench::verdict::{Facts, PeakOps, ProductPeaks};

/// The probed GPU with NVML index `index`.
pub fn probed_gpu(snapshot: &Snapshot, index: u32) -> Option<&Gpu> {
    snapshot.gpus.value()?.iter().find(|g| g.index == index)
}

/// The host link of the GPU with this bus id (CUDA's `0000:3B:00.0`, NVML's `00000000:3B:00.0` and
/// sysfs's `0000:3b:00.0` are the same).
pub fn link_for<'a>(snapshot: &'a Snapshot, bus_id: &str) -> Option<&'a HostLink> {
    snapshot.links.value()?.iter().find(|l| PciBusId::same(&l.bus_id, bus_id))
}

/// The probed GPU CUDA benchmarked: the one with the device's PCI bus id, else NVML index `index`
/// (the same GPU when `CUDA_VISIBLE_DEVICES` does not renumber CUDA's devices).
pub fn benchmarked_gpu<'a>(snapshot: &'a Snapshot, index: u32, device: Option<&DeviceInfo>) -> Option<&'a Gpu> {
    let by_bus = device
        .and_then(|d| d.pci_bus_id.as_deref())
        .and_then(|bus| snapshot.gpus.value()?.iter().find(|g| g.has_bus_id(bus)));
    by_bus.or_else(|| probed_gpu(snapshot, index))
}

/// The rated boost clock, MHz, and where it came from: NVML's max customer boost clock, else
/// CUDA's clock-rate attribute (`CU_DEVICE_ATTRIBUTE_CLOCK_RATE`, the same rating). NVML's highest
/// SM clock is not a rating: on GeForce boards it is the top of the voltage/frequency table
/// (3105 MHz on an RTX 4090 rated at 2520), so it is left to `Facts::reference_sm_clock`'s fallback.
fn rated_sm_clock(nvml_boost: Option<u32>, cuda_clock_rate: Option<u32>) -> Option<(u32, &'static str)> {
    match (nvml_boost.filter(|m| *m > 0), cuda_clock_rate.filter(|m| *m > 0)) {
        (Some(mhz), _) => Some((mhz, "NVML's max customer boost clock")),
        (None, Some(mhz)) => Some((mhz, "CUDA's clock-rate attribute")),
        (None, None) => None,
    }
}

/// The product row's own dense figures (Hopper boards, the H20), with where they were read added
/// to `sources`; `None` for a row without figures.
fn product_peaks(product: &ProductRow, sources: &mut Vec<String>) -> Option<ProductPeaks> {
    let figures = product.dense_tflops?;
    let source = product.dense_source.clone().unwrap_or_else(|| product.source.clone());
    sources.push(format!("the product's own dense figures ({}): {source}", product.name));
    Some(ProductPeaks {
        product: product.name.clone(),
        sm_count: product.sm_count,
        fp32_tflops: figures.fp32,
        tf32_tflops: figures.tf32,
        fp16_tflops: figures.fp16,
        bf16_tflops: figures.bf16,
        source,
    })
}

/// Puts together what the run is judged against. NVML's figures (from the snapshot) come first;
/// CUDA's device attributes fill gaps; the SM count comes from CUDA only.
pub fn gather(snapshot: Option<&Snapshot>, gpu_index: u32, device: Option<&DeviceInfo>, kb: Option<&Kb>) -> Facts {
    let gpu = snapshot.and_then(|s| benchmarked_gpu(s, gpu_index, device));
    let mut facts = Facts::default();
    let mut sources = Vec::new();

    let bus_id = gpu.and_then(|g| g.pci_bus_id.clone()).or_else(|| device.and_then(|d| d.pci_bus_id.clone()));
    if let (Some(snap), Some(bus)) = (snapshot, bus_id.as_deref())
        && let Some(link) = link_for(snap, bus)
    {
        facts.link_gbytes_per_s = link.theoretical_gbytes_per_s;
        facts.link_basis = Some(link.bandwidth_basis.clone());
        if link.theoretical_gbytes_per_s.is_some() {
            sources.push(format!("host link of {}: {}", link.bus_id, link.bandwidth_basis));
        }
    }

    let pick = |nvml: Option<u32>, cuda: Option<u32>, what: &str, sources: &mut Vec<String>| match (nvml, cuda) {
        (Some(v), _) => {
            sources.push(format!("{what}: {v} (NVML)"));
            Some(v)
        }
        (None, Some(v)) => {
            sources.push(format!("{what}: {v} (CUDA device attribute)"));
            Some(v)
        }
        (None, None) => None,
    };
    facts.memory_bus_width_bits = pick(
        gpu.and_then(|g| g.memory_bus_width_bits),
        device.and_then(|d| d.memory_bus_width_bits),
        "memory bus width, bits",
        &mut sources,
    );
    facts.clock_mem_max_mhz = pick(
        gpu.and_then(|g| g.clock_mem_max_mhz),
        device.and_then(|d| d.clock_mem_max_mhz),
        "highest memory clock, MHz",
        &mut sources,
    );
    facts.clock_sm_max_mhz = pick(gpu.and_then(|g| g.clock_sm_max_mhz), None, "highest SM clock, MHz", &mut sources);
    if let Some((mhz, source)) =
        rated_sm_clock(gpu.and_then(|g| g.clock_sm_boost_mhz), device.and_then(|d| d.clock_sm_max_mhz))
    {
        sources.push(format!("rated boost clock, MHz: {mhz} ({source})"));
        facts.clock_sm_rated_mhz = Some(mhz);
        facts.clock_sm_rated_source = Some(source.to_owned());
    }
    facts.sm_count = pick(None, device.and_then(|d| d.sm_count), "streaming multiprocessors", &mut sources);
    facts.memory_free_bytes =
        device.and_then(|d| d.memory_free_bytes).or_else(|| gpu.and_then(|g| g.memory_free_bytes));

    let cc = device.and_then(|d| d.compute_capability).or_else(|| gpu.and_then(|g| g.compute_capability));
    let name = gpu.and_then(|g| g.name.as_deref()).or_else(|| device.and_then(|d| d.name.as_deref()));
    // The knowledge base's product row for the name, unless it says another capability than the GPU's.
    let product =
        kb.zip(name).and_then(|(kb, name)| kb.gpus.product_for_name(name)).filter(|p| cc.is_none_or(|cc| cc == p.cc));
    if let (Some(cc), Some(kb)) = (cc, kb) {
        match kb.gpus.cc.iter().find(|row| row.cc == cc) {
            Some(row) => match row.ops_per_clock_per_sm {
                Some(ops) => {
                    let mut peak = PeakOps::from(ops);
                    sources.push(format!("operations per clock per SM for {cc} ({}): {}", row.arch, row.source));
                    if let (Some(product), Some(divisor)) = (product.filter(|p| p.geforce), ops.geforce_tensor_divisor)
                    {
                        peak = peak.tensor_divided_by(divisor);
                        let note = format!(
                            "÷ {divisor}: a GeForce board ({}) runs tensor cores with FP32 accumulation at 1/{divisor} \
                             of the rate of its capability",
                            product.name
                        );
                        sources.push(format!("tensor rates {note}: {}", product.source));
                        facts.tensor_rate_note = Some(note);
                    }
                    facts.peak_ops = Some(peak);
                }
                None => {
                    sources.push(format!("the knowledge base has no throughput figures for compute capability {cc}"))
                }
            },
            None => sources.push(format!("the knowledge base has no row for compute capability {cc}")),
        }
    }
    facts.product_peaks = product.and_then(|p| product_peaks(p, &mut sources));
    if let Some(snap) = snapshot {
        facts.p2p_links = gpu_doctor_judge::bench::p2p::link_facts(snap, kb.map(|k| &k.links));
        if !facts.p2p_links.is_empty() {
            sources.push(format!(
                "GPU pairs for the GPU-to-GPU copies: {} from the probed topology; NVLink rates from links.toml",
                facts.p2p_links.len()
            ));
        }
    }
    facts.sources = sources;
    facts
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use gpu_doctor_kb::Kb;
    use gpu_doctor_model::ComputeCapability;

    use gpu_doctor_judge::bench::verdict::judge;
    use gpu_doctor_model::bench::judgement::Verdict;
    use gpu_doctor_model::bench::plan::Precision;
    use gpu_doctor_model::bench::protocol::{Measurement, Metric};
    use gpu_doctor_model::bench::unit::Unit;

    use super::*;

    #[test]
    fn the_snapshot_gpu_is_found_by_bus_id_and_nvml_facts_come_first() {
        let gpu = |index: u32, bus: &str, width: u32| Gpu {
            index,
            pci_bus_id: Some(bus.to_owned()),
            memory_bus_width_bits: Some(width),
            clock_mem_max_mhz: Some(1000),
            ..Gpu::default()
        };
        let mut snap = Snapshot::unknown(Vec::new());
        snap.gpus =
            gpu_doctor_model::Probed::found(vec![gpu(0, "0000:01:00.0", 256), gpu(1, "0000:41:00.0", 384)], "test");
        // CUDA_VISIBLE_DEVICES=1 makes the second GPU CUDA's device 0.
        let device = DeviceInfo {
            pci_bus_id: Some("0000:41:00.0".into()),
            memory_bus_width_bits: Some(1),
            ..DeviceInfo::default()
        };
        let facts = gather(Some(&snap), 0, Some(&device), None);
        assert_eq!(facts.memory_bus_width_bits, Some(384));
        assert!(facts.sources.iter().any(|s| s.contains("(NVML)")));
        // Without a bus id, the index decides.
        assert_eq!(gather(Some(&snap), 0, None, None).memory_bus_width_bits, Some(256));
    }

    /// A GPU behind an Intel VMD domain (`10000:e0:00.0`) and one on domain 0 at the same bus
    /// number are different devices: CUDA's `10000:E0:00.0` must find the VMD link, not the other.
    #[test]
    fn a_wide_pci_domain_is_not_cut_to_four_digits_when_matching_links() {
        let link = |bus: &str, gbytes: f64| {
            serde_json::from_value::<HostLink>(serde_json::json!({
                "bus_id": bus, "pci_path": [bus], "upstream": [], "numa_node": null, "gen_current": 4,
                "gen_max": 4, "width_current": 16, "width_max": 16, "values_from": "sysfs", "egpu": null,
                "theoretical_gbytes_per_s": gbytes, "bandwidth_basis": "test", "idle_note": null
            }))
            .unwrap()
        };
        let mut snap = Snapshot::unknown(Vec::new());
        snap.links =
            gpu_doctor_model::Probed::found(vec![link("0000:e0:00.0", 1.0), link("10000:e0:00.0", 2.0)], "test");
        assert_eq!(link_for(&snap, "10000:E0:00.0").map(|l| l.bus_id.as_str()), Some("10000:e0:00.0"));
        assert_eq!(link_for(&snap, "00000000:E0:00.0").map(|l| l.bus_id.as_str()), Some("0000:e0:00.0"));
        assert!(link_for(&snap, "N/A").is_none());
    }

    #[test]
    fn without_a_snapshot_cuda_attributes_fill_in() {
        let device = DeviceInfo {
            sm_count: Some(132),
            clock_sm_max_mhz: Some(1980),
            clock_mem_max_mhz: Some(3201),
            memory_bus_width_bits: Some(6144),
            memory_free_bytes: Some(100),
            compute_capability: Some(ComputeCapability { major: 9, minor: 0 }),
            ..DeviceInfo::default()
        };
        let facts = gather(None, 0, Some(&device), None);
        assert_eq!(facts.sm_count, Some(132));
        assert_eq!(facts.memory_bus_width_bits, Some(6144));
        assert_eq!(facts.memory_free_bytes, Some(100));
        assert!(facts.link_gbytes_per_s.is_none());
        assert!(facts.sources.iter().any(|s| s.contains("CUDA device attribute")));
    }

    fn rtx_4090(boost: Option<u32>, cuda_clock_rate: Option<u32>) -> Facts {
        let mut snap = Snapshot::unknown(Vec::new());
        let gpu = Gpu {
            index: 0,
            name: Some("NVIDIA GeForce RTX 4090".into()),
            clock_sm_max_mhz: Some(3105),
            clock_sm_boost_mhz: boost,
            ..Gpu::default()
        };
        snap.gpus = gpu_doctor_model::Probed::found(vec![gpu], "test");
        let device = DeviceInfo {
            name: Some("NVIDIA GeForce RTX 4090".into()),
            sm_count: Some(128),
            clock_sm_max_mhz: cuda_clock_rate,
            compute_capability: Some(ComputeCapability { major: 8, minor: 9 }),
            ..DeviceInfo::default()
        };
        gather(Some(&snap), 0, Some(&device), Some(Kb::get().unwrap()))
    }

    /// NVML's highest SM clock on an RTX 4090 is 3105 MHz, the top of its voltage/frequency table;
    /// the board is rated at 2520. FP32 is 128 ops/clock/SM × 128 SMs: 82.6 TFLOP/s at the rated
    /// clock, not 101.7 at the table's top, so an FMA run at 80 TFLOP/s is normal, not low.
    #[test]
    fn compute_peaks_use_the_rated_boost_clock_not_the_highest() {
        let facts = rtx_4090(Some(2520), Some(2520));
        let (fp32, basis) = facts.peak_tflops(Precision::Fp32).unwrap();
        assert!((fp32 - 82.6).abs() < 0.1, "{fp32}: {basis}");
        assert!(basis.contains("2520 MHz: the rated boost clock (NVML's max customer boost clock)"), "{basis}");
        assert!(facts.sources.iter().any(|s| s.contains("rated boost clock, MHz: 2520")), "{:?}", facts.sources);
        let fma = |value: f64| Measurement::single(Metric::FmaPeak, "", value, Unit::TflopPerS);
        assert_eq!(judge(&fma(80.0), &facts).verdict, Verdict::Normal);
        // Boosting past its rating (≈ 2.85 GHz) is allowed up to the table's top, not "above theory".
        assert_eq!(judge(&fma(93.0), &facts).verdict, Verdict::Normal);
        assert_eq!(judge(&fma(115.0), &facts).verdict, Verdict::AboveTheory);

        // Without NVML's customer boost clock, CUDA's clock-rate attribute gives the same rating.
        let (_, basis) = rtx_4090(None, Some(2520)).peak_tflops(Precision::Fp32).unwrap();
        assert!(basis.contains("2520 MHz: the rated boost clock (CUDA's clock-rate attribute)"), "{basis}");
    }

    /// With no rated clock at all, the highest SM clock is used and the basis says why and what
    /// that means.
    #[test]
    fn without_a_rated_clock_the_highest_is_used_and_the_basis_says_so() {
        let facts = rtx_4090(None, None);
        assert_eq!(facts.clock_sm_rated_mhz, None);
        let (fp32, basis) = facts.peak_tflops(Precision::Fp32).unwrap();
        assert!((fp32 - 101.7).abs() < 0.1, "{fp32}");
        assert!(basis.contains("3105 MHz: NVML's highest SM clock, because no rated boost clock"), "{basis}");
        assert!(basis.contains("may be 20–30 % too high"), "{basis}");
    }

    /// A healthy RTX 4090 reaches about 165 TFLOP/s BF16 with FP32 accumulation (128 SMs × 2520 MHz ×
    /// 512): it must be judged against that, not against the 330 of the full Ada rate, which an
    /// RTX 6000 Ada (the same AD102 chip on a workstation board) does run at.
    #[test]
    fn a_geforce_board_is_judged_against_its_halved_tensor_rate_from_its_product_row() {
        let kb = Kb::get().unwrap();
        let device = |name: &str| DeviceInfo {
            name: Some(name.into()),
            sm_count: Some(128),
            clock_sm_max_mhz: Some(2520),
            compute_capability: Some(ComputeCapability { major: 8, minor: 9 }),
            ..DeviceInfo::default()
        };
        let geforce = gather(None, 0, Some(&device("NVIDIA GeForce RTX 4090")), Some(kb));
        let (bf16, basis) = geforce.peak_tflops(Precision::Bf16).unwrap();
        assert!((bf16 - 165.2).abs() < 0.5, "{bf16} TFLOP/s: {basis}");
        assert!(basis.contains("GeForce") && basis.contains("RTX 4090"), "{basis}");
        let (fp32, fp32_basis) = geforce.peak_tflops(Precision::Fp32).unwrap();
        assert!((fp32 - 82.6).abs() < 0.5, "FP32 is not a tensor rate: {fp32}");
        assert!(!fp32_basis.contains("GeForce"), "{fp32_basis}");

        let workstation = gather(None, 0, Some(&device("NVIDIA RTX 6000 Ada Generation")), Some(kb));
        let (bf16, basis) = workstation.peak_tflops(Precision::Bf16).unwrap();
        assert!((bf16 - 330.3).abs() < 0.5, "{bf16} TFLOP/s: {basis}");
        assert!(workstation.tensor_rate_note.is_none());
        // The divisor comes from the knowledge base's product rows, not from the word in the name.
        let unknown = gather(None, 0, Some(&device("NVIDIA GeForce Something 9999")), Some(kb));
        assert!(unknown.tensor_rate_note.is_none());
    }

    /// A Hopper board as CUDA describes it, judged with the knowledge base.
    fn hopper(name: &str, sm_count: u32, boost_mhz: u32) -> Facts {
        let device = DeviceInfo {
            name: Some(name.into()),
            sm_count: Some(sm_count),
            clock_sm_max_mhz: Some(boost_mhz),
            compute_capability: Some(ComputeCapability { major: 9, minor: 0 }),
            ..DeviceInfo::default()
        };
        gather(None, 0, Some(&device), Some(Kb::get().unwrap()))
    }

    fn gemm(precision: Precision, value: f64) -> Measurement {
        Measurement::single(Metric::Gemm { precision, n: 8192 }, "", value, Unit::TflopPerS)
    }

    /// An H100 SXM5 ("NVIDIA H100 80GB HBM3", 132 SMs, rated boost clock 1980 MHz): NVIDIA's dense
    /// BF16 figure, 989.4 TFLOP/s, is 4096 ops/clock/SM × 132 SMs × 1830 MHz, not × 1980 (1070.5).
    /// A healthy 790 TFLOP/s BF16 GEMM reads 80 % of it, not 74 %; FP32 keeps the boost clock, and
    /// the basis names both clocks.
    #[test]
    fn hopper_tensor_peaks_use_nvidias_dense_figures_and_fp32_the_boost_clock() {
        let sxm = hopper("NVIDIA H100 80GB HBM3", 132, 1980);
        let (bf16, basis) = sxm.peak_tflops(Precision::Bf16).unwrap();
        assert!((bf16 - 989.4).abs() < 0.05, "{bf16}: {basis}");
        assert!(basis.contains("4096 ops/clock/SM × 132 SMs × 1830 MHz = 989.4 TFLOP/s"), "{basis}");
        assert!(basis.contains("1980 MHz: the rated boost clock (CUDA's clock-rate attribute)"), "{basis}");
        let healthy = judge(&gemm(Precision::Bf16, 790.0), &sxm);
        assert_eq!(healthy.verdict, Verdict::Normal, "{healthy:?}");
        assert_eq!(healthy.percent_of_expected.map(f64::round), Some(80.0), "{healthy:?}");
        assert!(healthy.comment.starts_with("80 % of expected"), "{}", healthy.comment);
        let (tf32, _) = sxm.peak_tflops(Precision::Tf32).unwrap();
        assert!((tf32 - 494.7).abs() < 0.05, "{tf32}");
        let (fp32, fp32_basis) = sxm.peak_tflops(Precision::Fp32).unwrap();
        assert!((fp32 - 66.9).abs() < 0.05, "{fp32}: {fp32_basis}");
        assert!(fp32_basis.contains("× 1980 MHz") && !fp32_basis.contains("1830"), "{fp32_basis}");
        // The tensor cores may run above the figure's clock, up to the rated one: not above theory.
        assert_eq!(judge(&gemm(Precision::Bf16, 1060.0), &sxm).verdict, Verdict::Normal);
        assert_eq!(judge(&gemm(Precision::Bf16, 1200.0), &sxm).verdict, Verdict::AboveTheory);
        assert!(
            sxm.sources.iter().any(|s| s.contains("own dense figures (NVIDIA H100 80GB HBM3)")),
            "{:?}",
            sxm.sources
        );

        // The other GH100 boards: (name, SMs, rated boost clock, BF16 dense, the figure's clock).
        for (name, sms, boost, want, mhz) in [
            ("NVIDIA H100 PCIe", 114, 1755, 756.5, "1620 MHz"),
            ("NVIDIA H100 NVL", 132, 1785, 835.5, "1545 MHz"),
            ("NVIDIA H200", 132, 1980, 989.5, "1830 MHz"),
            ("NVIDIA H200 NVL", 132, 1785, 835.5, "1545 MHz"),
            ("NVIDIA GH200 480GB", 132, 1980, 990.0, "1831 MHz"),
        ] {
            let facts = hopper(name, sms, boost);
            let (bf16, basis) = facts.peak_tflops(Precision::Bf16).unwrap();
            assert!((bf16 - want).abs() < 0.05, "{name}: {bf16}: {basis}");
            assert!(
                basis.contains(&format!("× {mhz} =")) && basis.contains(&format!("{boost} MHz: the rated")),
                "{name}: {basis}"
            );
            let (fp32, _) = facts.peak_tflops(Precision::Fp32).unwrap();
            assert!((fp32 - 256.0 * f64::from(sms) * f64::from(boost) / 1e6).abs() < 0.05, "{name}: FP32 {fp32}");
        }

        // A MIG instance of an H100 SXM5 with 16 SMs gets its share of the board's figure.
        let (slice, basis) = hopper("NVIDIA H100 80GB HBM3", 16, 1980).peak_tflops(Precision::Bf16).unwrap();
        assert!((slice - 989.4 * 16.0 / 132.0).abs() < 0.05, "{slice}: {basis}");
        // A board the table has no figures for (the bare "NVIDIA H100") keeps ops × SMs × the boost clock.
        let bare = hopper("NVIDIA H100", 132, 1980);
        assert!(bare.product_peaks.is_none());
        assert!((bare.peak_tflops(Precision::Bf16).unwrap().0 - 1070.5).abs() < 0.1);
    }

    /// The H20 is a GH100 whose tensor cores run at about 15 % of the H100's: dense BF16 148 TFLOP/s,
    /// TF32 74, FP32 44 (spec sheets as publicly reported), not 4096 ops/clock/SM × its SMs × its
    /// clock (≈ 630 with the 78 SMs a benchmark listing reports). A BF16 GEMM at 120 TFLOP/s is
    /// normal, not LOW; one past its figure is above theory.
    #[test]
    fn the_h20_is_judged_against_its_own_cut_down_figures() {
        let h20 = hopper("NVIDIA H20", 78, 1980);
        let (bf16, basis) = h20.peak_tflops(Precision::Bf16).unwrap();
        assert!((bf16 - 148.0).abs() < 1e-9, "{bf16}: {basis}");
        assert!(
            basis.starts_with("BF16 dense: 148.0 TFLOP/s, NVIDIA's dense figure for NVIDIA H20 (https://"),
            "{basis}"
        );
        assert!(basis.contains("not 4096 ops/clock/SM × 78 SMs × 1980 MHz = 632.6"), "{basis}");
        let j = judge(&gemm(Precision::Bf16, 120.0), &h20);
        assert_eq!(j.verdict, Verdict::Normal, "{j:?}");
        assert_eq!(j.percent_of_expected.map(f64::round), Some(81.0), "{j:?}");
        assert_eq!(judge(&gemm(Precision::Bf16, 170.0), &h20).verdict, Verdict::AboveTheory);
        assert!((h20.peak_tflops(Precision::Tf32).unwrap().0 - 74.0).abs() < 1e-9);
        let fma = Measurement::single(Metric::FmaPeak, "", 38.0, Unit::TflopPerS);
        let j = judge(&fma, &h20);
        assert_eq!(j.expected.as_ref().map(|e| e.value), Some(44.0), "{j:?}");
        assert_eq!(j.verdict, Verdict::Normal, "{j:?}");
    }
}
