"""The per-board journal of a batch: one JSON line per finished board, appended and
synced as it ends, so a kill loses nothing; read back with every answer simulated
again and every proof held against the tables it rests on."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from pdb_builder.errors import (
    BoardError,
    DatabaseError,
)
from pdb_builder.moves import check_moves

from ..outcome import Outcome, better, settle_by_bound


def refuse_unless_resume(journal: Path, resume: bool) -> None:
    """A journal left by an earlier run is continued only when asked to."""
    if journal.exists() and not resume:
        raise BoardError(
            f"{journal} holds an earlier run's boards: pass --resume to continue it, or delete it to start over"
        )


def journal_lines(path: Path):
    """The journal's records, skipping a line cut short by a kill."""
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue


def current_checksums(db_dir=None):
    """``name -> [16-hex sha256 of each table]`` of the database files in ``db_dir`` now
    (None for a file that is gone or unreadable), read from each file's attributes
    once: what a journal's ``tables`` are held against."""
    from pdb_builder.storage import CHECKSUM_DIGITS, default_db_dir, stored_checksums  # (h5py, imported late)

    folder = default_db_dir(db_dir)
    seen: dict[str, list[str] | None] = {}

    def now(name: str) -> list[str] | None:
        if name not in seen:
            try:
                seen[name] = [c[:CHECKSUM_DIGITS] for c in stored_checksums(folder / name)]
            except (OSError, DatabaseError):
                seen[name] = None
        return seen[name]

    return now


def reopen_if_stale(out: Outcome, now) -> bool:
    """Withdraw ``out``'s optimal claim and lower bound when a table file they rest on
    (``extra["tables"]``) is gone or holds other tables now (``now``: see
    :func:`current_checksums`); the answer stays.  Whether it did."""
    changed = sorted(name for name, sums in (out.extra.get("tables") or {}).items() if now(name) != list(sums))
    if not changed or not (out.extra.get("optimal") or out.extra.get("lower_bound")):
        return False
    out.extra.update(
        optimal=False,
        lower_bound=None,
        reopened=f"the tables of its proof changed or are gone since: {', '.join(changed)}",
    )
    for key in ("certificate", "proof"):
        out.extra.pop(key, None)
    return True


def read_journal(path: Path, records, now=None) -> dict[int, Outcome]:
    """Outcomes of a previous run, re-checked: an answer whose moves do not reach
    the goal of the same board, or a torn last line, is dropped (solved again).
    With ``now`` (:func:`current_checksums`), a proof whose tables changed since is
    reopened (:func:`reopen_if_stale`).  A board journalled more than once keeps the
    better of its outcomes (:func:`~solver.outcome.better`: a later attempt that found
    less never stands in for an earlier answer or proof)."""
    by_index = {r.index: r for r in records}
    done: dict[int, Outcome] = {}
    for d in journal_lines(path):
        rec = by_index.get(d.get("index"))
        if rec is None or d.get("board") != (str(rec.board) if rec.board is not None else rec.text):
            continue
        if d.get("status") == "solved":
            if rec.board is None or not check_moves(rec.board, d.get("moves") or "").ok:
                continue
        extra = {k: v for k, v in d.items() if k not in ("index", "board", "status", "error")}
        out = Outcome(rec.index, d["board"], d["status"], d.get("error"), extra)
        if now is None or not reopen_if_stale(out, now):
            settle_by_bound(extra)
        done[rec.index] = better(done[rec.index], out) if rec.index in done else out
    return done


def journal_attempts(path: Path) -> Counter:
    """How many times each index was journalled (a retry journals every attempt)."""
    return Counter(d.get("index") for d in journal_lines(path))
