//! `drivers.toml`: how each Linux distribution family installs, rebuilds and signs the NVIDIA driver,
//! and which kernel module flavor (open or proprietary) a set of GPUs needs.

use serde::Deserialize;

use super::{GpuTable, Tag};
use gpu_doctor_model::ComputeCapability;

/// The whole of `drivers.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriverTable {
    /// Kernel module flavors by GPU generation and branch.
    pub modules: ModuleRules,
    /// Blacklisting nouveau.
    pub nouveau: NouveauRow,
    /// Enrolling the module signing key under Secure Boot.
    pub secure_boot: SecureBootRow,
    /// WSL2: the Windows driver only.
    pub wsl: WslRow,
    /// Native Windows.
    pub windows: WindowsRow,
    /// Authorizing a Thunderbolt device.
    pub thunderbolt: ThunderboltRow,
    /// Distribution families, in the order they are tried; the last, with no names, matches any.
    pub distro: Vec<DistroRow>,
    /// What each release's own package index holds (scripts/kb-refresh reads them).
    #[serde(default)]
    pub archive: Vec<ArchiveRow>,
}

/// `[[archive]]`: the driver packages one release of a distribution has, as its package index
/// said on the day it was read.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchiveRow {
    /// The family's `key` (`ubuntu`, `debian`).
    pub distro: String,
    /// The release's version (`24.04`, `13`).
    pub release: String,
    /// Its code name (`noble`, `trixie`).
    pub codename: String,
    /// Each proprietary driver package's branch and the branch it installs (a transitional package
    /// installs a newer one: `(550, 580)`).
    pub proprietary: Vec<(u32, u32)>,
    /// The same for the open kernel module's packages.
    pub open: Vec<(u32, u32)>,
    /// The day the index was read (`2026-11-28`).
    pub read: String,
    /// The index files read.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
}

impl ArchiveRow {
    /// The packages of `flavor`.
    pub fn packages(&self, flavor: ModuleFlavor) -> &[(u32, u32)] {
        match flavor {
            ModuleFlavor::Open => &self.open,
            ModuleFlavor::Proprietary => &self.proprietary,
        }
    }

    /// The lowest branch of at least `min` that a package of `flavor` installs as itself (not a
    /// transitional package), or `None` when the release has none.
    pub fn branch_from(&self, min: u32, flavor: ModuleFlavor) -> Option<u32> {
        self.packages(flavor).iter().filter(|(p, i)| p == i && *p >= min).map(|(p, _)| *p).min()
    }

    /// The branch the package of `branch` and `flavor` really installs; `None` when there is none.
    pub fn installs(&self, branch: u32, flavor: ModuleFlavor) -> Option<u32> {
        self.packages(flavor).iter().find(|(p, _)| *p == branch).map(|(_, i)| *i)
    }
}

/// Which kernel module flavor a GPU generation needs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModuleRules {
    /// The first branch with open modules (515).
    pub open_first_branch: u32,
    /// The first branch that installs the open modules by default (560).
    pub open_default_from_branch: u32,
    /// From this capability on, only the open modules support the GPU (Blackwell, 10.0).
    pub open_required_from_cc: ComputeCapability,
    /// URL the rules were read in.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
}

/// `[nouveau]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NouveauRow {
    /// The root line that blacklists it.
    pub blacklist: String,
    /// The root line that removes the blacklist again.
    pub undo: String,
    /// URL the row was read in.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
}

/// `[secure_boot]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecureBootRow {
    /// `sudo mokutil --import {key}`.
    pub import: String,
    /// `sudo mokutil --delete {key}`.
    pub undo: String,
    /// What to do in the MOK manager at the next boot.
    pub manual: String,
    /// URL the row was read in.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
}

/// `[wsl]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WslRow {
    /// What to install on the Windows side (`{branch}`).
    pub windows_driver: String,
    /// Removing a Linux driver installed inside WSL with apt.
    pub remove_apt: String,
    /// The same with dnf.
    pub remove_dnf: String,
    /// URL the row was read in.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
}

impl WslRow {
    /// The line that removes a Linux driver inside WSL for a lowercase OS name: dnf on Fedora, else apt.
    pub fn remove(&self, os_name: &str) -> &str {
        if os_name.contains("fedora") { &self.remove_dnf } else { &self.remove_apt }
    }
}

/// `[windows]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WindowsRow {
    /// What to install (`{branch}`).
    pub install: String,
    /// URL the row was read in.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
}

/// `[thunderbolt]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThunderboltRow {
    /// The root line that authorizes and remembers the device at `{router}`.
    pub enroll: String,
    /// The root line that forgets it.
    pub forget: String,
    /// URL the row was read in.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
}

