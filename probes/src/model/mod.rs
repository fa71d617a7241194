//! The model: the types a snapshot is made of, shared by the probes, the paste reader, diagnosis,
//! the benchmarks and the app.

mod bus_id;

pub use bus_id::{PciBusId, PciBusIdError};
