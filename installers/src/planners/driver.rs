//! Driver plans: install or change the NVIDIA driver, make an installed one load (nouveau, Secure
//! Boot, a module for another kernel), the Windows driver under WSL2, and authorizing a Thunderbolt
//! eGPU. Every command comes from `drivers.toml` (`Kb::drivers`); every step that needs root is a
//! [`StepKind::Root`](crate::StepKind::Root) gpu-doctor only shows, and what a person must do
//! (reboot, enroll a key, replug) is a manual step. No step of these plans is run by gpu-doctor.
//!
//! Root lines hold no text read from the machine: they are the table's templates filled with a
//! branch number, a module suffix, or a Thunderbolt router name checked to be a plain sysfs name.

use gpu_doctor_judge::diagnose::gpu_views;
use gpu_doctor_kb::{DistroRow, DriverTable, Install, Kb, ModuleFlavor};
use gpu_doctor_model::{ComputeCapability, DriverLoadProblem, PlanTarget, Report};
use gpu_doctor_model::{OsFamily, SecureBoot};

use crate::plan::{Plan, Step};

/// The plan for a driver target, or `None` for another kind of target or an OS without NVIDIA's
/// Linux or Windows driver (macOS).
pub(super) fn plan(report: &Report, kb: &Kb, target: &PlanTarget, finding_id: &str) -> Option<Plan> {
    let here = Here::of(report, kb)?;
    let (goal, steps) = match target {
        PlanTarget::Driver { min_branch } => here.driver(*min_branch),
        PlanTarget::DriverLoad { problem } => here.load(*problem)?,
        PlanTarget::Thunderbolt => here.thunderbolt()?,
        PlanTarget::FrameworkBuild { .. } | PlanTarget::Change { .. } => return None,
    };
    Some(Plan { id: String::new(), goal, answers: vec![finding_id.to_owned()], env: None, steps, choice: None })
}

/// What the driver plans read of the machine.
struct Here<'a> {
    report: &'a Report,
    kb: &'a Kb,
    table: &'a DriverTable,
    os: OsFamily,
    wsl: bool,
    distro: &'a DistroRow,
    /// The lowercase OS name (`ubuntu`).
    os_name: String,
    caps: Vec<ComputeCapability>,
}

type Goal = (String, Vec<Step>);

/// What the release's own package index changes about the install.
struct ArchivePick {
    /// The branch to install (`None`: the distribution's own newest package).
    branch: Option<u32>,
    /// With `branch` `None`: the one branch the distribution's own packages install.
    own: Option<u32>,
    /// The kernel module flavor on that branch.
    flavor: ModuleFlavor,
    /// What the index said, for the install step's why.
    said: Option<String>,
}

impl<'a> Here<'a> {
    fn of(report: &'a Report, kb: &'a Kb) -> Option<Self> {
        let s = &report.snapshot;
        let os = s.platform.platform.os;
        if !matches!(os, OsFamily::Linux | OsFamily::Windows) {
            return None;
        }
        let os_name = s.system.value().and_then(|v| v.os_name.as_deref()).unwrap_or_default().to_ascii_lowercase();
        let table = &kb.drivers;
        Some(Self {
            report,
            kb,
            table,
            os,
            wsl: s.platform.wsl.is_some(),
            distro: table.distro(&os_name),
            os_name,
            caps: gpu_views(s, kb).into_iter().filter_map(|g| g.cc).collect(),
        })
    }

    fn has_finding(&self, id: &str) -> bool {
        self.report.findings.iter().any(|f| f.id == id)
    }

    fn secure_boot(&self) -> bool {
        self.report.snapshot.secure_boot.value() == Some(&SecureBoot::Enabled)
    }

