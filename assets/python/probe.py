"""gpu-doctor's deep probe: what each GPU framework in this interpreter says of itself; with
`--smoke`, also whether it computes right on every GPU it can see (the smoke test).

The one reader of the frameworks' own facts (version, CUDA, cuDNN, architecture list, devices): the
deep probe and the smoke test both report them in the same schema (gpu-doctor's `DeepFacts`).

    python -I - < probe.py                      the deep probe: every installed framework
    python -I - --smoke torch jax < probe.py    the smoke test of the frameworks named

The smoke test adds, per framework, a matrix product on the CPU and on each visible GPU, compared
with the same product computed in Python; without a GPU it says why none is visible. Standard
library only at module level (Python 3.8+); every framework import is guarded. Prints exactly one
JSON object on stdout; anything the frameworks print goes to stderr.
"""

import json
import os
import platform
import sys
import traceback

PROBE_VERSION = 1
SMOKE_VERSION = 2

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _err(exc):
    """One line naming the exception."""
    text = "%s: %s" % (type(exc).__name__, exc)
    return " ".join(text.split())[:2000]


def _installed(name):
    """True when the top-level module can be found without importing it."""
    try:
        import importlib.util

        return importlib.util.find_spec(name) is not None
    except Exception:
        return False


def _python():
    return {
        "version": platform.python_version(),
        "executable": sys.executable,
        "prefix": sys.prefix,
        "base_prefix": getattr(sys, "base_prefix", None),
        "platform": sys.platform,
        "implementation": platform.python_implementation(),
    }


def _torch():
    out = {}
    try:
        import torch
    except BaseException as exc:
        out["error"] = _err(exc)
        return out
    out["version"] = str(getattr(torch, "__version__", "")) or None
    try:
        out["cuda"] = torch.version.cuda
        out["hip"] = getattr(torch.version, "hip", None)
        out["git_version"] = getattr(torch.version, "git_version", None)
    except Exception as exc:
        out["error"] = _err(exc)
    try:
        out["cudnn_version"] = torch.backends.cudnn.version()
    except Exception as exc:
        out["cudnn_error"] = _err(exc)
    try:
        out["cuda_available"] = bool(torch.cuda.is_available())
        out["device_count"] = int(torch.cuda.device_count())
        out["arch_list"] = list(torch.cuda.get_arch_list())
        devices = []
        for i in range(out["device_count"]):
            major, minor = torch.cuda.get_device_capability(i)
            props = torch.cuda.get_device_properties(i)
            devices.append(
                {
                    "index": i,
                    "name": torch.cuda.get_device_name(i),
                    "capability": "%d.%d" % (major, minor),
                    "total_memory_bytes": int(getattr(props, "total_memory", 0)),
                }
            )
        out["devices"] = devices
    except BaseException as exc:
        out["cuda_error"] = _err(exc)
    return out


def _tensorflow():
    out = {}
    try:
        import tensorflow as tf
    except BaseException as exc:
        out["error"] = _err(exc)
        return out
    out["version"] = str(getattr(tf, "__version__", "")) or None
    try:
        info = tf.sysconfig.get_build_info()
        for key in ("cuda_version", "cudnn_version", "is_cuda_build", "is_rocm_build"):
            value = info.get(key)
            out[key] = value if isinstance(value, bool) or value is None else str(value)
    except Exception as exc:
        out["build_info_error"] = _err(exc)
    try:
        out["gpus"] = [d.name for d in tf.config.list_physical_devices("GPU")]
    except BaseException as exc:
        out["gpu_error"] = _err(exc)
    return out


def _jax():
    out = {}
    try:
        import jax
    except BaseException as exc:
        out["error"] = _err(exc)
        return out
    out["version"] = str(getattr(jax, "__version__", "")) or None
    try:
        import jaxlib

        out["jaxlib_version"] = str(getattr(jaxlib, "__version__", "")) or None
    except BaseException:
        pass
    try:
        out["backend"] = jax.default_backend()
        out["devices"] = [
            {"id": int(getattr(d, "id", 0)), "platform": str(d.platform), "kind": str(getattr(d, "device_kind", ""))}
            for d in jax.devices()
        ]
    except BaseException as exc:
        out["backend_error"] = _err(exc)
    return out


def _cupy():
    out = {}
    try:
        import cupy
    except BaseException as exc:
        out["error"] = _err(exc)
        return out
    out["version"] = str(getattr(cupy, "__version__", "")) or None
    try:
        out["runtime_version"] = int(cupy.cuda.runtime.runtimeGetVersion())
        out["driver_version"] = int(cupy.cuda.runtime.driverGetVersion())
        out["device_count"] = int(cupy.cuda.runtime.getDeviceCount())
    except BaseException as exc:
        out["cuda_error"] = _err(exc)
    return out


def _onnxruntime():
    out = {}
    try:
        import onnxruntime
    except BaseException as exc:
        out["error"] = _err(exc)
        return out
    out["version"] = str(getattr(onnxruntime, "__version__", "")) or None
    try:
        out["providers"] = list(onnxruntime.get_available_providers())
    except BaseException as exc:
        out["providers_error"] = _err(exc)
    return out


FACTS = {
    "torch": _torch,
    "tensorflow": _tensorflow,
    "jax": _jax,
    "cupy": _cupy,
    "onnxruntime": _onnxruntime,
}


