//! gpu-doctor's own JSON, pasted back: a `Report` (`report`, `--json`) or a bare `Snapshot`.

use serde::Deserialize;

use crate::{Origin, Report, Snapshot};

/// The format name a pasted report is recorded under.
pub(super) const FORMAT: &str = "gpu-doctor report";

/// How many `{` at the start of a line are tried as the start of the JSON.
const TRIES: usize = 16;

/// The snapshot of the first JSON value in the text that is a report or a snapshot (it starts on
/// a line of its own), with the text before and after it; `None` when there is none.
pub(super) fn find(text: &str) -> Option<(Snapshot, String)> {
    if !text.contains("\"schema_version\"") {
        return None;
    }
    for start in line_starts(text).take(TRIES) {
        let Some(json) = text.get(start..) else { continue };
        let mut values = serde_json::Deserializer::from_str(json).into_iter::<serde_json::Value>();
        let Some(Ok(value)) = values.next() else { continue };
        let end = start + values.byte_offset();
        let snap = match Report::deserialize(&value) {
            Ok(r) => r.snapshot,
            Err(_) => match Snapshot::deserialize(&value) {
                Ok(s) => s,
                Err(_) => continue,
            },
        };
        let mut snap = snap;
        snap.origin = Origin::Pasted { formats: vec![FORMAT.to_owned()] };
        let rest = format!("{}\n{}", text.get(..start).unwrap_or(""), text.get(end..).unwrap_or(""));
        return Some((snap, rest));
    }
    None
}

/// The byte offsets of the `{` that open a line (after blanks), in order; each line is looked at
/// once, so the search is linear however many `{` a line holds.
fn line_starts(text: &str) -> impl Iterator<Item = usize> + '_ {
    let mut at = 0;
    text.split('\n').filter_map(move |line| {
        let start = at;
        at += line.len() + 1;
        let blanks = line.len() - line.trim_start().len();
        line.trim_start().starts_with('{').then_some(start + blanks)
    })
}
