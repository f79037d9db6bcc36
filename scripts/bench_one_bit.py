#!/usr/bin/env python3
"""What one bit an entry would cost a table's values.

A value read relative to its parent's needs every abstract move to change it by a known set
of amounts: the two-bit copies (``pdb_builder/packed.py``) lower a region-aware table until
every move changes a value by 1 or 3, and keep the value modulo 8; one bit an entry (the value
modulo 4) needs every move to change it by exactly 1, so the table lowered to a slack of 1
(``relax(..., slack=1)``).  For each table of a file: the entries each lowering lowers, the
mean value before and after, and the largest lowering (a root's value is decoded from the full
one only where that stays below the modulus: 6 for two bits, 2 for one).

    .venv/bin/slidepdb build 4x4 --partition 6-6-3 --no-two-bit --db-dir D
    .venv/bin/python scripts/bench_one_bit.py D/4x4-korf.pdb.6-6-3.h5 [--results FILE]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    sys.path.insert(0, str(ROOT))
    import numpy as np

    from pdb_builder.make.lowering import relax
    from pdb_builder.storage import open_database

    if len(sys.argv) != 2:
        print(__doc__.strip().split("\n\n")[-1], file=sys.stderr)
        return 2
    db = open_database(sys.argv[1])
    print(f"{Path(sys.argv[1]).name}\n")
    print(
        "| pattern | entries | mean value | slack 3 (two bits): lowered | mean after | largest lowering "
        "| slack 1 (one bit): lowered | mean after | largest lowering |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for t in db.tables:
        full = np.array(t.data)
        seen = full != 255
        cells = [f"{'-'.join(map(str, t.tiles))}", f"{int(seen.sum()):,}", f"{full[seen].mean():.3f}"]
        for slack in (3, 1):
            relaxed = full.copy()
            relax(relaxed, db.shape, len(t.tiles), slack=slack)
            low = full[seen].astype(np.int64) - relaxed[seen]
            cells += [f"{(low > 0).mean():.2%}", f"{relaxed[seen].mean():.3f}", str(int(low.max()))]
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    from benchdata import run_keeping_tables

    sys.exit(run_keeping_tables(main))
