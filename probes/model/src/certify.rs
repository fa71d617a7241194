//! `Certificate`: what `gpu-doctor certify` concluded about a machine, kept as a file a buyer or an
//! admin can check later: the level, when and how long, which gpu-doctor and knowledge base, the
//! machine's identity, every check (what was measured, against what threshold, from which source,
//! with its verdict), the overall verdict, and a SHA-256 over the rest.
//!
//! The hash is over the certificate's canonical form: `serde_json::to_string` (compact, fields in
//! declaration order, floats in their shortest round-trip form) of the certificate with `sha256`
//! set to the empty string. A certificate read back from its file and written the same way gives
//! the same bytes, so `certify --verify` recomputes the hash from the parsed file; whitespace and
//! indentation of the file do not count, every value does.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::{Dmi, Gpu, PythonEnv, Snapshot};

/// Version of the certificate JSON; bumped on any breaking change.
pub const CERTIFICATE_SCHEMA_VERSION: u32 = 1;

/// How much `certify` runs: each level is the one before plus more load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// 1: every check, every Python environment probed deep, each framework sees every GPU. No GPU load.
    Software,
    /// 2: + the quick benchmark per GPU, and health before and after.
    Quick,
    /// 3: + sustained GEMM load, the memory test, P2P for every pair, bidirectional copies.
    Stress,
    /// 4: level 3 in rounds for `--duration`.
    Soak,
}

impl Level {
    /// Every level, in order.
    pub const ALL: [Self; 4] = [Self::Software, Self::Quick, Self::Stress, Self::Soak];

    /// The level's number, 1 to 4.
    pub fn number(self) -> u8 {
        match self {
            Self::Software => 1,
            Self::Quick => 2,
            Self::Stress => 3,
            Self::Soak => 4,
        }
    }

    /// The level numbered `n` (1 to 4).
    pub fn from_number(n: u8) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.number() == n)
    }

    /// Its name for people, e.g. `software`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Software => "software",
            Self::Quick => "quick",
            Self::Stress => "stress",
            Self::Soak => "soak",
        }
    }
}

/// The answer a certificate gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    /// Every check ran and passed.
    Pass,
    /// Every check ran; none failed, some warned.
    PassWithWarnings,
    /// At least one check failed.
    Fail,
    /// No check failed, but a part could not run (no GPU, a refused test, cancelled): never a pass.
    Incomplete,
}

impl Verdict {
    /// The verdict in words, e.g. `PASS WITH WARNINGS`.
    pub fn label(self) -> &'static str {
        match self {
            Self::Pass => "PASS",
            Self::PassWithWarnings => "PASS WITH WARNINGS",
            Self::Fail => "FAIL",
            Self::Incomplete => "INCOMPLETE",
        }
    }
}

/// One check's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckVerdict {
    /// Measured, and on the right side of its threshold.
    Pass,
    /// Measured and recorded, with nothing to judge it against (no reference for this hardware).
    Info,
    /// Measured, and in the warning band.
    Warn,
    /// Measured, and on the wrong side of its threshold.
    Fail,
    /// Not measured; the measured field says why. Makes the certificate `INCOMPLETE`.
    NotRun,
}

impl CheckVerdict {
    /// Short words for a table.
    pub fn label(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Info => "info",
            Self::Warn => "WARN",
            Self::Fail => "FAIL",
            Self::NotRun => "not run",
        }
    }
}

/// The part of the run a check belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Level 1: the diagnosis and the frameworks' view of the GPUs.
    Software,
    /// Level 2: the quick benchmark and the link under load.
    Benchmark,
    /// Level 2: health before and after (ECC, remapped rows, Xid).
    Health,
    /// Level 3: sustained load, the memory test, P2P, bidirectional copies.
    Stress,
    /// Level 4: rounds of level 3 and the drift between them.
    Soak,
    /// `--against FILE`: this run against a kept certificate.
    Against,
}

impl Stage {
    /// Its name for people.
    pub fn label(self) -> &'static str {
        match self {
            Self::Software => "software",
            Self::Benchmark => "benchmark",
            Self::Health => "health",
            Self::Stress => "stress",
            Self::Soak => "soak",
            Self::Against => "against a kept certificate",
        }
    }
}

