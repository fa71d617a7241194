//! The model: what a snapshot is made of, as plain serde data. The probes fill it on this machine,
//! the paste reader from another machine's text; diagnosis, the benchmarks and the app read it.
//! Nothing here touches the machine.

mod bus_id;
mod containers;
mod cudnn;
mod driver;
mod env;
mod gpu;
mod health;
mod link;
mod pci;
mod platform;
mod probed;
mod python;
mod snapshot;
mod system;
mod toolkits;
mod topology;
mod version;

pub use bus_id::{PciBusId, PciBusIdError};
pub use containers::{
    CdiSpec, CliDevice, CliInfo, ContainerSupport, ContainerToolkit, Engine, EngineKind, InsideContainer,
    KubeletPlugins, RuntimeConfig, ToolProgram,
};
pub use cudnn::{CudnnCopy, CudnnKind, CudnnVersionSource};
pub use driver::{DriverFacts, InstalledModule, KernelModuleFacts, SecureBoot};
pub use env::EnvFacts;
pub use gpu::{Gpu, GpuProcess};
pub use health::{EccCounters, GpuHealth, Health, XidEvent};
pub use link::{BootLinkLimit, EgpuFacts, HostLink, SysfsLink, TunnelKind, UpstreamPort};
pub use pci::PciDevice;
pub use platform::{ContainerFacts, OsFamily, Platform, PlatformFacts, WslFacts};
pub use probed::{Outcome, Probed, Trace, TraceEntry};
pub use python::{
    DeepCupy, DeepFacts, DeepJax, DeepJaxDevice, DeepOnnxruntime, DeepPython, DeepTensorflow, DeepTorch,
    DeepTorchDevice, EnvKind, Framework, FrameworkBuild, Package, PythonEnv, UnusedPython,
};
pub use snapshot::{ObservedMessage, Origin, SCHEMA_VERSION, Snapshot};
pub use system::{SystemFacts, SystemInfo};
pub use toolkits::{Pick, ToolkitInstall, ToolkitKind, ToolkitPicks, Toolkits, VersionSource};
pub use topology::{
    CudaOrder, DeviceOrder, GpuPair, LinkKind, MigFacts, MigInstance, NvLink, P2pStatus, TopoGpu, Topology,
};
pub use version::{ComputeCapability, CudaVersion, CudnnVersion, DriverVersion, VersionError};
