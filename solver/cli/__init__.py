"""The ``slidepdb`` command: a thin click layer over the library.

Results go to stdout (``--json``: one object per board per line), logs and
progress to stderr.  Exit codes are listed in ``pdb_builder.errors`` and the
README; with several boards the highest code any board produced wins.
"""

from __future__ import annotations

import json
import logging
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import click

from pdb_builder import __version__
from pdb_builder.board import parse_size
from pdb_builder.cli import bytes_callback, format_table
from pdb_builder.cli import register as register_builder
from pdb_builder.errors import EXIT_BAD_INPUT, EXIT_CODES, EXIT_INTERNAL, EXIT_INTERRUPTED, BoardError, SlidepdbError
from pdb_builder.formats import read_board_arg

log = logging.getLogger("slidepdb")

EXIT_HELP = "\b\nExit codes:\n" + "\n".join(f"  {k}  {v}" for k, v in EXIT_CODES.items())


def size_option(f):
    return click.option(
        "--size",
        "size",
        metavar="WxH",
        default=None,
        help="Board size for numeric boards (default: square, from the count).",
    )(f)


def goal_option(f):
    return click.option(
        "--goal",
        type=click.Choice(["korf", "devquiz"]),
        default="korf",
        show_default=True,
        help="Goal for numeric boards (DevQuiz lines always use the DevQuiz goal).",
    )(f)


def json_option(f):
    return click.option("--json", "as_json", is_flag=True, help="One JSON object per board per line.")(f)


class Seconds(click.ParamType):
    """A positive, finite number of seconds (``nan`` and ``inf`` are refused); ``s``,
    ``m``, ``h`` suffixes (``90m``, ``4h``) where ``units``; ``words``: names taken
    as their values (``{"none": None}``)."""

    name = "SECONDS"
    UNITS = {"s": 1, "m": 60, "h": 3600}

    def __init__(self, units: bool = False, words: dict | None = None):
        self.units = units
        self.words = words or {}

    def convert(self, value, param, ctx):
        if isinstance(value, float):
            return value
        text, scale = str(value).strip().lower(), 1
        if text in self.words:
            return self.words[text]
        if self.units and text[-1:] in self.UNITS:
            text, scale = text[:-1], self.UNITS[text[-1]]
        try:
            v = float(text) * scale
        except (TypeError, ValueError):
            what = "a duration such as 4h, 90m or 600" if self.units else "a number of seconds"
            what += "".join(f", or {w}" for w in self.words)
            self.fail(f"{value!r} is not {what}", param, ctx)
        if not math.isfinite(v) or v <= 0:
            self.fail(f"{value!r}: give a positive, finite number of seconds", param, ctx)
        return v


def output_path(ctx, param, value):
    """An output file's folder must exist and take a new file: checked before any work,
    so a long run never ends in an error about where to write."""
    if value is None:
        return None
    folder = Path(value).resolve().parent
    if not folder.is_dir():
        raise click.BadParameter(f"{value}: folder {folder} does not exist", ctx, param)
    if Path(value).is_dir():
        raise click.BadParameter(f"{value}: is a folder", ctx, param)
    try:
        fd, probe = tempfile.mkstemp(prefix=".slidepdb-probe.", dir=folder)
    except OSError as exc:
        raise click.BadParameter(f"{value}: cannot write in {folder}: {exc.strerror or exc}", ctx, param) from None
    os.close(fd)
    os.unlink(probe)
    return value


def warn_missing_db_dir(db_dir) -> None:
    if db_dir is not None and not Path(db_dir).is_dir():
        log.warning("warning: database folder %s does not exist: solving without databases", db_dir)


def _parse_size_opt(size):
    if size is None:
        return None
    try:
        return parse_size(size)
    except BoardError as exc:
        raise click.BadParameter(str(exc), param_hint="--size") from None


def load_boards(board_arg: str, size, goal):
    """Boards of a BOARD argument, with the format said at -v."""
    boards = read_board_arg(board_arg, _parse_size_opt(size), goal)  # BoardError: exit 2
    log.info("%s: %d boards, format %s", boards.source, len(boards.records), boards.format)
    return boards


