#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Table tests: the shipped knowledge base is data, so these check the data itself (order, keys,
//! gaps, cross-references, sources, and a few published numbers it must reproduce).

use super::*;
use gpu_doctor_model::{ComputeCapability, CudaVersion, DriverVersion};

fn kb() -> &'static Kb {
    Kb::get().unwrap_or_else(|e| panic!("{e}"))
}

fn cc(s: &str) -> ComputeCapability {
    s.parse().unwrap()
}

fn cuda(s: &str) -> CudaVersion {
    s.parse().unwrap()
}

/// The GA row of a major.minor.
fn ga(kb: &Kb, v: CudaVersion) -> Option<&ToolkitRelease> {
    kb.cuda.toolkit.iter().find(|t| t.version == v.major_minor() && t.update == 0)
}

/// `"2.10"` → (2, 10): release lines compare numerically, not as text.
fn line(s: &str) -> (u32, u32) {
    let (a, b) = s.split_once('.').unwrap_or_else(|| panic!("release line {s:?} is not major.minor"));
    (a.parse().unwrap_or_else(|_| panic!("{s:?}")), b.parse().unwrap_or_else(|_| panic!("{s:?}")))
}

/// Fails, naming the first pair out of order, unless `keys` strictly increase (sorted, no duplicates).
fn assert_strictly_increasing<K: PartialOrd + std::fmt::Debug>(table: &str, keys: &[K]) {
    for w in keys.windows(2) {
        assert!(w[0] < w[1], "{table}: rows not sorted or duplicated: {:?} then {:?}", w[0], w[1]);
    }
}

/// Fails unless release lines run without a gap from `first` to `last` (a new major starts at .0).
fn assert_contiguous_lines(table: &str, lines: &[(u32, u32)], first: (u32, u32), last: (u32, u32)) {
    assert_eq!(lines.first(), Some(&first), "{table}: first line");
    assert_eq!(lines.last(), Some(&last), "{table}: last line");
    for w in lines.windows(2) {
        let next_minor = (w[0].0, w[0].1 + 1);
        let next_major = (w[0].0 + 1, 0);
        assert!(w[1] == next_minor || w[1] == next_major, "{table}: gap between {:?} and {:?}", w[0], w[1]);
    }
}

#[test]
fn every_table_parses() {
    let kb = Kb::load().unwrap_or_else(|e| panic!("{e}"));
    assert!(!kb.cuda.toolkit.is_empty());
    assert!(!kb.cuda.family.is_empty());
    assert!(!kb.gpus.cc.is_empty() && !kb.gpus.product.is_empty());
    assert!(!kb.pytorch.release.is_empty() && !kb.pytorch.variant.is_empty());
    assert!(!kb.tensorflow.release.is_empty());
    assert!(!kb.jax.plugin.is_empty() && !kb.cupy.package.is_empty());
    assert!(!kb.cudnn.release.is_empty());
    assert!(!kb.links.pcie.is_empty() && !kb.links.link.is_empty());
}

// ---------------------------------------------------------------- order and keys

#[test]
fn rows_are_sorted_by_their_keys_without_duplicates() {
    let kb = kb();
    let t: Vec<_> = kb.cuda.toolkit.iter().map(|r| (r.version, r.update)).collect();
    assert_strictly_increasing("cuda.toml [[toolkit]] by (version, update)", &t);
    let f: Vec<_> = kb.cuda.family.iter().map(|r| r.major).collect();
    assert_strictly_increasing("cuda.toml [[family]] by major", &f);
    let c: Vec<_> = kb.gpus.cc.iter().map(|r| r.cc).collect();
    assert_strictly_increasing("gpus.toml [[cc]] by cc", &c);
    let r: Vec<_> = kb.pytorch.release.iter().map(|r| line(&r.version)).collect();
    assert_strictly_increasing("pytorch.toml [[release]] by version", &r);
    let v: Vec<_> = kb.pytorch.variant.iter().map(|v| (line(&v.torch), v.cuda)).collect();
    assert_strictly_increasing("pytorch.toml [[variant]] by (torch, cuda)", &v);
    let tf: Vec<_> = kb.tensorflow.release.iter().map(|r| line(&r.version)).collect();
    assert_strictly_increasing("tensorflow.toml [[release]] by version", &tf);
    let d: Vec<_> = kb.cudnn.release.iter().map(|r| r.version).collect();
    assert_strictly_increasing("cudnn.toml [[release]] by version", &d);
    let p: Vec<_> = kb.links.pcie.iter().map(|r| r.generation).collect();
    assert_strictly_increasing("links.toml [[pcie]] by generation", &p);
}

#[test]
fn names_and_keys_are_unique() {
    let kb = kb();
    fn unique(table: &str, names: Vec<String>) {
        let mut seen = std::collections::HashSet::new();
        for n in names {
            assert!(seen.insert(n.clone()), "{table}: duplicate {n:?}");
        }
    }
    unique(
        "gpus.toml [[product]] name (case-insensitive)",
        kb.gpus.product.iter().map(|p| p.name.to_lowercase()).collect(),
    );
    unique("links.toml [[link]] key", kb.links.link.iter().map(|l| l.key.clone()).collect());
    unique("jax.toml [[plugin]] package", kb.jax.plugin.iter().map(|p| p.package.clone()).collect());
    unique("cupy.toml [[package]] name", kb.cupy.package.iter().map(|p| p.name.clone()).collect());
    for p in &kb.gpus.product {
        assert_eq!(p.name.trim(), p.name, "gpus.toml: product pattern {:?} has outer spaces", p.name);
        assert!(p.name.len() >= 4, "gpus.toml: product pattern {:?} is too short to be specific", p.name);
    }
}

// ---------------------------------------------------------------- gaps and cross-references

#[test]
fn cuda_families_and_toolkits_cover_each_other() {
    let kb = kb();
    let majors: Vec<_> = kb.cuda.family.iter().map(|f| f.major).collect();
    assert_eq!(majors, (7..=13).collect::<Vec<_>>(), "cuda.toml: [[family]] majors must be 7..=13, none missing");
    for t in &kb.cuda.toolkit {
        assert!(kb.cuda.family.iter().any(|f| f.major == t.version.major), "cuda.toml: no [[family]] for {t:?}");
        assert!(t.version.patch.is_none(), "cuda.toml: toolkit version is major.minor, update separate: {t:?}");
    }
    for f in &kb.cuda.family {
        assert!(kb.cuda.toolkit.iter().any(|t| t.version.major == f.major), "cuda.toml: no toolkit for {f:?}");
        assert!(kb.cuda.toolkit.iter().any(|t| t.version.major == f.major && t.update == 0));
    }
    // Every minor that has update rows also has its GA row.
    for t in &kb.cuda.toolkit {
        assert!(
            kb.cuda.toolkit.iter().any(|g| g.version == t.version && g.update == 0),
            "cuda.toml: {} Update {} without a GA row",
            t.version,
            t.update
        );
    }
}

#[test]
fn family_floors_match_their_compatibility_flag() {
    let kb = kb();
    for f in &kb.cuda.family {
        if f.minor_version_compatibility {
            assert!(
                f.linux_floor.is_some() && f.windows_floor.is_some(),
                "cuda.toml: MVC family without floors: {f:?}"
            );
            assert!(f.major >= 11, "cuda.toml: MVC only exists from CUDA 11: {f:?}");
        } else {
            assert!(f.linux_floor.is_none() && f.windows_floor.is_none(), "cuda.toml: floors without MVC: {f:?}");
            assert!(f.floor_from_minor.is_none(), "cuda.toml: floor_from_minor without MVC: {f:?}");
        }
    }
}

