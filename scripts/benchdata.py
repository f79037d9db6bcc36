"""Paths and reference figures the benchmark scripts share."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


def kf2002_expanded() -> dict[str, int]:
    """Korf & Felner (2002): nodes their IDA* expanded with the 6-6-6-6 tables and their
    reflection, by 24-puzzle instance number (the first 33 of ``korf24.txt``)."""
    path = DATA / "korf24_kf2002_nodes.txt"
    out: dict[str, int] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                ident, _, expanded = line.split()
                out[ident] = int(expanded)
    return out
