//! Known error and warning lines (`assets/compat/errors.toml`) found in pasted text.
//!
//! Each line is matched together with the line after it (joined by a newline), so a message that
//! wraps keeps its values; a match must start on the first of the two lines.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, OnceLock};

use regex::{Regex, RegexSet};

use gpu_doctor_kb::Kb;
use gpu_doctor_model::ObservedMessage;

/// The known messages' patterns, compiled.
#[derive(Debug)]
pub(crate) struct Matcher {
    set: RegexSet,
    /// (message id, its pattern), in the same order as `set`.
    rows: Vec<(String, Regex)>,
}

impl Matcher {
    /// Compiles every row's pattern; a row whose pattern does not compile is left out (the table
    /// tests fail on it, so it never ships).
    pub(crate) fn new(kb: &Kb) -> Self {
        let rows: Vec<(String, Regex)> =
            kb.errors.message.iter().filter_map(|m| Regex::new(&m.pattern).ok().map(|r| (m.id.clone(), r))).collect();
        let set = RegexSet::new(rows.iter().map(|(_, r)| r.as_str())).unwrap_or_else(|_| RegexSet::empty());
        Self { set, rows }
    }

    /// The compiled messages of `kb`: made once for the embedded knowledge base, anew for any other.
    pub(crate) fn for_kb(kb: &Kb) -> Arc<Self> {
        static EMBEDDED: OnceLock<Arc<Matcher>> = OnceLock::new();
        match Kb::get() {
            Ok(embedded) if std::ptr::eq(embedded, kb) => EMBEDDED.get_or_init(|| Arc::new(Self::new(kb))).clone(),
            _ => Arc::new(Self::new(kb)),
        }
    }

    /// Every known message in the lines, in order, each (id, line) once, with the index of the
    /// line it starts on.
    pub(crate) fn scan(&self, lines: &[String]) -> Vec<(usize, ObservedMessage)> {
        let mut out = Vec::new();
        let mut seen: HashSet<(String, String)> = HashSet::new();
        for (i, line) in lines.iter().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let next = lines.get(i + 1).map(|l| l.trim()).unwrap_or("");
            let hay = if next.is_empty() { line.to_owned() } else { format!("{line}\n{next}") };
            for idx in self.set.matches(&hay).iter() {
                let Some((id, re)) = self.rows.get(idx) else { continue };
                let Some(m) = re.captures(&hay).filter(|c| c.get(0).is_some_and(|w| w.start() < line.len())) else {
                    continue;
                };
                let text = if m.get(0).is_some_and(|w| w.end() > line.len()) {
                    format!("{line} {next}")
                } else {
                    line.to_owned()
                };
                let values: BTreeMap<String, String> = re
                    .capture_names()
                    .flatten()
                    .filter_map(|n| {
                        let v = m.name(n)?.as_str().split_whitespace().collect::<Vec<_>>().join(" ");
                        (!v.is_empty()).then(|| (n.to_owned(), v))
                    })
                    .collect();
                if seen.insert((id.clone(), text.clone())) {
                    out.push((i, ObservedMessage { id: id.clone(), line: text, values }));
                }
            }
        }
        out
    }

    /// The ids of the rows, in table order (for tests).
    #[cfg(test)]
    pub(crate) fn ids(&self) -> Vec<&str> {
        self.rows.iter().map(|(id, _)| id.as_str()).collect()
    }
}
