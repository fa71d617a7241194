//! Whether a machine fits: pure functions of the model (`gpu-doctor-model`) and the knowledge base
//! (`gpu-doctor-kb`). No `Host` is within reach of this crate, so nothing here reads the machine.
//!
//! - [`diagnose`]: the rules, a [`Snapshot`](gpu_doctor_model::Snapshot) in, [`Finding`](gpu_doctor_model::Finding)s out
//!   (the `bench.*` rules over a benchmark run included).
//! - [`bench`]: each benchmark number judged against what the hardware should reach, and the saved
//!   run assembled from what the runner collected.
//! - [`certify`]: the threshold rules of a certificate and its verdict.
//! - [`fleet`]: many machines' reports compared.

pub mod bench;
pub mod certify;
pub mod diagnose;
pub mod fleet;
#[cfg(any(test, feature = "test-support"))]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::missing_panics_doc)]
pub mod testing;
