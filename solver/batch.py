"""Boards in, verdicts and answers out: the per-board pipeline behind ``check`` and
``solve``.

Every board goes through: parse (already done by :mod:`pdb_builder.formats`),
validation, exact solvability, then (for ``solve``) search.  Every move string is
simulated before it is reported.  A bad board never stops the others.
"""

from __future__ import annotations

import heapq
import json
import os
import threading
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from pdb_builder import __version__
from pdb_builder.atomic import write_text_atomic
from pdb_builder.board import Board, check_moves
from pdb_builder.errors import (
    EXIT_BAD_INPUT,
    EXIT_BAD_MOVES,
    EXIT_INTERNAL,
    EXIT_LIMIT,
    EXIT_OK,
    EXIT_UNSOLVABLE,
    BoardError,
    DatabaseError,
)
from pdb_builder.formats import Record
from pdb_builder.solvability import decide
from pdb_builder.storage import default_db_dir

from .answers import fit_limits
from .fallback import fallback_search
from .heuristic import manhattan_heuristic
from .ida import Searcher
from .tables import heuristic_for

STATUS_EXIT = {
    "valid": EXIT_OK,
    "solved": EXIT_OK,
    "invalid": EXIT_BAD_INPUT,
    "unsolvable": EXIT_UNSOLVABLE,
    "limit": EXIT_LIMIT,
    "illegal": EXIT_BAD_MOVES,
    "error": EXIT_INTERNAL,
}


@dataclass
class Outcome:
    """What happened to one board; ``as_json`` is the ``--json`` record."""

    index: int
    board: str
    status: str
    error: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        code = STATUS_EXIT[self.status]
        return max(code, EXIT_INTERNAL) if self.extra.get("contradiction") else code

    def as_json(self) -> dict:
        out = {"index": self.index, "board": self.board, "status": self.status, "error": self.error}
        out.update(self.extra)
        return out


def _board_text(rec: Record) -> str:
    return str(rec.board) if rec.board is not None else rec.text


def check_record(rec: Record, moves: str | None = None) -> Outcome:
    """Validate a board, decide solvability, and simulate ``moves`` if given."""
    if rec.error:
        return Outcome(rec.index, rec.text, "invalid", rec.error)
    board = rec.board
    verdict = decide(board)
    extra = {
        "solvable": verdict.solvable,
        "method": verdict.method,
        "size": board.shape.size_text,
        "walls": len(board.shape.walls),
    }
    if moves is not None:
        mc = check_moves(board, moves)
        extra.update(moves=moves, length=len(moves), reaches_goal=mc.ok)
        if not mc.ok:
            extra["move_index"] = mc.index
            return Outcome(rec.index, _board_text(rec), "illegal", mc.reason, extra)
        return Outcome(rec.index, _board_text(rec), "valid", None, extra)
    if not verdict.solvable:
        return Outcome(rec.index, _board_text(rec), "unsolvable", verdict.reason, extra)
    return Outcome(rec.index, _board_text(rec), "valid", None, extra)


class SolverPool:
    """Prepared searchers by board shape (tables loaded once, kernels compiled once),
    the :data:`SEARCHERS` most recently used kept: a batch over hundreds of layouts
    holds the tables of a few at a time (see also :class:`pdb_builder.storage.DatabaseCache`).

    ``db_dir=None`` looks in the default database folder; ``use_db=False`` solves
    with wall-aware Manhattan + linear conflicts only."""

    SEARCHERS = 8

    def __init__(self, db_dir=None, use_db: bool = True, verify: bool = True):
        self.db_dir = db_dir
        self.use_db = use_db
        self.verify = verify
        self._searchers: OrderedDict = OrderedDict()

    def searcher(self, board: Board) -> Searcher:
        key = board.shape
        if key in self._searchers:
            self._searchers.move_to_end(key)
            return self._searchers[key]
        if self.use_db:
            h = heuristic_for(board.shape, self.db_dir, verify=self.verify)
        else:
            h = manhattan_heuristic(board.shape)
        self._searchers[key] = Searcher(h)
        while len(self._searchers) > self.SEARCHERS:
            self._searchers.popitem(last=False)
        return self._searchers[key]


