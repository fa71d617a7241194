//! A machine described in a few calls, for the rule tests and (feature `test-support`) the plan tests
//! of `gpu-doctor-installers`.

use gpu_doctor_kb::Kb;
use gpu_doctor_model::LoaderEntry;
use gpu_doctor_model::{
    CudnnCopy, CudnnKind, DeepFacts, DeepTorch, DriverFacts, EnvKind, Framework, FrameworkBuild, Gpu, HostLink,
    KernelModuleFacts, OsFamily, Package, PciDevice, Pick, Platform, PythonEnv, SecureBoot, SystemInfo, ToolkitInstall,
    ToolkitKind, Toolkits, WslFacts,
};
use gpu_doctor_model::{Finding, Origin, Probed, Snapshot};

/// A Linux machine where every part is absent until a call adds it.
#[derive(Debug)]
pub struct Machine(pub Snapshot);

impl Machine {
    pub fn linux() -> Self {
        let mut s = Snapshot::unknown(Vec::new());
        s.origin = Origin::ThisMachine;
        s.platform.platform = Platform { os: OsFamily::Linux, arch: "x86_64".into() };
        let none = "not in this test machine";
        s.system = Probed::found(
            SystemInfo {
                os_name: Some("Ubuntu".into()),
                os_version: Some("24.04".into()),
                kernel_version: Some("6.8.0-45-generic".into()),
                host_name: None,
                cpu_model: None,
                cpu_physical_cores: None,
                cpu_logical_cores: 8,
                memory_total_bytes: 1 << 35,
                dmi: None,
            },
            "test",
        );
        s.driver = Probed::absent(none);
        s.kernel_module = Probed::absent(none);
        s.secure_boot = Probed::absent(none);
        s.pci_devices = Probed::found(Vec::new(), "test");
        s.gpus = Probed::absent(none);
        s.links = Probed::absent(none);
        s.toolkits = Probed::absent(none);
        s.cudnn = Probed::found(Vec::new(), "test");
        s.python_envs = Probed::absent(none);
        Self(s)
    }

    pub fn windows() -> Self {
        let mut m = Self::linux();
        m.0.platform.platform.os = OsFamily::Windows;
        m
    }

    /// Marks the snapshot as pasted text, where the parts not set are unknown.
    pub fn pasted() -> Self {
        Self(Snapshot::unknown(vec!["test".into()]))
    }

    /// Driver `version` supporting CUDA `cuda` (`""` when not reported: then looked up by version for
    /// the OS set so far, as every snapshot reader does).
    pub fn driver(mut self, version: &str, cuda: &str) -> Self {
        self.0.driver = Probed::found(DriverFacts::reported(version.parse().unwrap(), cuda.parse().ok(), None), "nvml");
        Kb::get().unwrap().complete_snapshot(&mut self.0);
        self
    }

    /// A GPU with its capability (`""` when unknown).
    pub fn gpu(mut self, name: &str, cc: &str) -> Self {
        let mut gpus = self.0.gpus.value().cloned().unwrap_or_default();
        gpus.push(Gpu {
            index: u32::try_from(gpus.len()).unwrap(),
            name: Some(name.into()),
            compute_capability: cc.parse().ok(),
            ..Gpu::default()
        });
        self.0.gpus = Probed::found(gpus, "nvml");
        self
    }

    fn env_mut(&mut self) -> &mut PythonEnv {
        if self.0.python_envs.value().is_none() {
            self.0.python_envs = Probed::found(Vec::new(), "test");
        }
        let Probed::Found { value: envs, .. } = &mut self.0.python_envs else { unreachable!() };
        if envs.is_empty() {
            envs.push(PythonEnv {
                name: "venv:/home/u/proj/.venv".into(),
                kind: EnvKind::Venv,
                prefix: "/home/u/proj/.venv".into(),
                interpreter: Some("/home/u/proj/.venv/bin/python".into()),
                python_version: Some("3.12".into()),
                site_packages: vec!["/home/u/proj/.venv/lib/python3.12/site-packages".into()],
                include_system_site_packages: false,
                found_by: vec!["VIRTUAL_ENV".into()],
                frameworks: Vec::new(),
                cuda_wheels: Vec::new(),
                companions: Vec::new(),
                deep: None,
            });
        }
        &mut envs[0]
    }

