//! Many machines: the reports collected from a cluster's nodes (`gpu-doctor fleet`) and their
//! comparison (`gpu-doctor compare`, the Fleet page).
//!
//! The types every part shares are `gpu_doctor_model::fleet`: a fleet folder's manifest, one node's
//! outcome and the comparison that the text, JSON, Markdown and HTML renderers and the window all
//! draw from. `compare` reads a folder of reports and makes that comparison (`compare.rs` says what
//! is compared and how).

pub mod compare;