/// What a check measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Measured {
    /// A number with its unit, e.g. 24.1 `GB/s`.
    Value {
        /// The number.
        value: f64,
        /// Its unit, e.g. `GB/s`, `TFLOP/s`, `%`, `GPUs`.
        unit: String,
    },
    /// A fact in words, e.g. `torch 2.3.0 sees 2 of 2 GPUs`.
    Text {
        /// The words.
        text: String,
    },
    /// Nothing was measured, and why (a `not_run` check).
    Nothing {
        /// Why, e.g. `no GPU: the driver lists none`.
        why: String,
    },
}

impl Measured {
    /// A number with its unit.
    pub fn value(value: f64, unit: impl Into<String>) -> Self {
        Self::Value { value, unit: unit.into() }
    }

    /// A fact in words.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// Nothing measured, for `why`.
    pub fn nothing(why: impl Into<String>) -> Self {
        Self::Nothing { why: why.into() }
    }

    /// The measurement in words, e.g. `24.1 GB/s`.
    pub fn describe(&self) -> String {
        match self {
            Self::Value { value, unit } => format!("{} {unit}", round_for_people(*value)),
            Self::Text { text } => text.clone(),
            Self::Nothing { why } => format!("not measured: {why}"),
        }
    }
}

/// Three significant figures at most, without trailing zeros: `24.1`, `0.953`, `1200`.
fn round_for_people(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    #[expect(clippy::cast_possible_truncation, reason = "clamped to -6..=2 first")]
    let digits = 2 - v.abs().log10().floor().clamp(-6.0, 2.0) as i32;
    let digits = usize::try_from(digits.max(0)).unwrap_or(0);
    let text = format!("{v:.digits$}");
    if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_owned() } else { text }
}

/// One check: what was measured against which threshold, where the threshold comes from, and
/// the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// Stable dotted id, e.g. `link.under_load`, `framework.sees_gpus`, `finding.driver.too_old`.
    pub id: String,
    /// The stage it belongs to.
    pub stage: Stage,
    /// What it is about, e.g. `GPU 0 (NVIDIA GeForce RTX 4090): PCIe link under load`.
    pub subject: String,
    /// What was measured.
    pub measured: Measured,
    /// The rule, e.g. `pass ≥ 0.95 × first minute; warn below`.
    pub threshold: String,
    /// Where the rule's number comes from (URL, or file and line at a tag).
    pub source: String,
    /// The outcome.
    pub verdict: CheckVerdict,
}

/// How a stage went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageRecord {
    /// The stage.
    pub stage: Stage,
    /// Why the stage did not run, when it did not (its checks are then `not_run`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
    /// Seconds it took.
    pub duration_secs: f64,
    /// Its checks, in the order they were made.
    pub checks: Vec<Check>,
}

/// A GPU as the certificate identifies it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GpuIdentity {
    /// Driver index (NVML order).
    pub index: u32,
    /// Product name.
    pub name: Option<String>,
    /// `GPU-…` UUID.
    pub uuid: Option<String>,
    /// Board serial number; `None` where the driver reports none (GeForce boards) or in
    /// certificates written before gpu-doctor read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// VBIOS version.
    pub vbios_version: Option<String>,
    /// PCI bus id, e.g. `0000:01:00.0`.
    pub pci_bus_id: Option<String>,
}

impl GpuIdentity {
    /// The identity of a probed GPU.
    pub fn of(gpu: &Gpu) -> Self {
        Self {
            index: gpu.index,
            name: gpu.name.clone(),
            uuid: gpu.uuid.clone(),
            serial: gpu.serial.clone(),
            vbios_version: gpu.vbios_version.clone(),
            pci_bus_id: gpu.pci_bus_id.clone(),
        }
    }
}

/// A Python environment and its GPU frameworks.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EnvIdentity {
    /// Display name, e.g. `venv:/home/user/proj/.venv`.
    pub name: String,
    /// Python's version, when known.
    pub python_version: Option<String>,
    /// Each GPU framework as `name version`, e.g. `torch 2.3.0+cu121`.
    pub frameworks: Vec<String>,
}