    /// Install (or update to) a driver of at least `min_branch`.
    fn driver(&self, min_branch: Option<u32>) -> Goal {
        if self.wsl {
            return self.wsl_driver(min_branch);
        }
        if self.os == OsFamily::Windows {
            let text = with_branch(&self.table.windows.install, min_branch);
            return ("NVIDIA's Windows driver drives this GPU".into(), vec![Step::manual(text, WINDOWS_WHY)]);
        }
        let legacy = DriverTable::legacy_branch(&self.kb.gpus, &self.caps);
        let mut steps = Vec::new();
        let branch = match (min_branch, legacy) {
            (Some(min), Some(last)) if min > last => {
                steps.push(Step::manual(
                    format!(
                        "No driver branch serves both: something here needs driver {min} or newer, and a GPU here \
                         is supported only up to R{last}. Installing R{last}; pick software that runs on it."
                    ),
                    "the GPU's last driver branch comes first: on a newer branch it has no driver at all",
                ));
                Some(last)
            }
            (_, Some(last)) => Some(last),
            (min, None) => min,
        };
        let flavor = match self.table.flavor(&self.kb.gpus, &self.caps, branch) {
            Ok(f) => f,
            Err(why) => {
                steps.push(Step::manual(
                    format!("Install one driver per GPU generation is impossible here: {why}. Keep the GPUs in separate machines, or install NVIDIA's proprietary driver for the older ones."),
                    "NVIDIA's open and proprietary kernel modules cannot be loaded together",
                ));
                return ("No single NVIDIA driver drives these GPUs".into(), steps);
            }
        };
        let is_legacy = legacy.is_some() && branch == legacy;
        let pick = self.archive_pick(branch, flavor, is_legacy);
        let flavor = pick.flavor;
        let goal = match pick.branch.or(pick.own) {
            Some(b) => format!("NVIDIA driver R{b} ({}) drives every GPU here", flavor_name(flavor)),
            None => format!("The newest NVIDIA driver ({}) drives every GPU here", flavor_name(flavor)),
        };
        steps.extend(self.install_steps(pick.branch, flavor, is_legacy, min_branch, pick.said.as_deref()));
        let enroll = self.secure_boot_steps();
        if enroll.is_empty() {
            steps.push(reboot("the new kernel module loads at boot"));
        }
        // Enrolling the key ends in a reboot of its own.
        steps.extend(enroll);
        (goal, steps)
    }

    /// The branch to install, read against the package index of the machine's own release where
    /// the knowledge base has it (`[[archive]]` in drivers.toml): on Ubuntu the lowest branch from
    /// `branch` up that a package of `flavor` installs as itself (older branches' packages there are
    /// transitional ones that install a newer branch, or are gone); on Debian its own package when
    /// its one branch is new enough. A legacy branch stays as it is.
    fn archive_pick(&self, branch: Option<u32>, flavor: ModuleFlavor, legacy: bool) -> ArchivePick {
        let keep = ArchivePick { branch, own: None, flavor, said: None };
        let Some(a) = self.table.archive(&self.distro.key, &self.os_name) else {
            return keep;
        };
        let name = format!("{} {}", self.distro.label, a.release);
        let index = format!("{name}'s own package index, read {}", a.read);
        let module = |f: ModuleFlavor| if f == ModuleFlavor::Open { " with the open kernel module" } else { "" };
        match (self.distro.key.as_str(), branch) {
            ("debian", b) if !legacy => {
                // The release's one branch, and the module GPUs here need on it.
                let Some(v) = a.proprietary.iter().map(|(_, i)| *i).max() else {
                    return ArchivePick { said: Some(format!("{name} has no driver package ({index})")), ..keep };
                };
                let f = self.table.flavor(&self.kb.gpus, &self.caps, Some(v)).unwrap_or(flavor);
                if b.is_some_and(|b| b > v) {
                    let said = format!(
                        "{name}'s own driver packages are R{v} ({index}), older than needed: this branch comes from \
                         NVIDIA's repository"
                    );
                    return ArchivePick { said: Some(said), ..keep };
                }
                if a.installs(v, f) != Some(v) {
                    let said = format!("{name}'s own R{v} has no package{} ({index})", module(f));
                    return ArchivePick { said: Some(said), ..keep };
                }
                let said = format!("{name}'s own driver packages{} are R{v} ({index})", module(f));
                ArchivePick { branch: None, own: Some(v), flavor: f, said: Some(said) }
            }
            ("ubuntu", Some(b)) => {
                let open = if flavor == ModuleFlavor::Open { self.distro.open_suffix.as_str() } else { "" };
                let module = module(flavor);
                let package = format!("nvidia-driver-{b}{open}");
                let there = match a.installs(b, flavor) {
                    Some(i) if i == b => return keep,
                    Some(i) => format!("{package} there is a transitional package that installs R{i}"),
                    None => format!("it has no {package}"),
                };
                if legacy {
                    return ArchivePick { said: Some(format!("{index}: {there}")), ..keep };
                }
                match a.branch_from(b, flavor) {
                    Some(p) => ArchivePick {
                        branch: Some(p),
                        own: None,
                        // The module the GPUs need on the branch it became, where the release packages it.
                        flavor: self
                            .table
                            .flavor(&self.kb.gpus, &self.caps, Some(p))
                            .ok()
                            .filter(|f| a.installs(p, *f) == Some(p))
                            .unwrap_or(flavor),
                        said: Some(format!(
                            "R{p} is the lowest branch from R{b} up that {name} packages{module} ({index}): {there}"
                        )),
                    },
                    None => ArchivePick {
                        said: Some(format!("{name} packages no branch from R{b} up{module} ({index}): {there}")),
                        ..keep
                    },
                }
            }
            _ => keep,
        }
    }

