//! The rows of each table, as the TOML files spell them.

use serde::Deserialize;

use gpu_doctor_model::{Category, ComputeCapability, CudaVersion, CudnnVersion, DriverVersion};

/// How sure a row is: `P` read in a primary source, `M` in a verbatim mirror of one, `S` secondary,
/// `U` not verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Tag {
    P,
    M,
    S,
    U,
}

// ---------------------------------------------------------------- cuda.toml

/// `cuda.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudaTable {
    /// Toolkit releases, oldest first.
    pub toolkit: Vec<ToolkitRelease>,
    /// Per CUDA major: the minor-version-compatibility floor.
    pub family: Vec<CudaFamily>,
}

/// One toolkit release and the driver packaged with it (full feature set).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolkitRelease {
    /// Major.minor, e.g. `12.8`.
    pub version: CudaVersion,
    /// 0 for GA, n for Update n.
    pub update: u32,
    /// Minimum Linux x86_64 driver.
    pub linux_driver: DriverVersion,
    /// Minimum Windows driver; `None` where NVIDIA's table says N/A.
    pub windows_driver: Option<DriverVersion>,
    /// URL or `owner/repo:path` the row was read in.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
}

/// One CUDA major's minor-version-compatibility rules.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudaFamily {
    /// The major, e.g. 12.
    pub major: u32,
    /// Whether binaries of any minor of this major run on the family floor (CUDA ≥ 11).
    pub minor_version_compatibility: bool,
    /// The lowest Linux driver that runs any minor of this major; `None` without MVC.
    pub linux_floor: Option<DriverVersion>,
    /// The lowest Windows driver, likewise.
    pub windows_floor: Option<DriverVersion>,
    /// The first minor whose binaries need the floors above; binaries of older minors run on
    /// their own toolkit's driver even when it is below the floor. CUDA 11: `1`, because 11.0
    /// shipped with R450 drivers older than the 11.x floor (450.80.02) and NVIDIA lists 11.0 apart.
    /// `None`: every minor of the major needs the floor.
    pub floor_from_minor: Option<u32>,
    /// URL or `owner/repo:path` the row was read in.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
}

// ---------------------------------------------------------------- gpus.toml

/// `gpus.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuTable {
    /// One row per compute capability, ascending.
    pub cc: Vec<CcRow>,
    /// Product names → compute capability, for text that names the GPU but not its capability.
    pub product: Vec<ProductRow>,
    /// Tensor-core element types and the first capability that has them.
    pub tensor: Vec<TensorRow>,
}

/// A tensor-core element type and the lowest capability whose tensor cores take it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorRow {
    /// `fp16`, `bf16`, `tf32`.
    pub precision: String,
    /// The lowest capability.
    pub min_cc: ComputeCapability,
    /// URL or `owner/repo:path` the row was read in.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
}

/// What one compute capability is and what supports it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CcRow {
    /// The capability, e.g. `8.9`.
    pub cc: ComputeCapability,
    /// Architecture name, e.g. `Ada Lovelace`.
    pub arch: String,
    /// First toolkit whose `nvcc` can build `sm_XY` for it.
    pub first_toolkit: CudaVersion,
    /// Last toolkit that can; `None` while current.
    pub last_toolkit: Option<CudaVersion>,
    /// Last driver branch that supports it (e.g. 580); `None` while current.
    pub last_driver_branch: Option<u32>,
    /// Whether NVIDIA's open kernel modules support it (Turing and newer).
    pub open_kernel_module: bool,
    /// Operations per clock per SM, by precision, for theoretical peaks (an FMA counts as two).
    pub ops_per_clock_per_sm: Option<OpsPerClock>,
    /// URL or `owner/repo:path` the row was read in.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
}

/// Dense operations per clock per SM. `None` where the architecture lacks the unit or no source said.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpsPerClock {
    /// FP64 (CUDA cores).
    pub fp64: Option<u32>,
    /// FP32 (CUDA cores).
    pub fp32: Option<u32>,
    /// TF32 on tensor cores.
    pub tf32_tensor: Option<u32>,
    /// FP16 on tensor cores with FP32 accumulation.
    pub fp16_tensor: Option<u32>,
    /// BF16 on tensor cores with FP32 accumulation.
    pub bf16_tensor: Option<u32>,
    /// INT8 on tensor cores.
    pub int8_tensor: Option<u32>,
    /// GeForce boards of this capability run the TF32, FP16 and BF16 tensor rates above (FP32
    /// accumulation) divided by this: NVIDIA halves them on GeForce, so `2` there. `None` where no
    /// GeForce board differs from the rates above. INT8 is not affected.
    pub geforce_tensor_divisor: Option<u32>,
}