def where(boards, index: int) -> str:
    return f"{boards.source}:{index}" if boards.source != "<argument>" else "board"


def report_file_errors(boards) -> int:
    """File-level problems (e.g. a wrong count line) to stderr; their exit code."""
    for err in boards.errors:
        click.echo(f"error: {where(boards, err.index)}: {err.error}", err=True)
    return EXIT_BAD_INPUT if boards.errors else 0


def show(out, boards, as_json: bool, human) -> None:
    """One outcome: its JSON object, or its error on stderr and ``human(out)`` on stdout."""
    if as_json:
        click.echo(json.dumps(out.as_json()))
        return
    if out.error:
        click.echo(f"{out.status}: {where(boards, out.index)}: {out.error}", err=True)
    line = human(out)
    if line is not None:
        click.echo(line)


def progressive(boards, as_json: bool, human):
    """``on_outcome`` for a run over ``boards``: each board shown, and on a terminal an
    overall progress line below (:class:`solver.cli.progress.Progress`)."""
    from .progress import Progress

    bar = Progress(len(boards.records))

    def on_outcome(out):
        bar.clear()
        show(out, boards, as_json, human)
        bar.update(out)

    on_outcome.close = bar.close  # before the summary
    return on_outcome


def emit(outcomes, boards, as_json: bool, human) -> int:
    """Print each outcome; return the highest exit code."""
    code = report_file_errors(boards)
    for out in outcomes:
        code = max(code, out.exit_code)
        show(out, boards, as_json, human)
    return code


class SlidepdbGroup(click.Group):
    """Turns library errors into one-line messages with their exit codes."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except SlidepdbError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(EXIT_INTERRUPTED)
        except BrokenPipeError:  # e.g. `slidepdb check FILE | head -1`: stop quietly, as Unix tools do
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # the exit's flush of stdout must not fail again
            ctx.exit(141)  # 128 + SIGPIPE, what a shell reports for a tool the signal stopped
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort, SystemExit):
            raise
        except Exception as exc:  # noqa: BLE001 - last resort: no traceback for users
            from ..search.limits import stopping

            if stopping():  # an interrupt a library turned into another exception
                click.echo("interrupted", err=True)
                ctx.exit(EXIT_INTERRUPTED)
            if os.environ.get("SLIDEPDB_DEBUG"):
                raise
            click.echo(f"internal error: {type(exc).__name__}: {exc} (set SLIDEPDB_DEBUG=1 for a traceback)", err=True)
            ctx.exit(EXIT_INTERNAL)


@click.group(cls=SlidepdbGroup, epilog=EXIT_HELP)
@click.version_option(__version__, prog_name="slidepdb")
@click.option("-v", "--verbose", count=True, help="More messages on stderr (-vv for debug).")
@click.option("-q", "--quiet", is_flag=True, help="Only errors on stderr.")
def main(verbose, quiet):
    """Pattern databases and optimal solving for sliding-tile puzzles, walls included."""
    level = logging.ERROR if quiet else (logging.WARNING, logging.INFO, logging.DEBUG)[min(verbose, 2)]
    logging.basicConfig(level=level, format="%(message)s", stream=sys.stderr, force=True)
    stop_on_sigterm()


def entry() -> None:
    """The ``slidepdb`` command: :func:`main`, then an exit that skips tearing the
    interpreter down (freeing every module, array and compiled kernel one by one:
    about 0.14 s after a file of boards) once nothing is left to finish: the exit
    handlers have run (logging, multiprocessing), stdout and stderr are flushed and
    no other thread is alive; otherwise Python's usual exit."""
    import atexit
    import threading

    try:
        main(prog_name="slidepdb")
        code = 0
    except SystemExit as exc:
        code = exc.code
    if not isinstance(code, int):  # None: success; a message: printed, status 1 (as sys.exit does)
        if code is not None:
            print(code, file=sys.stderr)
        code = 0 if code is None else 1
    if threading.active_count() > 1 or not hasattr(atexit, "_run_exitfuncs"):
        sys.exit(code)
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # a closed pipe or stream: nothing more can be written to it
    os._exit(code)


