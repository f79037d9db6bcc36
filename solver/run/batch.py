"""The executor of one step (and of ``slidepdb solve FILE``): :func:`run_batch` solves a
step's boards (journal, resume, retry) on local workers or a dask cluster; also the
answer file and the per-board report and summary."""

from __future__ import annotations

import json
import logging
import os
from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path

from pdb_builder.atomic import write_text_atomic
from pdb_builder.words import plural

from ..outcome import Outcome, better, settle_by_bound
from .answer_file import fit_limits
from .cluster import dask_outcomes
from .drive import Pools
from .feed import Feed
from .files import RunFiles, owning
from .journal import (
    current_checksums,
    input_key,
    pass_of,
    read_journal,
    refuse_foreign_answers,
    refuse_other_input,
    refuse_unless_resume,
)
from .outputs import write_each
from .settings import Settings
from .slots import local_outcomes
from .steps import BatchResult

log = logging.getLogger("slidepdb.run")


@dataclass
class BatchOptions(Settings):
    """How :func:`run_batch` solves a batch: the :class:`~solver.run.settings.Settings` a run
    shares with it, and its own; every field is described there."""

    # the tables
    use_db: bool = True
    go_on: bool = False
    # each board
    known: dict | None = None
    frontier: int | None = None
    # where the boards run
    threads: int = 1
    grow: bool = True
    # the files: journal, answer file, resume and retry
    out_path: object = None
    journal: object = None
    step: str | None = None
    input: dict | None = None
    retry: tuple = ()
    # the jobs some boards wait on, and when the last board may start
    jobs: tuple = ()
    job_memory: int | None = None
    last_start: float | None = None
    patient: tuple = ()
    # what is told as it happens
    search_progress: object = None


def run_batch(records, options: BatchOptions | None = None, /, **changes) -> BatchResult:
    """Solve every record as ``options`` say (:class:`BatchOptions`; ``changes``: fields
    of it to change, ``run_batch(recs, db_dir=d)`` for short); ``on_outcome(outcome)``
    is called as each board finishes.
    ``time_limit``: seconds a board, or a rule that decides each board's as it starts
    (:class:`solver.run.answer_pass.AnswerLimit`, :class:`solver.run.planning.UntilEnd`:
    ``time_limit.start()`` makes what applies it, :class:`~solver.run.steps.Deciding`;
    the result's ``given`` says what each board had).

    With ``out_path``, finished boards go to a journal beside it at once (so a kill loses
    nothing, and ``resume`` skips them), and the answer file is written atomically at the
    end, or at an interrupt with what is finished, never over ``limits`` (L, R, U, D).
    ``scheduler``: a dask.distributed address (or Client) to solve on instead of local
    processes; ``journal``: another journal path (the default is beside ``out_path``), whose
    first line names the input (:func:`~solver.run.journal.input_key`): ``input``, the whole
    input's key where ``records`` are part of it (its caller checked the journal against the
    whole input); by default the key of ``records``, and a resumed journal or answer file of
    another input is refused (:func:`~solver.run.journal.refuse_other_input`). ``step``: the
    run's step this batch is (:attr:`solver.run.steps.Step.tag`): each journal line names
    it, and only its pass's lines are read back as done (:func:`~solver.run.journal.pass_of`). ``jobs``:
    work done in the workers' slots that some records wait on (:class:`solver.run.feed.Job`:
    database builds), at most ``job_memory`` bytes of them at once, see :class:`Feed`.
    ``retry``: indices solved again although the journal has them; the better outcome
    (:func:`better`) is kept and journalled. ``threads``: threads for each board's optimal
    search (local processes only); with one, and ``grow``, a board's search also takes the
    worker slots nothing else can use (a batch's last boards:
    :class:`solver.run.lanes.Lanes`). ``last_start``: wall-clock time (``clock.now()``)
    after which no board starts; those not started keep their journalled outcome.
    ``search_progress``: told of each slice of the searches in this process
    (:class:`solver.cli.progress.SearchLine`; local processes with one worker only).
    ``go_on``: a table file that cannot be read is left out and the boards solved without it
    (:class:`~solver.api.SolverPool`), instead of stopping the batch. ``known``: index ->
    :class:`~solver.outcome.Known`, what earlier attempts at a board proved and found
    (:func:`~solver.api.solve_record`). ``patient``: indices of records that have answers
    already: they wait for their jobs to the last start (:class:`Feed`). ``frontier``: A*+IDA*
    with at most that many open nodes (:mod:`solver.search.frontier`; 0: IDA* alone; None:
    the searcher's default)."""
    o = replace(options or BatchOptions(), **changes)
    with owning(o.out_path) if o.out_path else nullcontext():  # one writer of an answer file at a time
        return _run_batch(records, o)


