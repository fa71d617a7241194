//! OWNER: toolkits helper. Stub until filled.

use serde::{Deserialize, Serialize};

use super::SitePackages;
use super::toolkits::Toolkits;
use crate::host::Host;
use crate::{CudnnVersion, Probed, Trace};

/// One copy of cuDNN.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CudnnCopy {
    /// Where it is.
    pub location: String,
    /// Its version; `None` when it could not be read.
    pub version: Option<CudnnVersion>,
}

/// Finds every copy of cuDNN.
pub fn probe(
    host: &dyn Host,
    toolkits: Option<&Toolkits>,
    site_packages: &[SitePackages],
    trace: &mut Trace,
) -> Probed<Vec<CudnnCopy>> {
    let _ = (host, toolkits, site_packages, trace);
    Probed::Failed { error: "not written yet".into() }
}
