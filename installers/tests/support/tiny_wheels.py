"""Writes tiny wheels (a module, METADATA with its Requires-Dist, WHEEL, RECORD) for a local
index: `python3 tiny_wheels.py DIR NAME==VERSION[:REQ,REQ…] …`. The wheel writer is the
wheelhouse's (wheelhouse.py beside this file).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from wheelhouse import write_wheel  # noqa: E402


def main():
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    for spec in sys.argv[2:]:
        pin, _, requires = spec.partition(":")
        name, version = pin.split("==")
        dist = name.replace("-", "_")
        files = {"%s/__init__.py" % dist: "__version__ = %r\n" % version}
        write_wheel(folder, dist, version, files, [r for r in requires.split(",") if r])


if __name__ == "__main__":
    main()
