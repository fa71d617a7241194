//! Turning a `Report` and a benchmark run into text for people: the terminal summary, the
//! Markdown report and the HTML page, all built from `facts` (and a run from `bench`), so they
//! always say the same things; `document` makes the exported file in each `Format`. `compare`
//! renders a fleet's comparison (`gpu-doctor compare`).

pub mod bench;
pub mod certificate;
pub mod compare;
pub mod document;
pub mod facts;
pub mod findings;
pub mod html;
pub mod markdown;
pub mod outcome;
pub mod plan;
pub mod processes;
pub mod svg;
#[cfg(test)]
mod tests;
pub mod text;
