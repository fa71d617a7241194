//! Queries on the PyTorch table and on compiled architecture lists.

use super::{PyVersion, PytorchTable, TorchRelease, TorchVariant};
use gpu_doctor_model::{ComputeCapability, CudaVersion};

/// How a build's compiled architectures cover one GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coverage {
    /// Machine code (SASS) for the GPU's major and a minor at or below its own.
    Sass(ComputeCapability),
    /// Only PTX at or below the GPU's capability, which the driver compiles at first use.
    Ptx(ComputeCapability),
    /// Neither: kernels fail with "no kernel image is available".
    None,
}

/// Whether SASS for `sass` and PTX for `ptx` can run on a GPU of capability `gpu` (cubins run on the same
/// major with an equal or higher minor; PTX on any equal or higher capability).
pub fn coverage(sass: &[ComputeCapability], ptx: &[ComputeCapability], gpu: ComputeCapability) -> Coverage {
    if let Some(c) = sass.iter().filter(|c| c.major == gpu.major && c.minor <= gpu.minor).max() {
        return Coverage::Sass(*c);
    }
    match ptx.iter().filter(|c| **c <= gpu).max() {
        Some(c) => Coverage::Ptx(*c),
        None => Coverage::None,
    }
}

/// Splits `torch.cuda.get_arch_list()` (`sm_86`, `sm_90a`, `compute_90`) into SASS and PTX capabilities;
/// entries that do not parse are skipped.
pub fn split_arch_list(list: &[String]) -> (Vec<ComputeCapability>, Vec<ComputeCapability>) {
    let mut sass = Vec::new();
    let mut ptx = Vec::new();
    for item in list {
        let (target, digits) = if let Some(d) = item.strip_prefix("sm_") {
            (&mut sass, d)
        } else if let Some(d) = item.strip_prefix("compute_") {
            (&mut ptx, d)
        } else {
            continue;
        };
        let digits = digits.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        if digits.len() >= 2
            && let (Ok(major), Ok(minor)) = (digits[..digits.len() - 1].parse(), digits[digits.len() - 1..].parse())
        {
            target.push(ComputeCapability { major, minor });
        }
    }
    (sass, ptx)
}

/// The wheel index tag of a CUDA version: 12.4 → `cu124`.
pub fn index_tag(cuda: CudaVersion) -> String {
    format!("cu{}{}", cuda.major, cuda.minor)
}

fn line_key(line: &str) -> (u32, u32) {
    let mut p = line.split('.').map(|x| x.parse::<u32>().unwrap_or(0));
    (p.next().unwrap_or(0), p.next().unwrap_or(0))
}

impl TorchVariant {
    /// Its release line as numbers, for ordering (`2.10` after `2.9`).
    pub fn line_key(&self) -> (u32, u32) {
        line_key(&self.torch)
    }

    /// The PTX capabilities it ships (zero or one).
    pub fn ptx_list(&self) -> Vec<ComputeCapability> {
        self.ptx.into_iter().collect()
    }

    /// How it covers a GPU.
    pub fn coverage(&self, gpu: ComputeCapability) -> Coverage {
        coverage(&self.arch, &self.ptx_list(), gpu)
    }
}

impl PytorchTable {
    /// The wheel index of the builds for `cuda`: `https://download.pytorch.org/whl/cu124`.
    pub fn index_url(&self, cuda: CudaVersion) -> String {
        format!("{}/{}", self.index.trim_end_matches('/'), super::index_tag(cuda))
    }

    /// The release row of a line (`2.5`) or version (`2.5.1+cu124`).
    pub fn release(&self, version: &str) -> Option<&TorchRelease> {
        let line = PyVersion::new(version).line()?;
        self.release.iter().find(|r| r.version == line)
    }

    /// Whether the line of `version` is kept only for the environments already on it (1.7 to 1.11): no new
    /// environment is offered it, and no recommendation names it.
    pub fn kept_only(&self, version: &str) -> bool {
        self.release(version).is_some_and(|r| r.kept_only)
    }

    /// The variant of a release line built with `cuda` (compared by major.minor).
    pub fn variant(&self, version: &str, cuda: CudaVersion) -> Option<&TorchVariant> {
        let line = PyVersion::new(version).line()?;
        self.variant.iter().find(|v| v.torch == line && v.cuda.major_minor() == cuda.major_minor())
    }

    /// The best wheel for GPUs of capabilities `gpus` on a driver supporting CUDA up to `max_cuda`: SASS for
    /// every GPU and a CUDA the driver supports in full; among those, the driver's own CUDA major first (an
    /// older major's wheels are older releases' leftovers), then the newest release, then the newest CUDA.
    /// A variant of `prefer_line` wins when one fits.
    pub fn recommend(
        &self,
        gpus: &[ComputeCapability],
        max_cuda: Option<CudaVersion>,
        prefer_line: Option<&str>,
    ) -> Option<&TorchVariant> {
        let fits = |v: &&TorchVariant| {
            gpus.iter().all(|g| matches!(v.coverage(*g), Coverage::Sass(_)))
                && max_cuda.is_none_or(|m| v.cuda.major_minor() <= m.major_minor())
        };
        let best = |line: Option<&str>| {
            self.variant
                .iter()
                .filter(|v| match line {
                    Some(l) => v.torch == l,
                    // A line kept only for the environments that have it is no one's recommendation.
                    None => !self.kept_only(&v.torch),
                })
                .filter(fits)
                .max_by_key(|v| (max_cuda.is_some_and(|m| m.major == v.cuda.major), line_key(&v.torch), v.cuda))
        };
        prefer_line.and_then(|l| best(Some(l))).or_else(|| best(None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cc(major: u32, minor: u32) -> ComputeCapability {
        ComputeCapability { major, minor }
    }

    #[test]
    fn cubins_run_on_the_same_major_with_an_equal_or_higher_minor() {
        let sass = [cc(8, 0), cc(8, 6), cc(9, 0)];
        assert_eq!(coverage(&sass, &[], cc(8, 9)), Coverage::Sass(cc(8, 6)));
        assert_eq!(coverage(&sass, &[], cc(8, 0)), Coverage::Sass(cc(8, 0)));
        assert_eq!(coverage(&[cc(8, 6)], &[], cc(8, 0)), Coverage::None);
        assert_eq!(coverage(&sass, &[], cc(12, 0)), Coverage::None);
        assert_eq!(coverage(&sass, &[cc(9, 0)], cc(12, 0)), Coverage::Ptx(cc(9, 0)));
        assert_eq!(coverage(&sass, &[cc(12, 0)], cc(10, 0)), Coverage::None);
    }

    #[test]
    fn arch_lists_split_into_sass_and_ptx() {
        let list: Vec<String> =
            ["sm_50", "sm_90a", "sm_120", "compute_120", "gfx90a", "sm_x"].iter().map(|s| s.to_string()).collect();
        let (sass, ptx) = split_arch_list(&list);
        assert_eq!(sass, vec![cc(5, 0), cc(9, 0), cc(12, 0)]);
        assert_eq!(ptx, vec![cc(12, 0)]);
    }

    #[test]
    fn index_tags() {
        assert_eq!(index_tag(CudaVersion::new(12, 8)), "cu128");
    }
}
