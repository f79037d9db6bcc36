"""``slidepdb build`` (and the builder's other commands): thin click commands.

They are attached to the ``slidepdb`` group in ``solver/cli/``; this module
never imports ``solver``.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import time
from pathlib import Path

import click

from . import options
from .errors import EXIT_BAD_INPUT, EXIT_CODES, EXIT_INTERNAL, BoardError
from .progress import PatternBars, on_terminal
from .words import human_bytes

log = logging.getLogger("slidepdb")


def parse_bytes(text: str) -> int:
    try:
        return options.parse_bytes(text)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def bytes_callback(ctx, param, value):
    return parse_bytes(value) if value is not None else None


EXIT_HELP = "\b\nExit codes:\n" + "\n".join(f"  {k}  {v}" for k, v in EXIT_CODES.items())


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
    fault = _write_fault(folder)
    if fault:
        raise click.BadParameter(f"{value}: cannot write in {folder}: {fault}", ctx, param)
    return value


def _write_fault(folder: Path) -> str | None:
    """Why no new file can be made in ``folder`` (an existing folder), or None."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".slidepdb-probe.", dir=folder)
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(fd)
    os.unlink(probe)
    return None


def check_db_dir_writable(db_dir) -> None:
    """Before a build: the database folder (made when missing) must take new files; a
    usage error (exit 2) naming the folder, not a failure naming a hidden temporary
    file after the work."""
    from .storage import default_db_dir

    folder = default_db_dir(db_dir).absolute()
    probe = folder
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent  # the folder is made at the first build: its nearest existing parent must take it
    if not probe.is_dir():
        raise click.BadParameter(f"{folder}: {probe} is not a folder", param_hint="--db-dir")
    fault = _write_fault(probe)
    if fault:
        raise click.BadParameter(f"cannot write database files in {folder}: {fault}", param_hint="--db-dir")


def output_option(name: str, dest: str, help: str, required: bool = False):
    """An option naming a file to write (checked before any work by :func:`output_path`)."""
    return click.option(
        name, dest, type=click.Path(dir_okay=False), default=None, required=required, callback=output_path, help=help
    )


def plot_path(ctx, param, value):
    """An output file for a plot: :func:`output_path`'s checks, matplotlib installed,
    and a name whose suffix matplotlib can write (checked before any work)."""
    from .errors import SlidepdbError
    from .plotting import plot_format_fault

    value = output_path(ctx, param, value)
    if value is None:
        return None
    try:
        fault = plot_format_fault(value)
    except SlidepdbError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None
    if fault:
        raise click.BadParameter(f"{value}: {fault}", ctx, param)
    return value


def plot_option(name: str, dest: str, help: str):
    """An option naming a plot to draw (checked before any work by :func:`plot_path`)."""
    return click.option(name, dest, type=click.Path(dir_okay=False), default=None, callback=plot_path, help=help)


def _size(ctx, param, value):
    if value is None:
        return None
    from .board import parse_size

    try:
        return parse_size(value)
    except BoardError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None


def size_option(f):
    """``--size WxH`` for numeric and benchmark lines (parsed to (width, height))."""
    return click.option(
        "--size",
        "size",
        metavar="WxH",
        default=None,
        callback=_size,
        help="Board size for numeric boards (default: square, from the count).",
    )(f)


def goal_option(f):
    """``--goal`` for numeric and benchmark lines; a DevQuiz line has the DevQuiz goal."""
    return click.option(
        "--goal",
        type=click.Choice(["korf", "devquiz"]),
        default="korf",
        show_default=True,
        help="Goal for numeric and benchmark lines (DevQuiz lines always use the DevQuiz goal).",
    )(f)


