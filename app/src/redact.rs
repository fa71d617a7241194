//! `report --redact`: the report without what points to a person or a machine: user and host
//! names, home-folder paths, serial numbers and UUIDs, everywhere (facts, findings, the probe
//! trace, the included benchmark run).
//!
//! Who to hide comes from the report itself: the host name in the system facts, the home folder
//! and user variables in the environment facts, and every `/home/NAME`, `/Users/NAME` or
//! `C:\Users\NAME` path in it. Since a home can lie anywhere (`/scratch/NAME` on clusters), the
//! home and name of the user running gpu-doctor are hidden too, and `/root` is always a home. Placeholders are stable within a report: the first user's home is `~` and the
//! next ones `~user2`, `~user3`; each distinct UUID gets its own number (`GPU-redacted-1`,
//! `GPU-redacted-2`), so two GPUs stay two GPUs.

use std::collections::HashMap;

use gpu_doctor_model::Report;
use regex::{Captures, Regex};

/// What a serial number is replaced with.
pub const REDACTED: &str = "redacted";

/// Account and host names that identify nobody or are words a report uses (`Ubuntu 22.04`), so
/// they are replaced only where they are a whole value (a home folder still becomes `~`).
const COMMON_NAMES: [&str; 36] = [
    "root",
    "user",
    "users",
    "admin",
    "administrator",
    "ubuntu",
    "debian",
    "fedora",
    "centos",
    "rocky",
    "alma",
    "arch",
    "archlinux",
    "manjaro",
    "mint",
    "kali",
    "pop-os",
    "opensuse",
    "linux",
    "raspberrypi",
    "runner",
    "guest",
    "home",
    "host",
    "test",
    "dev",
    "data",
    "docker",
    "python",
    "conda",
    "cuda",
    "nvidia",
    "gpu",
    "torch",
    "lib",
    "bin",
];
/// Folders under a home root that belong to nobody.
const SHARED_HOMES: [&str; 6] = ["shared", "public", "default", "default user", "all users", "linuxbrew"];
/// Folders that may be a service account's home but hold the system's own files.
const SYSTEM_FOLDERS: [&str; 6] = ["/usr/local", "/usr/lib", "/usr/share", "/var/lib", "/var/empty", "/var/run"];
/// Characters that may stand before a path that starts a value (`PATH=/home/…`, `"/home/…`).
const PATH_STARTS_AFTER: &str = " \t\r\n=:;,\"'`([{<>|";

/// Why a report could not be redacted (a bug: neither should ever happen).
#[derive(Debug, thiserror::Error)]
pub enum RedactError {
    /// The report did not go to JSON and back.
    #[error("the report could not be converted for redaction: {0}")]
    Json(#[from] serde_json::Error),
    /// A pattern did not compile.
    #[error("a redaction pattern did not compile: {0}")]
    Pattern(#[from] regex::Error),
}

/// Who runs gpu-doctor: a report of this machine names them wherever their home lies.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    /// The user name.
    pub user: Option<String>,
    /// The home folder.
    pub home: Option<String>,
}

impl Identity {
    /// The user running this process: `HOME` (`USERPROFILE` on Windows) and `USER`, `USERNAME` or `LOGNAME`.
    pub fn of_process() -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        Self {
            user: ["USER", "USERNAME", "LOGNAME"].into_iter().find_map(var),
            home: if cfg!(windows) { var("USERPROFILE") } else { var("HOME") },
        }
    }
}

/// The report with user and host names, home folders, serial numbers and UUIDs replaced, hiding
/// also the user running gpu-doctor.
pub fn redact(report: &Report) -> Result<Report, RedactError> {
    redact_as(report, &Identity::of_process())
}

/// The report with user and host names, home folders, serial numbers and UUIDs replaced, as seen by
/// `me` (whose home and name are hidden too, wherever the home lies).
pub fn redact_as(report: &Report, me: &Identity) -> Result<Report, RedactError> {
    let mut value = serde_json::to_value(report)?;
    let mut redactor = Redactor::new(report, &value, me)?;
    gpu_doctor_probes::rewrite::strings(&mut value, &mut |field, text| redactor.text(field, text));
    Ok(serde_json::from_value(value)?)
}

