//! Queries on the GPU table: a capability's row, and the capability a product name stands for.

use super::{CcRow, GpuTable, ProductRow};
use gpu_doctor_model::ComputeCapability;

impl GpuTable {
    /// The row of exactly this capability.
    pub fn row(&self, cc: ComputeCapability) -> Option<&CcRow> {
        self.cc.iter().find(|r| r.cc == cc)
    }

    /// The architecture name of exactly this capability, e.g. `Ada Lovelace` for 8.9; `None`
    /// without a row. [`ComputeCapability::architecture`] asks this of the embedded table.
    pub fn architecture(&self, cc: ComputeCapability) -> Option<&str> {
        self.row(cc).map(|r| r.arch.as_str())
    }

    /// The lowest capability whose tensor cores take `precision` (`fp16`, `bf16`, `tf32`); `None`
    /// when the table has no row for it.
    pub fn tensor_min_cc(&self, precision: &str) -> Option<ComputeCapability> {
        self.tensor.iter().find(|t| t.precision == precision).map(|t| t.min_cc)
    }

    /// The capability of a GPU named `name` (as `nvidia-smi` or a framework prints it), by the rule
    /// documented on [`super::ProductRow`]: patterns are matched case-insensitively as substrings and
    /// the longest match wins. `None` when nothing matches, or when the longest matches disagree.
    ///
    /// A name cut short by nvidia-smi's default table (ending in `...`) only says how the real name
    /// starts: patterns that run past the cut may match it too. The answer is given only when every
    /// pattern that could win (the longest one inside the visible text, and any longer one that
    /// continues past the cut) names the same capability.
    pub fn cc_for_name(&self, name: &str) -> Option<ComputeCapability> {
        let candidates = self.candidates(name);
        let first = candidates.first()?.cc;
        candidates.iter().all(|p| p.cc == first).then_some(first)
    }

    /// The product row a GPU named `name` matches, by the same rule as `cc_for_name`; `None` when
    /// nothing matches or the rows that could win do not all say the same: the product line
    /// (`geforce`), the product's own figures (`dense_tflops`, `sm_count`) and host link, so that a
    /// name cut short (`NVIDIA H20...`, an H20 or an H200) gets neither's figures.
    pub fn product_for_name(&self, name: &str) -> Option<&ProductRow> {
        let candidates = self.candidates(name);
        let first = *candidates.first()?;
        let same = |p: &ProductRow| {
            p.cc == first.cc
                && p.geforce == first.geforce
                && p.dense_tflops == first.dense_tflops
                && p.sm_count == first.sm_count
                && p.host_link == first.host_link
        };
        candidates.iter().all(|p| same(p)).then_some(first)
    }

    /// Every product row that could be the longest match for `name` (see `cc_for_name`).
    fn candidates(&self, name: &str) -> Vec<&ProductRow> {
        let lower = name.trim().to_lowercase();
        let (text, cut) = match lower.strip_suffix("...") {
            Some(t) => (t, true),
            None => (lower.as_str(), false),
        };
        if text.trim().is_empty() {
            return Vec::new();
        }
        let patterns: Vec<(String, &ProductRow)> = self.product.iter().map(|p| (p.name.to_lowercase(), p)).collect();

        // The longest patterns inside the visible text.
        let inside_len = patterns.iter().filter(|(p, _)| text.contains(p.as_str())).map(|(p, _)| p.len()).max();
        let mut candidates: Vec<&ProductRow> = patterns
            .iter()
            .filter(|(p, _)| Some(p.len()) == inside_len && text.contains(p.as_str()))
            .map(|(_, row)| *row)
            .collect();

        // Longer patterns that start inside the visible text and continue past the cut.
        if cut {
            candidates.extend(
                patterns
                    .iter()
                    .filter(|(p, _)| inside_len.is_none_or(|l| p.len() >= l) && !text.contains(p.as_str()))
                    .filter(|(p, _)| (1..p.len()).any(|k| p.is_char_boundary(k) && text.ends_with(&p[..k])))
                    .map(|(_, row)| *row),
            );
        }
        candidates
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::GpuTable;
    use gpu_doctor_model::ComputeCapability;

    const GPUS: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/compat/gpus.toml"));

    #[test]
    fn architecture_names_come_from_the_rows() {
        let cc = |s: &str| s.parse::<ComputeCapability>().unwrap();
        let table: GpuTable = toml::from_str(GPUS).unwrap();
        assert_eq!(table.architecture(cc("8.9")), Some("Ada Lovelace"));
        let from = "cc = \"8.9\"\narch = \"Ada Lovelace\"";
        assert!(GPUS.contains(from), "gpus.toml's 8.9 row moved");
        let edited: GpuTable = toml::from_str(&GPUS.replacen(from, "cc = \"8.9\"\narch = \"Lovelace\"", 1)).unwrap();
        assert_eq!(edited.architecture(cc("8.9")), Some("Lovelace"));
        assert_eq!(edited.architecture(cc("8.8")), None);
    }
}
