//! The compatibility knowledge base: data in `assets/compat/*.toml`, embedded in the binary.
//!
//! Every row names its `source` (a URL or a file in a public repository) and a confidence `tag`:
//! `P` primary source, `M` verbatim mirror of one, `S` secondary, `U` unverified. The tables are
//! plain data; the queries rules need live next to them, in this module's files.

mod cuda;
mod drivers;
pub mod families;
mod gpus;
mod jax;
mod links;
mod pyversion;
mod torch;
mod types;
mod xid;

use std::sync::OnceLock;

use gpu_doctor_model::{ComputeCapability, DriverFacts, OsFamily, Probed, Snapshot};

pub use cuda::{DriverLevel, RuntimeVerdict};
pub use drivers::{
    ArchiveRow, DistroRow, DriverTable, Install, ModuleFlavor, ModuleRules, NouveauRow, SecureBootRow, ThunderboltRow,
    WindowsRow, WslRow,
};
pub use links::{gpu_nvlink_generation, nvlink_generation};
pub use pyversion::PyVersion;
pub use torch::{Coverage, coverage, index_tag, split_arch_list};
pub use types::*;
pub use xid::{XidRow, XidSeverity, XidTable};

/// One embedded table file.
struct Embedded {
    name: &'static str,
    text: &'static str,
}

macro_rules! embed {
    ($name:literal) => {
        Embedded {
            name: $name,
            text: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/compat/", $name)),
        }
    };
}

const CUDA: Embedded = embed!("cuda.toml");
const GPUS: Embedded = embed!("gpus.toml");
const PYTORCH: Embedded = embed!("pytorch.toml");
const TENSORFLOW: Embedded = embed!("tensorflow.toml");
const JAX: Embedded = embed!("jax.toml");
const CUPY: Embedded = embed!("cupy.toml");
const CUDNN: Embedded = embed!("cudnn.toml");
const LINKS: Embedded = embed!("links.toml");
const ERRORS: Embedded = embed!("errors.toml");
const DRIVERS: Embedded = embed!("drivers.toml");
const XID: Embedded = embed!("xid.toml");

/// Every embedded table as (file name, text), in a fixed order: what a certificate's knowledge-base
/// version is hashed from.
pub fn embedded_tables() -> impl Iterator<Item = (&'static str, &'static str)> {
    [CUDA, GPUS, PYTORCH, TENSORFLOW, JAX, CUPY, CUDNN, LINKS, ERRORS, DRIVERS, XID]
        .into_iter()
        .map(|e| (e.name, e.text))
}

/// An embedded table did not parse: a bug in the shipped data, caught by the table tests.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("knowledge base file {file} is invalid: {message}")]
pub struct KbError {
    /// The file, e.g. `cuda.toml`.
    pub file: &'static str,
    /// What was wrong.
    pub message: String,
}

fn parse<T: serde::de::DeserializeOwned>(e: &Embedded) -> Result<T, KbError> {
    toml::from_str(e.text).map_err(|err| KbError { file: e.name, message: err.to_string() })
}

/// The whole knowledge base.
#[derive(Debug, Clone)]
pub struct Kb {
    /// CUDA toolkit releases, the driver each needs, and the per-major compatibility floors.
    pub cuda: CudaTable,
    /// Compute capabilities: architecture, products, toolkit and driver support, throughput per SM.
    pub gpus: GpuTable,
    /// PyTorch releases and their wheel variants.
    pub pytorch: PytorchTable,
    /// TensorFlow releases and what they were tested with.
    pub tensorflow: TensorflowTable,
    /// JAX CUDA plugins.
    pub jax: JaxTable,
    /// CuPy packages.
    pub cupy: CupyTable,
    /// cuDNN releases.
    pub cudnn: CudnnTable,
    /// Host links: PCIe generations, Thunderbolt, USB4, OCuLink.
    pub links: LinkTable,
    /// Well-known error and warning messages of the frameworks and the CUDA runtime.
    pub errors: ErrorTable,
    /// Installing, loading and signing the driver per distribution; module flavors by GPU generation.
    pub drivers: DriverTable,
    /// Xid numbers of the NVIDIA driver: meaning, cause, what to do.
    pub xid: XidTable,
}