def solve_record(
    rec: Record, pool: SolverPool, time_limit: float | None = None, node_limit: int | None = None, fallback: bool = True
) -> Outcome:
    """Optimal search within the limits; when a limit stops it and ``fallback`` is on,
    :func:`solver.fallback.fallback_search` gives a valid answer within
    ``FALLBACK_SHARE`` more limits, reported ``optimal: false`` with the lower bound
    the optimal search proved and how it was found (``fallback``)."""
    checked = check_record(rec)
    if checked.status != "valid":
        return checked
    try:
        return _solve_valid(rec, pool, time_limit, node_limit, fallback)
    except DatabaseError:
        raise  # a damaged or unreadable table: every board of its shape would fail; the run stops naming it
    except Exception as exc:  # noqa: BLE001 - one board's failure never stops a batch
        if os.environ.get("SLIDEPDB_DEBUG"):
            raise
        return Outcome(
            rec.index,
            str(rec.board),
            "error",
            f"internal error: {type(exc).__name__}: {exc}",
            {
                "size": rec.board.shape.size_text,
                "walls": len(rec.board.shape.walls),
                "moves": None,
                "length": None,
                "optimal": False,
            },
        )


def _solve_valid(rec: Record, pool: SolverPool, time_limit, node_limit, fallback) -> Outcome:
    board = rec.board
    t0 = time.perf_counter()
    searcher = pool.searcher(board)
    result = searcher.solve(board, time_limit=time_limit, node_limit=node_limit)
    nodes, bound = result.nodes, result.lower_bound
    moves = result.moves
    how = None
    if result.status != "solved" and fallback and (time_limit is not None or node_limit is not None):
        moves, how, more = fallback_search(searcher, board, time_limit, node_limit, bound)
        nodes += more
    extra = {
        "size": board.shape.size_text,
        "walls": len(board.shape.walls),
        "h0": result.h0,
        "nodes": nodes,
        "seconds": round(time.perf_counter() - t0, 4),
        "lower_bound": bound,
        "heuristic": result.heuristic,
        "tables": {name: list(sums) for name, sums in searcher.h.checksums.items()},
        "version": __version__,
    }
    if how is not None:
        extra["fallback"] = how
    if rec.expected_length is not None:
        extra["expected_length"] = rec.expected_length
    if moves is None:
        extra.update(moves=None, length=None, optimal=False)
        return Outcome(
            rec.index, str(board), "limit", f"limit reached before an answer; lower bound {extra['lower_bound']}", extra
        )
    mc = check_moves(board, moves)
    if not mc.ok:  # never print an answer that does not simulate to the goal
        return Outcome(rec.index, str(board), "error", f"internal error: solver answer rejected: {mc.reason}", extra)
    extra.update(moves=moves, length=len(moves), optimal=result.status == "solved" and result.optimal)
    settle_by_bound(extra)
    if extra["optimal"]:
        extra["certificate"] = certificate(extra, extra["tables"], how="search" if how is None else "bound")
    return Outcome(rec.index, str(board), "solved", None, extra)


def certificate(extra: dict, checksums: dict, how: str) -> dict:
    """Why an answer is optimal, for the record: the threshold of the IDA* iteration
    that completed (``how="search"``: the iteration at the answer's length found it
    after every lower one completed without a solution; ``"bound"``: an iteration at
    the answer's length was reached, so every lower one completed), the answer's
    length, and the tables the estimate read (file name -> each table's sha256, 16
    hex digits; none: wall-aware Manhattan distance and linear conflicts only)."""
    return {"threshold": extra["lower_bound"], "length": extra["length"], "how": how, "tables": checksums}


def settle_by_bound(extra: dict) -> None:
    """Flag an answer optimal when it is as long as the lower bound and that bound is
    past the initial estimate: it is then the threshold of an IDA* iteration on an
    admissible estimate, reached only after every iteration below it completed without
    a solution, so nothing shorter exists.  (A fallback answer often meets it: the
    optimal search ran out of time in the last iteration.)  ``proof`` records it."""
    length, bound = extra.get("length"), extra.get("lower_bound")
    if not extra.get("optimal") and length is not None and length == bound and bound > extra.get("h0", bound):
        extra["optimal"] = True
        extra["proof"] = "length equals the lower bound"


# -- many boards -----------------------------------------------------------------------------
#
# Executors: the solving of many boards goes through ``_local_outcomes`` or
# ``_dask_outcomes``, generators that yield outcomes as boards finish.  Local processes by default (each maps the tables
# once and keeps its compiled kernels); a dask.distributed cluster when a
# scheduler address is given (its workers must see the same database folder).

_WORKER_POOL: SolverPool | None = None


def _worker_init(db_dir, use_db, verify):
    global _WORKER_POOL
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent decides when a batch stops
    _WORKER_POOL = SolverPool(db_dir, use_db=use_db, verify=verify)