    /// The root steps that install `branch` (or the newest) with `flavor`, with the headers DKMS needs
    /// for the running kernel, and the distribution's manual steps around them.
    fn install_steps(
        &self,
        branch: Option<u32>,
        flavor: ModuleFlavor,
        legacy: bool,
        min: Option<u32>,
        archive: Option<&str>,
    ) -> Vec<Step> {
        let d = self.distro;
        let mut steps = Vec::new();
        if let Some(note) = d.setup_note(branch) {
            steps.push(Step::manual(note, format!("{}'s driver packages come from this repository", d.label)));
        }
        for line in &d.setup {
            steps.push(Step::root(
                line.clone(),
                format!("{}'s NVIDIA driver packages are in this repository", d.label),
                "adds a package repository",
                d.setup_undo.clone().unwrap_or_else(|| "remove the repository again".into()),
            ));
        }
        steps.extend(
            self.headers_step("the kernel module is built (DKMS, akmods) for the running kernel from its headers"),
        );
        let mut why = install_why(branch, flavor, legacy, min);
        if let Some(said) = archive {
            why.push_str(&format!(". {said}"));
        }
        if self.caps.is_empty() && flavor == ModuleFlavor::Open {
            why.push_str(
                ". No driver answered, so the GPU's generation is not known here: for a GPU older than Turing \
                 (GeForce GTX 10 series and older) install the proprietary driver instead",
            );
            // gpus.toml maps product names, not PCI ids: the id the bus gives is named for a look-up.
            let ids: Vec<String> = self
                .report
                .snapshot
                .pci_devices
                .value()
                .map(|d| d.iter().map(|d| format!("{:04x}", d.device_id)).collect())
                .unwrap_or_default();
            if !ids.is_empty() {
                let links: Vec<String> = ids
                    .iter()
                    .map(|id| format!("PCI device 0x{id}: https://pci-ids.ucw.cz/read/PC/10de/{id}"))
                    .collect();
                why.push_str(&format!(
                    " (the bus names the GPU by its id only, which tells its chip: {})",
                    links.join(", ")
                ));
            }
        }
        if let Some(alt) = branch.and_then(|b| d.alternative(b, flavor, legacy)) {
            why.push_str(&format!(" (the same as: {alt})"));
        }
        let undo = d.remove.clone().unwrap_or_else(|| "remove the driver packages with your package manager".into());
        steps.push(match d.install(branch, flavor, legacy) {
            Install::Root(line) => Step::root(line, why, "installs the NVIDIA driver and its kernel module", undo),
            Install::Manual(text) => Step::manual(text, why),
        });
        if let Some(after) = &d.after_install {
            steps.push(Step::manual(after.clone(), "the module is built after the packages are installed"));
        }
        steps
    }

    /// The root step that installs the running kernel's headers (`why` says what needs them), when the
    /// family has a package for them.
    fn headers_step(&self, why: &str) -> Option<Step> {
        self.distro.headers.as_ref().map(|h| {
            Step::root(
                h.clone(),
                why,
                "installs the running kernel's headers",
                "remove the headers package again (harmless to keep)",
            )
        })
    }

    /// Enrolling the key the locally built module is signed with, when Secure Boot is on.
    fn secure_boot_steps(&self) -> Vec<Step> {
        if !self.secure_boot() {
            return Vec::new();
        }
        self.enroll_key_steps(
            "Secure Boot is on: the kernel loads only modules signed by a key it trusts, and locally built \
             modules are signed with this one (choose a one-time password; skip this if the install already \
             asked for one)",
        )
    }

    /// Queue this distribution's module signing key for enrollment (`why` says why), and enroll it at
    /// the next boot.
    fn enroll_key_steps(&self, why: &str) -> Vec<Step> {
        let key = &self.distro.module_key;
        let sb = &self.table.secure_boot;
        vec![
            Step::root(
                sb.import.replace("{key}", key),
                why,
                "queues the module signing key for enrollment in the machine owner key list",
                sb.undo.replace("{key}", key),
            ),
            Step::manual(sb.manual.clone(), "the key is enrolled only at boot, by a person at the console"),
        ]
    }