def stop_on_sigterm() -> None:
    """SIGTERM (batch schedulers, ``kill``) stops like Ctrl-C: finished answers are kept.
    Background jobs of a non-interactive shell ignore SIGINT, so this is how they stop.
    Both go through :func:`solver.search.limits.request_stop`, which remembers the stop."""
    import signal
    import threading

    from ..search.limits import request_stop

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, request_stop)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not where a shell ignores it
            signal.signal(signal.SIGINT, request_stop)


@main.command(epilog=EXIT_HELP)
@click.argument("board")
@click.argument("moves", required=False)
@size_option
@goal_option
@json_option
def check(board, moves, size, goal, as_json):
    """Validate BOARD, decide its solvability exactly, and with MOVES simulate them.

    BOARD is a DevQuiz line (W,H,CELLS), a numeric board ("t0 t1 ..", with --size
    and --goal), a file of boards, or - for standard input.
    """
    from ..api import check_record

    boards = load_boards(board, size, goal)
    outcomes = (check_record(rec, moves) for rec in boards.records)

    def human(out):
        if out.status == "valid":
            if moves is not None:
                n = out.extra["length"]
                moves_reach = "1 move reaches" if n == 1 else f"{n} moves reach"
                return f"{where(boards, out.index)}: {moves_reach} the goal"
            return f"{where(boards, out.index)}: solvable ({out.extra['method']})"
        return None

    sys.exit(emit(outcomes, boards, as_json, human))


