"""``slidepdb verify``: every entry of a database checked against a fresh BFS."""

from __future__ import annotations

import sys

import click

from ..errors import EXIT_INTERNAL
from .shared import EXIT_HELP, automaton_option, automaton_shapes, db_dir_option, goal_option


@click.command(epilog=EXIT_HELP)
@click.argument("dbs", nargs=-1, type=click.Path(dir_okay=False))
@db_dir_option("Verify every database of this folder when no DB is named.")
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
@automaton_option(
    "Instead: check the pruning automaton of each shape TARGET names (a size, a board or a file "
    "of boards) against every move string up to --depth (default 8), walked afresh."
)
@goal_option
def verify(dbs, db_dir, samples, quick, automaton, automaton_depth, goal):
    """Check format, version, checksums and admissibility of databases.

    In full (the default) every entry of every table is compared with a fresh BFS of
    its pattern (about the time of the build; one line a table, with its seconds),
    and every two-bit copy is checked entry by entry: each decodes from every
    neighbour to its own value, lowered at most as the file says.  Then the tables'
    sum is checked against exact distances of real states (a BFS of the board from
    the goal, whole for small shapes).  Exits 1 naming the file, table and first bad
    rank when anything fails.

    With --automaton TARGET: each shape's pruning automaton (the duplicate move strings
    the search never completes) against every move string of at most --depth moves from
    every free cell, walked in plain Python: the first string to each arrangement must be
    kept and every other pruned, so every pruned string has a kept equivalent no longer.
    Exits 1 naming the shape, the cell and the string where one is not.
    """
    if automaton is not None:
        if dbs:
            raise click.UsageError("give DB files or --automaton, not both")
        sys.exit(_verify_automata(automaton_shapes(automaton, goal), automaton_depth or CHECK_DEPTH))
    if automaton_depth is not None:
        raise click.UsageError("--depth goes with --automaton")
    from ..make.verify import verify as verify_file
    from ..storage import database_files, default_db_dir

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


CHECK_DEPTH = 8  # verify --automaton's depth unless --depth says
CHECK_STRINGS = 30_000_000  # the most strings it walks for one shape (about a minute)


def _verify_automata(shapes, depth: int) -> int:
    """``verify --automaton``: one line a shape; the exit code."""
    from ..automaton import build_automaton, check_automaton, check_strings

    for shape in shapes:
        if (strings := check_strings(shape, depth)) > CHECK_STRINGS:
            raise click.BadParameter(
                f"{shape.key}: depth {depth} means up to {strings:,} strings to walk; give a lower --depth",
                param_hint="--depth",
            )
    code = 0
    for shape in shapes:
        a = build_automaton(shape, depth)
        r = check_automaton(shape, a)
        if r.fault is None:
            click.echo(
                f"ok: automaton of {shape.key}, depth {depth}: {a.states:,} states; {r.strings:,} strings walked, "
                f"{r.kept:,} kept, {r.pruned:,} pruned, each with a kept equivalent no longer ({r.seconds:.1f} s)"
            )
        else:
            click.echo(f"FAILED: {r.fault}")
            code = EXIT_INTERNAL
    return code
