"""gpu-doctor's GPU smoke test: prove that each framework named on the command line computes on
every GPU it can see.

Run as `python -I - torch jax tensorflow cupy < smoke.py`. Standard library only at module level
(Python 3.8+); every framework import is guarded. Per framework: its version, the CUDA runtime and
cuDNN it loaded, the build's architecture list, and per visible GPU its name and capability and
whether a matrix product computed there matches the same product computed in Python on the CPU.
Without a GPU it says why none is visible and still checks the framework's CPU product. Prints
exactly one JSON object on stdout; anything the frameworks print goes to stderr.
"""

import json
import os
import platform
import sys

SMOKE_VERSION = 1
N = 64
# Relative to the largest entry of the product: float32 sums of 64 terms of size <= 1 stay far below.
TOLERANCE = 1e-3

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _err(exc):
    """One line naming the exception."""
    text = "%s: %s" % (type(exc).__name__, exc)
    return " ".join(text.split())[:2000]


def _matrices():
    """Two N x N matrices of values in [-1, 1] from a fixed linear congruential sequence."""
    state = 12345
    out = []
    for _ in range(2):
        rows = []
        for _ in range(N):
            row = []
            for _ in range(N):
                state = (1103515245 * state + 12345) % 2147483648
                row.append(state / 1073741824.0 - 1.0)
            rows.append(row)
        out.append(rows)
    return out[0], out[1]


A, B = _matrices()


def _reference():
    cols = list(zip(*B))
    return [[sum(x * y for x, y in zip(row, col)) for col in cols] for row in A]


REF = _reference()
SCALE = max(abs(v) for row in REF for v in row) or 1.0


def _compare(rows):
    """A check of a product (nested lists) against the reference."""
    try:
        rows = [[float(v) for v in row] for row in rows]
    except Exception as exc:
        return {"ok": False, "max_error": None, "error": "the product is not a matrix: " + _err(exc)}
    if len(rows) != N or any(len(r) != N for r in rows):
        return {"ok": False, "max_error": None, "error": "the product has the wrong shape"}
    worst = max(abs(a - b) for ra, rb in zip(rows, REF) for a, b in zip(ra, rb)) / SCALE
    ok = worst <= TOLERANCE
    error = None if ok else "the product differs from the CPU result by %.3g (relative)" % worst
    return {"ok": ok, "max_error": worst, "error": error}


def _check(compute):
    """Runs `compute` (returns nested lists) and compares; an exception is the check's error."""
    try:
        return _compare(compute())
    except Exception as exc:
        return {"ok": False, "max_error": None, "error": _err(exc)}


def _gpu(index, name, capability, compute):
    out = {"index": index, "name": name, "capability": capability}
    out.update(_check(compute))
    return out


def _torch(out):
    import torch

    out["version"] = str(torch.__version__)
    out["cuda_runtime"] = getattr(torch.version, "cuda", None)
    try:
        cudnn = torch.backends.cudnn.version()
        out["cudnn"] = None if cudnn is None else str(cudnn)
    except Exception:
        out["cudnn"] = None
    try:
        out["arch_list"] = [str(a) for a in torch.cuda.get_arch_list()]
    except Exception:
        out["arch_list"] = []

    def product(device):
        def run():
            a = torch.tensor(A, dtype=torch.float32, device=device)
            b = torch.tensor(B, dtype=torch.float32, device=device)
            return (a @ b).cpu().tolist()

        return run

    out["cpu"] = _check(product("cpu"))
    if not torch.cuda.is_available():
        out["no_gpu"] = "CUDA not available"
        return
    count = torch.cuda.device_count()
    if count == 0:
        out["no_gpu"] = "no CUDA device"
    for i in range(count):
        name = capability = None
        try:
            name = torch.cuda.get_device_name(i)
            capability = "%d.%d" % tuple(torch.cuda.get_device_capability(i))
        except Exception:
            pass
        out["gpus"].append(_gpu(i, name, capability, product("cuda:%d" % i)))


