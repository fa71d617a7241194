//! NVIDIA devices on the PCI bus.

use serde::{Deserialize, Serialize};

fn nvidia_vendor() -> u16 {
    NVIDIA_VENDOR_ID
}

/// An NVIDIA display or 3D controller on the PCI bus.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PciDevice {
    /// Bus id as sysfs names it, e.g. `0000:01:00.0`.
    pub bus_id: String,
    /// PCI vendor id; always `0x10de` (NVIDIA) in this list.
    #[serde(default = "nvidia_vendor")]
    pub vendor_id: u16,
    /// PCI device id, e.g. `0x2684`.
    pub device_id: u16,
    /// PCI class, e.g. `0x030000` (VGA) or `0x030200` (3D controller).
    pub class: u32,
    /// Subsystem (board maker) vendor id, e.g. `0x1043`; `None` when sysfs has no `subsystem_vendor`.
    #[serde(default)]
    pub subsystem_vendor_id: Option<u16>,
    /// Subsystem device id; `None` when sysfs has no `subsystem_device`.
    #[serde(default)]
    pub subsystem_device_id: Option<u16>,
    /// The kernel driver bound to it (`nvidia`, `nouveau`, `vfio-pci`); `None` when none is.
    pub driver: Option<String>,
}

impl PciDevice {
    /// True when NVIDIA's own kernel driver is bound to the device.
    pub fn has_nvidia_driver(&self) -> bool {
        self.driver.as_deref() == Some(NVIDIA_DRIVER)
    }
}

/// NVIDIA's PCI vendor id.
pub const NVIDIA_VENDOR_ID: u16 = 0x10de;

/// The driver name of NVIDIA's own kernel module (proprietary and open flavours alike).
pub const NVIDIA_DRIVER: &str = "nvidia";

/// True for the PCI display base class `0x03` (VGA `0x0300`, XGA `0x0301`, 3D `0x0302`, other
/// `0x0380`); false for NVIDIA's HDMI audio (`0x0403`), USB-C (`0x0c03`) and UCSI (`0x0c80`) functions.
pub fn is_display_class(class: u32) -> bool {
    class >> 16 == 0x03
}