def _facts(names):
    """The probe's object: the interpreter, then the facts of each framework named (by module)."""
    result = {"probe_version": PROBE_VERSION}
    try:
        result["python"] = _python()
    except Exception as exc:
        result["python_error"] = _err(exc)
    for name in names:
        try:
            result[name] = FACTS[name]()
        except BaseException as exc:
            result[name] = {"error": _err(exc)}
            traceback.print_exc()
    return result


# The smoke test: per framework, the facts above, then a matrix product on the CPU and on each GPU.

N = 64
# Relative to the largest entry of the product: float32 sums of 64 terms of size <= 1 stay far below.
TOLERANCE = 1e-3


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


class _Reference:
    """The two operands and their product computed in Python; made only by the smoke test."""

    def __init__(self):
        self.a, self.b = _matrices()
        cols = list(zip(*self.b))
        self.product = [[sum(x * y for x, y in zip(row, col)) for col in cols] for row in self.a]
        self.scale = max(abs(v) for row in self.product for v in row) or 1.0


def _compare(ref, rows):
    """A check of a product (nested lists) against the reference."""
    try:
        rows = [[float(v) for v in row] for row in rows]
    except Exception as exc:
        return {"ok": False, "max_error": None, "error": "the product is not a matrix: " + _err(exc)}
    if len(rows) != N or any(len(r) != N for r in rows):
        return {"ok": False, "max_error": None, "error": "the product has the wrong shape"}
    worst = max(abs(a - b) for ra, rb in zip(rows, ref.product) for a, b in zip(ra, rb)) / ref.scale
    ok = worst <= TOLERANCE
    error = None if ok else "the product differs from the CPU result by %.3g (relative)" % worst
    return {"ok": ok, "max_error": worst, "error": error}


def _check(ref, compute):
    """Runs `compute` (returns nested lists) and compares; an exception is the check's error."""
    try:
        return _compare(ref, compute())
    except Exception as exc:
        return {"ok": False, "max_error": None, "error": _err(exc)}


def _gpu(ref, index, name, capability, compute):
    out = {"index": index, "name": name, "capability": capability}
    out.update(_check(ref, compute))
    return out


def _torch_products(ref, out):
    import torch

    def product(device):
        def run():
            a = torch.tensor(ref.a, dtype=torch.float32, device=device)
            b = torch.tensor(ref.b, dtype=torch.float32, device=device)
            return (a @ b).cpu().tolist()

        return run

    out["cpu"] = _check(ref, product("cpu"))
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
        out["gpus"].append(_gpu(ref, i, name, capability, product("cuda:%d" % i)))


def _jax_products(ref, out):
    import jax
    import jax.numpy as jnp

    def product(device):
        def run():
            a = jax.device_put(jnp.array(ref.a, dtype=jnp.float32), device)
            b = jax.device_put(jnp.array(ref.b, dtype=jnp.float32), device)
            return (a @ b).block_until_ready().tolist()

        return run

    try:
        out["cpu"] = _check(ref, product(jax.devices("cpu")[0]))
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
        kind = getattr(d, "device_kind", None)
        out["gpus"].append(_gpu(ref, i, kind, None if cap is None else str(cap), product(d)))


def _tensorflow_products(ref, out):
    import tensorflow as tf

    def product(device):
        def run():
            with tf.device(device):
                a = tf.constant(ref.a, dtype=tf.float32)
                b = tf.constant(ref.b, dtype=tf.float32)
                return tf.matmul(a, b).numpy().tolist()

        return run

    out["cpu"] = _check(ref, product("/CPU:0"))
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
        out["gpus"].append(_gpu(ref, i, name, capability, product("/GPU:%d" % i)))


def _cupy_products(ref, out):
    import cupy

    runtime = cupy.cuda.runtime
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
                a = cupy.asarray(ref.a, dtype=cupy.float32)
                b = cupy.asarray(ref.b, dtype=cupy.float32)
                return cupy.asnumpy(a @ b).tolist()

        out["gpus"].append(_gpu(ref, i, name, capability, run))


PRODUCTS = {"torch": _torch_products, "jax": _jax_products, "tensorflow": _tensorflow_products, "cupy": _cupy_products}


def _products(ref, name, facts):
    """The checks of one framework whose facts are `facts`: nothing more when it did not import."""
    out = {"error": None, "no_gpu": None, "cpu": None, "gpus": []}
    run = PRODUCTS.get(name)
    if run is None:
        out["error"] = "gpu-doctor's smoke test does not know this framework"
    elif not facts.get("error"):
        try:
            run(ref, out)
        except Exception as exc:
            out["error"] = _err(exc)
    return out


def smoke(names):
    """The smoke test of the frameworks `names` (modules): their facts, then their products."""
    known = [name for name in names if name in PRODUCTS]
    facts = _facts(known)
    ref = _Reference()
    checks = {name: _products(ref, name, facts.get(name) or {}) for name in names}
    return {
        "smoke_version": SMOKE_VERSION,
        "python": platform.python_version(),
        "facts": facts,
        "checks": checks,
    }


def main():
    # Frameworks print on import, some from C code; keep fd 1 for our one JSON line.
    real_stdout = None
    try:
        sys.stdout.flush()
        real_stdout = os.dup(1)
        os.dup2(2, 1)
    except Exception:
        real_stdout = None
    if sys.argv[1:2] == ["--smoke"]:
        result = smoke(sys.argv[2:])
    else:
        result = _facts(name for name in FACTS if _installed(name))
    text = json.dumps(result, default=str) + "\n"
    try:
        sys.stdout.flush()
    except Exception:
        pass
    if real_stdout is not None:
        data = text.encode("utf-8")
        while data:
            data = data[os.write(real_stdout, data):]
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


main()
