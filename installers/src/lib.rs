//! Fix plans and the runner that carries them out.
//!
//! A [`Plan`] answers findings with ordered [`Step`]s: user steps gpu-doctor may run (an argv,
//! never a shell string), root steps it only shows and writes to a script for review, manual steps
//! (reboot, enroll a key) and a verify step. Planners (`planners`) turn a finding's
//! [`PlanRef`](gpu_doctor_model::PlanRef) into a plan, and [`attach`] writes each planned
//! finding's fix prose from its plan, so the two cannot disagree. The chooser (`choose`) picks a
//! framework build for this machine's GPUs, driver and Python from the knowledge base, with the
//! reason for every candidate it turned down.

pub mod apply;
pub mod choose;
pub mod envtool;
pub mod plan;
pub mod planners;
pub mod resolve;
pub mod verify;

pub use plan::{Plan, Step, StepKind, UserAction};
pub use planners::{attach, plans};
