//! A GPU's memory-error counters from NVML, read before and after the benchmark's memory test,
//! and what changed between the two readings.
//!
//! With ECC on, a flipped bit is corrected on the fly, so a memory test that reads back what it
//! wrote sees nothing; only these counters show it. Uncorrectable errors, retired pages (Volta and
//! earlier) and remapped rows (Ampere and later) mean failing memory. GeForce boards have none of
//! these counters: NVML answers "not supported", which is a normal result.

use std::collections::BTreeMap;
use std::time::Duration;

use nvml_wrapper::Device;
use nvml_wrapper::enum_wrappers::device::{EccCounter, MemoryError, RetirementCause};
use nvml_wrapper::enums::device::SampleValue;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::struct_wrappers::device::FieldValueSample;
use nvml_wrapper::structs::device::FieldId;

use super::HostError;
use super::nvml_handle::{device_by_bus, with_deadline};
pub use gpu_doctor_model::EccCounters;

/// NVML field ids of the row-remapping counters (`nvmlDeviceGetRemappedRows` has no wrapper in
/// nvml-wrapper 0.13; the field values carry the same numbers).
const FI_REMAPPED_CORRECTED: u32 = 142;
const FI_REMAPPED_UNCORRECTED: u32 = 143;
const FI_REMAPPED_PENDING: u32 = 144;
const FI_REMAPPED_FAILURE: u32 = 145;

/// NVML's reason in words; an unsupported counter is a normal answer on boards without ECC.
fn reason(e: &NvmlError) -> String {
    match e {
        NvmlError::NotSupported => "not supported by this GPU".to_owned(),
        other => other.to_string(),
    }
}

fn take<T>(unreported: &mut BTreeMap<String, String>, name: &str, r: Result<T, NvmlError>) -> Option<T> {
    keep(unreported, name, r.map_err(|e| reason(&e)))
}

fn keep<T>(unreported: &mut BTreeMap<String, String>, name: &str, r: Result<T, String>) -> Option<T> {
    r.map_err(|why| unreported.insert(name.to_owned(), why)).ok()
}

/// One field value as a count.
fn field_u64(sample: Option<&Result<FieldValueSample, NvmlError>>) -> Result<u64, String> {
    let value = match sample {
        None => return Err("not answered".to_owned()),
        Some(Err(e)) => return Err(reason(e)),
        Some(Ok(s)) => s.value.as_ref().map_err(reason)?,
    };
    match value {
        SampleValue::U32(v) => Ok(u64::from(*v)),
        SampleValue::U64(v) => Ok(*v),
        SampleValue::I64(v) => u64::try_from(*v).map_err(|_| format!("a negative count ({v})")),
        SampleValue::F64(v) => Err(format!("a fractional count ({v})")),
    }
}

/// How long one reading may take before the caller goes on without it.
const READ_DEADLINE: Duration = Duration::from_secs(10);

/// Reads the memory-error counters of the GPU at PCI bus id `bus` now; `HostError::Timeout` when
/// NVML does not answer within 10 s (a GPU that fell off the bus can hold NVML for minutes).
pub fn read_bus(bus: &str) -> Result<EccCounters, HostError> {
    let owned = bus.to_owned();
    with_deadline(&format!("NVML memory-error counters of {bus}"), READ_DEADLINE, move || {
        Ok(read(&device_by_bus(&owned)?))
    })
}

