//! CUDA-relevant environment variables.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The environment variables that change how CUDA and the frameworks behave.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EnvFacts {
    /// Relevant variables and their values (see `is_relevant`), without PATH and the loader path,
    /// which are split into entries below. Credentials are masked (see `mask_secret`).
    pub vars: BTreeMap<String, String>,
    /// PATH entries, in order.
    pub path: Vec<String>,
    /// `LD_LIBRARY_PATH` entries, in order; empty when unset.
    pub ld_library_path: Vec<String>,
    /// PATH entries that look like CUDA (contain `cuda` or `nvidia`).
    pub path_cuda_entries: Vec<String>,
    /// The variables of `vars` that a program set for itself while running (Python's
    /// `os.environ["…"] = …` in pasted code), not its environment at start; empty for a machine's
    /// own probe, which reads the environment it starts with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub set_in_process: Vec<String>,
    /// Shell scripts the pasted text shows starting the program (`bash scripts/train.sh`, `./run.sh`):
    /// the environment it ran with is theirs, and their variables may not be in the text. Empty for a
    /// machine's own probe.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub launch_scripts: Vec<String>,
}

impl EnvFacts {
    /// Masks credentials in the variables (see `mask_secret`): for facts that did not come from this
    /// build's probe, such as a pasted report of an older version (`parse::paste`).
    pub fn mask_secrets(&mut self) {
        for (name, value) in &mut self.vars {
            *value = mask_secret(name, value);
        }
    }
}

/// What a credential is replaced with.
pub const MASKED: &str = "[masked]";

/// Parts of a variable name that say its value is a credential.
const SECRET_NAME_PARTS: &[&str] = &["KEY", "TOKEN", "SECRET", "PASS", "AUTH", "CREDENTIAL"];

/// True when a variable's name says its value is a credential (`NVIDIA_API_KEY`, `CUDA_AUTH_TOKEN`).
pub fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_NAME_PARTS.iter().any(|p| upper.contains(p))
}

/// The value as it may be recorded or shown: [`MASKED`] for a variable whose name looks like a
/// credential, else the value with the `user:password@` part of every URL in it masked.
pub fn mask_secret(name: &str, value: &str) -> String {
    if looks_secret(name) { MASKED.to_owned() } else { mask_url_credentials(value) }
}

/// `scheme://user:password@host/…` → `scheme://[masked]@host/…`, for every URL in the text.
pub fn mask_url_credentials(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        // The authority ends at the path, query, fragment or the end of the URL.
        let end =
            tail.find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace() || c == ',').unwrap_or(tail.len());
        match tail[..end].rfind('@') {
            Some(userinfo) => {
                out.push_str(MASKED);
                rest = &tail[userinfo..];
            }
            None => rest = tail,
        }
    }
    out.push_str(rest);
    out
}
