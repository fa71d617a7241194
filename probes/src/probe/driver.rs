//! The NVIDIA driver: NVML → `/proc/driver/nvidia/version` → `nvidia-smi -q -x`; and on Linux the
//! kernel module (loaded, nouveau, built for the running kernel) and Secure Boot.

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use crate::host::{Cmd, Host, HostError, NvmlReport, which};
use crate::parse::smi::SmiReport;
use crate::parse::smi_xml;
use gpu_doctor_kb::Kb;
use gpu_doctor_model::{CudaVersion, DriverVersion, Probed, Trace};
use gpu_doctor_model::{DriverFacts, InstalledModule, KernelModuleFacts, OsFamily, SecureBoot};

/// `nvidia-smi -q -x`, run at most once per snapshot and shared by the driver and GPU probes.
#[derive(Debug, Default)]
pub struct SmiXml(OnceLock<Result<SmiReport, String>>);

impl SmiXml {
    /// The parsed output, or why there is none; the first call runs nvidia-smi and traces it.
    pub fn get(&self, host: &dyn Host, trace: &mut Trace) -> Result<&SmiReport, String> {
        let mut first = false;
        let answer = self.0.get_or_init(|| {
            first = true;
            run_smi_xml(host)
        });
        if first {
            match answer {
                Ok(r) => trace.ok("nvidia-smi -q -x", format!("{} GPU(s)", r.gpus.len())),
                Err(e) if e.contains("not found") => trace.miss("nvidia-smi -q -x", e.clone()),
                Err(e) => trace.error("nvidia-smi -q -x", e.clone()),
            }
        }
        answer.as_ref().map_err(Clone::clone)
    }
}

pub(crate) fn smi_program(host: &dyn Host) -> Option<std::path::PathBuf> {
    let fallbacks: &[&str] = match host.platform().os {
        OsFamily::Windows => {
            &["C:/Windows/System32/nvidia-smi.exe", "C:/Program Files/NVIDIA Corporation/NVSMI/nvidia-smi.exe"]
        }
        _ => &["/usr/bin/nvidia-smi", "/usr/lib/wsl/lib/nvidia-smi"],
    };
    which(host, "nvidia-smi")
        .or_else(|| fallbacks.iter().map(Path::new).find(|p| host.file_kind(p).is_some()).map(Path::to_path_buf))
}

fn run_smi_xml(host: &dyn Host) -> Result<SmiReport, String> {
    let program = smi_program(host).ok_or_else(|| "nvidia-smi not found on PATH".to_owned())?;
    let cmd =
        Cmd::new([program.to_string_lossy().into_owned(), "-q".into(), "-x".into()]).timeout(Duration::from_secs(15));
    let out = host.run(&cmd).map_err(|e| e.to_string())?;
    if !out.success() {
        let said = if out.stdout.trim().is_empty() { out.stderr.trim() } else { out.stdout.trim() };
        return Err(format!("nvidia-smi failed (exit {:?}): {said}", out.status));
    }
    smi_xml::parse(&out.stdout).map_err(|e| e.to_string())
}

/// Finds the driver version through NVML, then `/proc/driver/nvidia/version`, then nvidia-smi; a
/// CUDA level none of them reported is looked up from the version in the knowledge base.
pub fn probe(
    host: &dyn Host,
    nvml: &Result<NvmlReport, HostError>,
    smi: &SmiXml,
    trace: &mut Trace,
) -> Probed<DriverFacts> {
    let found = find(host, nvml, smi, trace);
    let Ok(kb) = Kb::get() else { return found };
    found.map(|mut d| {
        kb.derive_cuda_version(&mut d, host.platform().os);
        if let Some(cuda) = d.cuda_version.filter(|_| d.cuda_version_derived) {
            trace.ok("cuda.toml", format!("driver {} supports CUDA up to {cuda}", d.version));
        }
        d
    })
}

