//! Diagnosis: pure functions of a [`Snapshot`] and the knowledge base that return [`Finding`]s, and
//! of a benchmark run ([`bench_findings`]).
//!
//! One file per family of rules. Each family lists its rules (`RULES`: id, category, severity, what
//! triggers it, its source) and a `run` function; a finding is always made from its rule, so its id,
//! category and severity match the documentation. A part of the snapshot that is `unknown` (pasted
//! text that did not cover it) never triggers a rule, and a finding that could not see a part it
//! depends on says so.

mod arch;
mod bar1;
mod bench;
mod bnb_override;
mod companions;
mod containers;
mod context;
mod cudnn;
mod demangle;
mod driver;
mod env_vars;
mod fix;
mod frameworks;
mod health;
mod held;
mod jax_platforms;
mod libcuda;
mod link;
mod loader;
mod message_fix;
mod messages;
mod nvcc;
mod presence;
mod reading;
#[cfg(test)]
mod tests;
mod too_old;
mod toolkits;
mod topology;
mod variable_names;
mod video;
mod wheels;
mod wsl;

use gpu_doctor_kb::Kb;
use gpu_doctor_model::{Category, Finding, Severity, Snapshot};

pub use arch::{ArchList, GpuFit, gpu_fit, torch_arch_list};
pub use bench::bench_findings;
pub(crate) use context::Ctx;
pub use context::{GpuView, gpu_view, gpu_views};

/// One rule: what the documentation says of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// Stable dotted id, the `id` of every finding it makes.
    pub id: &'static str,
    /// Its category.
    pub category: Category,
    /// Its severity.
    pub severity: Severity,
    /// What triggers it, one sentence.
    pub trigger: &'static str,
    /// Where the fact it rests on comes from.
    pub source: &'static str,
}

impl Rule {
    /// A finding of this rule.
    pub(crate) fn finding(
        &self,
        summary: impl Into<String>,
        detail: impl Into<String>,
        evidence: Vec<String>,
        fix: Option<String>,
    ) -> Finding {
        Finding {
            id: self.id.to_owned(),
            category: self.category,
            severity: self.severity,
            summary: summary.into(),
            detail: detail.into(),
            evidence,
            explains: Vec::new(),
            fix,
            plan: None,
        }
    }
}

/// A family: its rules and the function that applies them.
type Family = (&'static [Rule], fn(&Ctx<'_>, &mut Vec<Finding>));

const FAMILIES: &[Family] = &[
    (presence::RULES, presence::run),
    (driver::RULES, driver::run),
    (arch::RULES, arch::run),
    (frameworks::RULES, frameworks::run),
    (toolkits::RULES, toolkits::run),
    (env_vars::RULES, env_vars::run),
    (jax_platforms::RULES, jax_platforms::run),
    (bnb_override::RULES, bnb_override::run),
    (variable_names::RULES, variable_names::run),
    (wsl::RULES, wsl::run),
    (link::RULES, link::run),
    (containers::RULES, containers::run),
    (libcuda::RULES, libcuda::run),
    (video::RULES, video::run),
    (health::RULES, health::run),
    (held::RULES, held::run),
    (topology::RULES, topology::run),
    (bar1::RULES, bar1::run),
    (cudnn::RULES, cudnn::run),
    (wheels::RULES, wheels::run),
    (loader::RULES, loader::run),
    (companions::RULES, companions::run),
    (too_old::RULES, too_old::run),
    (nvcc::RULES, nvcc::run),
    (reading::RULES, reading::run),
];

/// Every rule, in family order, the benchmark rules (`bench.*`, which [`bench_findings`] applies
/// to a run) last. Findings made from known error lines (`observed.*`) are listed by
/// [`observed_rules`].
pub fn rules() -> impl Iterator<Item = &'static Rule> {
    FAMILIES.iter().flat_map(|(rules, _)| rules.iter()).chain(bench::RULES)
}

/// The `observed.<message id>` findings, one per known message of the knowledge base: id, category,
/// severity.
pub fn observed_rules(kb: &Kb) -> Vec<(String, Category, Severity)> {
    kb.errors.message.iter().map(|m| (messages::finding_id(&m.id), m.category, messages::severity(m))).collect()
}

#[cfg(test)]
pub(crate) use context::Shown;

/// Applies every rule to a snapshot. Findings come errors first, then warnings, then information,
/// each group by id.
pub fn diagnose(snapshot: &Snapshot, kb: &Kb) -> Vec<Finding> {
    diagnose_in(&Ctx::new(snapshot, kb))
}

/// [`diagnose`], with every command and path its fixes show.
#[cfg(test)]
pub(crate) fn diagnose_shown(snapshot: &Snapshot, kb: &Kb) -> (Vec<Finding>, Vec<Shown>) {
    let cx = Ctx::new(snapshot, kb);
    let findings = diagnose_in(&cx);
    (findings, cx.shown.take())
}

fn diagnose_in(cx: &Ctx<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for (_, run) in FAMILIES {
        run(cx, &mut out);
    }
    messages::cite(cx, &mut out);
    messages::run(cx, &mut out);
    message_fix::attach(cx, &mut out);
    for f in &mut out {
        cx.note_unseen(f);
        cx.note_foreign_paths(f);
    }
    out.sort_by(|a, b| (a.severity, &a.id).cmp(&(b.severity, &b.id)));
    out.dedup();
    out
}
