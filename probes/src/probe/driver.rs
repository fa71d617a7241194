//! The NVIDIA driver. (Filled by the lead.)

use serde::{Deserialize, Serialize};

use crate::{CudaVersion, DriverVersion};

/// The NVIDIA driver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DriverFacts {
    /// Driver version.
    pub version: Option<DriverVersion>,
    /// Newest CUDA the driver supports.
    pub cuda_version: Option<CudaVersion>,
}
