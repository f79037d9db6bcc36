"""``slidepdb show``: a picture of a board along its moves, read back from the file
written: one frame a position, the last one the goal; the moves simulated apart."""

from click.testing import CliRunner
from PIL import Image

from pdb_builder.board import WALL
from pdb_builder.formats import read_board_arg
from pdb_builder.picture import CELL, GAP, PER_ROW, positions
from solver.cli import main

from .naive import distance


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


BOARD = "4,4,01235=749E=8ADFC"  # two walls; 14 moves from the goal


def test_a_gif_has_a_frame_a_position_and_ends_on_the_goal(tmp_path):
    board = read_board_arg(BOARD).records[0].board
    out = tmp_path / "b.gif"
    r = run("show", BOARD, "--out", out, "--db-dir", tmp_path / "none")  # no tables: solved on Manhattan
    assert r.exit_code == 0, r.output
    length = distance(board.shape, board.cells)
    assert f"{length + 1} frames" in r.output and "do not reach" not in r.output
    with Image.open(out) as img:
        assert img.n_frames == length + 1 and img.size == (4 * CELL + 1, 4 * CELL + 1)
        img.seek(img.n_frames - 1)
        last = img.convert("RGB")
    blank = board.shape.goal.index(0)
    centre = ((blank % 4) * CELL + CELL // 2, (blank // 4) * CELL + CELL // 2)
    assert last.getpixel(centre) == (255, 255, 255)  # the goal's blank, bottom right


def test_a_png_strip_of_given_moves_and_what_is_wrong_with_them(tmp_path):
    board = read_board_arg("3,3,1=3456708").records[0].board
    cells = [c for c, _ in positions(board, "RL")]
    assert cells[1][8] == 0 and cells[2] == board.cells and WALL in cells[0]
    out = tmp_path / "s.png"
    r = run("show", "3,3,1=3456708", "RL", "--out", out)
    assert r.exit_code == 0 and "3 frames; the moves do not reach the goal" in r.output
    with Image.open(out) as img:
        assert img.size == (GAP + 3 * (3 * CELL + 1 + GAP), GAP + (3 * CELL + 1 + GAP))
    many = tmp_path / "m.png"
    assert run("show", "3,3,1=3456708", "RL" * 6, "--out", many).exit_code == 0
    with Image.open(many) as img:  # 13 frames: two rows
        assert img.size[1] == GAP + 2 * (3 * CELL + 1 + GAP) and img.size[0] == GAP + PER_ROW * (3 * CELL + 1 + GAP)
    bad = tmp_path / "bad.png"
    r = run("show", "3,3,1=3456708", "RD", "--out", bad)
    assert r.exit_code == 5 and "move 2 'D'" in r.output and not bad.exists()
    r = run("show", "3,3,1=3456708", "R", "--out", tmp_path / "x.jpg")
    assert r.exit_code == 2 and ".gif" in r.output


def test_a_file_of_several_boards_is_refused(tmp_path):
    f = tmp_path / "p.txt"
    f.write_text("3,3,123456708\n3,3,123405786\n")
    r = run("show", f, "--out", tmp_path / "a.gif")
    assert r.exit_code == 2 and "show draws one" in r.output
