//! Turning a `Report` into text for people: the terminal summary and the Markdown report.
//! Both are built from `facts`, so they always say the same things.

pub mod document;
pub mod facts;
mod facts_more;
pub mod findings;
pub mod html;
pub mod markdown;
pub mod svg;
#[cfg(test)]
mod tests;
pub mod text;
