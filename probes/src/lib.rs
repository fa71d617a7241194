//! What is on this machine, read: the [`host::Host`] trait and its three hosts (system, recording,
//! replay), the one child-process supervisor (`host::process`), NVML, the probes and every text
//! parser (pasted text included), and the one atomic file writer (`write`) that the binary's outputs
//! and the installers' backups go through. The data they fill is `gpu-doctor-model`'s.
//!
//! Probes never touch the OS directly; they ask a [`host::Host`]. [`probe::collect`] runs them all
//! (concurrently where they do not depend on each other) and returns a
//! [`Snapshot`](gpu_doctor_model::Snapshot).

pub mod host;
pub mod parse;
pub mod probe;
pub mod rewrite;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod test_util;
pub mod write;
