"""The board model shared by the builder and the solver.

A *shape* is everything a database depends on: width, height, the wall cells and
the goal arrangement.  A *board* is a shape plus one arrangement of tiles.

Cells are numbered row by row, ``cell = row * width + col``.  An arrangement is a
tuple with one entry per cell: ``BLANK`` (0), ``WALL`` (-1) or a tile id >= 1.
A tile's identity is its id; its home is the cell that holds it in the goal.

Goals:

* ``devquiz``: tile ``i + 1`` on cell ``i`` (printed ``1``-``9``, ``A``-``Z``),
  walls stay, the blank on the last (bottom-right) cell, which must be free.
  A wall cell's label never appears.
* ``korf``: the blank on cell 0, tile ``t`` on cell ``t`` (walls stay; cell 0
  must be free).
* ``custom``: any explicit goal arrangement.

Moves ``L``/``R``/``U``/``D`` move the *blank* one cell left/right/up/down (simulated in
:mod:`pdb_builder.moves`; boards are read by :mod:`pdb_builder.formats`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property

from .errors import BoardError
from .graph import articulation_points

BLANK = 0  # the empty cell in an arrangement
WALL = -1  # a fixed wall cell in an arrangement
LABELS = "123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"  # DevQuiz label of tile id i is LABELS[i-1]
MAX_CELLS = 64  # every set of cells fits one 64-bit mask
GOAL_KINDS = ("devquiz", "korf", "custom")
MOVES = "LRUD"
MOVE_DELTA = {"L": (0, -1), "R": (0, 1), "U": (-1, 0), "D": (1, 0)}  # (drow, dcol) of the blank
OPPOSITE = {"L": "R", "R": "L", "U": "D", "D": "U"}


def _check_size(width: int, height: int) -> None:
    if width < 2 or height < 2:
        raise BoardError(f"size {width}x{height}: width and height must be at least 2")
    if width * height > MAX_CELLS:
        raise BoardError(f"size {width}x{height}: at most {MAX_CELLS} cells are supported")


def parse_size(text: str) -> tuple[int, int]:
    """``"4x4"`` -> ``(4, 4)`` (width, height)."""
    parts = text.lower().replace("*", "x").split("x")
    if len(parts) != 2 or not all(p.strip().isdecimal() for p in parts):
        raise BoardError(f"size {text!r}: expected WxH, e.g. 4x4")
    w, h = int(parts[0]), int(parts[1])
    _check_size(w, h)
    return w, h


@dataclass(frozen=True)
class Shape:
    """Board shape: size, wall cells and goal arrangement (see the module docstring)."""

    width: int
    height: int
    goal: tuple[int, ...]
    goal_kind: str = "custom"

    # -- construction -------------------------------------------------------------
    @classmethod
    def devquiz(cls, width: int, height: int, walls=()) -> Shape:
        _check_size(width, height)
        n = width * height
        walls = frozenset(walls)
        if n - 1 in walls:
            raise BoardError("the bottom-right cell is a wall: the DevQuiz goal puts the blank there")
        goal = tuple(WALL if c in walls else (BLANK if c == n - 1 else c + 1) for c in range(n))
        return cls(width, height, goal, "devquiz")

    @classmethod
    def korf(cls, width: int, height: int, walls=()) -> Shape:
        _check_size(width, height)
        walls = frozenset(walls)
        if 0 in walls:
            raise BoardError("cell 0 is a wall: the Korf goal puts the blank there")
        goal = tuple(WALL if c in walls else c for c in range(width * height))
        return cls(width, height, goal, "korf")

    @classmethod
    def make(cls, width: int, height: int, goal_kind: str, walls=()) -> Shape:
        if goal_kind == "devquiz":
            return cls.devquiz(width, height, walls)
        if goal_kind == "korf":
            return cls.korf(width, height, walls)
        raise BoardError(f"goal {goal_kind!r}: expected devquiz or korf")

    def __post_init__(self):
        _check_size(self.width, self.height)
        if len(self.goal) != self.width * self.height:
            raise BoardError(f"goal has {len(self.goal)} cells, size {self.width}x{self.height} needs {self.n}")
        if self.goal.count(BLANK) != 1:
            raise BoardError("the goal must hold exactly one blank")
        tiles = [t for t in self.goal if t > 0]
        if len(set(tiles)) != len(tiles) or any(t < WALL for t in self.goal):
            raise BoardError("the goal repeats a tile or holds a negative id")
        if self.goal_kind not in GOAL_KINDS:
            raise BoardError(f"goal kind {self.goal_kind!r}: expected one of {', '.join(GOAL_KINDS)}")

    # -- basic facts ----------------------------------------------------------------
    @property
    def n(self) -> int:
        return self.width * self.height

    @property
    def size_text(self) -> str:
        return f"{self.width}x{self.height}"

    @cached_property
    def walls(self) -> frozenset[int]:
        return frozenset(c for c, t in enumerate(self.goal) if t == WALL)

    @cached_property
    def wall_mask(self) -> int:
        return sum(1 << c for c in self.walls)

    @cached_property
    def free_cells(self) -> tuple[int, ...]:
        return tuple(c for c in range(self.n) if c not in self.walls)

    @cached_property
    def goal_blank(self) -> int:
        return self.goal.index(BLANK)

    @cached_property
    def tiles(self) -> tuple[int, ...]:
        """Tile ids of this shape, ascending."""
        return tuple(sorted(t for t in self.goal if t > 0))

    @cached_property
    def home(self) -> dict[int, int]:
        """Tile id -> home cell."""
        return {t: c for c, t in enumerate(self.goal) if t > 0}

    @cached_property
    def max_tile(self) -> int:
        return max(self.tiles, default=0)

    def rc(self, cell: int) -> tuple[int, int]:
        return divmod(cell, self.width)

    # -- graph ------------------------------------------------------------------------
    @cached_property
    def neighbours(self) -> tuple[tuple[int, ...], ...]:
        """Free neighbours of every cell (empty for wall cells), in L R U D order."""
        out = []
        for c in range(self.n):
            if c in self.walls:
                out.append(())
                continue
            r, col = self.rc(c)
            nb = []
            for m in MOVES:
                dr, dc = MOVE_DELTA[m]
                rr, cc = r + dr, col + dc
                if 0 <= rr < self.height and 0 <= cc < self.width and rr * self.width + cc not in self.walls:
                    nb.append(rr * self.width + cc)
            out.append(tuple(nb))
        return tuple(out)

    def move_target(self, cell: int, move: str) -> int | None:
        """Cell the blank reaches from ``cell`` with ``move``; None when off the board."""
        r, c = self.rc(cell)
        dr, dc = MOVE_DELTA[move]
        rr, cc = r + dr, c + dc
        if 0 <= rr < self.height and 0 <= cc < self.width:
            return rr * self.width + cc
        return None

    def component(self, start: int) -> frozenset[int]:
        """Free cells connected to ``start`` through free cells."""
        seen = {start}
        stack = [start]
        while stack:
            c = stack.pop()
            for d in self.neighbours[c]:
                if d not in seen:
                    seen.add(d)
                    stack.append(d)
        return frozenset(seen)

    def cell_distances(self, source: int) -> list[int]:
        """Shortest path length along free cells from ``source`` (-1 where unreachable)."""
        dist = [-1] * self.n
        dist[source] = 0
        frontier = [source]
        while frontier:
            nxt = []
            for c in frontier:
                for d in self.neighbours[c]:
                    if dist[d] < 0:
                        dist[d] = dist[c] + 1
                        nxt.append(d)
            frontier = nxt
        return dist

    @cached_property
    def distances(self) -> tuple[tuple[int, ...], ...]:
        """distances[a][b]: shortest path along free cells (-1 unreachable or a wall)."""
        return tuple(tuple(self.cell_distances(c)) if c not in self.walls else (-1,) * self.n for c in range(self.n))

    def manhattan(self, cells) -> int:
        """Wall-aware Manhattan distance of an arrangement: each tile's shortest
        free path home (admissible: a tile never crosses a wall)."""
        return sum(max(self.distances[self.home[t]][c], 0) for c, t in enumerate(cells) if t > 0)

    @cached_property
    def cut_vertices(self) -> frozenset[int]:
        """Articulation points of the free-cell graph."""
        return self.region_cut_vertices(frozenset(self.free_cells))

    def region_cut_vertices(self, region: frozenset[int]) -> frozenset[int]:
        """Articulation points of the graph induced by ``region``."""
        return articulation_points(self.neighbours, region)

    # -- names and symmetry -------------------------------------------------------------
    @cached_property
    def key(self) -> str:
        """Canonical name usable as a database file stem, e.g. ``4x4-korf`` or
        ``6x5-devquiz-w2000040`` (hex mask of wall cells)."""
        base = f"{self.size_text}-{self.goal_kind}"
        if self.goal_kind == "custom":
            digest = hashlib.sha1(",".join(map(str, self.goal)).encode()).hexdigest()[:12]
            return f"{base}-g{digest}"
        return f"{base}-w{self.wall_mask:x}" if self.walls else base

    @cached_property
    def transpose_map(self) -> tuple[int, ...] | None:
        """Cell -> cell reflected through the main diagonal, for square boards whose
        goal that reflection maps onto itself (tile ids relabelled); else None."""
        if self.width != self.height:
            return None
        w = self.width
        tmap = tuple((c % w) * w + c // w for c in range(self.n))
        # The reflection must send the goal to itself up to tile relabelling:
        # walls onto walls and the blank onto the blank.
        for c in range(self.n):
            if (self.goal[c] == WALL) != (self.goal[tmap[c]] == WALL):
                return None
        if tmap[self.goal_blank] != self.goal_blank:
            return None
        return tmap

    def wall_free(self) -> Shape:
        """The same size and goal kind without walls.  Each wall cell becomes the
        tile whose home it is, so tile ids keep their home cells and a walled board
        is a board of the wall-free shape whose wall tiles sit at home and never move."""
        if self.goal_kind == "custom":
            raise BoardError("a custom goal has no wall-free counterpart")
        return Shape.make(self.width, self.height, self.goal_kind)

    @cached_property
    def wall_free_key(self) -> str | None:
        """The key of the wall-free tables that serve this shape too (its size's, for a
        walled shape with a named goal); None: only its own tables serve it."""
        return self.wall_free().key if self.walls and self.goal_kind != "custom" else None

    def wall_tile(self, cell: int) -> int:
        """Tile id that stands for wall ``cell`` in :meth:`wall_free`."""
        return self.wall_free().goal[cell]

    def describe(self) -> str:
        walls = f", {len(self.walls)} walls" if self.walls else ""
        return f"{self.size_text} {self.goal_kind} goal{walls}"


def label(tile: int) -> str:
    """Printable name of a tile id (DevQuiz labels up to 35, numbers above)."""
    if tile == BLANK:
        return "0"
    if tile == WALL:
        return "="
    return LABELS[tile - 1] if tile <= len(LABELS) else str(tile)


@dataclass(frozen=True)
class Board:
    """A shape and an arrangement of its tiles (validated on construction)."""

    shape: Shape
    cells: tuple[int, ...]

    def __post_init__(self):
        validate_arrangement(self.shape, self.cells)

    @property
    def blank(self) -> int:
        return self.cells.index(BLANK)

    def is_goal(self) -> bool:
        return self.cells == self.shape.goal

    def to_devquiz(self) -> str:
        s = self.shape
        return f"{s.width},{s.height},{''.join(label(t) for t in self.cells)}"

    def to_numeric(self) -> str:
        return " ".join("=" if t == WALL else str(t) for t in self.cells)

    def __str__(self) -> str:
        if self.shape.goal_kind == "devquiz" and self.shape.n <= len(LABELS) + 1:
            return self.to_devquiz()
        return self.to_numeric()

    def grid(self) -> str:
        """Multi-line picture of the board."""
        w = self.shape.width
        width = max(len(label(t)) for t in self.cells)
        rows = []
        for r in range(self.shape.height):
            row = self.cells[r * w : (r + 1) * w]
            rows.append(" ".join(("." if t == BLANK else label(t)).rjust(width) for t in row))
        return "\n".join(rows)


def validate_arrangement(shape: Shape, cells, name=None) -> None:
    """Raise BoardError with a one-line reason when ``cells`` is not an
    arrangement of ``shape``'s tiles (walls in place, each tile once, one blank).
    ``name`` spells a tile in the messages (default :func:`label`; ``str`` for
    numeric input, whose users wrote 16, not G)."""
    name = name or label
    if len(cells) != shape.n:
        raise BoardError(f"{len(cells)} cells given, size {shape.size_text} needs {shape.n}")
    blanks = [c for c, t in enumerate(cells) if t == BLANK]
    if not blanks:
        raise BoardError("no blank (0) on the board")
    if len(blanks) > 1:
        raise BoardError(
            f"{len(blanks)} blanks on the board (cells {', '.join(map(str, blanks))}); exactly one is needed"
        )
    seen: dict[int, int] = {}
    for c, t in enumerate(cells):
        goal_t = shape.goal[c]
        if (t == WALL) != (goal_t == WALL):
            if t == WALL:
                raise BoardError(f"cell {c} is a wall here but not in the shape")
            raise BoardError(f"cell {c} is a wall in the shape but holds {name(t)}")
        if t <= 0:
            continue
        if t in seen:
            missing = [name(m) for m in shape.tiles if m not in cells]
            gone = (
                f"; tile {' '.join(missing)} is missing"
                if len(missing) == 1
                else (f"; tiles {' '.join(missing)} are missing" if missing else "")
            )
            raise BoardError(f"tile {name(t)} appears twice (cells {seen[t]} and {c}){gone}")
        seen[t] = c
        if t not in shape.home:
            owner = _wall_owner(shape, t)
            if owner is not None:
                raise BoardError(f"tile {name(t)} at cell {c} belongs to cell {owner}, which is a wall")
            raise BoardError(f"tile {name(t)} at cell {c} is not a tile of this {shape.size_text} board")
    # Right count, one blank, no repeat, no foreign tile: no tile can be missing.
    assert len(seen) == len(shape.tiles)


def _wall_owner(shape: Shape, tile: int) -> int | None:
    """The wall cell whose goal label ``tile`` would be, if any."""
    if shape.goal_kind == "custom":
        return None
    for c in shape.walls:
        if shape.wall_tile(c) == tile:
            return c
    return None
