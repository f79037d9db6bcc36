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