/// The architecture name of a compute capability: its row in `gpus.toml`, or `None` when the table
/// has no row for it (or did not load).
pub fn architecture(cc: ComputeCapability) -> Option<&'static str> {
    Kb::get().ok()?.gpus.architecture(cc)
}

/// Theoretical payload bandwidth of a PCIe link in GB/s per direction:
/// rate (GT/s) × lanes × payload share of the line code ÷ 8. `None` for an unknown generation or 0
/// or more than 32 lanes.
pub fn pcie_gbytes_per_s(generation: u32, lanes: u32) -> Option<f64> {
    Kb::get().ok()?.links.pcie_gbytes_per_s(generation, lanes)
}

/// How `pcie_gbytes_per_s` got its number, for people: `16 GT/s × 16 lanes × 128/130 ÷ 8`.
pub fn pcie_formula(generation: u32, lanes: u32) -> Option<String> {
    Kb::get().ok()?.links.pcie_formula(generation, lanes)
}

impl Kb {
    /// Parses every embedded table.
    pub fn load() -> Result<Self, KbError> {
        Ok(Self {
            cuda: parse(&CUDA)?,
            gpus: parse(&GPUS)?,
            pytorch: parse(&PYTORCH)?,
            tensorflow: parse(&TENSORFLOW)?,
            jax: parse(&JAX)?,
            cupy: parse(&CUPY)?,
            cudnn: parse(&CUDNN)?,
            links: parse(&LINKS)?,
            errors: parse(&ERRORS)?,
            drivers: parse(&DRIVERS)?,
            xid: parse(&XID)?,
        })
    }

    /// Fills a driver's `cuda_version` from the CUDA table when its source did not report it: the
    /// newest CUDA release whose driver (for `os`) is at or below this one.
    pub fn derive_cuda_version(&self, d: &mut DriverFacts, os: OsFamily) {
        if d.cuda_version.is_none()
            && let Some(cuda) = self.cuda.max_cuda_for_driver(&d.version, os)
        {
            d.cuda_version = Some(cuda);
            d.cuda_version_derived = true;
        }
    }

    /// Fills what a snapshot's source did not report and the knowledge base knows: the driver's CUDA
    /// level by its version (`derive_cuda_version`, for the snapshot's OS). The paste reader calls
    /// it, also for a saved report read back (reports written before the probes stored the level
    /// lack it); the live probe's driver step calls `derive_cuda_version` itself, so that the level
    /// is in the driver part streamed to the window and in its trace. The rules and planners only read.
    pub fn complete_snapshot(&self, snap: &mut Snapshot) {
        let os = snap.platform.platform.os;
        if let Probed::Found { value, .. } = &mut snap.driver {
            self.derive_cuda_version(value, os);
        }
    }

    /// The date of the knowledge base: the newest `released` day of its rows (the day PyPI first
    /// served the newest release it records, as scripts/kb-refresh read it), `YYYY-MM-DD`. Derived
    /// from the rows, never typed by hand; `None` when no row carries a day.
    pub fn date(&self) -> Option<&str> {
        let torch = self.pytorch.release.iter().map(|r| &r.released);
        let tf = self.tensorflow.release.iter().map(|r| &r.released);
        let jax = self.jax.release.iter().map(|r| &r.released);
        let cupy = self.cupy.package.iter().map(|r| &r.released);
        torch.chain(tf).chain(jax).chain(cupy).filter_map(|d| d.as_deref()).max()
    }

    /// The embedded knowledge base, parsed once.
    pub fn get() -> Result<&'static Self, &'static KbError> {
        static KB: OnceLock<Result<Kb, KbError>> = OnceLock::new();
        KB.get_or_init(Self::load).as_ref()
    }
}

#[cfg(test)]
mod tests;
