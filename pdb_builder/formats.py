"""Input formats: single boards and files of boards, with line numbers kept.

Formats (README "Input formats"):

* ``devquiz-line``: ``W,H,CELLS`` (DevQuiz goal).
* ``devquiz-problems``: a DevQuiz problem file: a limits line ``L R U D``, a count
  line, then one ``W,H,CELLS`` board a line.
* ``numeric``: ``t0 t1 .. tn-1`` (0 blank, ``=`` wall) with a size and a goal.
* ``benchmark``: ``id optimal_length t0 .. tn-1`` (``korf100.txt`` and friends).

A file may mix DevQuiz lines and numeric lines; blank lines and lines starting
with ``#`` are skipped.  Numbers without ``--size`` are read as a square board
when the count allows exactly one reading.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .board import BLANK, LABELS, WALL, Board, Shape, parse_size, validate_arrangement
from .errors import BoardError
from .words import plural

# -- parsing of single boards ----------------------------------------------------------


def parse_devquiz_line(text: str) -> Board:
    """``W,H,CELLS``: DevQuiz board line (labels ``1``-``9``, ``A``-``Z``, ``=`` wall,
    ``0`` blank; DevQuiz goal)."""
    parts = text.strip().split(",")
    if len(parts) != 3:
        raise BoardError(f"expected W,H,CELLS, got {len(parts)} comma-separated fields")
    ws, hs, body = (p.strip() for p in parts)
    if not (ws.isdecimal() and hs.isdecimal()):
        raise BoardError(f"bad size {ws!r},{hs!r}: width and height must be whole numbers")
    w, h = int(ws), int(hs)
    if not (2 <= w <= 6 and 2 <= h <= 6):
        raise BoardError(
            f"bad size {w}x{h}: the DevQuiz format takes 2 to 6 each way (use the numeric format for larger boards)"
        )
    if len(body) != w * h:
        raise BoardError(f"{len(body)} cells given, size {w}x{h} needs {w * h}")
    cells = []
    for i, ch in enumerate(body.upper()):
        if ch == "=":
            cells.append(WALL)
        elif ch == "0":
            cells.append(BLANK)
        elif ch in LABELS:
            cells.append(LABELS.index(ch) + 1)
        else:
            raise BoardError(f"unknown character {ch!r} at cell {i} (expected 0-9, A-Z or =)")
    walls = [c for c, t in enumerate(cells) if t == WALL]
    shape = Shape.devquiz(w, h, walls)
    return Board(shape, tuple(cells))


def parse_numeric_tokens(tokens, width: int, height: int, goal_kind: str) -> Board:
    """Numeric board: ``t0 .. tn-1`` (tile on each cell, 0 blank, ``=`` or ``-1`` a wall)."""
    n = width * height
    if len(tokens) != n:
        raise BoardError(f"{len(tokens)} cells given, size {width}x{height} needs {n}")
    cells = []
    for i, tok in enumerate(tokens):
        if tok in ("=", "-1"):
            cells.append(WALL)
        elif tok.isdecimal():
            cells.append(int(tok))
        else:
            raise BoardError(f"unknown token {tok!r} at cell {i} (expected a tile number, 0 or =)")
    walls = [c for c, t in enumerate(cells) if t == WALL]
    shape = Shape.make(width, height, goal_kind, walls)
    validate_arrangement(shape, cells, name=str)
    return Board(shape, tuple(cells))


@dataclass
class Record:
    """One board of an input: where it came from, and the board or the error."""

    index: int  # 1-based line number in its file (1 for a board given as an argument)
    text: str
    board: Board | None = None
    error: str | None = None
    ident: str | None = None  # benchmark id
    expected_length: int | None = None  # benchmark optimal length


@dataclass
class BoardSet:
    source: str
    formats: set[str] = field(default_factory=set)
    limits: tuple[int, int, int, int] | None = None  # DevQuiz L R U D move limits
    records: list[Record] = field(default_factory=list)
    warnings: list[Record] = field(default_factory=list)  # file-level doubts (a count line that disagrees)

    @property
    def format(self) -> str:
        return "+".join(sorted(self.formats)) or "empty"


def _square_side(count: int) -> int | None:
    if count < 4:
        return None
    side = math.isqrt(count)
    return side if side >= 2 and side * side == count else None


def parse_numeric_line(tokens, size: tuple[int, int] | None, goal: str) -> tuple[str, Board, str | None, int | None]:
    """Read a line of numbers as a numeric board or a benchmark line.

    Returns (format, board, ident, expected_length)."""
    if not any(t.isdecimal() for t in tokens):  # words, not a board (a bad token among numbers is named by cell)
        word = tokens[0]
        raise BoardError(f"{word!r} is neither W,H,CELLS nor a tile number")
    if size is not None:
        w, h = size
        if len(tokens) == w * h:
            return "numeric", parse_numeric_tokens(tokens, w, h, goal), None, None
        if len(tokens) == w * h + 2:
            return "benchmark", *_benchmark(tokens, w, h, goal)
        raise BoardError(
            f"{len(tokens)} numbers given; size {w}x{h} takes {w * h} "
            f"(numeric) or {w * h + 2} (benchmark: id, length, cells)"
        )
    side = _square_side(len(tokens))
    if side is not None:
        return "numeric", parse_numeric_tokens(tokens, side, side, goal), None, None
    side = _square_side(len(tokens) - 2)
    if side is not None:
        return "benchmark", *_benchmark(tokens, side, side, goal)
    raise BoardError(f"{len(tokens)} numbers fit no square board: give --size WxH")


def _benchmark(tokens, w, h, goal):
    ident, length = tokens[0], tokens[1]
    if not length.isdecimal():
        raise BoardError(f"benchmark line: optimal length {length!r} is not a whole number")
    return parse_numeric_tokens(tokens[2:], w, h, goal), ident, int(length)


def parse_board_text(text: str, size=None, goal: str = "korf") -> tuple[str, Board, str | None, int | None]:
    """One board from one line of text, any single-board format."""
    text = text.strip()
    if not text:
        raise BoardError("empty board")
    if "," in text:
        return "devquiz-line", parse_devquiz_line(text), None, None
    return parse_numeric_line(text.split(), size, goal)


def _is_int_line(line: str, count: int) -> bool:
    toks = line.split()
    return len(toks) == count and all(t.isdecimal() for t in toks)


def _refuse_count_line(source: str, content) -> None:
    """A DevQuiz problem file (a limits line ``L R U D``, then DevQuiz board lines) whose
    second line is not the count: that line is the fault, named (read otherwise, the
    limits line would be taken for a board)."""
    (lineno, line), rest = content[1], content[2:]
    if "," in line or not any("," in text for _, text in rest):
        if "," in line and all("," in text for _, text in content[1:]):
            raise BoardError(
                f"{source}:{lineno}: the count line is missing: a DevQuiz problem file has the L R U D "
                "move limits on line 1, the number of boards on line 2, then the boards"
            )
        return
    raise BoardError(
        f"{source}:{lineno}: {line.strip()!r} is not a count: a DevQuiz problem file has the L R U D "
        "move limits on line 1, the number of boards on line 2, then the boards"
    )


def read_lines(lines, source: str, size=None, goal: str = "korf") -> BoardSet:
    """Parse the lines of a file of boards.  Bad lines become records with an error;
    they never stop the good ones.  ``size``: (width, height) or its text (``"5x5"``),
    for numeric lines whose count alone does not say it."""
    if isinstance(size, str):
        size = parse_size(size)
    out = BoardSet(source)
    numbered = [(i + 1, line.rstrip("\r\n")) for i, line in enumerate(lines)]
    content = [(i, line) for i, line in numbered if line.strip() and not line.lstrip().startswith("#")]
    start = 0
    declared = None
    if len(content) >= 2 and _is_int_line(content[0][1], 4) and not _is_int_line(content[1][1], 1):
        _refuse_count_line(source, content)
    if len(content) >= 2 and _is_int_line(content[0][1], 4) and _is_int_line(content[1][1], 1):
        out.formats.add("devquiz-problems")
        out.limits = tuple(int(t) for t in content[0][1].split())
        declared = (content[1][0], int(content[1][1]))
        start = 2
    for lineno, line in content[start:]:
        rec = Record(lineno, line.strip())
        try:
            fmt, rec.board, rec.ident, rec.expected_length = parse_board_text(line, size, goal)
            if "devquiz-problems" not in out.formats or fmt != "devquiz-line":
                out.formats.add(fmt)
        except BoardError as exc:
            rec.error = str(exc)
        out.records.append(rec)
    if declared is not None and declared[1] != len(out.records):
        out.warnings.append(
            Record(
                declared[0],
                str(declared[1]),
                error=f"the count line says {plural(declared[1], 'board')} but {len(out.records):,} follow",
            )
        )
    return out


def read_file(path: str, size=None, goal: str = "korf") -> BoardSet:
    """Read a file of boards (``-`` for standard input).  A file that cannot be read,
    is not UTF-8 text (the line of the first bad byte is named) or holds no board
    raises BoardError."""
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise BoardError(f"{path}: cannot read: {exc.strerror or exc}") from None
    source = "<stdin>" if path == "-" else path
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BoardError(
            f"{source}:{line}: not a text file of boards (byte 0x{data[exc.start]:02x} at offset "
            f"{exc.start} is not UTF-8)"
        ) from None
    text = text.removeprefix("\ufeff")  # a byte-order mark some editors write: not part of the first line
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise BoardError(f"{source}:{line}: not a text file of boards (a NUL byte)")
    out = read_lines(text.splitlines(), source, size, goal)
    if not out.records:
        raise BoardError(f"{source}: no boards in the file")
    return out


def read_board_arg(arg: str, size=None, goal: str = "korf") -> BoardSet:
    """A command-line BOARD: a file path, ``-`` (standard input), a DevQuiz line or
    a numeric board."""
    if not arg.strip():
        raise BoardError("an empty BOARD: give a board (W,H,CELLS or tile numbers), a file of boards, or - for stdin")
    path = Path(arg)
    if arg == "-" or path.is_file():
        return read_file(arg, size, goal)
    out = BoardSet("<argument>")
    rec = Record(1, arg.strip())
    try:
        fmt, rec.board, rec.ident, rec.expected_length = parse_board_text(arg, size, goal)
        out.formats.add(fmt)
    except BoardError as exc:
        if "," not in arg and not any(t.isdecimal() for t in arg.split()):
            # neither reading fits: say both (a mistyped path is the likelier mistake)
            as_file = "a folder, not a file" if path.is_dir() else "no such file"
            raise BoardError(f"{arg}: not a file ({as_file}) and not a board ({exc})") from None
        rec.error = str(exc)
    out.records.append(rec)
    return out
