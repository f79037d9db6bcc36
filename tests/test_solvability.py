import itertools
import random

from pdb_builder.board import Board, Shape
from pdb_builder.formats import parse_devquiz_line, read_lines
from pdb_builder.moves import check_moves
from pdb_builder.solvability import PermGroup, decide

from .conftest import data_file
from .naive import bfs_distances, layouts


def arrangements(shape: Shape, rng, count):
    """``count`` random arrangements of the shape's tiles (all when there are few)."""
    free = list(shape.free_cells)
    items = [shape.goal[c] for c in free]
    if len(free) <= 6:
        perms = list(itertools.permutations(items))
    else:
        perms = []
        for _ in range(count):
            rng.shuffle(items)
            perms.append(tuple(items))
    for p in perms:
        cells = list(shape.goal)
        for c, t in zip(free, p):
            cells[c] = t
        yield tuple(cells)


def check_layouts(shapes, samples, seed=1):
    rng = random.Random(seed)
    counts = {True: 0, False: 0}
    for shape in shapes:
        reachable = bfs_distances(shape)
        for cells in arrangements(shape, rng, samples):
            verdict = decide(Board(shape, cells))
            assert verdict.solvable == (cells in reachable), (shape.key, cells, verdict)
            counts[verdict.solvable] += 1
        # every reachable arrangement is judged solvable, sampled
        for cells in rng.sample(sorted(reachable), min(50, len(reachable))):
            assert decide(Board(shape, cells)).solvable
    assert counts[True] and counts[False]
    return counts


def test_every_3x3_layout_matches_bfs():
    shapes = list(layouts(3, 3))
    assert len(shapes) == 100  # connected free cells, bottom-right cell free
    check_layouts(shapes, samples=40)


def test_every_2x4_layout_matches_bfs():
    check_layouts(list(layouts(2, 4)) + list(layouts(4, 2)), samples=60)


def test_korf_goal_layouts_match_bfs():
    check_layouts(list(layouts(3, 3, goal_kind="korf", max_walls=3)), samples=30)


def test_every_3x4_layout_with_three_or_more_walls_matches_bfs():
    shapes = list(layouts(3, 4, min_walls=3)) + list(layouts(4, 3, min_walls=3))
    check_layouts(shapes, samples=100)


def test_stranded_pocket():
    # cell 2 is cut off by walls on cells 1 and 5; its tile must be at home
    shape = Shape.devquiz(3, 3, walls=[1, 5])
    good = list(shape.goal)
    good[7], good[8] = good[8], good[7]  # blank one step left of home
    assert decide(Board(shape, tuple(good))).solvable
    bad = list(shape.goal)
    bad[0], bad[2] = bad[2], bad[0]
    v = decide(Board(shape, tuple(bad)))
    assert not v.solvable and v.method == "stranded" and "stranded" in v.reason


def test_swapped_tiles_on_2_connected_layouts_are_unsolvable():
    rng = random.Random(3)
    bs = read_lines(data_file("devquiz2011", "problems.txt").read_text().splitlines(), "p")
    two_connected = [r.board for r in bs.records if not r.board.shape.cut_vertices][:400]
    for b in two_connected:
        cells = list(b.cells)
        tiles = [c for c, t in enumerate(cells) if t > 0]
        i, j = rng.sample(tiles, 2)
        cells[i], cells[j] = cells[j], cells[i]
        v = decide(Board(b.shape, tuple(cells)))
        if v.method == "parity":
            assert not v.solvable


def test_every_devquiz_board_is_solvable():
    bs = read_lines(data_file("devquiz2011", "problems.txt").read_text().splitlines(), "p")
    verdicts = [decide(r.board) for r in bs.records]
    assert all(v.solvable for v in verdicts)
    assert sum(v.method == "group" for v in verdicts) == 302


def test_perm_group_orders():
    n = 6
    cyc = tuple(list(range(1, n)) + [0])
    swap = (1, 0) + tuple(range(2, n))
    assert PermGroup([cyc, swap], n).order() == 720
    assert PermGroup([cyc], n).order() == 6
    three = (1, 2, 0) + tuple(range(3, n))
    g = PermGroup([three, (0, 2, 3, 4, 5, 1)], n)
    assert g.order() == 360 and swap not in g and three in g


def test_ring_board_rotations_only():
    # a 3x3 ring (centre wall): the tiles can only rotate around it
    shape = Shape.devquiz(3, 3, walls=[4])
    rotated = Board(shape, check_moves(Board(shape, shape.goal), "UULLDDRR").final)  # one lap of the blank
    assert decide(rotated).solvable and decide(rotated).method == "group"
    swapped = parse_devquiz_line("3,3,2134=6780")  # two tiles exchanged: impossible on a ring
    assert not decide(swapped).solvable


def test_without_the_group_a_verdict_is_left_open_only_where_the_group_decides():
    """``decide(board, group=False)`` (what a run says of boards the budget never
    started) gives the full verdict wherever it needs no walk group, and None exactly
    where the full verdict is the group's; ``check_record`` then leaves it undecided."""
    from pdb_builder.formats import Record
    from solver.api import check_record

    rng = random.Random(7)
    methods = set()
    for shape in list(layouts(3, 3, max_walls=2)):
        for cells in itertools.islice(arrangements(shape, rng, 8), 8):
            board = Board(shape, cells)
            full, cheap = decide(board), decide(board, group=False)
            methods.add(full.method)
            assert (cheap is None) == (full.method == "group") and (cheap is None or cheap == full), (shape.key, cells)
            if cheap is None:
                out = check_record(Record(0, "b", board, None), group=False)
                assert out.status == "valid" and out.solvable is None
    assert {"group", "parity"} <= methods
