"""Pictures of a board and a move string (``slidepdb show``): one frame per position, the
tile that just moved marked; an animated GIF, or a PNG strip of the frames in rows.

Drawn with Pillow (which matplotlib, the ``plot`` extra, brings along), loaded only when
a picture is asked for."""

from __future__ import annotations

from pathlib import Path

from .board import BLANK, MOVE_DELTA, WALL, Board, label
from .errors import BadMovesError, BoardError, SlidepdbError

CELL = 40  # pixels a cell
GAP = 12  # pixels between frames of a strip, and around them
PER_ROW = 10  # frames a row of a strip
FRAME_MS = 350  # milliseconds a GIF frame shows (the first and the last: three times as long)
COLOURS = {"tile": (238, 214, 160), "moved": (240, 160, 90), "wall": (70, 70, 70), "blank": (255, 255, 255)}
FORMATS = (".gif", ".png")


def _pil():
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError:
        raise SlidepdbError(
            "slidepdb show needs Pillow: pip install 'slidepdb[plot]' (or pip install pillow)"
        ) from None
    return Image, ImageDraw, ImageFont


def positions(board: Board, moves: str) -> list[tuple[tuple[int, ...], int | None]]:
    """Every arrangement from ``board`` along ``moves``, each with the cell of the tile
    that just moved (None for the first); a move off the board or into a wall raises
    :class:`~pdb_builder.errors.BadMovesError` naming it."""
    shape = board.shape
    cells, blank = list(board.cells), board.blank
    out = [(tuple(cells), None)]
    for k, m in enumerate(moves):
        if m not in MOVE_DELTA:
            raise BadMovesError(f"move {k + 1} {m!r}: not one of L, R, U, D")
        target = shape.move_target(blank, m)
        if target is None or cells[target] == WALL:
            raise BadMovesError(f"move {k + 1} {m!r}: the blank at cell {blank} cannot move there")
        cells[blank], cells[target] = cells[target], BLANK
        out.append((tuple(cells), blank))
        blank = target
    return out


def frames(board: Board, moves: str) -> list:
    """One Pillow image a position (:func:`positions`)."""
    Image, ImageDraw, ImageFont = _pil()
    w, h = board.shape.width, board.shape.height
    font = ImageFont.load_default()
    out = []
    for cells, moved in positions(board, moves):
        img = Image.new("RGB", (w * CELL + 1, h * CELL + 1), COLOURS["blank"])
        draw = ImageDraw.Draw(img)
        for c, t in enumerate(cells):
            x, y = (c % w) * CELL, (c // w) * CELL
            kind = "wall" if t == WALL else "blank" if t == BLANK else "moved" if c == moved else "tile"
            draw.rectangle([x, y, x + CELL, y + CELL], fill=COLOURS[kind], outline=(40, 40, 40))
            if t not in (WALL, BLANK):
                text = label(t) if board.shape.goal_kind == "devquiz" else str(t)
                left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
                draw.text(
                    (x + (CELL - (right - left)) / 2 - left, y + (CELL - (bottom - top)) / 2 - top),
                    text,
                    fill=(0, 0, 0),
                    font=font,
                )
        out.append(img)
    return out


def write_picture(board: Board, moves: str, path) -> int:
    """Write ``board`` along ``moves`` to ``path``: an animated GIF (``.gif``) or a strip
    of frames, :data:`PER_ROW` a row (``.png``).  Returns the frames written."""
    Image, _, _ = _pil()
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise BoardError(f"{path}: name a file ending in .gif (animated) or .png (a strip of frames)")
    shots = frames(board, moves)
    if path.suffix.lower() == ".gif":
        times = [FRAME_MS] * len(shots)
        times[0] = times[-1] = 3 * FRAME_MS
        shots[0].save(path, save_all=True, append_images=shots[1:], duration=times, loop=0)
        return len(shots)
    fw, fh = shots[0].size
    cols = min(len(shots), PER_ROW)
    rows = -(-len(shots) // PER_ROW)
    strip = Image.new("RGB", (GAP + cols * (fw + GAP), GAP + rows * (fh + GAP)), (255, 255, 255))
    for k, shot in enumerate(shots):
        strip.paste(shot, (GAP + (k % PER_ROW) * (fw + GAP), GAP + (k // PER_ROW) * (fh + GAP)))
    strip.save(path)
    return len(shots)