/// The driver as the first source that answers reports it.
fn find(host: &dyn Host, nvml: &Result<NvmlReport, HostError>, smi: &SmiXml, trace: &mut Trace) -> Probed<DriverFacts> {
    if host.platform().os == OsFamily::Macos {
        trace.miss("platform", "macOS has no NVIDIA CUDA driver");
        return Probed::Unsupported {
            reason: "NVIDIA stopped CUDA support on macOS; there is no driver to find".into(),
        };
    }
    let mut why_not = Vec::new();
    match nvml {
        Ok(report) => {
            let version = report.driver_version.as_deref().and_then(|v| v.parse::<DriverVersion>().ok());
            let cuda_version = report.cuda_driver_version.and_then(CudaVersion::from_api_int);
            if let Some(version) = version {
                trace.ok(
                    "nvml",
                    format!("driver {version}, CUDA {}", cuda_version.map_or("?".into(), |c| c.to_string())),
                );
                return Probed::found(
                    DriverFacts::reported(version, cuda_version, report.nvml_version.clone()),
                    "nvml",
                );
            }
            trace.error("nvml", "NVML answered without a driver version");
            why_not.push("NVML gave no driver version".to_owned());
        }
        Err(e) => {
            trace.miss("nvml", e.to_string());
            why_not.push(e.to_string());
        }
    }
    if host.platform().os == OsFamily::Linux {
        let path = Path::new("/proc/driver/nvidia/version");
        match host.read_file(path) {
            Ok(text) => match parse_proc_version(&text) {
                Some(version) => {
                    trace.ok("read /proc/driver/nvidia/version", format!("driver {version}"));
                    // /proc knows no CUDA level; nvidia-smi may add it.
                    let cuda_version = smi.get(host, trace).ok().and_then(|r| r.cuda_version);
                    return Probed::found(
                        DriverFacts::reported(version, cuda_version, None),
                        "/proc/driver/nvidia/version",
                    );
                }
                None => {
                    trace.error("read /proc/driver/nvidia/version", "no version in it");
                    why_not.push("/proc/driver/nvidia/version has no version".into());
                }
            },
            Err(e) => {
                trace.miss("read /proc/driver/nvidia/version", e.to_string());
                why_not
                    .push("/proc/driver/nvidia/version does not exist (the nvidia kernel module is not loaded)".into());
            }
        }
    }
    match smi.get(host, trace) {
        Ok(r) => match r.driver_version.clone() {
            Some(version) => {
                return Probed::found(DriverFacts::reported(version, r.cuda_version, None), "nvidia-smi -q -x");
            }
            None => why_not.push("nvidia-smi printed no driver version".into()),
        },
        Err(e) => why_not.push(e),
    }
    Probed::absent(format!("no NVIDIA driver answered: {}", why_not.join("; ")))
}

/// Reads the version from `/proc/driver/nvidia/version`, e.g.
/// `NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.86.05  Fri Jul 14 …` or
/// `NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release Build …`.
pub fn parse_proc_version(text: &str) -> Option<DriverVersion> {
    let line = text.lines().find(|l| l.starts_with("NVRM version:"))?;
    line.split_whitespace().find_map(|word| word.parse::<DriverVersion>().ok().filter(|v| v.major() >= 100))
}

/// The kernel module state (Linux only).
pub fn probe_kernel_module(host: &dyn Host, trace: &mut Trace) -> Probed<KernelModuleFacts> {
    if host.platform().os != OsFamily::Linux {
        return Probed::Unsupported { reason: "kernel modules are a Linux matter".into() };
    }
    let modules = match host.read_file(Path::new("/proc/modules")) {
        Ok(text) => {
            trace.ok("read /proc/modules", "read");
            text
        }
        Err(e) => {
            trace.error("read /proc/modules", e.to_string());
            return Probed::Failed { error: format!("could not read the loaded modules: {e}") };
        }
    };
    let loaded = |name: &str| modules.lines().any(|l| l.split_whitespace().next() == Some(name));
    let nvidia_loaded = loaded("nvidia");
    let nouveau_loaded = loaded("nouveau");
    let loaded_version = host.read_file(Path::new("/sys/module/nvidia/version")).ok().map(|v| v.trim().to_owned());
    let open_kernel_module =
        host.read_file(Path::new("/proc/driver/nvidia/version")).ok().map(|t| t.contains("Open Kernel Module"));
    let running_kernel = host
        .read_file(Path::new("/proc/sys/kernel/osrelease"))
        .ok()
        .map(|v| v.trim().to_owned())
        .or_else(|| host.system_info().kernel_version);
    let (installed, installed_note) = match modinfo(host) {
        Ok(m) => (Some(m), None),
        Err(note) => (None, Some(note)),
    };
    trace.ok(
        "modules",
        format!(
            "nvidia {}, nouveau {}, modinfo: {}",
            if nvidia_loaded { "loaded" } else { "not loaded" },
            if nouveau_loaded { "loaded" } else { "not loaded" },
            installed.as_ref().map_or_else(|| installed_note.clone().unwrap_or_default(), |m| m.filename.clone())
        ),
    );
    Probed::found(
        KernelModuleFacts {
            nvidia_loaded,
            nouveau_loaded,
            loaded_version,
            open_kernel_module,
            running_kernel,
            installed,
            installed_note,
        },
        "/proc/modules",
    )
}

