#!/usr/bin/env python3
"""Set up and run slidepdb from a fresh checkout with nothing but python3.

    python3 scripts/quickstart.py demo    # set up, build small databases, solve the sample boards
    python3 scripts/quickstart.py test    # set up, then run the test suite

Set-up makes ``.venv`` beside this folder and installs the package with its test
extra into it (again only when pyproject.toml changed).  Extra arguments go to
``slidepdb solve`` (demo) or to pytest (test).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".slidepdb-installed"


def setup() -> None:
    if not (BIN / "python").exists():
        print("quickstart: creating .venv", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    want = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == want:
        return
    print("quickstart: installing slidepdb and its dependencies into .venv", file=sys.stderr)
    subprocess.run([str(BIN / "python"), "-m", "pip", "install", "--quiet", "--upgrade", "pip"], check=True)
    subprocess.run([str(BIN / "python"), "-m", "pip", "install", "--quiet", "-e", f"{ROOT}[test]"], check=True)
    STAMP.write_text(want)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("demo", "test"):
        print(__doc__, file=sys.stderr)
        return 2
    setup()
    os.chdir(ROOT)
    if argv[0] == "test":
        return subprocess.run([str(BIN / "python"), "-m", "pytest", *argv[1:]]).returncode
    slidepdb = str(BIN / "slidepdb")
    # the databases the samples use: 4x4 6-6-3 for both goals (a few seconds each; kept in
    # databases/ and skipped on the next run), which also serve the walled 4x4 samples
    for goal in ("korf", "devquiz"):
        rc = subprocess.run([slidepdb, "build", "4x4", "--goal", goal, "--partition", "6-6-3"]).returncode
        if rc:
            return rc
    subprocess.run([slidepdb, "inspect"])
    args = argv[1:] or ["--time-limit", "60"]
    print("quickstart: solving scripts/samples.txt", file=sys.stderr)  # (slidepdb says when it compiles)
    return subprocess.run([slidepdb, "solve", "scripts/samples.txt", *args]).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