/// The family floor is what the GA driver of every minor (from `floor_from_minor` on) meets, with no
/// exception: where NVIDIA's documents disagree (the 12.x Windows floor: 528.33 in the compatibility
/// page, 527.41 shipped with 12.0 GA) the lower one is kept.
#[test]
fn family_floors_sit_at_or_below_each_minors_own_driver() {
    let kb = kb();
    let known_exceptions: [(u32, u32, &str); 0] = [];
    for f in kb.cuda.family.iter().filter(|f| f.minor_version_compatibility) {
        for t in kb.cuda.toolkit.iter().filter(|t| t.version.major == f.major && t.update == 0) {
            if f.floor_from_minor.is_some_and(|m| t.version.minor < m) {
                continue;
            }
            let pairs = [
                ("linux", f.linux_floor.as_ref(), Some(&t.linux_driver)),
                ("windows", f.windows_floor.as_ref(), t.windows_driver.as_ref()),
            ];
            for (os, floor, own) in pairs {
                let (Some(floor), Some(own)) = (floor, own) else { continue };
                if known_exceptions.contains(&(f.major, t.version.minor, os)) {
                    assert!(floor > own, "cuda.toml: {os} exception for {} no longer needed", t.version);
                    continue;
                }
                assert!(
                    floor <= own,
                    "cuda.toml: {os} floor {floor} of CUDA {} is above {}'s GA driver {own}",
                    f.major,
                    t.version
                );
            }
        }
    }
    // CUDA 11.0 is the minor below the 11.x floor that NVIDIA lists apart.
    let f11 = kb.cuda.family.iter().find(|f| f.major == 11).unwrap();
    assert_eq!(f11.floor_from_minor, Some(1));
    let ga110 = ga(kb, CudaVersion::new(11, 0)).unwrap();
    assert!(&ga110.linux_driver < f11.linux_floor.as_ref().unwrap(), "11.0 GA's driver is below the 11.x floor");
}

#[test]
fn toolkit_drivers_never_decrease_with_the_version() {
    let kb = kb();
    let mut last_linux: Option<(&DriverVersion, &ToolkitRelease)> = None;
    let mut last_windows: Option<(&DriverVersion, &ToolkitRelease)> = None;
    for t in &kb.cuda.toolkit {
        if let Some((d, prev)) = last_linux {
            assert!(&t.linux_driver >= d, "cuda.toml: Linux driver goes down from {prev:?} to {t:?}");
        }
        last_linux = Some((&t.linux_driver, t));
        if let Some(w) = &t.windows_driver {
            if let Some((d, prev)) = last_windows {
                assert!(w >= d, "cuda.toml: Windows driver goes down from {prev:?} to {t:?}");
            }
            last_windows = Some((w, t));
        }
    }
    // NVIDIA's table says N/A for Windows from 13.0 on, and has it before.
    for t in &kb.cuda.toolkit {
        assert_eq!(t.windows_driver.is_none(), t.version.major >= 13, "cuda.toml: Windows driver presence: {t:?}");
    }
}

#[test]
fn gpu_rows_are_consistent() {
    let kb = kb();
    for r in &kb.gpus.cc {
        if let Some(last) = r.last_toolkit {
            assert!(r.first_toolkit <= last, "gpus.toml: first toolkit after last: {r:?}");
        }
        assert_eq!(
            r.last_toolkit.is_some(),
            r.last_driver_branch.is_some(),
            "gpus.toml: a retired cc has both ends: {r:?}"
        );
        assert_eq!(
            r.open_kernel_module,
            r.cc >= cc("7.5"),
            "gpus.toml: open kernel modules are Turing and newer: {r:?}"
        );
        if let Some(o) = r.ops_per_clock_per_sm {
            assert!(o.geforce_tensor_divisor.is_none_or(|d| d >= 2), "gpus.toml: divisor must halve or more: {r:?}");
            let tensor = [o.tf32_tensor, o.fp16_tensor, o.bf16_tensor];
            assert!(
                o.geforce_tensor_divisor.is_none() || tensor.iter().any(Option::is_some),
                "gpus.toml: divisor without rates: {r:?}"
            );
        }
    }
    // Retired capabilities: what CUDA removed when.
    let last = |c: &str| kb.gpus.row(cc(c)).unwrap().last_toolkit;
    assert_eq!(last("3.0"), Some(cuda("10.2")));
    assert_eq!(last("3.7"), Some(cuda("11.8")));
    assert_eq!(last("7.2"), Some(cuda("12.9")));
    assert_eq!(last("7.5"), None);
}

#[test]
fn every_capability_mentioned_anywhere_is_in_gpus_toml() {
    let kb = kb();
    let known = |c: ComputeCapability, what: String| {
        assert!(kb.gpus.row(c).is_some(), "{what}: capability {c} has no [[cc]] row in gpus.toml");
    };
    for v in &kb.pytorch.variant {
        for c in &v.arch {
            known(*c, format!("pytorch.toml variant {} cu{}", v.torch, v.cuda));
        }
        if let Some(p) = v.ptx {
            known(p, format!("pytorch.toml variant {} ptx", v.torch));
        }
    }
    for r in &kb.cudnn.release {
        known(r.min_cc, format!("cudnn.toml {}", r.version));
        known(r.max_cc, format!("cudnn.toml {}", r.version));
        assert!(r.min_cc <= r.max_cc, "cudnn.toml: min above max: {r:?}");
    }
    for p in &kb.jax.plugin {
        known(p.min_cc, format!("jax.toml {}", p.package));
    }
    for p in &kb.gpus.product {
        known(p.cc, format!("gpus.toml product {:?}", p.name));
    }
}

#[test]
fn every_cuda_version_mentioned_is_a_toolkit_release() {
    let kb = kb();
    let known = |v: CudaVersion, what: String| {
        assert!(ga(kb, v).is_some(), "{what}: CUDA {v} has no GA row in cuda.toml");
    };
    for v in &kb.pytorch.variant {
        known(v.cuda, format!("pytorch.toml variant {}", v.torch));
    }
    for r in &kb.tensorflow.release {
        known(r.cuda, format!("tensorflow.toml {}", r.version));
    }
    for p in &kb.jax.plugin {
        known(p.cuda_min, format!("jax.toml {}", p.package));
        assert_eq!(p.cuda_min.major, p.cuda_major, "jax.toml: {p:?}");
    }
    for p in &kb.cupy.package {
        known(p.cuda_min, format!("cupy.toml {}", p.name));
        known(p.cuda_max, format!("cupy.toml {}", p.name));
        assert!(p.cuda_min <= p.cuda_max, "cupy.toml: {p:?}");
    }
}

#[test]
fn torch_releases_and_variants_fit_together() {
    let kb = kb();
    let lines: Vec<_> = kb.pytorch.release.iter().map(|r| line(&r.version)).collect();
    assert_contiguous_lines("pytorch.toml [[release]]", &lines, (1, 7), (2, 15));
    for v in &kb.pytorch.variant {
        assert!(
            kb.pytorch.release.iter().any(|r| r.version == v.torch),
            "pytorch.toml: variant of unknown release: {v:?}"
        );
        assert!(!v.arch.is_empty(), "pytorch.toml: empty arch list: {v:?}");
        assert_strictly_increasing(&format!("pytorch.toml {} cu{} arch", v.torch, v.cuda), &v.arch);
        if let (Some(p), Some(max)) = (v.ptx, v.arch.last()) {
            assert!(p <= *max, "pytorch.toml: PTX newer than any SASS: {v:?}");
        }
        // The variant's toolkit must be able to build every listed capability.
        for c in &v.arch {
            let row = kb.gpus.row(*c).unwrap();
            let ok = row.first_toolkit <= v.cuda && row.last_toolkit.is_none_or(|l| v.cuda <= l);
            assert!(
                ok,
                "pytorch.toml: CUDA {} cannot build sm_{}{} (gpus.toml {row:?}): {v:?}",
                v.cuda, c.major, c.minor
            );
        }
    }
    for r in &kb.pytorch.release {
        let tags: Vec<_> = kb
            .pytorch
            .variant
            .iter()
            .filter(|v| v.torch == r.version)
            .map(|v| format!("cu{}{}", v.cuda.major, v.cuda.minor))
            .collect();
        assert!(!tags.is_empty(), "pytorch.toml: release without variants: {r:?}");
        for pypi in [&r.pypi_linux, &r.pypi_windows] {
            assert!(
                pypi == "cpu" || tags.contains(pypi),
                "pytorch.toml: {pypi:?} is neither cpu nor one of {tags:?}: {r:?}"
            );
        }
        assert!(line(&r.python_min) <= line(&r.python_max), "pytorch.toml: {r:?}");
    }
}