/// A product name pattern and its capability.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProductRow {
    /// Matched case-insensitively as a substring of the reported name; the longest match wins
    /// (`RTX 6000 Ada` beats `RTX 6000`).
    pub name: String,
    /// Its capability.
    pub cc: ComputeCapability,
    /// A GeForce board: its tensor cores run TF32, FP16 and BF16 with FP32 accumulation at the
    /// capability's rate divided by `geforce_tensor_divisor`. False (the default) for datacenter,
    /// workstation and TITAN boards, which run the full rate.
    #[serde(default)]
    pub geforce: bool,
    /// NVIDIA's dense figures for this product, which its compute peaks use in place of the
    /// capability's rates × SMs × the rated boost clock: Hopper boards' tensor figures assume a
    /// lower clock than the boost clock FP32 runs at, and the H20's tensor cores are cut down.
    /// `None` where the capability's rates give the product's figures.
    #[serde(default)]
    pub dense_tflops: Option<DenseTflops>,
    /// The SMs `dense_tflops` is for; a GPU reporting another count (a MIG instance) gets the
    /// figures scaled by its share. `None` where no source gives the product's SM count.
    #[serde(default)]
    pub sm_count: Option<u32>,
    /// URL or `owner/repo:path` `dense_tflops` and `sm_count` were read in; set with them.
    #[serde(default)]
    pub dense_source: Option<String>,
    /// The `links.toml` `[[link]]` key of the link over which the product's GPU reaches host
    /// memory where that is not its PCIe link (GH200: NVLink-C2C to the Grace CPU); `None` for a
    /// PCIe board.
    #[serde(default)]
    pub host_link: Option<String>,
    /// URL or `owner/repo:path` the row was read in.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
}

/// A product's dense peaks, TFLOP/s (an FMA counts as two; datasheets that print figures with
/// sparsity are halved). `None` where the capability's rate gives the product's figure.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DenseTflops {
    /// FP32 on CUDA cores.
    pub fp32: Option<f64>,
    /// TF32 on tensor cores.
    pub tf32: Option<f64>,
    /// FP16 on tensor cores with FP32 accumulation.
    pub fp16: Option<f64>,
    /// BF16 on tensor cores with FP32 accumulation.
    pub bf16: Option<f64>,
}

// ---------------------------------------------------------------- pytorch.toml

/// `pytorch.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PytorchTable {
    /// The base of PyTorch's wheel indexes; a variant's index is this plus `/cu124`.
    pub index: String,
    /// Releases by major.minor, oldest first.
    pub release: Vec<TorchRelease>,
    /// Wheel variants, sorted by release then CUDA version.
    pub variant: Vec<TorchVariant>,
}

/// One PyTorch release line (`2.5` covers 2.5.x).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TorchRelease {
    /// e.g. `2.5`.
    pub version: String,
    /// Lowest supported Python, e.g. `3.9`.
    pub python_min: String,
    /// Highest supported Python.
    pub python_max: String,
    /// The variant plain `pip install torch` gives on Linux x86_64, e.g. `cu124`.
    pub pypi_linux: String,
    /// The same on Windows (`cpu`: CUDA needs the download.pytorch.org index).
    pub pypi_windows: String,
    /// The newest release of the line the chooser installs (`2.5.1`); `None`: not recorded.
    #[serde(default)]
    pub latest: Option<String>,
    /// The torchvision release built against `latest` (`0.20.1`).
    #[serde(default)]
    pub torchvision: Option<String>,
    /// The torchaudio release built against `latest` (`2.5.1`); `None` where none was found.
    #[serde(default)]
    pub torchaudio: Option<String>,
    /// The companions (`torchaudio`, `torchvision`) that were built for no one torch release but
    /// require a range that admits `latest` (torchaudio 2.11.1: `torch>=2.11`), as pip resolves them
    /// beside it: pinned without a `+cuXYZ` label, so that whichever build of that version an index
    /// has is taken.
    #[serde(default)]
    pub companions_by_range: Vec<String>,
    /// The companions PyTorch's own install commands pin without a `+cuXYZ` label beside a labelled
    /// torch (`torch==1.7.1+cu110 torchvision==0.8.2+cu110 torchaudio==0.7.2`, the previous-versions
    /// page): pinned so, which PEP 440 lets match whichever build of that version the index has.
    #[serde(default)]
    pub companions_unlabelled: Vec<String>,
    /// Offered only as the smallest change to an environment that has this line (1.7 to 1.11),
    /// never to a new environment, which gets a release still built for today's drivers and Pythons.
    #[serde(default)]
    pub kept_only: bool,
    /// The day the newest release of the row was first uploaded to PyPI (`2026-10-28`), as
    /// scripts/kb-refresh read it; `None` for rows it does not derive.
    #[serde(default)]
    pub released: Option<String>,
    /// URL or `owner/repo:path` the row was read in.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
}