/// One distribution family. Install templates hold `{branch}` and `{open}`; one left out means the
/// family has no package for that case.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DistroRow {
    /// Short key, e.g. `ubuntu`.
    pub key: String,
    /// Name shown in plans.
    pub label: String,
    /// Lowercase pieces of the OS name that select this family; empty for the catch-all last row.
    pub names: Vec<String>,
    /// What `{open}` becomes when the open module is chosen.
    pub open_suffix: String,
    /// Root lines that add the package repository first.
    #[serde(default)]
    pub setup: Vec<String>,
    /// The root line that removes what `setup` added.
    #[serde(default)]
    pub setup_undo: Option<String>,
    /// A manual step before installing the newest driver (enable a component).
    #[serde(default)]
    pub latest_setup: Option<String>,
    /// A manual step before installing a chosen branch (add NVIDIA's repository).
    #[serde(default)]
    pub branch_setup: Option<String>,
    /// The newest driver, the distribution's choice of module.
    #[serde(default)]
    pub install_latest: Option<String>,
    /// The newest driver with the open module, where it is another package.
    #[serde(default)]
    pub install_latest_open: Option<String>,
    /// The newest driver with the proprietary module, where it is another package.
    #[serde(default)]
    pub install_latest_proprietary: Option<String>,
    /// A chosen branch (`{branch}`, `{open}`).
    #[serde(default)]
    pub install_branch: Option<String>,
    /// Another way to install a chosen branch, shown beside `install_branch` (`apt install nvidia-driver-580`).
    #[serde(default)]
    pub branch_alternative: Option<String>,
    /// A chosen branch with the open module, where it is another package.
    #[serde(default)]
    pub install_branch_open: Option<String>,
    /// A legacy branch, where it is another package than `install_branch`.
    #[serde(default)]
    pub install_legacy: Option<String>,
    /// A legacy branch that must be installed by hand.
    #[serde(default)]
    pub legacy_manual: Option<String>,
    /// A manual step after installing (wait for the module build).
    #[serde(default)]
    pub after_install: Option<String>,
    /// The root line that removes the driver again (the undo of an install).
    #[serde(default)]
    pub remove: Option<String>,
    /// The repositories carry only the open module (Arch since R590): `install_latest` is never
    /// offered for the proprietary one.
    #[serde(default)]
    pub open_only: bool,
    /// The root line that installs the headers of the running kernel.
    #[serde(default)]
    pub headers: Option<String>,
    /// The root line that builds the module for the running kernel.
    pub rebuild_module: String,
    /// The root line that rebuilds the initramfs.
    pub initramfs: String,
    /// The key locally built modules are signed with.
    pub module_key: String,
    /// The root line that rebuilds the module signed.
    pub sign_rebuild: String,
    /// URL the row was read in.
    pub source: String,
    /// Confidence.
    pub tag: Tag,
}

/// The kernel module flavor a driver install uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModuleFlavor {
    /// NVIDIA's open kernel modules (Turing and newer; required from Blackwell).
    Open,
    /// The proprietary modules (required for Maxwell, Pascal, Volta).
    Proprietary,
}

/// How a driver is installed on a distribution: a root line, or what to do by hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Install {
    /// A root line.
    Root(String),
    /// Text for a person: the distribution has no package for it.
    Manual(String),
}

impl DriverTable {
    /// The archive row of the release a lowercase OS name (`ubuntu 24.04.1 lts`, `debian gnu/linux 13
    /// (trixie)`) names, within family `distro`: by its code name, or by its version as a whole word
    /// or the start of a point release.
    pub fn archive(&self, distro: &str, os_name: &str) -> Option<&ArchiveRow> {
        let words: Vec<&str> = os_name.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.')).collect();
        self.archive.iter().filter(|a| a.distro == distro).find(|a| {
            words.iter().any(|w| {
                *w == a.codename
                    || *w == a.release
                    || w.strip_prefix(a.release.as_str())
                        .is_some_and(|rest| rest.starts_with('.') && a.release.contains('.'))
            })
        })
    }

    /// The family of a lowercase OS name (the catch-all last row when none matches).
    pub fn distro(&self, os_name: &str) -> &DistroRow {
        let hit = self.distro.iter().find(|d| d.names.iter().any(|n| os_name.contains(n.as_str())));
        hit.or_else(|| self.distro.iter().find(|d| d.names.is_empty())).unwrap_or(&self.distro[0])
    }