def _worker_solve(rec: Record, time_limit, node_limit, fallback) -> Outcome:
    return solve_record(rec, _WORKER_POOL, time_limit=time_limit, node_limit=node_limit, fallback=fallback)


_DASK_POOLS = threading.local()
DASK_CONNECT_TIMEOUT = "20s"


def _dask_solve(rec: Record, db_dir, use_db, time_limit, node_limit, fallback) -> Outcome:
    """A Dask task: one board, with a per-thread pool of searchers kept between tasks."""
    pools = getattr(_DASK_POOLS, "pools", None)
    if pools is None:
        pools = _DASK_POOLS.pools = {}
    key = (str(db_dir), use_db)
    if key not in pools:
        pools[key] = SolverPool(db_dir, use_db=use_db)
    return solve_record(rec, pools[key], time_limit=time_limit, node_limit=node_limit, fallback=fallback)


class Feed:
    """The records to solve, each as soon as it is ready, in the order of ``todo``.

    Records in ``held`` wait until ``prepare(release)`` (run in a background thread,
    e.g. building their databases) calls ``release(records)``; whatever is still
    held when ``prepare`` returns is released then.  A released record goes before
    every ready one that comes after it in ``todo`` (so a retry's order holds while
    databases build), which is why the local executor takes only as many as it can start.
    An error in ``prepare`` is raised in the caller's thread once the released boards
    are done.  The thread starts at :meth:`start`, which executors call once their
    worker processes are forked (a fork while another thread runs could copy a held lock)."""

    def __init__(self, todo, held=(), prepare=None):
        self.error: BaseException | None = None
        self.size = len(todo)
        self._thread = None
        self._cv = threading.Condition()
        self._prepared = prepare is None
        held_set = set(held) if prepare is not None else set()
        waiting = {r.index: (k, r) for k, r in enumerate(todo) if r.index in held_set}
        # a heap of (position in todo, record); sorted, so a heap already
        self._ready: list = [(k, r) for k, r in enumerate(todo) if r.index not in waiting]
        if prepare is None:
            return

        def release(recs):
            with self._cv:
                for r in recs:
                    item = waiting.pop(r.index, None)
                    if item is not None:
                        heapq.heappush(self._ready, item)
                self._cv.notify_all()

        def run():
            try:
                prepare(release)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                self.error = exc
            finally:
                release([r for _, r in waiting.values()])
                with self._cv:
                    self._prepared = True
                    self._cv.notify_all()

        self._thread = threading.Thread(target=run, name="slidepdb-prepare", daemon=True)

    @property
    def prepares(self) -> bool:
        """Whether records wait on a ``prepare`` thread."""
        return self._thread is not None

    def start(self) -> None:
        if self._thread is not None and self._thread.ident is None:  # not started yet
            self._thread.start()

    def take(self, block: bool, limit: int | None = None):
        """Up to ``limit`` ready records, first in ``todo`` first (with ``block``, waits
        for at least one), and whether the feed has ended."""
        with self._cv:
            while block and not self._ready and not self._prepared:
                self._cv.wait()
            n = len(self._ready) if limit is None else min(limit, len(self._ready))
            out = [heapq.heappop(self._ready)[1] for _ in range(n)]
            ended = self._prepared and not self._ready
        if not out and ended and self.error is not None:
            raise self.error
        return out, ended and self.error is None


def _warm_up() -> None:
    time.sleep(0.2)  # busy long enough that each submit forks a new worker


def _drive(feed: Feed, submit, wait_some, cancel, slots: int | None = None):
    """Submit records as the feed makes them ready, at most ``slots`` at a time (the
    feed keeps the rest in order); yield outcomes as they finish."""
    pending: set = set()
    ended = False
    try:
        while not ended or pending:
            room = None if slots is None else slots - len(pending)
            if room is None or room > 0:
                recs, ended_now = feed.take(block=not pending and not ended, limit=room)
                ended = ended or ended_now
                pending.update(submit(r) for r in recs)
            if pending:
                for fut in wait_some(pending):
                    pending.discard(fut)
                    yield fut.result()
    except BaseException:
        cancel(pending)
        raise


def _stop_pool(ex) -> None:
    """Stop at once: cancel what waits and end the workers (their boards are not journalled,
    so a resumed run solves them again).  Left alive, workers would run the boards already
    handed to them to their limits, and the interpreter's exit would wait for them."""
    processes = list(getattr(ex, "_processes", {}).values())  # CPython keeps the workers here
    ex.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        p.kill()  # not terminate: a worker forked from the CLI turns SIGTERM into KeyboardInterrupt


