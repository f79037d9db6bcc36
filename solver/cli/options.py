"""The options, parameter types and board loading that the commands share."""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path

import click

from pdb_builder.cli.shared import db_dir_option, output_option
from pdb_builder.formats import read_board_arg
from pdb_builder.words import plural

log = logging.getLogger("slidepdb")


def json_option(f):
    return click.option("--json", "as_json", is_flag=True, help="One JSON object per board per line.")(f)


class Seconds(click.ParamType):
    """A positive, finite number of seconds (``nan`` and ``inf`` are refused); ``s``,
    ``m``, ``h`` suffixes (``90m``, ``4h``) where ``units``; ``words``: names taken
    as their values (``{"none": None}``)."""

    name = "SECONDS"
    UNITS = {"s": 1, "m": 60, "h": 3600}

    def __init__(self, units: bool = False, words: dict | None = None):
        self.units = units
        self.words = words or {}

    def convert(self, value, param, ctx):
        if isinstance(value, float):
            return value
        text, scale = str(value).strip().lower(), 1
        if text in self.words:
            return self.words[text]
        if self.units and text[-1:] in self.UNITS:
            text, scale = text[:-1], self.UNITS[text[-1]]
        try:
            v = float(text) * scale
        except (TypeError, ValueError):
            what = "a duration such as 4h, 90m or 600" if self.units else "a number of seconds"
            what += "".join(f", or {w}" for w in self.words)
            self.fail(f"{value!r} is not {what}", param, ctx)
        if not math.isfinite(v) or v <= 0:
            self.fail(f"{value!r}: give a positive, finite number of seconds", param, ctx)
        return v


HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def _same(a: Path, b: Path) -> bool:
    """Whether two paths name one file (links and hard links followed)."""
    if a.resolve() == b.resolve():
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def refuse_clobbering(outputs, inputs, db_dir=None, use_db: bool = True) -> None:
    """Before any work: no output may name an input file (the boards, a --compare file),
    another output (or a file a run keeps beside --out: its journals, sittings,
    timeline) or a database file.  ``outputs`` and ``inputs``: (option name, path or
    None: not given) pairs; a usage error (exit 2) names both.  ``use_db``: whether the
    database folder is read (any existing HDF5 file is refused either way)."""
    from ..run.files import RunFiles

    named = {k: Path(v) for k, v in outputs if v is not None}
    kept = RunFiles(named["--out"]).kept() if "--out" in named else {}
    taken = {f"--out's {what}": path for what, path in kept.items()}
    sources = [(k, Path(v)) for k, v in inputs if v is not None and Path(v).is_file()]
    db = None
    if use_db:
        from pdb_builder.storage import default_db_dir  # (h5py: not for a --no-db solve)

        db = Path(default_db_dir(db_dir))
    seen: dict[str, Path] = {}
    for name, path in named.items():
        for other, where in [*sources, *seen.items(), *taken.items()]:
            if _same(path, where) and other != name:
                raise click.UsageError(f"{name} {path} is also {other}: refusing to overwrite it; name another file")
        if (db is not None and path.suffix == ".h5" and _same(path.parent, db)) or _is_hdf5(path):
            raise click.UsageError(f"{name} {path} is a database file: refusing to overwrite it; name another file")
        seen[name] = path


