//! OWNER: link helper. Stub until filled.

use serde::{Deserialize, Serialize};

use super::gpus::Gpu;
use super::pci::PciDevice;
use crate::host::Host;
use crate::{Probed, Trace};

/// PCIe link state as sysfs shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SysfsLink {
    /// Generation now; `None` when sysfs does not say.
    pub gen_current: Option<u32>,
    /// Highest generation.
    pub gen_max: Option<u32>,
    /// Lanes now.
    pub width_current: Option<u32>,
    /// Most lanes.
    pub width_max: Option<u32>,
}

/// A GPU's path to the CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostLink {
    /// The GPU's bus id.
    pub bus_id: String,
}

/// The PCIe link of the device at `bus_id` (sysfs form, `0000:01:00.0`) from sysfs.
pub fn sysfs_link(host: &dyn Host, bus_id: &str) -> Option<SysfsLink> {
    let _ = (host, bus_id);
    None
}

/// Works out each GPU's host link.
pub fn probe(host: &dyn Host, devices: &[PciDevice], gpus: &[Gpu], trace: &mut Trace) -> Probed<Vec<HostLink>> {
    let _ = (host, devices, gpus, trace);
    Probed::Failed { error: "not written yet".into() }
}