    /// The flavor GPUs of these capabilities need on driver `branch` (`None`: the newest), or why no
    /// single driver serves them all. Unknown GPUs get NVIDIA's default (open from R560).
    pub fn flavor(
        &self,
        gpus: &GpuTable,
        caps: &[ComputeCapability],
        branch: Option<u32>,
    ) -> Result<ModuleFlavor, String> {
        let m = &self.modules;
        let proprietary_only: Vec<String> = caps
            .iter()
            .filter(|cc| gpus.row(**cc).is_some_and(|r| !r.open_kernel_module))
            .map(|cc| describe(gpus, *cc))
            .collect();
        let open_only: Vec<String> =
            caps.iter().filter(|cc| **cc >= m.open_required_from_cc).map(|cc| describe(gpus, *cc)).collect();
        match (proprietary_only.is_empty(), open_only.is_empty()) {
            (false, false) => Err(format!(
                "{} need the proprietary kernel module and {} the open one: no one driver drives both",
                proprietary_only.join(", "),
                open_only.join(", ")
            )),
            (false, true) => Ok(ModuleFlavor::Proprietary),
            (true, false) => Ok(ModuleFlavor::Open),
            (true, true) if branch.is_some_and(|b| b < m.open_first_branch) => Ok(ModuleFlavor::Proprietary),
            (true, true) => Ok(ModuleFlavor::Open),
        }
    }

    /// The oldest last branch among these GPUs (580 for Pascal): the newest driver that drives them
    /// all; `None` when every one is still current.
    pub fn legacy_branch(gpus: &GpuTable, caps: &[ComputeCapability]) -> Option<u32> {
        caps.iter().filter_map(|cc| gpus.row(*cc)?.last_driver_branch).min()
    }
}

fn describe(gpus: &GpuTable, cc: ComputeCapability) -> String {
    gpus.architecture(cc).map_or_else(|| format!("compute capability {cc}"), |a| format!("{a} ({cc})"))
}

impl DistroRow {
    /// How to install driver `branch` (`None`: the newest) with module `flavor`; `legacy` when
    /// `branch` is the last one of an older GPU (no newer branch may follow it).
    pub fn install(&self, branch: Option<u32>, flavor: ModuleFlavor, legacy: bool) -> Install {
        let open = flavor == ModuleFlavor::Open;
        let fill = |t: &str, b: Option<u32>| {
            let suffix = if open { self.open_suffix.as_str() } else { "" };
            t.replace("{branch}", &b.map(|b| b.to_string()).unwrap_or_default()).replace("{open}", suffix)
        };
        let latest = || {
            let pick = if open { &self.install_latest_open } else { &self.install_latest_proprietary };
            let generic = if open || !self.open_only { self.install_latest.as_ref() } else { None };
            pick.as_ref().or(generic)
        };
        let Some(b) = branch else {
            return latest().map_or_else(
                || Install::Manual("Install the newest NVIDIA driver for this GPU from your distribution or from https://www.nvidia.com/drivers.".into()),
                |t| Install::Root(fill(t, None)),
            );
        };
        if legacy {
            if let Some(t) = &self.install_legacy {
                return Install::Root(fill(t, Some(b)));
            }
            if let Some(t) = &self.legacy_manual {
                return Install::Manual(fill(t, Some(b)));
            }
        }
        let chosen = if open {
            self.install_branch_open.as_ref().or(self.install_branch.as_ref())
        } else {
            self.install_branch.as_ref()
        };
        match chosen {
            Some(t) => Install::Root(fill(t, Some(b))),
            // A rolling distribution carries only its current branch, which is at least `b`.
            None if !legacy => latest().map_or_else(
                || Install::Manual(format!("Install NVIDIA driver {b} or newer from your distribution or NVIDIA.")),
                |t| Install::Root(fill(t, None)),
            ),
            None => Install::Manual(format!(
                "Install NVIDIA driver branch {b} (the last one for this GPU) from https://www.nvidia.com/drivers."
            )),
        }
    }

    /// The other way to install `branch` with `flavor`, when the family has one; none for a `legacy`
    /// branch the family installs with `install_legacy` instead.
    pub fn alternative(&self, branch: u32, flavor: ModuleFlavor, legacy: bool) -> Option<String> {
        if legacy && self.install_legacy.is_some() {
            return None;
        }
        let suffix = if flavor == ModuleFlavor::Open { self.open_suffix.as_str() } else { "" };
        self.branch_alternative.as_ref().map(|t| t.replace("{branch}", &branch.to_string()).replace("{open}", suffix))
    }

    /// The manual step that comes before the install, when the family needs one.
    pub fn setup_note(&self, branch: Option<u32>) -> Option<&str> {
        if branch.is_some() && self.install_branch.is_some() {
            self.branch_setup.as_deref()
        } else {
            self.latest_setup.as_deref()
        }
    }
}