impl EnvIdentity {
    /// The identity of a found environment.
    pub fn of(env: &PythonEnv) -> Self {
        Self {
            name: env.name.clone(),
            python_version: env.python_version.clone(),
            frameworks: env.frameworks.iter().map(|f| format!("{} {}", f.name, f.version)).collect(),
        }
    }
}

/// Which machine a certificate is about, as far as the probes read it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MachineIdentity {
    /// Host name.
    pub host_name: Option<String>,
    /// CPU model.
    pub cpu_model: Option<String>,
    /// Logical CPUs; `None` when the system facts were not read.
    pub cpu_logical_cores: Option<u32>,
    /// Installed memory, bytes.
    pub memory_total_bytes: Option<u64>,
    /// Board, BIOS and product from DMI; `None` where not read (not Linux, a recording without
    /// them, a certificate written before gpu-doctor read them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dmi: Option<Dmi>,
    /// OS name and version, e.g. `Debian GNU/Linux 12`.
    pub os: Option<String>,
    /// Kernel release.
    pub kernel: Option<String>,
    /// CPU architecture, e.g. `x86_64`.
    pub arch: String,
    /// NVIDIA driver version.
    pub driver_version: Option<String>,
    /// The GPUs, in driver order; empty when the driver lists none.
    pub gpus: Vec<GpuIdentity>,
    /// Why `gpus` is empty, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus_note: Option<String>,
    /// The Python environments found, with their frameworks.
    pub environments: Vec<EnvIdentity>,
}

impl MachineIdentity {
    /// The identity of the machine a snapshot describes.
    pub fn of(snapshot: &Snapshot) -> Self {
        let system = snapshot.system.value();
        let os = system.and_then(|s| match (&s.os_name, &s.os_version) {
            (Some(n), Some(v)) => Some(format!("{n} {v}")),
            (Some(n), None) => Some(n.clone()),
            (None, v) => v.clone(),
        });
        Self {
            host_name: system.and_then(|s| s.host_name.clone()),
            cpu_model: system.and_then(|s| s.cpu_model.clone()),
            cpu_logical_cores: system.map(|s| s.cpu_logical_cores),
            memory_total_bytes: system.map(|s| s.memory_total_bytes),
            dmi: system.and_then(|s| s.dmi.clone()),
            os,
            kernel: system.and_then(|s| s.kernel_version.clone()),
            arch: snapshot.platform.platform.arch.clone(),
            driver_version: snapshot.driver.value().map(|d| d.version.to_string()),
            gpus: snapshot.gpus.value().map(|g| g.iter().map(GpuIdentity::of).collect()).unwrap_or_default(),
            gpus_note: snapshot.gpus.why_not().map(str::to_owned),
            environments: snapshot
                .python_envs
                .value()
                .map(|e| e.iter().map(EnvIdentity::of).collect())
                .unwrap_or_default(),
        }
    }

