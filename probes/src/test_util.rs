//! Helpers shared by the tests.

use std::sync::mpsc;
use std::time::Duration;

/// How long one property-test case may take before it counts as a hang: far beyond what any case
/// needs (well under a second, unoptimized), so a busy machine does not fail it.
pub(crate) const CASE_LIMIT: Duration = Duration::from_secs(20);

/// Runs `f` on its own thread and returns its answer; a panic in `f` is raised again here, and a
/// run past `limit` panics as a hang (the thread is left to finish on its own).
pub(crate) fn bounded<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    within(limit, f).unwrap_or_else(|| panic!("the case ran past {limit:?}: a hang"))
}

/// Runs `f` on its own thread and returns its answer, or `None` when it runs past `limit` (the
/// thread is left to finish on its own); a panic in `f` is raised again here.
pub(crate) fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = mpsc::sync_channel(1);
    let worker = std::thread::Builder::new()
        .name("bounded-case".into())
        .spawn(move || {
            let _ = tx.send(f());
        })
        .unwrap();
    match rx.recv_timeout(limit) {
        Ok(v) => Some(v),
        Err(mpsc::RecvTimeoutError::Disconnected) => match worker.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => panic!("the case ended without an answer"),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_past_its_limit_fails_as_a_hang() {
        let hang = std::panic::catch_unwind(|| bounded(Duration::from_millis(50), std::thread::park));
        let message = hang.unwrap_err();
        assert!(message.downcast_ref::<String>().is_some_and(|m| m.contains("hang")));
    }

    #[test]
    fn a_panic_in_the_case_is_raised_again_and_an_answer_comes_back() {
        assert!(std::panic::catch_unwind(|| bounded(CASE_LIMIT, || panic!("boom"))).is_err());
        assert_eq!(bounded(CASE_LIMIT, || 7), 7);
    }
}