def _jax(out):
    import jax
    import jax.numpy as jnp

    out["version"] = str(jax.__version__)
    try:
        import jaxlib

        out["jaxlib"] = str(jaxlib.__version__)
    except Exception:
        pass

    def product(device):
        def run():
            a = jax.device_put(jnp.array(A, dtype=jnp.float32), device)
            b = jax.device_put(jnp.array(B, dtype=jnp.float32), device)
            return (a @ b).block_until_ready().tolist()

        return run

    try:
        out["cpu"] = _check(product(jax.devices("cpu")[0]))
    except Exception as exc:
        out["cpu"] = {"ok": False, "max_error": None, "error": _err(exc)}
    try:
        gpus = jax.devices("gpu")
    except Exception as exc:
        out["no_gpu"] = _err(exc)
        return
    if not gpus:
        out["no_gpu"] = "no GPU device"
    for i, d in enumerate(gpus):
        cap = getattr(d, "compute_capability", None)
        out["gpus"].append(_gpu(i, getattr(d, "device_kind", None), None if cap is None else str(cap), product(d)))


def _tensorflow(out):
    import tensorflow as tf

    out["version"] = str(tf.__version__)
    try:
        build = tf.sysconfig.get_build_info()
        out["cuda_runtime"] = build.get("cuda_version")
        out["cudnn"] = build.get("cudnn_version")
        caps = build.get("cuda_compute_capabilities") or []
        out["arch_list"] = [str(c) for c in caps]
    except Exception:
        pass

    def product(device):
        def run():
            with tf.device(device):
                a = tf.constant(A, dtype=tf.float32)
                b = tf.constant(B, dtype=tf.float32)
                return tf.matmul(a, b).numpy().tolist()

        return run

    out["cpu"] = _check(product("/CPU:0"))
    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        out["no_gpu"] = "no GPU device" if tf.test.is_built_with_cuda() else "a CPU-only build"
    for i, gpu in enumerate(gpus):
        name = capability = None
        try:
            details = tf.config.experimental.get_device_details(gpu)
            name = details.get("device_name")
            cc = details.get("compute_capability")
            capability = None if cc is None else "%d.%d" % tuple(cc)
        except Exception:
            pass
        out["gpus"].append(_gpu(i, name, capability, product("/GPU:%d" % i)))


def _cupy(out):
    import cupy

    out["version"] = str(cupy.__version__)
    runtime = cupy.cuda.runtime
    try:
        v = runtime.runtimeGetVersion()
        out["cuda_runtime"] = "%d.%d" % (v // 1000, (v % 1000) // 10)
    except Exception:
        pass
    try:
        from cupy.cuda import cudnn

        out["cudnn"] = str(cudnn.getVersion())
    except Exception:
        pass
    try:
        count = runtime.getDeviceCount()
    except Exception as exc:
        out["no_gpu"] = _err(exc)
        return
    if count == 0:
        out["no_gpu"] = "no CUDA device"
    for i in range(count):
        name = capability = None
        try:
            props = runtime.getDeviceProperties(i)
            raw = props.get("name")
            name = raw.decode() if isinstance(raw, bytes) else raw
            capability = "%d.%d" % (props["major"], props["minor"])
        except Exception:
            pass

        def run(i=i):
            with cupy.cuda.Device(i):
                a = cupy.asarray(A, dtype=cupy.float32)
                b = cupy.asarray(B, dtype=cupy.float32)
                return cupy.asnumpy(a @ b).tolist()

        out["gpus"].append(_gpu(i, name, capability, run))


FRAMEWORKS = {"torch": _torch, "jax": _jax, "tensorflow": _tensorflow, "cupy": _cupy}


def smoke(name):
    out = {"version": None, "import_error": None, "error": None, "cuda_runtime": None, "cudnn": None,
           "arch_list": [], "no_gpu": None, "cpu": None, "gpus": []}
    run = FRAMEWORKS.get(name)
    if run is None:
        out["error"] = "gpu-doctor's smoke test does not know this framework"
        return out
    try:
        run(out)
    except ImportError as exc:
        out["import_error"] = _err(exc)
    except Exception as exc:
        if out["version"] is None:
            out["import_error"] = _err(exc)
        else:
            out["error"] = _err(exc)
    return out


def main():
    # Frameworks print, some from C code; keep fd 1 for our one JSON line.
    try:
        sys.stdout.flush()
        real_stdout = os.dup(1)
        os.dup2(2, 1)
    except Exception:
        real_stdout = None
    result = {
        "smoke_version": SMOKE_VERSION,
        "python": platform.python_version(),
        "frameworks": {name: smoke(name) for name in sys.argv[1:]},
    }
    text = json.dumps(result)
    if real_stdout is not None:
        sys.stdout.flush()
        os.dup2(real_stdout, 1)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