#[test]
fn tensorflow_lines_are_contiguous_and_windows_gpu_builds_are_the_oldest() {
    let kb = kb();
    let lines: Vec<_> = kb.tensorflow.release.iter().map(|r| line(&r.version)).collect();
    assert_contiguous_lines("tensorflow.toml [[release]]", &lines, (2, 4), (2, 21));
    let windows: Vec<bool> = kb.tensorflow.release.iter().map(|r| r.windows_native_gpu).collect();
    assert!(windows.windows(2).all(|w| w[0] || !w[1]), "tensorflow.toml: a Windows GPU build after one without");
    for r in &kb.tensorflow.release {
        assert!(line(&r.python_min) <= line(&r.python_max), "tensorflow.toml: {r:?}");
    }
}

#[test]
fn cudnn_majors_are_cuda_majors_we_know() {
    let kb = kb();
    for r in &kb.cudnn.release {
        assert!(!r.cuda_majors.is_empty(), "cudnn.toml: {r:?}");
        assert_strictly_increasing(&format!("cudnn.toml {} cuda_majors", r.version), &r.cuda_majors);
        for m in &r.cuda_majors {
            assert!(kb.cuda.family.iter().any(|f| f.major == *m), "cudnn.toml: CUDA {m} unknown: {r:?}");
        }
    }
}

#[test]
fn pcie_generations_are_contiguous_with_sane_line_codes() {
    let kb = kb();
    let nvlinks: Vec<_> =
        kb.links.nvlink.iter().filter(|n| n.compute_capability.is_none()).map(|n| n.version).collect();
    assert_eq!(nvlinks, (1..=5).collect::<Vec<_>>(), "links.toml: NVLink versions must be 1..=5");
    // NVIDIA's per-GPU totals, both directions: H100 900 GB/s over 18 links, B200 1.8 TB/s over 18.
    let per_gpu =
        |version: u32, links: f64| kb.links.nvlink_gen(version, None).unwrap().gbytes_per_s_per_link * 2.0 * links;
    assert!((per_gpu(4, 18.0) - 900.0).abs() < 1e-9 && (per_gpu(5, 18.0) - 1800.0).abs() < 1e-9);
    assert!((per_gpu(2, 6.0) - 300.0).abs() < 1e-9 && (per_gpu(3, 12.0) - 600.0).abs() < 1e-9);
    // GA102 (8.6): four NVLink 3 links give 112.5 GB/s both ways between two GPUs; an A100 (8.0)
    // has no row of its own and gets the generation's rate.
    let ga102 = kb.links.nvlink_gen(3, Some("8.6")).unwrap().gbytes_per_s_per_link;
    assert!((ga102 * 2.0 * 4.0 - 112.5).abs() < 1e-9, "{ga102}");
    assert!((kb.links.nvlink_gen(3, Some("8.0")).unwrap().gbytes_per_s_per_link - 25.0).abs() < 1e-9);
    let gens: Vec<_> = kb.links.pcie.iter().map(|p| p.generation).collect();
    assert_eq!(gens, (1..=6).collect::<Vec<_>>(), "links.toml: PCIe generations must be 1..=6");
    for p in &kb.links.pcie {
        let [payload, line] = p.payload_per_line;
        assert!(0 < payload && payload <= line, "links.toml: payload share must be in (0, 1]: {p:?}");
        assert!(p.gt_per_s > 0.0, "links.toml: {p:?}");
    }
    for l in &kb.links.link {
        let (lo, hi) = (l.typical_min_gbytes_per_s, l.typical_max_gbytes_per_s);
        assert_eq!(lo.is_some(), hi.is_some(), "links.toml: half a typical range: {l:?}");
        if let (Some(lo), Some(hi)) = (lo, hi) {
            assert!(
                0.0 < lo && lo <= hi && hi <= l.theoretical_gbytes_per_s,
                "links.toml: typical range outside 0..theoretical: {l:?}"
            );
        }
    }
}

// ---------------------------------------------------------------- sources

/// A source is a URL or `owner/repo:path`, optionally followed by a note after a space.
fn looks_like_a_source(s: &str) -> bool {
    let Some(head) = s.split_whitespace().next() else { return false };
    if let Some(rest) = head.strip_prefix("https://").or_else(|| head.strip_prefix("http://")) {
        return rest.contains('.') && !rest.starts_with('/');
    }
    let Some((repo, path)) = head.split_once(':') else { return false };
    let ok = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    let mut parts = repo.split('/');
    matches!((parts.next(), parts.next(), parts.next()), (Some(o), Some(r), None) if ok(o) && ok(r)) && !path.is_empty()
}

#[test]
fn source_recognizer_accepts_urls_and_repo_paths_only() {
    assert!(looks_like_a_source("https://developer.nvidia.com/cuda-gpus"));
    assert!(looks_like_a_source("pytorch/pytorch:RELEASE.md"));
    assert!(looks_like_a_source("https://docs.nvidia.com/x.html (Table 3)"));
    for bad in ["", "  ", "NVIDIA docs", "pytorch/pytorch", "a/b/c:d", "https://", "ftp://x.y"] {
        assert!(!looks_like_a_source(bad), "{bad:?}");
    }
}

#[test]
fn every_row_names_a_source() {
    let kb = kb();
    let mut all: Vec<(String, &str)> = Vec::new();
    all.extend(
        kb.cuda.toolkit.iter().map(|r| (format!("cuda.toml toolkit {} u{}", r.version, r.update), r.source.as_str())),
    );
    all.extend(kb.cuda.family.iter().map(|r| (format!("cuda.toml family {}", r.major), r.source.as_str())));
    all.extend(kb.gpus.cc.iter().map(|r| (format!("gpus.toml cc {}", r.cc), r.source.as_str())));
    all.extend(kb.gpus.tensor.iter().map(|r| (format!("gpus.toml tensor {}", r.precision), r.source.as_str())));
    all.extend(kb.gpus.product.iter().map(|r| (format!("gpus.toml product {:?}", r.name), r.source.as_str())));
    all.extend(kb.pytorch.release.iter().map(|r| (format!("pytorch.toml release {}", r.version), r.source.as_str())));
    all.extend(
        kb.pytorch.variant.iter().map(|r| (format!("pytorch.toml variant {} {}", r.torch, r.cuda), r.source.as_str())),
    );
    all.extend(kb.tensorflow.release.iter().map(|r| (format!("tensorflow.toml {}", r.version), r.source.as_str())));
    all.extend(kb.jax.plugin.iter().map(|r| (format!("jax.toml {}", r.package), r.source.as_str())));
    all.extend(kb.jax.release.iter().map(|r| (format!("jax.toml release {}", r.version), r.source.as_str())));
    all.extend(kb.cupy.package.iter().map(|r| (format!("cupy.toml {}", r.name), r.source.as_str())));
    all.extend(kb.cudnn.release.iter().map(|r| (format!("cudnn.toml {}", r.version), r.source.as_str())));
    all.extend(kb.links.pcie.iter().map(|r| (format!("links.toml pcie {}", r.generation), r.source.as_str())));
    all.extend(kb.links.link.iter().map(|r| (format!("links.toml link {}", r.key), r.source.as_str())));
    all.extend(kb.links.nvlink.iter().map(|r| (format!("links.toml nvlink {}", r.version), r.source.as_str())));
    all.extend(kb.errors.message.iter().map(|r| (format!("errors.toml {}", r.id), r.source.as_str())));
    for (row, source) in all {
        assert!(looks_like_a_source(source), "{row}: source {source:?} is not a URL or owner/repo:path");
    }
}

// ---------------------------------------------------------------- throughput

