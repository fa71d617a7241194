//! Holding a stream while timed work is enqueued, as nvbandwidth does: the stream first waits on
//! a flag in pinned host memory (`cuStreamWaitValue32_v2`), the start event, the work and the end
//! event are enqueued behind it, and the host then sets the flag. The window between the events
//! then holds the GPU's time for the work alone, not the host's time to enqueue it, which for a
//! small copy is most of it.
//!
//! Only work whose enqueuing never waits for the GPU may be held (pinned copies, device copies,
//! kernels); a pageable copy can wait for its own transfer inside the call and would never reach
//! the release.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};

use cudarc::driver::result;
use cudarc::driver::sys::{self, CUdeviceptr, CUresult, CUstream, CUstreamWaitValue_flags};
use gpu_doctor_model::CudaVersion;

use super::cuda_failure;
use gpu_doctor_model::bench::protocol::Failure;

/// Whether a driver of this CUDA level surely has `cuStreamWaitValue32_v2` with stream memory
/// operations on by default: CUDA 12.0 or newer. cudarc panics on a missing symbol, so older (or
/// unknown) drivers are not asked, and their windows are timed without a hold.
pub(crate) fn has_stream_waits(driver: Option<CudaVersion>) -> bool {
    driver.is_some_and(|v| v.major >= 12)
}

/// A flag in pinned, device-mapped host memory that streams can be told to wait on.
pub(crate) struct StreamHold {
    host: *mut u32,
    device: CUdeviceptr,
    /// The value the next hold waits for; the flag holds the last value released.
    next: Cell<u32>,
    /// Set when the driver refused a wait: later windows are timed without holding.
    refused: Cell<bool>,
}

impl std::fmt::Debug for StreamHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamHold").field("next", &self.next.get()).field("refused", &self.refused.get()).finish()
    }
}

impl StreamHold {
    /// A hold for the current context; `None` when the driver is too old to have stream waits.
    pub fn new(driver: Option<CudaVersion>) -> Result<Option<Self>, Failure> {
        if !has_stream_waits(driver) {
            return Ok(None);
        }
        // SAFETY: cuMemHostAlloc returns 4 bytes of page-aligned, device-mapped host memory or an
        // error; the flag is written below before any stream reads it.
        #[allow(unsafe_code)]
        let host = unsafe { result::malloc_host(4, sys::CU_MEMHOSTALLOC_PORTABLE | sys::CU_MEMHOSTALLOC_DEVICEMAP) }
            .map_err(|e| cuda_failure(e, "allocating the stream-hold flag"))?
            .cast::<u32>();
        let mut hold = Self { host, device: 0, next: Cell::new(1), refused: Cell::new(false) };
        hold.flag().store(0, Ordering::SeqCst);
        let mut device: CUdeviceptr = 0;
        // SAFETY: `host` came from cuMemHostAlloc with DEVICEMAP in the current context, and
        // `device` is a live local for the one pointer written.
        #[allow(unsafe_code)]
        unsafe { sys::cuMemHostGetDevicePointer_v2(&raw mut device, host.cast(), 0) }
            .result()
            .map_err(|e| cuda_failure(e, "mapping the stream-hold flag"))?;
        hold.device = device;
        Ok(Some(hold))
    }

    fn flag(&self) -> &AtomicU32 {
        // SAFETY: `host` is a live, page-aligned (so 4-byte-aligned) allocation of 4 bytes for the
        // life of `self`; the GPU only reads it, and the host writes it only through this atomic.
        #[allow(unsafe_code)]
        unsafe {
            AtomicU32::from_ptr(self.host)
        }
    }

    /// Makes `stream` wait until the next `release`. False when the driver refused (then nothing
    /// was enqueued and this hold is not used again).
    pub fn hold(&self, stream: CUstream) -> bool {
        if self.refused.get() {
            return false;
        }
        let value = self.next.get();
        // SAFETY: `device` maps the live flag, which outlives every wait (every hold is released,
        // and drop synchronizes the context before freeing it); GEQ on a value the host sets later
        // is a plain wait.
        #[allow(unsafe_code)]
        let r = unsafe {
            sys::cuStreamWaitValue32_v2(
                stream,
                self.device,
                value,
                CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_GEQ as std::ffi::c_uint,
            )
        };
        if r == CUresult::CUDA_SUCCESS {
            true
        } else {
            tracing::warn!("the driver refused a stream wait ({r:?}); timing windows include enqueue time");
            self.refused.set(true);
            false
        }
    }

    /// Lets every stream waiting on this hold go on.
    pub fn release(&self) {
        let value = self.next.get();
        self.flag().store(value, Ordering::SeqCst);
        self.next.set(value.wrapping_add(1).max(1));
    }
}

impl Drop for StreamHold {
    fn drop(&mut self) {
        // Every hold was released (`Timer::time` releases whatever happened), but where the timed
        // work failed nobody waited for the window's end event: the GPU may not have read the
        // flag yet. Wait for the context's work first, so the flag is not freed under a stream
        // still polling it (a read of freed memory would lose the context). A context already lost
        // answers at once with its error; the flag is freed then too.
        if let Err(e) = result::ctx::synchronize() {
            tracing::warn!("could not synchronize before freeing the stream-hold flag: {e}");
        }
        // SAFETY: `host` came from cuMemHostAlloc and is freed once; every hold on it was released
        // and the context was synchronized above, so no stream reads it any more.
        #[allow(unsafe_code)]
        if let Err(e) = unsafe { result::free_host(self.host.cast()) } {
            tracing::warn!("could not free the stream-hold flag: {e}");
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn only_drivers_of_cuda_12_or_newer_are_asked_for_stream_waits() {
        let v = |s: &str| Some(s.parse::<CudaVersion>().unwrap());
        assert!(has_stream_waits(v("12.0")) && has_stream_waits(v("13.1")));
        assert!(!has_stream_waits(v("11.8")) && !has_stream_waits(None));
    }
}
