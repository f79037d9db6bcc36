import pytest

from pdb_builder.board import BLANK, WALL, Board, Shape, parse_size
from pdb_builder.errors import BoardError
from pdb_builder.formats import parse_devquiz_line, parse_numeric_tokens, read_board_arg, read_lines
from pdb_builder.moves import check_moves

from .conftest import data_file


def test_devquiz_goal_and_round_trip():
    b = parse_devquiz_line("3,3,1=3456780")
    assert b.shape.goal == (1, WALL, 3, 4, 5, 6, 7, 8, BLANK)
    assert b.is_goal() and b.to_devquiz() == "3,3,1=3456780"
    assert b.shape.walls == {1} and b.shape.key == "3x3-devquiz-w2"


def test_korf_goal_numeric_round_trip():
    b = parse_numeric_tokens("1 0 2 3 4 5 6 7 8 9 10 11 12 13 14 15".split(), 4, 4, "korf")
    assert b.shape.goal == tuple(range(16)) and b.shape.goal_kind == "korf"
    assert b.to_numeric() == "1 0 2 3 4 5 6 7 8 9 10 11 12 13 14 15"
    again = read_board_arg(b.to_numeric()).records[0].board
    assert again == b


def test_numeric_walls_and_devquiz_goal():
    b = parse_numeric_tokens("1 = 3 4 0 6 7 8 5".split(), 3, 3, "devquiz")
    assert b.shape.walls == {1} and b.cells[4] == BLANK
    assert read_board_arg(b.to_numeric(), size=(3, 3), goal="devquiz").records[0].board == b


def test_benchmark_line_detected():
    rec = read_board_arg("7 52 1 0 2 3 4 5 6 7 8 9 10 11 12 13 14 15").records[0]
    assert rec.error is None and rec.ident == "7" and rec.expected_length == 52
    assert rec.board.shape.size_text == "4x4"


def test_problem_file_keeps_line_numbers():
    lines = ["10 10 10 10", "3", "3,3,123456780", "3,3,12345678", "# note", "3,3,123456708"]
    bs = read_lines(lines, "p.txt")
    assert bs.limits == (10, 10, 10, 10) and bs.format == "devquiz-problems"
    assert [r.index for r in bs.records] == [3, 4, 6]
    assert bs.records[1].error and bs.records[0].board and bs.records[2].board
    assert not bs.warnings


def test_count_line_mismatch_reported():
    bs = read_lines(["1 1 1 1", "5", "3,3,123456780"], "p.txt")
    assert bs.warnings and "count line says 5" in bs.warnings[0].error


def test_shape_facts():
    s = Shape.devquiz(4, 3, walls=[5])
    assert s.neighbours[1] == (0, 2)  # cell 5 below is a wall
    assert s.neighbours[5] == ()
    assert s.free_cells == tuple(c for c in range(12) if c != 5)
    assert Shape.korf(4, 4).transpose_map[1] == 4
    assert Shape.devquiz(3, 4).transpose_map is None
    assert Shape.devquiz(4, 4, [1]).transpose_map is None  # wall 1 reflects to cell 4, not a wall
    assert Shape.devquiz(4, 4, [1, 4]).transpose_map is not None
    assert Shape.devquiz(3, 3, [1]).wall_free().goal[1] == 2
    assert Shape.devquiz(5, 3, [2, 7]).cut_vertices == {11, 12, 13}  # one bottleneck row
    assert not Shape.devquiz(4, 4).cut_vertices


@pytest.mark.parametrize(
    "text, message",
    [
        ("3,3,12345678", "8 cells given, size 3x3 needs 9"),
        ("7,3,123456789ABCDEFGHIJK0", "the DevQuiz format takes 2 to 6 each way"),
        ("3,x,123456780", "width and height must be whole numbers"),
        ("3,3,12345678", "needs 9"),
        ("3,3,1234567#0", "unknown character '#' at cell 7"),
        ("3,3,123456770", "tile 7 appears twice"),
        ("3,3,123456700", "2 blanks on the board"),
        ("3,3,123456789", "no blank"),
        ("3,3,1=3456720", "tile 2 at cell 7 belongs to cell 1, which is a wall"),
        ("3,3,12345678=", "the bottom-right cell is a wall"),
        ("3,3", "expected W,H,CELLS"),
    ],
)
def test_devquiz_errors(text, message):
    with pytest.raises(BoardError, match=message.replace("(", r"\(")):
        parse_devquiz_line(text)


def test_missing_label_named_with_duplicate():
    with pytest.raises(BoardError, match="tile 7 appears twice .*; tile 8 is missing"):
        Board(Shape.devquiz(3, 3), (1, 2, 3, 4, 5, 6, 7, 7, 0))


@pytest.mark.parametrize(
    "tokens, size, message",
    [
        ("1 2 3", None, "3 numbers fit no square board"),
        ("1 2 x 0", None, "unknown token 'x' at cell 2"),
        ("0 1 2 3 4 5", (3, 3), "6 numbers given"),
    ],
)
def test_numeric_errors(tokens, size, message):
    rec = read_board_arg(tokens, size=size).records[0]
    assert message in rec.error


def test_bad_size_text():
    with pytest.raises(BoardError):
        parse_size("4by4")
    with pytest.raises(BoardError, match="at most 64 cells"):
        parse_size("9x8")


def test_move_rules():
    b = parse_devquiz_line("3,3,12345=708")
    # blank on cell 7, wall on cell 5
    assert check_moves(b, "R").ok
    r = check_moves(b, "D")
    assert not r.legal and r.index == 0 and "leave the board" in r.reason
    r = check_moves(b, "RU")
    assert not r.legal and r.index == 1 and "wall cell 5" in r.reason
    r = check_moves(b, "LX")
    assert not r.legal and r.index == 1 and "unknown letter" in r.reason
    r = check_moves(b, "L")
    assert r.legal and not r.ok and "short of the goal" in r.reason
    assert check_moves(b, "LRR").ok


def test_devquiz_file_parses_and_peer_answers_simulate():
    bs = read_lines(data_file("devquiz2011", "problems.txt").read_text().splitlines(), "problems.txt")
    assert len(bs.records) == 5000 and not bs.warnings and all(r.error is None for r in bs.records)
    assert bs.limits == (72187, 81749, 72303, 81778)
    assert bs.records[0].index == 3
    answers = data_file("devquiz2011", "peer_answers", "koron.txt").read_text().split("\n")
    assert all(check_moves(r.board, a.strip()).ok for r, a in zip(bs.records, answers))
    walls = sum(1 for r in bs.records if r.board.shape.walls)
    assert walls == 3817
    assert len({r.board.shape.key for r in bs.records}) == 2434  # the 16 wall-free sizes count as layouts
    # "302 boards where parity alone does not decide": 294 with a cut vertex, 8 rings
    assert sum(1 for r in bs.records if r.board.shape.cut_vertices) == 294