/// ops/clock/SM × SMs × clock, in TFLOPS (or TOPS).
fn peak(ops: Option<u32>, sms: u32, mhz: u32) -> f64 {
    let ops = ops.unwrap_or_else(|| panic!("gpus.toml: a rate the published peak needs is missing"));
    f64::from(ops) * f64::from(sms) * f64::from(mhz) * 1e6 / 1e12
}

fn assert_near(what: &str, got: f64, published: f64) {
    assert!(
        (got - published).abs() / published <= 0.03,
        "gpus.toml: {what}: {got:.1} from the table, {published} published"
    );
}

#[test]
fn per_sm_rates_reproduce_published_peaks() {
    let kb = kb();
    let ops = |c: &str| {
        kb.gpus.row(cc(c)).unwrap().ops_per_clock_per_sm.unwrap_or_else(|| panic!("gpus.toml: cc {c} has no rates"))
    };

    // A100 SXM4: 108 SMs, 1410 MHz (A100 whitepaper).
    let a = ops("8.0");
    assert_near("A100 FP16 tensor", peak(a.fp16_tensor, 108, 1410), 312.0);
    assert_near("A100 BF16 tensor", peak(a.bf16_tensor, 108, 1410), 312.0);
    assert_near("A100 TF32 tensor", peak(a.tf32_tensor, 108, 1410), 156.0);
    assert_near("A100 INT8 tensor", peak(a.int8_tensor, 108, 1410), 624.0);
    assert_near("A100 FP32", peak(a.fp32, 108, 1410), 19.5);
    assert_near("A100 FP64", peak(a.fp64, 108, 1410), 9.7);

    // H100 SXM5: 132 SMs; tensor peaks at 1830 MHz, FP32/FP64 at 1980 MHz (H100 whitepaper). H200: same die.
    let h = ops("9.0");
    assert_near("H100 FP16 tensor", peak(h.fp16_tensor, 132, 1830), 989.4);
    assert_near("H100 BF16 tensor", peak(h.bf16_tensor, 132, 1830), 989.4);
    assert_near("H100 TF32 tensor", peak(h.tf32_tensor, 132, 1830), 494.7);
    assert_near("H100 INT8 tensor", peak(h.int8_tensor, 132, 1830), 1978.9);
    assert_near("H100 FP32", peak(h.fp32, 132, 1980), 66.9);
    assert_near("H100 FP64", peak(h.fp64, 132, 1980), 33.5);

    // V100 SXM2: 80 SMs, 1530 MHz. T4: 40 SMs, 1590 MHz. A40: 84 SMs, 1740 MHz. L40S: 142 SMs, 2520 MHz.
    assert_near("V100 FP16 tensor", peak(ops("7.0").fp16_tensor, 80, 1530), 125.0);
    assert_near("T4 FP16 tensor", peak(ops("7.5").fp16_tensor, 40, 1590), 65.0);
    assert_near("T4 INT8 tensor", peak(ops("7.5").int8_tensor, 40, 1590), 130.0);
    assert_near("A40 FP16 tensor", peak(ops("8.6").fp16_tensor, 84, 1740), 149.7);
    assert_near("L40S FP16 tensor", peak(ops("8.9").fp16_tensor, 142, 2520), 362.05);
    assert_near("P100 FP32", peak(ops("6.0").fp32, 56, 1480), 10.6);

    // GeForce boards halve FP16 with FP32 accumulation: RTX 3090 (82 SMs, 1695 MHz), RTX 4090 (128, 2520),
    // RTX 5090 (170, 2407), RTX 2080 Ti (68, 1545).
    let geforce = |c: &str| {
        let o = ops(c);
        o.fp16_tensor.map(|f| {
            f / o.geforce_tensor_divisor.unwrap_or_else(|| panic!("gpus.toml: cc {c} needs a GeForce divisor"))
        })
    };
    assert_near("RTX 3090 FP16 tensor, FP32 acc.", peak(geforce("8.6"), 82, 1695), 71.0);
    assert_near("RTX 4090 FP16 tensor, FP32 acc.", peak(geforce("8.9"), 128, 2520), 165.2);
    assert_near("RTX 5090 FP16 tensor, FP32 acc.", peak(geforce("12.0"), 170, 2407), 209.5);
    assert_near("RTX 2080 Ti FP16 tensor, FP32 acc.", peak(geforce("7.5"), 68, 1545), 53.8);
}

/// A product's own dense figures come with their source, and where its SM count is known they
/// imply, with its capability's rates, a clock a GPU runs at: a figure copied with sparsity (twice
/// the dense one) or for two boards fails here. The Hopper boards' implied clocks are the ones
/// NVIDIA's tensor figures assume, below the rated boost clocks (1980 / 1755 / 1785 MHz).
#[test]
fn product_dense_figures_are_sourced_and_fit_their_capability() {
    let kb = kb();
    let mut with_figures = 0;
    for p in &kb.gpus.product {
        let Some(d) = p.dense_tflops else {
            assert!(p.sm_count.is_none() && p.dense_source.is_none(), "gpus.toml: {}: no dense_tflops", p.name);
            continue;
        };
        with_figures += 1;
        let source = p.dense_source.as_deref().unwrap_or_else(|| panic!("gpus.toml: {}: no dense_source", p.name));
        assert!(looks_like_a_source(source), "gpus.toml: {}: dense_source {source:?}", p.name);
        let ops = kb.gpus.row(p.cc).and_then(|r| r.ops_per_clock_per_sm);
        let pairs = [
            ("FP32", d.fp32, ops.and_then(|o| o.fp32)),
            ("TF32", d.tf32, ops.and_then(|o| o.tf32_tensor)),
            ("FP16", d.fp16, ops.and_then(|o| o.fp16_tensor)),
            ("BF16", d.bf16, ops.and_then(|o| o.bf16_tensor)),
        ];
        for (what, figure, ops) in pairs {
            let Some(figure) = figure else { continue };
            assert!(figure > 0.0, "gpus.toml: {} {what}: {figure}", p.name);
            if let (Some(sms), Some(ops)) = (p.sm_count, ops) {
                let mhz = figure * 1e6 / (f64::from(ops) * f64::from(sms));
                assert!(
                    (1000.0..=2100.0).contains(&mhz),
                    "gpus.toml: {} {what}: {figure} TFLOP/s means {mhz:.0} MHz",
                    p.name
                );
            }
        }
    }
    assert!(with_figures >= 7, "gpus.toml: the Hopper boards and the H20 carry their figures");
    // A product's host link is a links.toml row; GH200's is NVLink-C2C, 450 GB/s per direction.
    for p in kb.gpus.product.iter().filter(|p| p.host_link.is_some()) {
        let key = p.host_link.as_deref().unwrap_or_default();
        assert!(kb.links.link(key).is_some(), "gpus.toml: {}: host_link {key:?} is no links.toml [[link]] key", p.name);
    }
    let (product, c2c) = kb.product_host_link("NVIDIA GH200 480GB").unwrap();
    assert_eq!((product.name.as_str(), c2c.key.as_str(), c2c.theoretical_gbytes_per_s), ("GH200", "nvlink_c2c", 450.0));
    assert!(kb.product_host_link("NVIDIA H100 80GB HBM3").is_none());
    let clock = |name: &str| {
        let p = kb.gpus.product_for_name(name).unwrap_or_else(|| panic!("no product row for {name}"));
        let bf16 = p.dense_tflops.and_then(|d| d.bf16).unwrap();
        bf16 * 1e6 / (4096.0 * f64::from(p.sm_count.unwrap()))
    };
    for (name, mhz) in [("NVIDIA H100 80GB HBM3", 1830.0), ("NVIDIA H100 PCIe", 1620.0), ("NVIDIA H100 NVL", 1545.0)] {
        assert!((clock(name) - mhz).abs() < 5.0, "{name}: {:.0} MHz", clock(name));
    }
}

// ---------------------------------------------------------------- product names

