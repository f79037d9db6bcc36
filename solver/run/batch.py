"""Many boards: :func:`run_batch` (solve, journal, resume, retry), the answer file and
the per-board report and summary."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from pdb_builder.atomic import write_text_atomic

from ..outcome import Outcome, better
from .answers import fit_limits
from .cluster import dask_outcomes
from .feed import Feed
from .files import RunFiles
from .journal import current_checksums, read_journal, refuse_unless_resume
from .outputs import write_each
from .slots import Pools, _local_outcomes


@dataclass
class BatchResult:
    outcomes: dict[int, Outcome]
    interrupted: bool = False
    resumed: int = 0
    seconds: float = 0.0
    left_out: set[int] = field(default_factory=set)  # answers kept out of the answer file by the move limits
    reopened: int = 0  # journalled proofs whose tables changed since: solved again
    failed_outputs: list = field(default_factory=list)  # OutputFailure of the answer file (solver.run.outputs)


# a board's worst wall time in time limits: its search, the fallback's 2 limits and a
# slice of slack (BOARD_SPAN), or without the fallback its limit and some slack
BOARD_SPAN = 3.2
QUICK_SPAN = 1.5


def run_batch(
    records,
    *,
    db_dir=None,
    use_db: bool = True,
    time_limit=None,
    node_limit=None,
    workers: int = 1,
    threads: int = 1,
    grow: bool = True,
    out_path=None,
    resume: bool = False,
    on_outcome=None,
    fallback: bool = True,
    scheduler=None,
    limits=None,
    journal=None,
    jobs=(),
    job_memory: int | None = None,
    retry=(),
    last_start: float | None = None,
    search_progress=None,
    go_on: bool = False,
    known=None,
    patient=(),
) -> BatchResult:
    """Solve every record; ``on_outcome(outcome)`` is called as each board finishes.
    ``time_limit``: seconds a board, or a callable that decides each board's as it
    starts (``time_limit(record)``, with a ``given`` dict and ``ended(seconds)`` told as each
    ends: :class:`solver.run.answer.AnswerLimit`).

    With ``out_path``, finished boards go to a journal beside it at once (so a kill
    loses nothing, and ``resume`` skips them), and the answer file is written
    atomically at the end, or at an interrupt with what is finished, never over
    ``limits`` (L, R, U, D).  ``scheduler``: a dask.distributed address (or Client)
    to solve on instead of local processes; ``journal``: another journal path (the
    default is beside ``out_path``).  ``jobs``: work done in the workers' slots that
    some records wait on (:class:`solver.run.feed.Job`: database builds), at most
    ``job_memory`` bytes of them at once, see :class:`Feed`.  ``retry``: indices
    solved again although the journal has them; the better outcome (:func:`better`)
    is kept and journalled.  ``threads``: threads for each board's optimal search
    (local processes only); with one, and ``grow``, a board's search also takes the
    worker slots nothing else can use (a batch's last boards:
    :class:`solver.run.lanes.Lanes`).  ``last_start``: wall-clock time
    (``time.time()``) after which no board starts; those not started keep their
    journalled outcome.
    ``search_progress``: told of each slice of the searches in this process
    (:class:`solver.cli.progress.SearchLine`; local processes with one worker only).
    ``go_on``: a table file that cannot be read is left out and the boards solved
    without it (:class:`~solver.api.SolverPool`), instead of stopping the batch.
    ``known``: index -> :class:`~solver.outcome.Known`, what earlier attempts at a
    board proved and found (:func:`~solver.api.solve_record`).  ``patient``: indices of
    records that have answers already: they wait for their jobs to the last start (:class:`Feed`)."""
    t0 = time.perf_counter()
    if journal is None and out_path:
        journal = RunFiles(out_path).journal
    journal = Path(journal) if journal is not None else None
    done: dict[int, Outcome] = {}
    if journal is not None:
        refuse_unless_resume(journal, resume)
        done = read_journal(journal, records, current_checksums(db_dir) if use_db else None)
    stale = [i for i, o in done.items() if o.extra.get("reopened")]
    earlier = {i: done.pop(i) for i in set(retry) | set(stale) if i in done}
    result = BatchResult(dict(done), resumed=len(done), reopened=len(stale))
    for out in done.values():
        if on_outcome:
            on_outcome(out)
    todo = [r for r in records if r.index not in done]
    given = getattr(time_limit, "given", None)  # a limit decided as each board starts: what each had
    feed = Feed(
        todo, jobs, last_start, job_memory, board_seconds=None if given is not None else time_limit, patient=patient
    )
    pools = Pools(db_dir, use_db, threads, go_on, grow)
    if scheduler is not None:
        outcomes = dask_outcomes(feed, pools, time_limit, node_limit, fallback, scheduler, known)
    else:
        outcomes = _local_outcomes(feed, pools, time_limit, node_limit, fallback, workers, search_progress, known)
    jf = open(journal, "a", encoding="utf-8") if journal is not None else None
    try:
        for out in outcomes:
            tried = time_limit
            if given is not None:
                tried = given.get(out.index, 0.0)
                time_limit.ended(out.extra.get("seconds"))
            # the earlier outcome of a board solved again, or this batch's own (a board
            # handed out twice; the journalled boards are never handed out): the better one stands
            before = earlier.pop(out.index, None) or result.outcomes.get(out.index)
            if before is not None:
                had = before.extra.get("time_limit", 0)
                tried = None if had is None or tried is None else max(had, tried)
                out = better(before, out)
            out.extra["time_limit"] = tried  # the largest this board has had (None: none)
            out.extra["ended"] = round(time.time(), 3)  # wall clock: solver/run/timeline.py
            result.outcomes[out.index] = out
            if jf is not None:
                jf.write(json.dumps(out.as_json()) + "\n")
                jf.flush()
                os.fsync(jf.fileno())
            if on_outcome:
                on_outcome(out)
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
        # the finished answers first, then the workers' shutdown: an interrupt that comes
        # while the workers are ended (or a shutdown that hangs) never costs the answer file
        for i, out in earlier.items():  # not retried before the interrupt: still the earlier outcome
            result.outcomes.setdefault(i, out)
        if jf is not None:
            jf.close()
        if out_path:
            left_out = write_each(
                result.failed_outputs,
                "--out",
                out_path,
                lambda: write_answers(out_path, records, result.outcomes, limits),
            )
            result.left_out = left_out or set()
        outcomes.close()
        result.seconds = time.perf_counter() - t0
        complete = not result.interrupted and len(result.outcomes) == len(records) and not result.failed_outputs
        if out_path and complete:
            journal.unlink(missing_ok=True)  # complete: the answer file says it all (else --resume writes it)
    return result


def answers_of(outcomes: dict[int, Outcome]) -> dict[int, str]:
    return {i: o.extra["moves"] for i, o in outcomes.items() if o.status == "solved" and o.extra.get("moves")}


def write_answers(out_path, records, outcomes: dict[int, Outcome], limits=None) -> set[int]:
    """DevQuiz answer file: one line per board in input order, empty when unsolved.

    Never over ``limits``: the answers :func:`solver.run.answers.fit_limits` leaves out
    get an empty line; their indices are returned (and marked in their outcomes)."""
    answers = answers_of(outcomes)
    left_out = fit_limits(answers, limits, {i: bool(outcomes[i].extra.get("optimal")) for i in answers})
    for i in answers:
        outcomes[i].extra["left_out"] = i in left_out
    lines = ["" if r.index in left_out else answers.get(r.index, "") for r in records]
    write_text_atomic(out_path, "".join(line + "\n" for line in lines))
    return left_out


def write_report(path, outcomes) -> None:
    """Per-board report: CSV when the name ends in .csv, else JSON lines."""
    rows = [o.as_json() for o in sorted(outcomes, key=lambda o: o.index)]
    if str(path).endswith(".csv"):
        import csv
        import io

        cols = [
            "index",
            "board",
            "status",
            "size",
            "walls",
            "length",
            "optimal",
            "lower_bound",
            "h0",
            "nodes",
            "seconds",
            "error",
            "moves",
            "tables_left_out",
        ]
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({**r, "tables_left_out": " ".join(sorted(r.get("tables_left_out") or ()))})
        write_text_atomic(path, buf.getvalue())
    else:
        write_text_atomic(path, "".join(json.dumps(r) + "\n" for r in rows))


def summary_rows(outcomes) -> list[tuple]:
    """Per size and in all: boards, answered, proven optimal, suboptimal (and their total
    gap to the proven lower bounds), rejected, unanswered, moves, nodes, seconds."""
    groups: dict[str, list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault(o.extra.get("size", "?"), []).append(o)

    def key(size):
        try:
            return tuple(int(x) for x in size.split("x"))
        except ValueError:
            return (99, 99)

    rows = []
    for size in sorted(groups, key=key) + ["all"]:
        os_ = list(outcomes) if size == "all" else groups[size]
        solved = [o for o in os_ if o.status == "solved"]
        sub = [o for o in solved if not o.extra.get("optimal")]
        rows.append(
            (
                size,
                len(os_),
                len(solved),
                sum(1 for o in solved if o.extra.get("optimal")),
                len(sub),
                sum(o.extra["length"] - o.extra.get("lower_bound", 0) for o in sub),
                sum(1 for o in os_ if o.status in ("unsolvable", "invalid")),
                sum(1 for o in os_ if o.status == "limit"),
                sum(o.extra.get("length") or 0 for o in solved),
                sum(o.extra.get("nodes") or 0 for o in os_),
                round(sum(o.extra.get("seconds") or 0.0 for o in os_), 1),
            )
        )
    return rows


SUMMARY_HEADERS = [
    "size",
    "boards",
    "answered",
    "proven optimal",
    "suboptimal",
    "gap",
    "rejected",
    "unanswered",
    "moves",
    "nodes",
    "seconds",
]