def solve_options(f):
    """Options shared by ``solve`` and ``run``."""
    opts = [
        json_option,
        click.option(
            "--resume", is_flag=True, help="Continue an interrupted run of --out: skip boards already answered."
        ),
        click.option(
            "--report",
            "report_path",
            type=click.Path(dir_okay=False),
            default=None,
            callback=output_path,
            help="Per-board report: CSV if the name ends in .csv, else JSON lines.",
        ),
        click.option(
            "--db-dir",
            type=click.Path(file_okay=False),
            default=None,
            help="Database folder (default: $SLIDEPDB_DB_DIR or ./databases).",
        ),
        click.option("--node-limit", type=click.IntRange(min=1), default=None, help="Nodes per board."),
        click.option(
            "--workers",
            type=click.IntRange(min=1),
            default=None,
            help="Processes (default: one per core for several boards).",
        ),
        click.option(
            "--scheduler",
            default=None,
            metavar="ADDRESS",
            help="Solve on a dask.distributed cluster (e.g. tcp://host:8786) instead of local "
            "processes; its workers must see --db-dir at the same path.",
        ),
        click.option(
            "--no-fallback",
            is_flag=True,
            help="Optimal or nothing: no fallback (beam, weighted IDA*, staged search) for a board a limit stopped.",
        ),
        click.option(
            "--compare",
            "compare_paths",
            multiple=True,
            type=click.Path(exists=True, dir_okay=False),
            help="Another answer file for the same boards (repeatable): simulated and compared "
            "board by board at the end.",
        ),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def human_solved(boards):
    def human(out):
        if out.status != "solved":
            return None
        e = out.extra
        if e["optimal"]:
            tag = f"optimal: {e['proof']}" if e.get("proof") else "optimal"
        else:
            tag = f"not proven optimal, {e.get('fallback')}, lower bound {e['lower_bound']}"
        moves = "1 move" if e["length"] == 1 else f"{e['length']} moves"
        return f"{where(boards, out.index)}: {moves} ({tag}, {e['nodes']} nodes, {e['seconds']:.2f} s): {e['moves']}"

    return human


def finish_run(
    boards, outcomes, *, report_path, compare_paths, as_json, head, left_out, out_path, interrupted, extra_tables=()
) -> int:
    """Report, tables (per size, move budget, comparisons) and the exit code of a solve or run."""
    from ..run.answers import BUDGET_HEADERS, COMPARISON_HEADERS, budget_rows, compare, comparison_rows
    from ..run.batch import SUMMARY_HEADERS, answers_of, summary_rows, write_report

    code = report_file_errors(boards)
    outcomes = dict(outcomes)
    if report_path:
        write_report(report_path, outcomes.values())
    for o in outcomes.values():
        code = max(code, o.exit_code)
    answers = {i: m for i, m in answers_of(outcomes).items() if i not in left_out}
    text = []
    if len(boards.records) > 1:
        text += [head, format_table(summary_rows(outcomes.values()), SUMMARY_HEADERS)]
        for title, table in extra_tables:
            text += [title, table]
        if boards.limits is not None or left_out:
            text += [
                "move budget (the file's first line)" if boards.limits else "moves",
                format_table(budget_rows(answers.values(), boards.limits), BUDGET_HEADERS),
            ]
        if left_out:
            text.append(
                f"{len(left_out)} answers left out of {out_path} to stay within the move limits: "
                + ", ".join(where(boards, i) for i in sorted(left_out)[:10])
                + (" ..." if len(left_out) > 10 else "")
            )
    comps = [compare(p, boards.records, answers, outcomes) for p in compare_paths]
    if comps:
        text += ["against other answer files", format_table(comparison_rows(comps), COMPARISON_HEADERS)]
        for c in comps:
            for prob in c.problems[:5]:
                text.append(f"  {prob}")
    if text:
        click.echo("\n".join(text), err=as_json)
    for line in [o.extra["contradiction"] for o in outcomes.values() if o.extra.get("contradiction")] + [
        p for c in comps for p in c.contradictions
    ]:
        click.echo(f"error: {line}", err=True)
        code = max(code, 1)
    if interrupted:
        click.echo(
            f"interrupted: {len(outcomes)} boards finished"
            + (f"; rerun with --resume to continue {out_path}" if out_path else ""),
            err=True,
        )
        return EXIT_INTERRUPTED
    return code


@main.command(epilog=EXIT_HELP)
@click.argument("board")
@size_option
@goal_option
@click.option(
    "--out",
    "out_path",
    type=click.Path(dir_okay=False),
    default=None,
    callback=output_path,
    help="Answer file: one line per board, in order, empty when unsolved (written atomically, "
    "never over the file's move limits; finished boards are kept in OUT.progress.jsonl "
    "until the run completes).",
)
@click.option("--time-limit", type=Seconds(), default=None, help="Seconds per board before it is reported as a limit.")
@click.option(
    "--no-db",
    is_flag=True,
    help="Ignore databases: wall-aware Manhattan + linear conflicts, and on a walled board past its first second, "
    "small tables of its layout built in memory.",
)
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    default=None,
    help="Threads for each board's optimal search (default: every core for one board, 1 for several).",
)
@solve_options
def solve(
    board,
    size,
    goal,
    as_json,
    out_path,
    resume,
    report_path,
    db_dir,
    time_limit,
    node_limit,
    workers,
    scheduler,
    no_db,
    threads,
    no_fallback,
    compare_paths,
):
    """Solve BOARD optimally with IDA* and print the moves of the blank.

    BOARD is read as by ``check``.  Each answer is simulated before it is printed;
    ``optimal`` means proven: an admissible heuristic and a completed IDA* iteration.
    When a limit stops the optimal search, weighted IDA* still finds a valid answer
    (``optimal: false``, with the proven lower bound) unless --no-fallback.
    Ctrl-C keeps every finished answer (rerun with --resume).
    """
    from ..run.batch import run_batch

    if resume and not out_path:
        raise click.UsageError("--resume needs --out")
    boards = load_boards(board, size, goal)
    if not no_db:
        warn_missing_db_dir(db_dir)
    if workers is None:
        workers = (os.cpu_count() or 1) if len(boards.records) > 1 else 1
    if threads is None:
        from ..search.threads import default_threads

        threads = default_threads() if len(boards.records) == 1 else 1
    result = run_batch(
        boards.records,
        db_dir=db_dir,
        use_db=not no_db,
        time_limit=time_limit,
        node_limit=node_limit,
        workers=workers,
        threads=threads,
        out_path=out_path,
        resume=resume,
        on_outcome=(shown := progressive(boards, as_json, human_solved(boards))),
        fallback=not no_fallback,
        scheduler=scheduler,
        limits=boards.limits,
    )
    shown.close()
    resumed = f", {result.resumed} from an earlier run" if result.resumed else ""
    if result.reopened:
        resumed += f"; {reopened_text(result.reopened)}"
    where_ = f"on {scheduler}" if scheduler else f"with {workers} worker(s)"
    head = f"{len(result.outcomes)}/{len(boards.records)} boards in {result.seconds:.1f} s {where_}{resumed}"
    sys.exit(
        finish_run(
            boards,
            result.outcomes,
            report_path=report_path,
            compare_paths=compare_paths,
            as_json=as_json,
            head=head,
            left_out=result.left_out,
            out_path=out_path,
            interrupted=result.interrupted,
        )
    )