    /// Whether `other` is the same machine: the same GPUs by UUID (and serial where both have
    /// one), in any order; with no GPU on either side, the same host name, CPU and memory.
    /// `Err` with the difference in words.
    pub fn same_machine(&self, other: &Self) -> Result<String, String> {
        if self.gpus.is_empty() && other.gpus.is_empty() {
            let host = |m: &Self| (m.host_name.clone(), m.cpu_model.clone(), m.memory_total_bytes);
            return if host(self) == host(other) && self.host_name.is_some() {
                Ok("no GPU on either; the same host name, CPU and memory".to_owned())
            } else {
                Err(format!(
                    "no GPU on either, and the host differs: {} against {}",
                    host_words(self),
                    host_words(other)
                ))
            };
        }
        let key = |g: &GpuIdentity| (g.uuid.clone(), g.serial.clone());
        let mut mine: Vec<_> = self.gpus.iter().map(key).collect();
        let mut theirs: Vec<_> = other.gpus.iter().map(key).collect();
        mine.sort();
        theirs.sort();
        if mine.iter().any(|(uuid, _)| uuid.is_none()) {
            return Err("a GPU in the certificate has no UUID to compare".to_owned());
        }
        // The same UUIDs, and for each the same serial where both sides read one.
        let same_serials = mine.iter().zip(&theirs).all(|((_, a), (_, b))| a.is_none() || b.is_none() || a == b);
        let uuids = |v: &[(Option<String>, Option<String>)]| v.iter().map(|(u, _)| u.clone()).collect::<Vec<_>>();
        if uuids(&mine) == uuids(&theirs) && same_serials {
            let serials = mine.iter().zip(&theirs).filter(|((_, a), (_, b))| a.is_some() && b.is_some()).count();
            let by = if serials == 0 { "UUID".to_owned() } else { format!("UUID, and serial for {serials}") };
            Ok(format!("the same {} GPU(s) by {by}", mine.len()))
        } else {
            let words = |v: &[(Option<String>, Option<String>)]| {
                v.iter()
                    .map(|(u, s)| {
                        let uuid = u.as_deref().unwrap_or("no UUID");
                        s.as_deref().map_or_else(|| uuid.to_owned(), |s| format!("{uuid} serial {s}"))
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            Err(format!("GPUs differ: the certificate has [{}], this machine has [{}]", words(&mine), words(&theirs)))
        }
    }
}

fn host_words(m: &MachineIdentity) -> String {
    format!(
        "{} / {} / {} bytes",
        m.host_name.as_deref().unwrap_or("no host name"),
        m.cpu_model.as_deref().unwrap_or("no CPU model"),
        m.memory_total_bytes.map_or_else(|| "unknown".to_owned(), |b| b.to_string())
    )
}

/// A certificate: what `certify` measured and concluded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Certificate {
    /// `CERTIFICATE_SCHEMA_VERSION` of the program that wrote it.
    pub schema_version: u32,
    /// The verdict; first, so that it is the first thing a reader of the file sees.
    pub verdict: Verdict,
    /// Why the verdict is what it is, one line per failed, warning or missing check.
    pub reasons: Vec<String>,
    /// The level run.
    pub level: Level,
    /// When it started, seconds since the Unix epoch.
    pub started_at_unix_secs: u64,
    /// How long it took, seconds.
    pub duration_secs: f64,
    /// gpu-doctor's version.
    pub tool_version: String,
    /// The knowledge base: gpu-doctor's version and the SHA-256 of its embedded tables.
    pub kb_version: String,
    /// Where the facts came from: `this machine`, or `replay of DIR` (a recorded machine).
    pub origin: String,
    /// Which machine.
    pub machine: MachineIdentity,
    /// Each stage with its checks, in the order run.
    pub stages: Vec<StageRecord>,
    /// SHA-256 (lowercase hex) of the canonical form: this certificate as compact JSON with this
    /// field empty (see the module's documentation).
    pub sha256: String,
}

impl Certificate {
    /// Every check, stage by stage.
    pub fn checks(&self) -> impl Iterator<Item = &Check> {
        self.stages.iter().flat_map(|s| &s.checks)
    }

    /// The canonical form the hash is over: compact JSON with `sha256` empty.
    pub fn canonical(&self) -> Result<String, serde_json::Error> {
        let mut unsealed = self.clone();
        unsealed.sha256 = String::new();
        serde_json::to_string(&unsealed)
    }

    /// The SHA-256 of the canonical form, lowercase hex.
    pub fn digest(&self) -> Result<String, serde_json::Error> {
        Ok(sha256_hex(self.canonical()?.as_bytes()))
    }

    /// Sets `sha256` to the digest of the rest.
    pub fn seal(&mut self) -> Result<(), serde_json::Error> {
        self.sha256 = self.digest()?;
        Ok(())
    }

    /// Whether `sha256` is the digest of the rest.
    pub fn intact(&self) -> Result<bool, serde_json::Error> {
        Ok(!self.sha256.is_empty() && self.digest()? == self.sha256)
    }
}

/// The SHA-256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn certificate() -> Certificate {
        Certificate {
            schema_version: CERTIFICATE_SCHEMA_VERSION,
            verdict: Verdict::Pass,
            reasons: Vec::new(),
            level: Level::Software,
            started_at_unix_secs: 1_700_000_000,
            duration_secs: 1.25,
            tool_version: "0.1.0".into(),
            kb_version: "0.1.0".into(),
            origin: "this machine".into(),
            machine: MachineIdentity {
                gpus: vec![GpuIdentity { index: 0, uuid: Some("GPU-1".into()), ..GpuIdentity::default() }],
                ..MachineIdentity::default()
            },
            stages: vec![StageRecord {
                stage: Stage::Software,
                not_run: None,
                duration_secs: 0.5,
                checks: vec![Check {
                    id: "x".into(),
                    stage: Stage::Software,
                    subject: "s".into(),
                    measured: Measured::value(0.953_123, "ratio"),
                    threshold: "t".into(),
                    source: "src".into(),
                    verdict: CheckVerdict::Pass,
                }],
            }],
            sha256: String::new(),
        }
    }