def _local_outcomes(feed: Feed, db_dir, use_db, time_limit, node_limit, fallback, workers):
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    if workers <= 1 or (feed.size <= 1 and not feed.prepares):
        pool = SolverPool(db_dir, use_db=use_db)
        feed.start()
        ended = False
        while not ended:
            recs, ended = feed.take(block=True, limit=1)
            for rec in recs:
                yield solve_record(rec, pool, time_limit=time_limit, node_limit=node_limit, fallback=fallback)
        return
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
    with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_worker_init, initargs=(db_dir, use_db, True)) as ex:
        wait([ex.submit(_warm_up) for _ in range(workers)])  # every worker forked before the feed's thread runs
        feed.start()
        yield from _drive(
            feed,
            lambda rec: ex.submit(_worker_solve, rec, time_limit, node_limit, fallback),
            lambda pending: wait(pending, timeout=0.2, return_when=FIRST_COMPLETED).done,
            lambda pending: _stop_pool(ex),
            slots=workers,
        )


def _dask_outcomes(feed: Feed, db_dir, use_db, time_limit, node_limit, fallback, scheduler):
    try:
        from distributed import Client
    except ImportError:
        raise BoardError("--scheduler needs dask.distributed: pip install 'slidepdb[dask]'") from None
    if db_dir is not None:
        db_dir = str(Path(db_dir).resolve())
    try:
        client = scheduler if isinstance(scheduler, Client) else Client(scheduler, timeout=DASK_CONNECT_TIMEOUT)
    except OSError as exc:
        raise BoardError(f"--scheduler {scheduler}: cannot connect: {exc}") from None

    feed.start()

    def wait_some(pending):
        done = [f for f in pending if f.done()]
        if not done:
            time.sleep(0.05)
        return done

    try:
        yield from _drive(
            feed,
            lambda rec: client.submit(
                _dask_solve,
                rec,
                db_dir=db_dir,
                use_db=use_db,
                time_limit=time_limit,
                node_limit=node_limit,
                fallback=fallback,
                pure=False,
            ),
            wait_some,
            lambda pending: client.cancel(list(pending)),
        )
    finally:
        if client is not scheduler:
            client.close()


def journal_path(out_path) -> Path:
    out_path = Path(out_path)
    return out_path.with_name(out_path.name + ".progress.jsonl")


def refuse_unless_resume(journal: Path, resume: bool) -> None:
    """A journal left by an earlier run is continued only when asked to."""
    if journal.exists() and not resume:
        raise BoardError(
            f"{journal} holds an earlier run's boards: pass --resume to continue it, or delete it to start over"
        )


def _rank(o: Outcome):
    length = o.extra.get("length")
    return (o.status == "solved", bool(o.extra.get("optimal")), -(length if length is not None else 1 << 30))


def better(old: Outcome, new: Outcome) -> Outcome:
    """Of two outcomes for one board: proven beats unproven beats none, then the
    shorter answer; the higher of their lower bounds is kept either way.

    Both answers were simulated, so one shorter than the other's proven length or
    lower bound is a contradiction (a table or a search is wrong): the shorter one is
    kept, nothing is called optimal, and ``extra["contradiction"]`` says what met
    (the outcome's exit code is then 1)."""
    clash = contradiction(old, _answer_length(new)) or contradiction(new, _answer_length(old))
    if clash:
        keep = min((o for o in (old, new) if o.extra.get("length") is not None), key=lambda o: o.extra["length"])
        keep.extra.update(optimal=False, contradiction=clash)
        keep.extra.pop("proof", None)
        length = keep.extra["length"]
        keep.extra["lower_bound"] = max(
            [b for b in (o.extra.get("lower_bound") for o in (old, new)) if b is not None and b <= length] or [0]
        )
        return keep
    keep = new if _rank(new) >= _rank(old) else old
    bounds = [o.extra.get("lower_bound") for o in (old, new) if o.extra.get("lower_bound") is not None]
    if bounds:
        keep.extra["lower_bound"] = max(bounds)
        settle_by_bound(keep.extra)
        if keep.extra.get("optimal") and "certificate" not in keep.extra:  # proven by the other's bound
            tables = {**old.extra.get("tables", {}), **new.extra.get("tables", {})}
            keep.extra["certificate"] = certificate(keep.extra, tables, how="bound")
    return keep


def _answer_length(o: Outcome) -> int | None:
    return o.extra.get("length") if o.status == "solved" else None


