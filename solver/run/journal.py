"""The journal of a run or a batch: one JSON line per finished board, appended and
synced as it ends, so a kill loses nothing; read back with every answer simulated
again and every proof held against the tables it rests on.  Its first line names
the input it was written for (:func:`input_key`), so a resume with another input is
refused before anything is overwritten (:func:`refuse_other_input`).  A line of
``slidepdb run`` names the step that wrote it (``"step": "answer 2"``, ``"quick"``,
``"round 1"``); a step reads back the lines of its own pass (:func:`pass_of`)."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

from pdb_builder.atomic import write_text_atomic
from pdb_builder.errors import (
    BoardError,
    DatabaseError,
)
from pdb_builder.moves import check_moves
from pdb_builder.words import plural

from ..outcome import Outcome, better, settle_by_bound

# the pass whose lines a step reads back as done: the answer pass's steps (answering and
# shortening) the answer pass's, the quick pass its own, the full pass and its rounds the
# full pass's; a line that names no step is a batch's, or the full pass's of a journal
# written before lines named their step
PASSES = {"answer": "answer", "shorten": "answer", "quick": "quick", "full": "full", "round": "full"}


def pass_of(step: str | None) -> str:
    """The pass of a step named as its journal lines name it (:data:`PASSES`)."""
    return PASSES.get((step or "full").split()[0], "full")


def refuse_unless_resume(journal: Path, resume: bool) -> None:
    """A journal left by an earlier run is continued only when asked to."""
    if journal.exists() and not resume:
        raise BoardError(
            f"{journal} holds an earlier run's boards: pass --resume to continue it, or delete it to start over"
        )


def _board_key(rec) -> str:
    """One board of an input as a journal line names it: its text, and for a parsed
    board its size and goal too (the same text is another board on another size)."""
    if rec.board is None:
        return rec.text
    shape = rec.board.shape
    return f"{shape.size_text} {shape.goal_kind} {rec.board}"


def input_key(records) -> dict:
    """The journal's first line: what identifies the whole input (its board count,
    and a digest of its boards and their line numbers in order)."""
    h = hashlib.sha256()
    for rec in records:
        h.update(f"{rec.index} {_board_key(rec)}\n".encode())
    return {"input": {"boards": len(records), "sha256": h.hexdigest()[:16]}}


def refuse_other_input(paths, records, key: dict | None = None, answers: Path | None = None) -> None:
    """Refuse (exit 2) to resume from journals ``paths`` written for another input
    than ``records``: a journalled board that is not the input's board on that line,
    or a first line (:func:`input_key`) of another count or other boards; and an
    answer file ``answers`` of another count of lines.  Names the first difference
    and the two ways on, so no earlier answer is overwritten unasked."""
    key = (key or input_key(records))["input"]
    by_index = {r.index: r for r in records}
    fault = None
    for path in (Path(p) for p in paths):
        head = None
        for d in journal_lines(path):
            if not isinstance(d, dict):
                continue
            if "input" in d and head is None:
                head = d["input"]
            if "index" not in d or "board" not in d:
                continue
            rec = by_index.get(d["index"])
            if rec is None:
                fault = f"line {d['index']} was {d['board']}, the input has no board on that line"
            elif not _same_text(d, rec):
                fault = f"line {rec.index} was {d['board']}, the input has {rec.text} there"
            if fault:
                break
        if fault is None and head is not None and head != key:
            fault = (
                f"it was written for {head.get('boards')} boards, the input has {len(records)}"
                if head.get("boards") != len(records)
                else "the input's boards or their order are not the ones it was written for"
            )
        if fault:
            raise BoardError(
                f"{path}: written for another input ({fault}); resuming would lose its answers: "
                "give a new --out to keep both, or --fresh to discard the earlier run and start afresh"
            )
    if answers is not None and answers.exists():
        lines = answers.read_text(encoding="utf-8", errors="replace").count("\n")
        if lines != len(records):
            raise BoardError(
                f"{answers}: {lines} answer lines, the input has {len(records)} boards; resuming would "
                "overwrite them: give a new --out to keep both, or --fresh to discard them and start afresh"
            )


def refuse_foreign_answers(answers, journals, records) -> None:
    """Refuse (exit 2) to write over ``answers`` when it holds something that is not an
    answer file of ``records``: a file with text in it, beside no journal (``journals``:
    those there; a journal's input is held to ``records`` by :func:`refuse_other_input`),
    whose lines are not one a board, each empty or moves that reach its board's goal
    (simulated).  A typo in ``--out`` never costs the user a file of theirs."""
    path = Path(answers)
    if journals or not path.is_file():
        return
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        lines, why = None, "not a text file"
    if lines is not None and not any(line.strip() for line in lines):
        return
    if lines is not None:
        why = None
        if len(lines) != len(records):
            why = f"{plural(len(lines), 'line')}, the input has {plural(len(records), 'board')}"
        else:
            for n, (rec, line) in enumerate(zip(records, lines), 1):
                moves = line.strip()
                if moves and (rec.board is None or not check_moves(rec.board, moves).ok):
                    why = f"line {n} is not an answer to board {n}"
                    break
        if why is None:
            return
    raise BoardError(
        f"{path}: not an answer file of this input ({why}): refusing to overwrite it; "
        "give another --out, or pass --fresh to replace it"
    )


NUMBER = (int, float)
NONE = type(None)
# the type of each field of a board's line that a reader acts on (a line with another
# type in one of them is not one of ours: skipped, as a line cut short is)
LINE_TYPES = {
    "index": int,
    "board": str,
    "status": str,
    "step": (str, NONE),
    "size": (str, NONE),
    "goal": (str, NONE),
    "moves": (str, NONE),
    "length": (int, NONE),
    "optimal": (bool, NONE),
    "lower_bound": (int, NONE),
    "h0": (int, NONE),
    "floor": (int, NONE),
    "nodes": (int, NONE),
    "seconds": (*NUMBER, NONE),
    "ended": (*NUMBER, NONE),
    "time_limit": (*NUMBER, NONE),
    "heuristic": (list, NONE),
    "tables": (dict, NONE),
    "certificate": (dict, NONE),
    "iterations": (list, NONE),
    "unfinished": (list, NONE),
    "ladder_failed": (list, NONE),
}


def _numbers(v, count: int | None = None) -> bool:
    return (
        isinstance(v, list)
        and (count is None or len(v) == count)
        and all(isinstance(x, NUMBER) and not isinstance(x, bool) for x in v)
    )


def _sums(tables) -> bool:
    """Whether ``tables`` maps file names to lists of checksum strings."""
    return isinstance(tables, dict) and all(
        isinstance(v, list) and all(isinstance(c, str) for c in v) for v in tables.values()
    )


def well_formed(d) -> bool:
    """Whether journal line ``d`` is one this version can act on: the input's first line
    (``{"input": {...}}``), the folded-files line, or a board's line whose fields are of
    their types (:data:`LINE_TYPES`; a status :data:`~solver.outcome.STATUS_EXIT` knows;
    checksums as lists of strings; costs as lists of numbers)."""
    from ..outcome import STATUS_EXIT

    if not isinstance(d, dict):
        return False
    if "index" not in d:
        return isinstance(d.get("input", {}), dict) and isinstance(d.get("folded", []), list)
    for key, types in LINE_TYPES.items():
        if key in d and (not isinstance(d[key], types) or (types is int and isinstance(d[key], bool))):
            return False
    if d.get("status") not in STATUS_EXIT:
        return False
    cert = d.get("certificate")
    if not _sums(d.get("tables") or {}) or (cert is not None and not _sums(cert.get("tables") or {})):
        return False
    iterations = d.get("iterations") or []
    failed = d.get("ladder_failed")
    return (
        all(_numbers(it, 3) for it in iterations)
        and (d.get("unfinished") is None or _numbers(d["unfinished"], 3))
        and (failed is None or (len(failed) == 2 and isinstance(failed[0], int) and _numbers(failed[1])))
    )


def journal_lines(path: Path):
    """The journal's records, skipping a line cut short by a kill, or not of ours
    (:func:`well_formed`)."""
    if path.exists():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                d = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                continue
            if well_formed(d):
                yield d


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


TABLE_FILE = re.compile(r"\(([^()]+\.h5)\)")  # a database file as an outcome's ``heuristic`` names it


def unbacked(out: Outcome) -> str | None:
    """Why the journal line ``out`` does not back its optimal claim or lower bound
    (None: it does, or it claims neither): a proof is trusted with what proves it.  An
    optimal claim needs its certificate (:func:`~solver.outcome.certificate`), of this
    answer's length, at that threshold; and every database file the estimate read (its
    ``heuristic``) must be named with its checksums among the tables the claim rests on
    (an optimal claim's in its certificate, a lower bound's in ``tables``), where
    :func:`reopen_if_unbacked` holds them to the files there now.  (A proof on
    wall-aware Manhattan distance alone rests on no file, and names none.)"""
    if not (out.optimal or out.lower_bound):
        return None
    named = dict(out.tables or {})
    if out.moves is not None and out.length != len(out.moves):
        return "its length is not its answer's"
    if out.optimal:
        cert = out.certificate
        if (
            not isinstance(cert, dict)
            or not isinstance(cert.get("tables"), dict)
            or cert.get("length") != out.length
            or cert.get("threshold") != out.length
        ):
            return "its certificate is missing, or is not of its answer"
        named = cert["tables"]  # a proof's tables are the ones its certificate names
    read = {name for h in out.heuristic or () for name in TABLE_FILE.findall(str(h))}
    if read - set(named):
        return f"it names no checksums of the tables its estimate read: {', '.join(sorted(read - set(named)))}"
    return None


def rests_on(out: Outcome) -> dict:
    """The tables ``out``'s proof rests on: file name -> checksums (its ``tables`` and
    its certificate's)."""
    cert = out.certificate if isinstance(out.certificate, dict) else {}
    return {**(out.tables or {}), **(cert.get("tables") or {})}