    /// Sets the environment's site-packages folders (as `pip show` printed them for pasted text).
    pub fn site_packages(mut self, dirs: &[&str]) -> Self {
        self.env_mut().site_packages = dirs.iter().map(|d| (*d).to_owned()).collect();
        self
    }

    /// Moves the environment to `prefix` (interpreter, site-packages and frameworks with it).
    pub fn env_prefix(mut self, prefix: &str) -> Self {
        let env = self.env_mut();
        let old = env.prefix.clone();
        env.name = format!("venv:{prefix}");
        env.prefix = prefix.into();
        env.interpreter = Some(format!("{prefix}/bin/python"));
        env.site_packages = vec![format!("{prefix}/lib/python3.12/site-packages")];
        for fw in &mut env.frameworks {
            fw.site_packages = fw.site_packages.replace(&old, prefix);
        }
        self
    }

    /// A framework in the environment; the build follows the version's local tag (`+cu124`, `+cpu`) unless given.
    pub fn framework(mut self, name: &str, version: &str, build: Option<FrameworkBuild>) -> Self {
        let build = build.unwrap_or_else(|| {
            gpu_doctor_kb::families::build_from_local_tag(version).unwrap_or(FrameworkBuild::Unknown)
        });
        let env_site = self.env_mut().site_packages.first().cloned().unwrap_or_default();
        self.env_mut().frameworks.push(Framework {
            name: name.into(),
            version: version.into(),
            build,
            cudnn_build: None,
            source: "test".into(),
            site_packages: env_site,
        });
        self
    }

    pub fn torch(self, version: &str) -> Self {
        self.framework("torch", version, None)
    }

    pub fn wheel(mut self, name: &str, version: &str) -> Self {
        self.env_mut().cuda_wheels.push(Package { name: name.into(), version: version.into() });
        self
    }

    /// A companion package (numpy, torchvision, …) in the environment.
    pub fn companion(mut self, name: &str, version: &str) -> Self {
        self.env_mut().companions.push(Package { name: name.into(), version: version.into() });
        self
    }

    /// Deep-tier torch facts.
    pub fn deep_torch(mut self, f: impl FnOnce(&mut DeepTorch)) -> Self {
        let mut t = DeepTorch::default();
        f(&mut t);
        self.env_mut().deep = Some(Probed::found(DeepFacts { torch: Some(t), ..DeepFacts::default() }, "probe.py"));
        self
    }

    /// Deep-tier ONNX Runtime facts: its version and `get_available_providers()`.
    pub fn deep_onnxruntime(mut self, version: &str, providers: &[&str]) -> Self {
        let ort = gpu_doctor_model::DeepOnnxruntime {
            version: Some(version.to_owned()),
            providers: Some(providers.iter().map(|p| (*p).to_owned()).collect()),
            ..gpu_doctor_model::DeepOnnxruntime::default()
        };
        let env = self.env_mut();
        let mut deep = env.deep.as_ref().and_then(|d| d.value().cloned()).unwrap_or_default();
        deep.onnxruntime = Some(ort);
        env.deep = Some(Probed::found(deep, "probe.py"));
        self
    }

    /// Changes the last GPU added.
    pub fn gpu_with(mut self, f: impl FnOnce(&mut Gpu)) -> Self {
        if let Probed::Found { value, .. } = &mut self.0.gpus
            && let Some(g) = value.last_mut()
        {
            f(g);
        }
        self
    }

    /// Changes the last framework added.
    pub fn framework_with(mut self, f: impl FnOnce(&mut Framework)) -> Self {
        if let Some(fw) = self.env_mut().frameworks.last_mut() {
            f(fw);
        }
        self
    }

    /// An environment variable (`LD_LIBRARY_PATH` is split into its folders).
    pub fn env(mut self, name: &str, value: &str) -> Self {
        if name == "LD_LIBRARY_PATH" {
            self.0.env.ld_library_path = value.split(':').filter(|d| !d.is_empty()).map(str::to_owned).collect();
        } else {
            self.0.env.vars.insert(name.into(), value.into());
        }
        self
    }

