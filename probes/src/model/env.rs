//! CUDA-relevant environment variables.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::probe::env::mask_secret;

/// The environment variables that change how CUDA and the frameworks behave.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EnvFacts {
    /// Relevant variables and their values (see `is_relevant`), without PATH and the loader path,
    /// which are split into entries below. Credentials are masked (see `mask_secret`).
    pub vars: BTreeMap<String, String>,
    /// PATH entries, in order.
    pub path: Vec<String>,
    /// `LD_LIBRARY_PATH` entries, in order; empty when unset.
    pub ld_library_path: Vec<String>,
    /// PATH entries that look like CUDA (contain `cuda` or `nvidia`).
    pub path_cuda_entries: Vec<String>,
}

impl EnvFacts {
    /// Masks credentials in the variables (see `mask_secret`): for facts that did not come from this
    /// build's probe, such as a pasted report of an older version (`parse::paste`).
    pub fn mask_secrets(&mut self) {
        for (name, value) in &mut self.vars {
            *value = mask_secret(name, value);
        }
    }
}