def reopen_if_unbacked(out: Outcome, now) -> bool:
    """Withdraw ``out``'s optimal claim and lower bound when the line does not back
    them (:func:`unbacked`), or, with ``now`` (:func:`current_checksums`), when a table
    file they rest on (:func:`rests_on`) is gone or holds other tables now; the answer
    stays, and the board goes back to the steps that prove.  Whether it did."""
    if not (out.optimal or out.lower_bound):
        return False
    why = unbacked(out)
    if why is None and now is not None:
        changed = sorted(name for name, sums in rests_on(out).items() if now(name) != list(sums))
        if changed:
            why = f"the tables of its proof changed or are gone since: {', '.join(changed)}"
    if why is None:
        return False
    out.withdraw_proof(reopened=why)
    return True


def board_lines(path: Path, records, simulate: bool = True, of: str | None = None):
    """(record, line) for each journal line of a board of ``records``: the same index,
    text, size and goal (:func:`_same_board`), and for an answer, moves that still
    reach that board's goal (simulated again, unless ``simulate`` is False: a count
    of what the journal says).  Lines of other boards, or cut short by a kill, are
    skipped; with ``of`` (a pass, :data:`PASSES`), so are the other passes' lines."""
    by_index = {r.index: r for r in records}
    for d in journal_lines(path):
        rec = by_index.get(d.get("index")) if isinstance(d, dict) else None
        if rec is None or not _same_board(d, rec):
            continue
        if of is not None and pass_of(d.get("step")) != of:
            continue
        if simulate and d.get("status") == "solved":
            if rec.board is None or not check_moves(rec.board, d.get("moves") or "").ok:
                continue
        yield rec, d