def _is_hdf5(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(8) == HDF5_SIGNATURE
    except OSError:
        return False


def read_compare_files(paths, boards) -> None:
    """Every --compare file read and checked against ``boards`` before any work (a
    binary file, or more answers than boards: exit 2 now, not after the solving)."""
    if paths:
        from ..run.answer_file import read_answer_file

        for p in paths:
            read_answer_file(p, boards.records)


def capped(option: str, asked: int | None, most: int, why: str) -> int | None:
    """``asked`` (None: not given) held to ``most``, saying so on stderr when it is cut:
    more processes or threads than can be busy only cost start-up time and memory."""
    if asked is not None and asked > most:
        log.warning("%s %d: using %d (%s)", option, asked, most, why)
        return most
    return asked


COMPILE_SECONDS = "10 to 50"  # the first search's compilation on 2 cores, quiet to busy (README)


def warn_cold_kernels() -> None:
    """One line before the work when the search kernels are not in numba's cache yet:
    the first search compiles them, and would otherwise sit silent for that long."""
    from pdb_builder.jitload import cache_is_cold

    from ..search import __file__ as search_init

    if cache_is_cold(Path(search_init).with_name("kernel.py"), "search_slice"):
        log.warning(
            "compiling the search kernels (once after install, about %s s; later runs load them from the cache)",
            COMPILE_SECONDS,
        )


def warn_missing_db_dir(db_dir) -> None:
    """The warning of :func:`solver.api.missing_db_dir` on stderr, when it applies."""
    from ..api import missing_db_dir

    missing = missing_db_dir(db_dir)
    if missing:
        log.warning("%s", missing)


def typed_again(*add: str, drop=("--resume", "--fresh")) -> str:
    """The command as the user typed it (the group keeps its words), less ``drop``,
    plus ``add``: what a message tells them to type instead."""
    import shlex

    ctx = click.get_current_context(silent=True)
    argv = ctx.meta.get("argv") if ctx is not None else None
    if argv is None:
        return " ".join(["slidepdb", "...", *add])
    return shlex.join(["slidepdb", *(w for w in argv if w not in drop), *add])


def earlier_run(out_path, resume: bool, fresh: bool) -> None:
    """What an earlier run of ``--out`` left beside it, before any work: without
    ``--resume`` or ``--fresh``, a refusal (exit 2) that says in one line what to type;
    with ``--fresh``, those files removed, saying what was discarded (the databases
    stay, and so does the list of those the run built).  The answer file is owned
    from here to the command's end (:func:`solver.run.files.owning`: another run of it
    now, exit 2).  With ``--resume`` the batch
    itself refuses journals of another input (:func:`solver.run.journal.refuse_other_input`)."""
    from pdb_builder.errors import BoardError

    from ..run.files import RunFiles, owning

    if out_path is None:
        if resume or fresh:
            raise click.UsageError(f"--{'resume' if resume else 'fresh'} needs --out")
        return
    if resume and fresh:
        raise click.UsageError("--resume goes on with the earlier run, --fresh discards it: give one")
    # owned from here to the command's end: no other run reads or discards these files meanwhile
    click.get_current_context().with_resource(owning(out_path))
    files = RunFiles(out_path)
    journals = files.journals()
    if not resume and not fresh and journals:
        raise BoardError(
            f"{out_path}: an earlier run of it left {', '.join(p.name for p in journals)}; to go on with it "
            f"type: {typed_again('--resume')}   or, to discard it and start afresh: {typed_again('--fresh')}"
        )
    if fresh:
        gone = []
        for path in (files.answers, *journals, files.sittings, files.timeline):
            if path.exists():
                what = _answered(path)
                gone.append(f"{path.name}{f' ({what})' if what else ''}")
                path.unlink()
        if gone:
            log.warning("--fresh: discarded the earlier run of %s: %s", out_path, ", ".join(gone))


def _answered(path: Path) -> str:
    """How many answers an answer file or a journal holds, in words ('' for another file)."""
    from ..run.journal import journal_lines

    if path.suffix == ".jsonl":
        solved = {d.get("index") for d in journal_lines(path) if isinstance(d, dict) and d.get("status") == "solved"}
        return plural(len(solved), "board") + " answered"
    if path.suffix in (".csv", ".sittings"):
        return ""
    try:
        return plural(sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip()), "answer")
    except (OSError, UnicodeDecodeError):
        return ""


def load_boards(board_arg: str, size, goal):
    """Boards of a BOARD argument, with the format said at -v."""
    boards = read_board_arg(board_arg, size, goal)  # BoardError: exit 2
    log.info("%s: %s, format %s", boards.source, plural(len(boards.records), "board"), boards.format)
    for doubt in boards.warnings:  # said before any work; the boards are solved as they are
        log.warning("warning: %s:%d: %s", boards.source, doubt.index, doubt.error)
    return boards


def scheduler_address(ctx, param, value):
    """A dask scheduler's address, read as dask reads it (``tcp://host:8786``, ``host:8786``),
    checked before any work (:func:`solver.distributed.check_address`)."""
    if value is None:
        return None
    from pdb_builder.errors import OptionsError

    from ..distributed import check_address

    try:
        return check_address(value)
    except OptionsError as exc:
        raise click.BadParameter(str(exc).removeprefix("--scheduler "), ctx, param) from None


def solve_options(f):
    """Options shared by ``solve`` and ``run``."""
    opts = [
        json_option,
        click.option(
            "--resume", is_flag=True, help="Continue an interrupted run of --out: skip boards already answered."
        ),
        click.option(
            "--fresh",
            is_flag=True,
            help="Start afresh: discard what an earlier run of --out left (its answer file, journals and "
            "sittings; the databases stay), saying what.",
        ),
        output_option(
            "--report",
            "report_path",
            "Per-board report: CSV if the name ends in .csv, else JSON lines.",
        ),
        db_dir_option(),
        click.option("--node-limit", type=click.IntRange(min=1), default=None, help="Nodes per board."),
        click.option(
            "--workers",
            type=click.IntRange(min=1),
            default=None,
            help="Processes (default: one per core for several boards).",
        ),
        click.option(
            "--scheduler",
            default=None,
            metavar="ADDRESS",
            callback=scheduler_address,
            help="Solve on a dask.distributed cluster (e.g. tcp://host:8786) instead of local "
            "processes; its workers must see --db-dir at the same path.",
        ),
        click.option(
            "--no-fallback",
            is_flag=True,
            help="Optimal or nothing: no fallback (beam, weighted IDA*, staged search) for a board a limit stopped.",
        ),
        click.option(
            "--compare",
            "compare_paths",
            multiple=True,
            type=click.Path(exists=True, dir_okay=False),
            help="Another answer file for the same boards (repeatable): simulated and compared "
            "board by board at the end.",
        ),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f