    /// The kernel module facts, starting from: nvidia loaded, built for the running kernel, signed.
    pub fn kernel_module(mut self, f: impl FnOnce(&mut KernelModuleFacts)) -> Self {
        let kernel = "6.8.0-45-generic".to_owned();
        let mut k = KernelModuleFacts {
            nvidia_loaded: true,
            nouveau_loaded: false,
            loaded_version: Some("570.124.06".into()),
            open_kernel_module: Some(true),
            running_kernel: Some(kernel.clone()),
            installed: Some(gpu_doctor_model::InstalledModule {
                filename: format!("/lib/modules/{kernel}/updates/dkms/nvidia.ko.zst"),
                version: Some("570.124.06".into()),
                built_for_kernel: Some(kernel),
                signer: Some("DKMS module signing key".into()),
            }),
            installed_note: None,
        };
        f(&mut k);
        self.0.kernel_module = Probed::found(k, "/proc/modules");
        self
    }

    pub fn secure_boot(mut self, state: SecureBoot) -> Self {
        self.0.secure_boot = Probed::found(state, "mokutil --sb-state");
        self
    }

    /// An NVIDIA 3D controller on the PCI bus with this kernel driver bound (`None`: none).
    pub fn pci_gpu(mut self, bus_id: &str, driver: Option<&str>) -> Self {
        let mut devices = self.0.pci_devices.value().cloned().unwrap_or_default();
        devices.push(PciDevice {
            bus_id: bus_id.into(),
            vendor_id: 0x10de,
            device_id: 0x2684,
            class: 0x030200,
            subsystem_vendor_id: None,
            subsystem_device_id: None,
            driver: driver.map(str::to_owned),
        });
        self.0.pci_devices = Probed::found(devices, "sysfs");
        self
    }

    pub(super) fn toolkits_mut(&mut self) -> &mut Toolkits {
        if self.0.toolkits.value().is_none() {
            let empty = Toolkits::default();
            self.0.toolkits = Probed::found(empty, "filesystem");
        }
        let Probed::Found { value, .. } = &mut self.0.toolkits else { unreachable!() };
        value
    }

    /// A CUDA toolkit at `root` (`version` may be `""`), picked by each of `names`: `PATH`, `CUDA_HOME`,
    /// `CUDA_PATH`, `LD_LIBRARY_PATH` (also added to the variable), `/usr/local/cuda`.
    pub fn toolkit(mut self, root: &str, version: &str, names: &[&str]) -> Self {
        let lib = format!("{root}/lib64");
        let t = self.toolkits_mut();
        t.installs.push(ToolkitInstall {
            root: root.into(),
            kind: if root.starts_with("/usr/local/cuda") { ToolkitKind::Local } else { ToolkitKind::Other },
            version: version.parse().ok(),
            version_source: None,
            nvcc: Some(format!("{root}/bin/nvcc")),
            lib_dirs: vec![lib.clone()],
            aliases: names.iter().map(|n| (*n).to_owned()).collect(),
            python_env: None,
        });
        let pick = |named: String| Some(Pick { named, install_root: Some(root.to_owned()) });
        for name in names {
            match *name {
                "PATH" => t.picks.path = pick(format!("{root}/bin/nvcc")),
                "CUDA_HOME" => t.picks.cuda_home = pick(root.to_owned()),
                "CUDA_PATH" => t.picks.cuda_path = pick(root.to_owned()),
                "LD_LIBRARY_PATH" => t.picks.ld_library_path = pick(format!("{lib}/libcudart.so.{}", major(version))),
                "/usr/local/cuda" => t.picks.usr_local_cuda = pick(root.trim_start_matches("/usr/local/").to_owned()),
                other => panic!("unknown name {other}"),
            }
        }
        if names.contains(&"LD_LIBRARY_PATH") {
            self.0.env.ld_library_path.push(lib);
        }
        if names.contains(&"CUDA_HOME") {
            self.0.env.vars.insert("CUDA_HOME".into(), root.into());
        }
        self
    }

