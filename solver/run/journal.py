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
    (``out.tables``) is gone or holds other tables now (``now``: see
    :func:`current_checksums`); the answer stays.  Whether it did."""
    changed = sorted(name for name, sums in (out.tables or {}).items() if now(name) != list(sums))
    if not changed or not (out.optimal or out.lower_bound):
        return False
    out.withdraw_proof(reopened=f"the tables of its proof changed or are gone since: {', '.join(changed)}")
    return True


def board_lines(path: Path, records, simulate: bool = True):
    """(record, line) for each journal line of a board of ``records``: the same index,
    text, size and goal (:func:`_same_board`), and for an answer, moves that still
    reach that board's goal (simulated again, unless ``simulate`` is False: a count
    of what the journal says).  Lines of other boards, or cut short by a kill, are
    skipped."""
    by_index = {r.index: r for r in records}
    for d in journal_lines(path):
        rec = by_index.get(d.get("index")) if isinstance(d, dict) else None
        if rec is None or not _same_board(d, rec):
            continue
        if simulate and d.get("status") == "solved":
            if rec.board is None or not check_moves(rec.board, d.get("moves") or "").ok:
                continue
        yield rec, d


def read_journal(path: Path, records, now=None) -> dict[int, Outcome]:
    """Outcomes of a previous run, re-checked (:func:`board_lines`): an answer whose
    moves do not reach the goal of the same board, or a torn last line, is dropped
    (solved again).  With ``now`` (:func:`current_checksums`), a proof whose tables
    changed since is reopened (:func:`reopen_if_stale`).  A board journalled more than
    once keeps the better of its outcomes (:func:`~solver.outcome.better`: a later
    attempt that found less never stands in for an earlier answer or proof)."""
    done: dict[int, Outcome] = {}
    for rec, d in board_lines(path, records):
        out = Outcome.from_json({**d, "index": rec.index})
        if now is None or not reopen_if_stale(out, now):
            settle_by_bound(out)
        done[rec.index] = better(done[rec.index], out) if rec.index in done else out
    return done


def _same_board(d: dict, rec) -> bool:
    """Whether journal line ``d`` is of ``rec``'s board: the same text, size and goal.
    A numeric board's text names neither its size nor its goal, and a journal line
    written before lines carried their goal is of a numeric board only when its
    answer reaches this board's goal (simulated by :func:`board_lines`): another
    status is left out and the board solved again."""
    if rec.board is None:
        return d.get("board") == rec.text
    shape = rec.board.shape
    if d.get("board") != str(rec.board) or d.get("size", shape.size_text) != shape.size_text:
        return False
    if "goal" in d:
        return d["goal"] == shape.goal_kind
    return d.get("status") == "solved" or "," in d["board"]


def journal_attempts(path: Path, records) -> Counter:
    """How many times each board of ``records`` was journalled (a retry journals every attempt)."""
    return Counter(rec.index for rec, _ in board_lines(path, records))