    /// Known SHA-256 values (FIPS 180-2 examples), so the hex is the standard one.
    #[test]
    fn sha256_is_the_standard_one() {
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(sha256_hex(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }

    #[test]
    fn a_sealed_certificate_reads_back_intact_and_any_change_breaks_it() {
        let mut c = certificate();
        assert!(!c.intact().unwrap(), "an unsealed certificate is not intact");
        c.seal().unwrap();
        assert_eq!(c.sha256.len(), 64);
        let pretty = serde_json::to_string_pretty(&c).unwrap();
        let back: Certificate = serde_json::from_str(&pretty).unwrap();
        assert!(back.intact().unwrap(), "pretty-printed and read back, the canonical form is the same");
        let mut changed = back.clone();
        changed.duration_secs = 1.26;
        assert!(!changed.intact().unwrap());
        let mut changed = back;
        changed.stages[0].checks[0].verdict = CheckVerdict::Fail;
        assert!(!changed.intact().unwrap());
    }

    #[test]
    fn the_verdict_is_written_in_capitals_and_first() {
        let json = serde_json::to_string(&certificate()).unwrap();
        assert!(json.starts_with(r#"{"schema_version":1,"verdict":"PASS","#), "{json}");
        let v: Verdict = serde_json::from_str(r#""PASS_WITH_WARNINGS""#).unwrap();
        assert_eq!(v, Verdict::PassWithWarnings);
    }

    #[test]
    fn the_same_machine_is_told_by_gpu_uuid_or_without_gpus_by_host() {
        let a = certificate().machine;
        let mut b = a.clone();
        b.host_name = Some("other".into());
        assert!(a.same_machine(&b).is_ok(), "GPUs decide when there are any");
        b.gpus[0].uuid = Some("GPU-2".into());
        assert!(a.same_machine(&b).unwrap_err().contains("GPU-2"));
        let host = MachineIdentity { host_name: Some("h".into()), cpu_model: Some("c".into()), ..a };
        let host = MachineIdentity { gpus: Vec::new(), ..host };
        assert!(host.same_machine(&host.clone()).is_ok());
        let other = MachineIdentity { host_name: Some("h2".into()), ..host.clone() };
        assert!(host.same_machine(&other).is_err());
    }

    #[test]
    fn the_same_uuid_with_another_serial_is_another_machine() {
        let mut a = certificate().machine;
        a.gpus[0].serial = Some("1324021012345".into());
        let mut b = a.clone();
        assert!(a.same_machine(&b).unwrap().contains("serial"), "{:?}", a.same_machine(&b));
        b.gpus[0].serial = Some("1324021099999".into());
        let err = a.same_machine(&b).unwrap_err();
        assert!(err.contains("1324021099999"), "{err}");
        b.gpus[0].serial = None;
        assert!(a.same_machine(&b).is_ok(), "a side that read no serial is told by UUID alone");
    }

    #[test]
    fn a_certificate_without_dmi_or_serials_reads_and_keeps_its_hash() {
        let mut c = certificate();
        c.seal().unwrap();
        let json = serde_json::to_string(&c).unwrap();
        assert!(!json.contains("dmi") && !json.contains("serial"), "nothing written where nothing was read: {json}");
        let back: Certificate = serde_json::from_str(&json).unwrap();
        assert!(back.intact().unwrap());
    }

    #[test]
    fn numbers_read_with_three_figures() {
        assert_eq!(Measured::value(24.123, "GB/s").describe(), "24.1 GB/s");
        assert_eq!(Measured::value(0.95312, "×").describe(), "0.953 ×");
        assert_eq!(Measured::value(1234.0, "MHz").describe(), "1234 MHz");
        assert_eq!(Measured::value(2.0, "GPUs").describe(), "2 GPUs");
    }
}