    /// Under WSL2: the Windows driver only, and any Linux driver inside WSL removed.
    fn wsl_driver(&self, min_branch: Option<u32>) -> Goal {
        let w = &self.table.wsl;
        let mut steps = Vec::new();
        if self.has_finding("wsl.linux_driver_installed") {
            let remove = w.remove(&self.os_name);
            steps.push(Step::root(
                format!("{remove} && sudo ldconfig"),
                "a Linux NVIDIA driver inside WSL2 shadows the Windows driver's libcuda in /usr/lib/wsl/lib; CUDA \
                 then reports no device or a driver mismatch",
                "removes the Linux NVIDIA driver packages inside this WSL distribution",
                "none wanted: WSL2 never needs a Linux driver",
            ));
        }
        steps.push(Step::manual(
            with_branch(&w.windows_driver, min_branch),
            "WSL2 reaches the GPU through the Windows driver, which maps its libraries into /usr/lib/wsl/lib",
        ));
        steps.push(Step::manual(
            "Restart WSL from Windows (wsl --shutdown in PowerShell), then open the distribution again.",
            "WSL maps the Windows driver in when it starts",
        ));
        ("WSL2 uses the Windows NVIDIA driver, with no Linux driver inside".into(), steps)
    }

    /// Make the installed driver load.
    fn load(&self, problem: DriverLoadProblem) -> Option<Goal> {
        if self.os != OsFamily::Linux || self.wsl {
            return None;
        }
        let d = self.distro;
        let mut steps = Vec::new();
        let goal = match problem {
            DriverLoadProblem::Nouveau => {
                let n = &self.table.nouveau;
                steps.push(Step::root(
                    n.blacklist.clone(),
                    "nouveau and NVIDIA's module cannot both drive the card; this keeps nouveau from loading",
                    "writes /etc/modprobe.d/blacklist-nouveau.conf",
                    format!("{} && {}", n.undo, d.initramfs),
                ));
                steps.push(Step::root(
                    d.initramfs.clone(),
                    "nouveau is loaded from the initramfs at boot; rebuilt, it leaves nouveau out",
                    "rebuilds the initramfs of the installed kernels",
                    format!("run {} again after undoing the blacklist", d.initramfs),
                ));
                let installed = self.report.snapshot.kernel_module.value().is_some_and(|m| m.installed.is_some());
                if !installed {
                    let legacy = DriverTable::legacy_branch(&self.kb.gpus, &self.caps);
                    let flavor = self.table.flavor(&self.kb.gpus, &self.caps, legacy).unwrap_or(ModuleFlavor::Open);
                    let pick = self.archive_pick(legacy, flavor, legacy.is_some());
                    let (branch, said) = (pick.branch, pick.said.as_deref());
                    steps.extend(self.install_steps(branch, pick.flavor, legacy.is_some(), None, said));
                    steps.extend(self.secure_boot_steps());
                }
                steps.push(reboot("the initramfs without nouveau is used from the next boot"));
                "nouveau no longer holds the GPU and NVIDIA's driver does"
            }
            DriverLoadProblem::SecureBootUnsigned => {
                steps.extend(self.enroll_key_steps(
                    "Secure Boot loads only modules signed by a key it trusts: enroll the key locally built modules \
                     are signed with (choose a one-time password). Or install your distribution's signed driver \
                     packages instead",
                ));
                steps.push(Step::root(
                    d.sign_rebuild.clone(),
                    "rebuilds the module signed with the enrolled key",
                    "rebuilds the NVIDIA kernel module",
                    "nothing to undo: the same module, signed",
                ));
                steps.push(modprobe());
                "The NVIDIA module is signed with an enrolled key and loads under Secure Boot"
            }
            DriverLoadProblem::ModuleForOtherKernel => {
                let headers =
                    self.headers_step("the module is built for the running kernel from its headers, which are missing");
                steps.push(headers.unwrap_or_else(|| {
                    Step::manual(
                        "Install the kernel headers of the running kernel (uname -r names it) with your package manager.",
                        "the module is built for the running kernel from its headers",
                    )
                }));
                steps.push(Step::root(
                    d.rebuild_module.clone(),
                    "builds the NVIDIA module for the running kernel (it was built for another one)",
                    "adds the NVIDIA module for the running kernel",
                    "nothing to undo: the module of the installed driver, for this kernel",
                ));
                steps.extend(self.secure_boot_steps());
                steps.push(modprobe());
                "The NVIDIA module is built for the running kernel and loaded"
            }
        };
        Some((goal.into(), steps))
    }

