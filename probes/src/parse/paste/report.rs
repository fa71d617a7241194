//! gpu-doctor's own JSON, pasted back: a `Report` (`report`, `--json`) or a bare `Snapshot`.
//!
//! Reports from other versions are read leniently: fields this version does not know are skipped,
//! a value it does not know reads as `unknown`, and each such value and a newer schema get a note.
//! JSON that is plainly a gpu-doctor report but cannot be read at all is an error, so that the
//! other readers never pick facts out of it.

use serde::Deserialize;
use serde_json::Value;

use gpu_doctor_model::{Origin, SCHEMA_VERSION, Snapshot, TOOL_VERSION};

/// The format name a pasted report is recorded under.
pub(super) const FORMAT: &str = "gpu-doctor report";

/// How many `{` at the start of a line are tried as the start of the JSON.
const TRIES: usize = 16;

/// How many values this version does not know a note names; it counts the rest.
const NAMED: usize = 5;

/// What the text holds.
#[derive(Debug)]
pub(super) enum Found {
    /// A report or snapshot (its origin set to pasted, its notes filled in, credentials in its
    /// environment masked), and the text before and after it.
    Read { snap: Box<Snapshot>, rest: String },
    /// JSON that is plainly a gpu-doctor report or snapshot, which this version cannot read: why.
    Unreadable(String),
}

/// The first JSON value in the text that is a report or a snapshot (it starts on a line of its
/// own); `None` when there is none.
pub(super) fn find(text: &str) -> Option<Found> {
    if !text.contains("\"schema_version\"") {
        return None;
    }
    let mut unreadable = None;
    for start in line_starts(text).take(TRIES) {
        let Some(json) = text.get(start..) else { continue };
        let mut values = serde_json::Deserializer::from_str(json).into_iter::<Value>();
        let Some(Ok(value)) = values.next() else { continue };
        let end = start + values.byte_offset();
        // A report holds its snapshot; a bare snapshot is one by itself.
        let inner = value.get("snapshot").filter(|s| s.is_object()).unwrap_or(&value);
        if !is_snapshot_like(inner) {
            continue;
        }
        let mut snap = match Snapshot::deserialize(inner) {
            Ok(s) => s,
            Err(e) => {
                let schema = value.get("schema_version").and_then(Value::as_u64);
                unreadable.get_or_insert_with(|| unreadable_why(schema, &e));
                continue;
            }
        };
        let mut notes = Vec::new();
        let schema = value.get("schema_version").and_then(Value::as_u64).unwrap_or(u64::from(snap.schema_version));
        if schema > u64::from(SCHEMA_VERSION) {
            let by = value.get("tool_version").and_then(Value::as_str).unwrap_or(&snap.tool_version);
            notes.push(format!(
                "the report was written by gpu-doctor {by} in schema {schema}, newer than this gpu-doctor \
                 ({TOOL_VERSION}, schema {SCHEMA_VERSION}) reads: what the newer version added was skipped; \
                 update gpu-doctor to read it whole"
            ));
        }
        if let Ok(back) = serde_json::to_value(&snap) {
            let mut unknown = Vec::new();
            became_unknown(inner, &back, &mut String::new(), &mut unknown);
            if !unknown.is_empty() {
                let more = unknown.len().saturating_sub(NAMED);
                let mut named = unknown.into_iter().take(NAMED).collect::<Vec<_>>().join(", ");
                if more > 0 {
                    named.push_str(&format!(" and {more} more"));
                }
                notes.push(format!("values this version of gpu-doctor does not know were read as unknown: {named}"));
            }
        }
        notes.append(&mut snap.notes);
        snap.notes = notes;
        // An older gpu-doctor (or a hand-edited report) may hold credentials as they were.
        snap.env.mask_secrets();
        snap.origin = Origin::Pasted { formats: vec![FORMAT.to_owned()] };
        let rest = format!("{}\n{}", text.get(..start).unwrap_or(""), text.get(end..).unwrap_or(""));
        return Some(Found::Read { snap: Box::new(snap), rest });
    }
    unreadable.map(Found::Unreadable)
}

/// An object with a snapshot's first fields: gpu-doctor wrote it, whatever else it holds.
fn is_snapshot_like(v: &Value) -> bool {
    ["schema_version", "tool_version", "taken_at_unix_secs"].iter().all(|k| v.get(k).is_some())
}

fn unreadable_why(schema: Option<u64>, e: &serde_json::Error) -> String {
    let newer = match schema {
        Some(s) if s > u64::from(SCHEMA_VERSION) => {
            format!(" (it is schema {s}, newer than this gpu-doctor's {SCHEMA_VERSION}: update gpu-doctor)")
        }
        _ => String::new(),
    };
    format!("a gpu-doctor report that this version cannot read{newer}: {e}")
}

/// The places (with the value as written) where `written` held a string other than `unknown` and
/// `read` holds `unknown`: values this version did not know.
fn became_unknown(written: &Value, read: &Value, path: &mut String, out: &mut Vec<String>) {
    match (written, read) {
        (Value::String(w), Value::String(r)) if r == "unknown" && w != "unknown" => {
            out.push(format!("{path} {w:?}"));
        }
        (Value::Object(w), Value::Object(r)) => {
            for (k, wv) in w {
                if let Some(rv) = r.get(k) {
                    let len = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(k);
                    became_unknown(wv, rv, path, out);
                    path.truncate(len);
                }
            }
        }
        (Value::Array(w), Value::Array(r)) => {
            for (i, (wv, rv)) in w.iter().zip(r).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                became_unknown(wv, rv, path, out);
                path.truncate(len);
            }
        }
        _ => {}
    }
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
