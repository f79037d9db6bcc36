"""The benchmark files in ``data/`` are the ones its README names: each file's SHA-256
matches the table there, and every file in the folder is listed (a clone reproduces
the headlines on the very boards they were measured on)."""

import hashlib
import re

from .conftest import DATA


def _listed() -> dict[str, str]:
    rows = re.findall(r"^\| `([^`]+)` \|.*\| `([0-9a-f]{64})` \|$", (DATA / "README.md").read_text(), re.M)
    return dict(rows)


def test_every_benchmark_file_is_listed_with_its_checksum():
    listed = _listed()
    present = {p.relative_to(DATA).as_posix() for p in DATA.rglob("*") if p.is_file() and p.name != "README.md"}
    assert present == set(listed)
    for name, digest in listed.items():
        assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == digest, name