#[test]
fn product_names_map_to_their_capability() {
    let gpus = &kb().gpus;
    let cases = [
        // As nvidia-smi prints them, with and without the NVIDIA/GeForce prefixes of newer drivers.
        ("NVIDIA GeForce RTX 4090", "8.9"),
        ("NVIDIA GeForce RTX 4090 Laptop GPU", "8.9"),
        ("NVIDIA H200", "9.0"),
        ("NVIDIA H200 NVL", "9.0"),
        ("NVIDIA H100 80GB HBM3", "9.0"),
        ("NVIDIA GH200 480GB", "9.0"),
        ("Tesla T4", "7.5"),
        // Legacy boards the kernel's legacy-driver message names (siderolabs/talos#8764, fgci-org/ansible-role-cuda#16).
        ("NVIDIA GeForce GT 710", "3.5"),
        ("GeForce GT 710M", "2.1"),
        ("Tesla M2070", "2.0"),
        ("Quadro RTX 6000", "7.5"),
        ("NVIDIA RTX 6000 Ada Generation", "8.9"),
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "12.0"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0"),
        ("NVIDIA RTX 4000 SFF Ada Generation", "8.9"),
        ("Quadro RTX 4000", "7.5"),
        ("NVIDIA A100-SXM4-80GB", "8.0"),
        ("A100-SXM4-40GB", "8.0"),
        ("NVIDIA A100 80GB PCIe", "8.0"),
        ("NVIDIA A10", "8.6"),
        ("NVIDIA A10G", "8.6"),
        ("NVIDIA A16", "8.6"),
        ("NVIDIA A2", "8.6"),
        ("NVIDIA A30", "8.0"),
        ("NVIDIA RTX A1000", "8.6"),
        ("NVIDIA RTX A1000 Laptop GPU", "8.6"),
        ("NVIDIA A1000", "8.6"),
        ("NVIDIA RTX A6000", "8.6"),
        ("GeForce GTX 1080 Ti", "6.1"),
        ("NVIDIA GeForce GTX 1660 Ti", "7.5"),
        ("GeForce GTX 1650 with Max-Q Design", "7.5"),
        ("NVIDIA GeForce GT 1030", "6.1"),
        ("Tesla K80", "3.7"),
        ("Tesla P100-PCIE-16GB", "6.0"),
        ("Tesla P4", "6.1"),
        ("Tesla P40", "6.1"),
        ("Tesla M10", "5.0"),
        ("Tesla M60", "5.2"),
        ("Tesla V100-SXM2-16GB", "7.0"),
        ("NVIDIA GB10", "12.1"),
        ("NVIDIA GB200", "10.0"),
        ("NVIDIA B200", "10.0"),
        ("NVIDIA B300 SXM6 AC", "10.3"),
        ("NVIDIA L4", "8.9"),
        ("NVIDIA L40S", "8.9"),
        ("NVIDIA GeForce RTX 5090", "12.0"),
        ("NVIDIA GeForce RTX 5070 Ti", "12.0"),
        ("NVIDIA GeForce RTX 3050 Ti Laptop GPU", "8.6"),
        ("NVIDIA GeForce RTX 3050 A Laptop GPU", "8.9"),
        ("NVIDIA GeForce RTX 2050", "8.6"),
        ("GeForce RTX 2070 with Max-Q Design", "7.5"),
        ("NVIDIA GeForce RTX 3080 Ti Laptop GPU", "8.6"),
        ("NVIDIA GeForce RTX 4060 Laptop GPU", "8.9"),
        ("NVIDIA GeForce MX450", "7.5"),
        ("GeForce MX150", "6.1"),
        ("NVIDIA TITAN RTX", "7.5"),
        ("TITAN V", "7.0"),
        ("NVIDIA TITAN Xp", "6.1"),
        ("TITAN X (Pascal)", "6.1"),
        ("GeForce GTX TITAN X", "5.2"),
        ("GeForce GTX TITAN Black", "3.5"),
        // A shorter pattern inside a longer product name must lose to the longer pattern.
        ("Quadro K600", "3.0"),
        ("Quadro K6000", "3.5"),
        ("GeForce GTX 960", "5.2"),
        ("GeForce GTX 960M", "5.0"),
        ("GeForce GTX 780", "3.5"),
        ("GeForce GTX 780M", "3.0"),
        ("NVIDIA T400 4GB", "7.5"),
        ("nvidia geforce rtx 4090", "8.9"),
    ];
    for (name, want) in cases {
        assert_eq!(gpus.cc_for_name(name), Some(cc(want)), "gpus.toml: {name:?}");
    }
    for unknown in ["Graphics Device", "", "   ", "AMD Radeon RX 7900 XTX", "Intel(R) UHD Graphics"] {
        assert_eq!(gpus.cc_for_name(unknown), None, "gpus.toml: {unknown:?} must not map to a capability");
    }
}

#[test]
fn truncated_table_names_map_only_when_every_completion_agrees() {
    let gpus = &kb().gpus;
    // Every pattern that could complete these names says Turing.
    assert_eq!(gpus.cc_for_name("GeForce RTX 207..."), Some(cc("7.5")));
    assert_eq!(gpus.cc_for_name("NVIDIA GeForce RTX 2080 ..."), Some(cc("7.5")));
    assert_eq!(gpus.cc_for_name("NVIDIA RTX PRO 6000 Blac..."), Some(cc("12.0")));
    // "RTX 30" could be a 3050 A Laptop (8.9) or any other 30-series card (8.6); "RTX 6000" could be
    // Ada (8.9) as well as a "RTX 6000 ..." not in the table; "NVIDIA RTX" anything.
    assert_eq!(gpus.cc_for_name("NVIDIA GeForce RTX 30..."), None);
    assert_eq!(gpus.cc_for_name("NVIDIA RTX ..."), None);
    // Every "RTX A…" pattern says 8.6, but the bare "A100" pattern (8.0) could also complete it.
    assert_eq!(gpus.cc_for_name("NVIDIA RTX A..."), None);
    assert_eq!(gpus.cc_for_name("..."), None);
}

/// A capability with a tensor rate for a type sits at or above that type's `[[tensor]]` row.
#[test]
fn tensor_rates_sit_at_or_above_their_types_first_capability() {
    let gpus = &kb().gpus;
    let mut kinds: Vec<&str> = gpus.tensor.iter().map(|t| t.precision.as_str()).collect();
    kinds.sort_unstable();
    assert_eq!(kinds, ["bf16", "fp16", "tf32"], "gpus.toml [[tensor]]");
    for r in &gpus.cc {
        let Some(o) = r.ops_per_clock_per_sm else { continue };
        for (kind, rate) in [("fp16", o.fp16_tensor), ("bf16", o.bf16_tensor), ("tf32", o.tf32_tensor)] {
            if rate.is_some() {
                assert!(gpus.tensor_min_cc(kind).is_some_and(|min| r.cc >= min), "gpus.toml: {kind} rate at {}", r.cc);
            }
        }
    }
}

// ------------------------------------------------- rows read from release metadata (issue 17)

/// Rows once taken from nightlies or trunk, now read from the release wheels' metadata: each of
/// these was wrong before 2026-11-23.
#[test]
fn release_rows_match_the_release_wheels_not_the_nightlies() {
    let kb = kb();
    let release = |v: &str| kb.pytorch.release.iter().find(|r| r.version == v).unwrap();
    let variant = |t: &str, cuda: &str| {
        let cuda: CudaVersion = cuda.parse().unwrap();
        kb.pytorch.variant.iter().find(|r| r.torch == t && r.cuda == cuda).unwrap()
    };
    // torch 2.14.0 on PyPI requires cuda-toolkit==13.0.3.
    assert_eq!(release("2.14").pypi_linux, "cu130");
    // torch 2.11.0+cu130 pins nvidia-cudnn-cu13==9.19.0.56; the cu128 wheel keeps 9.17.1.4.
    assert_eq!(variant("2.11", "13.0").cudnn.as_deref(), Some("9.19.0.56"));
    assert_eq!(variant("2.11", "12.8").cudnn.as_deref(), Some("9.17.1.4"));
    // get_arch_list() on 2.7.0+cu128 ends in compute_120.
    assert_eq!(variant("2.7", "12.8").ptx, Some("12.0".parse::<ComputeCapability>().unwrap()));
    // CuPy v14.1-14.2 list CUDA 13.2 for cupy-cuda13x.
    let cupy13 = kb.cupy.package.iter().find(|p| p.name == "cupy-cuda13x").unwrap();
    assert_eq!(cupy13.cuda_max, "13.2".parse::<CudaVersion>().unwrap());
    // The 12.x Windows floor is the driver CUDA 12.0 shipped with, the lower of NVIDIA's two figures.
    let f12 = kb.cuda.family.iter().find(|f| f.major == 12).unwrap();
    assert_eq!(f12.windows_floor, Some("527.41".parse::<DriverVersion>().unwrap()));
}

