"""``slidepdb run``: a whole problem file from one command (:mod:`solver.run.pipeline`)."""

from __future__ import annotations

import os
import sys
import time

import click

from pdb_builder.cli.shared import (
    EXIT_HELP,
    bytes_callback,
    check_db_dir_writable,
    goal_option,
    output_option,
    plot_option,
    size_option,
)
from pdb_builder.words import plural

from .options import (
    Seconds,
    capped,
    earlier_run,
    load_boards,
    read_compare_files,
    refuse_clobbering,
    solve_options,
    warn_cold_kernels,
    warn_missing_db_dir,
)
from .report import Outputs, finish_run, human_solved, progressive, run_notes, tell_build


@click.command(epilog=EXIT_HELP)
@click.argument("problems", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@size_option
@goal_option
@output_option(
    "--out",
    "out_path",
    "Answer file (one line per board, in order; never over the file's move limits).",
    required=True,
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
    "--wall-free-partitions",
    "wall_free_count",
    type=click.IntRange(0, 5),
    default=2,
    show_default=True,
    help="Wall-free databases of --layout-memory's pattern sizes, disjoint cuts, for the sizes of the walled "
    "boards the quick pass left (none where the folder holds other wall-free tables of the size).",
)
@click.option(
    "--disk-limit",
    default="auto",
    show_default=True,
    callback=lambda ctx, param, value: "auto" if value == "auto" else bytes_callback(ctx, param, value),
    help="The database folder's size that builds stay within. To make room, the run removes databases it built "
    "itself whose boards are all proven (a build waits while the boards of such databases are still "
    "searched); layouts still beyond it are solved without their own database. auto: "
    "what the folder holds when the run starts plus half the free space of its disk.",
)
@click.option("--no-build", is_flag=True, help="Solve with the databases there are; build nothing.")
@click.option(
    "--retry",
    type=click.Choice(["unanswered", "unproven", "closest"]),
    default=None,
    help="With --resume: solve the full pass's unanswered (or unproven) boards again, e.g. with "
    "a longer --time-limit, the least tried first, then worst first; closest: the unproven, "
    "the least tried, then the smallest gap to their lower bound first. Each searches on from "
    "its lower bound (with an answer: for the proof alone) and keeps the better outcome.",
)
@click.option(
    "--budget",
    type=Seconds(units=True, words={"auto": "auto", "none": None}),
    default="auto",
    show_default=True,
    help="Wall-clock time for the run, builds included (4h, 90m, seconds), every sitting together "
    "(with --resume: what earlier sittings left): first every board an answer (a short search on the "
    "tables there are, then the fallback), then builds sized to the time left and proofs; after the full pass, "
    "rounds on the boards left unanswered or unproven (those first, then the smallest gap), each "
    "with twice the time and node limits, one more exact-layout partition and patterns twice as "
    "large, boards started while they can still end in time. auto: the rounds get at most the "
    "running time the run had at the end of its full pass; none: no rounds.",
)
@click.option(
    "--proofs-first",
    is_flag=True,
    help="Under a --budget in seconds, build and prove before every board has an answer (no answer pass).",
)
@plot_option(
    "--plot",
    "plot_png",
    "Also draw ANSWERS.timeline.csv (boards proven against the run's time, per size) into this PNG, PDF "
    "or SVG (matplotlib).",
)
@solve_options
def run(problems, size, goal, out_path, plot_png, as_json, resume, fresh, report_path, compare_paths, **given):
    """Answer every board of PROBLEMS (e.g. the DevQuiz file): build, solve, report.

    Each line is read as by ``solve``: a DevQuiz line (W,H,CELLS) has the DevQuiz
    goal, a numeric or benchmark line --goal (default korf) and --size.

    \b
    0. with --budget in seconds: every board an answer first (a short search on
       the tables there are, then the fallback), smallest boards first;
    1. wall-free databases for each size the file holds (kept when present),
       under a budget sized to the time left;
    2. a quick pass: every board, optimal search, --quick-limit seconds each;
    3. for walled boards it did not prove: the database of their exact layout
       (within --disk-limit);
    4. a full pass on those with --time-limit and the fallback (beam, weighted
       IDA*, staged search), so every solvable board gets an answer;
    5. the answer file (within the move limits of the file's first line) and the
       report: per size, move limits, --compare files; ANSWERS.timeline.csv, the
       boards proven against the run's running time (--plot draws it).
    Kill it at any moment: --resume continues where it stopped.  The journal
    ANSWERS.progress.jsonl (a line a finished board, naming the step that ended it)
    stays as the per-board record;
    ANSWERS.sittings holds each sitting's start and end (--budget covers them all);
    ANSWERS.built, the databases the run built (those it may remove for room).
    """
    from ..run.pipeline import run_pipeline
    from ..run.planning import NOT_STARTED, not_started_text

    db_dir, scheduler, budget = given["db_dir"], given["scheduler"], given["budget"]
    refuse_clobbering(
        [("--out", out_path), ("--report", report_path), ("--plot", plot_png)],
        [("the input file", problems), *(("--compare", c) for c in compare_paths)],
        db_dir,
    )
    if given["retry"] and not resume:
        raise click.UsageError("--retry needs --resume: it solves again the boards an earlier run of --out left")
    boards = load_boards(problems, size, goal)
    read_compare_files(compare_paths, boards)
    earlier_run(out_path, resume, fresh)
    if given["no_build"]:
        warn_missing_db_dir(db_dir)
    else:
        check_db_dir_writable(db_dir)
    workers = _workers(given["workers"], scheduler)
    warn_cold_kernels()
    shown = progressive(boards, as_json, human_solved(boards))
    options = _run_options(given, boards, workers, resume, shown)
    t0 = time.perf_counter()
    res = run_pipeline(boards.records, out_path, options)
    shown.close()
    total = time.perf_counter() - t0
    failed = list(res.failed_outputs)
    if plot_png and res.timeline is not None:
        from ..run.outputs import write_each
        from ..run.timeline import plot_timeline

        write_each(failed, "--plot", plot_png, lambda: plot_timeline(res.timeline, plot_png))
    extra = run_notes(res, total, shown.improved)
    started = sum(1 for o in res.outcomes.values() if o.error != NOT_STARTED)
    if started < len(res.outcomes) and isinstance(budget, float):
        extra.append(("", not_started_text(len(res.outcomes) - started, budget, started == 0)))
    head = f"{started}/{plural(len(boards.records), 'board')} in {total:.1f} s " + (
        f"on {scheduler}" if scheduler else f"with {plural(workers, 'worker')}"
    )
    sys.exit(
        finish_run(
            boards,
            res.outcomes,
            Outputs(report_path, tuple(compare_paths), as_json, out_path),
            head=head,
            left_out=res.left_out,
            interrupted=res.interrupted,
            extra_tables=extra,
            failed_outputs=failed,
        )
    )


def _workers(workers: int | None, scheduler) -> int:
    """The run's worker processes: ``--workers`` (capped at the cores this process may
    use where the boards run here), else one a core; on a cluster, as given."""
    if scheduler is None:
        from ..search.threads import default_threads

        cores = default_threads()
        workers = capped("--workers", workers, cores, f"the {plural(cores, 'core')} this process may use")
    return workers if workers is not None else os.cpu_count() or 1


def _run_options(given: dict, boards, workers: int, resume: bool, on_outcome):
    """The run's settings (:class:`~solver.run.options.RunOptions`), built once here
    from the command's options and handed whole to the run."""
    from ..run.options import RunOptions

    same = ("db_dir", "time_limit", "quick_limit", "node_limit", "memory_limit", "layout_memory", "layout_count")
    same += ("wall_free_count", "disk_limit", "scheduler", "retry", "budget")
    return RunOptions(
        **{name: given[name] for name in same},
        limits=boards.limits,
        workers=workers,
        resume=resume,
        fallback=not given["no_fallback"],
        build=not given["no_build"],
        answers_first=not given["proofs_first"],
        on_build=tell_build,
        on_outcome=on_outcome,
    )
