"""``slidepdb inspect``: the databases of a folder, one database in detail, or which
tables serve the boards of a file."""

from __future__ import annotations

import json
import sys

import click

from ..errors import EXIT_INTERNAL
from ..words import human_bytes
from .shared import (
    EXIT_HELP,
    automaton_option,
    automaton_shapes,
    db_dir_option,
    format_table,
    goal_option,
    plot_option,
    size_option,
)


@click.command(epilog=EXIT_HELP)
@click.argument("db", required=False, type=click.Path(dir_okay=False))
@db_dir_option()
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
@automaton_option(
    "Instead: the pruning automata of each shape TARGET names (a size, a board or a file of "
    "boards), at every even depth up to --depth (default 12)."
)
def inspect(db, db_dir, problems, suggest, size, goal, plot_png, no_verify, as_json, automaton, automaton_depth):
    """List the databases of a folder, show one DB in detail, or report coverage.

    \b
    slidepdb inspect                      one row per database
    slidepdb inspect FILE.h5 [--plot P]   one database: histograms, BFS layers
    slidepdb inspect --problems FILE      which tables serve each board, and the gain
    slidepdb inspect --automaton TARGET   the duplicate-path pruning automata of its shapes
    """

    if automaton is not None:
        if db or problems:
            raise click.UsageError("give DB, --problems or --automaton, one of them")
        _show_automata(automaton_shapes(automaton, goal), automaton_depth or SHOW_DEPTH, as_json)
        return
    if automaton_depth is not None:
        raise click.UsageError("--depth goes with --automaton")
    if db and problems:
        raise click.UsageError("give DB or --problems, not both")
    if plot_png and not db:
        raise click.UsageError("--plot needs a DB file")
    if suggest and not problems:
        raise click.UsageError("--suggest goes with --problems")
    if db:
        _show_one(db, plot_png, as_json)
    elif problems:
        _show_coverage(problems, size, goal, db_dir, suggest, as_json)
    else:
        _list_folder(db_dir, no_verify, as_json)


def _show_one(db, plot_png, as_json) -> None:
    """One database in detail: its attributes, each table's histogram and BFS layers."""
    from ..make import catalogue as insp

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
            z = t["zero-aware"]
            if z is not None:
                click.echo(
                    f"    zero-aware: {z['placements with costs by region']:,} placements with costs by "
                    f"region of the blank, in steps of {z['step']}"
                )
            o = t.get("one-bit")
            if o is not None:
                click.echo(
                    f"    one-bit copy: {o['bytes']:,} bytes (the table and its codes: {2 * t['entries']:,}), "
                    f"{o['placements read whole']:,} placements read whole"
                    + (" (from its side table)" if o.get("side table") else " (from the table)")
                )
    else:
        click.echo(f"  {info['states']:,} states to depth {info['depth']}")
        click.echo("    layers: " + " ".join(map(str, info["layers"])))


def _show_coverage(problems, size, goal, db_dir, suggest, as_json) -> None:
    """Which tables serve each board of ``problems``, by size, and the gain over Manhattan distance."""
    from ..formats import read_file
    from ..make import catalogue as insp

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


def _list_folder(db_dir, no_verify, as_json) -> None:
    """One row per database of the folder, its builds not published yet, and exit 1 where one is damaged."""
    from ..make import catalogue as insp
    from ..storage import default_db_dir

    rows = insp.list_databases(db_dir, verify=not no_verify)
    damaged = [r for r in rows if r.checksum.startswith("BAD")]
    if as_json:
        for r in rows:
            click.echo(json.dumps(r.as_json()))
        _tell_unfinished(db_dir)
        _exit_if_damaged(damaged, db_dir)
        return
    if not rows:
        click.echo(f"no databases in {default_db_dir(db_dir)}; build some with `slidepdb build`", err=True)
        _tell_unfinished(db_dir)
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
                    r.zero_aware,
                    r.checksum,
                )
                for r in rows
            ],
            [
                "shape",
                "kind",
                "name",
                "entries",
                "on disk",
                "built",
                "build s",
                "max h",
                "mean h",
                "2-bit",
                "zero-aware",
                "checksum",
            ],
        )
    )
    _tell_unfinished(db_dir)
    _exit_if_damaged(damaged, db_dir)


def _tell_unfinished(db_dir) -> None:
    """Each build of the folder not published yet, on stderr: under way, or left by a
    killed build (never read as a database: its hidden temporary file is removed by the
    next build of it)."""
    from ..atomic import unfinished
    from ..storage import default_db_dir

    for name, tmp, gone, writer in unfinished(default_db_dir(db_dir)):
        size = human_bytes(tmp.stat().st_size) if tmp.exists() else "0 B"
        host, _, pid = writer.rpartition("-")
        who = f"process {pid} on {host}" if writer else "an unknown process"
        if gone:
            what = f"left unfinished by {who}, which is gone: never read; the next build of it removes {tmp.name}"
        else:
            what = f"being built by {who} (if that build was killed on another host, delete {tmp.name})"
        click.echo(f"{name}: not built yet, {size} written: {what}", err=True)


def _exit_if_damaged(damaged, db_dir) -> None:
    """A damaged database in the listing: each named on stderr, exit 1 (as for any damaged database)."""
    from ..storage import default_db_dir

    for r in damaged:
        click.echo(
            f"error: {default_db_dir(db_dir) / r.file}: damaged ({r.checksum[4:].strip()}); "
            "`slidepdb verify` it, then rebuild it (slidepdb build ... --overwrite) or delete it",
            err=True,
        )
    if damaged:
        sys.exit(EXIT_INTERNAL)


SHOW_DEPTH = 12  # inspect --automaton's deepest unless --depth says


def _show_automata(shapes, depth: int, as_json: bool) -> None:
    """``inspect --automaton``: each shape's automata of depths 2, 4, .. ``depth`` (a
    table, or one JSON object each)."""
    from ..automaton import build_automaton

    rows = []
    for shape in shapes:
        for d in range(2, depth + 1, 2):
            a = build_automaton(shape, d)
            row = {
                "shape": shape.key,
                "depth": d,
                "states": a.states,
                "forbidden strings": a.forbidden,
                "bytes": a.nbytes,
                "build s": round(a.seconds, 3),
            }
            if as_json:
                click.echo(json.dumps(row))
            rows.append(row)
    if not as_json:
        click.echo(
            format_table(
                [
                    (
                        r["shape"],
                        r["depth"],
                        f"{r['states']:,}",
                        f"{r['forbidden strings']:,}",
                        human_bytes(r["bytes"]),
                        f"{r['build s']:.2f}",
                    )
                    for r in rows
                ],
                ["shape", "depth", "states", "forbidden strings", "size", "build s"],
            )
        )