/// The replacements for one report.
struct Redactor {
    /// The host name as a whole word (names of three characters or more).
    host_word: Option<Regex>,
    /// The host name, replaced where it is a whole value.
    host: Option<String>,
    /// Home-folder paths: `root` and `name`.
    homes: Regex,
    /// Home folders known as whole paths (`/scratch/alice`, `/root`) and their users, longest first.
    known_homes: Vec<(String, String)>,
    /// User names in placeholder order.
    users: Vec<String>,
    /// The user names worth replacing as whole words.
    user_words: Option<Regex>,
    /// UUIDs, optionally with NVIDIA's `GPU-`/`MIG-` prefix.
    uuids: Regex,
    /// Each UUID seen (lower case) and its number.
    uuid_numbers: HashMap<String, usize>,
    /// `Serial Number : 1324…` and `serial=…` in text.
    serial_text: Regex,
    /// `<serial>…</serial>` in nvidia-smi's XML.
    serial_xml: Regex,
}

/// Whether a value says there is nothing there, so there is nothing to hide.
fn not_a_value(text: &str) -> bool {
    let t = text.trim().trim_matches(['[', ']']).to_ascii_lowercase();
    matches!(t.as_str(), "" | "n/a" | "na" | "none" | "null" | "unknown" | "not available" | "not supported" | "0")
}

impl Redactor {
    fn new(report: &Report, value: &serde_json::Value, me: &Identity) -> Result<Self, regex::Error> {
        let homes = Regex::new(
            r#"(?P<root>/home|/var/home|/Users|[A-Za-z]:[\\/]Users)[\\/](?P<name>[^\\/\s"'`:;,=()<>|*?$%{}\[\]]+)"#,
        )?;

        // Users, most certain first: the home folder, the user variables, then paths in order.
        let snap = &report.snapshot;
        let mut users: Vec<String> = Vec::new();
        let mut add = |name: &str| {
            let name = name.trim();
            let shared = SHARED_HOMES.contains(&name.to_lowercase().as_str());
            if !name.is_empty() && !shared && !users.iter().any(|u| u.eq_ignore_ascii_case(name)) {
                users.push(name.to_owned());
            }
        };
        for var in ["HOME", "USERPROFILE"] {
            if let Some(c) = snap.env.vars.get(var).and_then(|h| homes.captures(h)) {
                add(&c["name"]);
            }
        }
        for var in ["USER", "USERNAME", "LOGNAME"] {
            if let Some(u) = snap.env.vars.get(var) {
                add(u);
            }
        }
        // Homes wherever they lie (clusters use /scratch/NAME, /data/NAME, …): the report's own home
        // variables, then the running user's (both before the names found in paths), and root's.
        let mut known_homes: Vec<(String, String)> = Vec::new();
        let add_home = |known_homes: &mut Vec<(String, String)>, home: &str, user: Option<&str>| {
            let home = home.trim().trim_end_matches(['/', '\\']);
            let last = home.rsplit(['/', '\\']).next().unwrap_or_default();
            let user = user.unwrap_or(last).trim();
            let absolute = home.starts_with('/') || home.get(1..3).is_some_and(|s| s == ":\\" || s == ":/");
            // A home that is a system folder (`/`, `/usr`, `/var/lib`: service accounts) would hide the
            // system's own paths; root's is the one home of a single component.
            let parts = home.split(['/', '\\']).filter(|p| !p.is_empty()).count();
            let system = SYSTEM_FOLDERS.contains(&home.to_ascii_lowercase().as_str());
            let real = (parts >= 2 || home == "/root") && !system;
            if absolute && real && !user.is_empty() && !known_homes.iter().any(|(h, _)| h == home) {
                known_homes.push((home.to_owned(), user.to_owned()));
            }
        };
        for var in ["HOME", "USERPROFILE"] {
            if let Some(h) = snap.env.vars.get(var) {
                add_home(&mut known_homes, h, None);
            }
        }
        if let Some(h) = &me.home {
            add_home(&mut known_homes, h, me.user.as_deref());
        }
        for (_, user) in &known_homes {
            add(user);
        }
        if let Some(u) = &me.user {
            add(u);
        }
        let mut scan = value.clone();
        gpu_doctor_probes::rewrite::strings(&mut scan, &mut |_, text| {
            for c in homes.captures_iter(text) {
                add(&c["name"]);
            }
            String::new()
        });
        add_home(&mut known_homes, "/root", Some("root"));
        add("root");
        known_homes.sort_by_key(|(h, _)| std::cmp::Reverse(h.len()));

        let words: Vec<String> = users
            .iter()
            .filter(|u| u.chars().count() >= 3 && !COMMON_NAMES.contains(&u.to_lowercase().as_str()))
            .map(|u| regex::escape(u))
            .collect();
        let user_words =
            if words.is_empty() { None } else { Some(Regex::new(&format!(r"(?i)\b(?:{})\b", words.join("|")))?) };

        let host = snap.system.value().and_then(|s| s.host_name.clone()).map(|h| h.trim().to_owned());
        let host = host.filter(|h| !h.is_empty() && !h.eq_ignore_ascii_case("localhost"));
        let host_word = match host
            .as_deref()
            .filter(|h| h.chars().count() >= 3 && !COMMON_NAMES.contains(&h.to_lowercase().as_str()))
        {
            Some(h) => Some(Regex::new(&format!(r"(?i)\b{}\b", regex::escape(h)))?),
            None => None,
        };

        Ok(Self {
            host_word,
            host,
            homes,
            known_homes,
            users,
            user_words,
            uuids: Regex::new(
                r"(?i)\b(?P<prefix>GPU-|MIG-)?(?P<hex>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b",
            )?,
            uuid_numbers: HashMap::new(),
            serial_text: Regex::new(r"(?i)(?P<label>\bserial(?:[ _]?number)?\s*[:=]\s*)(?P<value>[^\s,;<>]+)")?,
            serial_xml: Regex::new(r"(?i)(?P<open><(?:board_)?serial>)(?P<value>[^<]*)(?P<close></)")?,
        })
    }