/// One CUDA wheel variant of a release (Linux x86_64).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TorchVariant {
    /// Release line, e.g. `2.5`.
    pub torch: String,
    /// CUDA runtime it ships, e.g. `12.4` (index tag `cu124`).
    pub cuda: CudaVersion,
    /// cuDNN it pins, e.g. `9.1.0.70`; `None` where no source said.
    pub cudnn: Option<String>,
    /// Compute capabilities with SASS in the wheel.
    pub arch: Vec<ComputeCapability>,
    /// The capability whose PTX is also shipped (`+PTX`), if any.
    pub ptx: Option<ComputeCapability>,
    /// URL or `owner/repo:path` the row was read in.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
}

// ---------------------------------------------------------------- tensorflow.toml

/// `tensorflow.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorflowTable {
    /// Releases, oldest first.
    pub release: Vec<TfRelease>,
}

/// A tested TensorFlow GPU build configuration.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TfRelease {
    /// e.g. `2.17`.
    pub version: String,
    /// Lowest supported Python.
    pub python_min: String,
    /// Highest supported Python.
    pub python_max: String,
    /// CUDA it was built and tested with (Linux).
    pub cuda: CudaVersion,
    /// cuDNN it was built with, major.minor.
    pub cudnn: CudnnVersion,
    /// Whether native Windows has a GPU build of this release (≤ 2.10).
    pub windows_native_gpu: bool,
    /// The newest release of the line the chooser installs (`2.20.0`); `None`: not installable
    /// with its CUDA libraries from PyPI (before the `and-cuda` extra).
    #[serde(default)]
    pub latest: Option<String>,
    /// Compute capabilities with SASS in the Linux wheel (`TF_CUDA_COMPUTE_CAPABILITIES`).
    #[serde(default)]
    pub arch: Vec<ComputeCapability>,
    /// The capability whose PTX is also shipped.
    #[serde(default)]
    pub ptx: Option<ComputeCapability>,
    /// The CUDA of the runtime wheel `tensorflow[and-cuda]==latest` installs from PyPI as of the
    /// knowledge base's date (newer than `cuda` where the extra's pins are lower bounds); `None`:
    /// not read.
    #[serde(default)]
    pub pypi_cuda: Option<CudaVersion>,
    /// Where `pypi_cuda` was read.
    #[serde(default)]
    pub pypi_cuda_source: Option<String>,
    /// The day the newest release of the row was first uploaded to PyPI (`2026-10-28`), as
    /// scripts/kb-refresh read it; `None` for rows it does not derive.
    #[serde(default)]
    pub released: Option<String>,
    /// URL or `owner/repo:path` the row was read in.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
}

// ---------------------------------------------------------------- jax.toml, cupy.toml

/// `jax.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JaxTable {
    /// CUDA plugin packages.
    pub plugin: Vec<JaxPlugin>,
    /// JAX releases the chooser installs, oldest first.
    pub release: Vec<JaxRelease>,
}

/// A JAX release: `jax[cudaNN]==version` pins `jaxlib` and `jax-cudaNN-plugin` to the same release.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JaxRelease {
    /// e.g. `0.7.2`.
    pub version: String,
    /// Lowest supported Python.
    pub python_min: String,
    /// Highest supported Python.
    pub python_max: String,
    /// The CUDA extras it has plugins for (`cuda12`, `cuda13`: `extra` in the plugin rows).
    pub extras: Vec<String>,
    /// The lowest cuDNN each extra's plugin of this release accepts (`cuda12` → `9.10.2.21`), from
    /// the plugin's `with-cuda` Requires-Dist; empty for rows scripts/kb-refresh does not derive.
    #[serde(default)]
    pub plugin_cudnn_min: std::collections::BTreeMap<String, CudnnVersion>,
    /// The day the newest release of the row was first uploaded to PyPI (`2026-10-28`), as
    /// scripts/kb-refresh read it; `None` for rows it does not derive.
    #[serde(default)]
    pub released: Option<String>,
    /// URL or `owner/repo:path` the row was read in.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
}