    /// Authorize the Thunderbolt enclosure the GPU is behind.
    fn thunderbolt(&self) -> Option<Goal> {
        if self.os != OsFamily::Linux {
            return None;
        }
        let links = self.report.snapshot.links.value()?;
        let egpu = links.iter().filter_map(|l| l.egpu.as_ref()).find(|e| e.authorized == Some(false))?;
        let name = egpu.device_name.clone().unwrap_or_else(|| "the enclosure".into());
        let t = &self.table.thunderbolt;
        let mut steps = Vec::new();
        match egpu.router.as_deref().filter(|r| plain_sysfs_name(r)) {
            Some(router) => steps.push(Step::root(
                t.enroll.replace("{router}", router),
                format!(
                    "{} is not authorized, so no PCIe is tunnelled to the GPU in it; enrolling authorizes it now and \
                     whenever it is plugged in",
                    quoted_name(&name)
                ),
                "adds the device to boltd's list of trusted devices",
                t.forget.replace("{router}", router),
            )),
            None => steps.push(Step::manual(
                "boltctl list names the enclosure and its uuid; authorize it with: sudo boltctl enroll --policy auto \
                 followed by that uuid",
                "an unauthorized Thunderbolt device gets no PCIe tunnel",
            )),
        }
        steps.push(Step::manual(
            "Unplug the enclosure and plug it in again (or reboot); the GPU then appears on the PCIe bus.",
            "the PCIe tunnel is set up when the device is connected",
        ));
        Some(("The eGPU enclosure is authorized and its GPU reachable".into(), steps))
    }
}

const WINDOWS_WHY: &str = "NVIDIA's Windows driver comes from its installer, not a package manager";

/// A template with `{branch} or newer ` filled, or left out when no branch is asked for.
fn with_branch(template: &str, branch: Option<u32>) -> String {
    match branch {
        Some(b) => template.replace("{branch}", &b.to_string()),
        None => template.replace("{branch} or newer ", ""),
    }
}

fn flavor_name(f: ModuleFlavor) -> &'static str {
    match f {
        ModuleFlavor::Open => "open kernel module",
        ModuleFlavor::Proprietary => "proprietary kernel module",
    }
}

fn install_why(branch: Option<u32>, flavor: ModuleFlavor, legacy: bool, min: Option<u32>) -> String {
    let what = match (branch, legacy, min) {
        (Some(b), true, _) => format!(
            "R{b} is the last driver branch that supports a GPU here: stay on it, newer branches do not drive it"
        ),
        (Some(b), false, Some(_)) => format!("software here needs driver {b} or newer"),
        (Some(b), false, None) => format!("driver branch {b}"),
        (None, _, _) => "the newest driver for this GPU".to_owned(),
    };
    let module = match flavor {
        ModuleFlavor::Open => {
            "the open kernel module: Turing and newer use it (NVIDIA's default since R560), Blackwell needs it"
        }
        ModuleFlavor::Proprietary => {
            "the proprietary kernel module: Maxwell, Pascal and Volta are not supported by the open one"
        }
    };
    format!("{what}; {module}")
}

fn reboot(why: &str) -> Step {
    Step::manual("Reboot.", why)
}

fn modprobe() -> Step {
    Step::root(
        "sudo modprobe nvidia",
        "loads the module now (or reboot)",
        "loads the NVIDIA kernel module",
        "sudo modprobe -r nvidia",
    )
}

/// A Thunderbolt router's sysfs name (`0-1`, `1-3.1`): digits, dots and dashes only, so it can stand
/// in a root line unquoted.
fn plain_sysfs_name(s: &str) -> bool {
    !s.is_empty() && s.len() <= 32 && s.chars().all(|c| c.is_ascii_digit() || c == '-' || c == '.' || c == ':')
}

/// A device name from the machine, for prose: quoted, control characters dropped.
fn quoted_name(s: &str) -> String {
    let clean: String = s.chars().filter(|c| !c.is_control()).take(80).collect();
    format!("\"{clean}\"")
}

#[cfg(test)]
mod tests;
