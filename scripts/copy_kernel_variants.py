"""Device-copy kernels against the driver's memcpy, with CuPy, on the GPU this runs on.

    python3 scripts/copy_kernel_variants.py

Prints GB/s (bytes read + written, 1 GiB buffers, the mean of 20 launches after 3, CUDA events) of
the driver's memcpy and of three kernels: `gs1` (gpu-doctor's `copy16`: a 16-byte word per step
of a grid-stride loop), `gs4` (four words in flight per thread), `cs` (streaming loads and stores),
each with grids of 4 to 32 blocks of 256 threads per SM (the block size varied at the same thread
count) and with a thread per word ("onepass"). docs/performance.md ("First GPU run") has what an
H200 gave; it chose how `copy16` is launched (kernels/src/gpu/compiled.rs).
"""
import cupy as cp, sys
src_code = r'''
struct alignas(16) V4 { unsigned int x, y, z, w; };
extern "C" __global__ void gs1(const V4* __restrict__ s, V4* __restrict__ d, unsigned long long n) {
  unsigned long long st = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += st) d[i] = s[i];
}
extern "C" __global__ void gs4(const V4* __restrict__ s, V4* __restrict__ d, unsigned long long n) {
  unsigned long long st = (unsigned long long)gridDim.x * blockDim.x;
  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + 3 * st < n; i += 4 * st) { V4 a = s[i], b = s[i + st], c = s[i + 2 * st], e = s[i + 3 * st];
    d[i] = a; d[i + st] = b; d[i + 2 * st] = c; d[i + 3 * st] = e; }
  for (; i < n; i += st) d[i] = s[i];
}
extern "C" __global__ void cs(const V4* __restrict__ s, V4* __restrict__ d, unsigned long long n) {
  unsigned long long st = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += st) {
    int4 v = __ldcs((const int4*)(s + i)); __stcs((int4*)(d + i), v); }
}
'''
m = cp.RawModule(code=src_code)
n_bytes = 1 << 30
a = cp.full(n_bytes // 4, 7, dtype=cp.uint32); b = cp.zeros_like(a)
words = n_bytes // 16
dev = cp.cuda.Device()
sms = dev.attributes['MultiProcessorCount']
def t(f, grid, block=256, reps=20):
    for _ in range(3): f((grid,), (block,), (a, b, cp.uint64(words)))
    s, e = cp.cuda.Event(), cp.cuda.Event()
    s.record()
    for _ in range(reps): f((grid,), (block,), (a, b, cp.uint64(words)))
    e.record(); e.synchronize()
    ms = cp.cuda.get_elapsed_time(s, e) / reps
    return 2 * n_bytes / ms / 1e6
def memcpy(reps=20):
    for _ in range(3): b.data.copy_from_device(a.data, n_bytes)
    s, e = cp.cuda.Event(), cp.cuda.Event(); s.record()
    for _ in range(reps): b.data.copy_from_device(a.data, n_bytes)
    e.record(); e.synchronize()
    return 2 * n_bytes / (cp.cuda.get_elapsed_time(s, e) / reps) / 1e6
print("memcpy", round(memcpy()))
for name in ["gs1", "gs4", "cs"]:
    f = m.get_function(name)
    for per_sm in [4, 8, 16, 32]:
        for block in [256, 512, 1024]:
            try: print(name, per_sm, block, round(t(f, sms * per_sm * 256 // block if block <= 256 * per_sm else sms, block)))
            except Exception as ex: print(name, per_sm, block, "ERR", ex)
    print(name, "onepass", round(t(f, words // 256)))
print("memcpy", round(memcpy()))