    /// A library in the loader cache (`ldconfig -p`).
    pub fn loader_lib(mut self, name: &str, path: &str) -> Self {
        let entry = LoaderEntry { name: name.into(), arch: "libc6,x86-64".into(), path: path.into() };
        let toolkits = self.toolkits_mut();
        toolkits.loader_libraries.push(entry);
        toolkits.loader_cache_read = true;
        self
    }

    /// A cuDNN copy (`version` may be a bare major, `"9"`).
    pub fn cudnn(mut self, location: &str, kind: CudnnKind, version: &str, cuda_major: Option<u32>) -> Self {
        let mut copies = self.0.cudnn.value().cloned().unwrap_or_default();
        let full = version.contains('.').then(|| version.parse().unwrap());
        copies.push(CudnnCopy {
            location: location.into(),
            kind,
            version: full,
            major: version.split('.').next().and_then(|m| m.parse().ok()),
            version_source: None,
            env: None,
            cuda_major,
        });
        self.0.cudnn = Probed::found(copies, "filesystem");
        self
    }

    /// WSL of this version, with `/usr/lib/wsl/lib` holding `libcuda_files` (none: the folder is absent).
    pub fn wsl(mut self, version: u32, libcuda_files: &[&str]) -> Self {
        self.0.platform.wsl = Some(WslFacts {
            version,
            distro: Some("Ubuntu-24.04".into()),
            driver_lib_dir_present: !libcuda_files.is_empty(),
            libcuda_files: libcuda_files.iter().map(|f| (*f).to_owned()).collect(),
            ..WslFacts::default()
        });
        self
    }

    /// The WSL kernel's release (`uname -r`); call after [`Self::wsl`].
    pub fn wsl_kernel(mut self, release: &str) -> Self {
        if let Some(w) = self.0.platform.wsl.as_mut() {
            w.kernel_release = Some(release.to_owned());
        }
        self
    }

    /// GPUs the Windows side's nvidia-smi lists in TCC mode; call after [`Self::wsl`].
    pub fn wsl_tcc(mut self, gpus: &[&str]) -> Self {
        if let Some(w) = self.0.platform.wsl.as_mut() {
            w.tcc_gpus = gpus.iter().map(|g| (*g).to_owned()).collect();
        }
        self
    }

    /// A host link for the GPU at `bus_id`, running at `gen`/`width` now and capable of `gen_max`/`width_max`.
    pub fn link(mut self, bus_id: &str, now: (u32, u32), max: (u32, u32), f: impl FnOnce(&mut HostLink)) -> Self {
        let mut links = self.0.links.value().cloned().unwrap_or_default();
        let below = now.0 < max.0 || now.1 < max.1;
        let mut l = HostLink {
            bus_id: bus_id.into(),
            pci_path: vec![bus_id.into()],
            upstream: Vec::new(),
            numa_node: None,
            gen_current: Some(now.0),
            gen_max: Some(max.0),
            width_current: Some(now.1),
            width_max: Some(max.1),
            values_from: "nvml".into(),
            egpu: None,
            theoretical_gbytes_per_s: gpu_doctor_kb::pcie_gbytes_per_s(max.0, max.1),
            bandwidth_basis: format!("PCIe Gen{} x{}", max.0, max.1),
            idle_note: below.then(|| gpu_doctor_model::IDLE_NOTE.to_owned()),
            boot_limit: None,
        };
        f(&mut l);
        links.push(l);
        self.0.links = Probed::found(links, "sysfs and nvml");
        self
    }

    pub fn findings(&self) -> Vec<Finding> {
        self.findings_with(Kb::get().unwrap())
    }

    /// Its findings against another knowledge base (an edited copy of the embedded one).
    pub fn findings_with(&self, kb: &Kb) -> Vec<Finding> {
        crate::diagnose::diagnose(&self.0, kb)
    }

