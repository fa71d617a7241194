"""gpu-doctor's deep probe: import the GPU frameworks in this interpreter and report what they say.

Run as `python -I - < probe.py`. Standard library only at module level; every framework import is
guarded. Prints exactly one JSON object on stdout. Anything the frameworks print goes to stderr.
"""

import json
import os
import sys
import traceback

PROBE_VERSION = 1

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
    import platform

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


def main():
    # Frameworks print on import, some from C code; keep fd 1 for our one JSON line.
    real_stdout = None
    try:
        sys.stdout.flush()
        real_stdout = os.dup(1)
        os.dup2(2, 1)
    except Exception:
        real_stdout = None
    result = {"probe_version": PROBE_VERSION}
    try:
        result["python"] = _python()
    except Exception as exc:
        result["python_error"] = _err(exc)
    for key, module, fn in (
        ("torch", "torch", _torch),
        ("tensorflow", "tensorflow", _tensorflow),
        ("jax", "jax", _jax),
        ("cupy", "cupy", _cupy),
        ("onnxruntime", "onnxruntime", _onnxruntime),
    ):
        if not _installed(module):
            continue
        try:
            result[key] = fn()
        except BaseException as exc:
            result[key] = {"error": _err(exc)}
            traceback.print_exc()
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
