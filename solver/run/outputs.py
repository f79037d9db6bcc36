"""Writing a run's outputs each on its own: an answer file, a report, a timeline or a
plot that cannot be written (a full disk, a folder made read-only while the boards
were solved, a plotting error) is named, and never keeps the others from being
written.  The command exits with :data:`~pdb_builder.errors.EXIT_OUTPUT` then."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

log = logging.getLogger("slidepdb.run")


@dataclass
class OutputFailure:
    what: str  # "--out", "--report", "--plot", "the timeline"
    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.what} {self.path} not written: {self.reason}"


def write_each(failures: list, what: str, path, write):
    """``write()``; an error (not an interrupt) becomes an :class:`OutputFailure` on
    ``failures`` instead of stopping the outputs after it.  Its result, or None."""
    try:
        return write()
    except Exception as exc:  # noqa: BLE001 - any failure of one output: the others are still written
        if os.environ.get("SLIDEPDB_DEBUG"):
            raise
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else f"{type(exc).__name__}: {exc}"
        failures.append(OutputFailure(what, str(path), reason))
        log.debug("%s %s not written", what, path, exc_info=True)
        return None
