//! OS family, WSL and containers. (Filled by the lead.)

use serde::{Deserialize, Serialize};

use crate::host::Platform;

/// Where this machine runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlatformFacts {
    /// OS family and CPU architecture.
    pub platform: Platform,
}
