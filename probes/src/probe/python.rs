//! OWNER: python helper. Stub until filled.

use serde::{Deserialize, Serialize};

use super::{Options, SitePackages};
use crate::host::Host;
use crate::{Probed, Trace};

/// One Python environment and the GPU packages in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PythonEnv {
    /// Display name, e.g. `conda:base`, `venv:/home/user/proj/.venv`, `system:/usr/bin/python3`.
    pub name: String,
    /// The environment's prefix folder.
    pub prefix: String,
    /// Its site-packages folders.
    pub site_packages: Vec<String>,
}

/// Finds Python environments.
pub fn probe(host: &dyn Host, opts: &Options, trace: &mut Trace) -> Probed<Vec<PythonEnv>> {
    let _ = (host, opts, trace);
    Probed::Failed { error: "not written yet".into() }
}

/// Every site-packages folder of every environment.
pub fn site_packages(envs: &[PythonEnv]) -> Vec<SitePackages> {
    envs.iter()
        .flat_map(|e| e.site_packages.iter().map(|p| SitePackages { env: e.name.clone(), path: p.into() }))
        .collect()
}
