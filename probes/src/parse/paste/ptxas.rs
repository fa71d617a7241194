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

#[cfg(test)]
mod tests {
    use super::*;

    /// `which ptxas` and `ptxas --version` as a public write-up about a GB10 container pasted them.
    const SAMPLE: &str = "/usr/local/cuda/bin/ptxas\n\nptxas: NVIDIA (R) Ptx optimizing assembler\n\
                          Cuda compilation tools, release 12.9, V12.9.86\n";

    #[test]
    fn ptxas_banner_with_its_release_line() {
        let kb = gpu_doctor_kb::Kb::get().expect("kb");
        let s = super::super::read_pasted(SAMPLE, kb).expect("read");
        let gpu_doctor_model::Origin::Pasted { formats } = &s.origin else { panic!("not pasted") };
        assert!(formats.iter().any(|f| f == FORMAT), "{formats:?}");
        let t = s.toolkits.value().expect("toolkit");
        assert_eq!(
            t.installs[0].version.map(gpu_doctor_model::CudaVersion::major_minor),
            Some(gpu_doctor_model::CudaVersion::new(12, 9))
        );
        let facts = Facts::read_by(read, "ptxas: NVIDIA (R) Ptx optimizing assembler\n");
        assert!(facts.is_empty(), "a banner without its release line is not read");
    }
}
