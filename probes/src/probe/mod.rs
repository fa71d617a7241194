//! The probes, and `collect`, which runs them all into a `Snapshot`.

pub mod containers;
pub mod cudnn;
pub mod driver;
pub mod env;
pub mod gpus;
pub mod health;
pub mod link;
pub mod pci;
pub mod platform;
pub mod python;
pub mod system;
pub mod toolkits;
pub mod topology;

use std::path::PathBuf;

/// What to probe beyond the defaults. A recording keeps them (`Fixture::recorded_with`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Options {
    /// Also import the frameworks in each Python interpreter (the deep tier); environments inside
    /// `cwd` only when named in `extra_pythons`.
    pub deep: bool,
    /// Interpreters named on the command line with `--python`.
    pub extra_pythons: Vec<PathBuf>,
    /// The working folder: where to look for a `.venv`, and whose environments the deep tier does
    /// not start unless named; `None` to skip both.
    pub cwd: Option<PathBuf>,
}

/// A site-packages folder and the environment it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SitePackages {
    /// The environment's display name.
    pub env: String,
    /// The folder.
    pub path: PathBuf,
}

use std::thread;

use crate::host::Host;
use gpu_doctor_model::{Probed, SCHEMA_VERSION, Snapshot, TOOL_VERSION, Trace};

/// One group of probes' results, handed out as soon as the group finishes (see `collect_streaming`).
#[derive(Debug, Clone)]
pub enum Part {
    /// OS, kernel, CPU and memory.
    System(Probed<gpu_doctor_model::SystemFacts>),
    /// OS family, WSL and container.
    Platform(gpu_doctor_model::PlatformFacts),
    /// CUDA-relevant environment variables.
    Env(gpu_doctor_model::EnvFacts),
    /// Container engines, the NVIDIA Container Toolkit, and what a container was given.
    Containers(Probed<gpu_doctor_model::ContainerSupport>),
    /// The driver and the GPUs it sees.
    Gpus { driver: Probed<gpu_doctor_model::DriverFacts>, gpus: Probed<Vec<gpu_doctor_model::Gpu>> },
    /// Each GPU's health and the kernel log's Xid events.
    Health(gpu_doctor_model::Health),
    /// The kernel module, Secure Boot and the PCI bus.
    Modules {
        kernel_module: Probed<gpu_doctor_model::KernelModuleFacts>,
        secure_boot: Probed<gpu_doctor_model::SecureBoot>,
        pci_devices: Probed<Vec<gpu_doctor_model::PciDevice>>,
    },
    /// Each GPU's host link.
    Links(Probed<Vec<gpu_doctor_model::HostLink>>),
    /// How the GPUs connect.
    Topology(Probed<gpu_doctor_model::Topology>),
    /// Python environments, CUDA toolkits and cuDNN.
    Python {
        python_envs: Probed<Vec<gpu_doctor_model::PythonEnv>>,
        unused_pythons: Vec<gpu_doctor_model::UnusedPython>,
        toolkits: Probed<gpu_doctor_model::Toolkits>,
        cudnn: Probed<Vec<gpu_doctor_model::CudnnCopy>>,
    },
}

impl Part {
    /// Every part's name, in the order a summary shows them.
    pub const NAMES: [&'static str; 10] =
        ["system", "platform", "env", "containers", "gpus", "health", "modules", "links", "topology", "python"];

    /// This part's name (one of `NAMES`).
    pub fn name(&self) -> &'static str {
        match self {
            Part::System(_) => "system",
            Part::Platform(_) => "platform",
            Part::Env(_) => "env",
            Part::Containers(_) => "containers",
            Part::Gpus { .. } => "gpus",
            Part::Health(_) => "health",
            Part::Modules { .. } => "modules",
            Part::Links(_) => "links",
            Part::Topology(_) => "topology",
            Part::Python { .. } => "python",
        }
    }

    /// Writes this part into a snapshot that is being filled in.
    pub fn apply(self, snap: &mut Snapshot) {
        match self {
            Part::System(v) => snap.system = v,
            Part::Platform(v) => snap.platform = v,
            Part::Env(v) => snap.env = v,
            Part::Containers(v) => snap.containers = v,
            Part::Gpus { driver, gpus } => (snap.driver, snap.gpus) = (driver, gpus),
            Part::Health(v) => snap.health = v,
            Part::Modules { kernel_module, secure_boot, pci_devices } => {
                (snap.kernel_module, snap.secure_boot, snap.pci_devices) = (kernel_module, secure_boot, pci_devices);
            }
            Part::Links(v) => snap.links = v,
            Part::Topology(v) => snap.topology = v,
            Part::Python { python_envs, unused_pythons, toolkits, cudnn } => {
                (snap.python_envs, snap.unused_pythons) = (python_envs, unused_pythons);
                (snap.toolkits, snap.cudnn) = (toolkits, cudnn);
            }
        }
    }
}