/// A JAX CUDA plugin (`jax-cuda12-plugin`) and what it needs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JaxPlugin {
    /// Distribution name.
    pub package: String,
    /// The install extra, e.g. `cuda12`.
    pub extra: String,
    /// CUDA major.
    pub cuda_major: u32,
    /// Lowest CUDA it works with.
    pub cuda_min: CudaVersion,
    /// Lowest cuDNN.
    pub cudnn_min: CudnnVersion,
    /// cuDNN major it needs (`< major+1`).
    pub cudnn_major: u32,
    /// Lowest Linux driver branch.
    pub linux_driver_min: DriverVersion,
    /// Lowest compute capability.
    pub min_cc: ComputeCapability,
    /// The CUDA of the runtime wheel `jax[cudaNN]` installs from PyPI (its requirements are lower
    /// bounds, so the newest of the major) as of the knowledge base's date; `None`: not read.
    #[serde(default)]
    pub pypi_cuda: Option<CudaVersion>,
    /// Where `pypi_cuda` was read.
    #[serde(default)]
    pub pypi_cuda_source: Option<String>,
    /// URL or `owner/repo:path` the row was read in.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
}

/// `cupy.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CupyTable {
    /// CuPy packages.
    pub package: Vec<CupyPackage>,
}

/// A CuPy wheel (`cupy-cuda12x`) and the CUDA range it is for.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CupyPackage {
    /// Distribution name.
    pub name: String,
    /// Lowest CUDA.
    pub cuda_min: CudaVersion,
    /// Highest CUDA.
    pub cuda_max: CudaVersion,
    /// The newest release the chooser installs (`13.6.0`); `None` for packages it does not offer.
    #[serde(default)]
    pub latest: Option<String>,
    /// Lowest Python of `latest`.
    #[serde(default)]
    pub python_min: Option<String>,
    /// Highest Python of `latest`.
    #[serde(default)]
    pub python_max: Option<String>,
    /// Whether `latest` has Windows x86_64 wheels.
    #[serde(default)]
    pub windows: bool,
    /// The day the newest release of the row was first uploaded to PyPI (`2026-10-28`), as
    /// scripts/kb-refresh read it; `None` for rows it does not derive.
    #[serde(default)]
    pub released: Option<String>,
    /// URL or `owner/repo:path` the row was read in.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
}

// ---------------------------------------------------------------- cudnn.toml

/// `cudnn.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudnnTable {
    /// Releases, oldest first.
    pub release: Vec<CudnnRelease>,
}

/// A cuDNN release and what it supports.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudnnRelease {
    /// e.g. `9.10.2`.
    pub version: CudnnVersion,
    /// CUDA majors it has builds for.
    pub cuda_majors: Vec<u32>,
    /// Lowest compute capability.
    pub min_cc: ComputeCapability,
    /// Highest compute capability.
    pub max_cc: ComputeCapability,
    /// URL or `owner/repo:path` the row was read in.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
}

// ---------------------------------------------------------------- links.toml

/// `links.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkTable {
    /// PCIe generations.
    pub pcie: Vec<PcieGen>,
    /// Named links (Thunderbolt, USB4, OCuLink, common slots).
    pub link: Vec<LinkRow>,
    /// NVLink generations: the rate of one link, which the GPU-to-GPU copy test is judged against.
    #[serde(default)]
    pub nvlink: Vec<NvlinkGen>,
}

/// One NVLink generation.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NvlinkGen {
    /// The generation, 1 to 5: not what NVML answers (its `nvmlNvlinkVersion_t` enum, 7 on H100s),
    /// which [`super::nvlink_generation`] maps to this.
    pub version: u32,
    /// Payload of one link in one direction, GB/s (half the bidirectional figure NVIDIA quotes).
    pub gbytes_per_s_per_link: f64,
    /// The GPUs of this generation the figure is for.
    pub gpus: String,
    /// Only for GPUs of this compute capability (e.g. `8.6`: GA102 reports NVLink 3 but runs
    /// narrower links than A100); `None` for the generation's own rate.
    #[serde(default)]
    pub compute_capability: Option<String>,
    /// URL or `owner/repo:path` the row was read in.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
}

/// One PCIe generation.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcieGen {
    /// 1 to 6.
    pub generation: u32,
    /// Transfer rate per lane, GT/s.
    pub gt_per_s: f64,
    /// The share of the line that carries payload, as `[payload, line]` units: `[8, 10]` for 8b/10b,
    /// `[128, 130]` for 128b/130b, `[242, 256]` for Gen6's FLIT (242 of 256 bytes carry data).
    pub payload_per_line: [u32; 2],
    /// URL or `owner/repo:path` the row was read in.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
}

