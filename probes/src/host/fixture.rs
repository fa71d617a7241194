//! The fixture folder format shared by `ReplayHost` and `RecordingHost`.
//!
//! A fixture is a complete, fake machine: a path that is not in it does not exist there,
//! and a command that can be found but whose answer is not recorded is a loud `NotRecorded` error.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{CmdOutput, DirEntry, FileKind, HostError, NvmlReport, Platform, SystemInfo};
use crate::probe::Options;

/// The file inside a fixture folder that holds the recording.
pub const FIXTURE_FILE: &str = "host.json";

/// A recorded machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fixture {
    /// Format version of this file; 1.
    pub format: u32,
    /// What this machine is, for people reading the fixture.
    #[serde(default)]
    pub description: String,
    /// OS family and CPU architecture.
    pub platform: Platform,
    /// When it was recorded, seconds since the Unix epoch.
    #[serde(default)]
    pub now_unix_secs: u64,
    /// OS, CPU and memory facts.
    #[serde(default)]
    pub system: SystemInfo,
    /// Environment variables (only those the probes care about).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Text files by path.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// Paths whose reading failed, with the error (e.g. permission denied).
    #[serde(default)]
    pub file_errors: BTreeMap<String, String>,
    /// Symlinks by path, with their stored target.
    #[serde(default)]
    pub links: BTreeMap<String, String>,
    /// Directory listings by path. Entries implied by other paths need not be listed.
    #[serde(default)]
    pub dirs: BTreeMap<String, Vec<DirEntry>>,
    /// Answers to "what is at this path" (following links); `null` means nothing.
    #[serde(default)]
    pub kinds: BTreeMap<String, Option<FileKind>>,
    /// Program runs by argv.
    #[serde(default)]
    pub commands: Vec<CommandRecord>,
    /// What NVML answered.
    #[serde(default)]
    pub nvml: NvmlAnswer,
    /// The options it was recorded with (`--deep`, `--python`, the working folder), which a replay
    /// uses so that it sees what the recording saw from any folder; `None` in fixtures made by hand
    /// and before gpu-doctor wrote it (replayed without a working folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_with: Option<Options>,
}

impl Fixture {
    /// An empty machine of the given platform.
    pub fn new(platform: Platform) -> Self {
        Self {
            format: 1,
            description: String::new(),
            platform,
            now_unix_secs: 0,
            system: SystemInfo::default(),
            env: BTreeMap::new(),
            files: BTreeMap::new(),
            file_errors: BTreeMap::new(),
            links: BTreeMap::new(),
            dirs: BTreeMap::new(),
            kinds: BTreeMap::new(),
            commands: Vec::new(),
            nvml: NvmlAnswer::default(),
            recorded_with: None,
        }
    }

    /// Reads `DIR/host.json`.
    pub fn load(dir: &Path) -> Result<Self, HostError> {
        let path = dir.join(FIXTURE_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| HostError::Io {
            message: format!("could not read the replay fixture: {e}"),
            what: path.display().to_string(),
        })?;
        serde_json::from_str(&text).map_err(|e| HostError::Io {
            message: format!("the replay fixture is not valid: {e}"),
            what: path.display().to_string(),
        })
    }
}

/// One recorded program run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandRecord {
    /// Program and arguments, exactly as the probe passed them.
    pub argv: Vec<String>,
    /// What it printed, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<CmdOutput>,
    /// Why it did not run (not found, timeout), when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<HostError>,
}

/// What NVML answered: a report, or the reason it could not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NvmlAnswer {
    /// NVML answered.
    Report(NvmlReport),
    /// NVML could not be used; the text is the reason.
    Error(String),
}

impl Default for NvmlAnswer {
    fn default() -> Self {
        Self::Error("the NVML library (libnvidia-ml, part of the NVIDIA driver) could not be loaded".to_owned())
    }
}