def _journalled(records, o: BatchOptions) -> tuple[Path | None, dict[int, Outcome]]:
    """The batch's journal (None: none) and what it holds of ``records`` already (this
    step's pass's lines), once the journal and the answer file are known to be this
    input's and resumed (else refused)."""
    journal = o.journal
    if journal is None and o.out_path:
        journal = RunFiles(o.out_path).journal
    if journal is None:
        return None, {}
    journal = Path(journal)
    refuse_unless_resume(journal, o.resume)
    if o.out_path:
        refuse_foreign_answers(o.out_path, [journal] if journal.exists() else [], records)
    if o.resume and o.input is None:
        refuse_other_input([journal], records, answers=Path(o.out_path) if o.out_path else None)
    now = current_checksums(o.db_dir) if o.use_db else None
    return journal, read_journal(journal, records, now, of=None if o.step is None else pass_of(o.step))


def _run_batch(records, o: BatchOptions) -> BatchResult:
    t0, began = o.clock.tick(), o.clock.now()
    journal, done = _journalled(records, o)
    stale = [i for i, x in done.items() if x.reopened]
    earlier = {i: done.pop(i) for i in set(o.retry) | set(stale) if i in done}
    result = BatchResult(dict(done), resumed=len(done), reopened=len(stale), began=began)
    for out in done.values():
        if o.on_outcome:
            o.on_outcome(out)
    todo = [r for r in records if r.index not in done]
    fixed = o.time_limit is None or isinstance(o.time_limit, int | float)
    limit = o.time_limit if fixed else o.time_limit.start()  # else a rule that decides each board's as it starts
    if not fixed:
        result.given = limit.given
    feed = Feed(
        todo,
        o.jobs,
        o.last_start,
        o.job_memory,
        board_seconds=o.time_limit if fixed else None,
        patient=o.patient,
        clock=o.clock,
    )
    pools = Pools(o.db_dir, o.use_db, o.threads, o.go_on, o.grow, o.frontier)
    if o.scheduler is not None:
        outcomes = dask_outcomes(feed, pools, limit, o.node_limit, o.fallback, o.scheduler, o.known)
    else:
        outcomes = local_outcomes(feed, pools, limit, o.node_limit, o.fallback, o.workers, o.search_progress, o.known)
    jf = open(journal, "a", encoding="utf-8") if journal is not None else None
    if jf is not None and jf.tell() == 0:  # a new journal: the input it is written for first
        jf.write(json.dumps(o.input or input_key(records)) + "\n")
    try:
        for out in outcomes:
            tried = o.time_limit
            if not fixed:
                tried = limit.given.get(out.index, 0.0)
                limit.ended(out.seconds)
            # the earlier outcome of a board solved again, or this batch's own (a board
            # handed out twice; the journalled boards are never handed out): the better one stands
            before = earlier.pop(out.index, None) or result.outcomes.get(out.index)
            if before is not None:
                had = before.time_limit
                tried = None if had is None or tried is None else max(had, tried)
                out = better(before, out)
            out.time_limit = tried  # the largest this board has had (None: none)
            out.ended = round(o.clock.now(), 3)  # wall clock: solver/run/timeline.py
            result.outcomes[out.index] = out
            if jf is not None:
                jf.write(json.dumps(out.as_json() if o.step is None else {**out.as_json(), "step": o.step}) + "\n")
                jf.flush()
                os.fsync(jf.fileno())
            if o.on_outcome:
                o.on_outcome(out)
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
        # the finished answers first, then the workers' shutdown: an interrupt that comes
        # while the workers are ended (or a shutdown that hangs) never costs the answer file
        for i, out in earlier.items():  # not retried before the interrupt: still the earlier outcome
            result.outcomes.setdefault(i, out)
        if jf is not None:
            jf.close()
        if o.out_path:
            left_out = write_each(
                result.failed_outputs,
                "--out",
                o.out_path,
                lambda: write_answers(o.out_path, records, result.outcomes, o.limits),
            )
            result.left_out = left_out or set()
        outcomes.close()
        result.seconds = o.clock.tick() - t0
        complete = not result.interrupted and len(result.outcomes) == len(records) and not result.failed_outputs
        if o.out_path and complete:
            journal.unlink(missing_ok=True)  # complete: the answer file says it all (else --resume writes it)
    return result