def contradiction(claim: Outcome, length: int | None) -> str | None:
    """What is wrong when a valid (simulated) answer of ``length`` moves is shorter
    than ``claim``'s proven length or lower bound, else None."""
    if length is None:
        return None
    proven = claim.extra.get("length") if claim.status == "solved" and claim.extra.get("optimal") else None
    bound = claim.extra.get("lower_bound")
    if proven is not None and length < proven:
        what = f"an answer of {length} moves is shorter than the {proven} called optimal"
    elif bound is not None and length < bound:
        what = f"an answer of {length} moves is shorter than the proven lower bound {bound}"
    else:
        return None
    tables = "; ".join(claim.extra.get("heuristic") or []) or "Manhattan distance"
    return f"contradiction on board {claim.board}: {what} (that claim's tables: {tables}); its optimal claim withdrawn"


def _journal_lines(path: Path):
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
    from pdb_builder.storage import stored_checksums

    folder = default_db_dir(db_dir)
    seen: dict[str, list[str] | None] = {}

    def now(name: str) -> list[str] | None:
        if name not in seen:
            try:
                seen[name] = [c[:16] for c in stored_checksums(folder / name)]
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
    reopened (:func:`reopen_if_stale`)."""
    by_index = {r.index: r for r in records}
    done: dict[int, Outcome] = {}
    for d in _journal_lines(path):
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
        done[rec.index] = out
    return done


def journal_attempts(path: Path) -> Counter:
    """How many times each index was journalled (a retry journals every attempt)."""
    return Counter(d.get("index") for d in _journal_lines(path))


@dataclass
class BatchResult:
    outcomes: dict[int, Outcome]
    interrupted: bool = False
    resumed: int = 0
    seconds: float = 0.0
    left_out: set[int] = field(default_factory=set)  # answers kept out of the answer file by the move limits
    reopened: int = 0  # journalled proofs whose tables changed since: solved again


def run_batch(
    records,
    *,
    db_dir=None,
    use_db: bool = True,
    time_limit=None,
    node_limit=None,
    workers: int = 1,
    out_path=None,
    resume: bool = False,
    on_outcome=None,
    fallback: bool = True,
    scheduler=None,
    limits=None,
    journal=None,
    held=(),
    prepare=None,
    retry=(),
) -> BatchResult:
    """Solve every record; ``on_outcome(outcome)`` is called as each board finishes.

    With ``out_path``, finished boards go to a journal beside it at once (so a kill
    loses nothing, and ``resume`` skips them), and the answer file is written
    atomically at the end, or at an interrupt with what is finished, never over
    ``limits`` (L, R, U, D).  ``scheduler``: a dask.distributed address (or Client)
    to solve on instead of local processes; ``journal``: another journal path (the
    default is beside ``out_path``).  ``held`` and ``prepare``: records (indices) to
    solve only once ``prepare`` releases them, see :class:`Feed`.  ``retry``: indices
    solved again although the journal has them; the better outcome (:func:`better`)
    is kept and journalled."""
    t0 = time.perf_counter()
    if journal is None and out_path:
        journal = journal_path(out_path)
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
    feed = Feed(todo, held, prepare)
    if scheduler is not None:
        outcomes = _dask_outcomes(feed, db_dir, use_db, time_limit, node_limit, fallback, scheduler)
    else:
        outcomes = _local_outcomes(feed, db_dir, use_db, time_limit, node_limit, fallback, workers)
    jf = open(journal, "a", encoding="utf-8") if journal is not None else None
    try:
        for out in outcomes:
            if out.index in earlier:
                out = better(earlier.pop(out.index), out)
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
        outcomes.close()
        for i, out in earlier.items():  # not retried before the interrupt: still the earlier outcome
            result.outcomes.setdefault(i, out)
        if jf is not None:
            jf.close()
        result.seconds = time.perf_counter() - t0
        if out_path:
            result.left_out = write_answers(out_path, records, result.outcomes, limits)
            if not result.interrupted and len(result.outcomes) == len(records):
                journal.unlink(missing_ok=True)  # complete: the answer file says it all
    return result


def answers_of(outcomes: dict[int, Outcome]) -> dict[int, str]:
    return {i: o.extra["moves"] for i, o in outcomes.items() if o.status == "solved" and o.extra.get("moves")}


def write_answers(out_path, records, outcomes: dict[int, Outcome], limits=None) -> set[int]:
    """DevQuiz answer file: one line per board in input order, empty when unsolved.

    Never over ``limits``: the answers :func:`solver.answers.fit_limits` leaves out
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
        ]
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)
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
