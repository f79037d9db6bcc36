#!/usr/bin/env python3
"""Partial and instance tables of a board's layout measured before building them into the
product: larger patterns than the run's cut, holding only part of their placements.

    .venv/bin/python scripts/bench_partial_tables.py --lines 18 --dir D [--sizes 7-7-7-4] \\
        [--entries 6e7] [--disk 16e9] [--greedy 8G] [--node-limit 400000000] [--results FILE]

For each board the script builds into ``D`` (one folder a side, the run's cut linked into each):

* ``run``: the layout's cut as ``slidepdb run``'s full pass builds it (512M, zero-aware);
* ``greedy`` (with ``--greedy MEM``): the run's and a cut into as many of the largest
  patterns MEM allows as the tiles give (a round's filled cut: 6-6-6-6-1 under 8G);
* ``partial``: the run's and a cut into the patterns ``--sizes``, each a partial table
  (Anderson, Holte & Schaeffer 2007): a breadth-first search from the goal over the
  pattern's placements (a tile moves onto a free cell no other tile of the pattern holds;
  the blank is ignored) kept in a hash of at most ``--entries`` placements, to the last
  radius R that fits, every other placement valued R + 1.  That is admissible: a placement
  not reached within R moves is at least R + 1 moves from the goal.  The script writes it
  as an ordinary one-byte table (R + 1 where the hash holds nothing) so that the solver's
  search reads it unchanged; the file is as large as a full table of those patterns (a
  board whose partial tables would take more than ``--disk`` bytes has no partial side).

Each board is searched on one thread on each side up to ``--node-limit`` nodes; printed:
the build seconds, the estimate at the root, the bound reached, the nodes of the last
iteration every side completed against the run's, and whether each side proved it (every
answer is simulated).  Then, for an instance table (Zhou & Hansen 2004; Felner & Adler
2005), per pattern: its exact value at the board, the slack a proven length L leaves it
(L less the patterns' exact values at the board), and how many placements the
search from the board's placement bounded by that slack and the tiles' distances home
meets, layer by layer while the next layer, grown as the last did, keeps it within
``--entries``: the placements an instance table would have to sort out.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numba as nb
import numpy as np
from bench_layout_cuts import _link_into, searched
from benchdata import DATA, ROOT, run_keeping_tables

sys.path.insert(0, str(ROOT))
from pdb_builder.packed import compact_neighbours  # noqa: E402
from pdb_builder.ranking import rank_kernel  # noqa: E402

_MUL = np.int64(-7046029254386353131)  # Fibonacci hashing of a placement's key


@nb.njit
def _slot(keys, key, mask):
    """The hash slot holding ``key``, or ``-(slot + 2)`` where it was just added."""
    p = ((key * _MUL) >> np.int64(20)) & mask
    while True:
        kk = keys[p]
        if kk == key:
            return p
        if kk == -1:
            keys[p] = key
            return -(p + 2)
        p = (p + 1) & mask


@nb.njit
def _find(keys, key, mask):
    """The hash slot holding ``key``, or -1."""
    p = ((key * _MUL) >> np.int64(20)) & mask
    while keys[p] != -1:
        if keys[p] == key:
            return p
        p = (p + 1) & mask
    return -1


@nb.njit
def _layer(front, keys, vals, mask, nbr, deg, k, n, depth, out, md, bound):
    """The placements one move from ``front`` not in the hash yet, valued ``depth`` and
    written to ``out``; with ``bound`` >= 0 only those whose depth plus the tiles'
    distances home (``md[j, cell]``) is at most ``bound``.  Returns how many, or one more
    than ``out`` holds where the layer does not fit (it stops there)."""
    pw = np.empty(k, np.int64)
    pw[0] = 1
    for j in range(1, k):
        pw[j] = pw[j - 1] * n
    pos = np.empty(k, np.int64)
    count = 0
    for f in range(front.shape[0]):
        key = front[f]
        x = key
        occ = 0
        dist = 0
        for j in range(k):
            pos[j] = x % n
            x //= n
            occ |= 1 << pos[j]
            dist += md[j, pos[j]]
        for j in range(k):
            c = pos[j]
            for e in range(deg[c]):
                b = nbr[c, e]
                if (occ >> b) & 1:
                    continue
                if bound >= 0 and depth + dist - md[j, c] + md[j, b] > bound:
                    continue
                q = _slot(keys, key + (b - c) * pw[j], mask)
                if q < -1:
                    vals[-q - 2] = depth
                    if count == out.shape[0]:
                        return count + 1
                    out[count] = key + (b - c) * pw[j]
                    count += 1
    return count


@nb.njit
def _fill(keys, vals, k, n, w, table):
    place = np.empty(k, np.int64)
    for p in range(keys.shape[0]):
        x = keys[p]
        if x < 0:
            continue
        for j in range(k):
            place[j] = x % n
            x //= n
        table[rank_kernel(place, k, w)] = vals[p]


class Pattern:
    """A pattern's moves over the layout's free cells and its placements as keys (one
    base-n digit a tile)."""

    def __init__(self, shape, tiles, board):
        free = list(shape.free_cells)
        idx = {c: j for j, c in enumerate(free)}
        self.n, self.k = len(free), len(tiles)
        self.nbr, self.deg = compact_neighbours(shape)
        where = {t: c for c, t in enumerate(board.cells) if t > 0}
        self.goal = sum(idx[shape.home[t]] * self.n**j for j, t in enumerate(tiles))
        self.start = sum(idx[where[t]] * self.n**j for j, t in enumerate(tiles))
        self.md = np.zeros((self.k, self.n), np.int64)
        for j, t in enumerate(tiles):
            dist = shape.cell_distances(shape.home[t])
            for c in free:
                self.md[j, idx[c]] = dist[c]
        self.no_md = np.zeros_like(self.md)

    def search(self, root, entries, bound=-1, until=None):
        """Layers from ``root`` while the hash holds at most ``entries``: (keys, values,
        layer sizes, whether every layer fitted).  ``until``: stop once that key is reached."""
        size = 1 << int(2 * entries).bit_length()
        keys = np.full(size, -1, np.int64)
        vals = np.zeros(size, np.uint8)
        _slot(keys, root, size - 1)
        front, out, layers = np.array([root], np.int64), np.empty(entries, np.int64), [1]
        md = self.md if bound >= 0 else self.no_md
        while len(front):
            if until is not None and _find(keys, until, size - 1) >= 0:
                break
            grow = layers[-1] / layers[-2] if len(layers) > 1 else 1.0
            if sum(layers) + layers[-1] * grow > entries:
                return keys, vals, layers, False
            count = _layer(front, keys, vals, size - 1, self.nbr, self.deg, self.k, self.n, len(layers), out, md, bound)
            if count > len(out):
                return keys, vals, layers, False
            layers.append(count)
            front = out[:count].copy()
        while layers and layers[-1] == 0:
            layers.pop()
        return keys, vals, layers, True

    def value_at_board(self, entries):
        """The pattern's exact cost from the board's placement, found by searches from it
        bounded by the tiles' distances home, the bound raised by two until one reaches the goal."""
        bound = sum(int(self.md[j, (self.start // self.n**j) % self.n]) for j in range(self.k))
        while True:
            keys, vals, _, fitted = self.search(self.start, entries, bound, until=self.goal)
            p = _find(keys, self.goal, len(keys) - 1)
            if p >= 0:
                return int(vals[p])
            if not fitted:
                return None
            bound += 2


def partial_table(shape, tiles, board, entries):
    from pdb_builder.entries import num_placements, weights
    from pdb_builder.make.building import TableStats, histogram_mean_max

    t0 = time.perf_counter()
    pat = Pattern(shape, tiles, board)
    keys, vals, layers, _ = pat.search(pat.goal, entries)
    radius, held = len(layers) - 1, sum(layers)
    total = num_placements(pat.n, pat.k)
    table = np.full(total, radius + 1, np.uint8)
    _fill(keys, vals, pat.k, pat.n, weights(pat.n, pat.k), table)
    hist = np.zeros(256, np.int64)
    hist[: len(layers)] = layers
    hist[radius + 1] += total - held
    seconds = time.perf_counter() - t0
    stats = TableStats(tuple(tiles), total, seconds, layers, [int(x) for x in hist], *histogram_mean_max(hist))
    print(f"  {tiles}: radius {radius}, {held:,} of {total:,} placements, {seconds:.1f} s", file=sys.stderr, flush=True)
    return table, stats


def build_sides(a, rec, root: Path) -> dict:
    from pdb_builder.entries import num_placements
    from pdb_builder.make.building import build_pdb, layout_partitions
    from pdb_builder.make.writing import write_pdb
    from pdb_builder.options import byte_count
    from pdb_builder.patterns import greedy_sizes, named_partition
    from pdb_builder.storage import pdb_filename

    shape, built = rec.board.shape, {}
    sides = ["run"]
    if a.sizes != "none":
        part = named_partition(shape, a.sizes)
        size = sum(num_placements(len(shape.free_cells), len(g)) for g in part.groups)
        if size <= a.disk:
            sides.append("partial")
        else:
            print(f"line {rec.index}: no partial side, its tables would take {size:,} bytes", file=sys.stderr)
    sides += ["greedy"] if a.greedy else []
    folders = {s: root / str(rec.index) / s for s in sides}
    for side, folder in folders.items():
        t0 = time.perf_counter()
        status = "built"
        if side == "run":
            part = layout_partitions(shape, byte_count("memory", "512M"), 1)[0]
            rep = build_pdb(shape, part, folder, two_bit=False, zero_aware=True, threads=a.threads)
            for other in sides[1:]:
                _link_into(folders[other], [Path(rep.path)])
            status = rep.status
        elif side == "greedy":
            part = named_partition(shape, "-".join(map(str, greedy_sizes(shape, byte_count("memory", a.greedy)))))
            status = build_pdb(shape, part, folder, two_bit=False, zero_aware=True, threads=a.threads).status
        else:
            part = named_partition(shape, a.sizes)
            name = f"{a.sizes}.partial"
            tables = (partial_table(shape, g, rec.board, a.entries) for g in part.groups)
            write_pdb(folder / pdb_filename(shape, name), shape, name, tables, two_bit=False, threads=a.threads)
        seconds = round(time.perf_counter() - t0, 1) if status != "skipped" else None  # None: built before
        built[side] = {"partition": part.name, "seconds": seconds}
        print(f"line {rec.index} {side}: {part.name}, {seconds} s", file=sys.stderr, flush=True)
    return {"folders": folders, "built": built}


def search_sides(a, rec, folders: dict) -> dict:
    out = {side: searched(rec, folder, side, a.node_limit) for side, folder in folders.items()}
    lengths = {s["length"] for s in out.values() if s["proven"]}
    if len(lengths) > 1:
        raise SystemExit(f"line {rec.index}: proven lengths differ: {sorted(lengths)}")
    return out


def forecast(run: dict, length: int) -> float | None:
    """What ``slidepdb run`` forecasts the proof of ``length`` to cost on the run's tables
    (seconds of one thread, :func:`solver.run.forecast.proof_seconds`): 0 where they proved it."""
    from solver.outcome import Outcome
    from solver.run.forecast import proof_seconds

    o = Outcome(
        0, "", "solved", length=length, lower_bound=run["bound"], optimal=run["proven"],
        iterations=run["iterations"], unfinished=run["unfinished"],
    )  # fmt: skip
    return proof_seconds(o)


def instance_sizes(a, rec, length: int) -> list:
    """Per pattern of the cut ``--sizes`` that holds every tile of the board (none where
    it leaves tiles out: their moves would count in every pattern's slack): (tiles, its
    exact cost at the board, its slack, placements met, whether every layer fitted, layers)."""
    from pdb_builder.patterns import named_partition

    groups = named_partition(rec.board.shape, a.sizes).groups
    if sum(map(len, groups)) < len(rec.board.shape.tiles):
        print(f"line {rec.index}: {a.sizes} leaves tiles out; no instance rows", file=sys.stderr)
        return []
    pats = [Pattern(rec.board.shape, g, rec.board) for g in groups]
    values = [p.value_at_board(a.entries) for p in pats]
    if None in values:
        return []
    slack = length - sum(values)
    rows = []
    for g, p, v in zip(groups, pats, values):
        _, _, layers, fitted = p.search(p.start, a.entries, bound=v + slack)
        rows.append((g, v, slack, sum(layers), fitted, len(layers) - 1))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problems", default=str(DATA / "devquiz2011" / "hard.txt"))
    ap.add_argument("--lines", type=int, nargs="+", required=True, help="these boards (as reports number them)")
    ap.add_argument("--dir", required=True, help="a scratch folder for every side's tables")
    ap.add_argument("--sizes", default="7-7-7-4", help="the partial cut's pattern sizes ('none': no partial side)")
    ap.add_argument("--entries", type=float, default=6e7, help="most placements a pattern's hash holds")
    ap.add_argument("--greedy", default=None, help="also the cut into the largest patterns this memory allows")
    ap.add_argument("--disk", type=float, default=16e9, help="most bytes a partial side's tables may take")
    ap.add_argument("--node-limit", type=int, default=400_000_000)
    ap.add_argument("--threads", type=int, default=2, help="build threads")
    a = ap.parse_args()
    from pdb_builder.formats import read_file

    a.entries, a.disk = int(a.entries), int(a.disk)
    by_line = {r.index: r for r in read_file(a.problems).records if r.board is not None}
    print(f"\n{a.problems}, one thread a search, node limit {a.node_limit:,}, partial cut {a.sizes}\n")
    head = "| board | side | cut | build s | h0 | bound | proven | search s"
    print(head + " | last iteration all completed | its nodes | of the run's |")
    print("|---:|---|---|---:|---:|---:|---|---:|---:|---:|---:|")
    found, costs = [], []
    for i in a.lines:
        rec = by_line[i]
        sides = build_sides(a, rec, Path(a.dir))
        res = search_sides(a, rec, sides["folders"])
        common = set.intersection(*({it[0] for it in r["iterations"]} for r in res.values()))
        t = max(common) if common else None
        base = next((n for th, n, _ in res["run"]["iterations"] if th == t), None)
        for side, r in res.items():
            n = next((n for th, n, _ in r["iterations"] if th == t), None)
            b = sides["built"][side]
            proven = f"yes, {r['length']}" if r["proven"] else "no"
            last = f"{t} | {n:,} | {n / base:.3f}" if t is not None else "- | - | -"
            built_s = "built before" if b["seconds"] is None else b["seconds"]
            cells = [i, side, b["partition"], built_s, r["h0"], r["bound"], proven, r["seconds"], last]
            print("| " + " | ".join(map(str, cells)) + " |")
        lengths = [r["length"] for r in res.values() if r["proven"]]
        if lengths:
            found.append((i, rec, lengths[0]))
            costs.append((i, forecast(res["run"], lengths[0]), sides["built"], res))
    if costs:
        print("\n| board | the run's forecast of the proof, s | side | build s + search s to proof | of the forecast |")
        print("|---:|---:|---|---:|---:|")
        for i, f, built, res in costs:
            for side, r in res.items():
                if r["proven"] and f is not None and built[side]["seconds"] is not None:
                    total = built[side]["seconds"] + r["seconds"]
                    share = f"{total / f:.3f}" if f > 0 else "- (the run's tables prove it)"
                    print(f"| {i} | {f:.1f} | {side} | {total:.1f} | {share} |")
    if found and a.sizes != "none":
        print("\n| board | pattern | exact value at the board | slack | placements met | within |")
        print("|---:|---|---:|---:|---:|---|")
        for i, rec, length in found:
            for tiles, v, slack, met, fitted, depth in instance_sizes(a, rec, length):
                within = f"all, {depth} layers" if fitted else f"{depth} layers; the next would pass {a.entries:,}"
                print(f"| {i} | {'-'.join(map(str, tiles))} | {v} | {slack} | {met:,} | {within} |")
    return 0


if __name__ == "__main__":
    sys.exit(run_keeping_tables(main))