def answers_of(outcomes: dict[int, Outcome]) -> dict[int, str]:
    return {i: o.moves for i, o in outcomes.items() if o.solved and o.moves}


EARLIER = "kept from the answer file"  # the fallback field of an answer a run found there


def earlier_answers(out_path, records) -> dict[int, str]:
    """The answers the file at ``out_path`` already holds for ``records``: one line a
    board in their order (a file of another count of lines holds none of theirs),
    each simulated again to its board's goal (a line that does not reach it is not one)."""
    from pdb_builder.moves import check_moves

    try:
        lines = Path(out_path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return {}
    if len(lines) != len(records):
        return {}
    moves = ((r, m.strip()) for r, m in zip(records, lines))
    return {r.index: m for r, m in moves if m and r.board is not None and check_moves(r.board, m).ok}


def write_answers(out_path, records, outcomes: dict[int, Outcome], limits=None) -> set[int]:
    """DevQuiz answer file: one line per board in input order, empty when unsolved.

    An answer the file already holds for a board this run left without one is kept
    (:func:`earlier_answers`: simulated again; its outcome says so), so a file with
    answers is never replaced by one with fewer for the same boards.  Never over
    ``limits``: the answers :func:`solver.run.answer_file.fit_limits` leaves out get an
    empty line; their indices are returned (and marked in their outcomes)."""
    answers = answers_of(outcomes)
    by_index, taken = {r.index: r for r in records}, 0
    for i, moves in earlier_answers(out_path, records).items():
        if i not in answers:
            had, shape = outcomes.get(i), by_index[i].board.shape
            kept = Outcome.of_board(i, str(by_index[i].board), "solved", None, shape, moves=moves, length=len(moves))
            kept.optimal, kept.fallback = False, EARLIER
            if had is not None and had.lower_bound is not None:
                kept.lower_bound, kept.h0 = had.lower_bound, had.h0
                settle_by_bound(kept)
            outcomes[i], answers[i] = kept, moves
            taken += 1
    if taken:
        log.warning(
            "%s: kept %s it already held for boards this run left without one (each simulated again)",
            out_path,
            plural(taken, "answer"),
        )
    left_out = fit_limits(answers, limits, {i: outcomes[i].proven for i in answers})
    for i in answers:
        outcomes[i].left_out = i in left_out
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
        groups.setdefault(o.size or "?", []).append(o)

    def key(size):
        try:
            return tuple(int(x) for x in size.split("x"))
        except ValueError:
            return (99, 99)

    rows = []
    for size in sorted(groups, key=key) + ["all"]:
        os_ = list(outcomes) if size == "all" else groups[size]
        solved = [o for o in os_ if o.solved]
        sub = [o for o in solved if not o.proven]
        rows.append(
            (
                size,
                len(os_),
                len(solved),
                sum(1 for o in solved if o.proven),
                len(sub),
                sum(o.gap for o in sub),
                sum(1 for o in os_ if o.status in ("unsolvable", "invalid")),
                sum(1 for o in os_ if o.status == "limit"),
                sum(o.length or 0 for o in solved),
                sum(o.nodes or 0 for o in os_),
                round(sum(o.seconds or 0.0 for o in os_), 1),
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
