"""``slidepdb build``: pattern databases and goal tables for a size, a board or a file."""

from __future__ import annotations

import logging
import sys
import time

import click

from ..progress import PatternBars, on_terminal
from .shared import EXIT_HELP, bytes_callback, check_db_dir_writable, db_dir_option, format_table


@click.command(epilog=EXIT_HELP)
@click.argument("target")
@click.option(
    "--partition",
    "partitions",
    multiple=True,
    help="Named (7-8, 6-6-3, 6-6-6-6, 5-5-5-5-5-5-5; SIZES.ORDER, e.g. 5-5-5-4-4.col, grows "
    "compact blocks from that order: row, col, far, row-up, col-left) or explicit "
    '("1,2,3/4,5,6") partition; repeat for several (the solver takes the max of their '
    "sums). Default: the named default of the size, else automatic.",
)
@click.option(
    "--memory-limit",
    default="4G",
    show_default=True,
    callback=bytes_callback,
    help="Memory for one pattern's BFS; chooses automatic pattern sizes.",
)
@click.option(
    "--goal-depth",
    default=None,
    metavar="D|auto",
    help="Also build the goal-side BFS table to depth D, or with 'auto' as deep as fits --memory-limit.",
)
@click.option(
    "--goal",
    type=click.Choice(["korf", "devquiz"]),
    default="korf",
    show_default=True,
    help="Goal for a size TARGET or numeric boards.",
)
@click.option(
    "--wall-free/--exact",
    default=False,
    show_default=True,
    help="For walled boards: build the wall-free database of their size, or the exact wall layout.",
)
@click.option("--no-pdb", is_flag=True, help="Build only the goal table (with --goal-depth).")
@click.option("--threads", type=click.IntRange(min=1), default=None, help="Threads (default: all cores).")
@click.option(
    "--layout",
    type=click.Choice(["contiguous", "compressed"]),
    default="contiguous",
    show_default=True,
    help="contiguous: memory-mapped on load; compressed: small on disk, read into memory.",
)
@click.option(
    "--two-bit/--no-two-bit",
    default=True,
    show_default=True,
    help="Also store each table at two bits an entry, which the solver reads (about 10% faster "
    "on the 4x4 7-8 tables; 25-40% more build time, 25% more disk).",
)
@click.option(
    "--zero-aware",
    is_flag=True,
    help="Also store each placement's cost by region of the blank (one more byte an entry), which "
    "the solver reads instead of the least over regions: 0.61 of the nodes on Korf's 100, 0.54 on "
    "walled boards (docs/benchmarks.md). A file without them is built again.",
)
@click.option(
    "--one-bit",
    is_flag=True,
    help="With --zero-aware, also store each table's one-bit copy (its codes and a bit of each value, "
    "a byte a placement; the few placements read whole in a side table), which the solver reads in "
    "place of the table and its codes: the same values in half their memory (docs/FORMAT.md, "
    "docs/benchmarks.md). A zero-aware file without them, or with an older copy, gets them.",
)
@click.option("--overwrite", is_flag=True, help="Rebuild files that exist and verify.")
@click.option(
    "--collection",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Build candidate partitions of the largest pattern sizes under --memory-limit, measure "
    "node counts on sample boards, and keep the set of at most N that cuts nodes most per table "
    "read (its record in each member file).",
)
@click.option(
    "--sample",
    type=click.Path(dir_okay=False, exists=True),
    default=None,
    help="With --collection: the boards to measure on (default: --sample-count drawn at random).",
)
@click.option(
    "--sample-count",
    type=click.IntRange(min=1),
    default=12,
    show_default=True,
    help="With --collection: how many sample boards to draw.",
)
@db_dir_option()
def build(
    target,
    partitions,
    memory_limit,
    goal_depth,
    goal,
    wall_free,
    no_pdb,
    threads,
    layout,
    two_bit,
    zero_aware,
    one_bit,
    overwrite,
    collection,
    sample,
    sample_count,
    db_dir,
):
    """Build pattern databases (and goal tables) for TARGET.

    TARGET is a size (4x4), a board (DevQuiz line or numeric), or a file of boards
    (every distinct shape in it).  Re-running skips what is built and valid; an
    interrupted build leaves no file that could be taken for a good one.
    """
    from ..api import BuildOptions, TargetError, build_reports

    if threads:
        import numba

        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    if goal_depth is not None and goal_depth != "auto":  # its range, and --no-pdb without it: build_reports
        if not goal_depth.isdecimal():
            raise click.BadParameter(f"{goal_depth!r}: a depth from 1 to 254, or auto", param_hint="--goal-depth")
        goal_depth = int(goal_depth)
    quiet = logging.getLogger().level >= logging.ERROR
    said = _BuildLines(quiet, logging.getLogger().level <= logging.INFO)
    if collection is None and sample is not None:
        raise click.UsageError("--sample goes with --collection")
    check_db_dir_writable(db_dir)
    opts = BuildOptions(
        partition=list(partitions),
        goal=goal,
        db_dir=db_dir,
        memory_limit=memory_limit,
        goal_depth=goal_depth,
        pdb=not no_pdb,
        wall_free=wall_free,
        two_bit=two_bit,
        zero_aware=zero_aware,
        one_bit=one_bit,
        layout=layout,
        overwrite=overwrite,
        threads=threads,
        progress=said.layer,
        goal_progress=said.goal,
        on_partition=said.partition,
        on_invalid=lambda src, i, err: click.echo(f"invalid: {src}:{i}: {err}", err=True),
        on_step=said.step,
    )
    try:
        if collection is not None:
            reports = _collection_reports(target, opts, collection, sample, sample_count, quiet)
        else:
            reports = build_reports(target, opts)
    except TargetError as exc:
        raise click.BadParameter(str(exc), param_hint=exc.param) from None
    finally:
        said.close()
    rows = [
        (r.shape, r.kind, r.name, r.status, f"{r.entries:,}", f"{r.mean_h:.3f}", f"{r.seconds:.1f}", r.path)
        for r in reports
    ]
    click.echo(format_table(rows, ["shape", "kind", "name", "status", "entries", "mean h", "seconds", "file"]))
    sys.exit(0)