/// Reads one device's memory-error counters now.
pub(super) fn read(d: &Device<'_>) -> EccCounters {
    let mut u = BTreeMap::new();
    let mut c = EccCounters {
        ecc_enabled: take(&mut u, "ecc_enabled", d.is_ecc_enabled().map(|m| m.currently_enabled)),
        corrected_volatile: take(
            &mut u,
            "corrected_volatile",
            d.total_ecc_errors(MemoryError::Corrected, EccCounter::Volatile),
        ),
        corrected_aggregate: take(
            &mut u,
            "corrected_aggregate",
            d.total_ecc_errors(MemoryError::Corrected, EccCounter::Aggregate),
        ),
        uncorrected_volatile: take(
            &mut u,
            "uncorrected_volatile",
            d.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Volatile),
        ),
        uncorrected_aggregate: take(
            &mut u,
            "uncorrected_aggregate",
            d.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Aggregate),
        ),
        retired_pages_single_bit: take(
            &mut u,
            "retired_pages_single_bit",
            d.retired_pages(RetirementCause::MultipleSingleBitEccErrors).map(|p| p.len() as u64),
        ),
        retired_pages_double_bit: take(
            &mut u,
            "retired_pages_double_bit",
            d.retired_pages(RetirementCause::DoubleBitEccError).map(|p| p.len() as u64),
        ),
        retired_pages_pending: take(&mut u, "retired_pages_pending", d.are_pages_pending_retired()),
        ..EccCounters::default()
    };
    let ids = [FI_REMAPPED_CORRECTED, FI_REMAPPED_UNCORRECTED, FI_REMAPPED_PENDING, FI_REMAPPED_FAILURE].map(FieldId);
    // One call for the four fields; when it fails, each field keeps the call's reason.
    let values = d.field_values_for(&ids).map_err(|e| reason(&e));
    let mut field = |key: &str, i: usize| {
        keep(&mut u, key, values.as_ref().map_err(String::clone).and_then(|v| field_u64(v.get(i))))
    };
    c.remapped_rows_corrected = field("remapped_rows_corrected", 0);
    c.remapped_rows_uncorrected = field("remapped_rows_uncorrected", 1);
    c.remapped_rows_pending = field("remapped_rows_pending", 2).map(|v| v != 0);
    c.remapped_rows_failure = field("remapped_rows_failure", 3).map(|v| v != 0);
    c.unreported = u;
    c
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use gpu_doctor_model::EccChange;

    /// Counters of an H100 (ECC, row remapping, no page retirement), as NVML answers them.
    fn h100(corrected: u64, uncorrected: u64, remapped: (u64, u64)) -> EccCounters {
        let mut unreported = BTreeMap::new();
        for key in ["retired_pages_single_bit", "retired_pages_double_bit", "retired_pages_pending"] {
            unreported.insert(key.to_owned(), "not supported by this GPU".to_owned());
        }
        EccCounters {
            ecc_enabled: Some(true),
            corrected_volatile: Some(corrected),
            corrected_aggregate: Some(100 + corrected),
            uncorrected_volatile: Some(uncorrected),
            uncorrected_aggregate: Some(uncorrected),
            remapped_rows_corrected: Some(remapped.0),
            remapped_rows_uncorrected: Some(remapped.1),
            remapped_rows_pending: Some(false),
            remapped_rows_failure: Some(false),
            unreported,
            ..EccCounters::default()
        }
    }

    /// A GeForce board: every counter "not supported".
    fn geforce() -> EccCounters {
        let keys = [
            "ecc_enabled",
            "corrected_volatile",
            "corrected_aggregate",
            "uncorrected_volatile",
            "uncorrected_aggregate",
            "retired_pages_single_bit",
            "retired_pages_double_bit",
            "retired_pages_pending",
            "remapped_rows_corrected",
            "remapped_rows_uncorrected",
            "remapped_rows_pending",
            "remapped_rows_failure",
        ];
        let unreported = keys.iter().map(|k| ((*k).to_owned(), "not supported by this GPU".to_owned())).collect();
        EccCounters { unreported, ..EccCounters::default() }
    }

    #[test]
    fn a_clean_run_changes_nothing() {
        let c = EccChange::between(&h100(5, 0, (1, 0)), &h100(5, 0, (1, 0)));
        assert_eq!(c.corrected, Some(0));
        assert_eq!(c.uncorrected, Some(0));
        assert_eq!(c.remapped_rows, Some(0));
        assert_eq!(c.retired_pages, None);
        assert_eq!(c.not_read, ["retired pages: not supported by this GPU"]);
        assert!(c.compared() && !c.failed());
    }

    #[test]
    fn corrected_errors_are_counted_and_not_a_failure() {
        let c = EccChange::between(&h100(5, 0, (1, 0)), &h100(12, 0, (1, 0)));
        assert_eq!(c.corrected, Some(7));
        assert!(!c.failed());
        assert!(c.summary().contains("7 new corrected errors"), "{}", c.summary());
    }

    #[test]
    fn uncorrected_errors_and_remapped_rows_are_failures() {
        let c = EccChange::between(&h100(5, 0, (1, 0)), &h100(5, 2, (1, 0)));
        assert_eq!(c.uncorrected, Some(2));
        assert!(c.failed());
        let c = EccChange::between(&h100(5, 0, (1, 0)), &h100(5, 0, (2, 1)));
        assert_eq!(c.remapped_rows, Some(2));
        assert!(c.failed());
        let mut pending = h100(5, 0, (1, 0));
        pending.remapped_rows_pending = Some(true);
        let c = EccChange::between(&h100(5, 0, (1, 0)), &pending);
        assert!(c.newly_pending && c.failed(), "{c:?}");
        // Already pending before the test: not new.
        assert!(!EccChange::between(&pending, &pending).failed());
    }

    #[test]
    fn retired_pages_count_both_causes() {
        let v100 = |single: u64, double: u64| EccCounters {
            corrected_volatile: Some(0),
            uncorrected_volatile: Some(0),
            retired_pages_single_bit: Some(single),
            retired_pages_double_bit: Some(double),
            retired_pages_pending: Some(false),
            ..EccCounters::default()
        };
        let c = EccChange::between(&v100(1, 0), &v100(2, 1));
        assert_eq!(c.retired_pages, Some(2));
        assert!(c.failed());
        assert!(c.not_read.iter().any(|n| n.starts_with("remapped rows: not reported")), "{:?}", c.not_read);
    }

    #[test]
    fn a_driver_reload_between_readings_is_seen_in_the_aggregate_count() {
        let before = h100(40, 0, (0, 0));
        let mut after = h100(0, 0, (0, 0));
        after.corrected_aggregate = Some(143);
        let c = EccChange::between(&before, &after);
        assert_eq!(c.corrected, Some(3), "volatile restarted at 0; the aggregate went 140 → 143");
    }

    #[test]
    fn geforce_is_not_supported_not_a_failure() {
        let c = EccChange::between(&geforce(), &geforce());
        assert!(!c.compared() && !c.failed());
        assert_eq!(c.not_read.len(), 4);
        assert!(c.not_read.iter().all(|n| n.ends_with("not supported by this GPU")), "{:?}", c.not_read);
        let u = EccChange::unread("NVML is not available");
        assert!(!u.compared() && !u.failed());
        assert!(u.summary().contains("NVML is not available"));
    }

    #[test]
    fn counters_survive_json() {
        let c = h100(1, 2, (3, 4));
        let back: EccCounters = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c);
    }
}