/// Rows issue 17 found missing: CUDA 13.2 Update 2, the 2.11 and 2.13 cu129 wheels, PyTorch 2.15 as
/// PyPI installs it, and where in JAX's history its two retired messages were printed.
#[test]
fn rows_missing_before_issue_17_are_there_and_drive_the_answers() {
    let kb = kb();
    let linux = gpu_doctor_model::OsFamily::Linux;
    let driver = |d: &str| d.parse::<DriverVersion>().unwrap();
    let u2 = kb.cuda.toolkit.iter().find(|t| t.version == cuda("13.2") && t.update == 2).unwrap();
    assert_eq!(u2.linux_driver, driver("595.71.05"));
    assert_eq!(kb.cuda.max_cuda_for_driver(&driver("595.71.05"), linux), Some(cuda("13.2")));

    let variant = |t: &str, c: &str| kb.pytorch.variant(t, cuda(c));
    assert!(variant("2.11", "12.9").is_some() && variant("2.13", "12.9").is_some());
    assert_eq!(kb.pytorch.release("2.15.0+cu132").unwrap().pypi_linux, "cu132");
    let v215 = variant("2.15", "13.2").unwrap();
    assert_eq!(v215.cudnn.as_deref(), Some("9.26.0.51"));
    assert_eq!(v215.arch, ["7.5", "8.0", "8.6", "9.0", "10.0", "12.0"].map(cc));
    assert_eq!(v215.ptx, None, "2.15.0+cu132's get_arch_list() has no compute_ entry");

    // The wheel recommended for an RTX 5090 (12.0) and a V100 (7.0) by the driver's CUDA level.
    let pick = |gpu: &str, max: &str| {
        let v = kb.pytorch.recommend(&[cc(gpu)], Some(cuda(max)), None).unwrap();
        (v.torch.as_str(), index_tag(v.cuda))
    };
    assert_eq!(pick("12.0", "13.0"), ("2.14", "cu130".to_owned()), "R580 cannot run 2.15's cu132");
    assert_eq!(pick("12.0", "13.2"), ("2.15", "cu132".to_owned()));
    assert_eq!(pick("12.0", "12.9"), ("2.13", "cu129".to_owned()), "R575 runs the newest cu129 wheel");
    assert_eq!(pick("7.0", "12.9"), ("2.14", "cu126".to_owned()), "no cu129 row claims sm_70");
    // 2.15.0+cu132 needs CUDA 13: an R575 driver (CUDA 12.9) does not start it.
    let r575 = driver("575.57.08");
    let level = DriverLevel { version: Some(r575), cuda: Some(cuda("12.9")), evidence: None };
    assert!(matches!(kb.cuda.judge(v215.cuda, &level, linux), RuntimeVerdict::TooOld { .. }));

    // JAX's retired messages carry the releases that print them, and their source is that code.
    let printed_by = |id: &str| {
        let m = kb.errors.message.iter().find(|m| m.id == id).unwrap();
        assert!(m.source.starts_with("https://github.com/jax-ml/jax/blob/jax-v"), "{id}: {}", m.source);
        m.printed_by.clone().unwrap_or_else(|| panic!("{id} has no printed_by"))
    };
    let fallback = printed_by("jax.no_gpu_fallback");
    assert_eq!(fallback.package, "jax");
    for (version, printed) in [("0.2.0", true), ("0.4.16", true), ("0.4.17", false), ("0.7.2", false)] {
        assert_eq!(fallback.contains(version), Some(printed), "no_gpu_fallback in jax {version}");
    }
    let cc_low = printed_by("jax.device_cc_too_low");
    for (version, printed) in
        [("0.4.25", false), ("0.4.26", true), ("0.5.3+cuda12", true), ("0.5", true), ("0.6.0", false), ("x", false)]
    {
        assert_eq!(cc_low.contains(version), (version != "x").then_some(printed), "device_cc_too_low in jax {version}");
    }
    // A last release written short covers its line.
    let line = printed_through("2.10");
    for (version, printed) in [("2.10.0", true), ("2.10.1", true), ("2.9", true), ("2.11.0", false), ("2.10", true)] {
        assert_eq!(line.contains(version), Some(printed), "last 2.10, torch {version}");
    }
}

fn printed_through(last: &str) -> crate::types::PrintedBy {
    crate::types::PrintedBy { package: "torch".to_owned(), first: None, last: Some(last.to_owned()) }
}

/// A product marked `geforce` is one whose capability has a GeForce divisor to apply, and the name
/// lookup finds the marked row for the names boards report.
#[test]
fn geforce_products_have_a_divisor_to_apply() {
    let kb = kb();
    for p in kb.gpus.product.iter().filter(|p| p.geforce) {
        let row = kb.gpus.row(p.cc).unwrap_or_else(|| panic!("gpus.toml: no cc row for {p:?}"));
        assert!(
            row.ops_per_clock_per_sm.is_some_and(|o| o.geforce_tensor_divisor.is_some()),
            "gpus.toml: {} is marked geforce but cc {} has no geforce_tensor_divisor",
            p.name,
            p.cc
        );
    }
    let geforce = |name: &str| kb.gpus.product_for_name(name).is_some_and(|p| p.geforce);
    assert!(geforce("NVIDIA GeForce RTX 4090"));
    assert!(geforce("NVIDIA GeForce RTX 3080 Ti Laptop GPU"));
    assert!(geforce("NVIDIA GeForce RTX 2080 Ti"));
    assert!(!geforce("NVIDIA RTX 6000 Ada Generation"));
    assert!(!geforce("NVIDIA RTX A6000"));
    assert!(!geforce("NVIDIA TITAN RTX"));
    assert!(!geforce("NVIDIA H100 80GB HBM3"));
    // A name cut short between products with different figures gets no row: an H100 PCIe or NVL,
    // an H20 or an H200.
    assert!(kb.gpus.product_for_name("NVIDIA H100 ...").is_none());
    assert!(kb.gpus.product_for_name("NVIDIA H20...").is_none());
    assert_eq!(kb.gpus.product_for_name("NVIDIA H20").map(|p| p.name.as_str()), Some("NVIDIA H20"));
    assert_eq!(kb.gpus.product_for_name("NVIDIA H200 NVL").map(|p| p.name.as_str()), Some("NVIDIA H200 NVL"));
}