fn modinfo(host: &dyn Host) -> Result<InstalledModule, String> {
    let program = which(host, "modinfo")
        .or_else(|| {
            ["/sbin/modinfo", "/usr/sbin/modinfo"]
                .iter()
                .map(Path::new)
                .find(|p| host.file_kind(p).is_some())
                .map(Path::to_path_buf)
        })
        .ok_or_else(|| "modinfo not found".to_owned())?;
    let cmd = Cmd::new([program.to_string_lossy().into_owned(), "nvidia".into()]).timeout(Duration::from_secs(5));
    let out = host.run(&cmd).map_err(|e| format!("modinfo failed: {e}"))?;
    if !out.success() {
        // e.g. "modinfo: ERROR: Module nvidia not found."
        return Err(format!("no nvidia module is installed for the running kernel ({})", out.stderr.trim()));
    }
    parse_modinfo(&out.stdout).ok_or_else(|| "modinfo printed no filename".to_owned())
}

/// Reads `modinfo nvidia` output.
pub fn parse_modinfo(text: &str) -> Option<InstalledModule> {
    let field = |name: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == name).then(|| v.trim().to_owned()).filter(|v| !v.is_empty())
        })
    };
    Some(InstalledModule {
        filename: field("filename")?,
        version: field("version"),
        built_for_kernel: field("vermagic").and_then(|v| v.split_whitespace().next().map(str::to_owned)),
        signer: field("signer"),
    })
}

/// Secure Boot state, where `mokutil` exists.
pub fn probe_secure_boot(host: &dyn Host, trace: &mut Trace) -> Probed<SecureBoot> {
    if host.platform().os != OsFamily::Linux {
        return Probed::Unsupported { reason: "checked on Linux only".into() };
    }
    let Some(program) = which(host, "mokutil") else {
        trace.miss("mokutil --sb-state", "mokutil not found");
        return Probed::absent("mokutil is not installed, so the Secure Boot state was not checked");
    };
    let cmd = Cmd::new([program.to_string_lossy().into_owned(), "--sb-state".into()]).timeout(Duration::from_secs(5));
    match host.run(&cmd) {
        Ok(out) => {
            let text = format!("{}\n{}", out.stdout, out.stderr);
            match parse_sb_state(&text) {
                Some(state) => {
                    trace.ok("mokutil --sb-state", format!("{state:?}"));
                    Probed::found(state, "mokutil --sb-state")
                }
                None => {
                    trace.error("mokutil --sb-state", text.clone());
                    Probed::Failed { error: format!("mokutil said: {}", text.trim()) }
                }
            }
        }
        Err(e) => {
            trace.error("mokutil --sb-state", e.to_string());
            Probed::Failed { error: e.to_string() }
        }
    }
}

