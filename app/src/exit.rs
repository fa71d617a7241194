//! Every exit code gpu-doctor ends with, and the errors that choose one: the one place the command
//! line, the window and `bench` take them from.

use gpu_doctor_model::{Finding, Severity};

/// The command ran (for `check` and `diagnose`: and found no error; for `bench`: every requested
/// test ran and passed its checks).
pub const OK: u8 = 0;
/// `check` and `diagnose`: at least one error-level finding.
pub const FINDINGS: u8 = 1;
/// `bench`: some test did not run, failed, or failed a check.
pub const INCOMPLETE: u8 = 1;
/// `certify`: the certificate says PASS WITH WARNINGS (PASS is 0, FAIL is 1).
pub const CERTIFY_WARNINGS: u8 = 5;
/// `certify`: the certificate says INCOMPLETE: a part could not run (no GPU, a replay, a refused test).
pub const CERTIFY_INCOMPLETE: u8 = 6;
/// `certify --verify`: the file is intact but describes another machine (an altered file is 1).
pub const VERIFY_OTHER_MACHINE: u8 = 7;
/// The command line was wrong (clap's own usage errors, and combinations it cannot see, such as
/// `--replay` with `record-fixture` or `--screenshot` without a display).
pub const USAGE: u8 = 2;
/// An input (a replay folder, a file, pasted text) could not be read.
pub const INPUT: u8 = 3;
/// gpu-doctor itself failed (a report could not be written, the bench worker could not be found,
/// a bug).
pub const INTERNAL: u8 = 4;

/// An input that could not be read (exit code 3).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

/// A command line that cannot be carried out as given, beyond what clap checks (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// 2 for a usage error (also a file that needs `--force`), 3 for an input error, else 4.
pub fn for_error(e: &anyhow::Error) -> u8 {
    if e.downcast_ref::<UsageError>().is_some() || e.downcast_ref::<crate::files::AlreadyThere>().is_some() {
        USAGE
    } else if e.downcast_ref::<InputError>().is_some() {
        INPUT
    } else {
        INTERNAL
    }
}

/// 1 when any finding is an error, else 0.
pub fn for_findings(findings: &[Finding]) -> u8 {
    if findings.iter().any(|f| f.severity == Severity::Error) { FINDINGS } else { OK }
}