    /// The ids of its findings, sorted.
    pub fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.findings().into_iter().map(|f| f.id).collect();
        ids.sort();
        ids
    }

    /// The changes the plan of the one finding with this id makes (its rule names them; the
    /// installers' change planner writes the commands).
    pub fn changes(&self, id: &str) -> Vec<gpu_doctor_model::Change> {
        match self.finding(id).plan.map(|p| p.target) {
            Some(gpu_doctor_model::PlanTarget::Change { changes, .. }) => changes,
            other => panic!("{id} has no change plan: {other:?}"),
        }
    }

    /// The one finding with this id.
    pub fn finding(&self, id: &str) -> Finding {
        let all = self.findings();
        let mut it = all.iter().filter(|f| f.id == id);
        let f = it.next().unwrap_or_else(|| panic!("no {id} in {all:#?}")).clone();
        assert!(it.next().is_none(), "more than one {id}");
        f
    }
}

fn major(version: &str) -> &str {
    version.split('.').next().unwrap_or(version)
}

/// A folder name (`testing::H`) that runs commands when pasted unquoted, inside single quotes, or inside double quotes.
pub const H: &str = "/home/u/p;touch${IFS}PWNED;#'$(touch PWNED) x\n`touch PWNED`";
pub const MARK: &str = "PWNED";

fn hostile_cuda(version: &str) -> Option<FrameworkBuild> {
    Some(FrameworkBuild::Cuda { version: Some(version.into()) })
}

fn hostile_rig() -> Machine {
    Machine::linux()
        .gpu("NVIDIA GeForce RTX 4090", "8.9")
        .driver("570.124.06", "12.8")
        .env_prefix(&format!("{H}/.venv"))
}

/// torch 2.5.1+cu124 with its cuDNN wheel, having loaded cuDNN `encoded` from a hostile folder.
fn hostile_loaded(encoded: u32) -> Machine {
    let venv_lib = format!("{H}/cudnn/lib");
    hostile_rig()
        .torch("2.5.1+cu124")
        .wheel("nvidia-cudnn-cu12", "9.1.0.70")
        .deep_torch(|t| t.cudnn_version = Some(encoded))
        .env("LD_LIBRARY_PATH", &format!("{venv_lib}:/opt/x"))
        .cudnn(&format!("{venv_lib}/libcudnn.so.8.9.7"), CudnnKind::Library, "8.9.7", None)
}

/// Two toolkits in hostile folders, picked by different names.
fn hostile_toolkits(m: Machine) -> Machine {
    m.env("LD_LIBRARY_PATH", &format!("{H}/tools/lib"))
        .toolkit(&format!("/usr/local/cuda-11.8{H}"), "11.8", &["PATH", "LD_LIBRARY_PATH"])
        .toolkit(&format!("/usr/local/cuda-12.4{H}"), "12.4", &["CUDA_HOME", "/usr/local/cuda"])
}