/// Reads `mokutil --sb-state` output.
pub fn parse_sb_state(text: &str) -> Option<SecureBoot> {
    let t = text.to_ascii_lowercase();
    if t.contains("secureboot enabled") {
        Some(SecureBoot::Enabled)
    } else if t.contains("secureboot disabled") {
        Some(SecureBoot::Disabled)
    } else if t.contains("efi variables are not supported") {
        Some(SecureBoot::NotEfi)
    } else {
        None
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn proc_version_proprietary_and_open_modules() {
        let prop = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.86.05  Fri Jul 14 20:20:58 UTC 2023\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n";
        assert_eq!(parse_proc_version(prop).unwrap().as_str(), "535.86.05");
        let open = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release Build  (dvs-builder@U16-I3-B03-4-3)  Thu Feb 22 01:25:25 UTC 2024\n";
        assert_eq!(parse_proc_version(open).unwrap().as_str(), "550.54.14");
        let aarch = "NVRM version: NVIDIA UNIX aarch64 Kernel Module  570.124.04  Fri Feb 21 2025";
        assert_eq!(parse_proc_version(aarch).unwrap().as_str(), "570.124.04");
        for bad in ["", "NVRM version:", "GCC version: 12.2", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  garbage"]
        {
            assert_eq!(parse_proc_version(bad), None, "{bad}");
        }
    }

    /// A Linux machine whose only word on the driver is `/proc/driver/nvidia/version`.
    fn proc_only(os: OsFamily, version: &str) -> Probed<DriverFacts> {
        use crate::host::{Fixture, NvmlAnswer, ReplayHost};
        use gpu_doctor_model::Platform;
        let mut f = Fixture::new(Platform { os, arch: "x86_64".into() });
        let line = format!("NVRM version: NVIDIA UNIX x86_64 Kernel Module  {version}  Fri Jul 14 2023\n");
        f.files.insert("/proc/driver/nvidia/version".into(), line);
        f.nvml = NvmlAnswer::Error("libnvidia-ml.so.1: cannot open shared object file".into());
        let host = ReplayHost::new(f);
        probe(&host, &host.nvml(), &SmiXml::default(), &mut Trace::new("driver"))
    }

    #[test]
    fn a_driver_found_through_proc_gets_its_cuda_level_from_the_knowledge_base() {
        let found = proc_only(OsFamily::Linux, "535.86.05");
        assert!(matches!(&found, Probed::Found { source, .. } if source == "/proc/driver/nvidia/version"), "{found:?}");
        let d = found.value().unwrap();
        assert_eq!((d.cuda_version, d.cuda_version_derived), (Some(CudaVersion::new(12, 2)), true));
        // The flag is written only when set, so snapshots of drivers that report their level keep their shape.
        let json = serde_json::to_value(d).unwrap();
        assert_eq!(json["cuda_version"], "12.2");
        assert_eq!(json["cuda_version_derived"], true);
        let mut reported = d.clone();
        reported.cuda_version_derived = false;
        assert!(serde_json::to_value(&reported).unwrap().get("cuda_version_derived").is_none());
        // A driver older than every release in the table has no level to derive.
        let ancient = proc_only(OsFamily::Linux, "340.108");
        assert_eq!(ancient.value().map(|d| (d.cuda_version, d.cuda_version_derived)), Some((None, false)));
    }

    #[test]
    fn modinfo_fields() {
        let text = "filename:       /lib/modules/6.1.0-18-amd64/updates/dkms/nvidia.ko\nversion:        535.161.07\nlicense:        NVIDIA\nvermagic:       6.1.0-18-amd64 SMP preempt mod_unload modversions \nsigner:         DKMS module signing key\n";
        let m = parse_modinfo(text).unwrap();
        assert_eq!(m.built_for_kernel.as_deref(), Some("6.1.0-18-amd64"));
        assert_eq!(m.version.as_deref(), Some("535.161.07"));
        assert_eq!(m.signer.as_deref(), Some("DKMS module signing key"));
        assert_eq!(parse_modinfo("modinfo: ERROR: Module nvidia not found."), None);
        assert_eq!(parse_modinfo(""), None);
    }

    #[test]
    fn secure_boot_states() {
        assert_eq!(parse_sb_state("SecureBoot enabled\n"), Some(SecureBoot::Enabled));
        assert_eq!(parse_sb_state("SecureBoot disabled\nPlatform is in Setup Mode"), Some(SecureBoot::Disabled));
        assert_eq!(parse_sb_state("EFI variables are not supported on this system"), Some(SecureBoot::NotEfi));
        assert_eq!(parse_sb_state("segfault"), None);
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,400}", bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..400)) {
            let lossy = String::from_utf8_lossy(&bytes);
            for t in [text.as_str(), &lossy] {
                let _ = parse_proc_version(t);
                let _ = parse_modinfo(t);
                let _ = parse_sb_state(t);
                let _ = parse_proc_version(&format!("NVRM version: {t}"));
                let _ = parse_modinfo(&format!("filename: {t}\nvermagic: {t}"));
            }
        }
    }
}