def read_journal(path: Path, records, now=None, of: str | None = None) -> dict[int, Outcome]:
    """Outcomes of a previous run (``of``: of that pass alone), re-checked
    (:func:`board_lines`): an answer whose moves do not reach the goal of the same
    board, or a torn last line, is dropped (solved again).  With ``now``
    (:func:`current_checksums`), a proof whose tables changed since is reopened, and so
    is one the line does not back, with ``now`` or without (:func:`reopen_if_unbacked`).
    A board journalled more than once keeps the better of its outcomes
    (:func:`~solver.outcome.better`: a later attempt that found less never stands in
    for an earlier answer or proof)."""
    done: dict[int, Outcome] = {}
    for rec, d in board_lines(path, records, of=of):
        d = {k: v for k, v in d.items() if k != "step"}  # which step wrote it: the journal's, not the outcome's
        out = Outcome.from_json({**d, "index": rec.index})
        if not reopen_if_unbacked(out, now):
            settle_by_bound(out)
        done[rec.index] = better(done[rec.index], out) if rec.index in done else out
    return done


def _same_board(d: dict, rec) -> bool:
    """Whether journal line ``d`` is of ``rec``'s board: the same text, size and goal.
    A numeric board's text names neither its size nor its goal, and a journal line
    written before lines carried their goal is of a numeric board only when its
    answer reaches this board's goal (simulated by :func:`board_lines`): another
    status is left out and the board solved again."""
    if not _same_text(d, rec):
        return False
    if rec.board is None:
        return True
    shape = rec.board.shape
    if "goal" in d:
        return d["goal"] == shape.goal_kind
    return d.get("status") == "solved" or "," in d["board"]


