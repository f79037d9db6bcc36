"""``slidepdb show``: a picture of a board and the moves that solve it."""

from __future__ import annotations

import warnings

import click

from pdb_builder.cli.shared import EXIT_HELP, db_dir_option, goal_option, size_option
from pdb_builder.errors import BoardError, SlidepdbError
from pdb_builder.words import plural

from .options import Seconds, load_boards, log, warn_missing_db_dir


@click.command(epilog=EXIT_HELP)
@click.argument("board")
@click.argument("moves", required=False)
@size_option
@goal_option
@click.option(
    "--out",
    "out_path",
    required=True,
    type=click.Path(dir_okay=False, writable=True),
    help="The picture: .gif (animated, a frame a move) or .png (the frames in rows of 10).",
)
@db_dir_option()
@click.option(
    "--time-limit",
    type=Seconds(),
    default=60.0,
    show_default=True,
    help="Without MOVES: seconds for the optimal search before the fallback answers.",
)
def show(board, moves, size, goal, out_path, db_dir, time_limit):
    """Draw BOARD along MOVES (L R U D of the blank), the tile that moved marked.

    BOARD is one board, read as by ``check``.  Without MOVES the board is solved first,
    as ``solve`` does (optimal where it can be proven), and its answer drawn.
    """
    from pdb_builder.moves import check_moves
    from pdb_builder.picture import write_picture

    from ..api import solve

    boards = load_boards(board, size, goal)
    if len(boards.records) != 1:
        raise BoardError(f"{boards.source}: {len(boards.records)} boards; show draws one (give one line)")
    rec = boards.records[0]
    if rec.error:
        raise BoardError(f"{boards.source}:{rec.index}: {rec.error}")
    if moves is None:
        warn_missing_db_dir(db_dir)
        with warnings.catch_warnings():  # (said above, once, as every command says it)
            warnings.simplefilter("ignore", UserWarning)
            res = solve(rec.board, db_dir=db_dir, time_limit=time_limit)
        if res.moves is None:
            click.echo(f"{res.status}: {res.error or 'no answer within the limit'}", err=True)
            raise SystemExit(res.exit_code)
        moves = res.moves
        log.warning(
            "%s (%s)", plural(len(moves), "move"), "optimal" if res.optimal else f"lower bound {res.lower_bound}"
        )
    try:
        count = write_picture(rec.board, moves, out_path)
    except OSError as exc:
        raise SlidepdbError(f"{out_path}: not written: {exc.strerror or exc}") from None
    reach = "" if check_moves(rec.board, moves).ok else "; the moves do not reach the goal"
    click.echo(f"{out_path}: {count} frames{reach}")