def format_table(rows, headers) -> str:
    cols = [headers] + [[str(x) for x in r] for r in rows]
    widths = [max(len(r[i]) for r in cols) for i in range(len(headers))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(cols[0], widths))]

    def numeric(c: str) -> bool:
        return c.replace(",", "").replace(".", "").replace("%", "").lstrip("+-").isdigit()

    lines += ["  ".join(c.rjust(w) if numeric(c) else c.ljust(w) for c, w in zip(r, widths)) for r in cols[1:]]
    return "\n".join(lines)


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
@click.option(
    "--db-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Database folder (default: $SLIDEPDB_DB_DIR or ./databases).",
)
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
    from .api import TargetError, build_reports

    if threads:
        import numba

        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    if goal_depth is not None and goal_depth != "auto":  # its range, and --no-pdb without it: build_reports
        if not goal_depth.isdigit():
            raise click.BadParameter(f"{goal_depth!r}: a depth from 1 to 254, or auto", param_hint="--goal-depth")
        goal_depth = int(goal_depth)
    quiet = logging.getLogger().level >= logging.ERROR
    verbose = logging.getLogger().level <= logging.INFO
    # on a terminal a bar per pattern; the per-depth lines at -v, and wherever stderr is a log
    bars = PatternBars() if on_terminal() and not quiet and not verbose else None

    # the whole database's placements, and how many its finished layers valued: an overall estimate
    overall = {"total": 0, "valued": 0, "t0": 0.0}

    def layer_progress(name, i, depth, valued, marked, seconds):
        overall["valued"] += valued
        if bars is not None:
            bars.layer(name, i, valued)
        # small tables finish in a blink: their layers only at -v
        elif not quiet and (verbose or seconds >= 1.0):
            share = min(overall["valued"] / max(overall["total"], 1), 1.0)
            spent = time.perf_counter() - overall["t0"]
            left = f", about {spent / share * (1 - share):.0f} s left" if 0.02 < share < 1 else ""
            click.echo(
                f"  {name} pattern {i + 1} depth {depth:3d}: {valued:>12,} placements, "
                f"{marked:>12,} new regions, {seconds:8.1f} s (database {100 * share:.0f}% valued{left})",
                err=True,
            )

    def step_progress(name, i, what, seconds):
        # the steps after the BFS (a minute for 7-8): said where the layers are, so the log goes on
        if bars is None and not quiet and (verbose or seconds >= 1.0 or overall["total"] >= STEP_LINES_FROM):
            where = f"pattern {i + 1}" if i is not None else "database"
            click.echo(f"  {name} {where}: {what} in {seconds:.1f} s", err=True)

    def goal_progress(name, depth, layer, total, seconds):
        if bars is not None:
            bars.close()  # the patterns are done
        if not quiet:
            click.echo(
                f"  {name} depth {depth:3d}: {layer:>12,} states, {total:>12,} in all, {seconds:8.1f} s", err=True
            )

    def on_partition(shape, part):
        from .ranking import num_placements

        n = len(shape.free_cells)
        overall.update(total=sum(num_placements(n, len(g)) for g in part.groups), valued=0, t0=time.perf_counter())
        if bars is not None:
            bars.partition([num_placements(n, len(g)) for g in part.groups])
        if not quiet:
            click.echo(f"{shape.key}: partition {part.name} = {part.spec()}", err=True)

    if collection is None and sample is not None:
        raise click.UsageError("--sample goes with --collection")
    check_db_dir_writable(db_dir)
    try:
        if collection is not None:
            reports = _collection_reports(
                target, collection, partitions, memory_limit, goal, goal_depth, no_pdb, wall_free, sample,
                sample_count, dict(db_dir=db_dir, two_bit=two_bit, layout=layout, overwrite=overwrite),
                layer_progress, on_partition, quiet,
            )  # fmt: skip
        else:
            reports = build_reports(
                target,
                partition=list(partitions),
                goal=goal,
                db_dir=db_dir,
                memory_limit=memory_limit,
                goal_depth=goal_depth,
                pdb=not no_pdb,
                wall_free=wall_free,
                two_bit=two_bit,
                layout=layout,
                overwrite=overwrite,
                progress=layer_progress,
                goal_progress=goal_progress,
                on_partition=on_partition,
                on_invalid=lambda src, i, err: click.echo(f"invalid: {src}:{i}: {err}", err=True),
                threads=threads,
                on_step=step_progress,
            )
    except TargetError as exc:
        raise click.BadParameter(str(exc), param_hint=exc.param) from None
    finally:
        if bars is not None:
            bars.close()
    rows = [
        (r.shape, r.kind, r.name, r.status, f"{r.entries:,}", f"{r.mean_h:.3f}", f"{r.seconds:.1f}", r.path)
        for r in reports
    ]
    click.echo(format_table(rows, ["shape", "kind", "name", "status", "entries", "mean h", "seconds", "file"]))
    sys.exit(0)


STEP_LINES_FROM = 10_000_000  # placements: a database this large says each step after its BFS off a terminal

MEASURE = None  # measure(paths, boards) for --collection: given by the solver (register), never imported here