/// A named host link with its theoretical and typically measured host↔device bandwidth.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkRow {
    /// Stable key, e.g. `thunderbolt3`, `pcie4_x16`.
    pub key: String,
    /// Tunnels only: how the tunnel carries PCIe, one phrase; the probes cap a link behind it at
    /// `theoretical_gbytes_per_s` and give this as the reason.
    pub pcie_tunnel: Option<String>,
    /// Display name.
    pub name: String,
    /// Theoretical payload, one direction, GB/s.
    pub theoretical_gbytes_per_s: f64,
    /// Typical pinned H2D/D2H, low end, GB/s; `None` where no measurement was found.
    pub typical_min_gbytes_per_s: Option<f64>,
    /// Typical, high end.
    pub typical_max_gbytes_per_s: Option<f64>,
    /// URL or `owner/repo:path` the row was read in.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
}

// ---------------------------------------------------------------- errors.toml

/// `errors.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorTable {
    /// Known messages.
    pub message: Vec<KnownMessage>,
}

/// A well-known error or warning line and what it means.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnownMessage {
    /// Stable dotted id, e.g. `torch.driver_too_old`.
    pub id: String,
    /// Who prints it, e.g. `PyTorch c10/cuda/CUDAFunctions.cpp`.
    pub emitter: String,
    /// A regular expression (Rust `regex` syntax) matched against one line; named groups become
    /// the observed message's values.
    pub pattern: String,
    /// What it means, one sentence.
    pub meaning: String,
    /// The finding category it is evidence for.
    pub category: Category,
    /// The releases that print it, where upstream added or removed it; `None`: no such limit known.
    #[serde(default)]
    pub printed_by: Option<PrintedBy>,
    /// The rules whose findings explain the line (`health.xid_error`), besides any finding of its
    /// category. The `other` category gathers unrelated problems, so there only these explain it.
    #[serde(default)]
    pub explained_by: Vec<String>,
    /// Where the wording comes from: URL or `owner/repo:path`.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
    /// How its emitter prints it: an error (the default) or a warning it goes on after.
    #[serde(default)]
    pub level: MessageLevel,
}

/// How a message's emitter prints it, read in its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MessageLevel {
    /// An exception, a failed call, an error log line: the program stops or the GPU is not used.
    #[default]
    Error,
    /// A logged warning after which the program goes on (`logger.warning`, `warnings.warn`): it
    /// names a problem only where that part is used.
    Warning,
    /// An error of the workload, not of the setup (CUDA out of memory: the model or the batch does not
    /// fit the GPU): its finding is a note, so a healthy setup that ran out of memory is no setup error.
    Workload,
}

/// The releases of one Python package that print a message, both ends included.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrintedBy {
    /// Distribution name, as environments list it, e.g. `jax`.
    pub package: String,
    /// The first release that prints it; `None`: every release up to `last`.
    pub first: Option<String>,
    /// The last release that prints it; `None`: still printed.
    pub last: Option<String>,
}

impl PrintedBy {
    /// Whether `version` (`0.4.26`, `0.5.3+cuda12`, `0.4.36.dev20241112`) is in the range, compared by its
    /// leading numeric parts (`0.5` is `0.5.0`); a `last` of fewer parts covers its whole line (`2.10`
    /// ends after every 2.10.x). `None` when it does not start with a number.
    pub fn contains(&self, version: &str) -> Option<bool> {
        fn parts(v: &str) -> Vec<u32> {
            let mut out = Vec::new();
            for p in v.trim().split('.') {
                let digits = p.len() - p.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                let Ok(n) = p[..digits].parse() else { break };
                out.push(n);
                if digits < p.len() {
                    break;
                }
            }
            out
        }
        fn cmp(a: &[u32], b: &[u32]) -> std::cmp::Ordering {
            let len = a.len().max(b.len());
            let pad = |v: &[u32]| (0..len).map(|i| v.get(i).copied().unwrap_or(0)).collect::<Vec<_>>();
            pad(a).cmp(&pad(b))
        }
        let v = parts(version);
        if v.is_empty() {
            return None;
        }
        let after_first = self.first.as_deref().is_none_or(|f| cmp(&v, &parts(f)).is_ge());
        let before_last = self.last.as_deref().is_none_or(|l| {
            let l = parts(l);
            cmp(&v[..v.len().min(l.len().max(1))], &l).is_le()
        });
        Some(after_first && before_last)
    }
}

impl From<OpsPerClock> for gpu_doctor_model::bench::verdict::PeakOps {
    fn from(o: OpsPerClock) -> Self {
        Self { fp32: o.fp32, tf32: o.tf32_tensor, fp16: o.fp16_tensor, bf16: o.bf16_tensor }
    }
}
