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

Most placements' (code, bit) pairs are among a few hundred, so a copy may fold the bit
into the code byte: each placement's byte is then the index of its pair in the copy's
``pairs`` (up to 255 of them, the most frequent; a placement whose pair is not among
them is read whole), eight bits a placement, half the zero-aware table's sixteen.

A placement read whole (code byte :data:`WHOLE`) needs its plain value and its code.  A
copy's **side table** holds them, so a search that reads the copy never reads the table
or the codes beyond its roots: the placements coded WHOLE in rank order, each a uint32
``(r & (2**shift - 1)) << 16 | value << 8 | code``, and an index of where each bucket of
``2**shift`` ranks starts among them (bucket ``b``'s entries are
``side[index[b]:index[b + 1]]``, sorted, so a binary search over a few dozen finds one).
Without one (a file built before them) a search reads those placements from the table
and the codes, whose pages it then holds too.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

ENCODING = "zero-aware-1bit-v1"  # the copies' encoding, as files name it
SIDE_ENCODING = "zero-aware-1bit-side-v1"  # their side tables' encoding
PAIRS_ENCODING = "zero-aware-1bit-pairs-v1"  # a copy whose code bytes index its (code, bit) pairs
WHOLE = 255  # a copy's code byte for a placement read whole (its plain value and code)
SIDE_BITS = 16  # bits of an entry holding its rank's place in its bucket: a shift is at most this
SIDE_BUCKET = 32  # about how many placements read whole a side table's bucket holds


class OneBitCopy(NamedTuple):
    """A zero-aware table's one-bit copy as a file holds it."""

    bits: object  # uint8: placement r's bit in bit r & 7 of byte r >> 3; None where pairs holds them
    codes: np.ndarray  # uint8, one per placement: its zero-aware code (its pair's index with pairs), or WHOLE
    guards: tuple = ()  # the arrays' Guards where their check is left to the reader (integrity.py)
    whole: int = 0  # how many placements are read whole
    side: object = None  # the side table (uint32 entries of the placements read whole), or None
    index: object = None  # uint32: where each bucket of 2**shift ranks starts in side
    shift: int = 0
    pairs: object = None  # uint16[256]: pair j is code pairs[j] & 255 and bit pairs[j] >> 8; or None

    @property
    def nbytes(self) -> int:
        """The bytes a search reads: the bits, the codes, the pairs and the side table."""
        arrays = (self.bits, self.codes, self.side, self.index, self.pairs)
        return int(sum(a.nbytes for a in arrays if a is not None))


WHOLE_SHARE = 1 / 1000  # a search reads a copy that marks at most this share of its placements whole


def few_whole(copy, share: float = WHOLE_SHARE) -> bool:
    """Whether a search reads ``copy`` (a :class:`OneBitCopy` or None) in place of its
    table and codes: where it has a side table, or marks at most ``share`` of its
    placements whole (``share`` 0: never).  Without a side table a placement read whole
    is read from the table and the codes, and those reads, spread over every page, bring
    the table's pages into memory: on the 4x4 7-8 tables (1.3% and 2.1% read whole) a
    search then holds more than with the tables alone; on the 5x5 6-tile ones (0.003%),
    0.70 of it (docs/benchmarks.md)."""
    if copy is None or share <= 0:
        return False
    return copy.side is not None or copy.whole <= share * copy.codes.shape[0]


def side_shift(entries: int, whole: int) -> int:
    """A side table's bucket width (``2**shift`` ranks) for a table of ``entries``
    placements of which ``whole`` are read whole: about :data:`SIDE_BUCKET` of them a
    bucket, at most :data:`SIDE_BITS`."""
    spread = max(entries // max(whole, 1), 1)
    return int(min(SIDE_BITS, max(1, spread.bit_length() - 1 + SIDE_BUCKET.bit_length() - 1)))


def bit_at(byte, r):
    """Entry ``r``'s bit, from the byte that holds it."""
    return (byte >> (r & 7)) & 1


def decode(bit, parent, extra):
    """The child's cost: ``parent`` - 1 or + 1, the one whose least value (the cost
    less the child's region's ``extra``) has bit ``bit``."""
    lo = parent - 1
    return lo if ((lo - extra) >> 1) & 1 == bit else lo + 2