def _collection_reports(
    target, count, partitions, memory_limit, goal, goal_depth, no_pdb, wall_free, sample, sample_count, opts,
    progress, on_partition, quiet,
):  # fmt: skip
    """``build --collection``: each shape's collection (raises TargetError on a bad target)."""
    from .api import shapes_of_target
    from .make.collection import build_collection

    if partitions or goal_depth is not None or no_pdb:
        raise click.UsageError("--collection chooses its own partitions: not with --partition, --goal-depth, --no-pdb")
    if MEASURE is None:
        raise click.UsageError("--collection measures with the solver: run it as `slidepdb build`")
    shapes = shapes_of_target(target, goal, wall_free)
    boards = None
    if sample is not None:
        from .formats import read_file

        boards = [r.board for r in read_file(sample, goal=goal).records if r.board is not None]
    reports = []
    for shape in shapes:
        mine = None if boards is None else [b for b in boards if b.shape == shape]
        if mine is not None and not mine:
            raise click.BadParameter(f"{sample}: no board of {shape.key}", param_hint="--sample")
        col = build_collection(
            shape, count, memory_limit, MEASURE, samples=sample_count, boards=mine,
            progress=lambda name, i, d, v, m, s, key=shape.key: progress(f"{key} {name}", i, d, v, m, s),
            on_step=None if quiet else (lambda text, key=shape.key: click.echo(f"{key}: {text}", err=True)),
            on_candidate=on_partition, **opts,
        )  # fmt: skip
        reports += col.members
    return reports


@click.command(epilog=EXIT_HELP)
@click.argument("db", required=False, type=click.Path(dir_okay=False))
@click.option(
    "--db-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Database folder (default: $SLIDEPDB_DB_DIR or ./databases).",
)
@click.option(
    "--problems",
    type=click.Path(dir_okay=False),
    default=None,
    help="Coverage of every board of this file by the databases of the folder.",
)
@click.option("--suggest", is_flag=True, help="With --problems: print the builds that would cover the rest.")
@size_option
@goal_option
@plot_option(
    "--plot",
    "plot_png",
    "With DB: draw the value histograms into this PNG, PDF or SVG (needs matplotlib).",
)
@click.option("--no-verify", is_flag=True, help="Listing: skip the checksums.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (one object per line).")
def inspect(db, db_dir, problems, suggest, size, goal, plot_png, no_verify, as_json):
    """List the databases of a folder, show one DB in detail, or report coverage.

    \b
    slidepdb inspect                      one row per database
    slidepdb inspect FILE.h5 [--plot P]   one database: histograms, BFS layers
    slidepdb inspect --problems FILE      which tables serve each board, and the gain
    """
    import json

    from .make import catalogue as insp
    from .storage import default_db_dir

    if db and problems:
        raise click.UsageError("give DB or --problems, not both")
    if plot_png and not db:
        raise click.UsageError("--plot needs a DB file")
    if suggest and not problems:
        raise click.UsageError("--suggest goes with --problems")
    if db:
        info = insp.describe(db)
        if plot_png:
            insp.plot_histograms(db, plot_png)
            click.echo(f"wrote {plot_png}", err=True)
        if as_json:
            click.echo(json.dumps(info))
            return
        click.echo(f"{info['file']}: {info['kind']} for {info['shape-description']} ({info['shape']})")
        a = info["attributes"]
        click.echo(
            f"  created {a['created']} by {a['generator']}, built in {a['build-seconds']:.1f} s, "
            f"layout {a.get('layout')}, format v{a['format-version']}"
        )
        if info["kind"] == "pdb":
            click.echo(f"  partition {a['partition-name']}, ranking {a['ranking-name']} v{a['ranking-version']}")
            col = info["metadata"].get("collection")
            if col:
                click.echo(f"  collection {col['id']} ({col['created']}): {' + '.join(col['members'])}")
                click.echo(f"    sample: {len(col['sample']['boards'])} boards, {col['sample']['drawn']}")
                for fig in col["figures"]:
                    click.echo(f"    {' + '.join(fig['set'])}: {fig['nodes']:,} nodes, {fig['seconds']:.2f} s")
            for i, t in enumerate(info["tables"]):
                click.echo(
                    f"  table {i}: tiles {','.join(map(str, t['tiles']))}; {t['entries']:,} entries, "
                    f"mean {t['mean']:.3f}, max {t['max']}, unreachable {t['unreachable']:,}, "
                    f"{t['seconds']:.1f} s"
                )
                click.echo("    histogram: " + " ".join(f"{v}:{c}" for v, c in t["histogram"].items()))
                click.echo("    BFS layers: " + " ".join(map(str, t["layers"])))
        else:
            click.echo(f"  {info['states']:,} states to depth {info['depth']}")
            click.echo("    layers: " + " ".join(map(str, info["layers"])))
        return
    if problems:
        from .formats import read_file

        boards = read_file(problems, size, goal)
        for r in boards.records:
            if r.error:
                click.echo(f"invalid: {boards.source}:{r.index}: {r.error}", err=True)
        covs = insp.coverage(boards.records, db_dir)
        summary = insp.coverage_summary(covs)
        if as_json:
            for c in covs:
                click.echo(json.dumps(c.as_json()))
            click.echo(json.dumps({"summary": summary}))
        else:
            rows = [
                (
                    s["size"],
                    s["boards"],
                    s["exact"],
                    s["wall-free"],
                    s["goal-table"],
                    s["none"],
                    f"{100 * s['covered']:.1f}%",
                    f"{s['mean-manhattan']:.2f}",
                    f"{s['mean-h0']:.2f}",
                    f"{s['mean-gain']:+.2f}",
                )
                for s in summary
            ]
            click.echo(
                format_table(
                    rows,
                    [
                        "size",
                        "boards",
                        "exact PDB",
                        "wall-free PDB",
                        "goal table",
                        "none",
                        "covered",
                        "mean manhattan",
                        "mean h0",
                        "mean gain",
                    ],
                )
            )
        if suggest:
            cmds = insp.suggest(covs, boards.records, db_dir)
            click.echo("\n".join(cmds) if cmds else "# every board is served by a database", err=as_json)
        return
    rows = insp.list_databases(db_dir, verify=not no_verify)
    damaged = [r for r in rows if r.checksum.startswith("BAD")]
    if as_json:
        for r in rows:
            click.echo(json.dumps(r.as_json()))
        _exit_if_damaged(damaged, db_dir)
        return
    if not rows:
        click.echo(f"no databases in {default_db_dir(db_dir)}; build some with `slidepdb build`", err=True)
        return
    click.echo(
        format_table(
            [
                (
                    r.shape,
                    r.kind,
                    r.name,
                    f"{r.entries:,}",
                    human_bytes(r.bytes),
                    r.created,
                    f"{r.build_seconds:.1f}",
                    r.max_h,
                    f"{r.mean_h:.3f}",
                    r.two_bit,
                    r.checksum,
                )
                for r in rows
            ],
            ["shape", "kind", "name", "entries", "on disk", "built", "build s", "max h", "mean h", "2-bit", "checksum"],
        )
    )
    _exit_if_damaged(damaged, db_dir)


