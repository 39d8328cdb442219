#!/usr/bin/env python3
"""The wheel `pip install .` builds, checked as its users get it (CI: .ci/run).

    python3 scripts/check_wheel.py WHEEL

- Its name: `mge-VERSION-py3-none-PLATFORM_x86_64.whl`, VERSION being Cargo.toml's, PLATFORM
  `manylinux_X_Y` (after its legacy alias, as `manylinux2014_x86_64.manylinux_2_17` from
  `maturin build --zig`) or, where maturin's check of the glibc symbols could not give one,
  `linux`.
- Installed into a fresh virtualenv (pip off every index), that virtualenv's `bin/mge` is
  this tool, of that version, and runs a fixture on the runtime installed already.
- With MegEngine's wheel in one environment (a stand-in holding what matters here: its
  script `bin/mge`, MegEngine's launcher), in both orders: pip says nothing, the wheel
  installed last owns `bin/mge`, and uninstalling this tool removes `bin/mge` whichever
  it is; the README's Install section says so.
"""

import base64
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = b"#!python\nimport argparse\n\nimport megengine\n"


def fail(message):
    sys.exit(f"check_wheel: {message}")


def pip(venv, *args):
    """The machine's pip, acting on `venv` (pip's --python), off every index."""
    command = [sys.executable, "-m", "pip", "--python", str(venv / "bin/python"), *args]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PIP_NO_INDEX": "1"})
    if done.returncode != 0:
        fail(f"{' '.join(command)}: {done.stderr.strip()}")
    return done.stdout + done.stderr


def fresh_venv(parent, name):
    venv = parent / name
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return venv


def stand_in_megengine(folder):
    """A wheel named as MegEngine 1.13.0 whose one script is `mge` (a .data/scripts file, as
    MegEngine's RECORD lists it: `../../../bin/mge`)."""
    name = "MegEngine-1.13.0"
    files = {
        f"{name}.data/scripts/mge": LAUNCHER,
        "megengine/__init__.py": b"",
        f"{name}.dist-info/METADATA": b"Metadata-Version: 2.1\nName: MegEngine\nVersion: 1.13.0\n",
        f"{name}.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: check_wheel\nRoot-Is-Purelib: false\nTag: py3-none-any\n",
    }
    path = folder / f"{name}-py3-none-any.whl"
    record = []
    with zipfile.ZipFile(path, "w") as wheel:
        for member, data in files.items():
            wheel.writestr(member, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{member},sha256={digest},{len(data)}")
        record.append(f"{name}.dist-info/RECORD,,")
        wheel.writestr(f"{name}.dist-info/RECORD", "\n".join(record) + "\n")
    return path


def is_ours(program):
    return program.read_bytes()[:4] == b"\x7fELF"


def main():
    if len(sys.argv) != 2:
        fail("usage: check_wheel.py WHEEL")
    wheel = Path(sys.argv[1]).resolve()
    version = tomllib.loads((ROOT / "Cargo.toml").read_text())["package"]["version"]
    if not re.fullmatch(rf"mge-{re.escape(version)}-py3-none-((manylinux\d+_x86_64\.)?manylinux_\d+_\d+|linux)_x86_64\.whl", wheel.name):
        fail(f"{wheel.name}: expected mge-{version}-py3-none-manylinux_X_Y_x86_64.whl or linux_x86_64")
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        venv = fresh_venv(scratch, "fresh")
        pip(venv, "install", "--no-deps", str(wheel))
        mge = venv / "bin/mge"
        said = subprocess.run([mge, "--version"], capture_output=True, text=True, check=True).stdout.strip()
        if said != f"mge {version}":
            fail(f"{mge} --version said {said!r}, not 'mge {version}'")
        run = subprocess.run([mge, "run", "fixtures/conv_float.mge", "-q", "--iter", "1"], cwd=ROOT, stdout=subprocess.DEVNULL)
        if run.returncode != 0:
            fail(f"{mge} run fixtures/conv_float.mge exited {run.returncode}")

        megengine = stand_in_megengine(scratch)
        for order, last in (((megengine, wheel), "ours"), ((wheel, megengine), "MegEngine's")):
            venv = fresh_venv(scratch, f"both-{last[:4]}")
            said = "".join(pip(venv, "install", "--no-deps", str(each)) for each in order)
            if "WARNING" in said:
                fail(f"pip warned: {said}")
            if is_ours(venv / "bin/mge") != (last == "ours"):
                fail(f"installed in the order {[p.name for p in order]}, bin/mge is not {last}")
            pip(venv, "uninstall", "--yes", "mge")
            if (venv / "bin/mge").exists():
                fail("uninstalling mge left bin/mge")
    print(f"check_wheel: {wheel.name} installs a working mge; beside MegEngine the last installed owns bin/mge")


if __name__ == "__main__":
    main()