/// Runs every probe and returns what they found.
pub fn collect(host: &dyn Host, opts: &Options) -> Snapshot {
    collect_streaming(host, opts, &|_| {})
}

/// Runs every probe, handing each group's results to `on_part` as soon as the group finishes (from
/// the probe threads, so `on_part` must be `Sync`), and returns the whole snapshot.
///
/// Probes that do not depend on each other run on their own threads; the ones that need another's
/// result (host links need the GPUs, cuDNN needs the toolkits and Python environments) run after it.
/// Traces are gathered in a fixed order so the output does not depend on timing.
pub fn collect_streaming(host: &dyn Host, opts: &Options, on_part: &(dyn Fn(Part) + Sync)) -> Snapshot {
    let taken_at_unix_secs = host.now_unix_secs();
    let smi = driver::SmiXml::default();
    let loader = toolkits::LoaderCache::default();
    thread::scope(|s| {
        let spawn = |name: &str| thread::Builder::new().name(format!("probe-{name}"));
        let gpu_side = spawn("driver").spawn_scoped(s, || driver_side(host, &smi, on_part));
        let module_side = spawn("modules").spawn_scoped(s, || {
            let mut t = Trace::new("kernel_module");
            let module = driver::probe_kernel_module(host, &mut t);
            let secure_boot = driver::probe_secure_boot(host, &mut t);
            let mut tp = Trace::new("pci");
            let pci = pci::probe(host, &mut tp);
            on_part(Part::Modules {
                kernel_module: module.clone(),
                secure_boot: secure_boot.clone(),
                pci_devices: pci.clone(),
            });
            // The two children the other probes need (the loader cache for the toolkits and cuDNN,
            // the kernel log for the GPUs' health and links) run here, while the Python scan and
            // NVML go on, rather than one after the other behind them (no thread of their own: each
            // thread that allocates costs the process a malloc arena).
            loader.read(host);
            let log = health::KernelLog::read(host);
            (module, secure_boot, pci, log, t, tp)
        });
        let python_side = spawn("python").spawn_scoped(s, || {
            let mut t = Trace::new("python");
            let (envs, unused) = python::probe(host, opts, &mut t);
            let site = envs.value().map(|e| python::site_packages(e)).unwrap_or_default();
            let mut tt = Trace::new("toolkits");
            let toolkits = toolkits::probe(host, &site, &loader, &mut tt);
            let mut tc = Trace::new("cudnn");
            let cudnn = cudnn::probe(host, toolkits.value(), &site, &loader, &mut tc);
            on_part(Part::Python {
                python_envs: envs.clone(),
                unused_pythons: unused.clone(),
                toolkits: toolkits.clone(),
                cudnn: cudnn.clone(),
            });
            (envs, unused, toolkits, cudnn, t, tt, tc)
        });

        let (system, platform, env, containers, [t_sys, t_platform, t_env, t_containers]) = local_side(host, on_part);
        let (driver, gpus, gpu_health, [t_driver, t_gpus, mut t_health], nvml) = join(gpu_side, "driver", |e| {
            let nvml = Err(crate::host::HostError::Unavailable { message: e.clone() });
            (failed(&e), failed(&e), failed(&e), [Trace::default(), Trace::default(), Trace::default()], nvml)
        });
        let mut t_topology = Trace::new("topology");
        let topology = topology::probe(host, &nvml, gpus.value().map(Vec::as_slice), &env, &mut t_topology);
        on_part(Part::Topology(topology.clone()));
        let (kernel_module, secure_boot, pci_devices, log, t_module, t_pci) = join(module_side, "modules", |e| {
            (failed(&e), failed(&e), failed(&e), health::KernelLog::failed(&e), Trace::default(), Trace::default())
        });
        let health::Reading { health, boot_limits } = health::Reading::new(gpu_health, log, &mut t_health);
        on_part(Part::Health(health.clone()));
        let mut t_link = Trace::new("link");
        let links = links(host, &pci_devices, &gpus, &boot_limits, &mut t_link);
        on_part(Part::Links(links.clone()));
        let (python_envs, unused_pythons, toolkits, cudnn, t_python, t_toolkits, t_cudnn) =
            join(python_side, "python", |e| {
                (failed(&e), Vec::new(), failed(&e), failed(&e), Trace::default(), Trace::default(), Trace::default())
            });

        let trace = entries([
            t_sys,
            t_platform,
            t_env,
            t_driver,
            t_module,
            t_pci,
            t_gpus,
            t_health,
            t_link,
            t_topology,
            t_toolkits,
            t_cudnn,
            t_python,
            t_containers,
        ]);
        Snapshot {
            schema_version: SCHEMA_VERSION,
            tool_version: TOOL_VERSION.to_owned(),
            taken_at_unix_secs,
            origin: gpu_doctor_model::Origin::ThisMachine,
            system,
            platform,
            driver,
            kernel_module,
            secure_boot,
            pci_devices,
            gpus,
            links,
            health,
            topology,
            toolkits,
            cudnn,
            python_envs,
            unused_pythons,
            env,
            containers,
            trace,
            // What only pasted text says (counts in words, matched messages, notes).
            ..Snapshot::pending()
        }
    })
}

