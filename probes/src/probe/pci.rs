//! OWNER: link helper. Stub until filled.

use serde::{Deserialize, Serialize};

use crate::host::Host;
use crate::{Probed, Trace};

/// An NVIDIA display or 3D controller on the PCI bus.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PciDevice {
    /// Bus id as sysfs names it, e.g. `0000:01:00.0`.
    pub bus_id: String,
    /// PCI device id, e.g. `0x2684`.
    pub device_id: u16,
    /// PCI class, e.g. `0x030000`.
    pub class: u32,
    /// The kernel driver bound to it (`nvidia`, `nouveau`, `vfio-pci`); `None` when none is.
    pub driver: Option<String>,
}

/// Lists NVIDIA GPUs on the PCI bus.
pub fn probe(host: &dyn Host, trace: &mut Trace) -> Probed<Vec<PciDevice>> {
    let _ = (host, trace);
    Probed::Failed { error: "not written yet".into() }
}
