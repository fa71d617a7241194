//! The model: what a machine is, as plain serde data. The probes fill a [`Snapshot`] on this
//! machine, the paste reader from another machine's text; the judge turns it into a [`Report`] with
//! [`Finding`]s; the benchmarks make a [`bench::run::BenchRun`]; the app shows and exports them.
//! Nothing here touches the machine, and this crate depends on no other crate of the workspace.

pub mod bench;
mod bus_id;
pub mod certify;
mod containers;
mod cudnn;
mod driver;
mod env;
mod finding;
pub mod fleet;
mod gpu;
mod health;
mod link;
mod pci;
mod platform;
mod probed;
mod python;
mod report;
pub mod shell;
mod snapshot;
mod system;
pub mod telemetry;
pub mod time;
mod toolkits;
mod topology;
mod version;

pub use bus_id::{PciBusId, PciBusIdError};
pub use containers::{
    CdiSpec, CliDevice, CliInfo, ContainerSupport, ContainerToolkit, Engine, EngineKind, InsideContainer, KubeNode,
    KubeletPlugins, RuntimeConfig, ToolProgram,
};
pub use cudnn::{CudnnCopy, CudnnKind, CudnnVersionSource};
pub use driver::{DriverFacts, InstalledModule, KernelModuleFacts, SecureBoot};
pub use env::{EnvFacts, MASKED, mask_secret, mask_url_credentials};
pub use finding::{Category, Change, DriverLoadProblem, Finding, InstallFlag, PlanRef, PlanTarget, Severity};
pub use gpu::{Gpu, GpuProcess, StoppedGpuProcess};
pub use health::{AerCounters, EccChange, EccCounters, GpuHealth, Health, XidEvent, is_slowdown};
pub use link::{BootLinkLimit, EgpuFacts, HostLink, IDLE_NOTE, LinkSeenBy, SysfsLink, TunnelKind, UpstreamPort};
pub use pci::{NVIDIA_DRIVER, NVIDIA_VENDOR_ID, PciDevice, is_display_class};
pub use platform::{
    ContainerFacts, ENGINE_GPU_OPTIONS, LIBRARY_GPU_OPTIONS, OsFamily, Platform, PlatformFacts, WslFacts,
};
pub use probed::{Outcome, Probed, Trace, TraceEntry};
pub use python::{
    DeepCupy, DeepFacts, DeepJax, DeepJaxDevice, DeepOnnxruntime, DeepPython, DeepTensorflow, DeepTorch,
    DeepTorchDevice, EnvKind, Framework, FrameworkBuild, Package, PythonEnv, UnusedPython,
};
pub use report::Report;
pub use snapshot::{
    GPUS_IN_WORDS, NOTHING_RECOGNISED, ObservedMessage, Origin, SCHEMA_VERSION, Snapshot, gpus_only_in_words,
};
pub use system::{Dmi, SystemFacts, SystemInfo};
pub use toolkits::{
    LddResolution, LoaderEntry, Pick, ToolkitInstall, ToolkitKind, ToolkitPicks, Toolkits, VersionSource,
};
pub use topology::{
    CudaOrder, DeviceOrder, GpuPair, Iommu, IommuMode, LinkKind, MigFacts, MigInstance, MultiGpuSymptom,
    MultiGpuTrouble, NvLink, NvLinkErrors, P2pStatus, PeerAccess, PeerCopy, StalledCollective, TopoGpu, Topology,
    cpu_list,
};
pub use version::{ComputeCapability, CudaVersion, CudnnVersion, DriverVersion, VersionError};

/// This build's version, written into every snapshot, report and benchmark run.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");
