//! `Probed<T>`: the outcome of one probe, and the trace of every attempt behind it.

use serde::{Deserialize, Deserializer, Serialize};

/// What a probe found out about one part of the machine.
///
/// A machine without a GPU, driver or Python is a valid `Absent`, never an error. A `status` this
/// version does not know (a report from a newer gpu-doctor) reads as `Unknown`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Probed<T> {
    /// The thing is there; `source` names the method that answered (e.g. `nvml`, `nvidia-smi -q -x`).
    Found { value: T, source: String },
    /// The thing is not on this machine; `reason` says how we know.
    Absent { reason: String },
    /// This platform cannot have the thing (e.g. NVIDIA on macOS).
    Unsupported { reason: String },
    /// Every method failed in a way that does not prove absence.
    Failed { error: String },
    /// Nothing was said about it: the facts came from pasted text or a report that did not cover this
    /// part. Rules never conclude anything from an unknown part.
    Unknown { reason: String },
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Probed<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// `Probed` as written, plus any other status.
        #[derive(Deserialize)]
        #[serde(tag = "status", rename_all = "snake_case")]
        enum Written<T> {
            Found {
                value: T,
                source: String,
            },
            Absent {
                reason: String,
            },
            Unsupported {
                reason: String,
            },
            Failed {
                error: String,
            },
            Unknown {
                reason: String,
            },
            #[serde(other)]
            Other,
        }
        Ok(match Written::<T>::deserialize(deserializer)? {
            Written::Found { value, source } => Self::Found { value, source },
            Written::Absent { reason } => Self::Absent { reason },
            Written::Unsupported { reason } => Self::Unsupported { reason },
            Written::Failed { error } => Self::Failed { error },
            Written::Unknown { reason } => Self::Unknown { reason },
            Written::Other => Self::Unknown { reason: "a status this version of gpu-doctor does not know".to_owned() },
        })
    }
}

impl<T> Probed<T> {
    /// `Found` with a source.
    pub fn found(value: T, source: impl Into<String>) -> Self {
        Self::Found { value, source: source.into() }
    }

    /// `Absent` with a reason.
    pub fn absent(reason: impl Into<String>) -> Self {
        Self::Absent { reason: reason.into() }
    }

    /// `Unknown` with a reason.
    pub fn unknown(reason: impl Into<String>) -> Self {
        Self::Unknown { reason: reason.into() }
    }

    /// The value when found.
    pub fn value(&self) -> Option<&T> {
        match self {
            Self::Found { value, .. } => Some(value),
            _ => None,
        }
    }

    /// The method that answered, e.g. `nvml`; `None` when not found.
    pub fn source(&self) -> Option<&str> {
        match self {
            Self::Found { source, .. } => Some(source),
            _ => None,
        }
    }

    /// Why there is no value, or `None` when found.
    pub fn why_not(&self) -> Option<&str> {
        match self {
            Self::Found { .. } => None,
            Self::Absent { reason } | Self::Unsupported { reason } | Self::Unknown { reason } => Some(reason),
            Self::Failed { error } => Some(error),
        }
    }

    /// Maps the found value.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Probed<U> {
        match self {
            Self::Found { value, source } => Probed::Found { value: f(value), source },
            Self::Absent { reason } => Probed::Absent { reason },
            Self::Unsupported { reason } => Probed::Unsupported { reason },
            Self::Failed { error } => Probed::Failed { error },
            Self::Unknown { reason } => Probed::Unknown { reason },
        }
    }
}

/// How one attempt in a probe's chain ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The method answered.
    Ok,
    /// The method ran and found nothing (a missing file, an absent program).
    Miss,
    /// The method failed (timeout, parse error, permission denied).
    Error,
    /// A value this version of gpu-doctor does not know, read from a report written by a newer one.
    #[serde(other)]
    Unknown,
}

/// One attempt: which probe tried what, and what it answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceEntry {
    /// The probe, e.g. `driver`.
    pub probe: String,
    /// The method, e.g. `nvml` or `read /proc/driver/nvidia/version`.
    pub method: String,
    /// How it ended.
    pub outcome: Outcome,
    /// What it answered, in one line.
    pub detail: String,
}

/// The attempts of one probe, in order.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    probe: &'static str,
    entries: Vec<TraceEntry>,
}

impl Trace {
    /// A trace for the named probe.
    pub fn new(probe: &'static str) -> Self {
        Self { probe, entries: Vec::new() }
    }

    /// Records an attempt.
    pub fn push(&mut self, method: impl Into<String>, outcome: Outcome, detail: impl Into<String>) {
        let detail: String = detail.into();
        let detail = one_line(&detail);
        self.entries.push(TraceEntry { probe: self.probe.to_owned(), method: method.into(), outcome, detail });
    }

    /// Records an attempt that answered.
    pub fn ok(&mut self, method: impl Into<String>, detail: impl Into<String>) {
        self.push(method, Outcome::Ok, detail);
    }

    /// Records an attempt that found nothing.
    pub fn miss(&mut self, method: impl Into<String>, detail: impl Into<String>) {
        self.push(method, Outcome::Miss, detail);
    }

    /// Records an attempt that failed.
    pub fn error(&mut self, method: impl Into<String>, detail: impl Into<String>) {
        self.push(method, Outcome::Error, detail);
    }

    /// Records the attempts of `other` (made on another thread for this probe) here, in order, as
    /// this probe's.
    pub fn append(&mut self, other: Trace) {
        let probe = self.probe;
        self.entries.extend(other.entries.into_iter().map(|e| TraceEntry { probe: probe.to_owned(), ..e }));
    }

    /// The recorded attempts.
    pub fn into_entries(self) -> Vec<TraceEntry> {
        self.entries
    }
}

/// Squeezes text into one line of at most 300 characters for a trace entry.
fn one_line(text: &str) -> String {
    let mut out: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if out.chars().count() > 300 {
        out = out.chars().take(299).collect();
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_found_part_has_a_source() {
        assert_eq!(Probed::found(1, "nvml").source(), Some("nvml"));
        assert_eq!(Probed::<u32>::absent("no driver").source(), None);
        assert_eq!(Probed::<u32>::Failed { error: "timeout".into() }.source(), None);
    }
}