def reopened_text(count: int) -> str:
    return f"{count} journalled proof(s) reopened: their tables changed or are gone since (answers kept, solved again)"


@main.command(epilog=EXIT_HELP)
@click.argument("problems", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--out",
    "out_path",
    type=click.Path(dir_okay=False),
    required=True,
    callback=output_path,
    help="Answer file (one line per board, in order; never over the file's move limits).",
)
@click.option(
    "--time-limit",
    type=Seconds(),
    default=None,
    help="Seconds per board in the full pass; the fallback takes up to about twice as long again. "
    "Default: 60, or with a --budget in hours or seconds, what lets the full pass take about half "
    "of the budget left at its start (5 to 60).",
)
@click.option(
    "--quick-limit",
    type=Seconds(),
    default=5.0,
    show_default=True,
    help="Seconds per board in the quick pass on the wall-free tables.",
)
@click.option(
    "--memory-limit",
    default="4G",
    show_default=True,
    callback=bytes_callback,
    help="Memory for one pattern's BFS of a wall-free database.",
)
@click.option(
    "--layout-memory",
    default="512M",
    show_default=True,
    callback=bytes_callback,
    help="Memory for one pattern's BFS of an exact-layout database (small patterns build fast).",
)
@click.option(
    "--layout-partitions",
    "layout_count",
    type=click.IntRange(1, 5),
    default=1,
    show_default=True,
    help="Exact-layout databases per layout: disjoint ways to cut the same tiles, each a file; "
    "the solver takes the max of their sums. A --retry with more builds the missing ones.",
)
@click.option(
    "--disk-limit",
    default="auto",
    show_default=True,
    callback=lambda ctx, param, value: "auto" if value == "auto" else bytes_callback(ctx, param, value),
    help="The database folder's size that builds stay within; layouts beyond it are solved without their own "
    "database. auto: what the folder holds when the run starts plus half the free space of its disk.",
)
@click.option("--no-build", is_flag=True, help="Solve with the databases there are; build nothing.")
@click.option(
    "--retry",
    type=click.Choice(["unanswered", "unproven", "closest"]),
    default=None,
    help="With --resume: solve the full pass's unanswered (or unproven) boards again, e.g. with "
    "a longer --time-limit, the least tried first, then worst first; closest: the unproven, "
    "the least tried, then the smallest gap to their lower bound first. Each keeps the "
    "better outcome.",
)
@click.option(
    "--budget",
    type=Seconds(units=True, words={"auto": "auto", "none": None}),
    default="auto",
    show_default=True,
    help="Wall-clock time for the run, builds included (4h, 90m, seconds), every sitting together "
    "(with --resume: what earlier sittings left): after the full pass, "
    "rounds on the boards left unanswered or unproven (those first, then the smallest gap), each "
    "with twice the time and node limits, one more exact-layout partition and patterns twice as "
    "large, boards started while they can still end in time. auto: the rounds get at most the "
    "running time the run had at the end of its full pass; none: no rounds.",
)
@click.option(
    "--plot",
    "plot_png",
    type=click.Path(dir_okay=False),
    default=None,
    callback=output_path,
    help="Also draw ANSWERS.timeline.csv (boards proven against hours, per size) into this PNG (matplotlib).",
)
@solve_options
def run(
    problems,
    out_path,
    time_limit,
    quick_limit,
    memory_limit,
    layout_memory,
    layout_count,
    disk_limit,
    no_build,
    retry,
    budget,
    plot_png,
    as_json,
    resume,
    report_path,
    db_dir,
    node_limit,
    workers,
    scheduler,
    no_fallback,
    compare_paths,
):
    """Answer every board of PROBLEMS (e.g. the DevQuiz file): build, solve, report.

    \b
    1. wall-free databases for each size the file holds (kept when present);
    2. a quick pass: every board, optimal search, --quick-limit seconds each;
    3. for walled boards it did not prove: the database of their exact layout
       (within --disk-limit);
    4. a full pass on those with --time-limit and the fallback (beam, weighted
       IDA*, staged search), so every solvable board gets an answer;
    5. the answer file (within the move limits of the file's first line) and the
       report: per size, move budget, --compare files; ANSWERS.timeline.csv, the
       boards proven against the run's running time (--plot draws it).
    Kill it at any moment: --resume continues where it stopped.  The journals
    beside ANSWERS (.quick.jsonl, .progress.jsonl) stay as the per-board record;
    ANSWERS.sittings holds each sitting's start and end (--budget covers them all).
    """
    from ..run.pipeline import run_pipeline

    if plot_png:
        from pdb_builder.make.catalogue import pyplot

        pyplot()  # matplotlib missing: said now, not after hours of solving

    boards = load_boards(problems, None, "devquiz")
    if no_build:
        warn_missing_db_dir(db_dir)
    if workers is None:
        workers = os.cpu_count() or 1
    human = human_solved(boards)

    def on_build(item):
        from pdb_builder.make.building import BuildReport

        if isinstance(item, BuildReport):
            log.warning("  %s %s: %s, %.1f s", item.shape, item.name, item.status, item.seconds)
        else:
            log.warning(
                "building %s database %s (%s, %s entries, %d board%s)",
                item.role,
                item.shape.key,
                " + ".join(p.name for p in item.partitions),
                f"{item.entries:,}",
                item.boards,
                "" if item.boards == 1 else "s",
            )

    t0 = time.perf_counter()
    res = run_pipeline(
        boards.records,
        out_path,
        db_dir=db_dir,
        limits=boards.limits,
        time_limit=time_limit,
        quick_limit=quick_limit,
        node_limit=node_limit,
        memory_limit=memory_limit,
        layout_memory=layout_memory,
        layout_count=layout_count,
        disk_limit=disk_limit,
        workers=workers,
        scheduler=scheduler,
        resume=resume,
        fallback=not no_fallback,
        build=not no_build,
        on_build=on_build,
        retry=retry,
        budget=budget,
        on_outcome=(shown := progressive(boards, as_json, human)),
    )
    shown.close()
    total = time.perf_counter() - t0
    if plot_png:
        from ..run.timeline import plot_timeline

        plot_timeline(res.timeline, plot_png)
    phases = res.phase_rows(total)
    extra = [("time (s)", format_table(phases, ["step", "what", "seconds"]))]
    if res.skipped_builds:
        extra.append(("", f"{len(res.skipped_builds)} layout databases not built: over --disk-limit"))
    for key, name, error in res.failed_builds:
        extra.append(("", f"build failed: {key} {name}: {error} (its boards were solved without it)"))
    reopened = sum(b.reopened for b in (res.quick, res.full) if b is not None)
    if reopened:
        extra.append(("", reopened_text(reopened)))
    head = f"{len(res.outcomes)}/{len(boards.records)} boards in {total:.1f} s " + (
        f"on {scheduler}" if scheduler else f"with {workers} worker(s)"
    )
    sys.exit(
        finish_run(
            boards,
            res.outcomes,
            report_path=report_path,
            compare_paths=compare_paths,
            as_json=as_json,
            head=head,
            left_out=res.left_out,
            out_path=out_path,
            interrupted=res.interrupted,
            extra_tables=extra,
        )
    )


def _measure(paths, boards):
    from ..search.measure import measure

    return measure(paths, boards)


register_builder(main, measure=_measure)


if __name__ == "__main__":
    main()
