//! The benchmark judged: each number against what the hardware should reach ([`verdict`]), the
//! GPU-to-GPU matrix against the links ([`p2p`]), the clocks under load ([`throttle`]), and the saved
//! run assembled from what the runner collected ([`run::assemble`]). The data is
//! `gpu_doctor_model::bench`; the measuring is the `kernels` crate.

pub mod p2p;
pub mod run;
pub mod throttle;
pub mod verdict;
