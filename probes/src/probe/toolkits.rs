//! OWNER: toolkits helper. Stub until filled.

use serde::{Deserialize, Serialize};

use super::SitePackages;
use crate::host::Host;
use crate::{CudaVersion, Probed, Trace};

/// Every CUDA toolkit found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Toolkits {
    /// Each install.
    pub installs: Vec<ToolkitInstall>,
}

/// One CUDA toolkit install.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolkitInstall {
    /// Its root folder.
    pub root: String,
    /// Its version; `None` when no version file or nvcc told.
    pub version: Option<CudaVersion>,
}

/// Finds CUDA toolkits.
pub fn probe(host: &dyn Host, site_packages: &[SitePackages], trace: &mut Trace) -> Probed<Toolkits> {
    let _ = (host, site_packages, trace);
    Probed::Failed { error: "not written yet".into() }
}
