//! The NVML library handle, loaded once per process, and how every NVML call is made: with a
//! deadline, by PCI bus id, its error kept as the reason a value is missing.

use std::collections::BTreeMap;
use std::sync::{OnceLock, mpsc};
use std::time::Duration;

use nvml_wrapper::error::NvmlError;
use nvml_wrapper::{Device, Nvml};

use super::HostError;

/// How long the whole NVML query (every device, every function) may take. A GPU that fell off
/// the bus can leave NVML waiting on the driver for minutes; past this the probes go on without it.
pub(super) const QUERY_DEADLINE: Duration = Duration::from_secs(30);

/// Runs `ask` (an NVML call) on a named thread and waits at most `deadline` for its answer. NVML
/// calls cannot be interrupted: a call past its deadline is left running on its thread, which ends
/// when the driver answers, and the caller gets `HostError::Timeout` for `what`.
pub(super) fn with_deadline<T: Send + 'static>(
    what: &str,
    deadline: Duration,
    ask: impl FnOnce() -> Result<T, HostError> + Send + 'static,
) -> Result<T, HostError> {
    let (tx, rx) = mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("gpu-doctor-nvml".to_owned())
        .spawn(move || {
            // The receiver is gone when the caller stopped waiting: the answer is dropped.
            let _ = tx.send(ask());
        })
        .map_err(|e| HostError::Unavailable { message: format!("could not start a thread to ask NVML: {e}") })?;
    match rx.recv_timeout(deadline) {
        Ok(answer) => answer,
        Err(mpsc::RecvTimeoutError::Timeout) => Err(HostError::Timeout {
            after_ms: u64::try_from(deadline.as_millis()).unwrap_or(u64::MAX),
            what: what.to_owned(),
        }),
        // The thread ended without an answer: the call panicked (a missing NVML symbol, a bug).
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Err(HostError::Unavailable { message: format!("{what} failed: the NVML call panicked") })
        }
    }
}

/// NVML, initialised once per process; the error is remembered as text.
pub(super) fn nvml() -> Result<&'static Nvml, HostError> {
    static NVML: OnceLock<Result<Nvml, String>> = OnceLock::new();
    NVML.get_or_init(|| Nvml::init().map_err(|e| describe_init_error(&e)))
        .as_ref()
        .map_err(|message| HostError::Unavailable { message: message.clone() })
}

/// The GPU at PCI bus id `bus` (the ECC counters and telemetry of the GPU a benchmark worker opened
/// by that bus id, whatever the indices under `CUDA_VISIBLE_DEVICES`).
pub(super) fn device_by_bus(bus: &str) -> Result<Device<'static>, HostError> {
    nvml()?
        .device_by_pci_bus_id(bus)
        .map_err(|e| HostError::Unavailable { message: format!("NVML has no GPU at PCI {bus}: {e}") })
}

fn describe_init_error(e: &NvmlError) -> String {
    match e {
        NvmlError::LibloadingError(inner) => {
            format!("the NVML library (libnvidia-ml, part of the NVIDIA driver) could not be loaded: {inner}")
        }
        NvmlError::DriverNotLoaded => "NVML is installed but the NVIDIA kernel driver is not loaded".to_owned(),
        NvmlError::NoPermission => "NVML refused access (no permission to the NVIDIA device files)".to_owned(),
        other => format!("NVML failed to initialise: {other}"),
    }
}

/// Records a call's value, or its error under `name`.
pub(super) fn take<T>(unreported: &mut BTreeMap<String, String>, name: &str, r: Result<T, NvmlError>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            unreported.insert(name.to_owned(), e.to_string());
            None
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_within_the_deadline_is_returned() {
        let answer = with_deadline("a quick call", Duration::from_secs(5), || Ok(42));
        assert_eq!(answer, Ok(42));
        let failed: Result<u32, _> = with_deadline("a failing call", Duration::from_secs(5), || {
            Err(HostError::Unavailable { message: "no NVML".into() })
        });
        assert_eq!(failed, Err(HostError::Unavailable { message: "no NVML".into() }));
    }

    #[test]
    fn a_call_that_panics_is_said_to_have_panicked_not_to_have_timed_out() {
        let started = std::time::Instant::now();
        let answer: Result<u32, _> =
            with_deadline("a broken NVML call", Duration::from_secs(20), || panic!("symbol not found"));
        assert_eq!(
            answer,
            Err(HostError::Unavailable { message: "a broken NVML call failed: the NVML call panicked".into() })
        );
        assert!(started.elapsed() < Duration::from_secs(10), "waited for the deadline");
    }

    #[test]
    fn a_call_past_its_deadline_is_a_timeout_and_the_caller_goes_on() {
        let started = std::time::Instant::now();
        let answer = with_deadline("a hung NVML call", Duration::from_millis(100), || {
            std::thread::sleep(Duration::from_secs(3));
            Ok(1)
        });
        assert_eq!(answer, Err(HostError::Timeout { after_ms: 100, what: "a hung NVML call".into() }));
        assert!(started.elapsed() < Duration::from_secs(2), "did not wait for the hung call");
    }
}