def _exit_if_damaged(damaged, db_dir) -> None:
    """A damaged database in the listing: each named on stderr, exit 1 (as for any damaged database)."""
    from .storage import default_db_dir

    for r in damaged:
        click.echo(
            f"error: {default_db_dir(db_dir) / r.file}: damaged ({r.checksum[4:].strip()}); "
            "`slidepdb verify` it, then rebuild it (slidepdb build ... --overwrite) or delete it",
            err=True,
        )
    if damaged:
        sys.exit(EXIT_INTERNAL)


@click.command(epilog=EXIT_HELP)
@click.argument("dbs", nargs=-1, type=click.Path(dir_okay=False))
@click.option(
    "--db-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Verify every database of this folder when no DB is named.",
)
@click.option(
    "--samples",
    type=click.IntRange(min=1),
    default=2000,
    show_default=True,
    help="Real states whose exact distances bound the tables' sum, per database.",
)
@click.option(
    "--quick", is_flag=True, help="Spot checks only: --samples placements of each two-bit copy, no fresh BFS."
)
def verify(dbs, db_dir, samples, quick):
    """Check format, version, checksums and admissibility of databases.

    In full (the default) every entry of every table is compared with a fresh BFS of
    its pattern (about the time of the build; one line a table, with its seconds),
    and every two-bit copy is checked entry by entry: each decodes from every
    neighbour to its own value, lowered at most as the file says.  Then the tables'
    sum is checked against exact distances of real states (a BFS of the board from
    the goal, whole for small shapes).  Exits 1 naming the file, table and first bad
    rank when anything fails.
    """
    from .make.verify import verify as verify_file
    from .storage import database_files, default_db_dir

    paths = list(dbs) or [str(p) for p in database_files(db_dir)]
    if not paths:  # as inspect: an empty folder is not a failure
        click.echo(f"no databases in {default_db_dir(db_dir)}; nothing to verify", err=True)
        return
    code = 0
    for p in paths:
        r = verify_file(p, samples=samples, full=not quick)
        if r.ok:
            click.echo(f"ok: {p}")
            for line in r.checks:
                click.echo(f"  {line}")
        else:
            for line in r.checks:
                click.echo(f"  {line}")
            click.echo(f"FAILED: {r.error}")
            code = EXIT_INTERNAL
    sys.exit(code)


def register(group: click.Group, measure=None) -> None:
    """Attach the builder's commands to ``group``; ``measure(paths, boards)``: node
    counts for ``build --collection`` (the solver's, :func:`solver.search.measure.measure`)."""
    global MEASURE
    MEASURE = measure
    group.add_command(build)
    group.add_command(inspect)
    group.add_command(verify)


__all__ = ["build", "register", "EXIT_BAD_INPUT"]
