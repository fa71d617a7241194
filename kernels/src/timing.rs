//! When to start measuring and how much to put between one pair of timing events. Pure
//! arithmetic over an injected clock and injected work, so it is tested without a GPU; the CUDA
//! side (`gpu/mod.rs`) supplies the real clock, the work and the events.

use std::time::Duration;

/// GPU work a test runs before its first measurement. A few operations (≈ 1.5 ms) leave a GeForce
/// board's memory and SM clocks at idle; they ramp up within 100–200 ms of load.
pub const WARMUP_MIN: Duration = Duration::from_millis(250);
/// The most operations one warm-up runs, whatever the clock says (a clock that does not move, an
/// operation too quick to register).
pub const WARMUP_MAX_OPS: u32 = 1 << 16;
/// The shortest event window worth timing: the events' 0.5 µs resolution and the gap before the
/// first operation starts are then well under 1 % of it.
pub const MIN_WINDOW_SECS: f64 = 1e-3;
/// The most operations enqueued between one pair of events. While the stream is held, every
/// operation waits in its queue; this stays far below the queue's depth (about a thousand
/// entries), past which enqueuing blocks the host that is to release the stream.
pub const MAX_OPS_PER_WINDOW: u32 = 128;

/// What a warm-up did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WarmUp {
    /// Operations run.
    pub ops: u32,
    /// Time they took, by the injected clock.
    pub elapsed: Duration,
}

impl WarmUp {
    /// Seconds per operation; `None` when none ran or the clock did not move.
    pub fn secs_per_op(&self) -> Option<f64> {
        (self.ops > 0 && !self.elapsed.is_zero()).then(|| self.elapsed.as_secs_f64() / f64::from(self.ops))
    }
}

/// Runs `batch(k)` (enqueue `k` operations and wait until they are done) until `now()` (time since
/// any fixed start) says `min` has passed since the first batch began, or `max_ops` operations ran.
/// Batches double while nothing says how long an operation takes, then are sized to end near `min`,
/// so a quick operation does not overshoot the warm-up by much and a slow one runs once.
pub fn warm_up<E>(
    min: Duration,
    max_ops: u32,
    mut now: impl FnMut() -> Duration,
    mut batch: impl FnMut(u32) -> Result<(), E>,
) -> Result<WarmUp, E> {
    let start = now();
    let mut ops = 0u32;
    let mut next = 1u32;
    loop {
        let k = next.min(max_ops - ops).max(1);
        batch(k)?;
        ops += k;
        let elapsed = now().saturating_sub(start);
        if elapsed >= min || ops >= max_ops {
            return Ok(WarmUp { ops, elapsed });
        }
        let left = (min - elapsed).as_secs_f64();
        let per_op = elapsed.as_secs_f64() / f64::from(ops);
        next = if per_op > 0.0 {
            #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "clamped to 1..=2 × ops")]
            let fill = (left / per_op).ceil().clamp(1.0, 2.0 * f64::from(ops)) as u32;
            fill
        } else {
            ops.saturating_mul(2)
        };
    }
}

/// Operations to time between one pair of events, for operations of about `secs_per_op` each:
/// enough for a window of `MIN_WINDOW_SECS`, at most `MAX_OPS_PER_WINDOW`; one when the time is
/// unknown.
pub fn ops_per_window(secs_per_op: Option<f64>) -> u32 {
    match secs_per_op.filter(|s| s.is_finite() && *s > 0.0) {
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "clamped to 1..=MAX_OPS_PER_WINDOW"
        )]
        Some(s) => (MIN_WINDOW_SECS / s).ceil().clamp(1.0, f64::from(MAX_OPS_PER_WINDOW)) as u32,
        None => 1,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::cell::Cell;

    use super::*;

    /// A fake GPU: each operation advances the fake clock by `per_op`.
    fn run(per_op: Duration, max_ops: u32) -> (WarmUp, Vec<u32>) {
        let clock = Cell::new(Duration::ZERO);
        let mut batches = Vec::new();
        let w = warm_up(
            WARMUP_MIN,
            max_ops,
            || clock.get(),
            |k| {
                batches.push(k);
                clock.set(clock.get() + per_op * k);
                Ok::<(), ()>(())
            },
        )
        .unwrap();
        (w, batches)
    }

    /// Three 0.5 ms copies, the old warm-up, are 1.5 ms; the warm-up now runs ≥ 250 ms of them and
    /// not much more.
    #[test]
    fn warm_up_runs_for_a_time_not_a_count() {
        let (w, batches) = run(Duration::from_micros(500), WARMUP_MAX_OPS);
        assert!(w.elapsed >= WARMUP_MIN, "{w:?}");
        assert!(w.elapsed <= WARMUP_MIN + Duration::from_millis(5), "overshoot: {w:?} {batches:?}");
        assert!(w.ops >= 500, "{w:?}");
        assert!(batches.len() < 12, "few host round trips: {batches:?}");
        assert!((w.secs_per_op().unwrap() - 5e-4).abs() < 1e-9);
    }

    #[test]
    fn a_slow_operation_warms_up_once_and_a_stuck_clock_stops_at_the_cap() {
        let (w, batches) = run(Duration::from_millis(400), WARMUP_MAX_OPS);
        assert_eq!((w.ops, batches), (1, vec![1]));
        let (w, _) = run(Duration::ZERO, 1000);
        assert_eq!(w.ops, 1000, "a clock that does not move ends at max_ops");
        assert_eq!(w.secs_per_op(), None);
    }

    #[test]
    fn a_failing_operation_ends_the_warm_up_with_its_error() {
        let mut calls = 0;
        let r = warm_up(
            WARMUP_MIN,
            100,
            || Duration::ZERO,
            |_| {
                calls += 1;
                if calls == 3 { Err("launch failed") } else { Ok(()) }
            },
        );
        assert_eq!(r, Err("launch failed"));
        assert_eq!(calls, 3);
    }

    #[test]
    fn windows_hold_enough_operations_to_outlast_the_event_resolution() {
        // A 4 KiB pinned copy takes ≈ 2 µs: 128 of them (the cap) per window.
        assert_eq!(ops_per_window(Some(2e-6)), MAX_OPS_PER_WINDOW);
        // A 1 MiB copy at 25 GB/s ≈ 42 µs: 24 of them make 1 ms.
        assert_eq!(ops_per_window(Some(42e-6)), 24);
        // A 1 GiB copy or a large GEMM: one per window.
        assert_eq!(ops_per_window(Some(0.04)), 1);
        assert_eq!(ops_per_window(None), 1);
        assert_eq!(ops_per_window(Some(0.0)), 1);
        assert_eq!(ops_per_window(Some(f64::NAN)), 1);
    }
}
