"""What the commands of both sides share: option types and checks made before any work
(sizes in bytes, output files, plots, the database folder, ``--size`` and ``--goal``),
the exit-code help and the tables they print."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import click

from .. import options
from ..errors import EXIT_CODES, BoardError


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
    from ..storage import default_db_dir

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
    from ..errors import SlidepdbError
    from ..plotting import plot_format_fault

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
    from ..board import parse_size

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


DB_DIR_HELP = "Database folder (default: $SLIDEPDB_DB_DIR or ./databases)."


def db_dir_option(help: str = DB_DIR_HELP):
    """``--db-dir``: the database folder every command reads or builds into."""
    return click.option("--db-dir", type=click.Path(file_okay=False), default=None, help=help)


def format_table(rows, headers) -> str:
    cols = [headers] + [[str(x) for x in r] for r in rows]
    widths = [max(len(r[i]) for r in cols) for i in range(len(headers))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(cols[0], widths))]

    def numeric(c: str) -> bool:
        return c.replace(",", "").replace(".", "").replace("%", "").lstrip("+-").isdecimal()

    lines += ["  ".join(c.rjust(w) if numeric(c) else c.ljust(w) for c, w in zip(r, widths)) for r in cols[1:]]
    return "\n".join(lines)


def automaton_option(help: str):
    """``--automaton TARGET``: the shapes of a size, a board or a file of boards
    (:func:`~pdb_builder.api.shapes_of_target`), whose pruning automata a command shows
    or checks; ``--depth`` with it."""

    def wrap(f):
        f = click.option(
            "--depth",
            "automaton_depth",
            type=click.IntRange(min=2, max=20),
            default=None,
            help="With --automaton: the automaton's depth (its longest forbidden string).",
        )(f)
        return click.option("--automaton", "automaton", metavar="TARGET", default=None, help=help)(f)

    return wrap


def automaton_shapes(target: str, goal: str) -> list:
    """The shapes ``--automaton TARGET`` names (a bad target: exit 2, naming it)."""
    from ..api import TargetError, shapes_of_target

    try:
        return shapes_of_target(target, goal)
    except TargetError as exc:
        raise click.BadParameter(str(exc), param_hint="--automaton") from None
