//! Many machines: the reports collected from a cluster's nodes (`gpu-doctor fleet`) and their
//! comparison (`gpu-doctor compare`, the Fleet page).
//!
//! `model` holds the types every part shares: a fleet folder's manifest ([`Manifest`], written by
//! the engines), one node's outcome ([`NodeEntry`]) and the comparison ([`Comparison`]) that the text,
//! JSON, Markdown and HTML renderers and the window all draw from. `compare` reads a folder of
//! reports and makes that comparison (`compare.rs` says what is compared and how).

pub mod compare;
pub mod model;

pub use model::{
    Comparison, FactColumn, FleetFinding, MANIFEST_FILE, Manifest, MetricColumn, NodeEntry, NodeGroup, NodeOutcome,
    NodeRow,
};