/// A machine per fix that holds a path (or other text) of the machine.
pub fn hostile_machines() -> Vec<(&'static str, Machine)> {
    let venv_lib = format!("{H}/cudnn/lib");
    let c124 = format!("/usr/local/cuda-12.4{H}");
    let (loaded, two_toolkits) = (hostile_loaded, hostile_toolkits);
    let mut wsl1 = Machine::linux().wsl(1, &[]);
    if let Some(w) = wsl1.0.platform.wsl.as_mut() {
        w.distro = Some(format!("Ubuntu{H}"));
    }
    // A framework's CPU build, a torch too new for the driver and a torch not built for the GPU get
    // their fix from a framework plan (installers' framework_plan tests): their rules' own prose names
    // no path.
    vec![
        (
            "tensorflow without cuDNN",
            hostile_rig()
                .framework("tensorflow", "2.18.0", hostile_cuda("12.5.1"))
                .framework_with(|f| f.cudnn_build = Some("9".into())),
        ),
        ("jax without cuDNN", hostile_rig().framework("jax-cuda12-plugin", "0.6.2", hostile_cuda("12"))),
        (
            "tensorflow with an old cuDNN on the loader path",
            hostile_rig()
                .framework("tensorflow", "2.18.0", hostile_cuda("12.5.1"))
                .framework_with(|f| f.cudnn_build = Some("9".into()))
                .env("LD_LIBRARY_PATH", &format!("{venv_lib}:/opt/x"))
                .cudnn(&format!("{venv_lib}/libcudnn.so.9.1.0"), CudnnKind::Library, "9.1.0", None),
        ),
        ("torch loads another cuDNN major", loaded(8907)),
        (
            "torch loads another cuDNN minor",
            loaded(90300).cudnn(&format!("{venv_lib}/libcudnn.so.9.3.0"), CudnnKind::Library, "9.3.0", None),
        ),
        (
            "torch and jax of two majors",
            hostile_rig()
                .torch("2.5.1+cu124")
                .framework("jax-cuda13-plugin", "0.7.2", hostile_cuda("13"))
                .framework("jax-cuda13-pjrt", "0.7.2", hostile_cuda("13"))
                .wheel("nvidia-cudnn-cu13", "9.13.0.50")
                .wheel("nvidia-cudnn-cu12", "9.1.0.70"),
        ),
        (
            "torch and cupy of two majors",
            hostile_rig().torch("2.5.1+cu124").framework("cupy-cuda13x", "14.0.0", hostile_cuda("13")),
        ),
        (
            "tensorflow and torch of two majors",
            hostile_rig()
                .framework("tensorflow", "2.18.0", hostile_cuda("12.5.1"))
                .wheel("nvidia-cudnn-cu12", "9.3.0.75")
                .torch("2.9.0+cu130"),
        ),
        (
            "duplicate wheels",
            // torch tells which set to keep: the plan removes the other.
            hostile_rig()
                .torch("2.5.1+cu124")
                .wheel("nvidia-cublas-cu12", "12.4.5.8")
                .wheel("nvidia-cublas-cu13", "13.0.0.19"),
        ),
        ("toolkits disagree, framework major", two_toolkits(hostile_rig().torch("2.0.1+cu118"))),
        ("toolkits disagree, newest", two_toolkits(hostile_rig())),
        (
            "stale library path",
            hostile_rig()
                .torch("2.9.0+cu130")
                .wheel("nvidia-cuda-runtime", "13.0.96")
                .wheel("nvidia-cudnn-cu13", "9.13.0.50")
                .env("LD_LIBRARY_PATH", &format!("{H}/tools/lib"))
                .toolkit(&c124, "12.4", &["LD_LIBRARY_PATH"]),
        ),
        (
            "extensions need another toolkit",
            hostile_rig()
                .driver("580.65.06", "13.0")
                .toolkit(&c124, "12.4", &["CUDA_HOME"])
                .toolkit(&format!("/usr/local/cuda-13.0{H}"), "13.0", &[])
                .torch("2.9.0+cu130"),
        ),
        (
            "a Linux driver inside WSL2",
            Machine::linux()
                .wsl(2, &["libcuda.so.1"])
                .gpu("NVIDIA GeForce RTX 4070", "8.9")
                .driver("555.97", "12.5")
                .toolkit("/usr/local/cuda-12.5", "12.5", &["PATH"])
                .loader_lib("libcuda.so.1", &format!("{H}/libcuda.so.1")),
        ),
        ("WSL1", wsl1),
        (
            "a cuDNN release that dropped the GPU",
            Machine::linux()
                .gpu("NVIDIA GeForce GTX 1080", "6.1")
                .env_prefix(&format!("{H}/.venv"))
                .torch("2.11.0+cu128")
                .wheel("nvidia-cudnn-cu12", "9.17.1.4"),
        ),
    ]
}

/// The text of a PowerShell line outside its single-quoted strings, in which nothing runs (a quote
/// character doubled is a quote inside one; PowerShell also reads U+2018 to U+201B as quotes).
pub fn outside_powershell_quotes(line: &str) -> String {
    const QUOTES: [char; 5] = ['\'', '\u{2018}', '\u{2019}', '\u{201a}', '\u{201b}'];
    let mut out = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if !QUOTES.contains(&c) {
            if !quoted {
                out.push(c);
            }
        } else if quoted && chars.peek().is_some_and(|n| QUOTES.contains(n)) {
            chars.next();
        } else {
            quoted = !quoted;
        }
    }
    out
}