    /// The placeholder of the user with this name.
    fn user(&self, name: &str) -> String {
        match self.users.iter().position(|u| u.eq_ignore_ascii_case(name)) {
            Some(0) | None => "user".to_owned(),
            Some(i) => format!("user{}", i + 1),
        }
    }

    /// One string, stored under `field` (`None` for keys and top-level values).
    fn text(&mut self, field: Option<&str>, text: &str) -> String {
        if field.is_some_and(|f| f.to_ascii_lowercase().contains("serial")) && !not_a_value(text) {
            return REDACTED.to_owned();
        }
        if self.host.as_deref() == Some(text.trim()) {
            return "host".to_owned();
        }
        let mut out = text.to_owned();
        if let Some(re) = &self.host_word {
            out = re.replace_all(&out, "host").into_owned();
        }
        out = self.home_paths(&out);
        if let Some(re) = &self.user_words {
            out = re.replace_all(&out, |c: &Captures<'_>| self.user(&c[0])).into_owned();
        }
        out = self.uuids(&out);
        out = self
            .serial_text
            .replace_all(&out, |c: &Captures<'_>| {
                if not_a_value(&c["value"]) { c[0].to_owned() } else { format!("{}{REDACTED}", &c["label"]) }
            })
            .into_owned();
        self.serial_xml
            .replace_all(&out, |c: &Captures<'_>| {
                if not_a_value(&c["value"]) {
                    c[0].to_owned()
                } else {
                    format!("{}{REDACTED}{}", &c["open"], &c["close"])
                }
            })
            .into_owned()
    }

    /// Home folders: `~` (or `~user2`) where the path starts a value, else only the name replaced
    /// (`/mnt/c/Users/user`). Homes known as whole paths are replaced only where they start a value
    /// and end at a path separator or the end of the value.
    fn home_paths(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for (home, user) in &self.known_homes {
            text = self.known_home(&text, home, user);
        }
        let text = text.as_str();
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for c in self.homes.captures_iter(text) {
            let (Some(all), Some(name)) = (c.get(0), c.name("name")) else { continue };
            if SHARED_HOMES.contains(&name.as_str().to_lowercase().as_str()) {
                continue;
            }
            out.push_str(&text[last..all.start()]);
            let placeholder = self.user(name.as_str());
            let starts_value = text[..all.start()].chars().last().is_none_or(|p| PATH_STARTS_AFTER.contains(p));
            if starts_value {
                out.push('~');
                if placeholder != "user" {
                    out.push_str(&placeholder);
                }
            } else {
                out.push_str(&text[all.start()..name.start()]);
                out.push_str(&placeholder);
            }
            last = all.end();
        }
        out.push_str(&text[last..]);
        out
    }

    /// `home` replaced with `~` (or `~user2`) where it is a whole path at the start of a value.
    fn known_home(&self, text: &str, home: &str, user: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for (at, _) in text.match_indices(home) {
            let end = at + home.len();
            if at < last {
                continue;
            }
            let starts_value = text[..at].chars().last().is_none_or(|p| PATH_STARTS_AFTER.contains(p));
            let whole =
                text[end..].chars().next().is_none_or(|n| n == '/' || n == '\\' || PATH_STARTS_AFTER.contains(n));
            if !(starts_value && whole) {
                continue;
            }
            out.push_str(&text[last..at]);
            out.push('~');
            let placeholder = self.user(user);
            if placeholder != "user" {
                out.push_str(&placeholder);
            }
            last = end;
        }
        out.push_str(&text[last..]);
        out
    }

    /// UUIDs: `GPU-redacted-1`, `MIG-redacted-2`, `uuid-redacted-3`, one number per UUID.
    fn uuids(&mut self, text: &str) -> String {
        let Self { uuids, uuid_numbers, .. } = self;
        uuids
            .replace_all(text, |c: &Captures<'_>| {
                let next = uuid_numbers.len() + 1;
                let n = *uuid_numbers.entry(c["hex"].to_ascii_lowercase()).or_insert(next);
                match c.name("prefix") {
                    Some(p) => format!("{}redacted-{n}", p.as_str().to_ascii_uppercase()),
                    None => format!("uuid-redacted-{n}"),
                }
            })
            .into_owned()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use gpu_doctor_kb::Kb;
    use gpu_doctor_model::bench::plan::{BenchPlan, TestKind};
    use gpu_doctor_model::bench::record::{RunRecord, WorkerOutcome};
    use gpu_doctor_model::bench::run::BenchRun;
    use gpu_doctor_model::bench::verdict::Facts;
    use gpu_doctor_model::{Category, Finding, Outcome, Probed, Severity, TraceEntry};

    use super::*;
    use crate::render::html::tests::fixture_report;

    const GPU_A: &str = "GPU-4e5f6a7b-8c9d-0e1f-2a3b-4c5d6e7f8091";
    const GPU_B: &str = "GPU-0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0";
    const MIG: &str = "MIG-aa11bb22-cc33-dd44-ee55-ff6677889900";
    const BARE: &str = "123e4567-e89b-12d3-a456-426614174000";

    /// A replayed report with a person and a machine written all over it.
    fn personal_report() -> Report {
        let mut r = fixture_report("egpu-thunderbolt");
        let s = &mut r.snapshot;
        if let Probed::Found { value, .. } = &mut s.system {
            value.host_name = Some("alice-laptop".into());
        }
        if let Probed::Found { value, .. } = &mut s.gpus {
            value[0].uuid = Some(GPU_A.into());
        }
        s.env.vars.insert("HOME".into(), "/home/alice".into());
        s.env.vars.insert("CUDA_HOME".into(), "/home/alice/cuda-12.4".into());
        s.env.path.push("/home/alice/.local/bin".into());
        s.env.path.push(r"C:\Users\Alice\AppData\Local\Programs\Python".into());
        s.env.path.push("/mnt/c/Users/Alice/bin".into());
        s.trace.push(TraceEntry {
            probe: "gpus".into(),
            method: "nvidia-smi -q".into(),
            outcome: Outcome::Ok,
            detail: format!(
                "Serial Number : 1324023012345; GPU UUID : {GPU_B}; <serial>0423918012345</serial> on alice-laptop"
            ),
        });
        r.findings.push(Finding {
            id: "x.paths".into(),
            category: Category::Other,
            severity: Severity::Info,
            summary: "alice's other environment at /home/bob/miniconda3/bin/python".into(),
            detail: format!("device {BARE} and {MIG}; PATH=/home/bob/bin:/usr/bin"),
            evidence: vec![format!("{GPU_A} again"), "Serial Number: N/A".into()],
            explains: Vec::new(),
            fix: Some("ssh alice@alice-laptop 'ls /home/alice'".into()),
            plan: None,
        });
        r.bench = Some(personal_run());
        r
    }

    /// A benchmark run whose worker saw a home folder, a bare UUID and a serial number.
    fn personal_run() -> BenchRun {
        let record = RunRecord {
            worker: WorkerOutcome {
                library_path: Some("/home/alice/.venv/lib/python3.12/site-packages/nvidia/cublas/lib".into()),
                stderr_tail: format!("CUDA error on {}, serial=PX1234567", GPU_B[4..].to_uppercase()),
                ..WorkerOutcome::default()
            },
            ..RunRecord::default()
        };
        gpu_doctor_judge::bench::run::assemble(&BenchPlan::preset(0, vec![TestKind::Cpu], true), record, |_| {
            Facts::default()
        })
    }

    #[test]
    fn nothing_personal_survives_anywhere() {
        let before = personal_report();
        let text = serde_json::to_string(&before).unwrap();
        for needle in ["alice", "/home/", GPU_A, "1324023012345"] {
            assert!(text.contains(needle), "the test report should contain {needle}");
        }
        let after = redact_as(&before, &Identity::default()).unwrap();
        let text = serde_json::to_string(&after).unwrap();
        for gone in [
            "alice",
            "Alice",
            "bob",
            "/home/",
            "Users\\\\Alice",
            "1324023012345",
            "0423918012345",
            "PX1234567",
            &GPU_A[4..],
            &GPU_B[4..],
            &MIG[4..],
            BARE,
        ] {
            assert!(!text.contains(gone), "{gone} survived in {text}");
        }
        // Every UUID of the fixture is gone too, whatever field holds it.
        assert!(
            !Regex::new(r"(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}").unwrap().is_match(&text)
        );

        let s = &after.snapshot;
        assert_eq!(s.system.value().unwrap().host_name.as_deref(), Some("host"));
        assert_eq!(s.env.vars["HOME"], "~");
        assert_eq!(s.env.vars["CUDA_HOME"], "~/cuda-12.4");
        assert!(s.env.path.contains(&"~/.local/bin".to_owned()), "{:?}", s.env.path);
        assert!(s.env.path.contains(&r"~\AppData\Local\Programs\Python".to_owned()), "{:?}", s.env.path);
        assert!(s.env.path.contains(&"/mnt/c/Users/user/bin".to_owned()), "{:?}", s.env.path);
        let f = after.findings.last().unwrap();
        let bob = Regex::new(r"^user's other environment at (~user\d)/miniconda3/bin/python$").unwrap();
        let bob = &bob.captures(&f.summary).unwrap_or_else(|| panic!("{}", f.summary))[1];
        let detail =
            Regex::new(r"^device uuid-redacted-\d+ and MIG-redacted-\d+; PATH=(~user\d)/bin:/usr/bin$").unwrap();
        assert_eq!(&detail.captures(&f.detail).unwrap_or_else(|| panic!("{}", f.detail))[1], bob, "one user, one name");
        assert_eq!(f.evidence[1], "Serial Number: N/A", "nothing to hide");
        assert_eq!(f.fix.as_deref(), Some("ssh user@host 'ls ~'"));
        // The same GPU keeps its number wherever it appears; another GPU gets another.
        let a = s.gpus.value().unwrap()[0].uuid.clone().unwrap();
        assert!(a.starts_with("GPU-redacted-"), "{a}");
        assert_eq!(f.evidence[0], format!("{a} again"));
        let worker = &after.bench.as_ref().unwrap().worker;
        let b = Regex::new(r"^CUDA error on uuid-redacted-(\d+), serial=redacted$").unwrap();
        let b = &b.captures(&worker.stderr_tail).unwrap_or_else(|| panic!("{}", worker.stderr_tail))[1];
        assert_ne!(format!("GPU-redacted-{b}"), a);
        let trace = &s.trace.last().unwrap().detail;
        assert_eq!(
            trace,
            &format!("Serial Number : redacted; GPU UUID : GPU-redacted-{b}; <serial>redacted</serial> on host")
        );
        assert!(worker.library_path.as_deref().unwrap().starts_with("~/.venv/"));
    }

    #[test]
    fn a_report_without_anything_personal_is_unchanged() {
        let samples = [
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/collect_env_linux_cu124.txt")),
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/collect_env_old_four_gpus.txt")),
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/collect_env_windows_cpu.txt")),
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/healthy.txt")),
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/jax_env.txt")),
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/pip_list.txt")),
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/tf_prints.txt")),
        ];
        let kb = Kb::get().unwrap();
        let mut findings = 0;
        for (i, text) in samples.iter().enumerate() {
            let snap = gpu_doctor_probes::parse::paste::read_pasted(text, kb).unwrap();
            let report = Report::new(snap.clone(), gpu_doctor_judge::diagnose::diagnose(&snap, kb));
            findings += report.findings.len();
            assert!(
                redact_as(&report, &Identity::default()).unwrap() == report,
                "sample {i} has nothing to hide, yet it changed"
            );
        }
        assert!(findings > 0, "the samples should give findings to leave alone");
    }

    /// A report of a cluster node, where homes live outside `/home`, with root's files too.
    fn cluster_report() -> Report {
        let mut r = fixture_report("egpu-thunderbolt");
        let s = &mut r.snapshot;
        s.env.path.insert(0, "/scratch/alice/.local/bin".into());
        s.env.path.push("/root/miniconda3/bin".into());
        s.env.vars.insert("CUDA_HOME".into(), "/scratch/alice/cuda-12.4".into());
        r.findings.push(Finding {
            id: "x.cluster".into(),
            category: Category::Other,
            severity: Severity::Info,
            summary: "an environment at /scratch/alice/envs/a and one at /root/.venv".into(),
            detail: "PATH=/scratch/alice/bin:/usr/bin; /scratch/alice; /scratch/alicebob stays; /mnt/root stays".into(),
            evidence: Vec::new(),
            explains: Vec::new(),
            fix: Some("/scratch/alice/envs/a/bin/python -m pip install x".into()),
            plan: None,
        });
        r
    }

    #[test]
    fn homes_outside_home_come_from_the_process_and_root_is_a_home_too() {
        let me = Identity { user: Some("alice".into()), home: Some("/scratch/alice".into()) };
        let after = redact_as(&cluster_report(), &me).unwrap();
        let text = serde_json::to_string(&after).unwrap();
        assert!(!text.contains("alice\"") && !text.contains("/scratch/alice/"), "{text}");
        assert!(!text.contains("/root/"), "root's home survived: {text}");
        let s = &after.snapshot;
        assert_eq!(s.env.path[0], "~/.local/bin");
        assert_eq!(s.env.vars["CUDA_HOME"], "~/cuda-12.4");
        let root = s.env.path.last().unwrap();
        assert!(root.starts_with("~user") && root.ends_with("/miniconda3/bin"), "{root}");
        let f = after.findings.last().unwrap();
        assert_eq!(f.summary, format!("an environment at ~/envs/a and one at {}/.venv", &root[..root.len() - 15]));
        assert_eq!(
            f.detail,
            "PATH=~/bin:/usr/bin; ~; /scratch/userbob stays; /mnt/root stays".replace("userbob", "alicebob")
        );
        assert_eq!(f.fix.as_deref(), Some("~/envs/a/bin/python -m pip install x"));
    }

    #[test]
    fn a_home_that_is_a_system_folder_hides_nothing() {
        let before = cluster_report();
        for home in ["/", "/usr", "/tmp", "/usr/local", "/var/lib"] {
            let me = Identity { user: Some("svc".into()), home: Some(home.into()) };
            let after = redact_as(&before, &me).unwrap();
            assert_eq!(after.snapshot.env.path[1], "/usr/local/sbin", "{home}");
            assert_eq!(after.snapshot.env.path[4], "/usr/bin", "{home}");
        }
    }

    #[test]
    fn the_home_variable_of_the_report_counts_wherever_it_lies() {
        let mut r = cluster_report();
        r.snapshot.env.vars.insert("HOME".into(), "/scratch/alice".into());
        let after = redact_as(&r, &Identity::default()).unwrap();
        let text = serde_json::to_string(&after).unwrap();
        assert!(!text.contains("/scratch/alice/"), "{text}");
        assert_eq!(after.snapshot.env.vars["HOME"], "~");
    }

    #[test]
    fn short_or_common_names_are_only_replaced_where_they_are_the_value() {
        for host in ["vm", "ubuntu"] {
            let mut r = fixture_report("no-driver");
            if let Probed::Found { value, .. } = &mut r.snapshot.system {
                value.host_name = Some(host.into());
                value.os_name = Some("Ubuntu".into());
            }
            r.snapshot.env.vars.insert("HOME".into(), "/home/ubuntu".into());
            r.findings.push(Finding {
                id: "x".into(),
                category: Category::Other,
                severity: Severity::Info,
                summary: "Ubuntu on a vm; ubuntu-drivers lists nvm".into(),
                detail: String::new(),
                evidence: Vec::new(),
                explains: Vec::new(),
                fix: None,
                plan: None,
            });
            let after = redact_as(&r, &Identity::default()).unwrap();
            let system = after.snapshot.system.value().unwrap();
            assert_eq!(system.host_name.as_deref(), Some("host"));
            assert_eq!(system.os_name.as_deref(), Some("Ubuntu"));
            assert_eq!(after.snapshot.env.vars["HOME"], "~");
            assert_eq!(after.findings.last().unwrap().summary, "Ubuntu on a vm; ubuntu-drivers lists nvm");
        }
    }
}
