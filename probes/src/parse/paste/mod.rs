//! Text pasted from another machine → a partial [`Snapshot`].
//!
//! The text may mix, in any order and amid prose, markdown fences, `>` quotes and shell prompts:
//! PyTorch's collect_env; nvidia-smi's table, `-q` text, `-q -x` XML or `--query-gpu` CSV;
//! `nvcc --version`; `pip list`, `pip freeze`, `conda list`; `jax.print_environment_info()`;
//! TensorFlow's build info, version, device list and device log lines; error and warning lines
//! known to `assets/compat/errors.toml`; or gpu-doctor's own report JSON. Every part of the
//! snapshot the text says nothing about stays `unknown`; nothing is inferred about this machine.
//!
//! One file per format; `facts` gathers what they find and builds the snapshot.

mod clean;
mod collect_env;
mod facts;
mod frameworks;
mod gpus;
mod jax_env;
mod messages;
mod packages;
mod report;
mod smi;
mod tensorflow;

use std::collections::HashSet;

use super::ParseError;
use crate::Snapshot;
use crate::compat::Kb;

use messages::Matcher;

/// The format name recorded when the text holds known error or warning lines.
const MESSAGES: &str = "error messages";

/// Reads whatever gpu-doctor recognises in `text` into a snapshot whose origin is
/// [`crate::Origin::Pasted`] with the formats found, in the order first seen. A pasted gpu-doctor
/// report or snapshot is taken as it is (its origin set to pasted), with known messages from the
/// text around it added. Errs only when nothing at all is recognised; never panics.
pub fn read_pasted(text: &str, kb: &Kb) -> Result<Snapshot, ParseError> {
    let matcher = Matcher::for_kb(kb);
    let lines = clean::lines(text);
    let joined = lines.join("\n");
    if let Some((mut snap, rest)) = report::find(&joined) {
        let mut known: HashSet<(String, String)> =
            snap.messages.iter().map(|o| (o.id.clone(), o.line.clone())).collect();
        for (_, m) in matcher.scan(&clean::lines(&rest)) {
            if known.insert((m.id.clone(), m.line.clone())) {
                snap.messages.push(m);
            }
        }
        return Ok(snap);
    }
    let mut facts = facts::Facts::default();
    collect_env::read(&lines, &mut facts);
    smi::read(&lines, &joined, &mut facts);
    packages::read(&lines, &mut facts);
    jax_env::read(&lines, &mut facts);
    tensorflow::read(&lines, &mut facts);
    let found = matcher.scan(&lines);
    if let Some((at, _)) = found.first() {
        facts.saw(*at, MESSAGES);
    }
    facts.messages = found.into_iter().map(|(_, m)| m).collect();
    if facts.is_empty() {
        return Err(ParseError::new(
            "pasted text",
            "nothing gpu-doctor recognises: expected collect_env, nvidia-smi (table, -q, -q -x or CSV), \
             nvcc --version, pip list / pip freeze / conda list, jax.print_environment_info(), TensorFlow's \
             build info or device lines, a known CUDA or framework error message, or a gpu-doctor report",
        ));
    }
    Ok(facts.into_snapshot(kb))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
