//! `ptxas --version`: `ptxas: NVIDIA (R) Ptx optimizing assembler` then the release line it shares
//! with nvcc (`Cuda compilation tools, release 12.3, V12.3.107`), which `smi.rs` reads as the
//! toolkit's version; here the format is recorded, so the summary says a ptxas was pasted.

use super::facts::Facts;

const FORMAT: &str = "ptxas --version";

/// Records the format when ptxas's banner is followed by its release line.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    for (i, line) in lines.iter().enumerate() {
        if line.trim().starts_with("ptxas: NVIDIA (R) Ptx optimizing assembler")
            && lines.iter().skip(i + 1).take(4).any(|l| l.contains("Cuda compilation tools, release"))
        {
            facts.saw(i, FORMAT);
            return;
        }
    }
}
