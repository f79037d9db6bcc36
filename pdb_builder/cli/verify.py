"""``slidepdb verify``: every entry of a database checked against a fresh BFS."""

from __future__ import annotations

import sys

import click

from ..errors import EXIT_INTERNAL
from .shared import EXIT_HELP, db_dir_option


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
