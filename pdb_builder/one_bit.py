"""One bit an entry for zero-aware tables: a child's value read from its parent's.

A zero-aware table (:mod:`pdb_builder.regions`) knows the cost of each (placement,
region of the blank) pair: the plain table's least value of the placement plus its
region's code.  A move of one of the pattern's tiles is a move of the abstract graph
from the blank's region, and a move of any other tile leaves the pair as it is.  Where
every abstract move changes that cost by exactly one (the build checks it on every
move, :mod:`pdb_builder.make.one_bit`; a bipartite graph makes every change odd, so a
consistent table has it), a child's cost is its parent's minus or plus one.  The two
candidates' least values differ by two, so bit ``(least >> 1) & 1`` of the child's
placement tells them apart (Clausecker & Reinefeld, SoCS 2019, store one bit an entry
for the same reason).  The search knows its parent's cost; the root's is read from the
plain table, which stays in the file.

The copy keeps the codes as they are (one byte a placement) and replaces the plain
table's byte by a bit: nine bits a placement where the zero-aware table reads sixteen.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

ENCODING = "zero-aware-1bit-v1"  # the copies' encoding, as files name it
WHOLE = 255  # a copy's code byte for a placement read whole (its plain value and code)


class OneBitCopy(NamedTuple):
    """A zero-aware table's one-bit copy as a file holds it."""

    bits: np.ndarray  # uint8: placement r's bit in bit r & 7 of byte r >> 3
    codes: np.ndarray  # uint8, one per placement: its zero-aware code, or WHOLE
    guards: tuple = ()  # the arrays' Guards where their check is left to the reader (integrity.py)
    whole: int = 0  # how many placements are read whole

    @property
    def nbytes(self) -> int:
        return int(self.bits.nbytes + self.codes.nbytes)


WHOLE_SHARE = 1 / 1000  # a search reads a copy that marks at most this share of its placements whole


def few_whole(copy, share: float = WHOLE_SHARE) -> bool:
    """Whether a search reads ``copy`` (a :class:`OneBitCopy` or None) in place of its
    table and codes: where it marks at most ``share`` of its placements whole (False
    counts as 0: never).  A placement read whole is read from the table and the codes,
    and those reads, spread over every page, bring the table's pages into memory: on the
    4x4 7-8 tables (1.3% and 2.1% read whole) a search then holds more than with the
    tables alone; on the 5x5 6-tile ones (0.003%), 0.70 of it (docs/benchmarks.md)."""
    return copy is not None and share > 0 and copy.whole <= share * copy.codes.shape[0]


def bit_at(byte, r):
    """Entry ``r``'s bit, from the byte that holds it."""
    return (byte >> (r & 7)) & 1


def decode(bit, parent, extra):
    """The child's cost: ``parent`` - 1 or + 1, the one whose least value (the cost
    less the child's region's ``extra``) has bit ``bit``."""
    lo = parent - 1
    return lo if ((lo - extra) >> 1) & 1 == bit else lo + 2