/// What the chooser installs: each newest release belongs to its line, companions only beside one,
/// every JAX extra has its plugin, every installable TensorFlow has an arch list, every offered
/// CuPy package its Python range.
#[test]
fn the_chooser_rows_fit_their_tables() {
    let kb = kb();
    assert!(kb.pytorch.index.starts_with("https://"), "{}", kb.pytorch.index);
    for r in &kb.pytorch.release {
        match &r.latest {
            Some(l) => assert_eq!(PyVersion::new(l).line().as_deref(), Some(r.version.as_str()), "torch {l}"),
            None => assert!(r.torchvision.is_none() && r.torchaudio.is_none(), "torch {}", r.version),
        }
        for name in &r.companions_by_range {
            let recorded = match name.as_str() {
                "torchvision" => r.torchvision.is_some(),
                "torchaudio" => r.torchaudio.is_some(),
                _ => false,
            };
            assert!(recorded, "torch {}: companions_by_range names {name}, which it does not record", r.version);
        }
    }
    let versions: Vec<Vec<u32>> =
        kb.jax.release.iter().map(|r| r.version.split('.').map(|p| p.parse().unwrap()).collect()).collect();
    assert_strictly_increasing("jax.toml release", &versions);
    for r in &kb.jax.release {
        assert!(!r.extras.is_empty(), "jax {}", r.version);
        for e in &r.extras {
            assert!(kb.jax.plugin.iter().any(|p| &p.extra == e), "jax {} extra {e} has no plugin row", r.version);
        }
    }
    for r in kb.tensorflow.release.iter().filter(|r| r.latest.is_some()) {
        let latest = r.latest.as_deref().unwrap();
        assert_eq!(PyVersion::new(latest).line().as_deref(), Some(r.version.as_str()), "tensorflow {latest}");
        assert!(!r.arch.is_empty(), "tensorflow {latest} has no arch list");
    }
    for p in kb.cupy.package.iter().filter(|p| p.latest.is_some()) {
        assert!(p.python_min.is_some() && p.python_max.is_some(), "{}", p.name);
    }
}

/// Every name of every distribution family selects that family; an unknown name the catch-all row,
/// which is last and has no names.
#[test]
fn each_distro_name_selects_its_row() {
    let t = &kb().drivers;
    for d in &t.distro {
        for name in &d.names {
            assert_eq!(t.distro(&format!("{name} linux 9")).key, d.key, "{name}");
        }
        assert!(!d.source.is_empty(), "{}", d.key);
    }
    assert_eq!(t.distro.last().map(|d| d.names.is_empty()), Some(true));
    assert_eq!(t.distro("gentoo").key, "other");
    assert_eq!(t.distro("").key, "other");
    // CentOS Stream is RHEL for every command.
    assert_eq!(t.distro("centos stream 9").key, "rhel");
}

/// Module flavors by generation: Maxwell/Pascal/Volta proprietary, Turing to Hopper open, Blackwell
/// open (required), a mix of Pascal and Blackwell no single driver; a branch before R515 proprietary.
#[test]
fn the_module_flavor_follows_the_gpu_generation() {
    let (t, g) = (&kb().drivers, &kb().gpus);
    assert_eq!(t.flavor(g, &[cc("6.1")], Some(580)), Ok(ModuleFlavor::Proprietary));
    assert_eq!(t.flavor(g, &[cc("7.0")], None), Ok(ModuleFlavor::Proprietary));
    assert_eq!(t.flavor(g, &[cc("7.5"), cc("8.9")], None), Ok(ModuleFlavor::Open));
    assert_eq!(t.flavor(g, &[cc("12.0")], Some(580)), Ok(ModuleFlavor::Open));
    assert_eq!(t.flavor(g, &[cc("8.6")], Some(510)), Ok(ModuleFlavor::Proprietary));
    let mixed = t.flavor(g, &[cc("6.1"), cc("12.0")], None).unwrap_err();
    assert!(mixed.contains("Pascal") && mixed.contains("Blackwell"), "{mixed}");
    assert_eq!(DriverTable::legacy_branch(g, &[cc("6.1"), cc("3.5"), cc("8.9")]), Some(470));
    assert_eq!(DriverTable::legacy_branch(g, &[cc("8.9")]), None);
}

/// Install lines per family: a branch, its open module, the newest, a legacy branch.
#[test]
fn install_lines_per_family() {
    let t = &kb().drivers;
    let line = |os: &str, b, f, legacy| match t.distro(os).install(b, f, legacy) {
        Install::Root(l) | Install::Manual(l) => l,
    };
    assert_eq!(line("ubuntu", Some(580), ModuleFlavor::Open, false), "sudo ubuntu-drivers install nvidia:580-open");
    assert_eq!(line("ubuntu", Some(580), ModuleFlavor::Proprietary, true), "sudo ubuntu-drivers install nvidia:580");
    assert_eq!(line("ubuntu", None, ModuleFlavor::Open, false), "sudo ubuntu-drivers install");
    assert_eq!(
        line("rocky linux", Some(580), ModuleFlavor::Open, false),
        "sudo dnf module install nvidia-driver:580-open"
    );
    assert_eq!(line("fedora linux", Some(580), ModuleFlavor::Open, false), "sudo dnf install akmod-nvidia");
    assert_eq!(line("fedora linux", Some(470), ModuleFlavor::Proprietary, true), "sudo dnf install akmod-nvidia-470xx");
    assert_eq!(line("arch linux", Some(590), ModuleFlavor::Open, false), "sudo pacman -Syu nvidia-open-dkms");
    assert!(line("arch linux", Some(580), ModuleFlavor::Proprietary, true).contains("nvidia-580xx-dkms"));
    assert!(matches!(t.distro("gentoo").install(Some(580), ModuleFlavor::Open, false), Install::Manual(_)));
    // The other way to install a branch, except a legacy one the family installs with its own template.
    let mut ubuntu = t.distro("ubuntu").clone();
    let alt = ubuntu.alternative(580, ModuleFlavor::Open, false);
    assert_eq!(alt.as_deref(), Some("sudo apt install nvidia-driver-580-open"));
    assert_eq!(
        ubuntu.alternative(580, ModuleFlavor::Proprietary, true).as_deref(),
        Some("sudo apt install nvidia-driver-580")
    );
    ubuntu.install_legacy = Some("sudo apt install nvidia-driver-{branch}".into());
    assert_eq!(ubuntu.alternative(580, ModuleFlavor::Proprietary, true), None);
    assert!(ubuntu.alternative(580, ModuleFlavor::Proprietary, false).is_some());
}

#[test]
fn compute_capability_names_its_architecture_from_gpus_toml() {
    let cc = |s: &str| s.parse::<gpu_doctor_model::ComputeCapability>().unwrap();
    let kb = crate::Kb::get().unwrap();
    for row in &kb.gpus.cc {
        assert_eq!(crate::architecture(row.cc), Some(row.arch.as_str()), "gpus.toml cc {}", row.cc);
    }
    // Capabilities without a row have no name, even where a family guess would be easy.
    for unknown in ["1.3", "3.3", "8.8", "12.2", "13.0"] {
        assert!(kb.gpus.row(cc(unknown)).is_none(), "{unknown} now has a row; pick another");
        assert_eq!(crate::architecture(cc(unknown)), None, "{unknown}");
    }
    assert_eq!(cc("12.0").sm(), "sm_120");
}

// ------------------------------------------------- rows derived from release metadata (issue 28)

/// Python ranges run from low to high in every table that has them, and a row derived by
/// scripts/kb-refresh that keeps fields it did not read names where those came from.
#[test]
fn python_ranges_are_ordered_and_kept_fields_name_their_source() {
    let kb = kb();
    let mut ranges: Vec<(String, &str, &str)> = Vec::new();
    ranges.extend(
        kb.jax.release.iter().map(|r| (format!("jax {}", r.version), r.python_min.as_str(), r.python_max.as_str())),
    );
    for p in &kb.cupy.package {
        if let (Some(lo), Some(hi)) = (&p.python_min, &p.python_max) {
            ranges.push((p.name.clone(), lo.as_str(), hi.as_str()));
        }
    }
    for (row, lo, hi) in ranges {
        assert!(line(lo) <= line(hi), "{row}: Python {lo} > {hi}");
    }
    let sources = kb
        .pytorch
        .release
        .iter()
        .map(|r| r.source.as_str())
        .chain(kb.pytorch.variant.iter().map(|r| r.source.as_str()))
        .chain(kb.tensorflow.release.iter().map(|r| r.source.as_str()))
        .chain(kb.cupy.package.iter().map(|r| r.source.as_str()));
    for s in sources {
        if let Some((_, kept)) = s.split_once(" [kept: ") {
            let (_, from) = kept.split_once(" from ").unwrap_or_else(|| panic!("{s}: [kept: ...] without a source"));
            assert!(looks_like_a_source(from.trim_end_matches(']')), "{s}: kept fields' source {from:?}");
        }
    }
}

