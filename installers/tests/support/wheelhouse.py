"""Builds the tests' wheelhouse: tiny real wheels whose modules answer the deep probe
(assets/python/probe.py) the way the real frameworks do, without any GPU code.

Usage: python3 wheelhouse.py DIR
"""

import base64
import hashlib
import sys
import zipfile
from pathlib import Path

TORCH_ARCHS = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]


def torch_files(version, cuda):
    archs = TORCH_ARCHS if cuda else []
    return {
        "torch/__init__.py": (
            "__version__ = %r\nfrom . import version, cuda, backends\n"
            "float32 = 'float32'\n\n"
            "class _Tensor:\n"
            "    def __init__(self, rows):\n        self.rows = rows\n\n"
            "    def __matmul__(self, other):\n"
            "        cols = list(zip(*other.rows))\n"
            "        return _Tensor([[sum(x * y for x, y in zip(r, c)) for c in cols] for r in self.rows])\n\n"
            "    def cpu(self):\n        return self\n\n"
            "    def tolist(self):\n        return self.rows\n\n"
            "def tensor(data, dtype=None, device=None):\n"
            "    return _Tensor([[float(x) for x in row] for row in data])\n" % version
        ),
        "torch/version.py": "cuda = %r\nhip = None\ngit_version = 'gpu-doctor-test'\n" % cuda,
        "torch/cuda/__init__.py": (
            "def is_available():\n    return False\n\n"
            "def device_count():\n    return 0\n\n"
            "def get_arch_list():\n    return %r\n" % archs
        ),
        "torch/backends/__init__.py": "from . import cudnn\n",
        "torch/backends/cudnn.py": "def version():\n    return %r\n" % (90100 if cuda else None),
    }


def jax_files(version):
    return {
        "jax/__init__.py": (
            "__version__ = %r\n\n"
            "class _Cpu:\n    id = 0\n    platform = 'cpu'\n    device_kind = 'cpu'\n\n"
            "def default_backend():\n    return 'cpu'\n\n"
            "def devices():\n    return [_Cpu()]\n" % version
        ),
    }


# (distribution, version, files, requirements)
WHEELS = [
    ("torch", "2.5.1+cu121", torch_files("2.5.1+cu121", "12.1"), []),
    ("torch", "2.5.1+cpu", torch_files("2.5.1+cpu", None), []),
    ("torchvision", "0.20.1+cu121", {"torchvision/__init__.py": "__version__ = '0.20.1+cu121'\n"}, ["torch==2.5.1"]),
    ("torchvision", "0.20.1+cpu", {"torchvision/__init__.py": "__version__ = '0.20.1+cpu'\n"}, ["torch==2.5.1"]),
    ("jaxlib", "0.4.35", {"jaxlib/__init__.py": "__version__ = '0.4.35'\n"}, []),
    ("jax", "0.4.35", jax_files("0.4.35"), ["jaxlib==0.4.35"]),
    (
        "jax_cuda12_plugin",
        "0.4.35",
        {"jax_cuda12_plugin/__init__.py": "__version__ = '0.4.35'\n"},
        ["jaxlib==0.4.35"],
    ),
    # Two CUDA majors' cuDNN wheels write the same files (as nvidia-cudnn-cu12 and -cu13 both ship
    # nvidia/cudnn/lib/libcudnn.so.9): the same size here, other bytes, so only a hash tells them apart.
    (
        "nvidia_cudnn_cu12",
        "9.1.0.70",
        {"nvidia/__init__.py": "", "nvidia/cudnn/lib/libcudnn.so.9": "cudnn 9.1 for CUDA 12\n"},
        [],
    ),
    (
        "nvidia_cudnn_cu13",
        "9.13.0.50",
        {"nvidia/__init__.py": "", "nvidia/cudnn/lib/libcudnn.so.9": "cudnn 9.x for CUDA 13\n"},
        [],
    ),
    # A dependency no index has: installing it fails after resolving.
    ("broken", "1.0", {"broken/__init__.py": ""}, ["gpu-doctor-test-missing>=99"]),
]


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def write_wheel(folder, dist, version, files, requires):
    info = "%s-%s.dist-info" % (dist, version)
    meta = "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (dist, version)
    meta += "".join("Requires-Dist: %s\n" % r for r in requires)
    wheel = "Wheel-Version: 1.0\nGenerator: gpu-doctor-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    entries = dict(files)
    entries[info + "/METADATA"] = meta
    entries[info + "/WHEEL"] = wheel
    path = folder / ("%s-%s-py3-none-any.whl" % (dist, version))
    record = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in entries.items():
            data = text.encode()
            zf.writestr(name, data)
            record.append(record_line(name, data))
        record.append(info + "/RECORD,,")
        zf.writestr(info + "/RECORD", "\n".join(record) + "\n")


def main():
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    for dist, version, files, requires in WHEELS:
        write_wheel(folder, dist, version, files, requires)


if __name__ == "__main__":
    main()
