"""The Python API's option checks: the ranges the CLI holds its options to, with
:class:`~pdb_builder.errors.OptionsError` naming the option (exit code 2 for a
caller that maps errors as the CLI does), never a ``TypeError`` from deep inside."""

from __future__ import annotations

import math
from numbers import Integral, Real

from .errors import OptionsError

UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_bytes(text: str) -> int:
    """A size such as ``4G``, ``500M`` or ``1024`` in bytes; ValueError (the fault in
    words) for anything else or a size that is not positive."""
    t = str(text).strip().upper().removesuffix("IB").removesuffix("B")
    num, unit = (t[:-1], t[-1]) if t and t[-1] in UNITS else (t, "")
    try:
        value = float(num)
    except ValueError:
        raise ValueError(f"{text!r}: expected a size such as 4G or 500M") from None
    count = int(value * UNITS[unit]) if math.isfinite(value) else 0
    if count < 1:
        raise ValueError(f"{text!r}: must be positive")
    return count


def byte_count(name: str, value) -> int:
    """``value`` (a whole number of bytes, or a size such as ``"4G"``) as bytes."""
    if isinstance(value, str):
        try:
            return parse_bytes(value)
        except ValueError as exc:
            raise OptionsError(f"{name}: {exc}") from None
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise OptionsError(f"{name}: expected a positive number of bytes or a size such as '4G', not {value!r}")
    return int(value)


def positive_number(name: str, value, whole: bool = False):
    """``value`` when it is a positive, finite number (``whole``: a whole number); None
    passes (not given)."""
    if value is None:
        return None
    kind = Integral if whole else Real
    if isinstance(value, bool) or not isinstance(value, kind) or not (math.isfinite(value) and value > 0):
        what = "a positive whole number" if whole else "a positive, finite number"
        raise OptionsError(f"{name}: expected {what}, not {value!r}")
    return value


def one_of(name: str, value, choices) -> str:
    if value not in choices:
        raise OptionsError(f"{name}: expected {' or '.join(repr(c) for c in choices)}, not {value!r}")
    return value