class _BuildLines:
    """What a build says as it goes: on a terminal a bar per pattern; the per-depth lines at
    -v, and wherever stderr is a log (small tables finish in a blink: their layers only at -v)."""

    def __init__(self, quiet: bool, verbose: bool):
        self.quiet, self.verbose = quiet, verbose
        self.bars = PatternBars() if on_terminal() and not quiet and not verbose else None
        # the whole database's placements, and how many its finished layers valued: an overall estimate
        self.total, self.valued, self.t0 = 0, 0, 0.0

    def layer(self, name, i, depth, valued, marked, seconds):
        self.valued += valued
        if self.bars is not None:
            self.bars.layer(name, i, valued)
        elif not self.quiet and (self.verbose or seconds >= 1.0):
            share = min(self.valued / max(self.total, 1), 1.0)
            spent = time.perf_counter() - self.t0
            left = f", about {spent / share * (1 - share):.0f} s left" if 0.02 < share < 1 else ""
            click.echo(
                f"  {name} pattern {i + 1} depth {depth:3d}: {valued:>12,} placements, "
                f"{marked:>12,} new regions, {seconds:8.1f} s (database {100 * share:.0f}% valued{left})",
                err=True,
            )

    def step(self, name, i, what, seconds):
        # the steps after the BFS (a minute for 7-8): said where the layers are, so the log goes on
        if self.bars is None and not self.quiet and (self.verbose or seconds >= 1.0 or self.total >= STEP_LINES_FROM):
            where = f"pattern {i + 1}" if i is not None else "database"
            click.echo(f"  {name} {where}: {what} in {seconds:.1f} s", err=True)

    def goal(self, name, depth, layer, total, seconds):
        self.close()  # the patterns are done
        if not self.quiet:
            click.echo(
                f"  {name} depth {depth:3d}: {layer:>12,} states, {total:>12,} in all, {seconds:8.1f} s", err=True
            )

    def partition(self, shape, part):
        from ..ranking import num_placements

        n = len(shape.free_cells)
        sizes = [num_placements(n, len(g)) for g in part.groups]
        self.total, self.valued, self.t0 = sum(sizes), 0, time.perf_counter()
        if self.bars is not None:
            self.bars.partition(sizes)
        if not self.quiet:
            click.echo(f"{shape.key}: partition {part.name} = {part.spec()}", err=True)

    def close(self):
        if self.bars is not None:
            self.bars.close()


STEP_LINES_FROM = 10_000_000  # placements: a database this large says each step after its BFS off a terminal


def _collection_reports(target, o, count: int, sample, sample_count: int, quiet: bool):
    """``build --collection``: each shape's collection of at most ``count`` partitions,
    built as ``o`` (:class:`~pdb_builder.api.BuildOptions`) says (raises TargetError on a
    bad target)."""
    from ..api import shapes_of_target
    from ..make.collection import build_collection

    if o.partition or o.goal_depth is not None or not o.pdb:
        raise click.UsageError("--collection chooses its own partitions: not with --partition, --goal-depth, --no-pdb")
    measure = (click.get_current_context().find_root().obj or {}).get("measure")
    if measure is None:
        raise click.UsageError("--collection measures with the solver: run it as `slidepdb build`")
    shapes = shapes_of_target(target, o.goal, o.wall_free)
    boards = None
    if sample is not None:
        from ..formats import read_file

        boards = [r.board for r in read_file(sample, goal=o.goal).records if r.board is not None]
    reports = []
    for shape in shapes:
        mine = None if boards is None else [b for b in boards if b.shape == shape]
        if mine is not None and not mine:
            raise click.BadParameter(f"{sample}: no board of {shape.key}", param_hint="--sample")
        col = build_collection(
            shape,
            count,
            o.memory_limit,
            measure,
            samples=sample_count,
            boards=mine,
            db_dir=o.db_dir,
            two_bit=o.two_bit,
            zero_aware=o.zero_aware,
            one_bit=o.one_bit,
            layout=o.layout,
            overwrite=o.overwrite,
            progress=lambda name, i, d, v, m, s, key=shape.key: o.progress(f"{key} {name}", i, d, v, m, s),
            on_step=None if quiet else (lambda text, key=shape.key: click.echo(f"{key}: {text}", err=True)),
            on_candidate=o.on_partition,
        )
        reports += col.members
    return reports
