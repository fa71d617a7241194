//! OWNER: parsers helper. Stub until filled.

use super::{ParseError, smi::SmiReport};

/// Parses this nvidia-smi format.
pub fn parse(text: &str) -> Result<SmiReport, ParseError> {
    let _ = text;
    Err(ParseError::new("nvidia-smi output", "parser not written yet"))
}
