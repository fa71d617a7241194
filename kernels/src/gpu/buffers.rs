//! Owned raw buffers: device memory from `cuMemAlloc` and page-locked host memory from
//! `cuMemHostAlloc` (without `WRITECOMBINED`, so the host can read it back at full speed).

use cudarc::driver::result;
use cudarc::driver::sys::{self, CUdeviceptr};

use super::cuda_failure;
use gpu_doctor_model::bench::protocol::Failure;

/// Device memory, freed on drop. The context that allocated it must be current when it drops.
#[derive(Debug)]
pub(crate) struct DeviceBuffer {
    ptr: CUdeviceptr,
    bytes: usize,
}

impl DeviceBuffer {
    /// Allocates `bytes` of device memory (contents undefined).
    pub fn new(bytes: usize) -> Result<Self, Failure> {
        Self::try_new(bytes).map_err(|e| cuda_failure(e, &format!("allocating {} of GPU memory", human_bytes(bytes))))
    }

    /// Allocates, returning the driver's error as is (the largest-allocation search expects some).
    pub fn try_new(bytes: usize) -> Result<Self, result::DriverError> {
        // SAFETY: cuMemAlloc returns a fresh allocation or an error; nothing reads the memory
        // before a copy or kernel writes it.
        #[allow(unsafe_code)]
        let ptr = unsafe { result::malloc_sync(bytes.max(1)) }?;
        Ok(Self { ptr, bytes })
    }

    /// The device address.
    pub fn ptr(&self) -> CUdeviceptr {
        self.ptr
    }

    /// Its size, bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from cuMemAlloc and is freed exactly once; cuMemFree waits for work
        // using it to finish.
        #[allow(unsafe_code)]
        let r = unsafe { result::free_sync(self.ptr) };
        if let Err(e) = r {
            tracing::warn!("could not free GPU memory: {e}");
        }
    }
}

/// Page-locked host memory, zeroed when allocated, freed on drop.
#[derive(Debug)]
pub(crate) struct PinnedBuffer {
    ptr: *mut u8,
    bytes: usize,
}

impl PinnedBuffer {
    /// Allocates `bytes` (a multiple of 8) of page-locked host memory, portable to every context,
    /// cached (not write-combined, which would make reading it back slow), and zeroes it.
    pub fn new(bytes: usize) -> Result<Self, Failure> {
        // SAFETY: cuMemHostAlloc returns `bytes` of page-aligned host memory or an error; it is
        // written (zeroed) before anything reads it.
        #[allow(unsafe_code)]
        let ptr = unsafe { result::malloc_host(bytes.max(8), sys::CU_MEMHOSTALLOC_PORTABLE) }
            .map_err(|e| cuda_failure(e, &format!("allocating {} of pinned host memory", human_bytes(bytes))))?
            .cast::<u8>();
        // SAFETY: `ptr` points to at least `bytes` writable bytes just allocated.
        #[allow(unsafe_code)]
        unsafe {
            ptr.write_bytes(0, bytes);
        }
        Ok(Self { ptr, bytes })
    }

    /// The bytes, for reading. Callers synchronize with the GPU before reading what a copy wrote.
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: `ptr` holds `bytes` initialised bytes for the life of `self`.
        #[allow(unsafe_code)]
        unsafe {
            std::slice::from_raw_parts(self.ptr, self.bytes)
        }
    }

    /// The bytes, for writing.
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `&mut self` makes this the only reference.
        #[allow(unsafe_code)]
        unsafe {
            std::slice::from_raw_parts_mut(self.ptr, self.bytes)
        }
    }

    /// The memory as 64-bit words (page alignment satisfies `u64`'s).
    pub fn as_words(&self) -> &[u64] {
        // SAFETY: the allocation is page-aligned, so aligned for u64; `bytes / 8` words fit in it;
        // every bit pattern is a valid u64.
        #[allow(unsafe_code)]
        unsafe {
            std::slice::from_raw_parts(self.ptr.cast::<u64>(), self.bytes / 8)
        }
    }

    /// The memory as 64-bit words, for writing.
    pub fn as_words_mut(&mut self) -> &mut [u64] {
        // SAFETY: as `as_words`, and `&mut self` makes this the only reference.
        #[allow(unsafe_code)]
        unsafe {
            std::slice::from_raw_parts_mut(self.ptr.cast::<u64>(), self.bytes / 8)
        }
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from cuMemHostAlloc and is freed exactly once; callers synchronize
        // every copy that uses it before dropping it.
        #[allow(unsafe_code)]
        let r = unsafe { result::free_host(self.ptr.cast()) };
        if let Err(e) = r {
            tracing::warn!("could not free pinned host memory: {e}");
        }
    }
}

/// `bytes` as `4 KiB`, `256 MiB`, `1.5 GiB`.
pub(crate) fn human_bytes(bytes: usize) -> String {
    gpu_doctor_model::bench::format::bytes(bytes as u64)
}

/// Copies host bytes to the device on `stream` (asynchronous for pinned memory).
///
/// The caller keeps `src` alive and unchanged until the stream is synchronized.
pub(crate) fn copy_htod(dst: &DeviceBuffer, src: &[u8], stream: sys::CUstream) -> Result<(), Failure> {
    assert!(src.len() <= dst.bytes(), "copy larger than its destination");
    // SAFETY: `dst` holds at least `src.len()` bytes (checked above); the caller keeps `src`
    // alive until it synchronizes `stream`.
    #[allow(unsafe_code)]
    unsafe { result::memcpy_htod_async(dst.ptr(), src, stream) }.map_err(|e| cuda_failure(e, "copying host to device"))
}

/// Copies device bytes to the host on `stream` (asynchronous for pinned memory).
///
/// The caller does not read `dst` until the stream is synchronized.
pub(crate) fn copy_dtoh(dst: &mut [u8], src: &DeviceBuffer, stream: sys::CUstream) -> Result<(), Failure> {
    assert!(dst.len() <= src.bytes(), "copy larger than its source");
    // SAFETY: `src` holds at least `dst.len()` bytes (checked above); the caller does not touch
    // `dst` until it synchronizes `stream`.
    #[allow(unsafe_code)]
    unsafe { result::memcpy_dtoh_async(dst, src.ptr(), stream) }.map_err(|e| cuda_failure(e, "copying device to host"))
}
