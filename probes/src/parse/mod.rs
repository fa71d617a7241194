//! Text parsers: each takes text, never a path, and returns an error rather than panicking.

pub mod cudnn_header;
pub mod ldconfig;
pub mod nvcc;
pub mod smi;
pub mod smi_csv;
pub mod smi_table;
pub mod smi_xml;

/// Text that is not in the format a parser expects.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not valid {format}: {message}")]
pub struct ParseError {
    /// The format, e.g. `nvidia-smi XML`.
    pub format: &'static str,
    /// What is wrong.
    pub message: String,
}

impl ParseError {
    /// An error for `format`.
    pub fn new(format: &'static str, message: impl Into<String>) -> Self {
        Self { format, message: message.into() }
    }
}