/// The rows issue 28 found wrong against the wheels' own files and PyPI's metadata, as
/// scripts/kb-refresh read them on 2026-11-28, and the releases PyPI served that day.
#[test]
fn release_rows_match_pypi_and_the_wheels_own_files() {
    let kb = kb();
    let tf = |v: &str| kb.tensorflow.release.iter().find(|r| r.version == v).unwrap();
    // build_info.py of tensorflow 2.15.1 / 2.17.1: sm_50,60,70,75+compute_80 / sm_60,70,80,89+compute_90.
    assert_eq!(tf("2.15").arch, ["5.0", "6.0", "7.0", "7.5"].map(cc));
    assert_eq!(tf("2.15").ptx, Some(cc("8.0")));
    assert_eq!(tf("2.17").arch, ["6.0", "7.0", "8.0", "8.9"].map(cc));
    assert!(!tf("2.17").arch.contains(&cc("5.0")), "no Maxwell code in the 2.17 wheel");
    assert!(kb.tensorflow.release.iter().any(|r| r.version == "2.21" && r.latest.as_deref() == Some("2.21.0")));

    let release = |v: &str| kb.pytorch.release.iter().find(|r| r.version == v).unwrap();
    for t in ["2.11", "2.12", "2.13", "2.14"] {
        let v = kb.pytorch.variant(t, cuda("13.0")).unwrap();
        assert_eq!(v.ptx, None, "torch {t} cu130 carries no PTX (pytorch/pytorch#175567)");
    }
    assert_eq!(release("2.13").python_max, "3.14", "no cp315 wheel of 2.13");
    assert_eq!(release("2.14").python_max, "3.14", "no cp315 wheel of 2.14");
    assert_eq!((release("2.15").python_min.as_str(), release("2.15").python_max.as_str()), ("3.11", "3.15"));
    assert_eq!(release("2.12").latest.as_deref(), Some("2.12.1"));
    assert_eq!(release("2.12").torchvision.as_deref(), Some("0.27.1"), "torchvision 0.27.1 pins torch==2.12.1");
    assert_eq!(release("2.14").latest.as_deref(), Some("2.14.1"));
    assert_eq!(release("2.15").pypi_linux, "cu132");

    let jax = |v: &str| kb.jax.release.iter().find(|r| r.version == v).unwrap();
    assert_eq!(jax("0.7.2").python_max, "3.14", "jaxlib 0.7.2 has cp314 wheels");
    let newest = kb.jax.release.last().unwrap();
    assert_eq!((newest.version.as_str(), newest.python_min.as_str()), ("0.12.0.1", "3.12"));
    assert_eq!(newest.extras, ["cuda12", "cuda13"]);
    let cupy13 = kb.cupy.package.iter().find(|p| p.name == "cupy-cuda13x").unwrap();
    assert_eq!(cupy13.latest.as_deref(), Some("14.2.0"));
}

/// The knowledge base is dated by its newest row: torch 2.15.0, first on PyPI on 2026-10-28, is the
/// newest release any row records (jax 0.12.0.1 came on 2026-10-21, cupy 14.2.0 on 2026-08-20).
#[test]
fn the_knowledge_base_is_dated_by_its_newest_row() {
    let kb = kb();
    let torch215 = kb.pytorch.release.iter().find(|r| r.version == "2.15").unwrap();
    assert_eq!(torch215.released.as_deref(), Some("2026-10-28"));
    assert_eq!(kb.date(), Some("2026-10-28"));
    let jax = kb.jax.release.last().unwrap();
    assert_eq!(jax.released.as_deref(), Some("2026-10-21"));
    let mut older = kb.clone();
    older.pytorch.release.retain(|r| r.version != "2.15");
    assert_eq!(older.date(), Some("2026-10-21"), "without torch 2.15 the newest row is jax 0.12.0.1");
}

/// Arch since R590 (issue 28): the repositories have the open module only, so a proprietary install
/// is never `pacman -S nvidia-dkms` (gone) nor the open package; and the remove line, run by `sh`
/// against a stand-in `pacman` that fails on an absent package as the real one does, removes what is
/// installed and succeeds when nothing is.
#[test]
fn arch_installs_the_open_module_and_removes_only_what_is_there() {
    let t = &kb().drivers;
    let arch = t.distro("arch linux");
    let line = |b, f, legacy| match arch.install(b, f, legacy) {
        Install::Root(l) | Install::Manual(l) => l,
    };
    assert_eq!(line(None, ModuleFlavor::Open, false), "sudo pacman -Syu nvidia-open-dkms");
    let proprietary = line(None, ModuleFlavor::Proprietary, false);
    assert!(!proprietary.contains("nvidia-dkms") && !proprietary.contains("nvidia-open"), "{proprietary}");
    assert!(matches!(arch.install(None, ModuleFlavor::Proprietary, false), Install::Manual(_)));

    let remove = arch.remove.clone().unwrap();
    let dir = std::env::temp_dir().join(format!("gpu-doctor-arch-remove-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pacman = r#"#!/bin/sh
echo "pacman $*" >> "$LOG"
op="$1"; shift
rc=0
for p in "$@"; do
  if grep -qx "$p" "$INSTALLED"; then [ "$op" = -Qq ] && echo "$p"; else echo "error: target not found: $p" >&2; rc=1; fi
done
exit $rc
"#;
    let sudo = "#!/bin/sh\nexec \"$@\"\n";
    for (name, body) in [("pacman", pacman), ("sudo", sudo)] {
        let path = dir.join(name);
        std::fs::write(&path, body).unwrap();
        std::process::Command::new("chmod").arg("+x").arg(&path).status().unwrap();
    }
    let run = |installed: &str| {
        let (log, list) = (dir.join("log"), dir.join("installed"));
        std::fs::write(&list, installed).unwrap();
        let _ = std::fs::remove_file(&log);
        let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default());
        let ok = std::process::Command::new("sh")
            .args(["-c", &remove])
            .env("PATH", path)
            .env("LOG", &log)
            .env("INSTALLED", &list)
            .status()
            .unwrap()
            .success();
        (ok, std::fs::read_to_string(&log).unwrap_or_default())
    };
    let (ok, log) = run("nvidia-open-dkms\nnvidia-utils\n");
    assert!(ok && log.contains("pacman -Rns nvidia-open-dkms nvidia-utils\n"), "{log}");
    let (ok, log) = run("");
    assert!(ok && !log.contains("-Rns"), "nothing installed: nothing removed, no failure: {log}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The `[[archive]]` rows: each names a family of the table, a read day, and packages that install a
/// branch at least their own; a release is found by its code name or version in an OS name.
#[test]
fn archive_rows_name_their_family_and_are_found_by_release() {
    let d = &kb().drivers;
    assert!(!d.archive.is_empty());
    for a in &d.archive {
        assert!(d.distro.iter().any(|r| r.key == a.distro), "{}", a.distro);
        assert_eq!(a.read.len(), 10, "{}", a.read);
        assert!(a.tag == Tag::M && a.source.starts_with("http"), "{}", a.source);
        for (package, installs) in a.proprietary.iter().chain(&a.open) {
            assert!(installs >= package, "{} {}: {package} installs {installs}", a.distro, a.release);
        }
    }
    let release = |distro: &str, os: &str| d.archive(distro, os).map(|a| a.release.as_str());
    assert_eq!(release("ubuntu", "ubuntu 24.04.1 lts"), Some("24.04"));
    assert_eq!(release("ubuntu", "ubuntu 22.04 lts (jammy jellyfish)"), Some("22.04"));
    assert_eq!(release("ubuntu", "ubuntu 24.10"), None);
    assert_eq!(release("debian", "debian gnu/linux 13 (trixie)"), Some("13"));
    assert_eq!(release("debian", "debian gnu/linux 12 (bookworm)"), Some("12"));
    assert_eq!(release("debian", "debian gnu/linux trixie/sid"), Some("13"));
    assert_eq!(release("ubuntu", "debian gnu/linux 13 (trixie)"), None);
}