def _same_text(d: dict, rec) -> bool:
    """Whether journal line ``d`` names ``rec``'s board text (and, for a parsed board,
    its size, where the line says it): what a line of another input never does."""
    if rec.board is None:
        return d.get("board") == rec.text
    size = rec.board.shape.size_text
    return d.get("board") == str(rec.board) and d.get("size", size) == size


def journal_attempts(path: Path, records, of: str | None = None) -> Counter:
    """How many times each board of ``records`` was journalled (``of``: by that pass; a
    retry journals every attempt)."""
    return Counter(rec.index for rec, _ in board_lines(path, records, of=of))


def fold_earlier_form(journal: Path, earlier: dict[str, Path]) -> int:
    """Fold journals of the three-file form (``earlier``: pass -> its file, see
    :attr:`solver.run.files.RunFiles.earlier_journals`) into ``journal``: their lines,
    each naming its pass as its step, after the journal's own, and a last line naming
    the files folded; written to a new file that replaces the journal at once, then the
    files removed.  A kill before the replacement leaves everything as it was; one
    after it leaves files the journal names as folded: they are removed, not folded
    twice.  The lines folded (0: nothing to fold)."""
    there = {step: path for step, path in earlier.items() if path.exists()}
    if not there:
        return 0
    lines = list(journal_lines(journal))
    done = {name for d in lines if isinstance(d, dict) for name in d.get("folded", ())}
    fold = {step: path for step, path in there.items() if path.name not in done}
    count = 0
    if fold:
        folded = []
        for step, path in fold.items():
            for d in journal_lines(path):
                if not isinstance(d, dict):
                    continue
                if "input" in d:  # the same input's (refuse_other_input checked it): the journal's first line
                    if not lines:
                        lines.append(d)
                    continue
                folded.append({**d, "step": step})
        count = len(folded)
        lines += [*folded, {"folded": sorted(p.name for p in fold.values())}]
        write_text_atomic(journal, "".join(json.dumps(d) + "\n" for d in lines))
    for path in there.values():
        path.unlink(missing_ok=True)
    return count
