//! The Benchmarks page's machinery: the run on its own thread (`job`), where each planned test
//! stands (`progress`), past runs on disk (`history`), and drawing (`plots_ui`, `results_ui`, and
//! `p2p_ui` for the GPU-to-GPU copy matrix's heat map).
//! The page itself (`pages/benchmarks.rs`) holds the state and lays these out.

pub mod history;
pub mod job;
pub mod p2p_ui;
pub mod plots_ui;
pub mod progress;
pub mod results_ui;

pub use job::RunState;
