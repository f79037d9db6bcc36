import os
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def data_file(*parts) -> Path:
    """A benchmark file of ``../shared/data``: the test is skipped where it is missing,
    except under CI (``CI=true``), where a missing file fails the test."""
    path = DATA.joinpath(*parts)
    if not path.exists():
        message = f"benchmark data not found at {path}"
        if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
            pytest.fail(message + " (CI=true: the data must be there)")
        pytest.skip(message)
    return path


def flip_bit(path, dsname: str, at: int, mask: int = 0x01) -> None:
    """Flip bits ``mask`` of byte ``at`` of dataset ``dsname``'s data in the file ``path``
    (a damaged table, as a bad disk or a stray write would leave it)."""
    import h5py

    with h5py.File(path, "r") as f:
        where = f[dsname].id.get_offset() + at
    with open(path, "r+b") as fh:
        fh.seek(where)
        b = fh.read(1)[0]
        fh.seek(where)
        fh.write(bytes([b ^ mask]))
