"""The ``slidepdb`` command: a thin click layer over the library.

Results go to stdout (``--json``: one object per board per line), logs and
progress to stderr.  Exit codes are listed in ``pdb_builder.errors`` and the
README; with several boards the highest code any board produced wins.
"""

from __future__ import annotations

import json
import logging
import os
import sys

import click

from pdb_builder import __version__
from pdb_builder.board import parse_size
from pdb_builder.cli import register as register_builder
from pdb_builder.errors import EXIT_BAD_INPUT, EXIT_CODES, EXIT_INTERNAL, BoardError, SlidepdbError
from pdb_builder.formats import read_board_arg

log = logging.getLogger("slidepdb")

EXIT_HELP = "\b\nExit codes:\n" + "\n".join(f"  {k}  {v}" for k, v in EXIT_CODES.items())


def size_option(f):
    return click.option("--size", "size", metavar="WxH", default=None,
                        help="Board size for numeric boards (default: square, from the count).")(f)


def goal_option(f):
    return click.option("--goal", type=click.Choice(["korf", "devquiz"]), default="korf", show_default=True,
                        help="Goal for numeric boards (DevQuiz lines always use the DevQuiz goal).")(f)


def json_option(f):
    return click.option("--json", "as_json", is_flag=True, help="One JSON object per board per line.")(f)


def _parse_size_opt(size):
    if size is None:
        return None
    try:
        return parse_size(size)
    except BoardError as exc:
        raise click.BadParameter(str(exc), param_hint="--size") from None


def load_boards(board_arg: str, size, goal):
    """Boards of a BOARD argument, with the format said at -v."""
    try:
        boards = read_board_arg(board_arg, _parse_size_opt(size), goal)
    except BoardError as exc:
        raise click.ClickException(str(exc)) from None
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
            ctx.exit(130)
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort, SystemExit):
            raise
        except Exception as exc:  # noqa: BLE001 - last resort: no traceback for users
            if os.environ.get("SLIDEPDB_DEBUG"):
                raise
            click.echo(f"internal error: {type(exc).__name__}: {exc} (set SLIDEPDB_DEBUG=1 for a traceback)",
                       err=True)
            ctx.exit(EXIT_INTERNAL)


@click.group(cls=SlidepdbGroup, epilog=EXIT_HELP)
@click.version_option(__version__, prog_name="slidepdb")
@click.option("-v", "--verbose", count=True, help="More messages on stderr (-vv for debug).")
@click.option("-q", "--quiet", is_flag=True, help="Only errors on stderr.")
def main(verbose, quiet):
    """Pattern databases and optimal solving for sliding-tile puzzles, walls included."""
    level = logging.ERROR if quiet else (logging.WARNING, logging.INFO, logging.DEBUG)[min(verbose, 2)]
    logging.basicConfig(level=level, format="%(message)s", stream=sys.stderr, force=True)


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
    from solver.batch import check_record

    boards = load_boards(board, size, goal)
    outcomes = (check_record(rec, moves) for rec in boards.records)

    def human(out):
        if out.status == "valid":
            if moves is not None:
                n = out.extra["length"]
                return f"{where(boards, out.index)}: {n} move{'' if n == 1 else 's'} reach{'es' if n == 1 else ''} the goal"
            return f"{where(boards, out.index)}: solvable ({out.extra['method']})"
        return None

    sys.exit(emit(outcomes, boards, as_json, human))


@main.command(epilog=EXIT_HELP)
@click.argument("board")
@size_option
@goal_option
@json_option
@click.option("--out", "out_path", type=click.Path(dir_okay=False), default=None,
              help="Answer file: one line per board, in order, empty when unsolved (written atomically; "
                   "finished boards are kept in OUT.progress.jsonl until the run completes).")
@click.option("--resume", is_flag=True, help="Continue an interrupted run of --out: skip boards already answered.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), default=None,
              help="Per-board report: CSV if the name ends in .csv, else JSON lines.")
@click.option("--db-dir", type=click.Path(file_okay=False), default=None,
              help="Database folder (default: $SLIDEPDB_DB_DIR or ./databases).")
@click.option("--time-limit", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds per board before it is reported as a limit.")
@click.option("--node-limit", type=click.IntRange(min=1), default=None, help="Nodes per board.")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Processes (default: one per core for several boards).")
@click.option("--no-db", is_flag=True, help="Ignore databases: wall-aware Manhattan + linear conflicts only.")
@click.option("--no-fallback", is_flag=True,
              help="Optimal or nothing: no weighted search for a board a limit stopped.")
def solve(board, size, goal, as_json, out_path, resume, report_path, db_dir, time_limit, node_limit, workers,
          no_db, no_fallback):
    """Solve BOARD optimally with IDA* and print the moves of the blank.

    BOARD is read as by ``check``.  Each answer is simulated before it is printed;
    ``optimal`` means proven: an admissible heuristic and a completed IDA* iteration.
    When a limit stops the optimal search, weighted IDA* still finds a valid answer
    (``optimal: false``, with the proven lower bound) unless --no-fallback.
    Ctrl-C keeps every finished answer (rerun with --resume).
    """
    from solver.batch import SUMMARY_HEADERS, run_batch, summary_rows, write_report

    if resume and not out_path:
        raise click.UsageError("--resume needs --out")
    boards = load_boards(board, size, goal)
    if workers is None:
        workers = (os.cpu_count() or 1) if len(boards.records) > 1 else 1
    code = report_file_errors(boards)

    def human(out):
        if out.status != "solved":
            return None
        e = out.extra
        tag = "optimal" if e["optimal"] else (f"not proven optimal, weight {e['fallback_weight']}, "
                                              f"lower bound {e['lower_bound']}")
        return (f"{where(boards, out.index)}: {e['length']} moves ({tag}, {e['nodes']} nodes, "
                f"{e['seconds']:.2f} s): {e['moves']}")

    result = run_batch(boards.records, db_dir=db_dir, use_db=not no_db, time_limit=time_limit,
                       node_limit=node_limit, workers=workers, out_path=out_path, resume=resume,
                       on_outcome=lambda out: show(out, boards, as_json, human),
                       fallback=not no_fallback)
    outcomes = list(result.outcomes.values())
    if report_path:
        write_report(report_path, outcomes)
    for o in outcomes:
        code = max(code, o.exit_code)
    if len(boards.records) > 1:
        from pdb_builder.cli import format_table

        table = format_table(summary_rows(outcomes), SUMMARY_HEADERS)
        resumed = f", {result.resumed} from an earlier run" if result.resumed else ""
        click.echo(f"{len(outcomes)}/{len(boards.records)} boards in {result.seconds:.1f} s with "
                   f"{workers} worker(s){resumed}\n{table}", err=as_json)
    if result.interrupted:
        click.echo(f"interrupted: {len(outcomes)} boards finished"
                   + (f"; rerun with --resume to continue {out_path}" if out_path else ""), err=True)
        sys.exit(130)
    sys.exit(code)


register_builder(main)


if __name__ == "__main__":
    main()
