from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def data_file(*parts) -> Path:
    path = DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"benchmark data not found at {path}")
    return path
