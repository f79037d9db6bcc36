"""``slidepdb check`` and ``slidepdb solve``: one board or a file of boards."""

from __future__ import annotations

import os
import sys
from contextlib import nullcontext

import click

from pdb_builder.cli.shared import EXIT_HELP, goal_option, output_option, size_option
from pdb_builder.words import plural

from .options import (
    Seconds,
    capped,
    earlier_run,
    json_option,
    load_boards,
    read_compare_files,
    refuse_clobbering,
    solve_options,
    warn_cold_kernels,
    warn_missing_db_dir,
)
from .report import Outputs, emit, finish_run, human_solved, progressive, reopened_text, where


@click.command(epilog=EXIT_HELP)
@click.argument("board")
@click.argument("moves", required=False)
@size_option
@goal_option
@json_option
def check(board, moves, size, goal, as_json):
    """Validate BOARD, decide its solvability exactly, and with MOVES simulate them.

    BOARD is a DevQuiz line (W,H,CELLS), a numeric board ("t0 t1 ..", with --size
    and --goal), a file of boards, or - for standard input.  MOVES is a string of
    L R U D, or an answer file (one line per board of BOARD, in order; an empty
    line: the board is only validated; a line missing is an error).
    """
    from ..api import check_record
    from ..run.answer_file import read_answer_file

    boards = load_boards(board, size, goal)
    if moves is not None and set(moves) - set("LRUD") and os.path.isfile(moves):
        answers = read_answer_file(moves, boards.records, whole=True)  # BoardError: exit 2
        outcomes = (check_record(rec, line) for rec, line in zip(boards.records, answers))
    else:
        outcomes = (check_record(rec, moves) for rec in boards.records)

    def human(out):
        if out.status == "valid":
            if out.length is not None:
                moves_reach = "1 move reaches" if out.length == 1 else f"{out.length} moves reach"
                return f"{where(boards, out.index)}: {moves_reach} the goal"
            return f"{where(boards, out.index)}: solvable ({out.method})"
        return None

    sys.exit(emit(outcomes, boards, as_json, human))


@click.command(epilog=EXIT_HELP)
@click.argument("board")
@size_option
@goal_option
@output_option(
    "--out",
    "out_path",
    "Answer file: one line per board, in order, empty when unsolved (written atomically, "
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
    help="Threads for each board's optimal search (default: every core for one board; for several, 1, "
    "and the workers' slots left idle near the end).",
)
@click.option(
    "--split",
    is_flag=True,
    help="One board at a time, its large IDA* iterations split over processes: with --scheduler, every "
    "worker thread of the cluster; else --workers processes of this machine (default: one per core).",
)
@click.option(
    "--frontier",
    type=click.IntRange(min=0),
    default=None,
    help="A*+IDA* from the start of each board's search: an A* part keeping at most N open nodes, "
    "then IDA* below each; 0: IDA* alone.  Default: IDA*, and on a 5x5 without walls A*+IDA* with "
    "a million open nodes after an iteration of 20 million nodes (where it was measured to pay).",
)
@solve_options
def solve(
    board,
    size,
    goal,
    as_json,
    out_path,
    resume,
    fresh,
    report_path,
    db_dir,
    time_limit,
    node_limit,
    workers,
    scheduler,
    no_db,
    threads,
    split,
    frontier,
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
    from ..run.batch import BatchOptions, run_batch

    refuse_clobbering(
        [("--out", out_path), ("--report", report_path)],
        [("the input file", board if board != "-" else None), *(("--compare", c) for c in compare_paths)],
        db_dir,
        use_db=not no_db,
    )
    boards = load_boards(board, size, goal)
    read_compare_files(compare_paths, boards)
    earlier_run(out_path, resume, fresh)
    if not no_db:
        warn_missing_db_dir(db_dir)
    warn_cold_kernels()
    threads, workers, scheduler, over, grow = _where(threads, workers, scheduler, split, len(boards.records))
    shown = progressive(boards, as_json, human_solved(boards))
    # the batch's settings, built once here and handed whole to it
    options = BatchOptions(
        db_dir=db_dir,
        use_db=not no_db,
        time_limit=time_limit,
        node_limit=node_limit,
        workers=workers,
        threads=threads,
        grow=grow,
        out_path=out_path,
        resume=resume,
        on_outcome=shown,
        fallback=not no_fallback,
        scheduler=scheduler,
        limits=boards.limits,
        search_progress=shown.search,
        frontier=frontier,
    )
    with over if over is not None else nullcontext():  # (its processes stopped at the end)
        result = run_batch(boards.records, options)
    shown.close()
    where_ = f"on {scheduler}" if scheduler else over.where if over is not None else f"with {plural(workers, 'worker')}"
    sys.exit(
        finish_run(
            boards,
            result.outcomes,
            Outputs(report_path, tuple(compare_paths), as_json, out_path),
            head=_head(result, len(boards.records), where_),
            left_out=result.left_out,
            interrupted=result.interrupted,
            failed_outputs=result.failed_outputs,
        )
    )


def _head(result, n: int, where_: str) -> str:
    """The batch's first line: boards done, seconds, where they ran, what an earlier run left."""
    resumed = f", {result.resumed} from an earlier run" if result.resumed else ""
    if result.reopened:
        resumed += f"; {reopened_text(result.reopened)}"
    return f"{len(result.outcomes)}/{plural(n, 'board')} in {result.seconds:.1f} s {where_}{resumed}"


def _where(threads, workers, scheduler, split: bool, n: int) -> tuple:
    """Where ``n`` boards run, from the options as given: (threads a board, worker
    processes, the scheduler, the workers of one board's split search or None, whether a
    board's threads grow as workers idle).  A usage error or OptionsError (exit 2) for
    options that do not go together or a cluster that cannot be reached."""
    from ..search.threads import default_threads

    cores = default_threads()
    threads = capped("--threads", threads, cores, f"the {plural(cores, 'core')} this process may use")
    over = None  # --split: the processes each board's iterations are split over
    if split:
        if threads is not None:
            raise click.UsageError("--split searches each board on processes, not threads: leave out --threads")
        from ..search.processes import board_workers

        if scheduler is None:
            workers = capped("--workers", workers, cores, plural(cores, "core")) or cores
        over = board_workers(workers, scheduler)  # OptionsError: exit 2
        threads, workers, scheduler = over, 1, None  # one board at a time, in this process
    if scheduler is None:
        most = max(min(cores, n), 1)
        workers = capped("--workers", workers, most, f"{plural(cores, 'core')}, {plural(n, 'board')}")
    if workers is None:
        workers = (os.cpu_count() or 1) if n > 1 else 1
    grow = threads is None  # several boards: one thread each, more as workers idle
    if threads is None:
        threads = cores if n == 1 else 1
    return threads, workers, scheduler, over, grow