/// The probes the calling thread runs while the others work: system, platform, variables, and
/// containers (which need to know whether this is a container), each handed out when done.
fn local_side(
    host: &dyn Host,
    on_part: &(dyn Fn(Part) + Sync),
) -> (
    Probed<gpu_doctor_model::SystemFacts>,
    gpu_doctor_model::PlatformFacts,
    gpu_doctor_model::EnvFacts,
    Probed<gpu_doctor_model::ContainerSupport>,
    [Trace; 4],
) {
    let mut t_sys = Trace::new("system");
    let system = system::probe(host, &mut t_sys);
    on_part(Part::System(system.clone()));
    let mut t_platform = Trace::new("platform");
    let platform = platform::probe(host, &mut t_platform);
    on_part(Part::Platform(platform.clone()));
    let mut t_env = Trace::new("env");
    let env = env::probe(host, &mut t_env);
    on_part(Part::Env(env.clone()));
    let mut t_containers = Trace::new("containers");
    let containers = containers::probe(host, platform.container.is_some(), &mut t_containers);
    on_part(Part::Containers(containers.clone()));
    (system, platform, env, containers, [t_sys, t_platform, t_env, t_containers])
}

/// Every probe's trace entries, in the order given.
fn entries<const N: usize>(traces: [Trace; N]) -> Vec<gpu_doctor_model::TraceEntry> {
    traces.into_iter().flat_map(Trace::into_entries).collect()
}

/// What the driver thread found: the driver, the GPUs, their health (without the kernel log, which
/// the modules thread reads), the three traces, and NVML's answer (the topology probe reads it too).
type DriverSide = (
    Probed<gpu_doctor_model::DriverFacts>,
    Probed<Vec<gpu_doctor_model::Gpu>>,
    Probed<Vec<gpu_doctor_model::GpuHealth>>,
    [Trace; 3],
    Result<crate::host::NvmlReport, crate::host::HostError>,
);

/// The driver thread's probes: NVML once, the driver, the GPUs, then their health, the GPUs
/// handed out as they are found.
fn driver_side(host: &dyn Host, smi: &driver::SmiXml, on_part: &(dyn Fn(Part) + Sync)) -> DriverSide {
    let mut t = Trace::new("driver");
    let nvml = host.nvml();
    let driver = driver::probe(host, &nvml, smi, &mut t);
    let mut tg = Trace::new("gpus");
    let gpus = gpus::probe(host, &nvml, smi, &mut tg);
    on_part(Part::Gpus { driver: driver.clone(), gpus: gpus.clone() });
    let mut th = Trace::new("health");
    let health = health::gpu_health(host, &nvml, smi, &gpus, &mut th);
    (driver, gpus, health, [t, tg, th], nvml)
}

/// The host links of the PCI devices and GPUs found, each with the kernel's bandwidth line about it
/// from `boot_limits` (bus id, limit) where the log had one.
fn links(
    host: &dyn Host,
    pci_devices: &Probed<Vec<gpu_doctor_model::PciDevice>>,
    gpus: &Probed<Vec<gpu_doctor_model::Gpu>>,
    boot_limits: &[(String, gpu_doctor_model::BootLinkLimit)],
    trace: &mut Trace,
) -> Probed<Vec<gpu_doctor_model::HostLink>> {
    let mut links = match (pci_devices.value(), gpus.value()) {
        (Some(devices), gpus) => link::probe(host, devices, gpus.map_or(&[][..], Vec::as_slice), trace),
        // Not Linux: the link probe says why it does not apply here.
        (None, _) if matches!(pci_devices, Probed::Unsupported { .. }) => link::probe(host, &[], &[], trace),
        (None, _) => Probed::absent(format!(
            "no NVIDIA device on the PCI bus to follow: {}",
            pci_devices.why_not().unwrap_or("unknown")
        )),
    };
    if let Probed::Found { value, .. } = &mut links {
        link::attach_boot_limits(value, boot_limits);
    }
    links
}

/// Joins a probe thread; one that could not start or panicked gives `fallback`'s `Failed` results,
/// so a bug in one probe cannot take the others down.
fn join<R>(
    handle: std::io::Result<thread::ScopedJoinHandle<'_, R>>,
    name: &str,
    fallback: impl FnOnce(String) -> R,
) -> R {
    let error = match handle.map(thread::ScopedJoinHandle::join) {
        Ok(Ok(r)) => return r,
        Ok(Err(_)) => format!("the {name} probe panicked (a bug: please report it)"),
        Err(e) => format!("could not start the {name} probe thread: {e}"),
    };
    fallback(error)
}

fn failed<T>(error: &str) -> Probed<T> {
    Probed::Failed { error: error.to_owned() }
}
